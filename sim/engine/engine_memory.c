/*
 * engine_memory.c: one allocator per memory of the hardware model, and its
 * ledger (ledger/ledger.h), which keeps the figures the engine reports for
 * the memory: the allocator's stats after every placement, free and
 * release as the actors execute them, and the program's ops in file order
 * as the feed reads them (memory_analysis() follows program order).
 *
 * Invariants: allocated <= reserved <= capacity (the allocator's); every
 * op read reaches every ledger once, in file order.
 */
#include "engine/engine_internal.h"
#include <stdlib.h>
#include <string.h>

bool engine_memories_init(engine_memories *ms, const strata_hw *hw, const char *allocator_override,
                          GError **err)
{
    ms->n = strata_hw_memory_count(hw);
    ms->allocator_override = allocator_override;
    ms->mem = g_new0(engine_memory, ms->n);
    for (uint32_t i = 0; i < ms->n; i++) {
        engine_memory *m = &ms->mem[i];
        m->spec = strata_hw_memory(hw, i);
        const char *spec = allocator_override ? allocator_override : m->spec->allocator;
        GError *local = NULL;
        m->allocator = strata_allocator_new(spec ? spec : STRATA_ALLOC_DEFAULT, m->spec->capacity,
                                            m->spec->alignment, &local);
        if (!m->allocator) {
            g_propagate_prefixed_error(err, local, "memory %s: ", m->spec->name);
            engine_memories_clear(ms);
            return false;
        }
        m->ledger = strata_ledger_new();
        m->plan_stream = -1;
        if (strata_allocator_needs_plan(m->allocator))
            m->lifetimes = g_array_new(FALSE, FALSE, sizeof(strata_lifetime));
    }
    return true;
}

void engine_memories_clear(engine_memories *ms)
{
    for (uint32_t i = 0; ms->mem && i < ms->n; i++) {
        if (ms->mem[i].allocator)
            strata_allocator_free(ms->mem[i].allocator);
        if (ms->mem[i].lifetimes)
            g_array_unref(ms->mem[i].lifetimes);
        strata_ledger_free(ms->mem[i].ledger);
    }
    g_free(ms->mem);
    ms->mem = NULL;
    ms->n = 0;
}

/* True when the allocator type named by spec declares parameter key. */
static bool type_declares(const char *spec, const char *key)
{
    char *name = NULL, *kv = NULL;
    strata_split_spec(spec, &name, &kv);
    const strata_alloc_type *type = strata_alloc_type_find(name);
    bool found = false;
    for (const strata_param_def *d = type ? type->params : NULL; d && d->name && !found; d++)
        found = strcmp(d->name, key) == 0;
    g_free(name);
    g_free(kv);
    return found;
}

bool engine_memories_apply_options(engine_memories *ms, const strata_checker *c, GError **err)
{
    const GPtrArray *keys = strata_checker_option_keys(c);
    static const char prefix[] = "allocator.";
    for (uint32_t i = 0; keys && i < ms->n; i++) {
        engine_memory *m = &ms->mem[i];
        const char *spec = ms->allocator_override ? ms->allocator_override : m->spec->allocator;
        if (!spec)
            spec = STRATA_ALLOC_DEFAULT;
        GString *base = g_string_new(NULL);
        for (guint k = 0; k < keys->len; k++) {
            const char *key = g_ptr_array_index(keys, k);
            if (!g_str_has_prefix(key, prefix) || !type_declares(spec, key + strlen(prefix)))
                continue;
            g_string_append_printf(base, "%s%s=%s", base->len ? "," : "", key + strlen(prefix),
                                   strata_checker_option(c, key));
        }
        if (base->len > 0) {
            GError *local = NULL;
            strata_allocator *a = strata_allocator_new_with_base(spec, base->str, m->spec->capacity,
                                                                 m->spec->alignment, &local);
            if (!a) {
                g_propagate_prefixed_error(err, local, "memory %s (trace options %s): ", m->spec->name,
                                           base->str);
                g_string_free(base, TRUE);
                return false;
            }
            strata_allocator_free(m->allocator);
            m->allocator = a;
        }
        g_string_free(base, TRUE);
    }
    return true;
}

