/*
 * test_hw_slice.c: `--set hardware.devices=N` alone slices a shipped node or
 * pod (sim/hw/hw_slice.c), on figures derived by hand:
 *  - a100-8 and dgx-h100 (8 GPUs, devices_per_host = 8) with devices=4: one
 *    host of 4 devices (devices_per_host becomes 4), NVSwitch links one per
 *    GPU: 4 nvlink@ links; `strata run` of a 4-device all-reduce exits 0;
 *  - tpu-v5e-256 (16x16) with devices=64: the v5e slice 8x8; a 2D torus of
 *    8x8 has 4 neighbours per chip, so 64 * 4 / 2 = 128 ici links, and chip
 *    0's neighbours are 1, 7 (wrap-around in the row), 8 and 56 (column);
 *    with devices=4: 2x2, 2 neighbours per chip (the two ways round a ring of
 *    2 are one link), 4 * 2 / 2 = 4 links, and 4 < devices_per_host = 8 makes
 *    one host;
 *  - tpu-v5p-64 (4x4x4) with devices=16: 2x2x4, neighbours 1 + 1 + 2 = 4 per
 *    chip, 16 * 4 / 2 = 32 links; 4 devices per host: 4 hosts;
 *  - no slice of 12 chips: exit 2 naming [interconnect ici] dims and listing
 *    the shapes (8x8 (64) among them);
 *  - explicit dims or devices_per_host win; a file's own devices are not
 *    sliced (devices = 4 with devices_per_host = 8 in a file stays an error).
 */
#include <glib/gstdio.h>
#include <string.h>
#include "testutil.h"
#include "core/error.h"
#include "hw/hw.h"

static strata_hw *load(const char *name, const char *const *overrides, GError **err)
{
    char *path = g_strdup_printf("configs/hw/%s.ini", name);
    char *full = strata_test_source_path(path);
    strata_hw *hw = strata_hw_load(full, overrides, err);
    g_free(path);
    g_free(full);
    return hw;
}

static void check_node_of_four(const char *name)
{
    const char *const set[] = {"hardware.devices=4", NULL};
    strata_hw *hw = strata_test_load_hw(name, set);
    ck_assert_uint_eq(strata_hw_devices(hw), 4);
    ck_assert_uint_eq(strata_hw_devices_per_host(hw), 4);
    ck_assert_uint_eq(strata_test_count_links(hw, "nvlink@"), 4);
    strata_hw_free(hw);
}

START_TEST(node_slice_is_one_host)
{
    check_node_of_four("a100-8");
    check_node_of_four("dgx-h100");
}
END_TEST

START_TEST(node_slice_runs)
{
    char *dir = strata_test_temp_dir();
    char *trace = g_build_filename(dir, "c4.trace", NULL);
    strata_cli_result r = strata_test_cli("gen", "collective", "devices=4", "bytes=1MiB", "-o", trace, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    const char *hws[] = {"configs/hw/a100-8.ini", "configs/hw/dgx-h100.ini"};
    for (int i = 0; i < 2; i++) {
        char *hw = strata_test_source_path(hws[i]);
        r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--set", "hardware.devices=4", "--quiet", "--json",
                            "-", NULL);
        ck_assert_msg(r.status == 0, "%s: %s", hws[i], r.err);
        ck_assert_msg(strstr(r.out, "\"devices\" : 4") || strstr(r.out, "\"devices\": 4"), "%s", r.out);
        strata_cli_result_clear(&r);
        g_free(hw);
    }
    g_unlink(trace);
    g_rmdir(dir);
    g_free(trace);
    g_free(dir);
}
END_TEST

/* Issue 46 (the earlier matrix: devices=1 and =2 on a100-8.ini "accepted
 * silently"). The file says `--set hardware.devices=N` simulates N GPUs of
 * the node: a slice, as docs/multi-device.md's rule 1 makes it (below
 * devices_per_host = 8, one host of N). devices=2: 2 devices, one host of
 * 2, two NVSwitch links (one per GPU), memories hbm@0, hbm@1, host@0; a
 * 2-device all-reduce runs. devices=1: one device, no interconnect (a
 * model of one device names its memories hbm, host, pageable, as a100.ini
 * does); a program of one device takes the time it takes on device 0 of
 * the whole node, since nothing it uses is shared (the same makespan);
 * a collective on it is refused, the message naming the rule (collectives
 * run over a model of 2 or more devices). */
