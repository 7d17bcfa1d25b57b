/*
 * engine_internal.h: the pieces of the engine, shared by the files of sim/engine only.
 *
 *   engine_platform.c  the SimGrid platform of the hardware model (hosts,
 *                      port links, hardware links, routes) and its hosts
 *                      (engine_platform.h), built through SimGrid's C++
 *                      platform interface by engine_sg_build.cpp (no XML:
 *                      engine_sg_build.h says why);
 *   engine_event.c     record/wait between stream actors (engine_event.h);
 *   engine_memory.c    one placement per memory (placement/placement.h:
 *                      its allocator and ledger, the accounting);
 *   engine_feed.c      the first pass over the bound source (streams,
 *                      lifetimes, options) and the lazy second pass
 *                      that fills per-stream queues in file order;
 *   engine_tape.c      the first pass's ops, kept compactly for the
 *                      second to replay (engine_tape.h);
 *   engine_spill.c     the temporary file where tapes keep what memory
 *                      may not hold (engine_spill.h);
 *   engine_phase.c     the arithmetic of a collective's phase, for the one
 *                      copy and the one compute of engine.c (engine_phase.h);
 *   engine_copy_queue.c  a link's copy engines: copies one way wait their
 *                      turn for one (engine_copy_queue.h);
 *   engine_spans.c     the spans and memory samples of a run for the
 *                      results and the timeline, and the routes they name
 *                      (engine_spans.h);
 *   engine.c           the SimGrid actors (one per stream) and the results.
 *
 * engine_platform.h and engine_event.h are also what the bare baseline of
 * bench/bench_engine shares with the engine (and tests/test_engine_sg_build.c
 * reads engine_platform.h). Only engine.c, engine_event.c, engine_copy_queue.c,
 * engine_platform.c and engine_sg_build.cpp call SimGrid.
 */
#ifndef STRATA_ENGINE_INTERNAL_H
#define STRATA_ENGINE_INTERNAL_H

#include "alloc/alloc.h"
#include "ledger/ledger.h"
#include "placement/placement.h"
#include "engine/engine.h"
#include "engine/engine_platform.h"
#include "engine/engine_quotient.h"
#include "engine/engine_tape.h"
#include "engine/engine_compiled.h"
#include "engine/engine_copy_queue.h"
#include "bind/bind.h"
#include "spmd/spmd.h"

/* ---- memories (engine_memory.c) ---- */

/* One buffer the engine knows about, from its alloc (read ahead) to its free (executed). */
typedef struct engine_buffer {
    uint64_t id;
    uint64_t size;
    uint64_t offset;
    uint32_t memory;
    strata_dtype dtype;
    strata_tag tag;
    uint64_t rows, cols; /* a 2-D shape (0 x 0 when none): for tiled units */
    bool placed;       /* the allocator gave it an address */
    char *name;        /* owned, name_cap bytes: kept when the buffer is recycled */
    size_t name_cap;
    struct engine_buffer *next_spare;
} engine_buffer;

typedef struct engine_memory {
    const strata_memory_spec *spec;
    strata_placement *place;   /* the allocator, its ledger, options, lifetimes (placement.h) */
    strata_ledger *ledger;     /* place's ledger (fixed for its life), read per op without a call */
    int64_t plan_stream;       /* the one stream that allocates here when planning; -1: none yet */
} engine_memory;

typedef struct engine_memories {
    engine_memory *mem;
    uint32_t n;
    uint32_t *evented;  /* the memories whose allocator takes events, in index order */
    uint32_t n_evented;
    /* A ledger takes arguments only before its first copy or compute
     * (ledger.h), and every ledger sees the first: after it, work need only
     * reach the ledgers holding what it writes (engine_memories_work_at). */
    bool work_seen;
} engine_memories;

/* allocator_override: every memory's allocator spec, or NULL for each
 * memory's own; check: --check-allocators. */
bool engine_memories_init(engine_memories *ms, const strata_hw *hw, const char *allocator_override, bool check,
                          GError **err);
void engine_memories_clear(engine_memories *ms);
/* Applies the trace's `option allocator.KEY=VALUE` lines to every memory
 * (strata_placement_open). Call before the first alloc. */
bool engine_memories_apply_options(engine_memories *ms, const strata_checker *c, GError **err);
/* Allocate b in its memory (placement.h's outcome; err when an invariant broke). */
strata_place_result engine_memory_alloc(engine_memory *m, engine_buffer *b, uint32_t stream, GError **err);
/* False with err when an invariant broke. */
bool engine_memory_free(engine_memory *m, engine_buffer *b, GError **err);
/* One op of the program, as read in file order, for every memory's ledger
 * (x: its donations, engine_tape.h). */
void engine_memories_program(engine_memories *ms, const strata_bound_op *op, const engine_op_extra *x);
/* After the first copy or compute (ms->work_seen): the work of op reaches
 * only the ledgers of mems[0..n) (distinct), the memories that hold what
 * it writes or donates: no other ledger holds an argument it touches. */
void engine_memories_work_at(engine_memories *ms, const uint32_t *mems, uint32_t n, const strata_bound_op *op,
                             const engine_op_extra *x);
/* A record op once it has run, or a wait once it is over, for every
 * memory's allocator (strata_allocator_event). */
void engine_memories_event(engine_memories *ms, const strata_bound_op *op);
/* Return the allocator's cached memory (a `release` op); false with err
 * when an invariant broke. */
