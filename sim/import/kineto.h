/*
 * kineto.h: converts a PyTorch profiler trace (Chrome trace JSON written by
 * torch.profiler with profile_memory=True, plain or gzip) into a strata op
 * stream, and measures how faithfully the caching allocator replays it.
 *
 * What is read, for one GPU (the one with the most `[memory]` events unless
 * chosen):
 *  - `[memory]` instant events of Device Type 1 (CUDA) or 6 (HIP): Bytes > 0
 *    is an alloc, Bytes < 0 a free, matched by Addr (the old format has no
 *    Addr: a free then takes the newest live alloc of the same size);
 *    Total Reserved and Total Allocated, when present, are the ground truth;
 *  - `kernel` (old format `Kernel`) events: computes with time= their
 *    measured duration; `gpu_memset` (`Memset`): computes labelled memset;
 *  - `gpu_memcpy` (`Memcpy`) events: copies of args.bytes between staging
 *    buffers in the memories their name gives ("Memcpy HtoD (Pageable ->
 *    Device)": pageable to hbm; Pinned is `host`);
 *  - every op keeps its stream (stream=sN) and correlation (note=corr.N).
 * Events are taken in file order.
 *
 * The events start in the middle of a run, so the trace starts with a
 * setup part (note=setup) that rebuilds what was there: the cached
 * segments the window shows (allocs that never raised Total Reserved were
 * served from segments cached before it: their sizes are those the caching
 * model makes for them from empty; pre.cache.N, allocated whole and freed
 * at the end of the setup), one segment of the rest of the first event's
 * Total Reserved (alloc then free of pre.seg), then the
 * blocks that the window frees but never allocates (pre.N, sized by their
 * frees), then pre.rest for the rest of the bytes allocated before the
 * first event (Total Allocated less its Bytes), then the host ends of the
 * copies' staging buffers. The device ends come before all of it, each the
 * whole of a segment of its own (kineto.c, staging_device_size): the real
 * copies moved tensors the [memory] events already count, so these bytes
 * are not the run's, and a comparison takes them off (kineto_validate.c).
 *
 * Invariants: the file is streamed (kineto_scan.h), once to validate it and
 * gather the summary and once more each time the source is read from the
 * start: memory grows with the live blocks, never with the file; the same
 * file and options give the same ops; the summary's ground truth figures
 * come from the file only.
 */
#ifndef STRATA_KINETO_H
#define STRATA_KINETO_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "import/torch.h"
#include "trace/source.h"

#define STRATA_KINETO_DEVICE_AUTO (-1)

typedef struct strata_kineto_options {
    int device;        /* a GPU's Device Id, or STRATA_KINETO_DEVICE_AUTO */
    bool memory_only;  /* allocs and frees only: no computes, copies or staging */
    strata_progress *progress; /* bytes read, on a terminal (borrowed; default NULL: none) */
} strata_kineto_options;

void strata_kineto_options_init(strata_kineto_options *opt);

/* Copy directions, from the memcpy event's name. */
typedef enum {
    STRATA_KINETO_HTOD,
    STRATA_KINETO_DTOH,
    STRATA_KINETO_DTOD,
    STRATA_KINETO_HTOH,
    STRATA_KINETO_DIR__COUNT
} strata_kineto_dir;

const char *strata_kineto_dir_name(strata_kineto_dir d);

typedef struct strata_kineto_summary {
    uint64_t n_events;              /* every event of the file */
    int device;                     /* the GPU imported (-1: none found) */
    int activity_device;            /* the id its kernels and copies carry: device, or
                                     * ROCm roctracer's HSA agent id (kineto.c, rocm_agents) */
    int device_type;                /* 1 CUDA, 6 HIP, 0 unknown */
    uint64_t n_memory;              /* [memory] events of the device */
    uint64_t n_memory_other;        /* [memory] events of the host and other devices */
    uint64_t n_allocs, n_frees;     /* from the device's events */
    uint64_t n_kernels, n_memsets, n_memcpys, n_memcpy_empty; /* of the device */
    uint64_t n_memcpy_bytes_on_runtime; /* memcpys whose bytes came from their HIP runtime copy */
    uint64_t n_memcpy_unsized;      /* memcpys with no size anywhere: timed ops */
    bool has_addr;                  /* its memory events carry Addr */
    bool has_totals;                /* ... and Total Reserved / Total Allocated */
    uint64_t initial_reserved;      /* Total Reserved at the first event */
    uint64_t initial_allocated;     /* Total Allocated before the first event */
    uint64_t peak_reserved;         /* max Total Reserved */
    uint64_t final_reserved;        /* Total Reserved at the last event */
    uint64_t peak_allocated;        /* max Total Allocated */
    uint64_t n_pre_blocks, pre_bytes, pre_rest; /* the rebuilt start */
    uint64_t n_setup_ops;           /* ops before the first event's op */
    /* Cached segments inferred at the start: those the caching model makes
     * for the window's allocs that did not raise Total Reserved (the real
     * allocator served them from its cache), as many as the reserved bytes
     * at the start hold beside the live blocks; n_inferred_left: made but
     * past that room (left for the replay to make). */
    uint64_t n_inferred_segments, inferred_bytes, n_inferred_left;
    /* The device ends of the copies (kineto.c, staging_device_size): the
     * first n_staging_device allocs of the setup, each the whole of a
     * segment of its own, staging_device_bytes in all. */
    uint64_t n_staging_device, staging_device_bytes;
    /* The device's [memory] events were not in ts order in the file (one
     * run per CPU thread: kineto.c, memory_by_ts): the import takes them in
     * ts order, n_memory_out_of_order of them came before an earlier one. */
    bool memory_by_ts;
    uint64_t n_memory_out_of_order;
    double first_ts_us;             /* the earliest ts in the file: at=0 */
} strata_kineto_summary;

/* Reads `path` once (validating it and filling sum, which may be NULL) and
 * returns a source that streams it again for its ops. */
strata_source *strata_kineto_import(const char *path, const strata_kineto_options *opt,
                                    strata_kineto_summary *sum, GError **err);

#endif
