/*
 * engine_memory.c: one placement (placement/placement.h) per memory of the
 * hardware model: its allocator, the trace's allocator options, the
 * planners' lifetimes, and its ledger (ledger/ledger.h), which keeps the
 * figures the engine reports for the memory: the allocator's stats after
 * every placement, free and release as the actors execute them, and the
 * program's ops in file order as the feed reads them (memory_analysis()
 * follows program order).
 *
 * Invariants: allocated <= reserved <= capacity (the allocator's); the ops
 * read reach the ledgers once each, in file order, each op the ledgers it
 * concerns: an alloc or free its memory's; a copy or compute every ledger
 * up to and including the first one, then only the ledgers of the
 * memories holding what it writes or donates (engine_memories_work_at:
 * no other holds an argument it touches); a record or wait none, only the
 * allocators that take events (engine_memories_event).
 */
#include "engine/engine_internal.h"
#include <stdlib.h>
#include <string.h>

/* The memories events must reach, once their allocators are final. */
static void find_evented(engine_memories *ms)
{
    g_free(ms->evented);
    ms->evented = g_new(uint32_t, ms->n ? ms->n : 1);
    ms->n_evented = 0;
    for (uint32_t i = 0; i < ms->n; i++)
        if (strata_placement_takes_events(ms->mem[i].place))
            ms->evented[ms->n_evented++] = i;
}

bool engine_memories_init(engine_memories *ms, const strata_hw *hw, const char *allocator_override, bool check,
                          GError **err)
{
    ms->n = strata_hw_memory_count(hw);
    ms->mem = g_new0(engine_memory, ms->n);
    ms->work_seen = false;
    for (uint32_t i = 0; i < ms->n; i++) {
        engine_memory *m = &ms->mem[i];
        m->spec = strata_hw_memory(hw, i);
        strata_placement_config cfg = {
            .memory = m->spec->name,
            .spec = allocator_override ? allocator_override : m->spec->allocator,
            .capacity = m->spec->capacity,
            .alignment = m->spec->alignment,
            .check = check,
        };
        m->place = strata_placement_new(&cfg);
        m->ledger = strata_placement_ledger(m->place);
        m->plan_stream = -1;
        /* Open without the trace first: a bad spec fails before any reading. */
        if (!strata_placement_open(m->place, NULL, err)) {
            engine_memories_clear(ms);
            return false;
        }
    }
    find_evented(ms);
    return true;
}

void engine_memories_clear(engine_memories *ms)
{
    for (uint32_t i = 0; ms->mem && i < ms->n; i++)
        strata_placement_free(ms->mem[i].place);
    g_free(ms->evented);
    ms->evented = NULL;
    ms->n_evented = 0;
    g_free(ms->mem);
    ms->mem = NULL;
    ms->n = 0;
}

bool engine_memories_apply_options(engine_memories *ms, const strata_checker *c, GError **err)
{
    for (uint32_t i = 0; i < ms->n; i++)
        if (!strata_placement_open(ms->mem[i].place, c, err))
            return false;
    find_evented(ms);
    return true;
}

strata_place_result engine_memory_alloc(engine_memory *m, engine_buffer *b, uint32_t stream, GError **err)
{
    uint64_t offset = 0;
    strata_place_result r = strata_placement_alloc(m->place, b->id, b->size, stream, &offset, err);
    if (r == STRATA_PLACE_OOM)
        return r;
    b->offset = offset;
    b->placed = true;
    return r;
}

bool engine_memory_free(engine_memory *m, engine_buffer *b, GError **err)
{
    if (!b->placed)
        return true;
    b->placed = false;
    return strata_placement_free_block(m->place, b->id, err);
}

/* A copy or compute reaches every ledger (each learns that work began and
 * marks what it holds of the outputs); an alloc or free only its memory's
 * (strata_ledger_bound_op ignores it elsewhere); the ledgers keep nothing
 * of the other kinds. After the first copy or compute, the feed sends work
 * to engine_memories_work_at instead (a pod's thousands of memories are not
 * visited per op). */
void engine_memories_program(engine_memories *ms, const strata_bound_op *op, const engine_op_extra *x)
{
    switch (op->kind) {
    case STRATA_OP_COPY:
    case STRATA_OP_COMPUTE:
        ms->work_seen = true;
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

void engine_memories_work_at(engine_memories *ms, const uint32_t *mems, uint32_t n, const strata_bound_op *op,
                             const engine_op_extra *x)
{
    for (uint32_t i = 0; i < n; i++)
        if (mems[i] < ms->n)
            strata_ledger_work_ids(ms->mem[mems[i]].ledger, op->kind, op->buf, op->outs, op->n_outs, x->donated,
                                   x->n_donated);
}

/* A record or wait reaches the allocators that take events (cuda-async's),
 * not every memory's: on a pod most have no event hook. */
void engine_memories_event(engine_memories *ms, const strata_bound_op *op)
{
    for (uint32_t i = 0; i < ms->n_evented; i++)
        strata_placement_event(ms->mem[ms->evented[i]].place, op->kind == STRATA_OP_RECORD, op->stream, op->event,
                               op->event_seq);
}

bool engine_memory_release(engine_memory *m, GError **err)
{
    return strata_placement_release(m->place, err);
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
    strata_allocator_walk(strata_placement_allocator(m->place), collect_used, &r);
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
    strata_placement_fill(m->place, out);
}
