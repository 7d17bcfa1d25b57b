/*
 * cuda.cu: the CUDA backend's device code. Executes a plan of CUDA calls
 * (cuda_plan.h) and measures a device for `strata calibrate --backend cuda`.
 * Built only when CMake finds nvcc (library strata_cuda).
 *
 * Design:
 *  - setup calls run once: non-blocking streams, one cudaEvent per trace
 *    record (timing disabled), regions (cudaMalloc, cudaHostAlloc mapped and
 *    portable, or malloc), each region zeroed so its pages exist before
 *    timing. Never managed memory.
 *  - each run: event t0 on stream 0, every other stream waits on it; then
 *    the timed calls in file order, each op bracketed by timing events on its
 *    stream; cudaDeviceSynchronize; spans are cudaEventElapsedTime from t0.
 *    Regions from cudaMallocAsync still live at the end are freed (stream
 *    ordered) so every run starts alike; the pool keeps them (release
 *    threshold max) as a caching allocator would.
 *  - the compute kernel reads its inputs and writes its outputs (16 bytes a
 *    thread a step, grid-stride), then runs multiply-adds for the op's flops
 *    (8 flops per step of 4 FMAs); pageable operands are not touched (the
 *    device cannot reach them). The spin kernel waits on %globaltimer.
 *  - a GEMM call is cublasGemmStridedBatchedEx on the op's stream, over
 *    the scratch region of its element family, which its setup call made
 *    and filled with values of that type drawn like data: a random sign,
 *    one of four binades [1/8, 2) and random mantissa bits (a hash of the
 *    index). Zeros, or a constant exponent, toggle fewer bits and let the
 *    tensor cores hold a higher clock under the power limit: on an H200 an
 *    8192^3 bf16 GEMM ran at 869 TFLOP/s over one-binade data and 802 over
 *    torch.randn's. Sums stay finite in f16 (|A B| < 4 a term). cuBLAS
 *    is loaded with dlopen (libcublas.so.13, .12, then unversioned, then
 *    the toolkit's lib64) only when the plan has a GEMM, so strata neither
 *    links it nor needs it for anything else.
 *
 * Invariants: every CUDA error is reported in msg with the call that
 * failed; all resources are released on every path.
 */
#include <cuda_runtime.h>
#include <dlfcn.h>
#if __has_include(<cublas_api.h>)
#include <cublas_api.h>
#define STRATA_HAVE_CUBLAS_H 1
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "backend/cuda_plan.h"

namespace {

const int kMaxOperands = 16;

struct operand_args {
    int n;
    unsigned char *ptr[kMaxOperands];
    unsigned long long bytes[kMaxOperands];
    int output[kMaxOperands];
};

__global__ void compute_kernel(operand_args ops, unsigned long long steps_per_thread, float *sink)
{
    unsigned long long tid = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long nthreads = (unsigned long long)gridDim.x * blockDim.x;
    unsigned int acc = 0;
    for (int k = 0; k < ops.n; k++) {
        unsigned long long words = ops.bytes[k] / 16;
        uint4 *p = reinterpret_cast<uint4 *>(ops.ptr[k]);
        if (ops.output[k]) {
            for (unsigned long long i = tid; i < words; i += nthreads)
                p[i] = make_uint4((unsigned)i, 0u, 0u, 0u);
            for (unsigned long long i = words * 16 + tid; i < ops.bytes[k]; i += nthreads)
                ops.ptr[k][i] = 0;
        } else {
            for (unsigned long long i = tid; i < words; i += nthreads) {
                uint4 v = p[i];
                acc += v.x ^ v.y ^ v.z ^ v.w;
            }
            for (unsigned long long i = words * 16 + tid; i < ops.bytes[k]; i += nthreads)
                acc += ops.ptr[k][i];
        }
    }
    float a0 = (float)(acc & 7u), a1 = 1.0f, a2 = 2.0f, a3 = 3.0f;
    for (unsigned long long i = 0; i < steps_per_thread; i++) {
        a0 = fmaf(a0, 0.999999f, 1e-6f);
        a1 = fmaf(a1, 0.999999f, 1e-6f);
        a2 = fmaf(a2, 0.999999f, 1e-6f);
        a3 = fmaf(a3, 0.999999f, 1e-6f);
    }
    if (a0 + a1 + a2 + a3 == -1.0f) /* never: keeps the work */
        *sink = a0;
}

__global__ void spin_kernel(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

__global__ void empty_kernel() {}

/* A hash of an element's index: its random bits. */
__device__ unsigned int scratch_bits(unsigned long long i)
{
    unsigned int h = (unsigned int)(i * 2654435761ull) ^ (unsigned int)(i >> 16) * 40503u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    return h ^ (h >> 15);
}

/* The GEMM scratch's values (see above), n elements of type (a strata_cuda_gemm_type). */
__global__ void fill_gemm_scratch(void *p, unsigned long long n, int type)
{
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned int h = scratch_bits(i);
        unsigned int sign = h >> 31, binade = (h >> 29) & 3u; /* exponents -3..0 */
        if (type == STRATA_CUDA_GEMM_BF16) /* 8 exponent bits, bias 127, 7 mantissa bits */
            static_cast<unsigned short *>(p)[i] = (unsigned short)(sign << 15 | (124u + binade) << 7 | (h & 0x7Fu));
        else if (type == STRATA_CUDA_GEMM_F16) /* 5 exponent bits, bias 15, 10 mantissa bits */
            static_cast<unsigned short *>(p)[i] = (unsigned short)(sign << 15 | (12u + binade) << 10 | (h & 0x3FFu));
        else /* f32: 8 exponent bits, bias 127, 23 mantissa bits */
            static_cast<unsigned int *>(p)[i] = sign << 31 | (124u + binade) << 23 | (h & 0x7FFFFFu);
    }
}

/* Error state of one executor or calibration run. */
struct cuda_status {
    char *msg;
    size_t len;
    bool failed = false;

