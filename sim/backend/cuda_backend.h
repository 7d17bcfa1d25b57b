/*
 * cuda_backend.h: extras of the `cuda` backend beyond the backend table:
 * printing the plan of CUDA calls for a trace (works without a GPU).
 */
#ifndef STRATA_CUDA_BACKEND_H
#define STRATA_CUDA_BACKEND_H

#include <stdio.h>
#include "hw/hw.h"
#include "trace/source.h"

/* Writes one line per planned CUDA call (cuda_plan.h) to out. mode: "malloc",
 * "arena" or "async" (else STRATA_ERROR_INPUT listing them). */
bool strata_cuda_print_plan(const strata_hw *hw, strata_source *src, const char *mode, FILE *out,
                            GError **err);

/* True when strata was built with the CUDA toolkit. */
bool strata_cuda_built(void);

#endif
