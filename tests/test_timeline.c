/*
 * test_timeline.c: the Perfetto / Chrome trace-event timeline writer
 * (sim/results/timeline.c) on results built by hand, read back with
 * json-glib: tracks per stream, link and memory; lanes for overlapping
 * copies; buffer lifetimes with offsets; counters in use and by tag;
 * byte-identical output; the exact bytes of events; unwritable paths; each
 * event on the earliest free lane of its track (against a linear scan).
 */
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include "perfetto_trace.pb-c.h"
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

/* ---- Perfetto's protobuf trace (timeline_perfetto.c) ------------------- */

typedef struct pf_counts {
    guint begins, ends, instants, counters, processes, threads, counter_tracks, absolute;
    uint64_t extra_values;
    uint64_t *ns; /* per packet: its time, as trace_processor reads it */
} pf_counts;

/* Each packet's time as trace_processor resolves it (ProtoTraceReader::
 * TimestampTokenizeAndPushToSorter and ClockSynchronizer::ClockDomain::ToNs
 * at google/perfetto ec5d16b): the packet's clock, else the sequence's
 * default (TracePacketDefaults), else BOOTTIME; a clock of the snapshot
 * marked incremental adds the packet's timestamp to its time so far, in
 * file order. The first packet defines the clocks: BOOTTIME and the
 * incremental clock 64, both at 0, and 64 the default. */
static void resolve_times(const Perfetto__Protos__Trace *t, pf_counts *c)
{
    const Perfetto__Protos__TracePacket *first = t->packet[0];
    ck_assert(first->trace_packet_defaults && first->trace_packet_defaults->has_timestamp_clock_id);
    ck_assert_uint_eq(first->trace_packet_defaults->timestamp_clock_id, 64);
    ck_assert_int_eq(first->data_case, PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT);
    const Perfetto__Protos__ClockSnapshot *snap = first->clock_snapshot;
    ck_assert_uint_eq(snap->n_clocks, 2);
    ck_assert_uint_eq(snap->clocks[0]->clock_id, 6);
    ck_assert(!snap->clocks[0]->is_incremental);
    ck_assert_uint_eq(snap->clocks[1]->clock_id, 64);
    ck_assert(snap->clocks[1]->is_incremental);
    ck_assert_uint_eq(snap->clocks[0]->timestamp, 0);
    ck_assert_uint_eq(snap->clocks[1]->timestamp, 0);
    uint64_t delta_clock = 0;
    c->ns = g_new0(uint64_t, t->n_packet);
    for (size_t i = 1; i < t->n_packet; i++) {
        const Perfetto__Protos__TracePacket *p = t->packet[i];
        ck_assert_uint_eq(p->sequence_flags, PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE);
        if (!p->has_timestamp)
            continue;
        if (p->has_timestamp_clock_id) {
            ck_assert_uint_eq(p->timestamp_clock_id, 6);
            c->ns[i] = p->timestamp;
            c->absolute++;
        } else {
            c->ns[i] = delta_clock += p->timestamp;
        }
    }
}

/* The trace at path, unpacked by protobuf-c, counted; the slices' begins
 * and ends paired per track (each end right after its begin). */
static Perfetto__Protos__Trace *unpack_pftrace(const char *path, pf_counts *c)
{
    gchar *data = NULL;
    gsize len = 0;
    ck_assert(g_file_get_contents(path, &data, &len, NULL));
    Perfetto__Protos__Trace *t = perfetto__protos__trace__unpack(NULL, len, (const uint8_t *)data);
    g_free(data);
    ck_assert_msg(t != NULL, "%s: not a Perfetto trace", path);
    *c = (pf_counts){0};
    resolve_times(t, c);
    uint64_t open_on = 0;
    for (size_t i = 0; i < t->n_packet; i++) {
        const Perfetto__Protos__TracePacket *p = t->packet[i];
        ck_assert_uint_eq(p->trusted_packet_sequence_id, 1);
        if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR) {
            const Perfetto__Protos__TrackDescriptor *d = p->track_descriptor;
            c->processes += d->process != NULL;
            c->threads += d->thread != NULL;
            c->counter_tracks += d->counter != NULL;
        }
        if (p->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT)
            continue;
        const Perfetto__Protos__TrackEvent *e = p->track_event;
        if (e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN) {
            ck_assert_uint_eq(open_on, 0);
            open_on = e->track_uuid;
            c->begins++;
        } else if (e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END) {
            ck_assert_uint_eq(open_on, e->track_uuid);
            open_on = 0;
            c->ends++;
        } else if (e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT) {
            ck_assert_uint_eq(open_on, 0); /* one packet, between slices */
            c->instants++;
        } else if (e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER) {
            c->counters++;
            c->extra_values += e->n_extra_counter_values;
            ck_assert_uint_eq(e->n_extra_counter_values, e->n_extra_counter_track_uuids);
        }
    }
    return t;
}

