/*
 * experiment_axes.c: the [sweep] axes of an experiment and the checks of
 * the models they name (see experiment.h and experiment_internal.h).
 *
 * Axes are classified once (axis_kind) and validated value by value against
 * the real models: the hardware loader with the override, the workload's
 * parameter table and its own checks, the policy's table and range checks,
 * the allocator's table. So a typo or an out-of-range value fails before
 * the first point runs, naming its line.
 */
#include <string.h>
#include "alloc/alloc.h"
#include "core/error.h"
#include "core/params.h"
#include "core/units.h"
#include "hw/hw.h"
#include "policy/policy.h"
#include "sweep/experiment_internal.h"
#include "workload/workload.h"
#include "runspec/runspec.h"

/* ---- lists and model references --------------------------------------- */

/* Splits a list "a, b, \"c,d\"" on commas outside double quotes. Empty
 * items are errors (a stray comma is almost always a typo). */
GPtrArray *exp_split_list(const char *text, const load_ctx *ctx, guint line, GError **err)
{
    GPtrArray *items = g_ptr_array_new_with_free_func(g_free);
    GString *cur = g_string_new(NULL);
    bool quoted = false, was_quoted = false;
    for (const char *p = text;; p++) {
        if (*p == '"') {
            quoted = !quoted;
            was_quoted = true;
            continue;
        }
        if (*p == '\0' || (*p == ',' && !quoted)) {
            char *item = g_strstrip(g_strdup(cur->str));
            if (*item == '\0' && !was_quoted) {
                g_free(item);
                exp_fail(err, ctx, line, "expected a comma-separated list of values, got an empty item in '%s'",
                     text);
                g_ptr_array_unref(items);
                g_string_free(cur, TRUE);
                return NULL;
            }
            g_ptr_array_add(items, item);
            g_string_truncate(cur, 0);
            was_quoted = false;
            if (*p == '\0')
                break;
            continue;
        }
        g_string_append_c(cur, *p);
    }
    g_string_free(cur, TRUE);
    if (quoted) {
        exp_fail(err, ctx, line, "unterminated '\"' in '%s'", text);
        g_ptr_array_unref(items);
        return NULL;
    }
    return items;
}

bool exp_check_policy(const char *spec, const load_ctx *ctx, guint line, GError **err)
{
    GError *inner = NULL;
    if (!strata_policy_check(spec, &inner))
        return exp_fail_from(err, ctx, line, "bad policy", inner);
    return true;
}

/* "offload=param+prefetch=2" or "none": appends the specs to out. */
bool exp_parse_policy_set(const char *text, GPtrArray *out, const load_ctx *ctx, guint line,
                             GError **err)
{
    if (strcmp(text, "none") == 0)
        return true;
    char **parts = g_strsplit(text, "+", -1);
    bool ok = true;
    for (guint i = 0; parts[i] && ok; i++) {
        char *p = g_strstrip(parts[i]);
        if (*p == '\0') {
            ok = exp_fail(err, ctx, line, "expected policies joined by '+' (or none), got '%s'", text);
            break;
        }
        ok = exp_check_policy(p, ctx, line, err);
        if (ok && out)
            g_ptr_array_add(out, g_strdup(p));
    }
    GError *inner = NULL; /* "prefetch=2+prefetch=3" ran both at every point (parts stripped above) */
    if (ok && !strata_policies_once((const char *const *)parts, &inner))
        ok = exp_fail_from(err, ctx, line, "bad policy", inner);
    g_strfreev(parts);
    return ok;
}

bool exp_check_allocator(const char *spec, const load_ctx *ctx, guint line, GError **err)
{
    GError *inner = NULL;
    strata_allocator *a = strata_allocator_new(spec, (uint64_t)1 << 30, 0, &inner);
    if (!a)
        return exp_fail_from(err, ctx, line, "bad allocator", inner);
    strata_allocator_free(a);
    return true;
}

/* The --set overrides for hardware axis `name` = `value`. An allocator
 * spec "NAME:k=v,k=v" on memory.M.allocator becomes the hardware file's
 * form: memory.M.allocator=NAME plus memory.M.allocator.k=v each. */
