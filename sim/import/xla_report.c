/*
 * xla_report.c: the side-by-side figures of `strata import xla` (contract
 * in xla_report.h).
 */
#include "import/xla_report.h"
#include <string.h>
#include "alloc/alloc.h"
#include "core/units.h"

#define XLA_REPORT_CAPACITY (UINT64_C(1) << 50)

/* The allocation's kind as XLA's header words it. */
static void allocation_kind(const xla_allocation *a, char *out, size_t n)
{
    const char *live_out = (a->flags & XLA_ALLOC_LIVE_OUT) ? ", maybe-live-out" : "";
    if (a->flags & XLA_ALLOC_PARAMETER)
        g_snprintf(out, n, "parameter %" G_GUINT64_FORMAT "%s", a->parameter, live_out);
    else if (a->flags & XLA_ALLOC_LIVE_OUT)
        g_snprintf(out, n, "maybe-live-out");
    else if ((a->flags & XLA_ALLOC_TEMP) && a->color)
        g_snprintf(out, n, "color %" G_GUINT64_FORMAT ", preallocated-temp", a->color);
    else if (a->flags & XLA_ALLOC_TEMP)
        g_snprintf(out, n, "preallocated-temp");
    else if (a->flags & XLA_ALLOC_CONSTANT)
        g_snprintf(out, n, "constant");
    else if (a->flags & XLA_ALLOC_THREAD_LOCAL)
        g_snprintf(out, n, "thread-local");
    else
        g_snprintf(out, n, "color %" G_GUINT64_FORMAT, a->color);
}

/* Keeps a among the largest allocations (insertion into a short sorted list). */
static void note_top(strata_xla_figures *f, const xla_allocation *a)
{
    uint32_t at = f->n_top;
    while (at > 0 && f->top[at - 1].size < a->size)
        at--;
    if (at >= STRATA_XLA_TOP_ALLOCATIONS)
        return;
    uint32_t last = f->n_top < STRATA_XLA_TOP_ALLOCATIONS ? f->n_top : STRATA_XLA_TOP_ALLOCATIONS - 1;
    memmove(&f->top[at + 1], &f->top[at], (last - at) * sizeof f->top[0]);
    f->top[at].index = a->index;
    f->top[at].size = a->size;
    allocation_kind(a, f->top[at].kind, sizeof f->top[at].kind);
    if (f->n_top < STRATA_XLA_TOP_ALLOCATIONS)
        f->n_top++;
}

void strata_xla_allocation_figures(const xla_buffers *b, strata_xla_figures *f)
{
    f->n_allocations = xla_buffers_n_allocations(b);
    f->n_values = xla_buffers_n_values(b);
    for (uint32_t i = 0; i < f->n_allocations; i++) {
        const xla_allocation *a = xla_buffers_allocation(b, i);
        if (a->flags & XLA_ALLOC_PARAMETER)
            f->xla_parameter_bytes += a->size;
        if (a->flags & XLA_ALLOC_LIVE_OUT)
            f->xla_output_bytes += a->size;
        if ((a->flags & XLA_ALLOC_PARAMETER) && (a->flags & XLA_ALLOC_LIVE_OUT))
            f->xla_alias_bytes += a->size;
        if (a->flags & XLA_ALLOC_TEMP)
            f->xla_temp_bytes += a->size;
        if (a->flags & XLA_ALLOC_CONSTANT)
            f->xla_constant_bytes += a->size;
        if (a->flags & XLA_ALLOC_THREAD_LOCAL)
            f->xla_thread_local_bytes += a->size;
        f->xla_total_bytes += a->size;
        note_top(f, a);
    }
}

/* One device's program for the figures: the trace without its mesh,
 * collectives and ops of one device (XLA's own figures hold the
 * collectives' buffers, not the transfers; strata's SPMD expansion adds
 * receive chunks that XLA's assignment has no counterpart for; the
 * importer writes device= only on a collective-permute's pair sends and
 * self-pair copies, which allocate nothing). The inner source is borrowed. */
static int one_device_next(void *self, const strata_op **op, GError **err)
{
    int r;
    while ((r = strata_source_next(self, op, err)) == 1 &&
           ((*op)->kind == STRATA_OP_OPTION || strata_op_kind_is_collective((*op)->kind) || (*op)->has_device))
        ;
    return r;
}

static bool one_device_rewind(void *self, GError **err)
{
    return strata_source_rewind(self, err);
}

static void one_device_destroy(void *self)
{
    (void)self;
}

static const strata_source_vtable one_device_vt = {one_device_next, one_device_rewind, one_device_destroy};

bool strata_xla_measure(strata_source *src, strata_replay_summary *s, GError **err)
{
    strata_replay_options opt = {.allocator = STRATA_ALLOC_DEFAULT, .capacity = XLA_REPORT_CAPACITY};
    strata_results *r = NULL;
    strata_source *one = strata_source_new(&one_device_vt, src, strata_source_origin(src));
    bool ok = strata_replay_run(one, &opt, &r, s, err);
    strata_source_free(one);
    strata_results_free(r);
    return ok;
}

