/*
 * engine_power.h: the clock a GPU's power limit leaves a compute unit, from
 * how busy its matrix work has kept it (the files of sim/engine only).
 *
 * A GPU kept busy reaches its power limit and lowers its clock within about
 * 0.1 s; busy half the time or less it keeps its peak clock
 * (docs/validation.md, "The clock at part load": 1980 MHz at 25% and 50%,
 * 1665 MHz at 75%, 1360-1470 MHz back to back, on an H100 and an H200).
 * A unit whose hardware file gives peak_clock, sustained_clock and
 * clock_response (hw.h) runs each compute at the clock its duty sets when
 * the compute starts:
 *   duty     the unit's matrix activity passed through a first-order filter
 *            of time constant clock_response: d(t) = x + (d(t0) - x) e^-(t-t0)/tau
 *            while the activity x is constant; x is the sum over the
 *            unit's running computes of each one's matrix share (its
 *            work's time at the peak rate over the longer of that and its
 *            operand bytes' time: 1 for a compute-bound op, small for a
 *            memory-bound one), at most 1; 0 while the unit is idle;
 *   clock    peak while d <= clock_free_duty, sustained at d = 1, linear in
 *            between; the compute's work at the unit's peak rates takes
 *            peak / clock times longer (its operand bytes do not change).
 * A compute with time= keeps its given time and adds nothing to x.
 * Invariants: 0 <= duty <= 1 at every unit; a unit without the three keys
 * (and every unit under STRATA_ENGINE_CLOCK_PEAK) runs at the peak: engine_power_create returns NULL when no unit has the rule,
 * and the engine then does exactly what it did before the rule existed.
 * The filter is exact for a piecewise-constant activity: it is advanced
 * at every change (a compute's start and end), in simulated time, so a
 * run is the same on every machine.
 */
#ifndef STRATA_ENGINE_POWER_H
#define STRATA_ENGINE_POWER_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/hw.h"
#include "results/results.h"

typedef struct engine_power engine_power;

/* The rule for hw's units with the three keys; NULL when there is none.
 * sustained: instead, every unit with peak_clock and sustained_clock runs
 * every compute at sustained_clock (a duty of 1 throughout). */
engine_power *engine_power_create(const strata_hw *hw, bool sustained);
void engine_power_free(engine_power *p);

/* A compute of matrix share `share` (0 to 1) starts on `unit` at t: the
 * ratio clock / peak it runs at (1 for a unit without the rule). */
double engine_power_start(engine_power *p, uint32_t unit, double share, double t);
/* That compute, started at t0 at clock / peak `clock`, ends at t. */
void engine_power_end(engine_power *p, uint32_t unit, double share, double clock, double t0, double t);
/* Each ruled unit's clock_mean and clock_min (over its computes' time) into r's compute rows. */
void engine_power_fill(const engine_power *p, strata_results *r);

/* A compute's matrix share: compute_s / max(compute_s, memory_s), 0 when
 * both are 0. */
double engine_power_share(double compute_s, double memory_s);

#endif
