/*
 * test_net_protocol.c: a network message's protocol by its size (sim/hw/
 * net_protocol.h): libfabric's EFA provider on CUDA memory under
 * aws-ofi-nccl's SENDRECV (efa-rdm-cuda: eager to 8 KiB, copied from the
 * host bounce buffer into the GPU by a local read, else the read's two
 * flights more), aws-ofi-nccl's RDMA protocol (aws-ofi-rdma: eager to 8192
 * B copied from a host bounce buffer by a local read, its bytes at the
 * NIC's PCIe rate, where its control message has not arrived (a ring's
 * first step; a tree's edge has it: the write), else the RDMA write after
 * the control message posted ahead), NCCL's message of a network step, NCCL's own ends of a step on
 * a route that is the library's (EFA), the step's wait on NCCL's proxy
 * passes (nccl_proxy_pass.h), and the nccl row's
 * nccl_net_protocol key and the plugin rows' protocol as a network step's
 * charge.
 */
#include <string.h>
#include "testutil.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"
#include "hw/net_protocol.h"
#include "hw/nccl_proxy_pass.h"
#include <glib/gstdio.h>
#include <unistd.h>

#define NV "interconnect.nvlink."

/* p4d-efa.ini's network: 4.935 us a link (a flight NIC to NIC: 9.87 us),
 * 12.5 GB/s a NIC. A message's whole time on efa-rdm-cuda, by hand:
 *   - 8 KiB (8192 B, eager): 1 flight + the local read's 2 us (its bytes
 *     at no PCIe rate: the file gives no NIC link) + 8192 / 12.5e9 = 9.87
 *     + 2 + 0.655 us;
 *   - 300 KiB (307,200 B, above 8 KiB: the request's flight, the read's
 *     request and response): 3 x 9.87 + 307200 / 12.5e9 = 29.61 + 24.576;
 *   - 1 MiB: 3 x 9.87 + 1048576 / 12.5e9 = 29.61 + 83.886 us.
 * strata charges the route's one flight and the bytes at the link's rate
 * on every network step; the protocol adds the rest: 2 us, 2 x 9.87 =
 * 19.74 us, 19.74 us. On aws-ofi-rdma over PCIe Gen5 x16 (NCCL's 48 GB/s,
 * strata_nccl_pci_gbs: 16 x 240 / 80): 8192 B eager, 1 flight + its local
 * read 2 us + 8192 / 48e9 = 0.1707 us; 8193 B and 1 MiB the RDMA write,
 * 1 flight: nothing more; 0 B: no copy. Without a PCIe link in the file:
 * the local read's 2 us only. */
START_TEST(flights_and_copy_by_message_size)
{
    const strata_net_protocol *efa = strata_net_protocol_find("efa-rdm-cuda");
    const strata_net_protocol *rdma = strata_net_protocol_find("aws-ofi-rdma");
    ck_assert_ptr_nonnull(efa);
    ck_assert_ptr_nonnull(rdma);
    ck_assert_ptr_null(strata_net_protocol_find("efa"));
    strata_hw_nics p4d = {.per_host = 4, .bandwidth = 12.5e9, .latency = 4.935e-6};
    double flight = 9.87e-6;
    uint64_t sizes[] = {8192, 307200, 1u << 20};
    double whole[] = {flight + 2e-6 + 8192 / 12.5e9, 3 * flight + 307200 / 12.5e9, 3 * flight + 1048576 / 12.5e9};
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        double charged = flight + strata_net_protocol_extra_s(efa, &p4d, sizes[i], false, 0) + sizes[i] / 12.5e9;
        ck_assert_double_eq_tol(charged, whole[i], 1e-12);
    }
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &p4d, 8193, false, 0), 19.74e-6, 1e-12);
    ck_assert(strata_net_protocol_extra_s(efa, &p4d, 0, false, 0) == 0);
    ck_assert(strata_net_protocol_extra_s(NULL, &p4d, 1u << 20, false, 0) == 0);
    strata_hw_nics p5 = {.per_host = 32, .bandwidth = 12.5e9, .latency = 5e-6, .pcie_generation = 5,
                         .pcie_lanes = 16};
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(rdma, &p5, 8192, false, 0), 2e-6 + 8192 / 48e9, 1e-15);
    ck_assert(strata_net_protocol_extra_s(rdma, &p5, 8193, false, 0) == 0);
    ck_assert(strata_net_protocol_extra_s(rdma, &p5, 1u << 20, false, 0) == 0);
    ck_assert(strata_net_protocol_extra_s(rdma, &p5, 0, false, 0) == 0);
    /* the control message first (a tree's edges, wave 38): the RDMA write, no copy; SENDRECV's provider copies */
    ck_assert(strata_net_protocol_extra_s(rdma, &p5, 8192, true, 0) == 0);
    ck_assert(strata_net_protocol_extra_s(rdma, &p5, 1, true, 0) == 0);
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &p4d, 8192, true, 0), 2e-6, 1e-15);
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &p4d, 8193, true, 0), 19.74e-6, 1e-12);
    p5.pcie_generation = p5.pcie_lanes = 0;
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(rdma, &p5, 8192, false, 0), 2e-6, 1e-15);
    ck_assert(strata_net_protocol_ctrl_ahead(STRATA_NCCL_TREE));
    ck_assert(strata_net_protocol_ctrl_ahead(STRATA_NCCL_NVLS_TREE));
    ck_assert(!strata_net_protocol_ctrl_ahead(STRATA_NCCL_RING));
}
END_TEST

