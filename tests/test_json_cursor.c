/*
 * test_json_cursor.c: the JSON cursor writers (sim/results/json_cursor.h):
 * integers as printf prints them, strings escaped byte by byte and 8 bytes
 * at a time alike, microseconds from nanoseconds, pieces copied in steps.
 */
#include <inttypes.h>
#include <string.h>
#include "results/json_cursor.h"
#include "testutil.h"

/* The text a writer call leaves between buf and the cursor it returns. */
#define WRITTEN(buf, call) (*(call) = '\0', (buf))

START_TEST(integers_as_printf)
{
    const int64_t values[] = {0, 1, 9, 10, -1, -9, -10, 99, 100, 12345678, 123456789, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < G_N_ELEMENTS(values); i++) {
        char buf[STRATA_JC_NUMBER + 1], want[32];
        g_snprintf(want, sizeof want, "%" PRId64, values[i]);
        ck_assert_str_eq(WRITTEN(buf, strata_jc_i64(buf, values[i])), want);
    }
    char buf[STRATA_JC_NUMBER + 1];
    ck_assert_str_eq(WRITTEN(buf, strata_jc_u64(buf, UINT64_MAX)), "18446744073709551615");
    ck_assert_str_eq(WRITTEN(buf, strata_jc_u64(buf, 7)), "7");
}
END_TEST

START_TEST(escapes_by_hand)
{
    char buf[256];
    const char *text = "a\"b\\c\nd\te\rf\001g\037h\177\303\251";
    ck_assert_str_eq(WRITTEN(buf, strata_jc_escaped(buf, text)),
                     "a\\\"b\\\\c\\nd\\te\\rf\\u0001g\\u001fh\177\303\251");
    ck_assert_str_eq(WRITTEN(buf, strata_jc_escaped_n(buf, text, strlen(text))),
                     "a\\\"b\\\\c\\nd\\te\\rf\\u0001g\\u001fh\177\303\251");
    ck_assert_str_eq(WRITTEN(buf, strata_jc_escaped(buf, NULL)), "");
    ck_assert_str_eq(WRITTEN(buf, strata_jc_string(buf, "device ", "3")), "\"device 3\"");
    ck_assert_str_eq(WRITTEN(buf, strata_jc_string(buf, "q\"", NULL)), "\"q\\\"\"");
}
END_TEST

/* Every byte value at every place of a 19-byte text (two whole words and a
 * tail): the word-at-a-time path writes what the bytewise one does. */
START_TEST(escapes_word_at_a_time_alike)
{
    for (int b = 1; b < 256; b++)
        for (size_t at = 0; at < 19; at++) {
            char text[20], fast[19 * 6 + 1], slow[19 * 6 + 1];
            memset(text, 'x', 19);
            text[19] = '\0';
            text[at] = (char)b;
            ck_assert_str_eq(WRITTEN(fast, strata_jc_escaped_n(fast, text, 19)),
                             WRITTEN(slow, strata_jc_escaped(slow, text)));
        }
}
END_TEST

START_TEST(micros_from_nanoseconds)
{
    static const struct {
        int64_t ns;
        const char *text;
    } cases[] = {{0, "0.000"},       {7, "0.007"},         {999, "0.999"},
                 {1000, "1.000"},    {1001, "1.001"},      {123456789, "123456.789"},
                 {INT64_MAX, "9223372036854775.807"}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char buf[STRATA_JC_MICROS + 1];
        ck_assert_str_eq(WRITTEN(buf, strata_jc_micros(buf, cases[i].ns)), cases[i].text);
    }
}
END_TEST

START_TEST(pieces_escaped_and_copied_whole)
{
    strata_jc_piece empty = strata_jc_piece_new(NULL);
    ck_assert_uint_eq(empty.n, 0);
    strata_jc_piece_clear(&empty);
    strata_jc_piece pc = strata_jc_piece_new("a \"quoted\" name longer than a step");
    ck_assert_uint_eq(pc.n, strlen("a \\\"quoted\\\" name longer than a step"));
    char buf[128];
    memset(buf, '#', sizeof buf);
    char *end = strata_jc_put_piece(buf, &pc);
    end = STRATA_JC_LIT(end, "!");
    *end = '\0';
    ck_assert_str_eq(buf, "a \\\"quoted\\\" name longer than a step!");
    strata_jc_piece_clear(&pc);
    ck_assert_ptr_null(pc.s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("json_cursor");
    TCase *tc = tcase_create("json_cursor");
    tcase_add_test(tc, integers_as_printf);
    tcase_add_test(tc, escapes_by_hand);
    tcase_add_test(tc, escapes_word_at_a_time_alike);
    tcase_add_test(tc, micros_from_nanoseconds);
    tcase_add_test(tc, pieces_escaped_and_copied_whole);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
