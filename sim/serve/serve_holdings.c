/*
 * serve_holdings.c: what a serving rank holds besides weights, activations and the KV pool, and what its
 * engine's accounting charges to the pool (serve_holdings.h gives the rules by engine).
 *
 * Sizes, each a rank's:
 *   - CUDA context (NVIDIA hardware with its SM count): ESTIMATE, the driver's reservations at its defaults,
 *     local memory for every resident thread at the default stack limit (1 KiB, cudaLimitStackSize) times
 *     the resident threads an SM by compute capability (the CUDA C++ Programming Guide's "Technical
 *     Specifications per Compute Capability": 1,024 at 7.5, 1,536 at 8.6, 8.9 and 12.x, 2,048 at 7.0, 8.0, 9.0 and a
 *     part that names none) times the SMs, plus the device malloc heap (8 MiB,
 *     cudaLimitMallocHeapSize) and the printf FIFO (1 MiB, cudaLimitPrintfFifoSize), the defaults the CUDA
 *     Runtime API documents for cudaDeviceSetLimit. H100 SXM (132 SMs): 286,261,248 B. Module code (lazy
 *     loading, CUDA 12.2's default) is not counted.
 *   - NCCL (tp > 1, the hardware's collectives NCCL's): every channel of the communicator (comm->nChannels,
 *     strata_hw_nccl_channels) receives from its ring peer into one buffer a protocol: Simple DEFAULT_BUFFSIZE
 *     4 MiB, LL NCCL_LL_LINES_PER_THREAD 8 x NCCL_LL_MAX_NTHREADS 512 x NCCL_STEPS 8 x 16 B = 524,288 B,
 *     LL128 NCCL_LL128_ELEMS_PER_THREAD 120 x NCCL_LL128_MAX_NTHREADS 640 x NCCL_STEPS 8 x 8 B = 4,915,200 B
 *     (NVIDIA/nccl @5067397c src/init.cc:810-813, src/include/device.h:26, 97-98, 114-115): 9,633,792 B a
 *     channel. Tree and NVLS buffers are not counted.
 *   - vLLM's custom all-reduce (rows whose all-reduce is vllm-custom, tp 2, 4, 6 or 8): meta_size() + max_size,
 *     the buffer max_size and rank_data 8 MiB, all torch tensors (vLLM v0.6.0 custom_all_reduce.py:142-157,
 *     max_size 8192 x 1024 at :44; meta_size = sizeof(Signal), two uint32_t [64][8] arrays,
 *     csrc/custom_all_reduce.cuh:26-32): 4,096 + 3 x 8 MiB = 25,169,920 B.
 *   - TensorRT-LLM's all-reduce workspace (its rows, tp > 1): ping and pong IPC buffers of size x tp_size
 *     each, size = max_workspace_size_auto(tp) = 16,000,000 B at tp <= 2, else 8,000,000 B
 *     (tensorrt_llm/plugin/plugin.py, CustomAllReduceHelper.max_workspace_size_auto and allocate_workspace,
 *     the release that multiplies by tp_size; its barriers, a few hundred bytes, and later releases' Lamport
 *     buffers are not counted): 128,000,000 B at tp 8.
 *   - cuBLAS (PyTorch engines: vLLM, TensorRT-LLM's PyTorch backend; one handle and stream): PyTorch's default
 *     workspace, 4096 x 8 x 1024 = 32 MiB on sm90, else 4096 x 1024 x 2 + 16 x 1024 x 8 = 8,519,680 B
 *     (pytorch aten/src/ATen/cuda/CublasHandlePool.cpp, parseChosenWorkspaceSize, ":4096:2:16:8 default,
 *     32MiB for Hopper"), taken through the caching allocator at the first GEMM: in the profile run. The part is
 *     known by [hardware] compute_capability (9.x: Hopper); a file that names none by its NCCL row's arch.
 *     Blackwell (10.x, 12.x) keeps the older default in every PyTorch release of 2025: pytorch/pytorch PR #153556
 *     (merged 2025-05-20, reverted the next day, relanded without it) set 32 MiB there, and PR #175344 (merged
 *     2026-02-19) reenabled it, so only releases branched after that date (2.11 on, ESTIMATE of the branch)
 *     hold 32 MiB on a B200; the engines this tree models (vLLM to 0.11, SGLang to 0.5.6: PyTorch 2.9 at most)
 *     predate it. On ROCm PyTorch sets a hipBLAS workspace from 2.6 (PR #138791) and a 76 MB hipBLASLt one
 *     (PR #139300): not counted here (under 0.2 GB of a 192 GB MI300X).
 */
#include <string.h>
#include "core/error.h"
#include "hw/coll_impl.h"
#include "serve/serve_holdings.h"