    bool ok(cudaError_t e, const char *what)
    {
        if (e == cudaSuccess || failed)
            return !failed && e == cudaSuccess;
        failed = true;
        snprintf(msg, len, "%s: %s", what, cudaGetErrorString(e));
        return false;
    }
};

int launch_geometry(int *threads)
{
    int dev = 0, sms = 1;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    *threads = 256;
    return std::max(1, sms) * 8;
}

/* Launches the compute kernel over operands (16 at a time), the flops on the first launch. */
bool launch_compute(cuda_status &st, const strata_cuda_plan *plan, const strata_cuda_call &c,
                    const std::vector<void *> &base, cudaStream_t stream, float *sink)
{
    int threads = 256, blocks = launch_geometry(&threads);
    double per_step = 8.0 * blocks * threads;
    unsigned long long steps = c.flops > 0 ? (unsigned long long)(c.flops / per_step + 0.5) : 0;
    uint32_t i = 0;
    do {
        operand_args args;
        memset(&args, 0, sizeof args);
        for (; i < c.n_operands && args.n < kMaxOperands; i++) {
            const strata_cuda_operand &o = plan->operands[c.first_operand + i];
            if (plan->regions[o.region].kind == STRATA_CUDA_REGION_PAGEABLE)
                continue;
            args.ptr[args.n] = static_cast<unsigned char *>(base[o.region]) + o.offset;
            args.bytes[args.n] = o.bytes;
            args.output[args.n] = o.output ? 1 : 0;
            args.n++;
        }
        compute_kernel<<<blocks, threads, 0, stream>>>(args, steps, sink);
        if (!st.ok(cudaGetLastError(), "compute kernel launch"))
            return false;
        steps = 0;
    } while (i < c.n_operands);
    return true;
}

cudaMemcpyKind memcpy_kind(strata_cuda_dir d)
{
    switch (d) {
    case STRATA_CUDA_H2H: return cudaMemcpyHostToHost;
    case STRATA_CUDA_H2D: return cudaMemcpyHostToDevice;
    case STRATA_CUDA_D2H: return cudaMemcpyDeviceToHost;
    default: return cudaMemcpyDeviceToDevice;
    }
}

int no_device(char *msg, size_t len)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        snprintf(msg, len, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
        return 1;
    }
    if (count == 0) {
        snprintf(msg, len, "cudaGetDeviceCount found none");
        return 1;
    }
    return 0;
}

/* cuBLAS, loaded on demand: the library, its entry points and one handle. */
struct cublas_lib {
    void *so = nullptr;
#ifdef STRATA_HAVE_CUBLAS_H
    cublasHandle_t handle = nullptr;
    decltype(&cublasCreate_v2) create = nullptr;
    decltype(&cublasDestroy_v2) destroy = nullptr;
    decltype(&cublasSetStream_v2) set_stream = nullptr;
    /* the C entry point (C++ also sees an inline overload taking cudaDataType as the compute type) */
    cublasStatus_t (*gemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                           const void *, cudaDataType, int, long long, const void *, cudaDataType, int, long long,
                           const void *, void *, cudaDataType, int, long long, int, cublasComputeType_t,
                           cublasGemmAlgo_t) = nullptr;
#endif
    void close()
    {
#ifdef STRATA_HAVE_CUBLAS_H
        if (handle && destroy)
            destroy(handle);
        handle = nullptr;
#endif
        if (so)
            dlclose(so);
        so = nullptr;
    }
    ~cublas_lib() { close(); }
};

