/*
 * serve_fused_moe_bf16.c: vLLM's and SGLang's Triton fused_moe on unquantized experts at
 * a release's default config (serve_fused_moe_bf16.h, with its sources).
 */
#include "serve/serve_fused_moe_bf16.h"
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "hw/coll_impl.h"
#include "serve/serve_mfma_layout.h"
#include "serve/serve_names.h"
#include "serve/serve_triton_moe.h"

enum { SHIPPED_MAX = 32 };

struct strata_serve_fused_moe_bf16 {
    const char *name;
    const char *what;
    strata_nccl_arch part; /* the NCCL generation the row holds for (rocm false) */
    bool rocm;             /* the row holds on ROCm hardware (strata_hw_rocm) instead of an NCCL generation */
    uint32_t mfma_warps;   /* > 0: the default tile's num_warps on CDNA, whose replicas (serve_mfma_layout.h) each
                            * run the tile's MMA work; 0: none (NVIDIA's rows) */
    struct {
        uint32_t e, n;
        const char *device; /* get_device_name() of the file's name; NULL: every part */
    } shipped[SHIPPED_MAX]; /* its unquantized configs/ files ({0, 0} ends the list) */
    double step_s;          /* > 0: one K step of a default small-tile program (vllm-0.4.2); 0: the tile waves */
    bool fuses_shared;      /* GLM-4.x's shared expert runs as one more routed expert (serve_fused_moe_bf16.h) */
};

/* vllm 0.4.2 (PyPI wheel), vllm/model_executor/layers/fused_moe/configs/: E=8,N=1792 / 2048 / 3584 / 4096 / 7168
 * and E=16,N=1344 / 2688 (device_name A100-SXM4-40GB, A100-SXM4-80GB, H100_80GB_HBM3; the list taken for every
 * device, ESTIMATE: a part named in no file falls back to the default too). The step: vllm-project/vllm PR #40542,
 * 183.5 us at M = 1 over 32 + 22 K steps (serve_fused_moe_bf16.h). */
#define PR40542_M1_S 183.5e-6
#define PR40542_STEPS 54.0
/* sglang 0.5.6 (PyPI wheel), python/sglang/srt/layers/moe/fused_moe_triton/configs/: the files with no dtype (the
 * unquantized ones) for device_name=NVIDIA_B200, triton_3_3_0/E=16,N=1024 and triton_3_4_0/E=256,N=256,
 * E=256,N=512, E=512,N=256. */
#define B200 "NVIDIA B200"
/* vllm 0.11.0 (PyPI wheel), vllm/model_executor/layers/fused_moe/configs/: the files with no dtype for
 * device_name=AMD_Instinct_MI300X (20) and AMD_Instinct_MI325X (7), the names platforms/rocm.py l. 66-74
 * (_ROCM_DEVICE_ID_NAME_MAP) gives the parts and get_device_name (l. 302-309) returns. */
#define MI300X "AMD_Instinct_MI300X"
#define MI325X "AMD_Instinct_MI325X"
#define VLLM_011_ROCM_FILES                                                                                        \
    {128, 1024, MI300X}, {16, 1024, MI300X}, {60, 1408, MI300X}, {60, 176, MI300X}, {60, 352, MI300X},             \
        {60, 704, MI300X}, {62, 128, MI300X}, {62, 256, MI300X}, {62, 512, MI300X}, {72, 192, MI300X},             \
        {72, 384, MI300X}, {72, 768, MI300X}, {8, 14336, MI300X}, {8, 16384, MI300X}, {8, 1792, MI300X},           \
        {8, 2048, MI300X}, {8, 3584, MI300X}, {8, 4096, MI300X}, {8, 7168, MI300X}, {8, 8192, MI300X},             \
        {8, 14336, MI325X}, {8, 16384, MI325X}, {8, 1792, MI325X}, {8, 2048, MI325X}, {8, 3584, MI325X},           \
        {8, 4096, MI325X}, {8, 7168, MI325X}, {0, 0, NULL}
/* Triton's num_warps where a config sets none (vLLM 0.11.0's unquantized default sets none: fused_moe.py
 * l. 905-919): Triton's HIPOptions default (triton-lang/triton@658b5b2b third_party/amd/backend/compiler.py), 4. */
