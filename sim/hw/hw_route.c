/*
 * hw_route.c: routes between the memories of a hardware model (hw.h).
 *
 * Invariant: routes[from * n + to] is the fewest-hop path, ties broken by
 * link declaration order (BFS expanding links in that order, first parent
 * wins); a route from a memory to itself has no hops.
 */
#include "core/error.h"
#include "hw/hw_internal.h"

void hw_compute_routes(strata_hw *hw)
{
    uint32_t n = hw->memories->len;
    hw->routes = g_new0(route, (gsize)n * n); /* n >= 1: build() checked */
    int *parent_link = g_new(int, n);
    uint32_t *queue = g_new(uint32_t, n);
    for (uint32_t s = 0; s < n; s++) {
        for (uint32_t i = 0; i < n; i++)
            parent_link[i] = -1;
        uint32_t head = 0, tail = 0;
        queue[tail++] = s;
        bool *seen = g_new0(bool, n);
        seen[s] = true;
        while (head < tail) {
            uint32_t u = queue[head++];
            for (uint32_t li = 0; li < hw->links->len; li++) {
                const strata_link_spec *l = &g_array_index(hw->links, strata_link_spec, li);
                uint32_t v;
                if (l->a == u)
                    v = l->b;
                else if (l->b == u)
                    v = l->a;
                else
                    continue;
                if (seen[v])
                    continue;
                seen[v] = true;
                parent_link[v] = (int)li;
                queue[tail++] = v;
            }
        }
        for (uint32_t t = 0; t < n; t++) {
            route *r = &hw->routes[s * n + t];
            r->reachable = seen[t];
            if (!seen[t] || t == s)
                continue;
            uint32_t len = 0;
            for (uint32_t x = t; x != s;) {
                const strata_link_spec *l =
                    &g_array_index(hw->links, strata_link_spec, parent_link[x]);
                x = l->a == x ? l->b : l->a;
                len++;
            }
            r->n = len;
            r->hops = g_new(strata_hop, len);
            uint32_t i = len;
            for (uint32_t x = t; x != s;) {
                uint32_t li = (uint32_t)parent_link[x];
                const strata_link_spec *l = &g_array_index(hw->links, strata_link_spec, li);
                uint32_t from = l->a == x ? l->b : l->a;
                r->hops[--i] = (strata_hop){.link = li, .forward = l->a == from};
                x = from;
            }
        }
        g_free(seen);
    }
    g_free(parent_link);
    g_free(queue);
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
    const route *r = &hw->routes[from * n + to];
    if (!r->reachable) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: no route from memory '%s' to memory '%s': no chain of [link] groups "
                    "joins them",
                    hw->origin, strata_hw_memory(hw, from)->name, strata_hw_memory(hw, to)->name);
        return false;
    }
    *hops = r->hops;
    *n_hops = r->n;
    return true;
}

