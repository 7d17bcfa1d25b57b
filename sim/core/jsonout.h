/*
 * jsonout.h: small helpers for writing JSON with json-glib.
 *
 * The member setters add one "key": value pair to an object a JsonBuilder
 * has open. json-glib's numbers are gint64, so strata_json_add_uint() puts a
 * count above INT64_MAX in the node as the string "\001u64:DIGITS";
 * strata_json_text() prints a node pretty (two-space indent) with a final
 * newline and writes every such string as its bare, exact number.
 * strata_json_write_file() writes that text to a path atomically
 * (core/outfile.h: the file is complete or untouched).
 *
 * Invariant: equal nodes give byte-identical text.
 */
#ifndef STRATA_JSONOUT_H
#define STRATA_JSONOUT_H

#include <glib.h>
#include <json-glib/json-glib.h>
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

/* Pretty text of root ending in "\n", big counts exact (g_free it); root is
 * not consumed. */
char *strata_json_text(JsonNode *root);
/* strata_json_text(root) written atomically to path ("-": standard output). */
bool strata_json_write_file(const char *path, JsonNode *root, GError **err);

#endif
