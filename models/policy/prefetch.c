/*
 * prefetch.c: `prefetch=N`, issues each copy N computes ahead of its first
 * use, on a DMA stream, with the record/wait wiring, so that the transfer
 * overlaps the N computes before its use.
 *
 * A first pass finds, for each copy at input op c on stream S, its anchor:
 * the first later op that uses the destination, frees it, or writes or frees
 * the source, or the first `record` on S after c (another stream may rely
 * on S having finished the copy there), whichever comes first. The hoist
 * point is the N-th compute on S before the anchor, never later than c, and
 * moved later where a dependency requires:
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
 *   at c                 (the copy op is dropped)
 *   at the anchor        wait pfK.done stream=(the anchor's stream)
 * so the copy starts when S reaches the hoist point and the stream that
 * needs it stalls at the anchor only for what is left of it. A copy nothing
 * waits for (never used) gets no wait. Stall time is the engine's streams.S.stall_s.
 * Copies already on the prefetch stream are left alone (applying twice is
 * harmless). Memory cost: a moved-up destination is live N computes longer.
 *
 * `prefetch=N:sched=xla|cuda|auto` (policy.h): the copy is a copy-start at
 * the hoist point and a copy-done at the anchor. Under cuda only the anchor's
 * stream waits there; under xla the issuing stream S waits there too (one
 * program order: everything after copy-done waits for the copy). The two
 * differ only when the anchor is on another stream than S.
 */
#include <string.h>
#include "core/error.h"
#include "core/params.h"
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

typedef struct anchor {
    uint64_t index;       /* UINT64_MAX: none */
    const char *stream;   /* interned in the policy's string chunk */
} anchor;

