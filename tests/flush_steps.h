/*
 * flush_steps.h: what the GPUDirect flush suites share
 * (tests/test_nccl_flush.c on the nccl row, tests/test_rccl_flush.c on the
 * rccl row; hw/coll_impl_nccl.c nccl_gdr_flush, hw/coll_impl_rccl.c
 * rccl_gdr_flush): the tuning of a collective over two nodes of 8, the
 * check that its schedule's steps across the nodes wait the network step
 * and the flush, and the check that a hardware file's bad flush key is
 * refused naming it.
 *
 * Built into those two executables (CMakeLists.txt, beside testutil.c).
 */
#ifndef STRATA_FLUSH_STEPS_H
#define STRATA_FLUSH_STEPS_H

#include <stdint.h>
#include "hw/coll_impl.h"
#include "hw/hw.h"

/* hw's implementation's tuning of a `kind` of `bytes` over `ranks` ranks,
 * 8 a node (fails the test where it refuses). */
strata_coll_tuning strata_test_flush_tune(strata_hw *hw, strata_op_kind kind, uint32_t ranks, uint64_t bytes);

/* An all-reduce of `bytes` over 2 x 8 ranks on hw, tuned to Simple (and to
 * `algo` where it is not negative), scheduled by the algorithm named
 * `algo_name`: every step between the nodes that is not pipelined behind
 * the chunk before it waits want_s; every other waits nothing; and at
 * least one step waits. */
void strata_test_flush_check_delays(strata_hw *hw, const char *algo_name, int algo, uint64_t bytes, double want_s);

/* Loading the hardware file `relative` (a source path) with `overrides`
 * fails with a message holding `key` and, where not NULL, `also`. */
void strata_test_flush_refused(const char *relative, const char *const *overrides, const char *key,
                               const char *also);

#endif
