/*
 * test_nccl_plugin.c: NCCL tuner plugins' choices (sim/hw/nccl_plugin.h):
 * aws-ofi-nccl v1.16.3's p5 region tuner, read by hand from
 * src/tuner/nccl_ofi_regions.cpp region_init_internal_p5_p5e (all-reduce,
 * 8 ranks a node), and the hardware key that names it.
 *
 * The regions in the (bytes, ranks) plane, first match wins:
 *   1 Tree/LL128    left of {0,16} {31457280,16} {37748736,32}
 *                   {117440512,64} ... : at 32 ranks up to 37748736 B
 *   2 NVLS_TREE     the segment y = 16 from 31457281 (2 nodes: never used)
 *   3 Ring/LL128    {31457280,17} {1073741824,17} {2147483648,64} ...
 *                   {37748736,32}: at 32 ranks from 37748736 to
 *                   1073741824 + 1073741824 x 15/47 = 1416425384.9 B;
 *                   at 64 ranks up to 2147483648
 *   4 NVLS_TREE     above 128 ranks; beyond 8053063680 B above the line
 *                   through {8053063680,160} {9663676416,192}: ranks =
 *                   bytes / 50331648 (slope 32 / 1610612736, through 0),
 *                   extended to 100 GiB (extend_region)
 *   5 Ring/Simple   {1073741824,17} {100 GiB,17} {100 GiB, 2133.3}
 *                   {9663676416,192} {8053063680,160} {2684354560,64}
 *                   {1610612736,32}: at 32 ranks from 1610612736 B, at 64
 *                   from 2684354560, below that line
 * So, 8 ranks a node:
 *   4 nodes (32): 32 MiB Tree/LL128; 40 MiB and 1 GiB Ring/LL128;
 *     1.5e9 B none (between regions 3 and 5); 2 GiB Ring/Simple;
 *     37748736 B exactly (a vertex of region 1) Tree/LL128
 *   8 nodes (64): 2.5e9 B none; 4 GiB Ring/Simple
 *   32 nodes (256): 16 GiB Ring/Simple (the line is at 341.3 ranks there)
 *   64 nodes (512): 16 GiB NVLS_TREE/Simple (above the line)
 *   2 nodes: none (region_get_coll_info_internal_v3 skips <= 2 nodes);
 *   all-gather: none (no p5 region with 8 ranks a node); 4 ranks a node:
 *   none.
 * With NCCL_ALGO=Ring the Tree region is skipped (its pair is ignored)
 * and 32 MiB at 32 ranks lies in no other: none.
 *
 * Also the net plugin's latency property (nccl_net_latency: aws-ofi-nccl
 * reports 75 us on p5, src/platform-aws.cpp), which NCCL's model adds to
 * every step between nodes, twice on Simple (tuning.cc interLat).
 */
#include <inttypes.h>
#include "testutil.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"
#include "hw/nccl_plugin.h"
#include "hw/nccl_tuning.h"

static strata_nccl_comm p5(uint32_t nodes)
{
    strata_nccl_comm c = {.arch = STRATA_NCCL_HOPPER, .ranks = 8 * nodes, .graph_channels = 12, .channel_gbs = 30.0,
                          .nvls = true, .nodes = nodes, .nics = 32, .nic_gbs = 12.5, .nic_gpus = 8,
                          .cpu = STRATA_NCCL_INTEL, .version = strata_nccl_version_find("2.28")};
    c.plugin = strata_nccl_plugin_find("aws-ofi-p5");
    ck_assert(c.version && c.plugin);
    return c;
}

/* the plugin's pair for bytes on c: true with (a, p), or false */
static bool pick(const strata_nccl_comm *c, strata_op_kind kind, uint64_t bytes, strata_nccl_algo *a,
                 strata_nccl_proto *p)
{
    uint32_t channels;
    bool chose = strata_nccl_plugin_choose(c->plugin, c, kind, bytes, a, p, &channels);
    ck_assert_uint_eq(channels, 0); /* aws-ofi-nccl changes nChannels on p6 only */
    return chose;
}

