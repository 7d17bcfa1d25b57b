/*
 * bind.h: a checked op stream bound to the hardware, the one layer between
 * a source and every consumer that executes or measures it (the engine, the
 * allocator replay, the real backends' plan, `strata check`).
 *
 * A binder pulls ops from a source, feeds each through a checker
 * (trace/check.h), checks each `option` line against the table of known
 * keys (bind/trace_options.h: an unknown key, a bad value or a memory the
 * model lacks is bad input on that line), passes over it (the values stay
 * readable through strata_binder_checker()) and resolves every name the op
 * uses to a dense index:
 *   stream  in order of first appearance (the checker's);
 *   buffer  an id per alloc, 0, 1, 2... in file order (the checker's);
 *   memory  the hardware model's index; without a model, in order of first
 *           use by name, unnamed allocs going to options.default_memory;
 *   unit    a compute unit: the model's (unit= absent: its first unit);
 *           without a model, in order of first use by name (absent: the
 *           first unit seen, else "compute");
 *   route   a copy's pair of memories (with a model): a dense id per pair,
 *           0, 1, 2... in order of first use, its route checked once
 *           against the model's (strata_binder_route_hops);
 *   event   index and the record a wait awaits (the checker's).
 * A collective's algo= must name an algorithm of models/collective's table
 * that serves its kind (trace/ reads only the name's syntax).
 * Bad input (unknown memory or unit, no route, an algorithm the table
 * lacks or that does not serve the op, what the checker rejects) is
 * STRATA_ERROR_INPUT "ORIGIN:LINE: what was expected".
 *
 * Invariants:
 *  1. the bound op and what it points to are valid until the next call on
 *     the binder; every index in it is below the matching count;
 *  2. `index` counts non-option ops from 0 in file order; a rewind restarts
 *     the source and the checker, so each pass binds the same ops to the
 *     same numbers (memories and units made by name keep their indices);
 *  3. consumers need no name lookups, and the binder adds none to the
 *     checker's but a release's MEMORY and a compute's unit=: a buffer's
 *     memory is found by the pointer of the name the checker interned; it
 *     keeps nothing per buffer and allocates nothing per op;
 *  4. a new dimension of placement (a device index for many chips in one
 *     trace) is one more field resolved here, not in each consumer;
 *  5. route ids, like memories made by name, hold across rewinds: each pass
 *     binds the same copy to the same route id.
 */
#ifndef STRATA_BIND_H
#define STRATA_BIND_H

#include "hw/hw.h"
#include "trace/check.h"
#include "trace/source.h"

#define STRATA_BIND_NONE UINT32_MAX

typedef struct strata_binder strata_binder;

typedef struct strata_bind_options {
    const strata_hw *hw;        /* NULL: memories and units by name (see above) */
    const char *default_memory; /* without hw: memory of unnamed allocs ("hbm" when NULL) */
    /* Accept collectives and device= (bound with their checked refs only,
     * memory NONE), for a reader of the unexpanded SPMD program such as
     * `strata check`. Without it they are bad input: a consumer that runs
     * ops sees them only after the SPMD expansion (spmd/spmd.h). */
    bool allow_spmd;
} strata_bind_options;

/* The bound op's fields, declared once: X(CATEGORY, TYPE, FIELD), the
 * struct below and the tests' comparisons are generated from it. CATEGORY
 * says how a field travels on the engine's tape (engine_tape.c's
 * TAPE_FIELDS): SELF is not on it, KIND is the op's kind byte, NUM a
 * number, flag or enum, IDS a list of buffer ids whose count is the COUNT
 * field. A new field here with no TAPE_FIELDS line fails
 * test_engine_tape's tape_carries_every_bound_field. */
