/*
 * test_serve_mla_rocm.c: the DeepSeek decoder layer's kernels beyond
 * serve_cost.c's ops as SGLang 0.5's ROCm build launches them on gfx942
 * (sim/serve/serve_mla_rocm.h), against values derived by hand: the
 * kernels a layer and a step add, and a DeepSeek-V3 decode step of one
 * request at TP8 on 8x MI300X under sglang-v0.5, term by term.
 */
#include <math.h>
#include <string.h>
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
#include "serve/serve_mla_kernels.h"
#include "serve/serve_mla_rocm.h"
#include "serve/serve_model.h"
#include "testutil.h"
#include "serve_fixture.h"

#define HW_FILE(name) STRATA_SOURCE_DIR "/configs/hw/" name
#define ROW_ADDS strata_test_deepseek_row_adds

/* sglang-0.5-rocm-mla, every layer: 1 (the second add + RMSNorm) + 1 (the
 * second latent norm) + RoPE 3 + 5 + 5 + 1 (cat q) + 1 (cat k) + 1
 * (set_kv_buffer) + 1 (aiter's MLA reduce) + 1 (the output copy) = 20; an
 * MoE layer nothing more. DeepSeek-V3 (61 layers, 58 MoE): 20 x 61 =
 * 1,220. FP8 weights add gfx942's dequantization of W_UK and W_UV, a
 * cast and a multiply each, 4 a layer: 24, x 61 = 1,464 (a bf16 model:
 * 1,220). All in the HIP graph: no host chain. */
START_TEST(rocm_row_kernels_by_hand)
{
    GError *err = NULL;
    const strata_serve_mla_kernels *r = strata_serve_mla_rocm_find("sglang-0.5-rocm-mla", &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    ck_assert_uint_eq(strata_serve_mla_kernels_count(r, 1, 1, true), 24);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(r, 1, 0, true), 24);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(r, 61, 58, true), 1464);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(r, 61, 58, false), 1220);
    ck_assert_double_eq_tol(strata_serve_mla_kernels_host(r, 61, 58, true), 0.0, 1e-15);
    ck_assert_ptr_null(strata_serve_mla_rocm_find("sglang-0.4.5-mla", &err));
    ck_assert_msg(err && strstr(err->message, "sglang-0.5-rocm-mla"), "the error lists the known rows");
    g_clear_error(&err);
}
END_TEST

/* A DeepSeek-V3 FP8 decode of one request (context 2,000) at TP8 under an
 * engine's row on hw_file, less the same step with its MLA kernels taken
 * off again. */

/* mi300x-8 (mi300x.ini: kernel_launch 1.9 us, HBM 5.3 TB/s at
 * stream_efficiency 0.6, bf16 activations), 16 query heads a rank, one
 * token. Each entry's kernels x its width x (2 + 2 B), per layer: the norm
 * 7,168 x 4 = 28,672; the latent norm 512 x 4 = 2,048; RoPE 3 x 64 x 4 =
 * 768, 5 x 16 x 64 x 4 = 20,480, 5 x 64 x 4 = 1,280; cat q 16 x 576 x 4 =
 * 36,864; cat k 576 x 4 = 2,304; set_kv_buffer 2,304; the reduce 16 x 512
 * x 4 = 32,768; the output copy 16 x 128 x 4 = 8,192: 135,680 B a layer,
 * x 61 = 8,276,480 B. The weights' dequantization (a step's, whatever the
 * tokens): W_UK 16 x 128 x 512 = 1,048,576 elements and W_UV 16 x 512 x
 * 128 as many, 2 kernels each at 4 B an element: 16,777,216 B a layer, x
 * 61 = 1,023,410,176 B. The step adds 1,464 x 1.9 us = 2.7816 ms and
 * 1,031,686,656 B / (0.6 x 5.3e12 B/s) = 324.43 us: 3.10603 ms. */
START_TEST(sglang_rocm_deepseek_step_by_hand)
{
    double expect = 1464 * 1.9e-6 + (8276480.0 + 1023410176.0) / (0.6 * 5.3e12);
    ck_assert_double_eq_tol(ROW_ADDS(HW_FILE("mi300x-8.ini"), "sglang-v0.5"), expect,
                            1e-10);
}
END_TEST

/* The ROCm row goes only to ROCm hardware and the CUDA row only to CUDA
 * hardware: sglang-v0.4 on hgx-h200 adds the CUDA row's 3,511 kernels at 3
 * us and 43,671,808 B at 0.9 x 4.8 TB/s (test_serve_mla_kernels.c's
 * derivation), not 1,220; vLLM V1 (no --engine) names no ROCm row: 0 on
 * mi300x-8. */
START_TEST(rows_follow_the_platform)
{
    ck_assert_double_eq_tol(ROW_ADDS(HW_FILE("hgx-h200.ini"), "sglang-v0.4"),
                            3511 * 3e-6 + 43671808.0 / (0.9 * 4.8e12), 1e-10);
    ck_assert_double_eq_tol(ROW_ADDS(HW_FILE("mi300x-8.ini"), NULL), 0.0, 1e-15);
}
END_TEST

/* A GQA model takes no MLA row on ROCm either: Llama-3-8B's step on
 * mi300x-8 under sglang-v0.5 is the same with the row set or not. */
START_TEST(gqa_model_takes_no_rocm_row)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw("mi300x-8", NULL);
    strata_serve_model m;
    ck_assert(strata_serve_model_preset(&m, "llama-3-8b", &err));
    strata_serve_chunk d = strata_test_decode_2000();
    strata_serve_cost *c = strata_test_tp8_cost(hw, &m);
    double without = strata_serve_cost_step(c, &d, 1);
    strata_serve_cost_set_mla_kernels(c, strata_serve_mla_rocm_find("sglang-0.5-rocm-mla", NULL));
    ck_assert_double_eq(strata_serve_cost_step(c, &d, 1), without);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_mla_rocm");
    TCase *tc = tcase_create("serve_mla_rocm");
    tcase_add_test(tc, rocm_row_kernels_by_hand);
    tcase_add_test(tc, sglang_rocm_deepseek_step_by_hand);
    tcase_add_test(tc, rows_follow_the_platform);
    tcase_add_test(tc, gqa_model_takes_no_rocm_row);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
