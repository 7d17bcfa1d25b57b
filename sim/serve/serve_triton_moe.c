/*
 * serve_triton_moe.c: vLLM's and SGLang's Triton fused_moe kernel under
 * block-scaled FP8 (serve_triton_moe.h, with its sources).
 */
#include "serve/serve_triton_moe.h"
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "serve/serve_names.h"

typedef struct {
    uint32_t key, block_m, block_n, block_k;
} moe_key;

/* vllm-project/vllm@645d18fa fused_moe/configs/E=256,N=256,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=
 * [128,128].json: its keys and each key's BLOCK_SIZE_M (BLOCK_SIZE_N and BLOCK_SIZE_K 128 at every key). */
static const moe_key h200_645d18fa[] = {
    {1, 16, 128, 128},    {2, 16, 128, 128},    {4, 16, 128, 128},    {8, 16, 128, 128},    {16, 16, 128, 128},
    {24, 16, 128, 128},   {32, 16, 128, 128},   {48, 16, 128, 128},   {64, 16, 128, 128},   {96, 16, 128, 128},
    {128, 16, 128, 128},  {256, 16, 128, 128},  {512, 16, 128, 128},  {1024, 64, 128, 128}, {1536, 64, 128, 128},
    {2048, 64, 128, 128}, {3072, 64, 128, 128}, {4096, 64, 128, 128}};

/* The vllm 0.7.3 wheel (PyPI), vllm/model_executor/layers/fused_moe/configs/ the same file name: each key's
 * BLOCK_SIZE_M, _N, _K (1: 16 x 64 x 128; 2: 16 x 128; 4: 64 x 64; 16: 16 x 256 x 64; 3072: 128 x 64). */
static const moe_key h200_073[] = {
    {1, 16, 64, 128},     {2, 16, 128, 128},    {4, 64, 64, 128},     {8, 64, 128, 128},    {16, 16, 256, 64},
    {24, 64, 128, 128},   {32, 64, 128, 128},   {48, 64, 128, 128},   {64, 64, 128, 128},   {96, 64, 128, 128},
    {128, 64, 128, 128},  {256, 64, 128, 128},  {512, 64, 128, 128},  {1024, 64, 128, 128}, {1536, 64, 128, 128},
    {2048, 64, 128, 128}, {3072, 128, 64, 128}, {4096, 64, 128, 128}};

/* The same wheel's fused_moe.py l. 823-833, get_default_config with dtype fp8_w8a8 and a block_shape: BLOCK_SIZE_M
 * 64, BLOCK_SIZE_N block_shape[0] = 128, BLOCK_SIZE_K block_shape[1] = 128 at every M (its configs/ has no E=256 file
 * but H200's N=256 and H100's N=128: an AMD part or another N takes it). */
static const moe_key default_073[] = {{1, 64, 128, 128}};

/* A release's configs for one file name's E (experts) and N (an expert's width a rank, w2's K) and device, or for
 * any (experts 0, device NULL: a default); a layer of another E or N, or a part of another name, takes `otherwise`.
 * The 0.7.3 wheel's fused_moe.py get_config_file_name (l. 762-770) names the file by E, N, dtype, block_shape and
 * device_name = current_platform.get_device_name().replace(" ", "_"): the CUDA platform's name of the part, NVML's
 * nvmlDeviceGetName (platforms/cuda.py l. 277-279, 325-327), torch.cuda.get_device_name where NVML is absent
 * (l. 355-356), "NVIDIA H200" for E=256,N=256,device_name=NVIDIA_H200,...; get_moe_configs (l. 775-810) opens that
 * file where it exists, else returns None and the kernel runs get_default_config. So the H200 file is chosen only
 * where the hardware file names the part so ([hardware] device_name = NVIDIA H200, hw.h strata_hw_device_name): an
 * H100 (NVIDIA H100 80GB HBM3, which has an E=256,N=128 file and no N=256 one) or a file that does not say takes
 * the default, 64 x 128 x 128 (a difference at 1, 2 and 16 tokens only). vllm-645d18fa, strata's default for the
 * rows that name no release, stays unchecked (device NULL), as before wave 41. */
struct strata_serve_triton_moe_configs {
    const char *name;
    const moe_key *keys;
    size_t n;
    uint32_t experts, width;
    const char *device; /* the part the file is for, as get_device_name gives it; NULL: any */
    const char *otherwise;
};

