/*
 * capture_demo.c: a small "CUDA program" for tests/test_capture.c, linked
 * against fake_cudart.c: allocates, copies both ways on two streams ordered
 * by an event, launches kernels (cudaLaunchKernel, as <<<...>>> compiled
 * before CUDA 13; CUDA 13's __cudaGetKernel + __cudaLaunchKernel[_ptsz];
 * cudaLaunchKernelExC; cudaLaunchKernel_ptsz), synchronizes, frees. It
 * prints the handle it launches without __cudaGetKernel, for the test.
 */
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* CUDA 13's launch path, which a C program must declare itself
 * (crt/device_functions.h declares it for nvcc's C++ only). */
#include "capture/cuda_launch.h"

/* The "kernels" (host stubs), with distinct bodies so that no two are
 * folded into one. The first two are exported (ENABLE_EXPORTS) so dladdr
 * names them; the static one is named only by the runtime, from its
 * registration (as nvcc's generated __cudaRegisterFunction call gives it). */
static volatile int demo_sink;
void strata_demo_kernel(void) { demo_sink = 1; }
void strata_demo_kernel13(void) { demo_sink = 2; }
static void hidden_kernel(void) { demo_sink = 3; }
static char not_a_kernel; /* a handle the capture never saw made */

int main(void)
{
    __cudaRegisterFunction(NULL, (const char *)hidden_kernel, (char *)"_Z13hidden_kernelv", "hidden_kernel", -1,
                           NULL, NULL, NULL, NULL, NULL);
    void *dev = NULL, *dev2 = NULL, *pinned = NULL;
    char *host = malloc(4096);
    cudaStream_t s1, s2;
    cudaEvent_t ev;
    if (!host || cudaMalloc(&dev, 1 << 20) != cudaSuccess || cudaHostAlloc(&pinned, 65536, 0) != cudaSuccess ||
        cudaStreamCreate(&s1) != cudaSuccess || cudaStreamCreate(&s2) != cudaSuccess ||
        cudaEventCreate(&ev) != cudaSuccess || cudaMallocAsync(&dev2, 65536, s2) != cudaSuccess)
        return 1;
    cudaMemcpy(dev, host, 4096, cudaMemcpyHostToDevice);
    cudaMemcpyAsync(dev, pinned, 65536, cudaMemcpyHostToDevice, s1);
    cudaEventRecord(ev, s1);
    cudaStreamWaitEvent(s2, ev, 0);
    dim3 grid = {1, 1, 1}, block = {32, 1, 1};
    cudaLaunchKernel((const void *)strata_demo_kernel, grid, block, NULL, 0, s2);
    /* CUDA 13's <<<...>>> (crt/host_runtime.h __cudaLaunch): the handle once, then launches through it */
    strata_cuda_kernel k13 = NULL, hidden = NULL;
    if (__cudaGetKernel(&k13, (const void *)strata_demo_kernel13) != cudaSuccess ||
        __cudaGetKernel(&hidden, (const void *)hidden_kernel) != cudaSuccess)
        return 1;
    __cudaLaunchKernel(k13, grid, block, NULL, 0, s1);
    __cudaLaunchKernel(k13, grid, block, NULL, 0, s2);
    __cudaLaunchKernel_ptsz(hidden, grid, block, NULL, 0, NULL);
    __cudaLaunchKernel((strata_cuda_kernel)(void *)&not_a_kernel, grid, block, NULL, 0, s1);
    cudaLaunchConfig_t config = {.gridDim = grid, .blockDim = block, .stream = s2};
    cudaLaunchKernelExC(&config, (const void *)strata_demo_kernel, NULL);
    cudaLaunchKernel_ptsz((const void *)strata_demo_kernel13, grid, block, NULL, 0, s1);
    cudaMemcpyAsync(dev2, dev, 65536, cudaMemcpyDeviceToDevice, s2);
    cudaMemcpyAsync(pinned, dev2, 65536, cudaMemcpyDeviceToHost, s2);
    cudaStreamSynchronize(s2);
    cudaFreeAsync(dev2, s2);
    cudaDeviceSynchronize();
    cudaFree(dev);
    cudaFreeHost(pinned);
    free(host);
    printf("unknown handle kernel_%llx\n", (unsigned long long)(uintptr_t)&not_a_kernel);
    printf("capture_demo done\n");
    return 0;
}
