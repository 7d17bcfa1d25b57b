/*
 * chakra.c: Chakra execution traces in and out (contract in chakra.h).
 *
 * Design notes:
 *  - A file is read whole and split into messages here (the framing is
 *    Chakra's protolib.py: a varint length, then the message); protobuf-c
 *    decodes each message against the vendored schema. A varint longer than
 *    10 bytes or cut by the end of the file, a length past the end, or a
 *    message protobuf-c refuses is an error naming the file, the message's
 *    number and byte offset, and the last node read.
 *  - Import works on one rank's node array at a time: it orders the nodes
 *    (Kahn's algorithm, file order among the ready ones), then emits each
 *    node's ops. The ops of all ranks are compared with strata_op_equal():
 *    equal ranks make one SPMD program.
 *  - Export reads the whole trace (ops are copied), then writes each
 *    device's file: the ops without device= and those with its device.
 *
 * Invariants: every op emitted is well formed for trace/check.h (buffers
 * allocated before use and freed once; every wait follows its record in
 * trace order); node ids are the file's, event names e<ID> are unique per
 * rank.
 */
#include <glib/gstdio.h>
#include <inttypes.h>
#include <string.h>
#include <et_def.pb-c.h>
#include "core/error.h"
#include "core/mesh.h"
#include "core/outfile.h"
#include "import/chakra.h"
#include "trace/line.h"
#include "trace/writer.h"

typedef ChakraProtoMsg__Node et_node;
typedef ChakraProtoMsg__AttributeProto et_attr;
typedef ChakraProtoMsg__GlobalMetadata et_meta;

#define MESH_AXIS "rank"

/* ---- reading a file -------------------------------------------------------- */

typedef struct et_file {
    const char *path;
    et_meta *meta;
    GPtrArray *nodes; /* et_node* in file order (freed with protobuf-c) */
} et_file;

static void et_node_free(gpointer p) { chakra_proto_msg__node__free_unpacked(p, NULL); }

static void et_file_clear(et_file *f)
{
    if (f->meta)
        chakra_proto_msg__global_metadata__free_unpacked(f->meta, NULL);
    if (f->nodes)
        g_ptr_array_free(f->nodes, TRUE);
    f->meta = NULL;
    f->nodes = NULL;
}

/* "after node ID 'NAME'" or "before the first node", for messages. */
static char *after_node(const et_file *f)
{
    if (!f->nodes || f->nodes->len == 0)
        return g_strdup("before the first node");
    const et_node *n = g_ptr_array_index(f->nodes, f->nodes->len - 1);
    char *q = strata_quote(n->name);
    char *s = g_strdup_printf("after node %" PRIu64 " '%s'", n->id, q);
    g_free(q);
    return s;
}

