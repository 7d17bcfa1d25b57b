/*
 * capture_demo.c: a small "CUDA program" for tests/test_capture.c, linked
 * against fake_cudart.c: allocates, copies both ways on two streams ordered
 * by an event, launches a kernel, synchronizes, frees.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

/* The "kernel": exported (ENABLE_EXPORTS) so dladdr names it. */
void strata_demo_kernel(void) {}

int main(void)
{
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
    cudaMemcpyAsync(dev2, dev, 65536, cudaMemcpyDeviceToDevice, s2);
    cudaMemcpyAsync(pinned, dev2, 65536, cudaMemcpyDeviceToHost, s2);
    cudaStreamSynchronize(s2);
    cudaFreeAsync(dev2, s2);
    cudaDeviceSynchronize();
    cudaFree(dev);
    cudaFreeHost(pinned);
    free(host);
    printf("capture_demo done\n");
    return 0;
}
