/*
 * experiment.c: loading and validating an experiment .ini, expanding its
 * axes into points, and building each point's commands (see experiment.h).
 *
 * Design notes:
 *  - GLib's key file parser does not report line numbers, so a first pass
 *    (scan_lines) reads the text itself: it rejects malformed lines and
 *    duplicate groups or keys with FILE:LINE, and remembers the line of every
 *    group and key so that later errors can name it.
 *  - Axes are classified once (axis_kind) and validated value by value
 *    against the real models: the hardware loader with the override, the
 *    workload's parameter table, the policy and allocator tables. So a typo
 *    fails before the first point runs, naming its line.
 *  - A point is a mixed-radix number over the axes; nothing is stored per
 *    point.
 *
 * Invariants:
 *  1. every axis has >= 1 value; point_count is the product of the sizes
 *     and fits in 32 bits (a sweep of more points is refused);
 *  2. all paths held are absolute;
 *  3. figures is NULL-terminated and non-empty.
 */
#include "sweep/experiment.h"

#include <string.h>
#include "alloc/alloc.h"
#include "core/error.h"
#include "core/params.h"
#include "core/units.h"
#include "hw/hw.h"
#include "policy/policy.h"
#include "workload/workload.h"

typedef enum {
    AXIS_HW_KEY,       /* memory.NAME.KEY, link.NAME.KEY, compute.NAME.KEY, hardware.KEY */
    AXIS_WORKLOAD,     /* workload.PARAM */
    AXIS_POLICY_SET,   /* policy */
    AXIS_POLICY_NAMED, /* policy.NAME */
    AXIS_ALLOCATOR,    /* allocator (or memory.NAME.allocator with runner alloc) */
    AXIS_CAPACITY,     /* capacity (or memory.NAME.capacity with runner alloc) */
    AXIS_ALIGNMENT,    /* memory.NAME.alignment with runner alloc */
    AXIS_HARDWARE,     /* hardware: .ini files */
} axis_kind;

typedef struct axis {
    char *name;
    axis_kind kind;
    char *param;       /* workload param, policy name, or memory name (alloc) */
    GPtrArray *values; /* char *, as written */
    GArray *numbers;   /* double, when unit != TEXT */
    strata_axis_unit unit;
    guint line;
} axis;

struct strata_experiment {
    char *origin, *dir;
    char *name, *title, *description;
    strata_runner_kind runner;
    char *hardware;      /* absolute, or NULL */
    char *trace;         /* absolute, or NULL */
    char *snapshot;      /* absolute, or NULL */
    char *workload;      /* generator name, or NULL */
    GPtrArray *workload_args; /* "k=v" */
    GPtrArray *policies;      /* specs */
    char *allocator, *capacity, *memory, *alignment;
    GPtrArray *axes;          /* axis * */
    uint64_t n_points;
    char **figures;
    char *plots_text;
    GHashTable *plots;
    bool timeline, report;
};

static const char *const known_groups[] = {"experiment", "sweep", "output", NULL};
static const char *const experiment_keys[] = {
    "name", "title", "description", "hardware", "trace", "workload", "snapshot", "policies",
    "allocator", "runner", "capacity", "memory", "alignment", NULL};
static const char *const output_keys[] = {"figures", "plots", "timeline", "report", NULL};
static const char *const plot_names[] = {"memory", "address-map", "links", "axes", NULL};

/* ---- line map --------------------------------------------------------- */

typedef struct load_ctx {
    const char *origin;
    GHashTable *lines; /* "group" or "group\x1fkey" -> line (GUINT_TO_POINTER) */
    GKeyFile *kf;
} load_ctx;

static char *line_key(const char *group, const char *key)
{
    return key ? g_strconcat(group, "\x1f", key, NULL) : g_strdup(group);
}

static guint line_of(const load_ctx *ctx, const char *group, const char *key)
{
    char *k = line_key(group, key);
    guint line = GPOINTER_TO_UINT(g_hash_table_lookup(ctx->lines, k));
    g_free(k);
    return line;
}

