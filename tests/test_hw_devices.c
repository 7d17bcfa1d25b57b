/* test_hw_devices.c: hardware models with several devices: instance names
 * and indices, per-host links, each topology's links and routes, overrides
 * and every class of bad input (with its FILE:LINE). */
#include <string.h>
#include "testutil.h"
#include "core/error.h"
#include "hw/hw.h"
#include "placement/placement_hw.h"

static uint32_t mem_index(const strata_hw *hw, const char *name)
{
    int i = strata_hw_memory_index(hw, name);
    ck_assert_msg(i >= 0, "no memory %s", name);
    return (uint32_t)i;
}

/* The route as "link>port,link<-" ('-': no memory port after the hop). */
static char *route_text(const strata_hw *hw, const char *from, const char *to)
{
    const strata_hop *hops = NULL;
    uint32_t n = 0;
    GError *err = NULL;
    ck_assert_msg(strata_hw_route(hw, mem_index(hw, from), mem_index(hw, to), &hops, &n, &err), "%s",
                  err ? err->message : "");
    GString *s = g_string_new(NULL);
    for (uint32_t i = 0; i < n; i++)
        g_string_append_printf(s, "%s%s%s%s", i ? "," : "", strata_hw_link(hw, hops[i].link)->name,
                               hops[i].forward ? ">" : "<",
                               hops[i].port == STRATA_HW_NO_MEMORY ? "-" : strata_hw_memory(hw, hops[i].port)->name);
    return g_string_free(s, FALSE);
}

static void assert_route(const strata_hw *hw, const char *from, const char *to, const char *want)
{
    char *got = route_text(hw, from, to);
    ck_assert_msg(strcmp(got, want) == 0, "%s -> %s: got %s, want %s", from, to, got, want);
    g_free(got);
}

START_TEST(instances_are_named_and_indexed)
{
    strata_hw *hw = strata_test_load_hw("test-torus16", NULL);
    ck_assert_uint_eq(strata_hw_devices(hw), 16);
    ck_assert_uint_eq(strata_hw_devices_per_host(hw), 4);
    ck_assert_uint_eq(strata_hw_hosts(hw), 4);
    /* 16 hbm, 16 vmem, 4 host: template by template, devices consecutive */
    ck_assert_uint_eq(strata_hw_memory_count(hw), 36);
    ck_assert_str_eq(strata_hw_memory(hw, 0)->name, "hbm@0");
    ck_assert_str_eq(strata_hw_memory(hw, 15)->name, "hbm@15");
    ck_assert_str_eq(strata_hw_memory(hw, 16)->name, "vmem@0");
    ck_assert_str_eq(strata_hw_memory(hw, 35)->name, "host@3");
    ck_assert_int_eq(strata_hw_memory_index(hw, "hbm"), -1);
    ck_assert_int_eq(strata_hw_memory_index(hw, "hbm@16"), -1);
    int hbm = strata_hw_memory_base_index(hw, "hbm"), host = strata_hw_memory_base_index(hw, "host");
    ck_assert_int_eq(hbm, 0);
    ck_assert_int_eq(host, 2);
    ck_assert_int_eq(strata_hw_memory_base_index(hw, NULL), hbm);
    ck_assert_uint_eq(strata_hw_memory_on(hw, (uint32_t)hbm, 5), mem_index(hw, "hbm@5"));
    ck_assert_uint_eq(strata_hw_memory_on(hw, (uint32_t)host, 5), mem_index(hw, "host@1"));
    ck_assert_uint_eq(strata_hw_default_memory(hw), mem_index(hw, "hbm@0"));
    const strata_memory_spec *m = strata_hw_memory(hw, mem_index(hw, "host@2"));
    ck_assert_uint_eq(m->base, (uint32_t)host);
    ck_assert_uint_eq(m->site, 2);
    ck_assert_uint_eq(strata_hw_memory_site(hw, mem_index(hw, "host@2")), 16 + 2);
    ck_assert_uint_eq(strata_hw_memory_site(hw, mem_index(hw, "vmem@7")), 7);
    /* units per device, reading their own device's memory */
    ck_assert_uint_eq(strata_hw_compute_count(hw), 16);
    uint32_t u = strata_hw_compute_on(hw, (uint32_t)strata_hw_compute_base_index(hw, "core"), 9);
    ck_assert_str_eq(strata_hw_compute(hw, u)->name, "core@9");
    ck_assert_uint_eq(strata_hw_compute(hw, u)->device, 9);
    ck_assert_uint_eq(strata_hw_compute(hw, u)->operands, mem_index(hw, "hbm@9"));
    ck_assert_int_eq(strata_hw_compute_index(hw, "core@9"), (int)u);
    /* PCIe per device, to its host; dma per device */
    const strata_link_spec *pcie = strata_test_link(hw, "pcie@5");
    ck_assert_uint_eq(pcie->a, mem_index(hw, "host@1"));
    ck_assert_uint_eq(pcie->b, mem_index(hw, "hbm@5"));
    ck_assert_uint_eq(strata_test_count_links(hw, "pcie@"), 16);
    ck_assert_uint_eq(strata_test_count_links(hw, "dma@"), 16);
    strata_hw_free(hw);
}
END_TEST

