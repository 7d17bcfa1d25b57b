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

/* One event of the program as the ledger hears it: alloc or free of
 * buffer id (size: its size), or a compute that writes id (NONE: nothing). */
#define NONE UINT64_MAX
typedef struct event {
    char kind; /* 'a' alloc, 'f' free, 'c' compute */
    uint64_t id, size;
} event;

/* Feeds the events, with the stats of a bump allocator without rounding
 * after each. Every compute reads buffer 0 (named w) and, when `donate`,
 * donates it. */
static strata_memory_result feed(const event *e, size_t n, bool donate)
{
    strata_ledger *l = strata_ledger_new();
    const char *ins[] = {"w"}, *donates[] = {"w"};
    strata_op op = {.kind = STRATA_OP_COMPUTE, .ins = ins, .n_ins = 1, .donates = donates,
                    .n_donates = donate ? 1 : 0};
    uint64_t allocated = 0, in_id = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i].kind == 'a') {
            strata_ledger_alloc(l, e[i].id, e[i].size);
            allocated += e[i].size;
        } else if (e[i].kind == 'f') {
            ck_assert(strata_ledger_free_buffer(l, e[i].id));
            ck_assert(!strata_ledger_holds(l, e[i].id));
            allocated -= e[i].size;
        } else {
            op.n_outs = e[i].id == NONE ? 0 : 1;
            strata_ledger_work(l, &op, &in_id, &e[i].id, 0);
        }
        strata_alloc_stats s = {0};
        s.allocated = s.reserved = allocated;
        strata_ledger_observe(l, &s);
    }
    ck_assert(!strata_ledger_free_buffer(l, 99));
    strata_memory_result r;
    memset(&r, 0, sizeof r);
    strata_ledger_fill(l, &r);
    strata_ledger_free(l);
    return r;
}

/*
 * By hand: argument a 100 (freed after the work starts); then t1 50, o1 30
 * (never freed), t2 70; t1 freed, t2 freed, t3 40, t3 freed.
 *   live: 100 | 150, 180, 250, 200, 130, 170, 130, 30.
 *   temp (live - live arguments - live outputs):
 *     after t1: 150-100 = 50; after o1: 180-100-30 = 50; after t2: 120;
 *     after t1 freed: 70; t2 freed: 0; t3: 40.  Peak 120.
 * argument 100, output 30 (o1), alias 0, total 120 + 100 + 30 = 250.
 */
START_TEST(ledger_by_hand)
{
    const event e[] = {{'a', 0, 100}, {'c', NONE, 0}, {'a', 1, 50}, {'a', 2, 30}, {'a', 3, 70}, {'f', 1, 50},
                       {'f', 3, 70},  {'a', 4, 40},   {'f', 4, 40}, {'f', 0, 100}};
    strata_memory_result r = feed(e, G_N_ELEMENTS(e), false);
    ck_assert_uint_eq(r.peak_allocated_bytes, 250);
    ck_assert_uint_eq(r.argument_bytes, 100);
    ck_assert_uint_eq(r.output_bytes, 30);
    ck_assert_uint_eq(r.alias_bytes, 0);
    ck_assert_uint_eq(r.temp_peak_bytes, 120);
    ck_assert_uint_eq(r.jax_total_bytes, 250);
}
END_TEST

/* An argument freed before the work starts is no argument; one never
 * written stays the caller's: no output. */
START_TEST(ledger_arguments)
{
    const event e[] = {{'a', 0, 64}, {'a', 1, 32}, {'f', 0, 64}, {'c', NONE, 0}};
    strata_memory_result r = feed(e, G_N_ELEMENTS(e), false);
    ck_assert_uint_eq(r.argument_bytes, 32);
    ck_assert_uint_eq(r.output_bytes, 0);
    ck_assert_uint_eq(r.temp_peak_bytes, 0);
    ck_assert_uint_eq(r.jax_total_bytes, 32);
}
END_TEST

/*
 * Donation: arguments w 100 and x 10; a first compute ends them, the
 * second donates w. Either it
 * writes a fresh output n of 100 (the trace as generated), or w itself (as
 * `--policy donate` rewrites it): both give argument 110, output 100,
 * alias 100, temp 0, total 110. Without the donation, n is an output but no
 * alias: total 210.
 */
