/*
 * chakra.c: Chakra execution traces into ops (contract in chakra.h).
 *
 * Design notes:
 *  - Files are read message by message by chakra_file.c; export is
 *    chakra_export.c.
 *  - Import works on one rank's node array at a time: it orders the nodes
 *    (Kahn's algorithm, file order among the ready ones), then emits each
 *    node's ops. The ops of all ranks are compared with strata_op_equal():
 *    equal ranks make one SPMD program.
 *
 * Invariants: every op emitted is well formed for trace/check.h (buffers
 * allocated before use and freed once; every wait follows its record in
 * trace order); names (e<K>, c<K>, m<K>) come from node positions, unique
 * per rank.
 */
#include <inttypes.h>
#include <string.h>
#include "core/error.h"
#include "core/lines.h"
#include "import/chakra.h"
#include "import/chakra_file.h"
#include "trace/line.h"

#define MESH_AXIS "rank"

/* ---- import: one rank's graph into ops ------------------------------------ */

typedef enum { WORK_SKIP, WORK_COMP, WORK_CPU, WORK_COMM, WORK_MEM } work_kind;
static const char *const work_stream[] = {NULL, "comp", "cpu", "comm", "mem"};

typedef struct rank_ctx {
    const et_file *f;
    uint32_t mesh;
    strata_op_list *ops;
    GHashTable *index;    /* id -> position in f->nodes + 1 */
    work_kind *kind;      /* per position */
    GPtrArray **eff_deps; /* per position: the positions it waits for (skipped nodes resolved) */
    bool *recorded;       /* per position: has a cross-stream dependent, so records e<ID> */
    GPtrArray *held;      /* names of MEM buffers live to the end (g_free) */
    GHashTable *waited;   /* "STREAM/EVENT" already waited for */
    strata_chakra_summary *sum;
} rank_ctx;

/* Appends an op (built by trace/op.h's builders) to the rank's ops. */
static void emit(rank_ctx *c, strata_op op) { strata_op_list_append(c->ops, &op); }

/* A node whose duration is what strata replays. */
/* The longest node duration imported: a trace's time= is at most 10^6 s. */
#define CHAKRA_MAX_DURATION_US UINT64_C(1000000000000)

static void emit_timed(rank_ctx *c, const char *stream, const char *label, uint64_t micros)
{
    emit(c, strata_op_make_timed(stream, label, (double)micros / 1e6));
}

/* A label from a node's name: printable, without blanks, '=', ',' or '#',
 * at most 96 bytes (traces/FORMAT.md's names). */
static char *label_of(const et_node *n)
{
    GString *s = g_string_new(NULL);
    for (const unsigned char *p = (const unsigned char *)n->name; *p && s->len < 96; p++)
        g_string_append_c(s, (*p > ' ' && *p < 0x7f && *p != '=' && *p != ',' && *p != '#') ? (char)*p : '_');
    if (s->len == 0)
        g_string_printf(s, "node%" PRIu64, n->id);
    return g_string_free(s, FALSE);
}

static bool classify(rank_ctx *c, guint i, GError **err)
{
    const et_node *n = g_ptr_array_index(c->f->nodes, i);
    bool cpu = false;
    if (!chakra_attr_bool(c->f->path, n, "is_cpu_op", &cpu, err))
        return false;
    switch (n->type) {
    case CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__INVALID_NODE: c->kind[i] = WORK_SKIP; return true;
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE: c->kind[i] = cpu ? WORK_CPU : WORK_COMP; return true;
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE: c->kind[i] = cpu ? WORK_CPU : WORK_COMM; return true;
    case CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__MEM_STORE_NODE: c->kind[i] = WORK_MEM; return true;
    default: break;
    }
    char *w = chakra_node_where(c->f->path, n);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "%s: node type %d is not imported (expected COMP_NODE 4, MEM_LOAD_NODE 2, MEM_STORE_NODE 3, "
                "COMM_COLL_NODE 7, or METADATA_NODE 1 / INVALID_NODE 0, which carry no work)", w, (int)n->type);
    g_free(w);
    return false;
}

