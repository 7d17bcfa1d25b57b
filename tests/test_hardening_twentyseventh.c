/*
 * test_hardening_twentyseventh.c: the twenty-seventh hardening pass (wave 47;
 * docs/reliability.md, "The twenty-seventh pass"), a new user's hunt over
 * the surfaces the passes touched least: validate --published's serving
 * cases and the serve options they parse. Each refused row was taken on the
 * base (main at the wave's start, 912058b0) at exit 0 with the figure of a
 * run without the option; the rows at 0 pin what stays taken.
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output.
 */
#include "hardening_rows.h"

/* c.ini: one case of the metric given on h100.ini, its measured figure given, its serve= line llama-2-7b's and the
 * options given, then the keys given (\\n each); then validate --published c.ini. CASE: measured 5us. */
#define CASE_M(metric, measured, opts, keys) "printf '[case c " metric "]\\nsource = x\\nsetup = y\\nmeasured = "    \
                                             measured "\\nmetric = " metric "\\nhw = %s/h100.ini\\nserve = -m "      \
                                             "llama-2-7b " opts "\\n" keys "' \"$H\" > c.ini; \"$S\" validate "      \
                                             "--published c.ini"
#define CASE(metric, opts, keys) CASE_M(metric, "5us", opts, keys)
#define DECODE(opts) CASE("decode-attention", opts, "tokens = 4\\ncontext = 100\\n")
#define MOE(opts) CASE("moe-layer", opts, "tokens = 4\\n")
#define STREAM "--set layers=2 --poisson n=4,prompt=64,output=8 "

/* A moe-layer or decode-attention case is one cost model's figure
 * (published_serve.c cost_child): it reads the model, --tp, --attention-dp,
 * --hw-set and (decode-attention) --engine's decode kernel. Every other
 * option of serve= was parsed and dropped at exit 0: --clock peak,
 * --engine-release 0.6.6, --kv all, --concurrency 3 each printed the
 * figure of the case without it (decode-attention of llama-2-7b, 4 decodes
 * of 100 tokens: 5.804 us, +16.1%, in every row). The shipped cases
 * (decode-attention*.ini, moe-layers*.ini) give only --model,
 * --model-file, --set, --tp and --engine: their figures do not move. */
STRATA_ROWS_TEST(cost_case_option_it_does_not_read,
    {DECODE("--clock peak"), 2, "c.ini:7: serve: --clock: a decode-attention case is one cost model's figure, no "
     "serving run: expected only --model, --model-file, --config, --set, --tp, --attention-dp, --hw-set and "
     "--engine (its decode kernel), which it reads"},
    {DECODE("--engine-release 0.6.6"), 2, "c.ini:7: serve: --engine-release: a decode-attention case is one cost"},
    {DECODE("--kv all"), 2, "c.ini:7: serve: --kv: a decode-attention case"},
    {DECODE("--concurrency 3"), 2, "c.ini:7: serve: --concurrency: a decode-attention case"},
    {DECODE("--block-size 32"), 2, "c.ini:7: serve: --block-size: a decode-attention case"},
    {DECODE("--no-prefix-caching"), 2, "c.ini:7: serve: --no-prefix-caching: a decode-attention case"},
    /* a moe-layer case reads no decode kernel: --engine too */
    {MOE("--engine trtllm"), 2, "c.ini:7: serve: --engine: a moe-layer case is one cost model's figure, no serving "
     "run: expected only --model, --model-file, --config, --set, --tp, --attention-dp and --hw-set, which it reads"},
    {MOE("--clock sustained"), 2, "c.ini:7: serve: --clock: a moe-layer case"},
    /* what stays: a request stream refused by its own words; the options read, and -q (nothing printed) */
    {DECODE("--poisson n=1"), 2, "c.ini:7: serve: a decode-attention case takes no request stream"},
    /* -q taken and the figure unmoved: the "" row's output and the -q row's the same (no cost-model figure here) */
    {DECODE("") " > a.txt && grep -q '^c decode-attention ' a.txt && " DECODE("-q") " > b.txt && cmp a.txt b.txt", 0,
     NULL},
    {DECODE("--engine trtllm --set layers=3 --hw-set memory.hbm.bandwidth=1TB/s") " | grep -q '^c decode-attention'",
     0, NULL},
)

/* A serving case runs one scheme (the first of --kv's list): --kv all ran
 * paged alone and dropped the five others at exit 0, --kv paged,vattention
 * vattention. Refused; one scheme of any name stays taken. */
STRATA_ROWS_TEST(serving_case_of_several_kv_schemes,
    {CASE("ttft-mean", STREAM "--kv all", ""), 2,
     "c.ini:7: serve: --kv all: a case is one run: expected one KV scheme, got 6"},
    {CASE("ttft-mean", STREAM "--kv paged,vattention", ""), 2,
     "c.ini:7: serve: --kv paged,vattention: a case is one run: expected one KV scheme, got 2"},
    {CASE("ttft-mean", STREAM "--kv vattention", "") " | grep -q '^c ttft-mean '", 0, NULL},
    {CASE("ttft-mean", STREAM, "") " | grep -q '^c ttft-mean '", 0, NULL},
)

