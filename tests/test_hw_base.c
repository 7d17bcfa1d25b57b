/* test_hw_base.c: a hardware file that names a base file ([hardware] base =)
 * and states only what differs (hw/hw.c, docs/hardware.md). */
#include <string.h>
#include "testutil.h"
#include "core/error.h"
#include "hw/hw.h"
#include "hw/pcie.h"

static const char *base_text = "[hardware]\nname = base\n"
                               "[memory hbm]\nkind = device\ncapacity = 80GB\nbandwidth = 2TB/s\n"
                               "[memory host]\nkind = host\ncapacity = 1TB\nbandwidth = 200GB/s\n"
                               "[link pcie]\nbetween = host hbm\ngeneration = 4\nlanes = 16\nmax_payload = 256B\n"
                               "max_read_request = 512B\nlatency = 2us\n";

/* A derived file in the base's folder; returns its path (g_free). */
static char *derived(const char *base_path, const char *body)
{
    char *name = g_path_get_basename(base_path);
    char *text = g_strdup_printf("[hardware]\nbase = %s\n%s", name, body);
    char *path = strata_test_write_temp("derived-XXXXXX.ini", text);
    g_free(text);
    g_free(name);
    return path;
}

START_TEST(changes_only_what_it_states)
{
    char *base = strata_test_write_temp("base-XXXXXX.ini", base_text);
    char *path = derived(base, "name = gen3-host\n[memory hbm]\ncapacity = 40GB\n[link pcie]\ngeneration = 3\n");
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    ck_assert_str_eq(strata_hw_name(hw), "gen3-host");
    int hbm = strata_hw_memory_index(hw, "hbm");
    ck_assert_int_ge(hbm, 0);
    ck_assert_uint_eq(strata_hw_memory(hw, (uint32_t)hbm)->capacity, 40000000000ull); /* changed */
    ck_assert_double_eq(strata_hw_memory(hw, (uint32_t)hbm)->bandwidth, 2e12);        /* kept */
    /* Gen3 x16 at 256 B: the derivation of test_pcie.c, 12.994293 GB/s */
    strata_pcie_config gen3 = {3, 16, 256, 512, 0};
    ck_assert_double_eq_tol(strata_hw_link(hw, 0)->bandwidth, strata_pcie_data_rate(&gen3), 1);
    ck_assert_double_eq_tol(strata_hw_link(hw, 0)->bandwidth, 12.994293e9, 1e3);
    ck_assert_double_eq(strata_hw_link(hw, 0)->latency, 2e-6); /* kept */
    strata_hw_free(hw);
    g_free(path);

    /* an error in a replaced value names the derived file's line */
    path = derived(base, "[link pcie]\ngeneration = 7\n");
    hw = strata_hw_load(path, NULL, &err);
    ck_assert_ptr_null(hw);
    char *want = g_strdup_printf("%s:4", path);
    ck_assert_msg(strstr(err->message, want) && strstr(err->message, "generation"), "%s (want %s)", err->message,
                  want);
    g_free(want);
    g_clear_error(&err);
    g_free(path);

    /* a group the base lacks */
    path = derived(base, "[memory l2]\nkind = onchip\n");
    hw = strata_hw_load(path, NULL, &err);
    ck_assert_ptr_null(hw);
    ck_assert_msg(strstr(err->message, "[memory l2] is not in the base file"), "%s", err->message);
    g_clear_error(&err);
    g_free(path);

    /* a missing base and a base with a base */
    path = derived("/nonexistent/none.ini", "");
    hw = strata_hw_load(path, NULL, &err);
    ck_assert_ptr_null(hw);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_msg(strstr(err->message, "[hardware] base:"), "%s", err->message);
    g_clear_error(&err);
    char *chained = derived(path, "");
    hw = strata_hw_load(chained, NULL, &err);
    ck_assert_ptr_null(hw);
    ck_assert_msg(strstr(err->message, "one level only"), "%s", err->message);
    g_clear_error(&err);
    g_free(chained);
    g_free(path);
    g_free(base);
}
END_TEST

/* The driver's total belongs to the capacity it was written beside: a derived file that restates capacity alone
 * (another part) drops the base's reported_capacity, which would otherwise refuse a smaller part (40 GiB under
 * 79.11 GiB) or shrink a larger one's pool (180 GiB read as 79.11); one that restates reported_capacity keeps its
 * own. 79.11 GiB = 84,943,715,697 B (79.11 x 2^30 = 84,943,715,696.64, rounded); 75 GiB = 80,530,636,800 B. */
