/*
 * remat_policy.c: the table of rematerialization policies by name (see
 * remat_policy.h).
 */
#include "workload/remat_policy.h"
#include <string.h>
#include "core/error.h"

/* The policies by name: jax.checkpoint_policies (jax/_src/ad_checkpoint.py)
 * and MaxText's remat_policy (src/MaxText/layers/decoders.py,
 * get_remat_policy: minimal is checkpoint_dots_with_no_batch_dims, full
 * no policy, the save_* ones save_only_these_names of its checkpoint
 * names). */
static const wl_remat_policy policies[] = {
    {"none", WL_REMAT_NONE, NULL, NULL, "no remat: every activation saved"},
    {"everything_saveable", WL_REMAT_NONE, NULL, NULL, "jax: the same as none"},
    {"full", WL_REMAT_FULL, NULL, NULL, "each layer recomputed from its input (jax nothing_saveable; MaxText full)"},
    {"nothing_saveable", WL_REMAT_FULL, NULL, NULL, "jax: the same as full"},
    {"dots", WL_REMAT_DOTS, NULL, NULL, "every dot's output saved, the rest recomputed (jax dots_saveable)"},
    {"dots_saveable", WL_REMAT_DOTS, NULL, NULL, "jax: the same as dots"},
    {"dots_with_no_batch_dims_saveable", WL_REMAT_DOTS_NO_BATCH, NULL, NULL,
     "the projections' outputs saved; attention's batched products recomputed"},
    {"minimal", WL_REMAT_DOTS_NO_BATCH, NULL, NULL, "MaxText: dots_with_no_batch_dims_saveable"},
    {"minimal_flash", WL_REMAT_DOTS_NO_BATCH, "context", NULL, "MaxText: minimal, and the attention's output"},
    {"save_qkv_proj", WL_REMAT_FULL, "query_proj,key_proj,value_proj,qkv_proj", NULL, "MaxText: the q/k/v projections"},
    {"save_out_proj", WL_REMAT_FULL, "out_proj", NULL, "MaxText: the attention's output projection"},
    {"save_dot_except_mlp", WL_REMAT_FULL, "query_proj,key_proj,value_proj,qkv_proj,out_proj", NULL,
     "MaxText: the attention's projections"},
    {"save_dot_except_mlpwi", WL_REMAT_FULL, "query_proj,key_proj,value_proj,qkv_proj,out_proj,mlpwo", NULL,
     "MaxText: the attention's projections and the MLP's down projection"},
    {"save_dot_with_context_except_mlp", WL_REMAT_FULL, "query_proj,key_proj,value_proj,qkv_proj,context,out_proj", NULL,
     "MaxText: the attention's projections and output"},
    {"minimal_offloaded", WL_REMAT_FULL, NULL, "query_proj,key_proj,value_proj,qkv_proj,out_proj,mlpwi_0,mlpwi_1,mlpwi,mlpwo",
     "MaxText: minimal's projections saved in host memory"},
    {"qkv_proj_offloaded", WL_REMAT_FULL, NULL, "query_proj,key_proj,value_proj,qkv_proj",
     "MaxText: the q/k/v projections saved in host memory"},
    {"save_and_offload_only_these_names", WL_REMAT_FULL, NULL, NULL,
     "jax: the checkpoint names of remat_save= on the device, of remat_offload= in host memory"},
};

const wl_remat_policy *wl_remat_policy_find(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(policies); i++)
        if (strcmp(policies[i].name, name) == 0)
            return &policies[i];
    return NULL;
}

const wl_remat_policy *wl_remat_policy_at(guint i)
{
    return i < G_N_ELEMENTS(policies) ? &policies[i] : NULL;
}

bool wl_remat_from_name(const char *name, wl_remat *out)
{
    const wl_remat_policy *p = wl_remat_policy_find(name);
    if (p)
        *out = p->kind;
    return p != NULL;
}

/* A set of the comma-separated names (NULL for NULL or none). */
GHashTable *wl_remat_name_set(const char *names)
{
    if (!names || !*names)
        return NULL;
    GHashTable *set = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    char **split = g_strsplit_set(names, ",:", -1);
    for (char **n = split; *n; n++)
        if (**n)
            g_hash_table_add(set, g_strdup(*n));
    g_strfreev(split);
    return set;
}

/* The checkpoint names a layer's nodes carry (wl_model_checkpoint_name),
 * MaxText's names of the same tensors. */
static const char *const checkpoint_names[] = {"query_proj", "key_proj", "value_proj", "qkv_proj", "out_proj",
                                               "mlpwi_0",    "mlpwi_1",  "mlpwi",      "mlpwo",    "context",
                                               NULL};

bool wl_remat_names_check(const char *owner, const char *key, const char *names, GError **err)
{
    char **split = g_strsplit_set(names, ",:", -1);
    bool ok = true;
    for (char **n = split; ok && *n; n++)
        if (**n && !g_strv_contains(checkpoint_names, *n)) {
            char *known = g_strjoinv(", ", (char **)checkpoint_names);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s: %s: expected checkpoint names separated by ':' from %s, got '%s'", owner, key, known, *n);
            g_free(known);
            ok = false;
        }
    g_strfreev(split);
    return ok;
}
