/*
 * serve_mla_prefill_v07.c: vLLM 0.7.3 V0's MLA prefill kernels beyond serve_cost.c's (serve_mla_prefill_v07.h, with
 * its sources).
 */
#include "serve/serve_mla_prefill_v07.h"
#include <math.h>
#include <stddef.h>
#include <string.h>

typedef struct {
    uint32_t key, block_m, block_n, block_k;
} kv_a_key;

/* The vllm 0.7.3 wheel's model_executor/layers/quantization/utils/configs/N=576,K=7168,device_name=NVIDIA_H200,
 * dtype=fp8_w8a8,block_shape=[128,128].json: each key's BLOCK_SIZE_M, _N, _K (num_warps 4 at every key). */
static const kv_a_key h200_n576[] = {
    {1, 64, 32, 128},    {2, 64, 32, 128},    {4, 64, 32, 128},    {8, 64, 32, 128},     {16, 64, 32, 128},
    {24, 64, 32, 128},   {32, 64, 32, 128},   {48, 64, 32, 128},   {64, 64, 32, 128},    {96, 64, 32, 128},
    {128, 64, 32, 128},  {256, 64, 32, 128},  {512, 64, 64, 128},  {1024, 64, 32, 128},  {1536, 64, 64, 128},
    {2048, 64, 64, 128}, {3072, 64, 128, 128}, {4096, 64, 64, 128}};

/* fp8_utils.py:493-503: no file for the part, BLOCK_SIZE_M 64 and the weight block (128 x 128) */
static const strata_serve_triton_moe_tile default_tile = {64, 128, 128};

void strata_serve_mla_v07_kv_a_tile(uint64_t m, const char *device, strata_serve_triton_moe_tile *tile)
{
    *tile = default_tile;
    if (!device || strcmp(device, "NVIDIA H200") != 0) /* get_device_name().replace(" ", "_") names the file */
        return;
    uint64_t best_d = UINT64_MAX;
    for (size_t i = 0; i < sizeof h200_n576 / sizeof h200_n576[0]; i++) {
        uint64_t key = h200_n576[i].key, d = key > m ? key - m : m - key;
        if (d < best_d) { /* min(configs.keys(), key=|x - M|): a tie keeps the smaller key */
            best_d = d;
            *tile = (strata_serve_triton_moe_tile){h200_n576[i].block_m, h200_n576[i].block_n, h200_n576[i].block_k};
        }
    }
}

double strata_serve_mla_v07_triton_gemm_s(const strata_serve_triton_moe_tile *tile, const strata_hw *hw,
                                          uint32_t unit, uint64_t m, uint64_t k, uint64_t n)
{
    const strata_compute_spec *cs = strata_hw_compute(hw, unit);
    if (!cs || !m || !k || !n)
        return 0;
    /* one group of m rows: cdiv(m, BLOCK_SIZE_M) x cdiv(n, BLOCK_SIZE_N) programs, as the dense kernel's grid */
    return strata_serve_triton_moe_tile_waves_s(tile, m, 1, k, n, cs->kernel.sms,
                                                strata_hw_compute_flops(hw, unit, STRATA_DTYPE_F8));
}

double strata_serve_mla_v07_a_proj_extra_s(strata_serve_linear_fn linear, const void *ctx, const strata_hw *hw,
                                           uint32_t unit, uint64_t t, uint64_t hidden, uint64_t q_lora, uint64_t kv_a,
                                           double quant_s, uint32_t weight_block, strata_serve_work *work)
{
    if (!t || !q_lora || !kv_a)
        return 0;
    strata_serve_work counted = work ? *work : (strata_serve_work){0}; /* linear counts into work: undone below */
    double kv = linear(ctx, t, hidden, kv_a);
    /* CUDA, block-FP8 weights only (apply_w8a8_block_fp8_linear): CUTLASS for q_a (both dimensions multiples of
     * 128), Triton for kv_a; BF16, per-tensor FP8 or AWQ weights run their own Linear, the caller's */
    if (weight_block > 0 && !strata_hw_rocm(hw)) {
        strata_serve_triton_moe_tile tile;
        strata_serve_mla_v07_kv_a_tile(t, strata_hw_device_name(hw), &tile);
        kv = fmax(kv, strata_serve_mla_v07_triton_gemm_s(&tile, hw, unit, t, hidden, kv_a));
    }
    double extra = linear(ctx, t, hidden, q_lora) + kv + quant_s - linear(ctx, t, hidden, q_lora + kv_a);
    if (work) /* the split's products are the fused GEMM's, which the caller counts */
        *work = counted;
    return fmax(extra, 0.0);
}

double strata_serve_mla_v07_prefill_passes_s(strata_serve_pass_fn pass, const void *ctx, uint64_t t,
                                             uint64_t context, uint64_t heads, uint64_t nope, uint64_t rope,
                                             uint64_t v, double act, bool pad_v)
{
    if (!t)
        return 0;
    uint64_t qk = nope + rope, rq = t * heads * rope, out = t * heads * v, kv = context * heads;
    double s = 0;
    /* cos_sin_cache[positions] (t x rope gathered) and the two repeat_interleave (cos, sin: t x rope each) */
    for (int i = 0; i < 3; i++)
        s += pass(ctx, t * rope, 2.0 * (double)(t * rope) * act);
    /* q_pe and k_pe: x * cos (two reads, one write), -x2 (half read, half written), stack (a copy), rotated * sin,
     * the sum (two reads, one write each) */
    uint64_t n_rot[2] = {rq, t * rope};
    for (int i = 0; i < 2; i++) {
        uint64_t n = n_rot[i];
        double e = (double)n, binary = 3.0 * e * act;
        s += pass(ctx, n, binary) + pass(ctx, n / 2, e * act) + pass(ctx, n, 2.0 * e * act) + pass(ctx, n, binary) +
             pass(ctx, n, binary);
    }
    s += pass(ctx, rq, 2.0 * (double)rq * act); /* q[..., nope:] = the rotated q_pe */
    /* k = cat(k_nope, k_pe.expand): reads kv x nope and context x rope, writes kv x (nope + rope) */
    s += pass(ctx, kv * qk, ((double)(kv * nope) + (double)(context * rope) + (double)(kv * qk)) * act);
    if (!pad_v) /* v at its own width: no padding, and the output is contiguous (no slice copy) */
        return s;
    /* v padded to q's width: reads kv x v, writes kv x (nope + rope) */
    s += pass(ctx, kv * qk, ((double)(kv * v) + (double)(kv * qk)) * act);
    /* the output's [..., :v] slice reshaped: a copy of t x heads x v */
    s += pass(ctx, out, 2.0 * (double)out * act);
    return s;
}

bool strata_serve_mla_v07_pads_v(const char *release_row, const strata_hw *hw)
{
    if (!release_row || strcmp(release_row, "unless-fa3-hopper") != 0 || strata_hw_rocm(hw))
        return true;
    return strata_hw_compute_capability(hw) / 10 != 9;
}
