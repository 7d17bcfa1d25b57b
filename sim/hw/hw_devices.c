/*
 * hw_devices.c: devices and interconnects of a hardware model (contract in
 * hw.h and hw_internal.h; format in docs/hardware.md).
 *
 * Reads [hardware] devices / devices_per_host and every [interconnect NAME]
 * group (checked whatever the device count), then, with several devices,
 * replaces the loaded (template) memories, links and units by their
 * instances, appends the interconnect links and builds the site graph.
 *
 * Invariants: at most one interconnect joins devices and one joins hosts
 * (the site graph has one edge per pair of sites); every link between sites
 * joins a site's gateway memory (one per-device template, one host
 * template), so a route passing through a site enters and leaves at the
 * same point; the host-to-device edge is padded by the device
 * interconnect's diameter, so device-to-device routes never cross a host.
 */
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/mesh.h"
#include "core/units.h"
#include "hw/hw_internal.h"
#include "hw/hw_slice.h"

#define MAX_DEVICES STRATA_MESH_MAX_DEVICES
#define MAX_LINKS_PER_CHIP 64u
#define MAX_INSTANCES (1u << 22) /* memories, units and links after instantiation */

typedef enum { TOPO_RING, TOPO_TORUS2D, TOPO_TORUS3D, TOPO_SWITCH, TOPO_FULL } topology;
static const char *const topology_names[] = {"ring", "torus2d", "torus3d", "switch", "full"};

typedef struct interconnect {
    const char *group; /* "interconnect NAME" */
    const char *name;
    uint32_t memory;   /* template */
    bool hosts;        /* joins hosts (memory of kind host) */
    topology topo;
    uint32_t dims[3], n_dims;
    bool wrap[3];      /* a torus dimension's links joining its two ends */
    uint32_t domain;   /* devices per domain it joins (hosts: all hosts) */
    double bandwidth, latency;
    bool full_duplex;
} interconnect;

bool hw_per_device(strata_mem_kind kind) { return kind != STRATA_MEM_HOST; }

/* wraparound = true | false, or one per dimension ("false,true"): whether
 * a torus dimension has the links joining its ends (default true; a Cloud
 * TPU slice has them only on some axes, docs/hardware.md). */
static bool get_wraparound(const hw_load_ctx *ctx, interconnect *ic, GError **err)
{
    for (uint32_t k = 0; k < 3; k++)
        ic->wrap[k] = true;
    if (!strata_keyfile_has_key(ctx->k, ic->group, "wraparound"))
        return true;
    char *v = strata_keyfile_value(ctx->k, ic->group, "wraparound");
    char **parts = g_strsplit(v, ",", -1);
    guint n = g_strv_length(parts);
    bool torus = ic->topo == TOPO_TORUS2D || ic->topo == TOPO_TORUS3D;
    bool ok = torus && (n == 1 || n == ic->n_dims);
    for (guint k = 0; ok && k < n; k++) {
        const char *w = g_strstrip(parts[k]);
        bool wrap = true;
        ok = strata_parse_bool(w, &wrap);
        for (uint32_t d = n == 1 ? 0 : k; ok && d < (n == 1 ? ic->n_dims : k + 1); d++)
            ic->wrap[d] = wrap;
    }
    if (!ok)
        hw_fail_value(ctx, err, ic->group, "wraparound",
                      torus ? "true, false, or one of them per dimension such as false,true"
                            : "no wraparound key (it applies to torus2d and torus3d)",
                      v);
    g_strfreev(parts);
    g_free(v);
    return ok;
}

