/*
 * bench_published.c: how far the model is from published measurements.
 *
 * Runs every case of validation/ (validate/published.h) as
 * `strata validate --published` does, prints the table, and reports
 *   RESULT name=published_median_error   median |simulated - measured| / measured
 *                                        (informative: the model is not fitted
 *                                        to these cases, so no target)
 *   RESULT name=published_runtime        wall time of the whole run, target 60 s
 *
 * Usage: bench_published [CASES_DIR]   (default: the source tree's validation/)
 */
#include <stdio.h>
#include "bench_clock.h"
#include "validate/published.h"

int main(int argc, char **argv)
{
    char *dir = argc > 1 ? g_strdup(argv[1]) : g_build_filename(STRATA_SOURCE_DIR, "validation", NULL);
    strata_published *set = strata_published_new();
    GError *err = NULL;
    double t0 = bench_wall_seconds();
    bool ok = strata_published_load_dir(set, dir, &err) && strata_published_run(set, &err);
    double wall = bench_wall_seconds() - t0;
    if (ok) {
        strata_published_print(set, stdout);
        printf("RESULT name=published_median_error value=%.4f baseline=- ratio=- target=- unit=fraction cases=%zu\n",
               strata_published_median_error(set), strata_published_count(set));
        printf("RESULT name=published_runtime value=%.3f baseline=- ratio=- target=60 unit=s\n", wall);
    } else {
        fprintf(stderr, "bench_published: %s\n", err->message);
        g_clear_error(&err);
    }
    strata_published_free(set);
    g_free(dir);
    return ok ? 0 : 1;
}
