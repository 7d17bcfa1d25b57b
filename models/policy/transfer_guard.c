/*
 * transfer_guard.c: `transfer-guard=allow|log|disallow`, JAX's transfer
 * guards (jax.transfer_guard) on the op stream.
 *
 * A compute unit reads and writes its operands in one memory (hw.h:
 * `operands`). A compute naming, in in= or out=, a buffer that lives in
 * another memory is an implicit transfer: the runtime would have to move the
 * data for it. For each such operand B of compute C on stream S:
 *   allow     inserts, on S: `alloc B:MEM SIZE MEM tag=temp` and, for an
 *             input, `copy B:MEM B` before C; C then names B:MEM; for an
 *             output, `copy B B:MEM` after C; then `free B:MEM`
 *             (strata_rewrite_copy_name);
 *   log       does the same, marks each inserted copy note=implicit-transfer
 *             and logs it (GLib message, domain "strata");
 *   disallow  stops with an error naming the trace line, the compute and
 *             the buffer (exit 2).
 * The machine: with a hardware model, the unit is the compute's unit= (else
 * the first unit) and a buffer without a memory lives in the default memory.
 * Without one, the shared names stand in: every unit reads `hbm`, the
 * default memory is `hbm`.
 */
#include <string.h>
#include "core/error.h"
#include "policy/policy.h"
#include "policy/rewrite.h"

typedef enum { GUARD_ALLOW, GUARD_LOG, GUARD_DISALLOW } guard_mode;

typedef struct guard_policy {
    guard_mode mode;
    const strata_hw *hw;
    strata_buffer_table *buffers;
    char *origin;
} guard_policy;

static const char *buffer_memory(const guard_policy *g, const strata_buffer_info *b)
{
    if (b->memory)
        return b->memory;
    return g->hw ? strata_hw_memory(g->hw, strata_hw_default_memory(g->hw))->name : "hbm";
}

static bool operand_memory(const guard_policy *g, const strata_op *op, const char **mem, GError **err)
{
    if (!g->hw) {
        *mem = "hbm";
        return true;
    }
    int unit = strata_hw_compute_index(g->hw, op->unit);
    if (unit < 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%" G_GUINT64_FORMAT ": policy transfer-guard: unknown compute unit '%s' in %s",
                    g->origin, op->line, op->unit ? op->unit : "(default)", strata_hw_name(g->hw));
        return false;
    }
    *mem = strata_hw_memory(g->hw, strata_hw_compute(g->hw, (uint32_t)unit)->operands)->name;
    return true;
}

