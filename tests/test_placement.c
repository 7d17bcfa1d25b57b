/*
 * test_placement.c: the placement component (placement/placement.h) and
 * the consumers that place through it.
 *
 * Asserted, with addresses derived by hand: a trace whose
 * `option allocator.min_block=1MiB` changes the buddy allocator's placement
 * places its buffers at the same addresses in `strata run` (the engine),
 * `strata alloc` (the untimed replay) and the host backend's plan (what
 * `strata replay` and `validate` execute); the spec's own values win over
 * the trace's; options the allocator does not declare, and device_limit
 * when the capacity is the caller's, are left out; lifetimes reach a
 * planning allocator; --check-allocators is accepted by replay and validate;
 * the stats a placement keeps from its latest call follow each call and are
 * taken again after an open that changed its allocator.
 *
 * The buddy allocator on a 64 MiB memory (one top block, order k holding
 * blocks of min_block << k, the lowest free block of the smallest order
 * that fits, split in halves):
 *
 *   op               min_block=1MiB (the option)     min_block=256 (default)
 *   alloc a 100KiB   1 MiB block at 0                128 KiB block at 0
 *   alloc b 100KiB   the 1 MiB half at 1 MiB         the 128 KiB half at 128 KiB
 *   alloc c 600KiB   the 2 MiB block at 2 MiB, split: 1 MiB block: the one at 1 MiB
 *                    c at 2 MiB, 3 MiB stays free
 *   free b           free 1 MiB blocks: 1 MiB, 3 MiB 128 KiB at 128 KiB free (a, its buddy, used)
 *   alloc d 300KiB   the lowest, 1 MiB               512 KiB: the free one at 512 KiB
 */
#include <string.h>
#include "backend/plan.h"
#include "core/error.h"
#include "engine/engine.h"
#include "placement/placement.h"
#include "replay/replay.h"
#include "testutil.h"
#include "trace/reader.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)

static const char *HW_TEXT =
    "[hardware]\nname = placebox\nsource = test\n\n"
    "[memory hbm]\nkind = device\ncapacity = 64MiB\nbandwidth = 10GB/s\nlatency = 100ns\nallocator = buddy\n\n"
    "[memory host]\nkind = host\ncapacity = 64MiB\nbandwidth = 10GB/s\nlatency = 100ns\n\n"
    "[link pcie]\nbetween = host hbm\nbandwidth = 5GB/s\nlatency = 1us\n\n"
    "[compute cpu]\nflops = 1GFLOP/s\noperands = hbm\n";

/* Buffers a, b, c, d get checker ids 0, 1, 2, 3. The other options are
 * for other allocators (bfc's) or for no allocator at all. */
static const char *TRACE_BODY =
    "alloc a 100KiB\n"
    "alloc b 100KiB\n"
    "alloc c 600KiB\n"
    "free b\n"
    "alloc d 300KiB\n"
    "compute k time=1us in=a,c out=d\n"
    "free a\n"
    "free c\n"
    "free d\n";

#define N_BUFS 4
static const uint64_t WITH_OPTION[N_BUFS] = {0, 1 * MiB, 2 * MiB, 1 * MiB};
static const uint64_t WITHOUT_OPTION[N_BUFS] = {0, 128 * KiB, 1 * MiB, 512 * KiB};

static char *trace_text(bool with_option)
{
    return g_strconcat("strata-trace 1\n",
                       with_option ? "option allocator.min_block=1MiB\n" : "",
                       "option allocator.memory_fraction=0.5\n", TRACE_BODY, NULL);
}

static strata_hw *load_hw(void)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load_data(HW_TEXT, "placebox.ini", NULL, &err);
    ck_assert_msg(hw != NULL, "%s", err ? err->message : "");
    return hw;
}

static strata_source *open_trace(bool with_option)
{
    char *text = trace_text(with_option);
    char *path = strata_test_write_temp("placement-XXXXXX.trace", text);
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    g_free(text);
    g_free(path);
    return src;
}

