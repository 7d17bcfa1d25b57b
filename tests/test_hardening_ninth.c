/*
 * test_hardening_ninth.c: the ninth hardening pass (wave 29;
 * docs/reliability.md, "The ninth pass"), a row per case: each refused
 * row was a silent default, a wrong figure at exit 0, or a run that died
 * leaving its temporaries; the rows at 0 are what stays taken.
 *
 *  - the eighth pass's leftovers: two policy axes giving one policy were
 *    refused only when a point ran; a request arrival of 1e-320 (a
 *    subnormal) was taken; a Kineto dur of 0.0001 us became time=0;
 *    alloc --memory '' named no option;
 *  - what the pass found besides (see the tests' comments).
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary (outfile.c's ".BASENAME.XXXXXX").
 */
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "hardening_rows.h"

#define EXP(extra, axes) "printf '[experiment]\\nname = x\\nhardware = %s/tpu-v5e.ini\\nworkload = matmul m=512 " \
                         "n=512 k=512 bm=128 bn=128 bk=128\\n" extra "[sweep]\\n" axes "' \"$H\" > e.ini; "     \
                         "\"$S\" sweep e.ini --out sw --list-jobs"

/* Two axes meet at every pair of their values: "policy.prefetch = 1, 2"
 * beside "policy = none, pad+prefetch=3" loaded and listed its points,
 * and the points with prefetch twice failed when they ran ("policy
 * prefetch given twice"), naming no line of the file. Now refused at the
 * later axis's line; a joint axis's members the same, at its tuple. */
STRATA_ROWS_TEST(policy_axes_apart,
    {EXP("", "policy.prefetch = 1, 2\\npolicy = none, pad+prefetch=3\\n"), 2,
     "e.ini:7: bad policy: value 'pad+prefetch=3' of axis 'policy' meets value '1' of axis 'policy.prefetch' "
     "(line 6) at a point: policy prefetch given twice ('prefetch=1', then 'prefetch=3'): expected each policy once"},
    {EXP("", "policy = none, offload=param\\npolicy.offload = off, optstate, param\\n"), 2,
     "e.ini:7: bad policy: value 'param' of axis 'policy.offload' meets value 'offload=param' of axis 'policy' "
     "(line 6) at a point: policy offload of kind param given twice"},
    /* an axis between them, and a joint axis that holds the policy */
    {EXP("", "policy.prefetch = 1, 2\\nmemory.hbm.capacity = 1GiB, 2GiB\\npolicy + workload.buffers = donate 1, "
             "pad+prefetch=3 2\\n"), 2,
     "e.ini:8: bad policy: value 'pad+prefetch=3 2' of axis 'policy + workload.buffers' meets value '1' of axis "
     "'policy.prefetch' (line 6)"},
    {EXP("", "policy + policy.prefetch = pad+prefetch=3 1, pad off\\n"), 2,
     "e.ini:6: in tuple 'pad+prefetch=3 1' of joint axis 'policy + policy.prefetch': bad policy: policy prefetch "
     "given twice ('prefetch=3', then 'prefetch=1')"},
    /* a bad policy in a joint axis is the member's error (the check of the tuple's policies together
     * parsed it first, with no file to name, and crashed: found in review) */
    {EXP("", "policy + workload.buffers = nosuch 1, pad 2\n"), 2,
     "e.ini:6: in tuple 'nosuch 1' of joint axis 'policy + workload.buffers': bad policy: unknown policy 'nosuch'"},
    /* what stays taken: two kinds of offload, other policies, prefetch in one axis only */
    {EXP("", "policy = none, offload=param\\npolicy.offload = off, optstate\\n"), 0, NULL},
    {EXP("", "policy.prefetch = 1, 2\\npolicy = none, pad+donate\\n"), 0, NULL},
    {EXP("", "policy + policy.prefetch = pad 1, donate off\\n"), 0, NULL},
)

#define SERVE HR_SERVE("h100.ini") "--model llama-3-8b "

/* A request arrival of 1e-320 (a subnormal), or an Azure TIMESTAMP's
 * fraction below a picosecond, was taken as an arrival after 0; so were
 * arrivals that --time-scale 1e-320 or --poisson rate=1e300 (gaps of
 * 1e-300 s) scaled below a picosecond; --step-overhead 1e300 ran 10^300 s
 * a step (E2E printed with 300 digits) and 1e-320 a subnormal, a sweep's
 * step_overhead=1e300s the same: each at exit 0. The floor is a trace's
 * (trace/check.h): a picosecond; the step's ceiling a trace op's, 10^6 s. */
