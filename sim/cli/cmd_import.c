/*
 * cmd_import.c: `strata import FORMAT INPUT [-o OUT.trace] [OPTIONS]`,
 * converters from other formats into traces.
 *
 * The formats are the rows of `importers` below, looked up by name
 * (formats.c). Each names an importer (cli.h's strata_importer: its help,
 * its options, its conversion): torch, minimalloc and xla are here;
 * kineto, chakra and jax-profile in cmd_import_kineto.c,
 * cmd_import_chakra.c and cmd_import_jax.c. `strata import FORMAT --help`
 * lists a format's options. strata_import_run, here, runs every importer:
 * the output file is opened (and so checked) before any work, and written
 * through a temporary that replaces it only when complete (core/outfile.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "core/progress.h"
#include "core/units.h"
#include "alloc/alloc.h"
#include "import/kineto.h"
#include "import/minimalloc.h"
#include "import/torch.h"
#include "import/xla.h"
#include "import/xla_report.h"
#include "validate/fidelity.h"

typedef strata_import_format importer;

static const strata_importer torch_importer, minimalloc_importer, xla_importer;

static const importer importers[] = {
    {"torch", "a PyTorch CUDA memory snapshot (torch.cuda.memory._dump_snapshot pickle)",
     &torch_importer, NULL},
    {"minimalloc", "a MiniMalloc benchmark CSV (id,lower,upper,size)", &minimalloc_importer, NULL},
    {"xla", "an XLA dump (--xla_dump_to): buffer assignment, live ranges, optimized HLO",
     &xla_importer, NULL},
    {"kineto", "a PyTorch profiler trace (Chrome trace JSON[.gz], profile_memory=True)",
     &strata_importer_kineto, NULL},
    {"chakra", "a Chakra execution trace, ASTRA-sim's workload format (.et, or PREFIX of PREFIX.N.et)",
     &strata_importer_chakra, NULL},
    {"jax-profile", "a jax.profiler trace (Perfetto/TensorBoard JSON[.gz], XProf .xplane.pb): XLA ops at measured times",
     &strata_importer_jax_profile, NULL},
    {NULL, NULL, NULL, NULL},
};

const strata_import_format *strata_import_formats(void) { return importers; }

char *strata_import_format_names(void) { return strata_format_names(importers); }

int strata_cmd_import(int argc, char **argv)
{
    return strata_format_dispatch("import", "FORMAT INPUT [-o OUT.trace] [OPTIONS]",
                                  "Converts another format into a strata trace.", importers, argc, argv);
}

/* The entries of imp's options on args: --output, the row's own (their
 * offsets made pointers into args), --quiet where the row takes it. */
static GArray *import_entries(const strata_importer *imp, strata_import_common *args)
{
    GArray *entries = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));
    GOptionEntry output = {"output", 'o', 0, G_OPTION_ARG_FILENAME, &args->out_path,
                           "where to write the trace (default '-': standard output)", "OUT.trace"};
    g_array_append_val(entries, output);
    for (const GOptionEntry *o = imp->options; o && o->long_name; o++) {
        GOptionEntry e = *o;
        e.arg_data = (char *)args + (uintptr_t)o->arg_data;
        g_array_append_val(entries, e);
    }
    GOptionEntry quiet = {"quiet", 'q', 0, G_OPTION_ARG_NONE, &args->quiet,
                          "do not show the bytes read on standard error when it is a terminal", NULL};
    if (imp->quiet)
        g_array_append_val(entries, quiet);
    return entries;
}

int strata_import_run(const strata_importer *imp, int argc, char **argv)
{
    strata_import_common *args = g_malloc0(MAX(imp->args_size, sizeof *args));
    if (imp->args_init)
        imp->args_init(args);
    GArray *entries = import_entries(imp, args);
    strata_job *job =
        strata_job_new(imp->cmd, imp->parameter_string, imp->summary, NULL, (const GOptionEntry *)entries->data);
    GError *err = NULL;
    strata_outfile *out = NULL;
    int status = STRATA_EXIT_USAGE;
    if (strata_job_parse(job, &argc, &argv, 1, 1, imp->args_usage)) {
        strata_job_input(job, imp->input_name, argv[1], NULL); /* not '': strata_job_parse */
        const char *input = NULL;
        if (strata_job_output(job, "--output", args->out_path ? args->out_path : "-", &out, &err) &&
            (input = strata_job_input_once(job, argv[1], &err)) != NULL && imp->convert(job, input, &out, args, &err))
            status = STRATA_EXIT_OK;
    }
    status = strata_job_end(job, status, err);
    for (guint i = 0; i < entries->len; i++) {
        const GOptionEntry *e = &g_array_index(entries, GOptionEntry, i);
        if (e->arg == G_OPTION_ARG_STRING || e->arg == G_OPTION_ARG_FILENAME)
            g_free(*(char **)e->arg_data);
    }
    g_array_free(entries, TRUE);
    g_free(args);
    return status;
}

