/*
 * net_protocol.h: what one network message costs as the network's software
 * runs it, by message size: the protocol a message of a given size takes,
 * the one-way flights at the route's latency it needs before its last byte
 * lands at the receiver, and any copy the receiver makes of it, beyond the
 * one flight and the bytes at the link's rate that every network step
 * already pays (coll_impl_nccl.c: a network step's route and net_step_s).
 * One row per protocol stack, looked up by name (the nccl row's
 * nccl_net_protocol key, or the protocol of its nccl_net_plugin row).
 *
 * Rows (docs/clusters.md, "A message's protocol over EFA (wave 32)"):
 *   efa-rdm-cuda  libfabric's EFA provider (RDM endpoint) on CUDA memory,
 *                 under aws-ofi-nccl's SENDRECV protocol (one fi_tsend a
 *                 message): eager up to eager_max into a host bounce
 *                 buffer, which the provider copies into the GPU's buffer
 *                 by a local read (wave 34), else read-based (the
 *                 request's flight, then the receiver's RDMA read, a round
 *                 trip): two flights more; the messages its sender's
 *                 domain posts with no read in flight, by the runting
 *                 read: their first 307,200 B a peer as packets the
 *                 receiver's host handles and copies one by one (waves
 *                 43-44: docs/clusters.md, "The runting read's budget");
 *   aws-ofi-rdma  aws-ofi-nccl's RDMA protocol (p5, v1.16.3): eager up to
 *                 8192 B into a host bounce buffer, which the receiver
 *                 copies into the GPU's buffer by a local read, but only
 *                 where the receiver's control message has not arrived (a
 *                 ring's first step; a tree's edges have it: wave 38).
 *                 strata prices every step of a ring alike, so every ring
 *                 step of at most 8192 B pays the copy: ESTIMATE, the later
 *                 steps' control messages sent ahead (NCCL_STEPS posts)
 *                 not told from the first's (merge review);
 *                 larger messages an RDMA write after the receiver's control
 *                 message, which NCCL's receives posted ahead have sent
 *                 before the data: no flight more.
 *   cxi-sendrecv  libfabric's CXI provider (HPE Slingshot 11) under
 *                 aws-ofi-nccl's SENDRECV (wave 44): eager up to 4097 B
 *                 (rdzv_threshold + rdzv_get_min) into the posted GPU
 *                 buffer, no copy; else the rendezvous Put and the NIC's
 *                 Get of the rest, a round trip: two flights more.
 *   cxi-alt-read  the same under Sigma2 Olivia's NCCL modules (HPE's
 *                 ccl_env.sh: FI_CXI_RDZV_PROTO=alt_read, RDZV_EAGER_SIZE 0;
 *                 plus RDZV_THRESHOLD and RDZV_GET_MIN 0: wave 45): eager up to 192 B (the inject size the
 *                 threshold is raised to), else a rendezvous Put of no
 *                 data, the Get the receiver's provider issues and its
 *                 done notify to the source, whose ACK completes the
 *                 receive: four flights more.
 * The first two rows run over EFA, whose files' routes stand for one message
 * through the network library (osu_latency over libfabric: docs/clusters.md,
 * "What one message costs over EFA"), so a network step also pays NCCL's
 * own links outside the library (strata_net_protocol_nccl_ends_s: "The EFA
 * step (wave 34)") and its wait on the proxies' passes, whose tests are the
 * library's only progress (cq_read_s: nccl_proxy_pass.h, "The EFA proxy
 * pass (wave 35)").
 *
 * Invariant: the table is constant; the functions are pure.
 */
#ifndef STRATA_HW_NET_PROTOCOL_H
#define STRATA_HW_NET_PROTOCOL_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/hw.h"
#include "hw/nccl_tuning.h"

