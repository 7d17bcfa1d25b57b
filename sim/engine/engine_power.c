/*
 * engine_power.c: the power limit's clock for each unit from its filtered
 * matrix activity (contract in engine_power.h).
 */
#include "engine/engine_power.h"
#include <glib.h>
#include <math.h>

typedef struct unit_power {
    double tau;       /* clock_response, s; 0: the unit has no rule */
    double free_duty; /* clock_free_duty */
    double floor;     /* sustained / peak clock */
    double duty;      /* the filter's output at `at` */
    double activity;  /* its input since `at` */
    double at;        /* s */
    double clock_s, time_s, least; /* its computes' clock x time, time, and least clock (reported) */
} unit_power;

struct engine_power {
    unit_power *units;
    uint32_t n;
};

engine_power *engine_power_create(const strata_hw *hw, bool sustained)
{
    uint32_t n = strata_hw_compute_count(hw), ruled = 0;
    unit_power *u = g_new0(unit_power, n ? n : 1);
    for (uint32_t i = 0; i < n; i++) {
        const strata_kernel_spec *k = &strata_hw_compute(hw, i)->kernel;
        double floor = strata_hw_compute_clock_ratio(hw, i);
        if (floor >= 1.0 || (!sustained && k->clock_response <= 0))
            continue;
        /* sustained: the filter starts and stays at 1 (its activity is never read) */
        u[i] = (unit_power){.tau = sustained ? INFINITY : k->clock_response,
                            .free_duty = sustained ? 0 : k->clock_free_duty,
                            .floor = floor,
                            .duty = sustained ? 1 : 0, .least = 1};
        ruled++;
    }
    if (!ruled) {
        g_free(u);
        return NULL;
    }
    engine_power *p = g_new(engine_power, 1);
    p->units = u;
    p->n = n;
    return p;
}

void engine_power_free(engine_power *p)
{
    if (!p)
        return;
    g_free(p->units);
    g_free(p);
}

/* The filter's output brought to t (t >= u->at). */
static void advance(unit_power *u, double t)
{
    double x = fmin(u->activity, 1.0); /* the running computes' shares, at most the whole unit */
    if (t > u->at)
        u->duty = strata_hw_duty_after(u->duty, x, t - u->at, u->tau);
    u->at = t;
}

double engine_power_share(double compute_s, double memory_s)
{
    double longer = fmax(compute_s, memory_s);
    return longer > 0 ? compute_s / longer : 0.0;
}

double engine_power_start(engine_power *p, uint32_t unit, double share, double t)
{
    unit_power *u = &p->units[unit];
    if (u->tau <= 0)
        return 1.0;
    advance(u, t);
    u->activity += share;
    return strata_hw_clock_at_duty(u->duty, u->free_duty, u->floor);
}

void engine_power_end(engine_power *p, uint32_t unit, double share, double clock, double t0, double t)
{
    unit_power *u = &p->units[unit];
    if (u->tau <= 0)
        return;
    advance(u, t);
    u->activity = fmax(u->activity - share, 0.0);
    u->clock_s += clock * (t - t0);
    u->time_s += t - t0;
    u->least = fmin(u->least, clock);
}

void engine_power_fill(const engine_power *p, strata_results *r)
{
    for (uint32_t i = 0; p && i < p->n && i < r->compute->len; i++) {
        const unit_power *u = &p->units[i];
        strata_compute_result *c = &g_array_index(r->compute, strata_compute_result, i);
        if (u->tau <= 0)
            continue;
        c->clock_mean = u->time_s > 0 ? u->clock_s / u->time_s : 1.0;
        c->clock_min = u->least;
    }
}
