/*
 * test_nccl_plugin_gib.c: Google's gIB tuner tables (sim/hw/nccl_plugin_gib.h)
 * and the plugin rows that take them (gcp-gib-a3u, gcp-gib-a4, and
 * gcp-tcpxo-a3m, the same tuner's A3 Mega table), read by hand from the
 * tables (apple/axlearn @34aed43 axlearn/cloud/gcp/nccl/
 * a3_ultra/tuner_config.txtpb, a4_high/tuner_config.txtpb,
 * a3_mega/tuner_config.txtpb).
 *
 * A3 Ultra, 2 nodes [2, 3), 1 rank a node [1, 2):
 *   COLL_ALL_REDUCE  [0, 16384) Tree/LL 2; [16384, 65536) Tree/LL 4;
 *                    [65536, 524288) Ring/LL128 4; [524288, 4194304)
 *                    Ring/LL128 8; [4194304, 67108864) Ring/Simple 8;
 *                    [67108864, -) Tree/Simple 4
 *   COLL_DEFAULT     [0, 65536) Ring/LL 2; [65536, 524288) Ring/LL128 4;
 *                    [524288, 4194304) Ring/LL128 8; [4194304, -)
 *                    Ring/Simple 8
 * A3 Ultra, 3-4 nodes, 1 a node: COLL_ALL_GATHER [16384, 262144)
 *   PAT/Simple 2 (its own type, so not COLL_DEFAULT).
 * A3 Ultra has configs for 1 and for 8 or more ranks a node only: 4 ranks
 * a node match none.
 * A4, 5-8 nodes [5, 9), 4-8 ranks a node [4, 9): COLL_DEFAULT
 *   [2097152, 16777216) Ring/LL128 32, then [33554432, -) Ring/Simple 16:
 *   16 to 32 MiB a rank in no rule.
 * A4, 2 nodes, 4-8 a node: COLL_ALL_REDUCE [4194304, -) NVLS_TREE/Simple
 *   32.
 *
 * The per-rank size (ESTIMATE, nccl_plugin_gib.h): an all-reduce's buffer,
 * an all-gather's part (OUT / ranks). So a 2-rank all-gather of 128 KiB
 * OUT is 64 KiB a rank: Ring/LL128; of 128 KiB - 2 B, 65535 B: Ring/LL.
 *
 * Channels: the rule's count (the choice's nMaxChannels), capped at the
 * communicator's. Two A3 Ultra VMs of one H200 and one NIC each make
 * NCCL's ring graph 1 x 48 GB/s duplicated to 2 x 24 and comm->nChannels 4
 * (docs/validation.md, "NCCL's channels across nodes (wave 21)"):
 * Tree/LL 2 stays 2, Ring/Simple 8 is 4. Of those, the channels the
 * buffer's cells reach run (nccl_channels.h, scheduleCollTasksToPlan): an
 * all-reduce moves 2 bytes a byte, in Simple cells of 8 KiB; 8 MiB is 1024
 * cells at 16 MiB / 4 = 4 MiB of traffic (256 cells) a channel: 4 run. 1
 * KiB of LL (cells of 2 KiB) is one cell: one channel runs.
 */
#include <inttypes.h>
#include "testutil.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"
#include "hw/nccl_plugin.h"
#include "hw/nccl_plugin_gib.h"
#include "hw/nccl_tuning.h"

static void rule(strata_gib_table t, uint32_t nodes, uint32_t rpn, strata_op_kind kind, uint64_t per_rank,
                 strata_nccl_algo want_a, strata_nccl_proto want_p, uint32_t want_c)
{
    strata_nccl_algo a;
    strata_nccl_proto p;
    uint32_t c;
    ck_assert_msg(strata_gib_rule(t, nodes, rpn, kind, per_rank, &a, &p, &c), "no rule at %" PRIu64 " B", per_rank);
    ck_assert_msg(a == want_a && p == want_p && c == want_c, "%" PRIu64 " B: %d/%d %u", per_rank, a, p, c);
}

