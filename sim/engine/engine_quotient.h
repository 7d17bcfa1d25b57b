/*
 * engine_quotient.h: the engine's side of the classes of devices
 * (spmd/spmd_classes.h): the copies into a class's representative and the
 * routes they take on the quotient platform (the files of sim/engine
 * only).
 *
 * With classes, the expansion hands out the ops of the representatives
 * only, and a collective's copy into a representative q from a device p
 * names the buffer of p's representative and says p (the side table's
 * `from`). Such a copy takes p's true route to q, each link replaced by
 * its orbit's representative (a directed link), each memory port by its
 * representative's, from the port of p's representative: a "sender", a
 * host of its own on the quotient platform whose one route is that one
 * (engine_platform.c builds it in q's zone; SimGrid's routes join hosts,
 * and several senders into q may share p's representative). Senders are
 * found in the engine's first pass, when the platform is not built yet,
 * and kept deduplicated by route.
 *
 * Invariants: a sender's route is a pure function of (from, dst memory);
 * indices are stable, in order of first use; the hops are owned by the
 * quotient.
 */
#ifndef STRATA_ENGINE_QUOTIENT_H
#define STRATA_ENGINE_QUOTIENT_H

#include "hw/hw.h"
#include "results/results.h"
#include "spmd/spmd_classes.h"

typedef struct engine_quotient engine_quotient;

/* NULL when c is NULL. hw and c are borrowed. */
engine_quotient *engine_quotient_new(const strata_hw *hw, const strata_spmd_classes *c);
void engine_quotient_free(engine_quotient *q);
const strata_spmd_classes *engine_quotient_classes(const engine_quotient *q);

/* The sender of a copy into memory dst (a representative's) from device
 * `from` out of its representative's memory src: made when new. False with
 * err when hw has no route from `from` to dst. */
bool engine_quotient_note(engine_quotient *q, uint32_t from, uint32_t src, uint32_t dst, GError **err);
/* The sender noted for (from, dst): its index. */
uint32_t engine_quotient_sender(const engine_quotient *q, uint32_t from, uint32_t dst);
uint32_t engine_quotient_sender_count(const engine_quotient *q);
/* A sender's source memory (its port starts the route), destination and
 * the hops of its route on the quotient (links and ports representatives). */
uint32_t engine_quotient_sender_src(const engine_quotient *q, uint32_t sender);
uint32_t engine_quotient_sender_dst(const engine_quotient *q, uint32_t sender);
void engine_quotient_sender_hops(const engine_quotient *q, uint32_t sender, const strata_hop **hops, uint32_t *n);

/* Whether a device or memory is simulated (its own representative; a
 * host memory where the classes hold the hosts, strata_spmd_classes_hosts,
 * when its host's devices are representatives, else never). */
bool engine_quotient_has_device(const engine_quotient *q, uint32_t device);
bool engine_quotient_has_memory(const engine_quotient *q, uint32_t memory);
/* The representative of a memory (a host memory: its image on the host of
 * its host's first device's representative where the classes hold the
 * hosts, else itself) and unit. */
uint32_t engine_quotient_memory(const engine_quotient *q, uint32_t memory);
uint32_t engine_quotient_unit(const engine_quotient *q, uint32_t unit);

/* The results of a run on the quotient made whole: each memory, link and
 * unit not simulated gets its representative's figures (filled before:
 * the representatives'; others as the engine left them, unused); a
 * full-duplex link whose two directions are one orbit (a symmetry turns
 * it around: a torus axis of 2) twice its representative's bytes, the
 * quotient carrying its orbit's crossings one way. */
void engine_quotient_fill(const engine_quotient *q, strata_results *r);
/* Each simulated stream's row stands for its class: a row per device, named
 * as that device's (spmd_names.h), the rows ordered by the name's base (in
 * order of first appearance) then device. After the timeline is written
 * (its tracks are the simulated streams'). */
void engine_quotient_streams(const engine_quotient *q, strata_results *r);

#endif
