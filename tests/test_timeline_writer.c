/*
 * test_timeline_writer.c: the timeline's pending output
 * (sim/results/timeline_writer.c). Into a file: whole chunks at offsets
 * that are multiples of the chunk, the rest kept for the next flush, and
 * what stdio held before written first. Into a stream without a
 * descriptor (open_memstream): everything at each flush. The same bytes
 * in the same order either way; a write that fails is reported by the
 * finish and marks the stream. With O_DIRECT (a regular file whose file
 * system takes it): the same bytes as through the page cache, the last
 * partial chunk included; a direct write the file system refuses goes
 * through the cache; a pipe is never made direct; O_DIRECT is cleared
 * by the finish.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <glib/gstdio.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "results/timeline_writer.h"
#include "testutil.h"

enum { CHUNK = 1 << 16, PIECE = 50000, PIECES = 3 };
enum { EXT4_MAGIC = 0xEF53 }; /* statfs f_type of ext4 (linux/magic.h EXT4_SUPER_MAGIC), which takes O_DIRECT */

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

static char *expected_bytes_of(const char *head, int pieces)
{
    size_t h = strlen(head);
    char *b = g_malloc(h + (size_t)pieces * PIECE);
    memcpy(b, head, h);
    for (int i = 0; i < pieces; i++)
        fill_piece(b + h + (size_t)i * PIECE, i);
    return b;
}

static char *expected_bytes(const char *head)
{
    return expected_bytes_of(head, PIECES);
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
    strata_tl_out_init_as(&o, f, CHUNK, false);
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
    strata_tl_out_free(&o);
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
    strata_tl_out_init_as(&o, f, CHUNK, false);
    put_piece(&o, 0);
    put_piece(&o, 1);
    put_piece(&o, 2);
    ck_assert_uint_eq(o.len, PIECE);
    ck_assert_int_eq(fflush(f), 0);
    ck_assert_uint_eq(size, 4 + 100000);
    ck_assert(strata_tl_out_finish(&o));
    strata_tl_out_free(&o);
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
    strata_tl_out_init_as(&o, f, CHUNK, false);
    for (int i = 0; i < PIECES; i++)
        put_piece(&o, i);
    ck_assert(!strata_tl_out_finish(&o));
    ck_assert(ferror(f));
    strata_tl_out_free(&o);
    fclose(f);
}
END_TEST

static bool on_ext4(const char *dir)
{
    struct statfs fs;
    return statfs(dir, &fs) == 0 && fs.f_type == EXT4_MAGIC;
}

static bool fd_direct(FILE *f)
{
    int flags = fcntl(fileno(f), F_GETFL);
    ck_assert_int_ge(flags, 0);
    return (flags & O_DIRECT) != 0;
}

/* Writes head through stdio, then `pieces` pieces through o (direct or
 * not, chunks of `chunk`) into dir/name, and checks the file's bytes: head
 * then the pieces. Returns whether init took O_DIRECT; *refused: whether
 * a direct write was refused afterwards (o.direct cleared before the
 * finish). */
static bool write_pieces(const char *dir, const char *name, const char *head, int pieces, size_t chunk,
                         bool direct, bool *refused)
{
    char *path = g_build_filename(dir, name, NULL);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(head, f);
    strata_tl_out o;
    strata_tl_out_init_as(&o, f, chunk, direct);
    bool took = o.direct;
    ck_assert_int_eq(fd_direct(f), took);
    ck_assert_uint_eq((uintptr_t)o.buf % STRATA_TL_ALIGN, 0);
    for (int i = 0; i < pieces; i++)
        put_piece(&o, i);
    *refused = took && !o.direct;
    ck_assert(strata_tl_out_finish(&o));
    ck_assert(!fd_direct(f)); /* cleared for the tail and what follows */
    strata_tl_out_free(&o);
    ck_assert_int_eq(fclose(f), 0);
    char *got = NULL;
    gsize n = 0;
    ck_assert(g_file_get_contents(path, &got, &n, NULL));
    char *want = expected_bytes_of(head, pieces);
    ck_assert_uint_eq(n, strlen(head) + (size_t)pieces * PIECE);
    ck_assert(memcmp(got, want, n) == 0);
    g_free(want);
    g_free(got);
    g_unlink(path);
    g_free(path);
    return took;
}

