/*
 * coll_kit_tiers.c: the building blocks of schedules that span scale-up
 * domains, and the protocols' wire formats (contract in coll_kit.h).
 *
 * A group of n ranks lies in domains of s->domain consecutive ranks (an
 * NVLink node, a TPU slice: the hardware's [interconnect] domain, as the
 * SPMD expansion found the group's devices); a step between two domains
 * crosses the network. The libraries lay their rings and trees out so that
 * the network hops join ranks of the same local index, which sit on the
 * same rail:
 *   - rail rings (NCCL's connectRings over its graph's channels): ring g
 *     enters domain 0 at local rank g mod m and walks it upwards, leaves at
 *     g - 1, enters the next domain there and walks it downwards, leaving at
 *     g, and so on, so that every hop between domains joins one local index
 *     (an even number of domains closes the ring on rail g; an odd one
 *     closes it across rails); "upwards" follows a cycle of the local ranks,
 *     0, 1, .., m-1 by default, or a library's own (RCCL's topology model's
 *     rings, which spread a mesh's links among them);
 *   - NCCL's trees (connectTrees): in each domain a chain from a head (the
 *     tree graph's order of the channel: NCCL's from the head upwards,
 *     RCCL's its topology model's ring, ncclTopoPreset), the heads of the domains joined by ncclGetBtree's binary tree (tree 0)
 *     or its mirror (even domain counts) or shift (odd) (tree 1,
 *     ncclGetDtree); a child domain's head feeds the parent's chain[1]
 *     (child 0) or chain[0] (child 1), as BALANCED_TREE's
 *     treeToChild0/1 say (src/graph/connect.cc ncclTopoPreset).
 * Pipelines: a tree's chunks move up (each rank sends once it has its
 * children's) and down (each rank forwards the result it received), a
 * chunk a round behind the one before. The library's fixed cost of a step
 * over the network (coll_wire.net_delay_s: NCCL's proxy posting the send,
 * the NIC's RDMA write and the receiver's proxy completing it) is paid on
 * the path of a chunk: by a tree's first chunk along its levels, as NCCL's
 * model charges it (2 log2(nNodes) levels), and by a ring's first loop on
 * the hops between domains of the chunk whose path crosses them most
 * (ring_critical_chunk): each chunk of a ring walks the ring one hop a
 * step, its network hops each wait for that cost while the chunks behind
 * it in the connection's NCCL_STEPS slots keep the links busy, so the
 * collective ends that many costs after a ring without them. Charging it
 * on every step between domains would put it on every round of the
 * receiving rank (its steps run one after the other in the expansion),
 * which NCCL's pipelined slots do not.
 *
 * Invariants: those of coll_kit.h; orders are permutations of the ranks;
 * a tree's parent array has exactly one root among the ranks that take
 * part, and no cycle.
 */
#include "collective/coll_kit.h"

bool coll_same_domain(const strata_coll_sched *s, uint32_t a, uint32_t b)
{
    return a / s->domain == b / s->domain;
}

static uint64_t ceil_frac(uint64_t x, uint64_t num, uint64_t den)
{
    return (uint64_t)(((unsigned __int128)x * num + den - 1) / den);
}

/* The size of a rank's buffer (IN holds in_bytes; OUT is the op's). */
static uint64_t buffer_bytes(const strata_coll_sched *s, uint64_t in_bytes, strata_coll_buf buf)
{
    if (buf == STRATA_COLL_IN || s->kind == STRATA_OP_ALL_REDUCE)
        return in_bytes;
    return s->kind == STRATA_OP_ALL_GATHER ? in_bytes * s->n : in_bytes / s->n;
}

