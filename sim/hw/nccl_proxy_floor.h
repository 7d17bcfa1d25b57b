/*
 * nccl_proxy_floor.h: the least time between two steps of one network
 * connection of an NCCL collective where NCCL's own network transport
 * runs it (IB verbs over InfiniBand or RoCE: no network library row),
 * because one proxy thread per GPU progresses every network connection of
 * that GPU.
 *
 * The mechanism (docs/clusters.md, "The proxy's work a step (issue 39,
 * wave 46)"): NCCL runs one progress thread per rank (NVIDIA/nccl
 * v2.27.7-1 src/proxy.cc ncclProxyProgress), which walks every network
 * operation of the rank and does one action per connection (sub) a pass
 * (src/transport/net.cc sendProxyProgress l. 1108-1258: post, isend, test,
 * each followed by `continue`; recvProxyProgress l. 1260-1470: irecv with
 * its clear-to-send, test). A step of a connection costs the thread NCCL's
 * network post overhead (src/graph/tuning.cc v2.27.7-1 l. 201-209,
 * getNetOverhead: 1 us on Intel x86, 2 us on AMD x86, 1 otherwise), three
 * times on Simple (l. 351): the figure NCCL's own model makes the least
 * time of an inter-node ring's step ("Inter-node rings still have to
 * launch nsteps * net overhead", l. 347-355), for a proxy that holds one
 * connection. A rank whose proxy holds `ops` connections
 * (nccl_proxy_pass.h strata_nccl_proxy_pass_ops: a ring's channel crosses
 * between nodes `nodes` times, a send and a receive each, spread over the
 * ranks) spends ops times that on each step of the collective, so the
 * steps of one connection start at least that far apart. The thread posts
 * while the NIC moves earlier steps: it paces the steps, it does not add
 * to a step that waits for its data anyway.
 *
 * Invariant: a pure function; 0 for one node.
 */
#ifndef STRATA_HW_NCCL_PROXY_FLOOR_H
#define STRATA_HW_NCCL_PROXY_FLOOR_H

#include <stdint.h>
#include "hw/nccl_tuning.h"

/* The least time (s) between two steps of one network connection:
 * strata_nccl_proxy_pass_ops's connections x NCCL's network post overhead
 * (x 3 on Simple); 0 on one node. */
double strata_nccl_proxy_floor_s(const strata_nccl_comm *c, strata_nccl_proto proto, strata_nccl_algo algo,
                                 uint32_t channels);

#endif
