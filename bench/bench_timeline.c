/*
 * bench_timeline.c: the cost of `strata run --timeline` against the same
 * run without it (target: at most 1.1x its CPU time), and its memory, in
 * each of its formats.
 *
 * 1. `strata gen transformer layers=L` (default 10000: 1.35M ops) into a
 *    temporary trace.
 * 2. REPS times (default 5), in turn: `strata run` on it (h100 with a
 *    100 TB hbm, so it runs to the end), the same with `--timeline
 *    t.pftrace` (Perfetto's protobuf trace; right after the run it is
 *    compared with, the tightest target: load on a shared machine drifts
 *    over seconds), with `--timeline t.json` and with `--timeline
 *    t.json.gz`; each a child process, its CPU time
 *    (user + system) and peak RSS from wait4(). The previous repetition's
 *    file is removed before each timeline run, outside the measured child:
 *    a run that renames its output over an old one of 700 MB also pays the
 *    kernel's freeing of the old file's pages (about 0.7 s of system time
 *    here), a cost of replacing a file, not of writing the timeline.
 * 3. Prints, with the median of the per-repetition ratios, their range and
 *    best_ratio, the fastest repetition's value over the fastest
 *    baseline's (as bench_engine: on a machine shared with other work,
 *    interference only adds time, so the fastest runs are the least
 *    disturbed; on this 2-core machine at load 3 to 20 single repetitions
 *    of the 3 s run vary by about 10%):
 *      RESULT name=timeline_run    value=TL_S baseline=RUN_S ratio=R target=1.3 unit=s
 *      RESULT name=timeline_gz_run value=GZ_S baseline=RUN_S ratio=R target=- unit=s
 *      RESULT name=timeline_pftrace_run value=PF_S baseline=RUN_S ratio=R target=1.1 unit=s
 *      RESULT name=timeline_rss    value=TL_MIB baseline=RUN_MIB ratio=R target=1.25 unit=MiB
 *      RESULT name=timeline_pftrace_rss value=PF_MIB baseline=RUN_MIB ratio=R target=1.25 unit=MiB
 *    (the timeline is written while the run goes: its memory is the run's
 *    own, which grows with the live buffers, plus the writer's lanes and
 *    live-buffer table, never the events).
 *
 * Usage: bench_timeline [LAYERS [REPS]]
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "child_run.h"
#include "repeats.h"

enum { MAX_REPS = 15 };

static void result(const char *name, const double *value, const double *base, int n, const char *target,
                   const char *unit, const char *extra)
{
    double ratios[MAX_REPS], lo, hi, fastest, slowest, fastest_base, slowest_base;
    for (int i = 0; i < n; i++)
        ratios[i] = value[i] / base[i];
    bench_range(ratios, n, &lo, &hi);
    bench_range(value, n, &fastest, &slowest);
    bench_range(base, n, &fastest_base, &slowest_base);
    printf("RESULT name=%s value=%.3f baseline=%.3f ratio=%.3f target=%s unit=%s ratio_min=%.3f ratio_max=%.3f "
           "best_ratio=%.3f reps=%d%s\n",
           name, bench_median(value, n), bench_median(base, n), bench_median(ratios, n), target, unit, lo, hi,
           fastest / fastest_base, n, extra);
}

int main(int argc, char **argv)
{
    long layers = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    reps = CLAMP(reps, 1, MAX_REPS);
    char *dir = g_path_get_dirname(argv[0]);
    char *strata = g_build_filename(dir, "strata", NULL);
    char *hw = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "h100.ini", NULL);
    char *tmp = g_dir_make_tmp("bench-timeline-XXXXXX", NULL);
    char *trace = g_build_filename(tmp, "t.trace", NULL);
    char *json = g_build_filename(tmp, "t.json", NULL);
    char *gz = g_build_filename(tmp, "t.json.gz", NULL);
    char *pf = g_build_filename(tmp, "t.pftrace", NULL);
    char *layers_arg = g_strdup_printf("layers=%ld", layers);
    const char *gen[] = {strata, "gen", "transformer", layers_arg, "-o", trace, NULL};
    child_usage u;
    if (!tmp || !child_run(gen, 0, &u))
        return 1;
    printf("bench_timeline: strata gen transformer %s: %.2f s CPU, %.1f MiB RSS\n", layers_arg, u.cpu_s, u.rss_mib);
    const char *run[] = {strata, "run", "--hw", hw, "--set", "memory.hbm.capacity=100TB", "--trace", trace, "-q",
                         NULL, NULL};
    enum { KINDS = 4 };
    static const char *const kinds[KINDS] = {"run", "pftrace", "timeline", "gz"};
    double cpu[KINDS][MAX_REPS], rss[KINDS][MAX_REPS];
    const char *const outs[KINDS] = {NULL, pf, json, gz};
    for (int r = 0; r < reps; r++) {
        for (int k = 0; k < KINDS; k++) {
            char *opt = outs[k] ? g_strdup_printf("--timeline=%s", outs[k]) : NULL;
            if (outs[k])
                g_remove(outs[k]);
            run[9] = opt;
            bool ok = child_run(run, 0, &u);
            g_free(opt);
            if (!ok)
                return 1;
            cpu[k][r] = u.cpu_s;
            rss[k][r] = u.rss_mib;
            GStatBuf st;
            printf("rep %d %-9s %.3f s CPU %.3f s wall %.1f MiB RSS%s", r + 1, kinds[k], u.cpu_s, u.wall_s, u.rss_mib,
                   outs[k] ? "" : "\n");
            if (outs[k] && g_stat(outs[k], &st) == 0)
                printf(", %.1f MB written\n", (double)st.st_size / 1e6);
        }
    }
    result("timeline_run", cpu[2], cpu[0], reps, "1.3", "s", "");
    result("timeline_gz_run", cpu[3], cpu[0], reps, "-", "s", "");
    result("timeline_pftrace_run", cpu[1], cpu[0], reps, "1.1", "s", "");
    result("timeline_rss", rss[2], rss[0], reps, "1.25", "MiB", "");
    result("timeline_pftrace_rss", rss[1], rss[0], reps, "1.25", "MiB", "");
    g_remove(trace);
    g_remove(json);
    g_remove(gz);
    g_remove(pf);
    g_rmdir(tmp);
    g_free(layers_arg);
    g_free(pf);
    g_free(gz);
    g_free(json);
    g_free(trace);
    g_free(tmp);
    g_free(hw);
    g_free(strata);
    g_free(dir);
    return 0;
}