void coll_wire_apply(strata_coll_sched *s, guint from, uint64_t in_bytes, const coll_wire *w)
{
    for (guint i = from; i < s->steps->len; i++) {
        strata_coll_step *st = &g_array_index(s->steps, strata_coll_step, i);
        if (st->src == st->dst)
            continue; /* a local copy crosses no link */
        bool net = !coll_same_domain(s, st->src, st->dst);
        uint64_t wire = ceil_frac(st->bytes, net ? w->net_num : w->num, net ? w->net_den : w->den);
        /* between domains, the link layer's packet headers too (hw/ib_frame.h);
         * a copy's wire bytes stay within its source buffer, as every
         * format's (the op stream's bound on a copy), so a copy of a whole
         * small buffer carries at most the buffer */
        if (net)
            wire = strata_ib_frame_wire_bytes(w->net_frame, w->net_mtu, wire);
        st->wire_bytes = MAX(1, MIN(wire, buffer_bytes(s, in_bytes, st->src_buf)));
        st->handshake = !net && w->handshake;
        st->fused = st->reduce;
        st->delay_s = st->pipelined ? 0 : net ? w->net_delay_s : st->handshake ? w->sync_delay_s : 0;
        st->proxy_s = net && st->conn_lane ? w->net_proxy_s : 0;
    }
}

void coll_rail_ring(const strata_coll_sched *s, uint32_t g, const uint8_t *cycle, uint32_t *order)
{
    uint32_t m = s->domain, e = g % m;
    for (uint32_t k = 0; k < s->n / m; k++)
        for (uint32_t i = 0; i < m; i++) {
            /* forward from position e of the cycle; backward from e - 1 */
            uint32_t at = k % 2 == 0 ? (e + i) % m : (e + 2 * m - 1 - i) % m;
            order[k * m + i] = k * m + (cycle ? cycle[at] : at);
        }
}

/* pos[g * n + rank]: the rank's position in ring g. */
static uint32_t *positions(uint32_t n, const uint32_t *orders, uint32_t groups)
{
    uint32_t *pos = g_new(uint32_t, (size_t)groups * n);
    for (uint32_t g = 0; g < groups; g++)
        for (uint32_t i = 0; i < n; i++)
            pos[(size_t)g * n + orders[(size_t)g * n + i]] = i;
    return pos;
}

/* The chunk of ring `order` (a position: the chunk the rank there owns
 * after the reduce-scatter) whose path crosses between domains most often,
 * the first on a tie. A hop into position j crosses when order[j - 1] and
 * order[j] lie in different domains; a chunk's path takes every hop but
 * one per pass: an all-reduce's reduce-scatter all but the hop into c + 1,
 * its all-gather all but the hop into c (rs and ag both true); a lone
 * reduce-scatter all but the hop into c + 1, a lone all-gather all but the
 * hop into c. Only the first `filled` chunks carry bytes (a ring's last
 * loop rounded up to its grain: a 16-byte chunk 0 and empty ones, whose
 * steps are not emitted), so the critical chunk is one of them: the cost
 * falls on the path the data takes (wave 34; before, an 8 B all-reduce on
 * 2 x 8 ranks put it on an empty chunk, and no step paid it). */
static uint32_t ring_critical_chunk(const strata_coll_sched *s, const uint32_t *order, bool rs, bool ag,
                                    uint32_t filled)
{
    uint32_t n = s->n, net = 0, best = 0, best_hops = 0;
    for (uint32_t j = 0; j < n; j++)
        net += !coll_same_domain(s, order[(j + n - 1) % n], order[j]);
    for (uint32_t c = 0; c < MIN(n, MAX(1u, filled)); c++) {
        uint32_t hops = 0;
        if (rs)
            hops += net - !coll_same_domain(s, order[c], order[(c + 1) % n]);
        if (ag)
            hops += net - !coll_same_domain(s, order[(c + n - 1) % n], order[c]);
        if (hops > best_hops) {
            best_hops = hops;
            best = c;
        }
    }
    return best;
}

