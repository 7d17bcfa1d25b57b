/*
 * test_copy_engines.c: a link's copy engines (hw.h's copy_engines,
 * sim/engine/engine_copy_queue.h), on cases worked out by hand.
 *
 * Hardware (HW below): pageable (host, 100 GB/s port) -- staging (the
 * driver's CPU copy, 8 GB/s, a 1 GiB buffer) -- host (100 GB/s port) --
 * pcie (16 GB/s each way, 1 us, full duplex, copy_engines as the test
 * gives) -- hbm (1 TB/s port). G = 2^30 B; one 1 GiB copy over pcie alone:
 * G / 16e9 + 1 us = 67.108864 + 0.001 = 67.109864 ms (test_engine.c's
 * single_copy).
 *
 * Each engine run is in its own process (Check fork mode): SimGrid allows
 * one engine per process.
 */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "engine/engine.h"
#include "hw/hw.h"
#include "testutil.h"

#define GIB 1073741824.0
#define ALONE (GIB / 16e9 + 1e-6) /* 67.109864 ms */

static const char HW_HEAD[] =
    "[hardware]\nname = copy-engines-test\nsource = round numbers for hand-derived tests\n"
    "[memory hbm]\nkind = device\ncapacity = 8GiB\nbandwidth = 1TB/s\n"
    "[memory host]\nkind = host\ncapacity = 64GiB\nbandwidth = 100GB/s\n"
    "[memory pageable]\nkind = host\npageable = true\ncapacity = 64GiB\nbandwidth = 100GB/s\n"
    "[link staging]\nbetween = pageable host\nbandwidth = 8GB/s\nstaging_buffer = 1GiB\n"
    "[link pcie]\nbetween = host hbm\nbandwidth = 16GB/s\nlatency = 1us\n";

/* Runs trace on HW_HEAD + keys (the [link pcie] keys), spans recorded. */
static strata_results *run(const char *keys, const char *trace)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw_text(HW_HEAD, keys, &err);
    ck_assert_msg(hw, "hw: %s", err ? err->message : "?");
    strata_engine_options opt;
    strata_engine_options_init(&opt);
    opt.record_spans = true;
    strata_results *r = strata_test_run_trace_text(hw, trace, &opt, &err);
    ck_assert_msg(r, "run: %s", err ? err->message : "?");
    strata_hw_free(hw);
    return r;
}

/* The span of the op on trace line `line`. */
static const strata_op_span *span_at(const strata_results *r, uint32_t line)
{
    for (guint i = 0; i < r->spans->len; i++) {
        const strata_op_span *s = &g_array_index(r->spans, strata_op_span, i);
        if (s->line == line)
            return s;
    }
    ck_abort_msg("no span at line %u", line);
    return NULL;
}

static void assert_close(double got, double want, const char *what)
{
    ck_assert_msg(fabs(got - want) <= fabs(want) * 1e-9 + 1e-12, "%s: got %.12g, want %.12g", what, got, want);
}

/* Lines 6 and 7: two 1 GiB H2D copies issued at once on two streams. */
static const char TWO_H2D[] = "strata-trace 1\n"
                              "alloc a 1GiB host\nalloc b 1GiB hbm\n"
                              "alloc c 1GiB host\nalloc d 1GiB hbm\n"
                              "copy b a stream=s1\n"
                              "copy d c stream=s2\n";

/* One engine: the first copy runs alone, G / 16e9 + 1 us = 67.109864 ms;
 * the second waits for it (its span starts at 0, when its stream reached
 * it) and then runs alone too: 2 x 67.109864 = 134.219728 ms. */
START_TEST(one_engine_runs_them_in_turn)
{
    strata_results *r = run("copy_engines = 1\n", TWO_H2D);
    const strata_op_span *first = span_at(r, 6), *second = span_at(r, 7);
    assert_close(first->start_s, 0, "first start");
    assert_close(first->end_s, ALONE, "first end");
    assert_close(second->start_s, 0, "second start");
    assert_close(second->end_s, 2 * ALONE, "second end");
    assert_close(r->makespan_s, 0.134219728, "makespan");
    /* the link is busy while either copy is on it, not while one waits */
    assert_close(g_array_index(r->links, strata_link_result, 1).busy_s, 2 * ALONE, "pcie busy");
    strata_results_free(r);
}
END_TEST

/* No copy_engines (today's rule): both share the 16 GB/s, 8 GB/s each,
 * and end together at 2 x G / 16e9 + 1 us = 134.218728 ms, 1 us before the
 * queued pair's end. */
START_TEST(without_the_key_copies_share_the_link)
{
    strata_results *r = run("", TWO_H2D);
    assert_close(span_at(r, 6)->end_s, 2 * GIB / 16e9 + 1e-6, "first end");
    assert_close(span_at(r, 7)->end_s, 0.134218728, "second end");
    strata_results_free(r);
}
END_TEST

/* Two engines, three copies: the first two share the link (both end at
 * 134.218728 ms as without the key); the third waits for an engine and
 * runs alone from then: 134.218728 + 67.109864 = 201.328592 ms. */
START_TEST(two_engines_take_two_at_once)
{
    strata_results *r = run("copy_engines = 2\n", "strata-trace 1\n"
                                                 "alloc a 1GiB host\nalloc b 1GiB hbm\n"
                                                 "alloc c 1GiB host\nalloc d 1GiB hbm\n"
                                                 "alloc e 1GiB host\nalloc f 1GiB hbm\n"
                                                 "copy b a stream=s1\n"
                                                 "copy d c stream=s2\n"
                                                 "copy f e stream=s3\n");
    assert_close(span_at(r, 8)->end_s, 0.134218728, "first end");
    assert_close(span_at(r, 9)->end_s, 0.134218728, "second end");
    assert_close(span_at(r, 10)->end_s, 0.201328592, "third end");
    strata_results_free(r);
}
END_TEST

