/*
 * op.h: the op stream, strata's one intermediate representation.
 *
 * Every source (trace reader, generators, importers) produces strata_op
 * values and every consumer (engine, allocator replay, real backends, trace
 * writer) takes them. Policies are rewrites: op stream in, op stream out.
 * The text form is defined in traces/FORMAT.md; trace/reader.h and
 * trace/writer.h convert between the two.
 *
 * Ownership: the string fields of an op are borrowed. An op handed out by a
 * source is valid until the next call on that source; a consumer that keeps
 * an op makes an owned copy with strata_op_copy() and releases it with
 * strata_op_clear(). Ops built by hand point at strings their builder owns.
 *
 * Invariants of a well-formed op (checked by trace/check.h, not here):
 *  1. kind-specific fields are set as trace/op_schema.h says per field
 *     (KINDS); the others hold their defaults.
 *  2. stream is never NULL (the default stream is "main").
 *  3. n_dims <= STRATA_MAX_DIMS and shape[] holds n_dims positive extents.
 */
#ifndef STRATA_OP_H
#define STRATA_OP_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "trace/op_schema.h"

#define STRATA_TRACE_VERSION 1
#define STRATA_MAX_DIMS 8
#define STRATA_DEFAULT_STREAM "main"

typedef enum {
    STRATA_OP_ALLOC,   /* alloc BUF SIZE [MEMORY] [stream=] [tag=] [dtype=] [shape=] [addr=] */
    STRATA_OP_FREE,    /* free BUF [stream=] */
    STRATA_OP_COPY,    /* copy DST SRC [bytes=] [stream=] */
    STRATA_OP_COMPUTE, /* compute LABEL [flops=] [in=] [out=] [bytes=] [time=] [unit=] [stream=] */
    STRATA_OP_RECORD,  /* record EVENT [stream=] */
    STRATA_OP_WAIT,    /* wait EVENT [stream=] */
    STRATA_OP_RELEASE, /* release [MEMORY] [stream=]: return cached memory (empty_cache) */
    STRATA_OP_OPTION,  /* option KEY=VALUE: trace-wide setting, before the first op */
    /* Collectives over a mesh axis (option mesh=...); expanded by sim/spmd/. */
    STRATA_OP_ALL_REDUCE,         /* all-reduce BUF axis= [algo=] [stream=] */
    STRATA_OP_ALL_GATHER,         /* all-gather OUT IN axis= [algo=] [stream=] */
    STRATA_OP_REDUCE_SCATTER,     /* reduce-scatter OUT IN axis= [algo=] [stream=] */
    STRATA_OP_ALL_TO_ALL,         /* all-to-all OUT IN axis= [algo=] [stream=] */
    STRATA_OP_COLLECTIVE_PERMUTE, /* collective-permute OUT IN shift= axis= [stream=] */
    STRATA_OP__COUNT
} strata_op_kind;

typedef enum {
    STRATA_TAG_NONE = 0,
    STRATA_TAG_PARAM,
    STRATA_TAG_INPUT,
    STRATA_TAG_OUTPUT,
    STRATA_TAG_ACTIVATION,
    STRATA_TAG_OPTSTATE,
    STRATA_TAG_GRAD,
    STRATA_TAG_TEMP,
    STRATA_TAG__COUNT
} strata_tag;

typedef enum {
    STRATA_DTYPE_NONE = 0,
    STRATA_DTYPE_F64,
    STRATA_DTYPE_F32,
    STRATA_DTYPE_TF32,
    STRATA_DTYPE_BF16,
    STRATA_DTYPE_F16,
    STRATA_DTYPE_F8,     /* any 8-bit float (e4m3, e5m2) */
    STRATA_DTYPE_INT64,
    STRATA_DTYPE_INT32,
    STRATA_DTYPE_INT16,
    STRATA_DTYPE_INT8,
    STRATA_DTYPE_UINT8,
    STRATA_DTYPE_INT4,
    STRATA_DTYPE_BOOL,
    STRATA_DTYPE__COUNT
} strata_dtype;

/* An op: its kind, where it was read, and the fields of trace/op_schema.h
 * (operands, then attributes: what each holds is said there, once). */
typedef struct strata_op {
    strata_op_kind kind;
    uint64_t line; /* 1-based line in the source trace; 0 when generated */
#define OP_SCHEMA_DECL_OPERAND(field, aux, store, kinds, dflt) OP_SCHEMA_STORE_##store(field, aux)
#define OP_SCHEMA_DECL_ATTR(key, field, aux, store, syntax, kinds, dflt, what) OP_SCHEMA_STORE_##store(field, aux)
    STRATA_OP_OPERANDS(OP_SCHEMA_DECL_OPERAND)
    STRATA_OP_ATTRS(OP_SCHEMA_DECL_ATTR)
#undef OP_SCHEMA_DECL_OPERAND
#undef OP_SCHEMA_DECL_ATTR
} strata_op;

