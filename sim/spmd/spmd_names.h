/*
 * spmd_names.h: how the SPMD expansion (spmd/spmd.h) names the ops it hands
 * out, and how those names print: the one place that knows the scheme.
 *
 * Names (traces/FORMAT.md, "Many devices"): the program's buffer B, stream S
 * and event E are B@D, S@D and E@D on device D; a collective on stream S
 * adds its own, which hold '~': receive buffers S~tL@D (lane L), round
 * events S~eL@D and lane streams S~L@D (lane L > 0). Memories and units are
 * the hardware model's instances (hw.h: strata_hw_instance_name).
 *
 * Two namers (trace/check.h) carry the scheme to a checker, which decodes
 * no name itself:
 *   strata_spmd_program_namer    for a checker of a program (the
 *       expansion's input, `strata check` of a program, a rewrite's output):
 *       in a program for several devices it refuses a buffer, stream or
 *       event name holding '~' (those of the expansion's own would collide),
 *       and, whenever the device count is known, a memory instance of a
 *       device past it (hbm@8 of 8 devices);
 *   strata_spmd_expansion_namer  for a checker of the expansion's ops: it
 *       quotes B@D as 'B' on device D, and says what the expansion's own
 *       names are ("'S~t0' (a collective's receive buffer on stream 'S') on
 *       device 3").
 *
 * Invariant: every name the expansion hands out is made by
 * strata_spmd_name() or strata_spmd_lane_name(), so the label of each is
 * the name the program wrote (or the expansion's own) and its device.
 */
#ifndef STRATA_SPMD_NAMES_H
#define STRATA_SPMD_NAMES_H

#include "trace/check.h"

/* The `what` of strata_spmd_lane_name(): a receive buffer, a round event. */
#define STRATA_SPMD_RECV "t"
#define STRATA_SPMD_ROUND "e"

/* into = the program's `name` on `device` (B@D). */
void strata_spmd_name(GString *into, const char *name, uint32_t device);
/* The n names on `device`, NULL-terminated, in strs' strings (GString,
 * added as needed, reused) and ptrs (char *, refilled); NULL when n is 0.
 * Valid until the next call with the same arrays. */
const char *const *strata_spmd_name_list(GPtrArray *strs, GPtrArray *ptrs, const char *const *names, uint32_t n,
                                         uint32_t device);
/* into = the expansion's own name on `device` for stream `stream`: with
 * `what` (STRATA_SPMD_RECV, _ROUND) S~whatL@D, else lane L's stream (S~L@D;
 * lane 0: S@D). */
void strata_spmd_lane_name(GString *into, const char *stream, uint32_t lane, const char *what, uint32_t device);

/* into = the name of `name` (one made above, N@D) on `device`: N@device;
 * false when name is none such. With classes (spmd_classes.h), the name of
 * a device's stream after its representative's. */
bool strata_spmd_rename(GString *into, const char *name, uint32_t device);

extern const strata_namer strata_spmd_program_namer;
extern const strata_namer strata_spmd_expansion_namer;

#endif
