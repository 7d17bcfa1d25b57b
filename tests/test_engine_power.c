/*
 * test_engine_power.c: the power limit's clock (sim/engine/engine_power.h)
 * with values derived by hand.
 *
 * The unit: 1 TFLOP/s quoted at 1 GHz, held at 800 MHz under continuous
 * matrix work, the peak while its filtered matrix activity is at most 0.5,
 * filtered over 0.1 s; HBM at 1 TB/s. So a compute that starts after the
 * unit has been fully busy for T seconds from idle runs at
 *   d = 1 - e^(-T / 0.1),  clock / peak = 1 - min(1, (d - 0.5) / 0.5) x 0.2
 * (1 where d <= 0.5).
 */
#include <math.h>
#include <glib/gstdio.h>
#include <string.h>
#include "testutil.h"
#include "engine/engine_power.h"
#include "hw/hw.h"

static const char *head = "[hardware]\nname = t\n[memory hbm]\nkind = device\ncapacity = 16GiB\nbandwidth = 1TB/s\n"
                          "[compute sm]\nflops = 1TFLOP/s\nmatrix = systolic\nside = 128\n";
static const char *rule = "peak_clock = 1GHz\nsustained_clock = 800MHz\nclock_response = 0.1s\nclock_free_duty = 0.5\n";

static strata_hw *load(const char *keys)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw_text(head, keys, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    return hw;
}

/* The filter and the clock, called as the engine calls them. */
START_TEST(clock_follows_the_filtered_activity)
{
    strata_hw *hw = load(rule);
    ck_assert_double_eq(strata_hw_compute(hw, 0)->kernel.clock_response, 0.1);
    ck_assert_double_eq(strata_hw_compute(hw, 0)->kernel.clock_free_duty, 0.5);
    engine_power *p = engine_power_create(hw, false);
    ck_assert_ptr_nonnull(p);
    /* from idle: the peak; 0.2 s busy: d = 1 - e^-2 = 0.864665, clock 0.854134 */
    ck_assert_double_eq(engine_power_start(p, 0, 1.0, 0.0), 1.0);
    engine_power_end(p, 0, 1.0, 1.0, 0.0, 0.2);
    double d = 1 - exp(-2.0);
    ck_assert_double_eq_tol(engine_power_start(p, 0, 1.0, 0.2), 1 - (d - 0.5) / 0.5 * 0.2, 1e-12);
    ck_assert_double_eq_tol(1 - (d - 0.5) / 0.5 * 0.2, 0.854134, 1e-6);
    engine_power_end(p, 0, 1.0, 0.854134, 0.2, 0.3);
    /* then 0.2 s idle: d = 1 - e^-3 decays by e^-2 to 0.129728: the peak again */
    ck_assert_double_eq(engine_power_start(p, 0, 1.0, 0.5), 1.0);
    /* a second compute beside it: the activity is at most 1; 10 s later d is 1: the sustained clock */
    ck_assert_double_eq(engine_power_start(p, 0, 1.0, 0.5), 1.0);
    ck_assert_double_eq_tol(engine_power_start(p, 0, 1.0, 10.5), 0.8, 1e-12);
    engine_power_free(p);
    /* --clock sustained: 0.8 from the first compute */
    p = engine_power_create(hw, true);
    ck_assert_double_eq_tol(engine_power_start(p, 0, 0.0, 0.0), 0.8, 1e-15);
    engine_power_free(p);
    strata_hw_free(hw);
    /* no clock_response: no rule (the engine does what it did before it); sustained still applies */
    hw = load("peak_clock = 1GHz\nsustained_clock = 800MHz\n");
    ck_assert_ptr_null(engine_power_create(hw, false));
    p = engine_power_create(hw, true);
    ck_assert_ptr_nonnull(p);
    engine_power_free(p);
    strata_hw_free(hw);
    ck_assert_double_eq_tol(engine_power_share(0.02, 0.2), 0.1, 1e-15);
    ck_assert_double_eq(engine_power_share(0.2, 0.02), 1.0);
    ck_assert_double_eq(engine_power_share(0, 0), 0.0);
}
END_TEST

/* strata run's makespan under each --clock (one stream, so back to back),
 * and the unit's clock_mean in *mean (0 where the JSON has none). */
static double makespan_clock(const char *hw, const char *trace, const char *clock, double *mean)
{
    char *dir = strata_test_temp_dir();
    char *json = g_build_filename(dir, "r.json", NULL);
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--clock", clock, "--json", json, "-q",
                                          NULL);
    strata_test_expect(&r, 0, NULL);
    strata_cli_result_clear(&r);
    char *text = NULL;
    ck_assert(g_file_get_contents(json, &text, NULL, NULL));
    const char *at = strstr(text, "\"makespan_s\"");
    ck_assert_ptr_nonnull(at);
    double m = g_ascii_strtod(strchr(at, ':') + 1, NULL);
    at = strstr(text, "\"clock_mean\"");
    *mean = at ? g_ascii_strtod(strchr(at, ':') + 1, NULL) : 0.0;
    g_free(text);
    strata_test_remove_dir(dir);
    g_free(json);
    g_free(dir);
    return m;
}