char **exp_hw_overrides(const char *name, const char *value)
{
    GPtrArray *out = g_ptr_array_new();
    const char *colon = strchr(value, ':');
    if (g_str_has_prefix(name, "memory.") && g_str_has_suffix(name, ".allocator") && colon) {
        char *alloc_name = NULL, *kv = NULL;
        strata_split_spec(value, &alloc_name, &kv);
        g_ptr_array_add(out, g_strdup_printf("%s=%s", name, alloc_name));
        char **pairs = g_strsplit(kv ? kv : "", ",", -1);
        for (guint i = 0; pairs[i]; i++)
            if (*pairs[i])
                g_ptr_array_add(out, g_strdup_printf("%s.%s", name, pairs[i]));
        g_strfreev(pairs);
        g_free(alloc_name);
        g_free(kv);
    } else {
        g_ptr_array_add(out, g_strdup_printf("%s=%s", name, value));
    }
    g_ptr_array_add(out, NULL);
    return (char **)g_ptr_array_free(out, FALSE);
}

bool exp_check_hw(const char *path, char *const *overrides, const load_ctx *ctx, guint line,
                     GError **err)
{
    GError *inner = NULL;
    strata_run_spec_options spec_opt = {.hw_path = path, .hw_overrides = (const char *const *)overrides};
    strata_run_spec *spec = strata_run_spec_new(&spec_opt, &inner);
    if (!spec)
        return exp_fail_from(err, ctx, line, overrides ? "bad hardware override" : "bad hardware", inner);
    strata_run_spec_free(spec);
    return true;
}

char **exp_args_with(char *const *args, const char *key, const char *value)
{
    GPtrArray *out = g_ptr_array_new();
    size_t klen = key ? strlen(key) : 0;
    for (guint i = 0; args && args[i]; i++) {
        if (key && strncmp(args[i], key, klen) == 0 && args[i][klen] == '=')
            continue;
        g_ptr_array_add(out, g_strdup(args[i]));
    }
    if (key)
        g_ptr_array_add(out, g_strdup_printf("%s=%s", key, value));
    g_ptr_array_add(out, NULL);
    return (char **)g_ptr_array_free(out, FALSE);
}

char **exp_workload_args_with(const strata_experiment *e, const char *key, const char *value)
{
    char **args = g_new0(char *, e->workload_args->len + 1);
    for (guint i = 0; i < e->workload_args->len; i++)
        args[i] = g_ptr_array_index(e->workload_args, i);
    char **out = exp_args_with(args, key, value);
    g_free(args);
    return out;
}

/* Everything the generator checks (its table, then its own ranges),
 * without generating (strata_workload_check). */
bool exp_check_workload(const strata_experiment *e, char **args, const load_ctx *ctx, guint line,
                        GError **err)
{
    GError *inner = NULL;
    if (!strata_workload_check(e->workload, (const char *const *)args, &inner))
        return exp_fail_from(err, ctx, line, "bad workload parameter", inner);
    return true;
}

/* ---- axes -------------------------------------------------------------- */

void exp_axis_free(gpointer data)
{
    axis *a = data;
    g_free(a->name);
    g_free(a->param);
    g_ptr_array_unref(a->values);
    if (a->numbers)
        g_array_unref(a->numbers);
    if (a->members)
        g_ptr_array_unref(a->members);
    g_free(a);
}

static bool parse_plain_number(const char *text, double *out)
{
    char *end = NULL;
    double v = g_ascii_strtod(text, &end);
    if (end == text || *end != '\0')
        return false;
    *out = v;
    return true;
}

/* Picks the unit under which every value reads as a number. */
static void axis_infer_unit(axis *a)
{
    static const strata_axis_unit order[] = {STRATA_AXIS_NUMBER, STRATA_AXIS_SIZE, STRATA_AXIS_BANDWIDTH,
                                             STRATA_AXIS_TIME};
    for (guint u = 0; u < G_N_ELEMENTS(order); u++) {
        GArray *nums = g_array_new(FALSE, FALSE, sizeof(double));
        bool all = true;
        for (guint i = 0; i < a->values->len && all; i++) {
            const char *v = g_ptr_array_index(a->values, i);
            double d = 0;
            uint64_t bytes = 0;
            switch (order[u]) {
            case STRATA_AXIS_NUMBER: all = parse_plain_number(v, &d); break;
            case STRATA_AXIS_SIZE:
                all = strata_parse_size(v, &bytes, NULL);
                d = (double)bytes;
                break;
            case STRATA_AXIS_BANDWIDTH: all = strata_parse_bandwidth(v, &d, NULL); break;
            case STRATA_AXIS_TIME: all = strata_parse_time(v, &d, NULL); break;
            default: all = false; break;
            }
            if (all)
                g_array_append_val(nums, d);
        }
        if (all) {
            a->unit = order[u];
            a->numbers = nums;
            return;
        }
        g_array_unref(nums);
    }
    a->unit = STRATA_AXIS_TEXT;
}

