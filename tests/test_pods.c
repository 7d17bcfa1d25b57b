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

static strata_hw *load(const char *file, const char *const *overrides)
{
    char *rel = g_strconcat("configs/hw/", file, NULL);
    char *path = strata_test_source_path(rel);
    g_free(rel);
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, overrides, &err);
    ck_assert_msg(hw, "%s: %s", path, err ? err->message : "");
    g_free(path);
    return hw;
}

/* Links whose name starts with prefix. */
static uint32_t links_named(const strata_hw *hw, const char *prefix)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < strata_hw_link_count(hw); i++)
        n += g_str_has_prefix(strata_hw_link(hw, i)->name, prefix);
    return n;
}

static const strata_link_spec *link_named(const strata_hw *hw, const char *name)
{
    for (uint32_t i = 0; i < strata_hw_link_count(hw); i++)
        if (strcmp(strata_hw_link(hw, i)->name, name) == 0)
            return strata_hw_link(hw, i);
    ck_abort_msg("no link %s", name);
    return NULL;
}

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

/* 256 chips, 8 per host: 256 x (hbm, vmem, smem) + 32 x (host, pageable)
 * memories; links: per chip pcie, dma-vmem, dma-smem, vector-scalar (4 x
 * 256), per host staging (32), a 16x16 torus with wrap-around (2 x 256 ici
 * links) and the hosts' network (32 dcn links to its switch): 1600. */
START_TEST(test_v5e_pod)
{
    strata_hw *hw = load("tpu-v5e-256.ini", NULL);
    ck_assert_uint_eq(strata_hw_devices(hw), 256);
    ck_assert_uint_eq(strata_hw_hosts(hw), 32);
    ck_assert_uint_eq(strata_hw_memory_count(hw), 3 * 256 + 2 * 32);
    ck_assert_uint_eq(links_named(hw, "ici:"), 512);
    ck_assert_uint_eq(links_named(hw, "dcn@"), 32);
    ck_assert_uint_eq(strata_hw_link_count(hw), 4 * 256 + 32 + 512 + 32);
    const strata_link_spec *l = link_named(hw, "ici:0-1");
    ck_assert_double_eq(l->bandwidth, 50e9);
    ck_assert_double_eq(l->latency, 0.5e-6);
    ck_assert(l->full_duplex);
    ck_assert_double_eq(link_named(hw, "dcn@0")->bandwidth, 25e9);
    /* neighbours, the wrap-around (0 and 15 share a row), and (1,1) */
    ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@1"), 1);
    ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@15"), 1);
    ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@240"), 1);
    ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@17"), 2);
    ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@136"), 16);
    strata_hw_free(hw);
}
END_TEST

/* A 2x4 slice of the pod: 8 chips on one host; the axis of 4 has a ring of
 * 4 links per row (8), the axis of 2 one link per column (4): 12 ici links. */
START_TEST(test_v5e_slice)
{
    const char *const set[] = {"hardware.devices=8", "interconnect.ici.dims=2x4", NULL};
    strata_hw *hw = load("tpu-v5e-256.ini", set);
    ck_assert_uint_eq(strata_hw_devices(hw), 8);
    ck_assert_uint_eq(strata_hw_hosts(hw), 1);
    ck_assert_uint_eq(links_named(hw, "ici:"), 12);
    strata_hw_free(hw);
    hw = load("tpu-v5e-16.ini", NULL);
    ck_assert_uint_eq(strata_hw_devices(hw), 16);
    ck_assert_uint_eq(strata_hw_hosts(hw), 2);
    ck_assert_uint_eq(links_named(hw, "ici:"), 32);
    strata_hw_free(hw);
}
END_TEST

/* 64 chips in a 4x4x4 torus, 4 per host: 3 x 64 ici links at 100 GB/s. */
START_TEST(test_v5p_cube)
{
    strata_hw *hw = load("tpu-v5p-64.ini", NULL);
    ck_assert_uint_eq(strata_hw_devices(hw), 64);
    ck_assert_uint_eq(strata_hw_hosts(hw), 16);
    ck_assert_uint_eq(links_named(hw, "ici:"), 192);
    ck_assert_double_eq(link_named(hw, "ici:0-1")->bandwidth, 100e9);
    /* (0,0,0) to (2,2,2): two hops on each axis */
    ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@42"), 6);
    strata_hw_free(hw);
}
END_TEST

/* 8 GPUs behind NVSwitch: one link per GPU to the switch, so any pair is
 * two links apart, at 450 (H100) or 300 (A100) GB/s per direction. */
START_TEST(test_nvlink_nodes)
{
    const char *files[] = {"dgx-h100.ini", "a100-8.ini"};
    const double bandwidth[] = {450e9, 300e9};
    for (int i = 0; i < 2; i++) {
        strata_hw *hw = load(files[i], NULL);
        ck_assert_uint_eq(strata_hw_devices(hw), 8);
        ck_assert_uint_eq(strata_hw_hosts(hw), 1);
        ck_assert_uint_eq(links_named(hw, "nvlink@"), 8);
        const strata_link_spec *l = link_named(hw, "nvlink@3");
        ck_assert_double_eq(l->bandwidth, bandwidth[i]);
        ck_assert_double_eq(l->latency, 0.5e-6);
        ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@5"), 2);
        strata_hw_free(hw);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pods");
    TCase *tc = tcase_create("pods");
    tcase_add_test(tc, test_v5e_pod);
    tcase_add_test(tc, test_v5e_slice);
    tcase_add_test(tc, test_v5p_cube);
    tcase_add_test(tc, test_nvlink_nodes);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
