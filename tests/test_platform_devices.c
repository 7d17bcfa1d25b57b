/*
 * test_platform_devices.c: on machines with several devices the SimGrid
 * platform (engine_platform.c: a zone per site, Dijkstra between them)
 * routes every transfer over exactly the links strata_hw_route() names,
 * so the engine's per-link accounting is what SimGrid simulates: for each
 * pair of memories checked, the links SimGrid returns (less the padding)
 * are the route's ports and links, as multisets.
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

/* Loads the platform of configs/hw/NAME.ini and compares the routes from
 * every memory whose site is in `sources` (all when NULL) to every memory. */
static void compare_routes(const char *name, const uint32_t *sources, guint n_sources)
{
    strata_hw *hw = strata_test_load_hw(name, NULL);
    GError *err = NULL;
    ck_assert_msg(engine_platform_load(hw, &err), "%s", err ? err->message : "");
    simgrid_run(); /* no actor: seals the platform (routing tables) and returns */
    engine_hosts h = {0};
    ck_assert(engine_hosts_lookup(hw, &h, &err));
    uint32_t n = strata_hw_memory_count(hw), compared = 0;
    for (uint32_t a = 0; a < n; a++) {
        bool wanted = sources == NULL;
        for (guint s = 0; s < n_sources; s++)
            wanted = wanted || strata_hw_memory_site(hw, a) == sources[s];
        for (uint32_t b = 0; wanted && b < n; b++) {
            char *want = expected_links(hw, a, b), *got = simgrid_links(&h, a, b);
            ck_assert_msg(strcmp(want, got) == 0, "%s: %s -> %s: model %s, SimGrid %s", name,
                          strata_hw_memory(hw, a)->name, strata_hw_memory(hw, b)->name, want, got);
            g_free(want);
            g_free(got);
            compared++;
        }
    }
    ck_assert_uint_gt(compared, n);
    engine_hosts_clear(&h);
    strata_hw_free(hw);
}

START_TEST(ring_routes_match) { compare_routes("test-ring8", NULL, 0); }
END_TEST

START_TEST(torus_routes_match) { compare_routes("test-torus16", NULL, 0); }
END_TEST

START_TEST(switch_routes_match) { compare_routes("test-switch8", NULL, 0); }
END_TEST

/* 16x16 torus, 64 hosts: from devices 0, 17, 136 and 255 and hosts 0 and
 * 37 (sites 256 + H) to every memory. */
START_TEST(pod_routes_match)
{
    static const uint32_t sources[] = {0, 17, 136, 255, 256, 256 + 37};
    compare_routes("test-pod256", sources, G_N_ELEMENTS(sources));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("platform_devices");
    TCase *t = tcase_create("routes");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, ring_routes_match);
    tcase_add_test(t, torus_routes_match);
    tcase_add_test(t, switch_routes_match);
    tcase_add_test(t, pod_routes_match);
    suite_add_tcase(s, t);
    return s;
}

int main(void) { return strata_test_main(suite()); }