/* Orders the nodes (Kahn; file order among the ready) into *order. */
static bool topo_order(rank_ctx *c, guint *order, GError **err)
{
    guint n = c->f->nodes->len;
    guint *pending = g_new0(guint, n);
    GPtrArray **children = g_new0(GPtrArray *, n);
    for (guint i = 0; i < n; i++) {
        const et_node *nd = g_ptr_array_index(c->f->nodes, i);
        for (size_t d = 0; d < nd->n_data_deps; d++) {
            gpointer at = g_hash_table_lookup(c->index, &nd->data_deps[d]);
            if (!at) {
                c->sum->missing_deps++;
                continue;
            }
            guint p = GPOINTER_TO_UINT(at) - 1;
            if (!children[p])
                children[p] = g_ptr_array_new();
            g_ptr_array_add(children[p], GUINT_TO_POINTER(i));
            pending[i]++;
        }
    }
    /* a min-heap would keep strict file order; a FIFO of ready nodes seeded in file order is enough for
     * determinism and keeps the file's order where it is already topological */
    GQueue ready = G_QUEUE_INIT;
    for (guint i = 0; i < n; i++)
        if (pending[i] == 0)
            g_queue_push_tail(&ready, GUINT_TO_POINTER(i));
    guint done = 0;
    while (!g_queue_is_empty(&ready)) {
        guint i = GPOINTER_TO_UINT(g_queue_pop_head(&ready));
        order[done++] = i;
        for (guint k = 0; children[i] && k < children[i]->len; k++) {
            guint ch = GPOINTER_TO_UINT(g_ptr_array_index(children[i], k));
            if (--pending[ch] == 0)
                g_queue_push_tail(&ready, GUINT_TO_POINTER(ch));
        }
    }
    bool ok = done == n;
    if (!ok) {
        guint stuck = 0;
        while (pending[stuck] == 0)
            stuck++;
        char *w = chakra_node_where(c->f->path, g_ptr_array_index(c->f->nodes, stuck));
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: its dependencies form a cycle (%u of %u nodes can never run): expected a directed "
                    "acyclic graph", w, n - done, n);
        g_free(w);
    }
    for (guint i = 0; i < n; i++)
        if (children[i])
            g_ptr_array_free(children[i], TRUE);
    g_free(children);
    g_free(pending);
    return ok;
}

/* Adds position p to eff unless it holds it already (seen: eff's set). */
static void add_dep(GPtrArray *eff, GHashTable *seen, guint p)
{
    if (g_hash_table_add(seen, GUINT_TO_POINTER(p + 1)))
        g_ptr_array_add(eff, GUINT_TO_POINTER(p));
}

/* The positions node i waits for: its present dependencies, a skipped one
 * replaced by its own (resolved before i in topological order), each once,
 * in the order first met. Once: nodes without work each depending on the
 * two before doubled their lists at every step (a 900-byte file grew to
 * 2.6 GB); a set's size is at most the nodes with work. The total over the
 * graph is bounded too (*total, STRATA_CHAKRA_MAX_RESOLVED_DEPS): a chain
 * of such nodes can still add every node before it to every list. */
static bool resolve_deps(rank_ctx *c, guint i, uint64_t *total, GError **err)
{
    const et_node *nd = g_ptr_array_index(c->f->nodes, i);
    GPtrArray *eff = g_ptr_array_new();
    GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (size_t d = 0; d < nd->n_data_deps; d++) {
        gpointer at = g_hash_table_lookup(c->index, &nd->data_deps[d]);
        if (!at)
            continue;
        guint p = GPOINTER_TO_UINT(at) - 1;
        if (c->kind[p] == WORK_SKIP) {
            for (guint x = 0; x < c->eff_deps[p]->len; x++)
                add_dep(eff, seen, GPOINTER_TO_UINT(g_ptr_array_index(c->eff_deps[p], x)));
        } else
            add_dep(eff, seen, p);
    }
    g_hash_table_destroy(seen);
    c->eff_deps[i] = eff;
    *total += eff->len;
    if (*total <= STRATA_CHAKRA_MAX_RESOLVED_DEPS)
        return true;
    char *w = chakra_node_where(c->f->path, nd);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "%s: the dependencies through nodes without work resolve to more than %u (%" PRIu64 " by this "
                "node, of %u nodes): expected a graph whose metadata nodes do not each fan out to all before them",
                w, STRATA_CHAKRA_MAX_RESOLVED_DEPS, *total, c->f->nodes->len);
    g_free(w);
    return false;
}

