/*
 * minimalloc.h: importer of MiniMalloc benchmark CSVs (google/minimalloc:
 * a header `id,lower,upper,size`, then one buffer per row, live over the
 * half-open interval [lower, upper) and `size` bytes large).
 *
 * The trace has one alloc at `lower` and one free at `upper` per buffer,
 * ordered by time; at equal times frees come before allocs (a buffer ending
 * at t and one starting at t do not overlap), and rows keep file order.
 * Buffer names are the CSV ids when they are plain names, else "b" + id.
 *
 * Errors (STRATA_ERROR_INPUT) name FILE:LINE and what was expected.
 */
#ifndef STRATA_IMPORT_MINIMALLOC_H
#define STRATA_IMPORT_MINIMALLOC_H

#include <glib.h>
#include <stdbool.h>
#include "trace/source.h"

/* The CSV as a source of ops (for tests and in-process use). */
strata_source *strata_minimalloc_source(const char *csv_path, GError **err);

#endif
