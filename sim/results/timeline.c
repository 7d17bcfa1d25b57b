/*
 * timeline.c: a run's spans and memory samples as a Chrome trace-event /
 * Perfetto JSON timeline (timeline.h; strata_results_write_timeline in
 * results.h). It opens in ui.perfetto.dev and chrome://tracing, and viz/
 * reads it for the memory, address-space and link plots.
 *
 * Layout (pids and tids are small integers, names come from "M" metadata):
 *   pid 1 "streams"   one track per stream: an "X" event per op, an "i"
 *                     event of thread scope ("s":"t") for an op that takes
 *                     no time (strata_tl_instant: a record, an alloc, a
 *                     free, a release), with the same args
 *   pid 2 "links"     one track per link: an "X" event per copy on it
 *                     (links named by results->links; a copy's span names
 *                     its route, which the results resolve to its links,
 *                     however many; a copy whose span carries no route, or
 *                     a route of no link, goes on a track named after its
 *                     memories, "host->hbm")
 *   with several devices (results->devices > 1), the streams of device D
 *   (the stream's place, named S@D) go instead to pid PID_DEVICE0 + D,
 *   "device D";
 *   pid 3 "memories"  per memory: an "X" event per buffer lifetime, with
 *                     args {offset, size, tag, buffer} (the address-space
 *                     map), a counter "NAME in use" {allocated, reserved}
 *                     and a counter "NAME by tag" {TAG: bytes} over the
 *                     tags the memory has seen so far
 * Times are microseconds (ts, dur), printed exactly from whole nanoseconds.
 * "otherData" (producer, hardware, status, makespan, memories) comes after
 * "traceEvents", since status and makespan are known only at the end.
 *
 * The file is streamed: each event is written as it is made (a lane's
 * thread_name metadata when the lane opens) straight into a buffer of
 * CHUNK bytes, through a cursor (json_cursor.h) after room() made space for
 * the event's longest text, and the buffer is written out when full. This
 * runs several times per op of a run, so the text that repeats is made
 * once: names of kinds, tags, memories and tracks escaped ahead, a
 * timestamp printed again only when it changed, each tag's bytes in a "by
 * tag" counter printed only when they changed. Memory stays bounded by the
 * live buffers and the open lanes, not by the size of the timeline: no
 * per-event allocation.
 *
 * Invariants:
 *  1. events on one track never overlap: an event that would overlap the
 *     last one on its track goes on the track's next lane ("pcie #2"), so
 *     every track nests properly in every viewer; thread_sort_index keeps
 *     a track's lanes together, in the order stream, link, memory tracks;
 *  2. the output depends only on the calls made (deterministic bytes);
 *  3. strata_results_write_timeline() writes atomically (core/outfile.h).
 */
#include "results/timeline.h"
#include <assert.h>
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "core/minheap.h"
#include "core/outfile.h"
#include "core/units.h"
#include "results/json_cursor.h"
#include "results/timeline_live.h"
#include "results/timeline_writer.h"

enum { PID_STREAMS = 1, PID_LINKS = 2, PID_MEMORIES = 3, PID_DEVICE0 = 10 };
enum { LANES_PER_TRACK = 100000 }; /* sort index stride between tracks */
enum { CHUNK = 1 << 16 };          /* bytes of pending output written at once */
enum { EVENT_ROOM = 320 };         /* an event's bytes besides its names and args, and slack */
enum { TAG_TEXT = STRATA_TL_TAG_TEXT };

/* A lane: its tid and the latest end of the events on it. */
typedef struct lane {
    double end;
    guint index;        /* lane number in its track (tie-break) */
    int tid;
} lane;

/* A named track with lanes, kept as a min-heap on (end, index): the lane
 * that frees first is at the top, so placing an event is O(log lanes). */
typedef strata_tl_track track;
typedef strata_tl_buffer live_buffer;
typedef strata_tl_tag_count tag_count;

struct strata_timeline {
    const strata_results *r;
    const strata_tl_writer *w; /* the format's writer, and its state (the timeline: JSON) */
    void *ws;
    strata_tl_out o;     /* pending output */
    bool first_event;
    /* Names in events: per op kind, then "?" (a kind out of range); per tag
     * ("untagged" for none), then "" (out of range); per memory, then "?". */
    strata_jc_piece kind_names[STRATA_OP__COUNT + 1];
    strata_jc_piece tag_names[STRATA_TAG__COUNT + 1];
    strata_jc_piece tag_keys[STRATA_TAG__COUNT]; /* ,"TAG": in a "by tag" counter */
    strata_jc_piece copy_cat, buffer_cat;
    strata_jc_piece *mem_names;
    guint n_mem_names;   /* memories named in mem_names (the "?" after them) */
    size_t tags_room;    /* bytes of a "by tag" counter's args at most */
    int64_t ts_ns;       /* the latest timestamp printed (-1: none), and its text: */
    size_t ts_n;         /* events at one time follow each other */
    char ts_text[32];
    GPtrArray *tracks;   /* track *, in creation order */
    int next_tid;        /* tids are unique across the file */
    GHashTable *by_name; /* "pid/name" -> track */
    GPtrArray *stream_tracks, *link_tracks, *buffer_tracks; /* by index, filled lazily */
    guint8 *device_named; /* per device: its process is named (several devices only) */
    strata_tl_live *live; /* buffer lifetimes: the buffers allocated and not yet freed */
    uint64_t *order;     /* n_order keys of cap_order in alloc order, for the buffers live at the end */
    guint n_order, cap_order;
    tag_count *by_tag;   /* per memory, per tag */
    guint n_mem;
};

