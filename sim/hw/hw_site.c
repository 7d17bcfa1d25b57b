/*
 * hw_site.c: the graph between the sites of a model with several devices
 * (contract in hw_internal.h; what it means in hw.h).
 *
 * Vertices are devices, hosts and switches; an edge is one link between two
 * of them, one way, costing 1 + its padding. The path from u to v is a
 * shortest one, chosen exactly as SimGrid's Dijkstra routing chooses it on
 * the same edges declared in the same order (engine_platform.c declares
 * them so): SimGrid numbers vertices by first appearance in the edge list,
 * pops them by (distance, number) and keeps the first strict improvement,
 * so the predecessor of w is, among the in-neighbours x with
 * dist(x) + cost(x, w) = dist(w), the one with the least (dist(x), number)
 * (SimGrid 3.32, src/kernel/routing/DijkstraZone.cpp). That is SimGrid's
 * behaviour, not its interface: tests/test_engine_sg_build.c checks, on
 * every shipped machine with several devices, that SimGrid's own routes
 * are these.
 *
 * Invariants: after hw_sites_seal() the edges are sorted and rank[] numbers
 * every vertex that appears (by first appearance; others after); dist[u]
 * is NULL until a path from u is first asked for, then the distances from
 * u (UINT32_MAX: unreachable), kept for at most `dist_cap` sources at a
 * time (the oldest dropped first, recomputed if asked for again): so the
 * distances take at most about DIST_BUDGET entries, not sites^2 when
 * copies leave from every site of a large pod.
 */
#include "hw/hw_internal.h"
#include "core/minheap.h"

/* Distance entries kept at most (4 bytes each), and sources at least. */
enum { DIST_BUDGET = 1 << 24, DIST_MIN_SOURCES = 16 };

struct hw_sites {
    uint32_t devices, hosts, n;
    GPtrArray *switch_names;  /* char * (owned), by switch */
    GArray *edges;            /* strata_site_edge */
    uint32_t *gateway;        /* by vertex: memory index or STRATA_HW_NO_MEMORY */
    uint32_t *rank;           /* by vertex: first appearance */
    uint32_t *in_start;       /* CSR of in-edges: in_edge[in_start[w] .. in_start[w + 1]) */
    uint32_t *in_edge;
    uint32_t *out_start, *out_edge;
    uint32_t **dist;          /* by source vertex, lazily */
    uint32_t *dist_fifo;      /* sources with distances, oldest first: a ring of dist_cap */
    uint32_t dist_cap, dist_head, dist_len;
    GArray *path;             /* uint32_t: the last path's edges */
};

hw_sites *hw_sites_new(uint32_t devices, uint32_t hosts)
{
    hw_sites *s = g_new0(hw_sites, 1);
    s->devices = devices;
    s->hosts = hosts;
    s->n = devices + hosts;
    s->switch_names = g_ptr_array_new_with_free_func(g_free);
    s->edges = g_array_new(FALSE, TRUE, sizeof(strata_site_edge));
    s->path = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    return s;
}

void hw_sites_free(hw_sites *s)
{
    if (!s)
        return;
    if (s->dist)
        for (uint32_t i = 0; i < s->n; i++)
            g_free(s->dist[i]);
    g_free(s->dist);
    g_free(s->dist_fifo);
    g_free(s->gateway);
    g_free(s->rank);
    g_free(s->in_start);
    g_free(s->in_edge);
    g_free(s->out_start);
    g_free(s->out_edge);
    g_ptr_array_free(s->switch_names, TRUE);
    g_array_free(s->edges, TRUE);
    g_array_free(s->path, TRUE);
    g_free(s);
}

uint32_t hw_sites_add_switch(hw_sites *s, const char *name)
{
    g_ptr_array_add(s->switch_names, g_strdup(name));
    return s->n++;
}

void hw_sites_connect(hw_sites *s, uint32_t u, uint32_t v, uint32_t link, uint32_t pad_uv, uint32_t pad_vu)
{
    strata_site_edge there = {.from = u, .to = v, .link = link, .forward = true, .padding = pad_uv};
    strata_site_edge back = {.from = v, .to = u, .link = link, .forward = false, .padding = pad_vu};
    g_array_append_val(s->edges, there);
    g_array_append_val(s->edges, back);
}

