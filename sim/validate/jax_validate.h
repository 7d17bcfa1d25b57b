/*
 * jax_validate.h: a jax.profiler trace against the simulator, for
 * `strata validate --against PROFILE.json[.gz] --hw HW.ini` (the command
 * picks this when the file's events are a JAX profile's, kineto_validate.h
 * otherwise).
 *
 * The profile is imported (import/jax_profile.h: one device's XLA ops as
 * computes at their measured durations) and run by the engine on the
 * hardware model. The table compares, per kind of op (copy, collective,
 * op), the measured durations' sum with the simulated stream time of those
 * ops, and the measured span (first op's start to last op's end) with the
 * simulated makespan. Errors are (simulated - measured) / measured. The ops
 * run at their measured times, so the op rows check that the engine adds
 * nothing to them; the span row is what the simulation leaves out: the
 * device's idle time between ops (host dispatch, Python), which strata
 * does not model.
 *
 * Invariant: measured figures come from the file only, simulated ones from
 * one engine run.
 */
#ifndef STRATA_JAX_VALIDATE_H
#define STRATA_JAX_VALIDATE_H

#include <glib.h>
#include <stdbool.h>
#include "hw/hw.h"

typedef struct strata_jax_validation {
    double measured_busy_s, simulated_busy_s;
    double measured_span_s, simulated_makespan_s;
    bool oom;
    char *table;
} strata_jax_validation;

bool strata_jax_validate(const char *path, const strata_hw *hw, strata_jax_validation *v, GError **err);
void strata_jax_validation_clear(strata_jax_validation *v);

#endif