/* Whether values i and j of an axis with a unit are the same figure: sizes
 * as exact bytes, plain numbers as doubles (and as 64-bit integers when both
 * are, so 2^53 + 1 and 2^53 differ), bandwidths and times as doubles. */
static bool axis_values_equal(const axis *a, guint i, guint j)
{
    const char *x = g_ptr_array_index(a->values, i), *y = g_ptr_array_index(a->values, j);
    if (a->unit == STRATA_AXIS_SIZE) {
        uint64_t bx = 0, by = 0;
        return strata_parse_size(x, &bx, NULL) && strata_parse_size(y, &by, NULL) && bx == by;
    }
    if (g_array_index(a->numbers, double, i) != g_array_index(a->numbers, double, j))
        return false;
    gint64 ix = 0, iy = 0;
    if (a->unit == STRATA_AXIS_NUMBER && g_ascii_string_to_signed(x, 10, G_MININT64, G_MAXINT64, &ix, NULL) &&
        g_ascii_string_to_signed(y, 10, G_MININT64, G_MAXINT64, &iy, NULL))
        return ix == iy;
    return true;
}

/* Two values of one axis that read as the same figure ("1, 01", "1GiB,
 * 1024MiB", "1us, 1000ns") would run one configuration as two points:
 * refused, naming both (values the same as text are refused before). */
static bool axis_values_distinct(const axis *a, const load_ctx *ctx, GError **err)
{
    for (guint i = 0; a->unit != STRATA_AXIS_TEXT && i < a->values->len; i++)
        for (guint j = i + 1; j < a->values->len; j++)
            if (axis_values_equal(a, i, j))
                return exp_fail(err, ctx, a->line, "values '%s' and '%s' of axis '%s' are the same %s: two points "
                                "would run one configuration; give each value once",
                                (const char *)g_ptr_array_index(a->values, i),
                                (const char *)g_ptr_array_index(a->values, j), a->name,
                                a->unit == STRATA_AXIS_SIZE ? "size" : a->unit == STRATA_AXIS_BANDWIDTH ? "bandwidth"
                                : a->unit == STRATA_AXIS_TIME ? "time" : "number");
    return true;
}

static bool is_hw_key(const char *name, char **group_kind, char **group_name, char **key)
{
    char **parts = g_strsplit(name, ".", 3);
    bool ok = false;
    guint n = g_strv_length(parts);
    if (n == 3 && (strcmp(parts[0], "memory") == 0 || strcmp(parts[0], "link") == 0 ||
                   strcmp(parts[0], "compute") == 0 || strcmp(parts[0], "interconnect") == 0)) {
        *group_kind = g_strdup(parts[0]);
        *group_name = g_strdup(parts[1]);
        *key = g_strdup(parts[2]);
        ok = *parts[1] && *parts[2];
    } else if (n == 2 && strcmp(parts[0], "hardware") == 0) {
        *group_kind = g_strdup(parts[0]);
        *group_name = NULL;
        *key = g_strdup(parts[1]);
        ok = *parts[1];
    }
    if (!ok) {
        g_free(*group_kind);
        g_free(*group_name);
        g_free(*key);
        *group_kind = *group_name = *key = NULL;
    }
    g_strfreev(parts);
    return ok;
}

