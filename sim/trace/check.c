/*
 * check.c: the semantic checker of an op stream (contract in check.h).
 *
 * State, all O(1) per op:
 *  - live: the live buffers by name (trace/check_live.h: no allocation
 *    per op); the lookup by id (strata_checker_buffer(), for tests and
 *    diagnostics) walks it, so the per-op path keeps one table;
 *  - streams: name -> index + 1, and stream_names in index order; the
 *    last stream looked up is remembered, as ops come in runs on a stream;
 *  - events: name -> event_state (index, number of records so far);
 *  - memories: a pool of interned memory names, so a live buffer points at
 *    its memory name without a copy per buffer;
 *  - options: key -> value, and option_keys in order.
 * Memory is bounded by what is live at once (plus the distinct stream,
 * event, memory and option names), never by the length of the trace.
 *
 * Invariants:
 *  1. A name is in `live` iff its last alloc has no free after it.
 *  2. Buffer ids are 0, 1, 2, ... in alloc order.
 *  3. An event's `records` is the number of `record` ops seen for it, so a
 *     wait resolves to records (the latest) and a wait with records == 0 is
 *     an error.
 *  4. After the first non-option op, an option is an error.
 */
#include "trace/check.h"
#include <stdarg.h>
#include <string.h>
#include "core/error.h"
#include "core/mesh.h"
#include "trace/check_live.h"

typedef strata_live_buffer live_buffer;

typedef struct event_state {
    uint32_t index;
    uint64_t records;
} event_state;

struct strata_checker {
    char *origin;
    strata_live_set *live;  /* the live buffers by name */
    GHashTable *streams;    /* char * (owned) -> GUINT_TO_POINTER(index + 1) */
    GPtrArray *stream_names;/* char * borrowed from `streams` keys */
    uint32_t last_stream;   /* index of the stream last looked up, or UINT32_MAX */
    GHashTable *events;     /* char * (owned) -> event_state * (owned) */
    const char *last_event_name; /* key in `events` of the event last looked up, or NULL */
    event_state *last_event;
    GHashTable *memories;   /* char * (owned) set: the interned memory names */
    GHashTable *options;    /* char * (owned) -> char * (owned) */
    GPtrArray *option_keys; /* char * borrowed from `options` keys */
    GArray *ins;            /* uint64_t, refs of the last compute */
    GArray *outs;
    uint64_t next_buffer;
    uint64_t ops;
    strata_mesh *mesh;      /* option mesh=, or NULL */
    uint32_t devices;       /* the hardware's device count; 0 = not known */
    const strata_namer *namer; /* how the names fed print, what a program refuses; NULL: none */
    /* an op with device=D in a program with a mesh, its names qualified as
     * D's (NAME@D; a collective-permute's OUT as its receiver's) */
    strata_op qualified;
    GString *q_names[2];
    GPtrArray *q_lists[3]; /* char * (owned), NULL-terminated */
};

strata_checker *strata_checker_new(const char *origin)
{
    strata_checker *c = g_new0(strata_checker, 1);
    c->origin = g_strdup(origin ? origin : "<ops>");
    c->live = strata_live_new();
    for (int i = 0; i < 2; i++)
        c->q_names[i] = g_string_new(NULL);
    for (int i = 0; i < 3; i++)
        c->q_lists[i] = g_ptr_array_new_with_free_func(g_free);
    c->streams = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    c->stream_names = g_ptr_array_new();
    c->last_stream = UINT32_MAX;
    c->events = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    c->memories = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    c->options = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    c->option_keys = g_ptr_array_new();
    c->ins = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    c->outs = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    return c;
}

void strata_checker_free(strata_checker *c)
{
    if (c == NULL)
        return;
    strata_live_free(c->live);
    for (int i = 0; i < 2; i++)
        g_string_free(c->q_names[i], TRUE);
    for (int i = 0; i < 3; i++)
        g_ptr_array_free(c->q_lists[i], TRUE);
    g_ptr_array_free(c->stream_names, TRUE);
    g_hash_table_destroy(c->streams);
    g_hash_table_destroy(c->events);
    g_hash_table_destroy(c->memories);
    g_ptr_array_free(c->option_keys, TRUE);
    g_hash_table_destroy(c->options);
    g_array_free(c->ins, TRUE);
    g_array_free(c->outs, TRUE);
    strata_mesh_free(c->mesh);
    g_free(c->origin);
    g_free(c);
}

