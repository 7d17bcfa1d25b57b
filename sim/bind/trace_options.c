/*
 * trace_options.c: the table of a trace's option keys (contract in
 * trace_options.h). One row per key or prefix (with the name of the
 * parameter after it) and a check that parses the value with its reader's
 * own parser; strata_trace_option_check() finds the row (an exact key
 * first, then the longest prefix) and turns a refusal into
 * "ORIGIN:LINE: option KEY: expected ..., got '...'".
 */
#include "bind/trace_options.h"
#include <string.h>
#include "alloc/alloc.h"
#include "core/error.h"
#include "core/mesh.h"
#include "core/params.h"
#include "core/units.h"
#include "trace/check.h"
#include "policy/policy.h"

/* One row: a key, or a prefix and the parameter after it. */
typedef struct option_def {
    const char *key;   /* the key, or with `param` what precedes the parameter ("allocator.") */
    const char *param; /* NULL: key is exact; else how messages name the parameter ("KEY", "MEM") */
    /* NULL when the value is good; else "expected ..., got '...'", newly
     * allocated. param: the part after a prefix (NULL for an exact key); hw
     * may be NULL. */
    char *(*check)(const char *param, const char *value, const strata_hw *hw);
} option_def;

/* Memory names listed in a message before "..." (a pod has thousands). */
#define NAMES_LISTED 8

/* "expected WHAT, got 'VALUE'", newly allocated. */
static char *expected(const char *what, const char *value)
{
    char *q = strata_quote(value);
    char *m = g_strdup_printf("expected %s, got '%s'", what, q);
    g_free(q);
    return m;
}

/* A parser's refusal as the message (its own "expected ..., got ..."). */
static char *refusal(GError *err)
{
    char *m = g_strdup(err ? err->message : "expected a valid value");
    g_clear_error(&err);
    return m;
}

static char *check_mesh(const char *param, const char *value, const strata_hw *hw)
{
    (void)param;
    (void)hw; /* the mesh's device count against the hardware's: the checker's, on this line */
    GError *err = NULL;
    strata_mesh *m = strata_mesh_parse(value, &err);
    if (m) {
        strata_mesh_free(m);
        return NULL;
    }
    return refusal(err);
}

static char *check_sched(const char *param, const char *value, const strata_hw *hw)
{
    (void)param;
    (void)hw;
    GError *err = NULL;
    bool xla = false;
    /* the copy policies' own reading of the option (no sched= parameter) */
    if (strata_policy_sched_xla(NULL, value, NULL, &xla, &err))
        return NULL;
    g_clear_error(&err);
    return expected("xla or cuda", value);
}

static char *check_size(const char *param, const char *value, const strata_hw *hw)
{
    (void)param;
    (void)hw;
    uint64_t v = 0;
    return strata_parse_size(value, &v, NULL) ? NULL : expected("a size (bytes, e.g. 4096 or 2MiB)", value);
}

