/*
 * test_kineto_scan.c: the streaming event scanner (sim/import/kineto_scan.c)
 * on hand-made files: runs of plain bytes taken at once must leave what the
 * byte-at-a-time scanner gave (event text, first lines, the depth-1 key
 * that names traceEvents, an event over a 64 KiB read chunk, the 16 MiB
 * limit, a NUL), and big integer literals are widened to floats in one
 * pass over the event (issue 46: one insert per literal was quadratic).
 */
#include <check.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "import/kineto_scan.h"
#include "testutil.h"

/* The events of text, each as "LINE:NAME" (NAME: its "name" member, or
 * "-"); NULL with *err when the scan fails. */
static char *scan_all(const char *text, gsize len, char **err_msg)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "t.json", NULL);
    ck_assert(g_file_set_contents(path, text, (gssize)len, NULL));
    GError *err = NULL;
    strata_kineto_scan *s = strata_kineto_scan_open(path, &err);
    ck_assert_ptr_nonnull(s);
    GString *out = g_string_new(NULL);
    JsonObject *ev;
    uint64_t line;
    int rc;
    while ((rc = strata_kineto_scan_next(s, &ev, &line, &err)) == 1) {
        const char *name = json_object_has_member(ev, "name") ? json_object_get_string_member(ev, "name") : "-";
        g_string_append_printf(out, "%" G_GUINT64_FORMAT ":%s;", line, name);
    }
    strata_kineto_scan_free(s);
    *err_msg = rc < 0 ? g_strdup(err->message) : NULL;
    g_clear_error(&err);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
    if (rc < 0) {
        g_string_free(out, TRUE);
        return NULL;
    }
    return g_string_free(out, FALSE);
}

/* A depth-1 key longer than the 32 bytes kept, that starts "traceEvents",
 * is not the events (its array holds no object the scan hands out); an
 * escaped quote and brackets inside strings change nothing; lines counted
 * through strings and numbers. */
START_TEST(keys_strings_and_lines)
{
    const char *text = "{\"traceEventsButLongerThanThirtyTwoBytes\": [{\"name\": \"no\"}],\n"
                       "\"other\": \"a \\\" [{ }] : , b\",\n"
                       "\"traceEvents\": [\n"
                       "{\"name\": \"x\\\"}\", \"ts\": 12345678901234},\n"
                       "  {\"name\":\n\"two\", \"args\": {\"k\": [1, 2]}},\n"
                       "{\"name\": \"y\"}\n"
                       "], \"after\": \"]}\"}\n";
    char *msg;
    char *got = scan_all(text, strlen(text), &msg);
    ck_assert_msg(got != NULL, "%s", msg);
    /* lines: the events start on lines 4, 5 and 7 (the second spans two) */
    ck_assert_str_eq(got, "4:x\"};5:two;7:y;");
    g_free(got);
}
END_TEST

/* An event of 200,000 bytes of name read over four 64 KiB chunks, then one
 * after it on the next line. */
START_TEST(event_over_chunks)
{
    GString *t = g_string_new("{\"traceEvents\": [{\"name\": \"");
    for (int i = 0; i < 200000; i++)
        g_string_append_c(t, (char)('a' + i % 26));
    g_string_append(t, "\"},\n{\"name\": \"b\"}]}");
    char *msg;
    char *got = scan_all(t->str, t->len, &msg);
    ck_assert_msg(got != NULL, "%s", msg);
    ck_assert_uint_eq(strlen(got), strlen("1:") + 200000 + strlen(";2:b;"));
    ck_assert(g_str_has_prefix(got, "1:abcdefghijklmnopqrstuvwxyza"));
    ck_assert(g_str_has_suffix(got, "xyzabcdefgh;2:b;")); /* 199,999 = 26 * 7692 + 7: 'h' last */
    g_free(got);
    g_string_free(t, TRUE);
}
END_TEST

/* 16 MiB of text in one event: refused at the limit, in a string and in a
 * run of digits; a NUL byte inside a string is refused on its line. */
START_TEST(limit_and_nul)
{
    for (int in_string = 0; in_string < 2; in_string++) {
        GString *t = g_string_new("{\"traceEvents\": [{\"name\": \"n\", \"pad\": ");
        if (in_string)
            g_string_append_c(t, '"');
        gsize at = t->len;
        g_string_set_size(t, at + STRATA_KINETO_MAX_EVENT);
        memset(t->str + at, '7', STRATA_KINETO_MAX_EVENT);
        g_string_append(t, in_string ? "\"}]}" : "}]}");
        char *msg;
        char *got = scan_all(t->str, t->len, &msg);
        ck_assert_ptr_null(got);
        ck_assert_msg(strstr(msg, ":1: an event over 16 MiB of text") != NULL, "%s", msg);
        g_free(msg);
        g_string_free(t, TRUE);
    }
    const char text[] = "{\"traceEvents\": [\n{\"name\": \"a\0b\"}]}";
    char *msg;
    char *got = scan_all(text, sizeof text - 1, &msg);
    ck_assert_ptr_null(got);
    ck_assert_msg(strstr(msg, ":2: a NUL byte: not JSON text") != NULL, "%s", msg);
    g_free(msg);
}
END_TEST

/* 3,000 literals of 20 digits in one event (each above 2^63 - 1) become
 * floats, each once; 2^63 - 1 itself stays an integer; a literal inside a
 * string is left alone. */
START_TEST(big_integers_widened)
{
    GString *t = g_string_new("{\"traceEvents\": [{\"name\": \"12345678901234567890\", \"max\": 9223372036854775807, "
                              "\"v\": [");
    for (int i = 0; i < 3000; i++)
        g_string_append_printf(t, "%s%d0000000000000000000", i ? ", " : "", 10 + i % 90);
    g_string_append(t, "]}]}");
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "big.json", NULL);
    ck_assert(g_file_set_contents(path, t->str, (gssize)t->len, NULL));
    GError *err = NULL;
    strata_kineto_scan *s = strata_kineto_scan_open(path, &err);
    JsonObject *ev;
    uint64_t line;
    ck_assert_int_eq(strata_kineto_scan_next(s, &ev, &line, &err), 1);
    ck_assert_str_eq(json_object_get_string_member(ev, "name"), "12345678901234567890");
    JsonNode *max = json_object_get_member(ev, "max");
    ck_assert(json_node_get_value_type(max) == G_TYPE_INT64);
    ck_assert(json_node_get_int(max) == INT64_MAX);
    JsonArray *v = json_object_get_array_member(ev, "v");
    ck_assert_uint_eq(json_array_get_length(v), 3000);
    for (guint i = 0; i < 3000; i++) {
        JsonNode *n = json_array_get_element(v, i);
        ck_assert(json_node_get_value_type(n) == G_TYPE_DOUBLE);
        ck_assert(json_node_get_double(n) == (10 + i % 90) * 1e19);
    }
    ck_assert_int_eq(strata_kineto_scan_next(s, &ev, &line, &err), 0);
    strata_kineto_scan_free(s);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
    g_string_free(t, TRUE);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kineto_scan");
    TCase *tc = tcase_create("kineto_scan");
    tcase_add_test(tc, keys_strings_and_lines);
    tcase_add_test(tc, event_over_chunks);
    tcase_add_test(tc, limit_and_nul);
    tcase_add_test(tc, big_integers_widened);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
