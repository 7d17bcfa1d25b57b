/*
 * test_nccl_p2p.c: NCCL's point-to-point plan (sim/hw/nccl_p2p.h) and the
 * nccl row's all-to-all built on it (models/collective/coll_kit_p2p.c),
 * against values worked by hand from NVIDIA/nccl v2.27.7-1: init.cc
 * (p2pSchedule, computeBuffSizes), graph/paths.cc
 * (ncclTopoComputeP2pChannels), enqueue.cc (scheduleP2pTasksToPlan,
 * addP2pToPlan, addWorkBatchToPlan), channel.h and device.h.
 */
#include <check.h>
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "collective/coll_algo.h"
#include "collective/coll_kit.h"
#include "hw/coll_impl.h"
#include "hw/nccl_p2p.h"

/* p5's 2 x 8 plan as ncclTopoComputeP2pChannels gives it with 32 p2p
 * channels: per peer 2 (2 x 16 ranks is not above 4 x 32), nChannelsMin 2
 * (2 x 16 is not above 32), the net chunk 128 KiB, LL's step 64 KiB */
static const strata_nccl_p2p p5x2 = {.ranks = 16, .nodes = 2, .local_ranks = 8, .p2p_channels = 32,
                                     .per_peer = 2, .min_channels = 2, .step_bytes = 128u << 10,
                                     .ll_step_bytes = 64u << 10};

START_TEST(walk_is_nccls_quadratic_order)
{
    /* init.cc's own example: "Example sequence for 16 ranks: 0, 1, 3, 6,
     * 10, 15, 5, 12, 4, 13, 7, 2, 14, 11, 9, 8" */
    static const uint32_t want[16] = {0, 1, 3, 6, 10, 15, 5, 12, 4, 13, 7, 2, 14, 11, 9, 8};
    strata_nccl_p2p one = {.ranks = 16, .nodes = 1, .local_ranks = 16};
    uint32_t nd[16], ld[16];
    strata_nccl_p2p_deltas(&one, nd, ld);
    for (uint32_t k = 0; k < 16; k++) {
        ck_assert_uint_eq(nd[k], 0);
        ck_assert_uint_eq(ld[k], want[k]);
    }
    /* 2 nodes of 8: node delta 0 for rounds 0-7, 1 for 8-15; local deltas
     * 0, 1, 3, 6, 2, 7, 5, 4 ((x^2 + x) / 2 mod 8) each time */
    static const uint32_t local8[8] = {0, 1, 3, 6, 2, 7, 5, 4};
    strata_nccl_p2p_deltas(&p5x2, nd, ld);
    for (uint32_t k = 0; k < 16; k++) {
        ck_assert_uint_eq(nd[k], k / 8);
        ck_assert_uint_eq(ld[k], local8[k % 8]);
    }
    /* rank 5 (node 0, local 5) in round 10 (node delta 1, local delta 3):
     * node 1, local (5 + 3) mod 8 = 0: rank 8 */
    ck_assert_uint_eq(strata_nccl_p2p_peer(&p5x2, 5, 1, 3), 8);
}
END_TEST

START_TEST(parts_follow_add_p2p_to_plan)
{
    /* 2 MiB: Simple (above 2 x 16 KiB); min(2, 2 MiB / 64 KiB) = 2 parts of
     * 1 MiB, above a step, but 2 is not <= per_peer / 2 = 1: 2 */
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p5x2, 2u << 20), 2);
    /* 64 KiB: Simple; min(2, ceil(64 KiB / 64 KiB)) = 1 */
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p5x2, 64u << 10), 1);
    /* 100,000 bytes: min(2, ceil(100000 / 65536) = 2) = 2 */
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p5x2, 100000), 2);
    /* 16 KiB: LL (<= 2 x 16384), its step 64 KiB, parts of 32 KiB: 1 */
    ck_assert(strata_nccl_p2p_ll(&p5x2, 16384));
    ck_assert(!strata_nccl_p2p_ll(&p5x2, 32769));
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p5x2, 16384), 1);
    /* nChannelsMin 1, per peer 2 (8 nodes of 8 with 32 p2p channels):
     * 1 MiB starts at 1 part of 1 MiB > 128 KiB, 1 <= 2 / 2: doubled to 2 */
    strata_nccl_p2p p = p5x2;
    p.min_channels = 1;
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p, 1u << 20), 2);
    /* 16 x 8: per peer 1, nothing to double */
    p.per_peer = 1;
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p, 16u << 20), 1);
    /* ncclP2pPartBounds: 10,000 bytes in 2: ceil(5000) aligned up to 4 KiB */
    uint64_t beg, end;
    strata_nccl_p2p_part(2, 0, 10000, &beg, &end);
    ck_assert_uint_eq(beg, 0);
    ck_assert_uint_eq(end, 8192);
    strata_nccl_p2p_part(2, 1, 10000, &beg, &end);
    ck_assert_uint_eq(beg, 8192);
    ck_assert_uint_eq(end, 10000);
}
END_TEST

