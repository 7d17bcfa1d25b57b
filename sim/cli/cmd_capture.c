/*
 * cmd_capture.c: `strata capture [-o OUT] -- PROGRAM ARGS...`, which runs a
 * CUDA program with the LD_PRELOAD library libstrata_capture.so
 * (sim/capture/) and checks the trace it recorded.
 *
 * The library is looked for in --lib, $STRATA_CAPTURE_LIB, beside the strata
 * binary, then in ../lib beside it (an install). The program's own output
 * goes to the terminal; the trace goes to OUT (through a temporary file
 * when OUT is '-').
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend/cuda_backend.h"
#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "trace/checked.h"
#include "trace/reader.h"

static const char *CMD = "capture";
#define CAPTURE_LIB "libstrata_capture.so"

static char *find_library(const char *given)
{
    if (given)
        return g_file_test(given, G_FILE_TEST_IS_REGULAR) ? g_canonicalize_filename(given, NULL) : NULL;
    const char *env = g_getenv("STRATA_CAPTURE_LIB");
    if (env && *env)
        return g_file_test(env, G_FILE_TEST_IS_REGULAR) ? g_canonicalize_filename(env, NULL) : NULL;
    char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (!exe)
        return NULL;
    char *dir = g_path_get_dirname(exe);
    char *candidates[2] = {g_build_filename(dir, CAPTURE_LIB, NULL), g_build_filename(dir, "..", "lib", CAPTURE_LIB, NULL)};
    char *found = NULL;
    for (int i = 0; i < 2; i++) {
        if (!found && g_file_test(candidates[i], G_FILE_TEST_IS_REGULAR))
            found = g_canonicalize_filename(candidates[i], NULL);
        g_free(candidates[i]);
    }
    g_free(dir);
    g_free(exe);
    return found;
}

/* Reads the captured trace through the checker; returns its op count or -1. */
static int64_t check_trace(const char *path, GError **err)
{
    strata_source *src = strata_trace_open(path, err);
    if (!src)
        return -1;
    src = strata_checked_source_new(src, NULL);
    int64_t n = 0;
    const strata_op *op = NULL;
    int r;
    while ((r = strata_source_next(src, &op, err)) == 1)
        n++;
    strata_source_free(src);
    return r == 0 ? n : -1;
}

static int capture_run(strata_job *job, const char *out_path, const char *lib_opt, char **program)
{
    GError *err = NULL;
    char *lib = find_library(lib_opt);
    if (!lib) {
        if (lib_opt || g_getenv("STRATA_CAPTURE_LIB"))
            fprintf(stderr, "strata %s: no capture library at '%s'\n", CMD,
                    lib_opt ? lib_opt : g_getenv("STRATA_CAPTURE_LIB"));
        else if (!strata_cuda_built())
            fprintf(stderr, "strata %s: strata was built without the CUDA toolkit, so %s was not built "
                            "(rebuild with nvcc available and -DSTRATA_CUDA=ON)\n", CMD, CAPTURE_LIB);
        else
            fprintf(stderr, "strata %s: cannot find %s beside the strata binary or in ../lib; "
                            "set STRATA_CAPTURE_LIB or use --lib\n", CMD, CAPTURE_LIB);
        return STRATA_EXIT_USAGE;
    }
    bool to_stdout = strcmp(out_path, "-") == 0;
    char *trace_path = NULL;
    if (to_stdout) {
        int fd = g_file_open_tmp("strata-capture-XXXXXX.trace", &trace_path, &err);
        if (fd < 0) {
            g_free(lib);
            return strata_cli_fail(CMD, err);
        }
        close(fd);
    } else {
        strata_outfile *check = NULL; /* writable? before running anything */
        if (!strata_job_output(job, "--output", out_path, &check, &err)) {
            g_free(lib);
            return strata_cli_fail(CMD, err);
        }
        strata_outfile_abort(check);
        trace_path = g_canonicalize_filename(out_path, NULL);
    }

    char **envp = g_get_environ();
    const char *old = g_environ_getenv(envp, "LD_PRELOAD");
    char *preload = old && *old ? g_strdup_printf("%s:%s", lib, old) : g_strdup(lib);
    char *joined = g_strjoinv(" ", program);
    envp = g_environ_setenv(envp, "LD_PRELOAD", preload, TRUE);
    envp = g_environ_setenv(envp, "STRATA_CAPTURE_OUT", trace_path, TRUE);
    envp = g_environ_setenv(envp, "STRATA_CAPTURE_PROGRAM", joined, TRUE);
    int wait_status = 0, status = STRATA_EXIT_OK;
    if (to_stdout)
        unlink(trace_path); /* the library creates it again */
    strata_job_doing(job, "running %s", program[0]);
    strata_child_signals keep;
    strata_child_signals_read(&keep);
    if (!g_spawn_sync(NULL, program, envp, G_SPAWN_SEARCH_PATH | G_SPAWN_CHILD_INHERITS_STDIN,
                      strata_interrupt_child_setup, &keep, NULL, NULL, &wait_status, &err)) {
        status = strata_cli_fail(CMD, err);
        goto out;
    }
    if (!g_file_test(trace_path, G_FILE_TEST_EXISTS)) {
        fprintf(stderr, "strata %s: %s wrote no trace; a program must link the CUDA runtime dynamically "
                        "(nvcc -cudart shared) for %s to see its calls\n", CMD, program[0], CAPTURE_LIB);
        status = STRATA_EXIT_USAGE;
        goto out;
    }
    int64_t n = check_trace(trace_path, &err);
    if (n < 0) {
        g_prefix_error(&err, "the captured trace does not check: ");
        status = strata_cli_fail(CMD, err);
        goto out;
    }
    if (to_stdout) {
        char *text = NULL;
        gsize len = 0;
        if (g_file_get_contents(trace_path, &text, &len, &err)) {
            fwrite(text, 1, len, stdout);
            g_free(text);
        } else {
            status = strata_cli_fail(CMD, err);
            goto out;
        }
    }
    fprintf(stderr, "strata %s: %" G_GINT64_FORMAT " ops captured from %s into %s\n", CMD, n, program[0],
            to_stdout ? "standard output" : out_path);
    if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0) {
        fprintf(stderr, "strata %s: %s %s %d (the trace holds what it did until then)\n", CMD, program[0],
                WIFEXITED(wait_status) ? "exited with status" : "was killed by signal",
                WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : WTERMSIG(wait_status));
        status = STRATA_EXIT_USAGE;
    }
