/*
 * test_backend_host.c: the replay plan (backend/plan.h) and the host
 * backend end to end, through the library and through `strata replay`.
 *
 * Asserted: the plan's resolution (buffer placement, record numbers, the
 * record a wait waits for, OOM cut), and that a real run is well formed
 * (a span per op, ops of a stream in order, a wait ending after its record,
 * bytes per link from the routes, hand-derived memory peaks). No timing is
 * asserted beyond what the semantics force (a busy wait lasts its time).
 */
#include <json-glib/json-glib.h>
#include <string.h>
#include "backend/backend.h"
#include "backend/plan.h"
#include "core/error.h"
#include "ledger/ledger.h"
#include "testutil.h"
#include "trace/reader.h"

#define MiB (UINT64_C(1) << 20)

static const char *HW_TEXT =
    "[hardware]\nname = testbox\nsource = test\n\n"
    "[memory hbm]\nkind = device\ncapacity = 64MiB\nbandwidth = 10GB/s\nlatency = 100ns\n\n"
    "[memory host]\nkind = host\ncapacity = 64MiB\nbandwidth = 10GB/s\nlatency = 100ns\n\n"
    "[link pcie]\nbetween = host hbm\nbandwidth = 5GB/s\nlatency = 1us\n\n"
    "[compute cpu]\nflops = 1GFLOP/s\noperands = hbm\n";

/* A copy-dominated trace: two streams ordered by events. */
static const char *COPY_TRACE =
    "strata-trace 1\n"
    "alloc x 4MiB host\n"            /* op 0, line 2 */
    "alloc y 4MiB host\n"            /* 1 */
    "alloc a 4MiB\n"                 /* 2 */
    "alloc b 2MiB\n"                 /* 3 */
    "copy a x stream=h2d\n"          /* 4 */
    "record a_in stream=h2d\n"       /* 5: record 0 */
    "copy b x bytes=2MiB stream=h2d\n" /* 6 */
    "record a_in stream=h2d\n"       /* 7: record 1 (same event again) */
    "wait a_in stream=d2h\n"         /* 8: waits for record 1 */
    "copy y a stream=d2h\n"          /* 9 */
    "compute k flops=1e6 in=b out=a stream=d2h\n" /* 10 */
    "free a stream=d2h\n"            /* 11 */
    "free b stream=d2h\n"            /* 12 */
    "free x\n"                       /* 13 */
    "free y\n";                      /* 14 */

static strata_hw *load_hw(void)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load_data(HW_TEXT, "test.ini", NULL, &err);
    ck_assert_msg(hw != NULL, "%s", err ? err->message : "");
    return hw;
}

static strata_source *open_trace(const char *text, char **path_out)
{
    char *path = strata_test_write_temp("backend-XXXXXX.trace", text);
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    if (path_out)
        *path_out = path;
    else
        g_free(path);
    return src;
}

