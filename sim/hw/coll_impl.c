/*
 * coll_impl.c: the table of collective implementations (contract in
 * coll_impl.h) and the loader's reading of `collectives =` and of the
 * chosen row's parameter block.
 *
 * The table is STRATA_COLL_IMPLS below, one line per row: the row's
 * `strata_coll_impl_ID`, defined in its own file. Its order is the order
 * of messages and help ("nccl, rccl, xla or ideal").
 */
#include "hw/coll_impl.h"
#include <string.h>
#include "hw/hw_internal.h"

#define STRATA_COLL_IMPLS(X)                                                                                       \
    X(nccl)                                                                                                        \
    X(rccl)                                                                                                        \
    X(xla)                                                                                                         \
    X(ideal)

/* The row a model without `collectives =` has. */
#define COLL_IMPL_DEFAULT "ideal"

#define DECLARE(id) extern const strata_coll_impl strata_coll_impl_##id;
STRATA_COLL_IMPLS(DECLARE)
#undef DECLARE

static const strata_coll_impl *const impls[] = {
#define ROW(id) &strata_coll_impl_##id,
    STRATA_COLL_IMPLS(ROW)
#undef ROW
        NULL,
};

const strata_coll_impl *const *strata_coll_impls(void) { return impls; }

const strata_coll_impl *strata_coll_impl_find(const char *name)
{
    for (size_t i = 0; name && impls[i]; i++)
        if (strcmp(impls[i]->name, name) == 0)
            return impls[i];
    return NULL;
}

char *strata_coll_impl_names(void)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; impls[i]; i++)
        g_string_append_printf(s, "%s%s", i == 0 ? "" : impls[i + 1] ? ", " : " or ", impls[i]->name);
    return g_string_free(s, FALSE);
}

const strata_coll_impl *strata_hw_coll_impl(const strata_hw *hw)
{
    return hw->coll_impl ? hw->coll_impl : strata_coll_impl_find(COLL_IMPL_DEFAULT);
}

const void *strata_hw_coll_params(const strata_hw *hw) { return hw->coll_params; }

const char *strata_coll_impl_pick(const strata_hw *hw, strata_op_kind kind, const strata_mesh *mesh, uint32_t mask)
{
    const strata_coll_impl *impl = strata_hw_coll_impl(hw);
    const char *algo = impl->pick ? impl->pick(hw, kind, mesh, mask) : NULL;
    return algo ? algo : strata_coll_impl_find(COLL_IMPL_DEFAULT)->pick(hw, kind, mesh, mask);
}

/* A network between hosts declares no collectives: `collectives` and every
 * row's keys are errors there. */
static bool refuse_on_hosts(const hw_load_ctx *ctx, const char *group, GError **err)
{
    const char *key = strata_keyfile_has_key(ctx->k, group, "collectives") ? "collectives" : NULL;
    for (size_t i = 0; !key && impls[i]; i++)
        for (const strata_coll_impl_key *k = impls[i]->keys; !key && k && k->name; k++)
            if (strata_keyfile_has_key(ctx->k, group, k->name))
                key = k->name;
    if (key)
        hw_fail(ctx, err, group, key, "expected no %s on a network between hosts (the interconnect between "
                "devices declares its collectives)", key);
    return key == NULL;
}

/* Every row's keys, in the table's order: the chosen row's required ones
 * are there, the others' absent. */
static bool keys_match(const hw_load_ctx *ctx, const char *group, const strata_coll_impl *chosen, GError **err)
{
    for (size_t i = 0; impls[i]; i++)
        for (const strata_coll_impl_key *k = impls[i]->keys; k && k->name; k++) {
            bool has = strata_keyfile_has_key(ctx->k, group, k->name);
            if (impls[i] != chosen && has) {
                hw_fail(ctx, err, group, k->name, "expected only with collectives = %s", impls[i]->name);
                return false;
            }
            if (impls[i] == chosen && k->required && !has) {
                hw_fail(ctx, err, group, "collectives", "collectives = %s: expected %s too", chosen->name, k->name);
                return false;
            }
        }
    return true;
}

