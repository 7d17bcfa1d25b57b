/*
 * xla_emit.c: groups, order and ops of `strata import xla` (contract in
 * xla_emit.h).
 *
 * Design: values are sorted by (allocation, offset, start) and chained into
 * groups; groups are walked in two sorted index arrays (by start, by end)
 * alongside the instruction sequence, so the emission is one pass over the
 * schedule. Operands name their defining instruction; get-tuple-element,
 * bitcast and copy-done are followed to the value they stand for. A donated
 * argument's allocation is one group for the whole program. Collectives
 * whose replica groups are mesh axes (xla_mesh.h) become strata
 * collectives after an `option mesh=`; -start/-done pairs run them on
 * stream xla-collective and wait at the done, as copy-start/-done do on
 * the copy streams.
 *
 * Invariants: every emitted group is allocated once and freed at most once,
 * after its alloc; an op names only live buffers (the trace checker's rule),
 * so an operand whose buffer is not live is left out of in=; no op's text
 * reaches the trace reader's line limit (append_op refuses it).
 */
#include "import/xla_emit.h"
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/lines.h"
#include "trace/writer.h"
#include "import/xla_mesh.h"
#include "import/xla_report.h"

#define XLA_HOST_MEMORY_SPACE 5
#define XLA_VMEM_MEMORY_SPACE 1
#define NO_GROUP UINT32_MAX
#define NO_VALUE UINT32_MAX
/* A zero-time compute after the arguments: strata counts the buffers
 * allocated before the first compute as the program's arguments. */
#define XLA_ENTRY_LABEL "xla.entry"

typedef enum { G_PENDING, G_LIVE, G_FREED } group_state;

typedef struct emitter {
    const xla_buffers *b;
    const xla_liverange *lr;
    const xla_hlo *h;
    strata_xla_figures *fig;
    GArray *groups;           /* xla_group */
    uint32_t *group_of;       /* value index -> group, NO_GROUP when not emitted */
    group_state *state;       /* per group */
    GHashTable *by_key;       /* value key -> value index + 1 */
    GHashTable *defined;      /* instruction name -> GArray of defined_in (owned) */
    GHashTable *copies;       /* copy-start name -> done event (owned) */
    xla_mesh *mesh;           /* the collectives' mesh, NULL when none was cut */
    GError *error;            /* the first op whose line the trace reader would refuse */
    GHashTable *group_sets;   /* collective name -> its group set + 1 in mesh */
    GHashTable *shifts;       /* collective-permute name -> its shift= (non-zero) */
    GHashTable *pair_sends;   /* collective-permute names whose pairs are devices but no shift (emit_pairs) */
    strata_op_list *ops;
    uint64_t live_bytes;
    uint64_t max;
} emitter;

/* Appends op unless its trace line would pass the reader's line limit
 * (STRATA_LINE_MAX): then the first such op is the import's error (names
 * and operand lists come from the dump, which has no such limit). */
