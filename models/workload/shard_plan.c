/*
 * shard_plan.c: the plan of a sharded training step from `mesh=` and
 * `sharding=` (contract in shard.h): the mesh's axes by name, and the table
 * of the rules the frameworks put on products of axes.
 *
 * Axis names (the issue's, Megatron's and MaxText's): `data` (replicas, or
 * ZeRO-3 with sharding=fsdp), `fsdp` (ZeRO-3), `tensor` or `model`
 * (Megatron tensor parallelism), `pipe` or `stage` (pipeline stages),
 * `expert` (expert parallelism), `context` (context parallelism). The
 * old spelling `mesh=data:N,model:T` with an explicit `sharding=` works as
 * before; a mesh that names fsdp, tensor, pipe, expert or context may leave
 * sharding= at none and have it follow from the axes.
 *
 * The trace's `option mesh=` keeps the user's order (devices are numbered
 * row-major over it) with the axes renamed to the names the collectives
 * use: fsdp -> data, tensor -> model, stage -> pipe.
 *
 * Invariants: after a successful parse every size is >= 1, their product is
 * the mesh's device count, and every rule of `rules[]` holds.
 */
#include "workload/shard.h"
#include <string.h>
#include "core/error.h"
#include "core/mesh.h"

#define FAIL(...) (g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, __VA_ARGS__), false)

typedef enum { AX_DATA, AX_FSDP, AX_TENSOR, AX_PIPE, AX_EXPERT, AX_CONTEXT, AX__COUNT } axis_kind;

/* An axis name the mesh may use, what it is, and its name in the trace. */
typedef struct axis_name {
    const char *name;
    axis_kind kind;
    const char *trace_name;
    bool old; /* the spelling of `mesh=data:N,model:T` */
} axis_name;

static const axis_name axis_names[] = {
    {"data", AX_DATA, "data", true},          {"model", AX_TENSOR, "model", true},
    {"fsdp", AX_FSDP, "data", false},         {"tensor", AX_TENSOR, "model", false},
    {"pipe", AX_PIPE, "pipe", false},         {"stage", AX_PIPE, "pipe", false},
    {"expert", AX_EXPERT, "expert", false},   {"context", AX_CONTEXT, "context", false},
};

static const axis_name *axis_find(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(axis_names); i++)
        if (strcmp(axis_names[i].name, name) == 0)
            return &axis_names[i];
    return NULL;
}

/* The mesh's axes by kind (sizes; 0: absent), the renamed mesh into
 * plan->mesh, and whether it used the old spelling only. */
static bool parse_axes(const char *workload, const char *text, uint64_t size[AX__COUNT], wl_shard_plan *plan,
                       bool *old_only, GError **err)
{
    GError *e = NULL;
    strata_mesh *m = strata_mesh_parse(text, &e);
    if (!m) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: mesh=%s: %s", workload, text, e->message);
        g_error_free(e);
        return false;
    }
    GString *renamed = g_string_new(NULL);
    bool ok = true;
    *old_only = true;
    for (uint32_t a = 0; ok && a < strata_mesh_axis_count(m); a++) {
        const char *name = strata_mesh_axis_name(m, a);
        const axis_name *an = axis_find(name);
        uint32_t mask = 0;
        strata_mesh_axes(m, name, &mask, NULL);
        if (!an)
            ok = FAIL("%s: mesh=%s: unknown axis '%s': expected data, fsdp, tensor (or model), pipe (or stage), "
                      "expert or context",
                      workload, text, name);
        else if (size[an->kind])
            ok = FAIL("%s: mesh=%s: axis '%s' names the %s axis a second time", workload, text, name,
                      an->trace_name);
        else {
            size[an->kind] = strata_mesh_group_size(m, mask);
            *old_only = *old_only && an->old;
            g_string_append_printf(renamed, "%s%s:%" G_GUINT64_FORMAT, renamed->len ? "," : "", an->trace_name,
                                   size[an->kind]);
        }
    }
    if (ok && size[AX_DATA] && size[AX_FSDP])
        ok = FAIL("%s: mesh=%s: data and fsdp together (hybrid sharding) are not modelled; use one of them", workload,
                  text);
    if (ok && renamed->len >= sizeof plan->mesh)
        ok = FAIL("%s: mesh=%s: expected at most %zu characters once renamed", workload, text, sizeof plan->mesh - 1);
    if (ok)
        g_strlcpy(plan->mesh, renamed->str, sizeof plan->mesh);
    g_string_free(renamed, TRUE);
    strata_mesh_free(m);
    return ok;
}

