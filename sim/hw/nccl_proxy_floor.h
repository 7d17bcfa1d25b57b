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
 * The pace spaces a connection's posts, not its deliveries (wave 47): the
 * thread isends a step and moves on (net.cc v2.27.7-1 l. 1210-1214,
 * `transmitted` advances; the step's completion is tested on a later
 * pass, l. 1222-1233, with up to NCCL_STEPS in flight, l. 1162), so a
 * step's flight (its fixed cost, net_step_s) runs beside the posts of the
 * steps after it, as NCCL's model takes a step as max(intraLat,
 * netOverhead), not their sum (tuning.cc l. 347-355). spmd.c fixed_cost
 * runs the pace on the connection's lane and the step's fixed cost on its
 * own lane after its copy, which follows the post, so a connection's copies
 * reach the NIC in post order (wave 46 ran both on the connection's lane:
 * 200.2 us on the forced 2 x 8 ring at 1 MiB, now 198.2 against 14 + 30 x
 * 6 + 2 = 196).
 *
 * Scope: the same thread progresses every network connection, whatever
 * the pattern (proxy.cc v2.27.7-1 ncclProxySaveOp l. 577-704: rings,
 * trees up and down, PAT, p2p; l. 417 each op's progress is its
 * connection's transport's, net.cc l. 1749-1750 sendProxyProgress and
 * recvProxyProgress for every network connection), and RCCL's is the
 * same code (ROCm/rccl @0cbce2a7 src/transport/net.cc sendProxyProgress
 * l. 1123-1340, window l. 1181, isend l. 1226, test l. 1254-1263; its
 * tuning.cc getNetOverhead l. 294-301, the ring's floor l. 446-452). The
 * floor is computed for every protocol and ring or tree, but the schedule
 * applies it only where a step has a connection lane: the LL and LL128
 * ring all-reduce across nodes (coll_kit_tiers.c); Simple all-reduce
 * rings, trees and RCCL's rings have no connection lane and are not paced
 * (docs/clusters.md, wave 47).
 *
 * Ring all-gather and reduce-scatter (wave 49, strata_nccl_post_pace_s):
 * one post overhead a connection, not scaled by the connections a proxy
 * serves, and the connection's first post unpaced. NCCL's ring model
 * charges every step of a ring spanning nodes max(intraLat, netOverhead)
 * with no channel term (NVIDIA/nccl v2.30.4-1 src/graph/tuning.cc l.
 * 379-387, getNetOverhead l. 222-227; latencies are set per algorithm and
 * protocol, the channel count cut later from the bytes: src/enqueue.cc
 * topoGetAlgoInfo l. 1985-2020). On a 2 x 8 ring all 15 steps cross the
 * one connection between the nodes, one isend each in order (src/transport/
 * net.cc sendProxyProgress l. 1301-1357: step `transmitted` once its data
 * is there, then `transmitted` advances a step), so the ring ends no
 * sooner than 14 spacings and one flight after its first isend: NCCL's
 * 14 x netOverhead + interLat term for term (docs/clusters.md, "The ring's
 * step across nodes", wave 48). The first isend waits for its data alone:
 * the proxy has handed the GPU its buffers ahead (l. 1279-1299, up to
 * maxDepth steps). ESTIMATE: that NCCL's post overhead is the time between
 * two isends of one connection (no source times one). Every protocol: the
 * isend path serves Simple, LL and LL128 alike (l. 1306-1340).
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
/* The least time (s) between two posts of one network connection of a
 * ring all-gather or reduce-scatter: NCCL's network post overhead (x 3 on
 * Simple), whatever the channels; 0 on one node (wave 49, above). */
double strata_nccl_post_pace_s(const strata_nccl_comm *c, strata_nccl_proto proto);

#endif