START_TEST(plan_resolves_names)
{
    strata_hw *hw = load_hw();
    strata_source *src = open_trace(COPY_TRACE, NULL);
    GError *err = NULL;
    strata_plan *p = strata_plan_build(hw, src, NULL, &err);
    ck_assert_msg(p != NULL, "%s", err ? err->message : "");
    ck_assert_uint_eq(p->ops->len, 15);
    ck_assert_uint_eq(p->buffers->len, 4);
    ck_assert_uint_eq(p->streams->len, 3); /* main, h2d, d2h in order of first use */
    ck_assert_str_eq(p->streams->pdata[0], "main");
    ck_assert_str_eq(p->streams->pdata[1], "h2d");
    ck_assert_str_eq(p->streams->pdata[2], "d2h");
    ck_assert_uint_eq(p->n_records, 2);
    ck_assert_uint_eq(strata_plan_op_at(p, 5)->record, 0);
    ck_assert_uint_eq(strata_plan_op_at(p, 7)->record, 1);
    ck_assert_uint_eq(strata_plan_op_at(p, 8)->record, 1); /* the latest record before it */
    /* copy b x bytes=2MiB: 2 MiB from host to hbm */
    const strata_plan_op *c = strata_plan_op_at(p, 6);
    ck_assert_uint_eq(c->bytes, 2 * MiB);
    ck_assert_int_eq(c->src_memory, strata_hw_memory_index(hw, "host"));
    ck_assert_int_eq(c->dst_memory, strata_hw_memory_index(hw, "hbm"));
    /* compute operands: in=b (2 MiB) + out=a (4 MiB) */
    ck_assert_uint_eq(strata_plan_op_at(p, 10)->bytes, 6 * MiB);
    /* placement: x and y do not overlap in host; a and b do not overlap in hbm */
    const strata_plan_buffer *x = strata_plan_buffer_at(p, 0), *y = strata_plan_buffer_at(p, 1);
    const strata_plan_buffer *a = strata_plan_buffer_at(p, 2), *b = strata_plan_buffer_at(p, 3);
    ck_assert(x->offset + x->size <= y->offset || y->offset + y->size <= x->offset);
    ck_assert(a->offset + a->size <= b->offset || b->offset + b->size <= a->offset);
    const strata_plan_memory *hbm = strata_plan_memory_at(p, (uint32_t)strata_hw_memory_index(hw, "hbm"));
    strata_memory_result figures = {0};
    strata_ledger_fill(hbm->ledger, &figures);
    ck_assert_uint_eq(figures.peak_allocated_bytes, 6 * MiB);
    ck_assert_uint_ge(hbm->extent, 6 * MiB);
    ck_assert_uint_eq(a->free_op, 11);
    ck_assert(!p->oom);
    strata_plan_free(p);
    strata_source_free(src);
    strata_hw_free(hw);
}
END_TEST

START_TEST(plan_without_hw_uses_brief_names)
{
    strata_source *src = open_trace("strata-trace 1\nalloc a 1MiB\nalloc h 1MiB host\nalloc p 1MiB pageable\n"
                                    "copy a h\ncopy a p\n",
                                    NULL);
    GError *err = NULL;
    strata_plan *p = strata_plan_build(NULL, src, NULL, &err);
    ck_assert_msg(p != NULL, "%s", err ? err->message : "");
    ck_assert_uint_eq(p->memories->len, 3);
    ck_assert_str_eq(strata_plan_memory_at(p, 0)->name, "hbm");
    ck_assert_int_eq(strata_plan_memory_at(p, 0)->kind, STRATA_MEM_DEVICE);
    ck_assert_int_eq(strata_plan_memory_at(p, 1)->kind, STRATA_MEM_HOST);
    ck_assert(!strata_plan_memory_at(p, 1)->pageable);
    ck_assert(strata_plan_memory_at(p, 2)->pageable);
    strata_plan_free(p);
    strata_source_free(src);
}
END_TEST

START_TEST(plan_stops_at_oom)
{
    strata_hw *hw = load_hw(); /* hbm holds 64 MiB */
    strata_source *src = open_trace("strata-trace 1\nalloc a 40MiB\nalloc b 40MiB\ncopy a b\n", NULL);
    GError *err = NULL;
    strata_plan *p = strata_plan_build(hw, src, NULL, &err);
    ck_assert_msg(p != NULL, "%s", err ? err->message : "");
    ck_assert(p->oom);
    ck_assert_uint_eq(p->oom_op, 1);
    ck_assert_uint_eq(p->oom_line, 3);
    ck_assert_uint_eq(p->ops->len, 1);
    ck_assert_uint_eq(p->oom_free, 24 * MiB);
    strata_plan_free(p);
    strata_source_free(src);
    strata_hw_free(hw);
}
END_TEST

