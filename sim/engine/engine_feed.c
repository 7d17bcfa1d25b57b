/*
 * engine_feed.c: the engine's two passes over the op stream.
 *
 * The first pass reads the source through a binder (bind/bind.h): the
 * checker, and every name resolved against the hardware model (memories of
 * allocs, compute units, a route for every copy) to dense indices.
 *
 * First pass (engine_feed_new): collects the streams and events and the
 * lifetimes of buffers in memories whose allocator plans ahead, and keeps
 * each bound op on a tape (engine_tape.h) within a budget of bytes. The
 * tape keeps at most tape_memory bytes of its chunks in memory: past that,
 * its chunks go to a temporary file (its pool's spill, engine_spill.h) and
 * the second pass reads them back in order, so memory does not grow with
 * the program. When the tape outgrows its budget (memory and file), it is
 * dropped and the second pass reads the source again. Either way the
 * binder rewinds, which frees the first pass's checker (its live buffers
 * at the end of the trace). A failed write or read of the file is an
 * error (STRATA_ERROR_IO), never a silent change of results.
 *
 * Second pass (engine_feed_next): lazy. When a stream's actor needs its next op
 * and its queue is empty, bound ops are taken in file order (replayed from
 * the tape, else read again), and appended to their streams' queues until
 * one is the asking stream's, which takes it straight; each op taken reaches the
 * memories' ledgers then, in file order, and an alloc registers its buffer.
 * A queue holds its first ops whole, as the engine_ops its stream will
 * take (finished at once: no second encoding and decoding), while the
 * feed holds fewer than READY_MAX such ops in all; past that, its ops go
 * to a tape of its own (engine_tape.h, a few bytes an op: a pod's stream
 * far behind in file order makes the others' ops wait there, where they
 * took a few hundred bytes each as engine_ops), and become engine_ops when
 * the stream takes them. The queues' tapes share a pool that keeps at most
 * queue_memory bytes of their chunks in memory; past it, a queue's full
 * chunks after its first go to the pool's temporary file and come back in
 * order when its stream gets there (engine_tape.h's spill). Beyond the
 * first pass's tape (at most tape_memory in memory), memory is then
 * bounded by the streams' state (a queue's first and last chunks, the
 * READY_MAX whole ops), neither by how far streams drift apart in file
 * order nor by the length of the trace: the drift and the program's
 * length wait on disk.
 *
 * Invariants:
 *  1. ops reach each queue in file order, so each stream runs in program order;
 *  2. a buffer is registered when its alloc is read and forgotten when its
 *     free has executed; every op that names it is read in between;
 *  3. op indices count non-option ops from 0, as the binder does;
 *  4. a queue's whole ops all come before the ops on its tape (an op is
 *     queued whole only while the tape holds none), and the feed holds at
 *     most READY_MAX whole ops in all queues.
 */
#include "engine/engine_internal.h"
#include <assert.h>
#include "core/error.h"
#include "core/idmap.h"
#include <string.h>

/* A stream's ops read ahead, in file order (invariant 1): first those held
 * whole (finished engine_ops, linked through next), then those on its
 * tape (compact; NULL until one). */
typedef struct stream_queue {
    engine_op *head, *tail;
    engine_tape *compact;
    uint64_t n_compact; /* ops on compact */
} stream_queue;

struct engine_feed {
    const strata_hw *hw;
    engine_kernel_costs *kernel_costs; /* the costs of the kernels met so far */
    const strata_source *src;  /* the binder's: the expansion whose side table says each op's step */
    strata_binder *binder;
    engine_memories *ms;
    engine_quotient *quotient; /* with classes: the senders noted (engine_quotient.h); NULL otherwise */
    GPtrArray *stream_names;   /* char * (owned), by stream index */
    uint32_t n_events;
    strata_idmap *buffers;     /* id -> engine_buffer * (owned) */
    stream_queue *queues;      /* per stream: its ops read ahead */
    uint32_t n_queues;
    uint32_t n_ready;          /* whole ops queued, in all queues (invariant 4) */
    engine_tape_pool *queue_chunks; /* the queues' spare chunks */
    bool eof;
    bool keep_labels;
    bool spmd;                 /* src is an SPMD expansion: its side table speaks of each op */
    engine_op *spare;          /* released ops, reused by make_op */
    engine_buffer *spare_buffers; /* forgotten buffers, reused by new_buffer */
    engine_tape *tape;         /* the first pass's ops, or NULL: read the source again */
    engine_tape_pool *tape_chunks; /* the tape's: its memory bound and its file; NULL with it */
    GArray *donated;           /* uint64_t: extra_of()'s donated ids */
    char *mesh;                /* the trace's `option mesh=`, or NULL */
    GPtrArray *options;        /* char *: the trace's options, key, value, key, value... (a compiled trace's) */
    strata_source *own_src;    /* a compiled trace's: its options alone (src), owned */
    uint64_t taken;            /* ops the second pass took (invariant 3) */
    uint64_t n_ops;            /* ops the first pass read */
};

