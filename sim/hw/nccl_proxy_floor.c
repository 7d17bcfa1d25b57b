/*
 * nccl_proxy_floor.c: the proxy's work a step as the pace of a network
 * connection's steps (contract and sources in nccl_proxy_floor.h).
 */
#include "hw/nccl_proxy_floor.h"
#include <glib.h>
#include "hw/nccl_proxy_pass.h"

double strata_nccl_proxy_floor_s(const strata_nccl_comm *c, strata_nccl_proto proto, strata_nccl_algo algo,
                                 uint32_t channels)
{
    uint32_t nodes = MAX(1u, c->nodes);
    if (nodes < 2)
        return 0;
    uint32_t ops = strata_nccl_proxy_pass_ops(algo, c->ranks, nodes, channels);
    return (double)ops * strata_nccl_net_overhead_us(c, proto) * 1e-6; /* x 3 on Simple */
}

double strata_nccl_post_pace_s(const strata_nccl_comm *c, strata_nccl_proto proto)
{
    return MAX(1u, c->nodes) < 2 ? 0 : strata_nccl_net_overhead_us(c, proto) * 1e-6; /* x 3 on Simple */
}
