/*
 * check_live.h: the checker's live buffers by name (trace/check.c).
 *
 * A set of records, one per live buffer, found by the buffer's name. It is
 * the checker's per-op path (every alloc adds a name, every free removes
 * one, copies and computes look names up), so it keeps no allocation per
 * op: records are kept in a pool and reused, a short name is copied into
 * its record, and a lookup hashes the name once and compares it only
 * against records of an equal hash.
 *
 * Invariants:
 *  1. A name is in the set at most once;
 *  2. a record pointer stays valid until its name is removed;
 *  3. memory is bounded by the most buffers live at once (plus their
 *     names), never by the number of adds.
 */
#ifndef STRATA_CHECK_LIVE_H
#define STRATA_CHECK_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include "trace/op.h"

/* What the checker keeps of a live buffer. */
typedef struct strata_live_buffer {
    uint64_t id;
    uint64_t size;
    uint64_t line;      /* where it was allocated */
    double at_s;        /* the alloc's at= in seconds, or -1 when it has none */
    const char *memory; /* interned by the checker; NULL = the default memory */
    strata_dtype dtype;
} strata_live_buffer;

typedef struct strata_live_set strata_live_set;

strata_live_set *strata_live_new(void);
void strata_live_free(strata_live_set *s);

/* The live buffer named name, or NULL. */
strata_live_buffer *strata_live_find(const strata_live_set *s, const char *name);
/* The record of name: a new one, zeroed, with *added true; or, when name
 * is live already, its record with *added false. */
strata_live_buffer *strata_live_add(strata_live_set *s, const char *name, bool *added);
/* Removes name, copying its record to *out: false when name is not live. */
bool strata_live_remove(strata_live_set *s, const char *name, strata_live_buffer *out);
/* The live buffer of id, or NULL: O(live buffers), for tests and diagnostics. */
const strata_live_buffer *strata_live_find_id(const strata_live_set *s, uint64_t id);

#endif
