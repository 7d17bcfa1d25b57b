/*
 * nccl_p2p.c: NCCL's point-to-point plan (contract in nccl_p2p.h). Every
 * rule cites NVIDIA/nccl v2.27.7-1, the release of the p5 all-to-all runs
 * (validation/held-out/clusters-held-out-8.ini); RCCL's rules (a plan's
 * `rccl`) cite ROCm/rccl @0cbce2a (2.21.5), file and line, and NCCL
 * v2.19.3-1's (STRATA_NCCL_P2P_219, the same chunked plan: `chunked`)
 * its own lines where they differ.
 */
#include "hw/nccl_p2p.h"
#include <glib.h>

/* MAXCHANNELS (src/include/device.h): NCCL_MAX_P2P_NCHANNELS' default
 * (graph/paths.cc) */
#define MAX_P2P_CHANNELS 64u
/* init.cc: NCCL_P2P_NET_CHUNKSIZE (1 << 17), NCCL_P2P_NVL_CHUNKSIZE
 * (1 << 19); DEFAULT_BUFFSIZE (1 << 22); DEFAULT_LL_BUFFSIZE,
 * NCCL_LL_LINES_PER_THREAD (8) x NCCL_LL_MAX_NTHREADS (512) x NCCL_STEPS
 * (8) x 16-byte lines */
#define P2P_NET_CHUNK (1ull << 17)
#define P2P_NVL_CHUNK (1ull << 19)
#define SIMPLE_BUFF (1ull << 22)
#define LL_BUFF (8ull * 512 * 8 * 16)
#define STEPS 8u
/* enqueue.cc NCCL_P2P_LL_THRESHOLD's default (RCCL's: enqueue.cc l. 567) */
#define LL_THRESHOLD 16384u
/* RCCL @0cbce2a: src/include/device.h l. 65-66 MAXCHANNELS 128 (also
 * NCCL_MAX_P2P_NCHANNELS' default, graph/paths.cc l. 870), CHANNEL_LIMIT
 * 16 (p2pnChannels at most 4 x that, paths.cc l. 913); graph/connect.cc
 * l. 629-634: a gfx94x comm's channels at most MAXCHANNELS on one node
 * (MI300X's 304 CUs are none of the 80, 20, 38 it singles out), 64 across
 * nodes, the graph's doubled while within that (l. 660) */
#define RCCL_MAX_CHANNELS 128u
#define RCCL_MAX_P2P 64u
#define RCCL_NET_MAX_CHANNELS 64u
/* paths.cc l. 844: channels a peer on the node, per xGMI link of the path:
 * 4 on gfx94x (and gfx950 from 2.26: nccl_p2p.h), else 2 */
#define RCCL_GFX94_LOCAL 4u
#define RCCL_LOCAL 2u

static uint32_t pow2_up(uint32_t x)
{
    uint32_t p = 1;
    while (p < x)
        p *= 2;
    return p;
}

