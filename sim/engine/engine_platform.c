/*
 * engine_platform.c: the SimGrid platform generated from the hardware model.
 *
 * Mapping (one Full routing zone, every route explicit and one-way):
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
 * Configuration: CM02 with cross-traffic off, TCP gamma effectively infinite and
 * bandwidth/latency factors 1, so a lone transfer of B bytes takes
 * sum(latency) + B / min(bandwidth) exactly; SimGrid's logs are silenced.
 *
 * Invariants: the XML is a pure function of the hardware model (numbers printed
 * with %.17g, names escaped), so the same .ini gives the same platform.
 */
#include "engine/engine_platform.h"
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "core/error.h"

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

/* Appends an escaped attribute value. */
static void put_escaped(GString *x, const char *text)
{
    char *e = g_markup_escape_text(text, -1);
    g_string_append(x, e);
    g_free(e);
}

static void put_link(GString *x, const char *prefix, const char *name, double bandwidth,
                     double latency, const char *sharing)
{
    g_string_append_printf(x, "  <link id=\"%s", prefix);
    put_escaped(x, name);
    g_string_append_printf(x, "\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" sharing_policy=\"%s\"/>\n",
                           bandwidth, latency, sharing);
}

static void put_ctn(GString *x, const char *prefix, const char *name, const char *direction)
{
    g_string_append_printf(x, "    <link_ctn id=\"%s", prefix);
    put_escaped(x, name);
    if (direction)
        g_string_append_printf(x, "\" direction=\"%s\"/>\n", direction);
    else
        g_string_append(x, "\"/>\n");
}

static void put_route_open(GString *x, const char *src, const char *dst)
{
    g_string_append(x, "  <route src=\"");
    put_escaped(x, src);
    g_string_append(x, "\" dst=\"");
    put_escaped(x, dst);
    g_string_append(x, "\" symmetrical=\"NO\">\n");
}

/* A route from the host `src` to `dst` (both taken) through the port of
 * `memory`, then the link PREFIX NAME: a copy inside a memory (to its twin,
 * through its port again) or an operand read (to a unit). */
static void put_two_link_route(GString *x, char *src, char *dst, const char *memory, const char *prefix,
                               const char *name)
{
    put_route_open(x, src, dst);
    put_ctn(x, "port:", memory, NULL);
    put_ctn(x, prefix, name, NULL);
    g_string_append(x, "  </route>\n");
    g_free(src);
    g_free(dst);
}

static void put_host(GString *x, const char *name, double speed)
{
    g_string_append(x, "  <host id=\"");
    put_escaped(x, name);
    g_string_append_printf(x, "\" speed=\"%.17gf\"/>\n", speed);
}

/* Route between two distinct memories, or nothing when hw has none. */
static void put_memory_route(GString *x, const strata_hw *hw, uint32_t a, uint32_t b)
{
    const strata_hop *hops = NULL;
    uint32_t n = 0;
    GError *err = NULL;
    if (!strata_hw_route(hw, a, b, &hops, &n, &err)) {
        g_clear_error(&err);
        return;
    }
    const strata_memory_spec *ma = strata_hw_memory(hw, a);
    const strata_memory_spec *mb = strata_hw_memory(hw, b);
    char *src = engine_memory_host_name(ma);
    char *dst = engine_memory_host_name(mb);
    put_route_open(x, src, dst);
    put_ctn(x, "port:", ma->name, NULL);
    for (uint32_t i = 0; i < n; i++) {
        const strata_link_spec *l = strata_hw_link(hw, hops[i].link);
        put_ctn(x, "link:", l->name, l->full_duplex ? (hops[i].forward ? "UP" : "DOWN") : NULL);
        if (hops[i].port != STRATA_HW_NO_MEMORY)
            put_ctn(x, "port:", strata_hw_memory(hw, hops[i].port)->name, NULL);
    }
    g_string_append(x, "  </route>\n");
    g_free(src);
    g_free(dst);
}

