/*
 * timeline_perfetto.c: the timeline as Perfetto's own protobuf trace
 * (`--timeline T.pftrace`; the writer row strata_tl_perfetto of
 * timeline_writer.h), the format ui.perfetto.dev and trace_processor read
 * natively: a Trace's TracePackets on one sequence (trusted_packet_sequence_id
 * 1), in the schema vendored in third_party/perfetto/perfetto_trace.proto.
 *
 * Layout (the JSON writer's, timeline.c):
 *   - a process track per JSON process (TrackDescriptor.process: pid, name,
 *     sort index) and a thread track per lane (TrackDescriptor.thread: pid,
 *     tid, "NAME" or "NAME #N", sort index when it fits an int32), uuid 2 tid;
 *   - a slice per JSON "X" event: TYPE_SLICE_BEGIN at its start (name,
 *     category, args as debug annotations) and TYPE_SLICE_END at its end on
 *     the lane's track, both written at once (the lane's next event starts
 *     at or after this end); times are whole nanoseconds; an op that takes
 *     no time (strata_tl_instant: a record, an alloc, a free, a release)
 *     is one TYPE_INSTANT event instead, with the same fields and args;
 *   - a counter track per JSON counter series, named as Perfetto names a
 *     JSON counter's series ("hbm in use allocated", "hbm in use reserved",
 *     "hbm by tag weights"), under the "memories" process: allocated and
 *     reserved at every sample, a tag's bytes at each sample that changes
 *     them (a counter holds its value until the next, so the series are the
 *     JSON's), all three in one packet (counter_value and the track event's
 *     extra counter values); uuid 2 k + 1;
 *   - names of kinds and tags, the categories and the args' names are
 *     interned once in the first packet (SEQ_INCREMENTAL_STATE_CLEARED);
 *     a span with a label is named "KIND LABEL" in full (every label is
 *     its op's own: interning would send each once anyway);
 *   - the string args' values (a tag's name, a memory's from/to/memory)
 *     are interned too, as debug annotation string values
 *     (InternedData.debug_annotation_string_values, referenced by
 *     DebugAnnotation.string_value_iid, as trace_processor's
 *     util/proto_to_args_parser.cc StepDebugAnnotation resolves
 *     them): the tags' and "?" in the first packet, the memories' in a
 *     packet of their own before the first event that names them (the
 *     memories can be listed after the timeline starts), as Perfetto's
 *     SDK sends an interned string in the packet before its first use;
 *   - times as deltas: the first packet also defines a sequence-scoped
 *     incremental clock (CLOCK_DELTA, ClockSnapshot.Clock.is_incremental,
 *     at 0 ns with BOOTTIME, the trace's clock, at 0) and makes it every
 *     later packet's default (TracePacketDefaults.timestamp_clock_id), as
 *     Perfetto's own SDK does (src/tracing/internal/track_event_internal.cc,
 *     ResetIncrementalState): a packet's timestamp is then the nanoseconds
 *     since the previous packet on that clock (trace_processor's
 *     ClockSynchronizer::ClockDomain::ToNs adds it, in file order), 1 to 3
 *     bytes where an absolute time takes 5 to 6. Events do not come in
 *     time order (a slice is written whole when it ends, and its begin can
 *     lie before the previous packet's time: a third of the begins on
 *     `gen transformer`), so a time before the clock's names its clock,
 *     BOOTTIME, and is absolute (timestamp_clock_id, 3 more bytes), and
 *     leaves the delta clock where it was. As TracePacketDefaults
 *     requires, every packet after the first carries
 *     SEQ_NEEDS_INCREMENTAL_STATE.
 * The JSON's "otherData" (producer, hardware, status, makespan) is not
 * written: the results JSON has them.
 *
 * Encoding: the rare packets (process and counter tracks, interned data)
 * are built as protobuf-c messages and packed by protobuf-c. The events (a
 * few per op) and the lanes' tracks (up to a fifth of the events: every
 * buffer alive at once has a lane) are written field by field: protobuf-c's reflective pack costs about
 * 1,800 instructions a packet (callgrind, a begin with 4 args and its end:
 * 3,600), several times the JSON writer's cost of an event, which would
 * defeat the format's purpose. Their field tags are taken from protobuf-c's
 * descriptors of the vendored schema at open, not written here, and
 * encoded there once with every run of bytes that all packets of a kind
 * repeat (sequence id, flags, an event's type and its track's tag, an
 * arg's name), as are the string args, whole (a memory's from/to/memory,
 * a buffer's tag: name and interned value): an event copies them whole
 * and encodes only its own numbers. Lengths of nested messages are redundant varints
 * of a width fixed beforehand, as Perfetto's own protozero writes them.
 * The tests unpack the file with protobuf-c.
 *
 * Invariants: the bytes depend only on the calls; every track is described
 * before the first event on it; each lane's slices come in time order.
 */