static void append_op(emitter *e, const strata_op *op)
{
    if (e->error)
        return;
    char *text = strata_op_to_text(op);
    size_t n = strlen(text);
    g_free(text);
    if (n + 1 >= STRATA_LINE_MAX) {
        g_set_error(&e->error, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: expected trace lines below %d bytes (the trace reader's limit), the %s of '%.64s%s' "
                    "would take %zu (a name or operand list that long)",
                    e->fig->buffer_file, STRATA_LINE_MAX, strata_op_kind_name(op->kind), op->name ? op->name : "",
                    op->name && strlen(op->name) > 64 ? "..." : "", n + 1);
        return;
    }
    strata_op_list_append(e->ops, op);
}

typedef struct value_range {
    uint32_t value;
    uint64_t start, end;
} value_range;

static int cmp_range(const void *pa, const void *pb, void *user)
{
    const value_range *x = pa, *y = pb;
    const xla_buffers *b = user;
    const xla_value *vx = xla_buffers_value(b, x->value), *vy = xla_buffers_value(b, y->value);
    if (vx->alloc != vy->alloc)
        return vx->alloc < vy->alloc ? -1 : 1;
    if (vx->offset != vy->offset)
        return vx->offset < vy->offset ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->value < y->value ? -1 : x->value > y->value;
}

static xla_group_kind group_kind(const xla_allocation *a, const xla_group *g, uint64_t max)
{
    bool argument = (a->flags & XLA_ALLOC_PARAMETER) && g->start == 0;
    bool output = (a->flags & XLA_ALLOC_LIVE_OUT) && g->end >= max;
    if (argument && output)
        return XLA_DONATED;
    if (argument)
        return XLA_ARGUMENT;
    if (output)
        return XLA_OUTPUT;
    if (a->flags & XLA_ALLOC_CONSTANT)
        return XLA_CONSTANT;
    return XLA_TEMP;
}

/* The live ranges of the emitted values (thread-local and empty ones left out). */
static GArray *collect_ranges(emitter *e)
{
    GArray *r = g_array_new(FALSE, FALSE, sizeof(value_range));
    for (uint32_t i = 0; i < xla_buffers_n_values(e->b); i++) {
        const xla_value *v = xla_buffers_value(e->b, i);
        e->group_of[i] = NO_GROUP;
        if (xla_buffers_allocation(e->b, v->alloc)->flags & XLA_ALLOC_THREAD_LOCAL) {
            e->fig->n_thread_local_values++;
            continue;
        }
        if (v->size == 0) {
            e->fig->n_empty_values++;
            continue;
        }
        value_range vr = {.value = i};
        if (!xla_liverange_lookup(e->lr, v->key, &vr.start, &vr.end)) {
            e->fig->n_unranged_values++;
            vr.start = 0;
            vr.end = e->max;
        }
        g_array_append_val(r, vr);
    }
    g_qsort_with_data(r->data, (gint)r->len, sizeof(value_range), cmp_range, (gpointer)e->b);
    return r;
}

/* A group an instruction writes, and the bytes of its largest value there. */
typedef struct defined_in {
    uint32_t group;
    uint64_t bytes;
} defined_in;

static void note_defined(emitter *e, const xla_value *v, uint32_t group)
{
    GArray *list = g_hash_table_lookup(e->defined, v->name);
    if (list == NULL) {
        list = g_array_new(FALSE, FALSE, sizeof(defined_in));
        g_hash_table_insert(e->defined, g_strdup(v->name), list);
    }
    defined_in *last = list->len ? &g_array_index(list, defined_in, list->len - 1) : NULL;
    if (last && last->group == group) {
        last->bytes = MAX(last->bytes, v->size);
        return;
    }
    defined_in d = {.group = group, .bytes = v->size};
    g_array_append_val(list, d);
}

static bool is_donated(const xla_allocation *a)
{
    return (a->flags & XLA_ALLOC_PARAMETER) && (a->flags & XLA_ALLOC_LIVE_OUT);
}

/* An output allocation: its values are output bytes to XLA, never temp
 * (temp_allocation_total_size sums the preallocated-temp allocations). */
static bool is_output_allocation(const xla_allocation *a)
{
    return (a->flags & XLA_ALLOC_LIVE_OUT) && !(a->flags & XLA_ALLOC_PARAMETER);
}

/* Whether value i is live at the end of the program (a value with no
 * live range is taken as live throughout, as collect_ranges does). */
static bool live_at_end(const emitter *e, uint32_t i)
{
    uint64_t start = 0, end = e->max;
    xla_liverange_lookup(e->lr, xla_buffers_value(e->b, i)->key, &start, &end);
    return end >= e->max;
}

/* Value vr of an allocation held whole (donated or output): one group per
 * allocation, the allocation's size. A donated one is the caller's for the
 * whole program (XLA may put temporaries in it between the argument's last
 * use and the output's definition, but the bytes are held), named after
 * the argument; an output one is held from the first value XLA writes into
 * it to the end, named after the value live at the end. */
static void add_to_whole(emitter *e, const value_range *vr, const xla_value *v, const xla_allocation *a)
{
    bool donated = is_donated(a);
    xla_group *last = e->groups->len ? &g_array_index(e->groups, xla_group, e->groups->len - 1) : NULL;
    if (last == NULL || last->alloc != v->alloc) {
        xla_group g = {.alloc = v->alloc, .rep = vr->value, .offset = 0, .size = a->size,
                       .start = donated ? 0 : vr->start, .end = e->max, .held_output = !donated};
        g_array_append_val(e->groups, g);
        last = &g_array_index(e->groups, xla_group, e->groups->len - 1);
    }
    if (donated && vr->start == 0 && v->offset == 0)
        last->rep = vr->value;
    if (!donated) {
        last->start = MIN(last->start, vr->start);
        if (vr->end >= e->max && (!live_at_end(e, last->rep) || v->size > xla_buffers_value(e->b, last->rep)->size))
            last->rep = vr->value;
    }
    e->group_of[vr->value] = e->groups->len - 1;
    note_defined(e, v, e->groups->len - 1);
}

static void build_groups(emitter *e)
{
    GArray *r = collect_ranges(e);
    GHashTable *names = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < r->len; i++) {
        const value_range *vr = &g_array_index(r, value_range, i);
        const xla_value *v = xla_buffers_value(e->b, vr->value);
        xla_group *last = e->groups->len ? &g_array_index(e->groups, xla_group, e->groups->len - 1) : NULL;
        const xla_allocation *a = xla_buffers_allocation(e->b, v->alloc);
        if (is_donated(a) || is_output_allocation(a)) {
            add_to_whole(e, vr, v, a);
            continue;
        }
        /* Touching (start <= end: an in-place update), or adjacent (start ==
         * end + 1) at the same size: the slice is occupied at every schedule
         * time between, so one buffer holds it. Adjacent values of other
         * sizes stay apart: the larger would hold bytes XLA gives others. */
        if (last && last->alloc == v->alloc && last->offset == v->offset &&
            (vr->start <= last->end || (vr->start == last->end + 1 && v->size == last->size))) {
            last->end = MAX(last->end, vr->end);
            if (v->size > last->size) {
                last->size = v->size;
                last->rep = vr->value;
            }
        } else {
            xla_group g = {.alloc = v->alloc, .rep = vr->value, .offset = v->offset, .size = v->size,
                           .start = vr->start, .end = vr->end};
            g_array_append_val(e->groups, g);
        }
        e->group_of[vr->value] = e->groups->len - 1;
        note_defined(e, v, e->groups->len - 1);
    }
    for (guint i = 0; i < e->groups->len; i++) {
        xla_group *g = &g_array_index(e->groups, xla_group, i);
        g->kind = group_kind(xla_buffers_allocation(e->b, g->alloc), g, e->max);
        char *name = xla_trace_name(xla_buffers_value(e->b, g->rep)->key);
        for (unsigned k = 2; g_hash_table_contains(names, name); k++) {
            char *base = xla_trace_name(xla_buffers_value(e->b, g->rep)->key);
            g_free(name);
            name = g_strdup_printf("%s.g%u", base, k);
            g_free(base);
        }
        g->name = name;
        g_hash_table_add(names, name);
    }
    g_hash_table_destroy(names);
    g_array_free(r, TRUE);
}