static char *write_sample_as(strata_results *r, const char *name)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, name, NULL);
    GError *err = NULL;
    ck_assert_msg(strata_results_write_timeline(r, path, &err), "write failed: %s", err ? err->message : "");
    g_free(dir);
    return path;
}

/* The same slices, lanes, processes and counter series as the JSON of the
 * same results: 9 slices (k1; w1, w2, w3 on dma; w1, w2 on pcie; w3 on
 * host->hbm; buffers A and B), 9 lanes (main, dma, pcie, hbm buffers, host
 * buffers, dma #2, pcie #2, host->hbm, hbm buffers #2: B overlaps A), 3
 * processes, 4 counter series (hbm in use allocated and reserved, hbm by
 * tag param and activation). */
START_TEST(pftrace_same_events_as_json)
{
    strata_results *r = sample_results();
    char *json = write_sample(r), *pf = write_sample_as(r, "t.pftrace");
    parsed p = parse_timeline(json);
    guint lanes = g_hash_table_size(p.threads), processes = 0, json_counters = 0;
    GHashTable *series = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < json_array_get_length(p.events); i++) {
        JsonObject *e = json_array_get_object_element(p.events, i);
        const char *ph = json_object_get_string_member(e, "ph"), *name = json_object_get_string_member(e, "name");
        processes += strcmp(ph, "M") == 0 && strcmp(name, "process_name") == 0;
        if (strcmp(ph, "C") != 0)
            continue;
        json_counters++;
        JsonObject *args = json_object_get_object_member(e, "args");
        GList *keys = json_object_get_members(args);
        for (GList *l = keys; l; l = l->next)
            g_hash_table_add(series, g_strconcat(name, " ", (const char *)l->data, NULL));
        g_list_free(keys);
    }
    pf_counts c;
    Perfetto__Protos__Trace *t = unpack_pftrace(pf, &c);
    ck_assert_uint_eq(count_x(&p, NULL, NULL, NULL), 9);
    ck_assert_uint_eq(c.begins, 9);
    ck_assert_uint_eq(c.ends, 9);
    ck_assert_uint_eq(lanes, 9);
    ck_assert_uint_eq(c.threads, 9);
    ck_assert_uint_eq(processes, 3);
    ck_assert_uint_eq(c.processes, 3);
    ck_assert_uint_eq(g_hash_table_size(series), 4);
    ck_assert_uint_eq(c.counter_tracks, 4);
    ck_assert_uint_eq(json_counters, 6); /* 3 samples: in use, by tag */
    ck_assert_uint_eq(c.counters, 3);    /* one packet a sample: allocated, then reserved and the tag */
    ck_assert_uint_eq(c.extra_values, 6);
    g_free(c.ns);
    perfetto__protos__trace__free_unpacked(t, NULL);
    g_hash_table_unref(series);
    parsed_clear(&p);
    g_free(json);
    g_free(pf);
    strata_results_free(r);
}
END_TEST

enum { INTERNED_NAME, INTERNED_ARG_NAME, INTERNED_CATEGORY, INTERNED_STRING };

/* An interned string of the trace (iid -> text) of kind `which`, from any
 * packet's interned data (one sequence, never cleared after the first);
 * "" when none: the text lives as long as t. */
