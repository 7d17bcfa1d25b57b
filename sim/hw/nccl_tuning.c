/*
 * nccl_tuning.c: NCCL's tuning model, on one node or several (contract in
 * nccl_tuning.h). Every constant is NCCL's: the tables of the release the
 * communicator names from its src/graph/tuning.cc (nccl_versions.c:
 * baseLatencies, hwLatencies, the per-channel caps, nvlsEfficiency), and
 * from NVIDIA/nccl @5067397 src/graph/tuning.cc treeCorrectionFactor and
 * getNetOverhead (the same from v2.25), the thread counts
 * from src/include/device.h, the thresholds from src/include/comm.h, the
 * NVLS channel counts and chunk from src/transport/nvls.cc, the speed
 * arrays from src/graph/search.cc.
 * Invariant: the functions read only their arguments.
 */
#include "hw/nccl_tuning.h"
#include "core/error.h"
#include "hw/nccl_plugin.h"
#include "hw/nccl_channels.h"
#include <math.h>
#include <string.h>
#include <glib.h>

#define ALGOS STRATA_NCCL__ALGOS
#define PROTOS STRATA_NCCL__PROTOS

/* The constants of the release the communicator runs (nccl_versions.h):
 * base and per-step latencies, per-channel caps, NVLS's efficiency. */
static const strata_nccl_version *ver(const strata_nccl_comm *c)
{
    return c->version ? c->version : strata_nccl_version_default();
}
/* device.h: NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS 640,
 * NCCL_SIMPLE_MAX_NTHREADS 512, NCCL_MAX_NTHREADS 640 (NVLS, Tree, PAT);
 * comm.h: NCCL_{LL,LL128,SIMPLE}_THREAD_THRESHOLD 8, 8, 64 (the ring's LL
 * one times nRanks); MAXCHANNELS 32 (device.h); NVLS's channels:
 * nvls_tuning below. */
static const uint32_t max_threads[PROTOS] = {512, 640, 512};
static const uint32_t thread_threshold[PROTOS] = {8, 8, 64};
/* runRing's alignment of the last loop's chunk from v2.25 (tune_channels) */
#define RING_ALIGN_BYTES 16u
#define NCCL_MAX_NTHREADS 640u
#define NCCL_MAXCHANNELS 32u
/* device.h NCCL_MAX_NVLS_ARITY; search.cc's speed arrays (GB/s per
 * channel, fastest first; NVLS needs SM90 or later); nvls.cc
 * NCCL_NVLS_CHUNKSIZE. */
#define NCCL_MAX_NVLS_ARITY 32u
#define NVLS_CHUNKSIZE (128u << 10)
/* init.cc DEFAULT_BUFFSIZE (1 << 22): Simple's buffer per connection
 * (comm->buffSizes[NCCL_PROTO_SIMPLE]) when NCCL_BUFFSIZE is unset, in
 * every release modelled (v2.19.3-1 l. 531, v2.30.7-1 l. 813) */
