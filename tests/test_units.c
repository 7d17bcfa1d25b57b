/* test_units.c: parsing and printing of sizes, bandwidths, times, flop rates and flops. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "core/error.h"
#include "core/units.h"
#include "time_text_trial.h"

static uint64_t size_ok(const char *text)
{
    uint64_t v = 0;
    GError *err = NULL;
    bool ok = strata_parse_size(text, &v, &err);
    ck_assert_msg(ok, "'%s' should parse: %s", text, err ? err->message : "");
    return v;
}

/* The parse fails with an input error whose message contains `needle`. */
static void size_fails(const char *text, const char *needle)
{
    uint64_t v = 12345;
    GError *err = NULL;
    ck_assert_msg(!strata_parse_size(text, &v, &err), "'%s' should fail", text);
    ck_assert_ptr_nonnull(err);
    ck_assert_int_eq(err->domain, STRATA_ERROR);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_msg(strstr(err->message, needle), "message '%s' lacks '%s'", err->message, needle);
    ck_assert_uint_eq(v, 12345); /* untouched */
    g_error_free(err);
}

START_TEST(sizes_every_unit)
{
    ck_assert_uint_eq(size_ok("0"), 0);
    ck_assert_uint_eq(size_ok("4096"), 4096);
    ck_assert_uint_eq(size_ok("4096B"), 4096);
    ck_assert_uint_eq(size_ok("4096 B"), 4096);
    ck_assert_uint_eq(size_ok("64KB"), 64000);
    ck_assert_uint_eq(size_ok("64KiB"), 65536);
    ck_assert_uint_eq(size_ok("2MB"), 2000000);
    ck_assert_uint_eq(size_ok("2MiB"), 2097152);
    ck_assert_uint_eq(size_ok("3GB"), 3000000000ULL);
    ck_assert_uint_eq(size_ok("1.5GiB"), 1610612736ULL);
    ck_assert_uint_eq(size_ok("1 TB"), 1000000000000ULL);
    ck_assert_uint_eq(size_ok("1TiB"), 1099511627776ULL);
    ck_assert_uint_eq(size_ok("2PB"), 2000000000000000ULL);
    ck_assert_uint_eq(size_ok("1PiB"), 1125899906842624ULL);
    ck_assert_uint_eq(size_ok("0x1000"), 4096);
    ck_assert_uint_eq(size_ok("1e9"), 1000000000ULL);
    ck_assert_uint_eq(size_ok("18446744073709551615"), UINT64_MAX);
    ck_assert_uint_eq(size_ok("16383PiB"), 16383ULL << 50);
    /* the units the hardware loader's range messages quote ("1 B to 1 EiB") */
    ck_assert_uint_eq(size_ok("1 EiB"), 1ULL << 60);
    ck_assert_uint_eq(size_ok("15EiB"), 15ULL << 60);
    ck_assert_uint_eq(size_ok("1EB"), 1000000000000000000ULL);
    ck_assert_uint_eq(size_ok("64kB"), 64000);
    /* fractions of larger units round to the nearest byte: 1.3 * 1024 = 1331.2 */
    ck_assert_uint_eq(size_ok("1.3KiB"), 1331);
    ck_assert_uint_eq(size_ok("0.5KB"), 500);
}
END_TEST

