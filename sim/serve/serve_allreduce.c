/*
 * serve_allreduce.c: the TP all-reduce implementations (serve_allreduce.h).
 *
 * TensorRT-LLM's AllReduce op (NVIDIA/TensorRT-LLM, PyTorch backend):
 *
 * - Selection, v1.0-era cpp/tensorrt_llm/thop/allreduceOp.cpp,
 *   AllreduceOp::selectImplementation and ifFallbackToNCCL (the version
 *   before the measured lookup table of customAllReduceUtils.h
 *   selectStrategyLookUpTable): NCCL when the message's bytes exceed
 *   getMaxRequiredWorkspaceSize(world) (16 * 1000 * 1000 at <= 2 ranks,
 *   8 * 1000 * 1000 above; customAllReduceUtils.h @005b299, unchanged in
 *   form), or without P2P and NVLink (strata's serving cost runs within
 *   an NVLink node); then for fusion NONE and RESIDUAL_RMS_NORM
 *   MIN_LATENCY at world <= 2, and above it MIN_LATENCY while seq_len <=
 *   128 (ALLREDUCE_AUTO_HEURISTIC_MIN_LATENCY_THRESHOLD_TOKEN_NUM's
 *   default: "NCCL is faster than MIN_LATENCY when the token number is
 *   greater than 256. I conservatively set the threshold here to 128"),
 *   NCCL beyond. runFusionAllReduce: MIN_LATENCY's use_oneshot = seq_len
 *   <= kOneShotMaxToken (128, kernels/communicationKernels/
 *   allReduceFusionKernels.h).
 * - One-shot (allReduceFusionKernels.cu, the Lamport one-shot kernel):
 *   each rank pushes its whole buffer into every peer's IPC Lamport
 *   buffer over NVLink ((n-1) B out of each rank, as much in); the
 *   buffers are cleared to -0.0 beforehand, so a reader spins on the data
 *   itself and no barrier is needed (one link latency); each rank then
 *   reads the n copies from its own memory and writes the sum. Device
 *   memory: its input read and its own copy written (2 B), the n copies
 *   read (n B): (n + 2) B at the stream rate. One kernel.
 * - Two-shot (the same file, the two-shot kernel with its barrier
 *   flags): a reduce-scatter, each rank's n-th share written to its
 *   owner ((n-1)/n B out), a flag barrier, the owner's sum of the n
 *   shares, written to every peer ((n-1)/n B out), a second barrier: two
 *   link latencies, 2 (n-1)/n B at the link rate; device memory: the
 *   input read, the n shares read, the gathered result written (3 B).
 *   One kernel.
 * - Fusion: both kernels run the op's fusion pattern in their epilogue
 *   (runFusionAllReduce: kARResidualRMSNorm, kARResidualRMSNormFP8Quant);
 *   on the NCCL path (runNCCLAllReduce, any pattern but NONE) the same
 *   work runs after ncclAllReduce as kernels of its own
 *   (fallbackRunSubsequentOps: residualRmsNorm, then for
 *   RESIDUAL_RMS_NORM_QUANT_FP8 symmetric_static_quantize_per_tensor on
 *   the norm's output), read at NVIDIA/TensorRT-LLM@01e2c361
 *   cpp/tensorrt_llm/thop/allreduceOp.cpp. The plan's fuses_norm.
 * The phases (push, then reduce) are taken one after the other: a rank
 * cannot finish its sum before the last peer's data lands. Both kernels
 * move data by SM stores into peer memory, which cross NVLink as
 * 128-byte payloads (coll_sched.h STRATA_COLL_WIRE_NUM / _DEN: 4/5 of
 * the wire rate is data), so `link` is the route's bandwidth x 4/5.
 *
 * vLLM's custom all-reduce (vllm-custom), as vLLM 0.6.0 runs it (its
 * wheel, vllm-project/vllm@32e7db25; SGLang 0.3 calls the same through
 * vllm.distributed, set_custom_all_reduce(not disable_custom_all_reduce)
 * in its model_runner.py):
 *
 * - Selection, GroupCoordinator.all_reduce (distributed/parallel_state.py
 *   265-294): the custom kernel when CustomAllreduce is enabled and
 *   should_custom_ar holds, else pynccl (NCCL). Enabled
 *   (device_communicators/custom_all_reduce.py 38-130) for world sizes
 *   2, 4, 6 and 8 within one node, above 2 ranks only with every pair
 *   NVLinked (strata's serving cost runs within an NVLink node);
 *   should_custom_ar (csrc/custom_all_reduce.cu): the bytes a multiple
 *   of 16 and, at 2 ranks or full NVLink, at most max_size = 8192 * 1024.
 * - The kernel (csrc/custom_all_reduce.cuh, CustomAllreduce::allreduce
 *   and REDUCE_CASE): at 2 ranks cross_device_reduce_1stage; with full
 *   NVLink the 1-stage kernel while (ranks <= 4 and bytes < 512 KiB) or
 *   (ranks <= 8 and bytes < 256 KiB), else cross_device_reduce_2stage.
 *   At most 36 blocks of 512 threads (not a limit here: 36 SMs' loads in
 *   flight cover NVLink's rate).
 * - 1-stage: start_sync (one flag write to every peer, a wait: one route
 *   latency), each rank reads the n inputs and writes their sum ((n-1) B
 *   in over NVLink; B read and B written locally), end_sync with
 *   final_sync (a latency): launch + 4 lat + (n-1) B / link +
 *   2 B / stream.
 * - 2-stage: start_sync, a reduce-scatter (the rank's 1/n of the n
 *   inputs read, (n-1)/n B in; its own share read and the sum written to
 *   its tmp buffer, 2 B/n), end_sync (a latency), an all-gather of the n
 *   tmp shares ((n-1)/n B in, B/n read, B written); no final sync:
 *   launch + 6 lat + 2 (n-1)/n B / link + (1 + 3/n) B / stream.
 * - The peers' data is read, not pushed (wave 47): packed_reduce loads
 *   ptrs[i][idx] from each peer's registered buffer and the 2-stage's
 *   all-gather loads tmps[i][idx] from each peer's tmp buffer
 *   (vllm-project/vllm@036bb685 csrc/custom_all_reduce.cuh,
 *   packed_reduce, cross_device_reduce_1stage and _2stage; the same loads
 *   in the barrier_at_start / barrier_at_end kernels of 0.6-0.11). A
 *   load's reply crosses the route only after its request has: a phase
 *   of peer loads begins with one round trip, two route latencies, before
 *   its first sum; the loads behind it are in flight together (the
 *   bandwidth term). The barriers are one flight each ("Latency = 1 p2p
 *   write", start_sync / end_sync: a flag stored into every peer, then a
 *   spin on the rank's own). Flights: 1-stage 1 + 2 + 1 = 4, 2-stage
 *   1 + 2 + 1 + 2 = 6 (VLLM_1STAGE_FLIGHTS, VLLM_2STAGE_FLIGHTS); before
 *   wave 47 both were charged the barriers' 2 alone. TensorRT-LLM's
 *   kernels (above) push by stores: no round trip.
 * - Outside a CUDA graph (custom_all_reduce.py custom_all_reduce:
 *   all_reduce_unreg) the input is first copied into the registered IPC
 *   buffer, a cudaMemcpyAsync device to device: launch + 2 B / stream
 *   more. In a graph (vLLM's decode-only steps) the captured buffers are
 *   registered (all_reduce_reg): no copy.
 * Peer loads cross NVLink as the stores do (128-byte payloads): `link`
 * as above.
 *
 * vLLM's ROCm builds (vllm-custom-rocm), read at ROCm/vllm@b309ea79 (vLLM
 * 0.7.3, V0) and @040de12d (0.10.0, V1), the releases of AMD's MI300X
 * page: GroupCoordinator / CudaCommunicator.all_reduce try quick all-reduce
 * first (0.10.0 cuda_communicator.py:93-118, "quick reduce just for ROCM
 * MI3*"), but QuickAllReduce stays disabled while
 * VLLM_ROCM_QUICK_REDUCE_QUANTIZATION is "NONE" (envs.py:139, 717-718, the
 * default; quick_all_reduce.py:175-178), then the custom kernel, then
 * RCCL. CustomAllreduce is enabled on ROCm where every pair is one xGMI
 * hop (platforms/rocm.py is_full_nvlink / is_fully_connected, amdsmi link
 * type 2 at 1 hop; "On AMD GPU, p2p is always enabled between XGMI
 * connected GPUs"), max_size 16 MiB on ROCm (0.7.3 custom_all_reduce.py
 * _MAX_CAR_SIZE = 2 * 8192 * 1024, "crossover is at 16MB buffer size for
 * ROCm"; 0.10.0 the constructor's default), should_custom_ar inp_size <
 * max_size; csrc/custom_all_reduce.cuh the same REDUCE_CASE 1-stage /
 * 2-stage switch at both commits, at most 16 blocks of 512 threads on ROCm
 * (0.7.3 :492 block_limit = 16; 0.10.0 :38 defaultBlockLimit = 16; taken
 * here, as on NVLink, as not limiting the links' rate: no measurement of
 * the kernel on MI300X was found). On MI300X's full mesh each peer's
 * share crosses its own xGMI link, so the n-1 peer transfers run in
 * parallel (link_peers = 1, serve_links.h), where through NVSwitch they
 * share the rank's port (n-1).
 */