static bool axis_classify(strata_experiment *e, axis *a, const load_ctx *ctx, GError **err)
{
    const char *n = a->name;
    char *gkind = NULL, *gname = NULL, *key = NULL;
    bool ok = true;
    if (strcmp(n, "policy") == 0) {
        a->kind = AXIS_POLICY_SET;
    } else if (g_str_has_prefix(n, "policy.")) {
        a->kind = AXIS_POLICY_NAMED;
        a->param = g_strdup(n + 7);
        const strata_policy_type *t = strata_policy_type_find(a->param);
        if (!t) {
            char *known = strata_policy_type_names();
            ok = exp_fail(err, ctx, a->line, "unknown policy '%s' in axis '%s'; known policies: %s", a->param, n,
                      known);
            g_free(known);
        }
    } else if (strcmp(n, "allocator") == 0) {
        a->kind = AXIS_ALLOCATOR;
    } else if (strcmp(n, "capacity") == 0) {
        a->kind = AXIS_CAPACITY;
        if (e->runner != STRATA_RUNNER_ALLOC)
            ok = exp_fail(err, ctx, a->line,
                      "axis 'capacity' needs runner = alloc; with runner = run sweep memory.NAME.capacity");
    } else if (strcmp(n, "hardware") == 0) {
        a->kind = AXIS_HARDWARE;
        if (e->runner != STRATA_RUNNER_RUN)
            ok = exp_fail(err, ctx, a->line, "axis 'hardware' needs runner = run");
    } else if (g_str_has_prefix(n, "workload.")) {
        a->kind = AXIS_WORKLOAD;
        a->param = g_strdup(n + 9);
        if (!e->workload)
            ok = exp_fail(err, ctx, a->line, "axis '%s' needs a workload in [experiment]", n);
        for (guint i = 0; ok && i < e->workload_args->len; i++) { /* the axis replaced it at every point */
            const char *arg = g_ptr_array_index(e->workload_args, i);
            size_t k = strlen(a->param);
            if (strncmp(arg, a->param, k) == 0 && arg[k] == '=')
                ok = exp_fail(err, ctx, a->line, "axis '%s': the [experiment] workload gives %s, which the axis "
                              "replaces at every point; give %s in one place", n, arg, a->param);
        }
    } else if (is_hw_key(n, &gkind, &gname, &key)) {
        a->kind = AXIS_HW_KEY;
        if (e->runner == STRATA_RUNNER_ALLOC) {
            if (strcmp(gkind, "memory") == 0 && strcmp(key, "capacity") == 0)
                a->kind = AXIS_CAPACITY;
            else if (strcmp(gkind, "memory") == 0 && strcmp(key, "allocator") == 0)
                a->kind = AXIS_ALLOCATOR;
            else if (strcmp(gkind, "memory") == 0 && strcmp(key, "alignment") == 0)
                a->kind = AXIS_ALIGNMENT;
            else
                ok = exp_fail(err, ctx, a->line,
                          "axis '%s' needs runner = run; runner = alloc takes memory.NAME.capacity, "
                          "memory.NAME.allocator and memory.NAME.alignment",
                          n);
            if (ok) {
                a->param = g_strdup(gname);
                if (e->memory && strcmp(e->memory, gname) != 0)
                    ok = exp_fail(err, ctx, a->line, "axis '%s' names memory '%s' but [experiment] memory is '%s'",
                              n, gname, e->memory);
            }
        }
    } else {
        ok = exp_fail(err, ctx, a->line,
                  "unknown axis '%s'; expected a hardware key (memory.NAME.KEY, link.NAME.KEY, "
                  "compute.NAME.KEY, interconnect.NAME.KEY, hardware.KEY), workload.PARAM, policy, policy.NAME, allocator, "
                  "capacity or hardware",
                  n);
    }
    g_free(gkind);
    g_free(gname);
    g_free(key);
    return ok;
}

void exp_axis_policies(const axis *a, const char *v, GPtrArray *out)
{
    if (a->kind == AXIS_POLICY_SET)
        exp_parse_policy_set(v, out, NULL, 0, NULL);
    else if (a->kind == AXIS_POLICY_NAMED && strcmp(v, "off") != 0)
        g_ptr_array_add(out, g_strdup_printf("%s=%s", a->param, v));
}

/* A policy axis's value after [experiment] policies, as a point runs them
 * (experiment_plan.c): each policy once. "policies = prefetch=2" with
 * "policy.prefetch = 1, 3" loaded and listed its points, then every point's
 * run refused "policy prefetch given twice", naming no line of the file. */
static bool policies_once_with_fixed(const strata_experiment *e, const axis *a, const char *v, const load_ctx *ctx,
                                     GError **err)
{
    GPtrArray *all = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < e->policies->len; i++)
        g_ptr_array_add(all, g_strdup(g_ptr_array_index(e->policies, i)));
    exp_axis_policies(a, v, all); /* checked by the caller */
    g_ptr_array_add(all, NULL);
    GError *inner = NULL;
    bool ok = strata_policies_once((const char *const *)all->pdata, &inner);
    g_ptr_array_free(all, TRUE);
    if (!ok)
        g_prefix_error(&inner, "with [experiment] policies: ");
    return ok || exp_fail_from(err, ctx, a->line, "bad policy", inner);
}

