/*
 * test_hardening_tenth.c: the tenth hardening pass (wave 30;
 * docs/reliability.md, "The tenth pass"), a row per case: each refused row
 * was a silent default, a wrong figure or a file no reader takes at exit 0,
 * or an exit 1 where bad input is due; the rows at 0 are what stays taken.
 *
 *  - the ninth pass's leftovers: [output] figures naming a key no point
 *    holds was a warning; plots = memory, memory was one plot;
 *    alloc --alignment 2^63 ran to an out-of-memory, exit 1;
 *  - what the pass found besides (see the tests' comments).
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary (outfile.c's ".BASENAME.XXXXXX").
 */
#include "hardening_rows.h"

#define EXP(output) "printf '[experiment]\\nname = x\\nhardware = %s/tpu-v5e.ini\\nworkload = matmul m=512 n=512 " \
                    "k=512 bm=128 bn=128 bk=128\\n[sweep]\\nworkload.buffers = 1, 2\\n[output]\\n" output "\\n' "  \
                    "\"$H\" > e.ini; "
#define SWEEP "\"$S\" sweep -q e.ini --out sw"

/* [output] figures = nosuch made the table an empty column and said
 * "warning: figure 'nosuch' is in no point's results", exit 0. The keys
 * are known once a point ran, so the sweep refuses at the table: the
 * figures' line, the keys the results hold near the figure's path, no
 * table written, the points kept (a corrected file finds them done). */
STRATA_ROWS_TEST(experiment_figures_known,
    {EXP("figures = nosuch") SWEEP, 2,
     "e.ini:8: figure 'nosuch' is in no point's results: expected a key they hold, such as producer, hardware, "
     "trace, status, makespan_s, ops, oom, memories.*, links.*, streams.*, compute.* (the points are kept in "},
    {EXP("figures = makespan_s, memories.hbm.nosuch") SWEEP, 2,
     "e.ini:8: figure 'memories.hbm.nosuch' is in no point's results: expected a key they hold, such as "
     "memories.hbm.kind, memories.hbm.capacity_bytes,"},
    /* no table after the refusal; the corrected file runs no point again */
    {EXP("figures = nosuch") SWEEP "; test $? = 2 && test ! -e sw/results.csv && " EXP("figures = makespan_s")
     "\"$S\" sweep e.ini --out sw | grep -q '(0 run now, 2 already done)' && test -s sw/results.csv", 0, NULL},
    /* what stays taken: keys the results hold */
    {EXP("figures = status, makespan_s, memories.hbm.peak_allocated_bytes") SWEEP, 0, NULL},
)

/* plots = memory, memory was taken as one plot; all beside a plot it
 * names the same, at exit 0. */
STRATA_ROWS_TEST(experiment_plots_once,
    {EXP("plots = memory, memory") SWEEP " --list-jobs", 2,
     "e.ini:8: plot 'memory' appears twice in plots = memory, memory: expected each plot once"},
    {EXP("plots = all, links") SWEEP " --list-jobs", 2,
     "e.ini:8: plot 'links' appears twice in plots = all, links (all names every plot): expected each plot once"},
    {EXP("plots = axes, all") SWEEP " --list-jobs", 2, "plot 'axes' appears twice in plots = axes, all (all"},
    {EXP("plots = all, all") SWEEP " --list-jobs", 2, "plot 'all' appears twice"},
    /* what stays taken */
    {EXP("plots = memory, links") SWEEP " --list-jobs", 0, NULL},
    {EXP("plots = all") SWEEP " --list-jobs", 0, NULL},
)

#define ALLOC_OF(spec) HR_TRACE "\"$S\" alloc -q --trace t.trace --allocator " spec " "
#define ALLOC ALLOC_OF("best-fit")

/* alloc --alignment 9223372036854775808 with -c 1GiB rounded the 1 MiB
 * request up to 8 EiB: an out-of-memory at op 0, exit 1. An alignment is
 * at most the capacity it rounds requests within: --capacity's, the
 * trace's device_limit, or --min-capacity's ceiling, 2^62 bytes. */
