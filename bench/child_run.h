/*
 * child_run.h: runs a command as a child process and measures it, for the
 * benchmarks that time the strata CLI as a user would run it: its CPU time
 * (user + system, so that a busy shared machine does not skew ratios), wall
 * time and peak RSS, from wait4(); and the setting such a benchmark runs it
 * in: the strata binary beside the benchmark, a temporary folder for the
 * inputs it writes, a file created or the benchmark stopped.
 */
#ifndef STRATA_CHILD_RUN_H
#define STRATA_CHILD_RUN_H

#include <stdbool.h>
#include <stdio.h>

typedef struct child_usage {
    double cpu_s, wall_s;
    double rss_mib;   /* peak resident set */
    int status;       /* exit status, -1 when killed */
} child_usage;

/* Runs argv[0] (a path, or a name searched in PATH) with argv, standard output to /dev/null; false when
 * it could not start or exited with a status other than 0 or `ok_status`. */
bool child_run(const char *const *argv, int ok_status, child_usage *out);

/* A benchmark's setting: strata is the binary beside this program (the build folder's), dir a fresh
 * temporary folder for the inputs it writes (NULL when it could not be made). */
typedef struct child_bench {
    char *strata;
    char *dir;
} child_bench;

/* dir_template: g_dir_make_tmp's ("bench-NAME-XXXXXX"). */
child_bench child_bench_open(const char *dir_template);
/* Removes the folder (its files removed by then) and frees both. */
void child_bench_close(child_bench *b);
/* path created for writing, or the benchmark stopped (exit 1) with the reason. */
FILE *child_create(const char *path);

#endif