START_TEST(reported_capacity_follows_capacity)
{
    static const char *text = "[hardware]\nname = base\n"
                              "[memory hbm]\nkind = device\ncapacity = 80GiB\nreported_capacity = 79.11GiB\n"
                              "bandwidth = 2TB/s\n"
                              "[memory host]\nkind = host\ncapacity = 1TB\nbandwidth = 200GB/s\n"
                              "[link pcie]\nbetween = host hbm\ngeneration = 4\nlanes = 16\nmax_payload = 256B\n"
                              "max_read_request = 512B\nlatency = 2us\n";
    char *base = strata_test_write_temp("base-XXXXXX.ini", text);
    const char *bodies[] = {"[memory hbm]\nbandwidth = 1TB/s\n", "[memory hbm]\ncapacity = 40GiB\n",
                            "[memory hbm]\ncapacity = 180GiB\n", "[memory hbm]\nreported_capacity = 75GiB\n"};
    const uint64_t want[] = {84943715697ull, 0, 0, 80530636800ull};
    for (size_t i = 0; i < G_N_ELEMENTS(bodies); i++) {
        char *path = derived(base, bodies[i]);
        GError *err = NULL;
        strata_hw *hw = strata_hw_load(path, NULL, &err);
        ck_assert_msg(hw, "%zu: %s", i, err ? err->message : "");
        int hbm = strata_hw_memory_index(hw, "hbm");
        ck_assert_uint_eq(strata_hw_memory(hw, (uint32_t)hbm)->reported_capacity, want[i]);
        strata_hw_free(hw);
        g_free(path);
    }
    g_free(base);
}
END_TEST

/* The total is dropped only where capacity changes SIZE after it was stated (wave 41): restated at the same size,
 * by a derived file or a --set (--set memory.hbm.capacity=80GiB on h100.ini), it is kept; compared as bytes (81920MiB
 * = 80 x 1024 MiB = 80 GiB). A total the derived file states belongs to the capacity then in force: a --set of the
 * same capacity keeps it, of another drops it (79GiB under a total of 75GiB written for 80GiB: kept before).
 * 79.11 GiB = 84,943,715,697 B; 75 GiB = 80,530,636,800 B; 39 GiB = 41,875,931,136 B (39 x 2^30). */
START_TEST(reported_capacity_kept_at_same_capacity)
{
    static const char *text = "[hardware]\nname = base\n"
                              "[memory hbm]\nkind = device\ncapacity = 80GiB\nreported_capacity = 79.11GiB\n"
                              "bandwidth = 2TB/s\n"
                              "[memory host]\nkind = host\ncapacity = 1TB\nbandwidth = 200GB/s\n"
                              "[link pcie]\nbetween = host hbm\ngeneration = 4\nlanes = 16\nmax_payload = 256B\n"
                              "max_read_request = 512B\nlatency = 2us\n";
    char *base = strata_test_write_temp("base-XXXXXX.ini", text);
    static const struct {
        const char *body; /* NULL: the base file itself */
        const char *set;  /* an override, or NULL */
        uint64_t want;
    } rows[] = {
        {"[memory hbm]\ncapacity = 80GiB\n", NULL, 84943715697ull},
        {"[memory hbm]\ncapacity = 81920MiB\n", NULL, 84943715697ull},
        {NULL, "memory.hbm.capacity=80GiB", 84943715697ull},
        {NULL, "memory.hbm.capacity=81GiB", 0},
        {"[memory hbm]\nreported_capacity = 75GiB\n", "memory.hbm.capacity=80GiB", 80530636800ull},
        {"[memory hbm]\nreported_capacity = 75GiB\n", "memory.hbm.capacity=79GiB", 0},
        {"[memory hbm]\ncapacity = 40GiB\nreported_capacity = 39GiB\n", "memory.hbm.capacity=40GiB", 41875931136ull},
        {"[memory hbm]\ncapacity = 40GiB\n", "memory.hbm.capacity=80GiB", 84943715697ull},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        char *path = rows[i].body ? derived(base, rows[i].body) : g_strdup(base);
        const char *sets[] = {rows[i].set, NULL};
        GError *err = NULL;
        strata_hw *hw = strata_hw_load(path, rows[i].set ? sets : NULL, &err);
        ck_assert_msg(hw, "%zu: %s", i, err ? err->message : "");
        int hbm = strata_hw_memory_index(hw, "hbm");
        ck_assert_msg(strata_hw_memory(hw, (uint32_t)hbm)->reported_capacity == rows[i].want, "%zu: %" G_GUINT64_FORMAT,
                      i, strata_hw_memory(hw, (uint32_t)hbm)->reported_capacity);
        strata_hw_free(hw);
        g_free(path);
    }
    g_free(base);
}
END_TEST

