/*
 * serve_fields.h: fields of a struct set by name from text, for the
 * serving simulation's keyed structs: a model's keys (serve_model.c) and
 * the scheduler's knobs (serve_run.c).
 *
 * A table row names a field, its type and its offset in the struct; a set
 * parses the text by the type (with the row's range) and stores it, or
 * says what was expected.
 *
 * Invariant: a failed set leaves the struct unchanged.
 */
#ifndef STRATA_SERVE_FIELDS_H
#define STRATA_SERVE_FIELDS_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    SERVE_FIELD_U32,        /* uint32_t from min to 2^32 - 1 */
    SERVE_FIELD_OPTION_INT, /* uint32_t from min to 2^31 - 1: an integer option's range (G_OPTION_ARG_INT) */
    SERVE_FIELD_BOOL,       /* bool */
    SERVE_FIELD_DTYPE,      /* strata_dtype of 8 bits or more */
    SERVE_FIELD_NAME,       /* char[64] */
    SERVE_FIELD_FRACTION,   /* double in (0, 1] */
    SERVE_FIELD_TIME,       /* double seconds >= 0 */
    SERVE_FIELD_SIZE,       /* uint64_t bytes */
} serve_field_type;

typedef struct serve_field {
    const char *name;
    serve_field_type type;
    size_t offset;
    uint32_t min; /* U32: the least value */
} serve_field;

/* Sets field `key` of obj from value; `what` names the table in the
 * unknown-key message ("model key", "knob"). */
bool serve_field_set(const serve_field *table, void *obj, const char *what, const char *key, const char *value,
                     GError **err);
/* Whether field `key` holds the same value in a and b (its own bytes, or
 * its double's value: no padding compared); false for an unknown key. */
bool serve_field_same(const serve_field *table, const void *a, const void *b, const char *key);
/* The table's names, ", "-separated (g_free). */
char *serve_field_names(const serve_field *table);

#endif
