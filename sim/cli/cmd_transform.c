/*
 * cmd_transform.c: `strata transform --trace T --policy P... [--hw HW] [-o OUT]`,
 * applies policies (models/policy/) to a trace and writes the rewritten op
 * stream as a trace, which `strata run`, `strata alloc` and the real
 * backends (`strata replay`) take like any other.
 *
 * Order of work: parse options; check that OUT can be written (before any
 * work); load the hardware model when given (policies that need the machine,
 * such as transfer-guard, use it; without it they assume the shared
 * memory names); open the trace; apply the policies left to right; write
 * atomically. The output is checked by trace/check.h as it is written, so a
 * policy can never hand out a trace that does not read back.
 */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "hw/hw.h"
#include "policy/policy.h"
#include "runspec/runspec.h"

static char *transform_description(void)
{
    GString *s = g_string_new(
        "Rewrites TRACE with the given policies, in order, and writes the result as a\n"
        "strata-trace 1 file. Policies compose: --policy offload=param --policy prefetch=2\n"
        "offloads the weights, then issues every copy two computes ahead.\n"
        "\n"
        "Options:\n"
        "  --trace T.trace      trace to rewrite ('-' reads standard input); required\n"
        "  --policy P           policy NAME or NAME=ARG; repeatable, at least one\n"
        "  --hw HW.ini          hardware model, for policies that need the machine\n"
        "                       (transfer-guard: which memory each unit reads)\n"
        "  -o, --output OUT     write the rewritten trace to OUT ('-' = standard output,\n"
        "                       the default); the file is written whole or not at all\n"
        "\n"
        "Policies:\n");
    char *policies = strata_policy_describe("  ");
    g_string_append(s, policies);
    g_free(policies);
    g_string_append(s, "\nSee docs/workloads-policies.md.\n"
                       "Exit status: 0 done; 2 bad input or usage (FILE:LINE: what was expected).");
    return g_string_free(s, FALSE);
}

int strata_cmd_transform(int argc, char **argv)
{
    char *trace = NULL, *hw_path = NULL, *output = NULL;
    char **policies = NULL;
    GOptionEntry entries[] = {
        {"trace", 0, 0, G_OPTION_ARG_FILENAME, &trace, "Trace to rewrite ('-' = stdin); required", "T.trace"},
        {"policy", 0, 0, G_OPTION_ARG_STRING_ARRAY, &policies, "Policy to apply (repeatable, in order)", "P"},
        {"hw", 0, 0, G_OPTION_ARG_FILENAME, &hw_path, "Hardware model (.ini) for policies that need it", "HW.ini"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the trace to OUT ('-' = stdout, default)", "OUT"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    char *description = transform_description();
    strata_job *job = strata_job_new("transform", "- apply policies to a trace and write the rewritten trace", NULL, description, entries);
    int status = STRATA_EXIT_USAGE;
    GError *err = NULL;
    strata_run_spec *spec = NULL;
    strata_outfile *out = NULL;
    char *comment = NULL;

    if (!strata_job_parse(job, &argc, &argv, 0, 0, NULL))
        goto done;
    if (!trace || !policies || !policies[0]) {
        char *known = strata_policy_type_names();
        err = g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT,
                          "expected --trace T.trace and at least one --policy P (known policies: %s)", known);
        g_free(known);
        goto done;
    }
    if (!strata_job_input_hw(job, "--hw", hw_path, &err) || !strata_job_input(job, "--trace", trace, &err))
        goto done;
    strata_run_spec_options spec_opt = {.hw_path = hw_path, .trace_path = trace,
                                        .policies = (const char *const *)policies, .checked = true};
    if (!strata_job_output(job, "--output", output ? output : "-", &out, &err) ||
        !(spec = strata_run_spec_new(&spec_opt, &err)))
        goto done;
    char *joined = g_strjoinv(" --policy ", policies);
    comment = g_strdup_printf("strata transform --trace %s --policy %s", trace, joined);
    g_free(joined);
    strata_job_doing(job, "rewriting %s", trace);
    if (strata_job_commit_trace(job, &out, strata_run_spec_source(spec), comment, &err) >= 0)
        status = STRATA_EXIT_OK;
done:
    status = strata_job_end(job, status, err);
    g_free(comment);
    strata_run_spec_free(spec);
    g_free(trace);
    g_free(hw_path);
    g_free(output);
    g_strfreev(policies);
    g_free(description);
    return status;
}
