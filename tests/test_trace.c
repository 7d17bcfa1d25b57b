/*
 * test_trace.c: the trace reader (syntax, errors with line and column,
 * streaming, rewind, stdin) and the writer (canonical text, round trips over
 * every op kind and attribute and over the example traces).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include "testutil.h"
#include "core/error.h"
#include "core/units.h"
#include "trace/line.h"
#include "trace/reader.h"
#include "trace/writer.h"

/* Parse one line; the test fails on error. */
static strata_line_scratch *parse_ok(const char *text, strata_op *op)
{
    GError *err = NULL;
    strata_line_scratch *s = strata_parse_op_line(text, "t.trace", 5, op, &err);
    if (!s)
        ck_abort_msg("'%s' failed: %s", text, err->message);
    return s;
}

/* Parse one line that must fail; returns the message (g_free). */
static char *parse_err(const char *text)
{
    strata_op op;
    GError *err = NULL;
    strata_line_scratch *s = strata_parse_op_line(text, "t.trace", 5, &op, &err);
    if (s) {
        strata_line_scratch_free(s);
        ck_abort_msg("'%s' parsed but should not", text);
    }
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    char *msg = g_strdup(err->message);
    g_error_free(err);
    return msg;
}

#define ASSERT_ERR(text, needle)                                                                   \
    do {                                                                                           \
        char *m_ = parse_err(text);                                                                \
        if (!strstr(m_, needle))                                                                   \
            ck_abort_msg("'%s': message '%s' lacks '%s'", text, m_, needle);                       \
        g_free(m_);                                                                                \
    } while (0)

START_TEST(parse_alloc_every_attribute)
{
    strata_op op;
    strata_line_scratch *s = parse_ok(
        "alloc w 1.5GiB host stream=s1 tag=param dtype=bf16 shape=8x128x4 addr=0x7f00 at=3us note=fw", &op);
    ck_assert_int_eq(op.kind, STRATA_OP_ALLOC);
    ck_assert_uint_eq(op.line, 5);
    ck_assert_str_eq(op.name, "w");
    ck_assert_uint_eq(op.size, 1610612736ULL); /* 1.5 * 2^30 */
    ck_assert_str_eq(op.memory, "host");
    ck_assert_str_eq(op.stream, "s1");
    ck_assert_int_eq(op.tag, STRATA_TAG_PARAM);
    ck_assert_int_eq(op.dtype, STRATA_DTYPE_BF16);
    ck_assert_uint_eq(op.n_dims, 3);
    ck_assert_uint_eq(op.shape[0], 8);
    ck_assert_uint_eq(op.shape[1], 128);
    ck_assert_uint_eq(op.shape[2], 4);
    ck_assert(op.has_addr);
    ck_assert_uint_eq(op.addr, 0x7f00);
    ck_assert(op.has_at);
    ck_assert_double_eq(op.at_s, 3e-6);
    ck_assert_str_eq(op.note, "fw");
    strata_line_scratch_free(s);

    s = parse_ok("  alloc\tb 4096   # a comment with alloc x 1", &op);
    ck_assert_str_eq(op.name, "b");
    ck_assert_uint_eq(op.size, 4096);
    ck_assert_ptr_null(op.memory);
    ck_assert_str_eq(op.stream, STRATA_DEFAULT_STREAM);
    ck_assert_int_eq(op.tag, STRATA_TAG_NONE);
    ck_assert_uint_eq(op.n_dims, 0);
    ck_assert(!op.has_addr && !op.has_at);
    ck_assert_ptr_null(op.note);
    strata_line_scratch_free(s);

    /* An attribute right after the size is not taken for a memory. */
    s = parse_ok("alloc b 64KiB tag=temp", &op);
    ck_assert_ptr_null(op.memory);
    ck_assert_uint_eq(op.size, 65536);
    ck_assert_int_eq(op.tag, STRATA_TAG_TEMP);
    strata_line_scratch_free(s);
}
END_TEST

