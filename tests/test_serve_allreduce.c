/*
 * test_serve_allreduce.c: the TP all-reduce implementations of serving
 * (sim/serve/serve_allreduce.h) against values derived by hand:
 * TensorRT-LLM's AUTO strategy on each side of its thresholds (workspace
 * bytes, the 128-token MIN_LATENCY and one-shot limits, two ranks), the
 * one-shot and two-shot kernels' times, and the trtllm engine's row
 * through the serving cost (the FP8 quantization its kernels fuse, run
 * apart after an NCCL fallback); vLLM's custom all-reduce (vllm-custom): its
 * 1-stage and 2-stage kernels by hand, its size and rank-count rules from
 * both sides, the staging copy outside a CUDA graph, and the vllm-v0 and
 * sglang-v0.3 rows through the serving cost; the collectives that join a
 * vocabulary split over TP ranks (the logits' all-gather, the embedding's
 * all-reduce) by hand; vLLM's ROCm builds' kernel (vllm-custom-rocm) on
 * MI300X's xGMI mesh, the peers' shares side by side (serve_links.h
 * ar_peers_per_link), and the vLLM rows taking it on RCCL hardware.
 */
#include <math.h>
#include <string.h>
#include "hw/coll_impl.h"
#include "serve/serve_allreduce.h"
#include "serve/serve_coll.h"
#include "serve/serve_links.h"
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
#include "testutil.h"

/* DGX H100's figures (configs/hw/dgx-h100.ini): kernel_launch 3 us, the
 * peer route's two NVLink hops of 0.5 us (1 us), 450 GB/s, HBM 3.35 TB/s
 * at stream efficiency 0.9 (3.015 TB/s). */
static strata_serve_ar_in dgx(uint32_t ranks, uint64_t tokens, uint64_t bytes)
{
    /* link_peers 0: every peer's data through the rank's one NVSwitch port (ranks - 1) */
    return (strata_serve_ar_in){ranks, tokens, bytes, 3e-6, 450e9, 1e-6, 3.35e12 * 0.9, false, 0};
}


/* configs/hw/dgx-h100.ini, loaded (the figures the tests below derive from). */
static strata_hw *dgx_h100(void)
{
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "dgx-h100.ini", NULL);
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    g_free(path);
    return hw;
}

/* Llama-3-70B in FP8, one layer. */
static strata_serve_model f8_70b_one_layer(void)
{
    strata_serve_model m;
    GError *err = NULL;
    ck_assert_msg(strata_serve_model_preset(&m, "llama-3-70b", &err), "%s", err ? err->message : "");
    m.dtype = STRATA_DTYPE_F8;
    m.layers = 1;
    return m;
}
/* One-shot of one Llama-3.1-405B token (16,384 bf16 = 32,768 B) over 8
 * ranks: SM stores at 450 x 4/5 = 360 GB/s;
 *   3 + 1 + 7 x 32,768 / 360e9 (0.637156 us) + 10 x 32,768 / 3.015e12
 *   (0.108683 us) = 4.745838 us.
 * Two-shot of 129 tokens of 8,192 bf16 (2,113,536 B) over 2 ranks:
 *   3 + 2 x 1 + 2 x 1/2 x 2,113,536 / 360e9 (5.870933 us)
 *   + 3 x 2,113,536 / 3.015e12 (2.103021 us) = 12.973954 us. */
START_TEST(kernels_by_hand)
{
    const strata_serve_allreduce *a = strata_serve_allreduce_find("trtllm-auto", NULL);
    ck_assert(a);
    strata_serve_ar_in in = dgx(8, 1, 32768);
    strata_serve_ar_plan p = strata_serve_allreduce_plan(a, &in);
    double want = 4e-6 + 7.0 * 32768 / 360e9 + 10.0 * 32768 / 3.015e12;
    ck_assert_int_eq(p.strategy, SERVE_AR_ONESHOT);
    ck_assert_msg(fabs(p.time_s - want) <= 1e-12 * want && fabs(want - 4.745838e-6) < 1e-12, "%.17g vs %.17g",
                  p.time_s, want);
    in = dgx(2, 129, 2113536);
    p = strata_serve_allreduce_plan(a, &in);
    want = 5e-6 + 2113536 / 360e9 + 3.0 * 2113536 / 3.015e12;
    ck_assert_int_eq(p.strategy, SERVE_AR_TWOSHOT);
    ck_assert_msg(fabs(p.time_s - want) <= 1e-12 * want && fabs(want - 12.973954e-6) < 1e-11, "%.17g vs %.17g",
                  p.time_s, want);
}
END_TEST

