/*
 * experiment.c: loading and validating an experiment .ini: the
 * [experiment] and [output] groups, the accessors, and the shared error and
 * value helpers of the experiment reader (see experiment.h; the [sweep]
 * axes are in experiment_axes.c, the commands of a point in
 * experiment_plan.c).
 *
 * Design notes:
 *  - The text is read by the key-file reader (core/keyfile.h), which knows
 *    the line of every group and key and rejects malformed lines, duplicate
 *    groups or keys, NUL bytes and overlong lines with FILE:LINE.
 *  - Every model an experiment names is checked when it loads, so a typo
 *    fails before the first point runs, naming its line.
 *
 * Invariants:
 *  1. every axis has >= 1 value; point_count is the product of the sizes
 *     and fits in 32 bits (a sweep of more points is refused);
 *  2. all paths held are absolute;
 *  3. figures is NULL-terminated and non-empty.
 */
#include <string.h>
#include "core/error.h"
#include "core/units.h"
#include "sweep/experiment_internal.h"
#include "workload/workload.h"

static const char *const known_groups[] = {"experiment", "sweep", "output", NULL};
/* The keys of [experiment] and [output] (docs/experiments.md); the readers
 * below say what a missing one means in their own words (none is
 * required by the check). */
static const strata_key_def experiment_keys[] = {
    {"name", false, "the experiment's name: letters, digits, - _ . (load_names needs one)"},
    {"title", false, "the report's title (default: the name)"},
    {"description", false, "free text shown at the top of the report"},
    {"hardware", false, "runner = run: the hardware file"},
    {"trace", false, "the trace every point runs (or workload, or snapshot)"},
    {"workload", false, "a generator and its parameters, as strata gen takes them"},
    {"snapshot", false, "a PyTorch memory snapshot, imported as strata import torch does"},
    {"policies", false, "policies applied to every point, before the swept ones"},
    {"allocator", false, "--allocator for every point"},
    {"runner", false, "run (timed, SimGrid) or alloc (untimed allocator replay)"},
    {"capacity", false, "runner = alloc: the memory's capacity"},
    {"memory", false, "runner = alloc: the memory replayed"},
    {"alignment", false, "runner = alloc: the allocator's alignment"},
    {NULL, false, NULL}};
static const strata_key_def output_keys[] = {
    {"figures", false, "the result keys of the table"},
    {"plots", false, "memory, address-map, links, axes, all or none"},
    {"timeline", false, "a Perfetto timeline per point (default: when a plot needs it)"},
    {"report", false, "write report.html (default true)"},
    {NULL, false, NULL}};
static const char *const plot_names[] = {"memory", "address-map", "links", "axes", NULL};

/* ---- errors and values ------------------------------------------------ */

guint exp_line_of(const load_ctx *ctx, const char *group, const char *key)
{
    return strata_keyfile_line(ctx->k, group, key);
}

bool exp_fail(GError **err, const load_ctx *ctx, guint line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strata_vfail_at(err, ctx->origin, line, fmt, ap);
    va_end(ap);
    return false;
}

/* Wraps a model's error (already a full message) with FILE:LINE. */
bool exp_fail_from(GError **err, const load_ctx *ctx, guint line, const char *what, GError *inner)
{
    bool r = exp_fail(err, ctx, line, "%s: %s", what, inner ? inner->message : "invalid");
    g_clear_error(&inner);
    return r;
}

char *exp_value(const load_ctx *ctx, const char *group, const char *key)
{
    return strata_keyfile_value(ctx->k, group, key);
}

char *exp_resolve_path(const strata_experiment *e, const char *path)
{
    if (g_path_is_absolute(path))
        return g_canonicalize_filename(path, NULL);
    return g_canonicalize_filename(path, e->dir);
}

/* ---- groups ------------------------------------------------------------ */