static void expect(const strata_nccl_comm *c, uint64_t bytes, strata_nccl_algo want_a, strata_nccl_proto want_p)
{
    strata_nccl_algo a;
    strata_nccl_proto p;
    ck_assert_msg(pick(c, STRATA_OP_ALL_REDUCE, bytes, &a, &p), "no region at %llu B, %u ranks",
                  (unsigned long long)bytes, c->ranks);
    ck_assert_int_eq(a, want_a);
    ck_assert_int_eq(p, want_p);
}

static void expect_none(const strata_nccl_comm *c, strata_op_kind kind, uint64_t bytes)
{
    strata_nccl_algo a;
    strata_nccl_proto p;
    ck_assert_msg(!pick(c, kind, bytes, &a, &p), "a region at %llu B, %u ranks", (unsigned long long)bytes,
                  c->ranks);
}

START_TEST(p5_regions_at_4_nodes)
{
    strata_nccl_comm c = p5(4);
    expect(&c, 32u << 20, STRATA_NCCL_TREE, STRATA_NCCL_LL128);
    expect(&c, 37748736, STRATA_NCCL_TREE, STRATA_NCCL_LL128);
    expect(&c, 40u << 20, STRATA_NCCL_RING, STRATA_NCCL_LL128);
    expect(&c, 1u << 30, STRATA_NCCL_RING, STRATA_NCCL_LL128);
    expect(&c, 1416425000, STRATA_NCCL_RING, STRATA_NCCL_LL128);
    expect_none(&c, STRATA_OP_ALL_REDUCE, 1416426000);
    expect_none(&c, STRATA_OP_ALL_REDUCE, 1500000000);
    expect(&c, 2ull << 30, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE);
    expect_none(&c, STRATA_OP_ALL_GATHER, 512u << 20);
    expect_none(&c, STRATA_OP_REDUCE_SCATTER, 512u << 20);
}
END_TEST

START_TEST(p5_regions_by_nodes)
{
    strata_nccl_comm c8 = p5(8), c32 = p5(32), c64 = p5(64), c2 = p5(2);
    expect_none(&c8, STRATA_OP_ALL_REDUCE, 2500000000);
    expect(&c8, 4ull << 30, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE);
    expect(&c32, 16ull << 30, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE);
    expect(&c64, 16ull << 30, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE);
    expect_none(&c2, STRATA_OP_ALL_REDUCE, 32u << 20);
    expect_none(&c2, STRATA_OP_ALL_REDUCE, 64u << 20);
    strata_nccl_comm half = p5(4); /* 4 ranks a node: other tables, not p5's 8 */
    half.ranks = 16;
    expect_none(&half, STRATA_OP_ALL_REDUCE, 32u << 20);
}
END_TEST

/* A pair NCCL does not run is skipped, and the next region tried. */
START_TEST(ignored_pairs_are_skipped)
{
    strata_nccl_comm c = p5(4);
    c.algos = 1u << STRATA_NCCL_RING; /* NCCL_ALGO=Ring */
    expect_none(&c, STRATA_OP_ALL_REDUCE, 32u << 20);
    expect(&c, 64u << 20, STRATA_NCCL_RING, STRATA_NCCL_LL128);
    strata_nccl_comm s = p5(4);
    s.protos = 1u << STRATA_NCCL_SIMPLE; /* NCCL_PROTO=Simple */
    expect_none(&s, STRATA_OP_ALL_REDUCE, 64u << 20);
    expect(&s, 2ull << 30, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE);
}
END_TEST

/* strata_nccl_choose takes the plugin's pair with NCCL's estimate of it;
 * without the plugin NCCL's own model picks another at 32 MiB. */
START_TEST(choose_takes_the_plugins_pair)
{
    strata_nccl_comm c = p5(4);
    strata_nccl_choice ch;
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 32u << 20, &ch));
    ck_assert_int_eq(ch.algo, STRATA_NCCL_TREE);
    ck_assert_int_eq(ch.proto, STRATA_NCCL_LL128);
    ck_assert_double_eq_tol(ch.time_us,
                            strata_nccl_time_us(&c, STRATA_OP_ALL_REDUCE, STRATA_NCCL_TREE, STRATA_NCCL_LL128, 32u << 20),
                            1e-9);
    c.plugin = NULL;
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 32u << 20, &ch));
    ck_assert(ch.algo != STRATA_NCCL_TREE || ch.proto != STRATA_NCCL_LL128);
}
END_TEST

