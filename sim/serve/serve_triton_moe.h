/*
 * serve_triton_moe.h: the routed experts' two grouped GEMMs as vLLM's and
 * SGLang's Triton fused_moe kernel runs them under block-scaled FP8
 * (DeepSeek-V3 style, 1 x 128 activation and 128 x 128 weight scales):
 * issue 45, wave 34. vLLM v0.8.4 and SGLang 0.4.5 serve a block-scaled
 * MoE model at TP through fused_experts -> invoke_fused_moe_kernel ->
 * fused_moe_kernel (vllm/model_executor/layers/fused_moe/fused_moe.py),
 * not a CUTLASS grouped GEMM: TensorRT-LLM's kernel (models/kernel
 * grouped-gemm, matrix.c's block-scaled grouped path) prices what these
 * engines do not run.
 *
 * What the kernel does (fused_moe.py, fused_moe_kernel, the
 * use_fp8_w8a8 and group_k > 0 branch): one program per BLOCK_SIZE_M x
 * BLOCK_SIZE_N tile of one expert's rows (sorted_token_ids, which
 * moe_align_block_size pads so each expert's row count is a multiple of
 * BLOCK_SIZE_M; programs past num_tokens_post_padded return at once);
 * its K loop steps BLOCK_SIZE_K = 128 and each step runs
 * accumulator += tl.dot(a, b) * a_scale[:, None] * b_scale[None, :], the
 * scales applied to the fresh product before it is added, so the K loop
 * cannot chain its MMAs. The tile a step of M tokens runs is the tuned
 * config's nearest key to M (try_get_optimal_moe_config, get_config:
 * min(configs, key=|key - M|)): vllm-project/vllm@645d18fa,
 * fused_moe/configs/E=256,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,
 * block_shape=[128,128].json (DeepSeek-V3 at TP8: 256 experts, 2 x 2048 /
 * 8 = 512 of gate_up, N = 256 its half): BLOCK_SIZE_M 16 for the keys 1
 * to 512, 64 for 1024 to 4096; BLOCK_SIZE_N 128 and BLOCK_SIZE_K 128 at
 * every key; num_warps 4. SGLang 0.4.5's sglang/srt/layers/moe/
 * fused_moe_triton runs the same kernel body; its E=256 file was not
 * found in the stored index (ESTIMATE: vLLM's tiles). SGLang's later
 * E=257 H200 file (the shared expert fused in; sgl-project/sglang@8fe39d92)
 * has the same 64 x 128 x 128 tile from the key 1024 and already at 512.
 *
 * Its time: the tiles run in waves of one a SM, each tile's MMA work (2
 * BLOCK_M BLOCK_N K, K whole 128-blocks) plus a fixed part (wave 43,
 * below) at the rate one SM reached in the same kernel family:
 * SGLang's w8a8_block_fp8_matmul
 * (the same K loop, tl.dot then the two scales, at its default tile 64 x
 * block_n 128 x block_k 128, num_warps 4, sglang/srt/layers/quantization/
 * fp8_kernel.py) timed at m = 4096, n = 24576, k = 7168 on an H200 at
 * 4,067.296 us (sgl-project/sglang PR #3893, BBuf, 2025-02-26,
 * benchmark/kernels/deepseek/benchmark_deepgemm_fp8_gemm.py,
 * "fp8-gemm-performance-comparison-tp1" row 62; vLLM's copy 4,033.568
 * us): 2 x 4096 x 24576 x 7168 / 4,067.296 us = 354.8 TFLOP/s, 0.1793 of
 * the H200's 1,979 TFLOP/s dense FP8 peak over 12,288 tiles (93.1
 * waves: no wave quantization to speak of). Wave 43 (issue 45): a tile
 * also pays a time its K loop does not scale, its prologue (the first
 * num_stages - 1 k-blocks' loads before any MMA, Triton's software
 * pipeline) and epilogue (the BLOCK_M x BLOCK_N accumulator scaled,
 * converted and stored), which a row of few k-blocks shows: the same
 * table's row 71, m 4096, n 32768, k 512 (4 k-blocks), 513.504 us in 125
 * waves of 16,384 tiles, 4.1080 us a wave, where row 62 gives 43.2691 us a
 * wave of 56 k-blocks (4,067.296 us over 94 waves of 12,288 tiles). So a
 * wave is fixed + k_blocks x per_block: per_block (43.2691 - 4.1080) / 52
 * = 0.75310 us (0.18574 of the peak a SM), fixed 1.4548 k-blocks' time
 * (1.0956 us on the H200). The same table's other K = 512 rows (69: m
 * 1024, 154.784 us; 70: m 2048, 275.712 us) are then modelled at 131.5
 * and 258.8 us (-15%, -6%; one rate without the fixed part gave 99.9 and
 * 196.6) and row 61 (m 2048, k 7168, 2,157.6 us) at 2,033.6 (-5.7%).
 * This is what the routed down GEMM at TP8 (K 256: 2 k-blocks) runs: its
 * tiles cost 3.45 k-blocks each, not 2. ESTIMATE: the fixed part is the
 * measured 64 x 128 tile's at every tile (a 16-row tile's prologue loads
 * fewer A rows but waits the same latency; several small tiles sharing an
 * SM, which would hide it, not modelled), in k-blocks of the measured tile
 * so it scales with the part's FP8 rate a SM. ESTIMATE: that run took the
 * default tile (a tuned file for the shape would change it; none was
 * read), the fraction carries to the 16-row tile and to other SM90 parts
 * by their FP8 peak, and the gathered A rows (the kernel loads rows
 * through sorted_token_ids, no TMA) cost nothing more than the dense
 * kernel's strided loads. Measured as wall time, the rate holds the clock
 * the GPU ran at: serve_cost.c does not slow it to the sustained clock
 * again. The bytes are the grouped-gemm row's (A and B read once, C
 * written once), at the kernel's stream rate; the slower of the two
 * bounds the GEMM.
 *
 * Invariants: pure functions of their arguments; the config's tile is
 * one of the file's rows; the M-blocks of `active` experts number at
 * least `active` when routed >= active > 0; every time is >= 0 and 0 for
 * an empty problem.
 */