/* "4x4" / "4x4x4" into ic->dims, with the count the topology needs. */
static bool get_dims(const hw_load_ctx *ctx, interconnect *ic, uint32_t sites, GError **err)
{
    bool torus = ic->topo == TOPO_TORUS2D || ic->topo == TOPO_TORUS3D;
    bool has = strata_keyfile_has_key(ctx->k, ic->group, "dims");
    if (!torus) {
        if (has)
            hw_fail(ctx, err, ic->group, "dims", "dims apply to torus2d and torus3d only, not to %s",
                    topology_names[ic->topo]);
        ic->n_dims = 1;
        ic->dims[0] = sites;
        return !has;
    }
    uint32_t want = ic->topo == TOPO_TORUS2D ? 2 : 3;
    if (!has) {
        hw_fail(ctx, err, ic->group, NULL, "missing required key 'dims' (%s: %s)", topology_names[ic->topo],
                want == 2 ? "such as 4x4" : "such as 4x4x4");
        return false;
    }
    char *v = strata_keyfile_value(ctx->k, ic->group, "dims");
    char **parts = g_strsplit(v, "x", -1);
    bool ok = g_strv_length(parts) == want;
    uint64_t product = 1;
    for (uint32_t i = 0; ok && i < want; i++) {
        uint64_t d = 0;
        ok = strata_parse_u64(parts[i], &d, NULL) && d >= 1 && d <= MAX_DEVICES;
        ic->dims[i] = (uint32_t)d;
        product *= d;
    }
    ic->n_dims = want;
    if (!ok)
        hw_fail_value(ctx, err, ic->group, "dims", want == 2 ? "two sizes such as 4x4" : "three sizes such as 4x4x4",
                      v);
    else if (product != sites) {
        hw_fail(ctx, err, ic->group, "dims", "%s makes %" G_GUINT64_FORMAT " %s, but %s has %u "
                "(set dims to multiply to %u, e.g. --set interconnect.%s.dims=...)",
                v, product, ic->hosts ? "hosts" : "devices",
                strata_keyfile_has_key(ctx->k, ic->group, "domain") ? "a domain" : "the machine", sites, sites,
                ic->name);
        ok = false;
    }
    g_strfreev(parts);
    g_free(v);
    return ok;
}

/* domain = M: the interconnect joins each M consecutive devices (a scale-up
 * domain: an NVLink node or rack, a TPU slice), not across them; default
 * all. Above the devices it is a slice of one domain (hw_slice.h, rule 3). */
static bool get_domain(const hw_load_ctx *ctx, const strata_hw *hw, interconnect *ic, GError **err)
{
    ic->domain = ic->hosts ? hw->hosts : hw->devices;
    if (!strata_keyfile_has_key(ctx->k, ic->group, "domain"))
        return true;
    if (ic->hosts) {
        hw_fail(ctx, err, ic->group, "domain", "domain applies to an interconnect between devices, not hosts");
        return false;
    }
    if (!hw_get_count(ctx, ic->group, "domain", 1, MAX_DEVICES, hw->devices, NULL, &ic->domain, err))
        return false;
    ic->domain = MIN(ic->domain, hw->devices);
    if (hw->devices % ic->domain == 0)
        return true;
    hw_fail(ctx, err, ic->group, "domain", "expected a divisor of devices = %u, got %u", hw->devices, ic->domain);
    return false;
}

static bool parse_interconnect(const hw_load_ctx *ctx, const strata_hw *hw, interconnect *ic, GError **err)
{
    char *mem = hw_get_text(ctx, ic->group, "memory");
    int m = mem ? hw_get_memory_ref(ctx, hw, ic->group, "memory", g_strstrip(mem), err)
                : (int)hw->default_memory;
    g_free(mem);
    if (m < 0)
        return false;
    ic->memory = (uint32_t)m;
    ic->hosts = !hw_per_device(g_array_index(hw->tmems, strata_memory_spec, m).kind);
    char *topo = hw_get_text(ctx, ic->group, "topology");
    bool ok = false;
    for (guint i = 0; i < G_N_ELEMENTS(topology_names); i++)
        if (strcmp(g_strstrip(topo), topology_names[i]) == 0) {
            ic->topo = (topology)i;
            ok = true;
        }
    if (!ok)
        hw_fail_value(ctx, err, ic->group, "topology", "ring, torus2d, torus3d, switch or full", topo);
    g_free(topo);
    uint32_t lpc = 1;
    if (!ok || !get_domain(ctx, hw, ic, err) || !get_dims(ctx, ic, ic->domain, err) ||
        !hw_get_bandwidth(ctx, ic->group, "bandwidth", &ic->bandwidth, err) ||
        !hw_get_time(ctx, ic->group, "latency", &ic->latency, err) ||
        !hw_get_count(ctx, ic->group, "links_per_chip", 1, MAX_LINKS_PER_CHIP, 1, NULL, &lpc, err))
        return false;
    ic->bandwidth *= lpc;
    if (!get_wraparound(ctx, ic, err))
        return false;
    ic->full_duplex = true;
    char *duplex = hw_get_text(ctx, ic->group, "duplex");
    if (duplex && strcmp(g_strstrip(duplex), "half") == 0)
        ic->full_duplex = false;
    else if (duplex && strcmp(duplex, "full") != 0)
        ok = hw_fail_value(ctx, err, ic->group, "duplex", "full or half", duplex);
    g_free(duplex);
    return ok;
}

