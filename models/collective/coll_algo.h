/*
 * coll_algo.h: the table of collective algorithms, looked up by the name
 * a trace writes (algo=NAME), as allocators are.
 *
 * A row (coll_algo.c's STRATA_COLL_ALGOS, one line each) says
 *   name     the name traces write (algo=ring);
 *   kinds    the collectives it serves, a mask of STRATA_OPK() bits
 *            (trace/op_schema.h);
 *   layout   how it lays the group out: FLAT, one ring of all its ranks;
 *            DIMS, the mesh axes the group spans, each a torus dimension
 *            (axes of size 1 dropped), an axis laid along several
 *            dimensions of the machine split into them (sim/spmd
 *            spmd_coll_shape);
 *   folds    whether its rings fold into phases as the schedule is built
 *            (strata_coll_shape.fold: a run of identical rounds written
 *            as one step that stands for them, coll_sched.h); whatever the
 *            row says, the SPMD expansion joins identical rounds that do
 *            not contend into one phase (sim/spmd/spmd.h);
 *   ops      its file's hooks (algo_NAME.c): schedule, the step schedule
 *            of one collective; tune, a cost hook that fills the shape
 *            from the hardware's collective implementation (hw/coll_impl.h:
 *            nccl's choice of algorithm, protocol and channels, and the
 *            launch cost every rank pays), NULL when the schedule needs
 *            nothing of the hardware.
 * An algorithm is one file (its ops) and one row; docs/extending.md walks
 * through adding one. Which algorithm a collective without algo= runs is
 * the hardware's collective implementation's pick (hw/coll_impl.h).
 *
 * The table sits in the models layer, above trace/ (which only reads
 * algo= as a name) and hw/ (whose implementations name their picks), so
 * that whoever checks or runs a collective (the workload generator, the
 * binder, the SPMD expansion) asks it whether a name exists and serves the
 * op's kind.
 *
 * Invariants: names are unique and traces' NAME-like words
 * ([a-z][a-z0-9-]*); every row serves at least one collective kind and
 * has a schedule; the table's order is the order of every list of names
 * (messages, help).
 */
#ifndef STRATA_COLL_ALGO_H
#define STRATA_COLL_ALGO_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "collective/coll_sched.h"
#include "hw/hw.h"
#include "trace/op.h"

/* The schedule being built: the group's layout and the steps so far
 * (coll_kit.h, for the algorithms' files). */
typedef struct strata_coll_sched strata_coll_sched;

typedef enum { STRATA_COLL_FLAT, STRATA_COLL_DIMS } strata_coll_layout;

/* An algorithm's file: its hooks. */
typedef struct strata_coll_algo_ops {
    /* Appends the steps of shape's collective over s's group of 2 ranks
     * or more (a group of one is the table's), in any order of rounds;
     * returns the number of rounds. */
    uint32_t (*schedule)(strata_coll_sched *s, const strata_coll_shape *shape);
    /* The cost hook (NULL: none): fills the shape from hw, for a group of
     * 2 ranks or more (the shape's kind, dims and in_bytes set); false with
     * err (STRATA_ERROR_INPUT) when hw cannot run it so. */
    bool (*tune)(strata_coll_shape *shape, const strata_hw *hw, GError **err);
} strata_coll_algo_ops;

struct strata_coll_algo {
    const char *name;
    uint32_t kinds;
    strata_coll_layout layout;
    bool folds;
    const strata_coll_algo_ops *ops;
};

/* The rows, in the table's order, NULL-terminated. */
const strata_coll_algo *const *strata_coll_algos(void);
/* The row named `name` (NULL: none), or NULL. */
const strata_coll_algo *strata_coll_algo_find(const char *name);
/* True when algo serves collective `kind`. */
static inline bool strata_coll_algo_serves(const strata_coll_algo *algo, strata_op_kind kind)
{
    return (algo->kinds >> kind) & 1u;
}
/* "ring, bidir-ring, direct, torus": the names of the rows that serve kind (g_free). */
char *strata_coll_algo_names_of(strata_op_kind kind);
/* The row of `name` when it serves `kind`; else NULL with *message
 * (g_free) "expected algo= one of NAMES for KIND, got 'NAME'", NAMES the
 * rows that serve kind (the caller puts FILE:LINE before it). */
const strata_coll_algo *strata_coll_algo_lookup(strata_op_kind kind, const char *name, char **message);
/* "auto" (no algo=: the hardware's pick) and every row's name, in the
 * table's order, NULL-terminated: the choices of a parameter that names
 * an algorithm or none (core/params.h). */
extern const char *const strata_coll_algo_choices[];

#endif