START_TEST(parse_other_kinds)
{
    strata_op op;
    strata_line_scratch *s = parse_ok("copy dst src bytes=64KB stream=h2d", &op);
    ck_assert_int_eq(op.kind, STRATA_OP_COPY);
    ck_assert_str_eq(op.name, "dst");
    ck_assert_str_eq(op.src, "src");
    ck_assert(op.has_bytes);
    ck_assert_uint_eq(op.bytes, 64000);
    ck_assert_str_eq(op.stream, "h2d");
    strata_line_scratch_free(s);

    s = parse_ok("copy dst src", &op);
    ck_assert(!op.has_bytes);
    ck_assert_uint_eq(op.bytes, 0);
    strata_line_scratch_free(s);

    s = parse_ok("compute mm flops=4.5GFLOP in=a,b,c out=d,e donate=a time=2ms unit=mxu", &op);
    ck_assert_int_eq(op.kind, STRATA_OP_COMPUTE);
    ck_assert_str_eq(op.name, "mm");
    ck_assert(op.has_flops);
    ck_assert_double_eq(op.flops, 4.5e9);
    ck_assert_uint_eq(op.n_ins, 3);
    ck_assert_str_eq(op.ins[0], "a");
    ck_assert_str_eq(op.ins[2], "c");
    ck_assert_uint_eq(op.n_outs, 2);
    ck_assert_str_eq(op.outs[1], "e");
    ck_assert_uint_eq(op.n_donates, 1);
    ck_assert_str_eq(op.donates[0], "a");
    ck_assert(op.has_time);
    ck_assert_double_eq(op.time_s, 2e-3);
    ck_assert_str_eq(op.unit, "mxu");
    strata_line_scratch_free(s);

    s = parse_ok("compute k flops=2e9", &op);
    ck_assert_double_eq(op.flops, 2e9);
    ck_assert_uint_eq(op.n_ins, 0);
    ck_assert_ptr_null(op.ins);
    strata_line_scratch_free(s);
    s = parse_ok("compute k flops=1000000", &op);
    ck_assert_double_eq(op.flops, 1e6);
    strata_line_scratch_free(s);

    s = parse_ok("record ev stream=a", &op);
    ck_assert_int_eq(op.kind, STRATA_OP_RECORD);
    ck_assert_str_eq(op.name, "ev");
    strata_line_scratch_free(s);
    s = parse_ok("wait ev", &op);
    ck_assert_int_eq(op.kind, STRATA_OP_WAIT);
    strata_line_scratch_free(s);
    s = parse_ok("free ev", &op);
    ck_assert_int_eq(op.kind, STRATA_OP_FREE);
    strata_line_scratch_free(s);

    s = parse_ok("release", &op);
    ck_assert_int_eq(op.kind, STRATA_OP_RELEASE);
    ck_assert_ptr_null(op.memory);
    ck_assert_ptr_null(op.name);
    strata_line_scratch_free(s);
    s = parse_ok("release hbm stream=x", &op);
    ck_assert_str_eq(op.memory, "hbm");
    ck_assert_str_eq(op.stream, "x");
    strata_line_scratch_free(s);

    s = parse_ok("option allocator.max_split_size=200MiB", &op);
    ck_assert_int_eq(op.kind, STRATA_OP_OPTION);
    ck_assert_str_eq(op.name, "allocator.max_split_size");
    ck_assert_str_eq(op.value, "200MiB");
    strata_line_scratch_free(s);
    s = parse_ok("option allocator.conf=a:1,b=2", &op);
    ck_assert_str_eq(op.name, "allocator.conf");
    ck_assert_str_eq(op.value, "a:1,b=2");
    strata_line_scratch_free(s);
}
END_TEST

