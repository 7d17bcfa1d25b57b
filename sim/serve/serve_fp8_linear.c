/*
 * serve_fp8_linear.c: the rows of serve_fp8_linear.h.
 *
 * vllm-0.6-rocm-scaled-mm: vLLM 0.6.2 on ROCm (the v0.6.2 sdist from PyPI,
 *   vllm-0.6.2.tar.gz; line numbers are that tree's). An FP8 checkpoint
 *   with per-tensor scales (quant_method fp8) runs Fp8LinearMethod.apply
 *   -> apply_fp8_linear (model_executor/layers/quantization/fp8.py:
 *   257-279, use_per_token_if_dynamic False), whose weights and scales
 *   process_weights_after_loading turns into float8_e4m3fnuz on ROCm
 *   (fp8.py:226-237, normalize_e4m3fn_to_e4m3fnuz). cutlass_fp8_supported()
 *   is False on ROCm ("cutlass is not supported on Rocm",
 *   utils/w8a8_utils.py:14-17), so apply_fp8_linear takes its
 *   torch._scaled_mm branch (w8a8_utils.py:115-142):
 *   - every call quantizes its input: ops.scaled_fp8_quant(input,
 *     input_scale, num_token_padding=17) (w8a8_utils.py:121-125), for
 *     each of Llama's qkv_proj, o_proj, gate_up_proj and down_proj
 *     (models/llama.py:70-89, 134-141: all four are quantized Linears).
 *     With the checkpoint's static input scale that is one kernel,
 *     static_scaled_fp8_quant (_custom_ops.py:679-682;
 *     csrc/quantization/fp8/common.cu:255-269: grid = the input's rows,
 *     scaled_fp8_quant_kernel reading each element in the activations'
 *     dtype and writing it in FP8): t x k x (2 + 1) bytes. A dynamic
 *     scale (no input_scale) would launch torch.zeros and two kernels
 *     (common.cu:273-289: segmented_max_reduction, then the same
 *     quantization); not built (the per-tensor FP8 checkpoints for ROCm
 *     carry static input scales; which checkpoint a run used is a case's
 *     setting, not a row's);
 *   - the quantized input is allocated with max(17, rows) rows
 *     (_custom_ops.py:665-667, "we pad the input because torch._scaled_mm
 *     is more performant for matrices with batch dimension > 16"), and
 *     torch._scaled_mm (hipBLASLt) multiplies all of them, the output
 *     narrowed afterwards (w8a8_utils.py:132-142): the GEMM runs
 *     max(17, t) rows;
 *   - SiluAndMul.forward_cuda writes its output in the input's dtype
 *     (model_executor/layers/activation.py:31-38: torch.empty(...,
 *     dtype=x.dtype), ops.silu_and_mul): bf16, which down_proj's own
 *     quantization then reads (TensorRT-LLM's swiglu writes FP8 with
 *     down_proj's scale, serve_cost.c's default).
 *   qkv_proj's and gate_up_proj's quantizations are serve_cost.c's
 *   fp8_input_quant (no vLLM all-reduce fuses them); this row adds
 *   o_proj's and down_proj's, the activation's bf16 write and the padded
 *   rows. Block-scaled FP8 (weight_block) takes apply_w8a8_block_fp8_linear
 *   instead and keeps serve_cost.c's block_quant. Upstream vLLM on ROCm:
 *   --fp8-linear-rocm vllm-0.6-rocm-scaled-mm (docs/serving.md).
 *
 * vllm-rocm-fork: AMD's fork ROCm/vllm (the rocm/vllm docker images),
 *   v0.6.3+rocm (@2a3f4618; line numbers that tag's) to v0.7.3+rocm
 *   (@b309ea79) and v0.8.2+rocm (@a1c35e76: the same paths, llama.py:110,
 *   208, 308; w8a8_utils.py:201), the ROCm default of vllm-v0 and
 *   vllm-v0.5. An FP8
 *   (Fp8Config) Llama passes each Linear's input scale to the kernel that
 *   writes that input, which then writes float8_e4m3fnuz:
 *   - input_layernorm and post_attention_layernorm get qkv_proj's and
 *     gate_up_proj's input_scale (models/llama.py:279-294) and run
 *     ops.scaled_rms_norm / scaled_fused_add_rms_norm into an e4m3fnuz
 *     tensor (layers/layernorm.py:79-87; @b309ea79 :87-94);
 *   - SiluAndMul gets down_proj's input_scale (llama.py:107-108) and runs
 *     ops.scaled_silu_and_mul into e4m3fnuz (layers/activation.py:61-76);
 *   - attention gets o_proj's input_scale when attn_fp8_out
 *     (llama.py:192, 211-212; VLLM_USE_ROCM_CUSTOM_PAGED_ATTN_FP8_OUT
 *     defaults True, envs.py:259-262), and paged_attention_rocm writes
 *     e4m3fnuz in decode-only steps (attention/backends/
 *     rocm_flash_attn.py:763-795);
 *   - apply_fp8_linear quantizes (and pads to 17 rows) only an input that
 *     is not e4m3fnuz (quantization/utils/w8a8_utils.py:125-129; @b309ea79
 *     :200-208), so none of the four Linears quantizes and no GEMM is
 *     padded. Not built: a step with prefill tokens writes attention's
 *     output in bf16 (rocm_flash_attn.py:765-766), and o_proj then
 *     quantizes it (one t x hidden pass, padded to 17 rows): under V0 on
 *     ROCm (no chunked prefill) those are prefill steps, whose GEMMs
 *     dwarf it. The fork's first releases (v0.6.1_rocm @a67b65ba to
 *     v0.6.2+rocm @030374b3) had the norm and activation paths but no
 *     attn_fp8_out: their o_proj quantizes in every step (not a row).
 *   The fork's earlier images (v0.4.3_rocm @c24a4955, vLLM 0.5's era;
 *   v0.6.0_rocm @80325198) have neither: Fp8LinearMethod.apply quantizes
 *   every Linear's input with batch_dim_padding=17 (quantization/fp8.py:
 *   232-247 @c24a4955), as vllm-0.6-rocm-scaled-mm charges: vllm-v0.5
 *   keeps that row.
 *   Both fork rows run serve_skinny_gemm.h's kernels (wave 45): the LM head through wvSplitK at 1-4 rows
 *   (tuned_gemm.py apply_skinny, from v0.6.3+rocm on), and from ROCm/vllm PR #411 (955ba648, 2025-02-18: the
 *   v0.7.3+rocm image @b309ea79 on, 0.8.x's @b8498bc4) every FP8 Linear through wvSplitKQ at exactly one row:
 *   vllm-rocm-fork (the default) is that release line; vllm-rocm-fork-0.6 the images before it (v0.6.3+rocm to
 *   0.6.6's @13434bd9 of 2025-02-06, whose tuned_gemm.py has no scaled_mm), FP8 GEMMs on hipBLASLt at every row count.
 */
