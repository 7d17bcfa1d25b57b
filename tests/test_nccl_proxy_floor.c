/*
 * test_nccl_proxy_floor.c: NCCL's proxy thread paces a network
 * connection's steps (sim/hw/nccl_proxy_floor.h): the floor by hand, the
 * tuning that carries it (NCCL's own transport only), and the forced
 * 2-node ring of validation/clusters.ini, whose LL128 steps it paces; the
 * 2-node all-gather and reduce-scatter rings, paced one post overhead a
 * connection (wave 49).
 */
#include <json-glib/json-glib.h>
#include <math.h>
#include <glib/gstdio.h>
#include "testutil.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"
#include "hw/nccl_proxy_floor.h"

#define NV "interconnect.nvlink."

/* By hand: the proxy's connections ceil(links x channels / ranks), links
 * 2 x nodes for a ring, 4 x (nodes - 1) for a tree
 * (strata_nccl_proxy_pass_ops), times NCCL's network post overhead (1 us
 * on Intel, 2 on AMD), x 3 on Simple:
 *   - 16 ranks on 2 nodes, ring, 24 channels: ceil(4 x 24 / 16) = 6
 *     connections, LL128 6 us, Simple 18 us, AMD LL128 12 us;
 *   - 22 channels: ceil(88 / 16) = 6, 6 us; 8 channels: 32 / 16 = 2, 2 us;
 *   - a tree over 4 nodes of 8, 16 channels: ceil(12 x 16 / 32) = 6, 6 us;
 *   - one node: 0. */
START_TEST(floor_by_hand)
{
    strata_nccl_comm c = {.ranks = 16, .nodes = 2, .cpu = STRATA_NCCL_INTEL};
    ck_assert_double_eq_tol(strata_nccl_proxy_floor_s(&c, STRATA_NCCL_LL128, STRATA_NCCL_RING, 24), 6e-6, 1e-15);
    ck_assert_double_eq_tol(strata_nccl_proxy_floor_s(&c, STRATA_NCCL_SIMPLE, STRATA_NCCL_RING, 24), 18e-6, 1e-15);
    ck_assert_double_eq_tol(strata_nccl_proxy_floor_s(&c, STRATA_NCCL_LL128, STRATA_NCCL_RING, 22), 6e-6, 1e-15);
    ck_assert_double_eq_tol(strata_nccl_proxy_floor_s(&c, STRATA_NCCL_LL, STRATA_NCCL_RING, 8), 2e-6, 1e-15);
    strata_nccl_comm amd = {.ranks = 16, .nodes = 2, .cpu = STRATA_NCCL_AMD};
    ck_assert_double_eq_tol(strata_nccl_proxy_floor_s(&amd, STRATA_NCCL_LL128, STRATA_NCCL_RING, 24), 12e-6,
                            1e-15);
    strata_nccl_comm four = {.ranks = 32, .nodes = 4, .cpu = STRATA_NCCL_INTEL};
    ck_assert_double_eq_tol(strata_nccl_proxy_floor_s(&four, STRATA_NCCL_LL128, STRATA_NCCL_TREE, 16), 6e-6,
                            1e-15);
    strata_nccl_comm one = {.ranks = 8, .nodes = 1, .cpu = STRATA_NCCL_INTEL};
    ck_assert_double_eq_tol(strata_nccl_proxy_floor_s(&one, STRATA_NCCL_LL128, STRATA_NCCL_RING, 24), 0, 1e-15);
    /* the all-gather's and reduce-scatter's pace: the post overhead alone
     * (getNetOverhead), x 3 on Simple, no channel term; 0 on one node */
    ck_assert_double_eq_tol(strata_nccl_post_pace_s(&c, STRATA_NCCL_LL), 1e-6, 1e-15);
    ck_assert_double_eq_tol(strata_nccl_post_pace_s(&c, STRATA_NCCL_SIMPLE), 3e-6, 1e-15);
    ck_assert_double_eq_tol(strata_nccl_post_pace_s(&amd, STRATA_NCCL_LL128), 2e-6, 1e-15);
    ck_assert_double_eq_tol(strata_nccl_post_pace_s(&amd, STRATA_NCCL_SIMPLE), 6e-6, 1e-15);
    ck_assert_double_eq_tol(strata_nccl_post_pace_s(&one, STRATA_NCCL_LL), 0, 1e-15);
}
END_TEST