static void no_rule(strata_gib_table t, uint32_t nodes, uint32_t rpn, strata_op_kind kind, uint64_t per_rank)
{
    strata_nccl_algo a;
    strata_nccl_proto p;
    uint32_t c;
    ck_assert(!strata_gib_rule(t, nodes, rpn, kind, per_rank, &a, &p, &c));
}

START_TEST(a3u_two_nodes_of_one)
{
    const strata_op_kind AR = STRATA_OP_ALL_REDUCE, AG = STRATA_OP_ALL_GATHER;
    rule(STRATA_GIB_A3U, 2, 1, AR, 1024, STRATA_NCCL_TREE, STRATA_NCCL_LL, 2);
    rule(STRATA_GIB_A3U, 2, 1, AR, 16384, STRATA_NCCL_TREE, STRATA_NCCL_LL, 4);
    rule(STRATA_GIB_A3U, 2, 1, AR, 65535, STRATA_NCCL_TREE, STRATA_NCCL_LL, 4);
    rule(STRATA_GIB_A3U, 2, 1, AR, 65536, STRATA_NCCL_RING, STRATA_NCCL_LL128, 4);
    rule(STRATA_GIB_A3U, 2, 1, AR, 524288, STRATA_NCCL_RING, STRATA_NCCL_LL128, 8);
    rule(STRATA_GIB_A3U, 2, 1, AR, (64u << 20) - 1, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 8);
    rule(STRATA_GIB_A3U, 2, 1, AR, 64u << 20, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, 4);
    rule(STRATA_GIB_A3U, 2, 1, AR, 8ull << 30, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, 4);
    /* no COLL_ALL_GATHER rules in this config: COLL_DEFAULT's */
    rule(STRATA_GIB_A3U, 2, 1, AG, 65535, STRATA_NCCL_RING, STRATA_NCCL_LL, 2);
    rule(STRATA_GIB_A3U, 2, 1, AG, 4194303, STRATA_NCCL_RING, STRATA_NCCL_LL128, 8);
    rule(STRATA_GIB_A3U, 2, 1, AG, 4194304, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 8);
}
END_TEST

START_TEST(types_nodes_and_gaps)
{
    const strata_op_kind AR = STRATA_OP_ALL_REDUCE, AG = STRATA_OP_ALL_GATHER;
    rule(STRATA_GIB_A3U, 3, 1, AG, 16384, STRATA_NCCL_PAT, STRATA_NCCL_SIMPLE, 2);
    rule(STRATA_GIB_A3U, 4, 1, AG, 262143, STRATA_NCCL_PAT, STRATA_NCCL_SIMPLE, 2);
    no_rule(STRATA_GIB_A3U, 2, 4, AR, 1024);  /* 4 ranks a node: no config */
    no_rule(STRATA_GIB_A3U, 1, 8, AR, 1024);  /* one node: none */
    rule(STRATA_GIB_A4, 8, 8, AG, (16u << 20) - 1, STRATA_NCCL_RING, STRATA_NCCL_LL128, 32);
    no_rule(STRATA_GIB_A4, 8, 8, AG, 16u << 20);
    no_rule(STRATA_GIB_A4, 8, 8, AG, (32u << 20) - 1);
    rule(STRATA_GIB_A4, 8, 8, AG, 32u << 20, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 16);
    rule(STRATA_GIB_A4, 2, 8, AR, 4u << 20, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE, 32);
    rule(STRATA_GIB_A4, 2, 4, AR, (4u << 20) - 1, STRATA_NCCL_TREE, STRATA_NCCL_LL128, 32);
}
END_TEST

static strata_hw *a3u_2x1(void)
{
    const char *set[] = {"hardware.devices=2", "hardware.devices_per_host=1", "interconnect.nvlink.domain=1",
                         "interconnect.nvlink.nccl_version=2.26", NULL};
    char *path = strata_test_source_path("validation/held-out/hw/gcp-a3-ultra.ini");
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, set, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    g_free(path);
    return hw;
}

static void tuned(strata_hw *hw, strata_op_kind kind, uint64_t in_bytes, uint32_t algos, strata_nccl_algo want_a,
                  strata_nccl_proto want_p, uint32_t want_c)
{
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, kind, 2, 1, in_bytes, algos, &t, NULL));
    ck_assert_msg(t.algo == want_a && t.proto == want_p && t.channels == want_c, "%" PRIu64 " B: %d/%d %u",
                  in_bytes, t.algo, t.proto, t.channels);
}