STRATA_ROWS_TEST(serve_times_within_a_trace_range,
    {HR_CSV("0,8,8\\n1e-320,8,8\\n") SERVE "--requests r.csv", 2,
     "serve: r.csv:3: arrival_s: expected seconds of 0, or at least 1e-12 s (a picosecond, the finest time strata "
     "keeps), got '1e-320'"},
    {"printf 'TIMESTAMP,ContextTokens,GeneratedTokens\\n2023-11-16 18:15:46.0000000000001,8,8\\n' > r.csv; " SERVE
     "--requests r.csv", 2,
     "r.csv:2: TIMESTAMP: expected a fraction of a second of 0, or at least 1e-12 s"},
    {HR_CSV("0,8,8\\n1,8,8\\n") SERVE "--requests r.csv --time-scale 1e-320", 2,
     "r.csv:3: arrival 1 s x --time-scale 9.99989e-321: expected 0 or at least 1e-12 s after the first request's"},
    {SERVE "--poisson n=4,rate=1e300", 2,
     "request 2 arrives at 5.87272e-300 s x --time-scale 1: expected 0 or at least 1e-12 s after the first "
     "request's (a picosecond, the finest time strata keeps) (another rate= or --time-scale)"},
    {SERVE "--poisson n=2 --step-overhead 1e300", 2,
     "serve: --step-overhead: expected 0, or from 1e-12 s (a picosecond) to 1e6 s (a trace op's most), got 1e300"},
    {SERVE "--poisson n=2 --step-overhead 1e-320", 2, "--step-overhead: expected 0, or from 1e-12 s"},
    {SERVE "--poisson n=2 --sweep step_overhead=1e300s,1ms", 2,
     "--sweep: step_overhead: expected seconds (0.002) or a time such as 2ms: 0, or from 0.001ns (a picosecond) to "
     "1e6 s, got '1e300s'"},
    /* what stays taken: 0, the floor, --time-scale 0 (all at once), a step overhead of 0 or a millisecond */
    {HR_CSV("0,8,8\\n1e-12,8,8\\n0.5,8,8\\n") SERVE "--requests r.csv", 0, NULL},
    {HR_CSV("0,8,8\\n1,8,8\\n") SERVE "--requests r.csv --time-scale 0", 0, NULL},
    {SERVE "--poisson n=2 --step-overhead 0.001", 0, NULL},
    {SERVE "--poisson n=2 --sweep step_overhead=0,1ms", 0, NULL},
)

/* --prefill-decode-attention (wave 31): vLLM V1's
 * VLLM_V1_USE_PREFILL_DECODE_ATTENTION, read only by its ROCm build's
 * Triton backend: refused with an --engine row and off RCCL hardware;
 * taken by the default row on mi300x-8. */
STRATA_ROWS_TEST(serve_prefill_decode_attention,
    {SERVE "--poisson n=2 --prefill-decode-attention", 2,
     "serve: --prefill-decode-attention: expected no --engine (vLLM V1, which reads "
     "VLLM_V1_USE_PREFILL_DECODE_ATTENTION) on AMD hardware (vendor = amd or collectives = rccl: vLLM's ROCm "
     "build), got vllm-v1 on non-AMD hardware"},
    {HR_SERVE("mi300x-8.ini") "--model llama-3-8b --poisson n=2 --engine vllm-v0 --prefill-decode-attention", 2,
     "got vllm-v0 on AMD hardware"},
    {HR_SERVE("mi300x-8.ini") "--model llama-3-8b --poisson n=2 --prefill-decode-attention", 0, NULL},
)

/* --kv-blocks 2147483647 (review of wave 29): a pool of 2^31 blocks, whose
 * free list (20 B a block) the paged scheme built before the first step,
 * ran past a minute and 40 GB of memory at exit 0 or a kill. At most 2^24
 * blocks a rank (268 million tokens at 16 a block; 10^7 blocks run in
 * 0.2 s); the bound and 1 stay taken. */
STRATA_ROWS_TEST(serve_kv_blocks_bounded,
    {SERVE "--poisson n=2 --engine turbomind --kv-blocks 2147483647", 2,
     "serve: --kv-blocks: expected 1 to 2^24 (16777216) blocks a rank, got 2147483647"},
    {SERVE "--poisson n=2 --kv-blocks 16777217", 2, "--kv-blocks: expected 1 to 2^24 (16777216)"},
    {SERVE "--poisson n=2,prompt=8,output=4 --engine turbomind --kv-blocks 16777216", 0, NULL},
    {SERVE "--poisson n=2,prompt=8,output=4 --kv-blocks 1", 0, NULL},
)

#define KINETO(dur) "printf '{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":" \
                    dur ",\"cat\":\"kernel\",\"args\":{\"device\":0,\"stream\":7}}]}' > k.json; "               \
                    "\"$S\" import kineto k.json -o out.trace"

/* A Kineto dur of 0.0001 us was rounded to whole ns: time=0, exit 0.
 * Kineto writes a dur as "{}.{:03}" of ns (libkineto output_json.cpp), so
 * a positive dur that rounds to 0 ns is no Kineto's; alloc --memory ''
 * read the whole trace, then said "allocates nothing in memory ''". */
