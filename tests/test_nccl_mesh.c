/*
 * test_nccl_mesh.c: NCCL's ring graph on a full mesh of direct NVLink
 * (sim/hw/nccl_mesh.h, the search of NVIDIA/nccl v2.22.3-1
 * src/graph/search.cc) and the nccl row's use of it (the tuning's rings on
 * a `topology = full` domain), derived by hand.
 *
 * 4 H100s, 6 NVLinks a pair: a directed link of 6 x 20.6 = 123.6 GB/s
 * (maxBw), 3 of them a GPU (totalBw 370.8). sm90SpeedArrayIntra's first
 * speed, 60, is below both. With sameChannels the first channel is the PCI
 * order 0 1 2 3 and the next replays it (123.6 - 60 = 63.6 left, then 3.6):
 * 2 channels. Without, the depth-first search (next GPUs in index order
 * after the current one) finds the six directed rings of 4 GPUs, each once:
 * each ordered pair lies on two of them, 2 x 60 = 120 <= 123.6, so 6
 * channels (360 < 370.8: no early stop), and no seventh fits (12 directed
 * links x 2 = 24 = 6 rings x 4 hops). Lower speeds while within 0.49 of
 * 60: 50 holds 2 a link (6 x 50 = 300), 40 holds 3 (9 x 40 = 360, equal:
 * no better), 30 holds 4 (12 x 30 = 360, equal); 24 / 60 < 0.49 stops.
 * ncclTopoDupChannels: 60 >= 50, 12 channels at 60 / 2 = 30. Pass 2 tries
 * 40, 50, 60 for 12 channels: at most 9, 6, 6. So 12 x 30 GB/s, the rings
 * 0 1 2 3, 0 1 3 2, 0 2 3 1, 0 2 1 3, 0 3 1 2, 0 3 2 1 twice: the order of
 * the Snellius log (odissei-benchmarks/nccl-tests runs/1node/all_reduce.log,
 * channels 00-05, then 06-23 repeat them after connect.cc's copy), and the
 * 12 x 30 GB/s the hardware file derived by hand.
 */
#include <string.h>
#include "testutil.h"
#include "hw/coll_impl.h"
#include "hw/nccl_mesh.h"

static const uint8_t six_rings[] = {0, 1, 2, 3, 0, 1, 3, 2, 0, 2, 3, 1, 0, 2, 1, 3, 0, 3, 1, 2, 0, 3, 2, 1};

START_TEST(snellius_rings_are_the_logs)
{
    strata_nccl_mesh_graph g;
    ck_assert(strata_nccl_mesh_rings(4, 6, 20.6f, 90, &g));
    ck_assert_uint_eq(g.gpus, 4);
    ck_assert_uint_eq(g.channels, 12);
    ck_assert_double_eq_tol(g.bw, 30.0, 1e-6);
    for (uint32_t c = 0; c < 12; c++)
        ck_assert_msg(memcmp(g.rings + c * 4, six_rings + (c % 6) * 4, 4) == 0, "channel %u", c);
}
END_TEST

/* Other boards, by the same steps:
 *  - 5 links a pair (103 GB/s): 60 fits once a link, 3 channels (180); 50
 *    twice, 6 x 50 = 300; 40 twice (240), 30 three times (9 x 30 = 270);
 *    doubled (50 >= 50) to 12 x 25;
 *  - 4 links of H100 (82.4): 60 and 50 once a link (3 channels: 180,
 *    150); 40 twice, 6 x 40 = 240; then 30 twice (180), 24 three times
 *    (9 x 24 = 216), 20 four times (12 x 20 = 240, equal: not better);
 *    15 / 40 < 0.49 stops. 6 x 40 kept, not doubled (compute capability
 *    9.0 above 8.0, 40 < 50, 6 channels > 4);
 *  - a 4-GPU HGX A100 board (4 links of SM80's 20.0 a pair, 80 GB/s;
 *    speedArrayIntra from 40): 40 twice a link, 6 x 40 = 240 = totalBw,
 *    done; doubled (8.0 is not above 8.0) to 12 x 20. */