STRATA_ROWS_TEST(alloc_alignment_bounded,
    {ALLOC "-c 1GiB --alignment 9223372036854775808", 2,
     "alloc: --alignment: expected a power of two from 1 B to 1.00 GiB (the capacity, --capacity, 1073741824 B), "
     "got '9223372036854775808'"},
    {ALLOC "--min-capacity --alignment 9223372036854775808", 2,
     "--alignment: expected a power of two from 1 B to 4.00 EiB (the ceiling of --min-capacity's search, "
     "4611686018427387904 B)"},
    {"printf 'strata-trace 1\\noption allocator.device_limit=1GiB\\nalloc a 1MiB\\nfree a\\n' > t.trace; "
     "\"$S\" alloc -q --trace t.trace --allocator best-fit --alignment 2GiB", 2,
     "--alignment: expected a power of two from 1 B to 1.00 GiB (the capacity, the trace's device_limit"},
    /* what stays taken: the capacity itself (one request at a time fits) */
    {ALLOC "-c 1GiB --alignment 1GiB", 0, NULL},
    {ALLOC "--min-capacity --alignment 4611686018427387904 | grep -q 'min capacity     4611686018427387904 B'", 0,
     NULL},
)

/* Text that is not UTF-8 went on into names, and from names into JSON
 * unescaped: a stream named \xff made `run --json` write a file no JSON
 * parser reads, a model file's name the serve results the same; a request
 * CSV's column so named was skipped, a trace's comment taken; each at exit
 * 0. Every text reader (core/lines.h) now refuses such a line, with the
 * byte and its column; the key files' message stays as it was. */
STRATA_ROWS_TEST(text_is_utf8,
    {"printf 'strata-trace 1\\nalloc a 1MiB\\ncompute k time=1us in=a out=a stream=\\377\\nfree a\\n' > t.trace; "
     "\"$S\" run -q --hw \"$H/h100.ini\" --trace t.trace --json out.json", 2,
     "run: t.trace:3: expected UTF-8 text, got bytes that are not UTF-8 (0xff at column 38)"},
    {"printf 'strata-trace 1\\n# caf\\351\\n' > t.trace; \"$S\" run -q --hw \"$H/h100.ini\" --trace t.trace", 2,
     "t.trace:2: expected UTF-8 text, got bytes that are not UTF-8 (0xe9 at column 6)"},
    {"printf 'arrival_s,prompt_tokens,output_tokens,\\377\\n0,8,8,x\\n' > r.csv; " HR_SERVE("h100.ini")
     "--model llama-3-8b --requests r.csv", 2, "r.csv:1: expected UTF-8 text, got bytes that are not UTF-8"},
    {"printf 'name = m\\377\\nlayers = 2\\nhidden = 512\\nheads = 8\\nkv_heads = 8\\nhead_dim = 64\\n"
     "intermediate = 1024\\nvocab = 1000\\n' > m.model; " HR_SERVE("h100.ini")
     "--model-file m.model --poisson n=2 --json out.json", 2,
     "m.model:1: expected UTF-8 text, got bytes that are not UTF-8 (0xff at column 9)"},
    {HR_TRACE "printf '[hardware]\\nname = t\\377\\n' > hw.ini; \"$S\" run --hw hw.ini --trace t.trace", 2,
     "hw.ini:2: expected UTF-8 text, got bytes that are not UTF-8"},
    /* what stays taken: UTF-8 beyond ASCII, a byte order mark */
    {"printf 'strata-trace 1\\nalloc a 1MiB\\ncompute k time=1us in=a out=a stream=\\303\\274\\nfree a\\n' > t.trace; "
     "\"$S\" run -q --hw \"$H/h100.ini\" --trace t.trace --json o.json && grep -q '\"\303\274\"' o.json", 0, NULL},
    {"printf '\\357\\273\\277strata-trace 1\\nalloc a 1MiB\\nfree a\\n' > t.trace; "
     "\"$S\" run -q --hw \"$H/h100.ini\" --trace t.trace", 0, NULL},
)

#define SERVE HR_SERVE("h100.ini") "--model llama-3-8b --poisson n=2 "

/* serve --kv paged,paged ran paged twice (two equal rows), and --set
 * layers=1 --set layers=2 took the later where run's --set refuses a key
 * set twice: each at exit 0. */
STRATA_ROWS_TEST(serve_lists_once,
    {SERVE "--kv paged,paged", 2,
     "serve: --kv: scheme 'paged' appears twice in 'paged,paged': expected each scheme once (each is one run)"},
    {SERVE "--kv paged,vattention,paged", 2, "--kv: scheme 'paged' appears twice"},
    {SERVE "--set layers=1 --set layers=2", 2,
     "serve: --set: key 'layers' is set twice ('layers=1', then 'layers=2'): expected each key once"},
    {SERVE "--set layers=4 --set heads=32 --set layers=4", 2, "--set: key 'layers' is set twice"},
    /* what stays taken: distinct schemes and keys, a key that begins another's name */
    {SERVE "--kv paged,vattention", 0, NULL},
    {SERVE "--set head_dim=128 --set heads=32", 0, NULL},
)