typedef struct strata_net_protocol {
    const char *name;
    uint64_t eager_max;    /* bytes: the largest message sent eagerly (one flight) */
    uint32_t large_flights; /* one-way flights beyond the first a larger message needs */
    bool eager_copy;       /* an eager message lands in host memory and is copied to the GPU */
    uint64_t runt_max;     /* bytes: a peer's budget of runt bytes in flight, a larger message's first bytes sent as
                            * eager packets (the runting read) while its domain has no read in flight (0: none) */
    double packet_s;       /* seconds: the receiver's host handling one such packet and posting its copy (ESTIMATE) */
    bool eager_before_ctrl; /* a message goes eagerly only when sent before its receive's control message
                             * arrived (aws-ofi-nccl's RDMA send), else as the RDMA write of a larger one */
    bool write_after_ctrl; /* a message above eager_max is an RDMA write into the buffer the receive's control
                            * message names, so it leaves only once that message is there (aws-ofi-nccl's RDMA
                            * send); rows whose larger messages are reads price their handshake in large_flights */
    double local_read_s;   /* seconds: that copy's fixed time, a local RDMA read (ESTIMATE) */
    bool library_route;    /* the network's route is one message through the library, NCCL's ends not in it */
    double cq_read_s;      /* seconds: one ncclNet test's read of a completion queue that finds nothing (ESTIMATE;
                            * 0: the proxy's pass is in NCCL's hwLatencies[NET]), nccl_proxy_pass.h */
    bool rails_per_test;   /* a test reads every rail's queue (aws-ofi-nccl's RDMA protocol), else one */
    const char *fabric;    /* the network it runs over ("EFA": AWS's SRD, neither InfiniBand nor RoCE, so no
                            * nccl_ib_link_layer or nccl_ib_mtu beside it: coll_impl_nccl.c) */
} strata_net_protocol;

/* The row of a protocol by name; NULL for an unknown name. */
const strata_net_protocol *strata_net_protocol_find(const char *name);
/* The rows' names, comma-separated (for error messages; g_free). */
char *strata_net_protocol_list(void);

/* The time one message of msg_bytes costs beyond the one flight and its
 * bytes at the link's rate, on the network of `nics` (a flight: the route
 * NIC to NIC, 2 x nics->latency; an eager copy: local_read_s plus the bytes
 * at the NIC's PCIe rate, that term 0 where the file gives no PCIe link).
 * ctrl_ahead: the receive's control message reaches the sender before the
 * data is ready (a tree's network edges: net_protocol.c), so a row with
 * eager_before_ctrl sends even a small message as the RDMA write.
 * runt_msgs: the read-based messages of msg_bytes the sender's domain
 * posts to one peer at once with no read in flight before them
 * (strata_net_protocol_nccl_runt_msgs; 0: a read is in flight, the long
 * read). A row with runt_max sends them by the runting read while the
 * peer's budget lasts: the first min(runt_msgs x msg, runt_max) bytes of
 * the window as packets of eager_max, each handled by the receiver's host
 * (packet_s), the last copied into the GPU by a local read, the rest by
 * the RDMA read (the large flights) at the same time: max(flights,
 * packets x packet_s + local_read_s), the flights 0 where the runts carry
 * the window whole. Non-decreasing in msg_bytes and in runt_msgs.
 * proto NULL, no NICs or 0 bytes: 0. */
double strata_net_protocol_extra_s(const strata_net_protocol *proto, const strata_hw_nics *nics,
                                   uint64_t msg_bytes, bool ctrl_ahead, uint32_t runt_msgs);

/* The fixed time of a network step of NCCL's protocol `nccl_proto` spent
 * in NCCL's own links outside the network library (the sender's store and
 * its proxy's poll, the receiver's learning of the data: docs/clusters.md,
 * "One step across the network", links 1, 2 and 5), where the row's route
 * stands for the library's message (library_route); else 0. A network
 * step's fixed charge is the larger of this and NCCL's hwLatencies[NET]
 * less the route (coll_impl_nccl.c). */
double strata_net_protocol_nccl_ends_s(const strata_net_protocol *proto, strata_nccl_proto nccl_proto);

