/*
 * nccl_plugin.c: NCCL tuner plugins' choices (contract in nccl_plugin.h).
 * gIB's tables, and TCPXO's A3 Mega table (the same tuner), are
 * nccl_plugin_gib.c's.
 *
 * aws-ofi-p5: aws/aws-ofi-nccl tag v1.16.3 (the release the p5 runs of
 * validation/clusters.ini used), src/tuner/nccl_ofi_regions.cpp:
 *   - region_get_coll_info_internal_v3 (l. 1312-1386): no choice with 2
 *     nodes or fewer ("the regions are not well defined"); else the first
 *     region holding (nBytes, nRanks) whose pair the cost table has
 *     (regions whose pair is NCCL_ALGO_PROTO_IGNORE are skipped), cost 0;
 *     nChannels is changed on p6 only;
 *   - region_init_internal_p5_p5e (l. 608-903): with 8 ranks a node, the
 *     all-reduce's regions below (ncclFuncAllReduce alone: all-gather and
 *     reduce-scatter have regions only with 1 rank a node, so NCCL
 *     chooses them itself); with 2 or 1 a node, other tables (not here:
 *     the p5's 8 GPUs are 8 ranks a node in every run strata models);
 *   - extend_region (l. 244-272): the point on line a-b at z's x or y,
 *     whichever is reached first;
 *   - is_inside_region (l. 137-221): on an edge counts as inside; else a
 *     ray cast. Here the ray is horizontal (pnpoly's half-open rule) where
 *     the plugin casts one towards (2 x TUNER_MAX_SIZE, 2 x
 *     TUNER_MAX_RANKS); the two agree off the vertices (the plugin asserts
 *     its ray meets none).
 * TUNER_MAX_SIZE 100 GiB and TUNER_MAX_RANKS 1024 x 1024
 * (include/tuner/nccl_ofi_tuner_region.h).
 *
 * aws-ofi-p6-*: the p6-b200 and p6-b300 tables, each release's where it
 * changed (the functions' text compared tag by tag, v1.15.0 to v1.21.1):
 * region_init_internal_p6 differs at v1.15.0, v1.16.0, v1.17.0 and v1.19.0
 * (v1.19.0's all-reduce vertices are v1.17.0's: it changed the
 * reduce-scatter's Ring/Simple region at 8 ranks a node, one vertex
 * {8589934592, 512} more, and the 1-rank tables, none of which is here);
 * region_init_internal_p6_b300 is new in v1.18.0 and
 * unchanged since. From v1.19.0 the vertices and the point are taken to
 * log2 before the test (coord_plane below), so the same vertices draw
 * other edges: a region's bound between two vertices is the straight line
 * in log-log. The plugin's edge test there is a distance under 1e-10
 * (is_inside_region v1.19.0 l. 158-220); here the same, with the foot on
 * the segment. region_get_coll_info_internal_v3 keeps the 2-node skip
 * and the order in every release read.
 */
#include "hw/nccl_plugin.h"
#include <math.h>
#include <string.h>
#include "hw/nccl_plugin_gib.h"
#include <glib.h>
#include "core/named_rows.h"

#define MAX_SIZE (100.0 * 1024 * 1024 * 1024)
#define MAX_RANKS (1024.0 * 1024)
#define MAX_VERTICES 20

typedef struct pt {
    double x, y; /* bytes, ranks */
} pt;

/* The plane a release's regions live in: its own (bytes, ranks) up to
 * v1.18.0; from v1.19.0 log2 of both (commit 8f22799f "tuner: transform
 * coordinates to log-log scale": set_regions, extend_region and the point
 * in region_get_coll_info_internal_v3 call transform_log2, 0 taken as
 * 1e-6, include/tuner/nccl_ofi_tuner_region.h v1.19.0 l. 69-92), so an
 * edge between two vertices is straight in log-log. */
typedef enum { LINEAR = 0, LOG2 } coord_plane;

