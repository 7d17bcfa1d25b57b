/*
 * test_serve_triton_gemm.c: a block-FP8 model's Linear layers as aiter's
 * Triton gemm_a8w8_blockscale runs them on gfx942 (sim/serve/
 * serve_triton_gemm.h) against values derived by hand: the MI300X
 * config's grid, waves and K steps, a program's time at one CU's rates at
 * a decode's 8 rows, a product whose bytes bind, and a DeepSeek-V3 decode
 * step that takes the kernel under SGLang 0.5's row on mi300x-8.
 */
#include <math.h>
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
#include "serve/serve_model.h"
#include "serve/serve_triton_gemm.h"
#include "testutil.h"
#include "serve_fixture.h"

#define ROW "aiter-triton-a8w8-blockscale-gfx942"
/* mi300x.ini: flops.f8 2,614.9 TFLOP/s, flops.f32 163.4 TFLOP/s, 304 CUs, HBM 5.3 TB/s */
#define F8 2614.9e12
#define F32 163.4e12
#define BW 5.3e12

START_TEST(row_by_name)
{
    GError *err = NULL;
    const strata_serve_triton_gemm *g = strata_serve_triton_gemm_find(ROW, &err);
    ck_assert_ptr_nonnull(g);
    ck_assert_str_eq(strata_serve_triton_gemm_name(g), ROW);
    ck_assert_ptr_null(strata_serve_triton_gemm_find("ck-a8w8-blockscale", &err));
    ck_assert_ptr_nonnull(err);
    ck_assert_ptr_nonnull(strstr(err->message, ROW)); /* the known rows listed */
    g_clear_error(&err);
}
END_TEST

/* M = 8, N = 2,112, K = 7,168 (DeepSeek-V3's fused q_a + kv_a, one decode
 * of 8 rows): cdiv(8, 128) x cdiv(2,112, 128) = 1 x 17 = 17 programs, one
 * wave on 304 CUs, 7,168 / 128 = 56 K steps. A step's MFMAs: 2 x 128^3 =
 * 4,194,304 FLOP at 2,614.9e12 / 304 = 8.601645e12 FLOP/s = 487.6165 ns
 * (the tile's whole 128 rows: rows past 8 wrap). Its bytes: 128 x (8 +
 * 2,112) + 4 x (8 + 17) = 271,460 over 17 programs, 15,968.2 B each, at
 * 5.3e12 / 17 = 311.76 GB/s: 51.2189 ns, under the MFMAs. Dequantization:
 * 2 x 3 x 16,384 = 98,304 of the FP32 peak's flops at 163.4e12 / 304 =
 * 537.5e9: 182.8912 ns. A step 670.5077 ns, the program 56 x that =
 * 37.5484 us, the product the same (one wave). */
START_TEST(decode_of_8_rows_by_hand)
{
    strata_serve_triton_gemm_time t;
    strata_serve_triton_gemm_time_of(strata_serve_triton_gemm_find(ROW, NULL), 8, 7168, 2112, 304, F8, F32, BW, &t);
    ck_assert_uint_eq(t.programs, 17);
    ck_assert_uint_eq(t.waves, 1);
    ck_assert_uint_eq(t.k_steps, 56);
    ck_assert_double_eq_tol(t.mma_s * 1e9, 487.6165, 1e-4);
    ck_assert_double_eq_tol(t.feed_s * 1e9, 51.2189, 1e-4);
    ck_assert_double_eq_tol(t.dequant_s * 1e9, 182.8912, 1e-4);
    ck_assert_double_eq_tol(t.program_s * 1e6, 37.5484, 1e-4);
    ck_assert_double_eq_tol(t.s * 1e6, 37.5484, 1e-4);
}
END_TEST

/* M = 1, N = 262,144, K = 7,168: 2,048 programs, cdiv(2,048, 304) = 7
 * waves, 56 K steps. A step's bytes 128 x 262,145 + 4 x (1 + 2,048) =
 * 33,562,756 over 2,048 programs = 16,388.1 B each, at 5.3e12 / 304 =
 * 17.434 GB/s: 939.9946 ns, over the MFMAs' 487.6165: a step 939.9946 +
 * 182.8912 = 1,122.8858 ns, the program 62.8816 us, the product 7 x that
 * = 440.1712 us (the weight, 1.879 GB, alone takes 354.4 us at 5.3 TB/s).
 * Nothing to multiply, or no CUs: 0. */