/* The net plugin's latency L in NCCL's estimate, 2 nodes of 8 (16 ranks),
 * all-gather on the ring (NCCL 2.28's tables; nsteps 15, one of them
 * between the nodes, the intra-node steps at max(NVLink's, the network
 * overhead) = NVLink's):
 *   LL128:  base 14.0 + 14 x 1.9 + (4.0 + L)       = 44.6 + L
 *   Simple: base  8.4 + 14 x 3.4 + (14.0 + 2 L)    = 70.0 + 2 L
 * so L = 75 us gives 119.6 and 220.0 us. The bandwidths (188.42 and
 * 204.80 GB/s, unchanged by L) put the crossover at
 * (70.0 - 44.6 + L) / (1 / 188.42 - 1 / 204.80) / 1000 bytes: 59.9 MB at
 * L = 0 (a 128 MiB all-gather runs Simple), 236.6 MB at 75 us (128 MiB
 * LL128, 256 MiB Simple). The step cost the schedule pays over the
 * network stays hwLatencies[NET] (14 us on Simple): the property steers
 * the choice only. */
START_TEST(net_latency_adds_to_the_inter_steps)
{
    strata_nccl_comm c = p5(2);
    double lat, bw;
    strata_nccl_choice ch;
    ck_assert(strata_nccl_model(&c, STRATA_OP_ALL_GATHER, STRATA_NCCL_RING, STRATA_NCCL_LL128, &lat, &bw));
    ck_assert_double_eq_tol(lat, 44.6, 1e-9);
    ck_assert_double_eq_tol(bw, 188.42, 0.005);
    ck_assert(strata_nccl_model(&c, STRATA_OP_ALL_GATHER, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(lat, 70.0, 1e-9);
    ck_assert_double_eq_tol(bw, 204.80, 0.005);
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_GATHER, 128u << 20, &ch));
    ck_assert_int_eq(ch.proto, STRATA_NCCL_SIMPLE);
    c.net_latency_us = 75.0;
    ck_assert(strata_nccl_model(&c, STRATA_OP_ALL_GATHER, STRATA_NCCL_RING, STRATA_NCCL_LL128, &lat, &bw));
    ck_assert_double_eq_tol(lat, 119.6, 1e-9);
    ck_assert(strata_nccl_model(&c, STRATA_OP_ALL_GATHER, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(lat, 220.0, 1e-9);
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_GATHER, 128u << 20, &ch));
    ck_assert_int_eq(ch.algo, STRATA_NCCL_RING);
    ck_assert_int_eq(ch.proto, STRATA_NCCL_LL128);
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_GATHER, 256u << 20, &ch));
    ck_assert_int_eq(ch.proto, STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(ch.net_step_us, 14.0, 1e-12);
}
END_TEST

/* The refusal of an nccl_tuner_plugin value that names no row, on STRATA_TEST_NCCL_HW_HEAD's line 15: the row
 * list, with the p6 rows' release ranges. */
#define PLUGIN_REFUSED(got) \
    "t.ini:15: [interconnect x] nccl_tuner_plugin: expected a tuner plugin strata has the choices of (an aws-ofi-p6 " \
    "row holds its release to the next row's: b200 -v1.16 for v1.16.0-v1.16.3, -v1.17 for v1.17.0-v1.18.0, -v1.19 " \
    "for v1.19.0-v1.21.1; b300 -v1.18 for v1.18.0, -v1.19 from v1.19.0): aws-ofi-p5, aws-ofi-p6-b200-v1.15, " \
    "aws-ofi-p6-b200-v1.16, aws-ofi-p6-b200-v1.17, aws-ofi-p6-b200-v1.19, aws-ofi-p6-b300-v1.18, " \
    "aws-ofi-p6-b300-v1.19, gcp-gib-a3u, gcp-gib-a4, gcp-tcpxo-a3m, got '" got "'"

/* The hardware key reaches the choice (4 nodes of h100-16x8-ib, 32 MiB:
 * Tree/LL128, as above), and an unknown name is refused at its line. */
