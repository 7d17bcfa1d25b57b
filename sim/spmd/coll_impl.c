/*
 * coll_impl.c: the hardware model's collective implementation (contract
 * in coll_impl.h).
 */
#include "spmd/coll_impl.h"
#include "core/error.h"

strata_algo strata_coll_impl_default(const strata_hw *hw, strata_op_kind kind)
{
    bool reducing = kind == STRATA_OP_ALL_REDUCE || kind == STRATA_OP_ALL_GATHER || kind == STRATA_OP_REDUCE_SCATTER;
    switch (strata_hw_collectives_of(hw)->impl) {
    case STRATA_HW_COLL_NCCL: return reducing ? STRATA_ALGO_NCCL : STRATA_ALGO_DEFAULT;
    case STRATA_HW_COLL_XLA: return reducing ? STRATA_ALGO_BIDIR_TORUS : STRATA_ALGO_DEFAULT;
    default: return STRATA_ALGO_DEFAULT;
    }
}

bool strata_coll_impl_tune(const strata_hw *hw, strata_coll_shape *shape, GError **err)
{
    const strata_hw_collectives *hc = strata_hw_collectives_of(hw);
    if (hc->impl != STRATA_HW_COLL_NCCL) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "algo=nccl: expected a hardware model whose [interconnect] declares collectives = nccl "
                    "(its GPUs' architecture and NCCL's ring graph), got %s", strata_hw_name(hw));
        return false;
    }
    strata_nccl_comm comm = {.ranks = strata_coll_ranks(shape), .graph_channels = hc->nccl_channels,
                             .channel_gbs = hc->nccl_channel_bandwidth / 1e9, .nvls = hc->nvls};
    strata_nccl_arch_from_name(hc->nccl_arch, &comm.arch); /* hw checked the name */
    uint64_t n = comm.ranks;
    /* NCCL's size: an all-gather's OUT (n x IN), else IN */
    uint64_t bytes = shape->kind == STRATA_OP_ALL_GATHER ? shape->in_bytes * n : shape->in_bytes;
    strata_nccl_choice ch;
    if (!strata_nccl_choose(&comm, shape->kind, bytes, &ch)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "algo=nccl: expected all-reduce, all-gather or reduce-scatter over 2 ranks or more, got %s "
                    "over %" G_GUINT64_FORMAT, strata_op_kind_name(shape->kind), n);
        return false;
    }
    shape->nccl_algo = ch.algo;
    shape->nccl_proto = ch.proto;
    shape->channels = ch.channels;
    shape->chunk_bytes = ch.chunk_bytes;
    shape->nvls_efficiency = ch.nvls_efficiency;
    /* The kernel launch and setup: NCCL's base latency of the pair
     * (tuning.cc baseLatencies); NVLS's entry is 0, its 25 us being its
     * whole latency, so NVLS takes the Simple ring's 8.4 us (ESTIMATE:
     * the same kernel launch; its steps are simulated). */
    shape->launch_s = (ch.algo == STRATA_NCCL_NVLS ? 8.4 : ch.base_us) * 1e-6;
    return true;
}