/* Platform order: by the larger end, then the smaller, the edge leaving
 * the smaller end first; so a vertex whose neighbours include a smaller one
 * first appears in vertex order. */
static gint edge_order(gconstpointer pa, gconstpointer pb)
{
    const strata_site_edge *a = pa, *b = pb;
    uint32_t ah = MAX(a->from, a->to), bh = MAX(b->from, b->to);
    uint32_t al = MIN(a->from, a->to), bl = MIN(b->from, b->to);
    if (ah != bh)
        return ah < bh ? -1 : 1;
    if (al != bl)
        return al < bl ? -1 : 1;
    return (a->from > a->to) - (b->from > b->to);
}

/* Compressed adjacency: start[v] .. start[v + 1] index into list. */
static void build_csr(const hw_sites *s, bool incoming, uint32_t **start_out, uint32_t **list_out)
{
    uint32_t *start = g_new0(uint32_t, s->n + 1);
    uint32_t *list = g_new(uint32_t, s->edges->len ? s->edges->len : 1);
    for (guint i = 0; i < s->edges->len; i++) {
        const strata_site_edge *e = &g_array_index(s->edges, strata_site_edge, i);
        start[(incoming ? e->to : e->from) + 1]++;
    }
    for (uint32_t v = 0; v < s->n; v++)
        start[v + 1] += start[v];
    uint32_t *fill = g_memdup2(start, sizeof(uint32_t) * s->n);
    for (guint i = 0; i < s->edges->len; i++) {
        const strata_site_edge *e = &g_array_index(s->edges, strata_site_edge, i);
        list[fill[incoming ? e->to : e->from]++] = i;
    }
    g_free(fill);
    *start_out = start;
    *list_out = list;
}

void hw_sites_seal(hw_sites *s)
{
    g_array_sort(s->edges, edge_order);
    s->rank = g_new(uint32_t, s->n);
    for (uint32_t v = 0; v < s->n; v++)
        s->rank[v] = UINT32_MAX;
    uint32_t next = 0;
    for (guint i = 0; i < s->edges->len; i++) {
        const strata_site_edge *e = &g_array_index(s->edges, strata_site_edge, i);
        if (s->rank[e->from] == UINT32_MAX)
            s->rank[e->from] = next++;
        if (s->rank[e->to] == UINT32_MAX)
            s->rank[e->to] = next++;
    }
    for (uint32_t v = 0; v < s->n; v++)
        if (s->rank[v] == UINT32_MAX)
            s->rank[v] = next++;
    build_csr(s, true, &s->in_start, &s->in_edge);
    build_csr(s, false, &s->out_start, &s->out_edge);
    s->dist = g_new0(uint32_t *, s->n);
    s->dist_cap = MIN(s->n, MAX((uint32_t)DIST_MIN_SOURCES, (uint32_t)DIST_BUDGET / MAX(s->n, 1u)));
    s->dist_fifo = g_new(uint32_t, MAX(s->dist_cap, 1u));
    s->gateway = g_new(uint32_t, s->n);
    for (uint32_t v = 0; v < s->n; v++)
        s->gateway[v] = STRATA_HW_NO_MEMORY;
}

void hw_sites_set_gateway(hw_sites *s, uint32_t vertex, uint32_t memory)
{
    s->gateway[vertex] = memory;
}

/* ---- a binary min-heap of (distance << 32 | vertex) ---- */

static inline bool key_before(const uint64_t *a, const uint64_t *b)
{
    return *a < *b;
}

STRATA_HEAP_DEFINE(heap, uint64_t, key_before)

/* Distances from u (Dijkstra; edge cost 1 + padding). */
static uint32_t *distances(const hw_sites *s, uint32_t u)
{
    uint32_t *dist = g_new(uint32_t, s->n);
    for (uint32_t v = 0; v < s->n; v++)
        dist[v] = UINT32_MAX;
    dist[u] = 0;
    GArray *heap = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    heap_push(heap, u);
    while (heap->len) {
        uint64_t top = heap_pop(heap);
        uint32_t v = (uint32_t)top, d = (uint32_t)(top >> 32);
        if (d > dist[v])
            continue;
        for (uint32_t k = s->out_start[v]; k < s->out_start[v + 1]; k++) {
            const strata_site_edge *e = &g_array_index(s->edges, strata_site_edge, s->out_edge[k]);
            uint32_t nd = d + 1 + e->padding;
            if (nd < dist[e->to]) {
                dist[e->to] = nd;
                heap_push(heap, (uint64_t)nd << 32 | e->to);
            }
        }
    }
    g_array_free(heap, TRUE);
    return dist;
}

