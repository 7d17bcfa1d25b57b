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

/* SGLang PR #3893's H200 rows (tp1 table, the SGLang column, 64 x 128 x
 * 128 tiles on 132 SMs): row 62, m 4096, n 24576, k 7168: 64 x 192 =
 * 12,288 tiles, 94 waves (93.09), 4,067.296 / 94 = 43.26911 us a wave of
 * 56 k-blocks; row 71, m 4096, n 32768, k 512: 64 x 256 = 16,384 tiles,
 * 125 waves (124.12), 513.504 / 125 = 4.108032 us a wave of 4 k-blocks.
 * A k-block: (43.26911 - 4.108032) / 52 = 0.7530976 us, so a SM's rate
 * 2 x 64 x 128 x 128 / 0.7530976 us = 2.784705 TFLOP/s, x 132 / 1,979
 * TFLOP/s = 0.185741; fixed 4.108032 / 0.7530976 - 4 = 1.454847 k-blocks. */
START_TEST(efficiency_from_the_measured_row)
{
    ck_assert_double_eq_tol(strata_serve_triton_moe_efficiency(), 0.185741, 1e-6);
    ck_assert_double_eq_tol(strata_serve_triton_moe_tile_fixed_blocks(), 1.454847, 1e-6);
}
END_TEST

/* A DeepSeek-V3 step of 1,000 tokens at TP8 on an H200 (132 SMs, 1,979
 * TFLOP/s FP8): 8,000 routed rows over 256 experts, BLOCK_M 64 (above);
 * a wave of 64 x 128 tiles of kb k-blocks is (kb + 1.454847) x 0.7530976
 * us (above). gate_up, K 7,168 (56 blocks of 128), N 512: 256 x 4 = 1,024
 * tiles, 8 waves of 132: 8 x 57.454847 x 0.7530976 = 346.153 us. down, K
 * 256, N 7,168: 256 x 56 = 14,336 tiles, 109 waves, 109 x 3.454847 x
 * 0.7530976 = 283.600 us (170.085 with no fixed part). 10,000 tokens,
 * 80,000 rows: 1,280 M-blocks; gate_up 5,120 tiles, 39 waves (38.79):
 * 1,687.495 us; down 71,680 tiles, 544 waves (543.03): 1,415.399 us. */
START_TEST(mma_time_at_m_8000)
{
    double peak = 1979e12;
    ck_assert_double_eq_tol(strata_serve_triton_moe_compute_s(1000, 8000, 256, 7168, 512, 132, peak) * 1e6, 346.153,
                            1e-3);
    ck_assert_double_eq_tol(strata_serve_triton_moe_compute_s(1000, 8000, 256, 256, 7168, 132, peak) * 1e6, 283.600,
                            1e-3);
    ck_assert_double_eq_tol(strata_serve_triton_moe_compute_s(10000, 80000, 256, 7168, 512, 132, peak) * 1e6,
                            1687.495, 1e-3);
    ck_assert_double_eq_tol(strata_serve_triton_moe_compute_s(10000, 80000, 256, 256, 7168, 132, peak) * 1e6,
                            1415.399, 1e-3);
    ck_assert_double_eq(strata_serve_triton_moe_compute_s(1000, 0, 256, 256, 7168, 132, peak), 0.0);
}
END_TEST

/* The model against the same table's rows not used to build it (one
 * 64 x 128 tile, (kb + 1.454847) x 0.7530976 us a wave): row 69, m 1024,
 * n 32768, k 512: 4,096 tiles, 32 waves x 5.454847 x 0.7530976 = 131.457
 * us (measured 154.784); row 61, m 2048, n 24576, k 7168: 6,144 tiles,
 * 47 waves x 57.454847 x 0.7530976 = 2,033.648 us (measured 2,157.600).
 * Routed rows = m over one expert, so moe_align pads nothing. */
START_TEST(unused_rows_of_the_table)
{
    double peak = 1979e12;
    ck_assert_double_eq_tol(strata_serve_triton_moe_compute_s(1024, 1024, 1, 512, 32768, 132, peak) * 1e6, 131.457,
                            1e-3);
    ck_assert_double_eq_tol(strata_serve_triton_moe_compute_s(1024, 2048, 1, 7168, 24576, 132, peak) * 1e6,
                            2033.648, 1e-3);
}
END_TEST

/* A served DeepSeek-V3 prefill of 10,000 tokens (FP8, 128 x 128 blocks,
 * TP8, hgx-h200) with and without the Triton kernel: the same nominal
 * work (the kernel changes time, not FLOPs or bytes), and a step longer
 * by 58 MoE layers x (the two GEMMs' Triton time less TensorRT-LLM's
 * grouped row's). The Triton MMA time of the two is 3,102.9 us a layer
 * (above), compute-bound (their bytes: 256 experts' 7,168 x 768 FP8
 * weights, 1.41 GB, 0.33 ms at 4.32 TB/s): at most 58 x 3,102.9 us =
 * 180.0 ms more less the grouped row's time, which no kernel brings under
 * its FLOPs at the FP8 peak: 256 experts x ceil(80,000 / 256) = 313 rows
 * (80,128), gate_up 2 x 80,128 x 7,168 x 512 = 588,142,084,096 FLOP and
 * down 2 x 80,128 x 256 x 7,168 = 294,071,042,048, 882,213,126,144 FLOP /
 * 1,979 TFLOP/s = 445.788 us a layer. So at most 58 x (3,102.894 -
 * 445.788) us = 154.112 ms (a step that took the Triton time without
 * giving back the grouped row's would be 180.0 ms more: this fails), and
 * at least half the Triton time, 90.0 ms (the grouped row's block-scaled
 * tiles at 0.803 of the peak less a quarter for promotion run the same
 * 882 GFLOP in well under half the Triton time). Both paths pay the same
 * launch (kernel_cost's fixed part), and both GEMMs are compute-bound
 * under Triton (their weights, 0.94 and 0.47 GB, at 4.32 TB/s: 0.22 and
 * 0.11 ms, under 1.69 and 1.42 ms). */
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
    double mma = 58.0 * (1687.495 + 1415.399) * 1e-6, floor = 58.0 * 882213126144.0 / 1979e12;
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
    tcase_add_test(tc, unused_rows_of_the_table);
    tcase_add_test(tc, served_prefill_takes_the_kernel);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