#include <stddef.h>
#include <string.h>
#include "core/units.h"
#include "perfetto_trace.pb-c.h"
#include "results/timeline_writer.h"

enum { CHUNK = 1 << 16 };              /* bytes of pending output written at once */
enum { EVENT_ROOM = 96 };              /* a packet's bytes besides its names and args */
enum { ARG_ROOM = 16 };                /* an integer arg's bytes at most */
enum { END_ROOM = 48 };                /* a slice's end packet's bytes at most, and slack */
enum { KIND_TEXT = 32 };               /* a kind's name and a space, copied whole */
enum { PROCESS_UUID = 1 };             /* process P: uuid PROCESS_UUID << 40 | P */
enum { CLOCK_DELTA = 64 };            /* the first sequence-scoped clock id (64 to 127) */
enum { CLOCK_TRACE = PERFETTO__PROTOS__CLOCK_SNAPSHOT__CLOCK__BUILTIN_CLOCKS__BOOTTIME }; /* the trace's clock */
/* Interned ids: names of kinds 1..N+1 (N = STRATA_OP__COUNT, "?" last),
 * then of tags; categories of kinds, then copy and buffer; args' names. */
enum { NAME_TAG0 = STRATA_OP__COUNT + 2, CAT_COPY = STRATA_OP__COUNT + 2, CAT_BUFFER };
enum { ARG_OP = 1, ARG_LINE, ARG_BYTES, ARG_FROM, ARG_TO, ARG_MEMORY, ARG_OFFSET, ARG_SIZE, ARG_TAG, ARG_BUFFER,
       ARG__END };
enum { SERIES_ALLOCATED, SERIES_RESERVED, SERIES_TAG0, SERIES_N = SERIES_TAG0 + STRATA_TAG__COUNT };
/* Interned string values: tag t (STRATA_TAG__COUNT: out of range) is
 * STR_TAG0 + t, the memory "?" STR_NO_MEMORY, memory m STR_MEMORY0 + m. */
enum { STR_TAG0 = 1, STR_NO_MEMORY = STR_TAG0 + STRATA_TAG__COUNT + 1, STR_MEMORY0 };

/* Field tags (number << 3 | wire type), from the schema's descriptors. */
typedef struct tags {
    uint32_t packet;                                   /* Trace */
    uint32_t timestamp, clock_id, track_event, sequence, flags; /* TracePacket */
    uint32_t type, track_uuid, name_iid, name, category, counter, annotation; /* TrackEvent */
    uint32_t extra_uuid, extra_value;                  /* TrackEvent's extra counters */
    uint32_t arg_name, arg_uint, arg_string_iid;       /* DebugAnnotation */
    uint32_t track_descriptor, uuid, thread;           /* TracePacket, TrackDescriptor */
    uint32_t pid, tid, thread_name, sort;              /* ThreadDescriptor */
} tags;

/* Bytes that every packet of a kind repeats (a field's tag and, where the
 * value is fixed, its value), encoded once at open: put_pre() copies them
 * in one fixed-size move. */
enum { PRE_MAX = 16 };
typedef struct pre {
    uint8_t b[PRE_MAX];
    uint8_t n;
} pre;

enum { MEM_FROM, MEM_TO, MEM_MEMORY, MEM_ARGS };

typedef struct pf_writer {
    strata_tl_out o;     /* pending output */
    const strata_results *r;
    tags t;
    uint64_t *series;    /* per memory, per series: its counter track's uuid (0: none yet) */
    guint n_series_mem;
    uint64_t next_counter;
    uint64_t clock_ns;   /* the delta clock's time: the latest time written as a delta */
    /* Encoded once (pf_open): the tags of packet, timestamp, track_event,
     * counter_value, extra uuid and value, name, name_iid, category and
     * annotation; the bytes between a packet's timestamp and its event
     * (sequence id, the flags, the event's tag); an
     * event's type and its track's tag, per type; an uint arg's name. */
    pre packet, timestamp, track_event, counter, extra_uuid, extra_value, name, name_iid, category, annotation;
    pre absolute;  /* a timestamp's clock when it is absolute (BOOTTIME) */
    pre after_ts;  /* sequence id, flags (SEQ_NEEDS_INCREMENTAL_STATE) and the event's tag */
    pre slice_begin, slice_end, instant, counter_event;
    pre arg_uint[ARG__END];
    /* String args, whole (a debug annotation of an interned value): */
    pre tag_arg[STRATA_TAG__COUNT + 1];
    size_t kind_n[STRATA_OP__COUNT + 1]; /* strlen of each kind's name ("?" last) */
    char kind_text[STRATA_OP__COUNT + 1][KIND_TEXT]; /* each kind's name and a space, padded with NULs */
    pre *mem_args;       /* per memory, then "?": MEM_ARGS each */
    guint n_mem_args;    /* memories in mem_args */
    guint n_mem_interned; /* memories whose names were sent (STR_MEMORY0 + m) */
} pf_writer;

