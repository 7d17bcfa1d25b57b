/*
 * timeline_live.c: a timeline's live buffers, slots, a direct index of
 * slot numbers by buffer id and a hashed one for the rest (timeline_live.h).
 */
#include "results/timeline_live.h"
#include <assert.h>
#include <glib.h>
#include <string.h>
#include "core/idmap.h"

enum { LIVE_MIN_BITS = 4 };
enum { PAGE_BITS = 6, PAGE_IDS = 1 << PAGE_BITS }; /* ids a page of the direct index holds */
enum { DIRECT_BITS = 26 };                         /* ids below 2^26 go in the direct index */
static const uint64_t ID_MASK = ((uint64_t)1 << 48) - 1; /* a key's id (strata_tl_live_key) */

/* A page of the direct index: the slots of ids PAGE_IDS p to PAGE_IDS p +
 * PAGE_IDS - 1 (slot + 1, 0: none), and how many it holds; a page that
 * holds none waits for reuse on a list (malloc's searches for pages made
 * and freed cost more than the list). */
typedef struct id_page {
    uint32_t slot[PAGE_IDS];
    uint32_t held;
    struct id_page *next_free;
} id_page;

/* A slot: a live buffer, or the next free slot's number. */
typedef union live_slot {
    strata_tl_buffer b;
    guint next_free; /* index + 1 (0: end) */
} live_slot;
_Static_assert(sizeof(live_slot) == sizeof(strata_tl_buffer), "the free list costs a slot nothing");

