/*
 * hw_route.c: routes between the memories of a hardware model (hw.h).
 *
 * Invariants:
 *  1. routes[from * n + to] (n template memories) is the fewest-hop path
 *     over the template links, ties broken by link declaration order (BFS
 *     expanding links in that order, first parent wins); a route from a
 *     memory to itself has no hops; every hop's port is the memory reached.
 *  2. With one device those are the routes. With several, a route is
 *     composed on first use (same site: the template route instantiated
 *     there; between sites: template route to the gateway, the site path,
 *     template route from the far gateway) and kept in route_memo: the
 *     memo grows with the pairs asked for, never with memories^2 (the
 *     template table is templates^2, a handful).
 */
#include "core/error.h"
#include "core/idmap.h"
#include "hw/hw_internal.h"

/* The template route from s to t into r, from BFS parents (t reachable). */
static void trace_back(const GArray *links, const int *parent_link, uint32_t s, uint32_t t, route *r)
{
    uint32_t len = 0;
    for (uint32_t x = t; x != s; len++) {
        const strata_link_spec *l = &g_array_index(links, strata_link_spec, parent_link[x]);
        x = l->a == x ? l->b : l->a;
    }
    r->n = len;
    r->hops = len ? g_new(strata_hop, len) : NULL;
    uint32_t i = len;
    for (uint32_t x = t; x != s;) {
        uint32_t li = (uint32_t)parent_link[x];
        const strata_link_spec *l = &g_array_index(links, strata_link_spec, li);
        uint32_t from = l->a == x ? l->b : l->a;
        r->hops[--i] = (strata_hop){.link = li, .forward = l->a == from, .port = x};
        x = from;
    }
}

void hw_compute_routes(strata_hw *hw)
{
    uint32_t n = hw->tmems->len;
    const GArray *links = hw->tlinks;
    hw->routes = g_new0(route, (gsize)n * n); /* n >= 1: build() checked */
    int *parent_link = g_new(int, n);
    uint32_t *queue = g_new(uint32_t, n);
    bool *seen = g_new(bool, n);
    for (uint32_t s = 0; s < n; s++) {
        for (uint32_t i = 0; i < n; i++) {
            parent_link[i] = -1;
            seen[i] = false;
        }
        uint32_t head = 0, tail = 0;
        queue[tail++] = s;
        seen[s] = true;
        while (head < tail) {
            uint32_t u = queue[head++];
            for (uint32_t li = 0; li < links->len; li++) {
                const strata_link_spec *l = &g_array_index(links, strata_link_spec, li);
                uint32_t v = l->a == u ? l->b : l->b == u ? l->a : STRATA_HW_NO_MEMORY;
                if (v == STRATA_HW_NO_MEMORY || seen[v])
                    continue;
                seen[v] = true;
                parent_link[v] = (int)li;
                queue[tail++] = v;
            }
        }
        for (uint32_t t = 0; t < n; t++) {
            route *r = &hw->routes[s * n + t];
            r->reachable = seen[t];
            if (seen[t] && t != s)
                trace_back(links, parent_link, s, t, r);
        }
    }
    g_free(seen);
    g_free(parent_link);
    g_free(queue);
}

static void route_free(uint64_t key, void *p, void *user)
{
    (void)key;
    (void)user;
    route *r = p;
    g_free(r->hops);
    g_free(r);
}

void hw_routes_free(strata_hw *hw)
{
    if (hw->routes) {
        uint32_t n = hw->tmems->len;
        for (uint32_t i = 0; i < n * n; i++)
            g_free(hw->routes[i].hops);
        g_free(hw->routes);
    }
    if (hw->route_memo) {
        strata_idmap_foreach(hw->route_memo, route_free, NULL);
        strata_idmap_free(hw->route_memo);
    }
}

/* ---- several devices ---- */

/* The device whose view a memory's template routes are instantiated in:
 * its own, or a host's first device. */
static uint32_t view_of(const strata_hw *hw, const strata_memory_spec *m)
{
    return m->kind == STRATA_MEM_HOST ? m->site * hw->devices_per_host : m->site;
}

