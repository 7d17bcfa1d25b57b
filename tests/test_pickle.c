/*
 * test_pickle.c: the safe pickle reader.
 *
 * - values of every kind, hand-assembled in protocols 0 to 5 (ints of each
 *   width, long ints beyond 64 bits, floats, strings, bytes, memo, marks);
 * - snapshots written by Python's own pickle (tests/helpers/make_snapshot.py)
 *   in protocols 0, 1, 2, 3, 4 and 5 read back with the same values;
 * - hostile input: every opcode that imports or calls is refused by name
 *   with its offset (and the classic os.system payload runs nothing), every
 *   prefix of a file is an error, corrupted bytes never crash, huge lengths
 *   and memo keys are errors rather than allocations, deep marks are capped;
 * - the streaming reader: on Python-written snapshots (protocols 0 to 5) it
 *   hands out exactly the items of the whole document, in order, with the
 *   collector running between items and after a rewind; it fails where the
 *   whole-document reader fails, with the same message (every prefix,
 *   corrupted bytes); it reports the layouts it cannot vouch for.
 * Run under ASan/valgrind, the buffers are exact-size heap copies, so any
 * read past the end is caught.
 */
#include <string.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "testutil.h"
#include "core/error.h"
#include "import/pickle.h"

/* A parsed document and the exact-size heap copy of the input it points into. */
typedef struct doc {
    strata_pickle *p;
    void *buf;
} doc;

static doc load(const void *data, size_t len, GError **err)
{
    doc d = {NULL, g_memdup2(data, len ? len : 1)};
    d.p = strata_pickle_load_buffer(d.buf, len, "t.pickle", err);
    return d;
}

static void doc_free(doc *d)
{
    strata_pickle_free(d->p);
    g_free(d->buf);
}

#define LOAD(lit, err) load((lit), sizeof(lit) - 1, (err))

static char *text_of(const char *lit, size_t len)
{
    GError *err = NULL;
    doc d = load(lit, len, &err);
    if (d.p == NULL) {
        char *msg = g_strdup_printf("ERROR %s", err->message);
        g_clear_error(&err);
        doc_free(&d);
        return msg;
    }
    char *t = strata_pickle_to_text(d.p, strata_pickle_root(d.p), 10);
    doc_free(&d);
    return t;
}
#define TEXT(lit) text_of((lit), sizeof(lit) - 1)

static void assert_text(const char *lit, size_t len, const char *want)
{
    char *got = text_of(lit, len);
    ck_assert_str_eq(got, want);
    g_free(got);
}
#define ASSERT_TEXT(lit, want) assert_text((lit), sizeof(lit) - 1, (want))

static void assert_error(const char *lit, size_t len, const char *needle)
{
    GError *err = NULL;
    doc d = load(lit, len, &err);
    ck_assert_msg(d.p == NULL, "expected an error containing '%s'", needle);
    doc_free(&d);
    ck_assert_int_eq(err->domain, STRATA_ERROR);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_msg(strstr(err->message, needle) != NULL, "'%s' lacks '%s'", err->message, needle);
    ck_assert_msg(strstr(err->message, "t.pickle: offset ") != NULL, "no offset in '%s'",
                  err->message);
    g_clear_error(&err);
}
#define ASSERT_ERROR(lit, needle) assert_error((lit), sizeof(lit) - 1, (needle))

START_TEST(protocol0_text_opcodes)
{
    /* pickle.dumps({'a': [1, -2, 3.5, True, None, 'é'], 'b': ('x', 12345678901234567890)}, 0) */
    ASSERT_TEXT("(dp0\nVa\np1\n(lp2\nI1\naI-2\naF3.5\naI01\naNaV\\u00e9\np3\nasVb\np4\n"
                "(Vx\np5\nL12345678901234567890L\ntp6\ns.",
                "{\"a\":[1,-2,3.5,true,null,\"\xc3\xa9\"],\"b\":[\"x\",1.2345678901234567e+19]}");
    /* GET shares the memoized value */
    ASSERT_TEXT("(lp0\nVk\np1\nag1\na.", "[\"k\",\"k\"]");
    /* protocol 0/2 str: quoted text with escapes */
    ASSERT_TEXT("S'a\\'b\\n'\np0\n.", "\"a'b\\u000a\"");
    ASSERT_TEXT("I00\n.", "false");
}
END_TEST