START_TEST(hw_key_names_the_plugin)
{
    const char *set[] = {"interconnect.nvlink.nccl_version=2.28", "interconnect.nvlink.nccl_tuner_plugin=aws-ofi-p5",
                         NULL};
    strata_hw *hw = strata_test_load_hw("h100-16x8-ib", set);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 32, 8, 32u << 20, 0, &t, NULL));
    ck_assert_int_eq(t.algo, STRATA_NCCL_TREE);
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL128);
    strata_hw_free(hw);
    ck_assert_str_eq(strata_nccl_plugin_name(strata_nccl_plugin_find("aws-ofi-p5")), "aws-ofi-p5");
    ck_assert_ptr_null(strata_nccl_plugin_find("aws-ofi-p6"));
    static const char head[] = STRATA_TEST_NCCL_HW_HEAD;
    strata_test_hw_text_refused(head, "nccl_tuner_plugin = aws-ofi-p9\n",
                                PLUGIN_REFUSED("aws-ofi-p9"));
    /* a release between two rows (v1.18.0's p6-b200 table is v1.17.0's) is not a row: refused, the hint names it */
    strata_test_hw_text_refused(head, "nccl_tuner_plugin = aws-ofi-p6-b200-v1.18\n",
                                PLUGIN_REFUSED("aws-ofi-p6-b200-v1.18"));
}
END_TEST

/* The hardware key reaches the choice: 2 nodes of h100-16x8-ib, a
 * 128 MiB all-gather (8 MiB a rank) runs Simple without it and LL128 with
 * aws-ofi-nccl's 75 us (the crossover above); a value that is not a time
 * is refused at its line. */
START_TEST(hw_key_sets_the_net_latency)
{
    const char *plain[] = {"interconnect.nvlink.nccl_version=2.28", NULL};
    const char *ofi[] = {"interconnect.nvlink.nccl_version=2.28", "interconnect.nvlink.nccl_net_latency=75us", NULL};
    strata_nccl_proto want[2] = {STRATA_NCCL_SIMPLE, STRATA_NCCL_LL128};
    for (int i = 0; i < 2; i++) {
        strata_hw *hw = strata_test_load_hw("h100-16x8-ib", i ? ofi : plain);
        strata_coll_tuning t;
        ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_GATHER, 16, 8, 8u << 20, 0, &t, NULL));
        ck_assert_int_eq(t.algo, STRATA_NCCL_RING);
        ck_assert_int_eq(t.proto, want[i]);
        strata_hw_free(hw);
    }
    static const char head[] = STRATA_TEST_NCCL_HW_HEAD;
    strata_test_hw_text_refused(head, "nccl_net_latency = soon\n", "t.ini:15: [interconnect x] nccl_net_latency:");
}
END_TEST

/* aws-ofi-nccl's p5 environment (src/platform-aws.cpp v1.16.3):
 * NCCL_BUFFSIZE 8 MiB, NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE
 * 512 KiB. On h100-16x8-ib (8 NICs a node, the NVLS heads; 16 NVLS
 * channels on Hopper): concurrentOps = 16 x 8 = 128. NVLS_TREE's chunk
 * (enqueue.cc calcCollChunking) starts at min(NVLS chunk, tree max) and
 * drops to 256 KiB while bytes < 32 x 128 x chunk (2 GiB at 512 KiB), to
 * 128 KiB below 16 x 128 x 256 KiB = 512 MiB: 8 GiB keeps 512 KiB, 1 GiB
 * runs 256 KiB. Unset: 128 KiB at 2 nodes (the tree's maximum is the
 * chunk); at 4 nodes the tree's maximum is 64 KiB unless set, so the NVLS
 * chunk alone gives 64 KiB. Simple's step: 8 MiB / NCCL_STEPS = 1 MiB
 * (0 unset: NCCL's 4 MiB buffer). Sizes not a multiple of 512 B, or
 * outside their range, are refused. */