/* Loads cuBLAS and makes its handle; false with msg set where it cannot. */
bool cublas_open(cuda_status &st, cublas_lib &lib)
{
#ifdef STRATA_HAVE_CUBLAS_H
    static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                                        "/usr/local/cuda/lib64/libcublas.so"};
    const char *why = "";
    for (const char *n : names) {
        lib.so = dlopen(n, RTLD_NOW | RTLD_LOCAL);
        if (lib.so)
            break;
        why = dlerror();
    }
    if (!lib.so) {
        st.failed = true;
        snprintf(st.msg, st.len,
                 "kernel=gemm ops run through cuBLAS, which could not be loaded (%s); put the CUDA toolkit's "
                 "lib64 on LD_LIBRARY_PATH",
                 why);
        return false;
    }
    *(void **)&lib.create = dlsym(lib.so, "cublasCreate_v2");
    *(void **)&lib.destroy = dlsym(lib.so, "cublasDestroy_v2");
    *(void **)&lib.set_stream = dlsym(lib.so, "cublasSetStream_v2");
    *(void **)&lib.gemm = dlsym(lib.so, "cublasGemmStridedBatchedEx");
    if (!lib.create || !lib.destroy || !lib.set_stream || !lib.gemm) {
        st.failed = true;
        snprintf(st.msg, st.len, "cuBLAS lacks cublasCreate_v2, cublasSetStream_v2 or cublasGemmStridedBatchedEx");
        return false;
    }
    cublasStatus_t e = lib.create(&lib.handle);
    if (e != CUBLAS_STATUS_SUCCESS) {
        st.failed = true;
        snprintf(st.msg, st.len, "cublasCreate: status %d", (int)e);
        return false;
    }
    return true;
#else
    (void)lib;
    st.failed = true;
    snprintf(st.msg, st.len, "kernel=gemm ops need cuBLAS: strata was built without the cuBLAS headers");
    return false;
#endif
}

/* One GEMM of the plan, row-major C = A B, as cuBLAS's column-major C^T = B^T A^T. */
bool launch_gemm(cuda_status &st, cublas_lib &lib, const strata_cuda_call &c, void *scratch, cudaStream_t stream)
{
#ifdef STRATA_HAVE_CUBLAS_H
    const strata_cuda_gemm &g = c.gemm;
    if (g.m > INT32_MAX || g.n > INT32_MAX || g.k > INT32_MAX || g.batch > INT32_MAX) {
        st.failed = true;
        snprintf(st.msg, st.len, "gemm %llux%llux%llu: cuBLAS takes extents below 2^31", (unsigned long long)g.m,
                 (unsigned long long)g.k, (unsigned long long)g.n);
        return false;
    }
    cudaDataType_t type = CUDA_R_16BF;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    switch (g.type) {
    case STRATA_CUDA_GEMM_BF16: break;
    case STRATA_CUDA_GEMM_F16: type = CUDA_R_16F; break;
    case STRATA_CUDA_GEMM_F32: type = CUDA_R_32F; break;
    case STRATA_CUDA_GEMM_TF32: type = CUDA_R_32F; compute = CUBLAS_COMPUTE_32F_FAST_TF32; break;
    }
    uint64_t b_at = 0, c_at = 0;
    strata_cuda_gemm_layout(&g, &b_at, &c_at);
    unsigned char *a = static_cast<unsigned char *>(scratch), *b = a + b_at, *cc = a + c_at;
    const float alpha = 1.0f, beta = 0.0f;
    cublasStatus_t e = lib.set_stream(lib.handle, stream);
    if (e == CUBLAS_STATUS_SUCCESS)
        e = lib.gemm(lib.handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)g.n, (int)g.m, (int)g.k, &alpha, b, type, (int)g.n,
                     (long long)(g.k * g.n), a, type, (int)g.k, (long long)(g.m * g.k), &beta, cc, type, (int)g.n,
                     (long long)(g.m * g.n), (int)g.batch, compute, CUBLAS_GEMM_DEFAULT);
    if (e != CUBLAS_STATUS_SUCCESS) {
        st.failed = true;
        snprintf(st.msg, st.len, "cublasGemmStridedBatchedEx %llux%llux%llu (batch %llu): status %d",
                 (unsigned long long)g.m, (unsigned long long)g.k, (unsigned long long)g.n,
                 (unsigned long long)g.batch, (int)e);
        return false;
    }
    return true;
#else
    (void)lib, (void)c, (void)scratch, (void)stream;
    st.failed = true;
    snprintf(st.msg, st.len, "kernel=gemm ops need cuBLAS: strata was built without the cuBLAS headers");
    return false;
#endif
}

struct exec_resources {
    cublas_lib cublas; /* closed first, while the streams it was bound to live */
    std::vector<cudaStream_t> streams;
    std::vector<cudaEvent_t> events, ev_start, ev_end;
    std::vector<void *> base;
    std::vector<strata_cuda_region_kind> kind;
    cudaEvent_t t0 = nullptr;
    float *sink = nullptr;

