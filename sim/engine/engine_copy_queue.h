/*
 * engine_copy_queue.h: a GPU's copy engines, the DMA engines that carry
 * its copies over a host link (CUDA C++ Programming Guide, "Overlap of
 * Data Transfer and Kernel Execution" and "Concurrent Data Transfers": a
 * device reports how many in cudaDeviceProp.asyncEngineCount, and copies
 * given to one engine run in order).
 *
 * A link with `copy_engines = N` (hw.h) has N engines in each direction:
 * a copy whose route crosses it takes one engine of the direction it
 * crosses it in for the whole copy (its latency, its flow and, for a
 * pageable copy, the staged pipeline whose DMA it is), so at most N copies
 * cross the link one way at once, each at the rate the flow model gives
 * it; the others wait, first come, first served, the wait counting in the
 * copy's time (its span starts when its stream reached it). Copies in the
 * opposite direction take the other direction's engines and never wait on
 * these. A link without copy_engines has no queue: every copy shares its
 * bandwidth as before. The engine queues only plain copies (cudaMemcpyAsync),
 * not a collective's steps: NCCL moves those with its own kernels ("a single
 * kernel handling both communication and computation operations", NCCL
 * User Guide, "Overview") and the NIC's DMA, not the copy engines.
 *
 * Invariants:
 *  1. per (link, direction): 0 <= engines in use <= N, and a copy waits
 *     only while all N are in use;
 *  2. first come, first served: a freed engine passes to the copy that
 *     has waited longest (at equal dates, the order in which the streams
 *     reached their copies, SimGrid's deterministic actor order);
 *  3. no deadlock between routes that cross several such links: a copy
 *     takes its engines in (link, direction) order and frees them all at
 *     its end.
 *
 * Blocks the calling SimGrid actor (sg_actor_suspend / sg_actor_resume);
 * call from a stream's actor only.
 */
#ifndef STRATA_ENGINE_COPY_QUEUE_H
#define STRATA_ENGINE_COPY_QUEUE_H

#include <stdint.h>
#include "hw/hw.h"

typedef struct engine_copy_queues engine_copy_queues;

/* The queues of hw's links that give copy_engines; NULL when none does
 * (the calls below take NULL and do nothing). */
engine_copy_queues *engine_copy_queues_new(const strata_hw *hw);
void engine_copy_queues_free(engine_copy_queues *q);

/* Takes, for a copy over hops[0..n) that its stream reached at t0, one
 * engine of every copy-engine link it crosses, in the direction it crosses
 * it, waiting its turn for each; returns the date it holds them all (t0
 * when it did not wait). */
double engine_copy_queues_take(engine_copy_queues *q, const strata_hop *hops, uint32_t n, double t0);
/* Gives back what engine_copy_queues_take(q, hops, n) took; the longest
 * waiter of each queue, if any, takes the engine at once. */
void engine_copy_queues_give(engine_copy_queues *q, const strata_hop *hops, uint32_t n);

#endif