START_TEST(platform_env_sets_the_chunks)
{
    const char *plain[] = {"interconnect.nvlink.nccl_version=2.28", NULL};
    const char *env[] = {"interconnect.nvlink.nccl_version=2.28", "interconnect.nvlink.nccl_buffsize=8MiB",
                         "interconnect.nvlink.nccl_nvls_chunksize=512KiB",
                         "interconnect.nvlink.nccl_nvlstree_max_chunksize=512KiB", NULL};
    const char *chunk_only[] = {"interconnect.nvlink.nccl_version=2.28", "interconnect.nvlink.nccl_nvls_chunksize=512KiB",
                                NULL};
    uint32_t nvls_tree = 1u << STRATA_NCCL_NVLS_TREE;
    strata_coll_tuning t;
    strata_hw *hw = strata_test_load_hw("h100-16x8-ib", plain);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 8ull << 30, nvls_tree, &t, NULL));
    ck_assert_int_eq(t.algo, STRATA_NCCL_NVLS_TREE);
    ck_assert_uint_eq(t.chunk_bytes, 128u << 10);
    ck_assert_uint_eq(t.simple_step_bytes, 0);
    strata_hw_free(hw);
    hw = strata_test_load_hw("h100-16x8-ib", env);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 8ull << 30, nvls_tree, &t, NULL));
    ck_assert_uint_eq(t.chunk_bytes, 512u << 10);
    ck_assert_uint_eq(t.simple_step_bytes, 1u << 20);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 1ull << 30, nvls_tree, &t, NULL));
    ck_assert_uint_eq(t.chunk_bytes, 256u << 10);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 32, 8, 8ull << 30, nvls_tree, &t, NULL));
    ck_assert_uint_eq(t.chunk_bytes, 512u << 10);
    strata_hw_free(hw);
    hw = strata_test_load_hw("h100-16x8-ib", chunk_only);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 8ull << 30, nvls_tree, &t, NULL));
    ck_assert_uint_eq(t.chunk_bytes, 512u << 10);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 32, 8, 8ull << 30, nvls_tree, &t, NULL));
    ck_assert_uint_eq(t.chunk_bytes, 64u << 10);
    strata_hw_free(hw);
    static const char head[] = STRATA_TEST_NCCL_HW_HEAD;
    strata_test_hw_text_refused(head, "nccl_buffsize = 1000\n", "t.ini:15: [interconnect x] nccl_buffsize:");
    strata_test_hw_text_refused(head, "nccl_buffsize = 512MiB\n", "t.ini:15: [interconnect x] nccl_buffsize:");
    strata_test_hw_text_refused(head, "nccl_nvls_chunksize = lots\n",
                                "t.ini:15: [interconnect x] nccl_nvls_chunksize:");
    strata_test_hw_text_refused(head, "nccl_ring_wait = sometimes\n",
                                "t.ini:15: [interconnect x] nccl_ring_wait: expected round or channel, got 'sometimes'");
}
END_TEST

/* nccl_nic_group: 4 NICs of 12.5 GB/s a GPU (p5's EFA), 4 nodes of 8.
 * Each NIC its own device: 32 NICs a node; the inter-node speed array's
 * first speed a NIC carries is 12 GB/s, one channel a NIC, at most
 * MAXCHANNELS / 2 = 16: 16 x 12 GB/s, below 25 no duplication, so the
 * communicator's 2 x 16 = 32 channels. Grouped by 4 (aws-ofi-nccl's RDMA
 * rails): 8 NICs of 50 GB/s; 48 GB/s a channel would need 8 x 48 = 384
 * GB/s of the GPU's NVLink, which the ring graph puts at 12 x 30 = 360, so
 * 45: 8 x 45 GB/s, not duplicated on Hopper below 50 GB/s with more than
 * 4 channels, so 2 x 8 = 16 channels. The tuned 32 MiB all-reduce runs
 * them (Tree/LL128 under either); a group of 0 is refused. */