/* NCCL's message of a network step, by hand:
 *   - Ring/LL, 8 B over 16 ranks x 8 channels: ceil(8 / 128) = 1 B of
 *     data, 2 B on the wire (LL's flag words);
 *   - Ring/LL at 1 GiB: one step, 32 KiB of data, 64 KiB on the wire;
 *   - Ring/LL128 at 1 GiB: 576,000 B of data, x 128/120 = 614,400 B;
 *   - Ring/Simple at 1 GiB on a 1 MiB step: a slice of 2 steps, 2 MiB;
 *     on NCCL's own buffer (0): 2 x 512 KiB;
 *   - Ring/Simple at 1 MiB: 1 MiB / 128 = 8192 B (eager on EFA);
 *   - Tree/LL128 at 4 MiB on 8 channels: 4 MiB / 8 = 512 KiB of data (a
 *     tree's channel carries its whole share), x 128/120 = 559,240.53, 559,241 B;
 *   - Tree/Simple at 1 GiB: one step, 1 MiB. */
/* The runting read (efa-rdm-cuda) and its peer's budget (libfabric
 * v1.22.0 efa_rdm_peer.c l. 235-278, net_protocol.c): the window of
 * runt_msgs messages a domain posts to one peer at once has its first
 * min(window, 307,200) bytes sent as packets of 8192 B, each 1.3 us of the
 * receiver's host, the last one's local read 2 us; a read (two flights,
 * 2 x 2 x 4.935 = 19.74 us on p4d) where the window exceeds the budget,
 * at the same time. One message: 16 KiB, 2 packets, 2 x 1.3 + 2 = 4.6 us,
 * no read; 8193 B, 2 packets, 4.6; 100 KiB (102,400 B), 12.5 -> 13
 * packets, 16.9 + 2 = 18.9; 307,200 B, 37.5 -> 38 packets, 49.4 + 2 = 51.4,
 * no read; 1 MiB, the same runt against the read's 19.74: 51.4. Two of 1
 * MiB (the second by the long read): 51.4. Two of 100 KiB: 204,800 B, 25
 * packets, 32.5 + 2 = 34.5; three: 307,200, 51.4; two of 150 KiB (153,600
 * B): 307,200 whole, 51.4, no read. With 30 us links (flights 120 us): 1
 * MiB 120, two of 150 KiB 51.4 (no read). 8192 B: eager, the copy's 2 us.
 * No window (0: a read in flight): 1 MiB the long read, 19.74. aws-ofi-rdma
 * has no runt: 0 above 8192 B. */
START_TEST(runting_read_shares_the_budget)
{
    const strata_net_protocol *efa = strata_net_protocol_find("efa-rdm-cuda");
    const strata_net_protocol *rdma = strata_net_protocol_find("aws-ofi-rdma");
    strata_hw_nics p4d = {.per_host = 4, .bandwidth = 12.5e9, .latency = 4.935e-6};
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &p4d, 16384, false, 1), 4.6e-6, 1e-12);
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &p4d, 8193, false, 1), 4.6e-6, 1e-12);
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &p4d, 102400, false, 1), 18.9e-6, 1e-12);
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &p4d, 307200, false, 1), 51.4e-6, 1e-12);
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &p4d, 1u << 20, false, 1), 51.4e-6, 1e-12);
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &p4d, 1u << 20, false, 2), 51.4e-6, 1e-12);
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &p4d, 102400, false, 2), 34.5e-6, 1e-12);
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &p4d, 102400, false, 3), 51.4e-6, 1e-12);
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &p4d, 153600, false, 2), 51.4e-6, 1e-12);
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &p4d, 8192, false, 1), 2e-6, 1e-15);
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &p4d, 1u << 20, false, 0), 19.74e-6, 1e-12);
    strata_hw_nics slow = {.per_host = 4, .bandwidth = 12.5e9, .latency = 30e-6};
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &slow, 1u << 20, false, 1), 120e-6, 1e-12);
    ck_assert_double_eq_tol(strata_net_protocol_extra_s(efa, &slow, 153600, false, 2), 51.4e-6, 1e-12);
    ck_assert(strata_net_protocol_extra_s(rdma, &p4d, 8193, false, 1) == 0);
    /* the price never falls as the message or the window grows: every 1 KiB to 2 MiB, 1 to 4 messages */
    for (uint32_t k = 1; k <= 4; k++) {
        double before = 0;
        for (uint64_t b = 1024; b <= (2u << 20); b += 1024) {
            double t = strata_net_protocol_extra_s(efa, &p4d, b, false, k);
            ck_assert_msg(t >= before, "%u x %" G_GUINT64_FORMAT " B: %g < %g", k, b, t, before);
            ck_assert(t >= strata_net_protocol_extra_s(efa, &p4d, b, false, k - 1) || k == 1);
            before = t;
        }
    }
}
END_TEST

