/*
 * fuzz_input.h: a fuzz input as a file that a parser opens by path, with
 * no disk traffic (shared by the fuzz targets, header-only since each
 * target is one .c file).
 *
 * fuzz_memfd() puts the bytes in a memfd, opened by the parser as
 * /proc/self/fd/N: a fresh file per input, no write-then-rename, no fsync.
 * fuzz_dir() is a private directory for importers that read a directory of
 * named files, on tmpfs (/dev/shm) where there is one; fuzz_put() writes
 * one of its files with plain write() (no fsync, no rename). The directory
 * and the files put in it are removed when the target exits normally.
 * fuzz_put_parts() writes an input made of several files joined by lines
 * `====` (the XLA and validate targets); tests/test_fuzz_regressions.c
 * splits a saved input of theirs with it too, so a regression replays the
 * very files the target read.
 *
 * Writing through the page cache of a disk (g_file_set_contents: a
 * temporary, fsync, rename) cost more than the parser itself: about three
 * quarters of the CPU time of fuzz_kineto and fuzz_xla, and most of their
 * wall time waiting on the disk.
 */
#ifndef STRATA_FUZZ_INPUT_H
#define STRATA_FUZZ_INPUT_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <glib.h>
#include <glib/gstdio.h>

/* The bytes as an open memfd (close it after use) named by path; -1 when
 * it cannot be made. */
static inline int fuzz_memfd(const uint8_t *data, size_t size, char path[64])
{
    int fd = memfd_create("fuzz-input", 0);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    return fd;
}

/* path (truncated) holds exactly the n bytes at p; false when it cannot. */
static inline bool fuzz_put(const char *path, const char *p, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return false;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, p + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    return close(fd) == 0 && done == n;
}

/* The parts of data joined by lines "====" (each keeps its last newline),
 * written as dir/names[0 .. n-1] with fuzz_put(); a name past the last part
 * is removed. Returns how many parts were written. */
static inline int fuzz_put_parts(const char *dir, const uint8_t *data, size_t size, const char *const *names, int n)
{
    const char *p = (const char *)data, *end = p + size;
    int written = 0;
    for (int i = 0; i < n; i++) {
        char *path = g_build_filename(dir, names[i], NULL);
        if (p) {
            const char *sep = g_strstr_len(p, end - p, "\n====\n");
            written += fuzz_put(path, p, (size_t)((sep ? sep + 1 : end) - p));
            p = sep ? sep + 6 : NULL;
        } else {
            unlink(path);
        }
        g_free(path);
    }
    return written;
}

static char *fuzz_dir_path;

static inline void fuzz_dir_remove(void)
{
    GDir *d = g_dir_open(fuzz_dir_path, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        char *path = g_build_filename(fuzz_dir_path, name, NULL);
        g_unlink(path);
        g_free(path);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(fuzz_dir_path);
    g_free(fuzz_dir_path);
    fuzz_dir_path = NULL;
}

/* The target's private directory, made on first use; NULL when it cannot. */
static inline const char *fuzz_dir(const char *prefix)
{
    if (fuzz_dir_path)
        return fuzz_dir_path;
    const char *base = g_file_test("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir();
    char *tmpl = g_strdup_printf("%s/%s-XXXXXX", base, prefix);
    if (g_mkdtemp(tmpl) == NULL) {
        g_free(tmpl);
        return NULL;
    }
    fuzz_dir_path = tmpl;
    atexit(fuzz_dir_remove);
    return fuzz_dir_path;
}

#endif
