/*
 * chakra_file.c: Chakra execution-trace files, message by message (contract
 * in chakra_file.h).
 */
#include <glib/gstdio.h>
#include <inttypes.h>
#include <string.h>
#include "core/error.h"
#include "import/chakra.h"
#include "import/chakra_file.h"

/* ---- reading a file -------------------------------------------------------- */


static void et_node_free(gpointer p) { chakra_proto_msg__node__free_unpacked(p, NULL); }

void chakra_file_clear(et_file *f)
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

bool chakra_file_read(et_file *f, const char *path, GError **err)
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
        chakra_file_clear(f);
    return ok;
}

/* ---- attributes ------------------------------------------------------------ */

const et_attr *chakra_find_attr(et_attr *const *attrs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(attrs[i]->name, name) == 0)
            return attrs[i];
    return NULL;
}

/* "FILE: node ID 'NAME'" (g_free). */
char *chakra_node_where(const char *path, const et_node *n)
{
    char *q = strata_quote(n->name);
    char *s = g_strdup_printf("%s: node %" PRIu64 " '%s'", path, n->id, q);
    g_free(q);
    return s;
}

/* A whole-number attribute (any integer field of AttributeProto) into *out;
 * false when absent; an error when it holds something else or is negative. */
bool chakra_attr_u64(const char *path, const et_node *n, const char *name, uint64_t *out, bool *present,
                     GError **err)
{
    const et_attr *a = chakra_find_attr(n->attr, n->n_attr, name);
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
        char *w = chakra_node_where(path, n);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: attribute '%s': expected a whole number (int64_val, uint64_val, ...), got field %d", w,
                    name, (int)a->value_case);
        g_free(w);
        return false;
    }
    }
    if (is_signed) {
        if (s < 0) {
            char *w = chakra_node_where(path, n);
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
bool chakra_attr_bool(const char *path, const et_node *n, const char *name, bool *out, GError **err)
{
    const et_attr *a = chakra_find_attr(n->attr, n->n_attr, name);
    *out = false;
    if (!a)
        return true;
    if (a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL) {
        *out = a->bool_val;
        return true;
    }
    char *w = chakra_node_where(path, n);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: attribute '%s': expected bool_val, got field %d", w,
                name, (int)a->value_case);
    g_free(w);
    return false;
}

const char *chakra_attr_string(const et_node *n, const char *name)
{
    const et_attr *a = chakra_find_attr(n->attr, n->n_attr, name);
    return a && a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL ? a->string_val : NULL;
}

/* Appends one length-delimited message (Chakra's framing) to out. */
void chakra_append_message(GByteArray *out, const ProtobufCMessage *msg)
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