static void assert_offsets(const char *who, const uint64_t *got, const uint64_t *want)
{
    for (int i = 0; i < N_BUFS; i++)
        ck_assert_msg(got[i] == want[i], "%s: buffer %d at %" G_GUINT64_FORMAT ", expected %" G_GUINT64_FORMAT, who,
                      i, got[i], want[i]);
}

/* ---- the engine (`strata run`): one process per engine run ---- */

static void engine_offsets(bool with_option, uint64_t *out)
{
    strata_hw *hw = load_hw();
    strata_source *src = open_trace(with_option);
    strata_engine_options opt;
    strata_engine_options_init(&opt);
    opt.record_spans = true; /* the memory samples carry each buffer's offset */
    opt.check_allocators = true;
    strata_results *r = NULL;
    GError *err = NULL;
    ck_assert_msg(strata_engine_run(hw, src, &opt, &r, &err), "%s", err ? err->message : "");
    ck_assert_ptr_nonnull(r->mem_samples);
    int seen = 0;
    for (guint i = 0; i < r->mem_samples->len; i++) {
        const strata_mem_sample *s = &g_array_index(r->mem_samples, strata_mem_sample, i);
        if (s->memory == 0 && s->delta > 0 && s->buffer_id < N_BUFS) {
            out[s->buffer_id] = s->offset;
            seen++;
        }
    }
    ck_assert_int_eq(seen, N_BUFS);
    const strata_memory_result *hbm = &g_array_index(r->memories, strata_memory_result, 0);
    ck_assert_str_eq(hbm->name, "hbm");
    ck_assert_ptr_nonnull(strstr(hbm->allocator, "buddy"));
    strata_results_free(r);
    strata_source_free(src);
    strata_hw_free(hw);
}

START_TEST(engine_applies_options)
{
    uint64_t got[N_BUFS];
    engine_offsets(true, got);
    assert_offsets("run", got, WITH_OPTION);
}
END_TEST

START_TEST(engine_without_options)
{
    uint64_t got[N_BUFS];
    engine_offsets(false, got);
    assert_offsets("run (no option)", got, WITHOUT_OPTION);
}
END_TEST

/* ---- the untimed replay (`strata alloc`) ---- */

typedef struct seen_blocks {
    uint64_t offsets[N_BUFS];
    bool placed[N_BUFS];
    int opened;
} seen_blocks;

static void note_block(const strata_block *b, void *user)
{
    seen_blocks *s = user;
    if (b->state == STRATA_BLOCK_USED && b->id < N_BUFS && !s->placed[b->id]) {
        s->placed[b->id] = true;
        s->offsets[b->id] = b->offset;
    }
}

static void on_opened(void *user, const strata_allocator *a)
{
    (void)a;
    ((seen_blocks *)user)->opened++;
}

/* After every allocator call: each buffer's address when first seen. */
static void on_op(void *user, uint64_t index, const strata_allocator *a)
{
    (void)index;
    strata_allocator_walk(a, note_block, user);
}

static void replay_offsets(bool with_option, uint64_t *out)
{
    strata_source *src = open_trace(with_option);
    seen_blocks seen = {0};
    strata_replay_options opt = {.allocator = "buddy", .capacity = 64 * MiB, .check_each_op = true,
                                 .opened = on_opened, .after_op = on_op, .user = &seen};
    strata_results *r = NULL;
    strata_replay_summary sum;
    GError *err = NULL;
    ck_assert_msg(strata_replay_run(src, &opt, &r, &sum, &err), "%s", err ? err->message : "");
    ck_assert(!sum.oom);
    ck_assert_int_eq(seen.opened, 1);
    for (int i = 0; i < N_BUFS; i++) {
        ck_assert(seen.placed[i]);
        out[i] = seen.offsets[i];
    }
    strata_results_free(r);
    strata_source_free(src);
}

