/*
 * serve_fused_moe_bf16.h: vLLM's and SGLang's Triton fused_moe kernel on unquantized
 * (bf16/fp16) routed experts at the default config a release falls back
 * to where it ships no tuned file for the layer's shape (issue 45, wave
 * 40: Qwen2-57B-A14B at TP2 under vLLM 0.4.2, batch 1).
 *
 * What vLLM 0.4.2 runs (the vllm 0.4.2 wheel from PyPI,
 * vllm/model_executor/layers/fused_moe/fused_moe.py):
 *   l. 401-407: configs = get_moe_configs(E, w2.shape[2], None), the file
 *   configs/E={E},N={N},device_name={torch.cuda.get_device_name()}.json
 *   (l. 275-278, 297-304), N the intermediate width one rank holds; the
 *   wheel ships 19 files, E=8 with N 1792, 2048, 3584, 4096, 7168 and
 *   E=16 with N 1344, 2688 (A100-SXM4-40GB/80GB, H100_80GB_HBM3; two
 *   H100 float8 files): no E=64 file, so Qwen2-57B-A14B (64 experts,
 *   moe_intermediate_size 2560, N = 1280 at TP2) takes
 *   l. 408-423, the default: M <= E tokens: BLOCK_SIZE_M 16, BLOCK_SIZE_N
 *   32, BLOCK_SIZE_K 64, GROUP_SIZE_M 1; else 64 x 64 x 32, GROUP_SIZE_M 8;
 *   num_warps and num_stages unset (Triton's defaults).
 *   l. 206, 243-244: cdiv(topk x M + E (BLOCK_SIZE_M - 1), BLOCK_SIZE_M) x
 *   cdiv(N_out, BLOCK_SIZE_N) programs; l. 101-103: those past
 *   num_tokens_post_padded return at once; at M = 1 one M-block an expert
 *   reached runs, each program's K loop (l. 128-148) cdiv(K, 64) steps of a
 *   64 x 32 slice of the expert's weight (4 KB in bf16) and a tl.dot.
 *   qwen2_moe.py l. 152-177 (the same wheel): the shared expert is a dense
 *   Qwen2MoeMLP (its own GEMMs, serve_cost.c's shared MLP), the gate a
 *   ReplicatedLinear, one all-reduce after the sum.
 *
 * Its time: at a small tile a program's K loop is a serial chain of steps
 * that the kernel's bytes do not bound: vllm-project/vllm PR #40542
 * (varjoranta, 2026-04-21) times the fused MoE at the default config on one
 * A100-SXM4-80GB, bf16, E = 64, N = 1408, hidden 2048, top_k 6: 183.5 us
 * at M = 1, where the six experts' 3 x 1408 x 2048 bf16 weights (103.8 MB)
 * stream in 50.9 us at the A100's 2,039 GB/s. Its two GEMMs' K loops are
 * cdiv(2048, 64) + cdiv(1408, 64) = 32 + 22 = 54 steps: 3.398 us a step.
 * ESTIMATE: every program of a GEMM runs at once (528 and 384 programs
 * there on 108 SMs; 640 and 896 for Qwen2-57B at TP2), so a GEMM takes
 * its K steps x the step, or its bytes at the stream rate if slower (the
 * caller's grouped-GEMM row); the small kernels around the GEMMs (the
 * align, silu_and_mul, the sum) are in the 183.5 us, counted once more by
 * the caller (a few us a layer); the step carries from that run's Triton
 * 3 to 0.4.2's Triton 2.3 and to other K. Cross-check, not used: PR #19049
 * (A100-PCIE-40GB, E = 128, N = 768, hidden 2048, top_k 8, the same
 * default tile at M = 1) 109.21 us over 32 + 12 steps, 2.48 us a step. At
 * M = 4 and 16 the same run's 266.2 and 542.6 us lie above this chain's
 * and the stream's slower (183.5 and about 430 us): the model is short
 * there, not fitted to it. Only Ampere (the step's part); M > E (the
 * large default tile) is not modelled (the caller's grouped row).
 *
 * sglang-0.5 (issue 45, wave 44; the sglang 0.5.6 wheel from PyPI, which
 * set 14's Qwen3-235B-A22B and set 21's GLM-4.6 runs on 8x B200 name):
 *   which kernel: server_args.py l. 409, moe_runner_backend = "auto"; the
 *   sm100 rules that change it (l. 1052-1057 DeepSeek-V3, l. 1148-1150
 *   Llama 4, l. 1214-1232 Qwen3-MoE, l. 1254-1259 Qwen3-Next) all need an
 *   FP8/FP4 quantization, so unquantized experts keep "auto", and
 *   layers/quantization/unquant.py l. 236-241 (UnquantizedFusedMoEMethod.
 *   create_moe_runner) then runs MoeRunnerBackend.TRITON, fused_moe's
 *   Triton kernel (l. 328-336, not AITER: CUDA). M = the step's tokens
 *   (fused_moe.py l. 420-431, chunks of 64K). strata priced these
 *   experts as TensorRT-LLM's CUTLASS kernels (the grouped row) before.
 *   which config: fused_moe_triton_config.py l. 203-244,
 *   try_get_optimal_moe_config: E, _, N = w2.shape, the file
 *   E={E},N={N},device_name={get_device_name()}.json (l. 19-34) looked up in
 *   configs/triton_{version} (torch 2.9.1's Triton 3.5.1 has no directory,
 *   l. 80-88) then triton_3_4_0, 3_3_1, 3_2_0, 3_1_0 (l. 61, 99-115); none:
 *   get_default_config (l. 138-200), unquantized: M <= E 16 x 32 x 64
 *   (l. 193-199), else 64 x 64 x 32, GROUP_SIZE_M 8 (l. 186-191), the
 *   same tiles as vLLM 0.4.2's. The wheel's unquantized files for a B200
 *   are E=16,N=1024 (triton_3_3_0), E=256,N=256, E=256,N=512 and
 *   E=512,N=256 (triton_3_4_0): Qwen3-235B-A22B at TP8 (E=128, N = 1536 /
 *   8 = 192) and GLM-4.6 (E = 160 + 1 fused shared = 161, N = 192) take
 *   the default. Its file list holds for Blackwell only (the row's part;
 *   on Ampere and Hopper the wheel ships tuned files for many shapes,
 *   E=128,N=192 among them, whose tiles are not read: the grouped row).
 *   A file is found only where the hardware names the device the file's
 *   name gives (hw.h strata_hw_device_name), as serve_triton_moe.h's rows.
 *   its time: serve_triton_moe.h's tile waves (one tile a SM, 2 BM BN K
 *   plus wave 43's fixed prologue/epilogue, at the measured fraction of
 *   the dense peak a SM), here at the unit's BF16 peak. ESTIMATE: the
 *   fraction and the fixed part measured on the block-FP8 kernel on an
 *   H200 carry to the unscaled BF16 K loop on a B200 (both are Triton's
 *   tl.dot loop over gathered A rows; an unscaled loop can chain its MMAs,
 *   so this may be slow). Each GEMM is the slower of that and the grouped
 *   row (the weights' stream). The kernels around the GEMMs stay the
 *   caller's (TensorRT-LLM's seven-kernel list, serve_moe_route.h).
 *   the fused shared expert: models/glm4_moe.py l. 1031-1059
 *   (determine_num_fused_shared_experts): on CUDA from sm80, without EP or
 *   DeepEP and unless disable_shared_experts_fusion (which only the
 *   flashinfer_trtllm backend sets, server_args.py l. 1521-1527: FP8/FP4),
 *   num_fused_shared_experts = n_shared_experts (1); l. 359-363 and 382-
 *   386: the experts are n_routed_experts + 1 with top_k + 1 a token, and
 *   l. 410 builds no separate shared MLP (l. 588: none runs). So every
 *   token reaches one more expert, always the shared one, inside the fused
 *   MoE kernels: k = top_k + 1 rows a token, the reached experts one more,
 *   E one more; the shared MLP is not priced. The rule here is GLM-4.x's
 *   (not MLA models': deepseek_v2.py's own rule, not read). Only models
 *   whose SGLang file declares num_fused_shared_experts fuse (glm4_moe,
 *   bailing_moe, deepseek_v2...; llama4.py l. 125-130, 160-170 and
 *   qwen2_moe.py run their shared expert as its own MLP): in the tree
 *   those are the models with a biased (noaux_tc) router, router_groups
 *   > 0, which is the key the rule reads (review, wave 44: Llama 4 Scout
 *   and Maverick fused otherwise). The fusion is also SGLang's on sm80 and
 *   sm90 and under quantized weights; here it rides the Blackwell BF16
 *   row only (GLM-4.6 on H100/H200 keeps a separate MLP: not read further).
 *
 * vllm-0.11-rocm (issue 45, wave 45; the vllm 0.11.0 wheel from PyPI, which
 * set 24's GLM-4.6 run on 8x MI300X names): vLLM V1 on ROCm, unquantized
 * experts.
 *   which kernel: envs.py l. 905-906, VLLM_ROCM_USE_AITER defaults to
 *   False, so rocm_aiter_fused_moe.py l. 40-43 (is_rocm_aiter_moe_enabled)
 *   is False and UnquantizedFusedMoEMethod.forward_cuda (fused_moe/
 *   layer.py l. 530, 617) runs fused_experts, the Triton kernel; GLM-4.6's
 *   shared expert is its own Glm4MoeMLP beside SharedFusedMoE
 *   (models/glm4_moe.py l. 149-165): not fused in.
 *   which config: fused_moe.py l. 922-952 (try_get_optimal_moe_config): E,
 *   _, N = w2.shape; get_moe_configs (l. 751-800) opens
 *   configs/E={E},N={N},device_name={name}.json (get_config_file_name, l.
 *   738-747, no dtype for unquantized weights), the name platforms/rocm.py
 *   gives (l. 302-309: amdsmi's device id through _ROCM_DEVICE_ID_NAME_MAP,
 *   l. 66-74: AMD_Instinct_MI300X, AMD_Instinct_MI325X); none: get_default_
 *   config (l. 868-920), unquantized: M <= E 16 x 32 x 64 (l. 905-911),
 *   else 64 x 64 x 32, no num_warps or num_stages (Triton's HIPOptions
 *   defaults, 4 warps and 2 stages). The wheel ships 20 unquantized MI300X
 *   files and 7 MI325X ones (the row's list); GLM-4.6 at TP8 (E=160, N=192)
 *   has none (PR #27323 added it after 0.11.0). The row holds on ROCm
 *   hardware (strata_hw_rocm), for every V1 release (the list is 0.11.0's).
 *   its time: serve_triton_moe.h's tile waves at the unit's BF16 peak, as
 *   sglang-0.5, one program a CU. What CDNA adds: Triton's AMD backend lays
 *   a 16 x 32 tile over 4 wavefronts as {4, 1} blocks of the 16 x 16 MFMA,
 *   so the four compute the same output (serve_mfma_layout.h: 4 replicas;
 *   none at 64 x 64 or 64 x 128); ESTIMATE: each replica runs the tile's
 *   MFMAs and operand reads, so a tile's MMA work counts 4 times at the
 *   measured rate (the fixed part once). On NVIDIA the same tile spreads
 *   over mma.sync's 16 x 8 with no copies. ESTIMATE (as sglang-0.5): the
 *   H200 block-FP8 fraction and fixed part carry to CDNA3's BF16 MFMAs. The
 *   rate a CU is the datasheet's 1,307.4 TFLOP/s over 304 CUs (mi300x.ini).
 *
 * Invariants: rows end with a NULL name; a time is >= 0 and 0 where the
 * row does not price the product (no row, tuned file shipped, M > E under
 * a step row, not unquantized, K or M 0); a row fuses shared experts only
 * into unquantized, non-MLA models' routed experts with a biased router.
 */
