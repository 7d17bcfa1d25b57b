/*
 * ledger.c: the accounting of one memory (see ledger.h for the figures and
 * the invariants).
 *
 * Design: every live buffer has a slot (its size and flags), found by id
 * in an idmap (core/idmap.h); the slots of non-argument buffers double as the temp
 * peak's segments, a doubly linked list in alloc order behind slot 0.
 * `tail` is the segment the current state belongs to (the last live one).
 */
#include "ledger/ledger.h"
#include <assert.h>
#include <glib.h>
#include <string.h>
#include "core/idmap.h"
#include "core/units.h"

#define LEDGER_NONE UINT32_MAX
#define LEDGER_ARGUMENT 1u /* allocated before the first copy or compute */
#define LEDGER_WRITTEN 2u  /* an argument the program wrote in place */
#define LEDGER_ALIASED 4u  /* an output paired with a donated argument */

typedef struct ledger_slot {
    uint64_t size;
    uint64_t high;       /* segment: highest live - args_live since it opened */
    uint32_t prev, next; /* segment list; next also links recycled slots */
    uint32_t flags;
} ledger_slot;

struct strata_ledger {
    GArray *slots;       /* ledger_slot; slot 0 is the segment before any */
    strata_idmap *live_ids; /* buffer id -> slot index (never 0) */
    uint32_t recycled;   /* first recycled slot, or LEDGER_NONE */
    uint32_t tail;       /* last live segment */
    bool work_seen;      /* a copy or compute came: no more arguments */
    uint64_t live, args_live;
    uint64_t args_count; /* live buffers flagged LEDGER_ARGUMENT */
    uint64_t peak_allocated, peak_reserved, waste_at_peak;
    double fragmentation_peak;
    uint64_t argument_bytes, padding_bytes;
};

#define SLOT(l, i) (&g_array_index((l)->slots, ledger_slot, (i)))

strata_ledger *strata_ledger_new(void)
{
    strata_ledger *l = g_new0(strata_ledger, 1);
    l->slots = g_array_new(FALSE, TRUE, sizeof(ledger_slot));
    ledger_slot head = {.prev = LEDGER_NONE, .next = LEDGER_NONE};
    g_array_append_val(l->slots, head);
    l->live_ids = strata_idmap_new();
    l->recycled = LEDGER_NONE;
    l->tail = 0;
    return l;
}

#ifndef NDEBUG
/* Invariants 2 and 3 over the whole list: slot 0 heads it, each link is
 * mirrored, it holds non-argument slots only and ends at tail. */
static bool ledger_ok(const strata_ledger *l)
{
    if (l->args_live > l->live || SLOT(l, 0)->prev != LEDGER_NONE)
        return false;
    uint32_t last = 0;
    for (uint32_t i = SLOT(l, 0)->next; i != LEDGER_NONE; i = SLOT(l, i)->next) {
        if (i >= l->slots->len || SLOT(l, i)->prev != last || (SLOT(l, i)->flags & LEDGER_ARGUMENT))
            return false;
        last = i;
    }
    return last == l->tail;
}
#endif

void strata_ledger_free(strata_ledger *l)
{
    if (!l)
        return;
    assert(ledger_ok(l)); /* invariants 2, 3 */
    g_array_free(l->slots, TRUE);
    strata_idmap_free(l->live_ids);
    g_free(l);
}

void strata_ledger_observe(strata_ledger *l, const strata_alloc_stats *now)
{
    if (now->allocated > l->peak_allocated) {
        l->peak_allocated = now->allocated;
        l->waste_at_peak = now->internal_waste;
    }
    if (now->reserved > l->peak_reserved)
        l->peak_reserved = now->reserved;
    if (now->free_in_reserved > 0) {
        double frag = 1.0 - (double)now->largest_free / (double)now->free_in_reserved;
        if (frag > l->fragmentation_peak)
            l->fragmentation_peak = frag;
    }
}

/* The live bytes changed: fold what is not an argument into the current segment. */
static void segment_observe(strata_ledger *l)
{
    ledger_slot *t = SLOT(l, l->tail);
    if (l->live - l->args_live > t->high)
        t->high = l->live - l->args_live;
}

static uint32_t slot_take(strata_ledger *l)
{
    if (l->recycled != LEDGER_NONE) {
        uint32_t i = l->recycled;
        l->recycled = SLOT(l, i)->next;
        return i;
    }
    g_array_set_size(l->slots, l->slots->len + 1);
    return l->slots->len - 1;
}

