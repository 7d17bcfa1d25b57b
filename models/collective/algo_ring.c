/*
 * algo_ring.c: the ring algorithm (coll_algo.h): all-reduce, all-gather,
 * reduce-scatter over the group as one ring (a FLAT layout).
 *
 * All-reduce: reduce-scatter then all-gather around the ring, n-1 rounds
 * each, a rank's chunk of 1/n of the buffer per step; all-gather and
 * reduce-scatter: one of the two (coll_kit.c's rings). Its rings fold.
 */
#include "collective/coll_kit.h"

static uint32_t ring_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    return coll_rings(s, shape->in_bytes, false);
}

const strata_coll_algo_ops strata_coll_ops_ring = {.schedule = ring_schedule};
