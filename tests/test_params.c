/* test_params.c: declared, typed model parameters (defaults, kv text, errors, help). */
#include <signal.h>
#include <string.h>
#include "testutil.h"
#include "core/error.h"
#include "core/params.h"

static const char *const rounding_choices[] = {"none", "pow2", "512", NULL};

/* A model table like an allocator's. */
static const strata_param_def demo_defs[] = {
    {"max_split_size", STRATA_PARAM_SIZE, "0", "largest block that may be split", NULL},
    {"fraction", STRATA_PARAM_DOUBLE, "0.75", "share of capacity to reserve", NULL},
    {"streams", STRATA_PARAM_INT, "-2", "number of streams", NULL},
    {"garbage", STRATA_PARAM_BOOL, "false", "collect garbage", NULL},
    {"rounding", STRATA_PARAM_STRING, "none", "size rounding", rounding_choices},
    {"label", STRATA_PARAM_STRING, NULL, "free text", NULL},
    {"delay", STRATA_PARAM_TIME, "3us", "issue delay", NULL},
    {NULL, 0, NULL, NULL, NULL},
};

static void new_fails(const char *kv, const char *needle)
{
    GError *err = NULL;
    strata_params *p = strata_params_new("demo", demo_defs, kv, &err);
    ck_assert_msg(p == NULL, "'%s' should fail", kv);
    ck_assert_int_eq(err->domain, STRATA_ERROR);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_msg(strstr(err->message, needle), "message '%s' lacks '%s'", err->message, needle);
    g_error_free(err);
}

