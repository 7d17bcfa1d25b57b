/*
 * algo_direct.c: the direct algorithm (coll_algo.h), every collective.
 *
 * Every pair at once: lane (q - r) mod n carries rank r's data to rank q.
 * All-reduce: round 0 reduces chunk q of every rank at its owner q, round
 * 1 sends it back out; all-gather: IN of r to chunk r of OUT; all-to-all:
 * chunk q of r's IN to chunk r of q's OUT; reduce-scatter: chunk q of IN
 * to q, summed into OUT after q's own chunk is copied there (round 0);
 * collective-permute: rank r's IN to rank r + shift's OUT.
 */
#include "collective/coll_kit.h"

static uint32_t direct_schedule(strata_coll_sched *s, const strata_coll_shape *shape)
{
    uint64_t in_bytes = shape->in_bytes;
    int32_t shift = shape->shift;
    uint32_t n = s->n;
    switch (s->kind) {
    case STRATA_OP_ALL_REDUCE:
        for (uint32_t phase = 0; phase < 2; phase++)
            for (uint32_t q = 0; q < n; q++)
                for (uint32_t r = 0; r < n; r++) {
                    uint32_t owner = phase == 0 ? q : r; /* the chunk reduced at its owner, then sent out */
                    uint64_t off = coll_chunk_off(in_bytes, n, owner);
                    strata_coll_step st = {.round = phase, .lane = (q + n - r) % n, .src = r, .dst = q,
                                           .src_off = off, .dst_off = off, .own_off = off, .reduce = phase == 0,
                                           .bytes = coll_chunk_off(in_bytes, n, owner + 1) - off};
                    if (r != q)
                        coll_add(s, &st);
                }
        return 2;
    case STRATA_OP_COLLECTIVE_PERMUTE:
        for (uint32_t r = 0; r < n; r++) {
            int64_t to = ((int64_t)r + shift) % (int64_t)n;
            strata_coll_step st = {.src = r, .dst = (uint32_t)(to < 0 ? to + n : to), .src_buf = STRATA_COLL_IN,
                                   .dst_buf = STRATA_COLL_OUT, .bytes = in_bytes};
            coll_add(s, &st);
        }
        return 1;
    default: {
        /* all-gather: IN of r to chunk r of OUT; all-to-all: chunk q of r's
         * IN to chunk r of q's OUT; reduce-scatter: chunk q of IN to q,
         * summed into OUT after q's own chunk is copied there (round 0). */
        bool rs = s->kind == STRATA_OP_REDUCE_SCATTER;
        uint64_t c = s->kind == STRATA_OP_ALL_GATHER ? in_bytes : in_bytes / n;
        for (uint32_t q = 0; q < n; q++)
            for (uint32_t r = 0; r < n; r++) {
                bool ag = s->kind == STRATA_OP_ALL_GATHER;
                strata_coll_step st = {.round = rs && r != q ? 1 : 0, .lane = (q + n - r) % n, .src = r, .dst = q,
                                       .src_buf = STRATA_COLL_IN, .dst_buf = STRATA_COLL_OUT,
                                       .own_buf = STRATA_COLL_OUT,
                                       .src_off = ag ? 0 : (uint64_t)q * c, .dst_off = rs ? 0 : (uint64_t)r * c,
                                       .bytes = c, .reduce = rs && r != q};
                coll_add(s, &st);
            }
        return rs ? 2 : 1;
    }
    }
}

const strata_coll_algo_ops strata_coll_ops_direct = {.schedule = direct_schedule};