START_TEST(bytes_bind_a_wide_product)
{
    const strata_serve_triton_gemm *g = strata_serve_triton_gemm_find(ROW, NULL);
    strata_serve_triton_gemm_time t;
    strata_serve_triton_gemm_time_of(g, 1, 7168, 262144, 304, F8, F32, BW, &t);
    ck_assert_uint_eq(t.programs, 2048);
    ck_assert_uint_eq(t.waves, 7);
    ck_assert_double_eq_tol(t.feed_s * 1e9, 939.9946, 1e-4);
    ck_assert_double_eq_tol(t.s * 1e6, 440.1712, 1e-4);
    strata_serve_triton_gemm_time_of(g, 0, 7168, 2112, 304, F8, F32, BW, &t);
    ck_assert_double_eq(t.s, 0.0);
    strata_serve_triton_gemm_time_of(g, 8, 7168, 2112, 0, F8, F32, BW, &t);
    ck_assert_double_eq(t.s, 0.0);
}
END_TEST

/* A DeepSeek-V3 decode (one request, context 2,000; FP8, 128 x 128
 * blocks) at TP8 on mi300x-8 under sglang-v0.5, with and without the
 * kernel. Its Linears a layer at 1 row (the programs as above; each K
 * step 670.5077 ns, bytes never binding): q_a + kv_a 7,168 -> 2,112, 17
 * programs x 56 steps: 37.5484 us; q_b 1,536 -> 16 x 192 = 3,072, 24 x
 * 12: 8.0461; o_proj 16 x 128 = 2,048 -> 7,168, 56 x 16: 10.7281; the
 * shared expert's gate_up 7,168 -> 2 x 2,048 / 8 = 512, 4 x 56: 37.5484,
 * its down 256 -> 7,168, 56 x 2: 1.3410; 95.2120 us a MoE layer. The 3
 * dense layers' MLP: gate_up 7,168 -> 2 x 18,432 / 8 = 4,608, 36 x 56:
 * 37.5484, down 2,304 -> 7,168, 56 x 18: 12.0691; 105.9401 us a layer.
 * 58 x 95.2120 + 3 x 105.9401 = 5,840.1 us. The step grows by that less
 * what the gemm row charged for the same Linears (both pay the row's
 * launch): at most 5.8401 ms; at least that less the row's own times,
 * which at one row are their weights' bytes (58 x 40.05 MB + 3 x 84.09
 * MB = 2.575 GB) at no less than half the 5.3 TB/s pin rate, 0.972 ms:
 * 4.868 ms. The nominal work is the same. The router's GEMM stays the row's. */
START_TEST(served_decode_takes_the_kernel)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw("mi300x-8", NULL);
    strata_serve_model m = strata_test_deepseek_v3(true, true);
    strata_serve_chunk d = {.id = 0, .tokens = 1, .context = 2000, .samples = true};
    strata_serve_work with_w, without_w;
    strata_serve_cost *c = strata_test_tp8_cost(hw, &m);
    ck_assert_msg(strata_serve_engine_set_kernels(strata_serve_engine_find("sglang-v0.5", NULL), hw, c, &err), "%s",
                  err ? err->message : "");
    double with = strata_serve_cost_step_work(c, &d, 1, &with_w);
    strata_serve_cost_set_triton_gemm(c, NULL);
    double without = strata_serve_cost_step_work(c, &d, 1, &without_w);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
    ck_assert_double_eq(with_w.flops, without_w.flops);
    ck_assert_double_eq(with_w.bytes, without_w.bytes);
    ck_assert_double_le(with - without, 5840.1e-6);
    ck_assert_double_ge(with - without, 4868e-6);
}
END_TEST

/* The kernel is the ROCm build's: on hgx-h200 sglang-v0.5 keeps the gemm row (no row set, the step unchanged). */
START_TEST(cuda_hardware_keeps_the_row)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw("hgx-h200", NULL);
    strata_serve_model m = strata_test_deepseek_v3(true, true);
    strata_serve_chunk d = strata_test_decode_2000();
    strata_serve_cost *c = strata_test_tp8_cost(hw, &m);
    ck_assert(strata_serve_engine_set_kernels(strata_serve_engine_find("sglang-v0.5", NULL), hw, c, &err));
    double with = strata_serve_cost_step(c, &d, 1);
    strata_serve_cost_set_triton_gemm(c, NULL);
    ck_assert_double_eq(strata_serve_cost_step(c, &d, 1), with);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_triton_gemm");
    TCase *tc = tcase_create("serve_triton_gemm");
    tcase_add_test(tc, row_by_name);
    tcase_add_test(tc, decode_of_8_rows_by_hand);
    tcase_add_test(tc, bytes_bind_a_wide_product);
    tcase_add_test(tc, served_decode_takes_the_kernel);
    tcase_add_test(tc, cuda_hardware_keeps_the_row);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