    ~exec_resources()
    {
        cudaDeviceSynchronize();
        cublas.close();
        for (size_t r = 0; r < base.size(); r++) {
            if (!base[r])
                continue;
            switch (kind[r]) {
            case STRATA_CUDA_REGION_PINNED: cudaFreeHost(base[r]); break;
            case STRATA_CUDA_REGION_PAGEABLE: free(base[r]); break;
            default: cudaFree(base[r]); break;
            }
        }
        for (cudaEvent_t e : events)
            if (e)
                cudaEventDestroy(e);
        for (cudaEvent_t e : ev_start)
            if (e)
                cudaEventDestroy(e);
        for (cudaEvent_t e : ev_end)
            if (e)
                cudaEventDestroy(e);
        if (t0)
            cudaEventDestroy(t0);
        for (cudaStream_t s : streams)
            if (s)
                cudaStreamDestroy(s);
        if (sink)
            cudaFree(sink);
    }
};

bool exec_setup(cuda_status &st, const strata_cuda_plan *plan, exec_resources &res)
{
    res.streams.assign(plan->n_streams ? plan->n_streams : 1, nullptr);
    res.events.assign(plan->n_events, nullptr);
    res.base.assign(plan->n_regions, nullptr);
    for (uint32_t r = 0; r < plan->n_regions; r++)
        res.kind.push_back(plan->regions[r].kind);
    if (!st.ok(cudaMalloc(&res.sink, sizeof(float)), "cudaMalloc sink"))
        return false;
    if (plan->n_streams == 0 && !st.ok(cudaStreamCreateWithFlags(&res.streams[0], cudaStreamNonBlocking),
                                       "cudaStreamCreate"))
        return false;
    for (size_t i = 0; i < plan->n_setup; i++) {
        const strata_cuda_call &c = plan->calls[i];
        switch (c.kind) {
        case STRATA_CUDA_CALL_STREAM_CREATE:
            st.ok(cudaStreamCreateWithFlags(&res.streams[c.stream], cudaStreamNonBlocking), "cudaStreamCreate");
            break;
        case STRATA_CUDA_CALL_EVENT_CREATE:
            st.ok(cudaEventCreateWithFlags(&res.events[c.event], cudaEventDisableTiming), "cudaEventCreate");
            break;
        case STRATA_CUDA_CALL_MALLOC:
            if (st.ok(cudaMalloc(&res.base[c.region], c.bytes), "cudaMalloc"))
                st.ok(cudaMemset(res.base[c.region], 0, c.bytes), "cudaMemset");
            break;
        case STRATA_CUDA_CALL_HOST_ALLOC:
            if (st.ok(cudaHostAlloc(&res.base[c.region], c.bytes, cudaHostAllocMapped | cudaHostAllocPortable),
                      "cudaHostAlloc"))
                memset(res.base[c.region], 0, c.bytes);
            break;
        case STRATA_CUDA_CALL_PAGEABLE_ALLOC:
            res.base[c.region] = malloc(c.bytes);
            if (!res.base[c.region]) {
                st.failed = true;
                snprintf(st.msg, st.len, "malloc of %llu pageable bytes failed", (unsigned long long)c.bytes);
            } else {
                memset(res.base[c.region], 0, c.bytes);
            }
            break;
        case STRATA_CUDA_CALL_GEMM_SETUP:
            if (st.ok(cudaMalloc(&res.base[c.region], c.bytes), "cudaMalloc GEMM scratch")) {
                fill_gemm_scratch<<<1024, 256>>>(res.base[c.region], c.bytes / strata_cuda_gemm_elem_bytes(c.gemm.type),
                                                 (int)c.gemm.type);
                if (st.ok(cudaGetLastError(), "GEMM scratch fill") && !res.cublas.so)
                    cublas_open(st, res.cublas);
            }
            break;
        case STRATA_CUDA_CALL_MEMPOOL_RETAIN: {
            cudaMemPool_t pool;
            uint64_t threshold = UINT64_MAX;
            if (st.ok(cudaDeviceGetDefaultMemPool(&pool, 0), "cudaDeviceGetDefaultMemPool"))
                st.ok(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
                      "cudaMemPoolSetAttribute");
            break;
        }
        default:
            st.failed = true;
            snprintf(st.msg, st.len, "internal: timed call %d among the setup calls", (int)c.kind);
            break;
        }
        if (st.failed)
            return false;
    }
    res.ev_start.assign(plan->n_ops, nullptr);
    res.ev_end.assign(plan->n_ops, nullptr);
    for (uint64_t i = 0; i < plan->n_ops; i++)
        if (!st.ok(cudaEventCreate(&res.ev_start[i]), "cudaEventCreate") ||
            !st.ok(cudaEventCreate(&res.ev_end[i]), "cudaEventCreate"))
            return false;
    return st.ok(cudaEventCreate(&res.t0), "cudaEventCreate") &&
           st.ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize after setup");
}

