/*
 * batch_copies.c: `batch-copies=SIZE`, merges runs of consecutive small
 * copies into fewer, larger transfers: each transfer pays its route's
 * latency (DMA issue and completion) once instead of once per copy, the
 * seed's "batch operations to reduce the frequency of host-device transfers".
 *
 * A run is a sequence of adjacent copy ops (nothing else between them in the
 * trace) on one stream, between the same pair of memories, each moving fewer
 * than SIZE bytes, where no copy reads or overwrites what an earlier copy of
 * the run wrote. A run closes when it reaches SIZE bytes or at the next op
 * that does not join it. A run of one copy is left as it is. A run of k > 1
 * copies becomes one transfer between two staging buffers of the run's total
 * size, as a runtime batching transfers gathers them into one contiguous
 * buffer per side:
 *     alloc batchN.src TOTAL SRCMEM tag=temp   alloc batchN.dst TOTAL DSTMEM tag=temp
 *     copy batchN.dst batchN.src note=batch-of-k
 *     free batchN.src   free batchN.dst
 * The gather and scatter on either side are not timed (a DMA descriptor
 * list does them in hardware); the staging buffers are counted in memory.
 */
#include <string.h>
#include "core/error.h"
#include "core/units.h"
#include "policy/policy.h"
#include "policy/rewrite.h"

typedef struct batch_policy {
    uint64_t limit;
    strata_buffer_table *buffers;
    GPtrArray *run;         /* strata_op * (owned) */
    uint64_t run_bytes;
    char *run_src_mem, *run_dst_mem; /* "" for the default memory */
    uint64_t next_batch;
} batch_policy;

static void owned_free(gpointer p)
{
    strata_op_clear(p);
    g_free(p);
}

static void flush(batch_policy *b, strata_rewrite_queue *q)
{
    if (b->run->len == 1) {
        strata_rewrite_emit(q, g_ptr_array_index(b->run, 0));
    } else if (b->run->len > 1) {
        const strata_op *first = g_ptr_array_index(b->run, 0);
        char src[48], dst[48], note[32];
        g_snprintf(src, sizeof src, "batch%" G_GUINT64_FORMAT ".src", b->next_batch);
        g_snprintf(dst, sizeof dst, "batch%" G_GUINT64_FORMAT ".dst", b->next_batch);
        g_snprintf(note, sizeof note, "batch-of-%u", b->run->len);
        b->next_batch++;
        strata_op op = strata_op_make(STRATA_OP_ALLOC, first->stream, src);
        op.size = b->run_bytes;
        op.memory = *b->run_src_mem ? b->run_src_mem : NULL;
        op.tag = STRATA_TAG_TEMP;
        strata_rewrite_emit(q, &op);
        op.name = dst;
        op.memory = *b->run_dst_mem ? b->run_dst_mem : NULL;
        strata_rewrite_emit(q, &op);
        op = strata_op_make(STRATA_OP_COPY, first->stream, dst);
        op.src = src;
        op.note = note;
        strata_rewrite_emit(q, &op);
        op = strata_op_make(STRATA_OP_FREE, first->stream, src);
        strata_rewrite_emit(q, &op);
        op.name = dst;
        strata_rewrite_emit(q, &op);
    }
    g_ptr_array_set_size(b->run, 0);
    b->run_bytes = 0;
}

static bool run_conflicts(const batch_policy *b, const strata_op *op)
{
    for (guint i = 0; i < b->run->len; i++) {
        const strata_op *r = g_ptr_array_index(b->run, i);
        if (strcmp(r->name, op->src) == 0 || strcmp(r->name, op->name) == 0 || strcmp(r->src, op->name) == 0)
            return true;
    }
    return false;
}

static bool batch_map(void *self, uint64_t index, const strata_op *op, strata_rewrite_queue *q, GError **err)
{
    (void)err;
    batch_policy *b = self;
    if (op->kind == STRATA_OP_COPY) {
        const strata_buffer_info *s = strata_buffer_table_lookup(b->buffers, op->src);
        const strata_buffer_info *d = strata_buffer_table_lookup(b->buffers, op->name);
        uint64_t bytes = op->has_bytes ? op->bytes : (s ? s->size : UINT64_MAX);
        if (s && d && bytes < b->limit) {
            const char *sm = s->memory ? s->memory : "", *dm = d->memory ? d->memory : "";
            bool joins = b->run->len > 0 && strcmp(sm, b->run_src_mem) == 0 && strcmp(dm, b->run_dst_mem) == 0 &&
                         strcmp(op->stream, ((const strata_op *)g_ptr_array_index(b->run, 0))->stream) == 0 &&
                         !run_conflicts(b, op);
            if (!joins) {
                flush(b, q);
                g_free(b->run_src_mem);
                g_free(b->run_dst_mem);
                b->run_src_mem = g_strdup(sm);
                b->run_dst_mem = g_strdup(dm);
            }
            strata_op *copy = g_new(strata_op, 1);
            strata_op_copy(copy, op);
            g_ptr_array_add(b->run, copy);
            b->run_bytes += bytes;
            if (b->run_bytes >= b->limit)
                flush(b, q);
            return true;
        }
    }
    flush(b, q);
    strata_rewrite_emit(q, op);
    strata_buffer_table_feed(b->buffers, index, op);
    return true;
}

static bool batch_finish(void *self, strata_rewrite_queue *q, GError **err)
{
    (void)err;
    flush(self, q);
    return true;
}

static void batch_reset(void *self)
{
    batch_policy *b = self;
    strata_buffer_table_reset(b->buffers);
    g_ptr_array_set_size(b->run, 0);
    b->run_bytes = 0;
    b->next_batch = 0;
}

static void batch_destroy(void *self)
{
    batch_policy *b = self;
    strata_buffer_table_free(b->buffers);
    g_ptr_array_free(b->run, TRUE);
    g_free(b->run_src_mem);
    g_free(b->run_dst_mem);
    g_free(b);
}

static const strata_rewrite_ops batch_ops = {NULL, batch_map, batch_finish, batch_reset, batch_destroy};

static const strata_param_def batch_params[] = {
    {"limit", STRATA_PARAM_SIZE, NULL, "largest merged transfer; copies smaller than it are merged (above 0)",
     NULL},
    {NULL, 0, NULL, NULL, NULL},
};

static strata_source *batch_apply(strata_source *in, const strata_params *params, const strata_hw *hw,
                                  GError **err)
{
    (void)hw;
    uint64_t limit = strata_params_size(params, "limit");
    if (limit == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "policy batch-copies: expected a size above 0 such as 1MiB, got 0");
        strata_source_free(in);
        return NULL;
    }
    batch_policy *b = g_new0(batch_policy, 1);
    b->limit = limit;
    b->buffers = strata_buffer_table_new();
    b->run = g_ptr_array_new_with_free_func(owned_free);
    return strata_rewrite_source_new(in, &batch_ops, b, "batch-copies", err);
}

const strata_policy_type strata_policy_batch_copies = {
    .name = "batch-copies",
    .summary = "batch-copies=SIZE: merge runs of adjacent copies smaller than SIZE into transfers of up to SIZE "
    "through staging buffers",
    .arg_required = true,
    .params = batch_params,
    .arg = "limit",
    .apply = batch_apply,
};
