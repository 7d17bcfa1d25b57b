/*
 * capture_preload.c: the LD_PRELOAD library of `strata capture`
 * (libstrata_capture.so, built only with the CUDA toolkit's headers).
 *
 * It defines the CUDA runtime entry points below; each calls the real one,
 * found with dlsym(RTLD_NEXT), and on success hands what happened to the
 * hooks of capture_trace.h, which write the trace. Intercepted:
 * cudaMalloc, cudaFree, cudaMallocAsync, cudaFreeAsync, cudaMallocHost,
 * cudaHostAlloc, cudaFreeHost, cudaMemcpy, cudaMemcpyAsync, cudaMemcpy2D,
 * cudaMemcpy2DAsync, cudaMemcpyPeer, cudaMemcpyPeerAsync,
 * cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventRecord,
 * cudaStreamWaitEvent, and the kernel launches: cudaLaunchKernel[_ptsz]
 * (what <<<...>>> compiles to before CUDA 13, or with __NV_LEGACY_LAUNCH),
 * cudaLaunchKernelExC[_ptsz] (launches with attributes), and CUDA 13's
 * <<<...>>>: __cudaGetKernel(&handle, stub) once per kernel, then
 * __cudaLaunchKernel[_ptsz](handle, grid, block, args, shmem, stream)
 * (crt/host_runtime.h __cudaLaunch, crt/device_functions.h). A launch is
 * named by its host stub (the one __cudaGetKernel gave the handle for).
 *
 * The program must link the CUDA runtime dynamically (nvcc -cudart shared;
 * PyTorch and most frameworks do): calls inside a statically linked cudart
 * never reach a preloaded symbol.
 *
 * Nested calls (an entry point that calls another, e.g. cudaLaunchKernel
 * and __cudaLaunchKernel either way round) are recorded once, by the
 * outermost interceptor (a per-thread nesting count).
 *
 * Invariant: the one recorder below is the only process-wide state in
 * strata (the handle -> stub table of CUDA 13 launches lives inside it). An
 * LD_PRELOAD library has no caller to hand it a context, so it is made in
 * the constructor (path from STRATA_CAPTURE_OUT, default
 * strata-capture.trace) and written in the destructor.
 */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include "capture/capture_trace.h"
#include "capture/cuda_launch.h"

static strata_capture *recorder;
/* Calls of this thread inside an intercepted call: a runtime entry point that
 * calls another one (through the PLT) is recorded once, at the outside. */
static _Thread_local int nesting;

__attribute__((constructor)) static void capture_start(void)
{
    const char *path = getenv("STRATA_CAPTURE_OUT");
    const char *program = getenv("STRATA_CAPTURE_PROGRAM");
    GError *err = NULL;
    recorder = strata_capture_open(path && *path ? path : "strata-capture.trace", program, true, &err);
    if (!recorder) {
        fprintf(stderr, "strata capture: %s\n", err->message);
        g_clear_error(&err);
    }
}

__attribute__((destructor)) static void capture_stop(void)
{
    GError *err = NULL;
    strata_capture *c = recorder;
    recorder = NULL;
    if (c && !strata_capture_close(c, &err)) {
        fprintf(stderr, "strata capture: %s\n", err->message);
        g_clear_error(&err);
    }
}

