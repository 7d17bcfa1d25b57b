/*
 * test_check.c: the semantic checker. Each rule of trace/check.h, each
 * error class, and the numbers it resolves (buffer ids, bytes, events,
 * streams, options).
 */
#include <string.h>
#include "testutil.h"
#include "core/error.h"
#include "spmd/spmd_names.h"
#include "trace/check.h"
#include "trace/check_live.h"
#include "trace/reader.h"

/* Feed the lines of `text` (one op per line, numbered from 1); returns the
 * error message of the first failing line (g_free) or NULL. refs_out (may be
 * NULL) receives the refs of the last op fed. */
static char *feed_lines(strata_checker *c, const char *text, strata_op_refs *refs_out)
{
    char **lines = g_strsplit(text, "\n", -1);
    char *msg = NULL;
    for (int i = 0; lines[i] && !msg; i++) {
        if (!*lines[i])
            continue;
        strata_op op;
        GError *err = NULL;
        strata_line_scratch *s = strata_parse_op_line(lines[i], "c.trace", (uint64_t)i + 1, &op, &err);
        if (!s)
            ck_abort_msg("line %d does not parse: %s", i + 1, err->message);
        strata_op_refs refs;
        if (!strata_checker_feed(c, &op, &refs, &err)) {
            ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
            msg = g_strdup(err->message);
            g_error_free(err);
        } else if (refs_out) {
            *refs_out = refs;
            /* arrays die with the next feed: keep only scalars */
            refs_out->ins = refs_out->outs = NULL;
        }
        strata_line_scratch_free(s);
    }
    g_strfreev(lines);
    return msg;
}

static void assert_rejects(const char *text, const char *needle)
{
    strata_checker *c = strata_checker_new("c.trace");
    char *msg = feed_lines(c, text, NULL);
    if (!msg)
        ck_abort_msg("accepted:\n%s", text);
    if (!strstr(msg, needle))
        ck_abort_msg("message '%s' lacks '%s'", msg, needle);
    g_free(msg);
    strata_checker_free(c);
}

/* A copy names both ends' memories (one interned pointer per name); a
 * compute carries its first operand's dtype (in=, else out=). */
START_TEST(memories_and_dtypes_of_operands)
{
    strata_checker *c = strata_checker_new("c.trace");
    strata_op_refs r, first;
    ck_assert_ptr_null(feed_lines(c, "alloc h 1MiB host dtype=bf16", &first));
    ck_assert_int_eq(first.dtype, STRATA_DTYPE_BF16);
    ck_assert_ptr_null(feed_lines(c, "alloc d 1MiB dtype=f32", &r));
    ck_assert_ptr_null(feed_lines(c, "alloc o 1MiB host dtype=int8", &r));
    ck_assert_ptr_null(feed_lines(c, "copy d h", &r));
    ck_assert_ptr_null(r.memory);
    ck_assert_str_eq(r.src_memory, "host");
    ck_assert_ptr_eq(r.src_memory, first.memory);
    ck_assert_ptr_null(feed_lines(c, "compute k in=d,h out=o", &r));
    ck_assert_int_eq(r.dtype, STRATA_DTYPE_F32);
    ck_assert_ptr_null(feed_lines(c, "compute k out=o,d", &r));
    ck_assert_int_eq(r.dtype, STRATA_DTYPE_INT8);
    ck_assert_ptr_null(feed_lines(c, "compute k", &r));
    ck_assert_int_eq(r.dtype, STRATA_DTYPE_NONE);
    ck_assert_ptr_null(feed_lines(c, "free h", &r));
    ck_assert_int_eq(r.dtype, STRATA_DTYPE_BF16);
    strata_checker_free(c);
}
END_TEST

