/*
 * test_serve_mla_prefill_v1.c: vLLM V1's MLA prefill kernels beyond serve_cost.c's flash op and kv_b
 * (serve_mla_prefill_v1.h), against values derived by hand: each kernel's bytes on a small chunk, whether v is padded
 * by release and part, what a DeepSeek-V3 prefill chunk gains in the work count, and which engine row takes it.
 */
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
#include "serve/serve_mla_prefill_v1.h"
#include "serve/serve_model.h"
#include "testutil.h"
#include "serve_fixture.h"

/* t = 4 new tokens, context 10 (6 prior in the cache), 2 heads, nope 128, rope 64, v 128, kv_lora 512, bf16
 * activations and cache (2 B). RoPE: q_pe 4 x 2 x 64 = 512 elements, k_pe 4 x 64 = 256: q_pe made contiguous
 * 2 x 512 x 2 = 2,048, the kernel (2 x (512 + 256) + 256 cos/sin) x 2 = 3,584, q_pe copied back 2,048: 7,680 in 3
 * kernels. concat_and_cache_mla 4 x 576 x (2 + 2) = 9,216. k's concatenation over 10 x 2 = 20 key rows:
 * (20 x 128 + 10 x 64 + 20 x 192) x 2 = 14,080. v padded (20 x 128 + 20 x 192) x 2 = 12,800. gather_cache
 * 6 x 576 x (2 + 2) = 13,824. merge_attn_states at the padded width, 4 x 2 x 192 = 1,536: 3 x 1,536 x 2 + 2 x 8 x 4
 * = 9,280. The output's slice 2 x (4 x 2 x 128) x 2 = 4,096. In all 70,976 B in 9 kernels. */
START_TEST(passes_by_hand)
{
    strata_serve_mla_v1_chunk ch = {4, 10, 2, 128, 64, 128, 512, 2.0, 2.0, true, true};
    ck_assert_double_eq_tol(strata_serve_mla_v1_prefill_passes_s(strata_test_bytes_pass, NULL, &ch), 70976.0, 1e-9);
    ck_assert_double_eq(strata_serve_mla_v1_prefill_passes_s(strata_test_one_pass, NULL, &ch), 9.0);
    /* ROCm (no fused RoPE priced): 70,976 - 7,680 = 63,296 B in 6 kernels */
    ch.fused_rope = false;
    ck_assert_double_eq_tol(strata_serve_mla_v1_prefill_passes_s(strata_test_bytes_pass, NULL, &ch), 63296.0, 1e-9);
    ck_assert_double_eq(strata_serve_mla_v1_prefill_passes_s(strata_test_one_pass, NULL, &ch), 6.0);
    /* unpadded (0.8.5 on, FA3 on Hopper): no padding nor slice, the merge at v's width 4 x 2 x 128 = 1,024:
     * 3 x 1,024 x 2 + 64 = 6,208; 7,680 + 9,216 + 14,080 + 13,824 + 6,208 = 51,008 B in 7 kernels */
    ch.fused_rope = true;
    ch.pad_v = false;
    ck_assert_double_eq_tol(strata_serve_mla_v1_prefill_passes_s(strata_test_bytes_pass, NULL, &ch), 51008.0, 1e-9);
    ck_assert_double_eq(strata_serve_mla_v1_prefill_passes_s(strata_test_one_pass, NULL, &ch), 7.0);
    /* no prior context (context = t = 4): no gather, no merge; k over 8 key rows (8 x 128 + 4 x 64 + 8 x 192) x 2 =
     * 5,632: 7,680 + 9,216 + 5,632 = 22,528 B in 5 kernels */
    ch.context = 4;
    ck_assert_double_eq_tol(strata_serve_mla_v1_prefill_passes_s(strata_test_bytes_pass, NULL, &ch), 22528.0, 1e-9);
    ck_assert_double_eq(strata_serve_mla_v1_prefill_passes_s(strata_test_one_pass, NULL, &ch), 5.0);
    ch.tokens = 0;
    ck_assert_double_eq(strata_serve_mla_v1_prefill_passes_s(strata_test_one_pass, NULL, &ch), 0.0);
}
END_TEST

/* No --engine-release: 0.8.5's rule, not padded under FA3 on an H200 (9.0), padded on an A100 (8.0: FA2) and on
 * ROCm; 0.8.4's row ("always") pads on the H200. */
START_TEST(pads_v_by_release_and_part)
{
    strata_hw *h200 = strata_test_load_hw("hgx-h200", NULL);
    strata_hw *a100 = strata_test_load_hw("a100-8", NULL);
    strata_hw *amd = strata_test_load_hw("mi300x-8", NULL);
    ck_assert(!strata_serve_mla_v1_pads_v(NULL, h200));
    ck_assert(strata_serve_mla_v1_pads_v(NULL, a100));
    ck_assert(strata_serve_mla_v1_pads_v(NULL, amd));
    ck_assert(strata_serve_mla_v1_pads_v("always", h200));
    ck_assert(!strata_serve_mla_v1_pads_v("unless-fa3-hopper", h200));
    strata_hw_free(h200);
    strata_hw_free(a100);
    strata_hw_free(amd);
}
END_TEST

