/*
 * experiment_plan.c: the commands of one point of an experiment
 * (strata_experiment_plan, see experiment.h). A point is a mixed-radix
 * number over the axes; each axis's value at the point is folded into a
 * point_setting, which then becomes the input and run command lines.
 */
#include <string.h>
#include "core/params.h"
#include "sweep/experiment_internal.h"

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

/* What one point runs: the experiment's settings with each axis's value at
 * the point folded in. The strings are borrowed, except where noted. */
typedef struct point_setting {
    const char *hardware, *allocator, *capacity, *memory, *alignment;
    char *hw_path;      /* owned: a hardware axis's file, absolute */
    GPtrArray *sets;    /* owned: --set overrides */
    GPtrArray *policies; /* owned: --policy specs */
    char **wargs;       /* owned: workload KEY=VALUE */
} point_setting;

static void fold_axis(const strata_experiment *e, const axis *a, guint index, point_setting *ps)
{
    const char *v = g_ptr_array_index(a->values, index);
    switch (a->kind) {
    case AXIS_JOINT:
        for (guint j = 0; j < a->members->len; j++)
            fold_axis(e, g_ptr_array_index(a->members, j), index, ps);
        break;
    case AXIS_HW_KEY: {
        char **ov = exp_hw_overrides(a->name, v);
        for (guint j = 0; ov[j]; j++)
            add(ps->sets, ov[j]);
        g_strfreev(ov);
        break;
    }
    case AXIS_WORKLOAD: {
        char **n = exp_args_with(ps->wargs, a->param, v);
        g_strfreev(ps->wargs);
        ps->wargs = n;
        break;
    }
    case AXIS_POLICY_SET:
    case AXIS_POLICY_NAMED: exp_axis_policies(a, v, ps->policies); break;
    case AXIS_ALLOCATOR: ps->allocator = v; break;
    case AXIS_CAPACITY: ps->capacity = v; break;
    case AXIS_ALIGNMENT: ps->alignment = v; break;
    case AXIS_HARDWARE:
        g_free(ps->hw_path);
        ps->hw_path = exp_resolve_path(e, v);
        ps->hardware = ps->hw_path;
        break;
    }
    if (a->param && (a->kind == AXIS_ALLOCATOR || a->kind == AXIS_CAPACITY || a->kind == AXIS_ALIGNMENT))
        ps->memory = a->param;
}

static void setting_init(const strata_experiment *e, uint64_t point, point_setting *ps)
{
    *ps = (point_setting){.hardware = e->hardware, .allocator = e->allocator, .capacity = e->capacity,
                          .memory = e->memory, .alignment = e->alignment};
    ps->sets = g_ptr_array_new_with_free_func(g_free);
    ps->policies = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < e->policies->len; i++)
        add(ps->policies, g_ptr_array_index(e->policies, i));
    ps->wargs = exp_workload_args_with(e, NULL, NULL);
    for (guint i = 0; i < e->axes->len; i++) {
        const axis *a = exp_axis_at(e, i);
        fold_axis(e, a, strata_experiment_point_value(e, point, i), ps);
    }
}

static void setting_clear(point_setting *ps)
{
    g_strfreev(ps->wargs);
    g_free(ps->hw_path);
    g_ptr_array_unref(ps->sets);
    g_ptr_array_unref(ps->policies);
}

/* The gen or import command writing the point's trace, or none for a file. */
static void plan_input(const strata_experiment *e, const point_setting *ps, const char *out_dir,
                       strata_point_plan *plan)
{
    if (e->trace) {
        plan->input_path = g_strdup(e->trace);
        return;
    }
    GPtrArray *in = g_ptr_array_new_with_free_func(g_free);
    if (e->workload) {
        add(in, "gen");
        add(in, e->workload);
        for (guint j = 0; ps->wargs[j]; j++)
            add(in, ps->wargs[j]);
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

/* Appends "OPTION VALUE" when value is set. */
static void add_opt(GPtrArray *argv, const char *option, const char *value)
{
    if (!value)
        return;
    add(argv, option);
    add(argv, value);
}

static char **run_command(const strata_experiment *e, const point_setting *ps, const char *input,
                          const char *json_path, const char *timeline_path)
{
    GPtrArray *run = g_ptr_array_new_with_free_func(g_free);
    if (e->runner == STRATA_RUNNER_RUN) {
        add(run, "run");
        add_opt(run, "--hw", ps->hardware);
        add_opt(run, "--trace", input);
        for (guint i = 0; i < ps->sets->len; i++)
            add_opt(run, "--set", g_ptr_array_index(ps->sets, i));
        add_opt(run, "--allocator", ps->allocator);
    } else {
        add(run, "alloc");
        add_opt(run, "--trace", input);
        add_opt(run, "--allocator", ps->allocator);
        add_opt(run, "--capacity", ps->capacity);
        add_opt(run, "--memory", ps->memory);
        add_opt(run, "--alignment", ps->alignment);
    }
    for (guint i = 0; i < ps->policies->len; i++)
        add_opt(run, "--policy", g_ptr_array_index(ps->policies, i));
    add_opt(run, "--json", json_path);
    if (e->runner == STRATA_RUNNER_RUN)
        add_opt(run, "--timeline", timeline_path);
    g_ptr_array_add(run, NULL);
    return (char **)g_ptr_array_free(run, FALSE);
}

strata_point_plan *strata_experiment_plan(const strata_experiment *e, uint64_t point, const char *out_dir,
                                          const char *json_path, const char *timeline_path)
{
    g_return_val_if_fail(point < e->n_points, NULL);
    strata_point_plan *plan = g_new0(strata_point_plan, 1);
    point_setting ps;
    setting_init(e, point, &ps);
    plan_input(e, &ps, out_dir, plan);
    plan->run_argv = run_command(e, &ps, plan->input_path, json_path, timeline_path);
    setting_clear(&ps);
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

