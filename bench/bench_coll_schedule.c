/*
 * bench_coll_schedule.c: the cost of building a collective's schedule
 * (models/collective/coll_sched.h) folded, as the group grows.
 *
 * A ring all-reduce of 1 GiB over n ranks has 2(n-1) rounds of n steps.
 * Folded (strata_coll_shape.fold, what `strata run` builds by default),
 * each ring's runs of the same moves are written at once: 2n steps, O(n)
 * time. For n = 256 and 1,024 the baseline is the same schedule unfolded
 * (every round, n(n-1) x 2 steps, what `--collectives steps` builds);
 * the ratio is folded over unfolded CPU time, which falls as 1/n where the
 * fold is linear (it stayed about 1 while the ring was generated round by
 * round and folded afterwards). For n = 4,096 and 16,384 only the folded
 * build runs (unfolded would take 3 and 52 GB); its figure per rank shows
 * whether it stays linear. Each build is repeated until it has taken
 * 0.2 s of CPU. Prints
 *   RESULT name=coll_schedule_ring_N value=US baseline=US ratio=R unit=us steps=S
 *   RESULT name=coll_schedule_ring_N value=US unit=us steps=S ns_per_rank=X
 * Usage: bench_coll_schedule
 */
#include <stdio.h>
#include "bench_clock.h"
#include "collective/coll_algo.h"

/* CPU microseconds per build of the schedule; *steps: its step count. */
static double time_build(const strata_coll_shape *shape, guint *steps)
{
    GArray *v = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    unsigned builds = 0;
    double t0 = bench_cpu_seconds(), spent = 0;
    do {
        g_array_set_size(v, 0);
        strata_coll_schedule(shape, v);
        builds++;
        spent = bench_cpu_seconds() - t0;
    } while (spent < 0.2);
    *steps = v->len;
    g_array_free(v, TRUE);
    return spent / builds * 1e6;
}

int main(void)
{
    static const uint32_t ranks[] = {256, 1024, 4096, 16384};
    for (size_t i = 0; i < G_N_ELEMENTS(ranks); i++) {
        uint32_t n = ranks[i];
        strata_coll_shape shape = {.kind = STRATA_OP_ALL_REDUCE, .algo = strata_coll_algo_find("ring"), .n_dims = 1,
                                   .dims = {n}, .in_bytes = 1ull << 30, .fold = true};
        guint folded_steps = 0, plain_steps = 0;
        double folded = time_build(&shape, &folded_steps);
        if (n <= 1024) {
            shape.fold = false;
            double plain = time_build(&shape, &plain_steps);
            printf("RESULT name=coll_schedule_ring_%u value=%.1f baseline=%.1f ratio=%.4f unit=us steps=%u "
                   "baseline_steps=%u\n",
                   n, folded, plain, plain > 0 ? folded / plain : 0.0, folded_steps, plain_steps);
        } else {
            printf("RESULT name=coll_schedule_ring_%u value=%.1f unit=us steps=%u ns_per_rank=%.1f\n", n, folded,
                   folded_steps, folded * 1e3 / n);
        }
        fflush(stdout);
    }
    return 0;
}
