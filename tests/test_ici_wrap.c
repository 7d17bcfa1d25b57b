/* test_ici_wrap.c: [interconnect] wraparound = (hw/hw_devices.c): a torus
 * dimension without the links joining its ends is a line, as on a Cloud TPU
 * v5e slice whose axis is under 16 chips (configs/hw/tpu-v5e-16.ini). */
#include <string.h>
#include "testutil.h"
#include "core/error.h"
#include "hw/hw.h"

static uint32_t hops(const strata_hw *hw, const char *from, const char *to)
{
    int a = strata_hw_memory_index(hw, from), b = strata_hw_memory_index(hw, to);
    ck_assert(a >= 0 && b >= 0);
    const strata_hop *h = NULL;
    uint32_t n = 0;
    ck_assert(strata_hw_route(hw, (uint32_t)a, (uint32_t)b, &h, &n, NULL));
    return n;
}

/* tpu-v5e-16, 4x4 (device d = 4 row + column): as shipped, a mesh: 0 -> 3
 * along a row is 3 links, 0 -> 15 the far corner 3 + 3; 2 x 4 x 3 = 24 ICI
 * links. With wrap-around on both axes (a torus): 1 and 1 + 1, 32 links.
 * With it on the second axis only ("false,true"): 0 -> 3 is 1 link, 0 -> 12
 * down a column 3, and 24 + 4 = 28 links. */
START_TEST(mesh_torus_and_per_axis)
{
    static const struct {
        const char *set;
        uint32_t to3, to15, to12, ici;
    } cases[] = {
        {NULL, 3, 6, 3, 24},
        {"interconnect.ici.wraparound=true", 1, 2, 1, 32},
        {"interconnect.ici.wraparound=false,true", 1, 4, 3, 28},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *set[] = {cases[i].set, NULL};
        strata_hw *hw = strata_test_load_hw("tpu-v5e-16", cases[i].set ? set : NULL);
        ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@3"), cases[i].to3);
        ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@15"), cases[i].to15);
        ck_assert_uint_eq(hops(hw, "hbm@0", "hbm@12"), cases[i].to12);
        ck_assert_uint_eq(strata_test_count_links(hw, "ici:"), cases[i].ici);
        strata_hw_free(hw);
    }
}
END_TEST

START_TEST(bad_values)
{
    static const char *const bad[][2] = {
        {"interconnect.ici.wraparound=maybe", "expected true, false, or one of them per dimension"},
        {"interconnect.ici.wraparound=true,true,true", "expected true, false"},
        {"interconnect.dcn.wraparound=false", "it applies to torus2d and torus3d"},
    };
    char *path = strata_test_source_path("configs/hw/tpu-v5e-16.ini");
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *set[] = {bad[i][0], NULL};
        GError *err = NULL;
        strata_hw *hw = strata_hw_load(path, set, &err);
        ck_assert_ptr_null(hw);
        ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
        ck_assert_msg(strstr(err->message, bad[i][1]) && strstr(err->message, "wraparound"), "%s", err->message);
        g_error_free(err);
    }
    g_free(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ici_wrap");
    TCase *tc = tcase_create("ici_wrap");
    tcase_add_test(tc, mesh_torus_and_per_axis);
    tcase_add_test(tc, bad_values);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