static bool fail(GError **err, const load_ctx *ctx, guint line, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static bool fail(GError **err, const load_ctx *ctx, guint line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s:%u: %s", ctx->origin, line, msg);
    g_free(msg);
    return false;
}

/* Wraps a model's error (already a full message) with FILE:LINE. */
static bool fail_from(GError **err, const load_ctx *ctx, guint line, const char *what, GError *inner)
{
    bool r = fail(err, ctx, line, "%s: %s", what, inner ? inner->message : "invalid");
    g_clear_error(&inner);
    return r;
}

static bool scan_lines(load_ctx *ctx, const char *data, GError **err)
{
    char **lines = g_strsplit(data, "\n", -1);
    char *group = NULL;
    bool ok = true;
    for (guint i = 0; lines[i] && ok; i++) {
        guint lineno = i + 1;
        char *l = g_strstrip(lines[i]);
        if (*l == '\0' || *l == '#' || *l == ';')
            continue;
        if (*l == '[') {
            size_t n = strlen(l);
            if (n < 3 || l[n - 1] != ']') {
                ok = fail(err, ctx, lineno, "expected a group header such as [sweep], got '%s'", l);
                break;
            }
            g_free(group);
            group = g_strndup(l + 1, n - 2);
            if (!g_strv_contains(known_groups, group)) {
                char *known = g_strjoinv(", ", (char **)known_groups);
                ok = fail(err, ctx, lineno, "unknown group [%s]; known groups: %s", group, known);
                g_free(known);
                break;
            }
            if (g_hash_table_contains(ctx->lines, group)) {
                ok = fail(err, ctx, lineno, "group [%s] given twice (first at line %u)", group,
                          line_of(ctx, group, NULL));
                break;
            }
            g_hash_table_insert(ctx->lines, g_strdup(group), GUINT_TO_POINTER(lineno));
            continue;
        }
        char *eq = strchr(l, '=');
        if (!eq) {
            ok = fail(err, ctx, lineno, "expected KEY = VALUE, a [group] or a # comment, got '%s'", l);
            break;
        }
        if (!group) {
            ok = fail(err, ctx, lineno, "expected a [group] header (such as [experiment]) before the first key");
            break;
        }
        char *key = g_strstrip(g_strndup(l, (gsize)(eq - l)));
        if (*key == '\0') {
            g_free(key);
            ok = fail(err, ctx, lineno, "expected a key before '='");
            break;
        }
        char *k = line_key(group, key);
        if (g_hash_table_contains(ctx->lines, k)) {
            ok = fail(err, ctx, lineno, "key '%s' in [%s] given twice (first at line %u)", key, group,
                      GPOINTER_TO_UINT(g_hash_table_lookup(ctx->lines, k)));
            g_free(k);
            g_free(key);
            break;
        }
        g_hash_table_insert(ctx->lines, k, GUINT_TO_POINTER(lineno));
        g_free(key);
    }
    g_free(group);
    g_strfreev(lines);
    return ok;
}

/* ---- small helpers ---------------------------------------------------- */

static char *get_value(const load_ctx *ctx, const char *group, const char *key)
{
    if (!g_key_file_has_key(ctx->kf, group, key, NULL))
        return NULL;
    char *v = g_key_file_get_value(ctx->kf, group, key, NULL);
    return v ? g_strstrip(v) : NULL;
}

static char *resolve_path(const strata_experiment *e, const char *path)
{
    if (g_path_is_absolute(path))
        return g_canonicalize_filename(path, NULL);
    return g_canonicalize_filename(path, e->dir);
}

/* Splits a list "a, b, \"c,d\"" on commas outside double quotes. Empty
 * items are errors (a stray comma is almost always a typo). */
static GPtrArray *split_list(const char *text, const load_ctx *ctx, guint line, GError **err)
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
                fail(err, ctx, line, "expected a comma-separated list of values, got an empty item in '%s'",
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
        fail(err, ctx, line, "unterminated '\"' in '%s'", text);
        g_ptr_array_unref(items);
        return NULL;
    }
    return items;
}

static bool check_policy(const char *spec, const load_ctx *ctx, guint line, GError **err)
{
    GError *inner = NULL;
    if (!strata_policy_check(spec, &inner))
        return fail_from(err, ctx, line, "bad policy", inner);
    return true;
}

/* "offload=param+prefetch=2" or "none": appends the specs to out. */
static bool parse_policy_set(const char *text, GPtrArray *out, const load_ctx *ctx, guint line,
                             GError **err)
{
    if (strcmp(text, "none") == 0)
        return true;
    char **parts = g_strsplit(text, "+", -1);
    bool ok = true;
    for (guint i = 0; parts[i] && ok; i++) {
        char *p = g_strstrip(parts[i]);
        if (*p == '\0') {
            ok = fail(err, ctx, line, "expected policies joined by '+' (or none), got '%s'", text);
            break;
        }
        ok = check_policy(p, ctx, line, err);
        if (ok && out)
            g_ptr_array_add(out, g_strdup(p));
    }
    g_strfreev(parts);
    return ok;
}

static bool check_allocator(const char *spec, const load_ctx *ctx, guint line, GError **err)
{
    GError *inner = NULL;
    strata_allocator *a = strata_allocator_new(spec, (uint64_t)1 << 30, 0, &inner);
    if (!a)
        return fail_from(err, ctx, line, "bad allocator", inner);
    strata_allocator_free(a);
    return true;
}

/* The --set overrides for hardware axis `name` = `value`. An allocator
 * spec "NAME:k=v,k=v" on memory.M.allocator becomes the hardware file's
 * form: memory.M.allocator=NAME plus memory.M.allocator.k=v each. */
static char **hw_overrides(const char *name, const char *value)
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

static bool check_hw(const char *path, char *const *overrides, const load_ctx *ctx, guint line,
                     GError **err)
{
    GError *inner = NULL;
    strata_hw *hw = strata_hw_load(path, (const char *const *)overrides, &inner);
    if (!hw)
        return fail_from(err, ctx, line, overrides ? "bad hardware override" : "bad hardware", inner);
    strata_hw_free(hw);
    return true;
}