START_TEST(node_slices_of_one_and_two)
{
    const char *const two[] = {"hardware.devices=2", NULL}, *const one[] = {"hardware.devices=1", NULL};
    strata_hw *hw = strata_test_load_hw("a100-8", two);
    ck_assert_uint_eq(strata_hw_devices(hw), 2);
    ck_assert_uint_eq(strata_hw_devices_per_host(hw), 2);
    ck_assert_uint_eq(strata_hw_hosts(hw), 1);
    ck_assert_uint_eq(strata_test_count_links(hw, "nvlink@"), 2);
    ck_assert_int_ge(strata_hw_memory_index(hw, "hbm@1"), 0);
    ck_assert_int_lt(strata_hw_memory_index(hw, "hbm@2"), 0);
    strata_hw_free(hw);
    hw = strata_test_load_hw("a100-8", one);
    ck_assert_uint_eq(strata_hw_devices(hw), 1);
    ck_assert_uint_eq(strata_hw_devices_per_host(hw), 1);
    ck_assert_uint_eq(strata_test_count_links(hw, "nvlink"), 0);
    ck_assert_int_ge(strata_hw_memory_index(hw, "hbm"), 0);
    ck_assert_int_ge(strata_hw_memory_index(hw, "pageable"), 0);
    strata_hw_free(hw);

    char *dir = strata_test_temp_dir();
    char *hwp = strata_test_source_path("configs/hw/a100-8.ini");
    const char *sh_fmt = "\"$S\" gen transformer layers=2 d_model=256 heads=4 seq=128 batch=2 vocab=1000 -o t.trace "
                         "&& \"$S\" gen collective devices=2 bytes=1MiB -o c2.trace "
                         "&& \"$S\" gen collective devices=1 bytes=1MiB -o c1.trace "
                         "&& \"$S\" run --hw '%s' --trace t.trace --quiet --json full.json "
                         "&& \"$S\" run --hw '%s' --set hardware.devices=1 --trace t.trace --quiet --json one.json "
                         "&& \"$S\" run --hw '%s' --set hardware.devices=2 --trace c2.trace --quiet "
                         "&& grep makespan_s full.json && grep makespan_s one.json";
    char *script = g_strdup_printf(sh_fmt, hwp, hwp, hwp);
    strata_cli_result r = strata_test_sh_in(dir, script);
    ck_assert_msg(r.status == 0, "%s %s", r.out, r.err);
    char **lines = g_strsplit(r.out, "\n", -1);
    ck_assert_msg(lines[0] && lines[1] && strcmp(lines[0], lines[1]) == 0, "%s", r.out);
    g_strfreev(lines);
    strata_cli_result_clear(&r);
    g_free(script);
    script = g_strdup_printf("\"$S\" run --hw '%s' --set hardware.devices=1 --trace c1.trace", hwp);
    r = strata_test_sh_in(dir, script);
    ck_assert_msg(r.status == 2 && strstr(r.err, "c1.trace:6: expected an op of one device, got all-reduce: this "
                                                 "hardware model has one device") &&
                      strstr(r.err, "devices = 2 or more"),
                  "%s", r.err);
    strata_cli_result_clear(&r);
    g_free(script);
    g_free(hwp);
    r = strata_test_sh_in(dir, "rm -f t.trace c1.trace c2.trace full.json one.json");
    strata_cli_result_clear(&r);
    g_rmdir(dir);
    g_free(dir);
}
END_TEST

START_TEST(v5e_64_is_8x8)
{
    const char *const set[] = {"hardware.devices=64", NULL};
    strata_hw *hw = strata_test_load_hw("tpu-v5e-256", set);
    ck_assert_uint_eq(strata_hw_devices(hw), 64);
    ck_assert_uint_eq(strata_hw_devices_per_host(hw), 8);
    ck_assert_uint_eq(strata_test_count_links(hw, "ici:"), 128);
    strata_test_link(hw, "ici:0-1");
    strata_test_link(hw, "ici:0-7");
    strata_test_link(hw, "ici:0-8");
    strata_test_link(hw, "ici:0-56");
    strata_hw_free(hw);
}
END_TEST

