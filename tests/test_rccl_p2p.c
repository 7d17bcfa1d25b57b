/*
 * test_rccl_p2p.c: RCCL's all-to-all on the rccl row: its p2p plan
 * (sim/hw/nccl_p2p.h, a plan with `rccl`), MSCCL's all-to-all ranges
 * (sim/hw/rccl_tuning.c) and the schedule (models/collective/
 * coll_kit_p2p.c), against values worked by hand from ROCm/rccl @0cbce2a
 * (2.21.5): graph/paths.cc ncclTopoGetNchannels and
 * ncclTopoComputeP2pChannels, graph/connect.cc, init.cc (computeBuffSizes,
 * the p2p order), enqueue.cc (calcP2pChunkSize, scheduleP2pTasksToPlan,
 * addP2pToPlan), channel.h, tools/msccl-algorithms/alltoall-8n-*.xml.
 */
#include <check.h>
#include "testutil.h"
#include "collective/coll_algo.h"
#include "collective/coll_kit.h"
#include "collective/coll_sched.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"
#include "hw/nccl_p2p.h"

/* 8 MI300X (gfx942), rome_model_79's 28 rings: comm->nChannels 56
 * (doubled, within 128), p2pnChannels nextPow2(56) = 64 (4 x
 * CHANNEL_LIMIT); a peer on the node 4 x 1 link = 4, nextPow2 4, doubled
 * on one gfx94x node: 8; nChannelsMin 8 (8 x 8 ranks is not above 64);
 * P2P_NVL_CHUNKSIZE 512 KiB. */
START_TEST(one_mi300x_node_plan)
{
    strata_nccl_p2p p;
    strata_rccl_p2p_init(8, 1, 28, 2, true, &p);
    ck_assert(p.rccl);
    ck_assert_uint_eq(p.p2p_channels, 64);
    ck_assert_uint_eq(p.per_peer, 8);
    ck_assert_uint_eq(p.min_channels, 8);
    ck_assert_uint_eq(p.step_bytes, 512u << 10);
    /* 1 MiB a peer: max(64 KiB, 1 MiB / 8) = 128 KiB parts: 8, Simple */
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p, 1u << 20), 8);
    ck_assert(!strata_nccl_p2p_ll(&p, 1u << 20));
    /* 128 KiB: parts of 64 KiB (minSize, 512 KiB / 8): 2, Simple */
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p, 128u << 10), 2);
    ck_assert(!strata_nccl_p2p_ll(&p, 128u << 10));
    /* 100,000 B: one 64 KiB part and the rest, 34,464 B */
    uint64_t beg, end;
    strata_nccl_p2p_bounds(&p, strata_nccl_p2p_parts(&p, 100000), 1, 100000, &beg, &end);
    ck_assert_uint_eq(beg, 65536);
    ck_assert_uint_eq(end, 100000);
    /* 8 KiB: one part, at most NCCL_P2P_LL_THRESHOLD: LL */
    ck_assert_uint_eq(strata_nccl_p2p_parts(&p, 8u << 10), 1);
    ck_assert(strata_nccl_p2p_ll(&p, 8u << 10));
    ck_assert(!strata_nccl_p2p_ll(&p, 20u << 10));
    /* round k, part i on mirrorBits(k, 64) + i: k = 1 on 32, k = 3 on 48,
     * k = 7 on 56 + 7 = 63; the 8 rounds' 8 parts fill all 64 channels */
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 1, 0), 32);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 3, 2), 50);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 7, 7), 63);
    ck_assert_uint_eq(strata_nccl_p2p_used_channels(&p, 1u << 20), 64);
    ck_assert_uint_eq(strata_nccl_p2p_used_channels(&p, 8u << 10), 8);
    /* the rule of 2 (neither gfx942 nor gfx950): 2 a local peer, not doubled: 2 */
    strata_rccl_p2p_init(8, 1, 28, 2, false, &p);
    ck_assert_uint_eq(p.per_peer, 2);
}
END_TEST