/* Workload args with `extra` ("k=v") replacing any earlier value of k. */
static char **workload_args_with(const strata_experiment *e, const char *key, const char *value)
{
    GPtrArray *args = g_ptr_array_new();
    size_t klen = key ? strlen(key) : 0;
    for (guint i = 0; i < e->workload_args->len; i++) {
        const char *a = g_ptr_array_index(e->workload_args, i);
        if (key && strncmp(a, key, klen) == 0 && a[klen] == '=')
            continue;
        g_ptr_array_add(args, g_strdup(a));
    }
    if (key)
        g_ptr_array_add(args, g_strdup_printf("%s=%s", key, value));
    g_ptr_array_add(args, NULL);
    return (char **)g_ptr_array_free(args, FALSE);
}

static bool check_workload(const strata_experiment *e, char **args, const load_ctx *ctx, guint line,
                           GError **err)
{
    const strata_workload_type *t = strata_workload_type_find(e->workload);
    char *kv = g_strjoinv(",", args);
    char *owner = g_strdup_printf("workload %s", e->workload);
    GError *inner = NULL;
    strata_params *p = strata_params_new(owner, t->params, kv, &inner);
    g_free(owner);
    g_free(kv);
    if (!p)
        return fail_from(err, ctx, line, "bad workload parameter", inner);
    strata_params_free(p);
    return true;
}

/* ---- axes -------------------------------------------------------------- */

static void axis_free(gpointer data)
{
    axis *a = data;
    g_free(a->name);
    g_free(a->param);
    g_ptr_array_unref(a->values);
    if (a->numbers)
        g_array_unref(a->numbers);
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

static bool is_hw_key(const char *name, char **group_kind, char **group_name, char **key)
{
    char **parts = g_strsplit(name, ".", 3);
    bool ok = false;
    guint n = g_strv_length(parts);
    if (n == 3 && (strcmp(parts[0], "memory") == 0 || strcmp(parts[0], "link") == 0 ||
                   strcmp(parts[0], "compute") == 0)) {
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
            ok = fail(err, ctx, a->line, "unknown policy '%s' in axis '%s'; known policies: %s", a->param, n,
                      known);
            g_free(known);
        }
    } else if (strcmp(n, "allocator") == 0) {
        a->kind = AXIS_ALLOCATOR;
    } else if (strcmp(n, "capacity") == 0) {
        a->kind = AXIS_CAPACITY;
        if (e->runner != STRATA_RUNNER_ALLOC)
            ok = fail(err, ctx, a->line,
                      "axis 'capacity' needs runner = alloc; with runner = run sweep memory.NAME.capacity");
    } else if (strcmp(n, "hardware") == 0) {
        a->kind = AXIS_HARDWARE;
        if (e->runner != STRATA_RUNNER_RUN)
            ok = fail(err, ctx, a->line, "axis 'hardware' needs runner = run");
    } else if (g_str_has_prefix(n, "workload.")) {
        a->kind = AXIS_WORKLOAD;
        a->param = g_strdup(n + 9);
        if (!e->workload)
            ok = fail(err, ctx, a->line, "axis '%s' needs a workload in [experiment]", n);
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
                ok = fail(err, ctx, a->line,
                          "axis '%s' needs runner = run; runner = alloc takes memory.NAME.capacity, "
                          "memory.NAME.allocator and memory.NAME.alignment",
                          n);
            if (ok) {
                a->param = g_strdup(gname);
                if (e->memory && strcmp(e->memory, gname) != 0)
                    ok = fail(err, ctx, a->line, "axis '%s' names memory '%s' but [experiment] memory is '%s'",
                              n, gname, e->memory);
            }
        }
    } else {
        ok = fail(err, ctx, a->line,
                  "unknown axis '%s'; expected a hardware key (memory.NAME.KEY, link.NAME.KEY, "
                  "compute.NAME.KEY, hardware.KEY), workload.PARAM, policy, policy.NAME, allocator, "
                  "capacity or hardware",
                  n);
    }
    g_free(gkind);
    g_free(gname);
    g_free(key);
    return ok;
}

static bool axis_check_value(strata_experiment *e, axis *a, const char *v, const load_ctx *ctx,
                             GError **err)
{
    switch (a->kind) {
    case AXIS_POLICY_SET: return parse_policy_set(v, NULL, ctx, a->line, err);
    case AXIS_POLICY_NAMED: {
        if (strcmp(v, "off") == 0)
            return true;
        char *spec = g_strdup_printf("%s=%s", a->param, v);
        bool ok = check_policy(spec, ctx, a->line, err);
        g_free(spec);
        return ok;
    }
    case AXIS_ALLOCATOR: return check_allocator(v, ctx, a->line, err);
    case AXIS_CAPACITY:
    case AXIS_ALIGNMENT: {
        uint64_t bytes;
        GError *inner = NULL;
        if (!strata_parse_size(v, &bytes, &inner))
            return fail_from(err, ctx, a->line, "expected a size", inner);
        return true;
    }
    case AXIS_HARDWARE: {
        char *path = resolve_path(e, v);
        bool ok = check_hw(path, NULL, ctx, a->line, err);
        g_free(path);
        return ok;
    }
    case AXIS_WORKLOAD: {
        char **args = workload_args_with(e, a->param, v);
        bool ok = check_workload(e, args, ctx, a->line, err);
        g_strfreev(args);
        return ok;
    }
    case AXIS_HW_KEY: {
        if (!e->hardware)
            return true; /* checked per hardware file by the run itself */
        char **ov = hw_overrides(a->name, v);
        bool ok = check_hw(e->hardware, ov, ctx, a->line, err);
        g_strfreev(ov);
        return ok;
    }
    }
    return true;
}

