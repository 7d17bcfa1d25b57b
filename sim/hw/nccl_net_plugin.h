/*
 * nccl_net_plugin.h: NCCL network plugins (NCCL_NET_PLUGIN) as a run's
 * NCCL sees them, one row per plugin and platform, looked up by name (the
 * nccl row's nccl_net_plugin key, coll_impl_nccl.c): the properties the
 * plugin reports to NCCL that strata's NCCL model reads (the latency,
 * ncclNetProperties.latency; the NICs it shows as one device) and the
 * NCCL environment the plugin sets for its platform before NCCL reads it.
 *
 * A plugin's environment does not replace a variable the run set itself
 * (aws-ofi-nccl's env_manager: "Skipping adding %s to environment, already
 * set"), so a row's figure is a default: a key the hardware file or the
 * run's --set gives wins (coll_impl_nccl.c).
 *
 * Rows:
 *   aws-ofi-p4d  aws/aws-ofi-nccl's block for p4d.24xlarge (the SENDRECV
 *                protocol: each EFA NIC its own device; NCCL_PROTO=simple,
 *                p4d's EFA lacking 128-byte in-order delivery);
 *   aws-ofi-p5   its block for p5.48xlarge and p5e.48xlarge, v1.16.3 (the
 *                RDMA protocol: a GPU's 4 NICs one device of 4 rails);
 *   aws-ofi-p4de-v1.8  its block for p4de.24xlarge at tag v1.8.1-aws
 *                (SENDRECV; of the environment only NVLS_TREE's chunk).
 *
 * Invariant: the table is constant; sizes are bytes, 0 where the plugin
 * sets nothing (NCCL's own default stands).
 */
#ifndef STRATA_HW_NCCL_NET_PLUGIN_H
#define STRATA_HW_NCCL_NET_PLUGIN_H

#include <stdint.h>

typedef struct strata_nccl_net_plugin {
    const char *name;
    double latency_s;          /* ncclNetProperties.latency (NCCL's latencyInter) */
    uint32_t nic_group;        /* NICs shown as one device of their summed speed */
    uint64_t buffsize;         /* NCCL_BUFFSIZE */
    uint64_t p2p_net_chunk;    /* NCCL_P2P_NET_CHUNKSIZE */
    uint64_t nvls_chunk;       /* NCCL_NVLS_CHUNKSIZE */
    uint64_t nvlstree_max;     /* NCCL_NVLSTREE_MAX_CHUNKSIZE */
    const char *net_protocol;  /* its messages' protocol over the network (net_protocol.h) */
    uint32_t protos;           /* NCCL_PROTO it sets: 1u << strata_nccl_proto each (0: none) */
} strata_nccl_net_plugin;

/* The row of a plugin by name; NULL for an unknown name. */
const strata_nccl_net_plugin *strata_nccl_net_plugin_find(const char *name);
/* The rows' names, comma-separated (for error messages; g_free). */
char *strata_nccl_net_plugin_list(void);

#endif