/* The most ops held whole in all queues: a few hundred bytes each, so
 * at most 264 KiB (sizeof(engine_op) is 264 bytes here); past it,
 * the queues' tapes. Streams that keep step (most traces' case) queue a
 * few ops at a time, all whole. */
#define READY_MAX 1024u

#define ID_KEY(id) GSIZE_TO_POINTER((gsize)(id))

/* Bytes of a queue's chunks: a queue holds one while it holds an op, and
 * a pod has thousands of streams. A queue that empties gives its chunk
 * back to a pool of at most QUEUE_SPARE_CHUNKS spares, which the next
 * queue to fill takes (a stream's queue often holds one op at a time:
 * without the pool, one allocation and one free a queued op). */
#define QUEUE_CHUNK 1024u
#define QUEUE_SPARE_CHUNKS 64u

/* A planning allocator places buffers by their program-order lifetimes,
 * which are the lifetimes that occur only when one stream allocates and frees
 * in the memory: streams running ahead of each other would make buffers live
 * together that the plan lets share addresses. Such a trace is refused. */
static bool plan_one_stream(engine_feed *f, engine_memory *mem, const strata_bound_op *op, GError **err)
{
    if (strata_allocator_one_program(strata_placement_allocator(mem->place)))
        return true; /* one XLA program: its op order is the schedule */
    if (mem->plan_stream < 0)
        mem->plan_stream = op->stream;
    if (mem->plan_stream == (int64_t)op->stream)
        return true;
    const strata_checker *c = strata_binder_checker(f->binder);
    char *planned = strata_checker_quote(c, strata_checker_stream_name(c, (uint32_t)mem->plan_stream));
    char *got = strata_checker_quote(c, strata_checker_stream_name(c, op->stream));
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "%s:%" G_GUINT64_FORMAT ": the %s allocator of memory '%s' plans with program-order "
                "lifetimes, which hold only when one stream allocates there; expected stream %s, got %s "
                "(use another allocator, or `strata alloc` for the untimed replay)",
                strata_binder_origin(f->binder), op->line,
                strata_allocator_name(strata_placement_allocator(mem->place)), mem->spec->name, planned, got);
    g_free(planned);
    g_free(got);
    return false;
}

static bool first_pass_op(engine_feed *f, const strata_bound_op *op, GError **err)
{
    if (op->index == 0 && !engine_memories_apply_options(f->ms, strata_binder_checker(f->binder), err))
        return false;
    if ((op->kind != STRATA_OP_ALLOC && op->kind != STRATA_OP_FREE) || op->memory >= f->ms->n)
        return true;
    engine_memory *mem = &f->ms->mem[op->memory];
    if (!strata_placement_needs_plan(mem->place))
        return true;
    if (op->kind == STRATA_OP_FREE) {
        strata_placement_note_free(mem->place, op->buf, op->index, op->op->has_at, op->op->at_s);
        return true;
    }
    if (!plan_one_stream(f, mem, op, err))
        return false;
    strata_placement_note_alloc(mem->place, op->buf, op->bytes, op->index, op->op->has_at, op->op->at_s);
    return true;
}

/* What the second pass needs of an op read from the binder beyond its
 * numbers: its name when kept, an alloc's shape, a compute's donations,
 * and its entry in the SPMD expansion's side table. */
