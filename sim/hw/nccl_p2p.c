/*
 * nccl_p2p.c: NCCL's point-to-point plan (contract in nccl_p2p.h). Every
 * rule cites NVIDIA/nccl v2.27.7-1, the release of the p5 all-to-all runs
 * (validation/held-out/clusters-held-out-8.ini).
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
/* enqueue.cc NCCL_P2P_LL_THRESHOLD's default */
#define LL_THRESHOLD 16384u

static uint32_t pow2_up(uint32_t x)
{
    uint32_t p = 1;
    while (p < x)
        p *= 2;
    return p;
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
    /* computeBuffSizes: the net chunk across nodes, NVLink's on one node
     * (isAllNvlink: strata's nccl models join a node's GPUs by NVLink),
     * at most a step of the Simple buffer */
    uint64_t buff = c->simple_buff_bytes ? c->simple_buff_bytes : SIMPLE_BUFF;
    out->step_bytes = MIN(nodes > 1 ? P2P_NET_CHUNK : P2P_NVL_CHUNK, buff / STEPS);
    out->ll_step_bytes = LL_BUFF / STEPS;
}

void strata_nccl_p2p_untuned(uint32_t ranks, uint32_t local_ranks, strata_nccl_p2p *out)
{
    *out = (strata_nccl_p2p){.ranks = ranks, .nodes = ranks / local_ranks, .local_ranks = local_ranks,
                             .p2p_channels = MAX_P2P_CHANNELS, .per_peer = 1, .min_channels = 1,
                             .step_bytes = P2P_NVL_CHUNK, .ll_step_bytes = LL_BUFF / STEPS};
}

bool strata_nccl_p2p_ll(const strata_nccl_p2p *p, uint64_t bytes)
{
    return bytes <= (uint64_t)p->per_peer * LL_THRESHOLD;
}

uint32_t strata_nccl_p2p_parts(const strata_nccl_p2p *p, uint64_t bytes)
{
    /* addP2pToPlan: Simple's step is p2pChunkSize, LL's a step of its
     * buffer; parts of at least half a step across nodes (an eighth on one
     * node) up to nChannelsMin, then doubled while a part is above a step
     * (32 steps on one node), up to nChannelsMax (p2pnChannelsPerPeer) */
    uint64_t step = strata_nccl_p2p_ll(p, bytes) ? p->ll_step_bytes : p->step_bytes;
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
    uint32_t *nd = g_new(uint32_t, p->nodes), *ld = g_new(uint32_t, p->local_ranks);
    walk(p->nodes, nd);
    walk(p->local_ranks, ld);
    for (uint32_t a = 0, k = 0; a < p->nodes; a++)
        for (uint32_t b = 0; b < p->local_ranks; b++, k++) {
            node_delta[k] = nd[a];
            local_delta[k] = ld[b];
        }
    g_free(nd);
    g_free(ld);
}

uint32_t strata_nccl_p2p_peer(const strata_nccl_p2p *p, uint32_t rank, uint32_t node_delta, uint32_t local_delta)
{
    uint32_t m = p->local_ranks, node = rank / m, local = rank % m;
    return (node + node_delta) % p->nodes * m + (local + local_delta) % m;
}

uint32_t strata_nccl_p2p_channel(const strata_nccl_p2p *p, uint32_t k, uint32_t i)
{
    /* ncclP2pChannelBaseForRound: across nodes, a channel base per node
     * round and per NCCL_MAX_DEV_WORK_P2P_PER_BATCH local rounds; on one
     * node, the round */
    uint32_t m = p->local_ranks, base = k;
    if (p->nodes > 1)
        base = k / m * ((m + STRATA_NCCL_P2P_PER_BATCH - 1) / STRATA_NCCL_P2P_PER_BATCH) +
               k % m / STRATA_NCCL_P2P_PER_BATCH;
    base &= 0xff;
    /* ncclP2pChannelForPart: base + part's bits reversed over log2(p2pnChannels) */
    uint32_t bits = (uint32_t)strata_nccl_log2i(p->p2p_channels), rev = 0; /* a power of two */
    for (uint32_t b = 0; b < bits; b++)
        if (i & (1u << b))
            rev |= 1u << (bits - 1 - b);
    return (base + rev) & (p->p2p_channels - 1);
}
