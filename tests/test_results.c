/*
 * test_results.c: the results value, its JSON form (keys, order, values,
 * determinism, atomic writing) and the human summary.
 */
#include <glib/gstdio.h>
#include <string.h>
#include "core/error.h"
#include "results/results.h"
#include "testutil.h"

/* A results value filled by hand: one memory, link, stream and unit. */
static strata_results *sample(bool oom)
{
    strata_results *r = strata_results_new("engine");
    r->hardware = g_strdup("test-simple");
    r->trace = g_strdup("t.trace");
    r->makespan_s = 0.5;
    r->ops = 7;
    strata_memory_result *m = strata_results_add_memory(r, "hbm");
    m->kind = g_strdup("device");
    m->allocator = g_strdup("best-fit");
    m->capacity_bytes = 1u << 30;
    m->peak_allocated_bytes = 1u << 28;
    m->peak_reserved_bytes = 1u << 29;
    m->fragmentation_peak = 0.25;
    strata_link_result *l = strata_results_add_link(r, "pcie");
    l->bytes = 1000;
    l->busy_s = 0.25;
    strata_stream_result *s = strata_results_add_stream(r, "main");
    s->ops = 7;
    s->busy_s = 0.125;
    s->stall_s = 0.375;
    strata_compute_result *c = strata_results_add_compute(r, "core");
    c->busy_s = 0.5;
    c->flops = 2e12;
    if (oom)
        strata_results_set_oom(r, 3, 12, "hbm", "big", "main", 512u << 20, 256u << 20, 128u << 20);
    return r;
}

static JsonObject *parse(const char *text, JsonParser **parser)
{
    *parser = json_parser_new();
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_data(*parser, text, -1, &err), "%s", err ? err->message : "?");
    return json_node_get_object(json_parser_get_root(*parser));
}

START_TEST(json_has_the_brief_keys_in_order)
{
    strata_results *r = sample(false);
    char *text = strata_results_to_json_text(r);
    JsonParser *p = NULL;
    JsonObject *o = parse(text, &p);
    const char *order[] = {"producer", "hardware", "trace", "status", "makespan_s", "ops", "oom",
                           "memories", "links", "streams", "compute", NULL};
    GList *members = json_object_get_members(o);
    GList *it = members;
    for (int i = 0; order[i]; i++, it = it->next) {
        ck_assert_ptr_nonnull(it);
        ck_assert_str_eq(it->data, order[i]);
    }
    g_list_free(members);
    ck_assert_str_eq(json_object_get_string_member(o, "status"), "ok");
    ck_assert(json_node_is_null(json_object_get_member(o, "oom")));
    ck_assert(json_object_get_double_member(o, "makespan_s") == 0.5);
    ck_assert_int_eq(json_object_get_int_member(o, "ops"), 7);
    JsonObject *hbm = json_object_get_object_member(json_object_get_object_member(o, "memories"), "hbm");
    ck_assert_str_eq(json_object_get_string_member(hbm, "kind"), "device");
    ck_assert_str_eq(json_object_get_string_member(hbm, "allocator"), "best-fit");
    ck_assert_int_eq(json_object_get_int_member(hbm, "capacity_bytes"), 1 << 30);
    ck_assert_int_eq(json_object_get_int_member(hbm, "peak_allocated_bytes"), 1 << 28);
    ck_assert_int_eq(json_object_get_int_member(hbm, "peak_reserved_bytes"), 1 << 29);
    ck_assert(json_object_get_double_member(hbm, "fragmentation_peak") == 0.25);
    ck_assert(json_object_get_double_member(hbm, "peak_allocated_fraction") == 0.25);
    JsonObject *pcie = json_object_get_object_member(json_object_get_object_member(o, "links"), "pcie");
    ck_assert_int_eq(json_object_get_int_member(pcie, "bytes"), 1000);
    ck_assert(json_object_get_double_member(pcie, "busy_s") == 0.25);
    /* utilization = busy / makespan = 0.25 / 0.5 */
    ck_assert(json_object_get_double_member(pcie, "utilization") == 0.5);
    JsonObject *main_s = json_object_get_object_member(json_object_get_object_member(o, "streams"), "main");
    ck_assert(json_object_get_double_member(main_s, "busy_s") == 0.125);
    ck_assert(json_object_get_double_member(main_s, "stall_s") == 0.375);
    JsonObject *core = json_object_get_object_member(json_object_get_object_member(o, "compute"), "core");
    ck_assert(json_object_get_double_member(core, "flops") == 2e12);
    ck_assert(json_object_get_double_member(core, "busy_s") == 0.5);
    ck_assert(text[strlen(text) - 1] == '\n');
    g_object_unref(p);
    g_free(text);
    strata_results_free(r);
}
END_TEST