static bool load_axes(strata_experiment *e, load_ctx *ctx, GError **err)
{
    e->n_points = 1;
    if (!g_key_file_has_group(ctx->kf, "sweep"))
        return true;
    gsize n = 0;
    char **keys = g_key_file_get_keys(ctx->kf, "sweep", &n, NULL);
    /* Declaration order: GKeyFile keeps it, but sort by line to be sure. */
    bool ok = true;
    for (gsize i = 0; i < n && ok; i++) {
        axis *a = g_new0(axis, 1);
        a->name = g_strdup(keys[i]);
        a->line = line_of(ctx, "sweep", keys[i]);
        g_ptr_array_add(e->axes, a);
        char *text = get_value(ctx, "sweep", keys[i]);
        a->values = split_list(text ? text : "", ctx, a->line, err);
        g_free(text);
        if (!a->values) {
            a->values = g_ptr_array_new_with_free_func(g_free);
            ok = false;
            break;
        }
        ok = axis_classify(e, a, ctx, err);
        GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
        for (guint j = 0; ok && j < a->values->len; j++) {
            const char *v = g_ptr_array_index(a->values, j);
            if (!g_hash_table_add(seen, (gpointer)v))
                ok = fail(err, ctx, a->line, "value '%s' appears twice in axis '%s'", v, a->name);
            else
                ok = axis_check_value(e, a, v, ctx, err);
        }
        g_hash_table_unref(seen);
        if (ok) {
            axis_infer_unit(a);
            if (e->n_points * a->values->len > G_MAXUINT32)
                ok = fail(err, ctx, a->line, "the sweep has more than %u points", G_MAXUINT32);
            else
                e->n_points *= a->values->len;
        }
    }
    g_strfreev(keys);
    return ok;
}

/* ---- groups ------------------------------------------------------------ */

static bool check_keys(const load_ctx *ctx, const char *group, const char *const *known, GError **err)
{
    if (!g_key_file_has_group(ctx->kf, group))
        return true;
    gsize n = 0;
    char **keys = g_key_file_get_keys(ctx->kf, group, &n, NULL);
    bool ok = true;
    for (gsize i = 0; i < n && ok; i++) {
        if (g_strv_contains(known, keys[i]))
            continue;
        char *list = g_strjoinv(", ", (char **)known);
        ok = fail(err, ctx, line_of(ctx, group, keys[i]), "unknown key '%s' in [%s]; known keys: %s", keys[i],
                  group, list);
        g_free(list);
    }
    g_strfreev(keys);
    return ok;
}

static bool parse_bool(const char *v, bool *out)
{
    if (!g_ascii_strcasecmp(v, "true") || !strcmp(v, "1") || !g_ascii_strcasecmp(v, "yes")) {
        *out = true;
        return true;
    }
    if (!g_ascii_strcasecmp(v, "false") || !strcmp(v, "0") || !g_ascii_strcasecmp(v, "no")) {
        *out = false;
        return true;
    }
    return false;
}

static bool file_exists_or_fail(const char *path, const load_ctx *ctx, guint line, const char *what,
                                GError **err)
{
    if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
        return true;
    return fail(err, ctx, line, "%s '%s' does not exist or is not a file", what, path);
}