static strata_tag group_tag(const xla_group *g)
{
    switch (g->kind) {
    case XLA_ARGUMENT:
    case XLA_DONATED:
    case XLA_CONSTANT: return STRATA_TAG_PARAM;
    case XLA_OUTPUT: return STRATA_TAG_OUTPUT;
    default: return g->end - g->start >= 2 ? STRATA_TAG_ACTIVATION : STRATA_TAG_TEMP;
    }
}

/* XLA's host memory space: the value's color, or its array layout's S(5). */
static bool value_on_host(const xla_value *v)
{
    return v->color == XLA_HOST_MEMORY_SPACE ||
           (!v->shape.is_tuple && v->shape.memory_space == XLA_HOST_MEMORY_SPACE);
}

/* The strata memory of a buffer (NULL: the device memory): XLA's memory
 * space from the value's colour or layout, or, for an entry parameter, from
 * the entry computation's layout (JAX's memory kinds: a pinned_host
 * argument is S(5) there, even where the backend's buffer assignment has
 * one colour, as on the CPU). Spaces as XLA's TPU backend numbers them
 * (xla/stream_executor/tpu and memory_space_assignment: 0 HBM, 1 VMEM,
 * 5 host); other spaces stay in the device memory. */
static const char *memory_of(const emitter *e, const xla_group *g, const xla_value *v)
{
    int space = v->color ? (int)MIN(v->color, 1024u) : v->shape.is_tuple ? 0 : v->shape.memory_space;
    const xla_allocation *a = xla_buffers_allocation(e->b, g->alloc);
    if (space == 0 && (a->flags & XLA_ALLOC_PARAMETER) && e->h)
        space = xla_hlo_parameter_space(e->h, a->parameter);
    return space == XLA_HOST_MEMORY_SPACE ? "host" : space == XLA_VMEM_MEMORY_SPACE ? "vmem" : NULL;
}

static void emit_alloc(emitter *e, uint32_t gi)
{
    const xla_group *g = &g_array_index(e->groups, xla_group, gi);
    const xla_value *v = xla_buffers_value(e->b, g->rep);
    char note[48];
    g_snprintf(note, sizeof note, "allocation.%u", g->alloc);
    strata_op op = strata_op_make_alloc(NULL, g->name, g->size, memory_of(e, g, v), group_tag(g));
    op.note = note;
    if (!v->shape.is_tuple) {
        bool full = v->shape.rank > 0 && v->shape.rank == v->shape.n_dims && v->shape.elements > 0;
        strata_op_set_shape(&op, v->shape.dtype, full ? v->shape.n_dims : 0, v->shape.dims);
    }
    append_op(e, &op);
    e->state[gi] = G_LIVE;
    e->live_bytes += g->size;
}

static void emit_free(emitter *e, uint32_t gi)
{
    const xla_group *g = &g_array_index(e->groups, xla_group, gi);
    strata_op op = strata_op_make(STRATA_OP_FREE, NULL, g->name);
    append_op(e, &op);
    e->state[gi] = G_FREED;
    e->live_bytes -= g->size;
}

static bool kept_to_end(const xla_group *g)
{
    return g->kind == XLA_OUTPUT || g->kind == XLA_DONATED;
}

static bool in_setup(const xla_group *g)
{
    return g->kind == XLA_ARGUMENT || g->kind == XLA_DONATED;
}

/* The value NAME{INDEX}; through a call (jaxlib 0.12's CPU small loops), its
 * callee's ROOT's, as XLA's dataflow gives a kCall its root's values. */
static uint32_t resolve_element(const emitter *e, const char *name, uint64_t element, int depth)
{
    char *k = g_strdup_printf("%s{%" G_GUINT64_FORMAT "}", name, element);
    gpointer v = g_hash_table_lookup(e->by_key, k);
    g_free(k);
    const xla_instr *in = v || e->h == NULL ? NULL : xla_hlo_find(e->h, name);
    if (v || in == NULL || in->call_root == NULL || depth > 8)
        return v ? GPOINTER_TO_UINT(v) - 1 : NO_VALUE;
    return resolve_element(e, in->call_root, element, depth + 1);
}

/* The value an operand stands for, following aliases; NO_VALUE when none.
 * NAME#INDEX (jaxlib 0.12's get-tuple-element, xla_hlo.h) is NAME{INDEX}. */
static uint32_t resolve_value(const emitter *e, const char *name, int depth)
{
    uint64_t element;
    g_autofree char *base = xla_hlo_element_operand(name, &element);
    if (base)
        return resolve_element(e, base, element, depth);
    char *key = g_strconcat(name, "{}", NULL);
    gpointer v = g_hash_table_lookup(e->by_key, key);
    g_free(key);
    if (v)
        return GPOINTER_TO_UINT(v) - 1;
    const xla_instr *in = e->h ? xla_hlo_find(e->h, name) : NULL;
    if (in == NULL || in->operands[0] == NULL || depth > 8)
        return NO_VALUE;
    if (in->tuple_index >= 0 || strcmp(in->opcode, "copy-done") == 0)
        return resolve_element(e, in->operands[0], (uint64_t)MAX(in->tuple_index, 0), depth + 1);
    if (strcmp(in->opcode, "bitcast") == 0)
        return resolve_value(e, in->operands[0], depth + 1);
    return NO_VALUE;
}

