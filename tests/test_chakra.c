/*
 * test_chakra.c: Chakra execution traces in and out (sim/import/chakra.c,
 * `strata import chakra`, `strata export chakra`), on cases derived by hand:
 *  - ASTRA-sim's own examples (shared/data/chakra, astra-sim/astra-sim
 *    @518bd51, examples/workload/microbenchmarks, MIT): all_reduce 8npus_1MB
 *    holds one COMM_COLL_NODE per rank (comm_type 0 = ALL_REDUCE, comm_size
 *    1048576), the same graph on every rank but for the node id (= rank), so
 *    the import is one SPMD program on mesh rank:8: alloc c0 1MiB, all-reduce
 *    c0 axis=rank, free c0. all_to_all 4npus_1MB (comm_type 6), passed as
 *    its folder: c0 and c0.in of 1MiB each (an all-to-all's input and
 *    output are the same size).
 *  - comm_size of every kind as ASTRA-sim's Ring.cc reads it (each rank's
 *    input), on microbenchmarks written as its generator scripts write them;
 *    a folder without rank files, with a gap, or with two workloads.
 *  - `strata run` of the 8-rank all-reduce on dgx-h100 (8 GPUs): 8 devices,
 *    one collective of 1 MiB over a group of 8, and each hbm@D's peak at least
 *    the 1 MiB buffer c0.
 *  - Chakra's own PyTorch-converted trace (mlcommons/chakra @21585d8,
 *    Apache-2.0): 3,643 COMP and 21 COMM_COLL nodes; 14 of the COMM_COLL are
 *    the host side (is_cpu_op) and 7 run on the GPU (5 ALL_REDUCE, 2
 *    BROADCAST); of the COMP nodes 1,209 are GPU kernels, so the cpu stream
 *    runs 3,643 - 1,209 + 14 = 2,448 nodes.
 *  - Round trip: export then import gives the same ops (strata_op_equal) and
 *    the same `strata run` results (JSON equal but for the trace's path).
 *  - The export is what ASTRA-sim's workload layer reads: a GlobalMetadata,
 *    then nodes of the types its Workload::issue handles, collectives with
 *    int64 comm_type and comm_size, data_deps naming earlier nodes.
 *  - Bad input exits 2 naming the file and the node: a truncated varint, a
 *    length past the end, a wrong wire type, an unknown node type, a
 *    collective ASTRA-sim does not run, an attribute of the wrong type.
 */
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <et_def.pb-c.h>
#include "testutil.h"
#include "trace/op.h"
#include "trace/reader.h"
#include "trace/writer.h"

/* ---- helpers ---- */

static char *import_to(const char *input, const char *dir, const char *name, const char *const *extra,
                       strata_cli_result *r)
{
    char *out = g_build_filename(dir, name, NULL);
    GPtrArray *args = g_ptr_array_new();
    g_ptr_array_add(args, (gpointer) "import");
    g_ptr_array_add(args, (gpointer) "chakra");
    g_ptr_array_add(args, (gpointer)input);
    for (const char *const *e = extra; e && *e; e++)
        g_ptr_array_add(args, (gpointer)*e);
    g_ptr_array_add(args, (gpointer) "-o");
    g_ptr_array_add(args, out);
    g_ptr_array_add(args, NULL);
    *r = strata_test_run_cli((const char *const *)args->pdata);
    g_ptr_array_free(args, TRUE);
    return out;
}

static char *ops_text(const char *trace)
{
    char *text = NULL;
    ck_assert(g_file_get_contents(trace, &text, NULL, NULL));
    GString *s = g_string_new(NULL);
    char **lines = g_strsplit(text, "\n", -1);
    for (char **l = lines; *l; l++)
        if (**l && **l != '#')
            g_string_append_printf(s, "%s\n", *l);
    g_strfreev(lines);
    g_free(text);
    return g_string_free(s, FALSE);
}

static void remove_tree(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        char *p = g_build_filename(dir, name, NULL);
        g_unlink(p);
        g_free(p);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(dir);
}

/* ---- real workloads ---- */

START_TEST(astra_sim_all_reduce)
{
    char *first = strata_test_shared_path("chakra/astra-sim-microbenchmarks/all_reduce_8npus_1MB/all_reduce.0.et");
    if (!first)
        return;
    char *prefix = g_strndup(first, strlen(first) - strlen(".0.et")); /* the workload's prefix, as ASTRA-sim's */
    g_free(first);
    char *dir = strata_test_temp_dir();
    strata_cli_result r;
    char *out = import_to(prefix, dir, "ar.trace", NULL, &r);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "8 rank files, 8 nodes -> one SPMD program on mesh rank:8"), "%s", r.err);
    strata_cli_result_clear(&r);
    char *ops = ops_text(out);
    ck_assert_str_eq(ops, "strata-trace 1\noption mesh=rank:8\nalloc c0 1MiB tag=temp stream=comm\n"
                          "all-reduce c0 axis=rank stream=comm\nfree c0 stream=comm\n");
    g_free(ops);
    /* run on dgx-h100: per-device memory and the collective */
    char *hw = strata_test_source_path("configs/hw/dgx-h100.ini");
    char *json = g_build_filename(dir, "r.json", NULL);
    r = strata_test_cli("run", "--hw", hw, "--trace", out, "--json", json, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "devices   8, mesh rank:8"), "%s", r.out);
    ck_assert_msg(strstr(r.out, "all-reduce") && strstr(r.out, "1.00 MiB") && strstr(r.out, "hbm@0"), "%s", r.out);
    strata_cli_result_clear(&r);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_file(p, json, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    ck_assert_int_eq(json_object_get_int_member(o, "devices"), 8);
    JsonArray *colls = json_object_get_array_member(o, "collectives");
    ck_assert_uint_eq(json_array_get_length(colls), 1);
    JsonObject *c0 = json_array_get_object_element(colls, 0);
    ck_assert_int_eq(json_object_get_int_member(c0, "bytes"), 1048576);
    ck_assert_int_eq(json_object_get_int_member(c0, "group_size"), 8);
    JsonObject *mems = json_object_get_object_member(o, "memories");
    for (int d = 0; d < 8; d++) {
        char *name = g_strdup_printf("hbm@%d", d);
        JsonObject *m = json_object_get_object_member(mems, name);
        ck_assert_msg(m, "no %s", name);
        ck_assert_int_ge(json_object_get_int_member(m, "peak_allocated_bytes"), 1048576);
        g_free(name);
    }
    g_object_unref(p);
    remove_tree(dir);
    g_free(json);
    g_free(hw);
    g_free(out);
    g_free(dir);
    g_free(prefix);
}
END_TEST

