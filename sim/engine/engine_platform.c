/*
 * engine_platform.c: the SimGrid platform generated from the hardware model.
 *
 * Mapping (one device: one Full routing zone, every route explicit and
 * one-way):
 *   memory M        host "mem:M" (speed irrelevant) and host "mem:M:twin", the
 *                   target of copies inside M;
 *                   link "port:M", SHARED, bandwidth = M's bandwidth, latency 0:
 *                   the memory's own port, on every route that reads or writes M;
 *   link L (hw)     link "link:L", bandwidth and latency from the .ini,
 *                   SPLITDUPLEX when duplex = full (UP = from a to b), else SHARED;
 *   compute unit U  host "unit:U", speed = U's peak FLOP/s, and link "operand:U",
 *                   bandwidth = the operand memory's bandwidth, latency = its
 *                   access latency.
 *   routes          A -> B: port:A, then for each hop of strata_hw_route() the
 *                   link and the port of the memory it reaches (so a route through
 *                   HBM uses HBM's port); M -> M:twin: port:M twice (a copy inside
 *                   a memory reads and writes the same port); operand memory ->
 *                   unit: port:M, operand:U.
 *
 * Several devices (the hw model's site graph, hw.h): an all-pairs route list
 * would be quadratic (a 16x16 pod has 1,300 memories), so the root zone
 * routes by Dijkstra (cached per source) between one Full zone per site
 * ("site:V": its memories, twins, units and a router "gw:V"; the routes
 * above between its own memories, and from each memory to gw:V and back,
 * which are the routes to and from the site's gateway memory). Every edge
 * of the site graph is a zoneRoute gw:U -> gw:V holding its link (and
 * direction) and `padding` times the link "pad" (FATPIPE, 1e30 B/s,
 * latency 0: it costs SimGrid's Dijkstra one link and the transfer
 * nothing). Edges are declared in the site graph's order, so SimGrid's
 * shortest path, ties included, is the one strata_hw_route() composes
 * (hw_site.c); a path through a site enters and leaves at gw:V, adding no
 * link of it. Links are global: all are declared in the first site zone.
 * An edge of one link is also a bypass route (SimGrid takes it without
 * Dijkstra: it is the shortest route whatever the graph). The zone of
 * routes hangs under an empty root zone once its zones are sealed, and
 * everything is built through SimGrid's C++ interface in
 * engine_sg_build.cpp, whose comment says why (SimGrid 3.32's XML loader
 * takes time zones x hosts).
 *
 * Configuration: CM02 with cross-traffic off, TCP gamma effectively infinite,
 * the lazy update of the max-min system under equal sharing and the full one
 * under flow_sharing = latency (network_optim), bandwidth/latency factors 1,
 * so a lone transfer of B bytes takes sum(latency) + B / min(bandwidth) exactly; SimGrid's logs are silenced.
 * Links and operand links have latency 0 in SimGrid unless [hardware]
 * flow_sharing = latency: CM02 gives a flow of route latency L > 0 the
 * sharing penalty L (TCP's RTT unfairness), so the engine waits a route's
 * latency itself before the flow starts (engine_flow_wait) and every flow
 * shares its links equally.
 *
 * Invariants: the platform is a pure function of the hardware model, built
 * in the order the XML loader would have built it (hosts, links and routes
 * of each zone, then the routes between zones), so the same .ini gives the
 * same platform and the same results as the XML did.
 */
#include "engine/engine_platform.h"
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <xbt/sysdep.h>
#include <string.h>
#include "core/error.h"
#include "engine/engine_sg_build.h"

char *engine_memory_host_name(const strata_memory_spec *m)
{
    return g_strdup_printf("mem:%s", m->name);
}

char *engine_memory_twin_name(const strata_memory_spec *m)
{
    return g_strdup_printf("mem:%s:twin", m->name);
}

char *engine_unit_host_name(const strata_compute_spec *u)
{
    return g_strdup_printf("unit:%s", u->name);
}

/* What builds the platform: SimGrid's builder (engine_sg_build.h), the
 * indices of the links it made (in creation order: "pad" with several
 * devices, then every memory's port, every hw link, every unit's operand
 * link) and a scratch list of hops. */
typedef struct platform_builder {
    engine_sg_build *sg;
    const strata_hw *hw;
    const strata_spmd_classes *classes; /* the quotient's (its links' scales), or NULL */
    uint32_t port0, link0, operand0, pad;
    GArray *hops; /* engine_sg_hop */
} platform_builder;