static strata_coll_tuning tune_op(const char *file, const char *const *set, strata_op_kind kind, uint64_t bytes)
{
    strata_hw *hw = strata_test_load_hw_file(file, set);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, kind, 16, 8, bytes, 0, &t, NULL));
    strata_hw_free(hw);
    return t;
}

static strata_coll_tuning tune_file(const char *file, const char *const *set, uint64_t bytes)
{
    return tune_op(file, set, STRATA_OP_ALL_REDUCE, bytes);
}

/* The forced ring's settings (clusters.ini, h100-2node-ib ring): Ring/LL128
 * at 1 MiB on 22 channels (NCCL 2.27's cells), 6 connections a proxy on an
 * Intel host: 6 us. The same file over EFA's library row
 * (tests/data/hw/h100-2x8-efa.ini, nccl_net_protocol = efa-rdm-cuda): none,
 * its proxy is the row's passes (nccl_proxy_pass.h). */
START_TEST(tuning_carries_it_on_nccls_own_transport)
{
    const char *ring[] = {NV "nccl_algo=Ring", NV "nccl_version=2.27", NV "nccl_min_ctas=24", NULL};
    strata_coll_tuning t = tune_file("configs/hw/h100-2x8-ib.ini", ring, 1u << 20);
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL128);
    ck_assert_uint_eq(t.channels, 22);
    ck_assert_double_eq_tol(t.net_proxy_s, 6e-6, 1e-15);
    const char *efa[] = {NV "nccl_algo=Ring", NV "nccl_version=2.27", NV "nccl_min_ctas=24",
                         NV "nccl_net_protocol=efa-rdm-cuda", NULL};
    ck_assert_double_eq_tol(tune_file("tests/data/hw/h100-2x8-efa.ini", efa, 1u << 20).net_proxy_s, 0, 1e-15);
    /* an all-gather on the same 24 channels: one post overhead a
     * connection, not 6 (wave 49, strata_nccl_post_pace_s) */
    strata_coll_tuning ag = tune_op("configs/hw/h100-2x8-ib.ini", ring, STRATA_OP_ALL_GATHER, 1u << 20);
    ck_assert_uint_gt(ag.channels, 8);
    ck_assert_double_eq_tol(ag.net_proxy_s, 1e-6, 1e-15);
    /* and none over a network library's row: its proxy is the row's
     * passes, as the all-reduce's above (coll_impl_nccl.c nccl_tune) */
    strata_coll_tuning ag_efa = tune_op("tests/data/hw/h100-2x8-efa.ini", efa, STRATA_OP_ALL_GATHER, 1u << 20);
    ck_assert_uint_gt(ag_efa.channels, 8);
    ck_assert_double_eq_tol(ag_efa.net_proxy_s, 0, 1e-15);
}
END_TEST

/* The time (s) of one `op` of `bytes` over 16 ranks of
 * configs/hw/h100-2x8-ib.ini under the settings `set` (NULL-ended), from
 * `strata run --json`; with `temp`, device 0's temp_peak_bytes there. */