START_TEST(astra_sim_all_to_all)
{
    char *first = strata_test_shared_path("chakra/astra-sim-microbenchmarks/all_to_all_4npus_1MB/all_to_all.0.et");
    if (!first)
        return;
    char *prefix = g_path_get_dirname(first); /* the workload's folder, as ASTRA-sim's examples ship it */
    g_free(first);
    char *dir = strata_test_temp_dir();
    strata_cli_result r;
    char *out = import_to(prefix, dir, "a2a.trace", NULL, &r);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    char *ops = ops_text(out);
    ck_assert_str_eq(ops, "strata-trace 1\noption mesh=rank:4\nalloc c0 1MiB tag=temp stream=comm\n"
                          "alloc c0.in 1MiB tag=temp stream=comm\nall-to-all c0 c0.in axis=rank stream=comm\n"
                          "free c0.in stream=comm\nfree c0 stream=comm\n");
    g_free(ops);
    /* 4 of dgx-h100's 8 GPUs: a slice of one host */
    char *hw = strata_test_source_path("configs/hw/dgx-h100.ini");
    r = strata_test_cli("run", "--hw", hw, "--trace", out, "--set", "hardware.devices=4", "--quiet", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    remove_tree(dir);
    g_free(hw);
    g_free(out);
    g_free(dir);
    g_free(prefix);
}
END_TEST

START_TEST(pytorch_converted_trace)
{
    char *et = strata_test_shared_path("chakra/chakra-tests/feeder-tests-chakra.0.et");
    if (!et)
        return;
    char *dir = strata_test_temp_dir();
    strata_cli_result r;
    const char *const ranks[] = {"--ranks", "8", NULL};
    char *out = import_to(et, dir, "f.trace", ranks, &r);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "3664 nodes -> one SPMD program on mesh rank:8; 1209 compute, 2448 cpu, 0 memory, "
                                "7 collective nodes"),
                  "%s", r.err);
    strata_cli_result_clear(&r);
    char *ops = ops_text(out);
    /* 5 ALL_REDUCE on the GPU; the 2 BROADCAST are replayed durations */
    int n_ar = 0;
    for (const char *at = ops; (at = strstr(at, "\nall-reduce ")); at++)
        n_ar++;
    ck_assert_int_eq(n_ar, 5);
    g_free(ops);
    r = strata_test_cli("check", "--trace", out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    remove_tree(dir);
    g_free(out);
    g_free(dir);
    g_free(et);
}
END_TEST

/* ---- round trip ---- */

static void assert_same_ops(const char *a, const char *b)
{
    GError *err = NULL;
    strata_source *sa = strata_trace_open(a, &err), *sb = strata_trace_open(b, &err);
    ck_assert_msg(sa && sb, "%s", err ? err->message : "?");
    const strata_op *oa = NULL, *ob = NULL;
    strata_op ca;
    uint64_t n = 0;
    for (;;) {
        int ga = strata_source_next(sa, &oa, &err);
        if (ga == 1)
            strata_op_copy(&ca, oa);
        int gb = strata_source_next(sb, &ob, &err);
        ck_assert_int_eq(ga, gb);
        if (ga != 1)
            break;
        ck_assert_msg(strata_op_equal(&ca, ob), "%s and %s differ at op %" G_GUINT64_FORMAT ": %s vs %s", a, b, n,
                      strata_op_to_text(&ca), strata_op_to_text(ob));
        strata_op_clear(&ca);
        n++;
    }
    ck_assert_int_gt(n, 0);
    strata_source_free(sa);
    strata_source_free(sb);
}

/* `strata run --json` of trace on hw, without the "trace" member (a path). */
static char *run_json(const char *hw, const char *trace, const char *dir)
{
    char *json = g_build_filename(dir, "run.json", NULL);
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--json", json, "--quiet", NULL);
    ck_assert_msg(r.status == 0, "%s: %s", trace, r.err);
    strata_cli_result_clear(&r);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_file(p, json, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    json_object_remove_member(o, "trace");
    char *text = json_to_string(json_parser_get_root(p), FALSE);
    g_object_unref(p);
    g_unlink(json);
    g_free(json);
    return text;
}

static void round_trip(const char *trace, const char *hw_rel)
{
    char *dir = strata_test_temp_dir();
    char *prefix = g_build_filename(dir, "rt", NULL);
    strata_cli_result r = strata_test_cli("export", "chakra", "--trace", trace, "-o", prefix, NULL);
    ck_assert_msg(r.status == 0, "%s: %s", trace, r.err);
    strata_cli_result_clear(&r);
    char *back = import_to(prefix, dir, "back.trace", NULL, &r);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "(a strata export)"), "%s", r.err);
    strata_cli_result_clear(&r);
    assert_same_ops(trace, back);
    char *hw = strata_test_source_path(hw_rel);
    char *ja = run_json(hw, trace, dir), *jb = run_json(hw, back, dir);
    ck_assert_str_eq(ja, jb);
    g_free(ja);
    g_free(jb);
    g_free(hw);
    remove_tree(dir);
    g_free(back);
    g_free(prefix);
    g_free(dir);
}

