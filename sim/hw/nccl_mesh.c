/*
 * nccl_mesh.c: NCCL's ring search on a full mesh of direct NVLink
 * (contract and sources in nccl_mesh.h; the functions below name the
 * NVIDIA/nccl v2.22.3-1 src/graph/search.cc function each follows).
 * Invariant: reads only its arguments; no state outlives a call.
 */
#include "hw/nccl_mesh.h"
#include <math.h>
#include <string.h>

#define MAX_G STRATA_NCCL_MESH_MAX_GPUS
#define MAX_C STRATA_NCCL_MESH_MAX_CHANNELS
/* search.cc l. 310-314 */
#define GLOBAL_TIMEOUT (1 << 19)
#define TIMEOUT (1 << 14)
#define TIMEOUT_SAME (1 << 8)

enum { ORDER_NONE, ORDER_PCI, ORDER_REPLAY }; /* FORCED_ORDER_PCI, FORCED_ORDER_REPLAY */

/* The part of ncclTopoGraph a ring search on GPUs touches. */
typedef struct graph {
    uint32_t channels, min_channels, max_channels;
    float bw;       /* bwIntra (= bwInter: no NIC) */
    int same;       /* sameChannels */
    int hops;       /* nHops */
    uint8_t intra[MAX_C * MAX_G];
} graph;

/* The system's side: the links' bandwidth left, the GPUs' used flags, the
 * search's time. */
typedef struct search {
    uint32_t n;
    float link[MAX_G][MAX_G]; /* GB/s left on the directed link i -> j */
    uint64_t used[MAX_G];     /* bit c: in channel c's ring so far */
    int time;
} search;

/* ncclTopoFollowPath on a one-link path (followPath l. 79-113): take
 * bw x mult from link a -> b, false (nothing taken) where it has less;
 * from no GPU (a < 0, the search's start) always. */
static bool follow(search *S, graph *G, int a, uint32_t b, float mult)
{
    if (a < 0)
        return true;
    float bw = G->bw * mult, *l = &S->link[a][b];
    if (*l < bw)
        return false;
    *l = roundf((*l - bw) * 1000) / 1000; /* SUB_ROUND */
    G->hops += (int)mult;
    return true;
}

static void rec(search *S, graph *G, graph *save);
static void rec_gpu(search *S, graph *G, graph *save, uint32_t gpu, uint32_t step, int order);

/* ncclTopoSearchTryGpu */
static void try_gpu(search *S, graph *G, graph *save, uint32_t step, int order, int from, uint32_t g)
{
    uint64_t flag = 1ull << G->channels;
    if (!follow(S, G, from, g, 1))
        return;
    S->used[g] ^= flag;
    rec_gpu(S, G, save, g, step, order);
    S->used[g] ^= flag;
    follow(S, G, from, g, -1);
}

/* ncclTopoCompareGraphs (l. 416-437): more channels x speed, else fewer hops */
static bool better(const graph *G, const graph *ref)
{
    if (G->channels < G->min_channels)
        return false;
    float a = (float)G->channels * G->bw, b = (float)ref->channels * ref->bw;
    return a > b || (a == b && G->hops < ref->hops);
}

/* ncclTopoSearchRecGpu, the ring pattern without NICs (backToFirstRank =
 * n - 1, backToNet -1) */
static void rec_gpu(search *S, graph *G, graph *save, uint32_t gpu, uint32_t step, int order)
{
    if (S->time <= 0)
        return;
    S->time--;
    uint32_t n = S->n;
    if (step == n) {
        G->channels++;
        if (better(G, save)) {
            *save = *G;
            if (G->channels == G->max_channels)
                S->time = -1;
        }
        if (G->channels < G->max_channels)
            rec(S, G, save);
        G->channels--;
        return;
    }
    G->intra[G->channels * n + step] = (uint8_t)gpu;
    if (step + 1 < n) {
        uint32_t next[MAX_G], count = 0;
        uint64_t flag = 1ull << G->channels;
        if (order == ORDER_PCI)
            next[count++] = step + 1;
        else if (order == ORDER_REPLAY)
            next[count++] = G->intra[(G->channels - 1) * n + step + 1];
        else /* ncclTopoSearchNextGpuSort: every score ties on a uniform mesh but the start index */
            for (uint32_t i = 1; i < n; i++)
                if (!(S->used[(gpu + i) % n] & flag))
                    next[count++] = (gpu + i) % n;
        for (uint32_t i = 0; i < count; i++)
            try_gpu(S, G, save, step + 1, order, (int)gpu, next[i]);
        return;
    }
    uint32_t first = G->intra[G->channels * n]; /* back to the first rank */
    if (follow(S, G, (int)gpu, first, 1)) {
        rec_gpu(S, G, save, first, n, order);
        follow(S, G, (int)gpu, first, -1);
    }
}

/* ncclTopoSearchRec, intra-node: PCI order first, else replay the last
 * channel; then, unless sameChannels, every start */
