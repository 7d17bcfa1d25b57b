/*
 * chakra_export.c: a trace as Chakra execution traces, one per device
 * (contract in chakra_export.h).
 *
 * Reads the whole trace (ops are copied), then writes each device's file:
 * the ops without device= and those with its device, in trace order.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "core/error.h"
#include "core/mesh.h"
#include "core/outfile.h"
#include "import/chakra_export.h"
#include "import/chakra_file.h"
#include "trace/writer.h"

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
                uint64_t devices = strata_mesh_devices(m);
                strata_mesh_free(m);
                if (devices > STRATA_CHAKRA_EXPORT_MAX_FILES) { /* before any file is written */
                    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                                "%s:%" PRIu64 ": mesh %s has %" PRIu64 " devices: exporting it writes one file "
                                "each, %" PRIu64 " files, more than the %u an export writes",
                                strata_source_origin(src), op->line, op->value, devices, devices,
                                STRATA_CHAKRA_EXPORT_MAX_FILES);
                    return false;
                }
                x->devices = (uint32_t)devices;
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

#define ATTR_CASE(c) CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_##c

/* An attribute named name whose value is of value_case (the caller sets
 * the value: the typed constructors below). */
static et_attr *new_attr(const char *name, ChakraProtoMsg__AttributeProto__ValueCase value_case)
{
    et_attr *a = g_new(et_attr, 1);
    chakra_proto_msg__attribute_proto__init(a);
    a->name = g_strdup(name);
    a->value_case = value_case;
    return a;
}

/* The typed constructors: attr_TYPE(name, v), an attribute holding v. */
#define ATTR_OF(fn, ctype, vcase, field, value)                                                                     \
    static et_attr *fn(const char *name, ctype v)                                                                  \
    {                                                                                                              \
        et_attr *a = new_attr(name, ATTR_CASE(vcase));                                                             \
        a->field = (value);                                                                                        \
        return a;                                                                                                  \
    }
ATTR_OF(attr_i64, int64_t, INT64_VAL, int64_val, v)
ATTR_OF(attr_u64v, uint64_t, UINT64_VAL, uint64_val, v)
ATTR_OF(attr_str, const char *, STRING_VAL, string_val, g_strdup(v))
ATTR_OF(attr_boolv, bool, BOOL_VAL, bool_val, v)
#undef ATTR_OF

static void attr_free(et_attr *a)
{
    g_free(a->name);
    if (a->value_case == ATTR_CASE(STRING_VAL))
        g_free(a->string_val);
    if (a->value_case == ATTR_CASE(STRING_LIST)) {
        for (size_t i = 0; i < a->string_list->n_values; i++)
            g_free(a->string_list->values[i]);
        g_free(a->string_list->values);
        g_free(a->string_list);
    }
    g_free(a);
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

/* One device's file, written and prepared in set (*file: its output). */
static bool export_device(const export_ctx *x, uint32_t device, const char *path, strata_outfile_set *set,
                          strata_outfile **file, GError **err)
{
    GByteArray *out = g_byte_array_new();
    et_meta meta;
    chakra_proto_msg__global_metadata__init(&meta);
    meta.version = (char *)"0.0.4"; /* the schema version of ASTRA-sim's examples (their GlobalMetadata) */
    et_attr *opts = new_attr("strata.options", ATTR_CASE(STRING_LIST));
    opts->string_list = g_new(ChakraProtoMsg__StringList, 1);
    chakra_proto_msg__string_list__init(opts->string_list);
    opts->string_list->n_values = x->options->len;
    opts->string_list->values = g_new0(char *, x->options->len + 1);
    for (guint i = 0; i < x->options->len; i++)
        opts->string_list->values[i] = g_strdup(g_ptr_array_index(x->options, i));
    meta.n_attr = 1;
    meta.attr = &opts;
    chakra_append_message(out, &meta.base);
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
            /* comm_size as ASTRA-sim reads it: the buffer of an all-reduce or all-to-all, each rank's input
             * of an all-gather or reduce-scatter (Ring.cc's data_size); with bytes=, that part: the bytes
             * read of IN, which for each of these kinds is that figure */
            const char *big = op->kind == STRATA_OP_ALL_GATHER || op->kind == STRATA_OP_REDUCE_SCATTER ? op->src
                                                                                                       : op->name;
            uint64_t comm = op->has_bytes ? op->bytes : GPOINTER_TO_SIZE(g_hash_table_lookup(size_of, big));
            attrs[na++] = attr_i64("comm_type", comm_type_of(op->kind));
            attrs[na++] = attr_i64("comm_size", (int64_t)comm);
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
        chakra_append_message(out, &node.base);
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
    *file = strata_outfile_open_in(set, path, err);
    bool ok = *file != NULL;
    if (ok && out->len > 0 && fwrite(out->data, 1, out->len, strata_outfile_stream(*file)) != out->len) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot write '%s': %s", path, g_strerror(errno));
        ok = false;
    }
    ok = ok && strata_outfile_prepare(*file, err);
    g_byte_array_free(out, TRUE);
    return ok;
}

