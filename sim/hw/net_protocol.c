/*
 * net_protocol.c: network protocols' per-message cost (contract in
 * net_protocol.h).
 *
 * efa-rdm-cuda: ofiwg/libfabric, prov/efa. efa_hmem.c
 * efa_hmem_info_init_protocol_thresholds (@37f360a6), FI_HMEM_CUDA:
 * runt_size = EFA_DEFAULT_RUNT_SIZE (307,200 B), max_medium_msg_size = 0,
 * min_read_msg_size = efa_max_eager_msg_size_with_largest_header() + 1 (the
 * device port's max_msg_sz less the largest packet header): "only eager and
 * runting read protocols are supported" for CUDA memory. rdm/efa_rdm_msg.c
 * (@0305f58b) efa_rdm_msg_select_rtm: a message of at least
 * min_read_msg_size takes the read-based RTM where both sides support RDMA
 * read, else eager up to the eager RTM's capacity;
 * rdm/efa_rdm_peer.c efa_rdm_peer_select_readbase_rtm: the runting read
 * where no read-based message is in flight on the domain and the peer has
 * runt bytes left (efa_rdm_peer_get_runt_size: 307,200 B a peer in flight,
 * aligned down), else the long read. Either way the receiver gets the
 * request (with the runts, eager packets) after one flight, issues the RDMA
 * read of the rest, whose request and response are two flights more, and
 * sends the end-of-read packet to the sender (a fourth flight, the
 * sender's completion, not the receiver's: not charged). The read moves the
 * bytes at the link's rate as the eager packets would (the step's
 * bandwidth term stands). eager_max: ESTIMATE 8192 B, "about 8 KiB": the
 * EFA device's max_msg_sz (its MTU) less the largest RDM header; the
 * device's figure is not in the sources read. The runting read's runts
 * cover a whole message of up to 307,200 B only while the domain has no
 * read-based message in flight, which NCCL's channels, each with steps in
 * flight on the same NIC, rarely leave past their first step: a ring's
 * charged steps are charged as read (docs/clusters.md), a tree's first
 * step by its window's runt (below).
 *
 * The runting read (wave 43, runt_max,
 * packet_s). ofiwg/libfabric @037a5335 prov/efa/src/rdm/efa_rdm_peer.c
 * efa_rdm_peer_select_readbase_rtm: the runting read where the DOMAIN has
 * no read-based message in flight (efa_rdm_ep_domain(ep)->
 * num_read_msg_in_flight == 0) and the peer has runt bytes left
 * (efa_rdm_peer_get_runt_size: min(runt_size - the peer's runt bytes in
 * flight, the message), aligned down). @727dec2a
 * prov/efa/src/rdm/efa_rdm_proto_runtread.c: construct_tx_pkes splits the
 * runt across "as many REQ packets as it takes", each carrying the read iov
 * array and its share of the data; handle_tx_pkes_posted counts the message
 * as a read in flight only "when the runt did not cover the whole message"
 * (the receiver posts no read then); the sender completes on the packets'
 * acks where the runt covered it all. Each received packet into CUDA memory
 * is one local read the receiver's host posts (efa_rdm_pke_utils.c
 * efa_rdm_pke_copy_payload_to_cuda, @af8ddbe9 l. 345-356: one
 * efa_rdm_rxe_post_local_read_or_queue of pke->payload_size a packet). So
 * such a message costs the receiver's host a packet's handling (the
 * completion read, the header's processing, the local read's post and its
 * completion, the receive buffer's repost) per packet, one after another on
 * the proxy thread that progresses the provider, the read of the rest (two
 * flights) running on the device meanwhile. packet_s ESTIMATE 1.3 us: the
 * middle of strata's 0.8-1.8 us reading of libfabric PR #9675 (a message's
 * progress; a 1 KiB message is one packet), not a measured figure; runt_max
 * 307,200 B (EFA_DEFAULT_RUNT_SIZE, efa_hmem.c @37f360a6); the packet's
 * payload ESTIMATE eager_max (8192 B; its headers and the read iov array
 * make it a little less).
 *
 * The runt's budget (wave 44), read at v1.22.0 (159219639b, the
 * libfabric-aws 1.22.0 that EFA installer 1.38.0 ships, set 24's p4d run:
 * aws/aws-parallelcluster-cookbook PR #2892's changelog), the same rule as
 * the commits above. prov/efa/src/rdm/efa_rdm_peer.c l. 235-258
 * efa_rdm_peer_get_runt_size: 0 where the peer's num_runt_bytes_in_flight
 * exceeds runt_size, else min(runt_size - num_runt_bytes_in_flight, the
 * message), aligned down; l. 276-278 efa_rdm_peer_select_readbase_rtm: the
 * runting read where the domain's num_read_msg_in_flight is 0 and that
 * size is not 0, else the long read. efa_rdm_pke_rtm.c l. 1342-1346: each
 * runt packet sent adds its payload to the peer's runt bytes in flight, and
 * the first packet of a message the runt does not cover whole adds one to
 * the domain's reads in flight (l. 1165: every long read's does); l.
 * 1371-1372: the packet's send completion gives its bytes back;
 * efa_rdm_pke_nonreq.c l. 669: the end-of-read packet takes the read off.
 * So the messages a domain posts to one peer before any of them completes
 * share runt_size: the first takes min(runt_size, its bytes), each next one
 * the rest of the budget while every one before was covered whole; the
 * first not covered starts a read, and every later one (to any peer of the
 * domain) goes by the long read. The window's runt is min(runt_size, its
 * bytes), a read in flight where its bytes exceed it. NCCL's proxy posts a
 * step's isend as soon as its data is ready, up to NCCL_STEPS (8) steps
 * ahead of the completed ones (NVIDIA/nccl v2.25.1-1 src/transport/net.cc
 * sendProxyProgress l. 1131, transmitted < done + NCCL_STEPS; l. 1178, one
 * isend a step of buffSize / NCCL_STEPS, l. 1104): a channel's messages on
 * a connection are in flight together, and the first of a collective is
 * the first of the window. Which window the charged step is NCCL's
 * schedule (strata_net_protocol_nccl_runt_msgs, net_protocol.h); its
 * packets are counted over the window's runt bytes (ESTIMATE: the provider
 * cuts each message's runt apart, at most one packet more a message), so
 * the price never falls as a message or the window grows.
 *
 * The eager message's copy into GPU memory (wave 34). NCCL's receive
 * buffers are in GPU memory for every protocol under GPUDirect
 * (NVIDIA/nccl v2.9.9-1 src/transport/net.cc l. 171, protoLoc[p] =
 * useGdr ? LOC_DEVMEM; v2.23.4-1 l. 868, NCCL_NET_MAP_ADD_POINTER(map, 0,
 * resources->useGdr, ...); only the send side keeps LL in host memory), so
 * an eager packet, which lands in the provider's host bounce buffer, is
 * copied into the GPU: libfabric v1.14.0 prov/efa/src/rxr/
 * rxr_pkt_type_base.c rxr_pkt_copy_data_to_rx_entry (l. 237-256: CUDA
 * memory -> rxr_read_post_local_read_or_queue, always), and from v1.18 a
 * local read unless gdrcopy or cudaMemcpy is allowed, and aws-ofi-nccl
 * forbids cudaMemcpy (v1.8.1-aws src/nccl_ofi_net.c l. 593-622:
 * FI_OPT_CUDA_API_PERMITTED false; libfabric @af8ddbe9
 * prov/efa/src/rdm/efa_rdm_pke_utils.c efa_rdm_pke_copy_payload_to_cuda l.
 * 345-356, "prefer local read", and l. 417-419, the comment of
 * efa_rdm_pke_copy_payload_to_ope: "NCCL forbids its plugin to make
 * cuda calls"). The local read is an RDMA read the device posts to itself,
 * through the local NIC without the wire: local_read_s ESTIMATE 2 us, the
 * figure strata gives that same operation as NCCL's GDR flush
 * (coll_impl_nccl.c NCCL_GDR_FLUSH_S; RCCL's rccl_gdr_flush): the post and
 * its doorbell, the device's fetch of the work request, its PCIe read of
 * the bounce buffer and write into the GPU's memory, the completion; where
 * the file gives the NIC's PCIe link, the bytes at its rate besides. No
 * public figure of an EFA local read was found. LL and LL128 receivers see the data when that write lands (their
 * flags ride in the lines); Simple's proxy waits for the read's
 * completion, its next progress pass, which the Simple end below holds.
 *
 * NCCL's ends of a step (wave 34). The EFA files' routes stand for one
 * message through libfabric's EFA provider, host memory to host memory
 * (osu_latency's one way: p4d-efa.ini takes hpc6a's 9.87 us whole;
 * p5-efa.ini's 10 us sits under p5's 20.4), which holds the library's send
 * and receive paths and the wire, not NCCL's: the sender's SMs storing the
 * step (LL into host memory 0.5; LL128 and Simple into GPU memory with the
 * system fence, 1.0), its proxy's poll seeing it (0.5), and the receiver
 * learning of it (LL, LL128: the SMs' poll of their own memory 0.5;
 * Simple: the receive proxy's pass and the tail's PCIe round trip, 1.5):
 * docs/clusters.md "One step across the network", links 1, 2 and 5 at
 * their ESTIMATEs; link 3 (the post) is the library's. So LL 1.5, LL128
 * 2.0, Simple 3.0 us. On InfiniBand NCCL's hwLatencies[NET] holds them
 * with the route, and coll_impl_nccl.c charges it less the route; on a
 * library route that exceeds it, as EFA's does with 9.87 us against LL's 2.7,
 * that difference is 0 and NCCL's ends were charged nowhere.
 *
 * aws-ofi-rdma: aws/aws-ofi-nccl v1.16.3 src/nccl_ofi_rdma.cpp send (l.
 * 5778-5994): eager when the receiver's control message has not arrived,
 * the message is at most OFI_NCCL_EAGER_MAX_SIZE, 8192 B by
 * include/nccl_ofi_param.h l. 253-256, and no RDMA write is in flight; it
 * lands in a host bounce buffer that the receiver copies into the GPU's
 * buffer by a local read once NCCL posts recv (handle_eager_recv l.
 * 1137-1200; 0 B skips it). The copy crosses the NIC's PCIe link: charged
 * as its bytes at that link's rate in NCCL's topology
 * (strata_nccl_pci_gbs), with the local read's fixed time as efa-rdm-cuda's
 * (an RDMA read the plugin posts to its own device: handle_eager_recv's
 * comment: the eager read is initiated when the receiver calls its
 * recv). Larger messages wait for the receiver's control
 * message (l. 3196-3222), sent when NCCL posts the receive, which NCCL
 * posts ahead (a connection's 8 slots): in a pipeline it is there before
 * the data, and the RDMA write lands in one flight. Where the receive is
 * posted only as the data is ready (a p2p call's first chunk after the
 * call before), the write waits for that message's flight
 * (write_after_ctrl, strata_net_protocol_waits_ctrl; v1.21.1 2475c4c7
 * src/nccl_ofi_rdma.cpp send l. 5752-5771: no request without it unless
 * eager; the receiver's control message an fi_write into the sender's
 * mailbox, rdma_recv_req::post l. 2566-2600).
 *
 * When the control message is there first, a small message is a write too
 * (wave 38, eager_before_ctrl): send() polls the control rails' queues
 * once when it has none (l. 5882-5896) and sends eagerly only
 * `!have_ctrl && size <= eager_send_size && num_inflight_writes == 0`
 * (l. 5915-5919); with the control message it posts the RDMA write into
 * the GPU buffer the receiver named (update_send_data_from_remote,
 * send_progress), no bounce buffer and no local read. Whether it is there
 * first is NCCL's order: a connection's next collective becomes active on
 * the proxy only when its previous one is removed (NVIDIA/nccl v2.25.1-1
 * src/proxy.cc ProxyAppend l. 422-456, a later op of a connection chained
 * as nextPeer; removeOp l. 688-712 puts it in the active list), and its
 * receives are posted at that op's first pass. On a tree's network edge
 * (Tree, NVLS_TREE: a message up and one down a collective) the receiver of
 * the up message ends its op when the up data lands and posts the next
 * collective's receive at once (one flight to the sender); the sender's
 * next up message needs its own collective to end first (the down message,
 * sent by that receiver after its reduction: one flight at least), then
 * its kernel and its node's reduction up the chain; the down edge's
 * receiver ends its op before the next up message even leaves it. So the
 * control message leads by the node's reduction and the kernel's start
 * (strata_net_protocol_ctrl_ahead). A ring's first step of a collective is
 * sent right as the sender's kernel starts, about one step after its last
 * send of the collective before, where the receiver's next post takes that
 * send's flight, a pass and its own flight back: eager where small, as
 * before (and, the step model pricing a ring's steps alike, every ring
 * step of at most 8192 B: an ESTIMATE, net_protocol.h); a larger one's
 * wait for that flight is not built (docs/clusters.md,
 * "aws-ofi-nccl's control message first (wave 38)"). efa-rdm-cuda sends
 * eagerly whatever the receive (libfabric's RDM eager packet lands in the
 * provider's bounce buffer either way).
 *
 * A test's read of the queues (wave 35, nccl_proxy_pass.h). Each ncclNet
 * test of an incomplete request progresses the library: SENDRECV one
 * fi_cq_read of its endpoint's queue (aws-ofi-nccl v1.8.1-aws
 * src/nccl_ofi_sendrecv.c test l. 334-372, ofi_process_cq l. 160-220), the
 * RDMA protocol one a rail and its pending requests (v1.16.3
 * src/nccl_ofi_rdma.cpp test l. 2625-2660, ofi_process_cq l. 1995-2016:
 * rails_per_test). fi_cq_read on the EFA RDM endpoint runs the provider's
 * progress (the device queue's poll, the endpoint's queued packets and
 * reads, the receive buffers' repost). cq_read_s ESTIMATE 0.5 us: such a
 * read that finds nothing; no public figure bounds it. The nearest:
 * libfabric PR #9675 (ofiwg/libfabric, 2023-12-27) saves "~40-55ns" of
 * the time "to progress a message", "3-5% on 1k msg sizes"; dividing the
 * two (strata's arithmetic, not the PR's) puts a message's progress near
 * 0.8-1.8 us. The PR gives no figure for a read that handles no packet.
 *
 * cxi-sendrecv (wave 44): libfabric's CXI provider (HPE Slingshot 11's
 * Cassini NIC) under aws-ofi-nccl's SENDRECV protocol. aws-ofi-nccl
 * v1.9.1-aws src/nccl_ofi_net.c l. 61 defaults to "SENDRECV"; only
 * platform-aws.c's platform_init (l. 519, on AWS) or OFI_NCCL_PROTOCOL
 * changes it (l. 188-199), so off AWS a network message is one fi_tsend
 * of NCCL's GPU buffer (src/nccl_ofi_sendrecv.c l. 1643) into an fi_trecv
 * NCCL posted ahead (l. 865): no bounce buffer, no eager copy of the
 * plugin's own. libfabric v1.21.0 (2024-03-28, the upstream release of
 * the Polaris runs' 2024-04-29; Cray's 1.15.2.0 is HPE's build of the same
 * provider, not public), prov/cxi: cxip_msg_hpc.c _cxip_send_req (l.
 * 4668-4671) sends eagerly a message of at most max_eager_size =
 * rdzv_threshold + rdzv_get_min (l. 5033), defaults CXIP_RDZV_THRESHOLD
 * 2048 (include/cxip.h l. 111) + 2049 ("Avoid single packet Gets",
 * cxip_info.c l. 620-621): 4097 B (man/fi_cxi.7.md l. 1004-1011, the same
 * rule); the eager Put matches the posted receive in the NIC (rx_match_mode
 * CXIP_PTLTE_DEFAULT_MODE = HARDWARE, cxip.h l. 224-225) and lands in the
 * GPU buffer: one flight, no copy. A larger message is a rendezvous Put
 * (_cxip_send_rdzv_put l. 4276-4284: rdzv_eager_size 2048 B with the
 * header, l. 4369), and once matched "the remainder of the payload is
 * pulled from the source using an RDMA Get operation ... In the normal
 * case, the Get is performed by hardware" (fi_cxi.7.md l. 345-351): the
 * Get's request and its response, two flights more (the sender's
 * completion after it is not the receiver's: not charged). The Get moves
 * the bytes at the link's rate as the Put would (the step's bandwidth term
 * stands). Under FI_CXI_RX_MATCH_MODE=software or hybrid, or
 * FI_CXI_RDZV_PROTO=alt_read, the Get is issued by the provider's progress
 * (cxip_msg_hpc.c l. 383-420, "SW RGet"), the same two flights after a
 * software pass that is not modelled; FI_CXI_RDZV_THRESHOLD=0 with
 * RDZV_GET_MIN=0 (some sites' modules) makes every message a rendezvous,
 * which this row's 4097 does not describe. The files' Slingshot latency is
 * the NIC's (not one message through the library: library_route false, so
 * NCCL's hwLatencies[NET] holds its ends, and cq_read_s 0: the proxy's
 * pass is in it as on InfiniBand). fabric "Slingshot": HPE's own framing,
 * no nccl_ib_* key applies.
 *
 * cxi-alt-read (wave 45): the same stack under Sigma2 Olivia's NCCL modules:
 * HPE's settings (HewlettPackard/shs-ccl-docs ccl_env.sh @b150230:
 * FI_CXI_RDZV_PROTO=alt_read, FI_CXI_RDZV_EAGER_SIZE=0,
 * FI_CXI_RX_MATCH_MODE=hybrid; nccl/nccl_tuning_guide.md adds
 * FI_CXI_RDZV_GET_MIN=0) plus FI_CXI_RDZV_THRESHOLD=0, UNINETTSigma2/
 * documentation @4bf9654 hpc_machines/olivia/nccl.md). Read at ofiwg/
 * libfabric v2.1.0 (cf173800) prov/cxi. Eager limit: a threshold of 0 is
 * raised to CXIP_INJECT_SIZE (cxip_info.c l. 842-846), C_MAX_IDC_PAYLOAD_UNR
 * = 192 B (cxip.h l. 156; HPE's Cassini header cassini_user_defs.h, read in
 * a public copy), plus rdzv_get_min 0: max_eager_size = 192 B
 * (cxip_msg_hpc.c l. 5182; _cxip_send_req l. 4804-4820). A larger message
 * is a rendezvous Put with no eager bytes (rdzv_eager_size 0, l. 4518); on
 * its Rendezvous event the receiver's provider issues the Get in software
 * (l. 1299-1350, issue_rdzv_get l. 369-450: restricted, done_notify set,
 * l. 395-399), whose Reply makes it send a zero-byte done notify to the
 * source (cxip_rdzv_done_notify l. 1145-1180, sent at l. 1367), and the
 * receive completes only on that notify's ACK ("For a restricted Get there
 * is a fourth event, the ACK of the notify", rdzv_recv_req_event l.
 * 308-337). Beyond the Put's flight: the Get's request and response and
 * the notify and its ACK, four flights. The provider's passes that issue
 * the Get and the notify (each when NCCL's proxy tests and so reads the
 * queue) are not priced (0, ESTIMATE: no source gives their time). At most
 * 192 B a message is sent eagerly as an IDC (the sender copies it from the
 * GPU into a host bounce buffer first, cxip_msg.c cxip_send_buf_init l.
 * 752-777: not priced, as on cxi-sendrecv). ccl_env.sh alone (neither
 * threshold nor get_min set) sends eagerly to 4097 B, the tuning guide's
 * table (get_min 0) to 2048 B: neither is this row. HPE's guide runs
 * alt_read with the driver's rdzv_get_en at 0 (Slurm
 * --network=disable_rdzv_get); the row assumes it.
 */
