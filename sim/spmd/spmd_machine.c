/*
 * spmd_machine.c: the symmetries of the devices' part of a machine
 * (contract in spmd_machine.h).
 *
 * Design: every link has two ends, a memory or a switch vertex of the
 * site graph (hw.h: the site edges say which switch a link reaches); a
 * link is found by its ends (an idmap), so a link's image is the link
 * between its ends' images. A candidate permutation places the switches
 * first: from the devices outwards (a device's NIC link leads to its
 * rail's leaf, the leaf's uplink to the spine), each unplaced switch
 * behind a placed end goes where the one link of the same name, figures
 * and switch kind leads from that end's image; none, several or a switch
 * already taken: no symmetry. Then every link of the devices' part must
 * have an image of the same figures, and a half-duplex link may not be
 * turned around onto itself (its stabiliser would not be trivial on the
 * resource). Names compare without their trailing instance number
 * ("ib@12" and "ib@20", "ib.leaf3" and "ib.leaf4").
 */
#include "spmd/spmd_machine.h"
#include <string.h>
#include "core/idmap.h"

#define SWITCH_END 0x80000000u /* an end that is a switch vertex (else a memory) */
#define UNPLACED UINT32_MAX

struct spmd_machine {
    const strata_hw *hw;
    bool hosts;            /* the hosts are part of it (spmd_machine_new) */
    uint32_t devices, links, vertices, per_host;
    uint32_t *ends;        /* by key (2 x link + b side): a memory, or SWITCH_END | a switch vertex */
    bool *moves;           /* by link: in the devices' part */
    uint32_t *name_id;     /* by link: its name without the instance number, interned */
    uint32_t *kind_id;     /* by vertex: a switch's name without its number (UNPLACED: no switch) */
    uint32_t *at_start;    /* by vertex: its moving links' keys at_keys[at_start[v] .. at_start[v + 1]) */
    uint32_t *at_keys;     /* the key of each link's side at the vertex */
    strata_idmap *by_ends; /* (lower end << 32 | higher end) -> link + 1 */
    uint32_t *vimg;        /* the candidate's vertices: vertex -> vertex */
    bool *taken;           /* by vertex: a switch's image already */
    uint32_t *lperm;       /* the candidate's directed links: key -> key */
};

static uint64_t ends_key(uint32_t a, uint32_t b) { return (uint64_t)MIN(a, b) << 32 | MAX(a, b); }

/* name's length without its trailing digits, interned in ids. */
static uint32_t intern_stem(GHashTable *ids, const char *name)
{
    size_t n = strlen(name);
    while (n > 0 && g_ascii_isdigit(name[n - 1]))
        n--;
    char *stem = g_strndup(name, n);
    gpointer v = g_hash_table_lookup(ids, stem);
    if (v) {
        g_free(stem);
        return GPOINTER_TO_UINT(v) - 1;
    }
    uint32_t id = g_hash_table_size(ids);
    g_hash_table_insert(ids, stem, GUINT_TO_POINTER(id + 1));
    return id;
}

static uint32_t end_vertex(const spmd_machine *m, uint32_t end)
{
    return end & SWITCH_END ? end & ~SWITCH_END : strata_hw_memory_site(m->hw, end);
}

/* An end of the devices' part: a device's memory or a switch (with
 * hosts, a host's memory too). */
static bool device_end(const spmd_machine *m, uint32_t end)
{
    if (end == STRATA_HW_NO_MEMORY)
        return false; /* a switch end that no site edge names */
    if (end & SWITCH_END)
        return strata_hw_site_switch(m->hw, end & ~SWITCH_END) != NULL;
    return m->hosts || strata_hw_memory(m->hw, end)->device != STRATA_HW_NO_DEVICE;
}

/* Each link's ends, names and part; the switches' kinds. */
static void read_ends(spmd_machine *m)
{
    for (uint32_t l = 0; l < m->links; l++) {
        const strata_link_spec *s = strata_hw_link(m->hw, l);
        m->ends[2 * l] = s->a;
        m->ends[2 * l + 1] = s->b;
    }
    for (uint32_t e = 0; e < strata_hw_site_edge_count(m->hw); e++) {
        const strata_site_edge *x = strata_hw_site_edge(m->hw, e);
        const strata_link_spec *s = strata_hw_link(m->hw, x->link);
        uint32_t a = x->forward ? x->from : x->to, b = x->forward ? x->to : x->from;
        if (s->a == STRATA_HW_NO_MEMORY)
            m->ends[2 * x->link] = SWITCH_END | a;
        if (s->b == STRATA_HW_NO_MEMORY)
            m->ends[2 * x->link + 1] = SWITCH_END | b;
    }
    GHashTable *ids = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (uint32_t l = 0; l < m->links; l++) {
        m->moves[l] = device_end(m, m->ends[2 * l]) && device_end(m, m->ends[2 * l + 1]);
        m->name_id[l] = intern_stem(ids, strata_hw_link(m->hw, l)->name);
    }
    for (uint32_t v = 0; v < m->vertices; v++) {
        const char *sw = strata_hw_site_switch(m->hw, v);
        m->kind_id[v] = sw ? intern_stem(ids, sw) : UNPLACED;
    }
    g_hash_table_destroy(ids);
}

