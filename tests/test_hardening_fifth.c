/*
 * test_hardening_fifth.c: the fifth hardening pass (wave 25;
 * docs/reliability.md, "The fifth pass"), a row per case: each refused
 * row was a wrong figure or a silent default at exit 0, or a message that
 * named neither the parameter nor the input; the rows at 0 are what stays
 * taken.
 *
 *  - serve's numbers are decimal: arrival_s, --poisson's values,
 *    --time-scale (strtod read 0x10 as 16);
 *  - gen transformer: remat_save= and remat_offload= checked (names, and
 *    the policy that reads them); collective_matmul= where a loop reads it;
 *  - gen matmul: unit= and step_unit= refused by name, not by the writer;
 *  - gen collective: a collective-permute's shift is not a multiple of
 *    devices (each rank would send to itself);
 *  - --set on a hardware file with base = names that file, not its base;
 *  - alloc: --capacity and --min-capacity not both; replay and validate:
 *    --device-memory with the cuda backend only; validate --published and
 *    --against: no replay option.
 *
 * Every row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary (outfile.c's ".BASENAME.XXXXXX").
 */
#include <string.h>
#include "hardening_rows.h"

#define SERVE HR_SERVE("h100.ini") "--model llama-3-8b "

/* g_ascii_strtod reads hexadecimal: an arrival of 0x10 was 16 s, a rate
 * 0x10 16 requests a second, at exit 0. */
STRATA_ROWS_TEST(serve_numbers_are_decimal,
    {HR_CSV("0,8,8\\n0x10,8,8\\n") SERVE "--requests r.csv", 2,
     "r.csv:3: arrival_s: expected seconds >= 0, got '0x10'"},
    {HR_CSV("0X1p4,8,8\\n") SERVE "--requests r.csv", 2, "r.csv:2: arrival_s: expected seconds >= 0, got '0X1p4'"},
    {HR_CSV("infinity,8,8\\n") SERVE "--requests r.csv", 2, "r.csv:2: arrival_s: expected seconds >= 0"},
    {SERVE "--poisson n=2,rate=0x10", 2, "--poisson rate: expected a number >= 0, got '0x10'"},
    {SERVE "--poisson n=0x2", 2, "--poisson n: expected a number >= 0, got '0x2'"},
    {SERVE "--poisson n=2 --time-scale 0x10", 2, "--time-scale: expected a factor >= 0, got '0x10'"},
    /* what stays taken: decimals with a fraction, an exponent, -0, CRLF */
    {HR_CSV("0,8,8\\n1.5e1,8,8\\n") SERVE "--requests r.csv --time-scale 0.5", 0, NULL},
    {"printf 'arrival_s,prompt_tokens,output_tokens\\r\\n-0,8,8\\r\\n' > r.csv; " SERVE "--requests r.csv", 0, NULL},
    {SERVE "--poisson n=2,rate=1e1,seed=7", 0, NULL},
)

#define TF "\"$S\" gen transformer layers=2 d_model=64 heads=4 seq=16 batch=2 vocab=100 -o out.trace "
#define SAVE_ONLY "remat=save_and_offload_only_these_names "

/* remat_save= / remat_offload= under another policy were ignored, and a
 * name no checkpoint carries saved nothing; collective_matmul= without a
 * model axis, or with a pipe axis, was ignored: each at exit 0. */
STRATA_ROWS_TEST(transformer_keys_read_or_refused,
    {TF "remat_save=qkv_proj", 2,
     "transformer: remat_save: expected remat=save_and_offload_only_these_names, which reads it, got remat=none"},
    {TF "remat=full remat_offload=out_proj", 2,
     "transformer: remat_offload: expected remat=save_and_offload_only_these_names, which reads it, got remat=full"},
    {TF SAVE_ONLY "remat_save=qkv_proj:qkv_prj", 2,
     "transformer: remat_save: expected checkpoint names separated by ':' from query_proj, key_proj, value_proj, "
     "qkv_proj, out_proj, mlpwi_0, mlpwi_1, mlpwi, mlpwo, context, got 'qkv_prj'"},
    {TF SAVE_ONLY "remat_offload=decoder_layer_input", 2, "remat_offload: expected checkpoint names"},
    {TF "collective_matmul=4", 2,
     "transformer: collective_matmul: expected a model axis in the mesh and no pipe axis"},
    {TF "mesh=data:2 sharding=fsdp collective_matmul=4", 2, "collective_matmul: expected a model axis"},
    {TF "mesh=pipe:2,model:2 sharding=tp+sp collective_matmul=4", 2, "collective_matmul: expected a model axis"},
    /* what stays taken */
    {TF SAVE_ONLY "remat_save=qkv_proj:out_proj remat_offload=mlpwo", 0, NULL},
    {TF SAVE_ONLY "remat_save=qkv_proj,context", 0, NULL},
    {TF "mesh=data:2,model:2 sharding=tp+sp collective_matmul=4", 0, NULL},
)

#define GEN "\"$S\" gen -o out.trace "
#define MM "\"$S\" gen -o t.trace matmul m=512 n=512 k=512 bm=128 bn=128 bk=128; "

/* unit='' was refused by the trace writer as "cannot write compute op
 * (line 0)", naming no parameter; a collective-permute whose shift is a
 * multiple of devices (each rank to itself) was generated, while shift=0
 * was refused; alloc's --capacity beside --min-capacity was ignored, and
 * replay's --device-memory on the host backend. */
