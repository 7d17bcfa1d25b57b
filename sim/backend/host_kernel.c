/*
 * host_kernel.c: the CPU work of the host backend (see host_kernel.h).
 *
 * The multiply-add chain keeps 8 accumulators so that the loop is bound by
 * the floating-point units, not by one dependency chain; the constants keep
 * every value finite (x -> 0.999999 x + 1e-6 converges to 1).
 */
#include "backend/host_kernel.h"

#include <string.h>
#include <time.h>

double strata_host_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double strata_host_clock_cost(void)
{
    enum { N = 1000 };
    double t0 = strata_host_now(), t = t0;
    for (int i = 0; i < N; i++)
        t = strata_host_now();
    return (t - t0) / N;
}

void strata_host_spin_until(double deadline_s)
{
    while (strata_host_now() < deadline_s)
        ;
}

double strata_host_flops(double flops)
{
    double a[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const double m = 0.999999, c = 1e-6;
    uint64_t iters = flops > 0 ? (uint64_t)(flops / 16.0 + 0.5) : 0;
    for (uint64_t i = 0; i < iters; i++)
        for (int j = 0; j < 8; j++)
            a[j] = a[j] * m + c;
    return a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
}

uint64_t strata_host_read(const void *p, size_t bytes)
{
    const unsigned char *b = p;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, w[4];
    size_t i = 0;
    for (; i + 32 <= bytes; i += 32) {
        memcpy(w, b + i, 32);
        s0 += w[0];
        s1 += w[1];
        s2 += w[2];
        s3 += w[3];
    }
    for (; i < bytes; i++)
        s0 += b[i];
    return s0 + s1 + s2 + s3;
}

void strata_host_write(void *p, size_t bytes, uint64_t value)
{
    memset(p, (int)(value & 0xff), bytes);
}
