/*
 * cmd_import_jax.c: `strata import jax-profile`, a jax.profiler trace
 * (Perfetto/Chrome JSON, TensorBoard *.trace.json.gz, or XProf's
 * *.xplane.pb) into a strata trace.
 *
 *   strata import jax-profile PROFILE.{json[.gz],xplane.pb} [-o OUT.trace] [--device N]
 *
 * The conversion is import/jax_profile.h; this file keeps the options, the
 * trace's header comment and the summary printed on standard error.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "import/jax_profile.h"

typedef struct jax_args {
    strata_import_common c;
    char *device_text;
} jax_args;

static bool jax_convert(strata_job *job, const char *path, strata_outfile **out, const void *args, GError **err)
{
    const jax_args *a = args;
    int device = STRATA_JAX_DEVICE_AUTO;
    if (a->device_text) {
        char *end = NULL;
        guint64 n = g_ascii_strtoull(a->device_text, &end, 10);
        /* digits first: strtoull took -18446744073709551615 as 1 */
        if (!g_ascii_isdigit(a->device_text[0]) || *end || n >= 1u << 20) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "--device: expected a device number below 1048576, got '%s'", a->device_text);
            return false;
        }
        device = (int)n;
    }
    strata_jax_profile_summary s;
    strata_job_doing(job, "importing %s", path);
    strata_source *src = strata_jax_profile_import(path, device, &s, err);
    if (src == NULL)
        return false;
    char *base = g_path_get_basename(path);
    char *comment = g_strdup_printf("imported by strata import jax-profile from %s (device %d of %u): %"
                                    G_GUINT64_FORMAT " XLA ops at their measured durations",
                                    base, s.device, s.n_devices, s.n_ops);
    bool ok = strata_job_commit_trace(job, out, src, comment, err) >= 0;
    g_free(comment);
    strata_source_free(src);
    if (ok)
        fprintf(stderr,
                "strata import jax-profile: %s: %" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT
                " XLA ops on %u devices; device %d: %" G_GUINT64_FORMAT " ops (%" G_GUINT64_FORMAT
                " copies, %" G_GUINT64_FORMAT " collectives; %" G_GUINT64_FORMAT
                " enclosing ops left out), busy %.3f us of a %.3f us span\n",
                base, s.n_events, s.n_xla_ops, s.n_devices, s.device, s.n_ops, s.n_copies, s.n_collectives,
                s.n_enclosing, s.busy_s * 1e6, s.span_s * 1e6);
    if (ok && s.n_unknown > 0) /* a newer schema: read past, never silent */
        fprintf(stderr, "strata import jax-profile: %s: read past %" G_GUINT64_FORMAT
                " field%s this reader does not know (a newer xplane.proto); the first: %s\n",
                base, s.n_unknown, s.n_unknown == 1 ? "" : "s", s.unknown_first);
    g_free(base);
    return ok;
}

static const GOptionEntry jax_options[] = {
    {"device", 0, 0, G_OPTION_ARG_STRING, STRATA_IMPORT_FIELD(jax_args, device_text),
     "which device's XLA ops to import (default: the lowest device that ran any)", "N"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

const strata_importer strata_importer_jax_profile = {
    .cmd = "import jax-profile",
    .parameter_string = "PROFILE.json[.gz]|PROFILE.xplane.pb - import a jax.profiler trace",
    .summary = "Reads the trace jax.profiler writes (create_perfetto_trace=True's perfetto_trace.json.gz,\n"
               "or TensorBoard's HOST.trace.json.gz, plain or gzip, streamed; or XProf's HOST.xplane.pb,\n"
               "any file named *.pb) and writes one device's XLA ops as computes with time= their\n"
               "measured durations and at= their start. See docs/jax.md.",
    .args_usage = "one PROFILE.json[.gz] or PROFILE.xplane.pb",
    .input_name = "PROFILE.json",
    .convert = jax_convert,
    .args_size = sizeof(jax_args),
    .options = jax_options,
    .quiet = true,
};