static bool axis_check_value(strata_experiment *e, axis *a, const char *v, const load_ctx *ctx,
                             GError **err)
{
    switch (a->kind) {
    case AXIS_POLICY_SET:
        return exp_parse_policy_set(v, NULL, ctx, a->line, err) && policies_once_with_fixed(e, a, v, ctx, err);
    case AXIS_POLICY_NAMED: {
        if (strcmp(v, "off") == 0)
            return true;
        char *spec = g_strdup_printf("%s=%s", a->param, v);
        bool ok = exp_check_policy(spec, ctx, a->line, err) && policies_once_with_fixed(e, a, v, ctx, err);
        g_free(spec);
        return ok;
    }
    case AXIS_ALLOCATOR: return exp_check_allocator(v, ctx, a->line, err);
    case AXIS_CAPACITY:
    case AXIS_ALIGNMENT: {
        uint64_t bytes;
        GError *inner = NULL;
        if (!strata_parse_size(v, &bytes, &inner))
            return exp_fail_from(err, ctx, a->line, "expected a size", inner);
        if (a->kind == AXIS_ALIGNMENT && (bytes & (bytes - 1)) != 0) {
            char *q = strata_quote(v);
            exp_fail(err, ctx, a->line, "expected an alignment that is a power of two such as 256, got '%s'", q);
            g_free(q);
            return false;
        }
        return true;
    }
    case AXIS_HARDWARE: {
        char *path = exp_resolve_path(e, v);
        bool ok = exp_check_hw(path, NULL, ctx, a->line, err);
        g_free(path);
        return ok;
    }
    case AXIS_WORKLOAD: {
        char **args = exp_workload_args_with(e, a->param, v);
        bool ok = exp_check_workload(e, args, ctx, a->line, err);
        g_strfreev(args);
        return ok;
    }
    case AXIS_JOINT: return true; /* joint_check_value */
    case AXIS_HW_KEY: {
        if (!e->hardware)
            return true; /* checked per hardware file by the run itself */
        char **ov = exp_hw_overrides(a->name, v);
        bool ok = exp_check_hw(e->hardware, ov, ctx, a->line, err);
        g_strfreev(ov);
        return ok;
    }
    }
    return true;
}


/* ---- joint axes -------------------------------------------------------- */

static axis *axis_new(const char *name, guint line)
{
    axis *a = g_new0(axis, 1);
    a->name = g_strdup(name);
    a->line = line;
    a->values = g_ptr_array_new_with_free_func(g_free);
    return a;
}

/* "A + B + C": one member axis per name, each classified alone. */
static bool joint_classify(strata_experiment *e, axis *a, const load_ctx *ctx, GError **err)
{
    a->kind = AXIS_JOINT;
    a->members = g_ptr_array_new_with_free_func(exp_axis_free);
    char **names = g_strsplit(a->name, "+", -1);
    bool ok = true;
    for (guint i = 0; names[i] && ok; i++) {
        const char *n = g_strstrip(names[i]);
        if (*n == '\0') {
            ok = exp_fail(err, ctx, a->line, "expected axis names joined by ' + ', got '%s'", a->name);
            break;
        }
        for (guint j = 0; j < a->members->len && ok; j++)
            if (strcmp(((axis *)g_ptr_array_index(a->members, j))->name, n) == 0)
                ok = exp_fail(err, ctx, a->line, "axis '%s' appears twice in joint axis '%s'", n, a->name);
        axis *m = axis_new(n, a->line);
        g_ptr_array_add(a->members, m);
        ok = ok && axis_classify(e, m, ctx, err);
    }
    g_strfreev(names);
    return ok;
}

/* Restates a failed check of a tuple's member as a failure of the tuple. */
static bool joint_fail(GError **err, const load_ctx *ctx, const axis *a, const char *tuple)
{
    char *prefix = g_strdup_printf("%s:%u: ", ctx->origin, a->line);
    GError *inner = *err;
    *err = NULL;
    const char *msg = inner->message;
    if (g_str_has_prefix(msg, prefix))
        msg += strlen(prefix);
    exp_fail(err, ctx, a->line, "in tuple '%s' of joint axis '%s': %s", tuple, a->name, msg);
    g_error_free(inner);
    g_free(prefix);
    return false;
}

/* A tuple "V1 V2 ...": one word per member, checked together: every
 * workload member set at once, every hardware key overriding at once (on
 * the tuple's hardware file when a member is 'hardware'); any other member
 * alone. The words are appended to the members' values. */
