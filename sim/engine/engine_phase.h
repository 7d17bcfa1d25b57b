/*
 * engine_phase.h: the arithmetic of a collective's phase, shared by
 * engine.c's one copy and one compute (the files of sim/engine only).
 *
 * A step of a phase (spmd/spmd.h: PHASES) stands for k rounds of its
 * collective's schedule, k = phase->rounds (the engine finds the phase by
 * the expansion's side table: engine_feed.c keeps each op's collective
 * and phase beside it and looks the phase up as it queues the op). The
 * engine runs it as one op of k rounds' work:
 *   copy     k times the bytes as one flow; then, after the flow, waits
 *            until the copy has paid k times the round's latency (the
 *            slowest route's of the round: the step schedule's per-round
 *            waits pace every copy by it), of which the flow paid its own
 *            route's once, and at least k times the round's time alone;
 *            a paced phase (FAST, copies of unequal route latency on a
 *            link: spmd/spmd.h) flows its k rounds' bytes at a rate bounded
 *            to the rounds' pace (engine_phase_flow_rate), so that alone it
 *            ends when the k rounds do (k x the round's time, the round's
 *            copies filled as the engine would share them), not when k
 *            rounds' bytes as one free flow would (whose sharing over the
 *            whole phase is not the rounds'), and what shares its links
 *            sees it for the phase's whole length (before issue 40's wave
 *            9 it flowed one round's bytes and waited: others saw one
 *            round of it); held past that pace by what shares its links,
 *            under equal sharing it then waits the k - 1 rounds' idle
 *            latencies (the round's least copy latency each) that the
 *            steps' rounds leave on the link and its one flow did not,
 *            no more than it was held (engine_phase_copy_until);
 *   compute  (a reduction) k times the flops and the operand bytes, then
 *            what the k rounds would have paid beyond the one execution
 *            (each round max(work, operand latency + bytes)), and k times
 *            the unit's overhead.
 * With no phase (NULL, or rounds 0 or 1) each function is the identity of
 * a single op: the same bytes, no wait, the overhead once.
 *
 * Invariant: pure functions of their arguments, computed in the order and
 * with the expressions the engine has always used, so that results do not
 * change by a bit.
 */
#ifndef STRATA_ENGINE_PHASE_H
#define STRATA_ENGINE_PHASE_H

#include <stdint.h>
#include "hw/hw.h"
#include "spmd/spmd.h"

/* k: the rounds the op stands for (1 without a phase). */
uint32_t engine_phase_rounds(const strata_coll_phase *phase);
/* k x bytes: what its one flow (a copy), or its operands (a compute), move. */
uint64_t engine_phase_bytes(const strata_coll_phase *phase, uint64_t bytes);
/* The bound on the rate of that flow, over a route of `latency` seconds:
 * in a paced phase, k x bytes / (k x the round's time - latency), so that
 * alone it ends when the k rounds do; 0 (unbounded) otherwise. */
double engine_phase_flow_rate(const strata_coll_phase *phase, uint64_t bytes, double latency);
/* k x flops: its work. */
double engine_phase_flops(const strata_coll_phase *phase, double flops);
/* A copy that started at t0 and whose flow (over a route of `latency`
 * seconds) and extras ended at `now`: the time until which it must still
 * wait (`now` or earlier: none). A paced phase's copy held past its pace
 * by what shares its links waits, under equal sharing (`equal`), the
 * rounds' idle latencies its one flow did not (up to k - 1 of the
 * round's least copy latency, round_idle_ps, no more than it was held). */
double engine_phase_copy_until(const strata_coll_phase *phase, double t0, double now, double latency, bool equal);
/* A reduction whose execution of `amount` (engine_compute_amount of its k
 * rounds' flops) on unit u, with `bytes` of operands per round from hw's
 * memory `memory`, is over: what the k rounds would have paid beyond it
 * (0: nothing). */
double engine_phase_compute_alone(const strata_coll_phase *phase, double amount, const strata_compute_spec *u,
                                  const strata_hw *hw, uint32_t memory, uint64_t bytes);
/* k x the unit's overhead. */
double engine_phase_overhead(const strata_coll_phase *phase, double overhead);

#endif