START_TEST(plan_rejects_unknown_memory)
{
    strata_hw *hw = load_hw();
    strata_source *src = open_trace("strata-trace 1\nalloc a 1MiB vmem\n", NULL);
    GError *err = NULL;
    strata_plan *p = strata_plan_build(hw, src, NULL, &err);
    ck_assert(p == NULL);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_msg(strstr(err->message, ":2: expected a memory of ") && strstr(err->message, "(one of hbm, host), got 'vmem'"), "%s",
                  err->message);
    g_clear_error(&err);
    strata_source_free(src);
    strata_hw_free(hw);
}
END_TEST

START_TEST(median_run_is_the_middle)
{
    double m[5] = {5, 1, 4, 2, 3};
    ck_assert_int_eq(strata_plan_median_run(m, 5), 4); /* 3 */
    double even[4] = {4, 1, 3, 2};
    ck_assert_int_eq(strata_plan_median_run(even, 4), 3); /* lower median: 2 */
    double one[1] = {7};
    ck_assert_int_eq(strata_plan_median_run(one, 1), 0);
}
END_TEST

static const strata_op_span *span_of(const strata_results *r, uint64_t index)
{
    for (guint i = 0; i < r->spans->len; i++)
        if (g_array_index(r->spans, strata_op_span, i).op_index == index)
            return &g_array_index(r->spans, strata_op_span, i);
    return NULL;
}

START_TEST(host_runs_copy_trace)
{
    strata_hw *hw = load_hw();
    strata_source *src = open_trace(COPY_TRACE, NULL);
    const strata_backend *host = strata_backend_find("host", NULL);
    ck_assert(host != NULL);
    strata_backend_options opt;
    strata_backend_options_init(&opt);
    opt.repeats = 3;
    opt.warmup = 1;
    strata_results *r = NULL;
    GError *err = NULL;
    ck_assert_msg(host->run(hw, src, &opt, &r, &err), "%s", err ? err->message : "");
    ck_assert_str_eq(r->producer, "host");
    ck_assert(!r->oom);
    ck_assert_uint_eq(r->ops, 15);
    ck_assert_ptr_nonnull(r->spans);
    ck_assert_uint_eq(r->spans->len, 15);
    ck_assert(r->makespan_s > 0);
    /* ops of one stream run in order; every span inside the makespan */
    double last_end[3] = {0, 0, 0};
    for (guint i = 0; i < r->spans->len; i++) {
        const strata_op_span *s = &g_array_index(r->spans, strata_op_span, i);
        ck_assert_uint_eq(s->op_index, i);
        ck_assert(s->end_s >= s->start_s);
        ck_assert(s->start_s >= last_end[s->stream]);
        ck_assert(s->end_s <= r->makespan_s);
        last_end[s->stream] = s->end_s;
    }
    /* the wait (op 8) ends after record 1 (op 7), which follows the copy b (op 6) */
    ck_assert(span_of(r, 8)->end_s >= span_of(r, 7)->start_s);
    ck_assert(span_of(r, 9)->start_s >= span_of(r, 6)->end_s);
    /* a copy of 4 MiB takes time */
    ck_assert(span_of(r, 4)->end_s > span_of(r, 4)->start_s);
    ck_assert_uint_eq(span_of(r, 4)->bytes, 4 * MiB);
    /* links: copies host<->hbm cross pcie: 4 + 2 + 4 MiB */
    ck_assert_uint_eq(r->links->len, 1);
    ck_assert_uint_eq(g_array_index(r->links, strata_link_result, 0).bytes, 10 * MiB);
    ck_assert(g_array_index(r->links, strata_link_result, 0).busy_s > 0);
    /* memories: peaks from the plan, by hand */
    for (guint i = 0; i < r->memories->len; i++) {
        const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        ck_assert_uint_eq(m->peak_allocated_bytes, strcmp(m->name, "hbm") == 0 ? 6 * MiB : 8 * MiB);
    }
    /* compute unit: 1e6 flops counted */
    ck_assert_uint_eq(r->compute->len, 1);
    ck_assert(g_array_index(r->compute, strata_compute_result, 0).flops == 1e6);
    /* the streams' op counts */
    ck_assert_uint_eq(g_array_index(r->streams, strata_stream_result, 1).ops, 4);
    ck_assert_uint_eq(g_array_index(r->streams, strata_stream_result, 2).ops, 5);
    strata_results_free(r);
    strata_source_free(src);
    strata_hw_free(hw);
}
END_TEST