/* ---- encoding ---------------------------------------------------------- */

static uint32_t tag_of(const ProtobufCMessageDescriptor *d, const char *field)
{
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(d, field);
    g_assert(f);
    uint32_t wire = f->type == PROTOBUF_C_TYPE_STRING || f->type == PROTOBUF_C_TYPE_BYTES ||
                            f->type == PROTOBUF_C_TYPE_MESSAGE
                        ? 2
                        : 0;
    return f->id << 3 | wire;
}

/* Where each tag goes in `tags`, and its message and field. */
#define TAG(member, message, name) {offsetof(tags, member), &perfetto__protos__##message##__descriptor, name}
static const struct {
    size_t at;
    const ProtobufCMessageDescriptor *message;
    const char *field;
} tag_fields[] = {
    TAG(packet, trace, "packet"),
    TAG(timestamp, trace_packet, "timestamp"),
    TAG(clock_id, trace_packet, "timestamp_clock_id"),
    TAG(track_event, trace_packet, "track_event"),
    TAG(sequence, trace_packet, "trusted_packet_sequence_id"),
    TAG(flags, trace_packet, "sequence_flags"),
    TAG(track_descriptor, trace_packet, "track_descriptor"),
    TAG(type, track_event, "type"),
    TAG(track_uuid, track_event, "track_uuid"),
    TAG(name_iid, track_event, "name_iid"),
    TAG(name, track_event, "name"),
    TAG(category, track_event, "category_iids"),
    TAG(counter, track_event, "counter_value"),
    TAG(annotation, track_event, "debug_annotations"),
    TAG(extra_uuid, track_event, "extra_counter_track_uuids"),
    TAG(extra_value, track_event, "extra_counter_values"),
    TAG(arg_name, debug_annotation, "name_iid"),
    TAG(arg_uint, debug_annotation, "uint_value"),
    TAG(arg_string_iid, debug_annotation, "string_value_iid"),
    TAG(uuid, track_descriptor, "uuid"),
    TAG(thread, track_descriptor, "thread"),
    TAG(pid, thread_descriptor, "pid"),
    TAG(tid, thread_descriptor, "tid"),
    TAG(thread_name, thread_descriptor, "thread_name"),
    TAG(sort, thread_descriptor, "legacy_sort_index"),
};
#undef TAG

static void find_tags(tags *t)
{
    for (size_t i = 0; i < G_N_ELEMENTS(tag_fields); i++)
        *(uint32_t *)(void *)((char *)t + tag_fields[i].at) = tag_of(tag_fields[i].message, tag_fields[i].field);
}

static inline uint8_t *varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint8_t *field(uint8_t *p, uint32_t tag, uint64_t v)
{
    return varint(varint(p, tag), v);
}

static inline uint8_t *put_pre(uint8_t *p, const pre *c)
{
    memcpy(p, c->b, PRE_MAX);
    return p + c->n;
}

/* The bytes from `from` to `to` (at most PRE_MAX: the encoder wrote them) as a pre. */
static pre pre_of(const uint8_t *from, const uint8_t *to)
{
    pre c = {.n = (uint8_t)(to - from)};
    g_assert(to - from <= PRE_MAX);
    memcpy(c.b, from, c.n);
    return c;
}

static pre pre_tag(uint32_t tag)
{
    uint8_t b[PRE_MAX];
    return pre_of(b, varint(b, tag));
}

/* Bytes of a length field that holds any length up to bound. */
static inline int width_for(size_t bound)
{
    return bound < 1u << 7 ? 1 : bound < 1u << 14 ? 2 : bound < 1u << 21 ? 3 : 4;
}

/* The length of the bytes from at + width to end, in width bytes. */
static inline void put_length(uint8_t *at, const uint8_t *end, int width)
{
    size_t v = (size_t)(end - at - width);
    if (width == 2) { /* an event's (bounds of 128 to 16,383 bytes) */
        at[0] = (uint8_t)(v | 0x80);
        at[1] = (uint8_t)(v >> 7);
        return;
    }
    for (int i = 0; i < width - 1; i++, v >>= 7)
        at[i] = (uint8_t)(v | 0x80);
    at[width - 1] = (uint8_t)v;
}

static inline uint8_t *room(pf_writer *w, size_t n)
{
    return (uint8_t *)strata_tl_out_room(&w->o, n);
}

/* A TracePacket packed by protobuf-c, as a Trace of one packet. */
static void put_message(pf_writer *w, Perfetto__Protos__TracePacket *pkt)
{
    pkt->optional_trusted_packet_sequence_id_case =
        PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
    pkt->trusted_packet_sequence_id = 1;
    if (!pkt->has_sequence_flags) { /* every packet after the first */
        pkt->has_sequence_flags = true;
        pkt->sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
    }
    Perfetto__Protos__Trace trace = PERFETTO__PROTOS__TRACE__INIT;
    trace.n_packet = 1;
    trace.packet = &pkt;
    size_t n = protobuf_c_message_get_packed_size(&trace.base);
    w->o.len += protobuf_c_message_pack(&trace.base, room(w, n));
}

