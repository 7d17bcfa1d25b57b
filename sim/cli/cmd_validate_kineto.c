/*
 * cmd_validate_kineto.c: `strata validate --against TRACE.json[.gz] --hw HW.ini`,
 * a PyTorch profiler trace against the simulator (validate/kineto_validate.h):
 * per-direction memcpy errors and the reserved-curve error, as a table.
 */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "import/jax_profile.h"
#include "validate/jax_validate.h"
#include "validate/kineto_validate.h"
#include "runspec/runspec.h"

int strata_validate_against(strata_job *job, const char *trace, const char *hw_path)
{
    GError *err = NULL;
    int status = STRATA_EXIT_USAGE;
    strata_run_spec *spec = NULL; /* the model alone: the import makes the stream */
    strata_kineto_validation v = {0};
    if (hw_path == NULL) {
        g_set_error(&err, STRATA_ERROR, STRATA_ERROR_INPUT, "--against needs --hw HW.ini");
    } else if (strata_job_input_hw(job, "--hw", hw_path, &err) && strata_job_input(job, "--against", trace, &err)) {
        strata_job_doing(job, "validating %s", trace);
        strata_run_spec_options spec_opt = {.hw_path = hw_path};
        const char *given = trace;
        trace = strata_job_input_once(job, given, &err); /* sniffed, then read: a FIFO read once */
        if (trace && (spec = strata_run_spec_new(&spec_opt, &err)) && strata_jax_profile_sniff(trace)) {
            strata_jax_validation jv = {0};
            if (strata_jax_validate(trace, strata_run_spec_hw(spec), &jv, &err)) {
                fputs(jv.table, strata_job_human(job));
                status = jv.oom ? STRATA_EXIT_OOM : STRATA_EXIT_OK;
            }
            strata_jax_validation_clear(&jv);
        } else if (spec &&
                   strata_kineto_validate(trace, STRATA_KINETO_DEVICE_AUTO, strata_run_spec_hw(spec), &v, &err)) {
            fputs(v.table, strata_job_human(job));
            status = v.oom ? STRATA_EXIT_OOM : STRATA_EXIT_OK;
        }
    }
    strata_kineto_validation_clear(&v);
    strata_run_spec_free(spec);
    return strata_job_end(job, status, err);
}