START_TEST(binary_ints_and_floats)
{
    ASSERT_TEXT("\x80\x02K\xff.", "255");
    ASSERT_TEXT("\x80\x02M\xff\xff.", "65535");
    ASSERT_TEXT("\x80\x02J\xff\xff\xff\xff.", "-1");
    ASSERT_TEXT("\x80\x02J\x00\x00\x00\x80.", "-2147483648");
    /* LONG1: 140629510193152 = 0x7FE6_DC00_0000 (6 bytes, little-endian) */
    ASSERT_TEXT("\x80\x02\x8a\x06\x00\x00\x00\xdc\xe6\x7f.", "140629510193152");
    ASSERT_TEXT("\x80\x02\x8a\x01\xff.", "-1");
    ASSERT_TEXT("\x80\x02\x8a\x00.", "0");
    /* 2^63 needs 9 bytes: beyond int64, kept approximately */
    ASSERT_TEXT("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00.", "9.2233720368547758e+18");
    /* -2^63 in 9 bytes still fits */
    ASSERT_TEXT("\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\xff.", "-9223372036854775808");
    /* LONG4 */
    ASSERT_TEXT("\x80\x02\x8b\x02\x00\x00\x00\x00\x01.", "256");
    /* BINFLOAT is big-endian: 1.5 = 0x3FF8000000000000 */
    ASSERT_TEXT("\x80\x02G\x3f\xf8\x00\x00\x00\x00\x00\x00.", "1.5");
    ASSERT_TEXT("\x80\x02\x88.", "true");
    ASSERT_TEXT("\x80\x02\x89.", "false");
    ASSERT_TEXT("\x80\x02N.", "null");

    GError *err = NULL;
    doc d = LOAD("\x80\x02\x8a\x06\x00\x00\x00\xdc\xe6\x7f.", &err);
    strata_pickle *p = d.p;
    ck_assert_ptr_nonnull(p);
    int64_t v;
    ck_assert(strata_pickle_get_int(p, strata_pickle_root(p), &v));
    ck_assert_int_eq(v, INT64_C(140629510193152));
    ck_assert_int_eq(strata_pickle_protocol(p), 2);
    doc_free(&d);
}
END_TEST

START_TEST(strings_bytes_containers)
{
    /* protocol 4: frame, memoize, short strings, dict with SETITEMS, tuple, set */
    ASSERT_TEXT("\x80\x04\x95\x1b\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01k\x94]\x94(K\x01K\x02" "e"
                "\x8c\x01t\x94K\x01K\x02\x86\x94u.",
                "{\"k\":[1,2],\"t\":[1,2]}");
    ASSERT_TEXT("\x80\x03X\x03\x00\x00\x00" "abcC\x02\x00\x01\x86.", "[\"abc\",\"\\u0000\\u0001\"]");
    ASSERT_TEXT("\x80\x04\x8f\x94(K\x01K\x02\x90.", "[1,2]");
    ASSERT_TEXT("\x80\x04(K\x01\x91.", "[1]");
    ASSERT_TEXT("\x80\x05\x96\x02\x00\x00\x00\x00\x00\x00\x00hi.", "\"hi\"");
    ASSERT_TEXT("\x80\x04\x8d\x01\x00\x00\x00\x00\x00\x00\x00z.", "\"z\"");
    ASSERT_TEXT("\x80\x02)(K\x01K\x02K\x03t\x86.", "[[],[1,2,3]]");
    /* duplicate keys: the last wins, as in Python */
    GError *err = NULL;
    doc d = LOAD("\x80\x02}(U\x01kK\x01U\x01kK\x02u.", &err);
    strata_pickle *p = d.p;
    ck_assert_ptr_nonnull(p);
    int64_t v;
    ck_assert(strata_pickle_get_int(p, strata_pickle_dict_get(p, strata_pickle_root(p), "k"), &v));
    ck_assert_int_eq(v, 2);
    ck_assert(strata_pickle_dict_get(p, strata_pickle_root(p), "missing") == STRATA_PV_NULL);
    doc_free(&d);
    /* POP_MARK, DUP, POP */
    ASSERT_TEXT("\x80\x02(K\x01K\x02" "1K\x03" "2\x86.", "[3,3]");
    ASSERT_TEXT("\x80\x02K\x01K\x02" "0.", "1");
}
END_TEST

/* Every opcode that would import or call something. */
static const struct {
    const char *bytes;
    size_t len;
    const char *name;
} forbidden[] = {
#define F(lit, name) {lit, sizeof(lit) - 1, name}
    F("cos\nsystem\n(S'touch /tmp/strata-pwned'\ntR.", "GLOBAL"),
    F("\x80\x04\x8c\x02os\x8c\x06system\x93.", "STACK_GLOBAL"),
    F("\x80\x02N)R.", "REDUCE"),
    F("\x80\x02}}b.", "BUILD"),
    F("(ios\nsystem\n.", "INST"),
    F("(N)o.", "OBJ"),
    F("\x80\x02N)\x81.", "NEWOBJ"),
    F("\x80\x04N)}\x92.", "NEWOBJ_EX"),
    F("\x80\x02\x82\x01.", "EXT1"),
    F("\x80\x02\x83\x01\x00.", "EXT2"),
    F("\x80\x02\x84\x01\x00\x00\x00.", "EXT4"),
    F("P1\n.", "PERSID"),
    F("\x80\x02K\x01Q.", "BINPERSID"),
    F("\x80\x05\x97.", "NEXT_BUFFER"),
    F("\x80\x05K\x01\x98.", "READONLY_BUFFER"),
#undef F
};

