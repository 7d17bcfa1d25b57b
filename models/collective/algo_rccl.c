/*
 * algo_rccl.c: the rccl algorithm (coll_algo.h): all-reduce, all-gather,
 * reduce-scatter and all-to-all as AMD's RCCL runs them, the rccl
 * implementation's pick (hw/coll_impl_rccl.c).
 *
 * tune: what RCCL runs (hw/rccl_tuning.h: an MSCCL algorithm, or the
 * algorithm, protocol and channels of its tuning model), its fixed cost
 * and its network step's (coll_library_tune).
 * schedule, by RCCL's choice:
 *  - all-to-all: MSCCL's (every peer's chunk copied to it at once: direct's
 *    schedule), else RCCL's grouped p2p in its plan (coll_nccl_alltoall
 *    with the tuning's RCCL plan: rounds, parts, channels, a work a round),
 *    a part to a peer across the network on Simple after RCCL's Simple
 *    network step, whatever the plan's protocol on the node;
 *  - MSCCL's allpairs all-reduce: every rank reduces its 1/n of the buffer
 *    from all the others, then sends it back to each (direct's schedule):
 *    every xGMI link of an 8-GPU mesh carries its pair's share at once;
 *  - ring: the rings of RCCL's topology model (rome_model_79 on an 8x
 *    MI300X node: 28 rings, 14 distinct, each directed xGMI link in 4 of
 *    them, so every GPU drives its 7 links), the channels shared among
 *    them, in NCCL's loops (RCCL keeps NCCL's kernels: ALLREDUCE_CHUNKSTEPS
 *    of a 4 MiB Simple buffer in 2 slices; an LL step of its 256-thread
 *    buffer, 16 KiB of data); across nodes or without the model's rings,
 *    rail rings as NCCL's;
 *  - tree: NCCL's double binary tree between domains with RCCL's chains
 *    inside them: channel c's chain is the model's ring c (tree_schedule),
 *    so that the channels' chains spread over the mesh's links as its
 *    rings do (rome_model_81: 8 distinct chains, each directed xGMI link
 *    in one chain's up and another's down); without the model's rings,
 *    nccl-tree's schedule (chains in rank order).
 * Wire formats: an xGMI link carries about 48 of its 64 GB/s ("CRC bit
 * correction and protocol overhead ... reduce the usable bandwidth to
 * approximately 48 GB/s per link", ROCm blog "Understanding RCCL Bandwidth
 * and xGMI Performance on AMD Instinct MI300X", 2025-03-02; RCCL's own
 * GFX94X_XGMI_WIDTH is 48): a copy inside a node puts 4/3 of its bytes on
 * the wire, as NVLink's packets put 5/4, times LL's 2 (its lines carry a
 * flag per data word, as NCCL's); Simple copies end with a flag. Between
 * nodes, the protocol's format as it is, the first chunk after RCCL's
 * network step cost and, on Simple, the receiver's GPUDirect flush
 * (hw/coll_impl_rccl.c rccl_gdr_flush; the rings pay the flush only).
 */
#include "collective/coll_kit.h"

#define XGMI_NUM 4u
#define XGMI_DEN 3u
/* RCCL's LL step: NCCL_LL_LINES_PER_THREAD (8) x its NCCL_LL_MAX_NTHREADS
 * (256) x 16-byte lines, half of them data; Simple's as NCCL's. */
#define RCCL_LL_CHUNK 16384u

static coll_wire rccl_wire(const strata_coll_shape *shape)
{
    bool ll = shape->tune.proto == STRATA_NCCL_LL;
    return (coll_wire){.num = (ll ? 2 : 1) * XGMI_NUM, .den = XGMI_DEN, .net_num = ll ? 2 : 1, .net_den = 1,
                       .handshake = shape->tune.proto == STRATA_NCCL_SIMPLE,
                       .net_delay_s = shape->tune.net_step_s + shape->tune.net_flush_s};
}

/* The rings the schedule runs: the model's distinct ones (its list may
 * name a ring twice, for two channels), at most one a channel; across
 * domains, the model's rings through the NICs (rome_model_81: each enters
 * a node at the NIC of its first rank and leaves by its last's, the nodes
 * in turn, the same ring inside each), or rail rings where it has none.
 * orders[g * n ..]; *groups of them. */
static uint32_t *rings_of(strata_coll_sched *s, const strata_coll_shape *shape, uint32_t *groups)
{
    uint32_t n = s->n, channels = shape->channels ? shape->channels : 1;
    uint32_t *orders = g_new(uint32_t, (size_t)MAX(shape->tune.n_rings, s->domain) * n);
    uint32_t m = shape->tune.ring_len;
    *groups = 0;
    for (uint32_t r = 0; shape->tune.rings && r < shape->tune.n_rings && *groups < channels; r++) {
        bool again = false;
        for (uint32_t g = 0; g < *groups && !again; g++) {
            uint32_t i = 0;
            while (i < n && orders[(size_t)g * n + i] == i / m * m + shape->tune.rings[(size_t)r * m + i % m])
                i++;
            again = i == n;
        }
        for (uint32_t i = 0; !again && i < n; i++) /* node i / m, along the ring */
            orders[(size_t)*groups * n + i] = i / m * m + shape->tune.rings[(size_t)r * m + i % m];
        *groups += !again;
    }
    if (*groups == 0) {
        *groups = MAX(1u, MIN(channels, s->domain));
        for (uint32_t g = 0; g < *groups; g++)
            coll_rail_ring(s, g, NULL, orders + (size_t)g * n);
    }
    return orders;
}

/* calcCollChunking (RCCL's enqueue.cc computeCollChunkInfo): a step of
 * the protocol's buffer (LL: 16 KiB of data; Simple: 512 KiB), a Simple
 * tree's shrunk while the buffer gives each channel too few chunks for the
 * tree's depth (ranks per domain - 1 + log2 domains, connectTrees). */