enum {
    CTX_STACK_BYTES = 1024,      /* cudaLimitStackSize's default */
    CTX_HEAP_BYTES = 8u << 20,   /* cudaLimitMallocHeapSize's default */
    CTX_PRINTF_BYTES = 1u << 20, /* cudaLimitPrintfFifoSize's default */
    NCCL_SIMPLE_BYTES = 1u << 22,
    NCCL_LL_BYTES = 8 * 512 * 8 * 16,
    NCCL_LL128_BYTES = 120 * 640 * 8 * 8,
    VLLM_AR_MAX_SIZE = 8192 * 1024,
    VLLM_AR_META_SIZE = 2 * 64 * 8 * 4,
    VLLM_AR_RANK_DATA = 8 * 1024 * 1024,
};

static const char *const rule_names[] = {"unset", "vllm-v0", "vllm-v1", "sglang", "trtllm", "none"};

const char *strata_serve_hold_rule_name(strata_serve_hold_rule r)
{
    return rule_names[r];
}

/* Resident threads an SM at compute capability cc (MAJOR x 10 + MINOR; 0: not said, read as 2,048). */
static uint32_t threads_per_sm(uint32_t cc)
{
    return cc == 75 ? 1024 : cc == 86 || cc == 89 || cc / 10 == 12 ? 1536 : 2048;
}

bool strata_serve_holdings_of(const strata_serve_engine *e, const strata_hw *hw, uint32_t tp,
                              strata_serve_holdings *out, GError **err)
{
    *out = (strata_serve_holdings){.rule = strata_serve_engine_row(e)->hold_rule}; /* NULL: vLLM V1's */
    if (out->rule == SERVE_HOLD_UNSET) { /* a zeroed row read as vLLM V0's rule before UNSET existed */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "engine row '%s': expected a hold_rule (vllm-v0, "
                    "vllm-v1, sglang, trtllm or none: what its memory accounting charges to the KV pool), got none",
                    e->name ? e->name : "(unnamed)");
        return false;
    }
    uint32_t sms = strata_hw_compute(hw, 0)->kernel.sms;
    if (!sms) /* hardware that names no SMs is no GPU these libraries run on: nothing held */
        return true;
    bool rocm = strata_hw_rocm(hw);
    uint32_t cc = strata_hw_compute_capability(hw);
    strata_nccl_arch arch;
    bool nccl = strata_hw_nccl_arch(hw, &arch);
    if (!rocm)
        out->context_bytes = (uint64_t)sms * threads_per_sm(cc) * CTX_STACK_BYTES + CTX_HEAP_BYTES + CTX_PRINTF_BYTES;
    if (tp > 1)
        out->nccl_bytes = (uint64_t)strata_hw_nccl_channels(hw, tp) * (NCCL_SIMPLE_BYTES + NCCL_LL_BYTES +
                                                                         NCCL_LL128_BYTES);
    const char *ar = e ? e->allreduce : NULL;
    if (!rocm && ar && strcmp(ar, "vllm-custom") == 0 && tp <= 8 && tp % 2 == 0)
        out->allreduce_bytes = VLLM_AR_META_SIZE + 2ull * VLLM_AR_MAX_SIZE + VLLM_AR_RANK_DATA;
    if (out->rule == SERVE_HOLD_TRTLLM && tp > 1)
        out->allreduce_bytes = 2ull * tp * (tp <= 2 ? 16000000ull : 8000000ull);
    bool torch = !e || !e->tensorrt_runtime; /* trtllm-cpp: TensorRT's runtime; trtllm: its PyTorch backend */
    if (!rocm && torch && out->rule != SERVE_HOLD_SGLANG && out->rule != SERVE_HOLD_NONE)
        out->cublas_bytes = (cc ? cc / 10 == 9 : nccl && arch == STRATA_NCCL_HOPPER) ? 4096ull * 8 * 1024
                                                               : 4096ull * 1024 * 2 + 16 * 1024 * 8;
    out->total_bytes = out->context_bytes + out->nccl_bytes + out->allreduce_bytes + out->cublas_bytes;
    switch (out->rule) {
    case SERVE_HOLD_VLLM_V0:
        out->counted_bytes = out->nccl_bytes + out->allreduce_bytes + out->cublas_bytes;
        break;
    case SERVE_HOLD_VLLM_V1:
        out->counted_bytes = out->cublas_bytes;
        break;
    case SERVE_HOLD_SGLANG:
        out->counted_bytes = out->context_bytes + out->nccl_bytes + out->allreduce_bytes;
        break;
    case SERVE_HOLD_TRTLLM:
        out->counted_bytes = out->total_bytes;
        break;
    case SERVE_HOLD_UNSET: /* refused above */
    case SERVE_HOLD_NONE:
        break;
    }
    return true;
}
