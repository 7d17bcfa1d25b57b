/*
 * serve_mfma_layout.c: Triton's AMD MFMA warp layout of a dot's tile (serve_mfma_layout.h, with its source).
 */
#include "serve/serve_mfma_layout.h"

/* chooseMfmaInstruction's M and N size: 32 from a tile side of 32, 16 from 16, else 0 (no MFMA). */
static uint32_t mfma_dim(uint32_t block_m, uint32_t block_n)
{
    uint32_t side = block_m < block_n ? block_m : block_n;
    return side >= 32 ? 32 : side >= 16 ? 16 : 0;
}

uint32_t strata_serve_mfma_replicas(uint32_t block_m, uint32_t block_n, uint32_t num_warps)
{
    uint32_t d = mfma_dim(block_m, block_n);
    if (!d || !num_warps)
        return 1;
    uint32_t w0 = 1, w1 = 1; /* warpsPerTile, Case 3 */
    while (w0 * w1 < num_warps) {
        if (block_m / (d * 2) / w0 >= block_n / d / w1) {
            if (w0 < block_m / d)
                w0 *= 2;
            else
                w1 *= 2;
        } else {
            w1 *= 2;
        }
    }
    if (w1 * d > block_n) { /* the result is {ret[1], ret[0]} */
        uint32_t t = w0;
        w0 = w1;
        w1 = t;
    }
    uint32_t rows = (block_m + d - 1) / d, cols = (block_n + d - 1) / d;
    uint32_t distinct = (w0 < rows ? w0 : rows) * (w1 < cols ? w1 : cols);
    uint32_t r = distinct ? num_warps / distinct : 1;
    return r ? r : 1;
}