/* The old spelling: sharding= says what data and model do (as before). */
static bool plan_old(const char *workload, const char *mesh, const char *sharding, uint64_t n, uint64_t t,
                     wl_shard_plan *plan, GError **err)
{
    if (strcmp(sharding, "none") == 0)
        return FAIL("%s: mesh=%s needs sharding=dp, fsdp, tp, tp+sp, fsdp+tp or fsdp+tp+sp", workload, mesh);
    bool tp = strstr(sharding, "tp") != NULL;
    plan->data = strncmp(sharding, "fsdp", 4) == 0 ? WL_DATA_FSDP : n ? WL_DATA_DP : WL_DATA_NONE;
    if (t && !tp)
        return FAIL("%s: sharding=%s does not use the mesh's model axis (mesh=%s); use tp, tp+sp, fsdp+tp or "
                    "fsdp+tp+sp",
                    workload, sharding, mesh);
    if (tp && !t)
        return FAIL("%s: sharding=%s needs a model axis in the mesh (e.g. mesh=data:4,model:2), got mesh=%s",
                    workload, sharding, mesh);
    if (!n && !g_str_has_prefix(sharding, "tp"))
        return FAIL("%s: sharding=%s needs a data axis in the mesh (e.g. mesh=data:8), got mesh=%s", workload,
                    sharding, mesh);
    return true;
}

/* The named axes: the data mode follows from data/fsdp; an explicit
 * sharding= must agree with them. */
static bool plan_named(const char *workload, const char *mesh, const char *sharding, const uint64_t size[AX__COUNT],
                       wl_shard_plan *plan, GError **err)
{
    plan->data = size[AX_FSDP] ? WL_DATA_FSDP : size[AX_DATA] ? WL_DATA_DP : WL_DATA_NONE;
    if (strcmp(sharding, "none") == 0)
        return true;
    bool fsdp = strncmp(sharding, "fsdp", 4) == 0, tp = strstr(sharding, "tp") != NULL;
    if (fsdp && size[AX_DATA] && !size[AX_FSDP])
        plan->data = WL_DATA_FSDP; /* sharding=fsdp over an axis named data, as before */
    else if (fsdp != (plan->data == WL_DATA_FSDP) || (strcmp(sharding, "dp") == 0 && !size[AX_DATA]))
        return FAIL("%s: sharding=%s does not match the axes of mesh=%s (a data axis is dp, an fsdp axis fsdp; "
                    "leave sharding= unset to follow the mesh)",
                    workload, sharding, mesh);
    if (tp != (size[AX_TENSOR] > 0))
        return FAIL("%s: sharding=%s %s a tensor axis, mesh=%s %s", workload, sharding, tp ? "needs" : "does not use",
                    mesh, tp ? "has none" : "has one");
    return true;
}

/* ---- the rules on products of axes ------------------------------------ */

/* What a rule reads: the plan and the step's sizes. */
typedef struct rule_ctx {
    const wl_shard_plan *plan;
    const wl_shard_sizes *z;
} rule_ctx;

/* A rule: whether it holds, and its text (the error names it). */
typedef struct shard_rule {
    const char *name;
    bool (*holds)(const rule_ctx *c);
    const char *text; /* what the frameworks require, and where */
} shard_rule;

static bool layers_divide(const rule_ctx *c)
{
    return c->z->layers % (c->plan->p * c->plan->v) == 0;
}
static bool interleave_stages(const rule_ctx *c) { return c->plan->v == 1 || c->plan->p > 2; }
static bool interleave_microbatches(const rule_ctx *c)
{
    return c->plan->v == 1 || c->plan->m % c->plan->p == 0;
}
static bool microbatches_divide(const rule_ctx *c)
{
    return c->z->batch % (c->plan->n * c->plan->m) == 0;
}
static bool pipe_has_schedule(const rule_ctx *c) { return c->plan->p > 1 || c->plan->m == 1; }
static bool sp_needs_tensor(const rule_ctx *c) { return !c->plan->seq || c->plan->t > 1; }
static bool experts_divide(const rule_ctx *c)
{
    return c->plan->e == 1 || (c->z->experts > 0 && c->z->experts % c->plan->e == 0);
}
static bool context_seq(const rule_ctx *c) { return c->z->seq % (2 * c->plan->c) == 0 || c->plan->c == 1; }

