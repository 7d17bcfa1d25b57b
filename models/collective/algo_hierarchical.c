/*
 * algo_hierarchical.c: the hierarchical algorithm (coll_algo.h): a
 * collective over several scale-up domains in two levels, as XLA runs a
 * data-parallel all-reduce across TPU slices (multislice): "Reduce Scatter
 * grads on fast network -> All Reduce across slow -> All Gather on faster
 * network" (AI-Hypercomputer/maxtext docs/guides/optimization/sharding.md;
 * "XLA will perform efficient hierarchical collectives ... that
 * communicate the minimal amount of information over the slower upper
 * layer of the network"). The xla implementation's pick for a group that
 * spans domains.
 *
 * schedule: the group laid out as a torus of two dimensions, the domain's
 * ranks first (m of them, stride 1) and the domains second (D, stride m):
 * a reduce-scatter along the domain's ring, leaving each rank 1/m of the
 * buffer reduced over its domain; then along the ring of the ranks of its
 * local index in every domain, over the network (the all-reduce across,
 * in its reduce-scatter and all-gather halves); then the all-gather back
 * inside the domain. Each ring is bidirectional, half the data each way,
 * as XLA's rings are (bidir-torus), and the network carries 1/m of what a
 * flat ring would put on it. All-reduce only: an all-gather's or
 * reduce-scatter's chunks of one local rank across domains are not
 * contiguous in its buffer, which the rings' levels need (the xla
 * implementation keeps bidir-torus for them). One domain (or no regular
 * one): the group's one ring, bidirectional (bidir-ring).
 */
#include "collective/coll_kit.h"

static uint32_t hierarchical_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    uint32_t m = s->domain;
    if (m > 1 && m < s->n) {
        s->m = 2;
        s->dims[0] = m;
        s->dims[1] = s->n / m;
        s->stride[0] = 1;
        s->stride[1] = m;
    }
    return coll_rings(s, shape->in_bytes, true);
}

const strata_coll_algo_ops strata_coll_ops_hierarchical = {.schedule = hierarchical_schedule};
