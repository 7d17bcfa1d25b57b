/*
 * timeline.c: a run's spans and memory samples as a Chrome trace-event /
 * Perfetto JSON timeline (strata_results_write_timeline, results.h). It
 * opens in ui.perfetto.dev and chrome://tracing, and viz/ reads it for the
 * memory, address-space and link plots.
 *
 * Layout (pids and tids are small integers, names come from "M" metadata):
 *   pid 1 "streams"   one track per stream: an "X" event per op
 *   pid 2 "links"     one track per link: an "X" event per copy on it
 *                     (links named by results->links; a copy whose span
 *                     carries no link_mask goes on a track named after its
 *                     memories, "host->hbm")
 *   pid 3 "memories"  per memory: an "X" event per buffer lifetime, with
 *                     args {offset, size, tag, buffer} (the address-space
 *                     map), a counter "NAME in use" {allocated, reserved}
 *                     and a counter "NAME by tag" {TAG: bytes...}
 * Times are microseconds (ts, dur), printed with nanosecond precision.
 *
 * Invariants:
 *  1. events on one track never overlap: an event that would overlap the
 *     last one on its track goes on the track's next lane ("pcie #2"), so
 *     every track nests properly in every viewer;
 *  2. the output depends only on the results (deterministic bytes);
 *  3. the file is written atomically (core/outfile.h).
 */
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "core/outfile.h"
#include "results/results.h"

enum { PID_STREAMS = 1, PID_LINKS = 2, PID_MEMORIES = 3 };

/* A named track with lanes: lane i ends at ends[i]. */
typedef struct track {
    char *name;
    int pid;
    int first_tid;      /* tids first_tid.. are its lanes */
    GArray *ends;       /* double: end time of each lane's last event */
} track;

typedef struct timeline {
    GString *out;
    bool first_event;
    GPtrArray *tracks;  /* track *, in creation order */
    int next_tid;       /* tids are unique across the file */
    GHashTable *by_name; /* "pid/name" -> track */
} timeline;

static void track_free(gpointer p)
{
    track *t = p;
    g_free(t->name);
    g_array_unref(t->ends);
    g_free(t);
}

static void json_string(GString *s, const char *text)
{
    g_string_append_c(s, '"');
    for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p; p++) {
        switch (*p) {
        case '"': g_string_append(s, "\\\""); break;
        case '\\': g_string_append(s, "\\\\"); break;
        case '\n': g_string_append(s, "\\n"); break;
        case '\t': g_string_append(s, "\\t"); break;
        case '\r': g_string_append(s, "\\r"); break;
        default:
            if (*p < 0x20)
                g_string_append_printf(s, "\\u%04x", *p);
            else
                g_string_append_c(s, (char)*p);
        }
    }
    g_string_append_c(s, '"');
}

/* Microseconds with nanosecond precision; locale-independent. */
static void json_us(GString *s, double seconds)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    double us = seconds * 1e6;
    if (!isfinite(us))
        us = 0;
    g_ascii_formatd(buf, sizeof buf, "%.3f", us);
    g_string_append(s, buf);
}

static void begin_event(timeline *tl)
{
    g_string_append(tl->out, tl->first_event ? "\n  " : ",\n  ");
    tl->first_event = false;
}

static void meta(timeline *tl, const char *what, int pid, int tid, const char *key, const char *name, long sort)
{
    begin_event(tl);
    g_string_append_printf(tl->out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"args\":{\"%s\":", what,
                           pid, tid, key);
    if (name)
        json_string(tl->out, name);
    else
        g_string_append_printf(tl->out, "%ld", sort);
    g_string_append(tl->out, "}}");
}

static track *get_track(timeline *tl, int pid, const char *name)
{
    char *key = g_strdup_printf("%d/%s", pid, name);
    track *t = g_hash_table_lookup(tl->by_name, key);
    if (t) {
        g_free(key);
        return t;
    }
    t = g_new0(track, 1);
    t->name = g_strdup(name);
    t->pid = pid;
    t->ends = g_array_new(FALSE, FALSE, sizeof(double));
    g_ptr_array_add(tl->tracks, t);
    g_hash_table_insert(tl->by_name, key, t);
    return t;
}

/* The first lane of t free at `start`, creating one when all are busy.
 * Lane tids are assigned at the end (tracks_assign_tids) so that a track's
 * lanes are consecutive: events store (track, lane) until then. */
static guint take_lane(track *t, double start, double end)
{
    guint i = 0;
    for (; i < t->ends->len; i++)
        if (g_array_index(t->ends, double, i) <= start)
            break;
    if (i == t->ends->len)
        g_array_append_val(t->ends, end);
    else
        g_array_index(t->ends, double, i) = end;
    return i;
}