/* Whether a and b are the same string: inline, not a call to strcmp, for
 * the names of a few bytes compared on every line (kinds, streams). */
static inline bool strata_same_name(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* Names, for the reader, the writer and messages. */
const char *strata_op_kind_name(strata_op_kind kind);
/* The text form's positional operands of a kind: what its first (name) and
 * second (src) operand are, in the reader's "expected ..." words, NULL
 * where the kind takes none. One table for the reader and the writer; an
 * alloc's SIZE, alloc's and release's MEMORY and option's KEY=VALUE have
 * grammars of their own (line.c, writer.c). */
typedef struct strata_op_positionals {
    const char *name;
    const char *src;
} strata_op_positionals;
const strata_op_positionals *strata_op_positionals_of(strata_op_kind kind);
bool strata_op_kind_from_name(const char *name, strata_op_kind *kind);
/* The same for the len bytes at name (not NUL-terminated there). */
bool strata_op_kind_of_span(const char *name, size_t len, strata_op_kind *kind);
const char *strata_tag_name(strata_tag tag); /* "" for NONE */
bool strata_tag_from_name(const char *name, strata_tag *tag);
const char *strata_dtype_name(strata_dtype dtype); /* "" for NONE */
bool strata_dtype_from_name(const char *name, strata_dtype *dtype);
/* True for ALL_REDUCE .. COLLECTIVE_PERMUTE. Inline: asked of every op. */
static inline bool strata_op_kind_is_collective(strata_op_kind kind)
{
    return kind >= STRATA_OP_ALL_REDUCE && kind <= STRATA_OP_COLLECTIVE_PERMUTE;
}
/* Bits per element (4 for int4, 0 for NONE). */
unsigned strata_dtype_bits(strata_dtype dtype);

/* Ops built by hand (generators, importers, policies): the one builder of
 * each kind's fields. Each returns an op whose other fields hold their
 * defaults, borrowing the strings and arrays it is given; the caller sets
 * any further field (tag, note, at=, ...) and appends the op where it goes.
 * stream NULL is the default stream. */
/* A zeroed op of kind on stream named name (an event, a buffer to free). */
strata_op strata_op_make(strata_op_kind kind, const char *stream, const char *name);
/* alloc NAME SIZE [MEMORY] tag=TAG (memory NULL: the hardware's default). */
strata_op strata_op_make_alloc(const char *stream, const char *name, uint64_t size, const char *memory,
                               strata_tag tag);
/* copy DST SRC bytes=BYTES (0: no bytes=, the whole source). */
strata_op strata_op_make_copy(const char *stream, const char *dst, const char *src, uint64_t bytes);
/* compute LABEL [flops=FLOPS] in=INS out=OUTS [unit=UNIT] (flops 0: none;
 * unit NULL: the default unit). */
strata_op strata_op_make_compute(const char *stream, const char *label, double flops, const char *const *ins,
                                 uint32_t n_ins, const char *const *outs, uint32_t n_outs, const char *unit);
/* compute LABEL time=SECONDS: a compute whose time is given (a profiled
 * kernel, or time=0: a marker such as a program's start). */
strata_op strata_op_make_timed(const char *stream, const char *label, double seconds);
/* A collective (kind: STRATA_OP_ALL_REDUCE .. COLLECTIVE_PERMUTE): out =
 * op(in) over mesh axis `axis` (in ignored for all-reduce, which works in
 * place on out); algo NULL: none named; shift: collective-permute's. */
strata_op strata_op_make_collective(strata_op_kind kind, const char *stream, const char *out, const char *in,
                                    const char *axis, const char *algo, int32_t shift);
/* option KEY=VALUE (an option has no stream). */
strata_op strata_op_make_option(const char *key, const char *value);
/* An alloc's dtype= and shape= (n_dims extents of dims, at most
 * STRATA_MAX_DIMS; n_dims 0: no shape=). */
void strata_op_set_shape(strata_op *op, strata_dtype dtype, uint32_t n_dims, const uint64_t *dims);

/* Deep copy of src's strings and arrays into dst (release with strata_op_clear). */
void strata_op_copy(strata_op *dst, const strata_op *src);
void strata_op_clear(strata_op *op);
/* Field-by-field equality, strings by content (for round-trip tests); `line`
 * is not compared (where an op sits in a file is not part of what it means). */
bool strata_op_equal(const strata_op *a, const strata_op *b);

#endif