static bool read_varint(const guint8 *b, gsize len, gsize *pos, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && *pos < len; shift += 7) {
        guint8 c = b[(*pos)++];
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

static bool et_file_read(et_file *f, const char *path, GError **err)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    gchar *data = NULL;
    gsize len = 0;
    GError *io = NULL;
    GStatBuf st;
    if (g_stat(path, &st) == 0 && (guint64)st.st_size > STRATA_CHAKRA_MAX_FILE) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: %" G_GUINT64_FORMAT " bytes: expected a Chakra "
                    "trace of at most %llu bytes", path, (guint64)st.st_size, STRATA_CHAKRA_MAX_FILE);
        return false;
    }
    if (!g_file_get_contents(path, &data, &len, &io)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: cannot read the Chakra trace: %s", path,
                    io->message);
        g_error_free(io);
        return false;
    }
    f->nodes = g_ptr_array_new_with_free_func(et_node_free);
    const guint8 *b = (const guint8 *)data;
    gsize pos = 0;
    bool ok = true;
    for (uint64_t index = 0; ok && pos < len; index++) {
        gsize start = pos;
        uint64_t size = 0;
        char *where = NULL;
        if (!read_varint(b, len, &pos, &size)) {
            where = after_node(f);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s: message %" PRIu64 " at byte %zu (%s): truncated length varint: expected a varint "
                        "length then a protobuf message (Chakra's framing)", path, index, start, where);
            ok = false;
        } else if (size > len - pos) {
            where = after_node(f);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s: message %" PRIu64 " at byte %zu (%s): its length %" PRIu64 " runs past the end of "
                        "the file (%zu bytes left): a truncated file", path, index, start, where, size, len - pos);
            ok = false;
        } else if (index == 0) {
            f->meta = chakra_proto_msg__global_metadata__unpack(NULL, size, b + pos);
            if (!f->meta) {
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "%s: message 0 at byte %zu: not a Chakra GlobalMetadata (protobuf could not decode "
                            "it: a wrong field type or a truncated field)", path, start);
                ok = false;
            }
        } else {
            et_node *n = chakra_proto_msg__node__unpack(NULL, size, b + pos);
            if (!n) {
                where = after_node(f);
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "%s: message %" PRIu64 " at byte %zu (%s): not a Chakra Node (protobuf could not "
                            "decode it: a wrong field type or a truncated field)", path, index, start, where);
                ok = false;
            } else
                g_ptr_array_add(f->nodes, n);
        }
        g_free(where);
        pos += ok ? size : 0;
    }
    if (ok && !f->meta) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: empty file: expected a Chakra GlobalMetadata message, then nodes", path);
        ok = false;
    }
    g_free(data);
    if (!ok)
        et_file_clear(f);
    return ok;
}

/* ---- attributes ------------------------------------------------------------ */

static const et_attr *find_attr(et_attr *const *attrs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(attrs[i]->name, name) == 0)
            return attrs[i];
    return NULL;
}

/* "FILE: node ID 'NAME'" (g_free). */
static char *node_where(const char *path, const et_node *n)
{
    char *q = strata_quote(n->name);
    char *s = g_strdup_printf("%s: node %" PRIu64 " '%s'", path, n->id, q);
    g_free(q);
    return s;
}

/* A whole-number attribute (any integer field of AttributeProto) into *out;
 * false when absent; an error when it holds something else or is negative. */
static bool attr_u64(const char *path, const et_node *n, const char *name, uint64_t *out, bool *present,
                     GError **err)
{
    const et_attr *a = find_attr(n->attr, n->n_attr, name);
    *present = a != NULL;
    if (!a)
        return true;
    int64_t s = 0;
    bool is_signed = true;
    switch (a->value_case) {
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL: s = a->int32_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL: s = a->int64_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL: s = a->sint32_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL: s = a->sint64_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED32_VAL: s = a->sfixed32_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SFIXED64_VAL: s = a->sfixed64_val; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: *out = a->uint32_val; is_signed = false; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL: *out = a->uint64_val; is_signed = false; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED32_VAL: *out = a->fixed32_val; is_signed = false; break;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_FIXED64_VAL: *out = a->fixed64_val; is_signed = false; break;
    default: {
        char *w = node_where(path, n);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: attribute '%s': expected a whole number (int64_val, uint64_val, ...), got field %d", w,
                    name, (int)a->value_case);
        g_free(w);
        return false;
    }
    }
    if (is_signed) {
        if (s < 0) {
            char *w = node_where(path, n);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s: attribute '%s': expected a whole number of at least 0, got %" PRId64, w, name, s);
            g_free(w);
            return false;
        }
        *out = (uint64_t)s;
    }
    return true;
}

/* A bool attribute (absent: false). */
static bool attr_bool(const char *path, const et_node *n, const char *name, bool *out, GError **err)
{
    const et_attr *a = find_attr(n->attr, n->n_attr, name);
    *out = false;
    if (!a)
        return true;
    if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL) {
        *out = a->bool_val;
        return true;
    }
    char *w = node_where(path, n);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: attribute '%s': expected bool_val, got field %d", w,
                name, (int)a->value_case);
    g_free(w);
    return false;
}

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

static void emit(rank_ctx *c, strata_op_kind kind, const char *name, const char *src, const char *stream)
{
    strata_op op = {0};
    op.kind = kind;
    op.name = name;
    op.src = src;
    op.stream = stream;
    strata_op_list_append(c->ops, &op);
}