/* A network step's time beyond the route's flight, as NCCL's tuner and the
 * files price it: the larger of NCCL's hwLatencies[NET] less the route
 * (hw_lat_s - route_s) and NCCL's own ends (strata_net_protocol_nccl_ends_s),
 * plus a message of msg_bytes's costs (strata_net_protocol_extra_s). proto
 * NULL: max(0, hw_lat_s - route_s). */
double strata_net_protocol_step_s(const strata_net_protocol *proto, strata_nccl_proto nccl_proto, double hw_lat_s,
                                  double route_s, const strata_hw_nics *nics, uint64_t msg_bytes, bool ctrl_ahead,
                                  uint32_t runt_msgs);
/* The read-based messages a sender's domain posts to one peer together,
 * with no read in flight before them, at the network step whose cost a
 * collective's first chunk pays (strata_net_protocol_extra_s's runt_msgs):
 * libfabric's EFA provider takes the runting read only while its domain
 * (one a process and NIC) has no read-based message in flight and the peer
 * has runt bytes left (net_protocol.c). A tree's (Tree) first message of
 * a collective on each network edge is the first of its sender's domain (the
 * collective before ended with the down message's read); the ranks of a
 * node head ceil(channels / ranks a node) channels' edges each (channel c's
 * chain starts at local rank c mod m), to the same peer, posted at once. A
 * ring's charged steps (its critical chunk's hops in the first loop) follow
 * the connection's earlier steps, whose reads are in flight: 0, the long
 * read. 0 as well on one node and for the other algorithms, and for
 * p2p (its first message after a finished op would also runt: not built).
 * ESTIMATE (wave 44 review): the step model charges this one price on
 * every level of the tree's first chunk, down as well as up; where a
 * channel carries more than one step (12 MiB and up on p4d), later
 * chunks' up messages are reads in flight when the first goes down, so the
 * down levels take the long read (19.74 us on p4d) rather than the runt
 * (51.4 us): at most ~31.7 us too much a down level. */
uint32_t strata_net_protocol_nccl_runt_msgs(strata_nccl_algo algo, uint32_t ranks, uint32_t nodes, uint32_t channels);
/* Whether NCCL's algorithm `algo` has every network message's receive
 * posted, and its control message arrived, before the sender's data is
 * ready in a run of back-to-back collectives (Tree and NVLS_TREE: a node's
 * message up waits for the node's reduction, which starts only after the
 * previous collective's message down, itself sent after the receiver of the
 * up edge finished: net_protocol.c); a ring's first step of a collective
 * goes out before its receiver's next post can arrive. */
bool strata_net_protocol_ctrl_ahead(strata_nccl_algo algo);
/* Whether a network message of msg_bytes that a receive posted just now
 * answers (a p2p call's first chunk after the call before: coll_impl_nccl.c
 * p2p_cts_s) leaves only after that receive's control message has crossed:
 * NCCL's own transport (proto NULL: ncclIbIsend waits for the receiver's
 * FIFO entry) at any size, a row with write_after_ctrl above eager_max
 * (a smaller one goes eagerly, not waiting), other rows never (their
 * handshake is in large_flights). */
bool strata_net_protocol_waits_ctrl(const strata_net_protocol *proto, uint64_t msg_bytes);

/* The message a network step of NCCL sends (its proxy's one isend a step's
 * slice, src/transport/net.cc sendProxyProgress): a channel's share of the
 * collective's `bytes` (a ring's: of each of `ranks` ranks' chunks; other
 * algorithms': the channel's whole share), at most one step of the
 * protocol's buffer (LL 32 KiB of data, LL128 576,000 B, Simple
 * simple_step, or 512 KiB where 0, two steps a slice on a ring), in the
 * protocol's wire format (LL 2x, LL128 128/120). */
uint64_t strata_net_protocol_nccl_message(strata_nccl_proto proto, strata_nccl_algo algo, uint64_t bytes,
                                          uint32_t ranks, uint32_t channels, uint64_t simple_step);

#endif