/* gcp-a3-ultra.ini names gcp-gib-a3u: the rule's pair; an all-gather's
 * per-rank size is its IN */
START_TEST(a3u_file_takes_the_rules)
{
    strata_hw *hw = a3u_2x1();
    const strata_op_kind AR = STRATA_OP_ALL_REDUCE, AG = STRATA_OP_ALL_GATHER;
    tuned(hw, AR, 1024, 0, STRATA_NCCL_TREE, STRATA_NCCL_LL, 1);
    tuned(hw, AR, 8u << 20, 0, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 4);
    tuned(hw, AR, 64u << 20, 0, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, 4);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, AG, 2, 1, 65536, 0, &t, NULL));
    ck_assert(t.algo == STRATA_NCCL_RING && t.proto == STRATA_NCCL_LL128);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, AG, 2, 1, 65535, 0, &t, NULL));
    ck_assert(t.algo == STRATA_NCCL_RING && t.proto == STRATA_NCCL_LL);
    /* NCCL_ALGO=Ring: the rule's Tree is ignored, NCCL's own Ring runs
     * (Ring/LL on 1 channel at 1 KiB, as without the plugin) */
    tuned(hw, AR, 1024, 1u << STRATA_NCCL_RING, STRATA_NCCL_RING, STRATA_NCCL_LL, 1);
    strata_hw_free(hw);
}
END_TEST

/* The rule's channel count replaces NCCL's, at most the communicator's 4 */
START_TEST(rule_channels_capped_at_the_comms)
{
    strata_nccl_comm c = {.arch = STRATA_NCCL_HOPPER, .ranks = 2, .graph_channels = 12, .channel_gbs = 30.0,
                          .nvls = true, .nodes = 2, .nics = 1, .nic_gbs = 50.0, .nic_gpus = 1,
                          .cpu = STRATA_NCCL_INTEL, .version = strata_nccl_version_find("2.26")};
    c.plugin = strata_nccl_plugin_find("gcp-gib-a3u");
    ck_assert(c.version && c.plugin);
    ck_assert_uint_eq(strata_nccl_comm_channels(&c), 4);
    strata_nccl_choice ch;
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 1024, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_LL && ch.channels == 2);
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 8u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_SIMPLE && ch.channels == 4);
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_GATHER, 128u << 10, &ch)); /* 64 KiB a rank */
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_LL128 && ch.channels == 4);
    /* the estimate stays NCCL's model's for the pair */
    ck_assert_double_eq_tol(ch.time_us,
                            strata_nccl_time_us(&c, STRATA_OP_ALL_GATHER, STRATA_NCCL_RING, STRATA_NCCL_LL128,
                                                128u << 10),
                            1e-9);
}
END_TEST

/* A3 Mega's (TCPXO) table (axlearn/cloud/gcp/nccl/a3_mega/
 * tuner_config.txtpb, read by hand):
 *   2 nodes, 1 rank a node: COLL_ALL_REDUCE [0, -) Tree/Simple 2;
 *     COLL_DEFAULT [0, 65536) Ring/Simple 2, [65536, -) Ring/Simple 4
 *   2 nodes, 8 or more a node: COLL_ALL_REDUCE Tree/Simple, COLL_DEFAULT
 *     Ring/Simple, no num_channel (0: NCCL's own)
 *   3-6 nodes, 8 or more: COLL_ALL_REDUCE [0, 2097152) Tree/Simple (above,
 *     no rule: the config has all-reduce rules, so not COLL_DEFAULT's),
 *     COLL_DEFAULT Ring/Simple
 *   7 nodes, or 4 ranks a node: no config. */
