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
 *   instead and keeps serve_cost.c's block_quant.
 */
#include "serve/serve_fp8_linear.h"
#include "core/error.h"
#include "serve/serve_names.h"

static const strata_serve_fp8_linear rows[] = {
    {"vllm-0.6-rocm-scaled-mm",
     "vLLM 0.6.2 on ROCm: apply_fp8_linear's torch._scaled_mm branch, a static quantization before every Linear, "
     "the GEMM's rows padded to 17, SiluAndMul writing bf16",
     17, true, true},
    {NULL, NULL, 0, false, false},
};

const strata_serve_fp8_linear *strata_serve_fp8_linear_find(const char *name, GError **err)
{
    return serve_names_lookup(SERVE_NAMES(rows, strata_serve_fp8_linear), name, STRATA_ERROR_INTERNAL, err,
                              "unknown FP8 Linear row '%s' (known: %s)");
}

uint64_t strata_serve_fp8_linear_rows(const strata_serve_fp8_linear *r, uint64_t m)
{
    return r && m && m < r->min_rows ? r->min_rows : m;
}

double strata_serve_fp8_linear_quant_bytes(uint64_t t, uint64_t k, double act_bytes)
{
    return (double)t * (double)k * (act_bytes + 1.0);
}
