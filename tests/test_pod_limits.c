/*
 * test_pod_limits.c: device counts from 1 to 10^6, absurd torus dims, a
 * dense `topology = full` and an all-to-all too wide for the engine give
 * exit 0 or 2 (with the figure), never a crash, a runaway or a multi-GB
 * allocation: each run has 4 GB of address space (ulimit -v, as issue 30's
 * adversarial pass ran them; not under the sanitizers, which reserve more
 * than that for their shadow memory) and 60 s, and its TMPDIR must hold no
 * strata-platform-*.xml afterwards.
 */
#include <string.h>
#include "testutil.h"

#define AS_LIMIT_KIB "4000000"

typedef struct limited_run {
    int status; /* exit status; -1: killed by a signal */
    char *err;
} limited_run;

static limited_run run_limited(const char *trace, const char *hw, const char *const *sets)
{
    char *tmp = strata_test_temp_dir();
    char *hw_path = strata_test_source_path(hw);
    GPtrArray *args = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(args, g_strdup("sh"));
    g_ptr_array_add(args, g_strdup("-c"));
#ifdef STRATA_SANITIZE
    g_ptr_array_add(args, g_strdup("exec timeout 60 \"$0\" \"$@\""));
#else
    g_ptr_array_add(args, g_strdup("ulimit -v " AS_LIMIT_KIB " && exec timeout 60 \"$0\" \"$@\""));
#endif
    g_ptr_array_add(args, g_strdup(STRATA_BIN));
    g_ptr_array_add(args, g_strdup("run"));
    g_ptr_array_add(args, g_strdup("-q"));
    g_ptr_array_add(args, g_strdup_printf("--trace=%s", trace));
    g_ptr_array_add(args, g_strdup_printf("--hw=%s", hw_path));
    for (const char *const *s = sets; s && *s; s++)
        g_ptr_array_add(args, g_strdup_printf("--set=%s", *s));
    g_ptr_array_add(args, NULL);
    char **env = g_environ_setenv(g_get_environ(), "TMPDIR", tmp, TRUE);
    limited_run r = {-1, NULL};
    int wait_status = 0;
    GError *err = NULL;
    ck_assert_msg(g_spawn_sync(NULL, (char **)args->pdata, env, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, &r.err,
                               &wait_status, &err),
                  "%s", err ? err->message : "");
    if (WIFEXITED(wait_status))
        r.status = WEXITSTATUS(wait_status);
    /* nothing left behind: the platform is unlinked before SimGrid loads it */
    GDir *dir = g_dir_open(tmp, 0, NULL);
    ck_assert_ptr_nonnull(dir);
    const char *left = g_dir_read_name(dir);
    ck_assert_msg(left == NULL, "left in TMPDIR: %s", left);
    g_dir_close(dir);
    strata_test_remove_dir(tmp);
    g_strfreev(env);
    g_ptr_array_free(args, TRUE);
    g_free(hw_path);
    g_free(tmp);
    return r;
}

static char *one_copy_trace(void)
{
    return strata_test_write_temp("pod-XXXXXX.trace", "strata-trace 1\n"
                                                      "alloc a 1MiB\nalloc b 1MiB\ncopy b a\nfree a\nfree b\n");
}