#include "hw/net_protocol.h"
#include <string.h>
#include <glib.h>
#include "core/named_rows.h"

static const strata_net_protocol protocols[] = {
    {.name = "efa-rdm-cuda", .eager_max = 8192, .large_flights = 2, .eager_copy = true,
     .runt_max = 307200, .packet_s = 1.3e-6, .eager_before_ctrl = false, .local_read_s = 2e-6,
     .library_route = true, .cq_read_s = 0.5e-6,
     .rails_per_test = false, .fabric = "EFA"},
    {.name = "aws-ofi-rdma", .eager_max = 8192, .large_flights = 0, .eager_copy = true,
     .eager_before_ctrl = true, .write_after_ctrl = true, .local_read_s = 2e-6, .library_route = true,
     .cq_read_s = 0.5e-6, .rails_per_test = true, .fabric = "EFA"},
    {.name = "cxi-sendrecv", .eager_max = 4097, .large_flights = 2, .eager_copy = false,
     .eager_before_ctrl = false, .local_read_s = 0, .library_route = false, .cq_read_s = 0,
     .rails_per_test = false, .fabric = "Slingshot"},
    {.name = "cxi-alt-read", .eager_max = 192, .large_flights = 4, .eager_copy = false,
     .eager_before_ctrl = false, .local_read_s = 0, .library_route = false, .cq_read_s = 0,
     .rails_per_test = false, .fabric = "Slingshot"},
};

