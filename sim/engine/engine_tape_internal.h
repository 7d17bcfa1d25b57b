/*
 * engine_tape_internal.h: the tape's layout (engine_tape.h), shared by
 * engine_tape.c, which puts and replays ops, and engine_compiled.c, which
 * writes a whole tape's bytes to a compiled trace and reads them back.
 * Included by those two files only.
 */
#ifndef STRATA_ENGINE_TAPE_INTERNAL_H
#define STRATA_ENGINE_TAPE_INTERNAL_H

#include "engine/engine_tape.h"
#include "engine/engine_spill.h"

/* The tape's own format, for a compiled trace written by one strata and
 * read by another (engine_compiled.c's tape_format): bump it with any
 * change to the fast form (put_fast, get_fast) that the field table below
 * does not show. */
#define ENGINE_TAPE_FORMAT 1

enum {
    FAST = 0x80, /* a kind byte with this bit opens the fast form: */
    FAST_NAME = 0x40, FAST_FLOPS = 0x20, FAST_TIME = 0x10, /* its flags */
    FAST_SKIP = 0x08, /* the index is not the one expected: its distance follows */
    FAST_KIND = 0x07, /* and its kind */
    GENERAL_KIND_MAX = 0x0f, /* the general form's kind byte, below FAST */
    /* the most bytes a varint of 64 bits takes */
    VARINT_MAX = 10,
};
_Static_assert(STRATA_OP__COUNT <= GENERAL_KIND_MAX + 1, "an op kind fits in the general form's kind byte");

/* A kind's bit in FAST. */
#define FK(k) (1u << STRATA_OP_##k)
#define FK_ALL (FK(ALLOC) | FK(FREE) | FK(COPY) | FK(COMPUTE) | FK(RECORD) | FK(WAIT))
_Static_assert((FK_ALL >> (FAST_KIND + 1)) == 0, "the kinds of the fast form fit in its low three bits");

/* The tape's fields, one line each, in the general form's mask order (the
 * most common first, so that the mask of a typical op fits in one or two
 * bytes):
 *     X(ID, CODEC, FIELD, AUX, EXPECT, FAST)
 * CODEC   VARINT, ID (a buffer id), F64, FLAG, NAME, IDS (a list of buffer
 *         ids: AUX is its count), as the top of this file says;
 * FIELD   the member, of the bound op (op->) or of its extra (x->);
 * EXPECT  what it holds unless the tape says otherwise, from e (the
 *         tape_expect) and kind (the op's); a list is expected empty;
 * FAST    the kinds (FK()) whose fast form carries it. */
