/*
 * test_nccl_net_channels.c: the channels NCCL builds for a communicator
 * across nodes (sim/hw/nccl_tuning.h strata_nccl_net_graph,
 * strata_nccl_comm_channels, strata_nccl_nvls_graph), for named
 * topologies, each derived by hand from NVIDIA/nccl's sources:
 *   - src/graph/search.cc ncclTopoCompute (v2.26.6-1 l. 973-1108, v2.30.7-1
 *     l. 1142-1300): the search starts at the first speed of the
 *     inter-node array (sm90SpeedArrayInter {48, 45, 42, 40, 30, 24, 22,
 *     ...}, sm100SpeedArrayInter {96, 86, 80, 48, 45.1, 42, 40, 30, 24,
 *     22, ...}) a NIC's path carries, keeps the graph with the most
 *     channels x speed (ncclTopoCompareGraphs: a tie keeps the first), and
 *     lowers the speed while the next is above .49 of the best found;
 *     ncclTopoDupChannels (v2.26.6-1 l. 897-910): doubles the channels at
 *     half the speed when bwIntra >= 25, except "ccMin > 80 && bwIntra <
 *     50 && nChannels > 4"; pass 2 raises no ring (a faster speed for as
 *     many channels would have been found in pass 1);
 *   - src/graph/connect.cc ncclTopoPostset (v2.26.6-1 l. 452-495):
 *     comm->nChannels = the ring graph's x 2; x 2 again "if
 *     (comm->minCompCap >= 90 && comm->nNodes > 1 && graphs[RING]->bwIntra
 *     > 45.0 && nChannels < 16)"; raised to comm->nvlsChannels where NVLS
 *     runs ("if (comm->nChannels < comm->nvlsChannels)", v2.25.1-1 to
 *     v2.27.7-1 l. 493-495; no such line in v2.28.3-1, v2.28.7-1,
 *     v2.29.7-1 l. 495-501 or master @5067397 l. 508-520);
 *     Blackwell's arrays change by release (nccl_versions.c);
 *   - src/transport/nvls.cc ncclNvlsInit: no NVLS (nvlsChannels 0) when
 *     "gpuCount <= 2" (v2.26.6-1 l. 157, v2.27.7-1 l. 160), "gpuCount < 2"
 *     from v2.28.7-1 (l. 161), gpuCount being the node's GPUs.
 * A NIC of 400 Gb/s is NCCL's 50 GB/s (net.bw = speed / 8000).
 *
 * Evidence from a log: NVIDIA/nccl#1291 (two GH200, one per node, one NDR
 * 400 Gb/s IB NIC each: "nRanks 2 nNodes 2 localRanks 1", "Channel 00/04 :
 * 0 1"): 4 channels, as the first case below derives. NVIDIA/nccl#1189
 * (two H20 nodes, 2 ranks a node, a source build of 2025 whose release is
 * not printed): "8 coll channels, 0 collnet channels, 0 nvls channels", as
 * nvls_needs_the_releases_gpus_a_node derives before v2.28 for NICs of 400
 * Gb/s (the log does not print their speed).
 */
#include <check.h>
#include "hw/nccl_tuning.h"
#include "testutil.h"

/* Two nodes of `ppn` GPUs, `nics` NICs of `nic_gbs` each, one per GPU up
 * to the NICs; the one-node ring graph of dgx-h100.ini (12 x 30 GB/s) or
 * hgx-b200.ini (16 x 45 GB/s); NVLink SHARP switches. */
static strata_nccl_comm two_nodes(strata_nccl_arch arch, uint32_t ppn, uint32_t nics, double nic_gbs,
                                  const char *release)
{
    bool bw = arch == STRATA_NCCL_BLACKWELL;
    strata_nccl_comm c = {.arch = arch, .ranks = 2 * ppn, .graph_channels = bw ? 16 : 12,
                          .channel_gbs = bw ? 45.0 : 30.0, .nvls = true, .nodes = 2, .nics = nics,
                          .nic_gbs = nic_gbs, .nic_gpus = nics < ppn ? nics : ppn,
                          .version = strata_nccl_version_find(release)};
    ck_assert_ptr_nonnull(c.version);
    return c;
}

/* two_nodes' communicator, checked: its ring graph through the NICs
 * (channels x GB/s) and comm->nChannels */
