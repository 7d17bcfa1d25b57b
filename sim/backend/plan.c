/*
 * plan.c: a trace resolved for real execution (see plan.h).
 *
 * Design: one pass over the source through the binder (bind/bind.h),
 * which checks every op and resolves its names, builds ops[], buffers[],
 * memories[], streams and units, and notes the lifetimes for planning
 * allocators; a second pass over ops[] (not the source) places the buffers
 * with each memory's placement (placement/placement.h, opened with the
 * trace's allocator options), in file order, and stops at the first alloc
 * that does not fit (invariant 4). Each memory's ledger hears the
 * program's ops as the first pass binds them and the allocator's stats as
 * the second places.
 * Without a hardware model, memories are made on first use with the shared
 * names (traces/FORMAT.md): `host` is pinned host memory, `pageable` pageable host
 * memory, anything else (and the default, `hbm`) device memory.
 */
#include "backend/plan.h"

#include <string.h>
#include "alloc/alloc.h"
#include "core/error.h"
#include "core/jsonout.h"
#include "ledger/ledger.h"
#include "bind/bind.h"
#include "placement/placement.h"

#define PLAN_NO_HW_CAPACITY (UINT64_C(1) << 40) /* placement space without hw */
#define PLAN_NO_HW_MEMORY "hbm" /* the shared name of the device memory */

typedef struct plan_builder {
    strata_plan *plan;
    strata_plan_options opt;
    GArray *records_of_event; /* GArray * of uint64_t record numbers, by event index */
} plan_builder;

static void plan_op_clear(strata_plan_op *op)
{
    g_free(op->label);
    g_free(op->kernel);
    g_free(op->ins);
    g_free(op->outs);
}

void strata_plan_free(strata_plan *plan)
{
    if (!plan)
        return;
    for (guint i = 0; i < plan->ops->len; i++)
        plan_op_clear(&g_array_index(plan->ops, strata_plan_op, i));
    g_array_free(plan->ops, TRUE);
    for (guint i = 0; i < plan->buffers->len; i++)
        g_free(g_array_index(plan->buffers, strata_plan_buffer, i).name);
    g_array_free(plan->buffers, TRUE);
    for (guint i = 0; i < plan->memories->len; i++) {
        strata_plan_memory *m = &g_array_index(plan->memories, strata_plan_memory, i);
        g_free(m->name);
        g_free(m->allocator);
        strata_placement_free(m->placement);
    }
    g_array_free(plan->memories, TRUE);
    g_ptr_array_free(plan->streams, TRUE);
    g_ptr_array_free(plan->units, TRUE);
    g_array_free(plan->unit_flops, TRUE);
    g_free(plan->origin);
    g_free(plan->hardware);
    g_free(plan);
}

/* Gives m its placement (and the ledger, the placement's). */
static void plan_memory_place(strata_plan_memory *m, const char *spec, const strata_plan_options *opt)
{
    m->allocator = g_strdup(opt->allocator ? opt->allocator : spec ? spec : STRATA_ALLOC_DEFAULT);
    strata_placement_config cfg = {
        .memory = m->name,
        .spec = m->allocator,
        .capacity = m->capacity,
        .alignment = m->alignment,
        .check = opt->check_allocators,
    };
    m->placement = strata_placement_new(&cfg);
    m->ledger = strata_placement_ledger(m->placement);
}

static strata_plan *plan_new(const char *origin, const strata_hw *hw, const strata_plan_options *opt)
{
    strata_plan *p = g_new0(strata_plan, 1);
    p->origin = g_strdup(origin);
    p->hardware = hw ? g_strdup(strata_hw_name(hw)) : NULL;
    p->ops = g_array_new(FALSE, TRUE, sizeof(strata_plan_op));
    p->buffers = g_array_new(FALSE, TRUE, sizeof(strata_plan_buffer));
    p->memories = g_array_new(FALSE, TRUE, sizeof(strata_plan_memory));
    p->streams = g_ptr_array_new_with_free_func(g_free);
    p->units = g_ptr_array_new_with_free_func(g_free);
    p->unit_flops = g_array_new(FALSE, TRUE, sizeof(double));
    if (hw) {
        for (uint32_t i = 0; i < strata_hw_memory_count(hw); i++) {
            const strata_memory_spec *s = strata_hw_memory(hw, i);
            strata_plan_memory m = {0};
            m.name = g_strdup(s->name);
            m.kind = s->kind;
            m.pageable = s->pageable;
            m.capacity = s->capacity;
            m.alignment = s->alignment ? s->alignment : 256;
            plan_memory_place(&m, s->allocator, opt);
            g_array_append_val(p->memories, m);
        }
        for (uint32_t i = 0; i < strata_hw_compute_count(hw); i++) {
            const strata_compute_spec *c = strata_hw_compute(hw, i);
            g_ptr_array_add(p->units, g_strdup(c->name));
            g_array_append_val(p->unit_flops, c->flops);
        }
    }
    return p;
}