/* RCCL 2.26.6 on 4 MI355X (gfx950), one node (Ahalperin/amd-dev @58a032f
 * results/scale_4gpu_alltoall/nccl_debug.log, rank 3's init): "24 coll
 * channels, ... 32 p2p channels, 8 p2p channels per peer". Its graph's 6
 * rings ("Pattern 4 ... nChannels 6") times gfx950's 4 copies: 24;
 * p2pnChannels nextPow2(24) = 32; a peer on the node 4 x 1
 * link = 4, doubled on one node: 8, as printed (the rule of 2 gives 2);
 * nChannelsMin 8 (8 x 4 ranks is not above 32). On the rccl row, an
 * mi300x-8.ini node read as gfx950 under 2.26 without MSCCL: 64 MiB (8 MiB
 * a peer) runs the p2p plan on its 8 channels a peer (2 before gfx950
 * took the rule), 8 rounds x 8 parts on all 64 channels. */
START_TEST(gfx950_takes_the_xgmi_rule_of_4)
{
    strata_nccl_p2p p;
    strata_rccl_p2p_init(4, 1, 6, 4, true, &p);
    ck_assert_uint_eq(p.p2p_channels, 32);
    ck_assert_uint_eq(p.per_peer, 8);
    ck_assert_uint_eq(p.min_channels, 8);
    const char *const gfx950[] = {"interconnect.xgmi.rccl_version=2.26", "interconnect.xgmi.rccl_arch=gfx950",
                                  "interconnect.xgmi.msccl=false", NULL};
    strata_hw *hw = strata_test_load_hw("mi300x-8", gfx950);
    const strata_coll_impl *row = strata_hw_coll_impl(hw);
    strata_coll_tuning t;
    ck_assert(row->tune(hw, STRATA_OP_ALL_TO_ALL, 8, 8, 64u << 20, 0, &t, NULL));
    ck_assert(!t.msccl && t.p2p.rccl);
    ck_assert_uint_eq(t.channels, 8);
    ck_assert_uint_eq(t.host.channels, 64);
    strata_hw_free(hw);
}
END_TEST

/* Across nodes: 2 x 8, 28 rings: comm->nChannels 56 (within 64), p2p 64;
 * a network peer 2 (2 x 16 is not above 4 x 64), a local one 4: 2, not
 * doubled; nChannelsMin 2; P2P_NET_CHUNKSIZE 128 KiB. Node deltas
 * 0, +1 (init.cc); 8 nodes: 0, 4, 1, 7, 3, 5, 2, 6. Channel bases:
 * node delta + local step, so round 1 (0, 1) and round 8 (1, 0) share
 * base 1, channel mirrorBits(1, 64) = 32. */
START_TEST(rccl_order_and_channels_across_nodes)
{
    strata_nccl_p2p p;
    strata_rccl_p2p_init(16, 2, 28, 2, true, &p);
    ck_assert_uint_eq(p.p2p_channels, 64);
    ck_assert_uint_eq(p.per_peer, 2);
    ck_assert_uint_eq(p.min_channels, 2);
    ck_assert_uint_eq(p.step_bytes, 128u << 10);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 1, 0), 32);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 8, 0), 32);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 9, 1), 17);
    uint32_t nd[64], ld[64];
    strata_rccl_p2p_init(64, 8, 28, 2, true, &p);
    strata_nccl_p2p_deltas(&p, nd, ld);
    static const uint32_t order[8] = {0, 4, 1, 7, 3, 5, 2, 6};
    for (uint32_t k = 0; k < 64; k++) {
        ck_assert_uint_eq(nd[k], order[k / 8]);
        ck_assert_uint_eq(ld[k], k % 8);
    }
}
END_TEST

/* The rccl row on configs/hw/mi300x-8.ini: up to 43 MiB MSCCL's
 * all-to-all (8 MiB: alltoall-8n-7mb-43mb.xml, Simple, 8 channels; 64 KiB:
 * -9kb-190kb, LL, 2), above it the p2p plan. */