START_TEST(one_device_keeps_names)
{
    /* devices = 1 (by override) renames nothing */
    const char *const set[] = {"hardware.devices=1", "hardware.devices_per_host=1", "interconnect.ici.dims=1x1",
                               NULL};
    strata_hw *hw = strata_test_load_hw("test-torus16", set);
    ck_assert_uint_eq(strata_hw_devices(hw), 1);
    ck_assert_uint_eq(strata_hw_memory_count(hw), 3);
    ck_assert_str_eq(strata_hw_memory(hw, 0)->name, "hbm");
    ck_assert_uint_eq(strata_hw_link_count(hw), 2);
    ck_assert_uint_eq(strata_hw_site_count(hw), 0);
    ck_assert_uint_eq(strata_hw_memory_on(hw, 2, 0), 2);
    assert_route(hw, "host", "vmem", "pcie>hbm,dma>vmem");
    strata_hw_free(hw);
}
END_TEST

START_TEST(torus_links_and_routes)
{
    strata_hw *hw = strata_test_load_hw("test-torus16", NULL);
    /* 4x4 torus: every device has 4 neighbours, 16 * 4 / 2 links */
    ck_assert_uint_eq(strata_test_count_links(hw, "ici:"), 32);
    const strata_link_spec *l = strata_test_link(hw, "ici:0-12"); /* wrap-around in the first dimension */
    ck_assert_uint_eq(l->a, mem_index(hw, "hbm@0"));
    ck_assert_uint_eq(l->b, mem_index(hw, "hbm@12"));
    ck_assert(l->bandwidth == 50e9 && l->latency == 1e-6 && l->full_duplex);
    strata_test_link(hw, "ici:0-3");
    strata_test_link(hw, "ici:0-4");
    /* neighbours: one hop, wrap-around included; the far port only */
    assert_route(hw, "hbm@0", "hbm@1", "ici:0-1>hbm@1");
    assert_route(hw, "hbm@0", "hbm@3", "ici:0-3>hbm@3");
    assert_route(hw, "hbm@3", "hbm@0", "ici:0-3<hbm@0");
    /* (0,0) -> (1,1): two hops; the predecessor of 5 is its lower-numbered
     * neighbour at distance 1 (1, not 4); chip 1's HBM port is not used */
    assert_route(hw, "hbm@0", "hbm@5", "ici:0-1>-,ici:1-5>hbm@5");
    /* (0,0) -> (2,2): four hops, the most any route takes on a 4x4 torus */
    const strata_hop *hops;
    uint32_t n;
    ck_assert(strata_hw_route(hw, mem_index(hw, "hbm@0"), mem_index(hw, "hbm@10"), &hops, &n, NULL));
    ck_assert_uint_eq(n, 4);
    static const char *const routes[][3] = {
        /* other memories reach the interconnect through their device's gateway */
        {"vmem@0", "vmem@1", "dma@0<hbm@0,ici:0-1>hbm@1,dma@1>vmem@1"},
        /* the host network: a switch between hosts */
        {"host@0", "host@1", "dcn@0>-,dcn@1<host@1"},
        /* device and host on one host: PCIe */
        {"hbm@5", "host@1", "pcie@5<host@1"},
        /* host 0 to a device of host 1: PCIe to device 1 (host 0's), then one
         * ICI hop (5 + 1 links) beats the host network (2 + 5) */
        {"host@0", "hbm@5", "pcie@1>-,ici:1-5>hbm@5"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(routes); i++)
        assert_route(hw, routes[i][0], routes[i][1], routes[i][2]);
    strata_hw_free(hw);
}
END_TEST

START_TEST(ring_links_and_routes)
{
    strata_hw *hw = strata_test_load_hw("test-ring8", NULL);
    /* a ring of 8: 7 links in a row and one back, ici:0-7 */
    ck_assert_uint_eq(strata_hw_link_count(hw), 8 + 8); /* 8 PCIe, 8 ring links */
    ck_assert_uint_eq(strata_test_link(hw, "ici:0-7")->b, mem_index(hw, "hbm@7"));
    /* 0 -> 5: three hops the short way round */
    assert_route(hw, "hbm@0", "hbm@5", "ici:0-7>-,ici:6-7<-,ici:5-6<hbm@5");
    /* 0 -> 4: four hops either way; the tie goes up (4's lower neighbour is 3) */
    assert_route(hw, "hbm@0", "hbm@4", "ici:0-1>-,ici:1-2>-,ici:2-3>-,ici:3-4>hbm@4");
    /* one host: a device reaches the host over its own PCIe, never through
     * a neighbour (the host-to-device edge costs more than the ring's
     * diameter) */
    assert_route(hw, "host@0", "hbm@4", "pcie@4>hbm@4");
    strata_hw_free(hw);
}
END_TEST

START_TEST(torus3d_and_large_pods)
{
    static const char text[] = "[hardware]\nname = t\ndevices = %u\ndevices_per_host = 4\n"
                               "[memory hbm]\nkind = device\ncapacity = 16GiB\nbandwidth = 1TB/s\n"
                               "[memory host]\nkind = host\ncapacity = 64GiB\nbandwidth = 100GB/s\n"
                               "[link pcie]\nbetween = host hbm\nbandwidth = 16GB/s\n"
                               "[compute core]\nflops = 100TFLOP/s\n"
                               "[interconnect ici]\ntopology = torus3d\ndims = %s\nbandwidth = 50GB/s\n";
    struct { uint32_t devices; const char *dims; uint32_t links; } cases[] = {
        {64, "4x4x4", 192}, {256, "4x8x8", 768}, {4096, "16x16x16", 12288}};
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        char *t = g_strdup_printf(text, cases[c].devices, cases[c].dims);
        GError *err = NULL;
        strata_hw *hw = strata_placement_hw_load_data(t, "pod.ini", NULL, &err);
        ck_assert_msg(hw != NULL, "%s", err ? err->message : "");
        ck_assert_uint_eq(strata_hw_memory_count(hw), cases[c].devices + cases[c].devices / 4);
        ck_assert_uint_eq(strata_test_count_links(hw, "ici:"), cases[c].links);
        /* device 0 to the device at (1,1,1): three hops */
        uint32_t last = cases[c].devices - 1;
        char *far = g_strdup_printf("hbm@%u", last);
        const strata_hop *hops;
        uint32_t n;
        ck_assert(strata_hw_route(hw, mem_index(hw, "hbm@0"), mem_index(hw, far), &hops, &n, NULL));
        ck_assert_uint_eq(n, 3);
        g_free(far);
        g_free(t);
        strata_hw_free(hw);
    }
}
END_TEST

