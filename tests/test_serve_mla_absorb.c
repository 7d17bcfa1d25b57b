/*
 * test_serve_mla_absorb.c: an MLA model's decodes through vLLM V0's absorbed weights W_Q_UK and W_UV_O
 * (serve_cost.h strata_serve_cost_set_mla_absorb), against values derived by hand: the nominal FLOPs a decode-only
 * step of DeepSeek-V3 at TP8 gains, what a prefill gains (0.7.3's prefill kernels), and which rows take it.
 */
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
#include "serve/serve_model.h"
#include "testutil.h"
#include "serve_fixture.h"

/* DeepSeek-V3 at TP8: 128 / 8 = 16 heads a rank, q_lora 1536, kv_lora 512, rope 64, nope 128, v 128, hidden 7168,
 * 61 layers. A decode token in one layer, absorbed: W_Q_UK 2 x 1536 x (16 x 512) = 25,165,824, W_QR 2 x 1536 x
 * (16 x 64) = 3,145,728, W_UV_O 2 x (16 x 512) x 7168 = 117,440,512, and W_UV_O's input quantized, 16 x 512 = 8,192
 * elements (one FLOP each, the elementwise row): 145,760,256. Not absorbed: q_b 2 x 1536 x (16 x 192) = 9,437,184,
 * W_UK's bmm 2 x 16 x 128 x 512 = 2,097,152, W_UV's 2 x 16 x 512 x 128 = 2,097,152, o_proj 2 x (16 x 128) x 7168 =
 * 29,360,128 and its input quantized, 2,048 elements: 42,993,664. A step of 4 decodes gains, in the work count's
 * one layer of each op (serve_cost.h strata_serve_cost_step_work), 4 x (145,760,256 - 42,993,664) = 4 x 102,766,592
 * = 411,066,368 FLOPs. */