START_TEST(errors_name_line_column_and_expectation)
{
    ASSERT_ERR("malloc x 4096", "t.trace:5:1: unknown op 'malloc': expected one of alloc, free, copy, compute, "
                                "record, wait, release, option, all-reduce, all-gather, reduce-scatter, all-to-all, "
                                "collective-permute");
    ASSERT_ERR("alloc x 12XB", "t.trace:5:9: expected a size such as 4096, 64KiB or 1.5GiB, got '12XB'");
    ASSERT_ERR("alloc x 0", "t.trace:5:9: expected a size above 0, got '0'");
    ASSERT_ERR("alloc x", "t.trace:5:8: expected a size");
    ASSERT_ERR("alloc", "t.trace:5:6: expected a buffer name after 'alloc', got end of line");
    ASSERT_ERR("alloc x 4096 hbm colour=red",
               "t.trace:5:18: unknown attribute 'colour' for alloc: expected one of tag=, dtype=, shape=, "
               "addr=, device=, stream=, at=, note=");
    ASSERT_ERR("free x bytes=4",
               "t.trace:5:8: unknown attribute 'bytes' for free: expected one of device=, stream=, at=, note=");
    ASSERT_ERR("alloc x 4096 stream=a stream=b", "t.trace:5:23: duplicate attribute 'stream='");
    ASSERT_ERR("alloc x 4096 tag=weights",
               "t.trace:5:18: expected a tag (one of param, input, output, activation, optstate, grad, temp), "
               "got 'weights'");
    ASSERT_ERR("alloc x 4096 dtype=float32", "got 'float32'");
    ASSERT_ERR("alloc x 4096 dtype=float32", "bf16, f16, f8, int64, int32");
    ASSERT_ERR("alloc x 4096 shape=8x0", "t.trace:5:20: expected a shape such as 8x128");
    ASSERT_ERR("alloc x 4096 shape=8xx2", "got '8xx2'");
    ASSERT_ERR("alloc x 4096 shape=1x1x1x1x1x1x1x1x1", "at most 8");
    ASSERT_ERR("alloc x 4096 shape=-3", "expected a shape");
    ASSERT_ERR("alloc x 4096 addr=zz", "expected an address");
    ASSERT_ERR("alloc x 4096 hbm extra", "t.trace:5:18: expected an attribute KEY=VALUE");
    ASSERT_ERR("alloc x 4096 stream=", "t.trace:5:21: expected a value after 'stream='");
    ASSERT_ERR("alloc a=b 4096", "t.trace:5:7: expected a buffer name");
    ASSERT_ERR("copy a", "t.trace:5:7: expected a source buffer after the destination, got end of line");
    ASSERT_ERR("copy a b bytes=lots", "expected a size such as 4096, 64KiB or 1.5GiB, got 'lots'");
    ASSERT_ERR("compute k flops=many", "t.trace:5:17: expected an amount of work");
    ASSERT_ERR("compute k time=5parsecs", "expected a time such as 250ns");
    ASSERT_ERR("compute k in=a,,b", "expected a buffer name (a list is A,B,C), got ''");
    ASSERT_ERR("compute k in=a,", "expected a buffer name");
    ASSERT_ERR("compute", "expected a label after 'compute'");
    ASSERT_ERR("wait", "expected an event name after 'wait'");
    ASSERT_ERR("record e tag=param", "unknown attribute 'tag' for record");
    ASSERT_ERR("option", "expected KEY=VALUE after 'option'");
    ASSERT_ERR("option key", "expected KEY=VALUE after 'option', got 'key'");
    ASSERT_ERR("option =v", "expected KEY=VALUE");
    ASSERT_ERR("option k=v stream=x", "unknown attribute 'stream': option takes no attributes");
    ASSERT_ERR("free x y", "expected an attribute KEY=VALUE (device=, stream=, at=, note=), got 'y'");
    ASSERT_ERR("all-reduce g", "t.trace:5:13: expected axis=AXIS (a mesh axis of option mesh=), got end of line");
    ASSERT_ERR("all-reduce", "t.trace:5:11: expected a buffer name after 'all-reduce'");
    ASSERT_ERR("all-gather o", "t.trace:5:13: expected a source buffer after the destination");
    ASSERT_ERR("all-gather", "expected a destination buffer after 'all-gather'");
    ASSERT_ERR("all-reduce g axis=Data", "t.trace:5:19: expected mesh axis names such as data or data,model");
    ASSERT_ERR("all-reduce g axis=data,", "got 'data,'");
    /* the syntax of a name (which names exist is the algorithms' table's: test_coll_tables.c) */
    ASSERT_ERR("all-reduce g axis=data algo=Fast",
               "t.trace:5:29: expected an algorithm name such as ring or bidir-ring ([a-z][a-z0-9-]*), got 'Fast'");
    ASSERT_ERR("all-reduce g axis=data algo=ring_2", "got 'ring_2'");
    ASSERT_ERR("all-reduce g axis=data shift=1", "unknown attribute 'shift' for all-reduce");
    ASSERT_ERR("collective-permute o i axis=data", "expected shift=+1 or another non-zero shift");
    ASSERT_ERR("collective-permute o i axis=data shift=0", "expected a shift such as +1 or -1 (not 0), got '0'");
    ASSERT_ERR("collective-permute o i axis=data shift=+x", "expected a shift");
    ASSERT_ERR("alloc x 4096 device=-1", "t.trace:5:21: expected a device index such as 0 or 3, got '-1'");
    ASSERT_ERR("alloc x 4096 device=0x3", "expected a device index");
    ASSERT_ERR("", "expected an op, got an empty line");
}
END_TEST