enum { TRITON_DEFAULT_WARPS = 4 };

static const strata_serve_fused_moe_bf16 rows[] = {
    {"vllm-0.4.2",
     "vLLM 0.4.2's fused_moe: tuned files for E=8 and E=16 only, else the default 16 x 32 x 64 tile at M <= E",
     STRATA_NCCL_AMPERE, false, 0,
     {{8, 1792, NULL}, {8, 2048, NULL}, {8, 3584, NULL}, {8, 4096, NULL}, {8, 7168, NULL}, {16, 1344, NULL},
      {16, 2688, NULL}, {0, 0, NULL}},
     PR40542_M1_S / PR40542_STEPS, false},
    {"sglang-0.5",
     "SGLang 0.5.6's Triton fused_moe on Blackwell: four B200 files, else the default 16 x 32 x 64 (M <= E) or "
     "64 x 64 x 32 tile; GLM-4.x's shared expert fused as one more expert",
     STRATA_NCCL_BLACKWELL, false, 0,
     {{16, 1024, B200}, {256, 256, B200}, {256, 512, B200}, {512, 256, B200}, {0, 0, NULL}},
     0, true},
    /* named by the vllm-v1 row for every V1 release on ROCm; its file list is 0.11.0's (later releases ship
     * more, e.g. E=160,N=192 for MI300X after PR #27323: there it overcharges; review, wave 45) */
    {"vllm-0.11-rocm",
     "vLLM 0.11.0's Triton fused_moe on ROCm (AITER off, its default): 27 MI300X/MI325X files, else the default "
     "16 x 32 x 64 (M <= E; 4 MFMA replicas) or 64 x 64 x 32 tile",
     STRATA_NCCL_VOLTA, true, TRITON_DEFAULT_WARPS, {VLLM_011_ROCM_FILES}, 0, false},
    {NULL, NULL, STRATA_NCCL_VOLTA, false, 0, {{0, 0, NULL}}, 0, false},
};

enum { DEFAULT_SMALL_M = 16, DEFAULT_SMALL_N = 32, DEFAULT_SMALL_K = 64 };
enum { DEFAULT_LARGE_M = 64, DEFAULT_LARGE_N = 64, DEFAULT_LARGE_K = 32 };

const strata_serve_fused_moe_bf16 *strata_serve_fused_moe_bf16_find(const char *name, GError **err)
{
    return serve_names_lookup(SERVE_NAMES(rows, strata_serve_fused_moe_bf16), name, STRATA_ERROR_INTERNAL, err,
                              "unknown fused_moe release '%s' (known: %s)");
}

const strata_serve_fused_moe_bf16 *strata_serve_fused_moe_bf16_for(const char *name, const strata_hw *hw)
{
    strata_nccl_arch arch;
    const strata_serve_fused_moe_bf16 *r = name ? serve_names_find(SERVE_NAMES(rows, strata_serve_fused_moe_bf16),
                                                                   name)
                                                : NULL;
    if (r && r->rocm)
        return strata_hw_rocm(hw) ? r : NULL;
    if (!r || !strata_hw_nccl_arch(hw, &arch) || arch != r->part)
        return NULL;
    return r;
}

bool strata_serve_fused_moe_bf16_shipped(const strata_serve_fused_moe_bf16 *r, uint32_t experts, uint64_t n,
                                         const char *device)
{
    for (int i = 0; r && i < SHIPPED_MAX && r->shipped[i].e; i++) {
        const char *d = r->shipped[i].device;
        if (r->shipped[i].e == experts && r->shipped[i].n == n && (!d || (device && strcmp(d, device) == 0)))
            return true;
    }
    return false;
}

void strata_serve_fused_moe_bf16_tile(uint64_t m, uint32_t experts, strata_serve_triton_moe_tile *tile)
{
    bool small = m <= experts; /* fused_moe.py l. 417: if M <= E */
    *tile = small ? (strata_serve_triton_moe_tile){DEFAULT_SMALL_M, DEFAULT_SMALL_N, DEFAULT_SMALL_K}
                  : (strata_serve_triton_moe_tile){DEFAULT_LARGE_M, DEFAULT_LARGE_N, DEFAULT_LARGE_K};
}