bool exec_call(cuda_status &st, const strata_cuda_plan *plan, const strata_cuda_call &c, exec_resources &res)
{
    cudaStream_t s = res.streams[c.stream];
    switch (c.kind) {
    case STRATA_CUDA_CALL_MALLOC_ASYNC:
        return st.ok(cudaMallocAsync(&res.base[c.region], c.bytes ? c.bytes : 1, s), "cudaMallocAsync");
    case STRATA_CUDA_CALL_FREE_ASYNC: {
        bool ok = st.ok(cudaFreeAsync(res.base[c.region], s), "cudaFreeAsync");
        res.base[c.region] = nullptr;
        return ok;
    }
    case STRATA_CUDA_CALL_MEMCPY_ASYNC:
        return st.ok(cudaMemcpyAsync(static_cast<unsigned char *>(res.base[c.region]) + c.offset,
                                     static_cast<unsigned char *>(res.base[c.src_region]) + c.src_offset, c.bytes,
                                     memcpy_kind(c.dir), s),
                     "cudaMemcpyAsync");
    case STRATA_CUDA_CALL_EVENT_RECORD:
        return st.ok(cudaEventRecord(res.events[c.event], s), "cudaEventRecord");
    case STRATA_CUDA_CALL_STREAM_WAIT_EVENT:
        return st.ok(cudaStreamWaitEvent(s, res.events[c.event], 0), "cudaStreamWaitEvent");
    case STRATA_CUDA_CALL_LAUNCH_COMPUTE:
        return launch_compute(st, plan, c, res.base, s, res.sink);
    case STRATA_CUDA_CALL_LAUNCH_GEMM:
        return launch_gemm(st, res.cublas, c, res.base[c.region], s);
    case STRATA_CUDA_CALL_LAUNCH_SPIN:
        spin_kernel<<<1, 1, 0, s>>>((unsigned long long)(c.time_s * 1e9 + 0.5));
        return st.ok(cudaGetLastError(), "spin kernel launch");
    case STRATA_CUDA_CALL_NOP:
        return true;
    default:
        st.failed = true;
        snprintf(st.msg, st.len, "internal: setup call %d among the timed calls", (int)c.kind);
        return false;
    }
}

