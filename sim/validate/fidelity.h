/*
 * fidelity.h: how faithfully an allocator model replays what a real PyTorch
 * run did, measured beside the other validations: an imported snapshot
 * (import/torch.h) or the memory events of a profiler trace
 * (import/kineto.h) replayed untimed through placement, and compared with
 * the file's own ground truth (peak and final reserved bytes, segment
 * allocations).
 *
 * Invariants:
 *  1. the replay is `strata alloc`'s own (replay/replay.h), so it honours
 *     the trace's `option allocator.*` lines and `release` ops as `alloc`
 *     does;
 *  2. a measure reads its input and writes only *out: the figures follow
 *     from the trace and the allocator spec alone.
 */
#ifndef STRATA_FIDELITY_H
#define STRATA_FIDELITY_H

#include "import/kineto.h"
#include "import/torch.h"

/* Fidelity of an allocator model against the snapshot's ground truth. */
typedef struct strata_torch_fidelity {
    uint64_t real_peak_reserved;
    uint64_t model_peak_reserved;
    uint64_t real_final_reserved, model_final_reserved; /* after the last op */
    double peak_error;                 /* (model - real) / real */
    uint64_t real_segment_allocs;
    uint64_t model_segment_allocs;
    uint64_t matched_segment_allocs;   /* same size at the same index in the sequence */
    bool oom;
} strata_torch_fidelity;

/* The device a fidelity replay assumes when no capacity is given: 80 GiB. */
#define STRATA_TORCH_CAPACITY (UINT64_C(80) << 30)

/* Replays `trace` (a converted snapshot) through allocator `spec` (e.g.
 * "caching") on one memory of `capacity` bytes, applying the trace's
 * `option allocator.*` lines, and compares with sum's ground truth.
 * capacity 0: STRATA_TORCH_CAPACITY, with the trace's inferred
 * allocator.device_limit; a capacity given wins over that limit. */
bool strata_torch_measure(strata_source *trace, const strata_torch_summary *sum,
                          const char *spec, uint64_t capacity, strata_torch_fidelity *out,
                          GError **err);

/* The pinned host memory a host fidelity replay assumes when no capacity is
 * given: 2 TiB, a bound above any pinned history (not a hardware figure). */
#define STRATA_TORCH_HOST_CAPACITY (UINT64_C(2) << 40)

/* Replays the trace's ops on memory `host` (the snapshot's pinned host
 * allocator, sum->has_host) through caching-host on `capacity` bytes (0:
 * STRATA_TORCH_HOST_CAPACITY) and compares with the host's ground truth
 * (host_peak_reserved, host_final_reserved, host_segment_alloc_sizes). */
bool strata_torch_measure_host(strata_source *trace, const strata_torch_summary *sum,
                               uint64_t capacity, strata_torch_fidelity *out, GError **err);

/* Replays the memory events of `path` (device sum->device, as imported into
 * sum) through allocator `spec` on `capacity` bytes (0: 80 GiB) and compares
 * the peak reserved with the file's. */
bool strata_kineto_measure(const char *path, const strata_kineto_summary *sum, const char *spec,
                           uint64_t capacity, strata_torch_fidelity *out, GError **err);

#endif