START_TEST(channels_by_round_and_part)
{
    /* across nodes the base is the node round (8 local ranks fill one
     * batch), part 1 adds reverseBits(1, 5) = 16 */
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p5x2, 3, 0), 0);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p5x2, 3, 1), 16);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p5x2, 8, 0), 1);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p5x2, 15, 1), 17);
    /* one node: the round itself */
    strata_nccl_p2p one = {.ranks = 8, .nodes = 1, .local_ranks = 8, .p2p_channels = 32, .per_peer = 32};
    ck_assert_uint_eq(strata_nccl_p2p_channel(&one, 5, 0), 5);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&one, 5, 3), (5 + 24) & 31);
}
END_TEST

START_TEST(one_node_plan)
{
    /* 8 Hopper GPUs, a ring graph of 12 channels: comm->nChannels 24
     * (doubled), p2pnChannels min(24, 64) = 24; a local peer 2 x 17 = 34
     * channels (360 GB/s over NCCL's 20.6 a link): min 24, per peer
     * pow2Up(24) = 32, p2p channels 32; nChannelsMin 32 halved while
     * x 8 ranks > 32: 4; NVLink's chunk 512 KiB (4 MiB / 8 binds not) */
    strata_nccl_comm c = {.arch = STRATA_NCCL_HOPPER, .ranks = 8, .graph_channels = 12, .channel_gbs = 30,
                          .version = strata_nccl_version_find("2.27")};
    strata_nccl_p2p p;
    strata_nccl_p2p_init(&c, 34, &p);
    ck_assert_uint_eq(p.p2p_channels, 32);
    ck_assert_uint_eq(p.per_peer, 32);
    ck_assert_uint_eq(p.min_channels, 4);
    ck_assert_uint_eq(p.step_bytes, 512u << 10);
    /* 8 MiB to a peer: min(4, 8 MiB / 64 KiB) = 4 parts of 2 MiB, within
     * 32 steps: 4 */
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p, 8u << 20), 4);
    /* 25 ranks over "3 nodes" (25 / 8, not dividing): one node of 25, so
     * that the walk gives every one of the 25 rounds a delta */
    c.ranks = 25;
    c.nodes = 3;
    strata_nccl_p2p_init(&c, 34, &p);
    ck_assert_uint_eq(p.nodes, 1);
    ck_assert_uint_eq(p.local_ranks, 25);
}
END_TEST

/* The schedule of shape, replayed on values: rank r's IN holds r * 1000 +
 * byte index (mod 251); every rank's OUT must end as the all-to-all's. */
static GArray *schedule(const strata_coll_shape *sh, uint32_t *rounds)
{
    GArray *steps = g_array_new(false, true, sizeof(strata_coll_step));
    *rounds = strata_coll_schedule(sh, steps);
    uint32_t n = sh->dims[0];
    uint64_t b = sh->in_bytes, c = b / n;
    uint8_t *out = g_malloc0(n * b);
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        for (uint64_t j = 0; j < st->bytes; j++)
            out[st->dst * b + st->dst_off + j] = (uint8_t)((st->src * 1000 + st->src_off + j) % 251);
    }
    for (uint32_t q = 0; q < n; q++)
        for (uint32_t r = 0; r < n; r++)
            for (uint64_t j = 0; j < c; j += 4093)
                ck_assert_uint_eq(out[q * b + r * c + j], (r * 1000 + q * c + j) % 251);
    g_free(out);
    return steps;
}

START_TEST(two_by_two_all_to_all)
{
    /* 2 nodes x 2 ranks, 4 MiB each: 1 MiB a peer, Simple, 2 parts of
     * 512 KiB (4 chunks of 128 KiB each, within NCCL_STEPS = 8: the whole
     * part in flight, so one step: its bytes and one network step's cost).
     * Rounds: k = 0 self, 1 the other local rank, 2 and 3 the other node;
     * bases 0, 0, 1, 1: channels 0 (k 0, 1 part 0), 16, 1, 17: two works a
     * channel at most, one batch: one round. 4 self copies + 3 x 2 x 4. */
    strata_coll_shape sh = {.kind = STRATA_OP_ALL_TO_ALL, .algo = strata_coll_algo_find("nccl"), .n_dims = 1,
                            .dims = {4}, .in_bytes = 4u << 20, .domain_ranks = 2, .tuned = true};
    sh.tune.proto = STRATA_NCCL_SIMPLE;
    sh.tune.net_step_s = 4e-6;
    sh.tune.p2p = (strata_nccl_p2p){.ranks = 4, .nodes = 2, .local_ranks = 2, .p2p_channels = 32, .per_peer = 2,
                                    .min_channels = 2, .step_bytes = 128u << 10, .ll_step_bytes = 64u << 10};
    uint32_t rounds;
    GArray *steps = schedule(&sh, &rounds);
    ck_assert_uint_eq(rounds, 1);
    ck_assert_uint_eq(steps->len, 28);
    uint32_t net = 0, nvl = 0;
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        ck_assert_uint_eq(st->round, 0);
        if (st->src == st->dst) {
            ck_assert_uint_eq(st->bytes, 1u << 20);
        } else if (st->src / 2 != st->dst / 2) { /* the network: Simple as is, a step's cost */
            ck_assert_uint_eq(st->bytes, 512u << 10);
            ck_assert_uint_eq(st->wire_bytes, 512u << 10);
            ck_assert(st->delay_s == 4e-6 && !st->handshake);
            net++;
        } else { /* NVLink: 5/4 and the flag */
            ck_assert_uint_eq(st->wire_bytes, 640u << 10);
            ck_assert(st->handshake && st->delay_s == 0);
            nvl++;
        }
    }
    ck_assert_uint_eq(net, 16);
    ck_assert_uint_eq(nvl, 8);
    g_array_free(steps, true);
}
END_TEST

