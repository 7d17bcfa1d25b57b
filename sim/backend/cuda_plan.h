/*
 * cuda_plan.h: the CUDA backend's plan, i.e. the list of CUDA runtime calls
 * that replays a trace, made on the host without a GPU (cuda_plan.c) and
 * executed by the device code (cuda.cu, built only with the CUDA toolkit).
 *
 * Design: strata_cuda_plan_build() turns a backend plan (plan.h) into
 *  - regions: the real allocations. A `host` memory is one cudaHostAlloc
 *    (pinned) region, or one malloc region when the hardware model says
 *    `pageable`; a device (or on-chip) memory is, by --device-memory mode,
 *      malloc: one cudaMalloc per buffer, made before timing;
 *      arena:  one cudaMalloc of the memory's extent, buffers at the offsets
 *              strata's allocator (models/alloc) chose;
 *      async:  one cudaMallocAsync/cudaFreeAsync per buffer, at the alloc
 *              and free ops, on their streams, from the device's default
 *              memory pool (stream-ordered; its cost is timed).
 *    Never managed memory.
 *  - calls: setup calls (streams, events, regions), then the timed calls in
 *    file order, each tagged with its op: cudaMemcpyAsync for a copy,
 *    cudaEventRecord / cudaStreamWaitEvent for record / wait (one cudaEvent
 *    per record, so a wait waits for exactly the record the checker
 *    resolved), a compute kernel doing the op's flops and touching its
 *    operands (or a spin kernel for time=), NOP for ops with nothing to do.
 *    A compute that names `kernel=gemm dims=[B]xMxKxN` in bf16, f16, f32 or
 *    tf32 (no dtype: bf16, as the simulator's kernel model) is instead one
 *    cuBLAS strided-batched GEMM (cublasGemmStridedBatchedEx, loaded with
 *    dlopen when the plan has one) on tensor cores, over a scratch region
 *    per element family (bf16, f16, f32 for f32 and tf32) made and filled
 *    at setup with values of that type: A[M,K], B[K,N], C[M,N] row-major, B
 *    products, FP32 accumulation, output in the input's type. The op's own
 *    buffers are not touched by it (they need not hold the operands' shape).
 *    A compute with flops= and no kernel= in bf16, f16 or tf32 (no dtype:
 *    bf16, the unit's `flops`) touches its operands with flops=0 and then
 *    does its flops as square GEMMs of that type on the same scratch (side
 *    cbrt(flops / 2 reps) to a multiple of 8, at most 8192, reps of them):
 *    the tensor-core work the simulator times, not FP32 multiply-adds.
 *    The executor brackets every op with timing events on its stream.
 *
 * This header is plain C (no GLib types in the executor's interface) so
 * that cuda.cu can include it.
 *
 * Invariants: every region, event, stream and operand index in a call is in
 * range; the timed calls of op i come after those of op i-1; a wait's event
 * is recorded by an earlier call.
 */
#ifndef STRATA_CUDA_PLAN_H
#define STRATA_CUDA_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    STRATA_CUDA_DEVICE_MALLOC, /* cudaMalloc per buffer */
    STRATA_CUDA_DEVICE_ARENA,  /* one cudaMalloc arena, strata's allocator */
    STRATA_CUDA_DEVICE_ASYNC,  /* cudaMallocAsync pools */
} strata_cuda_device_mode;

typedef enum {
    STRATA_CUDA_REGION_DEVICE,   /* cudaMalloc, setup */
    STRATA_CUDA_REGION_ASYNC,    /* cudaMallocAsync, timed */
    STRATA_CUDA_REGION_PINNED,   /* cudaHostAlloc, setup */
    STRATA_CUDA_REGION_PAGEABLE, /* malloc, setup, touched */
} strata_cuda_region_kind;

typedef struct strata_cuda_region {
    strata_cuda_region_kind kind;
    uint64_t bytes;
    uint32_t memory;   /* plan memory index */
    int64_t buffer;    /* buffer id for per-buffer regions, else -1 */
} strata_cuda_region;

