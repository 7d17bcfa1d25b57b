/*
 * serve_graph_limit.h: an engine's CUDA graph limit by hardware, a row an
 * engine row names (serve_engine.h's graph_limit, serve_graph_limit.c):
 * the largest decode batch it captures when none is given
 * (cuda_graph_max_bs, from the GPU's memory and the TP size), the batch
 * sizes it captures up to a limit (cuda_graph_bs), and the captured size a
 * decode batch replays (the first that holds it). A decode batch above the
 * largest captured size runs eagerly (SGLang's CudaGraphRunner.can_run:
 * batch_size <= max_bs), with the eager host chain (serve_eager.h) and the
 * eager all-reduces (serve_cost.h's strata_serve_cost_eager_extra).
 *
 * Invariants: a default limit is >= 1; the largest captured size under a
 * limit L >= 1 is in [1, L]; the size a batch n replays is >= n and at most
 * that largest, or 0 where n is above it (the step runs eagerly).
 */
#ifndef STRATA_SERVE_GRAPH_LIMIT_H
#define STRATA_SERVE_GRAPH_LIMIT_H

#include <stdint.h>

typedef struct strata_serve_graph_limit strata_serve_graph_limit;

/* The row called name, or NULL (name NULL or unknown). */
const strata_serve_graph_limit *strata_serve_graph_limit_find(const char *name);
/* The engine's cuda_graph_max_bs where none is given: for a device of capacity_bytes of memory at tp ranks (the
 * release's rule by the memory nvidia-smi or rocminfo reports, in MiB). */
uint32_t strata_serve_graph_limit_default(const strata_serve_graph_limit *r, uint64_t capacity_bytes, uint32_t tp);
/* The largest batch it captures under cuda_graph_max_bs max_bs (>= 1): CudaGraphRunner's max_bs, the capture
 * list's last size <= max_bs. */
uint32_t strata_serve_graph_limit_largest(const strata_serve_graph_limit *r, uint32_t max_bs);
/* The captured size a decode batch of n (>= 1) replays under max_bs (bisect_left on the capture list), or 0 where
 * n is above the largest (eager). */
uint32_t strata_serve_graph_limit_size(const strata_serve_graph_limit *r, uint32_t max_bs, uint32_t n);

#endif
