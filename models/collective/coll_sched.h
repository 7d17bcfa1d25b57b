/*
 * coll_sched.h: the step schedule of a collective, as a pure function of
 * the op, its algorithm (a row of coll_algo.h's table), the group's shape
 * and the sizes.
 *
 * A group of n ranks is laid out as dims[0] x ... x dims[m-1] (the sizes of
 * the mesh axes it spans, or for a DIMS row the torus dimensions they
 * span, coll_algo.h; row-major: rank = coordinates row-major). Each
 * rank holds IN and OUT (the same buffer for all-reduce). A schedule is a
 * list of steps grouped in rounds: a step of round k starts when its source
 * and its destination rank have finished every step of round k-1 they take
 * part in (a `slotted` step: see there). A step moves `bytes` from (src rank, src_buf, src_off) to the
 * destination rank: without `reduce` it stores them at (dst_buf, dst_off);
 * with `reduce` it stores own + received there, where own is (own_buf,
 * own_off) of the destination rank (for all-reduce, the destination itself).
 * Steps of one round and one destination on different lanes run
 * concurrently; on one lane they run in order. A step whose src equals dst
 * is a local copy through the rank's own memory.
 *
 * What each algorithm's schedule is: its file in models/collective
 * (algo_*.c, listed by coll_algo.c's table) and traces/FORMAT.md, in
 * words. After the schedule, every rank holds the op's result
 * (tests/test_collective.c replays the steps on values).
 */
#ifndef STRATA_COLL_SCHED_H
#define STRATA_COLL_SCHED_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "trace/op.h"
#include "hw/coll_impl.h"
#include "hw/nccl_tuning.h"

#define STRATA_COLL_MAX_DIMS 8

typedef enum { STRATA_COLL_IN = 0, STRATA_COLL_OUT = 1 } strata_coll_buf;

