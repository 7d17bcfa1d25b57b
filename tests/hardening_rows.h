/*
 * hardening_rows.h: what the hardening passes' suites share
 * (tests/test_hardening_fifth.c to test_hardening_ninth.c; docs/reliability.md).
 *
 * Each pass is tests of rows: a shell script run in a fresh directory with
 * $S the strata binary and $H configs/hw, the exit status it must end with,
 * and a text its standard error must hold (strata_test_sh_rows, testutil.h:
 * after a refusal the directory holds no output and no temporary). This
 * header gives the test of rows as one macro, the scripts' pieces more than
 * one pass writes, and the suite's main.
 *
 * Built into every tests/test_hardening_*.c executable (CMakeLists.txt,
 * beside testutil.c).
 */
#ifndef STRATA_HARDENING_ROWS_H
#define STRATA_HARDENING_ROWS_H

#include "testutil.h"

/* A Check test named `name` whose body runs the rows given after it:
 * STRATA_ROWS_TEST(name, {SCRIPT, STATUS, MESSAGE}, ...). Comments between
 * rows stay (the preprocessor drops them before expanding). */
#define STRATA_ROWS_TEST(name, ...)                                                                                \
    START_TEST(name)                                                                                               \
    {                                                                                                              \
        static const strata_test_sh_case rows[] = {__VA_ARGS__};                                                  \
        strata_test_sh_rows(rows, G_N_ELEMENTS(rows));                                                             \
    }                                                                                                              \
    END_TEST

/* A trace t.trace: one 1 MiB buffer a, the ops given (one line each,
 * "\\n" between them), then its free. */
#define HR_TRACE_OF(ops) "printf 'strata-trace 1\\nalloc a 1MiB\\n" ops "\\nfree a\\n' > t.trace; "
/* The same with one compute of 1 us reading and writing a. */
#define HR_TRACE HR_TRACE_OF("compute k time=1us in=a out=a")
/* strata serve, quiet, on configs/hw/HW (the options follow). */
#define HR_SERVE(hw) "\"$S\" serve -q --hw \"$H/" hw "\" "
/* A request file r.csv of serve's own header and the rows given. */
#define HR_CSV(rows) "printf 'arrival_s,prompt_tokens,output_tokens\\n" rows "' > r.csv; "

/* serve of three requests of 4,000 tokens (r.csv) on a pool of 300 KV
 * blocks (4,800 tokens) under vLLM v0's scheduler, the one that swaps: the
 * second and third preempt (the options follow). */
#define HR_SWAP HR_CSV("0,2000,2000\\n0,2000,2000\\n0,2000,2000\\n") HR_SERVE("h100.ini")                                \
                "--model llama-3-8b --requests r.csv --kv-blocks 300 --json out.json --scheduler vllm-v0 "

/* A one-layer llama config.json c.json with the members given after its
 * shape (", \"key\": value" each). */
#define HR_CONFIG(more) "printf '{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_attention_heads\": 4, "     \
                        "\"intermediate_size\": 128, \"num_hidden_layers\": 1, \"vocab_size\": 100" more "}\\n' > c.json; "

/* strata gen of a transformer from c.json (HR_CONFIG) into out.trace. */
#define HR_GEN_CONFIG "\"$S\" gen -o out.trace transformer config=c.json"
/* serve of c.json on h100.ini with two requests, one of 3,008 tokens and one
 * of 108 (r.csv), results in out.json (the options follow). */
#define HR_SERVE_LENGTHS HR_CSV("0,3000,8\\n0,100,8\\n") HR_SERVE("h100.ini") "--config c.json --requests r.csv " \
                         "--json out.json "

/* Runs the tests (NULL-terminated) as suite "hardening_PASS", one case
 * "PASS_pass" of 300 s a test, in fork mode: the process's exit status. */
int strata_hardening_main(const char *pass, const TTest *const *tests);

#endif
