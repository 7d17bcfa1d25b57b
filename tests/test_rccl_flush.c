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
#include "flush_steps.h"
#include "collective/coll_algo.h"
#include "collective/coll_kit.h"
#include "collective/coll_sched.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"

#define ROCE_HW "validation/held-out/hw/mi300x-roce.ini"

static strata_hw *roce_hw(const char *const *overrides)
{
    return strata_test_load_hw_file(ROCE_HW, overrides);
}

/* RCCL's choice over 2 x 8 (docs/validation.md, "RCCL across nodes at
 * small and mid sizes"): 64 KiB Tree/LL (2.22's LL range, to 1 MiB), 64
 * MiB Tree/Simple (99.2 + 67108864 / 18480 = 3,730.6 us against the ring's
 * 1453 + 67108864 / 17920 = 5,198.0; from 128 MiB 2.26's tuning_model_5
 * row takes the ring: rccl_tuning.c). The tree's Simple network step is tuning_model_5's 25
 * us less the route's two NIC latencies, 23 us, and the receiver's flush
 * adds its 2 us on Simple only; 0 where a file says so, the file's value
 * where it sets one; RCCL 2.20 (1 GiB: Ring/Simple) none; one node none. */
START_TEST(the_flush_is_on_simple_across_nodes)
{
    strata_hw *hw = roce_hw(NULL);
    strata_coll_tuning t = strata_test_flush_tune(hw, STRATA_OP_ALL_REDUCE, 16, 64u << 10);
    ck_assert_int_eq(t.proto, STRATA_NCCL_LL);
    ck_assert(t.net_flush_s == 0);
    t = strata_test_flush_tune(hw, STRATA_OP_ALL_REDUCE, 16, 64u << 20);
    ck_assert_int_eq(t.algo, STRATA_NCCL_TREE);
    ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
    ck_assert_double_eq_tol(t.net_step_s, 23e-6, 1e-12);
    ck_assert_double_eq_tol(t.net_flush_s, 2e-6, 1e-12);
    strata_coll_tuning one;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 64u << 20, 0, &one, NULL));
    ck_assert(one.net_flush_s == 0);
    strata_hw_free(hw);

    const char *const off[] = {"interconnect.xgmi.rccl_gdr_flush=0", NULL};
    hw = roce_hw(off);
    ck_assert(strata_test_flush_tune(hw, STRATA_OP_ALL_REDUCE, 16, 64u << 20).net_flush_s == 0);
    strata_hw_free(hw);
    const char *const slow[] = {"interconnect.xgmi.rccl_gdr_flush=3.5us", NULL};
    hw = roce_hw(slow);
    ck_assert_double_eq_tol(strata_test_flush_tune(hw, STRATA_OP_ALL_REDUCE, 16, 64u << 20).net_flush_s, 3.5e-6, 1e-12);
    strata_hw_free(hw);
    const char *const v20[] = {"interconnect.xgmi.rccl_version=2.20", NULL};
    hw = roce_hw(v20);
    t = strata_test_flush_tune(hw, STRATA_OP_ALL_REDUCE, 16, 1u << 30);
    ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
    ck_assert(t.net_flush_s == 0);
    strata_hw_free(hw);
}
END_TEST

/* The schedule: a step between the nodes waits for the tree's network
 * step and the flush (23 + 2 = 25 us) unless it is pipelined behind the
 * chunk before it on its connection; RCCL's rings (forced: rccl_algo=Ring,
 * rccl_proto=Simple) pay the route only, and now the flush (2 us, where
 * they paid 0); a step inside a node waits for neither (flush_steps.h). */
START_TEST(a_network_step_waits_for_the_flush)
{
    strata_hw *hw = roce_hw(NULL);
    strata_test_flush_check_delays(hw, "rccl", -1, 64u << 20, 25e-6); /* the tree */
    strata_hw_free(hw);
    const char *const ring[] = {"interconnect.xgmi.rccl_algo=Ring", "interconnect.xgmi.rccl_proto=Simple", NULL};
    hw = roce_hw(ring);
    strata_test_flush_check_delays(hw, "rccl", -1, 64u << 20, 2e-6);
    strata_hw_free(hw);
    const char *const ring_off[] = {"interconnect.xgmi.rccl_algo=Ring", "interconnect.xgmi.rccl_proto=Simple",
                                    "interconnect.xgmi.rccl_gdr_flush=0", NULL};
    hw = roce_hw(ring_off);
    strata_test_flush_check_delays(hw, "rccl", -1, 64u << 20, 0);
    strata_hw_free(hw);
}
END_TEST

/* A time that is not one is refused, naming the key; so is a flush time
 * for a release that does not flush. */
START_TEST(a_bad_flush_time_is_refused)
{
    const char *const bad[] = {"interconnect.xgmi.rccl_gdr_flush=soon", NULL};
    strata_test_flush_refused(ROCE_HW, bad, "rccl_gdr_flush", NULL);
    const char *const neg[] = {"interconnect.xgmi.rccl_gdr_flush=-1us", NULL};
    strata_test_flush_refused(ROCE_HW, neg, "rccl_gdr_flush", NULL);
    /* RCCL 2.20 does not flush: a flush time set for it is refused, not
     * ignored. */
    const char *const v20[] = {"interconnect.xgmi.rccl_version=2.20", "interconnect.xgmi.rccl_gdr_flush=3.5us",
                               NULL};
    strata_test_flush_refused(ROCE_HW, v20, "rccl_gdr_flush", "2.21");
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