static bool load_experiment_group(strata_experiment *e, load_ctx *ctx, GError **err)
{
    if (!g_key_file_has_group(ctx->kf, "experiment"))
        return fail(err, ctx, 1, "expected an [experiment] group");
    guint gline = line_of(ctx, "experiment", NULL);
    if (!check_keys(ctx, "experiment", experiment_keys, err))
        return false;
    e->name = get_value(ctx, "experiment", "name");
    if (!e->name || !*e->name)
        return fail(err, ctx, gline, "[experiment] needs a name");
    for (const char *p = e->name; *p; p++)
        if (!g_ascii_isalnum(*p) && *p != '-' && *p != '_' && *p != '.')
            return fail(err, ctx, line_of(ctx, "experiment", "name"),
                        "expected a name of letters, digits, '-', '_' or '.', got '%s'", e->name);
    e->title = get_value(ctx, "experiment", "title");
    if (!e->title)
        e->title = g_strdup(e->name);
    e->description = get_value(ctx, "experiment", "description");
    if (!e->description)
        e->description = g_strdup("");

    char *runner = get_value(ctx, "experiment", "runner");
    e->runner = STRATA_RUNNER_RUN;
    if (runner && strcmp(runner, "alloc") == 0)
        e->runner = STRATA_RUNNER_ALLOC;
    else if (runner && strcmp(runner, "run") != 0) {
        fail(err, ctx, line_of(ctx, "experiment", "runner"), "unknown runner '%s'; known runners: run, alloc",
             runner);
        g_free(runner);
        return false;
    }
    g_free(runner);

    char *hw = get_value(ctx, "experiment", "hardware");
    guint hwline = line_of(ctx, "experiment", "hardware");
    if (hw && e->runner == STRATA_RUNNER_ALLOC) {
        g_free(hw);
        return fail(err, ctx, hwline, "hardware is not used by runner = alloc (it replays one memory)");
    }
    if (hw) {
        e->hardware = resolve_path(e, hw);
        g_free(hw);
        if (!file_exists_or_fail(e->hardware, ctx, hwline, "hardware file", err) ||
            !check_hw(e->hardware, NULL, ctx, hwline, err))
            return false;
    }

    /* The trace: exactly one source. */
    char *trace = get_value(ctx, "experiment", "trace");
    char *workload = get_value(ctx, "experiment", "workload");
    char *snapshot = get_value(ctx, "experiment", "snapshot");
    int n_sources = !!trace + !!workload + !!snapshot;
    bool ok = true;
    if (n_sources != 1) {
        ok = fail(err, ctx, gline, "[experiment] needs exactly one of trace, workload or snapshot (got %d)",
                  n_sources);
    } else if (trace) {
        e->trace = resolve_path(e, trace);
        ok = file_exists_or_fail(e->trace, ctx, line_of(ctx, "experiment", "trace"), "trace", err);
    } else if (snapshot) {
        e->snapshot = resolve_path(e, snapshot);
        ok = file_exists_or_fail(e->snapshot, ctx, line_of(ctx, "experiment", "snapshot"), "snapshot", err);
    } else {
        guint wline = line_of(ctx, "experiment", "workload");
        char **words = g_strsplit_set(workload, " \t", -1);
        for (guint i = 0; words[i]; i++) {
            if (!*words[i])
                continue;
            if (!e->workload) {
                e->workload = g_strdup(words[i]);
            } else if (!strchr(words[i], '=') || words[i][0] == '=') {
                ok = fail(err, ctx, wline, "expected workload parameters as KEY=VALUE, got '%s'", words[i]);
                break;
            } else {
                g_ptr_array_add(e->workload_args, g_strdup(words[i]));
            }
        }
        g_strfreev(words);
        if (ok && !e->workload)
            ok = fail(err, ctx, wline, "expected a workload name such as matmul");
        if (ok && !strata_workload_type_find(e->workload)) {
            char *known = strata_workload_type_names();
            ok = fail(err, ctx, wline, "unknown workload '%s'; known workloads: %s", e->workload, known);
            g_free(known);
        }
        if (ok) {
            char **args = workload_args_with(e, NULL, NULL);
            ok = check_workload(e, args, ctx, wline, err);
            g_strfreev(args);
        }
    }
    g_free(trace);
    g_free(workload);
    g_free(snapshot);
    if (!ok)
        return false;

    char *policies = get_value(ctx, "experiment", "policies");
    if (policies) {
        guint pline = line_of(ctx, "experiment", "policies");
        char **specs = g_strsplit_set(policies, ", \t+", -1);
        for (guint i = 0; specs[i] && ok; i++)
            if (*specs[i] && strcmp(specs[i], "none") != 0) {
                ok = check_policy(specs[i], ctx, pline, err);
                if (ok)
                    g_ptr_array_add(e->policies, g_strdup(specs[i]));
            }
        g_strfreev(specs);
        g_free(policies);
        if (!ok)
            return false;
    }

    e->allocator = get_value(ctx, "experiment", "allocator");
    if (e->allocator && !check_allocator(e->allocator, ctx, line_of(ctx, "experiment", "allocator"), err))
        return false;
    e->capacity = get_value(ctx, "experiment", "capacity");
    e->memory = get_value(ctx, "experiment", "memory");
    e->alignment = get_value(ctx, "experiment", "alignment");
    const char *alloc_only[] = {"capacity", "memory", "alignment"};
    char *alloc_vals[] = {e->capacity, e->memory, e->alignment};
    for (guint i = 0; i < 3; i++) {
        if (!alloc_vals[i])
            continue;
        guint line = line_of(ctx, "experiment", alloc_only[i]);
        if (e->runner != STRATA_RUNNER_ALLOC)
            return fail(err, ctx, line, "%s is for runner = alloc; with runner = run set memory.NAME.%s in [sweep]",
                        alloc_only[i], alloc_only[i]);
        uint64_t bytes;
        GError *inner = NULL;
        if (i != 1 && !strata_parse_size(alloc_vals[i], &bytes, &inner))
            return fail_from(err, ctx, line, "expected a size", inner);
    }
    return true;
}

