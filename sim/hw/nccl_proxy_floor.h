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
 * times on Simple (l. 351): the floor NCCL's own model puts under every
 * step of a ring spanning nodes (l. 352, intraLat = max(intraLat,
 * netOverhead): "Inter-node rings still have to launch nsteps * net
 * overhead", l. 347-355), once a step whatever the channels. Scaling it by
 * the connections a proxy serves is strata's reading of the progress loop
 * above (ESTIMATE: each connection's step costs the thread that figure; no
 * source times one). A rank whose proxy holds `ops` connections
 * (nccl_proxy_pass.h strata_nccl_proxy_pass_ops: a ring's channel crosses
 * between nodes `nodes` times, a send and a receive each, spread over the
 * ranks) spends ops times that on each step of the collective, so the
 * steps of one connection start at least that far apart. The thread posts
 * while the NIC moves earlier steps: it paces the steps, it does not add
 * to a step that waits for its data anyway.
 *
 * Scope: the floor is computed for every protocol and ring or tree, but
 * the schedule applies it only where a step has a connection lane: the
 * LL and LL128 ring all-reduce across nodes (coll_kit_tiers.c); Simple
 * rings, trees, all-gather and reduce-scatter rings are not paced. The
 * pace runs before the step's own fixed cost on the lane (spmd.c), which
 * already holds the proxy's posting (net_step_s): a few us counted twice
 * on the forced 2 x 8 ring (200.2 us at 1 MiB against 14 + 30 x 6 = 194).
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
