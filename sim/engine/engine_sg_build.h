/*
 * engine_sg_build.h: builds a SimGrid platform through SimGrid's C++ platform
 * interface (engine_sg_build.cpp), for engine_platform.c: routing zones,
 * hosts, routers, links and explicit routes, in the order they are given.
 *
 * Why not SimGrid's XML loader: SimGrid 3.32 checks each new host's name
 * against every host of every zone already in the platform tree
 * (src/surf/HostImpl.cpp:32, HostImpl::HostImpl -> Host::by_name_or_null ->
 * Engine::host_by_name_or_null, src/s4u/s4u_Engine.cpp:223 ->
 * NetZoneImpl::get_host_by_name_or_null, src/kernel/routing/NetZoneImpl.cpp:344,
 * which walks every child zone when the name is new), and the XML loader
 * attaches each zone to its parent when it opens it; with a zone per device,
 * loading takes time in proportion to zones x hosts (8,960 chips: 418 s). Here
 * the child zones are filled while still detached from the root (each host's
 * check then walks the root alone) and attached once all are filled, so
 * loading is linear in hosts, links and routes. The platform is the one the
 * XML gave: same elements, created in the same order, same routes.
 *
 * Invariants: names are unique (the caller's duty: SimGrid's check sees the
 * root zone only while children are detached); every child zone is created,
 * filled and attached (engine_sg_build_attach) before the routes between
 * zones; the first error is kept and reported by engine_sg_build_finish, and
 * every call after it does nothing.
 */
#ifndef STRATA_ENGINE_SG_BUILD_H
#define STRATA_ENGINE_SG_BUILD_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct engine_sg_build engine_sg_build;

typedef enum { ENGINE_SG_FULL, ENGINE_SG_DIJKSTRA_CACHE } engine_sg_routing;
typedef enum { ENGINE_SG_SHARED, ENGINE_SG_SPLITDUPLEX, ENGINE_SG_FATPIPE } engine_sg_sharing;
typedef enum { ENGINE_SG_NONE, ENGINE_SG_UP, ENGINE_SG_DOWN } engine_sg_direction;

/* One link of a route: a link index (engine_sg_build_link's) and, for a
 * split-duplex link, its direction. */
typedef struct engine_sg_hop {
    uint32_t link;
    engine_sg_direction direction;
} engine_sg_hop;

/* Zone 0 is the root, created here (SimGrid's models come with it): call after
 * simgrid_init() and before anything else makes a zone. */
engine_sg_build *engine_sg_build_new(const char *root, engine_sg_routing routing);
/* A child zone of the root, detached until engine_sg_build_attach; its index. */
uint32_t engine_sg_build_zone(engine_sg_build *b, const char *name, engine_sg_routing routing);
/* A link owned by `zone` (links are global: any route may name it); its index,
 * counting from 0 in creation order. */
uint32_t engine_sg_build_link(engine_sg_build *b, uint32_t zone, const char *name, double bandwidth,
                              double latency, engine_sg_sharing sharing);
void engine_sg_build_host(engine_sg_build *b, uint32_t zone, const char *name, double speed);
void engine_sg_build_router(engine_sg_build *b, uint32_t zone, const char *name);
/* A one-way route in `zone` between two of its hosts or routers. */
void engine_sg_build_route(engine_sg_build *b, uint32_t zone, const char *src, const char *dst,
                           const engine_sg_hop *hops, uint32_t n);
/* Attaches every child zone to the root, in creation order. */
void engine_sg_build_attach(engine_sg_build *b);
/* A one-way route in the root between child zones, from the router gw_src of
 * src_zone to the router gw_dst of dst_zone. */
void engine_sg_build_zone_route(engine_sg_build *b, uint32_t src_zone, uint32_t dst_zone, const char *gw_src,
                                const char *gw_dst, const engine_sg_hop *hops, uint32_t n);
/* The same route as a bypass (NetZoneImpl::add_bypass_route): SimGrid takes
 * it without searching the root's graph. Only for a route that is the
 * root's shortest one whatever the graph (a single link between
 * neighbours). */
void engine_sg_build_zone_bypass(engine_sg_build *b, uint32_t src_zone, uint32_t dst_zone, const char *gw_src,
                                 const char *gw_dst, const engine_sg_hop *hops, uint32_t n);
/* Ends the platform (SimGrid's on_platform_created) and frees b. False, with
 * SimGrid's message in *message (g_free), if any call failed. */
bool engine_sg_build_finish(engine_sg_build *b, char **message);

#ifdef __cplusplus
}
#endif

#endif
