/*
 * algo_torus.c: the torus algorithm (coll_algo.h): all-reduce, all-gather,
 * reduce-scatter as a ring along each dimension in turn (a DIMS layout:
 * the mesh axes the group spans).
 *
 * Reduce-scatter along dims 0..m-1, then all-gather back m-1..0 (coll_kit.c's
 * rings over the layout); one dimension is the ring. Its rings fold.
 */
#include "collective/coll_kit.h"

static uint32_t torus_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    return coll_rings(s, shape->in_bytes, false);
}

const strata_coll_algo_ops strata_coll_ops_torus = {.schedule = torus_schedule};
