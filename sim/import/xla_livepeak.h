/*
 * xla_livepeak.h: XLA's own live-range peak, the figure XLA prints as
 * `Live ranges at T (peak):` in the buffer-assignment dump, recomputed from
 * the dump the way XLA computes it (HloLiveRange::ComputePeakMemoryMoment
 * and HloLiveRange::ToString; openxla/xla@0e56610a
 * xla/hlo/utils/hlo_live_range.cc, and before it openxla/xla@16569562
 * xla/service/hlo_live_range.cc):
 *
 *  1. the moment: a sweep over every value with a live range, a start event
 *     at START and an end event at END+1, sorted by (time, end after start);
 *     each value weighs ShapeUtil::ByteSizeOf(defining instruction's shape,
 *     8). The moment is the first time the running sum reaches its maximum.
 *     Starts at T are added before the values that ended at T-1 leave, so
 *     the sweep may pick a moment where the values live at it are not the
 *     most; XLA does so and so does this.
 *  2. the figure: the values live at the moment (START <= T <= END), each
 *     at ByteSizeOf(value's own shape, 8) where the entries name values,
 *     `NAME{INDEX}: N bytes` (XLA from jaxlib 0.6.0; `(cumulative: C
 *     bytes)` follows from 0.6.2), or at its defining instruction's shape
 *     where they name instructions (`NAME: N bytes`, before).
 *
 * What XLA counts and strata's physical peak does not (xla_emit.c): every
 * value at its shape's size, values sharing storage each; a donated
 * parameter (one that aliases an output) only until its last read, where
 * the caller's allocation holds it for the whole program; a value of a
 * tuple-shaped instruction at the tuple's index table in the sweep.
 *
 * From the dump: a value's shape size is the size the buffer assignment
 * lists for it (`value: <ID KEY> (size=S,...)`), which is ByteSizeOf(shape,
 * 8) under XLA's CPU and GPU size functions; a defining instruction's shape
 * size is that of its value NAME{}. A value with a live range and no listed
 * size, or a tuple element whose NAME{} is not listed, is not carried by
 * the dump: it is sized by its own size, else 0, and counted in n_unsized.
 *
 * Invariant: a pure function of the two readers; ties and hash order do not
 * change the result.
 */
#ifndef STRATA_IMPORT_XLA_LIVEPEAK_H
#define STRATA_IMPORT_XLA_LIVEPEAK_H

#include <stdbool.h>
#include <stdint.h>
#include "import/xla_buffers.h"
#include "import/xla_liverange.h"

typedef struct xla_livepeak {
    uint64_t time;       /* the moment */
    uint64_t bytes;      /* the sum XLA prints at it */
    uint64_t n_values;   /* values live at it */
    uint64_t n_unsized;  /* values the dump gives no size for (see above) */
} xla_livepeak;

void xla_livepeak_compute(const xla_buffers *b, const xla_liverange *lr, xla_livepeak *out);

#endif