/* The window a tree's first step posts (net_protocol.h): 2 nodes of 8,
 * ceil(channels / 8) messages a head rank's domain to its peer: 8 channels
 * 1, 9 channels 2, 16 2, 17 3; 4 nodes of 8 (32 ranks), 8 channels 1; a
 * ring's charged steps follow reads in flight: 0; one node 0; no channel 0. */
START_TEST(tree_first_step_window)
{
    ck_assert_uint_eq(strata_net_protocol_nccl_runt_msgs(STRATA_NCCL_TREE, 16, 2, 8), 1);
    ck_assert_uint_eq(strata_net_protocol_nccl_runt_msgs(STRATA_NCCL_TREE, 16, 2, 9), 2);
    ck_assert_uint_eq(strata_net_protocol_nccl_runt_msgs(STRATA_NCCL_TREE, 16, 2, 16), 2);
    ck_assert_uint_eq(strata_net_protocol_nccl_runt_msgs(STRATA_NCCL_TREE, 16, 2, 17), 3);
    ck_assert_uint_eq(strata_net_protocol_nccl_runt_msgs(STRATA_NCCL_TREE, 32, 4, 8), 1);
    ck_assert_uint_eq(strata_net_protocol_nccl_runt_msgs(STRATA_NCCL_RING, 16, 2, 8), 0);
    ck_assert_uint_eq(strata_net_protocol_nccl_runt_msgs(STRATA_NCCL_TREE, 8, 1, 8), 0);
    ck_assert_uint_eq(strata_net_protocol_nccl_runt_msgs(STRATA_NCCL_TREE, 16, 2, 0), 0);
}
END_TEST

START_TEST(nccl_message_of_a_step)
{
    ck_assert_uint_eq(strata_net_protocol_nccl_message(STRATA_NCCL_LL, STRATA_NCCL_RING, 8, 16, 8, 0), 2);
    ck_assert_uint_eq(strata_net_protocol_nccl_message(STRATA_NCCL_LL, STRATA_NCCL_RING, 1ull << 30, 16, 8, 0),
                      65536);
    ck_assert_uint_eq(strata_net_protocol_nccl_message(STRATA_NCCL_LL128, STRATA_NCCL_RING, 1ull << 30, 16, 8, 0),
                      614400);
    ck_assert_uint_eq(
        strata_net_protocol_nccl_message(STRATA_NCCL_SIMPLE, STRATA_NCCL_RING, 1ull << 30, 16, 8, 1u << 20),
        2u << 20);
    ck_assert_uint_eq(strata_net_protocol_nccl_message(STRATA_NCCL_SIMPLE, STRATA_NCCL_RING, 1ull << 30, 16, 8, 0),
                      1u << 20);
    ck_assert_uint_eq(strata_net_protocol_nccl_message(STRATA_NCCL_SIMPLE, STRATA_NCCL_RING, 1u << 20, 16, 8, 0),
                      8192);
    ck_assert_uint_eq(strata_net_protocol_nccl_message(STRATA_NCCL_LL128, STRATA_NCCL_TREE, 4u << 20, 16, 8, 0),
                      559241);
    ck_assert_uint_eq(
        strata_net_protocol_nccl_message(STRATA_NCCL_SIMPLE, STRATA_NCCL_TREE, 1ull << 30, 16, 8, 1u << 20),
        1u << 20);
}
END_TEST

/* h100-2x8-ib.ini's network without InfiniBand's framing (refused beside a protocol over EFA): the tests that price
 * EFA's rows by --set run on it. */
#define EFA_FILE "tests/data/hw/h100-2x8-efa.ini"

static strata_coll_tuning tune(const char *const *set, uint64_t bytes)
{
    strata_hw *hw = strata_test_load_hw_file(EFA_FILE, set);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_TO_ALL, 16, 8, bytes, 0, &t, NULL));
    strata_hw_free(hw);
    return t;
}

