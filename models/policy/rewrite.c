/*
 * rewrite.c: the wrapping source, plans and live-buffer tables that the
 * policies in models/policy/ are built from (see rewrite.h for the contract).
 *
 * Invariants:
 *  1. The queue holds heap-allocated owned ops; `current` is the op handed
 *     out last and is released at the next call (source.h's lifetime rule).
 *  2. `index` counts input ops pulled since the last rewind, so plan entries
 *     keyed by index refer to the same input op on every pass.
 */
#include "policy/rewrite.h"
#include <assert.h>
#include <string.h>
#include "core/error.h"

struct strata_rewrite_queue {
    GQueue ops; /* strata_op * (owned) */
};

void strata_rewrite_emit(strata_rewrite_queue *q, const strata_op *op)
{
    strata_op *copy = g_new(strata_op, 1);
    strata_op_copy(copy, op);
    g_queue_push_tail(&q->ops, copy);
}

static void owned_op_free(gpointer data)
{
    strata_op_clear(data);
    g_free(data);
}

typedef struct rewrite_source {
    strata_source *in;
    const strata_rewrite_ops *ops;
    void *self;
    strata_rewrite_queue queue;
    strata_op *current;
    uint64_t index;
    bool finished; /* finish() ran */
} rewrite_source;

static void rewrite_drop_state(rewrite_source *rs)
{
    g_queue_clear_full(&rs->queue.ops, owned_op_free);
    if (rs->current) {
        owned_op_free(rs->current);
        rs->current = NULL;
    }
}

static int rewrite_next(void *self, const strata_op **op, GError **err)
{
    rewrite_source *rs = self;
    if (rs->current) {
        owned_op_free(rs->current);
        rs->current = NULL;
    }
    while (g_queue_is_empty(&rs->queue.ops)) {
        if (rs->finished)
            return 0;
        const strata_op *in_op = NULL;
        int r = strata_source_next(rs->in, &in_op, err);
        if (r < 0)
            return -1;
        if (r == 0) {
            rs->finished = true;
            if (rs->ops->finish && !rs->ops->finish(rs->self, &rs->queue, err))
                return -1;
            continue;
        }
        if (!rs->ops->map(rs->self, rs->index, in_op, &rs->queue, err))
            return -1;
        rs->index++;
    }
    rs->current = g_queue_pop_head(&rs->queue.ops);
    assert(rs->current); /* invariant 1: the op handed out is owned until the next call */
    *op = rs->current;
    return 1;
}

static bool rewrite_rewind(void *self, GError **err)
{
    rewrite_source *rs = self;
    rewrite_drop_state(rs);
    assert(!rs->current && g_queue_is_empty(&rs->queue.ops)); /* invariant 1 */
    rs->index = 0; /* invariant 2 */
    rs->finished = false;
    if (rs->ops->reset)
        rs->ops->reset(rs->self);
    return strata_source_rewind(rs->in, err);
}

static void rewrite_destroy(void *self)
{
    rewrite_source *rs = self;
    rewrite_drop_state(rs);
    if (rs->ops->destroy)
        rs->ops->destroy(rs->self);
    strata_source_free(rs->in);
    g_free(rs);
}

static const strata_source_vtable rewrite_vtable = {rewrite_next, rewrite_rewind, rewrite_destroy};

strata_source *strata_rewrite_source_new(strata_source *in, const strata_rewrite_ops *ops, void *self,
                                         const char *origin, GError **err)
{
    if (ops->plan) {
        if (!ops->plan(self, in, err) || !strata_source_rewind(in, err)) {
            if (ops->destroy)
                ops->destroy(self);
            strata_source_free(in);
            return NULL;
        }
    }
    if (ops->reset)
        ops->reset(self);
    rewrite_source *rs = g_new0(rewrite_source, 1);
    rs->in = in;
    rs->ops = ops;
    rs->self = self;
    g_queue_init(&rs->queue.ops);
    char *name = g_strdup_printf("%s|%s", strata_source_origin(in), origin);
    strata_source *src = strata_source_new(&rewrite_vtable, rs, name);
    g_free(name);
    return src;
}

/* ---- plans ---------------------------------------------------------------- */

typedef struct plan_entry {
    GPtrArray *before; /* strata_op * owned */
    GPtrArray *after;
    bool drop;
} plan_entry;

struct strata_rewrite_plan {
    GHashTable *entries; /* uint64 * -> plan_entry * */
};

