/*
 * algo_bidir_ring.c: the bidir-ring algorithm (coll_algo.h): ring in both
 * directions at once over the group as one ring (a FLAT layout).
 *
 * All-reduce: two half-size rings in opposite directions (the first half
 * of the buffer one way on lane 0, the second the other way on lane 1);
 * all-gather and reduce-scatter: a ring each way, each on half of every
 * chunk (lanes 0 and 2). Its rings fold.
 */
#include "collective/coll_kit.h"

static uint32_t bidir_ring_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    return coll_rings(s, shape->in_bytes, true);
}

const strata_coll_algo_ops strata_coll_ops_bidir_ring = {.schedule = bidir_ring_schedule};