START_TEST(switch_routes)
{
    strata_hw *hw = strata_test_load_hw("test-switch8", NULL);
    ck_assert_uint_eq(strata_test_count_links(hw, "nvlink@"), 8);
    const strata_link_spec *l = strata_test_link(hw, "nvlink@3");
    ck_assert_uint_eq(l->a, mem_index(hw, "hbm@3"));
    ck_assert_uint_eq(l->b, STRATA_HW_NO_MEMORY);
    ck_assert(l->bandwidth == 200e9); /* 100 GB/s x 2 links per chip */
    /* through the switch: up the sender's link, down the receiver's */
    assert_route(hw, "hbm@0", "hbm@1", "nvlink@0>-,nvlink@1<hbm@1");
    assert_route(hw, "hbm@2", "hbm@1", "nvlink@2>-,nvlink@1<hbm@1");
    uint32_t sw = strata_hw_site_count(hw) - 1;
    ck_assert_str_eq(strata_hw_site_switch(hw, sw), "nvlink");
    ck_assert_ptr_null(strata_hw_site_switch(hw, 0));
    /* each PCIe and each switch link is an edge both ways between sites */
    ck_assert_uint_eq(strata_hw_site_edge_count(hw), 2 * (8 + 8));
    ck_assert_uint_eq(strata_hw_site_gateway(hw, 3), mem_index(hw, "hbm@3"));
    ck_assert_uint_eq(strata_hw_site_gateway(hw, 8), mem_index(hw, "host@0"));
    strata_hw_free(hw);
}
END_TEST