static bool emit_collective(rank_ctx *c, guint at, const et_node *n, const char *label, GError **err)
{
    const char *path = c->f->path;
    uint64_t type = 0, size = 0;
    bool has_type = false, has_size = false;
    if (!chakra_attr_u64(path, n, "comm_type", &type, &has_type, err) ||
        !chakra_attr_u64(path, n, "comm_size", &size, &has_size, err))
        return false;
    char *w = NULL;
    if (!has_type || (!has_size && type != CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST)) {
        w = chakra_node_where(path, n);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: a COMM_COLL_NODE on the device needs the attributes comm_type and comm_size", w);
        g_free(w);
        return false;
    }
    if (type == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST) {
        /* ASTRA-sim replays a broadcast's duration (Workload.cc, issue_coll_comm): so does strata */
        emit_timed(c, "comm", label, n->duration_micros);
        return true;
    }
    strata_op_kind kind;
    uint64_t out_size = size, r = c->mesh;
    switch (type) {
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE: kind = STRATA_OP_ALL_REDUCE; break;
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER: /* comm_size: each rank's input (Ring.cc) */
        kind = STRATA_OP_ALL_GATHER;
        out_size = size * r;
        break;
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER:
        kind = STRATA_OP_REDUCE_SCATTER;
        out_size = size / r;
        break;
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL: kind = STRATA_OP_ALL_TO_ALL; break;
    default:
        w = chakra_node_where(path, n);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: comm_type %" PRIu64 " is not imported (expected ALL_REDUCE 0, ALL_GATHER 2, ALL_TO_ALL 6, "
                    "REDUCE_SCATTER 7 or BROADCAST 5, the collectives ASTRA-sim runs)", w, type);
        g_free(w);
        return false;
    }
    /* ASTRA-sim's ring splits a reduce-scatter's and an all-to-all's comm_size into one message per rank */
    bool split = kind == STRATA_OP_REDUCE_SCATTER || kind == STRATA_OP_ALL_TO_ALL;
    if (size == 0 || (split && size % r != 0) || (kind == STRATA_OP_ALL_GATHER && size > UINT64_MAX / 2 / r)) {
        w = chakra_node_where(path, n);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: comm_size %" PRIu64 ": expected a size above 0%s", w, size,
                    split ? " and a multiple of the ranks"
                    : kind == STRATA_OP_ALL_GATHER ? " whose output (comm_size times the ranks) fits 63 bits" : "");
        g_free(w);
        return false;
    }
    char *buf = g_strdup_printf("c%u", at), *in = g_strdup_printf("c%u.in", at);
    bool two = kind != STRATA_OP_ALL_REDUCE;
    emit(c, strata_op_make_alloc("comm", buf, out_size, NULL, STRATA_TAG_TEMP));
    if (two)
        emit(c, strata_op_make_alloc("comm", in, size, NULL, STRATA_TAG_TEMP));
    emit(c, strata_op_make_collective(kind, "comm", buf, in, MESH_AXIS, NULL, 0));
    if (two)
        emit(c, strata_op_make(STRATA_OP_FREE, "comm", in));
    emit(c, strata_op_make(STRATA_OP_FREE, "comm", buf));
    g_free(buf);
    g_free(in);
    return true;
}

static bool emit_mem(rank_ctx *c, guint at, const et_node *n, GError **err)
{
    uint64_t size = 0;
    bool has = false;
    if (!chakra_attr_u64(c->f->path, n, "tensor_size", &size, &has, err))
        return false;
    if (!has || size == 0) {
        char *w = chakra_node_where(c->f->path, n);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: a MEM node needs the attribute tensor_size (bytes, above 0)", w);
        g_free(w);
        return false;
    }
    bool load = n->type == CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE;
    char *kept = g_strdup_printf("m%u", at), *staging = g_strdup_printf("m%u.staging", at);
    /* a load fills a device buffer from host memory; a store fills a host buffer from device memory */
    emit(c, strata_op_make_alloc("mem", kept, size, load ? NULL : "host", STRATA_TAG_TEMP));
    emit(c, strata_op_make_alloc("mem", staging, size, load ? "host" : NULL, STRATA_TAG_TEMP));
    emit(c, strata_op_make_copy("mem", kept, staging, 0));
    emit(c, strata_op_make(STRATA_OP_FREE, "mem", staging));
    g_ptr_array_add(c->held, kept);
    g_free(staging);
    return true;
}