START_TEST(decodes_gain_the_folded_products)
{
    strata_hw *hw = strata_test_load_hw("hgx-h200", NULL);
    strata_serve_model m = strata_test_deepseek_v3(true, true);
    strata_serve_chunk d[4];
    for (uint32_t i = 0; i < 4; i++)
        d[i] = (strata_serve_chunk){.id = i, .tokens = 1, .context = 2000, .samples = true};
    strata_serve_cost *c = strata_test_tp8_cost(hw, &m);
    strata_serve_work plain, folded;
    double t_plain = strata_serve_cost_step_work(c, d, 4, &plain);
    strata_serve_cost_set_mla_absorb(c, true);
    double t_folded = strata_serve_cost_step_work(c, d, 4, &folded);
    double gained = folded.flops - plain.flops;
    ck_assert_double_eq_tol(gained, 411066368.0, 1.0);
    /* the folded weights are read whole: 61 x (1536 x 8192 + 8192 x 7168 FP8 + 1536 x 1024 x 2 bf16) = 61 x
     * 74,448,896 B against 61 x (1536 x 3072 + 2048 x 7168 FP8 + 2 x 16 x 128 x 512 x 2 bf16) = 61 x 23,592,960 B:
     * 3.10 GB more, 0.64 ms at H200's 4.8 TB/s; at least half of that, at most three times */
    double extra = 61.0 * (74448896.0 - 23592960.0) / 4.8e12;
    ck_assert_double_ge(t_folded - t_plain, extra / 2.0);
    ck_assert_double_le(t_folded - t_plain, extra * 3.0);
    /* the cached step time agrees with the counted one */
    ck_assert_double_eq_tol(strata_serve_cost_step(c, d, 4), t_folded, 1e-12);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* A prefill keeps q_proj, kv_b_proj and o_proj (V0's forward runs prefill_q = self.q_proj(...)), and under the
 * same flag takes 0.7.3's MLA prefill kernels (serve_mla_prefill_v07.h). One prompt of 3,200 tokens, DeepSeek-V3
 * at TP8 (16 heads a rank), in the work count's one layer of each op: q_a_proj (2 x 3200 x 7168 x 1536) and
 * kv_a_proj_with_mqa (2 x 3200 x 7168 x 576) apart are the fused GEMM's products (2 x 3200 x 7168 x 2112 =
 * 96,888,422,400), counted once: nothing more; the second quantization, 3200 x 7168 = 22,937,600 elements (one
 * FLOP each, the elementwise row); the passes, 3 x 3200 x 64 (cos/sin) + 4.5 x 3200 x 16 x 64 (q_pe: five kernels,
 * -x2 on half) + 4.5 x 3200 x 64 (k_pe) + 3200 x 16 x 64 (written back) + 2 x 3200 x 16 x 192 (k's
 * concatenation, v padded) + 3200 x 16 x 128 (the output's slice) = 614,400 + 14,745,600 + 921,600 + 3,276,800 +
 * 19,660,800 + 6,553,600 = 45,772,800; the flash op at head width 192 instead of (192 + 128) / 2 = 160: 4 x 16 x
 * (3200 x 3200 / 2) x 32 = 10,485,760,000. In all 22,937,600 + 45,772,800 + 10,485,760,000 = 10,554,470,400 FLOPs
 * more, and a longer step. Unpadded (0.8.5 on, FA3 on Hopper: strata_serve_cost_set_mla_pad_v off): no padding
 * (3200 x 16 x 192 = 9,830,400) nor slice (6,553,600), the flash op at 160: 22,937,600 + 45,772,800 - 9,830,400 -
 * 6,553,600 = 52,326,400 FLOPs more, and a step between the two. */
START_TEST(prefill_takes_v07_kernels)
{
    strata_hw *hw = strata_test_load_hw("hgx-h200", NULL);
    strata_serve_model m = strata_test_deepseek_v3(true, true);
    strata_serve_chunk p = {.id = 0, .tokens = 3200, .context = 3200, .samples = true};
    strata_serve_cost *c = strata_test_tp8_cost(hw, &m);
    strata_serve_work plain, folded;
    double t_plain = strata_serve_cost_step_work(c, &p, 1, &plain);
    strata_serve_cost_set_mla_absorb(c, true);
    double t_folded = strata_serve_cost_step_work(c, &p, 1, &folded);
    ck_assert_double_eq_tol(folded.flops - plain.flops, 10554470400.0, 1.0);
    ck_assert_double_gt(t_folded, t_plain);
    strata_serve_work unpadded;
    strata_serve_cost_set_mla_pad_v(c, false);
    double t_unpadded = strata_serve_cost_step_work(c, &p, 1, &unpadded);
    ck_assert_double_eq_tol(unpadded.flops - plain.flops, 52326400.0, 1.0);
    ck_assert_double_gt(t_unpadded, t_plain);
    ck_assert_double_lt(t_unpadded, t_folded);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* vllm-v0 (0.6 to 0.8.5, the V0 MLA backends from 0.7.1) takes it; vllm-v0.5 (before MLA) and vllm-v1's default
 * row (none) do not. */
START_TEST(rows_that_absorb)
{
    GError *err = NULL;
    const strata_serve_engine *v0 = strata_serve_engine_find("vllm-v0", &err);
    const strata_serve_engine *v05 = strata_serve_engine_find("vllm-v0.5", &err);
    const strata_serve_engine *none = strata_serve_engine_find("none", &err);
    ck_assert_msg(v0 && v05 && none, "%s", err ? err->message : "");
    ck_assert(v0->mla_absorb);
    ck_assert(!v05->mla_absorb);
    ck_assert(!none->mla_absorb);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_mla_absorb");
    TCase *tc = tcase_create("serve_mla_absorb");
    tcase_add_test(tc, decodes_gain_the_folded_products);
    tcase_add_test(tc, prefill_takes_v07_kernels);
    tcase_add_test(tc, rows_that_absorb);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
