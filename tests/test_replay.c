/*
 * test_replay.c: the untimed replay of `strata alloc` (sim/replay), values
 * derived by hand:
 *  - JAX-style accounting (argument, output, temp peak bytes) on a trace
 *    worked out line by line, another memory's buffers ignored;
 *  - padding_bytes after --policy pad (3x100 f32 -> 4096 bytes);
 *  - out of memory: the failing op, its line, free bytes; the rest of the
 *    trace is still checked (bad input after an OOM is still an error);
 *  - the minimum capacity by bisection, for best-fit and for offline;
 *  - trace `option allocator.K=V` lines: applied when the allocator
 *    declares K, the spec's own values win;
 *  - every allocator through the replay, invariants checked after every
 *    op, on a random trace with two streams and releases: the same peak of
 *    allocated bytes (the trace's peak of live bytes) for all, and bump's
 *    reserved peak = the sum of every size rounded to 256 bytes.
 */
#include <check.h>
#include <glib/gstdio.h>
#include <string.h>
#include "alloc/alloc.h"
#include "core/error.h"
#include "policy/policy.h"
#include "replay/replay.h"
#include "trace/reader.h"
#include "testutil.h"

/* Replays text through allocator at capacity; asserts success. */
static strata_replay_summary replay_text(const char *text, const char *allocator, uint64_t capacity,
                                         const char *const *policies, strata_results **out)
{
    char *path = strata_test_write_temp("replay-XXXXXX.trace", text);
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    if (policies) {
        src = strata_policies_apply(src, policies, NULL, &err);
        ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    }
    strata_replay_options opt = {.allocator = allocator, .capacity = capacity, .check_each_op = true};
    strata_results *r = NULL;
    strata_replay_summary s;
    ck_assert_msg(strata_replay_run(src, &opt, &r, &s, &err), "%s", err ? err->message : "");
    strata_source_free(src);
    g_unlink(path);
    g_free(path);
    if (out)
        *out = r;
    else
        strata_results_free(r);
    return s;
}

/*
 * Arguments: w (1000) stays; x (500) is freed before the first work, so it
 * is not one; h lives in another memory. Then (allocated, live arguments,
 * outputs live) after each op:
 *   a 300  -> 1300, 1000, 0     temp 300
 *   o 200  -> 1500, 1000, 200   temp 300 (o is never freed: an output)
 *   free a -> 1200                    0
 *   b 700  -> 1900, 1000, 200   temp 700  <- the temp peak, also the allocated peak
 *   free b, free w -> 200, 0, 200     0
 *   c 100  -> 300,  0,   200   temp 100
 * argument_bytes 1000, output_bytes 200, temp_peak_bytes 700, peak 1900.
 */
START_TEST(test_accounting_by_hand)
{
    strata_results *r = NULL;
    strata_replay_summary s = replay_text("strata-trace 1\n"
                                          "alloc w 1000\n"
                                          "alloc x 500\n"
                                          "alloc h 5000 host\n"
                                          "free x\n"
                                          "compute start time=0\n"
                                          "alloc a 300\n"
                                          "alloc o 200\n"
                                          "free a\n"
                                          "alloc b 700\n"
                                          "free b\n"
                                          "free w\n"
                                          "alloc c 100\n"
                                          "free c\n",
                                          "best-fit", 1 << 20, NULL, &r);
    ck_assert(!s.oom);
    ck_assert_uint_eq(s.ops, 13);
    ck_assert_uint_eq(s.argument_bytes, 1000);
    ck_assert_uint_eq(s.output_bytes, 200);
    ck_assert_uint_eq(s.temp_peak_bytes, 700);
    ck_assert_uint_eq(s.peak_allocated, 1900);
    ck_assert_uint_eq(s.padding_bytes, 0);
    /* the same figures in the results (memories.hbm) */
    ck_assert_uint_eq(r->memories->len, 1);
    const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, 0);
    ck_assert_str_eq(m->name, "hbm");
    ck_assert_uint_eq(m->argument_bytes, 1000);
    ck_assert_uint_eq(m->output_bytes, 200);
    ck_assert_uint_eq(m->temp_peak_bytes, 700);
    ck_assert_uint_eq(m->peak_allocated_bytes, 1900);
    /* best-fit rounds to 256 and reserves up to its highest live block: w [0, 1024),
     * a [1024, 1536), o [1536, 1792); a's 512-byte hole cannot hold b (768), so
     * b is at [1792, 2560) */
    ck_assert_uint_eq(m->peak_reserved_bytes, 2560);
    strata_results_free(r);
}
END_TEST

