/*
 * coll_kit.h: what the algorithms' files (algo_*.c) build their schedules
 * from, shared by models/collective only: the schedule being built and the
 * building blocks several algorithms use (coll_kit.c).
 *
 *   coll_add         appends a step (none of 0 bytes);
 *   coll_coord, coll_position, coll_previous  a rank's coordinate along a
 *                    dimension, its position on that dimension's ring in a
 *                    direction, the rank before it there;
 *   coll_chunk_off   where chunk i of d of a segment of len bytes starts;
 *   coll_torus       a ring along each dimension of the layout in turn
 *                    (reduce-scatter over dims 0..m-1, all-gather back
 *                    m-1..0), on a segment, in one direction and lane; one
 *                    dimension is a ring; with fold, each ring's identical
 *                    rounds written as one step that stands for them;
 *   coll_rings       the ring family's whole collective: coll_torus over
 *                    the buffer (all-reduce, all-gather, reduce-scatter);
 *                    with bidir, a ring each way: an all-reduce's on half
 *                    the buffer each, the others' on half of every chunk;
 *   coll_axes        bidir-torus over several dimensions: all of them at
 *                    once, a part of the data per rotation of their order
 *                    and direction (coll_kit_axes.c);
 *   coll_tree        binomial reduce to rank 0, then broadcast;
 *   coll_ring_loops  NCCL's ring all-reduce kernel: loops of channels x n
 *                    chunks, 2(n-1) steps each, a round per slice.
 * Across scale-up domains (coll_kit_tiers.c, which says how the libraries
 * lay them out) and the protocols' wire formats:
 *   coll_same_domain      whether two ranks share a domain (s->domain);
 *   coll_wire_apply       a protocol's wire format on steps: inside a
 *                         domain and between domains (with the library's
 *                         fixed cost of a network step);
 *   coll_rail_ring        ring g's order, its hops between domains on one
 *                         rail;
 *   coll_ring_loops_groups  coll_ring_loops over several rings of their
 *                         own orders, the channels shared among them;
 *   coll_ring_groups      ring all-gather or reduce-scatter over such rings;
 *   coll_dtree_parent, coll_nccl_tree  NCCL's double binary tree over the
 *                         domains and its chains inside them;
 *   coll_tree_pipeline    a tree all-reduce, chunk by chunk up and down;
 *   coll_nvls_piece       NVLink SHARP's reduction (phase 0) or multicast
 *                         (phase 1) of a piece among a domain's ranks;
 *   coll_nccl_alltoall    NCCL's all-to-all: grouped p2p in its rounds,
 *                         parts, channels and batches (coll_kit_p2p.c).
 *
 * Invariants: steps are appended in any order of rounds (the table sorts
 * them, stably); no step has 0 bytes; chunk i of a segment of L bytes over
 * d is [L*i/d, L*(i+1)/d).
 */
#ifndef STRATA_COLL_KIT_H
#define STRATA_COLL_KIT_H

#include "collective/coll_algo.h"

struct strata_coll_sched {
    GArray *steps;                         /* strata_coll_step */
    uint32_t n;                            /* ranks */
    uint32_t m;                            /* dims of the layout, all > 1 */
    uint32_t dims[STRATA_COLL_MAX_DIMS];
    uint32_t stride[STRATA_COLL_MAX_DIMS];
    strata_op_kind kind;
    uint32_t parts;                        /* 1, or 2: a ring per half chunk */
    uint32_t domain;                       /* ranks per scale-up domain (n: one), dividing n */
    bool fold;                             /* shape->fold, for a row that folds */
    /* With fold, where a folded run must start (NULL: nowhere but the
     * rings' edges): cut[r] for round r < n_cut. coll_axes sets it to every
     * part's ring boundaries, so that the runs of all its parts line up
     * (coll_sched.c runs_aligned); coll_kit.c's rings (an all-reduce's
     * parts) end their folded runs there too. */
    const bool *cut;
    uint32_t n_cut;
};
/* True when a folded run must start at round r (s->cut). */
bool coll_cut(const strata_coll_sched *s, uint32_t r);

