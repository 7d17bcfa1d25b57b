/*
 * host_kernel.h: the CPU work the host backend does for an op, shared with
 * `strata calibrate --backend host` so that what calibrate measures is what
 * replay runs.
 *
 *  - strata_host_now(): CLOCK_MONOTONIC in seconds.
 *  - strata_host_spin_until(): a busy wait to a deadline (compute time=).
 *  - strata_host_flops(): a dependent multiply-add chain over 8 independent
 *    accumulators that performs `flops` floating-point operations (2 per
 *    multiply-add); returns a value the caller must consume.
 *  - strata_host_read(), strata_host_write(): read every 8-byte word of a
 *    compute's inputs, write every byte of its outputs (operand traffic).
 *
 * Invariant: no state; every function is safe to call from any thread.
 */
#ifndef STRATA_HOST_KERNEL_H
#define STRATA_HOST_KERNEL_H

#include <stddef.h>
#include <stdint.h>

double strata_host_now(void);
/* Cost of one strata_host_now() call, measured (seconds). */
double strata_host_clock_cost(void);
void strata_host_spin_until(double deadline_s);
double strata_host_flops(double flops);
uint64_t strata_host_read(const void *p, size_t bytes);
void strata_host_write(void *p, size_t bytes, uint64_t value);

#endif