static bool emit_node(rank_ctx *c, guint i, GError **err)
{
    const et_node *n = g_ptr_array_index(c->f->nodes, i);
    const char *stream = work_stream[c->kind[i]];
    if (c->kind[i] == WORK_SKIP) { /* no work: its dependents wait for its dependencies (resolve_deps) */
        c->sum->skipped++;
        return true;
    }
    GPtrArray *deps = c->eff_deps[i];
    for (guint d = 0; d < deps->len; d++) {
        guint p = GPOINTER_TO_UINT(g_ptr_array_index(deps, d));
        if (work_stream[c->kind[p]] == stream)
            continue; /* same stream: program order */
        char *ev = g_strdup_printf("e%u", p);
        char *key = g_strdup_printf("%s/%s", stream, ev);
        if (g_hash_table_add(c->waited, key)) /* once per stream: later ops of the stream come after it */
            emit(c, strata_op_make(STRATA_OP_WAIT, stream, ev));
        g_free(ev);
    }
    if (n->duration_micros > CHAKRA_MAX_DURATION_US && c->kind[i] != WORK_MEM) {
        /* a time= past a trace's range, which the checker refuses: said here, at its node */
        char *w = chakra_node_where(c->f->path, n);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: duration_micros %" PRIu64 ": expected at most "
                    "10^12 us (10^6 s, the range of a trace's time=)", w, n->duration_micros);
        g_free(w);
        return false;
    }
    char *label = label_of(n);
    bool ok = true;
    switch (c->kind[i]) {
    case WORK_COMP: {
        uint64_t flops = 0, bytes = 0;
        bool has_flops = false, has_bytes = false;
        ok = chakra_attr_u64(c->f->path, n, "num_ops", &flops, &has_flops, err) &&
             chakra_attr_u64(c->f->path, n, "tensor_size", &bytes, &has_bytes, err);
        if (ok && (n->duration_micros > 0 || !has_flops || flops == 0))
            emit_timed(c, stream, label, n->duration_micros);
        else if (ok) {
            strata_op op = strata_op_make_compute(stream, label, (double)flops, NULL, 0, NULL, 0, NULL);
            op.has_bytes = has_bytes;
            op.bytes = bytes;
            emit(c, op);
        }
        c->sum->comp++;
        break;
    }
    case WORK_CPU: {
        emit_timed(c, stream, label, n->duration_micros);
        c->sum->cpu++;
        break;
    }
    case WORK_COMM:
        ok = emit_collective(c, i, n, label, err);
        c->sum->coll++;
        break;
    case WORK_MEM:
        ok = emit_mem(c, i, n, err);
        c->sum->mem++;
        break;
    case WORK_SKIP: break; /* returned above */
    }
    g_free(label);
    if (ok && c->recorded[i]) {
        char *ev = g_strdup_printf("e%u", i);
        emit(c, strata_op_make(STRATA_OP_RECORD, stream, ev));
        g_free(ev);
        c->sum->events++;
    }
    return ok;
}

/* One rank's graph as ops (after `option mesh=rank:N`). */
static strata_op_list *rank_ops(const et_file *f, uint32_t mesh, strata_chakra_summary *sum, GError **err)
{
    guint n = f->nodes->len;
    rank_ctx c = {.f = f, .mesh = mesh, .ops = strata_op_list_new(), .sum = sum,
                  .index = g_hash_table_new(g_int64_hash, g_int64_equal), .kind = g_new0(work_kind, n),
                  .eff_deps = g_new0(GPtrArray *, n), .recorded = g_new0(bool, n),
                  .held = g_ptr_array_new_with_free_func(g_free),
                  .waited = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL)};
    guint *order = g_new(guint, n);
    bool ok = true;
    for (guint i = 0; ok && i < n; i++) {
        et_node *nd = g_ptr_array_index(f->nodes, i);
        if (g_hash_table_contains(c.index, &nd->id)) {
            char *w = chakra_node_where(f->path, nd);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: a second node with id %" PRIu64, w, nd->id);
            g_free(w);
            ok = false;
        } else {
            g_hash_table_insert(c.index, &nd->id, GUINT_TO_POINTER(i + 1));
            ok = classify(&c, i, err);
        }
    }
    ok = ok && topo_order(&c, order, err);
    uint64_t resolved = 0;
    for (guint k = 0; ok && k < n; k++)
        ok = resolve_deps(&c, order[k], &resolved, err);
    for (guint i = 0; ok && i < n; i++)
        for (guint d = 0; d < c.eff_deps[i]->len; d++) {
            guint p = GPOINTER_TO_UINT(g_ptr_array_index(c.eff_deps[i], d));
            if (c.kind[i] != WORK_SKIP && work_stream[c.kind[p]] != work_stream[c.kind[i]])
                c.recorded[p] = true;
        }
    char *mesh_text = g_strdup_printf(MESH_AXIS ":%u", mesh);
    if (ok)
        emit(&c, strata_op_make_option("mesh", mesh_text));
    g_free(mesh_text);
    for (guint k = 0; ok && k < n; k++)
        ok = emit_node(&c, order[k], err);
    for (guint h = 0; ok && h < c.held->len; h++)
        emit(&c, strata_op_make(STRATA_OP_FREE, "mem", g_ptr_array_index(c.held, h)));
    for (guint i = 0; i < n; i++)
        if (c.eff_deps[i])
            g_ptr_array_free(c.eff_deps[i], TRUE);
    g_free(c.eff_deps);
    g_free(c.kind);
    g_free(c.recorded);
    g_free(order);
    g_ptr_array_free(c.held, TRUE);
    g_hash_table_destroy(c.waited);
    g_hash_table_destroy(c.index);
    if (!ok) {
        strata_op_list_free(c.ops);
        return NULL;
    }
    return c.ops;
}