START_TEST(buffer_ids_and_reuse_after_free)
{
    strata_checker *c = strata_checker_new("c.trace");
    strata_op_refs r;
    ck_assert_ptr_null(feed_lines(c, "alloc a 4KiB", &r));
    ck_assert_uint_eq(r.buf, 0);
    ck_assert_uint_eq(r.bytes, 4096);
    ck_assert_ptr_null(feed_lines(c, "alloc b 1MiB host", &r));
    ck_assert_uint_eq(r.buf, 1);
    uint64_t size = 0;
    const char *memory = "x";
    ck_assert(strata_checker_buffer(c, 0, &size, &memory));
    ck_assert_uint_eq(size, 4096);
    ck_assert_ptr_null(memory);
    ck_assert(strata_checker_buffer(c, 1, &size, &memory));
    ck_assert_str_eq(memory, "host");
    ck_assert_str_eq(r.memory, "host");
    ck_assert_ptr_null(feed_lines(c, "free a", &r));
    ck_assert_uint_eq(r.buf, 0);
    ck_assert_uint_eq(r.bytes, 4096);
    ck_assert_ptr_null(r.memory);
    ck_assert_ptr_null(feed_lines(c, "free b", &r));
    ck_assert_str_eq(r.memory, "host");
    ck_assert_uint_eq(r.bytes, 1048576);
    ck_assert_ptr_null(feed_lines(c, "alloc b 1MiB host", &r));
    ck_assert(!strata_checker_buffer(c, 0, NULL, NULL));
    /* The name is free again: a new alloc gets a new id. */
    ck_assert_ptr_null(feed_lines(c, "alloc a 8KiB", &r));
    ck_assert_uint_eq(r.buf, 3);
    ck_assert_uint_eq(strata_checker_buffer_count(c), 4);
    ck_assert_uint_eq(strata_checker_op_count(c), 6);
    ck_assert(!strata_checker_buffer(c, 99, NULL, NULL));
    strata_checker_free(c);
}
END_TEST

START_TEST(copy_bytes_default_and_limits)
{
    strata_checker *c = strata_checker_new("c.trace");
    strata_op_refs r;
    ck_assert_ptr_null(feed_lines(c, "alloc big 1MiB\nalloc small 64KiB host\ncopy big small", &r));
    ck_assert_uint_eq(r.buf, 0);
    ck_assert_uint_eq(r.src, 1);
    ck_assert_uint_eq(r.bytes, 65536); /* default: the source's size */
    ck_assert_ptr_null(feed_lines(c, "copy small big bytes=64KiB", &r));
    ck_assert_uint_eq(r.bytes, 65536);
    ck_assert_uint_eq(r.buf, 1);
    strata_checker_free(c);

    assert_rejects("alloc big 1MiB\nalloc small 64KiB\ncopy small big",
                   "c.trace:3: expected at most 65536 bytes (the size of destination 'small'), got 1048576");
    assert_rejects("alloc big 1MiB\nalloc small 64KiB\ncopy big small bytes=128KiB",
                   "c.trace:3: expected at most 65536 bytes (the size of source 'small'), got 131072");
    assert_rejects("alloc a 1MiB\ncopy a ghost", "c.trace:2: expected a live buffer as the source of copy, got 'ghost'");
    assert_rejects("alloc a 1MiB\ncopy ghost a", "c.trace:2: expected a live buffer as the destination of copy");
    assert_rejects("alloc a 1MiB\nalloc b 1MiB\nfree b\ncopy a b", "c.trace:4: expected a live buffer");
}
END_TEST

START_TEST(compute_resolves_operands)
{
    strata_checker *c = strata_checker_new("c.trace");
    ck_assert_ptr_null(feed_lines(c, "alloc w 1MiB\nalloc x 64KiB\nalloc y 4KiB", NULL));
    strata_op op;
    GError *err = NULL;
    strata_line_scratch *s = strata_parse_op_line("compute mm in=w,x out=y donate=x", "c.trace", 4, &op, &err);
    strata_op_refs r;
    ck_assert(strata_checker_feed(c, &op, &r, &err));
    ck_assert_uint_eq(r.bytes, 1048576 + 65536 + 4096);
    ck_assert_uint_eq(r.ins[0], 0);
    ck_assert_uint_eq(r.ins[1], 1);
    ck_assert_uint_eq(r.outs[0], 2);
    strata_line_scratch_free(s);
    strata_checker_free(c);

    assert_rejects("alloc w 1MiB\ncompute mm in=w,ghost", "c.trace:2: expected a live buffer as in= of compute, got 'ghost'");
    assert_rejects("alloc w 1MiB\ncompute mm out=ghost", "c.trace:2: expected a live buffer as out= of compute");
    assert_rejects("alloc w 1MiB\nalloc y 1MiB\ncompute mm in=w out=y donate=y",
                   "c.trace:3: expected donate= to name buffers of in=, got 'y'");
}
END_TEST