G_GNUC_PRINTF(4, 5)
static bool fail(const strata_checker *c, const strata_op *op, GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strata_vfail_at_op(err, c->origin, op->line, c->ops + 1, fmt, ap);
    va_end(ap);
    return false;
}

static const char *intern_memory(strata_checker *c, const char *memory)
{
    if (memory == NULL)
        return NULL;
    char *known = g_hash_table_lookup(c->memories, memory);
    if (known)
        return known;
    char *copy = g_strdup(memory);
    g_hash_table_add(c->memories, copy);
    return copy;
}

/* Traces mostly use a few streams: the first FEW_STREAMS are compared
 * inline, before the hash table (which holds every stream) is asked. */
enum { FEW_STREAMS = 4 };

static uint32_t stream_index(strata_checker *c, const char *name)
{
    if (c->last_stream != UINT32_MAX && strata_same_name(g_ptr_array_index(c->stream_names, c->last_stream), name))
        return c->last_stream;
    uint32_t few = MIN(c->stream_names->len, (guint)FEW_STREAMS);
    for (uint32_t i = 0; i < few; i++)
        if (strata_same_name(g_ptr_array_index(c->stream_names, i), name))
            return c->last_stream = i;
    gpointer found = c->stream_names->len > few ? g_hash_table_lookup(c->streams, name) : NULL;
    if (found) {
        c->last_stream = GPOINTER_TO_UINT(found) - 1;
        return c->last_stream;
    }
    char *copy = g_strdup(name);
    uint32_t index = c->stream_names->len;
    g_hash_table_insert(c->streams, copy, GUINT_TO_POINTER(index + 1));
    g_ptr_array_add(c->stream_names, copy);
    c->last_stream = index;
    return index;
}

/* The namer's label of `name` (as written without a namer). */
static void label_of(const strata_checker *c, const char *name, strata_name_label *l)
{
    if (c->namer && c->namer->label) {
        c->namer->label(c->namer->ctx, name, l);
        return;
    }
    *l = (strata_name_label){g_strdup(name), g_strdup(""), g_strdup("")};
}

static void label_clear(strata_name_label *l)
{
    g_free(l->name);
    g_free(l->detail);
    g_free(l->where);
}

char *strata_checker_quote(const strata_checker *c, const char *name)
{
    strata_name_label l;
    label_of(c, name ? name : "", &l);
    char *q = g_strdup_printf("'%s'%s%s", l.name, l.detail, l.where);
    label_clear(&l);
    return q;
}

/* What the namer refuses in a program for n_dev devices. */
static bool check_refused(const strata_checker *c, const strata_op *op, uint32_t n_dev, GError **err)
{
    char *why = c->namer->refuse(c->namer->ctx, op, n_dev);
    if (!why)
        return true;
    fail(c, op, err, "%s", why);
    g_free(why);
    return false;
}

/* The live buffer `name`, or an error saying which operand of op named it. */
__attribute__((cold, noinline)) static live_buffer *not_live(const strata_checker *c, const strata_op *op,
                                                             const char *role, const char *name, GError **err)
{
    char *q = strata_checker_quote(c, name);
    fail(c, op, err, "expected a live buffer as %s of %s, got %s (never allocated, or already freed)", role,
         strata_op_kind_name(op->kind), q);
    g_free(q);
    return NULL;
}

/* Every operand of every op comes here: the lookup inline, the refusal out of line. */
static inline live_buffer *need_live(const strata_checker *c, const strata_op *op, const char *role,
                                     const char *name, GError **err)
{
    live_buffer *b = name ? strata_live_find(c->live, name) : NULL;
    return b ? b : not_live(c, op, role, name, err);
}

/* Resolves a list of operands into ids; *first: the first operand of all
 * lists resolved so far (left as is when set). */
static bool resolve_list(const strata_checker *c, const strata_op *op, const char *role, const char *const *names,
                         uint32_t n, GArray *ids, uint64_t *bytes, const live_buffer **first, GError **err)
{
    if (ids->len != n)
        g_array_set_size(ids, n);
    for (uint32_t i = 0; i < n; i++) {
        live_buffer *b = need_live(c, op, role, names[i], err);
        if (!b)
            return false;
        g_array_index(ids, uint64_t, i) = b->id;
        *bytes += b->size;
        if (!*first)
            *first = b;
    }
    return true;
}

