/*
 * test_net_protocol_cxi.c: the cxi-sendrecv row of sim/hw/net_protocol.c
 * (wave 44): libfabric's CXI provider (HPE Slingshot 11) under
 * aws-ofi-nccl's SENDRECV. Eager up to max_eager_size = rdzv_threshold +
 * rdzv_get_min = 2048 + 2049 = 4097 B (libfabric v1.21.0 prov/cxi
 * cxip_msg_hpc.c l. 4668-4671, 5033; cxip_info.c l. 620-621), the Put
 * landing in the posted GPU buffer (hardware matching): nothing beyond the
 * one flight; a larger message the rendezvous Put and the NIC's Get of the
 * rest, the Get's request and response: two flights more. Checked by hand
 * on the function, on validation/held-out/hw/polaris-a100-slingshot.ini's
 * network step, and as a sweep that never falls on that file.
 */
#include <stdio.h>
#include "testutil.h"
#include "coll_sweep.h"
#include "hw/coll_impl.h"
#include "hw/hw.h"
#include "hw/net_protocol.h"

#define NV "interconnect.nvlink."
#ifndef POLARIS
#define POLARIS "validation/held-out/hw/polaris-a100-slingshot.ini"
#endif

/* Polaris's network (polaris-a100-slingshot.ini): 1 us a link, a flight NIC
 * to NIC 2 x 1 = 2 us, 25 GB/s. By hand, beyond the flight and the bytes
 * at the link's rate that every step pays:
 *   - 2048 B and 4097 B (at most 2048 + 2049): eager, 0;
 *   - 4098 B, 64 KiB and 1 MiB: rendezvous, the Get's 2 flights, 2 x 2 =
 *     4 us;
 *   - 0 B or no row: 0. No eager copy, so a PCIe link in the file adds
 *     nothing (PCIe Gen4 x16 below). */
START_TEST(eager_to_4097_bytes_then_the_gets_round_trip)
{
    const strata_net_protocol *cxi = strata_net_protocol_find("cxi-sendrecv");
    ck_assert_ptr_nonnull(cxi);
    ck_assert_str_eq(cxi->fabric, "Slingshot");
    ck_assert(!cxi->library_route);
    strata_hw_nics polaris = {.per_host = 2, .bandwidth = 25e9, .latency = 1e-6, .pcie_generation = 4,
                              .pcie_lanes = 16};
    uint64_t sizes[] = {2048, 4097, 4098, 65536, 1u << 20};
    double extra[] = {0, 0, 4e-6, 4e-6, 4e-6};
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++)
        ck_assert_double_eq_tol(strata_net_protocol_extra_s(cxi, &polaris, sizes[i], false, 0), extra[i], 1e-15);
    ck_assert(strata_net_protocol_extra_s(cxi, &polaris, 4098, true, 0) == 4e-6);
    /* no runt budget (runt_max 0): a first window's message still takes the Get's two flights */
    ck_assert(strata_net_protocol_extra_s(cxi, &polaris, 1u << 20, false, 2) == 4e-6);
    ck_assert(strata_net_protocol_extra_s(cxi, &polaris, 0, false, 0) == 0);
    /* not a library route: the step's fixed part is NCCL's hwLatencies[NET]
     * less the route, as on InfiniBand (14 - 2 = 12 us on Simple), plus the
     * Get's 4 us above the threshold */
    ck_assert(strata_net_protocol_nccl_ends_s(cxi, STRATA_NCCL_SIMPLE) == 0);
    ck_assert_double_eq_tol(strata_net_protocol_step_s(cxi, STRATA_NCCL_SIMPLE, 14e-6, 2e-6, &polaris, 4097, false, 0),
                            12e-6, 1e-15);
    ck_assert_double_eq_tol(strata_net_protocol_step_s(cxi, STRATA_NCCL_SIMPLE, 14e-6, 2e-6, &polaris, 4098, false, 0),
                            16e-6, 1e-15);
}
END_TEST

/* cxi-alt-read (wave 45): Sigma2 Olivia's NCCL modules (HPE's ccl_env.sh's
 * FI_CXI_RDZV_PROTO=alt_read and RDZV_EAGER_SIZE 0, plus RDZV_THRESHOLD and
 * RDZV_GET_MIN 0). Eager up to the
 * inject size the threshold is raised to, C_MAX_IDC_PAYLOAD_UNR = 192 B
 * (+ get_min 0); above, the rendezvous Put, the Get the receiver's provider
 * issues (request, response) and its done notify and the notify's ACK
 * (libfabric v2.1.0 prov/cxi/src/cxip_msg_hpc.c rdzv_recv_req_event l.
 * 308-337): 4 flights. On Polaris's network (a flight 2 x 1 us = 2 us):
 *   - 1 B, 192 B: 0;
 *   - 193 B, 4097 B, 1 MiB: 4 x 2 = 8 us;
 * and NCCL's Simple step at 14 us of hwLatencies[NET] less the 2 us route:
 * 12 us at 192 B, 12 + 8 = 20 us at 193 B. */
