/*
 * test_cli_validate.c: `strata calibrate` and `strata validate` on the host
 * backend (the pipeline: a model from calibrate, a copy-dominated trace,
 * simulation and replay compared), and the comparison itself
 * (backend/compare.h) on hand-made results with hand-derived errors.
 * No timing is asserted: the makespan error is bench/bench_validate's.
 */
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include "backend/compare.h"
#include "hw/hw.h"
#include "testutil.h"

static const char *COPY_TRACE =
    "strata-trace 1\n"
    "alloc x 8MiB host\n"
    "alloc y 8MiB host\n"
    "alloc a 8MiB\n"
    "alloc b 8MiB\n"
    "copy a x stream=h2d\n"
    "record a_in stream=h2d\n"
    "copy b x stream=h2d\n"
    "wait a_in stream=d2h\n"
    "copy y a stream=d2h\n"
    "compute touch in=a out=b stream=d2h\n"
    "copy y b stream=d2h\n"
    "free a stream=d2h\n"
    "free b stream=d2h\n";

static char *calibrate_small(void)
{
    char *dir = strata_test_temp_dir();
    char *ini = g_build_filename(dir, "host.ini", NULL);
    strata_cli_result r = strata_test_cli("calibrate", "--backend", "host", "--max-size", "1MiB", "-q", "-o", ini,
                                          "--name", "test-host", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    g_free(dir);
    return ini;
}

START_TEST(calibrate_writes_a_loadable_model)
{
    char *ini = calibrate_small();
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(ini, NULL, &err);
    ck_assert_msg(hw != NULL, "%s", err ? err->message : "");
    ck_assert_str_eq(strata_hw_name(hw), "test-host");
    int hbm = strata_hw_memory_index(hw, "hbm"), host = strata_hw_memory_index(hw, "host"),
        pageable = strata_hw_memory_index(hw, "pageable");
    ck_assert(hbm >= 0 && host >= 0 && pageable >= 0);
    ck_assert_int_eq(strata_hw_memory(hw, (uint32_t)hbm)->kind, STRATA_MEM_DEVICE);
    ck_assert(strata_hw_memory(hw, (uint32_t)pageable)->pageable);
    ck_assert_uint_eq(strata_hw_link_count(hw), 2);
    ck_assert(strata_hw_link(hw, 0)->bandwidth > 0);
    ck_assert(strata_hw_compute(hw, 0)->flops > 0);
    char *text = NULL;
    ck_assert(g_file_get_contents(ini, &text, NULL, NULL));
    /* every measurement in a comment: the size table up to the largest size asked */
    ck_assert_msg(strstr(text, "#   4KiB ") && strstr(text, "#   1MiB ") && !strstr(text, "#   4MiB "), "%s", text);
    ck_assert_msg(strstr(text, "two copies of 1MiB at once"), "%s", text);
    g_free(text);
    strata_hw_free(hw);
    g_free(ini);
}
END_TEST

START_TEST(calibrate_errors)
{
    strata_cli_result r = strata_test_cli("calibrate", "--backend", "host", "-o", "/nonexistent-dir/h.ini", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "/nonexistent-dir/h.ini"), "%s", r.err);
    ck_assert_msg(strstr(r.err, "calibrate: 4KiB") == NULL, "measured before checking the output path");
    strata_cli_result_clear(&r);
    r = strata_test_cli("calibrate", "--backend", "fpga", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "known backends: host, cuda"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("calibrate", "--backend", "host", "--max-size", "12XB", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "12XB"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("calibrate", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert(strstr(r.out, "--backend") && strstr(r.out, "--output") && strstr(r.out, "--max-size") &&
              strstr(r.out, "--full") && strstr(r.out, "--name") && strstr(r.out, "--quiet"));
    strata_cli_result_clear(&r);
}
END_TEST

START_TEST(validate_host_pipeline)
{
    char *ini = calibrate_small();
    char *trace = strata_test_write_temp("validate-XXXXXX.trace", COPY_TRACE);
    char *dir = strata_test_temp_dir();
    char *json = g_build_filename(dir, "v.json", NULL);
    strata_cli_result r = strata_test_cli("validate", "--hw", ini, "--trace", trace, "--backend", "host", "--json",
                                          json, "--repeats", "3", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "makespan: simulated"), "%s", r.out);
    ck_assert_msg(strstr(r.out, "per-op error"), "%s", r.out);
    JsonParser *p = json_parser_new();
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_file(p, json, &err), "%s", err ? err->message : "");
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    double sim = json_object_get_double_member(o, "makespan_sim_s");
    double real = json_object_get_double_member(o, "makespan_real_s");
    double e = json_object_get_double_member(o, "makespan_error");
    ck_assert(sim > 0 && real > 0);
    ck_assert_msg(fabs(e - fabs(sim - real) / real) < 1e-12, "makespan_error %g for %g vs %g", e, sim, real);
    JsonObject *pe = json_object_get_object_member(o, "per_op_error");
    ck_assert_int_eq(json_object_get_int_member(pe, "count"), 5); /* 4 copies and 1 compute */
    double p50 = json_object_get_double_member(pe, "p50"), p90 = json_object_get_double_member(pe, "p90"),
           p99 = json_object_get_double_member(pe, "p99"), mx = json_object_get_double_member(pe, "max");
    ck_assert(0 <= p50 && p50 <= p90 && p90 <= p99 && p99 <= mx);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(o, "ops")), 5);
    ck_assert_str_eq(json_object_get_string_member(o, "hardware"), "test-host");
    JsonObject *measured = json_object_get_object_member(o, "measured");
    ck_assert_str_eq(json_object_get_string_member(measured, "producer"), "host");
    g_object_unref(p);
    strata_cli_result_clear(&r);
    g_free(json);
    g_free(dir);
    g_free(trace);
    g_free(ini);
}
END_TEST