/* A track's descriptor packet. */
static void put_track(pf_writer *w, Perfetto__Protos__TrackDescriptor *track)
{
    Perfetto__Protos__TracePacket pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
    pkt.track_descriptor = track;
    put_message(w, &pkt);
}

/* An event packet being written: where its two lengths go. */
typedef struct open_event {
    uint8_t *packet, *event;
    int width;
} open_event;

/* Room for a packet of `body` bytes besides EVENT_ROOM, and `more` bytes
 * after it (a slice's end; what whole-step copies may write past their text). */
static inline uint8_t *event_room(pf_writer *w, size_t body, size_t more)
{
    return room(w, body + EVENT_ROOM + 2 * PRE_MAX + more);
}

/* A packet's time ns at p (TIME_ROOM bytes at most): its delta on the
 * delta clock, or, before the clock's time, absolute on BOOTTIME. */
enum { TIME_ROOM = 1 + 10 + 3 };
static inline uint8_t *put_time(pf_writer *w, uint8_t *p, int64_t ns)
{
    uint64_t t = (uint64_t)ns;
    p = put_pre(p, &w->timestamp);
    if (G_LIKELY(ns >= 0 && t >= w->clock_ns)) {
        p = varint(p, t - w->clock_ns);
        w->clock_ns = t;
        return p;
    }
    return put_pre(varint(p, t), &w->absolute);
}

/* Starts a packet at p (event_room() made room for it) at ns with a track
 * event of type on track uuid, and `body` more bytes of the event at most. */
static inline uint8_t *begin_event(pf_writer *w, open_event *o, uint8_t *p, size_t body, int64_t ns,
                                   const pre *type, uint64_t uuid)
{
    o->width = width_for(body + EVENT_ROOM);
    p = put_pre(p, &w->packet);
    o->packet = p;
    p = put_time(w, p + o->width, ns);
    p = put_pre(p, &w->after_ts);
    o->event = p;
    return varint(put_pre(p + o->width, type), uuid);
}

static inline void end_event(const open_event *o, uint8_t *end)
{
    put_length(o->event, end, o->width);
    put_length(o->packet, end, o->width);
}

/* The pending output ends at end. */
static inline void taken(pf_writer *w, const uint8_t *end)
{
    w->o.len = (size_t)(end - (uint8_t *)w->o.buf);
}

static inline uint8_t *arg_uint(const pf_writer *w, uint8_t *p, int name, uint64_t v)
{
    uint8_t *len = p + w->annotation.n;
    p = varint(put_pre(p, &w->arg_uint[name]), v);
    *len = (uint8_t)(p - len - 1); /* under 128: a name_iid and a varint */
    return p;
}

/* The debug annotation of arg `name` with the interned string iid, whole
 * (at most PRE_MAX bytes: tags of one or two bytes, an iid of 5 at most). */
static pre arg_string(const pf_writer *w, int name, uint64_t iid)
{
    uint8_t b[PRE_MAX + 8];
    uint8_t *p = varint(b, w->t.annotation), *len = p++;
    p = field(field(p, w->t.arg_name, (uint64_t)name), w->t.arg_string_iid, iid);
    *len = (uint8_t)(p - len - 1);
    return pre_of(b, p);
}

/* ---- tracks ------------------------------------------------------------ */

static const char *memory_name(const strata_results *r, int32_t index)
{
    if (index < 0 || !r->memories || (guint)index >= r->memories->len)
        return "?";
    return g_array_index(r->memories, strata_memory_result, index).name;
}

static const char *tag_name(int t)
{
    return t == STRATA_TAG_NONE ? "untagged" : strata_tag_name((strata_tag)t);
}

static void pf_process(void *ws, int pid, const char *name_a, const char *name_b, long sort)
{
    pf_writer *w = ws;
    char *name = g_strconcat(name_a, name_b, NULL);
    Perfetto__Protos__ProcessDescriptor proc = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
    proc.has_pid = proc.has_legacy_sort_index = true;
    proc.pid = pid;
    proc.process_name = name;
    proc.legacy_sort_index = (int32_t)sort;
    Perfetto__Protos__TrackDescriptor track = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    track.has_uuid = true;
    track.uuid = (uint64_t)PROCESS_UUID << 40 | (uint64_t)pid;
    track.process = &proc;
    put_track(w, &track);
    g_free(name);
}

/* A lane's thread track (a track descriptor per lane: written field by
 * field too, as lanes can be a fifth of the events). */
