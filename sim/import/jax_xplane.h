/*
 * jax_xplane.h: XProf's own profile, the XSpace protobuf jax.profiler
 * writes as PROFILE.xplane.pb (schema third_party/xprof/xplane.proto), into
 * the same ops as its trace-event JSON (import/jax_ops.h).
 *
 * The planes, lines and events become what TSL's converter makes of them
 * for the JSON (xla/tsl/profiler/convert/xplane_to_trace_events.cc,
 * ConvertXSpaceToTraceContainer): the plane `/host:CPU` and the device
 * planes (`/device:GPU:*`, else `/device:TPU:*`, else `/device:CUSTOM:*`)
 * are processes named after the plane; a line is a thread (its display_id,
 * else its id; its display_name, else its name), except the `Async XLA
 * Ops` line, which the JSON leaves out; an event starts at its line's
 * timestamp_ns plus its offset_ps and lasts duration_ps (at least 1 ps, as
 * the JSON writes it), is named after its metadata (display_name, else
 * name, else a step_name stat) and carries the stats of its metadata, then
 * its own: hlo_op (a string) and device_ordinal (a whole number) are the
 * ones read. Other planes (`/host:metadata`, `Task Environment`) hold no
 * ops.
 *
 * Tolerant of a newer schema, strict on this one: fields the schema does
 * not know are read past, counted in the summary with the first one's
 * place; a known field with a bad value (an event or stat naming metadata
 * its plane lacks, a negative offset or duration, a time past 2^63 ps, an
 * hlo_op that is not a string, a device_ordinal that is not a whole number
 * below 2^20) or a message protobuf cannot decode is an error naming the
 * file, the plane, the line and the event (STRATA_ERROR_INPUT).
 *
 * Invariants: the file is read whole (at most STRATA_XPLANE_MAX_FILE
 * bytes) and decoded at once; the ops are a pure function of the file and
 * the device chosen.
 */
#ifndef STRATA_IMPORT_JAX_XPLANE_H
#define STRATA_IMPORT_JAX_XPLANE_H

#include <glib.h>
#include <stdbool.h>
#include "import/jax_ops.h"
#include "trace/source.h"

/* The largest .xplane.pb read (bytes). */
#define STRATA_XPLANE_MAX_FILE (1ull << 31)

/* True when path is an XSpace: it is named *.pb, or its first byte is an
 * XSpace's first field (0x0a: planes, length-delimited) and the second no
 * JSON that could follow a newline ('{', '[', blanks). */
bool strata_jax_xplane_is(const char *path);
/* device: STRATA_JAX_DEVICE_AUTO or a device number. */
strata_source *strata_jax_xplane_import(const char *path, int device, strata_jax_profile_summary *s, GError **err);

#endif
