/*
 * flush_steps.c: the GPUDirect flush suites' shared checks (flush_steps.h).
 */
#include "flush_steps.h"
#include <check.h>
#include <string.h>
#include "testutil.h"
#include "collective/coll_algo.h"
#include "collective/coll_kit.h"
#include "collective/coll_sched.h"

strata_coll_tuning strata_test_flush_tune(strata_hw *hw, strata_op_kind kind, uint32_t ranks, uint64_t bytes)
{
    strata_coll_tuning t;
    GError *err = NULL;
    ck_assert_msg(strata_hw_coll_impl(hw)->tune(hw, kind, ranks, 8, bytes, 0, &t, &err), "%s",
                  err ? err->message : "");
    return t;
}

void strata_test_flush_check_delays(strata_hw *hw, const char *algo_name, int algo, uint64_t bytes, double want_s)
{
    strata_coll_tuning t = strata_test_flush_tune(hw, STRATA_OP_ALL_REDUCE, 16, bytes);
    if (algo >= 0)
        ck_assert_int_eq(t.algo, algo);
    ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
    strata_coll_shape sh = {.kind = STRATA_OP_ALL_REDUCE, .algo = strata_coll_algo_find(algo_name), .n_dims = 1,
                            .dims = {16}, .in_bytes = bytes, .domain_ranks = 8, .channels = t.channels,
                            .chunk_bytes = t.chunk_bytes, .tuned = true, .tune = t};
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    ck_assert_uint_gt(strata_coll_schedule(&sh, steps), 0);
    uint32_t paid = 0;
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        bool across = st->src / 8 != st->dst / 8;
        if (!across || st->pipelined) {
            ck_assert(!across || st->delay_s == 0);
            continue;
        }
        ck_assert_double_eq_tol(st->delay_s, want_s, 1e-12);
        paid++;
    }
    ck_assert_uint_gt(paid, 0);
    g_array_free(steps, TRUE);
}

void strata_test_flush_refused(const char *relative, const char *const *overrides, const char *key,
                               const char *also)
{
    char *path = strata_test_source_path(relative);
    GError *err = NULL;
    ck_assert(strata_hw_load(path, overrides, &err) == NULL);
    ck_assert_msg(err && strstr(err->message, key) && (!also || strstr(err->message, also)), "%s",
                  err ? err->message : "(no error)");
    g_clear_error(&err);
    g_free(path);
}
