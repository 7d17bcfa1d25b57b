/*
 * rewrite.h: the machinery every policy is built from. A rewrite is a source
 * that wraps an input source and maps each input op to zero or more output
 * ops (an owned queue), optionally after a planning pass over the whole input.
 *
 * Three pieces, each small:
 *  - strata_rewrite_source_new(): the wrapping source. plan() (optional) sees
 *    the whole input once, before the first op is handed out, and the input is
 *    rewound after it; map() is called once per input op, in order, with the
 *    op's 0-based index among all input ops (options included); finish() runs
 *    after the last one; reset() forgets per-pass state on rewind.
 *  - strata_rewrite_plan: "insert these ops before/after input op #i, drop op
 *    #i", filled by a planning pass and replayed by map().
 *  - strata_buffer_table: live buffer names resolved to instances (id, memory,
 *    size, tag, where allocated), fed op by op like trace/check.h does.
 *
 * Invariants:
 *  1. Every op in the queue is an owned deep copy (strata_op_copy); the op a
 *     rewrite source hands out stays valid until the next call on it.
 *  2. Rewinding a rewrite source rewinds its input and calls reset(): the
 *     second pass emits exactly the same ops as the first (determinism).
 *  3. Plans are keyed by input op index, which is stable across rewinds.
 */
#ifndef STRATA_REWRITE_H
#define STRATA_REWRITE_H

#include "trace/source.h"

typedef struct strata_rewrite_queue strata_rewrite_queue;

/* Append a deep copy of op to the output. */
void strata_rewrite_emit(strata_rewrite_queue *q, const strata_op *op);

typedef struct strata_rewrite_ops {
    bool (*plan)(void *self, strata_source *in, GError **err); /* may be NULL */
    bool (*map)(void *self, uint64_t index, const strata_op *op, strata_rewrite_queue *q,
                GError **err);
    bool (*finish)(void *self, strata_rewrite_queue *q, GError **err); /* may be NULL */
    void (*reset)(void *self);                                        /* may be NULL */
    void (*destroy)(void *self);                                      /* may be NULL */
} strata_rewrite_ops;

/* Takes ownership of `in` and `self` (both released on error). Runs plan(). */
strata_source *strata_rewrite_source_new(strata_source *in, const strata_rewrite_ops *ops, void *self,
                                         const char *origin, GError **err);

/* ---- plans: inserts and drops by input op index ------------------------- */

typedef struct strata_rewrite_plan strata_rewrite_plan;

strata_rewrite_plan *strata_rewrite_plan_new(void);
void strata_rewrite_plan_free(strata_rewrite_plan *p);
void strata_rewrite_plan_before(strata_rewrite_plan *p, uint64_t index, const strata_op *op);
void strata_rewrite_plan_after(strata_rewrite_plan *p, uint64_t index, const strata_op *op);
void strata_rewrite_plan_drop(strata_rewrite_plan *p, uint64_t index);
bool strata_rewrite_plan_dropped(const strata_rewrite_plan *p, uint64_t index);
/* Emit what goes before index, then `op` (unless dropped; op may be NULL),
 * then what goes after. */
void strata_rewrite_plan_emit(const strata_rewrite_plan *p, uint64_t index, const strata_op *op,
                              strata_rewrite_queue *q);
/* A map for a policy whose every change is in its plan: emits the plan around
 * each op. `self` must begin with its strata_rewrite_plan pointer. */
bool strata_rewrite_plan_map(void *self, uint64_t index, const strata_op *op, strata_rewrite_queue *q,
                             GError **err);

/* ---- live buffers --------------------------------------------------------- */

typedef struct strata_buffer_info {
    uint64_t id;          /* instance number, 0, 1, ... in file order */
    const char *name;
    const char *memory;   /* NULL: the default device memory */
    uint64_t size;
    strata_tag tag;
    strata_dtype dtype;
    uint64_t alloc_index; /* input op index of its alloc */
    uint64_t free_index;  /* input op index of its free, UINT64_MAX while live */
    const char *stream;   /* stream of its alloc */
    uint32_t n_dims;      /* shape of its alloc (0: none) */
    uint64_t shape[STRATA_MAX_DIMS];
} strata_buffer_info;

typedef struct strata_buffer_table strata_buffer_table;

strata_buffer_table *strata_buffer_table_new(void);
void strata_buffer_table_free(strata_buffer_table *t);
void strata_buffer_table_reset(strata_buffer_table *t);
/* Feed one op: an alloc makes a new instance, a free ends one. Returns the
 * instance an ALLOC or FREE names (NULL for other ops, or an unknown name). */
const strata_buffer_info *strata_buffer_table_feed(strata_buffer_table *t, uint64_t index,
                                                   const strata_op *op);
/* The live instance with that name, or NULL. */
const strata_buffer_info *strata_buffer_table_lookup(const strata_buffer_table *t, const char *name);
const strata_buffer_info *strata_buffer_table_get(const strata_buffer_table *t, uint64_t id);

/* ---- building ops --------------------------------------------------------- */

/* (strata_op_make and the other builders of an op: trace/op.h.) */
/* An alloc of b's size, tag, dtype and shape, named `name` in `memory`
 * (NULL: the default device memory), on `stream`. Borrows the strings. */
strata_op strata_op_alloc_of(const strata_buffer_info *b, const char *stream, const char *name, const char *memory);
/* The name a rewrite gives its copy of buffer `name` in `place` (a memory,
 * or "host"): NAME:PLACE, newly allocated (traces/FORMAT.md, "Names rewrites
 * make"). ':' is the rewrites' own separator: '@' is the SPMD expansion's
 * device and '~' its own names (spmd/spmd_names.h). */
#define STRATA_REWRITE_COPY_SEP ':'
char *strata_rewrite_copy_name(const char *name, const char *place);
/* Replace a name in an owned op's in=/out=/donate= lists, copy names and
 * collective operands. */
void strata_op_rename_buffer(strata_op *owned, const char *from, const char *to);

/* ---- operands --------------------------------------------------------------- */

/* fn(ud, NAME, writes) for each buffer op reads, then each it writes: a
 * copy's source and destination; a compute's in= then out=; a collective's
 * IN and OUT (an all-reduce's BUF, read then written). Other ops have none.
 * Every policy that counts uses or lifetimes walks operands through this. */
typedef void (*strata_operand_fn)(void *ud, const char *name, bool writes);
void strata_op_operands(const strata_op *op, strata_operand_fn fn, void *ud);

#endif
