/*
 * mesh_groups.h: results per group of devices along one mesh axis (the
 * expert groups of an `expert` axis): for each coordinate g on the axis,
 * the devices at g, the busiest of their compute units' busy time and the
 * highest of their device memories' peaks. Read from the results' rows and
 * their places (never from names) and the mesh's text; nothing is stored.
 *
 * JSON (results_json.c, after collectives): "expert_groups": [{"group": g,
 * "devices": n, "busy_s": max busy, "peak_allocated_bytes": max peak}, ...]
 * when the mesh has an axis named expert of size > 1; the summary prints the
 * same table.
 *
 * Invariants: groups are listed in coordinate order 0 .. size-1; a device
 * whose results hold no row (not simulated: classes of devices) adds
 * nothing to its group's figures. The pipeline's stages (stages.h) are the
 * groups along `pipe`.
 */
#ifndef STRATA_MESH_GROUPS_H
#define STRATA_MESH_GROUPS_H

#include "results/results.h"

/* One group of devices along an axis: how many, the busiest compute
 * unit's busy time among them, the highest device-memory peak. */
typedef struct strata_axis_group {
    uint32_t devices;
    double busy_s;
    uint64_t peak;
} strata_axis_group;

/* The groups along mesh axis `axis` in coordinate order (g_free), *n their
 * count; NULL with one device, no mesh, or no such axis in it. */
strata_axis_group *strata_results_axis_groups(const strata_results *r, const char *axis, uint32_t *n);

void strata_results_json_groups(JsonBuilder *b, const strata_results *r);
void strata_results_print_groups(const strata_results *r, FILE *out);

#endif