/* Every group is known and every key of a group is one of known. */
static bool check_groups(const load_ctx *ctx, GError **err)
{
    char **groups = strata_keyfile_groups(ctx->k, NULL);
    bool ok = true;
    for (guint i = 0; ok && groups[i]; i++) {
        if (g_strv_contains(known_groups, groups[i]))
            continue;
        char *known = g_strjoinv(", ", (char **)known_groups);
        char *q = strata_quote(groups[i]);
        ok = exp_fail(err, ctx, exp_line_of(ctx, groups[i], NULL), "unknown group [%s]; known groups: %s", q,
                      known);
        g_free(q);
        g_free(known);
    }
    g_strfreev(groups);
    return ok && strata_keyfile_check_declared(ctx->k, "experiment", experiment_keys, NULL, err) &&
           strata_keyfile_check_declared(ctx->k, "output", output_keys, NULL, err);
}

static bool file_exists_or_fail(const char *path, const load_ctx *ctx, guint line, const char *what,
                                GError **err)
{
    if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
        return true;
    return exp_fail(err, ctx, line, "%s '%s' does not exist or is not a file", what, path);
}

static bool load_names(strata_experiment *e, load_ctx *ctx, GError **err)
{
    if (!strata_keyfile_has_group(ctx->k, "experiment"))
        return exp_fail(err, ctx, 1, "expected an [experiment] group");
    guint gline = exp_line_of(ctx, "experiment", NULL);
    e->name = exp_value(ctx, "experiment", "name");
    if (!e->name || !*e->name)
        return exp_fail(err, ctx, gline, "[experiment] needs a name");
    for (const char *p = e->name; *p; p++)
        if (!g_ascii_isalnum(*p) && *p != '-' && *p != '_' && *p != '.') {
            char *q = strata_quote(e->name);
            exp_fail(err, ctx, exp_line_of(ctx, "experiment", "name"),
                     "expected a name of letters, digits, '-', '_' or '.', got '%s'", q);
            g_free(q);
            return false;
        }
    e->title = exp_value(ctx, "experiment", "title");
    if (!e->title)
        e->title = g_strdup(e->name);
    e->description = exp_value(ctx, "experiment", "description");
    if (!e->description)
        e->description = g_strdup("");

    char *runner = exp_value(ctx, "experiment", "runner");
    e->runner = STRATA_RUNNER_RUN;
    bool ok = true;
    if (runner && strcmp(runner, "alloc") == 0) {
        e->runner = STRATA_RUNNER_ALLOC;
    } else if (runner && strcmp(runner, "run") != 0) {
        char *q = strata_quote(runner);
        ok = exp_fail(err, ctx, exp_line_of(ctx, "experiment", "runner"),
                      "unknown runner '%s'; known runners: run, alloc", q);
        g_free(q);
    }
    g_free(runner);
    return ok;
}

static bool load_hardware(strata_experiment *e, load_ctx *ctx, GError **err)
{
    char *hw = exp_value(ctx, "experiment", "hardware");
    guint hwline = exp_line_of(ctx, "experiment", "hardware");
    if (hw && e->runner == STRATA_RUNNER_ALLOC) {
        g_free(hw);
        return exp_fail(err, ctx, hwline, "hardware is not used by runner = alloc (it replays one memory)");
    }
    if (!hw)
        return true;
    e->hardware = exp_resolve_path(e, hw);
    g_free(hw);
    return file_exists_or_fail(e->hardware, ctx, hwline, "hardware file", err) &&
           exp_check_hw(e->hardware, NULL, ctx, hwline, err);
}

/* "matmul bm=256 dtype=f32": the generator's name and KEY=VALUE words. */
static bool load_workload(strata_experiment *e, const char *workload, load_ctx *ctx, GError **err)
{
    guint wline = exp_line_of(ctx, "experiment", "workload");
    char **words = g_strsplit_set(workload, " \t", -1);
    bool ok = true;
    for (guint i = 0; ok && words[i]; i++) {
        if (!*words[i])
            continue;
        if (!e->workload) {
            e->workload = g_strdup(words[i]);
        } else if (!strchr(words[i], '=') || words[i][0] == '=') {
            char *q = strata_quote(words[i]);
            ok = exp_fail(err, ctx, wline, "expected workload parameters as KEY=VALUE, got '%s'", q);
            g_free(q);
        } else {
            g_ptr_array_add(e->workload_args, g_strdup(words[i]));
        }
    }
    g_strfreev(words);
    if (ok && !e->workload)
        ok = exp_fail(err, ctx, wline, "expected a workload name such as matmul");
    if (ok && !strata_workload_type_find(e->workload)) {
        char *known = strata_workload_type_names();
        char *q = strata_quote(e->workload);
        ok = exp_fail(err, ctx, wline, "unknown workload '%s'; known workloads: %s", q, known);
        g_free(q);
        g_free(known);
    }
    if (ok) {
        char **args = exp_workload_args_with(e, NULL, NULL);
        ok = exp_check_workload(e, args, ctx, wline, err);
        g_strfreev(args);
    }
    return ok;
}

