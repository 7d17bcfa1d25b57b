/*
 * spmd_shape.h: what the files of sim/spmd share about a collective of a
 * program before its ops exist: its shape and algorithm (spmd.c expands
 * it, spmd_classes.c checks its symmetries), and the finding of the
 * classes (spmd_classes.h).
 *
 * Invariant: spmd_coll_shape() is a pure function of the model, the mesh
 * and the checked op, so that the classes are found on the very schedules
 * the expansion then builds.
 */
#ifndef STRATA_SPMD_SHAPE_H
#define STRATA_SPMD_SHAPE_H

#include "collective/coll_algo.h"
#include "core/mesh.h"
#include "hw/hw.h"
#include "spmd/spmd_classes.h"
#include "trace/check.h"
#include "trace/source.h"

/* The algorithm of collective `op` over the mesh's axes (*mask): its
 * algo=, else the model's collective implementation's pick; NULL with *why
 * (g_free) "expected algo= one of ..." when the table has none that serves
 * the op. */
const strata_coll_algo *spmd_coll_algo(const strata_hw *hw, const strata_mesh *mesh, const strata_op *op,
                                       uint32_t *mask, char **why);
/* The shape of collective `op` (refs: what the checker resolved of it) on
 * the axes `mask`, run by `algo`, tuned by the algorithm's hook; fold: the
 * PHASES expansion's folded rings. False with *why (g_free), without a
 * location, when the hook refuses it. */
bool spmd_coll_shape(const strata_hw *hw, const strata_mesh *mesh, const strata_op *op, const strata_op_refs *refs,
                     const strata_coll_algo *algo, uint32_t mask, bool fold, strata_coll_shape *sh, char **why);

/* The classes of the program `in` reads (rewound before and after: the
 * program is read once more, checked, ops not kept) on hw: NULL when it
 * has none but the devices themselves (one device, no mesh, device= ops,
 * explicit instances, host memories, no symmetry), or when the program is
 * bad input (the expansion then says so, on its line). With approx, a
 * rotation that maps every step but not every route onto its image's is a
 * generator too (strata_spmd_classes_exact() then says false). *widest
 * (may be NULL) gets the most copies one round of the program's
 * collectives moves at once over all its groups when every device runs it
 * (0 when the scan stops short: bad input, device= ops, ...). */
strata_spmd_classes *spmd_classes_find(strata_source *in, const strata_hw *hw, bool approx, uint64_t *widest);
/* The representative of directed link key (2 x link + forward). */
uint32_t spmd_classes_key_rep(const strata_spmd_classes *c, uint32_t key);
/* Approximate classes: the copies on rep_key's orbit weigh at least scale
 * (spmd_classes.h: strata_spmd_link_scale). */
void spmd_classes_raise_scale(strata_spmd_classes *c, uint32_t rep_key, double scale);
void spmd_classes_free(strata_spmd_classes *c);
/* The lanes of the representatives that stand for each device's lanes in
 * a collective of schedule `steps` over the mesh axes `mask`: map[d x
 * n_lanes + L] is the lane L' such that d's lane L does at every date what
 * lane L' of d's representative does (a symmetry that moves d onto its
 * representative moves the collective's lanes with it: lane_map; NCCL's
 * rail rings onto one another). Lanes no step names keep their number. A
 * new array (g_free), or NULL where some generator maps this schedule's
 * lanes onto no permutation (not a symmetry of it: none found so). */
uint32_t *spmd_classes_lane_maps(const strata_spmd_classes *c, const strata_mesh *mesh, uint32_t mask,
                                 const GArray *steps, uint32_t n_lanes);
/* True when device is its class's representative. */
static inline bool spmd_classes_is_rep(const strata_spmd_classes *c, uint32_t device)
{
    return strata_spmd_class_rep(c, device) == device;
}

#endif
