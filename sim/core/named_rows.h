/*
 * named_rows.h: a const table of rows looked up and listed by name, for the
 * tables whose rows a file or an option picks (network protocols, NCCL
 * plugins and versions, ...), so that a table lists itself in its errors and
 * no list of its names is written out by hand beside it.
 *
 * Invariants: a row's first member is its name (const char *, never NULL);
 * the rows are n structs of `size` bytes each, as an array lays them out
 * (size = sizeof rows[0]); names are compared exactly.
 */
#ifndef STRATA_NAMED_ROWS_H
#define STRATA_NAMED_ROWS_H

#include <stddef.h>

/* The first row named `name`, or NULL. */
const void *strata_rows_find(const void *rows, size_t n, size_t size, const char *name);
/* The rows' names in order, ", " between them (g_free). */
char *strata_rows_names(const void *rows, size_t n, size_t size);

#endif
