/*
 * test_hardening_seventh.c: the seventh hardening pass (wave 27;
 * docs/reliability.md, "The seventh pass"), a row per case: each refused
 * row was a wrong figure or a silent default at exit 0, a hang, or a
 * message that named neither the input nor the reason; the rows at 0 are
 * what stays taken.
 *
 *  - the sixth pass's leftovers: --set hardware.devices=12 blamed the
 *    file's devices_per_host line; a hardware latency of 1e-300s was
 *    taken; alloc --capacity 0 ran to an out-of-memory (exit 1); import
 *    minimalloc read 0x40 as 64; serve --poisson '' served 1,000 requests;
 *    an empty input name was refused by its reader naming no option;
 *  - jax-profile: a device_ordinal that is not a device number ("3abc",
 *    2^64, -1, 1.5) was read as 3 or dropped for the process's device;
 *  - endless inputs: /dev/zero as an importer's input was copied without
 *    end (filling the temporary folder), as a config.json read until
 *    memory ran out; a NUL byte in a MiniMalloc CSV ended it silently;
 *  - options: one given twice kept the last (--sweep a=1 --sweep a=2 ran
 *    a=2 alone); an integer option took octal and hexadecimal (--tp 010
 *    ran tp 8);
 *  - check --explain without --hw explained nothing, at exit 0; calibrate
 *    --name with a newline exited 3, and an empty [hardware] name loaded.
 *
 * Every row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary (outfile.c's ".BASENAME.XXXXXX").
 */
#include "hardening_rows.h"

#define RUN(hw) HR_TRACE "\"$S\" run --trace t.trace --hw \"$H/" hw "\" "

/* --set hardware.devices=12 on dgx-h100.ini (devices_per_host = 8) said
 * "dgx-h100.ini:43: [hardware] devices_per_host: expected a divisor of
 * devices = 12, got 8": the file's line, not the override that made 12;
 * a latency of 1e-300s (below a cycle of any clock) was taken, acting as 0. */
STRATA_ROWS_TEST(hardware_overrides_and_times,
    {RUN("dgx-h100.ini") "--set hardware.devices=12", 2,
     "dgx-h100.ini (override hardware.devices=12): [hardware] devices: expected a multiple of devices_per_host "
     "= 8 ("},
    /* the floor: one cycle of a 100 GHz clock, the fastest clock a hardware file takes (1e11 Hz: 1e-11 s) */
    {RUN("h100.ini") "--set memory.hbm.latency=1e-300s", 2,
     "(override memory.hbm.latency=1e-300s): [memory hbm] latency: expected a time from 0 to 1 s, and if above 0 "
     "at least 0.01ns (a cycle of a 100GHz clock, the fastest a hardware file takes), got '1e-300s'"},
    {HR_TRACE "sed 's/^latency = .*/latency = 9e-12s/' \"$H/h100.ini\" > h.ini; "
           "\"$S\" run --trace t.trace --hw h.ini", 2,
     "[memory hbm] latency: expected a time from 0 to 1 s, and if above 0 at least 0.01ns"},
    /* what stays taken: 16 devices of 8 a host; 0 (no latency) and the floor itself */
    {RUN("dgx-h100.ini") "--set hardware.devices=16", 0, NULL},
    {RUN("h100.ini") "--set memory.hbm.latency=0", 0, NULL},
    {RUN("h100.ini") "--set memory.hbm.latency=0.01ns", 0, NULL},
)

#define MM(rows) "printf 'id,lower,upper,size\\n" rows "' > m.csv; \"$S\" import minimalloc m.csv -o out.trace"
#define JAX(args) "printf '{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":" \
                  "{\"name\":\"/device:GPU:0\"}},\\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2," \
                  "\"args\":{\"name\":\"XLA Ops\"}},\\n{\"ph\":\"X\",\"name\":\"fusion.1\",\"pid\":1,\"tid\":2," \
                  "\"ts\":1,\"dur\":5,\"args\":{\"hlo_op\":\"fusion.1\"" args "}}]}\\n' > p.json; " \
                  "\"$S\" import jax-profile p.json -o out.trace"