static void emit_alloc(rank_ctx *c, const char *name, uint64_t size, const char *memory, const char *stream)
{
    strata_op op = {0};
    op.kind = STRATA_OP_ALLOC;
    op.name = name;
    op.size = size;
    op.memory = memory;
    op.tag = STRATA_TAG_TEMP;
    op.stream = stream;
    strata_op_list_append(c->ops, &op);
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
    if (!attr_bool(c->f->path, n, "is_cpu_op", &cpu, err))
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
    char *w = node_where(c->f->path, n);
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
        char *w = node_where(c->f->path, g_ptr_array_index(c->f->nodes, stuck));
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

/* The positions node i waits for: its present dependencies, a skipped one
 * replaced by its own (resolved before i in topological order). */
static void resolve_deps(rank_ctx *c, guint i)
{
    const et_node *nd = g_ptr_array_index(c->f->nodes, i);
    GPtrArray *eff = g_ptr_array_new();
    for (size_t d = 0; d < nd->n_data_deps; d++) {
        gpointer at = g_hash_table_lookup(c->index, &nd->data_deps[d]);
        if (!at)
            continue;
        guint p = GPOINTER_TO_UINT(at) - 1;
        if (c->kind[p] == WORK_SKIP) {
            for (guint x = 0; x < c->eff_deps[p]->len; x++)
                g_ptr_array_add(eff, g_ptr_array_index(c->eff_deps[p], x));
        } else
            g_ptr_array_add(eff, GUINT_TO_POINTER(p));
    }
    c->eff_deps[i] = eff;
}

static bool emit_collective(rank_ctx *c, guint at, const et_node *n, const char *label, GError **err)
{
    const char *path = c->f->path;
    uint64_t type = 0, size = 0;
    bool has_type = false, has_size = false;
    if (!attr_u64(path, n, "comm_type", &type, &has_type, err) ||
        !attr_u64(path, n, "comm_size", &size, &has_size, err))
        return false;
    char *w = NULL;
    if (!has_type || (!has_size && type != CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST)) {
        w = node_where(path, n);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: a COMM_COLL_NODE on the device needs the attributes comm_type and comm_size", w);
        g_free(w);
        return false;
    }
    if (type == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST) {
        /* ASTRA-sim replays a broadcast's duration (Workload.cc, issue_coll_comm): so does strata */
        strata_op op = {.kind = STRATA_OP_COMPUTE, .name = label, .stream = "comm", .has_time = true,
                        .time_s = (double)n->duration_micros / 1e6};
        strata_op_list_append(c->ops, &op);
        return true;
    }
    strata_op_kind kind;
    uint64_t in_size = size, out_size = size, r = c->mesh;
    switch (type) {
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE: kind = STRATA_OP_ALL_REDUCE; break;
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER: kind = STRATA_OP_ALL_GATHER; in_size = size / r; break;
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER:
        kind = STRATA_OP_REDUCE_SCATTER;
        out_size = size / r;
        break;
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL: kind = STRATA_OP_ALL_TO_ALL; break;
    default:
        w = node_where(path, n);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: comm_type %" PRIu64 " is not imported (expected ALL_REDUCE 0, ALL_GATHER 2, ALL_TO_ALL 6, "
                    "REDUCE_SCATTER 7 or BROADCAST 5, the collectives ASTRA-sim runs)", w, type);
        g_free(w);
        return false;
    }
    if (size == 0 || (kind != STRATA_OP_ALL_REDUCE && size % r != 0)) {
        w = node_where(path, n);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: comm_size %" PRIu64 ": expected a size above 0%s", w, size,
                    kind != STRATA_OP_ALL_REDUCE ? " and a multiple of the ranks" : "");
        g_free(w);
        return false;
    }
    char *buf = g_strdup_printf("c%u", at), *in = g_strdup_printf("c%u.in", at);
    bool two = kind != STRATA_OP_ALL_REDUCE;
    emit_alloc(c, buf, out_size, NULL, "comm");
    if (two)
        emit_alloc(c, in, in_size, NULL, "comm");
    strata_op op = {.kind = kind, .name = buf, .src = two ? in : NULL, .axis = MESH_AXIS, .stream = "comm",
                    .note = NULL};
    strata_op_list_append(c->ops, &op);
    if (two)
        emit(c, STRATA_OP_FREE, in, NULL, "comm");
    emit(c, STRATA_OP_FREE, buf, NULL, "comm");
    g_free(buf);
    g_free(in);
    return true;
}

