/*
 * engine_platform.h: the SimGrid platform of a hardware model (engine_platform.c)
 * and the hosts and amounts activities on it use: shared by the engine
 * (engine.c) and the bare baseline of bench/bench_engine, so that both issue
 * exactly the same activities.
 *
 * Invariants: the hosts are looked up once after the platform is loaded;
 * the amount of a compute is its flops scaled from the peak of its first
 * operand's dtype to the unit host's speed (the unit's base FLOP/s), so an
 * execution of it lasts flops / peak(dtype) when alone.
 */
#ifndef STRATA_ENGINE_PLATFORM_H
#define STRATA_ENGINE_PLATFORM_H

#include <simgrid/forward.h>
#include "engine/engine_quotient.h"
#include "hw/hw.h"

/* Host names used in the generated platform. */
char *engine_memory_host_name(const strata_memory_spec *m);      /* "mem:NAME" */
char *engine_memory_twin_name(const strata_memory_spec *m);      /* "mem:NAME:twin" (D2D target) */
char *engine_unit_host_name(const strata_compute_spec *u);       /* "unit:NAME" */
char *engine_sender_host_name(uint32_t sender);                 /* "sender:I" (classes) */

/* Refuses (STRATA_ERROR_INPUT, with the figure) a model whose platform is
 * more than this machine can load: checked on the model, before anything
 * of the platform is built. The limits (measured with SimGrid 3.32 on a
 * 2-core machine, docs/multi-device.md):
 *  - zones: the root routes between zones by Dijkstra and keeps, for each
 *    zone a route leaves from, 8 bytes per zone (DijkstraZone's route
 *    cache): 2^14 zones, 2 GiB when every zone sends (a full v5p pod,
 *    8,960 chips and 2,240 hosts: 11,201 zones, 0.8 GiB from its chips);
 *  - links (SimGrid's state per link: a 1,024-device `topology = full`,
 *    523,776 links, takes 1.1 GB and more than 60 s for one copy);
 *  - links on the routes between sites, padding included (each one is an
 *    entry of SimGrid's route);
 *  - cells of the sites' routing tables (SimGrid's Full zone holds the
 *    square of its hosts).
 * Loading itself is linear in hosts, links and routes (engine_sg_build.h). */
#define ENGINE_PLATFORM_MAX_ZONES (1ull << 14)
#define ENGINE_PLATFORM_MAX_EDGE_LINKS (1ull << 23)
#define ENGINE_PLATFORM_MAX_LINKS (1ull << 18)
#define ENGINE_PLATFORM_MAX_FULL_CELLS (1ull << 24)
bool engine_platform_check(const strata_hw *hw, GError **err);
/* simgrid_init() with the engine's configuration, then load the platform. */
bool engine_platform_load(const strata_hw *hw, GError **err);
/* The same, with classes (q not NULL): the quotient's platform, its zones
 * the representatives' sites with their senders (engine_quotient.h). */
bool engine_platform_load_for(const strata_hw *hw, const engine_quotient *q, GError **err);

/* The hosts of the loaded platform, by memory and unit index. */
typedef struct engine_hosts {
    sg_host_t *mem, *twin, *unit;
    sg_host_t *sender; /* with classes: by sender (engine_quotient.h) */
} engine_hosts;

bool engine_hosts_lookup(const strata_hw *hw, engine_hosts *h, GError **err);
/* With classes: the representatives' hosts (others NULL) and the senders'. */
bool engine_hosts_lookup_for(const strata_hw *hw, const engine_quotient *q, engine_hosts *h, GError **err);
void engine_hosts_clear(engine_hosts *h);
/* Where a copy from memory src to memory dst lands: dst's host, or src's twin. */
sg_host_t engine_copy_target(const engine_hosts *h, uint32_t src, uint32_t dst);
/* How long a transfer over a route whose links' latencies sum to
 * `latency` (s) waits before its flow starts: `latency` under the default
 * equal sharing, whose platform gives SimGrid links of latency 0, so that
 * every flow has CM02's sharing penalty 1 and flows on a link get equal
 * shares (SimGrid 3.32 src/surf/network_cm02.cpp:431 sets a flow's penalty
 * to its route latency, :393-405 and :190 apply it once the latency is
 * paid; a flow of latency 0 keeps penalty 1); 0 under [hardware]
 * flow_sharing = latency, whose links carry their latency and SimGrid
 * charges it (hw.h: strata_hw_flow_sharing_latency). A lone transfer of B
 * bytes ends at latency + B / bottleneck either way. */
double engine_flow_wait(const strata_hw *hw, double latency);
/* The amount to execute on a unit's host for `flops` on operands of `dtype`
 * (0: no execution). */
double engine_compute_amount(const strata_hw *hw, uint32_t unit, strata_dtype dtype, double flops);

#endif
