/*
 * nccl_p2p.h: NCCL's point-to-point plan, as NVIDIA/nccl v2.27.7-1 builds
 * it for grouped ncclSend / ncclRecv (nccl-tests' all-to-all: one send and
 * one receive to every peer between ncclGroupStart and ncclGroupEnd).
 *
 *   strata_nccl_p2p_init   the communicator's p2p figures: comm->p2pnChannels
 *                          and p2pnChannelsPerPeer (graph/paths.cc
 *                          ncclTopoComputeP2pChannels, ncclTopoGetNchannels)
 *                          and p2pChunkSize (init.cc computeBuffSizes);
 *   strata_nccl_p2p_parts  the channels one send or receive of `bytes` is cut
 *                          into (enqueue.cc addP2pToPlan) and part i's bounds
 *                          (device.h ncclP2pPartBounds);
 *   strata_nccl_p2p_deltas, _peer  the peer a rank sends to in round k
 *                          of comm->p2pSchedule (init.cc, the quadratic walk
 *                          over node deltas, then local deltas);
 *   strata_nccl_p2p_channel  the channel of part i of round k
 *                          (channel.h ncclP2pChannelBaseForRound, device.h
 *                          ncclP2pChannelForPart).
 *
 * RCCL (ROCm/rccl @0cbce2a, 2.21.5, the NCCL 2.21 line) plans the same
 * grouped sends and receives by NCCL 2.21's older rules, which a plan with
 * `rccl` set follows instead (strata_rccl_p2p_init and each function
 * below, citing RCCL's lines): its schedule (init.cc: node deltas 0, +1,
 * -1, +2, ..., local steps in rank order), its parts (enqueue.cc
 * calcP2pChunkSize), its LL rule (addP2pToPlan: a part of at most
 * NCCL_P2P_LL_THRESHOLD), its channels (channel.h ncclChannelCompute:
 * the mirrored base plus the part) and its works (one receive and one send
 * of a round each, NCCL_MAX_WORK_ELEMENTS_P2P 2).
 *
 * NCCL v2.19.3-1 (nccl_rules STRATA_NCCL_P2P_219; v2.18.3-1 the same)
 * plans by the rules RCCL kept (src/enqueue.cc scheduleP2pTasksToPlan
 * l. 602-705, calcP2pChunkSize l. 592-600, addP2pToPlan l. 289-330;
 * src/init.cc l. 1153-1195 the schedule; src/include/channel.h l. 15-45
 * the channel). strata models it on ONE node only (hw/coll_impl_nccl.c
 * nccl_tune refuses a 2.19 all-to-all across nodes; across nodes 2.19
 * halves nChannelsMin only where nNodes == 1, enqueue.cc l. 623-625, and
 * gives a network peer a fixed NCCL_NCHANNELS_PER_NET_PEER 2, paths.cc
 * l. 669, 690, neither of which is modelled): chunks of calcP2pChunkSize
 * (at least an eighth of a step), LL where the chunk is at most the
 * threshold, local steps in order, the channel mirrorBits(step) + part,
 * the rank's copy to itself cut as any send, and nChannelsMax
 * (max_channels) p2pnChannelsPerPeer halved while x nRanks > 4 x
 * p2pnChannels (l. 627: "Avoid overloading channels with 8+
 * operations"). A work holds up to 8 sends and 8 receives of distinct
 * peers (NCCL_MAX_WORK_ELEMENTS_P2P 16, device.h l. 252; a new work every
 * 8 rounds, enqueue.cc l. 636): 8 a batch, as 2.27's. Known differences,
 * not modelled: (a) 2.19's schedule walks steps = ALIGN_POWER(
 * maxLocalRanks, 8) local steps, peer (localRank + s) % steps, a step
 * past the node's ranks an empty slot (3 ranks: 4 steps, 6: 8), where
 * strata walks the node's ranks, peer (local + s) % ranks: the two agree
 * where ALIGN_POWER keeps the count (1, 2, 4, 8 ranks a node, multiples
 * of 8), differ in rounds and channels elsewhere;
 * (b) addP2pToPlan decides LL per chunk (80 KiB to a peer: a 64 KiB
 * Simple chunk, a 16 KiB LL one; RCCL the same), strata the whole send's
 * protocol by its first chunk (strata_nccl_p2p_ll), so a send above
 * minSize with a tail of at most 16 KiB moves its tail in Simple.
 *
 * NCCL from v2.28.7-1 (nccl_rules, nccl_versions.h) walks groups of
 * p2pSchedGroupSize ranks (8 a group, fewer where a node's ranks are not
 * a multiple; v2.29 on one node: its ranks) quadratically and their local
 * deltas in order, and bit-reverses the channel base, a part's channel
 * base + part; from v2.29.7-1 LL is by the parts (nccl_versions.h).
 *
 * Invariants: pure functions of their arguments; p2p_channels and
 * per_peer are powers of two, per_peer <= p2p_channels; every part count
 * is 1 .. per_peer.
 */
