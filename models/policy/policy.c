/*
 * policy.c: the table of policies by name and their composition.
 * Each policy lives in its own file in models/policy/ and is listed here.
 */
#include <string.h>
#include "core/error.h"
#include "policy/policy.h"

static const strata_policy_type *const policy_types[] = {
    &strata_policy_prefetch,
    &strata_policy_nbuffer,
    &strata_policy_pad,
    &strata_policy_offload,
    &strata_policy_donate,
    &strata_policy_batch_copies,
    &strata_policy_transfer_guard,
    NULL,
};

const strata_policy_type *const *strata_policy_types(void) { return policy_types; }

const strata_policy_type *strata_policy_type_find(const char *name)
{
    for (const strata_policy_type *const *t = policy_types; *t; t++)
        if (strcmp((*t)->name, name) == 0)
            return *t;
    return NULL;
}

char *strata_policy_type_names(void)
{
    GString *s = g_string_new(NULL);
    for (const strata_policy_type *const *t = policy_types; *t; t++)
        g_string_append_printf(s, "%s%s", s->len ? ", " : "", (*t)->name);
    if (s->len == 0)
        g_string_append(s, "(none)");
    return g_string_free(s, FALSE);
}

strata_source *strata_policies_apply(strata_source *src, const char *const *specs,
                                     const strata_hw *hw, GError **err)
{
    for (const char *const *spec = specs; spec && *spec; spec++) {
        char **parts = g_strsplit(*spec, "=", 2);
        const strata_policy_type *type = strata_policy_type_find(parts[0]);
        if (!type) {
            char *known = strata_policy_type_names();
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "unknown policy '%s'; known policies: %s", parts[0], known);
            g_free(known);
            g_strfreev(parts);
            strata_source_free(src);
            return NULL;
        }
        if (type->arg_required && !parts[1]) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "policy '%s' needs an argument: %s", type->name, type->summary);
            g_strfreev(parts);
            strata_source_free(src);
            return NULL;
        }
        strata_source *next = type->apply(src, parts[1], hw, err);
        g_strfreev(parts);
        if (!next)
            return NULL; /* apply freed src */
        src = next;
    }
    return src;
}