START_TEST(other_boards)
{
    strata_nccl_mesh_graph g;
    ck_assert(strata_nccl_mesh_rings(4, 5, 20.6f, 90, &g));
    ck_assert_uint_eq(g.channels, 12);
    ck_assert_double_eq_tol(g.bw, 25.0, 1e-6);
    ck_assert(strata_nccl_mesh_rings(4, 4, 20.6f, 90, &g));
    ck_assert_uint_eq(g.channels, 6);
    ck_assert_double_eq_tol(g.bw, 40.0, 1e-6);
    ck_assert(memcmp(g.rings, six_rings, sizeof(six_rings)) == 0);
    ck_assert(strata_nccl_mesh_rings(4, 4, 20.0f, 80, &g));
    ck_assert_uint_eq(g.channels, 12);
    ck_assert_double_eq_tol(g.bw, 20.0, 1e-6);
    /* out of the search's range */
    ck_assert(!strata_nccl_mesh_rings(1, 6, 20.6f, 90, &g));
    ck_assert(!strata_nccl_mesh_rings(STRATA_NCCL_MESH_MAX_GPUS + 1, 6, 20.6f, 90, &g));
    ck_assert(!strata_nccl_mesh_rings(4, 0, 20.6f, 90, &g));
}
END_TEST

/* Every graph is rings (a permutation of the GPUs each), and no directed
 * link carries more than its bandwidth at the search's speed (before the
 * doubling: the doubled channels share the same rings at half the speed,
 * so channels on a link x speed stays within it): 3 to 8 GPUs, 1 to 6
 * links, Ampere and Hopper. */
START_TEST(rings_fit_the_links)
{
    static const struct { float gbs; uint32_t cc; } archs[] = {{20.0f, 80}, {20.6f, 90}};
    for (uint32_t n = 3; n <= 8; n++)
        for (uint32_t l = 1; l <= 6; l++)
            for (size_t a = 0; a < G_N_ELEMENTS(archs); a++) {
                strata_nccl_mesh_graph g;
                ck_assert(strata_nccl_mesh_rings(n, l, archs[a].gbs, archs[a].cc, &g));
                uint32_t on[8][8] = {{0}};
                for (uint32_t c = 0; c < g.channels; c++) {
                    uint32_t seen = 0;
                    for (uint32_t i = 0; i < n; i++) {
                        seen |= 1u << g.rings[c * n + i];
                        on[g.rings[c * n + i]][g.rings[c * n + (i + 1) % n]]++;
                    }
                    ck_assert_uint_eq(seen, (1u << n) - 1);
                }
                for (uint32_t i = 0; i < n; i++)
                    for (uint32_t j = 0; j < n; j++)
                        ck_assert_msg((double)on[i][j] * g.bw <= l * archs[a].gbs + 1e-3,
                                      "%u GPUs, %u links: %u channels of %.1f on %u->%u", n, l, on[i][j], g.bw,
                                      i, j);
            }
}
END_TEST

/* The hardware file: Snellius's node (4 GPUs, `topology = full`, 6 links a
 * pair, hopper) gives NCCL's tuning those rings on one node, none across
 * nodes (rail rings there); DGX H100's switch none. */
START_TEST(hw_file_gives_the_rings)
{
    static const char *const one[] = {"hardware.devices=4", "interconnect.nvlink.nccl_version=2.19", NULL};
    strata_hw *hw = strata_test_load_hw_file("validation/held-out/hw/snellius-h100-ib.ini", one);
    strata_coll_tuning t;
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 4, 4, 64u << 20, 0, &t, NULL));
    ck_assert_int_eq(t.algo, STRATA_NCCL_RING);
    ck_assert_uint_eq(t.n_rings, 12);
    ck_assert_uint_eq(t.ring_len, 4);
    for (uint32_t c = 0; c < 12; c++)
        ck_assert(memcmp(t.rings + c * 4, six_rings + (c % 6) * 4, 4) == 0);
    strata_hw_free(hw);
    hw = strata_test_load_hw_file("validation/held-out/hw/snellius-h100-ib.ini", NULL);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 4, 64u << 20, 0, &t, NULL));
    ck_assert_ptr_null(t.rings);
    strata_hw_free(hw);
    hw = strata_test_load_hw("dgx-h100", NULL);
    ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, 8, 8, 64u << 20, 0, &t, NULL));
    ck_assert_ptr_null(t.rings);
    strata_hw_free(hw);
}
END_TEST

static Suite *nccl_mesh_suite(void)
{
    Suite *s = suite_create("nccl_mesh");
    TCase *tc = tcase_create("nccl_mesh");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, snellius_rings_are_the_logs);
    tcase_add_test(tc, other_boards);
    tcase_add_test(tc, rings_fit_the_links);
    tcase_add_test(tc, hw_file_gives_the_rings);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(nccl_mesh_suite()); }
