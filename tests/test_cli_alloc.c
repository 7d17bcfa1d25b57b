/*
 * test_cli_alloc.c: `strata alloc` end to end (exit statuses, JSON keys and
 * values derived by hand, --min-capacity, trace options, --memory).
 */
#include <check.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include "testutil.h"

#define MiB (INT64_C(1) << 20)

static const char *trace_text =
    "strata-trace 1\n"
    "alloc a 1000\n"
    "alloc b 5MiB\n"
    "free a\n"
    "alloc c 30MiB\n"
    "free b\n"
    "free c\n";

static JsonObject *read_json(const char *path, JsonParser **parser)
{
    *parser = json_parser_new();
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_file(*parser, path, &err), "%s", err ? err->message : "");
    return json_node_get_object(json_parser_get_root(*parser));
}

START_TEST(test_alloc_json_exact)
{
    char *trace = strata_test_write_temp("alloc-XXXXXX.trace", trace_text);
    char *dir = strata_test_temp_dir();
    char *json = g_build_filename(dir, "out.json", NULL);
    strata_cli_result r = strata_test_cli("alloc", "--trace", trace, "--allocator", "caching",
                                          "--capacity", "1GiB", "--json", json, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    JsonParser *p;
    JsonObject *o = read_json(json, &p);
    ck_assert_str_eq(json_object_get_string_member(o, "status"), "ok");
    ck_assert_str_eq(json_object_get_string_member(o, "allocator"),
                     "caching:roundup_power2_divisions=0,expandable_segments=false");
    ck_assert_int_eq(json_object_get_int_member(o, "capacity_bytes"), 1024 * MiB);
    ck_assert_int_eq(json_object_get_int_member(o, "ops"), 6);
    /* live at most b + c = 35 MiB; a (1000) + b = 5 MiB + 1000 earlier */
    ck_assert_int_eq(json_object_get_int_member(o, "peak_allocated_bytes"), 35 * MiB);
    /* segments: 2 MiB (a) + 20 MiB (b) + 30 MiB (c), none released */
    ck_assert_int_eq(json_object_get_int_member(o, "peak_reserved_bytes"), 52 * MiB);
    ck_assert_int_eq(json_object_get_int_member(o, "internal_waste_bytes"), 0);
    ck_assert(json_object_get_null_member(o, "oom"));
    ck_assert(json_object_has_member(o, "fragmentation_peak"));
    g_object_unref(p);
    strata_cli_result_clear(&r);
    g_free(json);
    g_free(dir);
    g_free(trace);
}
END_TEST

START_TEST(test_alloc_oom_exit_1)
{
    char *trace = strata_test_write_temp("alloc-XXXXXX.trace", trace_text);
    char *dir = strata_test_temp_dir();
    char *json = g_build_filename(dir, "out.json", NULL);
    strata_cli_result r = strata_test_cli("alloc", "--trace", trace, "--allocator", "best-fit",
                                          "--capacity", "30MiB", "--json", json, NULL);
    ck_assert_int_eq(r.status, 1);
    JsonParser *p;
    JsonObject *o = read_json(json, &p);
    ck_assert_str_eq(json_object_get_string_member(o, "status"), "oom");
    JsonObject *oom = json_object_get_object_member(o, "oom");
    ck_assert_int_eq(json_object_get_int_member(oom, "line"), 5);
    ck_assert_str_eq(json_object_get_string_member(oom, "buffer"), "c");
    ck_assert_int_eq(json_object_get_int_member(oom, "requested_bytes"), 30 * MiB);
    ck_assert_int_eq(json_object_get_int_member(oom, "free_bytes"), 30 * MiB - 5 * MiB);
    g_object_unref(p);
    strata_cli_result_clear(&r);
    g_free(json);
    g_free(dir);
    g_free(trace);
}
END_TEST

/* best-fit, alignment 256: a at 0 (1024 B), b at 1024, a freed, c after b:
 * the smallest capacity is 1024 + 35 MiB. */
START_TEST(test_alloc_min_capacity)
{
    char *trace = strata_test_write_temp("alloc-XXXXXX.trace", trace_text);
    strata_cli_result r = strata_test_cli("alloc", "--trace", trace, "--allocator", "best-fit",
                                          "--min-capacity", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "min capacity     36701184 B") != NULL, "%s", r.out);
    strata_cli_result_clear(&r);
    /* caching: 2 MiB (a) + 20 MiB (b) + 30 MiB (c) = 52 MiB fits; at 50 MiB the
     * 30 MiB cudaMalloc fails, a's cached 2 MiB segment is released and the
     * retry fits (20 + 30); below 50 MiB b and c cannot both be held. */
    r = strata_test_cli("alloc", "--trace", trace, "--allocator", "caching", "--min-capacity", NULL);
    ck_assert_msg(strstr(r.out, "min capacity     52428800 B") != NULL, "%s", r.out);
    strata_cli_result_clear(&r);
    g_free(trace);
}
END_TEST