bool strata_import_fidelity_args(bool fidelity, const char *allocator, const char *capacity, GError **err)
{
    if (!fidelity && (allocator || capacity)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s %s: expected --fidelity, which reads it (the import "
                    "itself replays nothing through an allocator)", allocator ? "--allocator" : "--capacity",
                    allocator ? allocator : capacity);
        return false;
    }
    if (!fidelity || !allocator)
        return true;
    /* the spec checked before the import: an unknown name was refused after the trace was written */
    strata_allocator *probe = strata_allocator_new(allocator, 0, 0, err);
    if (!probe)
        g_prefix_error(err, "--allocator: ");
    strata_allocator_free(probe);
    return probe != NULL;
}

/* ---- torch ---------------------------------------------------------------- */

/* The pinned host allocator's part (host_segments, host_traces). */
static void print_host_summary(const char *path, const strata_torch_summary *s)
{
    char *init = strata_format_size(s->host_initial_reserved);
    char *peak = strata_format_size(s->host_peak_reserved);
    fprintf(stderr,
            "strata import torch: %s: pinned host memory (host_segments, host_traces): %"
            G_GUINT64_FORMAT " events -> %" G_GUINT64_FORMAT " allocs, %" G_GUINT64_FORMAT
            " frees, %" G_GUINT64_FORMAT " releases on memory host; start: %" G_GUINT64_FORMAT
            " blocks (%s), %" G_GUINT64_FORMAT " live; real peak reserved %s (%u segment_alloc)\n",
            path, s->host_events, s->host_allocs, s->host_frees, s->host_releases,
            s->host_initial_segments, init, s->host_initial_live, peak,
            s->host_segment_alloc_sizes->len);
    if (s->host_uncached_frees)
        fprintf(stderr, "strata import torch: %s: pinned host memory: %" G_GUINT64_FORMAT
                        " blocks freed at once (segment_free right after their free: above "
                        "pinned_max_cached_size), not modelled: caching-host keeps them cached\n",
                path, s->host_uncached_frees);
    if (s->host_unknown)
        fprintf(stderr, "strata import torch: %s: note: %" G_GUINT64_FORMAT
                        " host keys or actions this importer does not know, read past: %s\n",
                path, s->host_unknown, s->host_unknown_text);
    if (s->host_inconsistent)
        fprintf(stderr, "strata import torch: %s: warning: %" G_GUINT64_FORMAT
                        " host events contradict the snapshot's own state and were skipped\n",
                path, s->host_inconsistent);
    g_free(init);
    g_free(peak);
}

static void print_summary(const char *path, const strata_torch_summary *s)
{
    char *init = strata_format_size(s->initial_reserved);
    char *peak = strata_format_size(s->peak_reserved);
    fprintf(stderr,
            "strata import torch: %s: %" G_GUINT64_FORMAT " events -> %" G_GUINT64_FORMAT
            " allocs, %" G_GUINT64_FORMAT " frees, %" G_GUINT64_FORMAT " releases; start: %"
            G_GUINT64_FORMAT " segments (%s), %" G_GUINT64_FORMAT " live blocks; real peak "
            "reserved %s (%" G_GUINT64_FORMAT " segment_alloc, %" G_GUINT64_FORMAT
            " segment_free)\n",
            path, s->n_events, s->n_allocs, s->n_frees, s->n_releases, s->n_initial_segments,
            init, s->n_initial_blocks, peak, s->n_segment_allocs, s->n_segment_frees);
    if (s->no_history)
        fprintf(stderr, "strata import torch: %s: device %d: no history (a state dump: "
                        "_record_memory_history was off); the trace holds the state only\n",
                path, s->device);
    if (s->limit_high > 0) {
        char *lo = strata_format_size(s->limit_low), *hi = strata_format_size(s->limit_high);
        fprintf(stderr, "strata import torch: %s: the process hit its memory limit (%"
                        G_GUINT64_FORMAT " retries, %u oom): at least %s, below %s; the trace "
                        "sets allocator.device_limit=%" G_GUINT64_FORMAT "\n",
                path, s->n_retries, s->ooms->len, lo, hi, s->limit_low);
        g_free(lo);
        g_free(hi);
    }
    if (s->notes) { /* what was derived or inferred (sim/import/torch.c) */
        char **lines = g_strsplit(s->notes, "\n", -1);
        for (char **l = lines; *l; l++)
            fprintf(stderr, "strata import torch: %s: %s\n", path, *l);
        g_strfreev(lines);
    }
    if (s->n_unknown)
        fprintf(stderr, "strata import torch: %s: warning: %" G_GUINT64_FORMAT
                        " events of unknown actions, skipped: %s\n",
                path, s->n_unknown, s->unknown_text);
    if (s->rebuilt_reserved != s->initial_reserved)
        fprintf(stderr, "strata import torch: %s: warning: the rebuilt start holds %"
                        G_GUINT64_FORMAT " bytes, the file says %" G_GUINT64_FORMAT
                        " (the figures above are the file's)\n",
                path, s->rebuilt_reserved, s->initial_reserved);
    if (s->n_inconsistent)
        fprintf(stderr,
                "strata import torch: %s: warning: %" G_GUINT64_FORMAT
                " events contradict the snapshot's own state and were skipped\n",
                path, s->n_inconsistent);
    if (s->has_host)
        print_host_summary(path, s);
    g_free(init);
    g_free(peak);
}

