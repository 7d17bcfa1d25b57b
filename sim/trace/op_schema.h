/*
 * op_schema.h: every field of strata_op, declared once (trace/op.h).
 *
 * Two X-macro tables. Each line is one field (or a field and its flag or
 * count) and says everything the code needs to know about it; the code
 * that handles fields one by one is generated from them, so a new field is
 * one line here:
 *   - the declaration of strata_op (trace/op.h);
 *   - copy, clear and equality (trace/op.c);
 *   - the parser's attributes: key lookup, which kinds take which key,
 *     duplicate and unknown keys, each value's syntax, and the clearing of
 *     the fields between lines (trace/line.c);
 *   - the writer's attributes, in canonical order, and the check that what
 *     it writes reads back (trace/writer.c).
 * What a field means to the consumers (the checker, the binder, the engine)
 * stays in their code: a new attribute that changes what ops do is this
 * line, its semantics there, and its documentation (traces/FORMAT.md).
 *
 * STRATA_OP_OPERANDS(X): the positional operands,
 *     X(FIELD, AUX, STORE, KINDS, DEFAULT)
 * STRATA_OP_ATTRS(X): the KEY=VALUE attributes, in the canonical order
 * the writer emits them (traces/FORMAT.md, "Canonical form"),
 *     X(KEY, FIELD, AUX, STORE, SYNTAX, KINDS, DEFAULT, WHAT)
 * where
 *   KEY      the attribute's name in the text form (key=);
 *   FIELD    the member of strata_op;
 *   AUX      its companion member, by STORE: the has_ flag of an OPT_*,
 *            the count of a LIST, the extent count of a SHAPE (else _);
 *   STORE    how it is held: STR (a borrowed string), U32, U64, I32, TAG,
 *            DTYPE (plain values), OPT_U32, OPT_U64, OPT_F64 (a value
 *            and a has_ flag), LIST (names and a count), SHAPE (extents
 *            and a count); OP_SCHEMA_STORE_* below say what each is in C;
 *   SYNTAX   how its value is read and written (trace/line.c's syntax_*
 *            and trace/writer.c's write_* of that name): NAME, AXIS, TAG,
 *            DTYPE, ALGO, SHAPE, ADDR, SIZE, FLOPS, TIME, LIST, SHIFT,
 *            DEVICE;
 *   KINDS    the op kinds that take it, a mask of STRATA_OPK() bits;
 *   DEFAULT  a STR's value when absent (NULL but for stream=); other
 *            stores are absent at 0 (or with their flag false);
 *   WHAT     what the parser says it expected, for a value it refuses.
 *
 * Invariants:
 *  0. every field is one the text form writes: what a consumer derives of
 *     an op (the SPMD expansion's collective and phase of a step,
 *     sim/spmd/spmd.h) travels beside it, not in it;
 *  1. an op of kind K has every field whose KINDS lack K at its default
 *     (trace/check.h relies on it; the parser guarantees it);
 *  2. a STR field is never its DEFAULT's absence: a NULL stream is read
 *     as STRATA_DEFAULT_STREAM by copy, equality and the writer;
 *  3. the attributes' order here is the writer's canonical order.
 */
#ifndef STRATA_OP_SCHEMA_H
#define STRATA_OP_SCHEMA_H

/* A kind's bit in KINDS. */
#define STRATA_OPK(k) (1u << STRATA_OP_##k)
#define STRATA_OPK_COLLECTIVE                                                                                      \
    (STRATA_OPK(ALL_REDUCE) | STRATA_OPK(ALL_GATHER) | STRATA_OPK(REDUCE_SCATTER) | STRATA_OPK(ALL_TO_ALL) |       \
     STRATA_OPK(COLLECTIVE_PERMUTE))
#define STRATA_OPK_INOUT (STRATA_OPK_COLLECTIVE & ~STRATA_OPK(ALL_REDUCE)) /* collectives OUT IN */
#define STRATA_OPK_EVERY ((1u << STRATA_OP__COUNT) - 1)
#define STRATA_OPK_RUN (STRATA_OPK_EVERY & ~STRATA_OPK(OPTION)) /* every op but option */

