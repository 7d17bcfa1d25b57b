/*
 * staging.c: pageable copies through the driver's pinned staging buffer
 * (staging.h).
 */
#include "hw/staging.h"

#include <math.h>

/* The serial path: every chunk of a whole buffer pays its DMA (setup and
 * bytes) and its CPU copy, one after the other. */
static double serial_time(const strata_staging_path *p, uint64_t bytes)
{
    uint64_t chunk = p->buffer ? p->buffer : 1, n = bytes / chunk, rest = bytes % chunk;
    double t = (double)n * (p->dma_latency + (double)chunk / p->dma_rate + (double)chunk / p->cpu_rate);
    if (rest)
        t += p->dma_latency + (double)rest / p->dma_rate + (double)rest / p->cpu_rate;
    return t;
}

double strata_staging_pipeline_time(const strata_staging_path *p, uint64_t bytes)
{
    if (p->serial)
        return serial_time(p, bytes);
    uint64_t chunk = p->buffer / 2 ? p->buffer / 2 : 1;
    /* cpu_end / dma_end of the previous two chunks: a half of the buffer is
     * free again once the DMA of the chunk before the previous one ended. */
    double cpu_end = 0, dma_end = 0, dma_end_before = 0;
    for (uint64_t done = 0, i = 0; done < bytes; i++) {
        if (i == STRATA_STAGING_EXACT_CHUNKS && bytes - done > chunk) {
            /* the steady state: every full chunk shifts the whole state by
             * the last chunk's period (the slower stage's time); the rest
             * of the full chunks in one step, bounded work for any size */
            double period = dma_end - dma_end_before;
            uint64_t skip = (bytes - done) / chunk - 1;
            cpu_end += (double)skip * period;
            dma_end_before = dma_end + (double)(skip - 1) * period;
            dma_end += (double)skip * period;
            done += skip * chunk;
        }
        uint64_t c = bytes - done < chunk ? bytes - done : chunk;
        double cpu_start = cpu_end > dma_end_before ? cpu_end : dma_end_before;
        double cpu_done = cpu_start + (double)c / p->cpu_rate;
        double dma_start = cpu_done > dma_end ? cpu_done : dma_end;
        dma_end_before = dma_end;
        dma_end = dma_start + p->dma_latency + (double)c / p->dma_rate;
        cpu_end = cpu_done;
        done += c;
    }
    return dma_end;
}

double strata_staging_extra(const strata_staging_path *p, uint64_t bytes)
{
    double flow = p->link_rate > 0 ? p->link_rate : p->cpu_rate;
    double slower = flow < p->dma_rate ? flow : p->dma_rate;
    double alone = p->dma_latency + (double)bytes / slower;
    double extra = strata_staging_pipeline_time(p, bytes) - alone;
    return extra > 0 ? extra : 0;
}

/* The pipeline's time at a CPU copy of x seconds a byte (0: instant). */
static double time_at(const strata_staging_path *p, uint64_t bytes, double x)
{
    strata_staging_path q = *p;
    q.cpu_rate = x > 0 ? 1 / x : INFINITY;
    return strata_staging_pipeline_time(&q, bytes);
}

double strata_staging_cpu_rate_for(const strata_staging_path *p, uint64_t bytes, double seconds)
{
    if (bytes == 0 || !(seconds > time_at(p, bytes, 0)))
        return 0;
    double lo = 0, hi = seconds / (double)bytes; /* time_at(lo) < seconds <= time_at(hi) */
    for (int i = 0; i < 200; i++) {
        double mid = lo + (hi - lo) / 2;
        if (mid <= lo || mid >= hi)
            break; /* adjacent doubles */
        if (time_at(p, bytes, mid) < seconds)
            lo = mid;
        else
            hi = mid;
    }
    return 1 / hi;
}

bool strata_staging_on_route(const strata_hw *hw, const strata_hop *hops, uint32_t n, strata_staging_path *p)
{
    for (uint32_t i = 0; i < n; i++) {
        const strata_link_spec *s = strata_hw_link(hw, hops[i].link);
        if (s->staging_buffer == 0 || n < 2)
            continue;
        /* the DMA: the link after the CPU copy (to a device) or before it (from one) */
        const strata_link_spec *d = strata_hw_link(hw, hops[i + 1 < n ? i + 1 : i - 1].link);
        /* into the staging buffer: the hop leaves the link's pageable end */
        uint32_t from = hops[i].forward ? s->a : s->b;
        double rate = strata_hw_memory(hw, from)->pageable ? s->cpu_copy_in : s->cpu_copy_out;
        *p = (strata_staging_path){.buffer = s->staging_buffer, .cpu_rate = rate > 0 ? rate : s->bandwidth,
                                   .link_rate = s->bandwidth, .dma_rate = d->bandwidth,
                                   .dma_latency = d->latency, .serial = s->staging_serial};
        return true;
    }
    return false;
}

double strata_staging_route_extra(const strata_hw *hw, const strata_hop *hops, uint32_t n, uint64_t bytes)
{
    strata_staging_path p;
    return strata_staging_on_route(hw, hops, n, &p) ? strata_staging_extra(&p, bytes) : 0;
}
