/*
 * cmd_import_kineto.c: `strata import kineto`, a PyTorch profiler trace
 * (Chrome trace JSON, plain or gzip) into a strata trace.
 *
 *   strata import kineto TRACE.json[.gz] [-o OUT.trace] [--device N]
 *                        [--fidelity [--allocator SPEC] [--capacity SIZE]]
 *
 * The conversion is import/kineto.h; this file keeps the options, the
 * trace's header comment and the summary printed on standard error.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "core/progress.h"
#include "core/units.h"
#include "import/kineto.h"
#include "validate/fidelity.h"

typedef struct kineto_args {
    strata_import_common c;
    char *allocator, *capacity_text, *device_text;
    gboolean fidelity;
} kineto_args;

static void print_summary(FILE *f, const char *path, const strata_kineto_summary *s)
{
    fprintf(f,
            "strata import kineto: %s: %" G_GUINT64_FORMAT " events; device %d (%s): %"
            G_GUINT64_FORMAT " memory events -> %" G_GUINT64_FORMAT " allocs, %" G_GUINT64_FORMAT
            " frees; %" G_GUINT64_FORMAT " kernels, %" G_GUINT64_FORMAT " memsets, %"
            G_GUINT64_FORMAT " memcpys (%" G_GUINT64_FORMAT " of 0 bytes skipped); %"
            G_GUINT64_FORMAT " memory events of the host or other devices skipped\n",
            path, s->n_events, s->device, s->device_type == 6 ? "HIP" : "CUDA", s->n_memory,
            s->n_allocs, s->n_frees, s->n_kernels, s->n_memsets, s->n_memcpys, s->n_memcpy_empty,
            s->n_memory_other);
    fprintf(f,
            "strata import kineto: %s: start: %" G_GUINT64_FORMAT " reserved, %"
            G_GUINT64_FORMAT " allocated (%" G_GUINT64_FORMAT " blocks freed in the window, %"
            G_GUINT64_FORMAT " bytes never freed); ",
            path, s->initial_reserved, s->initial_allocated, s->n_pre_blocks, s->pre_rest);
    if (s->has_totals) {
        char *peak = strata_format_size(s->peak_reserved);
        fprintf(f, "peak Total Reserved %" G_GUINT64_FORMAT " (%s), peak Total Allocated %"
                   G_GUINT64_FORMAT "\n",
                s->peak_reserved, peak, s->peak_allocated);
        g_free(peak);
    } else if (s->n_memory == 0) {
        fprintf(f, "no [memory] events for this device (profiled without profile_memory=True)\n");
    } else {
        fprintf(f, "no Total Reserved in the file (old format%s)\n",
                s->has_addr ? "" : ", no Addr: frees matched by size");
    }
    if (s->n_memcpy_bytes_on_runtime)
        fprintf(f, "strata import kineto: %s: note: %" G_GUINT64_FORMAT " memcpys without args.bytes (ROCm's "
                   "Kineto): bytes taken from the HIP runtime copy of the same correlation (args.size)\n",
                path, s->n_memcpy_bytes_on_runtime);
    if (s->activity_device != s->device)
        fprintf(f, "strata import kineto: %s: note: the kernels and copies are those of device %d: ROCm's "
                   "roctracer numbers them by HSA agent (CPU agents first), the [memory] events by HIP device; "
                   "every device with [memory] events had no kernels, so agents were matched to HIP devices "
                   "in order\n",
                path, s->activity_device);
    if (s->n_memcpy_unsized)
        fprintf(f, "strata import kineto: %s: note: %" G_GUINT64_FORMAT " memcpys without args.bytes and without "
                   "a HIP runtime copy of their correlation in the file: kept as timed ops (compute memcpy.DIR "
                   "time=dur), no bytes moved\n",
                path, s->n_memcpy_unsized);
    if (s->memory_by_ts)
        fprintf(f, "strata import kineto: %s: note: the device's [memory] events are not in ts order in the file "
                   "(%" G_GUINT64_FORMAT " come after a later one: the profiler writes them thread by thread): "
                   "taken in ts order\n",
                path, s->n_memory_out_of_order);
    if (s->n_inferred_segments || s->n_inferred_left) {
        char *b = strata_format_size(s->inferred_bytes);
        fprintf(f, "strata import kineto: %s: inferred: %" G_GUINT64_FORMAT " cached segments (%s) at "
                   "the start: the caching model's segments for allocs that never raised Total Reserved "
                   "(served from the cache); the replay reuses them",
                path, s->n_inferred_segments, b);
        if (s->n_inferred_left)
            fprintf(f, "; %" G_GUINT64_FORMAT " more did not fit the reserved bytes at the start",
                    s->n_inferred_left);
        fputc('\n', f);
        g_free(b);
    }
}

static char *kineto_comment(const char *path, const strata_kineto_summary *s)
{
    char *base = g_path_get_basename(path);
    char *staging = s->n_staging_device
                        ? g_strdup_printf("\nthe copies' device ends, each a segment of its own: %" G_GUINT64_FORMAT " (%"
                                          G_GUINT64_FORMAT " bytes, xfer.hbm.*), not in the real run: a replay's "
                                          "reserved bytes include them",
                                          s->n_staging_device, s->staging_device_bytes)
                        : g_strdup("");
    char *c = g_strdup_printf(
        "imported by strata import kineto from %s (device %d): %" G_GUINT64_FORMAT
        " memory events, %" G_GUINT64_FORMAT " kernels, %" G_GUINT64_FORMAT " memsets, %"
        G_GUINT64_FORMAT " memcpys; %" G_GUINT64_FORMAT " setup ops rebuild the state at the "
        "first event (reserved %" G_GUINT64_FORMAT ", allocated %" G_GUINT64_FORMAT
        "); peak Total Reserved %" G_GUINT64_FORMAT "\ninferred cached segments at the start: %"
        G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " bytes, pre.cache.N)%s",
        base, s->device, s->n_memory, s->n_kernels, s->n_memsets, s->n_memcpys, s->n_setup_ops,
        s->initial_reserved, s->initial_allocated, s->peak_reserved, s->n_inferred_segments,
        s->inferred_bytes, staging);
    g_free(staging);
    g_free(base);
    return c;
}

static bool kineto_fidelity(FILE *f, const char *path, const kineto_args *a,
                            const strata_kineto_summary *s, GError **err)
{
    if (!s->has_totals) {
        fprintf(f, "fidelity: %s has no Total Reserved to compare with\n", path);
        return true;
    }
    uint64_t capacity = 0;
    if (a->capacity_text && !strata_parse_size_above_zero(a->capacity_text, &capacity, err)) {
        g_prefix_error(err, "--capacity: ");
        return false;
    }
    const char *spec = a->allocator ? a->allocator : "caching";
    strata_torch_fidelity fid;
    if (!strata_kineto_measure(path, s, spec, capacity, &fid, err))
        return false;
    fprintf(f,
            "fidelity (%s): peak reserved real %" G_GUINT64_FORMAT ", model %" G_GUINT64_FORMAT
            ", error %+.2f%%; final reserved real %" G_GUINT64_FORMAT ", model %"
            G_GUINT64_FORMAT "%s\n",
            spec, fid.real_peak_reserved, fid.model_peak_reserved, 100.0 * fid.peak_error,
            fid.real_final_reserved, fid.model_final_reserved,
            fid.oom ? "; the model ran out of memory" : "");
    return true;
}

static bool kineto_convert(strata_job *job, const char *path, strata_outfile **out, const void *args,
                           GError **err)
{
    const kineto_args *a = args;
    uint64_t capacity = 0; /* checked before the import: --capacity 0 refused after the trace was written */
    if (!strata_import_fidelity_args(a->fidelity, a->allocator, a->capacity_text, err))
        return false;
    if (a->capacity_text && !strata_parse_size_above_zero(a->capacity_text, &capacity, err)) {
        g_prefix_error(err, "--capacity: ");
        return false;
    }
    strata_kineto_options opt;
    strata_kineto_options_init(&opt);
    if (a->device_text) {
        char *end = NULL;
        guint64 n = g_ascii_strtoull(a->device_text, &end, 10);
        /* digits first: strtoull took -18446744073709551615 as 1 */
        if (!g_ascii_isdigit(a->device_text[0]) || *end || n > G_MAXINT) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "--device: expected a device number, got '%s'", a->device_text);
            return false;
        }
        opt.device = (int)n;
    }
    strata_kineto_summary sum;
    strata_job_doing(job, "importing %s", path);
    opt.progress = strata_progress_new(strata_progress_stream(a->c.quiet));
    strata_source *src = strata_kineto_import(path, &opt, &sum, err);
    bool ok = src != NULL;
    if (ok) {
        char *comment = kineto_comment(path, &sum);
        ok = strata_job_commit_trace(job, out, src, comment, err) >= 0;
        g_free(comment);
    }
    strata_source_free(src);
    strata_progress_free(opt.progress); /* before the summary */
    if (!src)
        return false;
    if (ok)
        print_summary(stderr, path, &sum);
    if (ok && a->fidelity)
        ok = kineto_fidelity(stderr, path, a, &sum, err);
    return ok;
}