#include "serve/serve_allreduce.h"
#include "collective/coll_sched.h"
#include "core/error.h"
#include "serve/serve_names.h"

typedef strata_serve_ar_plan (*ar_plan_fn)(const strata_serve_ar_in *in);

struct strata_serve_allreduce {
    const char *name;
    ar_plan_fn plan; /* NULL: NCCL's all-reduce */
    const char *what;
};

enum {
    TRTLLM_ONESHOT_MAX_TOKENS = 128,   /* allReduceFusionKernels.h kOneShotMaxToken */
    TRTLLM_MIN_LATENCY_MAX_TOKENS = 128, /* allreduceOp.cpp's threshold default, above 2 ranks */
};
static const double TRTLLM_WORKSPACE_SMALL = 16e6; /* getMaxRequiredWorkspaceSize, <= 2 ranks */
static const double TRTLLM_WORKSPACE = 8e6;        /* above 2 ranks */

/* The route's rate for SM stores (see above). */
static double store_bw(const strata_serve_ar_in *in)
{
    return in->link_bw * STRATA_COLL_WIRE_DEN / STRATA_COLL_WIRE_NUM;
}

/* The most peers whose data shares one link of a rank's routes (k in
 * serve_allreduce.h): n-1 where the caller gives none. */
static double peers_per_link(const strata_serve_ar_in *in)
{
    return strata_serve_ar_peers_per_link(in->link_peers, in->ranks);
}