static void extra_of(engine_feed *f, const strata_bound_op *op, engine_op_extra *x)
{
    const strata_op *in = op->op;
    *x = (engine_op_extra){0};
    if (op->kind == STRATA_OP_ALLOC || f->keep_labels)
        x->name = in->name;
    if (op->kind == STRATA_OP_ALLOC && in->n_dims == 2) {
        x->rows = in->shape[0];
        x->cols = in->shape[1];
    }
    if (op->kind == STRATA_OP_COMPUTE && in->n_donates > 0) {
        g_array_set_size(f->donated, in->n_donates);
        x->donated = (const uint64_t *)(void *)f->donated->data;
        x->n_donated = strata_ledger_donated(in, op->ins, (uint64_t *)(void *)f->donated->data);
    }
    /* the binder has just read op from the source: the side table speaks of it */
    strata_spmd_step step = f->spmd ? strata_spmd_step_of(f->src) : (strata_spmd_step){.coll = STRATA_COLL_NONE};
    x->coll = step.coll;
    x->phase = step.phase;
    x->from = step.from;
    x->lead_ps = step.lead_ps;
    if (op->kind == STRATA_OP_COMPUTE && in->kernel) /* the others have none: no call per op */
        engine_kernel_extra(f->kernel_costs, op, x);
}

/* A failed write or read of the temporary file of `pool` at the op of
 * this line (0: at the op_number-th op, 1-based): the error (exit 2: the
 * user can point TMPDIR elsewhere) and -1. */
static int spill_failed(const engine_feed *f, const engine_tape_pool *pool, uint64_t line, uint64_t op_number,
                        GError **err)
{
    char *where = line ? g_strdup_printf("%s:%" G_GUINT64_FORMAT, strata_binder_origin(f->binder), line)
                       : g_strdup_printf("%s: op %" G_GUINT64_FORMAT, strata_binder_origin(f->binder), op_number);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: %s; set TMPDIR to a writable folder with room", where,
                engine_tape_pool_failure(pool));
    g_free(where);
    return -1;
}

/* Keeps op on the tape; past its budget (or for an op it cannot hold),
 * drops the tape. False when the tape's file failed. */
static bool tape_op(engine_feed *f, const strata_bound_op *op, GError **err)
{
    const strata_op *in = op->op;
    /* An op whose extra is a name at most (no step of an expansion, no 2-D
     * shape, donation or kernel: what extra_of() tests) goes to the tape
     * without an extra built and tested field by field, as most ops do. */
    bool plain = !f->spmd && (op->kind != STRATA_OP_ALLOC || in->n_dims != 2) &&
                 (op->kind != STRATA_OP_COMPUTE || (in->n_donates == 0 && !in->kernel));
    bool put;
    if (plain) {
        put = engine_tape_put_named(f->tape, op, op->kind == STRATA_OP_ALLOC || f->keep_labels ? in->name : NULL);
    } else {
        engine_op_extra x;
        extra_of(f, op, &x);
        put = engine_tape_put(f->tape, op, &x);
    }
    if (put)
        return true;
    if (engine_tape_pool_failure(f->tape_chunks)) {
        spill_failed(f, f->tape_chunks, op->line, op->index + 1, err);
        return false;
    }
    engine_tape_free(f->tape);
    engine_tape_pool_free(f->tape_chunks); /* and its file, whatever it held */
    f->tape = NULL;
    f->tape_chunks = NULL;
    return true;
}

/* What the first pass leaves for the second: streams, events, the ledgers'
 * options, the planning allocators' plans. */
static bool first_pass_end(engine_feed *f, GError **err)
{
    const strata_checker *c = strata_binder_checker(f->binder);
    engine_memories *ms = f->ms;
    f->n_queues = strata_checker_stream_count(c);
    f->queues = g_new0(stream_queue, f->n_queues);
    for (uint32_t s = 0; s < f->n_queues; s++)
        g_ptr_array_add(f->stream_names, g_strdup(strata_checker_stream_name(c, s)));
    f->n_events = strata_checker_event_count(c);
    f->mesh = g_strdup(strata_checker_option(c, "mesh"));
    const GPtrArray *keys = strata_checker_option_keys(c);
    for (guint k = 0; keys && k < keys->len; k++) {
        const char *key = g_ptr_array_index(keys, k);
        g_ptr_array_add(f->options, g_strdup(key));
        g_ptr_array_add(f->options, g_strdup(strata_checker_option(c, key)));
    }
    for (uint32_t m = 0; m < ms->n; m++)
        strata_ledger_read_options(strata_placement_ledger(ms->mem[m].place), c, ms->mem[m].spec->name,
                                   m == strata_hw_default_memory(f->hw));
    for (uint32_t m = 0; m < ms->n; m++)
        if (!strata_placement_plan(ms->mem[m].place, NULL, err))
            return false;
    return true;
}