bool hw_sites_path(hw_sites *s, uint32_t u, uint32_t v, const uint32_t **edges, uint32_t *n)
{
    /* Neighbours: an unpadded edge u -> v is a shortest path (cost 1), and
     * the walk below would pick the first such in-edge of v (the only
     * vertex at distance 0 is u): no distances needed. */
    for (uint32_t k = s->in_start[v]; u != v && k < s->in_start[v + 1]; k++) {
        const strata_site_edge *e = &g_array_index(s->edges, strata_site_edge, s->in_edge[k]);
        if (e->from == u && e->padding == 0) {
            g_array_set_size(s->path, 0);
            g_array_append_val(s->path, s->in_edge[k]);
            *edges = (const uint32_t *)(void *)s->path->data;
            *n = 1;
            return true;
        }
    }
    if (!s->dist[u]) {
        if (s->dist_len == s->dist_cap) { /* drop the oldest source's distances */
            uint32_t old = s->dist_fifo[s->dist_head];
            g_free(s->dist[old]);
            s->dist[old] = NULL;
            s->dist_head = (s->dist_head + 1) % s->dist_cap;
            s->dist_len--;
        }
        s->dist[u] = distances(s, u);
        s->dist_fifo[(s->dist_head + s->dist_len++) % s->dist_cap] = u;
    }
    const uint32_t *dist = s->dist[u];
    if (dist[v] == UINT32_MAX)
        return false;
    g_array_set_size(s->path, 0);
    for (uint32_t w = v; w != u;) {
        uint32_t best = UINT32_MAX;
        for (uint32_t k = s->in_start[w]; k < s->in_start[w + 1]; k++) {
            const strata_site_edge *e = &g_array_index(s->edges, strata_site_edge, s->in_edge[k]);
            if (dist[e->from] == UINT32_MAX || dist[e->from] + 1 + e->padding != dist[w])
                continue;
            if (best == UINT32_MAX) {
                best = s->in_edge[k];
                continue;
            }
            const strata_site_edge *b = &g_array_index(s->edges, strata_site_edge, best);
            if (dist[e->from] < dist[b->from] || (dist[e->from] == dist[b->from] && s->rank[e->from] < s->rank[b->from]))
                best = s->in_edge[k];
        }
        g_array_prepend_val(s->path, best);
        w = g_array_index(s->edges, strata_site_edge, best).from;
    }
    *edges = (const uint32_t *)(void *)s->path->data;
    *n = s->path->len;
    return true;
}

/* ---- the public view (hw.h) ---- */

uint32_t strata_hw_site_count(const strata_hw *hw) { return hw->sites ? hw->sites->n : 0; }

const char *strata_hw_site_switch(const strata_hw *hw, uint32_t vertex)
{
    const hw_sites *s = hw->sites;
    return s && vertex >= s->devices + s->hosts && vertex < s->n
               ? g_ptr_array_index(s->switch_names, vertex - s->devices - s->hosts)
               : NULL;
}

uint32_t strata_hw_site_gateway(const strata_hw *hw, uint32_t vertex)
{
    return hw->sites && vertex < hw->sites->n ? hw->sites->gateway[vertex] : STRATA_HW_NO_MEMORY;
}

uint32_t strata_hw_site_edge_count(const strata_hw *hw) { return hw->sites ? hw->sites->edges->len : 0; }

const strata_site_edge *strata_hw_site_edge(const strata_hw *hw, uint32_t index)
{
    g_return_val_if_fail(hw->sites && index < hw->sites->edges->len, NULL);
    return &g_array_index(hw->sites->edges, strata_site_edge, index);
}

uint32_t strata_hw_memory_site(const strata_hw *hw, uint32_t memory)
{
    const strata_memory_spec *m = strata_hw_memory(hw, memory);
    return m->kind == STRATA_MEM_HOST ? hw->devices + m->site : m->site;
}
