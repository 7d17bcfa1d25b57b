/*
 * mesh.h: a device mesh, as `option mesh=data:4,model:2` names it.
 *
 * A mesh is an ordered list of named axes with sizes; its devices are
 * numbered row-major over the axes in the order written (the last axis
 * fastest), so with data:4,model:2 device 3 has coordinates (1, 1).
 * A group along a set of axes (a bit mask of axis indices) is the devices
 * that share every coordinate outside the set; a device's rank in its group
 * is its coordinates on the set's axes, row-major in mesh order.
 *
 * Invariants: 1 <= axes <= STRATA_MESH_MAX_AXES; names are distinct and
 * match [a-z][a-z0-9_]*; every size is >= 1; the product of the sizes (the
 * device count) fits in 32 bits.
 */
#ifndef STRATA_SPMD_MESH_H
#define STRATA_SPMD_MESH_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define STRATA_MESH_MAX_AXES 8
/* The most devices a mesh may have: the most a hardware model holds
 * (hw's `devices`, 1 to 65536), so that `check` refuses a mesh no machine
 * holds as `run` does. */
#define STRATA_MESH_MAX_DEVICES 65536u

typedef struct strata_mesh strata_mesh;

/* Parses "data:4,model:2". Errors are STRATA_ERROR_INPUT and say what was
 * expected, without a location (the caller prefixes FILE:LINE). */
strata_mesh *strata_mesh_parse(const char *text, GError **err);
void strata_mesh_free(strata_mesh *m);
/* The canonical text ("data:4,model:2"); owned by the mesh. */
const char *strata_mesh_text(const strata_mesh *m);

uint32_t strata_mesh_devices(const strata_mesh *m);
uint32_t strata_mesh_axis_count(const strata_mesh *m);
/* The name of axis `axis` (< the axis count); owned by the mesh. */
const char *strata_mesh_axis_name(const strata_mesh *m, uint32_t axis);

/* The axis mask of "data" or "data,model"; an unknown or repeated axis is
 * an error naming the mesh's axes. */
bool strata_mesh_axes(const strata_mesh *m, const char *axes, uint32_t *mask, GError **err);
/* The number of devices in a group along `mask`. */
uint32_t strata_mesh_group_size(const strata_mesh *m, uint32_t mask);
/* The coordinate of `device` on `axis`. */
uint32_t strata_mesh_coord(const strata_mesh *m, uint32_t device, uint32_t axis);
/* The rank of `device` in its group along `mask`. */
uint32_t strata_mesh_rank(const strata_mesh *m, uint32_t mask, uint32_t device);
/* The device of rank `rank` in the group of `device` along `mask`. */
uint32_t strata_mesh_member(const strata_mesh *m, uint32_t mask, uint32_t device, uint32_t rank);
/* The device `shift` ranks on from `device` in its group along `mask`
 * (modulo the group: where a collective-permute's send from device goes). */
uint32_t strata_mesh_shifted(const strata_mesh *m, uint32_t mask, uint32_t device, int32_t shift);

#endif
