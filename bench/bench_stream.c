/*
 * bench_stream.c: a 5M-op trace must stream (target: at most 200 MiB RSS).
 *
 * 1. Writes a 5,000,000-op trace through the trace writer (allocs, an H2D
 *    copy on its own stream ordered by record/wait, computes with operands,
 *    frees; at most a few buffers live at once), into a temporary file.
 * 2. Reads it back through the reader and the checker in this process and
 *    compares the time with a bare getline() pass over the same file (the
 *    I/O floor): RESULT trace_read_check.
 * 3. Runs `strata check` and `strata run` on it as child processes and
 *    reports each one's peak RSS from wait4(): RESULT stream_rss_check and
 *    stream_rss_run, target 200 MiB.
 *
 * Output: RESULT lines (bench/README.md). Usage: bench_stream [N_OPS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "trace/checked.h"
#include "trace/reader.h"
#include "trace/writer.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 10 ops per step; buffers x<i%4> cycle, so at most a handful are live. */
static uint64_t write_trace(FILE *f, uint64_t n_ops)
{
    strata_trace_writer *w = strata_trace_writer_new(f, "bench_stream: generated streaming benchmark");
    uint64_t ops = 0;
    char x[16], y[16], h[16];
    strata_op op;
    memset(&op, 0, sizeof op);
    op.kind = STRATA_OP_ALLOC;
    op.stream = "h2d";
    op.name = "staging";
    op.memory = "host";
    op.size = 1 << 20;
    strata_trace_writer_write(w, &op, NULL);
    ops++;
    for (uint64_t i = 0; ops + 10 <= n_ops; i++) {
        snprintf(x, sizeof x, "x%u", (unsigned)(i % 4));
        snprintf(y, sizeof y, "y%u", (unsigned)(i % 4));
        snprintf(h, sizeof h, "e%u", (unsigned)(i % 8));
        const char *ins[1] = {x};
        const char *outs[1] = {y};
        strata_op seq[10];
        memset(seq, 0, sizeof seq);
        seq[0] = (strata_op){.kind = STRATA_OP_ALLOC, .stream = "main", .name = x, .size = 64 * 1024 + (i % 16) * 4096,
                             .tag = STRATA_TAG_ACTIVATION, .dtype = STRATA_DTYPE_BF16};
        seq[1] = (strata_op){.kind = STRATA_OP_RECORD, .stream = "main", .name = h};
        seq[2] = (strata_op){.kind = STRATA_OP_WAIT, .stream = "h2d", .name = h};
        seq[3] = (strata_op){.kind = STRATA_OP_COPY, .stream = "h2d", .name = x, .src = "staging",
                             .has_bytes = true, .bytes = 64 * 1024};
        seq[4] = (strata_op){.kind = STRATA_OP_RECORD, .stream = "h2d", .name = h};
        seq[5] = (strata_op){.kind = STRATA_OP_WAIT, .stream = "main", .name = h};
        seq[6] = (strata_op){.kind = STRATA_OP_ALLOC, .stream = "main", .name = y, .size = 128 * 1024,
                             .tag = STRATA_TAG_TEMP};
        seq[7] = (strata_op){.kind = STRATA_OP_COMPUTE, .stream = "main", .name = "k", .has_flops = true,
                             .flops = 2e9, .ins = ins, .n_ins = 1, .outs = outs, .n_outs = 1};
        seq[8] = (strata_op){.kind = STRATA_OP_FREE, .stream = "main", .name = x};
        seq[9] = (strata_op){.kind = STRATA_OP_FREE, .stream = "main", .name = y};
        for (int k = 0; k < 10; k++)
            strata_trace_writer_write(w, &seq[k], NULL);
        ops += 10;
    }
    strata_trace_writer_free(w);
    return ops;
}

/* Runs argv; returns the child's peak RSS in MiB (or -1) and its exit status. */
static double child_rss_mib(char *const argv[], int *status, double *seconds)
{
    fflush(stdout); /* else the child's freopen flushes our buffered lines again */
    double t0 = now();
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int ws = 0;
    struct rusage ru;
    if (wait4(pid, &ws, 0, &ru) < 0)
        return -1;
    *seconds = now() - t0;
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    return (double)ru.ru_maxrss / 1024.0; /* KiB on Linux */
}

int main(int argc, char **argv)
{
    uint64_t n_ops = argc > 1 ? strtoull(argv[1], NULL, 10) : 5000000;
    char *dir = g_path_get_dirname(argv[0]);
    char *strata = g_build_filename(dir, "strata", NULL);
    char *hw = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "test-simple.ini", NULL);
    char *path = NULL;
    int fd = g_file_open_tmp("bench-stream-XXXXXX.trace", &path, NULL);
    FILE *f = fdopen(fd, "w");
    double t0 = now();
    uint64_t ops = write_trace(f, n_ops);
    fclose(f);
    double t_write = now() - t0;
    printf("wrote %" G_GUINT64_FORMAT " ops to %s in %.2f s\n", ops, path, t_write);

    /* Baseline: a bare getline() pass (the I/O floor). */
    t0 = now();
    FILE *raw = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    uint64_t lines = 0;
    while (getline(&line, &cap, raw) > 0)
        lines++;
    free(line);
    fclose(raw);
    double t_raw = now() - t0;

    t0 = now();
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    if (!src) {
        fprintf(stderr, "bench_stream: %s\n", err->message);
        return 1;
    }
    src = strata_checked_source_new(src, NULL);
    const strata_op *op;
    uint64_t read_ops = 0;
    while (strata_source_next(src, &op, &err) == 1)
        read_ops++;
    double t_read = now() - t0;
    if (err) {
        fprintf(stderr, "bench_stream: %s\n", err->message);
        return 1;
    }
    strata_source_free(src);
    printf("read+check %" G_GUINT64_FORMAT " ops in %.2f s (%.2f M ops/s); getline over %" G_GUINT64_FORMAT
           " lines %.2f s\n",
           read_ops, t_read, (double)read_ops / t_read / 1e6, lines, t_raw);
    printf("RESULT name=trace_read_check value=%.3f baseline=%.3f ratio=%.2f target=- unit=s\n", t_read, t_raw,
           t_read / t_raw);
    printf("RESULT name=trace_read_check_rate value=%.2f baseline=- ratio=- target=- unit=Mops/s\n",
           (double)read_ops / t_read / 1e6);

    int status = 0;
    double secs = 0;
    char *check_argv[] = {strata, "check", "--trace", path, NULL};
    double rss = child_rss_mib(check_argv, &status, &secs);
    printf("strata check: exit %d, %.2f s, peak RSS %.1f MiB\n", status, secs, rss);
    printf("RESULT name=stream_rss_check value=%.1f baseline=- ratio=- target=200 unit=MiB\n", status == 0 ? rss : -1.0);

    char *run_argv[] = {strata, "run", "--hw", hw, "--trace", path, "--quiet", NULL};
    rss = child_rss_mib(run_argv, &status, &secs);
    printf("strata run: exit %d, %.2f s (%.2f M ops/s), peak RSS %.1f MiB\n", status, secs,
           (double)ops / secs / 1e6, rss);
    printf("RESULT name=stream_rss_run value=%.1f baseline=- ratio=- target=200 unit=MiB\n", status == 0 ? rss : -1.0);

    unlink(path);
    g_free(path);
    g_free(hw);
    g_free(strata);
    g_free(dir);
    return 0;
}