/* --device: N, `all`, or NULL (the device with the history). */
static bool parse_device(const char *text, int *device, GError **err)
{
    *device = STRATA_TORCH_DEVICE_AUTO;
    if (text == NULL)
        return true;
    if (strcmp(text, "all") == 0) {
        *device = STRATA_TORCH_DEVICE_ALL;
        return true;
    }
    char *end = NULL;
    guint64 n = g_ascii_strtoull(text, &end, 10);
    if (!g_ascii_isdigit(text[0]) || *end || n > G_MAXINT) { /* digits first: -18446744073709551615 was 1 */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "--device: expected a device number or 'all', got '%s'", text);
        return false;
    }
    *device = (int)n;
    return true;
}

/* The trace's header comment: where it comes from, the settings, the limit
 * and the snapshot's oom events (the first 100). */
static char *torch_comment(const char *path, const strata_torch_summary *s)
{
    char *base = g_path_get_basename(path);
    GString *c = g_string_new(NULL);
    g_string_printf(c, "imported by strata import torch from %s (device %d): %" G_GUINT64_FORMAT
                       " events, %" G_GUINT64_FORMAT " setup ops rebuild the state at the first "
                       "event%s",
                    base, s->device, s->n_events, s->n_setup_ops,
                    s->no_history ? " (no history: a state dump)" : "");
    if (s->has_host)
        g_string_append_printf(c, "\npinned host memory (host_segments, host_traces): %"
                                  G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT
                                  " setup ops, ops on memory host (buffers pin.N); device "
                                  "releases name memory hbm",
                               s->host_events, s->host_setup_ops);
    if (s->settings_text)
        g_string_append_printf(c, "\nallocator_settings: %s", s->settings_text);
    if (s->limit_high > 0)
        g_string_append_printf(c, "\nmemory limit of the process: %" G_GUINT64_FORMAT
                                  " <= limit < %" G_GUINT64_FORMAT " bytes (%" G_GUINT64_FORMAT
                                  " allocator retries, %u oom)",
                               s->limit_low, s->limit_high, s->n_retries, s->ooms->len);
    for (guint i = 0; i < s->ooms->len && i < 100; i++) {
        const strata_torch_oom *o = &g_array_index(s->ooms, strata_torch_oom, i);
        g_string_append_printf(c, "\noom at event %" G_GUINT64_FORMAT, o->event);
        if (o->has_at)
            g_string_append_printf(c, " (at=%" G_GINT64_FORMAT "us)", o->at_us);
        g_string_append_printf(c, ": %" G_GUINT64_FORMAT " bytes requested, %" G_GUINT64_FORMAT
                                  " free on the device",
                               o->size, o->device_free);
    }
    g_free(base);
    return g_string_free(c, FALSE);
}

static void print_fidelity(const char *spec, const strata_torch_fidelity *f)
{
    char *real = strata_format_size(f->real_peak_reserved);
    char *model = strata_format_size(f->model_peak_reserved);
    fprintf(stderr,
            "fidelity (%s): peak reserved real %" G_GUINT64_FORMAT " (%s), model %"
            G_GUINT64_FORMAT " (%s), error %+.2f%%; segment_alloc reproduced %"
            G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " (%.1f%%), model made %"
            G_GUINT64_FORMAT "%s\n",
            spec, f->real_peak_reserved, real, f->model_peak_reserved, model,
            100.0 * f->peak_error, f->matched_segment_allocs, f->real_segment_allocs,
            f->real_segment_allocs ? 100.0 * (double)f->matched_segment_allocs /
                                         (double)f->real_segment_allocs
                                   : 100.0,
            f->model_segment_allocs, f->oom ? "; the model ran out of memory" : "");
    g_free(real);
    g_free(model);
}