static const GOptionEntry kineto_options[] = {
    {"fidelity", 0, 0, G_OPTION_ARG_NONE, STRATA_IMPORT_FIELD(kineto_args, fidelity),
     "also replay the memory events through an allocator model and print its peak "
     "reserved bytes against the file's maximum Total Reserved", NULL},
    STRATA_IMPORT_OPTION_ALLOCATOR(kineto_args),
    {"capacity", 0, 0, G_OPTION_ARG_STRING, STRATA_IMPORT_FIELD(kineto_args, capacity_text),
     "device capacity for --fidelity (default 80GiB: more than any of the traces' GPUs "
     "reserves, so the model never runs short)", "SIZE"},
    {"device", 0, 0, G_OPTION_ARG_STRING, STRATA_IMPORT_FIELD(kineto_args, device_text),
     "which GPU to import (default: the one with the most memory events)", "N"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

const strata_importer strata_importer_kineto = {
    .cmd = "import kineto",
    .parameter_string = "TRACE.json[.gz] - import a PyTorch profiler trace",
    .summary =
        "Reads a Chrome trace written by torch.profiler with profile_memory=True (plain\n"
        "or gzip, streamed: memory does not grow with the file) and writes a strata trace:\n"
        "a setup part that rebuilds the memory reserved and allocated before the first\n"
        "event, then the GPU's [memory] events as allocs and frees, its kernels and\n"
        "memsets as computes with time= their measured duration, and its memcpys as\n"
        "copies between staging buffers, with stream= and note=corr.N.\n"
        "See docs/kineto-import.md.",
    .args_usage = "one TRACE.json[.gz]",
    .input_name = "TRACE.json",
    .convert = kineto_convert,
    .args_size = sizeof(kineto_args),
    .options = kineto_options,
    .quiet = true,
};