bool hw_coll_impl_load(const hw_load_ctx *ctx, strata_hw *hw, const char *group, bool hosts, uint32_t domain,
                       GError **err)
{
    if (hosts)
        return refuse_on_hosts(ctx, group, err);
    const strata_coll_impl *impl = strata_coll_impl_find(COLL_IMPL_DEFAULT);
    char *name = hw_get_text(ctx, group, "collectives");
    if (name && !(impl = strata_coll_impl_find(g_strstrip(name)))) {
        char *known = strata_coll_impl_names();
        hw_fail_value(ctx, err, group, "collectives", known, name);
        g_free(known);
    }
    g_free(name);
    if (!impl || !keys_match(ctx, group, impl, err))
        return false;
    hw->coll_impl = impl;
    if (!impl->load)
        return true;
    hw->coll_params = impl->load(ctx, group, domain, err);
    return hw->coll_params != NULL;
}

char *hw_coll_impl_describe(void)
{
    char *known = strata_coll_impl_names();
    char *text = g_strdup_printf("%s: the collective implementation whose algorithm is the default (default %s)",
                                 known, COLL_IMPL_DEFAULT);
    g_free(known);
    return text;
}

void hw_coll_impl_keys(GPtrArray *known, GString *help, const char *indent)
{
    for (size_t i = 0; impls[i]; i++)
        for (const strata_coll_impl_key *k = impls[i]->keys; k && k->name; k++) {
            if (known)
                g_ptr_array_add(known, (gpointer)k->name);
            if (help)
                g_string_append_printf(help, "%s  %s: %s\n", indent, k->name, k->description);
        }
}

bool hw_coll_impl_list(const hw_load_ctx *ctx, const char *group, const char *key, bool algos, uint32_t *mask,
                       GError **err)
{
    *mask = 0;
    char *v = hw_get_text(ctx, group, key);
    if (!v)
        return true;
    /* a leading ^ keeps all but the listed ones, as NCCL's parseList reads NCCL_ALGO and NCCL_PROTO
     * (NVIDIA/nccl v2.27.7-1 src/graph/tuning.cc:79-80 and 89-98: every element set to `unset`, the listed ones
     * to `set`; RCCL's parseList the same, ROCm/rccl @0023b9b0 src/graph/tuning.cc); NCCL's per-function
     * "allreduce:..." prefixes are not read here (refused as a name) */
    char *list = g_strstrip(v);
    bool exclude = list[0] == '^';
    char **names = g_strsplit(list + exclude, ",", -1);
    bool ok = names[0] != NULL;
    uint32_t listed = 0;
    for (char **n = names; ok && *n; n++) {
        strata_nccl_algo a;
        strata_nccl_proto p;
        ok = algos ? strata_nccl_algo_from_name(g_strstrip(*n), &a) : strata_nccl_proto_from_name(g_strstrip(*n), &p);
        listed |= ok ? 1u << (algos ? (unsigned)a : (unsigned)p) : 0;
    }
    uint32_t all = (1u << (algos ? STRATA_NCCL__ALGOS : STRATA_NCCL__PROTOS)) - 1;
    *mask = exclude ? all & ~listed : listed;
    if (!ok)
        hw_fail_value(ctx, err, group, key,
                      algos ? "a list of Tree, Ring, NVLS, NVLS_TREE, PAT, or ^ then those it leaves out"
                            : "a list of LL, LL128, Simple, or ^ then those it leaves out", v);
    else if (!*mask) { /* 0 reads as "all" (NCCL's default): one that leaves none out is refused, not run on all */
        hw_fail(ctx, err, group, key, "expected at least one %s left, got '%s', which leaves out every one",
                algos ? "algorithm" : "protocol", v);
        ok = false;
    }
    g_strfreev(names);
    g_free(v);
    return ok;
}

bool hw_coll_impl_word(const hw_load_ctx *ctx, const char *group, const char *key, const char *const *names,
                       unsigned n_names, unsigned def, const char *expected, unsigned *out, GError **err)
{
    *out = def;
    char *v = hw_get_text(ctx, group, key);
    bool ok = v == NULL;
    for (unsigned i = 0; v && i < n_names; i++)
        if (strcmp(g_strstrip(v), names[i]) == 0) {
            *out = i;
            ok = true;
        }
    if (!ok)
        hw_fail_value(ctx, err, group, key, expected, v);
    g_free(v);
    return ok;
}

bool hw_coll_impl_cpu(const hw_load_ctx *ctx, const char *group, const char *key, strata_nccl_cpu def,
                      strata_nccl_cpu *out, GError **err)
{
    static const char *const names[] = {"intel", "amd", "arm"};
    unsigned i;
    bool ok = hw_coll_impl_word(ctx, group, key, names, G_N_ELEMENTS(names), def, "intel, amd or arm", &i, err);
    *out = (strata_nccl_cpu)i;
    return ok;
}
