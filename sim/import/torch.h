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
 *     caused (empty_cache: not followed by the allocator's own segment_alloc
 *     or oom) becomes one `release`.
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

typedef struct strata_torch_options {
    int device;      /* which device_traces entry (default 0) */
    bool frames;     /* note= with a short frame label (default true) */
} strata_torch_options;

void strata_torch_options_init(strata_torch_options *opt);

typedef struct strata_torch_summary {
    uint64_t n_events;            /* events of the device */
    uint64_t n_allocs, n_frees;   /* emitted from events */
    uint64_t n_segment_allocs, n_segment_frees, n_releases;
    uint64_t n_initial_segments, n_initial_blocks;
    uint64_t n_setup_ops;         /* ops before the first event's op (options excluded) */
    uint64_t n_inconsistent;      /* events the snapshot contradicts itself on (skipped) */
    uint64_t initial_reserved;    /* bytes of the initial segments */
    uint64_t peak_reserved;       /* ground truth: max over time of reserved bytes */
    uint64_t final_reserved;
    GArray *segment_alloc_sizes;  /* uint64_t: sizes of real segment_alloc events, in order */
    char *settings_text;          /* allocator_settings as k=v text, or NULL */
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

/* Fidelity of an allocator model against the snapshot's ground truth. */
typedef struct strata_torch_fidelity {
    uint64_t real_peak_reserved;
    uint64_t model_peak_reserved;
    double peak_error;                 /* (model - real) / real */
    uint64_t real_segment_allocs;
    uint64_t model_segment_allocs;
    uint64_t matched_segment_allocs;   /* same size at the same index in the sequence */
    bool oom;
} strata_torch_fidelity;

/* Replays `trace` (a converted snapshot) through allocator `spec` (e.g.
 * "caching") on one memory of `capacity` bytes, applying the trace's
 * `option allocator.*` lines, and compares with sum's ground truth. */
bool strata_torch_measure(strata_source *trace, const strata_torch_summary *sum,
                          const char *spec, uint64_t capacity, strata_torch_fidelity *out,
                          GError **err);

#endif