static void hop(platform_builder *p, uint32_t link, engine_sg_direction direction)
{
    engine_sg_hop h = {.link = link, .direction = direction};
    g_array_append_val(p->hops, h);
}

/* The route src -> dst (both taken) in `zone` over the hops collected. */
static void add_route(platform_builder *p, uint32_t zone, char *src, char *dst)
{
    engine_sg_build_route(p->sg, zone, src, dst, (const engine_sg_hop *)(void *)p->hops->data, p->hops->len);
    g_array_set_size(p->hops, 0);
    g_free(src);
    g_free(dst);
}

/* A route from the host `src` to `dst` (both taken) through the port of
 * memory `m`, then the link `second`: a copy inside a memory (to its twin,
 * through its port again) or an operand read (to a unit). */
static void add_two_link_route(platform_builder *p, uint32_t zone, char *src, char *dst, uint32_t m, uint32_t second)
{
    hop(p, p->port0 + m, ENGINE_SG_NONE);
    hop(p, second, ENGINE_SG_NONE);
    add_route(p, zone, src, dst);
}

/* The route src -> dst (both taken) over `hops` out of memory a: the port
 * of a, then each hop's link and the port it reaches (if any). */
static void add_hops_route(platform_builder *p, uint32_t zone, uint32_t a, const strata_hop *hops, uint32_t n,
                           char *src, char *dst)
{
    hop(p, p->port0 + a, ENGINE_SG_NONE);
    for (uint32_t i = 0; i < n; i++) {
        const strata_link_spec *l = strata_hw_link(p->hw, hops[i].link);
        hop(p, p->link0 + hops[i].link,
            l->full_duplex ? (hops[i].forward ? ENGINE_SG_UP : ENGINE_SG_DOWN) : ENGINE_SG_NONE);
        if (hops[i].port != STRATA_HW_NO_MEMORY)
            hop(p, p->port0 + hops[i].port, ENGINE_SG_NONE);
    }
    add_route(p, zone, src, dst);
}

/* Route between two distinct memories (or a memory and its site's gateway
 * router, the memory then being a or b); nothing when hw has none. */
static void add_memory_route(platform_builder *p, uint32_t zone, uint32_t a, uint32_t b, const char *gw_from,
                             const char *gw_to)
{
    const strata_hw *hw = p->hw;
    const strata_hop *hops = NULL;
    uint32_t n = 0;
    GError *err = NULL;
    if (!strata_hw_route(hw, a, b, &hops, &n, &err)) {
        g_clear_error(&err);
        return;
    }
    char *src = gw_from ? g_strdup(gw_from) : engine_memory_host_name(strata_hw_memory(hw, a));
    char *dst = gw_to ? g_strdup(gw_to) : engine_memory_host_name(strata_hw_memory(hw, b));
    add_hops_route(p, zone, a, hops, n, src, dst);
}

/* The hosts of memories mems[0..n_mem) and units units[0..n_unit). */
static void add_hosts(platform_builder *p, uint32_t zone, const uint32_t *mems, uint32_t n_mem,
                      const uint32_t *units, uint32_t n_unit)
{
    for (uint32_t i = 0; i < n_mem; i++) {
        const strata_memory_spec *m = strata_hw_memory(p->hw, mems[i]);
        char *h = engine_memory_host_name(m);
        char *t = engine_memory_twin_name(m);
        engine_sg_build_host(p->sg, zone, h, 1.0);
        engine_sg_build_host(p->sg, zone, t, 1.0);
        g_free(h);
        g_free(t);
    }
    for (uint32_t i = 0; i < n_unit; i++) {
        const strata_compute_spec *u = strata_hw_compute(p->hw, units[i]);
        char *h = engine_unit_host_name(u);
        engine_sg_build_host(p->sg, zone, h, u->flops > 0 ? u->flops : 1.0);
        g_free(h);
    }
}

static void add_link(platform_builder *p, uint32_t zone, const char *prefix, const char *name, double bandwidth,
                     double latency, engine_sg_sharing sharing)
{
    char *id = g_strconcat(prefix, name, NULL);
    engine_sg_build_link(p->sg, zone, id, bandwidth, latency, sharing);
    g_free(id);
}