uint32_t coll_ring_loops_groups(strata_coll_sched *s, uint64_t b, uint64_t channels, uint64_t chunk, uint64_t grain,
                                uint32_t slices, const uint32_t *orders, uint32_t groups, uint32_t slots,
                                bool own_ring)
{
    uint32_t n = s->n, round = 0;
    uint64_t gr = grain ? grain : 1;
    uint32_t *pos = positions(n, orders, groups);
    uint32_t *critical = g_new(uint32_t, groups);
    /* the first loop's chunk (as below) and the chunks it fills */
    uint64_t c0 = MIN(chunk, (b + channels * n * gr - 1) / (channels * n * gr) * gr) * channels;
    uint32_t filled = c0 ? (uint32_t)MIN((uint64_t)n, (b + c0 - 1) / c0) : n;
    for (uint32_t g = 0; g < groups; g++)
        critical[g] = ring_critical_chunk(s, orders + (size_t)g * n, true, true, filled);
    for (uint64_t grid = 0; grid < b; grid += channels * n * chunk) {
        /* the last loop's chunk: the rest's even share, rounded up to the
         * grain (coll_ring_loops) */
        uint64_t c = MIN(chunk, (b - grid + channels * n * gr - 1) / (channels * n * gr) * gr) * channels;
        for (uint32_t step = 0; step < 2 * (n - 1); step++) {
            bool reduce = step + 1 < n;
            for (uint32_t k = 0; k < slices; k++, round++)
                for (uint32_t g = 0; g < groups; g++)
                    for (uint32_t q = 0; q < n; q++) {
                        uint32_t at = pos[(size_t)g * n + q];
                        uint32_t p = (at + 2 * n - (reduce ? step + 2 : step - (n - 1) + 1)) % n;
                        uint64_t lo = MIN(grid + p * c, b), len = MIN(lo + c, b) - lo;
                        uint64_t glo = lo + coll_chunk_off(len, groups, g);
                        uint64_t glen = lo + coll_chunk_off(len, groups, g + 1) - glo;
                        uint64_t off = glo + coll_chunk_off(glen, slices, k);
                        /* the first loop's critical chunk, its first slice with bytes (a 1-byte
                         * chunk's first of 2 slices is empty), pays the network's cost */
                        uint32_t src = orders[(size_t)g * n + (at + n - 1) % n];
                        uint64_t end = glo + coll_chunk_off(glen, slices, k + 1);
                        bool path = grid == 0 && off == glo && end > off && p == critical[g] &&
                                    !coll_same_domain(s, src, q);
                        /* with slots: NCCL's connection, round r in slot r mod `slots` on lanes
                         * from 2 (coll_sched.h slotted; lane + 1 the fused reduction's) */
                        uint32_t lane = slots ? 2 * (1 + g + groups * (round % slots)) : 2 * g;
                        /* across domains: the connection's lane, past the slots' (in order, coll_sched.h) */
                        uint32_t conn = slots && !coll_same_domain(s, src, q) ? 2 * (1 + groups * slots) + g : 0;
                        /* own_ring: the source's receipt on this ring the round before (coll_sched.h
                         * src_lane; the first round: its start), a reduction on its lane + 1 below n - 1 */
                        uint32_t back = own_ring && slots && round > 0 ? 2 * (1 + g + groups * ((round - 1) % slots))
                                                                       : 0;
                        bool back_fused = back && (k > 0 ? reduce : step > 0 && step <= n - 1);
                        strata_coll_step st = {.round = round, .lane = lane, .src = src, .dst = q, .conn_lane = conn,
                                               .src_lane = back, .src_fused = back_fused,
                                               .src_off = off, .dst_off = off, .own_off = off, .reduce = reduce,
                                               .fused = reduce, .pipelined = !path, .slotted = slots > 0,
                                               .bytes = end - off};
                        coll_add(s, &st);
                    }
        }
    }
    g_free(critical);
    g_free(pos);
    return round;
}