START_TEST(full_topology)
{
    static const char text[] = "[hardware]\nname = t\ndevices = 4\n"
                               "[memory hbm]\nkind = device\ncapacity = 16GiB\nbandwidth = 1TB/s\n"
                               "[interconnect x]\ntopology = full\nbandwidth = 50GB/s\nduplex = half\n";
    GError *err = NULL;
    strata_hw *hw = strata_placement_hw_load_data(text, "full.ini", NULL, &err);
    ck_assert_msg(hw != NULL, "%s", err ? err->message : "");
    ck_assert_uint_eq(strata_test_count_links(hw, "x:"), 6);
    ck_assert(!strata_test_link(hw, "x:1-3")->full_duplex);
    assert_route(hw, "hbm@3", "hbm@1", "x:1-3<hbm@1");
    strata_hw_free(hw);
}
END_TEST

/* Loads text that must fail with an input error containing both needles. */
static void load_fails(const char *text, const char *const *overrides, const char *n1, const char *n2)
{
    GError *err = NULL;
    strata_hw *hw = strata_placement_hw_load_data(text, "bad.ini", overrides, &err);
    ck_assert_msg(hw == NULL, "should fail: %s", text);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_msg(strstr(err->message, n1), "message '%s' lacks '%s'", err->message, n1);
    ck_assert_msg(!n2 || strstr(err->message, n2), "message '%s' lacks '%s'", err->message, n2);
    g_error_free(err);
}

/* Line 1 [hardware], 2 name, 3 devices, 4 [memory hbm] .. 7, 8 [memory host]
 * .. 11, 12 [link pcie], 13 between, 14 bandwidth, 15 [interconnect ici],
 * 16 topology, 17 bandwidth, then what a case appends. */
#define POD "[hardware]\nname = t\ndevices = %s\n" \
            "[memory hbm]\nkind = device\ncapacity = 16GiB\nbandwidth = 1TB/s\n" \
            "[memory host]\nkind = host\ncapacity = 64GiB\nbandwidth = 100GB/s\n" \
            "[link pcie]\nbetween = host hbm\nbandwidth = 16GB/s\n" \
            "[interconnect ici]\ntopology = %s\nbandwidth = 50GB/s\n%s"

static void pod_fails(const char *devices, const char *topo, const char *more, const char *n1, const char *n2)
{
    char *text = g_strdup_printf(POD, devices, topo, more);
    load_fails(text, NULL, n1, n2);
    g_free(text);
}

