/*
 * engine_feed.c: the engine's two passes over the op stream.
 *
 * First pass (engine_feed_new): every op goes through a checker (trace/check.h),
 * and the engine's own checks that need the hardware model: memories of allocs,
 * compute units, a route for every copy. It collects the streams and events,
 * the lifetimes of buffers in memories whose allocator plans ahead, the bytes
 * live at the start per memory (allocated before the first copy or compute, in
 * file order) and the buffers never freed (outputs). Then it rewinds.
 *
 * Second pass (engine_feed_next): lazy. When a stream's actor needs its next op
 * and its queue is empty, ops are read in file order through a fresh checker,
 * resolved to numbers (engine_op) and appended to their streams' queues until
 * one lands in the asking stream's queue. Memory is bounded by how far streams
 * drift apart, never by the length of the trace.
 *
 * Invariants:
 *  1. ops reach each queue in file order, so each stream runs in program order;
 *  2. a buffer is registered when its alloc is read and forgotten when its
 *     free has executed; every op that names it is read in between;
 *  3. op indices count non-option ops from 0, as the checker does.
 */
#include "engine/engine_internal.h"
#include "core/error.h"
#include "policy/policy.h"
#include <string.h>

struct engine_feed {
    const strata_hw *hw;
    strata_source *src;
    engine_memories *ms;
    strata_checker *checker;   /* second pass */
    GPtrArray *stream_names;   /* char * (owned), by stream index */
    uint32_t n_events;
    uint64_t n_ops;
    uint64_t first_work;       /* index of the first copy or compute; UINT64_MAX when none */
    GHashTable *outputs;       /* buffer ids never freed (set) */
    GHashTable *buffers;       /* id -> engine_buffer * (owned) */
    GPtrArray *heads, *tails;  /* per stream: engine_op * queue */
    uint64_t next_index;
    bool eof;
    bool keep_labels;
    engine_op *spare;          /* released ops, reused by make_op */
};

#define ID_KEY(id) GSIZE_TO_POINTER((gsize)(id))