/* H2D and D2H at once take one engine each, one per direction: neither
 * waits, and each has its direction's 16 GB/s: both end at 67.109864 ms. */
START_TEST(opposite_directions_do_not_wait)
{
    strata_results *r = run("copy_engines = 1\n", "strata-trace 1\n"
                                                 "alloc a 1GiB host\nalloc b 1GiB hbm\n"
                                                 "alloc c 1GiB hbm\nalloc d 1GiB host\n"
                                                 "copy b a stream=h2d\n"
                                                 "copy d c stream=d2h\n");
    assert_close(span_at(r, 6)->end_s, ALONE, "h2d end");
    assert_close(span_at(r, 7)->end_s, ALONE, "d2h end");
    strata_results_free(r);
}
END_TEST

/* A pageable H2D holds pcie's engine for its whole staged pipeline
 * (hw/staging.h): 1 GiB through a 1 GiB buffer is two chunks of 512 MiB;
 * CPU 512 MiB / 8e9 = 67.108864 ms each, DMA 1 us + 512 MiB / 16e9 =
 * 33.555432 ms each: cpu1 0-67.108864, dma1 -100.664296, cpu2 (the other
 * half) 67.108864-134.217728, dma2 -167.77316 ms. A pinned H2D issued at
 * the same time on another stream waits for it, then runs alone:
 * 167.77316 + 67.109864 = 234.883024 ms. */
START_TEST(a_staged_copy_holds_the_engine)
{
    strata_results *r = run("copy_engines = 1\n", "strata-trace 1\n"
                                                 "alloc a 1GiB pageable\nalloc b 1GiB hbm\n"
                                                 "alloc c 1GiB host\nalloc d 1GiB hbm\n"
                                                 "copy b a stream=s1\n"
                                                 "copy d c stream=s2\n");
    assert_close(span_at(r, 6)->end_s, 0.16777316, "pageable end");
    assert_close(span_at(r, 7)->end_s, 0.234883024, "pinned end");
    strata_results_free(r);
}
END_TEST

/* Bad values name the file, the line, the group and the key. */
START_TEST(bad_values_are_refused)
{
    strata_test_hw_text_refused(HW_HEAD, "copy_engines = 0\n", "t.ini:25: [link pcie] copy_engines: expected a "
                                                                "whole number from 1 to 64, got '0'");
    strata_test_hw_text_refused(HW_HEAD, "copy_engines = 65\n", "[link pcie] copy_engines");
    strata_test_hw_text_refused(HW_HEAD, "copy_engines = -1\n", "[link pcie] copy_engines");
    strata_test_hw_text_refused(HW_HEAD, "copy_engines = one\n", "[link pcie] copy_engines");
    strata_test_hw_text_refused(HW_HEAD, "copy_engines = 1.5\n", "[link pcie] copy_engines");
    /* a staging link is the CPU's copy, not a DMA */
    strata_test_hw_text_refused("[hardware]\nname = t\ndefault_memory = host\n"
                                "[memory host]\nkind = host\ncapacity = 1GB\nbandwidth = 10GB/s\n"
                                "[memory pageable]\nkind = host\npageable = true\ncapacity = 1GB\nbandwidth = 10GB/s\n"
                                "[link staging]\nbetween = pageable host\nbandwidth = 5GB/s\nstaging_buffer = 2MiB\n",
                                "copy_engines = 1\n", "[link staging] copy_engines: a staging link");
}
END_TEST

/* On the command line: exit status 2, the file and the key. */
START_TEST(bad_value_exits_2)
{
    char *text = g_strconcat(HW_HEAD, "copy_engines = zero\n", NULL);
    char *hw = strata_test_write_temp("copy-engines-XXXXXX.ini", text);
    char *trace = strata_test_source_path("traces/examples/pcie-copy.trace");
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, "-q", NULL);
    strata_test_expect(&r, 2, "[link pcie] copy_engines: expected a whole number from 1 to 64, got 'zero'");
    char *base = g_path_get_basename(hw);
    ck_assert_msg(strstr(r.err, base), "the file is not named: %s", r.err);
    g_free(base);
    g_free(r.out);
    g_free(r.err);
    g_remove(hw);
    g_free(hw);
    g_free(trace);
    g_free(text);
}
END_TEST

/* The shipped Hopper files give one engine per direction on every
 * device's PCIe link (the measured H200, docs/validation.md). */
START_TEST(shipped_files_give_one_engine)
{
    strata_hw *hw = strata_test_load_hw("h200", NULL);
    ck_assert_uint_eq(strata_test_link(hw, "pcie")->copy_engines, 1);
    strata_hw_free(hw);
    hw = strata_test_load_hw("dgx-h100", NULL);
    ck_assert_uint_eq(strata_test_link(hw, "pcie@0")->copy_engines, 1);
    ck_assert_uint_eq(strata_test_link(hw, "pcie@7")->copy_engines, 1);
    strata_hw_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("copy_engines");
    TCase *tc = tcase_create("copy_engines");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, one_engine_runs_them_in_turn);
    tcase_add_test(tc, without_the_key_copies_share_the_link);
    tcase_add_test(tc, two_engines_take_two_at_once);
    tcase_add_test(tc, opposite_directions_do_not_wait);
    tcase_add_test(tc, a_staged_copy_holds_the_engine);
    tcase_add_test(tc, bad_values_are_refused);
    tcase_add_test(tc, bad_value_exits_2);
    tcase_add_test(tc, shipped_files_give_one_engine);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
