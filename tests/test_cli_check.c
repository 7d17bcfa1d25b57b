/*
 * test_cli_check.c: `strata check` end to end. One malformed trace per error
 * class (exit 2, the file and line in stderr, what was expected), a good
 * trace's counts and peak live bytes, and --hw checks.
 */
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"

static char *hw_path(void) { return strata_test_source_path("configs/hw/test-simple.ini"); }

/* Run `strata check --trace <text> [--hw test-simple.ini]`; asserts exit 2 and
 * that stderr holds "FILE:LINE" and `expected`. */
static void assert_bad(const char *text, bool with_hw, int line, const char *expected)
{
    char *trace = strata_test_write_temp("bad-XXXXXX.trace", text);
    char *hw = hw_path();
    strata_cli_result r = with_hw ? strata_test_cli("check", "--trace", trace, "--hw", hw, NULL)
                                  : strata_test_cli("check", "--trace", trace, NULL);
    char *where = g_strdup_printf("%s:%d:", trace, line);
    ck_assert_msg(r.status == 2, "exit %d for:\n%s\nstderr: %s", r.status, text, r.err);
    ck_assert_msg(strstr(r.err, where) != NULL, "stderr lacks '%s': %s", where, r.err);
    ck_assert_msg(strstr(r.err, expected) != NULL, "stderr lacks '%s': %s", expected, r.err);
    ck_assert_str_eq(r.out, "");
    g_free(where);
    strata_cli_result_clear(&r);
    unlink(trace);
    g_free(trace);
    g_free(hw);
}

START_TEST(bad_size)
{
    assert_bad("strata-trace 1\nalloc a 4096\nalloc b 12XB\n", false, 3,
               "expected a size such as 4096, 64KiB or 1.5GiB, got '12XB'");
}
END_TEST

START_TEST(unknown_op)
{
    assert_bad("strata-trace 1\n# comment\nmalloc a 4096\n", false, 3,
               "unknown op 'malloc': expected one of alloc, free, copy, compute, record, wait, release, option");
}
END_TEST

START_TEST(unknown_memory)
{
    assert_bad("strata-trace 1\nalloc a 4096\nalloc b 4096 vram\n", true, 3, "got 'vram'");
    assert_bad("strata-trace 1\nalloc a 4096\nalloc b 4096 vram\n", true, 3, "(one of hbm, host)");
}
END_TEST

START_TEST(unknown_compute_unit)
{
    assert_bad("strata-trace 1\nalloc a 4096\ncompute k in=a unit=tensorcore\n", true, 3,
               "expected a compute unit of");
}
END_TEST

START_TEST(duplicate_live_name)
{
    assert_bad("strata-trace 1\nalloc a 4096\nalloc b 4096\nfree b\nalloc b 1\nalloc a 8192\n", false, 6,
               "expected a name that is not live, got 'a' (allocated at line 2");
}
END_TEST

START_TEST(free_of_unknown_buffer)
{
    assert_bad("strata-trace 1\nalloc a 4096\nfree a\nfree a\n", false, 4, "expected a live buffer");
}
END_TEST

START_TEST(wait_without_record)
{
    assert_bad("strata-trace 1\nalloc a 4096\nwait e1 stream=x\nrecord e1\n", false, 3,
               "expected an event recorded earlier in the trace, got wait on 'e1'");
}
END_TEST

START_TEST(bad_version_line)
{
    assert_bad("strata-trace 2\nalloc a 4096\n", false, 1, "expected version 1");
    assert_bad("alloc a 4096\n", false, 1, "expected 'strata-trace 1' as the first line, got 'alloc'");
}
END_TEST

START_TEST(copy_too_large_and_option_late)
{
    assert_bad("strata-trace 1\nalloc a 4KiB\nalloc b 2KiB\ncopy b a\n", false, 4,
               "expected at most 2048 bytes (the size of destination 'b'), got 4096");
    assert_bad("strata-trace 1\nalloc a 4KiB\noption x=1\n", false, 3, "expected option lines before the first op");
}
END_TEST

