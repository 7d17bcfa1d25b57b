/*
 * test_serve_mla_prefill_v07.c: vLLM 0.7.3 V0's MLA prefill kernels beyond serve_cost.c's
 * (serve_mla_prefill_v07.h), against values derived by hand: the Triton tile 0.7.3 picks for kv_a_proj_with_mqa,
 * that GEMM's waves on an H200, what the split q_a / kv_a projections add, and the bytes of the prefill's passes.
 */
#include "serve/serve_mla_prefill_v07.h"
#include "serve/serve_triton_moe.h"
#include "testutil.h"
#include "serve_fixture.h"

/* configs/N=576,K=7168,device_name=NVIDIA_H200,...json (the 0.7.3 wheel): the nearest key to M. 12,800 -> 4096:
 * 64 x 64 x 128; 3,200 -> 3072: 64 x 128; 1 -> 1: 64 x 32; 1,280 is 256 from 1024 and from 1536: the smaller key,
 * 1024 (64 x 32). Another part or none named: the default, 64 x 128 x 128. */
START_TEST(kv_a_tile_by_key)
{
    strata_serve_triton_moe_tile t;
    strata_serve_mla_v07_kv_a_tile(12800, "NVIDIA H200", &t);
    ck_assert_uint_eq(t.block_m, 64);
    ck_assert_uint_eq(t.block_n, 64);
    ck_assert_uint_eq(t.block_k, 128);
    strata_serve_mla_v07_kv_a_tile(3200, "NVIDIA H200", &t);
    ck_assert_uint_eq(t.block_n, 128);
    strata_serve_mla_v07_kv_a_tile(1, "NVIDIA H200", &t);
    ck_assert_uint_eq(t.block_n, 32);
    strata_serve_mla_v07_kv_a_tile(1280, "NVIDIA H200", &t);
    ck_assert_uint_eq(t.block_n, 32);
    strata_serve_mla_v07_kv_a_tile(12800, "NVIDIA H100 80GB HBM3", &t);
    ck_assert_uint_eq(t.block_m, 64);
    ck_assert_uint_eq(t.block_n, 128);
    strata_serve_mla_v07_kv_a_tile(12800, NULL, &t);
    ck_assert_uint_eq(t.block_n, 128);
}
END_TEST

/* kv_a_proj_with_mqa on 12,800 tokens on an H200 (132 SMs, 1,979 TFLOP/s FP8): 64 x 64 tiles, cdiv(12800, 64) x
 * cdiv(576, 64) = 200 x 9 = 1,800 programs, ceil(1800 / 132) = 14 waves. A 64 x 128 x 128 k-block runs in
 * 0.75310 us and a tile's fixed part is 1.4548 of those (serve_triton_moe.h), so a 64 x 64 tile over K 7168
 * (56 k-blocks, half the work each) takes 56 x 0.75310 / 2 + 1.4548 x 0.75310 = 21.087 + 1.0956 = 22.182 us, and
 * the GEMM 14 x 22.182 = 310.5 us (within 0.5%: the two constants are rounded). */
START_TEST(kv_a_triton_waves_on_h200)
{
    strata_hw *hw = strata_test_load_hw("hgx-h200", NULL);
    ck_assert_str_eq(strata_hw_device_name(hw), "NVIDIA H200");
    strata_serve_triton_moe_tile t;
    strata_serve_mla_v07_kv_a_tile(12800, strata_hw_device_name(hw), &t);
    double s = strata_serve_mla_v07_triton_gemm_s(&t, hw, 0, 12800, 7168, 576);
    ck_assert_double_eq_tol(s, 310.5e-6, 310.5e-6 * 0.005);
    ck_assert_double_eq(strata_serve_mla_v07_triton_gemm_s(&t, hw, 0, 0, 7168, 576), 0.0);
    strata_hw_free(hw);
}
END_TEST

/* A linear whose time is its FLOPs at 1 PFLOP/s (2 m k n / 1e15 s): additive in n, so q_a's and kv_a's GEMMs cost
 * the fused one's. */
