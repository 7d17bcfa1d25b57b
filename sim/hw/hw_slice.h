/*
 * hw_slice.h: a slice of a shipped machine, from `--set hardware.devices=N`
 * alone (internal to the hardware model; called by hw_devices.c before it
 * reads the device counts).
 *
 * A hardware file describes a whole node or pod; a user slicing it names
 * only the device count. When [hardware] devices was set by an override:
 *  1. below the file's devices_per_host (devices_per_host not overridden),
 *     the slice is one host of N devices: devices_per_host becomes N;
 *  2. each device-level torus whose dims were not overridden and do not
 *     multiply to N takes the shape a Cloud TPU slice of N chips has
 *     (hw_slice.c cites the tables), or the load fails with exit 2, naming
 *     the interconnect and listing the valid shapes; of a torus with a
 *     `domain` smaller than N (a pod of several slices), the dims are one
 *     domain's and N counts domains of it (the loader checks it divides);
 *  3. (hw_devices.c) a `domain` above N is a slice of one domain: N.
 * What it sets is recorded as an override whose note names
 * hardware.devices, so a later error says where the value came from.
 * Nothing changes when devices comes from the file.
 */
#ifndef STRATA_HW_SLICE_H
#define STRATA_HW_SLICE_H

#include "hw/hw_internal.h"

bool hw_slice_apply(const hw_load_ctx *ctx, const strata_hw *hw, char **groups, gsize n_groups, GError **err);

/* The Cloud TPU slice shape of `chips` chips for a torus of n_dims (2 or
 * 3) dimensions, as "8x8"; NULL when no slice has that many chips. */
const char *hw_slice_shape(uint32_t n_dims, uint64_t chips);
/* The valid shapes, "1x1 (1), 2x2 (4), ..." (g_free). */
char *hw_slice_shapes(uint32_t n_dims);

#endif
