/*
 * xla_emit.h: the trace emitter of `strata import xla` (internal to
 * sim/import/xla*.c): from the buffer assignment, the live ranges and the
 * optional HLO, the op stream and the figures of strata_xla_figures.
 *
 * Buffers. Values of one allocation at the same offset whose live ranges
 * touch or overlap (start <= the previous one's end) share storage in XLA:
 * they form one group, one strata buffer, live from the first start to the
 * last end, as large as its largest value. Each group has a kind:
 *   ARGUMENT  a parameter allocation's group that starts at 0 (tag=param);
 *   OUTPUT    a maybe-live-out allocation's group alive at max (tag=output);
 *             an output allocation (maybe-live-out, no parameter) is one
 *             group, the allocation's size, from the first start of its
 *             values to max (held_output): values XLA writes there before
 *             the output are output bytes, never temp, as XLA counts them;
 *             a compute, collective or copy-start touching a smaller
 *             value there states bytes= (the value's bytes);
 *   DONATED   both (tag=param, never freed: JAX's aliased bytes);
 *   CONSTANT  a constant allocation's group (tag=param);
 *   TEMP      anything else (tag=activation when it spans two or more
 *             instructions, else tag=temp).
 * Thread-local values (per-thread stack memory) and empty values are not
 * emitted. A value of memory space 5 (XLA's host memory) lives in `host`.
 *
 * Order. Arguments and donated buffers are allocated first (so strata
 * counts them as arguments); then for each instruction t of the
 * sequence: allocs of the groups starting at t, the instruction's op, frees
 * of the groups ending at t; at the end, frees of everything but outputs and
 * donated buffers. Constants follow their live ranges like any value. So
 * the live set while instruction t runs is exactly the values XLA lists as
 * live at t (values sharing storage counted once).
 */
#ifndef STRATA_IMPORT_XLA_EMIT_H
#define STRATA_IMPORT_XLA_EMIT_H

#include "import/xla.h"
#include "import/xla_buffers.h"
#include "import/xla_hlo.h"
#include "import/xla_liverange.h"

typedef enum { XLA_ARGUMENT, XLA_OUTPUT, XLA_DONATED, XLA_CONSTANT, XLA_TEMP } xla_group_kind;

typedef struct xla_group {
    uint32_t alloc;        /* allocation index */
    uint32_t rep;          /* the largest value's index (names, dtype, shape) */
    uint64_t offset, size;
    uint64_t start, end;   /* inclusive schedule times */
    xla_group_kind kind;
    bool held_output;      /* an output allocation held whole from its first value */
    char *name;            /* the trace buffer's name */
} xla_group;

strata_source *xla_emit(const xla_buffers *b, const xla_liverange *lr, const xla_hlo *h,
                        strata_xla_figures *fig, GError **err);

/* The offline planner on each preallocated-temp allocation's groups: fills
 * fig->temps. */
bool xla_plan_temps(const xla_buffers *b, const xla_group *groups, size_t n, strata_xla_figures *fig,
                    GError **err);

#endif