/* clang-format off */
#define TAPE_FIELDS(X)                                                                                             \
    X(STREAM,     VARINT, op->stream,     _,            0,                                         FK_ALL)         \
    X(DEVICE,     VARINT, op->device,     _,            STRATA_BIND_NONE,                          FK_ALL)         \
    X(BYTES,      VARINT, op->bytes,      _,            0,                       FK(ALLOC) | FK(FREE) | FK(COPY) | FK(COMPUTE)) \
    X(BUF,        ID,     op->buf,        _,            kind == STRATA_OP_ALLOC ? e->next_id : 0, FK(FREE) | FK(COPY)) \
    X(MEMORY,     VARINT, op->memory,     _,            STRATA_BIND_NONE,          FK(ALLOC) | FK(FREE) | FK(COMPUTE)) \
    X(EVENT,      VARINT, op->event,      _,            0,                                 FK(RECORD) | FK(WAIT)) \
    X(SEQ,        VARINT, op->event_seq,  _,            0,                                 FK(RECORD) | FK(WAIT)) \
    X(NAME,       NAME,   x->name,        _,            NULL,                                      FK_ALL)         \
    X(DTYPE,      VARINT, op->dtype,      _,            0,                                 FK(ALLOC) | FK(COMPUTE)) \
    X(TAG,        VARINT, op->tag,        _,            0,                                         FK(ALLOC))      \
    X(UNIT,       VARINT, op->unit,       _,            STRATA_BIND_NONE,                          FK(COMPUTE))    \
    X(HAS_FLOPS,  FLAG,   op->has_flops,  _,            false,                                     FK(COMPUTE))    \
    X(FLOPS,      F64,    op->flops,      _,            0,                                         FK(COMPUTE))    \
    X(INS,        IDS,    op->ins,        op->n_ins,    NULL,                                      FK(COMPUTE))    \
    X(SRC,        ID,     op->src,        _,            0,                                         FK(COPY))       \
    X(SRC_MEMORY, VARINT, op->src_memory, _,            STRATA_BIND_NONE,                          FK(COPY))       \
    X(DST_MEMORY, VARINT, op->dst_memory, _,            STRATA_BIND_NONE,                          FK(COPY))       \
    X(ROUTE,      VARINT, op->route,      _,            STRATA_BIND_NONE,                          FK(COPY))       \
    X(HAS_TIME,   FLAG,   op->has_time,   _,            false,                                     FK(COMPUTE))    \
    X(TIME,       F64,    op->time_s,     _,            0,                                         FK(COMPUTE))    \
    X(OUTS,       IDS,    op->outs,       op->n_outs,   NULL,                                      FK(COMPUTE))    \
    X(LINE,       VARINT, op->line,       _,            e->line + 1,                               FK_ALL)         \
    X(INDEX,      VARINT, op->index,      _,            e->index,                                  FK_ALL)         \
    X(GROUP,      VARINT, op->group_size, _,            0,                                         0)              \
    X(COLL,       VARINT, x->coll,        _,            0,                                         0)              \
    X(PHASE,      VARINT, x->phase,       _,            0,                                         0)              \
    X(FROM,       VARINT, x->from,        _,            0,                                         0)              \
    X(LEAD,       VARINT, x->lead_ps,     _,            0,                                         0)              \
    X(ROWS,       VARINT, x->rows,        _,            0,                                         FK(ALLOC))      \
    X(COLS,       VARINT, x->cols,        _,            0,                                         FK(ALLOC))      \
    X(DONATED,    IDS,    x->donated,     x->n_donated, NULL,                                      FK(COMPUTE))    \
    X(KERNEL,     FLAG,   x->kernel,      _,            false,                                     FK(COMPUTE))    \
    X(KFLOPS,     F64,    x->kernel_flops, _,           0,                                         FK(COMPUTE))    \
    X(KBYTES,     VARINT, x->kernel_bytes, _,           0,                                         FK(COMPUTE))    \
    X(KFIXED,     F64,    x->kernel_s,    _,            0,                                         FK(COMPUTE))
/* clang-format on */

enum {
#define FIELD(id, codec, f, aux, expect, fast) F_##id,
    TAPE_FIELDS(FIELD)
#undef FIELD
    F__COUNT
};
_Static_assert(F__COUNT <= 64, "the mask of the general form holds every field");

/* Per codec: whether a field is not what was expected. */
#define DIFF_VARINT(f, aux, expect) ((f) != (expect))
#define DIFF_ID(f, aux, expect) ((f) != (expect))
#define DIFF_F64(f, aux, expect) ((f) != (expect))
#define DIFF_FLAG(f, aux, expect) ((f) != (expect))
#define DIFF_NAME(f, aux, expect) ((f) != (expect))
#define DIFF_IDS(f, aux, expect) ((aux) != 0)

typedef struct tape_chunk {
    struct tape_chunk *next;
    size_t used, cap;
    uint8_t data[];
} tape_chunk;

/* What the next op is expected to have. */
typedef struct tape_expect {
    uint64_t line;    /* the previous op's line */
    uint64_t index;   /* the next op's index */
    uint64_t next_id; /* the id the next alloc gets */
} tape_expect;

struct engine_tape_pool {
    size_t chunk;       /* the cap of every chunk it holds */
    unsigned keep, n;   /* n spare chunks held, at most keep */
    tape_chunk *spare;  /* linked through next */
    /* The spill (engine_tape.h): a chunk on file is a record of the
     * spill file (engine_spill.h) whose link is the offset of its tape's
     * next chunk on file (SPILL_NONE until there is one), its bytes the
     * chunk's used bytes. */
    size_t resident_max; /* 0: no spill */
    size_t resident;     /* bytes of the chunks its tapes hold in memory */
    engine_spill *spill; /* the file, made on the first spill */
};

struct engine_tape {
    size_t budget, bytes, chunk;
    engine_tape_pool *pool; /* NULL: none */
    tape_chunk *head, *tail;
    tape_chunk *before_tail; /* the chunk linked before tail (NULL: tail is head, or on its own) */
    /* Chunks spilled (pool's file): a run between the listed chunks, which
     * end before it, and tail, which is then on its own (not linked). */
    uint64_t n_spilled, spill_first, spill_last; /* how many, the offsets of the first and the last */
    tape_expect put;
    /* replay */
    tape_expect got;
    tape_chunk *at;   /* the chunk being replayed (head) */
    size_t pos;
    uint64_t *ids;    /* ins, outs and donated of the op replayed last */
    size_t ids_cap;
};

#endif
