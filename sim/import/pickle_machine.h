/*
 * pickle_machine.h: the opcode machine of the pickle reader, private to
 * sim/import/pickle*.c: the table of opcodes, the reading of their
 * operands, and run(), which executes opcodes on a parser's stack until
 * STOP, an error, or (streaming) a pause with items to hand out.
 *
 * The opcode table is the one place that knows each opcode's name and
 * operand: run() and the memo plan pass (pickle_stream.c) both read
 * operands through strata_pickle_operand().
 *
 * Invariants (beyond pickle.h's):
 *  1. Every stack slot holds a valid node handle.
 *  2. marks[] is non-decreasing and each mark <= stack length.
 *  3. Every operand is read through strata_pickle_operand(), which fails
 *     unless the bytes remain, so no length field, however large, can
 *     make the machine read past the end or allocate for absent bytes.
 */
#ifndef STRATA_PICKLE_MACHINE_H
#define STRATA_PICKLE_MACHINE_H

#include <string.h>

#include "import/pickle_arena.h"
#include "import/pickle_literal.h"

/* The memo plan of a streamed read: for each memo key that some GET reads,
 * the offset of the last such GET, and the value stored under the key while
 * it may still be read. A small open-addressing table keyed by memo key: a
 * snapshot has millions of GETs over a few thousand distinct keys, and each
 * GET is one probe here (GHashTable costs several times more per lookup). */
typedef struct memo_slot {
    uint64_t key1;     /* memo key + 1; 0: empty slot */
    uint64_t last_get; /* offset of the last GET of the key in the file */
    strata_pv value;   /* the value while it will still be read, else 0 */
} memo_slot;

typedef struct memo_plan {
    memo_slot *slots;
    size_t mask; /* capacity - 1 (a power of two) */
    size_t n;
} memo_plan;

/* Parser state: alive during one load, or for the life of a stream. */
typedef struct parser {
    strata_pickle *p;
    size_t pos;   /* offset of the next byte */
    size_t op_at; /* offset of the current opcode, for messages */
    strata_pv *stack;
    size_t n_stack, cap_stack;
    size_t *marks;
    size_t n_marks, cap_marks;
    strata_pv *memo; /* whole-document reads (and streams without a plan): by key */
    size_t cap_memo;
    size_t n_memo; /* distinct keys set (MEMOIZE's next key) */
    /* Streaming only (stream == NULL otherwise). */
    strata_pickle_stream *stream;
    memo_plan *plan;      /* non-NULL: values are kept only until their last GET */
    bool keys_dense;      /* the keys set so far are exactly 0 .. n_memo-1 */
    uint64_t *key_bits;   /* otherwise: a bit per key set */
    size_t n_key_words;
    bool paused;          /* run() stopped with items of a selected list to hand out */
    strata_pv pend_list;  /* that list */
    size_t pend_first, pend_next; /* its items: stack[pend_first ..], next to hand out */
    GError **err;
} parser;

/* What an opcode's operand is. */
typedef enum {
    ARG_NONE,
    ARG_FIXED, /* `width` bytes */
    ARG_TEXT,  /* a length field of `width` bytes, then that many bytes of text */
    ARG_LONG,  /* a length field of `width` bytes, then a two's complement int */
    ARG_LINE,  /* text up to a '\n' */
} pickle_arg;

/* What an opcode does to the memo (all the memo plan pass needs). */
typedef enum { MEMO_NONE, MEMO_STOP, MEMO_PUT, MEMO_PUT_NEXT, MEMO_GET } pickle_memo_role;

/* A handler's verdict: an error (reported), go on, or return from run(). */
typedef enum { RUN_FAIL, RUN_GO, RUN_RETURN } run_step;

typedef struct pickle_op pickle_op;
/* arg, n: the operand (FIXED: its bytes; TEXT/LONG: the payload; LINE: the
 * line without its '\n'). */
typedef run_step (*pickle_op_fn)(parser *ps, const pickle_op *op, const uint8_t *arg, size_t n);

struct pickle_op {
    const char *name;   /* NULL: not a pickle opcode */
    pickle_arg arg;
    uint8_t width;
    bool signed_len;    /* TEXT/LONG: the length field is signed (negative is an error) */
    pickle_memo_role memo;
    int param;          /* the handler's: a strata_pickle_type, a count, a value */
    pickle_op_fn run;   /* NULL: refused (it would import or call) */
};

/* The table, by opcode (name NULL where there is no opcode). */
extern const pickle_op strata_pickle_ops[256];

static inline const pickle_op *strata_pickle_op(uint8_t code) { return &strata_pickle_ops[code]; }

typedef enum { OPERAND_OK, OPERAND_SHORT_FIELD, OPERAND_NEGATIVE, OPERAND_SHORT_PAYLOAD,
               OPERAND_NO_EOL } pickle_operand_status;

/* Reads op's operand at *pos of d[0..len): on OPERAND_OK *arg, *n are the
 * operand and *pos is past it. On an error *pos is where it was found and
 * *n the length that was asked for (SHORT_FIELD: the field's width).
 * (Inline: run() and the plan pass call it for every opcode.) */
static inline pickle_operand_status strata_pickle_operand(const pickle_op *op, const uint8_t *d,
                                                          size_t len, size_t *pos,
                                                          const uint8_t **arg, size_t *n)
{
    *arg = d + *pos;
    *n = 0;
    if (op->arg == ARG_NONE)
        return OPERAND_OK;
    if (op->arg == ARG_LINE) {
        const uint8_t *nl = memchr(d + *pos, '\n', len - *pos);
        if (nl == NULL)
            return OPERAND_NO_EOL;
        *n = (size_t)(nl - *arg);
        *pos += *n + 1;
        return OPERAND_OK;
    }
    *n = op->width;
    if (op->width > len - *pos)
        return OPERAND_SHORT_FIELD;
    *pos += op->width;
    if (op->arg == ARG_FIXED)
        return OPERAND_OK;
    uint64_t payload = strata_pickle_read_le(*arg, op->width);
    if (op->signed_len && (payload & 0x80000000u))
        return OPERAND_NEGATIVE;
    *n = (size_t)payload;
    if (payload > len - *pos)
        return OPERAND_SHORT_PAYLOAD;
    *arg = d + *pos;
    *pos += *n;
    return OPERAND_OK;
}

/* The memo key of a PUT/GET operand; false when it is not one. */
static inline bool strata_pickle_memo_key(const pickle_op *op, const uint8_t *arg, size_t n,
                                          uint64_t *key)
{
    if (op->arg != ARG_LINE) {
        *key = strata_pickle_read_le(arg, n);
        return true;
    }
    if (n == 0 || n > 19)
        return false;
    *key = 0;
    for (size_t i = 0; i < n; i++) {
        if (arg[i] < '0' || arg[i] > '9')
            return false;
        *key = *key * 10 + (uint64_t)(arg[i] - '0');
    }
    return true;
}

/* Runs opcodes from ps->pos: true at STOP (root set) or at a pause, false
 * on an error (in *ps->err). */
bool strata_pickle_run(parser *ps);

/* The stack index of the first slot above the innermost mark. */
size_t strata_pickle_stack_base(const parser *ps);

#endif
