/*
 * algo_nccl_nvls_tree.c: the nccl-nvls-tree algorithm (coll_algo.h):
 * NCCL's NVLS_TREE all-reduce across nodes (NCCL_ALGO=NVLSTree): NVLink
 * SHARP inside each node, a tree between the nodes; algo=nccl runs it
 * where NCCL's tuning model picks NVLS_TREE.
 *
 * tune: NCCL's tuning model limited to NVLS_TREE: its channels, its chunk
 * (calcCollChunking: NCCL_NVLS_CHUNKSIZE, 64 KiB from 4 nodes, halved for
 * small buffers), its fixed cost (NVLS's NVLink latency, 25 us) and its
 * network step's (coll_library_tune).
 * schedule: the buffer in pieces of channels x m x chunk (m ranks a
 * domain, each a head: the GPU of a NIC; NVIDIA/nccl src/transport/nvls.cc,
 * src/device/all_reduce.h runNvlsTree). Piece k is reduced inside each
 * domain by NVLS in round k (local rank q owns shard q: coll_nvls_piece,
 * the reduction phase), then shard q is all-reduced among the ranks of
 * local rank q of every domain over NCCL's double binary tree (connectNvls:
 * a tree per head; its first half over tree 0, its second over tree 1,
 * up then down, from round k + 1), then multicast inside each domain (the
 * multicast phase, round k + 1 + 2L, L the tree's height). The pieces
 * pipeline: the reduction of one piece, the trees of the ones before and
 * the multicast of an earlier one share the links. NVLS copies carry
 * NVLink's packets over NCCL's NVLS efficiency (as nccl's NVLS); a tree's
 * copies cross the network in the Simple format, the first piece's after
 * NCCL's network step cost. With one domain it is nccl's NVLS all-reduce.
 * Across domains every round also takes at least the time of the largest
 * piece in one of its stages at the kernel's rate (tune.stage_bw: NCCL's
 * perChMaxNVLSTreeBw x its heads, strata_nccl_choice.stage_gbs): each role
 * of runNvlsTree (scatter, reduce and send, receive and broadcast, gather)
 * runs on its own warps of the channel's CTA, at their pace whether or not
 * the links have room, so the first piece crosses its 2 + 2L stages at a
 * stage-time each, as the steady state does (pace_rounds).
 */
#include "collective/coll_kit.h"

#define NVLS_CHUNK (128ull << 10)

/* parent[]: the tree `tree` between the domains' ranks of local rank q
 * (-2: the others). Returns its height (the root's). */
static uint32_t head_tree(const strata_coll_sched *s, uint32_t tree, uint32_t q, int32_t *parent)
{
    uint32_t m = s->domain, nodes = s->n / m, height = 0;
    for (uint32_t r = 0; r < s->n; r++)
        parent[r] = -2;
    for (uint32_t k = 0; k < nodes; k++) {
        uint32_t type, h = 0;
        int32_t u = coll_dtree_parent(nodes, k, tree, &type);
        parent[k * m + q] = u < 0 ? -1 : (int32_t)((uint32_t)u * m + q);
        for (int32_t x = (int32_t)k; x >= 0; x = coll_dtree_parent(nodes, (uint32_t)x, tree, &type))
            h++;
        height = MAX(height, h - 1);
    }
    return height;
}

/* The kernel's pace: in each of the schedule's rounds (pieces + 1 + 2
 * levels) every rank takes at least the largest piece in one of its stages
 * at `bw` (B/s): a step on lane `lane` that copies nothing new (a byte of
 * OUT onto itself, appended before the data's steps so that it reads and
 * writes the value the round starts from) after that delay. The warps of
 * each role run at the kernel's rate whether or not the others have work,
 * so the pipeline's fill and drain take a stage-time a round, as its
 * steady state does. */
static void pace_rounds(strata_coll_sched *s, uint64_t b, uint64_t piece, uint32_t pieces, uint32_t levels,
                        double bw, uint32_t lane)
{
    uint64_t last = b - (uint64_t)(pieces - 1) * piece;
    for (uint32_t r = 0; bw > 0 && r < pieces + 1 + 2 * levels; r++) {
        /* the pieces in a stage: r - 1 - 2 levels .. r */
        bool only_last = r >= pieces - 1 + 1 + 2 * levels || pieces == 1;
        double delay = (double)(only_last ? last : piece) / bw;
        for (uint32_t rank = 0; rank < s->n; rank++) {
            strata_coll_step st = {.round = r, .lane = lane, .src = rank, .dst = rank, .src_buf = STRATA_COLL_OUT,
                                   .dst_buf = STRATA_COLL_OUT, .own_buf = STRATA_COLL_OUT, .bytes = 1,
                                   .delay_s = delay};
            coll_add(s, &st);
        }
    }
}

static uint32_t nvls_tree_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    uint32_t n = s->n, m = s->domain, nodes = n / m;
    uint64_t b = shape->in_bytes, channels = shape->channels ? shape->channels : 1;
    uint64_t piece = channels * m * (shape->chunk_bytes ? shape->chunk_bytes : NVLS_CHUNK);
    uint32_t pieces = (uint32_t)((b + piece - 1) / piece);
    int32_t *parent = g_new(int32_t, (size_t)2 * m * n);
    uint32_t levels = 0;
    for (uint32_t t = 0; nodes > 1 && t < 2; t++)
        for (uint32_t q = 0; q < m; q++) {
            uint32_t h = head_tree(s, t, q, parent + ((size_t)t * m + q) * n);
            levels = MAX(levels, h);
        }
    coll_wire wire = coll_nccl_wire(shape);
    uint32_t lane0 = m > 1 ? 3 * (m - 1) : 0;
    if (nodes > 1)
        pace_rounds(s, b, piece, pieces, levels, shape->tune.stage_bw, lane0 + 12);
    for (uint32_t k = 0; k < pieces; k++) {
        uint64_t lo = (uint64_t)k * piece, len = MIN(b - lo, piece);
        for (uint32_t node = 0; m > 1 && node < nodes; node++) {
            coll_nvls_piece(s, node * m, m, lo, len, k, 0, shape->tune.nvls_efficiency);
            coll_nvls_piece(s, node * m, m, lo, len, k + 1 + 2 * levels, 1, shape->tune.nvls_efficiency);
        }
        guint from = s->steps->len;
        for (uint32_t q = 0; nodes > 1 && q < m; q++) {
            uint64_t qlo = lo + coll_chunk_off(len, m, q), qlen = lo + coll_chunk_off(len, m, q + 1) - qlo;
            for (uint32_t t = 0; t < 2; t++) {
                uint64_t hlo = qlo + coll_chunk_off(qlen, 2, t), hlen = qlo + coll_chunk_off(qlen, 2, t + 1) - hlo;
                if (hlen > 0)
                    coll_tree_pipeline(s, parent + ((size_t)t * m + q) * n, hlo, hlen, hlen, k + 1, lane0 + 6 * t, false);
            }
        }
        for (guint i = from; i < s->steps->len; i++)
            g_array_index(s->steps, strata_coll_step, i).pipelined = k > 0;
        coll_wire_apply(s, from, b, &wire);
    }
    g_free(parent);
    return pieces + 1 + 2 * levels;
}

static bool nvls_tree_tune(strata_coll_shape *shape, const strata_hw *hw, GError **err)
{
    return coll_library_tune(shape, hw, 1u << STRATA_NCCL_NVLS_TREE, err);
}

const strata_coll_algo_ops strata_coll_ops_nccl_nvls_tree = {.schedule = nvls_tree_schedule,
                                                             .tune = nvls_tree_tune};