static strata_nccl_comm expect(strata_nccl_arch arch, uint32_t ppn, uint32_t nics, double nic_gbs, const char *release,
                               uint32_t graph_channels, double graph_gbs, uint32_t comm_channels)
{
    strata_nccl_comm c = two_nodes(arch, ppn, nics, nic_gbs, release);
    uint32_t ch;
    double bw;
    strata_nccl_net_graph(&c, &ch, &bw);
    ck_assert_uint_eq(ch, graph_channels);
    ck_assert_double_eq_tol(bw, graph_gbs, 1e-12);
    ck_assert_uint_eq(strata_nccl_comm_channels(&c), comm_channels);
    return c;
}

/* One H200 and one 400 Gb/s NIC a node (GCP A3 Ultra 2x1; GH200 in
 * nccl#1291): at 48 the NIC carries 1 channel (48); 45 to 30 carry 1; 24
 * carries 2 (48, no better); 22 / 48 < .49 ends the search: 1 x 48.
 * Duplicated (1 channel): 2 x 24. comm->nChannels 2 x 2 = 4; bwIntra 24
 * is not above 45; one GPU a node: no NVLS in any release. strata raised
 * it to Hopper's 16 NVLS channels before wave 21. */
START_TEST(one_hopper_and_one_nic_a_node)
{
    const char *releases[] = {"2.25", "2.26", "2.27", "2.28", "2.30"};
    for (size_t i = 0; i < sizeof releases / sizeof releases[0]; i++) {
        strata_nccl_comm c = expect(STRATA_NCCL_HOPPER, 1, 1, 50.0, releases[i], 2, 24.0, 4);
        uint32_t ch;
        double bw;
        ck_assert(!strata_nccl_nvls_graph(&c, &ch, &bw));
    }
}
END_TEST

/* 8 H100 and 8 400 Gb/s NICs a node (DGX H100, p5 with its 4 EFA NICs
 * a GPU grouped as one): at 48, 370.8 / 48 = 7 channels fit the NVLinks
 * (336); at 45 one a NIC, 8 (360, the NVLinks' 12 x 30 here: full); no
 * duplication (SM90, below 50, more than 4): 8 x 45, comm->nChannels 16
 * (bwIntra 45 is not above 45), NVLS's 16 no more. */
START_TEST(eight_hoppers_and_eight_nics_a_node)
{
    strata_nccl_comm c = expect(STRATA_NCCL_HOPPER, 8, 8, 50.0, "2.26", 8, 45.0, 16);
    c.nvls = false;
    ck_assert_uint_eq(strata_nccl_comm_channels(&c), 16);
}
END_TEST

/* 8 B200 and 8 400 Gb/s NICs a node (GCP A4 2x8): 48, one a NIC: 8 x 48
 * (384 of the NVLinks' 720); 24 gives 16 x 24 (no better); no duplication
 * (more than 4 channels below 50): comm->nChannels 16, which the rule for
 * bwIntra 48 > 45 leaves (not below 16); in v2.26 NVLS raises it to 32
 * (NVLS_NCHANNELS_SM100); v2.30 runs NVLS on 32 too
 * (ncclNvlsTreeSm100Tuning, 2 nodes, NIC >= 48) but no longer raises the
 * rings': 16. */
START_TEST(eight_blackwells_and_eight_nics_a_node)
{
    strata_nccl_comm c = expect(STRATA_NCCL_BLACKWELL, 8, 8, 50.0, "2.26", 8, 48.0, 32);
    c.nvls = false;
    ck_assert_uint_eq(strata_nccl_comm_channels(&c), 16);
    expect(STRATA_NCCL_BLACKWELL, 8, 8, 50.0, "2.30", 8, 48.0, 16);
}
END_TEST

