/*
 * test_multislice.c: the data-center network step of a data-parallel
 * all-reduce across TPU v5e slices (configs/hw/tpu-v5e-256x4.ini, the xla
 * implementation's hierarchical pick), worked out by hand from the files:
 * what each host's NICs carry and for how long.
 *
 * Two slices (--set hardware.devices=512) of 256 chips, 32 hosts of 8
 * chips each ([cloud] "Chips per host 8"; a 16x16 slice is 32 hosts), each
 * host 2 x 100 Gb/s of DCN = 25 GB/s each way ([cloud] "Per-host NIC
 * configuration 2 x 100 Gbps NIC"; "Data center network bandwidth per Pod
 * 6.4 Tbps" = 32 x 200 Gb/s). The ICI, HBM and vector unit are made free
 * (1 PB/s, no latency) so that the DCN alone is timed.
 *
 * An all-reduce of G = 256 MiB a chip: the reduce-scatter over the slice's
 * ICI leaves chip c with its G / 256 = 1 MiB reduced over its slice; the
 * chips c of the two slices all-reduce it over the DCN, a bidirectional
 * ring of 2: the reduce-scatter half sends 512 KiB, the all-gather half
 * the other 512 KiB, so 1 MiB out and 1 MiB in a chip (its pcie link
 * carries 2 MiB), 8 chips x 1 MiB = 8 MiB each way a host (its dcn link
 * carries 16 MiB). The 8 chips' flows share the host's 25 GB/s, 3.125 GB/s
 * each (validation/hw/tpu-v5e-dcn.ini's share): 8 MiB / 25e9 =
 * 335.54432 us of transfer. Each of the two steps also waits for its
 * route's latency: pcie 2 us, dcn 10 us to the switch and 10 us from it,
 * pcie 2 us = 24 us; the link is busy from a step's start to its end:
 * 335.54432 + 2 x 24 = 383.54432 us.
 */
#include <math.h>
#include <unistd.h>
#include <json-glib/json-glib.h>
#include "testutil.h"

#define G_BYTES (256.0 * 1024 * 1024)

START_TEST(test_two_slices_dcn)
{
    char *trace = strata_test_write_temp("ms-XXXXXX.trace", "strata-trace 1\n"
                                                            "option mesh=data:512\n"
                                                            "alloc g 256MiB dtype=f32\n"
                                                            "all-reduce g axis=data\n"
                                                            "free g\n");
    char *dir = strata_test_temp_dir();
    char *json = g_build_filename(dir, "r.json", NULL);
    char *hw = strata_test_source_path("configs/hw/tpu-v5e-256x4.ini");
    const char *const argv[] = {"run", "-q", "--trace", trace, "--hw", hw, "--json", json, NULL};
    const char *const sets[] = {"hardware.devices=512", "interconnect.ici.bandwidth=1PB/s",
                                "interconnect.ici.latency=0us", "memory.hbm.bandwidth=1PB/s", NULL};
    strata_cli_result r = strata_test_run_cli_sets(argv, sets);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_file(p, json, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    JsonObject *coll = json_array_get_object_element(json_object_get_array_member(root, "collectives"), 0);
    ck_assert_str_eq(json_object_get_string_member(coll, "algo"), "hierarchical");
    JsonObject *links = json_object_get_object_member(root, "links");
    JsonObject *dcn = json_object_get_object_member(links, "dcn@0"), *pcie = json_object_get_object_member(links, "pcie@0");
    ck_assert_double_eq(json_object_get_double_member(pcie, "bytes"), 2.0 * G_BYTES / 256);
    ck_assert_double_eq(json_object_get_double_member(dcn, "bytes"), 2.0 * 8 * G_BYTES / 256);
    double want = 8 * G_BYTES / 256 / 25e9 + 2 * (2e-6 + 10e-6 + 10e-6 + 2e-6);
    ck_assert_msg(fabs(want - 383.54432e-6) < 1e-15, "by hand: %.10g", want);
    double busy = json_object_get_double_member(dcn, "busy_s");
    ck_assert_msg(fabs(busy - want) <= 1e-9 * want, "dcn@0 busy %.12g s, by hand %.12g s", busy, want);
    g_object_unref(p);
    strata_test_remove_dir(dir);
    g_free(hw);
    g_free(json);
    g_free(dir);
    unlink(trace);
    g_free(trace);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("multislice");
    TCase *tc = tcase_create("multislice");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_two_slices_dcn);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
