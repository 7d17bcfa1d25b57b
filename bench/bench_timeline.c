/*
 * bench_timeline.c: the cost of `strata run --timeline` against the same
 * run without it (target: at most 1.1x its CPU time), and its memory, in
 * each of its formats; CPU time and wall-clock time both (the timeline is
 * placed, encoded and written on the run's thread: the wall ratio shows
 * what the kernel's writes and waits add beside the CPU).
 *
 * 1. `strata gen transformer layers=L` (default 10000: 1.35M ops) into a
 *    temporary trace (and, with the cases fsdp8 and fsdp64, an 8-GPU FSDP
 *    step, `gen transformer layers=200 mesh=data:8 sharding=fsdp`, run on
 *    dgx-h100, and a 64-chip one, `mesh=fsdp:64 sharding=fsdp layers=48
 *    batch=64`, run on tpu-v5p-64, both with `classes` by default).
 * 2. REPS times (default 5), in turn: `strata run` on it (h100 with a
 *    100 TB hbm, so it runs to the end), the same with `--timeline
 *    t.pftrace` (Perfetto's protobuf trace; right after the run it is
 *    compared with, the tightest target: load on a shared machine drifts
 *    over seconds), with `--timeline t.json` and with `--timeline
 *    t.json.gz`; each a child process, its CPU time
 *    (user + system), wall time and peak RSS from wait4(). The previous repetition's
 *    file is removed before each timeline run, outside the measured child:
 *    a run that renames its output over an old one of 700 MB also pays the
 *    kernel's freeing of the old file's pages (about 0.7 s of system time
 *    here), a cost of replacing a file, not of writing the timeline.
 *    With a baseline binary BASE (another build's strata, e.g. main's),
 *    each repetition runs BASE's run and timelines first, then this
 *    build's, so that both see the same load (the gzip one left out).
 * 3. Prints, with the median of the per-repetition ratios, their range and
 *    best_ratio, the fastest repetition's value over the fastest
 *    baseline's (as bench_engine: on a machine shared with other work,
 *    interference only adds time, so the fastest runs are the least
 *    disturbed; on this 2-core machine at load 3 to 20 single repetitions
 *    of the 3 s run vary by about 10%):
 *      RESULT name=timeline_run    value=TL_S baseline=RUN_S ratio=R target=1.3 unit=s
 *      RESULT name=timeline_gz_run value=GZ_S baseline=RUN_S ratio=R target=- unit=s
 *      RESULT name=timeline_pftrace_run value=PF_S baseline=RUN_S ratio=R target=1.1 unit=s
 *      RESULT name=timeline_wall   (and timeline_pftrace_wall): the same in wall time, target -
 *      RESULT name=timeline_rss    value=TL_MIB baseline=RUN_MIB ratio=R target=1.25 unit=MiB
 *      RESULT name=timeline_pftrace_rss value=PF_MIB baseline=RUN_MIB ratio=R target=1.25 unit=MiB
 *    (the timeline is written while the run goes: its memory is the run's
 *    own, which grows with the live buffers, plus the writer's lanes and
 *    live-buffer table and its bounded queue, never the events); BASE's
 *    figures named base_NAME; the other cases' Perfetto ones
 *    NAME_CASE (timeline_pftrace_run_fsdp8, timeline_pftrace_wall_fsdp8...).
 *
 * Usage: bench_timeline [LAYERS [REPS [BASE|- [CASES]]]]
 *   CASES: a comma-separated list of transformer (the default), fsdp8, fsdp64.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "child_run.h"
#include "repeats.h"

enum { MAX_REPS = 15, KINDS = 4, BINS = 2 };
enum { K_RUN, K_PF, K_JSON, K_GZ };

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

/* A case: what `strata gen` makes and the hardware it runs on. */
typedef struct bench_case {
    const char *name, *hw, *set;
    const char *gen[6]; /* after `gen`; LAYERS stands for layers=L */
    bool json;          /* also the JSON (and gzip) timelines */
} bench_case;

static const bench_case cases[] = {
    {"transformer", "h100.ini", "memory.hbm.capacity=100TB", {"transformer", "LAYERS"}, true},
    {"fsdp8", "dgx-h100.ini", NULL, {"transformer", "layers=200", "mesh=data:8", "sharding=fsdp"}, false},
    {"fsdp64", "tpu-v5p-64.ini", NULL, {"transformer", "mesh=fsdp:64", "sharding=fsdp", "layers=48", "batch=64"},
     false},
};

/* Measurements, per binary (0: this build, 1: BASE), kind and repetition. */
typedef struct usage_table {
    double cpu[BINS][KINDS][MAX_REPS], wall[BINS][KINDS][MAX_REPS], rss[BINS][KINDS][MAX_REPS];
} usage_table;

