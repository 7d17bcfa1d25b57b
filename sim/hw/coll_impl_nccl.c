/*
 * coll_impl_nccl.c: the nccl row of the collective implementations
 * (coll_impl.h): NVIDIA's NCCL on one node.
 *
 * Parameters: the GPUs' architecture (the column of NCCL's tuning tables),
 * NCCL's ring graph as its topology search builds it (channels x the
 * bandwidth of one), and whether the switch reduces and multicasts (NVLink
 * SHARP, NCCL's NVLS algorithm).
 * pick: algo=nccl for all-reduce, all-gather and reduce-scatter (ideal's
 * choice for the others).
 * tune: the algorithm, protocol and channels NCCL's tuning model picks
 * (nccl_tuning.h), and NCCL's fixed cost per collective.
 */
#include "hw/coll_impl.h"
#include <string.h>
#include "core/error.h"
#include "core/units.h"
#include "hw/hw_internal.h"

/* The block load() reads. */
typedef struct nccl_params {
    strata_nccl_arch arch;
    uint32_t channels;         /* the ring graph's channels */
    double channel_bandwidth;  /* B/s per channel */
    bool nvls;
} nccl_params;

static const strata_coll_impl_key nccl_keys[] = {
    {"nccl_arch", true,
     "collectives = nccl: the GPU architecture in NCCL's tuning tables, volta, ampere, hopper or blackwell"},
    {"nccl_channels", true, "collectives = nccl: the channels of NCCL's ring graph, 1 to 32"},
    {"nccl_channel_bandwidth", true, "collectives = nccl: the bandwidth of one channel of that graph"},
    {"nvls", false, "true or false: the switch reduces and multicasts (NVLink SHARP; default false)"},
    {NULL, false, NULL},
};

static void *nccl_load(const hw_load_ctx *ctx, const char *group, GError **err)
{
    nccl_params *p = g_new0(nccl_params, 1);
    char *arch = hw_get_text(ctx, group, "nccl_arch");
    bool ok = strata_nccl_arch_from_name(g_strstrip(arch), &p->arch) ||
              hw_fail_value(ctx, err, group, "nccl_arch", "volta, ampere, hopper or blackwell", arch);
    g_free(arch);
    ok = ok && hw_get_count(ctx, group, "nccl_channels", 1, 32, 1, NULL, &p->channels, err) &&
         hw_get_bandwidth(ctx, group, "nccl_channel_bandwidth", &p->channel_bandwidth, err);
    char *nvls = ok ? hw_get_text(ctx, group, "nvls") : NULL;
    if (nvls && !strata_parse_bool(g_strstrip(nvls), &p->nvls))
        ok = hw_fail_value(ctx, err, group, "nvls", "true or false", nvls);
    g_free(nvls);
    if (!ok)
        g_clear_pointer(&p, g_free);
    return p;
}

static const char *nccl_pick(const strata_hw *hw, strata_op_kind kind, const strata_mesh *mesh, uint32_t mask)
{
    (void)hw;
    (void)mesh;
    (void)mask;
    return strata_coll_reducing(kind) ? "nccl" : NULL;
}

static bool nccl_tune(const strata_hw *hw, strata_op_kind kind, uint32_t ranks, uint64_t in_bytes,
                      strata_coll_tuning *out, GError **err)
{
    const nccl_params *p = strata_hw_coll_params(hw);
    strata_nccl_comm comm = {.arch = p->arch, .ranks = ranks, .graph_channels = p->channels,
                             .channel_gbs = p->channel_bandwidth / 1e9, .nvls = p->nvls};
    uint64_t n = comm.ranks;
    /* NCCL's size: an all-gather's OUT (n x IN), else IN */
    uint64_t bytes = kind == STRATA_OP_ALL_GATHER ? in_bytes * n : in_bytes;
    strata_nccl_choice ch;
    if (!strata_nccl_choose(&comm, kind, bytes, &ch)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "algo=nccl: expected all-reduce, all-gather or reduce-scatter over 2 ranks or more, got %s "
                    "over %" G_GUINT64_FORMAT, strata_op_kind_name(kind), n);
        return false;
    }
    /* The kernel launch and setup: NCCL's base latency of the pair
     * (tuning.cc baseLatencies); NVLS's entry is 0, its 25 us being its
     * whole latency, so NVLS takes the Simple ring's 8.4 us (ESTIMATE:
     * the same kernel launch; its steps are simulated). */
    *out = (strata_coll_tuning){.algo = ch.algo, .proto = ch.proto, .channels = ch.channels,
                                .chunk_bytes = ch.chunk_bytes, .nvls_efficiency = ch.nvls_efficiency,
                                .launch_s = (ch.algo == STRATA_NCCL_NVLS ? 8.4 : ch.base_us) * 1e-6};
    return true;
}

const strata_coll_impl strata_coll_impl_nccl = {
    .name = "nccl",
    .keys = nccl_keys,
    .load = nccl_load,
    .pick = nccl_pick,
    .tune = nccl_tune,
};
