/*
 * transformer_axes.c: the expert and context axes of `gen transformer`
 * (transformer.h): their parameters and checks, the rows every MoE layer
 * routes (moe_load.h) and, under an imbalance, each device's rows.
 *
 * Outside the experts both axes split the tokens as data does: the batch
 * over data x expert (MaxText: "for attention operations the EP dimension
 * acts like FSDP", sharding.md:331; Megatron folds EP onto the DP x CP
 * ranks, MoE Parallel Folding, arXiv 2504.14960), the sequence over
 * context. The experts are split E/ep per device over `expert`, over
 * `model` as the dense MLP is (Megatron's expert tensor parallelism at its
 * default, etp = tp, arguments.py:587) and replicated over data (the
 * expert-data-parallel group, edp = data x context) where their gradients
 * are reduced (shard.h: wl_shard_expert).
 *
 * Invariants: z->EP = plan->e and z->CP = plan->c; z->S is the device's
 * S/CP positions; z->moe is set whenever the layer routes over an expert
 * axis, with a capacity factor or with an imbalance; z->vary only when the
 * expert groups' rows differ, and then the graph's wl_graph_vary holds
 * each device's rows (its expert group's).
 */
#include "workload/transformer.h"
#include <string.h>
#include "core/error.h"
#include "core/mesh.h"
#include "workload/moe_load.h"
#include "workload/shard.h"

#define CP_MAX 64

#define FAIL(...) (g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, __VA_ARGS__), false)

bool tf_axes_check(const strata_params *p, const strata_model_shape *s, const wl_shard_plan *plan, GError **err)
{
    bool flash = strata_params_is_set(p, "attention") && g_str_equal(strata_params_string(p, "attention"), "flash");
    uint64_t batch = (uint64_t)strata_params_int(p, "batch");
    bool cf = strata_params_is_set(p, "capacity_factor"), imb = strata_params_is_set(p, "imbalance");
    if (cf && !(strata_params_double(p, "capacity_factor") > 0))
        return FAIL("transformer: expected capacity_factor > 0 (unset: dropless), got %g",
                    strata_params_double(p, "capacity_factor"));
    if ((cf || imb) && s->experts == 0)
        return FAIL("transformer: capacity_factor and imbalance need MoE layers (experts=, top_k=)");
    if (plan->e > 1 && batch % (plan->n * plan->e) != 0)
        return FAIL("transformer: expected batch divisible by the data and expert axes (%" G_GUINT64_FORMAT
                    " x %" G_GUINT64_FORMAT "): the expert axis splits the batch outside the experts, got batch=%"
                    G_GUINT64_FORMAT, plan->n, plan->e, batch);
    if (plan->p > 1 && plan->c > 1)
        return FAIL("transformer: a pipe axis with a context axis is not modelled (pipeline.c's stages run no ring "
                    "over context), got mesh=%s", plan->mesh);
    if (plan->p > 1 && (cf || imb))
        return FAIL("transformer: capacity_factor and imbalance are not modelled with a pipe axis (its MoE layers "
                    "route evenly, dropless)");
    if (plan->p > 1 && plan->e > 1 && plan->data == WL_DATA_FSDP)
        return FAIL("transformer: a pipe axis with an expert axis takes data (dp), not fsdp, got mesh=%s",
                    plan->mesh);
    if (plan->p > 1 && plan->e > 1 && batch % (plan->n * plan->e * plan->m) != 0)
        return FAIL("transformer: expected batch divisible by data x expert x microbatches (%" G_GUINT64_FORMAT
                    "): each replica's batch splits into microbatches, got batch=%" G_GUINT64_FORMAT,
                    plan->n * plan->e * plan->m, batch);
    uint64_t ways = plan->n * plan->e * plan->c;
    if (plan->data == WL_DATA_FSDP && ways > plan->n && strata_params_int(p, "d_model") % (int64_t)ways != 0)
        return FAIL("transformer: expected d_model divisible by data x expert x context (%" G_GUINT64_FORMAT
                    "): with fsdp the parameters outside the experts are sharded over all three",
                    ways);
    if (plan->c > 1 && (!flash || s->kv_lora_rank > 0 || plan->c > CP_MAX))
        return FAIL("transformer: a context axis (ring attention) needs attention=flash, no MLA (kv_lora_rank) and "
                    "context <= %d, got context=%" G_GUINT64_FORMAT, CP_MAX, plan->c);
    if (plan->c > 1 && ((uint64_t)strata_params_int(p, "seq") / plan->c) % 2 != 0)
        return FAIL("transformer: expected seq divisible by 2 x context (%" G_GUINT64_FORMAT "), got seq=%" G_GINT64_FORMAT,
                    2 * plan->c, strata_params_int(p, "seq"));
    if (imb) {
        wl_moe_load *l = wl_moe_load_new(strata_params_string(p, "imbalance"), (uint64_t)s->experts, err);
        if (!l)
            return false;
        wl_moe_load_free(l);
    }
    return true;
}

/* Each device's rows: its expert group's (its rank on the expert axis). */
static void set_vary(wl_graph *g, const wl_shard_plan *plan, const wl_moe_rows *r)
{
    strata_mesh *m = strata_mesh_parse(plan->mesh, NULL);
    g_assert(m); /* the plan parsed it */
    uint32_t mask = 0, n = strata_mesh_devices(m);
    g_assert(strata_mesh_axes(m, TF_EXPERT_AXIS, &mask, NULL));
    uint64_t *rows = g_new(uint64_t, n);
    for (uint32_t d = 0; d < n; d++)
        rows[d] = r->group_rows[strata_mesh_rank(m, mask, d)];
    wl_graph_vary(g, n, rows);
    g_free(rows);
    strata_mesh_free(m);
}

bool tf_axes_setup(const strata_params *p, const wl_shard_plan *plan, tf_dims *z, wl_graph *g, wl_moe_rows *rows,
                   GError **err)
{
    const strata_model_shape *s = z->s;
    z->EP = plan->e;
    z->CP = plan->c;
    z->B /= plan->e;
    z->S /= plan->c;
    memset(rows, 0, sizeof *rows);
    bool cf = strata_params_is_set(p, "capacity_factor"), imb = strata_params_is_set(p, "imbalance");
    if (s->experts == 0 || (plan->e == 1 && !cf && !imb))
        return true;
    wl_moe_load *l = wl_moe_load_new(imb ? strata_params_string(p, "imbalance") : "uniform", (uint64_t)s->experts, err);
    if (!l)
        return false;
    wl_moe_rows_plan(l, z->B * z->S * (uint64_t)s->top_k, plan->e, cf ? strata_params_double(p, "capacity_factor") : 0,
                     rows);
    wl_moe_load_free(l);
    z->moe = rows;
    for (uint64_t grp = 0; grp < plan->e; grp++)
        z->vary |= rows->group_rows[grp] != rows->max_rows;
    if (z->vary)
        set_vary(g, plan, rows);
    return true;
}

void tf_axes_experts(wl_graph *g, wl_shard *sh, const GArray *params)
{
    for (guint i = 0; i < params->len; i++) {
        wl_tensor t = g_array_index(params, wl_tensor, i);
        const char *name = strrchr(wl_graph_name(g, t), '_');
        if (name && (strcmp(name, "_we1") == 0 || strcmp(name, "_we2") == 0 || strcmp(name, "_we3") == 0))
            wl_shard_expert(sh, t);
    }
}