START_TEST(v5e_4_is_2x2_one_host)
{
    const char *const set[] = {"hardware.devices=4", NULL};
    strata_hw *hw = strata_test_load_hw("tpu-v5e-256", set);
    ck_assert_uint_eq(strata_hw_devices_per_host(hw), 4);
    ck_assert_uint_eq(strata_test_count_links(hw, "ici:"), 4);
    strata_hw_free(hw);
}
END_TEST

START_TEST(v5p_16_is_2x2x4)
{
    const char *const set[] = {"hardware.devices=16", NULL};
    strata_hw *hw = strata_test_load_hw("tpu-v5p-64", set);
    ck_assert_uint_eq(strata_hw_devices_per_host(hw), 4);
    ck_assert_uint_eq(strata_test_count_links(hw, "ici:"), 32);
    strata_hw_free(hw);
}
END_TEST

START_TEST(no_slice_of_12_lists_shapes)
{
    const char *const set[] = {"hardware.devices=12", NULL};
    GError *err = NULL;
    strata_hw *hw = load("tpu-v5e-256", set, &err);
    ck_assert_ptr_null(hw);
    ck_assert_msg(strstr(err->message, "[interconnect ici] dims") && strstr(err->message, "8x8 (64)") &&
                      strstr(err->message, "12 chips"),
                  "%s", err->message);
    g_error_free(err);
    /* and through the CLI: exit 2 */
    char *hwp = strata_test_source_path("configs/hw/tpu-v5e-256.ini");
    char *trace = strata_test_source_path("traces/examples/pcie-copy.trace");
    strata_cli_result r = strata_test_cli("run", "--hw", hwp, "--trace", trace, "--set", "hardware.devices=12",
                                          "--quiet", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "16x16 (256)"), "%s", r.err);
    strata_cli_result_clear(&r);
    g_free(hwp);
    g_free(trace);
}
END_TEST

START_TEST(explicit_values_win)
{
    /* dims given: kept (4x16 is no v5e slice, but the user chose it): 4 * 4 / 2 ... a 4x16 torus has
     * 4 neighbours per chip: 64 * 4 / 2 = 128 links, and 0-16 (column) instead of 0-8 */
    const char *const dims[] = {"hardware.devices=64", "interconnect.ici.dims=4x16", NULL};
    strata_hw *hw = strata_test_load_hw("tpu-v5e-256", dims);
    strata_test_link(hw, "ici:0-16");
    strata_hw_free(hw);
    /* devices_per_host given and not a divisor: still the loader's error */
    const char *const dph[] = {"hardware.devices=4", "hardware.devices_per_host=8", NULL};
    GError *err = NULL;
    ck_assert_ptr_null(load("a100-8", dph, &err));
    ck_assert_msg(strstr(err->message, "devices_per_host"), "%s", err->message);
    g_clear_error(&err);
    /* a file's own devices below devices_per_host: not a slice, an error */
    char *path = strata_test_source_path("configs/hw/a100-8.ini");
    char *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    GString *s = g_string_new(text);
    g_string_replace(s, "devices = 8\n", "devices = 4\n", 1);
    ck_assert_ptr_null(strata_hw_load_data(s->str, "a100-4-of-8.ini", NULL, &err));
    ck_assert_msg(strstr(err->message, "expected a divisor of devices = 4"), "%s", err->message);
    g_clear_error(&err);
    g_string_free(s, TRUE);
    g_free(text);
    g_free(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hw_slice");
    TCase *tc = tcase_create("slice");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, node_slice_is_one_host);
    tcase_add_test(tc, node_slice_runs);
    tcase_add_test(tc, node_slices_of_one_and_two);
    tcase_add_test(tc, v5e_64_is_8x8);
    tcase_add_test(tc, v5e_4_is_2x2_one_host);
    tcase_add_test(tc, v5p_16_is_2x2x4);
    tcase_add_test(tc, no_slice_of_12_lists_shapes);
    tcase_add_test(tc, explicit_values_win);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