/* ---- import: a strata export back into its trace ---------------------------- */

static bool is_strata_export(const et_file *f)
{
    if (f->nodes->len == 0)
        return chakra_find_attr(f->meta->attr, f->meta->n_attr, "strata.options") != NULL;
    for (guint i = 0; i < f->nodes->len; i++)
        if (!chakra_attr_string(g_ptr_array_index(f->nodes, i), "strata.op"))
            return false;
    return true;
}

typedef struct indexed_text {
    uint64_t index;
    const char *text, *path;
    const et_node *node;
} indexed_text;

static int compare_indexed(const void *a, const void *b)
{
    const indexed_text *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

static bool parse_into(strata_op_list *ops, const char *text, const char *path, GError **err)
{
    strata_op op;
    memset(&op, 0, sizeof op);
    strata_line_scratch *s = strata_parse_op_line(text, path, 0, &op, err);
    if (!s)
        return false;
    strata_op_list_append(ops, &op);
    strata_line_scratch_free(s);
    return true;
}

/* The exported ops of every file, merged by strata.index (each op once). */
static strata_op_list *strata_ops(const et_file *files, guint n_files, GError **err)
{
    GArray *all = g_array_new(FALSE, FALSE, sizeof(indexed_text));
    bool ok = true;
    for (guint r = 0; ok && r < n_files; r++)
        for (guint i = 0; ok && i < files[r].nodes->len; i++) {
            const et_node *n = g_ptr_array_index(files[r].nodes, i);
            indexed_text t = {.text = chakra_attr_string(n, "strata.op"), .path = files[r].path, .node = n};
            bool has = false;
            ok = chakra_attr_u64(files[r].path, n, "strata.index", &t.index, &has, err);
            if (ok && (!has || !t.text)) {
                char *w = chakra_node_where(files[r].path, n);
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "%s: expected the attributes strata.op (string_val) and strata.index of a strata "
                            "export, as rank 0's file has", w);
                g_free(w);
                ok = false;
            }
            if (ok)
                g_array_append_val(all, t);
        }
    if (ok)
        g_array_sort(all, compare_indexed);
    strata_op_list *ops = strata_op_list_new();
    const et_attr *opts = chakra_find_attr(files[0].meta->attr, files[0].meta->n_attr, "strata.options");
    if (ok && opts && opts->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_LIST)
        for (size_t i = 0; ok && i < opts->string_list->n_values; i++) {
            char *line = g_strdup_printf("option %s", opts->string_list->values[i]);
            ok = parse_into(ops, line, files[0].path, err);
            g_free(line);
        }
    for (guint k = 0; ok && k < all->len; k++) {
        const indexed_text *t = &g_array_index(all, indexed_text, k);
        if (k > 0 && g_array_index(all, indexed_text, k - 1).index == t->index) {
            const indexed_text *prev = &g_array_index(all, indexed_text, k - 1);
            if (strcmp(prev->text, t->text) != 0) {
                char *w = chakra_node_where(t->path, t->node);
                char *here = strata_quote(t->text), *there = strata_quote(prev->text);
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "%s: strata.index %" PRIu64 " holds '%s', but '%s' in %s", w, t->index, here, there,
                            prev->path);
                g_free(here);
                g_free(there);
                g_free(w);
                ok = false;
            }
            continue;
        }
        char *w = chakra_node_where(t->path, t->node);
        size_t len = strlen(t->text);
        if (len > STRATA_LINE_MAX) { /* the writer would refuse it: say so here, at its node, not with the op */
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: strata.op: expected an op of at most %d bytes "
                        "(a trace line strata's reader takes), got %zu", w, STRATA_LINE_MAX, len);
            ok = false;
        } else {
            ok = parse_into(ops, t->text, w, err);
        }
        g_free(w);
    }
    g_array_free(all, TRUE);
    if (!ok) {
        strata_op_list_free(ops);
        return NULL;
    }
    return ops;
}

