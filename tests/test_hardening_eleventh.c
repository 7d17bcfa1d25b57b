/*
 * test_hardening_eleventh.c: the eleventh hardening pass (wave 31;
 * docs/reliability.md, "The eleventh pass"), a row per case: each refused
 * row was a silent default or a wrong figure at exit 0; the rows at 0 are
 * what stays taken.
 *
 *  - the tenth pass's leftovers: a config.json's max_position_embeddings
 *    0 and an unknown torch_dtype were taken; serve --preemption swap
 *    --swap-space 0 recomputed every preemption; a published serving rate
 *    had no ceiling; calibrate --help --backend nosuch printed the help at
 *    exit 0, which is what every command does (--help wins: pinned here);
 *  - what the pass found besides (see the tests' comments).
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary (outfile.c's ".BASENAME.XXXXXX").
 */
#include "hardening_rows.h"

#define SERVE_CONFIG HR_SERVE("h100.ini") "--config c.json --poisson n=2 --json out.json"
#define GEN_CONFIG HR_GEN_CONFIG

/* max_position_embeddings 0 and torch_dtype "auto" were read as keys that
 * change nothing (IGNORE), at exit 0. transformers reads torch_dtype (and
 * dtype, its name from 4.56) as getattr(torch, NAME): "auto" and
 * "torch.bfloat16" raise AttributeError there (configuration_utils.py,
 * PreTrainedConfig.__post_init__). */
STRATA_ROWS_TEST(config_json_checked_keys,
    {HR_CONFIG(", \"max_position_embeddings\": 0") SERVE_CONFIG, 2,
     "c.json: key 'max_position_embeddings': expected a positive integer (at most 2^31 - 1), got 0"},
    {HR_CONFIG(", \"max_position_embeddings\": -4096") GEN_CONFIG, 2,
     "key 'max_position_embeddings': expected a positive integer (at most 2^31 - 1), got -4096"},
    {HR_CONFIG(", \"max_position_embeddings\": \"8192\"") GEN_CONFIG, 2,
     "key 'max_position_embeddings': expected a positive integer (at most 2^31 - 1), got \"8192\""},
    {HR_CONFIG(", \"torch_dtype\": \"auto\"") SERVE_CONFIG, 2,
     "c.json: key 'torch_dtype': expected a torch dtype's name, as transformers writes it (float32, float16, "
     "bfloat16, float8_e4m3fn, ...: it reads the value as getattr(torch, NAME), so not \"auto\" or "
     "\"torch.bfloat16\"), got \"auto\""},
    {HR_CONFIG(", \"torch_dtype\": \"torch.bfloat16\"") GEN_CONFIG, 2,
     "key 'torch_dtype': expected a torch dtype's name"},
    {HR_CONFIG(", \"dtype\": \"bf16\"") GEN_CONFIG, 2, "key 'dtype': expected a torch dtype's name"},
    {HR_CONFIG(", \"torch_dtype\": 16") GEN_CONFIG, 2, "key 'torch_dtype': expected a torch dtype's name"},
    /* what stays taken: the names transformers writes, null (the class default), a key strata does not know */
    {HR_CONFIG(", \"max_position_embeddings\": 131072, \"torch_dtype\": \"bfloat16\"") SERVE_CONFIG, 0, NULL},
    {HR_CONFIG(", \"dtype\": \"float16\", \"torch_dtype\": null, \"max_position_embeddings\": null") GEN_CONFIG, 0,
     NULL},
    {HR_CONFIG(", \"torch_dtype\": \"float8_e4m3fn\", \"newer_field\": 3") GEN_CONFIG
     " 2>&1 | grep -q \"c.json: key 'newer_field' is not one strata reads: ignored\"", 0, NULL},
)

/* Three requests of 4,000 tokens on a pool of 300 blocks (4,800 tokens):
 * the second and third preempt. */
#define SWAP HR_SWAP

/* --preemption swap --swap-space 0 made every preemption a recompute
 * (preemptions 2, swaps 0), exit 0, where vLLM v0's _swap_out aborts the
 * engine at the first swap with no host room. A block of llama-3-8b is
 * 16 tokens x 131072 B = 2097152 B. */