START_TEST(tcpxo_a3m_rules)
{
    const strata_gib_table M = STRATA_GIB_TCPXO_A3M;
    const strata_op_kind AR = STRATA_OP_ALL_REDUCE, AG = STRATA_OP_ALL_GATHER, RS = STRATA_OP_REDUCE_SCATTER;
    rule(M, 2, 1, AR, 8, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, 2);
    rule(M, 2, 1, AR, 8ull << 30, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, 2);
    rule(M, 2, 1, AG, 65535, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 2);
    rule(M, 2, 1, RS, 65536, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 4);
    rule(M, 2, 8, AR, 8, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, 0);
    rule(M, 2, 8, AR, 8ull << 30, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, 0);
    rule(M, 2, 8, AG, 1024, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 0);
    rule(M, 6, 8, AR, (2u << 20) - 1, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, 0);
    no_rule(M, 6, 8, AR, 2u << 20);
    rule(M, 3, 8, AG, 2u << 20, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 0);
    no_rule(M, 7, 8, AR, 1024);
    no_rule(M, 2, 4, AR, 1024);
}
END_TEST

/* The table's pair where NCCL would choose otherwise, with NCCL's own
 * channels where its rule gives none: two H100 nodes of 8 GPUs and 8 NICs
 * (comm->nChannels 16, test_nccl_versions.c two_nodes), Ring and Tree on
 * Simple (TCPXO's NCCL_ALGO=Ring,Tree NCCL_PROTO=Simple). A 1 GiB
 * all-reduce: NCCL's model takes Ring there (checked first, so that the
 * table's Tree is a change), the table Tree; Tree runs NCCL's 16 channels
 * (1 GiB >= 16 x 512 x 64: no lowering); an all-gather Ring on 16. */
START_TEST(tcpxo_a3m_takes_tree_on_nccl_channels)
{
    strata_nccl_comm c = {.arch = STRATA_NCCL_HOPPER, .ranks = 16, .graph_channels = 12, .channel_gbs = 30.0,
                          .nvls = false, .nodes = 2, .nics = 8, .nic_gbs = 50.0, .nic_gpus = 8,
                          .cpu = STRATA_NCCL_INTEL, .version = strata_nccl_version_find("2.25"),
                          .algos = (1u << STRATA_NCCL_RING) | (1u << STRATA_NCCL_TREE),
                          .protos = 1u << STRATA_NCCL_SIMPLE};
    strata_nccl_choice ch;
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 1ull << 30, &ch));
    ck_assert_int_eq(ch.algo, STRATA_NCCL_RING);
    c.plugin = strata_nccl_plugin_find("gcp-tcpxo-a3m");
    ck_assert(c.plugin);
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 1ull << 30, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert_uint_eq(ch.channels, 16);
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_GATHER, 1ull << 30, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_SIMPLE && ch.channels == 16);
}
END_TEST

/* Nodes of unequal ranks: the tuner gets nRanks and nNodes alone
 * (strata_gib_ranks_per_node), so 17 ranks on 2 nodes are 8.5 a node,
 * which A3 Ultra's [8, -) holds, 15 on 2 are 7.5, which no config holds
 * (rounded up, 8, it would), and 3 on 2 are 1.5, in [1, 2) (rounded up,
 * 2, in none). A3 Ultra's all-reduce rules at 16384 B a rank (2 nodes,
 * nccl_plugin_gib.c's a3u): [8, -) a node: [8192, 32768) Tree/LL 16; [1,
 * 2): [16384, 65536) Tree/LL 4. One rank on two nodes is 0.5 a node: no
 * config. */
