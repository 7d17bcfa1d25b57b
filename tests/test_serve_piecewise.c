/*
 * test_serve_piecewise.c: vLLM V1's piecewise CUDA graphs' host chain
 * (sim/serve/serve_piecewise.h) against values derived by hand: a layer's
 * and a step's calls, the chain of Llama-3-8B and of the tiny one-layer
 * model, nothing for an MLA model or on ROCm, and which engine rows run it.
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

int main(void)
{
    Suite *s = suite_create("serve_piecewise");
    TCase *tc = tcase_create("serve_piecewise");
    tcase_add_test(tc, calls_by_hand);
    tcase_add_test(tc, chain_by_hand);
    tcase_add_test(tc, only_the_default_row);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
