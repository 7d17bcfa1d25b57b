/*
 * test_tiers.c: collectives across tiers (issue 39): NCCL's tuning model
 * across nodes and RCCL's on MI300X nodes, their figures derived by hand
 * from the libraries' tables (sim/hw/nccl_tuning.h, rccl_tuning.h), and
 * what the shipped clusters and nodes run: a 2 x 8 H100 all-reduce crosses
 * the network, an 8 x MI300X one drives every xGMI link.
 *
 * NCCL, 2 nodes of 8 H100 (ring graph 12 x 30 GB/s inside a node, 8 NICs
 * of 50 GB/s, Intel hosts): the ring graph through the NICs is 8 channels
 * of 45 GB/s (search.cc: at 48, 370.8 / 48 = 7 channels fit the NVLinks,
 * 336; at 45, 8 (one a NIC), 360; 42 and below give less and 22/45 < .49
 * ends the search; no duplication: SM90, below 50 GB/s, more than 4).
 *   Tree LL      6.8 + 2 x (7 x 0.6 + 1 x 5.0) = 25.2 us;
 *                min(360 x .92 = 331.2, 8 x 41.4) / 3.8 > 39 (llMaxBw,
 *                Intel, N2) -> 39 x .5 = 19.5 GB/s
 *   Ring Simple  8.4 + 28 x max(3.4, 1 x 3) + 2 x 14 = 131.6 us;
 *                360 x 16/30 = 192 GB/s
 *   NVLS_TREE    25 + 2 x 1 x 20.9 = 66.8 us; min(40 x .85 x 7/8 x 2 =
 *                59.5, 45 x 2, 57.7) = 57.7 x 8 x 16/30 = 246.19 GB/s
 * 4 nodes: Tree LL 6.8 + 2 x (7 x 0.6 + 2 x 5.0) = 35.2 us; NVLS_TREE
 * min(59.5, 45, 45.5) = 45 x 8 x 32/62; PAT over 4 nodes of 1 GPU: 8 +
 * 2 x 14/3.5 + 4 x 2.8 = 27.2 us.
 * RCCL, 8 MI300X (28 rings of 12 GB/s, tuning_model_5): Ring LL 12 + 14 x
 * 0.8 = 23.2 us, 336 x .08 x 8/14 = 15.36 GB/s; Ring Simple 17 + 14 x 2.1
 * = 46.4 us, 336 x 8/14 = 192 GB/s; Tree LL 12 + 2 x 7 x 0.9 = 24.6 us,
 * 336 x .06 x .5 = 10.08 GB/s; no Tree on Simple on one gfx94x node.
 * RCCL, 2 nodes of 8 MI300X (rome_model_81's 64 rings through the NICs,
 * each 28 x 12 / 64 = 5.25 GB/s; AMD hosts: net overhead 2 us, 6 on
 * Simple), all-reduce of 2 MiB (log2(2 MiB / 64) = 15):
 *   Tree LL      12 + 2 x (7 x 0.9 + 1 x 10.5) = 45.6 us; 336 x .06 x .5
 *                = 10.08 GB/s x 1.0 -> 45.6 + 2097152 / 10080 = 253.65 us
 *   Tree Simple  17 + 2 x (7 x 2.3 + 25) = 99.2 us; 336 x .11 x .5 x .7 =
 *                12.936 GB/s -> 99.2 + 162.12 = 261.32 us
 *   Ring LL      12 + 26 x 2 + 4 x 9.5 = 102 us; 336 x .08 x 16/30 x .4
 *                -> 467.7 us; Ring Simple 17 + 26 x 6 + 4 x 320 = 1453 us
 * RCCL 2.21 runs the argmin, Tree LL; 2.22's rcclUpdateCollectiveProtocol
 * takes Simple above 1 MiB (the tree kept): 261.32 us. At 1 MiB both run
 * Tree LL, 45.6 + 1048576 / 10080 = 149.63 us. An all-gather of 1 MiB
 * (64 KiB a rank, under 2.22's 96 KiB: LL) runs Ring LL on 1048576 /
 * (256 x 16 x 16) = 16 channels (rcclUpdateThreadThreshold; 2.21's 8 x 16
 * gives 32); of 2 MiB (128 KiB a rank) Simple: 17 + 14 x 6 + 320 = 421 us
 * + 2097152 / (336 x 16/15 x .1 = 35.84 GB/s) = 479.51 us.
 */
#include <json-glib/json-glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include "testutil.h"
#include "hw/nccl_tuning.h"
#include "hw/rccl_tuning.h"
#include "collective/coll_algo.h"
#include "collective/coll_kit.h"

static const strata_nccl_comm h100x2 = {.arch = STRATA_NCCL_HOPPER, .ranks = 16, .graph_channels = 12,
                                        .channel_gbs = 30.0, .nvls = true, .nodes = 2, .nics = 8, .nic_gbs = 50.0,
                                        .nic_gpus = 8};