/* ---- import: the files ----------------------------------------------------- */

/* The highest rank R of a file PREFIX.R.et beside prefix, or -1. */
static int64_t highest_rank_file(const char *prefix)
{
    char *dir = g_path_get_dirname(prefix), *base = g_path_get_basename(prefix);
    GDir *d = g_dir_open(dir, 0, NULL);
    int64_t high = -1;
    size_t nb = strlen(base);
    for (const char *n; d && (n = g_dir_read_name(d)) != NULL;) {
        if (strncmp(n, base, nb) != 0 || n[nb] != '.' || !g_ascii_isdigit(n[nb + 1]))
            continue;
        char *end = NULL;
        guint64 r = g_ascii_strtoull(n + nb + 1, &end, 10);
        if (end && strcmp(end, ".et") == 0 && r < G_MAXINT64 && (int64_t)r > high)
            high = (int64_t)r;
    }
    if (d)
        g_dir_close(d);
    g_free(dir);
    g_free(base);
    return high;
}

/* The NAME of a file NAME.R.et (R digits), or NULL. */
static char *rank_file_name(const char *file)
{
    size_t n = strlen(file);
    if (n < 5 || strcmp(file + n - 3, ".et") != 0)
        return NULL;
    size_t dot = n - 3;
    while (dot > 0 && g_ascii_isdigit(file[dot - 1]))
        dot--;
    if (dot == n - 3 || dot < 2 || file[dot - 1] != '.')
        return NULL;
    return g_strndup(file, dot - 1);
}

static gint cmp_name(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The prefix FOLDER/NAME of the one workload whose files NAME.R.et a folder
 * holds, as ASTRA-sim's examples ship them; NULL with err when it holds none
 * or the files of several. */
static char *folder_prefix(const char *folder, GError **err)
{
    GDir *d = g_dir_open(folder, 0, err);
    if (!d) {
        g_prefix_error(err, "%s: ", folder);
        return NULL;
    }
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (const char *f; (f = g_dir_read_name(d)) != NULL;) {
        char *name = rank_file_name(f);
        if (name && !g_ptr_array_find_with_equal_func(names, name, g_str_equal, NULL))
            g_ptr_array_add(names, name);
        else
            g_free(name);
    }
    g_dir_close(d);
    char *prefix = NULL;
    if (names->len == 1) {
        prefix = g_build_filename(folder, g_ptr_array_index(names, 0), NULL);
    } else if (names->len == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: a folder without rank files: expected the files NAME.0.et, NAME.1.et, ... of one workload "
                    "(as ASTRA-sim's examples ship them)", folder);
    } else {
        g_ptr_array_sort(names, cmp_name);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: the rank files of %u workloads (%s.0.et, %s.0.et, ...): expected one; name its prefix, "
                    "as in %s/%s", folder, names->len, (char *)g_ptr_array_index(names, 0),
                    (char *)g_ptr_array_index(names, 1), folder, (char *)g_ptr_array_index(names, 0));
    }
    g_ptr_array_free(names, TRUE);
    return prefix;
}