static double flops_linear(const void *ctx, uint64_t m, uint64_t k, uint64_t n)
{
    (void)ctx;
    return 2.0 * (double)m * (double)k * (double)n / 1e15;
}

/* On ROCm (mi300x-8: every block-FP8 Linear is the Triton kernel, priced by the caller's linear) the split adds
 * the second quantization only: 7 us given, 7 us back. On the H200 kv_a's GEMM is the Triton one: at 12,800 tokens
 * 310.5 us (above) against flops_linear's 2 x 12800 x 7168 x 576 / 1e15 = 105.7 us, so the extra is
 * 310.5 - 105.7 + 7 = 211.8 us. No tokens: nothing. */
START_TEST(a_proj_split_adds)
{
    strata_hw *amd = strata_test_load_hw("mi300x-8", NULL);
    strata_hw *h200 = strata_test_load_hw("hgx-h200", NULL);
    double rocm =
        strata_serve_mla_v07_a_proj_extra_s(flops_linear, NULL, amd, 0, 12800, 7168, 1536, 576, 7e-6, 128, NULL);
    ck_assert_double_eq_tol(rocm, 7e-6, 1e-12);
    double cuda =
        strata_serve_mla_v07_a_proj_extra_s(flops_linear, NULL, h200, 0, 12800, 7168, 1536, 576, 7e-6, 128, NULL);
    ck_assert_double_eq_tol(cuda, 211.8e-6, 211.8e-6 * 0.01);
    ck_assert_double_eq(
        strata_serve_mla_v07_a_proj_extra_s(flops_linear, NULL, h200, 0, 0, 7168, 1536, 576, 7e-6, 128, NULL), 0.0);
    strata_hw_free(amd);
    strata_hw_free(h200);
}
END_TEST

/* The Triton kernel is block-FP8's (apply_w8a8_block_fp8_linear): a BF16, per-tensor FP8 or AWQ DeepSeek
 * (weight_block 0) on the H200 runs kv_a as the caller's linear, so with flops_linear (additive in n) the split adds
 * only the quantization given: 7 us back, not the 211.8 us above. */
START_TEST(a_proj_triton_only_for_block_fp8)
{
    strata_hw *h200 = strata_test_load_hw("hgx-h200", NULL);
    double s = strata_serve_mla_v07_a_proj_extra_s(flops_linear, NULL, h200, 0, 12800, 7168, 1536, 576, 7e-6, 0, NULL);
    ck_assert_double_eq_tol(s, 7e-6, 1e-12);
    ck_assert_double_eq(
        strata_serve_mla_v07_a_proj_extra_s(flops_linear, NULL, h200, 0, 12800, 7168, 1536, 576, 0, 0, NULL), 0.0);
    strata_hw_free(h200);
}
END_TEST

/* flops_linear that also counts its FLOPs into the work ctx points to, as serve_cost.c's linear does. */
static double counting_linear(const void *ctx, uint64_t m, uint64_t k, uint64_t n)
{
    strata_serve_work *w = (strata_serve_work *)(uintptr_t)ctx;
    w->flops += 2.0 * (double)m * (double)k * (double)n;
    return flops_linear(NULL, m, k, n);
}

/* The split's GEMMs are the fused one's products (2 x 12800 x 7168 x (1536 + 576)), which serve_cost.c counts once:
 * the work count is left as it was (5 and 6), and the time is flops_linear's as without a count (7 us, mi300x-8). */
START_TEST(a_proj_split_counts_nothing_more)
{
    strata_hw *amd = strata_test_load_hw("mi300x-8", NULL);
    strata_serve_work w = {5.0, 6.0};
    double s = strata_serve_mla_v07_a_proj_extra_s(counting_linear, &w, amd, 0, 12800, 7168, 1536, 576, 7e-6, 128, &w);
    ck_assert_double_eq_tol(s, 7e-6, 1e-12);
    ck_assert_double_eq(w.flops, 5.0);
    ck_assert_double_eq(w.bytes, 6.0);
    strata_hw_free(amd);
}
END_TEST

