/*
 * test_serve_moe_route.c: the routing-side arithmetic of a served MoE
 * layer and the block-scaled FP8 input quantization
 * (sim/serve/serve_moe_route.h) against values derived by hand: the
 * experts a router reaches at DeepSeek-V3's, Qwen3's and Mixtral's
 * shapes, TensorRT-LLM's expert-map passes, one per-token-group
 * quantization's bytes, and the passes a served DeepSeek-V3 decode step
 * adds under 128 x 128 block scales.
 */
#include <math.h>
#include "serve/serve_cost.h"
#include "serve/serve_model.h"
#include "serve/serve_moe_route.h"
#include "testutil.h"
#include "serve_fixture.h"

/* e (1 - (1 - k / e)^t), rounded: DeepSeek-V3 (256 experts, top 8):
 * t = 1: 256 x 1/32 = 8; t = 16: (31/32)^16 = 0.60172, 256 x 0.39828 =
 * 101.96 -> 102 (not the 128 of a balanced assignment of 128 rows);
 * t = 64: (31/32)^64 = 0.13109, 222.44 -> 222 (not all 256); t = 200:
 * 255.55 -> 256. Qwen3-235B (128, top 8) at 16 tokens: 82.42 -> 82.
 * Mixtral (8, top 2) at 4 tokens: 8 (1 - 0.75^4) = 5.47 -> 5; at 1: 2.
 * Llama 4 Maverick (128, top 1) at 16: 15.10 -> 15. */
START_TEST(routed_experts_by_hand)
{
    ck_assert_uint_eq(strata_serve_routed_experts(256, 8, 0), 0);
    ck_assert_uint_eq(strata_serve_routed_experts(256, 8, 1), 8);
    ck_assert_uint_eq(strata_serve_routed_experts(256, 8, 16), 102);
    ck_assert_uint_eq(strata_serve_routed_experts(256, 8, 64), 222);
    ck_assert_uint_eq(strata_serve_routed_experts(256, 8, 200), 256);
    ck_assert_uint_eq(strata_serve_routed_experts(128, 8, 16), 82);
    ck_assert_uint_eq(strata_serve_routed_experts(8, 2, 4), 5);
    ck_assert_uint_eq(strata_serve_routed_experts(8, 2, 1), 2);
    ck_assert_uint_eq(strata_serve_routed_experts(128, 1, 16), 15);
    /* every expert picked by every token: all e */
    ck_assert_uint_eq(strata_serve_routed_experts(8, 8, 3), 8);
}
END_TEST

/* TensorRT-LLM's expert maps: 16 tokens, top 8, 256 experts: one fused
 * kernel over 128 routed rows, 12 x 128 + 8 x 257 = 3,592 B. 300 tokens:
 * three kernels; computeNumTokensPerBlock's size 512 (256 and below:
 * ceil(300 / b) x 256 > b; 512: 1 x 256 <= 512), e x b = 256 blocks of
 * counts; 2,400 routed rows: 8 x 2,400 + 4 x 256 = 20,224; 8 x 256 + 8 x
 * 257 = 4,104; 16 x 2,400 + 8 x 256 = 40,448. */
START_TEST(expert_map_passes_by_hand)
{
    strata_serve_route_pass p[3];
    ck_assert_uint_eq(strata_serve_expert_map_passes(16, 8, 256, p), 1);
    ck_assert_uint_eq(p[0].elements, 128);
    ck_assert_double_eq(p[0].bytes, 3592.0);
    ck_assert_uint_eq(strata_serve_expert_map_passes(300, 8, 256, p), 3);
    ck_assert_uint_eq(p[0].elements, 2400);
    ck_assert_double_eq(p[0].bytes, 20224.0);
    ck_assert_double_eq(p[1].bytes, 4104.0);
    ck_assert_double_eq(p[2].bytes, 40448.0);
}
END_TEST

/* per_token_group_quant_fp8 of DeepSeek-V3's o_proj input at TP8, 16
 * rows of 16 heads x 128 = 2,048: each element read in bf16 and written
 * in FP8 (3 B), 16 float scales a row: 16 x (6,144 + 64) = 99,328 B; of
 * q_b's 1,536-wide input: 16 x (4,608 + 48) = 74,496; a width not a
 * multiple of 128 takes a partial group's scale: 16 x 100 -> 16 x (300 +
 * 4) = 4,864. No block: 0. */
