/*
 * test_hardening_eighteenth.c: the eighteenth hardening pass (wave 38;
 * docs/reliability.md, "The eighteenth pass"), a row per case: each refused
 * row was an option taken at exit 0 where it changed nothing; the rows at
 * 0 are what stays taken.
 *
 *  - the item the seventeenth pass left: --time-scale beside a sweep's
 *    closed-loop point (--sweep concurrency=...);
 *  - what the pass found besides, as a new user of serve (see the tests'
 *    comments).
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary (outfile.c's ".BASENAME.XXXXXX").
 */
#include "hardening_rows.h"

/* serve of a 2-layer llama-2-7b's Poisson stream of 8 requests at 50 a second on h100.ini (the options follow). */
#define SERVE8 HR_SERVE("h100.ini") "--model llama-2-7b --set layers=2 --poisson n=8,rate=50,prompt=64,output=4 " \
               "--json out.json "

/* --time-scale multiplies the stream's arrival times, which a closed loop
 * (concurrency N > 0: each client sends its next request when one
 * completes) reads nowhere. The seventeenth pass refused it beside
 * --concurrency 2; beside --sweep concurrency=0,2 the point concurrency=2
 * gave the JSON of its run without --time-scale, exit 0. Refused at that
 * point (cmd_serve.c sweep_points; serve_args.c
 * strata_serve_args_time_scale_read, the rule --concurrency's is). */
STRATA_ROWS_TEST(time_scale_needs_open_loop_points,
    {SERVE8 "--sweep concurrency=0,2 --time-scale 2", 2,
     "--sweep: --time-scale 2: expected --concurrency 0 (the stream's own arrival times, which it scales), got "
     "concurrency=2, a closed loop that reads no arrival time"},
    {SERVE8 "--sweep concurrency=1,2 --time-scale 0.5", 2, "got concurrency=1, a closed loop"},
    /* what stays taken: the sweep without --time-scale, and --time-scale on the open loop */
    {SERVE8 "--sweep concurrency=0,2", 0, NULL},
    {SERVE8 "--sweep max_num_seqs=1,2 --time-scale 2", 0, NULL},
)

/* --shared-prefix N makes the first N tokens of every prompt the same
 * blocks, which prefix caching alone finds (serve_pool.c block_hash, read
 * by pool_lookup when prefix_caching): with --no-prefix-caching,
 * --shared-prefix 10 gave the JSON of --no-prefix-caching alone, exit 0.
 * Refused (serve_args.c stream_of). */
STRATA_ROWS_TEST(shared_prefix_needs_prefix_caching,
    {SERVE8 "--no-prefix-caching --shared-prefix 10", 2,
     "--shared-prefix 10: expected prefix caching on (no --no-prefix-caching), which reads it (the blocks every "
     "prompt shares, found in the cache); with it off, it changes nothing"},
    /* what stays taken: the prefix with caching on, and a prefix of 0 (none) with it off */
    {SERVE8 "--shared-prefix 10", 0, NULL},
    {SERVE8 "--no-prefix-caching --shared-prefix 0", 0, NULL},
    /* --warm-prefix's blocks are found the same way (serve_pool.c warm, hashed and freed at creation): refused
     * alike beside --no-prefix-caching (merge review) */
    {SERVE8 "--no-prefix-caching --warm-prefix 16", 2,
     "--warm-prefix 16: expected prefix caching on (no --no-prefix-caching), which reads it (the blocks an earlier "
     "run left, found in the cache); with it off, it changes nothing"},
    {SERVE8 "--warm-prefix 16", 0, NULL},
)

/* --non-kv-overhead keeps bytes per rank from the pool the memory leaves
 * (serve_run.c strata_serve_memory: capacity x utilization less weights,
 * activations and the overhead); --kv-blocks N sets the pool to N blocks
 * whatever the memory: --kv-blocks 100 --non-kv-overhead 1GiB gave the
 * JSON of --kv-blocks 100, exit 0. Refused (serve_args.c config_of). */
STRATA_ROWS_TEST(non_kv_overhead_needs_memory_pool,
    {SERVE8 "--kv-blocks 100 --non-kv-overhead 1GiB", 2,
     "--non-kv-overhead 1GiB: expected no --kv-blocks, which sizes the KV pool whatever the memory (the overhead "
     "is kept from the pool the memory leaves); beside it, it changes nothing"},
    /* what stays taken: either alone, and an overhead of 0 beside the blocks */
    {SERVE8 "--kv-blocks 100", 0, NULL},
    {SERVE8 "--non-kv-overhead 1GiB", 0, NULL},
    {SERVE8 "--kv-blocks 100 --non-kv-overhead 0", 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        time_scale_needs_open_loop_points,
        shared_prefix_needs_prefix_caching,
        non_kv_overhead_needs_memory_pool,
        NULL,
    };
    return strata_hardening_main("eighteenth", tests);
}