#ifndef STRATA_SERVE_FUSED_MOE_BF16_H
#define STRATA_SERVE_FUSED_MOE_BF16_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "hw/hw.h"
#include "serve/serve_model.h"
#include "serve/serve_triton_moe.h" /* strata_serve_triton_moe_tile: the one tile struct of both files */

typedef struct strata_serve_fused_moe_bf16 strata_serve_fused_moe_bf16;


/* One fused MoE layer as a step runs it (the caller's figures). */
typedef struct strata_serve_fused_moe_gemm {
    uint64_t tokens;         /* M: the step's tokens (hidden_states.shape[0]) */
    uint32_t experts;        /* E: the kernel's experts (routed plus fused shared) */
    uint64_t width;          /* N of the file's name: a rank's intermediate width (w2.shape[2]) */
    uint64_t routed, active; /* rows (tokens x k) and the experts they reach */
    uint32_t sms;            /* the unit's SMs */
    double bf16_peak;        /* its dense BF16 FLOP/s */
    const char *device;      /* the part as its driver names it (NULL: not said) */
} strata_serve_fused_moe_gemm;

/* The row called name ("vllm-0.4.2", "sglang-0.5"), or NULL with an error listing the known ones. */
const strata_serve_fused_moe_bf16 *strata_serve_fused_moe_bf16_find(const char *name, GError **err);