/* Topologies whose graph and communicator are all there is to check.
 * One B200 and one 400 Gb/s NIC a node (GCP A4 2x1): 96, 86 and 80 are
 * above the NIC; 48 carries 1 channel; 24 gives 2 x 24 (no better); 22 /
 * 48 ends it: 1 x 48, duplicated to 2 x 24; comm->nChannels 4, where
 * strata ran NVLS_NCHANNELS_SM100's 32 before wave 21.
 * The rule for fast channels (connect.cc, "Use 4 compute channels per
 * search channel to reach peak BW on <8 PPN"). One B200 and one 800 Gb/s
 * NIC (100 GB/s) a node: 96 carries 1 channel; 86 and 80 carry 1; 48
 * carries 2 (96, no better); 45.1 / 96 < .49 ends it: 1 x 96, duplicated
 * to 2 x 48; comm->nChannels 4, then 48 > 45 and 4 < 16: 8. One H100 and
 * the same NIC: 48 carries 2 (96); 24 carries 4 (96, no better): 2 x 48,
 * duplicated (2 channels) to 4 x 24; comm->nChannels 8, not doubled again
 * (24). Blackwell's inter-node array by release (search.cc
 * sm100SpeedArrayInter): v2.26.6-1's starts at 48 (Hopper's): the 100
 * GB/s NIC carries 2 x 48 (24 gives 4 x 24, no better; 22 / 48 ends it),
 * duplicated (2 channels) to 4 x 24, comm->nChannels 8; v2.27.7-1's
 * starts {96, 48, 45.1}: 1 x 96 (48 gives 2 x 48, no better; 45.1 / 96 <
 * .49), 2 x 48, 4, doubled again: 8. */
static const struct {
    strata_nccl_arch arch;
    double nic_gbs;
    const char *release;
    uint32_t graph_channels;
    double graph_gbs;
    uint32_t comm_channels;
} one_gpu_a_node[] = {
    {STRATA_NCCL_BLACKWELL, 50.0, "2.26", 2, 24.0, 4},
    {STRATA_NCCL_BLACKWELL, 50.0, "2.30", 2, 24.0, 4},
    {STRATA_NCCL_BLACKWELL, 100.0, "2.30", 2, 48.0, 8},
    {STRATA_NCCL_HOPPER, 100.0, "2.30", 4, 24.0, 8},
    {STRATA_NCCL_BLACKWELL, 100.0, "2.26", 4, 24.0, 8},
    {STRATA_NCCL_BLACKWELL, 100.0, "2.27", 2, 48.0, 8},
};

START_TEST(one_gpu_and_one_nic_a_node)
{
    for (size_t i = 0; i < sizeof one_gpu_a_node / sizeof one_gpu_a_node[0]; i++)
        expect(one_gpu_a_node[i].arch, 1, 1, one_gpu_a_node[i].nic_gbs, one_gpu_a_node[i].release,
               one_gpu_a_node[i].graph_channels, one_gpu_a_node[i].graph_gbs, one_gpu_a_node[i].comm_channels);
}
END_TEST

/* Two GPUs a node, a 400 Gb/s NIC each (H100): 48, one a NIC: 2 x 48
 * (96); 24 gives 4 x 24 (no better): 2 x 48, duplicated to 4 x 24;
 * comm->nChannels 8. Two GPUs get no NVLS to v2.27 ("gpuCount <= 2"): 8;
 * from v2.28 they do, and NVLS's 16 channels no longer raise it: 8. On one node
 * of two H100 the same: no NVLS graph in v2.26, one of 2 channels in
 * v2.30. */
