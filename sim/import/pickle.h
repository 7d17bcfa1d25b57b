/*
 * pickle.h: a safe reader of Python pickles (protocols 0 to 5) holding plain
 * data only: dicts, lists, tuples, sets, str, bytes, ints (any length),
 * floats, bools and None, with the memo, marks and frames that carry them.
 *
 * Safety: nothing is ever imported, called or executed. Every opcode that
 * would import or call something (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST,
 * OBJ, NEWOBJ, NEWOBJ_EX, EXT1/2/4, PERSID, BINPERSID, NEXT_BUFFER,
 * READONLY_BUFFER) is an error naming the opcode and its byte offset.
 *
 * Representation: a compact arena, not a tree of allocated objects. Every
 * value is a 16-byte node in one array, addressed by a strata_pv handle;
 * container items are 12-byte cells chained from their container; str and
 * bytes point into the (memory-mapped) input without copying. Memory is a
 * small constant times the file size, whatever the input.
 *
 * Invariants:
 *  1. The reader never reads past the end of the input: every length field
 *     is checked against the bytes that remain before it is used, so a
 *     length of 2^60 is an error, not an allocation.
 *  2. Memory is bounded by the input size: each node, cell, stack slot and
 *     mark comes from at least one input byte; memo keys above the input
 *     offset are rejected (a real pickler numbers them from 0), and nesting
 *     of marks is capped (STRATA_PICKLE_MAX_MARKS).
 *  3. A document is either complete (STOP reached with exactly one value on
 *     the stack) or an error: truncated and corrupt input never yields a
 *     partial document.
 *  4. Handles are valid for the life of the strata_pickle; a memo reference
 *     (GET) shares its node, as Python shares the object.
 *
 * Errors: STRATA_ERROR_INPUT "FILE: offset N: what was expected"; the CLI
 * turns them into exit status 2.
 */
#ifndef STRATA_PICKLE_H
#define STRATA_PICKLE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/progress.h"

#define STRATA_PICKLE_MAX_MARKS 100000

typedef uint32_t strata_pv; /* a value handle; 0 is "no value" */
#define STRATA_PV_NULL ((strata_pv)0)

typedef enum {
    STRATA_PICKLE_NOTHING = 0, /* the null handle */
    STRATA_PICKLE_NONE,
    STRATA_PICKLE_BOOL,
    STRATA_PICKLE_INT,    /* fits in int64 */
    STRATA_PICKLE_BIGINT, /* an int beyond int64: value kept as a double */
    STRATA_PICKLE_FLOAT,
    STRATA_PICKLE_STR,
    STRATA_PICKLE_BYTES,
    STRATA_PICKLE_LIST,
    STRATA_PICKLE_TUPLE,
    STRATA_PICKLE_DICT,
    STRATA_PICKLE_SET,
} strata_pickle_type;

typedef struct strata_pickle strata_pickle;

/* Maps the file (read-only) and parses it. origin for messages = path. */
strata_pickle *strata_pickle_load_file(const char *path, GError **err);
/* Parses a buffer the caller keeps alive for the document's life. */
strata_pickle *strata_pickle_load_buffer(const void *data, size_t len, const char *origin,
                                         GError **err);
void strata_pickle_free(strata_pickle *p); /* NULL ok */

strata_pv strata_pickle_root(const strata_pickle *p);
int strata_pickle_protocol(const strata_pickle *p); /* from PROTO, 0 when absent */

strata_pickle_type strata_pickle_type_of(const strata_pickle *p, strata_pv v);
const char *strata_pickle_type_name(strata_pickle_type t); /* "dict", "int", ... */

/* Scalars. Each returns false when v is not of a fitting type. */
bool strata_pickle_get_bool(const strata_pickle *p, strata_pv v, bool *out);
bool strata_pickle_get_int(const strata_pickle *p, strata_pv v, int64_t *out); /* INT, BOOL */
bool strata_pickle_get_double(const strata_pickle *p, strata_pv v, double *out); /* numbers */
/* STR or BYTES: pointer to len bytes (not NUL-terminated). */
const char *strata_pickle_get_bytes(const strata_pickle *p, strata_pv v, size_t *len);
/* STR only: true when v is a str equal to text. */
bool strata_pickle_str_equal(const strata_pickle *p, strata_pv v, const char *text);
/* STR or BYTES as a new NUL-terminated string (g_free), NULL otherwise. */
char *strata_pickle_dup_str(const strata_pickle *p, strata_pv v);