static bool joint_check_value(strata_experiment *e, axis *a, const char *tuple, const load_ctx *ctx,
                              GError **err)
{
    char **words = g_strsplit_set(tuple, " \t", -1);
    GPtrArray *w = g_ptr_array_new();
    for (guint i = 0; words[i]; i++)
        if (*words[i])
            g_ptr_array_add(w, words[i]);
    bool ok = true;
    if (w->len != a->members->len) {
        GString *names = g_string_new(NULL);
        for (guint j = 0; j < a->members->len; j++)
            g_string_append_printf(names, "%s%s", j ? ", " : "", ((axis *)g_ptr_array_index(a->members, j))->name);
        ok = exp_fail(err, ctx, a->line, "expected %u whitespace-separated values (%s) in tuple '%s', got %u",
                      a->members->len, names->str, tuple, w->len);
        g_string_free(names, TRUE);
    }
    char **wargs = exp_workload_args_with(e, NULL, NULL);
    GPtrArray *sets = g_ptr_array_new_with_free_func(g_free);
    char *hw_path = e->hardware ? g_strdup(e->hardware) : NULL;
    bool any_workload = false;
    GPtrArray *policies = g_ptr_array_new_with_free_func(g_free); /* [experiment] policies, then the members' */
    for (guint i = 0; i < e->policies->len; i++)
        g_ptr_array_add(policies, g_strdup(g_ptr_array_index(e->policies, i)));
    for (guint j = 0; ok && j < w->len; j++) {
        axis *m = g_ptr_array_index(a->members, j);
        const char *v = g_ptr_array_index(w, j);
        g_ptr_array_add(m->values, g_strdup(v));
        if (m->kind == AXIS_WORKLOAD) {
            char **n = exp_args_with(wargs, m->param, v);
            g_strfreev(wargs);
            wargs = n;
            any_workload = true;
        } else if (m->kind == AXIS_HW_KEY) {
            char **ov = exp_hw_overrides(m->name, v);
            for (guint k = 0; ov[k]; k++)
                g_ptr_array_add(sets, g_strdup(ov[k]));
            g_strfreev(ov);
        } else {
            ok = axis_check_value(e, m, v, ctx, err);
            if (ok) /* once checked (it parses with no file to name): nothing unless a policy member */
                exp_axis_policies(m, v, policies);
            if (ok && m->kind == AXIS_HARDWARE) {
                g_free(hw_path);
                hw_path = exp_resolve_path(e, v);
            }
        }
    }
    GError *inner = NULL; /* "policy + policy.prefetch = pad+prefetch=3 1": prefetch twice at the point */
    g_ptr_array_add(policies, NULL);
    if (ok && !strata_policies_once((const char *const *)policies->pdata, &inner))
        ok = exp_fail_from(err, ctx, a->line, "bad policy", inner);
    g_ptr_array_unref(policies);
    if (ok && any_workload)
        ok = exp_check_workload(e, wargs, ctx, a->line, err);
    if (ok && sets->len && hw_path) {
        g_ptr_array_add(sets, NULL);
        ok = exp_check_hw(hw_path, (char *const *)sets->pdata, ctx, a->line, err);
    }
    if (!ok && err && *err && w->len == a->members->len)
        joint_fail(err, ctx, a, tuple);
    g_free(hw_path);
    g_ptr_array_unref(sets);
    g_strfreev(wargs);
    g_ptr_array_unref(w);
    g_strfreev(words);
    return ok;
}

/* The single axes an axis stands for: its members, or itself. */
static const axis *axis_part(const axis *a, guint i)
{
    return a->members ? g_ptr_array_index(a->members, i) : a;
}

static guint axis_parts(const axis *a) { return a->members ? a->members->len : 1; }

/* The last axis names no single axis that an earlier one names (alone or
 * as a joint member): the later value would silently win. */
static bool axis_not_repeated(const strata_experiment *e, const load_ctx *ctx, GError **err)
{
    const axis *a = g_ptr_array_index(e->axes, e->axes->len - 1);
    for (guint i = 0; i + 1 < e->axes->len; i++) {
        const axis *b = g_ptr_array_index(e->axes, i);
        for (guint j = 0; j < axis_parts(a); j++)
            for (guint k = 0; k < axis_parts(b); k++)
                if (strcmp(axis_part(a, j)->name, axis_part(b, k)->name) == 0)
                    return exp_fail(err, ctx, a->line, "axis '%s' is already swept by '%s' at line %u",
                                    axis_part(a, j)->name, b->name, b->line);
    }
    return true;
}