typedef enum {
    STRATA_CUDA_CALL_STREAM_CREATE,    /* setup: stream */
    STRATA_CUDA_CALL_EVENT_CREATE,     /* setup: event (cudaEventDisableTiming) */
    STRATA_CUDA_CALL_MALLOC,           /* setup: region (cudaMalloc) */
    STRATA_CUDA_CALL_HOST_ALLOC,       /* setup: region (cudaHostAlloc) */
    STRATA_CUDA_CALL_PAGEABLE_ALLOC,   /* setup: region (malloc + touch) */
    STRATA_CUDA_CALL_MEMPOOL_RETAIN,   /* setup: default pool keeps freed memory */
    STRATA_CUDA_CALL_MALLOC_ASYNC,     /* timed: region on stream */
    STRATA_CUDA_CALL_FREE_ASYNC,       /* timed: region on stream */
    STRATA_CUDA_CALL_MEMCPY_ASYNC,     /* timed: dst/src region+offset, bytes, dir, stream */
    STRATA_CUDA_CALL_EVENT_RECORD,     /* timed: event on stream */
    STRATA_CUDA_CALL_STREAM_WAIT_EVENT,/* timed: stream waits for event */
    STRATA_CUDA_CALL_LAUNCH_COMPUTE,   /* timed: flops, operands[first, first+n) */
    STRATA_CUDA_CALL_LAUNCH_SPIN,      /* timed: busy for time_s */
    STRATA_CUDA_CALL_GEMM_SETUP,       /* setup: region (scratch, cudaMalloc + fill as gemm.type) and cuBLAS */
    STRATA_CUDA_CALL_LAUNCH_GEMM,      /* timed: gemm over the scratch region */
    STRATA_CUDA_CALL_NOP,              /* timed: op with no CUDA call */
} strata_cuda_call_kind;

typedef enum { STRATA_CUDA_H2H, STRATA_CUDA_H2D, STRATA_CUDA_D2H, STRATA_CUDA_D2D } strata_cuda_dir;

/* A GEMM's element type: inputs and output; FP32 accumulation (TF32: FP32
 * data through the tensor cores' TF32 path). */
typedef enum { STRATA_CUDA_GEMM_BF16, STRATA_CUDA_GEMM_F16, STRATA_CUDA_GEMM_F32, STRATA_CUDA_GEMM_TF32 } strata_cuda_gemm_type;

/* A GEMM's problem: `batch` products C[m,n] = A[m,k] B[k,n]. */
typedef struct strata_cuda_gemm {
    strata_cuda_gemm_type type;
    uint64_t batch, m, k, n;
} strata_cuda_gemm;

typedef struct strata_cuda_operand {
    uint32_t region;
    uint64_t offset, bytes;
    bool output;
} strata_cuda_operand;

typedef struct strata_cuda_call {
    strata_cuda_call_kind kind;
    int64_t op;          /* op index for timed calls, -1 for setup */
    uint32_t stream;
    uint32_t region, src_region;   /* MALLOC*, FREE_ASYNC, MEMCPY (dst, src) */
    uint64_t offset, src_offset;   /* MEMCPY */
    uint64_t bytes;                /* MEMCPY, MALLOC*, LAUNCH_COMPUTE (operand bytes) */
    strata_cuda_dir dir;           /* MEMCPY */
    uint32_t event;                /* EVENT_* */
    double flops;                  /* LAUNCH_COMPUTE */
    double time_s;                 /* LAUNCH_SPIN */
    uint32_t first_operand, n_operands; /* LAUNCH_COMPUTE */
    strata_cuda_gemm gemm;         /* LAUNCH_GEMM (region: the scratch) */
} strata_cuda_call;

typedef struct strata_cuda_plan {
    strata_cuda_device_mode mode;
    strata_cuda_region *regions;
    uint32_t n_regions;
    strata_cuda_call *calls;
    size_t n_calls;
    size_t n_setup;            /* calls[0, n_setup) are setup calls */
    strata_cuda_operand *operands;
    uint32_t n_operands;
    uint32_t n_streams;
    uint32_t n_events;
    uint64_t n_ops;
    uint32_t *op_stream;       /* stream of each op (n_ops) */
} strata_cuda_plan;

/* Bytes of one element of a GEMM of type t: 2 (bf16, f16) or 4 (f32, tf32). */
static inline uint64_t strata_cuda_gemm_elem_bytes(strata_cuda_gemm_type t)
{
    return t == STRATA_CUDA_GEMM_BF16 || t == STRATA_CUDA_GEMM_F16 ? 2 : 4;
}