START_TEST(round_trip_examples)
{
    const char *examples[] = {"traces/examples/format-tour.trace", "traces/examples/double-buffer.trace",
                              "traces/examples/pcie-copy.trace", "traces/examples/train-step-offload.trace"};
    for (size_t i = 0; i < G_N_ELEMENTS(examples); i++) {
        char *t = strata_test_source_path(examples[i]);
        round_trip(t, "configs/hw/h100.ini");
        g_free(t);
    }
}
END_TEST

START_TEST(round_trip_spmd)
{
    /* a sharded transformer step on 8 GPUs: collectives, several streams, events */
    char *dir = strata_test_temp_dir();
    char *t = g_build_filename(dir, "tf.trace", NULL);
    strata_cli_result r = strata_test_cli("gen", "transformer", "layers=2", "d_model=256", "heads=4", "seq=128", "batch=8",
                                          "mesh=data:8", "sharding=fsdp", "-o", t, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    round_trip(t, "configs/hw/dgx-h100.ini");
    /* an exported SPMD trace is one file per device */
    char *prefix = g_build_filename(dir, "x", NULL);
    r = strata_test_cli("export", "chakra", "--trace", t, "-o", prefix, NULL);
    ck_assert_msg(r.status == 0 && strstr(r.err, "(8 files)"), "%s", r.err);
    strata_cli_result_clear(&r);
    remove_tree(dir);
    g_free(prefix);
    g_free(t);
    g_free(dir);
}
END_TEST

/* ---- what ASTRA-sim reads ---- */

static gchar *read_all(const char *path, gsize *len)
{
    gchar *data = NULL;
    ck_assert(g_file_get_contents(path, &data, len, NULL));
    return data;
}

static uint64_t varint(const guint8 *b, gsize len, gsize *pos)
{
    uint64_t v = 0;
    for (int s = 0; *pos < len; s += 7) {
        guint8 c = b[(*pos)++];
        v |= (uint64_t)(c & 0x7f) << s;
        if (!(c & 0x80))
            return v;
    }
    ck_abort_msg("truncated varint");
    return 0;
}

START_TEST(export_is_astra_sim_input)
{
    char *dir = strata_test_temp_dir();
    char *t = g_build_filename(dir, "c.trace", NULL);
    strata_cli_result r = strata_test_cli("gen", "collective", "op=all-gather", "devices=4", "bytes=1MiB", "-o", t,
                                          NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    char *prefix = g_build_filename(dir, "ag", NULL);
    r = strata_test_cli("export", "chakra", "--trace", t, "-o", prefix, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    for (int d = 0; d < 4; d++) {
        char *path = g_strdup_printf("%s.%d.et", prefix, d);
        gsize len = 0, pos = 0;
        guint8 *b = (guint8 *)read_all(path, &len);
        uint64_t l = varint(b, len, &pos);
        ChakraProtoMsg__GlobalMetadata *meta = chakra_proto_msg__global_metadata__unpack(NULL, l, b + pos);
        ck_assert_ptr_nonnull(meta);
        chakra_proto_msg__global_metadata__free_unpacked(meta, NULL);
        pos += l;
        int colls = 0;
        uint64_t nodes = 0;
        while (pos < len) {
            l = varint(b, len, &pos);
            ChakraProtoMsg__Node *n = chakra_proto_msg__node__unpack(NULL, l, b + pos);
            ck_assert_ptr_nonnull(n);
            pos += l;
            ck_assert_uint_eq(n->id, nodes); /* ids in file order, deps on earlier ones */
            for (size_t k = 0; k < n->n_data_deps; k++)
                ck_assert_uint_lt(n->data_deps[k], n->id);
            ck_assert(n->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE ||
                      n->type == CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE ||
                      n->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE ||
                      n->type == CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE);
            if (n->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE) {
                colls++;
                int64_t type = -1, size = -1;
                for (size_t a = 0; a < n->n_attr; a++) {
                    if (strcmp(n->attr[a]->name, "comm_type") == 0) {
                        ck_assert_int_eq(n->attr[a]->value_case, CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL);
                        type = n->attr[a]->int64_val;
                    }
                    if (strcmp(n->attr[a]->name, "comm_size") == 0)
                        size = n->attr[a]->int64_val;
                }
                /* gen collective bytes=1MiB (nccl-tests' size: the all-gather's output) gives recv of 1 MiB and
                 * send of 256 KiB; comm_size is each rank's input, as ASTRA-sim's Ring.cc reads it */
                ck_assert_int_eq(type, CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER);
                ck_assert_int_eq(size, 262144);
            }
            chakra_proto_msg__node__free_unpacked(n, NULL);
            nodes++;
        }
        ck_assert_int_eq(colls, 1);
        g_free(b);
        g_free(path);
    }
    remove_tree(dir);
    g_free(prefix);
    g_free(t);
    g_free(dir);
}
END_TEST

/* ---- bad input ---- */

static void append_msg(GByteArray *out, const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    guint8 head[10];
    size_t h = 0;
    for (uint64_t v = len; h == 0 || v; v >>= 7)
        head[h++] = (guint8)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
    g_byte_array_append(out, head, (guint)h);
    guint old = out->len;
    g_byte_array_set_size(out, old + (guint)len);
    protobuf_c_message_pack(m, out->data + old);
}

/* A file: metadata, then a node of `type` named "bad" with id 7 and, when
 * attr is set, that attribute. */
static GByteArray *file_with_node(int type, ChakraProtoMsg__AttributeProto *attr)
{
    GByteArray *b = g_byte_array_new();
    ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    append_msg(b, &meta.base);
    ChakraProtoMsg__Node n = CHAKRA_PROTO_MSG__NODE__INIT;
    n.id = 7;
    n.name = (char *)"bad";
    n.type = type;
    n.n_attr = attr ? 1 : 0;
    n.attr = attr ? &attr : NULL;
    append_msg(b, &n.base);
    return b;
}

/* ---- a graph written to the format: every mapping ---- */

static void append_node(GByteArray *b, uint64_t id, const char *name, int type, uint64_t dur, const uint64_t *deps,
                        size_t n_deps, ChakraProtoMsg__AttributeProto **attrs, size_t n_attrs)
{
    ChakraProtoMsg__Node n = CHAKRA_PROTO_MSG__NODE__INIT;
    n.id = id;
    n.name = (char *)name;
    n.type = type;
    n.duration_micros = dur;
    n.n_data_deps = n_deps;
    n.data_deps = (uint64_t *)deps;
    n.n_attr = n_attrs;
    n.attr = attrs;
    append_msg(b, &n.base);
}

/* b (freed) written to et, then imported into dir/name. */
static char *import_bytes(GByteArray *b, const char *et, const char *dir, const char *name, strata_cli_result *r)
{
    ck_assert(g_file_set_contents(et, (const char *)b->data, (gssize)b->len, NULL));
    g_byte_array_free(b, TRUE);
    return import_to(et, dir, name, NULL, r);
}

START_TEST(graph_written_to_the_format)
{
    /* node 10 COMP (5 us) on the GPU; 11 METADATA after 10 (no work: its dependents wait for 10);
     * 12 MEM_LOAD of 4096 B after 11; 13 COMP with num_ops 2e9 and tensor_size 8 MiB after 12 and 10;
     * 14 MEM_STORE of 1024 B after 13. Streams: comp (10, 13), mem (12, 14). Cross-stream dependencies:
     * 12 on 10 (through 11), 13 on 12, 14 on 13: records e0 (10, position 0), e2 (12), e3 (13). */
    GByteArray *b = g_byte_array_new();
    ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    append_msg(b, &meta.base);
    ChakraProtoMsg__AttributeProto load = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT, ops = load, bytes = load,
                                   store = load;
    load.name = bytes.name = store.name = (char *)"tensor_size";
    load.value_case = bytes.value_case = store.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL;
    load.uint64_val = 4096;
    bytes.uint64_val = 8 << 20;
    store.uint64_val = 1024;
    ops.name = (char *)"num_ops";
    ops.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
    ops.int64_val = 2000000000;
    ChakraProtoMsg__AttributeProto *a_load[] = {&load}, *a_comp[] = {&ops, &bytes}, *a_store[] = {&store};
    const uint64_t d10[] = {10}, d11[] = {11}, d13[] = {12, 10}, d14[] = {13};
    append_node(b, 10, "matmul fwd", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, 5, NULL, 0, NULL, 0);
    append_node(b, 11, "meta", CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE, 0, d10, 1, NULL, 0);
    append_node(b, 12, "load", CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE, 0, d11, 1, a_load, 1);
    append_node(b, 13, "gemm", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, 0, d13, 2, a_comp, 2);
    append_node(b, 14, "store", CHAKRA_PROTO_MSG__NODE_TYPE__MEM_STORE_NODE, 0, d14, 1, a_store, 1);
    char *dir = strata_test_temp_dir();
    char *et = g_build_filename(dir, "g.et", NULL);
    strata_cli_result r;
    char *out = import_bytes(b, et, dir, "g.trace", &r);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "2 compute, 0 cpu, 2 memory, 0 collective nodes, 1 skipped (metadata), 3 events"),
                  "%s", r.err);
    strata_cli_result_clear(&r);
    char *ops_got = ops_text(out);
    ck_assert_str_eq(ops_got, "strata-trace 1\n"
                              "option mesh=rank:1\n"
                              "compute matmul_fwd time=5us stream=comp\n"
                              "record e0 stream=comp\n"
                              "wait e0 stream=mem\n"
                              "alloc m2 4KiB tag=temp stream=mem\n"
                              "alloc m2.staging 4KiB host tag=temp stream=mem\n"
                              "copy m2 m2.staging stream=mem\n"
                              "free m2.staging stream=mem\n"
                              "record e2 stream=mem\n"
                              "wait e2 stream=comp\n"
                              "compute gemm flops=2000000000 bytes=8MiB stream=comp\n"
                              "record e3 stream=comp\n"
                              "wait e3 stream=mem\n"
                              "alloc m4 1KiB host tag=temp stream=mem\n"
                              "alloc m4.staging 1KiB tag=temp stream=mem\n"
                              "copy m4 m4.staging stream=mem\n"
                              "free m4.staging stream=mem\n"
                              "free m2 stream=mem\n"
                              "free m4 stream=mem\n");
    g_free(ops_got);
    /* it runs: 4 KiB + 1 KiB staging on the device at most (m2 live while m4.staging is) = 5 KiB peak */
    char *hw = strata_test_source_path("configs/hw/h100.ini");
    char *json = g_build_filename(dir, "r.json", NULL);
    r = strata_test_cli("run", "--hw", hw, "--trace", out, "--json", json, "--quiet", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_file(p, json, NULL));
    JsonObject *hbm = json_object_get_object_member(
        json_object_get_object_member(json_node_get_object(json_parser_get_root(p)), "memories"), "hbm");
    ck_assert_int_eq(json_object_get_int_member(hbm, "peak_allocated_bytes"), 5 * 1024);
    g_object_unref(p);
    remove_tree(dir);
    g_free(json);
    g_free(hw);
    g_free(out);
    g_free(et);
    g_free(dir);
}
END_TEST

/* ASTRA-sim's microbenchmarks, written as its generator scripts write them
 * (examples/workload/microbenchmarks/generator_scripts, @518bd51): one
 * COMM_COLL_NODE per rank (id = rank, name KIND_4npus_1MB, is_cpu_op false,
 * int64 comm_type, int64 comm_size 1 MiB), in a folder KIND.0.et ..
 * KIND.3.et. */
static void write_microbenchmark(const char *folder, const char *kind, int64_t type, int ranks)
{
    g_mkdir_with_parents(folder, 0755);
    for (int r = 0; r < ranks; r++) {
        GByteArray *b = g_byte_array_new();
        ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
        meta.version = (char *)"0.0.4";
        append_msg(b, &meta.base);
        ChakraProtoMsg__AttributeProto cpu = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT, t = cpu, size = cpu;
        cpu.name = (char *)"is_cpu_op";
        cpu.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
        t.name = (char *)"comm_type";
        t.value_case = size.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
        t.int64_val = type;
        size.name = (char *)"comm_size";
        size.int64_val = 1 << 20;
        ChakraProtoMsg__AttributeProto *attrs[] = {&cpu, &t, &size};
        char *name = g_strdup_printf("%s_%dnpus_1MB", kind, ranks);
        append_node(b, (uint64_t)r, name, CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, 0, NULL, 0, attrs, 3);
        char *path = g_strdup_printf("%s/%s.%d.et", folder, kind, r);
        ck_assert(g_file_set_contents(path, (const char *)b->data, (gssize)b->len, NULL));
        g_byte_array_free(b, TRUE);
        g_free(path);
        g_free(name);
    }
}

/* comm_size of every collective as ASTRA-sim reads it: Workload.cc
 * (issue_coll_comm) passes it to Sys::generate_all_reduce / _all_gather /
 * _reduce_scatter / _all_to_all, and Ring.cc's constructor takes it as
 * data_size, the rank's input: final_data_size = data_size (all-reduce,
 * all-to-all), data_size * nodes_in_ring (all-gather), data_size /
 * nodes_in_ring (reduce-scatter). On 4 ranks, comm_size 1 MiB:
 *   all-reduce     c0 1 MiB
 *   all-gather     c0 (output) 4 MiB, c0.in 1 MiB
 *   reduce-scatter c0 (output) 256 KiB, c0.in 1 MiB
 *   all-to-all     c0 1 MiB, c0.in 1 MiB
 * Each workload is passed as its folder. */
START_TEST(astra_sim_comm_size_every_kind)
{
    static const struct {
        const char *kind;
        int64_t type;
        const char *ops;
    } rows[] = {
        {"all_reduce", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE,
         "alloc c0 1MiB tag=temp stream=comm\nall-reduce c0 axis=rank stream=comm\nfree c0 stream=comm\n"},
        {"all_gather", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER,
         "alloc c0 4MiB tag=temp stream=comm\nalloc c0.in 1MiB tag=temp stream=comm\n"
         "all-gather c0 c0.in axis=rank stream=comm\nfree c0.in stream=comm\nfree c0 stream=comm\n"},
        {"reduce_scatter", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER,
         "alloc c0 256KiB tag=temp stream=comm\nalloc c0.in 1MiB tag=temp stream=comm\n"
         "reduce-scatter c0 c0.in axis=rank stream=comm\nfree c0.in stream=comm\nfree c0 stream=comm\n"},
        {"all_to_all", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL,
         "alloc c0 1MiB tag=temp stream=comm\nalloc c0.in 1MiB tag=temp stream=comm\n"
         "all-to-all c0 c0.in axis=rank stream=comm\nfree c0.in stream=comm\nfree c0 stream=comm\n"},
    };
    char *dir = strata_test_temp_dir();
    for (size_t k = 0; k < G_N_ELEMENTS(rows); k++) {
        char *folder = g_strdup_printf("%s/%s_4npus_1MB", dir, rows[k].kind);
        write_microbenchmark(folder, rows[k].kind, rows[k].type, 4);
        strata_cli_result r;
        char *out = import_to(folder, dir, "k.trace", NULL, &r);
        ck_assert_msg(r.status == 0, "%s: %s", rows[k].kind, r.err);
        ck_assert_msg(strstr(r.err, "4 rank files, 4 nodes -> one SPMD program on mesh rank:4"), "%s", r.err);
        strata_cli_result_clear(&r);
        char *ops = ops_text(out), *want = g_strdup_printf("strata-trace 1\noption mesh=rank:4\n%s", rows[k].ops);
        ck_assert_str_eq(ops, want);
        /* exported again, comm_size is what ASTRA-sim read: 1 MiB for every kind */
        char *prefix = g_build_filename(dir, "again", NULL), *again = g_strdup_printf("%s.0.et", prefix);
        r = strata_test_cli("export", "chakra", "--trace", out, "-o", prefix, NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        strata_cli_result_clear(&r);
        gsize len = 0, pos = 0;
        guint8 *b = (guint8 *)read_all(again, &len);
        int64_t size = -1;
        pos += varint(b, len, &pos); /* the GlobalMetadata */
        while (pos < len) {
            uint64_t l = varint(b, len, &pos);
            ChakraProtoMsg__Node *n = chakra_proto_msg__node__unpack(NULL, l, b + pos);
            pos += l;
            for (size_t a = 0; n && a < n->n_attr; a++)
                if (strcmp(n->attr[a]->name, "comm_size") == 0)
                    size = n->attr[a]->int64_val;
            if (n)
                chakra_proto_msg__node__free_unpacked(n, NULL);
        }
        ck_assert_msg(size == 1 << 20, "%s: comm_size %" G_GINT64_FORMAT, rows[k].kind, size);
        for (int d = 0; d < 4; d++) {
            char *p = g_strdup_printf("%s.%d.et", prefix, d);
            g_unlink(p);
            g_free(p);
        }
        g_unlink(out);
        remove_tree(folder);
        g_free(b);
        g_free(again);
        g_free(prefix);
        g_free(want);
        g_free(ops);
        g_free(out);
        g_free(folder);
    }
    remove_tree(dir);
    g_free(dir);
}
END_TEST

/* A folder as ASTRA-sim's examples ship a workload: without rank files,
 * with a gap, or with two workloads, it is an error naming the folder and
 * what was expected (exit 2). */
START_TEST(rank_folder_refused)
{
    char *dir = strata_test_temp_dir();
    char *empty = g_build_filename(dir, "empty", NULL);
    g_mkdir(empty, 0755);
    strata_cli_result r = strata_test_cli("import", "chakra", empty, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, empty) && strstr(r.err, "a folder without rank files: expected the files NAME.0.et"),
                  "%s", r.err);
    strata_cli_result_clear(&r);
    /* ranks 0 and 2: 1 is missing */
    char *gap = g_build_filename(dir, "gap", NULL);
    write_microbenchmark(gap, "ar", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE, 3);
    char *one = g_strdup_printf("%s/ar.1.et", gap);
    g_unlink(one);
    r = strata_test_cli("import", "chakra", gap, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, gap) && strstr(r.err, "ar.1.et: no such file") &&
                      strstr(r.err, "expected every rank file from"),
                  "%s", r.err);
    strata_cli_result_clear(&r);
    /* two workloads in one folder */
    write_microbenchmark(gap, "ag", CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER, 2);
    g_file_set_contents(one, "", 0, NULL);
    r = strata_test_cli("import", "chakra", gap, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "the rank files of 2 workloads (ag.0.et, ar.0.et, ...): expected one"), "%s", r.err);
    strata_cli_result_clear(&r);
    remove_tree(gap);
    remove_tree(empty);
    remove_tree(dir);
    g_free(one);
    g_free(gap);
    g_free(empty);
    g_free(dir);
}
END_TEST

