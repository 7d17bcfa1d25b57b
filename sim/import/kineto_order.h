/*
 * kineto_order.h: the [memory] events of one GPU of a PyTorch profiler
 * trace, in ts order.
 *
 * torch/csrc/profiler/collection.cpp, RecordQueue::getRecords, appends the
 * results thread by thread: each ThreadLocalSubqueue's allocations_ in
 * turn, so the [memory] events of a file come in one run per CPU thread
 * that called the allocator, each run in ts order. A training step frees
 * and allocates on two: the Python thread (forward, optimizer) and the
 * autograd engine's device thread (backward). In file order such a
 * window's backward frees come before the forward allocs of the blocks
 * they free. The caching allocator is one state per device and every event
 * carries its totals after the call: in ts order each event's Total
 * Allocated is the previous one's plus its Bytes (all 2012 events of the
 * H200 training step, docs/kineto-import.md; in file order 4 are not).
 * Invariant: the events returned are in ts order, the file's order among
 * equal ts.
 */
#ifndef STRATA_KINETO_ORDER_H
#define STRATA_KINETO_ORDER_H

#include <glib.h>

#include "core/progress.h"

/* The order above for two events: ts, then their places in the file. */
static inline gint strata_kineto_ts_order(double ts_a, guint index_a, double ts_b, guint index_b)
{
    if (ts_a != ts_b)
        return ts_a < ts_b ? -1 : 1;
    return (index_a > index_b) - (index_a < index_b);
}

/* The [memory] events of GPU `device` (CUDA or HIP) in `path`, in ts order
 * (strata_kineto_event, name NULL), read in one more pass shown on
 * progress (NULL: none); NULL with err. Every one must carry a ts. */
GArray *strata_kineto_memory_by_ts(const char *path, int device, strata_progress *progress, GError **err);

#endif