/* A link's latency in SimGrid: its own under flow_sharing = latency
 * (CM02 charges it and weights the flow's share by its route's), else 0:
 * the engine waits it before the flow (engine_flow_wait). */
static double link_latency(const strata_hw *hw, double latency)
{
    return strata_hw_flow_sharing_latency(hw) ? latency : 0.0;
}

double engine_flow_wait(const strata_hw *hw, double latency)
{
    return strata_hw_flow_sharing_latency(hw) ? 0.0 : latency;
}

/* Every memory's port, every hw link, every unit's operand link (and with
 * several devices the padding link of the site graph), in `zone`. */
static void add_links(platform_builder *p, uint32_t zone)
{
    const strata_hw *hw = p->hw;
    uint32_t next = 0;
    if (strata_hw_site_count(hw) > 0) {
        add_link(p, zone, "", "pad", 1e30, 0.0, ENGINE_SG_FATPIPE);
        p->pad = next++;
    }
    p->port0 = next;
    for (uint32_t i = 0; i < strata_hw_memory_count(hw); i++, next++) {
        const strata_memory_spec *m = strata_hw_memory(hw, i);
        add_link(p, zone, "port:", m->name, m->bandwidth, 0.0, ENGINE_SG_SHARED);
    }
    p->link0 = next;
    for (uint32_t i = 0; i < strata_hw_link_count(hw); i++, next++) {
        const strata_link_spec *l = strata_hw_link(hw, i);
        double scale = p->classes ? MAX(strata_spmd_link_scale(p->classes, i, true),
                                        strata_spmd_link_scale(p->classes, i, false))
                                  : 1;
        add_link(p, zone, "link:", l->name, l->bandwidth / scale, link_latency(hw, l->latency),
                 l->full_duplex ? ENGINE_SG_SPLITDUPLEX : ENGINE_SG_SHARED);
    }
    p->operand0 = next;
    for (uint32_t i = 0; i < strata_hw_compute_count(hw); i++, next++) {
        const strata_compute_spec *u = strata_hw_compute(hw, i);
        const strata_memory_spec *m = strata_hw_memory(hw, u->operands);
        add_link(p, zone, "operand:", u->name, m->bandwidth, link_latency(hw, m->latency), ENGINE_SG_SHARED);
    }
}

/* The routes among mems (every ordered pair, each to its twin), from each
 * unit's operand memory to the unit, and with a gateway router `gw`, from
 * every memory to it and back (the route to and from the gateway memory). */
static void add_routes(platform_builder *p, uint32_t zone, const uint32_t *mems, uint32_t n_mem,
                       const uint32_t *units, uint32_t n_unit, uint32_t gateway, const char *gw)
{
    const strata_hw *hw = p->hw;
    for (uint32_t i = 0; i < n_mem; i++) {
        uint32_t a = mems[i];
        for (uint32_t j = 0; j < n_mem; j++)
            if (j != i)
                add_memory_route(p, zone, a, mems[j], NULL, NULL);
        const strata_memory_spec *m = strata_hw_memory(hw, a);
        add_two_link_route(p, zone, engine_memory_host_name(m), engine_memory_twin_name(m), a, p->port0 + a);
        if (gateway != STRATA_HW_NO_MEMORY) {
            add_memory_route(p, zone, a, gateway, NULL, gw);
            add_memory_route(p, zone, gateway, a, gw, NULL);
        }
    }
    for (uint32_t i = 0; i < n_unit; i++) {
        const strata_compute_spec *u = strata_hw_compute(hw, units[i]);
        add_two_link_route(p, zone, engine_memory_host_name(strata_hw_memory(hw, u->operands)),
                           engine_unit_host_name(u), u->operands, p->operand0 + units[i]);
    }
}

/* Indices 0..n-1 grouped by key(i) < n_keys: out[start[k] .. start[k + 1]). */
static uint32_t *group_by(uint32_t n, uint32_t n_keys, uint32_t (*key)(const strata_hw *, uint32_t),
                          const strata_hw *hw, uint32_t **start_out)
{
    uint32_t *start = g_new0(uint32_t, n_keys + 1);
    uint32_t *out = g_new(uint32_t, n ? n : 1);
    for (uint32_t i = 0; i < n; i++)
        start[key(hw, i) + 1]++;
    for (uint32_t k = 0; k < n_keys; k++)
        start[k + 1] += start[k];
    uint32_t *fill = g_memdup2(start, sizeof(uint32_t) * n_keys);
    for (uint32_t i = 0; i < n; i++)
        out[fill[key(hw, i)]++] = i;
    g_free(fill);
    *start_out = start;
    return out;
}