/* Without a hardware model: a plan memory for every memory the binder has
 * made by name, with the shared meaning of the names, and a unit for every
 * unit. */
static void plan_sync_names(strata_plan *p, const strata_binder *binder, const strata_plan_options *opt)
{
    for (uint32_t i = p->memories->len; i < strata_binder_memory_count(binder); i++) {
        const char *name = strata_binder_memory_name(binder, i);
        strata_plan_memory m = {0};
        m.name = g_strdup(name);
        bool host = strcmp(name, "host") == 0 || strcmp(name, "pageable") == 0;
        m.kind = host ? STRATA_MEM_HOST : STRATA_MEM_DEVICE;
        m.pageable = strcmp(name, "pageable") == 0;
        m.capacity = PLAN_NO_HW_CAPACITY;
        m.alignment = 256;
        plan_memory_place(&m, NULL, opt);
        g_array_append_val(p->memories, m);
    }
    for (uint32_t i = p->units->len; i < strata_binder_unit_count(binder); i++) {
        double zero = 0;
        g_ptr_array_add(p->units, g_strdup(strata_binder_unit_name(binder, i)));
        g_array_append_val(p->unit_flops, zero);
    }
}

static strata_plan_buffer *plan_buffer(strata_plan *p, uint64_t id)
{
    return &g_array_index(p->buffers, strata_plan_buffer, id);
}

/* Adds one bound op to the plan. */
static bool plan_add(plan_builder *b, const strata_bound_op *op, GError **err)
{
    strata_plan *p = b->plan;
    const char *origin = p->origin;
    strata_plan_op po = {0};
    po.kind = op->kind;
    po.index = op->index;
    po.line = op->line;
    po.stream = op->stream;
    po.label = g_strdup(op->op->name ? op->op->name : "");
    po.memory = po.src_memory = po.dst_memory = -1;
    po.buf = op->buf;
    po.bytes = op->bytes;
    while (p->streams->len <= op->stream)
        g_ptr_array_add(p->streams, NULL);
    if (!p->streams->pdata[op->stream])
        p->streams->pdata[op->stream] = g_strdup(op->op->stream);

    switch (op->kind) {
    case STRATA_OP_ALLOC: {
        strata_plan_buffer buf = {0};
        buf.name = g_strdup(op->op->name);
        buf.memory = op->memory;
        buf.size = op->bytes;
        buf.stream = op->stream;
        buf.tag = op->tag;
        buf.dtype = op->dtype;
        buf.alloc_op = po.index;
        buf.free_op = UINT64_MAX;
        g_array_append_val(p->buffers, buf);
        po.memory = (int32_t)op->memory;
        strata_placement_note_alloc(strata_plan_memory_at(p, op->memory)->placement, op->buf, op->bytes, op->index,
                                    op->op->has_at, op->op->at_s);
        break;
    }
    case STRATA_OP_FREE:
        po.memory = (int32_t)op->memory;
        plan_buffer(p, op->buf)->free_op = po.index;
        strata_placement_note_free(strata_plan_memory_at(p, op->memory)->placement, op->buf, op->index,
                                   op->op->has_at, op->op->at_s);
        break;
    case STRATA_OP_COPY:
        po.src = op->src;
        po.dst_memory = (int32_t)op->dst_memory;
        po.src_memory = (int32_t)op->src_memory;
        break;
    case STRATA_OP_COMPUTE:
        po.unit = op->unit;
        po.has_flops = op->has_flops;
        po.flops = op->flops;
        po.has_time = op->has_time;
        po.time_s = op->time_s;
        po.n_ins = op->n_ins;
        po.n_outs = op->n_outs;
        po.ins = g_memdup2(op->ins, sizeof(uint64_t) * op->n_ins);
        po.outs = g_memdup2(op->outs, sizeof(uint64_t) * op->n_outs);
        /* dtype= is the type the op computes in; absent, its first operand's (traces/FORMAT.md) */
        po.dtype = op->op->dtype != STRATA_DTYPE_NONE ? op->op->dtype : op->dtype;
        po.kernel = g_strdup(op->op->kernel);
        po.n_kdims = op->op->n_kdims;
        memcpy(po.kdims, op->op->dims, sizeof po.kdims);
        break;
    case STRATA_OP_RECORD: {
        while (b->records_of_event->len <= op->event) {
            GArray *a = g_array_new(FALSE, FALSE, sizeof(uint64_t));
            g_array_append_val(b->records_of_event, a);
        }
        GArray *recs = g_array_index(b->records_of_event, GArray *, op->event);
        po.record = p->n_records++;
        g_array_append_val(recs, po.record);
        if (recs->len != op->event_seq) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL,
                        "%s:%" G_GUINT64_FORMAT ": record sequence %" G_GUINT64_FORMAT " of '%s' out of order",
                        origin, op->line, op->event_seq, op->op->name);
            goto fail;
        }
        break;
    }
    case STRATA_OP_WAIT:
        po.record = g_array_index(g_array_index(b->records_of_event, GArray *, op->event), uint64_t,
                                  op->event_seq - 1);
        break;
    case STRATA_OP_RELEASE:
        po.memory = op->memory == STRATA_BIND_NONE ? -1 : (int32_t)op->memory;
        break;
    default:
        break;
    }
    g_array_append_val(p->ops, po);
    return true;
