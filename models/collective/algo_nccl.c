/*
 * algo_nccl.c: the nccl algorithm (coll_algo.h): all-reduce, all-gather,
 * reduce-scatter and all-to-all as NCCL runs them, the nccl
 * implementation's pick (hw/coll_impl_nccl.c), over the group as one ring
 * (a FLAT layout); all-to-all as NCCL's grouped sends and receives
 * (coll_kit_p2p.c) in its p2p protocol's wire format.
 *
 * tune (the cost hook): the algorithm, protocol and channels of NCCL's
 * tuning model, from the hardware's collective implementation
 * (hw/coll_impl.h: its tune; a model whose implementation has none is an
 * input error), and NCCL's fixed cost per rank (launch_s).
 * schedule, by NCCL's choice: ring all-reduce in the protocol's loops,
 * chunks and slices; ring all-gather and reduce-scatter as ring (one round
 * a step) in the protocol's format: LL (8-byte stores of 4 data bytes and a
 * flag, chunks of 32 KiB per channel), LL128 (120 data bytes of each
 * 128-byte line, 576,000-byte chunks) or Simple (nccl-ring's slices and
 * flags), each with NVLink's packet overhead, and across scale-up domains
 * as rail rings in the protocols' network formats (coll_kit_nccl.c); on a
 * node whose GPUs are a full mesh of direct NVLink, over the rings of
 * NCCL's graph there (mesh_rings below); NVLS
 * as nvls() below (the switch reduces and multicasts); Tree, NVLS_TREE and
 * PAT as their own rows do (algo_nccl_tree.c, algo_nccl_nvls_tree.c,
 * algo_nccl_pat.c).
 */
#include "collective/coll_kit.h"
#include "core/error.h"
#include "hw/coll_impl.h"

