/*
 * cmd_alloc.c: `strata alloc`, the fast path: one trace replayed through
 * one allocator for one memory, untimed, without SimGrid (sim/replay).
 *
 *   strata alloc --trace T --allocator NAME[:k=v,...] --capacity SIZE
 *                [--alignment N] [--memory NAME] [--policy P]... [--json OUT]
 *                [--min-capacity] [--check] [--quiet] [--device N]
 *
 * An SPMD trace (option mesh=, or ops with device=: an imported sharded
 * program) replays one device's program (spmd/spmd_device.h): --device N,
 * by default the busiest (the highest peak of live bytes), its
 * collectives as computes on their own buffers.
 *
 * Capacity rule: --capacity, else the trace's `option allocator.device_limit`
 * (the memory a PyTorch process could get, inferred by `strata import
 * torch`), else --min-capacity is required; then the smallest capacity (a multiple of --alignment, or of 256 bytes)
 * at which the trace completes is searched (doubling, then bisection),
 * printed, and the results are those of a replay at that capacity.
 * Exit status: 0 the trace completed, 1 out of memory (results written),
 * 2 bad input or usage.
 *
 * Invariant: the --json path is checked before any work starts, and is
 * written complete or not at all (core/outfile.h).
 */
#include <stdio.h>
#include <string.h>
#include "alloc/alloc.h"
#include "bind/trace_options.h"
#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "core/progress.h"
#include "core/units.h"
#include "replay/replay.h"
#include "runspec/runspec.h"
#include "spmd/spmd_device.h"

typedef struct alloc_args {
    char *trace, *allocator, *capacity, *alignment, *memory, *json, *device;
    char **policies;
    gboolean min_capacity, check, quiet;
} alloc_args;

static void alloc_args_clear(alloc_args *a)
{
    g_free(a->trace);
    g_free(a->allocator);
    g_free(a->capacity);
    g_free(a->alignment);
    g_free(a->memory);
    g_free(a->json);
    g_free(a->device);
    g_strfreev(a->policies);
}

/* The allocators and their parameters, for --help. */
static char *alloc_describe_allocators(void)
{
    GString *s = g_string_new("Allocators (--allocator NAME[:key=value,...]):\n");
    const strata_alloc_type *const *types = strata_alloc_types();
    for (size_t i = 0; types[i]; i++) {
        g_string_append_printf(s, "  %s: %s\n", types[i]->name, types[i]->summary);
        char *params = strata_params_describe(types[i]->params, "      ");
        g_string_append(s, params);
        g_free(params);
    }
    g_string_append(s,
        "\nTrace lines 'option allocator.KEY=VALUE' set KEY when the allocator declares it\n"
        "(a KEY no allocator declares, or a value it refuses, is bad input at its line);\n"
        "values given with --allocator win.\n"
        "Unnamed allocs belong to memory '" STRATA_REPLAY_DEFAULT_MEMORY "'.\n"
        "Exit status: 0 completed, 1 out of memory (results still written), 2 bad input.\n");
    return g_string_free(s, FALSE);
}