static uint32_t gcd(uint32_t a, uint32_t b)
{
    while (b) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

void strata_nccl_p2p_init(const strata_nccl_comm *c, uint32_t local_channels, strata_nccl_p2p *out)
{
    /* nodes x local_ranks = ranks (nccl_p2p.h): nodes that do not divide
     * the ranks are read as one (coll_sched.c's domain rule), or the
     * schedule's walk would leave rounds past nodes x (ranks / nodes)
     * without a delta */
    uint32_t nodes = c->nodes > 1 && c->ranks % c->nodes == 0 ? c->nodes : 1;
    *out = (strata_nccl_p2p){.ranks = c->ranks, .nodes = nodes, .local_ranks = c->ranks / nodes};
    /* ncclTopoComputeP2pChannels: min(comm->nChannels, NCCL_MAX_P2P_NCHANNELS),
     * at least NCCL_MIN_P2P_NCHANNELS (1); ncclTopoGetNchannels runs with
     * this value, before the power of two below */
    uint32_t p2p = MAX(1u, MIN(strata_nccl_comm_channels(c), MAX_P2P_CHANNELS));
    uint32_t min_channels = p2p;
    if (out->local_ranks > 1) /* a peer on the node: 2 x its NVLinks (or 2) */
        min_channels = MIN(min_channels, MAX(1u, local_channels));
    if (nodes > 1) {
        /* a peer across the network, NCCL_NCHANNELS_PER_NET_PEER unset: 2,
         * halved while 2 x nRanks > 4 x p2pnChannels ("Avoid overloading
         * channels with 8+ operations"), then at least getLocalNetCountByBw,
         * which counts NICs against the GPU's link to a CPU: behind a PCIe
         * switch (DGX and HGX H100, p5) the GPU has none, and the count is 0 */
        uint32_t net = 2;
        while ((uint64_t)net * c->ranks > (uint64_t)p2p * 4 && net > 1)
            net /= 2;
        min_channels = MIN(min_channels, net);
    }
    out->per_peer = pow2_up(min_channels);
    out->p2p_channels = pow2_up(p2p);
    /* ncclDevMaxChannelsForArgsBytes(NCCL_WORK_ARGS_BYTES = INT64_MAX) binds
     * no further */
    out->per_peer = MIN(out->per_peer, out->p2p_channels);
    /* scheduleP2pTasksToPlan: "Try to use all channels, but one channel per
     * operation" */
    out->min_channels = out->per_peer;
    while ((uint64_t)out->min_channels * c->ranks > out->p2p_channels && out->min_channels > 1)
        out->min_channels /= 2;
    /* v2.19.3-1 enqueue.cc l. 626-627: on one node, nChannelsMax halved
     * while x nRanks > 4 x p2pnChannels. Its plan is modelled on one node
     * only (nccl_p2p.h; coll_impl_nccl.c nccl_tune refuses 2.19 across
     * nodes), where its nChannelsMin (l. 623-625) is the one above */
    if (c->version && c->version->p2p_rules == STRATA_NCCL_P2P_219 && nodes == 1) {
        uint32_t max = out->per_peer;
        while ((uint64_t)max * c->ranks > (uint64_t)out->p2p_channels * 4 && max > 1)
            max /= 2;
        out->max_channels = max < out->per_peer ? max : 0;
    }
    /* computeBuffSizes: the net chunk across nodes, NVLink's on one node
     * (isAllNvlink: strata's nccl models join a node's GPUs by NVLink),
     * at most a step of the Simple buffer */
    uint64_t buff = c->simple_buff_bytes ? c->simple_buff_bytes : SIMPLE_BUFF;
    uint64_t net = c->p2p_net_chunk_bytes ? c->p2p_net_chunk_bytes : P2P_NET_CHUNK; /* init.cc l. 625, 637 */
    out->step_bytes = MIN(nodes > 1 ? net : P2P_NVL_CHUNK, buff / STEPS);
    out->ll_step_bytes = LL_BUFF / STEPS;
    /* v2.28.7-1 on: init.cc ncclP2pSchedule's group, NCCL_P2P_SCHEDULE_GROUP_SIZE
     * (NCCL_MAX_DEV_WORK_P2P_PER_BATCH, 8) or, from v2.29.7-1 on one node,
     * maxLocalRanks; gcd with the node's ranks where they are not a multiple */
    out->nccl_rules = c->version ? c->version->p2p_rules : STRATA_NCCL_P2P_227;
    out->group = out->local_ranks;
    if (out->nccl_rules >= STRATA_NCCL_P2P_228) {
        uint32_t g = out->nccl_rules >= STRATA_NCCL_P2P_229 && nodes == 1 ? out->local_ranks : STRATA_NCCL_P2P_PER_BATCH;
        if (out->local_ranks % g != 0 || out->local_ranks < g)
            g = gcd(g, out->local_ranks);
        out->group = g;
    }
}

/* comm->p2pSchedGroupSize: 2.27's node is its group. */
static uint32_t group_of(const strata_nccl_p2p *p)
{
    return p->group ? p->group : p->local_ranks;
}

void strata_rccl_p2p_init(uint32_t ranks, uint32_t nodes, uint32_t graph_channels, uint32_t ring_copies, bool xgmi4,
                          strata_nccl_p2p *out)
{
    nodes = nodes > 1 && ranks % nodes == 0 ? nodes : 1;
    *out = (strata_nccl_p2p){.ranks = ranks, .nodes = nodes, .local_ranks = ranks / nodes, .rccl = true};
    uint32_t max_ch = nodes > 1 ? RCCL_NET_MAX_CHANNELS : RCCL_MAX_CHANNELS;
    /* comm->nChannels: the graph's rings times init.cc's nc (ring_copies: 2, or 4 on gfx950, as rccl_tuning.c's
     * collectives count them) where that fits, else doubled where that fits, else the graph's */
    uint64_t copies = (uint64_t)(ring_copies ? ring_copies : 2u) * graph_channels;
    uint32_t comm_ch = copies <= max_ch ? (uint32_t)copies
                       : MIN(max_ch, graph_channels <= max_ch / 2 ? 2 * graph_channels : graph_channels);
    /* paths.cc ncclTopoComputeP2pChannels l. 880-913: min(nChannels,
     * MAXCHANNELS), the least of its peers' counts: a peer on the node
     * 4 (gfx94x) or 2 x max(1, path bw / xGMI speed), one link; across
     * nodes (l. 848-862) 2, halved while 2 x nRanks > 4 x p2pnChannels,
     * at least getLocalNetCountByBw (1 NIC a GPU here) */
    uint32_t p2p = MAX(1u, MIN(comm_ch, RCCL_MAX_CHANNELS)), min_channels = p2p;
    if (out->local_ranks > 1)
        min_channels = MIN(min_channels, xgmi4 ? RCCL_GFX94_LOCAL : RCCL_LOCAL);
    if (nodes > 1) {
        uint32_t net = 2;
        while ((uint64_t)net * ranks > (uint64_t)p2p * 4 && net > 1)
            net /= 2;
        min_channels = MIN(min_channels, net);
    }
    /* l. 910-913: nextPow2, doubled on one gfx94x node ("Doubling P2P
     * channels per peer on single node"); p2pnChannels nextPow2, at most
     * 4 x CHANNEL_LIMIT */
    out->per_peer = pow2_up(min_channels) * (nodes == 1 && xgmi4 ? 2 : 1);
    out->p2p_channels = MIN(pow2_up(p2p), RCCL_MAX_P2P);
    out->per_peer = MIN(out->per_peer, out->p2p_channels);
    /* enqueue.cc l. 972-975: nChannelsMin as NCCL's */
    out->min_channels = out->per_peer;
    while ((uint64_t)out->min_channels * ranks > out->p2p_channels && out->min_channels > 1)
        out->min_channels /= 2;
    /* init.cc l. 844-864 computeBuffSizes: P2P_NET_CHUNKSIZE 128 KiB across
     * nodes, P2P_NVL_CHUNKSIZE 512 KiB where every path is NVL (RCCL's xGMI
     * links are its NVL type), at most DEFAULT_BUFFSIZE (4 MiB) / NCCL_STEPS */
    out->step_bytes = MIN(nodes > 1 ? P2P_NET_CHUNK : P2P_NVL_CHUNK, SIMPLE_BUFF / STEPS);
    /* its LL buffer: NCCL_LL_LINES_PER_THREAD 8 x NCCL_LL_MAX_NTHREADS 256
     * (device.h l. 68-71) x 8 steps x 16 bytes, a step of it */
    out->ll_step_bytes = 8ull * 256 * 16;
}

/* Whether the plan cuts sends in chunks of calcP2pChunkSize: RCCL's and
 * NCCL v2.19's (nccl_p2p.h). */
static bool chunked(const strata_nccl_p2p *p)
{
    return p->rccl || p->nccl_rules == STRATA_NCCL_P2P_219;
}

/* RCCL's calcP2pChunkSize (enqueue.cc l. 941-949) with scheduleP2pTasksToPlan's
 * sizes (l. 1004-1005): at least minSize a channel over nChannelsMin,
 * channels doubled while above maxSize up to p2pnChannelsPerPeer, aligned
 * up to minSize. NCCL v2.19.3-1's the same on one node (enqueue.cc
 * l. 592-600, 658-661), up to nChannelsMax (max_channels). */
static uint64_t rccl_chunk(const strata_nccl_p2p *p, uint64_t bytes)
{
    uint64_t step = p->step_bytes, min_part = p->nodes > 1 ? step / 2 : step / 8;
    uint64_t max_part = p->nodes > 1 ? step : step * 32;
    uint32_t n = p->min_channels, max_ch = p->max_channels ? p->max_channels : p->per_peer;
    uint64_t size = MAX(min_part, (bytes + n - 1) / n);
    while (size > max_part && n <= max_ch / 2) {
        n *= 2;
        size = (bytes + n - 1) / n;
    }
    return (size + min_part - 1) / min_part * min_part;
}

void strata_nccl_p2p_untuned(uint32_t ranks, uint32_t local_ranks, strata_nccl_p2p *out)
{
    *out = (strata_nccl_p2p){.ranks = ranks, .nodes = ranks / local_ranks, .local_ranks = local_ranks,
                             .p2p_channels = MAX_P2P_CHANNELS, .per_peer = 1, .min_channels = 1,
                             .step_bytes = P2P_NVL_CHUNK, .ll_step_bytes = LL_BUFF / STEPS};
}

bool strata_nccl_p2p_ll(const strata_nccl_p2p *p, uint64_t bytes)
{
    /* RCCL's addP2pToPlan (enqueue.cc l. 590): LL where the part (its
     * first, the others' size) is at most the threshold */
    if (chunked(p)) /* v2.19.3-1 enqueue.cc l. 307: the same rule */
        return MIN(bytes, rccl_chunk(p, bytes)) <= LL_THRESHOLD;
    if (p->nccl_rules >= STRATA_NCCL_P2P_229) /* parts on Simple's step, LL by them */
        return bytes <= (uint64_t)strata_nccl_p2p_parts(p, bytes) * LL_THRESHOLD;
    return bytes <= (uint64_t)p->per_peer * LL_THRESHOLD;
}

bool strata_nccl_p2p_ll_to(const strata_nccl_p2p *p, uint64_t bytes, bool net)
{
    return !net && strata_nccl_p2p_ll(p, bytes);
}

uint32_t strata_nccl_p2p_parts(const strata_nccl_p2p *p, uint64_t bytes)
{
    return strata_nccl_p2p_parts_to(p, bytes, false);
}

uint32_t strata_nccl_p2p_parts_to(const strata_nccl_p2p *p, uint64_t bytes, bool net)
{
    if (chunked(p)) { /* scheduleP2pTasksToPlan's do-while: chunks of calcP2pChunkSize */
        uint64_t chunk = rccl_chunk(p, bytes);
        return (uint32_t)MAX(1u, (bytes + chunk - 1) / chunk);
    }
    /* addP2pToPlan: Simple's step is p2pChunkSize, LL's a step of its
     * buffer; parts of at least half a step across nodes (an eighth on one
     * node) up to nChannelsMin, then doubled while a part is above a step
     * (32 steps on one node), up to nChannelsMax (p2pnChannelsPerPeer) */
    bool ll = p->nccl_rules < STRATA_NCCL_P2P_229 && strata_nccl_p2p_ll_to(p, bytes, net);
    uint64_t step = ll ? p->ll_step_bytes : p->step_bytes;
    uint64_t min_part = p->nodes > 1 ? step / 2 : step / 8, max_part = p->nodes > 1 ? step : step * 32;
    uint32_t n = (uint32_t)MIN((uint64_t)p->min_channels, (bytes + min_part - 1) / min_part);
    n = MAX(1u, n);
    uint64_t part = MAX(min_part, (bytes + n - 1) / n);
    while (part > max_part && n <= p->per_peer / 2) {
        n *= 2;
        part = (bytes + n - 1) / n;
    }
    return n;
}

void strata_nccl_p2p_part(uint32_t parts, uint32_t i, uint64_t bytes, uint64_t *beg, uint64_t *end)
{
    uint64_t align = 4u << 10, part = (bytes + parts - 1) / parts;
    part = (part + align - 1) / align * align;
    *beg = MIN((uint64_t)i * part, bytes);
    *end = MIN((uint64_t)(i + 1) * part, bytes);
}

void strata_nccl_p2p_bounds(const strata_nccl_p2p *p, uint32_t parts, uint32_t i, uint64_t bytes, uint64_t *beg,
                            uint64_t *end)
{
    if (!chunked(p)) {
        strata_nccl_p2p_part(parts, i, bytes, beg, end);
        return;
    }
    uint64_t chunk = rccl_chunk(p, bytes);
    *beg = MIN((uint64_t)i * chunk, bytes);
    *end = MIN((uint64_t)(i + 1) * chunk, bytes);
}

uint32_t strata_nccl_p2p_per_batch(const strata_nccl_p2p *p)
{
    /* RCCL: device.h l. 313 NCCL_MAX_WORK_ELEMENTS_P2P 2, and enqueue.cc
     * l. 1024 starts a new work every round (i % 1 == 0) */
    return p->rccl ? 1u : STRATA_NCCL_P2P_PER_BATCH;
}

uint32_t strata_nccl_p2p_self_parts(const strata_nccl_p2p *p, uint32_t parts)
{
    return chunked(p) ? parts : 1u; /* v2.19.3-1: a chunked send to itself (sendrecv.h runSend) */
}

/* RCCL's node deltas (init.cc l. 1754-1779): for d = 0 .. nodes / 4, d,
 * -d, nodes / 2 - d, -(nodes / 2 - d), each once; entry a of them. */
static uint32_t rccl_node_delta(uint32_t n, uint32_t a, uint32_t *out)
{
    uint32_t count = 0, found = 0;
    for (uint32_t d = 0; d <= n / 4 && count < n; d++) {
        uint32_t dl[4] = {d, (n - d) % n, n / 2 - d, (n - (n / 2 - d)) % n};
        for (uint32_t idx = 0; idx < 4 && count < n;) {
            if (out)
                out[count] = dl[idx];
            if (count++ == a)
                found = dl[idx];
            idx++;
            idx += idx == 1 && dl[1] == dl[0];
            idx += idx == 2 && dl[2] == dl[0];
            idx += idx == 3 && dl[3] == dl[2];
            idx += idx == 3 && dl[3] == dl[1];
        }
    }
    return found;
}

/* The quadratic walk (x^2 + x) / 2 mod N over N = pow2Up(n), deltas >= n
 * skipped: 0, 1, 3, 6, 10, ... */
static uint32_t walk(uint32_t n, uint32_t *out)
{
    uint32_t np2 = pow2_up(n), delta = 0, count = 0;
    for (uint32_t r = 0; r < np2;) {
        if (delta < n)
            out[count++] = delta;
        r++;
        delta = (delta + r) & (np2 - 1);
    }
    return count;
}

void strata_nccl_p2p_deltas(const strata_nccl_p2p *p, uint32_t *node_delta, uint32_t *local_delta)
{
    uint32_t g = group_of(p), groups = p->ranks / g;
    uint32_t *nd = g_new(uint32_t, groups), *ld = g_new(uint32_t, g);
    if (chunked(p)) { /* local steps in rank order (init.cc l. 1760-1767; v2.19.3-1 l. 1166-1193) */
        rccl_node_delta(p->nodes, 0, nd);
        for (uint32_t b = 0; b < g; b++)
            ld[b] = b;
    } else if (p->nccl_rules >= STRATA_NCCL_P2P_228) { /* groups walked, local deltas in order */
        walk(groups, nd);
        for (uint32_t b = 0; b < g; b++)
            ld[b] = b;
    } else {
        walk(p->nodes, nd);
        walk(p->local_ranks, ld);
    }
    for (uint32_t a = 0, k = 0; a < groups; a++)
        for (uint32_t b = 0; b < g; b++, k++) {
            node_delta[k] = nd[a];
            local_delta[k] = ld[b];
        }
    g_free(nd);
    g_free(ld);
}

uint32_t strata_nccl_p2p_peer(const strata_nccl_p2p *p, uint32_t rank, uint32_t node_delta, uint32_t local_delta)
{
    uint32_t m = group_of(p), group = rank / m, local = rank % m;
    return (group + node_delta) % (p->ranks / m) * m + (local + local_delta) % m;
}

/* mirrorBits (graph/topo.h l. 282-286): val's bits reversed over log2(pow2). */
static uint32_t mirror(uint32_t val, uint32_t pow2)
{
    uint32_t bits = (uint32_t)strata_nccl_log2i(pow2), rev = 0;
    for (uint32_t b = 0; b < bits; b++)
        if (val & (1u << b))
            rev |= 1u << (bits - 1 - b);
    return rev;
}

uint32_t strata_nccl_p2p_channel(const strata_nccl_p2p *p, uint32_t k, uint32_t i)
{
    if (chunked(p)) {
        /* channel.h l. 14-44: base = node delta + local step (p2pGroupSize
         * 1) across nodes, the local step on one; channel =
         * (p2pChannels[base % p2pnChannels] + part) % p2pnChannels,
         * p2pChannels[c] = mirrorBits(c) (paths.cc l. 921-924). NCCL
         * v2.19.3-1 channel.h l. 15-45 the same on one node (its plan is
         * modelled there only: nccl_p2p.h) */
        uint32_t m = p->local_ranks, base = k % m;
        if (p->nodes > 1)
            base += rccl_node_delta(p->nodes, k / m, NULL);
        return (mirror(base % p->p2p_channels, p->p2p_channels) + i) % p->p2p_channels;
    }
    /* ncclP2pChannelBaseForRound: across nodes, a channel base per node
     * (from v2.28.7-1 group) round and per NCCL_MAX_DEV_WORK_P2P_PER_BATCH
     * local rounds; on one node, the round */
    uint32_t m = group_of(p), base = k;
    if (p->nodes > 1)
        base = k / m * ((m + STRATA_NCCL_P2P_PER_BATCH - 1) / STRATA_NCCL_P2P_PER_BATCH) +
               k % m / STRATA_NCCL_P2P_PER_BATCH;
    /* v2.28 on: the base's bits reversed over log2(p2pnChannels)
     * (reverseBits, bitops.h: the top bits dropped), the part added
     * (device.h ncclP2pChannelForPart) */
    if (p->nccl_rules >= STRATA_NCCL_P2P_228)
        return (mirror(base, p->p2p_channels) + i) & (p->p2p_channels - 1);
    base &= 0xff;
    /* to v2.27: base + part's bits reversed over log2(p2pnChannels) */
    return (base + mirror(i, p->p2p_channels)) & (p->p2p_channels - 1);
}

bool strata_nccl_p2p_rank_net(const strata_nccl_p2p *p, uint32_t rank, uint32_t node_delta, uint32_t local_delta)
{
    return strata_nccl_p2p_peer(p, rank, node_delta, local_delta) / p->local_ranks != rank / p->local_ranks;
}

uint32_t strata_nccl_p2p_used_channels(const strata_nccl_p2p *p, uint64_t bytes)
{
    if (bytes == 0)
        return 0;
    uint32_t parts[2] = {strata_nccl_p2p_parts_to(p, bytes, false), strata_nccl_p2p_parts_to(p, bytes, true)};
    uint32_t used = 0, *nd = g_new(uint32_t, p->ranks), *ld = g_new(uint32_t, p->ranks);
    strata_nccl_p2p_deltas(p, nd, ld);
    bool *on = g_new0(bool, p->p2p_channels);
    for (uint32_t k = 0; k < p->ranks; k++) {
        uint32_t np = parts[strata_nccl_p2p_rank_net(p, 0, nd[k], ld[k])]; /* the channel mask of rank 0's plan */
        for (uint32_t i = 0; i < (k == 0 ? strata_nccl_p2p_self_parts(p, np) : np); i++) {
            uint32_t c = strata_nccl_p2p_channel(p, k, i);
            used += !on[c];
            on[c] = true;
        }
    }
    g_free(on);
    g_free(nd);
    g_free(ld);
    return used;
}