/* An alloc of a name that is live (as old). */
static bool fail_live(const strata_checker *c, const strata_op *op, const live_buffer *old, GError **err)
{
    char *q = strata_checker_quote(c, op->name);
    fail(c, op, err, "expected a name that is not live, got %s (allocated at line %" G_GUINT64_FORMAT
         " and not freed since)", q, old->line);
    g_free(q);
    return false;
}

static bool feed_alloc(strata_checker *c, const strata_op *op, strata_op_refs *r, GError **err)
{
    if (op->size == 0 || op->n_dims > STRATA_MAX_DIMS) {
        live_buffer *old = strata_live_find(c->live, op->name);
        if (old)
            return fail_live(c, op, old, err);
        if (op->size == 0)
            return fail(c, op, err, "expected a size above 0 for buffer '%s'", op->name);
        return fail(c, op, err, "expected at most %d dimensions, got %u", STRATA_MAX_DIMS, op->n_dims);
    }
    bool added = false;
    live_buffer *b = strata_live_add(c->live, op->name, &added);
    if (!added)
        return fail_live(c, op, b, err);
    b->id = c->next_buffer++;
    b->size = op->size;
    b->line = op->line;
    b->at_s = op->has_at ? op->at_s : -1.0;
    b->memory = intern_memory(c, op->memory);
    b->dtype = op->dtype;
    r->buf = b->id;
    r->bytes = b->size;
    r->memory = b->memory;
    r->dtype = b->dtype;
    return true;
}

/* A free whose at= is before its alloc's: a captured run issues the free after the alloc, so the stamps are
 * not of one run; the offline planner, which ranks by the stamps' lifetimes when every buffer has them,
 * dropped them all for the op counts, silently. */
__attribute__((cold, noinline)) static bool fail_free_before_alloc(const strata_checker *c, const strata_op *op,
                                                                   const live_buffer *b, GError **err)
{
    char *q = strata_checker_quote(c, op->name);
    fail(c, op, err, "expected the free of %s at or after its alloc's at=%gs (line %" G_GUINT64_FORMAT ": a run "
         "issues a free after its alloc), got at=%gs", q, b->at_s, b->line, op->at_s);
    g_free(q);
    return false;
}

static bool feed_free(strata_checker *c, const strata_op *op, strata_op_refs *r, GError **err)
{
    live_buffer b;
    if (!strata_live_remove(c->live, op->name, &b))
        return need_live(c, op, "the buffer", op->name, err) != NULL;
    if (op->has_at && op->at_s < b.at_s)
        return fail_free_before_alloc(c, op, &b, err);
    r->buf = b.id;
    r->bytes = b.size;
    r->memory = b.memory;
    r->dtype = b.dtype;
    return true;
}

static bool feed_copy(strata_checker *c, const strata_op *op, strata_op_refs *r, GError **err)
{
    live_buffer *dst = need_live(c, op, "the destination", op->name, err);
    if (!dst)
        return false;
    live_buffer *src = need_live(c, op, "the source", op->src, err);
    if (!src)
        return false;
    uint64_t bytes = op->has_bytes ? op->bytes : src->size;
    if (op->has_bytes && bytes == 0)
        return fail(c, op, err, "expected bytes= above 0");
    if (bytes > src->size || bytes > dst->size) {
        bool from_src = bytes > src->size;
        char *q = strata_checker_quote(c, from_src ? op->src : op->name);
        fail(c, op, err, "expected at most %" G_GUINT64_FORMAT " bytes (the size of %s %s), got %" G_GUINT64_FORMAT,
             from_src ? src->size : dst->size, from_src ? "source" : "destination", q, bytes);
        g_free(q);
        return false;
    }
    r->buf = dst->id;
    r->src = src->id;
    r->bytes = bytes;
    r->memory = dst->memory;
    r->src_memory = src->memory;
    return true;
}