START_TEST(block_quant_bytes_by_hand)
{
    ck_assert_double_eq(strata_serve_block_quant_bytes(16, 2048, 128, 2.0, 1.0), 99328.0);
    ck_assert_double_eq(strata_serve_block_quant_bytes(16, 1536, 128, 2.0, 1.0), 74496.0);
    ck_assert_double_eq(strata_serve_block_quant_bytes(16, 100, 128, 2.0, 1.0), 4864.0);
    ck_assert_double_eq(strata_serve_block_quant_bytes(16, 2048, 0, 2.0, 1.0), 0.0);
}
END_TEST

/* A served DeepSeek-V3 decode step (FP8, TP8, 16 decodes at context 64)
 * with 128 x 128 block scales against the same step with per-tensor FP8:
 * the nominal bytes of its ops (strata_serve_work counts each op of a
 * layer once, not once a layer) grow by
 *   the attention's linears: q_b's input quantized, 74,496, and
 *     o_proj's, 99,328 (above);
 *   the dense MLP: down_proj's input, 16 x 2,304 (18,432 / 8): 16 x (6,912
 *     + 72) = 111,744, and SiluAndMul writing bf16, not FP8: 16 x 2,304 =
 *     36,864 more;
 *   the MoE layer: the shared expert's gate_up input 16 x 7,168: 16 x
 *     (21,504 + 224) = 347,648; its down input 16 x 256: 16 x (768 + 8) =
 *     12,416; its activation writing bf16: 16 x 256 = 4,096 more; the
 *     routed experts' gemm2 input, 128 rows x 256: 128 x 776 = 99,328,
 *     and their activation writing bf16: 128 x 256 = 32,768 more;
 *   818,688 B of passes, and the GEMMs' scale reads (gemm.c: 4 B x b x (m
 *   ceil(k / 128) + ceil(n / 128) ceil(k / 128))): q_a/kv_a 16 x 7,168 x
 *   2,112: 4 x (896 + 952) = 7,392; q_b 16 x 1,536 x 3,072: 4 x (192 +
 *   288) = 1,920; o 16 x 2,048 x 7,168: 4 x (256 + 896) = 4,608; W_UK 16
 *   x (16 x 128 x 512): 16 x 4 x (16 + 4) = 1,280; W_UV 16 x (16 x 512 x
 *   128): 16 x 4 x (64 + 4) = 4,352; gate_up 16 x 7,168 x 4,608: 4 x (896
 *   + 2,016) = 11,648; down 16 x 2,304 x 7,168: 4 x (288 + 1,008) =
 *   5,184; the router 16 x 7,168 x 256: 4 x (896 + 112) = 4,032; the
 *   shared expert 16 x 7,168 x 512: 4 x (896 + 224) = 4,480 and 16 x 256
 *   x 7,168: 4 x (32 + 112) = 576; 45,472 in all; the routed experts'
 *   grouped GEMMs over the 102 experts 16 tokens reach (128 rows, 2 an
 *   expert): 102 x 4 x (2 x 56 + 4 x 56) = 137,088 and 102 x 4 x (2 x 2 +
 *   56 x 2) = 47,328: 184,416 (a balanced 128 experts of one row would
 *   read 201,728);
 * 818,688 + 45,472 + 184,416 = 1,048,576 B. */
START_TEST(block_scaled_step_adds_its_quantizations)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw("hgx-h200", NULL);
    strata_serve_model m = strata_test_deepseek_v3(false, false);
    strata_serve_chunk d[16];
    for (uint32_t i = 0; i < 16; i++)
        d[i] = (strata_serve_chunk){.id = i, .tokens = 1, .context = 64, .samples = true};
    strata_serve_work plain, block;
    strata_serve_cost *c = strata_test_tp8_cost(hw, &m);
    strata_serve_cost_step_work(c, d, 16, &plain);
    strata_serve_cost_free(c);
    ck_assert(strata_serve_model_set(&m, "weight_block", "128", &err));
    c = strata_test_tp8_cost(hw, &m);
    strata_serve_cost_step_work(c, d, 16, &block);
    strata_serve_cost_free(c);
    ck_assert_double_eq(block.bytes - plain.bytes, 1048576.0);
    strata_hw_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_moe_route");
    TCase *tc = tcase_create("serve_moe_route");
    tcase_add_test(tc, routed_experts_by_hand);
    tcase_add_test(tc, expert_map_passes_by_hand);
    tcase_add_test(tc, block_quant_bytes_by_hand);
    tcase_add_test(tc, block_scaled_step_adds_its_quantizations);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
