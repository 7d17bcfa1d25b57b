/*
 * serve_triton_gemm.c: aiter's Triton block-scale FP8 GEMM on gfx942, its
 * config and its programs' time (serve_triton_gemm.h, with its sources).
 */
#include "serve/serve_triton_gemm.h"
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "serve/serve_names.h"

struct strata_serve_triton_gemm {
    const char *name;
    const char *what;
    uint32_t block_m, block_n, block_k; /* the config's tile (no split-K: NUM_KSPLIT 1) */
    uint32_t scale_group_k;             /* K elements one activation and weight scale covers */
    uint32_t dequant_ops;               /* FP32 vector operations per accumulator element per K step */
};

/* ROCm/aiter v0.1.7.post1 @44610f47: aiter/ops/triton/configs/gemm/MI300X-GEMM-A8W8_BLOCKSCALE.json, "any" (its
 * only key); the dequantization tl.dot(a, b) * a_scale[:, None] * b_scale[None, :] added to the accumulator,
 * _triton_kernels/gemm_a8w8_blockscale.py l. 197-201: two multiplies and an add. */
static const strata_serve_triton_gemm rows[] = {
    {"aiter-triton-a8w8-blockscale-gfx942",
     "aiter's Triton gemm_a8w8_blockscale on gfx942 (MI300X config: 128 x 128 x 128, no split-K)", 128, 128, 128,
     128, 3},
    {NULL, NULL, 0, 0, 0, 0, 0},
};

const strata_serve_triton_gemm *strata_serve_triton_gemm_find(const char *name, GError **err)
{
    return serve_names_lookup(SERVE_NAMES(rows, strata_serve_triton_gemm), name, STRATA_ERROR_INTERNAL, err,
                              "unknown Triton block-scale GEMM '%s' (known: %s)");
}

const char *strata_serve_triton_gemm_name(const strata_serve_triton_gemm *g) { return g ? g->name : NULL; }

static uint64_t cdiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

void strata_serve_triton_gemm_time_of(const strata_serve_triton_gemm *g, uint64_t m, uint64_t k, uint64_t n,
                                      uint32_t cus, double f8_peak, double f32_peak, double mem_bw,
                                      strata_serve_triton_gemm_time *t)
{
    memset(t, 0, sizeof *t);
    if (!g || !m || !k || !n || !cus || f8_peak <= 0 || f32_peak <= 0 || mem_bw <= 0)
        return;
    t->programs = cdiv(m, g->block_m) * cdiv(n, g->block_n);
    t->waves = cdiv(t->programs, cus);
    t->k_steps = cdiv(k, g->block_k);
    double tile = (double)g->block_m * g->block_n;
    /* the whole tile's MFMAs whatever m (rows past m wrap), at one CU's share of the FP8 peak */
    t->mma_s = 2.0 * tile * g->block_k / (f8_peak / cus);
    /* a K step's distinct HBM bytes over the grid, A's m rows and W's n columns (FP8) and their FP32 scales, shared
     * evenly by its programs (repeats of a slice, a decode's wrapped rows among them, come from the caches), at the
     * CU's share of the bandwidth among the programs that run at once */
    double bytes = (double)g->block_k * (double)(m + n) + 4.0 * (double)(m + cdiv(n, g->scale_group_k));
    double at_once = (double)(t->programs < cus ? t->programs : cus);
    t->feed_s = bytes / (double)t->programs / (mem_bw / at_once);
    /* each vector operation in an FMA's issue slot: two of the FP32 peak's flops (serve_triton_gemm.h) */
    t->dequant_s = 2.0 * g->dequant_ops * tile / (f32_peak / cus);
    t->program_s = (double)t->k_steps * (fmax(t->mma_s, t->feed_s) + t->dequant_s);
    t->s = (double)t->waves * t->program_s;
}