char *engine_platform_xml(const strata_hw *hw)
{
    GString *x = g_string_new("<?xml version='1.0'?>\n"
                              "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                              "<platform version=\"4.1\">\n<zone id=\"strata\" routing=\"Full\">\n");
    uint32_t n_mem = strata_hw_memory_count(hw);
    uint32_t n_link = strata_hw_link_count(hw);
    uint32_t n_unit = strata_hw_compute_count(hw);
    for (uint32_t i = 0; i < n_mem; i++) {
        const strata_memory_spec *m = strata_hw_memory(hw, i);
        char *h = engine_memory_host_name(m);
        char *t = engine_memory_twin_name(m);
        put_host(x, h, 1.0);
        put_host(x, t, 1.0);
        g_free(h);
        g_free(t);
    }
    for (uint32_t i = 0; i < n_unit; i++) {
        const strata_compute_spec *u = strata_hw_compute(hw, i);
        char *h = engine_unit_host_name(u);
        put_host(x, h, u->flops > 0 ? u->flops : 1.0);
        g_free(h);
    }
    for (uint32_t i = 0; i < n_mem; i++) {
        const strata_memory_spec *m = strata_hw_memory(hw, i);
        put_link(x, "port:", m->name, m->bandwidth, 0.0, "SHARED");
    }
    for (uint32_t i = 0; i < n_link; i++) {
        const strata_link_spec *l = strata_hw_link(hw, i);
        put_link(x, "link:", l->name, l->bandwidth, l->latency, l->full_duplex ? "SPLITDUPLEX" : "SHARED");
    }
    for (uint32_t i = 0; i < n_unit; i++) {
        const strata_compute_spec *u = strata_hw_compute(hw, i);
        const strata_memory_spec *m = strata_hw_memory(hw, u->operands);
        put_link(x, "operand:", u->name, m->bandwidth, m->latency, "SHARED");
    }
    for (uint32_t a = 0; a < n_mem; a++) {
        for (uint32_t b = 0; b < n_mem; b++) {
            if (a != b)
                put_memory_route(x, hw, a, b);
        }
        const strata_memory_spec *m = strata_hw_memory(hw, a);
        put_two_link_route(x, engine_memory_host_name(m), engine_memory_twin_name(m), m->name, "port:", m->name);
    }
    for (uint32_t i = 0; i < n_unit; i++) {
        const strata_compute_spec *u = strata_hw_compute(hw, i);
        const strata_memory_spec *m = strata_hw_memory(hw, u->operands);
        put_two_link_route(x, engine_memory_host_name(m), engine_unit_host_name(u), m->name, "operand:", u->name);
    }
    g_string_append(x, "</zone>\n</platform>\n");
    return g_string_free(x, FALSE);
}

bool engine_platform_load(const strata_hw *hw, GError **err)
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
    char *argv[G_N_ELEMENTS(config)];
    for (const char *const *c = config; *c; c++)
        argv[argc++] = g_strdup(*c);
    argv[argc] = NULL;
    char *owned[G_N_ELEMENTS(config)];
    memcpy(owned, argv, sizeof(argv));
    simgrid_init(&argc, argv);
    for (size_t i = 0; owned[i]; i++)
        g_free(owned[i]);

    char *xml = engine_platform_xml(hw);
    char *path = NULL;
    int fd = g_file_open_tmp("strata-platform-XXXXXX.xml", &path, err);
    if (fd < 0) {
        g_free(xml);
        return false;
    }
    size_t len = strlen(xml);
    bool written = write(fd, xml, len) == (ssize_t)len;
    close(fd);
    g_free(xml);
    if (!written) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot write the SimGrid platform", path);
        unlink(path);
        g_free(path);
        return false;
    }
    simgrid_load_platform(path);
    unlink(path);
    g_free(path);
    return true;
}

bool engine_hosts_lookup(const strata_hw *hw, engine_hosts *h, GError **err)
{
    uint32_t n_mem = strata_hw_memory_count(hw), n_unit = strata_hw_compute_count(hw);
    h->mem = g_new0(sg_host_t, n_mem);
    h->twin = g_new0(sg_host_t, n_mem);
    h->unit = g_new0(sg_host_t, n_unit ? n_unit : 1);
    for (uint32_t i = 0; i < n_mem; i++) {
        char *m = engine_memory_host_name(strata_hw_memory(hw, i));
        char *t = engine_memory_twin_name(strata_hw_memory(hw, i));
        h->mem[i] = sg_host_by_name(m);
        h->twin[i] = sg_host_by_name(t);
        g_free(m);
        g_free(t);
        if (!h->mem[i] || !h->twin[i])
            goto missing;
    }
    for (uint32_t i = 0; i < n_unit; i++) {
        char *u = engine_unit_host_name(strata_hw_compute(hw, i));
        h->unit[i] = sg_host_by_name(u);
        g_free(u);
        if (!h->unit[i])
            goto missing;
    }
    return true;
missing:
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "the generated SimGrid platform lacks a host");
    return false;
}

void engine_hosts_clear(engine_hosts *h)
{
    g_free(h->mem);
    g_free(h->twin);
    g_free(h->unit);
    h->mem = h->twin = h->unit = NULL;
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