START_TEST(test_alloc_trace_options)
{
    char *trace = strata_test_write_temp("alloc-XXXXXX.trace",
                                         "strata-trace 1\n"
                                         "option allocator.max_split_size=200MiB\n"
                                         "option allocator.roundup_power2_divisions=4\n"
                                         "alloc a 1000\n");
    strata_cli_result r = strata_test_cli("alloc", "--trace", trace, "--allocator",
                                          "caching:roundup_power2_divisions=2", "--capacity", "1GiB",
                                          "--json", "-", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "\"caching:max_split_size=200MiB,roundup_power2_divisions=2,"
                                "expandable_segments=false\"") != NULL, "%s", r.out);
    strata_cli_result_clear(&r);
    /* an allocator without the parameter ignores the option */
    r = strata_test_cli("alloc", "--trace", trace, "--allocator", "best-fit", "--capacity", "1GiB",
                        NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    g_free(trace);
}
END_TEST

START_TEST(test_alloc_memory_selection)
{
    char *trace = strata_test_write_temp("alloc-XXXXXX.trace",
                                         "strata-trace 1\n"
                                         "alloc a 1MiB\n"
                                         "alloc h 3MiB host\n"
                                         "free h\n"
                                         "free a\n");
    strata_cli_result r = strata_test_cli("alloc", "--trace", trace, "--allocator", "best-fit",
                                          "--capacity", "1GiB", "--memory", "host", "--json", "-",
                                          NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "\"peak_allocated_bytes\" : 3145728") != NULL, "%s", r.out);
    strata_cli_result_clear(&r);
    r = strata_test_cli("alloc", "--trace", trace, "--allocator", "best-fit", "--capacity", "1GiB",
                        "--json", "-", NULL);
    ck_assert_msg(strstr(r.out, "\"peak_allocated_bytes\" : 1048576") != NULL, "%s", r.out);
    strata_cli_result_clear(&r);
    g_free(trace);
}
END_TEST

START_TEST(test_alloc_bad_input)
{
    char *trace = strata_test_write_temp("alloc-XXXXXX.trace", trace_text);
    strata_cli_result r = strata_test_cli("alloc", "--trace", trace, "--allocator", "nope",
                                          "--capacity", "1GiB", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "known: bump, first-fit, next-fit, best-fit, buddy, bfc, caching, caching-host, cuda-async, offline"),
                  "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("alloc", "--trace", trace, "--allocator", "bfc:fraction=1", "--capacity",
                        "1GiB", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "memory_fraction"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("alloc", "--trace", trace, "--allocator", "best-fit", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--capacity"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("alloc", "--trace", trace, "--allocator", "best-fit", "--capacity", "1GiB",
                        "--json", "/nonexistent-dir/x.json", NULL);
    ck_assert_int_eq(r.status, 2);
    strata_cli_result_clear(&r);
    char *bad = strata_test_write_temp("alloc-XXXXXX.trace", "strata-trace 1\nalloc a 1000\nfree b\n");
    r = strata_test_cli("alloc", "--trace", bad, "--allocator", "best-fit", "--capacity", "1GiB", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, ":3"), "%s", r.err);
    strata_cli_result_clear(&r);
    /* bad input after the OOM point is still bad input */
    char *late = strata_test_write_temp("alloc-XXXXXX.trace",
                                        "strata-trace 1\nalloc a 2MiB\nfree zz\n");
    r = strata_test_cli("alloc", "--trace", late, "--allocator", "best-fit", "--capacity", "1MiB", NULL);
    ck_assert_int_eq(r.status, 2);
    strata_cli_result_clear(&r);
    g_free(late);
    g_free(bad);
    g_free(trace);
}
END_TEST