static void row(GString *out, const char *what, uint64_t xla, const char *xla_note, const char *strata_text)
{
    char *x = strata_format_size(xla);
    g_string_append_printf(out, "  %-13s %12" G_GUINT64_FORMAT " %-11s %-26s %s\n", what, xla, x,
                           xla_note, strata_text);
    g_free(x);
}

static char *bytes(uint64_t n)
{
    char *h = strata_format_size(n);
    char *s = g_strdup_printf("%12" G_GUINT64_FORMAT " %s", n, h);
    g_free(h);
    return s;
}

/* XLA's peak recomputed as XLA accounts it (xla_livepeak.h), and how far
 * strata's physical peak is from it. */
static void accounted(GString *out, const strata_xla_figures *f)
{
    uint64_t x = f->xla_accounted_peak_bytes, p = f->peak_bytes;
    char *note = g_strdup_printf("at t=%" G_GUINT64_FORMAT ", recomputed", f->xla_accounted_peak_time);
    char *diff = p >= x ? g_strdup_printf("physical is %" G_GUINT64_FORMAT " B more (%+.2f%%)", p - x,
                                          x ? 100.0 * (double)(p - x) / (double)x : 0.0)
                        : g_strdup_printf("physical is %" G_GUINT64_FORMAT " B less (%+.2f%%)", x - p,
                                          x ? -100.0 * (double)(x - p) / (double)x : 0.0);
    row(out, "XLA's peak", x, note, diff);
    if (f->has_xla_peak && (x != f->xla_peak_bytes || f->xla_accounted_peak_time != f->xla_peak_time))
        g_string_append(out, "  (the recomputed peak is not the one XLA states: a dump this reader does not know?)\n");
    if (f->xla_accounted_unsized)
        g_string_append_printf(out, "  (%" G_GUINT64_FORMAT " values with a live range have no size in the buffer "
                                    "assignment: not carried by the dump, sized 0 or by their own size)\n",
                               f->xla_accounted_unsized);
    g_free(note);
    g_free(diff);
}

/* Temp allocations listed one per line; past this many, the rest as one
 * line of totals (a module can have a temp allocation per thread or
 * colour, and the report must stay readable). */
#define XLA_REPORT_MAX_TEMP_LINES 8

static void temps(GString *out, const strata_xla_figures *f)
{
    uint64_t rest = 0, rest_xla = 0, rest_planned = 0;
    for (guint i = XLA_REPORT_MAX_TEMP_LINES; i < f->temps->len; i++) {
        const strata_xla_temp *t = &g_array_index(f->temps, strata_xla_temp, i);
        rest++;
        rest_xla += t->xla_bytes;
        rest_planned += t->planned_bytes;
    }
    for (guint i = 0; i < f->temps->len && i < XLA_REPORT_MAX_TEMP_LINES; i++) {
        const strata_xla_temp *t = &g_array_index(f->temps, strata_xla_temp, i);
        double ratio = t->xla_bytes ? (double)t->planned_bytes / (double)t->xla_bytes : 1.0;
        g_string_append_printf(out,
                               "temp allocation %" G_GUINT64_FORMAT ": XLA %" G_GUINT64_FORMAT
                               " B, offline planner %" G_GUINT64_FORMAT " B (lower bound %"
                               G_GUINT64_FORMAT " B, %" G_GUINT64_FORMAT " buffers, alignment %"
                               G_GUINT64_FORMAT "): planner/XLA %.4f",
                               t->index, t->xla_bytes, t->planned_bytes, t->lower_bound, t->n_buffers,
                               t->alignment, ratio);
        if (t->planned_bytes < t->xla_bytes)
            g_string_append_printf(out, ", %" G_GUINT64_FORMAT " B less (%.1f%%)\n",
                                   t->xla_bytes - t->planned_bytes, 100.0 * (1.0 - ratio));
        else if (t->planned_bytes == t->xla_bytes)
            g_string_append(out, ", the same height\n");
        else
            g_string_append_printf(out, ", WORSE than XLA by %" G_GUINT64_FORMAT " B\n",
                                   t->planned_bytes - t->xla_bytes);
    }
    if (rest)
        g_string_append_printf(out,
                               "... and %" G_GUINT64_FORMAT " more temp allocations: XLA %" G_GUINT64_FORMAT
                               " B, offline planner %" G_GUINT64_FORMAT " B in all (planner/XLA %.4f)\n",
                               rest, rest_xla, rest_planned, rest_xla ? (double)rest_planned / (double)rest_xla : 1.0);
}

