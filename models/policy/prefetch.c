/*
 * prefetch.c: `prefetch=N`, issues each copy N computes ahead of where the
 * trace has it, on a DMA stream, with the record/wait wiring, so that the
 * transfer overlaps the N computes before its use.
 *
 * For a copy at input op c on stream S, the hoist point is the N-th compute
 * on S before c, moved later where a dependency requires:
 *   - after the alloc of the source and after the last op writing it;
 *   - after the last op touching the destination (other than its alloc);
 *   - after the last `wait` on S (it may be what makes the source ready);
 *   - after the last free of a buffer named like the destination, when the
 *     destination's alloc has to move up with the copy.
 * If the hoist point is not before c (N=0, or nothing to overlap) the copy
 * stays as it is. Otherwise the rewrite is
 *   at the hoist point   [alloc DST ...] (moved up when it came later)
 *                        record pfK.go stream=S
 *                        wait pfK.go stream=prefetch
 *                        copy DST SRC stream=prefetch
 *                        record pfK.done stream=prefetch
 *   at c                 wait pfK.done stream=S     (the copy op is dropped)
 * so the copy starts when S reaches the hoist point and S stalls at c only
 * for what is left of it. Stall time is the engine's streams.S.stall_s.
 * Copies already on the prefetch stream are left alone (applying twice is
 * harmless). Memory cost: a moved-up destination is live N computes longer.
 */
#include <string.h>
#include "core/error.h"
#include "core/units.h"
#include "policy/policy.h"
#include "policy/rewrite.h"

#define PREFETCH_STREAM "prefetch"

typedef struct buf_hist {
    uint64_t last_write; /* index + 1 of the last op writing it (0: none) */
    uint64_t last_touch; /* index + 1 of the last op touching it (0: none) */
} buf_hist;

typedef struct stream_hist {
    GArray *computes;    /* uint64 indices of computes on the stream */
    uint64_t last_wait;  /* index + 1 of the last wait on it (0: none) */
} stream_hist;

typedef struct prefetch_policy {
    uint64_t distance;
    strata_rewrite_plan *plan;
} prefetch_policy;

static void stream_hist_free(gpointer p)
{
    stream_hist *s = p;
    g_array_free(s->computes, TRUE);
    g_free(s);
}

static stream_hist *stream_of(GHashTable *streams, const char *name)
{
    stream_hist *s = g_hash_table_lookup(streams, name);
    if (!s) {
        s = g_new0(stream_hist, 1);
        s->computes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        g_hash_table_insert(streams, g_strdup(name), s);
    }
    return s;
}

static buf_hist *hist_of(GArray *hist, const strata_buffer_info *b)
{
    if (b->id >= hist->len)
        g_array_set_size(hist, b->id + 1);
    return &g_array_index(hist, buf_hist, b->id);
}

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

static void touch(GArray *hist, strata_buffer_table *t, const char *name, bool writes, uint64_t index)
{
    const strata_buffer_info *b = strata_buffer_table_lookup(t, name);
    if (!b)
        return;
    buf_hist *h = hist_of(hist, b);
    h->last_touch = index + 1;
    if (writes)
        h->last_write = index + 1;
}

static void plan_copy(prefetch_policy *p, uint64_t c, const strata_op *op, strata_buffer_table *t, GArray *hist,
                      GHashTable *streams, GHashTable *last_free, uint64_t *counter)
{
    const strata_buffer_info *src = strata_buffer_table_lookup(t, op->src);
    const strata_buffer_info *dst = strata_buffer_table_lookup(t, op->name);
    if (!src || !dst)
        return; /* the checker reports it */
    stream_hist *s = stream_of(streams, op->stream);
    uint64_t target = 0;
    if (s->computes->len >= p->distance && p->distance > 0)
        target = g_array_index(s->computes, uint64_t, s->computes->len - p->distance);
    else if (p->distance == 0)
        return;
    buf_hist hs = *hist_of(hist, src);
    buf_hist hd = *hist_of(hist, dst);
    uint64_t low = max_u64(src->alloc_index + 1, hs.last_write);
    low = max_u64(low, hd.last_touch);
    low = max_u64(low, s->last_wait);
    bool move_alloc = dst->alloc_index >= max_u64(target, low);
    if (move_alloc) {
        gpointer f = g_hash_table_lookup(last_free, dst->name);
        if (f)
            low = max_u64(low, GPOINTER_TO_SIZE(f)); /* index + 1 of that free */
    } else {
        low = max_u64(low, dst->alloc_index + 1);
    }
    uint64_t at = max_u64(target, low);
    if (at >= c)
        return;
    if (move_alloc && dst->alloc_index < at)
        move_alloc = false;
    char go[40], done[40];
    g_snprintf(go, sizeof go, "pf%" G_GUINT64_FORMAT ".go", *counter);
    g_snprintf(done, sizeof done, "pf%" G_GUINT64_FORMAT ".done", *counter);
    (*counter)++;
    if (move_alloc) {
        strata_op a = strata_op_make(STRATA_OP_ALLOC, dst->stream, dst->name);
        a.size = dst->size;
        a.memory = dst->memory;
        a.tag = dst->tag;
        a.dtype = dst->dtype;
        a.n_dims = dst->n_dims;
        memcpy(a.shape, dst->shape, sizeof dst->shape);
        strata_rewrite_plan_before(p->plan, at, &a);
        strata_rewrite_plan_drop(p->plan, dst->alloc_index);
    }
    strata_op r = strata_op_make(STRATA_OP_RECORD, op->stream, go);
    strata_rewrite_plan_before(p->plan, at, &r);
    strata_op w = strata_op_make(STRATA_OP_WAIT, PREFETCH_STREAM, go);
    strata_rewrite_plan_before(p->plan, at, &w);
    strata_op copy = *op;
    copy.stream = PREFETCH_STREAM;
    copy.line = 0;
    strata_rewrite_plan_before(p->plan, at, &copy);
    strata_op d = strata_op_make(STRATA_OP_RECORD, PREFETCH_STREAM, done);
    strata_rewrite_plan_before(p->plan, at, &d);
    strata_op wd = strata_op_make(STRATA_OP_WAIT, op->stream, done);
    strata_rewrite_plan_before(p->plan, c, &wd);
    strata_rewrite_plan_drop(p->plan, c);
}