static void track_free(gpointer p)
{
    track *t = p;
    g_free(t->name);
    strata_jc_piece_clear(&t->name_text);
    g_array_unref(t->heap);
    g_free(t);
}

/* ---- output ------------------------------------------------------------ */

/* Events are written straight into the pending output through a cursor:
 * room() makes space for an event's bytes at most, the w_* writers each
 * return the cursor after what they wrote, and done() takes the event. */

static inline char *room(strata_timeline *tl, size_t n)
{
    return strata_tl_out_room(&tl->o, n);
}

static inline void done(strata_timeline *tl, const char *end)
{
    tl->o.len = (size_t)(end - tl->o.buf);
}

/* Whole nanoseconds, so that rounding is monotonic: an event that ends
 * before the next one starts still does once both are rounded. Rounded
 * half away from zero (llround, without its call below 2^62: the fraction
 * after truncation is exact there). */
static int64_t to_ns(double seconds)
{
    double ns = seconds * 1e9;
    if (!isfinite(ns) || ns < 0)
        return 0;
    if (ns < 0x1p62) {
        int64_t whole = (int64_t)ns;
        return whole + (ns - (double)whole >= 0.5);
    }
    return (int64_t)llround(ns);
}

/* A timestamp in microseconds, printed again only when it changed. */
static char *w_ts(strata_timeline *tl, char *p, int64_t ns)
{
    if (ns != tl->ts_ns) {
        tl->ts_ns = ns;
        tl->ts_n = (size_t)(strata_jc_micros(tl->ts_text, ns) - tl->ts_text);
    }
    memcpy(p, tl->ts_text, sizeof tl->ts_text);
    return p + tl->ts_n;
}

/* Starts an event with room for n bytes: the separator after the one before. */
static inline char *begin_event(strata_timeline *tl, size_t n)
{
    char *p = room(tl, n + 4);
    if (tl->first_event) {
        tl->first_event = false;
        return STRATA_JC_LIT(p, "\n  ");
    }
    return STRATA_JC_LIT(p, ",\n  ");
}

/* A process's metadata event: args {key: name_a name_b} (name_b NULL:
 * none) when name_a is given, else {key: sort}. */
static void meta(strata_timeline *tl, const char *what, int pid, const char *key, const char *name_a,
                 const char *name_b, long sort)
{
    size_t names = strata_jc_escaped_room(name_a) + strata_jc_escaped_room(name_b);
    char *p = begin_event(tl, EVENT_ROOM + strlen(what) + strlen(key) + names);
    p = STRATA_JC_LIT(p, "{\"ph\":\"M\",\"name\":\"");
    p = strata_jc_mem(p, what, strlen(what));
    p = STRATA_JC_LIT(p, "\",\"pid\":");
    p = strata_jc_i64(p, pid);
    p = STRATA_JC_LIT(p, ",\"tid\":0,\"args\":{\"");
    p = strata_jc_mem(p, key, strlen(key));
    p = STRATA_JC_LIT(p, "\":");
    p = name_a ? strata_jc_string(p, name_a, name_b) : strata_jc_i64(p, sort);
    done(tl, STRATA_JC_LIT(p, "}}"));
}

/* The JSON writer's process: its name and sort index as metadata. */
static void json_process(void *w, int pid, const char *name_a, const char *name_b, long sort)
{
    strata_timeline *tl = w;
    meta(tl, "process_name", pid, "name", name_a, name_b, 0);
    meta(tl, "process_sort_index", pid, "sort_index", NULL, NULL, sort);
}

/* ---- tracks and lanes -------------------------------------------------- */

static track *get_track(strata_timeline *tl, int pid, const char *name)
{
    char *key = g_strdup_printf("%d/%s", pid, name);
    track *t = g_hash_table_lookup(tl->by_name, key);
    if (t) {
        g_free(key);
        return t;
    }
    t = g_new0(track, 1);
    t->name = g_strdup(name);
    t->name_text = strata_jc_piece_new(name);
    t->pid = pid;
    t->order = (long)tl->tracks->len;
    t->heap = g_array_new(FALSE, FALSE, sizeof(lane));
    g_ptr_array_add(tl->tracks, t);
    g_hash_table_insert(tl->by_name, key, t);
    return t;
}

/* The track at `index` of a cache, found by name once. */
static track *cached_track(strata_timeline *tl, GPtrArray *cache, guint index, int pid, const char *name,
                           const char *suffix)
{
    if (index < cache->len && g_ptr_array_index(cache, index))
        return g_ptr_array_index(cache, index);
    char *full = g_strconcat(name, suffix, NULL);
    track *t = get_track(tl, pid, full);
    g_free(full);
    if (cache->len <= index)
        g_ptr_array_set_size(cache, (gint)index + 1);
    g_ptr_array_index(cache, index) = t;
    return t;
}