START_TEST(host_busy_wait_lasts_its_time)
{
    strata_source *src = open_trace("strata-trace 1\ncompute w time=2ms\n", NULL);
    const strata_backend *host = strata_backend_find("host", NULL);
    strata_backend_options opt;
    strata_backend_options_init(&opt);
    opt.repeats = 1;
    opt.warmup = 0;
    strata_results *r = NULL;
    GError *err = NULL;
    ck_assert_msg(host->run(NULL, src, &opt, &r, &err), "%s", err ? err->message : "");
    const strata_op_span *s = span_of(r, 0);
    /* ends at most half a clock read early: the semantics, not a speed */
    ck_assert_msg(s->end_s - s->start_s >= 0.002 * 0.99, "%g", s->end_s - s->start_s);
    strata_results_free(r);
    strata_source_free(src);
}
END_TEST

START_TEST(host_reports_oom)
{
    strata_hw *hw = load_hw();
    strata_source *src = open_trace("strata-trace 1\nalloc a 40MiB\ncompute z flops=1000 out=a\nalloc b 40MiB\n", NULL);
    const strata_backend *host = strata_backend_find("host", NULL);
    strata_backend_options opt;
    strata_backend_options_init(&opt);
    opt.repeats = 1;
    strata_results *r = NULL;
    GError *err = NULL;
    ck_assert_msg(host->run(hw, src, &opt, &r, &err), "%s", err ? err->message : "");
    ck_assert(r->oom);
    ck_assert_uint_eq(r->ops, 2);
    ck_assert_uint_eq(r->oom_info.line, 4);
    ck_assert_str_eq(r->oom_info.memory, "hbm");
    ck_assert_uint_eq(r->oom_info.requested_bytes, 40 * MiB);
    strata_results_free(r);
    strata_source_free(src);
    strata_hw_free(hw);
}
END_TEST

START_TEST(backend_table_by_name)
{
    GError *err = NULL;
    ck_assert_str_eq(strata_backend_find("host", &err)->name, "host");
    ck_assert_str_eq(strata_backend_find("cuda", &err)->name, "cuda");
    ck_assert(strata_backend_find("tpu", &err) == NULL);
    ck_assert_msg(strstr(err->message, "unknown backend 'tpu'; known backends: host, cuda"), "%s", err->message);
    g_clear_error(&err);
}
END_TEST

START_TEST(cli_replay_host_json)
{
    char *trace = strata_test_write_temp("replay-XXXXXX.trace", COPY_TRACE);
    char *dir = strata_test_temp_dir();
    char *json = g_build_filename(dir, "r.json", NULL);
    strata_cli_result r = strata_test_cli("replay", "--backend", "host", "--trace", trace, "--json", json,
                                          "--repeats", "2", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "replayed 15 ops on the host backend"), "%s", r.out);
    JsonParser *p = json_parser_new();
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_file(p, json, &err), "%s", err ? err->message : "");
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    ck_assert_str_eq(json_object_get_string_member(o, "producer"), "host");
    ck_assert_str_eq(json_object_get_string_member(o, "status"), "ok");
    ck_assert_int_eq(json_object_get_int_member(o, "ops"), 15);
    ck_assert(json_object_get_double_member(o, "makespan_s") > 0);
    JsonArray *spans = json_object_get_array_member(o, "spans");
    ck_assert_uint_eq(json_array_get_length(spans), 15);
    JsonObject *s4 = json_array_get_object_element(spans, 4);
    ck_assert_str_eq(json_object_get_string_member(s4, "kind"), "copy");
    ck_assert_str_eq(json_object_get_string_member(s4, "stream"), "h2d");
    ck_assert_int_eq(json_object_get_int_member(s4, "line"), 6);
    JsonObject *rep = json_object_get_object_member(o, "replay");
    ck_assert_int_eq(json_object_get_int_member(rep, "repeats"), 2);
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(rep, "makespans_s")), 2);
    g_object_unref(p);
    strata_cli_result_clear(&r);
    g_free(json);
    g_free(dir);
    g_free(trace);
}
END_TEST