START_TEST(events_resolve_to_latest_record)
{
    strata_checker *c = strata_checker_new("c.trace");
    strata_op_refs r;
    ck_assert_ptr_null(feed_lines(c, "record e1 stream=a", &r));
    ck_assert_uint_eq(r.event, 0);
    ck_assert_uint_eq(r.event_seq, 1);
    ck_assert_uint_eq(r.stream, 0);
    ck_assert_ptr_null(feed_lines(c, "record e2 stream=b", &r));
    ck_assert_uint_eq(r.event, 1);
    ck_assert_uint_eq(r.stream, 1);
    ck_assert_ptr_null(feed_lines(c, "wait e1", &r));
    ck_assert_uint_eq(r.event, 0);
    ck_assert_uint_eq(r.event_seq, 1);
    ck_assert_uint_eq(r.stream, 2);
    ck_assert_ptr_null(feed_lines(c, "record e1 stream=b", &r));
    ck_assert_uint_eq(r.event_seq, 2);
    ck_assert_ptr_null(feed_lines(c, "wait e1 stream=a", &r));
    ck_assert_uint_eq(r.event_seq, 2); /* the latest record before it */
    ck_assert_uint_eq(r.stream, 0);
    ck_assert_uint_eq(strata_checker_event_count(c), 2);
    ck_assert_uint_eq(strata_checker_stream_count(c), 3);
    ck_assert_str_eq(strata_checker_stream_name(c, 0), "a");
    ck_assert_str_eq(strata_checker_stream_name(c, 1), "b");
    ck_assert_str_eq(strata_checker_stream_name(c, 2), "main");
    ck_assert_ptr_null(strata_checker_stream_name(c, 3));
    strata_checker_free(c);

    assert_rejects("alloc a 4096\nwait ev", "c.trace:2: expected an event recorded earlier in the trace, got wait on 'ev'");
    /* A record later in the file does not count. */
    assert_rejects("wait ev stream=x\nrecord ev", "c.trace:1: expected an event recorded earlier");
}
END_TEST

START_TEST(duplicate_live_name_and_unknown_free)
{
    assert_rejects("alloc a 4096\nalloc b 4096\nalloc a 8192",
                   "c.trace:3: expected a name that is not live, got 'a' (allocated at line 1 and not freed since)");
    assert_rejects("alloc a 4096\nfree b", "c.trace:2: expected a live buffer as the buffer of free, got 'b'");
    assert_rejects("alloc a 4096\nfree a\nfree a", "c.trace:3: expected a live buffer");
}
END_TEST

START_TEST(options_come_first)
{
    strata_checker *c = strata_checker_new("c.trace");
    ck_assert_ptr_null(feed_lines(c, "option allocator.max_split_size=200MiB\noption a.b=1", NULL));
    ck_assert_uint_eq(strata_checker_op_count(c), 0);
    const GPtrArray *keys = strata_checker_option_keys(c);
    ck_assert_uint_eq(keys->len, 2);
    ck_assert_str_eq(g_ptr_array_index(keys, 0), "allocator.max_split_size");
    ck_assert_str_eq(g_ptr_array_index(keys, 1), "a.b");
    ck_assert_str_eq(strata_checker_option(c, "allocator.max_split_size"), "200MiB");
    ck_assert_ptr_null(strata_checker_option(c, "nope"));
    ck_assert_uint_eq(strata_checker_stream_count(c), 0);
    strata_checker_free(c);

    assert_rejects("alloc a 4096\noption k=v", "c.trace:2: expected option lines before the first op, got option 'k'");
    assert_rejects("option k=v\noption k=w", "c.trace:2: expected each option once, got 'k' again");
}
END_TEST