START_TEST(the_rccl_row_tunes_an_all_to_all)
{
    strata_hw *hw = strata_test_load_hw("mi300x-8", NULL);
    const strata_coll_impl *row = strata_hw_coll_impl(hw);
    ck_assert_str_eq(row->pick(hw, STRATA_OP_ALL_TO_ALL, NULL, 0), "rccl");
    strata_coll_tuning t;
    ck_assert(row->tune(hw, STRATA_OP_ALL_TO_ALL, 8, 8, 8u << 20, 0, &t, NULL));
    ck_assert(t.msccl);
    ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
    ck_assert_uint_eq(t.channels, 8);
    ck_assert(row->tune(hw, STRATA_OP_ALL_TO_ALL, 8, 8, 64u << 10, 0, &t, NULL));
    ck_assert(t.msccl);
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL);
    ck_assert_uint_eq(t.channels, 2);
    ck_assert(row->tune(hw, STRATA_OP_ALL_TO_ALL, 8, 8, 64u << 20, 0, &t, NULL));
    ck_assert(!t.msccl && t.p2p.rccl);
    ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
    ck_assert_uint_eq(t.channels, 8);
    ck_assert_uint_eq(t.host.channels, 64);
    /* the p2p kernel's start: mi300x.ini's kernel_launch, 1.9 us (coll_impl_rccl.c kernel_start_s) */
    ck_assert(t.net_step_s == 0);
    ck_assert_double_eq_tol(t.launch_s, 1.9e-6, 1e-15);
    strata_hw_free(hw);
}
END_TEST

/* 64 MiB over 8 MI300X: 8 MiB a peer in 8 parts of 1 MiB (max(64 KiB,
 * 8 MiB / 8)), every round's parts on channels of their own (mirrorBits
 * of the round + part): one round; 8 self copies of 1 MiB and 7 x 8 x 8
 * sends. A part crosses one xGMI link as ceil(1 MiB x 4/3) = 1,398,102
 * bytes and an 8-byte flag: a link's direction carries 8 of them,
 * 11,184,880 B at 64 GB/s = 174.76 us, at least that and at most it plus
 * a link's 0.8 us and the HBM's self copies (8 MiB read and written at
 * 5.3 TB/s, about 3.2 us): 178.8 us. */
START_TEST(an_rccl_all_to_all_runs_its_parts_at_once)
{
    char *choice = NULL, *name = NULL;
    double t = strata_test_run_collective("configs/hw/mi300x-8.ini",
                                          "strata-trace 1\noption mesh=data:8\nalloc a 67108864 dtype=f32\n"
                                          "alloc b 67108864 dtype=f32\nall-to-all b a axis=data\nfree a\nfree b\n",
                                          &name, &choice);
    ck_assert_str_eq(name, "rccl");
    ck_assert_msg(t >= 174.76e-6 && t <= 178.8e-6, "%g s", t);
    g_free(choice);
    g_free(name);
}
END_TEST

/* validation/held-out/hw/mi300x-roce.ini (2 x 8 MI300X, rome_model_81's
 * 64 rings across nodes, a RoCE NIC a GPU at 1 us), with the overrides. */
static strata_hw *roce_hw(const char *const *overrides)
{
    return strata_test_load_hw_file("validation/held-out/hw/mi300x-roce.ini", overrides);
}

/* A 64 KiB all-to-all over 2 x 8 MI300X: 4 KiB a peer, one part
 * (calcP2pChunkSize: max(64 KiB, 4 KiB / 2) holds it), LL on the node (a
 * part of at most NCCL_P2P_LL_THRESHOLD) but Simple to the 8 peers on the
 * other node, whose connections have no LL buffer (net.cc l. 764, 944:
 * only under NCCL_ALLOC_P2P_NET_LL_BUFFERS=1). A part across nodes pays
 * RCCL's Simple network step, tuning_model_5's tree entry (25 us; RCCL
 * 2.20's: 22.4 us), less the route's two NIC latencies (2 x 1 us): 23 us
 * (2.20: 20.4 us), and the receiver's GPUDirect flush of the Simple step
 * (hw/coll_impl_rccl.c rccl_gdr_flush: 2 us, ESTIMATE; RCCL 2.20.5 does
 * not flush). The schedule: a step to the other node carries its 4,096
 * bytes as they are (Simple) after 23 + 2 = 25 us; one on the node carries
 * ceil(4,096 x 2 (LL) x 4/3 (xGMI)) = 10,923 wire bytes with no delay.
 * One node (8 ranks, 64 MiB, the p2p plan): no network step. */