bool engine_memory_alloc(engine_memory *m, engine_buffer *b, uint32_t stream)
{
    uint64_t offset = 0;
    if (!strata_allocator_alloc(m->allocator, b->id, b->size, stream, &offset))
        return false;
    b->offset = offset;
    b->placed = true;
    strata_alloc_stats s;
    strata_allocator_stats(m->allocator, &s);
    strata_ledger_observe(m->ledger, &s);
    return true;
}

void engine_memory_free(engine_memory *m, engine_buffer *b)
{
    if (!b->placed)
        return;
    strata_allocator_free_block(m->allocator, b->id);
    b->placed = false;
    strata_alloc_stats s;
    strata_allocator_stats(m->allocator, &s);
    strata_ledger_observe(m->ledger, &s);
}

/* A copy or compute reaches every ledger (each learns that work began and
 * marks what it holds of the outputs); an alloc or free only its memory's
 * (strata_ledger_bound_op ignores it elsewhere); the ledgers keep nothing
 * of the other kinds. */
void engine_memories_program(engine_memories *ms, const strata_bound_op *op, const engine_op_extra *x)
{
    switch (op->kind) {
    case STRATA_OP_COPY:
    case STRATA_OP_COMPUTE:
        for (uint32_t m = 0; m < ms->n; m++)
            strata_ledger_work_ids(ms->mem[m].ledger, op->kind, op->buf, op->outs, op->n_outs, x->donated,
                                   x->n_donated);
        break;
    case STRATA_OP_ALLOC:
    case STRATA_OP_FREE:
        if (op->memory < ms->n)
            strata_ledger_bound_op(ms->mem[op->memory].ledger, op->memory, op);
        break;
    default:
        break;
    }
}

void engine_memories_event(engine_memories *ms, const strata_bound_op *op)
{
    for (uint32_t m = 0; m < ms->n; m++)
        strata_allocator_event(ms->mem[m].allocator, op->kind == STRATA_OP_RECORD, op->stream, op->event,
                               op->event_seq);
}

void engine_memory_release(engine_memory *m)
{
    strata_allocator_release(m->allocator);
    strata_alloc_stats s;
    strata_allocator_stats(m->allocator, &s);
    strata_ledger_observe(m->ledger, &s);
}

typedef struct range_list {
    GArray *used; /* pairs of uint64: offset, end */
} range_list;

static void collect_used(const strata_block *block, void *user)
{
    if (block->state != STRATA_BLOCK_USED)
        return;
    range_list *r = user;
    uint64_t pair[2] = {block->offset, block->offset + block->size};
    g_array_append_vals(r->used, pair, 2);
}

static int compare_ranges(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t engine_memory_largest_gap(const engine_memory *m)
{
    range_list r = {g_array_new(FALSE, FALSE, sizeof(uint64_t))};
    strata_allocator_walk(m->allocator, collect_used, &r);
    size_t n = r.used->len / 2;
    uint64_t *p = (uint64_t *)(void *)r.used->data;
    if (n > 1)
        qsort(p, n, 2 * sizeof(uint64_t), compare_ranges);
    uint64_t cursor = 0, best = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[2 * i] > cursor && p[2 * i] - cursor > best)
            best = p[2 * i] - cursor;
        if (p[2 * i + 1] > cursor)
            cursor = p[2 * i + 1];
    }
    uint64_t cap = m->spec->capacity;
    if (cap > cursor && cap - cursor > best)
        best = cap - cursor;
    g_array_unref(r.used);
    return best;
}

void engine_memory_fill_result(const engine_memory *m, strata_memory_result *out)
{
    out->kind = g_strdup(strata_mem_kind_name(m->spec->kind));
    out->allocator = g_strdup(strata_allocator_spec(m->allocator));
    out->capacity_bytes = m->spec->capacity;
    strata_ledger_fill(m->ledger, out);
}
