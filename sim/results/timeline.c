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
 * Times are microseconds (ts, dur), printed exactly from whole nanoseconds.
 *
 * The file is streamed: each event is written as it is made (a lane's
 * thread_name metadata when the lane opens), so memory stays bounded by the
 * live buffers and the open lanes, not by the size of the timeline.
 *
 * Invariants:
 *  1. events on one track never overlap: an event that would overlap the
 *     last one on its track goes on the track's next lane ("pcie #2"), so
 *     every track nests properly in every viewer; thread_sort_index keeps
 *     a track's lanes together, in the order stream, link, memory tracks;
 *  2. the output depends only on the results (deterministic bytes);
 *  3. the file is written atomically (core/outfile.h).
 */
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "core/outfile.h"
#include "results/results.h"

enum { PID_STREAMS = 1, PID_LINKS = 2, PID_MEMORIES = 3 };
enum { LANES_PER_TRACK = 100000 }; /* sort index stride between tracks */

/* A lane: its tid and the latest end of the events on it. */
typedef struct lane {
    double end;
    guint index;        /* lane number in its track (tie-break) */
    int tid;
} lane;

/* A named track with lanes, kept as a min-heap on (end, index): the lane
 * that frees first is at the top, so placing an event is O(log lanes). */
typedef struct track {
    char *name;
    int pid;
    long order;         /* creation order, for thread_sort_index */
    GArray *heap;       /* lane */
} track;

typedef struct timeline {
    FILE *out;
    GString *buf;        /* one event at a time */
    bool first_event;
    GPtrArray *tracks;   /* track *, in creation order */
    int next_tid;        /* tids are unique across the file */
    GHashTable *by_name; /* "pid/name" -> track */
} timeline;

