/*
 * test_timeline.c: the Perfetto / Chrome trace-event timeline writer
 * (sim/results/timeline.c) on results built by hand, read back with
 * json-glib: tracks per stream, link and memory; lanes for overlapping
 * copies; buffer lifetimes with offsets; counters in use and by tag;
 * byte-identical output; the exact bytes of events; unwritable paths.
 */
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include "results/results.h"
#include "testutil.h"

/* hbm (0) and host (1); link pcie; streams main and dma.
 *   main: compute k1 over [0, 1 ms]
 *   dma:  copy w1 host->hbm over [0, 0.5 ms] on pcie, copy w2 over
 *         [0.25, 0.75 ms] on pcie (overlaps: second lane), copy w3 over
 *         [0.8, 0.9 ms] with no route (track "host->hbm")
 *   hbm:  alloc A 1024 B param at 0 (offset 0), alloc B 2048 B activation at
 *         0.1 ms (offset 1024), free A at 0.5 ms; B live at the end (1 ms). */
static strata_results *sample_results(void)
{
    strata_results *r = strata_results_new("engine");
    r->makespan_s = 1e-3;
    r->hardware = g_strdup("test-hw");
    strata_memory_result *m = strata_results_add_memory(r, "hbm");
    m->kind = g_strdup("device");
    m->capacity_bytes = 1 << 20;
    m = strata_results_add_memory(r, "host");
    m->kind = g_strdup("host");
    m->capacity_bytes = 1 << 30;
    strata_results_add_link(r, "pcie");
    const uint32_t pcie = 0;
    ck_assert_uint_eq(strata_results_add_route(r, &pcie, 1), 0); /* route 0: host->hbm over pcie */
    strata_results_add_stream(r, "main");
    strata_results_add_stream(r, "dma");
    strata_results_enable_spans(r);

    strata_op_span *s = strata_results_add_span(r, "k1");
    s->kind = STRATA_OP_COMPUTE;
    s->stream = 0;
    s->start_s = 0;
    s->end_s = 1e-3;
    s->memory = s->src_memory = s->dst_memory = -1;
    const double copies[3][2] = {{0, 0.5e-3}, {0.25e-3, 0.75e-3}, {0.8e-3, 0.9e-3}};
    const char *names[3] = {"w1", "w2", "w3"};
    for (int i = 0; i < 3; i++) {
        s = strata_results_add_span(r, names[i]);
        s->op_index = (uint64_t)i + 1;
        s->line = (uint64_t)i + 2;
        s->kind = STRATA_OP_COPY;
        s->stream = 1;
        s->start_s = copies[i][0];
        s->end_s = copies[i][1];
        s->bytes = 4096;
        s->memory = -1;
        s->src_memory = 1;
        s->dst_memory = 0;
        if (i < 2)
            s->route = 0;
    }
    strata_mem_sample a = {.t_s = 0, .memory = 0, .allocated = 1024, .reserved = 1024,
                           .tag = STRATA_TAG_PARAM, .delta = 1024, .offset = 0, .buffer_id = 7};
    strata_results_add_sample(r, &a);
    strata_mem_sample b = {.t_s = 0.1e-3, .memory = 0, .allocated = 3072, .reserved = 3072,
                           .tag = STRATA_TAG_ACTIVATION, .delta = 2048, .offset = 1024, .buffer_id = 8};
    strata_results_add_sample(r, &b);
    strata_mem_sample f = {.t_s = 0.5e-3, .memory = 0, .allocated = 2048, .reserved = 3072,
                           .tag = STRATA_TAG_PARAM, .delta = -1024, .offset = 0, .buffer_id = 7};
    strata_results_add_sample(r, &f);
    return r;
}

typedef struct parsed {
    JsonParser *parser;
    JsonArray *events;
    GHashTable *threads; /* "pid/tid" -> name */
} parsed;

static parsed parse_timeline(const char *path)
{
    parsed p = {json_parser_new(), NULL, g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)};
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_file(p.parser, path, &err), "timeline is not JSON: %s",
                  err ? err->message : "");
    JsonObject *root = json_node_get_object(json_parser_get_root(p.parser));
    p.events = json_object_get_array_member(root, "traceEvents");
    for (guint i = 0; i < json_array_get_length(p.events); i++) {
        JsonObject *e = json_array_get_object_element(p.events, i);
        if (strcmp(json_object_get_string_member(e, "ph"), "M") == 0 &&
            strcmp(json_object_get_string_member(e, "name"), "thread_name") == 0)
            g_hash_table_insert(p.threads,
                                g_strdup_printf("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT,
                                                json_object_get_int_member(e, "pid"),
                                                json_object_get_int_member(e, "tid")),
                                g_strdup(json_object_get_string_member(
                                    json_object_get_object_member(e, "args"), "name")));
    }
    return p;
}

