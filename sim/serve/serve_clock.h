/*
 * serve_clock.h: the clock a serving GPU's power limit leaves its
 * compute-bound work, iteration by iteration (serve --clock duty, the
 * default where the hardware file gives clock_response): the engine's duty
 * rule (sim/engine/engine_power.h; docs/engine.md, "The power limit's
 * clock") with the GPU's busy share as its input.
 *
 * The GPU's activity x goes through a first-order filter of time constant
 * tau (the file's clock_response):
 *   d(t) = x + (d(t0) - x) e^-(t - t0) / tau     while x is constant,
 * x = 1 while the GPU runs a step's forward pass, 0 while it is idle
 * (between steps, the engine's host time): the busy share of the
 * measurements behind the rule (configs/hw/h100.ini: an 8B prefill GEMM
 * busy 25-50% of the time held the peak clock, d0 = clock_free_duty =
 * 0.70 the busy share at which the power reaches the limit; back-to-back
 * Llama-3-8B prefills, GEMMs and the rest, held sustained_clock).
 * A step is given by its times at the peak clock (peak_s) and at the
 * sustained one (sustained_s): its compute-bound ops' compute time at the
 * peak, the part that scales with the clock (serve_cost.h), is
 *   bound_s = (sustained_s - peak_s) / (1 / floor - 1)
 * (floor = sustained / peak clock). The step runs in n = ceil(peak_s /
 * (tau / 16)) equal pieces, each at the clock the filter gives when it
 * starts:
 *   c = clock / peak = 1 - min(1, max(0, (d - d0) / (1 - d0))) (1 - floor),
 * a piece taking (peak_s + bound_s (1/c - 1)) / n. So a lone step after
 * idle time runs at the peak clock, steps back to back settle at the
 * sustained one.
 *
 * Invariants: 0 <= d <= 1; floor <= c <= 1; a step takes between its time
 * at the peak and at the sustained clock; the same steps at the same times
 * give the same times (simulated time only).
 */
#ifndef STRATA_SERVE_CLOCK_H
#define STRATA_SERVE_CLOCK_H

typedef struct strata_serve_clock strata_serve_clock;

/* tau > 0 s, 0 <= free_duty < 1, 0 < floor <= 1; the GPU idle since 0. */
strata_serve_clock *strata_serve_clock_new(double tau, double free_duty, double floor);
void strata_serve_clock_free(strata_serve_clock *k);

/* A step whose forward pass starts at t (>= the previous one's end),
 * taking peak_s at the peak clock and sustained_s at the sustained one:
 * its time at the clocks the filter gives (see above). */
double strata_serve_clock_step(strata_serve_clock *k, double t, double peak_s, double sustained_s);

/* The filter's output at the end of the last step. */
double strata_serve_clock_duty(const strata_serve_clock *k);

/* The clock / peak of the compute-bound work, weighted by its time, and
 * the least (1 and 1 when there was none). */
void strata_serve_clock_stats(const strata_serve_clock *k, double *mean, double *least);

#endif
