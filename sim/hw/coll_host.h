/*
 * coll_host.h: the host side of a collective's launch when one process
 * drives several GPUs (nccl-tests / rccl-tests `-g N`, a single-process
 * multi-GPU job): the process layout and the host thread's cost per
 * communicator, keys of the nccl and rccl rows (coll_impl.h), each under
 * its row's prefix (`nccl_ranks_per_process`, `rccl_host_launch`, ...).
 *
 * The mechanism, from the libraries' own code: the thread that drives N
 * GPUs calls the collective once per communicator inside
 * ncclGroupStart/ncclGroupEnd, and ncclGroupEnd's doLaunches
 * (src/group.cc, NCCL 2.12 onward; RCCL's is NCCL's) runs two loops over
 * the communicators on that one thread: first ncclLaunchPrepare for each
 * (its plans, the stream dependencies), then the kernel launches, one
 * communicator after another. So the GPU at position p of its process
 * (device d is at d mod N) starts its kernel after N plans and p + 1
 * launches, where one rank per GPU has one of each: (N - 1) x host_plan
 * + p x host_launch later, on top of the library's fixed cost, which
 * every rank pays (its own plan and launch are inside that cost, as with
 * one rank per GPU). A ring waits for the last GPU: (N - 1) x (host_plan +
 * host_launch).
 *
 * The launch loop's work grows with the kernel's channels: for each
 * channel of its plan the thread builds one work struct (addCollToPlan's
 * appendWorkElemColl, in ncclLaunchPrepare) and copies it into the work
 * FIFO in pinned host memory (uploadWork, in
 * ncclLaunchKernelBefore_NoUncapturedCuda, just before cudaLaunchKernelExC;
 * NCCL v2.19.3-1 src/enqueue.cc; RCCL's is NCCL's). host_channel prices
 * one channel's, so one communicator's launch costs host_launch + C x
 * host_channel with C the row's channels (channels below, set per call).
 *
 * The runtime calls around each launch (wave 25), counted in the
 * libraries' sources (NCCL v2.18.3-1 to v2.27.3-1 src/group.cc doLaunches,
 * the same three loops in every release; src/enqueue.cc; src/misc/
 * strongstream.cc): each of doLaunches' three loops calls cudaSetDevice
 * once per communicator (the plan loop, the launch loop, the finish
 * loop: host_set_device each); NCCL's ncclLaunchPrepare makes the launch
 * stream wait on its device stream (one cudaEventRecord + one
 * cudaStreamWaitEvent, uncaptured) and ncclLaunchFinish the device stream
 * on the launch stream (one more pair): host_stream_op each, 2 in the plan
 * loop and 2 in the finish loop. RCCL (rocm-5.7.0 to develop 2.21.5)
 * launches with hipExtLaunchKernel carrying the communicator's doneEvent
 * in the dispatch packet, and with one user stream, uncaptured, skips both
 * pairs (its ncclLaunchPrepare waits on doneEvent only when the stream
 * changed): no stream op. So per communicator the plan loop costs host_plan
 * + S + k_p O, the launch loop S + host_launch + C x host_channel, the
 * finish loop S + k_f O (S host_set_device, O host_stream_op; k_p = k_f = 2
 * for nccl, 0 for rccl). host_launch is the launch call itself and any
 * host work no key prices.
 *
 * Back-to-back calls (host_overlap): nccl-tests and rccl-tests time a
 * loop of calls with one sync at the end (common.cu BenchTime: iters x
 * startColl, whose ncclGroupStart / one call per GPU / ncclGroupEnd runs
 * doLaunches once), so the host's work for call k+1 overlaps the GPUs'
 * call k and a call takes max(H, T), H = N (P + L + F) the host's time a
 * call (with the runtime calls above; call k+1's plan loop follows call
 * k's finish loop) and T the GPUs' time for the call. In steady state the
 * GPU at position p gets its kernel N (P + F) + (p + 1) L - T after the
 * previous call's end (never before it): where H > T the last GPU starts
 * H - T late and the call ends H after the previous one, whatever the
 * others did meanwhile; where T >= H no GPU waits. So the SPMD expansion
 * starts every GPU at once and ends each GPU's call no earlier than H
 * after its start (strata_coll_host_floor: a timed wait beside the
 * collective's lanes, which its end joins), with T the simulated call
 * itself, not the library's estimate of it (an estimate above the
 * simulated time would end the call below H). It is on by default
 * wherever ranks_per_process is above 1 (a `-g N` benchmark's layout);
 * host_overlap = false gives one call alone. Every collective alike: an
 * all-to-all's grouped p2p, whose library model has no estimate, too.
 *
 * A graph launch (launch = graph; nccl-tests / rccl-tests -G N): the
 * benchmark captures its timed loop into one graph per GPU and replays
 * it (NVIDIA/nccl-tests @a0b82b2 src/common.cu l. 707-773: each stream
 * captured with cudaStreamBeginCapture, the `iters` startColl calls, each
 * ncclGroupStart / one call per GPU / ncclGroupEnd, issued into the
 * capture, cudaStreamEndCapture and cudaGraphInstantiate per GPU, the
 * timer reset, then N cudaGraphLaunch a replay, the time divided by
 * iters x N; ROCm/rccl-tests @ae3e635 src/common.cu l. 536-587 the same
 * with HIP). So the library's host work (doLaunches' three loops above,
 * uploadWork, the launch call and the runtime calls around it) runs once,
 * during the capture, outside the timer; a replay runs the captured kernel
 * nodes with their captured arguments. What a call keeps is the GPUs':
 * the kernel's start and the collective inside it, the library's base
 * latency (its tuning model's fixed cost, which has no graph term:
 * NVIDIA/nccl @5067397 src/graph/tuning.cc ncclTopoGetAlgoTime l. 630-655
 * prices a call alike whether captured or not). The host's per-call share
 * of a replay, N cudaGraphLaunch over iters calls (20 by default,
 * nccl-tests common.cu l. 98, rccl-tests l. 89), is not priced. So with graph neither the delay nor the
 * floor applies: a call takes its GPUs' time, whatever the layout, and
 * host_launch is not needed.
 *
 * A call timed alone from the program (host_call; wave 46): a benchmark
 * that records its start event on an idle device, after a barrier whose
 * work it waits for, and then calls the collective through a framework,
 * times the framework's host path to the library's launch too, and the
 * ranks' skew out of the barrier (stas00/ml-engineering @744d01e
 * network/benchmarks/all_reduce_bench.py l. 207-213: dist.barrier(),
 * start_event.record(), dist.all_reduce(tensor), end_event.record(),
 * torch.cuda.synchronize()). nccl-tests does not: its calls queue behind
 * one another, so the host runs ahead (the model's time is nccl-tests').
 * host_call is that cost a call, the same on every rank: each GPU's kernel
 * starts host_call later, whatever the layout; only with calls timed one
 * at a time (not with host_overlap, nor a graph replay, both refused).
 *
 * The grouped calls before ncclGroupEnd (wave 46): nccl-tests' all-to-all
 * issues, for each GPU, one ncclSend and one ncclRecv to every rank,
 * itself included, inside one ncclGroupStart / ncclGroupEnd
 * (NVIDIA/nccl-tests @07ac716 src/alltoall.cu AlltoAllRunColl: 2 x
 * nRanks calls a communicator), where a collective issues one call. The
 * one thread makes every call of every communicator before ncclGroupEnd
 * runs doLaunches, and each is a pass through ncclEnqueueCheck (NVIDIA/nccl
 * v2.19.3-1 src/enqueue.cc l. 1598-1631: ncclGroupStartInternal, the
 * communicator's checks, ArgsCheck, taskAppend's p2p branch l. 1504-1542
 * appending one ncclTaskP2p to the peer's queue and, on the group's first
 * call to a peer, checking each of its p2pnChannelsPerPeer connectors,
 * ncclGroupEndInternal). host_p2p_call prices one such call; the first
 * call's enqueue is inside host_launch, as an all-reduce's one call is, so
 * a communicator's enqueue loop costs E = (calls - 1) x host_p2p_call and
 * the N communicators' loops all run before the first launch: a GPU's
 * start is N x E later, the back-to-back floor H = N (E + P + L + F).
 *
 * Invariants: ranks_per_process is 1 (the default: one rank per GPU, no
 * delay) to STRATA_COLL_HOST_MAX; with it above 1 and a stream launch host_launch is given
 * (host_plan, host_channel, host_set_device and host_stream_op may be
 * left out: 0, not priced); all are times from 0 to 1 s; a bad value is
 * refused at its line.
 */