static void pf_lane(void *ws, const strata_tl_track *t, int tid, guint index, long sort)
{
    pf_writer *w = ws;
    const tags *g = &w->t;
    size_t name_n = strlen(t->name), bound = name_n + EVENT_ROOM;
    int width = width_for(bound);
    uint8_t *p = varint(room(w, bound + 16), g->packet), *packet = p;
    p = field(field(p + width, g->sequence, 1), g->flags,
              PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE);
    p = varint(p, g->track_descriptor);
    uint8_t *track = p;
    p = field(p + width, g->uuid, 2 * (uint64_t)tid);
    p = varint(p, g->thread);
    uint8_t *thread = p;
    p = field(field(p + width, g->pid, (uint64_t)(int64_t)t->pid), g->tid, (uint64_t)tid);
    if (sort >= 0 && sort <= INT32_MAX)
        p = field(p, g->sort, (uint64_t)sort);
    char number[STRATA_U64_DIGITS];
    size_t number_n = index ? strata_format_u64(number, (uint64_t)index + 1) : 0;
    p = field(p, g->thread_name, name_n + (index ? 2 + number_n : 0));
    p = (uint8_t *)memcpy(p, t->name, name_n) + name_n;
    if (index) {
        *p++ = ' ';
        *p++ = '#';
        p = (uint8_t *)memcpy(p, number, number_n) + number_n;
    }
    put_length(thread, p, width);
    put_length(track, p, width);
    put_length(packet, p, width);
    w->o.len = (size_t)(p - (uint8_t *)w->o.buf);
}

static uint64_t new_series(pf_writer *w, uint32_t m, int series);

/* The uuid of memory m's counter series (described when first used). */
static inline uint64_t series_uuid(pf_writer *w, uint32_t m, int series)
{
    if (G_LIKELY(m < w->n_series_mem)) {
        uint64_t uuid = w->series[(gsize)m * SERIES_N + (gsize)series];
        if (uuid)
            return uuid;
    }
    return new_series(w, m, series);
}

/* Describes memory m's counter series (its first use). */
static uint64_t new_series(pf_writer *w, uint32_t m, int series)
{
    if (m >= w->n_series_mem) {
        guint n = MAX(m + 1, 2 * w->n_series_mem);
        w->series = g_renew(uint64_t, w->series, (gsize)n * SERIES_N);
        memset(w->series + (gsize)w->n_series_mem * SERIES_N, 0, (gsize)(n - w->n_series_mem) * SERIES_N * sizeof(uint64_t));
        w->n_series_mem = n;
    }
    uint64_t *uuid = &w->series[(gsize)m * SERIES_N + (gsize)series];
    if (*uuid)
        return *uuid;
    *uuid = 2 * ++w->next_counter + 1;
    const char *mem = memory_name(w->r, (int32_t)m);
    char *name = series == SERIES_ALLOCATED  ? g_strconcat(mem, " in use allocated", NULL)
                 : series == SERIES_RESERVED ? g_strconcat(mem, " in use reserved", NULL)
                                             : g_strconcat(mem, " by tag ", tag_name(series - SERIES_TAG0), NULL);
    Perfetto__Protos__CounterDescriptor counter = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
    counter.has_unit = true;
    counter.unit = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_SIZE_BYTES;
    Perfetto__Protos__TrackDescriptor track = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    track.has_uuid = track.has_parent_uuid = true;
    track.uuid = *uuid;
    track.parent_uuid = (uint64_t)PROCESS_UUID << 40 | 3; /* "memories" (timeline.c's PID_MEMORIES) */
    track.static_or_dynamic_name_case = PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
    track.name = name;
    track.counter = &counter;
    put_track(w, &track);
    g_free(name);
    return *uuid;
}

/* ---- events ------------------------------------------------------------ */

/* s as the interned string value iid (its bytes borrowed, not copied). */
static Perfetto__Protos__InternedString *interned_string(Perfetto__Protos__InternedString *s, uint64_t iid,
                                                         const char *str)
{
    perfetto__protos__interned_string__init(s);
    s->has_iid = s->has_str = true;
    s->iid = iid;
    s->str = (ProtobufCBinaryData){.len = strlen(str), .data = (uint8_t *)(uintptr_t)str};
    return s;
}

/* Sends the names of the memories not sent yet, up to n, as interned
 * string values, in a packet of their own. */
static void intern_memories(pf_writer *w, guint n)
{
    if (n <= w->n_mem_interned)
        return;
    guint k = n - w->n_mem_interned;
    Perfetto__Protos__InternedString *strings = g_new(Perfetto__Protos__InternedString, k);
    Perfetto__Protos__InternedString **string_p = g_new(Perfetto__Protos__InternedString *, k);
    for (guint i = 0; i < k; i++) {
        guint m = w->n_mem_interned + i;
        const char *name = memory_name(w->r, (int32_t)m);
        string_p[i] = interned_string(&strings[i], STR_MEMORY0 + (uint64_t)m, name);
    }
    Perfetto__Protos__InternedData interned = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    interned.n_debug_annotation_string_values = k;
    interned.debug_annotation_string_values = string_p;
    Perfetto__Protos__TracePacket pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    pkt.interned_data = &interned;
    put_message(w, &pkt);
    g_free(string_p);
    g_free(strings);
    w->n_mem_interned = n;
}

