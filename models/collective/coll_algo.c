/*
 * coll_algo.c: the table of collective algorithms (contract in
 * coll_algo.h), looked up by name.
 *
 * STRATA_COLL_ALGOS is the table, one line per row:
 *     X(ID, NAME, KINDS, LAYOUT, FOLDS)
 * ID      the row's file, algo_ID.c, which defines its hooks as
 *         `const strata_coll_algo_ops strata_coll_ops_ID`;
 * NAME    what algo= says; KINDS the collectives it serves (the masks
 *         below); LAYOUT, FOLDS as coll_algo.h says.
 * The rows' order is every list's: messages, help, the choices.
 */
#include "collective/coll_algo.h"
#include <string.h>

/* The kinds of a row. */
#define ALL_REDUCE STRATA_OPK(ALL_REDUCE)
#define REDUCING (STRATA_OPK(ALL_REDUCE) | STRATA_OPK(ALL_GATHER) | STRATA_OPK(REDUCE_SCATTER))
#define EVERY STRATA_OPK_COLLECTIVE

/* clang-format off */
#define STRATA_COLL_ALGOS(X)                                                                                       \
    X(ring,        "ring",        REDUCING,   FLAT, true)                                                         \
    X(bidir_ring,  "bidir-ring",  REDUCING,   FLAT, true)                                                         \
    X(tree,        "tree",        ALL_REDUCE, FLAT, false)                                                        \
    X(direct,      "direct",      EVERY,      FLAT, false)                                                        \
    X(torus,       "torus",       REDUCING,   DIMS, true)                                                         \
    X(nccl_ring,   "nccl-ring",   ALL_REDUCE, FLAT, false)                                                        \
    X(nccl,        "nccl",        REDUCING | STRATA_OPK(ALL_TO_ALL), FLAT, false)                                 \
    X(bidir_torus, "bidir-torus", REDUCING,   DIMS, true)                                                         \
    X(nccl_tree,   "nccl-tree",   ALL_REDUCE, FLAT, false)                                                        \
    X(nccl_nvls_tree, "nccl-nvls-tree", ALL_REDUCE, FLAT, false)                                                  \
    X(nccl_pat,    "nccl-pat",    STRATA_OPK(ALL_GATHER) | STRATA_OPK(REDUCE_SCATTER), FLAT, false)               \
    X(rccl,        "rccl",        REDUCING | STRATA_OPK(ALL_TO_ALL), FLAT, false)                                 \
    X(hierarchical, "hierarchical", ALL_REDUCE, FLAT, true)
/* clang-format on */

#define DECLARE(id, name, kinds, layout, folds) extern const strata_coll_algo_ops strata_coll_ops_##id;
STRATA_COLL_ALGOS(DECLARE)
#undef DECLARE

#define ROW(id, name, kinds, layout, folds)                                                                        \
    static const strata_coll_algo row_##id = {name, kinds, STRATA_COLL_##layout, folds, &strata_coll_ops_##id};
STRATA_COLL_ALGOS(ROW)
#undef ROW

static const strata_coll_algo *const rows[] = {
#define ENTRY(id, name, kinds, layout, folds) &row_##id,
    STRATA_COLL_ALGOS(ENTRY)
#undef ENTRY
        NULL,
};

const char *const strata_coll_algo_choices[] = {
    "auto",
#define CHOICE(id, name, kinds, layout, folds) name,
    STRATA_COLL_ALGOS(CHOICE)
#undef CHOICE
        NULL,
};

const strata_coll_algo *const *strata_coll_algos(void) { return rows; }

const strata_coll_algo *strata_coll_algo_find(const char *name)
{
    for (size_t i = 0; name && rows[i]; i++)
        if (strcmp(rows[i]->name, name) == 0)
            return rows[i];
    return NULL;
}

char *strata_coll_algo_names_of(strata_op_kind kind)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; rows[i]; i++)
        if (strata_coll_algo_serves(rows[i], kind))
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", rows[i]->name);
    return g_string_free(s, FALSE);
}

const strata_coll_algo *strata_coll_algo_lookup(strata_op_kind kind, const char *name, char **message)
{
    const strata_coll_algo *algo = strata_coll_algo_find(name);
    if (algo && strata_coll_algo_serves(algo, kind))
        return algo;
    char *known = strata_coll_algo_names_of(kind);
    *message = g_strdup_printf("expected algo= one of %s for %s, got '%s'", known, strata_op_kind_name(kind),
                               name ? name : "");
    g_free(known);
    return NULL;
}