START_TEST(bad_input)
{
    pod_fails("16", "torus2d", "dims = 4x8\n", "bad.ini:18: [interconnect ici] dims: 4x8 makes 32 devices, "
              "but the machine has 16", NULL);
    pod_fails("16", "torus2d", "dims = 4x4x1\n", "bad.ini:18:", "expected two sizes such as 4x4");
    pod_fails("16", "torus2d", "dims = 4xq\n", "bad.ini:18:", "expected two sizes");
    pod_fails("16", "torus2d", "", "bad.ini:15: [interconnect ici] missing required key 'dims'", NULL);
    pod_fails("16", "mesh", "", "bad.ini:16: [interconnect ici] topology: expected ring, torus2d, torus3d, "
              "switch or full, got 'mesh'", NULL);
    pod_fails("16", "ring", "dims = 4x4\n", "bad.ini:18: [interconnect ici] dims: dims apply to torus2d and "
              "torus3d only, not to ring", NULL);
    pod_fails("16", "ring", "memory = hmb\n", "bad.ini:18: [interconnect ici] memory: unknown memory 'hmb'", NULL);
    pod_fails("16", "ring", "links_per_chip = 0\n", "bad.ini:18:", "a whole number from 1 to 64");
    pod_fails("0", "ring", "", "bad.ini:3: [hardware] devices: expected a whole number from 1 to 65536, got '0'",
              NULL);
    pod_fails("65537", "ring", "", "bad.ini:3:", "from 1 to 65536");
    pod_fails("eight", "ring", "", "bad.ini:3:", "a whole number");
    /* every pair of 65536 devices: 2^31 links */
    pod_fails("65536", "full", "", "bad.ini:3: [hardware] devices: 65536 devices make", "at most 4194304");
    pod_fails("16", "ring", "[interconnect ici2]\ntopology = switch\nbandwidth = 1GB/s\n",
              "bad.ini:18: [interconnect ici2] a second interconnect between devices", NULL);
    /* a network between hosts must join the memory PCIe lands in */
    pod_fails("16", "ring", "[memory pinned]\nkind = host\ncapacity = 1GiB\nbandwidth = 1GB/s\n"
              "[interconnect dcn]\nmemory = pinned\ntopology = switch\nbandwidth = 1GB/s\n",
              "bad.ini:23: [interconnect dcn] memory: expected memory = host", NULL);
    /* devices_per_host must divide devices */
    char *text = g_strdup_printf(POD, "16\ndevices_per_host = 3", "ring", "");
    load_fails(text, NULL, "bad.ini:4: [hardware] devices_per_host: expected a divisor of devices = 16, got 3",
               NULL);
    g_free(text);
    /* a second link between a device and its host */
    pod_fails("16", "ring", "[link pcie2]\nbetween = hbm host\nbandwidth = 1GB/s\n",
              "bad.ini:19: [link pcie2] between: with several devices one [link] may join", NULL);
    /* units read per-device memory */
    pod_fails("16", "ring", "[compute cpu]\nflops = 1TFLOP/s\noperands = host\n",
              "bad.ini:20: [compute cpu] operands: with several devices", NULL);
}
END_TEST

START_TEST(overrides)
{
    /* a slice: devices and dims together */
    const char *const ok[] = {"hardware.devices=8", "interconnect.ici.dims=2x4", NULL};
    strata_hw *hw = strata_test_load_hw("test-torus16", ok);
    ck_assert_uint_eq(strata_hw_devices(hw), 8);
    ck_assert_uint_eq(strata_hw_hosts(hw), 2);
    ck_assert_uint_eq(strata_hw_memory_count(hw), 8 + 8 + 2);
    /* dimension of 2: 4 links (0-4, 1-5, 2-6, 3-7), not 8; dimension of 4: 2 rings of 4 */
    ck_assert_uint_eq(strata_test_count_links(hw, "ici:"), 12);
    strata_test_link(hw, "ici:1-5");
    assert_route(hw, "hbm@4", "hbm@0", "ici:0-4<hbm@0");
    strata_hw_free(hw);
    /* devices alone: a TPU slice's shape (hw_slice.c; test_hw_slice.c), and no slice of 12 chips */
    char *path = strata_test_source_path("configs/hw/test-torus16.ini");
    const char *const bad[] = {"hardware.devices=12", NULL};
    GError *err = NULL;
    ck_assert_ptr_null(strata_placement_hw_load(path, bad, &err));
    ck_assert_msg(strstr(err->message, "test-torus16.ini:41: [interconnect ici] dims: no TPU slice of a 2D torus "
                                       "has 12 chips"),
                  "%s", err->message);
    g_clear_error(&err);
    const char *const ring[] = {"hardware.devices=4", NULL};
    g_free(path);
    hw = strata_test_load_hw("test-ring8", ring);
    ck_assert_uint_eq(strata_test_count_links(hw, "ici:"), 4);
    strata_hw_free(hw);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("hw_devices");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, instances_are_named_and_indexed);
    tcase_add_test(tc, one_device_keeps_names);
    tcase_add_test(tc, torus_links_and_routes);
    tcase_add_test(tc, ring_links_and_routes);
    tcase_add_test(tc, torus3d_and_large_pods);
    tcase_add_test(tc, switch_routes);
    tcase_add_test(tc, full_topology);
    tcase_add_test(tc, bad_input);
    tcase_add_test(tc, overrides);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(suite()); }
