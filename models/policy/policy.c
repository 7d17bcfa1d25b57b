/*
 * policy.c: the table of policies by name and their composition.
 * Each policy lives in its own file in models/policy/ and is listed here.
 * A spec "NAME[=ARG][:KEY=VALUE,...]" becomes the policy's validated
 * strata_params here, so a policy's apply() only reads typed values.
 */
#include <string.h>
#include "core/error.h"
#include "policy/policy.h"

/* The policies (one file each in models/policy/). */
extern const strata_policy_type strata_policy_prefetch;
extern const strata_policy_type strata_policy_nbuffer;
extern const strata_policy_type strata_policy_pad;
extern const strata_policy_type strata_policy_offload;
extern const strata_policy_type strata_policy_donate;
extern const strata_policy_type strata_policy_batch_copies;
extern const strata_policy_type strata_policy_transfer_guard;

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

static const strata_policy_type *find_or_fail(const char *name, GError **err)
{
    const strata_policy_type *type = strata_policy_type_find(name);
    if (!type) {
        char *known = strata_policy_type_names();
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "unknown policy '%s'; known policies: %s", name,
                    known);
        g_free(known);
    }
    return type;
}

/* Sets the parameter that ARG names; false with err when ARG is not taken or
 * the same parameter was also given as KEY=VALUE. */
static bool set_arg(const strata_policy_type *type, strata_params *p, const char *arg, GError **err)
{
    if (!type->arg) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "policy %s takes no argument, got '%s=%s'",
                    type->name, type->name, arg);
        return false;
    }
    if (strata_params_is_set(p, type->arg)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "policy %s: parameter '%s' given twice (as %s=%s and as %s=...)", type->name, type->arg,
                    type->name, arg, type->arg);
        return false;
    }
    return strata_params_set(p, type->arg, arg, err);
}

strata_params *strata_policy_params(const char *spec, const strata_policy_type **type, GError **err)
{
    char *head = NULL, *kv = NULL;
    strata_split_spec(spec, &head, &kv);
    char *eq = head ? strchr(head, '=') : NULL;
    if (eq)
        *eq = '\0';
    const char *arg = eq ? eq + 1 : NULL;
    const strata_policy_type *t = find_or_fail(head ? g_strstrip(head) : "", err);
    strata_params *p = NULL;
    if (t && !strata_split_spec_check(spec, "policy", err))
        t = NULL;
    if (t) {
        char *owner = g_strdup_printf("policy %s", t->name);
        p = strata_params_new(owner, t->params, kv, err);
        g_free(owner);
    }
    if (p && arg && !set_arg(t, p, arg, err))
        g_clear_pointer(&p, strata_params_free);
    if (p && t->arg_required && !strata_params_is_set(p, t->arg)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "policy '%s' needs an argument: %s", t->name,
                    t->summary);
        g_clear_pointer(&p, strata_params_free);
    }
    g_free(head);
    g_free(kv);
    *type = t;
    return p;
}

static strata_source *apply_one(strata_source *src, const char *spec, const strata_hw *hw, GError **err)
{
    const strata_policy_type *type = NULL;
    strata_params *p = strata_policy_params(spec, &type, err);
    if (!p) {
        strata_source_free(src);
        return NULL;
    }
    strata_source *next = type->apply(src, p, hw, err);
    strata_params_free(p);
    return next; /* apply freed src on error */
}

/* Whether spec b repeats spec a: the same policy, and the same value of
 * its repeat_by parameter where it has one. Specs that do not parse repeat
 * nothing (their own error comes when they are applied). */