static bool prefetch_plan(void *self, strata_source *in, GError **err)
{
    prefetch_policy *p = self;
    strata_buffer_table *t = strata_buffer_table_new();
    GArray *hist = g_array_new(FALSE, TRUE, sizeof(buf_hist));
    GHashTable *streams = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, stream_hist_free);
    GHashTable *last_free = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    uint64_t counter = 0, index = 0;
    const strata_op *op;
    int r;
    while ((r = strata_source_next(in, &op, err)) == 1) {
        switch (op->kind) {
        case STRATA_OP_COPY:
            if (strcmp(op->stream, PREFETCH_STREAM) != 0)
                plan_copy(p, index, op, t, hist, streams, last_free, &counter);
            touch(hist, t, op->src, false, index);
            touch(hist, t, op->name, true, index);
            break;
        case STRATA_OP_COMPUTE:
            for (uint32_t i = 0; i < op->n_ins; i++)
                touch(hist, t, op->ins[i], false, index);
            for (uint32_t i = 0; i < op->n_outs; i++)
                touch(hist, t, op->outs[i], true, index);
            g_array_append_val(stream_of(streams, op->stream)->computes, index);
            break;
        case STRATA_OP_WAIT:
            stream_of(streams, op->stream)->last_wait = index + 1;
            break;
        case STRATA_OP_FREE:
            g_hash_table_insert(last_free, g_strdup(op->name), GSIZE_TO_POINTER((gsize)index + 1));
            break;
        default:
            break;
        }
        strata_buffer_table_feed(t, index, op);
        index++;
    }
    strata_buffer_table_free(t);
    g_array_free(hist, TRUE);
    g_hash_table_destroy(streams);
    g_hash_table_destroy(last_free);
    return r == 0;
}

static bool prefetch_map(void *self, uint64_t index, const strata_op *op, strata_rewrite_queue *q, GError **err)
{
    (void)err;
    strata_rewrite_plan_emit(((prefetch_policy *)self)->plan, index, op, q);
    return true;
}

static void prefetch_destroy(void *self)
{
    prefetch_policy *p = self;
    strata_rewrite_plan_free(p->plan);
    g_free(p);
}

static const strata_rewrite_ops prefetch_ops = {prefetch_plan, prefetch_map, NULL, NULL, prefetch_destroy};

static strata_source *prefetch_apply(strata_source *in, const char *arg, const strata_hw *hw, GError **err)
{
    (void)hw;
    uint64_t n = 0;
    if (!strata_parse_u64(arg, &n, NULL) || n > 1000000) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "policy prefetch: expected a distance N (computes ahead, 0 to 1000000), got '%s'", arg);
        strata_source_free(in);
        return NULL;
    }
    prefetch_policy *p = g_new0(prefetch_policy, 1);
    p->distance = n;
    p->plan = strata_rewrite_plan_new();
    return strata_rewrite_source_new(in, &prefetch_ops, p, "prefetch", err);
}

const strata_policy_type strata_policy_prefetch = {
    "prefetch",
    "prefetch=N: issue each copy N computes ahead of where it is, on stream 'prefetch', with record/wait; "
    "stall time is reported per stream",
    true,
    prefetch_apply,
};
