/*
 * jsonout.h: small helpers for writing JSON with json-glib.
 *
 * The member setters add one "key": value pair to an object a JsonBuilder
 * has open. json-glib's numbers are gint64, so strata_json_add_uint() puts a
 * count above INT64_MAX in the node as the string "\001u64:DIGITS";
 * strata_json_text() prints a node pretty (two-space indent) with a final
 * newline and writes every such string as its bare, exact number. Every
 * double is written as a valid JSON number that reads back exactly: its
 * shortest %.17g text with a point before any exponent ("1.0", "3.0e-10",
 * "-0.0"; json-glib alone writes "3e-10.0"); a NaN or an infinity, which
 * JSON cannot hold, is written as null.
 * strata_json_write_file() writes that text to a path atomically
 * (core/outfile.h: the file is complete or untouched).
 *
 * Invariants: equal nodes give byte-identical text; the text parses as
 * strict JSON (RFC 8259) whenever the node's strings are valid UTF-8.
 */
#ifndef STRATA_JSONOUT_H
#define STRATA_JSONOUT_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include "core/outfile.h"
#include <stdbool.h>
#include <stdint.h>

void strata_json_add_int(JsonBuilder *b, const char *key, gint64 v);
void strata_json_add_uint(JsonBuilder *b, const char *key, uint64_t v);
void strata_json_add_double(JsonBuilder *b, const char *key, double v);
/* v NULL adds a JSON null. */
void strata_json_add_string(JsonBuilder *b, const char *key, const char *v);

/* A builder with the root object open; strata_json_object_end() closes it
 * and returns the root (the builder freed). */
JsonBuilder *strata_json_object_begin(void);
JsonNode *strata_json_object_end(JsonBuilder *b);
/* Opens the member key as an object or an array, in the object b has
 * open (closed with json_builder_end_object / _end_array). */
void strata_json_open_object(JsonBuilder *b, const char *key);
void strata_json_open_array(JsonBuilder *b, const char *key);

/* One member of a row that strata_json_add_fields() writes: a real
 * (strata_json_add_double), an exact count (_add_uint), a signed integer
 * (_add_int) or a string (_add_string: NULL is null). Built with the
 * macros below, e.g. {STRATA_JSON_REAL("busy_s", s->busy_s),
 * STRATA_JSON_COUNT("ops", s->ops)}: a row is declared as a table, and the
 * member calls are written once, here. */
typedef enum strata_json_kind {
    STRATA_JSON_KIND_REAL,
    STRATA_JSON_KIND_COUNT,
    STRATA_JSON_KIND_INT,
    STRATA_JSON_KIND_STRING,
} strata_json_kind;

typedef struct strata_json_field {
    const char *key;
    strata_json_kind kind;
    union {
        double real;
        uint64_t count;
        gint64 integer;
        const char *string;
    };
} strata_json_field;

#define STRATA_JSON_REAL(k, v) {.key = (k), .kind = STRATA_JSON_KIND_REAL, .real = (double)(v)}
#define STRATA_JSON_COUNT(k, v) {.key = (k), .kind = STRATA_JSON_KIND_COUNT, .count = (uint64_t)(v)}
#define STRATA_JSON_INT(k, v) {.key = (k), .kind = STRATA_JSON_KIND_INT, .integer = (gint64)(v)}
#define STRATA_JSON_STR(k, v) {.key = (k), .kind = STRATA_JSON_KIND_STRING, .string = (v)}

/* The n members of f, in order, into the object b has open. */
void strata_json_add_fields(JsonBuilder *b, const strata_json_field *f, size_t n);
/* An object holding the n members of f: the member key of the object b
 * has open, or (key NULL) the next element of the array b has open. */
void strata_json_add_object(JsonBuilder *b, const char *key, const strata_json_field *f, size_t n);

/* s as a quoted JSON string that is valid whatever its bytes: valid UTF-8
 * as is (", \ and control characters escaped as json-glib does), each
 * byte of an invalid sequence as \udcXX (a lone low surrogate: Python's
 * surrogateescape, so os.fsencode gives the bytes back). g_free. */
char *strata_json_quote_bytes(const char *s);

/* Pretty text of root ending in "\n", big counts exact (g_free it); root is
 * not consumed. */
char *strata_json_text(JsonNode *root);
/* strata_json_text(root) written atomically to path ("-": standard output)
 * in `set` (NULL: none; core/outfile.h). */
bool strata_json_write_file(strata_outfile_set *set, const char *path, JsonNode *root, GError **err);

#endif