/* The moving links at each vertex (both sides of a link that has them). */
static void index_vertices(spmd_machine *m)
{
    m->at_start = g_new0(uint32_t, m->vertices + 1);
    for (uint32_t k = 0; k < 2 * m->links; k++)
        if (m->moves[k / 2])
            m->at_start[end_vertex(m, m->ends[k]) + 1]++;
    for (uint32_t v = 0; v < m->vertices; v++)
        m->at_start[v + 1] += m->at_start[v];
    uint32_t *fill = g_memdup2(m->at_start, m->vertices * sizeof *fill);
    m->at_keys = g_new(uint32_t, m->at_start[m->vertices] + 1);
    for (uint32_t k = 0; k < 2 * m->links; k++)
        if (m->moves[k / 2])
            m->at_keys[fill[end_vertex(m, m->ends[k])]++] = k;
    g_free(fill);
}

spmd_machine *spmd_machine_new(const strata_hw *hw, bool hosts)
{
    spmd_machine *m = g_new0(spmd_machine, 1);
    m->hw = hw;
    m->hosts = hosts;
    m->devices = strata_hw_devices(hw);
    m->per_host = strata_hw_devices_per_host(hw);
    m->links = strata_hw_link_count(hw);
    m->vertices = MAX(strata_hw_site_count(hw), m->devices);
    m->ends = g_new(uint32_t, 2 * (size_t)m->links + 1);
    m->moves = g_new0(bool, m->links + 1);
    m->name_id = g_new(uint32_t, m->links + 1);
    m->kind_id = g_new(uint32_t, m->vertices);
    m->vimg = g_new(uint32_t, m->vertices);
    m->taken = g_new0(bool, m->vertices);
    m->lperm = g_new(uint32_t, 2 * (size_t)m->links + 1);
    m->by_ends = strata_idmap_new();
    read_ends(m);
    index_vertices(m);
    for (uint32_t l = 0; l < m->links; l++) {
        uint64_t k = ends_key(m->ends[2 * l], m->ends[2 * l + 1]);
        if (strata_idmap_get(m->by_ends, k)) {
            spmd_machine_free(m);
            return NULL;
        }
        strata_idmap_put(m->by_ends, k, GUINT_TO_POINTER(l + 1));
    }
    return m;
}

void spmd_machine_free(spmd_machine *m)
{
    if (!m)
        return;
    g_free(m->ends);
    g_free(m->moves);
    g_free(m->name_id);
    g_free(m->kind_id);
    g_free(m->at_start);
    g_free(m->at_keys);
    g_free(m->vimg);
    g_free(m->taken);
    g_free(m->lperm);
    strata_idmap_free(m->by_ends);
    g_free(m);
}

uint32_t spmd_machine_key_image(const spmd_machine *m, uint32_t key) { return m->lperm[key]; }
bool spmd_machine_moves(const spmd_machine *m, uint32_t link) { return m->moves[link]; }

uint32_t spmd_machine_memory_image(const spmd_machine *m, const uint32_t *perm, uint32_t mem)
{
    if (mem == STRATA_HW_NO_MEMORY)
        return mem;
    const strata_memory_spec *s = strata_hw_memory(m->hw, mem);
    if (s->device == STRATA_HW_NO_DEVICE) /* a host's (hosts: perm keeps the hosts whole) */
        return m->hosts ? strata_hw_memory_on(m->hw, s->base, perm[s->host * m->per_host]) : mem;
    return strata_hw_memory_on(m->hw, s->base, perm[s->device]);
}

/* With hosts: places each host's vertex (N + host) where perm takes its
 * devices, all onto one other host, no two hosts onto one; false
 * otherwise (a permutation that keeps a host moves its devices among
 * themselves, or is the identity). */
static bool place_hosts(spmd_machine *m, const uint32_t *perm)
{
    uint32_t n_hosts = m->devices / m->per_host;
    for (uint32_t h = 0; h < n_hosts && m->devices + h < m->vertices; h++) {
        uint32_t to = perm[h * m->per_host] / m->per_host, v = m->devices + to;
        if (to == h)
            return false; /* keeps a host, moving its devices: a quotient would hold part of it */
        for (uint32_t d = h * m->per_host; d < (h + 1) * m->per_host; d++)
            if (perm[d] / m->per_host != to)
                return false;
        if (v >= m->vertices || m->taken[v])
            return false;
        m->vimg[m->devices + h] = v;
        m->taken[v] = true;
    }
    return true;
}

