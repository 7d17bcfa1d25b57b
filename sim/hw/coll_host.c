/*
 * coll_host.c: the host side of a collective's launch when one process
 * drives several GPUs (coll_host.h): the layout and the per-communicator
 * host cost, read for the nccl and rccl rows, and each GPU's start delay.
 */
#include "hw/coll_host.h"
#include "hw/hw_internal.h"

bool hw_coll_host_load(const hw_load_ctx *ctx, const char *group, const char *prefix, strata_coll_host *out,
                       GError **err)
{
    char *layout = g_strdup_printf("%s_ranks_per_process", prefix), *launch = g_strdup_printf("%s_host_launch", prefix),
         *plan = g_strdup_printf("%s_host_plan", prefix), *overlap = g_strdup_printf("%s_host_overlap", prefix),
         *channel = g_strdup_printf("%s_host_channel", prefix);
    *out = (strata_coll_host){.ranks_per_process = 1};
    bool has_launch = strata_keyfile_has_key(ctx->k, group, launch);
    bool ok = hw_get_count(ctx, group, layout, 1, STRATA_COLL_HOST_MAX, 1,
                           "a whole number of GPUs per process from 1 to 64 (1: one rank per GPU)",
                           &out->ranks_per_process, err) &&
              hw_get_time(ctx, group, launch, &out->launch_s, err) && hw_get_time(ctx, group, plan, &out->plan_s, err) &&
              hw_get_time(ctx, group, channel, &out->channel_s, err);
    out->overlap = out->ranks_per_process > 1; /* a `-g N` benchmark times calls back to back */
    ok = ok && hw_get_flag(ctx, group, overlap, &out->overlap, err);
    if (ok && out->ranks_per_process > 1 && !has_launch) {
        hw_fail(ctx, err, group, layout, "%s = %u: expected %s too (the host's time per communicator)", layout,
                out->ranks_per_process, launch);
        ok = false;
    }
    g_free(layout);
    g_free(launch);
    g_free(plan);
    g_free(overlap);
    g_free(channel);
    return ok;
}

double strata_coll_host_delay(const strata_coll_host *h, uint32_t device)
{
    if (!h || h->ranks_per_process <= 1)
        return 0.0;
    uint32_t n = h->ranks_per_process, p = device % n;
    double launch = h->launch_s + MAX(1u, h->channels) * h->channel_s; /* uploadWork's per channel, then the launch */
    if (h->overlap)
        return MAX(0.0, n * h->plan_s + (p + 1) * launch - h->call_s);
    return (double)(n - 1) * h->plan_s + (double)p * launch;
}
