/*
 * engine_sg_build.cpp: SimGrid's C++ platform interface behind a C one
 * (engine_sg_build.h has the why and the invariants). Each call does what
 * SimGrid's XML loader does for the same element (SimGrid 3.32,
 * src/surf/sg_platf.cpp: sg_platf_new_host_begin/_seal, sg_platf_new_link,
 * sg_platf_new_router, sg_platf_new_route; src/surf/xml/surfxml_sax_cb.cpp:
 * STag_surfxml_link___ctn for a link's direction), except that a child zone
 * receives its parent's models at creation and its parent at
 * engine_sg_build_attach, where the loader does both when the zone opens
 * (sg_platf_create_zone -> NetZoneImpl::set_parent).
 *
 * The wall: the only C++ file of strata, and the only one that uses
 * SimGrid's internal API (CMakeLists.txt's layers_folder_graph test lets no
 * other file include simgrid/kernel/). The one internal use is
 * detached_zone: a zone made before its parent needs the parent's models
 * (network, CPU, disk, host), and SimGrid 3.32 hands models to a zone only
 * in NetZoneImpl::set_parent, or to the first zone made; so it calls
 * kernel::routing::NetZoneImpl's set_network_model, set_cpu_pm_model,
 * set_cpu_vm_model, set_disk_model and set_host_model (NetZoneImpl.hpp).
 * Everything else goes through s4u::NetZone, whose calls forward to the same
 * NetZoneImpl methods (src/s4u/s4u_Netzone.cpp), so the platform is the
 * same. tests/test_engine_sg_build.c, beside it, checks that the routes
 * SimGrid computes on this platform are the ones strata's hardware model
 * gives (hw_route.c, hw_site.c) on every shipped multi-device machine.
 */
#include "engine/engine_sg_build.h"

#include <glib.h>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <simgrid/version.h>

#include <exception>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint; /* opaque here: only passed back to SimGrid */

struct engine_sg_build {
    /* strata's top zone: zones[0], or an empty zone above it (SimGrid 3:
     * the root zone; SimGrid 4: a child of the engine's own root) */
    sg4::NetZone *top;
    std::vector<sg4::NetZone *> zones;   /* [0]: the root of the routes */
    std::vector<sg4::LinkInRoute> links; /* by index; direction NONE */
    std::string error;                   /* the first failure's message */
};

static sg4::NetZone *new_zone(const char *name, engine_sg_routing routing)
{
    return routing == ENGINE_SG_FULL ? sg4::create_full_zone(name) : sg4::create_dijkstra_zone(name, true);
}

/* A zone detached from any parent, with the models NetZoneImpl::set_parent
 * would copy from `from`: strata's one use of SimGrid's internal API (see
 * the header comment). */
static sg4::NetZone *detached_zone(const char *name, engine_sg_routing routing, const sg4::NetZone *from)
{
    sg4::NetZone *zone = new_zone(name, routing);
    simgrid::kernel::routing::NetZoneImpl *z = zone->get_impl();
    const simgrid::kernel::routing::NetZoneImpl *f = from->get_impl();
    z->set_network_model(f->get_network_model());
    z->set_cpu_pm_model(f->get_cpu_pm_model());
    z->set_cpu_vm_model(f->get_cpu_vm_model());
    z->set_disk_model(f->get_disk_model());
    z->set_host_model(f->get_host_model());
    return zone;
}

/* Runs f unless an earlier call failed; keeps the first failure. */
template <typename F> static void guarded(engine_sg_build *b, F f)
{
    if (!b->error.empty())
        return;
    try {
        f();
    } catch (const std::exception &e) {
        b->error = e.what();
        if (b->error.empty())
            b->error = "SimGrid refused the platform";
    }
}

static NetPoint *point(const char *name)
{
    NetPoint *p = sg4::Engine::get_instance()->netpoint_by_name_or_null(name);
    if (!p)
        throw std::invalid_argument(std::string("no host or router named '") + name + "'");
    return p;
}

static std::vector<sg4::LinkInRoute> hop_list(const engine_sg_build *b, const engine_sg_hop *hops, uint32_t n)
{
    std::vector<sg4::LinkInRoute> out;
    out.reserve(n);
    for (uint32_t i = 0; i < n; i++) {
        if (hops[i].link >= b->links.size())
            throw std::invalid_argument("a route names a link that was not created");
        const sg4::Link *l = b->links[hops[i].link].get_link();
        auto d = hops[i].direction == ENGINE_SG_UP     ? sg4::LinkInRoute::Direction::UP
                 : hops[i].direction == ENGINE_SG_DOWN ? sg4::LinkInRoute::Direction::DOWN
                                                       : sg4::LinkInRoute::Direction::NONE;
        out.emplace_back(l, d);
    }
    return out;
}