START_TEST(gib_ranks_per_node_uneven)
{
    ck_assert_uint_eq(strata_gib_ranks_per_node(17, 2), 8);
    ck_assert_uint_eq(strata_gib_ranks_per_node(15, 2), 7);
    ck_assert_uint_eq(strata_gib_ranks_per_node(16, 2), 8);
    ck_assert_uint_eq(strata_gib_ranks_per_node(1, 2), 0);
    ck_assert_uint_eq(strata_gib_ranks_per_node(8, 0), 8);
    strata_nccl_comm c = {.arch = STRATA_NCCL_HOPPER, .ranks = 17, .graph_channels = 12, .channel_gbs = 30.0,
                          .nodes = 2, .nics = 8, .nic_gbs = 50.0, .nic_gpus = 8, .cpu = STRATA_NCCL_INTEL,
                          .version = strata_nccl_version_find("2.26")};
    const strata_nccl_plugin *pl = strata_nccl_plugin_find("gcp-gib-a3u");
    ck_assert(c.version && pl);
    strata_nccl_algo a;
    strata_nccl_proto p;
    uint32_t ch;
    ck_assert(strata_nccl_plugin_choose(pl, &c, STRATA_OP_ALL_REDUCE, 16384, &a, &p, &ch));
    ck_assert(a == STRATA_NCCL_TREE && p == STRATA_NCCL_LL && ch == 16);
    c.ranks = 3;
    c.nic_gpus = 1;
    ck_assert(strata_nccl_plugin_choose(pl, &c, STRATA_OP_ALL_REDUCE, 16384, &a, &p, &ch));
    ck_assert(a == STRATA_NCCL_TREE && p == STRATA_NCCL_LL && ch == 4);
    c.ranks = 15;
    ck_assert(!strata_nccl_plugin_choose(pl, &c, STRATA_OP_ALL_REDUCE, 16384, &a, &p, &ch));
    c.ranks = 1;
    ck_assert(!strata_nccl_plugin_choose(pl, &c, STRATA_OP_ALL_REDUCE, 16384, &a, &p, &ch));
    ck_assert_uint_eq(ch, 0);
}
END_TEST

/* A row that is not gIB's names no table: STRATA_GIB_NONE holds no rule,
 * and aws-ofi-p5 on 2 nodes (its regions' "not well defined" case) leaves
 * the choice to NCCL where gcp-gib-a3u's table has a rule (2 nodes of 8:
 * all-reduce [0, 8192) Tree/LL 8) */
START_TEST(plugin_rows_name_only_their_tables)
{
    strata_nccl_algo a;
    strata_nccl_proto p;
    uint32_t ch;
    ck_assert(!strata_gib_rule(STRATA_GIB_NONE, 2, 8, STRATA_OP_ALL_REDUCE, 1024, &a, &p, &ch));
    strata_nccl_comm c = {.arch = STRATA_NCCL_HOPPER, .ranks = 16, .graph_channels = 12, .channel_gbs = 30.0,
                          .nodes = 2, .nics = 8, .nic_gbs = 50.0, .nic_gpus = 8, .cpu = STRATA_NCCL_INTEL,
                          .version = strata_nccl_version_find("2.26")};
    ck_assert(!strata_nccl_plugin_choose(strata_nccl_plugin_find("aws-ofi-p5"), &c, STRATA_OP_ALL_REDUCE, 1024, &a,
                                         &p, &ch));
    ck_assert(strata_nccl_plugin_choose(strata_nccl_plugin_find("gcp-gib-a3u"), &c, STRATA_OP_ALL_REDUCE, 1024, &a,
                                        &p, &ch));
    ck_assert(a == STRATA_NCCL_TREE && p == STRATA_NCCL_LL && ch == 8);
}
END_TEST

START_TEST(plugin_rows_by_name)
{
    ck_assert_str_eq(strata_nccl_plugin_name(strata_nccl_plugin_find("gcp-gib-a3u")), "gcp-gib-a3u");
    ck_assert_str_eq(strata_nccl_plugin_name(strata_nccl_plugin_find("gcp-gib-a4")), "gcp-gib-a4");
    ck_assert_str_eq(strata_nccl_plugin_name(strata_nccl_plugin_find("gcp-tcpxo-a3m")), "gcp-tcpxo-a3m");
    ck_assert_ptr_null(strata_nccl_plugin_find("gcp-gib"));
}
END_TEST

static Suite *nccl_plugin_gib_suite(void)
{
    Suite *s = suite_create("nccl_plugin_gib");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, a3u_two_nodes_of_one);
    tcase_add_test(tc, types_nodes_and_gaps);
    tcase_add_test(tc, a3u_file_takes_the_rules);
    tcase_add_test(tc, rule_channels_capped_at_the_comms);
    tcase_add_test(tc, tcpxo_a3m_rules);
    tcase_add_test(tc, tcpxo_a3m_takes_tree_on_nccl_channels);
    tcase_add_test(tc, plugin_rows_by_name);
    tcase_add_test(tc, gib_ranks_per_node_uneven);
    tcase_add_test(tc, plugin_rows_name_only_their_tables);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_plugin_gib_suite()); }
