/*
 * test_hardening_sixth.c: the sixth hardening pass (wave 26;
 * docs/reliability.md, "The sixth pass"), a row per case: each refused row
 * was a wrong figure or a silent default at exit 0, or a message that named
 * neither the input nor the reason; the rows at 0 are what stays taken.
 *
 *  - sweep: two values of one axis that are the same figure ("1, 01",
 *    "1GiB, 1024MiB") made two points of one run;
 *  - a config.json integer past 64 bits: json-glib holds it wrapped
 *    (-18446744073709551615 read as 1 layer, [-18446744073709551488, 128]
 *    as 128 x 128 FP8 weight blocks);
 *  - validate --published: a measured figure below its physical floor
 *    (1e-300s: an error of 1e301 %), a serving rate in hexadecimal, and a
 *    gen= case the model refuses named by the case;
 *  - gen collective: bytes past 2 EiB named as such;
 *  - serve: --gpu-memory-utilization and --step-overhead decimal; --sweep
 *    of a knob beside its option, or with two values alike; arrivals within
 *    1e7 s of the first (a double then resolves a step);
 *  - replay: --repeats and --warmup at most 10,000 (2^31 - 1 aborted).
 *
 * Every row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary (outfile.c's ".BASENAME.XXXXXX").
 */
#include <string.h>
#include "hardening_rows.h"

#define EXP(axis) "printf '[experiment]\\nname = x\\nhardware = %s/h100.ini\\nworkload = matmul m=512 n=512 k=512 " \
                  "bm=128 bn=128 bk=128\\n[sweep]\\n" axis "\\n' \"$H\" > e.ini; " \
                  "\"$S\" sweep e.ini --out sw --list-jobs > jobs.txt"

/* Values that differ as text but not as figures ran one configuration as
 * two points, at exit 0 (values the same as text were refused). */
STRATA_ROWS_TEST(sweep_axis_values_once,
    {EXP("workload.buffers = 1, 01"), 2,
     "e.ini:6: values '1' and '01' of axis 'workload.buffers' are the same number: two points would run one "
     "configuration; give each value once"},
    {EXP("memory.hbm.capacity = 1GiB, 2GiB, 1024MiB"), 2,
     "values '1GiB' and '1024MiB' of axis 'memory.hbm.capacity' are the same size"},
    {EXP("memory.hbm.bandwidth = 1TB/s, 1000GB/s"), 2, "are the same bandwidth"},
    {EXP("memory.hbm.latency = 1us, 1000ns"), 2,
     "values '1us' and '1000ns' of axis 'memory.hbm.latency' are the same time"},
    /* the workload's own buffers=2 replaced at every point; --out '' ran the sweep into the current folder */
    {"printf '[experiment]\\nname = x\\nhardware = %s/h100.ini\\nworkload = matmul buffers=2\\n[sweep]\\n"
     "workload.buffers = 1, 3\\n' \"$H\" > e.ini; \"$S\" sweep e.ini --out sw --list-jobs", 2,
     "e.ini:6: axis 'workload.buffers': the [experiment] workload gives buffers=2, which the axis replaces at "
     "every point; give buffers in one place"},
    {EXP("workload.buffers = 1, 2") "; \"$S\" sweep e.ini --out '' --no-report; s=$?; "
                                     "test ! -e points && exit $s", 2,
     "--out: expected a folder, got ''"},
    /* what stays taken: distinct figures, and integers a double cannot tell apart */
    {EXP("workload.buffers = 1, 2"), 0, NULL},
    {EXP("memory.hbm.capacity = 1152921504606846976, 1152921504606846977"), 0, NULL},
)

/* A config.json of four lines, num_hidden_layers on line 3. */
#define CONFIG(layers) "printf '{\"model_type\": \"llama\", \"hidden_size\": 64,\\n\"num_attention_heads\": 4, " \
                       "\"intermediate_size\": 128,\\n\"num_hidden_layers\": " layers ",\\n" \
                       "\"vocab_size\": 100}\\n' > c.json; "