uint32_t coll_ring_groups(strata_coll_sched *s, uint64_t in_bytes, const uint32_t *orders, uint32_t groups,
                          uint32_t slots, bool paced)
{
    uint32_t n = s->n;
    bool ag = s->kind == STRATA_OP_ALL_GATHER;
    uint64_t c = ag ? in_bytes : in_bytes / n; /* a rank's chunk */
    uint32_t *pos = positions(n, orders, groups);
    for (uint32_t g = 0; g < groups; g++) {
        uint64_t glo = coll_chunk_off(c, groups, g), glen = coll_chunk_off(c, groups, g + 1) - glo;
        uint32_t critical = ring_critical_chunk(s, orders + (size_t)g * n, !ag, ag, n);
        for (uint32_t step = 0; step + 1 < n; step++)
            for (uint32_t q = 0; q < n; q++) {
                uint32_t at = pos[(size_t)g * n + q];
                uint32_t src = orders[(size_t)g * n + (at + n - 1) % n];
                /* all-gather: the chunk of the rank step + 1 behind; reduce-scatter: step + 2 behind */
                uint32_t chunk = (at + 2 * n - step - (ag ? 1 : 2)) % n, owner = orders[(size_t)g * n + chunk];
                bool last = !ag && step + 2 == n;
                /* NCCL's connection, round `step` in slot step mod `slots` (coll_sched.h
                 * slotted), on lanes from 2 (lane 0, the op stream, holds the rounds' ends):
                 * the all-gather's recvCopySend and the reduce-scatter's recvReduceSend both
                 * wait for their predecessor's step and a credit, with NCCL_STEPS steps a
                 * connection in flight (NVIDIA/nccl v2.30.4-1 src/device/all_gather.h,
                 * reduce_scatter.h runRing; prims_ll.h waitSend). A reduce-scatter's steps
                 * receive into their ring's one buffer (recv_lane, the first slot's: a
                 * chunk a ring, as NCCL's connection's fixed buffer, not one a slot;
                 * before wave 48 one lane a ring: one step in flight, each network
                 * step's flight in series, docs/clusters.md) */
                uint32_t lane = slots ? 2 * (1 + g + groups * (step % slots)) : 2 * g;
                /* across domains, paced: the connection's lane past the slots' from its second
                 * post (coll_kit.h; its first waits for its data alone) */
                bool cross = !coll_same_domain(s, src, q);
                uint32_t conn = paced && slots && step > 0 && cross ? 2 * (1 + groups * slots) + g : 0;
                strata_coll_step st = {.round = step, .lane = lane, .src = src, .dst = q, .bytes = glen,
                                       .src_buf = ag && step > 0 ? STRATA_COLL_OUT : STRATA_COLL_IN,
                                       .src_off = ag ? (step > 0 ? owner * c : 0) + glo : owner * c + glo,
                                       .dst_buf = ag || last ? STRATA_COLL_OUT : STRATA_COLL_IN,
                                       .dst_off = ag ? owner * c + glo : last ? glo : owner * c + glo,
                                       .own_buf = STRATA_COLL_IN, .own_off = owner * c + glo, .reduce = !ag,
                                       .fused = !ag,
                                       .pipelined = chunk != critical || !cross, .conn_lane = conn,
                                       .slotted = slots > 0, .recv_lane = !ag && slots ? 2 * (1 + g) : 0};
                coll_add(s, &st);
                if (ag && step == 0) { /* the rank's own chunk, IN to OUT */
                    strata_coll_step own = {.round = 0, .lane = 2 * g + 1, .src = q, .dst = q, .bytes = glen,
                                            .src_buf = STRATA_COLL_IN, .src_off = glo, .dst_buf = STRATA_COLL_OUT,
                                            .dst_off = (uint64_t)q * c + glo};
                    coll_add(s, &own);
                }
            }
    }
    g_free(pos);
    return n - 1;
}

/* ncclGetBtree's parent of `rank` among `nranks` (-1: the root, rank 0),
 * and whether rank is its first (0) or second (1) child. */
static int32_t btree_parent(uint32_t nranks, uint32_t rank, uint32_t *child_type)
{
    uint32_t bit = 1;
    while (bit < nranks && !(bit & rank))
        bit <<= 1;
    if (rank == 0)
        return -1;
    uint32_t up = (rank ^ bit) | (bit << 1);
    if (up >= nranks)
        up = rank ^ bit;
    *child_type = rank < up ? 0 : 1;
    return (int32_t)up;
}