START_TEST(differing_ranks_one_trace_each)
{
    /* rank 0 computes 5 us, rank 1 7 us: the graphs differ at op 1 (after the option), so each rank's graph
     * is its own trace, x.0.trace and x.1.trace, and x.trace is not written */
    char *dir = strata_test_temp_dir();
    for (int r = 0; r < 2; r++) {
        GByteArray *b = g_byte_array_new();
        ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
        append_msg(b, &meta.base);
        append_node(b, 1, "step", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, r ? 7 : 5, NULL, 0, NULL, 0);
        char *path = g_strdup_printf("%s/w.%d.et", dir, r);
        ck_assert(g_file_set_contents(path, (const char *)b->data, (gssize)b->len, NULL));
        g_byte_array_free(b, TRUE);
        g_free(path);
    }
    char *prefix = g_build_filename(dir, "w", NULL);
    strata_cli_result r;
    char *out = import_to(prefix, dir, "x.trace", NULL, &r);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "the ranks' graphs differ (rank 1's from rank 0's at op 1): wrote one trace per rank"),
                  "%s", r.err);
    strata_cli_result_clear(&r);
    ck_assert(!g_file_test(out, G_FILE_TEST_EXISTS));
    for (int k = 0; k < 2; k++) {
        char *path = g_strdup_printf("%s/x.%d.trace", dir, k);
        char *ops = ops_text(path);
        char *want = g_strdup_printf("strata-trace 1\noption mesh=rank:2\ncompute step time=%dus stream=comp\n",
                                     k ? 7 : 5);
        ck_assert_str_eq(ops, want);
        g_free(want);
        g_free(ops);
        g_free(path);
    }
    /* all or none: a rank's file that cannot be written leaves none of
     * them (before: y.0.trace stayed), and the message names it */
    char *y1 = g_strdup_printf("%s/y.1.trace", dir);
    g_mkdir(y1, 0755);
    char *y = g_build_filename(dir, "y.trace", NULL), *y0 = g_strdup_printf("%s/y.0.trace", dir);
    r = strata_test_cli("import", "chakra", prefix, "-o", y, NULL);
    ck_assert_msg(r.status == 2 && strstr(r.err, "y.1.trace"), "%d %s", r.status, r.err);
    strata_cli_result_clear(&r);
    ck_assert(!g_file_test(y0, G_FILE_TEST_EXISTS));
    g_rmdir(y1);
    g_free(y0);
    g_free(y1);
    g_free(y);
    /* to standard output: one file cannot hold them */
    r = strata_test_cli("import", "chakra", prefix, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "expected -o OUT.trace"), "%s", r.err);
    strata_cli_result_clear(&r);
    remove_tree(dir);
    g_free(out);
    g_free(prefix);
    g_free(dir);
}
END_TEST