fail:
    plan_op_clear(&po);
    return false;
}

/* Opens every memory's placement with the trace's allocator options (the
 * binder's checker) and plans the planning allocators. */
static bool plan_open(strata_plan *p, const strata_checker *c, GError **err)
{
    for (guint m = 0; m < p->memories->len; m++) {
        strata_plan_memory *mem = &g_array_index(p->memories, strata_plan_memory, m);
        if (!strata_placement_open(mem->placement, c, err) || !strata_placement_plan(mem->placement, NULL, err))
            return false;
        g_free(mem->allocator);
        mem->allocator = g_strdup(strata_placement_spec(mem->placement));
    }
    return true;
}

/* Cuts the plan before op i, which ran out of memory (invariant 4). */
static void plan_cut(strata_plan *p, guint i, const strata_plan_memory *mem)
{
    strata_alloc_stats st;
    strata_placement_stats(mem->placement, &st);
    p->oom = true;
    p->oom_op = i;
    p->oom_line = strata_plan_op_at(p, i)->line;
    p->oom_free = mem->capacity - st.allocated;
    p->oom_largest_free = st.largest_free;
    for (guint j = i; j < p->ops->len; j++)
        plan_op_clear(&g_array_index(p->ops, strata_plan_op, j));
    g_array_set_size(p->ops, i);
}

/* Places every buffer with its memory's placement, in file order. False
 * with err when an allocator broke an invariant (--check-allocators). */
static bool plan_place(strata_plan *p, GError **err)
{
    guint n_mem = p->memories->len;
    bool ok = true;
    for (guint i = 0; ok && i < p->ops->len; i++) {
        strata_plan_op *op = &g_array_index(p->ops, strata_plan_op, i);
        if (op->kind == STRATA_OP_ALLOC) {
            strata_plan_buffer *b = plan_buffer(p, op->buf);
            strata_plan_memory *mem = &g_array_index(p->memories, strata_plan_memory, b->memory);
            strata_place_result r = strata_placement_alloc(mem->placement, op->buf, b->size, op->stream, &b->offset, err);
            if (r == STRATA_PLACE_OOM) {
                plan_cut(p, i, mem);
                break;
            }
            mem->extent = MAX(mem->extent, b->offset + b->size);
            mem->n_buffers++;
            ok = r == STRATA_PLACED;
        } else if (op->kind == STRATA_OP_FREE) {
            ok = strata_placement_free_block(strata_plan_memory_at(p, op->memory)->placement, op->buf, err);
        } else if (op->kind == STRATA_OP_RELEASE) {
            for (guint m = 0; ok && m < n_mem; m++)
                if (op->memory < 0 || op->memory == (int32_t)m)
                    ok = strata_placement_release(strata_plan_memory_at(p, m)->placement, err);
        }
        if (!ok)
            g_prefix_error(err, "%s:%" G_GUINT64_FORMAT ": ", p->origin, op->line);
    }
    return ok;
}

