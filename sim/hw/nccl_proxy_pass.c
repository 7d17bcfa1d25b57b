/*
 * nccl_proxy_pass.c: NCCL's proxy pass as a network step waits on it
 * (contract and sources in nccl_proxy_pass.h).
 *
 * The yield: sched_yield() at the end of a pass that progressed nothing,
 * with no other runnable thread on the proxy's core (p4d and p5 give 96
 * and 192 vCPUs to 8 GPUs' proxies): a system call's entry and exit and
 * the scheduler's pick of the same thread. ESTIMATE 0.3 us; no public
 * figure on these instances was found. The test's queue reads are the
 * network protocol's row (net_protocol.c cq_read_s).
 */
#include "hw/nccl_proxy_pass.h"
#include <glib.h>

/* s: sched_yield() of an idle pass (ESTIMATE, above) */
#define PROXY_YIELD_S 0.3e-6

/* passes a network step waits on, by NCCL protocol (LL, LL128, Simple):
 * half at each end, and Simple's flush completion half more where the
 * receiver flushes (below compute capability 9.0: NCCL v2.22.3-1
 * src/graph/paths.cc l. 433-434; strata's nccl_gdr_flush) */
static const double step_passes[STRATA_NCCL__PROTOS] = {1.0, 1.0, 1.5};

uint32_t strata_nccl_proxy_pass_ops(strata_nccl_algo algo, uint32_t ranks, uint32_t nodes, uint32_t channels)
{
    if (nodes < 2)
        return 1;
    uint64_t links = algo == STRATA_NCCL_RING ? 2ull * nodes : 4ull * (nodes - 1);
    uint64_t over = MAX(1u, ranks);
    uint64_t ops = (links * MAX(1u, channels) + over - 1) / over;
    return (uint32_t)MAX(1u, ops);
}

double strata_nccl_proxy_pass_s(const strata_net_protocol *proto, uint32_t ops, uint32_t rails)
{
    if (!proto || proto->cq_read_s <= 0)
        return 0;
    uint32_t reads = proto->rails_per_test ? MAX(1u, rails) : 1u;
    return (double)MAX(1u, ops) * reads * proto->cq_read_s + PROXY_YIELD_S;
}

double strata_nccl_proxy_pass_step_s(const strata_net_protocol *proto, strata_nccl_proto nccl_proto,
                                     strata_nccl_algo algo, uint32_t ranks, uint32_t nodes, uint32_t channels,
                                     uint32_t rails, bool flushes)
{
    if (!proto || nodes < 2)
        return 0;
    uint32_t ops = strata_nccl_proxy_pass_ops(algo, ranks, nodes, channels);
    double passes = nccl_proto == STRATA_NCCL_SIMPLE && !flushes ? 1.0 : step_passes[nccl_proto];
    return passes * strata_nccl_proxy_pass_s(proto, ops, rails);
}