static char *memory_names(const strata_hw *hw)
{
    GString *s = g_string_new(NULL);
    for (uint32_t i = 0; i < strata_hw_memory_count(hw); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", strata_hw_memory(hw, i)->name);
    return g_string_free(s, FALSE);
}

static char *unit_names(const strata_hw *hw)
{
    GString *s = g_string_new(NULL);
    for (uint32_t i = 0; i < strata_hw_compute_count(hw); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", strata_hw_compute(hw, i)->name);
    return g_string_free(s, FALSE);
}

static bool fail_at(GError **err, const strata_source *src, const strata_op *op, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

static bool fail_at(GError **err, const strata_source *src, const strata_op *op, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s:%" G_GUINT64_FORMAT ": %s",
                strata_source_origin(src), op->line, msg);
    g_free(msg);
    return false;
}

/* Memory index of an alloc or release, or -1 with err. */
static int resolve_memory(const strata_hw *hw, const strata_source *src, const strata_op *op, GError **err)
{
    if (!op->memory)
        return (int)strata_hw_default_memory(hw);
    int m = strata_hw_memory_index(hw, op->memory);
    if (m < 0) {
        char *known = memory_names(hw);
        fail_at(err, src, op, "unknown memory '%s' in hardware '%s'; expected one of: %s", op->memory,
                strata_hw_name(hw), known);
        g_free(known);
    }
    return m;
}

/* Compute unit of a compute op; ENGINE_NONE (no error) when the hardware has
 * none and the op has time=; -1 with err otherwise. */
static int64_t resolve_unit(const strata_hw *hw, const strata_source *src, const strata_op *op, GError **err)
{
    if (strata_hw_compute_count(hw) == 0) {
        if (op->has_time && !op->memory)
            return ENGINE_NONE;
        fail_at(err, src, op, "compute '%s' needs a compute unit, but hardware '%s' has none "
                "(give time= or add a [compute NAME] group)", op->name, strata_hw_name(hw));
        return -1;
    }
    int u = strata_hw_compute_index(hw, op->memory);
    if (u < 0) {
        char *known = unit_names(hw);
        fail_at(err, src, op, "unknown compute unit '%s' in hardware '%s'; expected one of: %s",
                op->memory, strata_hw_name(hw), known);
        g_free(known);
    }
    return u;
}

/* Memory index of a live buffer, from the checker (NULL memory = default). */
static int checker_buffer_memory(const strata_hw *hw, const strata_checker *c, uint64_t id)
{
    uint64_t size = 0;
    const char *memory = NULL;
    if (!strata_checker_buffer(c, id, &size, &memory))
        return -1;
    return memory ? strata_hw_memory_index(hw, memory) : (int)strata_hw_default_memory(hw);
}

typedef struct first_pass {
    GHashTable *lifetime_at;  /* id -> memory << 48 | (index+1) into its memory's lifetimes */
    GHashTable *arguments;    /* id -> memory+1, before the first copy/compute */
} first_pass;

static bool first_pass_op(engine_feed *f, first_pass *p, strata_checker *c, const strata_op *op,
                          GError **err)
{
    strata_op_refs refs;
    if (!strata_checker_feed(c, op, &refs, err))
        return false;
    if (op->kind == STRATA_OP_OPTION)
        return true;
    if (f->n_ops == 0 && !engine_memories_apply_options(f->ms, c, err))
        return false;
    uint64_t index = f->n_ops++;
    switch (op->kind) {
    case STRATA_OP_ALLOC: {
        int m = resolve_memory(f->hw, f->src, op, err);
        if (m < 0)
            return false;
        engine_memory *mem = &f->ms->mem[m];
        if (mem->lifetimes) {
            strata_lifetime l = strata_lifetime_open(refs.buf, op->size, index, op->has_at, op->at_s);
            g_array_append_val(mem->lifetimes, l);
            /* memory in the top 16 bits, index + 1 below */
            gsize at = ((gsize)m << 48) | (gsize)mem->lifetimes->len;
            g_hash_table_insert(p->lifetime_at, ID_KEY(refs.buf), GSIZE_TO_POINTER(at));
        }
        if (f->first_work == UINT64_MAX) {
            mem->argument_bytes += op->size;
            g_hash_table_insert(p->arguments, ID_KEY(refs.buf), GSIZE_TO_POINTER((gsize)m + 1));
        }
        break;
    }
    case STRATA_OP_FREE: {
        gpointer at = NULL;
        if (g_hash_table_lookup_extended(p->lifetime_at, ID_KEY(refs.buf), NULL, &at)) {
            gsize packed = GPOINTER_TO_SIZE(at);
            GArray *lt = f->ms->mem[packed >> 48].lifetimes;
            strata_lifetime_close(
                &g_array_index(lt, strata_lifetime, (packed & ((G_GUINT64_CONSTANT(1) << 48) - 1)) - 1),
                index, op->has_at, op->at_s);
            g_hash_table_remove(p->lifetime_at, ID_KEY(refs.buf));
        }
        gpointer mem = g_hash_table_lookup(p->arguments, ID_KEY(refs.buf));
        if (mem && f->first_work == UINT64_MAX) {
            f->ms->mem[GPOINTER_TO_SIZE(mem) - 1].argument_bytes -= refs.bytes;
            g_hash_table_remove(p->arguments, ID_KEY(refs.buf));
        }
        break;
    }
    case STRATA_OP_COPY: {
        if (f->first_work == UINT64_MAX)
            f->first_work = index;
        int a = checker_buffer_memory(f->hw, c, refs.src);
        int b = checker_buffer_memory(f->hw, c, refs.buf);
        if (a < 0 || b < 0)
            return fail_at(err, f->src, op, "copy between buffers of unknown memories");
        const strata_hop *hops = NULL;
        uint32_t n = 0;
        GError *local = NULL;
        if (a != b && !strata_hw_route(f->hw, (uint32_t)a, (uint32_t)b, &hops, &n, &local)) {
            fail_at(err, f->src, op, "copy %s <- %s: %s", op->name, op->src, local->message);
            g_clear_error(&local);
            return false;
        }
        break;
    }
    case STRATA_OP_COMPUTE:
        if (f->first_work == UINT64_MAX)
            f->first_work = index;
        if (resolve_unit(f->hw, f->src, op, err) < 0)
            return false;
        break;
    case STRATA_OP_RELEASE:
        if (op->memory && resolve_memory(f->hw, f->src, op, err) < 0)
            return false;
        break;
    default:
        break;
    }
    return true;
}

engine_feed *engine_feed_new(const strata_hw *hw, strata_source *src, engine_memories *ms, GError **err)
{
    engine_feed *f = g_new0(engine_feed, 1);
    f->hw = hw;
    f->src = src;
    f->ms = ms;
    f->first_work = UINT64_MAX;
    f->stream_names = g_ptr_array_new_with_free_func(g_free);
    f->outputs = g_hash_table_new(g_direct_hash, g_direct_equal);
    f->buffers = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, NULL);
    f->heads = g_ptr_array_new();
    f->tails = g_ptr_array_new();

    strata_checker *c = strata_checker_new(strata_source_origin(src));
    first_pass p = {g_hash_table_new(g_direct_hash, g_direct_equal),
                    g_hash_table_new(g_direct_hash, g_direct_equal)};
    bool ok = strata_source_rewind(src, err);
    while (ok) {
        const strata_op *op = NULL;
        int got = strata_source_next(src, &op, err);
        if (got < 0)
            ok = false;
        if (got <= 0)
            break;
        ok = first_pass_op(f, &p, c, op, err);
    }
    g_hash_table_destroy(p.lifetime_at);
    g_hash_table_destroy(p.arguments);
    if (ok) {
        for (uint32_t s = 0; s < strata_checker_stream_count(c); s++) {
            g_ptr_array_add(f->stream_names, g_strdup(strata_checker_stream_name(c, s)));
            g_ptr_array_add(f->heads, NULL);
            g_ptr_array_add(f->tails, NULL);
        }
        f->n_events = strata_checker_event_count(c);
        for (uint32_t m = 0; m < ms->n; m++)
            ms->mem[m].padding_bytes = strata_padding_bytes(c, ms->mem[m].spec->name,
                                                            m == strata_hw_default_memory(hw));
        uint64_t n_buffers = strata_checker_buffer_count(c);
        for (uint64_t id = 0; id < n_buffers; id++) {
            if (strata_checker_buffer(c, id, NULL, NULL))
                g_hash_table_add(f->outputs, ID_KEY(id));
        }
    }
    strata_checker_free(c);
    for (uint32_t m = 0; ok && m < ms->n; m++) {
        if (ms->mem[m].lifetimes) {
            GError *local = NULL;
            ok = strata_allocator_plan(ms->mem[m].allocator,
                                       (const strata_lifetime *)(void *)ms->mem[m].lifetimes->data,
                                       ms->mem[m].lifetimes->len, &local);
            if (!ok)
                g_propagate_prefixed_error(err, local, "memory %s: ", ms->mem[m].spec->name);
            g_array_set_size(ms->mem[m].lifetimes, 0);
        }
    }
    if (ok)
        ok = strata_source_rewind(src, err);
    if (!ok) {
        engine_feed_free(f);
        return NULL;
    }
    f->checker = strata_checker_new(strata_source_origin(src));
    return f;
}

static void buffer_free(engine_buffer *b)
{
    g_free(b->name);
    g_free(b);
}

static void op_free(engine_op *op)
{
    g_free(op->label);
    g_free(op);
}

void engine_feed_release(engine_feed *f, engine_op *op)
{
    g_free(op->label);
    op->label = NULL;
    op->next = f->spare;
    f->spare = op;
}

void engine_feed_keep_labels(engine_feed *f, bool keep)
{
    f->keep_labels = keep;
}

void engine_feed_free(engine_feed *f)
{
    if (!f)
        return;
    for (guint s = 0; s < f->heads->len; s++) {
        engine_op *op = g_ptr_array_index(f->heads, s);
        while (op) {
            engine_op *next = op->next;
            op_free(op);
            op = next;
        }
    }
    while (f->spare) {
        engine_op *next = f->spare->next;
        op_free(f->spare);
        f->spare = next;
    }
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, f->buffers);
    while (g_hash_table_iter_next(&it, NULL, &value))
        buffer_free(value);
    g_hash_table_destroy(f->buffers);
    g_hash_table_destroy(f->outputs);
    g_ptr_array_free(f->heads, TRUE);
    g_ptr_array_free(f->tails, TRUE);
    g_ptr_array_free(f->stream_names, TRUE);
    if (f->checker)
        strata_checker_free(f->checker);
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

engine_buffer *engine_feed_buffer(engine_feed *f, uint64_t id)
{
    return g_hash_table_lookup(f->buffers, ID_KEY(id));
}

void engine_feed_forget(engine_feed *f, uint64_t id)
{
    engine_buffer *b = g_hash_table_lookup(f->buffers, ID_KEY(id));
    if (b) {
        g_hash_table_remove(f->buffers, ID_KEY(id));
        buffer_free(b);
    }
}

/* Build the engine op for a checked op of the second pass. */
static engine_op *make_op(engine_feed *f, const strata_op *op, const strata_op_refs *refs, uint64_t index)
{
    engine_op *e = f->spare;
    if (e) {
        f->spare = e->next;
        memset(e, 0, sizeof(*e));
    } else {
        e = g_new0(engine_op, 1);
    }
    e->kind = op->kind;
    e->index = index;
    e->line = op->line;
    e->stream = refs->stream;
    e->memory = e->src_memory = e->dst_memory = e->unit = ENGINE_NONE;
    e->label = f->keep_labels ? g_strdup(op->name) : NULL;
    switch (op->kind) {
    case STRATA_OP_ALLOC: {
        engine_buffer *b = g_new0(engine_buffer, 1);
        b->id = refs->buf;
        b->size = op->size;
        b->memory = op->memory ? (uint32_t)strata_hw_memory_index(f->hw, op->memory)
                               : strata_hw_default_memory(f->hw);
        b->dtype = op->dtype;
        b->tag = op->tag;
        b->persistent = index < f->first_work || g_hash_table_contains(f->outputs, ID_KEY(refs->buf));
        b->name = g_strdup(op->name);
        g_hash_table_insert(f->buffers, ID_KEY(b->id), b);
        e->buf = refs->buf;
        e->bytes = op->size;
        e->memory = b->memory;
        break;
    }
    case STRATA_OP_FREE:
        e->buf = refs->buf;
        e->bytes = refs->bytes;
        break;
    case STRATA_OP_COPY: {
        e->buf = refs->buf;
        e->src = refs->src;
        e->bytes = refs->bytes;
        const engine_buffer *d = engine_feed_buffer(f, refs->buf);
        const engine_buffer *s = engine_feed_buffer(f, refs->src);
        e->dst_memory = d ? d->memory : strata_hw_default_memory(f->hw);
        e->src_memory = s ? s->memory : strata_hw_default_memory(f->hw);
        break;
    }
    case STRATA_OP_COMPUTE: {
        e->bytes = refs->bytes;
        e->flops = op->has_flops ? op->flops : 0.0;
        e->has_time = op->has_time;
        e->time_s = op->time_s;
        if (strata_hw_compute_count(f->hw) > 0) {
            e->unit = (uint32_t)strata_hw_compute_index(f->hw, op->memory);
            e->memory = strata_hw_compute(f->hw, e->unit)->operands;
        }
        uint64_t first = 0;
        bool has_first = false;
        if (op->n_ins > 0) {
            first = refs->ins[0];
            has_first = true;
        } else if (op->n_outs > 0) {
            first = refs->outs[0];
            has_first = true;
        }
        const engine_buffer *b = has_first ? engine_feed_buffer(f, first) : NULL;
        e->dtype = b ? b->dtype : STRATA_DTYPE_NONE;
        break;
    }
    case STRATA_OP_RECORD:
    case STRATA_OP_WAIT:
        e->event = refs->event;
        e->event_seq = refs->event_seq;
        break;
    case STRATA_OP_RELEASE:
        e->memory = op->memory ? (uint32_t)strata_hw_memory_index(f->hw, op->memory) : ENGINE_NONE;
        break;
    default:
        break;
    }
    return e;
}

/* Reads one op into its stream's queue: 1 read, 0 end, -1 error. */
static int read_one(engine_feed *f, GError **err)
{
    for (;;) {
        const strata_op *op = NULL;
        int got = strata_source_next(f->src, &op, err);
        if (got <= 0) {
            if (got == 0)
                f->eof = true;
            return got;
        }
        strata_op_refs refs;
        if (!strata_checker_feed(f->checker, op, &refs, err))
            return -1;
        if (op->kind == STRATA_OP_OPTION)
            continue;
        if (refs.stream >= f->heads->len) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s:%" G_GUINT64_FORMAT ": the trace changed between the engine's two passes",
                        strata_source_origin(f->src), op->line);
            return -1;
        }
        engine_op *e = make_op(f, op, &refs, f->next_index++);
        engine_op *tail = g_ptr_array_index(f->tails, refs.stream);
        if (tail)
            tail->next = e;
        else
            g_ptr_array_index(f->heads, refs.stream) = e;
        g_ptr_array_index(f->tails, refs.stream) = e;
        return 1;
    }
}

int engine_feed_next(engine_feed *f, uint32_t stream, engine_op **op, GError **err)
{
    while (!g_ptr_array_index(f->heads, stream)) {
        if (f->eof)
            return 0;
        int got = read_one(f, err);
        if (got < 0)
            return -1;
    }
    engine_op *e = g_ptr_array_index(f->heads, stream);
    g_ptr_array_index(f->heads, stream) = e->next;
    if (!e->next)
        g_ptr_array_index(f->tails, stream) = NULL;
    e->next = NULL;
    *op = e;
    return 1;
}
