/*
 * test_engine_sg_build.c: the route-agreement test, beside the wall
 * (sim/engine/engine_sg_build.cpp, the one file that uses SimGrid's
 * internal API). strata's own routes (strata_hw_route: hw_route.c, and
 * hw_site.c, which follows SimGrid's Dijkstra and its ties) drive the
 * engine's per-link accounting, spmd's phases and the timelines; SimGrid
 * times the copies over the routes it computes itself on the platform
 * engine_platform.c builds. On every shipped machine with several devices
 * (each configs/hw/NAME.ini, found by listing the folder) the two must agree: for
 * each pair of memories checked, the links SimGrid returns (less the
 * padding) are the route's ports and links, as multisets. A SimGrid
 * release that routes or breaks ties otherwise fails here first.
 *
 * Each test runs in its own process (Check fork mode): SimGrid allows one
 * engine per process.
 */
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <string.h>
#include <xbt/dynar.h>
#include "engine/engine_platform.h"
#include "hw/hw.h"
#include "testutil.h"

static gint by_text(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "port:A link:L_UP port:P ..." sorted (the route's resources in any order;
 * SimGrid names a full-duplex link's directions L_UP and L_DOWN). */
static char *expected_links(const strata_hw *hw, uint32_t a, uint32_t b)
{
    const strata_hop *hops = NULL;
    uint32_t n = 0;
    ck_assert(strata_hw_route(hw, a, b, &hops, &n, NULL));
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(names, g_strdup_printf("port:%s", strata_hw_memory(hw, a)->name));
    if (n == 0) /* a copy inside one memory: its port both ways */
        g_ptr_array_add(names, g_strdup_printf("port:%s", strata_hw_memory(hw, a)->name));
    for (uint32_t i = 0; i < n; i++) {
        const strata_link_spec *l = strata_hw_link(hw, hops[i].link);
        g_ptr_array_add(names, g_strdup_printf("link:%s%s", l->name,
                                               l->full_duplex ? (hops[i].forward ? "_UP" : "_DOWN") : ""));
        if (hops[i].port != STRATA_HW_NO_MEMORY)
            g_ptr_array_add(names, g_strdup_printf("port:%s", strata_hw_memory(hw, hops[i].port)->name));
    }
    g_ptr_array_sort(names, by_text);
    g_ptr_array_add(names, NULL);
    char *out = g_strjoinv(" ", (char **)names->pdata);
    g_ptr_array_free(names, TRUE);
    return out;
}

/* The same from SimGrid's route between the hosts (padding left out). */
static char *simgrid_links(const engine_hosts *h, uint32_t a, uint32_t b)
{
    xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
    sg_host_get_route(h->mem[a], engine_copy_target(h, a, b), links);
    GPtrArray *names = g_ptr_array_new();
    unsigned i;
    sg_link_t l;
    xbt_dynar_foreach (links, i, l)
        if (strcmp(sg_link_get_name(l), "pad") != 0)
            g_ptr_array_add(names, (gpointer)sg_link_get_name(l));
    g_ptr_array_sort(names, by_text);
    g_ptr_array_add(names, NULL);
    char *out = g_strjoinv(" ", (char **)names->pdata);
    g_ptr_array_free(names, TRUE);
    xbt_dynar_free(&links);
    return out;
}

/* The sites whose memories are the sources compared: all of them on up to
 * MAX_ALL_SITES sites, else the first devices, two in the middle, the last
 * one and three hosts (a 16x16 pod: devices 0, 1, 17, 136, 255 and hosts 0,
 * 37 and 63, whose routes cross every dimension and wrap-around). */
enum { MAX_ALL_SITES = 80 };

static bool source_site(const strata_hw *hw, uint32_t site)
{
    uint32_t sites = strata_hw_site_count(hw), d = strata_hw_devices(hw), hosts = sites - d;
    if (sites <= MAX_ALL_SITES)
        return true;
    const uint32_t picked[] = {0, 1, d / 16 + 1, d / 2 + 8, d - 1, d, d + hosts / 2 + 5, sites - 1};
    for (size_t i = 0; i < G_N_ELEMENTS(picked); i++)
        if (site == picked[i])
            return true;
    return false;
}

/* Loads the platform of PATH and compares the routes from every memory of
 * a source site to every memory; the number of routes compared. */
static uint32_t compare_routes(const char *path)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw != NULL, "%s: %s", path, err ? err->message : "");
    ck_assert_msg(engine_platform_load(hw, &err), "%s", err ? err->message : "");
    simgrid_run(); /* no actor: seals the platform (routing tables) and returns */
    engine_hosts h = {0};
    ck_assert(engine_hosts_lookup(hw, &h, &err));
    uint32_t n = strata_hw_memory_count(hw), compared = 0;
    for (uint32_t a = 0; a < n; a++) {
        bool wanted = source_site(hw, strata_hw_memory_site(hw, a));
        for (uint32_t b = 0; wanted && b < n; b++) {
            char *want = expected_links(hw, a, b), *got = simgrid_links(&h, a, b);
            ck_assert_msg(strcmp(want, got) == 0, "%s: %s -> %s: model %s, SimGrid %s", path,
                          strata_hw_memory(hw, a)->name, strata_hw_memory(hw, b)->name, want, got);
            g_free(want);
            g_free(got);
            compared++;
        }
    }
    ck_assert_uint_gt(compared, n);
    engine_hosts_clear(&h);
    strata_hw_free(hw);
    return compared;
}

/* The .ini files of configs/hw, sorted: the shipped machines (none if the folder cannot
 * be listed: shipped_machines_are_listed then fails). */
static GPtrArray *shipped_machines(void)
{
    char *dir = strata_test_source_path("configs/hw");
    GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
    GDir *d = g_dir_open(dir, 0, NULL);
    for (const char *name; d && (name = g_dir_read_name(d));)
        if (g_str_has_suffix(name, ".ini"))
            g_ptr_array_add(paths, g_build_filename(dir, name, NULL));
    if (d)
        g_dir_close(d);
    g_free(dir);
    g_ptr_array_sort(paths, by_text);
    return paths;
}

static uint32_t devices_of(const char *path)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw != NULL, "%s: %s", path, err ? err->message : "");
    uint32_t devices = strata_hw_devices(hw);
    strata_hw_free(hw);
    return devices;
}

/* Shipped machine number _i, when it has several devices (single-device
 * ones route inside one zone, by explicit routes only). */
START_TEST(shipped_routes_match)
{
    GPtrArray *paths = shipped_machines();
    ck_assert_uint_lt(_i, paths->len);
    const char *path = g_ptr_array_index(paths, _i);
    if (devices_of(path) > 1)
        compare_routes(path);
    g_ptr_array_free(paths, TRUE);
}
END_TEST

/* The loop covers the machines listed: at least the 9 with several devices
 * of this test's day, so an empty listing cannot pass. */
START_TEST(shipped_machines_are_listed)
{
    GPtrArray *paths = shipped_machines();
    guint several = 0;
    for (guint i = 0; i < paths->len; i++)
        several += devices_of(g_ptr_array_index(paths, i)) > 1;
    ck_assert_uint_ge(several, 9);
    g_ptr_array_free(paths, TRUE);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("engine_sg_build");
    TCase *t = tcase_create("routes");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, shipped_machines_are_listed);
    GPtrArray *paths = shipped_machines();
    tcase_add_loop_test(t, shipped_routes_match, 0, (int)paths->len);
    g_ptr_array_free(paths, TRUE);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return strata_test_main(suite()); }