START_TEST(sizes_bad)
{
    size_fails("", "got ''");
    size_fails("12XB", "got '12XB'");
    size_fails("1.5B", "'1.5B'");
    size_fails("1.5", "'1.5'");
    size_fails("-3", "got '-3'");
    size_fails("-3KiB", "got '-3KiB'");
    size_fails("+3", "got '+3'");
    size_fails("20000000TiB", "'20000000TiB' does not fit in 64 bits");
    size_fails("18446744073709551616", "does not fit in 64 bits");
    size_fails("16384PiB", "does not fit in 64 bits"); /* 2^64 exactly */
    size_fails("16EiB", "does not fit in 64 bits");    /* 2^64 again */
    size_fails("19EB", "does not fit in 64 bits");     /* 1.9e19 > 2^64 - 1 = 1.8e19 */
    size_fails("1e30", "does not fit in 64 bits");
    size_fails("1e400", "does not fit in 64 bits");
    size_fails("4096  B", "got '4096  B'");  /* at most one space */
    size_fails("4096 ", "got '4096 '");
    size_fails(" 4096", "got ' 4096'");
    size_fails("4kib", "got '4kib'");        /* unit case as documented */
    size_fails("KiB", "got 'KiB'");
    size_fails(".", "got '.'");
    size_fails("inf", "got 'inf'");
    size_fails("nan", "got 'nan'");
    size_fails("1GiB/s", "got '1GiB/s'");
    size_fails("0x", "0x");
    size_fails("0x1g", "0x1g");
    size_fails("0x10000000000000000", "does not fit in 64 bits");
    GError *err = NULL;
    uint64_t v;
    ck_assert(!strata_parse_size(NULL, &v, &err));
    g_clear_error(&err);
    /* a capacity of 0 meant the 80 GiB default to --fidelity: refused */
    ck_assert(!strata_parse_size_above_zero("0", &v, &err));
    ck_assert_str_eq(err->message, "expected a size above 0, got '0'");
    g_clear_error(&err);
    ck_assert(strata_parse_size_above_zero("1", &v, &err) && v == 1);
}
END_TEST

START_TEST(u64_plain)
{
    uint64_t v = 0;
    GError *err = NULL;
    ck_assert(strata_parse_u64("0", &v, NULL) && v == 0);
    ck_assert(strata_parse_u64("42", &v, NULL) && v == 42);
    ck_assert(strata_parse_u64("0x7f000000", &v, NULL) && v == 0x7f000000ULL);
    ck_assert(strata_parse_u64("0XFFFFFFFFFFFFFFFF", &v, NULL) && v == UINT64_MAX);
    ck_assert(strata_parse_u64("18446744073709551615", &v, NULL) && v == UINT64_MAX);
    /* 19 digits, the most read without GLib; 22 with leading zeros, through it */
    ck_assert(strata_parse_u64("9999999999999999999", &v, NULL) && v == 9999999999999999999ULL);
    ck_assert(strata_parse_u64("0000000000000000000042", &v, NULL) && v == 42);
    ck_assert(strata_parse_u64("007", &v, NULL) && v == 7);
    ck_assert(!strata_parse_u64("12a", &v, NULL));
    ck_assert(!strata_parse_u64("12 ", &v, NULL));
    ck_assert(!strata_parse_u64("18446744073709551616", &v, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "does not fit in 64 bits"));
    g_clear_error(&err);
    ck_assert(!strata_parse_u64("-1", &v, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "'-1'"));
    g_clear_error(&err);
    ck_assert(!strata_parse_u64("+1", &v, NULL));
    ck_assert(!strata_parse_u64("1KiB", &v, NULL));
    ck_assert(!strata_parse_u64("", &v, NULL));
    ck_assert(!strata_parse_u64("0x", &v, NULL));
}
END_TEST

static double real_ok(bool (*parse)(const char *, double *, GError **), const char *text)
{
    double v = -1;
    GError *err = NULL;
    bool ok = parse(text, &v, &err);
    ck_assert_msg(ok, "'%s' should parse: %s", text, err ? err->message : "");
    return v;
}

static void real_fails(bool (*parse)(const char *, double *, GError **), const char *text,
                       const char *needle)
{
    double v = -1;
    GError *err = NULL;
    ck_assert_msg(!parse(text, &v, &err), "'%s' should fail", text);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_msg(strstr(err->message, needle), "message '%s' lacks '%s'", err->message, needle);
    ck_assert(v == -1);
    g_error_free(err);
}

/* The one boolean rule (units.h): true, false, yes, no, 1, 0 in any case;
 * nothing else, and a refusal leaves the value alone. */
