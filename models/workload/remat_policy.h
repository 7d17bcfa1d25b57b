/*
 * remat_policy.h: the rematerialization policies by the names JAX and
 * MaxText give them (jax.checkpoint_policies, MaxText's remat_policy), as
 * a table: each name's kind (what a group saves) and the checkpoint names
 * it saves on the device or in host memory. autodiff.h applies them.
 *
 * Invariants: the table's names are distinct; a policy's save and offload
 * lists are comma-separated checkpoint names, NULL for none.
 */
#ifndef STRATA_WL_REMAT_POLICY_H
#define STRATA_WL_REMAT_POLICY_H

#include <glib.h>
#include <stdbool.h>

/* What a rematerialized group saves (jax.checkpoint_policies): NONE
 * everything (no remat), FULL what crosses group boundaries
 * (nothing_saveable), DOTS also every dot's output (dots_saveable),
 * DOTS_NO_BATCH also the outputs of dots without batch dimensions
 * (dots_with_no_batch_dims_saveable: the projections, not attention's
 * Q K^T and P V); with any of the last three, also the outputs of the
 * nodes whose checkpoint names wl_model_remat_names() lists
 * (save_only_these_names). */
typedef enum { WL_REMAT_NONE, WL_REMAT_FULL, WL_REMAT_DOTS, WL_REMAT_DOTS_NO_BATCH } wl_remat;

/* A policy by the name JAX or MaxText gives it (wl_remat_policy_find):
 * its kind and the checkpoint names it saves (comma-separated; NULL:
 * none). */
typedef struct wl_remat_policy {
    const char *name;
    wl_remat kind;
    const char *save;
    const char *offload; /* checkpoint names saved in host memory (NULL: none) */
    const char *summary;
} wl_remat_policy;

bool wl_remat_from_name(const char *name, wl_remat *out);
/* The policy called name (NULL: none such); policies in table order, i
 * from 0 until NULL. */
const wl_remat_policy *wl_remat_policy_find(const char *name);
const wl_remat_policy *wl_remat_policy_at(guint i);
/* A set of the comma- (or colon-) separated names, owned strings (NULL for
 * NULL or none). */
GHashTable *wl_remat_name_set(const char *names);
/* Whether every name of names (as wl_remat_name_set splits them) is a
 * checkpoint name the generators give (MaxText's: query_proj, ...,
 * context); false with err naming key and the first other name. */
bool wl_remat_names_check(const char *owner, const char *key, const char *names, GError **err);

#endif
