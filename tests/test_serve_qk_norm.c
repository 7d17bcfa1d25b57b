/*
 * test_serve_qk_norm.c: a GQA layer's q and k norms (sim/serve/serve_qk_norm.h) against values derived by hand:
 * the per-head pass as before, MiniMax-M2's norms over the whole projection with their all-reduces of t FP32 values
 * (the library under 16 bytes, the engine's kernel from 16), the config reader's family row, a model file's key, and
 * a MiniMax-M2 decode step at TP4 on 8x MI300X under sglang-v0.5 with and without them.
 */
#include <math.h>
#include <glib/gstdio.h>
#include <string.h>
#include "serve/serve_coll.h"
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
#include "serve/serve_model.h"
#include "serve/serve_qk_norm.h"
#include "testutil.h"

/* Fake prices: a kernel 1 us + 1 ps a byte; an all-reduce 10 us + 1 ns a byte, counted. */
typedef struct {
    int ars;
    uint64_t ar_bytes;
} calls;
static double fake_pass(const void *ctx, uint64_t elements, double bytes)
{
    (void)ctx;
    (void)elements;
    return 1e-6 + bytes * 1e-12;
}
static double fake_ar(const void *ctx, uint64_t tokens, uint64_t bytes)
{
    calls *k = (calls *)(uintptr_t)ctx;
    (void)tokens;
    k->ars++;
    k->ar_bytes += bytes;
    return 10e-6 + (double)bytes * 1e-9;
}

/* MiniMax-M2 at TP4: 48 / 4 = 12 query heads and 8 / 4 = 2 KV heads of 128 a rank: q 1,536 and k 256 columns,
 * bf16 activations (2 B).
 * - Per head, 3 rows: n = 3 x 1,792 = 5,376 elements, 2 x 5,376 x 2 = 21,504 B: 1 us + 21,504 ps; no all-reduce.
 * - Whole, TP4, 1 row (no copy: a one-row slice is contiguous): q's mean square 1,536 x 2 + 4 = 3,076 B, its
 *   scaling 2 x 3,072 + 4 = 6,148 B; k's 512 + 4 = 516 and 1,024 + 4 = 1,028 B: four kernels, 4 us + 10,768 ps,
 *   and two all-reduces of 4 B, 2 x (10 us + 4 ns).
 * - Whole, TP4, 2 rows: each norm adds its copy (q 2 x 3,072 x 2 = 12,288 B, k 2 x 512 x 2 = 2,048 B), the
 *   mean squares and scalings of twice the columns with 8 B of sums: q 6,144 + 8 and 12,288 + 8, k 1,024 + 8 and
 *   2,048 + 8: six kernels, 6 us + 35,872 ps; two all-reduces of 8 B, 2 x (10 us + 8 ns).
 * - Whole, TP1 (no collective): the copy and one kernel a norm, 2 rows: q 12,288 + 12,288 B, k 2,048 + 2,048 B:
 *   4 us + 28,672 ps; no all-reduce. */
START_TEST(qk_norms_by_hand)
{
    calls k = {0, 0};
    strata_serve_qk_norm_in per_head = {3, 1536, 256, 2.0, false, 4};
    ck_assert_double_eq_tol(strata_serve_qk_norm_time(&per_head, fake_pass, fake_ar, &k), 1e-6 + 21504e-12, 1e-15);
    ck_assert_int_eq(k.ars, 0);
    strata_serve_qk_norm_in one = {1, 1536, 256, 2.0, true, 4};
    ck_assert_double_eq_tol(strata_serve_qk_norm_time(&one, fake_pass, fake_ar, &k),
                            4e-6 + 10768e-12 + 2 * (10e-6 + 4e-9), 1e-15);
    ck_assert_int_eq(k.ars, 2);
    ck_assert_uint_eq(k.ar_bytes, 8);
    strata_serve_qk_norm_in two = {2, 1536, 256, 2.0, true, 4};
    ck_assert_double_eq_tol(strata_serve_qk_norm_time(&two, fake_pass, fake_ar, &k),
                            6e-6 + 35872e-12 + 2 * (10e-6 + 8e-9), 1e-15);
    ck_assert_int_eq(k.ars, 4);
    strata_serve_qk_norm_in alone = {2, 1536, 256, 2.0, true, 1};
    ck_assert_double_eq_tol(strata_serve_qk_norm_time(&alone, fake_pass, fake_ar, &k), 4e-6 + 28672e-12, 1e-15);
    ck_assert_int_eq(k.ars, 4);
    strata_serve_qk_norm_in none = {0, 1536, 256, 2.0, true, 4};
    ck_assert_double_eq(strata_serve_qk_norm_time(&none, fake_pass, fake_ar, &k), 0.0);
}
END_TEST

/* The family row: minimax_m2 only; the config reader sets the field from it (MiniMax-M2.5's config.json, model
 * type minimax_m2) and not for Qwen 3 (per-head norms); a model file's qk_norm_tp needs qk_norm beside it. */
