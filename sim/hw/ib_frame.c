/*
 * ib_frame.c: an RDMA message's bytes on an InfiniBand or RoCE v2 wire
 * (contract in ib_frame.h).
 *
 * Sources:
 *   [ibta]  InfiniBand Trade Association, InfiniBand Architecture
 *           Specification Volume 1, Release 1.4, chapter 5 (data packet
 *           format) and its header chapters: a packet within a subnet
 *           carries the Local Route Header (LRH, 8 bytes), the Base
 *           Transport Header (BTH, 12), its payload, the Invariant CRC
 *           (ICRC, 4) and the Variant CRC (VCRC, 2); the Global Route
 *           Header (40) only when routed between subnets (not within a
 *           cluster's fabric). An RDMA WRITE's first packet adds the RDMA
 *           Extended Transport Header (RETH, 16: virtual address, rkey,
 *           length); a WRITE with immediate's last packet the Immediate
 *           Data (ImmDt, 4).
 *   [rocev2] IBTA, Supplement to InfiniBand Architecture Specification
 *           Volume 1 Release 1.2.1, Annex A17: RoCEv2 (2014): the IB
 *           transport headers (BTH and its extensions) and the ICRC inside
 *           a UDP datagram (destination port 4791) over IP, in place of LRH,
 *           GRH and VCRC. Over Ethernet (IEEE 802.3): preamble and start
 *           frame delimiter 8 bytes, MAC header 14 (destination, source,
 *           EtherType), frame check sequence 4, and the minimum inter-packet
 *           gap of 96 bit times, 12 bytes, all at the port's line rate;
 *           IPv4 header 20 bytes without options (RFC 791), UDP 8 (RFC 768).
 *           So 8 + 14 + 20 + 8 + 12 (BTH) + 4 (ICRC) + 4 (FCS) + 12 (gap) =
 *           82 bytes a packet. ESTIMATE: untagged frames over IPv4 (an
 *           802.1Q tag, 4 bytes more, where the fabric's PFC runs on VLAN
 *           priorities; IPv6, 20 more); none of the clouds' sources says
 *           which.
 *   [nccl]  NVIDIA/nccl v2.19.3-1 src/transport/net_ib.cc ncclIbMultiSend
 *           (l. 1004-1090): one receive request's data is one
 *           IBV_WR_RDMA_WRITE_WITH_IMM (l. 1034, 1055): one RETH and one
 *           ImmDt a message (the 0-byte write with immediate after the data
 *           that adaptive routing adds above NCCL_IB_AR_THRESHOLD, l. 1047,
 *           and the split over NCCL_IB_QPS_PER_CONNECTION QPs, l. 1061-1082,
 *           which each add a message's headers, are not counted). The QP's
 *           path MTU is the lower of both ports' active_mtu (l. 565, 668,
 *           807; v2.23.4-1 l. 1070, 1507, 1520).
 * Not counted: the link layer's own traffic (InfiniBand's flow-control
 * packets, Ethernet's PFC pause frames), the acknowledgements going the
 * other way, and the line code below the port's data rate (64b/66b: the
 * 100, 200 and 400 Gb/s are rates after it).
 */
#include "hw/ib_frame.h"
#include <glib.h>
#include "core/named_rows.h"

static const strata_ib_frame frames[] = {
    {.name = "infiniband", .packet_bytes = 8 + 12 + 4 + 2, .message_bytes = 16 + 4},
    {.name = "roce-v2", .packet_bytes = 8 + 14 + 20 + 8 + 12 + 4 + 4 + 12, .message_bytes = 16 + 4},
};

const strata_ib_frame *strata_ib_frame_find(const char *name)
{
    return strata_rows_find(frames, G_N_ELEMENTS(frames), sizeof frames[0], name);
}

char *strata_ib_frame_list(void)
{
    return strata_rows_names(frames, G_N_ELEMENTS(frames), sizeof frames[0]);
}

bool strata_ib_frame_mtu_ok(uint32_t mtu)
{
    return mtu >= 256 && mtu <= 4096 && (mtu & (mtu - 1)) == 0;
}

uint64_t strata_ib_frame_wire_bytes(const strata_ib_frame *frame, uint32_t mtu, uint64_t bytes)
{
    if (!frame || mtu == 0 || bytes == 0)
        return bytes;
    uint64_t packets = (bytes + mtu - 1) / mtu;
    return bytes + packets * frame->packet_bytes + frame->message_bytes;
}