/* With classes: a copy from another device is a sender's (engine_quotient.h). */
static bool note_sender(engine_feed *f, const strata_bound_op *op, GError **err)
{
    if (!f->quotient || op->kind != STRATA_OP_COPY)
        return true; /* before the side table: most ops end here */
    uint32_t from = strata_spmd_step_of(f->src).from;
    if (from == 0 || from - 1 == op->device)
        return true;
    return engine_quotient_note(f->quotient, from - 1, op->src_memory, op->dst_memory, err);
}

/* The tables a feed fills as it reads, whether from the text or from a
 * compiled trace: stream names, options, the live buffers' ids, the
 * queues' chunk pool and the donated ids. */
static void feed_tables_new(engine_feed *f, size_t queue_memory)
{
    f->stream_names = g_ptr_array_new_with_free_func(g_free);
    f->options = g_ptr_array_new_with_free_func(g_free);
    f->buffers = strata_idmap_new();
    f->queue_chunks = engine_tape_pool_new(QUEUE_CHUNK, QUEUE_SPARE_CHUNKS, queue_memory, "queued ops");
    f->donated = g_array_new(FALSE, FALSE, sizeof(uint64_t));
}

engine_feed *engine_feed_new(const strata_hw *hw, strata_source *src, engine_memories *ms, engine_quotient *q,
                             bool keep_labels, size_t tape_budget, size_t tape_memory, size_t queue_memory,
                             strata_progress *progress, GError **err)
{
    engine_feed *f = g_new0(engine_feed, 1);
    f->hw = hw;
    f->kernel_costs = engine_kernel_costs_new(hw);
    f->src = src;
    f->spmd = strata_spmd_is_expansion(src);
    strata_bind_options opt = {.hw = hw};
    f->binder = strata_binder_new(src, &opt);
    f->ms = ms;
    f->quotient = q;
    f->keep_labels = keep_labels;
    feed_tables_new(f, queue_memory);
    /* one spare: the replay reads its chunks on file back into it, one by one */
    f->tape_chunks = engine_tape_pool_new(ENGINE_TAPE_CHUNK, 1, tape_memory, "first pass's tape");
    f->tape = engine_tape_new_sized(tape_budget, ENGINE_TAPE_CHUNK, f->tape_chunks);

    bool ok = strata_binder_rewind(f->binder, err);
    const strata_bound_op *op = NULL;
    int got = 0;
    while (ok && (got = strata_binder_next(f->binder, &op, err)) == 1) {
        assert(op->index + 1 == strata_binder_op_count(f->binder)); /* invariant 3 */
        ok = first_pass_op(f, op, err) && note_sender(f, op, err);
        if (ok && f->tape)
            ok = tape_op(f, op, err);
        if (op->index % ENGINE_PROGRESS_EVERY == 0)
            strata_progress_count(progress, "run: reading", op->index + 1, 0, "ops", NULL);
    }
    f->n_ops = strata_binder_op_count(f->binder);
    ok = ok && got == 0;
    ok = ok && first_pass_end(f, err);
    /* Even when the tape holds every op: the rewind drops the first pass's
     * checker, whose state holds every buffer still live at the end. */
    ok = ok && strata_binder_rewind(f->binder, err);
    if (!ok) {
        engine_feed_free(f);
        return NULL;
    }
    return f;
}

engine_compiled *engine_feed_compiled(const engine_feed *f, GError **err)
{
    if (!f->tape) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: too long to compile: its bound ops pass the tape's budget of bytes",
                    strata_binder_origin(f->binder));
        return NULL;
    }
    engine_compiled *c = engine_compiled_new();
    c->hw_fingerprint = g_strdup(strata_hw_fingerprint(f->hw));
    c->hw_name = g_strdup(strata_hw_name(f->hw));
    c->origin = g_strdup(strata_binder_origin(f->binder));
    c->n_ops = f->n_ops;
    c->n_events = f->n_events;
    for (guint i = 0; i < f->options->len; i++)
        g_ptr_array_add(c->options, g_strdup(g_ptr_array_index(f->options, i)));
    for (uint32_t s = 0; s < engine_feed_stream_count(f); s++) {
        g_ptr_array_add(c->streams, g_strdup(engine_feed_stream_name(f, s)));
        uint32_t device = strata_binder_stream_device(f->binder, s);
        g_array_append_val(c->stream_devices, device);
    }
    for (uint32_t r = 0; r < strata_binder_route_count(f->binder); r++) {
        uint32_t pair[2];
        strata_binder_route_pair(f->binder, r, &pair[0], &pair[1]);
        g_array_append_vals(c->routes, pair, 2);
    }
    c->tape = f->tape;
    return c;
}