/* allreduceOp.cpp's AUTO selection, each threshold from both sides. */
START_TEST(strategy_on_each_side_of_the_thresholds)
{
    const strata_serve_allreduce *a = strata_serve_allreduce_find("trtllm-auto", NULL);
    struct {
        uint32_t ranks;
        uint64_t tokens, bytes;
        strata_serve_ar_strategy want;
    } rows[] = {
        {8, 128, 128 * 32768, SERVE_AR_ONESHOT}, /* 405B, 128 tokens: 4 MiB <= 8e6, MIN_LATENCY, one-shot */
        {8, 129, 129 * 32768, SERVE_AR_NCCL},    /* above 2 ranks, past 128 tokens: NCCL */
        {8, 64, 8000000, SERVE_AR_ONESHOT},      /* the workspace, 8e6 bytes above 2 ranks */
        {8, 64, 8000001, SERVE_AR_NCCL},
        {2, 128, 128 * 16384, SERVE_AR_ONESHOT}, /* 70B at TP2 (8,192 bf16 a token) */
        {2, 129, 129 * 16384, SERVE_AR_TWOSHOT}, /* <= 2 ranks: MIN_LATENCY, two-shot past 128 tokens */
        {2, 976, 976 * 16384, SERVE_AR_TWOSHOT}, /* 15,990,784 <= 16e6 */
        {2, 977, 977 * 16384, SERVE_AR_NCCL},    /* 16,007,168 > 16e6 */
        {1, 1, 16384, SERVE_AR_NCCL},            /* no peers */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        strata_serve_ar_in in = dgx(rows[i].ranks, rows[i].tokens, rows[i].bytes);
        strata_serve_ar_plan p = strata_serve_allreduce_plan(a, &in);
        ck_assert_msg(p.strategy == rows[i].want, "row %zu: %d, expected %d", i, p.strategy, rows[i].want);
        ck_assert(p.strategy == SERVE_AR_NCCL ? p.time_s == 0 : p.time_s > 0);
    }
    /* The nccl row (and none) leaves the all-reduce to NCCL. */
    strata_serve_ar_in in = dgx(8, 1, 32768);
    ck_assert_int_eq(strata_serve_allreduce_plan(strata_serve_allreduce_find("nccl", NULL), &in).strategy,
                     SERVE_AR_NCCL);
    ck_assert_int_eq(strata_serve_allreduce_plan(NULL, &in).strategy, SERVE_AR_NCCL);
    GError *err = NULL;
    ck_assert(!strata_serve_allreduce_find("ring", &err));
    ck_assert_msg(strstr(err->message, "'ring': expected one of nccl, trtllm-auto, vllm-custom"), "%s",
                  err->message);
    g_error_free(err);
}
END_TEST

static strata_serve_model f8_405b(void)
{
    strata_serve_model m;
    GError *err = NULL;
    ck_assert_msg(strata_serve_model_preset(&m, "llama-3-405b", &err), "%s", err ? err->message : "");
    m.dtype = STRATA_DTYPE_F8;
    return m;
}

/* Through the serving cost on DGX H100 at TP8 (405B, FP8): one decode
 * runs two one-shot all-reduces a layer under trtllm-auto (4.75 us each,
 * against NCCL's model's ~15 us at 32 KiB, docs/serving.md): the step is
 * faster; 129 decodes run NCCL's (past 128 tokens above 2 ranks), so the
 * step's all-reduces are the nccl row's, and the FP8 quantizations the
 * kernels had fused run apart (fallbackRunSubsequentOps), two a layer,
 * 129 x 16,384 read in bf16 and written in FP8 (6,340,608 B at 3.015
 * TB/s, 2.103021 us, and a 3 us launch): 126 x 2 x 5.103021 us =
 * 1,285.961 us more than the nccl row's step, which (no all-reduce
 * named) keeps them fused; the trtllm engine names the row; setting the
 * row again drops the cached step times. */