static double ring_run(const char *op, const char *bytes, const char *const *set, uint64_t *temp)
{
    char *dir = strata_test_temp_dir();
    char *trace = g_build_filename(dir, "coll.trace", NULL), *json = g_build_filename(dir, "run.json", NULL);
    char *arg = g_strdup_printf("bytes=%s", bytes), *op_arg = g_strdup_printf("op=%s", op);
    strata_cli_result r = strata_test_cli("gen", "collective", op_arg, "devices=16", arg, "-o", trace, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    char *hw = g_build_filename(STRATA_SOURCE_DIR, "configs/hw/h100-2x8-ib.ini", NULL);
    const char *argv[] = {"run", "--hw", hw, "--trace", trace, "--json", json, "--quiet", NULL};
    r = strata_test_run_cli_sets(argv, set);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_file(p, json, NULL));
    JsonArray *colls = json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "collectives");
    double s = json_object_get_double_member(json_array_get_object_element(colls, 0), "time_s");
    if (temp) {
        JsonObject *mems = json_object_get_object_member(json_node_get_object(json_parser_get_root(p)), "memories");
        *temp = (uint64_t)json_object_get_int_member(json_object_get_object_member(mems, "hbm@0"), "temp_peak_bytes");
    }
    g_object_unref(p);
    g_unlink(trace);
    g_unlink(json);
    g_rmdir(dir);
    g_free(hw);
    g_free(op_arg);
    g_free(arg);
    g_free(json);
    g_free(trace);
    g_free(dir);
    return s;
}

static double ring_s(const char *op, const char *bytes, const char *const *set)
{
    return ring_run(op, bytes, set, NULL);
}

/* The forced ring's time (s) at `bytes`. */
static double forced_ring_s(const char *bytes)
{
    const char *ring[] = {NV "nccl_algo=Ring", NV "nccl_version=2.27", NV "nccl_min_ctas=24", NULL};
    return ring_s("all-reduce", bytes, ring);
}

/* By hand, 1 MiB: one LL128 loop (24 x 16 x 576,000 B holds it), 30 steps
 * on every network connection, each started at least 6 us after the one
 * before and the first 6 us after the start, which follows NCCL's 14 us
 * base latency: the last step's copy starts at 14 + 30 x 6 = 194 us at the
 * earliest and crosses the 2 us route (2 links of 1 us): >= 196 us. Its
 * 2.9 KB at 50 GB/s and the last hops' waits add a few us, not 10 (the
 * run without the floor took 84.3 us). Since wave 47 the pace spaces a
 * connection's posts, not its deliveries (net.cc v2.27.7-1 l. 1210-1214:
 * isend, then `transmitted` advances and the thread moves on; the test of
 * its completion, l. 1222-1233, comes on a later pass), and a step's fixed
 * cost D (NCCL's 4 us hwLat[NET] LL128 less the 2 us route: 2 us) follows
 * its copy on the step's lane (spmd.c flight_after_copy: the QP sends a
 * connection's steps in post order). Upper bound by hand: the last post at
 * 194 us (the data is there long before: 84.3 us without the floor), its
 * copy 2.9 KB / 50 GB/s = 0.06 us plus the 2 us route, then D = 2 us:
 * 198.06 us; what follows (the last reduction of 2.9 KB and the node's
 * NVLink hops, at hundreds of GB/s) is well under 1 us, so < 200 us.
 * Wave 46's order (D on the connection's lane between two posts) gave
 * 200.2 us, which this bound rejects. 8 MiB: a step's 23.3 KB (8 MiB /
 * 384 x 128 / 120) three times on a NIC takes 1.4 us, below 6: the floor
 * still sets the pace, and the last copy's 23.3 KB at 50 GB/s (0.47 us
 * against 0.06) adds well under 3 us (the run: 198.2 and 199.4 us). */
START_TEST(forced_ring_is_paced_by_the_proxy)
{
    double one = forced_ring_s("1MiB"), eight = forced_ring_s("8MiB");
    ck_assert_msg(one >= 196e-6 && one < 200e-6, "1 MiB: %g s", one);
    ck_assert_msg(eight >= one && eight - one <= 3e-6, "8 MiB: %g s, 1 MiB %g s", eight, one);
}
END_TEST

