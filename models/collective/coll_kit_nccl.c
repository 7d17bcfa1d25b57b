/*
 * coll_kit_nccl.c: NCCL's protocols as the schedules of the algorithms NCCL
 * runs see them (contract in coll_kit.h): their wire formats, inside a
 * domain (NVLink) and between domains (the network), and their chunks.
 *
 * NVIDIA/nccl @5067397. LL: a 16-byte line (union ncclLLFifoLine) carries
 * two 4-byte data words, each with its 4-byte flag, so the wire carries 2x
 * the data; the LL buffer, NCCL_LL_LINES_PER_THREAD (8) x
 * NCCL_LL_MAX_NTHREADS (512) x NCCL_STEPS (8) lines of 16 bytes (init.cc
 * DEFAULT_LL_BUFFSIZE), is 64 KiB a step, 32 KiB of data. LL128: a 128-byte
 * line carries 120 bytes of data and an 8-byte flag (NCCL_LL128_LINEELEMS
 * 16, NCCL_LL128_DATAELEMS 15, device.h); its buffer,
 * NCCL_LL128_ELEMS_PER_THREAD (120) x NCCL_LL128_MAX_NTHREADS (640) x
 * NCCL_STEPS x 8 bytes, is 614,400 bytes a step, 576,000 of data. Both
 * carry their flag inside the data, so a step needs no separate flag
 * store. Simple: a step of its buffer (NCCL_BUFFSIZE, 4 MiB unless the run
 * sets it: shape->tune.simple_step_bytes) is 1/NCCL_STEPS of it, 512 KiB
 * by default; the ring's chunk is
 * ALLREDUCE_CHUNKSTEPS (4) steps in 2 slices, with a flag store after each
 * (coll_sched.h STRATA_COLL_NCCL_*), the other algorithms' one step
 * (enqueue.cc calcCollChunking: chunkSteps and sliceSteps are the ring's
 * only). Inside a domain all three are SM stores, so NVLink's packet
 * overhead (5/4) applies on top; between domains the NIC carries the
 * protocol's format as it is (LL's lines, LL128's, Simple's data) and the
 * proxy's completion, not a flag store, ends a step (coll_wire), after, on
 * Simple below compute capability 9.0, the receiver's GPUDirect flush
 * (shape->tune.net_flush_s: hw/coll_impl_nccl.c nccl_gdr_flush). Where
 * the file names the link layer of NCCL's IB transport
 * (nccl_ib_link_layer), a copy between domains also carries its packets'
 * headers (shape->tune.net_frame at net_mtu: hw/ib_frame.h).
 *
 * Invariant: pure functions of their arguments.
 */
#include "collective/coll_kit.h"

static const uint64_t proto_num[STRATA_NCCL__PROTOS] = {2 * STRATA_COLL_WIRE_NUM, 128 * STRATA_COLL_WIRE_NUM,
                                                        STRATA_COLL_WIRE_NUM};
static const uint64_t proto_den[STRATA_NCCL__PROTOS] = {STRATA_COLL_WIRE_DEN, 120 * STRATA_COLL_WIRE_DEN,
                                                        STRATA_COLL_WIRE_DEN};
static const uint64_t net_num[STRATA_NCCL__PROTOS] = {2, 128, 1};
static const uint64_t net_den[STRATA_NCCL__PROTOS] = {1, 120, 1};
static const uint64_t ring_chunk[STRATA_NCCL__PROTOS] = {32768, 576000, STRATA_COLL_NCCL_CHUNK};
static const uint64_t step_chunk[STRATA_NCCL__PROTOS] = {32768, 576000, 512ull << 10};
/* ALLREDUCE_CHUNKSTEPS (NCCL_STEPS / 2: src/include/collectives.h) */
#define RING_CHUNK_STEPS 4u
static const uint32_t ring_slices[STRATA_NCCL__PROTOS] = {1, 1, STRATA_COLL_NCCL_SLICES};