static void rec(search *S, graph *G, graph *save)
{
    if (G->channels == 0)
        try_gpu(S, G, save, 0, ORDER_PCI, -1, 0);
    else
        try_gpu(S, G, save, 0, ORDER_REPLAY, -1, G->intra[(G->channels - 1) * S->n]);
    for (uint32_t g = 0; (G->same == 0 || G->channels == 0) && g < S->n; g++)
        try_gpu(S, G, save, 0, ORDER_NONE, -1, g);
}

/* ncclTopoDupChannels (l. 894-907) */
static void dup_channels(graph *G, uint32_t n, uint32_t cc)
{
    if (G->channels == 0 || G->bw < 25.0f || (cc > 80 && G->bw < 50.0f && G->channels > 4))
        return;
    uint32_t dup = G->channels * 2 < G->max_channels ? G->channels * 2 : G->max_channels;
    memcpy(G->intra + G->channels * n, G->intra, (size_t)(dup - G->channels) * n);
    G->bw /= (float)((dup + G->channels - 1) / G->channels);
    G->channels = dup;
}

/* speedArrayIntra, sm90SpeedArrayIntra (search.cc l. 909-916) */
static const float speeds_pre90[] = {40.0f, 30.0f, 20.0f, 18.0f, 15.0f, 12.0f, 10.0f, 9.0f, 7.0f, 6.0f, 5.0f, 4.0f,
                                     3.0f};
static const float speeds_sm90[] = {60.0f, 50.0f, 40.0f, 30.0f, 24.0f, 20.0f, 15.0f, 12.0f, 11.0f, 6.0f, 3.0f};

/* One search at tmp's speed (the `search:` label of ncclTopoCompute). */
static void run(search *S, graph *tmp, graph *best, int *global)
{
    S->time = tmp->same ? TIMEOUT_SAME : TIMEOUT;
    tmp->channels = 0;
    *global -= S->time;
    rec(S, tmp, best);
}

bool strata_nccl_mesh_rings(uint32_t gpus, uint32_t nvlinks, float link_gbs, uint32_t cc,
                            strata_nccl_mesh_graph *out)
{
    memset(out, 0, sizeof(*out));
    /* Blackwell (cc 100) searches with its own sm100SpeedArrayIntra from v2.25.1-1, not ported here; its
     * boards have NVSwitches, so no mesh to lay rings over. */
    if (gpus < 2 || gpus > MAX_G || nvlinks == 0 || cc >= 100)
        return false;
    search S = {.n = gpus, .time = 0};
    float pair = (float)nvlinks * link_gbs;
    for (uint32_t i = 0; i < gpus; i++)
        for (uint32_t j = 0; j < gpus; j++)
            S.link[i][j] = i == j ? 0 : pair;
    const float max_bw = pair, total_bw = (float)(gpus - 1) * pair; /* getMaxBw, getTotalBw */
    const float *sp = cc >= 90 ? speeds_sm90 : speeds_pre90;
    const int ns = cc >= 90 ? (int)(sizeof(speeds_sm90) / sizeof(float)) : (int)(sizeof(speeds_pre90) / sizeof(float));
    graph best = {.min_channels = 1, .max_channels = MAX_C, .same = 1}, tmp;
    int idx = 0, global = GLOBAL_TIMEOUT, pass = 1;
    while ((sp[idx] > max_bw || sp[idx] * (float)best.min_channels > total_bw) && idx < ns - 1)
        idx++;
    tmp = best;
    tmp.bw = sp[idx];
    for (;;) {
        run(&S, &tmp, &best, &global);
        bool done = S.time == -1 || (float)best.channels * best.bw >= total_bw;
        if (!done && pass == 1) {
            if (tmp.same == 1) { /* try different channels (an Intel or non-x86 host: NCCL's check on AMD
                                  * CPUs is for paths through the CPU, not NVLink) */
                tmp.same = 0;
                continue;
            }
            tmp.same = 1;
            global += S.time;
            /* raising typeIntra finds nothing new where every path is one NVLink (and a
             * channel always fits: the first speed is at most a link's); no NIC, no crossNic */
            if (!(global < 0 && best.channels)) {
                if (idx < ns - 1 && (best.channels == 0 || sp[idx + 1] / best.bw > .49)) {
                    tmp.bw = sp[++idx];
                    continue;
                }
                for (idx = 0; sp[idx] > max_bw && idx < ns - 1;)
                    idx++;
                tmp.bw = sp[idx];
            }
        }
        if (pass == 1) { /* done: */
            S.time = -1;
            dup_channels(&best, gpus, cc);
            tmp = best;
            for (idx = 0; sp[idx] > best.bw && idx < ns - 1;)
                idx++;
            tmp.bw = sp[idx];
            tmp.min_channels = best.channels;
            pass = 2;
        }
        if (S.time != 0 && idx > 0) { /* pass 2: a higher speed for the ring */
            tmp.bw = sp[--idx];
            continue;
        }
        break;
    }
    out->gpus = gpus;
    out->channels = best.channels;
    out->bw = best.bw;
    memcpy(out->rings, best.intra, (size_t)best.channels * gpus);
    return best.channels > 0;
}