START_TEST(generated_ops_are_named_by_index)
{
    strata_checker *c = strata_checker_new("gen:test");
    strata_op op = {.kind = STRATA_OP_FREE, .stream = "main", .name = "x"};
    GError *err = NULL;
    ck_assert(!strata_checker_feed(c, &op, NULL, &err));
    ck_assert_str_eq(err->message,
                     "gen:test: op 1: expected a live buffer as the buffer of free, got 'x' (never allocated, or "
                     "already freed)");
    g_error_free(err);
    strata_checker_free(c);
}
END_TEST

/* The checker's memory is bounded by what is live: 1M alloc/free pairs over 4 names. */
START_TEST(many_ops_bounded_state)
{
    strata_checker *c = strata_checker_new("loop");
    char name[8];
    strata_op_refs r;
    for (uint64_t i = 0; i < 1000000; i++) {
        g_snprintf(name, sizeof name, "b%d", (int)(i % 4));
        strata_op alloc = {.kind = STRATA_OP_ALLOC, .stream = "main", .name = name, .size = 64};
        strata_op free_op = {.kind = STRATA_OP_FREE, .stream = "main", .name = name};
        /* plain ifs: Check's assertions are slow in a hot loop */
        if (!strata_checker_feed(c, &alloc, &r, NULL) || r.buf != i || !strata_checker_feed(c, &free_op, &r, NULL))
            ck_abort_msg("op %" G_GUINT64_FORMAT " failed", i);
    }
    ck_assert_uint_eq(strata_checker_buffer_count(c), 1000000);
    ck_assert_uint_eq(strata_checker_op_count(c), 2000000);
    strata_checker_free(c);
}
END_TEST

/* The live-buffer set against a GHashTable doing the same adds and
 * removes: names of every length around the inline limit (23, 24 and 25
 * bytes) and far beyond, thousands live at once (the buckets grow), each
 * name freed and reused. */
START_TEST(live_set_matches_a_reference)
{
    strata_live_set *set = strata_live_new();
    GHashTable *ref = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GRand *rng = g_rand_new_with_seed(17);
    static const unsigned lengths[] = {1, 2, 7, 8, 9, 16, 23, 24, 25, 100};
    for (uint64_t step = 0; step < 200000; step++) {
        unsigned k = (unsigned)g_rand_int_range(rng, 0, 6000);
        unsigned len = lengths[k % G_N_ELEMENTS(lengths)];
        char name[128];
        int n = g_snprintf(name, sizeof name, "%u", k);
        for (int i = n; i < (int)len; i++)
            name[i] = (char)('a' + i % 26);
        name[len > (unsigned)n ? len : (unsigned)n] = '\0';
        gpointer want = NULL;
        bool live = g_hash_table_lookup_extended(ref, name, NULL, &want);
        strata_live_buffer *found = strata_live_find(set, name);
        if ((found != NULL) != live || (found && found->id != GPOINTER_TO_SIZE(want)))
            ck_abort_msg("step %" G_GUINT64_FORMAT ": '%s' found %d, expected %d", step, name, found != NULL, live);
        if (live) {
            strata_live_buffer out;
            if (!strata_live_remove(set, name, &out) || out.id != GPOINTER_TO_SIZE(want) || out.size != k)
                ck_abort_msg("step %" G_GUINT64_FORMAT ": remove '%s'", step, name);
            g_hash_table_remove(ref, name);
        } else {
            bool added = false;
            strata_live_buffer *b = strata_live_add(set, name, &added);
            if (!added || b->id != 0 || b->size != 0)
                ck_abort_msg("step %" G_GUINT64_FORMAT ": add '%s' not a new zeroed record", step, name);
            b->id = step;
            b->size = k;
            strata_live_add(set, name, &added);
            if (added)
                ck_abort_msg("step %" G_GUINT64_FORMAT ": '%s' added twice", step, name);
            g_hash_table_insert(ref, g_strdup(name), GSIZE_TO_POINTER(step));
        }
    }
    ck_assert_uint_gt(g_hash_table_size(ref), 1000);
    GHashTableIter it;
    gpointer key, id;
    g_hash_table_iter_init(&it, ref);
    for (int checked = 0; checked < 50 && g_hash_table_iter_next(&it, &key, &id); checked++) {
        const strata_live_buffer *b = strata_live_find_id(set, GPOINTER_TO_SIZE(id));
        ck_assert_ptr_nonnull(b);
        ck_assert_ptr_eq(b, strata_live_find(set, key));
    }
    ck_assert_ptr_null(strata_live_find_id(set, UINT64_MAX));
    g_rand_free(rng);
    g_hash_table_destroy(ref);
    strata_live_free(set);
}
END_TEST