static bool feed_compute(strata_checker *c, const strata_op *op, strata_op_refs *r, GError **err)
{
    uint64_t bytes = 0;
    const live_buffer *first = NULL;
    if (!resolve_list(c, op, "in=", op->ins, op->n_ins, c->ins, &bytes, &first, err) ||
        !resolve_list(c, op, "out=", op->outs, op->n_outs, c->outs, &bytes, &first, err))
        return false;
    for (uint32_t i = 0; i < op->n_donates; i++) {
        bool among_ins = false;
        for (uint32_t j = 0; j < op->n_ins && !among_ins; j++)
            among_ins = strcmp(op->ins[j], op->donates[i]) == 0;
        if (!among_ins)
            return fail(c, op, err, "expected donate= to name buffers of in=, got '%s'", op->donates[i]);
    }
    if (op->has_flops && !strata_trace_flops_ok(op->flops))
        return fail(c, op, err, "expected flops= between 0 and %g, got %g", STRATA_TRACE_MAX_FLOPS, op->flops);
    if (op->has_time && !strata_trace_time_ok(op->time_s))
        return fail(c, op, err, "expected time= of 0, or from 0.001ns (a picosecond, the finest time a trace holds) to %gs, got %gs",
                    STRATA_TRACE_MAX_TIME_S, op->time_s);
    if (op->has_bytes && op->bytes == 0)
        return fail(c, op, err, "expected bytes= above 0");
    r->bytes = op->has_bytes ? op->bytes : bytes;
    r->dtype = op->dtype != STRATA_DTYPE_NONE ? op->dtype : first ? first->dtype : STRATA_DTYPE_NONE;
    r->ins = (const uint64_t *)(void *)c->ins->data;
    r->outs = (const uint64_t *)(void *)c->outs->data;
    return true;
}

/* The event `name` (created when asked): the one last looked up is
 * compared first, as a wait mostly names the event just recorded. */
static event_state *event_of(strata_checker *c, const char *name, bool create)
{
    if (c->last_event_name && strata_same_name(c->last_event_name, name))
        return c->last_event;
    gpointer key = NULL, value = NULL;
    if (g_hash_table_lookup_extended(c->events, name, &key, &value)) {
        c->last_event_name = key;
        return c->last_event = value;
    }
    if (!create)
        return NULL;
    event_state *e = g_new0(event_state, 1);
    e->index = g_hash_table_size(c->events);
    char *copy = g_strdup(name);
    g_hash_table_insert(c->events, copy, e);
    c->last_event_name = copy;
    return c->last_event = e;
}

/* The device count when known: the mesh's, else the hardware's, else 0. */
static uint32_t known_devices(const strata_checker *c)
{
    return c->mesh ? strata_mesh_devices(c->mesh) : c->devices;
}

static bool check_mesh(const strata_checker *c, const strata_op *op, GError **err)
{
    if (c->devices && strata_mesh_devices(c->mesh) != c->devices)
        return fail(c, op, err, "expected a mesh of %u devices (the hardware's), got mesh=%s (%u devices)",
                    c->devices, strata_mesh_text(c->mesh), strata_mesh_devices(c->mesh));
    return true;
}

static bool option_mesh(strata_checker *c, const strata_op *op, GError **err)
{
    GError *local = NULL;
    c->mesh = strata_mesh_parse(op->value, &local);
    if (!c->mesh) {
        fail(c, op, err, "%s", local->message);
        g_error_free(local);
        return false;
    }
    return check_mesh(c, op, err);
}

/* A collective's bytes= B: the bytes it reads of IN (all-reduce: of BUF),
 * which fix those it writes of OUT (all-gather n x B, reduce-scatter B / n,
 * the others B); both must fit in their buffers. Which bytes of a larger
 * buffer they are is not modelled (as a copy's bytes=). */
static bool part_sizes(strata_checker *c, const strata_op *op, uint64_t n, uint64_t in_size, uint64_t out_size,
                       uint64_t *in_b, uint64_t *out_b, GError **err)
{
    uint64_t b = op->bytes;
    if (b == 0)
        return fail(c, op, err, "expected bytes= above 0");
    if (op->kind == STRATA_OP_REDUCE_SCATTER && b % n != 0)
        return fail(c, op, err, "expected bytes= divisible by the group size %" G_GUINT64_FORMAT
                    " for reduce-scatter over %s, got %" G_GUINT64_FORMAT, n, op->axis, b);
    *in_b = b;
    if (op->kind == STRATA_OP_ALL_GATHER && __builtin_mul_overflow(n, b, out_b))
        return fail(c, op, err, "expected group size x bytes= below 2^64 for all-gather over %s, got %"
                    G_GUINT64_FORMAT " x %" G_GUINT64_FORMAT, op->axis, n, b);
    if (op->kind != STRATA_OP_ALL_GATHER)
        *out_b = op->kind == STRATA_OP_REDUCE_SCATTER ? b / n : b;
    if (*in_b > in_size || *out_b > out_size) {
        bool from_in = *in_b > in_size;
        return fail(c, op, err, "expected bytes= to fit in %s: %" G_GUINT64_FORMAT " of its %" G_GUINT64_FORMAT
                    " bytes, got bytes=%" G_GUINT64_FORMAT,
                    op->kind == STRATA_OP_ALL_REDUCE ? "the buffer" : from_in ? "IN" : "OUT", from_in ? *in_b : *out_b,
                    from_in ? in_size : out_size, b);
    }
    return true;
}