static uint32_t unit_site(const strata_hw *hw, uint32_t unit) { return strata_hw_compute(hw, unit)->device; }

/* The zone route of one edge of the site graph (its link, then its
 * padding hops) between the zones of its ends' gateways. An edge of one
 * link is the shortest route between its ends (every edge has one at
 * least; SimGrid refuses two edges between the same zones): as a bypass
 * SimGrid takes it without running Dijkstra from the source zone (a pod's
 * thousands of sources: tens of seconds, 8 bytes per zone each). */
static void add_edge_route(platform_builder *p, const strata_site_edge *e, const uint32_t *zone_of)
{
    const strata_link_spec *l = strata_hw_link(p->hw, e->link);
    hop(p, p->link0 + e->link, l->full_duplex ? (e->forward ? ENGINE_SG_UP : ENGINE_SG_DOWN) : ENGINE_SG_NONE);
    for (uint32_t k = 0; k < e->padding; k++)
        hop(p, p->pad, ENGINE_SG_NONE);
    char *from = g_strdup_printf("gw:%u", e->from), *to = g_strdup_printf("gw:%u", e->to);
    engine_sg_build_zone_route(p->sg, zone_of[e->from], zone_of[e->to], from, to,
                               (const engine_sg_hop *)(void *)p->hops->data, p->hops->len);
    if (p->hops->len == 1)
        engine_sg_build_zone_bypass(p->sg, zone_of[e->from], zone_of[e->to], from, to,
                                    (const engine_sg_hop *)(void *)p->hops->data, p->hops->len);
    g_array_set_size(p->hops, 0);
    g_free(from);
    g_free(to);
}

/* Several devices: a zone per site (its memories, units and gateway
 * router "gw:V"), filled while detached, then attached and joined by one
 * zone route per edge of the site graph, padded with the "pad" link (no
 * capacity limit, no latency) so that SimGrid's Dijkstra takes the site
 * graph's shortest path. */
static void add_sites(platform_builder *p)
{
    const strata_hw *hw = p->hw;
    uint32_t n_sites = strata_hw_site_count(hw), *mem_start, *unit_start;
    uint32_t *mems = group_by(strata_hw_memory_count(hw), n_sites, strata_hw_memory_site, hw, &mem_start);
    uint32_t *units = group_by(strata_hw_compute_count(hw), n_sites, unit_site, hw, &unit_start);
    uint32_t *zone_of = g_new0(uint32_t, n_sites ? n_sites : 1);
    bool first = true;
    for (uint32_t v = 0; v < n_sites; v++) {
        uint32_t gateway = strata_hw_site_gateway(hw, v);
        bool router = gateway != STRATA_HW_NO_MEMORY || strata_hw_site_switch(hw, v);
        if (mem_start[v] == mem_start[v + 1] && !router)
            continue;
        char *name = g_strdup_printf("site:%u", v);
        char *gw = g_strdup_printf("gw:%u", v);
        uint32_t zone = zone_of[v] = engine_sg_build_zone(p->sg, name, ENGINE_SG_FULL);
        if (first) /* links are global: made once, before any route names them */
            add_links(p, zone);
        first = false;
        add_hosts(p, zone, mems + mem_start[v], mem_start[v + 1] - mem_start[v], units + unit_start[v],
                  unit_start[v + 1] - unit_start[v]);
        if (router)
            engine_sg_build_router(p->sg, zone, gw);
        add_routes(p, zone, mems + mem_start[v], mem_start[v + 1] - mem_start[v], units + unit_start[v],
                   unit_start[v + 1] - unit_start[v], gateway, gw);
        g_free(gw);
        g_free(name);
    }
    engine_sg_build_attach(p->sg);
    for (uint32_t i = 0; i < strata_hw_site_edge_count(hw); i++)
        add_edge_route(p, strata_hw_site_edge(hw, i), zone_of);
    g_free(zone_of);
    g_free(mems);
    g_free(mem_start);
    g_free(units);
    g_free(unit_start);
}

char *engine_sender_host_name(uint32_t sender) { return g_strdup_printf("sender:%u", sender); }