/* A measured figure in a unit its metric does not take was told both
 * serving units ("expected a rate above 0 such as 6744tok/s or
 * 37.03req/s" for request-throughput's 5tok/s), and no measured= refusal
 * said what it got; tokens= past 2^32 - 1 was told "from 1" (no bound, no
 * value). Each now names the metric's unit, the bound and the text given. */
STRATA_ROWS_TEST(measured_unit_the_metric_does_not_take,
    {CASE_M("request-throughput", "5tok/s", STREAM, ""), 2, "c.ini:4: [case c request-throughput] measured: "
     "expected a rate above 0 in req/s (request-throughput's unit) such as 37.03req/s, got '5tok/s'"},
    {CASE_M("output-throughput", "5req/s", STREAM, ""), 2, "c.ini:4: [case c output-throughput] measured: expected "
     "a rate above 0 in tok/s (output-throughput's unit) such as 6744tok/s, got '5req/s'"},
    {CASE_M("ttft-mean", "5", STREAM, ""), 2, "c.ini:4: [case c ttft-mean] measured: expected a time above 0 such as "
     "3.6s, got '5'"},
    /* 10^11 tokens: above 2^24 = 16,777,216 (tokens' bound since, below) */
    {CASE("moe-layer", "", "tokens = 99999999999\n"), 2, "c.ini:8: [case c moe-layer] tokens: expected a whole "
     "number of tokens from 1 to 16777216 (2^24), got '99999999999'"},
)

/* tokens= up to 2^32 - 1 was taken, and a decode-attention case holds a
 * 16 B chunk a decode (published_serve.c decode_attention): 2^32 - 1 asked
 * g_new for 64 GiB, an abort (status 134), not exit 2. tokens now at most
 * 2^24 = 16,777,216 (256 MiB of chunks; --kv-blocks' bound). context= was
 * bounded by 2^32 - 1 alone: a decode past the model's longest sequence
 * was priced at exit 0. It is now at most the max_model_len the model
 * gives: llama-2-7b's preset gives 4096 (serve_model.c), --set another;
 * a model giving none (strata's default 8192, the Llama 3.x presets the
 * shipped cases decode at up to 131,072) is bounded by 2^32 - 1 alone. */
STRATA_ROWS_TEST(cost_case_tokens_and_context_bounds,
    /* 2^24 + 1 = 16,777,217 refused on tokens= (line 8); 2^24 itself read: the error is the model's (llama-2-7b
     * has no routed experts), after tokens= was taken */
    {CASE("decode-attention", "", "tokens = 16777217\ncontext = 100\n"), 2, "c.ini:8: [case c decode-attention] "
     "tokens: expected a whole number of tokens from 1 to 16777216 (2^24), got '16777217'"},
    {CASE("decode-attention", "", "tokens = 4294967295\ncontext = 100\n"), 2, "c.ini:8: [case c "
     "decode-attention] tokens: expected a whole number of tokens from 1 to 16777216 (2^24), got '4294967295'"},
    {CASE("moe-layer", "", "tokens = 16777216\n"), 2, "c.ini:7: serve: the model has no routed experts"},
    /* context= (line 9): 2^32 = 4,294,967,296 past the uint32 bound; 4096 + 1 past llama-2-7b's max_model_len */
    {CASE("decode-attention", "", "tokens = 4\ncontext = 4294967296\n"), 2, "c.ini:9: [case c decode-attention] "
     "context: expected a whole number of tokens from 1 to 4294967295 (2^32 - 1), got '4294967296'"},
    {CASE("decode-attention", "", "tokens = 4\ncontext = 4097\n"), 2, "c.ini:9: [case c decode-attention] "
     "context: expected at most 4096 tokens, the max_model_len of llama-2-7b (serve= on c.ini:7), got 4097"},
    {CASE("decode-attention", "--set max_model_len=2048", "tokens = 4\ncontext = 2049\n"), 2, "c.ini:9: [case c "
     "decode-attention] context: expected at most 2048 tokens, the max_model_len of llama-2-7b (serve= on c.ini:7), "
     "got 2049"},
    {CASE("decode-attention", "", "tokens = 4\ncontext = 4096\n") " | grep -q '^c decode-attention '", 0, NULL},
    /* an integer option at G_MININT, the "not given" mark entry_given reads (published_serve.c): refused before it
     * is read, by opt_check.c (the twenty-first pass), in serve= as on the command line */
    {DECODE("--concurrency -2147483648"), 2, "c.ini:7: serve: --concurrency: expected a whole number above "
     "-2147483648"},
)

int main(void)
{
    const TTest *const tests[] = {
        cost_case_option_it_does_not_read,
        serving_case_of_several_kv_schemes,
        measured_unit_the_metric_does_not_take,
        cost_case_tokens_and_context_bounds,
        NULL,
    };
    return strata_hardening_main("twentyseventh", tests);
}