/* The real entry point, looked up once. */
#define REAL(fn)                                                                                                     \
    static __typeof__(&fn) real_fn;                                                                                  \
    if (!real_fn)                                                                                                    \
        *(void **)(&real_fn) = dlsym(RTLD_NEXT, #fn);                                                                \
    if (!real_fn)                                                                                                    \
        return cudaErrorNotSupported

static strata_capture_copy_kind copy_kind(enum cudaMemcpyKind kind)
{
    switch (kind) {
    case cudaMemcpyHostToHost: return STRATA_CAPTURE_H2H;
    case cudaMemcpyHostToDevice: return STRATA_CAPTURE_H2D;
    case cudaMemcpyDeviceToHost: return STRATA_CAPTURE_D2H;
    case cudaMemcpyDeviceToDevice: return STRATA_CAPTURE_D2D;
    default: return STRATA_CAPTURE_DEFAULT;
    }
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    REAL(cudaMalloc);
    nesting++;
    cudaError_t e = real_fn(devPtr, size);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_alloc(recorder, (uintptr_t)*devPtr, size, STRATA_CAPTURE_DEVICE, 0);
    return e;
}

cudaError_t cudaFree(void *devPtr)
{
    REAL(cudaFree);
    nesting++;
    cudaError_t e = real_fn(devPtr);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_free(recorder, (uintptr_t)devPtr, 0);
    return e;
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t stream)
{
    REAL(cudaMallocAsync);
    nesting++;
    cudaError_t e = real_fn(devPtr, size, stream);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_alloc(recorder, (uintptr_t)*devPtr, size, STRATA_CAPTURE_DEVICE, (uintptr_t)stream);
    return e;
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t stream)
{
    REAL(cudaFreeAsync);
    nesting++;
    cudaError_t e = real_fn(devPtr, stream);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_free(recorder, (uintptr_t)devPtr, (uintptr_t)stream);
    return e;
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    REAL(cudaMallocHost);
    nesting++;
    cudaError_t e = real_fn(ptr, size);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_alloc(recorder, (uintptr_t)*ptr, size, STRATA_CAPTURE_PINNED, 0);
    return e;
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    REAL(cudaHostAlloc);
    nesting++;
    cudaError_t e = real_fn(pHost, size, flags);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_alloc(recorder, (uintptr_t)*pHost, size, STRATA_CAPTURE_PINNED, 0);
    return e;
}

cudaError_t cudaFreeHost(void *ptr)
{
    REAL(cudaFreeHost);
    nesting++;
    cudaError_t e = real_fn(ptr);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_free(recorder, (uintptr_t)ptr, 0);
    return e;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    REAL(cudaMemcpy);
    nesting++;
    cudaError_t e = real_fn(dst, src, count, kind);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_memcpy(recorder, (uintptr_t)dst, (uintptr_t)src, count, copy_kind(kind), 0);
    return e;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream)
{
    REAL(cudaMemcpyAsync);
    nesting++;
    cudaError_t e = real_fn(dst, src, count, kind, stream);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_memcpy(recorder, (uintptr_t)dst, (uintptr_t)src, count, copy_kind(kind), (uintptr_t)stream);
    return e;
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                         enum cudaMemcpyKind kind)
{
    REAL(cudaMemcpy2D);
    nesting++;
    cudaError_t e = real_fn(dst, dpitch, src, spitch, width, height, kind);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_memcpy(recorder, (uintptr_t)dst, (uintptr_t)src, (uint64_t)width * height, copy_kind(kind), 0);
    return e;
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t stream)
{
    REAL(cudaMemcpy2DAsync);
    nesting++;
    cudaError_t e = real_fn(dst, dpitch, src, spitch, width, height, kind, stream);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_memcpy(recorder, (uintptr_t)dst, (uintptr_t)src, (uint64_t)width * height, copy_kind(kind),
                              (uintptr_t)stream);
    return e;
}

cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
    REAL(cudaMemcpyPeer);
    nesting++;
    cudaError_t e = real_fn(dst, dstDevice, src, srcDevice, count);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_memcpy(recorder, (uintptr_t)dst, (uintptr_t)src, count, STRATA_CAPTURE_D2D, 0);
    return e;
}

cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                cudaStream_t stream)
{
    REAL(cudaMemcpyPeerAsync);
    nesting++;
    cudaError_t e = real_fn(dst, dstDevice, src, srcDevice, count, stream);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_memcpy(recorder, (uintptr_t)dst, (uintptr_t)src, count, STRATA_CAPTURE_D2D, (uintptr_t)stream);
    return e;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    REAL(cudaStreamSynchronize);
    nesting++;
    cudaError_t e = real_fn(stream);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_stream_sync(recorder, (uintptr_t)stream);
    return e;
}

cudaError_t cudaDeviceSynchronize(void)
{
    REAL(cudaDeviceSynchronize);
    nesting++;
    cudaError_t e = real_fn();
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_device_sync(recorder);
    return e;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    REAL(cudaEventRecord);
    nesting++;
    cudaError_t e = real_fn(event, stream);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_event_record(recorder, (uintptr_t)event, (uintptr_t)stream);
    return e;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    REAL(cudaStreamWaitEvent);
    nesting++;
    cudaError_t e = real_fn(stream, event, flags);
    nesting--;
    if (e == cudaSuccess && recorder && nesting == 0)
        strata_capture_stream_wait(recorder, (uintptr_t)stream, (uintptr_t)event);
    return e;
}