/* The trace: exactly one of trace, workload or snapshot. */
static bool load_source(strata_experiment *e, load_ctx *ctx, GError **err)
{
    char *trace = exp_value(ctx, "experiment", "trace");
    char *workload = exp_value(ctx, "experiment", "workload");
    char *snapshot = exp_value(ctx, "experiment", "snapshot");
    int n_sources = !!trace + !!workload + !!snapshot;
    bool ok = true;
    if (n_sources != 1) {
        ok = exp_fail(err, ctx, exp_line_of(ctx, "experiment", NULL),
                      "[experiment] needs exactly one of trace, workload or snapshot (got %d)", n_sources);
    } else if (trace) {
        e->trace = exp_resolve_path(e, trace);
        ok = file_exists_or_fail(e->trace, ctx, exp_line_of(ctx, "experiment", "trace"), "trace", err);
    } else if (snapshot) {
        e->snapshot = exp_resolve_path(e, snapshot);
        ok = file_exists_or_fail(e->snapshot, ctx, exp_line_of(ctx, "experiment", "snapshot"), "snapshot", err);
    } else {
        ok = load_workload(e, workload, ctx, err);
    }
    g_free(trace);
    g_free(workload);
    g_free(snapshot);
    return ok;
}

/* [experiment] policies: a set joined by '+' (or none), as a policy axis's
 * value. It was split at commas and blanks too, which cut a policy's own
 * KEY=VALUE list: "prefetch:distance=2,sched=xla" was refused as
 * "unknown policy 'sched'". A policy twice in the set is refused. */
static bool load_policies(strata_experiment *e, load_ctx *ctx, GError **err)
{
    char *policies = exp_value(ctx, "experiment", "policies");
    if (!policies)
        return true;
    guint pline = exp_line_of(ctx, "experiment", "policies");
    bool ok = exp_parse_policy_set(g_strstrip(policies), e->policies, ctx, pline, err);
    g_free(policies);
    return ok;
}

/* allocator, and capacity, memory and alignment (runner = alloc only). */
static bool load_allocator(strata_experiment *e, load_ctx *ctx, GError **err)
{
    e->allocator = exp_value(ctx, "experiment", "allocator");
    if (e->allocator && !exp_check_allocator(e->allocator, ctx, exp_line_of(ctx, "experiment", "allocator"), err))
        return false;
    e->capacity = exp_value(ctx, "experiment", "capacity");
    e->memory = exp_value(ctx, "experiment", "memory");
    e->alignment = exp_value(ctx, "experiment", "alignment");
    const char *alloc_only[] = {"capacity", "memory", "alignment"};
    char *alloc_vals[] = {e->capacity, e->memory, e->alignment};
    for (guint i = 0; i < 3; i++) {
        if (!alloc_vals[i])
            continue;
        guint line = exp_line_of(ctx, "experiment", alloc_only[i]);
        if (e->runner != STRATA_RUNNER_ALLOC)
            return exp_fail(err, ctx, line,
                            "%s is for runner = alloc; with runner = run set memory.NAME.%s in [sweep]",
                            alloc_only[i], alloc_only[i]);
        uint64_t bytes;
        GError *inner = NULL;
        if (i != 1 && !strata_parse_size(alloc_vals[i], &bytes, &inner))
            return exp_fail_from(err, ctx, line, "expected a size", inner);
    }
    return true;
}