/* The memories' from/to/memory args for n memories and "?", and the new
 * memories' names sent (memory_args). */
static void renew_memory_args(pf_writer *w, guint n)
{
    intern_memories(w, n);
    w->mem_args = g_renew(pre, w->mem_args, (gsize)(n + 1) * MEM_ARGS);
    for (guint m = 0; m <= n; m++) {
        uint64_t iid = m < n ? STR_MEMORY0 + (uint64_t)m : STR_NO_MEMORY;
        w->mem_args[m * MEM_ARGS + MEM_FROM] = arg_string(w, ARG_FROM, iid);
        w->mem_args[m * MEM_ARGS + MEM_TO] = arg_string(w, ARG_TO, iid);
        w->mem_args[m * MEM_ARGS + MEM_MEMORY] = arg_string(w, ARG_MEMORY, iid);
    }
    w->n_mem_args = n;
}

/* Memory `index`'s from/to/memory args (MEM_ARGS; "?" out of range);
 * encoded again, and the new memories' names sent, when memories were
 * listed after the timeline started. */
static inline const pre *memory_args(pf_writer *w, int32_t index)
{
    guint n = w->r->memories ? w->r->memories->len : 0;
    if (G_UNLIKELY(!w->mem_args || n != w->n_mem_args))
        renew_memory_args(w, n);
    return &w->mem_args[(index < 0 || (guint)index >= n ? n : (guint)index) * MEM_ARGS];
}

/* The slice's end at p, right after its begin on the same lane (END_ROOM
 * bytes at most: both its lengths take one byte, as begin_event's width
 * for an empty body). */
static inline uint8_t *slice_end(pf_writer *w, uint8_t *p, uint64_t uuid, int64_t end_ns)
{
    p = put_pre(p, &w->packet);
    uint8_t *packet = p++;
    p = put_pre(put_time(w, p, end_ns), &w->after_ts);
    uint8_t *event = p++;
    p = varint(put_pre(p, &w->slice_end), uuid);
    *event = (uint8_t)(p - event - 1);
    *packet = (uint8_t)(p - packet - 1);
    return p;
}

static void pf_span(void *ws, const strata_tl_track *t, int tid, int64_t start_ns, int64_t end_ns,
                    const strata_op_span *sp, bool on_link)
{
    (void)t;
    pf_writer *w = ws;
    unsigned kind = MIN((unsigned)sp->kind, (unsigned)STRATA_OP__COUNT);
    const char *label = sp->label && *sp->label ? sp->label : NULL;
    size_t kind_n = label ? w->kind_n[kind] : 0, label_n = label ? strlen(label) : 0;
    const pre *m1 = NULL, *m2 = NULL;
    if (sp->kind == STRATA_OP_COPY) {
        m1 = &memory_args(w, sp->src_memory)[MEM_FROM];
        m2 = &memory_args(w, sp->dst_memory)[MEM_TO];
    } else if (sp->memory >= 0) {
        m1 = &memory_args(w, sp->memory)[MEM_MEMORY];
    }
    uint64_t uuid = 2 * (uint64_t)tid;
    size_t body = kind_n + label_n + 8 * ARG_ROOM;
    bool instant = strata_tl_instant(sp, start_ns, end_ns);
    open_event o;
    uint8_t *p = begin_event(w, &o, event_room(w, body, END_ROOM + KIND_TEXT), body, start_ns,
                             instant ? &w->instant : &w->slice_begin, uuid);
    if (label) {
        p = varint(put_pre(p, &w->name), kind_n + 1 + label_n);
        memcpy(p, w->kind_text[kind], KIND_TEXT); /* "KIND " */
        p = (uint8_t *)memcpy(p + kind_n + 1, label, label_n) + label_n;
    } else {
        p = varint(put_pre(p, &w->name_iid), kind + 1);
    }
    p = varint(put_pre(p, &w->category), on_link ? CAT_COPY : kind + 1);
    p = arg_uint(w, p, ARG_OP, sp->op_index);
    p = arg_uint(w, p, ARG_LINE, sp->line);
    p = arg_uint(w, p, ARG_BYTES, sp->bytes);
    if (m1)
        p = put_pre(p, m1);
    if (m2)
        p = put_pre(p, m2);
    end_event(&o, p);
    taken(w, instant ? p : slice_end(w, p, uuid, end_ns));
}

