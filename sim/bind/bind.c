/*
 * bind.c: a checked op stream bound to the hardware (contract in bind.h).
 *
 * State: the checker of the current pass; the memory and unit names by
 * index (the model's, or those made so far without one); `memory_refs`,
 * the memory index of each memory name the current checker has interned,
 * so a buffer's memory (which the checker hands out as its interned name)
 * is found by comparing pointers (a scan of the first few, then a hash
 * on the pointer), never by name; with a model, the routes used so far:
 * `route_ids` maps a pair (src, dst) to its dense id, `routes` holds each
 * id's pair and hops; the device of each stream's first op. The binder
 * keeps nothing per buffer: the checker already does. Nothing here is
 * sized by the model's memory count squared: route storage grows with the
 * pairs that copies use.
 *
 * Invariants:
 *  1. memory_refs and ref_index hold pointers interned by the current
 *     checker only (emptied when a rewind replaces the checker);
 *  2. memories and units made by name, route ids and stream devices are
 *     never dropped, so they hold across rewinds;
 *  3. a pair is in route_ids only after strata_hw_route() found its route,
 *     and routes[id] holds that route's hops.
 */
#include "bind/bind.h"
#include "bind/trace_options.h"
#include <assert.h>
#include <stdarg.h>
#include <string.h>
#include "core/error.h"
#include "core/idmap.h"
#include "collective/coll_algo.h"
#include "kernel/kernel.h"
#include "spmd/spmd_names.h"

#define DEFAULT_MEMORY "hbm"
#define DEFAULT_UNIT "compute"
/* Memory refs scanned before the pointer hash takes over (one device
 * names a handful of memories: a scan is cheaper than hashing). */
#define REFS_SCANNED 8

/* A route handed out: its pair and hops (owned by the model). */
typedef struct bound_route {
    uint32_t src, dst;
    const strata_hop *hops;
    uint32_t n;
} bound_route;

/* A memory name as the checker interned it, and its memory index. */
typedef struct memory_ref {
    const char *name;
    uint32_t index;
} memory_ref;

struct strata_binder {
    strata_source *src;
    const strata_hw *hw;
    char *default_memory;     /* without hw */
    bool allow_spmd;
    bool expanded;            /* hw has several devices: it reads the SPMD expansion (device= on each op) */
    strata_checker *checker;
    GArray *memory_refs;      /* memory_ref: the first REFS_SCANNED */
    GHashTable *ref_index;    /* the rest: interned name -> memory index + 1 */
    int64_t default_index;    /* the default memory's index; -1 until first needed */
    GPtrArray *memory_names;  /* char * (owned), by index: the model's, or made by name */
    GPtrArray *unit_names;    /* char * (owned), by index: the same for units */
    strata_idmap *route_ids;  /* with hw: pair key (route_key) -> id + 1 */
    GArray *routes;           /* bound_route, by id */
    GArray *stream_device;    /* uint32_t by stream: its first op's device (NONE: not yet) */
    strata_bound_op bound;
    uint64_t n_ops;
};

/* A pair of memories as one 64-bit key, 32 bits each. */
static uint64_t route_key(uint32_t src, uint32_t dst)
{
    return ((uint64_t)src << 32) | dst;
}

/* The checker of a pass: a model of several devices reads the SPMD
 * expansion's ops (its names, labelled as the program wrote them), any
 * other a program (spmd/spmd_names.h). */
static strata_checker *new_checker(const strata_binder *b)
{
    strata_checker *c = strata_checker_new(strata_source_origin(b->src));
    strata_checker_set_namer(c, b->expanded ? &strata_spmd_expansion_namer : &strata_spmd_program_namer);
    return c;
}

strata_binder *strata_binder_new(strata_source *src, const strata_bind_options *opt)
{
    strata_binder *b = g_new0(strata_binder, 1);
    b->src = src;
    b->hw = opt ? opt->hw : NULL;
    b->allow_spmd = opt && opt->allow_spmd;
    b->default_memory = g_strdup(opt && opt->default_memory ? opt->default_memory : DEFAULT_MEMORY);
    b->expanded = b->hw && strata_hw_devices(b->hw) > 1; /* the model is b's for its life: once */
    b->checker = new_checker(b);
    b->memory_refs = g_array_new(FALSE, FALSE, sizeof(memory_ref));
    b->ref_index = g_hash_table_new(g_direct_hash, g_direct_equal);
    b->routes = g_array_new(FALSE, FALSE, sizeof(bound_route));
    b->stream_device = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    b->default_index = -1;
    b->memory_names = g_ptr_array_new_with_free_func(g_free);
    b->unit_names = g_ptr_array_new_with_free_func(g_free);
    if (b->hw) {
        uint32_t n = strata_hw_memory_count(b->hw);
        b->route_ids = strata_idmap_new();
        for (uint32_t i = 0; i < n; i++)
            g_ptr_array_add(b->memory_names, g_strdup(strata_hw_memory(b->hw, i)->name));
        for (uint32_t i = 0; i < strata_hw_compute_count(b->hw); i++)
            g_ptr_array_add(b->unit_names, g_strdup(strata_hw_compute(b->hw, i)->name));
    }
    return b;
}

