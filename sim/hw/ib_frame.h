/*
 * ib_frame.h: the bytes an RDMA message occupies on the wire of an
 * InfiniBand or RoCE v2 link, its payload cut into packets of the path MTU,
 * each packet carrying its link layer's headers and trailers, the message
 * its RDMA write's extended headers (contract below; the sources in
 * ib_frame.c). One row per link layer, looked up by name (the nccl row's
 * nccl_ib_link_layer key, coll_impl_nccl.c).
 *
 * NCCL's IB transport (and Google's gIB, a fork of it) sends a network
 * step's message as RDMA writes of the data with an immediate on the last
 * (NVIDIA/nccl v2.19.3-1 src/transport/net_ib.cc ncclIbMultiSend), on a
 * reliable-connected QP whose path MTU is the lower of both ports' active
 * MTU (l. 565, 668, 807; v2.23.4-1 l. 1070, 1507, 1520). The link's rate
 * (a file's [network] bandwidth: the port's 100, 200 or 400 Gb/s) carries
 * those headers besides the data.
 *
 * Invariant: the table is constant; the functions are pure.
 */
#ifndef STRATA_HW_IB_FRAME_H
#define STRATA_HW_IB_FRAME_H

#include <stdbool.h>
#include <stdint.h>

typedef struct strata_ib_frame {
    const char *name;
    uint32_t packet_bytes;  /* bytes a packet adds to its payload on the wire */
    uint32_t message_bytes; /* bytes a message adds once (its RDMA write's RETH and immediate) */
} strata_ib_frame;

/* The row of a link layer by name; NULL for an unknown name. */
const strata_ib_frame *strata_ib_frame_find(const char *name);
/* The rows' names, comma-separated (for error messages; g_free). */
char *strata_ib_frame_list(void);
/* Whether mtu is a path MTU an RDMA port takes (IBV_MTU_256 to
 * IBV_MTU_4096: 256, 512, 1024, 2048, 4096 bytes). */
bool strata_ib_frame_mtu_ok(uint32_t mtu);

/* The bytes a message of `bytes` takes on the wire: its bytes, a packet's
 * headers per mtu bytes of them (the last packet partial), and the
 * message's own. frame NULL, mtu 0 or 0 bytes: bytes unchanged. */
uint64_t strata_ib_frame_wire_bytes(const strata_ib_frame *frame, uint32_t mtu, uint64_t bytes);

#endif
