/*
 * coll_sweep.h: a collective's simulated time as its size grows, on a
 * shipped hardware file, with the library's own choice and with each of
 * its algorithms forced (issue 39: "a collective's time never falls as its
 * size grows under the same algorithm").
 *
 * A point is one `strata gen collective op=OP bytes=B devices=N [algo=A]`
 * run on a hardware file with --set overrides (NCCL_ALGO as
 * interconnect.nvlink.nccl_algo=Ring, ...), simulated exactly as `strata
 * run` would, in its own child process (SimGrid: one engine per process,
 * as validate/published.c does). It reports the time and, when the
 * hardware's implementation tuned it, the library's algorithm, protocol
 * and channels.
 *
 * A series is the points of one (file, op, forced configuration) over
 * growing sizes. coll_sweep_falls() lists every pair of sizes a < b of a
 * series whose runs took the same (algorithm, protocol) and where b took
 * less time than a: the non-monotone cases. Across a protocol or
 * algorithm switch the time may fall (the library's choice is an
 * estimate); that is reported separately by the selection check, not as
 * a fall.
 *
 * Used by bench/bench_coll_monotone.c (the sweep over every shipped
 * multi-device file) and tests/test_coll_monotone.c (a subset, asserted).
 *
 * Invariants: a point's algorithm and protocol are static strings or NULL
 * (NULL: no library tuning, e.g. xla's bidir-torus); a failed point
 * (the configuration cannot run there: NVLS without NVLink SHARP) has
 * ok false and its message, and takes no part in the checks.
 */
#ifndef STRATA_BENCH_COLL_SWEEP_H
#define STRATA_BENCH_COLL_SWEEP_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct coll_sweep_point {
    uint64_t bytes;
    bool ok;
    double time_s;
    char algo[24];       /* the row that ran (nccl, bidir-torus, ...) */
    char lib_algo[16];   /* NCCL's / RCCL's algorithm ("Ring"), or "" */
    char lib_proto[16];  /* its protocol ("LL128"), or "" */
    uint32_t channels;   /* its channels, or 0 */
    char message[160];   /* !ok: why */
} coll_sweep_point;

/* One point: `collective op=OP bytes=BYTES devices=N` plus `extra_gen`
 * (e.g. "algo=ring", or NULL) on hw_path with the NULL-terminated --set
 * overrides `sets` (NULL: none). Returns false only when the child could
 * not be run at all (fork, pipe); a configuration the model refuses is
 * p->ok false with the message. */
bool coll_sweep_run(const char *hw_path, const char *const *sets, const char *op, uint32_t devices,
                    const char *extra_gen, uint64_t bytes, coll_sweep_point *p);

/* The sizes of the sweep from lo to hi: every power of two, and with
 * `between` 1.25x, 1.5x and 1.75x of it (rounded down to a multiple of
 * `align`, the element size x the devices where the collective splits the
 * buffer so), ascending, unique; *n their count (g_free). */
uint64_t *coll_sweep_sizes(uint64_t lo, uint64_t hi, bool between, uint64_t align, size_t *n);

/* A fall: points[a] and points[b] (a < b in size) ran the same algorithm
 * and protocol and b took less time, by `drop` (1 - t_b / t_a). */
typedef struct coll_sweep_fall {
    size_t a, b;
    double drop;
} coll_sweep_fall;

/* Every fall of a series sorted by size (pts[0..n)): for each point, the
 * largest earlier time of the same (row, algorithm, protocol) above it by
 * more than `tol` (a fraction, 1e-9 for exact); one entry per later point
 * (against the earlier point it falls most from). g_array of
 * coll_sweep_fall. */
GArray *coll_sweep_falls(const coll_sweep_point *pts, size_t n, double tol);

/* The exact falls (tol 1e-9) of pts[0..n) that also kept their channel
 * count (a fall across NCCL's own channel cut is the library's:
 * tests/test_coll_monotone.c), each printed to stderr after `label`; their
 * number. */
guint coll_sweep_same_channel_falls(const char *label, const coll_sweep_point *pts, size_t n);

#endif
