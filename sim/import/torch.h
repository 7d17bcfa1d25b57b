/*
 * torch.h: converts a PyTorch CUDA memory snapshot (the pickle written by
 * torch.cuda.memory._dump_snapshot) into a strata op stream, and measures how
 * faithfully the caching allocator model replays it.
 *
 * The snapshot holds `segments` (the allocator's FINAL state, with blocks),
 * `device_traces` (per device, the recorded events: alloc, free_requested,
 * free_completed, segment_alloc, segment_free, snapshot, oom) and optionally
 * `allocator_settings`. The event ring starts in the middle of a run, so the
 * state at its start is rebuilt by undoing the events from the final state,
 * newest first, as torch/cuda/_memory_viz.py does:
 *   segment_alloc -> the segment did not exist before; segment_free -> it did;
 *   alloc -> the block was not live before; free_completed -> it was.
 *
 * The trace is, in order (docs/torch-import.md has the details):
 *  1. `option allocator.KEY=VALUE` for each allocator setting that differs
 *     from PyTorch's default (the header comment records all of them);
 *  2. a setup section (note=setup) that makes a caching allocator hold the
 *     initial segments with the initial live blocks at their offsets: for a
 *     large segment `alloc seg.N SIZE` then `free seg.N` (the allocator keeps
 *     the segment cached), then, segment by segment in address order, the
 *     live blocks and `fill.N` buffers covering the free gaps; then the fill
 *     buffers are freed;
 *  3. the events in order: alloc (with addr=, at=, note=FILE:LINE) and free
 *     at free_completed; a run of segment_free events that the program
 *     caused (empty_cache: frames naming it, or no failed request before it
 *     by the allocator's rule, see torch_history.c) becomes one `release`
 *     noted empty_cache, a run of the allocator's that ended in an oom one
 *     noted oom_retry.
 *
 * Older snapshots (PyTorch 1.13, 2.0) lack block addresses and requested
 * sizes: derived as torch/cuda/_memory_viz.py reads them, and counted in
 * the summary; a bare list of segments (torch.cuda.memory_snapshot()) is a
 * state dump.
 *
 * Invariants: the conversion is a pure function of the snapshot and the
 * options (same input, byte-identical trace); every alloc in the trace is
 * freed at most once; the ground truth figures in strata_torch_summary come
 * from the snapshot's events only, never from a model.
 */
#ifndef STRATA_TORCH_H
#define STRATA_TORCH_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "import/pickle.h"
#include "trace/source.h"

/* strata_torch_options.device: the device with the history (the most
 * events other than `snapshot` markers; with none, the most segments). */
#define STRATA_TORCH_DEVICE_AUTO (-1)
/* Every device in one trace: needs device-qualified memories (an error
 * that lists the devices, for now). */
#define STRATA_TORCH_DEVICE_ALL (-2)

typedef struct strata_torch_options {
    int device;      /* a device_traces index, or _AUTO (default) or _ALL */
    bool frames;     /* note= with a short frame label (default true) */
    strata_progress *progress; /* bytes read, on a terminal (borrowed; default NULL: none) */
} strata_torch_options;

void strata_torch_options_init(strata_torch_options *opt);

/* An `oom` event: the allocator could not get `size` more bytes; the device
 * had `device_free` bytes free (cudaMemGetInfo). */
typedef struct strata_torch_oom {
    uint64_t event;               /* index among the device's events */
    uint64_t size, device_free;
    bool has_at;
    int64_t at_us;                /* microseconds after the first event */
} strata_torch_oom;