START_TEST(json_oom_report)
{
    strata_results *r = sample(true);
    char *text = strata_results_to_json_text(r);
    JsonParser *p = NULL;
    JsonObject *o = parse(text, &p);
    ck_assert_str_eq(json_object_get_string_member(o, "status"), "oom");
    JsonObject *oom = json_object_get_object_member(o, "oom");
    ck_assert_int_eq(json_object_get_int_member(oom, "op_index"), 3);
    ck_assert_int_eq(json_object_get_int_member(oom, "line"), 12);
    ck_assert_str_eq(json_object_get_string_member(oom, "memory"), "hbm");
    ck_assert_str_eq(json_object_get_string_member(oom, "buffer"), "big");
    ck_assert_str_eq(json_object_get_string_member(oom, "stream"), "main");
    ck_assert_int_eq(json_object_get_int_member(oom, "requested_bytes"), 512 << 20);
    ck_assert_int_eq(json_object_get_int_member(oom, "free_bytes"), 256 << 20);
    ck_assert_int_eq(json_object_get_int_member(oom, "largest_free_bytes"), 128 << 20);
    g_object_unref(p);
    g_free(text);
    strata_results_free(r);
}
END_TEST

START_TEST(json_is_deterministic_and_extra_keys_follow)
{
    strata_results *a = sample(false), *b = sample(false);
    strata_results_set_extra(a, "policies", json_node_init_string(json_node_alloc(), "prefetch=2"));
    strata_results_set_extra(b, "policies", json_node_init_string(json_node_alloc(), "prefetch=2"));
    char *ta = strata_results_to_json_text(a), *tb = strata_results_to_json_text(b);
    ck_assert_str_eq(ta, tb);
    const char *compute = strstr(ta, "\"compute\"");
    const char *policies = strstr(ta, "\"policies\"");
    ck_assert(compute && policies && policies > compute);
    g_free(ta);
    g_free(tb);
    strata_results_free(a);
    strata_results_free(b);
}
END_TEST

START_TEST(write_json_is_atomic_and_reports_bad_paths)
{
    strata_results *r = sample(false);
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "r.json", NULL);
    GError *err = NULL;
    ck_assert(strata_results_write_json(r, path, &err));
    char *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    char *want = strata_results_to_json_text(r);
    ck_assert_str_eq(text, want);
    char *bad = g_build_filename(dir, "no-such-dir", "r.json", NULL);
    ck_assert(!strata_results_write_json(r, bad, &err));
    ck_assert(err != NULL);
    g_clear_error(&err);
    g_remove(path);
    g_rmdir(dir);
    g_free(bad);
    g_free(want);
    g_free(text);
    g_free(path);
    g_free(dir);
    strata_results_free(r);
}
END_TEST

static char *summary_text(const strata_results *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    strata_results_print_summary(r, f);
    fclose(f);
    return buf;
}

START_TEST(summary_shows_peaks_utilization_and_streams)
{
    strata_results *r = sample(false);
    char *s = summary_text(r);
    ck_assert_msg(strstr(s, "makespan") != NULL, "%s", s);
    /* 256 MiB of a 1 GiB capacity = 25.0%, reserved 512 MiB = 50.0% */
    ck_assert_msg(strstr(s, "256.00 MiB (25.0%)") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "512.00 MiB (50.0%)") != NULL, "%s", s);
    /* pcie busy 0.25 s of 0.5 s */
    ck_assert_msg(strstr(s, "pcie") != NULL && strstr(s, "50.0%") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "main") != NULL, "%s", s);
    /* 2e12 flops */
    ck_assert_msg(strstr(s, "2.00 TFLOP") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "OUT OF MEMORY") == NULL, "%s", s);
    free(s);
    strata_results_free(r);
}
END_TEST