static double makespan(const char *hw, const char *trace, const char *clock)
{
    double mean;
    return makespan_clock(hw, trace, clock, &mean);
}

/* Two computes back to back, 0.2 and 0.1 TFLOP: at the peak 0.3 s; at the
 * sustained clock 0.375 s; by duty, the second runs at 0.854134 (above):
 * 0.2 + 0.1 / 0.854134 = 0.317078 s. A memory-bound first compute (0.02
 * TFLOP over 200 GB: 0.2 s, matrix share 0.1) lifts the filter only to
 * 0.1 x 0.864665 = 0.0865: the second runs at the peak, 0.3 s in all.
 * The JSON reports the unit's mean clock over its computes' time. */
START_TEST(run_times_computes_at_the_duty_clock)
{
    char *keys = g_strconcat(head, rule, NULL);
    char *hw = strata_test_write_temp("power-XXXXXX.ini", keys);
    char *busy = strata_test_write_temp("power-XXXXXX.trace", "strata-trace 1\ncompute a flops=200GFLOP\n"
                                                               "compute b flops=100GFLOP\n");
    char *memory = strata_test_write_temp("power-XXXXXX.trace", "strata-trace 1\ncompute a flops=20GFLOP bytes=200GB\n"
                                                                 "compute b flops=100GFLOP\n");
    ck_assert_double_eq_tol(makespan(hw, busy, "peak"), 0.3, 1e-9);
    ck_assert_double_eq_tol(makespan(hw, busy, "sustained"), 0.375, 1e-9);
    double d = 1 - exp(-2.0);
    ck_assert_double_eq_tol(makespan(hw, busy, "duty"), 0.2 + 0.1 / (1 - (d - 0.5) / 0.5 * 0.2), 1e-9);
    ck_assert_double_eq_tol(makespan(hw, busy, "duty"), 0.317078, 1e-6);
    /* the JSON's clock_mean: 0.3 s of work at the peak over 0.317078 s: 0.946140; at the peak, 1 */
    double mean;
    makespan_clock(hw, busy, "duty", &mean);
    ck_assert_double_eq_tol(mean, 0.3 / (0.2 + 0.1 / (1 - (d - 0.5) / 0.5 * 0.2)), 1e-6);
    ck_assert_double_eq_tol(mean, 0.946140, 1e-6);
    makespan_clock(hw, busy, "peak", &mean);
    ck_assert_double_eq(mean, 0.0); /* no rule ran: no clock_mean */
    ck_assert_double_eq_tol(makespan(hw, memory, "duty"), 0.3, 1e-9);
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", busy, "--clock", "turbo", NULL);
    strata_test_expect(&r, 2, "--clock: expected duty, peak or sustained, got 'turbo'");
    strata_cli_result_clear(&r);
    g_unlink(hw);
    g_unlink(busy);
    g_unlink(memory);
    g_free(hw);
    g_free(busy);
    g_free(memory);
    g_free(keys);
}
END_TEST

START_TEST(bad_duty_rules_refused)
{
    strata_test_hw_text_refused(head, "peak_clock = 1GHz\nclock_response = 0.1s\nclock_free_duty = 0.5\n",
                                "expected sustained_clock beside it");
    strata_test_hw_text_refused(head, "peak_clock = 1GHz\nsustained_clock = 800MHz\nclock_response = 0.1s\n",
                                "expected clock_response and clock_free_duty together");
    strata_test_hw_text_refused(head, "peak_clock = 1GHz\nsustained_clock = 800MHz\nclock_free_duty = 0.5\n",
                                "expected clock_response and clock_free_duty together");
    strata_test_hw_text_refused(head, "peak_clock = 1GHz\nsustained_clock = 800MHz\nclock_response = 0.1s\n"
                                      "clock_free_duty = 1\n", "a fraction from 0 to below 1");
    strata_test_hw_text_refused(head, "peak_clock = 1GHz\nsustained_clock = 800MHz\nclock_response = 0s\n"
                                      "clock_free_duty = 0.5\n", "clock_response");
    strata_test_hw_text_refused(head, "peak_clock = 1GHz\nsustained_clock = 800MHz\nclock_response = fast\n"
                                      "clock_free_duty = 0.5\n", "clock_response");
    /* none undoes a base file's */
    strata_hw *hw = load("peak_clock = none\nsustained_clock = none\nclock_response = none\nclock_free_duty = none\n");
    ck_assert_double_eq(strata_hw_compute(hw, 0)->kernel.clock_response, 0);
    strata_hw_free(hw);
}
END_TEST

static Suite *power_suite(void)
{
    Suite *s = suite_create("engine_power");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, clock_follows_the_filtered_activity);
    tcase_add_test(tc, run_times_computes_at_the_duty_clock);
    tcase_add_test(tc, bad_duty_rules_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return strata_test_main(power_suite());
}