char *strata_xla_report(const strata_xla_figures *f, const strata_replay_summary *s)
{
    GString *out = g_string_new(NULL);
    g_string_append_printf(out,
                           "strata import xla: %s: %" G_GUINT64_FORMAT " instructions, %" G_GUINT64_FORMAT
                           " values in %" G_GUINT64_FORMAT " allocations -> %" G_GUINT64_FORMAT
                           " buffers, %" G_GUINT64_FORMAT " computes (%.6g FLOP), %" G_GUINT64_FORMAT
                           " copies, %" G_GUINT64_FORMAT " collectives (%" G_GUINT64_FORMAT " ops, %"
                           G_GUINT64_FORMAT " async; %" G_GUINT64_FORMAT " as notes)%s\n",
                           f->module, f->n_instructions, f->n_values, f->n_allocations, f->n_buffers,
                           f->n_computes, f->flops, f->n_copies, f->n_collectives, f->n_collective_ops,
                           f->n_async_collectives, f->n_collective_notes,
                           f->hlo_file ? "" : "; no optimized HLO: no FLOPs, operands or copies");
    if (f->mesh)
        g_string_append_printf(out, "  mesh %s (option mesh=, from the collectives' replica groups)\n", f->mesh);
    if (f->devices_from_sharding)
        g_string_append_printf(out, "  devices %" G_GUINT64_FORMAT ": the partitions its tiled sharding= names (the HloModule line"
                               " states no num_partitions=, as XLA of jaxlib 0.4.20 wrote it)\n", f->n_devices);
    g_string_append_printf(out, "  %-13s %-24s %-26s %s\n", "", "XLA bytes", "(XLA's figure)",
                           "strata (imported trace, JAX-style)");
    char *arg = bytes(s->argument_bytes), *outb = bytes(s->output_bytes), *tmp = bytes(s->temp_peak_bytes);
    char *alias = bytes(s->alias_bytes), *total = bytes(s->jax_total_bytes);
    row(out, "argument", f->xla_parameter_bytes, "parameter", arg);
    row(out, "output", f->xla_output_bytes, "maybe-live-out", outb);
    row(out, "alias", f->xla_alias_bytes, "parameter+live-out", alias);
    row(out, "temp", f->xla_temp_bytes, "preallocated-temp", tmp);
    row(out, "constant", f->xla_constant_bytes, "constant", "(at their live ranges)");
    row(out, "thread-local", f->xla_thread_local_bytes, "thread-local", "(not in the trace)");
    row(out, "total", f->xla_total_bytes, "Total bytes used", total);
    char *peak = bytes(f->peak_bytes);
    char *strata_peak = g_strdup_printf("%s at t=%" G_GUINT64_FORMAT, peak, f->peak_time);
    char *xla_note = f->has_xla_peak ? g_strdup_printf("at t=%" G_GUINT64_FORMAT, f->xla_peak_time)
                                     : g_strdup("(not stated)");
    row(out, "live at peak", f->xla_peak_bytes, xla_note, strata_peak);
    accounted(out, f);
    if (f->has_xla_peak && f->xla_peak_bytes != f->peak_bytes)
        g_string_append(out, "  (XLA's statement sums the values live at its peak, each at its shape's size: values that\n"
                             "  share storage each, a donated parameter only until its last read. strata's is the storage\n"
                             "  XLA assigned: shared storage once, a donated argument's allocation whole, as the caller holds it)\n");
    for (uint32_t i = 0; i < f->n_top; i++)
        g_string_append_printf(out, "%s allocation %" G_GUINT64_FORMAT ": size %" G_GUINT64_FORMAT ", %s\n",
                               i == 0 ? "XLA's largest:" : "              ", f->top[i].index,
                               f->top[i].size, f->top[i].kind);
    temps(out, f);
    if (f->n_thread_local_values || f->n_unranged_values || f->n_empty_values)
        g_string_append_printf(out,
                               "left out: %" G_GUINT64_FORMAT " thread-local values, %" G_GUINT64_FORMAT
                               " empty values; %" G_GUINT64_FORMAT
                               " values without a live range kept for the whole program\n",
                               f->n_thread_local_values, f->n_empty_values, f->n_unranged_values);
    if (f->n_unknown)
        g_string_append_printf(out,
                               "read past: %" G_GUINT64_FORMAT " field%s or line%s this reader does not know "
                               "(a newer XLA's?), not used; the first: %s\n",
                               f->n_unknown, f->n_unknown == 1 ? "" : "s", f->n_unknown == 1 ? "" : "s",
                               f->unknown_first);
    if (f->n_element_operands)
        g_string_append_printf(out,
                               "get-tuple-element as NAME#INDEX (XLA of jaxlib 0.12): %" G_GUINT64_FORMAT
                               " operand%s read as tuple elements, %" G_GUINT64_FORMAT
                               " scheduled get-tuple-element%s the HLO leaves out emitted as nothing; the first: %s\n",
                               f->n_element_operands, f->n_element_operands == 1 ? "" : "s", f->n_elided_gtes,
                               f->n_elided_gtes == 1 ? "" : "s", f->element_operand_first);
    g_free(arg);
    g_free(outb);
    g_free(tmp);
    g_free(alias);
    g_free(total);
    g_free(peak);
    g_free(strata_peak);
    g_free(xla_note);
    return g_string_free(out, FALSE);
}