START_TEST(defaults)
{
    GError *err = NULL;
    strata_params *p = strata_params_new("demo", demo_defs, NULL, &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(strata_params_size(p, "max_split_size"), 0);
    ck_assert(strata_params_double(p, "fraction") == 0.75);
    ck_assert_int_eq(strata_params_int(p, "streams"), -2);
    ck_assert(!strata_params_bool(p, "garbage"));
    ck_assert_str_eq(strata_params_string(p, "rounding"), "none");
    ck_assert_ptr_null(strata_params_string(p, "label"));
    ck_assert(!strata_params_is_set(p, "label"));
    ck_assert(strata_params_is_set(p, "rounding"));
    ck_assert(strata_params_time(p, "delay") == 3e-6);
    char *s = strata_params_to_string(p);
    ck_assert_str_eq(s, "max_split_size=0,fraction=0.75,streams=-2,garbage=false,rounding=none,delay=3us");
    g_free(s);
    strata_params_free(p);

    p = strata_params_new("demo", demo_defs, "", &err);
    ck_assert_ptr_nonnull(p);
    strata_params_free(p);
}
END_TEST

START_TEST(values_from_text)
{
    GError *err = NULL;
    strata_params *p = strata_params_new(
        "demo", demo_defs,
        "max_split_size=200MiB, fraction = 0.5,streams=7,garbage=yes,rounding=pow2,label=hello,delay=250ns",
        &err);
    ck_assert_msg(p != NULL, "%s", err ? err->message : "");
    ck_assert_uint_eq(strata_params_size(p, "max_split_size"), 200ULL << 20);
    ck_assert(strata_params_double(p, "fraction") == 0.5);
    ck_assert_int_eq(strata_params_int(p, "streams"), 7);
    ck_assert(strata_params_bool(p, "garbage"));
    ck_assert_str_eq(strata_params_string(p, "rounding"), "pow2");
    ck_assert_str_eq(strata_params_string(p, "label"), "hello");
    ck_assert(strata_params_time(p, "delay") == 250e-9);

    /* to_string reads back to the same values */
    char *s = strata_params_to_string(p);
    strata_params *q = strata_params_new("demo", demo_defs, s, &err);
    ck_assert_ptr_nonnull(q);
    char *s2 = strata_params_to_string(q);
    ck_assert_str_eq(s, s2);
    ck_assert_uint_eq(strata_params_size(q, "max_split_size"), 200ULL << 20);
    g_free(s);
    g_free(s2);
    strata_params_free(q);

    /* copy is deep and independent */
    strata_params *c = strata_params_copy(p);
    ck_assert(strata_params_set(p, "label", "changed", &err));
    ck_assert_str_eq(strata_params_string(c, "label"), "hello");
    ck_assert_str_eq(strata_params_string(p, "label"), "changed");
    strata_params_free(c);

    /* set validates and leaves the old value on failure */
    ck_assert(!strata_params_set(p, "streams", "seven", &err));
    ck_assert_ptr_nonnull(strstr(err->message, "demo: streams: expected an integer, got 'seven'"));
    g_clear_error(&err);
    ck_assert_int_eq(strata_params_int(p, "streams"), 7);
    ck_assert(strata_params_set(p, "garbage", "0", &err));
    ck_assert(!strata_params_bool(p, "garbage"));
    ck_assert(strata_params_set(p, "garbage", "TRUE", &err));
    ck_assert(strata_params_bool(p, "garbage"));
    strata_params_free(p);
}
END_TEST

START_TEST(bad_values)
{
    new_fails("colour=red", "demo: unknown parameter 'colour' (known: max_split_size, fraction, "
                            "streams, garbage, rounding, label, delay)");
    new_fails("max_split_size=12XB", "demo: max_split_size: expected a size");
    new_fails("max_split_size=12XB", "got '12XB'");
    new_fails("max_split_size=-1", "got '-1'");
    new_fails("fraction=half", "demo: fraction: expected a number");
    new_fails("fraction=1e999", "demo: fraction");
    new_fails("fraction=", "demo: fraction");
    new_fails("streams=1.5", "demo: streams: expected an integer, got '1.5'");
    new_fails("streams=99999999999999999999", "demo: streams");
    new_fails("garbage=maybe", "demo: garbage: expected true, false");
    new_fails("rounding=pow3", "demo: rounding: expected one of none, pow2, 512, got 'pow3'");
    new_fails("delay=5", "demo: delay: expected a time");
    new_fails("streams", "demo: expected KEY=VALUE, got 'streams'");
    new_fails("=3", "expected KEY=VALUE");
    new_fails("streams=1,,fraction=2", "expected KEY=VALUE, got ''");
}
END_TEST

START_TEST(no_parameters)
{
    static const strata_param_def none[] = {{NULL, 0, NULL, NULL, NULL}};
    GError *err = NULL;
    strata_params *p = strata_params_new("bump", none, NULL, &err);
    ck_assert_ptr_nonnull(p);
    char *s = strata_params_to_string(p);
    ck_assert_str_eq(s, "");
    g_free(s);
    ck_assert(!strata_params_set(p, "x", "1", &err));
    ck_assert_ptr_nonnull(strstr(err->message, "bump: unknown parameter 'x'"));
    g_clear_error(&err);
    strata_params_free(p);
    char *d = strata_params_describe(none, "  ");
    ck_assert_str_eq(d, "  (no parameters)\n");
    g_free(d);
}
END_TEST

START_TEST(bad_default_is_internal)
{
    static const strata_param_def broken[] = {
        {"size", STRATA_PARAM_SIZE, "lots", "a bug in the table", NULL},
        {NULL, 0, NULL, NULL, NULL},
    };
    GError *err = NULL;
    ck_assert_ptr_null(strata_params_new("broken", broken, NULL, &err));
    ck_assert_int_eq(err->code, STRATA_ERROR_INTERNAL);
    g_error_free(err);
}
END_TEST

START_TEST(describe)
{
    char *d = strata_params_describe(demo_defs, "  ");
    ck_assert_ptr_nonnull(strstr(d, "  max_split_size (size, default 0): largest block that may be split\n"));
    ck_assert_ptr_nonnull(strstr(d, "  rounding (text, default none): size rounding (one of none, pow2, 512)\n"));
    ck_assert_ptr_nonnull(strstr(d, "  label (text, unset by default): free text\n"));
    ck_assert_ptr_nonnull(strstr(d, "  delay (time, default 3us): issue delay\n"));
    /* one line per parameter */
    unsigned lines = 0;
    for (const char *c = d; *c; c++)
        lines += *c == '\n';
    ck_assert_uint_eq(lines, 7);
    g_free(d);
}
END_TEST

START_TEST(split_spec)
{
    char *name, *kv;
    strata_split_spec("caching:max_split_size=200MiB,garbage=true", &name, &kv);
    ck_assert_str_eq(name, "caching");
    ck_assert_str_eq(kv, "max_split_size=200MiB,garbage=true");
    g_free(name);
    g_free(kv);
    strata_split_spec("best-fit", &name, &kv);
    ck_assert_str_eq(name, "best-fit");
    ck_assert_ptr_null(kv);
    g_free(name);
    strata_split_spec("bfc:", &name, &kv);
    ck_assert_str_eq(name, "bfc");
    ck_assert_ptr_null(kv);
    g_free(name);
}
END_TEST

START_TEST(wrong_type_aborts)
{
    strata_params *p = strata_params_new("demo", demo_defs, NULL, NULL);
    (void)strata_params_int(p, "fraction"); /* a bug in the model: aborts */
}
END_TEST

START_TEST(undeclared_aborts)
{
    strata_params *p = strata_params_new("demo", demo_defs, NULL, NULL);
    (void)strata_params_size(p, "nope");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("params");
    TCase *tc = tcase_create("params");
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, values_from_text);
    tcase_add_test(tc, bad_values);
    tcase_add_test(tc, no_parameters);
    tcase_add_test(tc, bad_default_is_internal);
    tcase_add_test(tc, describe);
    tcase_add_test(tc, split_spec);
    tcase_add_test_raise_signal(tc, wrong_type_aborts, SIGTRAP);
    tcase_add_test_raise_signal(tc, undeclared_aborts, SIGTRAP);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
