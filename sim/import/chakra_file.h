/*
 * chakra_file.h: Chakra execution-trace files, message by message (internal
 * to sim/import/chakra*.c; the format is described in chakra.h).
 *
 * The framing is Chakra's (src/third_party/utils/protolib.py): a varint
 * length, then that many bytes of protobuf; the first message is a
 * GlobalMetadata, every other one a Node, decoded by protobuf-c against the
 * vendored schema (third_party/chakra/et_def.proto). A file is read whole.
 *
 * Invariants: a read file has meta set and nodes in file order; every error
 * is STRATA_ERROR_INPUT and names the file, and the message or node.
 */
#ifndef STRATA_IMPORT_CHAKRA_FILE_H
#define STRATA_IMPORT_CHAKRA_FILE_H

#include <et_def.pb-c.h>
#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef ChakraProtoMsg__Node et_node;
typedef ChakraProtoMsg__AttributeProto et_attr;
typedef ChakraProtoMsg__GlobalMetadata et_meta;

typedef struct et_file {
    const char *path;
    et_meta *meta;
    GPtrArray *nodes; /* et_node* in file order (freed with protobuf-c) */
} et_file;

/* Reads path (at most STRATA_CHAKRA_MAX_FILE bytes) into f; false with err
 * on a truncated varint, a length past the end, a message protobuf refuses. */
bool chakra_file_read(et_file *f, const char *path, GError **err);
void chakra_file_clear(et_file *f);

/* The attribute named name, or NULL. */
const et_attr *chakra_find_attr(et_attr *const *attrs, size_t n, const char *name);
/* "FILE: node ID 'NAME'" (g_free). */
char *chakra_node_where(const char *path, const et_node *n);
/* A whole-number attribute (any integer field) into *out; *present says
 * whether there is one; false with err when it holds something else or is
 * negative. */
bool chakra_attr_u64(const char *path, const et_node *n, const char *name, uint64_t *out, bool *present,
                     GError **err);
/* A bool attribute (absent: false); false with err for another type. */
bool chakra_attr_bool(const char *path, const et_node *n, const char *name, bool *out, GError **err);
/* A string attribute's value, or NULL (absent or not string_val). */
const char *chakra_attr_string(const et_node *n, const char *name);

/* Appends msg to out, framed as Chakra frames it (a varint length first). */
void chakra_append_message(GByteArray *out, const ProtobufCMessage *msg);

#endif
