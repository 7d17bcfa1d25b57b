/*
 * test_nccl_plugin_p6.c: aws-ofi-nccl's p6 region tables (sim/hw/nccl_plugin.h
 * rows aws-ofi-p6-b200-v1.15 ... aws-ofi-p6-b300-v1.19), read by hand from
 * aws/aws-ofi-nccl src/tuner/nccl_ofi_regions.cpp (region_init_internal_p6,
 * region_init_internal_p6_b300), all-reduce with 8 ranks a node.
 *
 * p6-b200, v1.17.0-v1.18.0 (linear): at 32 ranks every bound is a vertex
 * with y = 32: Tree/LL to 393216 B (the vertical x = 393216, extended to
 * TUNER_MAX_RANKS), Tree/LL128 to 18350080, Ring/LL128 {18350080,32} to
 * {133693440,32}, NVLS_TREE/Simple to {435159040,32}, Ring/Simple beyond.
 * So 64 MiB Ring/LL128, 128 MiB (134217728 > 133693440) NVLS_TREE, 512
 * MiB (536870912 > 435159040) Ring/Simple; 133693440 itself, a vertex of
 * Ring/LL128 (tried before NVLS_TREE), Ring/LL128.
 * v1.19.0 on: the same vertices, so the same at 32 ranks. At 24 ranks (3
 * nodes) the edges between the vertices at 16 and 32 ranks differ:
 *   Tree/LL128's right edge {4718592,16}-{18350080,32}: linear 4718592 +
 *   (24-16)/16 x 13631488 = 11534336 B; log-log 4718592 x (18350080 /
 *   4718592)^(log2 24 - 4) = 4718592 x 3.8889^0.58496 = 10443311.9 B.
 *   So 11000000 B: v1.17 Tree/LL128, v1.19 NVLS_TREE/Simple (the region
 *   below {18350080,32} to {4718592,16} and {100 GiB,16}).
 *   NVLS_TREE's right edge {100 GiB,16}-{435159040,32}: linear (M +
 *   435159040) / 2 = 53904670720 B; log-log M x (435159040 /
 *   M)^0.58496 = 4280773402.4 B. So 4200000000 B: NVLS_TREE in both;
 *   4 GiB (4294967296): v1.17 NVLS_TREE, v1.19 Ring/Simple.
 * v1.15.0: Tree/LL128 to {67108864,32} (64 MiB, a vertex: Tree/LL128),
 *   Ring/LL128 to {562036736,32}, then the second NVLS_TREE region
 *   {87031808,16} {M,16} {M,32} {562036736,32}: 1 GiB NVLS_TREE/Simple.
 * v1.16.x: that NVLS_TREE region is the segment y = 16 only, and
 *   Ring/Simple holds {562036736,32} {87031808,16} {M,16} ...: 1 GiB at 32
 *   ranks Ring/Simple; 128 MiB Ring/LL128 in both.
 * p6-b300 (v1.18.0 linear): at 32 ranks Tree/LL128 to {54525952,32},
 *   Ring/LL128 to {603979776,32}, Ring/Simple beyond (NVLS_TREE touches
 *   y = 32 at 603979776 only). 50 MiB Tree/LL128, 64 MiB Ring/LL128, 1 GiB
 *   Ring/Simple. At 24 ranks Ring/LL128's right edge {62914560,16}-
 *   {603979776,32}: linear 333447168 B, log-log 62914560 x (9.6)^0.58496 =
 *   236234324.7 B: 256 MiB (268435456) v1.18 Ring/LL128, v1.19
 *   NVLS_TREE/Simple.
 * Off the vertex rows at 48 ranks (6 nodes; log2 48 - 5 = 0.58496 of the way
 *   from 32 to 64 ranks in log-log, 0.5 in linear), p6-b200: NVLS_TREE's
 *   right edge {435159040,32}-{1072693248,64}: linear 753926144 B, log-log
 *   435159040 x 2.46506^0.58496 = 737653531.4 B, so 745000000 B v1.17
 *   NVLS_TREE/Simple, v1.19 Ring/Simple; Ring/LL128's left edge
 *   {18350080,32}-{50855936,64}: linear 34603008 B, log-log 18350080 x
 *   2.77143^0.58496 = 33312177.3 B, so 34000000 B v1.17 NVLS_TREE/Simple
 *   (the strip between it and Tree/LL128's edge {18350080,32}-
 *   {40370176,64}, 29360128 / 29103310.3 B), v1.19 Ring/LL128.
 *   p6-b300 at 40 ranks (5 nodes; log2 40 - 5 = 0.32193): Ring/LL128's
 *   right edge {603979776,32}-{1006632960,64}: linear 704643072 B,
 *   log-log 603979776 x 1.66667^0.32193 = 711937291.5 B (the log-log edge
 *   lies right of the straight one here); NVLS_TREE's strip beyond it ends
 *   at {603979776,32}-{2013265920,64} (956301312 / 889921614.4 B). So
 *   708000000 B v1.18 NVLS_TREE/Simple, v1.19 Ring/LL128.
 * Every table: 2 nodes none (the v3 call skips num_nodes <= 2), 4 ranks a
 * node none, all-gather none (not held here).
 */
