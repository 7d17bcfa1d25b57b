/*
 * offload.c: `offload=activation|param|optstate[:ahead=N,sched=S]`, JAX's memory
 * kinds (device <-> pinned_host) and host offloading (seed 002) as a rewrite.
 *
 * Every buffer with the tag that lives in device memory is considered. Its
 * uses (copies, computes and collectives naming it: rewrite.h's operands)
 * split into segments wherever two consecutive uses have at least two
 * computes between them (a gap). Then:
 *   - an argument (allocated before the first copy, compute or collective) whose first
 *     use reads it starts on the host: its alloc becomes `alloc NAME:host
 *     SIZE HOST` (params and optimizer state placed with device_put on
 *     pinned_host before the step, as the tutorial does);
 *   - before each segment that finds the buffer on the host, the device
 *     buffer is allocated again and copied in on stream `offload`, issued
 *     `ahead` computes (default 2) before the segment's first use, and the
 *     stream using it waits for the copy right before that use;
 *   - after each segment but the last, and after the last one when the
 *     buffer is still live at the end (an output, like new optimizer state
 *     with out_shardings on pinned_host), the buffer goes to the host: if
 *     the segment wrote it (or the host has no copy yet) it is copied out on
 *     stream `offload` after its last use and freed there; a buffer only
 *     read is just freed (the host copy is still good);
 *   - the host copy is freed where the trace frees the buffer.
 * So activations leave after the forward pass and come back for the
 * backward pass, parameters stream in at each use (each layer's weights, the
 * tutorial's parameter offloading under scan), and optimizer state lives on
 * the host and visits the device for its update. In a sharded step (fsdp)
 * a parameter shard is read by the all-gathers of its layer's forward and
 * backward passes: it stays on the host and is fetched before each gather
 * (ZeRO-Offload's parameters), which on a stream without computes (the
 * gather stream) is right before the gather. A buffer that a collective
 * makes (its first use is a collective writing it: a gathered copy) is
 * left alone: moving it would carry the whole gathered tensor over the host
 * link where ZeRO moves only the shard. Every copy goes over the
 * hardware's route between the memories (the host link).
 *
 * Execution model, `sched=` (policy.h):
 *   - cuda: the copy out and the free of the device buffer run on stream
 *     `offload`; the using stream runs on and allocates meanwhile, so the
 *     device buffer is released only when the copy has ended, in time;
 *   - xla: the copy out is a copy-start after the last use and a copy-done
 *     after the `ahead`-th compute that follows on the using stream (never
 *     past the buffer's next use or its free): there the using stream waits
 *     for the copy (`wait ofK.done`) and frees the device buffer itself. All
 *     allocs and frees stay in program order, so the timed peak is the
 *     program-order (untimed) peak and a slow link shows as stall time.
 * Copies back in are the same under both: allocated at copy-start on the
 * using stream, waited for right before the use (copy-done).
 *
 * The host memory is the hardware's first pinned host memory (`host`
 * without --hw). Event names are ofK.go/.in/.out/.done; host copies NAME:host
 * (strata_rewrite_copy_name).
 */
#include <string.h>
#include "core/error.h"
#include "core/params.h"
#include "policy/policy.h"
#include "policy/rewrite.h"

#define OFFLOAD_STREAM "offload"
#define MIN_GAP_COMPUTES 2

typedef struct use {
    uint64_t index;
    uint64_t computes_before; /* computes (any stream) before this op */
    bool writes;
    bool reads;
    bool collective; /* the op is a collective */
    char *stream;
} use;

typedef struct tracked {
    const strata_buffer_info *info;
    GArray *uses; /* use */
} tracked;

typedef struct offload_policy {
    strata_rewrite_plan *plan; /* first: strata_rewrite_plan_map reads it */
    strata_tag tag;
    uint64_t ahead;
    char *sched;  /* sched= as given (auto, xla, cuda) */
    bool xla;     /* resolved in the plan pass */
    const strata_hw *hw;
    char *host;
    uint64_t counter;
} offload_policy;