void strata_ledger_alloc(strata_ledger *l, uint64_t id, uint64_t size)
{
    uint32_t i = slot_take(l);
    ledger_slot *s = SLOT(l, i);
    *s = (ledger_slot){.size = size, .prev = LEDGER_NONE, .next = LEDGER_NONE};
    l->live += size;
    if (!l->work_seen) {
        s->flags = LEDGER_ARGUMENT;
        l->args_live += size;
        l->args_count++;
        l->argument_bytes += size;
    } else {
        s->prev = l->tail;
        SLOT(l, l->tail)->next = i;
        l->tail = i;
    }
    assert(i != 0); /* invariant 3: slot 0 is never handed out */
    assert(l->args_live <= l->live); /* invariant 2 */
    strata_idmap_put(l->live_ids, id, GUINT_TO_POINTER(i));
    segment_observe(l);
}

#ifndef NDEBUG
/* Invariant 3 at slot i: a linked non-argument slot, its links mirrored. */
static bool s_linked(const strata_ledger *l, uint32_t i)
{
    const ledger_slot *s = SLOT(l, i);
    return !(s->flags & LEDGER_ARGUMENT) && s->prev != LEDGER_NONE && SLOT(l, s->prev)->next == i &&
           (s->next == LEDGER_NONE ? l->tail == i : SLOT(l, s->next)->prev == i);
}
#endif

/* Drops segment i from the list; its high moves to the segment before it. */
static void segment_merge(strata_ledger *l, uint32_t i)
{
    assert(i != 0 && s_linked(l, i)); /* invariant 3 */
    ledger_slot *s = SLOT(l, i), *prev = SLOT(l, s->prev);
    if (s->high > prev->high)
        prev->high = s->high;
    prev->next = s->next;
    if (s->next != LEDGER_NONE)
        SLOT(l, s->next)->prev = s->prev;
    else
        l->tail = s->prev;
}

bool strata_ledger_free_buffer(strata_ledger *l, uint64_t id)
{
    uint32_t i = GPOINTER_TO_UINT(strata_idmap_take(l->live_ids, id));
    if (i == 0)
        return false;
    ledger_slot *s = SLOT(l, i);
    assert(s->size <= l->live); /* invariant 2 */
    l->live -= s->size;
    if (s->flags & LEDGER_ARGUMENT) {
        assert(s->size <= l->args_live && l->args_count > 0); /* invariant 2 */
        l->args_live -= s->size;
        l->args_count--;
        if (!l->work_seen)
            l->argument_bytes -= s->size;
    } else {
        segment_merge(l, i);
    }
    s->next = l->recycled;
    l->recycled = i;
    assert(l->args_live <= l->live); /* invariant 2 */
    segment_observe(l);
    return true;
}

bool strata_ledger_holds(const strata_ledger *l, uint64_t id)
{
    return strata_idmap_get(l->live_ids, id) != NULL;
}

/* The slot of a live buffer, or NULL. */
static ledger_slot *slot_of(const strata_ledger *l, uint64_t id)
{
    uint32_t i = GPOINTER_TO_UINT(strata_idmap_get(l->live_ids, id));
    return i ? SLOT(l, i) : NULL;
}

/* Pairs donated argument a with the first out= not paired yet, not an
 * argument and no larger than it. */
static void pair_donation(const strata_ledger *l, const ledger_slot *a, const uint64_t *outs, uint32_t n_outs)
{
    for (uint32_t k = 0; k < n_outs; k++) {
        ledger_slot *c = slot_of(l, outs[k]);
        if (c && !(c->flags & (LEDGER_ARGUMENT | LEDGER_ALIASED)) && c->size <= a->size) {
            c->flags |= LEDGER_ALIASED;
            return;
        }
    }
}

/* Marks the arguments among the written buffers. */
static void mark_written(strata_ledger *l, const uint64_t *writes, uint32_t n_writes)
{
    l->work_seen = true;
    if (l->args_count == 0) /* only arguments are marked */
        return;
    for (uint32_t k = 0; k < n_writes; k++) {
        ledger_slot *w = slot_of(l, writes[k]);
        if (w && (w->flags & LEDGER_ARGUMENT))
            w->flags |= LEDGER_WRITTEN;
    }
}

/* Donated buffer `id`: when it is an argument this ledger holds and the
 * compute does not write it in place, pairs it with an output. */
static void donate(strata_ledger *l, uint64_t id, const uint64_t *outs, uint32_t n_outs)
{
    const ledger_slot *a = slot_of(l, id);
    if (a && (a->flags & LEDGER_ARGUMENT) && !(a->flags & LEDGER_WRITTEN))
        pair_donation(l, a, outs, n_outs);
}

/* The id of the in= that donate= number d names; false when none does. */
static bool donated_in(const strata_op *op, const uint64_t *ins, uint32_t d, uint64_t *id)
{
    for (uint32_t k = 0; k < op->n_ins; k++) {
        if (strcmp(op->ins[k], op->donates[d]) == 0) {
            *id = ins[k];
            return true;
        }
    }
    return false;
}

