/*
 * test_alloc_host_async.c: the whole-block caching allocators, caching-host
 * (PyTorch's pinned host memory allocator) and cuda-async (the
 * cudaMallocAsync pool), on small traces whose figures are derived by hand
 * in the comments.
 */
#include <check.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include "alloc/alloc.h"
#include "testutil.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)

/* Runs a script of steps separated by ';' on allocator a, checking its
 * invariants after each: "a ID SIZE [STREAM]" allocates (must succeed),
 * "x ID SIZE [STREAM]" must fail, "f ID" frees, "r" releases. Returns the
 * offset of the last allocation. */
static uint64_t drive(strata_allocator *a, const char *script)
{
    char **steps = g_strsplit(script, ";", -1);
    uint64_t last = UINT64_MAX;
    for (char **s = steps; *s; s++) {
        char op = 0;
        unsigned long long id = 0, size = 0, stream = 0;
        int n = sscanf(*s, " %c %llu %llu %llu", &op, &id, &size, &stream);
        ck_assert_msg(n >= 1, "bad step '%s'", *s);
        uint64_t off = UINT64_MAX;
        if (op == 'a')
            ck_assert_msg(strata_allocator_alloc(a, id, size, (uint32_t)stream, &off),
                          "%s: step '%s' failed", strata_allocator_name(a), *s);
        else if (op == 'x')
            ck_assert_msg(!strata_allocator_alloc(a, id, size, (uint32_t)stream, &off),
                          "%s: step '%s' should fail", strata_allocator_name(a), *s);
        else if (op == 'f')
            strata_allocator_free_block(a, id);
        else if (op == 'r')
            strata_allocator_release(a);
        else
            ck_abort_msg("bad step '%s'", *s);
        if (op == 'a')
            last = off;
        GError *err = NULL;
        ck_assert_msg(strata_allocator_check(a, &err), "after '%s': %s", *s, err ? err->message : "");
    }
    g_strfreev(steps);
    return last;
}

static strata_allocator *make(const char *spec, uint64_t capacity)
{
    GError *err = NULL;
    strata_allocator *a = strata_allocator_new(spec, capacity, 0, &err);
    ck_assert_msg(a != NULL, "%s: %s", spec, err ? err->message : "?");
    return a;
}

static strata_alloc_stats stats_of(const strata_allocator *a)
{
    strata_alloc_stats s;
    strata_allocator_stats(a, &s);
    return s;
}

/* ---- caching-host ---- */

/* Power-of-two rounding: 1000 -> 1024 (24 wasted), 1025 -> 2048, 4096 stays. */
START_TEST(test_host_rounds_to_power_of_two)
{
    strata_allocator *a = make("caching-host", 1024 * MiB);
    drive(a, "a 0 1000; a 1 1025; a 2 4096");
    strata_alloc_stats s = stats_of(a);
    ck_assert_uint_eq(s.allocated, 1000 + 1025 + 4096);
    ck_assert_uint_eq(s.reserved, 1024 + 2048 + 4096);
    ck_assert_uint_eq(s.internal_waste, 24 + 1023);
    ck_assert_uint_eq(s.n_segments, 3);
    strata_allocator_free(a);
}
END_TEST

/* Blocks are cached per rounded size and never split: after freeing the
 * 4 KiB block of 3000 B, 4000 B (also 4 KiB) reuses it, 2000 B (2 KiB)
 * cannot take part of a cached 8 KiB block and gets a block of its own. */
START_TEST(test_host_reuse_by_size_never_split)
{
    strata_allocator *a = make("caching-host", 1024 * MiB);
    drive(a, "a 0 3000; f 0; a 1 4000");
    ck_assert_uint_eq(stats_of(a).reserved, 4 * KiB);
    drive(a, "a 2 5000; f 2; a 3 2000");
    strata_alloc_stats s = stats_of(a);
    ck_assert_uint_eq(s.reserved, 4 * KiB + 8 * KiB + 2 * KiB);
    ck_assert_uint_eq(s.allocated, 4000 + 2000);
    ck_assert_uint_eq(s.free_in_reserved, 8 * KiB);
    ck_assert_uint_eq(s.largest_free, 8 * KiB);
    strata_allocator_free(a);
}
END_TEST

