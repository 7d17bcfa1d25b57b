/*
 * cmd_import_chakra.c: `strata import chakra ET [--rank R] [--ranks N] [-o OUT.trace]`,
 * a Chakra execution trace (ASTRA-sim's workload format) into a trace
 * (sim/import/chakra.h says what each node becomes).
 *
 * ET is one .et file, the prefix of a workload's files PREFIX.0.et,
 * PREFIX.1.et, ... (as ASTRA-sim's --workload-configuration names them), or
 * the folder that holds them (as ASTRA-sim's examples ship them).
 * Ranks that run the same graph become one SPMD program over the mesh
 * `rank:N`; ranks whose graphs differ one trace per rank, OUT.R.trace beside
 * -o OUT.trace (each rank's graph as the program of every rank); --rank R
 * imports one rank's graph only.
 */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "import/chakra.h"
#include "trace/writer.h"

typedef struct chakra_args {
    strata_import_common c;
    int rank, ranks;
} chakra_args;

/* "OUT.trace" -> "OUT.R.trace" ("OUT" -> "OUT.R"). */
static char *rank_path(const char *out, size_t rank)
{
    size_t n = strlen(out);
    if (n > 6 && strcmp(out + n - 6, ".trace") == 0)
        return g_strdup_printf("%.*s.%zu.trace", (int)(n - 6), out, rank);
    return g_strdup_printf("%s.%zu", out, rank);
}

/* Rank r's trace written and prepared in set as *file. */
static bool write_rank(strata_outfile_set *set, const char *input, const char *path, size_t r, strata_source *trace,
                       strata_outfile **file, GError **err)
{
    *file = strata_outfile_open_in(set, path, err);
    if (*file == NULL)
        return false;
    char *comment = g_strdup_printf("imported from Chakra execution trace %s: rank %zu's graph, as the "
                                    "program of every rank (the ranks' graphs differ)", input, r);
    bool ok = strata_trace_write_to(trace, strata_outfile_stream(*file), comment, err) >= 0 &&
              strata_outfile_prepare(*file, err);
    g_free(comment);
    if (!ok && err && *err && !strstr((*err)->message, path))
        g_prefix_error(err, "%s: ", path);
    return ok;
}

/* Ranks whose graphs differ: one trace per rank beside --output, all or
 * none (core/outfile.h: one lock for OUT, renamed in one step). */
static bool write_per_rank(strata_job *job, const chakra_args *a, const char *input, strata_outfile **out,
                           strata_source **traces, size_t n, const strata_chakra_summary *sum, GError **err)
{
    const char *target = a->c.out_path && strcmp(a->c.out_path, "-") != 0 ? a->c.out_path : NULL;
    if (!target) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: the ranks' graphs differ (rank %u's from rank 0's at op %" G_GINT64_FORMAT "): expected "
                    "-o OUT.trace to write one trace per rank (OUT.R.trace), or --rank R for one", input,
                    sum->differing_rank, sum->first_difference);
        return false;
    }
    strata_outfile_abort(*out); /* the one file is not written: its per-rank files are */
    *out = NULL;
    strata_outfile_set *set = strata_job_outputs(job);
    bool ok = strata_outfile_set_lock(set, target, err);
    GPtrArray *files = g_ptr_array_new();
    for (size_t r = 0; ok && r < n; r++) {
        char *path = rank_path(target, r);
        strata_outfile *file = NULL;
        ok = write_rank(set, input, path, r, traces[r], &file, err);
        if (file)
            g_ptr_array_add(files, file);
        g_free(path);
    }
    if (ok)
        ok = strata_outfile_commit_all((strata_outfile **)files->pdata, files->len, err);
    else
        for (guint i = 0; i < files->len; i++)
            strata_outfile_abort(g_ptr_array_index(files, i));
    g_ptr_array_free(files, TRUE);
    if (ok) {
        char *first = rank_path(target, 0), *last = rank_path(target, n - 1);
        fprintf(stderr, "strata import chakra: %s: the ranks' graphs differ (rank %u's from rank 0's at op %"
                G_GINT64_FORMAT "): wrote one trace per rank, %s .. %s\n", input, sum->differing_rank,
                sum->first_difference, first, last);
        g_free(first);
        g_free(last);
    }
    return ok;
}

