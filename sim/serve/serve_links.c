/*
 * serve_links.c: the routes a served model's ranks use (serve_links.h).
 */
#include "serve/serve_links.h"
#include <math.h>
#include "core/error.h"
#include "core/units.h"

/* The route's narrowest link and summed latency between two memories. */
static bool route_figures(const strata_hw *hw, uint32_t from, uint32_t to, double *bw, double *lat, GError **err)
{
    const strata_hop *hops = NULL;
    uint32_t n = 0;
    if (!strata_hw_route(hw, from, to, &hops, &n, err))
        return false;
    *bw = INFINITY;
    *lat = 0;
    for (uint32_t i = 0; i < n; i++) {
        const strata_link_spec *l = strata_hw_link(hw, hops[i].link);
        *bw = fmin(*bw, l->bandwidth);
        *lat += l->latency;
    }
    if (!n)
        *bw = 0;
    return true;
}

/* The first pinned host memory on the host of dev_mem that a route
 * reaches, its route's figures in bw and lat; -1 when none. */
static int pinned_host(const strata_hw *hw, uint32_t dev_mem, double *bw, double *lat)
{
    const strata_memory_spec *dm = strata_hw_memory(hw, dev_mem);
    for (uint32_t i = 0; i < strata_hw_memory_count(hw); i++) {
        const strata_memory_spec *ms = strata_hw_memory(hw, i);
        if (ms->kind == STRATA_MEM_HOST && !ms->pageable && ms->host == dm->host) {
            GError *e = NULL;
            if (route_figures(hw, dev_mem, i, bw, lat, &e))
                return (int)i;
            g_clear_error(&e);
        }
    }
    return -1;
}

/* The most of devices 1..tp-1 whose routes to device 0's memory cross one
 * link (serve_links.h ar_peers_per_link). */
static bool peers_per_link(const strata_hw *hw, uint32_t dev_mem, int base, uint32_t tp, uint32_t *out,
                           GError **err)
{
    uint32_t links = strata_hw_link_count(hw), most = 0;
    uint32_t *uses = g_new0(uint32_t, links ? links : 1);
    bool ok = true;
    for (uint32_t p = 1; p < tp && ok; p++) {
        const strata_hop *hops = NULL;
        uint32_t n = 0;
        ok = strata_hw_route(hw, strata_hw_memory_on(hw, (uint32_t)base, p), dev_mem, &hops, &n, err);
        for (uint32_t i = 0; ok && i < n; i++) {
            uint32_t u = ++uses[hops[i].link];
            most = MAX(most, u);
        }
    }
    g_free(uses);
    *out = most;
    return ok;
}

bool strata_serve_links_find(const strata_hw *hw, uint32_t unit, uint32_t tp, strata_serve_links *out,
                             GError **err)
{
    *out = (strata_serve_links){0};
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    uint32_t dev_mem = u->operands;
    int base = strata_hw_memory_base_index(hw, NULL);
    if (tp > 1) {
        if (strata_hw_devices(hw) < tp) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--tp %u: expected at most the %u device%s of %s",
                        tp, strata_hw_devices(hw), strata_hw_devices(hw) == 1 ? "" : "s", strata_hw_origin(hw));
            return false;
        }
        uint32_t peer = strata_hw_memory_on(hw, (uint32_t)base, 1);
        if (!route_figures(hw, dev_mem, peer, &out->ar_bw, &out->ar_lat, err) ||
            !peers_per_link(hw, dev_mem, base, tp, &out->ar_peers_per_link, err))
            return false;
    }
    if (pinned_host(hw, dev_mem, &out->host_bw, &out->host_lat) < 0)
        out->host_bw = 0; /* no pinned host memory: swapping is refused by the run */
    return true;
}

uint64_t strata_serve_links_swap_limit(const strata_hw *hw, uint32_t unit, uint32_t tp, char **what)
{
    double bw = 0, lat = 0;
    int h = pinned_host(hw, strata_hw_compute(hw, unit)->operands, &bw, &lat);
    if (h < 0) {
        *what = g_strdup_printf("the user address space of an x86-64 process, as %s has no pinned host memory "
                                "reached from its device memory", strata_hw_origin(hw));
        return 1ull << 47;
    }
    const strata_memory_spec *ms = strata_hw_memory(hw, (uint32_t)h);
    uint32_t ranks = MAX(1u, MIN(tp, strata_hw_devices_per_host(hw)));
    char *size = strata_format_size(ms->capacity);
    *what = g_strdup_printf("70%% of the pinned host memory '%s' of %s (%" G_GUINT64_FORMAT " B, %s) over the %u rank%s of --tp %u on its "
                            "host, as vLLM refuses more (Too large swap space)", ms->name, strata_hw_origin(hw),
                            ms->capacity, size, ranks, ranks == 1 ? "" : "s", tp);
    g_free(size);
    return (uint64_t)((unsigned __int128)ms->capacity * 7 / (10u * ranks));
}