static bool emit_mem(rank_ctx *c, guint at, const et_node *n, GError **err)
{
    uint64_t size = 0;
    bool has = false;
    if (!attr_u64(c->f->path, n, "tensor_size", &size, &has, err))
        return false;
    if (!has || size == 0) {
        char *w = node_where(c->f->path, n);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: a MEM node needs the attribute tensor_size (bytes, above 0)", w);
        g_free(w);
        return false;
    }
    bool load = n->type == CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE;
    char *kept = g_strdup_printf("m%u", at), *staging = g_strdup_printf("m%u.staging", at);
    /* a load fills a device buffer from host memory; a store fills a host buffer from device memory */
    emit_alloc(c, kept, size, load ? NULL : "host", "mem");
    emit_alloc(c, staging, size, load ? "host" : NULL, "mem");
    emit(c, STRATA_OP_COPY, kept, staging, "mem");
    emit(c, STRATA_OP_FREE, staging, NULL, "mem");
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
            emit(c, STRATA_OP_WAIT, ev, NULL, stream);
        g_free(ev);
    }
    char *label = label_of(n);
    bool ok = true;
    switch (c->kind[i]) {
    case WORK_COMP: {
        uint64_t flops = 0, bytes = 0;
        bool has_flops = false, has_bytes = false;
        ok = attr_u64(c->f->path, n, "num_ops", &flops, &has_flops, err) &&
             attr_u64(c->f->path, n, "tensor_size", &bytes, &has_bytes, err);
        strata_op op = {.kind = STRATA_OP_COMPUTE, .name = label, .stream = stream};
        if (n->duration_micros > 0 || !has_flops || flops == 0) {
            op.has_time = true;
            op.time_s = (double)n->duration_micros / 1e6;
        } else {
            op.has_flops = true;
            op.flops = (double)flops;
            op.has_bytes = has_bytes;
            op.bytes = bytes;
        }
        if (ok)
            strata_op_list_append(c->ops, &op);
        c->sum->comp++;
        break;
    }
    case WORK_CPU: {
        strata_op op = {.kind = STRATA_OP_COMPUTE, .name = label, .stream = stream, .has_time = true,
                        .time_s = (double)n->duration_micros / 1e6};
        strata_op_list_append(c->ops, &op);
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
        emit(c, STRATA_OP_RECORD, ev, NULL, stream);
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
            char *w = node_where(f->path, nd);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: a second node with id %" PRIu64, w, nd->id);
            g_free(w);
            ok = false;
        } else {
            g_hash_table_insert(c.index, &nd->id, GUINT_TO_POINTER(i + 1));
            ok = classify(&c, i, err);
        }
    }
    ok = ok && topo_order(&c, order, err);
    for (guint k = 0; ok && k < n; k++)
        resolve_deps(&c, order[k]);
    for (guint i = 0; ok && i < n; i++)
        for (guint d = 0; d < c.eff_deps[i]->len; d++) {
            guint p = GPOINTER_TO_UINT(g_ptr_array_index(c.eff_deps[i], d));
            if (c.kind[i] != WORK_SKIP && work_stream[c.kind[p]] != work_stream[c.kind[i]])
                c.recorded[p] = true;
        }
    strata_op opt = {.kind = STRATA_OP_OPTION, .name = "mesh"};
    char *mesh_text = g_strdup_printf(MESH_AXIS ":%u", mesh);
    opt.value = mesh_text;
    if (ok)
        strata_op_list_append(c.ops, &opt);
    g_free(mesh_text);
    for (guint k = 0; ok && k < n; k++)
        ok = emit_node(&c, order[k], err);
    for (guint h = 0; ok && h < c.held->len; h++)
        emit(&c, STRATA_OP_FREE, g_ptr_array_index(c.held, h), NULL, "mem");
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