START_TEST(forbidden_opcodes_refused_by_name)
{
    g_unlink("/tmp/strata-pwned");
    for (size_t i = 0; i < G_N_ELEMENTS(forbidden); i++) {
        char *needle = g_strdup_printf("refusing opcode %s", forbidden[i].name);
        assert_error(forbidden[i].bytes, forbidden[i].len, needle);
        g_free(needle);
    }
    /* the classic payload: refused at offset 0, nothing ran */
    ASSERT_ERROR("cos\nsystem\n(S'touch /tmp/strata-pwned'\ntR.", "offset 0: refusing opcode GLOBAL");
    ck_assert(!g_file_test("/tmp/strata-pwned", G_FILE_TEST_EXISTS));
    /* the offset is where the opcode is */
    ASSERT_ERROR("\x80\x02N)R.", "offset 4: refusing opcode REDUCE");
}
END_TEST

START_TEST(structural_errors)
{
    ASSERT_ERROR("", "no STOP");
    ASSERT_ERROR("\x80\x02K\x01", "no STOP");
    ASSERT_ERROR("\x80\x02.", "STOP with 0 values");
    ASSERT_ERROR("\x80\x02K\x01K\x02.", "STOP with 2 values");
    ASSERT_ERROR("\x80\x02(K\x01.", "unclosed MARK");
    ASSERT_ERROR("\x80\x02K\x01.junk", "trailing data");
    ASSERT_ERROR("\x80\x06K\x01.", "unsupported pickle protocol 6");
    ASSERT_ERROR("\x80\x02\xff.", "unknown or corrupt opcode 0xff");
    ASSERT_ERROR("\x80\x02" "a.", "APPEND on an empty stack");
    ASSERT_ERROR("\x80\x02K\x01K\x02" "a.", "APPEND expects a list");
    ASSERT_ERROR("\x80\x02" "e.", "APPENDS without a MARK");
    ASSERT_ERROR("\x80\x02}(K\x01u.", "odd number of items");
    ASSERT_ERROR("\x80\x02h\x05.", "memo key 5 was never stored");
    ASSERT_ERROR("\x80\x02K\x01r\xff\xff\xff\xff.", "memo key 4294967295 is out of range");
    ASSERT_ERROR("\x80\x02(\x86.", "needs 2 items");
    ASSERT_ERROR("X\x02\x00\x00\x00\xff\xfe.", "not valid UTF-8");
    ASSERT_ERROR("I12x\n.", "INT expects a decimal integer");
    ASSERT_ERROR("F1.5q\n.", "FLOAT expects a number");
    ASSERT_ERROR("T\xff\xff\xff\xff.", "negative length");
}
END_TEST

START_TEST(huge_lengths_are_errors_not_allocations)
{
    /* 2^60 as a BINUNICODE8 / BINBYTES8 / FRAME length */
    ASSERT_ERROR("\x80\x04\x8d\x00\x00\x00\x00\x00\x00\x00\x10.", "only 1 remain");
    ASSERT_ERROR("\x80\x04\x8e\x00\x00\x00\x00\x00\x00\x00\x10.", "only 1 remain");
    ASSERT_ERROR("\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x10K\x01.", "FRAME");
    ASSERT_ERROR("\x80\x05\x96\xff\xff\xff\xff\xff\xff\xff\xff.", "truncated");
    ASSERT_ERROR("\x80\x03X\xff\xff\xff\xff.", "truncated");
    ASSERT_ERROR("\x80\x02\x8b\xff\xff\xff\x7f.", "LONG4 needs 2147483647 bytes");
    ASSERT_ERROR("\x80\x02\x8a\xff\x00.", "LONG1 needs 255 bytes");
    /* issue 30: 2^63 and 2^64 - 1 as the 8-byte lengths (a signed reading
     * would go negative, an added offset would wrap): the same errors */
    ASSERT_ERROR("\x80\x04\x8d\x00\x00\x00\x00\x00\x00\x00\x80.", "only 1 remain");
    ASSERT_ERROR("\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\xff.", "only 1 remain");
    ASSERT_ERROR("\x80\x04\x8e\x00\x00\x00\x00\x00\x00\x00\x80.", "only 1 remain");
    ASSERT_ERROR("\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\xff.", "only 1 remain");
    ASSERT_ERROR("\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x80K\x01.", "FRAME");
    ASSERT_ERROR("\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\xffK\x01.", "FRAME");
}
END_TEST