START_TEST(replay_applies_options)
{
    uint64_t got[N_BUFS];
    replay_offsets(true, got);
    assert_offsets("alloc", got, WITH_OPTION);
    replay_offsets(false, got);
    assert_offsets("alloc (no option)", got, WITHOUT_OPTION);
}
END_TEST

/* ---- the real backends' plan (`strata replay`, `strata validate`) ---- */

static void plan_offsets(bool with_option, uint64_t *out)
{
    strata_hw *hw = load_hw();
    strata_source *src = open_trace(with_option);
    strata_plan_options opt = {.check_allocators = true};
    GError *err = NULL;
    strata_plan *p = strata_plan_build(hw, src, &opt, &err);
    ck_assert_msg(p != NULL, "%s", err ? err->message : "");
    ck_assert_uint_eq(p->buffers->len, N_BUFS);
    for (int i = 0; i < N_BUFS; i++)
        out[i] = strata_plan_buffer_at(p, (uint64_t)i)->offset;
    /* The spec the plan reports is the one it placed with. */
    ck_assert_ptr_nonnull(strstr(strata_plan_memory_at(p, 0)->allocator, "min_block="));
    /* The extent is the end of the highest block's request: c. */
    ck_assert_uint_eq(strata_plan_memory_at(p, 0)->extent,
                      with_option ? 2 * MiB + 600 * KiB : 1 * MiB + 600 * KiB);
    strata_plan_free(p);
    strata_source_free(src);
    strata_hw_free(hw);
}

START_TEST(plan_applies_options)
{
    uint64_t got[N_BUFS];
    plan_offsets(true, got);
    assert_offsets("host plan", got, WITH_OPTION);
    plan_offsets(false, got);
    assert_offsets("host plan (no option)", got, WITHOUT_OPTION);
}
END_TEST

/* ---- the component itself ---- */

/* The checker of a trace made only of option lines (read to its end). */
static strata_checker *options_checker(const char *options)
{
    char *text = g_strconcat("strata-trace 1\n", options, "alloc z 1KiB\n", NULL);
    char *path = strata_test_write_temp("placement-XXXXXX.trace", text);
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    strata_checker *c = strata_checker_new(strata_source_origin(src));
    const strata_op *op;
    int got;
    while ((got = strata_source_next(src, &op, &err)) == 1)
        ck_assert_msg(strata_checker_feed(c, op, NULL, &err), "%s", err ? err->message : "");
    ck_assert_int_eq(got, 0);
    strata_source_free(src);
    g_free(text);
    g_free(path);
    return c;
}

START_TEST(option_kv_declared_only)
{
    strata_checker *c = options_checker("option allocator.max_split_size=64MiB\n"
                                        "option allocator.device_limit=1GiB\n"
                                        "option allocator.min_block=4096\n"
                                        "option padding_bytes=12\n");
    char *kv = strata_placement_option_kv(c, "caching", false);
    ck_assert_str_eq(kv, "max_split_size=64MiB,device_limit=1GiB"); /* in the trace's order */
    g_free(kv);
    kv = strata_placement_option_kv(c, "caching", true);
    ck_assert_str_eq(kv, "max_split_size=64MiB");
    g_free(kv);
    kv = strata_placement_option_kv(c, "buddy:min_block=512", false);
    ck_assert_str_eq(kv, "min_block=4096");
    g_free(kv);
    ck_assert_ptr_null(strata_placement_option_kv(c, "best-fit", false));
    ck_assert_ptr_null(strata_placement_option_kv(NULL, "buddy", false));
    strata_checker_free(c);
}
END_TEST

/* strata_placement_stats() answers from the stats the latest alloc, free or
 * release took, and asks the allocator again after an open that changed
 * it: buddy with 1 MiB blocks, allocated (the requested bytes of live
 * buffers) 100 KiB, then 300 KiB, then 200 KiB once a is freed; opened
 * again under a trace option (min_block=4096) the placement has a new,
 * empty allocator: 0. Each answer is also the allocator's own. */
