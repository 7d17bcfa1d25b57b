/*
 * timeline.c: a run's spans and memory samples as a Chrome trace-event /
 * Perfetto JSON timeline (timeline.h; strata_results_write_timeline in
 * results.h). It opens in ui.perfetto.dev and chrome://tracing, and viz/
 * reads it for the memory, address-space and link plots.
 *
 * Layout (pids and tids are small integers, names come from "M" metadata):
 *   pid 1 "streams"   one track per stream: an "X" event per op
 *   pid 2 "links"     one track per link: an "X" event per copy on it
 *                     (links named by results->links; a copy whose span
 *                     carries no link_mask goes on a track named after its
 *                     memories, "host->hbm")
 *   with several devices (results->devices > 1), the streams of device D
 *   (named S@D) go instead to pid PID_DEVICE0 + D, "device D";
 *   pid 3 "memories"  per memory: an "X" event per buffer lifetime, with
 *                     args {offset, size, tag, buffer} (the address-space
 *                     map), a counter "NAME in use" {allocated, reserved}
 *                     and a counter "NAME by tag" {TAG: bytes} over the
 *                     tags the memory has seen so far
 * Times are microseconds (ts, dur), printed exactly from whole nanoseconds.
 * "otherData" (producer, hardware, status, makespan, memories) comes after
 * "traceEvents", since status and makespan are known only at the end.
 *
 * The file is streamed: each event is formatted as it is made (a lane's
 * thread_name metadata when the lane opens) into a buffer written out in
 * chunks, with hand-rolled number formatting (this runs for every op of a
 * run). Memory stays bounded by the live buffers and the open lanes, not
 * by the size of the timeline: no per-event allocation.
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
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "core/outfile.h"
#include "core/units.h"

enum { PID_STREAMS = 1, PID_LINKS = 2, PID_MEMORIES = 3, PID_DEVICE0 = 10 };
enum { LANES_PER_TRACK = 100000 }; /* sort index stride between tracks */
enum { FLUSH_AT = 1 << 16 };       /* bytes of pending output written at once */
enum { MASK_LINKS = 64 };          /* links a span's link_mask can name */

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

/* A buffer between its alloc sample and its free sample. */
typedef struct live_buffer {
    double start;
    uint64_t offset, size, id;
    uint32_t memory;
    strata_tag tag;
    guint next_free;    /* free list of slots, index + 1 (0: end) */
} live_buffer;

struct strata_timeline {
    FILE *out;
    const strata_results *r;
    GString *buf;        /* pending output, written at FLUSH_AT */
    GString *args;       /* an event's args, reused */
    bool first_event;
    GPtrArray *tracks;   /* track *, in creation order */
    int next_tid;        /* tids are unique across the file */
    GHashTable *by_name; /* "pid/name" -> track */
    GPtrArray *stream_tracks, *link_tracks, *buffer_tracks; /* by index, filled lazily */
    guint8 *device_named; /* per device: its process is named (several devices only) */
    /* Buffer lifetimes: key (memory << 48 ^ id) -> slot + 1 in `slots`. */
    GHashTable *live;
    GArray *slots;       /* live_buffer */
    guint free_slot;     /* head of the slots' free list, index + 1 */
    GArray *order;       /* keys in alloc order, for the buffers live at the end */
    /* Counters: bytes per tag, and the tags seen, per memory. */
    int64_t *by_tag;
    bool *tag_seen;
    guint n_mem;
};

static void track_free(gpointer p)
{
    track *t = p;
    g_free(t->name);
    g_array_unref(t->heap);
    g_free(t);
}

/* ---- output ------------------------------------------------------------ */

static void flush_out(strata_timeline *tl)
{
    fwrite(tl->buf->str, 1, tl->buf->len, tl->out);
    g_string_truncate(tl->buf, 0);
}

/* Appends without a call into GLib while the string has room (it has,
 * nearly always: the output buffer is sized for a chunk). */
static inline void put_len(GString *s, const char *p, size_t n)
{
    if (s->len + n < s->allocated_len) {
        memcpy(s->str + s->len, p, n);
        s->len += n;
        s->str[s->len] = '\0';
    } else {
        g_string_append_len(s, p, (gssize)n);
    }
}

