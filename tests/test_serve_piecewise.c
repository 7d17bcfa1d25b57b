/*
 * test_serve_piecewise.c: vLLM V1's piecewise CUDA graphs' host chain
 * (sim/serve/serve_piecewise.h) against values derived by hand: a layer's
 * and a step's calls, the chain of Llama-3-8B and of the tiny one-layer
 * model, nothing for an MLA model or on ROCm, and which engine rows run it;
 * above the largest captured size, the Inductor pieces' launches of a layer
 * and the chain of an N-layer model, and the largest captured size itself.
 */
#include <math.h>
#include "serve/serve_engine.h"
#include "serve/serve_piecewise.h"
#include "testutil.h"

/* A layer: reshape_and_cache_flash and flash_attn_varlen_func (2 ATen calls,
 * 4 us each), the attention op's entry and the next piece's replay (2
 * entries, 10 us each): 28 us; the step: the first piece's replay, 10 us. */
START_TEST(calls_by_hand)
{
    strata_serve_eager_calls l = strata_serve_piecewise_layer_calls(), s = strata_serve_piecewise_step_calls();
    ck_assert_uint_eq(l.aten, 2);
    ck_assert_uint_eq(l.triton, 0);
    ck_assert_uint_eq(l.entry, 2);
    ck_assert_uint_eq(s.aten + s.triton, 0);
    ck_assert_uint_eq(s.entry, 1);
    ck_assert_msg(fabs(strata_serve_eager_calls_s(l) - 28e-6) < 1e-15, "%.17g", strata_serve_eager_calls_s(l));
}
END_TEST

/* Llama-3-8B's 32 layers: 32 x 28 + 10 = 906 us; one layer: 38 us; on ROCm
 * (its Triton attention op not read) and for an MLA model (its own row,
 * serve_mla_kernels.h): 0. */
START_TEST(chain_by_hand)
{
    strata_serve_model m;
    ck_assert(strata_serve_model_preset(&m, "llama-3-8b", NULL));
    ck_assert_uint_eq(m.layers, 32);
    double t = strata_serve_piecewise_host(&m, false);
    ck_assert_msg(fabs(t - 906e-6) < 1e-15, "%.17g", t);
    ck_assert(strata_serve_piecewise_host(&m, true) == 0);
    m.layers = 1;
    t = strata_serve_piecewise_host(&m, false);
    ck_assert_msg(fabs(t - 38e-6) < 1e-15, "%.17g", t);
    m.kv_lora_rank = 512;
    ck_assert(strata_serve_piecewise_host(&m, false) == 0);
}
END_TEST

/* Only the default row (vllm-v1, no --engine) runs piecewise graphs. */
START_TEST(only_the_default_row)
{
    ck_assert(strata_serve_engine_row(NULL)->piecewise);
    ck_assert_str_eq(strata_serve_engine_row(NULL)->name, "vllm-v1");
    const char *rows[] = {"none", "vllm-v0", "vllm-v0.5", "sglang-v0.3", "sglang-v0.4", "sglang-v0.5", "overlap",
                          "trtllm", "trtllm-cpp", "lmdeploy-turbomind"};
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        const strata_serve_engine *e = strata_serve_engine_find(rows[i], NULL);
        ck_assert_msg(e && !e->piecewise && strata_serve_engine_row(e) == e, "%s", rows[i]);
    }
}
END_TEST

/* Above the captured size, a dense GQA layer at TP1: 4 GEMMs and the
 * attention's 2 launches (6 ATen x 4 us = 24 us), 2 add + RMSNorm,
 * SiluAndMul, RoPE's q and k and the zeroed output (6 Triton x 11 us = 66
 * us), the op's entry and the next piece's call (2 x 10 us = 20 us): 110 us.
 * TP8: two all-reduces more, ATen 2 and entries 4: 8 + 66 + 60 + 32 = 158 us.
 * Qwen3's q and k norms: 2 Triton more. */