#define GEN "\"$S\" gen collective -o out.trace "

/* gen collective op=all-reduce shift=3 generated an all-reduce and dropped
 * the shift (read by collective-permute alone), exit 0; caching's
 * max_split_size=0 was taken as unset (no limit), where PyTorch refuses
 * it as any value up to 20 MiB (CUDAAllocatorConfig.cpp,
 * parseMaxSplitSize). */
STRATA_ROWS_TEST(parameters_read_as_given,
    {GEN "op=all-reduce shift=3", 2,
     "gen: collective: shift: expected op=collective-permute, which reads it, got op=all-reduce"},
    {GEN "shift=1", 2, "shift: expected op=collective-permute, which reads it"},
    {ALLOC_OF("caching:max_split_size=0") "-c 1GiB", 2,
     "allocator caching: caching: max_split_size must be more than 20MiB (max_split_size_mb > 20), got 0 bytes"},
    /* what stays taken: a shift where it is read, the default, 21 MiB */
    {GEN "op=collective-permute shift=3 && grep -q 'shift=+3' out.trace", 0, NULL},
    {GEN "op=all-reduce && ! grep -q shift out.trace", 0, NULL},
    {ALLOC_OF("caching:max_split_size=21MiB") "-c 1GiB", 0, NULL},
)

#define HW_SIMPLE(extra) "{ cat \"$H/test-simple.ini\"; printf '" extra "'; } > hw.ini; "
#define CASE(keys) "printf '[case a]\\nsource = s\\nsetup = s\\nmetric = makespan\\nhw = %s/test-simple.ini\\n"      \
                   "trace = t.trace\\n" keys "' \"$H\" > v.ini; \"$S\" validate --published v.ini"

/* A second link between one pair of memories was taken and carried
 * nothing (a copy takes the pair's first link: 0 B, 0 %), exit 0; a
 * published case's measured = 1e300s was taken (its error 100 %), and
 * set = with no override overrode nothing, exit 0; calibrate --max-size
 * 4EiB passed the check of its buffers against memory (4 x 4 EiB wrapped
 * past 2^64) and said "cannot allocate the copy buffers", naming no
 * option. */
STRATA_ROWS_TEST(files_and_sizes,
    {HW_SIMPLE("[link pcie2]\\nbetween = hbm host\\nbandwidth = 1GB/s\\n") HR_TRACE
     "\"$S\" run --hw hw.ini --trace t.trace", 2,
     "[link pcie2] between: [link pcie] already joins hbm and host, and a copy takes the first link of a "
     "pair, so this one would carry nothing; expected one link a pair of memories (its bandwidth the links' sum)"},
    {HR_TRACE CASE("measured = 1e300s\\n"), 2,
     "v.ini:7: [case a] measured: expected a measured time of at most 1e9 s (a trace's latest timestamp, "
     "trace/check.h), got 1e300s"},
    {HR_TRACE CASE("measured = 1ms\\nset =\\n"), 2,
     "v.ini:8: [case a] set: expected KIND.NAME.KEY=VALUE overrides separated by blanks, got none"},
    {"\"$S\" calibrate -q --backend host --max-size 4EiB -o out.ini", 2,
     "calibrate: a largest copy of 4.00 EiB needs 4 buffers of that size, more than half of this machine's"},
    /* what stays taken: links of different pairs, a measured time of 1e9 s, an override */
    {HW_SIMPLE("[memory host2]\\nkind = host\\ncapacity = 1GiB\\nbandwidth = 10GB/s\\n[link pcie2]\\nbetween = hbm "
               "host2\\nbandwidth = 1GB/s\\n") HR_TRACE "\"$S\" run -q --hw hw.ini --trace t.trace", 0, NULL},
    {HR_TRACE CASE("measured = 1e9s\\n"), 0, NULL},
    {HR_TRACE CASE("measured = 1ms\\nset = memory.hbm.capacity=1GiB\\n"), 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        experiment_figures_known,
        experiment_plots_once,
        alloc_alignment_bounded,
        text_is_utf8,
        serve_lists_once,
        parameters_read_as_given,
        files_and_sizes,
        NULL,
    };
    return strata_hardening_main("tenth", tests);
}