#define put_lit(s, lit) put_len((s), "" lit, sizeof(lit) - 1)

static inline void put_str(GString *s, const char *text)
{
    put_len(s, text, strlen(text));
}

static inline void put_char(GString *s, char c)
{
    put_len(s, &c, 1);
}

static void put_u64(GString *s, uint64_t v)
{
    char digits[STRATA_U64_DIGITS];
    put_len(s, digits, strata_format_u64(digits, v));
}

/* `key` (JSON text up to the value, such as ",\"line\":") and v. */
static void put_u64_member(GString *s, const char *key, uint64_t v)
{
    put_str(s, key);
    put_u64(s, v);
}

static void json_string(GString *s, const char *text);

static void put_string_member(GString *s, const char *key, const char *v)
{
    put_str(s, key);
    json_string(s, v);
}

static void put_i64(GString *s, int64_t v)
{
    if (v < 0) {
        put_char(s, '-');
        put_u64(s, (uint64_t)0 - (uint64_t)v);
    } else {
        put_u64(s, (uint64_t)v);
    }
}

/* The JSON text of a string, without quotes. */
static void put_escaped(GString *s, const char *text)
{
    const unsigned char *p = (const unsigned char *)(text ? text : "");
    for (;;) {
        const unsigned char *run = p;
        while (*p >= 0x20 && *p != '"' && *p != '\\')
            p++;
        put_len(s, (const char *)run, (size_t)(p - run));
        if (*p == '\0')
            return;
        switch (*p) {
        case '"': put_lit(s, "\\\""); break;
        case '\\': put_lit(s, "\\\\"); break;
        case '\n': put_lit(s, "\\n"); break;
        case '\t': put_lit(s, "\\t"); break;
        case '\r': put_lit(s, "\\r"); break;
        default: g_string_append_printf(s, "\\u%04x", *p);
        }
        p++;
    }
}

/* A JSON string of a, then b (NULL: none) and c (NULL: none) joined. */
static void json_string3(GString *s, const char *a, const char *b, const char *c)
{
    put_char(s, '"');
    put_escaped(s, a);
    if (b)
        put_escaped(s, b);
    if (c)
        put_escaped(s, c);
    put_char(s, '"');
}