/* No copy or compute at all: everything is an argument (as in `strata run`),
 * and an argument never written stays the caller's: no output. */
START_TEST(test_accounting_without_work)
{
    strata_replay_summary s = replay_text("strata-trace 1\nalloc a 100\nalloc b 200\nfree a\n", "best-fit",
                                          1 << 20, NULL, NULL);
    ck_assert_uint_eq(s.argument_bytes, 200);
    ck_assert_uint_eq(s.output_bytes, 0);
    ck_assert_uint_eq(s.jax_total_bytes, 200);
    ck_assert_uint_eq(s.temp_peak_bytes, 0);
    ck_assert_uint_eq(s.peak_allocated, 300);
}
END_TEST

/* pad: 3x100 f32 becomes 8x128 f32 = 4096 bytes, 2896 added; 3x100 bf16
 * becomes 16x128 bf16 = 4096 bytes, 3496 added. */
START_TEST(test_padding_bytes)
{
    const char *text = "strata-trace 1\n"
                       "alloc p 1200 dtype=f32 shape=3x100\n"
                       "alloc q 600 dtype=bf16 shape=3x100\n";
    strata_replay_summary plain = replay_text(text, "best-fit", 1 << 20, NULL, NULL);
    ck_assert_uint_eq(plain.peak_allocated, 1800);
    ck_assert_uint_eq(plain.padding_bytes, 0);
    const char *const pad[] = {"pad", NULL};
    strata_replay_summary padded = replay_text(text, "best-fit", 1 << 20, pad, NULL);
    ck_assert_uint_eq(padded.peak_allocated, 8192);
    ck_assert_uint_eq(padded.padding_bytes, 2896 + 3496);
}
END_TEST

START_TEST(test_oom_then_still_checked)
{
    /* best-fit, 1 KiB: a and b fill it, c (line 4, op 2) does not fit */
    strata_results *r = NULL;
    strata_replay_summary s = replay_text("strata-trace 1\nalloc a 512\nalloc b 512\nalloc c 256\nfree a\n",
                                          "best-fit", 1024, NULL, &r);
    ck_assert(s.oom);
    ck_assert(r->oom);
    ck_assert_uint_eq(s.ops, 2);
    ck_assert_uint_eq(r->oom_info.op_index, 2);
    ck_assert_uint_eq(r->oom_info.line, 4);
    ck_assert_str_eq(r->oom_info.buffer, "c");
    ck_assert_uint_eq(r->oom_info.requested_bytes, 256);
    ck_assert_uint_eq(r->oom_info.free_bytes, 0);
    ck_assert_uint_eq(s.peak_allocated, 1024);
    strata_results_free(r);

    /* a bad line after the failing op is still bad input */
    char *path = strata_test_write_temp("replay-XXXXXX.trace",
                                        "strata-trace 1\nalloc a 1024\nalloc b 1\nfree nosuch\n");
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    strata_replay_options opt = {.allocator = "best-fit", .capacity = 1024};
    ck_assert(!strata_replay_run(src, &opt, &r, NULL, &err));
    ck_assert_ptr_null(r);
    ck_assert_int_eq(strata_exit_for_error(err), STRATA_EXIT_USAGE);
    ck_assert_msg(strstr(err->message, ":4") != NULL, "%s", err->message);
    g_error_free(err);
    strata_source_free(src);
    g_unlink(path);
    g_free(path);
}
END_TEST

/*
 * Minimum capacity, steps of 256 bytes. a 300 -> 512 at 0, b 256 at 512,
 * free a leaves [0, 512) free, c 600 -> 768 does not fit there: best-fit
 * puts it at 768, so 1536 bytes are needed and 1280 run out. offline knows
 * a and c never meet: b 256 + c 768 = 1024.
 */
START_TEST(test_min_capacity_by_hand)
{
    const char *text = "strata-trace 1\nalloc a 300\nalloc b 256\nfree a\nalloc c 600\n";
    char *path = strata_test_write_temp("replay-XXXXXX.trace", text);
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    uint64_t cap = 0;
    strata_replay_options opt = {.allocator = "best-fit", .check_each_op = true};
    ck_assert_msg(strata_replay_min_capacity(src, &opt, 256, &cap, &err), "%s", err ? err->message : "");
    ck_assert_uint_eq(cap, 1536);
    ck_assert(replay_text(text, "best-fit", 1280, NULL, NULL).oom);
    ck_assert(!replay_text(text, "best-fit", 1536, NULL, NULL).oom);
    opt.allocator = "offline";
    ck_assert_msg(strata_replay_min_capacity(src, &opt, 256, &cap, &err), "%s", err ? err->message : "");
    ck_assert_uint_eq(cap, 1024);
    strata_source_free(src);
    g_unlink(path);
    g_free(path);
}
END_TEST