/* With classes that hold the hosts (strata_spmd_classes_hosts): the site
 * of each representative host, a zone with its memories and gateway, as
 * add_sites makes it (before the zones are attached). The device zones
 * have their gateways then (add_quotient_sites). */
static void add_quotient_host_zones(platform_builder *p, const engine_quotient *q, uint32_t *zone_of,
                                    const uint32_t *mems, const uint32_t *mem_start)
{
    const strata_hw *hw = p->hw;
    uint32_t devices = strata_hw_devices(hw), n_sites = strata_hw_site_count(hw);
    for (uint32_t v = devices; v < n_sites; v++) {
        if (mem_start[v] == mem_start[v + 1] || !engine_quotient_has_memory(q, mems[mem_start[v]]))
            continue;
        char *name = g_strdup_printf("site:%u", v), *gw = g_strdup_printf("gw:%u", v);
        zone_of[v] = engine_sg_build_zone(p->sg, name, ENGINE_SG_FULL);
        add_hosts(p, zone_of[v], mems + mem_start[v], mem_start[v + 1] - mem_start[v], NULL, 0);
        engine_sg_build_router(p->sg, zone_of[v], gw);
        add_routes(p, zone_of[v], mems + mem_start[v], mem_start[v + 1] - mem_start[v], NULL, 0,
                   strata_hw_site_gateway(hw, v), gw);
        g_free(gw);
        g_free(name);
    }
}

/* Then (attached) a zone route per edge of the site graph between a
 * representative device and its host (the PCIe link), as add_sites joins
 * them. */
static void add_quotient_host_edges(platform_builder *p, const uint32_t *zone_of)
{
    const strata_hw *hw = p->hw;
    uint32_t devices = strata_hw_devices(hw), n_sites = strata_hw_site_count(hw);
    for (uint32_t i = 0; i < strata_hw_site_edge_count(hw); i++) {
        const strata_site_edge *e = strata_hw_site_edge(hw, i);
        if (e->from >= n_sites || e->to >= n_sites || zone_of[e->from] == UINT32_MAX ||
            zone_of[e->to] == UINT32_MAX || (e->from < devices) == (e->to < devices))
            continue; /* only a representative device's edges to its host */
        add_edge_route(p, e, zone_of);
    }
}

/* Classes (engine_quotient.h): a zone per representative device, its
 * memories, units and the routes among them, and the senders into it, each
 * a host with its one route; no route between device zones (every copy
 * between devices is a sender's). Each zone's hosts come before its
 * routes. Where the classes hold the hosts, the representative hosts'
 * sites too, joined to their devices (add_quotient_hosts). */
