/*
 * serve_qk_norm.c: a GQA layer's q and k norms in a serving step
 * (serve_qk_norm.h, which gives their sources).
 */
#include "serve/serve_qk_norm.h"

#include <string.h>

/* The config.json model types whose q and k norms span the whole
 * projection: MiniMax-M2 (and M2.5, the same minimax_m2 architecture),
 * qk_norm_type "per_layer" (sglang/srt/models/minimax_m2.py l. 409-419). */
static const char *const whole_families[] = {"minimax_m2", NULL};

bool strata_serve_qk_norm_whole_family(const char *model_type)
{
    for (size_t i = 0; model_type && whole_families[i]; i++)
        if (strcmp(model_type, whole_families[i]) == 0)
            return true;
    return false;
}

/* One MiniMaxM2RMSNormTP over a shard of `cols` columns of t rows: the
 * .contiguous() copy (more than one row), then at tp > 1 the mean square,
 * its all-reduce of t FP32 values and the scaling; at tp 1 one kernel. */
static double whole_norm(const strata_serve_qk_norm_in *in, uint64_t cols, strata_serve_pass_fn pass,
                         strata_serve_allreduce_fn ar, const void *ctx)
{
    uint64_t t = in->tokens, n = t * cols;
    double shard = (double)n * in->act_bytes, sums = 4.0 * (double)t;
    double copy = t > 1 ? pass(ctx, n, 2.0 * shard) : 0;
    if (in->tp < 2)
        return copy + pass(ctx, n, 2.0 * shard);
    return copy + pass(ctx, n, shard + sums) + ar(ctx, t, (uint64_t)sums) + pass(ctx, n, 2.0 * shard + sums);
}

double strata_serve_qk_norm_time(const strata_serve_qk_norm_in *in, strata_serve_pass_fn pass,
                                 strata_serve_allreduce_fn ar, const void *ctx)
{
    uint64_t n = in->tokens * (in->q_cols + in->k_cols);
    if (!n)
        return 0;
    if (!in->whole)
        return pass(ctx, n, 2.0 * (double)n * in->act_bytes);
    return whole_norm(in, in->q_cols, pass, ar, ctx) + whole_norm(in, in->k_cols, pass, ar, ctx);
}