static bool load_experiment_group(strata_experiment *e, load_ctx *ctx, GError **err)
{
    return load_names(e, ctx, err) && load_hardware(e, ctx, err) && load_source(e, ctx, err) &&
           load_policies(e, ctx, err) && load_allocator(e, ctx, err);
}

/* [output] figures: result keys, each once ("makespan_s, makespan_s" made
 * the table two columns of one figure, at exit 0). */
static bool load_figures(strata_experiment *e, load_ctx *ctx, GError **err)
{
    char *figures = exp_value(ctx, "output", "figures");
    if (figures) {
        guint line = exp_line_of(ctx, "output", "figures");
        GPtrArray *items = exp_split_list(figures, ctx, line, err);
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
            for (guint j = 0; good && j < i; j++)
                if (strcmp(g_ptr_array_index(items, j), f) == 0) {
                    exp_fail(err, ctx, line, "figure '%s' appears twice in figures: the table would hold two "
                             "columns of one figure; give each once", f);
                    g_ptr_array_unref(items);
                    return false;
                }
            if (!good) {
                exp_fail(err, ctx, line, "expected a result key such as makespan_s or memories.hbm.peak_allocated_bytes, got '%s'",
                     f);
                g_ptr_array_unref(items);
                return false;
            }
        }
        g_ptr_array_add(items, NULL);
        e->figures = g_strdupv((char **)items->pdata);
        e->figures_where = g_strdup_printf("%s:%u", ctx->origin, line);
        g_ptr_array_unref(items);
    } else if (e->runner == STRATA_RUNNER_RUN) {
        const char *def[] = {"status", "makespan_s", NULL};
        e->figures = g_strdupv((char **)def);
    } else {
        const char *def[] = {"status", "peak_allocated_bytes", "peak_reserved_bytes", "fragmentation_peak", NULL};
        e->figures = g_strdupv((char **)def);
    }
    return true;
}

/* The plots that draw from each point's timeline. */
static bool plots_need_timeline(const strata_experiment *e)
{
    return g_hash_table_contains(e->plots, "memory") || g_hash_table_contains(e->plots, "address-map") ||
           g_hash_table_contains(e->plots, "links");
}

/* The plot that word p names a second time in a list being read (e->plots
 * holds the plots so far, and "all" once named), or NULL. */
static const char *plot_twice(const strata_experiment *e, const char *p)
{
    if (strcmp(p, "all") != 0)
        return g_hash_table_contains(e->plots, p) ? p : NULL;
    if (g_hash_table_contains(e->plots, "all"))
        return "all";
    for (guint j = 0; plot_names[j]; j++)
        if (g_hash_table_contains(e->plots, plot_names[j]))
            return plot_names[j];
    return NULL;
}

