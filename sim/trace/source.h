/*
 * source.h: a pull-based stream of ops, the seam between producers,
 * rewrites (policies) and consumers.
 *
 * A source hands out ops one at a time; the op it returns (and its strings)
 * stays valid until the next call to next() or rewind() on that source.
 * Every source can rewind to its first op, so consumers that need two passes
 * (a checking pass, lifetimes for an offline allocator, a policy that looks
 * ahead) can make them without holding the whole stream in memory.
 * `origin` names the file or generator, for error messages.
 *
 * Implementations: trace/reader.c (a trace file), strata_source_from_array()
 * (ops in memory, for tests and generators), models/policy/ (rewrites).
 */
#ifndef STRATA_SOURCE_H
#define STRATA_SOURCE_H

#include "trace/op.h"

typedef struct strata_source strata_source;

typedef struct strata_source_vtable {
    /* 1: *op set; 0: end of stream; -1: error (err set). */
    int (*next)(void *self, const strata_op **op, GError **err);
    bool (*rewind)(void *self, GError **err);
    /* Trace-wide `option` values seen so far are reported through next(). */
    void (*destroy)(void *self);
} strata_source_vtable;

strata_source *strata_source_new(const strata_source_vtable *vt, void *self, const char *origin);
int strata_source_next(strata_source *src, const strata_op **op, GError **err);
bool strata_source_rewind(strata_source *src, GError **err);
const char *strata_source_origin(const strata_source *src);
/* src's self when it was made with the vtable vt, else NULL: for the maker
 * of a kind of source to find its own state behind a strata_source (as
 * strata_spmd_coll() does). */
void *strata_source_self(const strata_source *src, const strata_source_vtable *vt);
void strata_source_free(strata_source *src); /* NULL ok; destroys self */

/* A source over ops held in memory; copies them (strata_op_copy). */
strata_source *strata_source_from_array(const strata_op *ops, size_t n, const char *origin);

/* Builder for generators and policies: append ops, then turn into a source. */
typedef struct strata_op_list strata_op_list;
strata_op_list *strata_op_list_new(void);
void strata_op_list_append(strata_op_list *list, const strata_op *op); /* copies */
size_t strata_op_list_len(const strata_op_list *list);
const strata_op *strata_op_list_get(const strata_op_list *list, size_t i);
strata_source *strata_op_list_to_source(strata_op_list *list, const char *origin); /* takes list */
/* The same, with the op at index `body` handed out `times` times in a row
 * (0: never) instead of once: a generator's loop of identical ops costs one
 * op of memory, however many times it runs. */
strata_source *strata_op_list_to_source_repeating(strata_op_list *list, size_t body, uint64_t times,
                                                  const char *origin); /* takes list */
void strata_op_list_free(strata_op_list *list);

#endif
