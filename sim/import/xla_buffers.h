/*
 * xla_buffers.h: reader of XLA's buffer assignment, the text of
 * BufferAssignment::ToString() in `*after_optimizations-buffer-assignment.txt`:
 *
 *   BufferAssignment:
 *   allocation 0: size 1024, parameter 0, shape |f32[256]| at ShapeIndex {}:
 *    value: <3 Arg_0.1 @0> (size=1024,offset=0): f32[256]{0}
 *   allocation 3: size 4096, preallocated-temp:
 *    value: <7 fusion.2 @0> (size=2048,offset=0): f32[512]{0}
 *
 *   Total bytes used: 5120 (5.0KiB)
 *
 *   Used values:
 *   <3 Arg_0.1 @0>
 *    positions: ...
 *
 * An allocation header is `allocation N: size B` then, comma separated and in
 * this order, any of `color C`, `parameter P[, shape |S|][ at ShapeIndex {I}]`,
 * `output shape is |S|`, `constant`, `thread-local`, `maybe-live-out`,
 * `preallocated-temp`, and a closing `:` (older XLA put `0xADDR, ` before
 * `size`). A value line is ` value: <ID NAME[{INDEX}][ (phi)][ @COLOR]>
 * (size=S,offset=O): SHAPE`; the value's key, as HloLiveRange names it, is
 * NAME{INDEX} ({} when the instruction is not a tuple).
 *
 * The reader is fed one line at a time (xla_buffers_feed). It reads the
 * allocations, their values and `Total bytes used`; it skips, knowingly, the
 * `Used values:` section and a `BufferAssignment stats:` block. A header
 * field it does not know (`WORD[ TEXT]`, e.g. `page 0` of XLA in jaxlib
 * 0.11 on) and a line starting with a letter that is none of these are
 * read past and counted (xla_buffers_unknown); a known field with a bad
 * value, and any other line before `Used values:`, is an error naming
 * FILE:LINE.
 *
 * Invariants: values are stored in file order, each with its allocation's
 * index into the allocation array; a value lies inside its allocation
 * (offset + size <= allocation size, else an error).
 */
#ifndef STRATA_IMPORT_XLA_BUFFERS_H
#define STRATA_IMPORT_XLA_BUFFERS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "import/xla_text.h"

enum {
    XLA_ALLOC_PARAMETER = 1 << 0,
    XLA_ALLOC_OUTPUT = 1 << 1,      /* "output shape is |...|": holds the entry's root */
    XLA_ALLOC_CONSTANT = 1 << 2,
    XLA_ALLOC_THREAD_LOCAL = 1 << 3,
    XLA_ALLOC_LIVE_OUT = 1 << 4,    /* maybe-live-out */
    XLA_ALLOC_TEMP = 1 << 5,        /* preallocated-temp */
};

typedef struct xla_allocation {
    uint64_t index, size;
    uint64_t color;
    uint64_t parameter;        /* valid with XLA_ALLOC_PARAMETER */
    unsigned flags;
    uint64_t line;
} xla_allocation;

typedef struct xla_value {
    uint64_t id;
    char *key;                 /* NAME{INDEX}, as the live ranges name it */
    char *name;                /* the defining instruction */
    uint32_t alloc;            /* index into the allocation array */
    uint64_t size, offset;
    uint64_t color;
    xla_shape shape;
    uint64_t line;
} xla_value;

typedef struct xla_buffers xla_buffers;

xla_buffers *xla_buffers_new(void);
void xla_buffers_free(xla_buffers *b);
bool xla_buffers_feed(xla_buffers *b, const char *file, const char *line, uint64_t lineno, GError **err);
/* After the last line: at least one allocation, and a stated total that equals
 * the sum of the allocation sizes. */
bool xla_buffers_finish(xla_buffers *b, const char *file, GError **err);

/* The fields and lines read past without being known. */
const xla_unknown *xla_buffers_unknown(const xla_buffers *b);
uint32_t xla_buffers_n_allocations(const xla_buffers *b);
const xla_allocation *xla_buffers_allocation(const xla_buffers *b, uint32_t i);
uint32_t xla_buffers_n_values(const xla_buffers *b);
const xla_value *xla_buffers_value(const xla_buffers *b, uint32_t i);

#endif