START_TEST(alt_read_eager_to_192_bytes_then_four_flights)
{
    const strata_net_protocol *alt = strata_net_protocol_find("cxi-alt-read");
    ck_assert_ptr_nonnull(alt);
    ck_assert_str_eq(alt->fabric, "Slingshot");
    ck_assert(!alt->library_route && !alt->eager_copy);
    strata_hw_nics polaris = {.per_host = 2, .bandwidth = 25e9, .latency = 1e-6, .pcie_generation = 4,
                              .pcie_lanes = 16};
    uint64_t sizes[] = {1, 192, 193, 4097, 1u << 20};
    double extra[] = {0, 0, 8e-6, 8e-6, 8e-6};
    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++)
        ck_assert_double_eq_tol(strata_net_protocol_extra_s(alt, &polaris, sizes[i], false, 0), extra[i], 1e-15);
    ck_assert_double_eq_tol(strata_net_protocol_step_s(alt, STRATA_NCCL_SIMPLE, 14e-6, 2e-6, &polaris, 192, false, 0),
                            12e-6, 1e-15);
    ck_assert_double_eq_tol(strata_net_protocol_step_s(alt, STRATA_NCCL_SIMPLE, 14e-6, 2e-6, &polaris, 193, false, 0),
                            20e-6, 1e-15);
}
END_TEST

/* polaris-a100-slingshot.ini names cxi-sendrecv: an all-reduce of 8 ranks
 * (2 nodes of 4) on Ring/Simple, NCCL 2.19 as held-out set 24 runs it.
 * 8 KiB: NCCL's message is at most 8192 / 8 ranks = 1 KiB a channel,
 * eager; 64 MiB: min(2 x 512 KiB, 64 MiB / (8 x at most 12 channels) =
 * 699,051 B), a rendezvous. Nothing else in the step depends on the size
 * (cq_read_s 0: no proxy pass of the row's), so the large step costs the
 * Get's 2 flights, 2 x 2 x 1 us = 4 us, more. */
START_TEST(polaris_step_pays_the_get_above_the_threshold)
{
    const char *set[] = {NV "nccl_version=2.19", NV "nccl_algo=Ring", NV "nccl_proto=Simple", NULL};
    strata_hw *hw = strata_test_load_hw_file(POLARIS, set);
    strata_coll_tuning small, large;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 4, 8192, 0, &small, NULL));
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 4, 64ull << 20, 0, &large, NULL));
    ck_assert_double_eq_tol(large.net_step_s - small.net_step_s, 4e-6, 1e-12);
    strata_hw_free(hw);
}
END_TEST

/* Falls of an all-reduce sweep on 8 Polaris GPUs (set 24's 2-node case,
 * NCCL 2.19), lo to hi, under `sets` besides, with the same algorithm,
 * protocol and channels (printed). */
static guint polaris_falls(const char *proto_set, uint64_t lo, uint64_t hi)
{
    const char *sets[] = {"hardware.devices=8", NV "nccl_version=2.19", proto_set, NULL};
    char *hw = strata_test_source_path(POLARIS);
    size_t n = 0;
    uint64_t *sizes = coll_sweep_sizes(lo, hi, true, 32, &n);
    coll_sweep_point *pts = g_new(coll_sweep_point, n);
    for (size_t i = 0; i < n; i++) {
        ck_assert(coll_sweep_run(hw, sets, "all-reduce", 8, NULL, sizes[i], &pts[i]));
        ck_assert_msg(pts[i].ok, "%" G_GUINT64_FORMAT ": %s", sizes[i], pts[i].message);
    }
    guint same = coll_sweep_same_channel_falls("fall", pts, n);
    g_free(pts);
    g_free(sizes);
    g_free(hw);
    return same;
}

/* The sweep never falls where the message crosses 4097 B: NCCL's default
 * choice from 1 KiB to 128 KiB (its messages cross the threshold there),
 * and Simple forced from 1 KiB to 64 MiB (LL128's ring, whose path model
 * falls on this file with or without the row from 1.5 MiB: docs/clusters.md,
 * "A message's protocol over CXI (wave 44)", is left out). Since wave 48
 * the file's NICs are PHB (nccl_net_path) and NCCL runs no LL128 across
 * nodes: its choice from 160 KiB is Ring/LL, whose path model falls on this
 * file without the row too (main b371b4e2 with Ring/LL forced: 131,072 B
 * 59.04 us -> 163,840 B 51.91; 229,376 B 74.11 -> 262,144 B 69.67;
 * docs/clusters.md, "Ring LL128 across nodes falls with size on Polaris",
 * its Ring/LL series), so the default sweep stops at 128 KiB. */
START_TEST(polaris_all_reduce_never_falls)
{
    ck_assert_uint_eq(polaris_falls(NULL, 1024, 128u << 10), 0);
    ck_assert_uint_eq(polaris_falls(NV "nccl_proto=Simple", 1024, 64ull << 20), 0);
}
END_TEST

static Suite *net_protocol_cxi_suite(void)
{
    Suite *s = suite_create("net_protocol_cxi");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, eager_to_4097_bytes_then_the_gets_round_trip);
    tcase_add_test(tc, alt_read_eager_to_192_bytes_then_four_flights);
    tcase_add_test(tc, polaris_step_pays_the_get_above_the_threshold);
    tcase_add_test(tc, polaris_all_reduce_never_falls);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(net_protocol_cxi_suite()); }
