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

/* The disk of the child's temporary spill files (sim/engine/engine_spill.c:
 * TMPDIR/strata-spill-XXXXXX, unlinked, so seen only through /proc/PID/fd),
 * their st_blocks * 512 summed, sampled every 5 ms while it runs: the most
 * seen, and the last seen while one was still open (the end of the replay,
 * within a sample). Informative: a peak shorter than a sample can be missed. */
typedef struct child_spill {
    double peak_mib, last_mib;
    unsigned samples; /* with a spill file open */
} child_spill;

/* child_run, sampling the spill files into *spill. */
bool child_run_spill(const char *const *argv, int ok_status, child_usage *out, child_spill *spill);

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