START_TEST(nic_group_joins_a_gpus_nics)
{
    const char *set[] = {"interconnect.nvlink.nccl_version=2.28", "interconnect.nvlink.nccl_tuner_plugin=aws-ofi-p5",
                         "network.ib.nics=4", "network.ib.bandwidth=12.5GB/s", NULL, NULL};
    const uint32_t want[] = {32, 16};
    for (int grouped = 0; grouped < 2; grouped++) {
        set[4] = grouped ? "interconnect.nvlink.nccl_nic_group=4" : NULL;
        strata_hw *hw = strata_test_load_hw("h100-16x8-ib", set);
        strata_coll_tuning t;
        ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 32, 8, 32u << 20, 0, &t, NULL));
        ck_assert_int_eq(t.algo, STRATA_NCCL_TREE);
        ck_assert_int_eq(t.proto, STRATA_NCCL_LL128);
        ck_assert_uint_eq(t.channels, want[grouped]);
        strata_hw_free(hw);
    }
    strata_nccl_comm c = {.arch = STRATA_NCCL_HOPPER, .ranks = 32, .graph_channels = 12, .channel_gbs = 30,
                          .nodes = 4, .nics = 8, .nic_gbs = 50, .nic_gpus = 8};
    uint32_t channels;
    double gbs;
    strata_nccl_net_graph(&c, &channels, &gbs);
    ck_assert_uint_eq(channels, 8);
    ck_assert_double_eq_tol(gbs, 45.0, 1e-12);
    static const char head[] = STRATA_TEST_NCCL_HW_HEAD;
    strata_test_hw_text_refused(head, "nccl_nic_group = 0\n",
                                "t.ini:15: [interconnect x] nccl_nic_group: expected a whole number from 1 to 64");
}
END_TEST

/* nccl_net_latency: NCCL's model adds the net plugin's latency to every
 * step over the network, twice on Simple. Two p5 nodes as NCCL sees them
 * (8 NICs of 50 GB/s, 16 ranks), 32 MiB: 75 us (aws-ofi-nccl's p5 figure)
 * adds to the ring's 2 (nodes - 1) = 2 network steps 2 x 75 = 150 us on
 * LL128, to the tree's 2 log2(2) = 2 levels 150 us on LL128 and 300 on
 * Simple, to NVLS_TREE's 2 levels 2 x 2 x 75 = 300 us (Simple). NCCL's
 * choice turns from NVLS_TREE/Simple to Ring/LL128; the network step the
 * schedule charges (net_step_us) stays NCCL's hwLatencies' (4.0 us on
 * Ring/LL128). */
START_TEST(net_latency_steers_the_choice)
{
    strata_nccl_comm c = {.arch = STRATA_NCCL_HOPPER, .ranks = 16, .graph_channels = 12, .channel_gbs = 30,
                          .nvls = true, .nodes = 2, .nics = 8, .nic_gbs = 50, .nic_gpus = 8,
                          .version = strata_nccl_version_find("2.28")};
    uint64_t b = 32u << 20;
    static const struct {
        strata_nccl_algo a;
        strata_nccl_proto p;
        double more_us;
    } pairs[] = {{STRATA_NCCL_RING, STRATA_NCCL_LL128, 150},
                 {STRATA_NCCL_TREE, STRATA_NCCL_LL128, 150},
                 {STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, 300},
                 {STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE, 300}};
    strata_nccl_choice ch;
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, b, &ch));
    ck_assert_int_eq(ch.algo, STRATA_NCCL_NVLS_TREE);
    double before[G_N_ELEMENTS(pairs)];
    for (size_t i = 0; i < G_N_ELEMENTS(pairs); i++)
        before[i] = strata_nccl_time_us(&c, STRATA_OP_ALL_REDUCE, pairs[i].a, pairs[i].p, b);
    c.net_latency_us = 75;
    for (size_t i = 0; i < G_N_ELEMENTS(pairs); i++)
        ck_assert_double_eq_tol(strata_nccl_time_us(&c, STRATA_OP_ALL_REDUCE, pairs[i].a, pairs[i].p, b) - before[i],
                                pairs[i].more_us, 1e-6);
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, b, &ch));
    ck_assert_int_eq(ch.algo, STRATA_NCCL_RING);
    ck_assert_int_eq(ch.proto, STRATA_NCCL_LL128);
    ck_assert_double_eq_tol(ch.net_step_us, 4.0, 1e-12);
}
END_TEST

