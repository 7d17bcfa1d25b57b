/*
 * serve_mla_prefill_v07.h: what vLLM 0.7.3's V0 runs in a DeepSeek-V3/R1 (MLA, block-FP8) prefill beyond what
 * serve_cost.c prices for an MLA prefill (issue 45, wave 47): the rows under its MLA backends (MLACommonImpl, the
 * engine row's mla_absorb; serve_cost.h strata_serve_cost_set_mla_absorb), on the prefill tokens only (the decodes'
 * kernels are serve_mla_kernels_v07.h's). Read in the vllm-0.7.3 PyPI wheel (vllm-0.7.3-cp38-abi3-manylinux1_x86_64
 * .whl, the v0.7.3 tag's build; paths under vllm/, lines that tree's):
 *
 * - q_a_proj and kv_a_proj_with_mqa are two ReplicatedLinears (model_executor/models/deepseek_v2.py:374-400, called
 *   at :290 and :299 in the MLA module's forward), where serve_cost.c prices one GEMM of width q_lora + kv_lora +
 *   rope and one input quantization. Each is apply_w8a8_block_fp8_linear (model_executor/layers/quantization/
 *   fp8.py:357-370 -> utils/fp8_utils.py:34-80), which quantizes its own input (per_token_group_quant_fp8, one
 *   kernel: the second pass over the t x hidden input) and runs cutlass_scaled_mm only where both weight dimensions
 *   are multiples of 128 and CUTLASS_BLOCK_FP8_SUPPORTED (fp8_utils.py:47-48, 58-67; w8a8_utils.py:42-53: CUDA
 *   only): kv_a_proj_with_mqa's N = kv_lora + rope = 576 is not, so on CUDA it runs the Triton
 *   w8a8_block_fp8_matmul (fp8_utils.py:68-80, 488-507: grid cdiv(M, BLOCK_SIZE_M) x cdiv(N, BLOCK_SIZE_N), the
 *   config of the nearest key to M in configs/N=576,K=7168,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=
 *   [128,128].json where the part is named so, else BLOCK_SIZE_M 64, _N and _K the block, 128 and 128,
 *   fp8_utils.py:493-503). Its time: the tiles in waves of one a SM at the per-SM rate and the fixed part that
 *   serve_triton_moe.h measured on this very kernel (SGLang's w8a8_block_fp8_matmul, which vLLM's is "Adapted
 *   from", fp8_utils.py:3; sgl-project/sglang PR #3893's H200 rows, vLLM's copy within 1%), or the gemm row's
 *   time where that is longer. On ROCm every block-FP8 Linear is the Triton kernel (CUTLASS_BLOCK_FP8_SUPPORTED
 *   False), priced by the gemm row as before: there only the split and the second quantization are added.
 * - RoPE on the prefill's q_pe and k_pe (attention/backends/mla/utils.py:452-459) is DeepseekScalingRotaryEmbedding
 *   .forward in PyTorch ops (model_executor/layers/rotary_embedding.py:681-719, GPT-J style): cos_sin_cache
 *   [positions] and two repeat_interleave (3 kernels over t x rope), for q_pe and for k_pe x * cos, -x2, stack,
 *   times sin and the sum (5 kernels each), and the assignment back into q[..., nope:] (one copy of t x heads x
 *   rope): 14 kernels, none of which serve_cost.c prices for a prefill.
 * - MLACommonImpl._forward_prefill_flash (attention/backends/mla/utils.py:479-518): kv_b_proj (priced), k =
 *   torch.cat((k_nope, k_pe.expand(...))) (:493: reads the context's k_nope and k_pe, writes context x heads x
 *   (nope + rope)), v_padded = pad(v, to q's width) (:497-498: reads context x heads x v, writes context x heads x
 *   (nope + rope)), flash_attn_varlen_func at head width nope + rope for q, k and v (:500-510: the PV product at
 *   192 wide, not v's 128: serve_cost.c's mla_prefill takes the width from mla_absorb), then the output sliced to
 *   v and reshaped (:511-513: a copy, t x heads x v read from a 192-wide tensor and written) before o_proj.
 *
 * Each kernel's bytes: an elementwise op reads each operand and writes its result once in the activations' dtype
 * (act bytes), a copy reads and writes each element once; priced by the caller's pass (serve_pass.h).
 *
 * Invariants: every time is >= 0 and 0 for no prefill tokens; pure functions of their arguments.
 */
