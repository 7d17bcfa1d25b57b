/*
 * jax_ops.h: the XLA op events of a jax.profiler profile, whichever file
 * they come from (the trace-event JSON, import/jax_profile.c; XProf's
 * XSpace protobuf, import/jax_xplane.c), into one device's computes.
 *
 * A reader declares processes (a device's `/device:KIND:N`, or the host),
 * threads (named; `XLA Ops` marks a device's op thread) and complete events
 * (start and duration in microseconds, process, thread, name, and the
 * hlo_op and device_ordinal they carry). An XLA op is an event with an
 * hlo_op, or any event of an `XLA Ops` thread. Its device is its
 * device_ordinal, else the N of its process's `/device:KIND:N`. One device's
 * ops (default the lowest with ops) become, in time order,
 *     compute NAME time=DUR at=TS note=KIND
 * with TS from the device's first op, KIND `copy` (copy, copy-start/-done),
 * `collective` (all-reduce, all-gather, reduce-scatter, all-to-all,
 * collective-permute, their -start/-done, send, recv) or `op`. An op whose
 * span holds a later op of the same thread (a while, call or conditional
 * around its body, whose ops are listed themselves) is left out, so no time
 * is counted twice; CPU's `end: NAME` markers are not ops. When the
 * device's ops ran on more than one thread (the CPU executor's), each
 * thread is a stream t0, t1, ... (first seen first), so ops that overlapped
 * still overlap, and an op waits (record/wait e<K>, K its position among
 * the device's computes) for the latest op of each other thread that had ended
 * when it started: the measured order, without the idle time between.
 *
 * Invariants: memory grows with the XLA ops kept (a few words each) and
 * the threads named, not with the other events; the result is a pure
 * function of the events declared, their order breaking exact ties.
 */
#ifndef STRATA_IMPORT_JAX_OPS_H
#define STRATA_IMPORT_JAX_OPS_H

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
    uint32_t n_threads;       /* threads its ops ran on: one stream each when more than one */
    double busy_s;            /* sum of the written ops' durations */
    double span_s;            /* first op's start to the last end of any of its ops (enclosing ones too) */
    uint64_t n_unknown;       /* fields of a newer schema read past (XSpace only) */
    char unknown_first[200];  /* where the first was, and what */
} strata_jax_profile_summary;

/* One complete event; name and hlo_op are borrowed for the call. */
typedef struct strata_jax_event {
    double ts_us, dur_us;
    int64_t pid, tid;
    int64_t device;     /* its device_ordinal, -1 when it has none */
    const char *name;
    const char *hlo_op; /* NULL when it has none */
} strata_jax_event;

typedef struct strata_jax_ops strata_jax_ops;

strata_jax_ops *strata_jax_ops_new(void);
void strata_jax_ops_free(strata_jax_ops *o);
/* A process's name (a device's `/device:TPU:3`, the host's `/host:CPU`). */
void strata_jax_ops_process(strata_jax_ops *o, int64_t pid, const char *name);
/* A thread's name; threads are best named before their events. */
void strata_jax_ops_thread(strata_jax_ops *o, int64_t pid, int64_t tid, const char *name);
/* An event, kept when it may be an XLA op (an hlo_op, or a thread that is
 * `XLA Ops` or not named yet). */
void strata_jax_ops_event(strata_jax_ops *o, const strata_jax_event *ev);
/* One device's ops (device: STRATA_JAX_DEVICE_AUTO or its number); fills s
 * but for n_events and the unknown fields. NULL with err (naming path) when
 * that device ran no XLA op. */
strata_source *strata_jax_ops_finish(strata_jax_ops *o, const char *path, int device,
                                     strata_jax_profile_summary *s, GError **err);
/* `/device:TPU:3` -> 3; -1 when not a device process. */
int64_t strata_jax_device_of_process(const char *name);

#endif