static void pf_buffer(void *ws, const strata_tl_track *t, int tid, int64_t start_ns, int64_t end_ns,
                      const strata_tl_buffer *b)
{
    (void)t;
    pf_writer *w = ws;
    unsigned tag = MIN((unsigned)b->tag, (unsigned)STRATA_TAG__COUNT);
    uint64_t uuid = 2 * (uint64_t)tid;
    size_t body = 6 * ARG_ROOM;
    open_event o;
    uint8_t *p = begin_event(w, &o, event_room(w, body, END_ROOM), body, start_ns, &w->slice_begin, uuid);
    p = varint(put_pre(p, &w->name_iid), NAME_TAG0 + tag);
    p = varint(put_pre(p, &w->category), CAT_BUFFER);
    p = arg_uint(w, p, ARG_OFFSET, b->offset);
    p = arg_uint(w, p, ARG_SIZE, b->size);
    p = put_pre(p, &w->tag_arg[tag]);
    p = arg_uint(w, p, ARG_BUFFER, b->id);
    end_event(&o, p);
    taken(w, slice_end(w, p, uuid, end_ns));
}

/* A sample's counters in one packet: allocated on the event's own track,
 * reserved and the tag's bytes as extra counter values on theirs. */
static void pf_counters(void *ws, const strata_mem_sample *s, int64_t ns, strata_tl_tag_count *row)
{
    pf_writer *w = ws;
    uint64_t allocated = series_uuid(w, s->memory, SERIES_ALLOCATED);
    uint64_t reserved = series_uuid(w, s->memory, SERIES_RESERVED);
    uint64_t tag = row ? series_uuid(w, s->memory, SERIES_TAG0 + (int)s->tag) : 0;
    open_event o;
    uint8_t *p = begin_event(w, &o, event_room(w, 6 * ARG_ROOM, 0), 6 * ARG_ROOM, ns, &w->counter_event, allocated);
    p = varint(put_pre(p, &w->counter), (uint64_t)s->allocated);
    p = varint(put_pre(varint(put_pre(p, &w->extra_uuid), reserved), &w->extra_value), (uint64_t)s->reserved);
    if (row)
        p = varint(put_pre(varint(put_pre(p, &w->extra_uuid), tag), &w->extra_value),
                   (uint64_t)MAX(row[s->tag].bytes, 0));
    end_event(&o, p);
    taken(w, p);
}

/* ---- the file ---------------------------------------------------------- */

/* The bytes that packets repeat, encoded once (pf_writer). */
static void encode_constants(pf_writer *w)
{
    const tags *g = &w->t;
    w->packet = pre_tag(g->packet);
    w->timestamp = pre_tag(g->timestamp);
    w->track_event = pre_tag(g->track_event);
    w->counter = pre_tag(g->counter);
    w->extra_uuid = pre_tag(g->extra_uuid);
    w->extra_value = pre_tag(g->extra_value);
    w->name = pre_tag(g->name);
    w->name_iid = pre_tag(g->name_iid);
    w->category = pre_tag(g->category);
    w->annotation = pre_tag(g->annotation);
    uint8_t b[PRE_MAX];
    w->absolute = pre_of(b, field(b, g->clock_id, CLOCK_TRACE));
    w->after_ts = pre_of(
        b, varint(field(field(b, g->sequence, 1), g->flags,
                        PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE),
                  g->track_event));
    w->slice_begin = pre_of(b, varint(field(b, g->type, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN), g->track_uuid));
    w->slice_end = pre_of(b, varint(field(b, g->type, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END), g->track_uuid));
    w->instant = pre_of(b, varint(field(b, g->type, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT), g->track_uuid));
    w->counter_event = pre_of(b, varint(field(b, g->type, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER), g->track_uuid));
    for (int a = 1; a < ARG__END; a++) { /* the annotation's tag, its length (set by arg_uint), name and value's tag */
        uint8_t *p = varint(b, g->annotation);
        *p++ = 0;
        w->arg_uint[a] = pre_of(b, varint(field(p, g->arg_name, (uint64_t)a), g->arg_uint));
    }
    for (int k = 0; k <= STRATA_OP__COUNT; k++) {
        const char *kind = strata_op_kind_name((strata_op_kind)k);
        w->kind_n[k] = strlen(kind);
        g_assert(w->kind_n[k] < KIND_TEXT);
        memcpy(w->kind_text[k], kind, w->kind_n[k]);
        w->kind_text[k][w->kind_n[k]] = ' ';
    }
    for (int t = 0; t <= STRATA_TAG__COUNT; t++)
        w->tag_arg[t] = arg_string(w, ARG_TAG, STR_TAG0 + (uint64_t)t);
}

static void *pf_open(FILE *out, const strata_results *r)
{
    pf_writer *w = g_new0(pf_writer, 1);
    strata_tl_out_init(&w->o, out, CHUNK);
    w->r = r;
    find_tags(&w->t);
    encode_constants(w);
    return w;
}

