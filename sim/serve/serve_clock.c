/*
 * serve_clock.c: the power limit's clock of a serving GPU, step by step
 * (serve_clock.h).
 */
#include "serve/serve_clock.h"
#include "hw/hw.h"
#include <glib.h>
#include <math.h>

enum { PIECES_PER_TAU = 16, MAX_PIECES = 1 << 16 };

struct strata_serve_clock {
    double tau, free_duty, floor;
    double duty; /* the filter's output at `at` */
    double at;   /* s: the end of the last step's GPU work */
    double clock_s, bound_s, least;
};

strata_serve_clock *strata_serve_clock_new(double tau, double free_duty, double floor)
{
    strata_serve_clock *k = g_new0(strata_serve_clock, 1);
    k->tau = tau > 0 ? tau : 1e-9;
    k->free_duty = fmin(fmax(free_duty, 0.0), 0.999);
    k->floor = floor > 0 && floor <= 1 ? floor : 1.0;
    k->least = 1.0;
    return k;
}

void strata_serve_clock_free(strata_serve_clock *k)
{
    g_free(k);
}

double strata_serve_clock_step(strata_serve_clock *k, double t, double peak_s, double sustained_s)
{
    if (t > k->at) /* idle since the last step: x = 0 */
        k->duty = strata_hw_duty_after(k->duty, 0.0, t - k->at, k->tau);
    k->at = fmax(k->at, t);
    if (peak_s <= 0)
        return 0;
    double bound_s = k->floor < 1.0 ? (sustained_s - peak_s) / (1.0 / k->floor - 1.0) : 0.0;
    bound_s = fmin(fmax(bound_s, 0.0), peak_s);
    double piece = k->tau / PIECES_PER_TAU, n = fmin(fmax(ceil(peak_s / piece), 1.0), MAX_PIECES), total = 0;
    for (int i = 0; i < (int)n; i++) {
        double c = strata_hw_clock_at_duty(k->duty, k->free_duty, k->floor), dt = (peak_s + bound_s * (1.0 / c - 1.0)) / n;
        k->duty = strata_hw_duty_after(k->duty, 1.0, dt, k->tau); /* busy */
        total += dt;
        if (bound_s > 0) {
            k->clock_s += bound_s / n; /* c times its time, bound_s / (c n) */
            k->bound_s += bound_s / (c * n);
            k->least = fmin(k->least, c);
        }
    }
    k->at += total;
    return total;
}

double strata_serve_clock_duty(const strata_serve_clock *k)
{
    return k->duty;
}

void strata_serve_clock_stats(const strata_serve_clock *k, double *mean, double *least)
{
    *mean = k->bound_s > 0 ? k->clock_s / k->bound_s : 1.0;
    *least = k->least;
}