static void alloc_print_summary(const strata_results *r, const strata_replay_summary *s,
                                const char *spec, uint64_t capacity, FILE *out)
{
    char *cap = strata_format_size(capacity);
    char *pa = strata_format_size(s->peak_allocated);
    char *pr = strata_format_size(s->peak_reserved);
    char *w = strata_format_size(s->internal_waste_at_peak);
    fprintf(out, "allocator        %s\n", spec);
    fprintf(out, "capacity         %s (%" G_GUINT64_FORMAT " B)\n", cap, capacity);
    fprintf(out, "status           %s after %" G_GUINT64_FORMAT " ops\n", s->oom ? "oom" : "ok", s->ops);
    fprintf(out, "peak allocated   %s (%" G_GUINT64_FORMAT " B)\n", pa, s->peak_allocated);
    fprintf(out, "peak reserved    %s (%" G_GUINT64_FORMAT " B)\n", pr, s->peak_reserved);
    fprintf(out, "fragmentation    %.4f (peak of 1 - largest free / free reserved)\n",
            s->fragmentation_peak);
    fprintf(out, "rounding waste   %s at the allocated peak\n", w);
    if (s->planned_height || s->plan_lower_bound)
        fprintf(out, "planned height   %" G_GUINT64_FORMAT " B, lower bound %" G_GUINT64_FORMAT
                " B (x%.4f)\n", s->planned_height, s->plan_lower_bound,
                s->plan_lower_bound ? (double)s->planned_height / (double)s->plan_lower_bound : 1.0);
    strata_results_print_jax(r, out);
    if (r->oom) {
        const strata_oom_info *o = &r->oom_info;
        fprintf(out, "out of memory    at op %" G_GUINT64_FORMAT " (line %" G_GUINT64_FORMAT
                "): %s of %" G_GUINT64_FORMAT " B, free %" G_GUINT64_FORMAT
                " B, largest free %" G_GUINT64_FORMAT " B\n", o->op_index, o->line,
                o->buffer ? o->buffer : "?", o->requested_bytes, o->free_bytes,
                o->largest_free_bytes);
    }
    g_free(cap);
    g_free(pa);
    g_free(pr);
    g_free(w);
}

/* --alignment within the capacity it rounds requests up to: an alignment
 * above it rounds every request past it (--alignment 2^63 with -c 1GiB ran
 * to an out-of-memory at op 0, exit 1). The capacity is --capacity's, the
 * trace's device_limit, or under --min-capacity the search's ceiling, 2^62
 * (strata_replay_min_capacity). */
static bool alignment_within(const alloc_args *a, uint64_t alignment, uint64_t capacity, const char *what,
                             GError **err)
{
    if (!a->alignment || alignment <= capacity)
        return true;
    char *cap = strata_format_size(capacity);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "--alignment: expected a power of two from 1 B to %s (%s, %" G_GUINT64_FORMAT " B), got '%s'", cap,
                what, capacity, a->alignment);
    g_free(cap);
    return false;
}

/* The numbers and the allocator spec, checked before anything is read. */
static bool alloc_check_args(const alloc_args *a, uint64_t *capacity, uint64_t *alignment, GError **err)
{
    if (!a->trace) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "expected --trace T.trace");
        return false;
    }
    if (!a->allocator) {
        char *known = strata_alloc_type_names();
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "expected --allocator NAME (known: %s)", known);
        g_free(known);
        return false;
    }
    if (a->memory && !*a->memory) { /* said "allocates nothing in memory ''" once the whole trace was read */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "--memory: expected a memory name as the trace's allocs name it (such as hbm), got ''");
        return false;
    }
    if (a->capacity && a->min_capacity) { /* the search starts from one step: --capacity would be ignored */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "--capacity %s: expected --capacity or --min-capacity (which searches the capacity), not both",
                    a->capacity);
        return false;
    }
    if (a->capacity && !strata_parse_size_above_zero(a->capacity, capacity, err)) { /* 0 ran to an out-of-memory */
        g_prefix_error(err, "--capacity: ");
        return false;
    }
    if (a->alignment) {
        if (!strata_parse_size(a->alignment, alignment, err)) {
            g_prefix_error(err, "--alignment: ");
            return false;
        }
        if (*alignment == 0 || (*alignment & (*alignment - 1)) != 0) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--alignment: expected a power of two, got '%s'",
                        a->alignment);
            return false;
        }
        if (a->capacity && !alignment_within(a, *alignment, *capacity, "the capacity, --capacity", err))
            return false;
        if (a->min_capacity && !alignment_within(a, *alignment, UINT64_C(1) << 62,
                                                 "the ceiling of --min-capacity's search", err))
            return false;
    }
    strata_allocator *probe = strata_allocator_new(a->allocator, *capacity, *alignment, err);
    strata_allocator_free(probe);
    return probe != NULL;
}

/* The trace's allocator.device_limit as the capacity, or an error asking
 * for --capacity. */