START_TEST(inductor_layer_by_hand)
{
    strata_serve_eager_calls l = strata_serve_piecewise_inductor_layer_calls(1, false);
    ck_assert_uint_eq(l.aten, 6);
    ck_assert_uint_eq(l.triton, 6);
    ck_assert_uint_eq(l.entry, 2);
    ck_assert_msg(fabs(strata_serve_eager_calls_s(l) - 110e-6) < 1e-15, "%.17g", strata_serve_eager_calls_s(l));
    l = strata_serve_piecewise_inductor_layer_calls(8, false);
    ck_assert_uint_eq(l.aten, 8);
    ck_assert_uint_eq(l.entry, 6);
    ck_assert_msg(fabs(strata_serve_eager_calls_s(l) - 158e-6) < 1e-15, "%.17g", strata_serve_eager_calls_s(l));
    ck_assert_uint_eq(strata_serve_piecewise_inductor_layer_calls(1, true).triton, 8);
}
END_TEST

/* Llama-3-8B's 32 layers above the captured size: TP1, 32 x 110 us + the
 * step's first call and embedding + norm (10 + 11 = 21 us) = 3541 us; TP8,
 * 32 x 158 us + (1 ATen, 2 Triton, 3 entries: 4 + 22 + 30 = 56 us) = 5112
 * us; both above the 906 us within the sizes (chain_by_hand). An MoE layer
 * (one of the 32 made MoE): its MLP's 2 ATen + 1 Triton (19 us) give way to
 * serve_eager.c's vllm-0.7 moe count (16 ATen, 2 Triton, 5 entries: 64 + 22
 * + 50 = 136 us): 3541 + 117 = 3658 us. MLA or ROCm: 0. */
START_TEST(inductor_chain_by_hand)
{
    strata_serve_model m;
    ck_assert(strata_serve_model_preset(&m, "llama-3-8b", NULL));
    double t = strata_serve_piecewise_inductor_host(&m, 0, 1, false);
    ck_assert_msg(fabs(t - 3541e-6) < 1e-15, "%.17g", t);
    t = strata_serve_piecewise_inductor_host(&m, 0, 8, false);
    ck_assert_msg(fabs(t - 5112e-6) < 1e-15, "%.17g", t);
    t = strata_serve_piecewise_inductor_host(&m, 1, 1, false);
    ck_assert_msg(fabs(t - 3658e-6) < 1e-15, "%.17g", t);
    ck_assert(strata_serve_piecewise_inductor_host(&m, 0, 1, false) > strata_serve_piecewise_host(&m, false));
    ck_assert(strata_serve_piecewise_inductor_host(&m, 0, 1, true) == 0);
    m.kv_lora_rank = 512;
    ck_assert(strata_serve_piecewise_inductor_host(&m, 0, 1, false) == 0);
}
END_TEST

/* The largest captured size (vLLM 0.10.1.1: [1, 2, 4] + range(8, min(2 x
 * max_num_seqs, 512) + 1, 8), sizes above max_num_batched_tokens dropped):
 * 256 seqs, 8192 tokens: 512; 64 seqs: 128; 256 seqs, 300 tokens: 296 (the
 * last multiple of 8 <= 300); 1 seq: [1, 2, 4] + range(8, 3, 8) = [1, 2, 4],
 * so 4; a budget of 3 tokens: 2. */
START_TEST(capture_max_by_hand)
{
    ck_assert_uint_eq(strata_serve_piecewise_capture_max(256, 8192), 512);
    ck_assert_uint_eq(strata_serve_piecewise_capture_max(1024, 8192), 512);
    ck_assert_uint_eq(strata_serve_piecewise_capture_max(64, 8192), 128);
    ck_assert_uint_eq(strata_serve_piecewise_capture_max(256, 300), 296);
    ck_assert_uint_eq(strata_serve_piecewise_capture_max(1, 8192), 4);
    ck_assert_uint_eq(strata_serve_piecewise_capture_max(256, 3), 2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_piecewise");
    TCase *tc = tcase_create("serve_piecewise");
    tcase_add_test(tc, calls_by_hand);
    tcase_add_test(tc, chain_by_hand);
    tcase_add_test(tc, only_the_default_row);
    tcase_add_test(tc, inductor_layer_by_hand);
    tcase_add_test(tc, inductor_chain_by_hand);
    tcase_add_test(tc, capture_max_by_hand);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