START_TEST(a_full_channel_runs_batches_in_turn)
{
    /* one p2p channel: all 16 rounds' works on channel 0, 8 a batch:
     * rounds 0-7 in batch 0, 8-15 (the other node) in batch 1. The
     * channel's block runs its batches in turn (ncclKernelMain), a batch's
     * works at once: one schedule round, the lane a work's slot in its
     * batch (channel 0 x 8 + slot), so each rank receives on lane j round
     * j's part (its node), then round 8 + j's (the other node). 64 KiB a
     * peer: above 1 x 16 KiB, Simple on the node too; one part (min(1,
     * 64 KiB / 64 KiB)). */
    strata_coll_shape sh = {.kind = STRATA_OP_ALL_TO_ALL, .algo = strata_coll_algo_find("nccl"), .n_dims = 1,
                            .dims = {16}, .in_bytes = 16u << 16, .domain_ranks = 8, .tuned = true};
    sh.tune.proto = STRATA_NCCL_SIMPLE;
    sh.tune.p2p = (strata_nccl_p2p){.ranks = 16, .nodes = 2, .local_ranks = 8, .p2p_channels = 1, .per_peer = 1,
                                    .min_channels = 1, .step_bytes = 128u << 10, .ll_step_bytes = 64u << 10};
    uint32_t rounds;
    GArray *steps = schedule(&sh, &rounds);
    ck_assert_uint_eq(rounds, 1);
    ck_assert_uint_eq(steps->len, 256);
    uint32_t seen[16][8] = {{0}};
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        ck_assert_uint_eq(st->round, 0);
        ck_assert_uint_lt(st->lane, 8);
        /* on its lane the part from the node comes first, the other node's second */
        ck_assert_uint_eq(seen[st->dst][st->lane]++, st->src / 8 != st->dst / 8 ? 1 : 0);
    }
    for (uint32_t q = 0; q < 16; q++)
        for (uint32_t l = 0; l < 8; l++)
            ck_assert_uint_eq(seen[q][l], 2);
    g_array_free(steps, true);
}
END_TEST

/* A 64 KiB all-to-all over 2 x 8 H100 (h100-16x8-ib, NCCL 2.27): 4 KiB a
 * peer, one part (min(nChannelsMin, ...) = 1, within LL's 32 KiB and
 * Simple's 64 KiB least part). On the node LL (4 KiB <= per peer 2 x
 * 16 KiB), a part carrying ceil(4,096 x 2 x 5/4) = 10,240 wire bytes, no
 * flag; to the 8 peers on the other node Simple (enqueue.cc l. 815: the
 * network's p2p connections have no LL buffer under NCCL_ALLOC_P2P_NET_LL_
 * BUFFERS=0), its 4,096 bytes as they are after NCCL's Simple network step
 * hwLatencies[NET][Ring][Simple] 14 us less the route's 2 x 1 us: 12 us
 * (LL's 2.7 us would have left 0.7 us), and the receive's clear-to-send
 * after the call before (coll_impl_nccl.c p2p_cts_s: NCCL's network
 * overhead of one post, 1 us on Intel, and the FIFO entry's flight, the
 * route's 2 x 1 us): 15 us, in one InfiniBand packet of the
 * 4096-byte MTU (the file's nccl_ib_link_layer: LRH, BTH, ICRC and VCRC 26
 * bytes, the RDMA write's RETH and immediate 20; hw/ib_frame.h): 4,142
 * wire bytes. */
