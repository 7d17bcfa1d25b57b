/*
 * donate.c: `donate`, buffer donation as jax.jit(donate_argnums=...) does it:
 * an output of a compute reuses the storage of an input the trace marks as
 * donated (`compute ... in=w,g out=new_w donate=w`), so the peak counts the
 * pair once.
 *
 * Rewrite, for each compute with donate=: each donated input A is paired
 * with the first output C, in out= order, that is not paired yet, lives in
 * the same memory, is no larger than A, and is fresh (allocated before this
 * compute and not touched since). Then:
 *   - C's alloc is dropped; from this compute on, C is written as A (the
 *     compute becomes in=...A... out=A), so C's later uses and free use A's
 *     storage;
 *   - A's own free, if any, is dropped (its storage lives on as C);
 *   - the pairing is removed from donate=; an unpaired donation stays.
 * Errors (STRATA_ERROR_INPUT naming the trace line): a donated buffer used
 * again after the compute (JAX: "buffer has been deleted or donated"), or a
 * new buffer named A allocated while C lives on under that name.
 * A first pass finds the pairs; the second renames.
 */
#include <string.h>
#include "core/error.h"
#include "policy/policy.h"
#include "policy/rewrite.h"

typedef struct donate_policy {
    strata_rewrite_plan *plan;    /* drops: C's alloc, A's free */
    GHashTable *rename;           /* instance id of C -> A's name (owned) */
    GHashTable *donated;          /* instance id of A -> line of the donating compute */
    strata_buffer_table *buffers; /* second pass */
    GHashTable *active;           /* names (borrowed from rename) now holding a donated output */
    char *origin;
} donate_policy;

#define ID(x) ((gpointer)(guintptr)((x) + 1))

static void add_name(void *ud, const char *name, bool writes)
{
    (void)writes;
    g_ptr_array_add(ud, (gpointer)name);
}

/* The buffers op names: its operands (rewrite.h), or the buffer it frees. */
static GPtrArray *op_buffers(const strata_op *op)
{
    GPtrArray *all = g_ptr_array_new();
    if (op->kind == STRATA_OP_FREE)
        g_ptr_array_add(all, (gpointer)op->name);
    else
        strata_op_operands(op, add_name, all);
    return all;
}

static bool donate_plan(void *self, strata_source *in, GError **err)
{
    donate_policy *d = self;
    strata_buffer_table *t = strata_buffer_table_new();
    GHashTable *touched = g_hash_table_new(g_direct_hash, g_direct_equal); /* instance ids touched */
    const strata_op *op;
    int r;
    uint64_t index = 0;
    bool ok = true;
    while (ok && (r = strata_source_next(in, &op, err)) == 1) {
        /* Uses of donated buffers after their donation. */
        {
            GPtrArray *all = op_buffers(op);
            for (guint i = 0; i < all->len && ok; i++) {
                const strata_buffer_info *b = strata_buffer_table_lookup(t, g_ptr_array_index(all, i));
                if (!b)
                    continue;
                gpointer line = g_hash_table_lookup(d->donated, ID(b->id));
                if (line && op->kind == STRATA_OP_FREE) {
                    strata_rewrite_plan_drop(d->plan, index);
                } else if (line) {
                    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                                "%s:%" G_GUINT64_FORMAT ": policy donate: '%s' was donated at line %" G_GUINT64_FORMAT
                                " and cannot be used again",
                                d->origin, op->line, b->name, (uint64_t)GPOINTER_TO_SIZE(line) - 1);
                    ok = false;
                }
            }
            g_ptr_array_free(all, TRUE);
        }
        if (ok && op->kind == STRATA_OP_COMPUTE && op->n_donates > 0) {
            GHashTable *paired = g_hash_table_new(g_direct_hash, g_direct_equal);
            for (uint32_t i = 0; i < op->n_donates; i++) {
                const strata_buffer_info *a = strata_buffer_table_lookup(t, op->donates[i]);
                if (!a)
                    continue;
                for (uint32_t j = 0; j < op->n_outs; j++) {
                    const strata_buffer_info *c = strata_buffer_table_lookup(t, op->outs[j]);
                    if (!c || c == a || g_hash_table_contains(paired, ID(c->id)) ||
                        g_hash_table_contains(touched, ID(c->id)) || c->size > a->size ||
                        g_strcmp0(c->memory, a->memory) != 0)
                        continue;
                    g_hash_table_add(paired, ID(c->id));
                    strata_rewrite_plan_drop(d->plan, c->alloc_index);
                    g_hash_table_insert(d->rename, ID(c->id), g_strdup(a->name));
                    g_hash_table_insert(d->donated, ID(a->id), GSIZE_TO_POINTER((gsize)op->line + 1));
                    break;
                }
            }
            g_hash_table_destroy(paired);
        }
        if (ok && op->kind != STRATA_OP_FREE) {
            GPtrArray *all = op_buffers(op);
            for (guint i = 0; i < all->len; i++) {
                const strata_buffer_info *b = strata_buffer_table_lookup(t, g_ptr_array_index(all, i));
                if (b)
                    g_hash_table_add(touched, ID(b->id));
            }
            g_ptr_array_free(all, TRUE);
        }
        strata_buffer_table_feed(t, index, op);
        index++;
    }
    g_hash_table_destroy(touched);
    strata_buffer_table_free(t);
    return ok && r == 0;
}

