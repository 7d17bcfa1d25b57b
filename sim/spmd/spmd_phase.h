/*
 * spmd_phase.h: which rounds of a collective's schedule the SPMD expansion
 * joins into one phase, and what each round of a phase costs alone (the
 * PHASES mode of spmd.h); shared by the files of sim/spmd only.
 *
 * Whether a phase is exact follows the engine's sharing rule. Rounds that
 * repeat the same moves make one phase when no copy of the round contends:
 * every copy's bottleneck, min over its links of bandwidth / (copies of the
 * round on that link direction), is the same for all, so that max-min
 * sharing gives every copy exactly that rate and k such rounds take what
 * one flow per copy of k times the bytes takes, plus k times the round's
 * latency (the slowest copy's route, which the step schedule's per-round
 * waits make every copy wait for). And no two copies of unequal route
 * latency meet on a link: the copy of the shorter route starts flowing
 * first and has the link to itself until the other arrives (and under
 * [hardware] flow_sharing = latency SimGrid's CM02 shares the link in
 * inverse proportion to each flow's route latency), so equal counts do not
 * make equal times there. Copies of equal shares but unequal bytes (by
 * more than a byte) on a link make a phase too, its round alone their
 * max-min filling from a common start (the smaller ends first and leaves
 * the link to the larger: spmd_fill_run), not the largest over its share.
 *
 * One per-round link accounting (count_links in spmd_phase.c: the round's
 * copies on each link direction, over every group, and whether copies of
 * unequal route latency meet) serves both questions the expansion asks of
 * a round: how many copies meet on its busiest link direction (spmd.c's
 * limit on a round's width) and whether it contends.
 *
 * A phase's copy is one flow standing for k rounds: alone on its links it
 * takes the k rounds' time exactly; beside another collective on the same
 * links it does not. It carries its k rounds' bytes as one flow and then
 * its k reductions, where the steps' rounds each wait for the round's
 * slowest copy and then reduce, leaving their links to the other
 * collective in between: the two collectives meet round by round in the
 * steps and averaged over whole phases in the phase (the backward of an
 * FSDP step, a reduce-scatter on one stream beside an all-gather on
 * another: docs/multi-device.md, "fast against steps: what differs,
 * measured"). Ops of one stream run one after another, so collectives can
 * only run at once where the program issues them on two streams or more;
 * such a program keeps every round as it is (spmd_phases_allowed), but
 * under FAST's approximate classes, whose rounds on the quotient are not
 * the steps' either (each pays round 1's error: docs/classes.md).
 *
 * Invariants: pure functions of the model, the schedule and the round, but
 * for the accounting's scratch (one entry per link direction, reused: a
 * stamp per count tells a fresh entry from a stale one).
 */
#ifndef STRATA_SPMD_PHASE_H
#define STRATA_SPMD_PHASE_H

#include "collective/coll_sched.h"
#include "core/mesh.h"
#include "hw/hw.h"
#include "spmd/spmd.h"
#include "spmd/spmd_shape.h"

/* Whether the expansion in `mode` may join rounds into phases: not in
 * STEPS, nor for a program whose collectives are issued on two streams or
 * more (read from in's start to its end, its first error ending the
 * reading, and left rewound) unless `classes` are approximate. */
bool spmd_phases_allowed(strata_source *in, strata_spmd_collectives mode, const strata_spmd_classes *classes);

/* The accounting's scratch, for one model. */
typedef struct spmd_links spmd_links;
spmd_links *spmd_links_new(const strata_hw *hw);
void spmd_links_free(spmd_links *l);

/* One round of the current collective: steps[first, end) of its schedule
 * (all of round steps[first].round), run by every group of the mesh's axes
 * `mask` over the model's devices. */
typedef struct spmd_round {
    const strata_coll_step *steps;
    guint first, end;
    const strata_mesh *mesh;
    uint32_t mask;
    uint32_t devices;
} spmd_round;