/* Ring `a` (n ranks) is `b`. */
static bool same_ring(const uint32_t *a, const uint8_t *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

/* NVLS: NCCL_NVLS_CHUNKSIZE, 128 KiB per channel (transport/nvls.cc). */
#define NVLS_CHUNK (128ull << 10)

/* NVLS: the ranks' copies that put on every link, in each direction, the
 * bytes NVLink SHARP puts there. multimem.ld_reduce reads a shard from
 * every rank through the switch, which reduces it and returns one copy to
 * the rank that owns it; multimem.st sends a shard once to the switch,
 * which writes it to every rank. All-reduce pipelines the two on pieces of
 * channels x n x NVLS_CHUNK bytes (round k reduces piece k-1 and
 * multicasts piece k-2), so a piece of P bytes loads each link with P (the rank's
 * part of every shard, reduced) + P/n (its reduced shard, multicast) one
 * way and P/n + P the other: (n+1) P / n per direction, which the 2(n-1)
 * copies per link and piece (owner q reduces shard q from each r, then
 * copies it to each r) carry at (n+1) P / (2 n (n-1)) bytes each (fewer
 * than the shard: the switch does the rest). A reduce-scatter is the
 * ld_reduce alone (a rank's whole IN goes up: B per link, each of its
 * n-1 copies B/(n-1)); an all-gather the multicast alone (n shards come
 * down). Copies to one owner run on separate lanes (fused reductions on
 * the lane after each), each followed by its Simple flag on its route
 * (coll_nvls_piece; a reduction's polled, a round trip); NVLink's packet overhead applies on top, and
 * NCCL's NVLS efficiency (tuning.cc nvlsEfficiency, 0.85 on Hopper: the
 * share of NVLink's data rate its multimem loads and stores reach, NCCL's
 * own figure for its bandwidth) scales every copy's wire bytes by 1/eff.
 * The chunk per channel and head is calcCollChunking's (shape->chunk_bytes).
 * Unregistered buffers (NCCL's default: nccl-tests without -R, torch's
 * tensors; regUsed 0) take the kernel's copy path (NVIDIA/nccl v2.27.7-1
 * src/device/all_reduce.h, RunWorkColl<AllReduce, NVLS, SIMPLE>, oneNode):
 * the scatter warps copy the rank's input into its NVLS buffer before the
 * switch reads it, and the gather warps copy the multicast result out of
 * it into the output, each through the rank's own memory. So an all-reduce
 * piece also takes a local copy of P bytes on every rank in the round
 * before its reduction (round k scatters piece k) and one in the round
 * after its multicast (round k gathers piece k-3): pieces + 3 rounds. The
 * scatter and gather warps copy at their own pace, a step no faster than
 * its load latencies (nvls_pace below), which the pipeline's fill and
 * drain show: the first scatter and the last gather. */

/* A local copy of [lo, lo + len) on every rank, on `lane` in `round`: the
 * NVLS kernel's scatter into, or gather out of, the NVLS buffer. The
 * buffer is not one of the schedule's, so the copy is written in place
 * (the value moves nowhere; the memory traffic is the copy's). */
static void nvls_stage_copy(strata_coll_sched *s, uint64_t lo, uint64_t len, uint32_t round, uint32_t lane)
{
    for (uint32_t r = 0; r < s->n; r++) {
        strata_coll_step st = {.round = round, .lane = lane, .src = r, .dst = r, .src_buf = STRATA_COLL_OUT,
                               .dst_buf = STRATA_COLL_OUT, .own_buf = STRATA_COLL_OUT, .src_off = lo,
                               .dst_off = lo, .own_off = lo, .bytes = len};
        coll_add(s, &st);
    }
}

/* The copy warps' pace (NVIDIA/nccl v2.27.7-1). Of a channel's
 * NCCL_MAX_NTHREADS / 32 = 20 warps, with unregistered buffers on one node
 * 5 reduce and multicast (7 up to 6 ranks), (20 - 5 + 1) / 2 = 8 scatter
 * and (20 - 5) / 2 = 7 gather (src/device/all_reduce.h lines 393-398).
 * A step of either copies one chunk per head, head after head
 * (ScatterGatherOp, src/device/prims_simple.h), each in iterations of a
 * hunk per warp: COLL_UNROLL (8 on sm90 and sm100, include/device.h
 * ncclCollUnroll) 16-byte loads by each of 32 lanes, then their stores
 * (common_kernel.h reduceCopyPacks): 4 KiB a warp per load latency, the
 * loads of the next iteration issued after the stores. So a step takes
 * heads x ceil(ceil(chunk / 4 KiB) / warps) load latencies at least,
 * whatever the memory's bandwidth: 8 x 2 x 500 ns = 8 us for the
 * scatter of 64 KiB chunks from HBM (dgx-h100.ini's ESTIMATE of its
 * latency). The last loop's chunk is its share of the rest over the heads,
 * rounded up to 16 KiB (lastChunkSize). */
#define NVLS_WARPS 20u
#define NVLS_HUNK 4096ull
#define NVLS_LAST_ALIGN 16384ull

static double nvls_role_step(uint64_t chunk, uint32_t heads, uint32_t warps, double latency)
{
    uint64_t hunks = (chunk + NVLS_HUNK - 1) / NVLS_HUNK;
    return (double)heads * (double)((hunks + warps - 1) / warps) * latency;
}

/* The scatter (stage 0) or gather (stage 3) warps' pace on a piece of len
 * bytes in `round`: a step on `lane` of every rank that copies nothing new
 * (a byte of OUT onto itself, appended before the round's data steps)
 * after the role's step time; none where the latency is 0. */
static void nvls_pace(strata_coll_sched *s, const strata_coll_shape *shape, uint64_t len, uint32_t round,
                      uint32_t stage, uint32_t lane)
{
    uint32_t n = s->n, reduce = n <= 6 ? 7 : 5;
    uint32_t warps = stage == 0 ? (NVLS_WARPS - reduce + 1) / 2 : (NVLS_WARPS - reduce) / 2;
    double latency = stage == 0 ? shape->tune.nvls_scatter_lat_s : shape->tune.nvls_gather_lat_s;
    uint64_t channels = shape->channels ? shape->channels : 1, full = shape->chunk_bytes ? shape->chunk_bytes : NVLS_CHUNK;
    uint64_t share = (len + channels * n - 1) / (channels * n);
    uint64_t chunk = MIN(full, (share + NVLS_LAST_ALIGN - 1) / NVLS_LAST_ALIGN * NVLS_LAST_ALIGN);
    double delay = nvls_role_step(chunk, n, warps, latency);
    for (uint32_t r = 0; delay > 0 && r < n; r++) {
        strata_coll_step st = {.round = round, .lane = lane, .src = r, .dst = r, .src_buf = STRATA_COLL_OUT,
                               .dst_buf = STRATA_COLL_OUT, .own_buf = STRATA_COLL_OUT, .bytes = 1, .delay_s = delay};
        coll_add(s, &st);
    }
}

static uint32_t nvls(strata_coll_sched *s, const strata_coll_shape *shape)
{
    uint32_t n = s->n;
    uint64_t b = shape->in_bytes, channels = shape->channels ? shape->channels : 1;
    if (s->kind == STRATA_OP_ALL_REDUCE) {
        uint64_t piece = channels * n * (shape->chunk_bytes ? shape->chunk_bytes : NVLS_CHUNK);
        uint32_t pieces = (uint32_t)((b + piece - 1) / piece);
        /* round r: stage 0 scatters piece r, 1 reduces piece r - 1, 2
         * multicasts piece r - 2, 3 gathers piece r - 3; the copy warps'
         * pace first (lanes after the copies') */
        for (uint32_t r = 0; r < pieces + 3; r++)
            for (uint32_t stage = 0; stage < 4; stage += 3)
                if (r >= stage && r - stage < pieces)
                    nvls_pace(s, shape, MIN(b - (uint64_t)(r - stage) * piece, piece), r, stage,
                              3 * (n - 1) + 2 + stage / 3);
        for (uint32_t r = 0; r < pieces + 3; r++)
            for (uint32_t stage = 0; stage < 4; stage++) {
                if (r < stage || r - stage >= pieces)
                    continue;
                uint64_t lo = (uint64_t)(r - stage) * piece, len = MIN(b - lo, piece);
                if (stage == 0 || stage == 3)
                    nvls_stage_copy(s, lo, len, r, 3 * (n - 1) + stage / 3);
                else
                    coll_nvls_piece(s, 0, n, lo, len, r, stage - 1, shape->tune.nvls_efficiency);
            }
        return pieces + 3;
    }
    /* reduce-scatter: round 0 copies the rank's own chunk of IN to OUT,
     * round 1 reduces the others' into it; all-gather: round 0 copies IN
     * to the rank's slot of OUT, round 1 sends that slot to every other
     * rank (named by its OUT: the copy's bytes then stay within it). Each
     * switch copy is a step of NCCL's Simple protocol (NVIDIA/nccl
     * v2.27.7-1 src/device/reduce_scatter.h and all_gather.h,
     * RunWorkColl<.., NVLS, SIMPLE>, oneNode: the reduce role's
     * prims.recv, the bcast role's prims.send, ProtoSimple), so its flag
     * follows it (handshake), as coll_nvls_piece's do: the multicast's
     * postPeer stores the tail through the switch into every rank's
     * memory, where the gather polls it; the reducer polls the scatter's
     * in the ranks' own memory through the switch, a round trip (polled) */
    bool rs = s->kind == STRATA_OP_REDUCE_SCATTER;
    uint64_t c = rs ? b / n : b, total = rs ? b : b * n;
    for (uint32_t q = 0; q < n; q++) {
        strata_coll_step own = {.src = q, .dst = q, .lane = 2 * (n - 1), .src_buf = STRATA_COLL_IN,
                                .dst_buf = STRATA_COLL_OUT, .src_off = rs ? (uint64_t)q * c : 0,
                                .dst_off = rs ? 0 : (uint64_t)q * c, .bytes = c};
        coll_add(s, &own);
        for (uint32_t j = 0; j + 1 < n; j++) {
            uint32_t r = (q + n - 1 - j) % n;
            strata_coll_buf src_buf = rs ? STRATA_COLL_IN : STRATA_COLL_OUT;
            uint64_t wire = coll_nvls_wire((total + n - 2) / (n - 1), shape->tune.nvls_efficiency);
            strata_coll_step st = {.round = 1, .src = r, .dst = q, .lane = 2 * j, .src_buf = src_buf,
                                   .dst_buf = STRATA_COLL_OUT, .own_buf = STRATA_COLL_OUT,
                                   .src_off = (uint64_t)(rs ? q : r) * c, .dst_off = rs ? 0 : (uint64_t)r * c,
                                   .reduce = rs, .fused = rs, .handshake = true, .polled = rs, .bytes = c,
                                   .wire_bytes = MAX(1, MIN(wire, src_buf == STRATA_COLL_IN ? b : b * n))};
            coll_add(s, &st);
        }
    }
    return 2;
}

/* NCCL's rings across domains: a rail ring per local rank of a domain
 * (channel c takes ring c mod m: NCCL's channels enter each node at their
 * NIC's GPU), as many as the channels allow; orders[g * n ..]. */
static uint32_t *rail_rings(strata_coll_sched *s, const strata_coll_shape *shape, uint32_t *groups)
{
    *groups = MAX(1u, MIN(shape->channels ? shape->channels : 1, s->domain));
    uint32_t *orders = g_new(uint32_t, (size_t)*groups * s->n);
    for (uint32_t g = 0; g < *groups; g++)
        coll_rail_ring(s, g, NULL, orders + (size_t)g * s->n);
    return orders;
}

/* NCCL's rings on one node whose GPUs the model joins as a full mesh
 * (hw/nccl_mesh.h: its ring graph, shape->tune.rings, a node's ranks
 * each): channel c runs graph channel c mod n_rings (src/graph/connect.cc
 * ncclTopoPostset copies the graph's channels), every channel its even
 * share of the buffer. The rings the channels use, each once where they
 * share the channels alike (12 channels over the 6 directed rings of 4
 * GPUs: 2 each), else one a channel; orders[g * n ..], *groups of them.
 * NULL where the tuning has no such rings (a switch: one ring in rank
 * order). */
static uint32_t *mesh_rings(const strata_coll_sched *s, const strata_coll_shape *shape, uint32_t *groups)
{
    uint32_t n = s->n, nc = shape->channels ? shape->channels : 1, m = shape->tune.ring_len, nr = shape->tune.n_rings;
    if (!shape->tune.rings || nr < 2 || m != n || s->domain != n)
        return NULL;
    uint32_t *orders = g_new(uint32_t, (size_t)nc * n), *count = g_new0(uint32_t, nc), distinct = 0;
    for (uint32_t c = 0; c < nc; c++) {
        const uint8_t *ring = shape->tune.rings + (size_t)(c % nr) * m;
        uint32_t d = 0;
        while (d < distinct && !same_ring(orders + (size_t)d * n, ring, n))
            d++;
        for (uint32_t i = 0; d == distinct && i < n; i++)
            orders[(size_t)d * n + i] = ring[i];
        distinct += d == distinct;
        count[d]++;
    }
    bool even = true;
    for (uint32_t d = 1; d < distinct; d++)
        even = even && count[d] == count[0];
    g_free(count);
    *groups = even ? distinct : nc;
    for (uint32_t c = 0; !even && c < nc; c++)
        for (uint32_t i = 0; i < n; i++)
            orders[(size_t)c * n + i] = shape->tune.rings[(size_t)(c % nr) * m + i];
    return orders;
}

/* NCCL's choice (shape->tune.algo and .proto, channels): ring all-reduce
 * in the protocol's loops, chunks and slices; ring all-gather and
 * reduce-scatter as ring (one round a step) in the protocol's format;
 * across domains, the rings are rail rings; NVLS as nvls(); Tree,
 * NVLS_TREE and PAT as their rows (nccl-tree, nccl-nvls-tree, nccl-pat). */
static uint32_t nccl_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    /* NCCL's other algorithms, each its own row (its file) */
    static const char *const rows[STRATA_NCCL__ALGOS] = {
        [STRATA_NCCL_TREE] = "nccl-tree", [STRATA_NCCL_NVLS_TREE] = "nccl-nvls-tree", [STRATA_NCCL_PAT] = "nccl-pat"};
    const strata_coll_algo *row = strata_coll_algo_find(rows[shape->tune.algo]);
    if (row && strata_coll_algo_serves(row, s->kind))
        return row->ops->schedule(s, shape);
    strata_nccl_proto p = shape->tune.proto;
    uint64_t b = shape->in_bytes;
    if (shape->tune.algo == STRATA_NCCL_NVLS)
        return nvls(s, shape);
    guint from = s->steps->len;
    coll_wire wire = coll_nccl_wire(shape);
    if (s->kind == STRATA_OP_ALL_TO_ALL) { /* grouped p2p (coll_kit_p2p.c) */
        uint32_t rounds = coll_nccl_alltoall(s, shape);
        /* a pair across nodes runs Simple whatever the plan's protocol on
         * the node (no LL buffer on a network p2p connection: nccl_p2p.h
         * strata_nccl_p2p_ll_to), after NCCL's Simple network step (the
         * tune's net_step_s, hw/coll_impl_nccl.c p2p_tune) */
        wire.net_num = wire.net_den = 1;
        coll_wire_apply(s, from, b, &wire);
        return rounds;
    }
    uint64_t chunk = coll_nccl_ring_chunk(p, shape->tune.simple_step_bytes);
    uint32_t slices = coll_nccl_ring_slices(p);
    uint64_t channels = shape->channels ? shape->channels : 1;
    uint32_t rounds, groups, *orders;
    if (shape->tune.algo == STRATA_NCCL_RING && s->domain < s->n) {
        orders = rail_rings(s, shape, &groups);
        /* LL and LL128 all-reduce steps on NCCL's connections (slotted): a
         * rank's step k waits for its receipt of step k-1 and a slot, not for
         * the ring's round (NVIDIA/nccl v2.25.1-1 src/device/all_reduce.h
         * runRing; src/device/prims_ll.h LLGenericOp l. 234-306, readLL's
         * flags and waitSend; prims_ll128.h GenericOp l. 301-325 the same);
         * a step whose chunk is empty is none (prims_ll.h l. 241-249: nelem
         * 0 reads no flag). Simple's stay in lockstep (their
         * rounds' phases keep large rings cheap: docs/clusters.md, "A ring
         * all-reduce's steps across nodes (issue 39, wave 32)"). A step waits
         * for its source's whole round, or under nccl_ring_wait = channel for
         * its own channel's receipt only, as NCCL's kernel (runRing: each
         * channel's primitives on its own ring; docs/clusters.md, wave 33) */
        uint32_t ar_slots = p == STRATA_NCCL_SIMPLE ? 0 : coll_nccl_ring_slots(p);
        rounds = s->kind == STRATA_OP_ALL_REDUCE ? coll_ring_loops_groups(s, b, channels, chunk, shape->tune.ring_grain,
                                                                          slices, orders, groups, ar_slots,
                                                                          shape->tune.ring_own_channel)
                                                 : coll_ring_groups(s, b, orders, groups, coll_nccl_ring_slots(p),
                                                                    wire.net_proxy_s > 0);
        g_free(orders);
    } else if (shape->tune.algo == STRATA_NCCL_RING && (orders = mesh_rings(s, shape, &groups))) {
        /* the mesh's rings in lockstep (unslotted) as the one ring's below, each step paying Simple's
         * sync where the wire has it (not pipelined: coll_ring_loops's steps are not) */
        rounds = s->kind == STRATA_OP_ALL_REDUCE
                     ? coll_ring_loops_groups(s, b, channels, chunk, shape->tune.ring_grain, slices, orders, groups, 0,
                                              false)
                     : coll_ring_groups(s, b, orders, groups, 0, false);
        for (guint i = from; i < s->steps->len; i++)
            g_array_index(s->steps, strata_coll_step, i).pipelined = false;
        g_free(orders);
    } else if (shape->tune.algo == STRATA_NCCL_RING && s->kind == STRATA_OP_ALL_REDUCE) {
        rounds = coll_ring_loops(s, b, channels, chunk, shape->tune.ring_grain, slices, wire.num, wire.den,
                                 wire.handshake);
    } else {
        rounds = coll_rings(s, b, false);
    }
    coll_wire_apply(s, from, b, &wire);
    return rounds;
}

static bool nccl_tune(strata_coll_shape *shape, const strata_hw *hw, GError **err)
{
    return coll_library_is(shape, hw, "nccl", err) && coll_library_tune(shape, hw, 0, err);
}

const strata_coll_algo_ops strata_coll_ops_nccl = {.schedule = nccl_schedule, .tune = nccl_tune};
