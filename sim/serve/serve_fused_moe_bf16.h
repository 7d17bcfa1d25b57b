/*
 * serve_fused_moe_bf16.h: vLLM's Triton fused_moe kernel on unquantized
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
 * Invariants: rows end with a NULL name; a time is >= 0 and 0 where the
 * row does not price the product (no row, tuned file shipped, M > E, not
 * unquantized, K or M 0).
 */
#ifndef STRATA_SERVE_FUSED_MOE_BF16_H
#define STRATA_SERVE_FUSED_MOE_BF16_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "hw/hw.h"

typedef struct strata_serve_fused_moe_bf16 strata_serve_fused_moe_bf16;

/* The default tile a release's fused_moe takes for M tokens over E experts. */
typedef struct strata_serve_fused_moe_tile {
    uint32_t block_m, block_n, block_k;
} strata_serve_fused_moe_tile;

/* The row called name (a vLLM release: "vllm-0.4.2"), or NULL with an error listing the known ones. */
const strata_serve_fused_moe_bf16 *strata_serve_fused_moe_bf16_find(const char *name, GError **err);

/* The row called name where the hardware's NCCL generation is Ampere (the step's part), else NULL (no name, an
 * unknown one, another part or no NCCL generation given: the grouped row). */
const strata_serve_fused_moe_bf16 *strata_serve_fused_moe_bf16_for(const char *name, const strata_hw *hw);

/* Whether the release ships a tuned config file for E experts and a rank's intermediate width n (w2.shape[2]). */
bool strata_serve_fused_moe_bf16_shipped(const strata_serve_fused_moe_bf16 *r, uint32_t experts, uint64_t n);

/* The default config's tile for m tokens over E experts (fused_moe.py l. 408-423). */
void strata_serve_fused_moe_bf16_tile(uint64_t m, uint32_t experts, strata_serve_fused_moe_tile *tile);

/* One of the layer's two grouped GEMMs on m tokens, each routed row's product k wide (the GEMM's K), its experts
 * E and a rank's intermediate width n: its K loop's chain, cdiv(k, BLOCK_SIZE_K) steps at the measured step; 0 where
 * the row does not price it (NULL row, a shipped file, m > E, m or k 0). */
double strata_serve_fused_moe_bf16_chain_s(const strata_serve_fused_moe_bf16 *r, uint64_t m, uint32_t experts,
                                           uint64_t n, uint64_t k);

/* That GEMM's time given grouped_s, the grouped-GEMM row's time of the same product: the slower of the two (the
 * weights' stream or the chain); grouped_s where the chain is 0 or r is NULL. */
double strata_serve_fused_moe_bf16_s(const strata_serve_fused_moe_bf16 *r, double grouped_s, uint64_t m,
                                     uint32_t experts, uint64_t n, uint64_t k);

#endif