/* An event waiting for its tid. */
typedef struct pending {
    track *t;
    guint lane;
    double start, end;
    char *name, *cat;
    char *args; /* JSON object text */
} pending;

static void pending_clear(gpointer p)
{
    pending *e = p;
    g_free(e->name);
    g_free(e->cat);
    g_free(e->args);
}

static void add_x(GArray *events, track *t, double start, double end, const char *name, const char *cat,
                  char *args)
{
    if (end < start)
        end = start;
    pending e = {.t = t, .start = start, .end = end, .name = g_strdup(name), .cat = g_strdup(cat), .args = args};
    e.lane = take_lane(t, start, end);
    g_array_append_val(events, e);
}

static void assign_tids_and_names(timeline *tl)
{
    const char *pnames[] = {NULL, "streams", "links", "memories"};
    for (int pid = PID_STREAMS; pid <= PID_MEMORIES; pid++) {
        meta(tl, "process_name", pid, 0, "name", pnames[pid], 0);
        meta(tl, "process_sort_index", pid, 0, "sort_index", NULL, pid);
    }
    for (guint i = 0; i < tl->tracks->len; i++) {
        track *t = g_ptr_array_index(tl->tracks, i);
        t->first_tid = tl->next_tid;
        guint lanes = t->ends->len ? t->ends->len : 1;
        tl->next_tid += (int)lanes;
        for (guint l = 0; l < lanes; l++) {
            char *name = l ? g_strdup_printf("%s #%u", t->name, l + 1) : g_strdup(t->name);
            meta(tl, "thread_name", t->pid, t->first_tid + (int)l, "name", name, 0);
            meta(tl, "thread_sort_index", t->pid, t->first_tid + (int)l, "sort_index", NULL, t->first_tid + (long)l);
            g_free(name);
        }
    }
}

static void emit_x(timeline *tl, const pending *e)
{
    begin_event(tl);
    GString *s = tl->out;
    g_string_append(s, "{\"ph\":\"X\",\"name\":");
    json_string(s, e->name);
    g_string_append(s, ",\"cat\":");
    json_string(s, e->cat);
    g_string_append_printf(s, ",\"pid\":%d,\"tid\":%d,\"ts\":", e->t->pid, e->t->first_tid + (int)e->lane);
    json_us(s, e->start);
    g_string_append(s, ",\"dur\":");
    json_us(s, e->end - e->start);
    if (e->args)
        g_string_append_printf(s, ",\"args\":%s", e->args);
    g_string_append_c(s, '}');
}

static const char *memory_name(const strata_results *r, int32_t index)
{
    if (index < 0 || !r->memories || (guint)index >= r->memories->len)
        return "?";
    return g_array_index(r->memories, strata_memory_result, index).name;
}

static void add_op_events(timeline *tl, const strata_results *r, GArray *events)
{
    if (!r->spans)
        return;
    /* Tracks for every stream and link first, so their order is the results' order. */
    for (guint i = 0; r->streams && i < r->streams->len; i++)
        get_track(tl, PID_STREAMS, g_array_index(r->streams, strata_stream_result, i).name);
    for (guint i = 0; r->links && i < r->links->len; i++)
        get_track(tl, PID_LINKS, g_array_index(r->links, strata_link_result, i).name);
    for (guint i = 0; i < r->spans->len; i++) {
        const strata_op_span *sp = &g_array_index(r->spans, strata_op_span, i);
        const char *kind = strata_op_kind_name(sp->kind);
        const char *stream = r->streams && sp->stream < r->streams->len
                                 ? g_array_index(r->streams, strata_stream_result, sp->stream).name
                                 : "main";
        GString *args = g_string_new(NULL);
        g_string_append_printf(args, "{\"op\":%" G_GUINT64_FORMAT ",\"line\":%" G_GUINT64_FORMAT
                               ",\"bytes\":%" G_GUINT64_FORMAT,
                               sp->op_index, sp->line, sp->bytes);
        if (sp->kind == STRATA_OP_COPY) {
            g_string_append(args, ",\"from\":");
            json_string(args, memory_name(r, sp->src_memory));
            g_string_append(args, ",\"to\":");
            json_string(args, memory_name(r, sp->dst_memory));
        } else if (sp->memory >= 0) {
            g_string_append(args, ",\"memory\":");
            json_string(args, memory_name(r, sp->memory));
        }
        g_string_append_c(args, '}');
        char *label = sp->label && *sp->label ? g_strdup_printf("%s %s", kind, sp->label) : g_strdup(kind);
        add_x(events, get_track(tl, PID_STREAMS, stream), sp->start_s, sp->end_s, label, kind,
              g_strdup(args->str));
        if (sp->kind == STRATA_OP_COPY) {
            bool placed = false;
            for (guint l = 0; r->links && l < r->links->len && l < 64; l++)
                if (sp->link_mask & ((uint64_t)1 << l)) {
                    add_x(events, get_track(tl, PID_LINKS, g_array_index(r->links, strata_link_result, l).name),
                          sp->start_s, sp->end_s, label, "copy", g_strdup(args->str));
                    placed = true;
                }
            if (!placed && sp->src_memory != sp->dst_memory) {
                char *name = g_strdup_printf("%s->%s", memory_name(r, sp->src_memory), memory_name(r, sp->dst_memory));
                add_x(events, get_track(tl, PID_LINKS, name), sp->start_s, sp->end_s, label, "copy",
                      g_strdup(args->str));
                g_free(name);
            }
        }
        g_free(label);
        g_string_free(args, TRUE);
    }
}

