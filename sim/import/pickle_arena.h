/*
 * pickle_arena.h: the value arena of a pickle document, private to the
 * reader (sim/import/pickle*.c); users see pickle.h only.
 *
 * Values live in `nodes` (16 bytes each); items of lists, tuples, sets and
 * dicts are `cells` chained from the container (head, tail, count), so
 * appending is O(1) and no container owns a separate allocation. str/bytes
 * nodes reference the input by offset; the few values that need decoding
 * (protocol 0 text strings, raw-unicode-escape) are copied into `strbuf`
 * and flagged with STR_IN_BUF. Both arrays live in anonymous mappings grown
 * with mremap.
 *
 * Invariants:
 *  1. nodes[0] and cells[0] are sentinels; handle 0 means "none"; a handle
 *     with bit 31 set is an immediate int (no node), so there are fewer
 *     than 2^31 nodes.
 *  2. A container's `u` is head<<32|tail of its cells and `a` their count,
 *     except a list a stream hands out (see pickle_stream.c): it never gets
 *     cells, its `u` is its index in its parent list.
 */
#ifndef STRATA_PICKLE_ARENA_H
#define STRATA_PICKLE_ARENA_H

#include "import/pickle.h"

#define STR_IN_BUF (UINT64_C(1) << 63)
/* Handles with this bit set are non-negative ints below 2^31 held in the
 * handle itself (no node): most values of a snapshot are such ints. */
#define PV_INT_TAG UINT32_C(0x80000000)
#define PV_IS_INT(v) (((v) & PV_INT_TAG) != 0)

typedef struct pnode {
    uint32_t type; /* strata_pickle_type in the low 8 bits; a path tag above (streaming) */
    uint32_t a;    /* STR/BYTES: length; containers: item count */
    uint64_t u;    /* INT: value; FLOAT/BIGINT: bits; STR: offset; containers: head<<32|tail;
                      a selected (streamed) list: its index in its parent list */
} pnode;

#define NODE_TYPE(n) ((strata_pickle_type)((n)->type & 0xffu))
#define NODE_TAG(n) ((n)->type >> 8)
#define NODE_FORWARDED 0xffu /* during a collection: moved, `a` is the new handle */

typedef struct pcell {
    strata_pv key, value;
    uint32_t next;
} pcell;

/* The arrays of a document's values: its nodes (node 0 the null handle),
 * the cells of its containers and the bytes of its strings. A document
 * holds one; a collection (pickle_collect.h) copies what is live into
 * another and keeps the old one's arrays as the spare for the next. */
typedef struct pickle_space {
    pnode *nodes;
    size_t n_nodes, cap_nodes;
    pcell *cells;
    size_t n_cells, cap_cells;
    GByteArray *strbuf;
} pickle_space;

struct strata_pickle {
    char *origin;
    const uint8_t *data;
    size_t len;
    void *map; /* mmap'd region or NULL */
    size_t map_len;
    int protocol;
    strata_pv root;

    pickle_space space; /* the document's values */
};

bool strata_pickle_is_container(strata_pickle_type t);

/* An anonymous mapping of new_bytes (old == NULL) or `old` grown to it;
 * out of memory is fatal. */
void *strata_pickle_region_resize(void *old, size_t old_bytes, size_t new_bytes);
/* Doubles *array (of *cap elements of elem bytes). */
void strata_pickle_region_grow(void **array, size_t *cap, size_t elem);
/* Room for element n of *array: grows it when n == *cap. */
static inline void strata_pickle_region_reserve(void **array, size_t n, size_t *cap, size_t elem)
{
    if (n >= *cap)
        strata_pickle_region_grow(array, cap, elem);
}

/* Empty node and cell arrays (with their sentinels) and string buffer. */
void strata_pickle_arena_init(strata_pickle *p);
/* type: a strata_pickle_type, with a path tag above its low 8 bits. (The
 * parser's innermost calls: inline.) */
static inline strata_pv strata_pickle_new_node(strata_pickle *p, uint32_t type, uint32_t a,
                                               uint64_t u)
{
    strata_pickle_region_reserve((void **)&p->space.nodes, p->space.n_nodes, &p->space.cap_nodes, sizeof(pnode));
    p->space.nodes[p->space.n_nodes] = (pnode){type, a, u};
    return (strata_pv)p->space.n_nodes++;
}

static inline void strata_pickle_container_add(strata_pickle *p, strata_pv c, strata_pv key,
                                               strata_pv value)
{
    strata_pickle_region_reserve((void **)&p->space.cells, p->space.n_cells, &p->space.cap_cells, sizeof(pcell));
    uint32_t cell = (uint32_t)p->space.n_cells++;
    p->space.cells[cell] = (pcell){key, value, 0};
    pnode *n = &p->space.nodes[c];
    uint32_t head = (uint32_t)(n->u >> 32), tail = (uint32_t)n->u;
    if (head == 0)
        head = cell;
    else
        p->space.cells[tail].next = cell;
    n->u = ((uint64_t)head << 32) | cell;
    n->a++;
}

/* A document over a buffer the caller keeps alive, or over the read-only
 * mapping of a file; without values yet (the arena is not set up). */
strata_pickle *strata_pickle_doc_for_buffer(const void *data, size_t len, const char *origin);
strata_pickle *strata_pickle_doc_for_file(const char *path, GError **err);

#endif