/* ---- instantiation ---- */

/* The instance of template memory t for site i (a device, or a host). */
static uint32_t mem_instance(const strata_hw *hw, uint32_t t, uint32_t i) { return hw->mem_at[t].offset + i; }

static void instantiate_memories(strata_hw *hw)
{
    GArray *out = g_array_new(FALSE, TRUE, sizeof(strata_memory_spec));
    hw->mem_at = g_new0(hw_instances, hw->tmems->len);
    for (guint t = 0; t < hw->tmems->len; t++) {
        const strata_memory_spec *m = &g_array_index(hw->tmems, strata_memory_spec, t);
        hw->mem_at[t] = (hw_instances){.offset = out->len, .per_host = !hw_per_device(m->kind)};
        uint32_t count = hw->mem_at[t].per_host ? hw->hosts : hw->devices;
        for (uint32_t i = 0; i < count; i++) {
            strata_memory_spec x = *m;
            char *name = g_strdup_printf("%s@%u", m->name, i);
            x.name = g_string_chunk_insert_const(hw->strings, name);
            g_free(name);
            x.base = t;
            x.site = i;
            x.device = hw->mem_at[t].per_host ? STRATA_HW_NO_DEVICE : i;
            x.host = hw->mem_at[t].per_host ? i : i / hw->devices_per_host;
            g_array_append_val(out, x);
        }
    }
    hw->memories = out;
    hw->default_memory = mem_instance(hw, hw->default_memory, 0);
}

/* Appends a link; `sites` says whose it is: {i, j} devices (hosts: false)
 * or hosts (true), j = STRATA_HW_NO_DEVICE for one. */
static void add_link(strata_hw *hw, const char *name, uint32_t a, uint32_t b, double bandwidth, double latency,
                     bool full_duplex, bool hosts, uint32_t i, uint32_t j)
{
    strata_link_spec l = {.name = g_string_chunk_insert_const(hw->strings, name), .a = a, .b = b,
                          .bandwidth = bandwidth, .latency = latency, .full_duplex = full_duplex,
                          .device = {hosts ? STRATA_HW_NO_DEVICE : i, hosts ? STRATA_HW_NO_DEVICE : j},
                          .host = {hosts ? i : STRATA_HW_NO_DEVICE, hosts ? j : STRATA_HW_NO_DEVICE}};
    g_array_append_val(hw->links, l);
}

/* Template links per device (or per host between host memories); the one
 * between a per-device and a host memory gives the gateways. */