START_TEST(nccl_p2p_across_nodes_runs_simple_after_a_network_step)
{
    const char *set[] = {"interconnect.nvlink.nccl_version=2.27", NULL};
    strata_hw *hw = strata_test_load_hw("h100-16x8-ib", set);
    const strata_coll_impl *row = strata_hw_coll_impl(hw);
    strata_coll_tuning t;
    ck_assert(row->tune(hw, STRATA_OP_ALL_TO_ALL, 16, 8, 64u << 10, 0, &t, NULL));
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL);
    ck_assert_double_eq_tol(t.net_step_s, 15e-6, 1e-12);
    ck_assert(strata_nccl_p2p_ll_to(&t.p2p, 4096, false) && !strata_nccl_p2p_ll_to(&t.p2p, 4096, true));
    strata_coll_shape sh = {.kind = STRATA_OP_ALL_TO_ALL, .algo = strata_coll_algo_find("nccl"), .n_dims = 1,
                            .dims = {16}, .in_bytes = 64u << 10, .domain_ranks = 8, .channels = t.channels,
                            .chunk_bytes = t.chunk_bytes, .tuned = true, .tune = t};
    uint32_t rounds;
    GArray *steps = schedule(&sh, &rounds);
    ck_assert_uint_eq(rounds, 1);
    uint32_t net = 0, local = 0;
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        ck_assert_uint_eq(st->bytes, 4096);
        if (st->src == st->dst)
            continue;
        bool across = st->src / 8 != st->dst / 8;
        net += across;
        local += !across;
        ck_assert_uint_eq(st->wire_bytes, across ? 4096 + 26 + 20 : 10240);
        ck_assert_double_eq_tol(st->delay_s, across ? 15e-6 : 0, 1e-12);
        ck_assert(!st->handshake);
    }
    ck_assert_uint_eq(net, 16 * 8);
    ck_assert_uint_eq(local, 16 * 7);
    g_array_free(steps, true);
    strata_hw_free(hw);
}
END_TEST

/* The same on configs/hw/h100-2x8-ib.ini (2.30's tables: Ring/Simple
 * network step 14 us as 2.27's; NICs 50 GB/s, 1 us a hop): rounds 8-15
 * (the other node) share channel base 1 in one batch, so a rank receives
 * its 8 parts from the other node at once, each after 12 us, the
 * receive's clear-to-send after the call before (one post of NCCL's
 * network overhead, 1 us on Intel, and the FIFO entry's flight, the
 * route's 2 x 1 us: 3 us) and the data's route 2 x 1 us, its NIC carrying
 * 8 x 4,096 B at 50 GB/s (0.66 us): at least 17.66 us, and at most about
 * 1 us more (the NIC's PCIe hops and the parts on the node beside them).
 * Before the clear-to-send: 14.66 to 15.7 us; before the LL-buffer rule:
 * LL's 0.7 us step, 4.8 us. */
START_TEST(nccl_small_all_to_all_across_nodes_pays_simples_step)
{
    char *choice = NULL, *name = NULL;
    double t = strata_test_run_collective("configs/hw/h100-2x8-ib.ini",
                                          "strata-trace 1\noption mesh=data:16\nalloc a 65536 dtype=f32\n"
                                          "alloc b 65536 dtype=f32\nall-to-all b a axis=data\nfree a\nfree b\n",
                                          &name, &choice);
    ck_assert_str_eq(name, "nccl");
    ck_assert_msg(t >= 17.66e-6 && t <= 18.7e-6, "%g s", t);
    g_free(choice);
    g_free(name);
}
END_TEST

/* The nccl row's tune for an all-to-all (h100-16x8-ib: dgx-h100's NVLink
 * section, NICs 1 us a hop). One node of 8: comm->nChannels 24 (the ring
 * graph's 12 doubled), so p2pnChannels 32, per peer 32 (34 for a local
 * peer), nChannelsMin 4, NVLink's 512 KiB step, no network step; 8 MiB
 * (1 MiB a peer, above LL's 32 x 16 KiB): Simple. Two nodes: the net
 * chunk, NCCL's Simple network step 14 us less the route's 2 x 1 us, and
 * the receive's clear-to-send (1 us of NCCL's network overhead, the
 * route's 2 us): 15 us; 16 KiB
 * (1 KiB a peer): LL on the node, the same Simple step across it. The row
 * picks nccl for an all-to-all. */