static bool feed_collective(strata_checker *c, const strata_op *op, strata_op_refs *r, GError **err)
{
    if (!c->mesh)
        return fail(c, op, err, "expected 'option mesh=AXIS:SIZE,...' before %s (a collective needs a mesh)",
                    strata_op_kind_name(op->kind));
    uint32_t mask = 0;
    GError *local = NULL;
    if (!strata_mesh_axes(c->mesh, op->axis ? op->axis : "", &mask, &local)) {
        fail(c, op, err, "%s", local->message);
        g_error_free(local);
        return false;
    }
    uint64_t n = strata_mesh_group_size(c->mesh, mask);
    live_buffer *out = need_live(c, op, op->kind == STRATA_OP_ALL_REDUCE ? "the buffer" : "OUT", op->name, err);
    if (!out)
        return false;
    live_buffer *in = out;
    if (op->kind != STRATA_OP_ALL_REDUCE) {
        if (!(in = need_live(c, op, "IN", op->src, err)))
            return false;
        if (in == out)
            return fail(c, op, err, "expected OUT and IN to be distinct buffers, got '%s' twice", op->name);
    }
    const char *kind = strata_op_kind_name(op->kind);
    uint64_t in_b = in->size, out_b = out->size;
    if (op->has_bytes && !part_sizes(c, op, n, in->size, out->size, &in_b, &out_b, err))
        return false;
    uint64_t want_out = in_b, want_in = out_b;
    /* n x size must not wrap (a 64-byte OUT of 2^62-byte INs over 256 would). */
    if ((op->kind == STRATA_OP_ALL_GATHER && __builtin_mul_overflow(n, in_b, &want_out)) ||
        (op->kind == STRATA_OP_REDUCE_SCATTER && __builtin_mul_overflow(n, out_b, &want_in)))
        return fail(c, op, err, "expected %s x %s below 2^64 bytes for %s over %s, got %" G_GUINT64_FORMAT " x %"
                    G_GUINT64_FORMAT, op->kind == STRATA_OP_ALL_GATHER ? "size(OUT) = group size" : "size(IN) = group size",
                    op->kind == STRATA_OP_ALL_GATHER ? "size(IN)" : "size(OUT)", kind, op->axis, n,
                    op->kind == STRATA_OP_ALL_GATHER ? in_b : out_b);
    if (op->kind == STRATA_OP_ALL_GATHER && out_b != want_out)
        return fail(c, op, err, "expected size(OUT) = %" G_GUINT64_FORMAT " x size(IN) = %" G_GUINT64_FORMAT
                    " bytes for all-gather over %s, got %" G_GUINT64_FORMAT, n, want_out, op->axis, out_b);
    if (op->kind == STRATA_OP_REDUCE_SCATTER && in_b != want_in)
        return fail(c, op, err, "expected size(IN) = %" G_GUINT64_FORMAT " x size(OUT) = %" G_GUINT64_FORMAT
                    " bytes for reduce-scatter over %s, got %" G_GUINT64_FORMAT, n, want_in, op->axis, in_b);
    if ((op->kind == STRATA_OP_ALL_TO_ALL || op->kind == STRATA_OP_COLLECTIVE_PERMUTE) && out_b != in_b)
        return fail(c, op, err, "expected size(OUT) = size(IN) for %s, got %" G_GUINT64_FORMAT " and %"
                    G_GUINT64_FORMAT, kind, out_b, in_b);
    if (op->kind == STRATA_OP_ALL_TO_ALL && in_b % n != 0)
        return fail(c, op, err, "expected a size divisible by the group size %" G_GUINT64_FORMAT " for all-to-all "
                    "over %s, got %" G_GUINT64_FORMAT, n, op->axis, in_b);
    r->buf = out->id;
    r->src = in->id;
    r->bytes = op->kind == STRATA_OP_ALL_GATHER ? out_b : in_b;
    r->memory = out->memory;
    r->src_memory = in->memory;
    r->dtype = in->dtype;
    r->group_size = (uint32_t)n;
    return true;
}