bool exec_run(cuda_status &st, const strata_cuda_plan *plan, exec_resources &res, double *start_s, double *end_s,
              double *makespan)
{
    if (!st.ok(cudaEventRecord(res.t0, res.streams[0]), "cudaEventRecord t0"))
        return false;
    for (size_t s = 1; s < res.streams.size(); s++)
        if (!st.ok(cudaStreamWaitEvent(res.streams[s], res.t0, 0), "cudaStreamWaitEvent t0"))
            return false;
    int64_t cur = -1;
    for (size_t i = plan->n_setup; i < plan->n_calls; i++) {
        const strata_cuda_call &c = plan->calls[i];
        if (c.op != cur) {
            if (cur >= 0 && !st.ok(cudaEventRecord(res.ev_end[cur], res.streams[plan->op_stream[cur]]), "cudaEventRecord"))
                return false;
            cur = c.op;
            if (!st.ok(cudaEventRecord(res.ev_start[cur], res.streams[c.stream]), "cudaEventRecord"))
                return false;
        }
        if (!exec_call(st, plan, c, res))
            return false;
    }
    if (cur >= 0 && !st.ok(cudaEventRecord(res.ev_end[cur], res.streams[plan->op_stream[cur]]), "cudaEventRecord"))
        return false;
    if (!st.ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the run"))
        return false;
    *makespan = 0;
    for (uint64_t i = 0; i < plan->n_ops; i++) {
        float a = 0, b = 0;
        if (!st.ok(cudaEventElapsedTime(&a, res.t0, res.ev_start[i]), "cudaEventElapsedTime") ||
            !st.ok(cudaEventElapsedTime(&b, res.t0, res.ev_end[i]), "cudaEventElapsedTime"))
            return false;
        if (start_s) {
            start_s[i] = a * 1e-3;
            end_s[i] = b * 1e-3;
        }
        *makespan = std::max(*makespan, b * 1e-3);
    }
    for (uint32_t r = 0; r < plan->n_regions; r++) /* leftovers of cudaMallocAsync */
        if (res.kind[r] == STRATA_CUDA_REGION_ASYNC && res.base[r]) {
            if (!st.ok(cudaFreeAsync(res.base[r], res.streams[0]), "cudaFreeAsync"))
                return false;
            res.base[r] = nullptr;
        }
    return st.ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

/* ---- calibration ---- */

double median_of(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* Seconds between events a and b recorded on stream s around enqueue(). */
template <typename F> double time_once(cuda_status &st, cudaStream_t s, cudaEvent_t a, cudaEvent_t b, F enqueue)
{
    st.ok(cudaEventRecord(a, s), "cudaEventRecord");
    enqueue();
    st.ok(cudaEventRecord(b, s), "cudaEventRecord");
    st.ok(cudaEventSynchronize(b), "cudaEventSynchronize");
    float ms = 0;
    st.ok(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    return ms * 1e-3;
}

/* Seconds of one cudaMemcpyAsync of size bytes on stream s. */
double time_copy_once(cuda_status &st, void *dst, const void *src, size_t size, cudaMemcpyKind kind,
                      cudaStream_t s, cudaEvent_t a, cudaEvent_t b)
{
    return time_once(st, s, a, b, [&] { st.ok(cudaMemcpyAsync(dst, src, size, kind, s), "cudaMemcpyAsync"); });
}

/* Seconds per cudaMemcpyAsync of size bytes (batched for small sizes), median of 7. */
double time_copy(cuda_status &st, void *dst, const void *src, size_t size, cudaMemcpyKind kind, cudaStream_t s,
                 cudaEvent_t a, cudaEvent_t b)
{
    int batch = 1;
    std::vector<double> v;
    for (int rep = 0; rep < 8 && !st.failed; rep++) {
        double t = time_once(st, s, a, b, [&] {
                       for (int i = 0; i < batch; i++)
                           st.ok(cudaMemcpyAsync(dst, src, size, kind, s), "cudaMemcpyAsync");
                   }) / batch;
        if (rep == 0) { /* first: warm-up and batch size */
            batch = t > 0 ? (int)std::min(1000.0, std::max(1.0, 2e-3 / t)) : 1000;
            continue;
        }
        v.push_back(t);
    }
    return v.empty() ? 0 : median_of(v);
}

double concurrent(cuda_status &st, void *d0, const void *s0, cudaMemcpyKind k0, void *d1, const void *s1,
                  cudaMemcpyKind k1, size_t size, cudaStream_t a, cudaStream_t b, cudaEvent_t start,
                  cudaEvent_t end_a, cudaEvent_t end_b, double *first_share)
{
    std::vector<double> v, share;
    for (int rep = 0; rep < 5 && !st.failed; rep++) {
        st.ok(cudaEventRecord(start, a), "cudaEventRecord");
        st.ok(cudaStreamWaitEvent(b, start, 0), "cudaStreamWaitEvent");
        st.ok(cudaMemcpyAsync(d0, s0, size, k0, a), "cudaMemcpyAsync");
        st.ok(cudaMemcpyAsync(d1, s1, size, k1, b), "cudaMemcpyAsync");
        st.ok(cudaEventRecord(end_a, a), "cudaEventRecord");
        st.ok(cudaEventRecord(end_b, b), "cudaEventRecord");
        st.ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        float ma = 0, mb = 0;
        st.ok(cudaEventElapsedTime(&ma, start, end_a), "cudaEventElapsedTime");
        st.ok(cudaEventElapsedTime(&mb, start, end_b), "cudaEventElapsedTime");
        double t = std::max(ma, mb) * 1e-3;
        if (t > 0) {
            v.push_back(2.0 * (double)size / t);
            share.push_back(std::min(ma, mb) * 1e-3 / t);
        }
    }
    if (first_share)
        *first_share = share.empty() ? 0 : median_of(share);
    return v.empty() ? 0 : median_of(v);
}

/* Calibration: the latency of a 4-byte copy each way and of an empty
 * kernel's launch, medians of 101 (the buffers are calibrate_device's). */
void calibrate_latencies(cuda_status &st, void *d0, void *d1, void *h0, void *h1, cudaStream_t s0, cudaEvent_t e0,
                         cudaEvent_t e1, strata_cuda_calibration *out)
{
    std::vector<double> lh, ld, ldd, ll;
    for (int i = 0; i < 101 && !st.failed; i++) {
        lh.push_back(time_copy_once(st, d0, h0, 4, cudaMemcpyHostToDevice, s0, e0, e1));
        ld.push_back(time_copy_once(st, h1, d1, 4, cudaMemcpyDeviceToHost, s0, e0, e1));
        ldd.push_back(time_copy_once(st, d1, d0, 4, cudaMemcpyDeviceToDevice, s0, e0, e1));
        ll.push_back(time_once(st, s0, e0, e1, [&] { empty_kernel<<<1, 1, 0, s0>>>(); }));
    }
    if (!st.failed) {
        out->latency_h2d = median_of(lh);
        out->latency_d2h = median_of(ld);
        out->latency_d2d = median_of(ldd);
        out->launch_latency = median_of(ll);
    }
}

/* Calibration: the replay kernel's compute rate with no operands, and the
 * device bandwidth it reaches reading d0 and writing d1 (big bytes each). */
void calibrate_compute(cuda_status &st, void *d0, void *d1, size_t big, cudaStream_t s0, cudaEvent_t e0,
                       cudaEvent_t e1, strata_cuda_calibration *out)
{
    /* compute rate: the replay's kernel with no operands */
    int threads = 256, blocks = launch_geometry(&threads);
    unsigned long long steps = 1u << 16;
    float *sink = static_cast<float *>(d1);
    std::vector<double> fr;
    for (int i = 0; i < 6 && !st.failed; i++) {
        operand_args none;
        memset(&none, 0, sizeof none);
        double t = time_once(st, s0, e0, e1, [&] {
            compute_kernel<<<blocks, threads, 0, s0>>>(none, steps, sink);
            st.ok(cudaGetLastError(), "compute kernel launch");
        });
        if (i > 0 && t > 0)
            fr.push_back(8.0 * steps * blocks * threads / t);
    }
    /* device bandwidth: read d0 and write d1 */
    std::vector<double> bw;
    for (int i = 0; i < 6 && !st.failed; i++) {
        operand_args rw;
        memset(&rw, 0, sizeof rw);
        rw.n = 2;
        rw.ptr[0] = static_cast<unsigned char *>(d0);
        rw.bytes[0] = big;
        rw.ptr[1] = static_cast<unsigned char *>(d1);
        rw.bytes[1] = big;
        rw.output[1] = 1;
        double t = time_once(st, s0, e0, e1, [&] {
            compute_kernel<<<blocks, threads, 0, s0>>>(rw, 0, sink);
            st.ok(cudaGetLastError(), "compute kernel launch");
        });
        if (i > 0 && t > 0)
            bw.push_back(2.0 * big / t);
    }
    if (!st.failed) {
        out->flops_f32 = fr.empty() ? 0 : median_of(fr);
        out->device_bandwidth = bw.empty() ? 0 : median_of(bw);
    }
}

/* Calibration: the rate of the square cuBLAS GEMM that a compute's flops=
 * replays as (cuda_plan.c flops_gemm_of: sides up to 8192), for each GEMM
 * type, median of 5 after a warm-up. The side is 8192, halved until the
 * f32 operands fit in a quarter of the free memory. Where cuBLAS cannot be
 * loaded every rate stays 0 and gemm_note says why. */
void calibrate_gemms(cuda_status &st, cudaStream_t s0, cudaEvent_t e0, cudaEvent_t e1, strata_cuda_calibration *out)
{
    cuda_status gs{out->gemm_note, sizeof out->gemm_note};
    cublas_lib lib;
    if (!cublas_open(gs, lib))
        return;
    size_t free_b = 0, total_b = 0;
    if (!st.ok(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"))
        return;
    strata_cuda_call c;
    memset(&c, 0, sizeof c);
    c.gemm = strata_cuda_gemm{STRATA_CUDA_GEMM_F32, 1, 8192, 8192, 8192};
    while (c.gemm.m > 256 && strata_cuda_gemm_layout(&c.gemm, nullptr, nullptr) > free_b / 4)
        c.gemm.m = c.gemm.k = c.gemm.n = c.gemm.m / 2;
    uint64_t bytes = strata_cuda_gemm_layout(&c.gemm, nullptr, nullptr);
    void *scratch = nullptr;
    if (!st.ok(cudaMalloc(&scratch, bytes), "cudaMalloc"))
        return;
    double side = (double)c.gemm.m;
    for (int t = 0; t < 4 && !st.failed && !gs.failed; t++) {
        c.gemm.type = (strata_cuda_gemm_type)t;
        fill_gemm_scratch<<<1024, 256, 0, s0>>>(scratch, bytes / strata_cuda_gemm_elem_bytes(c.gemm.type), t);
        std::vector<double> v;
        for (int i = 0; i < 6 && !st.failed && !gs.failed; i++) {
            double s = time_once(st, s0, e0, e1, [&] { launch_gemm(gs, lib, c, scratch, s0); });
            if (i > 0 && s > 0 && !gs.failed)
                v.push_back(2.0 * side * side * side / s);
        }
        out->flops_gemm[t] = v.empty() ? 0 : median_of(v);
    }
    out->gemm_side = c.gemm.m;
    cudaStreamSynchronize(s0);
    cudaFree(scratch);
}

} // namespace

extern "C" int strata_cuda_exec(const strata_cuda_plan *plan, int warmup, int repeats, double *start_s,
                                double *end_s, double *makespans, char *msg, size_t msg_len)
{
    if (no_device(msg, msg_len))
        return STRATA_CUDA_NO_DEVICE;
    cuda_status st{msg, msg_len};
    if (!st.ok(cudaSetDevice(0), "cudaSetDevice"))
        return STRATA_CUDA_FAILED;
    exec_resources res;
    if (!exec_setup(st, plan, res))
        return STRATA_CUDA_FAILED;
    for (int run = 0; run < warmup + repeats; run++) {
        int k = run - warmup;
        double makespan = 0;
        if (!exec_run(st, plan, res, k >= 0 ? start_s + (size_t)k * plan->n_ops : nullptr,
                      k >= 0 ? end_s + (size_t)k * plan->n_ops : nullptr, &makespan))
            return STRATA_CUDA_FAILED;
        if (k >= 0)
            makespans[k] = makespan;
    }
    return STRATA_CUDA_OK;
}

extern "C" int strata_cuda_calibrate_device(uint64_t max_size, strata_cuda_calibration *out, char *msg,
                                            size_t msg_len)
{
    if (no_device(msg, msg_len))
        return STRATA_CUDA_NO_DEVICE;
    cuda_status st{msg, msg_len};
    if (!st.ok(cudaSetDevice(0), "cudaSetDevice"))
        return STRATA_CUDA_FAILED;
    cudaDeviceProp prop;
    if (!st.ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"))
        return STRATA_CUDA_FAILED;
    snprintf(out->device, sizeof out->device, "%s", prop.name);
    size_t free_b = 0, total_b = 0;
    if (!st.ok(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"))
        return STRATA_CUDA_FAILED;
    out->device_memory = total_b;
    size_t max = (size_t)std::min<uint64_t>(max_size, free_b / 4);
    void *h0 = nullptr, *h1 = nullptr, *d0 = nullptr, *d1 = nullptr;
    void *p0 = malloc(max), *p1 = malloc(max);
    cudaStream_t s0 = nullptr, s1 = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr, e2 = nullptr;
    bool ok = p0 && p1 && st.ok(cudaHostAlloc(&h0, max, cudaHostAllocPortable), "cudaHostAlloc") &&
              st.ok(cudaHostAlloc(&h1, max, cudaHostAllocPortable), "cudaHostAlloc") &&
              st.ok(cudaMalloc(&d0, max), "cudaMalloc") && st.ok(cudaMalloc(&d1, max), "cudaMalloc") &&
              st.ok(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking), "cudaStreamCreate") &&
              st.ok(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), "cudaStreamCreate") &&
              st.ok(cudaEventCreate(&e0), "cudaEventCreate") && st.ok(cudaEventCreate(&e1), "cudaEventCreate") &&
              st.ok(cudaEventCreate(&e2), "cudaEventCreate");
    if (ok) {
        memset(p0, 1, max);
        memset(p1, 2, max);
        memset(h0, 3, max);
        memset(h1, 4, max);
        ok = st.ok(cudaMemset(d0, 0, max), "cudaMemset") && st.ok(cudaMemset(d1, 0, max), "cudaMemset");
    }
    if (!ok && !st.failed)
        snprintf(msg, msg_len, "cannot allocate the calibration buffers (%zu bytes each)", max);
    int n = 0;
    for (size_t size = 4096; ok && size <= max && n < STRATA_CUDA_CAL_SIZES; size *= 4, n++) {
        out->size[n] = size;
        double t;
        t = time_copy(st, d0, h0, size, cudaMemcpyHostToDevice, s0, e0, e1);
        out->h2d_pinned[n] = t > 0 ? size / t : 0;
        t = time_copy(st, h1, d1, size, cudaMemcpyDeviceToHost, s0, e0, e1);
        out->d2h_pinned[n] = t > 0 ? size / t : 0;
        t = time_copy(st, d0, p0, size, cudaMemcpyHostToDevice, s0, e0, e1);
        out->h2d_pageable[n] = t > 0 ? size / t : 0;
        t = time_copy(st, p1, d1, size, cudaMemcpyDeviceToHost, s0, e0, e1);
        out->d2h_pageable[n] = t > 0 ? size / t : 0;
        t = time_copy(st, d1, d0, size, cudaMemcpyDeviceToDevice, s0, e0, e1);
        out->d2d[n] = t > 0 ? size / t : 0;
        ok = !st.failed;
        if (size > max / 4)
            { n++; break; }
    }
    out->n_sizes = n;
    if (ok && n > 0) {
        size_t big = out->size[n - 1];
        out->concurrent_h2d_d2h = concurrent(st, d0, h0, cudaMemcpyHostToDevice, h1, d1, cudaMemcpyDeviceToHost, big,
                                             s0, s1, e0, e1, e2, NULL);
        out->concurrent_h2d_h2d = concurrent(st, d0, h0, cudaMemcpyHostToDevice, d1, h1, cudaMemcpyHostToDevice, big,
                                             s0, s1, e0, e1, e2, &out->h2d_h2d_first_share);
        calibrate_latencies(st, d0, d1, h0, h1, s0, e0, e1, out);
        calibrate_compute(st, d0, d1, big, s0, e0, e1, out);
        calibrate_gemms(st, s0, e0, e1, out);
        ok = !st.failed;
    }
    cudaDeviceSynchronize();
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (e2) cudaEventDestroy(e2);
    if (s0) cudaStreamDestroy(s0);
    if (s1) cudaStreamDestroy(s1);
    if (d0) cudaFree(d0);
    if (d1) cudaFree(d1);
    if (h0) cudaFreeHost(h0);
    if (h1) cudaFreeHost(h1);
    free(p0);
    free(p1);
    return ok ? STRATA_CUDA_OK : STRATA_CUDA_FAILED;
}