START_TEST(nvls_needs_the_releases_gpus_a_node)
{
    uint32_t ch;
    double bw;
    strata_nccl_comm c = expect(STRATA_NCCL_HOPPER, 2, 2, 50.0, "2.26", 4, 24.0, 8);
    ck_assert(!strata_nccl_nvls_graph(&c, &ch, &bw));
    c = expect(STRATA_NCCL_HOPPER, 2, 2, 50.0, "2.28", 4, 24.0, 8);
    ck_assert(strata_nccl_nvls_graph(&c, &ch, &bw));
    ck_assert_uint_eq(ch, 2);
    strata_nccl_comm one = {.arch = STRATA_NCCL_HOPPER, .ranks = 2, .graph_channels = 12, .channel_gbs = 30.0,
                            .nvls = true, .version = strata_nccl_version_find("2.26")};
    ck_assert(!strata_nccl_nvls_graph(&one, &ch, &bw));
    ck_assert_uint_eq(strata_nccl_comm_channels(&one), 24);
    one.version = strata_nccl_version_find("2.30");
    ck_assert(strata_nccl_nvls_graph(&one, &ch, &bw));
    ck_assert_uint_eq(ch, 2);
    /* Blackwell's NVLS graph by release (sm100SpeedArrayIntra): 8 B200
     * whose ring graph is 16 x 26 = 416 GB/s: (8 + 1) x 45 = 405 fits
     * from v2.29.7-1, whose array has 45; v2.26.6-1's goes from 50 (450)
     * to 40 */
    strata_nccl_comm b200 = {.arch = STRATA_NCCL_BLACKWELL, .ranks = 8, .graph_channels = 16, .channel_gbs = 26.0,
                             .nvls = true, .version = strata_nccl_version_find("2.29")};
    ck_assert(strata_nccl_nvls_graph(&b200, &ch, &bw));
    ck_assert_double_eq_tol(bw, 45.0, 1e-12);
    b200.version = strata_nccl_version_find("2.26");
    ck_assert(strata_nccl_nvls_graph(&b200, &ch, &bw));
    ck_assert_double_eq_tol(bw, 40.0, 1e-12);
    /* three GPUs: NVLS in every release */
    one.ranks = 3;
    one.version = strata_nccl_version_find("2.26");
    ck_assert(strata_nccl_nvls_graph(&one, &ch, &bw));
    ck_assert_uint_eq(ch, 3);
}
END_TEST

/* The raise by release (strata_nccl_version nvls_raises_ring). Three
 * H100 and three 400 Gb/s NICs a node: at 48 one a NIC, 3 x 48 (144 of
 * the NVLinks' 360); 24 gives 6 x 24 (no better); 22 / 48 < .49 ends it:
 * 3 x 48, duplicated (3 channels, not more than 4) to 6 x 24;
 * comm->nChannels 2 x 6 = 12 (bwIntra 24 is not above 45). Three GPUs a
 * node run NVLS in every release (gpuCount 3) on Hopper's 16 channels:
 * v2.25, v2.26 and v2.27 raise the rings' to 16; v2.28, v2.29 and v2.30
 * keep 12. v2.19 (one node only: no rule across nodes) has no raise
 * either: one node of 3 H100 whose ring graph is 4 x 30 (120, so that
 * (3 + 1) x 30 fits the NVLS search) runs 8 rings and NVLS on 16, raised
 * to 16 in 2.27, 8 in 2.19 and 2.28. */
START_TEST(nvls_raises_the_rings_to_v2_27)
{
    const char *raise[] = {"2.25", "2.26", "2.27"}, *keep[] = {"2.28", "2.29", "2.30"};
    uint32_t ch;
    double bw;
    for (size_t i = 0; i < 3; i++) {
        strata_nccl_comm c = expect(STRATA_NCCL_HOPPER, 3, 3, 50.0, raise[i], 6, 24.0, 16);
        ck_assert(strata_nccl_nvls_graph(&c, &ch, &bw));
        c = expect(STRATA_NCCL_HOPPER, 3, 3, 50.0, keep[i], 6, 24.0, 12);
        ck_assert(strata_nccl_nvls_graph(&c, &ch, &bw));
    }
    strata_nccl_comm one = {.arch = STRATA_NCCL_HOPPER, .ranks = 3, .graph_channels = 4, .channel_gbs = 30.0,
                            .nvls = true, .version = strata_nccl_version_find("2.27")};
    ck_assert(strata_nccl_nvls_graph(&one, &ch, &bw));
    ck_assert_uint_eq(strata_nccl_comm_channels(&one), 16);
    one.version = strata_nccl_version_find("2.19");
    ck_assert(strata_nccl_nvls_graph(&one, &ch, &bw));
    ck_assert_uint_eq(strata_nccl_comm_channels(&one), 8);
    one.version = strata_nccl_version_find("2.28");
    ck_assert_uint_eq(strata_nccl_comm_channels(&one), 8);
}
END_TEST

/* What the model then runs: a 1 GiB ring all-reduce on the A3 Ultra 2x1
 * communicator runs on comm->nChannels (4: no cut at 1 GiB, enqueue.cc's
 * while (nBytes < nc x nt x threshold)). */