static void use_clear(gpointer p) { g_free(((use *)p)->stream); }

static bool on_device(const offload_policy *o, const char *memory)
{
    if (!memory)
        return true;
    if (!o->hw)
        return strcmp(memory, "hbm") == 0;
    int m = strata_hw_memory_index(o->hw, memory);
    return m >= 0 && strata_hw_memory(o->hw, (uint32_t)m)->kind == STRATA_MEM_DEVICE;
}

/* Where the planning pass is: what an operand's use is recorded with. */
typedef struct use_at {
    GHashTable *by_id;
    strata_buffer_table *t;
    uint64_t index, computes;
    const char *stream;
    bool collective;
} use_at;

static void add_use(void *ud, const char *name, bool writes)
{
    const use_at *at = ud;
    const strata_buffer_info *b = strata_buffer_table_lookup(at->t, name);
    if (!b)
        return;
    tracked *tr = g_hash_table_lookup(at->by_id, GSIZE_TO_POINTER((gsize)b->id + 1));
    if (!tr)
        return;
    use *last = tr->uses->len ? &g_array_index(tr->uses, use, tr->uses->len - 1) : NULL;
    if (last && last->index == at->index) {
        last->writes = last->writes || writes;
        last->reads = last->reads || !writes;
        return;
    }
    use u = {at->index, at->computes, writes, !writes, at->collective, g_strdup(at->stream)};
    g_array_append_val(tr->uses, u);
}

static void tracked_free(gpointer p)
{
    tracked *t = p;
    g_array_free(t->uses, TRUE);
    g_free(t);
}

/* Index of the op `ahead` computes before `u` on its stream, not before `floor`. */
static uint64_t prefetch_point(GHashTable *computes_by_stream, const use *u, uint64_t ahead, uint64_t floor)
{
    GArray *c = g_hash_table_lookup(computes_by_stream, u->stream);
    uint64_t at = floor;
    if (c && ahead > 0) {
        /* computes on the stream before u: binary search for the count */
        guint lo = 0, hi = c->len;
        while (lo < hi) {
            guint mid = (lo + hi) / 2;
            if (g_array_index(c, uint64_t, mid) < u->index)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo >= ahead)
            at = g_array_index(c, uint64_t, lo - ahead);
        else
            at = 0;
    } else {
        at = u->index;
    }
    if (at < floor)
        at = floor;
    if (at > u->index)
        at = u->index;
    return at;
}

/* sched=xla: where copy-done of a copy out after use `u` goes: after the
 * `ahead`-th compute on u's stream that follows u, or the last one before
 * `limit` when fewer come first (u itself when none does). */
static uint64_t done_point(GHashTable *computes_by_stream, const use *u, uint64_t ahead, uint64_t limit)
{
    GArray *c = g_hash_table_lookup(computes_by_stream, u->stream);
    uint64_t at = u->index;
    guint lo = 0, hi = c ? c->len : 0;
    while (lo < hi) {
        guint mid = (lo + hi) / 2;
        if (g_array_index(c, uint64_t, mid) <= u->index)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint64_t k = 0; k < ahead && c && lo < c->len && g_array_index(c, uint64_t, lo) < limit; k++, lo++)
        at = g_array_index(c, uint64_t, lo);
    return at;
}

static void emit_event(offload_policy *o, uint64_t index, bool before, strata_op_kind kind, const char *stream,
                       const char *name)
{
    strata_op op = strata_op_make(kind, stream, name);
    if (before)
        strata_rewrite_plan_before(o->plan, index, &op);
    else
        strata_rewrite_plan_after(o->plan, index, &op);
}

/* Back to the device before use u: alloc, copy-start at `at` (on stream
 * offload), copy-done right before u. */
