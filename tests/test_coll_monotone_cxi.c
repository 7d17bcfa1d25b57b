/*
 * test_coll_monotone_cxi.c: issue 39's "a collective's time never falls as
 * its size grows under the same algorithm" on a file that runs libfabric's
 * CXI provider (HPE Slingshot 11) under aws-ofi-nccl: validation/held-out/
 * hw/kestrel-h100-slingshot.ini, which names nccl_net_protocol =
 * cxi-sendrecv from wave 45 (its run's environment: run_nccl_cxi.sh l.
 * 18-25, no FI_CXI_RDZV_* nor FI_CXI_RX_MATCH_MODE). The row adds the
 * rendezvous Get's two flights to every network message above 4097 B
 * (sim/hw/net_protocol.c), so a sweep's messages crossing that threshold
 * must not make the time fall.
 *
 * By hand first: the file's network is 1 us a link, a flight NIC to NIC 2
 * x 1 = 2 us; on Ring/Simple (NCCL 2.25) an 8 KiB all-reduce of 8 ranks
 * (2 nodes of 4) sends at most 8192 / 8 ranks = 1 KiB a channel's message
 * (eager, nothing more), 64 MiB min(2 x 512 KiB, 64 MiB / (8 x at most 12
 * channels)) = 699,051 B (a rendezvous): the large step costs the Get's 2
 * flights, 2 x 2 x 1 us = 4 us, more than the small one (nothing else in
 * the step depends on the size: cq_read_s 0, no eager copy).
 *
 * Then the sweep: 1 KiB to 1 GiB, every power of two and the 1.25x, 1.5x
 * and 1.75x sizes between (bench/coll_sweep.h), on 8 GPUs (2 nodes; set
 * 27 runs 16 nodes, 64 GPUs, too slow for a unit test's sweep), NCCL 2.25
 * as set 27 runs it: NCCL's own choice, and Simple forced; no fall under
 * the same algorithm, protocol and channel count (a fall across NCCL's
 * channel cut is the library's own: tests/test_coll_monotone.c); the same
 * with Olivia's settings' row named instead (nccl_net_protocol = cxi-alt-read:
 * eager to 192 B, four flights more above it; no shipped file names it),
 * from 32 B.
 */
#include <stdio.h>
#include "testutil.h"
#include "coll_sweep.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"

#define NV "interconnect.nvlink."
#define KESTREL "validation/held-out/hw/kestrel-h100-slingshot.ini"

START_TEST(kestrel_step_pays_the_get_above_the_threshold)
{
    const char *set[] = {"hardware.devices=8", NV "nccl_version=2.25", NV "nccl_algo=Ring", NV "nccl_proto=Simple",
                         NULL};
    strata_hw *hw = strata_test_load_hw_file(KESTREL, set);
    strata_coll_tuning small, large;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 4, 8192, 0, &small, NULL));
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 4, 64ull << 20, 0, &large, NULL));
    ck_assert_double_eq_tol(large.net_step_s - small.net_step_s, 4e-6, 1e-12);
    strata_hw_free(hw);
}
END_TEST

/* The falls of the series (same algorithm, protocol and channels), each printed. */
static guint falls_of(const char *const *sets, uint32_t devices, uint64_t lo)
{
    char *hw = strata_test_source_path(KESTREL);
    size_t n = 0;
    uint64_t *sizes = coll_sweep_sizes(lo, 1ull << 30, true, 4ull * devices, &n);
    coll_sweep_point *pts = g_new(coll_sweep_point, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert(coll_sweep_run(hw, sets, "all-reduce", devices, NULL, sizes[i], &pts[i]));
        ck_assert_msg(pts[i].ok, "%" G_GUINT64_FORMAT ": %s", sizes[i], pts[i].message);
    }
    guint same = coll_sweep_same_channel_falls("kestrel", pts, n);
    g_free(pts);
    g_free(sizes);
    g_free(hw);
    return same;
}

/* The same sweep with Olivia's settings' row (cxi-alt-read: eager to 192 B,
 * four flights more above), from 32 B (8 devices x 4 B) so that a rank's
 * messages cross 192 B inside the sweep (review, wave 45: from 1 KiB every
 * message was already above it and a reversed threshold passed). */
START_TEST(kestrel_alt_read_never_falls)
{
    static const char *const own[] = {"hardware.devices=8", NV "nccl_version=2.25", NV "nccl_net_protocol=cxi-alt-read",
                                      NULL};
    static const char *const simple[] = {"hardware.devices=8", NV "nccl_version=2.25",
                                         NV "nccl_net_protocol=cxi-alt-read", NV "nccl_proto=Simple", NULL};
    ck_assert_uint_eq(falls_of(own, 8, 32), 0);
    ck_assert_uint_eq(falls_of(simple, 8, 32), 0);
}
END_TEST

START_TEST(kestrel_never_falls)
{
    static const char *const own[] = {"hardware.devices=8", NV "nccl_version=2.25", NULL};
    static const char *const simple[] = {"hardware.devices=8", NV "nccl_version=2.25", NV "nccl_proto=Simple", NULL};
    ck_assert_uint_eq(falls_of(own, 8, 1024), 0);
    ck_assert_uint_eq(falls_of(simple, 8, 1024), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("coll_monotone_cxi");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, kestrel_step_pays_the_get_above_the_threshold);
    tcase_add_test(tc, kestrel_never_falls);
    tcase_add_test(tc, kestrel_alt_read_never_falls);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