/* import minimalloc took 0x10 as 16 (MiniMalloc's reader, absl::SimpleAtoi,
 * takes decimal only) and stopped at a NUL byte, dropping the rows after
 * it; a jax-profile device_ordinal "3abc" was device 3, and -1, 1.5 and
 * 2^64 (widened to a float by kineto_scan) were dropped for the process's
 * device; alloc --capacity 0 ran to an out-of-memory at exit 1. */
STRATA_ROWS_TEST(importers_numbers,
    {MM("a,0,0x10,64\\n"), 2, "m.csv:2: expected upper as a non-negative decimal integer within 64 bits, got '0x10'"},
    {MM("a,0,10,64\\n\\000b,0,5,64\\n"), 2, "m.csv:3:1: expected text, got a NUL byte"},
    {JAX(",\"device_ordinal\":\"3abc\""), 2,
     "p.json:3: event 'fusion.1': device_ordinal: expected a whole number from 0 to 1048575, got '3abc'"},
    {JAX(",\"device_ordinal\":18446744073709551616"), 2,
     "device_ordinal: expected a whole number from 0 to 1048575, got 1.84467e+19"},
    {JAX(",\"device_ordinal\":-1"), 2, "device_ordinal: expected a whole number from 0 to 1048575, got -1"},
    {JAX(",\"device_ordinal\":1.5"), 2, "device_ordinal: expected a whole number from 0 to 1048575, got 1.5"},
    {HR_TRACE "\"$S\" alloc -q --trace t.trace --allocator best-fit --capacity 0", 2,
     "alloc: --capacity: expected a size above 0, got '0'"},
    /* what stays taken: decimal rows; an ordinal as a number or as decimal digits (TSL writes strings) */
    {MM("a,0,10,64\\nb,0,5,64\\n"), 0, NULL},
    {JAX(",\"device_ordinal\":\"3\"") " && grep -q fusion out.trace", 0, NULL},
    {JAX(",\"device_ordinal\":3"), 0, NULL},
)

#define SERVE HR_SERVE("dgx-h100.ini") "--model llama-3-8b "

/* Each of these named no option ("strata run: : cannot open trace: No
 * such file or directory", "strata serve: : No such file or directory");
 * --poisson '' served the defaults' 1,000 requests. */
STRATA_ROWS_TEST(empty_names_and_values,
    {HR_TRACE "\"$S\" run --trace '' --hw \"$H/h100.ini\"", 2, "run: --trace: expected a file name, got ''"},
    {HR_TRACE "\"$S\" run --trace t.trace --hw '' --json out.json", 2, "run: --hw: expected a file name, got ''"},
    {HR_TRACE "\"$S\" check --trace t.trace --hw ''", 2, "check: --hw: expected a file name, got ''"},
    {"\"$S\" alloc --trace '' --allocator best-fit --capacity 1GiB", 2,
     "alloc: --trace: expected a file name, got ''"},
    {SERVE "--requests ''", 2, "serve: --requests: expected a file name, got ''"},
    {"\"$S\" serve -q --hw \"$H/h100.ini\" --config '' --poisson n=2", 2,
     "serve: --config: expected a file name, got ''"},
    {"\"$S\" sweep ''", 2, "sweep: expected one EXPERIMENT.ini, got ''"},
    {"\"$S\" import minimalloc '' -o out.trace", 2, "import minimalloc: expected one FILE.csv, got ''"},
    {"\"$S\" validate --published ''", 2, "validate: --published: expected a file name, got ''"},
    {"\"$S\" gen -o out.trace transformer config=", 2,
     "gen: transformer: config: expected a config.json file name, got ''"},
    {SERVE "--poisson ''", 2, "serve: --poisson: expected KEY=VALUE,... such as n=100,rate=4, got ''"},
    {SERVE "--poisson n=2,", 2, "serve: --poisson: expected KEY=VALUE, got ''"},
    /* what stays taken */
    {SERVE "--poisson n=2 --json out.json", 0, NULL},
)

