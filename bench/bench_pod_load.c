/*
 * bench_pod_load.c: what loading and binding a pod costs as it grows, up
 * to the largest pod the hardware loader accepts (issue 25).
 *
 * The pod is configs/hw/tpu-v5e-256.ini resized with --set-style overrides
 * (hardware.devices=N, interconnect.ici.dims=AxA, 8 chips per host) to
 * N = 256 (16x16), 4096 (64x64), 16384 (128x128) and 65536 (256x256):
 * 65,536 is the most devices sim/hw/hw_devices.c accepts (MAX_DEVICES; at
 * 13 instances per chip and 6 per host the pod is about 0.9M memories,
 * units and links, under its MAX_INSTANCES of 4M). Its memories: 3 per
 * chip and 2 per host (212,992 at 65,536 chips).
 *
 * For each N, two child processes (fork, so each has its own peak):
 *   load      strata_hw_load() of the pod, nothing else: the baseline;
 *   load+bind the same load, then a binder (bind/bind.h) over a trace of
 *             a handful of copies (8 copies between the chips at the four
 *             corners of the torus and the middle, so 8 routes of up to
 *             N^0.5 hops, plus their allocs and frees), every op bound.
 * The parent takes each child's wall time (load and bind timed inside the
 * child, sent back on a pipe) and its peak resident memory (wait4's
 * ru_maxrss), and the child's peak virtual memory (VmPeak of
 * /proc/self/status, read at its end): a table calloc'ed but never
 * touched shows in VmPeak only. A child that dies (an allocation of
 * memories^2 bytes fails: the binder before issue 25) is reported as such.
 *
 * Prints a table, then per N
 *   RESULT name=pod_load_N value=LOAD_BIND_S baseline=LOAD_S ratio=R target=- unit=s
 *   RESULT name=pod_load_rss_N value=LOAD_BIND_MIB baseline=LOAD_MIB ratio=R target=1.25 unit=MiB
 *   RESULT name=pod_load_vm_N value=LOAD_BIND_MIB baseline=LOAD_MIB ratio=R target=1.25 unit=MiB
 * (binding a handful of copies must add little to the loaded model: memory
 * grows with the routes used, not with memories^2, which the last column
 * of the table shows for comparison).
 *
 * Only the hardware loader and the binder's public API are used, so the
 * same file builds against an older tree's library to measure it:
 *   cc -O2 -Isim $(pkg-config --cflags glib-2.0) bench/bench_pod_load.c \
 *      OLD/build/libstrata_core.a $(pkg-config --libs glib-2.0 ...)
 *
 * Usage: bench_pod_load [MAX_DEVICES]   (default 65536)
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench_clock.h"
#include "hw/hw.h"
#include "bind/bind.h"
#include "trace/reader.h"

#ifndef STRATA_SOURCE_DIR
#define STRATA_SOURCE_DIR "."
#endif

static const unsigned sides[] = {16, 64, 128, 256}; /* the torus side: N = side^2 */

typedef struct {
    double load_s, bind_s;
    unsigned memories, links, ops;
    double rss_mib, vm_mib;
    int died;           /* the signal that ended the child, or 0 */
    int exit_status;
} measure;

/* VmPeak of this process in KiB (0 when unknown). */
static unsigned long vm_peak_kib(void)
{
    char *text = NULL;
    unsigned long kib = 0;
    if (g_file_get_contents("/proc/self/status", &text, NULL, NULL)) {
        const char *at = strstr(text, "VmPeak:");
        if (at)
            kib = strtoul(at + strlen("VmPeak:"), NULL, 10);
        g_free(text);
    }
    return kib;
}

/* A handful of copies between far chips of the side x side torus. */
static char *write_trace(unsigned side)
{
    unsigned n = side * side, mid = side / 2 * side + side / 2;
    unsigned pairs[8][2] = {{0, n - 1}, {n - 1, 0}, {side - 1, n - side}, {n - side, side - 1},
                            {0, mid},   {mid, 0},   {mid, n - 1},         {side - 1, mid}};
    GString *t = g_string_new("strata-trace 1\n");
    for (unsigned i = 0; i < 8; i++) {
        g_string_append_printf(t, "alloc s%u 1MiB hbm@%u\nalloc d%u 1MiB hbm@%u\n", i, pairs[i][0], i, pairs[i][1]);
        g_string_append_printf(t, "copy d%u s%u\nfree s%u\nfree d%u\n", i, i, i, i);
    }
    char *path = NULL;
    int fd = g_file_open_tmp("bench-pod-XXXXXX.trace", &path, NULL);
    if (fd < 0 || write(fd, t->str, t->len) != (ssize_t)t->len) {
        fprintf(stderr, "bench_pod_load: cannot write a temporary trace\n");
        exit(1);
    }
    close(fd);
    g_string_free(t, TRUE);
    return path;
}