/* Bytes a compute touches in a buffer: the value's in a held output group. */
typedef struct touched {
    uint64_t charged, whole;
} touched;

/* Adds group gi's name once, with the bytes the instruction touches there. */
static void add_name(GPtrArray *names, GArray *sizes, const emitter *e, uint32_t gi, uint64_t bytes)
{
    if (gi == NO_GROUP || e->state[gi] != G_LIVE)
        return;
    const xla_group *g = &g_array_index(e->groups, xla_group, gi);
    touched t = {.charged = g->held_output ? MIN(bytes, g->size) : g->size, .whole = g->size};
    for (guint i = 0; i < names->len; i++)
        if (names->pdata[i] == g->name) {
            touched *have = &g_array_index(sizes, touched, i);
            have->charged = MAX(have->charged, t.charged);
            return;
        }
    g_ptr_array_add(names, g->name);
    g_array_append_val(sizes, t);
}

/* bytes= on a compute touching part of a held output group: the bytes of
 * the values it reads and writes, as if each had its own buffer. */
static void set_bytes_if_partial(strata_op *op, const GArray *in_sizes, const GArray *out_sizes)
{
    uint64_t total = 0;
    bool partial = false;
    for (int k = 0; k < 2; k++) {
        const GArray *sizes = k ? out_sizes : in_sizes;
        for (guint i = 0; i < sizes->len; i++) {
            const touched *t = &g_array_index(sizes, touched, i);
            total += t->charged;
            partial = partial || t->charged < t->whole;
        }
    }
    if (partial && total > 0) {
        op->bytes = total;
        op->has_bytes = true;
    }
}

static bool is_one_of(const char *op, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(op, *set) == 0)
            return true;
    return false;
}

static const char *const bookkeeping_ops[] = {
    "parameter", "tuple", "get-tuple-element", "bitcast", "constant", "while", "conditional",
    "call", "opt-barrier", "after-all", "add-dependency", "partition-id", "replica-id", "domain",
    "all-reduce-done", "all-gather-done", "collective-permute-done", "async-done", "async-update",
    "send-done", "recv-done", NULL};

static const char *const collective_ops[] = {
    "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
    "collective-broadcast", "all-reduce-start", "all-gather-start", "collective-permute-start",
    "ragged-all-to-all", "send", "recv", NULL};

static void emit_compute(emitter *e, const char *name, const xla_instr *in)
{
    GPtrArray *ins = g_ptr_array_new(), *outs = g_ptr_array_new();
    GArray *in_sizes = g_array_new(FALSE, FALSE, sizeof(touched)), *out_sizes = g_array_new(FALSE, FALSE, sizeof(touched));
    for (char **o = in ? in->operands : NULL; o && *o; o++) {
        uint32_t v = resolve_value(e, *o, 0);
        if (v != NO_VALUE)
            add_name(ins, in_sizes, e, e->group_of[v], xla_buffers_value(e->b, v)->size);
    }
    GArray *def = g_hash_table_lookup(e->defined, name);
    for (guint i = 0; def && i < def->len; i++) {
        const defined_in *d = &g_array_index(def, defined_in, i);
        add_name(outs, out_sizes, e, d->group, d->bytes);
    }
    char *label = xla_trace_name(name);
    strata_op op = strata_op_make_compute(NULL, label, in ? in->flops : 0, (const char *const *)ins->pdata, ins->len,
                                          (const char *const *)outs->pdata, outs->len, NULL);
    op.note = in ? in->opcode : NULL;
    set_bytes_if_partial(&op, in_sizes, out_sizes);
    e->fig->flops += op.flops;
    if (in && is_one_of(in->opcode, collective_ops))
        e->fig->n_collective_notes++;
    append_op(e, &op);
    e->fig->n_computes++;
    g_free(label);
    g_ptr_array_free(ins, TRUE);
    g_ptr_array_free(outs, TRUE);
    g_array_free(in_sizes, TRUE);
    g_array_free(out_sizes, TRUE);
}

static void emit_event(emitter *e, strata_op_kind kind, const char *event, const char *stream)
{
    strata_op op = strata_op_make(kind, stream, event);
    append_op(e, &op);
}

/* The value of result `index` of `name` ({} for an array result). */
static uint32_t result_value(const emitter *e, const char *name, int64_t index)
{
    char *key = index < 0 ? g_strconcat(name, "{}", NULL) : g_strdup_printf("%s{%" G_GINT64_FORMAT "}", name, index);
    gpointer v = g_hash_table_lookup(e->by_key, key);
    g_free(key);
    return v ? GPOINTER_TO_UINT(v) - 1 : NO_VALUE;
}

/* The live group of value v (a result_value); NO_GROUP when none. */
static uint32_t live_group(const emitter *e, uint32_t v)
{
    uint32_t g = v != NO_VALUE ? e->group_of[v] : NO_GROUP;
    return g != NO_GROUP && e->state[g] == G_LIVE ? g : NO_GROUP;
}

/* The bytes a collective or copy moves of group g for value v: the
 * value's in an output allocation held whole (a part of the buffer: the
 * op states bytes=), else the group's size. */