/* /dev/zero given to an importer was copied to a temporary without end
 * (strata_job_input_once: the disk filled); as a config.json it was read
 * whole (g_file_get_contents) until memory ran out. A device yields at
 * most 16 MiB now, and a text read whole stops at its first NUL byte. */
STRATA_ROWS_TEST(endless_inputs_end,
    {"\"$S\" import minimalloc /dev/zero -o out.trace", 2,
     "/dev/zero: a device that yields more than 16777216 bytes (an endless one, such as /dev/zero?): expected "
     "a file, a pipe or a terminal"},
    {"\"$S\" import kineto - -o out.trace < /dev/zero", 2, "a device that yields more than 16777216 bytes"},
    {"\"$S\" serve -q --hw \"$H/h100.ini\" --config /dev/zero --poisson n=2", 2,
     "/dev/zero:1:1: expected text, got a NUL byte"},
    {"\"$S\" gen -o out.trace transformer config=/dev/zero", 2, "/dev/zero:1:1: expected text, got a NUL byte"},
    /* what stays taken: a device that ends, a pipe */
    {"\"$S\" import minimalloc /dev/null -o out.trace", 2, "/dev/null:1: expected the header 'id,lower,upper,size'"},
    {"printf 'id,lower,upper,size\\na,0,1,64\\n' | \"$S\" import minimalloc - -o out.trace", 0, NULL},
)

/* GOption keeps the last of an option given twice: --sweep max_num_seqs=1
 * --sweep max_num_seqs=2 ran max_num_seqs=2 alone, -c 1GiB --capacity 2GiB
 * 2 GiB; and reads an integer option through strtol(.., 0): --tp 010 ran
 * tp 8, --tp 0x2 tp 2; each at exit 0. */
STRATA_ROWS_TEST(options_once_and_decimal,
    {SERVE "--poisson n=2 --sweep max_num_seqs=1 --sweep max_num_seqs=2", 2,
     "serve: --sweep given twice ('max_num_seqs=1', then 'max_num_seqs=2'): expected it once (the first would "
     "be ignored)"},
    {HR_TRACE "\"$S\" alloc --trace t.trace --allocator best-fit -c 1GiB --capacity=2GiB", 2,
     "alloc: --capacity given twice ('1GiB', then '2GiB')"},
    {HR_TRACE "\"$S\" run --trace t.trace --hw \"$H/h100.ini\" --json out.a.json --json out.b.json", 2,
     "run: --json given twice"},
    {SERVE "--poisson n=2 --tp 010", 2,
     "serve: --tp: expected a decimal whole number (digits, no leading zero), got '010'"},
    {SERVE "--poisson n=2 --tp 0x2", 2, "serve: --tp: expected a decimal whole number"},
    {SERVE "--poisson n=2 --tp=' 2'", 2, "serve: --tp: expected a decimal whole number"},
    /* -oFILE is not GOption's: its own message, not "--output given twice ('matmul', then '')" */
    {"\"$S\" gen -oout.trace matmul", 2, "gen: Error parsing option -o"},
    /* a mesh size past 2^32 said "a size is not a number" */
    {"\"$S\" gen -o out.trace collective devices=99999999999", 2, "got 'data:99999999999': a size is 0 or too large"},
    /* what stays taken: the array options and flags repeated */
    {HR_TRACE "\"$S\" run -q --trace t.trace --hw \"$H/h100.ini\" --set memory.hbm.capacity=1GiB "
           "--set link.pcie.bandwidth=8GB/s", 0, NULL},
    {SERVE "--poisson n=2 --tp 2", 0, NULL},
)

#define KTRACE "printf 'strata-trace 1\\nalloc a 1MiB\\nalloc b 1MiB\\ncompute mm kernel=gemm dims=256x256x256 " \
               "dtype=bf16 in=a out=b\\nfree a\\nfree b\\n' > k.trace; "