#ifndef STRATA_SERVE_TRITON_MOE_H
#define STRATA_SERVE_TRITON_MOE_H

#include <stdint.h>

/* The kernel's tile (BLOCK_SIZE_M, _N, _K; serve_fused_moe_bf16.h's default tiles too) for a step of `tokens`
 * tokens (the nearest key of the H200 config, ties to the smaller key as Python's min keeps the first). */
typedef struct strata_serve_triton_moe_tile {
    uint32_t block_m, block_n, block_k;
} strata_serve_triton_moe_tile;

void strata_serve_triton_moe_config(uint64_t tokens, strata_serve_triton_moe_tile *tile);

/* A release's config file for the layer (wave 40): "vllm-645d18fa" (the file above, the default), "vllm-0.7.3" (the
 * vllm 0.7.3 wheel's E=256,N=256 H200 file: BLOCK_SIZE_M 64 from the key 4, but 16 at 1, 2 and 16, and BLOCK_SIZE_N
 * 64 at 1 and 4, 256 at 16 with BLOCK_SIZE_K 64; set 18's vLLM 0.7.3 / 0.7.4.dev V0 runs) or "vllm-0.7.3-default"
 * (its get_default_config for block FP8, fused_moe.py l. 823-833: 64 x 128 x 128 at every M, where the wheel ships
 * no file for the part: MI300X). NULL for an unknown name. */
typedef struct strata_serve_triton_moe_configs strata_serve_triton_moe_configs;
const strata_serve_triton_moe_configs *strata_serve_triton_moe_configs_find(const char *name);
/* The configs named `name` as the release finds them on the part `device` names (hw.h strata_hw_device_name; NULL:
 * not said): a file for one device on another, or where the part is not named, is its `otherwise`, the release's
 * default (fused_moe.py get_moe_configs: no file of that name, get_default_config). NULL for an unknown name. */
const strata_serve_triton_moe_configs *strata_serve_triton_moe_configs_on(const char *name, const char *device);

/* cfg itself where its file is for `experts` and `width` (an expert's width a rank) or for any, else the
 * release's default (serve_triton_moe.c); NULL stays NULL. */
const strata_serve_triton_moe_configs *strata_serve_triton_moe_configs_for(const strata_serve_triton_moe_configs *cfg,
                                                                          uint32_t experts, uint32_t width);
/* The tile of that release's file for `tokens` (cfg NULL: vllm-645d18fa). */
void strata_serve_triton_moe_config_of(const strata_serve_triton_moe_configs *cfg, uint64_t tokens,
                                       strata_serve_triton_moe_tile *tile);

/* The M-blocks moe_align_block_size leaves for `routed` rows spread evenly
 * over `active` experts (ceil(routed / active) each), each expert's rows
 * padded to a multiple of block_m. */
uint64_t strata_serve_triton_moe_mblocks(uint64_t routed, uint64_t active, uint32_t block_m);

/* The fraction of a unit's dense FP8 peak the Triton block-FP8 kernel's
 * K loop sustains (the header's two measured rows: 0.18574). */
double strata_serve_triton_moe_efficiency(void);
/* A tile's fixed time (prologue and epilogue) in the measured 64 x 128 x
 * 128 tile's k-blocks (the header's two rows: 1.4548). */
double strata_serve_triton_moe_tile_fixed_blocks(void);

/* The MMA time of one grouped GEMM of `routed` rows over `active` experts,
 * K x N each, for a step of `tokens` tokens on a unit of `sms` SMs and
 * dense FP8 peak `f8_peak` FLOP/s: waves x (one tile's 2 BM BN K_128 plus
 * the fixed blocks' 2 x 64 x 128 x 128 each) at efficiency x f8_peak / sms.
 * 0 for an empty problem or no peak. */
double strata_serve_triton_moe_compute_s(uint64_t tokens, uint64_t routed, uint64_t active, uint64_t k,
                                         uint64_t n, uint32_t sms, double f8_peak);

/* The same for a given tile at `peak` FLOP/s, the unit's dense peak of the kernel's MMA dtype (the FP8 peak here;
 * serve_fused_moe_bf16.h passes the BF16 peak for unquantized experts): the model above, tile by tile. */
double strata_serve_triton_moe_tile_waves_s(const strata_serve_triton_moe_tile *tile, uint64_t routed,
                                            uint64_t active, uint64_t k, uint64_t n, uint32_t sms, double peak);

/* Its K loops' part alone (no prologue or epilogue): the waves x 2 BM BN K at the measured rate a SM. */
double strata_serve_triton_moe_tile_mma_s(const strata_serve_triton_moe_tile *tile, uint64_t routed,
                                          uint64_t active, uint64_t k, uint64_t n, uint32_t sms, double peak);

/* The same under a release's file (cfg NULL: vllm-645d18fa). */
double strata_serve_triton_moe_compute_of(const strata_serve_triton_moe_configs *cfg, uint64_t tokens,
                                          uint64_t routed, uint64_t active, uint64_t k, uint64_t n, uint32_t sms,
                                          double f8_peak);

#endif