#ifndef STRATA_HW_COLL_HOST_H
#define STRATA_HW_COLL_HOST_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

struct hw_load_ctx; /* the loader's (hw_internal.h) */

#define STRATA_COLL_HOST_MAX 64u

/* The two keys' lines of a row's key table (coll_impl.h), for `prefix`
 * "nccl" or "rccl". */
#define STRATA_COLL_HOST_KEYS(prefix)                                                                                \
    {prefix "_ranks_per_process", false,                                                                             \
     "collectives = " prefix ": GPUs one process (one host thread) drives, 1 to 64: 1 (default) one rank per GPU; "  \
     "N as nccl-tests/rccl-tests -g N, the devices d of one process those with the same d / N"},                     \
    {prefix "_host_launch", false,                                                                                   \
     "collectives = " prefix ": the host thread's time to launch one communicator's kernel in ncclGroupEnd, 0 to "  \
     "1 s; needed when " prefix "_ranks_per_process is above 1"},                                                    \
    {prefix "_host_plan", false,                                                                                     \
     "collectives = " prefix ": the host thread's time to prepare one communicator's plan in ncclGroupEnd "         \
     "(ncclLaunchPrepare), 0 to 1 s (default 0)"},                                                                   \
    {prefix "_host_channel", false,                                                                                  \
     "collectives = " prefix ": the host thread's time per channel of one communicator's kernel (its work struct "  \
     "built and copied into the work FIFO), 0 to 1 s (default 0)"},                                                 \
    {prefix "_host_set_device", false,                                                                               \
     "collectives = " prefix ": the host thread's time for one cudaSetDevice / hipSetDevice in ncclGroupEnd's "     \
     "doLaunches (three a communicator), 0 to 1 s (default 0)"},                                                    \
    {prefix "_host_stream_op", false,                                                                                \
     "collectives = " prefix ": the host thread's time for one cudaEventRecord or cudaStreamWaitEvent around a "    \
     "communicator's launch (NCCL: four a communicator; RCCL with one stream: none), 0 to 1 s (default 0)"},       \
    {prefix "_host_p2p_call", false,                                                                                 \
     "collectives = " prefix ": the host thread's time for one grouped ncclSend or ncclRecv call (its enqueue, "    \
     "before ncclGroupEnd; an all-to-all makes 2 x ranks a communicator), 0 to 1 s (default 0)"},                  \
    {prefix "_launch", false,                                                                                        \
     "collectives = " prefix ": stream (default) or graph: how the timed calls are launched; graph as "            \
     "nccl-tests/rccl-tests -G N, the calls captured once and replayed from a CUDA/HIP graph, no host work a call "  \
     "(no " prefix "_host_* cost, whatever " prefix "_ranks_per_process)"},                                         \
    {prefix "_host_overlap", false,                                                                                  \
     "collectives = " prefix ": true or false: calls issued back to back (nccl-tests/rccl-tests), the host's "      \
     "launches of a call overlapping the previous call's kernels, a call's time in steady state; default true "      \
     "when " prefix "_ranks_per_process is above 1"},                                                               \
    {prefix "_host_call", false,                                                                                     \
     "collectives = " prefix ": the calling program's host time a call timed alone on an idle device (its start "   \
     "event, then the framework's path to the launch and the ranks' skew), 0 to 1 s (default 0); not with "          \
     prefix "_host_overlap or " prefix "_launch = graph"}