/* check --explain without --hw (or with a label no kernel op has)
 * explained nothing at exit 0; calibrate --name with a newline exited 3
 * ("internal error, the measured model does not load"), and --name ''
 * wrote "name = ", which the loader took ("t.trace on " in the summary). */
STRATA_ROWS_TEST(check_and_calibrate_say_what_they_read,
    {KTRACE "\"$S\" check --trace k.trace --explain mm", 2,
     "check: --explain: expected --hw HW.ini, whose units it explains the kernels' times on, got no --hw"},
    {KTRACE "\"$S\" check --trace k.trace --hw \"$H/h100.ini\" --explain nosuch", 2,
     "check: --explain nosuch: expected the label of a compute op that names a kernel=, found none in k.trace"},
    {KTRACE "\"$S\" check --trace k.trace --hw \"$H/h100.ini\" --explain ''", 2,
     "check: --explain: expected a compute op's label (or * for every one), got ''"},
    {"\"$S\" calibrate -q -b host --max-size 4KiB --name 'a\nb' -o out.ini", 2,
     "calibrate: --name: expected text on one line for [hardware] name (no control characters), got 'a\\nb'"},
    {"\"$S\" calibrate -q -b host --max-size 4KiB --name '' -o out.ini", 2, "calibrate: --name: expected text"},
    {HR_TRACE "sed 's/^name = .*/name = /' \"$H/h100.ini\" > h.ini; \"$S\" run --trace t.trace --hw h.ini", 2,
     "[hardware] name: expected the machine's name (text), got ''"},
    /* what stays taken */
    {KTRACE "\"$S\" check --trace k.trace --hw \"$H/h100.ini\" --explain mm | grep -q 'kernel=gemm'", 0, NULL},
)

#define KINETO "\"$S\" import kineto \"$H/../../tests/data/kineto-fresh/mi300-bert-small-excerpt.json\" -o out.trace "

/* import kineto and torch read --allocator and --capacity for --fidelity
 * only: without it they were ignored at exit 0; with it, an unknown
 * allocator or --capacity 0 was refused after the trace was written (the
 * output stayed beside the exit 2). --device -18446744073709551615 was
 * read by g_ascii_strtoull as 1. */
STRATA_ROWS_TEST(import_options,
    {KINETO "--capacity 1GiB", 2,
     "import kineto: --capacity 1GiB: expected --fidelity, which reads it (the import itself replays nothing "
     "through an allocator)"},
    {KINETO "--allocator bfc", 2, "import kineto: --allocator bfc: expected --fidelity, which reads it"},
    {KINETO "--fidelity --allocator nosuch", 2, "import kineto: --allocator: unknown allocator 'nosuch'"},
    {KINETO "--fidelity --capacity 0", 2, "import kineto: --capacity: expected a size above 0, got '0'"},
    {"\"$S\" import torch \"$H/../../tests/data/torch-host/pinned.pickle\" -o out.trace --capacity 1GiB", 2,
     "import torch: --capacity 1GiB: expected --fidelity, which reads it"},
    /* g_ascii_strtoull negates: --device -18446744073709551615 imported device 1 */
    {KINETO "--device -18446744073709551615", 2,
     "import kineto: --device: expected a device number, got '-18446744073709551615'"},
    {"\"$S\" import torch \"$H/../../tests/data/torch-host/pinned.pickle\" -o out.trace --device "
     "-18446744073709551615", 2, "import torch: --device: expected a device number or 'all'"},
    /* what stays taken */
    {KINETO "--fidelity --allocator caching --capacity 80GiB", 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        hardware_overrides_and_times,
        importers_numbers,
        empty_names_and_values,
        endless_inputs_end,
        options_once_and_decimal,
        check_and_calibrate_say_what_they_read,
        import_options,
        NULL,
    };
    return strata_hardening_main("seventh", tests);
}