typedef struct torch_args {
    strata_import_common c;
    char *allocator, *capacity_text, *device_text;
    gboolean no_frames, fidelity;
} torch_args;

/* Imports the snapshot into *out, then measures the fidelity when asked. */
static bool torch_convert(strata_job *job, const char *pickle, strata_outfile **out, const void *args,
                          GError **err)
{
    const torch_args *a = args;
    uint64_t capacity = 0; /* 80 GiB with the snapshot's own limit */
    int device = 0;
    if (!strata_import_fidelity_args(a->fidelity, a->allocator, a->capacity_text, err))
        return false;
    if (a->capacity_text && !strata_parse_size_above_zero(a->capacity_text, &capacity, err)) {
        g_prefix_error(err, "--capacity: ");
        return false;
    }
    if (!parse_device(a->device_text, &device, err))
        return false;
    strata_torch_options opt;
    strata_torch_options_init(&opt);
    opt.device = device;
    opt.frames = !a->no_frames;
    opt.progress = strata_progress_new(strata_progress_stream(a->c.quiet));
    strata_torch_summary sum = {0};
    strata_job_doing(job, "importing %s", pickle);
    strata_source *src = strata_torch_import(pickle, &opt, &sum, err);
    bool ok = src != NULL;
    if (ok) {
        char *comment = torch_comment(pickle, &sum);
        ok = strata_torch_write(src, strata_outfile_stream(*out), comment, err) >= 0;
        g_free(comment);
        ok = strata_job_commit(job, out, ok, err);
    }
    strata_progress_clear(opt.progress); /* before the summary */
    if (ok)
        print_summary(pickle, &sum);
    if (ok && a->fidelity) {
        strata_torch_fidelity f;
        const char *spec = a->allocator ? a->allocator : "caching";
        ok = strata_torch_measure(src, &sum, spec, capacity, &f, err);
        strata_progress_clear(opt.progress);
        if (ok)
            print_fidelity(spec, &f);
        if (ok && sum.has_host) {
            ok = strata_torch_measure_host(src, &sum, 0, &f, err);
            if (ok)
                print_fidelity("caching-host, memory host", &f);
        }
    }
    strata_source_free(src);
    strata_progress_free(opt.progress);
    strata_torch_summary_clear(&sum);
    return ok;
}