static const char *attr_string(const et_node *n, const char *name)
{
    const et_attr *a = find_attr(n->attr, n->n_attr, name);
    return a && a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL ? a->string_val : NULL;
}

static bool is_strata_export(const et_file *f)
{
    if (f->nodes->len == 0)
        return find_attr(f->meta->attr, f->meta->n_attr, "strata.options") != NULL;
    for (guint i = 0; i < f->nodes->len; i++)
        if (!attr_string(g_ptr_array_index(f->nodes, i), "strata.op"))
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
            indexed_text t = {.text = attr_string(n, "strata.op"), .path = files[r].path, .node = n};
            bool has = false;
            ok = attr_u64(files[r].path, n, "strata.index", &t.index, &has, err);
            if (ok && (!has || !t.text)) {
                char *w = node_where(files[r].path, n);
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
    const et_attr *opts = find_attr(files[0].meta->attr, files[0].meta->n_attr, "strata.options");
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
                char *w = node_where(t->path, t->node);
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "%s: strata.index %" PRIu64 " holds '%s', but '%s' in %s", w, t->index, t->text,
                            prev->text, prev->path);
                g_free(w);
                ok = false;
            }
            continue;
        }
        char *w = node_where(t->path, t->node);
        ok = parse_into(ops, t->text, w, err);
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

char **strata_chakra_rank_files(const char *input, GError **err)
{
    GPtrArray *files = g_ptr_array_new();
    if (g_file_test(input, G_FILE_TEST_IS_REGULAR))
        g_ptr_array_add(files, g_strdup(input));
    else
        for (guint r = 0;; r++) {
            char *path = g_strdup_printf("%s.%u.et", input, r);
            if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
                g_free(path);
                break;
            }
            g_ptr_array_add(files, path);
        }
    if (files->len == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: no such file, and no %s.0.et: expected a Chakra trace file, or the prefix of the files "
                    "PREFIX.0.et, PREFIX.1.et, ... of one workload (as ASTRA-sim names them)", input, input);
        g_ptr_array_free(files, TRUE);
        return NULL;
    }
    g_ptr_array_add(files, NULL);
    return (char **)g_ptr_array_free(files, FALSE);
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
        ok = et_file_read(&read[r], files[first + r], err);
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
        et_file_clear(&read[r]);
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

/* ---- export ---------------------------------------------------------------- */

typedef struct export_ctx {
    GPtrArray *ops;      /* strata_op* (owned copies) */
    GPtrArray *options;  /* "KEY=VALUE" (g_free) */
    uint32_t devices;
} export_ctx;

static void op_free(gpointer p)
{
    strata_op_clear(p);
    g_free(p);
}

static bool export_read(strata_source *src, export_ctx *x, GError **err)
{
    x->ops = g_ptr_array_new_with_free_func(op_free);
    x->options = g_ptr_array_new_with_free_func(g_free);
    x->devices = 1;
    const strata_op *op = NULL;
    int got;
    while ((got = strata_source_next(src, &op, err)) == 1) {
        if (op->kind == STRATA_OP_OPTION) {
            g_ptr_array_add(x->options, g_strdup_printf("%s=%s", op->name, op->value));
            if (strcmp(op->name, "mesh") == 0) {
                strata_mesh *m = strata_mesh_parse(op->value, err);
                if (!m)
                    return false;
                x->devices = strata_mesh_devices(m);
                strata_mesh_free(m);
            }
            continue;
        }
        if (op->kind == STRATA_OP_COLLECTIVE_PERMUTE) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s:%" PRIu64 ": collective-permute has no Chakra collective (CollectiveCommType has "
                        "ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, ...): not exported",
                        strata_source_origin(src), op->line);
            return false;
        }
        strata_op *copy = g_new0(strata_op, 1);
        strata_op_copy(copy, op);
        g_ptr_array_add(x->ops, copy);
    }
    return got == 0;
}

