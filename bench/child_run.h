/*
 * child_run.h: runs a command as a child process and measures it, for the
 * benchmarks that time the strata CLI as a user would run it: its CPU time
 * (user + system, so that a busy shared machine does not skew ratios), wall
 * time and peak RSS, from wait4().
 */
#ifndef STRATA_CHILD_RUN_H
#define STRATA_CHILD_RUN_H

#include <stdbool.h>

typedef struct child_usage {
    double cpu_s, wall_s;
    double rss_mib;   /* peak resident set */
    int status;       /* exit status, -1 when killed */
} child_usage;

/* Runs argv[0] (a path, or a name searched in PATH) with argv, standard output to /dev/null; false when
 * it could not start or exited with a status other than 0 or `ok_status`. */
bool child_run(const char *const *argv, int ok_status, child_usage *out);

#endif