typedef struct region {
    strata_nccl_algo algo;
    strata_nccl_proto proto;
    size_t n;
    pt v[MAX_VERTICES];
} region;

/* A row names what its tuner reads and nothing else: aws-ofi-nccl's its
 * regions, gIB's its table (the other left NULL, STRATA_GIB_NONE). */
struct strata_nccl_plugin {
    const char *name;
    /* aws-ofi-nccl's: the regions of `kind` on c (in the plugin's order);
     * 0: none */
    size_t (*regions)(const strata_nccl_comm *c, strata_op_kind kind, coord_plane pl, region *out, size_t max);
    coord_plane plane; /* aws-ofi-nccl's: where its edges are straight */
    /* gIB's: its table (where regions is NULL) */
    strata_gib_table gib;
};

/* transform_log2: 0 is taken as 1e-6 */
static pt to_log2(pt p) { return (pt){log2(p.x == 0 ? 1e-6 : p.x), log2(p.y == 0 ? 1e-6 : p.y)}; }

/* extend_region in the linear plane */
static pt extend(pt a, pt b, pt z)
{
    if (a.x == b.x)
        return (pt){a.x, z.y};
    if (a.y == b.y)
        return (pt){z.x, a.y};
    double m = (a.y - b.y) / (a.x - b.x), c = b.y - m * b.x, zy = m * z.x + c;
    return zy < z.y ? (pt){z.x, zy} : (pt){(z.y - c) / m, z.y};
}

/* p on segment a-b (collinear and inside its box) */
static bool on_edge(pt p, pt a, pt b)
{
    long double cross = (long double)(b.x - a.x) * (p.y - a.y) - (long double)(b.y - a.y) * (p.x - a.x);
    return cross == 0 && p.x >= MIN(a.x, b.x) && p.x <= MAX(a.x, b.x) && p.y >= MIN(a.y, b.y) &&
           p.y <= MAX(a.y, b.y);
}

/* extend_region from v1.19.0: a, b and z in log2, the point found there
 * taken back by transform_pow2 */
static pt extend_log2(pt a, pt b, pt z)
{
    pt e = extend(to_log2(a), to_log2(b), to_log2(z));
    return (pt){exp2(e.x), exp2(e.y)};
}

/* p within 1e-10 of segment a-b, its foot on the segment (is_inside_region
 * from v1.19.0: distance() < eps, which is HUGE_VAL where the
 * perpendicular from p misses the segment) */
static bool near_edge(pt p, pt a, pt b)
{
    const double eps = 1e-10;
    double dx = b.x - a.x, dy = b.y - a.y, len2 = dx * dx + dy * dy;
    if (len2 == 0)
        return hypot(p.x - a.x, p.y - a.y) < eps;
    double t = ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2;
    if (t < -eps || t > 1 + eps)
        return false;
    return hypot(p.x - (a.x + t * dx), p.y - (a.y + t * dy)) < eps;
}

