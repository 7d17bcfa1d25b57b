/*
 * idmap.c: ids to pointers by open addressing (see idmap.h).
 */
#include "core/idmap.h"
#include <assert.h>
#include <stdbool.h>
#include <glib.h>

#define IDMAP_MIN_BITS 4

typedef struct idmap_slot {
    uint64_t id;
    void *value; /* NULL: empty */
} idmap_slot;

struct strata_idmap {
    idmap_slot *slots;
    size_t mask;   /* capacity - 1 */
    unsigned bits; /* capacity = 1 << bits */
    size_t count;
};

static size_t home_of(const strata_idmap *m, uint64_t id)
{
    return strata_idmap_home(id, m->bits);
}

#ifndef NDEBUG
/* Invariant 1 (O(1)). */
static bool idmap_size_ok(const strata_idmap *m)
{
    size_t capacity = m->mask + 1;
    return (capacity & m->mask) == 0 && capacity == (size_t)1 << m->bits && m->bits >= IDMAP_MIN_BITS
        && 2 * m->count <= capacity;
}

/* Invariants 1 to 3 over every slot (O(capacity)): for free. */
static bool idmap_ok(const strata_idmap *m)
{
    size_t n = 0;
    for (size_t i = 0; i <= m->mask; i++) {
        if (!m->slots[i].value)
            continue;
        n++;
        for (size_t j = home_of(m, m->slots[i].id); j != i; j = (j + 1) & m->mask)
            if (!m->slots[j].value) /* invariant 3 */
                return false;
    }
    return idmap_size_ok(m) && n == m->count; /* invariants 1, 2 */
}
#endif

static void idmap_alloc(strata_idmap *m, unsigned bits)
{
    m->bits = bits;
    m->mask = ((size_t)1 << bits) - 1;
    m->slots = g_new0(idmap_slot, m->mask + 1);
}

strata_idmap *strata_idmap_new(void)
{
    strata_idmap *m = g_new0(strata_idmap, 1);
    idmap_alloc(m, IDMAP_MIN_BITS);
    return m;
}

void strata_idmap_free(strata_idmap *m)
{
    if (!m)
        return;
    assert(idmap_ok(m)); /* invariants 1-3 */
    g_free(m->slots);
    g_free(m);
}

/* The slot holding id, or the empty slot where its probe run ends. */
static size_t find_slot(const strata_idmap *m, uint64_t id)
{
    size_t i = home_of(m, id);
    while (m->slots[i].value && m->slots[i].id != id)
        i = (i + 1) & m->mask;
    return i;
}

static void grow(strata_idmap *m)
{
    idmap_slot *old = m->slots;
    size_t old_capacity = m->mask + 1;
    idmap_alloc(m, m->bits + 1);
    for (size_t i = 0; i < old_capacity; i++) {
        if (old[i].value)
            m->slots[find_slot(m, old[i].id)] = old[i];
    }
    g_free(old);
}

void strata_idmap_put(strata_idmap *m, uint64_t id, void *value)
{
    g_assert(value != NULL);
    size_t i = find_slot(m, id);
    if (!m->slots[i].value) {
        if (2 * (m->count + 1) > m->mask + 1) {
            grow(m);
            i = find_slot(m, id);
        }
        m->count++;
    }
    m->slots[i] = (idmap_slot){id, value};
    assert(idmap_size_ok(m)); /* invariant 1 */
}

void *strata_idmap_get(const strata_idmap *m, uint64_t id)
{
    return m->slots[find_slot(m, id)].value;
}

void *strata_idmap_take(strata_idmap *m, uint64_t id)
{
    size_t i = find_slot(m, id);
    void *value = m->slots[i].value;
    if (!value)
        return NULL;
    /* Backward shift: pull later entries of the run into the hole when the
     * hole lies on their way from their home slot. */
    for (size_t j = (i + 1) & m->mask; m->slots[j].value; j = (j + 1) & m->mask) {
        if (strata_idmap_shifts(i, j, home_of(m, m->slots[j].id), m->mask)) {
            m->slots[i] = m->slots[j];
            i = j;
        }
    }
    m->slots[i] = (idmap_slot){0, NULL};
    m->count--;
    assert(idmap_size_ok(m)); /* invariant 1 */
    return value;
}

size_t strata_idmap_size(const strata_idmap *m)
{
    return m->count;
}

void strata_idmap_foreach(const strata_idmap *m, void (*visit)(uint64_t id, void *value, void *user), void *user)
{
    for (size_t i = 0; i <= m->mask; i++) {
        if (m->slots[i].value)
            visit(m->slots[i].id, m->slots[i].value, user);
    }
}