typedef struct strata_coll_host {
    uint32_t ranks_per_process; /* 1: one rank per GPU */
    double launch_s;            /* the host's time per communicator's kernel launch */
    double plan_s;              /* the host's time per communicator's plan */
    double channel_s;           /* the host's time per channel of a communicator's kernel */
    double set_device_s;        /* one cudaSetDevice / hipSetDevice */
    double stream_op_s;         /* one cudaEventRecord or cudaStreamWaitEvent */
    double call_s;              /* the program's host time a call timed alone (host_call; 0: none) */
    uint32_t plan_stream_ops;   /* stream ops per communicator in the plan loop (nccl 2, rccl 0) */
    uint32_t finish_stream_ops; /* ... in the finish loop (nccl 2, rccl 0) */
    uint32_t channels;          /* the call's channels (the row's choice; 0 read as 1) */
    double p2p_call_s;          /* one grouped ncclSend / ncclRecv call's enqueue */
    uint32_t calls;             /* the library calls a communicator makes for the op (0 read as 1) */
    bool overlap;               /* back-to-back calls: the steady state's floor */
    bool graph;                 /* replayed from a CUDA/HIP graph: no host work a call */
} strata_coll_host;

/* Reads `<prefix>_ranks_per_process`, `_host_launch`, `_host_plan`,
 * `_host_channel`, `_host_set_device`, `_host_stream_op`, `_host_p2p_call`,
 * `_host_overlap`, `_launch` and `_host_call` of group into out (defaults: 1, 0, 0, 0,
 * 0, 0, 0, overlap when the layout is above 1, stream, 0), and stream_ops, the library's
 * stream ops a communicator in each of the plan and finish loops (NCCL 2,
 * RCCL with one stream 0: above), into plan_stream_ops and
 * finish_stream_ops; false with err at the key's line when a value is bad,
 * the layout is above 1 without a host_launch (unless launch = graph), or
 * host_call is above 0 with overlap or a graph launch. */
bool hw_coll_host_load(const struct hw_load_ctx *ctx, const char *group, const char *prefix, uint32_t stream_ops,
                       strata_coll_host *out, GError **err);

/* The delay of device d's kernel start behind one rank per GPU's, with
 * E = (calls - 1) x p2p_call_s (the enqueue loop's work a communicator
 * beyond its first call), P = plan_s + S + k_p O (the plan loop's work a communicator), L = S +
 * launch_s + C x channel_s (the launch loop's; C = channels, at least 1)
 * and F = S + k_f O (the finish loop's), S = set_device_s, O =
 * stream_op_s: call_s + N x E + (N - 1) x P + (d mod N) x L with N GPUs
 * per process, call_s with one, 0 with overlap (strata_coll_host_floor), 0
 * with a graph launch (and 0 with h NULL). */
double strata_coll_host_delay(const strata_coll_host *h, uint32_t device);
/* With overlap and N above 1, the least time of a call from its start on
 * each GPU, the host's H = N (E + P + L + F) (the call takes max(H, its
 * GPUs' time)); else 0 (and 0 with a graph launch). */
double strata_coll_host_floor(const strata_coll_host *h);

#endif
