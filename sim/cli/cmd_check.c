/*
 * cmd_check.c: `strata check --trace T [--hw HW.ini]`.
 *
 * Reads a trace and runs the semantic checker over it (trace/check.h), and
 * with --hw loads the hardware model and checks that every memory and
 * compute unit the trace names exists in it and that every copy has a
 * route. Nothing is simulated. Prints counts of ops by kind, buffers,
 * streams and events, and the peak of live bytes per memory (the sum of the
 * sizes of live buffers, before any allocator overhead). Exit 0 when the
 * trace is good, 2 with "FILE:LINE: ..." otherwise.
 *
 * Invariant: one pass over the trace, state bounded by what is live at once.
 */
#include <stdio.h>
#include <string.h>
#include "cli/cli.h"
#include "core/error.h"
#include "core/units.h"
#include "hw/hw.h"
#include "trace/check.h"
#include "trace/reader.h"

typedef struct memory_use {
    uint64_t live;
    uint64_t peak;
    uint64_t buffers;
} memory_use;

typedef struct check_ctx {
    const char *trace_path;
    strata_hw *hw;              /* NULL without --hw */
    strata_checker *checker;
    GHashTable *use;            /* memory name (owned) -> memory_use (owned) */
    GPtrArray *memory_order;    /* names in order of first use, borrowed from `use` */
    uint64_t by_kind[STRATA_OP__COUNT];
} check_ctx;

/* The memory name a buffer lives in: the trace's, else the hw default, else "(default)". */
static const char *memory_key(const check_ctx *ctx, const char *memory)
{
    if (memory)
        return memory;
    if (ctx->hw)
        return strata_hw_memory(ctx->hw, strata_hw_default_memory(ctx->hw))->name;
    return "(default)";
}

static memory_use *use_of(check_ctx *ctx, const char *name)
{
    memory_use *u = g_hash_table_lookup(ctx->use, name);
    if (!u) {
        char *key = g_strdup(name);
        u = g_new0(memory_use, 1);
        g_hash_table_insert(ctx->use, key, u);
        g_ptr_array_add(ctx->memory_order, key);
    }
    return u;
}

static char *known_memories(const strata_hw *hw)
{
    GString *s = g_string_new(NULL);
    for (uint32_t i = 0; i < strata_hw_memory_count(hw); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", strata_hw_memory(hw, i)->name);
    return g_string_free(s, FALSE);
}

static char *known_units(const strata_hw *hw)
{
    GString *s = g_string_new(NULL);
    for (uint32_t i = 0; i < strata_hw_compute_count(hw); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", strata_hw_compute(hw, i)->name);
    return g_string_free(s, FALSE);
}

/* With --hw: the names the op uses exist in the model, and copies have a route. */
static bool check_against_hw(const check_ctx *ctx, const strata_op *op, const strata_op_refs *refs,
                             const char *origin, GError **err)
{
    const strata_hw *hw = ctx->hw;
    if ((op->kind == STRATA_OP_ALLOC || op->kind == STRATA_OP_RELEASE) && op->memory &&
        strata_hw_memory_index(hw, op->memory) < 0) {
        char *known = known_memories(hw);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%" G_GUINT64_FORMAT ": expected a memory of %s (one of %s), got '%s'", origin, op->line,
                    strata_hw_origin(hw), known, op->memory);
        g_free(known);
        return false;
    }
    if (op->kind == STRATA_OP_COMPUTE && op->memory && strata_hw_compute_index(hw, op->memory) < 0) {
        char *known = known_units(hw);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%" G_GUINT64_FORMAT ": expected a compute unit of %s (one of %s), got '%s'", origin,
                    op->line, strata_hw_origin(hw), known, op->memory);
        g_free(known);
        return false;
    }
    if (op->kind == STRATA_OP_COMPUTE && !op->memory && strata_hw_compute_count(hw) == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%" G_GUINT64_FORMAT ": expected %s to declare a [compute NAME] unit for compute '%s'",
                    origin, op->line, strata_hw_origin(hw), op->name);
        return false;
    }
    if (op->kind == STRATA_OP_COPY) {
        const char *dst_mem = NULL, *src_mem = NULL;
        strata_checker_buffer(ctx->checker, refs->buf, NULL, &dst_mem);
        strata_checker_buffer(ctx->checker, refs->src, NULL, &src_mem);
        int from = strata_hw_memory_index(hw, src_mem), to = strata_hw_memory_index(hw, dst_mem);
        const strata_hop *hops;
        uint32_t n_hops;
        GError *route_err = NULL;
        if (from >= 0 && to >= 0 && !strata_hw_route(hw, (uint32_t)from, (uint32_t)to, &hops, &n_hops, &route_err)) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s:%" G_GUINT64_FORMAT ": copy %s <- %s: %s", origin,
                        op->line, op->name, op->src, route_err->message);
            g_error_free(route_err);
            return false;
        }
    }
    return true;
}

