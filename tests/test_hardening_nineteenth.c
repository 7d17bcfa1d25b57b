/*
 * test_hardening_nineteenth.c: the nineteenth hardening pass (wave 39;
 * docs/reliability.md, "The nineteenth pass"), a row per case: each refused
 * row was an option taken at exit 0 where it changed nothing (the JSON of
 * the run without it); the rows at 0 are what stays taken.
 *
 * What the pass found as a new user of serve (see the tests' comments).
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary (outfile.c's ".BASENAME.XXXXXX").
 */
#include "hardening_rows.h"

/* serve of a 2-layer llama-2-7b's Poisson stream of 8 requests at 50 a second on h100.ini (the options follow). */
#define SERVE8 HR_SERVE("h100.ini") "--model llama-2-7b --set layers=2 --poisson n=8,rate=50,prompt=64,output=4 " \
               "--json out.json "
/* the refusal's text after "--OPTION N: " */
#define NO_LOOKUP "expected a run that looks prefixes up in the cache (--kv paged, a scheduler other than " \
                  "lmdeploy-turbomind), got "

/* --shared-prefix and --warm-prefix are blocks a prefix-cache lookup
 * finds, and only the paged scheme has one (serve_pool.c pool_lookup; the
 * contiguous, vattention and expandable rows have none, serve_kv.c
 * KV_ROW): --kv contiguous-max --warm-prefix 16 gave the JSON of
 * --kv contiguous-max, exit 0, and so did --shared-prefix 16 with
 * vattention. Refused where no scheme of --kv looks up (serve_args.c
 * prefix_options_looked_up). */
STRATA_ROWS_TEST(prefix_options_need_a_lookup_scheme,
    {SERVE8 "--kv contiguous-max --warm-prefix 16", 2,
     "--warm-prefix 16: " NO_LOOKUP "--kv contiguous-max, which looks none up: it changes nothing there"},
    {SERVE8 "--kv vattention,expandable --shared-prefix 16", 2,
     "--shared-prefix 16: " NO_LOOKUP "--kv vattention,expandable, which looks none up"},
    /* what stays taken: a list with paged in it, and a prefix of 0 (none) without it */
    {SERVE8 "--kv paged,contiguous-max --warm-prefix 16", 0, NULL},
    {SERVE8 "--kv contiguous-max --shared-prefix 0 --warm-prefix 0", 0, NULL},
)

/* TurboMind 0.1's scheduler looks no prefix up (serve_sched_turbomind.c:
 * it caches none): --engine turbomind --warm-prefix 16 and --scheduler
 * lmdeploy-turbomind --shared-prefix 16 gave the JSON of the run without
 * them, exit 0. Refused (serve_args.c scheduler_of). */
STRATA_ROWS_TEST(prefix_options_need_a_lookup_scheduler,
    {SERVE8 "--engine turbomind --warm-prefix 16", 2,
     "--warm-prefix 16: " NO_LOOKUP "the scheduler lmdeploy-turbomind, which looks none up: it changes nothing "
     "there"},
    {SERVE8 "--scheduler lmdeploy-turbomind --shared-prefix 16", 2,
     "--shared-prefix 16: " NO_LOOKUP "the scheduler lmdeploy-turbomind"},
    /* what stays taken: the engine alone, and the prefix under another scheduler */
    {SERVE8 "--engine turbomind", 0, NULL},
    {SERVE8 "--scheduler trtllm-no-evict --shared-prefix 16", 0, NULL},
)

/* A model with sliding-window layers under vLLM v1 (no --engine) holds its
 * blocks in window groups, where no prefix is found cached (serve_pool.c
 * pool_lookup and warm: nothing with window groups): --set
 * sliding_window=32 --warm-prefix 32 gave the JSON of the run without it,
 * exit 0, --shared-prefix 32 too. Refused (serve_run.c strata_serve_run). */
STRATA_ROWS_TEST(prefix_options_need_an_unwindowed_pool,
    {SERVE8 "--set sliding_window=32 --warm-prefix 32", 2,
     "--warm-prefix 32: expected a run that looks prefixes up in the cache, got llama-2-7b's sliding-window layers "
     "in vLLM v1's paged pool, which looks none up (docs/serving.md): it changes nothing there"},
    {SERVE8 "--set sliding_window=32 --set global_every=2 --shared-prefix 32", 2,
     "--shared-prefix 32: expected a run that looks prefixes up in the cache, got llama-2-7b's sliding-window"},
    /* what stays taken: the window alone, and the prefix under vLLM v0, which keeps every layer's blocks */
    {SERVE8 "--set sliding_window=32", 0, NULL},
    {SERVE8 "--set sliding_window=32 --engine vllm-v0 --shared-prefix 32", 0, NULL},
)

/* --kv-blocks N sets the pool to N blocks whatever the memory
 * (serve_run.c strata_serve_memory), the rule the eighteenth pass gave
 * --non-kv-overhead: --kv-blocks 100 --gpu-memory-utilization 0.5 gave
 * the JSON of --kv-blocks 100 but for the echoed 0.5, exit 0, and --sweep
 * gpu_memory_utilization=0.5,0.9 beside it two rows of one run. Refused
 * (serve_args.c config_of; serve_run.c strata_serve_config_set). */
STRATA_ROWS_TEST(utilization_needs_memory_pool,
    {SERVE8 "--kv-blocks 100 --gpu-memory-utilization 0.5", 2,
     "--gpu-memory-utilization 0.5: expected no --kv-blocks, which sizes the KV pool whatever the memory (the "
     "utilization sizes the pool the memory leaves); beside it, it changes nothing"},
    {SERVE8 "--kv-blocks 100 --sweep gpu_memory_utilization=0.5,0.9", 2,
     "--sweep: gpu_memory_utilization: expected no --kv-blocks, which sizes the KV pool whatever the memory"},
    /* what stays taken: either alone, and the sweep without --kv-blocks */
    {SERVE8 "--kv-blocks 100", 0, NULL},
    {SERVE8 "--gpu-memory-utilization 0.5", 0, NULL},
    {SERVE8 "--sweep gpu_memory_utilization=0.5,0.9", 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        prefix_options_need_a_lookup_scheme,
        prefix_options_need_a_lookup_scheduler,
        prefix_options_need_an_unwindowed_pool,
        utilization_needs_memory_pool,
        NULL,
    };
    return strata_hardening_main("nineteenth", tests);
}