/* aws-ofi-nccl's environment on one p6-b200 node (validation/hw/p6-b200.ini:
 * NCCL_NVLS_CHUNKSIZE 512 KiB, which the net plugin's platform_init sets
 * on every communicator, one node included; its tuner chooses nothing on
 * 2 nodes or fewer). NCCL 2.27 on 8 B200 runs the all-reduce as NVLS/Simple
 * on nvlsChannels = 24 (NVLS_NCHANNELS_SM100_NVL) with 8 heads, so
 * concurrentOps = 24 x 8 = 192 for the whole buffer (calcCollChunking per
 * channel with 8, on a 24th of the bytes). Its NVLS branch: chunk =
 * min(Simple's step, the NVLS chunk) = 512 KiB, cut to 64 KiB while bytes
 * < 64 x 192 x 512 KiB = 6 GiB, then to 32 KiB below 8 x 192 x 64 KiB =
 * 96 MiB. So 4 GiB and 6 GiB - 1 KiB run 64 KiB chunks, 6 GiB and 8 GiB
 * 512 KiB (the run's step from 740.6 GB/s at 4 GiB to 839.1 at 8 GiB
 * lies across that edge). Without the plugin (hgx-b200.ini, NCCL's 128
 * KiB): 64 KiB below 64 x 192 x 128 KiB = 1.5 GiB, so 1 GiB 64 KiB, 4 and
 * 8 GiB 128 KiB. On 6 of the GPUs (6 heads, 144 ops) the edge is
 * 64 x 144 x 512 KiB = 4.5 GiB: 8 GiB 512 KiB. */
START_TEST(p6_env_moves_the_nvls_chunk)
{
    const char *p6_set[] = {"hardware.devices=8", "interconnect.nvlink.nccl_version=2.27", NULL};
    const char *p6_six[] = {"hardware.devices=6", "interconnect.nvlink.nccl_version=2.27", NULL};
    const char *plain[] = {"interconnect.nvlink.nccl_version=2.27", NULL};
    char *path = strata_test_source_path("validation/hw/p6-b200.ini");
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, p6_set, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    strata_coll_tuning t;
    const struct {
        uint64_t bytes, chunk;
    } p6[] = {{4ull << 30, 64u << 10}, {(6ull << 30) - 1024, 64u << 10}, {6ull << 30, 512u << 10},
              {8ull << 30, 512u << 10}, {64ull << 20, 32u << 10}};
    for (size_t i = 0; i < G_N_ELEMENTS(p6); i++) {
        ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, p6[i].bytes, 0, &t, NULL));
        ck_assert_int_eq(t.algo, STRATA_NCCL_NVLS);
        ck_assert_uint_eq(t.channels, 24);
        ck_assert_msg(t.chunk_bytes == p6[i].chunk, "p6 %" PRIu64 " B: chunk %" PRIu64, p6[i].bytes, t.chunk_bytes);
    }
    strata_hw_free(hw);
    hw = strata_hw_load(path, p6_six, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 6, 6, 8ull << 30, 0, &t, NULL));
    ck_assert_int_eq(t.algo, STRATA_NCCL_NVLS);
    ck_assert_uint_eq(t.chunk_bytes, 512u << 10);
    strata_hw_free(hw);
    g_free(path);
    hw = strata_test_load_hw("hgx-b200", plain);
    const struct {
        uint64_t bytes, chunk;
    } nccl[] = {{1ull << 30, 64u << 10}, {4ull << 30, 128u << 10}, {8ull << 30, 128u << 10}};
    for (size_t i = 0; i < G_N_ELEMENTS(nccl); i++) {
        ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, nccl[i].bytes, 0, &t, NULL));
        ck_assert_int_eq(t.algo, STRATA_NCCL_NVLS);
        ck_assert_uint_eq(t.chunk_bytes, nccl[i].chunk);
    }
    strata_hw_free(hw);
}
END_TEST

static Suite *nccl_plugin_suite(void)
{
    Suite *s = suite_create("nccl_plugin");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, p5_regions_at_4_nodes);
    tcase_add_test(tc, p5_regions_by_nodes);
    tcase_add_test(tc, ignored_pairs_are_skipped);
    tcase_add_test(tc, choose_takes_the_plugins_pair);
    tcase_add_test(tc, hw_key_names_the_plugin);
    tcase_add_test(tc, net_latency_adds_to_the_inter_steps);
    tcase_add_test(tc, hw_key_sets_the_net_latency);
    tcase_add_test(tc, nic_group_joins_a_gpus_nics);
    tcase_add_test(tc, net_latency_steers_the_choice);
    tcase_add_test(tc, platform_env_sets_the_chunks);
    tcase_add_test(tc, p6_env_moves_the_nvls_chunk);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_plugin_suite()); }