static bool feed_option(strata_checker *c, const strata_op *op, GError **err)
{
    if (c->ops > 0)
        return fail(c, op, err, "expected option lines before the first op, got option '%s' after %" G_GUINT64_FORMAT
                    " ops", op->name ? op->name : "", c->ops);
    if (!op->name || !*op->name || !op->value)
        return fail(c, op, err, "expected option KEY=VALUE");
    if (g_hash_table_contains(c->options, op->name))
        return fail(c, op, err, "expected each option once, got '%s' again", op->name);
    if (strcmp(op->name, "mesh") == 0 && !option_mesh(c, op, err))
        return false;
    char *key = g_strdup(op->name);
    g_hash_table_insert(c->options, key, g_strdup(op->value));
    g_ptr_array_add(c->option_keys, key);
    return true;
}

/* D's instance of buffer `name`: NAME@D when that is live, or when
 * `creating` (an alloc) and NAME is not live on every device; else NAME
 * (a buffer of every device). Newly allocated. */
static char *instance(strata_checker *c, const char *name, uint32_t device, bool creating)
{
    char *q = g_strdup_printf("%s@%u", name, device);
    if (strata_live_find(c->live, q) || (creating && !strata_live_find(c->live, name)))
        return q;
    g_free(q);
    return g_strdup(name);
}

/* list's instances on device into c->q_lists[which]. */
static const char *const *qualify_list(strata_checker *c, int which, const char *const *list, uint32_t n,
                                       uint32_t device)
{
    GPtrArray *a = c->q_lists[which];
    g_ptr_array_set_size(a, 0);
    for (uint32_t i = 0; i < n; i++)
        g_ptr_array_add(a, instance(c, list[i], device, false));
    g_ptr_array_add(a, NULL);
    return (const char *const *)a->pdata;
}

static const char *qualify_name(strata_checker *c, int which, const char *name, uint32_t device, bool creating)
{
    char *q = instance(c, name, device, creating);
    g_string_assign(c->q_names[which], q);
    g_free(q);
    return c->q_names[which]->str;
}

/* In a program with a mesh (not the expansion, whose names are qualified
 * already), an op with device=D names D's buffers: an alloc with device=D
 * makes D's instance NAME@D (the same name on two devices is two
 * buffers), and a name on an op with device=D is D's instance when one is
 * live, else the buffer of every device. A collective with device=D runs
 * on D's group (every member's instance; D's stands for them) and a
 * collective-permute is D's send, its OUT the receiver's instance. */
static const strata_op *qualify(strata_checker *c, const strata_op *op)
{
    if (!op->has_device || !c->mesh || (c->namer && c->namer->qualified) || op->kind == STRATA_OP_OPTION ||
        op->kind == STRATA_OP_RECORD || op->kind == STRATA_OP_WAIT || op->kind == STRATA_OP_RELEASE)
        return op;
    strata_op *q = &c->qualified;
    *q = *op;
    uint32_t out_device = op->device, mask = 0;
    if (op->kind == STRATA_OP_COLLECTIVE_PERMUTE && op->axis && strata_mesh_axes(c->mesh, op->axis, &mask, NULL))
        out_device = strata_mesh_shifted(c->mesh, mask, op->device, op->shift);
    if (op->name)
        q->name = qualify_name(c, 0, op->name, out_device, op->kind == STRATA_OP_ALLOC);
    if (op->src)
        q->src = qualify_name(c, 1, op->src, op->device, false);
    if (op->kind == STRATA_OP_COMPUTE) {
        q->ins = qualify_list(c, 0, op->ins, op->n_ins, op->device);
        q->outs = qualify_list(c, 1, op->outs, op->n_outs, op->device);
        q->donates = qualify_list(c, 2, op->donates, op->n_donates, op->device);
    }
    return q;
}

