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
 * into parts, part i on channel strata_nccl_p2p_channel(k, i). A pair on
 * the node runs the plan's protocol (LL up to NCCL's threshold), a pair
 * across nodes Simple at any size, its parts counted on Simple's step
 * (strata_nccl_p2p_ll_to: the network's p2p connections have no LL
 * buffer), so a round's parts can differ by rank. A channel is a thread
 * block that runs its work batches one after another, each channel on its
 * own (NVIDIA/nccl v2.19.3-1 to v2.30.7-1 src/device/common.h
 * ncclKernelMain: a block's channel from its blockIdx, then batch after
 * batch, nextBatchIx, until -1; l. 332-398 at v2.27.7-1): a batch holds
 * at most NCCL_MAX_DEV_WORK_P2P_PER_BATCH (8) p2p works of distinct
 * rounds, all at once (its warps shared among them, device/sendrecv.h;
 * addWorkBatchToPlan: a new batch when the current one holds 8). So every
 * step is in one schedule round, on the lane of its channel's batch slot
 * (channel x 8 + its work's place in the batch, counting the channel's
 * works in round order): a rank receives a channel's batches in order,
 * the channel's other works and the other channels at once. (Batches as
 * schedule rounds held every channel's next batch until the rank's
 * slowest step of the batch before, on any channel: NCCL waits for its
 * own channel only.) A work waits for its slot's work of the batch before,
 * not for that whole batch as the block's __syncthreads between batches
 * does: exact where a channel has one batch, looser otherwise (one
 * channel over 2 x 8 H100, 16 MiB: 184.2 us, where the batch's barrier,
 * which the old rounds gave on one channel, makes 204.2). With 8 GPUs a node every node round's 8 local rounds
 * share one batch on their own channel base, so an all-to-all over up to
 * p2pnChannels / p2pnChannelsPerPeer nodes has one batch a channel (p5, 2
 * to 16 nodes: docs/clusters.md). Round 0 is the rank's copy to itself
 * (isCopy: the send warps copy IN to OUT), one local step on part 0's
 * channel.
 *
 * RCCL's all-to-all (the rccl row's, when MSCCL does not run it) is the
 * same grouped p2p under RCCL 2.21's rules (a plan with `rccl`,
 * hw/nccl_p2p.h): its rounds, parts and channels, one round's receive and
 * send a work (a batch of one: the lane is the channel; RCCL @0cbce2a
 * src/device/common.h ncclKernelMain l. 231-367 runs a block's works one
 * after another by workNext until isLast), its self copy cut in parts as
 * any send. Across nodes, a part to the other node sharing no channel
 * with the rest (2 x 8 ranks' round 15) no longer holds rounds 8-14 for
 * its network step.
 *
 * A part moves as one step, not as its chunks. Its connection's window:
 * a p2p connection across nodes is a shared one (NVIDIA/nccl v2.27.7-1
 * src/transport/net.cc l. 199, 241: connIndex 1, enqueue.cc l. 797), and
 * a GPU's receives (and sends, without PXN) of one batch on one channel
 * are the subs of one proxy op (net.cc l. 726, 887; proxy.cc ProxyAppend
 * l. 429; a send waits for its receive's credit; a p2p
 * proxy op's opCount is its channel's batch, enqueue.cc l. 1005), each
 * sub keeping min(NCCL_STEPS, NCCL_SHARED_STEPS (16) / nsubs) chunks in
 * flight (net.cc l. 527, 1127, 1139, 1305, 1318; v2.28.7-1 l. 628, 1237,
 * 1418, v2.30.7-1 l. 646, 1323, 1519 the same): a batch of 8 works to 8
 * peers across nodes keeps 2 chunks a peer, of p2pChunkSize (128 KiB;
 * 64 KiB under 1 MiB a peer, 32 KiB under 128 KiB: enqueue.cc l.
 * 845-846). RCCL @0cbce2a puts one round in a work
 * (NCCL_MAX_WORK_ELEMENTS_P2P 2, device.h l. 313; enqueue.cc l. 624,
 * 1024): one sub, 8 chunks. Two chunks bind only where a chunk's loop
 * (its wire time x at the connection's share of the NIC, the receiving
 * work's one warp forwarding it, the credit's flight there and back and
 * the proxies' passes) outlasts 2x; on every published p5 all-to-all a
 * GPU runs 16 to 120 network connections at once, x >= 42 us, and the
 * loop (about 73 to 81 us at 2 nodes at p5-efa.ini's ESTIMATEs) fits
 * (docs/clusters.md, "A shared connection's window (wave 29)"). Not
 * modelled, then: NCCL's fixed cost of a step over the network
 * (shape->tune.net_step_s) is paid once per part, the later chunks'
 * overlapping the transfer (coll_wire's pipelined rule).
 * The protocol's wire format is the shape's on the node (Simple, or LL
 * below NCCL's threshold: coll_nccl_wire, coll_wire_apply, by the
 * caller), Simple's across nodes (the caller's wire.net_num).
 */
#include "collective/coll_kit.h"
#include "hw/nccl_p2p.h"

uint32_t coll_nccl_alltoall(strata_coll_sched *s, const strata_coll_shape *shape)
{
    uint32_t n = s->n;
    strata_nccl_p2p untuned; /* no hardware: the schedule's own tests */
    strata_nccl_p2p_untuned(n, s->domain, &untuned);
    const strata_nccl_p2p *p = shape->tune.p2p.ranks == n ? &shape->tune.p2p : &untuned;
    uint64_t c = shape->in_bytes / n;
    if (c == 0)
        return 1;
    /* a pair on the node, a pair across nodes (Simple: strata_nccl_p2p_ll_to) */
    uint32_t parts[2] = {strata_nccl_p2p_parts_to(p, c, false), strata_nccl_p2p_parts_to(p, c, true)};
    uint32_t per_batch = strata_nccl_p2p_per_batch(p);
    uint32_t *nd = g_new(uint32_t, n), *ld = g_new(uint32_t, n), *fill = g_new0(uint32_t, p->p2p_channels);
    strata_nccl_p2p_deltas(p, nd, ld);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t most = k == 0 ? strata_nccl_p2p_self_parts(p, parts[0]) : MAX(parts[0], parts[1]);
        for (uint32_t i = 0; i < most; i++) {
            /* the channel's lane: its batch's slot (the channel's batches
             * one after another on it, a batch's works beside each other) */
            uint32_t ch = strata_nccl_p2p_channel(p, k, i), lane = ch * per_batch + fill[ch]++ % per_batch;
            for (uint32_t r = 0; r < n; r++) {
                uint32_t q = strata_nccl_p2p_peer(p, r, nd[k], ld[k]);
                uint32_t np = k == 0 ? most : parts[strata_nccl_p2p_rank_net(p, r, nd[k], ld[k])];
                if (i >= np)
                    continue;
                uint64_t beg = 0, end = c;
                if (np > 1)
                    strata_nccl_p2p_bounds(p, np, i, c, &beg, &end);
                strata_coll_step st = {.round = 0, .lane = lane, .src = r, .dst = q,
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
    return 1;
}