static char *write_trace(const char *text) { return strata_test_write_temp("trace-XXXXXX.trace", text); }

static char *open_err(const char *text)
{
    char *path = write_trace(text);
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    char *msg = NULL;
    if (src) {
        const strata_op *op;
        while (strata_source_next(src, &op, &err) == 1)
            ;
        strata_source_free(src);
    }
    ck_assert_ptr_nonnull(err);
    char *base = g_path_get_basename(path);
    ck_assert_ptr_nonnull(strstr(err->message, base));
    msg = g_strdup(strstr(err->message, base) + strlen(base));
    g_free(base);
    g_error_free(err);
    unlink(path);
    g_free(path);
    return msg;
}

START_TEST(version_line_errors)
{
    char *m = open_err("");
    ck_assert_str_eq(m, ":1:1: expected 'strata-trace 1' as the first line, got end of file");
    g_free(m);
    m = open_err("strata-trace 2\nalloc x 1\n");
    ck_assert_str_eq(m, ":1:14: expected version 1 (the only version this strata reads), got '2'");
    g_free(m);
    m = open_err("# header\n\nalloc x 4096\n");
    ck_assert_str_eq(m, ":3:1: expected 'strata-trace 1' as the first line, got 'alloc'");
    g_free(m);
    m = open_err("strata-trace\n");
    ck_assert_str_eq(m, ":1:13: expected a version number after 'strata-trace', got end of line");
    g_free(m);
    m = open_err("strata-trace 1 extra\n");
    ck_assert_str_eq(m, ":1:16: expected end of line after 'strata-trace 1', got 'extra'");
    g_free(m);
    /* The line number counts comments and blank lines. */
    m = open_err("strata-trace 1\n# c\n\nalloc x 4096\nfrob\n");
    ck_assert_str_eq(m, ":5:1: unknown op 'frob': expected one of alloc, free, copy, compute, record, wait, release, "
                        "option, all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute");
    g_free(m);
    m = open_err("strata-trace 1\nalloc x\n");
    ck_assert_str_eq(m, ":2:8: expected a size such as 4096, 64KiB or 1.5GiB after the buffer name, got end of line");
    g_free(m);
}
END_TEST

START_TEST(nul_byte_is_an_error)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "strata-test-nul.trace", NULL);
    static const char data[] = "strata-trace 1\nalloc x 4096\0 extra\n";
    ck_assert(g_file_set_contents(path, data, sizeof data - 1, NULL));
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_ptr_nonnull(src);
    const strata_op *op;
    ck_assert_int_eq(strata_source_next(src, &op, &err), -1);
    ck_assert_ptr_nonnull(strstr(err->message, "strata-test-nul.trace:2:13: expected text, got a NUL byte"));
    g_error_free(err);
    strata_source_free(src);
    unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}
END_TEST

START_TEST(missing_file_is_an_io_error)
{
    GError *err = NULL;
    ck_assert_ptr_null(strata_trace_open("/nonexistent/x.trace", &err));
    ck_assert_int_eq(err->code, STRATA_ERROR_IO);
    ck_assert_ptr_nonnull(strstr(err->message, "/nonexistent/x.trace"));
    g_clear_error(&err);
    ck_assert_ptr_null(strata_trace_open("/tmp", &err));
    ck_assert_ptr_nonnull(strstr(err->message, "directory"));
    g_error_free(err);
}
END_TEST

static const char *const small_trace = "strata-trace 1\r\n"
                                       "# comment\n"
                                       "\n"
                                       "alloc a 4KiB\r\n"
                                       "   # indented comment\n"
                                       "copy a a bytes=1KiB stream=s\n"
                                       "free a\n";

static void assert_small_trace(strata_source *src)
{
    GError *err = NULL;
    const strata_op *op;
    ck_assert_int_eq(strata_source_next(src, &op, &err), 1);
    ck_assert_int_eq(op->kind, STRATA_OP_ALLOC);
    ck_assert_uint_eq(op->line, 4);
    ck_assert_uint_eq(op->size, 4096);
    ck_assert_int_eq(strata_source_next(src, &op, &err), 1);
    ck_assert_int_eq(op->kind, STRATA_OP_COPY);
    ck_assert_uint_eq(op->line, 6);
    ck_assert_str_eq(op->stream, "s");
    ck_assert_int_eq(strata_source_next(src, &op, &err), 1);
    ck_assert_int_eq(op->kind, STRATA_OP_FREE);
    ck_assert_uint_eq(op->line, 7);
    ck_assert_int_eq(strata_source_next(src, &op, &err), 0);
    ck_assert_ptr_null(err);
}