static void expect_bad(const char *dir, const char *name, const guint8 *data, gsize len, const char *want)
{
    char *path = g_build_filename(dir, name, NULL);
    ck_assert(g_file_set_contents(path, (const char *)data, (gssize)len, NULL));
    strata_cli_result r;
    char *out = import_to(path, dir, "never.trace", NULL, &r);
    ck_assert_msg(r.status == 2, "%s: status %d: %s", name, r.status, r.err);
    ck_assert_msg(strstr(r.err, path) && strstr(r.err, want), "%s: expected '%s' in: %s", name, want, r.err);
    ck_assert(!g_file_test(out, G_FILE_TEST_EXISTS));
    strata_cli_result_clear(&r);
    g_unlink(path);
    g_free(out);
    g_free(path);
}

/* Issue 46's classes in Chakra input, a row each: nodes without work each
 * depending on the two before (their resolved lists doubled at every node:
 * exponential; now each dependency once), a duration past the sane range
 * of time= (written as a trace that check refuses; now refused at its node), a gap in
 * the rank files (the workload shrank to the ranks before it), and a FIFO
 * (read as "no such file"). */
START_TEST(issue46_rows)
{
    char *dir = strata_test_temp_dir();
    /* row 1: 0 COMP, 1..60 METADATA on the two before, 61 COMP on 60 */
    GByteArray *b = g_byte_array_new();
    ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    append_msg(b, &meta.base);
    append_node(b, 0, "first", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, 5, NULL, 0, NULL, 0);
    for (uint64_t i = 1; i <= 60; i++) {
        const uint64_t deps[] = {i - 1, i >= 2 ? i - 2 : 0};
        append_node(b, i, "meta", CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE, 0, deps, i >= 2 ? 2 : 1, NULL, 0);
    }
    const uint64_t last[] = {60};
    append_node(b, 61, "last", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, 7, last, 1, NULL, 0);
    char *fan = g_build_filename(dir, "fan.et", NULL);
    strata_cli_result r;
    char *out = import_bytes(b, fan, dir, "fan.trace", &r);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    char *ops = ops_text(out);
    ck_assert_str_eq(ops, "strata-trace 1\noption mesh=rank:1\ncompute first time=5us stream=comp\n"
                          "compute last time=7us stream=comp\n");
    g_free(ops);
    g_unlink(out);
    g_free(out);
    /* row 2: 2e12 us = 2e6 s, past time='s 1e6 s */
    b = g_byte_array_new();
    append_msg(b, &meta.base);
    append_node(b, 1, "long", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, 2000000000000u, NULL, 0, NULL, 0);
    expect_bad(dir, "long.et", b->data, b->len,
               "node 1 'long': duration_micros 2000000000000: expected at most 10^12 us");
    g_byte_array_free(b, TRUE);
    /* row 3: w.0.et and w.2.et, no w.1.et */
    b = g_byte_array_new();
    append_msg(b, &meta.base);
    append_node(b, 1, "step", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, 5, NULL, 0, NULL, 0);
    char *w0 = g_build_filename(dir, "w.0.et", NULL), *w2 = g_build_filename(dir, "w.2.et", NULL);
    ck_assert(g_file_set_contents(w0, (const char *)b->data, (gssize)b->len, NULL));
    ck_assert(g_file_set_contents(w2, (const char *)b->data, (gssize)b->len, NULL));
    char *prefix = g_build_filename(dir, "w", NULL);
    out = import_to(prefix, dir, "w.trace", NULL, &r);
    ck_assert_msg(r.status == 2 && strstr(r.err, "w.1.et: no such file, but") && strstr(r.err, "w.2.et exists"), "%s",
                  r.err);
    ck_assert(!g_file_test(out, G_FILE_TEST_EXISTS));
    strata_cli_result_clear(&r);
    g_free(out);
    /* row 4: the same file through a FIFO */
    char *fifo = g_build_filename(dir, "p.et", NULL);
    ck_assert(mkfifo(fifo, 0600) == 0);
    char *script = g_strdup_printf("cat '%s' > '%s' &", w0, fifo);
    ck_assert(system(script) == 0);
    out = import_to(fifo, dir, "p.trace", NULL, &r);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    g_unlink(out);
    g_free(out);
    g_unlink(fifo);
    g_free(fifo);
    g_free(script);
    g_byte_array_free(b, TRUE);
    g_unlink(w0);
    g_unlink(w2);
    g_free(w0);
    g_free(w2);
    g_free(prefix);
    g_unlink(fan);
    g_free(fan);
    remove_tree(dir);
    g_free(dir);
}
END_TEST

