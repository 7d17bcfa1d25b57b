/*
 * test_serve_triton_moe.c: the routed experts' grouped GEMMs as vLLM's
 * and SGLang's Triton fused_moe kernel runs them under block-scaled FP8
 * (sim/serve/serve_triton_moe.h) against values derived by hand: the
 * tuned config's tile by step size, moe_align_block_size's M-blocks, the
 * measured rate's fraction of the FP8 peak, the two GEMMs' MMA time at a
 * 1,000-token DeepSeek-V3 step (M = 8,000 routed rows) and at 10,000
 * tokens, and a served step that takes the kernel.
 */
#include <math.h>
#include "serve/serve_cost.h"
#include "serve/serve_model.h"
#include "serve/serve_triton_moe.h"
#include "testutil.h"
#include "serve_fixture.h"

/* The H200 E=256,N=256 block-FP8 config's nearest key: 1,000 tokens ->
 * 1024 (BLOCK_M 64); 768 is 256 from 512 and from 1024, and Python's
 * min() keeps the first, 512 (BLOCK_M 16); 300 -> 256 (16); 10,000 ->
 * 4096 (64); 1 -> 1 (16). BLOCK_N and BLOCK_K are 128 at every key. */
START_TEST(config_by_step_size)
{
    strata_serve_triton_moe_tile t;
    strata_serve_triton_moe_config(1000, &t);
    ck_assert_uint_eq(t.block_m, 64);
    ck_assert_uint_eq(t.block_n, 128);
    ck_assert_uint_eq(t.block_k, 128);
    strata_serve_triton_moe_config(768, &t);
    ck_assert_uint_eq(t.block_m, 16);
    strata_serve_triton_moe_config(300, &t);
    ck_assert_uint_eq(t.block_m, 16);
    strata_serve_triton_moe_config(10000, &t);
    ck_assert_uint_eq(t.block_m, 64);
    strata_serve_triton_moe_config(1, &t);
    ck_assert_uint_eq(t.block_m, 16);
}
END_TEST

/* vLLM 0.7.3's H200 file on the part it names only (get_config_file_name's device_name, get_moe_configs: no file,
 * the default): on "NVIDIA H200" 1 token takes the file's key 1, 16 x 64 x 128; on an H100 ("NVIDIA H100 80GB
 * HBM3") or a part not named (NULL) the default, 64 x 128 x 128 at every M; a name differing only in case is
 * another part's. The default and vllm-645d18fa name no device: themselves anywhere. */
START_TEST(configs_on_the_named_part)
{
    const strata_serve_triton_moe_configs *h200 = strata_serve_triton_moe_configs_find("vllm-0.7.3");
    const strata_serve_triton_moe_configs *dflt = strata_serve_triton_moe_configs_find("vllm-0.7.3-default");
    ck_assert_ptr_nonnull(h200);
    ck_assert_ptr_nonnull(dflt);
    ck_assert_ptr_eq(strata_serve_triton_moe_configs_on("vllm-0.7.3", "NVIDIA H200"), h200);
    ck_assert_ptr_eq(strata_serve_triton_moe_configs_on("vllm-0.7.3", "NVIDIA H100 80GB HBM3"), dflt);
    ck_assert_ptr_eq(strata_serve_triton_moe_configs_on("vllm-0.7.3", NULL), dflt);
    ck_assert_ptr_eq(strata_serve_triton_moe_configs_on("vllm-0.7.3", "nvidia h200"), dflt);
    ck_assert_ptr_eq(strata_serve_triton_moe_configs_on("vllm-0.7.3-default", NULL), dflt);
    ck_assert_ptr_eq(strata_serve_triton_moe_configs_on("vllm-645d18fa", NULL),
                     strata_serve_triton_moe_configs_find("vllm-645d18fa"));
    ck_assert_ptr_null(strata_serve_triton_moe_configs_on("bogus", "NVIDIA H200"));
    strata_serve_triton_moe_tile t;
    strata_serve_triton_moe_config_of(h200, 1, &t);
    ck_assert(t.block_m == 16 && t.block_n == 64 && t.block_k == 128);
    strata_serve_triton_moe_config_of(dflt, 1, &t);
    ck_assert(t.block_m == 64 && t.block_n == 128 && t.block_k == 128);
}
END_TEST

/* 8,000 routed rows over 256 experts: ceil(31.25) = 32 each; 32 rows pad
 * to one 64-row block (256 blocks) or two 16-row blocks (512). 80,000
 * rows: 313 each, 5 blocks of 64 (1,280). 8 rows over 8 experts at 16: 8
 * blocks. Nothing routed: 0. */
START_TEST(mblocks_by_hand)
{
    ck_assert_uint_eq(strata_serve_triton_moe_mblocks(8000, 256, 64), 256);
    ck_assert_uint_eq(strata_serve_triton_moe_mblocks(8000, 256, 16), 512);
    ck_assert_uint_eq(strata_serve_triton_moe_mblocks(80000, 256, 64), 1280);
    ck_assert_uint_eq(strata_serve_triton_moe_mblocks(8, 8, 16), 8);
    ck_assert_uint_eq(strata_serve_triton_moe_mblocks(0, 256, 64), 0);
}
END_TEST

/* SGLang PR #3893's H200 row: 2 x 4096 x 24576 x 7168 =
 * 1,443,109,011,456 FLOP in 4,067.296 us = 354.808 TFLOP/s, 0.179286 of
 * 1,979 TFLOP/s. */
START_TEST(efficiency_from_the_measured_row)
{
    ck_assert_double_eq_tol(strata_serve_triton_moe_efficiency(), 0.179286, 1e-6);
}
END_TEST

