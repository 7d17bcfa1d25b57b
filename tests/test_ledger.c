/*
 * test_ledger.c: the memory ledger (sim/ledger), by hand and through its
 * consumers: the engine (timed) and the untimed replay must report the same
 * accounting for the same single-stream trace, on every generated workload.
 */
#include <string.h>
#include "engine/engine.h"
#include "ledger/ledger.h"
#include "policy/policy.h"
#include "replay/replay.h"
#include "testutil.h"
#include "workload/workload.h"

/* One allocator event as the ledger hears it: alloc (size > 0) or free
 * (size 0) of buffer id, and the allocator's allocated bytes after it
 * (a bump allocator without rounding: reserved = allocated). */
typedef struct event {
    uint64_t id, size;
    bool flag;          /* alloc: an argument; free: before the first work */
    uint64_t allocated;
} event;

static strata_memory_result replay_events(const event *e, size_t n)
{
    strata_ledger *l = strata_ledger_new();
    for (size_t i = 0; i < n; i++) {
        strata_alloc_stats s = {0};
        s.allocated = s.reserved = e[i].allocated;
        if (e[i].size)
            strata_ledger_alloc(l, e[i].id, e[i].size, e[i].flag, &s);
        else
            ck_assert(strata_ledger_free_buffer(l, e[i].id, e[i].flag, &s));
        ck_assert(strata_ledger_holds(l, e[i].id) == (e[i].size > 0));
    }
    strata_alloc_stats s = {0};
    ck_assert(!strata_ledger_free_buffer(l, 99, false, &s));
    strata_memory_result r;
    memset(&r, 0, sizeof r);
    strata_ledger_fill(l, &r);
    strata_ledger_free(l);
    return r;
}

/*
 * By hand: argument a 100 (freed after the work starts); then t1 50, o1 30
 * (never freed), t2 70; t1 freed, t2 freed, t3 40, t3 freed.
 *   allocated: 100, 150, 180, 250 | 200, 130 | 170 | 130; a freed: 30.
 *   temp (allocated - live arguments - live outputs):
 *     after t1: 150-100 = 50; after o1: 180-100-30 = 50; after t2: 120;
 *     after t1 freed: 70; t2 freed: 0; t3: 40.  Peak 120.
 * argument_bytes 100, output_bytes 30 (o1).
 */
START_TEST(ledger_by_hand)
{
    const event e[] = {{0, 100, true, 100}, {1, 50, false, 150}, {2, 30, false, 180}, {3, 70, false, 250},
                       {1, 0, false, 200},  {3, 0, false, 130},  {4, 40, false, 170}, {4, 0, false, 130},
                       {0, 0, false, 30}};
    strata_memory_result r = replay_events(e, G_N_ELEMENTS(e));
    ck_assert_uint_eq(r.peak_allocated_bytes, 250);
    ck_assert_uint_eq(r.argument_bytes, 100);
    ck_assert_uint_eq(r.output_bytes, 30);
    ck_assert_uint_eq(r.temp_peak_bytes, 120);
}
END_TEST

/* An argument freed before the work starts is no argument. */
START_TEST(ledger_argument_freed_before_work)
{
    const event e[] = {{0, 64, true, 64}, {1, 32, true, 96}, {0, 0, true, 32}};
    strata_memory_result r = replay_events(e, G_N_ELEMENTS(e));
    ck_assert_uint_eq(r.argument_bytes, 32);
    ck_assert_uint_eq(r.temp_peak_bytes, 0);
}
END_TEST

static const strata_memory_result *memory_named(const strata_results *r, const char *name)
{
    const strata_memory_result *m = strata_results_memory(r, name);
    ck_assert_msg(m != NULL, "no memory %s", name);
    return m;
}

/* Engine (on the TPU v5e model) and replay of one generated workload with
 * default parameters: every figure of every memory the engine used agrees
 * with a replay of that memory with its allocator, capacity and alignment. */
static void same_accounting(const char *workload, const char *policy)
{
    GError *err = NULL;
    char *path = strata_test_source_path("configs/hw/tpu-v5e.ini");
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw != NULL, "hw: %s", err ? err->message : "?");
    g_free(path);
    const char *specs[] = {policy, NULL};
    strata_source *src = strata_workload_generate(workload, NULL, &err);
    ck_assert_msg(src != NULL, "%s: %s", workload, err ? err->message : "?");
    src = strata_policies_apply(src, specs, hw, &err);
    ck_assert_msg(src != NULL, "%s: %s", workload, err ? err->message : "?");
    strata_results *timed = NULL;
    ck_assert_msg(strata_engine_run(hw, src, NULL, &timed, &err), "%s: %s", workload, err ? err->message : "?");
    ck_assert_msg(!timed->oom, "%s: out of memory", workload);
    int compared = 0;
    for (uint32_t i = 0; i < strata_hw_memory_count(hw); i++) {
        const strata_memory_spec *spec = strata_hw_memory(hw, i);
        const strata_memory_result *a = memory_named(timed, spec->name);
        if (a->peak_allocated_bytes == 0)
            continue;
        strata_replay_options opt = {.allocator = spec->allocator ? spec->allocator : "best-fit",
                                     .capacity = spec->capacity,
                                     .alignment = spec->alignment,
                                     .memory = spec->name};
        strata_results *untimed = NULL;
        ck_assert_msg(strata_replay_run(src, &opt, &untimed, NULL, &err), "%s: %s", workload,
                      err ? err->message : "?");
        const strata_memory_result *b = memory_named(untimed, spec->name);
        ck_assert_uint_eq(a->peak_allocated_bytes, b->peak_allocated_bytes);
        ck_assert_uint_eq(a->peak_reserved_bytes, b->peak_reserved_bytes);
        ck_assert(a->fragmentation_peak == b->fragmentation_peak);
        ck_assert_uint_eq(a->internal_waste_bytes, b->internal_waste_bytes);
        ck_assert_uint_eq(a->argument_bytes, b->argument_bytes);
        ck_assert_uint_eq(a->output_bytes, b->output_bytes);
        ck_assert_uint_eq(a->temp_peak_bytes, b->temp_peak_bytes);
        ck_assert_uint_eq(a->padding_bytes, b->padding_bytes);
        strata_results_free(untimed);
        compared++;
    }
    ck_assert_msg(compared > 0, "%s: no memory used", workload);
    strata_results_free(timed);
    strata_source_free(src);
    strata_hw_free(hw);
}

START_TEST(engine_and_replay_agree)
{
    /* _i: workload _i / 2, plain (even) or padded (odd) */
    same_accounting(strata_workload_types()[_i / 2]->name, _i % 2 ? "pad" : NULL);
}
END_TEST

static Suite *ledger_suite(void)
{
    Suite *s = suite_create("ledger");
    TCase *tc = tcase_create("ledger");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, ledger_by_hand);
    tcase_add_test(tc, ledger_argument_freed_before_work);
    int n = 0;
    while (strata_workload_types()[n])
        n++;
    /* one process per workload and policy pass: SimGrid runs one engine per process */
    tcase_add_loop_test(tc, engine_and_replay_agree, 0, 2 * n);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return strata_test_main(ledger_suite());
}
