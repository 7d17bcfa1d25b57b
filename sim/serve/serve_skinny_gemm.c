/*
 * serve_skinny_gemm.c: serve_skinny_gemm.h's kernels, as AMD's ROCm/vllm fork dispatches them.
 *
 * FP8 (wvSplitKQ): a per-tensor FP8 Linear's product, torch._scaled_mm (hipBLASLt) at any other row count, runs
 *   ops.wvSplitKQ when exactly one row comes in: ROCm/vllm@b8498bc4 (0.8.3's line, 2025-04-10)
 *   vllm/model_executor/layers/quantization/utils/w8a8_utils.py:228 calls tgemm.scaled_mm, whose
 *   vllm/model_executor/layers/tuned_gemm.py scaled_mm takes torch._scaled_mm "if (not VLLM_USE_ROCM_SKINNY_GEMM or
 *   n != 1 or not current_platform.is_rocm() or is_mi250() or is_navi())" (:108) and ops.wvSpltKQ otherwise
 *   (:125; VLLM_USE_ROCM_SKINNY_GEMM defaults True, vllm/envs.py:286-287); PR #526's head @374082eb (2025-04-29)
 *   the same in rocm_per_tensor_w8a8_scaled_mm (w8a8_utils.py:151-170: "VLLM_ROCM_USE_SKINNY_GEMM and
 *   qinput.shape[0] == 1 and qinput.shape[1] % 16 == 0"). csrc/rocm/skinny_gemms.cu (@374082eb) wvSplitKQ:
 *   "TORCH_CHECK(K_in % 16 == 0)", dim3 grid(CuCount), 16 waves of 64 lanes a workgroup, each wave a YTILE of 2
 *   output columns over all of K; one launch. The path came with ROCm/vllm PR #411 ("Optimization for quantized
 *   gemm skinny sizes", 955ba648, 2025-02-18): the fork's images before it (v0.6.3+rocm @2a3f4618 to @13434bd9 of
 *   2025-02-06) run torch._scaled_mm at one row too (serve_fp8_linear.c's vllm-rocm-fork-0.6).
 * 16-bit (wvSplitK): an unquantized Linear (the LM head of the FP8 checkpoints: ParallelLMHead's
 *   UnquantizedEmbeddingMethod.apply calls tgemm.mm, vocab_parallel_embedding.py:44 @b8498bc4) runs
 *   TunedGemm.apply_skinny's ops.wvSpltK where "inp_view.dtype == torch.float16 and k % 8 == 0" and "m > 8 and
 *   0 < n <= 4" (m the outputs, n the rows; tuned_gemm.py:79-81 @b8498bc4, the same at v0.6.3+rocm @2a3f4618), else
 *   hipBLASLt (or LLMM1 at one row where the first test fails; not reached by an LM head). The AMD pages' runs pass
 *   --dtype float16; a bf16 run takes F.linear (not told apart: strata's activations are 16-bit).
 * Rate (ESTIMATE): vllm-project/vllm PR #29937 ("Improve wvsplitK tile and balance heristics", its table's
 *   Base_300 column, the kernel before that PR on MI300X, ms) times the bf16 wvSplitK at one row: M 13312 K 16384
 *   0.110287 ms, M 16384 K 6656 0.055465 ms, M 8192 K 28672 0.116746 ms; their weights' bytes (436.2, 218.1 and
 *   469.8 MB) over the time less mi300x.ini's kernel_launch (1.9 us) are 4.025, 4.072 and 4.090 TB/s, 0.760,
 *   0.768 and 0.772 of the 5.3 TB/s pin rate: the median, 0.77 (mi300x.ini's gemm_stream_efficiency 0.55 is
 *   hipBLASLt's FP8 at one row, derived the same way). wvSplitKQ's FP8 loop is taken at the same fraction (no
 *   timing of it is published); the 0.8.3 fork's kernel is older than the PR's base (not timed either).
 */
#include "serve/serve_skinny_gemm.h"
#include "serve/serve_cost.h"

double strata_serve_skinny_gemm_or(const strata_serve_skinny_gemm *s, const strata_hw *hw, bool fp8, uint64_t m,
                                   uint64_t k, uint64_t n, double fallback)
{
    if (!s || !m || !k || !n || s->efficiency <= 0)
        return fallback;
    bool runs = fp8 ? m <= s->fp8_rows && k % 16 == 0 : m <= s->rows && n > 8 && k % 8 == 0;
    const strata_compute_spec *u = strata_hw_compute(hw, STRATA_SERVE_UNIT); /* the unit the steps run on */
    const strata_memory_spec *mem = strata_hw_memory(hw, u->operands);
    if (!runs || !mem || mem->bandwidth <= 0)
        return fallback;
    double bytes = (double)k * (double)n * (fp8 ? 1.0 : 2.0) + (double)m * (double)k * (fp8 ? 1.0 : 2.0) +
                   (double)m * (double)n * 2.0;
    return u->kernel.kernel_launch + bytes / (mem->bandwidth * s->efficiency);
}
