/*
 * repeats.c: medians and ranges of repeated measurements (see repeats.h).
 */
#include "repeats.h"
#include <glib.h>
#include <stdlib.h>

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(const double *v, int n)
{
    double *sorted = g_memdup2(v, sizeof *v * (size_t)n);
    qsort(sorted, (size_t)n, sizeof *sorted, compare_double);
    double m = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    g_free(sorted);
    return m;
}

void bench_range(const double *v, int n, double *lo, double *hi)
{
    *lo = *hi = v[0];
    for (int i = 1; i < n; i++) {
        *lo = MIN(*lo, v[i]);
        *hi = MAX(*hi, v[i]);
    }
}