START_TEST(family_and_reader)
{
    ck_assert(strata_serve_qk_norm_whole_family("minimax_m2"));
    ck_assert(!strata_serve_qk_norm_whole_family("qwen3"));
    ck_assert(!strata_serve_qk_norm_whole_family(NULL));
    GError *err = NULL;
    strata_serve_model m;
    ck_assert_msg(strata_serve_model_from_config(&m, STRATA_SOURCE_DIR "/configs/models/minimax-m2.5.json", &err),
                  "%s", err ? err->message : "");
    ck_assert(m.qk_norm && m.qk_norm_tp);
    ck_assert_msg(strata_serve_model_from_config(&m, STRATA_SOURCE_DIR "/configs/models/qwen3-8b.json", &err), "%s",
                  err ? err->message : "");
    ck_assert(m.qk_norm && !m.qk_norm_tp);
    char *path = g_build_filename(g_get_tmp_dir(), "strata-qk-norm-tp.model", NULL);
    ck_assert(g_file_set_contents(path,
                                  "layers = 2\nhidden = 64\nheads = 4\nkv_heads = 2\nhead_dim = 16\n"
                                  "intermediate = 128\nvocab = 100\nqk_norm_tp = true\n",
                                  -1, NULL));
    strata_serve_model_init(&m);
    ck_assert(!strata_serve_model_load(&m, path, &err));
    ck_assert_msg(err && strstr(err->message, "qk_norm_tp") && strstr(err->message, ":8"), "%s",
                  err ? err->message : "no error");
    g_clear_error(&err);
    g_unlink(path);
    g_free(path);
}
END_TEST

/* MiniMax-M2.5 with FP8 weights at TP4 on mi300x-8 (kernel_launch 1.9 us, 5.3 TB/s at stream_efficiency 0.6) under
 * sglang-v0.5 (vLLM's custom all-reduce), `rows` decodes at context 2,000, the step with qk_norm_tp less without:
 * 62 layers x (the whole norms - the per-head pass), each pass 1.9 us + its bytes / 3.18 TB/s. */
static double minimax_adds(uint32_t rows, strata_serve_coll **coll_out, strata_hw **hw_out)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw("mi300x-8", NULL);
    strata_serve_model m;
    ck_assert_msg(strata_serve_model_from_config(&m, STRATA_SOURCE_DIR "/configs/models/minimax-m2.5.json", &err),
                  "%s", err ? err->message : "");
    ck_assert(strata_serve_model_set(&m, "dtype", "f8", &err) && strata_serve_model_set(&m, "kv_dtype", "bf16", &err));
    strata_serve_coll *coll = strata_serve_coll_new(hw, 4);
    const strata_serve_engine *e = strata_serve_engine_find("sglang-v0.5", &err);
    strata_serve_chunk d[8];
    for (uint32_t i = 0; i < rows; i++)
        d[i] = (strata_serve_chunk){.id = i, .tokens = 1, .context = 2000, .samples = true};
    double t[2];
    for (int whole = 1; whole >= 0; whole--) {
        m.qk_norm_tp = whole;
        strata_serve_cost *c = strata_serve_cost_new(hw, &m, 4, false, 16384, &err);
        ck_assert_msg(c && strata_serve_engine_set_kernels(e, hw, c, &err), "%s", err ? err->message : "");
        strata_serve_cost_set_collectives(c, coll);
        t[whole] = strata_serve_cost_step(c, d, rows);
        strata_serve_cost_free(c);
    }
    *coll_out = coll;
    *hw_out = hw;
    return t[1] - t[0];
}

/* 4 rows: each all-reduce 16 B, vLLM's 1-stage kernel over xGMI (mi300x-8: 64 GB/s a link, 0.8 us, SM stores at
 * 4/5 of it; serve_allreduce.c onestage_s): 1.9 us + 4 x 0.8 us + 16 / 51.2e9 + 2 x 16 / 3.18e12. The passes (the
 * first test's 2-row sums at 4 rows): q copy 24,576, mean square 12,288 + 16, scaling 24,576 + 16 B; k 4,096, 2,048
 * + 16, 4,096 + 16 B: 6 kernels, 71,744 B; less the per-head pass over 4 x 1,792 elements, 28,672 B: 5 kernels and
 * 43,072 B more a layer. 1 row: each all-reduce 4 B, no custom kernel (not a multiple of 16): RCCL as strata's
 * collective model simulates it (serve_coll.h); four kernels (no copies) of 3,076 + 6,148 + 516 + 1,028 B less
 * the per-head 7,168 B: 3 kernels and 3,600 B more. */
START_TEST(minimax_step_by_hand)
{
    strata_serve_coll *coll;
    strata_hw *hw;
    double stream = 0.6 * 5.3e12, ar16 = 1.9e-6 + 4 * 0.8e-6 + 16 / 51.2e9 + 32 / stream;
    double four = minimax_adds(4, &coll, &hw);
    ck_assert_double_eq_tol(four, 62 * (5 * 1.9e-6 + 43072 / stream + 2 * ar16), 1e-10);
    strata_serve_coll_free(coll);
    strata_hw_free(hw);
    double one = minimax_adds(1, &coll, &hw), rccl = 0;
    GError *err = NULL;
    ck_assert_msg(strata_serve_coll_time(coll, STRATA_OP_ALL_REDUCE, 4, &rccl, &err), "%s", err ? err->message : "");
    ck_assert(rccl > ar16);
    ck_assert_double_eq_tol(one, 62 * (3 * 1.9e-6 + 3600 / stream + 2 * rccl), 1e-10);
    strata_serve_coll_free(coll);
    strata_hw_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_qk_norm");
    TCase *tc = tcase_create("serve_qk_norm");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, qk_norms_by_hand);
    tcase_add_test(tc, family_and_reader);
    tcase_add_test(tc, minimax_step_by_hand);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