START_TEST(trtllm_engine_runs_it_in_the_step)
{
    GError *err = NULL;
    strata_hw *hw = dgx_h100();
    strata_serve_model m = f8_405b();
    strata_serve_cost *c = strata_serve_cost_new(hw, &m, 8, false, 256, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    strata_serve_chunk *d = g_new(strata_serve_chunk, 129);
    for (uint32_t i = 0; i < 129; i++)
        d[i] = (strata_serve_chunk){i, 1, 1024, true};
    double nccl1 = strata_serve_cost_step(c, d, 1), nccl129 = strata_serve_cost_step(c, d, 129);
    const strata_serve_engine *e = strata_serve_engine_find("trtllm", NULL);
    ck_assert(e && e->allreduce && !strcmp(e->allreduce, "trtllm-auto"));
    strata_serve_cost_set_allreduce(c, strata_serve_allreduce_find(e->allreduce, NULL));
    double auto1 = strata_serve_cost_step(c, d, 1), auto129 = strata_serve_cost_step(c, d, 129);
    ck_assert_msg(fabs(auto129 - nccl129 - 1285.9612656716e-6) < 1e-11, "%.17g vs %.17g", auto129, nccl129);
    ck_assert_msg(auto1 < nccl1, "%.17g vs %.17g", auto1, nccl1);
    /* Back to NCCL: the cached step times follow the row. */
    strata_serve_cost_set_allreduce(c, NULL);
    ck_assert(strata_serve_cost_step(c, d, 1) == nccl1);
    g_free(d);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* Llama-3-70B FP8 at TP2, one layer, on DGX H100: a step of 976 tokens
 * (15,990,784 B a rank, under the 16e6-byte workspace) runs the two-shot
 * kernel with the residual, RMSNorm and FP8 quantization in it: the
 * step's ops move the bytes they move with no all-reduce named (where the
 * fusion is taken as before); 977 tokens (16,007,168 B) fall back to
 * NCCL, whose fallbackRunSubsequentOps quantizes the norm's output in a
 * kernel of its own, before QKV and before gate_up: 2 x 977 x 8,192 x
 * (2 + 1) = 48,021,504 B more, each pass 24,010,752 B at 3.015 TB/s
 * (7.963765 us) after a 3 us launch: 21.927530 us more than the same step
 * with NCCL's row (the same NCCL all-reduces, the quantization fused). */
START_TEST(nccl_fallback_quantizes_apart)
{
    GError *err = NULL;
    strata_hw *hw = dgx_h100();
    strata_serve_model m = f8_70b_one_layer();
    strata_serve_cost *c = strata_serve_cost_new(hw, &m, 2, false, 1024, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    const strata_serve_allreduce *ar = strata_serve_allreduce_find("trtllm-auto", NULL);
    const uint32_t tokens[2] = {976, 977};
    const double more_bytes[2] = {0, 48021504.0}, more_s[2] = {-1, 21.927530348258706e-6};
    for (int i = 0; i < 2; i++) {
        strata_serve_chunk ch = {0, tokens[i], tokens[i], true};
        strata_serve_work w_nccl, w_auto;
        strata_serve_cost_set_allreduce(c, NULL);
        double nccl = strata_serve_cost_step_work(c, &ch, 1, &w_nccl);
        strata_serve_cost_set_allreduce(c, ar);
        double fused = strata_serve_cost_step_work(c, &ch, 1, &w_auto);
        ck_assert_msg(w_auto.bytes - w_nccl.bytes == more_bytes[i], "%u: %.0f", tokens[i], w_auto.bytes - w_nccl.bytes);
        if (more_s[i] > 0) /* at 976 the times differ by the all-reduces themselves (two-shot against NCCL) */
            ck_assert_msg(fabs(fused - nccl - more_s[i]) < 1e-12, "%.17g", fused - nccl);
    }
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* The vocabulary's collectives at TP > 1 (serve_cost.h,
 * strata_serve_cost_set_vocab_collectives), Llama-3-70B FP8 at TP2 on DGX
 * H100, one layer, a step of 256 decodes (context 100):
 *   the logits all-gather: each rank's ceil(128,256 / 2) = 64,128 columns
 *   of 256 rows in bf16, 32,833,536 B a rank, at the time strata's
 *   collective model simulates for an all-gather of that share over 2
 *   ranks (serve_coll.h, NCCL's choice run on the file's links; asserted
 *   here to lie between the bytes at NVLink's 450 GB/s and at a third of
 *   it, so a wrong size fails);
 *   the embedding's all-reduce of 256 x 8,192 bf16 (4,194,304 B) under
 *   trtllm-auto, the two-shot kernel (256 > 128 tokens, <= 2 ranks):
 *   3 + 2 x 1 + 2 x 1/2 x 4,194,304 / 360e9 (11.650844 us)
 *   + 3 x 4,194,304 / 3.015e12 (4.173436 us) = 20.824281 us.
 * The trtllm row runs both, trtllm-cpp the gather alone; nothing at TP1 or under
 * attention DP (LM head and embedding whole on each rank).
 * The vLLM and SGLang rows run both too. vllm-v0 gathers the logits to
 * rank 0 (torch.distributed.gather: one ncclSend into the root at once):
 *   (2 - 1) x 32,833,536 B at SM stores' 4/5 of 450 GB/s (360e9)
 *   = 91.204267 us, + the route's 1 us (2 links x 0.5 us) = 92.204267 us
 * (the simulated all-gather, ~83.4 us, is faster: NCCL's Simple over
 * NVLink there, not SM stores at 4/5); its embedding's all-reduce is vLLM's
 * custom kernel, 1-stage at 2 ranks (in a CUDA graph, no staging copy),
 * four route flights (start_sync, the peer loads' round trip, end_sync):
 *   3 + 4 x 1 + 1 x 4,194,304 / 360e9 (11.650844 us)
 *   + 2 x 4,194,304 / 3.015e12 (2.782291 us) = 21.433135 us.
 * sglang-v0.3: NCCL's all-gather (as above) + the same 21.433135 us;
 * vllm-v1 (no --engine): NCCL's all-gather + NCCL's all-reduce of the
 * 4,194,304 B (both simulated likewise). */
START_TEST(vocab_collectives_by_hand)
{
    GError *err = NULL;
    strata_hw *hw = dgx_h100();
    strata_serve_model m = f8_70b_one_layer();
    strata_serve_chunk *d = g_new(strata_serve_chunk, 256);
    for (uint32_t i = 0; i < 256; i++)
        d[i] = (strata_serve_chunk){i, 1, 100, true};
    strata_serve_coll *sim = strata_serve_coll_new(hw, 2);
    double gather = 0, nccl_ar = 0;
    ck_assert_msg(strata_serve_coll_time(sim, STRATA_OP_ALL_GATHER, 32833536, &gather, &err) &&
                      strata_serve_coll_time(sim, STRATA_OP_ALL_REDUCE, 4194304, &nccl_ar, &err),
                  "%s", err ? err->message : "");
    strata_serve_coll_free(sim);
    const double embed = 5e-6 + 4194304.0 / 360e9 + 3.0 * 4194304.0 / 3.015e12;
    ck_assert_msg(gather > 32833536.0 / 450e9 && gather < 3 * 32833536.0 / 450e9, "%.17g", gather);
    ck_assert_msg(fabs(embed - 20.824281e-6) < 1e-12, "%.17g", embed);
    const char *engines[2] = {"trtllm", "trtllm-cpp"};
    const double more[2] = {gather + embed, gather};
    for (int i = 0; i < 2; i++) {
        strata_serve_cost *c = strata_serve_cost_new(hw, &m, 2, false, 256, &err);
        ck_assert_msg(c, "%s", err ? err->message : "");
        ck_assert(strata_serve_engine_set_kernels(strata_serve_engine_find(engines[i], NULL), hw, c, &err));
        double with = strata_serve_cost_step(c, d, 256);
        strata_serve_cost_set_vocab_collectives(c, false, false, false);
        double without = strata_serve_cost_step(c, d, 256);
        ck_assert_msg(fabs(with - without - more[i]) < 1e-12 * with, "%s: %.17g vs %.17g", engines[i], with - without,
                      more[i]);
        strata_serve_cost_free(c);
    }
    const double root = 32833536.0 / 360e9 + 1e-6, custom = 7e-6 + 4194304.0 / 360e9 + 2.0 * 4194304.0 / 3.015e12;
    ck_assert_msg(fabs(root - 92.204267e-6) < 1e-12, "%.17g", root);
    ck_assert_msg(fabs(custom - 21.433135e-6) < 1e-12, "%.17g", custom);
    const char *vllm[3] = {"vllm-v0", "sglang-v0.3", NULL};
    const double vmore[3] = {root + custom, gather + custom, gather + nccl_ar};
    for (int i = 0; i < 3; i++) {
        strata_serve_cost *c = strata_serve_cost_new(hw, &m, 2, false, 256, &err);
        ck_assert_msg(c, "%s", err ? err->message : "");
        ck_assert(strata_serve_engine_set_kernels(vllm[i] ? strata_serve_engine_find(vllm[i], NULL) : NULL, hw, c,
                                                  &err));
        double with = strata_serve_cost_step(c, d, 256);
        strata_serve_cost_set_vocab_collectives(c, false, false, false);
        double without = strata_serve_cost_step(c, d, 256);
        ck_assert_msg(fabs(with - without - vmore[i]) < 1e-12 * with, "%s: %.17g vs %.17g", vllm[i] ? vllm[i] : "vllm-v1",
                      with - without, vmore[i]);
        strata_serve_cost_free(c);
    }
    /* TP1 and attention DP: no collective joins the vocabulary */
    for (int dp = 0; dp < 2; dp++) {
        strata_serve_cost *c = strata_serve_cost_new(hw, &m, dp ? 2 : 1, dp, 256, &err);
        ck_assert_msg(c, "%s", err ? err->message : "");
        strata_serve_cost_set_vocab_collectives(c, true, false, true);
        double with = strata_serve_cost_step(c, d, 256);
        strata_serve_cost_set_vocab_collectives(c, false, false, false);
        ck_assert(strata_serve_cost_step(c, d, 256) == with);
        strata_serve_cost_free(c);
    }
    g_free(d);
    strata_hw_free(hw);
}
END_TEST

/* vLLM's custom all-reduce on DGX H100 (the dgx() figures; peer loads
 * at 450 x 4/5 = 360 GB/s; the route's 1 us a flight: the 1-stage's four,
 * start_sync 1 + its loads' round trip 2 + end_sync 1, the 2-stage's six,
 * 1 + 2 + 1 + the all-gather loads' round trip 2):
 * one Llama-3-70B token at TP2 (8,192 bf16 = 16,384 B), 1-stage (2 ranks):
 *   3 + 4 x 1 + 1 x 16,384 / 360e9 (0.045511 us)
 *   + 2 x 16,384 / 3.015e12 (0.010868 us) = 7.056379 us;
 * 256 tokens at TP4 (4,194,304 B >= 512 KiB), 2-stage:
 *   3 + 6 x 1 + 2 x 3/4 x 4,194,304 / 360e9 (17.476267 us)
 *   + (1 + 3/4) x 4,194,304 / 3.015e12 (2.434504 us) = 28.910771 us;
 * the same outside a CUDA graph adds the staging copy,
 *   3 + 2 x 4,194,304 / 3.015e12 (2.782291 us) = 5.782291 us: 34.693063 us. */
START_TEST(vllm_custom_kernels_by_hand)
{
    const strata_serve_allreduce *a = strata_serve_allreduce_find("vllm-custom", NULL);
    ck_assert(a);
    strata_serve_ar_in in = dgx(2, 1, 16384);
    strata_serve_ar_plan p = strata_serve_allreduce_plan(a, &in);
    ck_assert_int_eq(p.strategy, SERVE_AR_ONESHOT);
    ck_assert_msg(fabs(p.time_s - 7.056379e-6) < 1e-12, "%.17g", p.time_s);
    in = dgx(4, 256, 4194304);
    p = strata_serve_allreduce_plan(a, &in);
    ck_assert_int_eq(p.strategy, SERVE_AR_TWOSHOT);
    ck_assert_msg(fabs(p.time_s - 28.910771e-6) < 1e-12, "%.17g", p.time_s);
    in.eager = true;
    p = strata_serve_allreduce_plan(a, &in);
    ck_assert_int_eq(p.strategy, SERVE_AR_TWOSHOT);
    ck_assert_msg(fabs(p.time_s - 34.693063e-6) < 1e-12, "%.17g", p.time_s);
}
END_TEST

/* custom_all_reduce.cuh's REDUCE_CASE and should_custom_ar, each rule
 * from both sides. */
START_TEST(vllm_custom_on_each_side_of_its_rules)
{
    const strata_serve_allreduce *a = strata_serve_allreduce_find("vllm-custom", NULL);
    struct {
        uint32_t ranks;
        uint64_t bytes;
        strata_serve_ar_strategy want;
    } rows[] = {
        {2, 8388608, SERVE_AR_ONESHOT},       /* 2 ranks: 1-stage up to max_size, 8 MiB */
        {2, 8388624, SERVE_AR_NCCL},          /* past max_size: pynccl */
        {4, 524272, SERVE_AR_ONESHOT},        /* <= 4 ranks: 1-stage below 512 KiB */
        {4, 524288, SERVE_AR_TWOSHOT},
        {8, 262128, SERVE_AR_ONESHOT},        /* <= 8 ranks: below 256 KiB */
        {8, 262144, SERVE_AR_TWOSHOT},
        {6, 262144, SERVE_AR_TWOSHOT},        /* 6 ranks: the 256 KiB rule */
        {8, 8388608, SERVE_AR_TWOSHOT},
        {8, 8388624, SERVE_AR_NCCL},
        {3, 16384, SERVE_AR_NCCL},            /* world sizes 2, 4, 6, 8 only */
        {4, 16392, SERVE_AR_NCCL},            /* not a multiple of 16 bytes */
        {1, 16384, SERVE_AR_NCCL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        strata_serve_ar_in in = dgx(rows[i].ranks, 1, rows[i].bytes);
        strata_serve_ar_plan p = strata_serve_allreduce_plan(a, &in);
        ck_assert_msg(p.strategy == rows[i].want, "row %zu: %d, expected %d", i, p.strategy, rows[i].want);
        ck_assert(p.strategy == SERVE_AR_NCCL ? p.time_s == 0 : p.time_s > 0);
    }
}
END_TEST

/* Through the serving cost, Llama-3-70B (bf16) at TP4 on DGX H100: the
 * vllm-v0 and sglang-v0.3 rows name vllm-custom (SGLang 0.3's graphs up
 * to 160 requests); 256 decodes run 2-stage kernels, so the step differs
 * from NCCL's; a step of 256 tokens run eagerly adds 2 x 80 layers of
 * staging copies (5.782291 us each, above) = 925.166594 us; 512 tokens
 * (8 MiB) still run the custom kernel; 513 tokens (past 8 MiB) run
 * NCCL, so nothing is added and the step is NCCL's. */
START_TEST(vllm_engines_run_it_in_the_step)
{
    GError *err = NULL;
    strata_hw *hw = dgx_h100();
    strata_serve_model m;
    ck_assert(strata_serve_model_preset(&m, "llama-3-70b", NULL));
    strata_serve_cost *c = strata_serve_cost_new(hw, &m, 4, false, 1024, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    strata_serve_chunk *d = g_new(strata_serve_chunk, 513);
    for (uint32_t i = 0; i < 513; i++)
        d[i] = (strata_serve_chunk){i, 1, 500, true};
    double nccl256 = strata_serve_cost_step(c, d, 256), nccl513 = strata_serve_cost_step(c, d, 513);
    ck_assert(strata_serve_cost_eager_extra(c, 256) == 0);
    const strata_serve_engine *v = strata_serve_engine_find("vllm-v0", NULL),
                              *g = strata_serve_engine_find("sglang-v0.3", NULL);
    ck_assert(v && v->allreduce && !strcmp(v->allreduce, "vllm-custom") && v->graph_max == 0);
    ck_assert(g && g->allreduce && !strcmp(g->allreduce, "vllm-custom") && g->graph_max == 160);
    strata_serve_cost_set_allreduce(c, strata_serve_allreduce_find(v->allreduce, NULL));
    double custom256 = strata_serve_cost_step(c, d, 256);
    ck_assert_msg(custom256 != nccl256, "%.17g", custom256);
    double extra = strata_serve_cost_eager_extra(c, 256);
    ck_assert_msg(fabs(extra - 925.166594e-6) < 1e-11, "%.17g", extra);
    ck_assert(strata_serve_cost_eager_extra(c, 512) > 0);
    ck_assert(strata_serve_cost_eager_extra(c, 513) == 0);
    ck_assert_msg(strata_serve_cost_step(c, d, 513) == nccl513, "%.17g vs %.17g", strata_serve_cost_step(c, d, 513),
                  nccl513);
    g_free(d);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

static strata_hw *hw_load(const char *path)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    return hw;
}

/* MI300X's figures (configs/hw/mi300x.ini, mi300x-8.ini): kernel_launch
 * 1.9 us, one xGMI hop of 0.8 us at 64 GB/s (stores 4/5 of it, 51.2 GB/s),
 * HBM 5.3 TB/s at stream efficiency 0.6 (3.18 TB/s); link_peers as given. */
static strata_serve_ar_in mi300x(uint64_t bytes, uint32_t link_peers)
{
    return (strata_serve_ar_in){8, bytes / 16384, bytes, 1.9e-6, 64e9, 0.8e-6, 5.3e12 * 0.6, false, link_peers};
}

/* Which peers' routes into rank 0 share a link: on mi300x-8's full mesh
 * each peer has its own xGMI link (1); on dgx-h100 every peer's route
 * ends in rank 0's one NVSwitch port (tp - 1: 7 at TP8, 3 at TP4); TP2 one
 * peer (1). */
START_TEST(peers_per_link_by_topology)
{
    const char *files[] = {"mi300x-8.ini", "dgx-h100.ini", "dgx-h100.ini", "dgx-h100.ini"};
    const uint32_t tp[] = {8, 8, 4, 2}, want[] = {1, 7, 3, 1};
    for (size_t i = 0; i < G_N_ELEMENTS(tp); i++) {
        char *path = g_strconcat(STRATA_SOURCE_DIR "/configs/hw/", files[i], NULL);
        strata_hw *hw = hw_load(path);
        strata_serve_links l;
        GError *err = NULL;
        ck_assert_msg(strata_serve_links_find(hw, 0, tp[i], &l, &err), "%s", err ? err->message : "");
        ck_assert_msg(l.ar_peers_per_link == want[i], "%s tp %u: %u, expected %u", files[i], tp[i],
                      l.ar_peers_per_link, want[i]);
        strata_hw_free(hw);
        g_free(path);
    }
}
END_TEST

/* vllm-custom-rocm on 8 MI300X (the mi300x() figures):
 * one Llama-3-70B token (16,384 B), 1-stage (four flights), link_peers 1:
 *   1.9 + 4 x 0.8 + 16,384 / 51.2e9 (0.32 us) + 2 x 16,384 / 3.18e12
 *   (0.010304 us) = 5.430304 us;
 * 128 tokens (2,097,152 B >= 256 KiB), 2-stage (six flights):
 *   1.9 + 6 x 0.8 + 2 x 1/8 x 2,097,152 / 51.2e9 (10.24 us) + (1 + 3/8) x
 *   2,097,152 / 3.18e12 (0.906787 us) = 17.846787 us; with link_peers 0
 *   (read as 7, a switch port) 1.9 + 4.8 + 2 x 7/8 x 2,097,152 / 51.2e9
 *   (71.68 us) + 0.906787 = 79.286787 us;
 * its size rule (ROCm's max_size 16 MiB, inp_size < max_size): 16 MiB - 16
 *   B the 2-stage kernel, 16 MiB RCCL; vllm-custom (0.6, 8 MiB) RCCL at
 *   16 MiB - 16. */
START_TEST(vllm_custom_rocm_by_hand)
{
    const strata_serve_allreduce *a = strata_serve_allreduce_find("vllm-custom-rocm", NULL);
    ck_assert(a);
    strata_serve_ar_in in = mi300x(16384, 1);
    strata_serve_ar_plan p = strata_serve_allreduce_plan(a, &in);
    ck_assert_int_eq(p.strategy, SERVE_AR_ONESHOT);
    ck_assert_msg(fabs(p.time_s - 5.430304e-6) < 1e-12, "%.17g", p.time_s);
    in = mi300x(2097152, 1);
    p = strata_serve_allreduce_plan(a, &in);
    ck_assert_int_eq(p.strategy, SERVE_AR_TWOSHOT);
    ck_assert_msg(fabs(p.time_s - 17.846787e-6) < 1e-12, "%.17g", p.time_s);
    in = mi300x(2097152, 0);
    p = strata_serve_allreduce_plan(a, &in);
    ck_assert_msg(fabs(p.time_s - 79.286787e-6) < 1e-12, "%.17g", p.time_s);
    in = mi300x(16777216 - 16, 1);
    ck_assert_int_eq(strata_serve_allreduce_plan(a, &in).strategy, SERVE_AR_TWOSHOT);
    ck_assert_int_eq(strata_serve_allreduce_plan(strata_serve_allreduce_find("vllm-custom", NULL), &in).strategy,
                     SERVE_AR_NCCL);
    in = mi300x(16777216, 1);
    ck_assert_int_eq(strata_serve_allreduce_plan(a, &in).strategy, SERVE_AR_NCCL);
}
END_TEST

/* The vLLM rows on mi300x-8 (collectives = rccl) run vllm-custom-rocm: a
 * step's all-reduce of one Llama-3-70B token at TP8 is the 5.430304 us
 * above, for vllm-v1 (no --engine) and vllm-v0 alike. On dgx-h100 (NCCL)
 * vllm-v1 keeps NCCL's simulated all-reduce: not that kernel's NVSwitch
 * time, 3 + 4 x 1 + 7 x 16,384 / 360e9 (0.318578 us) + 2 x 16,384 /
 * 3.015e12 (0.010868 us) = 7.329446 us. */
START_TEST(vllm_rows_take_rocm_kernel_on_rccl)
{
    strata_serve_model m = {0};
    ck_assert(strata_serve_model_preset(&m, "llama-3-70b", NULL));
    const char *engines[2] = {"vllm-v0", NULL};
    strata_hw *hw = hw_load(STRATA_SOURCE_DIR "/configs/hw/mi300x-8.ini");
    for (int i = 0; i < 2; i++) {
        GError *err = NULL;
        strata_serve_cost *c = strata_serve_cost_new(hw, &m, 8, false, 256, &err);
        ck_assert_msg(c, "%s", err ? err->message : "");
        ck_assert(strata_serve_engine_set_kernels(engines[i] ? strata_serve_engine_find(engines[i], NULL) : NULL, hw,
                                                  c, &err));
        double t = strata_serve_cost_allreduce(c, 1);
        ck_assert_msg(fabs(t - 5.430304e-6) < 1e-12, "%s: %.17g", engines[i] ? engines[i] : "vllm-v1", t);
        strata_serve_cost_free(c);
    }
    strata_hw_free(hw);
    hw = hw_load(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini");
    GError *err = NULL;
    strata_serve_cost *c = strata_serve_cost_new(hw, &m, 8, false, 256, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    ck_assert(strata_serve_engine_set_kernels(NULL, hw, c, &err));
    strata_serve_coll *sim = strata_serve_coll_new(hw, 8);
    strata_serve_cost_set_collectives(c, sim);
    double nccl = strata_serve_cost_allreduce(c, 1);
    ck_assert_msg(nccl > 0 && fabs(nccl - 7.329446e-6) > 1e-9, "%.17g", nccl);
    strata_serve_cost_free(c);
    strata_serve_coll_free(sim);
    strata_hw_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_allreduce");
    TCase *tc = tcase_create("serve_allreduce");
    tcase_add_test(tc, kernels_by_hand);
    tcase_add_test(tc, strategy_on_each_side_of_the_thresholds);
    tcase_add_test(tc, trtllm_engine_runs_it_in_the_step);
    tcase_add_test(tc, nccl_fallback_quantizes_apart);
    tcase_add_test(tc, vocab_collectives_by_hand);
    tcase_add_test(tc, vllm_custom_kernels_by_hand);
    tcase_add_test(tc, vllm_custom_on_each_side_of_its_rules);
    tcase_add_test(tc, vllm_engines_run_it_in_the_step);
    tcase_add_test(tc, peers_per_link_by_topology);
    tcase_add_test(tc, vllm_custom_rocm_by_hand);
    tcase_add_test(tc, vllm_rows_take_rocm_kernel_on_rccl);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