strata_plan *strata_plan_build(const strata_hw *hw, strata_source *src, const strata_plan_options *opt,
                               GError **err)
{
    if (!strata_source_rewind(src, err))
        return NULL;
    const char *origin = strata_source_origin(src);
    plan_builder b = {.opt = opt ? *opt : (strata_plan_options){0}};
    b.plan = plan_new(origin, hw, &b.opt);
    b.records_of_event = g_array_new(FALSE, FALSE, sizeof(GArray *));
    strata_bind_options bopt = {.hw = hw, .default_memory = PLAN_NO_HW_MEMORY};
    strata_binder *binder = strata_binder_new(src, &bopt);
    const strata_bound_op *op = NULL;
    int got;
    bool ok = true;
    while (ok && (got = strata_binder_next(binder, &op, err)) == 1) {
        if (!hw)
            plan_sync_names(b.plan, binder, &b.opt);
        ok = plan_add(&b, op, err);
        for (guint m = 0; ok && m < b.plan->memories->len; m++)
            strata_ledger_bound_op(g_array_index(b.plan->memories, strata_plan_memory, m).ledger, m, op);
    }
    ok = ok && got == 0;
    if (ok && !hw) {
        /* A trace without allocs still has the default memory. */
        (void)strata_binder_memory(binder, NULL);
        plan_sync_names(b.plan, binder, &b.opt);
    }
    int default_memory = ok ? strata_binder_memory(binder, NULL) : -1;
    for (guint m = 0; ok && m < b.plan->memories->len; m++) {
        strata_plan_memory *mem = &g_array_index(b.plan->memories, strata_plan_memory, m);
        strata_ledger_read_options(mem->ledger, strata_binder_checker(binder), mem->name,
                                   (int)m == default_memory);
    }
    ok = ok && plan_open(b.plan, strata_binder_checker(binder), err);
    strata_binder_free(binder);
    for (guint i = 0; i < b.records_of_event->len; i++)
        g_array_free(g_array_index(b.records_of_event, GArray *, i), TRUE);
    g_array_free(b.records_of_event, TRUE);
    if (ok)
        ok = plan_place(b.plan, err);
    if (!ok) {
        strata_plan_free(b.plan);
        return NULL;
    }
    return b.plan;
}

int strata_plan_median_run(const double *makespans, int n)
{
    if (n <= 0)
        return -1;
    int *order = g_new(int, n);
    for (int i = 0; i < n; i++)
        order[i] = i;
    /* insertion sort by makespan, index breaking ties: deterministic */
    for (int i = 1; i < n; i++) {
        int v = order[i], j = i - 1;
        while (j >= 0 && (makespans[order[j]] > makespans[v] ||
                          (makespans[order[j]] == makespans[v] && order[j] > v))) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = v;
    }
    int median = order[(n - 1) / 2];
    g_free(order);
    return median;
}

typedef struct interval {
    double a, b;
} interval;

static gint interval_cmp(gconstpointer x, gconstpointer y)
{
    const interval *i = x, *j = y;
    return (i->a > j->a) - (i->a < j->a);
}

/* Length of the union of intervals (sorts them). */
static double union_length(GArray *iv)
{
    g_array_sort(iv, interval_cmp);
    double total = 0, cur_a = 0, cur_b = -1;
    for (guint i = 0; i < iv->len; i++) {
        interval x = g_array_index(iv, interval, i);
        if (x.a > cur_b) {
            if (cur_b > cur_a)
                total += cur_b - cur_a;
            cur_a = x.a;
            cur_b = x.b;
        } else if (x.b > cur_b) {
            cur_b = x.b;
        }
    }
    if (cur_b > cur_a)
        total += cur_b - cur_a;
    return total;
}

/* The measured timeline: one object per op, in op order. */
static JsonNode *spans_json(const strata_results *r)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_array(b);
    for (guint i = 0; i < r->spans->len; i++) {
        const strata_op_span *sp = &g_array_index(r->spans, strata_op_span, i);
        const strata_json_field times[] = {STRATA_JSON_REAL("start_s", sp->start_s),
                                           STRATA_JSON_REAL("end_s", sp->end_s), STRATA_JSON_INT("bytes", sp->bytes)};
        strata_results_json_op(b, sp->op_index, sp->line, sp->kind,
                               g_array_index(r->streams, strata_stream_result, sp->stream).name, sp->label, times,
                               G_N_ELEMENTS(times));
    }
    json_builder_end_array(b);
    JsonNode *root = json_builder_get_root(b);
    g_object_unref(b);
    return root;
}