static void plan_entry_free(gpointer data)
{
    plan_entry *e = data;
    if (e->before)
        g_ptr_array_free(e->before, TRUE);
    if (e->after)
        g_ptr_array_free(e->after, TRUE);
    g_free(e);
}

strata_rewrite_plan *strata_rewrite_plan_new(void)
{
    strata_rewrite_plan *p = g_new0(strata_rewrite_plan, 1);
    p->entries = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, plan_entry_free);
    return p;
}

void strata_rewrite_plan_free(strata_rewrite_plan *p)
{
    if (!p)
        return;
    g_hash_table_destroy(p->entries);
    g_free(p);
}

static plan_entry *plan_entry_get(strata_rewrite_plan *p, uint64_t index)
{
    gint64 key = (gint64)index;
    plan_entry *e = g_hash_table_lookup(p->entries, &key);
    if (!e) {
        e = g_new0(plan_entry, 1);
        gint64 *k = g_new(gint64, 1);
        *k = key;
        g_hash_table_insert(p->entries, k, e);
    }
    return e;
}

static strata_op *owned_copy(const strata_op *op)
{
    strata_op *copy = g_new(strata_op, 1);
    strata_op_copy(copy, op);
    return copy;
}

void strata_rewrite_plan_before(strata_rewrite_plan *p, uint64_t index, const strata_op *op)
{
    plan_entry *e = plan_entry_get(p, index);
    if (!e->before)
        e->before = g_ptr_array_new_with_free_func(owned_op_free);
    g_ptr_array_add(e->before, owned_copy(op));
}

void strata_rewrite_plan_after(strata_rewrite_plan *p, uint64_t index, const strata_op *op)
{
    plan_entry *e = plan_entry_get(p, index);
    if (!e->after)
        e->after = g_ptr_array_new_with_free_func(owned_op_free);
    g_ptr_array_add(e->after, owned_copy(op));
}

void strata_rewrite_plan_drop(strata_rewrite_plan *p, uint64_t index) { plan_entry_get(p, index)->drop = true; }

bool strata_rewrite_plan_dropped(const strata_rewrite_plan *p, uint64_t index)
{
    gint64 key = (gint64)index;
    const plan_entry *e = g_hash_table_lookup(p->entries, &key);
    return e && e->drop;
}

void strata_rewrite_plan_emit(const strata_rewrite_plan *p, uint64_t index, const strata_op *op,
                              strata_rewrite_queue *q)
{
    gint64 key = (gint64)index;
    const plan_entry *e = g_hash_table_lookup(p->entries, &key);
    if (e && e->before)
        for (guint i = 0; i < e->before->len; i++)
            strata_rewrite_emit(q, g_ptr_array_index(e->before, i));
    if (op && !(e && e->drop))
        strata_rewrite_emit(q, op);
    if (e && e->after)
        for (guint i = 0; i < e->after->len; i++)
            strata_rewrite_emit(q, g_ptr_array_index(e->after, i));
}

bool strata_rewrite_plan_map(void *self, uint64_t index, const strata_op *op, strata_rewrite_queue *q,
                             GError **err)
{
    (void)err;
    strata_rewrite_plan_emit(*(strata_rewrite_plan **)self, index, op, q);
    return true;
}

/* ---- live buffers ------------------------------------------------------- */

struct strata_buffer_table {
    GHashTable *live;     /* name (borrowed from info) -> strata_buffer_info * */
    GPtrArray *instances; /* strata_buffer_info * owned, by id */
    GStringChunk *strings;
};

static void buffer_info_free(gpointer data) { g_free(data); }

strata_buffer_table *strata_buffer_table_new(void)
{
    strata_buffer_table *t = g_new0(strata_buffer_table, 1);
    t->live = g_hash_table_new(g_str_hash, g_str_equal);
    t->instances = g_ptr_array_new_with_free_func(buffer_info_free);
    t->strings = g_string_chunk_new(4096);
    return t;
}

void strata_buffer_table_free(strata_buffer_table *t)
{
    if (!t)
        return;
    g_hash_table_destroy(t->live);
    g_ptr_array_free(t->instances, TRUE);
    g_string_chunk_free(t->strings);
    g_free(t);
}

void strata_buffer_table_reset(strata_buffer_table *t)
{
    g_hash_table_remove_all(t->live);
    g_ptr_array_set_size(t->instances, 0);
    g_string_chunk_clear(t->strings);
}

