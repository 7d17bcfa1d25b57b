/*
 * algo_nccl_ring.c: the nccl-ring algorithm (coll_algo.h): all-reduce as
 * NCCL's ring kernel on its Simple protocol runs it over NVLink (a FLAT
 * layout).
 *
 * The buffer in loops of channels x n chunks (coll_sched.h's
 * STRATA_COLL_NCCL_ defaults, or the shape's channels, chunk_bytes and
 * slices), each loop a ring all-reduce whose 2(n-1) steps move every chunk
 * in `slices` slices, one round per slice; each slice is followed by its
 * handshake (a flag write to the receiver), reduced as it arrives (fused),
 * and crosses the link with NVLink's packet overhead: its copy carries 5/4
 * of its bytes, at most the buffer's size.
 */
#include "collective/coll_kit.h"

static uint32_t nccl_ring_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    uint64_t b = shape->in_bytes;
    guint from = s->steps->len;
    uint32_t rounds = coll_ring_loops(s, b, shape->channels ? shape->channels : STRATA_COLL_NCCL_CHANNELS,
                                      shape->chunk_bytes ? shape->chunk_bytes : STRATA_COLL_NCCL_CHUNK, 0,
                                      shape->slices ? shape->slices : STRATA_COLL_NCCL_SLICES, STRATA_COLL_WIRE_NUM,
                                      STRATA_COLL_WIRE_DEN, true);
    for (guint i = from; i < s->steps->len; i++) {
        strata_coll_step *st = &g_array_index(s->steps, strata_coll_step, i);
        st->wire_bytes = MIN(st->wire_bytes, b);
    }
    return rounds;
}

const strata_coll_algo_ops strata_coll_ops_nccl_ring = {.schedule = nccl_ring_schedule};