static uint64_t moved_bytes(const emitter *e, uint32_t v, uint32_t g)
{
    const xla_group *gr = &g_array_index(e->groups, xla_group, g);
    return gr->held_output && v != NO_VALUE ? MIN(xla_buffers_value(e->b, v)->size, gr->size) : gr->size;
}

/* copy-start: the copy runs on its own stream; the program waits at copy-done. */
static bool emit_copy_start(emitter *e, const char *name, const xla_instr *in)
{
    char *key = g_strconcat(name, "{0}", NULL);
    gpointer v = g_hash_table_lookup(e->by_key, key);
    g_free(key);
    uint32_t dv_id = v ? GPOINTER_TO_UINT(v) - 1 : NO_VALUE, dst = dv_id != NO_VALUE ? e->group_of[dv_id] : NO_GROUP;
    uint32_t sv_id = resolve_value(e, in->operands[0] ? in->operands[0] : "", 0);
    uint32_t src = sv_id != NO_VALUE ? e->group_of[sv_id] : NO_GROUP;
    if (dst == NO_GROUP || src == NO_GROUP || dst == src || e->state[dst] != G_LIVE ||
        e->state[src] != G_LIVE)
        return false;
    const xla_group *d = &g_array_index(e->groups, xla_group, dst);
    const xla_group *s = &g_array_index(e->groups, xla_group, src);
    const xla_value *dv = xla_buffers_value(e->b, d->rep), *sv = xla_buffers_value(e->b, s->rep);
    const char *stream = value_on_host(dv) ? "xla-d2h" : value_on_host(sv) ? "xla-h2d" : "xla-copy";
    uint64_t n = e->fig->n_copies++;
    char *go = g_strdup_printf("xc%" G_GUINT64_FORMAT ".go", n);
    char *done = g_strdup_printf("xc%" G_GUINT64_FORMAT ".done", n);
    emit_event(e, STRATA_OP_RECORD, go, STRATA_DEFAULT_STREAM);
    emit_event(e, STRATA_OP_WAIT, go, stream);
    uint64_t bytes = MIN(moved_bytes(e, sv_id, src), moved_bytes(e, dv_id, dst));
    strata_op op = strata_op_make_copy(stream, d->name, s->name, bytes < s->size ? bytes : 0);
    append_op(e, &op);
    emit_event(e, STRATA_OP_RECORD, done, stream);
    g_hash_table_insert(e->copies, g_strdup(name), done);
    g_free(go);
    return true;
}

typedef struct coll_kind {
    const char *opcode;
    strata_op_kind kind;
    bool async;
} coll_kind;

static const coll_kind coll_kinds[] = {
    {"all-reduce", STRATA_OP_ALL_REDUCE, false},   {"all-reduce-start", STRATA_OP_ALL_REDUCE, true},
    {"all-gather", STRATA_OP_ALL_GATHER, false},   {"all-gather-start", STRATA_OP_ALL_GATHER, true},
    {"reduce-scatter", STRATA_OP_REDUCE_SCATTER, false},
    {"all-to-all", STRATA_OP_ALL_TO_ALL, false},
    {"collective-permute", STRATA_OP_COLLECTIVE_PERMUTE, false},
    {"collective-permute-start", STRATA_OP_COLLECTIVE_PERMUTE, true},
    {NULL, STRATA_OP_COMPUTE, false},
};

static const coll_kind *find_coll(const char *opcode)
{
    for (const coll_kind *k = coll_kinds; k->opcode; k++)
        if (strcmp(k->opcode, opcode) == 0)
            return k;
    return NULL;
}

static uint64_t group_size(const emitter *e, uint32_t g)
{
    return g_array_index(e->groups, xla_group, g).size;
}

static bool emit_pairs(emitter *e, const char *name, const xla_instr *in, const coll_kind *k);

/* bytes= on a collective or copy that moves a part of a buffer (moved_bytes). */
static void set_part(strata_op *op, uint64_t bytes, bool part)
{
    op->has_bytes = part;
    op->bytes = part ? bytes : 0;
}

/* Appends a collective's ops: on the default stream, or, for an async
 * -start, on stream xla-collective between events (the program waits at
 * the -done, whose event is kept under the -start's name). */
static void emit_collective_ops(emitter *e, const char *name, const coll_kind *k, GArray *ops)
{
    const char *stream = k->async ? "xla-collective" : STRATA_DEFAULT_STREAM;
    char *go = NULL, *done = NULL;
    if (k->async) {
        uint64_t c = e->fig->n_async_collectives++;
        go = g_strdup_printf("xa%" G_GUINT64_FORMAT ".go", c);
        done = g_strdup_printf("xa%" G_GUINT64_FORMAT ".done", c);
        emit_event(e, STRATA_OP_RECORD, go, STRATA_DEFAULT_STREAM);
        emit_event(e, STRATA_OP_WAIT, go, stream);
    }
    for (guint i = 0; i < ops->len; i++) {
        strata_op *op = &g_array_index(ops, strata_op, i);
        op->stream = stream;
        append_op(e, op);
    }
    if (k->async) {
        emit_event(e, STRATA_OP_RECORD, done, stream);
        g_hash_table_insert(e->copies, g_strdup(name), done);
        g_free(go);
    }
    e->fig->n_collective_ops += ops->len;
    e->fig->n_collectives++;
}

