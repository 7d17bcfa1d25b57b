/*
 * serve_fused_moe_bf16.c: vLLM's Triton fused_moe on unquantized experts at
 * a release's default config (serve_fused_moe_bf16.h, with its sources).
 */
#include "serve/serve_fused_moe_bf16.h"
#include <math.h>
#include "core/error.h"
#include "hw/coll_impl.h"
#include "serve/serve_names.h"

enum { SHIPPED_MAX = 8 };

struct strata_serve_fused_moe_bf16 {
    const char *name;
    const char *what;
    struct {
        uint32_t e, n;
    } shipped[SHIPPED_MAX]; /* the (E, N) pairs of its unquantized configs/ files ({0, 0} ends the list) */
    double step_s;          /* one K step of a default small-tile program (serve_fused_moe_bf16.h) */
};

/* vllm 0.4.2 (PyPI wheel), vllm/model_executor/layers/fused_moe/configs/: E=8,N=1792 / 2048 / 3584 / 4096 / 7168
 * and E=16,N=1344 / 2688 (device_name A100-SXM4-40GB, A100-SXM4-80GB, H100_80GB_HBM3; the list taken for every
 * device, ESTIMATE: a part named in no file falls back to the default too). The step: vllm-project/vllm PR #40542,
 * 183.5 us at M = 1 over 32 + 22 K steps (serve_fused_moe_bf16.h). */
#define PR40542_M1_S 183.5e-6
#define PR40542_STEPS 54.0

static const strata_serve_fused_moe_bf16 rows[] = {
    {"vllm-0.4.2",
     "vLLM 0.4.2's fused_moe: tuned files for E=8 and E=16 only, else the default 16 x 32 x 64 tile at M <= E",
     {{8, 1792}, {8, 2048}, {8, 3584}, {8, 4096}, {8, 7168}, {16, 1344}, {16, 2688}, {0, 0}},
     PR40542_M1_S / PR40542_STEPS},
    {NULL, NULL, {{0, 0}}, 0},
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
    if (!name || !strata_hw_nccl_arch(hw, &arch) || arch != STRATA_NCCL_AMPERE)
        return NULL;
    return serve_names_find(SERVE_NAMES(rows, strata_serve_fused_moe_bf16), name);
}

bool strata_serve_fused_moe_bf16_shipped(const strata_serve_fused_moe_bf16 *r, uint32_t experts, uint64_t n)
{
    for (int i = 0; r && i < SHIPPED_MAX && r->shipped[i].e; i++)
        if (r->shipped[i].e == experts && r->shipped[i].n == n)
            return true;
    return false;
}

void strata_serve_fused_moe_bf16_tile(uint64_t m, uint32_t experts, strata_serve_fused_moe_tile *tile)
{
    bool small = m <= experts; /* fused_moe.py l. 417: if M <= E */
    *tile = small ? (strata_serve_fused_moe_tile){DEFAULT_SMALL_M, DEFAULT_SMALL_N, DEFAULT_SMALL_K}
                  : (strata_serve_fused_moe_tile){DEFAULT_LARGE_M, DEFAULT_LARGE_N, DEFAULT_LARGE_K};
}

double strata_serve_fused_moe_bf16_chain_s(const strata_serve_fused_moe_bf16 *r, uint64_t m, uint32_t experts,
                                           uint64_t n, uint64_t k)
{
    if (!r || !m || !k || m > experts || strata_serve_fused_moe_bf16_shipped(r, experts, n))
        return 0;
    strata_serve_fused_moe_tile tile;
    strata_serve_fused_moe_bf16_tile(m, experts, &tile);
    return (double)((k + tile.block_k - 1) / tile.block_k) * r->step_s;
}

double strata_serve_fused_moe_bf16_s(const strata_serve_fused_moe_bf16 *r, double grouped_s, uint64_t m,
                                     uint32_t experts, uint64_t n, uint64_t k)
{
    return fmax(grouped_s, strata_serve_fused_moe_bf16_chain_s(r, m, experts, n, k));
}