#ifndef STRATA_HW_NCCL_P2P_H
#define STRATA_HW_NCCL_P2P_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/nccl_tuning.h"
#include "hw/nccl_versions.h"

/* NCCL_MAX_DEV_WORK_P2P_PER_BATCH (src/include/device.h): the sends and
 * receives of distinct rounds one work batch of a channel runs at once,
 * its warps shared among them (device/sendrecv.h, nWarpPerWork). */
#define STRATA_NCCL_P2P_PER_BATCH 8u

typedef struct strata_nccl_p2p {
    uint32_t ranks, nodes, local_ranks; /* nodes x local_ranks = ranks */
    uint32_t p2p_channels;              /* comm->p2pnChannels */
    uint32_t per_peer;                  /* comm->p2pnChannelsPerPeer */
    uint32_t min_channels;              /* scheduleP2pTasksToPlan's nChannelsMin */
    uint32_t max_channels;              /* its nChannelsMax where below per_peer (v2.19), else 0 */
    uint64_t step_bytes;                /* comm->p2pChunkSize: a Simple step */
    uint64_t ll_step_bytes;             /* comm->buffSizes[LL] / NCCL_STEPS: an LL step */
    bool rccl;                          /* RCCL 2.21's rules (above), else NCCL's: */
    strata_nccl_p2p_rules nccl_rules;   /* the release's (nccl_versions.h) */
    uint32_t group;                     /* comm->p2pSchedGroupSize (0: local_ranks) */
} strata_nccl_p2p;

/* The plan's figures for communicator c (c->nodes ranks a node each when
 * above 1); local_channels: the channels ncclTopoGetNchannels gives a
 * peer on the node, 2 x max(1, the GPUs' NVLink bandwidth / NCCL's per
 * link), computed by the caller from the graph. */
void strata_nccl_p2p_init(const strata_nccl_comm *c, uint32_t local_channels, strata_nccl_p2p *out);
/* The plan with no communicator (a schedule built without hardware, as
 * its own tests build it): `ranks` in nodes of `local_ranks` (dividing
 * them), MAXCHANNELS p2p channels, one a peer, the NVLink step. */
void strata_nccl_p2p_untuned(uint32_t ranks, uint32_t local_ranks, strata_nccl_p2p *out);
/* RCCL's plan for `ranks` ranks over `nodes` nodes (1: one node; nodes
 * divide the ranks) whose topology graph has `graph_channels` rings, each
 * pair of a node's GPUs joined by one xGMI link (strata's meshes); xgmi4:
 * the GPUs take RCCL's rule of 4 channels a local peer, doubled on one
 * node (gfx942, and gfx950 from 2.26: coll_impl_rccl.c rccl_arches), else
 * 2, not doubled. */
void strata_rccl_p2p_init(uint32_t ranks, uint32_t nodes, uint32_t graph_channels, uint32_t ring_copies, bool xgmi4,
                          strata_nccl_p2p *out);
/* Whether a send or receive of `bytes` to another rank of the node runs
 * LL, else Simple (enqueue.cc addP2pToPlan, NCCL_P2P_LL_THRESHOLD 16384):
 * to v2.28.7-1 bytes <= p2pnChannelsPerPeer x the threshold; from
 * v2.29.7-1 bytes <= its parts on Simple's step x the threshold; RCCL's a
 * part of at most the threshold. */