/* Rank's coordinate along dimension k of the layout. */
static inline uint32_t coll_coord(const strata_coll_sched *s, uint32_t rank, uint32_t k)
{
    return rank / s->stride[k] % s->dims[k];
}
/* Rank's position along dimension k in the ring of direction dir. */
static inline uint32_t coll_position(const strata_coll_sched *s, uint32_t rank, uint32_t k, int dir)
{
    uint32_t c = coll_coord(s, rank, k);
    return dir > 0 ? c : (s->dims[k] - c) % s->dims[k];
}
/* The rank before rank on its ring along k in direction dir (+1, -1). */
static inline uint32_t coll_previous(const strata_coll_sched *s, uint32_t rank, uint32_t k, int dir)
{
    uint32_t d = s->dims[k], c = coll_coord(s, rank, k);
    uint32_t nc = dir > 0 ? (c + d - 1) % d : (c + 1) % d;
    return rank - c * s->stride[k] + nc * s->stride[k];
}

void coll_add(strata_coll_sched *s, const strata_coll_step *st);
uint64_t coll_chunk_off(uint64_t len, uint32_t d, uint32_t i);
/* Reduce-scatter (rs) and then all-gather (ag) over [base, base+len) in
 * direction dir (+1, -1) on `lane`, from round0; returns the rounds. */
uint32_t coll_torus(strata_coll_sched *s, uint64_t base, uint64_t len, int dir, uint32_t lane, uint32_t round0,
                    bool rs, bool ag);
/* The ring family on the layout: one direction, or both (bidir); returns the rounds. */
uint32_t coll_rings(strata_coll_sched *s, uint64_t in_bytes, bool bidir);
/* bidir-torus over m >= 2 dimensions: every dimension at once, the data
 * in 2m parts each walking the dimensions in its own rotation
 * (coll_kit_axes.c); returns the rounds. */
uint32_t coll_axes(strata_coll_sched *s, uint64_t in_bytes);
/* Binomial tree all-reduce of `bytes`; returns the rounds. */
uint32_t coll_tree(strata_coll_sched *s, uint64_t bytes);
/* NCCL's ring all-reduce on [0, b): every copy carrying num/den of its
 * bytes and, with handshake, a flag after it; a channel and rank's chunk
 * the even share of a loop, or with grain > 0 that share rounded up to
 * whole grains (NCCL's LL and LL128 kernels to v2.19); returns the
 * rounds. */
uint32_t coll_ring_loops(strata_coll_sched *s, uint64_t b, uint64_t channels, uint64_t chunk, uint64_t grain,
                         uint32_t slices, uint64_t num, uint64_t den, bool handshake);

/* The cost hook of an algorithm run as its library runs it: the
 * hardware's collective implementation's tune (hw/coll_impl.h) into the
 * shape, limited to the library's algorithms in `algos` (a mask of
 * strata_nccl_algo bits; 0: its own choice); false with err where the
 * implementation has no tune or runs none of them. */
bool coll_library_tune(strata_coll_shape *shape, const strata_hw *hw, uint32_t algos, GError **err);
/* Whether the hardware's collective implementation is `library` ("nccl",
 * "rccl"), for the rows that pin that library's own choice (algo=nccl,
 * algo=rccl): false with err naming both where it tunes as another (an
 * RCCL schedule over NCCL's tuning, or the reverse, ran at exit 0). */
bool coll_library_is(const strata_coll_shape *shape, const strata_hw *hw, const char *library, GError **err);

/* A protocol's wire format: a copy inside a domain carries num/den of its
 * bytes, with a flag after it where handshake; one between domains
 * net_num/net_den, after net_delay_s unless it is pipelined (a later chunk
 * or loop: NCCL's model charges its network latency once per step of the
 * algorithm, not per chunk) (no flag: the proxy's protocol is in that
 * cost). A handshake copy inside a domain waits sync_delay_s before it
 * (Simple's fence and poll per step, shape->tune.simple_sync_s; 0: none).
 * Every reduction runs alongside its copy (fused). A copy between domains
 * also carries its link layer's packet headers where net_frame is set
 * (hw/ib_frame.h: per net_mtu bytes of its wire bytes and per message, the
 * copy taken as one message), within its source buffer's size as every
 * copy's wire bytes. */