/* "a, b, c" or "a, b, ... (N in all)". */
static char *memory_names(const strata_hw *hw)
{
    GString *s = g_string_new(NULL);
    uint32_t n = strata_hw_memory_count(hw);
    for (uint32_t i = 0; i < n && i < NAMES_LISTED; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", strata_hw_memory(hw, i)->name);
    if (n > NAMES_LISTED)
        g_string_append_printf(s, ", ... (%u in all)", n);
    return g_string_free(s, FALSE);
}

static char *check_memory_padding(const char *param, const char *value, const strata_hw *hw)
{
    if (!*param)
        return g_strdup("expected a memory after '" STRATA_OPTION_PADDING_BYTES ".', got none");
    if (hw && strata_hw_memory_index(hw, param) < 0) {
        char *known = memory_names(hw);
        char *q = strata_quote(param);
        char *m = g_strdup_printf("expected a memory of %s after '" STRATA_OPTION_PADDING_BYTES ".' (one of %s%s), "
                                  "got '%s'",
                                  strata_hw_origin(hw), known,
                                  strata_hw_devices(hw) > 1 ? "; with several devices, an instance NAME@D" : "", q);
        g_free(q);
        g_free(known);
        return m;
    }
    return check_size(param, value, hw);
}

/* The parameters every allocator declares, each once, in registry order. */
static char *allocator_parameters(void)
{
    GPtrArray *names = g_ptr_array_new();
    GString *s = g_string_new(NULL);
    for (const strata_alloc_type *const *t = strata_alloc_types(); *t; t++)
        for (const strata_param_def *d = (*t)->params; d && d->name; d++) {
            guint i = 0;
            while (i < names->len && strcmp(g_ptr_array_index(names, i), d->name) != 0)
                i++;
            if (i < names->len)
                continue;
            g_ptr_array_add(names, (gpointer)d->name);
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", d->name);
        }
    g_ptr_array_free(names, TRUE);
    return g_string_free(s, FALSE);
}

/* allocator.KEY: KEY declared by at least one allocator, the value good for
 * every allocator that declares it (invariant 3). */
static char *check_allocator(const char *param, const char *value, const strata_hw *hw)
{
    (void)hw;
    if (strchr(value, ','))
        return expected("one value, without ',' (the allocator's options join as KEY=VALUE,...)", value);
    bool declared = false;
    for (const strata_alloc_type *const *t = strata_alloc_types(); *t; t++)
        for (const strata_param_def *d = (*t)->params; d && d->name; d++) {
            if (strcmp(d->name, param) != 0)
                continue;
            declared = true;
            GError *err = NULL;
            strata_params *p = strata_params_new((*t)->name, (*t)->params, NULL, &err);
            bool ok = p && strata_params_set(p, param, value, &err);
            strata_params_free(p);
            if (!ok)
                return refusal(err);
        }
    if (declared)
        return NULL;
    char *known = allocator_parameters();
    char *q = strata_quote(param);
    char *m = g_strdup_printf("expected a parameter some allocator declares after '" STRATA_TRACE_OPTION_ALLOCATOR_PREFIX
                              "' (one of %s), got '%s'", known, q);
    g_free(q);
    g_free(known);
    return m;
}

static const option_def DEFS[] = {
    {"mesh", NULL, check_mesh},                                          /* the mesh the program runs on */
    {"sched", NULL, check_sched},                                        /* how copy policies schedule */
    {STRATA_OPTION_PADDING_BYTES, NULL, check_size},                     /* padding in the default memory */
    {STRATA_OPTION_PADDING_BYTES ".", "MEM", check_memory_padding},      /* padding in memory MEM */
    {STRATA_TRACE_OPTION_ALLOCATOR_PREFIX, "KEY", check_allocator},      /* an allocator's parameter */
    {NULL, NULL, NULL},
};

/* The row of `key`: an exact key first, then the longest prefix; NULL when none. */
static const option_def *find_def(const char *key)
{
    const option_def *best = NULL;
    for (const option_def *d = DEFS; d->key; d++) {
        if (!d->param && strcmp(d->key, key) == 0)
            return d;
        if (d->param && g_str_has_prefix(key, d->key) && (!best || strlen(d->key) > strlen(best->key)))
            best = d;
    }
    return best;
}

/* "mesh, sched, padding_bytes, padding_bytes.MEM, allocator.KEY" */
static char *known_keys(void)
{
    GString *s = g_string_new(NULL);
    for (const option_def *d = DEFS; d->key; d++)
        g_string_append_printf(s, "%s%s%s", s->len ? ", " : "", d->key, d->param ? d->param : "");
    return g_string_free(s, FALSE);
}

bool strata_trace_option_check(const strata_op *op, const char *origin, const strata_hw *hw, GError **err)
{
    const char *key = op->name ? op->name : "";
    const char *value = op->value ? op->value : "";
    const option_def *d = find_def(key);
    char *why = NULL;
    if (!d) {
        char *known = known_keys();
        char *q = strata_quote(key);
        why = g_strdup_printf("expected a known option key (%s), got '%s'", known, q);
        g_free(q);
        g_free(known);
    } else {
        why = d->check(d->param ? key + strlen(d->key) : NULL, value, hw);
    }
    if (!why)
        return true;
    char *where = op->line > 0 ? g_strdup_printf("%s:%" G_GUINT64_FORMAT, origin, op->line) : g_strdup(origin);
    char *q = strata_quote(key);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: option %s: %s", where, q, why);
    g_free(q);
    g_free(where);
    g_free(why);
    return false;
}