static bool trace_device_limit(strata_source *src, uint64_t *capacity, GError **err)
{
    const strata_op *op;
    int rc = 0;
    bool found = false;
    while (!found && (rc = strata_source_next(src, &op, err)) == 1 && op->kind == STRATA_OP_OPTION) {
        /* a bad value is refused on its line (bind/trace_options.h), not taken as absent */
        if (!strata_trace_option_check(op, strata_source_origin(src), NULL, err))
            return false;
        found = strcmp(op->name, "allocator.device_limit") == 0 &&
                strata_parse_size(op->value, capacity, NULL) && *capacity > 0;
    }
    if (rc < 0 || !strata_source_rewind(src, err))
        return false;
    if (!found)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "expected --capacity SIZE (or --min-capacity to search for it)");
    return found;
}

/* --device N as a number, or STRATA_SPMD_BUSIEST when absent. */
static bool parse_device(const char *text, uint32_t *device, GError **err)
{
    *device = STRATA_SPMD_BUSIEST;
    if (text == NULL)
        return true;
    guint64 v;
    if (!g_ascii_string_to_unsigned(text, 10, 0, STRATA_SPMD_BUSIEST - 1, &v, NULL)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--device: expected a device number such as 0 or 3, got '%s'",
                    text);
        return false;
    }
    *device = (uint32_t)v;
    return true;
}

/* The source to replay: one device's program of an SPMD trace, said on
 * the human output; src's ops unchanged otherwise (src borrowed). */
static strata_source *device_program(strata_job *job, strata_source *src, const char *device_arg,
                                     strata_spmd_device_info *info, GError **err)
{
    uint32_t device;
    if (!parse_device(device_arg, &device, err))
        return NULL;
    strata_source *one = strata_spmd_device(src, device, info, err);
    if (one && info->devices > 0) {
        bool alike = true;
        for (uint32_t i = 1; i < info->devices; i++)
            alike &= info->peak_bytes[i] == info->peak_bytes[0];
        fprintf(strata_job_human(job),
                "device           %u of %u (%s; its program's live peak %" G_GUINT64_FORMAT
                " B; collectives as computes on their buffers)\n", info->device, info->devices,
                device_arg ? "--device" : alike ? "the busiest: every device's program alike" : "the busiest",
                info->peak_bytes[info->device]);
    }
    return one;
}

/* Replays (after the capacity search with --min-capacity) and reports. */
static bool alloc_replay(strata_job *job, const alloc_args *a, strata_source *src, uint64_t capacity,
                         uint64_t alignment, strata_results **results, strata_replay_summary *sum, GError **err)
{
    strata_replay_options opt = {
        .allocator = a->allocator,
        .capacity = capacity,
        .alignment = alignment,
        .memory = a->memory,
        .ignore_device_limit = true, /* the capacity is --capacity or that limit */
        .progress = strata_progress_stream(a->quiet),
#ifndef NDEBUG
        .check_each_op = true,
#else
        .check_each_op = a->check,
#endif
    };
    strata_job_doing(job, "replaying %s", a->trace);
    if (a->min_capacity) {
        uint64_t found = 0;
        if (!strata_replay_min_capacity(src, &opt, alignment ? alignment : 256, &found, err))
            return false;
        opt.capacity = found;
    }
    if (!strata_replay_run(src, &opt, results, sum, err))
        return false;
    FILE *human = strata_job_human(job);
    if (a->min_capacity) {
        strata_results_set_extra(*results, "min_capacity_bytes",
                                 json_node_init_int(json_node_alloc(), (gint64)opt.capacity));
        fprintf(human, "min capacity     %" G_GUINT64_FORMAT " B\n", opt.capacity);
    }
    const char *spec = NULL;
    if ((*results)->memories && (*results)->memories->len > 0)
        spec = g_array_index((*results)->memories, strata_memory_result, 0).allocator;
    alloc_print_summary(*results, sum, spec ? spec : a->allocator, opt.capacity, human);
    return true;
}

