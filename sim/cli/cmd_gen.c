/*
 * cmd_gen.c: `strata gen WORKLOAD [key=value]... [-o OUT.trace]`, writes the
 * trace of a generated workload (models/workload/) as strata-trace 1 text.
 *
 * Order of work: parse options; check that OUT can be written (before any
 * work); validate the parameters against the workload's declared table (an
 * unknown workload or key lists the known ones); generate; write atomically
 * (outfile.h). The trace's header comment records every parameter value, so
 * the file says how to make it again.
 */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "workload/workload.h"

static char *gen_description(void)
{
    GString *s = g_string_new(
        "Writes the trace of a generated workload: a tagged trace (tag=param, input,\n"
        "output, activation, optstate, grad, temp) whose computes carry flops and\n"
        "operands and whose allocations carry dtype and shape. Each workload's file in\n"
        "models/workload/ documents its schedule; docs/workloads-policies.md explains them.\n"
        "\n"
        "Options:\n"
        "  -o, --output OUT     write the trace to OUT ('-' = standard output, the\n"
        "                       default); the file is written whole or not at all\n"
        "  --list               list the workloads and their parameters, then exit\n"
        "\n"
        "Workloads and parameters (key=value; defaults in brackets):\n");
    for (const strata_workload_type *const *t = strata_workload_types(); *t; t++) {
        g_string_append_printf(s, "\n  %s: %s\n", (*t)->name, (*t)->summary);
        char *params = strata_params_describe((*t)->params, "    ");
        g_string_append(s, params);
        g_free(params);
    }
    g_string_append(s, "\nExit status: 0 done; 2 bad input or usage.");
    return g_string_free(s, FALSE);
}

static void list_workloads(FILE *out)
{
    for (const strata_workload_type *const *t = strata_workload_types(); *t; t++) {
        fprintf(out, "%s: %s\n", (*t)->name, (*t)->summary);
        char *params = strata_params_describe((*t)->params, "  ");
        fputs(params, out);
        g_free(params);
    }
}

/* The workload's parameters from key=value arguments, checked against its table. */
static strata_params *gen_params(const strata_workload_type *type, int argc, char **argv, GError **err)
{
    return strata_workload_params_args(type, argc - 2, (const char *const *)argv + 2, err);
}

/* The workload named by argv[1], or NULL with an error listing the known ones. */
static const strata_workload_type *gen_workload(int argc, char **argv, GError **err)
{
    const strata_workload_type *type = argc < 2 ? NULL : strata_workload_type_find(argv[1]);
    if (!type) {
        char *known = strata_workload_type_names();
        if (argc < 2)
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "expected a workload name (one of: %s); see 'strata gen --help'", known);
        else
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "unknown workload '%s'; known workloads: %s",
                        argv[1], known);
        g_free(known);
    }
    return type;
}

/* Generates the workload into the output; the header comment records every parameter value. */
static bool gen_write(strata_job *job, const strata_workload_type *type, strata_params *params,
                      strata_outfile **out, GError **err)
{
    strata_job_doing(job, "generating %s", type->name);
    strata_source *src = type->generate(params, err);
    if (!src)
        return false;
    /* "k=v,k=v" as arguments: a comma before a piece without '=' is part of
     * a list value (mesh=data:4,model:2) and stays. */
    char *values = strata_params_to_string(params);
    for (char *c = strchr(values, ','); c; c = strchr(c + 1, ','))
        if (strcspn(c + 1, "=") < strcspn(c + 1, ","))
            *c = ' ';
    char *comment = g_strdup_printf("strata gen %s %s", type->name, values);
    g_free(values);
    bool ok = strata_job_commit_trace(job, out, src, comment, err) >= 0;
    g_free(comment);
    strata_source_free(src);
    return ok;
}

int strata_cmd_gen(int argc, char **argv)
{
    char *output = NULL;
    gboolean list = FALSE;
    GOptionEntry entries[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the trace to OUT ('-' = stdout, default)", "OUT"},
        {"list", 0, 0, G_OPTION_ARG_NONE, &list, "List workloads and their parameters", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    char *description = gen_description();
    strata_job *job =
        strata_job_new("gen", "WORKLOAD [key=value]... - generate a workload trace", NULL, description, entries);
    g_free(description);
    GError *err = NULL;
    strata_params *params = NULL;
    strata_outfile *out = NULL;
    const strata_workload_type *type = NULL;
    bool ok = strata_job_parse(job, &argc, &argv, 0, -1, NULL);
    if (ok && list)
        list_workloads(stdout);
    else if (ok)
        ok = (type = gen_workload(argc, argv, &err)) &&
             strata_job_output(job, "--output", output ? output : "-", &out, &err) &&
             (params = gen_params(type, argc, argv, &err)) && gen_write(job, type, params, &out, &err);
    int status = strata_job_end(job, ok ? STRATA_EXIT_OK : STRATA_EXIT_USAGE, err);
    strata_params_free(params);
    g_free(output);
    return status;
}