/* The list of a size is LIFO, and not per stream: two 1 MiB blocks freed in
 * the order 0, 1; the next request, on another stream, gets block 1's
 * address, the one after that block 0's. */
START_TEST(test_host_lifo_any_stream)
{
    strata_allocator *a = make("caching-host", 1024 * MiB);
    uint64_t off0 = drive(a, "a 0 1048576 0");
    uint64_t off1 = drive(a, "a 1 1048576 0");
    ck_assert_uint_ne(off0, off1);
    ck_assert_uint_eq(drive(a, "f 0; f 1; a 2 1000000 1"), off1);
    ck_assert_uint_eq(drive(a, "a 3 600000 2"), off0);
    ck_assert_uint_eq(stats_of(a).reserved, 2 * MiB);
    strata_allocator_free(a);
}
END_TEST

/* release (empty_cache) returns the cached blocks only: 1 KiB + 2 KiB live,
 * 4 KiB cached -> 3 KiB reserved after it. */
START_TEST(test_host_release_frees_cached)
{
    strata_allocator *a = make("caching-host", 1024 * MiB);
    drive(a, "a 0 1024; a 1 2048; a 2 4096; f 2; r");
    strata_alloc_stats s = stats_of(a);
    ck_assert_uint_eq(s.reserved, 3 * KiB);
    ck_assert_uint_eq(s.n_segments, 2);
    ck_assert_uint_eq(s.largest_free, 0);
    strata_allocator_free(a);
}
END_TEST

/* Capacity 6 KiB: 3000 B holds 4 KiB; after its free, 2000 B needs a new
 * 2 KiB block (4 + 2 <= 6 fits), then 1500 B needs another 2 KiB block
 * (6 + 2 > 6): no release and retry, it fails while 4 KiB sit cached; after
 * an explicit release it fits. */
START_TEST(test_host_capacity_no_retry)
{
    strata_allocator *a = make("caching-host", 6 * KiB);
    drive(a, "a 0 3000; f 0; a 1 2000; x 2 1500; r; a 2 1500");
    ck_assert_uint_eq(stats_of(a).reserved, 4 * KiB);
    strata_allocator_free(a);
}
END_TEST

/* strata alloc: a, b (3000 B each, 4 KiB blocks), free a, c (4000 B) reuses
 * a's block: peak reserved 8 KiB; peak allocated b + c = 7000 B. */