/* The first packet: the names every event refers to, interned. */
static void pf_begin(void *ws)
{
    pf_writer *w = ws;
    enum { N_NAMES = NAME_TAG0 + STRATA_TAG__COUNT, N_CATS = CAT_BUFFER, N_ARGS = ARG__END - 1 };
    Perfetto__Protos__EventName names[N_NAMES], *name_p[N_NAMES];
    Perfetto__Protos__EventCategory cats[N_CATS], *cat_p[N_CATS];
    Perfetto__Protos__DebugAnnotationName args[N_ARGS], *arg_p[N_ARGS];
    enum { N_STRINGS = STR_NO_MEMORY };
    Perfetto__Protos__InternedString strings[N_STRINGS], *string_p[N_STRINGS];
    static const char *const arg_names[N_ARGS] = {"op",     "line", "bytes", "from", "to",
                                                  "memory", "offset", "size", "tag",  "buffer"};
    for (int i = 0; i < N_NAMES; i++) {
        perfetto__protos__event_name__init(&names[i]);
        names[i].has_iid = true;
        names[i].iid = (uint64_t)i + 1;
        names[i].name = (char *)(i <= STRATA_OP__COUNT ? strata_op_kind_name((strata_op_kind)i)
                                                       : tag_name(i + 1 - NAME_TAG0));
        name_p[i] = &names[i];
    }
    for (int i = 0; i < N_CATS; i++) {
        perfetto__protos__event_category__init(&cats[i]);
        cats[i].has_iid = true;
        cats[i].iid = (uint64_t)i + 1;
        cats[i].name = (char *)(i + 1 == CAT_COPY     ? "copy"
                                : i + 1 == CAT_BUFFER ? "buffer"
                                                      : strata_op_kind_name((strata_op_kind)i));
        cat_p[i] = &cats[i];
    }
    for (int i = 0; i < N_ARGS; i++) {
        perfetto__protos__debug_annotation_name__init(&args[i]);
        args[i].has_iid = true;
        args[i].iid = (uint64_t)i + 1;
        args[i].name = (char *)arg_names[i];
        arg_p[i] = &args[i];
    }
    for (int i = 0; i < N_STRINGS; i++) { /* the tags' names, then "?" */
        const char *s = i + 1 == STR_NO_MEMORY ? memory_name(w->r, -1) : tag_name(i + 1 - STR_TAG0);
        string_p[i] = interned_string(&strings[i], (uint64_t)i + 1, s);
    }
    Perfetto__Protos__InternedData interned = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    interned.n_debug_annotation_string_values = N_STRINGS;
    interned.debug_annotation_string_values = string_p;
    interned.n_event_names = N_NAMES;
    interned.event_names = name_p;
    interned.n_event_categories = N_CATS;
    interned.event_categories = cat_p;
    interned.n_debug_annotation_names = N_ARGS;
    interned.debug_annotation_names = arg_p;
    /* The delta clock, at 0 when BOOTTIME is at 0, and its use by default. */
    Perfetto__Protos__ClockSnapshot__Clock clocks[2], *clock_p[2] = {&clocks[0], &clocks[1]};
    for (int i = 0; i < 2; i++) {
        perfetto__protos__clock_snapshot__clock__init(&clocks[i]);
        clocks[i].has_clock_id = clocks[i].has_timestamp = true;
        clocks[i].clock_id = i == 0 ? CLOCK_TRACE : CLOCK_DELTA;
        clocks[i].timestamp = 0;
    }
    clocks[1].has_is_incremental = true;
    clocks[1].is_incremental = true;
    Perfetto__Protos__ClockSnapshot snapshot = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
    snapshot.n_clocks = 2;
    snapshot.clocks = clock_p;
    Perfetto__Protos__TracePacketDefaults defaults = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
    defaults.has_timestamp_clock_id = true;
    defaults.timestamp_clock_id = CLOCK_DELTA;
    Perfetto__Protos__TracePacket pkt = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    pkt.interned_data = &interned;
    pkt.trace_packet_defaults = &defaults;
    pkt.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT;
    pkt.clock_snapshot = &snapshot;
    pkt.has_sequence_flags = true;
    pkt.sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
    put_message(w, &pkt);
}

static bool pf_finish(void *ws)
{
    pf_writer *w = ws;
    return strata_tl_out_finish(&w->o);
}

static void pf_free(void *ws)
{
    pf_writer *w = ws;
    g_free(w->o.buf);
    g_free(w->series);
    g_free(w->mem_args);
    g_free(w);
}

const strata_tl_writer strata_tl_perfetto = {
    .open = pf_open, .begin = pf_begin, .process = pf_process, .lane = pf_lane, .span = pf_span,
    .buffer = pf_buffer, .counters = pf_counters, .finish = pf_finish, .free = pf_free};