#define STRATA_BOUND_OP_FIELDS(X)                                                                                  \
    X(SELF, const strata_op *, op)  /* the op as read (its strings: labels, names for messages) */                \
    X(KIND, strata_op_kind, kind)                                                                                 \
    X(NUM, uint64_t, index)         /* 0-based, options excluded */                                               \
    X(NUM, uint64_t, line)                                                                                        \
    X(NUM, uint32_t, stream)                                                                                      \
    X(NUM, uint32_t, device)        /* the device that runs it (see above); NONE: every device */                 \
    X(NUM, uint64_t, buf)           /* ALLOC, FREE: the buffer. COPY: the destination */                          \
    X(NUM, uint64_t, src)           /* COPY: the source buffer */                                                 \
    X(NUM, uint64_t, bytes)         /* ALLOC, FREE: size. COPY: bytes moved. COMPUTE: operand bytes */            \
    /* ALLOC, FREE: the buffer's memory. RELEASE: its memory, or NONE for                                         \
     * every memory. COMPUTE: the unit's operand memory (NONE without hw or unit). */                            \
    X(NUM, uint32_t, memory)                                                                                      \
    X(NUM, uint32_t, src_memory)    /* COPY */                                                                    \
    X(NUM, uint32_t, dst_memory)    /* COPY */                                                                    \
    X(NUM, uint32_t, route)         /* COPY with hw: the pair's dense route id (strata_binder_route_hops) */      \
    X(NUM, uint32_t, unit)          /* COMPUTE: the unit; NONE when the model has none (time= given) */           \
    X(NUM, strata_dtype, dtype)     /* ALLOC: its dtype. COMPUTE: its first operand's (in=, else out=) */         \
    X(NUM, strata_tag, tag)         /* ALLOC */                                                                   \
    X(NUM, bool, has_flops)                                                                                       \
    X(NUM, bool, has_time)                                                                                        \
    X(NUM, double, flops)           /* COMPUTE: flops= (0 when absent) */                                         \
    X(NUM, double, time_s)          /* COMPUTE: time= */                                                          \
    X(NUM, uint32_t, event)         /* RECORD, WAIT: event index */                                               \
    X(NUM, uint64_t, event_seq)     /* RECORD: 1 for the event's first record... WAIT: the record awaited */      \
    X(IDS, const uint64_t *, ins)   /* COMPUTE: buffer ids of in= */                                              \
    X(IDS, const uint64_t *, outs)  /* COMPUTE: buffer ids of out= */                                             \
    X(COUNT, uint32_t, n_ins)                                                                                     \
    X(COUNT, uint32_t, n_outs)                                                                                    \
    X(NUM, uint32_t, group_size)    /* collectives (allow_spmd only): the group's device count */

typedef struct strata_bound_op {
#define STRATA_BOUND_OP_MEMBER(category, type, field) type field;
    STRATA_BOUND_OP_FIELDS(STRATA_BOUND_OP_MEMBER)
#undef STRATA_BOUND_OP_MEMBER
} strata_bound_op;

/* The binder reads src (borrowed; it must outlive the binder) from where it
 * stands: call strata_binder_rewind() first for a whole pass. */
strata_binder *strata_binder_new(strata_source *src, const strata_bind_options *opt);
void strata_binder_free(strata_binder *b);
/* 1: *op set; 0: end of stream; -1: error (err set). */
int strata_binder_next(strata_binder *b, const strata_bound_op **op, GError **err);
/* Back to the first op, with a fresh checker. */
bool strata_binder_rewind(strata_binder *b, GError **err);

const char *strata_binder_origin(const strata_binder *b);
/* The checker of the current pass: streams, events, options, live buffers. */
const strata_checker *strata_binder_checker(const strata_binder *b);
uint64_t strata_binder_op_count(const strata_binder *b); /* ops bound in this pass */

/* Memories: the model's, or those made by name so far (see above). */
uint32_t strata_binder_memory_count(const strata_binder *b);
const char *strata_binder_memory_name(const strata_binder *b, uint32_t memory);
/* Index of memory `name` (NULL: the default memory); without hw it is made
 * when new. -1 when the model has no such memory. */
int strata_binder_memory(strata_binder *b, const char *name);
uint32_t strata_binder_unit_count(const strata_binder *b);
const char *strata_binder_unit_name(const strata_binder *b, uint32_t unit);
/* Routes handed out so far (ids 0 .. count-1). */
uint32_t strata_binder_route_count(const strata_binder *b);
/* The hops of a copy's route (none inside one memory, for NONE or an
 * unknown id): O(1), owned by the model. */
void strata_binder_route_hops(const strata_binder *b, uint32_t route, const strata_hop **hops, uint32_t *n);
/* The device of a stream: that of its first op bound so far (NONE when
 * none yet, or an op of every device). */
uint32_t strata_binder_stream_device(const strata_binder *b, uint32_t stream);
/* The route (src, dst) of a copy and src and dst memory pair, as a first
 * pass bound it, restored without the ops (a compiled trace, engine.h): it
 * becomes route id strata_binder_route_count() unless already bound. False
 * (err) without a model, or when the model has no such route. */
bool strata_binder_restore_route(strata_binder *b, uint32_t src, uint32_t dst, GError **err);
/* The memories (source, destination) of route id `route`. */
void strata_binder_route_pair(const strata_binder *b, uint32_t route, uint32_t *src, uint32_t *dst);
/* A stream's device as its first op bound it (invariant 2 as for ops). */
void strata_binder_restore_stream_device(strata_binder *b, uint32_t stream, uint32_t device);

#endif
