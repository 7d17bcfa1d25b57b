/*
 * timeline_live.c: a timeline's live buffers, slots and an index of slot
 * numbers (timeline_live.h).
 */
#include "results/timeline_live.h"
#include <assert.h>
#include <glib.h>
#include "core/idmap.h"

enum { LIVE_MIN_BITS = 4 };

/* A slot: a live buffer, or the next free slot's number. */
typedef union live_slot {
    strata_tl_buffer b;
    guint next_free; /* index + 1 (0: end) */
} live_slot;
_Static_assert(sizeof(live_slot) == sizeof(strata_tl_buffer), "the free list costs a slot nothing");

struct strata_tl_live {
    GArray *slots;     /* live_slot */
    guint free_slot;   /* head of the slots' free list, index + 1 (0: none) */
    uint32_t *buckets; /* slot index + 1 (0: empty) */
    size_t mask;       /* capacity - 1 */
    unsigned bits;     /* capacity = 1 << bits */
    size_t count;
};

static inline live_slot *slot_at(const strata_tl_live *l, uint32_t slot)
{
    return &g_array_index(l->slots, live_slot, slot - 1);
}

static inline uint64_t key_at(const strata_tl_live *l, uint32_t slot)
{
    const strata_tl_buffer *b = &slot_at(l, slot)->b;
    return strata_tl_live_key(b->memory, b->id);
}

static inline size_t home_of(const strata_tl_live *l, uint64_t key)
{
    return strata_idmap_home(key, l->bits);
}

static size_t find_bucket(const strata_tl_live *l, uint64_t key);

/* An index of 1 << bits buckets, holding again what the old one held. */
static void index_resize(strata_tl_live *l, unsigned bits)
{
    uint32_t *old = l->buckets;
    size_t old_capacity = old ? l->mask + 1 : 0;
    l->bits = bits;
    l->mask = ((size_t)1 << bits) - 1;
    l->buckets = g_new0(uint32_t, l->mask + 1);
    for (size_t i = 0; i < old_capacity; i++)
        if (old[i])
            l->buckets[find_bucket(l, key_at(l, old[i]))] = old[i];
    g_free(old);
}

strata_tl_live *strata_tl_live_new(void)
{
    strata_tl_live *l = g_new0(strata_tl_live, 1);
    l->slots = g_array_new(FALSE, FALSE, sizeof(live_slot));
    index_resize(l, LIVE_MIN_BITS);
    return l;
}

#ifndef NDEBUG
/* Invariants 1 and 2 over every bucket (at free). */
static bool live_ok(const strata_tl_live *l)
{
    size_t n = 0;
    for (size_t i = 0; i <= l->mask; i++) {
        if (!l->buckets[i])
            continue;
        n++;
        for (size_t j = home_of(l, key_at(l, l->buckets[i])); j != i; j = (j + 1) & l->mask)
            if (!l->buckets[j])
                return false;
    }
    return n == l->count && 2 * l->count <= l->mask + 1 && l->bits >= LIVE_MIN_BITS;
}
#endif

void strata_tl_live_free(strata_tl_live *l)
{
    if (!l)
        return;
    assert(live_ok(l)); /* invariants 1, 2 */
    g_array_unref(l->slots);
    g_free(l->buckets);
    g_free(l);
}

/* The bucket holding key, or the empty one where its probe run ends. */
static size_t find_bucket(const strata_tl_live *l, uint64_t key)
{
    size_t i = home_of(l, key);
    while (l->buckets[i] && key_at(l, l->buckets[i]) != key)
        i = (i + 1) & l->mask;
    return i;
}

static void release_slot(strata_tl_live *l, uint32_t slot)
{
    slot_at(l, slot)->next_free = l->free_slot;
    l->free_slot = slot;
}

void strata_tl_live_put(strata_tl_live *l, const strata_tl_buffer *b)
{
    uint32_t slot = l->free_slot;
    if (slot) {
        l->free_slot = slot_at(l, slot)->next_free;
    } else {
        g_array_set_size(l->slots, l->slots->len + 1);
        slot = l->slots->len;
    }
    slot_at(l, slot)->b = *b;
    size_t i = find_bucket(l, strata_tl_live_key(b->memory, b->id));
    if (l->buckets[i]) { /* invariant 3: the earlier one is dropped */
        release_slot(l, l->buckets[i]);
    } else {
        if (2 * (l->count + 1) > l->mask + 1) {
            index_resize(l, l->bits + 1);
            i = find_bucket(l, strata_tl_live_key(b->memory, b->id));
        }
        l->count++;
    }
    l->buckets[i] = slot;
}

bool strata_tl_live_take(strata_tl_live *l, uint64_t key, strata_tl_buffer *out)
{
    size_t i = find_bucket(l, key);
    uint32_t slot = l->buckets[i];
    if (!slot)
        return false;
    /* Backward shift: pull later entries of the run into the hole when the
     * hole lies on their way from their home bucket. */
    for (size_t j = (i + 1) & l->mask; l->buckets[j]; j = (j + 1) & l->mask) {
        if (strata_idmap_shifts(i, j, home_of(l, key_at(l, l->buckets[j])), l->mask)) {
            l->buckets[i] = l->buckets[j];
            i = j;
        }
    }
    l->buckets[i] = 0;
    l->count--;
    *out = slot_at(l, slot)->b;
    release_slot(l, slot);
    return true;
}

bool strata_tl_live_has(const strata_tl_live *l, uint64_t key)
{
    return l->buckets[find_bucket(l, key)] != 0;
}

size_t strata_tl_live_count(const strata_tl_live *l)
{
    return l->count;
}
