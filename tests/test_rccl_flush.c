/*
 * test_rccl_flush.c: RCCL's GPUDirect flush on the rccl row
 * (hw/coll_impl_rccl.c rccl_gdr_flush; models/collective/algo_rccl.c):
 * the receive proxy of RCCL 2.21 on (ROCm/rccl @0cbce2a, 2.21.5) reads 1
 * byte of every Simple step it receives across nodes back through its NIC
 * (ncclTopoNeedFlush: *flush = 1 on HIP, src/graph/paths.cc l. 456-467;
 * recvProxyProgress, src/transport/net.cc l. 1534-1566, ncclIbIflush,
 * src/transport/net_ib.cc l. 1904-1939) and tells the GPU of the step only
 * once that read completes; RCCL 2.20.5 (the rocm-6.2.2 tag) does not
 * flush (its HIP branch of ncclTopoNeedFlush left *flush 0 until c8d3543d,
 * "Add back missing net flush"). Values worked by hand below, on
 * validation/held-out/hw/mi300x-roce.ini: 2 x 8 MI300X, a RoCE NIC a GPU
 * at 1 us and 50 GB/s, rccl_version 2.26 (the default), rccl_gdr_flush
 * unset (the row's ESTIMATE, 2 us).
 */
#include <check.h>
#include "testutil.h"
#include "collective/coll_algo.h"
#include "collective/coll_kit.h"
#include "collective/coll_sched.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"

static strata_hw *roce_hw(const char *const *overrides)
{
    return strata_test_load_hw_file("validation/held-out/hw/mi300x-roce.ini", overrides);
}

static strata_coll_tuning tune_all_reduce(strata_hw *hw, uint64_t bytes)
{
    strata_coll_tuning t;
    GError *err = NULL;
    ck_assert_msg(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, bytes, 0, &t, &err), "%s",
                  err ? err->message : "");
    return t;
}

/* RCCL's choice over 2 x 8 (docs/validation.md, "RCCL across nodes at
 * small and mid sizes"): 64 KiB Tree/LL (2.22's LL range, to 1 MiB), 256
 * MiB Tree/Simple. The tree's Simple network step is tuning_model_5's 25
 * us less the route's two NIC latencies, 23 us, and the receiver's flush
 * adds its 2 us on Simple only; 0 where a file says so, the file's value
 * where it sets one; RCCL 2.20 (1 GiB: Ring/Simple) none; one node none. */
START_TEST(the_flush_is_on_simple_across_nodes)
{
    strata_hw *hw = roce_hw(NULL);
    strata_coll_tuning t = tune_all_reduce(hw, 64u << 10);
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL);
    ck_assert(t.net_flush_s == 0);
    t = tune_all_reduce(hw, 256u << 20);
    ck_assert_int_eq(t.algo, STRATA_NCCL_TREE);
    ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(t.net_step_s, 23e-6, 1e-12);
    ck_assert_double_eq_tol(t.net_flush_s, 2e-6, 1e-12);
    strata_coll_tuning one;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 256u << 20, 0, &one, NULL));
    ck_assert(one.net_flush_s == 0);
    strata_hw_free(hw);

    const char *const off[] = {"interconnect.xgmi.rccl_gdr_flush=0", NULL};
    hw = roce_hw(off);
    ck_assert(tune_all_reduce(hw, 256u << 20).net_flush_s == 0);
    strata_hw_free(hw);
    const char *const slow[] = {"interconnect.xgmi.rccl_gdr_flush=3.5us", NULL};
    hw = roce_hw(slow);
    ck_assert_double_eq_tol(tune_all_reduce(hw, 256u << 20).net_flush_s, 3.5e-6, 1e-12);
    strata_hw_free(hw);
    const char *const v20[] = {"interconnect.xgmi.rccl_version=2.20", NULL};
    hw = roce_hw(v20);
    t = tune_all_reduce(hw, 1u << 30);
    ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
    ck_assert(t.net_flush_s == 0);
    strata_hw_free(hw);
}
END_TEST

