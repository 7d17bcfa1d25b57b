/*
 * nccl_tuning.c: NCCL's tuning model on one node (contract in
 * nccl_tuning.h). Every constant is NCCL's, from NVIDIA/nccl @5067397:
 * the tables from src/graph/tuning.cc (ncclTunerConstantsDefaults), the
 * thread counts from src/include/device.h, the thresholds from
 * src/include/comm.h, the NVLS channel counts from src/transport/nvls.cc.
 * Invariant: the functions read only their arguments.
 */
#include "hw/nccl_tuning.h"
#include <math.h>
#include <string.h>
#include <glib.h>

/* tuning.cc baseLatencies (us), {LL, LL128, Simple}: Tree, Ring, NVLS. */
static const double base_lat[STRATA_NCCL__ALGOS][STRATA_NCCL__PROTOS] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}};
/* tuning.cc hwLatencies[NCCL_HW_NVLINK] (us per step): Tree, Ring, NVLS. */
static const double nvlink_lat[STRATA_NCCL__ALGOS][STRATA_NCCL__PROTOS] = {
    {0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 25}};
/* tuning.cc, the N1 (one node) column of each per-architecture table:
 * llMaxBws, perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws
 * (GB/s), and nvlsEfficiency; Volta, Ampere, Hopper, Blackwell. */
static const double ll_max_bw[4] = {39.0, 87.7, 141.0, 2 * 141.0};
static const double ring_ll128_bw[4] = {20.0, 20.0, 36.7, 40.0};
static const double tree_ll128_bw[4] = {20.0, 20.0, 36.7, 55.6};
static const double tree_bw[4] = {26.5, 24.0, 38.7, 70.0};
static const double nvls_efficiency[4] = {0.0, 0.0, 0.85, 0.74};
/* device.h: NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS 640,
 * NCCL_SIMPLE_MAX_NTHREADS 512, NCCL_MAX_NTHREADS 640 (NVLS); comm.h:
 * NCCL_{LL,LL128,SIMPLE}_THREAD_THRESHOLD 8, 8, 64 (the ring's LL one
 * times nRanks); nvls.cc: NVLS_NCHANNELS_SM90 16, _SM100_NVL 24;
 * MAXCHANNELS 32 (device.h). */
static const uint32_t max_threads[STRATA_NCCL__PROTOS] = {512, 640, 512};
static const uint32_t thread_threshold[STRATA_NCCL__PROTOS] = {8, 8, 64};
#define NCCL_MAX_NTHREADS 640u
#define NCCL_MAXCHANNELS 32u
/* device.h NCCL_MAX_NVLS_ARITY; search.cc sm90SpeedArrayIntra and
 * sm100SpeedArrayIntra (GB/s per channel, fastest first; NVLS needs
 * SM90 or later); nvls.cc NCCL_NVLS_CHUNKSIZE. */