#define SERVE HR_SERVE("h100.ini")

/* json-glib reads an integer literal through strtoull and a cast:
 * -18446744073709551615 was 1 layer and -18446744073709551488 128, at exit
 * 0; 9223372036854775808 was reported as -9223372036854775808. */
STRATA_ROWS_TEST(config_json_integers_within_64_bits,
    {CONFIG("-18446744073709551615") SERVE "--config c.json --poisson n=2", 2,
     "c.json:3: key 'num_hidden_layers': expected an integer within 64 bits (-2^63 to 2^63 - 1), got "
     "-18446744073709551615"},
    {CONFIG("-18446744073709551488") "\"$S\" gen -o out.trace transformer config=c.json", 2,
     "c.json:3: key 'num_hidden_layers': expected an integer within 64 bits"},
    {CONFIG("9223372036854775808") SERVE "--config c.json --poisson n=2", 2,
     "c.json:3: key 'num_hidden_layers': expected an integer within 64 bits (-2^63 to 2^63 - 1), got "
     "9223372036854775808"},
    /* within 64 bits, past 2^31: the range message names its bound */
    {CONFIG("9223372036854775807") SERVE "--config c.json --poisson n=2", 2,
     "key 'num_hidden_layers': expected a positive integer (at most 2^31 - 1), got 9223372036854775807"},
    /* weight_block_size's elements, read by read_quantization: -(2^64 - 128) wraps to
     * 2^64 - (2^64 - 128) = 128, and [-18446744073709551488, 128] ran as 128 x 128 blocks, exit 0 */
    {"printf '{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
     "\"intermediate_size\": 128, \"num_hidden_layers\": 1, \"vocab_size\": 100,\\n"
     "\"quantization_config\": {\"quant_method\": \"fp8\", "
     "\"weight_block_size\": [-18446744073709551488, 128]}}\\n' > c.json; "
     "\"$S\" gen -o out.trace transformer config=c.json", 2,
     "c.json:2: key 'quantization_config.weight_block_size': expected an integer within 64 bits (-2^63 to "
     "2^63 - 1), got -18446744073709551488"},
    /* what stays taken; a wide literal inside a string is text */
    {CONFIG("2") "\"$S\" gen -o out.trace transformer config=c.json", 0, NULL},
    {"printf '{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_attention_heads\": 4, "
     "\"num_hidden_layers\": 1, \"intermediate_size\": 128, \"vocab_size\": 100, "
     "\"x\": \"99999999999999999999\"}' > c.json; "
     "\"$S\" gen -o out.trace transformer config=c.json", 0, NULL},
)

#define TRACE HR_TRACE "cp \"$H/h100.ini\" \"$H/dgx-h100.ini\" .; "
#define CASE(metric, measured, more) TRACE "printf '[case a]\\nsource = s\\nsetup = s\\nmetric = " metric \
                                     "\\nmeasured = " measured "\\nhw = h100.ini\\n" more "' > v.ini; " \
                                     "\"$S\" validate --published v.ini"
#define SERIES(row) TRACE "printf 'bytes,bw\\n" row "\\n' > d.csv; printf '[series a]\\nsource = s\\nsetup = s\\n" \
                    "metric = bandwidth\\nhw = dgx-h100.ini\\ngen = collective op=all-reduce\\ndata = d.csv\\n" \
                    "column = bw\\nunit = GB/s\\n' > v.ini; \"$S\" validate --published v.ini"

/* measured = 1e-300s was taken (above 0) and printed an error of 1e301 %,
 * 1e-320s inf %; 0x10tok/s read as 16; a gen= case the model refuses said
 * "collective: op 3: ...", naming neither the file nor the case. */