static void add_quotient_sites(platform_builder *p, const engine_quotient *q)
{
    const strata_hw *hw = p->hw;
    bool hosts = strata_spmd_classes_hosts(engine_quotient_classes(q));
    uint32_t n_sites = strata_hw_site_count(hw), devices = strata_hw_devices(hw), *mem_start, *unit_start;
    uint32_t *zone_of = g_new(uint32_t, n_sites ? n_sites : 1);
    for (uint32_t v = 0; v < n_sites; v++)
        zone_of[v] = UINT32_MAX;
    uint32_t *mems = group_by(strata_hw_memory_count(hw), n_sites, strata_hw_memory_site, hw, &mem_start);
    uint32_t *units = group_by(strata_hw_compute_count(hw), n_sites, unit_site, hw, &unit_start);
    GPtrArray **into = g_new0(GPtrArray *, devices); /* by site: its senders (GUINT_TO_POINTER) */
    for (uint32_t s = 0; s < engine_quotient_sender_count(q); s++) {
        uint32_t v = strata_hw_memory_site(hw, engine_quotient_sender_dst(q, s));
        if (!into[v])
            into[v] = g_ptr_array_new();
        g_ptr_array_add(into[v], GUINT_TO_POINTER(s));
    }
    bool first = true;
    for (uint32_t v = 0; v < devices; v++) {
        if (!engine_quotient_has_device(q, v))
            continue;
        char *name = g_strdup_printf("site:%u", v), *gw = g_strdup_printf("gw:%u", v);
        uint32_t zone = zone_of[v] = engine_sg_build_zone(p->sg, name, ENGINE_SG_FULL);
        g_free(name);
        if (first) /* links are global: made once, before any route names them */
            add_links(p, zone);
        first = false;
        add_hosts(p, zone, mems + mem_start[v], mem_start[v + 1] - mem_start[v], units + unit_start[v],
                  unit_start[v + 1] - unit_start[v]);
        for (guint i = 0; into[v] && i < into[v]->len; i++) {
            char *h = engine_sender_host_name(GPOINTER_TO_UINT(g_ptr_array_index(into[v], i)));
            engine_sg_build_host(p->sg, zone, h, 1.0);
            g_free(h);
        }
        if (hosts)
            engine_sg_build_router(p->sg, zone, gw);
        add_routes(p, zone, mems + mem_start[v], mem_start[v + 1] - mem_start[v], units + unit_start[v],
                   unit_start[v + 1] - unit_start[v], hosts ? strata_hw_site_gateway(hw, v) : STRATA_HW_NO_MEMORY,
                   hosts ? gw : NULL);
        g_free(gw);
        for (guint i = 0; into[v] && i < into[v]->len; i++) {
            uint32_t s = GPOINTER_TO_UINT(g_ptr_array_index(into[v], i));
            const strata_hop *hops = NULL;
            uint32_t n = 0;
            engine_quotient_sender_hops(q, s, &hops, &n);
            add_hops_route(p, zone, engine_quotient_sender_src(q, s), hops, n, engine_sender_host_name(s),
                           engine_memory_host_name(strata_hw_memory(hw, engine_quotient_sender_dst(q, s))));
        }
    }
    if (hosts)
        add_quotient_host_zones(p, q, zone_of, mems, mem_start);
    engine_sg_build_attach(p->sg);
    if (hosts)
        add_quotient_host_edges(p, zone_of);
    for (uint32_t v = 0; v < devices; v++)
        if (into[v])
            g_ptr_array_free(into[v], TRUE);
    g_free(into);
    g_free(zone_of);
    g_free(mems);
    g_free(mem_start);
    g_free(units);
    g_free(unit_start);
}

/* The platform of hw, built into SimGrid: one device in a Full root zone,
 * several in a DijkstraCache root (file comment); with classes, the
 * quotient's. */
static bool build_platform(const strata_hw *hw, const engine_quotient *q, GError **err)
{
    bool sites = strata_hw_site_count(hw) > 0;
    platform_builder p = {.hw = hw, .hops = g_array_new(FALSE, FALSE, sizeof(engine_sg_hop))};
    p.sg = engine_sg_build_new("strata", sites ? ENGINE_SG_DIJKSTRA_CACHE : ENGINE_SG_FULL);
    if (q) {
        p.classes = engine_quotient_classes(q);
        add_quotient_sites(&p, q);
    } else if (sites) {
        add_sites(&p);
    } else {
        uint32_t n_mem = strata_hw_memory_count(hw), n_unit = strata_hw_compute_count(hw);
        uint32_t *mems = g_new(uint32_t, n_mem ? n_mem : 1), *units = g_new(uint32_t, n_unit ? n_unit : 1);
        for (uint32_t i = 0; i < n_mem; i++)
            mems[i] = i;
        for (uint32_t i = 0; i < n_unit; i++)
            units[i] = i;
        add_hosts(&p, 0, mems, n_mem, units, n_unit);
        add_links(&p, 0);
        add_routes(&p, 0, mems, n_mem, units, n_unit, STRATA_HW_NO_MEMORY, NULL);
        g_free(mems);
        g_free(units);
    }
    g_array_free(p.hops, TRUE);
    char *message = NULL;
    if (!engine_sg_build_finish(p.sg, &message)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "SimGrid refused the platform of %s: %s",
                    strata_hw_origin(hw), message);
        g_free(message);
        return false;
    }
    return true;
}

/* The platform's size, measured on the hardware model before anything of
 * the platform is built (every count is linear in the model's sites,
 * memories, units and edges). */
typedef struct platform_size {
    uint64_t zones, hosts, edge_links, full_cells;
} platform_size;

