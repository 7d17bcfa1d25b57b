/*
 * test_hardening_twentysixth.c: the twenty-sixth hardening pass (wave 46;
 * docs/reliability.md, "The twenty-sixth pass"), a new user's hunt over the
 * surfaces the passes touched least: a published series' CSV, a sweep of a
 * huge product, at= stamps out of order. Each refused row was taken on the
 * base (main at the wave's start, 19a5c660) at exit 0, or ran without end;
 * the rows at 0 pin what stays taken.
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output.
 */
#include "hardening_rows.h"

/* c.ini: one [series] of an all-reduce on test-ring8.ini's 8 devices, its figure busbw_GBs in GB/s from
 * d.csv, whose header and rows are given; then validate --published c.ini. */
#define SERIES(rows) "printf '[series s]\\nsource = x\\nsetup = y\\ndata = d.csv\\ncolumn = busbw_GBs\\nunit = GB/s\\n" \
                     "metric = busbw\\ncollective = all-reduce\\nranks = 8\\nhw = %s/test-ring8.ini\\ngen = collective " \
                     "op=all-reduce devices=8\\n' \"$H\" > c.ini; printf 'bytes,time_us,algbw_GBs,busbw_GBs\\n" rows   \
                     "' > d.csv; \"$S\" validate --published c.ini"

/* A row of more cells than the header was read, its columns shifted: 8 MiB
 * written with digit groups, 8,388,608,93.25,11.24,21.08, splits into six
 * cells, and the header's bytes (cell 0) and busbw_GBs (cell 3) read 8 and
 * 93.25 (the time): case "s 8" at exit 0, 93.25 GB/s measured. Every row
 * now has the header's cell count (the 168 CSVs validation/ names: 2,541
 * rows, none ragged). */
STRATA_ROWS_TEST(series_row_of_another_cell_count,
    {SERIES("8,388,608,93.25,11.24,21.08\\n"), 2,
     "d.csv:2: expected 4 comma-separated cells, as the header names (a size is a plain number of bytes, without "
     "digit groups), not 6, got 8,388,608,93.25,11.24,21.08"},
    {SERIES("8388608,93.25,11.24,21.08,x\\n"), 2, "d.csv:2: expected 4 comma-separated cells"},
    /* what stays: a short row refused as before (now by the same count), a full row taken (case s 8MiB) */
    {SERIES("8388608,93.25,11.24\\n"), 2, "d.csv:2: expected 4 comma-separated cells, as the header names"},
    {SERIES("8388608,93.25,11.24,21.08\\n") " | grep -q '^s 8MiB .* 21.08 GB/s'", 0, NULL},
    /* a row ending in a comma (empty cells after the header's last) is taken as the full row */
    {SERIES("8388608,93.25,11.24,21.08,\\n") " | grep -q '^s 8MiB .* 21.08 GB/s'", 0, NULL},
)

/* e.ini: a matmul on tpu-v5e.ini (blocks of 128) whose m, n and k are each the axis given (AXIS: the values of
 * `seq -s, 128 128 LAST`), then sweep with the options given, its folder out. */
#define SWEEP_AXES(last) "L=$(seq -s, 128 128 " last "); printf '[experiment]\\nname = x\\nhardware = %s/tpu-v5e.ini\\n" \
                         "workload = matmul bm=128 bn=128 bk=128\\n[sweep]\\nworkload.m = %s\\nworkload.n = %s\\n"   \
                         "workload.k = %s\\n' \"$H\" $L $L $L > e.ini; \"$S\" sweep -q e.ini --out out "

/* Three axes of 1,000 values each (128 to 128,000 by 128): 10^9 points,
 * below the 2^32 the experiment takes. The run read each point's json and
 * listed the 10^9 points not done (8 GB) before the first one started,
 * silent: after 30 s of a core, none had. A run now takes at most 10^6
 * points of its shard and says how to split it: ceil(10^9 / 10^6) = 1000
 * shards. By hand for the shard rows: 3/999 holds the p < 10^9 with
 * p mod 999 = 3, (10^9 - 3 - 1) / 999 + 1 = 1,001,001 points; 3/1000000
 * holds 1,000 (none run here: --count and --list-jobs list them). */
STRATA_ROWS_TEST(sweep_of_a_huge_product,
    {SWEEP_AXES("128000"), 2, "e.ini: 1000000000 points to run: expected at most 1000000 in one run (one process a "
     "point, every point listed before the first starts); split the sweep with --shard K/1000 (K from 0)"},
    {SWEEP_AXES("128000") "--shard 3/999", 2, "e.ini: 1001001 points to run in the shard: expected at most 1000000"},
    /* what stays: counting and listing such a sweep; 10 values of each axis: 1,000 points, counted */
    {SWEEP_AXES("128000") "--count | grep -qx 1000000000", 0, NULL},
    {SWEEP_AXES("128000") "--list-jobs --shard 3/100000000 | wc -l | grep -qx 10", 0, NULL},
    {SWEEP_AXES("1280") "--count | grep -qx 1000", 0, NULL},
)

/* A trace t.trace whose a is allocated at 5 us and freed at the stamp given (b allocated between, at 1 us). */
#define AT_FREED(at) "printf 'strata-trace 1\\nalloc a 1MiB at=5us\\nalloc b 1MiB at=1us\\nfree a at=" at "\\n" \
                     "free b at=3us\\n' > t.trace; "

/* The stamps are when a captured run issued each op (traces/FORMAT.md):
 * a free before its own alloc is of no run. It was taken at exit 0, and the
 * offline planner, which ranks buffers by the stamps' lifetimes only when
 * every buffer has one of positive length (models/alloc/offline.c), fell
 * back to op counts for every buffer, silently. Other stamps out of file
 * order (b's 1 us after a's 5 us) stay taken: streams interleave. */
STRATA_ROWS_TEST(free_stamped_before_its_alloc,
    {AT_FREED("2us") "\"$S\" check --trace t.trace", 2, "t.trace:4: expected the free of 'a' at or after its alloc's "
     "at=5e-06s (line 2: a run issues a free after its alloc), got at=2e-06s"},
    {AT_FREED("2us") "\"$S\" run -q --hw \"$H/h100.ini\" --allocator offline --trace t.trace --json out.json", 2,
     "t.trace:4: expected the free of 'a' at or after its alloc's at=5e-06s"},
    /* what stays: the free at its alloc's stamp, or later */
    {AT_FREED("5us") "\"$S\" check --trace t.trace", 0, NULL},
    {AT_FREED("6us") "\"$S\" run -q --hw \"$H/h100.ini\" --allocator offline --trace t.trace", 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        series_row_of_another_cell_count,
        sweep_of_a_huge_product,
        free_stamped_before_its_alloc,
        NULL,
    };
    return strata_hardening_main("twentysixth", tests);
}
