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
#include <string.h>
#include "testutil.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"

#define A100_HW "validation/held-out/hw/a100-40gb-hdr-ib.ini"
#define NVL "interconnect.nvlink."

static strata_coll_tuning tune_at(const char *version, const char *cpu, const char *algo, const char *proto,
                                  uint32_t ranks, uint64_t bytes)
{
    char *devices = g_strdup_printf("hardware.devices=%u", ranks);
    char *c = g_strconcat(NVL "nccl_cpu=", cpu, NULL), *a = algo ? g_strconcat(NVL "nccl_algo=", algo, NULL) : NULL;
    char *p = proto ? g_strconcat(NVL "nccl_proto=", proto, NULL) : NULL;
    char *v = g_strconcat(NVL "nccl_version=", version, NULL);
    const char *o[] = {devices, v, c, a ? a : p, a ? p : NULL, NULL};
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
    g_free(v);
    return t;
}

static strata_coll_tuning tune(const char *cpu, const char *algo, const char *proto, uint32_t ranks,
                               uint64_t bytes)
{
    return tune_at("2.25", cpu, algo, proto, ranks, bytes);
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

/* NCCL 2.19 across nodes (wave 39; NVIDIA/nccl v2.19.3-1
 * src/graph/tuning.cc), on the same 2 x 8 of AMD hosts:
 *   Ring/LL of 256 KiB: nInterSteps = 2 x nNodes = 4 (l. 161; v2.25.1-1: 2
 *     x (nNodes - 1) = 2), so 6.6 + 26 x max(0.6, 2) + 4 x 2.7 = 69.4 us
 *     (v2.25: 68.0), + 262144 / (22.5 x 16/30 x 1000) = 21.845 us (the
 *     ring's LL at a quarter, min(22.5, 192 x .25), the same cap);
 *   Tree/Simple: no base, 28 us a step on NVLink and on the network (l.
 *     56-77): 2 x (7 x 28 + 1 x 28) = 448 us, where v2.25.1-1 has 8.4 + 2
 *     x (7 x 4.0 + 14) = 92.4 us; the bandwidth is the same in both (the
 *     tree graph's and Ampere's perChMaxTreeBws row, l. 102-106 / 170-175),
 *     so at one size the two estimates differ by 355.6 us. */
START_TEST(nccl_219_across_nodes_reads_its_own_latencies)
{
    strata_coll_tuning t = tune_at("2.19", "amd", "Ring", "LL", 16, 256u << 10);
    ck_assert_double_eq_tol(t.estimate_s, 69.4e-6 + 262144.0 / (22.5e9 * 16 / 30), 1e-11);
    strata_coll_tuning a = tune_at("2.19", "amd", "Tree", "Simple", 16, 64u << 20);
    strata_coll_tuning b = tune_at("2.25", "amd", "Tree", "Simple", 16, 64u << 20);
    ck_assert_int_eq(a.algo, STRATA_NCCL_TREE);
    ck_assert_int_eq(a.proto, STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(a.estimate_s - b.estimate_s, (448.0 - 92.4) * 1e-6, 1e-11);
}
END_TEST

/* 2.19's table holds no Hopper rules across nodes (NVLS): refused. */
START_TEST(nccl_219_refuses_hopper_nodes)
{
    const char *o[] = {"hardware.devices=16", NVL "nccl_version=2.19", NVL "nccl_arch=hopper", NULL};
    strata_hw *hw = strata_test_load_hw_file(A100_HW, o);
    strata_coll_tuning t;
    GError *err = NULL;
    ck_assert(!strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 1u << 20, 0, &t, &err));
    ck_assert_ptr_nonnull(err);
    ck_assert_ptr_nonnull(strstr(err->message, "Volta or Ampere"));
    g_error_free(err);
    strata_hw_free(hw);
}
END_TEST

static Suite *nccl_amd_hosts_suite(void)
{
    Suite *s = suite_create("nccl_amd_hosts");
    TCase *tc = tcase_create("amd_hosts");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, amd_hosts_pay_nccls_net_overhead_and_ll_cap_in_its_model);
    tcase_add_test(tc, nccl_219_across_nodes_reads_its_own_latencies);
    tcase_add_test(tc, nccl_219_refuses_hopper_nodes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_amd_hosts_suite()); }