/* The first device of every group: those of rank 0. */
static inline bool spmd_group_leader(const strata_mesh *mesh, uint32_t mask, uint32_t device)
{
    return strata_mesh_rank(mesh, mask, device) == 0;
}
/* The rounds a step of the schedule stands for (folded: strata_coll_step.rounds). */
static inline uint32_t spmd_step_rounds(const strata_coll_step *st) { return st->rounds > 1 ? st->rounds : 1; }
/* The first i of k shares of total bytes: total * i / k (a folded run's
 * rounds done one by one, spmd.c). */
static inline uint64_t share_of(uint64_t total, uint32_t k, uint32_t i)
{
    return (uint64_t)((unsigned __int128)total * i / k);
}
/* The most a copy of the step moves in one of its rounds. */
uint64_t spmd_round_bytes_max(const strata_coll_step *st);

/* The most copies of the round on one link direction (0: none crosses a link). */
uint32_t spmd_round_most_on_link(spmd_links *l, const spmd_round *r);
/* The rounds from r's, the schedule's round `round` of n_rounds (its
 * steps are steps[0..len)), that make one phase: the rounds after it whose
 * steps are, in order, the same moves (or the rounds r's folded run stands
 * for, when `sub`, the rounds of that run done one by one, is 0), when r
 * does not contend (with mixed_ok, copies of unequal route latency may meet
 * on a link: FAST); 1 otherwise. With more than 1, *phase holds them and
 * what each round costs (spmd.h's strata_coll_phase), a handshake copy's
 * flag included, and hs[0] (when the round has handshake copies whose
 * flag takes one flight; else zeroed) the phase of such a copy's data:
 * the round less its flag, which then runs paced by its own route (a flag
 * phase of latency 0), hs[1] the same of polled ones (coll_sched.h);
 * else all are zeroed. */
/* lane_ps[0..n_lanes): each lane's copies' time alone in a round of the
 * phase, the most (0: a lane without copies, or no phase;
 * spmd_lane_phase). */
uint32_t spmd_phase_rounds(spmd_links *l, const spmd_round *r, guint len, uint32_t round, uint32_t n_rounds,
                           uint32_t sub, bool mixed_ok, strata_coll_phase *phase, strata_coll_phase hs[2],
                           uint64_t *lane_ps, uint32_t n_lanes);
/* The phase of a reduce step's copy in an uncontended phase ph (not
 * paced; no fused reduction, no flag) whose lane's copies alone take less
 * than the round (lane_ps, spmd_phase_rounds): ph timed by its lane
 * (*own, true); false otherwise (ph itself). The step schedule's round
 * ends when every lane's copy and reduction have; a lane whose copies are
 * smaller than the round's largest (XLA's multi-axis collective,
 * coll_kit_axes.c: 2m parts, each on a ring of its own size) reduces
 * right after its own copy, beside the larger copies still flowing; timed
 * by the round's slowest copy, every lane's reductions of the phase's k
 * rounds met on the memory at once (a 3x4x5 all-reduce of 64 MiB: 413.8
 * us against the steps' 390.3). */
bool spmd_lane_phase(const strata_coll_phase *ph, const strata_coll_step *st, const uint64_t *lane_ps,
                     strata_coll_phase *own);
/* The leads of the phase spmd_phase_rounds() decided last, where its
 * rounds ran as a pipeline (spmd_fill_rounds' dev_end: the steps' waits let
 * devices far on a ring from its hot link end first): into lead (an entry
 * per strata_hw_devices), at each representative's, the most that a device
 * of its class (classes NULL: each its own) ends the phase before the last
 * device, in ps; false (all 0) where the rounds were not pipelined (no
 * paced phase, or rounds from a common start). */
bool spmd_phase_leads(const spmd_links *l, const strata_spmd_classes *classes, uint64_t *lead);
/* Approximate classes (spmd.h's FAST): raises the scale of each orbit that
 * r's copies into representatives cross to the load of its most loaded
 * link over those crossings (spmd_classes.h: strata_spmd_link_scale). */
void spmd_round_scale(spmd_links *l, const spmd_round *r, strata_spmd_classes *c);

#endif