static const char *interned(const Perfetto__Protos__Trace *t, int which, uint64_t iid)
{
    ck_assert(t->packet[0]->interned_data != NULL);
    for (size_t k = 0; k < t->n_packet; k++) {
        const Perfetto__Protos__InternedData *d = t->packet[k]->interned_data;
        if (!d)
            continue;
        if (which == INTERNED_NAME)
            for (size_t i = 0; i < d->n_event_names; i++)
                if (d->event_names[i]->iid == iid)
                    return d->event_names[i]->name;
        if (which == INTERNED_ARG_NAME)
            for (size_t i = 0; i < d->n_debug_annotation_names; i++)
                if (d->debug_annotation_names[i]->iid == iid)
                    return d->debug_annotation_names[i]->name;
        if (which == INTERNED_CATEGORY)
            for (size_t i = 0; i < d->n_event_categories; i++)
                if (d->event_categories[i]->iid == iid)
                    return d->event_categories[i]->name;
        if (which == INTERNED_STRING)
            for (size_t i = 0; i < d->n_debug_annotation_string_values; i++)
                if (d->debug_annotation_string_values[i]->iid == iid) {
                    const ProtobufCBinaryData *s = &d->debug_annotation_string_values[i]->str;
                    char *text = g_strndup((const char *)s->data, s->len);
                    const char *kept = g_intern_string(text);
                    g_free(text);
                    return kept;
                }
    }
    return "";
}

/* The exact times and values, by hand from sample_results: "copy w2" on
 * pcie #2 (tid 7, uuid 14) from 250,000 to 750,000 ns; buffer A ("param",
 * offset 0, 1,024 B, buffer 7) on hbm buffers (tid 4, uuid 8) from 0 to
 * 500,000 ns; the last sample at 500,000 ns: allocated 2,048, reserved
 * 3,072, param 0. Times: the spans come first, k1 (0 to 1,000,000 ns) as
 * deltas (0, then 1,000,000), which takes the delta clock to 1,000,000 ns;
 * every later time lies before it, and is absolute, but buffer B's end
 * (live at the end: the makespan, 1,000,000 ns, a delta of 0): the 6 other
 * spans' begins and ends (12), buffer A's two and B's begin (3), the 3
 * samples' (3), 18 in all. */
START_TEST(pftrace_exact_times)
{
    strata_results *r = sample_results();
    char *pf = write_sample_as(r, "t.perfetto-trace");
    pf_counts c;
    Perfetto__Protos__Trace *t = unpack_pftrace(pf, &c);
    ck_assert_uint_eq(t->packet[0]->sequence_flags,
                      PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED);
    bool w2 = false, a = false, last = false;
    for (size_t i = 0; i + 1 < t->n_packet; i++) {
        const Perfetto__Protos__TracePacket *p = t->packet[i], *next = t->packet[i + 1];
        const Perfetto__Protos__TrackEvent *e = p->track_event;
        if (p->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT)
            continue;
        if (e->track_uuid == 14 && e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN) {
            ck_assert_str_eq(e->name, "copy w2");
            ck_assert_uint_eq(c.ns[i], 250000);
            ck_assert_uint_eq(c.ns[i + 1], 750000);
            ck_assert_uint_eq(next->track_event->track_uuid, 14);
            w2 = true;
        }
        if (e->track_uuid == 8 && e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN) {
            ck_assert_str_eq(interned(t, INTERNED_NAME, e->name_iid), "param");
            ck_assert_uint_eq(c.ns[i], 0);
            ck_assert_uint_eq(c.ns[i + 1], 500000);
            ck_assert_uint_eq(e->n_debug_annotations, 4);
            const char *names[4] = {"offset", "size", "tag", "buffer"};
            const uint64_t values[4] = {0, 1024, 0, 7};
            for (int k = 0; k < 4; k++) {
                ck_assert_str_eq(interned(t, INTERNED_ARG_NAME, e->debug_annotations[k]->name_iid), names[k]);
                if (k != 2)
                    ck_assert_uint_eq(e->debug_annotations[k]->uint_value, values[k]);
            }
            ck_assert_int_eq(e->debug_annotations[2]->value_case,
                             PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID);
            ck_assert_str_eq(interned(t, INTERNED_STRING, e->debug_annotations[2]->string_value_iid), "param");
            a = true;
        }
        if (e->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER && c.ns[i] == 500000) {
            ck_assert_int_eq(e->counter_value, 2048);
            ck_assert_uint_eq(e->n_extra_counter_values, 2);
            ck_assert_int_eq(e->extra_counter_values[0], 3072);
            ck_assert_int_eq(e->extra_counter_values[1], 0);
            last = true;
        }
    }
    ck_assert(w2 && a && last);
    ck_assert_uint_eq(c.absolute, 18);
    for (size_t i = 1; i < t->n_packet; i++)
        if (t->packet[i]->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT) {
            ck_assert(!t->packet[i]->has_timestamp_clock_id && !t->packet[i + 1]->has_timestamp_clock_id);
            ck_assert_uint_eq(t->packet[i]->timestamp, 0);
            ck_assert_uint_eq(t->packet[i + 1]->timestamp, 1000000); /* k1, the first event */
            break;
        }
    g_free(c.ns);
    perfetto__protos__trace__free_unpacked(t, NULL);
    g_free(pf);
    strata_results_free(r);
}
END_TEST