/* The network step of an all-to-all over 2 nodes of 8 (h100-2x8-efa: 1 us
 * a link, a flight 2 us), NCCL 2.28, its p2p step 1 MiB (nccl_buffsize 8
 * MiB, nccl_p2p_net_chunksize 1 MiB): a message is a peer's part on one of
 * its channels, per_peer / channels a peer, at most the step. In bytes
 * chosen to make it 8 KiB, 300 KiB and 1 MiB, efa-rdm-cuda adds 2 (the
 * eager message's local read), 2 x 2 = 4 and 4 us to the step's charge
 * (NCCL's ends, Simple's 3 us, stay under hwLatencies[NET]'s 14 less the
 * 2 us route); the file with no protocol (NCCL's IB transport, unframed) none,
 * beyond the receive's clear-to-send after the call before that NCCL's own
 * transport pays and a protocol's row does not (coll_impl_nccl.c
 * p2p_cts_s: 1 us of NCCL's network overhead and the 2 us flight, 3 us);
 * the plugin rows give theirs: aws-ofi-p4de-v1.8's SENDRECV over EFA 4 us
 * on its 128 KiB p2p step (its reads' flights, no clear-to-send added);
 * aws-ofi-p5's RDMA (above 8192 B the write, no PCIe link in this file: no
 * copy) waits, since wave 49, for the receive's control message as NCCL's
 * IB send waits for its FIFO entry (strata_net_protocol_waits_ctrl): the
 * same 1 + 2 = 3 us, so the plain file's figure. */
START_TEST(network_step_pays_the_protocol)
{
    const char *ib[] = {NV "nccl_version=2.28", NV "nccl_buffsize=8MiB", NV "nccl_p2p_net_chunksize=1MiB", NULL};
    const char *efa[] = {NV "nccl_version=2.28", NV "nccl_buffsize=8MiB", NV "nccl_p2p_net_chunksize=1MiB",
                         NV "nccl_net_protocol=efa-rdm-cuda", NULL};
    strata_coll_tuning t = tune(ib, 16u << 20);
    ck_assert_uint_eq(t.p2p.step_bytes, 1u << 20);
    uint64_t per_peer_channels = t.p2p.per_peer;
    uint64_t msgs[] = {8192, 307200, 1u << 20};
    double extra[] = {2e-6, 4e-6, 4e-6};
    for (size_t i = 0; i < G_N_ELEMENTS(msgs); i++) {
        uint64_t bytes = 16 * per_peer_channels * msgs[i];
        double base = tune(ib, bytes).net_step_s - 3e-6; /* less the clear-to-send */
        ck_assert_double_eq_tol(tune(efa, bytes).net_step_s - base, extra[i], 1e-12);
    }
    const char *plain[] = {NV "nccl_version=2.28", NULL};
    const char *p4de[] = {NV "nccl_version=2.28", NV "nccl_net_plugin=aws-ofi-p4de-v1.8", NULL};
    const char *p5[] = {NV "nccl_version=2.28", NV "nccl_net_plugin=aws-ofi-p5", NULL};
    double plain_s = tune(plain, 64u << 20).net_step_s;
    ck_assert_double_eq_tol(tune(p4de, 64u << 20).net_step_s - (plain_s - 3e-6), 4e-6, 1e-12); /* its row's */
    ck_assert_double_eq_tol(tune(p5, 64u << 20).net_step_s, plain_s, 1e-12);
    static const char head[] = STRATA_TEST_NCCL_HW_HEAD;
    strata_test_hw_text_refused(head, "nccl_net_protocol = tcp\n",
                                "t.ini:15: [interconnect x] nccl_net_protocol: expected a network protocol strata "
                                "has the row of: efa-rdm-cuda, aws-ofi-rdma, cxi-sendrecv");
}
END_TEST

/* The same on held-out/hw/p4d-efa.ini (2 x 8 A100, 4.935 us a link: a
 * flight 9.87 us; it names nccl_net_protocol = efa-rdm-cuda), its p2p step
 * 1 MiB as above, against the same file on aws-ofi-rdma (above 8192 B the
 * write, which waits for the receive's control message: NCCL's network
 * overhead 1 us and its flight 9.87 us, 10.87 us, strata_net_protocol_waits_ctrl;
 * below it the same local read, no PCIe link in the file): messages of 8 KiB, 300
 * KiB and 1 MiB pay 0, 2 x 9.87 - 10.87 = 8.87 and 8.87 us more a network
 * step on efa-rdm-cuda, whose read's two flights (the whole message 1, 3
 * and 3 flights: flights_and_copy_by_message_size) hold its handshake. */