START_TEST(ledger_donation)
{
    const event fresh[] = {{'a', 0, 100}, {'a', 1, 10}, {'c', NONE, 0}, {'a', 2, 100}, {'c', 2, 0}};
    const event in_place[] = {{'a', 0, 100}, {'a', 1, 10}, {'c', 0, 0}};
    strata_memory_result a = feed(fresh, G_N_ELEMENTS(fresh), true);
    strata_memory_result b = feed(in_place, G_N_ELEMENTS(in_place), false);
    strata_memory_result c = feed(fresh, G_N_ELEMENTS(fresh), false);
    const strata_memory_result *both[] = {&a, &b};
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(both[i]->argument_bytes, 110);
        ck_assert_uint_eq(both[i]->output_bytes, 100);
        ck_assert_uint_eq(both[i]->alias_bytes, 100);
        ck_assert_uint_eq(both[i]->temp_peak_bytes, 0);
        ck_assert_uint_eq(both[i]->jax_total_bytes, 110);
    }
    ck_assert_uint_eq(c.alias_bytes, 0);
    ck_assert_uint_eq(c.jax_total_bytes, 210);
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
        ck_assert_uint_eq(a->alias_bytes, b->alias_bytes);
        ck_assert_uint_eq(a->temp_peak_bytes, b->temp_peak_bytes);
        ck_assert_uint_eq(a->jax_total_bytes, b->jax_total_bytes);
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
    /* _i: workload _i / 2, plain (even) or padded (odd); `collective` runs
     * only on a hardware model with devices (its mesh), not on tpu-v5e */
    const char *name = strata_workload_types()[_i / 2]->name;
    if (strcmp(name, "collective") != 0)
        same_accounting(name, _i % 2 ? "pad" : NULL);
}
END_TEST

/* The untimed replay of a generated program (best-fit, 64 GiB). */
static strata_memory_result replay_of(const char *workload, const char *const *args, const char *policy)
{
    GError *err = NULL;
    const char *specs[] = {policy, NULL};
    strata_source *src = strata_workload_generate(workload, args, &err);
    ck_assert_msg(src != NULL, "%s: %s", workload, err ? err->message : "?");
    src = strata_policies_apply(src, specs, NULL, &err);
    ck_assert_msg(src != NULL, "%s: %s", workload, err ? err->message : "?");
    strata_replay_options opt = {.allocator = "best-fit", .capacity = UINT64_C(64) << 30};
    strata_results *r = NULL;
    ck_assert_msg(strata_replay_run(src, &opt, &r, NULL, &err), "%s: %s", workload, err ? err->message : "?");
    strata_memory_result m = *memory_named(r, "hbm");
    strata_results_free(r);
    strata_source_free(src);
    return m;
}

/* What memory_analysis() reports for the tutorial's programs, derived by
 * hand in scan_mlp.c and adam_mlp.c from their shapes (f32: 4 bytes). */
START_TEST(tutorial_programs)
{
    const char *tutorial[] = {"preset=tutorial", NULL};
    /* scan-mlp: B = D = 256, H = 1024, L = 10 */
    const uint64_t B = 256, D = 256, H = 1024, L = 10;
    strata_memory_result s = replay_of("scan-mlp", tutorial, NULL);
    ck_assert_uint_eq(s.argument_bytes, (B * D + 2 * L * D * H) * 4);
    ck_assert_uint_eq(s.output_bytes, 2 * L * D * H * 4);
    ck_assert_uint_eq(s.alias_bytes, 0);
    ck_assert_uint_eq(s.temp_peak_bytes, (L + 1) * B * (D + H) * 4);
    ck_assert_uint_eq(s.jax_total_bytes, s.temp_peak_bytes + s.argument_bytes + s.output_bytes);
    ck_assert_uint_eq(s.jax_total_bytes, 56623104);
    /* adam-mlp: B = D = 7168, L = 4; the same figures with the donations made */
    const uint64_t N = 7168, M = 4;
    const char *policies[] = {NULL, "donate"};
    for (int i = 0; i < 2; i++) {
        strata_memory_result a = replay_of("adam-mlp", tutorial, policies[i]);
        ck_assert_uint_eq(a.argument_bytes, (N * N + 3 * M * N * N) * 4 + 4);
        ck_assert_uint_eq(a.output_bytes, 3 * M * N * N * 4 + 4);
        ck_assert_uint_eq(a.alias_bytes, 3 * M * N * N * 4 + 4);
        ck_assert_uint_eq(a.temp_peak_bytes, ((2 * M + 1) * N * N + M * N * N) * 4);
        ck_assert_uint_eq(a.jax_total_bytes, a.temp_peak_bytes + a.argument_bytes);
        ck_assert_uint_eq(a.jax_total_bytes, UINT64_C(5343543300));
    }
}
END_TEST

static Suite *ledger_suite(void)
{
    Suite *s = suite_create("ledger");
    TCase *tc = tcase_create("ledger");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, ledger_by_hand);
    tcase_add_test(tc, ledger_arguments);
    tcase_add_test(tc, ledger_donation);
    tcase_add_test(tc, tutorial_programs);
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
