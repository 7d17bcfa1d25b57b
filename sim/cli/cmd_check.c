/*
 * cmd_check.c: `strata check --trace T [--hw HW.ini]`.
 *
 * Reads a trace through the binder (bind/bind.h): the semantic checker,
 * and with --hw the hardware model, so that every memory and compute unit
 * the trace names exists in it and every copy has a route, exactly as
 * `strata run` resolves them. Nothing is simulated. Prints counts of ops by kind, buffers,
 * streams and events, and the peak of live bytes per memory (the sum of the
 * sizes of live buffers, before any allocator overhead). Exit 0 when the
 * trace is good, 2 with "FILE:LINE: ..." otherwise.
 *
 * Invariant: one pass over the trace, state bounded by what is live at once.
 */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/job.h"
#include "core/error.h"
#include "core/units.h"
#include "hw/hw.h"
#include "bind/bind.h"
#include "runspec/runspec.h"
#include "kernel/kernel.h"

typedef struct memory_use {
    uint64_t live;
    uint64_t peak;
    uint64_t buffers;
    bool seen;
} memory_use;

typedef struct check_ctx {
    const char *trace_path;
    strata_run_spec *spec;      /* the trace, expanded over the devices of --hw */
    const strata_hw *hw;        /* the spec's; NULL without --hw */
    strata_binder *binder;      /* resolves memories, units and routes (against hw when given) */
    GArray *use;                /* memory_use, by memory index */
    GArray *memory_order;       /* uint32_t memory indices in order of first alloc */
    uint64_t by_kind[STRATA_OP__COUNT];
    const char *explain;        /* --explain LABEL: the kernel ops it names ("*": every one) */
    uint64_t explained;         /* how many it explained */
} check_ctx;

/* --explain: why a kernel op takes its time on its unit (models/kernel). */
static void explain_op(check_ctx *ctx, const strata_bound_op *op)
{
    const strata_op *in = op->op;
    strata_kernel_problem p;
    const strata_kernel_model *k = strata_kernel_problem_of(in, op->dtype, op->bytes, &p);
    if (!ctx->explain || !ctx->hw || op->kind != STRATA_OP_COMPUTE || !k || op->unit == STRATA_BIND_NONE ||
        (strcmp(ctx->explain, "*") != 0 && strcmp(ctx->explain, in->name) != 0))
        return;
    strata_kernel_cost c;
    strata_kernel_cost_of(k, ctx->hw, op->unit, &p, &c);
    ctx->explained++;
    printf("%s:%" G_GUINT64_FORMAT ": compute %s kernel=%s on unit %s%s\n", ctx->trace_path, op->line, in->name,
           k->name, strata_hw_compute(ctx->hw, op->unit)->name, in->has_time ? " (time= given: the kernel is not used)" : "");
    strata_kernel_cost_print(stdout, &c, "  ");
}

static memory_use *use_of(check_ctx *ctx, uint32_t memory)
{
    if (memory >= ctx->use->len)
        g_array_set_size(ctx->use, memory + 1);
    memory_use *u = &g_array_index(ctx->use, memory_use, memory);
    if (!u->seen) {
        u->seen = true;
        g_array_append_val(ctx->memory_order, memory);
    }
    return u;
}

static bool check_trace(check_ctx *ctx, const char *hw_path, GError **err)
{
    /* The program as each device runs it. */
    strata_run_spec_options spec_opt = {.hw_path = hw_path, .trace_path = ctx->trace_path, .expand_spmd = true};
    if (!(ctx->spec = strata_run_spec_new(&spec_opt, err)))
        return false;
    ctx->hw = strata_run_spec_hw(ctx->spec);
    /* Without --hw, unnamed allocs are counted under "(default)". */
    strata_bind_options opt = {.hw = ctx->hw, .default_memory = "(default)", .allow_spmd = true};
    ctx->binder = strata_binder_new(strata_run_spec_source(ctx->spec), &opt);
    const strata_bound_op *op;
    int got;
    while ((got = strata_binder_next(ctx->binder, &op, err)) == 1) {
        ctx->by_kind[op->kind]++;
        explain_op(ctx, op);
        if (op->kind == STRATA_OP_ALLOC) {
            memory_use *u = use_of(ctx, op->memory);
            u->live += op->bytes;
            u->buffers++;
            if (u->live > u->peak)
                u->peak = u->live;
        } else if (op->kind == STRATA_OP_FREE) {
            use_of(ctx, op->memory)->live -= op->bytes;
        }
    }
    return got == 0;
}

