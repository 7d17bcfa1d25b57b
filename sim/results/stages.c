/*
 * stages.c: the pipeline stages of a multi-device run (contract in
 * stages.h). Rows are matched to a stage by their places (the device the
 * hardware model gives a memory or a compute unit), never by name.
 */
#include "results/stages.h"
#include <string.h>
#include "core/mesh.h"
#include "core/units.h"

#define PIPE_AXIS "pipe"

typedef struct stage_row {
    uint32_t devices;
    double busy_s;
    uint64_t peak;
} stage_row;

/* The rows by stage (g_free), and their count; NULL without a pipe axis. */
static stage_row *stages_of(const strata_results *r, uint32_t *n)
{
    if (r->devices <= 1 || !r->mesh)
        return NULL;
    strata_mesh *m = strata_mesh_parse(r->mesh, NULL);
    uint32_t mask = 0;
    if (!m || !strata_mesh_axes(m, PIPE_AXIS, &mask, NULL) || strata_mesh_devices(m) != r->devices) {
        strata_mesh_free(m);
        return NULL;
    }
    *n = strata_mesh_group_size(m, mask);
    stage_row *rows = g_new0(stage_row, *n);
    for (uint32_t d = 0; d < r->devices; d++)
        rows[strata_mesh_rank(m, mask, d)].devices++;
    for (guint i = 0; i < r->compute->len; i++) {
        const strata_compute_result *c = &g_array_index(r->compute, strata_compute_result, i);
        if (c->place.device[0] < r->devices) {
            stage_row *s = &rows[strata_mesh_rank(m, mask, c->place.device[0])];
            s->busy_s = MAX(s->busy_s, c->busy_s);
        }
    }
    for (guint i = 0; i < r->memories->len; i++) {
        const strata_memory_result *mem = &g_array_index(r->memories, strata_memory_result, i);
        if (mem->place.device[0] < r->devices && mem->kind && strcmp(mem->kind, "device") == 0) {
            stage_row *s = &rows[strata_mesh_rank(m, mask, mem->place.device[0])];
            s->peak = MAX(s->peak, mem->peak_allocated_bytes);
        }
    }
    strata_mesh_free(m);
    return rows;
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