static bool load_output_group(strata_experiment *e, load_ctx *ctx, GError **err)
{
    if (!check_keys(ctx, "output", output_keys, err))
        return false;
    char *figures = get_value(ctx, "output", "figures");
    if (figures) {
        guint line = line_of(ctx, "output", "figures");
        GPtrArray *items = split_list(figures, ctx, line, err);
        g_free(figures);
        if (!items)
            return false;
        for (guint i = 0; i < items->len; i++) {
            const char *f = g_ptr_array_index(items, i);
            char **parts = g_strsplit(f, ".", -1);
            bool good = true;
            for (guint j = 0; parts[j]; j++)
                if (!*parts[j] || strpbrk(parts[j], " \t\""))
                    good = false;
            g_strfreev(parts);
            if (!good) {
                fail(err, ctx, line, "expected a result key such as makespan_s or memories.hbm.peak_allocated_bytes, got '%s'",
                     f);
                g_ptr_array_unref(items);
                return false;
            }
        }
        g_ptr_array_add(items, NULL);
        e->figures = g_strdupv((char **)items->pdata);
        g_ptr_array_unref(items);
    } else if (e->runner == STRATA_RUNNER_RUN) {
        const char *def[] = {"status", "makespan_s", NULL};
        e->figures = g_strdupv((char **)def);
    } else {
        const char *def[] = {"status", "peak_allocated_bytes", "peak_reserved_bytes", "fragmentation_peak", NULL};
        e->figures = g_strdupv((char **)def);
    }

    char *plots = get_value(ctx, "output", "plots");
    guint pline = line_of(ctx, "output", "plots");
    if (!plots)
        plots = g_strdup(e->runner == STRATA_RUNNER_RUN ? "all" : "axes");
    char **items = g_strsplit_set(plots, ", \t", -1);
    bool ok = true;
    for (guint i = 0; items[i] && ok; i++) {
        const char *p = items[i];
        if (!*p || strcmp(p, "none") == 0)
            continue;
        if (strcmp(p, "all") == 0) {
            for (guint j = 0; plot_names[j]; j++)
                if (e->runner == STRATA_RUNNER_RUN || strcmp(plot_names[j], "axes") == 0)
                    g_hash_table_add(e->plots, g_strdup(plot_names[j]));
            continue;
        }
        if (!g_strv_contains(plot_names, p)) {
            char *known = g_strjoinv(", ", (char **)plot_names);
            ok = fail(err, ctx, pline, "unknown plot '%s'; known plots: %s, all, none", p, known);
            g_free(known);
        } else if (strcmp(p, "axes") != 0 && e->runner != STRATA_RUNNER_RUN) {
            ok = fail(err, ctx, pline, "plot '%s' needs a timeline, which only runner = run records", p);
        } else {
            g_hash_table_add(e->plots, g_strdup(p));
        }
    }
    g_strfreev(items);
    g_free(plots);
    if (!ok)
        return false;
    GString *text = g_string_new(NULL);
    for (guint j = 0; plot_names[j]; j++)
        if (g_hash_table_contains(e->plots, plot_names[j]))
            g_string_append_printf(text, "%s%s", text->len ? "," : "", plot_names[j]);
    e->plots_text = g_string_free(text, FALSE);

    e->timeline = g_hash_table_contains(e->plots, "memory") || g_hash_table_contains(e->plots, "address-map") ||
                  g_hash_table_contains(e->plots, "links");
    e->report = true;
    const char *bool_keys[] = {"timeline", "report"};
    bool *bool_dst[] = {&e->timeline, &e->report};
    for (guint i = 0; i < 2; i++) {
        char *v = get_value(ctx, "output", bool_keys[i]);
        if (!v)
            continue;
        guint line = line_of(ctx, "output", bool_keys[i]);
        bool good = parse_bool(v, bool_dst[i]);
        g_free(v);
        if (!good)
            return fail(err, ctx, line, "expected true or false for %s", bool_keys[i]);
        if (i == 0 && e->timeline && e->runner != STRATA_RUNNER_RUN)
            return fail(err, ctx, line, "timeline needs runner = run");
    }
    return true;
}

static bool check_runner_needs(strata_experiment *e, const load_ctx *ctx, GError **err)
{
    bool has_hw_axis = false, has_alloc_axis = false;
    for (guint i = 0; i < e->axes->len; i++) {
        const axis *a = g_ptr_array_index(e->axes, i);
        has_hw_axis |= a->kind == AXIS_HARDWARE;
        has_alloc_axis |= a->kind == AXIS_ALLOCATOR;
    }
    if (e->runner == STRATA_RUNNER_RUN && !e->hardware && !has_hw_axis)
        return fail(err, ctx, line_of(ctx, "experiment", NULL),
                    "runner = run needs hardware in [experiment] (or a hardware axis)");
    if (e->runner == STRATA_RUNNER_ALLOC && !e->allocator && !has_alloc_axis)
        return fail(err, ctx, line_of(ctx, "experiment", NULL),
                    "runner = alloc needs allocator in [experiment] (or an allocator axis)");
    return true;
}

strata_experiment *strata_experiment_load_data(const char *data, const char *origin, GError **err)
{
    strata_experiment *e = g_new0(strata_experiment, 1);
    e->origin = g_canonicalize_filename(origin, NULL);
    e->dir = g_path_get_dirname(e->origin);
    e->workload_args = g_ptr_array_new_with_free_func(g_free);
    e->policies = g_ptr_array_new_with_free_func(g_free);
    e->axes = g_ptr_array_new_with_free_func(axis_free);
    e->plots = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

    load_ctx ctx = {.origin = origin, .lines = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL)};
    ctx.kf = g_key_file_new();
    bool ok = scan_lines(&ctx, data, err);
    if (ok) {
        GError *inner = NULL;
        if (!g_key_file_load_from_data(ctx.kf, data, (gsize)-1, G_KEY_FILE_NONE, &inner))
            ok = fail_from(err, &ctx, 1, "not a key file", inner);
    }
    ok = ok && load_experiment_group(e, &ctx, err);
    ok = ok && load_axes(e, &ctx, err);
    ok = ok && check_runner_needs(e, &ctx, err);
    ok = ok && load_output_group(e, &ctx, err);
    g_key_file_free(ctx.kf);
    g_hash_table_unref(ctx.lines);
    if (!ok) {
        strata_experiment_free(e);
        return NULL;
    }
    return e;
}