/* 61 pieces of 50,000 bytes: 3,050,000 bytes, two whole 1 MiB chunks
 * (2,097,152) written directly at offsets 0 and 1 MiB and 952,848 bytes
 * (not a multiple of 512) written through the cache at the finish; the
 * same bytes as the buffered file in 64 KiB chunks. On ext4 init must
 * take O_DIRECT and no write be refused (offsets and lengths are multiples
 * of 1 MiB, the buffer page-aligned); elsewhere either path is right. */
START_TEST(a_direct_file_is_the_buffered_file)
{
    char *dir = strata_test_temp_dir();
    bool refused = false;
    bool took = write_pieces(dir, "direct.bin", "", 61, STRATA_TL_DIRECT_CHUNK, true, &refused);
    ck_assert(!refused);
    if (on_ext4(dir))
        ck_assert(took);
    ck_assert(!write_pieces(dir, "buffered.bin", "", 61, STRATA_TL_CHUNK, false, &refused));
    g_rmdir(dir);
    g_free(dir);
}
END_TEST

/* stdio wrote 4 bytes first, so the first whole chunk starts at offset 4:
 * O_DIRECT is taken at init, but ext4 refuses the write (EINVAL: an
 * offset that is not a multiple of the device's 512-byte block), and it
 * and every later chunk go through the cache in 64 KiB chunks: the bytes
 * are the same. */
START_TEST(a_refused_direct_write_goes_through_the_cache)
{
    char *dir = strata_test_temp_dir();
    bool refused = false;
    bool took = write_pieces(dir, "unaligned.bin", "head", 30, STRATA_TL_DIRECT_CHUNK, true, &refused);
    if (on_ext4(dir)) {
        ck_assert(took);
        ck_assert(refused);
    }
    g_rmdir(dir);
    g_free(dir);
}
END_TEST

/* The default init on a regular file: on ext4, direct 1 MiB chunks; on a
 * pipe (whose O_DIRECT is packet mode) never direct, 64 KiB chunks. */
START_TEST(init_takes_direct_on_files_only)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "t.bin", NULL);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    strata_tl_out o;
    strata_tl_out_init(&o, f);
    if (on_ext4(dir)) {
        ck_assert(o.direct);
        ck_assert_uint_eq(o.chunk, STRATA_TL_DIRECT_CHUNK);
        ck_assert(fd_direct(f));
    }
    strata_tl_out_free(&o); /* no finish: O_DIRECT cleared all the same */
    ck_assert(!fd_direct(f));
    fclose(f);
    g_unlink(path);
    g_free(path);
    g_rmdir(dir);
    g_free(dir);

    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    FILE *w = fdopen(fds[1], "w");
    strata_tl_out_init(&o, w);
    ck_assert(!o.direct);
    ck_assert_uint_eq(o.chunk, STRATA_TL_CHUNK);
    ck_assert(!fd_direct(w));
    strata_tl_out_free(&o);
    fclose(w);
    close(fds[0]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("timeline_writer");
    TCase *tc = tcase_create("timeline_writer");
    tcase_add_test(tc, a_file_gets_whole_chunks);
    tcase_add_test(tc, a_stream_gets_everything_at_each_flush);
    tcase_add_test(tc, a_failed_write_is_reported);
    tcase_add_test(tc, a_direct_file_is_the_buffered_file);
    tcase_add_test(tc, a_refused_direct_write_goes_through_the_cache);
    tcase_add_test(tc, init_takes_direct_on_files_only);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
