/*
 * backend_args.h: the options that `strata replay` and `strata validate`
 * share (the real backend, its trace and hardware model, the repeats), with
 * one check and one translation into strata_backend_options.
 *
 * Invariant: after strata_backend_args_check() succeeds, the backend exists,
 * --trace is given, 1 <= repeats <= STRATA_BACKEND_MAX_RUNS and
 * 0 <= warmup <= STRATA_BACKEND_MAX_RUNS.
 */
#ifndef STRATA_CLI_BACKEND_ARGS_H
#define STRATA_CLI_BACKEND_ARGS_H

#include "backend/backend.h"

typedef struct strata_backend_args {
    char *backend, *trace, *hw, *json, *device_memory;
    int repeats, warmup;
    gboolean check_allocators; /* --check-allocators */
} strata_backend_args;

/* The most timed runs, and the most warm-up runs, a replay takes: the
 * median of 10,000 runs is any benchmark's; each timed run keeps a start
 * and an end per op (host.c, cuda_backend.c). */
#define STRATA_BACKEND_MAX_RUNS 10000

void strata_backend_args_init(strata_backend_args *a); /* 5 repeats, 1 warm-up */
/* "PREFIX: host, cuda", the help of --backend (g_free). */
char *strata_backend_args_help(const char *prefix);
void strata_backend_args_clear(strata_backend_args *a);
/* The backend named by --backend; NULL with a usage error (exit 2). */
const strata_backend *strata_backend_args_check(const strata_backend_args *a, bool need_hw, GError **err);
void strata_backend_args_options(const strata_backend_args *a, strata_backend_options *opt);

#endif
