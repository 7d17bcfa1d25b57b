/*
 * bench_clock.h: the clocks benchmarks time with: process CPU time (what a
 * ratio against a baseline uses, so a busy shared machine does not skew it)
 * and monotonic wall time, both in seconds.
 */
#ifndef STRATA_BENCH_CLOCK_H
#define STRATA_BENCH_CLOCK_H

#include <time.h>

static inline double bench_seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double bench_cpu_seconds(void) { return bench_seconds(CLOCK_PROCESS_CPUTIME_ID); }
static inline double bench_wall_seconds(void) { return bench_seconds(CLOCK_MONOTONIC); }

#endif
