/*
 * test_serve_graph_limit.c: SGLang's CUDA graph limit by the GPU's memory
 * and TP, its capture lists (serve_graph_limit.h), a decode step above the
 * limit run eagerly in a run, and --cuda-graph-max-bs, against values
 * derived by hand from the releases' rules (serve_graph_limit.c); vLLM
 * V0's max_seq_len_to_capture (a decode past it eager, serve_sched.c) and
 * its eager chain (serve_eager.c's vllm-0.4 and vllm-0.7 rows).
 */
#include <string.h>
#include "serve/serve.h"
#include "serve/serve_eager.h"
#include "serve/serve_engine.h"
#include "serve/serve_graph_limit.h"
#include "serve/serve_scheduler.h"
#include "testutil.h"
#include "serve_fixture.h"

#define GIB (1ull << 30)
#define MIB (1ull << 20)

/* SGLang 0.5.6 (_handle_gpu_memory_settings), the memory in MiB (capacity / 2^20):
 * - 80 GiB = 81,920 MiB (H100, A100 80 GB): under 90 x 1024 = 92,160: TP 8 -> 512, TP 2 -> 256;
 * - 141 GiB = 144,384 MiB (H200): under 160 x 1024 = 163,840: TP 1 -> 256, TP 4 -> 512;
 * - 179 GiB = 183,296 MiB (B200): the last bracket: 512 at TP 1;
 * - 40 GiB = 40,960 MiB (A100 40 GB): under 60 x 1024: TP 8 -> 160, TP 1 -> 32;
 * - 24 GiB = 24,576 MiB (A10): under 35 x 1024: TP 1 -> 24, TP 4 -> 80; 20 GiB = 20,480 MiB is not under
 *   20 x 1024, so the same bracket: 24 at TP 1;
 * - 16 GiB (T4): under 20 x 1024: 8 at any TP.
 * SGLang 0.4.0: 8 under 25,000 MiB (24 GiB = 24,576), else 160 (25,000 MiB exactly; 80 GiB), whatever the TP. */
START_TEST(default_limit_by_memory_and_tp)
{
    const strata_serve_graph_limit *v5 = strata_serve_graph_limit_find("sglang-0.5");
    const strata_serve_graph_limit *v4 = strata_serve_graph_limit_find("sglang-0.4");
    ck_assert(v5 && v4 && !strata_serve_graph_limit_find("sglang-0.3") && !strata_serve_graph_limit_find(NULL));
    const struct {
        uint64_t bytes;
        uint32_t tp, v5, v4;
    } rows[] = {{80 * GIB, 8, 512, 160},  {80 * GIB, 2, 256, 160}, {141 * GIB, 1, 256, 160}, {141 * GIB, 4, 512, 160},
                {179 * GIB, 1, 512, 160}, {40 * GIB, 8, 160, 160}, {40 * GIB, 1, 32, 160},   {24 * GIB, 1, 24, 8},
                {24 * GIB, 4, 80, 8},     {20 * GIB, 1, 24, 8},    {16 * GIB, 8, 8, 8},      {25000 * MIB, 1, 24, 160}};
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        ck_assert_uint_eq(strata_serve_graph_limit_default(v5, rows[i].bytes, rows[i].tp), rows[i].v5);
        ck_assert_uint_eq(strata_serve_graph_limit_default(v4, rows[i].bytes, rows[i].tp), rows[i].v4);
    }
    /* the engine rows name them; SGLang 0.3 and vLLM keep their fixed rules */
    ck_assert(strata_serve_engine_graph_limit(strata_serve_engine_find("sglang-v0.5", NULL)) == v5);
    ck_assert(strata_serve_engine_graph_limit(strata_serve_engine_find("sglang-v0.4", NULL)) == v4);
    ck_assert(!strata_serve_engine_graph_limit(strata_serve_engine_find("sglang-v0.3", NULL)));
    ck_assert(!strata_serve_engine_graph_limit(strata_serve_engine_find("vllm-v0", NULL)));
    ck_assert(!strata_serve_engine_graph_limit(NULL));
}
END_TEST