/* Issue 46: a strata export whose node carries a 2 MiB op (strata.op) was
 * parsed, then refused by the trace writer with a 2 MB message quoting the
 * op, naming neither the file nor the node. It is now refused at the node:
 * the file, the node, the limit (a trace line of at most 1 MiB, what
 * strata's reader takes) and the op's size, in a short message. The same
 * op text of a few bytes imports. */
START_TEST(huge_embedded_op_named_at_its_node)
{
    char *dir = strata_test_temp_dir();
    const size_t big = 2u << 20;
    for (int row = 0; row < 2; row++) {
        GString *op = g_string_new("compute ");
        for (size_t i = 0; i < (row ? 4 : big); i++)
            g_string_append_c(op, 'x');
        g_string_append(op, " time=1us");
        ChakraProtoMsg__AttributeProto text = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT, index = text;
        text.name = (char *)"strata.op";
        text.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
        text.string_val = op->str;
        index.name = (char *)"strata.index";
        index.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL;
        index.uint64_val = 0;
        ChakraProtoMsg__AttributeProto *attrs[] = {&text, &index};
        GByteArray *b = g_byte_array_new();
        ChakraProtoMsg__GlobalMetadata meta = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
        append_msg(b, &meta.base);
        append_node(b, 9, "op", CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, 1, NULL, 0, attrs, 2);
        char *et = g_build_filename(dir, row ? "small.et" : "huge.et", NULL);
        strata_cli_result r;
        char *out = import_bytes(b, et, dir, "o.trace", &r);
        if (row == 0) {
            char *want = g_strdup_printf("%s: node 9 'op': strata.op: expected an op of at most 1048576 bytes (a "
                                         "trace line strata's reader takes), got %zu",
                                         et, big + strlen("compute  time=1us"));
            ck_assert_msg(r.status == 2 && strstr(r.err, want) && strlen(r.err) < 1024, "%.2000s", r.err);
            ck_assert(!g_file_test(out, G_FILE_TEST_EXISTS));
            g_free(want);
        } else {
            ck_assert_msg(r.status == 0, "%s", r.err);
            char *ops = ops_text(out);
            ck_assert_str_eq(ops, "strata-trace 1\ncompute xxxx time=1us\n");
            g_free(ops);
            g_unlink(out);
        }
        strata_cli_result_clear(&r);
        g_unlink(et);
        g_free(et);
        g_free(out);
        g_string_free(op, TRUE);
    }
    remove_tree(dir);
    g_free(dir);
}
END_TEST

