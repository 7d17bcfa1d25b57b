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
 * An XLA op is an `X` event with args.hlo_op, or any `X` event of an
 * `XLA Ops` thread. Its device is args.device_ordinal, else the N of its
 * process's `/device:KIND:N`. One device's ops (--device, default the
 * lowest with ops) become, in time order,
 *     compute NAME time=DUR at=TS note=KIND
 * with TS from the device's first op, KIND `copy` (copy, copy-start/-done),
 * `collective` (all-reduce, all-gather, reduce-scatter, all-to-all,
 * collective-permute, their -start/-done, send, recv) or `op`. An op whose
 * span holds a later op of the same device (a while, call or conditional
 * around its body, whose ops are listed themselves) is left out, so no time
 * is counted twice; CPU's `end: NAME` markers are not ops.
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
#include "trace/source.h"

#define STRATA_JAX_DEVICE_AUTO (-1)

typedef struct strata_jax_profile_summary {
    uint64_t n_events;        /* events in the file */
    uint64_t n_xla_ops;       /* XLA op events, every device */
    uint32_t n_devices;       /* devices with XLA ops */
    int device;               /* the device imported */
    uint64_t n_ops;           /* its ops written */
    uint64_t n_enclosing;     /* its ops left out for enclosing others */
    uint64_t n_copies, n_collectives;
    double busy_s;            /* sum of the written ops' durations */
    double span_s;            /* first op's start to the last end of any of its ops (enclosing ones too) */
} strata_jax_profile_summary;

/* device: STRATA_JAX_DEVICE_AUTO or a device number. Errors name FILE:LINE
 * (STRATA_ERROR_INPUT), or the device asked for when it ran no XLA op. */
strata_source *strata_jax_profile_import(const char *path, int device, strata_jax_profile_summary *s,
                                         GError **err);
/* True when path's events look like a jax.profiler trace: an XLA op event
 * (args.hlo_op, an `XLA Ops` thread, a `/device:KIND:N` process) among its
 * first 10,000 events, and none that only a PyTorch profiler (Kineto)
 * writes (an event with a `cat`, a `[memory]` event) among them; a Kineto
 * trace with an hlo_op arg is not one. */
bool strata_jax_profile_sniff(const char *path);

#endif
