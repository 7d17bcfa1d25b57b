/*
 * experiment_internal.h: what the three parts of the experiment reader
 * share (experiment.c loads the groups, experiment_axes.c reads and checks
 * the [sweep] axes and the model references, experiment_plan.c turns a
 * point into commands). Not for use outside sim/sweep/experiment*.c.
 *
 * Errors: exp_fail() formats "FILE:LINE: MESSAGE" (STRATA_ERROR_INPUT) and
 * returns false, so checks read `return exp_fail(...)`.
 */
#ifndef STRATA_SWEEP_EXPERIMENT_INTERNAL_H
#define STRATA_SWEEP_EXPERIMENT_INTERNAL_H

#include "core/keyfile.h"
#include "sweep/experiment.h"

typedef enum {
    AXIS_HW_KEY,       /* memory.NAME.KEY, link.NAME.KEY, compute.NAME.KEY, interconnect.NAME.KEY, hardware.KEY */
    AXIS_WORKLOAD,     /* workload.PARAM */
    AXIS_POLICY_SET,   /* policy */
    AXIS_POLICY_NAMED, /* policy.NAME */
    AXIS_ALLOCATOR,    /* allocator (or memory.NAME.allocator with runner alloc) */
    AXIS_CAPACITY,     /* capacity (or memory.NAME.capacity with runner alloc) */
    AXIS_ALIGNMENT,    /* memory.NAME.alignment with runner alloc */
    AXIS_HARDWARE,     /* hardware: .ini files */
    AXIS_JOINT,        /* "A + B + ...": members varying together */
} axis_kind;

typedef struct axis {
    char *name;
    axis_kind kind;
    char *param;       /* workload param, policy name, or memory name (alloc) */
    GPtrArray *values; /* char *, as written */
    GArray *numbers;   /* double, when unit != TEXT */
    strata_axis_unit unit;
    guint line;
    GPtrArray *members; /* AXIS_JOINT: axis *, member j's values[i] is word j
                           of this axis's values[i]; else NULL */
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
    char *figures_where;      /* "FILE:LINE" of [output] figures; NULL: the runner's default figures */
    char *plots_text;
    GHashTable *plots;
    bool timeline, report;
};


typedef struct load_ctx {
    const char *origin;
    strata_keyfile *k;
} load_ctx;

/* ---- experiment.c ---- */
guint exp_line_of(const load_ctx *ctx, const char *group, const char *key);
bool exp_fail(GError **err, const load_ctx *ctx, guint line, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
/* Wraps a model's error (already a full message) with FILE:LINE; frees inner. */
bool exp_fail_from(GError **err, const load_ctx *ctx, guint line, const char *what, GError *inner);
char *exp_value(const load_ctx *ctx, const char *group, const char *key); /* NULL when absent */
char *exp_resolve_path(const strata_experiment *e, const char *path);     /* absolute */
const axis *exp_axis_at(const strata_experiment *e, guint i);

/* ---- experiment_axes.c ---- */
GPtrArray *exp_split_list(const char *text, const load_ctx *ctx, guint line, GError **err);
bool exp_check_policy(const char *spec, const load_ctx *ctx, guint line, GError **err);
/* "offload=param+prefetch=2" or "none": appends the specs to out (may be NULL). */
bool exp_parse_policy_set(const char *text, GPtrArray *out, const load_ctx *ctx, guint line, GError **err);
/* The --policy specs a policy axis's value adds to a point (appended to
 * out): a set's parts, or PARAM=VALUE for a named axis unless "off";
 * nothing for another kind of axis. The value was checked at load. */
void exp_axis_policies(const axis *a, const char *v, GPtrArray *out);
bool exp_check_allocator(const char *spec, const load_ctx *ctx, guint line, GError **err);
char **exp_hw_overrides(const char *name, const char *value);
bool exp_check_hw(const char *path, char *const *overrides, const load_ctx *ctx, guint line, GError **err);
/* args (NULL-terminated, may be NULL) with KEY=VALUE replacing any earlier
 * value of KEY (key NULL: a copy); g_strfreev. */
char **exp_args_with(char *const *args, const char *key, const char *value);
/* The experiment's workload arguments, with exp_args_with() applied. */
char **exp_workload_args_with(const strata_experiment *e, const char *key, const char *value);
bool exp_check_workload(const strata_experiment *e, char **args, const load_ctx *ctx, guint line, GError **err);
bool exp_load_axes(strata_experiment *e, load_ctx *ctx, GError **err);
void exp_axis_free(gpointer data);

#endif
