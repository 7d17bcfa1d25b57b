/*
 * child_run.c: a command as a measured child process (child_run.h).
 */
#include "child_run.h"
#include "bench_clock.h"
#include <stdio.h>
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