/* An HLO collective as strata collectives over the mesh axes of its
 * replica groups: one op per array it moves (a tuple-shaped all-reduce or
 * all-to-all moves each operand). An async -start runs them on stream
 * xla-collective between events, the program waits at its -done. False
 * (then a compute with a note) when the groups are not mesh axes or the
 * buffers are not sized as the op requires. */
static bool emit_collective(emitter *e, const char *name, const xla_instr *in, const coll_kind *k)
{
    gpointer set = e->mesh ? g_hash_table_lookup(e->group_sets, name) : NULL;
    if (set == NULL)
        return k->kind == STRATA_OP_COLLECTIVE_PERMUTE && emit_pairs(e, name, in, k);
    uint64_t n = 1;
    char *axes = xla_mesh_axes(e->mesh, GPOINTER_TO_INT(set) - 1, &n);
    if (axes == NULL)
        return true; /* groups of one device: nothing moves */
    uint32_t n_ops = 0;
    while (in->operands[n_ops])
        n_ops++;
    GArray *ops = g_array_new(FALSE, TRUE, sizeof(strata_op));
    bool ok = n_ops > 0;
    for (uint32_t i = 0; ok && i < n_ops; i++) {
        /* all-gather-start's result is (operands, results); an -start
         * all-reduce's is its results, as the plain op's. */
        int64_t index = (k->kind == STRATA_OP_ALL_GATHER || k->kind == STRATA_OP_COLLECTIVE_PERMUTE) && k->async ? (n_ops > 1 ? -2 : 1)
                        : n_ops > 1 || in->shape.is_tuple ? (int64_t)i : -1;
        uint32_t out_v = index == -2 ? NO_VALUE : result_value(e, name, index), out = live_group(e, out_v);
        uint32_t src_v = resolve_value(e, in->operands[i], 0);
        uint32_t src = src_v != NO_VALUE ? e->group_of[src_v] : NO_GROUP;
        if (out == NO_GROUP || (k->kind != STRATA_OP_ALL_REDUCE && (src == NO_GROUP || e->state[src] != G_LIVE))) {
            ok = false;
            break;
        }
        uint64_t so = moved_bytes(e, out_v, out), si = k->kind == STRATA_OP_ALL_REDUCE ? so : moved_bytes(e, src_v, src);
        switch (k->kind) {
        case STRATA_OP_COLLECTIVE_PERMUTE: ok = so == si && n_ops == 1; break;
        case STRATA_OP_ALL_GATHER: ok = si <= UINT64_MAX / n && so == n * si; break;
        case STRATA_OP_REDUCE_SCATTER: ok = so <= UINT64_MAX / n && si == n * so; break;
        case STRATA_OP_ALL_TO_ALL: ok = so == si && so % n == 0; break;
        default: break;
        }
        strata_op op = strata_op_make_collective(
            k->kind, NULL, g_array_index(e->groups, xla_group, out).name,
            k->kind == STRATA_OP_ALL_REDUCE ? NULL : g_array_index(e->groups, xla_group, src).name, axes, NULL,
            GPOINTER_TO_INT(g_hash_table_lookup(e->shifts, name)));
        op.note = in->opcode;
        set_part(&op, si, so < group_size(e, out) || si < group_size(e, k->kind == STRATA_OP_ALL_REDUCE ? out : src));
        g_array_append_val(ops, op);
    }
    if (ok)
        emit_collective_ops(e, name, k, ops);
    g_array_free(ops, TRUE);
    g_free(axes);
    return ok;
}

/* A collective-permute whose pairs are not a shift of every device (an
 * SPMD reshard's partial permutation, self pairs; xla_mesh_pairs): one
 * point-to-point send per pair, `collective-permute OUT IN shift=K
 * axis=AXES device=S` (S sends to the device K ranks on along the axes
 * where S and T differ), a self pair a local copy on its device. A device
 * that no pair targets gets zeros in OUT (XLA's CollectivePermute); that
 * fill is not modelled. False (then a note) without a mesh, with pairs
 * not read as devices, or buffers not sized alike. */
static bool emit_pairs(emitter *e, const char *name, const xla_instr *in, const coll_kind *k)
{
    GArray *pairs = e->mesh && g_hash_table_contains(e->pair_sends, name) ? xla_mesh_pairs(e->mesh, in->pairs) : NULL;
    if (pairs == NULL)
        return false;
    uint32_t out_v = result_value(e, name, k->async ? 1 : -1), out = live_group(e, out_v);
    uint32_t src_v = in->operands[0] && !in->operands[1] ? resolve_value(e, in->operands[0], 0) : NO_VALUE;
    uint32_t src = src_v != NO_VALUE ? e->group_of[src_v] : NO_GROUP;
    bool ok = out != NO_GROUP && src != NO_GROUP && e->state[src] == G_LIVE &&
              moved_bytes(e, out_v, out) == moved_bytes(e, src_v, src);
    uint64_t bytes = ok ? moved_bytes(e, src_v, src) : 0;
    bool part = ok && (bytes < group_size(e, out) || bytes < group_size(e, src));
    GArray *ops = g_array_new(FALSE, TRUE, sizeof(strata_op));
    GPtrArray *axes = g_ptr_array_new_with_free_func(g_free);
    const char *out_name = ok ? g_array_index(e->groups, xla_group, out).name : NULL;
    const char *src_name = ok ? g_array_index(e->groups, xla_group, src).name : NULL;
    for (guint i = 0; ok && i + 1 < pairs->len; i += 2) {
        uint64_t a = g_array_index(pairs, uint64_t, i), b = g_array_index(pairs, uint64_t, i + 1);
        int32_t shift = 0;
        char *ax = xla_mesh_pair_axes(e->mesh, a, b, &shift);
        strata_op op = ax ? strata_op_make_collective(k->kind, NULL, out_name, src_name, ax, NULL, shift)
                          : strata_op_make_copy(NULL, out_name, src_name, 0);
        if (ax)
            g_ptr_array_add(axes, ax);
        set_part(&op, bytes, part);
        op.device = (uint32_t)a;
        op.has_device = true;
        op.note = in->opcode;
        g_array_append_val(ops, op);
    }
    if (ok)
        emit_collective_ops(e, name, k, ops);
    g_ptr_array_free(axes, TRUE);
    g_array_free(ops, TRUE);
    g_array_free(pairs, TRUE);
    return ok;
}

