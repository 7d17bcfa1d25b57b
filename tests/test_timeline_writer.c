/*
 * test_timeline_writer.c: the timeline's pending output
 * (sim/results/timeline_writer.c). Into a file: whole chunks at offsets
 * that are multiples of the chunk, the rest kept for the next flush, and
 * what stdio held before written first. Into a stream without a
 * descriptor (open_memstream): everything at each flush. The same bytes
 * in the same order either way; a write that fails is reported by the
 * finish and marks the stream.
 */
#include <string.h>
#include <sys/stat.h>
#include "results/timeline_writer.h"
#include "testutil.h"

enum { CHUNK = 1 << 16, PIECE = 50000, PIECES = 3 };

/* Piece i: PIECE bytes, byte j being (7 i + j) mod 256. */
static void fill_piece(char *p, int i)
{
    for (int j = 0; j < PIECE; j++)
        p[j] = (char)((7 * i + j) & 0xff);
}

static void put_piece(strata_tl_out *o, int i)
{
    fill_piece(strata_tl_out_room(o, PIECE), i);
    o->len += PIECE;
}

static char *expected_bytes(const char *head)
{
    size_t h = strlen(head);
    char *b = g_malloc(h + (size_t)PIECES * PIECE);
    memcpy(b, head, h);
    for (int i = 0; i < PIECES; i++)
        fill_piece(b + h + (size_t)i * PIECE, i);
    return b;
}

static long long file_size(FILE *f)
{
    struct stat st;
    ck_assert_int_eq(fstat(fileno(f), &st), 0);
    return (long long)st.st_size;
}

/* The buffer holds a chunk and a 32nd (67,584 bytes): the first piece
 * fits; the second does not, and no whole chunk is pending (50,000), so
 * nothing is written and the buffer grows to 100,000; the third needs room,
 * so the one whole chunk goes out (65,536 bytes, after the 4 bytes stdio
 * held, written at init) and 34,464 stay, then the piece is taken
 * (84,464); the finish writes the rest: 4 + 150,000 bytes. */
START_TEST(a_file_gets_whole_chunks)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "out.bin", NULL);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("head", f);
    strata_tl_out o;
    strata_tl_out_init(&o, f, CHUNK);
    ck_assert_int_eq(file_size(f), 4);
    put_piece(&o, 0);
    put_piece(&o, 1);
    ck_assert_int_eq(file_size(f), 4);
    ck_assert_uint_eq(o.cap, 100000);
    put_piece(&o, 2);
    ck_assert_int_eq(file_size(f), 4 + CHUNK);
    ck_assert_uint_eq(o.len, 84464);
    ck_assert(strata_tl_out_finish(&o));
    ck_assert_int_eq(file_size(f), 4 + 150000);
    g_free(o.buf);
    ck_assert_int_eq(fclose(f), 0);
    char *got = NULL;
    gsize n = 0;
    ck_assert(g_file_get_contents(path, &got, &n, NULL));
    char *want = expected_bytes("head");
    ck_assert_uint_eq(n, 4 + 150000);
    ck_assert(memcmp(got, want, n) == 0);
    g_free(want);
    g_free(got);
    g_free(path);
    g_free(dir);
}
END_TEST

/* No descriptor: each flush hands everything to stdio, so the second
 * piece finds 50,000 bytes written and room for itself, and the third
 * finds the second's 50,000 written (100,000 in all). */
START_TEST(a_stream_gets_everything_at_each_flush)
{
    char *mem = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&mem, &size);
    ck_assert_ptr_nonnull(f);
    fputs("head", f);
    strata_tl_out o;
    strata_tl_out_init(&o, f, CHUNK);
    put_piece(&o, 0);
    put_piece(&o, 1);
    put_piece(&o, 2);
    ck_assert_uint_eq(o.len, PIECE);
    ck_assert_int_eq(fflush(f), 0);
    ck_assert_uint_eq(size, 4 + 100000);
    ck_assert(strata_tl_out_finish(&o));
    g_free(o.buf);
    ck_assert_int_eq(fclose(f), 0);
    char *want = expected_bytes("head");
    ck_assert_uint_eq(size, 4 + 150000);
    ck_assert(memcmp(mem, want, size) == 0);
    g_free(want);
    free(mem);
}
END_TEST

/* /dev/full refuses every write (ENOSPC): the finish says so, and so does
 * the stream (ferror), which is what the engine and core/outfile.c read. */
START_TEST(a_failed_write_is_reported)
{
    FILE *f = fopen("/dev/full", "w");
    ck_assert_ptr_nonnull(f);
    strata_tl_out o;
    strata_tl_out_init(&o, f, CHUNK);
    for (int i = 0; i < PIECES; i++)
        put_piece(&o, i);
    ck_assert(!strata_tl_out_finish(&o));
    ck_assert(ferror(f));
    g_free(o.buf);
    fclose(f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("timeline_writer");
    TCase *tc = tcase_create("timeline_writer");
    tcase_add_test(tc, a_file_gets_whole_chunks);
    tcase_add_test(tc, a_stream_gets_everything_at_each_flush);
    tcase_add_test(tc, a_failed_write_is_reported);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
