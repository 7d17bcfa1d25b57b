/*
 * cmd_replay.c: `strata replay --backend host|cuda --trace T [--hw HW.ini] [--json OUT]`,
 * a real execution of a trace (sim/backend), reported in the simulator's
 * results format with a span per op.
 *
 * Order of work: options, output paths (an unwritable one is an error
 * before anything runs), hardware model, trace, then the backend.
 */
#include <stdio.h>
#include <string.h>
#include "backend/cuda_backend.h"
#include "cli/backend_args.h"
#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "runspec/runspec.h"

typedef struct replay_args {
    strata_backend_args b;
    char *timeline;
    gboolean plan;
} replay_args;

/* The work after the options: plan or real run, then the outputs. */
static int replay_main(strata_job *job, replay_args *a)
{
    GError *err = NULL;
    strata_run_spec *spec = NULL;
    strata_results *r = NULL;
    strata_outfile *json = NULL, *timeline = NULL;
    int status = STRATA_EXIT_USAGE;
    const strata_backend *backend = strata_backend_args_check(&a->b, false, &err);
    if (!backend)
        goto done;
    if (a->plan && strcmp(backend->name, "cuda") != 0) {
        err = g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT, "--plan prints the CUDA calls of --backend cuda only");
        goto done;
    }
    if (!strata_job_input_hw(job, "--hw", a->b.hw, &err) || !strata_job_input(job, "--trace", a->b.trace, &err))
        goto done;
    if (!strata_job_output(job, "--json", a->b.json, &json, &err) ||
        !strata_job_output_timeline(job, a->timeline, false, &timeline, &err))
        goto done;
    strata_run_spec_options spec_opt = {.hw_path = a->b.hw, .trace_path = a->b.trace};
    if (!(spec = strata_run_spec_new(&spec_opt, &err)))
        goto done;
    const strata_hw *hw = strata_run_spec_hw(spec); /* NULL without --hw: the backend's default memories */
    strata_source *src = strata_run_spec_source(spec);
    if (a->plan) {
        if (strata_cuda_print_plan(hw, src, a->b.device_memory, stdout, &err))
            status = STRATA_EXIT_OK;
        goto done;
    }
    strata_backend_options opt;
    strata_backend_args_options(&a->b, &opt);
    strata_job_doing(job, "replaying %s on the %s backend", a->b.trace, backend->name);
    if (!backend->run(hw, src, &opt, &r, &err) || !strata_job_commit_results(job, &json, r, &err) ||
        !strata_job_commit_timeline(job, &timeline, r, &err))
        goto done;
    FILE *human = strata_job_human(job);
    strata_results_print_summary(r, human);
    fprintf(human, "replayed %" G_GUINT64_FORMAT " ops on the %s backend: makespan %.6f s (median of %d runs "
            "after %d warm-up)\n", r->ops, backend->name, r->makespan_s, a->b.repeats, a->b.warmup);
    status = STRATA_EXIT_OK;
    if (r->oom) {
        fprintf(stderr, "strata %s: out of memory in %s at trace line %" G_GUINT64_FORMAT
                        " (%" G_GUINT64_FORMAT " bytes requested)\n",
                strata_job_cmd(job), r->oom_info.memory, r->oom_info.line, r->oom_info.requested_bytes);
        status = STRATA_EXIT_OOM;
    }
done:
    strata_results_free(r);
    strata_run_spec_free(spec);
    return strata_job_end(job, status, err);
}

int strata_cmd_replay(int argc, char **argv)
{
    replay_args a = {0};
    strata_backend_args_init(&a.b);
    char *backend_help = strata_backend_args_help("Real backend to run on");
    GOptionEntry entries[] = {
        {"backend", 'b', 0, G_OPTION_ARG_STRING, &a.b.backend, backend_help, "NAME"},
        {"trace", 't', 0, G_OPTION_ARG_FILENAME, &a.b.trace, "Trace to execute ('-' reads standard input)", "T.trace"},
        {"hw", 0, 0, G_OPTION_ARG_FILENAME, &a.b.hw,
         "Hardware model: which memories are device, pinned or pageable host memory, their allocators, and the "
         "links whose bytes and busy time are reported (default: hbm device, host pinned, pageable pageable)",
         "HW.ini"},
        {"json", 'j', 0, G_OPTION_ARG_FILENAME, &a.b.json, "Write the results JSON (with a span per op) here; '-' is "
                                                        "standard output", "OUT"},
        {"timeline", 0, 0, G_OPTION_ARG_FILENAME, &a.timeline, "Write a Perfetto/Chrome timeline of the measured run",
         "OUT.json"},
        {"repeats", 'r', 0, G_OPTION_ARG_INT, &a.b.repeats, "Timed runs; the run with the median makespan is reported "
                                                          "(default 5)", "N"},
        {"warmup", 'w', 0, G_OPTION_ARG_INT, &a.b.warmup, "Untimed runs before the timed ones (default 1)", "N"},
        {"device-memory", 'm', 0, G_OPTION_ARG_STRING, &a.b.device_memory,
         "cuda: device memory as 'arena' (one cudaMalloc per memory, buffers placed by strata's allocator: "
         "needs only the trace's peak; default), 'malloc' (one cudaMalloc per buffer, all made before timing: "
         "needs the sum of all buffers) or 'async' (cudaMallocAsync/cudaFreeAsync at the ops, timed)",
         "MODE"},
        {"check-allocators", 0, 0, G_OPTION_ARG_NONE, &a.b.check_allocators,
         "Check every allocator's invariants after each op of the placement (slow; for debugging allocators)", NULL},
        {"plan", 0, 0, G_OPTION_ARG_NONE, &a.plan, "cuda: print the CUDA calls that would replay the trace and exit "
                                                   "(needs no GPU)", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    strata_job *job = strata_job_new("replay", "- execute a trace for real on the host or a CUDA GPU", "Runs every op of the trace for real and reports the measured timeline (start and end of every op,\n"
             "per stream) in the simulator's results format (producer \"host\" or \"cuda\").\n"
             "host: memories are host allocations touched before timing, each stream a thread, copies memcpy,\n"
             "record/wait real synchronization, compute time= a busy wait and flops= a CPU kernel.\n"
             "cuda: cudaStreams, cudaEvents, cudaMemcpyAsync, a kernel doing each compute's flops (FP32 FMAs), a\n"
             "compute with kernel=gemm in bf16, f16, f32 or tf32 a cuBLAS GEMM of its dims (cuBLAS loaded when\n"
             "needed); exits 2 with \"no CUDA device\" where there is none.", "Exit status: 0 done; 1 the trace ran out of memory (results still "
                                          "written); 2 bad input, usage or no device.", entries);
    int status = strata_job_parse(job, &argc, &argv, 0, 0, NULL) ? replay_main(job, &a)
                                                                  : strata_job_end(job, STRATA_EXIT_USAGE, NULL);
    g_free(backend_help);
    strata_backend_args_clear(&a.b);
    g_free(a.timeline);
    return status;
}