/* device_name belongs to the part whose device memory it was written beside (wave 42, H1 of wave 41's review): a
 * derived file or a --set that restates the device memory's capacity at another size describes another part, so
 * the base's "NVIDIA H200" (which chooses vLLM 0.7.3's H200 fused_moe file) is dropped; restated at the same size
 * (141GiB = 144384MiB) it is kept; a derived file that restates device_name with the new capacity keeps its own. */
START_TEST(device_name_follows_capacity)
{
    static const char *text = "[hardware]\nname = base\ndevice_name = NVIDIA H200\n"
                              "[memory hbm]\nkind = device\ncapacity = 141GiB\nbandwidth = 4.8TB/s\n"
                              "[memory host]\nkind = host\ncapacity = 1TB\nbandwidth = 200GB/s\n"
                              "[link pcie]\nbetween = host hbm\ngeneration = 5\nlanes = 16\nmax_payload = 256B\n"
                              "max_read_request = 512B\nlatency = 2us\n";
    char *base = strata_test_write_temp("base-XXXXXX.ini", text);
    static const struct {
        const char *body; /* NULL: the base file itself */
        const char *set;  /* an override, or NULL */
        const char *want; /* NULL: no name */
    } rows[] = {
        {NULL, NULL, "NVIDIA H200"},
        {"[memory hbm]\ncapacity = 80GiB\n", NULL, NULL},
        {"[memory hbm]\ncapacity = 144384MiB\n", NULL, "NVIDIA H200"},
        {NULL, "memory.hbm.capacity=80GiB", NULL},
        {NULL, "memory.hbm.capacity=141GiB", "NVIDIA H200"},
        {"device_name = NVIDIA H100 80GB HBM3\n[memory hbm]\ncapacity = 80GiB\n", NULL,
         "NVIDIA H100 80GB HBM3"},
        {"device_name = NVIDIA H100 80GB HBM3\n[memory hbm]\ncapacity = 80GiB\n",
         "memory.hbm.capacity=94GiB", NULL},
        {"[memory hbm]\ncapacity = 80GiB\n", "memory.hbm.capacity=141GiB", "NVIDIA H200"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        char *path = rows[i].body ? derived(base, rows[i].body) : g_strdup(base);
        const char *sets[] = {rows[i].set, NULL};
        GError *err = NULL;
        strata_hw *hw = strata_hw_load(path, rows[i].set ? sets : NULL, &err);
        ck_assert_msg(hw, "%zu: %s", i, err ? err->message : "");
        const char *got = strata_hw_device_name(hw);
        ck_assert_msg(rows[i].want ? got && strcmp(got, rows[i].want) == 0 : !got, "%zu: %s", i, got ? got : "(none)");
        strata_hw_free(hw);
        g_free(path);
    }
    g_free(base);
}
END_TEST

/* [hardware] compute_capability is CUDA's MAJOR.MINOR, 1.0 to 99.9: a bare major, a two-digit minor, a leading
 * zero, 0.x or trailing text is refused naming the key; 10.0 is read as 100 (a B200). */
START_TEST(compute_capability_checked)
{
    static const struct {
        const char *value;
        uint32_t want; /* 0: refused */
    } rows[] = {{"9", 0}, {"9.10", 0}, {"0.5", 0}, {"09.0", 0}, {"9.0x", 0}, {"100.0", 0}, {"-9.0", 0},
                {"9. 5", 0}, {"9.+5", 0}, {"10.0", 100}, {"8.9", 89}, {" 7.5 ", 75}};
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "h100.ini", NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        char *set = g_strdup_printf("hardware.compute_capability=%s", rows[i].value);
        const char *sets[] = {set, NULL};
        GError *err = NULL;
        strata_hw *hw = strata_hw_load(path, sets, &err);
        if (rows[i].want) {
            ck_assert_msg(hw, "%s: %s", rows[i].value, err ? err->message : "");
            ck_assert_uint_eq(strata_hw_compute_capability(hw), rows[i].want);
            strata_hw_free(hw);
        } else {
            ck_assert_msg(!hw && err && strstr(err->message, "compute_capability: expected CUDA's MAJOR.MINOR"),
                          "%s: %s", rows[i].value, err ? err->message : "loaded");
            g_error_free(err);
        }
        g_free(set);
    }
    /* like device_name, it is dropped with a device capacity restated at another size, kept at the same size */
    const char *sets[][2] = {{"memory.hbm.capacity=94GiB", NULL}, {"memory.hbm.capacity=80GiB", NULL}};
    const uint32_t want[] = {0, 90};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        GError *err = NULL;
        strata_hw *hw = strata_hw_load(path, sets[i], &err);
        ck_assert_msg(hw, "%s", err ? err->message : "");
        ck_assert_uint_eq(strata_hw_compute_capability(hw), want[i]);
        strata_hw_free(hw);
    }
    g_free(path);
}
END_TEST