/* The files PREFIX.0.et, PREFIX.1.et, ...: every one to the highest. */
static char **prefix_files(const char *input, GError **err)
{
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    for (guint r = 0;; r++) {
        char *path = g_strdup_printf("%s.%u.et", input, r);
        if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
            g_free(path);
            break;
        }
        g_ptr_array_add(files, path);
    }
    int64_t high = highest_rank_file(input);
    if (files->len == 0 && high < 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: no such file, and no %s.0.et: expected a Chakra trace file, a folder of rank files, or the "
                    "prefix of the files PREFIX.0.et, PREFIX.1.et, ... of one workload (as ASTRA-sim names them)",
                    input, input);
    } else if (high >= (int64_t)files->len) { /* a gap: the workload would shrink to the ranks before it */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s.%u.et: no such file, but %s.%" G_GINT64_FORMAT ".et exists: expected every rank file "
                    "from %s.0.et to %s.%" G_GINT64_FORMAT ".et", input, files->len, input, high, input, input, high);
    } else {
        g_ptr_array_set_free_func(files, NULL);
        g_ptr_array_add(files, NULL);
        return (char **)g_ptr_array_free(files, FALSE);
    }
    g_ptr_array_free(files, TRUE);
    return NULL;
}

char **strata_chakra_rank_files(const char *input, GError **err)
{
    bool folder = g_file_test(input, G_FILE_TEST_IS_DIR);
    /* a file of any kind (a FIFO, /dev/stdin) is read as one trace */
    if (g_file_test(input, G_FILE_TEST_EXISTS) && !folder) {
        char **one = g_new0(char *, 2);
        one[0] = g_strdup(input);
        return one;
    }
    char *prefix = folder ? folder_prefix(input, err) : g_strdup(input);
    char **files = prefix ? prefix_files(prefix, err) : NULL;
    if (!files && prefix && folder)
        g_prefix_error(err, "%s: ", input);
    g_free(prefix);
    return files;
}

/* The first op where a and b differ, or -1 when they are the same. */
static int64_t first_difference(const strata_op_list *a, const strata_op_list *b)
{
    size_t na = strata_op_list_len(a), nb = strata_op_list_len(b);
    for (size_t i = 0; i < na && i < nb; i++)
        if (!strata_op_equal(strata_op_list_get(a, i), strata_op_list_get(b, i)))
            return (int64_t)i;
    return na == nb ? -1 : (int64_t)(na < nb ? na : nb);
}

strata_source **strata_chakra_import(char *const *files, int rank, uint32_t mesh, size_t *n_traces,
                                     strata_chakra_summary *sum, GError **err)
{
    *n_traces = 0;
    memset(sum, 0, sizeof *sum);
    guint n_files = 0;
    while (files[n_files])
        n_files++;
    if (rank >= (int)n_files) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--rank %d: the workload has %u rank files (0 to %u)",
                    rank, n_files, n_files - 1);
        return NULL;
    }
    guint first = rank >= 0 ? (guint)rank : 0, count = rank >= 0 ? 1 : n_files;
    sum->ranks = count;
    sum->mesh = mesh ? mesh : n_files;
    et_file *read = g_new0(et_file, count);
    bool ok = true;
    for (guint r = 0; ok && r < count; r++) {
        ok = chakra_file_read(&read[r], files[first + r], err);
        if (ok)
            sum->nodes += read[r].nodes->len;
    }
    strata_op_list **lists = g_new0(strata_op_list *, count);
    guint n_lists = 0;
    if (ok && is_strata_export(&read[0])) {
        sum->from_strata = true;
        sum->spmd = true;
        ok = (lists[n_lists++] = strata_ops(read, count, err)) != NULL;
    } else if (ok) {
        /* every rank's ops; one program when they are all rank 0's */
        sum->spmd = true;
        for (guint r = 0; ok && r < count; r++) {
            strata_chakra_summary other = {0};
            lists[r] = rank_ops(&read[r], sum->mesh, r == 0 ? sum : &other, err);
            ok = lists[r] != NULL;
            sum->missing_deps += other.missing_deps;
            if (ok && r > 0 && sum->spmd && (sum->first_difference = first_difference(lists[0], lists[r])) >= 0) {
                sum->spmd = false;
                sum->differing_rank = r;
            }
        }
        n_lists = sum->spmd ? 1 : count;
    }
    for (guint r = 0; r < count; r++)
        chakra_file_clear(&read[r]);
    g_free(read);
    strata_source **traces = NULL;
    if (ok) {
        traces = g_new0(strata_source *, n_lists + 1);
        for (guint r = 0; r < n_lists; r++) {
            traces[r] = strata_op_list_to_source(lists[r], files[first + r]);
            lists[r] = NULL;
        }
        *n_traces = n_lists;
    }
    for (guint r = 0; r < count; r++)
        strata_op_list_free(lists[r]);
    g_free(lists);
    return traces;
}