int32_t coll_dtree_parent(uint32_t nodes, uint32_t node, uint32_t tree, uint32_t *child_type)
{
    *child_type = 0;
    if (tree == 0)
        return btree_parent(nodes, node, child_type);
    if (nodes % 2 == 1) { /* shift by one */
        int32_t u = btree_parent(nodes, (node + nodes - 1) % nodes, child_type);
        return u < 0 ? -1 : (int32_t)((uint32_t)(u + 1) % nodes);
    }
    int32_t u = btree_parent(nodes, nodes - 1 - node, child_type); /* mirror */
    return u < 0 ? -1 : (int32_t)(nodes - 1 - (uint32_t)u);
}

/* Local rank at position i of a domain's chain: chain[i], or head + i. */
static uint32_t chain_at(const uint8_t *chain, uint32_t head, uint32_t m, uint32_t i)
{
    return chain ? chain[i] : (head + i) % m;
}

void coll_nccl_tree(const strata_coll_sched *s, uint32_t tree, uint32_t head, const uint8_t *chain, int32_t *parent)
{
    uint32_t m = s->domain, nodes = s->n / m;
    for (uint32_t k = 0; k < nodes; k++) {
        for (uint32_t i = 1; i < m; i++) /* the chain */
            parent[k * m + chain_at(chain, head, m, i)] = (int32_t)(k * m + chain_at(chain, head, m, i - 1));
        uint32_t type;
        int32_t u = coll_dtree_parent(nodes, k, tree, &type);
        /* child 0 feeds the parent's chain[1], child 1 its chain[0] (its head) */
        uint32_t into = chain_at(chain, head, m, type == 0 && m > 1);
        parent[k * m + chain_at(chain, head, m, 0)] = u < 0 ? -1 : (int32_t)((uint32_t)u * m + into);
    }
}

/* Height (longest path down to a leaf) and depth (from the root) of every
 * rank of a tree (-2: not in it); returns the root's height. */
static uint32_t tree_shape(uint32_t n, const int32_t *parent, uint32_t *height, uint32_t *depth)
{
    for (uint32_t r = 0; r < n; r++)
        height[r] = depth[r] = 0;
    for (uint32_t r = 0; r < n; r++) /* walk each rank up: its depth, and heights along the way */
        for (int32_t x = (int32_t)r, h = 0; x >= 0 && parent[x] >= 0; x = parent[x], h++) {
            depth[r]++;
            height[parent[x]] = MAX(height[parent[x]], (uint32_t)h + 1);
        }
    uint32_t top = 0;
    for (uint32_t r = 0; r < n; r++)
        top = parent[r] == -1 ? MAX(top, height[r]) : top;
    return top;
}

