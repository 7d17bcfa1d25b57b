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
 *
 * vllm-v1-rocm: vLLM V1 (torch.compile, Inductor) in AMD's rocm/vllm
 *   release images, which are built from ROCm/vllm release branches
 *   (NNNN_rcN), not from the fork's main: vllm-v1's row on RCCL hardware.
 *   Read at 0812_rc2 (@340ea86d, the rocm6.4.1_vllm_0.10.0_20250812
 *   image's build, serving-heldout-11.ini; paths under vllm/):
 *   - V1 turns on vLLM's own kernels "+rms_norm", "+silu_and_mul",
 *     "+quant_fp8" (config.py:4800-4808), so Fp8LinearOp's input
 *     quantization is the custom op static_scaled_fp8_quant
 *     (w8a8_utils.py:353, an input not already FP8), and vLLM's fusion
 *     passes run (enable_fusion, enable_attn_fusion default VLLM_USE_V1,
 *     config.py:4134-4136): FusionPass rewrites [fused_add_]rms_norm +
 *     static_scaled_fp8_quant into [fused_add_]rms_norm_static_fp8_quant
 *     (compilation/fusion.py:34-35, 72, 96-98; patterns for eps 1e-5 and
 *     1e-6, :586-595, FP8_DTYPE the platform's e4m3fnuz), and
 *     ActivationQuantFusionPass silu_and_mul + the quant into
 *     silu_and_mul_quant: qkv_proj's, gate_up_proj's and down_proj's
 *     inputs arrive in FP8 (inputs_fp8; SiluAndMul writes FP8, not wide);
 *   - full_cuda_graph defaults to VLLM_USE_V1 (config.py:4308), so
 *     splitting_ops is empty (:4525) and AttnFusionPass sees attention and
 *     o_proj's quantization in one graph: it writes attention's output in
 *     FP8 where the backend's fused_output_quant_supported is true, the
 *     Triton unified attention's for a static per-tensor FP8 scale
 *     (v1/attention/backends/triton_attn.py:198-201; fusion_attn.py:53-57;
 *     the passes: compilation/pass_manager.py:65-69).
 *     RocmAttentionImpl (VLLM_V1_USE_PREFILL_DECODE_ATTENTION=1, its
 *     paged_attention_rocm decodes) defines none (base: False): there o_proj
 *     quantizes its input, one kernel of t x k x (2 + 1) bytes
 *     (o_proj_quant, attn_fp8_out = triton-unified-attention);
 *   - nothing is padded: output_padding is 17 only off ROCm (w8a8_utils.py:
 *     321). The GEMM is torch._scaled_mm (hipBLASLt) on t rows, except at
 *     exactly one row with K a multiple of 16 on MI3xx with
 *     VLLM_ROCM_USE_SKINNY_GEMM (default True): rocm_per_tensor_w8a8_
 *     scaled_mm runs ops.wvSplitKQ (w8a8_utils.py:164). Its kernel
 *     (csrc/rocm/skinny_gemms.cu:1649-1700 @f8c9a385, main of 2025-08-28)
 *     launches one block of up to 16 waves per CU, holds the token's row in LDS
 *     and streams the weights once, two rows a wave at a time; no
 *     published figure gives its speed, so it keeps strata's GEMM rate
 *     (mi300x.ini's hipBLASLt figures): not modelled.
 *   The same holds at 0715_rc1 (@b432b7a2: "+rms_norm", "+silu_and_mul",
 *   config.py:4534-4537, the quantization ops.scaled_fp8_quant itself,
 *   w8a8_utils.py:351-359; enable_fusion, enable_attn_fusion,
 *   full_cuda_graph default V1, :3885-3887, 4056) and at 0909_rc3
 *   (@6663000a, 2025-09-06: config/compilation.py:78-80, 411-419, 551).
 *   Not this row (docs/serving.md, wave 43): 0.9.0.1 (@71faa188, 0610_rc2):
 *   Llama passes its scales to the norms and SiluAndMul as the V0 fork
 *   (models/llama.py:113, 333, 344), no attention fusion pass: o_proj
 *   quantizes with either attention; 0624_rc2 (@b335519f, 0.9.1): no
 *   custom op, enable_fusion matches nothing, piecewise graphs: every
 *   Linear quantizes and SiluAndMul writes the activations' dtype
 *   (vllm-0.6-rocm-scaled-mm without the padding); upstream vLLM
 *   (0.10.2's and 0.11.1's images report 0.11.0rc2.dev160+g790d22168)
 *   was not read at its commits.
 */
#include "serve/serve_fp8_linear.h"
#include "core/error.h"
#include "serve/serve_decode.h"
#include "serve/serve_names.h"

static const strata_serve_fp8_linear rows[] = {
    {"vllm-0.6-rocm-scaled-mm",
     "vLLM 0.6.2 on ROCm: apply_fp8_linear's torch._scaled_mm branch, a static quantization before every Linear, "
     "the GEMM's rows padded to 17, SiluAndMul writing bf16",
     17, true, true, false, false, NULL},
    {"vllm-rocm-fork",
     "AMD's ROCm/vllm fork, v0.6.3+rocm-v0.8.2+rocm: RMSNorm, SiluAndMul and paged attention write FP8 (e4m3fnuz), "
     "no Linear quantizes or pads its input",
     0, false, false, true, false, NULL},
    {"vllm-v1-rocm",
     "vLLM V1 in AMD's rocm/vllm release images (0.10.0's branch): vLLM's fusion passes write every Linear's input in "
     "FP8, o_proj's only with the Triton unified attention (else o_proj quantizes); no padding",
     0, false, false, true, true, "triton-unified-attention"},
    {NULL, NULL, 0, false, false, false, false, NULL},
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

bool strata_serve_fp8_linear_quantizes(const strata_serve_fp8_linear *r, bool o_proj,
                                       const strata_serve_decode_kernel *decode)
{
    if (!r || r->every_linear)
        return r != NULL;
    bool fused = r->attn_fp8_out && decode && decode == strata_serve_decode_find(r->attn_fp8_out, NULL);
    return o_proj && r->o_proj_quant && !fused;
}

double strata_serve_fp8_linear_quant_bytes(uint64_t t, uint64_t k, double act_bytes)
{
    return (double)t * (double)k * (act_bytes + 1.0);
}
