/*
 * engine_tape.h: a compact record of the bound ops of the engine's first
 * pass, which the second pass replays instead of reading and binding the
 * source again.
 *
 * Each op is a kind byte, a mask of the fields that differ from what is
 * expected of it (a field is expected 0 or STRATA_BIND_NONE, the line and
 * index one more than the previous op's, an alloc's buffer id the next id),
 * and those fields as variable-length integers (buffer ids counted back from
 * the next id, so they stay small), doubles as raw bytes, the name as its
 * bytes and a NUL (engine_tape.c's TAPE_FIELDS lists the fields, one line
 * each). An op of a typical trace takes 5 to 25
 * bytes. Ops are appended to chunks of memory (no allocation per op); the
 * replay frees each chunk once it has passed it.
 *
 * A tape has a budget of bytes: a put that would exceed it, or an op the
 * tape cannot hold exactly, fails, and the caller reads its source again
 * instead (memory stays bounded for long streamed sources).
 *
 * A tape is also a queue: puts and nexts may interleave (the reader frees
 * each chunk once it has read past it, the writer starts a new one).
 *
 * Tapes sharing a pool may spill: while the chunks of the pool's tapes
 * take more memory than the pool allows, a tape's full last chunk (unless
 * it is its first, the one being replayed) is written to the pool's
 * temporary file (engine_spill.h) instead of being kept, and so are its
 * next ones until the replay has read them back, in order. Memory then
 * stays within the pool's bound plus two chunks a tape, however far a
 * reader lags behind its writer: the lag is on disk (the file starts over
 * once all it holds has been read back). The feed's queues share one such
 * pool; the first pass's tape has one of its own (engine_feed.c), so that
 * its length past the pool's bound waits on disk too.
 *
 * Invariants:
 *  1. engine_tape_next() gives back, in order, exactly the ops and extras
 *     put: every field of strata_bound_op but `op` (NULL), with ins and
 *     outs (and the extra's name and donated) pointing into the tape's own
 *     storage, valid until the next call;
 *  2. the bytes held (chunks and their headers) never exceed the budget.
 */
#ifndef STRATA_ENGINE_TAPE_H
#define STRATA_ENGINE_TAPE_H

#include "bind/bind.h"

/* What the second pass needs of an op beyond the bound op's numbers (which
 * the binder resolves but does not keep past the next read), and beyond
 * the op itself: the SPMD expansion's side table entry of a step of a
 * collective (spmd/spmd.h's strata_spmd_step), which the engine looks its
 * collective and phase up by. */
typedef struct engine_op_extra {
    const char *name;        /* the op's name when kept (an alloc's always), else NULL */
    uint64_t rows, cols;     /* ALLOC: its 2-D shape, 0 x 0 when it has none */
    const uint64_t *donated; /* COMPUTE: the ids of the in= that donate= names (strata_ledger_donated) */
    uint32_t n_donated;
    uint32_t coll, phase;    /* the step's collective (0: none) and phase (0: one round) */
    uint32_t from;           /* a copy's 1 + true source device (CLASSES), 0: none */
    uint64_t lead_ps;        /* a fence's lead (FAST: a record or wait that ends a paced phase together), 0: none */
    /* COMPUTE with kernel= on a unit: its kernel cost (engine_kernel.c), which
     * replaces the bound op's flops and bytes; kernel_s waits after both */
    bool kernel;
    double kernel_flops, kernel_s;
    uint64_t kernel_bytes;
} engine_op_extra;

typedef struct engine_tape engine_tape;

/* The chunk of engine_tape_new()'s tapes. */
#define ENGINE_TAPE_CHUNK ((size_t)256 * 1024)

engine_tape *engine_tape_new(size_t budget);
/* The same, in chunks of `chunk` bytes (engine_tape_new: 256 KiB): a tape
 * used as a queue (put and next interleaved, as the feed's queue of one
 * stream is) holds at least one chunk while it holds an op. With a pool
 * (NULL: none), its chunks of the pool's size come from the pool and go
 * back to it once replayed: a queue that empties and fills again, op by
 * op, then allocates nothing (one chunk a queued op, otherwise). */
typedef struct engine_tape_pool engine_tape_pool;
engine_tape *engine_tape_new_sized(size_t budget, size_t chunk, engine_tape_pool *pool);
void engine_tape_free(engine_tape *t); /* NULL ok */
/* Spare chunks of `chunk` bytes shared by the tapes made with it, at most
 * `keep` of them held (the rest freed): memory stays bounded by the ops
 * queued, however many tapes. Past `resident_max` bytes of chunks held by
 * its tapes (0: no bound), their full chunks spill to a file (above);
 * `what` names what they hold in a failure's message (static text). Free
 * it after its tapes. */
engine_tape_pool *engine_tape_pool_new(size_t chunk, unsigned keep, size_t resident_max, const char *what);
void engine_tape_pool_free(engine_tape_pool *pool); /* NULL ok */
uint64_t engine_tape_pool_spilled(const engine_tape_pool *pool); /* bytes written to its file so far */
/* the disk its file takes now (engine_spill.h's invariant 4: it shrinks as the file is read back) */
uint64_t engine_tape_pool_file_allocated(const engine_tape_pool *pool);
/* NULL (pool NULL, or its file never failed); else why a put or a next of
 * one of its tapes failed on the file (engine_spill_failure). */
const char *engine_tape_pool_failure(const engine_tape_pool *pool);
/* Appends op (the bound op of the first pass, read in file order) and x.
 * False when the budget would be exceeded, the op cannot be held or a
 * spill failed (engine_tape_pool_failure says): the tape is then unusable
 * and should be freed. */
bool engine_tape_put(engine_tape *t, const strata_bound_op *op, const engine_op_extra *x);
/* engine_tape_put(t, op, &x) with x = {.name = name} (every other field of
 * the extra at its default, as extra_of() leaves an op of no collective,
 * shape, donation or kernel): the same bytes, the extra's fields not
 * tested op by op. */
bool engine_tape_put_named(engine_tape *t, const strata_bound_op *op, const char *name);
/* The next op in the order put: 1, 0 at the end, -1 when a spilled chunk
 * cannot be read back (the tape is then unusable). */
int engine_tape_next(engine_tape *t, strata_bound_op *op, engine_op_extra *x);
size_t engine_tape_bytes(const engine_tape *t); /* held so far */

#endif