STRATA_ROWS_TEST(generator_values_named,
    {GEN "matmul unit=", 2,
     "matmul: unit: expected a compute unit's name (printable, without spaces, '=', ',' or '#'), got ''"},
    {GEN "matmul step_unit='a b'", 2, "matmul: step_unit: expected a compute unit's name"},
    {GEN "matmul unit=a#b", 2, "matmul: unit: expected a compute unit's name"},
    {GEN "collective op=collective-permute shift=8", 2,
     "collective: expected shift other than 0 modulo devices (rank r sends to r + shift mod devices: here to "
     "itself), got op=collective-permute bytes=67108864 devices=8"},
    {GEN "collective op=collective-permute shift=-16 devices=8", 2, "shift other than 0 modulo devices"},
    {GEN "collective op=collective-permute devices=1", 2, "shift other than 0 modulo devices"},
    {GEN "collective op=collective-permute shift=0", 2, "expected shift other than 0 (within 32 bits)"},
    /* what stays taken */
    {GEN "matmul step_unit=none", 0, NULL},
    {GEN "matmul unit=vpu", 0, NULL},
    {GEN "collective op=collective-permute shift=9", 0, NULL},
    {GEN "collective op=collective-permute shift=-1", 0, NULL},
    /* alloc --min-capacity searched from one step up, --capacity 1GiB beside it ignored at exit 0 */
    {MM "\"$S\" alloc -q --trace t.trace --allocator best-fit --min-capacity --capacity 1GiB", 2,
     "--capacity 1GiB: expected --capacity or --min-capacity (which searches the capacity), not both"},
    {MM "\"$S\" alloc -q --trace t.trace --allocator best-fit --min-capacity", 0, NULL},
    /* replay --device-memory (cuda's) on the host backend: ignored at exit 0 */
    {MM "\"$S\" replay -b host -t t.trace --repeats 1 --warmup 0 --device-memory malloc", 2,
     "--device-memory malloc: expected --backend cuda, which reads it, got --backend host"},
    {MM "\"$S\" replay -b host -t t.trace --repeats 1 --warmup 0", 0, NULL},
    /* validate --published (and --against) read no replay's options: --repeats 3, -q, ... ignored at exit 0 */
    {"\"$S\" validate --published --repeats 3 nonexistent.ini", 2,
     "--repeats does not go with --published (it would be ignored)"},
    {"\"$S\" validate --published --warmup 0 nonexistent.ini", 2, "--warmup does not go with --published"},
    {"\"$S\" validate --published --check-allocators nonexistent.ini", 2,
     "--check-allocators does not go with --published"},
    {"\"$S\" validate --against k.json --hw \"$H/h100.ini\" -q", 2, "--quiet does not go with --against"},
)

#define DERIVED "printf '[hardware]\\nbase = %s/test-simple.ini\\nname = d\\n' \"$H\" > d.ini; " \
                "printf 'strata-trace 1\\nalloc a 1MiB\\n' > t.trace; "

/* An override of a file with base = named the base, which the command was
 * not given (and which may not even hold the group: a network the derived
 * file adds). */
STRATA_ROWS_TEST(overrides_name_the_file_given,
    {DERIVED "\"$S\" run -q --hw d.ini --trace t.trace --set memory.hbm.capacity=0", 2,
     "d.ini (override memory.hbm.capacity=0): [memory hbm] capacity: expected a positive size"},
    {DERIVED "\"$S\" run -q --hw d.ini --trace t.trace --set network.ib.bandwidth=1GB/s", 2,
     "override 'network.ib.bandwidth=1GB/s': d.ini has no group [network ib]"},
    {"printf 'strata-trace 1\\nalloc a 1MiB\\n' > t.trace; \"$S\" run -q --hw \"$H/h100-2x8-ib.ini\" "
     "--trace t.trace --set network.ib.bandwidth=0", 2,
     "h100-2x8-ib.ini (override network.ib.bandwidth=0): [network ib] bandwidth: expected a positive bandwidth"},
    /* a key of the derived file itself still names its line, through the base */
    {"printf '[hardware]\\nbase = %s/test-simple.ini\\nname = d\\n[memory hbm]\\ncapacity = 0\\n' \"$H\" > d.ini; "
     "printf 'strata-trace 1\\nalloc a 1MiB\\n' > t.trace; \"$S\" run -q --hw d.ini --trace t.trace", 2,
     "test-simple.ini (override d.ini:5): [memory hbm] capacity: expected a positive size"},
    {DERIVED "\"$S\" run -q --hw d.ini --trace t.trace --set memory.hbm.capacity=1GiB", 0, NULL},
)

#define RUN_ENV(v) "printf 'strata-trace 1\\nalloc a 1MiB\\n' > t.trace; STRATA_CLASSES_FALLBACK_COPIES=" v \
                   " \"$S\" run -q --hw \"$H/h100.ini\" --trace t.trace"

/* strata run's threshold for the default's fallback (docs/classes.md):
 * g_ascii_strtoull read "abc" as unset and "-1" as 2^64 - 1 (never
 * falling back), at exit 0. */
STRATA_ROWS_TEST(run_fallback_threshold_is_a_count,
    {RUN_ENV("abc"), 2,
     "STRATA_CLASSES_FALLBACK_COPIES (environment): expected a whole number of copies >= 1, got 'abc'"},
    {RUN_ENV("-1"), 2, "STRATA_CLASSES_FALLBACK_COPIES (environment): expected a whole number of copies >= 1"},
    {RUN_ENV("0"), 2, "expected a whole number of copies >= 1, got '0'"},
    /* what stays taken */
    {RUN_ENV("8192"), 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        serve_numbers_are_decimal,
        transformer_keys_read_or_refused,
        generator_values_named,
        overrides_name_the_file_given,
        run_fallback_threshold_is_a_count,
        NULL,
    };
    return strata_hardening_main("fifth", tests);
}