START_TEST(nccl_across_nodes_is_nccls)
{
    double lat, bw;
    uint32_t ch;
    double gbs;
    strata_nccl_net_graph(&h100x2, &ch, &gbs);
    ck_assert_uint_eq(ch, 8);
    ck_assert_double_eq_tol(gbs, 45.0, 1e-12);
    const strata_op_kind ar = STRATA_OP_ALL_REDUCE;
    ck_assert(strata_nccl_model(&h100x2, ar, STRATA_NCCL_TREE, STRATA_NCCL_LL, &lat, &bw));
    ck_assert_double_eq_tol(lat, 25.2, 1e-9);
    ck_assert_double_eq_tol(bw, 19.5, 1e-9);
    ck_assert(strata_nccl_model(&h100x2, ar, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(lat, 131.6, 1e-9);
    ck_assert_double_eq_tol(bw, 192.0, 1e-9);
    ck_assert(strata_nccl_model(&h100x2, ar, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(lat, 66.8, 1e-9);
    ck_assert_double_eq_tol(bw, 57.7 * 8 * 16 / 30, 1e-4);
    /* no NVLS alone across nodes without CollNet; no NVLS_TREE all-gather */
    ck_assert(!strata_nccl_model(&h100x2, ar, STRATA_NCCL_NVLS, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert(!strata_nccl_model(&h100x2, STRATA_OP_ALL_GATHER, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE, &lat, &bw));
    /* the ring's plateau: x1.4 on Simple across nodes */
    ck_assert_double_eq_tol(strata_nccl_time_us(&h100x2, ar, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, 1ull << 30),
                            131.6 * 1.4 + (1ull << 30) / 192e3, 1e-6);
    strata_nccl_comm four = h100x2;
    four.ranks = 32;
    four.nodes = 4;
    ck_assert(strata_nccl_model(&four, ar, STRATA_NCCL_TREE, STRATA_NCCL_LL, &lat, &bw));
    ck_assert_double_eq_tol(lat, 35.2, 1e-9);
    ck_assert(strata_nccl_model(&four, ar, STRATA_NCCL_NVLS_TREE, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(bw, 45.0 * 8 * 32 / 62, 1e-4);
    strata_nccl_comm pat = {.arch = STRATA_NCCL_HOPPER, .ranks = 4, .graph_channels = 1, .channel_gbs = 20.0,
                            .nodes = 4, .nics = 1, .nic_gbs = 50.0, .nic_gpus = 1};
    ck_assert(strata_nccl_model(&pat, STRATA_OP_ALL_GATHER, STRATA_NCCL_PAT, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(lat, 27.2, 1e-9);
    ck_assert(!strata_nccl_model(&four, STRATA_OP_ALL_GATHER, STRATA_NCCL_PAT, STRATA_NCCL_SIMPLE, &lat, &bw));
    /* the choice: Tree LL for tiny buffers, NVLS_TREE for large */
    strata_nccl_choice c;
    ck_assert(strata_nccl_choose(&h100x2, ar, 8, &c));
    ck_assert(c.algo == STRATA_NCCL_TREE && c.proto == STRATA_NCCL_LL);
    ck_assert_double_eq_tol(c.net_step_us, 5.0, 1e-12);
    ck_assert(strata_nccl_choose(&h100x2, ar, 8ull << 30, &c));
    ck_assert(c.algo == STRATA_NCCL_NVLS_TREE && c.nvls_us == 25.0);
    ck_assert_uint_eq(c.chunk_bytes, 128 << 10);
    /* its kernel's pace: perChMaxNVLSTreeBw x 8 heads, as algorithm
     * bandwidth (N2 57.7; N4 45.5 on 4 nodes); none for the tree */
    ck_assert_double_eq_tol(c.stage_gbs, 57.7 * 8 * 16 / 30, 1e-9);
    ck_assert(strata_nccl_choose(&four, ar, 8ull << 30, &c) && c.algo == STRATA_NCCL_NVLS_TREE);
    ck_assert_double_eq_tol(c.stage_gbs, 45.5 * 8 * 32 / 62, 1e-9);
    ck_assert(strata_nccl_choose(&h100x2, ar, 8, &c) && c.stage_gbs == 0);
    /* NCCL_ALGO=Ring */
    strata_nccl_comm ring = h100x2;
    ring.algos = 1u << STRATA_NCCL_RING;
    ck_assert(strata_nccl_choose(&ring, ar, 8, &c) && c.algo == STRATA_NCCL_RING);
}
END_TEST

START_TEST(rccl_is_rccls)
{
    const strata_rccl_comm mi300x = {.ranks = 8, .graph_channels = 28, .channel_gbs = 12.0, .msccl = true};
    const strata_op_kind ar = STRATA_OP_ALL_REDUCE;
    double lat, bw;
    ck_assert(strata_rccl_model(&mi300x, ar, STRATA_NCCL_RING, STRATA_NCCL_LL, &lat, &bw));
    ck_assert_double_eq_tol(lat, 23.2, 1e-9);
    ck_assert_double_eq_tol(bw, 336 * .08 * 8 / 14, 1e-9);
    ck_assert(strata_rccl_model(&mi300x, ar, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(lat, 46.4, 1e-9);
    ck_assert_double_eq_tol(bw, 192.0, 1e-9);
    ck_assert(strata_rccl_model(&mi300x, ar, STRATA_NCCL_TREE, STRATA_NCCL_LL, &lat, &bw));
    ck_assert_double_eq_tol(lat, 24.6, 1e-9);
    ck_assert_double_eq_tol(bw, 10.08, 1e-9);
    ck_assert(!strata_rccl_model(&mi300x, ar, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert(!strata_rccl_model(&mi300x, ar, STRATA_NCCL_RING, STRATA_NCCL_LL128, &lat, &bw));
    /* MSCCL's allpairs: 1 KiB (256 floats) on LL, 4 channels; 1 KiB + 4
     * bytes is no multiple of 256 floats: RCCL's model, ring LL (23.2 +
     * 1028 / 15,360 us against the tree's 24.6 + ...); 1 MiB on Simple */
    strata_rccl_choice c;
    ck_assert(strata_rccl_choose(&mi300x, ar, 1024, &c));
    ck_assert(c.msccl && c.proto == STRATA_NCCL_LL && c.channels == 4);
    ck_assert(strata_rccl_choose(&mi300x, ar, 1028, &c));
    ck_assert(!c.msccl && c.algo == STRATA_NCCL_RING && c.proto == STRATA_NCCL_LL);
    ck_assert(strata_rccl_choose(&mi300x, ar, 1 << 20, &c));
    ck_assert(c.msccl && c.proto == STRATA_NCCL_SIMPLE && c.channels == 8);
    /* above MSCCL's ranges: the ring on Simple, on the model's 56 channels */
    ck_assert(strata_rccl_choose(&mi300x, ar, 1ull << 30, &c));
    ck_assert(!c.msccl && c.algo == STRATA_NCCL_RING && c.proto == STRATA_NCCL_SIMPLE && c.channels == 56);
}
END_TEST

/* RCCL 2.20's tuning_model_5 (the rocm-6.2.2 tag) on 8 MI300X, 28 rings
 * of 12 GB/s, without MSCCL (one process driving the 8 GPUs, as 2.20 has
 * it): Ring LL 12 + 14 x 0.8 = 23.2 us at 336 x 0.41 x 8 / 14 = 78.72 GB/s;
 * Ring Simple 17 + 14 x 3.6 = 67.4 us at 192 GB/s; Tree LL 12 + 2 x 7 x
 * 0.8 = 23.2 us at 336 x 0.41 / 2 = 68.88 GB/s (x its correction, 1.0 at
 * 2 KiB: still slower than the ring). So LL up to 44.2 / (1/78,720 -
 * 1/192,000) = 5.99 MB: 4 MiB on LL (23.2 + 4,194,304 / 78,720 = 76.48
 * us against Simple's 89.25), 8 MiB on Simple (67.4 + 8,388,608 / 192,000
 * = 111.09 us against LL's 129.76). 2.21's model puts 512 KiB on Simple
 * already (46.4 + 524,288 / 192,000 = 49.13 us against LL's 23.2 +
 * 524,288 / 15,360 = 57.33). Channels: the ring LL's threshold 8 x 8 ranks
 * x 256 threads = 16 KiB a channel, 56 from 896 KiB. */
START_TEST(rccl_2_20_keeps_the_ring_on_ll_longer)
{
    strata_rccl_comm c = {.ranks = 8, .graph_channels = 28, .channel_gbs = 12.0,
                          .tuning5 = STRATA_RCCL_TUNING5_2_20};
    const strata_op_kind ar = STRATA_OP_ALL_REDUCE;
    double lat, bw;
    ck_assert(strata_rccl_model(&c, ar, STRATA_NCCL_RING, STRATA_NCCL_LL, &lat, &bw));
    ck_assert_double_eq_tol(lat, 23.2, 1e-9);
    ck_assert_double_eq_tol(bw, 78.72, 1e-9);
    ck_assert(strata_rccl_model(&c, ar, STRATA_NCCL_RING, STRATA_NCCL_SIMPLE, &lat, &bw));
    ck_assert_double_eq_tol(lat, 67.4, 1e-9);
    ck_assert_double_eq_tol(bw, 192.0, 1e-9);
    ck_assert(strata_rccl_model(&c, ar, STRATA_NCCL_TREE, STRATA_NCCL_LL, &lat, &bw));
    ck_assert_double_eq_tol(lat, 23.2, 1e-9);
    ck_assert_double_eq_tol(bw, 68.88, 1e-9);
    ck_assert(!strata_rccl_model(&c, ar, STRATA_NCCL_TREE, STRATA_NCCL_SIMPLE, &lat, &bw));
    strata_rccl_choice ch;
    ck_assert(strata_rccl_choose(&c, ar, 2048, &ch));
    ck_assert(!ch.msccl && ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_LL && ch.channels == 1);
    ck_assert(strata_rccl_choose(&c, ar, 4u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_LL && ch.channels == 56);
    ck_assert_double_eq_tol(ch.time_us, 23.2 + 4194304 / 78720.0, 1e-3);
    ck_assert(strata_rccl_choose(&c, ar, 128u << 10, &ch));
    ck_assert(ch.proto == STRATA_NCCL_LL && ch.channels == 8);
    ck_assert(strata_rccl_choose(&c, ar, 8u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(ch.time_us, 67.4 + 8388608 / 192000.0, 1e-3);
    c.tuning5 = STRATA_RCCL_TUNING5_2_21;
    ck_assert(strata_rccl_choose(&c, ar, 512u << 10, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(ch.time_us, 46.4 + 524288 / 192000.0, 1e-3);
}
END_TEST

START_TEST(rccl_across_nodes_takes_its_protocol_by_size)
{
    strata_rccl_comm c = {.ranks = 16, .nodes = 2, .graph_channels = 64, .channel_gbs = 28 * 12.0 / 64,
                          .cpu = STRATA_NCCL_AMD};
    const strata_op_kind ar = STRATA_OP_ALL_REDUCE, ag = STRATA_OP_ALL_GATHER;
    strata_rccl_choice ch;
    /* RCCL 2.21: the model's argmin */
    ck_assert(strata_rccl_choose(&c, ar, 2u << 20, &ch));
    ck_assert(!ch.msccl && ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_LL && ch.channels == 64);
    ck_assert_double_eq_tol(ch.time_us, 45.6 + 2097152 / 10080.0, 1e-3);
    ck_assert(strata_rccl_choose(&c, ag, 1u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_LL && ch.channels == 32);
    ck_assert(strata_rccl_choose(&c, ag, 2u << 20, &ch));
    ck_assert(ch.proto == STRATA_NCCL_LL);
    /* RCCL 2.22: the protocol by size per rank */
    c.net_ranges = true;
    ck_assert(strata_rccl_choose(&c, ar, 1u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_LL);
    ck_assert_double_eq_tol(ch.time_us, 45.6 + 1048576 / 10080.0, 1e-3);
    ck_assert(strata_rccl_choose(&c, ar, 2u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_SIMPLE && ch.channels == 64);
    ck_assert_double_eq_tol(ch.time_us, 99.2 + 2097152 / (336 * .11 * .5 * .7 * 1000), 1e-3);
    ck_assert_double_eq_tol(ch.base_us, 17.0, 1e-12);
    ck_assert(strata_rccl_choose(&c, ag, 1u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_LL && ch.channels == 16);
    ck_assert(strata_rccl_choose(&c, ag, 2u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(ch.time_us, 421 + 2097152 / (336 * 16 / 15.0 * .1 * 1000), 1e-3);
    /* NCCL_PROTO set (rccl_proto): the model's choice among those allowed */
    c.protos = 1u << STRATA_NCCL_LL | 1u << STRATA_NCCL_SIMPLE;
    ck_assert(strata_rccl_choose(&c, ar, 2u << 20, &ch));
    ck_assert(ch.proto == STRATA_NCCL_LL);
    /* one node: unchanged (MSCCL off here: the model's Ring LL at 1 MiB
     * would be LL either way; 2 MiB on one node is Ring Simple) */
    c = (strata_rccl_comm){.ranks = 8, .graph_channels = 28, .channel_gbs = 12.0, .net_ranges = true};
    ck_assert(strata_rccl_choose(&c, ar, 2u << 20, &ch));
    strata_rccl_choice old;
    c.net_ranges = false;
    ck_assert(strata_rccl_choose(&c, ar, 2u << 20, &old));
    ck_assert(ch.algo == old.algo && ch.proto == old.proto && ch.channels == old.channels);
    static const char head[] = "[hardware]\nname = t\ndevices = 4\n[memory hbm]\nkind = device\ncapacity = 1GiB\n"
                               "bandwidth = 1TB/s\n[interconnect x]\ntopology = full\nbandwidth = 1GB/s\n"
                               "collectives = rccl\nrccl_channels = 4\nrccl_channel_bandwidth = 1GB/s\n";
    strata_test_hw_text_refused(head, "rccl_version = 2.19\n",
                                "t.ini:14: [interconnect x] rccl_version: expected 2.20, 2.21, 2.22 or 2.26, got "
                                "'2.19'");
}
END_TEST

/* RCCL 2.26.6 on one node of 8 MI355X (gfx950), as its run prints it
 * (Ahalperin/amd-dev @58a032f results/scale_8gpu_all_reduce: graph.xml
 * nchannels="28" speedintra="12"; nccl_debug.log, rank 0: "112 coll
 * channels", the all-reduce row of the tuning table 23.2/15.4 for Ring LL,
 * 46.4/192.0 for Ring Simple, 24.6/10.1 for Tree LL), derived term by term:
 * - an 8 B all-reduce: Ring LL, baseLat 12 us + 2 x (8 - 1) = 14 steps x
 *   hwLat[NVLINK][RING][LL] 0.8 us = 23.2 us; bandwidth 28 x 12 GB/s x
 *   bwRatio 0.08 x 8 / 14 = 15.36 GB/s, so 23.2 + 8 / 15,360 us; Tree LL
 *   12 + 2 x 7 x 0.9 = 24.6 us loses; one channel (8 B < 1 x 256 x 64);
 * - the channels: init.cc's nc is 4 on gfx950 (2 elsewhere), so
 *   comm->nChannels = 4 x 28 = 112 (at most 128 on a node). Simple's
 *   threshold 64 B a thread: 1 MiB runs 1,048,576 / (256 x 64) = 64
 *   channels (gfx942's factor 2: 56, its cap), 2 MiB and 8 MiB all 112
 *   (gfx942: 56); 512 KiB 32 either way; the LL ring's 64 x 8 ranks x 256
 *   = 16 KiB a channel gives 256 KiB 16 either way (the log: 32, 64, 16).
 * - over 2 nodes (64 rings through the NICs) the cap 64 holds either way. */
START_TEST(rccl_gfx950_runs_four_channels_a_ring)
{
    strata_rccl_comm c = {.ranks = 8, .graph_channels = 28, .channel_gbs = 12.0, .net_ranges = true,
                          .ll128_x38 = true, .ring_copies = 4};
    const strata_op_kind ar = STRATA_OP_ALL_REDUCE;
    strata_rccl_choice ch;
    ck_assert(strata_rccl_choose(&c, ar, 8, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_LL && ch.channels == 1 && !ch.msccl);
    ck_assert_double_eq_tol(ch.time_us, 23.2 + 8 / 15360.0, 1e-9);
    ck_assert_double_eq_tol(ch.base_us, 12.0, 1e-12);
    ck_assert(strata_rccl_choose(&c, ar, 256u << 10, &ch) && ch.proto == STRATA_NCCL_LL && ch.channels == 16);
    ck_assert(strata_rccl_choose(&c, ar, 512u << 10, &ch) && ch.proto == STRATA_NCCL_SIMPLE && ch.channels == 32);
    ck_assert(strata_rccl_choose(&c, ar, 1u << 20, &ch) && ch.proto == STRATA_NCCL_SIMPLE && ch.channels == 64);
    ck_assert(strata_rccl_choose(&c, ar, 2u << 20, &ch) && ch.channels == 112);
    ck_assert(strata_rccl_choose(&c, ar, 8u << 20, &ch) && ch.channels == 112);
    strata_rccl_comm gfx942 = c;
    gfx942.ring_copies = 0; /* the default: 2 */
    ck_assert(strata_rccl_choose(&gfx942, ar, 1u << 20, &ch) && ch.channels == 56);
    ck_assert(strata_rccl_choose(&gfx942, ar, 8u << 20, &ch) && ch.channels == 56);
    strata_rccl_comm two = {.ranks = 16, .nodes = 2, .graph_channels = 64, .channel_gbs = 28 * 12.0 / 64,
                            .cpu = STRATA_NCCL_AMD, .net_ranges = true, .ll128_x38 = true, .ring_copies = 4};
    ck_assert(strata_rccl_choose(&two, ar, 1u << 30, &ch) && ch.channels == 64);
}
END_TEST

/* RCCL on gfx950 takes tuning_model_6 (rome_models.cc: tuning 6 on
 * gfx950 after a topology match; its table as stored at ROCm/rccl
 * 9e22c79). 2 x 8 MI355X, 64 channels of 28 x 12 / 64 = 5.25 GB/s, AMD
 * hosts, LL128 on (the MI355X files' rccl_ll128), RCCL 2.26:
 *   Tree Simple  17 + 2 x (7 x 2.3 + 25) = 99.2 us, 336 x .11 x .5 =
 *                18.48 GB/s x the tree's Simple correction
 *   Ring Simple  17 + 26 x max(2.1, 2 x 3) + 4 x 320 = 1453 us, 336 x
 *                16/30 = 179.2 GB/s x the ring's Simple correction
 * 256 MiB (log2(256 MiB / 64) = 22): tuning_model_6's 0.7 and 1.0 give
 * the tree 99.2 + 268435456 / 12936 = 20,850.2 us and the ring 1453 +
 * 268435456 / 179200 = 2,950.97 us: Ring Simple (tuning_model_5's 1.0 and
 * 0.1 give the tree 99.2 + 268435456 / 18480 = 14,624.93 us). 128 MiB
 * (21): the tree's 0.9, 99.2 + 134217728 / 16632 = 8,169.05 us, against the
 * ring's 0.1, 1453 + 134217728 / 17920 = 8,942.8 us: Tree Simple. RCCL
 * 2.26.6 on such nodes printed both (Tree Simple at 64 and 128 MiB, Ring
 * Simple from 256 MiB). tuning_model_6's all-reduce ranges: LL to 131,071
 * B, LL128 above to 17,660,227 B. 131,072 B (log2 11): Tree LL and Tree
 * LL128 tie at 45.6 + 131072 / (10.08 x .6) = 67.272 us (LL first), the
 * range takes LL128; 131,068 B stays LL. 17,660,224 B (log2 18): the
 * tree's LL128 correction there is 1.0 (tuning_model_5: 0.1), so the
 * argmin is Tree LL128, 45.6 + 17660224 / 10080 = 1,797.62 us; 4 B more
 * is past the range: Tree Simple (its correction 0.1). An all-gather's LL
 * stops at 7 B a rank: 64 B (4 a rank) LL, 128 B LL128. */
START_TEST(rccl_gfx950_takes_tuning_model_6)
{
    strata_rccl_comm c = {.ranks = 16, .nodes = 2, .graph_channels = 64, .channel_gbs = 28 * 12.0 / 64,
                          .cpu = STRATA_NCCL_AMD, .net_ranges = true, .ll128 = true, .ll128_x38 = true,
                          .ring_copies = 4, .model_6 = true};
    const strata_op_kind ar = STRATA_OP_ALL_REDUCE;
    strata_rccl_choice ch;
    ck_assert(strata_rccl_choose(&c, ar, 256u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_SIMPLE && ch.channels == 64);
    ck_assert_double_eq_tol(ch.time_us, 1453 + 268435456 / 179200.0, 1e-3);
    ck_assert_double_eq_tol(ch.net_step_us, 320.0, 1e-12);
    ck_assert(strata_rccl_choose(&c, ar, 128u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(ch.time_us, 99.2 + 134217728 / 16632.0, 1e-3);
    ck_assert(strata_rccl_choose(&c, ar, 131072, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_LL128);
    ck_assert_double_eq_tol(ch.time_us, 45.6 + 131072 / 6048.0, 1e-3);
    ck_assert(strata_rccl_choose(&c, ar, 131068, &ch) && ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_LL);
    ck_assert(strata_rccl_choose(&c, ar, 17660224, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_LL128);
    ck_assert_double_eq_tol(ch.time_us, 45.6 + 17660224 / 10080.0, 1e-3);
    ck_assert(strata_rccl_choose(&c, ar, 17660228, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert(strata_rccl_choose(&c, STRATA_OP_ALL_GATHER, 64, &ch) && ch.proto == STRATA_NCCL_LL);
    ck_assert(strata_rccl_choose(&c, STRATA_OP_ALL_GATHER, 128, &ch) && ch.proto == STRATA_NCCL_LL128);
    /* 2.22's tuning_model_5 row (gfx942's; the zero default) keeps the tree at 256 MiB */
    c.model_6 = false;
    ck_assert(strata_rccl_choose(&c, ar, 256u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(ch.time_us, 99.2 + 268435456 / 18480.0, 1e-3);
}
END_TEST

/* tuning_model_5 a row per release (rccl_tuning.c). 2 x 8 MI300X, 64
 * channels of 28 x 12 / 64 = 5.25 GB/s, AMD hosts, an all-reduce:
 *   Tree Simple  17 + 2 x (7 x 2.3 + 25) = 99.2 us, 336 x .11 x .5 = 18.48
 *                GB/s x the tree's Simple correction
 *   Ring Simple  17 + 26 x max(2.1, 2 x 3) + 4 x 320 = 1453 us, 336 x 16/30
 *                = 179.2 GB/s x the ring's Simple correction
 * 256 MiB (log2(256 MiB / 64) = 22): 2.21.5's and 2.22's corrections
 * (tree 1.0, ring 0.1) give the tree 99.2 + 268435456 / 18480 = 14,624.93
 * us against the ring's 1453 + 268435456 / 17920 = 16,432.86: Tree Simple.
 * 2.26's (9e22c79: tree 0.7, ring 1.0) give the tree 99.2 + 268435456 /
 * 12936 = 20,850.2 and the ring 1453 + 268435456 / 179200 = 2,950.97: Ring
 * Simple. 128 MiB (21): 2.22's tree 99.2 + 134217728 / 18480 = 7,362.08
 * against the ring's 1453 + 134217728 / 17920 = 8,942.83: Tree; 2.26's
 * tree 0.7: 99.2 + 134217728 / 12936 = 10,474.73: Ring. Both above every
 * range of rcclUpdateCollectiveProtocol (LL128 to 9 MiB): Simple. LL128:
 * 2.21.5's columns are 0 (RCCL's model has no LL128 pair), 2.22's LL's:
 * Tree LL128 45.6 us (12 + 2 x (7 x 0.9 + 10.5)) at 336 x .06 x .5 =
 * 10.08 GB/s, as Tree LL. */
START_TEST(rccl_tuning_model_5_by_release)
{
    strata_rccl_comm c = {.ranks = 16, .nodes = 2, .graph_channels = 64, .channel_gbs = 28 * 12.0 / 64,
                          .cpu = STRATA_NCCL_AMD, .net_ranges = true, .tuning5 = STRATA_RCCL_TUNING5_2_22};
    const strata_op_kind ar = STRATA_OP_ALL_REDUCE;
    strata_rccl_choice ch;
    ck_assert(strata_rccl_choose(&c, ar, 256u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(ch.time_us, 99.2 + 268435456 / 18480.0, 1e-3);
    ck_assert(strata_rccl_choose(&c, ar, 128u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(ch.time_us, 99.2 + 134217728 / 18480.0, 1e-3);
    c.tuning5 = STRATA_RCCL_TUNING5_2_26;
    c.ll128_x38 = true;
    ck_assert(strata_rccl_choose(&c, ar, 256u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_SIMPLE && ch.channels == 64);
    ck_assert_double_eq_tol(ch.time_us, 1453 + 268435456 / 179200.0, 1e-3);
    ck_assert(strata_rccl_choose(&c, ar, 128u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(ch.time_us, 1453 + 134217728 / 17920.0, 1e-3);
    strata_rccl_comm r21 = {.ranks = 16, .nodes = 2, .graph_channels = 64, .channel_gbs = 28 * 12.0 / 64,
                            .cpu = STRATA_NCCL_AMD, .tuning5 = STRATA_RCCL_TUNING5_2_21};
    ck_assert(strata_rccl_choose(&r21, ar, 256u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(ch.time_us, 99.2 + 268435456 / 18480.0, 1e-3);
    double lat, bw;
    r21.ll128 = true;
    ck_assert(!strata_rccl_model(&r21, ar, STRATA_NCCL_TREE, STRATA_NCCL_LL128, &lat, &bw));
    r21.tuning5 = STRATA_RCCL_TUNING5_2_22;
    ck_assert(strata_rccl_model(&r21, ar, STRATA_NCCL_TREE, STRATA_NCCL_LL128, &lat, &bw));
    ck_assert_double_eq_tol(lat, 45.6, 1e-9);
    ck_assert_double_eq_tol(bw, 10.08, 1e-9);
}
END_TEST

START_TEST(rccl_ll128_where_the_topology_enables_it)
{
    /* 16 ranks over 2 nodes, RCCL's graph across nodes 64 channels of 28 x
     * 12 / 64 GB/s (336 GB/s in all), RCCL 2.26 */
    strata_rccl_comm c = {.ranks = 16, .nodes = 2, .graph_channels = 64, .channel_gbs = 28 * 12.0 / 64,
                          .cpu = STRATA_NCCL_AMD, .net_ranges = true, .ll128_x38 = true};
    const strata_op_kind ar = STRATA_OP_ALL_REDUCE, ag = STRATA_OP_ALL_GATHER;
    strata_rccl_choice ch;
    double lat, bw;
    /* no ll128Enabled (gfx942 as the MI300X files say, no LL128 in the
     * model): 4 MiB is Simple, on the model's argmin, Tree Simple: 17 + 2 x
     * (7 x 2.3 + 25) = 99.2 us, 336 x .11 x .5 GB/s, tree correction 1.0 at
     * log2(4 MiB / 64) = 16 */
    ck_assert(!strata_rccl_model(&c, ar, STRATA_NCCL_TREE, STRATA_NCCL_LL128, &lat, &bw));
    ck_assert(strata_rccl_choose(&c, ar, 4u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_SIMPLE && ch.channels == 64);
    ck_assert_double_eq_tol(ch.time_us, 99.2 + 4194304 / 18480.0, 1e-3);
    ck_assert_double_eq_tol(ch.base_us, 17.0, 1e-12);
    ck_assert_double_eq_tol(ch.net_step_us, 25.0, 1e-12);
    /* gfx950 with ll128Enabled: LL128 in the model with LL's constants (12
     * + 2 x (7 x 0.9 + 10.5) = 45.6 us, 336 x .06 x .5 = 10.08 GB/s), so the
     * argmin stays Tree Simple, and rcclUpdateCollectiveProtocol's LL128
     * range (1 MiB, 9 MiB] takes 4 MiB: Tree LL128, whose estimate has the
     * tree's LL128 correction 0.1 at log2 16; base latency 12 us, a network
     * step 10.5 us; 64 channels (4 MiB >= 64 x 256 x 8) */
    c.ll128 = true;
    ck_assert(strata_rccl_model(&c, ar, STRATA_NCCL_TREE, STRATA_NCCL_LL128, &lat, &bw));
    ck_assert_double_eq_tol(lat, 45.6, 1e-9);
    ck_assert_double_eq_tol(bw, 10.08, 1e-9);
    ck_assert(strata_rccl_choose(&c, ar, 4u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_TREE && ch.proto == STRATA_NCCL_LL128 && ch.channels == 64);
    ck_assert_double_eq_tol(ch.time_us, 45.6 + 4194304 / 1008.0, 1e-3);
    ck_assert_double_eq_tol(ch.base_us, 12.0, 1e-12);
    ck_assert_double_eq_tol(ch.net_step_us, 10.5, 1e-12);
    /* the range's ends: 1 MiB is LL's (LL128's min is exclusive), 9 MiB
     * LL128's, 9 MiB + 4 B Simple; over 4 nodes 2.26 stretches it x3.8
     * (35,861,299 B), 2.22 by (log2 4 - 1) x 3 MiB (12 MiB) */
    ck_assert(strata_rccl_choose(&c, ar, 1u << 20, &ch) && ch.proto == STRATA_NCCL_LL);
    ck_assert(strata_rccl_choose(&c, ar, 9437184, &ch) && ch.proto == STRATA_NCCL_LL128);
    ck_assert(strata_rccl_choose(&c, ar, 9437188, &ch) && ch.proto == STRATA_NCCL_SIMPLE);
    strata_rccl_comm four = c;
    four.ranks = 32, four.nodes = 4;
    ck_assert(strata_rccl_choose(&four, ar, 35861296, &ch) && ch.proto == STRATA_NCCL_LL128);
    ck_assert(strata_rccl_choose(&four, ar, 35861300, &ch) && ch.proto == STRATA_NCCL_SIMPLE);
    four.ll128_x38 = false;
    ck_assert(strata_rccl_choose(&four, ar, 12582912, &ch) && ch.proto == STRATA_NCCL_LL128);
    ck_assert(strata_rccl_choose(&four, ar, 12582916, &ch) && ch.proto == STRATA_NCCL_SIMPLE);
    /* an all-gather of 2 MiB (128 KiB per rank, over LL's 96 KiB): LL128 on
     * the ring, its thread threshold 64 x 16 ranks: 64 channels while 2 MiB
     * >= 64 x 256 x 1024 is false, down to 8 (8 x 256 x 1024 = 2 MiB) */
    ck_assert(strata_rccl_choose(&c, ag, 2u << 20, &ch));
    ck_assert(ch.algo == STRATA_NCCL_RING && ch.proto == STRATA_NCCL_LL128 && ch.channels == 8);
    /* one node: unchanged (LL128 ties LL in the model, the first wins) */
    strata_rccl_comm one = {.ranks = 8, .graph_channels = 28, .channel_gbs = 12.0, .net_ranges = true, .ll128 = true};
    ck_assert(strata_rccl_choose(&one, ar, 64u << 10, &ch) && ch.proto == STRATA_NCCL_LL);
    /* the keys: LL128 needs a release that runs it on the architecture */
    static const char head[] = "[hardware]\nname = t\ndevices = 4\n[memory hbm]\nkind = device\ncapacity = 1GiB\n"
                               "bandwidth = 1TB/s\n[interconnect x]\ntopology = full\nbandwidth = 1GB/s\n"
                               "collectives = rccl\nrccl_channels = 4\nrccl_channel_bandwidth = 1GB/s\n";
    strata_test_hw_text_refused(head, "rccl_version = 2.21\nrccl_ll128 = true\n",
                                "t.ini:15: [interconnect x] rccl_ll128: expected false: RCCL runs LL128 on gfx942 "
                                "from rccl_version 2.22, on gfx950 from 2.26, got 'true'");
    strata_test_hw_text_refused(head, "rccl_version = 2.22\nrccl_arch = gfx950\n",
                                "t.ini:15: [interconnect x] rccl_arch: expected an architecture RCCL's release "
                                "supports (gfx950: rccl_version 2.26), got 'gfx950'");
    strata_test_hw_text_refused(head, "rccl_arch = gfx90a\n",
                                "t.ini:14: [interconnect x] rccl_arch: expected gfx942 or gfx950, got 'gfx90a'");
}
END_TEST

/* Bytes each link of `prefix` carried in the results of an all-reduce of
 * `bytes` over `devices` devices on configs/hw/HW.ini (no algo=). */
static GHashTable *link_bytes(const char *hw, const char *bytes, const char *devices, const char *prefix)
{
    char *trace = strata_test_write_temp("tiers-XXXXXX.trace", "");
    char *b = g_strconcat("bytes=", bytes, NULL), *d = g_strconcat("devices=", devices, NULL);
    strata_cli_result r = strata_test_cli("gen", "collective", "op=all-reduce", b, d, "-o", trace, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    JsonParser *p = strata_test_run_results(hw, trace);
    JsonObject *links = json_object_get_object_member(json_node_get_object(json_parser_get_root(p)), "links");
    GHashTable *out = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GList *names = json_object_get_members(links);
    for (GList *n = names; n; n = n->next)
        if (g_str_has_prefix(n->data, prefix))
            g_hash_table_insert(out, g_strdup(n->data),
                                GSIZE_TO_POINTER((gsize)json_object_get_int_member(
                                    json_object_get_object_member(links, n->data), "bytes")));
    g_list_free(names);
    g_object_unref(p);
    g_unlink(trace);
    g_free(trace);
    g_free(b);
    g_free(d);
    return out;
}

/* Issue 39's acceptance: `strata gen collective op=all-reduce bytes=1GiB
 * devices=16` on the shipped 2 x 8 H100 file crosses the network (every
 * GPU's NIC carries bytes); on one 8 x MI300X node every xGMI link does
 * (each GPU drives its 7 links: RCCL's 28 rings). */
/* `count` links of `prefix` (link_bytes), each carrying lo to hi bytes. */
static void assert_links(const char *hw, const char *bytes, const char *devices, const char *prefix, guint count,
                         gsize lo, gsize hi)
{
    GHashTable *links = link_bytes(hw, bytes, devices, prefix);
    ck_assert_uint_eq(g_hash_table_size(links), count);
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, links);
    while (g_hash_table_iter_next(&it, &k, &v))
        ck_assert_msg(GPOINTER_TO_SIZE(v) >= lo && GPOINTER_TO_SIZE(v) <= hi, "%s %s carried %zu", hw, (char *)k,
                      (size_t)GPOINTER_TO_SIZE(v));
    g_hash_table_destroy(links);
}

START_TEST(shipped_clusters_cross_their_tiers)
{
    assert_links("configs/hw/h100-2x8-ib.ini", "1GiB", "16", "ib@", 16, 1, G_MAXSIZE);
    assert_links("configs/hw/mi300x-8.ini", "1GiB", "8", "xgmi:", 28, (1ull << 30) / 2, G_MAXSIZE);
}
END_TEST

/* RCCL's tree across two MI300X nodes (validation/held-out/hw/mi300x-roce.ini:
 * 8 GPUs a node, an xGMI link of 64 GB/s each way per pair, a 400 Gb/s NIC
 * per GPU; the graph across nodes is rome_model_81's 64 rings, 8 distinct,
 * 336 / 64 GB/s each). A 64 MiB all-reduce: RCCL picks Tree on Simple
 * (tuning_model_5's 2-node bwRatio) on 64 channels of 1 MiB. Channel c's
 * chain is ring c: the 8 distinct rings are paths that use each of the 56
 * directed xGMI links once, so each directed link is one chain's way up and
 * another's way down, 8 channels each, in 16 chunks of 64 KiB (RCCL's
 * Simple tree chunk: 512 KiB halved while 64 MiB / (64 x chunk) < depth 8
 * x 8 and the chunk > 128 KiB, then < 8 x 4 and > 64 KiB): 2 x 8 x 16 =
 * 256 copies a direction, each ceil(65,536 x 4/3) = 87,382 wire bytes and
 * an 8-byte flag, both directions of a link 512 x 87,390 = 44,743,680
 * bytes, on every one of the 56 links. Each GPU heads the chain that starts
 * at it (8 channels: 4 on tree 0, 4 on tree 1), so its NIC sends 8 MiB up
 * or down the tree and receives 8 MiB: 16 MiB. (Chains in rank order, as
 * before, put all 64 channels on links i-(i+1): 2 of a GPU's 7, 2.53 ms.)
 * Its time: at least the busiest link's one direction, 256 x 87,390 B /
 * 64 GB/s = 349.6 us, plus RCCL's fixed cost of 17 us: 366.6 us; at most
 * 31 rounds (16 chunks - 1 + 2 x a height of 8: 7 xGMI hops and 1 network
 * hop) of 16 copies on one link (21.85 us; a NIC's 8 in a round take 10.5)
 * and its 0.8 us latency, plus the 17 us and one network step
 * (tuning_model_5's 25 us): 744.1 us.
 * At 64 KiB RCCL picks Tree on LL, on 32 channels of 2 KiB (fewer while
 * the size is below channels x 256 threads x 8 bytes): one 16 KiB LL step
 * each, channels 0 to 31 all on tree 0 (the first half of 64), rings 0 to
 * 31 each distinct chain 4 times: a directed link carries 4 channels' way
 * up and 4 others' way down, 8 copies of ceil(2,048 x 2 x 4/3) = 5,462
 * wire bytes (LL's flags in its lines, no flag after), both directions
 * 87,392; a NIC 4 x 2 KiB x 2 (LL) each way, 32,768.
 * Under the sanitizers the 64 MiB run is skipped: its 64 channels' lanes
 * make 2,882 streams, over the 2,048 an AddressSanitizer build's stacks
 * allow (sim/engine/engine.c size_stacks). */
START_TEST(rccl_tree_spreads_over_the_mesh)
{
    const char *hw = "validation/held-out/hw/mi300x-roce.ini";
    assert_links(hw, "64KiB", "16", "xgmi:", 56, 87392, 87392);
    assert_links(hw, "64KiB", "16", "roce@", 16, 32768, 32768);
#ifdef STRATA_SANITIZE
    printf("SKIP rccl_tree_spreads_over_the_mesh at 64 MiB: 2,882 streams, over a sanitizer build's 2,048\n");
    return;
#endif
    assert_links(hw, "64MiB", "16", "xgmi:", 56, 512u * 87390u, 512u * 87390u);
    assert_links(hw, "64MiB", "16", "roce@", 16, 16u << 20, 16u << 20);
    char *choice = NULL, *name = NULL;
    double t = strata_test_run_collective(hw,
                                          "strata-trace 1\noption mesh=data:16\nalloc buf 67108864 dtype=f32\n"
                                          "all-reduce buf axis=data\nfree buf\n", &name, &choice);
    ck_assert_str_eq(choice, "Tree/Simple/64");
    ck_assert_msg(t >= 366.6e-6 && t <= 744.1e-6, "%g s", t);
    g_free(choice);
    g_free(name);
}
END_TEST

/* A collective's time never falls as its size grows under one algorithm
 * (issue 39): an all-reduce swept from 8 B to 256 MiB, doubling, each
 * algorithm on the node it serves; algo=nccl and rccl grouped by the
 * library's choice (its algorithm and protocol), since the library itself
 * switches where its own estimate does (RCCL to MSCCL where a range
 * begins, at 1 KiB: 23 us down to 14 us, as measured on MI300X nodes).
 * The issue's counter-example, a
 * 1152 KiB all-reduce on dgx-h100.ini in 14.7 us against 31.4 us at 1088
 * KiB, came from NVLS's fixed cost: 8.4 us where NCCL's model charges 25
 * (its NVLink latency, the whole of NVLS's); with it, the step from ring
 * LL at 1088 KiB to NVLS at 1152 KiB stays within 1%. */
static double sweep_point(const char *hw, uint32_t devices, const char *algo, uint64_t bytes, char **choice)
{
    char *text = g_strdup_printf("strata-trace 1\noption mesh=data:%u\nalloc buf %" G_GUINT64_FORMAT
                                 " dtype=f32\nall-reduce buf axis=data%s%s\nfree buf\n",
                                 devices, bytes, algo ? " algo=" : "", algo ? algo : "");
    char *name = NULL;
    double t = strata_test_run_collective(hw, text, &name, choice);
    g_free(name);
    g_free(text);
    return t;
}

/* 64 MiB over 2 x 8 H100 (configs/hw/h100-2x8-ib.ini): NVLS_TREE on 16
 * channels of 8 heads x 128 KiB, so 4 pieces of 16 MiB in 4 + 1 + 2 = 7
 * rounds, each at the kernel's pace, 16 MiB / 246.19 GB/s = 68.148 us
 * (the links need less: the NICs carry 1 MiB of a piece each way a
 * round), after NVLS's fixed 25 us: 502.0 us. */
START_TEST(nvls_tree_fills_at_the_kernels_pace)
{
    char *choice = NULL;
    double t = sweep_point("configs/hw/h100-2x8-ib.ini", 16, NULL, 64ull << 20, &choice);
    ck_assert_str_eq(choice, "NVLS_TREE/Simple/16");
    ck_assert_double_eq_tol(t, 25e-6 + 7 * (16ull << 20) / (57.7e9 * 8 * 16 / 30), 0.2e-6);
    g_free(choice);
}
END_TEST

/* NCCL's ring all-reduce from v2.25 rounds the last loop's chunk up to 16
 * bytes (all_reduce.h runRing: chunkCount = alignUp(divUp(remCount,
 * nranks), 16/sizeof(T))), across nodes as on one. 2 domains of 8, one
 * channel (one rail ring), LL (one slice a step), 2 x 15 = 30 rounds:
 *   16 B: c = divUp(16, 16 x 16) x 16 = 16 B, chunk 0 holds it all, the
 *         other 15 empty: one step a round, 30 steps of 16 B (the even
 *         share, 1 B a rank, gave 16 x 30 = 480 steps of 1 B);
 *   40 B: c = 16, chunks 0 and 1 of 16 B, chunk 2 of 8: 3 x 30 = 90 steps,
 *         30 x 40 = 1,200 B;
 *   256 B: c = 16, every rank's chunk 16 B: 480 steps of 16 B.
 * The tuning gives the grain: h100-2x8-ib's forced Ring of 16 B at 2.25
 * (LL, 1 channel) has ring_grain 16, on Simple none. */
START_TEST(nccl_ring_rounds_tiny_chunks_to_16_bytes)
{
    static const uint64_t sizes[][4] = {
        /* bytes, grain, steps, the largest step */
        {16, 16, 30, 16}, {16, 0, 480, 1}, {40, 16, 90, 16}, {256, 16, 480, 16}};
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        strata_coll_shape sh = {.kind = STRATA_OP_ALL_REDUCE, .algo = strata_coll_algo_find("nccl"), .n_dims = 1,
                                .dims = {16}, .in_bytes = sizes[i][0], .domain_ranks = 8, .channels = 1};
        sh.tune.algo = STRATA_NCCL_RING;
        sh.tune.proto = STRATA_NCCL_LL;
        sh.tune.ring_grain = sizes[i][1];
        GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
        ck_assert_uint_eq(strata_coll_schedule(&sh, steps), 30);
        ck_assert_uint_eq(steps->len, sizes[i][2]);
        uint64_t total = 0, most = 0;
        for (guint k = 0; k < steps->len; k++) {
            uint64_t b = g_array_index(steps, strata_coll_step, k).bytes;
            total += b;
            most = MAX(most, b);
        }
        ck_assert_uint_eq(total, 30 * sizes[i][0]);
        ck_assert_uint_eq(most, sizes[i][3]);
        g_array_free(steps, TRUE);
    }
    const char *ring[] = {"interconnect.nvlink.nccl_version=2.25", "interconnect.nvlink.nccl_algo=Ring", NULL};
    strata_hw *hw = strata_test_load_hw("h100-2x8-ib", ring);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 16, 0, &t, NULL));
    ck_assert_int_eq(t.algo, STRATA_NCCL_RING);
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL);
    ck_assert_uint_eq(t.channels, 1);
    ck_assert_uint_eq(t.ring_grain, 16);
    strata_hw_free(hw);
    /* not on Simple (its slices, nccl_tuning.c tune_channels) */
    const char *simple[] = {"interconnect.nvlink.nccl_version=2.25", "interconnect.nvlink.nccl_algo=Ring",
                            "interconnect.nvlink.nccl_proto=Simple", NULL};
    hw = strata_test_load_hw("h100-2x8-ib", simple);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 16, 0, &t, NULL));
    ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
    ck_assert_uint_eq(t.ring_grain, 0);
    strata_hw_free(hw);
}
END_TEST

START_TEST(times_grow_with_size)
{
    static const struct {
        const char *hw, *algo;
        uint32_t devices;
    } runs[] = {
        {"configs/hw/dgx-h100.ini", NULL, 8},      {"configs/hw/dgx-h100.ini", "ring", 8},
        {"configs/hw/dgx-h100.ini", "tree", 8},    {"configs/hw/dgx-h100.ini", "nccl-ring", 8},
        {"configs/hw/a100-8.ini", NULL, 8},        {"configs/hw/mi300x-8.ini", NULL, 8},
        {"configs/hw/h100-2x8-ib.ini", NULL, 16},  {"configs/hw/h100-2x8-ib.ini", "nccl-tree", 16},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(runs); i++) {
        double last = 0;
        char *last_choice = NULL;
        for (uint64_t bytes = 8; bytes <= 256ull << 20; bytes *= 2) {
            char *choice = NULL;
            double t = sweep_point(runs[i].hw, runs[i].devices, runs[i].algo, bytes, &choice);
            /* "ALGO/PROTO/CHANNELS": the same algorithm and protocol */
            bool same = !choice || !last_choice ||
                        strncmp(choice, last_choice, (size_t)(strrchr(choice, '/') - choice)) == 0;
            /* within 0.01% (the sub-nanosecond effects of bytes a step rounds to) */
            ck_assert_msg(!same || t >= last * (1 - 1e-4), "%s %s: %" G_GUINT64_FORMAT " B in %g s (%s), "
                          "less than %g s at half the size (%s)", runs[i].hw, runs[i].algo ? runs[i].algo : "auto",
                          bytes, t, choice ? choice : "", last, last_choice ? last_choice : "");
            last = t;
            g_free(last_choice);
            last_choice = choice;
        }
        g_free(last_choice);
    }
    char *a = NULL, *b = NULL;
    double t1088 = sweep_point("configs/hw/dgx-h100.ini", 8, NULL, 1088 << 10, &a);
    double t1152 = sweep_point("configs/hw/dgx-h100.ini", 8, NULL, 1152 << 10, &b);
    ck_assert_str_eq(a, "Ring/LL/24");
    /* NVLS's 16 channels, of which NCCL's cells fill 15 (v2.30: 2,359,296 B
     * of traffic, 147,456 a channel, 5 cells of 16,384 B each; 72 cells) */
    ck_assert_str_eq(b, "NVLS/Simple/15");
    ck_assert_msg(t1152 >= 0.99 * t1088, "%g s at 1152 KiB, %g s at 1088 KiB", t1152, t1088);
    g_free(a);
    g_free(b);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tiers");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, nccl_across_nodes_is_nccls);
    tcase_add_test(tc, rccl_is_rccls);
    tcase_add_test(tc, rccl_2_20_keeps_the_ring_on_ll_longer);
    tcase_add_test(tc, rccl_across_nodes_takes_its_protocol_by_size);
    tcase_add_test(tc, rccl_ll128_where_the_topology_enables_it);
    tcase_add_test(tc, rccl_gfx950_runs_four_channels_a_ring);
    tcase_add_test(tc, rccl_gfx950_takes_tuning_model_6);
    tcase_add_test(tc, rccl_tuning_model_5_by_release);
    tcase_add_test(tc, shipped_clusters_cross_their_tiers);
    tcase_add_test(tc, rccl_tree_spreads_over_the_mesh);
    tcase_add_test(tc, nvls_tree_fills_at_the_kernels_pace);
    tcase_add_test(tc, times_grow_with_size);
    tcase_add_test(tc, nccl_ring_rounds_tiny_chunks_to_16_bytes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(suite()); }
