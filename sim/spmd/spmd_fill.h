/*
 * spmd_fill.h: when the last of a round's copies ends, the copies started
 * together and sharing their links as the engine's SimGrid model shares
 * them (progressive filling); shared by the files of sim/spmd only
 * (spmd_phase.c's round time for FAST's rounds of mixed route latency,
 * and for rounds whose shared links carry unequal bytes).
 *
 * The model, read from SimGrid 3.32's src/surf/network_cm02.cpp as the
 * engine configures it (engine_platform.c: CM02, weight-S 0, TCP-gamma
 * out of reach, no cross-traffic): a copy waits its start (its fixed
 * delay, then its route's latency) without taking a share, then flows at
 * the max-min fair rate of the system whose variables have penalty 1 (the
 * default, equal sharing: the engine waits the latency itself and gives
 * SimGrid routes of latency 0, engine_platform.h) or, with
 * latency_penalty ([hardware] flow_sharing = latency), penalty its route
 * latency (1 when that is 0): on a saturated link direction, the copies
 * bottlenecked there get rates in inverse proportion to their penalties.
 * When a copy starts or ends, the rates are solved again (LMM's
 * progressive filling: the level of the link whose capacity left over its
 * copies' weights is least saturates first, its copies' rates are fixed,
 * and so on). The round ends when its last copy does.
 *
 * Rounds as a pipeline (spmd_fill_rounds): k rounds of the same copies,
 * each copy's round r starting when the step schedule's waits (spmd.c)
 * let it: its sender's and its receiver's round r - 1 ended, a device's
 * round ending once the copies into it and into every device it sends to
 * have. Copies of different rounds then share the links as above; where
 * the rounds drift apart (a ring over a 3D torus, its hot link's copies
 * from far apart on the ring) they meet there at other dates than from a
 * common start. The engine's SimGrid solves the sharing lazily (CM02's
 * default `network/optim:Lazy`), which on some sets of simultaneous
 * copies gives rates this max-min does not (docs/classes.md, "Rounds that
 * start apart"): the filler follows the model, not that.
 *
 * Invariants: copies and links are those added since the last clear; a
 * link's key is below the count the filler was made for, and a key added
 * twice keeps its first bandwidth (the caller's keys name one link
 * direction of one model). Pure arithmetic: no state outlives a run but
 * reused scratch.
 */
#ifndef STRATA_SPMD_FILL_H
#define STRATA_SPMD_FILL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct spmd_fill spmd_fill;

/* A filler for link keys 0 .. keys - 1; with latency_penalty, each copy's
 * penalty is its route latency (CM02's), else 1 (equal sharing). */
spmd_fill *spmd_fill_new(uint32_t keys, bool latency_penalty);
void spmd_fill_free(spmd_fill *f);
/* Forgets the copies and links added (a new round). */
void spmd_fill_clear(spmd_fill *f);
/* A copy of `bytes` that waits `delay_s`, then its route's `latency_s`,
 * then flows over the link directions spmd_fill_link() adds to it. */
void spmd_fill_copy(spmd_fill *f, double delay_s, double latency_s, double bytes);
/* A link direction `key` (of `bandwidth` B/s) that the copy added last crosses. */
void spmd_fill_link(spmd_fill *f, uint32_t key, double bandwidth);
/* The copy added last is a reduce step's: its receiver then reduces what
 * it received for `after_s` (its reduction alone), which its round waits
 * for, as the step schedule's lanes do (spmd.c: the round's record follows
 * the lane's reduction); its links are free from the copy's end. */
void spmd_fill_after(spmd_fill *f, double after_s);
/* The date (s, from the round's start) the last copy ends (and its
 * reduction, spmd_fill_after); with `ends`,
 * each copy's, in the order added. 0 with no copy. Once per round: clear
 * before adding the next round's copies. */
double spmd_fill_run(spmd_fill *f, double *ends);
/* The devices the copy added last goes from and to (src != dst), for
 * spmd_fill_rounds. */
void spmd_fill_devices(spmd_fill *f, uint32_t src, uint32_t dst);
/* The date (s) the last of k rounds of the copies added ends, each copy's
 * round r starting when its sender's and its receiver's round r - 1 have
 * ended, as the step schedule's waits order them (spmd.c): a device's round
 * ends when the copies into it and into each device it sends to have
 * ended (round -1: at 0). Within each instance the copies share their
 * links as spmd_fill_run's do. Simulates min(k, max(most, 2)) rounds; the
 * rest at the pace of the second half of those. Every copy has devices.
 * With dev_end (an entry per device up to the largest a copy names), each
 * device's end of its k-th round: as far before the last as its m-th
 * round's end was before the latest device's (the ring's drift, which the
 * waits keep once the lateness has gone round: docs/classes.md); 0 for a
 * device no copy touches. */
double spmd_fill_rounds(spmd_fill *f, uint32_t k, uint32_t most, double *dev_end);

#endif