static const GOptionEntry torch_options[] = {
    {"device", 0, 0, G_OPTION_ARG_STRING, STRATA_IMPORT_FIELD(torch_args, device_text),
     "which CUDA device to import (default: the one with the history); 'all': every "
     "device (not yet: lists them)", "N|all"},
    {"no-frames", 0, 0, G_OPTION_ARG_NONE, STRATA_IMPORT_FIELD(torch_args, no_frames),
     "do not label allocs with note=FILE:LINE of their first Python frame", NULL},
    {"fidelity", 0, 0, G_OPTION_ARG_NONE, STRATA_IMPORT_FIELD(torch_args, fidelity),
     "also replay the trace through an allocator model and print, on standard error, "
     "its peak reserved bytes and segment allocations against the snapshot's",
     NULL},
    STRATA_IMPORT_OPTION_ALLOCATOR(torch_args),
    {"capacity", 0, 0, G_OPTION_ARG_STRING, STRATA_IMPORT_FIELD(torch_args, capacity_text),
     "device capacity for --fidelity (default 80GiB with the memory limit the snapshot "
     "shows; given, it wins over that limit)", "SIZE"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static const strata_importer torch_importer = {
    .cmd = "import torch",
    .parameter_string = "SNAPSHOT.pickle - import a PyTorch memory snapshot",
    .summary =
        "Reads a snapshot written by torch.cuda.memory._dump_snapshot() with a safe pickle\n"
        "reader (plain data only: anything that would import or call code is refused) and\n"
        "writes a strata trace: allocator settings as `option allocator.*`, a setup part\n"
        "that rebuilds the allocator state at the start of the recorded events (initial\n"
        "segments and live blocks), then allocs and frees in order with stream=, addr=,\n"
        "at= and note=, and `release` where the program emptied the cache. The snapshot\n"
        "is streamed: memory does not grow with its size (multi-GB files are fine).\n"
        "See docs/torch-import.md.",
    .args_usage = "one SNAPSHOT.pickle",
    .input_name = "SNAPSHOT.pickle",
    .convert = torch_convert,
    .args_size = sizeof(torch_args),
    .options = torch_options,
    .quiet = true,
};

/* ---- minimalloc ----------------------------------------------------------- */

static bool minimalloc_convert(strata_job *job, const char *csv, strata_outfile **out, const void *args,
                               GError **err)
{
    (void)args;
    char *base = g_path_get_basename(csv);
    char *comment = g_strdup_printf("imported from MiniMalloc benchmark %s (id,lower,upper,size; frees before "
                                    "allocs at equal times)", base);
    g_free(base);
    strata_source *src = strata_minimalloc_source(csv, err);
    bool ok = src && strata_job_commit_trace(job, out, src, comment, err) >= 0;
    strata_source_free(src);
    g_free(comment);
    return ok;
}

static const strata_importer minimalloc_importer = {
    .cmd = "import minimalloc",
    .parameter_string = "FILE.csv - import a MiniMalloc benchmark (id,lower,upper,size)",
    .summary =
        "Turns each buffer of a MiniMalloc CSV (live over [lower, upper), size bytes)\n"
        "into an alloc and a free, ordered by time (frees before allocs at equal times).",
    .args_usage = "one FILE.csv",
    .input_name = "FILE.csv",
    .convert = minimalloc_convert,
};

/* ---- xla ------------------------------------------------------------------ */

typedef struct xla_args {
    strata_import_common c;
    char *module;
} xla_args;

/* Imports the module into *out, then prints XLA's figures beside strata's. */
static bool xla_convert(strata_job *job, const char *input, strata_outfile **out, const void *args, GError **err)
{
    const xla_args *a = args;
    strata_xla_figures fig = {0};
    strata_replay_summary sum = {0};
    strata_job_doing(job, "importing %s", input);
    strata_progress *progress = strata_progress_new(strata_progress_stream(a->c.quiet));
    strata_source *src = strata_xla_import_with(input, a->module, progress, &fig, err);
    strata_progress_free(progress);
    bool ok = src && strata_xla_measure(src, &sum, err) && strata_source_rewind(src, err);
    const char *read[] = {fig.buffer_file, fig.live_range_file, fig.hlo_file, fig.report_file}; /* never clobbered */
    for (size_t i = 0; ok && i < G_N_ELEMENTS(read); i++)
        ok = strata_outfile_check_input(*out, read[i], err);
    if (ok) {
        char *comment = g_strdup_printf("imported by strata import xla from %s (%" G_GUINT64_FORMAT
                                        " instructions, %" G_GUINT64_FORMAT " allocations)",
                                        fig.module, fig.n_instructions, fig.n_allocations);
        ok = strata_job_commit_trace(job, out, src, comment, err) >= 0;
        g_free(comment);
    }
    if (ok) {
        char *report = strata_xla_report(&fig, &sum);
        fputs(report, stderr);
        g_free(report);
    }
    strata_source_free(src);
    strata_xla_figures_clear(&fig);
    return ok;
}

static const GOptionEntry xla_options[] = {
    {"module", 0, 0, G_OPTION_ARG_STRING, STRATA_IMPORT_FIELD(xla_args, module),
     "the module to import, a part of its file names (needed when DIR holds several)", "NAME"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static const strata_importer xla_importer = {
    .cmd = "import xla",
    .parameter_string = "DIR_OR_FILE - import a module of an XLA dump",
    .summary =
        "Reads what XLA_FLAGS=\"--xla_dump_to=DIR --xla_dump_hlo_as_text\" writes for a module:\n"
        "the buffer assignment and live ranges (*after_optimizations-buffer-assignment.txt,\n"
        "or *-live-range.txt), and the optimized HLO (*after_optimizations.txt) when present.\n"
        "Writes a trace with one alloc/free per buffer at its live range in schedule order\n"
        "(tagged param/output/activation/temp, with dtype and shape), one compute per\n"
        "instruction with FLOPs from the HLO shapes, async copies as copies, collectives\n"
        "as computes noted with their opcode. Prints XLA's figures beside strata's and the\n"
        "offline planner's packing of each preallocated-temp allocation on standard error.\n"
        "See docs/xla-import.md.",
    .args_usage = "one DIR_OR_FILE",
    .input_name = "DIR_OR_FILE",
    .convert = xla_convert,
    .args_size = sizeof(xla_args),
    .options = xla_options,
    .quiet = true,
};