START_TEST(p4d_file_pays_the_read_flights)
{
    const char *efa[] = {NV "nccl_buffsize=8MiB", NV "nccl_p2p_net_chunksize=1MiB", NULL};
    const char *rdma[] = {NV "nccl_buffsize=8MiB", NV "nccl_p2p_net_chunksize=1MiB",
                          NV "nccl_net_protocol=aws-ofi-rdma", NULL};
    strata_hw *e = strata_test_load_hw_file("validation/held-out/hw/p4d-efa.ini", efa);
    strata_hw *r = strata_test_load_hw_file("validation/held-out/hw/p4d-efa.ini", rdma);
    strata_coll_tuning te, tr;
    ck_assert(strata_hw_coll_impl(e)->tune(e, STRATA_OP_ALL_TO_ALL, 16, 8, 16u << 20, 0, &te, NULL));
    ck_assert_uint_eq(te.p2p.step_bytes, 1u << 20);
    uint64_t msgs[] = {8192, 307200, 1u << 20};
    double extra[] = {0, 8.87e-6, 8.87e-6};
    for (size_t i = 0; i < G_N_ELEMENTS(msgs); i++) {
        uint64_t bytes = 16 * (uint64_t)te.p2p.per_peer * msgs[i];
        ck_assert(strata_hw_coll_impl(e)->tune(e, STRATA_OP_ALL_TO_ALL, 16, 8, bytes, 0, &te, NULL));
        ck_assert(strata_hw_coll_impl(r)->tune(r, STRATA_OP_ALL_TO_ALL, 16, 8, bytes, 0, &tr, NULL));
        ck_assert_double_eq_tol(te.net_step_s - tr.net_step_s, extra[i], 1e-12);
    }
    strata_hw_free(e);
    strata_hw_free(r);
}
END_TEST

/* The EFA step (wave 34) on held-out/hw/p4d-efa.ini (2 x 8 A100, NCCL as
 * a100-8.ini: NET_LAT_OLD's Ring row 2.7 / 4.0 / 14 us; a flight 9.87 us;
 * efa-rdm-cuda), an 8 B all-reduce of 16 ranks on Ring, each protocol
 * forced. NCCL's message is 1 B of data (8 B over 16 ranks x its
 * channels, at least 1), eager: the local read's 2 us. The step's fixed
 * charge is max(hwLat - route, NCCL's ends):
 *   - LL: max(2.7 - 9.87, 1.5) + 2 = 3.5 us (before wave 34: 0);
 *   - LL128: max(4.0 - 9.87, 2.0) + 2 = 4.0 us (before: 0);
 *   - Simple: max(14 - 9.87, 3.0) + 2 = 6.13 us (before: 4.13).
 * And the proxies' pass (wave 35, nccl_proxy_pass.h): one channel (8 B is
 * far below tune_channels' cut), a ring crossing 2 x 2 times over 16
 * ranks, ceil(4 / 16) = 1 operation on a rank's proxy; a pass is its one
 * test's queue read (efa-rdm-cuda: one queue, 0.5 us) and the yield's 0.3
 * us, 0.8 us; LL and LL128 wait one pass, Simple 1.5 (1.2 us). So LL 3.5 +
 * 0.8 = 4.3 us, LL128 4.0 + 0.8 = 4.8 us, Simple 6.13 + 1.2 = 7.33 us.
 * One 8 B message over the path, NCCL's LL step: the route's 9.87 us + 4.3
 * = 14.17 us and its 2 wire bytes at 12.5 GB/s. The same all-reduce on
 * h100-2x8-ib (no protocol: InfiniBand, 1 us a link) keeps NCCL's 2.7 - 2
 * = 0.7 us on LL. */
START_TEST(efa_step_pays_nccls_ends_and_the_local_read)
{
    const char *protos[] = {"LL", "LL128", "Simple"};
    double want[] = {3.5e-6 + 0.8e-6, 4.0e-6 + 0.8e-6, 14e-6 - 9.87e-6 + 2e-6 + 1.2e-6};
    for (size_t i = 0; i < G_N_ELEMENTS(protos); i++) {
        char *proto = g_strdup_printf(NV "nccl_proto=%s", protos[i]);
        const char *set[] = {NV "nccl_algo=Ring", proto, NULL};
        strata_hw *hw = strata_test_load_hw_file("validation/held-out/hw/p4d-efa.ini", set);
        strata_coll_tuning t;
        ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 8, 0, &t, NULL));
        ck_assert_int_eq(t.proto, (int)i);
        ck_assert_double_eq_tol(t.net_step_s, want[i], 1e-12);
        strata_hw_free(hw);
        g_free(proto);
    }
    const char *ll[] = {NV "nccl_algo=Ring", NV "nccl_proto=LL", NULL};
    strata_hw *ib = strata_test_load_hw("h100-2x8-ib", ll);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(ib)->tune(ib, STRATA_OP_ALL_REDUCE, 16, 8, 8, 0, &t, NULL));
    ck_assert_double_eq_tol(t.net_step_s, 0.7e-6, 1e-12);
    strata_hw_free(ib);
}
END_TEST

/* `strata run` of an 8 B all-reduce over 16 ranks on tests/data/hw/h100-2x8-efa.ini
 * with `sets`: collective 0's time_s (--json -). */