static void assert_stats(const strata_placement *p, uint64_t allocated)
{
    strata_alloc_stats kept, own;
    strata_placement_stats(p, &kept);
    strata_allocator_stats(strata_placement_allocator(p), &own);
    ck_assert_uint_eq(kept.allocated, allocated);
    ck_assert_mem_eq(&kept, &own, sizeof kept);
}

START_TEST(stats_follow_each_call)
{
    strata_placement_config cfg = {.memory = "hbm", .spec = "buddy:min_block=1MiB", .capacity = 64 * MiB};
    strata_placement *p = strata_placement_new(&cfg);
    GError *err = NULL;
    ck_assert_msg(strata_placement_open(p, NULL, &err), "%s", err ? err->message : "");
    assert_stats(p, 0);
    uint64_t at;
    ck_assert_int_eq(strata_placement_alloc(p, 0, 100 * KiB, 0, &at, &err), STRATA_PLACED);
    assert_stats(p, 100 * KiB);
    ck_assert_int_eq(strata_placement_alloc(p, 1, 200 * KiB, 0, &at, &err), STRATA_PLACED);
    assert_stats(p, 300 * KiB);
    ck_assert(strata_placement_free_block(p, 0, &err));
    assert_stats(p, 200 * KiB);
    ck_assert(strata_placement_release(p, &err));
    assert_stats(p, 200 * KiB);
    strata_checker *c = options_checker("option allocator.min_block=4096\n");
    ck_assert_msg(strata_placement_open(p, c, &err), "%s", err ? err->message : "");
    assert_stats(p, 0);
    strata_checker_free(c);
    strata_placement_free(p);
}
END_TEST

START_TEST(spec_wins_over_trace)
{
    strata_checker *c = options_checker("option allocator.min_block=1MiB\n");
    strata_placement_config cfg = {.memory = "hbm", .spec = "buddy:min_block=2MiB", .capacity = 64 * MiB,
                                   .check = true};
    strata_placement *p = strata_placement_new(&cfg);
    GError *err = NULL;
    ck_assert(!strata_placement_is_open(p));
    ck_assert_msg(strata_placement_open(p, c, &err), "%s", err ? err->message : "");
    uint64_t a = 1, b = 1;
    ck_assert_int_eq(strata_placement_alloc(p, 0, 100 * KiB, 0, &a, &err), STRATA_PLACED);
    ck_assert_int_eq(strata_placement_alloc(p, 1, 100 * KiB, 0, &b, &err), STRATA_PLACED);
    ck_assert_uint_eq(a, 0);
    ck_assert_uint_eq(b, 2 * MiB); /* 2 MiB blocks: the spec's value */
    /* 62 MiB are left in 2 MiB blocks: a 64 MiB request does not fit. */
    ck_assert_int_eq(strata_placement_alloc(p, 2, 64 * MiB, 0, &a, &err), STRATA_PLACE_OOM);
    ck_assert(strata_placement_free_block(p, 1, &err));
    ck_assert(strata_placement_release(p, &err));
    strata_memory_result m = {0};
    strata_placement_fill(p, &m);
    ck_assert_uint_eq(m.capacity_bytes, 64 * MiB);
    ck_assert_uint_eq(m.peak_allocated_bytes, 200 * KiB);
    ck_assert_uint_eq(m.peak_reserved_bytes, 4 * MiB); /* the span to the end of b's block */
    g_free(m.allocator);
    strata_placement_free(p);
    strata_checker_free(c);
}
END_TEST

START_TEST(bad_option_names_memory)
{
    strata_checker *c = options_checker("option allocator.min_block=3000\n");
    strata_placement_config cfg = {.memory = "hbm", .spec = "buddy", .capacity = 64 * MiB};
    strata_placement *p = strata_placement_new(&cfg);
    GError *err = NULL;
    ck_assert(!strata_placement_open(p, c, &err));
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(g_str_has_prefix(err->message, "memory hbm (trace options min_block=3000): "), "%s", err->message);
    g_error_free(err);
    strata_placement_free(p);
    strata_checker_free(c);
}
END_TEST