static platform_size measure(const strata_hw *hw)
{
    platform_size z = {.hosts = 2ull * strata_hw_memory_count(hw) + strata_hw_compute_count(hw)};
    uint32_t n_sites = strata_hw_site_count(hw);
    if (n_sites == 0) {
        z.zones = 1;
        z.full_cells = (z.hosts + 1) * (z.hosts + 1);
        return z;
    }
    uint64_t *points = g_new0(uint64_t, n_sites); /* netpoints of each site's Full zone */
    for (uint32_t i = 0; i < strata_hw_memory_count(hw); i++)
        points[strata_hw_memory_site(hw, i)] += 2;
    for (uint32_t i = 0; i < strata_hw_compute_count(hw); i++)
        points[strata_hw_compute(hw, i)->device]++;
    for (uint32_t v = 0; v < n_sites; v++) {
        bool router = strata_hw_site_gateway(hw, v) != STRATA_HW_NO_MEMORY || strata_hw_site_switch(hw, v);
        if (points[v] == 0 && !router)
            continue;
        z.zones++;
        z.full_cells += (points[v] + 1) * (points[v] + 1);
    }
    g_free(points);
    for (uint32_t i = 0; i < strata_hw_site_edge_count(hw); i++)
        z.edge_links += 1ull + strata_hw_site_edge(hw, i)->padding;
    return z;
}

bool engine_platform_check(const strata_hw *hw, GError **err)
{
    platform_size z = measure(hw);
    const char *what = NULL;
    uint64_t figure = 0, limit = 0;
    if (z.zones > ENGINE_PLATFORM_MAX_ZONES) {
        what = "routing zones (one per device and per host; SimGrid's Dijkstra between them keeps 8 bytes per "
               "zone for each zone a route leaves from)";
        figure = z.zones;
        limit = ENGINE_PLATFORM_MAX_ZONES;
    } else if (strata_hw_link_count(hw) > ENGINE_PLATFORM_MAX_LINKS) {
        what = "links (SimGrid keeps each link's state and every route naming it; `topology = full` has "
               "one per pair of devices)";
        figure = strata_hw_link_count(hw);
        limit = ENGINE_PLATFORM_MAX_LINKS;
    } else if (z.edge_links > ENGINE_PLATFORM_MAX_EDGE_LINKS) {
        what = "links on the routes between sites (every edge of the site graph, with the padding "
               "that keeps device-to-device routes off the hosts: the device interconnect's diameter "
               "per host link)";
        figure = z.edge_links;
        limit = ENGINE_PLATFORM_MAX_EDGE_LINKS;
    } else if (z.full_cells > ENGINE_PLATFORM_MAX_FULL_CELLS) {
        what = "cells of the sites' routing tables (the square of each site's hosts)";
        figure = z.full_cells;
        limit = ENGINE_PLATFORM_MAX_FULL_CELLS;
    }
    if (!what)
        return true;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "%s: [hardware] devices = %u is more than the simulator can hold: its SimGrid platform would "
                "have %" G_GUINT64_FORMAT " %s, at most %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
                " zones, %" G_GUINT64_FORMAT " hosts); use fewer devices or a smaller interconnect",
                strata_hw_origin(hw), strata_hw_devices(hw), figure, what, limit, z.zones, z.hosts);
    return false;
}

bool engine_platform_load(const strata_hw *hw, GError **err) { return engine_platform_load_for(hw, NULL, err); }

/* How SimGrid updates its max-min system. CM02's lazy update (its
 * default, SimGrid 3.32) can let two copies that start together share a
 * link direction above its bandwidth, but only when a flow waits a latency
 * inside SimGrid: it is enabled after it (network_cm02.cpp:162) and only its
 * first constraint is marked (System.cpp update_modified_cnst_set_from_variable;
 * scripts/simgrid-repro/README.md). Under equal sharing every SimGrid link
 * has latency 0, flows are enabled at creation (System::expand marks every
 * constraint, System.cpp:307): the lazy update shares as the full one does
 * (to SimGrid's 1 ns timing precision) at less CPU on several devices; under
 * flow_sharing = latency the full update solves every change (docs/engine.md). */
static const char *network_optim(const strata_hw *hw)
{
    return strata_hw_flow_sharing_latency(hw) ? "--cfg=network/optim:Full" : "--cfg=network/optim:Lazy";
}