STRATA_ROWS_TEST(published_figures_within_range,
    {CASE("makespan", "1e-300s", "trace = t.trace\\n"), 2,
     "v.ini:5: [case a] measured: expected a measured time of at least 1ns (two cycles of a 2 GHz clock), got "
     "1e-300s"},
    {CASE("makespan", "1e-320s", "trace = t.trace\\n"), 2, "v.ini:5: [case a] measured: expected a measured time"},
    {CASE("bandwidth", "1e-3B/s", "trace = t.trace\\nbytes = 1MiB\\n"), 2,
     "v.ini:5: [case a] measured: expected a measured bandwidth from 1kB/s to 10PB/s (the range hardware files "
     "take), got 1e-3B/s"},
    {CASE("bandwidth", "20PB/s", "trace = t.trace\\nbytes = 1MiB\\n"), 2, "expected a measured bandwidth"},
    {SERIES("1024,1e-300"), 2, "d.csv:2: bw: expected a measured bandwidth from 1kB/s to 10PB/s"},
    {CASE("output-throughput", "0x10tok/s", "serve = --model llama-3-8b --poisson n=2\\n"), 2,
     "v.ini:5: [case a] measured: expected a rate above 0"},
    {CASE("output-throughput", "1e-300tok/s", "serve = --model llama-3-8b --poisson n=2\\n"), 2,
     "v.ini:5: [case a] measured: expected a measured rate of at least 0.001 a second"},
    {CASE("makespan", "5us", "gen = collective op=all-reduce\\n"), 2,
     "v.ini:1: [case a] gen: collective: op 3: expected an op of one device"},
    /* what stays taken */
    {CASE("makespan", "1ns", "trace = t.trace\\n"), 0, NULL},
    {CASE("bandwidth", "1kB/s", "trace = t.trace\\nbytes = 1MiB\\n"), 0, NULL},
)

/* gen collective bytes=2EiB (2^61, a multiple of every element size) said
 * "expected bytes a positive whole number of elements of dtype". */
STRATA_ROWS_TEST(collective_bytes_past_64_bits_named,
    {"\"$S\" gen -o out.trace collective bytes=2EiB devices=16 op=all-gather", 2,
     "collective: expected bytes below 2EiB (its bits within 64 bits), got op=all-gather "
     "bytes=2305843009213693952"},
    {"\"$S\" gen -o out.trace collective bytes=3", 2,
     "expected bytes a positive whole number of elements of dtype"},
    {"\"$S\" gen -o out.trace collective bytes=1EiB devices=16 op=all-gather", 0, NULL},
)

#define POISSON SERVE "--model llama-3-8b --poisson n=4 "

/* GOption's doubles took hexadecimal (--step-overhead 0x10: 16 s a step);
 * --block-size beside --sweep block_size was ignored, and "1,01" ran one
 * configuration as two rows; --poisson's spread= with a fixed length and
 * --limit with --poisson were ignored, each at exit 0; a bad --kv-page was
 * "--swap-space/--kv-page/--non-kv-overhead: ...". */