bool engine_memory_release(engine_memory *m, GError **err);
/* Largest free address range of [0, capacity) not covered by a used block. */
uint64_t engine_memory_largest_gap(const engine_memory *m);
void engine_memory_fill_result(const engine_memory *m, strata_memory_result *out);

/* ---- feeding the op stream (engine_feed.c) ---- */

/* An op queued for a stream actor: the bound op (its pointers, valid only
 * until the next read, cleared), what the SPMD expansion's side table says
 * of it (spmd/spmd.h), and, for spans, its label. */
typedef struct engine_op {
    strata_bound_op bound; /* bound.op, bound.ins, bound.outs are NULL */
    uint32_t coll;             /* the collective it is a step of (strata_spmd_coll), or STRATA_COLL_NONE */
    strata_coll_phase phase;   /* the phase it stands for (engine_phase.h); rounds 0: one round */
    uint32_t from;             /* with classes, a copy's 1 + true source device (engine_quotient.h); 0: none */
    double lead_s;             /* a fence that ends a paced phase together: its class's lead (spmd.h's lead_ps) */
    double kernel_s;           /* COMPUTE: its kernel's fixed time (engine_kernel.c), 0 without one */
    char *label;           /* buffer, event or compute label (label_buf); NULL unless labels are kept */
    char *label_buf;       /* owned storage of label, kept when the op is recycled */
    size_t label_cap;
    struct engine_op *next;
} engine_op;

typedef struct engine_feed engine_feed;

/* engine_kernel.c: a run's table of kernel costs (one per feed, for its
 * hw), and a compute's kernel cost into x (kernel, kernel_flops,
 * kernel_bytes, kernel_s) when it names a kernel= and runs on a unit,
 * computed once per distinct kernel, unit and problem. */
typedef struct engine_kernel_costs engine_kernel_costs;
engine_kernel_costs *engine_kernel_costs_new(const strata_hw *hw);
void engine_kernel_costs_free(engine_kernel_costs *kc);
void engine_kernel_extra(engine_kernel_costs *kc, const strata_bound_op *op, engine_op_extra *x);

/* First pass: binds the whole source (bind/bind.h: names, memories,
 * units, routes), collects streams, events, lifetimes for planning
 * allocators, the trace's options for the ledgers and, with classes (q
 * not NULL), the senders of the copies between devices, and keeps the ops on
 * a tape of at most tape_budget bytes for the second pass (past it, the
 * second pass reads the source again), at most tape_memory bytes of it in
 * memory (past it, in a temporary file: engine_tape.h's spill), and at most
 * queue_memory bytes of ops queued for streams behind in file order in
 * memory (past it, in a temporary file too). keep_labels: keep each op's label
 * (buffer, event or compute name), for spans only. progress (NULL: none;
 * used during the call only) shows the ops the first pass reads. */
engine_feed *engine_feed_new(const strata_hw *hw, strata_source *src, engine_memories *ms, engine_quotient *q,
                             bool keep_labels, size_t tape_budget, size_t tape_memory, size_t queue_memory,
                             strata_progress *progress, GError **err);
void engine_feed_free(engine_feed *f);
/* A compiled trace (engine_compiled.h) of f, just made by engine_feed_new
 * with keep_labels and no bound on tape_memory, and not yet read from:
 * what its second pass would start from. Its tape is f's (borrowed: valid
 * while f is, cleared before engine_compiled_free). NULL (err: exit 2)
 * when f's first pass dropped its tape (over its budget). */
engine_compiled *engine_feed_compiled(const engine_feed *f, GError **err);
/* A feed whose second pass replays the compiled trace c (taken, its tape
 * included), checked against the model hw: as engine_feed_new() leaves a
 * feed after its first pass over the text c was compiled from. NULL (err:
 * exit 2) when a memory's allocator plans ahead (the lifetimes it plans
 * from are not in the file) or the model lacks one of its routes. */
engine_feed *engine_feed_from_compiled(const strata_hw *hw, engine_compiled *c, engine_memories *ms,
                                       bool keep_labels, size_t queue_memory, GError **err);
/* The ops the first pass read (all the second pass will hand out). */
uint64_t engine_feed_op_count(const engine_feed *f);
/* Progress is drawn at most once every ENGINE_PROGRESS_EVERY ops (and at
 * the first), so that a run reads the clock on few of its ops. */
#define ENGINE_PROGRESS_EVERY 4096u
uint32_t engine_feed_stream_count(const engine_feed *f);
const char *engine_feed_stream_name(const engine_feed *f, uint32_t stream);
uint32_t engine_feed_event_count(const engine_feed *f);
/* The binder (its memories, units and routes; its checker is the second
 * pass's, empty when the tape is replayed). */
const strata_binder *engine_feed_binder(const engine_feed *f);
/* The trace's `option mesh=` value, or NULL. */
const char *engine_feed_mesh(const engine_feed *f);
/* The next op of `stream`, reading ahead in file order as needed: 1 op, 0 end, -1 error. */
int engine_feed_next(engine_feed *f, uint32_t stream, engine_op **op, GError **err);
/* Gives an executed op back (recycled: no allocation per op in steady state). */
void engine_feed_release(engine_feed *f, engine_op *op);
/* The buffer with this id (registered at its alloc, dropped by engine_feed_forget). */
engine_buffer *engine_feed_buffer(engine_feed *f, uint64_t id);
void engine_feed_forget(engine_feed *f, uint64_t id);

#endif