#include "testutil.h"
#include "hw/nccl_plugin.h"
#include "hw/nccl_tuning.h"

static strata_nccl_comm p6(const char *row, uint32_t nodes)
{
    strata_nccl_comm c = {.arch = STRATA_NCCL_BLACKWELL, .ranks = 8 * nodes, .graph_channels = 16,
                          .channel_gbs = 45.0, .nvls = true, .nodes = nodes, .nics = 8, .nic_gbs = 50.0,
                          .nic_gpus = 8, .cpu = STRATA_NCCL_INTEL, .version = strata_nccl_version_find("2.27")};
    c.plugin = strata_nccl_plugin_find(row);
    ck_assert_msg(c.version && c.plugin, "no row %s", row);
    return c;
}

static void expect(const char *row, uint32_t nodes, uint64_t bytes, strata_nccl_algo want_a,
                   strata_nccl_proto want_p)
{
    strata_nccl_comm c = p6(row, nodes);
    strata_nccl_algo a;
    strata_nccl_proto p;
    uint32_t channels;
    ck_assert_msg(strata_nccl_plugin_choose(c.plugin, &c, STRATA_OP_ALL_REDUCE, bytes, &a, &p, &channels),
                  "%s: no region at %llu B, %u ranks", row, (unsigned long long)bytes, c.ranks);
    ck_assert_msg(a == want_a && p == want_p, "%s at %llu B, %u ranks: %d/%d, expected %d/%d", row,
                  (unsigned long long)bytes, c.ranks, a, p, want_a, want_p);
    ck_assert_uint_eq(channels, 0);
}

static void expect_none(const char *row, uint32_t nodes, uint32_t ranks, strata_op_kind kind, uint64_t bytes)
{
    strata_nccl_comm c = p6(row, nodes);
    c.ranks = ranks;
    strata_nccl_algo a;
    strata_nccl_proto p;
    uint32_t channels;
    ck_assert_msg(!strata_nccl_plugin_choose(c.plugin, &c, kind, bytes, &a, &p, &channels), "%s: a region at %llu B",
                  row, (unsigned long long)bytes);
}

START_TEST(p6_b200_v117_at_32_ranks)
{
    const char *rows[] = {"aws-ofi-p6-b200-v1.17", "aws-ofi-p6-b200-v1.19"};
    for (size_t i = 0; i < 2; i++) {
        expect(rows[i], 4, 300000, STRATA_NCCL_TREE, STRATA_NCCL_LL);
        expect(rows[i], 4, 16u << 20, STRATA_NCCL_TREE, STRATA_NCCL_LL128);
        expect(rows[i], 4, 64u << 20, STRATA_NCCL_RING, STRATA_NCCL_LL128);
        expect(rows[i], 4, 133693440, STRATA_NCCL_RING, STRATA_NCCL_LL128);
        expect(rows[i], 4, 128u << 20, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE);
        expect(rows[i], 4, 435159040, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE);
        expect(rows[i], 4, 512u << 20, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE);
        expect(rows[i], 4, 16ull << 30, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE);
    }
}
END_TEST