START_TEST(ring_runs_on_the_comms_channels)
{
    strata_nccl_comm c = two_nodes(STRATA_NCCL_HOPPER, 1, 1, 50.0, "2.26");
    c.algos = 1u << STRATA_NCCL_RING;
    strata_nccl_choice ch;
    ck_assert(strata_nccl_choose(&c, STRATA_OP_ALL_REDUCE, 1ull << 30, &ch));
    ck_assert_uint_eq(ch.channels, 4);
    ck_assert_uint_le(ch.run_channels, 4);
}
END_TEST

/* The NIC's PCIe link in NCCL's search (strata_nccl_pci_gbs; topo.cc
 * ncclTopoAddPci: width x speed / 80, speed per lane 60, 120, 240, 480
 * x 100 Mb/s for Gen3 to Gen6): Gen3 x16 = 16 x 60 / 80 = 12, Gen4 x16 =
 * 16 x 120 / 80 = 24, Gen5 x16 = 48, Gen6 x16 = 96, Gen4 x8 = 12; no
 * generation 7. A GPU's path to its NIC is its narrowest link (paths.cc
 * ncclTopoSetPaths), the NIC's net.bw or that PCIe link.
 * Two nodes of 8 A100 (a100-8.ini's one-node graph, 12 x 20 = 240 GB/s of
 * NVLink), 8 HDR NICs of 200 Gb/s = 25 GB/s a node (held-out set 12's
 * Azure NDv4 pair). On Gen4 x16 the path is min(25, 24) = 24: Ampere's
 * speedArrayInter {48, 30, 28, 24, 20, ...} starts at 24 (48 to 28 are
 * above the path); at 24 a NIC's path holds 1 channel: 8 x 24 = 192;
 * 20, 18, 15 hold 1 a NIC (less); 12 holds 2: 16 x 12 = 192, not more
 * (a tie keeps the first); 10 / 24 < .49 ends it: 8 x 24. bwIntra 24 is
 * below 25: not duplicated; comm->nChannels 16 (no x 2 before SM90). The
 * NIC's own 25 gives the same graph: NCCL's array steps at 24 where a
 * Gen4 x16 link is. The same NIC on a Gen3 x16 host (12): the search
 * starts at 12: 8 x 12 = 96; 10 and 9 to 7 hold 1 a NIC (less); 6
 * (6 / 12 = .5, above .49) holds 2: 16 x 6 = 96, a tie; 5 / 12 < .49
 * ends it: 8 x 12, comm->nChannels 16, half the bandwidth of 8 x 24.
 * A 800 Gb/s NIC (100 GB/s) beside each of 8 B200 (16 x 45 = 720 GB/s of
 * NVLink) on a Gen5 x16 link (48), v2.28 (sm100SpeedArrayInter {96, 48,
 * 45.1, 42, 40, 30, 24, 22, ...}): 96 is above the path; 48 holds 1 a
 * NIC: 8 x 48 = 384; 45.1 to 30 hold 1 (less); 24 (.5) holds 2: 16 x 24
 * = 384, a tie; 22 / 48 < .49 ends it: 8 x 48; not duplicated (SM90 and
 * later below 50 with more than 4); comm->nChannels 8 x 2 = 16, and 48 >
 * 45 doubles only below 16 channels: 16 (no NVLS raise in 2.28). Without
 * the link (the NIC's 100): 96 holds 1 a NIC but 720 / 96 = 7 channels of
 * NVLink: 7 x 96 = 672; 48 (.5) holds 2 a NIC, NVLink 15: 15 x 48 = 720
 * fills the NVLink and ends it; not duplicated; comm->nChannels 30. */
