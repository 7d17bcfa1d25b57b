/*
 * summary.c: the human summary that `strata run` prints: status and
 * makespan; per memory, peak allocated and reserved against capacity (with
 * percentages), the fragmentation peak and the average traffic through its
 * port, and what memory_analysis() would report for it (argument, output,
 * alias, temp and total bytes); per link, bytes and utilization
 * (busy / makespan); per stream, ops, busy and stall; per compute unit, busy
 * and flops; and the out-of-memory report when the run stopped on one.
 *
 * Invariants: reads only the results value (never a clock), so the same
 * results print the same text; columns are padded to the longest name.
 */
#include "results/results.h"
#include "results/collectives.h"
#include "results/mesh_groups.h"
#include "results/stages.h"
#include "core/units.h"
#include <string.h>

static double percent(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0.0;
}

/* Width of the widest name in an array of structs whose first field is a name. */
static int name_width(const GArray *a, int floor)
{
    int w = floor;
    for (guint i = 0; i < a->len; i++) {
        const char *name = *(const char *const *)(a->data + (size_t)i * g_array_get_element_size((GArray *)a));
        int len = (int)strlen(name);
        if (len > w)
            w = len;
    }
    return w;
}

static void print_memories(const strata_results *r, FILE *out)
{
    if (r->memories->len == 0)
        return;
    uint32_t shown = strata_results_shown_device(r);
    int w = name_width(r->memories, 6);
    fprintf(out, "\n%-*s  %-7s %-24s %-24s %-11s %-10s %-11s %s\n", w, "memory", "kind", "peak allocated",
            "peak reserved", "capacity", "frag.peak", "port avg", "allocator");
    for (guint i = 0; i < r->memories->len; i++) {
        const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        if (!strata_results_row_shown(r, shown, &m->place, m->kind ? m->kind : "device"))
            continue;
        char *alloc = strata_format_size(m->peak_allocated_bytes);
        char *res = strata_format_size(m->peak_reserved_bytes);
        char *cap = strata_format_size(m->capacity_bytes);
        char *a = g_strdup_printf("%s (%.1f%%)", alloc,
                                  percent((double)m->peak_allocated_bytes, (double)m->capacity_bytes));
        char *b = g_strdup_printf("%s (%.1f%%)", res,
                                  percent((double)m->peak_reserved_bytes, (double)m->capacity_bytes));
        char *util = strata_format_bandwidth(r->makespan_s > 0 ? (double)m->port_bytes / r->makespan_s : 0.0);
        fprintf(out, "%-*s  %-7s %-24s %-24s %-11s %-10.3f %-11s %s\n", w, m->name, m->kind ? m->kind : "",
                a, b, cap, m->fragmentation_peak, util, m->allocator ? m->allocator : "");
        g_free(util);
        g_free(a);
        g_free(b);
        g_free(alloc);
        g_free(res);
        g_free(cap);
    }
}

static void print_links(const strata_results *r, FILE *out)
{
    if (r->links->len == 0)
        return;
    uint32_t shown = strata_results_shown_device(r);
    int w = name_width(r->links, 4);
    fprintf(out, "\n%-*s  %-12s %-12s %s\n", w, "link", "bytes", "busy", "utilization");
    for (guint i = 0; i < r->links->len; i++) {
        const strata_link_result *l = &g_array_index(r->links, strata_link_result, i);
        if (!strata_results_row_shown(r, shown, &l->place, NULL))
            continue;
        char *bytes = strata_format_size(l->bytes);
        char *busy = strata_format_time(l->busy_s);
        fprintf(out, "%-*s  %-12s %-12s %.1f%%\n", w, l->name, bytes, busy,
                percent(l->busy_s, r->makespan_s));
        g_free(bytes);
        g_free(busy);
    }
}

static void print_streams(const strata_results *r, FILE *out)
{
    if (r->streams->len == 0)
        return;
    uint32_t shown = strata_results_shown_device(r);
    int w = name_width(r->streams, 6);
    fprintf(out, "\n%-*s  %-10s %-12s %s\n", w, "stream", "ops", "busy", "stall");
    for (guint i = 0; i < r->streams->len; i++) {
        const strata_stream_result *s = &g_array_index(r->streams, strata_stream_result, i);
        if (!strata_results_row_shown(r, shown, &s->place, NULL))
            continue;
        char *busy = strata_format_time(s->busy_s);
        char *stall = strata_format_time(s->stall_s);
        fprintf(out, "%-*s  %-10" G_GUINT64_FORMAT " %-12s %s\n", w, s->name, s->ops, busy, stall);
        g_free(busy);
        g_free(stall);
    }
}