START_TEST(test_host_cli)
{
    char *trace = strata_test_write_temp("host-XXXXXX.trace",
                                         "strata-trace 1\nalloc a 3000\nalloc b 3000\nfree a\n"
                                         "alloc c 4000\n");
    strata_cli_result r = strata_test_cli("alloc", "--trace", trace, "--allocator", "caching-host",
                                          "--capacity", "1GiB", "--json", "-", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    JsonNode *root = json_from_string(r.out, NULL);
    ck_assert_ptr_nonnull(root);
    JsonObject *o = json_node_get_object(root);
    ck_assert_str_eq(json_object_get_string_member(o, "allocator"), "caching-host");
    ck_assert_int_eq(json_object_get_int_member(o, "peak_reserved_bytes"), 8192);
    ck_assert_int_eq(json_object_get_int_member(o, "peak_allocated_bytes"), 7000);
    json_node_unref(root);
    strata_cli_result_clear(&r);
    g_free(trace);
}
END_TEST

/* ---- cuda-async ---- */

/* Frees return to the pool and a request takes a cached block of exactly its
 * rounded size (256 B steps): 1000 -> 1024 reuses the freed 1024; 2000 ->
 * 2048 is new (3 KiB); after its free, 1500 -> 1536 does not take part of
 * it: 3 KiB + 1536. */
START_TEST(test_async_reuse_exact_size)
{
    strata_allocator *a = make("cuda-async", 1024 * MiB);
    drive(a, "a 0 1000; f 0; a 1 1000");
    ck_assert_uint_eq(stats_of(a).reserved, 1024);
    drive(a, "a 2 2000; f 2; a 3 1500");
    strata_alloc_stats s = stats_of(a);
    ck_assert_uint_eq(s.reserved, 1024 + 2048 + 1536);
    ck_assert_uint_eq(s.internal_waste, 24 + 36);
    ck_assert_uint_eq(s.largest_free, 2048);
    strata_allocator_free(a);
}
END_TEST

/* reuse_allow_opportunistic: a 1 MiB block freed on stream 0 serves stream 1
 * by default (1 MiB reserved); with it off stream 1 maps its own (2 MiB),
 * and stream 0 still reuses its block (2 MiB). */
START_TEST(test_async_opportunistic)
{
    strata_allocator *a = make("cuda-async", 1024 * MiB);
    ck_assert_str_eq(strata_allocator_spec(a),
                     "cuda-async:release_threshold=0,reuse_allow_opportunistic=true,"
                     "reuse_follow_event_dependencies=true");
    drive(a, "a 0 1048576 0; f 0; a 1 1048576 1");
    ck_assert_uint_eq(stats_of(a).reserved, MiB);
    strata_allocator_free(a);
    a = make("cuda-async:reuse_allow_opportunistic=false", 1024 * MiB);
    drive(a, "a 0 1048576 0; f 0; a 1 1048576 1");
    ck_assert_uint_eq(stats_of(a).reserved, 2 * MiB);
    drive(a, "a 2 1048576 0");
    ck_assert_uint_eq(stats_of(a).reserved, 2 * MiB);
    strata_allocator_free(a);
}
END_TEST

/* release_threshold: 1, 2 and 4 MiB freed in that order (7 MiB cached). A
 * release with threshold 5 MiB returns the earliest freed until reserved <=
 * 5: 7 - 1 = 6, 6 - 2 = 4 MiB left. With the default 0 everything cached
 * goes; a live 8 MiB block stays. */
START_TEST(test_async_release_threshold)
{
    static const char *fill = "a 0 1048576; a 1 2097152; a 2 4194304; f 0; f 1; f 2";
    strata_allocator *a = make("cuda-async:release_threshold=5MiB", 1024 * MiB);
    drive(a, fill);
    drive(a, "r");
    ck_assert_uint_eq(stats_of(a).reserved, 4 * MiB);
    ck_assert_uint_eq(stats_of(a).largest_free, 4 * MiB);
    strata_allocator_free(a);
    a = make("cuda-async", 1024 * MiB);
    drive(a, fill);
    drive(a, "a 3 8388608; r");
    ck_assert_uint_eq(stats_of(a).reserved, 8 * MiB);
    strata_allocator_free(a);
}
END_TEST

/* Out of memory (4 MiB): a cached 2 MiB block is returned to make room for
 * 3 MiB (2 + 3 > 4), leaving 3 MiB reserved; 2 MiB more then fails with
 * nothing cached. */
START_TEST(test_async_oom_trims_cache)
{
    strata_allocator *a = make("cuda-async", 4 * MiB);
    drive(a, "a 0 2097152; f 0; a 1 3145728; x 2 2097152");
    ck_assert_uint_eq(stats_of(a).reserved, 3 * MiB);
    ck_assert_uint_eq(stats_of(a).n_segments, 1);
    strata_allocator_free(a);
}
END_TEST

/* Peak reserved bytes of `strata alloc` on a trace of stream s1 allocating
 * and freeing 1 MiB, recording event e, then `middle`, then stream s2
 * allocating 1 MiB, through cuda-async:SPEC. */
static int64_t async_events_peak(const char *middle, const char *spec)
{
    char *text = g_strdup_printf("strata-trace 1\nalloc a 1MiB stream=s1\nfree a stream=s1\n"
                                 "record e stream=s1\n%salloc b 1MiB stream=s2\n", middle);
    char *trace = strata_test_write_temp("async-XXXXXX.trace", text);
    char *alloc = g_strdup_printf("cuda-async:reuse_allow_opportunistic=false%s", spec);
    strata_cli_result r = strata_test_cli("alloc", "--trace", trace, "--allocator", alloc,
                                          "--capacity", "1GiB", "--json", "-", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    JsonNode *root = json_from_string(r.out, NULL);
    ck_assert_ptr_nonnull(root);
    int64_t peak = json_object_get_int_member(json_node_get_object(root), "peak_reserved_bytes");
    json_node_unref(root);
    strata_cli_result_clear(&r);
    g_free(alloc);
    g_free(trace);
    g_free(text);
    return peak;
}

/* reuse_follow_event_dependencies, opportunistic reuse off: s1's freed 1 MiB
 * block serves s2 once s2 has waited on e, recorded after the free (1 MiB
 * reserved). Without the wait, or with the parameter off, s2 maps its own
 * (2 MiB). A record made before the free does not order it (2 MiB). */
START_TEST(test_async_follow_events)
{
    ck_assert_int_eq(async_events_peak("wait e stream=s2\n", ""), (int64_t)MiB);
    ck_assert_int_eq(async_events_peak("", ""), (int64_t)(2 * MiB));
    ck_assert_int_eq(async_events_peak("wait e stream=s2\n", ",reuse_follow_event_dependencies=false"),
                     (int64_t)(2 * MiB));
    ck_assert_int_eq(async_events_peak("alloc c 1MiB stream=s1\nfree c stream=s1\n"
                                       "record f stream=s1\nwait e stream=s2\n", ""),
                     (int64_t)(2 * MiB));
}
END_TEST

/* Event order is transitive: stream 0 frees 1 MiB (block at offset 0) and
 * records event 0; stream 1 waits on it and records event 1. Stream 3,
 * which waited on nothing, maps its own block (2 MiB reserved) and frees
 * it. Stream 2 waits on event 1 and takes stream 0's block, at offset 0
 * (2 MiB reserved, not 3). */
START_TEST(test_async_follow_events_transitive)
{
    strata_allocator *a = make("cuda-async:reuse_allow_opportunistic=false", 1024 * MiB);
    ck_assert_uint_eq(drive(a, "a 0 1048576 0; f 0"), 0);
    strata_allocator_event(a, true, 0, 0, 1);
    strata_allocator_event(a, false, 1, 0, 1);
    strata_allocator_event(a, true, 1, 1, 1);
    drive(a, "a 9 1048576 3; f 9");
    ck_assert_uint_eq(stats_of(a).reserved, 2 * MiB);
    strata_allocator_event(a, false, 2, 1, 1);
    ck_assert_uint_eq(drive(a, "a 1 1048576 2"), 0);
    ck_assert_uint_eq(stats_of(a).reserved, 2 * MiB);
    ck_assert_uint_eq(stats_of(a).allocated, MiB);
    strata_allocator_free(a);
}
END_TEST

static Suite *host_async_suite(void)
{
    Suite *s = suite_create("alloc_host_async");
    TCase *tc = tcase_create("host");
    tcase_add_test(tc, test_host_rounds_to_power_of_two);
    tcase_add_test(tc, test_host_reuse_by_size_never_split);
    tcase_add_test(tc, test_host_lifo_any_stream);
    tcase_add_test(tc, test_host_release_frees_cached);
    tcase_add_test(tc, test_host_capacity_no_retry);
    tcase_add_test(tc, test_host_cli);
    suite_add_tcase(s, tc);
    TCase *ta = tcase_create("async");
    tcase_add_test(ta, test_async_reuse_exact_size);
    tcase_add_test(ta, test_async_opportunistic);
    tcase_add_test(ta, test_async_release_threshold);
    tcase_add_test(ta, test_async_oom_trims_cache);
    tcase_add_test(ta, test_async_follow_events);
    tcase_add_test(ta, test_async_follow_events_transitive);
    suite_add_tcase(s, ta);
    return s;
}

int main(void)
{
    return strata_test_main(host_async_suite());
}