engine_feed *engine_feed_from_compiled(const strata_hw *hw, engine_compiled *c, engine_memories *ms,
                                       bool keep_labels, size_t queue_memory, GError **err)
{
    engine_feed *f = g_new0(engine_feed, 1);
    f->hw = hw;
    f->kernel_costs = engine_kernel_costs_new(hw);
    /* the binder reads the trace's options alone: its checker holds them for
     * the allocators and ledgers, as after the text's first pass */
    strata_op *opts = g_new0(strata_op, c->options->len / 2 + 1);
    for (guint i = 0; i + 1 < c->options->len; i += 2)
        opts[i / 2] = strata_op_make_option(g_ptr_array_index(c->options, i), g_ptr_array_index(c->options, i + 1));
    f->own_src = strata_source_from_array(opts, c->options->len / 2, c->origin);
    g_free(opts);
    f->src = f->own_src;
    strata_bind_options opt = {.hw = hw};
    f->binder = strata_binder_new(f->own_src, &opt);
    f->ms = ms;
    f->keep_labels = keep_labels;
    feed_tables_new(f, queue_memory);
    f->tape = c->tape;
    c->tape = NULL;
    f->n_ops = c->n_ops;

    const strata_bound_op *none = NULL;
    bool ok = strata_binder_rewind(f->binder, err);
    int got = ok ? strata_binder_next(f->binder, &none, err) : -1; /* options only: 0 */
    if (got == 1)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "%s: an op among a compiled trace's options", c->path);
    ok = got == 0;
    /* as first_pass_op() at the first op */
    ok = ok && (f->n_ops == 0 || engine_memories_apply_options(ms, strata_binder_checker(f->binder), err));
    for (uint32_t m = 0; ok && m < ms->n; m++)
        if (strata_placement_needs_plan(ms->mem[m].place)) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s (compiled from %s): the %s allocator of memory '%s' plans from the trace's lifetimes, "
                        "which a compiled trace does not hold; run the text trace, or use another allocator",
                        c->path, c->origin, strata_allocator_name(strata_placement_allocator(ms->mem[m].place)),
                        ms->mem[m].spec->name);
            ok = false;
        }
    for (guint r = 0; ok && r + 1 < c->routes->len; r += 2) {
        GError *local = NULL;
        ok = strata_binder_restore_route(f->binder, g_array_index(c->routes, uint32_t, r),
                                         g_array_index(c->routes, uint32_t, r + 1), &local);
        if (!ok) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s (compiled from %s): route %u: %s", c->path,
                        c->origin, r / 2, local ? local->message : "memories out of the model");
            g_clear_error(&local);
        }
    }
    for (guint s = 0; ok && s < c->streams->len; s++) {
        strata_binder_restore_stream_device(f->binder, s, g_array_index(c->stream_devices, uint32_t, s));
        g_ptr_array_add(f->stream_names, g_strdup(g_ptr_array_index(c->streams, s)));
    }
    if (ok) { /* as first_pass_end(), its streams and events the file's */
        const strata_checker *ch = strata_binder_checker(f->binder);
        f->n_queues = c->streams->len;
        f->queues = g_new0(stream_queue, f->n_queues);
        f->n_events = c->n_events;
        f->mesh = g_strdup(strata_checker_option(ch, "mesh"));
        for (uint32_t m = 0; m < ms->n; m++)
            strata_ledger_read_options(strata_placement_ledger(ms->mem[m].place), ch, ms->mem[m].spec->name,
                                       m == strata_hw_default_memory(hw));
        for (uint32_t m = 0; ok && m < ms->n; m++)
            ok = strata_placement_plan(ms->mem[m].place, NULL, err);
    }
    ok = ok && strata_binder_rewind(f->binder, err);
    if (!ok) {
        engine_feed_free(f);
        return NULL;
    }
    return f;
}

static void buffer_free(engine_buffer *b)
{
    g_free(b->name);
    g_free(b);
}

/* Copies name into storage of *cap bytes, grown when too small. */
static char *keep_name(char *storage, size_t *cap, const char *name)
{
    size_t len = strlen(name) + 1;
    if (len > *cap) {
        *cap = MAX(len, 32);
        storage = g_realloc(storage, *cap);
    }
    memcpy(storage, name, len);
    return storage;
}

/* A buffer for an alloc: a forgotten one when there is one (with its name's
 * storage), so that a run allocates nothing per alloc in steady state. */
