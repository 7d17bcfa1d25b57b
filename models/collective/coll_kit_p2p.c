/*
 * coll_kit_p2p.c: NCCL's all-to-all as nccl-tests runs it (contract in
 * coll_kit.h, coll_nccl_alltoall): ncclGroupStart, an ncclSend and an
 * ncclRecv of in_bytes / n to and from every rank, ncclGroupEnd, which
 * NCCL plans as one kernel of p2p work (NVIDIA/nccl v2.27.7-1
 * src/enqueue.cc scheduleP2pTasksToPlan, addP2pToPlan; the plan's figures
 * in hw/nccl_p2p.h, shape->tune.p2p).
 *
 * Round k of comm->p2pSchedule pairs every rank's send to its peer k with
 * its receive from the rank whose peer it is; its send and receive are cut
 * into `parts` parts, part i on channel strata_nccl_p2p_channel(k, i). A
 * channel runs its work in batches of at most NCCL_MAX_DEV_WORK_P2P_PER_BATCH
 * (8) p2p works of distinct rounds, all of a batch at once (its warps
 * shared among them, device/sendrecv.h), the batches one after another
 * (addWorkBatchToPlan: a new batch when the current one holds 8). So the
 * step of part i of round k is in round b of the schedule, b the batch it
 * falls in on its channel, counting the works before it there in round
 * order; on lane k x parts + i (a send and a receive per round and rank:
 * the lanes of one destination differ). With 8 GPUs a node every node
 * round's 8 local rounds share one batch on their own channel base, so an
 * all-to-all over up to p2pnChannels / p2pnChannelsPerPeer nodes is one
 * round of every peer at once (p5, 2 to 16 nodes: docs/clusters.md).
 * Round 0 is the rank's copy to itself (isCopy: the send warps copy IN to
 * OUT), one local step on part 0's channel.
 *
 * RCCL's all-to-all (the rccl row's, when MSCCL does not run it) is the
 * same grouped p2p under RCCL 2.21's rules (a plan with `rccl`,
 * hw/nccl_p2p.h): its rounds, parts and channels, one round's receive and
 * send a work, its self copy cut in parts as any send. A channel is a
 * thread block that runs its works one after another, each channel on
 * its own (RCCL @0cbce2a src/device/common.h ncclKernelMain l. 231-367:
 * a block's channel from its blockIdx, its works one after another by
 * workNext until isLast), so its steps are one round on lane = the channel:
 * a rank receives a channel's parts in the channel's order, while other
 * channels run at once. (Batches as schedule rounds would hold every
 * channel's second work until the rank's slowest first one ended, where
 * RCCL waits only for the same channel's: across nodes, a part to the
 * other node sharing no channel with the rest, 2 x 8 ranks' round 15,
 * would hold rounds 8-14 for its network step.)
 *
 * A part moves as one step, not as its chunks: a connection keeps
 * NCCL_STEPS (8) chunks of p2pChunkSize in flight (prims_simple.h, the
 * sender waits for head + NCCL_STEPS), 1 MiB across nodes, which a rank's
 * NIC share of every connection it runs at once drains in longer than a
 * network step's latency; the window never binds, and NCCL's fixed cost of
 * a step over the network (shape->tune.net_step_s) is paid once per part,
 * the later chunks' overlapping the transfer (coll_wire's pipelined rule).
 * The protocol's wire format is the shape's (Simple, or LL below NCCL's
 * threshold: coll_nccl_wire, coll_wire_apply, by the caller).
 */
#include "collective/coll_kit.h"
#include "hw/nccl_p2p.h"

uint32_t coll_nccl_alltoall(strata_coll_sched *s, const strata_coll_shape *shape)
{
    uint32_t n = s->n, rounds = 1;
    strata_nccl_p2p untuned; /* no hardware: the schedule's own tests */
    strata_nccl_p2p_untuned(n, s->domain, &untuned);
    const strata_nccl_p2p *p = shape->tune.p2p.ranks == n ? &shape->tune.p2p : &untuned;
    uint64_t c = shape->in_bytes / n;
    if (c == 0)
        return 1;
    uint32_t parts = strata_nccl_p2p_parts(p, c);
    uint32_t *nd = g_new(uint32_t, n), *ld = g_new(uint32_t, n), *fill = g_new0(uint32_t, p->p2p_channels);
    strata_nccl_p2p_deltas(p, nd, ld);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t np = k == 0 ? strata_nccl_p2p_self_parts(p, parts) : parts;
        for (uint32_t i = 0; i < np; i++) {
            uint32_t ch = strata_nccl_p2p_channel(p, k, i);
            uint32_t batch = p->rccl ? 0 : fill[ch]++ / strata_nccl_p2p_per_batch(p); /* RCCL: its channel's lane */
            uint64_t beg = 0, end = c;
            if (np > 1)
                strata_nccl_p2p_bounds(p, i, c, &beg, &end);
            rounds = MAX(rounds, batch + 1);
            for (uint32_t r = 0; r < n; r++) {
                uint32_t q = strata_nccl_p2p_peer(p, r, nd[k], ld[k]);
                strata_coll_step st = {.round = batch, .lane = p->rccl ? ch : k * parts + i, .src = r, .dst = q,
                                       .src_buf = STRATA_COLL_IN, .dst_buf = STRATA_COLL_OUT,
                                       .own_buf = STRATA_COLL_OUT, .src_off = (uint64_t)q * c + beg,
                                       .dst_off = (uint64_t)r * c + beg, .bytes = end - beg};
                coll_add(s, &st);
            }
        }
    }
    g_free(nd);
    g_free(ld);
    g_free(fill);
    return rounds;
}