/* The row called name where the hardware's NCCL generation is the row's part (vllm-0.4.2: Ampere, the step's part;
 * sglang-0.5: Blackwell, its file list's) or, for vllm-0.11-rocm, where it is ROCm's, else NULL (no name, an unknown
 * one, another part, no NCCL generation given: the grouped row). */
const strata_serve_fused_moe_bf16 *strata_serve_fused_moe_bf16_for(const char *name, const strata_hw *hw);

/* Whether the release ships a tuned config file for E experts and a rank's intermediate width n (w2.shape[2]) on the
 * part `device` names (a file for any device, vLLM 0.4.2's list, matches every part; NULL device: only those). */
bool strata_serve_fused_moe_bf16_shipped(const strata_serve_fused_moe_bf16 *r, uint32_t experts, uint64_t n,
                                         const char *device);

/* The default config's tile for m tokens over E experts (fused_moe.py l. 408-423). */
void strata_serve_fused_moe_bf16_tile(uint64_t m, uint32_t experts, strata_serve_triton_moe_tile *tile);

/* One of the layer's two grouped GEMMs on m tokens, each routed row's product k wide (the GEMM's K), its experts
 * E and a rank's intermediate width n: its K loop's chain, cdiv(k, BLOCK_SIZE_K) steps at the measured step; 0 where
 * the row does not price it (NULL row, no step (sglang-0.5), a shipped file, m > E, m or k 0). */