/* Every shipped validation/hw file loads through its base. */
START_TEST(shipped_validation_files)
{
    const char *files[] = {"v100-sxm2-16gb.ini", "a100-sxm4-40gb.ini", "a100-sxm4-40gb-gen3.ini",
                           "a100-pcie-40gb.ini", "h100-pcie.ini", "../held-out/hw/p4d-efa.ini",
                           "../held-out/hw/a100-40gb-hdr-ib.ini", "../held-out/hw/a100-40gb-4xhdr-ib.ini",
                           "../held-out/hw/oci-a100-40gb-roce.ini", "../../configs/hw/hgx-b200.ini"};
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        char *rel = g_strconcat("validation/hw/", files[i], NULL);
        char *path = strata_test_source_path(rel);
        GError *err = NULL;
        strata_hw *hw = strata_hw_load(path, NULL, &err);
        ck_assert_msg(hw, "%s: %s", files[i], err ? err->message : "");
        strata_hw_free(hw);
        g_free(path);
        g_free(rel);
    }
}
END_TEST

/* MareNostrum 5's ACC node (held-out set 23, wave 41) over dgx-h100.ini:
 * what its sources give, derived by hand. BSC's system overview: 4 H100 a
 * node, "4x ConnectX-7 NDR200" = 200 Gb/s a port = 25e9 B/s a direction,
 * one a GPU (per_host 4, each device its own). "H100 64GB": 64 GiB =
 * 64 x 2^30 = 68,719,476,736 B, and no driver total (the base's 79.11 GiB
 * belongs to the 80 GB part: restating capacity drops it). HBM ESTIMATE
 * 3.35e12 x 4 / 5 = 2.68e12 B/s. Two nodes of 4 by default: 8 devices, 2
 * hosts, a domain of 4. */
START_TEST(marenostrum5_acc_node)
{
    char *path = strata_test_source_path("validation/held-out/hw/mn5-acc-h100-ib.ini");
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    ck_assert_uint_eq(strata_hw_devices(hw), 8);
    ck_assert_uint_eq(strata_hw_devices_per_host(hw), 4);
    ck_assert_uint_eq(strata_hw_hosts(hw), 2);
    ck_assert_uint_eq(strata_hw_domain(hw), 4);
    int hbm_at_0 = strata_hw_memory_index(hw, "hbm@0");
    ck_assert_int_ge(hbm_at_0, 0);
    const strata_memory_spec *hbm = strata_hw_memory(hw, (uint32_t)hbm_at_0);
    ck_assert_uint_eq(hbm->capacity, 68719476736ull);
    ck_assert_uint_eq(hbm->reported_capacity, 0);
    ck_assert_double_eq_tol(hbm->pin_bandwidth, 2.68e12, 1e3);
    strata_hw_nics nics;
    ck_assert(strata_hw_network_nics(hw, &nics));
    ck_assert_uint_eq(nics.per_host, 4);
    ck_assert_uint_eq(nics.devices, 4);
    ck_assert(!nics.on_hosts);
    ck_assert_double_eq_tol(nics.bandwidth, 25e9, 1.0);
    strata_hw_free(hw);
    g_free(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hw_base");
    TCase *tc = tcase_create("hw_base");
    tcase_add_test(tc, changes_only_what_it_states);
    tcase_add_test(tc, reported_capacity_follows_capacity);
    tcase_add_test(tc, reported_capacity_kept_at_same_capacity);
    tcase_add_test(tc, device_name_follows_capacity);
    tcase_add_test(tc, compute_capability_checked);
    tcase_add_test(tc, shipped_validation_files);
    tcase_add_test(tc, marenostrum5_acc_node);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
