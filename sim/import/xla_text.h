/*
 * xla_text.h: the lexical pieces shared by the readers of XLA's dump files
 * (xla_buffers.c, xla_liverange.c, xla_hlo.c): a line reader that counts
 * lines, XLA shapes, and errors that name FILE:LINE.
 *
 * Shapes are written as XLA's Shape::ToString / HumanStringWithLayout does:
 *   f32[4,8]{1,0}   bf16[2,128]{1,0:T(8,128)(2,1)}   f32[16]{0:S(5)}
 *   f32[]           pred[<=10]   (f32[4]{0}, u32[])   token[]
 * A tuple is read to its closing parenthesis; its first array element gives
 * the figures (dtype, dims), so a custom call returning (result, workspace)
 * is measured by its result.
 *
 * What a newer XLA adds (a field of a line a reader knows, a line kind it
 * does not) is an xla_unknown: counted, the first kept as FILE:LINE and its
 * text, and stated in the import summary; never an error, never silent.
 *
 * Invariants: xla_read_lines hands out each line without its line ending,
 * numbered from 1, and refuses a line holding a NUL byte; every error it or a
 * callback raises names the file and the line.
 */
#ifndef STRATA_IMPORT_XLA_TEXT_H
#define STRATA_IMPORT_XLA_TEXT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/progress.h"
#include "trace/op.h"

typedef struct xla_shape {
    strata_dtype dtype;         /* STRATA_DTYPE_NONE when strata has no such type */
    unsigned bits;              /* bits per element; 0 for token, opaque, tuples of none */
    uint32_t n_dims;            /* dims kept (at most STRATA_MAX_DIMS) */
    uint32_t rank;              /* the shape's real rank */
    uint64_t dims[STRATA_MAX_DIMS];
    uint64_t elements;          /* product of every dimension (1 for a scalar) */
    int memory_space;           /* S(n) of the layout, 0 when absent */
    bool is_tuple;
} xla_shape;

/* The largest dimension, element count and byte size a shape may have:
 * 2^63, so that sums and products of sizes stay in 64 bits. */
#define XLA_MAX_COUNT (UINT64_C(1) << 63)
#define XLA_MAX_RANK 64

/* Parses one shape at text; *end is set past it. False when text is not a
 * shape, or its dimensions, elements or bytes exceed XLA_MAX_COUNT. */
bool xla_shape_parse(const char *text, const char **end, xla_shape *out);
/* Appends to out (of xla_shape) each top-level element of the tuple shape at
 * text, `(f32[4]{0}, s32[])` (the comment XLA glues before every fifth
 * element skipped), as xla_shape_parse reads it; false when text is no
 * well-formed tuple. One pass over the text, a loop. */
bool xla_shape_elements(const char *text, GArray *out);
/* Dimension i (0-based) of the full rank, or 0 when not kept. */
uint64_t xla_shape_dim(const xla_shape *s, uint32_t i);

/* "FILE:LINE: expected EXPECTED, got 'LINE'" (the line cut to 60
 * characters, unprintable bytes as '?'); returns false. */
bool xla_fail_line(GError **err, const char *file, uint64_t line, const char *text, const char *expected);

/* Things a reader read past without knowing them: how many, and the first
 * as "FILE:LINE: WHAT 'TEXT'" (NULL while count is 0). */
typedef struct xla_unknown {
    uint64_t count;
    char *first;
} xla_unknown;

/* Counts one; keeps it as the first when it is (text cut to 60 characters,
 * unprintable bytes as '?'). */
void xla_unknown_note(xla_unknown *u, const char *file, uint64_t line, const char *what, const char *text,
                      size_t text_len);
/* Adds from's count to into's, keeping into's first when it has one. */
void xla_unknown_merge(xla_unknown *into, const xla_unknown *from);
void xla_unknown_clear(xla_unknown *u);

/* Called for each line; false stops the reading with err set. */
typedef bool (*xla_line_fn)(void *self, const char *file, const char *line, uint64_t lineno,
                            GError **err);
/* Reads path line by line (memory bounded by the longest line). */
/* progress (NULL: none) shows the bytes of path read, as "import xla: [...] 2.0 MiB / 8.0 MiB, FILE". */
bool xla_read_lines(const char *path, strata_progress *progress, xla_line_fn fn, void *self, GError **err);

/* Parses a decimal unsigned integer at *p (advancing it). */
bool xla_parse_u64(const char **p, uint64_t *out);
/* True when s starts with prefix; then *rest points past it. */
bool xla_skip(const char *s, const char *prefix, const char **rest);
/* A trace buffer name from a value key (NAME{INDEX}): NAME for NAME{},
 * NAME{0.1} for NAME{0,1}; characters a trace name cannot hold become '_'
 * (g_free). */
char *xla_trace_name(const char *key);

#endif
