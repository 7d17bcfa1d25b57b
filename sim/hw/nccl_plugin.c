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
 */
#include "hw/nccl_plugin.h"
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
    size_t (*regions)(const strata_nccl_comm *c, strata_op_kind kind, region *out, size_t max);
    /* gIB's: its table (where regions is NULL) */
    strata_gib_table gib;
};

/* extend_region */
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

static bool inside(pt p, const region *r)
{
    bool in = false;
    for (size_t i = 0, j = r->n - 1; i < r->n; j = i++) {
        pt a = r->v[i], b = r->v[j];
        if (on_edge(p, a, b))
            return true;
        if ((a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x)
            in = !in;
    }
    return in;
}

/* region_init_internal_p5_p5e, nRanks == 8 x nNodes, ncclFuncAllReduce
 * (l. 615-693), in its order */
static size_t p5_regions(const strata_nccl_comm *c, strata_op_kind kind, region *out, size_t max)
{
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

static const strata_nccl_plugin plugins[] = {
    {.name = "aws-ofi-p5", .regions = p5_regions},
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
    size_t n = pl->regions(c, kind, r, G_N_ELEMENTS(r));
    pt p = {(double)bytes, (double)c->ranks};
    for (size_t i = 0; i < n; i++) {
        double lat, bw;
        if (!strata_nccl_model(c, kind, r[i].algo, r[i].proto, &lat, &bw)) /* NCCL_ALGO_PROTO_IGNORE */
            continue;
        if (inside(p, &r[i])) {
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
