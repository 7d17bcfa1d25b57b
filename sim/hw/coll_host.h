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
 * Back-to-back calls (host_overlap): nccl-tests and rccl-tests time a
 * loop of calls with one sync at the end (common.cu BenchTime: iters x
 * startColl, whose ncclGroupStart / one call per GPU / ncclGroupEnd runs
 * doLaunches once), so the host's work for call k+1 overlaps the GPUs'
 * call k and a call takes max(H, T), H = N (host_plan + host_launch + C x
 * host_channel). It is on by default wherever ranks_per_process is above
 * 1 (a `-g N` benchmark's layout); host_overlap = false gives one call
 * alone.
 *
 * Invariants: ranks_per_process is 1 (the default: one rank per GPU, no
 * delay) to STRATA_COLL_HOST_MAX; with it above 1 host_launch is given
 * (host_plan and host_channel may be left out: 0, not priced); all three
 * are times from 0 to 1 s; a bad value is refused at its line.
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
    {prefix "_host_overlap", false,                                                                                  \
     "collectives = " prefix ": true or false: calls issued back to back (nccl-tests/rccl-tests), the host's "      \
     "launches of a call overlapping the previous call's kernels, a call's time in steady state; default true "      \
     "when " prefix "_ranks_per_process is above 1"}

typedef struct strata_coll_host {
    uint32_t ranks_per_process; /* 1: one rank per GPU */
    double launch_s;            /* the host's time per communicator's kernel launch */
    double plan_s;              /* the host's time per communicator's plan */
    double channel_s;           /* the host's time per channel of a communicator's kernel */
    uint32_t channels;          /* the call's channels (the row's choice; 0 read as 1) */
    bool overlap;               /* back-to-back calls: the steady state's delays */
    double call_s;              /* with overlap: the call's time once its last rank starts (the row's estimate) */
} strata_coll_host;

/* Reads `<prefix>_ranks_per_process`, `_host_launch`, `_host_plan`,
 * `_host_channel` and `_host_overlap` of group into out (defaults: 1, 0,
 * 0, 0, and overlap when the layout is above 1); false with err at the
 * key's line when a value is bad, or the layout is above 1 without a
 * host_launch. */
bool hw_coll_host_load(const struct hw_load_ctx *ctx, const char *group, const char *prefix, strata_coll_host *out,
                       GError **err);

/* The delay of device d's kernel start behind one rank per GPU's, with
 * L = launch_s + C x channel_s (C = channels, at least 1): (N - 1) x
 * plan_s + (d mod N) x L with N GPUs per process, 0 with one (or h NULL).
 * With overlap, the steady state of calls issued back to back: the host
 * spends H = N (plan_s + L) a call, and relative to the previous call's
 * end the GPU at position p gets its kernel N plan_s + (p + 1) L - call_s
 * later (0 if that is negative), so that a call takes max(H, call_s). */
double strata_coll_host_delay(const strata_coll_host *h, uint32_t device);

#endif