static bool check_trace(check_ctx *ctx, GError **err)
{
    strata_source *src = strata_trace_open(ctx->trace_path, err);
    if (!src)
        return false;
    const char *origin = strata_source_origin(src);
    ctx->checker = strata_checker_new(origin);
    const strata_op *op;
    strata_op_refs refs;
    int got;
    bool ok = true;
    while (ok && (got = strata_source_next(src, &op, err)) == 1) {
        if (!strata_checker_feed(ctx->checker, op, &refs, err)) {
            ok = false;
            break;
        }
        ctx->by_kind[op->kind]++;
        if (ctx->hw && !check_against_hw(ctx, op, &refs, origin, err)) {
            ok = false;
            break;
        }
        if (op->kind == STRATA_OP_ALLOC) {
            memory_use *u = use_of(ctx, memory_key(ctx, op->memory));
            u->live += op->size;
            u->buffers++;
            if (u->live > u->peak)
                u->peak = u->live;
        } else if (op->kind == STRATA_OP_FREE) {
            use_of(ctx, memory_key(ctx, refs.memory))->live -= refs.bytes;
        }
    }
    if (ok && got < 0)
        ok = false;
    strata_source_free(src);
    return ok;
}

static void print_report(const check_ctx *ctx)
{
    const strata_checker *c = ctx->checker;
    printf("trace %s: ok\n", ctx->trace_path);
    printf("  ops       %" G_GUINT64_FORMAT " (", strata_checker_op_count(c));
    bool first = true;
    for (unsigned k = 0; k < STRATA_OP__COUNT; k++) {
        if (k == STRATA_OP_OPTION)
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
        const char *name = g_ptr_array_index(ctx->memory_order, i);
        const memory_use *u = g_hash_table_lookup(ctx->use, name);
        char *human = strata_format_size(u->peak);
        printf("    %-12s %12s  (%" G_GUINT64_FORMAT " B, %" G_GUINT64_FORMAT " buffers)", name, human, u->peak,
               u->buffers);
        if (ctx->hw) {
            const strata_memory_spec *m = strata_hw_memory(ctx->hw, (uint32_t)strata_hw_memory_index(ctx->hw, name));
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
    char *trace_path = NULL, *hw_path = NULL;
    GOptionEntry entries[] = {
        {"trace", 't', 0, G_OPTION_ARG_FILENAME, &trace_path,
         "Trace to check (strata-trace 1, see traces/FORMAT.md); '-' reads standard input", "T.trace"},
        {"hw", 0, 0, G_OPTION_ARG_FILENAME, &hw_path,
         "Also load this hardware model and check that every memory, compute unit and copy route the trace "
         "uses exists in it",
         "HW.ini"},
        G_OPTION_ENTRY_NULL,
    };
    GOptionContext *octx = g_option_context_new("- check a trace (and a hardware model) without running it");
    g_option_context_add_main_entries(octx, entries, NULL);
    g_option_context_set_description(
        octx, "Reads the trace once, checks its syntax and its semantics (buffer names live, copies that fit,\n"
              "waits on recorded events, options first) and prints op, buffer, stream and event counts and\n"
              "the peak of live bytes per memory (sum of live buffer sizes, no allocator overhead).\n"
              "Exit status: 0 the trace is good; 2 bad input, with FILE:LINE and what was expected.\n");
    int status = STRATA_EXIT_OK;
    if (!strata_cli_parse(octx, &argc, &argv, "check", &status))
        goto out;
    if (!strata_cli_expect_no_args("check", argc, argv)) {
        status = STRATA_EXIT_USAGE;
        goto out;
    }
    if (!trace_path) {
        fprintf(stderr, "strata check: --trace is required\nRun 'strata check --help' for usage.\n");
        status = STRATA_EXIT_USAGE;
        goto out;
    }
    check_ctx ctx = {.trace_path = trace_path};
    ctx.use = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    ctx.memory_order = g_ptr_array_new();
    GError *err = NULL;
    if (hw_path && !(ctx.hw = strata_hw_load(hw_path, NULL, &err)))
        status = strata_cli_fail("check", err);
    else if (!check_trace(&ctx, &err))
        status = strata_cli_fail("check", err);
    else
        print_report(&ctx);
    strata_checker_free(ctx.checker);
    strata_hw_free(ctx.hw);
    g_ptr_array_free(ctx.memory_order, TRUE);
    g_hash_table_destroy(ctx.use);
out:
    g_option_context_free(octx);
    g_free(trace_path);
    g_free(hw_path);
    return status;
}