START_TEST(validate_errors)
{
    char *trace = strata_test_write_temp("validate-XXXXXX.trace", COPY_TRACE);
    strata_cli_result r = strata_test_cli("validate", "--trace", trace, "--backend", "host", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--hw"), "%s", r.err);
    strata_cli_result_clear(&r);
    char *bad = strata_test_write_temp("validate-XXXXXX.ini", "[hardware]\nname = x\nsource = y\n[memroy hbm]\n");
    r = strata_test_cli("validate", "--hw", bad, "--trace", trace, "--backend", "host", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, bad), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("validate", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert(strstr(r.out, "--hw") && strstr(r.out, "--trace") && strstr(r.out, "--backend") &&
              strstr(r.out, "--json") && strstr(r.out, "--repeats") && strstr(r.out, "--warmup") &&
              strstr(r.out, "--device-memory") && strstr(r.out, "--quiet"));
    strata_cli_result_clear(&r);
    g_free(bad);
    g_free(trace);
}
END_TEST

/* Results with one span per (kind, line, duration). */
static strata_results *fake(const char *producer, const double *durations, size_t n, double makespan)
{
    strata_results *r = strata_results_new(producer);
    strata_results_add_stream(r, "main");
    strata_results_enable_spans(r);
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        strata_op_span *s = strata_results_add_span(r, "op");
        s->op_index = i;
        s->line = i + 2;
        s->kind = i == n - 1 ? STRATA_OP_RECORD : STRATA_OP_COPY;
        s->start_s = t;
        s->end_s = t + durations[i];
        t += durations[i];
    }
    r->makespan_s = makespan;
    return r;
}

START_TEST(compare_by_hand)
{
    double sim_d[6] = {2e-3, 1e-3, 1e-3, 1e-3, 3e-3, 0};
    double real_d[6] = {1e-3, 1e-3, 2e-3, 4e-3, 1e-3, 5e-3};
    strata_results *sim = fake("engine", sim_d, 6, 0.008), *real = fake("host", real_d, 6, 0.010);
    strata_comparison *c = strata_compare_results(sim, real);
    ck_assert_uint_eq(c->ops->len, 5); /* the record is not compared */
    double want[5] = {1.0, 0.0, -0.5, -0.75, 2.0};
    for (int i = 0; i < 5; i++)
        ck_assert_msg(fabs(g_array_index(c->ops, strata_op_error, i).error - want[i]) < 1e-12, "op %d", i);
    /* |errors| sorted: 0, 0.5, 0.75, 1, 2; nearest rank */
    ck_assert(fabs(c->p50 - 0.75) < 1e-12);
    ck_assert(fabs(c->p90 - 2.0) < 1e-12);
    ck_assert(fabs(c->max - 2.0) < 1e-12);
    ck_assert(fabs(c->makespan_error - 0.2) < 1e-12);
    ck_assert(fabs(c->makespan_error_signed + 0.2) < 1e-12);
    JsonNode *j = strata_comparison_to_json(c);
    JsonObject *o = json_node_get_object(j);
    ck_assert(fabs(json_object_get_double_member(o, "makespan_error") - 0.2) < 1e-12);
    ck_assert_int_eq(json_object_get_int_member(json_object_get_object_member(o, "per_op_error"), "count"), 5);
    json_node_unref(j);
    strata_comparison_free(c);
    strata_results_free(sim);
    strata_results_free(real);
}
END_TEST

START_TEST(percentile_nearest_rank)
{
    double v[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    ck_assert(strata_percentile(v, 10, 0.5) == 5);
    ck_assert(strata_percentile(v, 10, 0.9) == 9);
    ck_assert(strata_percentile(v, 10, 0.99) == 10);
    ck_assert(strata_percentile(v, 0, 0.5) == 0);
    ck_assert(strata_percentile(v, 1, 0.01) == 1);
}
END_TEST

static Suite *validate_suite(void)
{
    Suite *s = suite_create("cli_validate");
    TCase *tc = tcase_create("compare");
    tcase_add_test(tc, compare_by_hand);
    tcase_add_test(tc, percentile_nearest_rank);
    suite_add_tcase(s, tc);
    tc = tcase_create("cli");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, calibrate_writes_a_loadable_model);
    tcase_add_test(tc, calibrate_errors);
    tcase_add_test(tc, validate_host_pipeline);
    tcase_add_test(tc, validate_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return strata_test_main(validate_suite());
}