void strata_binder_free(strata_binder *b)
{
    if (!b)
        return;
    strata_checker_free(b->checker);
    g_array_free(b->memory_refs, TRUE);
    g_ptr_array_free(b->memory_names, TRUE);
    g_ptr_array_free(b->unit_names, TRUE);
    g_hash_table_destroy(b->ref_index);
    strata_idmap_free(b->route_ids);
    g_array_free(b->routes, TRUE);
    g_array_free(b->stream_device, TRUE);
    g_free(b->default_memory);
    g_free(b);
}

bool strata_binder_rewind(strata_binder *b, GError **err)
{
    strata_checker_free(b->checker);
    b->checker = new_checker(b);
    g_array_set_size(b->memory_refs, 0);
    g_hash_table_remove_all(b->ref_index); /* invariant 1 */
    b->n_ops = 0;
    return strata_source_rewind(b->src, err);
}

const char *strata_binder_origin(const strata_binder *b) { return strata_source_origin(b->src); }
const strata_checker *strata_binder_checker(const strata_binder *b) { return b->checker; }
uint64_t strata_binder_op_count(const strata_binder *b) { return b->n_ops; }

uint32_t strata_binder_memory_count(const strata_binder *b) { return b->memory_names->len; }
uint32_t strata_binder_unit_count(const strata_binder *b) { return b->unit_names->len; }

const char *strata_binder_memory_name(const strata_binder *b, uint32_t memory)
{
    return memory < b->memory_names->len ? g_ptr_array_index(b->memory_names, memory) : NULL;
}

const char *strata_binder_unit_name(const strata_binder *b, uint32_t unit)
{
    return unit < b->unit_names->len ? g_ptr_array_index(b->unit_names, unit) : NULL;
}

/* Index of `name` in names, appended when new. */
static uint32_t intern(GPtrArray *names, const char *name)
{
    for (guint i = 0; i < names->len; i++)
        if (strcmp(g_ptr_array_index(names, i), name) == 0)
            return i;
    g_ptr_array_add(names, g_strdup(name));
    return names->len - 1;
}

int strata_binder_memory(strata_binder *b, const char *name)
{
    if (b->hw)
        return strata_hw_memory_index(b->hw, name);
    return (int)intern(b->memory_names, name ? name : b->default_memory);
}

uint32_t strata_binder_route_count(const strata_binder *b) { return b->routes->len; }

void strata_binder_route_hops(const strata_binder *b, uint32_t route, const strata_hop **hops, uint32_t *n)
{
    if (route >= b->routes->len) {
        *hops = NULL;
        *n = 0;
        return;
    }
    const bound_route *r = &g_array_index(b->routes, bound_route, route);
    *hops = r->hops;
    *n = r->n;
}

uint32_t strata_binder_stream_device(const strata_binder *b, uint32_t stream)
{
    return stream < b->stream_device->len ? g_array_index(b->stream_device, uint32_t, stream) : STRATA_BIND_NONE;
}

/* An input error at op: ORIGIN:LINE, or ORIGIN: op N for a generated op
 * (the checker's form). */
G_GNUC_PRINTF(4, 5)
static bool fail(const strata_binder *b, const strata_op *op, GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strata_vfail_at_op(err, strata_binder_origin(b), op->line, b->n_ops + 1, fmt, ap);
    va_end(ap);
    return false;
}

/* "a, b, c": the names of the model's memories (units: true) for messages. */
static char *known_names(const strata_hw *hw, bool units)
{
    GString *s = g_string_new(NULL);
    uint32_t n = units ? strata_hw_compute_count(hw) : strata_hw_memory_count(hw);
    for (uint32_t i = 0; i < n; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "",
                               units ? strata_hw_compute(hw, i)->name : strata_hw_memory(hw, i)->name);
    return g_string_free(s, FALSE);
}