/* The capture lists: 0.5.6's [1, 2, 4, 8, 12] + 16..256 by 8 + 272..496 by 16 + 512 on by 32, 0.4.0's [1, 2, 4]
 * + 8..160 by 8; the largest captured under a limit is the list's last at or under it:
 * - 0.5: 512 -> 512; 100 -> 96 (16 + 8k); 300 -> 288 (272 + 16); 1000 -> 992 (512 + 15 x 32); 11 -> 8; 3 -> 2;
 * - 0.4: 200 -> 160 (the list ends there); 100 -> 96; 8 -> 8; 3 -> 2.
 * A batch replays the first size that holds it, 0 above the largest:
 * - 0.5 under 512: 1 -> 1, 3 -> 4, 9 -> 12, 13 -> 16, 100 -> 104, 257 -> 272, 497 -> 512, 513 -> 0; under 1000
 *   (992): 513 -> 544; under 100 (96): 97 -> 0;
 * - 0.4 under 160: 150 -> 152, 161 -> 0. */
START_TEST(capture_lists_by_hand)
{
    const strata_serve_graph_limit *v5 = strata_serve_graph_limit_find("sglang-0.5");
    const strata_serve_graph_limit *v4 = strata_serve_graph_limit_find("sglang-0.4");
    const uint32_t largest5[][2] = {{512, 512}, {100, 96}, {300, 288}, {1000, 992}, {11, 8}, {3, 2}, {1, 1}};
    for (size_t i = 0; i < G_N_ELEMENTS(largest5); i++)
        ck_assert_uint_eq(strata_serve_graph_limit_largest(v5, largest5[i][0]), largest5[i][1]);
    const uint32_t largest4[][2] = {{200, 160}, {100, 96}, {8, 8}, {3, 2}};
    for (size_t i = 0; i < G_N_ELEMENTS(largest4); i++)
        ck_assert_uint_eq(strata_serve_graph_limit_largest(v4, largest4[i][0]), largest4[i][1]);
    const uint32_t size5[][3] = {{512, 1, 1},   {512, 3, 4},     {512, 9, 12},    {512, 13, 16},
                                 {512, 100, 104}, {512, 257, 272}, {512, 497, 512}, {512, 513, 0},
                                 {1000, 513, 544}, {100, 97, 0}};
    for (size_t i = 0; i < G_N_ELEMENTS(size5); i++)
        ck_assert_uint_eq(strata_serve_graph_limit_size(v5, size5[i][0], size5[i][1]), size5[i][2]);
    ck_assert_uint_eq(strata_serve_graph_limit_size(v4, 160, 150), 152);
    ck_assert_uint_eq(strata_serve_graph_limit_size(v4, 160, 161), 0);
}
END_TEST

/* Three requests of 4 prompt tokens and 3 outputs at 0 on the tiny model (one dense layer, hidden 8) on
 * test-simple.ini with 1 MiB of memory, under the sglang-v0.5 row run serially (mode SYNC: step = forward + CPU),
 * cuda_graph_max_bs max_bs (0: the row's rule). */
