/*
 * check_live.c: the checker's live buffers by name (contract in
 * check_live.h).
 *
 * Design: a chained hash table. `buckets` holds, per bucket, the first
 * record of the chain of names whose hash falls there; each record keeps
 * its name's full hash and length, so a probe compares bytes only for a
 * record of an equal hash and length. The bucket array is small (one
 * pointer per live buffer at most), so the common case of an alloc (a name
 * not live) reads one bucket, and a free reads one bucket and its record.
 * Records come from chunks that never move; a removed record goes on the
 * spare list for the next add, so after warm-up no add or remove touches
 * the heap (except for names of INLINE_NAME bytes or more).
 *
 * Invariants:
 *  1. each live record is on exactly one chain, the one of bucket
 *     hash & mask, and each unused record on the spare list;
 *  2. count <= n_buckets, a power of two, at least MIN_BUCKETS;
 *  3. a name shorter than INLINE_NAME bytes lives in its record, a longer
 *     one in a heap copy the record owns while it is live;
 *  4. chunks are never freed before the set, so a record pointer stays
 *     valid until its name is removed.
 */
#include "trace/check_live.h"
#include <glib.h>
#include <string.h>

#define INLINE_NAME 24
#define CHUNK_RECORDS 256
#define MIN_BUCKETS 64

typedef struct record {
    strata_live_buffer b;
    struct record *next; /* live: the next of its chain; unused: the next spare */
    uint32_t hash;
    uint32_t len;        /* of the name, without its NUL */
    union {
        char text[INLINE_NAME]; /* len < INLINE_NAME */
        char *heap;             /* len >= INLINE_NAME */
    } name;
} record;

struct strata_live_set {
    record **buckets;
    size_t mask;       /* n_buckets - 1 */
    size_t count;
    GPtrArray *chunks; /* record[CHUNK_RECORDS] each, owned */
    size_t used;       /* records handed out of the last chunk */
    record *spare;
};

static const char *name_of(const record *r)
{
    return r->len < INLINE_NAME ? r->name.text : r->name.heap;
}

/* A hash of s[0..len): every byte moves every bit (names often differ
 * only in trailing digits). */
static inline __attribute__((always_inline)) uint32_t name_hash(const char *s, size_t len)
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
    return (uint32_t)(h * k >> 32);
}

/* Whether r holds the name s[0..len) of hash h. */
static inline bool holds(const record *r, const char *s, size_t len, uint32_t h)
{
    if (r->hash != h || r->len != len)
        return false;
    const char *t = name_of(r);
    for (size_t i = 0; i < len; i++)
        if (t[i] != s[i])
            return false;
    return true;
}

strata_live_set *strata_live_new(void)
{
    strata_live_set *s = g_new0(strata_live_set, 1);
    s->mask = MIN_BUCKETS - 1;
    s->buckets = g_new0(record *, MIN_BUCKETS);
    s->chunks = g_ptr_array_new_with_free_func(g_free);
    return s;
}

void strata_live_free(strata_live_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i <= s->mask; i++)
        for (record *r = s->buckets[i]; r; r = r->next)
            if (r->len >= INLINE_NAME)
                g_free(r->name.heap);
    g_free(s->buckets);
    g_ptr_array_free(s->chunks, TRUE);
    g_free(s);
}

/* The link that points at the record of name (NULL at the chain's end
 * when name is not live). */
static inline __attribute__((always_inline)) record **link_of(const strata_live_set *s, const char *name,
                                                              size_t len, uint32_t hash)
{
    record **at = &s->buckets[hash & s->mask];
    while (*at && !holds(*at, name, len, hash))
        at = &(*at)->next;
    return at;
}

strata_live_buffer *strata_live_find(const strata_live_set *s, const char *name)
{
    size_t len = strlen(name);
    record *r = *link_of(s, name, len, name_hash(name, len));
    return r ? &r->b : NULL;
}

/* Doubles the buckets, each chain split by the next bit of the hash. */
static void grow(strata_live_set *s)
{
    size_t n = 2 * (s->mask + 1);
    record **buckets = g_new0(record *, n);
    for (size_t i = 0; i <= s->mask; i++) {
        for (record *r = s->buckets[i], *next; r; r = next) {
            next = r->next;
            r->next = buckets[r->hash & (n - 1)];
            buckets[r->hash & (n - 1)] = r;
        }
    }
    g_free(s->buckets);
    s->buckets = buckets;
    s->mask = n - 1;
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
    uint32_t hash = name_hash(name, len);
    record *r = *link_of(s, name, len, hash);
    *added = r == NULL;
    if (r)
        return &r->b;
    g_assert(len < UINT32_MAX);
    if (s->count == s->mask + 1)
        grow(s);
    r = take_record(s);
    memset(&r->b, 0, sizeof r->b);
    r->hash = hash;
    r->len = (uint32_t)len;
    if (len < INLINE_NAME)
        memcpy(r->name.text, name, len + 1);
    else
        r->name.heap = g_strndup(name, len);
    r->next = s->buckets[hash & s->mask];
    s->buckets[hash & s->mask] = r;
    s->count++;
    return &r->b;
}

bool strata_live_remove(strata_live_set *s, const char *name, strata_live_buffer *out)
{
    size_t len = strlen(name);
    record **at = link_of(s, name, len, name_hash(name, len));
    record *r = *at;
    if (!r)
        return false;
    *at = r->next;
    *out = r->b;
    if (r->len >= INLINE_NAME)
        g_free(r->name.heap);
    r->next = s->spare;
    s->spare = r;
    s->count--;
    return true;
}

const strata_live_buffer *strata_live_find_id(const strata_live_set *s, uint64_t id)
{
    for (size_t i = 0; i <= s->mask; i++)
        for (const record *r = s->buckets[i]; r; r = r->next)
            if (r->b.id == id)
                return &r->b;
    return NULL;
}