static uint32_t default_memory(strata_binder *b)
{
    if (b->default_index < 0)
        b->default_index = strata_binder_memory(b, NULL);
    return (uint32_t)b->default_index;
}

/* The memory named `name` (NULL: the default), or false with err. */
static bool resolve_memory(strata_binder *b, const strata_op *op, const char *name, uint32_t *memory, GError **err)
{
    int m = name ? strata_binder_memory(b, name) : (int)default_memory(b);
    if (m >= 0) {
        *memory = (uint32_t)m;
        return true;
    }
    char *known = known_names(b->hw, false);
    fail(b, op, err, "expected a memory of %s (one of %s), got '%s'", strata_hw_origin(b->hw), known, name);
    g_free(known);
    return false;
}

/* The memory of a name the checker interned: by pointer once it is known. */
static bool interned_memory(strata_binder *b, const strata_op *op, const char *name, uint32_t *memory,
                            GError **err)
{
    if (!name) {
        *memory = default_memory(b);
        return true;
    }
    for (guint i = 0; i < b->memory_refs->len; i++) {
        const memory_ref *r = &g_array_index(b->memory_refs, memory_ref, i);
        if (r->name == name) {
            *memory = r->index;
            return true;
        }
    }
    gpointer found = b->memory_refs->len == REFS_SCANNED ? g_hash_table_lookup(b->ref_index, name) : NULL;
    if (found) {
        *memory = GPOINTER_TO_UINT(found) - 1;
        return true;
    }
    if (!resolve_memory(b, op, name, memory, err))
        return false;
    if (b->memory_refs->len < REFS_SCANNED) {
        memory_ref r = {name, *memory};
        g_array_append_val(b->memory_refs, r);
    } else {
        g_hash_table_insert(b->ref_index, (gpointer)name, GUINT_TO_POINTER(*memory + 1));
    }
    return true;
}

/* A compute's unit: unit= or the first; NONE when the model has no unit and
 * the op gives time=. */
static bool bind_unit(strata_binder *b, const strata_op *op, uint32_t *unit, GError **err)
{
    if (!b->hw) {
        const char *name = op->unit ? op->unit
                           : b->unit_names->len ? g_ptr_array_index(b->unit_names, 0)
                                                : DEFAULT_UNIT;
        *unit = intern(b->unit_names, name);
        return true;
    }
    if (strata_hw_compute_count(b->hw) == 0 && !op->unit) {
        *unit = STRATA_BIND_NONE;
        if (op->has_time)
            return true;
        return fail(b, op, err, "expected %s to declare a [compute NAME] unit for compute '%s' (or time= on it)",
                    strata_hw_origin(b->hw), op->name);
    }
    int u = strata_hw_compute_index(b->hw, op->unit);
    if (u >= 0) {
        *unit = (uint32_t)u;
        return true;
    }
    char *known = known_names(b->hw, true);
    fail(b, op, err, "expected a compute unit of %s (one of %s), got '%s'", strata_hw_origin(b->hw),
         *known ? known : "none", op->unit);
    g_free(known);
    return false;
}

#ifndef NDEBUG
/* Invariant 3 for o's pair: its id names the route between its memories. */
static bool route_ok(const strata_binder *b, const strata_bound_op *o)
{
    if (o->route >= b->routes->len)
        return false;
    const bound_route *r = &g_array_index(b->routes, bound_route, o->route);
    return r->src == o->src_memory && r->dst == o->dst_memory && (r->n == 0 || r->hops);
}

/* bind.h's invariant 1: every index of the bound op is below its count. */
static bool below(uint32_t i, guint n) { return i == STRATA_BIND_NONE || i < n; }
static bool bound_ok(const strata_binder *b, const strata_bound_op *o)
{
    return below(o->memory, b->memory_names->len) && below(o->src_memory, b->memory_names->len) &&
           below(o->dst_memory, b->memory_names->len) && below(o->unit, b->unit_names->len) &&
           below(o->route, b->routes->len) && o->stream < b->stream_device->len && o->index + 1 == b->n_ops;
}
#endif