/* Accepted sizes run (0); the rest are refused (2) with the figure. */
START_TEST(test_device_counts)
{
    char *trace = one_copy_trace();
    static const struct {
        const char *devices;
        int status;
        const char *says;
    } cases[] = {
        {"hardware.devices=1", 0, NULL},
        {"hardware.devices=2", 0, NULL},
        {"hardware.devices=64", 0, NULL},
        {"hardware.devices=1024", 0, NULL},
        /* test-ring8 at 8,192 devices: 8,193 zones are few enough now that
         * loading is linear in hosts (before issue 28's platform builder:
         * zones x hosts = 201,367,554, refused), but the routes between
         * sites are not: the ring's 2 x 8,192 one-link edges and the 2 x
         * 8,192 edges between each device and the host, each 1 link and
         * 2,048 padding links (test: the message's figure):
         * 16,384 + 16,384 x 2,049 = 16,384 x 2,050 = 33,587,200 > 2^23 */
        {"hardware.devices=8192", 2, "33587200 links on the routes between sites"},
        /* 16,384 device sites and the host's: 16,385 zones > 2^14 */
        {"hardware.devices=16384", 2, "16385 routing zones"},
        {"hardware.devices=65536", 2, "at most"},
        {"hardware.devices=65537", 2, "hardware.devices"},
        {"hardware.devices=1000000", 2, "hardware.devices"},
        {"hardware.devices=18446744073709551617", 2, "hardware.devices"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *sets[] = {cases[i].devices, NULL};
        limited_run r = run_limited(trace, "configs/hw/test-ring8.ini", sets);
        ck_assert_msg(r.status == cases[i].status, "%s: exit %d, expected %d: %s", cases[i].devices, r.status,
                      cases[i].status, r.err);
        if (cases[i].says)
            ck_assert_msg(strstr(r.err, cases[i].says), "%s: %s", cases[i].devices, r.err);
        g_free(r.err);
    }
    unlink(trace);
    g_free(trace);
}
END_TEST

/* Issue 30's examples: a 32,768-device DGX and torus dims past the limits. */
START_TEST(test_absurd_shapes)
{
    char *trace = one_copy_trace();
    static const struct {
        const char *hw;
        const char *set[3];
        const char *says;
    } cases[] = {
        {"configs/hw/dgx-h100.ini", {"hardware.devices=32768", NULL, NULL}, "at most"},
        {"configs/hw/tpu-v5p-64.ini", {"hardware.devices=65536", "interconnect.ici.dims=32x32x64", NULL}, "at most"},
        {"configs/hw/tpu-v5p-64.ini", {"hardware.devices=64", "interconnect.ici.dims=4294967296x1x1", NULL}, "dims"},
        {"configs/hw/tpu-v5p-64.ini", {"hardware.devices=64", "interconnect.ici.dims=0x8x8", NULL}, "dims"},
        {"configs/hw/tpu-v5p-64.ini", {"hardware.devices=65536", "interconnect.ici.dims=65536x1x1", NULL}, NULL},
        /* 1,024 devices fully connected: 1,024 x 1,023 / 2 = 523,776 ici
         * links and 1,024 pcie links (one per device), 524,800 > 2^18 */
        {"configs/hw/test-ring8.ini", {"hardware.devices=1024", "interconnect.ici.topology=full", NULL}, "524800 links"},
        {"configs/hw/test-ring8.ini", {"hardware.devices=65536", "interconnect.ici.topology=switch", NULL},
         "at most"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        limited_run r = run_limited(trace, cases[i].hw, cases[i].set);
        ck_assert_msg(r.status == 2, "%s %s: exit %d: %s", cases[i].hw, cases[i].set[0], r.status, r.err);
        if (cases[i].says)
            ck_assert_msg(strstr(r.err, cases[i].says), "%s %s: %s", cases[i].hw, cases[i].set[0], r.err);
        g_free(r.err);
    }
    unlink(trace);
    g_free(trace);
}
END_TEST

/* The generator's all-to-all over 256 devices: one round of 256 x 256
 * copies (direct; self-copies included) is refused on every device; over
 * 16 it runs. On the ring its routes have no exact symmetry (the
 * antipode's route goes one way round), so by default, past 8,192 copies
 * a round, it runs fast (one class, data+1) and says so; the refusal is
 * checked with the default's threshold out of reach
 * (STRATA_CLASSES_FALLBACK_COPIES: docs/classes.md, "When the default runs
 * fast"). */
START_TEST(test_wide_all_to_all)
{
    char *dir = strata_test_temp_dir();
    for (int n = 16; n <= 256; n *= 16) {
        char *trace = g_strdup_printf("%s/a2a%d.trace", dir, n);
        char *devices = g_strdup_printf("devices=%d", n);
        strata_cli_result g =
            strata_test_cli("gen", "collective", "op=all-to-all", "bytes=1MiB", devices, "-o", trace, NULL);
        ck_assert_msg(g.status == 0, "%s", g.err);
        strata_cli_result_clear(&g);
        char *set = g_strdup_printf("hardware.devices=%d", n);
        const char *sets[] = {set, NULL};
        limited_run r = run_limited(trace, "configs/hw/test-ring8.ini", sets);
        if (n == 16)
            ck_assert_msg(r.status == 0 && !strstr(r.err, "note:"), "%s", r.err);
        else
            ck_assert_msg(r.status == 0 && strstr(r.err, "would move 65536 copies in a round, more than 8192") &&
                              strstr(r.err, "running --collectives fast (1 simulated, symmetry data+1, approximate)"),
                          "exit %d: %s", r.status, r.err);
        g_free(r.err);
        g_setenv("STRATA_CLASSES_FALLBACK_COPIES", "4294967296", TRUE);
        r = run_limited(trace, "configs/hw/test-ring8.ini", sets);
        g_unsetenv("STRATA_CLASSES_FALLBACK_COPIES");
        if (n == 16)
            ck_assert_msg(r.status == 0, "%s", r.err);
        else
            ck_assert_msg(r.status == 2 && strstr(r.err, "moves 65536 copies at once"), "exit %d: %s", r.status,
                          r.err);
        g_free(r.err);
        g_free(set);
        g_free(devices);
        g_free(trace);
    }
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pod_limits");
    TCase *tc = tcase_create("limits");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_device_counts);
    tcase_add_test(tc, test_absurd_shapes);
    tcase_add_test(tc, test_wide_all_to_all);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
