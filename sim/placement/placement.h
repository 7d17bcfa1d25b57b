/*
 * placement.h: where one memory's buffers go, for every consumer that
 * places them: the engine (sim/engine, `strata run`), the untimed replay
 * (sim/replay: `strata alloc`, the PyTorch and Kineto fidelity), and the
 * real backends' plan (sim/backend/plan.c: `strata replay`, `validate`).
 *
 * A placement is one memory's allocator (models/alloc/alloc.h) with what
 * goes with it, so that each consumer places a trace's buffers the same way:
 *  - the allocator spec ("NAME[:k=v,...]") and the trace's
 *    `option allocator.KEY=VALUE` lines: the options whose KEY the
 *    allocator's type declares are a base under the spec's own values (the
 *    spec wins); the others are for other allocators and ignored;
 *  - the ledger (ledger/ledger.h): the allocator's stats after each of its
 *    calls, and (fed by the consumer through strata_placement_ledger) the
 *    program's ops in file order;
 *  - the buffers' lifetimes, collected in program order, which a planning
 *    (offline) allocator gets before its first alloc;
 *  - the invariant-check switch (`--check-allocators`, `alloc --check`):
 *    strata_allocator_check() after every allocator call.
 *
 * Life of a placement:
 *   new        the ledger; no allocator yet;
 *   open       the allocator, from the spec and the trace's options (a
 *              checker, or NULL: none yet); called again with the options,
 *              it makes a new allocator only when some option applies;
 *   note_*     the lifetimes, in program order (kept only when the
 *              allocator plans ahead: strata_placement_needs_plan);
 *   plan       hands them to the planner and drops them;
 *   alloc, free, release, event
 *              the allocator's calls, each followed by the ledger's
 *              observe and, when checking, the invariant check.
 *
 * Invariants:
 *  1. the allocator is made only by strata_placement_open, from the spec
 *     and the trace's options that its type declares; a placement that
 *     places a buffer is open;
 *  2. after every allocator call made through the placement but an alloc
 *     that failed (STRATA_PLACE_OOM: not observed), the ledger has observed
 *     the allocator's stats (its peaks are over every such call);
 *  3. with check on, strata_allocator_check() has held after every call,
 *     or that call reported STRATA_ERROR_INTERNAL naming the memory;
 *  4. lifetimes are kept only for a planning allocator, each closed by the
 *     free of its id at most once, and dropped once planned.
 */
#ifndef STRATA_PLACEMENT_H
#define STRATA_PLACEMENT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "alloc/alloc.h"
#include "core/progress.h"
#include "ledger/ledger.h"
#include "results/results.h"
#include "bind/trace_options.h"
#include "trace/check.h"

/* The prefix of the trace options that reach allocators (bind/trace_options.h checks them). */
#define STRATA_PLACEMENT_OPTION_PREFIX STRATA_TRACE_OPTION_ALLOCATOR_PREFIX

typedef struct strata_placement_config {
    const char *memory;       /* the memory's name, for messages (copied) */
    const char *spec;         /* "NAME[:k=v,...]" (copied); NULL: STRATA_ALLOC_DEFAULT */
    uint64_t capacity;
    uint64_t alignment;       /* power of two; 0: the allocator's own */
    bool check;               /* strata_allocator_check() after every call */
    /* The capacity is the caller's choice: `option allocator.device_limit`
     * (a trace's inferred memory limit) is not applied. */
    bool ignore_device_limit;
} strata_placement_config;

typedef struct strata_placement strata_placement;

/* The outcome of an alloc. */
typedef enum {
    STRATA_PLACED,        /* placed at *offset */
    STRATA_PLACE_OOM,     /* does not fit (not an error) */
    STRATA_PLACE_BROKEN,  /* placed, but an invariant broke (err set) */
} strata_place_result;

strata_placement *strata_placement_new(const strata_placement_config *cfg);
void strata_placement_free(strata_placement *p);

/* "k=v,..." of c's allocator.KEY options that the type of spec declares,
 * in the trace's order, less device_limit when ignore_device_limit; NULL
 * when none (or c is NULL). g_free. */
char *strata_placement_option_kv(const strata_checker *c, const char *spec, bool ignore_device_limit);

/* Makes the allocator (invariant 1). False with err (STRATA_ERROR_INPUT,
 * naming the memory and the options) on an unknown allocator or parameter. */
bool strata_placement_open(strata_placement *p, const strata_checker *c, GError **err);
bool strata_placement_is_open(const strata_placement *p);

/* The allocator (open only): borrowed. */
strata_allocator *strata_placement_allocator(const strata_placement *p);
/* The allocator's full spec, every parameter included (open only). */
const char *strata_placement_spec(const strata_placement *p);
/* The ledger (the consumer feeds it the program's ops): borrowed, the same
 * from strata_placement_new to strata_placement_free (a consumer may keep it). */
strata_ledger *strata_placement_ledger(const strata_placement *p);
/* True when the configured allocator type plans ahead (offline); known
 * before open (an unknown name: false). */
bool strata_placement_needs_plan(const strata_placement *p);

/* ---- lifetimes, in program order (invariant 4) ---- */

/* Buffer id (size bytes) is allocated at op index `index` (has_at, at_s:
 * the op's at= stamp). */
void strata_placement_note_alloc(strata_placement *p, uint64_t id, uint64_t size, uint64_t index, bool has_at,
                                 double at_s);
/* Buffer id is freed at op index `index`; nothing when it was not noted. */
void strata_placement_note_free(strata_placement *p, uint64_t id, uint64_t index, bool has_at, double at_s);
/* Plans a planning allocator with the lifetimes noted (showing progress
 * there; NULL: nowhere) and drops them; nothing for the others. False with
 * err prefixed by the memory's name. */
bool strata_placement_plan(strata_placement *p, strata_progress *progress, GError **err);

/* ---- the allocator's calls (invariants 2 and 3) ---- */

strata_place_result strata_placement_alloc(strata_placement *p, uint64_t id, uint64_t size, uint32_t stream,
                                           uint64_t *offset, GError **err);
bool strata_placement_free_block(strata_placement *p, uint64_t id, GError **err);
bool strata_placement_release(strata_placement *p, GError **err);
/* A record (is_record) or a wait, for the allocator's event hook. */
void strata_placement_event(strata_placement *p, bool is_record, uint32_t stream, uint32_t event, uint64_t seq);
/* Whether events reach the allocator at all (its type has an event hook):
 * a consumer may skip strata_placement_event where this is false. */
bool strata_placement_takes_events(const strata_placement *p);
/* The allocator's stats now: those taken after the latest alloc, free or
 * release when no event, open or plan came since (the allocator is
 * changed only through these calls: strata_placement_allocator()'s is to
 * read), else asked of the allocator. */
void strata_placement_stats(const strata_placement *p, strata_alloc_stats *out);

/* The memory's allocator spec, capacity and the ledger's figures into out
 * (its name and kind are the caller's). */
void strata_placement_fill(const strata_placement *p, strata_memory_result *out);

#endif
