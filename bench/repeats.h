/*
 * repeats.h: the statistics benchmarks print over repeated measurements:
 * the median of a run's repeats and their range. Inputs are left as they
 * were, so repeats stay paired with their baselines.
 */
#ifndef STRATA_BENCH_REPEATS_H
#define STRATA_BENCH_REPEATS_H

/* The median of v[0..n) (n >= 1): the middle value, or the mean of the two
 * middle values when n is even. */
double bench_median(const double *v, int n);
/* The smallest and largest of v[0..n) (n >= 1). */
void bench_range(const double *v, int n, double *lo, double *hi);

#endif