static bool repeats(const char *a, const char *b, const strata_policy_type **type, char **value)
{
    const strata_policy_type *ta = NULL, *tb = NULL;
    strata_params *pa = strata_policy_params(a, &ta, NULL);
    strata_params *pb = pa ? strata_policy_params(b, &tb, NULL) : NULL;
    bool same = pb && ta == tb;
    if (same && ta->repeat_by) {
        const char *va = strata_params_string(pa, ta->repeat_by), *vb = strata_params_string(pb, ta->repeat_by);
        same = g_strcmp0(va, vb) == 0;
        *value = same ? g_strdup(va) : NULL;
    }
    *type = ta;
    if (pa)
        strata_params_free(pa);
    if (pb)
        strata_params_free(pb);
    return same;
}

bool strata_policies_once(const char *const *specs, GError **err)
{
    for (const char *const *b = specs; b && *b; b++)
        for (const char *const *a = specs; a < b; a++) {
            const strata_policy_type *t = NULL;
            char *value = NULL;
            if (!repeats(*a, *b, &t, &value))
                continue;
            if (t->repeat_by)
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "policy %s of %s %s given twice ('%s', then "
                            "'%s'): expected each %s once (the second would rewrite the first's output again)",
                            t->name, t->repeat_by, value ? value : "(unset)", *a, *b, t->repeat_by);
            else
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "policy %s given twice ('%s', then '%s'): "
                            "expected each policy once (the second would rewrite the first's output again)",
                            t->name, *a, *b);
            g_free(value);
            return false;
        }
    return true;
}

char *strata_policy_repeat_key(const char *spec)
{
    const strata_policy_type *t = NULL;
    strata_params *p = strata_policy_params(spec, &t, NULL);
    if (!p)
        return NULL;
    const char *v = t->repeat_by ? strata_params_string(p, t->repeat_by) : NULL;
    char *key = !t->repeat_by ? g_strdup(t->name)
                : v           ? g_strdup_printf("%s %s=%s", t->name, t->repeat_by, v)
                              : g_strdup_printf("%s %s", t->name, t->repeat_by); /* unset: repeats unset only */
    strata_params_free(p);
    return key;
}

strata_source *strata_policies_apply(strata_source *src, const char *const *specs,
                                     const strata_hw *hw, GError **err)
{
    for (const char *const *spec = specs; src && spec && *spec; spec++)
        src = apply_one(src, *spec, hw, err);
    return src;
}

bool strata_policy_check(const char *spec, GError **err)
{
    strata_source *src = apply_one(strata_source_from_array(NULL, 0, "check"), spec, NULL, err);
    strata_source_free(src);
    return src != NULL;
}

char *strata_policy_describe(const char *indent)
{
    GString *s = g_string_new(NULL);
    char *deeper = g_strconcat(indent ? indent : "", "    ", NULL);
    for (const strata_policy_type *const *t = policy_types; *t; t++) {
        g_string_append_printf(s, "%s%s\n", indent ? indent : "", (*t)->summary);
        char *params = strata_params_describe((*t)->params, deeper);
        g_string_append(s, params);
        g_free(params);
    }
    g_free(deeper);
    return g_string_free(s, FALSE);
}

const char *const strata_policy_sched_choices[] = {"auto", "xla", "cuda", NULL};

void strata_policy_note_sched(const strata_op *op, char **trace_option)
{
    if (op->kind == STRATA_OP_OPTION && strcmp(op->name, "sched") == 0) {
        g_free(*trace_option);
        *trace_option = g_strdup(op->value);
    }
}

bool strata_policy_sched_xla(const char *param, const char *trace_option, const strata_hw *hw, bool *xla,
                             GError **err)
{
    if (param && strcmp(param, "auto") != 0) {
        *xla = strcmp(param, "xla") == 0;
        return true;
    }
    if (trace_option) {
        if (strcmp(trace_option, "xla") != 0 && strcmp(trace_option, "cuda") != 0) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "trace option sched: expected xla or cuda, got '%s'", trace_option);
            return false;
        }
        *xla = strcmp(trace_option, "xla") == 0;
        return true;
    }
    *xla = hw && strata_hw_sched_xla(hw);
    return true;
}