START_TEST(booleans)
{
    static const char *const yes[] = {"true", "TRUE", "True", "yes", "YES", "1"};
    static const char *const no[] = {"false", "False", "no", "NO", "0"};
    static const char *const bad[] = {"", "maybe", "2", "on", "off", "t", "01", " true", "true "};
    for (size_t i = 0; i < G_N_ELEMENTS(yes); i++) {
        bool v = false;
        ck_assert_msg(strata_parse_bool(yes[i], &v) && v, "%s", yes[i]);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(no); i++) {
        bool v = true;
        ck_assert_msg(strata_parse_bool(no[i], &v) && !v, "%s", no[i]);
    }
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        bool v = true;
        ck_assert_msg(!strata_parse_bool(bad[i], &v) && v, "'%s'", bad[i]);
    }
    bool v = true;
    ck_assert(!strata_parse_bool(NULL, &v) && v);
}
END_TEST

START_TEST(bandwidths)
{
    ck_assert(real_ok(strata_parse_bandwidth, "16GB/s") == 16e9);
    ck_assert(real_ok(strata_parse_bandwidth, "16 GB/s") == 16e9);
    ck_assert(real_ok(strata_parse_bandwidth, "819 GB/s") == 819e9);
    ck_assert(real_ok(strata_parse_bandwidth, "900GiB/s") == 900.0 * 1073741824.0);
    ck_assert(real_ok(strata_parse_bandwidth, "1e9B/s") == 1e9);
    ck_assert(real_ok(strata_parse_bandwidth, "5B/s") == 5);
    ck_assert(real_ok(strata_parse_bandwidth, "1KB/s") == 1e3);
    ck_assert(real_ok(strata_parse_bandwidth, "1KiB/s") == 1024);
    ck_assert(real_ok(strata_parse_bandwidth, "2MB/s") == 2e6);
    ck_assert(real_ok(strata_parse_bandwidth, "2MiB/s") == 2097152);
    ck_assert(real_ok(strata_parse_bandwidth, "3.35TB/s") == 3.35e12);
    ck_assert(real_ok(strata_parse_bandwidth, "1TiB/s") == 1099511627776.0);
    ck_assert(real_ok(strata_parse_bandwidth, "0") == 0);
    /* "1 kB/s to 10 PB/s", the range the hardware loader quotes */
    ck_assert(real_ok(strata_parse_bandwidth, "1 kB/s") == 1e3);
    ck_assert(real_ok(strata_parse_bandwidth, "10 PB/s") == 1e16);
    ck_assert(real_ok(strata_parse_bandwidth, "1PiB/s") == 1125899906842624.0);
    real_fails(strata_parse_bandwidth, "16", "got '16'"); /* a unit is required */
    real_fails(strata_parse_bandwidth, "16GB", "got '16GB'");
    real_fails(strata_parse_bandwidth, "16Gbps", "got '16Gbps'");
    real_fails(strata_parse_bandwidth, "-16GB/s", "got '-16GB/s'");
    real_fails(strata_parse_bandwidth, "", "got ''");
    real_fails(strata_parse_bandwidth, "1e400GB/s", "too large");
}
END_TEST

START_TEST(times)
{
    ck_assert(real_ok(strata_parse_time, "250ns") == 250 / 1e9);
    ck_assert(real_ok(strata_parse_time, "250ns") == 2.5e-7);
    ck_assert(real_ok(strata_parse_time, "3us") == 3e-6);
    ck_assert(real_ok(strata_parse_time, "2ms") == 2e-3);
    ck_assert(real_ok(strata_parse_time, "1.5s") == 1.5);
    ck_assert(real_ok(strata_parse_time, "1.5 s") == 1.5);
    ck_assert(real_ok(strata_parse_time, "0") == 0);
    ck_assert(real_ok(strata_parse_time, "0.0") == 0);
    ck_assert(real_ok(strata_parse_time, "0s") == 0);
    real_fails(strata_parse_time, "5", "got '5'"); /* bare numbers only for 0 */
    real_fails(strata_parse_time, "-1us", "got '-1us'");
    real_fails(strata_parse_time, "3 sec", "got '3 sec'");
    real_fails(strata_parse_time, "3min", "got '3min'");
    real_fails(strata_parse_time, "", "got ''");
    real_fails(strata_parse_time, "1e999s", "too large");
}
END_TEST