static et_attr *new_attr(const char *name)
{
    et_attr *a = g_new(et_attr, 1);
    chakra_proto_msg__attribute_proto__init(a);
    a->name = g_strdup(name);
    return a;
}

static et_attr *attr_i64(const char *name, int64_t v)
{
    et_attr *a = new_attr(name);
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
    a->int64_val = v;
    return a;
}

static et_attr *attr_u64v(const char *name, uint64_t v)
{
    et_attr *a = new_attr(name);
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL;
    a->uint64_val = v;
    return a;
}

static et_attr *attr_str(const char *name, const char *v)
{
    et_attr *a = new_attr(name);
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
    a->string_val = g_strdup(v);
    return a;
}

static et_attr *attr_boolv(const char *name, bool v)
{
    et_attr *a = new_attr(name);
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
    a->bool_val = v;
    return a;
}

static void attr_free(et_attr *a)
{
    g_free(a->name);
    if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL)
        g_free(a->string_val);
    if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_LIST) {
        for (size_t i = 0; i < a->string_list->n_values; i++)
            g_free(a->string_list->values[i]);
        g_free(a->string_list->values);
        g_free(a->string_list);
    }
    g_free(a);
}

/* Appends one length-delimited message (Chakra's framing) to out. */
static void append_message(GByteArray *out, const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    guint8 head[10];
    size_t h = 0;
    for (uint64_t v = len; h == 0 || v; v >>= 7)
        head[h++] = (guint8)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
    g_byte_array_append(out, head, (guint)h);
    guint old = out->len;
    g_byte_array_set_size(out, old + (guint)len);
    protobuf_c_message_pack(msg, out->data + old);
}

/* The Chakra comm_type of a collective (chakra.h). */
static int64_t comm_type_of(strata_op_kind kind)
{
    switch (kind) {
    case STRATA_OP_ALL_GATHER: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER;
    case STRATA_OP_REDUCE_SCATTER: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER;
    case STRATA_OP_ALL_TO_ALL: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL;
    default: return CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE;
    }
}