static void print_report(const check_ctx *ctx)
{
    const strata_checker *c = strata_binder_checker(ctx->binder);
    printf("trace %s: ok\n", ctx->trace_path);
    printf("  ops       %" G_GUINT64_FORMAT " (", strata_checker_op_count(c));
    bool first = true;
    for (unsigned k = 0; k < STRATA_OP__COUNT; k++) {
        if (k == STRATA_OP_OPTION || (strata_op_kind_is_collective((strata_op_kind)k) && ctx->by_kind[k] == 0))
            continue;
        printf("%s%s %" G_GUINT64_FORMAT, first ? "" : ", ", strata_op_kind_name((strata_op_kind)k), ctx->by_kind[k]);
        first = false;
    }
    printf(")\n");
    printf("  options   %u\n", strata_checker_option_keys(c)->len);
    printf("  buffers   %" G_GUINT64_FORMAT " allocated\n", strata_checker_buffer_count(c));
    printf("  streams   %u (", strata_checker_stream_count(c));
    for (uint32_t i = 0; i < strata_checker_stream_count(c); i++)
        printf("%s%s", i ? ", " : "", strata_checker_stream_name(c, i));
    printf(")\n");
    printf("  events    %u\n", strata_checker_event_count(c));
    printf("  peak live bytes per memory:\n");
    for (guint i = 0; i < ctx->memory_order->len; i++) {
        uint32_t memory = g_array_index(ctx->memory_order, uint32_t, i);
        const char *name = strata_binder_memory_name(ctx->binder, memory);
        const memory_use *u = &g_array_index(ctx->use, memory_use, memory);
        char *human = strata_format_size(u->peak);
        printf("    %-12s %12s  (%" G_GUINT64_FORMAT " B, %" G_GUINT64_FORMAT " buffers)", name, human, u->peak,
               u->buffers);
        if (ctx->hw) {
            const strata_memory_spec *m = strata_hw_memory(ctx->hw, memory);
            char *cap = strata_format_size(m->capacity);
            printf("  of %s%s", cap, u->peak > m->capacity ? "  (exceeds capacity: the run will be out of memory)" : "");
            g_free(cap);
        }
        printf("\n");
        g_free(human);
    }
    if (ctx->hw)
        printf("hardware %s (%s): ok, %u memories, %u links, %u compute units\n", strata_hw_origin(ctx->hw),
               strata_hw_name(ctx->hw), strata_hw_memory_count(ctx->hw), strata_hw_link_count(ctx->hw),
               strata_hw_compute_count(ctx->hw));
}

int strata_cmd_check(int argc, char **argv)
{
    char *trace_path = NULL, *hw_path = NULL, *explain = NULL;
    GOptionEntry entries[] = {
        {"explain", 0, 0, G_OPTION_ARG_STRING, &explain,
         "With --hw, print why each compute op labelled LABEL (* for every one) that names a kernel= takes its "
         "time: the kernel model's terms on its unit (traces/FORMAT.md, \"Kernels\")",
         "LABEL"},
        {"trace", 't', 0, G_OPTION_ARG_FILENAME, &trace_path,
         "Trace to check (strata-trace 1, see traces/FORMAT.md); '-' reads standard input", "T.trace"},
        {"hw", 0, 0, G_OPTION_ARG_FILENAME, &hw_path,
         "Also load this hardware model and check that every memory, compute unit and copy route the trace "
         "uses exists in it",
         "HW.ini"},
        G_OPTION_ENTRY_NULL,
    };
    strata_job *job = strata_job_new(
        "check", "- check a trace (and a hardware model) without running it", NULL,
        "Reads the trace once, checks its syntax and its semantics (buffer names live, copies that fit,\n"
        "waits on recorded events, options first) and prints op, buffer, stream and event counts and\n"
        "the peak of live bytes per memory (sum of live buffer sizes, no allocator overhead).\n"
        "Exit status: 0 the trace is good; 2 bad input, with FILE:LINE and what was expected.\n",
        entries);
    GError *err = NULL;
    int status = STRATA_EXIT_USAGE;
    if (!strata_job_parse(job, &argc, &argv, 0, 0, NULL))
        goto out;
    if (!trace_path) {
        err = g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT, "--trace is required (see 'strata check --help')");
        goto out;
    }
    if (!strata_job_input(job, "--trace", trace_path, &err) || !strata_job_input_hw(job, "--hw", hw_path, &err))
        goto out;
    if (explain && (!*explain || !hw_path)) { /* without --hw it explained nothing, at exit 0 */
        err = g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT, "--explain: expected %s, got %s", !*explain
                          ? "a compute op's label (or * for every one)" : "--hw HW.ini, whose units it explains the "
                          "kernels' times on", !*explain ? "''" : "no --hw");
        goto out;
    }
    check_ctx ctx = {.trace_path = trace_path, .explain = explain};
    ctx.use = g_array_new(FALSE, TRUE, sizeof(memory_use));
    ctx.memory_order = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    strata_job_doing(job, "checking %s", trace_path);
    bool checked = check_trace(&ctx, hw_path, &err);
    if (checked && explain && ctx.explained == 0) { /* a label that names no kernel op (a typo): nothing, exit 0 */
        err = g_error_new(STRATA_ERROR, STRATA_ERROR_INPUT, "--explain %s: expected %s that names a kernel=, found "
                          "none in %s", explain, strcmp(explain, "*") == 0 ? "a compute op" : "the label of a compute op",
                          trace_path);
        checked = false;
    }
    if (checked) {
        print_report(&ctx);
        status = STRATA_EXIT_OK;
    }
    strata_binder_free(ctx.binder);
    strata_run_spec_free(ctx.spec);
    g_array_free(ctx.memory_order, TRUE);
    g_array_free(ctx.use, TRUE);
out:
    status = strata_job_end(job, status, err);
    g_free(trace_path);
    g_free(hw_path);
    g_free(explain);
    return status;
}