START_TEST(the_nccl_row_tunes_an_all_to_all)
{
    const char *set[] = {"interconnect.nvlink.nccl_version=2.27", NULL};
    strata_hw *hw = strata_test_load_hw("h100-16x8-ib", set);
    const strata_coll_impl *row = strata_hw_coll_impl(hw);
    ck_assert_str_eq(row->pick(hw, STRATA_OP_ALL_TO_ALL, NULL, 0), "nccl");
    strata_coll_tuning t;
    ck_assert(row->tune(hw, STRATA_OP_ALL_TO_ALL, 8, 8, 8u << 20, 0, &t, NULL));
    ck_assert_uint_eq(t.p2p.p2p_channels, 32);
    ck_assert_uint_eq(t.p2p.per_peer, 32);
    ck_assert_uint_eq(t.p2p.min_channels, 4);
    ck_assert_uint_eq(t.p2p.step_bytes, 512u << 10);
    ck_assert_uint_eq(t.channels, 32);
    ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
    ck_assert(t.net_step_s == 0 && t.launch_s == 0);
    ck_assert(row->tune(hw, STRATA_OP_ALL_TO_ALL, 16, 8, 32u << 20, 0, &t, NULL));
    ck_assert_uint_eq(t.p2p.nodes, 2);
    ck_assert_uint_eq(t.p2p.local_ranks, 8);
    ck_assert_uint_eq(t.p2p.step_bytes, 128u << 10);
    ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(t.net_step_s, 15e-6, 1e-12);
    ck_assert(row->tune(hw, STRATA_OP_ALL_TO_ALL, 16, 8, 16u << 10, 0, &t, NULL));
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL); /* on the node; across it Simple, after Simple's step */
    ck_assert_double_eq_tol(t.net_step_s, 15e-6, 1e-12);
    strata_hw_free(hw);
}
END_TEST

/* NCCL v2.28.7-1 on (nccl_rules): p5's 2 x 8 in groups of 8 (one a
 * node): group deltas 0, 1, local deltas in order (round 3: 0, 3, where
 * 2.27 walks 0, 1, 3, 6: 6); bases 0 for rounds 0-7 and 1 for 8-15,
 * reversed over 5 bits (32 channels): 0 and 16, the part added: round 3's
 * parts on 0, 1, round 8's on 16, 17. One node: round 5's base 0b00101
 * reversed 0b10100 = 20, its part 3 on 23. v2.29.7-1: one H100 node's 64
 * KiB a peer is one part (min(4, 64 KiB / 64 KiB)) and LL only up to 1 x
 * 16 KiB: Simple (2.27: LL up to 32 x 16 KiB); 8 KiB: LL. Groups on a
 * node of 16: 8 in v2.28 (two groups), the node's 16 from v2.29. */
START_TEST(nccl_228_groups_and_reversed_bases)
{
    strata_nccl_p2p p = p5x2;
    p.nccl_rules = STRATA_NCCL_P2P_228;
    p.group = 8;
    uint32_t nd[16], ld[16];
    strata_nccl_p2p_deltas(&p, nd, ld);
    ck_assert_uint_eq(nd[3], 0);
    ck_assert_uint_eq(ld[3], 3);
    ck_assert_uint_eq(nd[9], 1);
    ck_assert_uint_eq(ld[9], 1);
    ck_assert_uint_eq(strata_nccl_p2p_peer(&p, 2, nd[9], ld[9]), 11);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 3, 0), 0);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 3, 1), 1);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 8, 0), 16);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 15, 1), 17);
    strata_nccl_p2p one = {.ranks = 8, .nodes = 1, .local_ranks = 8, .p2p_channels = 32, .per_peer = 32,
                           .min_channels = 4, .step_bytes = 512u << 10, .ll_step_bytes = 64u << 10,
                           .nccl_rules = STRATA_NCCL_P2P_228};
    ck_assert_uint_eq(strata_nccl_p2p_channel(&one, 5, 3), 23);
    ck_assert(strata_nccl_p2p_ll(&one, 64u << 10));
    one.nccl_rules = STRATA_NCCL_P2P_229;
    ck_assert_uint_eq(strata_nccl_p2p_parts(&one, 64u << 10), 1);
    ck_assert(!strata_nccl_p2p_ll(&one, 64u << 10));
    ck_assert(strata_nccl_p2p_ll(&one, 8u << 10));
    strata_nccl_comm c = {.arch = STRATA_NCCL_HOPPER, .ranks = 16, .graph_channels = 12, .channel_gbs = 30,
                          .version = strata_nccl_version_find("2.28")};
    strata_nccl_p2p_init(&c, 34, &p);
    ck_assert_uint_eq(p.group, 8);
    c.version = strata_nccl_version_find("2.29");
    strata_nccl_p2p_init(&c, 34, &p);
    ck_assert_uint_eq(p.group, 16);
}
END_TEST

/* NCCL v2.19.3-1's plan (STRATA_NCCL_P2P_219) on one DGX A100 node: a ring
 * graph of 12 channels of 20 GB/s, comm->nChannels 24, p2pnChannels
 * pow2Up(24) = 32; a local peer 2 x 240 / 20 = 24 channels, per peer
 * pow2Up(24) = 32. scheduleP2pTasksToPlan (enqueue.cc l. 621-627), 8
 * ranks: nChannelsMin 32 halved while x 8 > 32: 4; nChannelsMax 32 halved
 * while x 8 > 4 x 32 = 128: 16. minSize 512 KiB / 8 = 64 KiB, maxSize
 * 32 x 512 KiB = 16 MiB (l. 658-659). */