static engine_buffer *new_buffer(engine_feed *f, const char *name)
{
    engine_buffer *b = f->spare_buffers;
    char *storage = NULL;
    size_t cap = 0;
    if (b) {
        f->spare_buffers = b->next_spare;
        storage = b->name;
        cap = b->name_cap;
    } else {
        b = g_new(engine_buffer, 1);
    }
    storage = keep_name(storage, &cap, name);
    *b = (engine_buffer){.name = storage, .name_cap = cap};
    return b;
}

static void free_visit(uint64_t id, void *value, void *user)
{
    (void)id;
    (void)user;
    buffer_free(value);
}

static void op_free(engine_op *op)
{
    g_free(op->label_buf);
    g_free(op);
}

void engine_feed_release(engine_feed *f, engine_op *op)
{
    op->label = NULL;
    op->next = f->spare;
    f->spare = op;
}

void engine_feed_free(engine_feed *f)
{
    if (!f)
        return;
    while (f->spare) {
        engine_op *next = f->spare->next;
        op_free(f->spare);
        f->spare = next;
    }
    while (f->spare_buffers) {
        engine_buffer *next = f->spare_buffers->next_spare;
        buffer_free(f->spare_buffers);
        f->spare_buffers = next;
    }
    strata_idmap_foreach(f->buffers, free_visit, NULL);
    strata_idmap_free(f->buffers);
    for (uint32_t s = 0; s < f->n_queues; s++) {
        for (engine_op *e = f->queues[s].head, *next; e; e = next) {
            next = e->next;
            op_free(e);
        }
        engine_tape_free(f->queues[s].compact);
    }
    g_free(f->queues);
    engine_tape_pool_free(f->queue_chunks); /* after its tapes */
    engine_kernel_costs_free(f->kernel_costs);
    g_ptr_array_free(f->stream_names, TRUE);
    strata_binder_free(f->binder);
    engine_tape_free(f->tape);
    engine_tape_pool_free(f->tape_chunks); /* after its tape */
    g_array_unref(f->donated);
    g_free(f->mesh);
    g_ptr_array_free(f->options, TRUE);
    strata_source_free(f->own_src); /* after its binder */
    g_free(f);
}

uint32_t engine_feed_stream_count(const engine_feed *f)
{
    return f->stream_names->len;
}

const char *engine_feed_stream_name(const engine_feed *f, uint32_t stream)
{
    return g_ptr_array_index(f->stream_names, stream);
}

uint32_t engine_feed_event_count(const engine_feed *f)
{
    return f->n_events;
}

uint64_t engine_feed_op_count(const engine_feed *f)
{
    return f->n_ops;
}

const char *engine_feed_mesh(const engine_feed *f)
{
    return f->mesh;
}

const strata_binder *engine_feed_binder(const engine_feed *f)
{
    return f->binder;
}

engine_buffer *engine_feed_buffer(engine_feed *f, uint64_t id)
{
    return strata_idmap_get(f->buffers, id);
}

void engine_feed_forget(engine_feed *f, uint64_t id)
{
    engine_buffer *b = strata_idmap_take(f->buffers, id);
    if (b) {
        b->next_spare = f->spare_buffers;
        f->spare_buffers = b;
    }
}

/* A matmul on a unit with a systolic array of side `tile`: the array holds a
 * K x N weight tile, so K and N are padded up to multiples of the side (rows
 * of the left operand stream through and are not padded). Returns the factor
 * on its flops (1 unless the first two operands are M x K and K x N). */
static double tile_waste(uint64_t tile, const engine_buffer *a, const engine_buffer *b)
{
    if (tile == 0 || !a || !b || a->cols == 0 || b->cols == 0 || a->cols != b->rows)
        return 1.0;
    uint64_t k = a->cols, n = b->cols;
    uint64_t kp = (k + tile - 1) / tile * tile, np = (n + tile - 1) / tile * tile;
    return ((double)kp / (double)k) * ((double)np / (double)n);
}

/* What reading op in file order does beyond the ledgers: an alloc's
 * buffer registered, a tiled unit's padding on a compute's flops (its
 * operands' shapes are known then). */