START_TEST(nic_pcie_link_in_the_search)
{
    ck_assert_double_eq_tol(strata_nccl_pci_gbs(3, 16), 12.0, 1e-12);
    ck_assert_double_eq_tol(strata_nccl_pci_gbs(4, 16), 24.0, 1e-12);
    ck_assert_double_eq_tol(strata_nccl_pci_gbs(5, 16), 48.0, 1e-12);
    ck_assert_double_eq_tol(strata_nccl_pci_gbs(6, 16), 96.0, 1e-12);
    ck_assert_double_eq_tol(strata_nccl_pci_gbs(4, 8), 12.0, 1e-12);
    ck_assert_double_eq_tol(strata_nccl_pci_gbs(7, 16), 0.0, 1e-12);
    const double hdr = 25.0;
    const double paths[] = {MIN(hdr, strata_nccl_pci_gbs(4, 16)), hdr, MIN(hdr, strata_nccl_pci_gbs(3, 16))};
    const double want_gbs[] = {24.0, 24.0, 12.0};
    for (unsigned i = 0; i < 3; i++) {
        strata_nccl_comm c = two_nodes(STRATA_NCCL_AMPERE, 8, 8, paths[i], "2.25");
        c.graph_channels = 12;
        c.channel_gbs = 20.0;
        uint32_t ch;
        double bw;
        strata_nccl_net_graph(&c, &ch, &bw);
        ck_assert_uint_eq(ch, 8);
        ck_assert_double_eq_tol(bw, want_gbs[i], 1e-12);
        ck_assert_uint_eq(strata_nccl_comm_channels(&c), 16);
    }
    expect(STRATA_NCCL_BLACKWELL, 8, 8, MIN(100.0, strata_nccl_pci_gbs(5, 16)), "2.28", 8, 48.0, 16);
    expect(STRATA_NCCL_BLACKWELL, 8, 8, 100.0, "2.28", 15, 48.0, 30);
}
END_TEST

/* 8 A100 and 16 RoCE ports of 100 Gb/s a node, two a GPU (OCI
 * BM.GPU4.8: validation/held-out/hw/oci-a100-40gb-roce.ini; its topology
 * file, oracle-quickstart/oci-hpc-oke @75c48b0
 * manifests/topology/BM.GPU4.8.xml, puts each GPU and its dual-port NIC
 * under one Broadcom PEX switch, 2 bridges apart after NCCL flattens the
 * switch's levels, topo.cc ncclTopoFlattenBcmSwitches v2.19.3-1 l.
 * 183-233: PXB, so GPUDirect RDMA and LL128 across nodes run on Ampere,
 * paths.cc l. 382 and tuning.cc l. 290 at v2.19.3-1). A100's NVLink in the
 * search, a100-8.ini's ring graph: 12 x 20 = 240 GB/s. A port is 12.5
 * GB/s; speedArrayInter (search.cc v2.25.1-1 l. 931) above it is
 * skipped; at 12 each port carries 1 channel: min(16, 16, 240 / 12 = 20)
 * = 16 (192); 10, 9, 7 and 6 (6 / 12 = .5, 2 a port, still 16) give no
 * more; 5 / 12 < .49 ends the search: 16 x 12. No duplication (bwIntra 12
 * < 25, ncclTopoDupChannels l. 918); comm->nChannels 2 x 16 = 32 (the
 * second doubling needs SM90). The channels strata's Tree/LL128 runs at
 * 256 KiB to 256 MiB on that file (docs/clusters.md, "A100 pairs across
 * IB and RoCE: the candidates checked (wave 37)"). */
START_TEST(eight_amperes_and_sixteen_ports_a_node)
{
    strata_nccl_comm c = two_nodes(STRATA_NCCL_AMPERE, 8, 16, 12.5, "2.25");
    c.graph_channels = 12;
    c.channel_gbs = 20.0;
    c.nvls = false;
    uint32_t ch;
    double bw;
    strata_nccl_net_graph(&c, &ch, &bw);
    ck_assert_uint_eq(ch, 16);
    ck_assert_double_eq_tol(bw, 12.0, 1e-12);
    ck_assert_uint_eq(strata_nccl_comm_channels(&c), 32);
}
END_TEST

static Suite *nccl_net_channels_suite(void)
{
    Suite *s = suite_create("nccl_net_channels");
    TCase *tc = tcase_create("topologies");
    tcase_add_test(tc, one_hopper_and_one_nic_a_node);
    tcase_add_test(tc, eight_hoppers_and_eight_nics_a_node);
    tcase_add_test(tc, eight_blackwells_and_eight_nics_a_node);
    tcase_add_test(tc, one_gpu_and_one_nic_a_node);
    tcase_add_test(tc, nvls_needs_the_releases_gpus_a_node);
    tcase_add_test(tc, ring_runs_on_the_comms_channels);
    tcase_add_test(tc, nvls_raises_the_rings_to_v2_27);
    tcase_add_test(tc, nic_pcie_link_in_the_search);
    tcase_add_test(tc, eight_amperes_and_sixteen_ports_a_node);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_net_channels_suite()); }