static void plan_copy_in(offload_policy *o, const strata_buffer_info *b, const use *u, uint64_t at,
                         const char *host_name)
{
    char ev[48];
    uint64_t k = o->counter++;
    strata_op a = strata_op_alloc_of(b, u->stream, b->name, b->memory);
    strata_rewrite_plan_before(o->plan, at, &a);
    g_snprintf(ev, sizeof ev, "of%" G_GUINT64_FORMAT ".go", k);
    emit_event(o, at, true, STRATA_OP_RECORD, u->stream, ev);
    emit_event(o, at, true, STRATA_OP_WAIT, OFFLOAD_STREAM, ev);
    strata_op c = strata_op_make(STRATA_OP_COPY, OFFLOAD_STREAM, b->name);
    c.src = host_name;
    strata_rewrite_plan_before(o->plan, at, &c);
    g_snprintf(ev, sizeof ev, "of%" G_GUINT64_FORMAT ".in", k);
    emit_event(o, at, true, STRATA_OP_RECORD, OFFLOAD_STREAM, ev);
    emit_event(o, u->index, true, STRATA_OP_WAIT, u->stream, ev);
}

static void plan_buffer(offload_policy *o, const tracked *tr, uint64_t first_work, GHashTable *computes_by_stream)
{
    const strata_buffer_info *b = tr->info;
    const GArray *uses = tr->uses;
    if (uses->len == 0)
        return;
    const use *first = &g_array_index(uses, use, 0);
    if (first->collective && first->writes && !first->reads)
        return; /* a collective's result (a gathered copy) stays where it was made */
    char *host_name = strata_rewrite_copy_name(b->name, "host");
    bool on_host = b->alloc_index < first_work && first->reads;
    bool host_live = false, host_valid = false;
    bool ends_live = b->free_index == UINT64_MAX;
    /* Count segments first: nothing to do for one segment on the device that stays there. */
    guint segments = 1;
    for (guint i = 1; i < uses->len; i++)
        if (g_array_index(uses, use, i).computes_before - g_array_index(uses, use, i - 1).computes_before >
            MIN_GAP_COMPUTES)
            segments++;
    if (segments == 1 && !on_host && !ends_live) {
        g_free(host_name);
        return;
    }
    strata_op host_alloc = strata_op_alloc_of(b, b->stream, host_name, o->host);
    if (on_host) {
        strata_rewrite_plan_drop(o->plan, b->alloc_index);
        strata_rewrite_plan_before(o->plan, b->alloc_index, &host_alloc);
        host_live = host_valid = true;
    }
    bool on_device_now = !on_host;
    /* An argument left on the host comes back after the program starts, or
     * its device buffer would be an argument again. */
    uint64_t floor = on_host && first_work != UINT64_MAX ? first_work + 1 : b->alloc_index + 1;
    guint seg_start = 0;
    char ev[48];
    for (guint i = 0; i < uses->len; i++) {
        const use *u = &g_array_index(uses, use, i);
        bool last_of_segment = i + 1 == uses->len ||
                               g_array_index(uses, use, i + 1).computes_before - u->computes_before > MIN_GAP_COMPUTES;
        if (i == seg_start && !on_device_now) {
            plan_copy_in(o, b, u, prefetch_point(computes_by_stream, u, o->ahead, floor), host_name);
            on_device_now = true;
        }
        bool segment_wrote = false;
        if (!last_of_segment)
            continue;
        for (guint j = seg_start; j <= i; j++)
            segment_wrote = segment_wrote || g_array_index(uses, use, j).writes;
        bool last_segment = i + 1 == uses->len;
        if (!last_segment || ends_live) {
            if (segment_wrote || !host_valid) {
                uint64_t k = o->counter++;
                if (!host_live) {
                    strata_op ha = host_alloc;
                    ha.stream = u->stream;
                    strata_rewrite_plan_after(o->plan, u->index, &ha);
                    host_live = true;
                }
                g_snprintf(ev, sizeof ev, "of%" G_GUINT64_FORMAT ".out", k);
                emit_event(o, u->index, false, STRATA_OP_RECORD, u->stream, ev);
                emit_event(o, u->index, false, STRATA_OP_WAIT, OFFLOAD_STREAM, ev);
                strata_op c = strata_op_make(STRATA_OP_COPY, OFFLOAD_STREAM, host_name);
                c.src = b->name;
                strata_rewrite_plan_after(o->plan, u->index, &c);
                if (o->xla) {
                    /* copy-done in program order: the using stream waits for
                     * the copy there and frees the buffer itself */
                    uint64_t limit = last_segment ? b->free_index : g_array_index(uses, use, i + 1).index;
                    uint64_t done = done_point(computes_by_stream, u, o->ahead, limit);
                    g_snprintf(ev, sizeof ev, "of%" G_GUINT64_FORMAT ".done", k);
                    emit_event(o, u->index, false, STRATA_OP_RECORD, OFFLOAD_STREAM, ev);
                    emit_event(o, done, false, STRATA_OP_WAIT, u->stream, ev);
                    strata_op f = strata_op_make(STRATA_OP_FREE, u->stream, b->name);
                    strata_rewrite_plan_after(o->plan, done, &f);
                    floor = done;
                } else {
                    strata_op f = strata_op_make(STRATA_OP_FREE, OFFLOAD_STREAM, b->name);
                    strata_rewrite_plan_after(o->plan, u->index, &f);
                }
                host_valid = true;
            } else {
                strata_op f = strata_op_make(STRATA_OP_FREE, u->stream, b->name);
                strata_rewrite_plan_after(o->plan, u->index, &f);
            }
            on_device_now = false;
        }
        floor = (floor > u->index ? floor : u->index) + 1;
        seg_start = i + 1;
    }
    /* Where the trace frees the buffer: free the host copy too (and not the
     * device buffer if it is on the host by then). */
    if (b->free_index != UINT64_MAX) {
        if (!on_device_now)
            strata_rewrite_plan_drop(o->plan, b->free_index);
        if (host_live) {
            strata_op f = strata_op_make(STRATA_OP_FREE, b->stream, host_name);
            strata_rewrite_plan_after(o->plan, b->free_index, &f);
        }
    }
    g_free(host_name);
}