/* A prefix that names files: not empty, not a directory ("out/"). */
static bool prefix_ok(const char *prefix, GError **err)
{
    char *base = g_path_get_basename(prefix);
    bool ok = *prefix != '\0' && !g_str_has_suffix(prefix, "/") && strcmp(base, ".") != 0 && strcmp(base, "..") != 0 &&
              !g_file_test(prefix, G_FILE_TEST_IS_DIR);
    g_free(base);
    if (!ok)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "-o '%s': expected a prefix of file names (PREFIX.0.et, ...), not a directory nor empty", prefix);
    return ok;
}

/* No PREFIX.N.et for the N devices written: a file left by an earlier export of more devices, which `import chakra
 * PREFIX` reads with these as one program's ranks (an 8-device export over a 16-device one's files was imported as
 * 16 rank files at exit 0). Refused, not removed: the file is the user's. */
static bool no_file_past(const char *prefix, uint32_t devices, GError **err)
{
    char *path = g_strdup_printf("%s.%u.et", prefix, devices);
    bool ok = !g_file_test(path, G_FILE_TEST_EXISTS);
    if (!ok)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "-o '%s': expected no %s beside the %u files this export "
                    "writes (%s.0.et to %s.%u.et): another export's, which 'strata import chakra %s' would read as "
                    "one more rank of this one; remove it and those above it, or choose another prefix", prefix, path,
                    devices, prefix, prefix, devices - 1, prefix);
    g_free(path);
    return ok;
}

bool strata_chakra_export(strata_source *src, const char *prefix, strata_outfile_set *set, uint32_t *n_files,
                          GError **err)
{
    export_ctx x = {0};
    *n_files = 0;
    bool ok = prefix_ok(prefix, err) && strata_outfile_set_lock(set, prefix, err) && export_read(src, &x, err) &&
              no_file_past(prefix, x.devices, err);
    GPtrArray *files = g_ptr_array_new();
    for (uint32_t d = 0; ok && d < x.devices; d++) {
        char *path = g_strdup_printf("%s.%u.et", prefix, d);
        strata_outfile *file = NULL;
        ok = export_device(&x, d, path, set, &file, err);
        if (file)
            g_ptr_array_add(files, file);
        g_free(path);
    }
    if (ok) { /* all or none: renamed together */
        ok = strata_outfile_commit_all((strata_outfile **)files->pdata, files->len, err);
        *n_files = ok ? files->len : 0;
    } else {
        for (guint i = 0; i < files->len; i++)
            strata_outfile_abort(g_ptr_array_index(files, i));
    }
    g_ptr_array_free(files, TRUE);
    if (x.ops)
        g_ptr_array_free(x.ops, TRUE);
    if (x.options)
        g_ptr_array_free(x.options, TRUE);
    return ok;
}
