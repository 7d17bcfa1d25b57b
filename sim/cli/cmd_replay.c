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
#include "backend/backend.h"
#include "backend/cuda_backend.h"
#include "cli/cli.h"
#include "core/error.h"
#include "core/outfile.h"
#include "trace/reader.h"

static const char *CMD = "replay";

typedef struct replay_args {
    char *backend, *trace, *hw, *json, *timeline, *device_memory;
    int repeats, warmup;
    gboolean plan;
} replay_args;

static int replay_main(replay_args *a)
{
    GError *err = NULL;
    if (!a->trace) {
        fprintf(stderr, "strata %s: --trace is required\nRun 'strata %s --help' for usage.\n", CMD, CMD);
        return STRATA_EXIT_USAGE;
    }
    if (!a->backend) {
        char *names = strata_backend_names();
        fprintf(stderr, "strata %s: --backend is required (one of: %s)\n", CMD, names);
        g_free(names);
        return STRATA_EXIT_USAGE;
    }
    const strata_backend *backend = strata_backend_find(a->backend, &err);
    if (!backend)
        return strata_cli_fail(CMD, err);
    if (a->repeats < 1 || a->warmup < 0) {
        fprintf(stderr, "strata %s: --repeats must be at least 1 and --warmup at least 0\n", CMD);
        return STRATA_EXIT_USAGE;
    }
    if (a->plan && strcmp(backend->name, "cuda") != 0) {
        fprintf(stderr, "strata %s: --plan prints the CUDA calls of --backend cuda only\n", CMD);
        return STRATA_EXIT_USAGE;
    }
    strata_outfile *json = NULL;
    if (a->json && !(json = strata_outfile_open(a->json, &err)))
        return strata_cli_fail(CMD, err);
    if (a->timeline) { /* checked now, written at the end */
        strata_outfile *t = strata_outfile_open(a->timeline, &err);
        if (!t) {
            strata_outfile_abort(json);
            return strata_cli_fail(CMD, err);
        }
        strata_outfile_abort(t);
    }
    strata_hw *hw = NULL;
    strata_source *src = NULL;
    strata_results *r = NULL;
    int status = STRATA_EXIT_OK;
    if (a->hw && !(hw = strata_hw_load(a->hw, NULL, &err)))
        goto fail;
    if (!(src = strata_trace_open(a->trace, &err)))
        goto fail;
    if (a->plan) {
        if (!strata_cuda_print_plan(hw, src, a->device_memory, stdout, &err))
            goto fail;
        goto done;
    }
    strata_backend_options opt;
    strata_backend_options_init(&opt);
    opt.repeats = a->repeats;
    opt.warmup = a->warmup;
    opt.device_memory = a->device_memory;
    if (!backend->run(hw, src, &opt, &r, &err))
        goto fail;
    if (json) {
        char *text = strata_results_to_json_text(r);
        fputs(text, strata_outfile_stream(json));
        g_free(text);
        bool ok = strata_outfile_commit(json, &err);
        json = NULL;
        if (!ok)
            goto fail;
    }
    if (a->timeline && !strata_results_write_timeline(r, a->timeline, &err))
        goto fail;
    if (!a->json || strcmp(a->json, "-") != 0) {
        strata_results_print_summary(r, stdout);
        printf("replayed %" G_GUINT64_FORMAT " ops on the %s backend: makespan %.6f s (median of %d runs after %d "
               "warm-up)\n", r->ops, backend->name, r->makespan_s, a->repeats, a->warmup);
    }
    if (r->oom) {
        fprintf(stderr, "strata %s: out of memory in %s at trace line %" G_GUINT64_FORMAT
                        " (%" G_GUINT64_FORMAT " bytes requested)\n",
                CMD, r->oom_info.memory, r->oom_info.line, r->oom_info.requested_bytes);
        status = STRATA_EXIT_OOM;
    }
    goto done;
fail:
    status = strata_cli_fail(CMD, err);
done:
    strata_outfile_abort(json);
    strata_results_free(r);
    strata_source_free(src);
    strata_hw_free(hw);
    return status;
}