/* A launched kernel's name: its host stub's symbol when dladdr finds one
 * starting exactly at the stub (an executable built without -rdynamic, or a
 * library with hidden stubs, exports none, and dladdr would name the nearest
 * exported symbol below it: another function); else the device function's
 * name from the runtime's cudaFuncGetName (CUDA >= 12.3: CUPTI's
 * cupti_runtime_cbid.h lists it as cudaFuncGetName_v12030; it takes a stub
 * or a cudaKernel_t); else NULL ("kernel_<address>"). */
static const char *kernel_name(const void *func)
{
    Dl_info info;
    if (dladdr(func, &info) && info.dli_sname && info.dli_saddr == func)
        return info.dli_sname;
    static cudaError_t (*get_name)(const char **, const void *);
    static gsize looked;
    if (g_once_init_enter(&looked)) {
        *(void **)(&get_name) = dlsym(RTLD_NEXT, "cudaFuncGetName");
        g_once_init_leave(&looked, 1);
    }
    const char *name = NULL;
    if (get_name) {
        nesting++; /* nothing it calls is recorded */
        if (get_name(&name, func) != cudaSuccess)
            name = NULL;
        nesting--;
    }
    return name;
}

/* A successful outermost launch of func: a host stub, or a cudaKernel_t
 * handle (then named by the stub __cudaGetKernel gave it for, when seen). */
static void record_launch(const void *func, cudaStream_t stream)
{
    uintptr_t stub = strata_capture_kernel_func(recorder, (uintptr_t)func);
    const void *f = stub ? (const void *)stub : func;
    strata_capture_launch(recorder, kernel_name(f), (uintptr_t)f, (uintptr_t)stream);
}

/* A launch entry point of the runtime's signature (func a stub or a
 * cudaKernel_t handle): calls the real one, records the outermost success. */
#define LAUNCH_HOOK(fn, func_type)                                                                                  \
    cudaError_t fn(func_type func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem, cudaStream_t stream) \
    {                                                                                                              \
        REAL(fn);                                                                                                  \
        nesting++;                                                                                                 \
        cudaError_t e = real_fn(func, gridDim, blockDim, args, sharedMem, stream);                                 \
        nesting--;                                                                                                 \
        if (e == cudaSuccess && recorder && nesting == 0)                                                          \
            record_launch(func, stream);                                                                           \
        return e;                                                                                                  \
    }

LAUNCH_HOOK(cudaLaunchKernel, const void *)
LAUNCH_HOOK(cudaLaunchKernel_ptsz, const void *)

#ifdef STRATA_CAPTURE_LAUNCH_EX
/* The extensible launch: grid, block and stream in its config. */
#define LAUNCH_EX_HOOK(fn)                                                                                          \
    cudaError_t fn(const cudaLaunchConfig_t *config, const void *func, void **args)                                \
    {                                                                                                              \
        REAL(fn);                                                                                                  \
        nesting++;                                                                                                 \
        cudaError_t e = real_fn(config, func, args);                                                               \
        nesting--;                                                                                                 \
        if (e == cudaSuccess && recorder && nesting == 0 && config)                                                \
            record_launch(func, config->stream);                                                                   \
        return e;                                                                                                  \
    }

LAUNCH_EX_HOOK(cudaLaunchKernelExC)
LAUNCH_EX_HOOK(cudaLaunchKernelExC_ptsz)
#endif

/* CUDA 13 <<<...>>>: the handle for a stub, asked once per kernel (kept in a
 * static by the generated code). Remembered whatever the nesting: it names
 * the launches, it records nothing. */
cudaError_t __cudaGetKernel(strata_cuda_kernel *kernel, const void *func)
{
    REAL(__cudaGetKernel);
    nesting++;
    cudaError_t e = real_fn(kernel, func);
    nesting--;
    if (e == cudaSuccess && recorder && kernel && *kernel)
        strata_capture_kernel_handle(recorder, (uintptr_t)*kernel, (uintptr_t)func);
    return e;
}

LAUNCH_HOOK(__cudaLaunchKernel, strata_cuda_kernel)
LAUNCH_HOOK(__cudaLaunchKernel_ptsz, strata_cuda_kernel)