static uint32_t link_on(const strata_hw *hw, uint32_t tlink, uint32_t device)
{
    const hw_instances *at = &hw->link_at[tlink];
    return at->offset + (at->per_host ? device / hw->devices_per_host : device);
}

/* Appends the template route between templates tf and tt, instantiated on
 * `device`, to hops; false when the template has none. */
static bool append_template(const strata_hw *hw, uint32_t tf, uint32_t tt, uint32_t device, GArray *hops)
{
    const route *t = &hw->routes[tf * hw->tmems->len + tt];
    for (uint32_t i = 0; i < t->n; i++) {
        strata_hop h = {.link = link_on(hw, t->hops[i].link, device), .forward = t->hops[i].forward,
                        .port = strata_hw_memory_on(hw, t->hops[i].port, device)};
        g_array_append_val(hops, h);
    }
    return t->reachable;
}

/* The route from -> to (distinct) composed from templates and the site path. */
static route *compose(const strata_hw *hw, uint32_t from, uint32_t to)
{
    const strata_memory_spec *a = strata_hw_memory(hw, from), *b = strata_hw_memory(hw, to);
    uint32_t sa = strata_hw_memory_site(hw, from), sb = strata_hw_memory_site(hw, to);
    GArray *hops = g_array_new(FALSE, FALSE, sizeof(strata_hop));
    bool ok;
    if (sa == sb) {
        ok = append_template(hw, a->base, b->base, view_of(hw, a), hops);
    } else {
        uint32_t ga = strata_hw_site_gateway(hw, sa), gb = strata_hw_site_gateway(hw, sb);
        const uint32_t *path = NULL;
        uint32_t n = 0;
        ok = ga != STRATA_HW_NO_MEMORY && gb != STRATA_HW_NO_MEMORY &&
             hw_sites_path(hw->sites, sa, sb, &path, &n) &&
             append_template(hw, a->base, strata_hw_memory(hw, ga)->base, view_of(hw, a), hops);
        for (uint32_t i = 0; ok && i < n; i++) {
            const strata_site_edge *e = strata_hw_site_edge(hw, path[i]);
            strata_hop h = {.link = e->link, .forward = e->forward, .port = i + 1 == n ? gb : STRATA_HW_NO_MEMORY};
            g_array_append_val(hops, h);
        }
        ok = ok && append_template(hw, strata_hw_memory(hw, gb)->base, b->base, view_of(hw, b), hops);
    }
    route *r = g_new0(route, 1);
    r->reachable = ok;
    r->n = ok ? hops->len : 0;
    r->hops = ok && hops->len ? (strata_hop *)(void *)g_array_free(hops, FALSE) : NULL;
    if (!r->hops)
        g_array_free(hops, TRUE);
    return r;
}

static const route *find_route(const strata_hw *hw, uint32_t from, uint32_t to)
{
    uint32_t n = hw->memories->len;
    if (!hw->sites)
        return &hw->routes[from * n + to];
    static const route self = {NULL, 0, true};
    if (from == to)
        return &self;
    uint64_t key = (uint64_t)from * n + to;
    route *r = strata_idmap_get(hw->route_memo, key);
    if (!r) {
        r = compose(hw, from, to);
        strata_idmap_put(hw->route_memo, key, r);
    }
    return r;
}

void hw_route_memo_init(strata_hw *hw)
{
    hw->route_memo = strata_idmap_new();
}

bool strata_hw_route(const strata_hw *hw, uint32_t from, uint32_t to, const strata_hop **hops,
                     uint32_t *n_hops, GError **err)
{
    uint32_t n = hw->memories->len;
    if (from >= n || to >= n) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "route between memory %u and %u: "
                    "only %u memories", from, to, n);
        return false;
    }
    const route *r = find_route(hw, from, to);
    if (!r->reachable) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: no route from memory '%s' to memory '%s': no chain of [link] groups joins them",
                    hw->origin, strata_hw_memory(hw, from)->name, strata_hw_memory(hw, to)->name);
        return false;
    }
    *hops = r->hops;
    *n_hops = r->n;
    return true;
}