bool strata_nccl_p2p_ll(const strata_nccl_p2p *p, uint64_t bytes);
/* The same to a rank on another node (`net`) or on the node: across the
 * network never LL. addP2pToPlan takes LL only where every part's
 * connection has an LL buffer (`protoLL[dir] &= conn->conn.buffs
 * [NCCL_PROTO_LL] != nullptr`: NVIDIA/nccl v2.25.1-1 to v2.30.7-1
 * src/enqueue.cc, l. 815 at v2.27.7-1; v2.19.3-1 l. 307), and the network
 * transport's shared p2p connections get one only with
 * NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 (src/init.cc, default 0; net.cc's send
 * and receive setup, l. 787 and 956 at v2.27.7-1); RCCL's likewise
 * (hw/coll_impl_rccl.c a2a_tune). */
bool strata_nccl_p2p_ll_to(const strata_nccl_p2p *p, uint64_t bytes, bool net);
/* The parts (channels) of a send or receive of `bytes` > 0 to another
 * rank on the node: addP2pToPlan's nChannels. */
uint32_t strata_nccl_p2p_parts(const strata_nccl_p2p *p, uint64_t bytes);
/* The same to a rank on another node (`net`: Simple's step, where NCCL
 * to v2.28 counts an LL send's parts on LL's) or on the node. */
uint32_t strata_nccl_p2p_parts_to(const strata_nccl_p2p *p, uint64_t bytes, bool net);
/* Part i of `parts` of `bytes`: [*beg, *end) (4 KiB-aligned parts). */
void strata_nccl_p2p_part(uint32_t parts, uint32_t i, uint64_t bytes, uint64_t *beg, uint64_t *end);
/* Part i of `parts` (strata_nccl_p2p_parts_to) of `bytes`: NCCL's
 * strata_nccl_p2p_part; RCCL's, chunks of calcP2pChunkSize, the last the
 * rest. */
void strata_nccl_p2p_bounds(const strata_nccl_p2p *p, uint32_t parts, uint32_t i, uint64_t bytes, uint64_t *beg,
                            uint64_t *end);
/* Whether a round of these deltas (strata_nccl_p2p_deltas) sends `rank`
 * to a rank on another node (with v2.28's groups smaller than a node a
 * round can pair some ranks on their node and others across: each rank's
 * own pair decides its protocol, strata_nccl_p2p_rank_net). */
bool strata_nccl_p2p_rank_net(const strata_nccl_p2p *p, uint32_t rank, uint32_t node_delta, uint32_t local_delta);
/* The p2p works of distinct rounds one channel runs at once: NCCL's
 * STRATA_NCCL_P2P_PER_BATCH, RCCL's 1 (a work holds one round's receive
 * and send). */
uint32_t strata_nccl_p2p_per_batch(const strata_nccl_p2p *p);
/* The parts of round 0 (the rank's copy to itself) when other rounds have
 * `parts`: NCCL's 1 (isCopy), RCCL's `parts` (a send and a receive to
 * itself, cut as any). */
uint32_t strata_nccl_p2p_self_parts(const strata_nccl_p2p *p, uint32_t parts);
/* The channels a plan of `bytes` a peer runs on (distinct channels of its
 * rounds' parts). */
uint32_t strata_nccl_p2p_used_channels(const strata_nccl_p2p *p, uint64_t bytes);
/* comm->p2pSchedule's walk: round k's node delta and local delta
 * (node_delta[k], local_delta[k], k < ranks; round 0: 0, 0, the rank
 * itself). */
void strata_nccl_p2p_deltas(const strata_nccl_p2p *p, uint32_t *node_delta, uint32_t *local_delta);
/* The rank that `rank` (node rank / local_ranks) sends to in a round of
 * those deltas; it receives in that round from the rank that sends to it. */
uint32_t strata_nccl_p2p_peer(const strata_nccl_p2p *p, uint32_t rank, uint32_t node_delta, uint32_t local_delta);
/* The channel of part i of round k. */
uint32_t strata_nccl_p2p_channel(const strata_nccl_p2p *p, uint32_t k, uint32_t i);

#endif
