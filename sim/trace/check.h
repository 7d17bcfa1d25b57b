/*
 * check.h: the semantic checker of an op stream, in file order.
 *
 * Fed ops in the order the source gives them, it enforces the rules of
 * traces/FORMAT.md that need history and resolves names to numbers:
 *  - a buffer name is unique among live buffers and reusable after its free;
 *    each alloc gets a new buffer id (0, 1, 2, ... in file order);
 *  - free, copy, in=, out= and donate= name live buffers;
 *  - a copy moves bytes= (default: the source's size) and must fit in both;
 *  - `wait E` waits for the latest `record E` before it in file order; a wait
 *    on an event never recorded before it is an error;
 *  - streams are numbered in order of first appearance;
 *  - option lines come before the first op;
 *  - time=, at= and flops= lie in the sane ranges below;
 *  - `option mesh=` is a valid mesh (core/mesh.h) whose device count is the
 *    hardware's when that is known (strata_checker_set_devices());
 *  - a collective comes after a mesh, names axes of it, names live buffers
 *    (OUT and IN distinct) whose sizes divide as its kind requires
 *    (all-gather: OUT = n x IN; reduce-scatter: IN = n x OUT; all-to-all:
 *    OUT = IN, a multiple of n; collective-permute: OUT = IN; n the group
 *    size);
 *  - device=D names a device below the device count, when it is known (the
 *    mesh's, else the hardware's);
 *  - in a program whose device count is known, what the maker of the names
 *    refuses (a namer, below: the SPMD expansion's refuses the names it
 *    keeps for its own and memories of devices past the count).
 * The checker decodes no name: a name is a key, compared byte for byte, and
 * the device of an op is its field (strata_op.device). Messages quote names
 * as the namer labels them (strata_checker_set_namer(): after the SPMD
 * expansion, its 'B@D' is quoted as 'B' on device D), else as written.
 * Errors are STRATA_ERROR_INPUT: "ORIGIN:LINE: what was expected".
 *
 * Every consumer runs the checker over what it reads, so all of them accept
 * and reject exactly the same traces.
 */
#ifndef STRATA_CHECK_H
#define STRATA_CHECK_H

#include "core/mesh.h"
#include "trace/op.h"

/* Sane ranges of a trace's numbers (traces/FORMAT.md): a value outside
 * is an input error naming the line, never a run that prints nonsense. */
#define STRATA_TRACE_MAX_TIME_S 1e6 /* time= of one op: 11.6 days */
#define STRATA_TRACE_MAX_AT_S 1e9   /* at= timestamps: 31.7 years */
#define STRATA_TRACE_MAX_FLOPS 1e21 /* flops= of one op: 1e6 s at 1 PFLOP/s */

/* The least time above 0 a time= or at= may hold: a picosecond, the
 * finest time strata itself writes (a collective step's delay is kept in
 * ps, spmd_render.c; the importers round to ns) and a thousandth of
 * SimGrid's numerical accuracy for a sleep (sg_surf_precision, 1e-9 s in
 * SimGrid 3.32, whose sleep_for() warns below it). 1e-300s, or a
 * subnormal, was taken as a time no clock ticks; 0 stays "no time". */
#define STRATA_TRACE_MIN_TIME_S 1e-12

/* Each range once, for the checker and for importers that refuse a value
 * at its source line (NaN is outside every range): 0, or from
 * STRATA_TRACE_MIN_TIME_S to the maximum. */
static inline bool strata_trace_time_ok(double s)
{
    return s == 0 || (s >= STRATA_TRACE_MIN_TIME_S && s <= STRATA_TRACE_MAX_TIME_S);
}
static inline bool strata_trace_at_ok(double s)
{
    return s == 0 || (s >= STRATA_TRACE_MIN_TIME_S && s <= STRATA_TRACE_MAX_AT_S);
}
static inline bool strata_trace_flops_ok(double f) { return f >= 0 && f <= STRATA_TRACE_MAX_FLOPS; }

typedef struct strata_checker strata_checker;

/* What the checker resolved for one op. Arrays are valid until the next feed.
 * strata_checker_feed() clears each field by name: a new field is cleared
 * there too. */