START_TEST(test_trace_options)
{
    const char *text = "strata-trace 1\n"
                       "option allocator.roundup_power2_divisions=4\n"
                       "option allocator.min_block=1MiB\n" /* the buddy allocator's: passed over by the others */
                       "alloc a 1000\n";
    strata_results *r = NULL;
    replay_text(text, "caching", 1 << 30, NULL, &r);
    const char *spec = g_array_index(r->memories, strata_memory_result, 0).allocator;
    ck_assert_msg(strstr(spec, "roundup_power2_divisions=4") != NULL, "%s", spec);
    strata_results_free(r);
    replay_text(text, "caching:roundup_power2_divisions=2", 1 << 30, NULL, &r);
    spec = g_array_index(r->memories, strata_memory_result, 0).allocator;
    ck_assert_msg(strstr(spec, "roundup_power2_divisions=2") != NULL, "%s", spec);
    strata_results_free(r);
    /* best-fit declares no parameter: the options do not concern it */
    replay_text(text, "best-fit", 1 << 30, NULL, &r);
    ck_assert_str_eq(g_array_index(r->memories, strata_memory_result, 0).allocator, "best-fit");
    strata_results_free(r);
}
END_TEST

/* xorshift64: deterministic. */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

START_TEST(test_every_allocator_random_trace)
{
    /* 3000 ops on two streams, sizes 1 B..3 MiB, some releases; the peak of
     * live bytes and the sum of sizes rounded to 256 are computed here. */
    GString *t = g_string_new("strata-trace 1\n");
    uint64_t seed = 42, live_ids[64], live_sizes[64], next = 0, live = 0, peak = 0, rounded_sum = 0;
    size_t n = 0;
    for (int op = 0; op < 3000; op++) {
        uint64_t r = rnd(&seed);
        if (r % 97 == 0) {
            g_string_append(t, "release\n");
        } else if (n == 0 || (n < 64 && r % 2)) {
            uint64_t size = 1 + rnd(&seed) % (r % 5 == 0 ? (3u << 20) : 8192u);
            g_string_append_printf(t, "alloc b%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " stream=%s\n", next,
                                   size, r % 3 ? "main" : "side");
            live_ids[n] = next++;
            live_sizes[n++] = size;
            live += size;
            rounded_sum += (size + 255) / 256 * 256;
            if (live > peak)
                peak = live;
        } else {
            size_t k = rnd(&seed) % n;
            g_string_append_printf(t, "free b%" G_GUINT64_FORMAT "\n", live_ids[k]);
            live -= live_sizes[k];
            live_ids[k] = live_ids[--n];
            live_sizes[k] = live_sizes[n];
        }
    }
    const strata_alloc_type *const *types = strata_alloc_types();
    for (size_t i = 0; types[i]; i++) {
        strata_replay_summary s = replay_text(t->str, types[i]->name, UINT64_C(4) << 30, NULL, NULL);
        ck_assert_msg(!s.oom, "%s ran out of memory", types[i]->name);
        ck_assert_uint_eq(s.ops, 3000);
        ck_assert_msg(s.peak_allocated == peak, "%s: peak %" G_GUINT64_FORMAT " expected %" G_GUINT64_FORMAT,
                      types[i]->name, s.peak_allocated, peak);
        ck_assert_msg(s.peak_reserved >= s.peak_allocated, "%s", types[i]->name);
        if (strcmp(types[i]->name, "bump") == 0)
            ck_assert_uint_eq(s.peak_reserved, rounded_sum);
    }
    g_string_free(t, TRUE);
}
END_TEST

static Suite *replay_suite(void)
{
    Suite *s = suite_create("replay");
    TCase *tc = tcase_create("replay");
    tcase_add_test(tc, test_accounting_by_hand);
    tcase_add_test(tc, test_accounting_without_work);
    tcase_add_test(tc, test_padding_bytes);
    tcase_add_test(tc, test_oom_then_still_checked);
    tcase_add_test(tc, test_min_capacity_by_hand);
    tcase_add_test(tc, test_trace_options);
    tcase_add_test(tc, test_every_allocator_random_trace);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return strata_test_main(replay_suite());
}
