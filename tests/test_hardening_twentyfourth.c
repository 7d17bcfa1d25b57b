/*
 * test_hardening_twentyfourth.c: the twenty-fourth hardening pass (wave 44;
 * docs/reliability.md, "The twenty-fourth pass"), the last review's
 * leftovers: sweep --count's options, the --clock rule's figures read on the
 * unit a run uses by serve and run alike (hw.h strata_hw_check_clock_rule),
 * an engine row without a memory rule, and TensorRT-LLM's runtime a row
 * field rather than a name. Each refused row was taken on the base (main at
 * the wave's start, d077fc3d) at exit 0 or refused with a wrong reason; the
 * rows at 0 pin what stays taken.
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output.
 */
#include <string.h>
#include "hardening_rows.h"
#include "serve/serve_holdings.h"

/* An experiment e.ini of two points (workload.buffers = 1, 2: a matmul on tpu-v5e.ini), then sweep with the
 * options given, its folder out (test_hardening_twentythird.c's). */
#define SWEEP2 "printf '[experiment]\\nname = x\\nhardware = %s/tpu-v5e.ini\\nworkload = matmul m=512 n=512 k=512 " \
               "bm=128 bn=128 bk=128\\n[sweep]\\nworkload.buffers = 1, 2\\n' \"$H\" > e.ini; \"$S\" sweep -q e.ini " \
               "--out out "

/* --count prints the number of points and exits: it runs none, so --jobs
 * and --no-report (read by the run of every point only) changed nothing at
 * exit 0, as the other options beside a mode that reads them nowhere did
 * before the twenty-third pass (cmd_sweep.c sweep_check_modes). */
STRATA_ROWS_TEST(sweep_count_takes_no_run_options,
    {SWEEP2 "--count -j 2", 2, "--jobs: expected no --jobs beside --count (it prints the experiment's number of "
     "points, all of them, and exits)"},
    {SWEEP2 "--count --no-report", 2, "--no-report: expected no --no-report beside --count"},
    /* what stays taken: --count alone (2 points: buffers 1 and 2), and -j beside the run */
    {SWEEP2 "--count | grep -qx 2", 0, NULL},
    {SWEEP2 "-j 1 --no-report && test -f out/results.csv", 0, NULL},
)

/* A second compute group aux after h100.ini's sm (units in file order: 0 sm, 1 aux), clocked at 1830 MHz. */
#define AUX "\\n[compute aux]\\nflops = 1TFLOP/s\\noperands = hbm\\nmatrix = systolic\\nside = 128\\n" \
            "peak_clock = 1830MHz\\n"
/* d.ini: unit 0 (sm) without sustained_clock and its duty rule, unit 1 (aux) with them (h100.ini's figures). */
#define UNIT0_BARE "grep -v '^\\(sustained_clock\\|clock_response\\|clock_free_duty\\) = ' \"$H/h100.ini\" > d.ini; " \
                   "printf '" AUX "sustained_clock = 1455MHz\\nclock_free_duty = 0.7\\nclock_response = 0.05s\\n' " \
                   ">> d.ini; "
/* d.ini: unit 0 (sm) with h100.ini's rule, unit 1 (aux) clocked but without one. */
#define UNIT1_BARE "cp \"$H/h100.ini\" d.ini; printf '" AUX "' >> d.ini; "
/* serve of a 2-layer llama-2-7b's 8-request Poisson stream on d.ini, results in out.json (the options follow). */
#define SERVE8_D "\"$S\" serve -q --hw d.ini --model llama-2-7b --set layers=2 --json out.json " \
                 "--poisson n=8,rate=50,prompt=64,output=4 "

/* serve times every step on unit 0 (serve_cost.c), but its --clock check
 * read the least sustained / peak ratio over every unit: a file whose unit
 * 0 gives no sustained_clock and whose unit 1 does ran --clock sustained at
 * the peak on unit 0 (strata_hw_run_at_sustained_clock scales the units
 * that give both) at exit 0, and --clock duty was refused for a missing
 * clock_response, not the missing sustained_clock. The check now reads the
 * unit the steps run on. */
STRATA_ROWS_TEST(serve_clock_rule_read_on_the_unit_it_runs_on,
    {UNIT0_BARE SERVE8_D "--clock sustained", 2, "--clock sustained: expected a hardware file that gives "
     "sustained_clock (below the peak's clock), which it reads; d.ini gives none on compute unit 0 ('sm'), the "
     "unit the run uses"},
    {UNIT0_BARE SERVE8_D "--clock duty", 2, "--clock duty: expected a hardware file that gives sustained_clock "
     "(below the peak's clock), which it reads; d.ini gives none on compute unit 0 ('sm')"},
    /* what stays taken: the rule on unit 0 whatever unit 1 gives; peak and no --clock on either file */
    {UNIT1_BARE SERVE8_D "--clock duty", 0, NULL},
    {UNIT1_BARE SERVE8_D "--clock sustained", 0, NULL},
    {UNIT0_BARE SERVE8_D "--clock peak", 0, NULL},
    {UNIT0_BARE SERVE8_D, 0, NULL},
)

/* strata run on the hardware file given of a trace of one 1 GFLOP compute on the first unit (the options follow). */
#define RUN_ON(hw) HR_TRACE_OF("compute k flops=1e9 in=a out=a") "\"$S\" run -q --hw " hw " --trace t.trace "

/* run --clock sustained was taken on any file: on v100.ini and
 * tpu-v5e.ini (no unit gives peak_clock) every compute ran at the peak
 * under the rule's name (engine_power_create returns NULL: no unit has
 * the rule), as serve's were before the twenty-third pass. It now calls
 * serve's check, over every unit that gives peak_clock (a trace's
 * computes may name any unit= of them). */