static bool instantiate_links(const hw_load_ctx *ctx, strata_hw *hw, uint32_t gateway[2], uint32_t *cross,
                              GError **err)
{
    hw->links = g_array_new(FALSE, TRUE, sizeof(strata_link_spec));
    hw->link_at = g_new0(hw_instances, hw->tlinks->len ? hw->tlinks->len : 1);
    *cross = STRATA_HW_NO_MEMORY;
    for (guint t = 0; t < hw->tlinks->len; t++) {
        const strata_link_spec *l = &g_array_index(hw->tlinks, strata_link_spec, t);
        bool dev_a = hw_per_device(g_array_index(hw->tmems, strata_memory_spec, l->a).kind);
        bool dev_b = hw_per_device(g_array_index(hw->tmems, strata_memory_spec, l->b).kind);
        hw->link_at[t] = (hw_instances){.offset = hw->links->len, .per_host = !dev_a && !dev_b};
        if (dev_a != dev_b) {
            char *group = g_strdup_printf("link %s", l->name);
            if (*cross != STRATA_HW_NO_MEMORY)
                hw_fail(ctx, err, group, "between", "with several devices one [link] may join a per-device "
                        "memory to a host memory (the device's link to its host); [link %s] already does",
                        g_array_index(hw->tlinks, strata_link_spec, *cross).name);
            g_free(group);
            if (*cross != STRATA_HW_NO_MEMORY)
                return false;
            *cross = t;
            gateway[0] = dev_a ? l->a : l->b;
            gateway[1] = dev_a ? l->b : l->a;
        }
        uint32_t count = hw->link_at[t].per_host ? hw->hosts : hw->devices;
        for (uint32_t i = 0; i < count; i++) {
            uint32_t ia = hw->mem_at[l->a].per_host == hw->link_at[t].per_host ? i : i / hw->devices_per_host;
            uint32_t ib = hw->mem_at[l->b].per_host == hw->link_at[t].per_host ? i : i / hw->devices_per_host;
            char *name = g_strdup_printf("%s@%u", l->name, i);
            add_link(hw, name, mem_instance(hw, l->a, ia), mem_instance(hw, l->b, ib), l->bandwidth, l->latency,
                     l->full_duplex, hw->link_at[t].per_host, i, STRATA_HW_NO_DEVICE);
            g_array_index(hw->links, strata_link_spec, hw->links->len - 1).staging_buffer = l->staging_buffer;
            g_array_index(hw->links, strata_link_spec, hw->links->len - 1).staging_serial = l->staging_serial;
            g_array_index(hw->links, strata_link_spec, hw->links->len - 1).cpu_copy_in = l->cpu_copy_in;
            g_array_index(hw->links, strata_link_spec, hw->links->len - 1).cpu_copy_out = l->cpu_copy_out;
            g_array_index(hw->links, strata_link_spec, hw->links->len - 1).copy_engines = l->copy_engines;
            g_free(name);
        }
    }
    return true;
}

static bool instantiate_units(const hw_load_ctx *ctx, strata_hw *hw, GError **err)
{
    GArray *out = g_array_new(FALSE, TRUE, sizeof(strata_compute_spec));
    hw->unit_at = g_new0(hw_instances, hw->tunits->len ? hw->tunits->len : 1);
    bool ok = true;
    for (guint t = 0; ok && t < hw->tunits->len; t++) {
        const strata_compute_spec *u = &g_array_index(hw->tunits, strata_compute_spec, t);
        if (hw->mem_at[u->operands].per_host) {
            char *group = g_strdup_printf("compute %s", u->name);
            hw_fail(ctx, err, group, "operands", "with several devices a unit's operands must be in a memory of "
                    "kind device or onchip (one per device), not in host memory '%s'",
                    g_array_index(hw->tmems, strata_memory_spec, u->operands).name);
            g_free(group);
            ok = false;
        }
        hw->unit_at[t] = (hw_instances){.offset = out->len, .per_host = false};
        for (uint32_t d = 0; ok && d < hw->devices; d++) {
            strata_compute_spec x = *u;
            char *name = g_strdup_printf("%s@%u", u->name, d);
            x.name = g_string_chunk_insert_const(hw->strings, name);
            g_free(name);
            x.operands = mem_instance(hw, u->operands, d);
            x.base = t;
            x.device = d;
            g_array_append_val(out, x);
        }
    }
    hw->computes = out;
    return ok;
}