/* A DeepSeek-V3 step of 1,000 tokens at TP8 on an H200 (132 SMs, 1,979
 * TFLOP/s FP8): 8,000 routed rows over 256 experts, BLOCK_M 64 (above).
 * gate_up, K 7,168 (56 blocks of 128), N 512: 256 x 4 = 1,024 tiles, 8
 * waves of 132, a tile 2 x 64 x 128 x 7,168 = 117,440,512 FLOP at
 * 354.808e12 / 132 FLOP/s a SM: 8 x 117,440,512 x 132 / 354.808e12 =
 * 349.533 us (FLOP 60.1 G: 172 TFLOP/s). down, K 256, N 7,168: 256 x 56 =
 * 14,336 tiles, 109 waves, 2 x 64 x 128 x 256 = 4,194,304 FLOP a tile:
 * 170.085 us. 10,000 tokens, 80,000 rows: 1,280 M-blocks; gate_up 5,120
 * tiles, 39 waves (38.79): 39 x 117,440,512 x 132 / 354.808e12 =
 * 1,703.975 us; down 71,680 tiles, 544 waves (543.03): 848.866 us. */
START_TEST(mma_time_at_m_8000)
{
    double peak = 1979e12;
    ck_assert_double_eq_tol(strata_serve_triton_moe_compute_s(1000, 8000, 256, 7168, 512, 132, peak) * 1e6, 349.533,
                            1e-3);
    ck_assert_double_eq_tol(strata_serve_triton_moe_compute_s(1000, 8000, 256, 256, 7168, 132, peak) * 1e6, 170.085,
                            1e-3);
    ck_assert_double_eq_tol(strata_serve_triton_moe_compute_s(10000, 80000, 256, 7168, 512, 132, peak) * 1e6,
                            1703.975, 1e-3);
    ck_assert_double_eq_tol(strata_serve_triton_moe_compute_s(10000, 80000, 256, 256, 7168, 132, peak) * 1e6,
                            848.866, 1e-3);
    ck_assert_double_eq(strata_serve_triton_moe_compute_s(1000, 0, 256, 256, 7168, 132, peak), 0.0);
}
END_TEST

/* A served DeepSeek-V3 prefill of 10,000 tokens (FP8, 128 x 128 blocks,
 * TP8, hgx-h200) with and without the Triton kernel: the same nominal
 * work (the kernel changes time, not FLOPs or bytes), and a step longer
 * by 58 MoE layers x (the two GEMMs' Triton time less TensorRT-LLM's
 * grouped row's). The Triton MMA time of the two is 2,552.8 us a layer
 * (above), compute-bound (their bytes: 256 experts' 7,168 x 768 FP8
 * weights, 1.41 GB, 0.33 ms at 4.32 TB/s): at most 58 x 2,552.8 us =
 * 148.1 ms more less the grouped row's time, which no kernel brings under
 * its FLOPs at the FP8 peak: 256 experts x ceil(80,000 / 256) = 313 rows
 * (80,128), gate_up 2 x 80,128 x 7,168 x 512 = 588,142,084,096 FLOP and
 * down 2 x 80,128 x 256 x 7,168 = 294,071,042,048, 882,213,126,144 FLOP /
 * 1,979 TFLOP/s = 445.788 us a layer. So at most 58 x (2,552.841 -
 * 445.788) us = 122.209 ms (a step that took the Triton time without
 * giving back the grouped row's would be 148.1 ms more: this fails), and
 * at least half the Triton time, 74.0 ms (the grouped row's block-scaled
 * tiles at 0.803 of the peak less a quarter for promotion run the same
 * 882 GFLOP in well under half the Triton time). Both paths pay the same
 * launch (kernel_cost's fixed part), and both GEMMs are compute-bound
 * under Triton (their weights, 0.94 and 0.47 GB, at 4.32 TB/s: 0.22 and
 * 0.11 ms, under 1.70 and 0.85 ms). */
START_TEST(served_prefill_takes_the_kernel)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw("hgx-h200", NULL);
    strata_serve_model m = strata_test_deepseek_v3(false, true);
    strata_serve_chunk p = {.id = 0, .tokens = 10000, .context = 10000, .samples = true};
    strata_serve_work plain, triton;
    strata_serve_cost *c = strata_serve_cost_new(hw, &m, 8, false, 16384, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    double t_plain = strata_serve_cost_step_work(c, &p, 1, &plain);
    strata_serve_cost_set_triton_moe(c, true, NULL);
    double t_triton = strata_serve_cost_step_work(c, &p, 1, &triton);
    strata_serve_cost_free(c);
    ck_assert_double_eq(triton.flops, plain.flops);
    ck_assert_double_eq(triton.bytes, plain.bytes);
    double mma = 58.0 * (1703.975 + 848.866) * 1e-6, floor = 58.0 * 882213126144.0 / 1979e12;
    ck_assert_double_le(t_triton - t_plain, mma - floor);
    ck_assert_double_ge(t_triton - t_plain, mma / 2.0);
    strata_hw_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_triton_moe");
    TCase *tc = tcase_create("serve_triton_moe");
    tcase_add_test(tc, config_by_step_size);
    tcase_add_test(tc, configs_on_the_named_part);
    tcase_add_test(tc, mblocks_by_hand);
    tcase_add_test(tc, efficiency_from_the_measured_row);
    tcase_add_test(tc, mma_time_at_m_8000);
    tcase_add_test(tc, served_prefill_takes_the_kernel);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