static void json_string(GString *s, const char *text)
{
    json_string3(s, text, NULL, NULL);
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
    put_i64(s, ns / 1000);
    int frac = (int)(ns % 1000);
    char f[4] = {'.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10), (char)('0' + frac % 10)};
    put_len(s, f, 4);
}

/* Starts an event in tl->buf (after the separator). */
static GString *begin_event(strata_timeline *tl)
{
    if (tl->first_event)
        put_lit(tl->buf, "\n  ");
    else
        put_lit(tl->buf, ",\n  ");
    tl->first_event = false;
    return tl->buf;
}

static void end_event(strata_timeline *tl)
{
    if (tl->buf->len >= FLUSH_AT)
        flush_out(tl);
}

/* A metadata event: args {key: name_a name_b name_c} (the parts that are
 * not NULL) when name_a is given, else {key: sort}. */
static void meta(strata_timeline *tl, const char *what, int pid, int tid, const char *key, const char *name_a,
                 const char *name_b, const char *name_c, long sort)
{
    GString *s = begin_event(tl);
    put_lit(s, "{\"ph\":\"M\",\"name\":\"");
    put_str(s, what);
    put_lit(s, "\",\"pid\":");
    put_i64(s, pid);
    put_lit(s, ",\"tid\":");
    put_i64(s, tid);
    put_lit(s, ",\"args\":{\"");
    put_str(s, key);
    put_lit(s, "\":");
    if (name_a)
        json_string3(s, name_a, name_b, name_c);
    else
        put_i64(s, sort);
    put_lit(s, "}}");
    end_event(tl);
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
static void open_lane(strata_timeline *tl, track *t)
{
    lane l = {.end = 0, .index = t->heap->len, .tid = tl->next_tid++};
    char number[STRATA_U64_DIGITS + 1];
    number[strata_format_u64(number, (uint64_t)l.index + 1)] = '\0';
    meta(tl, "thread_name", t->pid, l.tid, "name", t->name, l.index ? " #" : NULL, l.index ? number : NULL, 0);
    meta(tl, "thread_sort_index", t->pid, l.tid, "sort_index", NULL, NULL, NULL,
         t->order * LANES_PER_TRACK + (long)l.index);
    heap_push(t->heap, l);
}

/* The tid of the lane of t that frees first, when it is free at `start`
 * (else of a new lane); the lane is then busy until `end`. Every event on a
 * lane starts at or after the latest end of the events before it. */
static int take_lane(strata_timeline *tl, track *t, double start, double end)
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

/* Writes an "X" event named name_a + name_b; args is a JSON object's text or NULL. */
static void emit_x(strata_timeline *tl, track *t, double start, double end, const char *name_a,
                   const char *name_b, const char *cat, const GString *args)
{
    if (end < start)
        end = start;
    int tid = take_lane(tl, t, start, end);
    GString *s = begin_event(tl);
    put_lit(s, "{\"ph\":\"X\",\"name\":");
    json_string3(s, name_a, name_b ? " " : NULL, name_b);
    put_lit(s, ",\"cat\":");
    json_string(s, cat);
    int64_t start_ns = to_ns(start), end_ns = to_ns(end);
    put_lit(s, ",\"pid\":");
    put_i64(s, t->pid);
    put_lit(s, ",\"tid\":");
    put_i64(s, tid);
    put_lit(s, ",\"ts\":");
    json_us(s, start_ns);
    put_lit(s, ",\"dur\":");
    json_us(s, end_ns > start_ns ? end_ns - start_ns : 0);
    if (args) {
        put_lit(s, ",\"args\":");
        put_len(s, args->str, args->len);
    }
    put_char(s, '}');
    end_event(tl);
}

static const char *memory_name(const strata_results *r, int32_t index)
{
    if (index < 0 || !r->memories || (guint)index >= r->memories->len)
        return "?";
    return g_array_index(r->memories, strata_memory_result, index).name;
}

/* ---- spans ------------------------------------------------------------- */

/* The process of a stream: "streams", or with several devices the one of
 * the device its name S@D ends with (named when first used). */
static int stream_pid(strata_timeline *tl, const char *name)
{
    const char *at = strrchr(name, '@');
    uint32_t devices = tl->r->devices;
    if (devices <= 1 || !at || at[1] < '0' || at[1] > '9')
        return PID_STREAMS;
    guint64 d = g_ascii_strtoull(at + 1, NULL, 10);
    if (d >= devices)
        return PID_STREAMS;
    if (!tl->device_named[d]) {
        tl->device_named[d] = 1;
        char number[24];
        g_snprintf(number, sizeof number, "%" G_GUINT64_FORMAT, d);
        meta(tl, "process_name", PID_DEVICE0 + (int)d, 0, "name", "device ", number, NULL, 0);
        meta(tl, "process_sort_index", PID_DEVICE0 + (int)d, 0, "sort_index", NULL, NULL, NULL, PID_DEVICE0 + (long)d);
    }
    return PID_DEVICE0 + (int)d;
}

static track *stream_track(strata_timeline *tl, uint32_t stream)
{
    const strata_results *r = tl->r;
    if (!r->streams || stream >= r->streams->len)
        return get_track(tl, PID_STREAMS, "main");
    const char *name = g_array_index(r->streams, strata_stream_result, stream).name;
    return cached_track(tl, tl->stream_tracks, stream, stream_pid(tl, name), name, "");
}

static track *link_track(strata_timeline *tl, guint link)
{
    return cached_track(tl, tl->link_tracks, link, PID_LINKS,
                        g_array_index(tl->r->links, strata_link_result, link).name, "");
}

void strata_timeline_span(strata_timeline *tl, const strata_op_span *sp)
{
    const strata_results *r = tl->r;
    const char *kind = strata_op_kind_name(sp->kind);
    GString *args = tl->args;
    g_string_truncate(args, 0);
    put_u64_member(args, "{\"op\":", sp->op_index);
    put_u64_member(args, ",\"line\":", sp->line);
    put_u64_member(args, ",\"bytes\":", sp->bytes);
    if (sp->kind == STRATA_OP_COPY) {
        put_string_member(args, ",\"from\":", memory_name(r, sp->src_memory));
        put_string_member(args, ",\"to\":", memory_name(r, sp->dst_memory));
    } else if (sp->memory >= 0) {
        put_string_member(args, ",\"memory\":", memory_name(r, sp->memory));
    }
    put_char(args, '}');
    const char *label = sp->label && *sp->label ? sp->label : NULL;
    emit_x(tl, stream_track(tl, sp->stream), sp->start_s, sp->end_s, kind, label, kind, args);
    if (sp->kind != STRATA_OP_COPY)
        return;
    bool placed = false;
    guint n_links = r->links ? MIN(r->links->len, (guint)MASK_LINKS) : 0;
    for (guint l = 0; l < n_links; l++)
        if (sp->link_mask & ((uint64_t)1 << l)) {
            emit_x(tl, link_track(tl, l), sp->start_s, sp->end_s, kind, label, "copy", args);
            placed = true;
        }
    if (!placed && sp->src_memory != sp->dst_memory) {
        char *name = g_strdup_printf("%s->%s", memory_name(r, sp->src_memory), memory_name(r, sp->dst_memory));
        emit_x(tl, get_track(tl, PID_LINKS, name), sp->start_s, sp->end_s, kind, label, "copy", args);
        g_free(name);
    }
}

/* ---- memory samples ---------------------------------------------------- */

static void buffer_event(strata_timeline *tl, const live_buffer *b, double end)
{
    track *t = cached_track(tl, tl->buffer_tracks, b->memory, PID_MEMORIES, memory_name(tl->r, (int32_t)b->memory),
                            " buffers");
    const char *tag = b->tag != STRATA_TAG_NONE ? strata_tag_name(b->tag) : "untagged";
    GString *args = tl->args;
    g_string_truncate(args, 0);
    put_u64_member(args, "{\"offset\":", b->offset);
    put_u64_member(args, ",\"size\":", b->size);
    put_string_member(args, ",\"tag\":", tag);
    put_u64_member(args, ",\"buffer\":", b->id);
    put_char(args, '}');
    emit_x(tl, t, b->start, end, tag, NULL, "buffer", args);
}

static gpointer live_key(uint32_t memory, uint64_t id)
{
    return GSIZE_TO_POINTER((gsize)(((uint64_t)memory << 48) ^ id));
}

/* Keeps `order` from growing with every alloc of a long run. */
static void compact_order(strata_timeline *tl)
{
    GArray *order = tl->order;
    if (order->len <= 4096 || order->len <= 2 * g_hash_table_size(tl->live))
        return;
    guint kept = 0;
    for (guint j = 0; j < order->len; j++) {
        gpointer k = g_array_index(order, gpointer, j);
        if (g_hash_table_contains(tl->live, k))
            g_array_index(order, gpointer, kept++) = k;
    }
    g_array_set_size(order, kept);
}

/* Buffer lifetimes from pairs of samples (+size, -size) per (memory, id). */
static void track_lifetime(strata_timeline *tl, const strata_mem_sample *s)
{
    gpointer key = live_key(s->memory, s->buffer_id);
    if (s->delta > 0) {
        guint slot = tl->free_slot;
        if (slot) {
            tl->free_slot = g_array_index(tl->slots, live_buffer, slot - 1).next_free;
        } else {
            g_array_set_size(tl->slots, tl->slots->len + 1);
            slot = tl->slots->len;
        }
        g_array_index(tl->slots, live_buffer, slot - 1) = (live_buffer){
            .start = s->t_s, .offset = s->offset, .size = (uint64_t)s->delta, .id = s->buffer_id,
            .memory = s->memory, .tag = s->tag};
        gpointer old = NULL;
        if (g_hash_table_lookup_extended(tl->live, key, NULL, &old)) { /* the earlier one is dropped */
            g_array_index(tl->slots, live_buffer, GPOINTER_TO_UINT(old) - 1).next_free = tl->free_slot;
            tl->free_slot = GPOINTER_TO_UINT(old);
        }
        g_hash_table_insert(tl->live, key, GUINT_TO_POINTER(slot));
        g_array_append_val(tl->order, key);
    } else if (s->delta < 0) {
        guint slot = GPOINTER_TO_UINT(g_hash_table_lookup(tl->live, key));
        if (slot) {
            live_buffer *b = &g_array_index(tl->slots, live_buffer, slot - 1);
            buffer_event(tl, b, s->t_s);
            b->next_free = tl->free_slot;
            tl->free_slot = slot;
            g_hash_table_remove(tl->live, key);
        }
    }
    compact_order(tl);
}

static void counter_head(GString *o, const char *mem, const char *what, double t)
{
    put_lit(o, "{\"ph\":\"C\",\"name\":");
    json_string3(o, mem, what, NULL);
    put_lit(o, ",\"pid\":3,\"tid\":0,\"ts\":");
    json_us(o, to_ns(t));
}

/* The per-memory counter rows cover memory `m`. */
static void counters_cover(strata_timeline *tl, guint m)
{
    if (m < tl->n_mem)
        return;
    guint n = MAX(m + 1, 2 * tl->n_mem);
    tl->by_tag = g_renew(int64_t, tl->by_tag, (gsize)n * STRATA_TAG__COUNT);
    tl->tag_seen = g_renew(bool, tl->tag_seen, (gsize)n * STRATA_TAG__COUNT);
    memset(tl->by_tag + (gsize)tl->n_mem * STRATA_TAG__COUNT, 0, (gsize)(n - tl->n_mem) * STRATA_TAG__COUNT * sizeof(int64_t));
    memset(tl->tag_seen + (gsize)tl->n_mem * STRATA_TAG__COUNT, 0, (gsize)(n - tl->n_mem) * STRATA_TAG__COUNT);
    tl->n_mem = n;
}

static void add_counters(strata_timeline *tl, const strata_mem_sample *s)
{
    const char *mem = memory_name(tl->r, (int32_t)s->memory);
    GString *o = begin_event(tl);
    counter_head(o, mem, " in use", s->t_s);
    put_u64_member(o, ",\"args\":{\"allocated\":", s->allocated);
    put_u64_member(o, ",\"reserved\":", s->reserved);
    put_lit(o, "}}");
    end_event(tl);
    if ((guint)s->tag >= STRATA_TAG__COUNT)
        return;
    counters_cover(tl, s->memory);
    int64_t *row = tl->by_tag + (gsize)s->memory * STRATA_TAG__COUNT;
    bool *seen = tl->tag_seen + (gsize)s->memory * STRATA_TAG__COUNT;
    row[s->tag] += s->delta;
    seen[s->tag] = true;
    o = begin_event(tl);
    counter_head(o, mem, " by tag", s->t_s);
    put_lit(o, ",\"args\":{");
    bool first = true;
    for (int t = 0; t < STRATA_TAG__COUNT; t++) {
        if (!seen[t])
            continue;
        put_str(o, first ? "\"" : ",\"");
        put_str(o, t == STRATA_TAG_NONE ? "untagged" : strata_tag_name((strata_tag)t));
        put_lit(o, "\":");
        put_i64(o, MAX(row[t], 0));
        first = false;
    }
    put_lit(o, "}}");
    end_event(tl);
}

void strata_timeline_sample(strata_timeline *tl, const strata_mem_sample *s)
{
    track_lifetime(tl, s);
    add_counters(tl, s);
}

/* ---- the file ---------------------------------------------------------- */

strata_timeline *strata_timeline_new(FILE *out, const strata_results *r, bool spans, bool samples)
{
    strata_timeline *tl = g_new0(strata_timeline, 1);
    tl->out = out;
    tl->r = r;
    tl->buf = g_string_sized_new(FLUSH_AT + 4096);
    tl->args = g_string_new(NULL);
    tl->first_event = true;
    tl->next_tid = 1;
    tl->tracks = g_ptr_array_new_with_free_func(track_free);
    tl->by_name = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    tl->stream_tracks = g_ptr_array_new();
    tl->device_named = g_new0(guint8, r->devices > 1 ? r->devices : 1);
    tl->link_tracks = g_ptr_array_new();
    tl->buffer_tracks = g_ptr_array_new();
    tl->live = g_hash_table_new(g_direct_hash, g_direct_equal);
    tl->slots = g_array_new(FALSE, FALSE, sizeof(live_buffer));
    tl->order = g_array_new(FALSE, FALSE, sizeof(gpointer));

    put_lit(tl->buf, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
    const char *pnames[] = {NULL, "streams", "links", "memories"};
    for (int pid = PID_STREAMS; pid <= PID_MEMORIES; pid++) {
        meta(tl, "process_name", pid, 0, "name", pnames[pid], NULL, NULL, 0);
        meta(tl, "process_sort_index", pid, 0, "sort_index", NULL, NULL, NULL, pid);
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
        open_lane(tl, g_ptr_array_index(tl->tracks, i));
    return tl;
}

static void write_other_data(strata_timeline *tl)
{
    const strata_results *r = tl->r;
    GString *s = tl->buf;
    put_string_member(s, "\n],\"otherData\":{\"producer\":", r->producer);
    put_string_member(s, ",\"hardware\":", r->hardware);
    put_string_member(s, ",\"trace\":", r->trace);
    g_string_append_printf(s, ",\"status\":\"%s\",\"makespan_s\":", r->oom ? "oom" : "ok");
    char num[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(num, sizeof num, "%.9g", r->makespan_s);
    put_str(s, num);
    put_lit(s, ",\"memories\":{");
    for (guint i = 0; r->memories && i < r->memories->len; i++) {
        const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        if (i)
            put_char(s, ',');
        json_string(s, m->name);
        g_string_append_printf(s, ":{\"capacity_bytes\":%" G_GUINT64_FORMAT ",\"kind\":", m->capacity_bytes);
        json_string(s, m->kind);
        put_lit(s, "}");
    }
    put_lit(s, "}}}\n");
}

bool strata_timeline_finish(strata_timeline *tl)
{
    /* Buffers live at the end span to the makespan (or their start). */
    for (guint i = 0; i < tl->order->len; i++) {
        gpointer key = g_array_index(tl->order, gpointer, i);
        guint slot = GPOINTER_TO_UINT(g_hash_table_lookup(tl->live, key));
        if (!slot)
            continue;
        const live_buffer *b = &g_array_index(tl->slots, live_buffer, slot - 1);
        buffer_event(tl, b, MAX(tl->r->makespan_s, b->start));
        g_hash_table_remove(tl->live, key);
    }
    write_other_data(tl);
    flush_out(tl);
    return fflush(tl->out) == 0 && !ferror(tl->out);
}

void strata_timeline_free(strata_timeline *tl)
{
    if (!tl)
        return;
    g_string_free(tl->buf, TRUE);
    g_string_free(tl->args, TRUE);
    g_hash_table_unref(tl->by_name);
    g_ptr_array_unref(tl->tracks);
    g_ptr_array_unref(tl->stream_tracks);
    g_free(tl->device_named);
    g_ptr_array_unref(tl->link_tracks);
    g_ptr_array_unref(tl->buffer_tracks);
    g_hash_table_unref(tl->live);
    g_array_unref(tl->slots);
    g_array_unref(tl->order);
    g_free(tl->by_tag);
    g_free(tl->tag_seen);
    g_free(tl);
}

/* ---- finished results -------------------------------------------------- */

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
    strata_timeline *tl = strata_timeline_new(out, r, r->spans != NULL, r->mem_samples != NULL);
    for (guint i = 0; r->spans && i < r->spans->len; i++)
        strata_timeline_span(tl, &g_array_index(r->spans, strata_op_span, i));
    for (guint i = 0; r->mem_samples && i < r->mem_samples->len; i++)
        strata_timeline_sample(tl, &g_array_index(r->mem_samples, strata_mem_sample, i));
    bool ok = strata_timeline_finish(tl);
    strata_timeline_free(tl);
    return ok;
}
