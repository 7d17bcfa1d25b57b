/*
 * child_run.c: a command as a measured child process, and its benchmark's
 * setting (child_run.h).
 */
#include "child_run.h"
#include "bench_clock.h"
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static double tv_seconds(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6; }

/* The disk of pid's open spill files now (bytes), and whether one is open. */
static double spill_bytes(pid_t pid, bool *open)
{
    char *fds = g_strdup_printf("/proc/%d/fd", (int)pid);
    GDir *d = g_dir_open(fds, 0, NULL);
    double bytes = 0;
    *open = false;
    for (const char *name; d && (name = g_dir_read_name(d));) {
        char *fd = g_build_filename(fds, name, NULL);
        char *target = g_file_read_link(fd, NULL);
        struct stat st;
        if (target && strstr(target, "/strata-spill-") && stat(fd, &st) == 0) { /* follows to the unlinked file */
            bytes += (double)st.st_blocks * 512.0;
            *open = true;
        }
        g_free(target);
        g_free(fd);
    }
    if (d)
        g_dir_close(d);
    g_free(fds);
    return bytes;
}

bool child_run(const char *const *argv, int ok_status, child_usage *out)
{
    return child_run_spill(argv, ok_status, out, NULL);
}

bool child_run_spill(const char *const *argv, int ok_status, child_usage *out, child_spill *spill)
{
    fflush(NULL);
    double t0 = bench_wall_seconds();
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int ws = 0;
    struct rusage ru;
    if (pid < 0)
        return false;
    if (spill) {
        *spill = (child_spill){0};
        pid_t got;
        while ((got = wait4(pid, &ws, WNOHANG, &ru)) == 0) {
            bool open = false;
            double mib = spill_bytes(pid, &open) / 1048576.0;
            if (open) {
                spill->peak_mib = MAX(spill->peak_mib, mib);
                spill->last_mib = mib;
                spill->samples++;
            }
            g_usleep(5000);
        }
        if (got < 0)
            return false;
    } else if (wait4(pid, &ws, 0, &ru) < 0) {
        return false;
    }
    out->wall_s = bench_wall_seconds() - t0;
    out->cpu_s = tv_seconds(ru.ru_utime) + tv_seconds(ru.ru_stime);
    out->rss_mib = (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
    out->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    if (out->status != 0 && out->status != ok_status) {
        fprintf(stderr, "%s exited with status %d\n", argv[0], out->status);
        return false;
    }
    return true;
}

child_bench child_bench_open(const char *dir_template)
{
    char *self = g_file_read_link("/proc/self/exe", NULL);
    char *self_dir = self ? g_path_get_dirname(self) : g_strdup(".");
    child_bench b = {g_build_filename(self_dir, "strata", NULL), g_dir_make_tmp(dir_template, NULL)};
    g_free(self_dir);
    g_free(self);
    return b;
}

void child_bench_close(child_bench *b)
{
    if (b->dir)
        g_rmdir(b->dir);
    g_free(b->dir);
    g_free(b->strata);
    *b = (child_bench){0};
}

FILE *child_create(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    return f;
}