START_TEST(good_trace_counts_and_peaks)
{
    char *trace = strata_test_write_temp("good-XXXXXX.trace",
                                         "strata-trace 1\n"
                                         "option allocator.max_split_size=200MiB\n"
                                         "alloc a 1GiB host stream=h2d\n"
                                         "alloc b 1GiB\n"
                                         "alloc c 512MiB\n"
                                         "copy b a stream=h2d\n"
                                         "record done stream=h2d\n"
                                         "wait done\n"
                                         "free c\n"
                                         "alloc d 256MiB\n"
                                         "compute k in=b out=d time=1ms\n"
                                         "free a stream=h2d\n"
                                         "free b\nfree d\n");
    char *hw = hw_path();
    strata_cli_result r = strata_test_cli("check", "--trace", trace, "--hw", hw, NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "ops       12 (alloc 4, free 4, copy 1, compute 1, record 1, wait 1, release 0)"));
    ck_assert_ptr_nonnull(strstr(r.out, "options   1"));
    ck_assert_ptr_nonnull(strstr(r.out, "buffers   4 allocated"));
    ck_assert_ptr_nonnull(strstr(r.out, "streams   2 (h2d, main)"));
    ck_assert_ptr_nonnull(strstr(r.out, "events    1"));
    /* hbm: b + c = 1.5 GiB at its peak (d comes after c is freed); host: a. */
    ck_assert_ptr_nonnull(strstr(r.out, "(1073741824 B, 1 buffers)"));
    ck_assert_ptr_nonnull(strstr(r.out, "(1610612736 B, 3 buffers)"));
    ck_assert_ptr_nonnull(strstr(r.out, "hardware"));
    strata_cli_result_clear(&r);

    /* Without --hw the default memory is reported as such. */
    r = strata_test_cli("check", "--trace", trace, NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "(default)"));
    strata_cli_result_clear(&r);
    unlink(trace);
    g_free(trace);
    g_free(hw);
}
END_TEST

START_TEST(every_example_trace_checks)
{
    char *dir_path = strata_test_source_path("traces/examples");
    GDir *dir = g_dir_open(dir_path, 0, NULL);
    ck_assert_ptr_nonnull(dir);
    const char *name;
    while ((name = g_dir_read_name(dir))) {
        if (!g_str_has_suffix(name, ".trace"))
            continue;
        char *path = g_build_filename(dir_path, name, NULL);
        strata_cli_result r = strata_test_cli("check", "--trace", path, NULL);
        ck_assert_msg(r.status == 0, "%s: exit %d: %s", name, r.status, r.err);
        strata_cli_result_clear(&r);
        g_free(path);
    }
    g_dir_close(dir);
    g_free(dir_path);
}
END_TEST

START_TEST(usage_errors)
{
    strata_cli_result r = strata_test_cli("check", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--trace is required"));
    strata_cli_result_clear(&r);
    r = strata_test_cli("check", "--trace", "/nonexistent.trace", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "/nonexistent.trace"));
    strata_cli_result_clear(&r);
    r = strata_test_cli("check", "--bogus", NULL);
    ck_assert_int_eq(r.status, 2);
    strata_cli_result_clear(&r);
    r = strata_test_cli("check", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "--trace"));
    ck_assert_ptr_nonnull(strstr(r.out, "--hw"));
    strata_cli_result_clear(&r);
}
END_TEST

static Suite *cli_check_suite(void)
{
    Suite *s = suite_create("cli_check");
    TCase *tc = tcase_create("cli_check");
    tcase_add_test(tc, bad_size);
    tcase_add_test(tc, unknown_op);
    tcase_add_test(tc, unknown_memory);
    tcase_add_test(tc, unknown_compute_unit);
    tcase_add_test(tc, duplicate_live_name);
    tcase_add_test(tc, free_of_unknown_buffer);
    tcase_add_test(tc, wait_without_record);
    tcase_add_test(tc, bad_version_line);
    tcase_add_test(tc, copy_too_large_and_option_late);
    tcase_add_test(tc, good_trace_counts_and_peaks);
    tcase_add_test(tc, every_example_trace_checks);
    tcase_add_test(tc, usage_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(cli_check_suite()); }
