/*
 * test_serve_fp8_linear.c: vLLM 0.6.2's per-tensor FP8 Linear on ROCm
 * (sim/serve/serve_fp8_linear.h: vllm-0.6-rocm-scaled-mm, from
 * apply_fp8_linear's torch._scaled_mm branch) by hand: the GEMM's rows
 * padded to 17, one static quantization's bytes, and what the row adds to
 * a served step of vllm-v0 on mi300x-8 (RCCL: the ROCm build) and only
 * there: not on NCCL hardware, not to a bf16 or a block-FP8 model; and
 * AMD's fork (vllm-rocm-fork, vllm-v0's ROCm default), which drops the
 * default's two quantizations; the fork's skinny GEMMs (serve_skinny_gemm.h:
 * wvSplitKQ at one row, wvSplitK for the LM head at 1-4, and for no other
 * 16-bit product: not MLA's absorbed W_QR) by hand.
 */
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "hw/hw.h"
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
#include "serve/serve_fp8_linear.h"
#include "testutil.h"

static strata_hw *hw_load(const char *name)
{
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", name, NULL);
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    g_free(path);
    return hw;
}

/* num_token_padding = 17 (w8a8_utils.py:121-125): max(17, rows); 0 rows
 * stay 0 and no row leaves them as given. One quantization of 256 x 2,048
 * bf16 elements: read 2 B, write 1 B each, 256 x 2,048 x 3 = 1,572,864 B. */