const strata_buffer_info *strata_buffer_table_feed(strata_buffer_table *t, uint64_t index,
                                                   const strata_op *op)
{
    if (op->kind == STRATA_OP_ALLOC) {
        strata_buffer_info *b = g_new0(strata_buffer_info, 1);
        b->id = t->instances->len;
        b->name = g_string_chunk_insert_const(t->strings, op->name);
        b->memory = op->memory ? g_string_chunk_insert_const(t->strings, op->memory) : NULL;
        b->size = op->size;
        b->tag = op->tag;
        b->dtype = op->dtype;
        b->alloc_index = index;
        b->n_dims = op->n_dims;
        memcpy(b->shape, op->shape, sizeof b->shape);
        b->free_index = UINT64_MAX;
        b->stream = g_string_chunk_insert_const(t->strings, op->stream ? op->stream : STRATA_DEFAULT_STREAM);
        g_ptr_array_add(t->instances, b);
        g_hash_table_insert(t->live, (gpointer)b->name, b);
        return b;
    }
    if (op->kind == STRATA_OP_FREE) {
        strata_buffer_info *b = g_hash_table_lookup(t->live, op->name);
        if (b) {
            b->free_index = index;
            g_hash_table_remove(t->live, op->name);
        }
        return b;
    }
    return NULL;
}

const strata_buffer_info *strata_buffer_table_lookup(const strata_buffer_table *t, const char *name)
{
    return name ? g_hash_table_lookup(t->live, name) : NULL;
}

const strata_buffer_info *strata_buffer_table_get(const strata_buffer_table *t, uint64_t id)
{
    return id < t->instances->len ? g_ptr_array_index(t->instances, id) : NULL;
}

/* ---- building ops ----------------------------------------------------------- */

strata_op strata_op_alloc_of(const strata_buffer_info *b, const char *stream, const char *name, const char *memory)
{
    strata_op a = strata_op_make(STRATA_OP_ALLOC, stream, name);
    a.size = b->size;
    a.memory = memory;
    a.tag = b->tag;
    a.dtype = b->dtype;
    a.n_dims = b->n_dims;
    memcpy(a.shape, b->shape, sizeof b->shape);
    return a;
}

char *strata_rewrite_copy_name(const char *name, const char *place)
{
    return g_strdup_printf("%s%c%s", name, STRATA_REWRITE_COPY_SEP, place);
}

static void rename_in_list(const char *const *names, uint32_t n, const char *from, const char *to)
{
    char **list = (char **)names;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(list[i], from) == 0) {
            g_free(list[i]);
            list[i] = g_strdup(to);
        }
}

void strata_op_rename_buffer(strata_op *owned, const char *from, const char *to)
{
    switch (owned->kind) {
    case STRATA_OP_COPY:
    case STRATA_OP_ALL_REDUCE:
    case STRATA_OP_ALL_GATHER:
    case STRATA_OP_REDUCE_SCATTER:
    case STRATA_OP_ALL_TO_ALL:
    case STRATA_OP_COLLECTIVE_PERMUTE:
        if (owned->src && strcmp(owned->src, from) == 0) {
            g_free((char *)owned->src);
            owned->src = g_strdup(to);
        }
        if (strcmp(owned->name, from) == 0) {
            g_free((char *)owned->name);
            owned->name = g_strdup(to);
        }
        break;
    case STRATA_OP_ALLOC:
    case STRATA_OP_FREE:
        if (owned->name && strcmp(owned->name, from) == 0) {
            g_free((char *)owned->name);
            owned->name = g_strdup(to);
        }
        break;
    case STRATA_OP_COMPUTE:
        rename_in_list(owned->ins, owned->n_ins, from, to);
        rename_in_list(owned->outs, owned->n_outs, from, to);
        rename_in_list(owned->donates, owned->n_donates, from, to);
        break;
    default:
        break;
    }
}

void strata_op_operands(const strata_op *op, strata_operand_fn fn, void *ud)
{
    if (op->kind == STRATA_OP_COMPUTE) {
        for (uint32_t i = 0; i < op->n_ins; i++)
            fn(ud, op->ins[i], false);
        for (uint32_t i = 0; i < op->n_outs; i++)
            fn(ud, op->outs[i], true);
    } else if (op->kind == STRATA_OP_COPY || strata_op_kind_is_collective(op->kind)) {
        fn(ud, op->kind == STRATA_OP_ALL_REDUCE ? op->name : op->src, false);
        fn(ud, op->name, true);
    }
}