/* Three buffers that never live together: the offline planner, given
 * their lifetimes, stacks none of them: each at 0. */
START_TEST(lifetimes_reach_the_planner)
{
    strata_placement_config cfg = {.memory = "hbm", .spec = "offline", .capacity = 64 * MiB, .alignment = 256,
                                   .check = true};
    strata_placement *p = strata_placement_new(&cfg);
    ck_assert(strata_placement_needs_plan(p));
    GError *err = NULL;
    ck_assert_msg(strata_placement_open(p, NULL, &err), "%s", err ? err->message : "");
    for (uint64_t id = 0; id < 3; id++) {
        strata_placement_note_alloc(p, id, MiB, 2 * id, false, 0);
        strata_placement_note_free(p, id, 2 * id + 1, false, 0);
    }
    strata_placement_note_free(p, 99, 7, false, 0); /* never noted: nothing */
    ck_assert_msg(strata_placement_plan(p, NULL, &err), "%s", err ? err->message : "");
    for (uint64_t id = 0; id < 3; id++) {
        uint64_t at = 1;
        ck_assert_int_eq(strata_placement_alloc(p, id, MiB, 0, &at, &err), STRATA_PLACED);
        ck_assert_uint_eq(at, 0);
        ck_assert(strata_placement_free_block(p, id, &err));
    }
    strata_alloc_stats st;
    strata_placement_stats(p, &st);
    ck_assert_uint_eq(st.planned_height, MiB);
    strata_placement_free(p);
}
END_TEST

/* ---- the switch on every consumer's command line ---- */

START_TEST(cli_check_allocators_everywhere)
{
    char *text = trace_text(true);
    char *trace = strata_test_write_temp("placement-XXXXXX.trace", text);
    char *hw = strata_test_write_temp("placement-XXXXXX.ini", HW_TEXT);
    strata_cli_result r = strata_test_cli("replay", "--backend", "host", "--hw", hw, "--trace", trace,
                                          "--repeats", "1", "--warmup", "0", "--check-allocators", "--json", "-",
                                          NULL);
    ck_assert_msg(r.status == 0, "replay: %s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "min_block=1MiB"));
    strata_cli_result_clear(&r);
    r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--check-allocators", "--json", "-", NULL);
    ck_assert_msg(r.status == 0, "run: %s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "min_block=1MiB"));
    strata_cli_result_clear(&r);
    r = strata_test_cli("alloc", "--trace", trace, "--allocator", "buddy", "--capacity", "64MiB",
                        "--check-allocators", "--json", "-", NULL);
    ck_assert_msg(r.status == 0, "alloc: %s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "min_block=1MiB"));
    strata_cli_result_clear(&r);
    r = strata_test_cli("validate", "--backend", "host", "--hw", hw, "--trace", trace, "--repeats", "1",
                        "--warmup", "0", "--check-allocators", "--quiet", NULL);
    ck_assert_msg(r.status == 0, "validate: %s", r.err);
    strata_cli_result_clear(&r);
    g_free(text);
    g_free(trace);
    g_free(hw);
}
END_TEST

static Suite *placement_suite(void)
{
    Suite *s = suite_create("placement");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, engine_applies_options);
    tcase_add_test(tc, engine_without_options);
    tcase_add_test(tc, replay_applies_options);
    tcase_add_test(tc, plan_applies_options);
    tcase_add_test(tc, option_kv_declared_only);
    tcase_add_test(tc, spec_wins_over_trace);
    tcase_add_test(tc, bad_option_names_memory);
    tcase_add_test(tc, lifetimes_reach_the_planner);
    tcase_add_test(tc, cli_check_allocators_everywhere);
    tcase_add_test(tc, stats_follow_each_call);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return strata_test_main(placement_suite());
}