/* A GEMM's operands in its scratch region: A at 0, B at *b_offset, C at
 * *c_offset (either may be NULL), each rounded up to 256 B; returns the
 * bytes of all three, the scratch it needs. Inline: the plan (C) and the
 * device code (cuda.cu) both read it. */
static inline uint64_t strata_cuda_gemm_layout(const strata_cuda_gemm *g, uint64_t *b_offset, uint64_t *c_offset)
{
    uint64_t es = strata_cuda_gemm_elem_bytes(g->type);
    uint64_t a = (g->batch * g->m * g->k * es + 255) / 256 * 256;
    uint64_t b = (g->batch * g->k * g->n * es + 255) / 256 * 256;
    uint64_t c = (g->batch * g->m * g->n * es + 255) / 256 * 256;
    if (b_offset)
        *b_offset = a;
    if (c_offset)
        *c_offset = a + b;
    return a + b + c;
}

/* From a backend plan (plan.h); never fails (the plan is checked). */
struct strata_plan;
strata_cuda_plan *strata_cuda_plan_build(const struct strata_plan *plan, strata_cuda_device_mode mode);

/* Mode names "malloc", "arena", "async". */
bool strata_cuda_device_mode_from_name(const char *name, strata_cuda_device_mode *mode);
const char *strata_cuda_device_mode_name(strata_cuda_device_mode mode);

/* One line per call, for tests and `strata replay --backend cuda --plan`:
 * "cudaMemcpyAsync H2D dst=r1+0 src=r0+0 bytes=1073741824 stream=0 op=3" (g_free) */
char *strata_cuda_call_to_text(const strata_cuda_plan *plan, const strata_cuda_call *call);

void strata_cuda_plan_free(strata_cuda_plan *plan);

/* What the device code measured in one executor run. */
enum {
    STRATA_CUDA_OK = 0,
    STRATA_CUDA_NO_DEVICE = 1,
    STRATA_CUDA_FAILED = 2,
};

/* Runs setup once, then the timed calls warmup + repeats times.
 * start_s/end_s: repeats * n_ops seconds from each run's start;
 * makespans: repeats. msg: why it failed. Returns STRATA_CUDA_*. */
int strata_cuda_exec(const strata_cuda_plan *plan, int warmup, int repeats, double *start_s, double *end_s,
                     double *makespans, char *msg, size_t msg_len);

/* Calibration of a CUDA device (cuda.cu). Bandwidths in bytes/s for sizes
 * 4 KiB * 4^i, i < n_sizes. */
enum { STRATA_CUDA_CAL_SIZES = 10 };
typedef struct strata_cuda_calibration {
    char device[256];
    uint64_t device_memory;        /* bytes */
    int n_sizes;
    uint64_t size[STRATA_CUDA_CAL_SIZES];
    double h2d_pinned[STRATA_CUDA_CAL_SIZES], d2h_pinned[STRATA_CUDA_CAL_SIZES];
    double h2d_pageable[STRATA_CUDA_CAL_SIZES], d2h_pageable[STRATA_CUDA_CAL_SIZES];
    double d2d[STRATA_CUDA_CAL_SIZES];
    double concurrent_h2d_d2h;     /* aggregate, pinned, largest size, two streams */
    double concurrent_h2d_h2d;     /* aggregate, pinned, largest size, two streams */
    double h2d_h2d_first_share;    /* the H2D+H2D pair: the first copy's end over the pair's end (median);
                                    * 0.5 when the two ran one after the other, 1 when they shared */
    double latency_h2d, latency_d2h, latency_d2d; /* 4-byte copy, event-timed */
    double launch_latency;         /* empty kernel, event-timed */
    double flops_f32;              /* FMA kernel FLOP/s */
    double flops_gemm[4];          /* square cuBLAS GEMM FLOP/s by strata_cuda_gemm_type; 0: not measured */
    uint64_t gemm_side;            /* the GEMMs' side */
    char gemm_note[256];           /* why no GEMM was measured (cuBLAS not loaded), else empty */
    double device_bandwidth;       /* read+write kernel bytes/s */
} strata_cuda_calibration;

int strata_cuda_calibrate_device(uint64_t max_size, strata_cuda_calibration *out, char *msg, size_t msg_len);

#ifdef __cplusplus
}
#endif

#endif
