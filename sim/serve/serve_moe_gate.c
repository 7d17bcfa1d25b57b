/*
 * serve_moe_gate.c: the routing kernels of an MoE layer beyond the one fused top-k kernel (serve_moe_gate.h, with
 * its sources).
 */
#include "serve/serve_moe_gate.h"
#include <stdbool.h>
#include "core/error.h"
#include "serve/serve_names.h"

/* Which routers a row runs as more than one fused kernel. */
typedef bool (*gate_unfused_fn)(const strata_serve_model *m);

struct strata_serve_moe_gate {
    const char *name;
    gate_unfused_fn unfused;
    const char *what;
};

enum {
    FUSED_GATE_MAX_PER_GROUP = 32, /* topk.py l. 811: moe_fused_gate's MAX_VPT */
    KIMI_K2_EXPERTS = 384,         /* topk.py l. 855 */
};

static bool power_of_two(uint32_t n) { return n && !(n & (n - 1)); }

/* SGLang 0.5.6's biased_grouped_topk_gpu (topk.py l. 808-877): the torch.compile'd path where neither fused gate
 * applies. */
static bool sglang_05_unfused(const strata_serve_model *m)
{
    uint32_t g = m->router_groups;
    if (!g || !m->experts)
        return false;
    bool fused_gate = m->experts / g <= FUSED_GATE_MAX_PER_GROUP && power_of_two(m->experts);
    bool kimi = m->experts == KIMI_K2_EXPERTS && g == 1;
    return !fused_gate && !kimi;
}

static const strata_serve_moe_gate rows[] = {
    {"sglang-0.5", sglang_05_unfused,
     "SGLang 0.5.6: a biased router with no fused gate for its shape runs biased_grouped_topk_impl under "
     "torch.compile (three ATen topk calls, Triton kernels between)"},
    {NULL, NULL, NULL},
};

const strata_serve_moe_gate *strata_serve_moe_gate_find(const char *name, GError **err)
{
    if (!name)
        return NULL;
    return serve_names_lookup(SERVE_NAMES(rows, strata_serve_moe_gate), name, STRATA_ERROR_INTERNAL, err,
                              "unknown MoE gate row '%s' (known: %s)");
}

/* Passes 2-12 of serve_moe_gate.h's list (pass 1, the logits' read, is the caller's routing pass). Bytes: fp32
 * scores (4 B), ATen topk's fp32 values and int64 indices (12 B an entry), the final int32 ids. */
double strata_serve_moe_gate_extra_s(const strata_serve_moe_gate *g, const strata_serve_model *m, uint64_t t,
                                     strata_serve_pass_fn pass, const void *ctx)
{
    if (!g || !t || !g->unfused(m))
        return 0;
    bool shared = m->shared_experts > 0; /* fused into the routed experts: one more id, a sorted top-k */
    double n = (double)t, e = (double)m->experts, grp = (double)m->router_groups;
    uint64_t k = m->top_k + (shared ? m->shared_experts : 0), te = t * m->experts, tg = t * m->router_groups;
    double kk = (double)k;
    double s = pass(ctx, te, n * e * 4.0 + n * grp * 2.0 * 12.0) +  /* 2: topk(2) of each group, gather */
               pass(ctx, tg * 2, 2.0 * n * grp * 2.0 * 12.0) +      /* 3: its sort */
               pass(ctx, tg, n * grp * (2.0 * 4.0 + 4.0)) +         /* 4: the group scores */
               pass(ctx, tg, n * grp * (4.0 + 12.0)) +              /* 5: topk of the groups, unsorted */
               pass(ctx, tg, n * grp * 4.0) +                       /* 6: zeros_like */
               pass(ctx, tg, n * grp * (8.0 + 4.0)) +               /* 7: scatter_ */
               pass(ctx, te, n * e * 8.0 + n * grp * 4.0) +         /* 8: masked_fill */
               pass(ctx, te, n * e * 4.0 + n * kk * 12.0) +         /* 9: topk(k), gather */
               pass(ctx, t * k, n * kk * (12.0 + 4.0 + 8.0));       /* 12: weights, ids, renormalization */
    if (shared)
        s += pass(ctx, t * k, 2.0 * n * kk * 12.0) + pass(ctx, 1, 8.0); /* 10: the sort; 11: randint's seeds */
    return s;
}
