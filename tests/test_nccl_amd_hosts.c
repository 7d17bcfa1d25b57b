/*
 * test_nccl_amd_hosts.c: what the hosts' CPU changes in the nccl row across
 * nodes (nccl_cpu; hw/nccl_tuning.c; models/collective/algo_nccl_tree.c),
 * on validation/held-out/hw/a100-40gb-hdr-ib.ini (A100 nodes on AMD EPYC
 * hosts, nccl_cpu = amd from the topology file NCCL reads) cut to two
 * nodes (hardware.devices=16) at nccl_version 2.25. NCCL's tuning reads the
 * CPU vendor twice across nodes (NVIDIA/nccl v2.25.1-1 src/graph/tuning.cc):
 * getNetOverhead, 2 us a network post on AMD x86 and 1 on Intel (l.
 * 186-194), which every step of a multi-node ring costs at least in its
 * model, 3x on Simple; and llMaxBws (l. 150-156, 217-220), LL's bus
 * bandwidth across nodes, 22.5 / 19.0 GB/s on 2 / 4+ nodes of AMD hosts,
 * 39.0 / 20.4 on Intel's. Values worked by hand below.
 */
#include <check.h>
#include "testutil.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"

#define A100_HW "validation/held-out/hw/a100-40gb-hdr-ib.ini"
#define NVL "interconnect.nvlink."

static strata_coll_tuning tune(const char *cpu, const char *algo, const char *proto, uint32_t ranks,
                               uint64_t bytes)
{
    char *devices = g_strdup_printf("hardware.devices=%u", ranks);
    char *c = g_strconcat(NVL "nccl_cpu=", cpu, NULL), *a = algo ? g_strconcat(NVL "nccl_algo=", algo, NULL) : NULL;
    char *p = proto ? g_strconcat(NVL "nccl_proto=", proto, NULL) : NULL;
    const char *o[] = {devices, NVL "nccl_version=2.25", c, a ? a : p, a ? p : NULL, NULL};
    strata_hw *hw = strata_test_load_hw_file(A100_HW, o);
    strata_coll_tuning t;
    GError *err = NULL;
    ck_assert_msg(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, ranks, 8, bytes, 0, &t, &err), "%s",
                  err ? err->message : "");
    strata_hw_free(hw);
    g_free(devices);
    g_free(c);
    g_free(a);
    g_free(p);
    return t;
}

/* The file's own hosts are AMD's: unset, nccl_cpu is amd, not the row's
 * default (intel). NCCL's model of a forced Ring/LL all-reduce of 256 KiB
 * over 2 x 8 (30 steps, 2 of them across the nodes, v2.25's nInterSteps
 * 2 (nNodes - 1); the ring graph 8 x 24 GB/s, its LL bus bandwidth
 * min(llMaxBw, 192 x .5), algorithm bandwidth x 16/30):
 *   Intel: 6.6 + 28 x max(0.6, 1) + 2 x 2.7 = 40.0 us, + 262144 / (39.0 x
 *          16/30 x 1000) = 12.603 us: 52.603 us;
 *   AMD:   6.6 + 28 x max(0.6, 2) + 2 x 2.7 = 68.0 us, + 262144 / (22.5 x
 *          16/30 x 1000) = 21.845 us: 89.845 us.
 * So NCCL, left to choose, runs that size on Ring/LL on Intel hosts and
 * leaves it on AMD's for the Tree on LL128 (48.5 us of latency, 14 + 2 x (7
 * x 1.25 + 8.5), which neither ring beats on AMD). */
START_TEST(amd_hosts_pay_nccls_net_overhead_and_ll_cap_in_its_model)
{
    const char *o[] = {"hardware.devices=16", NULL};
    strata_hw *hw = strata_test_load_hw_file(A100_HW, o);
    strata_coll_tuning t;
    GError *err = NULL;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 256u << 10, 0, &t, &err));
    ck_assert_int_eq(t.algo, STRATA_NCCL_TREE); /* the file's AMD hosts */
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL128);
    strata_hw_free(hw);

    t = tune("intel", "Ring", "LL", 16, 256u << 10);
    ck_assert_double_eq_tol(t.estimate_s, 40.0e-6 + 262144.0 / (39.0e9 * 16 / 30), 1e-11);
    t = tune("amd", "Ring", "LL", 16, 256u << 10);
    ck_assert_double_eq_tol(t.estimate_s, 68.0e-6 + 262144.0 / (22.5e9 * 16 / 30), 1e-11);

    t = tune("intel", NULL, NULL, 16, 256u << 10);
    ck_assert_int_eq(t.algo, STRATA_NCCL_RING);
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL);
    t = tune("amd", NULL, NULL, 16, 256u << 10);
    ck_assert_int_eq(t.algo, STRATA_NCCL_TREE);
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL128);
}
END_TEST

static Suite *nccl_amd_hosts_suite(void)
{
    Suite *s = suite_create("nccl_amd_hosts");
    TCase *tc = tcase_create("amd_hosts");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, amd_hosts_pay_nccls_net_overhead_and_ll_cap_in_its_model);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_amd_hosts_suite()); }