/* One step of a protocol's buffer, bytes of data (coll_kit_nccl.c's
 * step_chunk: NVIDIA/nccl init.cc DEFAULT_LL_BUFFSIZE, DEFAULT_LL128_BUFFSIZE
 * and DEFAULT_BUFFSIZE over NCCL_STEPS) and its wire format's ratio */
static const uint64_t step_data[STRATA_NCCL__PROTOS] = {32768, 576000, 512ull << 10};
static const uint64_t wire_num[STRATA_NCCL__PROTOS] = {2, 128, 1};
static const uint64_t wire_den[STRATA_NCCL__PROTOS] = {1, 120, 1};

/* NCCL's ends of a network step outside the library, by NCCL protocol
 * (LL, LL128, Simple; the header comment's sums of links 1, 2 and 5) */
static const double nccl_ends_s[STRATA_NCCL__PROTOS] = {1.5e-6, 2.0e-6, 3.0e-6};

double strata_net_protocol_nccl_ends_s(const strata_net_protocol *proto, strata_nccl_proto nccl_proto)
{
    return proto && proto->library_route ? nccl_ends_s[nccl_proto] : 0;
}

double strata_net_protocol_step_s(const strata_net_protocol *proto, strata_nccl_proto nccl_proto, double hw_lat_s,
                                  double route_s, const strata_hw_nics *nics, uint64_t msg_bytes, bool ctrl_ahead,
                                  uint32_t runt_msgs)
{
    return MAX(hw_lat_s - route_s, strata_net_protocol_nccl_ends_s(proto, nccl_proto)) +
           strata_net_protocol_extra_s(proto, nics, msg_bytes, ctrl_ahead, runt_msgs);
}