static gint by_text(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "k=v" args sorted and joined by ';' (sorts and frees args). */
static char *joined_args(GPtrArray *args)
{
    g_ptr_array_sort(args, by_text);
    g_ptr_array_add(args, NULL);
    char *s = g_strjoinv(";", (char **)args->pdata);
    g_ptr_array_free(args, TRUE);
    return s;
}

/* The JSON's slices as "TRACK|NAME|CAT|BEGIN_NS|END_NS|ARGS", sorted. */
static GPtrArray *json_slices(const parsed *p)
{
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < json_array_get_length(p->events); i++) {
        JsonObject *e = json_array_get_object_element(p->events, i);
        if (strcmp(json_object_get_string_member(e, "ph"), "X") != 0)
            continue;
        GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
        JsonObject *a = json_object_get_object_member(e, "args");
        GList *keys = json_object_get_members(a);
        for (GList *l = keys; l; l = l->next) {
            JsonNode *v = json_object_get_member(a, l->data);
            g_ptr_array_add(args, json_node_get_value_type(v) == G_TYPE_STRING
                                      ? g_strdup_printf("%s=%s", (char *)l->data, json_node_get_string(v))
                                      : g_strdup_printf("%s=%" G_GINT64_FORMAT, (char *)l->data, json_node_get_int(v)));
        }
        g_list_free(keys);
        char *joined = joined_args(args);
        int64_t ts = llround(json_object_get_double_member(e, "ts") * 1e3);
        int64_t dur = llround(json_object_get_double_member(e, "dur") * 1e3);
        g_ptr_array_add(out, g_strdup_printf("%s|%s|%s|%" G_GINT64_FORMAT "|%" G_GINT64_FORMAT "|%s", track_of(p, e),
                                             json_object_get_string_member(e, "name"),
                                             json_object_get_string_member(e, "cat"), ts, ts + dur, joined));
        g_free(joined);
    }
    g_ptr_array_sort(out, by_text);
    return out;
}

/* The .pftrace's slices as json_slices() writes them, every name, category
 * and string arg resolved through the interned data, each begin paired
 * with its end (the next packet) and times resolved as trace_processor
 * does (c->ns). */
