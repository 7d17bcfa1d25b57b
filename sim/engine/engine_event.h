/*
 * engine_event.h: the record/wait synchronisation of stream actors, shared
 * by the engine (engine.c) and the bare baseline of bench/bench_engine.
 *
 * A record marks (event, sequence) done and resumes, in the order they
 * began waiting, the actors whose awaited record is now done; a wait
 * suspends the calling actor until the record it awaits is done (at once
 * when it already is). Records of one event may execute out of order (on
 * different streams); sequences are the binder's (1 for an event's first
 * record).
 *
 * Invariants: every record 1..done_upto of an event has executed, and the
 * executed ones above it are in a set; a waiter is in its event's list iff
 * it is suspended in engine_events_wait().
 */
#ifndef STRATA_ENGINE_EVENT_H
#define STRATA_ENGINE_EVENT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct engine_events engine_events;

engine_events *engine_events_new(uint32_t n_events);
void engine_events_free(engine_events *ev);
void engine_events_record(engine_events *ev, uint32_t event, uint64_t seq);
/* From inside an actor: returns once record `seq` of `event` has executed. */
void engine_events_wait(engine_events *ev, uint32_t event, uint64_t seq);

#endif