static strata_serve_result *run_three(uint32_t max_bs)
{
    strata_serve_model m = strata_test_serve_tiny();
    GError *err = NULL;
    strata_serve_engine row = *strata_serve_engine_find("sglang-v0.5", NULL);
    row.mode = SERVE_ENGINE_SYNC;
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 16, c.max_num_seqs = 4, c.block_size = 4, c.gpu_memory_utilization = 1;
    c.record_steps = true, c.engine = &row, c.cuda_graph_max_bs = max_bs;
    c.scheduler = strata_serve_scheduler_find(row.scheduler, &err);
    ck_assert_msg(c.scheduler, "%s", err ? err->message : "");
    strata_serve_request req[3] = {{0, 4, 3}, {0, 4, 3}, {0, 4, 3}};
    strata_serve_stream s = {req, 3, 0, 0, NULL, 0, (char *)"tiny", NULL, NULL};
    const char *overrides[] = {"memory.hbm.capacity=1MiB", NULL};
    strata_hw *hw = strata_test_load_hw("test-simple", overrides);
    strata_serve_result *r = strata_serve_run(hw, &m, &c, &s, &strata_serve_kv_paged, NULL, &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    strata_hw_free(hw);
    return r;
}

/* The second step decodes the three (each has its prefill's token). Its CPU time (sglang's figures): 1 ms + 3 x
 * 1.6 us + 12 prompt tokens x 5.4 ns + 3 generated x 25 ns = 1.0049398 ms.
 * - cuda_graph_max_bs 2 (the largest captured 2): 3 > 2, eager: the forward is the eager host chain, the tiny
 *   layer's attention 60 + dense MLP 18 + its Python 231.44086 + the step's 48 = 357.44086 us (TP 1,
 *   test_serve_frontend.c), longer than its GPU time (a few us); dt = 357.44086 us + 1.0049398 ms = 1.36238066 ms;
 * - the row's rule on 1 MiB (under 20 GiB: 8): the 3 replay the graph of 4, no chain: dt = GPU + CPU, under the
 *   eager step's and over the CPU alone. */
START_TEST(decode_above_the_limit_runs_eager)
{
    strata_serve_result *r = run_three(2);
    ck_assert_uint_ge(r->steps_log->len, 2);
    const strata_serve_step *d = &g_array_index(r->steps_log, strata_serve_step, 1);
    ck_assert_uint_eq(d->decodes, 3);
    ck_assert_uint_eq(d->prefills, 0);
    ck_assert_double_eq_tol(d->dt, 1.36238066e-3, 1e-12);
    strata_serve_result_free(r);
    r = run_three(0);
    d = &g_array_index(r->steps_log, strata_serve_step, 1);
    ck_assert_uint_eq(d->decodes, 3);
    ck_assert_double_lt(d->dt, 1.36238066e-3 - 60e-6);
    ck_assert_double_gt(d->dt, 1.0049398e-3);
    strata_serve_result_free(r);
}
END_TEST

static strata_cli_result serve(const char *engine, const char *max_bs)
{
    return strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model", "llama-3-8b",
                           "--poisson", "n=4,rate=0,prompt=100,output=4", "-q", "--engine", engine,
                           "--cuda-graph-max-bs", max_bs, NULL);
}

/* --cuda-graph-max-bs: SGLang 0.4's and 0.5's option; refused (exit 2) for a row without it and out of 1..2^20. */
START_TEST(cli_option_where_sglang_has_it)
{
    strata_cli_result r = serve("sglang-v0.5", "64");
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    r = serve("vllm-v0", "64");
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--cuda-graph-max-bs: --engine vllm-v0 has no such option"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = serve("sglang-v0.3", "64");
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--engine sglang-v0.3 has no such option"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model", "llama-3-8b", "--poisson",
                        "n=4,rate=0,prompt=100,output=4", "-q", "--engine", "sglang-v0.5", "--cuda-graph-max-bs", "64",
                        "--cuda-graph-batch-sizes", "1,2,4", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--cuda-graph-max-bs: expected it or --cuda-graph-batch-sizes, not both"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = serve("sglang-v0.4", "0");
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--cuda-graph-max-bs: expected a whole number from 1 to 2^20 (1048576), got 0"),
                  "%s", r.err);
    strata_cli_result_clear(&r);
}
END_TEST

/* One request of 4 prompt tokens and 4 outputs on the tiny model (one dense layer, hidden 8, test-simple.ini,
 * 1 MiB) under the vllm-v0.5 row, max_seq_len_to_capture limit (0: the row's 8192). */