/* The quote of `name` by c, compared with want. */
static void assert_quote(const strata_checker *c, const char *name, const char *want)
{
    char *q = strata_checker_quote(c, name);
    ck_assert_str_eq(q, want);
    g_free(q);
}

/* A name is a key, never decoded: without a namer 'a@3' is quoted as
 * written whatever device= says (a single-device trace holds '@' and '~'
 * freely). The SPMD expansion's namer labels the names its encoders make:
 * B@D as 'B' on device D, its own S~... as what they are. */
START_TEST(names_are_labels_not_devices)
{
    strata_checker *c = strata_checker_new("c.trace");
    char *msg = feed_lines(c, "alloc a@3 64 device=1\nfree a@3 device=1\nfree a@3 device=1\n", NULL);
    ck_assert_str_eq(msg, "c.trace:3: expected a live buffer as the buffer of free, got 'a@3' (never allocated, or "
                          "already freed)");
    g_free(msg);
    msg = feed_lines(c, "record e~e@1 device=2\nwait e@2 device=2\n", NULL);
    ck_assert_str_eq(msg, "c.trace:2: expected an event recorded earlier in the trace, got wait on 'e@2' (no "
                          "'record e@2' before this line)");
    g_free(msg);
    assert_quote(c, "main~t0@3", "'main~t0@3'");
    strata_checker_free(c);

    c = strata_checker_new("c.trace");
    strata_checker_set_namer(c, &strata_spmd_expansion_namer);
    msg = feed_lines(c, "alloc a@6 64 device=6\nfree b@6 device=6\n", NULL);
    ck_assert_str_eq(msg, "c.trace:2: expected a live buffer as the buffer of free, got 'b' on device 6 (never "
                          "allocated, or already freed)");
    g_free(msg);
    msg = feed_lines(c, "wait e@5 device=5\n", NULL);
    ck_assert_str_eq(msg, "c.trace:1: expected an event recorded earlier in the trace, got wait on 'e' on device 5 "
                          "(no 'record e' on device 5 before this line)");
    g_free(msg);
    GString *name = g_string_new(NULL);
    strata_spmd_name(name, "a@2", 3);
    assert_quote(c, name->str, "'a@2' on device 3");
    strata_spmd_lane_name(name, "main", 0, STRATA_SPMD_RECV, 3);
    assert_quote(c, name->str, "'main~t0' (a collective's receive buffer on stream 'main') on device 3");
    strata_spmd_lane_name(name, "main", 1, STRATA_SPMD_ROUND, 4);
    assert_quote(c, name->str, "'main~e1' (a collective's round event on stream 'main') on device 4");
    strata_spmd_lane_name(name, "g", 2, NULL, 7);
    assert_quote(c, name->str, "'g~2' (a lane of a collective on stream 'g') on device 7");
    strata_spmd_lane_name(name, "g", 0, NULL, 7);
    assert_quote(c, name->str, "'g' on device 7");
    assert_quote(c, "x@y", "'x@y'"); /* not one of the expansion's: as written */
    g_string_free(name, TRUE);
    strata_checker_free(c);
}
END_TEST

static Suite *check_suite(void)
{
    Suite *s = suite_create("check");
    TCase *tc = tcase_create("check");
    tcase_add_test(tc, buffer_ids_and_reuse_after_free);
    tcase_add_test(tc, memories_and_dtypes_of_operands);
    tcase_add_test(tc, copy_bytes_default_and_limits);
    tcase_add_test(tc, compute_resolves_operands);
    tcase_add_test(tc, events_resolve_to_latest_record);
    tcase_add_test(tc, duplicate_live_name_and_unknown_free);
    tcase_add_test(tc, options_come_first);
    tcase_add_test(tc, generated_ops_are_named_by_index);
    tcase_add_test(tc, many_ops_bounded_state);
    tcase_add_test(tc, live_set_matches_a_reference);
    tcase_add_test(tc, names_are_labels_not_devices);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(check_suite()); }
