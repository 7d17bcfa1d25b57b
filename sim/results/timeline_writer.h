/*
 * timeline_writer.h: what a timeline format writes (a row of the table of
 * formats in timeline.c, looked up by the file's extension): the timeline
 * (timeline.c) places events on tracks and lanes, pairs buffer samples
 * into lifetimes and keeps each memory's bytes per tag; a writer turns
 * each of its calls into the format's bytes. Internal to sim/results.
 *
 * The calls come in this order: process() for every process (its name and
 * sort index) and lane() for every lane, each before the first event on
 * it; span() and buffer() for a slice [start_ns, end_ns] on a lane, where
 * the events of one lane come in time order and never overlap; counters()
 * once per memory sample; finish() once.
 *
 * Rows: the JSON writer (timeline.c, Chrome trace-event JSON, the state in
 * the timeline itself) and the Perfetto writer (timeline_perfetto.c,
 * Perfetto's protobuf trace format).
 */
#ifndef STRATA_TIMELINE_WRITER_H
#define STRATA_TIMELINE_WRITER_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "results/json_cursor.h"
#include "results/results.h"

/* Pending output, written to out in chunks (timeline_writer.c). When out
 * has a file descriptor, the bytes go to it with write(2) in whole chunks,
 * at file offsets that are multiples of the chunk (the rest waits for the
 * next flush); otherwise (a gzip stream) through stdio. */
typedef struct strata_tl_out {
    FILE *out;
    int fd;              /* out's file descriptor; -1: write through stdio (also after a failed write(2)) */
    char *buf;           /* len bytes of cap (a chunk and a 32nd, or more) */
    size_t len, cap, chunk;
} strata_tl_out;

/* Pending output on out, written in chunks of `chunk` bytes (a power of two). */
void strata_tl_out_init(strata_tl_out *o, FILE *out, size_t chunk);
void strata_tl_out_flush(strata_tl_out *o);
/* Writes every pending byte, and true when every write went through
 * (fflush, ferror: a failed write(2) shows on the stream too). */
bool strata_tl_out_finish(strata_tl_out *o);

/* The end of the pending output, with room for n more bytes after it. */
static inline char *strata_tl_out_room(strata_tl_out *o, size_t n)
{
    if (o->cap - o->len < n) {
        strata_tl_out_flush(o);
        if (o->cap - o->len < n) {
            o->cap = o->len + n;
            o->buf = g_realloc(o->buf, o->cap);
        }
    }
    return o->buf + o->len;
}

/* A named track with lanes (lanes are a min-heap on their end, timeline.c). */
typedef struct strata_tl_track {
    char *name;
    strata_jc_piece name_text; /* the name escaped for JSON */
    int pid;
    long order;                /* creation order, for the sort index */
    GArray *heap;
} strata_tl_track;

/* A buffer between its alloc sample and its free sample. */
typedef struct strata_tl_buffer {
    double start;
    uint64_t offset, size, id;
    uint32_t memory;
    strata_tag tag;
} strata_tl_buffer;

enum { STRATA_TL_TAG_TEXT = STRATA_U64_DIGITS + 4 };

/* A tag's bytes in one memory (and, for the JSON writer, their text,
 * printed when they change). */
typedef struct strata_tl_tag_count {
    int64_t bytes;
    bool seen;
    uint8_t n;                        /* digits in text */
    char text[STRATA_TL_TAG_TEXT];    /* MAX(bytes, 0) printed; copied whole */
} strata_tl_tag_count;

/* Whether span sp, from start_ns to end_ns, is written as an instant event
 * (Perfetto TYPE_INSTANT, JSON "ph":"i" with thread scope) rather than a
 * slice: an op of a kind that takes no time by construction (the engine's
 * loop, engine.c, moves a stream's clock only for a copy, a compute and a
 * wait: a record, an alloc, a free and a release end where they start)
 * and whose span has no length. A wait stays a slice, even unblocked. */
static inline bool strata_tl_instant(const strata_op_span *sp, int64_t start_ns, int64_t end_ns)
{
    enum { KINDS = 1u << STRATA_OP_RECORD | 1u << STRATA_OP_ALLOC | 1u << STRATA_OP_FREE | 1u << STRATA_OP_RELEASE };
    return end_ns <= start_ns && (unsigned)sp->kind < 32 && (KINDS >> (unsigned)sp->kind & 1u);
}

typedef struct strata_tl_writer {
    /* The writer's state on out, for results r (borrowed); NULL: the
     * timeline's own (the JSON writer). */
    void *(*open)(FILE *out, const strata_results *r);
    void (*begin)(void *w);
    /* Process pid named name_a then name_b (NULL: none), sorted by sort. */
    void (*process)(void *w, int pid, const char *name_a, const char *name_b, long sort);
    /* Lane `index` of track t, thread tid, sorted by sort. */
    void (*lane)(void *w, const strata_tl_track *t, int tid, guint index, long sort);
    /* Span sp on a lane; on_link: a copy's event on a link track; an
     * instant event where strata_tl_instant(). */
    void (*span)(void *w, const strata_tl_track *t, int tid, int64_t start_ns, int64_t end_ns,
                 const strata_op_span *sp, bool on_link);
    void (*buffer)(void *w, const strata_tl_track *t, int tid, int64_t start_ns, int64_t end_ns,
                   const strata_tl_buffer *b);
    /* Memory sample s at ns; row: the memory's tags after s (NULL: s's tag
     * is out of range and counted nowhere), whose text a writer may print. */
    void (*counters)(void *w, const strata_mem_sample *s, int64_t ns, strata_tl_tag_count *row);
    /* Ends the file (the writer's bytes flushed to out); false: a write failed. */
    bool (*finish)(void *w);
    void (*free)(void *w);
} strata_tl_writer;

/* Perfetto's protobuf trace (timeline_perfetto.c). */
extern const strata_tl_writer strata_tl_perfetto;

#endif
