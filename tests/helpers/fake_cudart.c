/*
 * fake_cudart.c: a stand-in for the CUDA runtime with no GPU behind it, for
 * tests of the capture library (sim/capture/capture_preload.c). Memory calls
 * use malloc; everything else succeeds and does nothing. A program linked
 * against it (capture_demo.c) and run under `strata capture` exercises the
 * real interceptors: they find these functions with dlsym(RTLD_NEXT).
 *
 * Kernels: like the real runtime, it keeps a table of the kernels it knows
 * (host stub -> device name, from __cudaRegisterFunction as nvcc's
 * registration code calls it, or made by __cudaGetKernel / a launch), and a
 * cudaKernel_t is a pointer to an entry. Its launch entry points call each
 * other through the PLT (cudaLaunchKernelExC, cudaLaunchKernel_ptsz and
 * __cudaLaunchKernel_ptsz -> cudaLaunchKernel -> __cudaLaunchKernel), so a
 * capture that counted nested launches would record them twice. The table is
 * this stand-in's process-wide state, as it is the real runtime's. It also
 * takes what nvcc's generated host code calls (fat binary registration,
 * __cudaPush/PopCallConfiguration), for capture_demo_nvcc.cu.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* CUDA 13's launch path and the others the C headers do not declare. */
#include "capture/cuda_launch.h"
void **__cudaRegisterFatBinary(void *fatCubin);
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
void __cudaUnregisterFatBinary(void **fatCubinHandle);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st *stream);
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream);

cudaError_t cudaMalloc(void **p, size_t size) { *p = malloc(size ? size : 1); return *p ? cudaSuccess : cudaErrorMemoryAllocation; }
cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t s) { (void)s; return cudaMalloc(p, size); }
cudaError_t cudaFreeAsync(void *p, cudaStream_t s) { (void)s; return cudaFree(p); }
cudaError_t cudaMallocHost(void **p, size_t size) { return cudaMalloc(p, size); }
cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags) { (void)flags; return cudaMalloc(p, size); }
cudaError_t cudaFreeHost(void *p) { return cudaFree(p); }
cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind k) { (void)k; memmove(d, s, n); return cudaSuccess; }
cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, enum cudaMemcpyKind k, cudaStream_t st)
{
    (void)st;
    return cudaMemcpy(d, s, n, k);
}
cudaError_t cudaStreamCreate(cudaStream_t *s) { *s = (cudaStream_t)malloc(1); return cudaSuccess; }
cudaError_t cudaStreamDestroy(cudaStream_t s) { free(s); return cudaSuccess; }
cudaError_t cudaEventCreate(cudaEvent_t *e) { *e = (cudaEvent_t)malloc(1); return cudaSuccess; }
cudaError_t cudaEventDestroy(cudaEvent_t e) { free(e); return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { (void)e; (void)s; return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int f) { (void)s; (void)e; (void)f; return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { (void)s; return cudaSuccess; }
cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
const char *cudaGetErrorString(cudaError_t e) { (void)e; return "error of the stand-in CUDA runtime"; }

typedef struct fake_kernel {
    const void *stub;
    const char *name; /* NULL unless registered */
} fake_kernel;
static fake_kernel kernels[16];
static size_t n_kernels;

/* The entry of stub (added when new); NULL when the table is full. */
static fake_kernel *kernel_of(const void *stub)
{
    for (size_t i = 0; i < n_kernels; i++)
        if (kernels[i].stub == stub)
            return &kernels[i];
    if (n_kernels == sizeof kernels / sizeof kernels[0])
        return NULL;
    kernels[n_kernels].stub = stub;
    return &kernels[n_kernels++];
}

void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    (void)fatCubinHandle; (void)deviceName; (void)thread_limit; (void)tid; (void)bid; (void)bDim; (void)gDim;
    (void)wSize;
    fake_kernel *k = kernel_of(hostFun);
    if (k)
        k->name = deviceFun;
}

/* What nvcc's generated host code calls besides (crt/host_runtime.h): the
 * registration of its fat binary around the __cudaRegisterFunction calls,
 * and <<<...>>>'s configuration, pushed by the caller and popped by the
 * stub (per thread, as in the real runtime). */
void **__cudaRegisterFatBinary(void *fatCubin)
{
    static void *handle;
    (void)fatCubin;
    return &handle;
}
void __cudaRegisterFatBinaryEnd(void **fatCubinHandle) { (void)fatCubinHandle; }
void __cudaUnregisterFatBinary(void **fatCubinHandle) { (void)fatCubinHandle; }

static _Thread_local struct {
    dim3 grid, block;
    size_t shared_mem;
    cudaStream_t stream;
} call_config;

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st *stream)
{
    call_config.grid = gridDim;
    call_config.block = blockDim;
    call_config.shared_mem = sharedMem;
    call_config.stream = stream;
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream)
{
    *gridDim = call_config.grid;
    *blockDim = call_config.block;
    *sharedMem = call_config.shared_mem;
    *(cudaStream_t *)stream = call_config.stream;
    return cudaSuccess;
}

/* Takes a stub or a cudaKernel_t, as the real one does. */
cudaError_t cudaFuncGetName(const char **name, const void *func)
{
    for (size_t i = 0; i < n_kernels; i++)
        if ((kernels[i].stub == func || (const void *)&kernels[i] == func) && kernels[i].name) {
            *name = kernels[i].name;
            return cudaSuccess;
        }
    return cudaErrorInvalidDeviceFunction;
}

cudaError_t __cudaGetKernel(strata_cuda_kernel *kernel, const void *func)
{
    fake_kernel *k = kernel_of(func);
    *kernel = (strata_cuda_kernel)k;
    return k ? cudaSuccess : cudaErrorInvalidDeviceFunction;
}

cudaError_t __cudaLaunchKernel(strata_cuda_kernel kernel, dim3 g, dim3 b, void **args, size_t shm, cudaStream_t s)
{
    (void)kernel; (void)g; (void)b; (void)args; (void)shm; (void)s;
    return cudaSuccess;
}

cudaError_t __cudaLaunchKernel_ptsz(strata_cuda_kernel kernel, dim3 g, dim3 b, void **args, size_t shm,
                                    cudaStream_t s)
{
    uintptr_t k = (uintptr_t)kernel;
    if (k >= (uintptr_t)kernels && k < (uintptr_t)(kernels + n_kernels)) /* one of ours: through its stub */
        return cudaLaunchKernel_ptsz(((fake_kernel *)kernel)->stub, g, b, args, shm, s);
    return __cudaLaunchKernel(kernel, g, b, args, shm, s);
}

cudaError_t cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shm, cudaStream_t s)
{
    fake_kernel *k = kernel_of(f);
    return k ? __cudaLaunchKernel((strata_cuda_kernel)k, g, b, args, shm, s) : cudaErrorInvalidDeviceFunction;
}

cudaError_t cudaLaunchKernel_ptsz(const void *f, dim3 g, dim3 b, void **args, size_t shm, cudaStream_t s)
{
    return cudaLaunchKernel(f, g, b, args, shm, s);
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *f, void **args)
{
    return cudaLaunchKernel(f, config->gridDim, config->blockDim, args, config->dynamicSmemBytes, config->stream);
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *f, void **args)
{
    return cudaLaunchKernelExC(config, f, args);
}