struct strata_tl_live {
    GArray *slots;     /* live_slot */
    guint free_slot;   /* head of the slots' free list, index + 1 (0: none) */
    id_page **pages;   /* the direct index, by id >> PAGE_BITS (NULL: holds none) */
    size_t n_pages;
    id_page *free_pages; /* pages that hold none, all slots 0 */
    uint32_t *buckets; /* the hashed index: slot index + 1 (0: empty) */
    size_t mask;       /* capacity - 1 */
    unsigned bits;     /* capacity = 1 << bits */
    size_t hashed;     /* keys in the hashed index */
    size_t count;      /* keys in both */
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
/* Invariants 1, 2 and 5 over every bucket and page (at free). */
static bool live_ok(const strata_tl_live *l)
{
    size_t direct = 0;
    for (size_t p = 0; p < l->n_pages; p++) {
        uint32_t held = 0;
        for (size_t k = 0; l->pages[p] && k < PAGE_IDS; k++)
            if (l->pages[p]->slot[k]) {
                if ((key_at(l, l->pages[p]->slot[k]) & ID_MASK) != (p << PAGE_BITS | k))
                    return false;
                held++;
            }
        if (l->pages[p] && held != l->pages[p]->held)
            return false;
        direct += held;
    }
    size_t n = 0;
    for (size_t i = 0; i <= l->mask; i++) {
        if (!l->buckets[i])
            continue;
        n++;
        for (size_t j = home_of(l, key_at(l, l->buckets[i])); j != i; j = (j + 1) & l->mask)
            if (!l->buckets[j])
                return false;
    }
    return n == l->hashed && direct + n == l->count && 2 * l->hashed <= l->mask + 1 && l->bits >= LIVE_MIN_BITS;
}
#endif

void strata_tl_live_free(strata_tl_live *l)
{
    if (!l)
        return;
    assert(live_ok(l)); /* invariants 1, 2, 5 */
    for (size_t p = 0; p < l->n_pages; p++)
        g_free(l->pages[p]);
    g_free(l->pages);
    while (l->free_pages) {
        id_page *next = l->free_pages->next_free;
        g_free(l->free_pages);
        l->free_pages = next;
    }
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

/* The direct index's entry for key (NULL: its id is not below
 * 2^DIRECT_BITS, or its page holds none). */
static inline uint32_t *direct_find(const strata_tl_live *l, uint64_t key)
{
    uint64_t id = key & ID_MASK;
    size_t p = (size_t)(id >> PAGE_BITS);
    if (id >> DIRECT_BITS || p >= l->n_pages || !l->pages[p])
        return NULL;
    return &l->pages[p]->slot[id & (PAGE_IDS - 1)];
}

/* The same, its page made when it holds none. */
static inline uint32_t *direct_entry(strata_tl_live *l, uint64_t key)
{
    uint64_t id = key & ID_MASK;
    if (id >> DIRECT_BITS)
        return NULL;
    size_t p = (size_t)(id >> PAGE_BITS);
    if (G_UNLIKELY(p >= l->n_pages || !l->pages[p])) {
        if (p >= l->n_pages) {
            size_t n = MAX(p + 1, 2 * l->n_pages);
            l->pages = g_renew(id_page *, l->pages, n);
            memset(l->pages + l->n_pages, 0, (n - l->n_pages) * sizeof *l->pages);
            l->n_pages = n;
        }
        id_page *page = l->free_pages;
        if (page)
            l->free_pages = page->next_free;
        else
            page = g_new0(id_page, 1);
        l->pages[p] = page;
    }
    return &l->pages[p]->slot[id & (PAGE_IDS - 1)];
}

/* Empties the direct entry e of key's id (its page goes to the free
 * pages when it holds none: all its slots are 0 again). */
static inline void direct_clear(strata_tl_live *l, uint64_t key, uint32_t *e)
{
    size_t p = (size_t)((key & ID_MASK) >> PAGE_BITS);
    *e = 0;
    id_page *page = l->pages[p];
    if (--page->held == 0) {
        page->next_free = l->free_pages;
        l->free_pages = page;
        l->pages[p] = NULL;
    }
}

/* Holds slot under key in the hashed index (invariant 3 there). */
static void hashed_put(strata_tl_live *l, uint64_t key, uint32_t slot)
{
    size_t i = find_bucket(l, key);
    if (l->buckets[i]) { /* invariant 3: the earlier one is dropped */
        release_slot(l, l->buckets[i]);
    } else {
        if (2 * (l->hashed + 1) > l->mask + 1) {
            index_resize(l, l->bits + 1);
            i = find_bucket(l, key);
        }
        l->hashed++;
        l->count++;
    }
    l->buckets[i] = slot;
}

static bool hashed_take(strata_tl_live *l, uint64_t key, uint32_t *taken)
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
    l->hashed--;
    l->count--;
    *taken = slot;
    return true;
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
    uint64_t key = strata_tl_live_key(b->memory, b->id);
    uint32_t *e = direct_entry(l, key);
    if (e && *e && key_at(l, *e) == key) { /* invariant 3: the earlier one is dropped */
        release_slot(l, *e);
        *e = slot;
    } else if (e && !*e && (!l->hashed || !l->buckets[find_bucket(l, key)])) { /* invariant 5 */
        *e = slot;
        l->pages[(key & ID_MASK) >> PAGE_BITS]->held++;
        l->count++;
    } else {
        hashed_put(l, key, slot);
    }
}

bool strata_tl_live_take(strata_tl_live *l, uint64_t key, strata_tl_buffer *out)
{
    uint32_t *e = direct_find(l, key), slot = e ? *e : 0;
    if (slot && key_at(l, slot) == key) {
        direct_clear(l, key, e);
        l->count--;
    } else if (!l->hashed || !hashed_take(l, key, &slot)) {
        return false;
    }
    *out = slot_at(l, slot)->b;
    release_slot(l, slot);
    return true;
}

bool strata_tl_live_has(const strata_tl_live *l, uint64_t key)
{
    const uint32_t *e = direct_find(l, key);
    if (e && *e && key_at(l, *e) == key)
        return true;
    return l->hashed && l->buckets[find_bucket(l, key)] != 0;
}

size_t strata_tl_live_count(const strata_tl_live *l)
{
    return l->count;
}