#ifndef STRATA_SERVE_MLA_PREFILL_V07_H
#define STRATA_SERVE_MLA_PREFILL_V07_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/hw.h"
#include "serve/serve_cost.h"
#include "serve/serve_pass.h"
#include "serve/serve_triton_moe.h"

/* A Linear's m x k x n product as the caller's cost model prices it (serve_cost.c's linear). */
typedef double (*strata_serve_linear_fn)(const void *ctx, uint64_t m, uint64_t k, uint64_t n);

/* The Triton w8a8_block_fp8_matmul tile 0.7.3 picks for kv_a_proj_with_mqa (N 576, K 7168) at m rows on a part
 * named `device` (NULL: not said, the default tile 64 x 128 x 128). */
void strata_serve_mla_v07_kv_a_tile(uint64_t m, const char *device, strata_serve_triton_moe_tile *tile);

/* The m x k x n Triton block-FP8 GEMM's time on hw (unit's SMs and FP8 peak) under the tile: its waves
 * (serve_triton_moe.h strata_serve_triton_moe_tile_waves_s over one group of m rows). */
double strata_serve_mla_v07_triton_gemm_s(const strata_serve_triton_moe_tile *tile, const strata_hw *hw,
                                          uint32_t unit, uint64_t m, uint64_t k, uint64_t n);

/* What one layer's q_a_proj and kv_a_proj_with_mqa add on t prefill tokens (hidden wide; q_lora, and kv_a = kv_lora
 * + rope) against one fused GEMM and one quantization: q_a's and kv_a's GEMMs (kv_a as the Triton kernel on CUDA
 * where the weights are block-FP8, weight_block > 0; any other weights: the caller's linear) less the fused one, and
 * the second per-token-group quantization (quant_s, the caller's time for it, its work the caller's; 0 where there
 * is none). work (NULL: none), the caller's count, is left as it was: the split's products are the fused GEMM's
 * (2 t hidden q_lora + 2 t hidden kv_a), which the caller counts once, and nothing more is counted for them. */
double strata_serve_mla_v07_a_proj_extra_s(strata_serve_linear_fn linear, const void *ctx, const strata_hw *hw,
                                           uint32_t unit, uint64_t t, uint64_t hidden, uint64_t q_lora, uint64_t kv_a,
                                           double quant_s, uint32_t weight_block, strata_serve_work *work);

/* One layer's prefill kernels beyond serve_cost.c's on t prefill tokens over `context` keys in all (the chunks'
 * sum; V0 prefills whole prompts, context == t), heads a rank, widths nope, rope and v, act bytes an element:
 * the RoPE's 14 kernels, the k concatenation, and where pad_v v's padding and the output's slice copy. */
double strata_serve_mla_v07_prefill_passes_s(strata_serve_pass_fn pass, const void *ctx, uint64_t t,
                                             uint64_t context, uint64_t heads, uint64_t nope, uint64_t rope,
                                             uint64_t v, double act, bool pad_v);

/* Whether the V0 MLA backend pads v to q's width on hw, given --engine-release's "mla_pad_v" row (serve_release.h;
 * NULL: no release given). 0.7.x's MLACommonImpl pads always (attention/backends/mla/utils.py:497-498); from 0.8.0
 * (row "unless-fa3-hopper") vllm/attention/backends/mla/common.py MLACommonImpl.__init__ sets _pad_v =
 * vllm_flash_attn_version is None or not (vllm_flash_attn_version == 3 and get_device_capability()[0] == 9): no
 * padding, the PV at v's width, on CUDA hardware whose [hardware] compute_capability is 9.x (get_flash_attn_version
 * picks FA3 there); ROCm (no vllm_flash_attn) or a part whose capability is not said pads. No release: pads (the
 * behaviour before --engine-release was read here; docs/serving.md). */
bool strata_serve_mla_v07_pads_v(const char *release_row, const strata_hw *hw);

#endif