typedef struct coll_wire {
    uint64_t num, den, net_num, net_den;
    bool handshake;
    double net_delay_s, sync_delay_s;
    /* a copy between domains on a connection's lane: the least time
     * between its connection's steps (coll_sched.h proxy_s; 0: none) */
    double net_proxy_s;
    const strata_ib_frame *net_frame;
    uint32_t net_mtu;
} coll_wire;

/* NCCL's protocols (coll_kit_nccl.c): the wire format of shape's protocol
 * (shape->tune.proto; its network step cost shape->tune.net_step_s); the ring's
 * chunk per channel and its slices; the tree's chunk (a step of the
 * protocol's buffer), shrunk for small buffers on LL128 (calcCollChunking).
 * simple_step: a step of Simple's buffer as the run sets it
 * (strata_coll_tuning simple_step_bytes; 0: NCCL's default, 512 KiB). */
coll_wire coll_nccl_wire(const strata_coll_shape *shape);
uint64_t coll_nccl_ring_chunk(strata_nccl_proto p, uint64_t simple_step);
uint32_t coll_nccl_ring_slices(strata_nccl_proto p);
/* The ring steps (rounds) one of NCCL's connections holds in flight on
 * protocol p: its NCCL_STEPS slots over the slots a step's chunk takes
 * (Simple 4: 2 rounds; LL and LL128 1: 8 rounds). */
uint32_t coll_nccl_ring_slots(strata_nccl_proto p);
uint64_t coll_nccl_tree_chunk(strata_nccl_proto p, uint64_t simple_step, uint64_t bytes, uint32_t channels,
                              uint32_t nodes, uint32_t ppn);
/* Where channel c of `channels` starts in a buffer of b bytes: NCCL's cells
 * (shape->tune.chan_lo, chan_mid: channel 0 the first chan_lo bytes, each
 * next chan_mid, the last the rest; hw/nccl_channels.h), else the even
 * split (coll_chunk_off); c = channels: b. */
uint64_t coll_nccl_channel_off(const strata_coll_shape *shape, uint64_t b, uint32_t channels, uint32_t c);

bool coll_same_domain(const strata_coll_sched *s, uint32_t a, uint32_t b);
/* The wire format on steps[from..] (a copy's wire bytes at most its
 * source buffer's size, of a collective whose IN holds in_bytes). */
void coll_wire_apply(strata_coll_sched *s, guint from, uint64_t in_bytes, const coll_wire *w);
/* order[0..n): the ranks of rail ring g in ring order, walking each
 * domain along `cycle` (m local ranks in ring order; NULL: 0 .. m-1). */
void coll_rail_ring(const strata_coll_sched *s, uint32_t g, const uint8_t *cycle, uint32_t *order);
/* NCCL's ring all-reduce on [0, b) over `groups` rings (orders[g * n + i]:
 * the rank at position i of ring g), each taking 1/groups of every chunk
 * on lane 2g, a channel and rank's chunk of the last loop rounded up to
 * `grain` bytes as coll_ring_loops's (0: the even share); returns the
 * rounds. With `slots` > 0 its steps are slotted (coll_sched.h: NCCL's
 * connections, a step waiting for its source's receipt of the round
 * before, not for the whole round): ring g's round r on lane
 * 2 (1 + g + groups (r mod slots)); 0: unslotted, rounds in lockstep.
 * With slots and own_ring, a step waits for its source's receipt on its
 * own ring only (coll_sched.h src_lane), else for its source's whole round.
 * Wire formats: coll_wire_apply. */
uint32_t coll_ring_loops_groups(strata_coll_sched *s, uint64_t b, uint64_t channels, uint64_t chunk, uint64_t grain,
                                uint32_t slices, const uint32_t *orders, uint32_t groups, uint32_t slots,
                                bool own_ring);