static bool is_done(const char *opcode)
{
    return g_str_has_suffix(opcode, "-done");
}

static void emit_instruction(emitter *e, const char *name)
{
    const xla_instr *in = e->h ? xla_hlo_find(e->h, name) : NULL;
    if (in == NULL) {
        GArray *def = g_hash_table_lookup(e->defined, name);
        bool parameter = def && def->len > 0 && in_setup(&g_array_index(e->groups, xla_group,
                                                                         g_array_index(def, defined_in, 0).group));
        /* left out of an HLO that writes NAME#INDEX, defining no value: a
         * get-tuple-element as jaxlib 0.12 prints it (xla_hlo.h), bookkeeping */
        if (e->h && def == NULL && xla_hlo_element_operands(e->h)->count > 0)
            e->fig->n_elided_gtes++;
        else if (!parameter)
            emit_compute(e, name, NULL);
        return;
    }
    if (is_done(in->opcode)) {
        const char *done = in->operands[0] ? g_hash_table_lookup(e->copies, in->operands[0]) : NULL;
        if (done)
            emit_event(e, STRATA_OP_WAIT, done, STRATA_DEFAULT_STREAM);
        return;
    }
    if (is_one_of(in->opcode, bookkeeping_ops))
        return;
    if (strcmp(in->opcode, "copy-start") == 0 && emit_copy_start(e, name, in))
        return;
    const coll_kind *ck = find_coll(in->opcode);
    if (ck && emit_collective(e, name, in, ck))
        return;
    emit_compute(e, name, in);
}