uint32_t strata_ledger_donated(const strata_op *op, const uint64_t *ins, uint64_t *donated)
{
    uint32_t n = 0;
    for (uint32_t d = 0; d < op->n_donates; d++)
        n += donated_in(op, ins, d, &donated[n]);
    return n;
}

void strata_ledger_work_ids(strata_ledger *l, strata_op_kind kind, uint64_t dst, const uint64_t *outs,
                            uint32_t n_outs, const uint64_t *donated, uint32_t n_donated)
{
    if (kind == STRATA_OP_COPY) {
        mark_written(l, &dst, 1);
        return;
    }
    mark_written(l, outs, n_outs);
    for (uint32_t d = 0; d < n_donated && l->args_count > 0; d++) /* only arguments are donated */
        donate(l, donated[d], outs, n_outs);
}

void strata_ledger_work(strata_ledger *l, const strata_op *op, const uint64_t *ins, const uint64_t *outs,
                        uint64_t dst)
{
    if (op->kind == STRATA_OP_COPY) {
        mark_written(l, &dst, 1);
        return;
    }
    mark_written(l, outs, op->n_outs);
    uint64_t id = 0;
    for (uint32_t d = 0; d < op->n_donates && l->args_count > 0; d++) /* only arguments are donated */
        if (donated_in(op, ins, d, &id))
            donate(l, id, outs, op->n_outs);
}

void strata_ledger_bound_op(strata_ledger *l, uint32_t memory, const strata_bound_op *op)
{
    switch (op->kind) {
    case STRATA_OP_ALLOC:
        if (op->memory == memory)
            strata_ledger_alloc(l, op->buf, op->bytes);
        break;
    case STRATA_OP_FREE:
        if (op->memory == memory)
            strata_ledger_free_buffer(l, op->buf);
        break;
    case STRATA_OP_COPY:
    case STRATA_OP_COMPUTE:
        strata_ledger_work(l, op->op, op->ins, op->outs, op->buf);
        break;
    default:
        break;
    }
}

void strata_ledger_read_options(strata_ledger *l, const strata_checker *c, const char *name, bool is_default)
{
    uint64_t v = 0;
    l->padding_bytes = 0;
    if (name) {
        char *key = g_strdup_printf(STRATA_LEDGER_PADDING_OPTION ".%s", name);
        const char *text = strata_checker_option(c, key);
        if (text && strata_parse_size(text, &v, NULL))
            l->padding_bytes += v;
        g_free(key);
    }
    const char *text = is_default ? strata_checker_option(c, STRATA_LEDGER_PADDING_OPTION) : NULL;
    if (text && strata_parse_size(text, &v, NULL))
        l->padding_bytes += v;
}

typedef struct fill_ctx {
    const strata_ledger *l;
    strata_memory_result *out;
} fill_ctx;

/* Each live segment's high minus the outputs allocated up to it (every
 * segment still linked at the end is a buffer never freed). */
static uint64_t temp_peak(const strata_ledger *l)
{
    uint64_t peak = 0, outputs = 0;
    for (uint32_t i = 0; i != LEDGER_NONE; i = SLOT(l, i)->next) {
        const ledger_slot *s = SLOT(l, i);
        outputs += s->size;
        if (s->high > outputs && s->high - outputs > peak)
            peak = s->high - outputs;
    }
    return peak;
}

/* Adds a live buffer's bytes to the outputs and aliases it counts in. */
static void fill_visit(uint64_t id, void *value, void *user)
{
    (void)id;
    const fill_ctx *f = user;
    const ledger_slot *s = SLOT(f->l, GPOINTER_TO_UINT(value));
    bool argument = s->flags & LEDGER_ARGUMENT, written = s->flags & LEDGER_WRITTEN;
    if (!argument || written)
        f->out->output_bytes += s->size;
    if (written || (s->flags & LEDGER_ALIASED))
        f->out->alias_bytes += s->size;
}

void strata_ledger_fill(const strata_ledger *l, strata_memory_result *out)
{
    out->peak_allocated_bytes = l->peak_allocated;
    out->peak_reserved_bytes = l->peak_reserved;
    out->fragmentation_peak = l->fragmentation_peak;
    out->internal_waste_bytes = l->waste_at_peak;
    out->argument_bytes = l->argument_bytes;
    out->output_bytes = out->alias_bytes = 0;
    fill_ctx f = {l, out};
    strata_idmap_foreach(l->live_ids, fill_visit, &f);
    out->temp_peak_bytes = temp_peak(l);
    out->jax_total_bytes = out->temp_peak_bytes + out->argument_bytes + out->output_bytes - out->alias_bytes;
    out->padding_bytes = l->padding_bytes;
}
