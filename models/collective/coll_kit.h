/*
 * coll_kit.h: what the algorithms' files (algo_*.c) build their schedules
 * from, shared by models/collective only: the schedule being built and the
 * building blocks several algorithms use (coll_kit.c).
 *
 *   coll_add         appends a step (none of 0 bytes);
 *   coll_chunk_off   where chunk i of d of a segment of len bytes starts;
 *   coll_torus       a ring along each dimension of the layout in turn
 *                    (reduce-scatter over dims 0..m-1, all-gather back
 *                    m-1..0), on a segment, in one direction and lane; one
 *                    dimension is a ring; with fold, each ring's identical
 *                    rounds written as one step that stands for them;
 *   coll_rings       the ring family's whole collective: coll_torus over
 *                    the buffer (all-reduce, all-gather, reduce-scatter);
 *                    with bidir, a ring each way: an all-reduce's on half
 *                    the buffer each, the others' on half of every chunk;
 *   coll_tree        binomial reduce to rank 0, then broadcast;
 *   coll_ring_loops  NCCL's ring all-reduce kernel: loops of channels x n
 *                    chunks, 2(n-1) steps each, a round per slice.
 *
 * Invariants: steps are appended in any order of rounds (the table sorts
 * them, stably); no step has 0 bytes; chunk i of a segment of L bytes over
 * d is [L*i/d, L*(i+1)/d).
 */
#ifndef STRATA_COLL_KIT_H
#define STRATA_COLL_KIT_H

#include "collective/coll_algo.h"

struct strata_coll_sched {
    GArray *steps;                         /* strata_coll_step */
    uint32_t n;                            /* ranks */
    uint32_t m;                            /* dims of the layout, all > 1 */
    uint32_t dims[STRATA_COLL_MAX_DIMS];
    uint32_t stride[STRATA_COLL_MAX_DIMS];
    strata_op_kind kind;
    uint32_t parts;                        /* 1, or 2: a ring per half chunk */
    bool fold;                             /* shape->fold, for a row that folds */
};

void coll_add(strata_coll_sched *s, const strata_coll_step *st);
uint64_t coll_chunk_off(uint64_t len, uint32_t d, uint32_t i);
/* Reduce-scatter (rs) and then all-gather (ag) over [base, base+len) in
 * direction dir (+1, -1) on `lane`, from round0; returns the rounds. */
uint32_t coll_torus(strata_coll_sched *s, uint64_t base, uint64_t len, int dir, uint32_t lane, uint32_t round0,
                    bool rs, bool ag);
/* The ring family on the layout: one direction, or both (bidir); returns the rounds. */
uint32_t coll_rings(strata_coll_sched *s, uint64_t in_bytes, bool bidir);
/* Binomial tree all-reduce of `bytes`; returns the rounds. */
uint32_t coll_tree(strata_coll_sched *s, uint64_t bytes);
/* NCCL's ring all-reduce on [0, b): every copy carrying num/den of its
 * bytes and, with handshake, a flag after it; returns the rounds. */
uint32_t coll_ring_loops(strata_coll_sched *s, uint64_t b, uint64_t channels, uint64_t chunk, uint32_t slices,
                         uint64_t num, uint64_t den, bool handshake);

#endif