/* Each policy spec an axis's values add (a joint axis's members' too),
 * appended to specs (owned), with the axis value each comes from appended
 * to values (borrowed). */
static void axis_policy_specs(const axis *a, GPtrArray *specs, GPtrArray *values)
{
    for (guint j = 0; j < axis_parts(a); j++) {
        const axis *m = axis_part(a, j);
        for (guint i = 0; i < m->values->len; i++) {
            guint before = specs->len;
            exp_axis_policies(m, g_ptr_array_index(m->values, i), specs);
            for (guint k = before; k < specs->len; k++)
                g_ptr_array_add(values, g_ptr_array_index(a->values, i));
        }
    }
}

/* Whether b's specs (keyed by strata_policy_repeat_key) and a's share a
 * key; false with err at a's line naming both values. */
static bool policies_apart(const axis *b, const axis *a, GPtrArray *sa, GPtrArray *va, const load_ctx *ctx,
                           GError **err)
{
    GPtrArray *sb = g_ptr_array_new_with_free_func(g_free), *vb = g_ptr_array_new();
    axis_policy_specs(b, sb, vb);
    GHashTable *keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL); /* key -> index in sb */
    for (guint k = 0; k < sb->len; k++) {
        char *key = strata_policy_repeat_key(g_ptr_array_index(sb, k));
        if (key && !g_hash_table_contains(keys, key))
            g_hash_table_insert(keys, key, GUINT_TO_POINTER(k));
        else
            g_free(key);
    }
    bool ok = true;
    for (guint k = 0; ok && k < sa->len; k++) {
        char *key = strata_policy_repeat_key(g_ptr_array_index(sa, k));
        gpointer at = NULL;
        if (key && g_hash_table_lookup_extended(keys, key, NULL, &at)) {
            guint i = GPOINTER_TO_UINT(at);
            const char *pair[] = {g_ptr_array_index(sb, i), g_ptr_array_index(sa, k), NULL};
            GError *inner = NULL;
            ok = strata_policies_once(pair, &inner);
            g_prefix_error(&inner, "value '%s' of axis '%s' meets value '%s' of axis '%s' (line %u) at a point: ",
                           (const char *)g_ptr_array_index(va, k), a->name, (const char *)g_ptr_array_index(vb, i),
                           b->name, b->line);
            ok = ok || exp_fail_from(err, ctx, a->line, "bad policy", inner);
        }
        g_free(key);
    }
    g_hash_table_unref(keys);
    g_ptr_array_unref(sb);
    g_ptr_array_unref(vb);
    return ok;
}

/* Two axes meet at every pair of their values (a point takes one value of
 * each), so a policy both can give ("policy.prefetch = 1, 2" beside
 * "policy = none, pad+prefetch=3") runs twice at some point: the experiment
 * loaded and listed its points, and those points' runs failed "policy
 * prefetch given twice", naming no line of the file. The last axis is
 * checked against each earlier one, at its line; a hash of the earlier
 * axis's specs keeps it linear in their values. */
static bool policy_axes_apart(const strata_experiment *e, const load_ctx *ctx, GError **err)
{
    const axis *a = g_ptr_array_index(e->axes, e->axes->len - 1);
    GPtrArray *sa = g_ptr_array_new_with_free_func(g_free), *va = g_ptr_array_new();
    axis_policy_specs(a, sa, va);
    bool ok = true;
    for (guint i = 0; ok && sa->len && i + 1 < e->axes->len; i++)
        ok = policies_apart(g_ptr_array_index(e->axes, i), a, sa, va, ctx, err);
    g_ptr_array_unref(sa);
    g_ptr_array_unref(va);
    return ok;
}

/* The most combinations of workload axes' values checked one by one; past
 * it each value is checked alone, with the other parameters as given. */
#define WORKLOAD_COMBINATIONS_CHECKED 65536

/* The workload axes' values are checked together: parameters that depend on
 * each other (mesh= and sharding=) may each be invalid beside the base
 * workload and valid in every point of the sweep. Each combination of their
 * values is checked once (the other axes do not change the workload); an
 * error names the combination, at the line of the last axis. */
