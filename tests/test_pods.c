/*
 * test_pods.c: the shipped pods and nodes (configs/hw/tpu-v5e-16.ini,
 * tpu-v5e-256.ini, tpu-v5p-64.ini, dgx-h100.ini, a100-8.ini) build the
 * machines their comments describe: device and host counts, memory and link
 * counts worked out by hand from the files, the interconnect's figures, the
 * routes between chips, and a slice made with --set.
 */
#include <string.h>
#include "hw/hw.h"
#include "testutil.h"

/* Hops from memory a to memory b. */
static uint32_t hops(const strata_hw *hw, const char *a, const char *b)
{
    const strata_hop *h = NULL;
    uint32_t n = 0;
    GError *err = NULL;
    int from = strata_hw_memory_index(hw, a), to = strata_hw_memory_index(hw, b);
    ck_assert_int_ge(from, 0);
    ck_assert_int_ge(to, 0);
    ck_assert_msg(strata_hw_route(hw, (uint32_t)from, (uint32_t)to, &h, &n, &err), "%s",
                  err ? err->message : "");
    return n;
}

static const char *const slice_2x4[] = {"hardware.devices=8", "interconnect.ici.dims=2x4", NULL};

/* Each torus: devices, hosts, memories and interconnect links by hand.
 * tpu-v5e-256: 256 x (hbm, vmem, smem) + 32 x (host, pageable) memories; a
 * 16x16 torus with wrap-around has 2 x 256 links. Its 2x4 slice (8 chips, one
 * host): the axis of 4 a ring of 4 links per row (8), the axis of 2 one link
 * per column (4). tpu-v5e-16: a 4x4 mesh (no wrap-around on a v5e axis
 * under 16), 2 x 4 x 3. tpu-v5p-64: a 4x4x4
 * torus, 3 x 64, four chips per host. */
static const struct {
    const char *file;
    const char *const *set;
    uint32_t devices, hosts, memories, ici;
} tori[] = {
    {"tpu-v5e-256", NULL, 256, 32, 3 * 256 + 2 * 32, 2 * 256},
    {"tpu-v5e-256", slice_2x4, 8, 1, 3 * 8 + 2, 12},
    {"tpu-v5e-16", NULL, 16, 2, 3 * 16 + 2 * 2, 2 * 4 * 3},
    {"tpu-v5p-64", NULL, 64, 16, 3 * 64 + 2 * 16, 3 * 64},
};

START_TEST(test_tori)
{
    for (size_t i = 0; i < G_N_ELEMENTS(tori); i++) {
        strata_hw *hw = strata_test_load_hw(tori[i].file, tori[i].set);
        ck_assert_uint_eq(strata_hw_devices(hw), tori[i].devices);
        ck_assert_uint_eq(strata_hw_hosts(hw), tori[i].hosts);
        ck_assert_uint_eq(strata_hw_memory_count(hw), tori[i].memories);
        ck_assert_uint_eq(strata_test_count_links(hw, "ici:"), tori[i].ici);
        strata_hw_free(hw);
    }
}
END_TEST

/* The v5e pod's links: per chip pcie, dma-vmem, dma-smem, vector-scalar
 * (4 x 256), per host staging (32), the torus (512) and the hosts' network
 * (32 dcn links to its switch): 1600. Routes: neighbours, the wrap-around
 * (0 and 15 share a row, 0 and 240 a column), (1,1) and (8,8). */
START_TEST(test_v5e_pod)
{
    strata_hw *hw = strata_test_load_hw("tpu-v5e-256", NULL);
    ck_assert_uint_eq(strata_test_count_links(hw, "dcn@"), 32);
    ck_assert_uint_eq(strata_hw_link_count(hw), 4 * 256 + 32 + 512 + 32);
    const strata_link_spec *l = strata_test_link(hw, "ici:0-1");
    /* the scaling book's v5e link (tpus.md @0819a7d): 4.5e10 B/s one way,
     * 1 us a hop (wave 33; was the Cloud page's 50 GB/s and 1/2 us) */
    ck_assert_double_eq(l->bandwidth, 45e9);
    ck_assert_double_eq(l->latency, 1e-6);
    ck_assert(l->full_duplex);
    ck_assert_double_eq(strata_test_link(hw, "dcn@0")->bandwidth, 25e9);
    ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@1"), 1);
    ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@15"), 1);
    ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@240"), 1);
    ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@17"), 2);
    ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@136"), 16);
    strata_hw_free(hw);
}
END_TEST

/* v5p: the scaling book's link (tpus.md @0819a7d): 9e10 B/s one way and
 * 1 us a hop (wave 33; was the Cloud page's 100 GB/s and 1/2 us);
 * (0,0,0) to (2,2,2) is two hops on each axis. */
START_TEST(test_v5p_cube)
{
    strata_hw *hw = strata_test_load_hw("tpu-v5p-64", NULL);
    const strata_link_spec *l = strata_test_link(hw, "ici:0-1");
    ck_assert_double_eq(l->bandwidth, 90e9);
    ck_assert_double_eq(l->latency, 1e-6);
    ck_assert(l->full_duplex);
    ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@42"), 6);
    strata_hw_free(hw);
}
END_TEST

/* 8 GPUs behind NVSwitch: one link per GPU to the switch, so any pair is
 * two links apart, at 450 (H100) or 300 (A100) GB/s per direction. */
START_TEST(test_nvlink_nodes)
{
    const char *files[] = {"dgx-h100", "a100-8"};
    const double bandwidth[] = {450e9, 300e9};
    /* dgx-h100: ESTIMATE 0.5 us; a100-8: 0.3625 us, half of LL's 0.725 us
     * a ring step in NVIDIA/nccl-tests#123's `-t` table */
    const double latency[] = {0.5e-6, 0.3625e-6};
    for (int i = 0; i < 2; i++) {
        strata_hw *hw = strata_test_load_hw(files[i], NULL);
        ck_assert_uint_eq(strata_hw_devices(hw), 8);
        ck_assert_uint_eq(strata_hw_hosts(hw), 1);
        ck_assert_uint_eq(strata_test_count_links(hw, "nvlink@"), 8);
        const strata_link_spec *l = strata_test_link(hw, "nvlink@3");
        ck_assert_double_eq(l->bandwidth, bandwidth[i]);
        ck_assert_double_eq_tol(l->latency, latency[i], 1e-18);
        ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@5"), 2);
        strata_hw_free(hw);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pods");
    TCase *tc = tcase_create("pods");
    tcase_add_test(tc, test_tori);
    tcase_add_test(tc, test_v5e_pod);
    tcase_add_test(tc, test_v5p_cube);
    tcase_add_test(tc, test_nvlink_nodes);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