static bool lane_before(const lane *a, const lane *b)
{
    return a->end < b->end || (a->end == b->end && a->index < b->index);
}

STRATA_HEAP_DEFINE(heap, lane, lane_before)

/* heap_sift_down(heap, 0), bottom up (Floyd): the top's hole goes down the
 * path of earlier children to a leaf, then the top's lane climbs back while
 * it comes before the hole's parent. A track's lanes are totally ordered by
 * (end, index) (its lanes' indices differ), so that path is the one
 * heap_sift_down follows and the lane stops where it would: the same heap.
 * A lane made busy until the latest end sinks to the bottom; this takes
 * one comparison a level instead of two, and a move instead of a swap. */
static void sink_top(GArray *heap)
{
    lane *a = (lane *)(void *)heap->data;
    guint n = heap->len, i = 0;
    lane x = a[0];
    for (guint l = 1; l < n; l = 2 * i + 1) {
        guint c = l + 1 < n && lane_before(&a[l + 1], &a[l]) ? l + 1 : l;
        a[i] = a[c];
        i = c;
    }
    while (i > 0 && lane_before(&x, &a[(i - 1) / 2])) {
        a[i] = a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    a[i] = x;
}

#ifndef NDEBUG
/* Lane i of the heap is not before its parent (invariant 1 rests on the
 * top being the lane that frees first). */
static bool lane_placed(const GArray *heap, guint i)
{
    const lane *h = (const lane *)(const void *)heap->data;
    return i == 0 || i >= heap->len || !lane_before(&h[i], &h[(i - 1) / 2]);
}

/* The whole heap of every track (at free). */
static bool tracks_ok(const strata_timeline *tl)
{
    for (guint k = 0; k < tl->tracks->len; k++) {
        const track *t = g_ptr_array_index(tl->tracks, k);
        for (guint i = 1; i < t->heap->len; i++)
            if (!lane_placed(t->heap, i))
                return false;
    }
    return true;
}
#endif

/* `{"ph":"M","name":"WHAT","pid":P,"tid":T,"args":{"` of a lane's metadata. */
static char *lane_meta_head(char *p, const track *t, int tid, bool sort)
{
    p = sort ? STRATA_JC_LIT(p, "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":")
             : STRATA_JC_LIT(p, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
    p = STRATA_JC_LIT(strata_jc_i64(p, t->pid), ",\"tid\":");
    return STRATA_JC_LIT(strata_jc_i64(p, tid), ",\"args\":{\"");
}

/* A new lane of t, busy until `end` (0: free): a tid and its names, the
 * track's name (then " #N" after the first lane) and its sort index. */
static void json_lane(void *w, const track *t, int tid, guint index, long sort)
{
    strata_timeline *tl = w;
    char *p = begin_event(tl, 2 * EVENT_ROOM + t->name_text.n);
    p = STRATA_JC_LIT(lane_meta_head(p, t, tid, false), "name\":\"");
    p = strata_jc_put_piece(p, &t->name_text);
    if (index)
        p = strata_jc_u64(STRATA_JC_LIT(p, " #"), (uint64_t)index + 1);
    p = STRATA_JC_LIT(lane_meta_head(STRATA_JC_LIT(p, "\"}},\n  "), t, tid, true), "sort_index\":");
    done(tl, STRATA_JC_LIT(strata_jc_i64(p, sort), "}}"));
}

static int open_lane(strata_timeline *tl, track *t, double end)
{
    lane l = {.end = end, .index = t->heap->len, .tid = tl->next_tid++};
    tl->w->lane(tl->ws, t, l.tid, l.index, t->order * LANES_PER_TRACK + (long)l.index);
    heap_push(t->heap, l);
    return l.tid;
}

/* The tid of the lane of t that frees first, when it is free at `start`
 * (else of a new lane); the lane is then busy until `end`. Every event on a
 * lane starts at or after the latest end of the events before it. */
static int take_lane(strata_timeline *tl, track *t, double start, double end)
{
    if (t->heap->len == 0 || g_array_index(t->heap, lane, 0).end > start) {
        /* A new lane. Opened free and then taken, it would be at the top
         * unless a lane free since 0 wins the tie (start < 0); else it can
         * go in busy until `end` at once, which gives the heap the same
         * lanes and so the same choices from then on. */
        if (!isnan(end) && (t->heap->len == 0 || g_array_index(t->heap, lane, 0).end > 0))
            return open_lane(tl, t, MAX(0.0, end));
        open_lane(tl, t, 0);
    }
    lane *top = &g_array_index(t->heap, lane, 0);
    top->end = MAX(top->end, end);
    int tid = top->tid;
    sink_top(t->heap);
    assert(lane_placed(t->heap, 1) && lane_placed(t->heap, 2)); /* invariant 1 */
    return tid;
}

/* The lane of t for an event from start to end (an end before its start:
 * the start), and both in whole nanoseconds. */
static int place(strata_timeline *tl, track *t, double start, double end, int64_t *start_ns, int64_t *end_ns)
{
    if (end < start)
        end = start;
    int tid = take_lane(tl, t, start, end);
    *start_ns = to_ns(start);
    *end_ns = to_ns(end);
    return tid;
}

/* Starts an "X" event on lane tid of t (instant: an "i" event of thread
 * scope at start_ns, no "dur"), named name then " " and label (NULL:
 * none), up to its args, with room for `args` more bytes: the caller
 * writes the args object and the closing brace. */
static char *x_event(strata_timeline *tl, const track *t, int tid, int64_t start_ns, int64_t end_ns, bool instant,
                     const strata_jc_piece *name, const char *label, const strata_jc_piece *cat, size_t args)
{
    size_t label_n = label ? strlen(label) : 0;
    char *p = begin_event(tl, EVENT_ROOM + name->n + 6 * label_n + cat->n + args);
    p = instant ? STRATA_JC_LIT(p, "{\"ph\":\"i\",\"name\":\"") : STRATA_JC_LIT(p, "{\"ph\":\"X\",\"name\":\"");
    p = strata_jc_put_piece(p, name);
    if (label) {
        *p++ = ' ';
        p = strata_jc_escaped_n(p, label, label_n);
    }
    p = STRATA_JC_LIT(p, "\",\"cat\":\"");
    p = strata_jc_put_piece(p, cat);
    p = STRATA_JC_LIT(p, "\",\"pid\":");
    p = strata_jc_i64(p, t->pid);
    p = STRATA_JC_LIT(p, ",\"tid\":");
    p = strata_jc_i64(p, tid);
    p = STRATA_JC_LIT(p, ",\"ts\":");
    p = w_ts(tl, p, start_ns);
    if (instant)
        return STRATA_JC_LIT(p, ",\"s\":\"t\",\"args\":");
    p = STRATA_JC_LIT(p, ",\"dur\":");
    p = strata_jc_micros(p, end_ns > start_ns ? end_ns - start_ns : 0);
    return STRATA_JC_LIT(p, ",\"args\":");
}

static const char *memory_name(const strata_results *r, int32_t index)
{
    if (index < 0 || !r->memories || (guint)index >= r->memories->len)
        return "?";
    return g_array_index(r->memories, strata_memory_result, index).name;
}

/* The name of memory `index` in events ("?" out of range); named again
 * when memories were listed after the timeline started. */
static void name_memories(strata_timeline *tl, guint n)
{
    for (guint i = 0; tl->mem_names && i <= tl->n_mem_names; i++)
        strata_jc_piece_clear(&tl->mem_names[i]);
    tl->mem_names = g_renew(strata_jc_piece, tl->mem_names, n + 1);
    for (guint i = 0; i <= n; i++)
        tl->mem_names[i] = strata_jc_piece_new(memory_name(tl->r, (int32_t)i));
    tl->n_mem_names = n;
}

static inline const strata_jc_piece *memory_piece(strata_timeline *tl, int32_t index)
{
    guint n = tl->r->memories ? tl->r->memories->len : 0;
    if (G_UNLIKELY(!tl->mem_names || n != tl->n_mem_names))
        name_memories(tl, n);
    return &tl->mem_names[index < 0 || (guint)index >= n ? n : (guint)index];
}

/* ---- spans ------------------------------------------------------------- */

/* The process of a stream: "streams", or with several devices the one of
 * the device that runs it (its place; named when first used). */
static int stream_pid(strata_timeline *tl, const strata_stream_result *stream)
{
    uint32_t devices = tl->r->devices, d = stream->place.device[0];
    if (devices <= 1 || d >= devices)
        return PID_STREAMS;
    if (!tl->device_named[d]) {
        tl->device_named[d] = 1;
        char number[24];
        g_snprintf(number, sizeof number, "%u", d);
        tl->w->process(tl->ws, PID_DEVICE0 + (int)d, "device ", number, PID_DEVICE0 + (long)d);
    }
    return PID_DEVICE0 + (int)d;
}

static track *stream_track(strata_timeline *tl, uint32_t stream)
{
    const strata_results *r = tl->r;
    if (!r->streams || stream >= r->streams->len)
        return get_track(tl, PID_STREAMS, "main");
    if (stream < tl->stream_tracks->len && g_ptr_array_index(tl->stream_tracks, stream))
        return g_ptr_array_index(tl->stream_tracks, stream);
    const strata_stream_result *s = &g_array_index(r->streams, strata_stream_result, stream);
    return cached_track(tl, tl->stream_tracks, stream, stream_pid(tl, s), s->name, "");
}

static track *link_track(strata_timeline *tl, guint link)
{
    return cached_track(tl, tl->link_tracks, link, PID_LINKS,
                        g_array_index(tl->r->links, strata_link_result, link).name, "");
}

/* A span's args, for memory names m1 and m2 (NULL: none; both: a copy's
 * from and to); room: SPAN_ARGS_ROOM and the names. */
enum { SPAN_ARGS_ROOM = 192 };

static char *w_span_args(char *p, const strata_op_span *sp, const strata_jc_piece *m1, const strata_jc_piece *m2)
{
    p = STRATA_JC_LIT(p, "{\"op\":");
    p = strata_jc_u64(p, sp->op_index);
    p = STRATA_JC_LIT(p, ",\"line\":");
    p = strata_jc_u64(p, sp->line);
    p = STRATA_JC_LIT(p, ",\"bytes\":");
    p = strata_jc_u64(p, sp->bytes);
    if (m2) {
        p = strata_jc_put_piece(STRATA_JC_LIT(p, ",\"from\":\""), m1);
        p = strata_jc_put_piece(STRATA_JC_LIT(p, "\",\"to\":\""), m2);
        *p++ = '"';
    } else if (m1) {
        p = strata_jc_put_piece(STRATA_JC_LIT(p, ",\"memory\":\""), m1);
        *p++ = '"';
    }
    return STRATA_JC_LIT(p, "}}");
}

/* The JSON writer's span: an "X" event in the category of its kind, or
 * "copy" on a link. */
static void json_span(void *w, const track *t, int tid, int64_t start_ns, int64_t end_ns, const strata_op_span *sp,
                      bool on_link)
{
    strata_timeline *tl = w;
    const strata_jc_piece *cat = on_link ? &tl->copy_cat : NULL;
    const strata_jc_piece *kind = &tl->kind_names[MIN((unsigned)sp->kind, (unsigned)STRATA_OP__COUNT)];
    const strata_jc_piece *m1 = NULL, *m2 = NULL;
    if (sp->kind == STRATA_OP_COPY) {
        m1 = memory_piece(tl, sp->src_memory);
        m2 = memory_piece(tl, sp->dst_memory);
    } else if (sp->memory >= 0) {
        m1 = memory_piece(tl, sp->memory);
    }
    size_t args = SPAN_ARGS_ROOM + (m1 ? m1->n : 0) + (m2 ? m2->n : 0);
    const char *label = sp->label && *sp->label ? sp->label : NULL;
    char *p = x_event(tl, t, tid, start_ns, end_ns, strata_tl_instant(sp, start_ns, end_ns), kind, label,
                      cat ? cat : kind, args);
    done(tl, w_span_args(p, sp, m1, m2));
}

/* An event of span sp on track t (on_link: a copy's on a link's track). */
static void span_event(strata_timeline *tl, track *t, const strata_op_span *sp, bool on_link)
{
    int64_t start_ns, end_ns;
    int tid = place(tl, t, sp->start_s, sp->end_s, &start_ns, &end_ns);
    tl->w->span(tl->ws, t, tid, start_ns, end_ns, sp, on_link);
}

void strata_timeline_span(strata_timeline *tl, const strata_op_span *sp)
{
    const strata_results *r = tl->r;
    span_event(tl, stream_track(tl, sp->stream), sp, false);
    if (sp->kind != STRATA_OP_COPY)
        return;
    bool placed = false;
    uint32_t n = 0;
    const uint32_t *links = sp->route != STRATA_NO_ROUTE ? strata_results_route_links(r, sp->route, &n) : NULL;
    guint n_links = r->links ? r->links->len : 0;
    for (uint32_t i = 0; i < n; i++) /* in link order, as the route's links are sorted */
        if (links[i] < n_links) {
            span_event(tl, link_track(tl, links[i]), sp, true);
            placed = true;
        }
    if (!placed && sp->src_memory != sp->dst_memory) {
        char *name = g_strdup_printf("%s->%s", memory_name(r, sp->src_memory), memory_name(r, sp->dst_memory));
        span_event(tl, get_track(tl, PID_LINKS, name), sp, true);
        g_free(name);
    }
}

/* ---- memory samples ---------------------------------------------------- */

static const strata_jc_piece *tag_piece(const strata_timeline *tl, strata_tag tag)
{
    return &tl->tag_names[MIN((unsigned)tag, (unsigned)STRATA_TAG__COUNT)];
}

static void json_buffer(void *w, const track *t, int tid, int64_t start_ns, int64_t end_ns, const live_buffer *b)
{
    strata_timeline *tl = w;
    const strata_jc_piece *tag = tag_piece(tl, b->tag);
    char *p = x_event(tl, t, tid, start_ns, end_ns, false, tag, NULL, &tl->buffer_cat, EVENT_ROOM + tag->n);
    p = STRATA_JC_LIT(p, "{\"offset\":");
    p = strata_jc_u64(p, b->offset);
    p = STRATA_JC_LIT(p, ",\"size\":");
    p = strata_jc_u64(p, b->size);
    p = STRATA_JC_LIT(p, ",\"tag\":\"");
    p = strata_jc_put_piece(p, tag);
    p = STRATA_JC_LIT(p, "\",\"buffer\":");
    p = strata_jc_u64(p, b->id);
    done(tl, STRATA_JC_LIT(p, "}}"));
}

static void buffer_event(strata_timeline *tl, const live_buffer *b, double end)
{
    track *t = cached_track(tl, tl->buffer_tracks, b->memory, PID_MEMORIES, memory_name(tl->r, (int32_t)b->memory),
                            " buffers");
    int64_t start_ns, end_ns;
    int tid = place(tl, t, b->start, end, &start_ns, &end_ns);
    tl->w->buffer(tl->ws, t, tid, start_ns, end_ns, b);
}

/* Keeps `order` from growing with every alloc of a long run. */
static void compact_order(strata_timeline *tl)
{
    if (tl->n_order <= 4096 || tl->n_order <= 2 * strata_tl_live_count(tl->live))
        return;
    guint kept = 0;
    for (guint j = 0; j < tl->n_order; j++) {
        uint64_t k = tl->order[j];
        if (strata_tl_live_has(tl->live, k))
            tl->order[kept++] = k;
    }
    tl->n_order = kept;
}

/* Appends key to `order` (an alloc's: a store, no call but to grow). */
static inline void order_push(strata_timeline *tl, uint64_t key)
{
    if (G_UNLIKELY(tl->n_order == tl->cap_order)) {
        tl->cap_order = MAX(64u, 2 * tl->cap_order);
        tl->order = g_renew(uint64_t, tl->order, tl->cap_order);
    }
    tl->order[tl->n_order++] = key;
}

/* Buffer lifetimes from pairs of samples (+size, -size) per (memory, id). */
static void track_lifetime(strata_timeline *tl, const strata_mem_sample *s)
{
    uint64_t key = strata_tl_live_key(s->memory, s->buffer_id);
    if (s->delta > 0) {
        strata_tl_live_put(tl->live, &(live_buffer){.start = s->t_s, .offset = s->offset, .size = (uint64_t)s->delta,
                                                    .id = s->buffer_id, .memory = s->memory, .tag = s->tag});
        order_push(tl, key);
    } else if (s->delta < 0) {
        live_buffer b;
        if (strata_tl_live_take(tl->live, key, &b))
            buffer_event(tl, &b, s->t_s);
    }
    compact_order(tl);
}

/* A counter event named after a memory and `what` (7 bytes: " in use"), up to its args. */
static char *counter_head(strata_timeline *tl, char *p, const strata_jc_piece *mem, const char what[7], int64_t ns)
{
    p = STRATA_JC_LIT(p, "{\"ph\":\"C\",\"name\":\"");
    p = strata_jc_mem(strata_jc_put_piece(p, mem), what, 7);
    p = STRATA_JC_LIT(p, "\",\"pid\":3,\"tid\":0,\"ts\":");
    return STRATA_JC_LIT(w_ts(tl, p, ns), ",\"args\":{");
}

/* The per-memory counter rows cover memory `m`. */
static void counters_cover(strata_timeline *tl, guint m)
{
    if (m < tl->n_mem)
        return;
    guint n = MAX(m + 1, 2 * tl->n_mem);
    tl->by_tag = g_renew(tag_count, tl->by_tag, (gsize)n * STRATA_TAG__COUNT);
    memset(tl->by_tag + (gsize)tl->n_mem * STRATA_TAG__COUNT, 0, (gsize)(n - tl->n_mem) * STRATA_TAG__COUNT * sizeof(tag_count));
    tl->n_mem = n;
}

/* The JSON writer's counters: "NAME in use" {allocated, reserved}, and
 * "NAME by tag" with every tag the memory has seen (the changed one's text
 * printed again). */
static void json_counters(void *w, const strata_mem_sample *s, int64_t ns, tag_count *row)
{
    strata_timeline *tl = w;
    const strata_jc_piece *mem = memory_piece(tl, (int32_t)s->memory);
    char *p = begin_event(tl, EVENT_ROOM + mem->n);
    p = STRATA_JC_LIT(counter_head(tl, p, mem, " in use", ns), "\"allocated\":");
    char *allocated = p;
    p = strata_jc_u64(p, s->allocated);
    size_t digits = (size_t)(p - allocated);
    p = STRATA_JC_LIT(p, ",\"reserved\":");
    p = s->reserved == s->allocated ? strata_jc_mem(p, allocated, digits) : strata_jc_u64(p, s->reserved);
    done(tl, STRATA_JC_LIT(p, "}}"));
    if (!row)
        return;
    tag_count *changed = &row[s->tag];
    changed->n = (uint8_t)strata_format_u64(changed->text, (uint64_t)MAX(changed->bytes, 0));
    p = counter_head(tl, begin_event(tl, EVENT_ROOM + mem->n + tl->tags_room), mem, " by tag", ns);
    size_t comma = 0; /* none before the first */
    for (int t = 0; t < STRATA_TAG__COUNT; t++) {
        if (!row[t].seen)
            continue;
        const strata_jc_piece *key = &tl->tag_keys[t];
        p = strata_jc_put_piece(p, &(strata_jc_piece){.s = key->s + 1 - comma, .n = key->n - 1 + comma});
        memcpy(p, row[t].text, sizeof row[t].text);
        p += row[t].n;
        comma = 1;
    }
    done(tl, STRATA_JC_LIT(p, "}}"));
}

static void add_counters(strata_timeline *tl, const strata_mem_sample *s)
{
    tag_count *row = NULL;
    if ((guint)s->tag < STRATA_TAG__COUNT) {
        counters_cover(tl, s->memory);
        row = tl->by_tag + (gsize)s->memory * STRATA_TAG__COUNT;
        row[s->tag].bytes += s->delta;
        row[s->tag].seen = true;
    }
    tl->w->counters(tl->ws, s, to_ns(s->t_s), row);
}

void strata_timeline_sample(strata_timeline *tl, const strata_mem_sample *s)
{
    track_lifetime(tl, s);
    add_counters(tl, s);
}

/* ---- the file ---------------------------------------------------------- */

static void json_begin(void *w)
{
    strata_timeline *tl = w;
    done(tl, STRATA_JC_LIT(room(tl, 64), "{\"displayTimeUnit\":\"ns\",\"traceEvents\":["));
}

static void write_other_data(strata_timeline *tl);

static bool json_finish(void *w)
{
    strata_timeline *tl = w;
    write_other_data(tl);
    return strata_tl_out_finish(&tl->o);
}

static const strata_tl_writer json_writer = {
    .begin = json_begin, .process = json_process, .lane = json_lane, .span = json_span,
    .buffer = json_buffer, .counters = json_counters, .finish = json_finish};

/* The formats, by the file's extension (after a ".gz", which the output
 * file compresses); the first is the default. */
struct strata_timeline_format {
    const char *name, *extension;
    const strata_tl_writer *writer;
};
static const strata_timeline_format formats[] = {
    {"json", ".json", &json_writer},
    {"perfetto", ".pftrace", &strata_tl_perfetto},
    {"perfetto", ".perfetto-trace", &strata_tl_perfetto},
};

const strata_timeline_format *strata_timeline_format_named(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    if (n > 3 && strcmp(path + n - 3, ".gz") == 0)
        n -= 3;
    for (size_t i = 0; i < G_N_ELEMENTS(formats); i++) {
        size_t e = strlen(formats[i].extension);
        if (n >= e && strncmp(path + n - e, formats[i].extension, e) == 0)
            return &formats[i];
    }
    return NULL;
}

const strata_timeline_format *strata_timeline_format_of(const char *path)
{
    const strata_timeline_format *f = strata_timeline_format_named(path);
    return f ? f : &formats[0];
}

char *strata_timeline_extensions(void)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(formats); i++)
        g_string_append_printf(s, "%s%s", i == 0 ? "" : i + 1 < G_N_ELEMENTS(formats) ? ", " : " or ",
                               formats[i].extension);
    return g_string_free(s, FALSE);
}

const char *strata_timeline_format_name(const strata_timeline_format *f)
{
    return f->name;
}

strata_timeline *strata_timeline_new_as(const strata_timeline_format *f, FILE *out, const strata_results *r,
                                        bool spans, bool samples)
{
    strata_timeline *tl = g_new0(strata_timeline, 1);
    tl->r = r;
    tl->w = (f ? f : &formats[0])->writer;
    tl->ws = tl->w->open ? tl->w->open(out, r) : tl;
    if (!tl->w->open) /* the JSON writer's; another writer keeps its own */
        strata_tl_out_init(&tl->o, out, CHUNK);
    tl->first_event = true;
    tl->ts_ns = -1;
    for (int k = 0; k <= STRATA_OP__COUNT; k++)
        tl->kind_names[k] = strata_jc_piece_new(strata_op_kind_name((strata_op_kind)k));
    for (int t = 0; t <= STRATA_TAG__COUNT; t++) {
        tl->tag_names[t] = strata_jc_piece_new(t == STRATA_TAG_NONE ? "untagged" : strata_tag_name((strata_tag)t));
    }
    for (int t = 0; t < STRATA_TAG__COUNT; t++) {
        char *key = g_strdup_printf(",\"%s\":", t == STRATA_TAG_NONE ? "untagged" : strata_tag_name((strata_tag)t));
        tl->tag_keys[t] = strata_jc_piece_raw(key);
        tl->tags_room += tl->tag_keys[t].n + STRATA_JC_PIECE_STEP + TAG_TEXT;
        g_free(key);
    }
    tl->copy_cat = strata_jc_piece_new("copy");
    tl->buffer_cat = strata_jc_piece_new("buffer");
    tl->next_tid = 1;
    tl->tracks = g_ptr_array_new_with_free_func(track_free);
    tl->by_name = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    tl->stream_tracks = g_ptr_array_new();
    tl->device_named = g_new0(guint8, r->devices > 1 ? r->devices : 1);
    tl->link_tracks = g_ptr_array_new();
    tl->buffer_tracks = g_ptr_array_new();
    tl->live = strata_tl_live_new();

    tl->w->begin(tl->ws);
    const char *pnames[] = {NULL, "streams", "links", "memories"};
    for (int pid = PID_STREAMS; pid <= PID_MEMORIES; pid++) {
        tl->w->process(tl->ws, pid, pnames[pid], NULL, pid);
    }
    /* Tracks in the results' order: streams, links, then each memory. */
    if (spans) {
        for (guint i = 0; r->streams && i < r->streams->len; i++)
            stream_track(tl, i);
        for (guint i = 0; r->links && i < r->links->len; i++)
            get_track(tl, PID_LINKS, g_array_index(r->links, strata_link_result, i).name);
    }
    if (samples)
        for (guint m = 0; r->memories && m < r->memories->len; m++)
            cached_track(tl, tl->buffer_tracks, m, PID_MEMORIES, memory_name(r, (int32_t)m), " buffers");
    /* Every track named, so that empty streams and links show. */
    for (guint i = 0; i < tl->tracks->len; i++)
        open_lane(tl, g_ptr_array_index(tl->tracks, i), 0);
    return tl;
}

static void write_other_data(strata_timeline *tl)
{
    const strata_results *r = tl->r;
    size_t n = EVENT_ROOM + G_ASCII_DTOSTR_BUF_SIZE + strata_jc_escaped_room(r->producer) +
               strata_jc_escaped_room(r->hardware) + strata_jc_escaped_room(r->trace);
    for (guint i = 0; r->memories && i < r->memories->len; i++) {
        const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        n += EVENT_ROOM + strata_jc_escaped_room(m->name) + strata_jc_escaped_room(m->kind);
    }
    char *p = room(tl, n);
    p = strata_jc_string(STRATA_JC_LIT(p, "\n],\"otherData\":{\"producer\":"), r->producer, NULL);
    p = strata_jc_string(STRATA_JC_LIT(p, ",\"hardware\":"), r->hardware, NULL);
    p = strata_jc_string(STRATA_JC_LIT(p, ",\"trace\":"), r->trace, NULL);
    p = r->oom ? STRATA_JC_LIT(p, ",\"status\":\"oom\"") : STRATA_JC_LIT(p, ",\"status\":\"ok\"");
    p = STRATA_JC_LIT(p, ",\"makespan_s\":");
    g_ascii_formatd(p, G_ASCII_DTOSTR_BUF_SIZE, "%.9g", r->makespan_s);
    p += strlen(p);
    p = STRATA_JC_LIT(p, ",\"memories\":{");
    for (guint i = 0; r->memories && i < r->memories->len; i++) {
        const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        if (i)
            *p++ = ',';
        p = strata_jc_string(p, m->name, NULL);
        p = strata_jc_u64(STRATA_JC_LIT(p, ":{\"capacity_bytes\":"), m->capacity_bytes);
        p = strata_jc_string(STRATA_JC_LIT(p, ",\"kind\":"), m->kind, NULL);
        *p++ = '}';
    }
    done(tl, STRATA_JC_LIT(p, "}}}\n"));
}

bool strata_timeline_finish(strata_timeline *tl)
{
    /* Buffers live at the end span to the makespan (or their start). */
    for (guint i = 0; i < tl->n_order; i++) {
        live_buffer b;
        if (strata_tl_live_take(tl->live, tl->order[i], &b))
            buffer_event(tl, &b, MAX(tl->r->makespan_s, b.start));
    }
    return tl->w->finish(tl->ws);
}

void strata_timeline_free(strata_timeline *tl)
{
    if (!tl)
        return;
    assert(tracks_ok(tl)); /* invariant 1 */
    if (tl->w->free)
        tl->w->free(tl->ws);
    g_free(tl->o.buf);
    for (int k = 0; k <= STRATA_OP__COUNT; k++)
        strata_jc_piece_clear(&tl->kind_names[k]);
    for (int t = 0; t <= STRATA_TAG__COUNT; t++)
        strata_jc_piece_clear(&tl->tag_names[t]);
    strata_jc_piece_clear(&tl->copy_cat);
    strata_jc_piece_clear(&tl->buffer_cat);
    for (guint i = 0; tl->mem_names && i <= tl->n_mem_names; i++)
        g_free(tl->mem_names[i].s);
    g_free(tl->mem_names);
    g_hash_table_unref(tl->by_name);
    g_ptr_array_unref(tl->tracks);
    g_ptr_array_unref(tl->stream_tracks);
    g_free(tl->device_named);
    g_ptr_array_unref(tl->link_tracks);
    g_ptr_array_unref(tl->buffer_tracks);
    strata_tl_live_free(tl->live);
    g_free(tl->order);
    g_free(tl->by_tag);
    for (int t = 0; t < STRATA_TAG__COUNT; t++)
        strata_jc_piece_clear(&tl->tag_keys[t]);
    g_free(tl);
}

/* ---- finished results -------------------------------------------------- */

bool strata_results_write_timeline(const strata_results *r, const char *path, GError **err)
{
    strata_outfile *of = strata_outfile_open(path, err);
    if (!of)
        return false;
    if (!strata_results_write_timeline_as(r, strata_timeline_format_of(path), strata_outfile_stream(of))) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot write the timeline", path);
        strata_outfile_abort(of);
        return false;
    }
    return strata_outfile_commit(of, err);
}

bool strata_results_write_timeline_as(const strata_results *r, const strata_timeline_format *f, FILE *out)
{
    strata_timeline *tl = strata_timeline_new_as(f, out, r, r->spans != NULL, r->mem_samples != NULL);
    for (guint i = 0; r->spans && i < r->spans->len; i++)
        strata_timeline_span(tl, &g_array_index(r->spans, strata_op_span, i));
    for (guint i = 0; r->mem_samples && i < r->mem_samples->len; i++)
        strata_timeline_sample(tl, &g_array_index(r->mem_samples, strata_mem_sample, i));
    bool ok = strata_timeline_finish(tl);
    strata_timeline_free(tl);
    return ok;
}