/* The number of links the interconnect's longest route crosses. */
static uint32_t diameter(const interconnect *ic)
{
    if (ic->topo == TOPO_SWITCH)
        return 2;
    if (ic->topo == TOPO_FULL)
        return 1;
    uint32_t d = 0;
    for (uint32_t k = 0; k < ic->n_dims; k++)
        d += ic->wrap[k] ? ic->dims[k] / 2 : ic->dims[k] - 1;
    return d;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Adds the links and site edges of one domain of the interconnect: its
 * `count` sites from `base` (indices among devices, or hosts). */
static void build_domain(strata_hw *hw, const interconnect *ic, uint32_t base, uint32_t count)
{
    uint32_t first = (ic->hosts ? hw->devices : 0) + base;
    if (ic->topo == TOPO_SWITCH) {
        char *sw_name = count == (ic->hosts ? hw->hosts : hw->devices) ? g_strdup(ic->name)
                                                                       : g_strdup_printf("%s.%u", ic->name, base / count);
        uint32_t sw = hw_sites_add_switch(hw->sites, sw_name);
        g_free(sw_name);
        for (uint32_t i = 0; i < count; i++) {
            char *name = g_strdup_printf("%s@%u", ic->name, base + i);
            hw_sites_connect(hw->sites, first + i, sw, hw->links->len, 0, 0);
            add_link(hw, name, mem_instance(hw, ic->memory, base + i), STRATA_HW_NO_MEMORY, ic->bandwidth,
                     ic->latency, ic->full_duplex, ic->hosts, base + i, STRATA_HW_NO_DEVICE);
            g_free(name);
        }
        return;
    }
    uint32_t js[7];
    for (uint32_t i = 0; i < count; i++) {
        /* i's neighbours above it: both ways along each dimension (with wrap-around where it has it) */
        uint32_t n_js = 0;
        for (uint32_t k = 0, stride = count; ic->topo != TOPO_FULL && k < ic->n_dims; k++) {
            uint32_t n = ic->dims[k];
            stride /= n;
            uint32_t c = i / stride % n, at = i - c * stride;
            uint32_t up = at + (c + 1) % n * stride, down = at + (c + n - 1) % n * stride;
            bool up_wraps = c + 1 == n, down_wraps = c == 0; /* links joining the dimension's ends */
            if (up > i && (ic->wrap[k] || !up_wraps))
                js[n_js++] = up;
            if (down > i && down != up && (ic->wrap[k] || !down_wraps))
                js[n_js++] = down;
        }
        qsort(js, n_js, sizeof(uint32_t), compare_u32);
        for (uint32_t x = 0, j = i + 1; ic->topo == TOPO_FULL ? j < count : x < n_js; x++, j++) {
            uint32_t to = base + (ic->topo == TOPO_FULL ? j : js[x]);
            char *name = g_strdup_printf("%s:%u-%u", ic->name, base + i, to);
            hw_sites_connect(hw->sites, first + i, first - base + to, hw->links->len, 0, 0);
            add_link(hw, name, mem_instance(hw, ic->memory, base + i), mem_instance(hw, ic->memory, to),
                     ic->bandwidth, ic->latency, ic->full_duplex, ic->hosts, base + i, to);
            g_free(name);
        }
    }
}

/* Adds the interconnect's links and its edges between sites, domain by domain. */
static void build_interconnect(strata_hw *hw, const interconnect *ic)
{
    uint32_t count = ic->hosts ? hw->hosts : hw->devices;
    for (uint32_t base = 0; base < count; base += ic->domain)
        build_domain(hw, ic, base, ic->domain);
}

/* The [interconnect] groups, checked: at most one joins devices and one
 * joins hosts (ics[0] and ics[1], NULL when none). */
static bool parse_interconnects(const hw_load_ctx *ctx, strata_hw *hw, char **groups, gsize n_groups,
                                interconnect *store, interconnect *ics[2], GError **err)
{
    for (gsize g = 0; g < n_groups; g++) {
        if (!g_str_has_prefix(groups[g], "interconnect "))
            continue;
        interconnect ic = {.group = groups[g], .name = groups[g] + strlen("interconnect ")};
        if (!parse_interconnect(ctx, hw, &ic, err) || !hw_coll_impl_load(ctx, hw, ic.group, ic.hosts, ic.domain, err))
            return false;
        if (ics[ic.hosts]) {
            hw_fail(ctx, err, ic.group, NULL, "a second interconnect between %s ([%s] already joins them; "
                    "a model takes one per level)", ic.hosts ? "hosts" : "devices", ics[ic.hosts]->group);
            return false;
        }
        store[ic.hosts] = ic;
        ics[ic.hosts] = &store[ic.hosts];
    }
    return true;
}

/* The memory `memory` of [group] (an interconnect or the network) is the
 * gateway of its sites, gateway[hosts]. */
static bool check_gateway(const hw_load_ctx *ctx, const strata_hw *hw, const char *group, uint32_t memory,
                          bool hosts, uint32_t *gateway, GError **err)
{
    if (*gateway == STRATA_HW_NO_MEMORY || *gateway == memory) {
        *gateway = memory;
        return true;
    }
    hw_fail(ctx, err, group, strata_keyfile_has_key(ctx->k, group, "memory") ? "memory" : NULL,
            "expected memory = %s: links between %s must join the memory the %s's link to %s joins",
            g_array_index(hw->tmems, strata_memory_spec, *gateway).name, hosts ? "hosts" : "devices",
            hosts ? "host" : "device", hosts ? "its devices" : "its host");
    return false;
}

/* The site graph: the host links (their device-to-host edge padded so that
 * traffic between devices crosses no host while an interconnect or a
 * network of the devices joins them), the interconnects, the network. */
static void build_sites(strata_hw *hw, interconnect *const ics[2], const hw_network *net, const uint32_t gateway[2],
                        uint32_t cross)
{
    hw->sites = hw_sites_new(hw->devices, hw->hosts);
    uint32_t pad = ics[0] ? diameter(ics[0]) : 0;
    if (net && !hw_network_on_hosts(net))
        pad += 2 * pad + hw_network_diameter(hw, net);
    if (cross != STRATA_HW_NO_MEMORY) {
        bool device_is_a = !hw->mem_at[g_array_index(hw->tlinks, strata_link_spec, cross).a].per_host;
        for (uint32_t d = 0; d < hw->devices; d++) {
            uint32_t host = hw->devices + d / hw->devices_per_host, link = hw->link_at[cross].offset + d;
            if (device_is_a)
                hw_sites_connect(hw->sites, d, host, link, 0, pad);
            else
                hw_sites_connect(hw->sites, host, d, link, pad, 0);
        }
    }
    for (int level = 0; level < 2; level++)
        if (ics[level])
            build_interconnect(hw, ics[level]);
    if (net)
        hw_network_build(hw, net);
    hw_sites_seal(hw->sites);
    for (uint32_t d = 0; gateway[0] != STRATA_HW_NO_MEMORY && d < hw->devices; d++)
        hw_sites_set_gateway(hw->sites, d, mem_instance(hw, gateway[0], d));
    for (uint32_t h = 0; gateway[1] != STRATA_HW_NO_MEMORY && h < hw->hosts; h++)
        hw_sites_set_gateway(hw->sites, hw->devices + h, mem_instance(hw, gateway[1], h));
    hw_route_memo_init(hw);
}

/* One device: every memory, unit and link is device 0's (host memories
 * and the links between them host 0's). */
static void place_one_device(strata_hw *hw)
{
    for (guint i = 0; i < hw->memories->len; i++) {
        strata_memory_spec *m = &g_array_index(hw->memories, strata_memory_spec, i);
        m->device = hw_per_device(m->kind) ? 0 : STRATA_HW_NO_DEVICE;
        m->host = 0;
    }
    for (guint i = 0; i < hw->links->len; i++) {
        strata_link_spec *l = &g_array_index(hw->links, strata_link_spec, i);
        bool hosts = !hw_per_device(g_array_index(hw->memories, strata_memory_spec, l->a).kind) &&
                     !hw_per_device(g_array_index(hw->memories, strata_memory_spec, l->b).kind);
        l->device[0] = hosts ? STRATA_HW_NO_DEVICE : 0;
        l->host[0] = hosts ? 0 : STRATA_HW_NO_DEVICE;
        l->device[1] = l->host[1] = STRATA_HW_NO_DEVICE;
    }
}

/* The instances the model will hold: an upper bound (links of a torus
 * counted as three per site). */
static uint64_t instance_count(const strata_hw *hw, interconnect *const ics[2])
{
    uint64_t n = (uint64_t)hw->devices * hw->tunits->len;
    for (guint t = 0; t < hw->tmems->len; t++)
        n += hw_per_device(g_array_index(hw->tmems, strata_memory_spec, t).kind) ? hw->devices : hw->hosts;
    n += (uint64_t)hw->devices * (hw->tlinks->len + 2); /* and a NIC's links */
    for (int level = 0; level < 2; level++) {
        uint64_t sites = level ? hw->hosts : hw->devices;
        if (ics[level])
            n += ics[level]->topo == TOPO_FULL ? sites * (ics[level]->domain - 1) / 2 : 3 * sites;
    }
    return n;
}

/* With several devices: the instances, the gateways, the site graph. */
static bool build_devices(const hw_load_ctx *ctx, strata_hw *hw, interconnect *const ics[2], const hw_network *net,
                          GError **err)
{
    uint64_t instances = instance_count(hw, ics);
    if (instances > MAX_INSTANCES) {
        hw_fail(ctx, err, "hardware", "devices", "%u devices make %" G_GUINT64_FORMAT " memories, units and links "
                "(a model holds at most %u): expected fewer devices, templates or a sparser interconnect",
                hw->devices, instances, MAX_INSTANCES);
        return false;
    }
    uint32_t gateway[2] = {STRATA_HW_NO_MEMORY, STRATA_HW_NO_MEMORY}, cross = STRATA_HW_NO_MEMORY;
    instantiate_memories(hw);
    if (!instantiate_links(ctx, hw, gateway, &cross, err) || !instantiate_units(ctx, hw, err))
        return false;
    for (int level = 0; level < 2; level++)
        if (ics[level] && !check_gateway(ctx, hw, ics[level]->group, ics[level]->memory, level, &gateway[level], err))
            return false;
    if (net && !check_gateway(ctx, hw, hw_network_group(net), hw_network_memory(net), hw_network_on_hosts(net),
                              &gateway[hw_network_on_hosts(net)], err))
        return false;
    build_sites(hw, ics, net, gateway, cross);
    return true;
}

bool hw_devices_build(const hw_load_ctx *ctx, strata_hw *hw, char **groups, gsize n_groups, GError **err)
{
    if (!hw_slice_apply(ctx, hw, groups, n_groups, err) || /* --set hardware.devices=N alone: a slice */
        !hw_get_count(ctx, "hardware", "devices", 1, MAX_DEVICES, 1, NULL, &hw->devices, err) ||
        !hw_get_count(ctx, "hardware", "devices_per_host", 1, MAX_DEVICES, hw->devices, NULL, &hw->devices_per_host, err))
        return false;
    if (hw->devices % hw->devices_per_host != 0) {
        /* --set hardware.devices=N against the file's devices_per_host: the override is the cause */
        if (strata_keyfile_overridden(ctx->k, "hardware", "devices") &&
            !strata_keyfile_overridden(ctx->k, "hardware", "devices_per_host")) {
            char *per_host = strata_keyfile_where(ctx->k, "hardware", "devices_per_host");
            hw_fail(ctx, err, "hardware", "devices", "expected a multiple of devices_per_host = %u (%s), got %u",
                    hw->devices_per_host, per_host, hw->devices);
            g_free(per_host);
        } else
            hw_fail(ctx, err, "hardware", "devices_per_host", "expected a divisor of devices = %u, got %u",
                    hw->devices, hw->devices_per_host);
        return false;
    }
    hw->hosts = hw->devices / hw->devices_per_host;
    interconnect store[2], *ics[2] = {NULL, NULL};
    hw_network *net = NULL;
    if (!parse_interconnects(ctx, hw, groups, n_groups, store, ics, err) ||
        !hw_network_parse(ctx, hw, groups, n_groups, &net, err))
        return false;
    hw->domain = ics[0] ? ics[0]->domain : hw->devices;
    hw->has_nics = net != NULL;
    if (net)
        hw->nics = hw_network_nics(hw, net);
    if (net && ics[1] && hw_network_on_hosts(net)) {
        hw_fail(ctx, err, hw_network_group(net), NULL, "a second network between hosts ([%s] already joins them; a "
                "model takes one per level)", ics[1]->group);
        hw_network_free(net);
        return false;
    }
    bool ok = true;
    if (hw->devices == 1)
        place_one_device(hw);
    else
        ok = build_devices(ctx, hw, ics, net, err);
    hw_network_free(net);
    return ok;
}

/* ---- accessors (hw.h) ---- */


uint32_t strata_hw_devices(const strata_hw *hw) { return hw->devices; }
uint32_t strata_hw_devices_per_host(const strata_hw *hw) { return hw->devices_per_host; }
uint32_t strata_hw_hosts(const strata_hw *hw) { return hw->hosts; }
uint32_t strata_hw_domain(const strata_hw *hw) { return hw->domain ? hw->domain : 1; }

/* Index of the template named `name` in `templates` (its name at offset 0). */
static int template_index(const GArray *templates, size_t size, const char *name)
{
    for (guint i = 0; i < templates->len; i++)
        if (strcmp(*(const char *const *)(const void *)(templates->data + i * size), name) == 0)
            return (int)i;
    return -1;
}

int strata_hw_memory_base_index(const strata_hw *hw, const char *name)
{
    if (name == NULL)
        return (int)strata_hw_memory(hw, hw->default_memory)->base;
    return template_index(hw->tmems, sizeof(strata_memory_spec), name);
}

int strata_hw_compute_base_index(const strata_hw *hw, const char *name)
{
    if (name == NULL)
        return hw->tunits->len ? 0 : -1;
    return template_index(hw->tunits, sizeof(strata_compute_spec), name);
}

const char *strata_hw_instance_name(const strata_hw *hw, const char *name, uint32_t device, bool unit,
                                    GString *scratch)
{
    (void)scratch;
    if (name && hw->devices > 1) { /* an instance named as such ("hbm@3") is itself */
        int own = unit ? strata_hw_compute_index(hw, name) : strata_hw_memory_index(hw, name);
        if (own >= 0)
            return name;
    }
    int base = unit ? strata_hw_compute_base_index(hw, name) : strata_hw_memory_base_index(hw, name);
    if (base >= 0)
        return unit ? strata_hw_compute(hw, strata_hw_compute_on(hw, (uint32_t)base, device))->name
                    : strata_hw_memory(hw, strata_hw_memory_on(hw, (uint32_t)base, device))->name;
    return name ? name : "compute";
}

bool strata_hw_instance_site(const char *name, uint64_t *site)
{
    const char *at = name ? strrchr(name, '@') : NULL;
    if (!at || !g_ascii_isdigit(at[1]))
        return false;
    *site = g_ascii_strtoull(at + 1, NULL, 10);
    return true;
}

uint32_t strata_hw_memory_on(const strata_hw *hw, uint32_t base, uint32_t device)
{
    if (!hw->mem_at)
        return base;
    const hw_instances *at = &hw->mem_at[base];
    return at->offset + (at->per_host ? device / hw->devices_per_host : device);
}

uint32_t strata_hw_compute_on(const strata_hw *hw, uint32_t base, uint32_t device)
{
    return hw->unit_at ? hw->unit_at[base].offset + device : base;
}
