/*
 * test_coll_monotone_ring.c: issue 39's "a collective's time never falls
 * as its size grows under the same algorithm" for NCCL's ring all-reduce
 * on LL128 across nodes with the 2.19 chunk grain, on the held-out Polaris
 * shape (validation/held-out/hw/polaris-a100-slingshot.ini: 8 A100 = 2
 * nodes of 4, 4 rail rings over 2 Slingshot NICs a node).
 *
 * NCCL 2.19's LL128 chunk a channel is min(chunkSize, divUp(size,
 * nChannels x nranks x minChunkSize) x minChunkSize), minChunkSize =
 * nthreads x 60 / 2 = 19,200 B (NVIDIA/nccl v2.19.3-1 src/device/
 * all_reduce.h l. 25-30, 43), so from 1,382,401 B to 1,843,200 B a loop's
 * chunk is 3 x 19,200 x 4 channels = 230,400 B and below 1,612,801 B the
 * 8th of its n = 8 chunks is empty. Before wave 45 (main b6c839f6 and
 * earlier) the empty chunk's skipped step let a ring's next step over the
 * same connection share the NIC with the one before it (two flows of one
 * connection under max-min sharing) and the time fell: 1.5 MiB 153.32 us
 * -> 1.75 MiB 139.28, 3 MiB 242.73 -> 3.5 MiB 214.58, 512 KiB 90.44 ->
 * 640 KiB 85.87, 1 MiB 122.85 -> 1.25 MiB 100.26. A connection's copies
 * now leave one after another (coll_sched.h conn_prev): NCCL's proxy posts
 * a connection's sends in order (src/transport/net.cc sendProxyProgress),
 * and one endpoint's messages to one peer leave in post order.
 *
 * Sweeps 64 KiB to 16 MiB, every power of two and the 1.25x, 1.5x and
 * 1.75x sizes between (bench/coll_sweep.h), Ring and LL128 forced with
 * nccl_version = 2.19 (the channel count, 4, is NCCL's for these sizes on
 * this file), and asserts no fall.
 */
#include <stdio.h>
#include "testutil.h"
#include "coll_sweep.h"

#define NV "interconnect.nvlink."

START_TEST(polaris_ring_ll128_never_falls)
{
    static const char *const sets[] = {NV "nccl_version=2.19", NV "nccl_algo=Ring", NV "nccl_proto=LL128", NULL};
    char *hw = strata_test_source_path("validation/held-out/hw/polaris-a100-slingshot.ini");
    size_t n = 0;
    uint64_t *sizes = coll_sweep_sizes(64 * 1024, 16ull << 20, true, 32, &n);
    ck_assert_uint_eq(n, 33); /* 9 powers of two, 3 sizes in each of the 8 gaps: 9 + 8 x 3 */
    coll_sweep_point *pts = g_new(coll_sweep_point, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert(coll_sweep_run(hw, sets, "all-reduce", 8, NULL, sizes[i], &pts[i]));
        ck_assert_msg(pts[i].ok, "%" G_GUINT64_FORMAT ": %s", sizes[i], pts[i].message);
    }
    GArray *falls = coll_sweep_falls(pts, n, 1e-9);
    for (guint k = 0; k < falls->len; k++) {
        const coll_sweep_fall *f = &g_array_index(falls, coll_sweep_fall, k);
        fprintf(stderr, "polaris Ring/LL128: %" G_GUINT64_FORMAT " B %.4f us (%u ch) -> %" G_GUINT64_FORMAT
                " B %.4f us (%u ch)\n", pts[f->a].bytes, pts[f->a].time_s * 1e6, pts[f->a].channels,
                pts[f->b].bytes, pts[f->b].time_s * 1e6, pts[f->b].channels);
    }
    guint falls_n = falls->len;
    g_array_free(falls, TRUE);
    g_free(pts);
    g_free(sizes);
    g_free(hw);
    ck_assert_uint_eq(falls_n, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("coll_monotone_ring");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, polaris_ring_ll128_never_falls);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
