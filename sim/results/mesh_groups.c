/*
 * mesh_groups.c: results per expert group (mesh_groups.h).
 */
#include "results/mesh_groups.h"
#include <string.h>
#include "core/mesh.h"
#include "core/units.h"

#define GROUP_AXIS "expert"

strata_axis_group *strata_results_axis_groups(const strata_results *r, const char *axis, uint32_t *n)
{
    if (r->devices <= 1 || !r->mesh)
        return NULL;
    strata_mesh *m = strata_mesh_parse(r->mesh, NULL);
    uint32_t mask = 0;
    if (!m || !strata_mesh_axes(m, axis, &mask, NULL) || strata_mesh_devices(m) != r->devices) {
        strata_mesh_free(m);
        return NULL;
    }
    *n = strata_mesh_group_size(m, mask);
    strata_axis_group *g = g_new0(strata_axis_group, *n);
    for (uint32_t d = 0; d < r->devices; d++)
        g[strata_mesh_rank(m, mask, d)].devices++;
    for (guint i = 0; i < r->compute->len; i++) {
        const strata_compute_result *c = &g_array_index(r->compute, strata_compute_result, i);
        if (c->place.device[0] < r->devices) {
            strata_axis_group *f = &g[strata_mesh_rank(m, mask, c->place.device[0])];
            f->busy_s = MAX(f->busy_s, c->busy_s);
        }
    }
    for (guint i = 0; i < r->memories->len; i++) {
        const strata_memory_result *mr = &g_array_index(r->memories, strata_memory_result, i);
        if (mr->place.device[0] < r->devices && mr->kind && strcmp(mr->kind, "device") == 0) {
            strata_axis_group *f = &g[strata_mesh_rank(m, mask, mr->place.device[0])];
            f->peak = MAX(f->peak, mr->peak_allocated_bytes);
        }
    }
    strata_mesh_free(m);
    return g;
}

/* The expert groups: NULL unless the expert axis is above 1. */
static strata_axis_group *groups_of(const strata_results *r, uint32_t *n)
{
    strata_axis_group *g = strata_results_axis_groups(r, GROUP_AXIS, n);
    if (g && *n <= 1) {
        g_free(g);
        return NULL;
    }
    return g;
}

/* The expert groups as a JSON array in b. */
void strata_results_json_groups(JsonBuilder *b, const strata_results *r)
{
    uint32_t n = 0;
    strata_axis_group *g = groups_of(r, &n);
    if (!g)
        return;
    strata_json_open_array(b, GROUP_AXIS "_groups");
    for (uint32_t i = 0; i < n; i++) {
        json_builder_begin_object(b);
        strata_json_add_uint(b, "group", i);
        strata_json_add_uint(b, "devices", g[i].devices);
        strata_json_add_double(b, "busy_s", g[i].busy_s);
        strata_json_add_uint(b, "peak_allocated_bytes", g[i].peak);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    g_free(g);
}

/* The expert groups as the summary's table on out. */
void strata_results_print_groups(const strata_results *r, FILE *out)
{
    uint32_t n = 0;
    strata_axis_group *g = groups_of(r, &n);
    if (!g)
        return;
    fprintf(out, "\n%-12s %-8s %-12s %s\n", GROUP_AXIS " group", "devices", "busy", "peak allocated");
    for (uint32_t i = 0; i < n; i++) {
        char *t = strata_format_time(g[i].busy_s), *p = strata_format_size(g[i].peak);
        fprintf(out, "%-12u %-8u %-12s %s\n", i, g[i].devices, t, p);
        g_free(t);
        g_free(p);
    }
    g_free(g);
}