/* A copy's memories and route, checked against the model once per pair. */
static bool bind_copy(strata_binder *b, const strata_op *op, const strata_op_refs *refs, strata_bound_op *o,
                      GError **err)
{
    if (!interned_memory(b, op, refs->memory, &o->dst_memory, err) ||
        !interned_memory(b, op, refs->src_memory, &o->src_memory, err))
        return false;
    if (!b->hw)
        return true;
    uint64_t key = route_key(o->src_memory, o->dst_memory);
    void *id = strata_idmap_get(b->route_ids, key);
    if (id) {
        o->route = GPOINTER_TO_UINT(id) - 1;
        assert(route_ok(b, o)); /* invariant 3 */
        return true;
    }
    bound_route r = {.src = o->src_memory, .dst = o->dst_memory};
    GError *local = NULL;
    if (!strata_hw_route(b->hw, r.src, r.dst, &r.hops, &r.n, &local)) {
        fail(b, op, err, "copy %s <- %s: %s", op->name, op->src, local->message);
        g_error_free(local);
        return false;
    }
    o->route = b->routes->len;
    g_array_append_val(b->routes, r);
    strata_idmap_put(b->route_ids, key, GUINT_TO_POINTER(o->route + 1));
    assert(route_ok(b, o)); /* invariant 3 */
    return true;
}

/* A compute's kernel= names a row of the kernels' table, and its dims=
 * and mask= fit that row (models/kernel/kernel.h; trace/ reads only their
 * syntax); dims= and mask= come with a kernel=. */
static bool check_kernel(const strata_binder *b, const strata_op *op, GError **err)
{
    if (!op->kernel) {
        if (op->n_kdims || op->mask)
            return fail(b, op, err, "expected kernel=NAME with %s", op->n_kdims ? "dims=" : "mask=");
        return true;
    }
    const strata_kernel_model *k = strata_kernel_find(op->kernel);
    char *why = NULL;
    if (!k) {
        char *known = strata_kernel_names();
        fail(b, op, err, "unknown kernel '%s' (kernels: %s)", op->kernel, known);
        g_free(known);
        return false;
    }
    if (strata_kernel_check(k, op->n_kdims, op->mask, &why))
        return true;
    fail(b, op, err, "%s", why);
    g_free(why);
    return false;
}

static bool bind_compute(strata_binder *b, const strata_op *op, strata_bound_op *o, GError **err)
{
    if (!check_kernel(b, op, err) || !bind_unit(b, op, &o->unit, err))
        return false;
    if (b->hw && o->unit != STRATA_BIND_NONE)
        o->memory = strata_hw_compute(b->hw, o->unit)->operands;
    return true;
}

/* The device that runs op (bind.h). */
static uint32_t op_device(const strata_binder *b, const strata_op *op)
{
    if (op->has_device)
        return op->device;
    return b->allow_spmd ? STRATA_BIND_NONE : 0;
}

/* Notes the device of the stream's first op. */
/* Inline in both callers (strata_binder_next once an op). */
static inline __attribute__((always_inline)) void note_stream_device(strata_binder *b, const strata_bound_op *o)
{
    GArray *d = b->stream_device;
    if (o->stream < d->len) {
        uint32_t *at = &g_array_index(d, uint32_t, o->stream);
        if (*at == STRATA_BIND_NONE)
            *at = o->device;
        return;
    }
    uint32_t none = STRATA_BIND_NONE;
    while (d->len < o->stream)
        g_array_append_val(d, none);
    g_array_append_val(d, o->device);
}

void strata_binder_restore_stream_device(strata_binder *b, uint32_t stream, uint32_t device)
{
    note_stream_device(b, &(strata_bound_op){.stream = stream, .device = device});
}

void strata_binder_route_pair(const strata_binder *b, uint32_t route, uint32_t *src, uint32_t *dst)
{
    assert(route < b->routes->len);
    const bound_route *r = &g_array_index(b->routes, bound_route, route);
    *src = r->src;
    *dst = r->dst;
}

bool strata_binder_restore_route(strata_binder *b, uint32_t src, uint32_t dst, GError **err)
{
    if (!b->hw) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "a route restored without a model");
        return false;
    }
    uint64_t key = route_key(src, dst);
    if (strata_idmap_get(b->route_ids, key))
        return true;
    bound_route r = {.src = src, .dst = dst};
    if (src >= strata_hw_memory_count(b->hw) || dst >= strata_hw_memory_count(b->hw)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "memories %u and %u: the model has %u", src, dst,
                    strata_hw_memory_count(b->hw));
        return false;
    }
    if (!strata_hw_route(b->hw, r.src, r.dst, &r.hops, &r.n, err))
        return false;
    uint32_t id = b->routes->len;
    g_array_append_val(b->routes, r);
    strata_idmap_put(b->route_ids, key, GUINT_TO_POINTER(id + 1));
    return true;
}

