/*
 * cuda_launch.h: the CUDA runtime entry points of kernel launches that the
 * runtime's C headers do not declare, for the capture interceptors
 * (capture_preload.c) and the stand-in runtime and demo programs that test
 * them (tests/helpers/). Declarations only; built with the toolkit's
 * headers.
 *
 * CUDA 13's <<<...>>> calls __cudaGetKernel once per kernel and then
 * __cudaLaunchKernel (or _ptsz), declared by crt/device_functions.h for
 * nvcc's C++ only (extern "C"); its cudaKernel_t is `struct CUkern_st *`
 * (driver_types.h, CUDA >= 12.0), spelled as the struct here so that older
 * headers compile too. The _ptsz variants (per-thread default stream) are
 * declared by cuda_runtime_api.h only under
 * CUDA_API_PER_THREAD_DEFAULT_STREAM. __cudaRegisterFunction is what nvcc's
 * generated host code calls to name a kernel's stub.
 */
#ifndef STRATA_CAPTURE_CUDA_LAUNCH_H
#define STRATA_CAPTURE_CUDA_LAUNCH_H

#include <cuda_runtime_api.h>

typedef struct CUkern_st *strata_cuda_kernel;
cudaError_t CUDARTAPI __cudaGetKernel(strata_cuda_kernel *kernel, const void *func);
cudaError_t CUDARTAPI __cudaLaunchKernel(strata_cuda_kernel kernel, dim3 gridDim, dim3 blockDim, void **args,
                                         size_t sharedMem, cudaStream_t stream);
cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(strata_cuda_kernel kernel, dim3 gridDim, dim3 blockDim, void **args,
                                              size_t sharedMem, cudaStream_t stream);
cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                            size_t sharedMem, cudaStream_t stream);
void CUDARTAPI __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                      const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim,
                                      dim3 *gDim, int *wSize);
#if CUDART_VERSION >= 11080 /* cudaLaunchConfig_t, cudaLaunchKernelExC */
#define STRATA_CAPTURE_LAUNCH_EX 1
cudaError_t CUDARTAPI cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func, void **args);
#endif

#endif