bool strata_checker_feed(strata_checker *c, const strata_op *op, strata_op_refs *refs, GError **err)
{
    strata_op_refs local;
    strata_op_refs *r = refs ? refs : &local;
    /* Field by field: a few stores, where a memset of the struct is a
     * string instruction slow to start, on every op. */
    r->buf = r->src = r->bytes = r->event_seq = 0;
    r->stream = r->event = r->group_size = 0;
    r->ins = r->outs = NULL;
    r->memory = r->src_memory = NULL;
    r->dtype = STRATA_DTYPE_NONE;
    if (op->kind == STRATA_OP_OPTION)
        return feed_option(c, op, err);
    if ((unsigned)op->kind >= STRATA_OP__COUNT)
        return fail(c, op, err, "expected an op kind, got %d", (int)op->kind);
    if (op->kind != STRATA_OP_RELEASE && (op->name == NULL || *op->name == '\0'))
        return fail(c, op, err, "expected a name for %s", strata_op_kind_name(op->kind));
    if (op->has_at && !strata_trace_at_ok(op->at_s))
        return fail(c, op, err, "expected at= of 0, or from 0.001ns (a picosecond, the finest time a trace holds) to %gs, got %gs",
                    STRATA_TRACE_MAX_AT_S, op->at_s);
    uint32_t n_dev = known_devices(c);
    if (op->has_device && n_dev && op->device >= n_dev)
        return fail(c, op, err, "expected device= a device 0..%u, got %u", n_dev - 1, op->device);
    if (n_dev && c->namer && c->namer->refuse && !check_refused(c, op, n_dev, err))
        return false;
    op = qualify(c, op);
    bool ok = true;
    switch (op->kind) {
    case STRATA_OP_ALLOC: ok = feed_alloc(c, op, r, err); break;
    case STRATA_OP_FREE: ok = feed_free(c, op, r, err); break;
    case STRATA_OP_COPY: ok = feed_copy(c, op, r, err); break;
    case STRATA_OP_COMPUTE: ok = feed_compute(c, op, r, err); break;
    case STRATA_OP_RECORD: {
        event_state *e = event_of(c, op->name, true);
        e->records++;
        r->event = e->index;
        r->event_seq = e->records;
        break;
    }
    case STRATA_OP_WAIT: {
        event_state *e = event_of(c, op->name, false);
        if (!e || e->records == 0) {
            strata_name_label l;
            label_of(c, op->name, &l);
            fail(c, op, err, "expected an event recorded earlier in the trace, got wait on '%s'%s%s "
                 "(no 'record %s'%s before this line)", l.name, l.detail, l.where, l.name, l.where);
            label_clear(&l);
            return false;
        }
        r->event = e->index;
        r->event_seq = e->records;
        break;
    }
    case STRATA_OP_ALL_REDUCE:
    case STRATA_OP_ALL_GATHER:
    case STRATA_OP_REDUCE_SCATTER:
    case STRATA_OP_ALL_TO_ALL:
    case STRATA_OP_COLLECTIVE_PERMUTE: ok = feed_collective(c, op, r, err); break;
    case STRATA_OP_RELEASE:
    case STRATA_OP_OPTION:
    case STRATA_OP__COUNT:
        break;
    }
    if (!ok)
        return false;
    r->stream = stream_index(c, op->stream ? op->stream : STRATA_DEFAULT_STREAM);
    c->ops++;
    return true;
}

uint32_t strata_checker_stream_count(const strata_checker *c) { return c->stream_names->len; }

const char *strata_checker_stream_name(const strata_checker *c, uint32_t index)
{
    return index < c->stream_names->len ? g_ptr_array_index(c->stream_names, index) : NULL;
}

uint32_t strata_checker_event_count(const strata_checker *c) { return g_hash_table_size(c->events); }
uint64_t strata_checker_buffer_count(const strata_checker *c) { return c->next_buffer; }
uint64_t strata_checker_op_count(const strata_checker *c) { return c->ops; }

bool strata_checker_buffer(const strata_checker *c, uint64_t id, uint64_t *size, const char **memory)
{
    const live_buffer *b = strata_live_find_id(c->live, id);
    if (!b)
        return false;
    if (size)
        *size = b->size;
    if (memory)
        *memory = b->memory;
    return true;
}

const GPtrArray *strata_checker_option_keys(const strata_checker *c) { return c->option_keys; }

void strata_checker_set_devices(strata_checker *c, uint32_t devices) { c->devices = devices; }
void strata_checker_set_namer(strata_checker *c, const strata_namer *namer) { c->namer = namer; }


const char *strata_checker_option(const strata_checker *c, const char *key)
{
    return g_hash_table_lookup(c->options, key);
}