#define CONFIGS(name, keys, e, w, device, otherwise)                                                                \
    {(name), (keys), sizeof(keys) / sizeof((keys)[0]), (e), (w), (device), (otherwise)}
static const strata_serve_triton_moe_configs rows[] = {
    CONFIGS("vllm-645d18fa", h200_645d18fa, 0, 0, NULL, NULL), /* strata's default before wave 40: any E and N */
    CONFIGS("vllm-0.7.3", h200_073, 256, 256, "NVIDIA H200", "vllm-0.7.3-default"),
    CONFIGS("vllm-0.7.3-default", default_073, 0, 0, NULL, NULL),
    {NULL, NULL, 0, 0, 0, NULL, NULL},
};

/* sgl-project/sglang PR #3893 (H200, "fp8-gemm-performance-comparison-tp1", the SGLang column: Triton's
 * w8a8_block_fp8_matmul at its default 64 x 128 x 128 tile): row 62, m 4096, n 24576, k 7168 in 4,067.296 us
 * (56 k-blocks a tile), and row 71, m 4096, n 32768, k 512 in 513.504 us (4 k-blocks a tile); both at the H200's
 * 132 SMs and 1,979 TFLOP/s dense FP8 peak (h200.ini). */
#define MEASURED_M 4096.0
#define MEASURED_N 24576.0
#define MEASURED_K 7168.0
#define MEASURED_S 4067.296e-6
#define MEASURED_SHORT_N 32768.0
#define MEASURED_SHORT_K 512.0
#define MEASURED_SHORT_S 513.504e-6
#define MEASURED_PEAK 1979e12
#define MEASURED_SMS 132.0
#define MEASURED_TILE_M 64.0
#define MEASURED_TILE_N 128.0
#define MEASURED_TILE_K 128.0

const strata_serve_triton_moe_configs *strata_serve_triton_moe_configs_find(const char *name)
{
    return serve_names_find(SERVE_NAMES(rows, strata_serve_triton_moe_configs), name);
}

const strata_serve_triton_moe_configs *strata_serve_triton_moe_configs_on(const char *name, const char *device)
{
    const strata_serve_triton_moe_configs *cfg = strata_serve_triton_moe_configs_find(name);
    if (cfg && cfg->device && !(device && strcmp(cfg->device, device) == 0))
        return strata_serve_triton_moe_configs_find(cfg->otherwise);
    return cfg;
}

const strata_serve_triton_moe_configs *strata_serve_triton_moe_configs_for(const strata_serve_triton_moe_configs *cfg,
                                                                          uint32_t experts, uint32_t width)
{
    if (!cfg || !cfg->experts || (cfg->experts == experts && cfg->width == width))
        return cfg;
    return strata_serve_triton_moe_configs_find(cfg->otherwise);
}

void strata_serve_triton_moe_config_of(const strata_serve_triton_moe_configs *cfg, uint64_t tokens,
                                       strata_serve_triton_moe_tile *tile)
{
    if (!cfg)
        cfg = &rows[0];
    size_t best = 0;
    uint64_t best_d = UINT64_MAX;
    for (size_t i = 0; i < cfg->n; i++) {
        uint64_t key = cfg->keys[i].key;
        uint64_t d = key > tokens ? key - tokens : tokens - key;
        if (d < best_d) { /* strict: a tie keeps the smaller key, the one min() meets first */
            best_d = d;
            best = i;
        }
    }
    *tile = (strata_serve_triton_moe_tile){cfg->keys[best].block_m, cfg->keys[best].block_n, cfg->keys[best].block_k};
}

void strata_serve_triton_moe_config(uint64_t tokens, strata_serve_triton_moe_tile *tile)
{
    strata_serve_triton_moe_config_of(NULL, tokens, tile);
}

uint64_t strata_serve_triton_moe_mblocks(uint64_t routed, uint64_t active, uint32_t block_m)
{
    if (!routed || !active || !block_m)
        return 0;
    uint64_t per = (routed + active - 1) / active;
    return active * ((per + block_m - 1) / block_m);
}

/* One measured row's time a wave: its tiles (64 x 128) in waves of one a SM. */
static double measured_wave_s(double m, double n, double s)
{
    double tiles = ceil(m / MEASURED_TILE_M) * ceil(n / MEASURED_TILE_N);
    return s / ceil(tiles / MEASURED_SMS);
}

