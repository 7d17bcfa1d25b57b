/*
 * test_hardening_twentythird.c: the twenty-third hardening pass (wave 43;
 * docs/reliability.md, "The twenty-third pass"), a row per case over
 * hardware files, sweep's options and serve's: each refused row was taken
 * on the base (main at the wave's start, 263605dc) at exit 0 or refused
 * with a wrong reason; the rows at 0 pin what stays taken.
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output.
 */
#include "hardening_rows.h"

/* dgx-h100.ini (compute_capability = 9.0 on its line 41, nccl_arch = hopper in [interconnect nvlink]) as d.ini
 * through the sed script given, checked with a trace of one buffer. */
#define DGX_SED(script) "sed " script " \"$H/dgx-h100.ini\" > d.ini; " HR_TRACE \
                        "\"$S\" check --hw d.ini --trace t.trace"

/* A file whose compute_capability and NCCL row name two parts was taken at
 * exit 0: the collectives tuned by one part's row (nccl_arch), PyTorch's
 * cuBLAS workspace and CUDA context sized by the other's capability
 * (serve_holdings.c). NCCL picks its row from the capability itself
 * (NVIDIA/nccl v2.27.3-1 src/graph/tuning.cc: compCapIndex = >= 100
 * Blackwell, >= 90 Hopper, >= 80 Ampere, else Volta), so the two must
 * agree. By hand: 9.0 -> 90 -> Hopper; 8.6 -> 86 -> Ampere; 10.0 -> 100 ->
 * Blackwell. */
STRATA_ROWS_TEST(compute_capability_agrees_with_nccl_arch,
    {DGX_SED("'s/^nccl_arch = hopper$/nccl_arch = volta/'"), 2,
     "d.ini:41: [hardware] compute_capability: expected below 8.0, the compute capability of the NCCL row's "
     "nccl_arch = volta (NCCL's tuning.cc picks the row by it), got 9.0 (nccl_arch hopper)"},
    {DGX_SED("'s/^compute_capability = 9.0$/compute_capability = 10.0/'"), 2,
     "expected 9.0 to 9.9, the compute capability of the NCCL row's nccl_arch = hopper"},
    {DGX_SED("-e 's/^compute_capability = 9.0$/compute_capability = 8.6/' -e 's/^nccl_arch = hopper$/nccl_arch = "
             "blackwell/'"), 2, "expected 10.0 or above, the compute capability of the NCCL row's nccl_arch = "
     "blackwell (NCCL's tuning.cc picks the row by it), got 8.6 (nccl_arch ampere)"},
    /* what stays taken: the file as it is, and an A40-like 8.6 beside the Ampere row */
    {DGX_SED("''"), 0, NULL},
    {DGX_SED("-e 's/^compute_capability = 9.0$/compute_capability = 8.6/' -e 's/^nccl_arch = hopper$/nccl_arch = "
             "ampere/' -e '/^nvls = true$/d'"), 0, NULL},
)

/* An experiment e.ini of two points (workload.buffers = 1, 2: a matmul on tpu-v5e.ini), then sweep with the
 * options given, its folder out. */
#define SWEEP2 "printf '[experiment]\\nname = x\\nhardware = %s/tpu-v5e.ini\\nworkload = matmul m=512 n=512 k=512 " \
               "bm=128 bn=128 bk=128\\n[sweep]\\nworkload.buffers = 1, 2\\n' \"$H\" > e.ini; \"$S\" sweep -q e.ini " \
               "--out out "

/* sweep's options are each read by some modes only (--count prints the
 * number of points; --list-jobs and --pending list and exit; --point runs
 * one point in this process), and one beside a mode that reads it nowhere
 * was taken at exit 0, changing nothing: --format jsonl without --list-jobs
 * (the help: "With --list-jobs"), --count --shard 0/2 printed 2 (every
 * point, not the shard's 1), --point 1 --list-jobs listed every point,
 * --list-jobs -j 4 and --point 0 --no-report. --point 0 --shard 1/2 ran
 * point 0, which shard 1/2 does not hold (0 mod 2 = 0, not 1). */
STRATA_ROWS_TEST(sweep_options_outside_their_mode_refused,
    {SWEEP2 "--format jsonl", 2, "--format jsonl: expected --list-jobs beside it"},
    {SWEEP2 "--count --shard 0/2", 2, "--shard: expected no --shard beside --count"},
    {SWEEP2 "--list-jobs --point 1", 2, "--point: expected no --point beside --list-jobs"},
    {SWEEP2 "--pending -j 4", 2, "--jobs: expected no --jobs beside --pending"},
    {SWEEP2 "--point 0 --no-report", 2, "--no-report: expected no --no-report beside --point"},
    {SWEEP2 "--point 0 --shard 1/2", 2, "--point 0: expected a point of --shard 1/2 (p mod 2 = 1), got 0 mod 2 = 0"},
    /* what stays taken: each mode with its own options (point 1 is shard 1/2's: 1 mod 2 = 1) */
    {SWEEP2 "--count | grep -qx 2", 0, NULL},
    {SWEEP2 "--list-jobs --pending --format jsonl --shard 1/2 | grep -q '\"point\":1,'", 0, NULL},
    {SWEEP2 "--point 1 --shard 1/2 && test -f out/points/0001.json", 0, NULL},
    {SWEEP2 "--shard 0/2 --no-report -j 1", 0, NULL},
)