/* DeepSeek-V3 at TP8 on an H200 (16 heads a rank), one chunk of 3,200 new tokens; the work count adds a pass's
 * elements (one FLOP each) and the flash op's FLOPs. No prior context, unpadded: RoPE 3200 x 16 x 64 = 3,276,800
 * twice (the copies) + 3,276,800 + 3200 x 64 = 3,481,600 (the kernel), the cache write 3200 x 576 = 1,843,200, k's
 * concatenation 3200 x 16 x 192 = 9,830,400: 21,708,800. Padded: v's padding 9,830,400 and the slice 3200 x 16 x
 * 128 = 6,553,600 more, and the flash op at head width 192 instead of 160: 4 x 16 x (3200 x 3200 / 2) x 32 =
 * 10,485,760,000 (test_serve_mla_absorb's figure): 10,523,852,800 in all. The same 3,200 tokens over 6,400 keys
 * (3,200 prior), unpadded: 10,035,200 (RoPE) + 1,843,200 (cache) + 6400 x 16 x 192 = 19,660,800 (k) + 3200 x 576 =
 * 1,843,200 (gather) + 3200 x 16 x 128 = 6,553,600 (merge): 39,936,000. */
START_TEST(chunk_gains_by_hand)
{
    strata_hw *hw = strata_test_load_hw("hgx-h200", NULL);
    strata_serve_model m = strata_test_deepseek_v3(true, true);
    strata_serve_chunk p = {.id = 0, .tokens = 3200, .context = 3200, .samples = true};
    strata_serve_chunk q = {.id = 0, .tokens = 3200, .context = 6400, .samples = true};
    strata_serve_cost *c = strata_test_tp8_cost(hw, &m);
    strata_serve_work plain, plain_q, v1, v1_q, padded;
    double t_plain = strata_serve_cost_step_work(c, &p, 1, &plain);
    strata_serve_cost_step_work(c, &q, 1, &plain_q);
    strata_serve_cost_set_mla_prefill_v1(c, true);
    double t_v1 = strata_serve_cost_step_work(c, &p, 1, &v1);
    strata_serve_cost_step_work(c, &q, 1, &v1_q);
    ck_assert_double_eq_tol(v1.flops - plain.flops, 21708800.0, 1.0);
    ck_assert_double_eq_tol(v1_q.flops - plain_q.flops, 39936000.0, 1.0);
    ck_assert_double_gt(t_v1, t_plain);
    strata_serve_cost_set_mla_pad_v(c, true);
    double t_padded = strata_serve_cost_step_work(c, &p, 1, &padded);
    ck_assert_double_eq_tol(padded.flops - plain.flops, 10523852800.0, 1.0);
    ck_assert_double_gt(t_padded, t_v1);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* V1 runs the kernels once a step over every prefill token (one _forward_prefill, varlen): two prompts of 1,600
 * tokens in one step gain exactly what one of 3,200 does (the same sums of tokens and keys, the same launches), and
 * the same 21,708,800 elements (chunk_gains_by_hand); were they launched per chunk, the two would pay 5 x 61 more
 * launches. */
START_TEST(kernels_once_a_step)
{
    strata_hw *hw = strata_test_load_hw("hgx-h200", NULL);
    strata_serve_model m = strata_test_deepseek_v3(true, true);
    strata_serve_chunk one = {.id = 0, .tokens = 3200, .context = 3200, .samples = true};
    strata_serve_chunk two[2] = {{.id = 0, .tokens = 1600, .context = 1600, .samples = true},
                                 {.id = 1, .tokens = 1600, .context = 1600, .samples = true}};
    strata_serve_cost *c = strata_test_tp8_cost(hw, &m);
    strata_serve_work w_off, w_on;
    double one_off = strata_serve_cost_step(c, &one, 1), two_off = strata_serve_cost_step_work(c, two, 2, &w_off);
    strata_serve_cost_set_mla_prefill_v1(c, true);
    double one_on = strata_serve_cost_step(c, &one, 1), two_on = strata_serve_cost_step_work(c, two, 2, &w_on);
    ck_assert_double_gt(one_on - one_off, 0.0);
    ck_assert_double_eq_tol(two_on - two_off, one_on - one_off, 1e-12);
    ck_assert_double_eq_tol(w_on.flops - w_off.flops, 21708800.0, 1.0);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* The default row (no --engine: vLLM V1) takes it; vllm-v0 (its own 0.7.3 kernels) and none do not. */
START_TEST(rows_that_take_it)
{
    GError *err = NULL;
    const strata_serve_engine *v0 = strata_serve_engine_find("vllm-v0", &err);
    const strata_serve_engine *none = strata_serve_engine_find("none", &err);
    ck_assert_msg(v0 && none, "%s", err ? err->message : "");
    ck_assert(strata_serve_engine_row(NULL)->mla_prefill_v1);
    ck_assert(!v0->mla_prefill_v1);
    ck_assert(!none->mla_prefill_v1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_mla_prefill_v1");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, passes_by_hand);
    tcase_add_test(tc, pads_v_by_release_and_part);
    tcase_add_test(tc, chunk_gains_by_hand);
    tcase_add_test(tc, kernels_once_a_step);
    tcase_add_test(tc, rows_that_take_it);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
