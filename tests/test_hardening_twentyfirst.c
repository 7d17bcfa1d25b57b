/*
 * test_hardening_twentyfirst.c: the twenty-first hardening pass (wave 41;
 * docs/reliability.md, "The twenty-first pass"), a row per case over the
 * surfaces waves 39-40 changed (serve --prior-run and
 * --max-seq-len-to-capture, the hardware capacity keys, the fused-MoE
 * chooser's device): each refused row was taken on the base (main at the
 * wave's start, 1a7c0a64), at exit 0 or after hours, but device_name's
 * (a key new this pass); the rows at 0 pin what stays taken.
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary.
 */
#include "hardening_rows.h"

/* serve of a 2-layer llama-2-7b's 8-request Poisson stream on h100.ini, results in out.json (the options follow) */
#define SERVE8 HR_SERVE("h100.ini") "--model llama-2-7b --set layers=2 --json out.json " \
               "--poisson n=8,rate=50,prompt=64,output=4 "

/* -2147483648 (G_MININT) is how serve and sweep mark an integer option not
 * given (serve_args.h STRATA_SERVE_UNSET, cmd_sweep.c JOBS_UNSET): given,
 * it ran at the option's default, exit 0 (--max-seq-len-to-capture's 8192,
 * --tp's 1; sweep's --jobs the same), where -2147483647 and -1 are refused
 * by each option's range. Refused before GOption reads it (core/opt_check.c,
 * every command's options). */
STRATA_ROWS_TEST(least_int_is_not_given,
    {SERVE8 "--engine vllm-v0.5 --max-seq-len-to-capture -2147483648", 2,
     "serve: --max-seq-len-to-capture: expected a whole number above -2147483648 (the least int stands for the "
     "option not given), got '-2147483648'"},
    {SERVE8 "--tp -2147483648", 2, "serve: --tp: expected a whole number above -2147483648"},
    /* what stays: the option's own range refuses its other negatives */
    {SERVE8 "--engine vllm-v0.5 --max-seq-len-to-capture -2147483647", 2,
     "serve: --max-seq-len-to-capture: expected a whole number from 1 to 2147483647, got -2147483647"},
    {SERVE8 "--engine vllm-v0.5 --max-seq-len-to-capture 2147483647", 0, NULL},
)

/* --prior-run took counts up to 2^32 - 1: n=4294967295,prompt=4294967295
 * replayed block by block (serve_pool.c replay_prior) for hours before the
 * run began; n=100000,prompt=100000 took over 20 s for 8 requests served.
 * Its counts now have --poisson's and a request file's range, 1 to 10^8. */
STRATA_ROWS_TEST(prior_run_counts_in_range,
    {SERVE8 "--prior-run n=4294967295,prompt=64,output=4", 2,
     "serve: --prior-run n=4294967295: expected a whole number from 1 to 10^8 (as --poisson's)"},
    {SERVE8 "--prior-run n=1,prompt=100000001,output=4", 2,
     "serve: --prior-run prompt=100000001: expected a whole number from 1 to 10^8"},
    {SERVE8 "--prior-run n=1,prompt=64,output=100000001", 2,
     "serve: --prior-run output=100000001: expected a whole number from 1 to 10^8"},
    /* what stays taken */
    {SERVE8 "--prior-run n=8,prompt=64,output=4", 0, NULL},
)

/* [hardware] device_name (new this pass: the part as its driver names it,
 * which chooses vLLM 0.7.3's H200 fused_moe file): an empty name, a
 * control character or a name past NVML's 95 characters is no driver's. */
STRATA_ROWS_TEST(device_name_checked,
    {SERVE8 "--hw-set hardware.device_name=", 2,
     "[hardware] device_name: expected the part's name as its driver gives it, 1 to 95 printable ASCII characters"},
    {SERVE8 "--hw-set \"$(printf 'hardware.device_name=NVIDIA\\tH200')\"", 2,
     "[hardware] device_name: expected the part's name as its driver gives it"},
    {SERVE8 "--hw-set hardware.device_name=$(printf 'x%.0s' $(seq 96))", 2,
     "[hardware] device_name: expected the part's name as its driver gives it"},
    /* what stays taken: a name of 95 characters, blanks inside */
    {SERVE8 "--hw-set hardware.device_name=$(printf 'x%.0s' $(seq 95))", 0, NULL},
    {SERVE8 "--hw-set 'hardware.device_name=NVIDIA H200'", 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        least_int_is_not_given,
        prior_run_counts_in_range,
        device_name_checked,
        NULL,
    };
    return strata_hardening_main("twentyfirst", tests);
}