/* The schedule: a step between the nodes waits for the tree's network
 * step and the flush (23 + 2 = 25 us) unless it is pipelined behind the
 * chunk before it on its connection; RCCL's rings (forced: rccl_algo=Ring,
 * rccl_proto=Simple) pay the route only, and now the flush (2 us, where
 * they paid 0); a step inside a node waits for neither. */
static void check_net_delays(strata_hw *hw, uint64_t bytes, double want_s)
{
    strata_coll_tuning t = tune_all_reduce(hw, bytes);
    ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
    strata_coll_shape sh = {.kind = STRATA_OP_ALL_REDUCE, .algo = strata_coll_algo_find("rccl"), .n_dims = 1,
                            .dims = {16}, .in_bytes = bytes, .domain_ranks = 8, .channels = t.channels,
                            .chunk_bytes = t.chunk_bytes, .tuned = true, .tune = t};
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    ck_assert_uint_gt(strata_coll_schedule(&sh, steps), 0);
    uint32_t paid = 0;
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        bool across = st->src / 8 != st->dst / 8;
        if (!across || st->pipelined) {
            ck_assert(st->delay_s == 0 || !across);
            continue;
        }
        ck_assert_double_eq_tol(st->delay_s, want_s, 1e-12);
        paid++;
    }
    ck_assert_uint_gt(paid, 0);
    g_array_free(steps, TRUE);
}

START_TEST(a_network_step_waits_for_the_flush)
{
    strata_hw *hw = roce_hw(NULL);
    check_net_delays(hw, 256u << 20, 25e-6); /* the tree */
    strata_hw_free(hw);
    const char *const ring[] = {"interconnect.xgmi.rccl_algo=Ring", "interconnect.xgmi.rccl_proto=Simple", NULL};
    hw = roce_hw(ring);
    check_net_delays(hw, 64u << 20, 2e-6);
    strata_hw_free(hw);
    const char *const ring_off[] = {"interconnect.xgmi.rccl_algo=Ring", "interconnect.xgmi.rccl_proto=Simple",
                                    "interconnect.xgmi.rccl_gdr_flush=0", NULL};
    hw = roce_hw(ring_off);
    check_net_delays(hw, 64u << 20, 0);
    strata_hw_free(hw);
}
END_TEST

/* A time that is not one is refused, naming the key; so is a flush time
 * for a release that does not flush. */
START_TEST(a_bad_flush_time_is_refused)
{
    char *path = strata_test_source_path("validation/held-out/hw/mi300x-roce.ini");
    const char *const bad[] = {"interconnect.xgmi.rccl_gdr_flush=soon", NULL};
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, bad, &err);
    ck_assert(hw == NULL);
    ck_assert_msg(err && strstr(err->message, "rccl_gdr_flush"), "%s", err ? err->message : "(no error)");
    g_clear_error(&err);
    const char *const neg[] = {"interconnect.xgmi.rccl_gdr_flush=-1us", NULL};
    ck_assert(strata_hw_load(path, neg, &err) == NULL);
    ck_assert_msg(err && strstr(err->message, "rccl_gdr_flush"), "%s", err ? err->message : "(no error)");
    g_clear_error(&err);
    /* RCCL 2.20 does not flush: a flush time set for it is refused, not
     * ignored. */
    const char *const v20[] = {"interconnect.xgmi.rccl_version=2.20", "interconnect.xgmi.rccl_gdr_flush=3.5us",
                               NULL};
    ck_assert(strata_hw_load(path, v20, &err) == NULL);
    ck_assert_msg(err && strstr(err->message, "rccl_gdr_flush") && strstr(err->message, "2.21"), "%s",
                  err ? err->message : "(no error)");
    g_clear_error(&err);
    g_free(path);
}
END_TEST

static Suite *rccl_flush_suite(void)
{
    Suite *s = suite_create("rccl_flush");
    TCase *tc = tcase_create("flush");
    tcase_add_test(tc, the_flush_is_on_simple_across_nodes);
    tcase_add_test(tc, a_network_step_waits_for_the_flush);
    tcase_add_test(tc, a_bad_flush_time_is_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(rccl_flush_suite()); }