static void read_in_order(engine_feed *f, strata_bound_op *op, const engine_op_extra *x)
{
    if (op->kind == STRATA_OP_ALLOC) {
        engine_buffer *b = new_buffer(f, x->name);
        b->id = op->buf;
        b->size = op->bytes;
        b->memory = op->memory;
        b->dtype = op->dtype;
        b->tag = op->tag;
        b->rows = x->rows;
        b->cols = x->cols;
        assert(!engine_feed_buffer(f, b->id)); /* invariant 2: registered once, at its alloc */
        strata_idmap_put(f->buffers, b->id, b);
    } else if (op->kind == STRATA_OP_COMPUTE && x->kernel) { /* its kernel's cost, engine_kernel.c */
        op->flops = x->kernel_flops;
        op->has_flops = true;
        op->bytes = x->kernel_bytes;
    } else if (op->kind == STRATA_OP_COMPUTE && op->unit != STRATA_BIND_NONE && op->n_ins >= 2) {
        op->flops *= tile_waste(strata_hw_compute(f->hw, op->unit)->tile, engine_feed_buffer(f, op->ins[0]),
                                engine_feed_buffer(f, op->ins[1]));
    }
}

/* Completes e, whose bound op its stream just took off its queue: its
 * collective and its phase (copied: the expansion's next step of the
 * collective may move its phases; a phase's index keeps its figures), its
 * label; then clears the pointers that are valid only until the next take
 * (inline in both callers: once an op). */
static inline __attribute__((always_inline)) void finish_op(engine_feed *f, engine_op *e, const engine_op_extra *x)
{
    strata_bound_op *op = &e->bound;
    /* strata_spmd_phase() has none for an op of no collective or of its one round */
    const strata_coll_phase *phase =
        x->coll != STRATA_COLL_NONE && x->phase != 0 ? strata_spmd_phase(f->src, x->coll, x->phase) : NULL;
    /* An op of no collective holds a zero phase (new ops are zeroed, and
     * this keeps it so): outside SPMD runs the phase is neither copied nor
     * cleared op by op. */
    if (phase)
        e->phase = *phase;
    else if (e->coll != STRATA_COLL_NONE)
        e->phase = (strata_coll_phase){0};
    e->coll = x->coll;
    assert(e->coll != STRATA_COLL_NONE || e->phase.rounds == 0); /* the zero phase of an op of no collective */
    e->from = x->from;
    e->lead_s = x->lead_ps ? (double)x->lead_ps * 1e-12 : 0.0; /* 0 but for an SPMD fence: no conversion */
    e->kernel_s = op->kind == STRATA_OP_COMPUTE && x->kernel ? x->kernel_s : 0;
    e->label = NULL;
    if (f->keep_labels && x->name)
        e->label = e->label_buf = keep_name(e->label_buf, &e->label_cap, x->name);
    e->next = NULL;
    op->op = NULL;
    op->ins = op->outs = NULL;
}

/* The next bound op of the second pass into *op, from the tape or read
 * again: 1, 0 end, -1 error. */
static int take_one(engine_feed *f, strata_bound_op *op, engine_op_extra *x, GError **err)
{
    if (f->tape) {
        int got = engine_tape_next(f->tape, op, x);
        return got >= 0 ? got : spill_failed(f, f->tape_chunks, 0, f->taken + 1, err);
    }
    const strata_bound_op *read = NULL;
    int got = strata_binder_next(f->binder, &read, err);
    if (got == 1) {
        *op = *read;
        extra_of(f, read, x);
    }
    return got;
}

/* Adds the memory holding buffer id to mems[0..*n) unless there (or none holds it). */
static void add_holder(engine_feed *f, uint64_t id, uint32_t *mems, uint32_t *n)
{
    const engine_buffer *b = engine_feed_buffer(f, id);
    if (!b)
        return;
    for (uint32_t i = 0; i < *n; i++)
        if (mems[i] == b->memory)
            return;
    mems[(*n)++] = b->memory;
}

/* The memories' ledgers learn op (engine_memories_program); once work has
 * begun, a copy or compute reaches only the memories of the buffers it
 * writes or donates, not every memory of a pod. */
static void program_op(engine_feed *f, const strata_bound_op *op, const engine_op_extra *x)
{
    if (!f->ms->work_seen || (op->kind != STRATA_OP_COPY && op->kind != STRATA_OP_COMPUTE)) {
        engine_memories_program(f->ms, op, x);
        return;
    }
    uint32_t small[8], n = 0, cap = (op->kind == STRATA_OP_COPY ? 1 : op->n_outs) + x->n_donated;
    uint32_t *mems = cap <= G_N_ELEMENTS(small) ? small : g_new(uint32_t, cap);
    if (op->kind == STRATA_OP_COPY) {
        add_holder(f, op->buf, mems, &n);
    } else {
        for (uint32_t i = 0; i < op->n_outs; i++)
            add_holder(f, op->outs[i], mems, &n);
        for (uint32_t i = 0; i < x->n_donated; i++)
            add_holder(f, x->donated[i], mems, &n);
    }
    engine_memories_work_at(f->ms, mems, n, op, x);
    if (mems != small)
        g_free(mems);
}