START_TEST(deep_marks_are_capped)
{
    size_t n = STRATA_PICKLE_MAX_MARKS + 10;
    char *buf = g_malloc(n + 3);
    buf[0] = '\x80';
    buf[1] = 2;
    memset(buf + 2, '(', n);
    buf[n + 2] = '.';
    GError *err = NULL;
    ck_assert_ptr_null(strata_pickle_load_buffer(buf, n + 3, "t.pickle", &err));
    ck_assert_ptr_nonnull(strstr(err->message, "nested deeper"));
    g_clear_error(&err);
    /* deep nesting of lists (no marks) parses in constant stack: 200000 levels */
    size_t depth = 200000, len = 2 + depth * 2 + 1;
    char *deep = g_malloc(len);
    deep[0] = '\x80';
    deep[1] = 2;
    for (size_t i = 0; i < depth; i++)
        deep[2 + i] = ']';
    for (size_t i = 0; i < depth - 1; i++)
        deep[2 + depth + i] = 'a';
    /* leaves the outermost list on the stack with depth-1 APPENDs, then STOP */
    deep[2 + depth + depth - 1] = '.';
    strata_pickle *p = strata_pickle_load_buffer(deep, len - 1, "t.pickle", &err);
    ck_assert_msg(p != NULL, "%s", err ? err->message : "");
    char *t = strata_pickle_to_text(p, strata_pickle_root(p), 3);
    ck_assert_str_eq(t, "[[[[...]]]]");
    g_free(t);
    strata_pickle_free(p);
    g_free(deep);
    g_free(buf);
}
END_TEST

/* ---- snapshots written by Python ------------------------------------------- */

static char *python_snapshot(const char *dir, int protocol, const char *scenario)
{
    char *python = g_find_program_in_path("python3");
    if (python == NULL) {
        printf("SKIP: python3 is absent; snapshot tests need it to write pickles\n");
        return NULL;
    }
    char *helper = strata_test_source_path("tests/helpers/make_snapshot.py");
    char *out = g_strdup_printf("%s/snap-%s-%d.pickle", dir, scenario, protocol);
    char *proto = g_strdup_printf("%d", protocol);
    const char *argv[] = {python, helper, out, "--protocol", proto, "--scenario", scenario, NULL};
    int status = 0;
    GError *err = NULL;
    ck_assert(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL,
                           &status, &err));
    ck_assert_int_eq(status, 0);
    g_free(python);
    g_free(helper);
    g_free(proto);
    return out;
}

static int64_t int_at(strata_pickle *p, strata_pv dict, const char *key)
{
    int64_t v = -1;
    ck_assert_msg(strata_pickle_get_int(p, strata_pickle_dict_get(p, dict, key), &v), "%s", key);
    return v;
}

static strata_pv item(strata_pickle *p, strata_pv list, size_t index)
{
    strata_pickle_iter it;
    strata_pv v = STRATA_PV_NULL;
    strata_pickle_iter_init(p, list, &it);
    for (size_t i = 0; i <= index; i++)
        ck_assert(strata_pickle_iter_next(p, &it, NULL, &v));
    return v;
}

static const int python_protocols[] = {0, 1, 2, 3, 4, 5};

