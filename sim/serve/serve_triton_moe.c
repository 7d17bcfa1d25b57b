/*
 * serve_triton_moe.c: vLLM's and SGLang's Triton fused_moe kernel under
 * block-scaled FP8 (serve_triton_moe.h, with its sources).
 */
#include "serve/serve_triton_moe.h"
#include <math.h>
#include <stddef.h>

/* vllm-project/vllm@645d18fa fused_moe/configs/E=256,N=256,device_name=
 * NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json: its keys and each
 * key's BLOCK_SIZE_M (BLOCK_SIZE_N and BLOCK_SIZE_K are 128 at every key). */
static const struct {
    uint32_t key, block_m;
} h200_e256_n256[] = {{1, 16},   {2, 16},   {4, 16},    {8, 16},    {16, 16},   {24, 16},
                      {32, 16},  {48, 16},  {64, 16},   {96, 16},   {128, 16},  {256, 16},
                      {512, 16}, {1024, 64}, {1536, 64}, {2048, 64}, {3072, 64}, {4096, 64}};

enum { TRITON_MOE_BLOCK_N = 128, TRITON_MOE_BLOCK_K = 128 };

/* sgl-project/sglang PR #3893 (H200): w8a8_block_fp8_matmul at m = 4096,
 * n = 24576, k = 7168 in 4,067.296 us; the H200's dense FP8 peak (h200.ini,
 * flops.f8). */
#define MEASURED_M 4096.0
#define MEASURED_N 24576.0
#define MEASURED_K 7168.0
#define MEASURED_S 4067.296e-6
#define MEASURED_PEAK 1979e12

void strata_serve_triton_moe_config(uint64_t tokens, strata_serve_triton_moe_tile *tile)
{
    size_t n = sizeof h200_e256_n256 / sizeof h200_e256_n256[0], best = 0;
    uint64_t best_d = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        uint64_t key = h200_e256_n256[i].key;
        uint64_t d = key > tokens ? key - tokens : tokens - key;
        if (d < best_d) { /* strict: a tie keeps the smaller key, the one min() meets first */
            best_d = d;
            best = i;
        }
    }
    *tile = (strata_serve_triton_moe_tile){h200_e256_n256[best].block_m, TRITON_MOE_BLOCK_N, TRITON_MOE_BLOCK_K};
}

uint64_t strata_serve_triton_moe_mblocks(uint64_t routed, uint64_t active, uint32_t block_m)
{
    if (!routed || !active || !block_m)
        return 0;
    uint64_t per = (routed + active - 1) / active;
    return active * ((per + block_m - 1) / block_m);
}

double strata_serve_triton_moe_efficiency(void)
{
    return 2.0 * MEASURED_M * MEASURED_N * MEASURED_K / MEASURED_S / MEASURED_PEAK;
}

double strata_serve_triton_moe_compute_s(uint64_t tokens, uint64_t routed, uint64_t active, uint64_t k,
                                         uint64_t n, uint32_t sms, double f8_peak)
{
    if (!routed || !active || !k || !n || !sms || f8_peak <= 0)
        return 0;
    strata_serve_triton_moe_tile tile;
    strata_serve_triton_moe_config(tokens, &tile);
    uint64_t tiles = strata_serve_triton_moe_mblocks(routed, active, tile.block_m) *
                     ((n + tile.block_n - 1) / tile.block_n);
    uint64_t waves = (tiles + sms - 1) / sms;
    double k_main = ceil((double)k / tile.block_k) * tile.block_k;
    double per_sm = strata_serve_triton_moe_efficiency() * f8_peak / sms;
    return (double)waves * 2.0 * tile.block_m * tile.block_n * k_main / per_sm;
}