START_TEST(reads_streams_and_rewinds)
{
    char *path = write_trace(small_trace);
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_ptr_nonnull(src);
    ck_assert_str_eq(strata_source_origin(src), path);
    assert_small_trace(src);
    ck_assert(strata_source_rewind(src, &err));
    assert_small_trace(src);
    strata_source_free(src);
    unlink(path);
    g_free(path);
}
END_TEST

START_TEST(reads_stdin_and_rewinds)
{
    char *path = write_trace(small_trace);
    ck_assert_ptr_nonnull(freopen(path, "r", stdin)); /* fork mode: stdin is this test's own */
    GError *err = NULL;
    strata_source *src = strata_trace_open("-", &err);
    ck_assert_ptr_nonnull(src);
    ck_assert_str_eq(strata_source_origin(src), "<stdin>");
    assert_small_trace(src);
    ck_assert(strata_source_rewind(src, &err));
    assert_small_trace(src);
    strata_source_free(src);
    unlink(path);
    g_free(path);
}
END_TEST

/* Every op kind and attribute, in the forms the writer must round-trip. */
static const char *const every_attr_lines[] = {
    "alloc w 1.5GiB host stream=s1 tag=param dtype=bf16 shape=8x128x4 addr=0x7f00 at=3us note=fw",
    "alloc b 4097",
    "alloc c 64KB hbm tag=grad dtype=int4 shape=3",
    "alloc d 1000000 tag=optstate dtype=f8",
    "free w stream=s1 at=0.5s note=x",
    "copy d c",
    "copy d c bytes=3 stream=h2d at=17ns",
    "compute mm flops=68.7GFLOP in=a,b,c out=d,e donate=a time=2ms unit=mxu note=layer.3/attn",
    "compute k flops=123456789.123",
    "compute r flops=8 in=a,b out=b bytes=3KiB unit=u",
    "compute k flops=0.1 time=0.1s",
    "compute k time=1.23456789e-7s",
    "compute k time=0",
    "record ev stream=a at=1ms",
    "wait ev",
    "release",
    "release vmem stream=q note=empty_cache",
    "option allocator.max_split_size=200MiB",
    "option k=a,b=c:d",
    "option mesh=data:4,model:2",
    "all-reduce g axis=data",
    "all-reduce g axis=data,model algo=bidir-ring stream=c device=7 at=1us note=grads",
    "all-gather o i axis=model algo=ring",
    "reduce-scatter o i axis=data algo=tree",
    "all-to-all o i axis=data algo=direct",
    "collective-permute o i shift=-1 axis=data algo=torus",
    "collective-permute o i shift=+3 axis=data",
    "alloc b 4KiB hbm@3 device=3",
    "compute k flops=1 device=0",
};

static void assert_round_trips(const strata_op *op)
{
    char *text = strata_op_to_text(op);
    strata_op back;
    GError *err = NULL;
    strata_line_scratch *s = strata_parse_op_line(text, "back", 1, &back, &err);
    if (!s)
        ck_abort_msg("writer text '%s' does not parse: %s", text, err->message);
    if (!strata_op_equal(op, &back))
        ck_abort_msg("'%s' reads back different", text);
    /* Canonical: writing it again gives the same text. */
    char *again = strata_op_to_text(&back);
    ck_assert_str_eq(text, again);
    g_free(again);
    strata_line_scratch_free(s);
    g_free(text);
}

START_TEST(writer_round_trips_every_attribute)
{
    for (size_t i = 0; i < G_N_ELEMENTS(every_attr_lines); i++) {
        strata_op op;
        strata_line_scratch *s = parse_ok(every_attr_lines[i], &op);
        assert_round_trips(&op);
        strata_line_scratch_free(s);
    }
}
END_TEST

START_TEST(writer_canonical_text)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"alloc  w   1073741824   stream=main  tag=param", "alloc w 1GiB tag=param"},
        {"alloc w 1.5GiB host", "alloc w 1536MiB host"},
        {"alloc w 4096 addr=4096", "alloc w 4KiB addr=0x1000"},
        {"copy a b bytes=65536 stream=x", "copy a b bytes=64KiB stream=x"},
        {"compute c flops=2e9 time=250ns", "compute c flops=2000000000 time=250ns"},
        {"release  # all", "release"},
        {"collective-permute o i axis=d shift=1 stream=s device=2", "collective-permute o i shift=+1 axis=d device=2 stream=s"},
        {"all-reduce g algo=ring axis=data", "all-reduce g axis=data algo=ring"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        strata_op op;
        strata_line_scratch *s = parse_ok(cases[i].in, &op);
        char *text = strata_op_to_text(&op);
        ck_assert_str_eq(text, cases[i].out);
        g_free(text);
        strata_line_scratch_free(s);
    }
}
END_TEST

