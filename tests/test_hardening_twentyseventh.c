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
    {DECODE("") " | grep -q '^c decode-attention .* 5.804 us'", 0, NULL},
    {DECODE("-q") " | grep -q '^c decode-attention .* 5.804 us'", 0, NULL},
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
    /* 10^11 tokens: above 2^32 - 1 = 4,294,967,295 */
    {CASE("moe-layer", "", "tokens = 99999999999\n"), 2, "c.ini:8: [case c moe-layer] tokens: expected a whole "
     "number of tokens from 1 to 4294967295 (2^32 - 1), got '99999999999'"},
)

int main(void)
{
    const TTest *const tests[] = {
        cost_case_option_it_does_not_read,
        serving_case_of_several_kv_schemes,
        measured_unit_the_metric_does_not_take,
        NULL,
    };
    return strata_hardening_main("twentyseventh", tests);
}