START_TEST(bad_input_names_file_and_node)
{
    char *dir = strata_test_temp_dir();
    /* a length varint cut by the end of the file */
    const guint8 trunc[] = {0x00, 0x80};
    expect_bad(dir, "trunc.et", trunc, sizeof trunc, "message 1 at byte 1 (before the first node): truncated "
                                                     "length varint");
    /* a length past the end, after a good node */
    GByteArray *b = file_with_node(CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, NULL);
    const guint8 past[] = {0x20, 0x08};
    g_byte_array_append(b, past, sizeof past);
    expect_bad(dir, "past.et", b->data, b->len, "after node 7 'bad'): its length 32 runs past the end");
    g_byte_array_free(b, TRUE);
    /* field 1 (id, a varint) given as length-delimited bytes: wrong wire type */
    const guint8 wire[] = {0x00, 0x03, 0x0a, 0x01, 'x'};
    expect_bad(dir, "wire.et", wire, sizeof wire, "message 1 at byte 1 (before the first node): not a Chakra Node");
    /* node types strata does not import: a send, and one no schema knows */
    b = file_with_node(CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE, NULL);
    expect_bad(dir, "send.et", b->data, b->len, "node 7 'bad': node type 5 is not imported");
    g_byte_array_free(b, TRUE);
    b = file_with_node(42, NULL);
    expect_bad(dir, "type42.et", b->data, b->len, "node 7 'bad': node type 42 is not imported");
    g_byte_array_free(b, TRUE);
    /* comm_type as a string: the wrong attribute type */
    ChakraProtoMsg__AttributeProto a = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
    a.name = (char *)"comm_type";
    a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
    a.string_val = (char *)"ALL_REDUCE";
    b = file_with_node(CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, &a);
    expect_bad(dir, "attr.et", b->data, b->len, "node 7 'bad': attribute 'comm_type': expected a whole number");
    g_byte_array_free(b, TRUE);
    /* a collective ASTRA-sim does not run either */
    a.value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
    a.int64_val = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BARRIER;
    b = file_with_node(CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE, &a);
    expect_bad(dir, "barrier.et", b->data, b->len, "node 7 'bad'");
    g_byte_array_free(b, TRUE);
    /* no file and no PREFIX.0.et */
    char *none = g_build_filename(dir, "nothing", NULL);
    strata_cli_result r = strata_test_cli("import", "chakra", none, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "nothing.0.et"), "%s", r.err);
    strata_cli_result_clear(&r);
    g_free(none);
    remove_tree(dir);
    g_free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("chakra");
    TCase *tc = tcase_create("chakra");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, astra_sim_all_reduce);
    tcase_add_test(tc, astra_sim_all_to_all);
    tcase_add_test(tc, pytorch_converted_trace);
    tcase_add_test(tc, round_trip_examples);
    tcase_add_test(tc, round_trip_spmd);
    tcase_add_test(tc, export_is_astra_sim_input);
    tcase_add_test(tc, graph_written_to_the_format);
    tcase_add_test(tc, astra_sim_comm_size_every_kind);
    tcase_add_test(tc, rank_folder_refused);
    tcase_add_test(tc, differing_ranks_one_trace_each);
    tcase_add_test(tc, issue46_rows);
    tcase_add_test(tc, bad_input_names_file_and_node);
    tcase_add_test(tc, huge_embedded_op_named_at_its_node);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