STRATA_ROWS_TEST(swap_needs_swap_space,
    {SWAP "--preemption swap --swap-space 0", 2,
     "--preemption swap: --swap-space 0 B holds no KV block (2097152 B a block a rank), and vLLM v0 aborts at "
     "the first swap that finds no room (\"Aborted due to the lack of CPU swap space\", vllm/core/scheduler.py "
     "_swap_out): expected --swap-space of at least one block, or --preemption recompute"},
    {SWAP "--preemption swap --swap-space 2097151", 2, "--swap-space 2097151 B holds no KV block"},
    {SWAP "--preemption swap --sweep swap_space=4GiB,0", 2, "--swap-space 0 B holds no KV block"},
    /* what stays taken: the default 4 GiB swaps; no swap space without swap preemption (one block, where a
     * victim holds more, now stops the run as vLLM v0 does: the twelfth pass's swap_without_room_aborts) */
    {SWAP "--preemption swap && grep -q '\"swaps_out\" : [1-9]' out.json", 0, NULL},
    {SWAP "--swap-space 0", 0, NULL},
)

#define SERVE HR_SERVE("h100.ini") "--model llama-3-8b --poisson n=2 "

/* serve --max-num-batched-tokens 4 ran with the default --max-num-seqs
 * 1024 (a step of 4 tokens among up to 1024 sequences), exit 0, where vLLM
 * refuses a budget under its sequence count (vllm/config/scheduler.py,
 * SchedulerConfig.verify_max_model_len); a sweep's points the same. */
STRATA_ROWS_TEST(vllm_budget_holds_sequences,
    {SERVE "--max-num-batched-tokens 4 --json out.json", 2,
     "serve: --max-num-batched-tokens (4) is below --max-num-seqs (1024): vLLM (--scheduler vllm-v1) refuses a "
     "token budget under its sequence count; expected --max-num-batched-tokens >= --max-num-seqs"},
    {SERVE "--max-num-seqs 8 --sweep max_num_batched_tokens=8,7", 2,
     "--max-num-batched-tokens (7) is below --max-num-seqs (8)"},
    {SERVE "--scheduler vllm-v0-chunked --max-num-batched-tokens 128", 2,
     "--max-num-batched-tokens (128) is below --max-num-seqs (256): vLLM (--scheduler vllm-v0-chunked)"},
    /* what stays taken: equal; another engine's scheduler */
    {SERVE "--max-num-seqs 8 --max-num-batched-tokens 8", 0, NULL},
    {SERVE "--engine trtllm-cpp --max-num-seqs 1024 --max-num-batched-tokens 640", 0, NULL},
)

#define UNCHUNKED "--scheduler trtllm-no-evict-unchunked --max-num-batched-tokens 511 --json out.json "

/* trtllm-no-evict-unchunked rejects a prompt over the token budget; a
 * step that rejected every request there was ran nothing and was taken
 * for a stuck scheduler: "paged: the scheduler is stuck at 0.000 s:
 * swapped requests cannot return to a full pool", exit 2, with nothing
 * swapped and the pool empty (serve_step). Now the step waits for the
 * next arrival: 512-token prompts over a 511-token budget are both
 * rejected; of a 600-token prompt at 0 s and a 100-token one at 1 s, the
 * second is served. */
STRATA_ROWS_TEST(rejecting_step_not_stuck,
    {SERVE UNCHUNKED "&& grep -q '\"rejected\" : 2' out.json && grep -q '\"completed\" : 0' out.json", 0, NULL},
    {HR_CSV("0,600,8\\n1,100,8\\n") HR_SERVE("h100.ini") "--model llama-3-8b --requests r.csv " UNCHUNKED
     "&& grep -q '\"rejected\" : 1' out.json && grep -q '\"completed\" : 1' out.json", 0, NULL},
)

#define PUBLISHED(metric, measured) HR_TRACE "printf '[case a]\\nsource = s\\nsetup = s\\nserve = --model "      \
                                    "llama-3-8b --poisson n=2\\nmetric = " metric "\\nmeasured = " measured       \
                                    "\\nhw = %s/h100.ini\\n' \"$H\" > v.ini; \"$S\" validate --published v.ini"

/* A serving case's measured rate had a floor (0.001 a second) and no
 * ceiling: measured = 1e300tok/s ran, its error -100 %, exit 0. A rate is
 * at most 10^9 a second, one token or request a nanosecond (a measured
 * time's floor, 1 ns). */
