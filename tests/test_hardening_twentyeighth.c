/*
 * test_hardening_twentyeighth.c: the twenty-eighth hardening pass (wave 48;
 * docs/reliability.md, "The twenty-eighth pass"), a hostile but honest
 * user's hunt over wave 47's options first (--serial-api-server,
 * --engine-release, [network] payload_bandwidth, the V0 MLA prefill rows),
 * then every subcommand's options at their edges. Each refused row was
 * taken on the base (main at the wave's start, b371b4e2) at exit 0; the rows
 * at 0 pin what stays taken.
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output.
 */
#include "hardening_rows.h"

/* serve of two requests of 64 + 4 tokens on llama-2-7b (h100.ini), results in out.json (the options follow).
 * llama-2-7b's preset gives max_model_len 4096 (serve_model.c). */
#define TWO HR_SERVE("h100.ini") "--model llama-2-7b --poisson n=2,prompt=64,output=4 --json out.json "
/* vLLM's rule, as the refusals quote it (serve_engine_apply.c strata_serve_engine_length_rule) */
#define VLLM_RULE "(vLLM's OpenAI server refuses prompt + output > max_model_len; llama-2-7b's max_model_len is 4096)"

/* --warm-prefix N is request i's first N tokens that an earlier run on the
 * same server sent (serve_stream.h): a prompt of N tokens or more with an
 * output of at least 1. --prior-run n=,prompt=,output= is that run itself
 * (serve_prior.h). Neither was held to the engine's length rule
 * (serve_engine.h): vLLM's OpenAI server refuses prompt + output >
 * max_model_len, so such a run left no blocks, yet each was replayed whole
 * at exit 0. --warm-prefix 2147483647 (taken up to 2^31 - 1) hashed
 * min(2^31 / 16, the pool's blocks) blocks a request: each request's evicted
 * the one before (prefix hits 48 tokens, one request's 3 blocks, against
 * 96 at --warm-prefix 64). Now refused naming the rule and the model's
 * max_model_len; at the bound itself taken: 4095 + 1 = 4096 <= 4096, and a
 * prior run of 4000 + 96 = 4096; 4000 + 97 = 4097 is refused. */
STRATA_ROWS_TEST(earlier_run_past_max_model_len,
    {TWO "--warm-prefix 2147483647", 2, "--warm-prefix 2147483647: expected an earlier run the server ran as sent "
     VLLM_RULE ", got a prompt of 2147483647 or more and an output of at least 1 tokens: it left no blocks in the "
     "cache"},
    {TWO "--warm-prefix 4096", 2, "--warm-prefix 4096: expected an earlier run the server ran as sent " VLLM_RULE
     ", got a prompt of 4096 or more"},
    /* 4095 taken: each 64-token prompt finds 3 of its 4 blocks (vLLM's lookup stops at its 63rd token), 48 x 2 */
    {TWO "--warm-prefix 4095 && grep -q '\"prefix_hit_tokens\" : 96' out.json", 0, NULL},
    {TWO "--prior-run n=2,prompt=4000,output=97", 2, "--prior-run n=2,prompt=4000,output=97: expected an earlier "
     "run the server ran as sent " VLLM_RULE ", got a prompt of 4000 and an output of 97 tokens: it left no blocks in "
     "the cache"},
    {TWO "--prior-run n=2,prompt=4000,output=96 && test -s out.json", 0, NULL},
    /* the second of two runs is the one named */
    {TWO "--prior-run n=2,prompt=64,output=4 --prior-run n=3,prompt=100000,output=4", 2, "--prior-run "
     "n=3,prompt=100000,output=4: expected an earlier run the server ran as sent"},
    /* TensorRT-LLM cuts an output past max_model_len (LlmRequest::validate: 4000 + 200 > 4096, output cut to 96):
     * that run left blocks, but other ones than its output= says; a prompt of 4096 it takes (prompt > L refused) */
    {TWO "--engine trtllm --prior-run n=2,prompt=4000,output=200", 2, "--prior-run n=2,prompt=4000,output=200: "
     "expected an earlier run the server ran as sent (TensorRT-LLM refuses a prompt longer than max_model_len; "
     "llama-2-7b's max_model_len is 4096), got a prompt of 4000 and an output of 200 tokens: it left other blocks in "
     "the cache"},
    {TWO "--engine trtllm --warm-prefix 4096 && test -s out.json", 0, NULL},
    /* a serving case of validate --published runs the same check, at its serve= line */
    {"printf '[case c ttft-mean]\\nsource = x\\nsetup = y\\nmeasured = 5ms\\nmetric = ttft-mean\\nhw = %s/h100.ini\\n"
     "serve = -m llama-2-7b --set layers=2 --poisson n=4,prompt=64,output=8 --warm-prefix 4096\\n' \"$H\" > c.ini; "
     "\"$S\" validate --published c.ini", 2, "c.ini:7: serve: --warm-prefix 4096: expected an earlier run the "
     "server ran as sent"},
)

int main(void)
{
    const TTest *const tests[] = {
        earlier_run_past_max_model_len,
        NULL,
    };
    return strata_hardening_main("twentyeighth", tests);
}