STRATA_ROWS_TEST(serve_options_decimal_and_swept_once,
    {POISSON "--gpu-memory-utilization 0x0.8", 2,
     "--gpu-memory-utilization: expected a fraction in (0, 1], decimal, got '0x0.8'"},
    {POISSON "--step-overhead 0x10", 2,
     "--step-overhead: expected a finite number of seconds >= 0 or a time such as 2ms, got 0x10"},
    {POISSON "--block-size 8 --sweep block_size=16,32", 2,
     "--block-size: expected either --block-size or --sweep block_size=..., which sets it at every point "
     "(--block-size would be ignored)"},
    {POISSON "--step-overhead 0 --sweep step_overhead=0s,1ms", 2, "--step-overhead: expected either"},
    {POISSON "--sweep max_num_seqs=1,01", 2,
     "--sweep: values '1' and '01' of max_num_seqs are the same setting: two rows of one run; give each value "
     "once"},
    {POISSON "--sweep step_overhead=1ms,1000us", 2, "values '1ms' and '1000us' of step_overhead are the same"},
    /* read by nothing: spread= without dist=uniform, --limit without --requests */
    {SERVE "--model llama-3-8b --poisson n=2,spread=0.5", 2,
     "--poisson spread=0.5: expected dist=uniform, which reads it, got dist=fixed"},
    {SERVE "--model llama-3-8b --poisson n=2,dist=exp,spread=0.5", 2, "expected dist=uniform, which reads it"},
    {POISSON "--limit 1", 2, "--limit 1: expected --requests, whose first rows it keeps, got --poisson"},
    /* the option given, not all three */
    {POISSON "--kv vattention --kv-page 0", 2, "serve: --kv-page: expected a size above 0, got '0'"},
    {POISSON "--non-kv-overhead -1", 2, "serve: --non-kv-overhead: expected a size"},
    /* what stays taken */
    {SERVE "--model llama-3-8b --poisson n=2,dist=uniform,spread=0.5", 0, NULL},
    {POISSON "--gpu-memory-utilization 0.8 --step-overhead 1e-3", 0, NULL},
    {POISSON "--sweep max_num_seqs=1,2 --json out.json", 0, NULL},
)

#define REPLAY "printf 'strata-trace 1\\nalloc a 1MiB\\nfree a\\n' > t.trace; \"$S\" replay -b host -t t.trace "

/* An arrival at 1e20 s plus a 6 ms step was the arrival: the late
 * request's TTFT and TPOT were 0 (the p50s halved), exit 0; replay
 * --repeats 2147483647 aborted on a 16 GiB allocation (SIGTRAP, 133). */
STRATA_ROWS_TEST(work_within_what_a_double_and_memory_hold,
    {HR_CSV("0,512,128\\n1e20,512,128\\n") SERVE "--model llama-3-8b --requests r.csv", 2,
     "r.csv:3: arrival 1e+20 s x --time-scale 1: expected a finite time within 1e7 s of the first request's"},
    {HR_CSV("5,8,8\\n1e6,8,8\\n") SERVE "--model llama-3-8b --requests r.csv --time-scale 100", 2,
     "r.csv:3: arrival 999995 s x --time-scale 100: expected a finite time within 1e7 s"},
    {SERVE "--model llama-3-8b --poisson n=2,rate=1e-12", 2,
     "request 2 arrives at"},
    {REPLAY "--repeats 2147483647", 2,
     "--repeats 2147483647: expected at most 10000 runs (each timed run keeps its spans for the median"},
    {REPLAY "--repeats 1 --warmup 10001", 2, "--warmup 10001: expected at most 10000 runs"},
    /* what stays taken: epoch times (relative to the first row), a span of 1e7 s, 3 repeats */
    {HR_CSV("1700000000,8,8\\n1700000001.5,8,8\\n") SERVE "--model llama-3-8b --requests r.csv", 0, NULL},
    {HR_CSV("0,8,8\\n1e7,8,8\\n") SERVE "--model llama-3-8b --requests r.csv", 0, NULL},
    {REPLAY "--repeats 3 --warmup 0", 0, NULL},
    /* an empty output name said "empty output path", naming no option */
    {"\"$S\" gen -o '' matmul", 2, "gen: --output: expected a file name ('-': standard output), got ''"},
    {REPLAY "--repeats 1 --warmup 0 -j ''", 2, "replay: --json: expected a file name ('-': standard output)"},
    {POISSON "--json ''", 2, "serve: --json: expected a file name"},
)

int main(void)
{
    const TTest *const tests[] = {
        sweep_axis_values_once,
        config_json_integers_within_64_bits,
        published_figures_within_range,
        collective_bytes_past_64_bits_named,
        serve_options_decimal_and_swept_once,
        work_within_what_a_double_and_memory_hold,
        NULL,
    };
    return strata_hardening_main("sixth", tests);
}