static uint64_t tree_chunk(strata_nccl_proto p, uint64_t bytes, uint32_t channels, uint32_t n, uint32_t m)
{
    if (p != STRATA_NCCL_SIMPLE)
        return RCCL_LL_CHUNK;
    uint64_t chunk = 512u << 10, depth = m - 1u; /* RCCL's 4 MiB Simple buffer over NCCL_STEPS (8) */
    for (uint32_t nodes = n / m; nodes > 1; nodes >>= 1)
        depth++;
    static const struct { uint64_t per_depth, above; } shrink[] = {{8, 131072}, {4, 65536}, {1, 32768}};
    for (size_t i = 0; i < G_N_ELEMENTS(shrink); i++)
        while (bytes / (channels * chunk) < depth * shrink[i].per_depth && chunk > shrink[i].above)
            chunk /= 2;
    return chunk;
}

/* RCCL's tree: channel c's chain in every domain is its tree graph's order
 * (a matched topology model's ring c: parseA2a8P builds the tree graph
 * from the model's ringBase, unreversed, when it has no treeBase, as
 * rome_model_79 and _81), the head first (ncclTopoPreset); the domains'
 * heads joined by the double binary tree. connectTrees on gfx942/gfx950:
 * with more than 2 x CHANNEL_LIMIT (32) graph channels, tree 0 on the first
 * half and tree 1 on the second; otherwise tree 0 on the graph's channels
 * and tree 1 on their copies. Each channel's chunks up and down the tree
 * at once, as nccl-tree's. */
static uint32_t tree_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    uint64_t b = shape->in_bytes;
    uint32_t channels = shape->channels ? shape->channels : 1, g = shape->tune.n_rings, m = s->domain, rounds = 0;
    uint64_t chunk = tree_chunk(shape->tune.proto, b, channels, s->n, m);
    int32_t *parent = g_new(int32_t, s->n);
    for (uint32_t c = 0; c < channels; c++) {
        uint64_t lo = coll_chunk_off(b, channels, c), len = coll_chunk_off(b, channels, c + 1) - lo;
        uint32_t tree = g > 32 ? c % g >= g / 2 : c / g % 2;
        coll_nccl_tree(s, tree, 0, shape->tune.rings + (size_t)(c % g) * m, parent);
        uint32_t r = len > 0 ? coll_tree_pipeline(s, parent, lo, len, chunk, 0, 6 * c, false) : 0;
        rounds = MAX(rounds, r);
    }
    g_free(parent);
    return rounds;
}

static uint32_t rccl_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    guint from = s->steps->len;
    uint32_t rounds;
    bool tree = !shape->tune.msccl && shape->tune.algo == STRATA_NCCL_TREE;
    const char *row = shape->tune.msccl ? "direct" : tree ? "nccl-tree" : NULL;
    if (s->kind == STRATA_OP_ALL_TO_ALL) {
        rounds = shape->tune.msccl ? strata_coll_algo_find("direct")->ops->schedule(s, shape)
                                   : coll_nccl_alltoall(s, shape);
    } else if (tree && s->kind == STRATA_OP_ALL_REDUCE && shape->tune.rings && shape->tune.ring_len == s->domain) {
        rounds = tree_schedule(s, shape);
    } else if (row && s->kind == STRATA_OP_ALL_REDUCE) {
        rounds = strata_coll_algo_find(row)->ops->schedule(s, shape);
    } else {
        uint32_t groups;
        uint32_t *orders = rings_of(s, shape, &groups);
        strata_nccl_proto p = shape->tune.proto;
        uint64_t chunk = p == STRATA_NCCL_LL ? RCCL_LL_CHUNK : coll_nccl_ring_chunk(p, 0);
        rounds = s->kind == STRATA_OP_ALL_REDUCE
                     ? coll_ring_loops_groups(s, shape->in_bytes, shape->channels ? shape->channels : 1, chunk, 0,
                                              coll_nccl_ring_slices(p), orders, groups, 0, false)
                     /* a round a slot, 8 in flight on every protocol: RCCL's chunk steps not
                      * read for this (NCCL's Simple holds 2: coll_nccl_ring_slots) */
                     : coll_ring_groups(s, shape->in_bytes, orders, groups, STRATA_COLL_NCCL_STEPS, false);
        g_free(orders);
    }
    coll_wire wire = rccl_wire(shape);
    if (s->kind == STRATA_OP_ALL_TO_ALL && !shape->tune.msccl) {
        /* RCCL's p2p to a peer across the network runs Simple at any size
         * (its network connections have no LL buffer: hw/coll_impl_rccl.c
         * a2a_tune), after its Simple network step (the tuning's) */
        wire.net_num = 1;
    } else if (!tree || s->kind != STRATA_OP_ALL_REDUCE) {
        /* RCCL's rings pay the route and, on Simple, the receiver's GDR
         * flush (hw/coll_impl_rccl.c rccl_gdr_flush): its tuning model's
         * network latency of a ring step (rccl_tuning.c net_lat: 320 us on
         * Simple, 9.5 on LL, against its tree's 25 and 10.5) steers its
         * choice, no step lasts it */
        wire.net_delay_s = shape->tune.net_flush_s;
    }
    coll_wire_apply(s, from, shape->in_bytes, &wire);
    return rounds;
}

static bool rccl_tune(strata_coll_shape *shape, const strata_hw *hw, GError **err)
{
    return coll_library_is(shape, hw, "rccl", err) && coll_library_tune(shape, hw, 0, err);
}

const strata_coll_algo_ops strata_coll_ops_rccl = {.schedule = rccl_schedule, .tune = rccl_tune};