int strata_cmd_alloc(int argc, char **argv)
{
    alloc_args a = {0};
    GOptionEntry entries[] = {
        {"trace", 't', 0, G_OPTION_ARG_FILENAME, &a.trace, "trace to replay ('-': standard input)",
         "T.trace"},
        {"allocator", 'a', 0, G_OPTION_ARG_STRING, &a.allocator,
         "allocator and parameters, e.g. caching:max_split_size=200MiB (list below)",
         "NAME[:k=v,...]"},
        {"capacity", 'c', 0, G_OPTION_ARG_STRING, &a.capacity,
         "bytes of the memory, e.g. 16GiB (required unless --min-capacity or the trace's "
         "allocator.device_limit)", "SIZE"},
        {"alignment", 0, 0, G_OPTION_ARG_STRING, &a.alignment,
         "alignment in bytes, a power of two (default: the allocator's own; also the step of "
         "--min-capacity, 256 when unset)", "N"},
        {"memory", 'm', 0, G_OPTION_ARG_STRING, &a.memory,
         "memory to replay, for traces with several (default: " STRATA_REPLAY_DEFAULT_MEMORY
         ", which also holds unnamed allocs)", "NAME"},
        {"policy", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &a.policies,
         "rewrite the trace with a policy first (repeatable, applied in order)", "P"},
        {"json", 'j', 0, G_OPTION_ARG_FILENAME, &a.json, "write results JSON here ('-': standard output)",
         "OUT"},
        {"min-capacity", 0, 0, G_OPTION_ARG_NONE, &a.min_capacity,
         "search the smallest capacity at which the trace completes, print it, report that run",
         NULL},
        {"check", 0, 0, G_OPTION_ARG_NONE, &a.check,
         "check the allocator's invariants after every op (always on in debug builds)", NULL},
        {"check-allocators", 0, 0, G_OPTION_ARG_NONE, &a.check,
         "the same as --check (the name run, replay and validate use)", NULL},
        {"device", 0, 0, G_OPTION_ARG_STRING, &a.device,
         "of an SPMD trace (mesh= or device=), the device whose program to replay (default: the busiest)", "N"},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &a.quiet,
         "Do not print progress on standard error (a planner's best height and bound; shown only "
         "on a terminal)", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    char *desc = alloc_describe_allocators();
    strata_job *job = strata_job_new("alloc", "- replay a trace through one allocator (untimed)", "Replays the allocs, frees and releases of one memory through an allocator and reports\n"
        "peak allocated and reserved bytes, fragmentation and rounding waste. No timing.", desc, entries);
    int status = STRATA_EXIT_USAGE;
    GError *err = NULL;
    strata_outfile *json_out = NULL;
    strata_run_spec *spec = NULL; /* the trace and its policies; no hardware model */
    strata_source *one = NULL;    /* one device's program of spec's source (borrows it) */
    strata_results *results = NULL;
    strata_replay_summary sum;
    uint64_t capacity = 0, alignment = 0;

    if (!strata_job_parse(job, &argc, &argv, 0, 0, NULL) || !alloc_check_args(&a, &capacity, &alignment, &err))
        goto done;
    strata_run_spec_options spec_opt = {.trace_path = a.trace, .policies = (const char *const *)a.policies};
    if (!strata_job_input(job, "--trace", a.trace, &err) || !strata_job_output(job, "--json", a.json, &json_out, &err) ||
        !(spec = strata_run_spec_new(&spec_opt, &err)))
        goto done;
    strata_source *src = strata_run_spec_source(spec);
    if (!a.capacity && !a.min_capacity && (!trace_device_limit(src, &capacity, &err) ||
                                           !alignment_within(&a, alignment, capacity,
                                                             "the capacity, the trace's device_limit", &err)))
        goto done;
    strata_spmd_device_info dev;
    if (!(src = one = device_program(job, src, a.device, &dev, &err)))
        goto done;
    if (!alloc_replay(job, &a, src, capacity, alignment, &results, &sum, &err) ||
        !strata_job_commit_results(job, &json_out, results, &err))
        goto done;
    status = sum.oom ? STRATA_EXIT_OOM : STRATA_EXIT_OK;
done:
    status = strata_job_end(job, status, err);
    strata_results_free(results);
    strata_source_free(one);
    strata_run_spec_free(spec);
    g_free(desc);
    alloc_args_clear(&a);
    return status;
}
