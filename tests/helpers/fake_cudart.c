/*
 * fake_cudart.c: a stand-in for the CUDA runtime with no GPU behind it, for
 * tests of the capture library (sim/capture/capture_preload.c). Memory calls
 * use malloc; everything else succeeds and does nothing. A program linked
 * against it (capture_demo.c) and run under `strata capture` exercises the
 * real interceptors: they find these functions with dlsym(RTLD_NEXT).
 */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

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
cudaError_t cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shm, cudaStream_t s)
{
    (void)f; (void)g; (void)b; (void)args; (void)shm; (void)s;
    return cudaSuccess;
}