/* t = context = 4 tokens, 2 heads, nope 128, rope 64, v 128, bf16 (2 B). Bytes: cos/sin gather and two
 * repeat_interleave 3 x 2 x (4 x 64) x 2 = 3,072; q_pe (n = 4 x 2 x 64 = 512): x * cos 3 x 512 x 2 = 3,072, -x2
 * 512 x 2 = 1,024, stack 2 x 512 x 2 = 2,048, times sin and the sum 2 x 3,072: 12,288; k_pe (n = 256): half of
 * that, 6,144; q_pe written back 2 x 512 x 2 = 2,048; k's concatenation (8 x 128 + 4 x 64 + 8 x 192) x 2 = 5,632;
 * v padded (8 x 128 + 8 x 192) x 2 = 5,120; the output's slice 2 x (4 x 2 x 128) x 2 = 4,096. Total 38,400 B in
 * 3 + 5 + 5 + 1 + 3 = 17 kernels. */
START_TEST(prefill_passes_bytes)
{
    ck_assert_double_eq_tol(strata_serve_mla_v07_prefill_passes_s(strata_test_bytes_pass,
                                                                NULL, 4, 4, 2, 128, 64, 128, 2.0, true),
                            38400.0, 1e-9);
    /* unpadded (0.8.5's FA3 on Hopper): no padding nor slice copy, 38,400 - 5,120 - 4,096 = 29,184 B in 15 kernels */
    ck_assert_double_eq_tol(strata_serve_mla_v07_prefill_passes_s(strata_test_bytes_pass,
                                                                NULL, 4, 4, 2, 128, 64, 128, 2.0, false),
                            29184.0, 1e-9);
    ck_assert_double_eq(strata_serve_mla_v07_prefill_passes_s(strata_test_one_pass,
                                                                NULL, 4, 4, 2, 128, 64, 128, 2.0, false), 15.0);
    ck_assert_double_eq(strata_serve_mla_v07_prefill_passes_s(strata_test_one_pass,
                                                                NULL, 4, 4, 2, 128, 64, 128, 2.0, true), 17.0);
    ck_assert_double_eq(strata_serve_mla_v07_prefill_passes_s(strata_test_one_pass,
                                                                NULL, 0, 0, 2, 128, 64, 128, 2.0, true), 0.0);
}
END_TEST

/* _pad_v: 0.4-0.8.4's row ("always") and no release pad everywhere; 0.8.5's ("unless-fa3-hopper") not on an H200
 * (compute_capability 9.0: FA3), does on an A100 (8.0: FA2) and on ROCm (mi300x-8: no vllm_flash_attn). */
START_TEST(pads_v_by_release_and_part)
{
    strata_hw *h200 = strata_test_load_hw("hgx-h200", NULL);
    strata_hw *a100 = strata_test_load_hw("a100-8", NULL);
    strata_hw *amd = strata_test_load_hw("mi300x-8", NULL);
    ck_assert(strata_serve_mla_v07_pads_v(NULL, h200));
    ck_assert(strata_serve_mla_v07_pads_v("always", h200));
    ck_assert(!strata_serve_mla_v07_pads_v("unless-fa3-hopper", h200));
    ck_assert(strata_serve_mla_v07_pads_v("unless-fa3-hopper", a100));
    ck_assert(strata_serve_mla_v07_pads_v("unless-fa3-hopper", amd));
    strata_hw_free(h200);
    strata_hw_free(a100);
    strata_hw_free(amd);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_mla_prefill_v07");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, kv_a_tile_by_key);
    tcase_add_test(tc, kv_a_triton_waves_on_h200);
    tcase_add_test(tc, a_proj_split_adds);
    tcase_add_test(tc, a_proj_triton_only_for_block_fp8);
    tcase_add_test(tc, a_proj_split_counts_nothing_more);
    tcase_add_test(tc, prefill_passes_bytes);
    tcase_add_test(tc, pads_v_by_release_and_part);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
