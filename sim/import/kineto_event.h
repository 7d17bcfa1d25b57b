/*
 * kineto_event.h: one event of a PyTorch profiler trace, decoded from its
 * JSON object into the fields the kineto importer uses.
 *
 * Kinds: `[memory]` instant events, kernels (`kernel`, old format
 * `Kernel`), memsets (`gpu_memset`, `Memset`) and memcpys (`gpu_memcpy`,
 * `Memcpy`), and the HIP runtime's copy calls (`cuda_runtime` events named
 * `hipMemcpy...` that carry the size: ROCm's Kineto writes a GPU memcpy's
 * bytes on the runtime call only, see decode_gpu); everything else is
 * STRATA_KINETO_EV_OTHER and only its ts is read. Invariant: a decoded event of a known kind has every field its kind
 * needs, or decoding fails with FILE:LINE and the field that is missing or
 * of the wrong type.
 */
#ifndef STRATA_KINETO_EVENT_H
#define STRATA_KINETO_EVENT_H

#include <json-glib/json-glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "import/kineto.h"

typedef enum {
    STRATA_KINETO_EV_OTHER,
    STRATA_KINETO_EV_MEMORY,
    STRATA_KINETO_EV_KERNEL,
    STRATA_KINETO_EV_MEMSET,
    STRATA_KINETO_EV_MEMCPY,
    STRATA_KINETO_EV_RUNTIME_COPY, /* correlation and bytes only; device -1 */
} strata_kineto_ev_kind;

/* Where a memcpy end lies. */
typedef enum {
    STRATA_KINETO_MEM_DEVICE,
    STRATA_KINETO_MEM_PINNED,
    STRATA_KINETO_MEM_PAGEABLE,
    STRATA_KINETO_MEM__COUNT
} strata_kineto_mem;

typedef struct strata_kineto_event {
    strata_kineto_ev_kind kind;
    bool has_ts;
    double ts, dur;             /* microseconds */
    int device;                 /* Device Id, or args.device */
    int device_type;            /* MEMORY: Device Type (0 CPU, 1 CUDA, 6 HIP) */
    int64_t bytes;              /* MEMORY: Bytes (negative: a free); MEMCPY: bytes */
    bool has_addr, has_totals;
    uint64_t addr;
    uint64_t total_reserved, total_allocated;
    int64_t stream, correlation;
    const char *name;           /* borrowed from the JSON object */
    strata_kineto_dir dir;      /* MEMCPY */
    strata_kineto_mem src, dst; /* MEMCPY */
    bool bytes_on_runtime;      /* MEMCPY without args.bytes: bytes is 0 here, the
                                 * size is on the runtime copy of its correlation */
} strata_kineto_event;

/* true when the memory event is of a GPU (CUDA or HIP). */
bool strata_kineto_event_gpu(const strata_kineto_event *ev);

/* Decodes `o` (read at path:line); false with err. */
bool strata_kineto_event_decode(JsonObject *o, const char *path, uint64_t line,
                                strata_kineto_event *ev, GError **err);

/* Streams the events of `path` (kineto_scan.h), decoding each and handing
 * it to visit(ev, user); false with err on the first bad event. */
typedef void (*strata_kineto_visit)(const strata_kineto_event *ev, void *user);
bool strata_kineto_each_event(const char *path, strata_kineto_visit visit, void *user, GError **err);
/* The same, showing the bytes read on progress (NULL: none) as "import kineto" with note. */
bool strata_kineto_each_event_shown(const char *path, strata_progress *progress, const char *note,
                                    strata_kineto_visit visit, void *user, GError **err);

/* The same, with the bytes of each memcpy that lacks them (bytes_on_runtime)
 * taken from its HIP runtime copy; with runtime_sizes a first pass over the
 * file gathers those (the importer's summary says whether any are needed:
 * n_memcpy_bytes_on_runtime); without it, such a memcpy is visited with
 * bytes 0. */
bool strata_kineto_each_event_sized(const char *path, bool runtime_sizes, strata_kineto_visit visit, void *user,
                                    GError **err);

#endif