START_TEST(python_written_snapshots)
{
    int protocol = python_protocols[_i];
    char *dir = strata_test_temp_dir();
    char *path = python_snapshot(dir, protocol, "settings");
    if (path == NULL)
        return;
    GError *err = NULL;
    strata_pickle *p = strata_pickle_load_file(path, &err);
    ck_assert_msg(p != NULL, "%s", err ? err->message : "");
    ck_assert_int_eq(strata_pickle_protocol(p), protocol >= 2 ? protocol : 0);
    strata_pv root = strata_pickle_root(p);
    ck_assert_int_eq(strata_pickle_type_of(p, root), STRATA_PICKLE_DICT);
    strata_pv segs = strata_pickle_dict_get(p, root, "segments");
    ck_assert_uint_eq(strata_pickle_len(p, segs), 2);
    strata_pv a = item(p, segs, 0);
    /* values from make_snapshot.py basic(): A = 0x7F0000000000, 20 MiB */
    ck_assert_int_eq(int_at(p, a, "address"), INT64_C(0x7F0000000000));
    ck_assert_int_eq(int_at(p, a, "total_size"), 20 << 20);
    ck_assert(strata_pickle_str_equal(p, strata_pickle_dict_get(p, a, "segment_type"), "large"));
    strata_pv pool = strata_pickle_dict_get(p, a, "segment_pool_id");
    ck_assert_int_eq(strata_pickle_type_of(p, pool), STRATA_PICKLE_TUPLE);
    ck_assert_uint_eq(strata_pickle_len(p, strata_pickle_dict_get(p, a, "blocks")), 4);
    strata_pv traces = strata_pickle_dict_get(p, root, "device_traces");
    strata_pv dev = item(p, traces, 0);
    ck_assert_uint_eq(strata_pickle_len(p, dev), 10);
    strata_pv e0 = item(p, dev, 0);
    ck_assert(strata_pickle_str_equal(p, strata_pickle_dict_get(p, e0, "action"), "alloc"));
    ck_assert_int_eq(int_at(p, e0, "size"), 3 << 20);
    ck_assert_int_eq(int_at(p, e0, "addr"), INT64_C(0x7F0000000000) + 4000256);
    strata_pv f2 = item(p, strata_pickle_dict_get(p, e0, "frames"), 2);
    ck_assert(strata_pickle_str_equal(p, strata_pickle_dict_get(p, f2, "filename"),
                                      "/home/user/model.py"));
    strata_pv st = strata_pickle_dict_get(p, root, "allocator_settings");
    ck_assert_int_eq(int_at(p, st, "max_split_size"), 200 << 20);
    double gc = -1;
    ck_assert(strata_pickle_get_double(p, strata_pickle_dict_get(p, st, "garbage_collection_threshold"), &gc));
    ck_assert(gc == 0.0);
    bool b = true;
    ck_assert(strata_pickle_get_bool(p, strata_pickle_dict_get(p, st, "expandable_segments"), &b));
    ck_assert(!b);
    strata_pickle_free(p);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}
END_TEST

static gchar *read_file(const char *path, gsize *len)
{
    gchar *data = NULL;
    ck_assert(g_file_get_contents(path, &data, len, NULL));
    return data;
}

/* A snapshot written by python3 (see python_snapshot) and its bytes; NULL
 * (test skipped, with the message python_snapshot printed) without python3. */
static gchar *python_snapshot_bytes(const char *dir, int protocol, const char *scenario, char **path,
                                    gsize *len)
{
    *path = python_snapshot(dir, protocol, scenario);
    return *path ? read_file(*path, len) : NULL;
}

START_TEST(every_prefix_is_an_error)
{
    char *dir = strata_test_temp_dir();
    gsize len;
    char *path = NULL;
    gchar *data = python_snapshot_bytes(dir, 4, "basic", &path, &len);
    if (data == NULL)
        return;
    GError *err = NULL;
    for (gsize n = 0; n < len; n++) {
        doc d = load(data, n, &err);
        ck_assert_msg(d.p == NULL, "prefix of %zu bytes parsed", (size_t)n);
        ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
        g_clear_error(&err);
        doc_free(&d);
    }
    doc whole = load(data, len, &err);
    ck_assert_ptr_nonnull(whole.p);
    doc_free(&whole);
    /* and through the CLI: exit 2 with a message, for a sample of prefixes */
    for (gsize n = 0; n < len; n += len / 7) {
        char *cut = g_strdup_printf("%s/cut.pickle", dir);
        ck_assert(g_file_set_contents(cut, data, (gssize)n, NULL));
        strata_cli_result r = strata_test_cli("import", "torch", cut, "-o", "/dev/null", NULL);
        ck_assert_int_eq(r.status, 2);
        ck_assert_ptr_nonnull(strstr(r.err, "cut.pickle"));
        strata_cli_result_clear(&r);
        g_unlink(cut);
        g_free(cut);
    }
    g_free(data);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}
END_TEST

START_TEST(corrupt_bytes_never_crash)
{
    char *dir = strata_test_temp_dir();
    gsize len;
    char *path = NULL;
    gchar *data = python_snapshot_bytes(dir, 2, "basic", &path, &len);
    if (data == NULL)
        return;
    static const unsigned char values[] = {0x00, 0xff, 0x80, '(', 'c', 0x8a};
    unsigned ok = 0, failed = 0;
    for (gsize i = 0; i < len; i++)
        for (size_t v = 0; v < G_N_ELEMENTS(values); v++) {
            gchar *bad = g_memdup2(data, len);
            bad[i] = (gchar)values[v];
            GError *err = NULL;
            strata_pickle *p = strata_pickle_load_buffer(bad, len, "t.pickle", &err);
            if (p) {
                ok++;
                strata_pickle_free(p);
            } else {
                failed++;
                ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
                g_clear_error(&err);
            }
            g_free(bad);
        }
    ck_assert_uint_gt(failed, 0);
    ck_assert_uint_eq(ok + failed, len * G_N_ELEMENTS(values));
    g_free(data);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}
