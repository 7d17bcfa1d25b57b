/*
 * engine_spans.h: what the engine tells the results of each op it ran and
 * each change of a memory, when spans are wanted (record_spans or a
 * timeline, engine.h): a span per op (its kind, stream, start and end,
 * bytes, memories, label and, for a copy, the route it took) and a sample
 * per alloc and free (the memory's allocated and reserved bytes after it,
 * the buffer's tag, offset, id and signed size). The results keep them, or
 * hand them to the timeline as they come (results.h). The files of
 * sim/engine only; it calls no SimGrid (the caller gives the date).
 *
 * A copy's route is the results' id of it (strata_results_add_route): the
 * binder's route id, or, with classes, for a copy a sender makes on
 * behalf of another device (engine_quotient.h), the id after the binder's
 * routes of that sender's hops. The results' routes are listed lazily,
 * as spans name them: the binder's all at once, the senders' up to the
 * one named.
 *
 * Invariants:
 *  1. the results' route ids are the binder's, then its senders' in sender
 *     order: route r of the results crosses the links the binder's route r
 *     (or sender r - binder routes) hops over, in hop order;
 *  2. a span or sample goes to the results in the order the engine's
 *     calls come, nothing held back (the timeline's bytes follow the run's
 *     order, deterministic as SimGrid is).
 */
#ifndef STRATA_ENGINE_SPANS_H
#define STRATA_ENGINE_SPANS_H

#include "engine/engine_internal.h"

typedef struct engine_spans {
    strata_results *results;          /* borrowed: where spans and samples go */
    engine_feed *feed;                /* borrowed: the binder's routes */
    const engine_quotient *quotient;  /* borrowed; NULL without classes */
    const engine_memories *mems;      /* borrowed: the allocators' stats */
} engine_spans;

/* The span of op e, run from start to end; sender: with classes, the
 * sender a copy from another device takes (engine_quotient_sender), else
 * STRATA_NO_ROUTE. */
void engine_spans_op(engine_spans *sp, const engine_op *e, uint32_t sender, double start, double end);
/* The sample of buffer b's memory at date t after b changed by delta
 * bytes (+size: allocated, -size: freed). */
void engine_spans_sample(const engine_spans *sp, const engine_buffer *b, int64_t delta, double t);

#endif
