/*
 * test_coll_monotone_efa.c: issue 39's "a collective's time never falls as
 * its size grows under the same algorithm" on the files that run
 * libfabric's EFA provider on GPU memory (nccl_net_protocol = efa-rdm-cuda:
 * validation/held-out/hw/p4d-efa.ini, p4de-efa.ini), whose runting read
 * prices a tree's first network step by the runt budget its domain's
 * messages share (sim/hw/net_protocol.h, docs/clusters.md "The runting
 * read's budget"). Wave 43's rule (a message alone on its domain only
 * where a channel's share was one step) made a Tree/Simple all-reduce on
 * p4d fall just above 8 MiB (8 channels of 1 MiB steps: one message a
 * channel at 8 MiB, two at 12 MiB, which then paid the long read's 19.74
 * us instead of the runt's 51.4).
 *
 * Sweeps 1 KiB to 1 GiB, every power of two and the 1.25x, 1.5x and 1.75x
 * sizes between (bench/coll_sweep.h), with the settings of the held-out
 * series that run there (set 24's p4d: NCCL 2.25, aws-ofi-p4d's row; set
 * 14's p4de: NCCL 2.25, an 8 MiB buffer, the plugin's 75 us), NCCL's own
 * choice and Tree forced, and asserts no fall under the same algorithm,
 * protocol and channel count (a fall across NCCL's channel cut is the
 * library's own: tests/test_coll_monotone.c).
 */
#include <stdio.h>
#include "testutil.h"
#include "coll_sweep.h"

#define NV "interconnect.nvlink."

/* The falls of the series (same algorithm, protocol and channels), each printed. */
static guint falls_of(const char *file, const char *const *sets, uint32_t devices)
{
    char *hw = strata_test_source_path(file);
    size_t n = 0;
    uint64_t *sizes = coll_sweep_sizes(1024, 1ull << 30, true, 4ull * devices, &n);
    coll_sweep_point *pts = g_new(coll_sweep_point, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert(coll_sweep_run(hw, sets, "all-reduce", devices, NULL, sizes[i], &pts[i]));
        ck_assert_msg(pts[i].ok, "%s %" G_GUINT64_FORMAT ": %s", file, sizes[i], pts[i].message);
    }
    guint same = coll_sweep_same_channel_falls(file, pts, n);
    g_free(pts);
    g_free(sizes);
    g_free(hw);
    return same;
}

START_TEST(p4d_never_falls)
{
    static const char *const own[] = {NV "nccl_version=2.25", NV "nccl_net_plugin=aws-ofi-p4d", NULL};
    static const char *const tree[] = {NV "nccl_version=2.25", NV "nccl_net_plugin=aws-ofi-p4d",
                                       NV "nccl_algo=Tree", NULL};
    ck_assert_uint_eq(falls_of("validation/held-out/hw/p4d-efa.ini", own, 16), 0);
    ck_assert_uint_eq(falls_of("validation/held-out/hw/p4d-efa.ini", tree, 16), 0);
}
END_TEST

START_TEST(p4de_never_falls)
{
    static const char *const own[] = {NV "nccl_version=2.25", NV "nccl_buffsize=8MiB", NV "nccl_net_latency=75us",
                                      NULL};
    static const char *const tree[] = {NV "nccl_version=2.25", NV "nccl_buffsize=8MiB", NV "nccl_net_latency=75us",
                                       NV "nccl_algo=Tree", NULL};
    ck_assert_uint_eq(falls_of("validation/held-out/hw/p4de-efa.ini", own, 16), 0);
    ck_assert_uint_eq(falls_of("validation/held-out/hw/p4de-efa.ini", tree, 16), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("coll_monotone_efa");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, p4d_never_falls);
    tcase_add_test(tc, p4de_never_falls);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