out:
    if (to_stdout)
        unlink(trace_path);
    g_strfreev(envp);
    g_free(preload);
    g_free(joined);
    g_free(trace_path);
    g_free(lib);
    return status;
}

int strata_cmd_capture(int argc, char **argv)
{
    char *out_path = NULL, *lib = NULL;
    GOptionEntry entries[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out_path, "Write the captured trace here (default "
                                                             "strata-capture.trace; '-' is standard output)", "OUT"},
        {"lib", 0, 0, G_OPTION_ARG_FILENAME, &lib, "The capture library (default: $STRATA_CAPTURE_LIB, or "
                                                   CAPTURE_LIB " beside the strata binary or in ../lib)", "PATH"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    strata_job *job = strata_job_new(
        CMD, "[-o OUT] -- PROGRAM [ARGS...]",
        "Runs PROGRAM with LD_PRELOAD=" CAPTURE_LIB " and records its CUDA runtime calls as a strata trace:\n"
        "cudaMalloc, cudaFree, cudaMallocAsync, cudaFreeAsync, cudaMallocHost, cudaHostAlloc, cudaFreeHost\n"
        "(alloc/free), cudaMemcpy, cudaMemcpyAsync, cudaMemcpy2D[Async], cudaMemcpyPeer[Async] (copy),\n"
        "cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventRecord, cudaStreamWaitEvent (record/wait)\n"
        "and kernel launches (compute). PROGRAM must link the CUDA runtime dynamically (nvcc -cudart\n"
        "shared). Replay the trace with 'strata replay' or simulate it with 'strata run'.",
        "Exit status: 0 done; 2 bad usage, no capture library, or PROGRAM failed (the trace is still written).",
        entries);
    g_option_context_set_strict_posix(strata_job_context(job), TRUE);
    int status = STRATA_EXIT_USAGE;
    if (strata_job_parse(job, &argc, &argv, 0, -1, NULL)) {
        int first = 1;
        if (first < argc && strcmp(argv[first], "--") == 0)
            first++;
        if (first >= argc) {
            fprintf(stderr, "strata %s: no program to run\nRun 'strata %s --help' for usage.\n", CMD, CMD);
            status = STRATA_EXIT_USAGE;
        } else {
            char **program = g_new0(char *, argc - first + 1);
            for (int i = first; i < argc; i++)
                program[i - first] = argv[i];
            status = capture_run(job, out_path ? out_path : "strata-capture.trace", lib, program);
            g_free(program);
        }
    }
    status = strata_job_end(job, status, NULL);
    g_free(out_path);
    g_free(lib);
    return status;
}
