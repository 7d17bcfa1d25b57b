/*
 * capture_demo_nvcc.cu: a CUDA program compiled by the toolkit's nvcc, so
 * that its <<<...>>> is the launch code nvcc generates (CUDA 13:
 * __cudaGetKernel once per kernel, then __cudaLaunchKernel; earlier
 * toolkits: cudaLaunchKernel), linked to the stand-in runtime
 * (fake_cudart.c, which also takes nvcc's registration calls). For
 * tests/test_capture.c: the capture must record each launch once, named
 * from nvcc's registration of the kernel (the executable exports no
 * symbols, as an nvcc program built without -rdynamic does not).
 */
#include <cuda_runtime.h>
#include <stdio.h>

__global__ void demo_scale(float *x, int n, float a)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}

extern "C" __global__ void demo_fill(float *x, float v)
{
    x[threadIdx.x] = v;
}

int main(void)
{
    float *d = NULL;
    cudaStream_t s;
    if (cudaMalloc((void **)&d, 64 * sizeof(float)) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess)
        return 1;
    demo_fill<<<1, 64>>>(d, 1.0f);
    for (int i = 0; i < 2; i++) /* the second launch reuses the handle nvcc's code cached */
        demo_scale<<<2, 32, 0, s>>>(d, 64, 2.0f);
    cudaStreamSynchronize(s);
    cudaFree(d);
    printf("capture_demo_nvcc done\n");
    return 0;
}