static double all_reduce_8b_s(const char *const *sets)
{
    char *trace = NULL;
    int fd = g_file_open_tmp("netproto-XXXXXX.trace", &trace, NULL);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert(g_file_set_contents(
        trace, "strata-trace 1\noption mesh=data:16\nalloc buf 8 dtype=f32\nall-reduce buf axis=data\nfree buf\n", -1,
        NULL));
    char *hw = strata_test_source_path(EFA_FILE);
    const char *const argv[] = {"run", "-q", "--trace", trace, "--hw", hw, "--json", "-", NULL};
    strata_cli_result r = strata_test_run_cli_sets(argv, sets);
    ck_assert_msg(r.status == 0, "%s", r.err);
    JsonParser *parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, r.out, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonArray *colls = json_object_get_array_member(root, "collectives");
    ck_assert_uint_eq(json_array_get_length(colls), 1);
    double t = json_object_get_double_member(json_array_get_object_element(colls, 0), "time_s");
    g_object_unref(parser);
    strata_cli_result_clear(&r);
    g_unlink(trace);
    g_free(trace);
    g_free(hw);
    return t;
}

/* A 2-node 16-rank Ring/LL all-reduce of 8 B (h100-2x8-efa: 1 us a link, a
 * route of 2 us; NCCL 2.25, Ring and LL forced), with and without
 * efa-rdm-cuda. The ring's last loop rounds its chunk up to 16 B, so chunk 0
 * alone carries bytes (test_tiers nccl_ring_rounds_tiny_chunks_to_16_bytes)
 * and the network step's cost falls on its path (coll_kit_tiers.c
 * ring_critical_chunk, among the chunks that carry bytes). Rail ring 0 is
 * 0..7 then 15..8: it crosses between nodes on 7 -> 15 and 8 -> 0. Chunk 0's
 * path takes every hop but the one into position 1 in its reduce-scatter
 * (0 -> 1, inside the node: both crossings) and every hop but the one into
 * position 0 in its all-gather (8 -> 0, a crossing: one), so 3 network hops.
 * Each pays, without the protocol, NCCL's 2.7 us less the route = 0.7 us;
 * with efa-rdm-cuda max(0.7, LL's ends 1.5) + the eager local read 2 +
 * the proxies' pass 0.8 (one operation a proxy: ceil(2 x 2 x 1 channel /
 * 16); its test's 0.5 us and the yield's 0.3) = 4.3 us (its 2 wire bytes at
 * the NIC's PCIe rate, under 0.1 ns, within the tolerance). So the
 * collective takes 3 x (4.3 - 0.7) = 10.8 us more. */
START_TEST(ring_path_pays_the_efa_step_on_its_three_hops)
{
    const char *ib[] = {NV "nccl_version=2.25", NV "nccl_algo=Ring", NV "nccl_proto=LL", NULL};
    const char *efa[] = {NV "nccl_version=2.25", NV "nccl_algo=Ring", NV "nccl_proto=LL",
                         NV "nccl_net_protocol=efa-rdm-cuda", NULL};
    ck_assert_double_eq_tol(all_reduce_8b_s(efa) - all_reduce_8b_s(ib), 10.8e-6, 1e-9);
}
END_TEST

/* The proxy pass (nccl_proxy_pass.h), by hand:
 *   - operations on a rank's proxy: a 2-node ring of 16 ranks on 8
 *     channels crosses 2 x 2 times a channel, ceil(4 x 8 / 16) = 2; on 1
 *     channel ceil(4 / 16) = 1; a tree over 4 nodes of 32 ranks on 16
 *     channels, 3 edges each way at both ends, ceil(4 x 3 x 16 / 32) = 6;
 *     one node: 1;
 *   - a pass of 2 operations: efa-rdm-cuda (one queue a test, 0.5 us) 2 x
 *     0.5 + the yield's 0.3 = 1.3 us, whatever the rails; aws-ofi-rdma over
 *     4 rails (a queue each) 2 x 4 x 0.5 + 0.3 = 4.3 us, over 1 rail 1.3;
 *   - a step: LL one pass, Simple 1.5 where the receiver flushes (below
 *     compute capability 9.0), else 1: efa-rdm-cuda's 8-channel ring on 2
 *     nodes 1.3 and 1.95 us; aws-ofi-rdma's on 4 rails, LL128, 4.3 us,
 *     Simple 4.3 without a flush (Hopper), 6.45 with one;
 *   - no row, one node, or a row without queue reads (a copy of
 *     efa-rdm-cuda with cq_read_s 0): 0. */