strata_results *strata_plan_results(const strata_plan *plan, const strata_hw *hw,
                                    const strata_plan_timing *timing, const char *producer)
{
    strata_results *r = strata_results_new(producer);
    r->hardware = g_strdup(plan->hardware);
    r->trace = g_strdup(plan->origin);
    r->makespan_s = timing->makespan_s;
    r->ops = plan->ops->len;

    for (guint m = 0; m < plan->memories->len; m++) {
        const strata_plan_memory *pm = strata_plan_memory_at(plan, m);
        strata_memory_result *mr = strata_results_add_memory(r, pm->name);
        mr->kind = g_strdup(strata_mem_kind_name(pm->kind));
        mr->allocator = g_strdup(pm->allocator);
        mr->capacity_bytes = pm->capacity;
        strata_ledger_fill(pm->ledger, mr);
    }

    guint n_links = hw ? strata_hw_link_count(hw) : 0;
    GArray **link_iv = g_new0(GArray *, n_links ? n_links : 1);
    for (guint l = 0; l < n_links; l++) {
        strata_results_add_link(r, strata_hw_link(hw, l)->name);
        link_iv[l] = g_array_new(FALSE, FALSE, sizeof(interval));
    }
    for (guint s = 0; s < plan->streams->len; s++)
        strata_results_add_stream(r, plan->streams->pdata[s] ? plan->streams->pdata[s] : "");
    for (guint u = 0; u < plan->units->len; u++)
        strata_results_add_compute(r, plan->units->pdata[u]);

    strata_results_enable_spans(r);
    for (guint i = 0; i < plan->ops->len; i++) {
        const strata_plan_op *op = strata_plan_op_at(plan, i);
        double start = timing->start_s[i], end = timing->end_s[i], dur = end - start;
        strata_op_span *sp = strata_results_add_span(r, op->label);
        sp->op_index = op->index;
        sp->line = op->line;
        sp->kind = op->kind;
        sp->stream = op->stream;
        sp->start_s = start;
        sp->end_s = end;
        sp->bytes = op->bytes;
        sp->memory = op->memory;
        sp->src_memory = op->src_memory;
        sp->dst_memory = op->dst_memory;

        strata_stream_result *st = &g_array_index(r->streams, strata_stream_result, op->stream);
        st->ops++;
        if (op->kind == STRATA_OP_COPY || op->kind == STRATA_OP_COMPUTE)
            st->busy_s += dur;
        else if (op->kind == STRATA_OP_WAIT)
            st->stall_s += dur;
        if (op->kind == STRATA_OP_COMPUTE && op->unit != STRATA_BIND_NONE) {
            strata_compute_result *cr = &g_array_index(r->compute, strata_compute_result, op->unit);
            cr->busy_s += dur;
            cr->flops += op->has_flops ? op->flops : 0;
        }
        if (op->kind == STRATA_OP_COPY && hw && op->src_memory != op->dst_memory) {
            const strata_hop *hops = NULL;
            uint32_t n_hops = 0;
            if (strata_hw_route(hw, (uint32_t)op->src_memory, (uint32_t)op->dst_memory, &hops, &n_hops, NULL)) {
                for (uint32_t h = 0; h < n_hops; h++) {
                    strata_link_result *lr = &g_array_index(r->links, strata_link_result, hops[h].link);
                    lr->bytes += op->bytes;
                    interval x = {start, end};
                    g_array_append_val(link_iv[hops[h].link], x);
                }
            }
        }
    }
    strata_results_set_extra(r, "spans", spans_json(r));
    for (guint l = 0; l < n_links; l++) {
        g_array_index(r->links, strata_link_result, l).busy_s = union_length(link_iv[l]);
        g_array_free(link_iv[l], TRUE);
    }
    g_free(link_iv);

    if (plan->oom) {
        const strata_plan_buffer *b = NULL;
        /* the failing alloc is the buffer allocated after the last placed one */
        for (guint i = 0; i < plan->buffers->len; i++)
            if (strata_plan_buffer_at(plan, i)->alloc_op == plan->oom_op)
                b = strata_plan_buffer_at(plan, i);
        if (b)
            strata_results_set_oom(r, plan->oom_op, plan->oom_line, strata_plan_memory_at(plan, b->memory)->name, b->name,
                                   plan->streams->pdata[b->stream], b->size, plan->oom_free,
                                   plan->oom_largest_free);
    }
    return r;
}

void strata_plan_set_replay_extra(strata_results *r, const char *backend, const char *device_memory, int warmup,
                                  int repeats, const double *makespans)
{
    JsonBuilder *jb = strata_json_object_begin();
    strata_json_add_string(jb, "backend", backend);
    if (device_memory)
        strata_json_add_string(jb, "device_memory", device_memory);
    strata_json_add_int(jb, "warmup", warmup);
    strata_json_add_int(jb, "repeats", repeats);
    strata_json_open_array(jb, "makespans_s");
    for (int i = 0; i < repeats; i++)
        json_builder_add_double_value(jb, makespans[i]);
    json_builder_end_array(jb);
    json_builder_end_object(jb);
    strata_results_set_extra(r, "replay", json_builder_get_root(jb));
    g_object_unref(jb);
}