STRATA_ROWS_TEST(run_clock_rule_checked_as_serve_does,
    {RUN_ON("\"$H/v100.ini\"") "--clock sustained", 2, "v100.ini gives no peak_clock on any compute unit"},
    {RUN_ON("\"$H/tpu-v5e.ini\"") "--clock sustained", 2, "tpu-v5e.ini gives no peak_clock on any compute unit"},
    {UNIT0_BARE RUN_ON("d.ini") "--clock sustained", 2, "d.ini gives none on compute unit 0 ('sm'), one with "
     "peak_clock, which a compute may run on"},
    {UNIT1_BARE RUN_ON("d.ini") "--clock sustained", 2, "--clock sustained: expected a hardware file that gives "
     "sustained_clock (below the peak's clock), which it reads; d.ini gives none on compute unit 1 ('aux')"},
    /* what stays taken: each rule on h100.ini, peak and no --clock anywhere */
    {RUN_ON("\"$H/h100.ini\"") "--clock duty", 0, NULL},
    {RUN_ON("\"$H/h100.ini\"") "--clock sustained", 0, NULL},
    {RUN_ON("\"$H/v100.ini\"") "--clock peak", 0, NULL},
    {RUN_ON("\"$H/v100.ini\""), 0, NULL},
    {UNIT0_BARE RUN_ON("d.ini"), 0, NULL},
    /* duty is run's default and falls back to the peak where a unit gives no clock_response (its help):
     * named, it runs as no --clock does (review: the TPU files and v100.ini were refused) */
    {RUN_ON("\"$H/v100.ini\"") "--clock duty", 0, NULL},
    {RUN_ON("\"$H/tpu-v5e.ini\"") "--clock duty", 0, NULL},
    {UNIT0_BARE RUN_ON("d.ini") "--clock duty", 0, NULL},
)

static strata_hw *dgx_h100(void)
{
    GError *err = NULL;
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "dgx-h100.ini", NULL);
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    g_free(path);
    return hw;
}

/* SERVE_HOLD_VLLM_V0 was the enum's 0, so a row built outside the table
 * (zeroed but for what it names) was charged vLLM V0's rule: on dgx-h100
 * at TP8 NCCL, custom all-reduce and cuBLAS, 231,211,008 + 0 (no
 * allreduce named) + 33,554,432 = 264,765,440 B, silently. 0 is now
 * SERVE_HOLD_UNSET, refused. A copy of the vllm-v0 row keeps its rule:
 * 231,211,008 + 25,169,920 + 33,554,432 = 289,935,360 B
 * (test_serve_holdings.c's derivation). */
START_TEST(engine_row_without_a_hold_rule_refused)
{
    strata_hw *hw = dgx_h100();
    const strata_serve_engine bare = {.name = "bare", .what = "a row built outside the table"};
    strata_serve_holdings h;
    GError *err = NULL;
    ck_assert(!strata_serve_holdings_of(&bare, hw, 8, &h, &err));
    ck_assert_str_eq(err->message, "engine row 'bare': expected a hold_rule (vllm-v0, vllm-v1, sglang, trtllm or "
                                   "none: what its memory accounting charges to the KV pool), got none");
    g_clear_error(&err);
    strata_serve_engine v0 = *strata_serve_engine_find("vllm-v0", NULL);
    v0.name = "vllm-v0-copy";
    ck_assert(strata_serve_holdings_of(&v0, hw, 8, &h, &err));
    ck_assert_str_eq(strata_serve_hold_rule_name(h.rule), "vllm-v0");
    ck_assert_uint_eq(h.counted_bytes, 289935360);
    strata_hw_free(hw);
}
END_TEST

/* serve_holdings.c told TensorRT-LLM's PyTorch backend (a PyTorch cuBLAS
 * handle, 32 MiB of workspace on Hopper: 4,096 x 8 x 1,024 = 33,554,432 B)
 * from its C++ runtime (TensorRT's, none) by strcmp(e->name, "trtllm"): a
 * copy of the trtllm row under another name held no workspace. The rows
 * now say it (tensorrt_runtime: the trtllm-cpp rows). */
START_TEST(tensorrt_runtime_a_row_field)
{
    strata_hw *hw = dgx_h100();
    strata_serve_holdings h;
    GError *err = NULL;
    strata_serve_engine torch = *strata_serve_engine_find("trtllm", NULL);
    const strata_serve_engine *cpp = strata_serve_engine_find("trtllm-cpp", NULL);
    ck_assert(!torch.tensorrt_runtime && cpp->tensorrt_runtime);
    ck_assert(strata_serve_holdings_of(&torch, hw, 8, &h, &err));
    ck_assert_uint_eq(h.cublas_bytes, 33554432);
    torch.name = "trtllm-pytorch";
    ck_assert(strata_serve_holdings_of(&torch, hw, 8, &h, &err));
    ck_assert_uint_eq(h.cublas_bytes, 33554432);
    ck_assert(strata_serve_holdings_of(cpp, hw, 8, &h, &err));
    ck_assert_uint_eq(h.cublas_bytes, 0);
    strata_hw_free(hw);
}
END_TEST

int main(void)
{
    const TTest *const tests[] = {
        sweep_count_takes_no_run_options,
        serve_clock_rule_read_on_the_unit_it_runs_on,
        run_clock_rule_checked_as_serve_does,
        engine_row_without_a_hold_rule_refused,
        tensorrt_runtime_a_row_field,
        NULL,
    };
    return strata_hardening_main("twentyfourth", tests);
}