static bool chakra_convert(strata_job *job, const char *input, strata_outfile **out, const void *args,
                           GError **err)
{
    const chakra_args *a = args;
    if (a->ranks < 0 || a->ranks > 65536) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--ranks %d: expected a count from 1 to 65536", a->ranks);
        return false;
    }
    if (a->rank < -1) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--rank %d: expected a rank of at least 0", a->rank);
        return false;
    }
    char **files = strata_chakra_rank_files(input, err);
    if (!files)
        return false;
    for (char **f = files; *f; f++) { /* never written over, the one output nor a rank's */
        strata_outfile_set_input(strata_job_outputs(job), *f);
        if (!strata_outfile_check_input(*out, *f, err)) {
            g_strfreev(files);
            return false;
        }
    }
    strata_chakra_summary sum;
    size_t n = 0;
    strata_job_doing(job, "importing %s", input);
    strata_source **traces = strata_chakra_import(files, a->rank, (uint32_t)a->ranks, &n, &sum, err);
    bool ok = traces != NULL;
    if (ok && n > 1)
        ok = write_per_rank(job, a, input, out, traces, n, &sum, err);
    else if (ok) {
        char *comment = g_strdup_printf(
            "imported from Chakra execution trace %s (%u rank file%s%s): %s", input, sum.ranks,
            sum.ranks == 1 ? "" : "s", a->rank >= 0 ? ", one rank's graph" : "",
            sum.from_strata ? "a strata export, its ops as exported"
                            : "COMP -> compute, MEM_LOAD/STORE -> alloc+copy, COMM_COLL -> collective over mesh "
                              "axis rank, dependencies across streams -> record/wait");
        ok = strata_job_commit_trace(job, out, traces[0], comment, err) >= 0;
        g_free(comment);
    }
    if (ok)
        fprintf(stderr,
                "strata import chakra: %s: %u rank file%s, %" G_GUINT64_FORMAT " nodes -> %s on mesh "
                "rank:%u; %" G_GUINT64_FORMAT " compute, %" G_GUINT64_FORMAT " cpu, %" G_GUINT64_FORMAT
                " memory, %" G_GUINT64_FORMAT " collective nodes, %" G_GUINT64_FORMAT " skipped (metadata), %"
                G_GUINT64_FORMAT " events%s\n",
                input, sum.ranks, sum.ranks == 1 ? "" : "s", sum.nodes,
                sum.from_strata ? "the exported program" : n > 1 ? "one program per rank" : "one SPMD program",
                sum.mesh, sum.comp, sum.cpu, sum.mem, sum.coll, sum.skipped, sum.events,
                sum.from_strata ? " (a strata export)" : n > 1 ? " (rank 0's counts)" : "");
    if (ok && sum.missing_deps)
        fprintf(stderr,
                "strata import chakra: %s: warning: %" G_GUINT64_FORMAT " dependencies name nodes absent from "
                "their file (such as the root thread node a PyTorch trace's converter drops); ignored\n",
                input, sum.missing_deps);
    for (size_t r = 0; traces && r < n; r++)
        strata_source_free(traces[r]);
    g_free(traces);
    g_strfreev(files);
    return ok;
}

static void chakra_args_init(void *args) { ((chakra_args *)args)->rank = -1; }

static const GOptionEntry chakra_options[] = {
    {"rank", 0, 0, G_OPTION_ARG_INT, STRATA_IMPORT_FIELD(chakra_args, rank),
     "import only rank R's graph, as the program of every rank (default: all, which must agree)", "R"},
    {"ranks", 0, 0, G_OPTION_ARG_INT, STRATA_IMPORT_FIELD(chakra_args, ranks),
     "the mesh size written (default: the number of rank files)", "N"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

const strata_importer strata_importer_chakra = {
    .cmd = "import chakra",
    .parameter_string = "ET - import a Chakra execution trace (ASTRA-sim's workload format)",
    .summary =
        "Reads a Chakra execution trace (length-delimited protobuf: a GlobalMetadata,\n"
        "then Nodes; schema third_party/chakra/et_def.proto), one .et file, the prefix\n"
        "of a workload's PREFIX.0.et, PREFIX.1.et, ... files or the folder holding them,\n"
        "and writes one SPMD trace over the mesh rank:N: COMP nodes become computes\n"
        "(their duration, else num_ops as flops), MEM_LOAD/MEM_STORE nodes allocs and\n"
        "copies between host and device memory, COMM_COLL nodes collectives over the\n"
        "axis 'rank' whose input is comm_size bytes (as ASTRA-sim reads it), and\n"
        "dependencies across streams record/wait pairs. Ranks\n"
        "whose graphs differ give one trace per rank, OUT.R.trace beside -o OUT.trace. A trace\n"
        "that 'strata export chakra' wrote comes back as it was. See docs/chakra.md.",
    .args_usage = "one ET (a .et file, a PREFIX of PREFIX.0.et ..., or their folder)",
    .input_name = "ET",
    .convert = chakra_convert,
    .args_size = sizeof(chakra_args),
    .args_init = chakra_args_init,
    .options = chakra_options,
};