/* The two rows' waves as fixed + k_blocks x per_block (serve_triton_moe.h): per_block from their difference. */
static double measured_block_s(void)
{
    return (measured_wave_s(MEASURED_M, MEASURED_N, MEASURED_S) -
            measured_wave_s(MEASURED_M, MEASURED_SHORT_N, MEASURED_SHORT_S)) /
           (MEASURED_K / MEASURED_TILE_K - MEASURED_SHORT_K / MEASURED_TILE_K);
}

double strata_serve_triton_moe_efficiency(void)
{
    return 2.0 * MEASURED_TILE_M * MEASURED_TILE_N * MEASURED_TILE_K / measured_block_s() /
           (MEASURED_PEAK / MEASURED_SMS);
}

double strata_serve_triton_moe_tile_fixed_blocks(void)
{
    double wave = measured_wave_s(MEASURED_M, MEASURED_SHORT_N, MEASURED_SHORT_S);
    return wave / measured_block_s() - MEASURED_SHORT_K / MEASURED_TILE_K;
}

double strata_serve_triton_moe_compute_of(const strata_serve_triton_moe_configs *cfg, uint64_t tokens,
                                          uint64_t routed, uint64_t active, uint64_t k, uint64_t n, uint32_t sms,
                                          double f8_peak)
{
    if (!routed || !active || !k || !n || !sms || f8_peak <= 0)
        return 0;
    strata_serve_triton_moe_tile tile;
    strata_serve_triton_moe_config_of(cfg, tokens, &tile);
    return strata_serve_triton_moe_tile_waves_s(&tile, routed, active, k, n, sms, f8_peak);
}

/* A tile's grid over the problem: its waves of one tile a SM, a tile's K-loop work (2 BM BN K, K whole k-blocks)
 * and the rate a SM runs it at; false for an empty problem or no peak. */
static bool tile_grid(const strata_serve_triton_moe_tile *tile, uint64_t routed, uint64_t active, uint64_t k,
                      uint64_t n, uint32_t sms, double peak, uint64_t *waves, double *mma, double *per_sm)
{
    if (!routed || !active || !k || !n || !sms || peak <= 0 || !tile->block_m || !tile->block_n || !tile->block_k)
        return false;
    uint64_t tiles = strata_serve_triton_moe_mblocks(routed, active, tile->block_m) *
                     ((n + tile->block_n - 1) / tile->block_n);
    *waves = (tiles + sms - 1) / sms;
    *mma = 2.0 * tile->block_m * tile->block_n * (ceil((double)k / tile->block_k) * tile->block_k);
    *per_sm = strata_serve_triton_moe_efficiency() * peak / sms;
    return true;
}

double strata_serve_triton_moe_tile_waves_s(const strata_serve_triton_moe_tile *tile, uint64_t routed,
                                            uint64_t active, uint64_t k, uint64_t n, uint32_t sms, double peak)
{
    uint64_t waves;
    double mma, per_sm;
    if (!tile_grid(tile, routed, active, k, n, sms, peak, &waves, &mma, &per_sm))
        return 0;
    double fixed = strata_serve_triton_moe_tile_fixed_blocks() * 2.0 * MEASURED_TILE_M * MEASURED_TILE_N *
                   MEASURED_TILE_K; /* the measured tile's prologue and epilogue, in its k-blocks' work */
    return (double)waves * (mma + fixed) / per_sm;
}

double strata_serve_triton_moe_tile_mma_s(const strata_serve_triton_moe_tile *tile, uint64_t routed,
                                          uint64_t active, uint64_t k, uint64_t n, uint32_t sms, double peak)
{
    uint64_t waves;
    double mma, per_sm;
    return tile_grid(tile, routed, active, k, n, sms, peak, &waves, &mma, &per_sm) ? (double)waves * mma / per_sm
                                                                                   : 0;
}

double strata_serve_triton_moe_compute_s(uint64_t tokens, uint64_t routed, uint64_t active, uint64_t k,
                                         uint64_t n, uint32_t sms, double f8_peak)
{
    return strata_serve_triton_moe_compute_of(NULL, tokens, routed, active, k, n, sms, f8_peak);
}