static GPtrArray *pf_slices(const Perfetto__Protos__Trace *t, const pf_counts *c)
{
    GHashTable *tracks = g_hash_table_new(g_int64_hash, g_int64_equal); /* uuid -> thread name */
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    for (size_t i = 0; i < t->n_packet; i++) {
        const Perfetto__Protos__TracePacket *p = t->packet[i];
        if (p->data_case == PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR && p->track_descriptor->thread)
            g_hash_table_insert(tracks, &p->track_descriptor->uuid, p->track_descriptor->thread->thread_name);
        if (p->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT ||
            p->track_event->type != PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN)
            continue;
        const Perfetto__Protos__TrackEvent *e = p->track_event;
        ck_assert_uint_lt(i + 1, t->n_packet);
        ck_assert_int_eq(t->packet[i + 1]->track_event->type, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END);
        GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
        for (size_t k = 0; k < e->n_debug_annotations; k++) {
            const Perfetto__Protos__DebugAnnotation *a = e->debug_annotations[k];
            const char *name = interned(t, INTERNED_ARG_NAME, a->name_iid);
            if (a->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE)
                g_ptr_array_add(args, g_strdup_printf("%s=%" G_GUINT64_FORMAT, name, a->uint_value));
            else if (a->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID)
                g_ptr_array_add(args,
                                g_strdup_printf("%s=%s", name, interned(t, INTERNED_STRING, a->string_value_iid)));
            else
                ck_abort_msg("arg %s: neither an integer nor an interned string", name);
        }
        char *joined = joined_args(args);
        const char *track = g_hash_table_lookup(tracks, &e->track_uuid);
        ck_assert_msg(track != NULL, "slice on track %" G_GUINT64_FORMAT " before its descriptor", e->track_uuid);
        ck_assert_uint_eq(e->n_category_iids, 1);
        g_ptr_array_add(out, g_strdup_printf("%s|%s|%s|%" G_GUINT64_FORMAT "|%" G_GUINT64_FORMAT "|%s", track,
                                             e->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME
                                                 ? e->name
                                                 : interned(t, INTERNED_NAME, e->name_iid),
                                             interned(t, INTERNED_CATEGORY, e->category_iids[0]), c->ns[i],
                                             c->ns[i + 1], joined));
        g_free(joined);
    }
    g_hash_table_unref(tracks);
    g_ptr_array_sort(out, by_text);
    return out;
}

/* Decoded to (track, name, category, begin, end, args), the .pftrace's
 * slices are the JSON's, one for one: every interned name, category and
 * string value resolves to the JSON's text, every time to its ns. */
START_TEST(pftrace_slices_are_the_json_slices)
{
    strata_results *r = sample_results();
    char *json = write_sample(r), *pf = write_sample_as(r, "t.pftrace");
    parsed p = parse_timeline(json);
    pf_counts c;
    Perfetto__Protos__Trace *t = unpack_pftrace(pf, &c);
    GPtrArray *want = json_slices(&p), *got = pf_slices(t, &c);
    ck_assert_uint_eq(want->len, 9);
    ck_assert_uint_eq(got->len, want->len);
    for (guint i = 0; i < want->len; i++)
        ck_assert_str_eq(g_ptr_array_index(got, i), g_ptr_array_index(want, i));
    /* The first, by hand (sample_results): w2, op 2 on line 3, 4,096 B
     * host to hbm over [0.25, 0.75] ms, overlaps w1 on dma: lane dma #2. */
    ck_assert_str_eq(g_ptr_array_index(want, 0),
                     "dma #2|copy w2|copy|250000|750000|bytes=4096;from=host;line=3;op=2;to=hbm");
    g_ptr_array_unref(want);
    g_ptr_array_unref(got);
    g_free(c.ns);
    perfetto__protos__trace__free_unpacked(t, NULL);
    parsed_clear(&p);
    g_free(json);
    g_free(pf);
    strata_results_free(r);
}
END_TEST

/* A record takes no time (engine.c: only a copy, a compute and a wait move
 * the clock): sample_results plus, on stream dma at 0.95 ms, "record e1"
 * (op 5, line 6) and then "wait e1" (op 6, line 7), which did not block
 * (0 long). Each takes the lane of dma that frees first: the record
 * dma #2 (free since w2's end, 0.75 ms; tid 6, uuid 12), then the wait
 * dma (free since w3's end, 0.9 ms). The record is an instant event,
 * "ph":"i" with "s":"t" at ts 950 us, args {op 5, line 6, bytes 0}, and
 * no "X"; in the .pftrace one TYPE_INSTANT packet at 950,000 ns with the
 * same name and args and no slice; the wait stays a slice of length 0
 * (10 slices: the 9 of pftrace_same_events_as_json and the wait). */
