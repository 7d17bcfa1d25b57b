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
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static double tv_seconds(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6; }

bool child_run(const char *const *argv, int ok_status, child_usage *out)
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
    if (pid < 0 || wait4(pid, &ws, 0, &ru) < 0)
        return false;
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