/* A collective's algo= names a row of the algorithms' table that serves
 * its kind (models/collective/coll_algo.h; trace/ reads only its syntax). */
static bool check_algo(const strata_binder *b, const strata_op *op, GError **err)
{
    char *why = NULL;
    if (!op->algo || strata_coll_algo_lookup(op->kind, op->algo, &why))
        return true;
    fail(b, op, err, "%s", why);
    g_free(why);
    return false;
}

/* Resolves a checked non-option op into b->bound. */
static bool bind_op(strata_binder *b, const strata_op *op, const strata_op_refs *refs, GError **err)
{
    /* Every field named: none left for a clear of the whole struct first. */
    strata_bound_op *o = &b->bound;
    *o = (strata_bound_op){.op = op, .kind = op->kind, .index = b->n_ops, .line = op->line,
                           .stream = refs->stream, .device = op_device(b, op), .buf = refs->buf, .src = refs->src, .bytes = refs->bytes,
                           .dtype = refs->dtype, .tag = op->tag, .memory = STRATA_BIND_NONE, .src_memory = STRATA_BIND_NONE,
                           .dst_memory = STRATA_BIND_NONE, .route = STRATA_BIND_NONE, .unit = STRATA_BIND_NONE,
                           .has_flops = op->has_flops, .flops = op->has_flops ? op->flops : 0.0,
                           .has_time = op->has_time, .time_s = op->time_s, .ins = refs->ins, .outs = refs->outs,
                           .n_ins = op->n_ins, .n_outs = op->n_outs, .group_size = refs->group_size,
                           .event = 0, .event_seq = 0};
    if (strata_op_kind_is_collective(op->kind) && !check_algo(b, op, err))
        return false;
    bool expanded = b->expanded; /* device= names the device each op runs on */
    /* one test for the ops of one device (most ops), then which refusal */
    if (!b->allow_spmd && (strata_op_kind_is_collective(op->kind) || op->has_device)) {
        if (b->hw && !expanded)
            return fail(b, op, err, "expected an op of one device, got %s%s: this hardware model has one device (a "
                        "slice of one, --set hardware.devices=1, is one), and collectives and device= run over the "
                        "devices of a model with devices = 2 or more, the trace's mesh",
                        strata_op_kind_name(op->kind), op->has_device ? " with device=" : "");
        if (strata_op_kind_is_collective(op->kind) || !expanded)
            return fail(b, op, err, "expected an op of one device, got %s%s: collectives and device= run on a "
                        "hardware model with devices = N (the trace's mesh), through the SPMD expansion",
                        strata_op_kind_name(op->kind), op->has_device ? " with device=" : "");
    }
    switch (op->kind) {
    case STRATA_OP_ALLOC:
    case STRATA_OP_FREE:
        return interned_memory(b, op, refs->memory, &o->memory, err);
    case STRATA_OP_COPY:
        return bind_copy(b, op, refs, o, err);
    case STRATA_OP_COMPUTE:
        return bind_compute(b, op, o, err);
    case STRATA_OP_RECORD:
    case STRATA_OP_WAIT:
        o->event = refs->event;
        o->event_seq = refs->event_seq;
        break;
    case STRATA_OP_RELEASE:
        if (op->memory && !resolve_memory(b, op, op->memory, &o->memory, err))
            return false;
        break;
    default:
        break;
    }
    return true;
}

int strata_binder_next(strata_binder *b, const strata_bound_op **op, GError **err)
{
    for (;;) {
        const strata_op *in = NULL;
        int got = strata_source_next(b->src, &in, err);
        if (got <= 0)
            return got;
        strata_op_refs refs;
        if (!strata_checker_feed(b->checker, in, &refs, err))
            return -1;
        if (in->kind == STRATA_OP_OPTION) {
            /* every key against the table, on its line (trace_options.h) */
            if (!strata_trace_option_check(in, strata_binder_origin(b), b->hw, err))
                return -1;
            continue;
        }
        if (!bind_op(b, in, &refs, err))
            return -1;
        note_stream_device(b, &b->bound);
        b->n_ops++;
        assert(bound_ok(b, &b->bound)); /* bind.h's invariants 1, 2 */
        *op = &b->bound;
        return 1;
    }
}
