/*
 * algo_nccl_tree.c: the nccl-tree algorithm (coll_algo.h): NCCL's tree
 * all-reduce (NCCL_ALGO=Tree), on one node or across nodes; algo=nccl runs
 * it where NCCL's tuning model picks Tree.
 *
 * tune: NCCL's tuning model limited to its Tree: the protocol and the
 * channels NCCL picks for it, its fixed cost and its network step's
 * (coll_library_tune).
 * schedule: the buffer split among the channels (NCCL's cells from v2.25,
 * coll_nccl_channel_off), each on its own chunk; channel c's tree is
 * NCCL's (src/graph/connect.cc, trees.cc; coll_kit_tiers.c): in each domain
 * a chain from local rank c mod m, the domains' heads joined by the double
 * binary tree, tree 0 on the first m channels and tree 1 on the next
 * (connectTrees gives channel c tree 0 and channel c + nChannels tree 1),
 * alternately beyond. Its chunks (a step of the protocol's buffer: 32 KiB
 * of LL data, 576,000 bytes of LL128 shrunk for small buffers, 512 KiB of
 * Simple; calcCollChunking) go up the tree, each rank reducing its
 * children's as they arrive, and the result comes down, both at once
 * (runTreeSplit: the up and down halves of the kernel run side by side),
 * each channel on its own lanes. Copies carry the protocol's wire format
 * inside a domain and between domains (coll_nccl_wire).
 */
#include "collective/coll_kit.h"

static uint32_t nccl_tree_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    uint64_t b = shape->in_bytes;
    uint32_t channels = shape->channels ? shape->channels : 1, m = s->domain, rounds = 0;
    uint64_t chunk = coll_nccl_tree_chunk(shape->tune.proto, shape->tune.simple_step_bytes, b, channels, s->n / m, m);
    int32_t *parent = g_new(int32_t, s->n);
    guint from = s->steps->len;
    for (uint32_t c = 0; c < channels; c++) {
        uint64_t lo = coll_nccl_channel_off(shape, b, channels, c);
        uint64_t len = coll_nccl_channel_off(shape, b, channels, c + 1) - lo;
        /* NCCL's cells (from v2.25): calcCollChunking on each channel's own
         * bytes with nChannels = 1 (enqueue.cc scheduleCollTasksToPlan) */
        if (shape->tune.chan_lo)
            chunk = coll_nccl_tree_chunk(shape->tune.proto, shape->tune.simple_step_bytes, len, 1, s->n / m, m);
        coll_nccl_tree(s, c / m % 2, c % m, NULL, parent);
        uint32_t r = len > 0 ? coll_tree_pipeline(s, parent, lo, len, chunk, 0, 6 * c, true) : 0;
        rounds = MAX(rounds, r);
    }
    g_free(parent);
    coll_wire wire = coll_nccl_wire(shape);
    coll_wire_apply(s, from, b, &wire);
    return rounds;
}

static bool nccl_tree_tune(strata_coll_shape *shape, const strata_hw *hw, GError **err)
{
    return coll_library_tune(shape, hw, 1u << STRATA_NCCL_TREE, err);
}

const strata_coll_algo_ops strata_coll_ops_nccl_tree = {.schedule = nccl_tree_schedule, .tune = nccl_tree_tune};
