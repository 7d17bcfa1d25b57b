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
#include "core/error.h"
#include "core/outfile.h"
#include "trace/writer.h"
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

int strata_cmd_gen(int argc, char **argv)
{
    char *output = NULL;
    gboolean list = FALSE;
    GOptionEntry entries[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &output, "Write the trace to OUT ('-' = stdout, default)", "OUT"},
        {"list", 0, 0, G_OPTION_ARG_NONE, &list, "List workloads and their parameters", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *octx = g_option_context_new("WORKLOAD [key=value]... - generate a workload trace");
    char *description = gen_description();
    g_option_context_set_description(octx, description);
    g_option_context_add_main_entries(octx, entries, NULL);
    int status = STRATA_EXIT_OK;
    GError *err = NULL;
    strata_params *params = NULL;
    strata_source *src = NULL;
    GString *kv = NULL;
    char *comment = NULL;

    if (!strata_cli_parse(octx, &argc, &argv, "gen", &status))
        goto done;
    if (list) {
        list_workloads(stdout);
        goto done;
    }
    if (argc < 2) {
        char *known = strata_workload_type_names();
        err = g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT,
                          "expected a workload name (one of: %s); see 'strata gen --help'", known);
        g_free(known);
        goto fail;
    }
    const char *path = output ? output : "-";
    strata_outfile *probe = strata_outfile_open(path, &err);
    if (!probe)
        goto fail;
    strata_outfile_abort(probe);

    const strata_workload_type *type = strata_workload_type_find(argv[1]);
    if (!type) {
        char *known = strata_workload_type_names();
        err = g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT, "unknown workload '%s'; known workloads: %s",
                          argv[1], known);
        g_free(known);
        goto fail;
    }
    kv = g_string_new(NULL);
    for (int i = 2; i < argc; i++) {
        if (!strchr(argv[i], '=') || argv[i][0] == '=' || strchr(argv[i], ',')) {
            err = g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT,
                              "%s: expected a parameter as key=value, got '%s'", type->name, argv[i]);
            goto fail;
        }
        g_string_append_printf(kv, "%s%s", kv->len ? "," : "", argv[i]);
    }
    params = strata_params_new(type->name, type->params, kv->str, &err);
    if (!params)
        goto fail;
    src = type->generate(params, &err);
    if (!src)
        goto fail;
    char *values = strata_params_to_string(params);
    g_strdelimit(values, ",", ' ');
    comment = g_strdup_printf("strata gen %s %s", type->name, values);
    g_free(values);
    if (strata_trace_write_source(src, path, comment, &err) < 0)
        goto fail;
    goto done;

fail:
    status = strata_cli_fail("gen", err);
done:
    if (kv)
        g_string_free(kv, TRUE);
    g_free(comment);
    strata_source_free(src);
    strata_params_free(params);
    g_free(output);
    g_free(description);
    g_option_context_free(octx);
    return status;
}