typedef struct live_buffer {
    double start;
    uint64_t offset, size;
    strata_tag tag;
} live_buffer;

static void append_buffer_event(timeline *tl, GArray *events, const strata_results *r, uint32_t memory,
                                uint64_t id, const live_buffer *b, double end)
{
    char *track_name = g_strdup_printf("%s buffers", memory_name(r, (int32_t)memory));
    const char *tag = b->tag != STRATA_TAG_NONE ? strata_tag_name(b->tag) : "untagged";
    char *args = g_strdup_printf("{\"offset\":%" G_GUINT64_FORMAT ",\"size\":%" G_GUINT64_FORMAT
                                 ",\"tag\":\"%s\",\"buffer\":%" G_GUINT64_FORMAT "}",
                                 b->offset, b->size, tag, id);
    add_x(events, get_track(tl, PID_MEMORIES, track_name), b->start, end, tag, "buffer", args);
    g_free(track_name);
}

/* Buffer lifetimes from pairs of samples (+size, -size) per (memory, id). */
static void add_buffer_events(timeline *tl, const strata_results *r, GArray *events)
{
    if (!r->mem_samples)
        return;
    for (guint m = 0; r->memories && m < r->memories->len; m++) {
        char *name = g_strdup_printf("%s buffers", memory_name(r, (int32_t)m));
        get_track(tl, PID_MEMORIES, name);
        g_free(name);
    }
    GHashTable *live = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    GArray *order = g_array_new(FALSE, FALSE, sizeof(gint64)); /* keys in alloc order, for the end */
    for (guint i = 0; i < r->mem_samples->len; i++) {
        const strata_mem_sample *s = &g_array_index(r->mem_samples, strata_mem_sample, i);
        gint64 key = (gint64)(((uint64_t)s->memory << 48) ^ s->buffer_id);
        if (s->delta > 0) {
            live_buffer *b = g_new0(live_buffer, 1);
            b->start = s->t_s;
            b->offset = s->offset;
            b->size = (uint64_t)s->delta;
            b->tag = s->tag;
            gint64 *k = g_new(gint64, 1);
            *k = key;
            g_hash_table_replace(live, k, b);
            g_array_append_val(order, key);
        } else if (s->delta < 0) {
            live_buffer *b = g_hash_table_lookup(live, &key);
            if (b) {
                append_buffer_event(tl, events, r, s->memory, s->buffer_id, b, s->t_s);
                g_hash_table_remove(live, &key);
            }
        }
    }
    /* Buffers live at the end span to the makespan (or their start). */
    for (guint i = 0; i < order->len; i++) {
        gint64 key = g_array_index(order, gint64, i);
        live_buffer *b = g_hash_table_lookup(live, &key);
        if (!b)
            continue;
        uint32_t memory = (uint32_t)((uint64_t)key >> 48);
        uint64_t id = (uint64_t)key & (((uint64_t)1 << 48) - 1);
        append_buffer_event(tl, events, r, memory, id, b, MAX(r->makespan_s, b->start));
        g_hash_table_remove(live, &key);
    }
    g_array_unref(order);
    g_hash_table_unref(live);
}

