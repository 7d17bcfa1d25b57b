/*
 * kineto_ledger.h: matching a PyTorch profiler trace's frees to its allocs.
 *
 * Live allocs are kept per key, the Addr (or, in the old format without
 * Addr, the size with the top bit set), as a stack of buffer ids numbered
 * in the order allocated; a free takes the newest of its key. A free whose
 * key has no live alloc frees a block allocated before the window (the
 * importer's pre.N). Invariant: every key in `live` has at least one id.
 */
#ifndef STRATA_KINETO_LEDGER_H
#define STRATA_KINETO_LEDGER_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "import/kineto_event.h"

typedef struct strata_kineto_ledger {
    GHashTable *live; /* &entry->key -> live_entry (kineto_ledger.c) */
    uint64_t next_id, n_pre;
} strata_kineto_ledger;

void strata_kineto_ledger_init(strata_kineto_ledger *l);
void strata_kineto_ledger_clear(strata_kineto_ledger *l);

/* |v| as unsigned, for any int64_t (INT64_MIN included). */
uint64_t strata_kineto_magnitude(int64_t v);

/* The key of a [memory] event: its Addr, or its size with the top bit set. */
uint64_t strata_kineto_ledger_key(const strata_kineto_event *ev);

/* A new live alloc of key: its id. */
uint64_t strata_kineto_ledger_alloc(strata_kineto_ledger *l, uint64_t key);

/* true with *id: the newest live alloc of key, now freed; false: a block
 * from before the window. */
bool strata_kineto_ledger_free(strata_kineto_ledger *l, uint64_t key, uint64_t *id);

#endif