/* An amount of work with a decimal prefix: "13.20 TFLOP", "0 FLOP". */
static char *format_flops(double flops)
{
    static const char *const prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
    size_t i = 0;
    while (flops >= 1000.0 && i + 1 < G_N_ELEMENTS(prefixes)) {
        flops /= 1000.0;
        i++;
    }
    return i == 0 ? g_strdup_printf("%.0f FLOP", flops) : g_strdup_printf("%.2f %sFLOP", flops, prefixes[i]);
}

static void print_compute(const strata_results *r, FILE *out)
{
    if (r->compute->len == 0)
        return;
    uint32_t shown = strata_results_shown_device(r);
    int w = name_width(r->compute, 7);
    fprintf(out, "\n%-*s  %-12s %-12s %s\n", w, "compute", "busy", "flops", "utilization");
    for (guint i = 0; i < r->compute->len; i++) {
        const strata_compute_result *c = &g_array_index(r->compute, strata_compute_result, i);
        if (!strata_results_row_shown(r, shown, &c->place, NULL))
            continue;
        char *busy = strata_format_time(c->busy_s);
        char *flops = format_flops(c->flops);
        fprintf(out, "%-*s  %-12s %-12s %.1f%%", w, c->name, busy, flops, percent(c->busy_s, r->makespan_s));
        if (c->clock_min > 0 && c->clock_min < 1) /* a power-limit rule lowered the unit's clock */
            fprintf(out, "  clock %.3f of peak (least %.3f)", c->clock_mean, c->clock_min);
        fputc('\n', out);
        g_free(busy);
        g_free(flops);
    }
}

void strata_results_print_jax(const strata_results *r, FILE *out)
{
    uint32_t shown = strata_results_shown_device(r);
    int w = name_width(r->memories, (int)strlen("memory_analysis"));
    bool header = false;
    for (guint i = 0; i < r->memories->len; i++) {
        const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        if (m->jax_total_bytes == 0 || !strata_results_row_shown(r, shown, &m->place, m->kind ? m->kind : "device"))
            continue;
        if (!header)
            fprintf(out, "\n%-*s  %-14s %-14s %-14s %-14s %s\n", w, "memory_analysis", "argument", "output",
                    "alias", "temp", "total (temp + argument + output - alias)");
        header = true;
        uint64_t v[5] = {m->argument_bytes, m->output_bytes, m->alias_bytes, m->temp_peak_bytes, m->jax_total_bytes};
        fprintf(out, "%-*s ", w, m->name);
        for (int k = 0; k < 5; k++) {
            char *text = strata_format_size(v[k]);
            fprintf(out, " %-14s", text);
            g_free(text);
        }
        fprintf(out, " (%" G_GUINT64_FORMAT " B)\n", m->jax_total_bytes);
    }
}

static void print_oom(const strata_results *r, FILE *out)
{
    const strata_oom_info *o = &r->oom_info;
    char *req = strata_format_size(o->requested_bytes);
    char *fr = strata_format_size(o->free_bytes);
    char *lf = strata_format_size(o->largest_free_bytes);
    fprintf(out,
            "\nOUT OF MEMORY at op %" G_GUINT64_FORMAT " (trace line %" G_GUINT64_FORMAT
            ") on stream %s:\n  alloc %s of %s (%" G_GUINT64_FORMAT " B) in %s: %s free"
            " (capacity - allocated), largest free block %s\n",
            o->op_index, o->line, o->stream ? o->stream : "?", o->buffer ? o->buffer : "?", req,
            o->requested_bytes, o->memory ? o->memory : "?", fr, lf);
    if (o->planned_bytes) {
        char *plan = strata_format_size(o->planned_bytes);
        fprintf(out, "  the allocator plans the whole program before it runs, and its plan is %s high (%" G_GUINT64_FORMAT
                " B): more than the memory's capacity, so no buffer the plan places past it can be allocated\n",
                plan, o->planned_bytes);
        g_free(plan);
    }
    g_free(req);
    g_free(fr);
    g_free(lf);
}

void strata_results_print_summary(const strata_results *r, FILE *out)
{
    char *makespan = strata_format_time(r->makespan_s);
    if (r->trace || r->hardware)
        fprintf(out, "%s on %s\n", r->trace ? r->trace : "(trace)", r->hardware ? r->hardware : "(hardware)");
    fprintf(out, "status    %s\n", r->oom ? "oom (the run stopped at an allocation that did not fit)" : "ok");
    fprintf(out, "makespan  %s (%.9f s), %" G_GUINT64_FORMAT " ops\n", makespan, r->makespan_s, r->ops);
    g_free(makespan);
    strata_results_print_devices(r, out);
    strata_results_print_groups(r, out);
    strata_results_print_stages(r, out);
    print_memories(r, out);
    strata_results_print_jax(r, out);
    print_links(r, out);
    print_streams(r, out);
    print_compute(r, out);
    if (r->oom)
        print_oom(r, out);
}
