/*
 * capture_trace.h: the trace-writing half of `strata capture`: hooks that
 * turn observed CUDA runtime calls into `strata-trace 1` lines.
 *
 * The LD_PRELOAD library (capture_preload.c) calls these hooks from its
 * interceptors; tests call them directly, without a GPU. Pointers, streams
 * and events are plain integers here, so nothing needs CUDA's headers.
 *
 * Mapping:
 *  - device allocations (cudaMalloc, cudaMallocAsync) are buffers d0, d1...
 *    in memory `hbm`; pinned ones (cudaHostAlloc, cudaMallocHost) p0... in
 *    `host`; frees free them (on their stream when async);
 *  - a copy resolves each pointer to the live allocation containing it; a
 *    pointer strata did not see allocated (malloc'd host memory, or device
 *    memory from before the capture) becomes a temporary buffer h0... in
 *    `pageable` (or t0... in `hbm`) allocated just before the copy and freed
 *    just after;
 *  - the NULL stream is `main`; other streams s0, s1... by first use;
 *  - cudaEventRecord is `record eN`, cudaStreamWaitEvent `wait eN` (skipped,
 *    with a comment, when the event was never recorded);
 *  - cudaStreamSynchronize(S) is `record syncN stream=S` + `wait syncN` on
 *    main (the host blocks, and main stands for the host's program order);
 *    cudaDeviceSynchronize does the same for every stream seen;
 *  - a kernel launch is `compute NAME stream=S` (NAME from its symbol);
 *    CUDA 13's <<<...>>> launches through a cudaKernel_t handle that
 *    __cudaGetKernel made for the host stub, so the capture keeps a table
 *    handle -> stub (strata_capture_kernel_handle) to name such launches by
 *    their stub.
 * Every op carries at=, its time since the capture started (unless
 * timestamps are off), for comparison with a replay.
 *
 * Invariants: the file at `path` appears only when the capture is closed
 * (written to a temporary beside it, then renamed); every op line written
 * names only buffers and events written before it, so the trace passes
 * trace/check.h; hooks are thread-safe (one mutex).
 */
#ifndef STRATA_CAPTURE_TRACE_H
#define STRATA_CAPTURE_TRACE_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct strata_capture strata_capture;

typedef enum {
    STRATA_CAPTURE_DEVICE,   /* cudaMalloc / cudaMallocAsync: hbm */
    STRATA_CAPTURE_PINNED,   /* cudaHostAlloc / cudaMallocHost: host */
} strata_capture_memory;

/* The direction a copy was asked for, as cudaMemcpyKind numbers it. */
typedef enum {
    STRATA_CAPTURE_H2H = 0,
    STRATA_CAPTURE_H2D = 1,
    STRATA_CAPTURE_D2H = 2,
    STRATA_CAPTURE_D2D = 3,
    STRATA_CAPTURE_DEFAULT = 4, /* inferred from the pointers */
} strata_capture_copy_kind;

/* comment: a line for the header (the program captured); may be NULL. */
strata_capture *strata_capture_open(const char *path, const char *comment, bool timestamps, GError **err);
/* Writes the file and frees c. */
bool strata_capture_close(strata_capture *c, GError **err);
uint64_t strata_capture_op_count(const strata_capture *c);

void strata_capture_alloc(strata_capture *c, uintptr_t ptr, uint64_t size, strata_capture_memory mem,
                          uintptr_t stream);
void strata_capture_free(strata_capture *c, uintptr_t ptr, uintptr_t stream);
void strata_capture_memcpy(strata_capture *c, uintptr_t dst, uintptr_t src, uint64_t bytes,
                           strata_capture_copy_kind kind, uintptr_t stream);
void strata_capture_event_record(strata_capture *c, uintptr_t event, uintptr_t stream);
void strata_capture_stream_wait(strata_capture *c, uintptr_t stream, uintptr_t event);
void strata_capture_stream_sync(strata_capture *c, uintptr_t stream);
void strata_capture_device_sync(strata_capture *c);
/* name: the kernel's symbol, or NULL (then "kernel_<address>"). */
void strata_capture_launch(strata_capture *c, const char *name, uintptr_t func, uintptr_t stream);
/* __cudaGetKernel gave `handle` for the host stub `func`: remembered (a later
 * call for the same handle replaces it). Writes nothing. */
void strata_capture_kernel_handle(strata_capture *c, uintptr_t handle, uintptr_t func);
/* The host stub remembered for `handle`, or 0 when none was. */
uintptr_t strata_capture_kernel_func(strata_capture *c, uintptr_t handle);

#endif