bool engine_platform_load_for(const strata_hw *hw, const engine_quotient *q, GError **err)
{
    static const char *const config[] = {
        "strata",
        "--log=root.thres:critical",
        "--cfg=network/model:CM02",
        "--cfg=network/crosstraffic:0",
        "--cfg=network/TCP-gamma:1e300",
        "--cfg=network/latency-factor:1",
        "--cfg=network/bandwidth-factor:1",
        "--cfg=network/weight-S:0",
#ifdef STRATA_SANITIZE
        /* AddressSanitizer cannot follow ucontext stack switches: one thread per actor. */
        "--cfg=contexts/factory:thread",
#endif
        NULL,
    };
    int argc = 0;
    char *argv[G_N_ELEMENTS(config) + 1];
    for (const char *const *c = config; *c; c++)
        argv[argc++] = g_strdup(*c);
    argv[argc++] = g_strdup(network_optim(hw));
    argv[argc] = NULL;
    char *owned[G_N_ELEMENTS(config) + 1];
    memcpy(owned, argv, sizeof(argv));
    simgrid_init(&argc, argv);
    for (size_t i = 0; owned[i]; i++)
        g_free(owned[i]);

    return build_platform(hw, q, err);
}

bool engine_hosts_lookup(const strata_hw *hw, engine_hosts *h, GError **err)
{
    return engine_hosts_lookup_for(hw, NULL, h, err);
}

/* Whether the platform holds memory m's hosts (with classes: a
 * representative's memory). */
static bool has_memory(const strata_hw *hw, const engine_quotient *q, uint32_t m)
{
    (void)hw;
    return !q || engine_quotient_has_memory(q, m);
}

bool engine_hosts_lookup_for(const strata_hw *hw, const engine_quotient *q, engine_hosts *h, GError **err)
{
    uint32_t n_mem = strata_hw_memory_count(hw), n_unit = strata_hw_compute_count(hw);
    uint32_t n_send = q ? engine_quotient_sender_count(q) : 0;
    h->mem = g_new0(sg_host_t, n_mem);
    h->twin = g_new0(sg_host_t, n_mem);
    h->unit = g_new0(sg_host_t, n_unit ? n_unit : 1);
    h->sender = g_new0(sg_host_t, n_send ? n_send : 1);
    /* one pass over SimGrid's hosts: sg_host_by_name() walks every zone */
    sg_host_t *all = sg_host_list();
    size_t n_all = sg_host_count();
    GHashTable *by_name = g_hash_table_new(g_str_hash, g_str_equal);
    for (size_t i = 0; i < n_all; i++)
        g_hash_table_insert(by_name, (gpointer)sg_host_get_name(all[i]), all[i]);
    bool ok = true;
    for (uint32_t i = 0; i < n_mem; i++) {
        if (!has_memory(hw, q, i))
            continue;
        char *m = engine_memory_host_name(strata_hw_memory(hw, i));
        char *t = engine_memory_twin_name(strata_hw_memory(hw, i));
        h->mem[i] = g_hash_table_lookup(by_name, m);
        h->twin[i] = g_hash_table_lookup(by_name, t);
        ok = ok && h->mem[i] && h->twin[i];
        g_free(m);
        g_free(t);
    }
    for (uint32_t i = 0; i < n_unit; i++) {
        if (q && !engine_quotient_has_device(q, strata_hw_compute(hw, i)->device))
            continue;
        char *u = engine_unit_host_name(strata_hw_compute(hw, i));
        h->unit[i] = g_hash_table_lookup(by_name, u);
        ok = ok && h->unit[i];
        g_free(u);
    }
    for (uint32_t i = 0; i < n_send; i++) {
        char *s = engine_sender_host_name(i);
        h->sender[i] = g_hash_table_lookup(by_name, s);
        ok = ok && h->sender[i];
        g_free(s);
    }
    g_hash_table_destroy(by_name);
    xbt_free(all);
    if (!ok)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "the generated SimGrid platform lacks a host");
    return ok;
}

void engine_hosts_clear(engine_hosts *h)
{
    g_free(h->mem);
    g_free(h->twin);
    g_free(h->unit);
    g_free(h->sender);
    h->mem = h->twin = h->unit = h->sender = NULL;
}

sg_host_t engine_copy_target(const engine_hosts *h, uint32_t src, uint32_t dst)
{
    return src == dst ? h->twin[dst] : h->mem[dst];
}

double engine_compute_amount(const strata_hw *hw, uint32_t unit, strata_dtype dtype, double flops)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    double speed = u->flops > 0 ? u->flops : 1.0;
    double peak = strata_hw_compute_flops(hw, unit, dtype);
    return flops > 0 && peak > 0 ? flops * (speed / peak) : 0.0;
}
