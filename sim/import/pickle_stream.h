/*
 * pickle_stream.h: what the opcode machine asks of a stream (private to
 * sim/import/pickle*.c; the stream's API is in pickle.h).
 *
 * A stream gives each new list or dict a path tag, the selector state it
 * would have in the finished document, inferred from the stack; lists in a
 * handed-out state get no cells: the machine pauses to hand their items
 * out. The memo plan tells which memo values a GET will still read.
 */
#ifndef STRATA_PICKLE_STREAM_H
#define STRATA_PICKLE_STREAM_H

#include "import/pickle_machine.h"

/* The tag of a new list or dict (0: none) to be pushed at stack index i;
 * has_items: built from items already on the stack, so it cannot be handed
 * out item by item. *outer: its index in its parent list, kept in the node
 * of a handed-out list. */
uint32_t strata_pickle_stream_tag(strata_pickle_stream *s, const parser *ps,
                                  strata_pickle_type type, size_t i, bool has_items,
                                  uint64_t *outer);
/* Whether lists with this tag are handed out item by item. */
bool strata_pickle_stream_hands_out(const strata_pickle_stream *s, uint32_t tag);

static inline size_t strata_pickle_plan_hash(uint64_t key, size_t mask)
{
    return (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 17) & mask;
}

/* The plan's slot of memo key `key`, or NULL when no GET reads it (each
 * GET and PUT of a stream asks: inline). */
static inline memo_slot *strata_pickle_plan_find(const memo_plan *m, uint64_t key)
{
    for (size_t i = strata_pickle_plan_hash(key, m->mask);; i = (i + 1) & m->mask) {
        memo_slot *s = &m->slots[i];
        if (s->key1 == key + 1)
            return s;
        if (s->key1 == 0)
            return NULL;
    }
}

#endif
