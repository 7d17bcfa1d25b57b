/*
 * test_nccl_flush.c: NCCL's GPUDirect flush on the nccl row
 * (hw/coll_impl_nccl.c nccl_gdr_flush; models/collective/coll_kit_nccl.c):
 * below compute capability 9.0 NCCL's receive proxy reads a byte of every
 * Simple step it receives across nodes back through its NIC and tells the
 * GPU of the step only once that read completes (NVIDIA/nccl v2.25.1-1
 * src/graph/paths.cc ncclTopoNeedFlush l. 461-473, "Flush is required on
 * Ampere and earlier"; src/transport/net.cc recvProxyProgress l. 1363-1447;
 * src/transport/net_ib.cc ncclIbIflush l. 2159-2194); Hopper and
 * Blackwell do not flush. Values worked by hand below, on
 * validation/held-out/hw/a100-40gb-hdr-ib.ini cut to 2 nodes
 * (hardware.devices=16): 2 x 8 A100, an HDR NIC a GPU at 1 us and 25 GB/s,
 * nccl_version 2.30 (the default), nccl_gdr_flush unset (the row's
 * ESTIMATE, 2 us).
 */
#include <check.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "flush_steps.h"
#include "collective/coll_algo.h"
#include "collective/coll_kit.h"
#include "collective/coll_sched.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"

#define A100_HW "validation/held-out/hw/a100-40gb-hdr-ib.ini"
#define NVL "interconnect.nvlink."

/* The A100 pair with the overrides after hardware.devices=16. */
static strata_hw *a100_hw(const char *const *more)
{
    const char *o[8] = {"hardware.devices=16"};
    for (size_t i = 0; more && more[i]; i++) {
        ck_assert_uint_lt(i + 2, G_N_ELEMENTS(o));
        o[i + 1] = more[i];
    }
    return strata_test_load_hw_file(A100_HW, o);
}

/* NCCL's Simple step across nodes is hwLatencies[NET][Ring][Simple] (14
 * us, nccl_versions.c) less the route's two NIC latencies (2 x 1 us), 12
 * us; the flush adds its 2 us on Simple across nodes only: not on LL or
 * LL128 (NCCL's choice at 64 KiB), not on one node, 0 where the file says
 * so, the file's value where it sets one. An all-to-all's parts across
 * nodes run Simple whatever the plan's protocol on the node (64 KiB: LL),
 * so they flush too; their step also waits the receive's clear-to-send
 * after the call before (coll_impl_nccl.c p2p_cts_s: NCCL's network
 * overhead for one post, 2 us on this file's AMD hosts, and the 2 x 1 us
 * flight): 12 + 2 + 2 = 16 us. Hopper (h100-2x8-ib.ini, the same route)
 * does not flush. */
START_TEST(the_flush_is_on_simple_across_nodes_below_hopper)
{
    const char *const simple[] = {NVL "nccl_algo=Ring", NVL "nccl_proto=Simple", NULL};
    strata_hw *hw = a100_hw(NULL);
    strata_coll_tuning t = strata_test_flush_tune(hw, STRATA_OP_ALL_REDUCE, 16, 64u << 10);
    ck_assert_int_ne(t.proto, STRATA_NCCL_SIMPLE);
    ck_assert(t.net_flush_s == 0);
    t = strata_test_flush_tune(hw, STRATA_OP_ALL_TO_ALL, 16, 64u << 10);
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL);
    ck_assert_double_eq_tol(t.net_step_s, 16e-6, 1e-12);
    ck_assert_double_eq_tol(t.net_flush_s, 2e-6, 1e-12);
    ck_assert(strata_test_flush_tune(hw, STRATA_OP_ALL_TO_ALL, 8, 64u << 20).net_flush_s == 0);
    strata_hw_free(hw);

    hw = a100_hw(simple);
    t = strata_test_flush_tune(hw, STRATA_OP_ALL_REDUCE, 16, 1u << 20);
    ck_assert_int_eq(t.algo, STRATA_NCCL_RING);
    ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(t.net_step_s, 12e-6, 1e-12);
    ck_assert_double_eq_tol(t.net_flush_s, 2e-6, 1e-12);
    ck_assert(strata_test_flush_tune(hw, STRATA_OP_ALL_REDUCE, 8, 1u << 20).net_flush_s == 0);
    strata_hw_free(hw);

    const char *const off[] = {NVL "nccl_algo=Ring", NVL "nccl_proto=Simple", NVL "nccl_gdr_flush=0", NULL};
    hw = a100_hw(off);
    ck_assert(strata_test_flush_tune(hw, STRATA_OP_ALL_REDUCE, 16, 1u << 20).net_flush_s == 0);
    strata_hw_free(hw);
    const char *const slow[] = {NVL "nccl_algo=Ring", NVL "nccl_proto=Simple", NVL "nccl_gdr_flush=3.5us", NULL};
    hw = a100_hw(slow);
    ck_assert_double_eq_tol(strata_test_flush_tune(hw, STRATA_OP_ALL_REDUCE, 16, 1u << 20).net_flush_s, 3.5e-6, 1e-12);
    strata_hw_free(hw);

    hw = strata_test_load_hw("h100-2x8-ib", simple);
    t = strata_test_flush_tune(hw, STRATA_OP_ALL_REDUCE, 16, 1u << 20);
    ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(t.net_step_s, 12e-6, 1e-12);
    ck_assert(t.net_flush_s == 0);
    ck_assert(strata_test_flush_tune(hw, STRATA_OP_ALL_TO_ALL, 16, 64u << 10).net_flush_s == 0);
    strata_hw_free(hw);
}
END_TEST