uint32_t coll_tree_pipeline(strata_coll_sched *s, const int32_t *parent, uint64_t lo, uint64_t len, uint64_t chunk,
                            uint32_t round0, uint32_t lane0, bool chain_first)
{
    uint32_t n = s->n, *height = g_new(uint32_t, n), *depth = g_new(uint32_t, n), *slot = g_new0(uint32_t, n);
    uint32_t *children = g_new0(uint32_t, n);
    uint32_t top = tree_shape(n, parent, height, depth);
    bool *intra = g_new0(bool, n); /* a rank with a child in its own domain */
    for (uint32_t r = 0; r < n; r++)
        if (chain_first && parent[r] >= 0 && coll_same_domain(s, r, (uint32_t)parent[r]))
            intra[parent[r]] = true;
    /* A rank's children's slots: with chain_first, where it has a child in
     * its own domain (NCCL's chain: at most one) and one across (the tree
     * between domains: at most one), the chain's child first; otherwise in
     * rank order. So NCCL's tree's slots, and the lanes they take, follow
     * the tree's shape, not the domains' numbering: a mirror of the domains
     * (its tree 1 of an even count, against tree 0) keeps them
     * (spmd_classes.c). */
    for (uint32_t r = 0; r < n; r++)
        if (parent[r] >= 0) {
            uint32_t p = (uint32_t)parent[r], earlier = children[p]++; /* once: MIN() evaluates its arguments twice */
            slot[r] = intra[p] ? !coll_same_domain(s, r, p) : MIN(earlier, 1u);
        }
    uint64_t chunks = MAX(1, (len + chunk - 1) / chunk);
    for (uint64_t k = 0; k < chunks; k++) {
        uint64_t off = lo + k * chunk, bytes = MIN(chunk, lo + len - off);
        for (uint32_t r = 0; r < n && bytes > 0; r++) {
            if (parent[r] < 0)
                continue;
            uint32_t p = (uint32_t)parent[r];
            strata_coll_step up = {.round = round0 + (uint32_t)k + height[r], .lane = lane0 + 2 * slot[r],
                                   .src = r, .dst = p, .src_off = off, .dst_off = off, .own_off = off,
                                   .reduce = true, .fused = true, .bytes = bytes, .pipelined = k > 0};
            strata_coll_step down = {.round = round0 + (uint32_t)k + top + depth[r] - 1, .lane = lane0 + 4,
                                     .src = p, .dst = r, .src_off = off, .dst_off = off, .bytes = bytes,
                                     .pipelined = k > 0};
            coll_add(s, &up);
            coll_add(s, &down);
        }
    }
    g_free(height);
    g_free(depth);
    g_free(slot);
    g_free(children);
    g_free(intra);
    return (uint32_t)chunks - 1 + 2 * top;
}

uint64_t coll_nvls_wire(uint64_t bytes, double efficiency)
{
    uint64_t eff = efficiency > 0 && efficiency < 1 ? (uint64_t)(efficiency * 1000 + 0.5) : 0;
    uint64_t w = ceil_frac(bytes, STRATA_COLL_WIRE_NUM, STRATA_COLL_WIRE_DEN);
    return eff ? ceil_frac(w, 1000, eff) : w;
}

/* Each copy is a step of NCCL's Simple protocol (the NVLS kernel's roles
 * are ProtoSimple primitives, src/device/all_reduce.h): postPeer fences
 * and then stores the step's tail, which the next role polls (waitPeer),
 * so its flag follows the data on the route (handshake), as a ring's
 * Simple step's does. Where the tail lies (NVIDIA/nccl v2.27.7-1
 * src/transport/nvls.cc ncclNvlsSetup): the scatter's in the rank's own
 * memory (send[1], the unicast credit), which the reducer reads through
 * the switch, multimem.ld_reduce.min over every rank's (recv[0] on the
 * multicast credit, NCCL_NVLS_MIN_POLL; prims_simple.h loadStepValue): a
 * load, there and back (polled); the multicast's stored through the
 * switch into every rank's memory (send[0], multicast), where the
 * gather polls its own (recv[1]): one flight. */
void coll_nvls_piece(strata_coll_sched *s, uint32_t base, uint32_t m, uint64_t lo, uint64_t len, uint32_t round,
                     uint32_t phase, double efficiency)
{
    uint64_t wire = MAX(1, coll_nvls_wire(ceil_frac(len, m + 1, 2ull * m * (m - 1)), efficiency));
    for (uint32_t q = 0; q < m; q++)
        for (uint32_t j = 0; j + 1 < m; j++) {
            uint32_t r = (q + m - 1 - j) % m; /* j = (q - r) mod m - 1 */
            uint64_t off = lo + coll_chunk_off(len, m, q), bytes = lo + coll_chunk_off(len, m, q + 1) - off;
            strata_coll_step st = {.round = round, .src = base + (phase == 0 ? r : q),
                                   .dst = base + (phase == 0 ? q : r),
                                   .lane = phase == 0 ? 2 * j : 2 * (m - 1) + j, .src_off = off, .dst_off = off,
                                   .own_off = off, .reduce = phase == 0, .fused = phase == 0, .handshake = true,
                                   .polled = phase == 0, .bytes = bytes,
                                   .wire_bytes = wire};
            coll_add(s, &st);
        }
}