END_TEST

/* ---- the streaming reader ---------------------------------------------------- */

static const char *const snapshot_selectors[] = {"segments/*", "device_traces/*/*", NULL};

/* The whole document's item for a stream item. */
static strata_pv whole_item(strata_pickle *p, const strata_pickle_item *it)
{
    strata_pv root = strata_pickle_root(p);
    if (it->selector == 0)
        return item(p, strata_pickle_dict_get(p, root, "segments"), (size_t)it->index);
    strata_pv dev = item(p, strata_pickle_dict_get(p, root, "device_traces"), (size_t)it->outer);
    return item(p, dev, (size_t)it->index);
}

/* Streams path (collecting whenever the arena exceeds collect_bytes) and
 * checks every item against the whole document. Returns the item count. */
static uint64_t assert_stream_matches(const char *path, strata_pickle *whole,
                                      strata_pickle_stream *s)
{
    uint64_t n = 0, n_whole = 0;
    strata_pv root = strata_pickle_root(whole);
    strata_pickle_iter it;
    strata_pv dev;
    n_whole += strata_pickle_len(whole, strata_pickle_dict_get(whole, root, "segments"));
    strata_pickle_iter_init(whole, strata_pickle_dict_get(whole, root, "device_traces"), &it);
    while (strata_pickle_iter_next(whole, &it, NULL, &dev))
        n_whole += strata_pickle_len(whole, dev);
    strata_pickle_item x;
    GError *err = NULL;
    int rc;
    while ((rc = strata_pickle_stream_next(s, &x, &err)) == 1) {
        char *got = strata_pickle_to_text(strata_pickle_stream_doc(s), x.value, 20);
        char *want = strata_pickle_to_text(whole, whole_item(whole, &x), 20);
        ck_assert_msg(strcmp(got, want) == 0, "%s: item %d/%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                      " differs", path, x.selector, x.outer, x.index);
        g_free(got);
        g_free(want);
        n++;
    }
    ck_assert_msg(rc == 0, "%s", err ? err->message : "");
    ck_assert(strata_pickle_stream_exact(s));
    ck_assert_uint_eq(n, n_whole);
    /* the rest of the document is there, the handed-out lists are empty */
    const strata_pickle *d = strata_pickle_stream_doc(s);
    char *settings = strata_pickle_to_text(
        d, strata_pickle_dict_get(d, strata_pickle_root(d), "allocator_settings"), 5);
    char *want = strata_pickle_to_text(whole, strata_pickle_dict_get(whole, root, "allocator_settings"), 5);
    ck_assert_str_eq(settings, want);
    g_free(settings);
    g_free(want);
    strata_pv segs = strata_pickle_dict_get(d, strata_pickle_root(d), "segments");
    strata_pickle_iter_init(d, segs, &it);
    ck_assert(!strata_pickle_iter_next(d, &it, NULL, NULL));
    return n;
}

START_TEST(stream_hands_out_the_whole_documents_items)
{
    int protocol = python_protocols[_i];
    char *dir = strata_test_temp_dir();
    const char *scenarios[] = {"settings", "twodev"};
    for (size_t k = 0; k < G_N_ELEMENTS(scenarios); k++) {
        char *path = python_snapshot(dir, protocol, scenarios[k]);
        if (path == NULL)
            return;
        GError *err = NULL;
        strata_pickle *whole = strata_pickle_load_file(path, &err);
        ck_assert_msg(whole != NULL, "%s", err ? err->message : "");
        strata_pickle_stream *s = strata_pickle_stream_open_file(path, snapshot_selectors, &err);
        ck_assert_msg(s != NULL, "%s", err ? err->message : "");
        /* memo values are dropped after their last GET */
        ck_assert(strata_pickle_stream_planned(s));
        /* default collection, then collecting (nearly) between every item */
        uint64_t n = assert_stream_matches(path, whole, s);
        ck_assert_uint_gt(n, 10);
        strata_pickle_stream_rewind(s);
        strata_pickle_stream_set_collect_bytes(s, 1);
        ck_assert_uint_eq(assert_stream_matches(path, whole, s), n);
        strata_pickle_stream_free(s);
        strata_pickle_free(whole);
        g_unlink(path);
        g_free(path);
    }
    g_rmdir(dir);
    g_free(dir);
}
END_TEST

/* Streams a buffer to its end: the error message, or NULL when it parsed. */
static char *stream_error(const void *data, size_t len, bool *exact)
{
    void *buf = g_memdup2(data, len ? len : 1);
    GError *err = NULL;
    strata_pickle_stream *s =
        strata_pickle_stream_open_buffer(buf, len, "t.pickle", snapshot_selectors, &err);
    ck_assert_ptr_nonnull(s);
    strata_pickle_stream_set_collect_bytes(s, 1);
    strata_pickle_item x;
    int rc;
    while ((rc = strata_pickle_stream_next(s, &x, &err)) == 1)
        g_free(strata_pickle_to_text(strata_pickle_stream_doc(s), x.value, 4));
    char *msg = NULL;
    if (rc < 0) {
        ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
        msg = g_strdup(err->message);
        g_clear_error(&err);
        /* and it stays failed */
        ck_assert_int_eq(strata_pickle_stream_next(s, &x, &err), -1);
        g_clear_error(&err);
    }
    if (exact)
        *exact = rc == 0 && strata_pickle_stream_exact(s);
    strata_pickle_stream_free(s);
    g_free(buf);
    return msg;
}

/* The whole-document reader's message for the same bytes, or NULL. */
static char *whole_error(const void *data, size_t len)
{
    GError *err = NULL;
    doc d = load(data, len, &err);
    char *msg = d.p ? NULL : g_strdup(err->message);
    g_clear_error(&err);
    doc_free(&d);
    return msg;
}

START_TEST(stream_fails_where_the_whole_reader_fails)
{
    char *dir = strata_test_temp_dir();
    gsize len;
    char *path = NULL;
    gchar *data = python_snapshot_bytes(dir, 4, "basic", &path, &len);
    if (data == NULL)
        return;
    for (gsize n = 0; n <= len; n++) {
        char *a = whole_error(data, n), *b = stream_error(data, n, NULL);
        ck_assert_msg(g_strcmp0(a, b) == 0, "prefix %zu: '%s' vs '%s'", (size_t)n, a, b);
        ck_assert(n == len || a != NULL);
        g_free(a);
        g_free(b);
    }
    static const unsigned char values[] = {0x00, 0xff, 0x80, '(', 'c', 'h', 'j', 0x94};
    for (gsize i = 0; i < len; i += 3)
        for (size_t v = 0; v < G_N_ELEMENTS(values); v++) {
            gchar *bad = g_memdup2(data, len);
            bad[i] = (gchar)values[v];
            char *a = whole_error(bad, len), *b = stream_error(bad, len, NULL);
            ck_assert_msg(g_strcmp0(a, b) == 0, "byte %zu = 0x%02x: '%s' vs '%s'", (size_t)i,
                          values[v], a, b);
            g_free(a);
            g_free(b);
            g_free(bad);
        }
    /* hostile input: the same refusals */
    const char evil[] = "cos\nsystem\n(S'echo hi'\ntR.";
    char *msg = stream_error(evil, sizeof evil - 1, NULL);
    ck_assert_ptr_nonnull(strstr(msg, "refusing opcode GLOBAL"));
    g_free(msg);
    /* GETs of keys no PUT can have stored stop the plan pass (it does not
     * grow with them); the parse refuses the first one */
    GString *gets = g_string_new("\x80\x04]\x94");
    for (int i = 0; i < 1000; i++) {
        uint32_t key = 1000000u + (uint32_t)i;
        g_string_append_c(gets, 'j'); /* LONG_BINGET, a little-endian key */
        for (int b = 0; b < 4; b++)
            g_string_append_c(gets, (char)((key >> (8 * b)) & 0xff));
    }
    g_string_append_c(gets, '.');
    GError *err = NULL;
    strata_pickle_stream *s = strata_pickle_stream_open_buffer(gets->str, gets->len, "t.pickle",
                                                               snapshot_selectors, &err);
    ck_assert(!strata_pickle_stream_planned(s));
    strata_pickle_stream_free(s);
    msg = stream_error(gets->str, gets->len, NULL);
    ck_assert_ptr_nonnull(strstr(msg, "offset 4: memo key 1000000 was never stored"));
    g_free(msg);
    g_string_free(gets, TRUE);
    g_free(data);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}
END_TEST

START_TEST(stream_agrees_on_fuzz_inputs)
{
    /* the pickle fuzz target's seeds and regressions (tests/fuzz): the
     * stream fails where the whole reader fails, with the same message */
    const char *dirs[] = {"tests/fuzz/corpus/pickle", "tests/fuzz/regressions"};
    unsigned n = 0;
    for (size_t k = 0; k < G_N_ELEMENTS(dirs); k++) {
        char *dir = strata_test_source_path(dirs[k]);
        GDir *d = g_dir_open(dir, 0, NULL);
        ck_assert_ptr_nonnull(d);
        const char *name;
        while ((name = g_dir_read_name(d)) != NULL) {
            if (k == 1 && !g_str_has_prefix(name, "pickle-"))
                continue;
            char *path = g_build_filename(dir, name, NULL);
            gsize len;
            gchar *data = read_file(path, &len);
            char *a = whole_error(data, len), *b = stream_error(data, len, NULL);
            ck_assert_msg(g_strcmp0(a, b) == 0, "%s: '%s' vs '%s'", name, a, b);
            g_free(a);
            g_free(b);
            g_free(data);
            g_free(path);
            n++;
        }
        g_dir_close(d);
        g_free(dir);
    }
    ck_assert_uint_gt(n, 1);
}
END_TEST

/* A pickle's bytes as a literal, with its length (the bytes hold NULs). */
#define PICKLE_BYTES(text) text, sizeof text - 1

START_TEST(stream_reports_layouts_it_cannot_vouch_for)
{
    static const struct {
        const char *what, *bytes;
        size_t len;
        bool exact; /* the stream can vouch that it dropped nothing it needed */
    } layouts[] = {
        {"Python's layout: {\"segments\": [1, 2]} with EMPTY_LIST + APPENDS",
         PICKLE_BYTES("\x80\x02}q\x00(X\x08\x00\x00\x00segmentsq\x01]q\x02(K\x01K\x02"
                      "eu."), true},
        {"the list built from a MARK (its items were stored, not handed out)",
         PICKLE_BYTES("\x80\x02}(X\x08\x00\x00\x00segments(K\x01K\x02lu."), false},
        {"a decoy: a first \"segments\" list replaced by a second one",
         PICKLE_BYTES("\x80\x02}(X\x08\x00\x00\x00segments]K\x01"
                      "aX\x08\x00\x00\x00segments]K\x02"
                      "au."), false},
        {"device lists shared through the memo: [[e], <the same list>]",
         PICKLE_BYTES("\x80\x02}(X\x08\x00\x00\x00segments]X\x0d\x00\x00\x00"
                      "device_traces](]q\x05K\x07"
                      "ah\x05"
                      "eu."), false},
        {"[[], [e]]: the empty list below is a finished sibling",
         PICKLE_BYTES("\x80\x02}(X\x08\x00\x00\x00segments]X\x0d\x00\x00\x00"
                      "device_traces](]]K\x07"
                      "aeu."), true},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(layouts); i++) {
        bool exact = !layouts[i].exact;
        ck_assert_ptr_null(stream_error(layouts[i].bytes, layouts[i].len, &exact));
        ck_assert_msg(exact == layouts[i].exact, "%s: exact %d", layouts[i].what, exact);
    }
}
END_TEST

START_TEST(cli_refuses_malicious_pickle)
{
    char *dir = strata_test_temp_dir();
    char *path = g_strdup_printf("%s/evil.pickle", dir);
    const char payload[] = "cos\nsystem\n(S'touch /tmp/strata-pwned-cli'\ntR.";
    ck_assert(g_file_set_contents(path, payload, sizeof payload - 1, NULL));
    g_unlink("/tmp/strata-pwned-cli");
    strata_cli_result r = strata_test_cli("import", "torch", path, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "refusing opcode GLOBAL"));
    ck_assert_ptr_nonnull(strstr(r.err, "evil.pickle: offset 0"));
    ck_assert_str_eq(r.out, "");
    ck_assert(!g_file_test("/tmp/strata-pwned-cli", G_FILE_TEST_EXISTS));
    strata_cli_result_clear(&r);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pickle");
    TCase *tc = tcase_create("pickle");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, protocol0_text_opcodes);
    tcase_add_test(tc, binary_ints_and_floats);
    tcase_add_test(tc, strings_bytes_containers);
    tcase_add_test(tc, forbidden_opcodes_refused_by_name);
    tcase_add_test(tc, structural_errors);
    tcase_add_test(tc, huge_lengths_are_errors_not_allocations);
    tcase_add_test(tc, deep_marks_are_capped);
    tcase_add_loop_test(tc, python_written_snapshots, 0, G_N_ELEMENTS(python_protocols));
    tcase_add_test(tc, every_prefix_is_an_error);
    tcase_add_test(tc, corrupt_bytes_never_crash);
    tcase_add_test(tc, cli_refuses_malicious_pickle);
    tcase_add_loop_test(tc, stream_hands_out_the_whole_documents_items, 0,
                        G_N_ELEMENTS(python_protocols));
    tcase_add_test(tc, stream_fails_where_the_whole_reader_fails);
    tcase_add_test(tc, stream_agrees_on_fuzz_inputs);
    tcase_add_test(tc, stream_reports_layouts_it_cannot_vouch_for);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