double strata_serve_fused_moe_bf16_chain_s(const strata_serve_fused_moe_bf16 *r, uint64_t m, uint32_t experts,
                                           uint64_t n, uint64_t k)
{
    if (!r || r->step_s <= 0 || !m || !k || m > experts || strata_serve_fused_moe_bf16_shipped(r, experts, n, NULL))
        return 0;
    strata_serve_triton_moe_tile tile;
    strata_serve_fused_moe_bf16_tile(m, experts, &tile);
    return (double)((k + tile.block_k - 1) / tile.block_k) * r->step_s;
}

strata_serve_fused_moe_gemm strata_serve_fused_moe_bf16_gemm(const strata_hw *hw, uint32_t unit, uint64_t tokens,
                                                             uint32_t experts, uint64_t width, uint64_t routed,
                                                             uint64_t active)
{
    return (strata_serve_fused_moe_gemm){tokens, experts, width, routed, active,
                                         strata_hw_compute(hw, unit)->kernel.sms,
                                         strata_hw_compute_flops(hw, unit, STRATA_DTYPE_BF16),
                                         strata_hw_device_name(hw)};
}

/* The MMA work the replicas of a CDNA row's tile run besides the tile's own (serve_mfma_layout.h): (replicas - 1)
 * x 2 BM BN K (K whole k-blocks) a tile, in the tile waves at the measured rate a SM (serve_triton_moe.h). ESTIMATE:
 * each replica wavefront runs the whole tile's MFMAs and operand reads on its own SIMD, so the K loop's work a
 * program grows as if its tile were `replicas` times larger, at the same fraction of the CU's peak. */
static double replica_s(const strata_serve_fused_moe_bf16 *r, const strata_serve_triton_moe_tile *t,
                        const strata_serve_fused_moe_gemm *g, uint64_t k, uint64_t n)
{
    uint32_t rep = r->mfma_warps ? strata_serve_mfma_replicas(t->block_m, t->block_n, r->mfma_warps) : 1;
    return rep > 1 ? (rep - 1) * strata_serve_triton_moe_tile_mma_s(t, g->routed, g->active, k, n, g->sms,
                                                                    g->bf16_peak)
                   : 0;
}

/* sglang-0.5, vllm-0.11-rocm: the default tile's waves at the BF16 peak (serve_triton_moe.h's model), with a CDNA
 * row's MFMA replicas; 0 where a file is shipped. */
static double tile_waves_s(const strata_serve_fused_moe_bf16 *r, const strata_serve_fused_moe_gemm *g, uint64_t k,
                           uint64_t n)
{
    if (strata_serve_fused_moe_bf16_shipped(r, g->experts, g->width, g->device))
        return 0;
    strata_serve_triton_moe_tile tile;
    strata_serve_fused_moe_bf16_tile(g->tokens, g->experts, &tile);
    return strata_serve_triton_moe_tile_waves_s(&tile, g->routed, g->active, k, n, g->sms, g->bf16_peak) +
           replica_s(r, &tile, g, k, n);
}

double strata_serve_fused_moe_bf16_s(const strata_serve_fused_moe_bf16 *r, double grouped_s,
                                     const strata_serve_fused_moe_gemm *g, uint64_t k, uint64_t n)
{
    if (!r)
        return grouped_s;
    if (r->step_s > 0)
        return fmax(grouped_s, strata_serve_fused_moe_bf16_chain_s(r, g->tokens, g->experts, g->width, k));
    return fmax(grouped_s, tile_waves_s(r, g, k, n));
}

uint32_t strata_serve_fused_moe_bf16_shared(const strata_serve_fused_moe_bf16 *r, const strata_serve_model *m)
{
    bool unquantized = strata_serve_dtype_bytes(m->dtype) >= 2; /* the row prices 16-bit experts only */
    bool declares = m->router_groups > 0; /* the models whose SGLang file fuses (header): biased routers */
    return r && r->fuses_shared && unquantized && declares && !m->kv_lora_rank ? m->shared_experts : 0;
}