START_TEST(nccl_219_chunks_by_calc_p2p_chunk_size)
{
    strata_nccl_comm c = {.arch = STRATA_NCCL_AMPERE, .ranks = 8, .graph_channels = 12, .channel_gbs = 20,
                          .version = strata_nccl_version_find("2.19")};
    strata_nccl_p2p p;
    strata_nccl_p2p_init(&c, 24, &p);
    ck_assert_uint_eq(p.p2p_channels, 32);
    ck_assert_uint_eq(p.per_peer, 32);
    ck_assert_uint_eq(p.min_channels, 4);
    ck_assert_uint_eq(p.max_channels, 16);
    /* 8 MiB to a peer (a 64 MiB all-to-all): calcP2pChunkSize max(64 KiB,
     * 8 MiB / 4) = 2 MiB, not above 16 MiB: 4 chunks of 2 MiB, Simple */
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p, 8u << 20), 4);
    ck_assert(!strata_nccl_p2p_ll(&p, 8u << 20));
    /* 1 GiB to a peer (8 GiB): 256 MiB, doubled while above 16 MiB and
     * n <= 16 / 2: 8 (128 MiB), 16 (64 MiB); 16 chunks (2.27: 32) */
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p, 1u << 30), 16);
    /* 100 KiB: max(64 KiB, 25 KiB) = 64 KiB, aligned 64 KiB: chunks of
     * 64 KiB and 36 KiB, 2; the first above 16 KiB: Simple (2.27: LL up to
     * 32 x 16 KiB = 512 KiB) */
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p, 100u << 10), 2);
    uint64_t beg, end;
    strata_nccl_p2p_bounds(&p, 2, 1, 100u << 10, &beg, &end);
    ck_assert_uint_eq(beg, 64u << 10);
    ck_assert_uint_eq(end, 100u << 10);
    ck_assert(!strata_nccl_p2p_ll(&p, 100u << 10));
    /* 80 KiB: max(64 KiB, 20 KiB) = 64 KiB: chunks of 64 KiB and 16 KiB.
     * NCCL's addP2pToPlan decides LL per chunk (the 16 KiB tail LL);
     * strata's one protocol for the send is its first chunk's: Simple
     * (known difference (b), nccl_p2p.h) */
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p, 80u << 10), 2);
    strata_nccl_p2p_bounds(&p, 2, 1, 80u << 10, &beg, &end);
    ck_assert_uint_eq(end - beg, 16u << 10);
    ck_assert(!strata_nccl_p2p_ll(&p, 80u << 10));
    /* 16 KiB: one chunk of 16 KiB (min(bytes, 64 KiB)), at most 16384: LL */
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p, 16u << 10), 1);
    ck_assert(strata_nccl_p2p_ll(&p, 16u << 10));
    ck_assert(!strata_nccl_p2p_ll(&p, (16u << 10) + 1));
    /* the copy to itself is cut as any send (sendrecv.h runSend) */
    ck_assert_uint_eq(strata_nccl_p2p_self_parts(&p, 4), 4);
    /* init.cc l. 1166-1193: local steps in order; channel.h l. 15-45: round
     * k's base is the step k, mirrorBits over 32: 5 -> 0b10100 = 20, part
     * 3 on 23; step 3 -> 24, part 1 on 25 */
    uint32_t nd[8], ld[8];
    strata_nccl_p2p_deltas(&p, nd, ld);
    for (uint32_t k = 0; k < 8; k++)
        ck_assert_uint_eq(ld[k], k);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 5, 3), 23);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 3, 1), 25);
    /* 4 ranks: nChannelsMax 32 (32 x 4 = 128 is not above 128); 2 ranks
     * the same: no cap (0) */
    c.ranks = 4;
    strata_nccl_p2p_init(&c, 24, &p);
    ck_assert_uint_eq(p.min_channels, 8);
    ck_assert_uint_eq(p.max_channels, 0);
}
END_TEST

/* The receive's clear-to-send between two p2p calls (coll_impl_nccl.c
 * p2p_cts_s), by hand on h100-16x8-ib (NICs 1 us a hop) at 16 x 8 KiB a
 * rank (512 B a peer): NCCL's Simple network step 14 us less the route's
 * 2 x 1 us is 12 us; the next call's irecv posts one clear-to-send once
 * the call before is done, NCCL's network overhead for one post (1 us on
 * Intel hosts, 2 us on AMD: getNetOverhead) and its flight NIC to NIC
 * (2 x 1 us): 12 + 1 + 2 = 15 us on Intel, 12 + 2 + 2 = 16 us on AMD;
 * with the NICs at 3 us a hop, 14 - 6 + 1 + 6 = 15 us (the route's share
 * of NCCL's 14 us leaves the step, the clear-to-send's flight comes
 * with it). One node: no network step, no clear-to-send. */
