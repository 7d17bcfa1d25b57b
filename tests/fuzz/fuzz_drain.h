/*
 * fuzz_drain.h: the importer targets' oracle on an imported op stream
 * (header-only, shared by fuzz_kineto.c and fuzz_jax_profile.c): every op
 * passes the trace checker and is written as text, and a second read after
 * a rewind gives as many ops as the first. A breach aborts, naming `what`.
 */
#ifndef STRATA_FUZZ_DRAIN_H
#define STRATA_FUZZ_DRAIN_H

#include <stdio.h>
#include <stdlib.h>
#include <glib.h>
#include "trace/check.h"
#include "trace/source.h"
#include "trace/writer.h"

/* Ops of one read of src, each checked and written; -1 on a read error. */
static inline long fuzz_drain_once(strata_source *src, const char *origin, const char *what)
{
    strata_checker *c = strata_checker_new(origin);
    const strata_op *op;
    GError *err = NULL;
    long n = 0;
    int rc;
    while ((rc = strata_source_next(src, &op, &err)) == 1) {
        GError *check_err = NULL;
        if (!strata_checker_feed(c, op, NULL, &check_err)) {
            fprintf(stderr, "%s emitted an unchecked trace: %s\n", what, check_err->message);
            abort();
        }
        g_free(strata_op_to_text(op));
        n++;
    }
    strata_checker_free(c);
    g_clear_error(&err);
    return rc < 0 ? -1 : n;
}

/* Both reads of src (the oracle above); src is left open. */
static inline void fuzz_drain_twice(strata_source *src, const char *origin, const char *what)
{
    long first = fuzz_drain_once(src, origin, what);
    if (first >= 0 && strata_source_rewind(src, NULL) && fuzz_drain_once(src, origin, what) != first) {
        fprintf(stderr, "%s: a second read gave other ops\n", what);
        abort();
    }
}

#endif