static void report(const bench_case *c, usage_table *u, int reps, bool with_base)
{
    bool main_case = c == &cases[0];
    for (int b = 0; b < (with_base ? BINS : 1); b++) {
        const char *pre = b ? "base_" : "";
        char *suf = main_case ? g_strdup("") : g_strdup_printf("_%s", c->name);
        char name[96];
#define NAME(x) (g_snprintf(name, sizeof name, "%s%s%s", pre, x, suf), name)
        if (c->json) {
            result(NAME("timeline_run"), u->cpu[b][K_JSON], u->cpu[b][K_RUN], reps, "1.3", "s", "");
            result(NAME("timeline_wall"), u->wall[b][K_JSON], u->wall[b][K_RUN], reps, "-", "s", "");
            if (!with_base)
                result(NAME("timeline_gz_run"), u->cpu[b][K_GZ], u->cpu[b][K_RUN], reps, "-", "s", "");
        }
        result(NAME("timeline_pftrace_run"), u->cpu[b][K_PF], u->cpu[b][K_RUN], reps, "1.1", "s", "");
        result(NAME("timeline_pftrace_wall"), u->wall[b][K_PF], u->wall[b][K_RUN], reps, "-", "s", "");
        if (c->json)
            result(NAME("timeline_rss"), u->rss[b][K_JSON], u->rss[b][K_RUN], reps, "1.25", "MiB", "");
        result(NAME("timeline_pftrace_rss"), u->rss[b][K_PF], u->rss[b][K_RUN], reps, "1.25", "MiB", "");
#undef NAME
        g_free(suf);
    }
}

/* Runs case c REPS times (bins: this build, then BASE when given); false on a failed child. */
static bool run_case(const bench_case *c, const char *strata, const char *base, const char *tmp, long layers,
                     int reps)
{
    char *trace = g_build_filename(tmp, "t.trace", NULL);
    char *layers_arg = g_strdup_printf("layers=%ld", layers);
    const char *gen[12] = {strata, "gen"};
    int g = 2;
    for (int i = 0; i < 6 && c->gen[i]; i++)
        gen[g++] = strcmp(c->gen[i], "LAYERS") ? c->gen[i] : layers_arg;
    gen[g++] = "-o";
    gen[g++] = trace;
    gen[g] = NULL;
    child_usage cu;
    if (!child_run(gen, 0, &cu))
        return false;
    printf("bench_timeline: case %s: strata gen %s: %.2f s CPU, %.1f MiB RSS\n", c->name, c->gen[0], cu.cpu_s,
           cu.rss_mib);
    char *hw = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", c->hw, NULL);
    static const char *const kinds[KINDS] = {"run", "pftrace", "timeline", "gz"};
    char *outs[KINDS] = {NULL, g_build_filename(tmp, "t.pftrace", NULL), g_build_filename(tmp, "t.json", NULL),
                         g_build_filename(tmp, "t.json.gz", NULL)};
    int n_kinds = c->json ? (base ? K_GZ : KINDS) : K_JSON;
    usage_table *u = g_new0(usage_table, 1);
    bool ok = true;
    for (int r = 0; r < reps && ok; r++) {
        for (int bb = base ? 1 : 0; bb >= 0 && ok; bb--) {
            const char *run[12] = {bb ? base : strata, "run", "--hw", hw, "--trace", trace, "-q"};
            int a = 7;
            if (c->set) {
                run[a++] = "--set";
                run[a++] = c->set;
            }
            for (int k = 0; k < n_kinds && ok; k++) {
                char *opt = outs[k] ? g_strdup_printf("--timeline=%s", outs[k]) : NULL;
                if (outs[k])
                    g_remove(outs[k]);
                run[a] = opt;
                ok = child_run(run, 0, &cu);
                g_free(opt);
                u->cpu[bb][k][r] = cu.cpu_s;
                u->wall[bb][k][r] = cu.wall_s;
                u->rss[bb][k][r] = cu.rss_mib;
                GStatBuf st;
                printf("rep %d %s%-9s %.3f s CPU %.3f s wall %.1f MiB RSS%s", r + 1, bb ? "base " : "", kinds[k],
                       cu.cpu_s, cu.wall_s, cu.rss_mib, outs[k] ? "" : "\n");
                if (outs[k] && g_stat(outs[k], &st) == 0)
                    printf(", %.1f MB written\n", (double)st.st_size / 1e6);
                else if (outs[k])
                    printf("\n");
                fflush(stdout);
            }
        }
    }
    if (ok)
        report(c, u, reps, base != NULL);
    for (int k = 0; k < KINDS; k++) {
        if (outs[k])
            g_remove(outs[k]);
        g_free(outs[k]);
    }
    g_remove(trace);
    g_free(u);
    g_free(hw);
    g_free(layers_arg);
    g_free(trace);
    return ok;
}

int main(int argc, char **argv)
{
    long layers = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    reps = CLAMP(reps, 1, MAX_REPS);
    const char *base = argc > 3 && strcmp(argv[3], "-") != 0 ? argv[3] : NULL;
    const char *which = argc > 4 ? argv[4] : "transformer";
    char *dir = g_path_get_dirname(argv[0]);
    char *strata = g_build_filename(dir, "strata", NULL);
    char *tmp = g_dir_make_tmp("bench-timeline-XXXXXX", NULL);
    if (!tmp)
        return 1;
    int status = 0;
    char **names = g_strsplit(which, ",", -1);
    for (int i = 0; names[i] && status == 0; i++) {
        const bench_case *c = NULL;
        for (size_t j = 0; j < G_N_ELEMENTS(cases); j++)
            if (strcmp(names[i], cases[j].name) == 0)
                c = &cases[j];
        if (!c) {
            fprintf(stderr, "bench_timeline: no case %s (transformer, fsdp8, fsdp64)\n", names[i]);
            status = 2;
        } else if (!run_case(c, strata, base, tmp, layers, reps)) {
            status = 1;
        }
    }
    g_strfreev(names);
    g_rmdir(tmp);
    g_free(tmp);
    g_free(strata);
    g_free(dir);
    return status;
}