static bool check_workload_axes(strata_experiment *e, const load_ctx *ctx, GError **err)
{
    GPtrArray *wa = g_ptr_array_new();
    uint64_t combos = 1;
    for (guint i = 0; i < e->axes->len; i++) {
        axis *a = g_ptr_array_index(e->axes, i);
        if (a->kind == AXIS_WORKLOAD) {
            g_ptr_array_add(wa, a);
            combos *= a->values->len; /* at most n_points, below 2^32 */
        }
    }
    bool ok = true;
    if (wa->len <= 1 || combos > WORKLOAD_COMBINATIONS_CHECKED) {
        for (guint i = 0; ok && i < wa->len; i++) {
            axis *a = g_ptr_array_index(wa, i);
            for (guint j = 0; ok && j < a->values->len; j++)
                ok = axis_check_value(e, a, g_ptr_array_index(a->values, j), ctx, err);
        }
        g_ptr_array_free(wa, TRUE);
        return ok;
    }
    for (uint64_t c = 0; ok && c < combos; c++) {
        char **args = exp_workload_args_with(e, NULL, NULL);
        GString *which = g_string_new(NULL);
        uint64_t rest = c;
        for (guint i = 0; i < wa->len; i++) {
            const axis *a = g_ptr_array_index(wa, i);
            const char *v = g_ptr_array_index(a->values, rest % a->values->len);
            rest /= a->values->len;
            char **n = exp_args_with(args, a->param, v);
            g_strfreev(args);
            args = n;
            g_string_append_printf(which, "%s%s=%s", which->len ? " with " : "", a->name, v);
        }
        GError *inner = NULL;
        if (!strata_workload_check(e->workload, (const char *const *)args, &inner)) {
            const axis *last = g_ptr_array_index(wa, wa->len - 1);
            ok = exp_fail(err, ctx, last->line, "bad workload parameters %s: %s", which->str, inner->message);
            g_clear_error(&inner);
        }
        g_string_free(which, TRUE);
        g_strfreev(args);
    }
    g_ptr_array_free(wa, TRUE);
    return ok;
}

bool exp_load_axes(strata_experiment *e, load_ctx *ctx, GError **err)
{
    e->n_points = 1;
    if (!strata_keyfile_has_group(ctx->k, "sweep"))
        return true;
    gsize n = 0;
    char **keys = strata_keyfile_keys(ctx->k, "sweep", &n);
    /* Declaration order: GKeyFile returns the keys in file order. */
    bool ok = true;
    for (gsize i = 0; i < n && ok; i++) {
        axis *a = g_new0(axis, 1);
        a->name = g_strdup(keys[i]);
        a->line = exp_line_of(ctx, "sweep", keys[i]);
        g_ptr_array_add(e->axes, a);
        char *text = exp_value(ctx, "sweep", keys[i]);
        a->values = exp_split_list(text ? text : "", ctx, a->line, err);
        g_free(text);
        if (!a->values) {
            a->values = g_ptr_array_new_with_free_func(g_free);
            ok = false;
            break;
        }
        ok = strchr(a->name, '+') ? joint_classify(e, a, ctx, err) : axis_classify(e, a, ctx, err);
        ok = ok && axis_not_repeated(e, ctx, err);
        GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
        for (guint j = 0; ok && j < a->values->len; j++) {
            const char *v = g_ptr_array_index(a->values, j);
            if (!g_hash_table_add(seen, (gpointer)v))
                ok = exp_fail(err, ctx, a->line, "value '%s' appears twice in axis '%s'", v, a->name);
            else if (a->kind == AXIS_JOINT)
                ok = joint_check_value(e, a, v, ctx, err);
            else if (a->kind != AXIS_WORKLOAD) /* workload values: together, once every axis is known */
                ok = axis_check_value(e, a, v, ctx, err);
        }
        g_hash_table_unref(seen);
        if (ok) {
            if (a->kind != AXIS_JOINT)
                axis_infer_unit(a);
            ok = a->kind == AXIS_JOINT || axis_values_distinct(a, ctx, err);
        }
        ok = ok && policy_axes_apart(e, ctx, err);
        if (ok) {
            if (e->n_points * a->values->len > G_MAXUINT32)
                ok = exp_fail(err, ctx, a->line, "the sweep has more than %u points", G_MAXUINT32);
            else
                e->n_points *= a->values->len;
        }
    }
    g_strfreev(keys);
    return ok && check_workload_axes(e, ctx, err);
}

