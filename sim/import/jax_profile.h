/*
 * jax_profile.h: `strata import jax-profile`, the trace that jax.profiler
 * writes, into a strata op stream: the XLA ops one device ran, as computes
 * with their measured durations.
 *
 * Input: the Chrome trace-event JSON of jax.profiler.trace(DIR,
 * create_perfetto_trace=True) (DIR/.../perfetto_trace.json.gz) or the
 * TensorBoard HOST.trace.json.gz of the same run, plain or gzip. Both are
 * written by TSL's profiler (tsl/profiler/convert/trace_events_to_json.cc:
 * `traceEvents` with `M` process/thread names and `X` complete events in
 * microseconds); TPU and GPU runs use the same format, each device a
 * process named `/device:TPU:N` or `/device:GPU:N` with an `XLA Ops`
 * thread (JAX docs, "Profiling computation": jax.readthedocs.io/en/latest/
 * profiling.html). On the CPU backend the XLA ops are events of the
 * executor's threads with args `hlo_op`, `hlo_module` and `device_ordinal`.
 *
 * Process and thread names (`M` events) and `X` events go to
 * import/jax_ops.h, which says what an XLA op is and what each becomes. An
 * XSpace (XProf's PROFILE.xplane.pb; strata_jax_xplane_is) is read by
 * import/jax_xplane.h into the same ops instead.
 *
 * Invariants: the file is streamed (import/kineto_scan.h): memory grows
 * with the XLA ops kept (a few words each), not with the file; the stream
 * is a pure function of the file and the device chosen.
 */
#ifndef STRATA_IMPORT_JAX_PROFILE_H
#define STRATA_IMPORT_JAX_PROFILE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "import/jax_ops.h"
#include "trace/source.h"

/* device: STRATA_JAX_DEVICE_AUTO or a device number. Errors name FILE:LINE
 * (STRATA_ERROR_INPUT), or the device asked for when it ran no XLA op. */
strata_source *strata_jax_profile_import(const char *path, int device, strata_jax_profile_summary *s,
                                         GError **err);
/* True when path is an XSpace, or its events look like a jax.profiler
 * trace: an XLA op event (args.hlo_op, an `XLA Ops` thread, a
 * `/device:KIND:N` process) among its first 10,000 events, and none that
 * only a PyTorch profiler (Kineto) writes (an event with a `cat`, a
 * `[memory]` event) among them; a Kineto trace with an hlo_op arg is not
 * one. */
bool strata_jax_profile_sniff(const char *path);

#endif
