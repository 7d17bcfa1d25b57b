/*
 * spmd_device.h: one device's program of an SPMD trace, for the tools that
 * replay one memory without a hardware model (`strata alloc`).
 *
 * An SPMD trace (`option mesh=`, or ops with device=) is a program that
 * every device of the mesh runs; an op with device=D runs on D alone. The
 * program of device D is then: every op without device=, the ops with
 * device=D (device= dropped), none of the others; and each collective as a
 * compute of the same name that reads its input and writes its output
 * (in=IN out=OUT; an all-reduce in and out its buffer). The buffers a
 * collective uses are the program's own allocs; the receive chunks that
 * the SPMD expansion's algorithms add (spmd.h) are left out, as XLA's
 * buffer assignment has none.
 *
 * The busiest device is the one whose program has the highest peak of
 * live bytes (allocs minus frees, over every memory), the lowest-numbered
 * on a tie; finding it reads the trace once more (then rewinds).
 *
 * Invariants: a trace that is no SPMD trace (no mesh, no device=), or
 * that fails to read (its error comes from the reading downstream, in the
 * order it always had), is handed out unchanged; the ops handed out are valid until the next call; errors
 * of the inner source pass through with its FILE:LINE.
 */
#ifndef STRATA_SPMD_DEVICE_H
#define STRATA_SPMD_DEVICE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "trace/source.h"

#define STRATA_SPMD_BUSIEST UINT32_MAX

/* What strata_spmd_device() found: the trace's devices (the mesh's, or one
 * past the highest device=; 0 when no SPMD trace), the device chosen, and
 * the peak of live bytes of each device's program (NULL when devices is 0;
 * owned by the source, valid as long as it). */
typedef struct strata_spmd_device_info {
    uint32_t devices;
    uint32_t device;
    const uint64_t *peak_bytes;
} strata_spmd_device_info;

/* Device `device` (STRATA_SPMD_BUSIEST: the busiest) of src (borrowed: it
 * must outlive the result). Reads src once to count devices and peaks, and
 * rewinds it. NULL with err set when the rewind fails, or device is not
 * below the trace's devices (1 for no SPMD trace). */
strata_source *strata_spmd_device(strata_source *src, uint32_t device, strata_spmd_device_info *info,
                                  GError **err);

#endif