/* Ring all-gather or reduce-scatter (s->kind) over such rings, one round
 * a step, with `slots` > 0 (the rounds a connection holds in flight,
 * coll_nccl_ring_slots) its steps slotted (coll_sched.h): ring g's round k
 * on lane 2 (1 + g + groups (k mod slots)) (NCCL's recvReduceSend waits
 * for its predecessor's step and a credit, as the all-gather's
 * recvCopySend: NVIDIA/nccl v2.30.4-1 src/device/reduce_scatter.h runRing,
 * all_gather.h runRing); 0: unslotted, ring g on lane 2g, its
 * rounds in lockstep. With slots and `paced` (NCCL's own network
 * transport: coll_wire net_proxy_s), a step across domains past round 0
 * on its ring's connection lane past the slots' (coll_sched.h conn_lane:
 * its proxy's posts in order, at least the pace apart); round 0, the
 * connection's first post, on none (its proxy has handed the GPU its
 * buffers ahead and isends the step once its data is there: NVIDIA/nccl
 * v2.30.4-1 src/transport/net.cc l. 1279-1357; docs/clusters.md, wave
 * 49). Returns the rounds. */
uint32_t coll_ring_groups(strata_coll_sched *s, uint64_t in_bytes, const uint32_t *orders, uint32_t groups,
                          uint32_t slots, bool paced);
/* ncclGetDtree: domain `node`'s parent among `nodes` in tree 0 or 1 (-1:
 * the root) and whether it is the parent's child 0 or 1. */
int32_t coll_dtree_parent(uint32_t nodes, uint32_t node, uint32_t tree, uint32_t *child_type);
/* parent[0..n): NCCL's tree `tree` (-1: its root) whose chain in every
 * domain is `chain` (m local ranks, the head first: the tree graph's
 * order of the channel, ncclTopoPreset's treeIntra) or, NULL, the local
 * ranks upwards from `head`. */
void coll_nccl_tree(const strata_coll_sched *s, uint32_t tree, uint32_t head, const uint8_t *chain, int32_t *parent);
/* A tree all-reduce of [lo, lo + len) over parent[] (-1: the root, -2: a
 * rank not in the tree) in chunks of `chunk`, from round0: up steps on
 * lanes lane0 and lane0 + 2 (a rank's first and second child: in rank
 * order, or with chain_first its child in its own domain first where it
 * has one; fused reductions on the next), down steps on lane0 + 4;
 * returns the rounds. */
uint32_t coll_tree_pipeline(strata_coll_sched *s, const int32_t *parent, uint64_t lo, uint64_t len, uint64_t chunk,
                            uint32_t round0, uint32_t lane0, bool chain_first);
/* NCCL's all-to-all (coll_kit_p2p.c): grouped sends and receives to every
 * rank in comm->p2pSchedule's rounds, each cut into parts on channels
 * (shape->tune.p2p), a channel's batches of 8 works on its own lanes in
 * one round (a pair across nodes Simple); returns the rounds (1). The
 * caller applies the wire format. */
uint32_t coll_nccl_alltoall(strata_coll_sched *s, const strata_coll_shape *shape);
/* NVLink's packet overhead (5/4) over the fraction of its data rate NVLS
 * reaches (efficiency; 0 or 1: all of it). */
uint64_t coll_nvls_wire(uint64_t bytes, double efficiency);
/* NVLS on a piece [lo, lo + len) among ranks base .. base + m - 1 (m >= 2)
 * in `round`: phase 0 reduces shard q at rank q (copies on lanes 2j, fused
 * reductions on 2j + 1), phase 1 multicasts it (lanes 2(m-1) + j); each
 * copy carries (m+1) len / (2 m (m-1)) wire bytes (algo_nccl.c says why)
 * and, a step of NCCL's Simple protocol, its flag after it (handshake;
 * phase 0's polled by the reducer through the switch: there and back). */
void coll_nvls_piece(strata_coll_sched *s, uint32_t base, uint32_t m, uint64_t lo, uint64_t len, uint32_t round,
                     uint32_t phase, double efficiency);

#endif