static void garray_free(gpointer p) { g_array_free(p, TRUE); }

static bool offload_plan(void *self, strata_source *in, GError **err)
{
    offload_policy *o = self;
    strata_buffer_table *t = strata_buffer_table_new();
    GHashTable *by_id = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, tracked_free);
    GPtrArray *order = g_ptr_array_new();
    GHashTable *computes_by_stream = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, garray_free);
    uint64_t index = 0, computes = 0, first_work = UINT64_MAX;
    char *trace_sched = NULL;
    const strata_op *op;
    int r;
    while ((r = strata_source_next(in, &op, err)) == 1) {
        strata_policy_note_sched(op, &trace_sched);
        use_at at = {by_id, t, index, computes, op->stream, strata_op_kind_is_collective(op->kind)};
        strata_op_operands(op, add_use, &at);
        bool works = op->kind == STRATA_OP_COPY || op->kind == STRATA_OP_COMPUTE || strata_op_kind_is_collective(op->kind);
        if (works && first_work == UINT64_MAX)
            first_work = index;
        if (op->kind == STRATA_OP_COMPUTE) {
            GArray *c = g_hash_table_lookup(computes_by_stream, op->stream);
            if (!c) {
                c = g_array_new(FALSE, FALSE, sizeof(uint64_t));
                g_hash_table_insert(computes_by_stream, g_strdup(op->stream), c);
            }
            g_array_append_val(c, index);
            computes++;
        }
        const strata_buffer_info *b = strata_buffer_table_feed(t, index, op);
        if (op->kind == STRATA_OP_ALLOC && b && b->tag == o->tag && on_device(o, b->memory)) {
            tracked *tr = g_new0(tracked, 1);
            tr->info = b;
            tr->uses = g_array_new(FALSE, TRUE, sizeof(use));
            g_array_set_clear_func(tr->uses, use_clear);
            g_hash_table_insert(by_id, GSIZE_TO_POINTER((gsize)b->id + 1), tr);
            g_ptr_array_add(order, tr);
        }
        index++;
    }
    if (r == 0 && !strata_policy_sched_xla(o->sched, trace_sched, o->hw, &o->xla, err))
        r = -1;
    g_free(trace_sched);
    if (r == 0)
        for (guint i = 0; i < order->len; i++)
            plan_buffer(o, g_ptr_array_index(order, i), first_work, computes_by_stream);
    g_ptr_array_free(order, TRUE);
    g_hash_table_destroy(by_id);
    g_hash_table_destroy(computes_by_stream);
    strata_buffer_table_free(t);
    return r == 0;
}