/* v1.19's log-log edges at 24 ranks, against v1.17's straight ones */
START_TEST(p6_b200_log2_edges_at_24_ranks)
{
    expect("aws-ofi-p6-b200-v1.17", 3, 11000000, STRATA_NCCL_TREE, STRATA_NCCL_LL128);
    expect("aws-ofi-p6-b200-v1.19", 3, 11000000, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE);
    expect("aws-ofi-p6-b200-v1.19", 3, 10400000, STRATA_NCCL_TREE, STRATA_NCCL_LL128);
    expect("aws-ofi-p6-b200-v1.17", 3, 4ull << 30, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE);
    expect("aws-ofi-p6-b200-v1.19", 3, 4ull << 30, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE);
    expect("aws-ofi-p6-b200-v1.19", 3, 4200000000ull, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE);
}
END_TEST

/* between the vertex rows at 48 and 40 ranks (header: the edges there) */
START_TEST(p6_log2_edges_off_the_vertex_rows)
{
    expect("aws-ofi-p6-b200-v1.17", 6, 745000000, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE);
    expect("aws-ofi-p6-b200-v1.19", 6, 745000000, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE);
    expect("aws-ofi-p6-b200-v1.17", 6, 34000000, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE);
    expect("aws-ofi-p6-b200-v1.19", 6, 34000000, STRATA_NCCL_RING, STRATA_NCCL_LL128);
    expect("aws-ofi-p6-b300-v1.18", 5, 708000000, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE);
    expect("aws-ofi-p6-b300-v1.19", 5, 708000000, STRATA_NCCL_RING, STRATA_NCCL_LL128);
}
END_TEST

START_TEST(p6_b200_v115_and_v116)
{
    expect("aws-ofi-p6-b200-v1.15", 4, 64u << 20, STRATA_NCCL_TREE, STRATA_NCCL_LL128);
    expect("aws-ofi-p6-b200-v1.16", 4, 64u << 20, STRATA_NCCL_TREE, STRATA_NCCL_LL128);
    expect("aws-ofi-p6-b200-v1.15", 4, 128u << 20, STRATA_NCCL_RING, STRATA_NCCL_LL128);
    expect("aws-ofi-p6-b200-v1.16", 4, 512u << 20, STRATA_NCCL_RING, STRATA_NCCL_LL128);
    expect("aws-ofi-p6-b200-v1.15", 4, 1u << 30, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE);
    expect("aws-ofi-p6-b200-v1.16", 4, 1u << 30, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE);
}
END_TEST

START_TEST(p6_b300_tables)
{
    const char *rows[] = {"aws-ofi-p6-b300-v1.18", "aws-ofi-p6-b300-v1.19"};
    for (size_t i = 0; i < 2; i++) {
        expect(rows[i], 4, 50u << 20, STRATA_NCCL_TREE, STRATA_NCCL_LL128);
        expect(rows[i], 4, 64u << 20, STRATA_NCCL_RING, STRATA_NCCL_LL128);
        expect(rows[i], 4, 603979776, STRATA_NCCL_RING, STRATA_NCCL_LL128);
        expect(rows[i], 4, 1u << 30, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE);
    }
    expect("aws-ofi-p6-b300-v1.18", 3, 256u << 20, STRATA_NCCL_RING, STRATA_NCCL_LL128);
    expect("aws-ofi-p6-b300-v1.19", 3, 256u << 20, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE);
}
END_TEST

START_TEST(p6_no_choice)
{
    const char *rows[] = {"aws-ofi-p6-b200-v1.15", "aws-ofi-p6-b200-v1.16", "aws-ofi-p6-b200-v1.17",
                          "aws-ofi-p6-b200-v1.19", "aws-ofi-p6-b300-v1.18", "aws-ofi-p6-b300-v1.19"};
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        expect_none(rows[i], 2, 16, STRATA_OP_ALL_REDUCE, 64u << 20);
        expect_none(rows[i], 4, 16, STRATA_OP_ALL_REDUCE, 64u << 20);
        expect_none(rows[i], 4, 32, STRATA_OP_ALL_GATHER, 64u << 20);
    }
}
END_TEST

static Suite *nccl_plugin_p6_suite(void)
{
    Suite *s = suite_create("nccl_plugin_p6");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, p6_b200_v117_at_32_ranks);
    tcase_add_test(tc, p6_b200_log2_edges_at_24_ranks);
    tcase_add_test(tc, p6_log2_edges_off_the_vertex_rows);
    tcase_add_test(tc, p6_b200_v115_and_v116);
    tcase_add_test(tc, p6_b300_tables);
    tcase_add_test(tc, p6_no_choice);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_plugin_p6_suite()); }