static double oneshot_s(const strata_serve_ar_in *in)
{
    double b = (double)in->bytes, n = in->ranks, k = peers_per_link(in), link = store_bw(in);
    return in->launch_s + in->link_lat + (link > 0 ? k * b / link : 0) +
           (in->stream_bw > 0 ? (n + 2) * b / in->stream_bw : 0);
}

static double twoshot_s(const strata_serve_ar_in *in)
{
    double b = (double)in->bytes, n = in->ranks, k = peers_per_link(in), link = store_bw(in);
    return in->launch_s + 2 * in->link_lat + (link > 0 ? 2 * k / n * b / link : 0) +
           (in->stream_bw > 0 ? 3 * b / in->stream_bw : 0);
}

enum { VLLM_AR_MAX_BYTES = 8192 * 1024 }; /* CustomAllreduce's max_size (0.6.0) */
/* vLLM's ROCm builds: "crossover is at 16MB buffer size for ROCm" (ROCm/vllm
 * @b309ea79 custom_all_reduce.py _MAX_CAR_SIZE = 2 * 8192 * 1024 on ROCm;
 * @040de12d max_size=2 * 8192 * 1024), taken while inp_size < max_size. */
enum { VLLM_ROCM_AR_MAX_BYTES = 2 * 8192 * 1024 };

/* The route flights of vLLM's kernels (see above): the 1-stage's start_sync, its peer loads' round trip (two) and
 * end_sync; the 2-stage's start_sync, two phases of peer loads (two each) and end_sync between them. */
enum { VLLM_1STAGE_FLIGHTS = 4, VLLM_2STAGE_FLIGHTS = 6 };

static double onestage_s(const strata_serve_ar_in *in)
{
    double b = (double)in->bytes, k = peers_per_link(in), link = store_bw(in);
    return in->launch_s + VLLM_1STAGE_FLIGHTS * in->link_lat + (link > 0 ? k * b / link : 0) +
           (in->stream_bw > 0 ? 2 * b / in->stream_bw : 0);
}