START_TEST(a_record_is_an_instant_event)
{
    strata_results *r = sample_results();
    const char *names[2] = {"e1", "e1"};
    const strata_op_kind kinds[2] = {STRATA_OP_RECORD, STRATA_OP_WAIT};
    for (int i = 0; i < 2; i++) {
        strata_op_span *s = strata_results_add_span(r, names[i]);
        s->op_index = 5 + (uint64_t)i;
        s->line = 6 + (uint64_t)i;
        s->kind = kinds[i];
        s->stream = 1;
        s->start_s = s->end_s = 0.95e-3;
        s->memory = s->src_memory = s->dst_memory = -1;
    }
    char *json = write_sample(r), *pf = write_sample_as(r, "t.pftrace");
    parsed p = parse_timeline(json);
    guint instants = 0;
    for (guint i = 0; i < json_array_get_length(p.events); i++) {
        JsonObject *e = json_array_get_object_element(p.events, i);
        if (strcmp(json_object_get_string_member(e, "ph"), "i") != 0)
            continue;
        instants++;
        ck_assert_str_eq(json_object_get_string_member(e, "name"), "record e1");
        ck_assert_str_eq(json_object_get_string_member(e, "cat"), "record");
        ck_assert_str_eq(json_object_get_string_member(e, "s"), "t");
        ck_assert_str_eq(track_of(&p, e), "dma #2");
        ck_assert_double_eq(json_object_get_double_member(e, "ts"), 950);
        ck_assert(!json_object_has_member(e, "dur"));
        JsonObject *args = json_object_get_object_member(e, "args");
        ck_assert_int_eq(json_object_get_int_member(args, "op"), 5);
        ck_assert_int_eq(json_object_get_int_member(args, "line"), 6);
        ck_assert_int_eq(json_object_get_int_member(args, "bytes"), 0);
    }
    ck_assert_uint_eq(instants, 1);
    JsonObject *wait = NULL;
    ck_assert_uint_eq(count_x(&p, "record e1", NULL, NULL), 0);
    ck_assert_uint_eq(count_x(&p, "wait e1", NULL, &wait), 1);
    ck_assert_str_eq(track_of(&p, wait), "dma");
    ck_assert_double_eq(json_object_get_double_member(wait, "dur"), 0);
    ck_assert_uint_eq(count_x(&p, NULL, NULL, NULL), 10);

    pf_counts c;
    Perfetto__Protos__Trace *t = unpack_pftrace(pf, &c);
    ck_assert_uint_eq(c.begins, 10);
    ck_assert_uint_eq(c.ends, 10);
    ck_assert_uint_eq(c.instants, 1);
    for (size_t i = 0; i < t->n_packet; i++) {
        const Perfetto__Protos__TracePacket *k = t->packet[i];
        if (k->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT ||
            k->track_event->type != PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT)
            continue;
        const Perfetto__Protos__TrackEvent *e = k->track_event;
        ck_assert_uint_eq(c.ns[i], 950000);
        ck_assert_uint_eq(e->track_uuid, 12); /* lane dma #2: tid 6 */
        ck_assert_int_eq(e->name_field_case, PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME);
        ck_assert_str_eq(e->name, "record e1");
        ck_assert_uint_eq(e->n_category_iids, 1);
        ck_assert_str_eq(interned(t, INTERNED_CATEGORY, e->category_iids[0]), "record");
        ck_assert_uint_eq(e->n_debug_annotations, 3);
        const char *want[3] = {"op", "line", "bytes"};
        const uint64_t values[3] = {5, 6, 0};
        for (int a = 0; a < 3; a++) {
            ck_assert_str_eq(interned(t, INTERNED_ARG_NAME, e->debug_annotations[a]->name_iid), want[a]);
            ck_assert_uint_eq(e->debug_annotations[a]->uint_value, values[a]);
        }
    }
    g_free(c.ns);
    perfetto__protos__trace__free_unpacked(t, NULL);
    parsed_clear(&p);
    g_free(json);
    g_free(pf);
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


/* Spans on one stream ("main") from spans[i][0] to spans[i][1], in that
 * order: each must go on the earliest free of the track's lanes, by (end,
 * lane number), or a new one when none is free at its start, as a linear
 * scan over the lanes finds it. The number of lanes. */
static guint check_lanes(const double (*spans)[2], int n)
{
    strata_results *r = strata_results_new("engine");
    r->makespan_s = 2e-3;
    strata_results_add_stream(r, "main");
    double *ends = g_new(double, n);
    guint *expect = g_new(guint, n), lanes = 0;
    for (int i = 0; i < n; i++) {
        strata_op_span *s = strata_results_add_span(r, "k");
        s->kind = STRATA_OP_COMPUTE;
        s->memory = s->src_memory = s->dst_memory = -1;
        s->start_s = spans[i][0];
        s->end_s = spans[i][1];
        guint best = lanes;
        for (guint l = 0; l < lanes; l++)
            if (best == lanes || ends[l] < ends[best])
                best = l; /* ties go to the lower lane number */
        if (best == lanes || ends[best] > s->start_s)
            best = lanes++; /* the earliest free is busy at the start: a new lane */
        ends[best] = s->end_s;
        expect[i] = best;
    }
    char *path = write_sample(r);
    parsed p = parse_timeline(path);
    int k = 0;
    for (guint i = 0; i < json_array_get_length(p.events); i++) {
        JsonObject *e = json_array_get_object_element(p.events, i);
        if (strcmp(json_object_get_string_member(e, "ph"), "X") != 0)
            continue;
        ck_assert_int_lt(k, n);
        char *want = expect[k] ? g_strdup_printf("main #%u", expect[k] + 1) : g_strdup("main");
        ck_assert_str_eq(track_of(&p, e), want);
        g_free(want);
        k++;
    }
    ck_assert_int_eq(k, n);
    parsed_clear(&p);
    g_free(path);
    g_free(ends);
    g_free(expect);
    strata_results_free(r);
    return lanes;
}

/* 300 computes at random starts in [0, 1 ms], 0 to 0.2 ms long, in no
 * time order: tens of lanes (timeline.c keeps them in a heap and sinks a
 * taken lane bottom up). */
START_TEST(lanes_are_the_earliest_free)
{
    enum { N = 300 };
    double spans[N][2];
    GRand *rand = g_rand_new_with_seed(7);
    for (int i = 0; i < N; i++) {
        spans[i][0] = g_rand_double_range(rand, 0, 1e-3);
        spans[i][1] = spans[i][0] + g_rand_double_range(rand, 0, 2e-4);
    }
    g_rand_free(rand);
    ck_assert_uint_gt(check_lanes(spans, N), 20);
}
END_TEST

/* As buffers come (written when freed): ends in time order, by groups of
 * 3 and of 25 equal ends (ties, broken by lane number), each start up to
 * 0.1 ms before its end; then 100 in no time order. */
START_TEST(lanes_in_time_order_are_the_earliest_free)
{
    enum { N = 400, ORDERED = 300 };
    double spans[N][2];
    GRand *rand = g_rand_new_with_seed(11);
    for (int i = 0; i < N; i++) {
        double end = i < ORDERED / 2   ? 1e-6 * (i / 3 + 1)
                     : i < ORDERED ? 1e-6 * (ORDERED / 6 + (i - ORDERED / 2) / 25 + 1)
                                   : g_rand_double_range(rand, 0, 2e-4);
        spans[i][1] = end;
        spans[i][0] = MAX(0.0, end - g_rand_double_range(rand, 0, 1e-4));
    }
    g_rand_free(rand);
    ck_assert_uint_gt(check_lanes(spans, N), 20);
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
    tcase_add_test(tc, pftrace_same_events_as_json);
    tcase_add_test(tc, pftrace_exact_times);
    tcase_add_test(tc, pftrace_slices_are_the_json_slices);
    tcase_add_test(tc, a_record_is_an_instant_event);
    tcase_add_test(tc, no_spans_is_a_valid_empty_timeline);
    tcase_add_test(tc, unwritable_path_is_an_error);
    tcase_add_test(tc, events_on_a_track_never_overlap);
    tcase_add_test(tc, lanes_are_the_earliest_free);
    tcase_add_test(tc, lanes_in_time_order_are_the_earliest_free);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
