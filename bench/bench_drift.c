/*
 * bench_drift.c: peak memory of `strata run` when two streams drift far
 * apart in file order (issue 40: memory bounded by the devices' state, not
 * by the ops read ahead).
 *
 * The trace: stream a's N computes, then stream b's N computes, the two
 * joined by events only at the end (b waits for a's last op, a for b's).
 * Both streams start at once, so b's first op is read after all of a's:
 * the feed reads a's N ops ahead and queues them (sim/engine/engine_feed.c)
 * until stream a takes them. Before issue 40's spill, that queue held every
 * op read ahead in memory (a few bytes each on the queue's tape); now past
 * STRATA_ENGINE_QUEUE_MEMORY it waits in a temporary file.
 *
 * Runs `strata run` (test-simple.ini) as a child process on N and 10 N ops
 * a stream and prints
 *   RESULT name=drift_rss_N value=PEAK_MIB baseline=- ratio=- target=- unit=MiB ops=.. cpu_s=..
 *   RESULT name=drift_rss_10N value=PEAK_MIB baseline=PEAK_MIB_AT_N ratio=R target=- unit=MiB ops=.. cpu_s=..
 *          bytes_per_op=B
 * (bytes_per_op: the growth between the two per op added; informative.
 * It was the first pass's tape, up to 64 MiB, until the tape's chunks past
 * STRATA_ENGINE_TAPE_MEMORY went to a temporary file as well).
 *
 * Then a long program on one stream (M computes, no drift: issue 40's
 * file-backed first-pass tape), whose tape (some 22 bytes an op) passes
 * STRATA_ENGINE_TAPE_MEMORY (16 MiB) from about 0.8M ops and 64 MiB from
 * about 3M; before, it was dropped at 64 MiB and the source bound again:
 *   RESULT name=single_rss value=PEAK_MIB baseline=- ratio=- target=- unit=MiB ops=.. cpu_s=..
 * and the disk its tape's temporary file takes (st_blocks, sampled every
 * 5 ms: child_run.h), at its peak (the end of the first pass) and at the
 * end of the replay (the last sample with the file open; issue 40's
 * punch: the replay gives back the chunks it has read, 0 at its end):
 *   RESULT name=single_spill value=PEAK_MIB baseline=- ratio=- target=- unit=MiB end_mib=.. samples=..
 *
 * Usage: bench_drift [N [M]]   (default N 300,000: 0.6M and 6M ops; M 10 N)
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "child_run.h"

/* Writes the drifting trace of n computes a stream (single: n computes on
 * one stream); returns its ops. */
static uint64_t write_trace(const char *path, uint64_t n, bool single)
{
    FILE *f = child_create(path);
    if (single) {
        fputs("strata-trace 1\n# bench_drift: generated\nalloc wa 1MiB stream=a\n", f);
        for (uint64_t i = 0; i < n; i++)
            fputs("compute k flops=1e6 in=wa stream=a\n", f);
        fputs("free wa stream=a\n", f);
        fclose(f);
        return n + 2;
    }
    fputs("strata-trace 1\n# bench_drift: generated\nalloc wa 1MiB stream=a\nalloc wb 1MiB stream=b\n", f);
    for (uint64_t i = 0; i < n; i++)
        fputs("compute k flops=1e6 in=wa stream=a\n", f);
    fputs("record ea stream=a\n", f);
    for (uint64_t i = 0; i < n; i++)
        fputs("compute k flops=1e6 in=wb stream=b\n", f);
    fputs("wait ea stream=b\nrecord eb stream=b\nwait eb stream=a\nfree wa stream=a\nfree wb stream=b\n", f);
    fclose(f);
    return 2 * n + 8;
}

/* Runs strata on n ops a stream (single: n ops on one): false when it fails. */
static bool run_drift(const char *strata, const char *dir, uint64_t n, bool single, uint64_t *ops,
                      child_usage *use, child_spill *spill)
{
    char *hw = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "test-simple.ini", NULL);
    char *trace = g_strdup_printf("%s/drift-%" G_GUINT64_FORMAT ".trace", dir, n);
    *ops = write_trace(trace, n, single);
    const char *argv[] = {strata, "run", "-q", "--hw", hw, "--trace", trace, NULL};
    bool ok = child_run_spill(argv, 0, use, spill);
    g_unlink(trace);
    g_free(trace);
    g_free(hw);
    return ok;
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? g_ascii_strtoull(argv[1], NULL, 10) : 300000;
    uint64_t m = argc > 2 ? g_ascii_strtoull(argv[2], NULL, 10) : 10 * n;
    child_bench b = child_bench_open("bench-drift-XXXXXX");
    child_usage small = {0}, big = {0}, single = {0};
    child_spill spill = {0};
    uint64_t small_ops = 0, big_ops = 0, single_ops = 0;
    printf("bench_drift: two streams %" G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT
           " ops apart in file order, peak RSS of strata run\n",
           n, 10 * n);
    bool ok = b.dir && run_drift(b.strata, b.dir, n, false, &small_ops, &small, NULL) &&
              run_drift(b.strata, b.dir, 10 * n, false, &big_ops, &big, NULL) &&
              run_drift(b.strata, b.dir, m, true, &single_ops, &single, &spill);
    if (ok) {
        printf("RESULT name=drift_rss_N value=%.1f baseline=- ratio=- target=- unit=MiB ops=%" G_GUINT64_FORMAT
               " cpu_s=%.2f\n",
               small.rss_mib, small_ops, small.cpu_s);
        printf("RESULT name=drift_rss_10N value=%.1f baseline=%.1f ratio=%.3f target=- unit=MiB ops=%" G_GUINT64_FORMAT
               " cpu_s=%.2f bytes_per_op=%.1f\n",
               big.rss_mib, small.rss_mib, big.rss_mib / small.rss_mib, big_ops, big.cpu_s,
               (big.rss_mib - small.rss_mib) * 1048576.0 / (double)(big_ops - small_ops));
        printf("RESULT name=single_rss value=%.1f baseline=- ratio=- target=- unit=MiB ops=%" G_GUINT64_FORMAT
               " cpu_s=%.2f\n",
               single.rss_mib, single_ops, single.cpu_s);
        printf("RESULT name=single_spill value=%.1f baseline=- ratio=- target=- unit=MiB end_mib=%.1f samples=%u\n",
               spill.peak_mib, spill.last_mib, spill.samples);
    } else {
        fprintf(stderr, "bench_drift: a run failed\n");
    }
    child_bench_close(&b);
    return ok ? 0 : 1;
}
