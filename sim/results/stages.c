/*
 * stages.c: the pipeline stages of a multi-device run (contract in
 * stages.h). Rows are matched to a stage by their places (the device the
 * hardware model gives a memory or a compute unit), never by name.
 */
#include "results/stages.h"
#include "results/mesh_groups.h"
#include "core/units.h"

#define PIPE_AXIS "pipe"

typedef strata_axis_group stage_row;

/* The rows by stage (g_free), and their count; NULL without a pipe axis. */
static stage_row *stages_of(const strata_results *r, uint32_t *n)
{
    return strata_results_axis_groups(r, PIPE_AXIS, n);
}

static double bubble_of(const strata_results *r, const stage_row *s)
{
    return r->makespan_s > s->busy_s ? r->makespan_s - s->busy_s : 0.0;
}

void strata_results_json_stages(JsonBuilder *b, const strata_results *r)
{
    uint32_t n = 0;
    stage_row *rows = stages_of(r, &n);
    if (!rows)
        return;
    strata_json_open_object(b, "pipeline");
    strata_json_add_string(b, "axis", PIPE_AXIS);
    strata_json_open_array(b, "stages");
    for (uint32_t i = 0; i < n; i++) {
        double bubble = bubble_of(r, &rows[i]);
        json_builder_begin_object(b);
        strata_json_add_uint(b, "stage", i);
        strata_json_add_uint(b, "devices", rows[i].devices);
        strata_json_add_double(b, "busy_s", rows[i].busy_s);
        strata_json_add_double(b, "bubble_s", bubble);
        strata_json_add_double(b, "bubble_fraction", r->makespan_s > 0 ? bubble / r->makespan_s : 0.0);
        strata_json_add_uint(b, "peak_allocated_bytes", rows[i].peak);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    g_free(rows);
}

void strata_results_print_stages(const strata_results *r, FILE *out)
{
    uint32_t n = 0;
    stage_row *rows = stages_of(r, &n);
    if (!rows)
        return;
    fprintf(out, "\n%-6s %-8s %-12s %-12s %-8s %s\n", "stage", "devices", "busy", "bubble", "bubble%",
            "peak device memory");
    for (uint32_t i = 0; i < n; i++) {
        double bubble = bubble_of(r, &rows[i]);
        char *busy = strata_format_time(rows[i].busy_s), *bub = strata_format_time(bubble);
        char *peak = strata_format_size(rows[i].peak);
        fprintf(out, "%-6u %-8u %-12s %-12s %-8.1f %s\n", i, rows[i].devices, busy, bub,
                r->makespan_s > 0 ? 100.0 * bubble / r->makespan_s : 0.0, peak);
        g_free(busy);
        g_free(bub);
        g_free(peak);
    }
    g_free(rows);
}
