/*
 * cmd_export.c: `strata export FORMAT --trace T.trace -o OUT`, a trace into
 * another tool's format.
 *
 * The formats are the rows of `exporters` below, looked up by name
 * (formats.c); each names an exporter (cli.h's strata_exporter: its help,
 * what -o names, its writer), run by strata_export_run, here:
 *   chakra  PREFIX.0.et .. PREFIX.{N-1}.et, one Chakra execution trace per
 *           device of the trace's mesh (one without a mesh), as ASTRA-sim's
 *           workload layer reads them (sim/import/chakra_export.h says what
 *           each op becomes).
 */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "import/chakra_export.h"
#include "trace/checked.h"
#include "trace/reader.h"

typedef strata_format exporter;

static const strata_exporter chakra_exporter;

static const exporter exporters[] = {
    {"chakra", "Chakra execution traces, one per device (ASTRA-sim's workload format)", NULL, &chakra_exporter},
    {NULL, NULL, NULL, NULL},
};

char *strata_export_format_names(void) { return strata_format_names(exporters); }

int strata_cmd_export(int argc, char **argv)
{
    return strata_format_dispatch("export", "FORMAT --trace T.trace -o OUT [OPTIONS]",
                                  "Writes a trace in another tool's format.", exporters, argc, argv);
}

int strata_export_run(const strata_exporter *ex, int argc, char **argv)
{
    char *trace = NULL, *out = NULL;
    GOptionEntry entries[] = {
        {"trace", 't', 0, G_OPTION_ARG_FILENAME, &trace, "the trace to export (strata-trace 1)", "T.trace"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, ex->output_help, ex->output_arg},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    strata_job *job = strata_job_new(ex->cmd, ex->parameter_string, ex->summary, NULL, entries);
    GError *err = NULL;
    int status = STRATA_EXIT_USAGE;
    if (strata_job_parse(job, &argc, &argv, 0, 0, NULL)) {
        if (!trace || !out)
            g_set_error(&err, STRATA_ERROR, STRATA_ERROR_INPUT, "expected --trace T.trace and -o %s", ex->output_arg);
        else if (strata_job_input(job, "--trace", trace, &err)) {
            /* what check refuses is never exported */
            strata_source *src = strata_trace_open(trace, &err);
            if (src)
                src = strata_checked_source_new(src, NULL);
            if (src && ex->write(job, src, trace, out, &err))
                status = STRATA_EXIT_OK;
            strata_source_free(src);
        }
    }
    g_free(trace);
    g_free(out);
    return strata_job_end(job, status, err);
}

/* ---- chakra ------------------------------------------------------------- */

static bool chakra_write(strata_job *job, strata_source *src, const char *trace, const char *prefix, GError **err)
{
    uint32_t n = 0;
    strata_job_doing(job, "exporting %s", trace);
    if (!strata_chakra_export(src, prefix, strata_job_outputs(job), &n, err))
        return false;
    fprintf(stderr, "strata export chakra: %s -> %s.0.et .. %s.%u.et (%u file%s)\n", trace, prefix, prefix, n - 1,
            n, n == 1 ? "" : "s");
    return true;
}

static const strata_exporter chakra_exporter = {
    .cmd = "export chakra",
    .parameter_string = "- write a trace as Chakra execution traces",
    .summary = "Writes one Chakra execution trace per device of the trace's mesh (PREFIX.D.et),\n"
               "as ASTRA-sim's workload layer reads them: computes as COMP nodes, copies as\n"
               "MEM_LOAD nodes, collectives as COMM_COLL nodes, the rest as METADATA nodes\n"
               "(which ASTRA-sim skips), each with its strata op in attributes (strata.op,\n"
               "strata.buffer, strata.memory, strata.bytes), so 'strata import chakra PREFIX'\n"
               "gives the trace back.",
    .output_help = "the files' prefix: writes PREFIX.0.et, PREFIX.1.et, ... (one per device)",
    .output_arg = "PREFIX",
    .write = chakra_write,
};