static bool load_output_group(strata_experiment *e, load_ctx *ctx, GError **err)
{
    if (!load_figures(e, ctx, err))
        return false;
    char *plots = exp_value(ctx, "output", "plots");
    guint pline = exp_line_of(ctx, "output", "plots");
    if (!plots)
        plots = g_strdup(e->runner == STRATA_RUNNER_RUN ? "all" : "axes");
    char **items = g_strsplit_set(plots, ", \t", -1);
    bool ok = true;
    guint named = 0; /* words that name plots, "none" and "all" included */
    bool none = false;
    for (guint i = 0; items[i] && ok; i++) {
        const char *p = items[i];
        named += *p != '\0';
        none = none || strcmp(p, "none") == 0;
        if (none && named > 1) { /* "none, all" drew every plot, at exit 0 */
            char *q = strata_quote(plots);
            ok = exp_fail(err, ctx, pline, "expected none alone (no plot) or plots without none, got '%s'", q);
            g_free(q);
        }
        if (!*p || none)
            continue;
        const char *twice = plot_twice(e, p); /* "memory, memory" was taken as one plot, at exit 0 */
        if (twice) {
            char *q = strata_quote(plots);
            ok = exp_fail(err, ctx, pline, "plot '%s' appears twice in plots = %s%s: expected each plot once", twice,
                          q, strcmp(p, "all") == 0 || g_hash_table_contains(e->plots, "all") ? " (all names every "
                          "plot)" : "");
            g_free(q);
            continue;
        }
        if (strcmp(p, "all") == 0) {
            g_hash_table_add(e->plots, g_strdup("all")); /* removed once the list is read */
            for (guint j = 0; plot_names[j]; j++)
                if (e->runner == STRATA_RUNNER_RUN || strcmp(plot_names[j], "axes") == 0)
                    g_hash_table_add(e->plots, g_strdup(plot_names[j]));
            continue;
        }
        if (!g_strv_contains(plot_names, p)) {
            char *known = g_strjoinv(", ", (char **)plot_names);
            ok = exp_fail(err, ctx, pline, "unknown plot '%s'; known plots: %s, all, none", p, known);
            g_free(known);
        } else if (strcmp(p, "axes") != 0 && e->runner != STRATA_RUNNER_RUN) {
            ok = exp_fail(err, ctx, pline, "plot '%s' needs a timeline, which only runner = run records", p);
        } else {
            g_hash_table_add(e->plots, g_strdup(p));
        }
    }
    g_strfreev(items);
    g_free(plots);
    g_hash_table_remove(e->plots, "all");
    if (!ok)
        return false;
    GString *text = g_string_new(NULL);
    for (guint j = 0; plot_names[j]; j++)
        if (g_hash_table_contains(e->plots, plot_names[j]))
            g_string_append_printf(text, "%s%s", text->len ? "," : "", plot_names[j]);
    e->plots_text = g_string_free(text, FALSE);

    e->timeline = plots_need_timeline(e);
    e->report = true;
    const char *bool_keys[] = {"timeline", "report"};
    bool *bool_dst[] = {&e->timeline, &e->report};
    for (guint i = 0; i < 2; i++) {
        char *v = exp_value(ctx, "output", bool_keys[i]);
        if (!v)
            continue;
        guint line = exp_line_of(ctx, "output", bool_keys[i]);
        bool good = strata_parse_bool(v, bool_dst[i]);
        g_free(v);
        if (!good)
            return exp_fail(err, ctx, line, "expected true or false for %s", bool_keys[i]);
        if (i == 0 && e->timeline && e->runner != STRATA_RUNNER_RUN)
            return exp_fail(err, ctx, line, "timeline needs runner = run");
        if (i == 0 && !e->timeline && plots_need_timeline(e)) /* the plots were silently not drawn, exit 0 */
            return exp_fail(err, ctx, line, "timeline = false: the plots memory, address-map and links draw "
                            "from each point's timeline, and plots = %s names one; expected timeline = true, or "
                            "plots without them (such as plots = axes)", e->plots_text);
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
        return exp_fail(err, ctx, exp_line_of(ctx, "experiment", NULL),
                    "runner = run needs hardware in [experiment] (or a hardware axis)");
    if (e->runner == STRATA_RUNNER_ALLOC && !e->allocator && !has_alloc_axis)
        return exp_fail(err, ctx, exp_line_of(ctx, "experiment", NULL),
                    "runner = alloc needs allocator in [experiment] (or an allocator axis)");
    return true;
}

/* Loads the groups of k (taken) into a new experiment; NULL with err. */
static strata_experiment *experiment_from_keyfile(strata_keyfile *k, const char *origin, GError **err)
{
    if (!k)
        return NULL;
    strata_experiment *e = g_new0(strata_experiment, 1);
    e->origin = g_canonicalize_filename(origin, NULL);
    e->dir = g_path_get_dirname(e->origin);
    e->workload_args = g_ptr_array_new_with_free_func(g_free);
    e->policies = g_ptr_array_new_with_free_func(g_free);
    e->axes = g_ptr_array_new_with_free_func(exp_axis_free);
    e->plots = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

    load_ctx ctx = {.origin = origin, .k = k};
    bool ok = check_groups(&ctx, err);
    ok = ok && load_experiment_group(e, &ctx, err);
    ok = ok && exp_load_axes(e, &ctx, err);
    ok = ok && check_runner_needs(e, &ctx, err);
    ok = ok && load_output_group(e, &ctx, err);
    strata_keyfile_free(k);
    if (!ok) {
        strata_experiment_free(e);
        return NULL;
    }
    return e;
}

strata_experiment *strata_experiment_load_data(const char *data, const char *origin, GError **err)
{
    strata_keyfile *k =
        strata_keyfile_load_data(data, origin, "experiment", STRATA_KEYFILE_INLINE_COMMENTS, err);
    return experiment_from_keyfile(k, origin, err);
}

strata_experiment *strata_experiment_load(const char *path, GError **err)
{
    strata_keyfile *k =
        strata_keyfile_load(path, "the experiment", "experiment", STRATA_KEYFILE_INLINE_COMMENTS, err);
    return experiment_from_keyfile(k, path, err);
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
    g_free(e->figures_where);
    g_free(e->plots_text);
    g_hash_table_unref(e->plots);
    g_free(e);
}

/* ---- accessors ---------------------------------------------------------- */

const char *strata_experiment_name(const strata_experiment *e) { return e->name; }
const char *strata_experiment_title(const strata_experiment *e) { return e->title; }
const char *strata_experiment_description(const strata_experiment *e) { return e->description; }
const char *strata_experiment_origin(const strata_experiment *e) { return e->origin; }

char **strata_experiment_inputs(const strata_experiment *e)
{
    GPtrArray *in = g_ptr_array_new();
    const char *fixed[] = {e->origin, e->hardware, e->trace, e->snapshot};
    for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++)
        if (fixed[i])
            g_ptr_array_add(in, g_strdup(fixed[i]));
    for (guint i = 0; i < e->axes->len; i++) {
        const axis *a = g_ptr_array_index(e->axes, i);
        GPtrArray *members = a->members ? a->members : NULL;
        for (guint m = 0; m < (members ? members->len : 1); m++) {
            const axis *one = members ? g_ptr_array_index(members, m) : a;
            for (guint v = 0; one->kind == AXIS_HARDWARE && v < one->values->len; v++)
                g_ptr_array_add(in, exp_resolve_path(e, g_ptr_array_index(one->values, v)));
        }
    }
    g_ptr_array_add(in, NULL);
    return (char **)g_ptr_array_free(in, FALSE);
}
strata_runner_kind strata_experiment_runner(const strata_experiment *e) { return e->runner; }
guint strata_experiment_axis_count(const strata_experiment *e) { return e->axes->len; }