/* One device's file. */
static bool export_device(const export_ctx *x, uint32_t device, const char *path, GError **err)
{
    GByteArray *out = g_byte_array_new();
    et_meta meta;
    chakra_proto_msg__global_metadata__init(&meta);
    meta.version = (char *)"0.0.4"; /* the schema version of ASTRA-sim's examples (their GlobalMetadata) */
    et_attr *opts = new_attr("strata.options");
    opts->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_LIST;
    opts->string_list = g_new(ChakraProtoMsg__StringList, 1);
    chakra_proto_msg__string_list__init(opts->string_list);
    opts->string_list->n_values = x->options->len;
    opts->string_list->values = g_new0(char *, x->options->len + 1);
    for (guint i = 0; i < x->options->len; i++)
        opts->string_list->values[i] = g_strdup(g_ptr_array_index(x->options, i));
    meta.n_attr = 1;
    meta.attr = &opts;
    append_message(out, &meta.base);
    attr_free(opts);

    GHashTable *last_on_stream = g_hash_table_new(g_str_hash, g_str_equal); /* stream -> id + 1 */
    GHashTable *record_of = g_hash_table_new(g_str_hash, g_str_equal);      /* event -> id + 1 */
    GHashTable *size_of = g_hash_table_new(g_str_hash, g_str_equal);        /* buffer -> size */
    uint64_t next_id = 0;
    for (guint i = 0; i < x->ops->len; i++) {
        const strata_op *op = g_ptr_array_index(x->ops, i);
        if (op->has_device && op->device != device)
            continue;
        et_node node;
        chakra_proto_msg__node__init(&node);
        node.id = next_id++;
        char *text = strata_op_to_text(op);
        const char *stream = op->stream ? op->stream : STRATA_DEFAULT_STREAM;
        node.name = (char *)(op->name ? op->name : strata_op_kind_name(op->kind));
        uint64_t deps[2];
        size_t n_deps = 0;
        gpointer prev = g_hash_table_lookup(last_on_stream, stream);
        if (prev)
            deps[n_deps++] = GPOINTER_TO_SIZE(prev) - 1;
        if (op->kind == STRATA_OP_WAIT) {
            gpointer rec = g_hash_table_lookup(record_of, op->name);
            if (rec && (!prev || GPOINTER_TO_SIZE(rec) != GPOINTER_TO_SIZE(prev)))
                deps[n_deps++] = GPOINTER_TO_SIZE(rec) - 1;
        }
        node.n_data_deps = n_deps;
        node.data_deps = deps;
        et_attr *attrs[8];
        size_t na = 0;
        attrs[na++] = attr_boolv("is_cpu_op", false);
        switch (op->kind) {
        case STRATA_OP_COMPUTE:
            node.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE;
            if (op->has_time)
                node.duration_micros = (uint64_t)(op->time_s * 1e6 + 0.5);
            if (op->has_flops)
                attrs[na++] = attr_i64("num_ops", (int64_t)op->flops);
            if (op->has_bytes)
                attrs[na++] = attr_u64v("tensor_size", op->bytes);
            break;
        case STRATA_OP_COPY: {
            node.type = CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE;
            uint64_t bytes = op->has_bytes ? op->bytes : GPOINTER_TO_SIZE(g_hash_table_lookup(size_of, op->src));
            attrs[na++] = attr_u64v("tensor_size", bytes);
            break;
        }
        case STRATA_OP_ALL_REDUCE:
        case STRATA_OP_ALL_GATHER:
        case STRATA_OP_REDUCE_SCATTER:
        case STRATA_OP_ALL_TO_ALL: {
            node.type = CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE;
            const char *big = op->kind == STRATA_OP_REDUCE_SCATTER ? op->src : op->name;
            attrs[na++] = attr_i64("comm_type", comm_type_of(op->kind));
            attrs[na++] = attr_i64("comm_size", (int64_t)GPOINTER_TO_SIZE(g_hash_table_lookup(size_of, big)));
            break;
        }
        case STRATA_OP_ALLOC:
            g_hash_table_insert(size_of, (gpointer)op->name, GSIZE_TO_POINTER(op->size));
            node.type = CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE;
            attrs[na++] = attr_str("strata.buffer", op->name);
            attrs[na++] = attr_str("strata.memory", op->memory ? op->memory : "");
            attrs[na++] = attr_u64v("strata.bytes", op->size);
            break;
        default: node.type = CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE; break;
        }
        attrs[na++] = attr_str("strata.op", text);
        attrs[na++] = attr_u64v("strata.index", i);
        node.n_attr = na;
        node.attr = attrs;
        append_message(out, &node.base);
        for (size_t a = 0; a < na; a++)
            attr_free(attrs[a]);
        g_free(text);
        g_hash_table_insert(last_on_stream, (gpointer)stream, GSIZE_TO_POINTER(node.id + 1));
        if (op->kind == STRATA_OP_RECORD)
            g_hash_table_insert(record_of, (gpointer)op->name, GSIZE_TO_POINTER(node.id + 1));
    }
    g_hash_table_destroy(last_on_stream);
    g_hash_table_destroy(record_of);
    g_hash_table_destroy(size_of);
    bool ok = strata_write_file_atomic(path, (const char *)out->data, out->len, err);
    g_byte_array_free(out, TRUE);
    return ok;
}

bool strata_chakra_export(strata_source *src, const char *prefix, uint32_t *n_files, GError **err)
{
    export_ctx x = {0};
    bool ok = export_read(src, &x, err);
    *n_files = 0;
    for (uint32_t d = 0; ok && d < x.devices; d++) {
        char *path = g_strdup_printf("%s.%u.et", prefix, d);
        ok = export_device(&x, d, path, err);
        g_free(path);
        *n_files += ok;
    }
    if (x.ops)
        g_ptr_array_free(x.ops, TRUE);
    if (x.options)
        g_ptr_array_free(x.options, TRUE);
    return ok;
}