/* clang-format off */
#define STRATA_OP_OPERANDS(X)                                                                                      \
    /* ALLOC, FREE: the buffer. COPY: the destination. COMPUTE: the label. RECORD, WAIT: the event.              \
     * OPTION: the key. ALL_REDUCE: the buffer. Other collectives: OUT. */                                       \
    X(name,   _, STR, STRATA_OPK_EVERY & ~STRATA_OPK(RELEASE), NULL)                                              \
    /* COPY: the source buffer. Collectives but ALL_REDUCE: IN. */                                               \
    X(src,    _, STR, STRATA_OPK(COPY) | STRATA_OPK_INOUT, NULL)                                                  \
    /* OPTION: the value (one token; may hold '=' and ','). */                                                   \
    X(value,  _, STR, STRATA_OPK(OPTION), NULL)                                                                  \
    /* ALLOC: the memory (NULL: the hardware's device memory). RELEASE: the memory (NULL: every one). */        \
    X(memory, _, STR, STRATA_OPK(ALLOC) | STRATA_OPK(RELEASE), NULL)                                             \
    /* ALLOC: the bytes requested (above 0). */                                                                  \
    X(size,   _, U64, STRATA_OPK(ALLOC), 0)

#define STRATA_OP_ATTRS(X)                                                                                         \
    /* ALLOC: what the buffer holds; its element type (COMPUTE: the type it computes in, absent: its first        \
     * operand's); its logical extents, outermost first; where a captured run placed it (for comparison only). */ \
    X(tag,    tag,     _,         TAG,     TAG,    STRATA_OPK(ALLOC), 0, "a tag")                                  \
    X(dtype,  dtype,   _,         DTYPE,   DTYPE,  STRATA_OPK(ALLOC) | STRATA_OPK(COMPUTE), 0, "a dtype")          \
    X(shape,  shape,   n_dims,    SHAPE,   SHAPE,  STRATA_OPK(ALLOC), 0,                                           \
      "a shape such as 8x128 (at most 8 positive extents)")                                                      \
    X(addr,   addr,    has_addr,  OPT_U64, ADDR,   STRATA_OPK(ALLOC), 0, "an address such as 0x7f0000 or 4096")    \
    /* COMPUTE: its work; the buffers it reads, writes, and the inputs whose storage outputs may reuse. */       \
    X(flops,  flops,   has_flops, OPT_F64, FLOPS,  STRATA_OPK(COMPUTE), 0,                                         \
      "an amount of work such as 1000000, 2e9 or 4.5GFLOP")                                                      \
    X(in,     ins,     n_ins,     LIST,    LIST,   STRATA_OPK(COMPUTE), 0, "a buffer name (a list is A,B,C)")      \
    X(out,    outs,    n_outs,    LIST,    LIST,   STRATA_OPK(COMPUTE), 0, "a buffer name (a list is A,B,C)")      \
    X(donate, donates, n_donates, LIST,    LIST,   STRATA_OPK(COMPUTE), 0, "a buffer name (a list is A,B,C)")      \
    /* COPY: the bytes moved (absent: the source's size). COMPUTE: the bytes its operands move through the       \
     * unit's memory (absent: the sizes of in= and out=). A collective: the bytes it reads of IN (all-reduce:     \
     * of BUF), a part of the buffer (absent: its size; check.c's feed_collective). */                           \
    X(bytes,  bytes,   has_bytes, OPT_U64, SIZE,   STRATA_OPK(COPY) | STRATA_OPK(COMPUTE) | STRATA_OPK_COLLECTIVE,  \
      0, "a size such as 4096, 64KiB or 1.5GiB")                                                                 \
    /* COMPUTE: its time, given; the unit (NULL: the hardware's first). */                                      \
    X(time,   time_s,  has_time,  OPT_F64, TIME,   STRATA_OPK(COMPUTE), 0, "a time such as 250ns, 3us, 2ms or 1.5s") \
    X(unit,   unit,    _,         STR,     NAME,   STRATA_OPK(COMPUTE), NULL, "a compute unit name")               \
    /* COMPUTE: the kernel that runs it, a name that trace/ only reads (which names exist and what extents each  \
     * takes is models/kernel/kernel.h's table; NULL: none); the problem's extents, outermost first; an         \
     * attention kernel's mask (causal; NULL: none). */                                                          \
    X(kernel, kernel,  _,         STR,     ALGO,   STRATA_OPK(COMPUTE), NULL,                                      \
      "a kernel name such as gemm or flash-attention ([a-z][a-z0-9-]*)")                                         \
    X(dims,   dims,    n_kdims,   SHAPE,   SHAPE,  STRATA_OPK(COMPUTE), 0,                                         \
      "extents such as 4096x4096x4096 (at most 8 positive extents)")                                             \
    X(mask,   mask,    _,         STR,     ALGO,   STRATA_OPK(COMPUTE), NULL, "a mask such as causal")             \
    /* COLLECTIVE_PERMUTE: rank r sends to r + shift (non-zero, modulo the group). Collectives: the mesh axes     \
     * (one, or several joined by ','); the algorithm, a name that trace/ only reads (which names exist and     \
     * serve which kinds is models/collective/coll_algo.h's table; NULL: the hardware's pick). */               \
    X(shift,  shift,   _,         I32,     SHIFT,  STRATA_OPK(COLLECTIVE_PERMUTE), 0,                              \
      "a shift such as +1 or -1 (not 0)")                                                                        \
    X(axis,   axis,    _,         STR,     AXIS,   STRATA_OPK_COLLECTIVE, NULL,                                    \
      "mesh axis names such as data or data,model ([a-z][a-z0-9_]*)")                                            \
    X(algo,   algo,    _,         STR,     ALGO,   STRATA_OPK_COLLECTIVE, NULL,                                    \
      "an algorithm name such as ring or bidir-ring ([a-z][a-z0-9-]*)")                                          \
    /* Any op: only device D runs it (absent: every device of the mesh, or the one device without one); the     \
     * stream it runs on; when a captured run issued it (for comparison only); a one-word label. */             \
    X(device, device,  has_device, OPT_U32, DEVICE, STRATA_OPK_RUN, 0, "a device index such as 0 or 3")          \
    X(stream, stream,  _,         STR,     NAME,   STRATA_OPK_RUN, STRATA_DEFAULT_STREAM, "a stream name")         \
    X(at,     at_s,    has_at,    OPT_F64, TIME,   STRATA_OPK_RUN, 0, "a time such as 250ns, 3us, 2ms or 1.5s")    \
    X(note,   note,    _,         STR,     NAME,   STRATA_OPK_RUN, NULL, "a note (one word)")
