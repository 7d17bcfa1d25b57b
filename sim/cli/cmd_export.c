/*
 * cmd_export.c: `strata export FORMAT`, a trace into another tool's format.
 *
 *   strata export chakra --trace T.trace -o PREFIX
 *
 * writes PREFIX.0.et .. PREFIX.{N-1}.et, one Chakra execution trace per
 * device of the trace's mesh (one without a mesh), as ASTRA-sim's workload
 * layer reads them (sim/import/chakra.h says what each op becomes). The
 * formats are looked up by name in `exporters` below.
 */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "import/chakra_export.h"
#include "trace/reader.h"

typedef struct exporter {
    const char *name;
    const char *summary;
    int (*main)(int argc, char **argv);
} exporter;

static int export_chakra(int argc, char **argv);

static const exporter exporters[] = {
    {"chakra", "Chakra execution traces, one per device (ASTRA-sim's workload format)", export_chakra},
    {NULL, NULL, NULL},
};

char *strata_export_format_names(void)
{
    GString *s = g_string_new(NULL);
    for (const exporter *e = exporters; e->name; e++)
        g_string_append_printf(s, "%s%s", s->len ? ", " : "", e->name);
    return g_string_free(s, FALSE);
}

static void usage(FILE *out)
{
    fprintf(out, "Usage: strata export FORMAT --trace T.trace -o OUT [OPTIONS]\n\n"
                 "Writes a trace in another tool's format. Formats:\n");
    for (const exporter *e = exporters; e->name; e++)
        fprintf(out, "  %-11s %s\n", e->name, e->summary);
    fprintf(out, "\nRun 'strata export FORMAT --help' for a format's options.\n");
}

int strata_cmd_export(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return STRATA_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return STRATA_EXIT_OK;
    }
    for (const exporter *e = exporters; e->name; e++)
        if (strcmp(e->name, argv[1]) == 0)
            return e->main(argc - 1, argv + 1);
    fprintf(stderr, "strata export: unknown format '%s'; known formats:", argv[1]);
    for (const exporter *e = exporters; e->name; e++)
        fprintf(stderr, " %s", e->name);
    fprintf(stderr, "\n");
    return STRATA_EXIT_USAGE;
}

static int export_chakra(int argc, char **argv)
{
    char *trace = NULL, *prefix = NULL;
    GOptionEntry entries[] = {
        {"trace", 't', 0, G_OPTION_ARG_FILENAME, &trace, "the trace to export (strata-trace 1)", "T.trace"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &prefix,
         "the files' prefix: writes PREFIX.0.et, PREFIX.1.et, ... (one per device)", "PREFIX"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    strata_job *job = strata_job_new(
        "export chakra", "- write a trace as Chakra execution traces",
        "Writes one Chakra execution trace per device of the trace's mesh (PREFIX.D.et),\n"
        "as ASTRA-sim's workload layer reads them: computes as COMP nodes, copies as\n"
        "MEM_LOAD nodes, collectives as COMM_COLL nodes, the rest as METADATA nodes\n"
        "(which ASTRA-sim skips), each with its strata op in attributes (strata.op,\n"
        "strata.buffer, strata.memory, strata.bytes), so 'strata import chakra PREFIX'\n"
        "gives the trace back.",
        NULL, entries);
    GError *err = NULL;
    int status = STRATA_EXIT_USAGE;
    if (strata_job_parse(job, &argc, &argv, 0, 0, NULL)) {
        if (!trace || !prefix)
            g_set_error(&err, STRATA_ERROR, STRATA_ERROR_INPUT, "expected --trace T.trace and -o PREFIX");
        else {
            strata_job_input(job, "--trace", trace);
            strata_source *src = strata_trace_open(trace, &err);
            uint32_t n = 0;
            if (src && strata_chakra_export(src, prefix, &n, &err)) {
                fprintf(stderr, "strata export chakra: %s -> %s.0.et .. %s.%u.et (%u file%s)\n", trace, prefix,
                        prefix, n - 1, n, n == 1 ? "" : "s");
                status = STRATA_EXIT_OK;
            }
            strata_source_free(src);
        }
    }
    g_free(trace);
    g_free(prefix);
    return strata_job_end(job, status, err);
}