START_TEST(proxy_pass_by_operations_and_rails)
{
    ck_assert_uint_eq(strata_nccl_proxy_pass_ops(STRATA_NCCL_RING, 16, 2, 8), 2);
    ck_assert_uint_eq(strata_nccl_proxy_pass_ops(STRATA_NCCL_RING, 16, 2, 1), 1);
    ck_assert_uint_eq(strata_nccl_proxy_pass_ops(STRATA_NCCL_TREE, 32, 4, 16), 6);
    ck_assert_uint_eq(strata_nccl_proxy_pass_ops(STRATA_NCCL_RING, 8, 1, 8), 1);
    const strata_net_protocol *efa = strata_net_protocol_find("efa-rdm-cuda");
    const strata_net_protocol *rdma = strata_net_protocol_find("aws-ofi-rdma");
    ck_assert_ptr_nonnull(efa);
    ck_assert_ptr_nonnull(rdma);
    ck_assert_double_eq_tol(strata_nccl_proxy_pass_s(efa, 2, 4), 1.3e-6, 1e-12);
    ck_assert_double_eq_tol(strata_nccl_proxy_pass_s(rdma, 2, 4), 4.3e-6, 1e-12);
    ck_assert_double_eq_tol(strata_nccl_proxy_pass_s(rdma, 2, 1), 1.3e-6, 1e-12);
    ck_assert_double_eq_tol(
        strata_nccl_proxy_pass_step_s(efa, STRATA_NCCL_LL, STRATA_NCCL_RING, 16, 2, 8, 1, true), 1.3e-6, 1e-12);
    ck_assert_double_eq_tol(
        strata_nccl_proxy_pass_step_s(efa, STRATA_NCCL_SIMPLE, STRATA_NCCL_RING, 16, 2, 8, 1, true), 1.95e-6, 1e-12);
    ck_assert_double_eq_tol(
        strata_nccl_proxy_pass_step_s(rdma, STRATA_NCCL_LL128, STRATA_NCCL_RING, 16, 2, 8, 4, true), 4.3e-6, 1e-12);
    /* Hopper on (no flush): Simple one pass, as LL: aws-ofi-rdma on 4 rails 4.3 us, not 6.45 */
    ck_assert_double_eq_tol(
        strata_nccl_proxy_pass_step_s(rdma, STRATA_NCCL_SIMPLE, STRATA_NCCL_RING, 16, 2, 8, 4, false), 4.3e-6, 1e-12);
    ck_assert_double_eq_tol(
        strata_nccl_proxy_pass_step_s(rdma, STRATA_NCCL_SIMPLE, STRATA_NCCL_RING, 16, 2, 8, 4, true), 6.45e-6, 1e-12);
    ck_assert_double_eq(strata_nccl_proxy_pass_step_s(NULL, STRATA_NCCL_LL, STRATA_NCCL_RING, 16, 2, 8, 1, true), 0);
    ck_assert_double_eq(strata_nccl_proxy_pass_step_s(efa, STRATA_NCCL_LL, STRATA_NCCL_RING, 8, 1, 8, 1, true), 0);
    strata_net_protocol none = *efa;
    none.cq_read_s = 0;
    ck_assert_double_eq(strata_nccl_proxy_pass_step_s(&none, STRATA_NCCL_LL, STRATA_NCCL_RING, 16, 2, 8, 1, true), 0);
}
END_TEST

/* p5-efa.ini (2 x 8 H100, aws-ofi-p5: the RDMA protocol, NIC groups of 4;
 * 5 us a link, a route of 10 us), an 8 B Ring/LL all-reduce of 16 ranks:
 * NCCL's LL hwLatency less the route is below 0, so NCCL's LL ends 1.5 us;
 * the eager message's local read 2 us (its 2 wire bytes at the NIC's PCIe
 * rate under 0.1 ns, within the tolerance); the proxies' pass, one
 * operation (ceil(4 x 1 channel / 16)) whose test reads the group's 4
 * rails' queues: 4 x 0.5 + 0.3 = 2.3 us. So 1.5 + 2 + 2.3 = 5.8 us. */
START_TEST(p5_step_pays_a_pass_over_four_rails)
{
    const char *set[] = {NV "nccl_algo=Ring", NV "nccl_proto=LL", NULL};
    strata_hw *hw = strata_test_load_hw_file("validation/hw/p5-efa.ini", set);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 8, 0, &t, NULL));
    ck_assert_uint_eq(t.channels, 1);
    ck_assert_double_eq_tol(t.net_step_s, 5.8e-6, 1e-9);
    strata_hw_free(hw);
}
END_TEST

/* The same 8 B all-reduce on Tree/LL (wave 38): a tree's receive, posted
 * when the collective before ended on that edge, has sent its control
 * message before the sender's data (net_protocol.c), so aws-ofi-rdma sends
 * the 16 wire bytes as the RDMA write: no eager copy. NCCL's Tree/LL
 * hwLatency over the network (5.0 us) less the 10 us route is below 0, so
 * LL's ends 1.5 us; the proxies' pass, a tree over 2 nodes on 1 channel,
 * ceil(4 x 1 x 1 / 16) = 1 operation reading 4 rails: 4 x 0.5 + 0.3 = 2.3
 * us. So 1.5 + 2.3 = 3.8 us (5.8 before: the copy's 2 us). The file on
 * efa-rdm-cuda (SENDRECV: its provider copies every eager packet): 1.5 +
 * the copy's 2 + a pass reading one queue, 0.5 + 0.3 = 4.3 us. */
