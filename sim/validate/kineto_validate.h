/*
 * kineto_validate.h: a PyTorch profiler trace against the simulator.
 *
 * The trace is imported (kineto.h) and simulated on a hardware model with
 * the caching allocator on every memory and the kernels at their measured
 * times. Then:
 *  - every memcpy's simulated duration is compared with its measured `dur`
 *    (the k-th copy op of the import is the k-th memcpy of the device with
 *    bytes > 0, in file order), grouped by direction, host memory kind
 *    (pinned or pageable) and size class;
 *  - the simulated reserved bytes of hbm after each alloc and free, less
 *    the segments of the copies' device-end staging buffers (the import's,
 *    not the run's: kineto.h), are compared with the event's Total
 *    Reserved (when the file has it).
 * Errors are (simulated - measured) / measured.
 *
 * Invariant: the measured figures come from the file only; the model's
 * from one engine run.
 */
#ifndef STRATA_KINETO_VALIDATE_H
#define STRATA_KINETO_VALIDATE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw/hw.h"
#include "import/kineto.h"

typedef struct strata_kineto_dir_error {
    uint64_t n;
    double measured_s, simulated_s; /* sums over the copies */
    double median_error;            /* of the per-copy errors */
} strata_kineto_dir_error;

typedef struct strata_kineto_validation {
    strata_kineto_summary sum;
    uint64_t n_copies;
    strata_kineto_dir_error dir[STRATA_KINETO_DIR__COUNT];
    bool has_reserved;              /* the file has Total Reserved */
    uint64_t n_reserved_points;
    uint64_t real_peak_reserved, sim_peak_reserved;
    uint64_t staging_reserved;      /* the staging segments taken off the model's points */
    double reserved_mean_error;     /* mean |error| over the points */
    double reserved_max_error;      /* max |error| */
    bool oom;                       /* the simulation ran out of memory */
    char *table;                    /* the printed report */
} strata_kineto_validation;

/* Validates `path` (device: STRATA_KINETO_DEVICE_AUTO or a Device Id) on
 * hw; false with err. Clear v with strata_kineto_validation_clear(). */
bool strata_kineto_validate(const char *path, int device, const strata_hw *hw,
                            strata_kineto_validation *v, GError **err);
void strata_kineto_validation_clear(strata_kineto_validation *v);

#endif