START_TEST(rccl_p2p_across_nodes_runs_simple_after_a_network_step)
{
    strata_hw *hw = roce_hw(NULL);
    const strata_coll_impl *row = strata_hw_coll_impl(hw);
    strata_coll_tuning t;
    ck_assert(row->tune(hw, STRATA_OP_ALL_TO_ALL, 16, 8, 64u << 10, 0, &t, NULL));
    ck_assert(!t.msccl && t.p2p.rccl && t.p2p.nodes == 2);
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL);
    ck_assert_double_eq_tol(t.net_step_s, 23e-6, 1e-12);
    ck_assert_double_eq_tol(t.net_flush_s, 2e-6, 1e-12);
    strata_coll_shape sh = {.kind = STRATA_OP_ALL_TO_ALL, .algo = strata_coll_algo_find("rccl"), .n_dims = 1,
                            .dims = {16}, .in_bytes = 64u << 10, .domain_ranks = 8, .channels = t.channels,
                            .chunk_bytes = t.chunk_bytes, .tuned = true, .tune = t};
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    ck_assert_uint_eq(strata_coll_schedule(&sh, steps), 1); /* a lane per channel, one round */
    uint32_t net = 0, local = 0;
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        ck_assert_uint_eq(st->bytes, 4096);
        if (st->src == st->dst)
            continue;
        bool across = st->src / 8 != st->dst / 8;
        net += across;
        local += !across;
        ck_assert_uint_eq(st->wire_bytes, across ? 4096 : 10923);
        ck_assert_double_eq_tol(st->delay_s, across ? 25e-6 : 0, 1e-12);
    }
    ck_assert_uint_eq(net, 16 * 8);
    ck_assert_uint_eq(local, 16 * 7);
    g_array_free(steps, TRUE);
    strata_hw_free(hw);
    const char *const v20[] = {"interconnect.xgmi.rccl_version=2.20", NULL};
    hw = roce_hw(v20);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_TO_ALL, 16, 8, 64u << 10, 0, &t, NULL));
    ck_assert_double_eq_tol(t.net_step_s, 20.4e-6, 1e-12);
    ck_assert(t.net_flush_s == 0);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_TO_ALL, 8, 8, 64u << 20, 0, &t, NULL));
    ck_assert(t.net_step_s == 0);
    strata_hw_free(hw);
}
END_TEST

/* Its time: rounds 1-7 (local) and 8-14 (the other node) share channels
 * by pairs (bases 1-7; round 15's base 8 is alone), so a rank receives a
 * channel's local part, then its part from the other node, on that
 * channel's lane: the local one, 10,923 wire bytes at 64 GB/s and the xGMI
 * link's 0.8 us (0.971 us), then 23 us, the receiver's flush (2 us), the
 * route's two NIC latencies (2 x 1 us) and 4,096 B at 50 GB/s (0.082
 * us): 28.053 us, after the p2p kernel's start (mi300x.ini's
 * kernel_launch, 1.9 us): 29.953 us; at most that and the HBM's 0.5 us
 * access on each of the two copies, 30.953 us (it was 5.311 us without the
 * network step, 26.544 without the flush, 28.053 without the start;
 * holding rounds 8-14 for round 15 would take two network steps, over 50
 * us). */
START_TEST(rccl_p2p_across_nodes_waits_for_its_channel_only)
{
    char *choice = NULL, *name = NULL;
    double t = strata_test_run_collective("validation/held-out/hw/mi300x-roce.ini",
                                          "strata-trace 1\noption mesh=data:16\nalloc a 65536 dtype=f32\n"
                                          "alloc b 65536 dtype=f32\nall-to-all b a axis=data\nfree a\nfree b\n",
                                          &name, &choice);
    ck_assert_str_eq(name, "rccl");
    ck_assert_msg(t >= 29.953e-6 && t <= 30.953e-6, "%g s", t);
    g_free(choice);
    g_free(name);
}
END_TEST

static Suite *rccl_p2p_suite(void)
{
    Suite *s = suite_create("rccl_p2p");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, one_mi300x_node_plan);
    tcase_add_test(tc, gfx950_takes_the_xgmi_rule_of_4);
    tcase_add_test(tc, rccl_order_and_channels_across_nodes);
    tcase_add_test(tc, the_rccl_row_tunes_an_all_to_all);
    tcase_add_test(tc, an_rccl_all_to_all_runs_its_parts_at_once);
    tcase_add_test(tc, rccl_p2p_across_nodes_runs_simple_after_a_network_step);
    tcase_add_test(tc, rccl_p2p_across_nodes_waits_for_its_channel_only);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(rccl_p2p_suite()); }
