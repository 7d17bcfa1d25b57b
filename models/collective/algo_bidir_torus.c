/*
 * algo_bidir_torus.c: the bidir-torus algorithm (coll_algo.h): XLA's
 * collectives on a TPU slice, the xla implementation's pick
 * (hw/coll_impl_xla.c).
 *
 * torus with a ring each way along every dimension (a DIMS layout):
 * all-reduce, each direction on half the buffer; all-gather and
 * reduce-scatter, each on half of every chunk. On one axis, bidir-ring's
 * schedule. Its rings fold.
 */
#include "collective/coll_kit.h"

static uint32_t bidir_torus_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    return coll_rings(s, shape->in_bytes, true);
}

const strata_coll_algo_ops strata_coll_ops_bidir_torus = {.schedule = bidir_torus_schedule};
