/*
 * test_serve_moe_gate.c: SGLang 0.5.6's routing kernels beyond one fused top-k kernel (sim/serve/serve_moe_gate.h)
 * against values derived by hand.
 */
#include <math.h>
#include "serve/serve_cost.h"
#include "serve/serve_moe_gate.h"
#include "serve/serve_model.h"
#include "testutil.h"

/* A pass as one unit of time plus its bytes in millionths: the sum counts the passes and their bytes apart. */
static double unit_pass(const void *ctx, uint64_t elements, double bytes)
{
    (void)ctx;
    (void)elements;
    return 1.0 + bytes * 1e-6;
}

static strata_serve_model routed(uint32_t experts, uint32_t groups, uint32_t top_k, uint32_t shared)
{
    strata_serve_model m;
    strata_serve_model_init(&m);
    m.experts = experts;
    m.router_groups = groups;
    m.top_k = top_k;
    m.shared_experts = shared;
    return m;
}

START_TEST(rows_by_name)
{
    GError *err = NULL;
    ck_assert_ptr_nonnull(strata_serve_moe_gate_find("sglang-0.5", NULL));
    ck_assert_ptr_null(strata_serve_moe_gate_find(NULL, NULL));
    ck_assert_ptr_null(strata_serve_moe_gate_find("sglang-0.4", &err));
    ck_assert_ptr_nonnull(err);
    ck_assert_ptr_nonnull(strstr(err->message, "sglang-0.5"));
    g_error_free(err);
}
END_TEST

/* GLM-4.6 (160 experts, not a power of two, n_group 1, top 8, one shared expert fused: k = 9), one token: passes 2-12,
 * eleven, bytes (fp32 4 B, topk entries 12 B):
 *   2: 160 x 4 + 1 x 2 x 12 = 664; 3: 2 x 2 x 12 = 48; 4: 2 x 4 + 4 = 12; 5: 4 + 12 = 16; 6: 4; 7: 8 + 4 = 12;
 *   8: 160 x 8 + 4 = 1284; 9: 160 x 4 + 9 x 12 = 748; 12: 9 x 24 = 216; 10: 2 x 9 x 12 = 216; 11: 8.
 * Sum 3,228 B: 11 + 0.003228. Without the shared expert (k = 8, no sort, no seeds): nine passes, 9: 640 + 96 = 736,
 * 12: 8 x 24 = 192, 2,968 B: 9 + 0.002968. Two tokens double every byte but the seeds' (11 + 2 x 3220e-6 + 8e-6). */
START_TEST(glm46_passes_by_hand)
{
    const strata_serve_moe_gate *g = strata_serve_moe_gate_find("sglang-0.5", NULL);
    strata_serve_model glm = routed(160, 1, 8, 1), plain = routed(160, 1, 8, 0);
    ck_assert_double_eq_tol(strata_serve_moe_gate_extra_s(g, &glm, 1, unit_pass, NULL), 11.003228, 1e-9);
    ck_assert_double_eq_tol(strata_serve_moe_gate_extra_s(g, &plain, 1, unit_pass, NULL), 9.002968, 1e-9);
    ck_assert_double_eq_tol(strata_serve_moe_gate_extra_s(g, &glm, 2, unit_pass, NULL), 11.006448, 1e-9);
}
END_TEST

/* One fused kernel, nothing beyond: DeepSeek-V3 (256 experts in 8 groups: 32 a group, a power of two:
 * moe_fused_gate), Kimi K2 (384 in one group), a softmax router (groups 0: Qwen3's topk_softmax), no row, no tokens.
 * 160 experts in 8 groups (20 a group) still take the compiled path: not a power of two. */
START_TEST(fused_gates_add_nothing)
{
    const strata_serve_moe_gate *g = strata_serve_moe_gate_find("sglang-0.5", NULL);
    strata_serve_model dsv3 = routed(256, 8, 8, 1), kimi = routed(384, 1, 8, 1), qwen3 = routed(128, 0, 8, 0);
    strata_serve_model glm = routed(160, 1, 8, 1), grouped160 = routed(160, 8, 8, 0);
    ck_assert_double_eq(strata_serve_moe_gate_extra_s(g, &dsv3, 1, unit_pass, NULL), 0.0);
    ck_assert_double_eq(strata_serve_moe_gate_extra_s(g, &kimi, 1, unit_pass, NULL), 0.0);
    ck_assert_double_eq(strata_serve_moe_gate_extra_s(g, &qwen3, 1, unit_pass, NULL), 0.0);
    ck_assert_double_eq(strata_serve_moe_gate_extra_s(NULL, &glm, 1, unit_pass, NULL), 0.0);
    ck_assert_double_eq(strata_serve_moe_gate_extra_s(g, &glm, 0, unit_pass, NULL), 0.0);
    ck_assert_double_gt(strata_serve_moe_gate_extra_s(g, &grouped160, 1, unit_pass, NULL), 9.0);
}
END_TEST

/* A served decode of one token of GLM-4.6 at TP8 on hgx-b200: 89 MoE layers (92 less 3 dense) each run the eleven
 * passes as stream passes, each its kernel's fixed 3 us (kernel_launch, dgx-h100.ini's) and its bytes (at most 1,284 B
 * at more than 7 TB/s: under 0.001 us): the step grows by 89 x 11 x 3 us = 2.937 ms, and by less than 2.938 ms. */
START_TEST(served_glm46_decode)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw("hgx-b200", NULL);
    strata_serve_model m;
    strata_serve_model_init(&m);
    ck_assert_msg(strata_serve_model_load(&m, STRATA_SOURCE_DIR "/validation/serving/models/glm-4.6.model", &err),
                  "%s", err ? err->message : "");
    strata_serve_chunk d = {.id = 0, .tokens = 1, .context = 500, .samples = true};
    strata_serve_cost *c = strata_serve_cost_new(hw, &m, 8, false, 8192, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    double plain = strata_serve_cost_step(c, &d, 1);
    strata_serve_cost_set_moe_gate(c, strata_serve_moe_gate_find("sglang-0.5", NULL));
    double gated = strata_serve_cost_step(c, &d, 1);
    strata_serve_cost_free(c);
    ck_assert_double_ge(gated - plain, 2.937e-3 - 1e-12);
    ck_assert_double_le(gated - plain, 2.938e-3);
    strata_hw_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_moe_gate");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, rows_by_name);
    tcase_add_test(tc, glm46_passes_by_hand);
    tcase_add_test(tc, fused_gates_add_nothing);
    tcase_add_test(tc, served_glm46_decode);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