uint32_t strata_net_protocol_nccl_runt_msgs(strata_nccl_algo algo, uint32_t ranks, uint32_t nodes, uint32_t channels)
{
    if (algo != STRATA_NCCL_TREE || nodes < 2 || channels == 0)
        return 0;
    uint32_t per_node = MAX(1u, ranks / nodes);
    return (channels + per_node - 1) / per_node;
}

bool strata_net_protocol_ctrl_ahead(strata_nccl_algo algo)
{
    return algo == STRATA_NCCL_TREE || algo == STRATA_NCCL_NVLS_TREE;
}

bool strata_net_protocol_waits_ctrl(const strata_net_protocol *proto, uint64_t msg_bytes)
{
    return !proto || (proto->write_after_ctrl && msg_bytes > proto->eager_max);
}

const strata_net_protocol *strata_net_protocol_find(const char *name)
{
    return strata_rows_find(protocols, G_N_ELEMENTS(protocols), sizeof protocols[0], name);
}

char *strata_net_protocol_list(void)
{
    return strata_rows_names(protocols, G_N_ELEMENTS(protocols), sizeof protocols[0]);
}

/* A larger message's flights beyond the first: large_flights one-way flights, each two links (NIC to leaf, leaf
 * to NIC) at the network's per-link latency. */