/* An engine_op to read into: a released one when there is one. */
static engine_op *new_op(engine_feed *f)
{
    engine_op *e = f->spare;
    if (!e)
        return g_new0(engine_op, 1);
    f->spare = e->next;
    return e;
}

/* Takes one op in file order into (*e)->bound and *x: when it is the
 * asking stream `want`'s (whose queue is then empty: invariant 1), it
 * stays there; else it goes to its stream's queue, whole (*e finished and
 * linked, and *e a new op) while invariant 4 allows, else compact
 * (engine_tape.h: a few bytes an op, where a whole one takes a few
 * hundred): 2 taken for want, 1 queued, 0 end, -1 error. */
static int read_one(engine_feed *f, uint32_t want, engine_op **e, engine_op_extra *x, GError **err)
{
    strata_bound_op *op = &(*e)->bound;
    int got = take_one(f, op, x, err);
    if (got == 1 && op->stream >= f->n_queues) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%" G_GUINT64_FORMAT ": the trace changed between the engine's two passes",
                    strata_binder_origin(f->binder), op->line);
        got = -1;
    }
    if (got <= 0) {
        if (got == 0)
            f->eof = true;
        return got;
    }
    assert(op->index == f->taken); /* invariant 3 */
    f->taken++;
    program_op(f, op, x);
    read_in_order(f, op, x);
    if (op->stream == want)
        return 2;
    stream_queue *sq = &f->queues[op->stream];
    if (sq->n_compact == 0 && f->n_ready < READY_MAX) { /* invariant 4 */
        engine_op *whole = *e;
        finish_op(f, whole, x);
        if (sq->tail)
            sq->tail->next = whole;
        else
            sq->head = whole;
        sq->tail = whole;
        f->n_ready++;
        *e = new_op(f);
        return 1;
    }
    if (!f->keep_labels)
        x->name = NULL; /* an alloc's is its buffer's, registered */
    if (!sq->compact)
        sq->compact = engine_tape_new_sized(SIZE_MAX, QUEUE_CHUNK, f->queue_chunks);
    if (!engine_tape_put(sq->compact, op, x)) { /* invariant 1: every bound op fits a tape, or its spill failed */
        if (engine_tape_pool_failure(f->queue_chunks))
            return spill_failed(f, f->queue_chunks, op->line, op->index + 1, err);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "%s:%" G_GUINT64_FORMAT ": an op the engine cannot queue",
                    strata_binder_origin(f->binder), op->line);
        return -1;
    }
    sq->n_compact++;
    return 1;
}

int engine_feed_next(engine_feed *f, uint32_t stream, engine_op **op, GError **err)
{
    stream_queue *sq = &f->queues[stream];
    engine_op *e = sq->head;
    if (e) { /* invariant 1: its queue first, whole ops before its tape's (invariant 4) */
        sq->head = e->next;
        if (!sq->head)
            sq->tail = NULL;
        e->next = NULL;
        f->n_ready--;
        *op = e;
        return 1;
    }
    e = new_op(f);
    engine_op_extra x;
    if (sq->n_compact > 0) {
        if (engine_tape_next(sq->compact, &e->bound, &x) != 1) { /* it holds n_compact ops */
            const char *why = engine_tape_pool_failure(f->queue_chunks);
            g_set_error(err, STRATA_ERROR, why ? STRATA_ERROR_IO : STRATA_ERROR_INTERNAL,
                        "%s: stream '%s': its ops queued in the temporary folder could not be read back (%s)",
                        strata_binder_origin(f->binder), engine_feed_stream_name(f, stream),
                        why ? why : "fewer than queued");
            engine_feed_release(f, e);
            return -1;
        }
        sq->n_compact--;
    } else { /* then file order */
        int got;
        while ((got = f->eof ? 0 : read_one(f, stream, &e, &x, err)) == 1)
            ;
        if (got <= 0) {
            engine_feed_release(f, e);
            return got;
        }
    }
    finish_op(f, e, &x);
    *op = e;
    return 1;
}