static void parsed_clear(parsed *p)
{
    g_hash_table_unref(p->threads);
    g_object_unref(p->parser);
}

static const char *track_of(const parsed *p, JsonObject *e)
{
    char *key = g_strdup_printf("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT, json_object_get_int_member(e, "pid"),
                                json_object_get_int_member(e, "tid"));
    const char *name = g_hash_table_lookup(p->threads, key);
    g_free(key);
    return name ? name : "";
}

/* The X events named `name` on tracks whose name starts with `track`. */
static guint count_x(const parsed *p, const char *name, const char *track, JsonObject **last)
{
    guint n = 0;
    for (guint i = 0; i < json_array_get_length(p->events); i++) {
        JsonObject *e = json_array_get_object_element(p->events, i);
        if (strcmp(json_object_get_string_member(e, "ph"), "X") != 0)
            continue;
        if (name && strcmp(json_object_get_string_member(e, "name"), name) != 0)
            continue;
        if (track && !g_str_has_prefix(track_of(p, e), track))
            continue;
        n++;
        if (last)
            *last = e;
    }
    return n;
}

static char *write_sample(strata_results *r)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "t.json", NULL);
    GError *err = NULL;
    ck_assert_msg(strata_results_write_timeline(r, path, &err), "write failed: %s", err ? err->message : "");
    g_free(dir);
    return path;
}

START_TEST(tracks_per_stream_link_memory)
{
    strata_results *r = sample_results();
    char *path = write_sample(r);
    parsed p = parse_timeline(path);
    GList *names = g_hash_table_get_values(p.threads);
    const char *want[] = {"main", "dma", "pcie", "pcie #2", "host->hbm", "hbm buffers", NULL};
    for (int i = 0; want[i]; i++)
        ck_assert_msg(g_list_find_custom(names, want[i], (GCompareFunc)strcmp), "no track '%s'", want[i]);
    g_list_free(names);
    /* The compute is on main: ts 0, dur 1000 us. */
    JsonObject *e = NULL;
    ck_assert_uint_eq(count_x(&p, "compute k1", "main", &e), 1);
    ck_assert_double_eq_tol(json_object_get_double_member(e, "dur"), 1000.0, 1e-9);
    /* Copies: three on dma, two on pcie lanes (w1 and w2 overlap), one on host->hbm. */
    ck_assert_uint_eq(count_x(&p, NULL, "dma", NULL), 3);
    ck_assert_uint_eq(count_x(&p, "copy w1", "pcie", &e), 1);
    ck_assert_str_eq(track_of(&p, e), "pcie");
    ck_assert_double_eq_tol(json_object_get_double_member(e, "dur"), 500.0, 1e-9);
    ck_assert_uint_eq(count_x(&p, "copy w2", "pcie", &e), 1);
    ck_assert_str_eq(track_of(&p, e), "pcie #2");
    ck_assert_double_eq_tol(json_object_get_double_member(e, "ts"), 250.0, 1e-9);
    ck_assert_uint_eq(count_x(&p, "copy w3", "host->hbm", NULL), 1);
    ck_assert_uint_eq(count_x(&p, "copy w3", "pcie", NULL), 0);
    parsed_clear(&p);
    g_free(path);
    strata_results_free(r);
}
END_TEST

