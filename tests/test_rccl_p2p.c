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
#include "hw/coll_impl.h"
#include "hw/nccl_p2p.h"

/* 8 MI300X (gfx942), rome_model_79's 28 rings: comm->nChannels 56
 * (doubled, within 128), p2pnChannels nextPow2(56) = 64 (4 x
 * CHANNEL_LIMIT); a peer on the node 4 x 1 link = 4, nextPow2 4, doubled
 * on one gfx94x node: 8; nChannelsMin 8 (8 x 8 ranks is not above 64);
 * P2P_NVL_CHUNKSIZE 512 KiB. */
START_TEST(one_mi300x_node_plan)
{
    strata_nccl_p2p p;
    strata_rccl_p2p_init(8, 1, 28, true, &p);
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
    strata_nccl_p2p_bounds(&p, 1, 100000, &beg, &end);
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
    /* gfx950: 2 a local peer, doubled only on gfx94x: 2 */
    strata_rccl_p2p_init(8, 1, 28, false, &p);
    ck_assert_uint_eq(p.per_peer, 2);
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
    strata_rccl_p2p_init(16, 2, 28, true, &p);
    ck_assert_uint_eq(p.p2p_channels, 64);
    ck_assert_uint_eq(p.per_peer, 2);
    ck_assert_uint_eq(p.min_channels, 2);
    ck_assert_uint_eq(p.step_bytes, 128u << 10);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 1, 0), 32);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 8, 0), 32);
    ck_assert_uint_eq(strata_nccl_p2p_channel(&p, 9, 1), 17);
    uint32_t nd[64], ld[64];
    strata_rccl_p2p_init(64, 8, 28, true, &p);
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
    ck_assert(t.launch_s == 0 && t.net_step_s == 0);
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

static Suite *rccl_p2p_suite(void)
{
    Suite *s = suite_create("rccl_p2p");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, one_mi300x_node_plan);
    tcase_add_test(tc, rccl_order_and_channels_across_nodes);
    tcase_add_test(tc, the_rccl_row_tunes_an_all_to_all);
    tcase_add_test(tc, an_rccl_all_to_all_runs_its_parts_at_once);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(rccl_p2p_suite()); }
