/*
 * bench_gen.c: a generated workload must stream (target: `strata gen
 * transformer layers=10000`, 1.35M ops, in at most 100 MiB peak RSS).
 *
 * 1. Runs `strata gen transformer layers=L` (default 10000, the other
 *    parameters at their defaults) as a child process into a temporary
 *    file and takes its peak RSS from wait4() (bench/child_run).
 * 2. Runs `strata run` on that trace (h100, with a capacity no step
 *    exceeds) the same way: the baseline, what a consumer of the same ops
 *    holds.
 * Output: RESULT gen_transformer_rss value=GEN_MIB baseline=RUN_MIB
 * ratio=GEN/RUN target=100 unit=MiB target_of=value (the target bounds the
 * generator's RSS; the run's is given for comparison), and the generator's
 * CPU time for information (gen_transformer_cpu).
 * Usage: bench_gen [LAYERS]
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include "child_run.h"

int main(int argc, char **argv)
{
    long layers = argc > 1 ? strtol(argv[1], NULL, 10) : 10000;
    char *dir = g_path_get_dirname(argv[0]);
    char *strata = g_build_filename(dir, "strata", NULL);
    char *hw = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "h100.ini", NULL);
    char *tmp = g_dir_make_tmp("bench-gen-XXXXXX", NULL);
    char *trace = g_build_filename(tmp, "t.trace", NULL);
    char *layers_arg = g_strdup_printf("layers=%ld", layers);
    const char *gen[] = {strata, "gen", "transformer", layers_arg, "-o", trace, NULL};
    child_usage g, r;
    if (!tmp || !child_run(gen, 0, &g))
        return 1;
    GStatBuf st;
    printf("strata gen transformer %s: %.2f s CPU, %.1f MiB peak RSS, %.1f MB written\n", layers_arg, g.cpu_s,
           g.rss_mib, g_stat(trace, &st) == 0 ? (double)st.st_size / 1e6 : -1.0);
    const char *run[] = {strata, "run", "--hw", hw, "--set", "memory.hbm.capacity=100TB", "--trace", trace, "-q",
                         NULL};
    if (!child_run(run, 0, &r))
        return 1;
    printf("strata run on it: %.2f s CPU, %.1f MiB peak RSS\n", r.cpu_s, r.rss_mib);
    printf("RESULT name=gen_transformer_rss value=%.1f baseline=%.1f ratio=%.2f target=100 unit=MiB "
           "target_of=value\n",
           g.rss_mib, r.rss_mib, g.rss_mib / r.rss_mib);
    printf("RESULT name=gen_transformer_cpu value=%.2f baseline=%.2f ratio=%.2f target=- unit=s\n", g.cpu_s,
           r.cpu_s, g.cpu_s / r.cpu_s);
    g_unlink(trace);
    g_rmdir(tmp);
    g_free(trace);
    g_free(tmp);
    g_free(layers_arg);
    g_free(hw);
    g_free(strata);
    g_free(dir);
    return 0;
}