static bool inside(pt p, const region *r, coord_plane pl)
{
    bool in = false;
    if (pl == LOG2)
        p = to_log2(p);
    for (size_t i = 0, j = r->n - 1; i < r->n; j = i++) {
        pt a = r->v[i], b = r->v[j];
        if (pl == LOG2) {
            a = to_log2(a);
            b = to_log2(b);
        }
        if (pl == LOG2 ? near_edge(p, a, b) : on_edge(p, a, b))
            return true;
        if ((a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x)
            in = !in;
    }
    return in;
}

/* region_init_internal_p5_p5e, nRanks == 8 x nNodes, ncclFuncAllReduce
 * (l. 615-693), in its order */
static size_t p5_regions(const strata_nccl_comm *c, strata_op_kind kind, coord_plane pl, region *out, size_t max)
{
    (void)pl; /* v1.16.3: linear */
    uint32_t nodes = c->nodes > 1 ? c->nodes : 1;
    if (kind != STRATA_OP_ALL_REDUCE || c->ranks != 8 * nodes)
        return 0;
    const pt z = {MAX_SIZE, MAX_RANKS};
    pt tree_ll128 = extend((pt){402653184, 2048}, (pt){402653184, 4096}, z);
    pt nvlstree_1 = extend((pt){8053063680, 160}, (pt){9663676416, 192}, z);
    pt nvlstree_2 = extend((pt){402653184, 2048}, (pt){402653184, 4096}, z);
    pt ring_simple = extend((pt){8053063680, 160}, (pt){9663676416, 192}, z);
    const region r[] = {
        {STRATA_NCCL_TREE, STRATA_NCCL_LL128, 12,
         {{0, 16}, {31457280, 16}, {37748736, 32}, {117440512, 64}, {301989888, 128}, {301989888, 256},
          {335544320, 512}, {536870912, 1024}, {402653184, 2048}, {402653184, 4096}, tree_ll128,
          {0, tree_ll128.y}}},
        {STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE, 3, {{31457281, 16}, {MAX_SIZE, 16}, {31457281, 16}}},
        {STRATA_NCCL_RING, STRATA_NCCL_LL128, 11,
         {{31457280, 17}, {1073741824, 17}, {2147483648, 64}, {2147483648, 128}, {1342177280, 160},
          {2147483648, 256}, {1074790400, 256}, {444596224, 160}, {301989888, 128}, {117440512, 64},
          {37748736, 32}}},
        {STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE, 17,
         {{2147483648, 128}, {6442450944, 128}, {8053063680, 160}, {9663676416, 192}, nvlstree_1, nvlstree_2,
          {402653184, 4096}, {402653184, 2048}, {536870912, 1024}, {335544320, 512}, {301989888, 256},
          {310378496, 160}, {444596224, 160}, {1074790400, 256}, {2684354560, 256}, {2147483648, 224},
          {1342177280, 160}}},
        {STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 7,
         {{1073741824, 17}, {ring_simple.x, 17}, ring_simple, {9663676416, 192}, {8053063680, 160},
          {2684354560, 64}, {1610612736, 32}}},
    };
    size_t n = MIN(G_N_ELEMENTS(r), max);
    memcpy(out, r, n * sizeof *r);
    return n;
}

/* the first `max` of regions r[0..n) into out */
static size_t copy_regions(const region *r, size_t n, region *out, size_t max)
{
    n = MIN(n, max);
    memcpy(out, r, n * sizeof *r);
    return n;
}

/* all-reduce with 8 ranks a node: the p6 tables' only regions strata reads */
static bool p6_all_reduce(const strata_nccl_comm *c, strata_op_kind kind)
{
    uint32_t nodes = c->nodes > 1 ? c->nodes : 1;
    return kind == STRATA_OP_ALL_REDUCE && c->ranks == 8 * nodes;
}

/* region_init_internal_p6, v1.15.0 (34e79f1d) l. 940-1001: nRanks == 8 x
 * nNodes, ncclFuncAllReduce, in its order. M = TUNER_MAX_SIZE, R =
 * TUNER_MAX_RANKS written out as the source has them. */
static size_t p6_b200_v115(const strata_nccl_comm *c, strata_op_kind kind, coord_plane pl, region *out,
                           size_t max)
{
    (void)pl; /* v1.15.0, v1.16.x: linear */
    if (!p6_all_reduce(c, kind))
        return 0;
    const region r[] = {
        {STRATA_NCCL_TREE, STRATA_NCCL_LL, 4, {{0, 16}, {262144, 16}, {262144, 1024}, {262144, 1048576}}},
        {STRATA_NCCL_TREE, STRATA_NCCL_LL128, 11,
         {{262144, 1048576}, {262144, 1024}, {262144, 16}, {55574528, 16}, {67108864, 32}, {465567744, 128},
          {962592768, 256}, {1610612736, 512}, {2684354560, 1024}, {107374182400, 50944}, {107374182400, 1048576}}},
        {STRATA_NCCL_RING, STRATA_NCCL_LL128, 12,
         {{55574528, 16}, {87031808, 16}, {562036736, 32}, {17179869184, 1024}, {107374182400, 6408.141},
          {107374182400, 33962.667}, {3758096384, 1024}, {2147483648, 512}, {1610612736, 512}, {962592768, 256},
          {465567744, 128}, {67108864, 32}}},
        {STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE, 6,
         {{1610612736, 512}, {2147483648, 512}, {3758096384, 1024}, {107374182400, 33962.667},
          {107374182400, 50944}, {2684354560, 1024}}},
        {STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE, 4,
         {{87031808, 16}, {107374182400, 16}, {107374182400, 32}, {562036736, 32}}},
        {STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 4,
         {{562036736, 32}, {107374182400, 32}, {107374182400, 6408.141}, {17179869184, 1024}}},
    };
    return copy_regions(r, G_N_ELEMENTS(r), out, max);
}

/* v1.16.0 to v1.16.3 (b9e4cc42 l. 944-1006): v1.15.0's, but the second
 * NVLS_TREE region is the segment at 16 ranks from 87031808 B (2 nodes:
 * never read) and Ring/Simple takes the strip from 16 to 32 ranks beyond
 * the line 87031808 B @16 - 562036736 B @32. */
static size_t p6_b200_v116(const strata_nccl_comm *c, strata_op_kind kind, coord_plane pl, region *out,
                           size_t max)
{
    size_t n = p6_b200_v115(c, kind, pl, out, max);
    if (n < 6)
        return n;
    out[4] = (region){STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE, 4,
                      {{87031808, 16}, {107374182400, 16}, {107374182400, 16}, {87031808, 16}}};
    out[5] = (region){STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 5,
                      {{562036736, 32}, {87031808, 16}, {107374182400, 16}, {107374182400, 6408.141},
                       {17179869184, 1024}}};
    return n;
}

/* v1.17.0 to v1.18.0 (l. 950-1025, the same text and lines at v1.17.0
 * 9a68289c, v1.17.3 93fa84ca and v1.18.0 86ebeaf5) and, with the same
 * vertices in log2, v1.19.0 to v1.21.1 (4afc89b7 l. 967-1042). */
static size_t p6_b200_v117(const strata_nccl_comm *c, strata_op_kind kind, coord_plane pl, region *out,
                           size_t max)
{
    if (!p6_all_reduce(c, kind))
        return 0;
    pt (*ext)(pt, pt, pt) = pl == LOG2 ? extend_log2 : extend;
    const pt z = {MAX_SIZE, MAX_RANKS};
    pt tree_ll = ext((pt){393216, 16}, (pt){393216, 1024}, z);
    pt tree_ll128 = ext((pt){96993280, 1024}, (pt){106430464, 2048}, z);
    pt nvlstree = ext((pt){10737418240, 512}, (pt){34359738368, 1500}, z);
    const region r[] = {
        {STRATA_NCCL_TREE, STRATA_NCCL_LL, 4, {{0, 16}, {393216, 16}, tree_ll, {0, MAX_RANKS}}},
        {STRATA_NCCL_TREE, STRATA_NCCL_LL128, 10,
         {tree_ll, {393216, 16}, {4718592, 16}, {18350080, 32}, {40370176, 64}, {57147392, 128}, {72876032, 256},
          {96993280, 1024}, {106430464, 2048}, tree_ll128}},
        {STRATA_NCCL_RING, STRATA_NCCL_LL128, 5,
         {{90701824, 128}, {50855936, 64}, {18350080, 32}, {133693440, 32}, {120061952, 64}}},
        {STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE, 19,
         {tree_ll128, {106430464, 2048}, {96993280, 1024}, {72876032, 256}, {57147392, 128}, {40370176, 64},
          {18350080, 32}, {50855936, 64}, {90701824, 128}, {120061952, 64}, {133693440, 32}, {18350080, 32},
          {4718592, 16}, {MAX_SIZE, 16}, {435159040, 32}, {1072693248, 64}, {10737418240, 512},
          {34359738368, 1500}, nvlstree}},
        {STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 5,
         {nvlstree, {10737418240, 512}, {1072693248, 64}, {435159040, 32}, {MAX_SIZE, 16}}},
    };
    return copy_regions(r, G_N_ELEMENTS(r), out, max);
}

/* region_init_internal_p6_b300 (p6-b300.48xlarge, from v1.18.0: 86ebeaf5
 * l. 1309-1414; the same vertices in log2 from v1.19.0, 4afc89b7 l.
 * 1333-1438), nRanks == 8 x nNodes, ncclFuncAllReduce. */
static size_t p6_b300(const strata_nccl_comm *c, strata_op_kind kind, coord_plane pl, region *out, size_t max)
{
    if (!p6_all_reduce(c, kind))
        return 0;
    pt (*ext)(pt, pt, pt) = pl == LOG2 ? extend_log2 : extend;
    const pt z = {MAX_SIZE, MAX_RANKS};
    pt tree_ll = ext((pt){360448, 1024}, (pt){360448, 2048}, z);
    pt tree_ll128 = ext((pt){218103808, 1024}, (pt){251658240, 2048}, z);
    pt nvlstree = ext((pt){9663676416, 256}, (pt){19327352832, 512}, z);
    const region r[] = {
        {STRATA_NCCL_TREE, STRATA_NCCL_LL, 11,
         {{0, 16}, {720896, 16}, {491520, 32}, {425984, 64}, {425984, 128}, {425984, 256}, {360448, 512},
          {360448, 1024}, {360448, 2048}, tree_ll, {0, MAX_RANKS}}},
        {STRATA_NCCL_TREE, STRATA_NCCL_LL128, 18,
         {tree_ll, {360448, 2048}, {360448, 1024}, {360448, 512}, {425984, 256}, {425984, 128}, {425984, 64},
          {491520, 32}, {720896, 16}, {31457280, 16}, {54525952, 32}, {109051904, 64}, {125829120, 128},
          {125829120, 256}, {184549376, 512}, {218103808, 1024}, {251658240, 2048}, tree_ll128}},
        {STRATA_NCCL_RING, STRATA_NCCL_LL128, 8,
         {{369098752, 128}, {109051904, 64}, {54525952, 32}, {31457280, 16}, {62914560, 16}, {603979776, 32},
          {1006632960, 64}, {1006632960, 128}}},
        {STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE, 19,
         {tree_ll128, {251658240, 2048}, {218103808, 1024}, {184549376, 512}, {125829120, 256},
          {125829120, 128}, {109051904, 64}, {369098752, 128}, {1006632960, 128}, {1006632960, 64},
          {603979776, 32}, {62914560, 16}, {MAX_SIZE, 16}, {603979776, 32}, {2013265920, 64},
          {4026531840, 128}, {9663676416, 256}, {19327352832, 512}, nvlstree}},
        {STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 7,
         {nvlstree, {19327352832, 512}, {9663676416, 256}, {4026531840, 128}, {2013265920, 64}, {603979776, 32},
          {MAX_SIZE, 16}}},
    };
    return copy_regions(r, G_N_ELEMENTS(r), out, max);
}

static const strata_nccl_plugin plugins[] = {
    {.name = "aws-ofi-p5", .regions = p5_regions},
    {.name = "aws-ofi-p6-b200-v1.15", .regions = p6_b200_v115},
    {.name = "aws-ofi-p6-b200-v1.16", .regions = p6_b200_v116},
    {.name = "aws-ofi-p6-b200-v1.17", .regions = p6_b200_v117},
    {.name = "aws-ofi-p6-b200-v1.19", .regions = p6_b200_v117, .plane = LOG2},
    {.name = "aws-ofi-p6-b300-v1.18", .regions = p6_b300},
    {.name = "aws-ofi-p6-b300-v1.19", .regions = p6_b300, .plane = LOG2},
    {.name = "gcp-gib-a3u", .gib = STRATA_GIB_A3U},
    {.name = "gcp-gib-a4", .gib = STRATA_GIB_A4},
    {.name = "gcp-tcpxo-a3m", .gib = STRATA_GIB_TCPXO_A3M},
};

const strata_nccl_plugin *strata_nccl_plugin_find(const char *name)
{
    return strata_rows_find(plugins, G_N_ELEMENTS(plugins), sizeof plugins[0], name);
}

char *strata_nccl_plugin_list(void)
{
    return strata_rows_names(plugins, G_N_ELEMENTS(plugins), sizeof plugins[0]);
}

const char *strata_nccl_plugin_name(const strata_nccl_plugin *pl) { return pl->name; }

/* the first region holding (bytes, ranks) whose pair NCCL runs */
static bool aws_choose(const strata_nccl_plugin *pl, const strata_nccl_comm *c, strata_op_kind kind, uint64_t bytes,
                       strata_nccl_algo *algo, strata_nccl_proto *proto)
{
    if (c->nodes <= 2) /* region_get_coll_info_internal_v3: 2 nodes or fewer, NCCL's own */
        return false;
    region r[8];
    size_t n = pl->regions(c, kind, pl->plane, r, G_N_ELEMENTS(r));
    pt p = {(double)bytes, (double)c->ranks};
    for (size_t i = 0; i < n; i++) {
        double lat, bw;
        if (!strata_nccl_model(c, kind, r[i].algo, r[i].proto, &lat, &bw)) /* NCCL_ALGO_PROTO_IGNORE */
            continue;
        if (inside(p, &r[i], pl->plane)) {
            *algo = r[i].algo;
            *proto = r[i].proto;
            return true;
        }
    }
    return false;
}

/* gIB's rule for the communicator's nodes and ranks per node (what the
 * tuner makes of NCCL's nRanks and nNodes, strata_gib_ranks_per_node:
 * the floor where they do not divide evenly), at the per-rank size
 * (nccl_plugin_gib.h: NCCL's nBytes for an all-reduce, else nBytes /
 * nRanks), where NCCL runs its pair (ESTIMATE, as aws-ofi-nccl's tuner: a
 * pair NCCL_ALGO_PROTO_IGNORE'd is not taken) */
static bool gib_choose(const strata_nccl_plugin *pl, const strata_nccl_comm *c, strata_op_kind kind, uint64_t bytes,
                       strata_nccl_algo *algo, strata_nccl_proto *proto, uint32_t *channels)
{
    uint32_t nodes = c->nodes > 1 ? c->nodes : 1;
    uint64_t per_rank = kind == STRATA_OP_ALL_REDUCE ? bytes : bytes / MAX(1u, c->ranks);
    strata_nccl_algo a;
    strata_nccl_proto p;
    uint32_t nc;
    double lat, bw;
    if (!strata_gib_rule(pl->gib, nodes, strata_gib_ranks_per_node(c->ranks, nodes), kind, per_rank, &a, &p, &nc) ||
        !strata_nccl_model(c, kind, a, p, &lat, &bw))
        return false;
    *algo = a;
    *proto = p;
    *channels = nc;
    return true;
}

bool strata_nccl_plugin_choose(const strata_nccl_plugin *pl, const strata_nccl_comm *c, strata_op_kind kind,
                               uint64_t bytes, strata_nccl_algo *algo, strata_nccl_proto *proto,
                               uint32_t *channels)
{
    *channels = 0;
    if (!pl)
        return false;
    return pl->regions ? aws_choose(pl, c, kind, bytes, algo, proto)
                       : gib_choose(pl, c, kind, bytes, algo, proto, channels);
}