static int cmp_by_start(const void *pa, const void *pb, void *user)
{
    const xla_group *g = user;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    if (g[a].start != g[b].start)
        return g[a].start < g[b].start ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int cmp_by_end(const void *pa, const void *pb, void *user)
{
    const xla_group *g = user;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    if (g[a].end != g[b].end)
        return g[a].end < g[b].end ? -1 : 1;
    return a < b ? -1 : a > b;
}

static void note_peak(emitter *e, uint64_t t)
{
    if (e->live_bytes > e->fig->peak_bytes) {
        e->fig->peak_bytes = e->live_bytes;
        e->fig->peak_time = t;
    }
}

/* The schedule walk: setup, then per instruction allocs, op, frees. */
static void emit_schedule(emitter *e)
{
    guint n = e->groups->len;
    const xla_group *g = (const xla_group *)(void *)e->groups->data;
    uint32_t *by_start = g_new(uint32_t, n ? n : 1), *by_end = g_new(uint32_t, n ? n : 1);
    for (uint32_t i = 0; i < n; i++)
        by_start[i] = by_end[i] = i;
    g_qsort_with_data(by_start, (gint)n, sizeof(uint32_t), cmp_by_start, (gpointer)g);
    g_qsort_with_data(by_end, (gint)n, sizeof(uint32_t), cmp_by_end, (gpointer)g);
    if (e->mesh) {
        char *mesh = xla_mesh_option(e->mesh);
        strata_op opt = strata_op_make_option("mesh", mesh);
        append_op(e, &opt);
        g_free(e->fig->mesh);
        e->fig->mesh = mesh;
    }
    for (uint32_t i = 0; i < n; i++)
        if (in_setup(&g[i]))
            emit_alloc(e, i);
    strata_op entry = strata_op_make_timed(NULL, XLA_ENTRY_LABEL, 0);
    entry.note = "entry";
    append_op(e, &entry);
    uint64_t steps = xla_liverange_n_instructions(e->lr);
    guint si = 0, ei = 0;
    for (uint64_t t = 0; t < steps; t++) {
        for (; si < n && g[by_start[si]].start <= t; si++)
            if (e->state[by_start[si]] == G_PENDING)
                emit_alloc(e, by_start[si]);
        note_peak(e, t);
        emit_instruction(e, xla_liverange_instruction(e->lr, t));
        for (; ei < n && g[by_end[ei]].end <= t; ei++)
            if (e->state[by_end[ei]] == G_LIVE && !kept_to_end(&g[by_end[ei]]) && g[by_end[ei]].end < e->max)
                emit_free(e, by_end[ei]);
    }
    for (; si < n; si++)
        if (e->state[by_start[si]] == G_PENDING)
            emit_alloc(e, by_start[si]);
    note_peak(e, steps);
    for (uint32_t i = 0; i < n; i++)
        if (e->state[i] == G_LIVE && !kept_to_end(&g[i]))
            emit_free(e, i);
    g_free(by_start);
    g_free(by_end);
}

/* A collective's group set in the mesh: its replica groups as device ids
 * (xla_groups_flatten, by its group mode), or a collective-permute's pairs;
 * -1 when they are not mesh axes or cannot be mapped to devices. */
static int add_groups(xla_mesh *m, const xla_instr *in, uint64_t replicas, uint64_t partitions, int32_t *shift)
{
    xla_groups_mode mode = xla_groups_mode_of(in->opcode, in->channel, in->global_ids);
    if (find_coll(in->opcode)->kind == STRATA_OP_COLLECTIVE_PERMUTE) /* ids of one kind: devices when the other count is 1 */
        return in->pairs && (replicas <= 1 || partitions <= 1) ? xla_mesh_add_pairs(m, in->pairs, shift) : -1;
    const char *groups = in->replica_groups ? in->replica_groups : "{}";
    char *devices = NULL;
    if (!xla_groups_flatten(groups, mode, replicas, partitions, &devices))
        return -1;
    int set = xla_mesh_add(m, devices ? devices : groups);
    g_free(devices);
    return set;
}

/* The mesh of the scheduled collectives' replica groups; none (e->mesh
 * NULL) when no collective has mesh-like groups or the cuts do not divide. */
static void cut_mesh(emitter *e)
{
    if (e->h == NULL)
        return;
    uint64_t replicas, partitions;
    xla_hlo_counts(e->h, &replicas, &partitions, &e->fig->devices_from_sharding);
    xla_mesh *m = xla_mesh_new(xla_hlo_devices(e->h));
    bool any = false;
    for (uint64_t t = 0; t < xla_liverange_n_instructions(e->lr); t++) {
        const char *name = xla_liverange_instruction(e->lr, t);
        const xla_instr *in = xla_hlo_find(e->h, name);
        if (in == NULL || find_coll(in->opcode) == NULL)
            continue;
        int32_t shift = 0;
        int set = add_groups(m, in, replicas, partitions, &shift);
        if (shift != 0)
            g_hash_table_insert(e->shifts, (gpointer)name, GINT_TO_POINTER(shift));
        if (set >= 0) {
            g_hash_table_insert(e->group_sets, (gpointer)name, GINT_TO_POINTER(set + 1));
            any = true;
        } else if (find_coll(in->opcode)->kind == STRATA_OP_COLLECTIVE_PERMUTE && in->pairs &&
                   (replicas <= 1 || partitions <= 1)) {
            /* ids of one kind, devices; sent pair by pair on whatever mesh
             * the others cut (one axis of every device when none) */
            g_hash_table_add(e->pair_sends, (gpointer)name);
            any = true;
        }
    }
    if (e->fig->devices_from_sharding)
        e->fig->n_devices = partitions;
    if (any && xla_mesh_build(m))
        e->mesh = m;
    else
        xla_mesh_free(m);
}

static void garray_free(gpointer p)
{
    g_array_free(p, TRUE);
}

strata_source *xla_emit(const xla_buffers *b, const xla_liverange *lr, const xla_hlo *h,
                        strata_xla_figures *fig, GError **err)
{
    emitter e = {.b = b, .lr = lr, .h = h, .fig = fig, .max = xla_liverange_max(lr)};
    e.groups = g_array_new(FALSE, TRUE, sizeof(xla_group));
    e.group_of = g_new(uint32_t, xla_buffers_n_values(b) + 1);
    e.by_key = g_hash_table_new(g_str_hash, g_str_equal);
    e.defined = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, garray_free);
    e.copies = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    e.group_sets = g_hash_table_new(g_str_hash, g_str_equal);
    e.shifts = g_hash_table_new(g_str_hash, g_str_equal);
    e.pair_sends = g_hash_table_new(g_str_hash, g_str_equal);
    e.ops = strata_op_list_new();
    strata_xla_allocation_figures(b, fig);
    fig->n_instructions = xla_liverange_n_instructions(lr);
    fig->has_xla_peak = xla_liverange_peak(lr, &fig->xla_peak_time, &fig->xla_peak_bytes);
    for (uint32_t i = 0; i < xla_buffers_n_values(b); i++)
        g_hash_table_insert(e.by_key, xla_buffers_value(b, i)->key, GUINT_TO_POINTER(i + 1));
    build_groups(&e);
    cut_mesh(&e);
    fig->n_buffers = e.groups->len;
    e.state = g_new0(group_state, e.groups->len + 1);
    emit_schedule(&e);
    strata_source *src = NULL;
    if (e.error)
        g_propagate_error(err, e.error);
    else if (xla_plan_temps(b, (const xla_group *)(void *)e.groups->data, e.groups->len, fig, err)) {
        src = strata_op_list_to_source(e.ops, fig->buffer_file);
        e.ops = NULL;
    }
    strata_op_list_free(e.ops);
    for (guint i = 0; i < e.groups->len; i++)
        g_free(g_array_index(e.groups, xla_group, i).name);
    g_array_free(e.groups, TRUE);
    g_free(e.group_of);
    g_free(e.state);
    g_hash_table_destroy(e.by_key);
    g_hash_table_destroy(e.defined);
    g_hash_table_destroy(e.copies);
    g_hash_table_destroy(e.group_sets);
    g_hash_table_destroy(e.shifts);
    g_hash_table_destroy(e.pair_sends);
    xla_mesh_free(e.mesh);
    return src;
}