#define NCCL_MAX_NVLS_ARITY 32u
#define NVLS_CHUNKSIZE (128u << 10)
static const double sm90_speeds[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
static const double sm100_speeds[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};

static const char *const arch_names[] = {"volta", "ampere", "hopper", "blackwell"};
static const char *const algo_names[STRATA_NCCL__ALGOS] = {"Tree", "Ring", "NVLS"};
static const char *const proto_names[STRATA_NCCL__PROTOS] = {"LL", "LL128", "Simple"};

const char *strata_nccl_algo_name(strata_nccl_algo a) { return a < STRATA_NCCL__ALGOS ? algo_names[a] : "?"; }

const char *strata_nccl_proto_name(strata_nccl_proto p) { return p < STRATA_NCCL__PROTOS ? proto_names[p] : "?"; }

bool strata_nccl_arch_from_name(const char *name, strata_nccl_arch *out)
{
    for (unsigned i = 0; i < 4; i++)
        if (strcmp(name, arch_names[i]) == 0) {
            *out = (strata_nccl_arch)i;
            return true;
        }
    return false;
}

bool strata_nccl_nvls_graph(const strata_nccl_comm *c, uint32_t *channels, double *channel_gbs)
{
    if (!c->nvls || nvls_efficiency[c->arch] == 0 || c->ranks < 2)
        return false;
    const double *speeds = c->arch >= STRATA_NCCL_BLACKWELL ? sm100_speeds : sm90_speeds;
    size_t n_speeds = c->arch >= STRATA_NCCL_BLACKWELL ? G_N_ELEMENTS(sm100_speeds) : G_N_ELEMENTS(sm90_speeds);
    double nvlink = c->graph_channels * c->channel_gbs;
    /* the search goes down the array until (n + 1) x speed fits; when none
     * does it finds no graph, and NCCL runs no NVLS (nChannels < 2) */
    size_t i = 0;
    while (i < n_speeds && (c->ranks + 1) * speeds[i] > nvlink * (1 + 1e-9))
        i++;
    if (i == n_speeds)
        return false;
    *channels = c->ranks < NCCL_MAX_NVLS_ARITY ? c->ranks : NCCL_MAX_NVLS_ARITY;
    *channel_gbs = speeds[i];
    return true;
}

static bool coll_kind(strata_op_kind kind)
{
    return kind == STRATA_OP_ALL_REDUCE || kind == STRATA_OP_ALL_GATHER || kind == STRATA_OP_REDUCE_SCATTER;
}

bool strata_nccl_model(const strata_nccl_comm *c, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p,
                       double *lat_us, double *bw_gbs)
{
    uint32_t n = c->ranks;
    bool ar = kind == STRATA_OP_ALL_REDUCE;
    if (!coll_kind(kind) || n < 2)
        return false;
    if (!ar && a == STRATA_NCCL_TREE) /* AllGather/ReduceScatter: ring, NVLS (PAT: one GPU per node only) */
        return false;
    /* the graph of the algorithm: the ring's (and the tree's), or NVLS's */
    uint32_t graph_channels = c->graph_channels;
    double bw = c->channel_gbs;
    if (a == STRATA_NCCL_NVLS &&
        (p != STRATA_NCCL_SIMPLE || !strata_nccl_nvls_graph(c, &graph_channels, &bw) || graph_channels < 2))
        return false;
    double nsteps = ar ? 2.0 * (n - 1) : n - 1.0, ppn = n;
    if (a == STRATA_NCCL_NVLS) {
        double intra = bw * nvls_efficiency[c->arch] * (graph_channels - 1) / graph_channels;
        bw = ar ? intra * 2.0 : intra * (ppn - 1) / ppn; /* "AllReduce pipelines two operations" */
    }
    double bus = graph_channels * bw;
    if (a == STRATA_NCCL_RING && p == STRATA_NCCL_LL)
        bus = fmin(ll_max_bw[c->arch], bus * .5);
    if (a == STRATA_NCCL_RING && p == STRATA_NCCL_LL128)
        bus = fmin(bus * 0.92, c->graph_channels * ring_ll128_bw[c->arch]);
    if (a == STRATA_NCCL_TREE && ar)
        bus = fmin(bus * .92, c->graph_channels * tree_bw[c->arch]);
    if (a == STRATA_NCCL_TREE && p == STRATA_NCCL_LL)
        bus = fmin(bus * 1.0 / 3.8, ll_max_bw[c->arch]);
    if (a == STRATA_NCCL_TREE && p == STRATA_NCCL_LL128)
        bus = fmin(bus * 7.0 / 9.0, c->graph_channels * tree_ll128_bw[c->arch]);
    /* bus to algorithm bandwidth (not for NVLS AllGather/ReduceScatter) */
    if (!(a != STRATA_NCCL_RING && !ar))
        bus *= a == STRATA_NCCL_TREE ? .5 : n / nsteps;
    double lat = base_lat[a][p], hw = nvlink_lat[a][p];
    if (a == STRATA_NCCL_RING)
        lat += nsteps * hw;
    else if (a == STRATA_NCCL_TREE)
        lat += 2 * ((n - 1) * hw);
    else
        lat = hw; /* NVLS: intraLat alone */
    *lat_us = lat;
    *bw_gbs = bus;
    return bus > 0;
}

/* tuning.cc treeCorrectionFactor: powers of two from 64 B. */
static const double tree_correction[STRATA_NCCL__PROTOS][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

static int log2i(uint64_t x)
{
    int l = -1;
    while (x) {
        x >>= 1;
        l++;
    }
    return l;
}

double strata_nccl_time_us(const strata_nccl_comm *c, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p,
                           uint64_t bytes)
{
    double lat, bw;
    if (!strata_nccl_model(c, kind, a, p, &lat, &bw))
        return -1;
    int log_size = log2i(bytes >> 6);
    if (a == STRATA_NCCL_TREE && kind == STRATA_OP_ALL_REDUCE && log_size >= 0 && log_size < 23)
        bw *= tree_correction[p][log_size];
    return lat + (double)bytes / (1000 * bw);
}

bool strata_nccl_choose(const strata_nccl_comm *c, strata_op_kind kind, uint64_t bytes, strata_nccl_choice *out)
{
    double best = -1;
    /* NCCL walks algorithms, then protocols, and keeps the first minimum
     * (enqueue.cc topoGetAlgoInfo: `if (time >= 0 && time < minTime)`). */
    for (unsigned a = 0; a < STRATA_NCCL__ALGOS; a++)
        for (unsigned p = 0; p < STRATA_NCCL__PROTOS; p++) {
            double t = strata_nccl_time_us(c, kind, (strata_nccl_algo)a, (strata_nccl_proto)p, bytes);
            if (t >= 0 && (best < 0 || t < best)) {
                best = t;
                out->algo = (strata_nccl_algo)a;
                out->proto = (strata_nccl_proto)p;
            }
        }
    if (best < 0)
        return false;
    out->time_us = best;
    out->base_us = base_lat[out->algo][out->proto];
    uint32_t nc, nt;
    out->chunk_bytes = 0;
    out->nvls_efficiency = 0;
    if (out->algo == STRATA_NCCL_NVLS) {
        nc = c->arch >= STRATA_NCCL_BLACKWELL ? 24 : 16;
        nt = NCCL_MAX_NTHREADS;
        /* enqueue.cc calcCollChunking, NVLS (one node, unregistered
         * buffers): concurrentOps = channels x heads (a head per rank) */
        uint64_t chunk = NVLS_CHUNKSIZE, ops = (uint64_t)nc * c->ranks;
        if (bytes < 64 * ops * chunk && chunk > 65536)
            chunk = 65536;
        if (bytes < 8 * ops * chunk && chunk > 32768)
            chunk = 32768;
        if (bytes < 2 * ops * chunk && chunk > 16384)
            chunk = 16384;
        out->chunk_bytes = chunk;
        out->nvls_efficiency = nvls_efficiency[c->arch];
    } else {
        nc = c->graph_channels * 2 > NCCL_MAXCHANNELS ? NCCL_MAXCHANNELS : c->graph_channels * 2;
        nt = max_threads[out->proto];
        uint64_t threshold = thread_threshold[out->proto];
        if (out->algo == STRATA_NCCL_RING && out->proto == STRATA_NCCL_LL)
            threshold *= c->ranks;
        while (bytes < (uint64_t)nc * nt * threshold && nc >= 2)
            nc--;
        while (bytes < (uint64_t)nc * nt * threshold && nt % 128 == 0)
            nt /= 2;
    }
    out->channels = nc;
    out->threads = nt;
    return true;
}