/* Containers. */
size_t strata_pickle_len(const strata_pickle *p, strata_pv v); /* 0 for scalars */
typedef struct strata_pickle_iter {
    uint32_t cell;
} strata_pickle_iter;
void strata_pickle_iter_init(const strata_pickle *p, strata_pv container, strata_pickle_iter *it);
/* Next item: for dicts key and value, for others *key = STRATA_PV_NULL. */
bool strata_pickle_iter_next(const strata_pickle *p, strata_pickle_iter *it, strata_pv *key,
                             strata_pv *value);
/* The value under a str key of a dict (the last one, as Python keeps), or NULL handle. */
strata_pv strata_pickle_dict_get(const strata_pickle *p, strata_pv dict, const char *key);

/* A JSON-like rendering for tests and debugging (depth-limited; g_free). */
char *strata_pickle_to_text(const strata_pickle *p, strata_pv v, int max_depth);

/* ---- Streaming: bounded memory on files of any size -----------------------
 *
 * A stream reads the same documents with the same checks and messages, but
 * the items of *selected* lists are handed out one at a time as they
 * complete and are then dropped, instead of being built into the document.
 * A selector is a path from the top-level value, steps separated by '/': a
 * dict key, a list index (digits) or '*' (any index); the last step is '*',
 * the items handed out. For example "segments" + "/" + "*" hands out each
 * segment, "device_traces" + "/" + "*" + "/" + "*" each event of every
 * device (item.outer says which device).
 *
 * Memory does not grow with the file: before parsing, one cheap pass over
 * the opcodes records, for each memo key, where its last GET is; the parse
 * keeps a memoized value only until then, and unreachable values are
 * collected (the arena is compacted once it exceeds twice what was live, or
 * 2 MiB). What stays is the stack, the memo values still to be read, the
 * unselected parts of the document and the current item. Pages of the
 * mapped file behind the parse position are given back to the kernel.
 *
 * Where a list belongs is known only once it is complete, so a stream
 * infers the path of each new list from the stack (the layout Python's
 * pickler writes) and checks it at STOP: strata_pickle_stream_exact() is
 * true when the items handed out are exactly the items of the lists at the
 * selected paths of the finished document, in order. When it is false (a
 * hand-made pickle with another layout), read the file again with
 * strata_pickle_load_file(): nothing is wrong with the file, only with the
 * inference.
 *
 * Invariants: handles from strata_pickle_stream_next() (and any others into
 * the stream's document) are valid until the next call; after the end, the
 * document (strata_pickle_stream_doc, strata_pickle_root) stays valid, with
 * the selected lists empty (their length is the number of items handed out).
 */
typedef struct strata_pickle_stream strata_pickle_stream;

typedef struct strata_pickle_item {
    int selector;    /* index of the selector it matched */
    uint64_t outer;  /* index of its list in the enclosing list ('*' inside a path) */
    uint64_t index;  /* its index in its list */
    strata_pv value; /* read it through strata_pickle_stream_doc() */
} strata_pickle_item;

/* selectors: NULL-terminated. Maps the file (read-only). */
strata_pickle_stream *strata_pickle_stream_open_file(const char *path,
                                                     const char *const *selectors, GError **err);
/* A buffer the caller keeps alive for the stream's life. */
strata_pickle_stream *strata_pickle_stream_open_buffer(const void *data, size_t len,
                                                       const char *origin,
                                                       const char *const *selectors,
                                                       GError **err);
/* 1: *item is the next item; 0: STOP reached, the document is complete;
 * -1: error (the same STRATA_ERROR_INPUT a whole-document read gives). */
int strata_pickle_stream_next(strata_pickle_stream *s, strata_pickle_item *item, GError **err);
const strata_pickle *strata_pickle_stream_doc(const strata_pickle_stream *s);
bool strata_pickle_stream_exact(const strata_pickle_stream *s); /* after next() gave 0 */
/* Starts again from the first byte (the memo plan is kept). */
void strata_pickle_stream_rewind(strata_pickle_stream *s);
void strata_pickle_stream_free(strata_pickle_stream *s); /* NULL ok */
/* Collect unreachable values once the arena exceeds `bytes` (default 2 MiB;
 * tests set it low to exercise the collector on small inputs). */
void strata_pickle_stream_set_collect_bytes(strata_pickle_stream *s, size_t bytes);
/* Whether the plan pass read the whole file, so memo values are dropped
 * after their last GET (false on input the parse will refuse: then every
 * memo value is kept, as the whole-document reader does). */
bool strata_pickle_stream_planned(const strata_pickle_stream *s);
/* Shows the bytes parsed of the file, and the pass (1 + rewinds), on
 * `progress` (borrowed; NULL: none) as "WHAT: [...] 20.0 MiB / 60.0 MiB". */
void strata_pickle_stream_set_progress(strata_pickle_stream *s, strata_progress *progress, const char *what);

#endif