typedef struct strata_coll_step {
    uint32_t round;
    uint32_t lane;
    uint32_t src, dst; /* ranks */
    strata_coll_buf src_buf, dst_buf, own_buf;
    uint64_t src_off, dst_off, own_off;
    uint64_t bytes;
    bool reduce;
    /* nccl-ring: after the data the sender writes a flag to the receiver
     * (handshake); the reduction runs alongside the copy, on lane + 1
     * (fused); the copy carries wire_bytes >= bytes (0: bytes) */
    bool handshake, fused;
    /* NVLS's reduction: the receiver polls the flag where its senders
     * stored it, in their own memory (transport/nvls.cc: the reducer's
     * connection's tail in the multicast credit, NCCL_NVLS_MIN_POLL), by
     * a load through the switch (prims_simple.h loadStepValue,
     * multimem.ld_reduce.min): a handshake step that is polled has its
     * flag cross the route there and back, a round trip, not one flight */
    bool polled;
    uint64_t wire_bytes;
    /* With shape->fold: the step stands for `rounds` consecutive rounds
     * (0 and 1: one) of the same move, whose bytes differ at most (chunks
     * of a buffer that the ranks do not divide): `bytes` is their sum,
     * `max_bytes` the largest (0: bytes). */
    uint32_t rounds;
    uint64_t max_bytes;
    /* A step of several runs (pieces > 1; 0 and 1: one): `bytes` is
     * `pieces` equal runs, run i at src_off, dst_off and own_off plus i x
     * `stride` bytes (bidir-torus over several dimensions: the slices of
     * several ranks' shards, coll_kit_axes.c). The copy is one transfer of
     * `bytes`; only the data's places differ. */
    uint32_t pieces;
    uint64_t stride;
    /* A fixed cost before the copy starts, beyond its route's latency (0:
     * none): the library's cost of a step over the network (NCCL's proxy
     * posting the transfer and, on Simple, flushing it), which no link
     * carries; inside a domain, Simple's fence and poll per step
     * (coll_wire sync_delay_s). The SPMD expansion charges it on the
     * receiver's lane. A
     * step of a pipeline's later chunk or loop (pipelined) pays none: its
     * fixed cost overlaps the transfers before it, as the library keeps
     * several steps in flight (coll_kit.h coll_wire_apply). */
    double delay_s;
    bool pipelined;
    /* A step over one of NCCL's connections (its ring's all-gather steps
     * across domains, and from wave 32 its ring all-reduce's on LL and
     * LL128, coll_ring_loops_groups): it starts when its source has
     * received what it forwards
     * (as NCCL's receiver polls the step's flag or tail: here the source's
     * every receipt of round k-1, of all its rings, where NCCL waits for
     * its own ring's only: that form made the bandwidth regime up to 4x
     * too fast, docs/clusters.md, wave 23) and its lane is free; it waits
     * neither for its source's sends of round k-1 to arrive nor for its
     * destination's round k-1.
     * Its lane is one of the connection's slots (the schedule gives round
     * k the slot k mod the rounds in flight: NCCL_STEPS on LL and LL128,
     * NCCL_STEPS / 4 on Simple, whose chunk takes 4 slots:
     * coll_nccl_ring_slots), so a step reuses a slot once the receiver
     * has received the step that many rounds before: NCCL's credits
     * (src/device/prims_ll.h waitSend, prims_simple.h waitPeer: the sender
     * waits for head + NCCL_STEPS), less their way back (NCCL's slot frees
     * when the receiver has forwarded the step, and across nodes its
     * receive proxy then posts the slot's receive to the sender). That way
     * back, a slice's forward, two flights and the proxies' passes, hides
     * behind the 3 other slices in flight unless the flights and passes
     * exceed twice a slice's wire time, which p5's Simple slices (512 KiB
     * to 2 MiB) do not allow; held here, at a round's grain (a whole chunk
     * forwarded), it would charge up to half of it every round, an artifact of
     * the unsliced rounds (docs/validation.md, "Simple's fixed network
     * round", wave 29). */
    bool slotted;
    /* A slotted step across domains of NCCL's ring all-reduce (LL, LL128)
     * and, on NCCL's own network transport, of its ring all-gather and
     * reduce-scatter past the connection's first step (every protocol,
     * wave 49: coll_kit.h coll_ring_groups): its connection's lane at the
     * receiver (0: none), on which the steps'
     * fixed costs (delay_s) run one after the other, and whose last record
     * the step's copy waits for, as NCCL's proxy serves a connection's
     * steps in order: it posts step s + 1's isend only after step s's
     * (NVIDIA/nccl v2.25.1-1 src/transport/net.cc sendProxyProgress l.
     * 1131-1182: `sub->transmitted` advances one step at a time), with up
     * to NCCL_STEPS sends in flight (`transmitted < done + NCCL_STEPS`). So
     * a round's copy never starts before an earlier round's copy of its
     * connection has started (docs/clusters.md, wave 32). */
    uint32_t conn_lane;
    /* With a connection's lane: the proxy's work a step of the connection
     * (coll_kit.h coll_wire net_proxy_s, hw/nccl_proxy_floor.h), run on
     * that lane without waiting for the step's source (a step with a fixed
     * cost: then for its source), recorded as the step's post, so the
     * connection's posts are at least proxy_s apart and a step whose data
     * comes later pays nothing; the step's copy follows its post and its
     * own fixed cost follows the copy on its lane, beside the next posts
     * (wave 47, spmd.c flight_after_copy); a phase does not fold paced
     * steps on the shipped schedules (their lanes change every round) and
     * would not pace them; 0: none */
    double proxy_s;
    /* A slotted step that waits for its own ring only (NCCL's ring
     * all-reduce on LL and LL128 across domains under nccl_ring_wait =
     * channel, wave 33; coll_kit.h coll_ring_loops_groups): the lane on which
     * its source received, on the step's ring (channel), the round before
     * (0: its source's whole round, S~e0, as above), and whether that step
     * reduced on src_lane + 1 (fused), whose record it then waits for too.
     * NCCL's step k of a ring reads the flags of the lines its predecessor
     * stored for step k - 1 on that ring's connection only (NVIDIA/nccl
     * v2.25.1-1 src/device/prims_ll.h l. 98-110 readLL, prims_ll128.h l.
     * 301-325): each channel runs its own primitives, with its own peers
     * and connections (src/device/all_reduce.h runRing: `ncclShmem.channel`
     * `ring`), so a channel never waits for another's steps. */
    uint32_t src_lane;
    bool src_fused;
    /* A reducing step's receive buffer: that of lane recv_lane (0: its own
     * lane's). A ring reduce-scatter's slotted steps share their ring's
     * one, as NCCL's connection holds one fixed buffer whatever the steps
     * in flight (NVIDIA/nccl v2.30.4-1 src/init.cc computeBuffSizes: one
     * comm->buffSizes[p] a protocol, cut into NCCL_STEPS slots, prims_simple.h
     * stepSize = buffSizes / NCCL_STEPS), so its temporary memory stays a
     * chunk a ring, as before wave 48, not one a slot. */
    uint32_t recv_lane;
} strata_coll_step;

