/*
 * spmd_schedules.h: the schedules of a run's distinct collectives, each
 * built once (strata_coll_schedule) and handed out again; shared by the
 * files of sim/spmd only (spmd.c's plan_collective).
 *
 * A schedule is a pure function of the model, the mesh and its signature
 * (the schedule's arguments: kind, axes, algorithm, input bytes, shift), as
 * spmd.c's decide() assumes too: a chain of like collectives, or the layers
 * of a model, build one.
 *
 * Invariants: the steps kept stay below SPMD_SCHEDULE_CACHE_STEPS (about
 * 100 bytes each; a ring of 1,024 ranks unfolded in steps is a million, and
 * is built again each time rather than kept); a signature's schedule is
 * kept from its first build, never changed.
 */
#ifndef STRATA_SPMD_SCHEDULES_H
#define STRATA_SPMD_SCHEDULES_H

#include <glib.h>
#include <stdint.h>
#include "collective/coll_sched.h"

#define SPMD_SCHEDULE_CACHE_STEPS (1u << 18)

typedef struct spmd_schedules spmd_schedules;

spmd_schedules *spmd_schedules_new(void);
void spmd_schedules_free(spmd_schedules *c);
/* steps (strata_coll_step, emptied first) = the schedule of shape, whose
 * arguments are sig; returns its rounds (strata_coll_schedule's). */
uint32_t spmd_schedules_get(spmd_schedules *c, const uint64_t sig[5], const strata_coll_shape *shape,
                            GArray *steps);
/* The widest round of a schedule's steps (strata_coll_step, in order): the
 * most consecutive steps of one round, i.e. the copies one group moves at
 * once; *at (may be NULL) gets the index of its first step. 0 when steps
 * is empty. */
uint64_t spmd_schedule_widest_round(const GArray *steps, guint *at);

#endif
