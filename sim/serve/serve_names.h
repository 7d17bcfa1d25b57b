/*
 * serve_names.h: the serving tables' lookup by name. A table is an array
 * of rows (structs) ended by a row whose name is NULL, each row's name a
 * `const char *` member, or an array of pointers to such rows ended by a
 * NULL pointer (the KV schemes); serve_names describes one (where it
 * starts, the bytes from an entry to the next, whether entries are
 * pointers, where a row's name is) so that one finder serves the engines,
 * schedulers, decode kernels, all-reduces, attention kernels, model
 * presets, KV schemes and keyed fields alike, each with its own message
 * for a name no row has.
 *
 * Invariants: a lookup reads the rows up to the first NULL name (or NULL
 * pointer) and never writes them; a row found is a row of the table (for
 * a table of pointers, the row pointed to); the list of names is in table
 * order, ", "-separated.
 */
#ifndef STRATA_SERVE_NAMES_H
#define STRATA_SERVE_NAMES_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct serve_names {
    const void *rows;   /* the first row */
    size_t stride;      /* bytes from one row to the next: sizeof the row type */
    size_t name_offset; /* offsetof the row type's name */
    bool pointers;      /* each entry is a `const type *` to its row; a NULL one ends the table */
} serve_names;

/* The serve_names of an array `rows` of `type` whose name member is `name`. */
#define SERVE_NAMES(rows, type) ((serve_names){(rows), sizeof(type), offsetof(type, name), false})
/* The serve_names of an array `rows` of `const type *` (NULL-ended) whose rows' name member is `name`. */
#define SERVE_NAMES_OF_POINTERS(rows, type) ((serve_names){(rows), sizeof(const type *), offsetof(type, name), true})

/* The row called name, or NULL (name NULL, or no row has it). */
const void *serve_names_find(serve_names t, const char *name);
/* The rows' names, ", "-separated in table order (g_free). */
char *serve_names_list(serve_names t);
/* The row called name, or NULL with err set (STRATA_ERROR, code) to the
 * message `format` makes of two strings: the name asked for ("(none)" when
 * NULL) and serve_names_list's. */
const void *serve_names_lookup(serve_names t, const char *name, int code, GError **err, const char *format)
    __attribute__((format(printf, 5, 0)));

#endif