/* In the child: load (and bind), write "load_s bind_s memories links ops vm_kib" to fd. */
static int child(unsigned side, const char *hw_path, const char *trace, bool bind, int fd)
{
    char *devices = g_strdup_printf("hardware.devices=%u", side * side);
    char *dims = g_strdup_printf("interconnect.ici.dims=%ux%u", side, side);
    const char *overrides[] = {devices, dims, "hardware.devices_per_host=8", NULL};
    GError *err = NULL;
    double t0 = bench_wall_seconds();
    strata_hw *hw = strata_hw_load(hw_path, overrides, &err);
    if (!hw) {
        fprintf(stderr, "bench_pod_load: %s\n", err->message);
        return 1;
    }
    double t1 = bench_wall_seconds();
    unsigned ops = 0;
    if (bind) {
        strata_source *src = strata_trace_open(trace, &err);
        strata_bind_options opt = {.hw = hw};
        strata_binder *b = src ? strata_binder_new(src, &opt) : NULL;
        const strata_bound_op *op = NULL;
        int got = b && strata_binder_rewind(b, &err) ? 1 : -1;
        while (got == 1 && (got = strata_binder_next(b, &op, &err)) == 1)
            ops++;
        if (got < 0) {
            fprintf(stderr, "bench_pod_load: %s\n", err ? err->message : "bind failed");
            return 1;
        }
        strata_binder_free(b);
        strata_source_free(src);
    }
    double t2 = bench_wall_seconds();
    char *line = g_strdup_printf("%.6f %.6f %u %u %u %lu\n", t1 - t0, t2 - t1, strata_hw_memory_count(hw),
                                 strata_hw_link_count(hw), ops, vm_peak_kib());
    ssize_t w = write(fd, line, strlen(line));
    g_free(line);
    strata_hw_free(hw);
    g_free(devices);
    g_free(dims);
    return w > 0 ? 0 : 1;
}

static measure run_child(unsigned side, const char *hw_path, const char *trace, bool bind)
{
    measure m = {0};
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(1);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        _exit(child(side, hw_path, trace, bind, fds[1]));
    }
    close(fds[1]);
    char buf[256] = {0};
    ssize_t got = 0, r;
    while (got < (ssize_t)sizeof buf - 1 && (r = read(fds[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0)
        got += r;
    close(fds[0]);
    int status = 0;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    m.rss_mib = (double)ru.ru_maxrss / 1024.0;
    if (WIFSIGNALED(status))
        m.died = WTERMSIG(status);
    else
        m.exit_status = WEXITSTATUS(status);
    unsigned long vm_kib = 0;
    if (!m.died && m.exit_status == 0)
        sscanf(buf, "%lf %lf %u %u %u %lu", &m.load_s, &m.bind_s, &m.memories, &m.links, &m.ops, &vm_kib);
    m.vm_mib = (double)vm_kib / 1024.0;
    return m;
}

static bool ok(const measure *m) { return !m->died && m->exit_status == 0; }

int main(int argc, char **argv)
{
    unsigned max = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 65536;
    char *hw_path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "tpu-v5e-256.ini", NULL);
    if (!g_file_test(hw_path, G_FILE_TEST_EXISTS)) { /* run from a build directory beside the sources */
        g_free(hw_path);
        hw_path = g_build_filename("..", "configs", "hw", "tpu-v5e-256.ini", NULL);
    }
    printf("%8s %10s %9s %10s %10s %10s %10s %11s %11s %14s\n", "chips", "memories", "links", "load s", "bind s",
           "rss load", "rss +bind", "vm load", "vm +bind", "memories^2 B");
    for (size_t i = 0; i < G_N_ELEMENTS(sides); i++) {
        unsigned side = sides[i], n = side * side;
        if (n > max)
            break;
        char *trace = write_trace(side);
        measure base = run_child(side, hw_path, trace, false);
        measure full = run_child(side, hw_path, trace, true);
        g_remove(trace);
        g_free(trace);
        double squared = (double)base.memories * base.memories;
        if (!ok(&base)) {
            printf("%8u  load failed (%s %d)\n", n, base.died ? "signal" : "exit", base.died ? base.died : base.exit_status);
            continue;
        }
        if (!ok(&full)) {
            printf("%8u %10u %9u %10.3f %10s %9.1fM %10s %10.1fM %11s %14.3g  load+bind died (%s %d)\n", n,
                   base.memories, base.links, base.load_s, "-", base.rss_mib, "-", base.vm_mib, "-", squared,
                   full.died ? "signal" : "exit", full.died ? full.died : full.exit_status);
            printf("RESULT name=pod_load_%u value=- baseline=%.4f ratio=- target=- unit=s died=%d\n", n, base.load_s,
                   full.died ? full.died : full.exit_status);
            continue;
        }
        printf("%8u %10u %9u %10.3f %10.4f %9.1fM %9.1fM %10.1fM %10.1fM %14.3g\n", n, full.memories, full.links,
               full.load_s, full.bind_s, base.rss_mib, full.rss_mib, base.vm_mib, full.vm_mib, squared);
        double total = full.load_s + full.bind_s;
        printf("RESULT name=pod_load_%u value=%.4f baseline=%.4f ratio=%.3f target=- unit=s memories=%u links=%u "
               "ops=%u bind_s=%.4f\n", n, total, base.load_s, base.load_s > 0 ? total / base.load_s : 0.0,
               full.memories, full.links, full.ops, full.bind_s);
        printf("RESULT name=pod_load_rss_%u value=%.1f baseline=%.1f ratio=%.3f target=1.25 unit=MiB\n", n,
               full.rss_mib, base.rss_mib, base.rss_mib > 0 ? full.rss_mib / base.rss_mib : 0.0);
        printf("RESULT name=pod_load_vm_%u value=%.1f baseline=%.1f ratio=%.3f target=1.25 unit=MiB\n", n,
               full.vm_mib, base.vm_mib, base.vm_mib > 0 ? full.vm_mib / base.vm_mib : 0.0);
    }
    g_free(hw_path);
    return 0;
}