START_TEST(writer_refuses_unreadable_names)
{
    strata_op op = {.kind = STRATA_OP_ALLOC, .stream = "main", .name = "has space", .size = 1};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    strata_trace_writer *w = strata_trace_writer_new(f, "hello\nworld");
    GError *err = NULL;
    ck_assert(!strata_trace_writer_write(w, &op, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "'has space'"));
    g_clear_error(&err);
    op.name = "a=b";
    ck_assert(!strata_trace_writer_write(w, &op, &err));
    g_clear_error(&err);
    op.name = "ok";
    op.stream = "s#1";
    ck_assert(!strata_trace_writer_write(w, &op, &err));
    g_clear_error(&err);
    op.stream = "main";
    ck_assert(strata_trace_writer_write(w, &op, &err));
    strata_trace_writer_free(w);
    fclose(f);
    ck_assert_str_eq(buf, "strata-trace 1\n# hello\n# world\nalloc ok 1\n");
    free(buf);
}
END_TEST

/* Read a trace, write it to a file, read that back: equal ops, same count. */
static void assert_file_round_trips(const char *path)
{
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    if (!src)
        ck_abort_msg("%s: %s", path, err->message);
    char *dir = strata_test_temp_dir();
    char *out = g_build_filename(dir, "back.trace", NULL);
    int64_t n = strata_trace_write_source(src, out, "round trip", &err);
    if (n < 0)
        ck_abort_msg("%s: %s", path, err->message);
    ck_assert(strata_source_rewind(src, &err));
    strata_source *back = strata_trace_open(out, &err);
    ck_assert_ptr_nonnull(back);
    const strata_op *a, *b;
    int64_t count = 0;
    int ga, gb;
    while ((ga = strata_source_next(src, &a, &err)) == 1) {
        gb = strata_source_next(back, &b, &err);
        ck_assert_int_eq(gb, 1);
        if (!strata_op_equal(a, b))
            ck_abort_msg("%s:%" G_GUINT64_FORMAT " reads back different", path, a->line);
        count++;
    }
    ck_assert_int_eq(ga, 0);
    ck_assert_int_eq(strata_source_next(back, &b, &err), 0);
    ck_assert_int_eq(count, n);
    strata_source_free(src);
    strata_source_free(back);
    unlink(out);
    rmdir(dir);
    g_free(out);
    g_free(dir);
}

START_TEST(example_traces_round_trip)
{
    char *dir_path = strata_test_source_path("traces/examples");
    GDir *dir = g_dir_open(dir_path, 0, NULL);
    ck_assert_ptr_nonnull(dir);
    const char *name;
    int files = 0;
    while ((name = g_dir_read_name(dir))) {
        if (!g_str_has_suffix(name, ".trace"))
            continue;
        char *path = g_build_filename(dir_path, name, NULL);
        assert_file_round_trips(path);
        g_free(path);
        files++;
    }
    g_dir_close(dir);
    g_free(dir_path);
    ck_assert_int_ge(files, 1); /* at least format-tour.trace */
}
END_TEST

START_TEST(spmd_tour_round_trips_with_every_collective)
{
    char *path = strata_test_source_path("traces/spmd/collectives.trace");
    assert_file_round_trips(path);
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_ptr_nonnull(src);
    bool kinds[STRATA_OP__COUNT] = {0}, device = false, algo = false;
    const strata_op *op;
    while (strata_source_next(src, &op, &err) == 1) {
        kinds[op->kind] = true;
        device |= op->has_device;
        algo |= op->algo != NULL;
    }
    ck_assert_ptr_null(err);
    for (int k = 0; k < STRATA_OP__COUNT; k++)
        ck_assert_msg(kinds[k] || !strata_op_kind_is_collective((strata_op_kind)k), "collectives.trace lacks %s",
                      strata_op_kind_name((strata_op_kind)k));
    ck_assert(device && algo);
    strata_source_free(src);
    g_free(path);
}
END_TEST