START_TEST(flop_rates_and_flops)
{
    ck_assert(real_ok(strata_parse_flop_rate, "197TFLOP/s") == 197e12);
    ck_assert(real_ok(strata_parse_flop_rate, "918 TFLOP/s") == 918e12);
    ck_assert(real_ok(strata_parse_flop_rate, "1.2PFLOP/s") == 1.2e15);
    ck_assert(real_ok(strata_parse_flop_rate, "4e12FLOP/s") == 4e12);
    ck_assert(real_ok(strata_parse_flop_rate, "5GFLOP/s") == 5e9);
    ck_assert(real_ok(strata_parse_flop_rate, "5MFLOP/s") == 5e6);
    ck_assert(real_ok(strata_parse_flop_rate, "5KFLOP/s") == 5e3);
    real_fails(strata_parse_flop_rate, "197TFLOPS", "got '197TFLOPS'");
    real_fails(strata_parse_flop_rate, "197", "got '197'");
    real_fails(strata_parse_flop_rate, "-1TFLOP/s", "got '-1TFLOP/s'");

    ck_assert(real_ok(strata_parse_frequency, "1830MHz") == 1830e6);
    ck_assert(real_ok(strata_parse_frequency, "1.83GHz") == 1.83e9);
    ck_assert(real_ok(strata_parse_frequency, "1455 MHz") == 1455e6);
    ck_assert(real_ok(strata_parse_frequency, "5kHz") == 5e3);
    real_fails(strata_parse_frequency, "1830", "got '1830'");
    real_fails(strata_parse_frequency, "1830mhz", "got '1830mhz'");

    ck_assert(real_ok(strata_parse_flops, "1000000") == 1e6);
    ck_assert(real_ok(strata_parse_flops, "2e9") == 2e9);
    ck_assert(real_ok(strata_parse_flops, "4.5GFLOP") == 4.5e9);
    ck_assert(real_ok(strata_parse_flops, "3TFLOP") == 3e12);
    ck_assert(real_ok(strata_parse_flops, "7FLOP") == 7);
    real_fails(strata_parse_flops, "3TFLOP/s", "got '3TFLOP/s'");
    real_fails(strata_parse_flops, "-2", "got '-2'");
    real_fails(strata_parse_flops, "x", "got 'x'");
}
END_TEST

/* Every number parses to the double strtod gives for its text, whether the
 * exact fast path (significand of at most 53 bits, power of ten within 22)
 * or strtod itself converts it: integers, fractions and exponents of every
 * length on both sides of those limits. */
START_TEST(numbers_as_strtod)
{
    static const char *const fixed[] = {
        "0", "0.0", "00012", "1.", ".5", "9007199254740992", "9007199254740993", "9007199254740991.5",
        "123456789012345678901234567890", "1e22", "1e23", "1e-22", "1e-23", "4.35e22", "0.1", "0.3",
        "2.2250738585072014e-308", "1.7976931348623157e308", "0e999999", "5e-324", "3.0000000000000000001",
        "1e+5", "1E5", "2.5e-3",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++)
        ck_assert_msg(real_ok(strata_parse_flops, fixed[i]) == g_ascii_strtod(fixed[i], NULL), "%s", fixed[i]);
    GRand *rand = g_rand_new_with_seed(5);
    for (int i = 0; i < 20000; i++) {
        GString *t = g_string_new(NULL);
        int whole = g_rand_int_range(rand, 0, 20), frac = g_rand_int_range(rand, -1, 20);
        for (int d = 0; d < whole; d++)
            g_string_append_c(t, (char)('0' + g_rand_int_range(rand, 0, 10)));
        if (frac >= 0 || whole == 0) {
            g_string_append_c(t, '.');
            for (int d = 0; d < MAX(frac, 1); d++)
                g_string_append_c(t, (char)('0' + g_rand_int_range(rand, 0, 10)));
        }
        if (g_rand_boolean(rand))
            g_string_append_printf(t, "e%s%d", g_rand_boolean(rand) ? "-" : (g_rand_boolean(rand) ? "+" : ""),
                                   g_rand_int_range(rand, 0, 40));
        ck_assert_msg(real_ok(strata_parse_flops, t->str) == g_ascii_strtod(t->str, NULL), "%s", t->str);
        g_string_free(t, TRUE);
    }
    g_rand_free(rand);
}
END_TEST

