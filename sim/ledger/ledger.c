/*
 * ledger.c: the accounting of one memory (see ledger.h for the figures and
 * the invariants).
 *
 * Design: every placed buffer has a slot (its size and flags), found by id
 * in a hash table; the slots of non-argument buffers double as the temp
 * peak's segments, a doubly linked list in alloc order behind slot 0.
 * `tail` is the segment the current state belongs to (the last live one).
 */
#include "ledger/ledger.h"
#include <glib.h>
#include "core/units.h"

#define LEDGER_NONE UINT32_MAX
#define LEDGER_ARGUMENT 1u

typedef struct ledger_slot {
    uint64_t size;
    uint64_t high;       /* segment: highest allocated - args_live since it opened */
    uint32_t prev, next; /* segment list; next also links recycled slots */
    uint32_t flags;
} ledger_slot;

struct strata_ledger {
    GArray *slots;       /* ledger_slot; slot 0 is the segment before any */
    GHashTable *live;    /* buffer id -> slot index (never 0) */
    uint32_t recycled;   /* first recycled slot, or LEDGER_NONE */
    uint32_t tail;       /* last live segment */
    uint64_t allocated, args_live;
    uint64_t peak_allocated, peak_reserved, waste_at_peak;
    double fragmentation_peak;
    uint64_t argument_bytes, padding_bytes;
};

#define SLOT(l, i) (&g_array_index((l)->slots, ledger_slot, (i)))
#define ID_KEY(id) GSIZE_TO_POINTER((gsize)(id))

strata_ledger *strata_ledger_new(void)
{
    strata_ledger *l = g_new0(strata_ledger, 1);
    l->slots = g_array_new(FALSE, TRUE, sizeof(ledger_slot));
    ledger_slot head = {.prev = LEDGER_NONE, .next = LEDGER_NONE};
    g_array_append_val(l->slots, head);
    l->live = g_hash_table_new(g_direct_hash, g_direct_equal);
    l->recycled = LEDGER_NONE;
    l->tail = 0;
    return l;
}

void strata_ledger_free(strata_ledger *l)
{
    if (!l)
        return;
    g_array_free(l->slots, TRUE);
    g_hash_table_destroy(l->live);
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
    l->allocated = now->allocated;
    uint64_t rest = now->allocated > l->args_live ? now->allocated - l->args_live : 0;
    ledger_slot *t = SLOT(l, l->tail);
    if (rest > t->high)
        t->high = rest;
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

void strata_ledger_alloc(strata_ledger *l, uint64_t id, uint64_t size, bool argument,
                         const strata_alloc_stats *now)
{
    uint32_t i = slot_take(l);
    ledger_slot *s = SLOT(l, i);
    *s = (ledger_slot){.size = size, .prev = LEDGER_NONE, .next = LEDGER_NONE};
    if (argument) {
        s->flags = LEDGER_ARGUMENT;
        l->args_live += size;
        l->argument_bytes += size;
    } else {
        s->prev = l->tail;
        SLOT(l, l->tail)->next = i;
        l->tail = i;
    }
    g_hash_table_insert(l->live, ID_KEY(id), GUINT_TO_POINTER(i));
    strata_ledger_observe(l, now);
}

/* Drops segment i from the list; its high moves to the segment before it. */
static void segment_merge(strata_ledger *l, uint32_t i)
{
    ledger_slot *s = SLOT(l, i), *prev = SLOT(l, s->prev);
    if (s->high > prev->high)
        prev->high = s->high;
    prev->next = s->next;
    if (s->next != LEDGER_NONE)
        SLOT(l, s->next)->prev = s->prev;
    else
        l->tail = s->prev;
}

bool strata_ledger_free_buffer(strata_ledger *l, uint64_t id, bool before_work,
                               const strata_alloc_stats *now)
{
    uint32_t i = GPOINTER_TO_UINT(g_hash_table_lookup(l->live, ID_KEY(id)));
    if (i == 0)
        return false;
    g_hash_table_remove(l->live, ID_KEY(id));
    ledger_slot *s = SLOT(l, i);
    if (s->flags & LEDGER_ARGUMENT) {
        l->args_live -= s->size;
        if (before_work)
            l->argument_bytes -= s->size;
    } else {
        segment_merge(l, i);
    }
    s->next = l->recycled;
    l->recycled = i;
    strata_ledger_observe(l, now);
    return true;
}

bool strata_ledger_holds(const strata_ledger *l, uint64_t id)
{
    return g_hash_table_contains(l->live, ID_KEY(id));
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

void strata_ledger_fill(const strata_ledger *l, strata_memory_result *out)
{
    out->peak_allocated_bytes = l->peak_allocated;
    out->peak_reserved_bytes = l->peak_reserved;
    out->fragmentation_peak = l->fragmentation_peak;
    out->internal_waste_bytes = l->waste_at_peak;
    out->argument_bytes = l->argument_bytes;
    out->output_bytes = l->allocated;
    out->temp_peak_bytes = temp_peak(l);
    out->padding_bytes = l->padding_bytes;
}