coll_wire coll_nccl_wire(const strata_coll_shape *shape)
{
    strata_nccl_proto p = shape->tune.proto;
    return (coll_wire){.num = proto_num[p], .den = proto_den[p], .net_num = net_num[p], .net_den = net_den[p],
                       .handshake = p == STRATA_NCCL_SIMPLE,
                       .net_delay_s = shape->tune.net_step_s + shape->tune.net_flush_s,
                       .sync_delay_s = p == STRATA_NCCL_SIMPLE ? shape->tune.simple_sync_s : 0,
                       .net_proxy_s = shape->tune.net_proxy_s,
                       .net_frame = shape->tune.net_frame, .net_mtu = shape->tune.net_mtu};
}

uint64_t coll_nccl_ring_chunk(strata_nccl_proto p, uint64_t simple_step)
{
    return p == STRATA_NCCL_SIMPLE && simple_step ? RING_CHUNK_STEPS * simple_step : ring_chunk[p];
}
uint32_t coll_nccl_ring_slices(strata_nccl_proto p) { return ring_slices[p]; }

/* A ring step's chunk takes chunkSteps of a connection's NCCL_STEPS slots:
 * on Simple ALLGATHER_CHUNKSTEPS = ALLREDUCE_CHUNKSTEPS = NCCL_STEPS / 2
 * (4), on LL and LL128 1 (NVIDIA/nccl v2.28.7-1 src/include/collectives.h
 * l. 17-20; src/enqueue.cc calcCollChunking l. 2024-2025: chunkSteps and
 * sliceSteps are the ring Simple's only). The kernel moves the chunk in
 * SlicePerChunk (2) slices of StepPerSlice (2) slots each, whatever its
 * bytes (prims_simple.h l. 193-194: a chunk smaller than the buffer's
 * still cut in 2 slices, each taking 2 slots; l. 168, 175: step +=
 * StepPerSlice), and a sender waits for a free slot, head + NCCL_STEPS
 * (l. 115, waitPeer). The network connection is the same: the receive
 * proxy posts a slice's receive while posted < done + NCCL_STEPS, done the
 * steps its GPU has consumed (src/transport/net.cc recvProxyProgress
 * l. 1418-1431, 1607-1620), and the send proxy sends no further
 * (sendProxyProgress l. 1237-1249). So a Simple connection holds
 * NCCL_STEPS / 4 = 2 ring steps in flight, LL and LL128 8. */
uint32_t coll_nccl_ring_slots(strata_nccl_proto p)
{
    return p == STRATA_NCCL_SIMPLE ? STRATA_COLL_NCCL_STEPS / RING_CHUNK_STEPS : STRATA_COLL_NCCL_STEPS;
}

uint64_t coll_nccl_tree_chunk(strata_nccl_proto p, uint64_t simple_step, uint64_t bytes, uint32_t channels,
                              uint32_t nodes, uint32_t ppn)
{
    uint64_t chunk = p == STRATA_NCCL_SIMPLE && simple_step ? simple_step : step_chunk[p];
    if (p != STRATA_NCCL_LL128)
        return chunk;
    /* calcCollChunking, Tree LL128: shrink while the buffer gives each
     * channel fewer chunks than the pipeline's depth wants */
    double steps = 1 + strata_nccl_log2i(nodes) + 0.1 * ppn;
    while ((double)(bytes / ((uint64_t)channels * chunk)) < steps * 64 / ppn && chunk > 131072)
        chunk /= 2;
    while ((double)(bytes / ((uint64_t)channels * chunk)) < steps * 16 / ppn && chunk > 32768)
        chunk /= 2;
    return chunk;
}

uint64_t coll_nccl_channel_off(const strata_coll_shape *shape, uint64_t b, uint32_t channels, uint32_t c)
{
    if (!shape->tune.chan_lo || c >= channels)
        return coll_chunk_off(b, channels, c);
    return c == 0 ? 0 : MIN(b, shape->tune.chan_lo + (uint64_t)(c - 1) * shape->tune.chan_mid);
}
