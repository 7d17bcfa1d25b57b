/* test_outfile.c: output files are complete or absent, never partial. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <zlib.h>
#include "testutil.h"
#include "core/error.h"
#include "core/outfile.h"

static char *read_all(const char *path)
{
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return NULL;
    return text;
}

/* Number of entries in dir (to see that no temporary is left behind). */
static unsigned count_entries(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    unsigned n = 0;
    while (g_dir_read_name(d))
        n++;
    g_dir_close(d);
    return n;
}

START_TEST(commit_replaces_atomically)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "out.json", NULL);
    ck_assert(g_file_set_contents(path, "old", -1, NULL));

    GError *err = NULL;
    strata_outfile *out = strata_outfile_open(path, &err);
    ck_assert_ptr_nonnull(out);
    ck_assert_str_eq(strata_outfile_path(out), path);
    fputs("new content\n", strata_outfile_stream(out));
    fflush(strata_outfile_stream(out));
    /* before commit the target still has its old content, the new one is a
     * temporary, and the one-writer lock .out.json.lock is held */
    char *now = read_all(path);
    ck_assert_str_eq(now, "old");
    g_free(now);
    ck_assert_uint_eq(count_entries(dir), 3);
    ck_assert(strata_outfile_commit(out, &err));
    now = read_all(path);
    ck_assert_str_eq(now, "new content\n");
    g_free(now);
    ck_assert_uint_eq(count_entries(dir), 1);

    /* the file's mode follows the umask like a plain fopen, not mkstemp's 0600 */
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    mode_t mask = umask(022);
    umask(mask);
    ck_assert_uint_eq(st.st_mode & 0777, 0666 & ~mask);

    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}
END_TEST

START_TEST(abort_leaves_old_content)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "results.csv", NULL);
    char *fresh = g_build_filename(dir, "never.csv", NULL);
    ck_assert(g_file_set_contents(path, "old", -1, NULL));
    strata_outfile *out = strata_outfile_open(path, NULL);
    fputs("partial", strata_outfile_stream(out));
    strata_outfile_abort(out);
    char *now = read_all(path);
    ck_assert_str_eq(now, "old");
    g_free(now);
    /* a file that did not exist stays absent */
    out = strata_outfile_open(fresh, NULL);
    fputs("partial", strata_outfile_stream(out));
    strata_outfile_abort(out);
    ck_assert(!g_file_test(fresh, G_FILE_TEST_EXISTS));
    ck_assert_uint_eq(count_entries(dir), 1);
    strata_outfile_abort(NULL);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(fresh);
    g_free(dir);
}
END_TEST

START_TEST(unwritable_is_an_error_at_open)
{
    GError *err = NULL;
    ck_assert_ptr_null(strata_outfile_open("/nonexistent-dir/x/out.json", &err));
    ck_assert_int_eq(err->domain, STRATA_ERROR);
    ck_assert_int_eq(err->code, STRATA_ERROR_IO);
    ck_assert_ptr_nonnull(strstr(err->message, "cannot write '/nonexistent-dir/x/out.json'"));
    g_clear_error(&err);

    char *dir = strata_test_temp_dir();
    ck_assert_ptr_null(strata_outfile_open(dir, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "is a directory"));
    g_clear_error(&err);

    ck_assert_ptr_null(strata_outfile_open("", &err));
    g_clear_error(&err);

    if (getuid() != 0) { /* root writes anywhere */
        ck_assert_int_eq(chmod(dir, 0500), 0);
        char *path = g_build_filename(dir, "out.json", NULL);
        ck_assert_ptr_null(strata_outfile_open(path, &err));
        ck_assert_int_eq(err->code, STRATA_ERROR_IO);
        g_clear_error(&err);
        ck_assert(!strata_write_file_atomic(path, "x", 1, &err));
        g_clear_error(&err);
        g_free(path);
        chmod(dir, 0700);
    }
    g_rmdir(dir);
    g_free(dir);
}
END_TEST

START_TEST(write_file_atomic)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "a.trace", NULL);
    GError *err = NULL;
    ck_assert(strata_write_file_atomic(path, "strata-trace 1\n", 15, &err));
    char *now = read_all(path);
    ck_assert_str_eq(now, "strata-trace 1\n");
    g_free(now);
    ck_assert(strata_write_file_atomic(path, "", 0, &err));
    now = read_all(path);
    ck_assert_str_eq(now, "");
    g_free(now);
    ck_assert_uint_eq(count_entries(dir), 1);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}
END_TEST