static double twostage_s(const strata_serve_ar_in *in)
{
    double b = (double)in->bytes, n = in->ranks, k = peers_per_link(in), link = store_bw(in);
    return in->launch_s + VLLM_2STAGE_FLIGHTS * in->link_lat + (link > 0 ? 2 * k / n * b / link : 0) +
           (in->stream_bw > 0 ? (1 + 3 / n) * b / in->stream_bw : 0);
}

/* vLLM's custom all-reduce taken while bytes <= at_most. */
static strata_serve_ar_plan vllm_custom_upto(const strata_serve_ar_in *in, uint64_t at_most)
{
    strata_serve_ar_plan p = {SERVE_AR_NCCL, 0, false};
    uint32_t n = in->ranks;
    if ((n != 2 && n != 4 && n != 6 && n != 8) || in->bytes % 16 || in->bytes > at_most || in->link_bw <= 0)
        return p;
    if (n == 2 || (n <= 4 && in->bytes < 512 * 1024) || in->bytes < 256 * 1024) {
        p.strategy = SERVE_AR_ONESHOT;
        p.time_s = onestage_s(in);
    } else {
        p.strategy = SERVE_AR_TWOSHOT;
        p.time_s = twostage_s(in);
    }
    if (in->eager) /* all_reduce_unreg: the input copied into the registered buffer first */
        p.time_s += in->launch_s + (in->stream_bw > 0 ? 2 * (double)in->bytes / in->stream_bw : 0);
    return p;
}

static strata_serve_ar_plan vllm_custom(const strata_serve_ar_in *in)
{
    return vllm_custom_upto(in, VLLM_AR_MAX_BYTES);
}

static strata_serve_ar_plan vllm_custom_rocm(const strata_serve_ar_in *in)
{
    return vllm_custom_upto(in, VLLM_ROCM_AR_MAX_BYTES - 1);
}

static strata_serve_ar_plan trtllm_auto(const strata_serve_ar_in *in)
{
    strata_serve_ar_plan p = {SERVE_AR_NCCL, 0, false};
    double workspace = in->ranks <= 2 ? TRTLLM_WORKSPACE_SMALL : TRTLLM_WORKSPACE;
    if (in->ranks < 2 || (double)in->bytes > workspace || in->link_bw <= 0)
        return p;
    if (in->ranks > 2 && in->tokens > TRTLLM_MIN_LATENCY_MAX_TOKENS)
        return p;
    if (in->tokens <= TRTLLM_ONESHOT_MAX_TOKENS) {
        p.strategy = SERVE_AR_ONESHOT;
        p.time_s = oneshot_s(in);
    } else {
        p.strategy = SERVE_AR_TWOSHOT;
        p.time_s = twoshot_s(in);
    }
    p.fuses_norm = true; /* runFusionAllReduce: the fusion pattern in the kernel's epilogue */
    return p;
}

static const strata_serve_allreduce rows[] = {
    {"nccl", NULL, "NCCL's all-reduce as the hardware's collective row times it"},
    {"trtllm-auto", trtllm_auto,
     "TensorRT-LLM's AllReduce (AUTO): one-shot / two-shot NVLink kernels up to its workspace and token "
     "thresholds, NCCL beyond"},
    {"vllm-custom", vllm_custom,
     "vLLM's custom all-reduce (0.6): 1-stage / 2-stage NVLink kernels up to 8 MiB at 2, 4, 6 or 8 ranks, NCCL "
     "beyond; outside a CUDA graph its input copied into the IPC buffer first"},
    {"vllm-custom-rocm", vllm_custom_rocm,
     "vLLM's custom all-reduce on ROCm (0.7.3, 0.10.0): the same kernels over xGMI below 16 MiB, RCCL beyond"},
    {NULL, NULL, NULL},
};

const strata_serve_allreduce *strata_serve_allreduce_find(const char *name, GError **err)
{
    return serve_names_lookup(SERVE_NAMES(rows, strata_serve_allreduce), name, STRATA_ERROR_INPUT, err,
                              "TP all-reduce '%s': expected one of %s");
}

strata_serve_ar_plan strata_serve_allreduce_plan(const strata_serve_allreduce *a, const strata_serve_ar_in *in)
{
    if (!a || !a->plan)
        return (strata_serve_ar_plan){SERVE_AR_NCCL, 0, false};
    return a->plan(in);
}