START_TEST(format_tour_has_every_kind_and_attribute)
{
    char *path = strata_test_source_path("traces/examples/format-tour.trace");
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_ptr_nonnull(src);
    bool kinds[STRATA_OP__COUNT] = {0};
    bool tag = false, dtype = false, shape = false, addr = false, bytes = false, flops = false, time = false,
         ins = false, outs = false, donate = false, at = false, note = false, stream = false, memory = false;
    const strata_op *op;
    while (strata_source_next(src, &op, &err) == 1) {
        kinds[op->kind] = true;
        tag |= op->tag != STRATA_TAG_NONE;
        dtype |= op->dtype != STRATA_DTYPE_NONE;
        shape |= op->n_dims > 0;
        addr |= op->has_addr;
        bytes |= op->has_bytes;
        flops |= op->has_flops;
        time |= op->has_time;
        ins |= op->n_ins > 0;
        outs |= op->n_outs > 0;
        donate |= op->n_donates > 0;
        at |= op->has_at;
        note |= op->note != NULL;
        stream |= strcmp(op->stream, "main") != 0;
        memory |= op->kind == STRATA_OP_ALLOC && op->memory != NULL;
    }
    ck_assert_ptr_null(err);
    /* Collectives need a multi-device model: traces/spmd/collectives.trace has them. */
    for (int k = 0; k < STRATA_OP__COUNT; k++)
        ck_assert_msg(kinds[k] || strata_op_kind_is_collective((strata_op_kind)k), "format-tour lacks %s",
                      strata_op_kind_name((strata_op_kind)k));
    ck_assert(tag && dtype && shape && addr && bytes && flops && time && ins && outs && donate && at && note &&
              stream && memory);
    strata_source_free(src);
    g_free(path);
}
END_TEST

/* A long trace streams: the reader's memory does not grow with the number of lines. */
START_TEST(long_trace_streams)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "strata-test-long.trace", NULL);
    FILE *f = fopen(path, "w");
    fprintf(f, "strata-trace 1\n");
    for (int i = 0; i < 200000; i++)
        fprintf(f, "alloc b%d %dKiB stream=s%d tag=temp\nfree b%d stream=s%d\n", i, 1 + i % 64, i % 4, i, i % 4);
    fclose(f);
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    const strata_op *op;
    uint64_t n = 0, bytes = 0;
    while (strata_source_next(src, &op, &err) == 1) {
        n++;
        if (op->kind == STRATA_OP_ALLOC)
            bytes += op->size;
    }
    ck_assert_ptr_null(err);
    ck_assert_uint_eq(n, 400000);
    /* sum over i of (1 + i % 64) KiB: 3125 full cycles of 64 (2080 KiB each), then 0 */
    ck_assert_uint_eq(bytes, 3125ULL * 2080 * 1024);
    strata_source_free(src);
    unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}
END_TEST

/* The reader's fast path for sizes agrees with strata_parse_size() on every form. */
START_TEST(size_fast_path_agrees_with_units)
{
    static const char *const texts[] = {
        "1", "4096", "4096B", "007", "1KiB", "64KiB", "3MiB", "1GiB", "2TiB", "1.5GiB", "64KB", "2MB", "1e3",
        "18446744073709551615", "18446744073709551616", "16777215TiB", "16777216TiB", "17179869183GiB",
        "17179869184GiB", "99999999999999999999", "0x10", "KiB", "1KIB", "1kib", "1PiB", "-1", "+1",
        /* the one-pass forms' neighbours (line.c plain_size) */
        "1MiBx", "1Mi", "1M", "0KiB", "0B", "1Bi", "8XiB", "1TiB", "4096BB",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(texts); i++) {
        uint64_t want = 0;
        bool ok = strata_parse_size(texts[i], &want, NULL) && want > 0;
        char *line = g_strdup_printf("alloc a %s", texts[i]);
        strata_op op;
        strata_line_scratch *s = strata_parse_op_line(line, "t", 1, &op, NULL);
        ck_assert_msg((s != NULL) == ok, "'%s': reader %s, units %s", texts[i], s ? "accepts" : "rejects",
                      ok ? "accepts" : "rejects");
        if (s)
            ck_assert_msg(op.size == want, "'%s': reader %" G_GUINT64_FORMAT ", units %" G_GUINT64_FORMAT, texts[i],
                          op.size, want);
        strata_line_scratch_free(s);
        g_free(line);
    }
}
END_TEST