static bool guard_map(void *self, uint64_t index, const strata_op *op, strata_rewrite_queue *q, GError **err)
{
    guard_policy *g = self;
    if (op->kind != STRATA_OP_COMPUTE) {
        strata_rewrite_emit(q, op);
        strata_buffer_table_feed(g->buffers, index, op);
        return true;
    }
    const char *want;
    if (!operand_memory(g, op, &want, err))
        return false;
    strata_op out;
    strata_op_copy(&out, op);
    GPtrArray *staged = g_ptr_array_new_with_free_func(g_free); /* original names */
    GPtrArray *after = g_ptr_array_new_with_free_func(g_free);  /* outputs to copy back */
    const char *const *lists[2] = {op->ins, op->outs};
    uint32_t counts[2] = {op->n_ins, op->n_outs};
    bool ok = true;
    for (int l = 0; l < 2 && ok; l++)
        for (uint32_t i = 0; i < counts[l] && ok; i++) {
            const strata_buffer_info *b = strata_buffer_table_lookup(g->buffers, lists[l][i]);
            if (!b)
                continue;
            const char *has = buffer_memory(g, b);
            if (strcmp(has, want) == 0)
                continue;
            if (g->mode == GUARD_DISALLOW) {
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "%s:%" G_GUINT64_FORMAT ": transfer-guard=disallow: compute '%s' %s '%s' in memory %s, "
                            "but its unit works on %s (an implicit transfer); copy it explicitly",
                            g->origin, op->line, op->name, l == 0 ? "reads" : "writes", b->name, has, want);
                ok = false;
                break;
            }
            char *stage = strata_rewrite_copy_name(b->name, want);
            bool seen = false;
            for (guint k = 0; k < staged->len; k++)
                seen = seen || strcmp(g_ptr_array_index(staged, k), b->name) == 0;
            if (!seen) {
                g_ptr_array_add(staged, g_strdup(b->name));
                strata_op a = strata_op_make(STRATA_OP_ALLOC, op->stream, stage);
                a.size = b->size;
                a.memory = want;
                a.tag = STRATA_TAG_TEMP;
                a.dtype = b->dtype;
                a.n_dims = b->n_dims;
                memcpy(a.shape, b->shape, sizeof a.shape);
                strata_rewrite_emit(q, &a);
                if (l == 0) {
                    strata_op c = strata_op_make(STRATA_OP_COPY, op->stream, stage);
                    c.src = b->name;
                    if (g->mode == GUARD_LOG) {
                        c.note = "implicit-transfer";
                        g_log("strata", G_LOG_LEVEL_MESSAGE,
                              "transfer-guard: %s:%" G_GUINT64_FORMAT ": compute '%s' reads '%s' from %s; inserted "
                              "copy to %s", g->origin, op->line, op->name, b->name, has, want);
                    }
                    strata_rewrite_emit(q, &c);
                }
            }
            if (l == 1)
                g_ptr_array_add(after, g_strdup(b->name));
            strata_op_rename_buffer(&out, b->name, stage);
            g_free(stage);
        }
    if (ok) {
        strata_rewrite_emit(q, &out);
        for (guint k = 0; k < after->len; k++) {
            const char *name = g_ptr_array_index(after, k);
            char *stage = strata_rewrite_copy_name(name, want);
            strata_op c = strata_op_make(STRATA_OP_COPY, op->stream, name);
            c.src = stage;
            if (g->mode == GUARD_LOG) {
                c.note = "implicit-transfer";
                g_log("strata", G_LOG_LEVEL_MESSAGE,
                      "transfer-guard: %s:%" G_GUINT64_FORMAT ": compute '%s' writes '%s'; inserted copy back",
                      g->origin, op->line, op->name, name);
            }
            strata_rewrite_emit(q, &c);
            g_free(stage);
        }
        for (guint k = 0; k < staged->len; k++) {
            char *stage = strata_rewrite_copy_name(g_ptr_array_index(staged, k), want);
            strata_op f = strata_op_make(STRATA_OP_FREE, op->stream, stage);
            strata_rewrite_emit(q, &f);
            g_free(stage);
        }
    }
    strata_op_clear(&out);
    g_ptr_array_free(staged, TRUE);
    g_ptr_array_free(after, TRUE);
    return ok;
}

static void guard_reset(void *self) { strata_buffer_table_reset(((guard_policy *)self)->buffers); }

static void guard_destroy(void *self)
{
    guard_policy *g = self;
    strata_buffer_table_free(g->buffers);
    g_free(g->origin);
    g_free(g);
}

static const strata_rewrite_ops guard_ops = {NULL, guard_map, NULL, guard_reset, guard_destroy};

static const char *const guard_modes[] = {"allow", "log", "disallow", NULL};

static const strata_param_def guard_params[] = {
    {"mode", STRATA_PARAM_STRING, NULL, "what an implicit transfer does: insert the copy, insert and log it, or fail",
     guard_modes},
    {NULL, 0, NULL, NULL, NULL},
};

static strata_source *guard_apply(strata_source *in, const strata_params *params, const strata_hw *hw,
                                  GError **err)
{
    const char *arg = strata_params_string(params, "mode");
    int mode = 0;
    while (strcmp(arg, guard_modes[mode]) != 0)
        mode++; /* choices guarantee a match */
    guard_policy *g = g_new0(guard_policy, 1);
    g->mode = (guard_mode)mode;
    g->hw = hw;
    g->buffers = strata_buffer_table_new();
    g->origin = g_strdup(strata_source_origin(in));
    return strata_rewrite_source_new(in, &guard_ops, g, "transfer-guard", err);
}

const strata_policy_type strata_policy_transfer_guard = {
    .name = "transfer-guard",
    .summary = "transfer-guard=allow|log|disallow: a compute on a buffer outside its unit's memory is an implicit "
    "transfer: insert the copy, insert and log it, or fail naming the op and line",
    .arg_required = true,
    .params = guard_params,
    .arg = "mode",
    .apply = guard_apply,
};