typedef struct strata_op_refs {
    uint32_t stream;        /* stream index */
    uint64_t buf;           /* ALLOC, FREE: buffer id. COPY: destination id */
    uint64_t src;           /* COPY: source id */
    uint64_t bytes;         /* COPY: bytes moved. ALLOC: size. COMPUTE: operand bytes (ins+outs) */
    uint32_t event;         /* RECORD, WAIT: event index */
    uint64_t event_seq;     /* RECORD: 1 for the event's first record, 2... WAIT: the record awaited */
    const uint64_t *ins;    /* COMPUTE: ids of in= */
    const uint64_t *outs;   /* COMPUTE: ids of out= */
    /* ALLOC, FREE: the buffer's memory name. COPY: the destination's.
     * NULL = the default memory; valid as long as the checker (names are
     * interned: one pointer per distinct name). */
    const char *memory;
    const char *src_memory; /* COPY: the source's memory name, likewise */
    /* ALLOC, FREE: the buffer's dtype. COMPUTE: its first operand's (in=, else out=). */
    strata_dtype dtype;
    /* Collectives: buf = OUT (all-reduce: the buffer), src = IN (the same
     * for all-reduce), bytes = the per-device size nccl-tests counts
     * (all-reduce and all-gather: OUT; the others: IN), the group size. */
    uint32_t group_size;
} strata_op_refs;

strata_checker *strata_checker_new(const char *origin);
void strata_checker_free(strata_checker *c);
/* refs may be NULL. */
bool strata_checker_feed(strata_checker *c, const strata_op *op, strata_op_refs *refs, GError **err);

uint32_t strata_checker_stream_count(const strata_checker *c);
const char *strata_checker_stream_name(const strata_checker *c, uint32_t index);
uint32_t strata_checker_event_count(const strata_checker *c);
uint64_t strata_checker_buffer_count(const strata_checker *c); /* allocs so far */
uint64_t strata_checker_op_count(const strata_checker *c);     /* ops fed (not options) */

/* Live buffer by id: false if not live. memory is NULL for the default memory.
 * O(live buffers): for tests and diagnostics, not per op. */
bool strata_checker_buffer(const strata_checker *c, uint64_t id, uint64_t *size, const char **memory);
/* Option values seen ("allocator.max_split_size" -> "200MiB"), in order. */
const GPtrArray *strata_checker_option_keys(const strata_checker *c);
const char *strata_checker_option(const strata_checker *c, const char *key);

/* The option key a rewrite that grows allocs writes (KEY=N for the default
 * memory, KEY.MEM=N for a named one); the consumers' ledgers read it into
 * results' padding_bytes. */
#define STRATA_OPTION_PADDING_BYTES "padding_bytes"
/* The hardware's device count (0: not known, the default), for the checks above. */
void strata_checker_set_devices(strata_checker *c, uint32_t devices);

/* How a message shows a name: NAME as the program wrote it, DETAIL what it
 * is ("" or " (a collective's receive buffer on stream 'S')") and WHERE
 * ("" or " on device 3"). Quoted, it is 'NAME'DETAIL WHERE. All owned. */
typedef struct strata_name_label {
    char *name, *detail, *where;
} strata_name_label;

/* The names of the ops a checker is fed, as the layer that makes them says
 * (the SPMD expansion's: spmd/spmd_names.h), so that the checker holds no
 * naming scheme of its own. Either hook may be NULL. */
typedef struct strata_namer {
    /* Fills *out for `name` (never NULL), each string newly allocated.
     * NULL: 'NAME' as written. */
    void (*label)(const void *ctx, const char *name, strata_name_label *out);
    /* In a program for `devices` devices (the count known: the mesh's, else
     * the hardware's; at least 1): what was expected instead of `op`, newly
     * allocated, or NULL when the op may be there. NULL: every op may. */
    char *(*refuse)(const void *ctx, const strata_op *op, uint32_t devices);
    const void *ctx;
    /* The names fed are each device's already (the expansion's). false: in
     * a program with a mesh, a name on an op with device=D is D's (NAME@D). */
    bool qualified;
} strata_namer;

/* The namer of the names fed (borrowed; NULL, the default: none). */
void strata_checker_set_namer(strata_checker *c, const strata_namer *namer);
/* How a message quotes the buffer, stream or event `name` (the namer's
 * label, above): "'NAME'", or "'NAME' on device D", or "'S~t0' (a
 * collective's receive buffer on stream 'S') on device D". Newly allocated. */
char *strata_checker_quote(const strata_checker *c, const char *name);


#endif
