/*
 * check_live.c: the checker's live buffers by name (contract in
 * check_live.h).
 *
 * Design: a 64-bit hash of each name (read 8 bytes at a time) keys an
 * id map (core/idmap.h: open addressing, no allocation per entry) whose
 * value is the first record of that hash; records of the same hash, which
 * distinct names share only by accident, are chained through `next`.
 * Records come from chunks that never move, and a removed record goes on
 * the spare list for the next add, so after warm-up no add or remove
 * touches the heap (except for names of INLINE_NAME bytes or more).
 *
 * Invariants:
 *  1. each live record is on exactly one chain, the one of its name's
 *     hash, and each unused record on the spare list;
 *  2. a name shorter than INLINE_NAME bytes lives in its record, a longer
 *     one in a heap copy the record owns while it is live;
 *  3. chunks are never freed before the set, so a record pointer stays
 *     valid until its name is removed.
 */
#include "trace/check_live.h"
#include <glib.h>
#include <string.h>
#include "core/idmap.h"

#define INLINE_NAME 24
#define CHUNK_RECORDS 256

typedef struct record {
    strata_live_buffer b;
    struct record *next; /* live: the next record of the same hash; unused: the next spare */
    uint32_t len;        /* of the name, without its NUL */
    union {
        char text[INLINE_NAME]; /* len < INLINE_NAME */
        char *heap;             /* len >= INLINE_NAME */
    } name;
} record;

struct strata_live_set {
    strata_idmap *by_hash; /* hash -> record * (the first of its chain) */
    GPtrArray *chunks;     /* record[CHUNK_RECORDS] each, owned */
    size_t used;           /* records handed out of the last chunk */
    record *spare;
};

static const char *name_of(const record *r)
{
    return r->len < INLINE_NAME ? r->name.text : r->name.heap;
}

/* A hash of s[0..len): every byte moves every bit (names often differ
 * only in trailing digits). */
static uint64_t name_hash(const char *s, size_t len)
{
    const uint64_t k = UINT64_C(0x9E3779B97F4A7C15);
    uint64_t h = (uint64_t)len * k;
    for (; len >= 8; s += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, s, sizeof w);
        h = (h ^ w) * k;
        h ^= h >> 29;
    }
    uint64_t w = 0;
    for (size_t i = 0; i < len; i++)
        w |= (uint64_t)(unsigned char)s[i] << (8 * i);
    h = (h ^ w) * k;
    h ^= h >> 32;
    return h * k;
}

strata_live_set *strata_live_new(void)
{
    strata_live_set *s = g_new0(strata_live_set, 1);
    s->by_hash = strata_idmap_new();
    s->chunks = g_ptr_array_new_with_free_func(g_free);
    return s;
}

static void free_chain_names(uint64_t hash, void *value, void *user)
{
    (void)hash;
    (void)user;
    for (record *r = value; r; r = r->next)
        if (r->len >= INLINE_NAME)
            g_free(r->name.heap);
}

void strata_live_free(strata_live_set *s)
{
    if (!s)
        return;
    strata_idmap_foreach(s->by_hash, free_chain_names, NULL);
    strata_idmap_free(s->by_hash);
    g_ptr_array_free(s->chunks, TRUE);
    g_free(s);
}

/* The record of name in the chain that starts at r, or NULL. */
static record *in_chain(record *r, const char *name, size_t len)
{
    while (r && !(r->len == len && memcmp(name_of(r), name, len) == 0))
        r = r->next;
    return r;
}

strata_live_buffer *strata_live_find(const strata_live_set *s, const char *name)
{
    size_t len = strlen(name);
    record *r = in_chain(strata_idmap_get(s->by_hash, name_hash(name, len)), name, len);
    return r ? &r->b : NULL;
}

/* An unused record: a spare one, or the next of the last chunk. */
static record *take_record(strata_live_set *s)
{
    record *r = s->spare;
    if (r) {
        s->spare = r->next;
        return r;
    }
    if (s->chunks->len == 0 || s->used == CHUNK_RECORDS) {
        g_ptr_array_add(s->chunks, g_new(record, CHUNK_RECORDS));
        s->used = 0;
    }
    return &((record *)g_ptr_array_index(s->chunks, s->chunks->len - 1))[s->used++];
}

strata_live_buffer *strata_live_add(strata_live_set *s, const char *name, bool *added)
{
    size_t len = strlen(name);
    uint64_t hash = name_hash(name, len);
    record *head = strata_idmap_get(s->by_hash, hash);
    record *r = in_chain(head, name, len);
    *added = r == NULL;
    if (r)
        return &r->b;
    g_assert(len < UINT32_MAX);
    r = take_record(s);
    memset(&r->b, 0, sizeof r->b);
    r->len = (uint32_t)len;
    if (len < INLINE_NAME)
        memcpy(r->name.text, name, len + 1);
    else
        r->name.heap = g_strndup(name, len);
    r->next = head;
    strata_idmap_put(s->by_hash, hash, r);
    return &r->b;
}

bool strata_live_remove(strata_live_set *s, const char *name, strata_live_buffer *out)
{
    size_t len = strlen(name);
    uint64_t hash = name_hash(name, len);
    record *head = strata_idmap_get(s->by_hash, hash), *prev = NULL, *r = head;
    while (r && !(r->len == len && memcmp(name_of(r), name, len) == 0)) {
        prev = r;
        r = r->next;
    }
    if (!r)
        return false;
    if (prev)
        prev->next = r->next;
    else if (r->next)
        strata_idmap_put(s->by_hash, hash, r->next);
    else
        strata_idmap_take(s->by_hash, hash);
    *out = r->b;
    if (r->len >= INLINE_NAME)
        g_free(r->name.heap);
    r->next = s->spare;
    s->spare = r;
    return true;
}

typedef struct id_search {
    uint64_t id;
    const record *found;
} id_search;

static void match_id(uint64_t hash, void *value, void *user)
{
    (void)hash;
    id_search *q = user;
    for (const record *r = value; r; r = r->next)
        if (r->b.id == q->id)
            q->found = r;
}

const strata_live_buffer *strata_live_find_id(const strata_live_set *s, uint64_t id)
{
    id_search q = {id, NULL};
    strata_idmap_foreach(s->by_hash, match_id, &q);
    return q.found ? &q.found->b : NULL;
}