extern "C" engine_sg_build *engine_sg_build_new(const char *root, engine_sg_routing routing)
{
    auto *b = new engine_sg_build;
    guarded(b, [&] {
#if SIMGRID_VERSION_MAJOR >= 4
        /* SimGrid 4 makes the root zone itself (the engine's own,
         * Engine::get_netzone_root) and refuses a second one, so strata's
         * top zone is a child of it; the rest is as below. Untested: this
         * compiles only outside the tested range (CMakeLists.txt), and
         * scripts/simgrid-newest.sh's report is in docs/engine.md. */
        sg4::NetZone *world = sg4::Engine::get_instance()->get_netzone_root();
        if (routing == ENGINE_SG_FULL) {
            b->top = world->add_netzone_full(root);
            b->zones.push_back(b->top);
            return;
        }
        b->top = world->add_netzone_empty(root);
        std::string inner0 = std::string(root) + ":routes";
        b->zones.push_back(detached_zone(inner0.c_str(), routing, b->top));
        return;
#endif
        if (routing == ENGINE_SG_FULL) { /* the first zone becomes SimGrid's root and sets up its models */
            b->top = new_zone(root, routing);
            b->zones.push_back(b->top);
            return;
        }
        /* Zones under a root of routes that SimGrid's root does not reach
         * until engine_sg_build_finish: SimGrid seals a zone by listing the
         * hosts of its whole platform (NetZoneImpl::seal ->
         * NetZoneImpl::get_all_hosts -> Engine::get_filtered_hosts,
         * src/kernel/routing/NetZoneImpl.cpp:721 and :170), zones x hosts
         * again, unless each zone is sealed while the platform that root
         * reaches is empty. */
        b->top = sg4::create_empty_zone(root);
        std::string inner = std::string(root) + ":routes";
        b->zones.push_back(detached_zone(inner.c_str(), routing, b->top));
    });
    return b;
}

extern "C" uint32_t engine_sg_build_zone(engine_sg_build *b, const char *name, engine_sg_routing routing)
{
    guarded(b, [&] { b->zones.push_back(detached_zone(name, routing, b->zones.at(0))); });
    return b->zones.empty() ? 0 : (uint32_t)(b->zones.size() - 1);
}

extern "C" uint32_t engine_sg_build_link(engine_sg_build *b, uint32_t zone, const char *name, double bandwidth,
                                         double latency, engine_sg_sharing sharing)
{
    guarded(b, [&] {
        sg4::NetZone *z = b->zones.at(zone);
        sg4::Link *l;
        if (sharing == ENGINE_SG_SPLITDUPLEX) {
            l = z->create_split_duplex_link(name, bandwidth);
        } else {
            l = z->create_link(name, bandwidth);
            l->set_sharing_policy(sharing == ENGINE_SG_FATPIPE ? sg4::Link::SharingPolicy::FATPIPE
                                                               : sg4::Link::SharingPolicy::SHARED);
        }
        l->set_latency(latency);
        l->seal();
        b->links.emplace_back(l);
    });
    return b->links.empty() ? 0 : (uint32_t)(b->links.size() - 1);
}

extern "C" void engine_sg_build_host(engine_sg_build *b, uint32_t zone, const char *name, double speed)
{
    guarded(b, [&] { b->zones.at(zone)->create_host(name, speed)->seal(); });
}

extern "C" void engine_sg_build_router(engine_sg_build *b, uint32_t zone, const char *name)
{
    guarded(b, [&] { b->zones.at(zone)->create_router(name); });
}

extern "C" void engine_sg_build_route(engine_sg_build *b, uint32_t zone, const char *src, const char *dst,
                                      const engine_sg_hop *hops, uint32_t n)
{
    guarded(b, [&] {
        b->zones.at(zone)->add_route(point(src), point(dst), nullptr, nullptr, hop_list(b, hops, n), false);
    });
}

extern "C" void engine_sg_build_attach(engine_sg_build *b)
{
    guarded(b, [&] {
        for (size_t i = 1; i < b->zones.size(); i++) {
            b->zones[i]->set_parent(b->zones[0]);
            /* complete: sealed now, while SimGrid's root reaches none of its hosts */
            b->zones[i]->seal();
        }
    });
}

extern "C" void engine_sg_build_zone_route(engine_sg_build *b, uint32_t src_zone, uint32_t dst_zone,
                                           const char *gw_src, const char *gw_dst, const engine_sg_hop *hops,
                                           uint32_t n)
{
    guarded(b, [&] {
        b->zones.at(0)->add_route(b->zones.at(src_zone)->get_netpoint(), b->zones.at(dst_zone)->get_netpoint(),
                                  point(gw_src), point(gw_dst), hop_list(b, hops, n), false);
    });
}

extern "C" void engine_sg_build_zone_bypass(engine_sg_build *b, uint32_t src_zone, uint32_t dst_zone,
                                            const char *gw_src, const char *gw_dst, const engine_sg_hop *hops,
                                            uint32_t n)
{
    guarded(b, [&] {
        b->zones.at(0)->add_bypass_route(b->zones.at(src_zone)->get_netpoint(), b->zones.at(dst_zone)->get_netpoint(),
                                         point(gw_src), point(gw_dst), hop_list(b, hops, n));
    });
}

extern "C" bool engine_sg_build_finish(engine_sg_build *b, char **message)
{
    guarded(b, [&] {
        if (b->top != b->zones.at(0))
            b->zones[0]->set_parent(b->top);
        sg4::Engine::on_platform_created();
    });
    bool ok = b->error.empty();
    if (!ok && message)
        *message = g_strdup(b->error.c_str());
    delete b;
    return ok;
}
