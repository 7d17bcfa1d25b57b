/*
 * cmd_calibrate.c: `strata calibrate --backend host|cuda [-o HW.ini]`, which
 * measures this machine with a real backend and writes a hardware .ini that
 * `strata run` accepts (each measurement in a comment).
 *
 * Invariant: the file written has been loaded back with hw.h's loader
 * first; an .ini the simulator would reject is never written.
 */
#include <stdio.h>
#include <string.h>
#include "backend/backend.h"
#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "core/units.h"
#include "hw/hw.h"
#include "runspec/runspec.h"

static const char *CMD = "calibrate";

/* --name as the [hardware] name of a key file: UTF-8 text, not blank, one
 * line, no control characters. */
static bool name_ok(const char *name)
{
    bool blank = true;
    for (const char *p = name; *p; p++) {
        if (g_ascii_iscntrl(*p))
            return false;
        blank &= g_ascii_isspace(*p) != 0;
    }
    return !blank && g_utf8_validate(name, -1, NULL);
}

int strata_cmd_calibrate(int argc, char **argv)
{
    char *backend_name = NULL, *out_path = NULL, *max_size = NULL, *name = NULL;
    gboolean full = FALSE, quiet = FALSE;
    char *names = strata_backend_names();
    char *backend_help = g_strdup_printf("Backend to measure: %s", names);
    GOptionEntry entries[] = {
        {"backend", 'b', 0, G_OPTION_ARG_STRING, &backend_name, backend_help, "NAME"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out_path, "Write the hardware .ini here (default '-': standard "
                                                             "output)", "HW.ini"},
        {"max-size", 0, 0, G_OPTION_ARG_STRING, &max_size,
         "Largest copy measured (sizes go 4KiB, 16KiB, ... up to it; default 256MiB for host, 1GiB for cuda)",
         "SIZE"},
        {"full", 0, 0, G_OPTION_ARG_NONE, &full, "Measure copies up to 1GiB on the host too (longer; needs 4 GiB of "
                                                 "memory)", NULL},
        {"name", 0, 0, G_OPTION_ARG_STRING, &name, "[hardware] name of the model (default host-calibrated or "
                                                   "cuda-calibrated)", "NAME"},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "Do not print progress on standard error", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    strata_job *job = strata_job_new(CMD, "- measure this machine and write a hardware .ini", "Measures copy bandwidth for sizes from 4 KiB up (pinned and pageable; H2D, D2H, D2D; one copy at a\n"
             "time and two at once), latencies and the compute rate with the chosen backend's own copy and\n"
             "compute kernels, and writes a hardware model (memory, link and compute groups) with every\n"
             "measurement in a comment. The host model names its DRAM regions hbm, host and pageable so that\n"
             "GPU traces replay on the host. The default host run takes well under a minute.", "Exit status: 0 done; 2 bad usage, unwritable output or no device.", entries);
    int status = STRATA_EXIT_USAGE;
    GError *err = NULL;
    strata_outfile *out = NULL;
    GString *ini = g_string_new(NULL);
    const strata_backend *backend = NULL;
    if (!strata_job_parse(job, &argc, &argv, 0, 0, NULL))
        goto done;
    if (!backend_name) {
        err = g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT, "--backend is required (one of: %s)", names);
        goto done;
    }
    if (!(backend = strata_backend_find(backend_name, &err)))
        goto done;
    if (name && !name_ok(name)) { /* '' wrote "name = " (a model without a name); a newline exited 3 */
        char *q = g_strescape(name, NULL);
        err = g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT, "--name: expected text on one line for [hardware] "
                          "name (no control characters), got '%s'", q);
        g_free(q);
        goto done;
    }
    strata_calibrate_options opt;
    strata_calibrate_options_init(&opt);
    opt.name = name;
    if (strcmp(backend->name, "cuda") == 0 || full)
        opt.max_size = UINT64_C(1) << 30;
    if (max_size && !strata_parse_size(max_size, &opt.max_size, &err)) {
        g_prefix_error(&err, "--max-size: ");
        goto done;
    }
    if (max_size && opt.max_size < 4096) {
        err = g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT, "--max-size must be at least 4KiB");
        goto done;
    }
    if (!strata_job_output(job, "--output", out_path ? out_path : "-", &out, &err))
        goto done;
    strata_job_doing(job, "measuring the %s backend", backend->name);
    if (!backend->calibrate(&opt, ini, quiet ? NULL : stderr, &err))
        goto done;
    strata_run_spec_options spec_opt = {.hw_text = ini->str, .hw_origin = "calibrate output"};
    strata_run_spec *check = strata_run_spec_new(&spec_opt, &err);
    if (!check) {
        g_prefix_error(&err, "internal error, the measured model does not load: ");
        err->code = STRATA_ERROR_INTERNAL;
        goto done;
    }
    strata_run_spec_free(check);
    if (!strata_job_commit_text(job, &out, ini->str, &err))
        goto done;
    if (!quiet && out_path && strcmp(out_path, "-") != 0)
        fprintf(stderr, "calibrate: wrote %s\n", out_path);
    status = STRATA_EXIT_OK;
done:
    status = strata_job_end(job, status, err);
    g_string_free(ini, TRUE);
    g_free(backend_help);
    g_free(names);
    g_free(backend_name);
    g_free(out_path);
    g_free(max_size);
    g_free(name);
    return status;
}