static strata_serve_result *run_v0(uint32_t limit)
{
    strata_serve_model m = strata_test_serve_tiny();
    GError *err = NULL;
    const strata_serve_engine *row = strata_serve_engine_find("vllm-v0.5", NULL);
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 16, c.max_num_seqs = 4, c.block_size = 4, c.gpu_memory_utilization = 1;
    c.record_steps = true, c.engine = row, c.max_seq_len_to_capture = limit;
    c.scheduler = strata_serve_scheduler_find(row->scheduler, &err);
    ck_assert_msg(c.scheduler, "%s", err ? err->message : "");
    strata_serve_request req[1] = {{0, 4, 4}};
    strata_serve_stream s = {req, 1, 0, 0, NULL, 0, (char *)"tiny", NULL, NULL};
    strata_hw *hw = strata_test_load_hw("test-simple", (const char *const[]){"memory.hbm.capacity=1MiB", NULL});
    strata_serve_result *r = strata_serve_run(hw, &m, &c, &s, &strata_serve_kv_paged, NULL, &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    strata_hw_free(hw);
    return r;
}

/* The vllm-0.4 row (serve_eager.c): a layer's attention 28 calls and dense MLP 4, at 4 us each: 128 us; the
 * step's 2: 8 us; at TP > 1 two all-reduces of 2 calls: 16 us more a layer. 24 layers (Qwen2-0.5B's count): 24 x
 * 128 + 8 = 3,080 us at TP1, 24 x 144 + 8 = 3,464 us at TP2. The tiny model's one layer: 136 us.
 * In a run with max_seq_len_to_capture 5: step 1 prefills (eager, as every prefill); step 2 decodes at context
 * 4 + 1 = 5, not above 5: a graph; step 3 at 4 + 2 = 6 > 5: eager, its forward the chain's 136 us (the tiny
 * layer's GPU time a few us), then the row's CPU time, 4 ms + 103.2258 us a request: dt = 136 us + 4.1032258 ms
 * = 4.2392258 ms; step 2's dt is its GPU time + 4.1032258 ms, under it. The row's own 8192: step 3 graphed, as
 * step 2. */
START_TEST(v0_decode_past_the_capture_limit_runs_eager)
{
    const strata_serve_eager *r4 = strata_serve_engine_eager(strata_serve_engine_find("vllm-v0.5", NULL));
    ck_assert(r4 && r4 == strata_serve_eager_find("vllm-0.4"));
    const strata_serve_engine *v0 = strata_serve_engine_find("vllm-v0", NULL);
    ck_assert(strata_serve_engine_eager(v0) == strata_serve_eager_find("vllm-0.7"));
    ck_assert_uint_eq(strata_serve_engine_find("vllm-v0.5", NULL)->seq_capture, 8192);
    ck_assert_uint_eq(strata_serve_engine_find("vllm-v0", NULL)->seq_capture, 8192);
    strata_serve_model m = strata_test_serve_tiny();
    ck_assert_double_eq_tol(strata_serve_eager_host(r4, &m, 0, 1), 136e-6, 1e-12);
    m.layers = 24;
    ck_assert_double_eq_tol(strata_serve_eager_host(r4, &m, 0, 1), 3080e-6, 1e-12);
    ck_assert_double_eq_tol(strata_serve_eager_host(r4, &m, 0, 2), 3464e-6, 1e-12);
    strata_serve_result *r = run_v0(5);
    ck_assert_uint_ge(r->steps_log->len, 4);
    const strata_serve_step *s2 = &g_array_index(r->steps_log, strata_serve_step, 1);
    const strata_serve_step *s3 = &g_array_index(r->steps_log, strata_serve_step, 2);
    ck_assert_uint_eq(s3->decodes, 1);
    ck_assert_uint_eq(s3->prefills, 0);
    ck_assert_double_eq_tol(s3->dt, 4.2392258e-3, 1e-9);
    ck_assert_double_gt(s2->dt, 4.1032258e-3);
    ck_assert_double_lt(s2->dt, 4.2392258e-3 - 100e-6);
    double graphed = s2->dt;
    strata_serve_result_free(r);
    r = run_v0(0);
    s3 = &g_array_index(r->steps_log, strata_serve_step, 2);
    ck_assert_double_lt(s3->dt, 4.2392258e-3 - 100e-6);
    ck_assert_double_eq_tol(s3->dt, graphed, 1e-6);
    strata_serve_result_free(r);
}
END_TEST

/* The vllm-0.7 row (serve_eager.c, vLLM 0.7.3 V0), host times 4 us an ATen op, 11 us a Triton launch, 10 us an
 * entry (serve_mla_kernels.c). The tiny GQA model's one layer: attention 21 ATen + 6 entries = 84 + 60 = 144 us,
 * the dense MLP 3 + 1 = 12 + 10 = 22 us, the step 2 + 1 = 8 + 10 = 18 us: 184 us at TP1; at TP2 two all-reduces,
 * 2 ATen + 4 entries = 48 us more: 232 us. DeepSeek-V3 (61 layers, 58 MoE) at TP8: a layer's MLA calls 56 ATen,
 * 9 Triton, 7 entries = 224 + 99 + 70 = 393 us, + 48 us of all-reduces = 441 us, x 61 = 26,901 us; an MoE layer's
 * 33 ATen, 14 Triton, 7 entries = 132 + 154 + 70 = 356 us, x 58 = 20,648 us; a dense MLP's 13 ATen, 2 Triton,
 * 3 entries = 52 + 22 + 30 = 104 us, x 3 = 312 us; the step 18 us: 47,879 us. The sglang row (no MLA count, no
 * measured layer) still gives an MLA model 0. */
START_TEST(v0_07_eager_chain_by_hand)
{
    const strata_serve_eager *r7 = strata_serve_eager_find("vllm-0.7");
    ck_assert(r7);
    strata_serve_model m = strata_test_serve_tiny();
    ck_assert_double_eq_tol(strata_serve_eager_host(r7, &m, 0, 1), 184e-6, 1e-12);
    ck_assert_double_eq_tol(strata_serve_eager_host(r7, &m, 0, 2), 232e-6, 1e-12);
    strata_serve_model ds = strata_test_deepseek_v3(false, true);
    ck_assert_uint_eq(ds.layers, 61);
    ck_assert_double_eq_tol(strata_serve_eager_host(r7, &ds, 58, 8), 47879e-6, 1e-9);
    ck_assert_double_eq(strata_serve_eager_host(strata_serve_eager_find("sglang"), &ds, 58, 8), 0);
}
END_TEST

/* --max-seq-len-to-capture: vLLM V0's option, read by the rows with an eager chain (vllm-v0, vllm-v0.5); refused
 * (exit 2) elsewhere and below 1. */
START_TEST(cli_max_seq_len_to_capture)
{
    const char *engines[] = {"vllm-v0.5", "sglang-v0.5", "vllm-v0", "vllm-v0.5"};
    const char *values[] = {"8", "8", "8", "0"};
    const char *errs[] = {NULL, "--max-seq-len-to-capture: --engine sglang-v0.5 has no such option", NULL,
                          "--max-seq-len-to-capture: expected a whole number from 1 to 2147483647, got 0"};
    for (size_t i = 0; i < G_N_ELEMENTS(engines); i++) {
        strata_cli_result r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model",
                                              "llama-3-8b", "--poisson", "n=2,rate=0,prompt=8,output=4", "-q",
                                              "--engine", engines[i], "--max-seq-len-to-capture", values[i], NULL);
        ck_assert_int_eq(r.status, errs[i] ? 2 : 0);
        ck_assert_msg(!errs[i] || strstr(r.err, errs[i]), "%s", r.err);
        strata_cli_result_clear(&r);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_graph_limit");
    TCase *tc = tcase_create("serve_graph_limit");
    tcase_add_test(tc, default_limit_by_memory_and_tp);
    tcase_add_test(tc, capture_lists_by_hand);
    tcase_add_test(tc, decode_above_the_limit_runs_eager);
    tcase_add_test(tc, cli_option_where_sglang_has_it);
    tcase_add_test(tc, v0_decode_past_the_capture_limit_runs_eager);
    tcase_add_test(tc, v0_07_eager_chain_by_hand);
    tcase_add_test(tc, cli_max_seq_len_to_capture);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