STRATA_ROWS_TEST(kineto_durs_and_alloc_memory,
    {KINETO("0.0001"), 2,
     "import kineto: k.json:1: kernel event: expected a dur of 0, or at least 0.0005 us (the import keeps whole "
     "nanoseconds, as Kineto writes them; this one would become time=0), got 0.0001 us"},
    {KINETO("0.00049"), 2, "got 0.00049 us"},
    /* what stays taken: 0, and a half nanosecond (rounds to 1 ns) */
    {KINETO("0") " && grep -q 'compute k time=0 ' out.trace", 0, NULL},
    {KINETO("0.0005") " && grep -q 'compute k time=1ns ' out.trace", 0, NULL},
    {HR_TRACE "\"$S\" alloc -q --trace t.trace --allocator best-fit -c 1GiB --memory ''", 2,
     "alloc: --memory: expected a memory name as the trace's allocs name it (such as hbm), got ''"},
    {HR_TRACE "\"$S\" alloc -q --trace t.trace --allocator best-fit -c 1GiB --memory hbm", 0, NULL},
)

#define OUTPUT(keys) EXP("", "workload.buffers = 1, 2\\n[output]\\n" keys "\\n")

/* Found by the hunt: an experiment's [output] figures naming a key twice
 * made the table two columns of one figure; plots = none beside other
 * plots drew them all; timeline = false with a plot drawn from the
 * timeline (memory, address-map, links; plots = all by default) made no
 * plot and said nothing: each at exit 0. */
STRATA_ROWS_TEST(experiment_output_keys,
    {OUTPUT("figures = makespan_s, status, makespan_s"), 2,
     "e.ini:8: figure 'makespan_s' appears twice in figures: the table would hold two columns of one figure; give "
     "each once"},
    {OUTPUT("plots = none, all"), 2, "e.ini:8: expected none alone (no plot) or plots without none, got 'none, all'"},
    {OUTPUT("plots = memory\\ntimeline = false"), 2,
     "e.ini:9: timeline = false: the plots memory, address-map and links draw from each point's timeline, and "
     "plots = memory names one; expected timeline = true, or plots without them (such as plots = axes)"},
    {OUTPUT("timeline = false"), 2, "plots = memory,address-map,links,axes names one"},
    /* what stays taken */
    {OUTPUT("plots = none"), 0, NULL},
    {OUTPUT("plots = axes\\ntimeline = false"), 0, NULL},
    {OUTPUT("figures = makespan_s, status"), 0, NULL},
)

/* Runs strata with argv in dir, its standard output a pipe whose reader
 * is closed before it starts (so every write to it fails with EPIPE, or
 * raises SIGPIPE), its standard error to the file err_path; the wait
 * status. */
static int run_on_closed_pipe(const char *dir, const char *err_path, const char *const *argv)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    close(fds[0]);
    GPtrArray *full = strata_test_binary_argv(argv);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int err_fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (err_fd < 0 || dup2(fds[1], STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0 || chdir(dir) != 0)
            _exit(99);
        execv(g_ptr_array_index(full, 0), (char **)full->pdata);
        _exit(98);
    }
    close(fds[1]);
    g_ptr_array_free(full, TRUE);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    return status;
}

/* Found by the hunt: a command whose standard output's reader had gone
 * (`strata run --json - --timeline t.json | head -c 10`) died of SIGPIPE
 * (exit 141) with its other outputs' temporaries and locks left beside
 * them (.out.json.XXXXXX, .out.json.lock). Now the write fails: exit 2,
 * "cannot write standard output: Broken pipe", nothing left; text for the
 * eye on a closed pipe is dropped and the files are still written. */
START_TEST(closed_stdout_leaves_nothing)
{
    char *dir = strata_test_temp_dir(), *hw = strata_test_source_path("configs/hw/h100.ini");
    char *trace = g_build_filename(dir, "t.trace", NULL);
    ck_assert(g_file_set_contents(trace, "strata-trace 1\nalloc a 1MiB\ncompute k time=1us in=a out=a\nfree a\n",
                                  -1, NULL));
    char *err_path = g_strdup_printf("%s.err", dir), *err_text = NULL;
    const char *json_out[] = {"run", "--trace", "t.trace", "--hw", hw, "--timeline", "out.json", "--json", "-", NULL};
    int status = run_on_closed_pipe(dir, err_path, json_out);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 2, "wait status %d", status);
    ck_assert(g_file_get_contents(err_path, &err_text, NULL, NULL));
    ck_assert_str_eq(err_text, "strata run: cannot write standard output: Broken pipe\n");
    g_free(err_text);
    strata_test_only(dir, "t.trace", NULL); /* no out.json, no temporary, no lock */
    const char *summary_out[] = {"run", "--trace", "t.trace", "--hw", hw, "--json", "out.json", NULL};
    status = run_on_closed_pipe(dir, err_path, summary_out);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "wait status %d", status);
    strata_test_only(dir, "t.trace", "out.json", NULL);
    unlink(err_path);
    g_free(err_path);
    g_free(trace);
    g_free(hw);
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

int main(void)
{
    const TTest *const tests[] = {
        policy_axes_apart,
        serve_times_within_a_trace_range,
        serve_kv_blocks_bounded,
        serve_prefill_decode_attention,
        kineto_durs_and_alloc_memory,
        experiment_output_keys,
        closed_stdout_leaves_nothing,
        NULL,
    };
    return strata_hardening_main("ninth", tests);
}