/* With strata_outfile_gzip(), a ".gz" path is written gzip-compressed: 200,000 bytes (several chunks of
 * the compressing stream) decompress to what was written; an aborted one
 * leaves nothing behind. */
START_TEST(gz_path_is_compressed)
{
    char *dir = strata_test_temp_dir();
    char *path = g_build_filename(dir, "a.json.gz", NULL);
    GString *want = g_string_new(NULL);
    for (int i = 0; want->len < 200000; i++)
        g_string_append_printf(want, "line %d\n", i);
    GError *err = NULL;
    strata_outfile *out = strata_outfile_open(path, &err);
    ck_assert_ptr_nonnull(out);
    ck_assert(strata_outfile_gzip(out, &err));
    ck_assert_uint_eq(fwrite(want->str, 1, want->len, strata_outfile_stream(out)), want->len);
    ck_assert_msg(strata_outfile_commit(out, &err), "%s", err ? err->message : "");
    gzFile gz = gzopen(path, "rb");
    ck_assert_ptr_nonnull(gz);
    char *got = g_malloc(want->len + 1);
    ck_assert_int_eq(gzread(gz, got, (unsigned)want->len + 1), (int)want->len);
    ck_assert_int_eq(gzclose(gz), Z_OK);
    ck_assert(memcmp(got, want->str, want->len) == 0);
    GStatBuf st;
    ck_assert_int_eq(g_stat(path, &st), 0);
    ck_assert_int_lt(st.st_size, (goffset)want->len / 4); /* compressed */
    g_unlink(path);
    out = strata_outfile_open(path, &err);
    ck_assert(strata_outfile_gzip(out, &err));
    fputs("partial", strata_outfile_stream(out));
    strata_outfile_abort(out);
    ck_assert_uint_eq(count_entries(dir), 0);
    g_free(got);
    g_string_free(want, TRUE);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
}
END_TEST

/* A target that is not a regular file (a device such as /dev/null, here a
 * FIFO) is written in place: renaming a temporary over it (as root, for
 * /dev/null) would replace it with a plain file. */
START_TEST(special_file_written_in_place)
{
    char *dir = strata_test_temp_dir();
    char *fifo = g_build_filename(dir, "pipe", NULL);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    int reader = open(fifo, O_RDONLY | O_NONBLOCK); /* so that opening for writing does not block */
    ck_assert_int_ge(reader, 0);
    GError *err = NULL;
    strata_outfile *out = strata_outfile_open(fifo, &err);
    ck_assert_msg(out != NULL, "%s", err ? err->message : "");
    fputs("through\n", strata_outfile_stream(out));
    ck_assert(strata_outfile_commit(out, &err));
    char buf[16] = {0};
    ck_assert_int_eq(read(reader, buf, sizeof buf - 1), 8);
    ck_assert_str_eq(buf, "through\n");
    struct stat st;
    ck_assert_int_eq(stat(fifo, &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));
    out = strata_outfile_open(fifo, &err);
    ck_assert(out != NULL);
    strata_outfile_abort(out);
    ck_assert_int_eq(stat(fifo, &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));
    GDir *d = g_dir_open(dir, 0, NULL);
    ck_assert_str_eq(g_dir_read_name(d), "pipe"); /* no temporary left beside it */
    ck_assert_ptr_null(g_dir_read_name(d));
    g_dir_close(d);
    close(reader);
    g_unlink(fifo);
    g_rmdir(dir);
    g_free(fifo);
    g_free(dir);
}
END_TEST

START_TEST(stdout_dash)
{
    GError *err = NULL;
    strata_outfile *out = strata_outfile_open("-", &err);
    ck_assert_ptr_nonnull(out);
    ck_assert(strata_outfile_stream(out) == stdout);
    ck_assert_str_eq(strata_outfile_path(out), "-");
    ck_assert(strata_outfile_commit(out, &err));
    /* stdout is still usable */
    ck_assert_int_eq(fflush(stdout), 0);
    out = strata_outfile_open("-", &err);
    strata_outfile_abort(out);
    ck_assert(strata_write_file_atomic("-", "", 0, &err));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("outfile");
    TCase *tc = tcase_create("outfile");
    tcase_add_test(tc, commit_replaces_atomically);
    tcase_add_test(tc, abort_leaves_old_content);
    tcase_add_test(tc, unwritable_is_an_error_at_open);
    tcase_add_test(tc, write_file_atomic);
    tcase_add_test(tc, gz_path_is_compressed);
    tcase_add_test(tc, stdout_dash);
    tcase_add_test(tc, special_file_written_in_place);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