static double long_read_s(const strata_net_protocol *proto, const strata_hw_nics *nics)
{
    return proto->large_flights * 2 * nics->latency;
}

double strata_net_protocol_extra_s(const strata_net_protocol *proto, const strata_hw_nics *nics,
                                   uint64_t msg_bytes, bool ctrl_ahead, uint32_t runt_msgs)
{
    if (!proto || !nics || msg_bytes == 0)
        return 0;
    if (msg_bytes > proto->eager_max && runt_msgs && proto->runt_max) { /* the runting read: the peer's budget */
        uint64_t window = msg_bytes * runt_msgs, runt = MIN(window, proto->runt_max);
        double packets = (double)((runt + proto->eager_max - 1) / proto->eager_max);
        double read = window > runt ? long_read_s(proto, nics) : 0;
        return MAX(read, packets * proto->packet_s + proto->local_read_s);
    }
    if (msg_bytes > proto->eager_max || (proto->eager_before_ctrl && ctrl_ahead))
        return long_read_s(proto, nics);
    if (!proto->eager_copy)
        return 0;
    if (!nics->pcie_generation)
        return proto->local_read_s;
    return proto->local_read_s +
           (double)msg_bytes / (strata_nccl_pci_gbs(nics->pcie_generation, nics->pcie_lanes) * 1e9);
}

uint64_t strata_net_protocol_nccl_message(strata_nccl_proto proto, strata_nccl_algo algo, uint64_t bytes,
                                          uint32_t ranks, uint32_t channels, uint64_t simple_step)
{
    bool ring = algo == STRATA_NCCL_RING;
    uint64_t parts = (uint64_t)MAX(1u, channels) * (ring ? MAX(1u, ranks) : 1u);
    uint64_t step = proto == STRATA_NCCL_SIMPLE && simple_step ? simple_step : step_data[proto];
    /* a ring's Simple slice: SlicePerChunk 2 of StepPerSlice 2 slots
     * (prims_simple.h), one isend each (coll_kit_nccl.c) */
    if (proto == STRATA_NCCL_SIMPLE && ring)
        step *= 2;
    uint64_t data = MIN(step, (bytes + parts - 1) / parts);
    return (data * wire_num[proto] + wire_den[proto] - 1) / wire_den[proto];
}