typedef struct prefetch_policy {
    strata_rewrite_plan *plan;    /* first: strata_rewrite_plan_map reads it */
    uint64_t distance;
    char *sched;                  /* sched= as given (auto, xla, cuda) */
    const strata_hw *hw;
    bool xla;                     /* resolved in the first pass */
    GHashTable *anchors;          /* copy index + 1 -> anchor * */
    GHashTable *computes;         /* stream -> GArray of every compute index (first pass) */
    GHashTable *records;          /* stream -> GArray of every record index (first pass) */
    GStringChunk *strings;
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

/* Where the second pass is, for touch(). */
typedef struct touch_at {
    GArray *hist;
    strata_buffer_table *t;
    uint64_t index;
} touch_at;

/* A reference to buffer `name` by the op at `ud`. */
static void touch(void *ud, const char *name, bool writes)
{
    const touch_at *at = ud;
    const strata_buffer_info *b = strata_buffer_table_lookup(at->t, name);
    if (!b)
        return;
    buf_hist *h = hist_of(at->hist, b);
    h->last_touch = at->index + 1;
    if (writes)
        h->last_write = at->index + 1;
}

static GArray *indices_of(GHashTable *by_stream, const char *stream)
{
    GArray *a = g_hash_table_lookup(by_stream, stream);
    if (!a) {
        a = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        g_hash_table_insert(by_stream, g_strdup(stream), a);
    }
    return a;
}

/* Number of entries of the sorted array below `limit`. */
static guint count_below(const GArray *a, uint64_t limit)
{
    guint lo = 0, hi = a ? a->len : 0;
    while (lo < hi) {
        guint mid = (lo + hi) / 2;
        if (g_array_index(a, uint64_t, mid) < limit)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void set_anchor(prefetch_policy *p, uint64_t copy, uint64_t index, const char *stream)
{
    anchor *a = g_hash_table_lookup(p->anchors, GSIZE_TO_POINTER((gsize)copy + 1));
    if (!a) {
        a = g_new(anchor, 1);
        a->index = UINT64_MAX;
        g_hash_table_insert(p->anchors, GSIZE_TO_POINTER((gsize)copy + 1), a);
    }
    if (index < a->index) {
        a->index = index;
        a->stream = g_string_chunk_insert_const(p->strings, stream);
    }
}

static void garray_free(gpointer a) { g_array_free(a, TRUE); }

/* Where the first pass is, for anchor_ref(). */
typedef struct anchor_at {
    prefetch_policy *p;
    strata_buffer_table *t;
    GHashTable *open_dst, *open_src;
    uint64_t index;
    const char *stream;
} anchor_at;

/* One reference to buffer `name` by the op at `ud`: closes the copies waiting for it. */
static void anchor_ref(void *ud, const char *name, bool writes)
{
    const anchor_at *at = ud;
    const strata_buffer_info *b = strata_buffer_table_lookup(at->t, name);
    if (!b)
        return;
    gpointer key = GSIZE_TO_POINTER((gsize)b->id + 1);
    gpointer k = g_hash_table_lookup(at->open_dst, key);
    if (k && GPOINTER_TO_SIZE(k) - 1 != at->index) {
        set_anchor(at->p, GPOINTER_TO_SIZE(k) - 1, at->index, at->stream);
        g_hash_table_remove(at->open_dst, key);
    }
    GArray *readers = writes ? g_hash_table_lookup(at->open_src, key) : NULL;
    if (readers) {
        for (guint i = 0; i < readers->len; i++)
            if (g_array_index(readers, uint64_t, i) != at->index)
                set_anchor(at->p, g_array_index(readers, uint64_t, i), at->index, at->stream);
        g_hash_table_remove(at->open_src, key);
    }
}

/* First pass: the anchor of every copy, and every compute and record per stream. */
static bool find_anchors(prefetch_policy *p, strata_source *in, GError **err)
{
    char *trace_sched = NULL;
    strata_buffer_table *t = strata_buffer_table_new();
    GHashTable *open_dst = g_hash_table_new(g_direct_hash, g_direct_equal);
    GHashTable *open_src = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, garray_free);
    uint64_t index = 0;
    const strata_op *op;
    int r;
    while ((r = strata_source_next(in, &op, err)) == 1) {
        strata_policy_note_sched(op, &trace_sched);
        anchor_at at = {p, t, open_dst, open_src, index, op->stream};
        strata_op_operands(op, anchor_ref, &at);
        switch (op->kind) {
        case STRATA_OP_COPY: {
            const strata_buffer_info *d = strata_buffer_table_lookup(t, op->name);
            const strata_buffer_info *s = strata_buffer_table_lookup(t, op->src);
            if (d && s && strcmp(op->stream, PREFETCH_STREAM) != 0) {
                g_hash_table_insert(open_dst, GSIZE_TO_POINTER((gsize)d->id + 1), GSIZE_TO_POINTER((gsize)index + 1));
                gpointer key = GSIZE_TO_POINTER((gsize)s->id + 1);
                GArray *readers = g_hash_table_lookup(open_src, key);
                if (!readers) {
                    readers = g_array_new(FALSE, FALSE, sizeof(uint64_t));
                    g_hash_table_insert(open_src, key, readers);
                }
                g_array_append_val(readers, index);
            }
            break;
        }
        case STRATA_OP_COMPUTE:
            g_array_append_val(indices_of(p->computes, op->stream), index);
            break;
        case STRATA_OP_FREE:
            anchor_ref(&at, op->name, true);
            break;
        case STRATA_OP_RECORD:
            g_array_append_val(indices_of(p->records, op->stream), index);
            break;
        default:
            break;
        }
        strata_buffer_table_feed(t, index, op);
        index++;
    }
    g_hash_table_destroy(open_dst);
    g_hash_table_destroy(open_src);
    strata_buffer_table_free(t);
    bool ok = r == 0 && strata_policy_sched_xla(p->sched, trace_sched, p->hw, &p->xla, err);
    g_free(trace_sched);
    return ok && strata_source_rewind(in, err);
}

static void plan_copy(prefetch_policy *p, uint64_t c, const strata_op *op, strata_buffer_table *t, GArray *hist,
                      GHashTable *streams, GHashTable *last_free, uint64_t *counter)
{
    const strata_buffer_info *src = strata_buffer_table_lookup(t, op->src);
    const strata_buffer_info *dst = strata_buffer_table_lookup(t, op->name);
    if (!src || !dst)
        return; /* the checker reports it */
    stream_hist *s = stream_of(streams, op->stream);
    if (p->distance == 0)
        return;
    /* The anchor: first use (first pass), or the next record on S. */
    const anchor *an = g_hash_table_lookup(p->anchors, GSIZE_TO_POINTER((gsize)c + 1));
    uint64_t anchor_at = an ? an->index : UINT64_MAX;
    const char *anchor_stream = an ? an->stream : op->stream;
    GArray *recs = g_hash_table_lookup(p->records, op->stream);
    guint before_c = count_below(recs, c + 1);
    if (recs && before_c < recs->len && g_array_index(recs, uint64_t, before_c) < anchor_at) {
        anchor_at = g_array_index(recs, uint64_t, before_c);
        anchor_stream = op->stream;
    }
    /* N computes on S before the anchor (before c when nothing uses the copy), never after c. */
    GArray *all = g_hash_table_lookup(p->computes, op->stream);
    guint k = count_below(all, anchor_at == UINT64_MAX ? c : anchor_at);
    uint64_t target = k >= p->distance ? g_array_index(all, uint64_t, k - p->distance) : 0;
    if (target > c)
        target = c;
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
    if (at > c)
        at = c;
    if (at == c && (anchor_at == UINT64_MAX || anchor_at == c + 1))
        return; /* nothing to overlap */
    if (move_alloc && dst->alloc_index < at)
        move_alloc = false;
    char go[40], done[40];
    g_snprintf(go, sizeof go, "pf%" G_GUINT64_FORMAT ".go", *counter);
    g_snprintf(done, sizeof done, "pf%" G_GUINT64_FORMAT ".done", *counter);
    (*counter)++;
    if (move_alloc) {
        strata_op a = strata_op_alloc_of(dst, dst->stream, dst->name, dst->memory);
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
    if (anchor_at != UINT64_MAX) {
        strata_op wd = strata_op_make(STRATA_OP_WAIT, anchor_stream, done);
        strata_rewrite_plan_before(p->plan, anchor_at, &wd);
        if (p->xla && strcmp(anchor_stream, op->stream) != 0) {
            /* copy-done sits in the issuing stream's program order too */
            strata_op ws = strata_op_make(STRATA_OP_WAIT, op->stream, done);
            strata_rewrite_plan_before(p->plan, anchor_at, &ws);
        }
    }
    strata_rewrite_plan_drop(p->plan, c);
}

static bool prefetch_plan(void *self, strata_source *in, GError **err)
{
    prefetch_policy *p = self;
    if (!find_anchors(p, in, err))
        return false;
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
            break;
        case STRATA_OP_COMPUTE:
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
        touch_at at = {hist, t, index};
        strata_op_operands(op, touch, &at);
        strata_buffer_table_feed(t, index, op);
        index++;
    }
    strata_buffer_table_free(t);
    g_array_free(hist, TRUE);
    g_hash_table_destroy(streams);
    g_hash_table_destroy(last_free);
    return r == 0;
}

static void prefetch_destroy(void *self)
{
    prefetch_policy *p = self;
    strata_rewrite_plan_free(p->plan);
    g_hash_table_destroy(p->anchors);
    g_hash_table_destroy(p->computes);
    g_hash_table_destroy(p->records);
    g_string_chunk_free(p->strings);
    g_free(p->sched);
    g_free(p);
}

static const strata_rewrite_ops prefetch_ops = {prefetch_plan, strata_rewrite_plan_map, NULL, NULL, prefetch_destroy};

static const strata_param_def prefetch_params[] = {
    {"distance", STRATA_PARAM_INT, NULL, "computes between the start of a copy and its first use (0 to 1000000)",
     NULL},
    {"sched", STRATA_PARAM_STRING, "auto",
     "execution model: xla (the copy-done wait also sits on the issuing stream: program order), cuda (only the "
     "stream of the first use waits), auto (the trace's option sched, else [hardware] sched, else cuda)",
     strata_policy_sched_choices},
    {NULL, 0, NULL, NULL, NULL},
};

static strata_source *prefetch_apply(strata_source *in, const strata_params *params, const strata_hw *hw,
                                     GError **err)
{
    int64_t n = strata_params_int(params, "distance");
    if (n < 0 || n > 1000000) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "policy prefetch: expected a distance N (computes ahead, 0 to 1000000), got %" G_GINT64_FORMAT,
                    n);
        strata_source_free(in);
        return NULL;
    }
    prefetch_policy *p = g_new0(prefetch_policy, 1);
    p->distance = (uint64_t)n;
    p->sched = g_strdup(strata_params_string(params, "sched"));
    p->hw = hw;
    p->plan = strata_rewrite_plan_new();
    p->anchors = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    p->computes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, garray_free);
    p->records = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, garray_free);
    p->strings = g_string_chunk_new(1024);
    return strata_rewrite_source_new(in, &prefetch_ops, p, "prefetch", err);
}

const strata_policy_type strata_policy_prefetch = {
    .name = "prefetch",
    .summary = "prefetch=N[:sched=xla|cuda]: issue each copy N computes ahead of its first use, on stream 'prefetch', "
    "with record/wait; "
    "stall time is reported per stream",
    .arg_required = true,
    .params = prefetch_params,
    .arg = "distance",
    .apply = prefetch_apply,
};