strata_experiment *strata_experiment_load(const char *path, GError **err)
{
    char *data = NULL;
    GError *inner = NULL;
    if (!g_file_get_contents(path, &data, NULL, &inner)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot read the experiment: %s", path,
                    inner->message);
        g_clear_error(&inner);
        return NULL;
    }
    strata_experiment *e = strata_experiment_load_data(data, path, err);
    g_free(data);
    return e;
}

void strata_experiment_free(strata_experiment *e)
{
    if (!e)
        return;
    g_free(e->origin);
    g_free(e->dir);
    g_free(e->name);
    g_free(e->title);
    g_free(e->description);
    g_free(e->hardware);
    g_free(e->trace);
    g_free(e->snapshot);
    g_free(e->workload);
    g_ptr_array_unref(e->workload_args);
    g_ptr_array_unref(e->policies);
    g_free(e->allocator);
    g_free(e->capacity);
    g_free(e->memory);
    g_free(e->alignment);
    g_ptr_array_unref(e->axes);
    g_strfreev(e->figures);
    g_free(e->plots_text);
    g_hash_table_unref(e->plots);
    g_free(e);
}

/* ---- accessors ---------------------------------------------------------- */

const char *strata_experiment_name(const strata_experiment *e) { return e->name; }
const char *strata_experiment_title(const strata_experiment *e) { return e->title; }
const char *strata_experiment_description(const strata_experiment *e) { return e->description; }
const char *strata_experiment_origin(const strata_experiment *e) { return e->origin; }
strata_runner_kind strata_experiment_runner(const strata_experiment *e) { return e->runner; }
guint strata_experiment_axis_count(const strata_experiment *e) { return e->axes->len; }

static const axis *axis_at(const strata_experiment *e, guint i)
{
    g_return_val_if_fail(i < e->axes->len, NULL);
    return g_ptr_array_index(e->axes, i);
}

const char *strata_experiment_axis_name(const strata_experiment *e, guint i) { return axis_at(e, i)->name; }
guint strata_experiment_axis_size(const strata_experiment *e, guint i) { return axis_at(e, i)->values->len; }

const char *strata_experiment_axis_value(const strata_experiment *e, guint i, guint v)
{
    const axis *a = axis_at(e, i);
    g_return_val_if_fail(v < a->values->len, NULL);
    return g_ptr_array_index(a->values, v);
}

strata_axis_unit strata_experiment_axis_unit(const strata_experiment *e, guint i) { return axis_at(e, i)->unit; }

bool strata_experiment_axis_number(const strata_experiment *e, guint i, guint v, double *out)
{
    const axis *a = axis_at(e, i);
    if (a->unit == STRATA_AXIS_TEXT || v >= a->numbers->len)
        return false;
    *out = g_array_index(a->numbers, double, v);
    return true;
}

const char *strata_axis_unit_name(strata_axis_unit unit)
{
    static const char *const names[] = {"text", "number", "bytes", "bytes/s", "s"};
    return unit <= STRATA_AXIS_TIME ? names[unit] : "text";
}

uint64_t strata_experiment_point_count(const strata_experiment *e) { return e->n_points; }

guint strata_experiment_point_value(const strata_experiment *e, uint64_t point, guint i)
{
    /* Mixed radix, last axis fastest. */
    for (guint j = e->axes->len; j-- > i + 1;)
        point /= axis_at(e, j)->values->len;
    return (guint)(point % axis_at(e, i)->values->len);
}

const char *const *strata_experiment_figures(const strata_experiment *e) { return (const char *const *)e->figures; }
bool strata_experiment_wants_plot(const strata_experiment *e, const char *p) { return g_hash_table_contains(e->plots, p); }
const char *strata_experiment_plots_text(const strata_experiment *e) { return e->plots_text; }
bool strata_experiment_timeline(const strata_experiment *e) { return e->timeline; }
bool strata_experiment_report(const strata_experiment *e) { return e->report; }

/* ---- plans -------------------------------------------------------------- */

static void add(GPtrArray *argv, const char *s) { g_ptr_array_add(argv, g_strdup(s)); }

static char *cached_input(const char *out_dir, GPtrArray *argv)
{
    GString *key = g_string_new(NULL);
    for (guint i = 0; i < argv->len; i++)
        g_string_append_printf(key, "%s%c", (const char *)g_ptr_array_index(argv, i), '\0');
    char *sum = g_compute_checksum_for_data(G_CHECKSUM_SHA1, (const guchar *)key->str, key->len);
    g_string_free(key, TRUE);
    sum[16] = '\0';
    char *name = g_strdup_printf("%s.trace", sum);
    char *path = g_build_filename(out_dir, "inputs", name, NULL);
    g_free(name);
    g_free(sum);
    return path;
}