START_TEST(summary_reports_oom)
{
    strata_results *r = sample(true);
    char *s = summary_text(r);
    ck_assert_msg(strstr(s, "OUT OF MEMORY at op 3 (trace line 12) on stream main") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "alloc big of 512.00 MiB") != NULL, "%s", s);
    ck_assert_msg(strstr(s, "largest free block 128.00 MiB") != NULL, "%s", s);
    free(s);
    strata_results_free(r);
}
END_TEST

START_TEST(spans_and_samples)
{
    strata_results *r = strata_results_new("engine");
    ck_assert_ptr_null(r->spans);
    strata_op_span *s = strata_results_add_span(r, "copy1");
    ck_assert_int_eq(s->memory, -1);
    ck_assert_int_eq(s->src_memory, -1);
    strata_mem_sample m = {.t_s = 1.0, .allocated = 5};
    strata_results_add_sample(r, &m);
    ck_assert_uint_eq(r->spans->len, 1);
    ck_assert_uint_eq(r->mem_samples->len, 1);
    ck_assert_str_eq(g_array_index(r->spans, strata_op_span, 0).label, "copy1");
    strata_results_free(r);
}
END_TEST

/* A row declared as a table (core/jsonout.h) and an op's row: every kind
 * of member, in the order given, the op's naming members first. */
START_TEST(json_rows_from_field_tables)
{
    JsonBuilder *b = strata_json_object_begin();
    const strata_json_field f[] = {
        STRATA_JSON_REAL("busy_s", 0.25), STRATA_JSON_COUNT("big", UINT64_MAX), STRATA_JSON_INT("delta", -5),
        STRATA_JSON_STR("name", "hbm"),   STRATA_JSON_STR("none", NULL),
    };
    strata_json_add_object(b, "row", f, G_N_ELEMENTS(f));
    strata_json_open_array(b, "ops");
    const strata_json_field times[] = {STRATA_JSON_REAL("start_s", 1.5), STRATA_JSON_INT("bytes", 4096)};
    strata_results_json_op(b, 3, 12, STRATA_OP_COPY, NULL, "w", times, G_N_ELEMENTS(times));
    strata_results_json_op(b, 4, 0, STRATA_OP_COMPUTE, "main", NULL, NULL, 0);
    json_builder_end_array(b);
    JsonNode *root = strata_json_object_end(b);
    char *text = strata_json_text(root);
    ck_assert_str_eq(text, "{\n"
                           "  \"row\" : {\n"
                           "    \"busy_s\" : 0.25,\n"
                           "    \"big\" : 18446744073709551615,\n"
                           "    \"delta\" : -5,\n"
                           "    \"name\" : \"hbm\",\n"
                           "    \"none\" : null\n"
                           "  },\n"
                           "  \"ops\" : [\n"
                           "    {\n"
                           "      \"index\" : 3,\n"
                           "      \"line\" : 12,\n"
                           "      \"kind\" : \"copy\",\n"
                           "      \"stream\" : \"\",\n"
                           "      \"label\" : \"w\",\n"
                           "      \"start_s\" : 1.5,\n"
                           "      \"bytes\" : 4096\n"
                           "    },\n"
                           "    {\n"
                           "      \"index\" : 4,\n"
                           "      \"line\" : 0,\n"
                           "      \"kind\" : \"compute\",\n"
                           "      \"stream\" : \"main\",\n"
                           "      \"label\" : \"\"\n"
                           "    }\n"
                           "  ]\n"
                           "}\n");
    g_free(text);
    json_node_unref(root);
}
END_TEST

static Suite *results_suite(void)
{
    Suite *s = suite_create("results");
    TCase *t = tcase_create("json");
    tcase_add_test(t, json_has_the_brief_keys_in_order);
    tcase_add_test(t, json_oom_report);
    tcase_add_test(t, json_is_deterministic_and_extra_keys_follow);
    tcase_add_test(t, write_json_is_atomic_and_reports_bad_paths);
    tcase_add_test(t, json_rows_from_field_tables);
    suite_add_tcase(s, t);
    TCase *u = tcase_create("summary");
    tcase_add_test(u, summary_shows_peaks_utilization_and_streams);
    tcase_add_test(u, summary_reports_oom);
    tcase_add_test(u, spans_and_samples);
    suite_add_tcase(s, u);
    return s;
}

int main(void)
{
    return strata_test_main(results_suite());
}
