/*
 * nccl_channels.c: NCCL's division of a collective's bytes among its
 * channels (contract in nccl_channels.h): src/enqueue.cc
 * scheduleCollTasksToPlan's cells (v2.22.3-1 l. 614-702, v2.25.1-1 l. 491-620, v2.27.7-1
 * l. 536-645, v2.30.7-1 l. 585-700), for a plan of one collective
 * (channelId 0, currentTraffic 0), in bytes (the source counts elements of
 * task->datatype; a cell is a multiple of 16 bytes, so whole elements).
 * Invariant: reads only its arguments.
 */
#include "hw/nccl_channels.h"
#include <glib.h>

static uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* ncclFuncTrafficPerByte (enqueue.cc): the traffic a byte of task->count
 * makes, all-reduce 2 (reduce-scatter then all-gather), all-gather and
 * reduce-scatter nRanks */
static uint64_t traffic_per_byte(strata_op_kind kind, uint32_t ranks)
{
    return kind == STRATA_OP_ALL_REDUCE ? 2 : (kind == STRATA_OP_ALL_GATHER || kind == STRATA_OP_REDUCE_SCATTER)
                                                  ? ranks
                                                  : 1;
}

strata_nccl_split strata_nccl_channel_split(const strata_nccl_version *v, strata_op_kind kind, strata_nccl_proto p,
                                            uint32_t ranks, uint64_t count_bytes, uint32_t nc, uint32_t max_channels)
{
    uint64_t max = max_channels ? max_channels : 1; /* nMaxChannels[kind] */
    nc = nc ? MIN(nc, max_channels ? max_channels : 1) : 1; /* nChannels[kind] = min(task->nMaxChannels, it) */
    if (!v->cell_traffic || count_bytes == 0) /* v2.19: every channel, the even share */
        return (strata_nccl_split){.channels = nc};
    const uint64_t min_traffic = v->cell_traffic; /* MinTrafficPerChannel */
    uint64_t tpb = traffic_per_byte(kind, ranks);
    /* the plan's estimate: trafficBytes += max(MinTrafficPerChannel,
     * task->trafficBytes) (v2.22: task->trafficBytes, l. 603), nChannels =
     * min(task->nMaxChannels, the kind's) */
    uint64_t traffic = count_bytes * tpb > min_traffic || v->cell_fixed16 ? count_bytes * tpb : min_traffic;
    uint64_t per_channel = v->cell_round16 ? div_up(traffic / nc, 16) * 16
                                           : (traffic / nc > min_traffic ? traffic / nc : min_traffic);
    uint64_t cell_tpb = v->cell_ll_quad && p == STRATA_NCCL_LL ? 4 * tpb : tpb; /* LL's 8-byte lines of 4 data bytes */
    /* cellSize: 16 bytes on v2.22 */
    uint64_t cell = v->cell_fixed16 ? 16 : div_up(div_up(min_traffic, cell_tpb), 16) * 16;
    uint64_t cells = div_up(count_bytes, cell), per_cell = cell * cell_tpb;
    uint64_t per = div_up(per_channel, per_cell); /* cellsPerChannel */
    per = per < cells ? per : cells;
    /* cellsLo: min(cells, divUp(trafficPerChannel, trafficPerCell)), on v2.22 rounded down (0 where a
     * cell's traffic, 16 x nRanks for an all-gather, exceeds the channel's: the least channel is skipped) */
    uint64_t lo_v222 = per_channel / per_cell < cells ? per_channel / per_cell : cells;
    uint64_t lo = max == 1 ? cells : v->cell_fixed16 ? lo_v222 : per;
    uint64_t n_mid = (cells - lo) / per, hi = (cells - lo) % per;
    if ((lo ? 1 : 0) + n_mid + (hi ? 1 : 0) > max) { /* overflowed the kind's channels: the rest on max - 1 */
        n_mid = max - 2;
        per = (cells - lo) / (n_mid + 1);
        hi = per + (cells - lo) % (n_mid + 1);
    }
    if (hi == 0 && n_mid != 0) {
        hi = per;
        n_mid -= 1;
    }
    if (lo == 0) { /* v2.22 l. 682-686: "Least channel skipped. Make the next channel the new least." */
        if (n_mid == 0) {
            lo = hi;
            hi = 0;
        } else {
            lo = per;
            n_mid -= 1;
        }
    }
    strata_nccl_split s = {.lo = lo * cell, .mid = n_mid ? per * cell : 0, .n_mid = (uint32_t)n_mid, .hi = hi * cell};
    /* the last cell's padding comes off the last channel (countHi, else countLo) */
    *(s.hi ? &s.hi : &s.lo) -= cells * cell - count_bytes;
    s.channels = (s.lo ? 1 : 0) + s.n_mid + (s.hi ? 1 : 0);
    return s;
}