/* The schedule: a step between the nodes that is not pipelined behind the
 * chunk before it waits NCCL's network step and the flush, 12 + 2 = 14 us
 * (12 us with nccl_gdr_flush = 0); a step inside a node waits for neither
 * (flush_steps.h). */
START_TEST(a_network_step_waits_for_the_flush)
{
    const char *const ring[] = {NVL "nccl_algo=Ring", NVL "nccl_proto=Simple", NULL};
    strata_hw *hw = a100_hw(ring);
    strata_test_flush_check_delays(hw, "nccl", STRATA_NCCL_RING, 1u << 20, 14e-6);
    strata_hw_free(hw);
    const char *const tree[] = {NVL "nccl_algo=Tree", NVL "nccl_proto=Simple", NULL};
    hw = a100_hw(tree);
    strata_test_flush_check_delays(hw, "nccl", STRATA_NCCL_TREE, 1u << 20, 14e-6);
    strata_hw_free(hw);
    const char *const ring_off[] = {NVL "nccl_algo=Ring", NVL "nccl_proto=Simple", NVL "nccl_gdr_flush=0", NULL};
    hw = a100_hw(ring_off);
    strata_test_flush_check_delays(hw, "nccl", STRATA_NCCL_RING, 1u << 20, 12e-6);
    strata_hw_free(hw);
}
END_TEST

/* The time of a 1 MiB ring all-reduce on Simple over the 2 x 8 A100s, run
 * by the engine with the flush (2 us) and without it (0). NCCL's rings
 * cross between the nodes twice (each leaves its node once); the chunk
 * whose path crosses most (coll_kit_tiers.c ring_critical_chunk) takes
 * both crossings in the reduce-scatter and both in the all-gather, and
 * each of its crossings waits the step's delay: the collective ends 4 x 2
 * = 8 us later with the flush, everything else the same. */
static double ring_time(const char *flush)
{
    char *hw = strata_test_source_path(A100_HW);
    char *trace = strata_test_write_temp("flush-XXXXXX.trace", "strata-trace 1\noption mesh=data:16\n"
                                                                "alloc a 1048576 dtype=f32\nall-reduce a axis=data\n"
                                                                "free a\n");
    char *json = g_strconcat(trace, ".json", NULL);
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--json", json, "-q", "--set",
                                          "hardware.devices=16", "--set", NVL "nccl_algo=Ring", "--set",
                                          NVL "nccl_proto=Simple", "--set", flush, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_file(p, json, NULL));
    JsonObject *c = json_array_get_object_element(
        json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "collectives"), 0);
    JsonObject *n = json_object_get_object_member(c, "nccl");
    ck_assert_str_eq(json_object_get_string_member(n, "algorithm"), "Ring");
    ck_assert_str_eq(json_object_get_string_member(n, "protocol"), "Simple");
    double t = json_object_get_double_member(c, "time_s");
    g_object_unref(p);
    strata_cli_result_clear(&r);
    g_unlink(json);
    g_unlink(trace);
    g_free(json);
    g_free(trace);
    g_free(hw);
    return t;
}

START_TEST(a_ring_pays_the_flush_on_its_four_crossings)
{
    double with = ring_time(NVL "nccl_gdr_flush=2us"), without = ring_time(NVL "nccl_gdr_flush=0");
    ck_assert_msg(fabs(with - without - 8e-6) < 1e-9, "with %.9g s, without %.9g s", with, without);
}
END_TEST

/* A time that is not one is refused, naming the key; so is a flush time
 * for GPUs that do not flush (Hopper, Blackwell). */
START_TEST(a_bad_flush_time_is_refused)
{
    const char *const bad[] = {NVL "nccl_gdr_flush=soon", NULL};
    strata_test_flush_refused(A100_HW, bad, "nccl_gdr_flush", NULL);
    const char *const neg[] = {NVL "nccl_gdr_flush=-1us", NULL};
    strata_test_flush_refused(A100_HW, neg, "nccl_gdr_flush", NULL);
    strata_test_hw_text_refused(STRATA_TEST_NCCL_HW_HEAD, "nccl_gdr_flush = 2us\n",
                                "t.ini:15: [interconnect x] nccl_gdr_flush: expected no flush time for nccl_arch "
                                "hopper or blackwell");
}
END_TEST

static Suite *nccl_flush_suite(void)
{
    Suite *s = suite_create("nccl_flush");
    TCase *tc = tcase_create("flush");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, the_flush_is_on_simple_across_nodes_below_hopper);
    tcase_add_test(tc, a_network_step_waits_for_the_flush);
    tcase_add_test(tc, a_ring_pays_the_flush_on_its_four_crossings);
    tcase_add_test(tc, a_bad_flush_time_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_flush_suite()); }