/* serve of a 2-layer llama-2-7b's 8-request Poisson stream on the hardware file given, results in out.json (the
 * options follow). */
#define SERVE8_ON(hw) "\"$S\" serve -q --hw " hw " --model llama-2-7b --set layers=2 --json out.json " \
                      "--poisson n=8,rate=50,prompt=64,output=4 "
/* h100.ini without its clock_response and clock_free_duty lines (sustained_clock 1455 MHz stays) as d.ini. */
#define NO_RESPONSE "grep -v '^clock_\\(response\\|free_duty\\)' \"$H/h100.ini\" > d.ini; "

/* serve --clock duty and --clock sustained name the power limit's rules:
 * sustained runs compute-bound ops at sustained_clock, duty between the
 * peak and it by the filter clock_response sets (serve_clock.h). On a file
 * without sustained_clock (v100.ini) both ran every op at the peak, and
 * duty on a file without clock_response ran the sustained rule, at exit 0:
 * the JSON said clock duty of a run that was not. */
STRATA_ROWS_TEST(serve_clock_rule_without_its_figures_refused,
    {SERVE8_ON("\"$H/v100.ini\"") "--clock duty", 2,
     "--clock duty: expected a hardware file that gives sustained_clock (below the peak's clock), which it reads"},
    {SERVE8_ON("\"$H/v100.ini\"") "--clock sustained", 2,
     "--clock sustained: expected a hardware file that gives sustained_clock"},
    {NO_RESPONSE SERVE8_ON("d.ini") "--clock duty", 2,
     "--clock duty: expected a hardware file that gives clock_response, which it reads; d.ini gives none"},
    /* what stays taken: each rule where the file gives its figures, peak anywhere, no --clock anywhere */
    {SERVE8_ON("\"$H/v100.ini\"") "--clock peak", 0, NULL},
    {SERVE8_ON("\"$H/v100.ini\""), 0, NULL},
    {NO_RESPONSE SERVE8_ON("d.ini") "--clock sustained", 0, NULL},
    {NO_RESPONSE SERVE8_ON("d.ini"), 0, NULL},
    {SERVE8_ON("\"$H/h100.ini\"") "--clock duty", 0, NULL},
)

/* The refusal of a pool with no room named weights, activations and what
 * the rank holds outside them, but not --non-kv-overhead, which it also
 * subtracts (serve_run.c): --non-kv-overhead 70GiB read as "weights 1.33
 * GB, activations 1.14 GB" not fitting 76.4 GB, a false reason. By hand
 * on h100.ini: usable 79.11 GiB x 0.9 = 76.45 GB; 70 GiB = 75,161,927,680
 * B = 75.2 GB, + 1.33 + 1.14 + 0.0336 = 77.7 GB > 76.45 GB; 60 GiB (64.4
 * GB, 66.9 GB in all) leaves 9.5 GB for the pool and stays taken. */
STRATA_ROWS_TEST(non_kv_overhead_named_in_the_pool_refusal,
    {SERVE8_ON("\"$H/h100.ini\"") "--non-kv-overhead 70GiB", 2,
     "no memory left for the KV cache (76.4 GB usable at gpu_memory_utilization 0.90, weights 1.33 GB, activations "
     "1.14 GB, held outside them 0.0336 GB per rank, --non-kv-overhead 75.2 GB)"},
    {SERVE8_ON("\"$H/h100.ini\"") "--non-kv-overhead 60GiB", 0, NULL},
)

/* --kv all,paged was refused as "unknown scheme 'all' (known: paged, ...,
 * or all)": the message named as unknown the word it listed as known. all
 * means every scheme and stands alone. */
STRATA_ROWS_TEST(kv_all_in_a_list_named,
    {SERVE8_ON("\"$H/h100.ini\"") "--kv all,paged", 2, "--kv: expected all alone (every scheme), not in a list, "
     "got 'all,paged'"},
    {SERVE8_ON("\"$H/h100.ini\"") "--kv paged,all", 2, "--kv: expected all alone"},
    /* what stays taken: all alone, a list without it */
    {SERVE8_ON("\"$H/h100.ini\"") "--kv all", 0, NULL},
    {SERVE8_ON("\"$H/h100.ini\"") "--kv paged,vattention", 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        compute_capability_agrees_with_nccl_arch,
        sweep_options_outside_their_mode_refused,
        serve_clock_rule_without_its_figures_refused,
        non_kv_overhead_named_in_the_pool_refusal,
        kv_all_in_a_list_named,
        NULL,
    };
    return strata_hardening_main("twentythird", tests);
}