START_TEST(buffer_lifetimes_with_offsets)
{
    strata_results *r = sample_results();
    char *path = write_sample(r);
    parsed p = parse_timeline(path);
    JsonObject *e = NULL;
    ck_assert_uint_eq(count_x(&p, "param", "hbm buffers", &e), 1);
    JsonObject *args = json_object_get_object_member(e, "args");
    ck_assert_int_eq(json_object_get_int_member(args, "offset"), 0);
    ck_assert_int_eq(json_object_get_int_member(args, "size"), 1024);
    ck_assert_double_eq_tol(json_object_get_double_member(e, "ts"), 0.0, 1e-9);
    ck_assert_double_eq_tol(json_object_get_double_member(e, "dur"), 500.0, 1e-9);
    /* B is never freed: it spans to the makespan, 1 ms - 0.1 ms = 900 us. */
    ck_assert_uint_eq(count_x(&p, "activation", "hbm buffers", &e), 1);
    args = json_object_get_object_member(e, "args");
    ck_assert_int_eq(json_object_get_int_member(args, "offset"), 1024);
    ck_assert_int_eq(json_object_get_int_member(args, "size"), 2048);
    ck_assert_str_eq(json_object_get_string_member(args, "tag"), "activation");
    ck_assert_double_eq_tol(json_object_get_double_member(e, "ts"), 100.0, 1e-9);
    ck_assert_double_eq_tol(json_object_get_double_member(e, "dur"), 900.0, 1e-9);
    /* A and B overlap in time: B must be on a second lane. */
    ck_assert_str_eq(track_of(&p, e), "hbm buffers #2");
    parsed_clear(&p);
    g_free(path);
    strata_results_free(r);
}
END_TEST

START_TEST(memory_counters)
{
    strata_results *r = sample_results();
    char *path = write_sample(r);
    parsed p = parse_timeline(path);
    guint in_use = 0, by_tag = 0;
    JsonObject *last_use = NULL, *last_tag = NULL;
    for (guint i = 0; i < json_array_get_length(p.events); i++) {
        JsonObject *e = json_array_get_object_element(p.events, i);
        if (strcmp(json_object_get_string_member(e, "ph"), "C") != 0)
            continue;
        const char *name = json_object_get_string_member(e, "name");
        if (strcmp(name, "hbm in use") == 0) {
            in_use++;
            last_use = json_object_get_object_member(e, "args");
        } else if (strcmp(name, "hbm by tag") == 0) {
            by_tag++;
            last_tag = json_object_get_object_member(e, "args");
        }
    }
    ck_assert_uint_eq(in_use, 3);
    ck_assert_uint_eq(by_tag, 3);
    ck_assert_int_eq(json_object_get_int_member(last_use, "allocated"), 2048);
    ck_assert_int_eq(json_object_get_int_member(last_use, "reserved"), 3072);
    ck_assert_int_eq(json_object_get_int_member(last_tag, "param"), 0);
    ck_assert_int_eq(json_object_get_int_member(last_tag, "activation"), 2048);
    parsed_clear(&p);
    g_free(path);
    strata_results_free(r);
}
END_TEST

START_TEST(deterministic_bytes)
{
    strata_results *r = sample_results();
    char *a = write_sample(r), *b = write_sample(r);
    char *ta = NULL, *tb = NULL;
    ck_assert(g_file_get_contents(a, &ta, NULL, NULL));
    ck_assert(g_file_get_contents(b, &tb, NULL, NULL));
    ck_assert_str_eq(ta, tb);
    g_free(ta);
    g_free(tb);
    g_free(a);
    g_free(b);
    strata_results_free(r);
}
END_TEST

/* The exact bytes of events, derived by hand from sample_results: a
 * counter's reserved bytes (copied from its allocated ones when equal), a
 * buffer's lifetime found again at its free (the live-buffer map), lanes'
 * pids and tids: lanes open in the order main (tid 1), dma (2), pcie (3),
 * hbm buffers (4), host buffers (5), then w2 overlaps w1 on dma (6) and on
 * pcie (7). */
START_TEST(exact_bytes_of_events)
{
    strata_results *r = sample_results();
    char *path = write_sample(r), *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    const char *expected[] = {
        "{\"ph\":\"X\",\"name\":\"copy w2\",\"cat\":\"copy\",\"pid\":1,\"tid\":6,\"ts\":250.000,\"dur\":500.000,",
        "{\"ph\":\"X\",\"name\":\"copy w2\",\"cat\":\"copy\",\"pid\":2,\"tid\":7,\"ts\":250.000,\"dur\":500.000,",
        "\"args\":{\"allocated\":1024,\"reserved\":1024}}",
        "\"args\":{\"allocated\":2048,\"reserved\":3072}}",
        "{\"ph\":\"X\",\"name\":\"param\",\"cat\":\"buffer\",\"pid\":3,\"tid\":4,\"ts\":0.000,\"dur\":500.000,"
        "\"args\":{\"offset\":0,\"size\":1024,\"tag\":\"param\",\"buffer\":7}}",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(expected); i++)
        ck_assert_msg(strstr(text, expected[i]), "not in the timeline: %s", expected[i]);
    g_free(text);
    g_free(path);
    strata_results_free(r);
}
END_TEST