int strata_cmd_replay(int argc, char **argv)
{
    replay_args a = {0};
    a.repeats = 5;
    a.warmup = 1;
    a.device_memory = NULL;
    char *names = strata_backend_names();
    char *backend_help = g_strdup_printf("Real backend to run on: %s", names);
    GOptionEntry entries[] = {
        {"backend", 'b', 0, G_OPTION_ARG_STRING, &a.backend, backend_help, "NAME"},
        {"trace", 't', 0, G_OPTION_ARG_FILENAME, &a.trace, "Trace to execute ('-' reads standard input)", "T.trace"},
        {"hw", 0, 0, G_OPTION_ARG_FILENAME, &a.hw,
         "Hardware model: which memories are device, pinned or pageable host memory, their allocators, and the "
         "links whose bytes and busy time are reported (default: hbm device, host pinned, pageable pageable)",
         "HW.ini"},
        {"json", 'j', 0, G_OPTION_ARG_FILENAME, &a.json, "Write the results JSON (with a span per op) here; '-' is "
                                                        "standard output", "OUT"},
        {"timeline", 0, 0, G_OPTION_ARG_FILENAME, &a.timeline, "Write a Perfetto/Chrome timeline of the measured run",
         "OUT.json"},
        {"repeats", 'r', 0, G_OPTION_ARG_INT, &a.repeats, "Timed runs; the run with the median makespan is reported "
                                                          "(default 5)", "N"},
        {"warmup", 'w', 0, G_OPTION_ARG_INT, &a.warmup, "Untimed runs before the timed ones (default 1)", "N"},
        {"device-memory", 'm', 0, G_OPTION_ARG_STRING, &a.device_memory,
         "cuda: device memory as 'arena' (one cudaMalloc per memory, buffers placed by strata's allocator: "
         "needs only the trace's peak; default), 'malloc' (one cudaMalloc per buffer, all made before timing: "
         "needs the sum of all buffers) or 'async' (cudaMallocAsync/cudaFreeAsync at the ops, timed)",
         "MODE"},
        {"plan", 0, 0, G_OPTION_ARG_NONE, &a.plan, "cuda: print the CUDA calls that would replay the trace and exit "
                                                   "(needs no GPU)", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("- execute a trace for real on the host or a CUDA GPU");
    g_option_context_set_summary(
        ctx, "Runs every op of the trace for real and reports the measured timeline (start and end of every op,\n"
             "per stream) in the simulator's results format (producer \"host\" or \"cuda\").\n"
             "host: memories are host allocations touched before timing, each stream a thread, copies memcpy,\n"
             "record/wait real synchronization, compute time= a busy wait and flops= a CPU kernel.\n"
             "cuda: cudaStreams, cudaEvents, cudaMemcpyAsync, a kernel doing each compute's flops; exits 2 with\n"
             "\"no CUDA device\" where there is none.");
    g_option_context_set_description(ctx, "Exit status: 0 done; 1 the trace ran out of memory (results still "
                                          "written); 2 bad input, usage or no device.");
    g_option_context_add_main_entries(ctx, entries, NULL);
    int status = STRATA_EXIT_OK;
    if (strata_cli_parse(ctx, &argc, &argv, CMD, &status)) {
        if (!strata_cli_expect_no_args(CMD, argc, argv)) {
            status = STRATA_EXIT_USAGE;
        } else {
            status = replay_main(&a);
        }
    }
    g_option_context_free(ctx);
    g_free(backend_help);
    g_free(names);
    g_free(a.backend);
    g_free(a.trace);
    g_free(a.hw);
    g_free(a.json);
    g_free(a.timeline);
    g_free(a.device_memory);
    return status;
}