START_TEST(rows_and_bytes_by_hand)
{
    GError *err = NULL;
    const strata_serve_fp8_linear *r = strata_serve_fp8_linear_find("vllm-0.6-rocm-scaled-mm", &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    ck_assert_uint_eq(strata_serve_fp8_linear_rows(r, 1), 17);
    ck_assert_uint_eq(strata_serve_fp8_linear_rows(r, 16), 17);
    ck_assert_uint_eq(strata_serve_fp8_linear_rows(r, 17), 17);
    ck_assert_uint_eq(strata_serve_fp8_linear_rows(r, 256), 256);
    ck_assert_uint_eq(strata_serve_fp8_linear_rows(r, 0), 0);
    ck_assert_uint_eq(strata_serve_fp8_linear_rows(NULL, 1), 1);
    ck_assert(fabs(strata_serve_fp8_linear_quant_bytes(256, 2048, 2.0) - 1572864.0) < 1e-6);
    ck_assert(!strata_serve_fp8_linear_find("vllm-0.6-cuda", &err));
    ck_assert_msg(err && strstr(err->message, "vllm-0.6-rocm-scaled-mm"), "%s", err ? err->message : "");
    g_clear_error(&err);
}
END_TEST

/* A step's time under the engine's kernels (row: --fp8-linear-rocm's in place of the engine's ROCm default; NULL:
 * the default), then the same model with the row taken off (set to NULL). */
static void step_with_and_without(const char *hw_file, const strata_serve_model *m, uint32_t decodes, const char *row,
                                  double *with, double *without)
{
    strata_hw *hw = hw_load(hw_file);
    GError *err = NULL;
    strata_serve_cost *c = strata_serve_cost_new(hw, m, 8, false, 256, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    ck_assert(strata_serve_engine_set_kernels(strata_serve_engine_find("vllm-v0", NULL), hw, c, &err));
    if (row)
        strata_serve_cost_set_fp8_linear(c, strata_serve_fp8_linear_option(row, NULL));
    strata_serve_chunk ch[64];
    for (uint32_t i = 0; i < decodes; i++)
        ch[i] = (strata_serve_chunk){i, 1, 512, true};
    *with = strata_serve_cost_step(c, ch, decodes);
    strata_serve_cost_set_fp8_linear(c, NULL);
    *without = strata_serve_cost_step(c, ch, decodes);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}

/* Llama 3 70B, FP8 weights, TP8, 32 decodes (over 17 rows: no padding) on
 * mi300x-8 (mi300x.ini: kernel_launch 1.9 us, 5.3 TB/s x stream
 * efficiency 0.6 = 3.18 TB/s). A rank's o_proj input is 64 / 8 x 128 =
 * 1,024 wide, down_proj's 28,672 / 8 = 3,584. The row adds per layer:
 *   o_proj's quantization    32 x 1,024 x 3 B =  98,304 B, one launch
 *   down_proj's              32 x 3,584 x 3 B = 344,064 B, one launch
 *   SiluAndMul writing bf16, not FP8: 32 x 3,584 x 1 B = 114,688 B more
 *   = 2 x 1.9 us + 557,056 B / 3.18e12 = 3.8 us + 0.17517484 us = 3.97517484 us,
 * x 80 layers = 318.013987 us.
 * One decode: the same two launches and 1 x (1,024 x 3 + 3,584 x 4) B =
 * 17,408 B (5.4742 ns) a layer, 304.437940 us in all, plus every GEMM at 17
 * rows instead of 1 (memory-bound: no less than before). */
#define UPSTREAM "vllm-0.6-rocm-scaled-mm" /* upstream vLLM on ROCm: --fp8-linear-rocm's other row */

START_TEST(vllm_v0_on_rocm_adds_the_quantizations)
{
    strata_serve_model m = {0};
    ck_assert(strata_serve_model_preset(&m, "llama-3-70b", NULL));
    m.dtype = STRATA_DTYPE_F8;
    m.kv_dtype = STRATA_DTYPE_BF16;
    double with, without;
    step_with_and_without("mi300x-8.ini", &m, 32, UPSTREAM, &with, &without);
    ck_assert_msg(fabs((with - without) - 318.013987e-6) < 1e-11, "%.17g", with - without);
    step_with_and_without("mi300x-8.ini", &m, 1, UPSTREAM, &with, &without);
    ck_assert_msg(with - without >= 304.437940e-6 - 1e-11, "%.17g", with - without);
    /* NCCL hardware: vllm-v0's CUDA build keeps serve_cost.c's default (the row is not set) */
    step_with_and_without("dgx-h100.ini", &m, 32, NULL, &with, &without);
    ck_assert_msg(with == without, "%.17g %.17g", with, without);
    /* a bf16 model, and block-scaled FP8 (apply_w8a8_block_fp8_linear): the row does not apply */
    m.dtype = STRATA_DTYPE_BF16;
    step_with_and_without("mi300x-8.ini", &m, 32, UPSTREAM, &with, &without);
    ck_assert_msg(with == without, "%.17g %.17g", with, without);
    m.dtype = STRATA_DTYPE_F8;
    m.weight_block = 128;
    step_with_and_without("mi300x-8.ini", &m, 32, UPSTREAM, &with, &without);
    ck_assert_msg(with == without, "%.17g %.17g", with, without);
}
END_TEST

/* AMD's fork (vllm-rocm-fork, vllm-v0's ROCm default): the norms write qkv_proj's and gate_up_proj's input in FP8,
 * so the two quantizations serve_cost.c's default charges (fp8_input_quant) go, and nothing else changes (no
 * padding: min_rows 0; SiluAndMul writes FP8 as the default's swiglu does; o_proj and down_proj quantize nothing
 * in either). Llama 3 8B (hidden 4,096: not fused into an all-reduce), FP8, TP8, on mi300x-8 (1.9 us a launch,
 * 3.18 TB/s as above). Per layer the default's two passes read 2 B and write 1 B of t x 4,096 each:
 *   32 decodes: 2 x (1.9 us + 32 x 4,096 x 3 B / 3.18e12) = 2 x (1.9 + 0.12365283) us = 4.04730566 us,
 *     x 32 layers = 129.51378113 us less;
 *   1 decode: 2 x (1.9 us + 12,288 B / 3.18e12 = 3.8641509 ns) x 32 = 121.84730566 us less; under
 *     vllm-rocm-fork-0.6 (hipBLASLt for the Linears at one row, as the default) the LM head also runs wvSplitK
 *     (serve_skinny_gemm.h; 16-bit, k 4,096, n 128,256 / 8 = 16,032: (4,096 + 4,096 x 16,032 + 16,032) x 2 =
 *     131,374,400 B at 5.3e12 x 0.77 in place of x 0.55 B/s, the same launch: 12.87668709 us less), 134.72399275
 *     us less in all. */
START_TEST(fork_on_rocm_drops_the_quantizations)
{
    strata_serve_model m = {0};
    ck_assert(strata_serve_model_preset(&m, "llama-3-8b", NULL));
    m.dtype = STRATA_DTYPE_F8;
    m.kv_dtype = STRATA_DTYPE_BF16;
    double with, without;
    step_with_and_without("mi300x-8.ini", &m, 32, NULL, &with, &without);
    ck_assert_msg(fabs((without - with) - 129.51378113e-6) < 1e-11, "%.17g", without - with);
    step_with_and_without("mi300x-8.ini", &m, 1, "vllm-rocm-fork-0.6", &with, &without);
    ck_assert_msg(fabs((without - with) - 134.72399275e-6) < 1e-11, "%.17g", without - with);
    /* --fp8-linear-rocm: a name not in the table is the user's error (exit 2), naming both rows */
    GError *err = NULL;
    ck_assert(!strata_serve_fp8_linear_option("upstream", &err));
    ck_assert_msg(err && err->code == STRATA_ERROR_INPUT && strstr(err->message, "--fp8-linear-rocm") &&
                  strstr(err->message, "vllm-rocm-fork") && strstr(err->message, UPSTREAM), "%s",
                  err ? err->message : "");
    g_clear_error(&err);
}
END_TEST

/* serve_skinny_gemm.h's kernels on mi300x.ini (5.3 TB/s, kernel_launch 1.9 us) at the fork's rate 0.77:
 * 5.3e12 x 0.77 = 4.081e12 B/s.
 *   wvSplitKQ, 70B TP8's qkv_proj at one row (k 8,192, n 1,280, FP8): 8,192 x 1,280 + 8,192 (the row) + 2 x 1,280
 *     (the 16-bit output) = 10,496,512 B: 1.9 us + 2.5720441 us = 4.4720441 us;
 *   wvSplitK, 70B TP8's LM head at four rows (k 8,192, n 128,256 / 8 = 16,032, 16-bit): 8,192 x 16,032 x 2 +
 *     4 x 8,192 x 2 + 4 x 16,032 x 2 = 262,668,288 + 65,536 + 128,256 = 262,862,080 B: 1.9 + 64.4111933 us =
 *     66.3111933 us;
 *   anything else returns the library's time given (here 123 s): FP8 at two rows, K not a multiple of 16, a
 *   16-bit product at five rows or of 8 outputs, no row. */
START_TEST(skinny_kernels_by_hand)
{
    strata_hw *hw = hw_load("mi300x.ini");
    GError *err = NULL;
    const strata_serve_fp8_linear *r = strata_serve_fp8_linear_find("vllm-rocm-fork", &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    double t = strata_serve_fp8_linear_gemm(r, hw, true, 1, 8192, 1280, 123.0);
    ck_assert_msg(fabs(t - 4.4720441e-6) < 1e-12, "%.17g", t);
    t = strata_serve_fp8_linear_gemm(r, hw, false, 4, 8192, 16032, 123.0);
    ck_assert_msg(fabs(t - 66.3111933e-6) < 1e-12, "%.17g", t);
    ck_assert(strata_serve_fp8_linear_gemm(r, hw, true, 2, 8192, 1280, 123.0) == 123.0);
    ck_assert(strata_serve_fp8_linear_gemm(r, hw, true, 1, 8200, 1280, 123.0) == 123.0);
    ck_assert(strata_serve_fp8_linear_gemm(r, hw, false, 5, 8192, 16032, 123.0) == 123.0);
    ck_assert(strata_serve_fp8_linear_gemm(r, hw, false, 1, 8192, 8, 123.0) == 123.0);
    ck_assert(strata_serve_fp8_linear_gemm(NULL, hw, true, 1, 8192, 1280, 123.0) == 123.0);
    /* the images before PR #411 keep hipBLASLt for FP8 at one row, and the LM head's wvSplitK */
    const strata_serve_fp8_linear *old = strata_serve_fp8_linear_find("vllm-rocm-fork-0.6", &err);
    ck_assert_msg(old, "%s", err ? err->message : "");
    ck_assert(strata_serve_fp8_linear_gemm(old, hw, true, 1, 8192, 1280, 123.0) == 123.0);
    t = strata_serve_fp8_linear_gemm(old, hw, false, 4, 8192, 16032, 123.0);
    ck_assert_msg(fabs(t - 66.3111933e-6) < 1e-12, "%.17g", t);
    strata_hw_free(hw);
}
END_TEST

/* One decode of Llama 3 70B FP8 at TP8 under vllm-v0 on mi300x-8: vllm-rocm-fork runs the four Linears through
 * wvSplitKQ, vllm-rocm-fork-0.6 through hipBLASLt (the gemm row at gemm_stream_efficiency 0.55: 2.915e12 B/s, the
 * same launch); nothing else differs (both run the LM head's wvSplitK). A layer's FP8 bytes at one row:
 *   qkv_proj 8,192 x 1,280 + 8,192 + 2 x 1,280 = 10,496,512; o_proj 1,024 x 8,192 + 1,024 + 2 x 8,192 = 8,406,016;
 *   gate_up 8,192 x 7,168 + 8,192 + 2 x 7,168 = 58,742,784; down 3,584 x 8,192 + 3,584 + 2 x 8,192 = 29,380,096;
 *   107,025,408 B x (1 / 2.915e12 - 1 / 4.081e12) = 10.4901160 us a layer, x 80 = 839.2092762 us less.
 * At two decodes the rows are the same (hipBLASLt both). */
START_TEST(fork_runs_one_row_through_wvsplitkq)
{
    strata_serve_model m = {0};
    ck_assert(strata_serve_model_preset(&m, "llama-3-70b", NULL));
    m.dtype = STRATA_DTYPE_F8;
    m.kv_dtype = STRATA_DTYPE_BF16;
    double skinny, ignored, library;
    step_with_and_without("mi300x-8.ini", &m, 1, "vllm-rocm-fork", &skinny, &ignored);
    step_with_and_without("mi300x-8.ini", &m, 1, "vllm-rocm-fork-0.6", &library, &ignored);
    ck_assert_msg(fabs((library - skinny) - 839.2092762e-6) < 1e-11, "%.17g", library - skinny);
    step_with_and_without("mi300x-8.ini", &m, 2, "vllm-rocm-fork", &skinny, &ignored);
    step_with_and_without("mi300x-8.ini", &m, 2, "vllm-rocm-fork-0.6", &library, &ignored);
    ck_assert_msg(skinny == library, "%.17g %.17g", skinny, library);
}
END_TEST

/* The fork's wvSplitK runs the LM head only (tuned_gemm.mm from vocab_parallel_embedding.py:44), not the absorbed
 * MLA's W_QR, though both are 16-bit products of few rows. DeepSeek-V3 with per-tensor FP8 weights (no
 * weight_block: the fork's row applies), TP8, its decodes absorbed, one decode on mi300x-8 under vllm-rocm-fork-0.6
 * against the same row with wvSplitK off (skinny.rows 0); the difference is the LM head's alone:
 *   k 7,168, n 129,280 / 8 = 16,160, one row: (7,168 x 16,160 + 7,168 + 16,160) x 2 = 231,716,416 B at
 *   5.3e12 x 0.55 = 2.915e12 (hipBLASLt) in place of 5.3e12 x 0.77 = 4.081e12 B/s (the same launch):
 *   231,716,416 x (1 / 2.915e12 - 1 / 4.081e12) = 22.711729086 us.
 * Were W_QR (k q_lora 1,536, n 128 / 8 heads x rope 64 = 1,024: 3,150,848 B, 0.3088309728 us a layer) taken too,
 * the 61 layers would add 18.838689341 us. */
START_TEST(fork_skinny_runs_the_lm_head_not_w_qr)
{
    strata_serve_model m = {0};
    GError *err = NULL;
    ck_assert(strata_serve_model_preset(&m, "deepseek-v3", NULL));
    ck_assert_msg(strata_serve_model_set(&m, "dtype", "f8", &err), "%s", err ? err->message : "");
    strata_hw *hw = hw_load("mi300x-8.ini");
    strata_serve_cost *c = strata_serve_cost_new(hw, &m, 8, false, 256, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    ck_assert(strata_serve_engine_set_kernels(strata_serve_engine_find("vllm-v0", NULL), hw, c, &err));
    strata_serve_cost_set_mla_absorb(c, true);
    const strata_serve_fp8_linear *fork = strata_serve_fp8_linear_option("vllm-rocm-fork-0.6", NULL);
    strata_serve_fp8_linear no_split_k = *fork;
    no_split_k.skinny.rows = 0;
    strata_serve_chunk d = {0, 1, 2000, true};
    strata_serve_cost_set_fp8_linear(c, fork);
    double with = strata_serve_cost_step(c, &d, 1);
    strata_serve_cost_set_fp8_linear(c, &no_split_k);
    double without = strata_serve_cost_step(c, &d, 1);
    ck_assert_msg(fabs((without - with) - 22.711729086e-6) < 1e-11, "%.17g", without - with);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_fp8_linear");
    TCase *tc = tcase_create("serve_fp8_linear");
    tcase_add_test(tc, rows_and_bytes_by_hand);
    tcase_add_test(tc, vllm_v0_on_rocm_adds_the_quantizations);
    tcase_add_test(tc, fork_on_rocm_drops_the_quantizations);
    tcase_add_test(tc, skinny_kernels_by_hand);
    tcase_add_test(tc, fork_runs_one_row_through_wvsplitkq);
    tcase_add_test(tc, fork_skinny_runs_the_lm_head_not_w_qr);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