START_TEST(no_spans_is_a_valid_empty_timeline)
{
    strata_results *r = strata_results_new("engine");
    strata_results_add_memory(r, "hbm");
    char *path = write_sample(r);
    parsed p = parse_timeline(path);
    ck_assert_uint_eq(count_x(&p, NULL, NULL, NULL), 0);
    parsed_clear(&p);
    g_free(path);
    strata_results_free(r);
}
END_TEST

START_TEST(unwritable_path_is_an_error)
{
    strata_results *r = sample_results();
    GError *err = NULL;
    ck_assert(!strata_results_write_timeline(r, "/nonexistent-dir/x/t.json", &err));
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err->message, "/nonexistent-dir/x/t.json"), "message does not name the path: %s",
                  err->message);
    g_clear_error(&err);
    strata_results_free(r);
}
END_TEST

/* Invariant 1: on every (pid, tid), X events never overlap. Many copies of
 * awkward lengths on one link, so lanes open and close and rounding to
 * nanoseconds is exercised. */
START_TEST(events_on_a_track_never_overlap)
{
    strata_results *r = strata_results_new("engine");
    r->makespan_s = 1.0;
    strata_memory_result *m = strata_results_add_memory(r, "hbm");
    m->kind = g_strdup("device");
    strata_results_add_link(r, "pcie");
    const uint32_t pcie = 0;
    strata_results_add_route(r, &pcie, 1);
    strata_results_add_stream(r, "main");
    GRand *rand = g_rand_new_with_seed(42);
    for (int i = 0; i < 400; i++) {
        strata_op_span *s = strata_results_add_span(r, "c");
        s->kind = STRATA_OP_COPY;
        s->start_s = g_rand_double_range(rand, 0, 1e-3);
        s->end_s = s->start_s + g_rand_double_range(rand, 0, 2e-5) / 3.0;
        s->src_memory = s->dst_memory = 0;
        s->route = 0;
    }
    g_rand_free(rand);
    char *path = write_sample(r);
    parsed p = parse_timeline(path);
    GHashTable *per_track = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_array_unref);
    guint n = 0;
    for (guint i = 0; i < json_array_get_length(p.events); i++) {
        JsonObject *e = json_array_get_object_element(p.events, i);
        if (strcmp(json_object_get_string_member(e, "ph"), "X") != 0)
            continue;
        char *key = g_strdup_printf("%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT, json_object_get_int_member(e, "pid"),
                                    json_object_get_int_member(e, "tid"));
        GArray *a = g_hash_table_lookup(per_track, key);
        if (!a) {
            a = g_array_new(FALSE, FALSE, sizeof(double) * 2);
            g_hash_table_insert(per_track, g_strdup(key), a);
        }
        /* Compare in whole nanoseconds, as written. */
        double iv[2] = {round(json_object_get_double_member(e, "ts") * 1000),
                        round((json_object_get_double_member(e, "ts") + json_object_get_double_member(e, "dur")) * 1000)};
        g_array_append_vals(a, iv, 1);
        g_free(key);
        n++;
    }
    ck_assert_uint_eq(n, 800); /* each copy on its stream and on pcie */
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, per_track);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        GArray *a = v;
        for (guint i = 0; i < a->len; i++)
            for (guint j = i + 1; j < a->len; j++) {
                const double *x = (const double *)(void *)(a->data + i * sizeof(double) * 2);
                const double *y = (const double *)(void *)(a->data + j * sizeof(double) * 2);
                ck_assert_msg(x[1] <= y[0] || y[1] <= x[0], "track %s: [%g, %g] overlaps [%g, %g] (ns)",
                              (const char *)k, x[0], x[1], y[0], y[1]);
            }
    }
    g_hash_table_unref(per_track);
    parsed_clear(&p);
    g_free(path);
    strata_results_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("timeline");
    TCase *tc = tcase_create("timeline");
    tcase_add_test(tc, tracks_per_stream_link_memory);
    tcase_add_test(tc, buffer_lifetimes_with_offsets);
    tcase_add_test(tc, memory_counters);
    tcase_add_test(tc, deterministic_bytes);
    tcase_add_test(tc, exact_bytes_of_events);
    tcase_add_test(tc, no_spans_is_a_valid_empty_timeline);
    tcase_add_test(tc, unwritable_path_is_an_error);
    tcase_add_test(tc, events_on_a_track_never_overlap);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