typedef struct strata_torch_summary {
    int device;                   /* the device imported */
    uint64_t n_events;            /* events of the device */
    bool no_history;              /* no event but `snapshot` markers: a state dump */
    uint64_t n_allocs, n_frees;   /* emitted from events */
    uint64_t n_segment_allocs, n_segment_frees, n_releases;
    uint64_t n_initial_segments, n_initial_blocks;
    uint64_t n_setup_ops;         /* ops before the first event's op (options excluded) */
    uint64_t n_inconsistent;      /* events the snapshot contradicts itself on (skipped) */
    uint64_t initial_reserved;    /* reserved bytes at the first event, by the file */
    uint64_t rebuilt_reserved;    /* bytes of the rebuilt initial segments (the setup's) */
    uint64_t peak_reserved;       /* ground truth: max over time of reserved bytes */
    uint64_t final_reserved;
    /* The memory available to the process, from the allocator's retries
     * (runs of segment_free that end in the segment_alloc that failed
     * before them): limit_low <= limit < limit_high. n_retries = 0: no bound
     * (limit_low = limit_high = 0). The trace carries limit_low as
     * `option allocator.device_limit`. */
    uint64_t n_retries, limit_low, limit_high;
    GArray *ooms;                 /* strata_torch_oom, in order */
    uint64_t n_unknown;           /* events of actions this importer does not know */
    char *unknown_text;           /* "ACTION xN ..." of those, or NULL */
    GArray *segment_alloc_sizes;  /* uint64_t: sizes of real segment_alloc events, in order */
    char *settings_text;          /* allocator_settings as k=v text, or NULL */
    /* Fields an older snapshot lacks, derived as PyTorch's own tools do
     * (torch/cuda/_memory_viz.py, torch/utils/viz/MemoryViz.js): live
     * blocks placed at their segment's address plus the sizes of the blocks
     * before them; requested bytes from history[0].real_size, else the
     * block's size. */
    uint64_t n_derived_addresses, n_derived_requested_history, n_derived_requested_size;
    /* The history ends at an `oom` (ignoring `snapshot` markers): a dump
     * written by an OOM observer (torch._C._cuda_attach_out_of_memory_observer
     * calling torch.cuda.memory._dump_snapshot). oom_reserved: the reserved
     * bytes at the last oom; oom_implied_limit: those plus the device's free
     * bytes then, the most the process could hold (0: the oom does not
     * bound it, its free bytes were not below the segment it asked for). */
    bool ends_in_oom;
    uint64_t oom_reserved, oom_implied_limit;
    /* Runs of segment_free told apart (docs/torch-import.md): by frames
     * naming empty_cache, by the allocator's rule (a freed segment could
     * have served the request that follows: no cudaMalloc had failed). */
    uint64_t n_releases_by_frames, n_releases_by_rule;
    /* runs of the allocator's that ended in an oom: the cache it freed
     * before failing, a `release` noted oom_retry (not in n_releases) */
    uint64_t n_oom_releases;
    char *notes;                  /* lines on what was derived or inferred, or NULL */
    /* The pinned host allocator's part of the snapshot (`host_segments`,
     * `host_traces`: PyTorch 2.14 on, written when
     * _record_memory_history(record_pinned_host_memory=True)); its ops name
     * memory `host`, buffers pin.N. has_host: either list is not empty.
     * Ground truth from its own events, as for the device. */
    bool has_host;
    uint64_t host_events, host_allocs, host_frees, host_releases;
    uint64_t host_initial_segments, host_initial_live, host_setup_ops;
    uint64_t host_initial_reserved, host_peak_reserved, host_final_reserved;
    uint64_t host_inconsistent;   /* events the host part contradicts itself on (skipped) */
    uint64_t host_uncached_frees; /* segment_free right after its block's free (no op) */
    GArray *host_segment_alloc_sizes; /* uint64_t, in order */
    uint64_t host_unknown;        /* unknown keys and actions read past */
    char *host_unknown_text;      /* "KEY xN ..." of those, or NULL */
} strata_torch_summary;

void strata_torch_summary_clear(strata_torch_summary *s);

/* Converts a parsed snapshot into a source over compact ops (48 bytes per
 * op, all kept; it does not reference the pickle). sum may be NULL. */
strata_source *strata_torch_convert(const strata_pickle *p, const char *origin,
                                    const strata_torch_options *opt, strata_torch_summary *sum,
                                    GError **err);

/* Loads and converts a snapshot file into a source (origin = path), in
 * memory that does not grow with the file: the pickle is streamed (see
 * pickle.h) once now, to validate it and rebuild the initial state, and
 * once more each time the source is read from the start (the ops are made
 * as they are read). A pickle laid out unlike Python's pickler writes them
 * is read whole instead (same trace). sum may be NULL; if not, it must
 * outlive the source: n_allocs, n_frees and n_inconsistent are final once
 * the source has been read to its end (every other field on return). */
strata_source *strata_torch_import(const char *path, const strata_torch_options *opt,
                                   strata_torch_summary *sum, GError **err);

/* Writes the ops of `src` as a trace to `out` (version line, `# comment`
 * lines, then one line per op), fast for the ops this importer makes; the
 * text reads back to equal ops. Returns the number of ops, or -1 with err. */
int64_t strata_torch_write(strata_source *src, FILE *out, const char *comment, GError **err);

#endif