static void track_free(gpointer p)
{
    track *t = p;
    g_free(t->name);
    g_array_unref(t->heap);
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

/* Whole nanoseconds, so that rounding is monotonic: an event that ends
 * before the next one starts still does once both are rounded. */
static int64_t to_ns(double seconds)
{
    double ns = seconds * 1e9;
    if (!isfinite(ns) || ns < 0)
        return 0;
    return (int64_t)llround(ns);
}

/* Microseconds printed exactly from nanoseconds: "1234.567". */
static void json_us(GString *s, int64_t ns)
{
    g_string_append_printf(s, "%" G_GINT64_FORMAT ".%03d", ns / 1000, (int)(ns % 1000));
}

/* Starts an event in tl->buf (after the separator). */
static GString *begin_event(timeline *tl)
{
    g_string_truncate(tl->buf, 0);
    g_string_append(tl->buf, tl->first_event ? "\n  " : ",\n  ");
    tl->first_event = false;
    return tl->buf;
}

static void end_event(timeline *tl)
{
    fwrite(tl->buf->str, 1, tl->buf->len, tl->out);
}

static void meta(timeline *tl, const char *what, int pid, int tid, const char *key, const char *name, long sort)
{
    GString *s = begin_event(tl);
    g_string_append_printf(s, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"args\":{\"%s\":", what, pid,
                           tid, key);
    if (name)
        json_string(s, name);
    else
        g_string_append_printf(s, "%ld", sort);
    g_string_append(s, "}}");
    end_event(tl);
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
    t->order = (long)tl->tracks->len;
    t->heap = g_array_new(FALSE, FALSE, sizeof(lane));
    g_ptr_array_add(tl->tracks, t);
    g_hash_table_insert(tl->by_name, key, t);
    return t;
}

static bool lane_before(const lane *a, const lane *b)
{
    return a->end < b->end || (a->end == b->end && a->index < b->index);
}

static void heap_sift_down(GArray *heap, guint i)
{
    lane *h = (lane *)(void *)heap->data;
    for (;;) {
        guint l = 2 * i + 1, r = l + 1, m = i;
        if (l < heap->len && lane_before(&h[l], &h[m]))
            m = l;
        if (r < heap->len && lane_before(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        lane tmp = h[i];
        h[i] = h[m];
        h[m] = tmp;
        i = m;
    }
}

static void heap_push(GArray *heap, lane l)
{
    g_array_append_val(heap, l);
    lane *h = (lane *)(void *)heap->data;
    for (guint i = heap->len - 1; i > 0;) {
        guint parent = (i - 1) / 2;
        if (!lane_before(&h[i], &h[parent]))
            break;
        lane tmp = h[i];
        h[i] = h[parent];
        h[parent] = tmp;
        i = parent;
    }
}

/* A new lane of t (free from time 0): a tid and its names. */
static void open_lane(timeline *tl, track *t)
{
    lane l = {.end = 0, .index = t->heap->len, .tid = tl->next_tid++};
    char *name = l.index ? g_strdup_printf("%s #%u", t->name, l.index + 1) : g_strdup(t->name);
    meta(tl, "thread_name", t->pid, l.tid, "name", name, 0);
    meta(tl, "thread_sort_index", t->pid, l.tid, "sort_index", NULL, t->order * LANES_PER_TRACK + (long)l.index);
    g_free(name);
    heap_push(t->heap, l);
}

/* The tid of the lane of t that frees first, when it is free at `start`
 * (else of a new lane); the lane is then busy until `end`. Every event on a
 * lane starts at or after the latest end of the events before it. */
static int take_lane(timeline *tl, track *t, double start, double end)
{
    if (t->heap->len == 0 || g_array_index(t->heap, lane, 0).end > start) {
        open_lane(tl, t);
        /* The new lane (end 0) is now at the top. */
    }
    lane *top = &g_array_index(t->heap, lane, 0);
    top->end = MAX(top->end, end);
    int tid = top->tid;
    heap_sift_down(t->heap, 0);
    return tid;
}

/* Writes an "X" event; args is a JSON object's text or NULL. */
static void emit_x(timeline *tl, track *t, double start, double end, const char *name, const char *cat,
                   const char *args)
{
    if (end < start)
        end = start;
    int tid = take_lane(tl, t, start, end);
    GString *s = begin_event(tl);
    g_string_append(s, "{\"ph\":\"X\",\"name\":");
    json_string(s, name);
    g_string_append(s, ",\"cat\":");
    json_string(s, cat);
    int64_t start_ns = to_ns(start), end_ns = to_ns(end);
    g_string_append_printf(s, ",\"pid\":%d,\"tid\":%d,\"ts\":", t->pid, tid);
    json_us(s, start_ns);
    g_string_append(s, ",\"dur\":");
    json_us(s, end_ns > start_ns ? end_ns - start_ns : 0);
    if (args)
        g_string_append_printf(s, ",\"args\":%s", args);
    g_string_append_c(s, '}');
    end_event(tl);
}

/* Names every track that has no lane yet, so empty streams and links show. */
static void name_empty_tracks(timeline *tl)
{
    for (guint i = 0; i < tl->tracks->len; i++) {
        track *t = g_ptr_array_index(tl->tracks, i);
        if (t->heap->len == 0)
            open_lane(tl, t);
    }
}

static const char *memory_name(const strata_results *r, int32_t index)
{
    if (index < 0 || !r->memories || (guint)index >= r->memories->len)
        return "?";
    return g_array_index(r->memories, strata_memory_result, index).name;
}

static void add_op_events(timeline *tl, const strata_results *r)
{
    if (!r->spans)
        return;
    GString *args = g_string_new(NULL);
    for (guint i = 0; i < r->spans->len; i++) {
        const strata_op_span *sp = &g_array_index(r->spans, strata_op_span, i);
        const char *kind = strata_op_kind_name(sp->kind);
        const char *stream = r->streams && sp->stream < r->streams->len
                                 ? g_array_index(r->streams, strata_stream_result, sp->stream).name
                                 : "main";
        g_string_printf(args, "{\"op\":%" G_GUINT64_FORMAT ",\"line\":%" G_GUINT64_FORMAT
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
        emit_x(tl, get_track(tl, PID_STREAMS, stream), sp->start_s, sp->end_s, label, kind, args->str);
        if (sp->kind == STRATA_OP_COPY) {
            bool placed = false;
            for (guint l = 0; r->links && l < r->links->len && l < 64; l++)
                if (sp->link_mask & ((uint64_t)1 << l)) {
                    emit_x(tl, get_track(tl, PID_LINKS, g_array_index(r->links, strata_link_result, l).name),
                           sp->start_s, sp->end_s, label, "copy", args->str);
                    placed = true;
                }
            if (!placed && sp->src_memory != sp->dst_memory) {
                char *name = g_strdup_printf("%s->%s", memory_name(r, sp->src_memory), memory_name(r, sp->dst_memory));
                emit_x(tl, get_track(tl, PID_LINKS, name), sp->start_s, sp->end_s, label, "copy", args->str);
                g_free(name);
            }
        }
        g_free(label);
    }
    g_string_free(args, TRUE);
}

typedef struct live_buffer {
    double start;
    uint64_t offset, size;
    strata_tag tag;
} live_buffer;

static void buffer_event(timeline *tl, const strata_results *r, uint32_t memory, uint64_t id,
                         const live_buffer *b, double end)
{
    char *track_name = g_strdup_printf("%s buffers", memory_name(r, (int32_t)memory));
    const char *tag = b->tag != STRATA_TAG_NONE ? strata_tag_name(b->tag) : "untagged";
    char *args = g_strdup_printf("{\"offset\":%" G_GUINT64_FORMAT ",\"size\":%" G_GUINT64_FORMAT
                                 ",\"tag\":\"%s\",\"buffer\":%" G_GUINT64_FORMAT "}",
                                 b->offset, b->size, tag, id);
    emit_x(tl, get_track(tl, PID_MEMORIES, track_name), b->start, end, tag, "buffer", args);
    g_free(args);
    g_free(track_name);
}

/* Buffer lifetimes from pairs of samples (+size, -size) per (memory, id). */
static void add_buffer_events(timeline *tl, const strata_results *r)
{
    if (!r->mem_samples)
        return;
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
                buffer_event(tl, r, s->memory, s->buffer_id, b, s->t_s);
                g_hash_table_remove(live, &key);
            }
        }
        /* Keep `order` from growing with every alloc of a long trace. */
        if (order->len > 4096 && order->len > 2 * g_hash_table_size(live)) {
            guint kept = 0;
            for (guint j = 0; j < order->len; j++) {
                gint64 k = g_array_index(order, gint64, j);
                if (g_hash_table_contains(live, &k))
                    g_array_index(order, gint64, kept++) = k;
            }
            g_array_set_size(order, kept);
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
        buffer_event(tl, r, memory, id, b, MAX(r->makespan_s, b->start));
        g_hash_table_remove(live, &key);
    }
    g_array_unref(order);
    g_hash_table_unref(live);
}

static void counter_head(GString *o, const char *mem, const char *what, double t)
{
    g_string_append(o, "{\"ph\":\"C\",\"name\":");
    char *cname = g_strdup_printf("%s %s", mem, what);
    json_string(o, cname);
    g_free(cname);
    g_string_append_printf(o, ",\"pid\":%d,\"tid\":0,\"ts\":", PID_MEMORIES);
    json_us(o, to_ns(t));
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
        GString *o = begin_event(tl);
        counter_head(o, mem, "in use", s->t_s);
        g_string_append_printf(o, ",\"args\":{\"allocated\":%" G_GUINT64_FORMAT ",\"reserved\":%" G_GUINT64_FORMAT "}}",
                               s->allocated, s->reserved);
        end_event(tl);
        if ((guint)s->tag >= STRATA_TAG__COUNT)
            continue;
        int64_t *row = by_tag + (gsize)s->memory * STRATA_TAG__COUNT;
        row[s->tag] += s->delta;
        o = begin_event(tl);
        counter_head(o, mem, "by tag", s->t_s);
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
        end_event(tl);
    }
    g_free(by_tag);
    g_free(tag_seen);
}

static void write_header(timeline *tl, const strata_results *r)
{
    GString *s = tl->buf;
    g_string_assign(s, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":");
    json_string(s, r->producer);
    g_string_append(s, ",\"hardware\":");
    json_string(s, r->hardware);
    g_string_append(s, ",\"trace\":");
    json_string(s, r->trace);
    g_string_append_printf(s, ",\"status\":\"%s\",\"makespan_s\":", r->oom ? "oom" : "ok");
    char num[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(num, sizeof num, "%.9g", r->makespan_s);
    g_string_append(s, num);
    g_string_append(s, ",\"memories\":{");
    for (guint i = 0; r->memories && i < r->memories->len; i++) {
        const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        if (i)
            g_string_append_c(s, ',');
        json_string(s, m->name);
        g_string_append_printf(s, ":{\"capacity_bytes\":%" G_GUINT64_FORMAT ",\"kind\":", m->capacity_bytes);
        json_string(s, m->kind);
        g_string_append(s, "}");
    }
    g_string_append(s, "}},\n\"traceEvents\":[");
    end_event(tl);
}

bool strata_results_write_timeline(const strata_results *r, const char *path, GError **err)
{
    strata_outfile *of = strata_outfile_open(path, err);
    if (!of)
        return false;
    if (!strata_results_write_timeline_to(r, strata_outfile_stream(of))) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot write the timeline", path);
        strata_outfile_abort(of);
        return false;
    }
    return strata_outfile_commit(of, err);
}

bool strata_results_write_timeline_to(const strata_results *r, FILE *out)
{
    timeline tl = {.out = out, .buf = g_string_new(NULL), .first_event = true, .next_tid = 1};
    tl.tracks = g_ptr_array_new_with_free_func(track_free);
    tl.by_name = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

    write_header(&tl, r);
    const char *pnames[] = {NULL, "streams", "links", "memories"};
    for (int pid = PID_STREAMS; pid <= PID_MEMORIES; pid++) {
        meta(&tl, "process_name", pid, 0, "name", pnames[pid], 0);
        meta(&tl, "process_sort_index", pid, 0, "sort_index", NULL, pid);
    }
    /* Tracks in the results' order: streams, links, then each memory. */
    if (r->spans) {
        for (guint i = 0; r->streams && i < r->streams->len; i++)
            get_track(&tl, PID_STREAMS, g_array_index(r->streams, strata_stream_result, i).name);
        for (guint i = 0; r->links && i < r->links->len; i++)
            get_track(&tl, PID_LINKS, g_array_index(r->links, strata_link_result, i).name);
    }
    if (r->mem_samples)
        for (guint m = 0; r->memories && m < r->memories->len; m++) {
            char *name = g_strdup_printf("%s buffers", memory_name(r, (int32_t)m));
            get_track(&tl, PID_MEMORIES, name);
            g_free(name);
        }
    name_empty_tracks(&tl);
    add_op_events(&tl, r);
    add_buffer_events(&tl, r);
    add_counters(&tl, r);
    fputs("\n]}\n", tl.out);

    bool ok = !ferror(tl.out);
    g_hash_table_unref(tl.by_name);
    g_ptr_array_unref(tl.tracks);
    g_string_free(tl.buf, TRUE);
    return ok;
}