START_TEST(p5_tree_step_writes_small_messages)
{
    const char *set[] = {NV "nccl_algo=Tree", NV "nccl_proto=LL", NULL};
    const char *sr[] = {NV "nccl_algo=Tree", NV "nccl_proto=LL", NV "nccl_net_protocol=efa-rdm-cuda", NULL};
    double want[] = {3.8e-6, 4.3e-6};
    const char *const *sets[] = {set, sr};
    for (size_t i = 0; i < G_N_ELEMENTS(sets); i++) {
        strata_hw *hw = strata_test_load_hw_file("validation/hw/p5-efa.ini", sets[i]);
        strata_coll_tuning t;
        ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, 8, 0, &t, NULL));
        ck_assert_int_eq(t.algo, STRATA_NCCL_TREE);
        ck_assert_uint_eq(t.channels, 1);
        ck_assert_double_eq_tol(t.net_step_s, want[i], 1e-9);
        strata_hw_free(hw);
    }
}
END_TEST


/* A Tree/Simple all-reduce on held-out/hw/p4d-efa.ini as held-out set 24
 * runs it (NCCL 2.25, aws-ofi-p4d's 8 MiB buffer: 1 MiB steps), 8
 * channels from 1 MiB: a network step is NCCL's hwLatencies[NET] for Tree
 * Simple on Ampere, 14 us, less the route (2 x 4.935 = 9.87): 4.13 us, plus
 * the proxy passes (nccl_proxy_pass.h), plus the runting read of the
 * first step's window, one message a channel's head to its peer
 * (runting_read_shares_the_budget): 1 MiB, 128 KiB a channel, 16 packets,
 * 16 x 1.3 + 2 = 22.8 us; 8 MiB, 1 MiB a channel, the runt's 38 packets,
 * 51.4 us against the read's 19.74. 12 MiB and 64 MiB (two and eight steps
 * a channel, the later ones by the long read while the first's read is in
 * flight) pay what 8 MiB pays: wave 43 charged 12 MiB the read's 19.74, 31.66
 * us less than 8 MiB, and the collective's time fell. */
START_TEST(p4d_tree_step_pays_the_first_window)
{
    const char *set[] = {NV "nccl_version=2.25", NV "nccl_net_plugin=aws-ofi-p4d", NV "nccl_algo=Tree", NULL};
    strata_hw *hw = strata_test_load_hw_file("validation/held-out/hw/p4d-efa.ini", set);
    const strata_net_protocol *efa = strata_net_protocol_find("efa-rdm-cuda");
    double pass = strata_nccl_proxy_pass_step_s(efa, STRATA_NCCL_SIMPLE, STRATA_NCCL_TREE, 16, 2, 8, 1, true);
    uint64_t sizes[] = {1u << 20, 8u << 20, 12u << 20, 64u << 20};
    double runt[] = {22.8e-6, 51.4e-6, 51.4e-6, 51.4e-6};
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        strata_coll_tuning t;
        ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 16, 8, sizes[i], 0, &t, NULL));
        ck_assert_int_eq(t.algo, STRATA_NCCL_TREE);
        ck_assert_int_eq(t.proto, STRATA_NCCL_SIMPLE);
        ck_assert_uint_eq(t.channels, 8);
        ck_assert_double_eq_tol(t.net_step_s, 14e-6 - 9.87e-6 + pass + runt[i], 1e-9);
    }
    strata_hw_free(hw);
}
END_TEST

static Suite *net_protocol_suite(void)
{
    Suite *s = suite_create("net_protocol");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, flights_and_copy_by_message_size);
    tcase_add_test(tc, runting_read_shares_the_budget);
    tcase_add_test(tc, tree_first_step_window);
    tcase_add_test(tc, p4d_tree_step_pays_the_first_window);
    tcase_add_test(tc, nccl_message_of_a_step);
    tcase_add_test(tc, network_step_pays_the_protocol);
    tcase_add_test(tc, p4d_file_pays_the_read_flights);
    tcase_add_test(tc, efa_step_pays_nccls_ends_and_the_local_read);
    tcase_add_test(tc, ring_path_pays_the_efa_step_on_its_three_hops);
    tcase_add_test(tc, proxy_pass_by_operations_and_rails);
    tcase_add_test(tc, p5_step_pays_a_pass_over_four_rails);
    tcase_add_test(tc, p5_tree_step_writes_small_messages);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(net_protocol_suite()); }
