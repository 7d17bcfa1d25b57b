/*
 * heap.c: the flat block heap shared by first-fit, next-fit and best-fit
 * (see heap.h for the design and its invariants).
 */
#include "alloc/heap.h"
#include "core/error.h"

static gint heap_cmp_size(gconstpointer a, gconstpointer b, gpointer user)
{
    (void)user;
    const strata_heap_block *x = a, *y = b;
    return strata_block_order(x->size, x->offset, y->size, y->offset);
}

static gint heap_cmp_offset(gconstpointer a, gconstpointer b, gpointer user)
{
    (void)user;
    const strata_heap_block *x = a, *y = b;
    return strata_block_order(0, x->offset, 0, y->offset);
}

static void heap_index_add(strata_heap *h, strata_heap_block *b)
{
    g_tree_insert(h->by_size, b, b);
    if (h->by_offset)
        g_tree_insert(h->by_offset, b, b);
}

static void heap_index_remove(strata_heap *h, strata_heap_block *b)
{
    g_tree_remove(h->by_size, b);
    if (h->by_offset)
        g_tree_remove(h->by_offset, b);
}

bool strata_heap_init(strata_heap *h, uint64_t capacity, uint64_t alignment, bool offset_index,
                      GError **err)
{
    if (alignment == 0)
        alignment = 256;
    if ((alignment & (alignment - 1)) != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "alignment must be a power of two, got %" G_GUINT64_FORMAT, alignment);
        return false;
    }
    *h = (strata_heap){0};
    h->alignment = alignment;
    h->capacity = capacity & ~(alignment - 1);
    h->by_size = g_tree_new_full(heap_cmp_size, NULL, NULL, NULL);
    h->by_offset = offset_index ? g_tree_new_full(heap_cmp_offset, NULL, NULL, NULL) : NULL;
    h->live = g_hash_table_new(g_int64_hash, g_int64_equal);
    if (h->capacity > 0) {
        strata_heap_block *b = g_new0(strata_heap_block, 1);
        b->size = h->capacity;
        h->head = h->tail = b;
        heap_index_add(h, b);
    }
    return true;
}

void strata_heap_clear(strata_heap *h)
{
    strata_heap_block *b = h->head;
    while (b) {
        strata_heap_block *next = b->next;
        g_free(b);
        b = next;
    }
    if (h->by_size)
        g_tree_destroy(h->by_size);
    if (h->by_offset)
        g_tree_destroy(h->by_offset);
    if (h->live)
        g_hash_table_destroy(h->live);
    *h = (strata_heap){0};
}

uint64_t strata_heap_round(const strata_heap *h, uint64_t size)
{
    if (size == 0)
        return h->alignment;
    if (size > UINT64_MAX - (h->alignment - 1))
        return 0;
    return (size + h->alignment - 1) & ~(h->alignment - 1);
}

strata_heap_block *strata_heap_best(const strata_heap *h, uint64_t size)
{
    strata_heap_block key = {.size = size, .offset = 0};
    GTreeNode *n = g_tree_lower_bound(h->by_size, &key);
    return n ? g_tree_node_value(n) : NULL;
}

void strata_heap_take(strata_heap *h, strata_heap_block *b, uint64_t size, uint64_t id,
                      uint64_t requested)
{
    g_assert(!b->used && b->size >= size);
    heap_index_remove(h, b);
    if (b->size > size) {
        strata_heap_block *rest = g_new0(strata_heap_block, 1);
        rest->offset = b->offset + size;
        rest->size = b->size - size;
        rest->prev = b;
        rest->next = b->next;
        if (b->next)
            b->next->prev = rest;
        else
            h->tail = rest;
        b->next = rest;
        b->size = size;
        heap_index_add(h, rest);
    }
    b->used = true;
    b->id = id;
    b->requested = requested;
    g_hash_table_insert(h->live, &b->id, b);
    h->allocated += requested;
    h->used_bytes += b->size;
}

/* Absorb b->next (free, adjacent) into b. */
static void heap_absorb_next(strata_heap *h, strata_heap_block *b)
{
    strata_heap_block *n = b->next;
    b->size += n->size;
    b->next = n->next;
    if (n->next)
        n->next->prev = b;
    else
        h->tail = b;
    g_free(n);
}

bool strata_heap_free(strata_heap *h, uint64_t id)
{
    strata_heap_block *b = g_hash_table_lookup(h->live, &id);
    if (!b)
        return false;
    g_hash_table_remove(h->live, &id);
    h->allocated -= b->requested;
    h->used_bytes -= b->size;
    b->used = false;
    b->id = 0;
    b->requested = 0;
    if (b->next && !b->next->used) {
        heap_index_remove(h, b->next);
        heap_absorb_next(h, b);
    }
    if (b->prev && !b->prev->used) {
        strata_heap_block *p = b->prev;
        heap_index_remove(h, p);
        heap_absorb_next(h, p);
        b = p;
    }
    heap_index_add(h, b);
    return true;
}

void strata_heap_stats(const strata_heap *h, strata_alloc_stats *out)
{
    *out = (strata_alloc_stats){0};
    out->allocated = h->allocated;
    out->internal_waste = h->used_bytes - h->allocated;
    out->n_segments = 1;
    /* The span of used blocks: everything but a free tail. */
    const strata_heap_block *tail_free = (h->tail && !h->tail->used) ? h->tail : NULL;
    out->reserved = tail_free ? tail_free->offset : h->capacity;
    out->free_in_reserved = out->reserved - h->used_bytes;
    /* Largest free block below the span: the largest free block unless it is the tail. */
    GTreeNode *n = g_tree_node_last(h->by_size);
    while (n) {
        const strata_heap_block *b = g_tree_node_value(n);
        if (b != tail_free) {
            out->largest_free = b->size;
            break;
        }
        n = g_tree_node_previous(n);
    }
}

void strata_heap_walk(const strata_heap *h, strata_block_visit visit, void *user)
{
    for (const strata_heap_block *b = h->head; b; b = b->next) {
        strata_block_visit_fields(visit, user, b->offset, b->size, b->used, b->id, b->requested, 0);
    }
}