static void offload_destroy(void *self)
{
    offload_policy *o = self;
    g_free(o->host);
    g_free(o->sched);
    strata_rewrite_plan_free(o->plan);
    g_free(o);
}

static const strata_rewrite_ops offload_ops = {offload_plan, strata_rewrite_plan_map, NULL, NULL, offload_destroy};

static const char *const offload_kinds[] = {"activation", "param", "optstate", NULL};

static const strata_param_def offload_params[] = {
    {"kind", STRATA_PARAM_STRING, NULL, "the tag of the buffers kept in host memory", offload_kinds},
    {"ahead", STRATA_PARAM_INT, "2",
     "computes between the start of a copy back to the device and its use (and, under sched=xla, between the "
     "start and the done of a copy out)",
     NULL},
    {"sched", STRATA_PARAM_STRING, "auto",
     "execution model: xla (copy-done in program order: the device buffer is freed there, time stretches), cuda "
     "(freed on the offload stream), auto (the trace's option sched, else the hardware's [hardware] sched, else cuda)",
     strata_policy_sched_choices},
    {NULL, 0, NULL, NULL, NULL},
};

static strata_source *offload_apply(strata_source *in, const strata_params *p, const strata_hw *hw,
                                    GError **err)
{
    strata_tag tag = STRATA_TAG_NONE;
    if (!strata_tag_from_name(strata_params_string(p, "kind"), &tag))
        g_error("policy offload: kind not validated"); /* choices guarantee it */
    if (strata_params_int(p, "ahead") < 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "policy offload: expected ahead >= 0");
        goto fail;
    }
    const char *host = "host";
    if (hw) {
        host = NULL;
        for (uint32_t i = 0; i < strata_hw_memory_count(hw) && !host; i++) {
            const strata_memory_spec *m = strata_hw_memory(hw, i);
            if (m->kind == STRATA_MEM_HOST && !m->pageable)
                host = m->name;
        }
        if (!host) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "policy offload: hardware %s has no pinned host memory to offload to", strata_hw_name(hw));
            goto fail;
        }
    }
    offload_policy *o = g_new0(offload_policy, 1);
    o->tag = tag;
    o->ahead = (uint64_t)strata_params_int(p, "ahead");
    o->sched = g_strdup(strata_params_string(p, "sched"));
    o->hw = hw;
    o->host = g_strdup(host);
    o->plan = strata_rewrite_plan_new();
    return strata_rewrite_source_new(in, &offload_ops, o, "offload", err);
fail:
    strata_source_free(in);
    return NULL;
}

const strata_policy_type strata_policy_offload = {
    .name = "offload",
    .summary = "offload=activation|param|optstate[:ahead=N,sched=xla|cuda]: keep tagged buffers in pinned host memory "
    "between uses, copied back N computes ahead (JAX memory kinds)",
    .arg_required = true,
    .params = offload_params,
    .arg = "kind",
    .repeat_by = "kind", /* offload=param, then offload=optstate: two kinds */
    .apply = offload_apply,
};