/* The 2-node all-gather and reduce-scatter rings (waves 48, 49): 16
 * ranks on 2 nodes (ring 0 -> ... -> 7 -> 8 -> ... -> 15 -> 0), 1 KiB a
 * rank, Ring/LL on one channel (NCCL's choice there; LL forced). Their
 * kernels wait alike (NVIDIA/nccl v2.30.4-1 src/device/all_gather.h and
 * reduce_scatter.h runRing: a step waits for its predecessor's and a
 * credit, NCCL_STEPS in flight a connection) and NCCL's model gives them
 * one formula (src/graph/tuning.cc l. 379-387). By hand, Intel host, as
 * the schedule charges it: NCCL's Ring/LL base latency B = 6.6 us, then
 * the critical chunk's 15 hops: 13 inside a node at 1 us (the route GPU ->
 * NVSwitch -> GPU, 2 links of 0.5 us) and the ring's 2 hops between the
 * nodes at LL's whole crossing, hwLatencies[NET][RING] F = 2.7 us each
 * (the 2 us route and the step's fixed cost); 6.6 + 13 + 5.4 = 25.0 us,
 * the 64 B a step and their reductions under 0.1 us. The proxy's posts
 * (wave 49, nccl_proxy_floor.h strata_nccl_post_pace_s: getNetOverhead,
 * tuning.cc l. 222-227, 1 us on Intel) do not bind there: the connection
 * 15 -> 0 posts step s at B + s x 1 us, its last (s = 14, the critical
 * chunk's second crossing) at B + 14, where the chunk reaches rank 15 at
 * B + 6 + 2.7 + 7 = B + 15.7. AMD host, 2 us a post: the last post at
 * B + 28 = 34.6 us binds, then the crossing: 34.6 + 2.7 = 37.3 us (NCCL's
 * own model: 6.6 + 14 x 2 + 2.7 = 37.3); the first post (s = 0) waits for
 * its data alone. Wave 48's pace (branch agpace-pace: the first post
 * paced too) gave 39.3. The reduce-scatter the same (its critical chunk
 * crosses at steps 6 and 14 too). */
START_TEST(gather_and_scatter_rings_alike)
{
    const char *intel[] = {NV "nccl_cpu=intel", NV "nccl_proto=LL", NULL};
    const char *amd[] = {NV "nccl_cpu=amd", NV "nccl_proto=LL", NULL};
    const char *ops[] = {"all-gather", "reduce-scatter"};
    for (size_t i = 0; i < G_N_ELEMENTS(ops); i++) {
        double t = ring_s(ops[i], "1KiB", intel), t_amd = ring_s(ops[i], "1KiB", amd);
        ck_assert_msg(t >= 25.0e-6 && t < 25.1e-6, "%s: %g s", ops[i], t);
        ck_assert_msg(t_amd >= 37.3e-6 && t_amd < 37.4e-6, "%s on AMD: %g s", ops[i], t_amd);
    }
}
END_TEST

/* The same reduce-scatter's temporary memory: its steps run on the ring's
 * 8 slot lanes (NCCL_STEPS) but receive into one buffer a ring, as NCCL's
 * connection holds one fixed buffer whatever its steps in flight
 * (NVIDIA/nccl v2.30.4-1 src/init.cc computeBuffSizes). By hand: one ring,
 * its largest receipt a network step's, 1 KiB / 16 = 64 B of data, on LL
 * 128 B (a 16 B line carries 8 B of data and 8 of flags, prims_ll.h
 * ncclLLFifoLine), as one InfiniBand message of one packet under the 4096 B
 * MTU: + 26 B of packet headers (LRH 8, BTH 12, ICRC 4, VCRC 2) + 20 B of
 * the message's (RETH 16, immediate 4), hw/ib_frame.c: 174 B, as before
 * wave 48 (a buffer a slot lane would hold 8 x 174 = 1392 B). */
START_TEST(scatter_ring_holds_one_buffer_a_ring)
{
    const char *ll[] = {NV "nccl_proto=LL", NULL};
    uint64_t temp = 0;
    ring_run("reduce-scatter", "1KiB", ll, &temp);
    ck_assert_uint_eq(temp, 174);
}
END_TEST

static Suite *proxy_floor_suite(void)
{
    Suite *s = suite_create("nccl_proxy_floor");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, floor_by_hand);
    tcase_add_test(tc, tuning_carries_it_on_nccls_own_transport);
    tcase_add_test(tc, forced_ring_is_paced_by_the_proxy);
    tcase_add_test(tc, gather_and_scatter_rings_alike);
    tcase_add_test(tc, scatter_ring_holds_one_buffer_a_ring);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(proxy_floor_suite()); }