START_TEST(a_back_to_back_receive_waits_its_clear_to_send)
{
    const char *intel[] = {"interconnect.nvlink.nccl_version=2.30", NULL};
    const char *amd[] = {"interconnect.nvlink.nccl_version=2.30", "interconnect.nvlink.nccl_cpu=amd", NULL};
    const char *slow[] = {"interconnect.nvlink.nccl_version=2.30", "network.ib.latency=3us", NULL};
    const char **sets[] = {intel, amd, slow};
    const double want[] = {15e-6, 16e-6, 15e-6};
    for (int i = 0; i < 3; i++) {
        strata_hw *hw = strata_test_load_hw("h100-16x8-ib", sets[i]);
        strata_coll_tuning t;
        ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_TO_ALL, 16, 8, 8u << 10, 0, &t, NULL));
        ck_assert_msg(fabs(t.net_step_s - want[i]) < 1e-12, "set %d: %g s", i, t.net_step_s);
        ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_TO_ALL, 8, 8, 8u << 10, 0, &t, NULL));
        ck_assert(t.net_step_s == 0);
        strata_hw_free(hw);
    }
}
END_TEST

/* The clear-to-send over aws-ofi-nccl's RDMA protocol (wave 49): a p2p
 * part's first write above the plugin's eager size waits for the receive's
 * control message, as NCCL's own IB send waits for its FIFO entry. By hand
 * on validation/hw/p5-efa.ini (2 x 8 H100, aws-ofi-rdma; 5 us a link, a
 * route of 10 us; AMD hosts (nccl_cpu = amd, wave 49: p5.48xlarge's EPYC
 * 7R13), NCCL's network overhead 2 us (tuning.cc getNetOverhead); no PCIe
 * link given, so an eager copy is its local read's 2 us):
 * - 32 MiB on 16 ranks: 2 MiB a peer, 2 channels a network peer (2 x 16
 *   <= 4 x p2pnChannels), the message min(1 MiB, p2pChunkSize 128 KiB) =
 *   128 KiB > 8192 B: an RDMA write. NCCL's Simple step less the route,
 *   max(14 - 10, Simple's ends 3) = 4 us, no extra flight (large_flights
 *   0), plus the clear-to-send 2 + 10 = 12 us: 16 us (4 us before; 15
 *   with the file's hosts taken as Intel, 1 + 10).
 * - 64 KiB on 16 ranks: 4 KiB a peer, 2 KiB a message <= 8192 B: sent
 *   eagerly, no wait; 4 us + the eager copy's 2 us = 6 us (unchanged).
 * - 32 MiB with the file on efa-rdm-cuda (SENDRECV: a larger message is
 *   libfabric's read, its handshake in its 2 flights of 10 us): 4 + 20 =
 *   24 us, no clear-to-send added. */
START_TEST(an_efa_write_waits_its_control_message)
{
    const char *rdma[] = {NULL};
    const char *sr[] = {"interconnect.nvlink.nccl_net_protocol=efa-rdm-cuda", NULL};
    struct { const char **set; uint64_t bytes; double want; } cases[] = {
        {rdma, 32u << 20, 16e-6}, {rdma, 64u << 10, 6e-6}, {sr, 32u << 20, 24e-6}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        strata_hw *hw = strata_test_load_hw_file("validation/hw/p5-efa.ini", cases[i].set);
        strata_coll_tuning t;
        ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_TO_ALL, 16, 8, cases[i].bytes, 0, &t, NULL));
        ck_assert_uint_eq(t.p2p.per_peer, 2);
        ck_assert_msg(fabs(t.net_step_s - cases[i].want) < 1e-12, "case %zu: %g s", i, t.net_step_s);
        strata_hw_free(hw);
    }
}
END_TEST

/* Once a part, not once a chunk: the clear-to-send waits for the call
 * before on the channel (p2p_cts_s), and within the part's op the
 * receives post NCCL_STEPS ahead (net.cc l. 1512 in recvProxyProgress's
 * loop over posted < done + maxDepth), so its later chunks wait for none.
 * By hand on h100-16x8-ib (2.27, 2 nodes of 8: 32 p2p channels; a
 * peer across the network 2 channels, NCCL_NCHANNELS_PER_NET_PEER's 2
 * not halved as 2 x 16 ranks <= 4 x 32, so per peer 2 and nChannelsMin
 * 2, 2 x 16 <= 32; p2pChunkSize 128 KiB) at 1 MiB a peer (16 MiB a
 * rank): addP2pToPlan's parts across nodes start at min(2, 1 MiB / 64
 * KiB) = 2 of 512 KiB, doubled only while n <= per peer / 2 = 1: 2 parts
 * of 512 KiB, 4 chunks each. Each of a rank's 8 peers on the other node
 * gets 2 steps of 512 KiB, each charged the tune's 15 us once (12 us of
 * NCCL's step, 1 + 2 us of the clear-to-send), not 4 x 15 us. */