strata_point_plan *strata_experiment_plan(const strata_experiment *e, uint64_t point, const char *out_dir,
                                          const char *json_path, const char *timeline_path)
{
    g_return_val_if_fail(point < e->n_points, NULL);
    strata_point_plan *plan = g_new0(strata_point_plan, 1);

    /* Which value of each axis. */
    const char *hardware = e->hardware, *allocator = e->allocator, *capacity = e->capacity;
    const char *memory = e->memory, *alignment = e->alignment;
    char *hw_path = NULL;
    GPtrArray *sets = g_ptr_array_new_with_free_func(g_free);
    GPtrArray *policies = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < e->policies->len; i++)
        add(policies, g_ptr_array_index(e->policies, i));
    char **wargs = workload_args_with(e, NULL, NULL);
    for (guint i = 0; i < e->axes->len; i++) {
        const axis *a = axis_at(e, i);
        const char *v = g_ptr_array_index(a->values, strata_experiment_point_value(e, point, i));
        switch (a->kind) {
        case AXIS_HW_KEY: {
            char **ov = hw_overrides(a->name, v);
            for (guint j = 0; ov[j]; j++)
                g_ptr_array_add(sets, g_strdup(ov[j]));
            g_strfreev(ov);
            break;
        }
        case AXIS_WORKLOAD: {
            /* Replace in the running list. */
            GPtrArray *n = g_ptr_array_new();
            size_t klen = strlen(a->param);
            for (guint j = 0; wargs[j]; j++)
                if (!(strncmp(wargs[j], a->param, klen) == 0 && wargs[j][klen] == '='))
                    g_ptr_array_add(n, g_strdup(wargs[j]));
            g_ptr_array_add(n, g_strdup_printf("%s=%s", a->param, v));
            g_ptr_array_add(n, NULL);
            g_strfreev(wargs);
            wargs = (char **)g_ptr_array_free(n, FALSE);
            break;
        }
        case AXIS_POLICY_SET: parse_policy_set(v, policies, NULL, 0, NULL); break;
        case AXIS_POLICY_NAMED:
            if (strcmp(v, "off") != 0)
                g_ptr_array_add(policies, g_strdup_printf("%s=%s", a->param, v));
            break;
        case AXIS_ALLOCATOR:
            allocator = v;
            if (a->param)
                memory = a->param;
            break;
        case AXIS_CAPACITY:
            capacity = v;
            if (a->param)
                memory = a->param;
            break;
        case AXIS_ALIGNMENT:
            alignment = v;
            if (a->param)
                memory = a->param;
            break;
        case AXIS_HARDWARE:
            g_free(hw_path);
            hw_path = resolve_path(e, v);
            hardware = hw_path;
            break;
        }
    }

    /* The input trace. */
    if (e->trace) {
        plan->input_path = g_strdup(e->trace);
    } else {
        GPtrArray *in = g_ptr_array_new_with_free_func(g_free);
        if (e->workload) {
            add(in, "gen");
            add(in, e->workload);
            for (guint j = 0; wargs[j]; j++)
                add(in, wargs[j]);
        } else {
            add(in, "import");
            add(in, "torch");
            add(in, e->snapshot);
        }
        plan->input_path = cached_input(out_dir, in);
        add(in, "-o");
        add(in, plan->input_path);
        g_ptr_array_add(in, NULL);
        plan->input_argv = (char **)g_ptr_array_free(in, FALSE);
    }

    GPtrArray *run = g_ptr_array_new_with_free_func(g_free);
    if (e->runner == STRATA_RUNNER_RUN) {
        add(run, "run");
        add(run, "--hw");
        add(run, hardware);
        add(run, "--trace");
        add(run, plan->input_path);
        for (guint i = 0; i < sets->len; i++) {
            add(run, "--set");
            add(run, g_ptr_array_index(sets, i));
        }
        if (allocator) {
            add(run, "--allocator");
            add(run, allocator);
        }
    } else {
        add(run, "alloc");
        add(run, "--trace");
        add(run, plan->input_path);
        add(run, "--allocator");
        add(run, allocator);
        if (capacity) {
            add(run, "--capacity");
            add(run, capacity);
        }
        if (memory) {
            add(run, "--memory");
            add(run, memory);
        }
        if (alignment) {
            add(run, "--alignment");
            add(run, alignment);
        }
    }
    for (guint i = 0; i < policies->len; i++) {
        add(run, "--policy");
        add(run, g_ptr_array_index(policies, i));
    }
    add(run, "--json");
    add(run, json_path);
    if (timeline_path && e->runner == STRATA_RUNNER_RUN) {
        add(run, "--timeline");
        add(run, timeline_path);
    }
    g_ptr_array_add(run, NULL);
    plan->run_argv = (char **)g_ptr_array_free(run, FALSE);

    g_strfreev(wargs);
    g_free(hw_path);
    g_ptr_array_unref(sets);
    g_ptr_array_unref(policies);
    return plan;
}

void strata_point_plan_free(strata_point_plan *plan)
{
    if (!plan)
        return;
    g_strfreev(plan->input_argv);
    g_free(plan->input_path);
    g_strfreev(plan->run_argv);
    g_free(plan);
}