/* NCCL's ring all-reduce, Simple protocol (NVIDIA/nccl, defaults):
 * NCCL_BUFFSIZE = 4 MiB of NCCL_STEPS = 8 steps per connection, a chunk of
 * ALLREDUCE_CHUNKSTEPS = 4 steps (2 MiB) cut in ALLREDUCE_CHUNKSTEPS /
 * ALLREDUCE_SLICESTEPS = 2 slices; a loop moves channels x n chunks and,
 * below that, every chunk shrinks to ceil(rest / (channels x n)) bytes
 * (src/collectives/device/all_reduce.h, runRing). 24 channels: the count
 * NCCL builds on an 8x A100 NVSwitch node (its log "Channel 23/24" in
 * NVIDIA/nccl-tests#100). */
#define STRATA_COLL_NCCL_CHANNELS 24u
#define STRATA_COLL_NCCL_CHUNK (2ull << 20)
#define STRATA_COLL_NCCL_SLICES 2u
/* NCCL's slots per connection: NCCL_STEPS (src/include/device.h). */
#define STRATA_COLL_NCCL_STEPS 8u
/* NCCL's flag: a 64-bit step counter the sender stores into the receiver's
 * memory after each slice (the Simple protocol's tail). */
#define STRATA_COLL_FLAG_BYTES 8u
/* NVLink carries an SM's stores as packets of 128 bytes of payload, which
 * turn each link's 25 GB/s line rate into about 20 GB/s of data (NCCL's
 * maintainer, NVIDIA/nccl-tests#149: "SMs are limited to 128B payload
 * size"): the wire carries 5/4 of the payload. */
#define STRATA_COLL_WIRE_NUM 5u
#define STRATA_COLL_WIRE_DEN 4u

typedef struct strata_coll_algo strata_coll_algo; /* coll_algo.h */

typedef struct strata_coll_shape {
    strata_op_kind kind;
    const strata_coll_algo *algo; /* a row that serves kind (coll_algo.h) */
    uint32_t n_dims;
    uint32_t dims[STRATA_COLL_MAX_DIMS];
    uint64_t in_bytes;     /* size(IN) on every rank (all-reduce: size(BUF)) */
    /* The group across scale-up domains (hw.h strata_hw_domain): ranks r
     * and r' share a domain when r / domain_ranks = r' / domain_ranks, every
     * domain holding domain_ranks of them (the SPMD expansion sets it from
     * the devices of the group; 0 or n: one domain) */
    uint32_t domain_ranks;
    int32_t shift;         /* collective-permute */
    /* nccl-ring: the channels, the chunk per channel and rank, the slices
     * per chunk (0: the STRATA_COLL_NCCL_ defaults) */
    uint32_t channels;
    uint64_t chunk_bytes;
    uint32_t slices;
    /* Set by the algorithm's tune hook (coll_algo.h): what the hardware's
     * collective implementation chose (hw/coll_impl.h strata_coll_tuning:
     * NCCL's algorithm and protocol, the launch cost every rank pays before
     * the first round, NVLS's efficiency, the network step cost across
     * domains, RCCL's MSCCL choice and rings), as it returned it; its
     * channels and chunk_bytes are also copied into the fields above, which
     * the schedules read. All zero when not tuned. */
    bool tuned;
    strata_coll_tuning tune;
    /* Fold each ring's consecutive rounds that are the same moves, bytes
     * aside (the algorithms whose row folds, coll_algo.h; the others
     * ignore it):
     * the schedule then holds a step per ring, rank and run of rounds
     * instead of per round (a ring of n ranks: O(n) steps, not O(n^2)). */
    bool fold;
} strata_coll_shape;

/* Appends the steps of the schedule to `steps` (strata_coll_step), in
 * round order; returns the number of rounds. The shape must be supported
 * and its sizes valid (the checker's rules). */
uint32_t strata_coll_schedule(const strata_coll_shape *shape, GArray *steps);
/* The group size: the product of dims. */
uint32_t strata_coll_ranks(const strata_coll_shape *shape);

#endif