double strata_serve_fused_moe_bf16_chain_s(const strata_serve_fused_moe_bf16 *r, uint64_t m, uint32_t experts,
                                           uint64_t n, uint64_t k);

/* g for a layer on hw's unit (its SMs, BF16 peak and device name). */
strata_serve_fused_moe_gemm strata_serve_fused_moe_bf16_gemm(const strata_hw *hw, uint32_t unit, uint64_t tokens,
                                                             uint32_t experts, uint64_t width, uint64_t routed,
                                                             uint64_t active);

/* One of g's two GEMMs (each row's product k wide, n outputs) given grouped_s, the grouped-GEMM row's time of the
 * same product: the slower of the two (vllm-0.4.2: the chain; sglang-0.5: the default tile's waves); grouped_s where
 * r is NULL, a file is shipped or the row prices nothing there. */
double strata_serve_fused_moe_bf16_s(const strata_serve_fused_moe_bf16 *r, double grouped_s,
                                     const strata_serve_fused_moe_gemm *g, uint64_t k, uint64_t n);

/* The shared experts the release fuses into the routed experts' kernel for model m (sglang-0.5: GLM-4.x's
 * n_shared_experts where it has them and no MLA; 0: none, the shared MLP runs apart). */
uint32_t strata_serve_fused_moe_bf16_shared(const strata_serve_fused_moe_bf16 *r, const strata_serve_model *m);

#endif
