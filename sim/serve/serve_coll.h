/*
 * serve_coll.h: the time of a serving step's library collective (the TP
 * all-reduce where it goes to NCCL, the all-gather and reduce-scatter
 * around an MoE layer under attention DP, the logits' all-gather) as
 * strata's own collective model simulates it: the collective that `strata
 * gen collective op=OP bytes=B devices=TP` generates, expanded over the
 * hardware's devices and run by the engine, as validate --published's
 * collective cases (nccl-tests.ini) and bench/coll_sweep.c run it. On a
 * hardware file with collectives = nccl that is NCCL's algorithm, protocol
 * and channels for the size (its tuning model, nccl_tuning.h), each step
 * scheduled on the file's links; the tuning model's own closed-form time
 * (ncclTopoGetAlgoTime, coll_impl.h estimate_s) only chooses.
 *
 * A simulation runs in a forked child (SimGrid allows one engine per
 * process), on the serving model's hardware when it has `ranks` devices,
 * else on the same model loaded again (its overrides kept) with
 * hardware.devices = ranks (strata_hw_reload: the slice `strata run` takes
 * for a program on fewer devices than the file's).
 *
 * Sizes: a run asks for many sizes (one per step size T), and each
 * simulation costs a fork and an engine run (~20 ms), so a size is
 * simulated only at anchors and interpolated between them: the anchors
 * are a geometric grid (two a factor of two: 2^(k/2) rounded to whole
 * elements) and the bounds of the run of sizes that the simulation runs
 * as it runs the size asked (the row's choice, NCCL's algorithm, protocol
 * and channels, and the shape of the step schedule it builds: rounds,
 * steps, lanes; serve_coll.c choice), found by bisection on that choice,
 * which is cheap (no engine); the time is linear between the two anchors
 * around the size. Under one choice and one schedule shape the steps'
 * bytes grow with the size and the time runs along a line, but not
 * exactly (a chunk rounded to the protocol's grain, NVLS's chunks per
 * channel): bench_serve_coll measures the interpolation against each
 * size's own simulation, median 0.02% and at most 1.35% over 8 H100s
 * (an all-reduce of 14.4 MB), at most 0.02% over 4 and 2 (docs/serving.md,
 * "The TP all-reduce as the simulated collective"). A grid size and a
 * bound are exact (their own simulations).
 *
 * Invariants: every size's time is a pure function of the hardware, the
 * kind, the ranks and the size (the cache changes the cost of asking, not
 * the answer); an anchor is simulated at most once per object.
 */
#ifndef STRATA_SERVE_COLL_H
#define STRATA_SERVE_COLL_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "hw/hw.h"
#include "trace/op.h"

typedef struct strata_serve_coll strata_serve_coll;

/* The collectives over `ranks` (>= 2) ranks of hw (borrowed, outlives the
 * object). */
strata_serve_coll *strata_serve_coll_new(const strata_hw *hw, uint32_t ranks);
void strata_serve_coll_free(strata_serve_coll *c);

/* kind (all-reduce, all-gather or reduce-scatter) with in_bytes of IN on
 * each rank (an all-gather's share, an all-reduce's or reduce-scatter's
 * whole buffer), interpolated between simulated anchors as above; false
 * with err when a simulation fails (its message). */
bool strata_serve_coll_time(strata_serve_coll *c, strata_op_kind kind, uint64_t in_bytes, double *time_s,
                            GError **err);

/* One size simulated, no interpolation (in_bytes as above, a whole number
 * of bf16 elements, and for all-gather and reduce-scatter of ranks x
 * elements in the generated buffer). */
bool strata_serve_coll_simulate(const strata_serve_coll *c, strata_op_kind kind, uint64_t in_bytes, double *time_s,
                                GError **err);

/* The simulations run so far (the anchors). */
uint32_t strata_serve_coll_simulations(const strata_serve_coll *c);
/* What a step is charged for kind at in_bytes: strata_serve_coll_time;
 * should a simulation fail (strata_serve_coll_check at the run's start
 * simulated one size, so it does not on a model that loads), a warning,
 * once, and the collective row's own closed form: NCCL's
 * ncclTopoGetAlgoTime for its pick (estimate_s), else (ideal, xla) ring
 * passes, an all-reduce's two, each (n-1)/n of NCCL's size at ring_bw
 * (the route's bandwidth) plus n-1 latencies ring_lat. */
double strata_serve_coll_charge(strata_serve_coll *c, strata_op_kind kind, uint64_t in_bytes, double ring_bw,
                                double ring_lat);
/* Simulates the collectives a step runs (an all-reduce; under attention
 * DP an all-gather and a reduce-scatter) at one size, 1 MiB: false with
 * err ("--tp N: ...") where the model cannot run them. gather_logits: the
 * step all-gathers the logits too, checked by the row's tuning (as
 * strata_serve_coll_check_tuned; no simulation). */
bool strata_serve_coll_check(strata_serve_coll *c, bool attention_dp, bool gather_logits, GError **err);
/* Whether the hardware's collective row (its NCCL_ALGO / NCCL_PROTO may
 * leave none) tunes those collectives over tp ranks: its error
 * ("--tp N on FILE: ..."). */
bool strata_serve_coll_check_tuned(const strata_hw *hw, uint32_t tp, bool attention_dp, GError **err);

#endif