START_TEST(the_clear_to_send_is_paid_once_a_part)
{
    const char *set[] = {"interconnect.nvlink.nccl_version=2.27", NULL};
    strata_hw *hw = strata_test_load_hw("h100-16x8-ib", set);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_TO_ALL, 16, 8, 16u << 20, 0, &t, NULL));
    ck_assert_uint_eq(t.p2p.step_bytes, 128u << 10);
    ck_assert_double_eq_tol(t.net_step_s, 15e-6, 1e-12);
    strata_coll_shape sh = {.kind = STRATA_OP_ALL_TO_ALL, .algo = strata_coll_algo_find("nccl"), .n_dims = 1,
                            .dims = {16}, .in_bytes = 16u << 20, .domain_ranks = 8, .channels = t.channels,
                            .chunk_bytes = t.chunk_bytes, .tuned = true, .tune = t};
    uint32_t rounds, net = 0;
    GArray *steps = schedule(&sh, &rounds);
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        if (st->src / 8 == st->dst / 8)
            continue;
        net++;
        ck_assert_uint_eq(st->bytes, 512u << 10);
        ck_assert_double_eq_tol(st->delay_s, 15e-6, 1e-12);
    }
    ck_assert_uint_eq(net, 16 * 8 * 2);
    g_array_free(steps, true);
    strata_hw_free(hw);
}
END_TEST

/* NCCL's nNodes counts the nodes its ranks span: 12 ranks over 8-GPU
 * nodes (h100-16x8-ib) are 2 nodes (8 + 4), not 12 / 8 = 1. So a 12-rank
 * all-to-all pays NCCL's Simple network step (14 us less the route's
 * 2 x 1 us: 12 us, and the receive's clear-to-send, 1 + 2 us: 15 us; 0
 * when read as one node), and NCCL 2.19, whose model
 * strata has for one node only, refuses the 12 ranks as 2 domains. The
 * plan itself walks them as one node (nodes that do not divide the ranks:
 * strata_nccl_p2p_init). RCCL's comm counts alike (mi300x-roce, 2 x 8
 * MI300X: RCCL's Simple step 25 us less 2 x 1 us). */
START_TEST(ranks_that_fill_no_node_count_every_node_they_span)
{
    const char *set[] = {"interconnect.nvlink.nccl_version=2.27", NULL};
    strata_hw *hw = strata_test_load_hw("h100-16x8-ib", set);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_TO_ALL, 12, 8, 12u << 16, 0, &t, NULL));
    ck_assert_double_eq_tol(t.net_step_s, 15e-6, 1e-12);
    ck_assert_uint_eq(t.p2p.nodes, 1);
    strata_hw_free(hw);
    const char *v219[] = {"interconnect.nvlink.nccl_version=2.19", NULL};
    hw = strata_test_load_hw("h100-16x8-ib", v219);
    GError *err = NULL;
    ck_assert(!strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 12, 8, 1u << 20, 0, &t, &err));
    ck_assert_msg(err && strstr(err->message, "got 2 domains"), "%s", err ? err->message : "no error");
    g_clear_error(&err);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 1u << 20, 0, &t, NULL));
    strata_hw_free(hw);
    char *path = strata_test_source_path("validation/held-out/hw/mi300x-roce.ini");
    hw = strata_hw_load(path, NULL, NULL);
    g_free(path);
    ck_assert(hw != NULL);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_TO_ALL, 12, 8, 12u << 16, 0, &t, NULL));
    ck_assert_double_eq_tol(t.net_step_s, 23e-6, 1e-12);
    strata_hw_free(hw);
}
END_TEST

static Suite *nccl_p2p_suite(void)
{
    Suite *s = suite_create("nccl_p2p");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, walk_is_nccls_quadratic_order);
    tcase_add_test(tc, parts_follow_add_p2p_to_plan);
    tcase_add_test(tc, channels_by_round_and_part);
    tcase_add_test(tc, one_node_plan);
    tcase_add_test(tc, nccl_228_groups_and_reversed_bases);
    tcase_add_test(tc, nccl_219_chunks_by_calc_p2p_chunk_size);
    tcase_add_test(tc, two_by_two_all_to_all);
    tcase_add_test(tc, a_full_channel_runs_batches_in_turn);
    tcase_add_test(tc, the_nccl_row_tunes_an_all_to_all);
    tcase_add_test(tc, nccl_p2p_across_nodes_runs_simple_after_a_network_step);
    tcase_add_test(tc, nccl_small_all_to_all_across_nodes_pays_simples_step);
    tcase_add_test(tc, ranks_that_fill_no_node_count_every_node_they_span);
    tcase_add_test(tc, a_back_to_back_receive_waits_its_clear_to_send);
    tcase_add_test(tc, the_clear_to_send_is_paid_once_a_part);
    tcase_add_test(tc, an_efa_write_waits_its_control_message);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_p2p_suite()); }
