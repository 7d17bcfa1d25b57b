/* test_progress.c: the progress line is silent off a terminal and erases itself. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "core/progress.h"

static char *contents(FILE *f)
{
    long size = ftell(f);
    char *text = g_malloc0((gsize)size + 1);
    rewind(f);
    ck_assert_uint_eq(fread(text, 1, (size_t)size, f), (size_t)size);
    return text;
}

START_TEST(quiet_means_no_stream)
{
    ck_assert_ptr_null(strata_progress_stream(true));
    ck_assert_ptr_eq(strata_progress_stream(false), isatty(fileno(stderr)) ? stderr : NULL);
}
END_TEST

START_TEST(silent_on_null)
{
    strata_progress *p = strata_progress_new(NULL);
    strata_progress_update(p, "height %d", 12);
    strata_progress_free(p);
    strata_progress_update(NULL, "nothing");
    strata_progress_free(NULL);
}
END_TEST

START_TEST(rewrites_then_erases_the_line)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    strata_progress *p = strata_progress_new(f);
    strata_progress_update(p, "height %d of %d", 12, 10);
    char *text = contents(f);
    ck_assert_str_eq(text, "\rheight 12 of 10\033[K");
    g_free(text);
    fseek(f, 0, SEEK_END);
    strata_progress_free(p);
    text = contents(f);
    /* the last line is erased whether or not later updates were shown */
    ck_assert(g_str_has_prefix(text, "\rheight 12 of 10\033[K"));
    ck_assert(g_str_has_suffix(text, "\r\033[K"));
    g_free(text);
    fclose(f);
}
END_TEST

START_TEST(nothing_to_erase_without_an_update)
{
    FILE *f = tmpfile();
    strata_progress_free(strata_progress_new(f));
    ck_assert_int_eq(ftell(f), 0);
    fclose(f);
}
END_TEST

START_TEST(counts_with_a_bar_and_sizes)
{
    FILE *f = tmpfile();
    strata_progress *p = strata_progress_new(f);
    /* 6 of 24: a quarter of 30 columns, rounded, is 8 #; an ETA follows */
    strata_progress_count(p, "sweep", 6, 24, "points", "2 running");
    char *text = contents(f);
    ck_assert_msg(g_str_has_prefix(text, "\rsweep: [########......................] 6/24 points (25%), 2 running"),
                  "%s", text);
    g_free(text);
    strata_progress_free(p);
    fclose(f);

    f = tmpfile();
    p = strata_progress_new(f);
    strata_progress_count(p, "import torch", 3 * 1048576, 0, NULL, NULL); /* bytes, total unknown */
    text = contents(f);
    ck_assert_str_eq(text, "\rimport torch: 3.00 MiB\033[K");
    g_free(text);
    strata_progress_free(p);
    fclose(f);
    strata_progress_count(NULL, "x", 1, 2, NULL, NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("progress");
    TCase *tc = tcase_create("progress");
    tcase_add_test(tc, quiet_means_no_stream);
    tcase_add_test(tc, silent_on_null);
    tcase_add_test(tc, rewrites_then_erases_the_line);
    tcase_add_test(tc, nothing_to_erase_without_an_update);
    tcase_add_test(tc, counts_with_a_bar_and_sizes);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
