/*
 * plan.h: a trace resolved for real execution (shared by the host and CUDA
 * backends).
 *
 * strata_plan_build() reads the whole op stream once through the checker
 * (trace/check.h), so names become numbers: streams, buffers (one id per
 * alloc), memories (the hardware model's, or the shared names without one),
 * compute units, and records (each `record` op gets a global record number;
 * a `wait` names the record it waits for, as the checker resolved it).
 * It then places every buffer inside its memory with the memory's placement
 * (placement/placement.h: strata's allocator from the memory's spec and the
 * trace's `option allocator.*` lines, its ledger, the planners' lifetimes,
 * the invariant check), in file order, exactly as `strata run` places
 * them, so that a backend can make one real allocation per memory (its
 * `extent`) and find a buffer at base + offset.
 *
 * Invariants:
 *  1. ops[] are the trace's ops in file order (options excluded); ops[i].index == i.
 *  2. every buffer id an op names is < buffers->len, and a placed buffer
 *     lies inside [0, extent) of its memory.
 *  3. a wait's record number is < n_records and belongs to an earlier op.
 *  4. when oom is set the plan stops before the op that failed (n_ops is
 *     that op's index) and oom_* describe it.
 */
#ifndef STRATA_BACKEND_PLAN_H
#define STRATA_BACKEND_PLAN_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "hw/hw.h"
#include "results/results.h"
#include "trace/source.h"

typedef struct strata_plan_op {
    strata_op_kind kind;
    uint64_t index;          /* op index (options excluded) */
    uint64_t line;           /* trace line */
    uint32_t stream;
    char *label;             /* buffer, event or compute label */
    uint64_t buf;            /* ALLOC, FREE: buffer. COPY: destination */
    uint64_t src;            /* COPY: source buffer */
    uint64_t bytes;          /* COPY: bytes. ALLOC: size. COMPUTE: operand bytes */
    int32_t memory;          /* ALLOC, FREE: memory; else -1 */
    int32_t src_memory, dst_memory; /* COPY; else -1 */
    uint32_t unit;           /* COMPUTE: compute unit */
    strata_dtype dtype;      /* COMPUTE: its dtype=, else its first operand's (for the peak) */
    bool has_flops;
    double flops;
    bool has_time;
    double time_s;
    char *kernel;            /* COMPUTE: kernel= (gemm, flash-attention, ...) or NULL */
    uint32_t n_kdims;        /* COMPUTE: dims= extents, outermost first */
    uint64_t kdims[STRATA_MAX_DIMS];
    uint32_t n_ins, n_outs;  /* COMPUTE operands */
    uint64_t *ins, *outs;    /* buffer ids */
    uint64_t record;         /* RECORD: its record number. WAIT: the record awaited */
} strata_plan_op;

typedef struct strata_plan_buffer {
    char *name;
    uint32_t memory;
    uint64_t size;
    uint64_t offset;         /* placement inside the memory */
    uint32_t stream;         /* stream of its alloc */
    strata_tag tag;
    strata_dtype dtype;
    uint64_t alloc_op;       /* op index of its alloc */
    uint64_t free_op;        /* op index of its free, or UINT64_MAX */
} strata_plan_buffer;

typedef struct strata_plan_memory {
    char *name;
    strata_mem_kind kind;
    bool pageable;
    uint64_t capacity;
    uint64_t alignment;
    char *allocator;         /* spec used for placement, every parameter included */
    uint64_t extent;         /* bytes a real allocation must have: max end offset */
    struct strata_placement *placement; /* owned: the allocator and its ledger */
    struct strata_ledger *ledger; /* the placement's: the accounting (ledger/ledger.h) */
    uint64_t n_buffers;
} strata_plan_memory;

typedef struct strata_plan {
    char *origin;
    char *hardware;          /* hw name or NULL */
    GArray *ops;             /* strata_plan_op */
    GArray *buffers;         /* strata_plan_buffer, by id */
    GArray *memories;        /* strata_plan_memory */
    GPtrArray *streams;      /* char *, by stream index */
    GPtrArray *units;        /* char *, compute unit names */
    GArray *unit_flops;      /* double, peak FLOP/s per unit (0 without hw) */
    uint64_t n_records;
    bool oom;
    uint64_t oom_op;         /* index of the failing alloc */
    uint64_t oom_line;
    uint64_t oom_free, oom_largest_free;
} strata_plan;

typedef struct strata_plan_options {
    /* Allocator spec for every memory, or NULL for each memory's own (hw)
     * or STRATA_ALLOC_DEFAULT (no hw). */
    const char *allocator;
    /* Check the allocators' invariants after every call (--check-allocators):
     * a broken one fails the build with STRATA_ERROR_INTERNAL. */
    bool check_allocators;
} strata_plan_options;

/* hw may be NULL; opt may be NULL (every field zero). */
strata_plan *strata_plan_build(const strata_hw *hw, strata_source *src, const strata_plan_options *opt,
                               GError **err);
void strata_plan_free(strata_plan *plan);

static inline const strata_plan_op *strata_plan_op_at(const strata_plan *p, uint64_t i)
{
    return &g_array_index(p->ops, strata_plan_op, i);
}
static inline const strata_plan_buffer *strata_plan_buffer_at(const strata_plan *p, uint64_t id)
{
    return &g_array_index(p->buffers, strata_plan_buffer, id);
}
static inline const strata_plan_memory *strata_plan_memory_at(const strata_plan *p, uint32_t m)
{
    return &g_array_index(p->memories, strata_plan_memory, m);
}

/* A measured run: start/end of every planned op (seconds from the run's start). */
typedef struct strata_plan_timing {
    double *start_s, *end_s; /* n_ops each */
    double makespan_s;
} strata_plan_timing;

/* Results from a plan and its measured timing: memories, streams (busy and
 * stall), links (bytes and busy time along hw's routes), compute units, and
 * a span for every op. `producer` is "host" or "cuda". */
strata_results *strata_plan_results(const strata_plan *plan, const strata_hw *hw,
                                    const strata_plan_timing *timing, const char *producer);

/* Sets r's "replay" extra: the backend's name, its device memory mode
 * (NULL: none, the member is left out), warmup and repeats, and the makespan
 * of each of the `repeats` measured runs. */
void strata_plan_set_replay_extra(strata_results *r, const char *backend, const char *device_memory, int warmup,
                                  int repeats, const double *makespans);

/* Index of the median of n makespans (the lower median for even n). */
int strata_plan_median_run(const double *makespans, int n);

#endif