const axis *exp_axis_at(const strata_experiment *e, guint i)
{
    g_return_val_if_fail(i < e->axes->len, NULL);
    return g_ptr_array_index(e->axes, i);
}

const char *strata_experiment_axis_name(const strata_experiment *e, guint i) { return exp_axis_at(e, i)->name; }
guint strata_experiment_axis_size(const strata_experiment *e, guint i) { return exp_axis_at(e, i)->values->len; }

const char *strata_experiment_axis_value(const strata_experiment *e, guint i, guint v)
{
    const axis *a = exp_axis_at(e, i);
    g_return_val_if_fail(v < a->values->len, NULL);
    return g_ptr_array_index(a->values, v);
}

strata_axis_unit strata_experiment_axis_unit(const strata_experiment *e, guint i) { return exp_axis_at(e, i)->unit; }

bool strata_experiment_axis_number(const strata_experiment *e, guint i, guint v, double *out)
{
    const axis *a = exp_axis_at(e, i);
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
        point /= exp_axis_at(e, j)->values->len;
    return (guint)(point % exp_axis_at(e, i)->values->len);
}

const char *const *strata_experiment_figures(const strata_experiment *e) { return (const char *const *)e->figures; }
const char *strata_experiment_figures_where(const strata_experiment *e) { return e->figures_where; }
const char *strata_experiment_plots_text(const strata_experiment *e) { return e->plots_text; }
bool strata_experiment_timeline(const strata_experiment *e) { return e->timeline; }
bool strata_experiment_report(const strata_experiment *e) { return e->report; }