static bool donate_map(void *self, uint64_t index, const strata_op *op, strata_rewrite_queue *q, GError **err)
{
    donate_policy *d = self;
    strata_buffer_table *t = d->buffers;
    if (op->kind == STRATA_OP_ALLOC && g_hash_table_contains(d->active, op->name)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%" G_GUINT64_FORMAT ": policy donate: '%s' is allocated while a donated output still "
                    "lives in its storage under that name; rename one of them",
                    d->origin, op->line, op->name);
        return false;
    }
    if (strata_rewrite_plan_dropped(d->plan, index)) {
        strata_buffer_table_feed(t, index, op);
        return true;
    }
    strata_op out;
    strata_op_copy(&out, op);
    GPtrArray *list = op_buffers(op);
    GHashTable *targets = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < list->len; i++) {
        const char *name = g_ptr_array_index(list, i);
        const strata_buffer_info *b = strata_buffer_table_lookup(t, name);
        const char *to = b ? g_hash_table_lookup(d->rename, ID(b->id)) : NULL;
        if (to) {
            strata_op_rename_buffer(&out, name, to);
            g_hash_table_add(targets, (gpointer)to);
            if (op->kind == STRATA_OP_FREE)
                g_hash_table_remove(d->active, to);
            else
                g_hash_table_add(d->active, (gpointer)to);
        }
    }
    /* Paired donations leave donate=. */
    if (out.kind == STRATA_OP_COMPUTE && out.n_donates > 0) {
        char **kept = g_new0(char *, out.n_donates + 1);
        uint32_t nk = 0;
        for (uint32_t i = 0; i < out.n_donates; i++)
            if (!g_hash_table_contains(targets, out.donates[i]))
                kept[nk++] = g_strdup(out.donates[i]);
        g_strfreev((char **)out.donates);
        out.donates = (const char *const *)kept;
        out.n_donates = nk;
        if (nk == 0) {
            g_free(kept);
            out.donates = NULL;
        }
    }
    g_hash_table_destroy(targets);
    g_ptr_array_free(list, TRUE);
    strata_rewrite_emit(q, &out);
    strata_op_clear(&out);
    strata_buffer_table_feed(t, index, op);
    return true;
}

static void donate_reset(void *self)
{
    donate_policy *d = self;
    strata_buffer_table_reset(d->buffers);
    g_hash_table_remove_all(d->active);
}

static void donate_destroy(void *self)
{
    donate_policy *d = self;
    strata_rewrite_plan_free(d->plan);
    g_hash_table_destroy(d->rename);
    g_hash_table_destroy(d->donated);
    strata_buffer_table_free(d->buffers);
    g_hash_table_destroy(d->active);
    g_free(d->origin);
    g_free(d);
}

static const strata_rewrite_ops donate_ops = {donate_plan, donate_map, NULL, donate_reset, donate_destroy};

static strata_source *donate_apply(strata_source *in, const strata_params *params, const strata_hw *hw,
                                   GError **err)
{
    (void)params;
    (void)hw;
    donate_policy *d = g_new0(donate_policy, 1);
    d->plan = strata_rewrite_plan_new();
    d->rename = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    d->donated = g_hash_table_new(g_direct_hash, g_direct_equal);
    d->buffers = strata_buffer_table_new();
    d->active = g_hash_table_new(g_str_hash, g_str_equal);
    d->origin = g_strdup(strata_source_origin(in));
    return strata_rewrite_source_new(in, &donate_ops, d, "donate", err);
}

const strata_policy_type strata_policy_donate = {
    .name = "donate",
    .summary = "donate: outputs reuse the storage of inputs marked donate= (jit donate_argnums); peak counts them once",
    .arg_required = false,
    .params = NULL,
    .arg = NULL,
    .apply = donate_apply,
};