/* The image of an end (a placed switch, or a device's memory). */
static uint32_t end_image(const spmd_machine *m, const uint32_t *perm, uint32_t end)
{
    return end & SWITCH_END ? SWITCH_END | m->vimg[end & ~SWITCH_END] : spmd_machine_memory_image(m, perm, end);
}

static bool same_figures(const strata_link_spec *a, const strata_link_spec *b)
{
    return a->bandwidth == b->bandwidth && a->latency == b->latency && a->full_duplex == b->full_duplex &&
           a->staging_buffer == b->staging_buffer && a->staging_serial == b->staging_serial &&
           a->copy_engines == b->copy_engines;
}

/* Places the switch at the far side of key (whose near end is placed):
 * the far end of the one link like it at the near end's image. */
static bool place_far(spmd_machine *m, const uint32_t *perm, uint32_t key)
{
    uint32_t l = key / 2, near = m->ends[key], far = m->ends[key ^ 1u] & ~SWITCH_END;
    uint32_t near_img = end_image(m, perm, near), at = end_vertex(m, near_img), found = UNPLACED;
    for (uint32_t i = m->at_start[at]; i < m->at_start[at + 1]; i++) {
        uint32_t k = m->at_keys[i], other = m->ends[k ^ 1u];
        if (m->ends[k] != near_img || m->name_id[k / 2] != m->name_id[l] || !(other & SWITCH_END) ||
            m->kind_id[other & ~SWITCH_END] != m->kind_id[far] ||
            !same_figures(strata_hw_link(m->hw, k / 2), strata_hw_link(m->hw, l)))
            continue;
        if (found != UNPLACED && found != (other & ~SWITCH_END))
            return false; /* two switches alike: which one is ambiguous */
        found = other & ~SWITCH_END;
    }
    if (found == UNPLACED || m->taken[found])
        return false;
    m->vimg[far] = found;
    m->taken[found] = true;
    return true;
}

/* Places every switch of the devices' part under perm; false when one has
 * no image, an ambiguous one, or another's. */
static bool place_switches(spmd_machine *m, const uint32_t *perm)
{
    for (uint32_t v = 0; v < m->vertices; v++) {
        m->vimg[v] = v < m->devices ? perm[v] : UNPLACED;
        m->taken[v] = false;
    }
    if (m->hosts && !place_hosts(m, perm))
        return false;
    for (bool progress = true; progress;) {
        progress = false;
        for (uint32_t k = 0; k < 2 * m->links; k++) {
            uint32_t far = m->ends[k ^ 1u];
            if (!m->moves[k / 2] || !(far & SWITCH_END) || m->vimg[far & ~SWITCH_END] != UNPLACED ||
                ((m->ends[k] & SWITCH_END) && m->vimg[m->ends[k] & ~SWITCH_END] == UNPLACED))
                continue;
            if (!place_far(m, perm, k))
                return false;
            progress = true;
        }
    }
    for (uint32_t k = 0; k < 2 * m->links; k++)
        if (m->moves[k / 2] && (m->ends[k] & SWITCH_END) && m->vimg[m->ends[k] & ~SWITCH_END] == UNPLACED)
            return false; /* a switch no device reaches */
    return true;
}

bool spmd_machine_symmetry(spmd_machine *m, const uint32_t *perm)
{
    if (!place_switches(m, perm))
        return false;
    for (uint32_t l = 0; l < m->links; l++) {
        const strata_link_spec *s = strata_hw_link(m->hw, l);
        if (!m->moves[l]) {
            m->lperm[2 * l] = 2 * l;
            m->lperm[2 * l + 1] = 2 * l + 1;
            continue;
        }
        uint32_t a = end_image(m, perm, m->ends[2 * l]), b = end_image(m, perm, m->ends[2 * l + 1]);
        uint32_t to = GPOINTER_TO_UINT(strata_idmap_get(m->by_ends, ends_key(a, b)));
        if (to == 0 || !same_figures(s, strata_hw_link(m->hw, to - 1)))
            return false;
        to--;
        bool flip = m->ends[2 * to] != a;
        if (to == l && flip && !s->full_duplex)
            return false; /* a half-duplex link turned around: its stabiliser is not trivial */
        m->lperm[2 * l] = 2 * to + flip;
        m->lperm[2 * l + 1] = 2 * to + !flip;
    }
    return true;
}