/* clang-format on */

/* What each STORE is in C: its members (FIELD, and AUX where it has one). */
#define OP_SCHEMA_STORE_STR(f, aux) const char *f;
#define OP_SCHEMA_STORE_U32(f, aux) uint32_t f;
#define OP_SCHEMA_STORE_U64(f, aux) uint64_t f;
#define OP_SCHEMA_STORE_I32(f, aux) int32_t f;
#define OP_SCHEMA_STORE_TAG(f, aux) strata_tag f;
#define OP_SCHEMA_STORE_DTYPE(f, aux) strata_dtype f;
#define OP_SCHEMA_STORE_OPT_U32(f, aux) bool aux; uint32_t f;
#define OP_SCHEMA_STORE_OPT_U64(f, aux) bool aux; uint64_t f;
#define OP_SCHEMA_STORE_OPT_F64(f, aux) bool aux; double f;
#define OP_SCHEMA_STORE_LIST(f, aux) const char *const *f; uint32_t aux;
#define OP_SCHEMA_STORE_SHAPE(f, aux) uint32_t aux; uint64_t f[STRATA_MAX_DIMS];

/* Each STORE's class, for the code generated per class (copy, clear,
 * equality): VAL (a plain value), OPT, STR, LIST, SHAPE. */
#define OP_SCHEMA_CLASS_STR STR
#define OP_SCHEMA_CLASS_U32 VAL
#define OP_SCHEMA_CLASS_U64 VAL
#define OP_SCHEMA_CLASS_I32 VAL
#define OP_SCHEMA_CLASS_TAG VAL
#define OP_SCHEMA_CLASS_DTYPE VAL
#define OP_SCHEMA_CLASS_OPT_U32 OPT
#define OP_SCHEMA_CLASS_OPT_U64 OPT
#define OP_SCHEMA_CLASS_OPT_F64 OPT
#define OP_SCHEMA_CLASS_LIST LIST
#define OP_SCHEMA_CLASS_SHAPE SHAPE

/* OP_SCHEMA_BY_CLASS(PREFIX, STORE) is PREFIX followed by STORE's class:
 * OP_SCHEMA_BY_CLASS(EQ_, OPT_U64) is EQ_OPT. */
#define OP_SCHEMA_CAT_(a, b) a##b
#define OP_SCHEMA_CAT(a, b) OP_SCHEMA_CAT_(a, b)
#define OP_SCHEMA_BY_CLASS(prefix, store) OP_SCHEMA_CAT(prefix, OP_SCHEMA_CLASS_##store)

#endif