static const shard_rule rules[] = {
    {"interleave-stages", interleave_stages,
     "the interleaved schedule (virtual > 1) needs pipe > 2 (Megatron arguments.py)"},
    {"interleave-microbatches", interleave_microbatches,
     "the interleaved schedule needs microbatches a multiple of pipe (Megatron schedules.py)"},
    {"microbatches", microbatches_divide,
     "batch must divide by the data (or fsdp) axis times microbatches (each replica's batch splits into "
     "microbatches of equal size)"},
    {"microbatches-need-pipe", pipe_has_schedule,
     "microbatches > 1 needs a pipe axis (gradient accumulation without a pipeline is not modelled)"},
    {"layers-per-stage", layers_divide,
     "layers must divide into pipe x virtual stages of equal layer counts (Megatron transformer_block.py: "
     "num_layers % pipeline size, and layers per stage % virtual stages)"},
    {"sequence-parallel", sp_needs_tensor,
     "sequence parallelism (+sp) needs a tensor axis above 1 (Megatron turns it off at tp = 1)"},
    {"experts-divide", experts_divide,
     "the expert axis must divide the number of experts (Megatron arguments.py: num_experts % "
     "expert_model_parallel_size)"},
    {"context-seq", context_seq,
     "seq must divide by 2 x context (Megatron's load-balanced context parallelism cuts the sequence in "
     "2 x cp chunks)"},
};

bool wl_shard_plan_rules(const wl_shard_plan *plan, const wl_shard_sizes *z, const char *workload, GError **err)
{
    rule_ctx c = {plan, z};
    for (size_t i = 0; i < G_N_ELEMENTS(rules); i++)
        if (!rules[i].holds(&c))
            return FAIL("%s: mesh=%s (pipe %" G_GUINT64_FORMAT ", virtual %" G_GUINT64_FORMAT
                        ", microbatches %" G_GUINT64_FORMAT ", layers %" G_GUINT64_FORMAT ", batch %" G_GUINT64_FORMAT
                        "): rule %s: %s",
                        workload, *plan->mesh ? plan->mesh : "(none)", plan->p, plan->v, plan->m, z->layers, z->batch,
                        rules[i].name, rules[i].text);
    return true;
}

bool wl_shard_plan_parse(const strata_params *p, const char *workload, wl_shard_plan *plan, GError **err)
{
    memset(plan, 0, sizeof *plan);
    const char *mesh = strata_params_string(p, "mesh"), *sharding = strata_params_string(p, "sharding");
    plan->n = plan->t = plan->p = plan->e = plan->c = plan->v = plan->m = 1;
    plan->prefetch = (uint64_t)MAX(strata_params_int(p, "prefetch"), 0);
    if (strata_params_int(p, "prefetch") < 0)
        return FAIL("%s: expected prefetch >= 0, got %" G_GINT64_FORMAT, workload,
                    strata_params_int(p, "prefetch"));
    bool none = strcmp(sharding, "none") == 0;
    if (!*mesh)
        return none ? true
                    : FAIL("%s: sharding=%s needs a mesh (e.g. mesh=data:8 or mesh=data:4,model:2)", workload,
                           sharding);
    uint64_t size[AX__COUNT] = {0};
    bool old_only = true;
    if (!parse_axes(workload, mesh, size, plan, &old_only, err))
        return false;
    uint64_t n = size[AX_DATA] ? size[AX_DATA] : size[AX_FSDP];
    plan->seq = g_str_has_suffix(sharding, "+sp");
    if (!(old_only ? plan_old(workload, mesh, sharding, n, size[AX_TENSOR], plan, err)
                   : plan_named(workload, mesh, sharding, size, plan, err)))
        return false;
    plan->n = MAX(n, 1);
    plan->t = MAX(size[AX_TENSOR], 1);
    plan->p = MAX(size[AX_PIPE], 1);
    plan->e = MAX(size[AX_EXPERT], 1);
    plan->c = MAX(size[AX_CONTEXT], 1);
    return true;
}