#define NCCL_DEFAULT_BUFFSIZE (4u << 20)
static const double sm90_speeds[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
static const double inter_speeds[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                      7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
static const double sm90_inter_speeds[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                           15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
/* search.cc's speed array for the architecture (Blackwell's by release:
 * strata_nccl_version sm100_intra, sm100_inter), inside a node (the
 * NVLS graph's; Hopper and later) or across nodes, and its length */
static const double *speed_array(const strata_nccl_comm *c, bool inter, size_t *n)
{
    const strata_nccl_version *v = ver(c);
    if (c->arch >= STRATA_NCCL_BLACKWELL && (inter ? v->sm100_inter : v->sm100_intra)) {
        *n = inter ? v->n_sm100_inter : v->n_sm100_intra;
        return inter ? v->sm100_inter : v->sm100_intra;
    }
    if (c->arch >= STRATA_NCCL_HOPPER) {
        *n = inter ? G_N_ELEMENTS(sm90_inter_speeds) : G_N_ELEMENTS(sm90_speeds);
        return inter ? sm90_inter_speeds : sm90_speeds;
    }
    *n = G_N_ELEMENTS(inter_speeds);
    return inter_speeds;
}

static const char *const arch_names[] = {"volta", "ampere", "hopper", "blackwell"};
static const char *const algo_names[ALGOS] = {"Tree", "Ring", "NVLS", "NVLS_TREE", "PAT"};
static const char *const proto_names[PROTOS] = {"LL", "LL128", "Simple"};

const char *strata_nccl_algo_name(strata_nccl_algo a) { return a < ALGOS ? algo_names[a] : "?"; }

const char *strata_nccl_proto_name(strata_nccl_proto p) { return p < PROTOS ? proto_names[p] : "?"; }

const char *strata_nccl_arch_name(strata_nccl_arch a) { return a < G_N_ELEMENTS(arch_names) ? arch_names[a] : "?"; }

char *strata_nccl_algo_mask_names(uint32_t mask)
{
    GString *s = g_string_new(NULL);
    for (unsigned a = 0; a < ALGOS; a++)
        if (mask & (1u << a))
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", algo_names[a]);
    return g_string_free(s, FALSE);
}

void strata_nccl_unrun_error(GError **err, const char *lib, uint32_t pinned, strata_op_kind kind, uint64_t ranks)
{
    char *names = pinned ? strata_nccl_algo_mask_names(pinned) : NULL, *upper = g_ascii_strup(lib, -1);
    if (names) /* the trace's algo= (nccl-nvls-tree on an A100): "expected an all-reduce ..., got all-reduce" */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "algo=%s: the op's algorithm pins %s, which %s does not "
                    "run for %s over %" G_GUINT64_FORMAT " ranks on this hardware; expected an algorithm it runs here "
                    "(or none: %s's choice)", lib, names, upper, strata_op_kind_name(kind), ranks, upper);
    else
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "algo=%s: expected all-reduce, all-gather or "
                    "reduce-scatter over 2 ranks or more that %s runs (%s_algo, %s_proto), got %s over %"
                    G_GUINT64_FORMAT, lib, upper, lib, lib, strata_op_kind_name(kind), ranks);
    g_free(names);
    g_free(upper);
}

static bool index_of(const char *const *names, unsigned n, const char *name, bool any_case, unsigned *out)
{
    for (unsigned i = 0; i < n; i++)
        if (any_case ? g_ascii_strcasecmp(name, names[i]) == 0 : strcmp(name, names[i]) == 0) {
            *out = i;
            return true;
        }
    return false;
}

bool strata_nccl_arch_from_name(const char *name, strata_nccl_arch *out)
{
    unsigned i;
    bool ok = index_of(arch_names, G_N_ELEMENTS(arch_names), name, false, &i);
    if (ok)
        *out = (strata_nccl_arch)i;
    return ok;
}

bool strata_nccl_algo_from_name(const char *name, strata_nccl_algo *out)
{
    unsigned i;
    bool ok = index_of(algo_names, ALGOS, name, true, &i);
    if (ok)
        *out = (strata_nccl_algo)i;
    return ok;
}

bool strata_nccl_proto_from_name(const char *name, strata_nccl_proto *out)
{
    unsigned i;
    bool ok = index_of(proto_names, PROTOS, name, true, &i);
    if (ok)
        *out = (strata_nccl_proto)i;
    return ok;
}

static uint32_t nodes_of(const strata_nccl_comm *c) { return c->nodes > 1 ? c->nodes : 1; }

bool strata_nccl_nvls_graph(const strata_nccl_comm *c, uint32_t *channels, double *channel_gbs)
{
    uint32_t ppn = c->ranks / nodes_of(c);
    /* NVLS needs SM90 and the release's GPUs in the node (nvls.cc
     * ncclNvlsInit's gpuCount: strata_nccl_version nvls_min_gpus) */
    if (!c->nvls || c->arch < STRATA_NCCL_HOPPER || ppn < MAX(2u, ver(c)->nvls_min_gpus))
        return false;
    size_t n_speeds;
    const double *speeds = speed_array(c, false, &n_speeds);
    double nvlink = c->graph_channels * c->channel_gbs;
    /* the search goes down the array until (n + 1) x speed fits; when none
     * does it finds no graph, and NCCL runs no NVLS (nChannels < 2) */
    size_t i = 0;
    while (i < n_speeds && (ppn + 1) * speeds[i] > nvlink * (1 + 1e-9))
        i++;
    if (i == n_speeds)
        return false;
    uint32_t heads = nodes_of(c) > 1 ? MIN(ppn, c->nic_gpus) : ppn;
    *channels = heads < NCCL_MAX_NVLS_ARITY ? heads : NCCL_MAX_NVLS_ARITY;
    *channel_gbs = speeds[i];
    return true;
}

double strata_nccl_pci_gbs(uint32_t generation, uint32_t lanes)
{
    static const double per_lane[] = {15, 30, 60, 120, 240, 480}; /* x 100 Mb/s */
    return generation >= 1 && generation <= G_N_ELEMENTS(per_lane) ? lanes * per_lane[generation - 1] / 80.0 : 0;
}

void strata_nccl_net_graph(const strata_nccl_comm *c, uint32_t *channels, double *channel_gbs)
{
    size_t n_speeds;
    const double *speeds = speed_array(c, true, &n_speeds);
    double nvlink = c->graph_channels * c->channel_gbs * (1 + 1e-9);
    uint32_t best = 0;
    double best_speed = speeds[n_speeds - 1];
    for (size_t i = 0; i < n_speeds; i++) {
        if (speeds[i] > c->nic_gbs * (1 + 1e-9))
            continue; /* above what a NIC's path carries (system->maxBw) */
        if (best && speeds[i] / best_speed <= .49)
            break;
        uint32_t per_nic = (uint32_t)(c->nic_gbs / speeds[i] + 1e-9);
        uint32_t ch = MIN(MIN(NCCL_MAXCHANNELS / 2, c->nics * per_nic), (uint32_t)(nvlink / speeds[i]));
        if (ch * speeds[i] > best * best_speed + 1e-9) {
            best = ch;
            best_speed = speeds[i];
        }
        if (best * best_speed >= nvlink / (1 + 1e-9))
            break; /* the GPUs' NVLink is full: search.cc's optimal solution */
    }
    if (best_speed >= 25 && !(c->arch >= STRATA_NCCL_HOPPER && best_speed < 50 && best > 4) &&
        2 * best <= NCCL_MAXCHANNELS / 2) { /* ncclTopoDupChannels */
        best *= 2;
        best_speed /= 2;
    }
    *channels = MAX(best, 1);
    *channel_gbs = best_speed;
}

void strata_nccl_tree_graph(const strata_nccl_comm *c, uint32_t *channels, double *bw_inter, double *bw_intra)
{
    size_t n_speeds;
    const double *speeds = speed_array(c, true, &n_speeds);
    uint32_t ppn = c->ranks / nodes_of(c), ch;
    double ring_bw, nvlink = c->graph_channels * c->channel_gbs * (1 + 1e-9);
    strata_nccl_net_graph(c, &ch, &ring_bw);
    /* search.cc: a tree's totalBw x ngpus / (ngpus - 1); with one GPU a
     * node no GPU-to-GPU step, so NVLink bounds nothing */
    double total = ppn > 1 ? nvlink * ppn / (ppn - 1) : INFINITY;
    size_t i = 0;
    for (; i < n_speeds; i++) { /* pass 1: the fastest speed that carries the ring's channels */
        double s = speeds[i];
        if (s > c->nic_gbs * (1 + 1e-9) || s * ch > total)
            continue;
        uint32_t per_nic = (uint32_t)(c->nic_gbs / s + 1e-9);
        if (c->nics * per_nic >= ch && (ppn == 1 || ch * s <= nvlink))
            break;
    }
    if (i == n_speeds) /* not reached: the ring's own speed (or half of it) always carries them */
        for (i = 0; i + 1 < n_speeds && speeds[i] > ring_bw * (1 + 1e-9); i++)
            ;
    double inter = speeds[i], intra = inter;
    /* pass 2: "increase bwIntra for trees (2 nodes or collnet)" while it
     * is under twice bwInter and the chain's NVLink carries it */
    while (i > 0 && intra < 2 * inter && (ppn == 1 || ch * speeds[i - 1] <= nvlink))
        intra = speeds[--i];
    *channels = ch;
    *bw_inter = inter;
    *bw_intra = intra;
}

/* The tree graph's speed on one node (NVIDIA/nccl v2.27.7-1; the same
 * rule from v2.25.1-1 to v2.30.7-1): src/init.cc l. 856-859 searches it
 * for exactly the ring graph's channels (min = max = ringGraph->
 * nChannels); src/graph/search.cc ncclTopoCompute, no NIC on the node,
 * takes the architecture's intra-node array (l. 1039-1045) from the first
 * speed with channels x speed at most totalBw x ppn / (ppn - 1) (l. 1049-
 * 1051, a tree pattern), then steps down while the chain's NVLink does not
 * carry channels x speed (ncclTopoFollowPath charges bwIntra once a
 * channel on each GPU's link out); pass 2's raise of bwIntra overfills it.
 * On Hopper the ring graph's speed is in sm90SpeedArrayIntra (12 x 30,
 * 6 x 60 duplicated) and the tree's graph is the ring's; on Blackwell the
 * ring's 16 x 45 (8 x 90 duplicated: ncclTopoDupChannels) is not in
 * sm100SpeedArrayIntra {90, 80, 70, 60, 50, 40, ...}: 16 x 50 overfills
 * 720 GB/s, the tree runs 16 x 40. The GPU's NVLink is the model's ring
 * graph (channels x speed), as in strata_nccl_nvls_graph. Before Hopper
 * the ring's speed (speedArrayIntra is not in this model's tables). */
static double node_tree_speed(const strata_nccl_comm *c)
{
    if (c->arch < STRATA_NCCL_HOPPER || c->ranks < 2)
        return c->channel_gbs;
    size_t n_speeds;
    const double *speeds = speed_array(c, false, &n_speeds);
    double nvlink = c->graph_channels * c->channel_gbs * (1 + 1e-9);
    double total = nvlink * c->ranks / (c->ranks - 1);
    for (size_t i = 0; i < n_speeds; i++)
        if (c->graph_channels * speeds[i] <= total && c->graph_channels * speeds[i] <= nvlink)
            return speeds[i];
    return c->channel_gbs;
}

static bool coll_kind(strata_op_kind kind)
{
    return kind == STRATA_OP_ALL_REDUCE || kind == STRATA_OP_ALL_GATHER || kind == STRATA_OP_REDUCE_SCATTER;
}

/* Whether NCCL enables LL128 by default across nodes for the GPUs' path to
 * their NICs (graphs[a]->typeInter, the same for the ring and the tree
 * here): NVIDIA/nccl v2.19.3-1 src/graph/tuning.cc l. 290, v2.21.5-1 l. 308,
 * v2.22.3-1 l. 306, v2.25.1-1 l. 428: `typeInter <= PATH_PXB ||
 * (minCompCap >= 90 && typeInter <= PATH_PXN)` ("Other cases are not tested
 * and may cause silent data corruption"); from v2.27 with NCCL_LL128_C2C's
 * default 1 (v2.30.4-1 l. 229): `typeInter <= PATH_PXN` from compute
 * capability 9.0, else `<= PATH_PXB` (v2.30.4-1 l. 490-496, v2.27.7-1 l.
 * 461-464), P2C lying between them; v2.27.3-1 l. 460 reads `<= PATH_PXB
 * || (minCompCap >= 90 && <= PATH_P2C)` with P2C numbered after PXN there,
 * the same paths. The rules agree on every path but C2C, which is PHB
 * before v2.27 (nccl_tuning.h strata_nccl_net_path). Only where NCCL_PROTO
 * is unset: a set one that lists LL128 enables it outright (parseList
 * gives 1, not 2: v2.22.3-1 l. 34-52, 268-275). One node's graphs reach
 * no NIC. */
static bool ll128_net_path(const strata_nccl_comm *c)
{
    strata_nccl_net_path t = c->net_path;
    if (t == STRATA_NCCL_PATH_C2C && !ver(c)->p2c_path)
        t = STRATA_NCCL_PATH_PHB;
    return t <= STRATA_NCCL_PATH_PXB || (c->arch >= STRATA_NCCL_HOPPER && t <= STRATA_NCCL_PATH_PXN);
}

/* Whether NCCL runs the pair at all for kind (tuning.cc's loops and its
 * algoEnable, without CollNet), and the user's NCCL_ALGO / NCCL_PROTO. */
static bool enabled(const strata_nccl_comm *c, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p)
{
    bool ar = kind == STRATA_OP_ALL_REDUCE;
    uint32_t nodes = nodes_of(c);
    if ((c->algos && !(c->algos >> a & 1u)) || (c->protos && !(c->protos >> p & 1u)))
        return false;
    if (p == STRATA_NCCL_LL128 && !c->protos && nodes > 1 && !ll128_net_path(c))
        return false;
    if ((a == STRATA_NCCL_NVLS || a == STRATA_NCCL_NVLS_TREE || a == STRATA_NCCL_PAT) && p != STRATA_NCCL_SIMPLE)
        return false;
    if (a == STRATA_NCCL_TREE || a == STRATA_NCCL_NVLS_TREE) /* all-reduce only; NVLS_TREE across nodes */
        return ar && (a == STRATA_NCCL_TREE || nodes > 1);
    if (a == STRATA_NCCL_NVLS) /* one node (across nodes it needs CollNet) */
        return nodes == 1;
    if (a == STRATA_NCCL_PAT) /* all-gather, reduce-scatter; one GPU per node; from v2.23 */
        return !ar && nodes == c->ranks && ver(c)->pat;
    return true;
}

/* tuning.cc's bandwidth of one NVLS or NVLS_TREE channel, by the
 * release's rule (strata_nccl_nvls_rule): intra, the NVLS graph's speed
 * (bwIntra); inter, the NICs' (bwInter, across nodes). On one node bwInter
 * is taken as bwIntra (ESTIMATE: the search starts both at one speed; only
 * v2.27's all-gather and reduce-scatter read it there). */
static double nvls_channel_bw(const strata_nccl_comm *c, const strata_nccl_version *v, bool ar, strata_nccl_algo a,
                              uint32_t ch, double intra, double inter)
{
    uint32_t nodes = nodes_of(c), col = nodes <= 2 ? nodes - 1 : 2;
    double ppn = (double)c->ranks / nodes;
    bool tree = a == STRATA_NCCL_NVLS_TREE;
    if (v->nvls_rule == STRATA_NCCL_NVLS_EFFICIENCY) {
        double nv = intra * v->nvls_efficiency[c->arch] * (ch - 1) / ch * (ar ? 2.0 : (ppn - 1) / ppn);
        double bw = nodes == 1 ? nv : MIN(nv, inter * (nodes <= 2 && tree ? 2 : 1));
        return tree ? MIN(bw, v->nvls_tree_bw[c->arch][col]) : bw;
    }
    if (nodes == 1)
        inter = intra;
    if (tree)
        return MIN(intra, nodes <= 2 ? inter : inter / 2);
    if (!ar && v->nvls_rule == STRATA_NCCL_NVLS_MIN_PPN)
        return MIN(intra * (ppn - 1) / ppn, inter * 0.9);
    return MIN(intra, inter);
}

/* LL128's cap per channel: the release's by collective (v2.8, v2.9:
 * ll128_coll_bw), else its table by architecture and nodes, the tree's
 * or the ring's. */
static double ll128_cap(const strata_nccl_comm *c, strata_op_kind kind, uint32_t col, bool tree)
{
    const strata_nccl_version *v = ver(c);
    double by_coll = v->ll128_coll_bw[kind == STRATA_OP_ALL_REDUCE ? 0 : kind == STRATA_OP_ALL_GATHER ? 1 : 2];
    if (by_coll > 0)
        return by_coll;
    return tree ? v->tree_ll128_bw[c->arch][col] : v->ring_ll128_bw[c->arch][col];
}

/* The bus bandwidth of the pair on its graph (tuning.cc's busBw, before
 * the conversion to algorithm bandwidth); 0 when NCCL does not run it. */
static double bus_bandwidth(const strata_nccl_comm *c, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p)
{
    const strata_nccl_version *v = ver(c);
    bool ar = kind == STRATA_OP_ALL_REDUCE;
    uint32_t nodes = nodes_of(c), col = nodes <= 2 ? nodes - 1 : 2;
    uint32_t ll_row = nodes == 1 ? (uint32_t)c->arch : c->cpu == STRATA_NCCL_AMD ? 1 : 0;
    /* the graph of the algorithm: the ring's (and the tree's), or NVLS's */
    uint32_t ch = c->graph_channels;
    double bw = c->channel_gbs;
    if (nodes > 1 && a == STRATA_NCCL_TREE) { /* graphs[TREE]: bwIntra on two nodes, bwInter beyond */
        double intra, inter;
        strata_nccl_tree_graph(c, &ch, &inter, &intra);
        bw = nodes <= 2 ? intra : inter;
    } else if (nodes > 1) {
        strata_nccl_net_graph(c, &ch, &bw);
    } else if (a == STRATA_NCCL_TREE) {
        bw = node_tree_speed(c);
    }
    if (a == STRATA_NCCL_NVLS || a == STRATA_NCCL_NVLS_TREE) {
        double intra, inter;
        uint32_t net_ch;
        if (!strata_nccl_nvls_graph(c, &ch, &intra) || ch < 2)
            return 0;
        strata_nccl_net_graph(c, &net_ch, &inter); /* the NICs' speed (ESTIMATE: pass 2 raises none above it) */
        bw = nvls_channel_bw(c, v, ar, a, ch, intra, inter);
    }
    double bus = ch * bw;
    /* to v2.17: "if (compCap80)", sm80 exactly; strata's ampere row stands for sm80 (A100): an sm86 part would
     * take neither the cap nor these rows in NCCL (merge review; no shipped file is one) */
    if (v->sm80_bus_cap > 0 && c->arch == STRATA_NCCL_AMPERE)
        bus = fmin(bus, v->sm80_bus_cap);
    if (a == STRATA_NCCL_RING && p == STRATA_NCCL_LL) /* to v2.20: a quarter (a third for one node's AG/RS) */
        bus = fmin(v->ll_max_bw[ll_row][col], bus * (!v->ring_ll_quarter ? .5 : nodes > 1 || ar ? .25 : 1.0 / 3));
    if (a == STRATA_NCCL_RING && p == STRATA_NCCL_LL128) /* to v2.19: x .7 below 2 GPUs a node */
        bus = fmin(bus * (v->ppn1_old_rules && c->ranks < 2 * nodes ? 0.7 : 0.92), ch * ll128_cap(c, kind, col, false));
    if (a == STRATA_NCCL_TREE && ar)
        bus = fmin(bus * .92, ch * v->tree_bw[c->arch][col]);
    if (a == STRATA_NCCL_TREE && p == STRATA_NCCL_LL)
        bus = fmin(bus * 1.0 / 3.8, v->ll_max_bw[ll_row][col]);
    if (a == STRATA_NCCL_TREE && p == STRATA_NCCL_LL128)
        bus = fmin(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * ll128_cap(c, kind, col, true));
    /* tuning.cc (v2.25.1-1 l. 260, v2.26.6-1 l. 261): "if (a ==
     * NCCL_ALGO_TREE && comm->maxTreePattern == NCCL_TOPO_PATTERN_TREE)
     * busBw *= .85" (graphs[a]->pattern to v2.25), the pattern search.cc
     * gives the tree graph with one GPU a node ("if (ngpus == 1) ...
     * graph->pattern = NCCL_TOPO_PATTERN_TREE"): strata_nccl_version
     * tree_pattern_cut */
    if (a == STRATA_NCCL_TREE && nodes > 1 && c->ranks == nodes && v->tree_pattern_cut)
        bus *= .85;
    if (a == STRATA_NCCL_PAT)
        bus *= .75;
    return bus;
}

/* tuning.cc getNetOverhead (us): 1 on Intel x86, 2 on AMD x86, 1 otherwise; x 3 on Simple. */
double strata_nccl_net_overhead_us(const strata_nccl_comm *c, strata_nccl_proto p)
{
    return (c->cpu == STRATA_NCCL_AMD ? 2.0 : 1.0) * (p == STRATA_NCCL_SIMPLE ? 3 : 1);
}

int strata_nccl_log2i(uint64_t x)
{
    int l = -1;
    while (x) {
        x >>= 1;
        l++;
    }
    return l;
}

/* NCCL's hardware latency of one step over the network for the pair
 * (hwLatencies[NET]): with one GPU per node the Tree row ("latencies are
 * fully exposed"; from v2.25, not v2.19: ppn1_old_rules). */
static double net_step(const strata_nccl_comm *c, strata_nccl_algo a, strata_nccl_proto p)
{
    const strata_nccl_version *v = ver(c);
    return c->ranks == nodes_of(c) && !v->ppn1_old_rules ? v->net_lat[STRATA_NCCL_TREE][p] : v->net_lat[a][p];
}

/* tuning.cc's interLat (v2.28.7-1 l. 356-359): that hardware latency plus
 * the graph's latencyInter, the network plugin's latency property, for
 * the data and, on Simple, again for the flush. */
static double inter_latency(const strata_nccl_comm *c, strata_nccl_algo a, strata_nccl_proto p)
{
    return net_step(c, a, p) + c->net_latency_us * (p == STRATA_NCCL_SIMPLE ? 2 : 1);
}

/* tuning.cc's latency of the pair (us). */
static double latency(const strata_nccl_comm *c, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p)
{
    uint32_t n = c->ranks, nodes = nodes_of(c);
    bool ar = kind == STRATA_OP_ALL_REDUCE;
    double nsteps = ar ? 2.0 * (n - 1) : n - 1.0;
    double lat = ver(c)->base_lat[a][p], intra = ver(c)->nvlink_lat[a][p], inter = inter_latency(c, a, p);
    switch (a) {
    case STRATA_NCCL_RING: {
        double overhead = nodes > 1 ? strata_nccl_net_overhead_us(c, p) : 0;
        /* v2.19: 2 x nNodes steps of an all-reduce across nodes, later 2 x (nNodes - 1) */
        double inter_steps = nodes == 1 ? 0 : ar ? 2.0 * (nodes - (ver(c)->ring_inter_steps_all ? 0 : 1)) : nodes - 1.0;
        return lat + (nsteps - inter_steps) * fmax(intra, overhead) + inter_steps * inter;
    }
    case STRATA_NCCL_TREE:
        return lat + 2 * ((n / nodes - 1.0) * intra + strata_nccl_log2i(nodes) * inter);
    case STRATA_NCCL_NVLS:
        return intra + (nodes > 1 ? inter : 0);
    case STRATA_NCCL_NVLS_TREE:
        return lat + intra + 2 * strata_nccl_log2i(nodes) * inter;
    default: /* PAT */
        return lat + strata_nccl_log2i(nodes) * (inter / 3.5) + n * 2.8;
    }
}

bool strata_nccl_model(const strata_nccl_comm *c, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p,
                       double *lat_us, double *bw_gbs)
{
    uint32_t n = c->ranks;
    bool ar = kind == STRATA_OP_ALL_REDUCE;
    if (!coll_kind(kind) || n < 2 || a >= ALGOS || p >= PROTOS || !enabled(c, kind, a, p))
        return false;
    double bus = bus_bandwidth(c, kind, a, p);
    double nsteps = ar ? 2.0 * (n - 1) : n - 1.0;
    /* bus to algorithm bandwidth (not for non-ring all-gather /
     * reduce-scatter from v2.25: nvls_gather_ratio): NVLS's ratio is the
     * ring's from v2.28, 5/6 before */
    bool nvls = a == STRATA_NCCL_NVLS || a == STRATA_NCCL_NVLS_TREE;
    bool ring_ratio = a == STRATA_NCCL_RING || (nvls && ver(c)->nvls_rule == STRATA_NCCL_NVLS_EFFICIENCY);
    if (a == STRATA_NCCL_RING || ar || (nvls && ver(c)->nvls_gather_ratio))
        bus *= ring_ratio ? n / nsteps : nvls ? 5.0 / 6.0 : .5;
    *lat_us = latency(c, kind, a, p);
    *bw_gbs = bus;
    return bus > 0;
}

/* tuning.cc treeCorrectionFactor: powers of two from 64 B. */
static const double tree_correction[PROTOS][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

/* NVLS's channels and chunks (comm->nvlsChannels, nvlsChunkSize,
 * nvlsTreeMaxChunkSize). nvls.cc: NVLS_NCHANNELS_SM90 16 on Hopper;
 * Blackwell's by the release's rule (strata_nccl_version
 * nvls_channels_sm100: one node, across nodes); NCCL_NVLS_CHUNKSIZE 128
 * KiB; NCCL_NVLSTREE_MAX_CHUNKSIZE unset: 64 KiB from 4 nodes, else the
 * chunk (enqueue.cc calcCollChunking v2.27.7-1 l. 2025; v2.30.7-1
 * ncclNvlsTuning). From v2.30 ncclNvlsTreeSm100Tuning sets all three on
 * Blackwell across nodes from the nodes, the GPUs per node (ppn) and the
 * NIC's bandwidth (minNetBw, GB/s), taking the GPU-NIC path as PXB (the
 * NICs on the GPUs' PCIe switches: this model's scope). Then
 * max(minCTAs, min(maxCTAs, channels)) (NCCL_MIN_CTAS, NCCL_MAX_CTAS;
 * maxCTAs unset is MAXCHANNELS). A run's NCCL_NVLS_CHUNKSIZE and
 * NCCL_NVLSTREE_MAX_CHUNKSIZE (comm nvls_chunk_bytes, nvlstree_max_bytes)
 * replace the chunk and the tree's maximum, NCCL's tuning or not. */
typedef struct nvls_tune {
    uint32_t channels;
    uint64_t chunk, tree_max;
} nvls_tune;

static nvls_tune nvls_tuning(const strata_nccl_comm *c)
{
    const strata_nccl_version *v = ver(c);
    uint32_t nodes = nodes_of(c), ppn = c->ranks / nodes;
    bool bw = c->arch >= STRATA_NCCL_BLACKWELL;
    nvls_tune t = {.channels = bw ? v->nvls_channels_sm100[nodes > 1] : 16, .chunk = NVLS_CHUNKSIZE, .tree_max = 0};
    if (bw && nodes > 1 && v->nvls_sm100_tuning) { /* v2.30.7-1 nvls.cc l. 164-196 */
        double nic = c->nic_gbs;
        if (nodes == 2 && nic >= 48.0) {
            t.channels = 32;
            t.tree_max = ppn <= 4 ? 256u << 10 : ppn >= 16 || (ppn <= 8 && nic < 96.0) ? 64u << 10 : 128u << 10;
            t.chunk = ppn <= 4 ? 256u << 10 : t.chunk;
        } else if (nic >= 96.0) {
            t.channels = ppn <= 8 ? 24 : 32;
            t.tree_max = ppn <= 8 ? 256u << 10 : ppn < 32 ? 128u << 10 : 64u << 10;
            t.chunk = ppn <= 8 ? 256u << 10 : t.chunk;
        } else if (nic >= 48.0) {
            t.channels = 24;
            t.tree_max = 64u << 10; /* PXB */
        }
    }
    if (c->nvls_chunk_bytes) /* the run's NCCL_NVLS_CHUNKSIZE */
        t.chunk = c->nvls_chunk_bytes;
    if (c->nvlstree_max_bytes) /* its NCCL_NVLSTREE_MAX_CHUNKSIZE */
        t.tree_max = c->nvlstree_max_bytes;
    if (!t.tree_max)
        t.tree_max = nodes >= 4 ? 65536 : t.chunk;
    if (c->max_ctas) /* max(minCTAs, min(maxCTAs, channels)) */
        t.channels = MIN(t.channels, c->max_ctas);
    t.channels = MAX(t.channels, c->min_ctas);
    return t;
}

/* comm->nChannels, as connect.cc ncclTopoPostset sets it (v2.25.1-1
 * l. 452-495, v2.30.7-1 l. 459-515): the ring graph's doubled; across
 * nodes doubled again below 16 when the ring graph's bwIntra is above 45
 * on SM90 or later ("Use 4 compute channels per search channel to reach
 * peak BW on <8 PPN"); then at most min(ncclMaxNchannels(),
 * config.maxCTAs) (NCCL_MAX_NCHANNELS, NCCL_MAX_CTAS: "combining max,
 * then min", l. 477-485), then NCCL_MIN_CTAS; then, to v2.27, at least
 * nvlsChannels where NVLS runs (l. 493-495, after the maximum:
 * NCCL_MAX_NCHANNELS does not bound it; v2.27.7-1 the same; none in
 * v2.19.3-1, removed in v2.28.3-1: strata_nccl_version
 * nvls_raises_ring); at most MAXCHANNELS. */
uint32_t strata_nccl_comm_channels(const strata_nccl_comm *c)
{
    uint32_t ch = c->graph_channels;
    double bw = c->channel_gbs;
    if (nodes_of(c) > 1)
        strata_nccl_net_graph(c, &ch, &bw);
    uint32_t nvls_ch, nc = MIN(2 * ch, NCCL_MAXCHANNELS);
    if (nodes_of(c) > 1 && c->arch >= STRATA_NCCL_HOPPER && bw > 45.0 && nc < 16)
        nc *= 2;
    if (c->max_nchannels)
        nc = MIN(nc, c->max_nchannels);
    if (c->max_ctas)
        nc = MIN(nc, c->max_ctas);
    /* connect.cc ncclTopoPostset (v2.27.7-1 l. 484): copyChannels up to
     * max(ncclMinNchannels(), config.minCTAs), NCCL_MIN_CTAS */
    nc = MAX(nc, c->min_ctas);
    if (ver(c)->nvls_raises_ring && strata_nccl_nvls_graph(c, &nvls_ch, &bw))
        nc = MAX(nc, nvls_tuning(c).channels);
    return MIN(nc, NCCL_MAXCHANNELS);
}

static bool nccl_model(const void *comm, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p, double *lat_us,
                       double *bw_gbs)
{
    return strata_nccl_model(comm, kind, a, p, lat_us, bw_gbs);
}

/* tuning.cc: the tree's (and NVLS_TREE's on Blackwell, but for ARM CPUs)
 * correction of an all-reduce's bandwidth by log2(bytes / 64), and the
 * ring's plateau across nodes. */
static void nccl_correct(const void *comm, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p,
                         uint64_t bytes, double *lat_us, double *bw_gbs)
{
    const strata_nccl_comm *c = comm;
    int log_size = strata_nccl_log2i(bytes >> 6);
    bool ar = kind == STRATA_OP_ALL_REDUCE;
    const double *ll128_row = ver(c)->tree_ll128_correction; /* the release's own LL128 row (v2.8, v2.9) */
    if (a == STRATA_NCCL_TREE && ar && log_size >= 0 && log_size < 23)
        *bw_gbs *= p == STRATA_NCCL_LL128 && ll128_row ? ll128_row[log_size] : tree_correction[p][log_size];
    if (a == STRATA_NCCL_NVLS_TREE && ar && log_size >= 0 && log_size < 24 && c->arch >= STRATA_NCCL_BLACKWELL &&
        c->cpu != STRATA_NCCL_ARM && ver(c)->nvls_tree_correction)
        *bw_gbs *= tree_correction[p][log_size];
    if (a == STRATA_NCCL_RING && p == STRATA_NCCL_SIMPLE && nodes_of(c) > 1 && ar &&
        bytes / ((uint64_t)strata_nccl_comm_channels(c) * c->ranks) >= 64)
        *lat_us *= c->arch == STRATA_NCCL_VOLTA ? 1.9 : 1.4; /* "Plateau effect of ring" */
}

static const strata_nccl_tuner nccl_tuner = {.model = nccl_model, .correct = nccl_correct};

double strata_nccl_time_us(const strata_nccl_comm *c, strata_op_kind kind, strata_nccl_algo a, strata_nccl_proto p,
                           uint64_t bytes)
{
    return strata_nccl_tuner_time_us(&nccl_tuner, c, kind, a, p, bytes);
}

/* enqueue.cc calcCollChunking's chunk for NVLS and NVLS_TREE (one head
 * per rank on one node, per NIC GPU across), unregistered buffers, then
 * halved to each row's chunk while bytes < its factor x concurrentOps
 * (channels x heads) x the chunk so far. The start (v2.25.1-1 to
 * v2.30.7-1, calcCollChunking l. 1797-1834 at v2.25.1-1, l. 2222-2281 at
 * v2.30.7-1): chunkSize = stepSize = buffSizes[SIMPLE] / NCCL_STEPS (NVLS
 * runs Simple only; chunkSteps is 1 off the ring), so
 *   NVLS:      min(buffer / 8, nvlsChunkSize) ("if (chunkSize >
 *              maxChunkSize) chunkSize = maxChunkSize"): the Simple step
 *              caps the NVLS chunk (a 2 MiB NCCL_NVLS_CHUNKSIZE runs 512
 *              KiB with the 4 MiB buffer);
 *   NVLS_TREE: chunkSize = nvlsChunkSize, then min with the tree's
 *              maximum (nvls_tuning): not capped by the buffer.
 * nvls.cc takes NCCL_NVLS_CHUNKSIZE as it is (ncclParamNvlsChunkSize, no
 * clamp, lower bound or rounding in any release; coll_impl_nccl.c refuses
 * sizes outside 4 KiB-16 MiB or not a multiple of 512 B). NVLS's
 * maxChunkSize of 32768 across nodes where NVLS's Simple all-reduce
 * bandwidth is under 150 is not modelled: NVLS runs on one node here.
 * v2.19.3-1 (nvls_chunk_fixed; computeColl l. 1328-1378): NVLS
 * min(buffer / 8, 131072), NVLS_TREE buffer / 8, 65536 from 4 nodes; no
 * environment variable moves either. */
static uint64_t nvls_chunk(const strata_nccl_comm *c, strata_nccl_algo a, uint64_t bytes, uint64_t ops)
{
    static const uint64_t nvls_rows[][2] = {{64, 65536}, {8, 32768}, {2, 16384}};
    static const uint64_t tree_rows[][2] = {{32, 262144}, {16, 131072}, {4, 65536}, {1, 32768}};
    bool tree = a == STRATA_NCCL_NVLS_TREE;
    const uint64_t(*rows)[2] = tree ? tree_rows : nvls_rows;
    size_t n_rows = tree ? G_N_ELEMENTS(tree_rows) : G_N_ELEMENTS(nvls_rows);
    uint64_t step = (c->simple_buff_bytes ? c->simple_buff_bytes : NCCL_DEFAULT_BUFFSIZE) / STRATA_NCCL_STEPS;
    uint64_t chunk;
    if (ver(c)->nvls_chunk_fixed) {
        chunk = tree ? (nodes_of(c) >= 4 ? 65536 : step) : MIN(step, NVLS_CHUNKSIZE);
    } else {
        nvls_tune t = nvls_tuning(c);
        chunk = tree ? MIN(t.chunk, t.tree_max) : MIN(step, t.chunk);
    }
    for (size_t i = 0; i < n_rows; i++)
        if (bytes < rows[i][0] * ops * chunk && chunk > rows[i][1])
            chunk = rows[i][1];
    return chunk;
}

/* enqueue.cc topoGetAlgoInfo: the channels and threads of the choice. */
static void tune_channels(const strata_nccl_comm *c, uint64_t bytes, strata_nccl_choice *out)
{
    uint32_t nc, nt;
    if (out->algo == STRATA_NCCL_NVLS || out->algo == STRATA_NCCL_NVLS_TREE) {
        nc = nvls_tuning(c).channels; /* enqueue.cc topoGetAlgoInfo: comm->nvlsChannels */
        nt = NCCL_MAX_NTHREADS;
        uint32_t heads = 0;
        double bw;
        strata_nccl_nvls_graph(c, &heads, &bw);
        out->heads = heads;
        out->chunk_bytes = nvls_chunk(c, out->algo, bytes, (uint64_t)nc * heads);
        out->nvls_efficiency = strata_nccl_version_kernels(ver(c))->nvls_efficiency[c->arch];
        out->nvls_us = ver(c)->nvlink_lat[out->algo][out->proto];
    } else {
        nc = strata_nccl_comm_channels(c);
        nt = max_threads[out->proto];
        uint64_t threshold = thread_threshold[out->proto];
        if (out->algo == STRATA_NCCL_RING && out->proto == STRATA_NCCL_LL)
            threshold *= c->ranks;
        while (bytes < (uint64_t)nc * nt * threshold && nc >= 2)
            nc--;
        while (bytes < (uint64_t)nc * nt * threshold && nt % 128 == 0)
            nt /= 2;
        if (out->algo == STRATA_NCCL_TREE || out->algo == STRATA_NCCL_PAT)
            nt = NCCL_MAX_NTHREADS;
    }
    out->channels = nc;
    out->threads = nt;
    /* v2.19's runRing (src/device/all_reduce.h): minChunkSize =
     * nthreads x calcBytePerGrain / sizeof(T), halved on LL128. From
     * v2.25 runRing rounds the last loop's chunk up to 16 bytes on every
     * protocol: "if (remCount < loopCount) chunkCount =
     * alignUp(divUp(remCount, nranks), 16/sizeof(T))" (NVIDIA/nccl
     * v2.25.1-1 src/device/all_reduce.h l. 36, the same in v2.26.2-1 to
     * v2.28.7-1 l. 36, v2.30.7-1 l. 38), so an all-reduce of at most 16
     * bytes a channel is one chunk, the other ranks' steps empty. strata
     * takes it on LL and LL128 (one slice a step). Not on Simple: the
     * schedule cuts a chunk evenly into its 2 slices, where prims_simple.h
     * (v2.25.1-1 l. 200-201) gives the first slice at least a 32nd of a
     * slice's buffer, so a 16-byte chunk is one slice and an empty one;
     * cut evenly it would be two rounds of flag flights, not one */
    out->ring_grain_bytes = 0;
    if (out->algo == STRATA_NCCL_RING && out->proto != STRATA_NCCL_SIMPLE)
        out->ring_grain_bytes = ver(c)->ring_chunk_grain ? (uint64_t)nt * (out->proto == STRATA_NCCL_LL ? 8 : 30)
                                                         : RING_ALIGN_BYTES;
}

double strata_nccl_tuner_time_us(const strata_nccl_tuner *t, const void *comm, strata_op_kind kind, strata_nccl_algo a,
                                 strata_nccl_proto p, uint64_t bytes)
{
    double lat, bw;
    if (!t->model(comm, kind, a, p, &lat, &bw))
        return -1;
    t->correct(comm, kind, a, p, bytes, &lat, &bw);
    return bw > 0 ? lat + (double)bytes / (1000 * bw) : -1;
}

double strata_nccl_argmin(const strata_nccl_tuner *t, const void *comm, strata_op_kind kind, uint64_t bytes,
                          unsigned n_algos, strata_nccl_algo *algo, strata_nccl_proto *proto)
{
    double best = -1;
    for (unsigned a = 0; a < n_algos; a++)
        for (unsigned p = 0; p < PROTOS; p++) {
            double time = strata_nccl_tuner_time_us(t, comm, kind, (strata_nccl_algo)a, (strata_nccl_proto)p, bytes);
            if (time >= 0 && (best < 0 || time < best)) {
                best = time;
                *algo = (strata_nccl_algo)a;
                *proto = (strata_nccl_proto)p;
            }
        }
    return best;
}

bool strata_nccl_choose(const strata_nccl_comm *c, strata_op_kind kind, uint64_t bytes, strata_nccl_choice *out)
{
    double best = strata_nccl_argmin(&nccl_tuner, c, kind, bytes, ALGOS, &out->algo, &out->proto);
    if (best < 0)
        return false;
    /* a tuner plugin's cost 0 on its pair: NCCL takes it (the time stays
     * NCCL's model's estimate of that pair) */
    uint32_t plugin_channels;
    if (strata_nccl_plugin_choose(c->plugin, c, kind, bytes, &out->algo, &out->proto, &plugin_channels))
        best = strata_nccl_time_us(c, kind, out->algo, out->proto, bytes);
    out->time_us = best;
    out->base_us = ver(c)->base_lat[out->algo][out->proto];
    out->chunk_bytes = 0;
    out->nvls_efficiency = 0;
    out->nvls_us = 0;
    out->heads = 0;
    out->net_step_us = nodes_of(c) > 1 ? net_step(c, out->algo, out->proto) : 0;
    out->stage_gbs = 0;
    tune_channels(c, bytes, out);
    bool nvls = out->algo == STRATA_NCCL_NVLS || out->algo == STRATA_NCCL_NVLS_TREE;
    uint32_t max = nvls ? nvls_tuning(c).channels : strata_nccl_comm_channels(c);
    /* getAlgoInfo: the plugin's nMaxChannels replaces NCCL's count (its
     * threads stay NCCL's); scheduleCollTasksToPlan caps it at the
     * communicator's channels (comm->nChannels, or nvlsChannels) */
    if (plugin_channels > 0)
        out->channels = MIN(plugin_channels, max);
    /* enqueue.cc scheduleCollTasksToPlan: the channels the buffer's cells
     * fill (nccl_channels.h); task->count is an all-gather's or
     * reduce-scatter's part per rank */
    uint64_t count = kind == STRATA_OP_ALL_REDUCE ? bytes : bytes / MAX(1u, c->ranks);
    strata_nccl_split split = strata_nccl_channel_split(ver(c), kind, out->proto, c->ranks, count, out->channels, max);
    out->run_channels = split.channels;
    out->chan_lo_bytes = split.lo;
    out->chan_mid_bytes = split.mid;
    uint32_t nodes = nodes_of(c), heads;
    double bw;
    if (out->algo == STRATA_NCCL_NVLS_TREE && nodes > 1 && kind == STRATA_OP_ALL_REDUCE &&
        strata_nccl_nvls_graph(c, &heads, &bw))
        out->stage_gbs = heads * strata_nccl_version_kernels(ver(c))->nvls_tree_bw[c->arch][nodes <= 2 ? 1 : 2] *
                         c->ranks / (2.0 * (c->ranks - 1));
    return true;
}