static void add_counters(timeline *tl, const strata_results *r)
{
    if (!r->mem_samples)
        return;
    guint n_mem = r->memories ? r->memories->len : 0;
    for (guint i = 0; i < r->mem_samples->len; i++)
        n_mem = MAX(n_mem, g_array_index(r->mem_samples, strata_mem_sample, i).memory + 1);
    /* Bytes per tag per memory, updated sample by sample. */
    int64_t *by_tag = g_new0(int64_t, (gsize)n_mem * STRATA_TAG__COUNT);
    bool *tag_seen = g_new0(bool, (gsize)n_mem * STRATA_TAG__COUNT);
    for (guint i = 0; i < r->mem_samples->len; i++) {
        const strata_mem_sample *s = &g_array_index(r->mem_samples, strata_mem_sample, i);
        if ((guint)s->tag < STRATA_TAG__COUNT)
            tag_seen[(gsize)s->memory * STRATA_TAG__COUNT + s->tag] = true;
    }
    for (guint i = 0; i < r->mem_samples->len; i++) {
        const strata_mem_sample *s = &g_array_index(r->mem_samples, strata_mem_sample, i);
        const char *mem = memory_name(r, (int32_t)s->memory);
        GString *o = tl->out;
        begin_event(tl);
        g_string_append(o, "{\"ph\":\"C\",\"name\":");
        char *cname = g_strdup_printf("%s in use", mem);
        json_string(o, cname);
        g_free(cname);
        g_string_append_printf(o, ",\"pid\":%d,\"tid\":0,\"ts\":", PID_MEMORIES);
        json_us(o, s->t_s);
        g_string_append_printf(o, ",\"args\":{\"allocated\":%" G_GUINT64_FORMAT ",\"reserved\":%" G_GUINT64_FORMAT "}}",
                               s->allocated, s->reserved);
        if ((guint)s->tag >= STRATA_TAG__COUNT)
            continue;
        int64_t *row = by_tag + (gsize)s->memory * STRATA_TAG__COUNT;
        row[s->tag] += s->delta;
        begin_event(tl);
        g_string_append(o, "{\"ph\":\"C\",\"name\":");
        cname = g_strdup_printf("%s by tag", mem);
        json_string(o, cname);
        g_free(cname);
        g_string_append_printf(o, ",\"pid\":%d,\"tid\":0,\"ts\":", PID_MEMORIES);
        json_us(o, s->t_s);
        g_string_append(o, ",\"args\":{");
        bool first = true;
        for (int t = 0; t < STRATA_TAG__COUNT; t++) {
            if (!tag_seen[(gsize)s->memory * STRATA_TAG__COUNT + t])
                continue;
            g_string_append_printf(o, "%s\"%s\":%" G_GINT64_FORMAT, first ? "" : ",",
                                   t == STRATA_TAG_NONE ? "untagged" : strata_tag_name((strata_tag)t),
                                   MAX(row[t], 0));
            first = false;
        }
        g_string_append(o, "}}");
    }
    g_free(by_tag);
    g_free(tag_seen);
}

bool strata_results_write_timeline(const strata_results *r, const char *path, GError **err)
{
    strata_outfile *of = strata_outfile_open(path, err);
    if (!of)
        return false;
    timeline tl = {.out = g_string_new(NULL), .first_event = true, .next_tid = 1};
    tl.tracks = g_ptr_array_new_with_free_func(track_free);
    tl.by_name = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GArray *events = g_array_new(FALSE, FALSE, sizeof(pending));
    g_array_set_clear_func(events, pending_clear);

    add_op_events(&tl, r, events);
    add_buffer_events(&tl, r, events);

    g_string_append(tl.out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":");
    json_string(tl.out, r->producer);
    g_string_append(tl.out, ",\"hardware\":");
    json_string(tl.out, r->hardware);
    g_string_append(tl.out, ",\"trace\":");
    json_string(tl.out, r->trace);
    g_string_append_printf(tl.out, ",\"status\":\"%s\",\"makespan_s\":", r->oom ? "oom" : "ok");
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.9g", r->makespan_s);
    g_string_append(tl.out, buf);
    g_string_append(tl.out, ",\"memories\":{");
    for (guint i = 0; r->memories && i < r->memories->len; i++) {
        const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        if (i)
            g_string_append_c(tl.out, ',');
        json_string(tl.out, m->name);
        g_string_append_printf(tl.out, ":{\"capacity_bytes\":%" G_GUINT64_FORMAT ",\"kind\":", m->capacity_bytes);
        json_string(tl.out, m->kind);
        g_string_append(tl.out, "}");
    }
    g_string_append(tl.out, "}},\n\"traceEvents\":[");
    assign_tids_and_names(&tl);
    for (guint i = 0; i < events->len; i++)
        emit_x(&tl, &g_array_index(events, pending, i));
    add_counters(&tl, r);
    g_string_append(tl.out, "\n]}\n");

    FILE *f = strata_outfile_stream(of);
    bool ok = fwrite(tl.out->str, 1, tl.out->len, f) == tl.out->len;
    if (!ok) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot write the timeline", path);
        strata_outfile_abort(of);
    } else {
        ok = strata_outfile_commit(of, err);
    }
    g_array_unref(events);
    g_hash_table_unref(tl.by_name);
    g_ptr_array_unref(tl.tracks);
    g_string_free(tl.out, TRUE);
    return ok;
}