/* A bare amount of work is read in one pass (units.c's bare_exact) where
 * exact: every text it does not take whole falls to the general reader,
 * which keeps its refusals and their message. By hand: 1e9 = 10^9 and
 * 2.5e3 = 2500 exactly (significands 1 and 25, powers 9 and 2); 1.5 = 3/2;
 * 0e5 = 0. */
START_TEST(flops_one_pass_keeps_values_and_refusals)
{
    ck_assert(real_ok(strata_parse_flops, "1e9") == 1000000000.0);
    ck_assert(real_ok(strata_parse_flops, "2.5e3") == 2500.0);
    ck_assert(real_ok(strata_parse_flops, "1.5") == 1.5);
    ck_assert(real_ok(strata_parse_flops, "0e5") == 0.0);
    static const char *const refused[] = {"1e", "1e+", "1e-", ".", "e5", "1e5x", "1 ", "1..5", "1e5.", "+1", ""};
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
        char *needle = g_strdup_printf("got '%s'", refused[i]);
        real_fails(strata_parse_flops, refused[i], needle);
        g_free(needle);
    }
}
END_TEST

START_TEST(format_human)
{
    char *s;
    s = strata_format_size(512);
    ck_assert_str_eq(s, "512 B");
    g_free(s);
    s = strata_format_size(1610612736ULL);
    ck_assert_str_eq(s, "1.50 GiB");
    g_free(s);
    s = strata_format_size(65536);
    ck_assert_str_eq(s, "64.00 KiB");
    g_free(s);
    s = strata_format_time(0.067108864);
    ck_assert_str_eq(s, "67.109 ms");
    g_free(s);
    s = strata_format_time(1e-6);
    ck_assert_str_eq(s, "1.000 us");
    g_free(s);
    s = strata_format_time(2.5e-7);
    ck_assert_str_eq(s, "250.000 ns");
    g_free(s);
    s = strata_format_time(3.5);
    ck_assert_str_eq(s, "3.500 s");
    g_free(s);
    s = strata_format_bandwidth(16e9);
    ck_assert_str_eq(s, "16.00 GB/s");
    g_free(s);
    s = strata_format_bandwidth(3.35e12);
    ck_assert_str_eq(s, "3.35 TB/s");
    g_free(s);
    s = strata_format_flop_rate(197e12);
    ck_assert_str_eq(s, "197.0 TFLOP/s");
    g_free(s);
    /* Values too large for fixed notation print with an exponent: 1e35 s
     * once printed as a number cut short (a factor 100 off). */
    static const struct {
        char *(*format)(double);
        double value;
        const char *text;
    } large[] = {
        {strata_format_time, 1e35, "1.000e+35 s"},
        {strata_format_time, 123456.5, "123456.500 s"},
        {strata_format_bandwidth, 2e40, "2.000e+25 PB/s"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(large); i++) {
        s = large[i].format(large[i].value);
        ck_assert_str_eq(s, large[i].text);
        g_free(s);
    }
}
END_TEST

/* strata_format_u64 writes the digits printf writes, at every length. */
/* Two bandwidths print with decimals enough to differ where they differ: 25e9 and 25e9 + 100 B/s (25.0000001 GB/s)
 * read alike to 6 decimals of GB/s and apart at the 7th; 16 and 16.5 GB/s, already apart, keep the 2 decimals;
 * equal ones too (no loop past them). */
START_TEST(format_bandwidth_pair_reads_apart)
{
    char *a, *b;
    strata_format_bandwidth_pair(25e9, 25e9 + 100, &a, &b);
    ck_assert_str_eq(a, "25.0000000 GB/s");
    ck_assert_str_eq(b, "25.0000001 GB/s");
    g_free(a);
    g_free(b);
    strata_format_bandwidth_pair(16e9, 16.5e9, &a, &b);
    ck_assert_str_eq(a, "16.00 GB/s");
    ck_assert_str_eq(b, "16.50 GB/s");
    g_free(a);
    g_free(b);
    strata_format_bandwidth_pair(50e9, 50e9, &a, &b);
    ck_assert_str_eq(a, "50.00 GB/s");
    ck_assert_str_eq(b, "50.00 GB/s");
    g_free(a);
    g_free(b);
}
END_TEST

START_TEST(format_u64_digits)
{
    const uint64_t values[] = {0, 7, 10, 99, 100, 101, 12345, 999999, 1000000, 4294967296ULL, UINT64_MAX};
    for (size_t i = 0; i < G_N_ELEMENTS(values); i++) {
        char got[STRATA_U64_DIGITS + 1];
        got[strata_format_u64(got, values[i])] = '\0';
        char *want = g_strdup_printf("%" G_GUINT64_FORMAT, values[i]);
        ck_assert_str_eq(got, want);
        g_free(want);
    }
    for (uint64_t v = 1; v < UINT64_MAX / 3; v = v * 3 + 1) {
        char got[STRATA_U64_DIGITS + 1];
        got[strata_format_u64(got, v)] = '\0';
        ck_assert_uint_eq(g_ascii_strtoull(got, NULL, 10), v);
    }
    /* Around every power of ten, where the digit count changes. */
    for (uint64_t p = 10; p <= 10000000000000000000ULL; p *= 10) {
        for (uint64_t v = p - 1; v <= p + 1; v++) {
            char got[STRATA_U64_DIGITS + 1], want[32];
            got[strata_format_u64(got, v)] = '\0';
            g_snprintf(want, sizeof want, "%" G_GUINT64_FORMAT, v);
            ck_assert_str_eq(got, want);
        }
        if (p > UINT64_MAX / 10)
            break;
    }
}
END_TEST

START_TEST(format_size_exact_round_trips)
{
    static const struct {
        uint64_t bytes;
        const char *text;
    } cases[] = {
        {0, "0"},           {1000, "1000"},         {4096, "4KiB"},
        {65536, "64KiB"},   {1610612736ULL, "1536MiB"}, {1ULL << 30, "1GiB"},
        {16ULL << 30, "16GiB"}, {1ULL << 40, "1TiB"}, {3ULL << 50, "3PiB"},
        {UINT64_MAX, "18446744073709551615"}, {1ULL << 63, "8192PiB"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *s = strata_format_size_exact(cases[i].bytes);
        ck_assert_str_eq(s, cases[i].text);
        ck_assert_uint_eq(size_ok(s), cases[i].bytes);
        g_free(s);
    }
    /* every value of a pseudo-random walk round-trips */
    GRand *rand = g_rand_new_with_seed(7);
    for (int i = 0; i < 2000; i++) {
        uint64_t v = ((uint64_t)g_rand_int(rand) << 32 | g_rand_int(rand)) >> g_rand_int_range(rand, 0, 64);
        if (i % 3 == 0)
            v &= ~(uint64_t)0xfffff; /* many exact binary multiples */
        char *s = strata_format_size_exact(v);
        ck_assert_uint_eq(size_ok(s), v);
        g_free(s);
    }
    g_rand_free(rand);
}
END_TEST

START_TEST(format_time_exact_round_trips)
{
    static const struct {
        double seconds;
        const char *text;
    } cases[] = {
        {0, "0"}, {250e-9, "250ns"}, {3e-6, "3us"}, {2e-3, "2ms"}, {1.5, "1.5s"},
        {0.067108864, "67108864ns"}, {0.0671, "0.0671s"}, {1e-9, "1ns"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *s = strata_format_time_exact(cases[i].seconds);
        ck_assert_str_eq(s, cases[i].text);
        ck_assert(real_ok(strata_parse_time, s) == cases[i].seconds);
        g_free(s);
    }
    GRand *rand = g_rand_new_with_seed(11);
    for (int i = 0; i < 500; i++) {
        double v = g_rand_double(rand) * pow(10, g_rand_int_range(rand, -12, 4));
        char *s = strata_format_time_exact(v);
        ck_assert_msg(real_ok(strata_parse_time, s) == v, "%.17g printed as %s", v, s);
        g_free(s);
    }
    g_rand_free(rand);
}
END_TEST

/* Issue 46: the trace writer's times are formatted from one printf of
 * digits a unit, no longer by a printf and a parse per digit count (68 a
 * time: most of a 1M-op jax-profile import's time; bench_import_jax has
 * the figure). The text must stay the one the definition gives, for every
 * kind of double: decimal fractions of a second (what generators write),
 * sums of microsecond timestamps (what importers write: 120.30399999999999
 * us), exact ties (2.5, 0.125), subnormals, values that overflow in ns, a
 * power of ten's neighbours. */
START_TEST(format_time_exact_is_its_definition)
{
    GRand *rand = g_rand_new_with_seed(46);
    double ts = 116.393;
    for (int i = 0; i < 6000; i++) {
        double v;
        switch (i % 6) {
        case 0: v = g_rand_double(rand) * pow(10, g_rand_int_range(rand, -13, 9)); break;
        case 1: v = (double)g_rand_int_range(rand, 1, 1000000) / pow(10, g_rand_int_range(rand, 0, 13)); break;
        case 2: ts += g_rand_int_range(rand, 1000, 20000) / 1000.0; v = (ts - 116.393) * 1e-6; break;
        case 3: v = ldexp((double)g_rand_int_range(rand, 1, 1 << 20), g_rand_int_range(rand, -60, 20)); break;
        case 4: v = nextafter(pow(10, g_rand_int_range(rand, -12, 9)), i % 12 < 6 ? 0 : INFINITY); break;
        default: v = ldexp(g_rand_double(rand) + 0.5, g_rand_int_range(rand, -1074, -1000)); break;
        }
        char *want = bench_time_text_by_trial(v), *got = strata_format_time_exact(v);
        ck_assert_msg(want && strcmp(want, got) == 0, "%.17g: %s, by definition %s", v, got, want ? want : "none");
        g_free(want);
        g_free(got);
    }
    g_rand_free(rand);
    const double edges[] = {DBL_MAX, 1e300, 1.7976931348623157e+299, DBL_MIN, DBL_TRUE_MIN, 2.5, 0.125, 9.5e-7,
                            999.99999999999989, 1e-9, 0.99999999999999989};
    for (size_t i = 0; i < G_N_ELEMENTS(edges); i++) {
        char *want = bench_time_text_by_trial(edges[i]), *got = strata_format_time_exact(edges[i]);
        ck_assert_msg(want && strcmp(want, got) == 0, "%.17g: %s, by definition %s", edges[i], got, want ? want : "none");
        g_free(want);
        g_free(got);
    }
}
END_TEST

/* strata_decimal_mantissa_nonzero: a 1-9 digit before the exponent, within len. 1e-400's significand is 1 (lost
 * when strtod gives 0); 0e-400's and 0.000's are zeros; "5" past len (the 2 bytes "0.") is not read; "2E5"'s 2. */
START_TEST(mantissa_nonzero_rule)
{
    ck_assert(strata_decimal_mantissa_nonzero("1e-400", 6));
    ck_assert(!strata_decimal_mantissa_nonzero("0e-400", 6));
    ck_assert(!strata_decimal_mantissa_nonzero("0.000", 5));
    ck_assert(!strata_decimal_mantissa_nonzero("0.5", 2));
    ck_assert(strata_decimal_mantissa_nonzero("0.5", 3));
    ck_assert(strata_decimal_mantissa_nonzero("2E5", 3));
    ck_assert(!strata_decimal_mantissa_nonzero("0E9", 3));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("units");
    TCase *tc = tcase_create("units");
    tcase_add_test(tc, sizes_every_unit);
    tcase_add_test(tc, sizes_bad);
    tcase_add_test(tc, u64_plain);
    tcase_add_test(tc, booleans);
    tcase_add_test(tc, bandwidths);
    tcase_add_test(tc, times);
    tcase_add_test(tc, flop_rates_and_flops);
    tcase_add_test(tc, numbers_as_strtod);
    tcase_add_test(tc, flops_one_pass_keeps_values_and_refusals);
    tcase_add_test(tc, format_human);
    tcase_add_test(tc, format_u64_digits);
    tcase_add_test(tc, format_bandwidth_pair_reads_apart);
    tcase_add_test(tc, format_size_exact_round_trips);
    tcase_add_test(tc, format_time_exact_round_trips);
    tcase_add_test(tc, format_time_exact_is_its_definition);
    tcase_add_test(tc, mantissa_nonzero_rule);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