/* One scratch and one op over successive lines, as the reader parses them:
 * an attribute's fields do not outlive their line (line.c invariant 3; a
 * line clears only the attributes the line before had), and the first line
 * starts from the defaults (stream main). */
START_TEST(attributes_do_not_outlive_their_line)
{
    static const char *const lines[] = {
        "compute k flops=1e9 in=b,c out=d bytes=4KiB time=2us unit=vpu kernel=gemm dims=2x3x4 stream=dma",
        "compute k2",
        "alloc a 1MiB tag=param dtype=bf16 shape=8x128 addr=4096 device=3",
        "alloc e 2",
        "copy e a bytes=1 at=1s note=x",
        "wait ev",
    };
    strata_line_scratch *s = strata_line_scratch_new();
    strata_op op;
    memset(&op, 0xa5, sizeof op); /* whatever the caller's op held */
    for (size_t i = 0; i < G_N_ELEMENTS(lines); i++) {
        char *text = g_strdup(lines[i]);
        GError *err = NULL;
        ck_assert_msg(strata_line_parse(text, strlen(text), "t", i + 1, s, &op, &err), "%s: %s", lines[i],
                      err ? err->message : "");
        switch (i) {
        case 0:
            ck_assert(op.has_flops && op.flops == 1e9 && op.n_ins == 2 && op.n_outs == 1 && op.has_bytes);
            ck_assert(op.has_time && op.n_kdims == 3 && strcmp(op.stream, "dma") == 0);
            break;
        case 1: /* every field line 0 set is back at its default */
            ck_assert(!op.has_flops && op.flops == 0 && op.n_ins == 0 && op.ins == NULL && op.n_outs == 0);
            ck_assert(op.outs == NULL && !op.has_bytes && op.bytes == 0 && !op.has_time && op.time_s == 0);
            ck_assert(op.unit == NULL && op.kernel == NULL && op.n_kdims == 0 && op.dims[0] == 0);
            ck_assert_str_eq(op.stream, STRATA_DEFAULT_STREAM);
            break;
        case 2: ck_assert(op.tag == STRATA_TAG_PARAM && op.n_dims == 2 && op.has_addr && op.has_device); break;
        case 3:
            ck_assert(op.tag == STRATA_TAG_NONE && op.dtype == STRATA_DTYPE_NONE && op.n_dims == 0);
            ck_assert(op.shape[0] == 0 && op.shape[1] == 0 && !op.has_addr && op.addr == 0 && !op.has_device);
            ck_assert(op.device == 0 && op.size == 2);
            break;
        case 4: ck_assert(op.has_bytes && op.bytes == 1 && op.has_at && op.note != NULL); break;
        case 5:
            ck_assert(!op.has_bytes && op.bytes == 0 && !op.has_at && op.at_s == 0 && op.note == NULL);
            ck_assert(op.src == NULL && op.size == 0);
            ck_assert_str_eq(op.stream, STRATA_DEFAULT_STREAM);
            break;
        default: break;
        }
        g_free(text); /* the op's strings pointed into it: line i + 1 sets or clears each */
    }
    strata_line_scratch_free(s);
}
END_TEST

static Suite *trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("reader");
    tcase_add_test(tc, parse_alloc_every_attribute);
    tcase_add_test(tc, parse_other_kinds);
    tcase_add_test(tc, errors_name_line_column_and_expectation);
    tcase_add_test(tc, version_line_errors);
    tcase_add_test(tc, nul_byte_is_an_error);
    tcase_add_test(tc, missing_file_is_an_io_error);
    tcase_add_test(tc, reads_streams_and_rewinds);
    tcase_add_test(tc, reads_stdin_and_rewinds);
    tcase_add_test(tc, long_trace_streams);
    tcase_add_test(tc, size_fast_path_agrees_with_units);
    tcase_add_test(tc, attributes_do_not_outlive_their_line);
    suite_add_tcase(s, tc);
    TCase *tw = tcase_create("writer");
    tcase_add_test(tw, writer_round_trips_every_attribute);
    tcase_add_test(tw, writer_canonical_text);
    tcase_add_test(tw, writer_refuses_unreadable_names);
    tcase_add_test(tw, example_traces_round_trip);
    tcase_add_test(tw, format_tour_has_every_kind_and_attribute);
    tcase_add_test(tw, spmd_tour_round_trips_with_every_collective);
    suite_add_tcase(s, tw);
    return s;
}

int main(void) { return strata_test_main(trace_suite()); }