#include "serve/serve_fp8_linear.h"
#include "core/error.h"
#include "serve/serve_names.h"

/* ESTIMATE: the fraction of the operand memory's pin rate ROCm's skinny GEMMs stream a weight at on gfx942
 * (MI300X; MI325X taken the same): 0.77, from vLLM PR #29937's MI300X times (serve_skinny_gemm.c). */
#define SKINNY_MI300X 0.77

static const strata_serve_fp8_linear rows[] = {
    {"vllm-0.6-rocm-scaled-mm",
     "vLLM 0.6.2 on ROCm: apply_fp8_linear's torch._scaled_mm branch, a static quantization before every Linear, "
     "the GEMM's rows padded to 17, SiluAndMul writing bf16",
     17, true, true, false, {0, 0, 0.0}},
    {"vllm-rocm-fork",
     "AMD's ROCm/vllm fork, v0.7.3+rocm-v0.8.x+rocm: RMSNorm, SiluAndMul and paged attention write FP8 (e4m3fnuz), "
     "no Linear quantizes or pads its input; wvSplitKQ at one row, wvSplitK for the LM head at 1-4",
     0, false, false, true, {1, 4, SKINNY_MI300X}},
    {"vllm-rocm-fork-0.6",
     "AMD's ROCm/vllm fork, v0.6.3+rocm-0.6.6 (before PR #411): vllm-rocm-fork's FP8 writes, hipBLASLt at "
     "one row too; wvSplitK for the LM head at 1-4",
     0, false, false, true, {0, 4, SKINNY_MI300X}},
    {NULL, NULL, 0, false, false, false, {0, 0, 0.0}},
};

const strata_serve_fp8_linear *strata_serve_fp8_linear_find(const char *name, GError **err)
{
    return serve_names_lookup(SERVE_NAMES(rows, strata_serve_fp8_linear), name, STRATA_ERROR_INTERNAL, err,
                              "unknown FP8 Linear row '%s' (known: %s)");
}

const strata_serve_fp8_linear *strata_serve_fp8_linear_option(const char *name, GError **err)
{
    return serve_names_lookup(SERVE_NAMES(rows, strata_serve_fp8_linear), name, STRATA_ERROR_INPUT, err,
                              "--fp8-linear-rocm: unknown row '%s' (known: %s)");
}

uint64_t strata_serve_fp8_linear_rows(const strata_serve_fp8_linear *r, uint64_t m)
{
    return r && m && m < r->min_rows ? r->min_rows : m;
}

double strata_serve_fp8_linear_gemm(const strata_serve_fp8_linear *r, const strata_hw *hw, bool fp8, uint64_t m,
                                    uint64_t k, uint64_t n, double library)
{
    return r ? strata_serve_skinny_gemm_or(&r->skinny, hw, fp8, m, k, n, library) : library;
}

double strata_serve_fp8_linear_quant_bytes(uint64_t t, uint64_t k, double act_bytes)
{
    return (double)t * (double)k * (act_bytes + 1.0);
}
