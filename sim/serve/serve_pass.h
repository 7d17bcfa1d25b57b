/*
 * serve_pass.h: one kernel's time as the caller's cost model prices a pass
 * over `elements` elements moving `bytes` (serve_cost.c's stream pass:
 * its launch, the bytes at the stream rate). The tables of kernels a step
 * adds take it to price their entries without knowing the cost model: the
 * decoder's (serve_sampler.h) and an MLA engine row's (serve_mla_kernels.h).
 *
 * Invariant: a pass's time is finite and >= 0 (ctx is the caller's).
 */
#ifndef STRATA_SERVE_PASS_H
#define STRATA_SERVE_PASS_H

#include <stdint.h>

typedef double (*strata_serve_pass_fn)(const void *ctx, uint64_t elements, double bytes);

#endif
