/*
 * algo_bidir_torus.c: the bidir-torus algorithm (coll_algo.h): XLA's
 * collectives on a TPU slice, the xla implementation's pick
 * (hw/coll_impl_xla.c).
 *
 * A ring each way along every dimension of the group (a DIMS layout: the
 * torus dimensions its mesh axes span, sim/spmd spmd_coll_shape). On one
 * dimension, bidir-ring's schedule (all-reduce, each direction on half
 * the buffer; all-gather and reduce-scatter, each on half of every chunk;
 * its rings fold). On several, every dimension at once (coll_axes,
 * coll_kit_axes.c: the scaling book's factor of n_axes on the bandwidth
 * of a collective over several hardware axes): 2m parts, each walking the
 * dimensions in its own rotation and direction.
 */
#include "collective/coll_kit.h"

static uint32_t bidir_torus_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    return s->m > 1 ? coll_axes(s, shape->in_bytes) : coll_rings(s, shape->in_bytes, true);
}

const strata_coll_algo_ops strata_coll_ops_bidir_torus = {.schedule = bidir_torus_schedule};