STRATA_ROWS_TEST(published_rate_ceiling,
    {PUBLISHED("output-throughput", "1e300tok/s"), 2,
     "v.ini:6: [case a] measured: expected a measured rate of at most 1e9 a second (one token or request a "
     "nanosecond, a time's floor), got 1e300tok/s"},
    {PUBLISHED("request-throughput", "2e9req/s"), 2, "expected a measured rate of at most 1e9 a second"},
    /* what stays taken: 10^9 itself */
    {PUBLISHED("output-throughput", "1e9tok/s") " | grep -q '1000000000.00 tok/s'", 0, NULL},
)

#define SERVE_CASE(opts) "printf '[case a]\\nsource = s\\nsetup = s\\nserve = --model llama-3-8b --poisson n=2 " opts \
                         "\\nmetric = output-throughput\\nmeasured = 300tok/s\\nhw = %s/h100.ini\\n' \"$H\" > v.ini; " \
                         "\"$S\" validate --published v.ini"

/* A serving case's serve= took every `strata serve` option and dropped
 * those a case does not read, exit 0: --sweep tp=1,2 ran the base point
 * alone, --json out.json wrote nothing, --hw named a file never opened
 * (the case's hw= is the hardware). */
STRATA_ROWS_TEST(published_serve_options_read,
    {SERVE_CASE("--sweep tp=1,2"), 2,
     "v.ini:4: serve: --sweep: a case is one run on its hw= and writes no file: expected no --sweep, --json, "
     "--timeline or --hw"},
    {SERVE_CASE("--json out.json"), 2, "serve: --json: a case is one run on its hw= and writes no file"},
    {SERVE_CASE("--timeline out.json"), 2, "serve: --timeline: a case is one run"},
    {SERVE_CASE("--hw nosuch.ini"), 2, "serve: --hw: a case is one run on its hw="},
    /* what stays taken: --hw-set over hw=, quiet */
    {SERVE_CASE("--hw-set memory.hbm.capacity=80GB -q"), 0, NULL},
)

/* --help wins wherever it stands, before any option's value is checked:
 * calibrate --help --backend nosuch printed the help at exit 0, as every
 * command does with an unknown option value beside --help; the pass keeps
 * that and pins it for each command (nothing written, the help on
 * standard output). A word that chooses which help to print (the command,
 * import's and export's FORMAT) is checked first: there is no help of an
 * unknown one. */
STRATA_ROWS_TEST(help_wins,
    {"\"$S\" calibrate --help --backend nosuch -o out.ini | grep -q 'strata calibrate' && test ! -e out.ini", 0,
     NULL},
    {"\"$S\" calibrate --backend nosuch --help -o out.ini | grep -q 'strata calibrate' && test ! -e out.ini", 0,
     NULL},
    {"\"$S\" run --hw nosuch.ini --help --json out.json | grep -q 'strata run' && test ! -e out.json", 0, NULL},
    {"\"$S\" serve --kv nosuch --help | grep -q 'strata serve'", 0, NULL},
    {"\"$S\" alloc --allocator nosuch --help | grep -q 'strata alloc'", 0, NULL},
    {"\"$S\" replay --backend nosuch --help | grep -q 'strata replay'", 0, NULL},
    {"\"$S\" validate --repeats -1 --help | grep -q 'strata validate'", 0, NULL},
    {"\"$S\" transform --policy nosuch --help | grep -q 'strata transform'", 0, NULL},
    {"\"$S\" gen nosuch --help | grep -q 'strata gen'", 0, NULL},
    {"\"$S\" import torch --help --nosuch | grep -q 'strata import'", 0, NULL},
    /* the word that chooses the help */
    {"\"$S\" import nosuch --help", 2, "strata import: unknown format 'nosuch'; known formats: torch"},
    {"\"$S\" nosuch --help", 2, "strata: unknown command 'nosuch'"},
)

int main(void)
{
    const TTest *const tests[] = {
        config_json_checked_keys,
        swap_needs_swap_space,
        vllm_budget_holds_sequences,
        rejecting_step_not_stuck,
        published_rate_ceiling,
        published_serve_options_read,
        help_wins,
        NULL,
    };
    return strata_hardening_main("eleventh", tests);
}
