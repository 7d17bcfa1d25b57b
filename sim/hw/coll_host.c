/*
 * coll_host.c: the host side of a collective's launch when one process
 * drives several GPUs (coll_host.h): the layout and the per-communicator
 * host cost, read for the nccl and rccl rows, and each GPU's start delay
 * (none where the calls are replayed from a graph).
 */
#include "hw/coll_host.h"
#include <string.h>
#include "hw/hw_internal.h"

static bool load_times(const hw_load_ctx *ctx, const char *group, const char *prefix, strata_coll_host *out,
                       GError **err)
{
    static const char *const names[] = {"host_launch",    "host_plan",     "host_channel", "host_set_device",
                                        "host_stream_op", "host_p2p_call", "host_call"};
    double *const dst[] = {&out->launch_s,    &out->plan_s,     &out->channel_s, &out->set_device_s,
                           &out->stream_op_s, &out->p2p_call_s, &out->call_s};
    bool ok = true;
    for (size_t i = 0; ok && i < G_N_ELEMENTS(names); i++) {
        char *key = g_strdup_printf("%s_%s", prefix, names[i]);
        ok = hw_get_time(ctx, group, key, dst[i], err);
        g_free(key);
    }
    return ok;
}

/* `<prefix>_launch`: stream (the default) or graph, into *graph. */
static bool get_mode(const hw_load_ctx *ctx, const char *group, const char *key, bool *graph, GError **err)
{
    char *v = hw_get_text(ctx, group, key);
    const char *s = v ? g_strstrip(v) : "stream";
    *graph = strcmp(s, "graph") == 0;
    bool ok = *graph || strcmp(s, "stream") == 0 ||
              hw_fail_value(ctx, err, group, key, "stream (each call launched by the host) or graph (the calls "
                            "replayed from a CUDA/HIP graph, nccl-tests/rccl-tests -G N)", v);
    g_free(v);
    return ok;
}

bool hw_coll_host_load(const hw_load_ctx *ctx, const char *group, const char *prefix, uint32_t stream_ops,
                       strata_coll_host *out, GError **err)
{
    char *layout = g_strdup_printf("%s_ranks_per_process", prefix), *launch = g_strdup_printf("%s_host_launch", prefix),
         *overlap = g_strdup_printf("%s_host_overlap", prefix), *mode = g_strdup_printf("%s_launch", prefix);
    *out = (strata_coll_host){.ranks_per_process = 1, .plan_stream_ops = stream_ops, .finish_stream_ops = stream_ops};
    bool has_launch = strata_keyfile_has_key(ctx->k, group, launch);
    bool ok = hw_get_count(ctx, group, layout, 1, STRATA_COLL_HOST_MAX, 1,
                           "a whole number of GPUs per process from 1 to 64 (1: one rank per GPU)",
                           &out->ranks_per_process, err) &&
              load_times(ctx, group, prefix, out, err);
    out->overlap = out->ranks_per_process > 1; /* a `-g N` benchmark times calls back to back */
    ok = ok && hw_get_flag(ctx, group, overlap, &out->overlap, err) && get_mode(ctx, group, mode, &out->graph, err);
    if (ok && out->ranks_per_process > 1 && !has_launch && !out->graph) {
        hw_fail(ctx, err, group, layout, "%s = %u: expected %s too (the host's time per communicator)", layout,
                out->ranks_per_process, launch);
        ok = false;
    }
    if (ok && out->call_s > 0 && (out->overlap || out->graph)) { /* a call timed alone: neither queued nor replayed */
        char *call = g_strdup_printf("%s_host_call", prefix);
        hw_fail(ctx, err, group, call, "expected 0 with %s (calls timed one at a time on an idle device only)",
                out->graph ? mode : overlap);
        g_free(call);
        ok = false;
    }
    if (ok && out->p2p_call_s > 0 && strcmp(prefix, "nccl")) { /* only NCCL's all-to-all counts its calls */
        char *p2p = g_strdup_printf("%s_host_p2p_call", prefix);
        hw_fail(ctx, err, group, p2p, "expected 0: %s's grouped send/receive calls are not priced (only NCCL's "
                "all-to-all counts its calls)", prefix);
        g_free(p2p);
        ok = false;
    }
    g_free(layout);
    g_free(launch);
    g_free(overlap);
    g_free(mode);
    return ok;
}

/* The host's work for one communicator in its enqueue loop before
 * ncclGroupEnd and in doLaunches' three loops: *enqueue, *plan, *launch,
 * *finish (coll_host.h E, P, L, F). */
static void loops(const strata_coll_host *h, double *enqueue, double *plan, double *launch, double *finish)
{
    double sd = h->set_device_s, op = h->stream_op_s;
    *enqueue = (double)(MAX(1u, h->calls) - 1) * h->p2p_call_s; /* the first call's is inside host_launch */
    *plan = h->plan_s + sd + h->plan_stream_ops * op; /* doLaunches' plan loop: cudaSetDevice, prepare */
    *finish = sd + h->finish_stream_ops * op;         /* its finish loop: cudaSetDevice, ncclLaunchFinish */
    /* its launch loop: cudaSetDevice, uploadWork's per channel, the launch */
    *launch = sd + h->launch_s + MAX(1u, h->channels) * h->channel_s;
}

double strata_coll_host_delay(const strata_coll_host *h, uint32_t device)
{
    if (!h || h->overlap || h->graph)
        return 0.0; /* back to back: the floor instead (strata_coll_host_floor); a graph: no host work a call */
    if (h->ranks_per_process <= 1)
        return h->call_s; /* one rank per GPU: the program's own path only */
    uint32_t n = h->ranks_per_process, p = device % n;
    double enqueue, plan, launch, finish;
    loops(h, &enqueue, &plan, &launch, &finish);
    return h->call_s + (double)n * enqueue + (double)(n - 1) * plan + (double)p * launch; /* enqueues before doLaunches */
}

double strata_coll_host_floor(const strata_coll_host *h)
{
    if (!h || h->ranks_per_process <= 1 || !h->overlap || h->graph)
        return 0.0;
    double enqueue, plan, launch, finish;
    loops(h, &enqueue, &plan, &launch, &finish);
    return h->ranks_per_process * (enqueue + plan + launch + finish);
}