START_TEST(cli_replay_errors)
{
    char *trace = strata_test_write_temp("replay-XXXXXX.trace", COPY_TRACE);
    strata_cli_result r = strata_test_cli("replay", "--backend", "gpu", "--trace", trace, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "known backends: host, cuda"), "%s", r.err);
    strata_cli_result_clear(&r);

    r = strata_test_cli("replay", "--backend", "host", "--trace", trace, "--json", "/nonexistent-dir/r.json", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "/nonexistent-dir/r.json"), "%s", r.err);
    ck_assert_msg(strstr(r.out, "replayed") == NULL, "ran before checking the output path");
    strata_cli_result_clear(&r);

    char *bad = strata_test_write_temp("replay-XXXXXX.trace", "strata-trace 1\nalloc a 1MiB\nwait never\n");
    r = strata_test_cli("replay", "--backend", "host", "--trace", bad, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, ":3"), "%s", r.err);
    strata_cli_result_clear(&r);

    r = strata_test_cli("replay", "--backend", "host", NULL);
    ck_assert_int_eq(r.status, 2);
    strata_cli_result_clear(&r);

    r = strata_test_cli("replay", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    static const char *const options[] = {"--backend", "--trace", "--hw",  "--json",     "--repeats",
                                          "--warmup",  "--device-memory", "--plan", "--timeline", NULL};
    for (const char *const *o = options; *o; o++)
        ck_assert_msg(strstr(r.out, *o), "--help does not explain %s", *o);
    strata_cli_result_clear(&r);
    g_free(bad);
    g_free(trace);
}
END_TEST

START_TEST(cli_replay_oom_exits_1)
{
    char *hw = strata_test_write_temp("replay-XXXXXX.ini", HW_TEXT);
    char *trace = strata_test_write_temp("replay-XXXXXX.trace", "strata-trace 1\nalloc a 40MiB\nalloc b 40MiB\n");
    char *dir = strata_test_temp_dir();
    char *json = g_build_filename(dir, "oom.json", NULL);
    strata_cli_result r = strata_test_cli("replay", "--backend", "host", "--hw", hw, "--trace", trace, "--json", json,
                                          "--repeats", "1", NULL);
    ck_assert_msg(r.status == 1, "%d %s", r.status, r.err);
    char *text = NULL;
    ck_assert(g_file_get_contents(json, &text, NULL, NULL));
    ck_assert_msg(strstr(text, "\"status\" : \"oom\""), "%s", text);
    g_free(text);
    strata_cli_result_clear(&r);
    g_free(json);
    g_free(dir);
    g_free(trace);
    g_free(hw);
}
END_TEST

static Suite *backend_host_suite(void)
{
    Suite *s = suite_create("backend_host");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, plan_resolves_names);
    tcase_add_test(tc, plan_without_hw_uses_brief_names);
    tcase_add_test(tc, plan_stops_at_oom);
    tcase_add_test(tc, plan_rejects_unknown_memory);
    tcase_add_test(tc, median_run_is_the_middle);
    tcase_add_test(tc, backend_table_by_name);
    suite_add_tcase(s, tc);
    tc = tcase_create("host");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, host_runs_copy_trace);
    tcase_add_test(tc, host_busy_wait_lasts_its_time);
    tcase_add_test(tc, host_reports_oom);
    suite_add_tcase(s, tc);
    tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cli_replay_host_json);
    tcase_add_test(tc, cli_replay_errors);
    tcase_add_test(tc, cli_replay_oom_exits_1);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return strata_test_main(backend_host_suite());
}