/* issue 41: an SPMD trace (mesh=, device=) replays one device's program:
 * the ops of every device, that device's own, its collectives as computes.
 * Device 0 holds w + g = 3000 bytes at most, device 1 also `extra`, 3500:
 * the busiest, taken by default. */
START_TEST(test_alloc_one_device_of_spmd)
{
    char *trace = strata_test_write_temp("spmd-XXXXXX.trace",
                                         "strata-trace 1\n"
                                         "option mesh=x:2\n"
                                         "alloc w 1000\n"
                                         "alloc g 2000\n"
                                         "all-gather g w axis=x\n"
                                         "alloc extra 500 device=1\n"
                                         "free extra device=1\n"
                                         "free g\n"
                                         "free w\n");
    const struct {
        const char *device;
        int status;
        const char *expect;
    } cases[] = {
        {NULL, 0, "device           1 of 2 (the busiest; its program's live peak 3500 B;"},
        {NULL, 0, "peak allocated   3.42 KiB (3500 B)"},
        {"0", 0, "device           0 of 2 (--device; its program's live peak 3000 B;"},
        {"0", 0, "peak allocated   2.93 KiB (3000 B)"},
        {"2", 2, "expected --device below the trace's 2 devices, got 2"},
        {"x", 2, "--device: expected a device number such as 0 or 3, got 'x'"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        strata_cli_result r = cases[i].device
                                  ? strata_test_cli("alloc", "--trace", trace, "--allocator", "best-fit", "--capacity",
                                                    "1MiB", "--device", cases[i].device, NULL)
                                  : strata_test_cli("alloc", "--trace", trace, "--allocator", "best-fit", "--capacity",
                                                    "1MiB", NULL);
        ck_assert_msg(r.status == cases[i].status, "case %zu: %d %s", i, r.status, r.err);
        ck_assert_msg(strstr(cases[i].status ? r.err : r.out, cases[i].expect), "case %zu: %s%s", i, r.out, r.err);
        strata_cli_result_clear(&r);
    }
    g_free(trace);
}
END_TEST

START_TEST(test_alloc_help)
{
    strata_cli_result r = strata_test_cli("alloc", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    const char *words[] = {"--allocator", "--capacity", "--alignment", "--memory", "--policy",
                           "--json", "--min-capacity", "max_split_size", "memory_fraction",
                           "min_block", "iterations"};
    for (size_t i = 0; i < G_N_ELEMENTS(words); i++)
        ck_assert_msg(strstr(r.out, words[i]) != NULL, "--help lacks %s", words[i]);
    strata_cli_result_clear(&r);
}
END_TEST

static Suite *cli_alloc_suite(void)
{
    Suite *s = suite_create("cli_alloc");
    TCase *tc = tcase_create("alloc");
    tcase_add_test(tc, test_alloc_json_exact);
    tcase_add_test(tc, test_alloc_oom_exit_1);
    tcase_add_test(tc, test_alloc_min_capacity);
    tcase_add_test(tc, test_alloc_trace_options);
    tcase_add_test(tc, test_alloc_memory_selection);
    tcase_add_test(tc, test_alloc_bad_input);
    tcase_add_test(tc, test_alloc_one_device_of_spmd);
    tcase_add_test(tc, test_alloc_help);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return strata_test_main(cli_alloc_suite());
}
