/* test_hw_network.c: clusters, the hardware tiers: scale-up domains
 * ([interconnect] domain) joined by a scale-out network ([network]): the
 * links each builds, the routes between devices of one domain and of two,
 * rails, leaves and a spine with oversubscription, NICs on hosts, slices,
 * and bad input with its FILE:LINE. */
#include <math.h>
#include <string.h>
#include <glib/gstdio.h>
#include "testutil.h"
#include "core/error.h"
#include "hw/hw.h"
#include "placement/placement_hw.h"

static void assert_route(const strata_hw *hw, const char *from, const char *to, const char *want)
{
    char *got = strata_test_route_links(hw, from, to);
    ck_assert_msg(strcmp(got, want) == 0, "%s -> %s: got %s, want %s", from, to, got, want);
    g_free(got);
}

/* Two nodes of 8 GPUs: NVLink through a switch per node, a NIC per GPU. */
#define CLUSTER "[hardware]\nname = c\ndevices = 16\ndevices_per_host = 8\n" \
                "[memory hbm]\nkind = device\ncapacity = 80GB\nbandwidth = 3TB/s\n" \
                "[memory host]\nkind = host\ncapacity = 1TB\nbandwidth = 500GB/s\n" \
                "[link pcie]\nbetween = host hbm\nbandwidth = 50GB/s\n" \
                "[interconnect nvlink]\ntopology = switch\nbandwidth = 450GB/s\nlatency = 0.5us\ndomain = 8\n" \
                "[network ib]\nbandwidth = 50GB/s\nlatency = 1us\n%s"

static strata_hw *load(const char *text, const char *const *overrides)
{
    GError *err = NULL;
    strata_hw *hw = strata_placement_hw_load_data(text, "c.ini", overrides, &err);
    ck_assert_msg(hw != NULL, "%s", err ? err->message : "");
    return hw;
}

static strata_hw *cluster(const char *more, const char *const *overrides)
{
    char *text = g_strdup_printf(CLUSTER, more);
    strata_hw *hw = load(text, overrides);
    g_free(text);
    return hw;
}

START_TEST(domains_and_one_switch)
{
    strata_hw *hw = cluster("", NULL);
    ck_assert_uint_eq(strata_hw_domain(hw), 8);
    /* a switch per domain: NVLink joins a node's GPUs only */
    ck_assert_uint_eq(strata_test_count_links(hw, "nvlink@"), 16);
    ck_assert_uint_eq(strata_test_count_links(hw, "ib@"), 16);
    const strata_link_spec *nic = strata_test_link(hw, "ib@9");
    ck_assert_int_eq((int)nic->a, strata_hw_memory_index(hw, "hbm@9"));
    ck_assert_uint_eq(nic->b, STRATA_HW_NO_MEMORY);
    ck_assert(nic->bandwidth == 50e9 && nic->latency == 1e-6 && nic->full_duplex);
    /* inside a node: NVLink; across: the NICs, never a host */
    assert_route(hw, "hbm@1", "hbm@6", "nvlink@1,nvlink@6");
    assert_route(hw, "hbm@1", "hbm@9", "ib@1,ib@9");
    assert_route(hw, "hbm@8", "hbm@15", "nvlink@8,nvlink@15");
    /* one leaf (topology = switch): any NIC reaches any other in 2 links */
    assert_route(hw, "hbm@0", "hbm@13", "ib@0,ib@13");
    assert_route(hw, "host@0", "hbm@9", "pcie@0,ib@0,ib@9");
    strata_hw_free(hw);
}
END_TEST

START_TEST(rails_leaves_and_spine)
{
    /* rails: leaf k holds NIC k of each host; between rails, the scale-up
     * interconnect first and the rail of the destination (no spine: one
     * leaf per rail would need one, and its uplink costs one more) */
    strata_hw *hw = cluster("topology = rails\n", NULL);
    assert_route(hw, "hbm@2", "hbm@10", "ib@2,ib@10");
    char *r = strata_test_route_links(hw, "hbm@2", "hbm@13");
    ck_assert_msg(strcmp(r, "nvlink@2,nvlink@5,ib@5,ib@13") == 0 || strcmp(r, "ib@2,ib@10,nvlink@10,nvlink@13") == 0,
                  "%s", r);
    g_free(r);
    ck_assert_uint_eq(strata_test_count_links(hw, "ib.up"), 8);
    /* a leaf's uplink carries its NICs' bandwidth: 2 hosts x 1 NIC on a rail */
    ck_assert(strata_test_link(hw, "ib.up3")->bandwidth == 2 * 50e9);
    strata_hw_free(hw);
    /* one leaf per host, oversubscribed 2:1, two NICs of 200 Gb/s per GPU */
    const char *const half[] = {"network.ib.bandwidth=25GB/s", NULL};
    hw = cluster("hosts_per_leaf = 1\noversubscription = 2\nnics = 2\n", half);
    ck_assert(strata_test_link(hw, "ib@4")->bandwidth == 50e9);
    ck_assert(strata_test_link(hw, "ib.up1")->bandwidth == 8 * 50e9 / 2);
    assert_route(hw, "hbm@4", "hbm@12", "ib@4,ib.up0,ib.up1,ib@12");
    strata_hw_free(hw);
}
END_TEST

START_TEST(static_routing_on_uplinks)
{
    /* one leaf per host (2 leaves, a spine), each leaf's uplink 8 NICs x 50 GB/s
     * = 400 GB/s over 4 uplinks of 100. The collectives here are the ideal
     * model's (no NCCL channels): NCCL's ring reads as one channel, whose
     * connection leaves a leaf once (hw_network.c uplink_share). */
    strata_hw *hw = cluster("hosts_per_leaf = 1\nuplinks = 4\n", NULL);
    ck_assert(strata_test_link(hw, "ib.up0")->bandwidth == 400e9); /* adaptive: as before */
    strata_hw_free(hw);
    /* ecmp, 1 QP: one key on one of 4 uplinks, 1/4 of the leaf: 100 GB/s */
    hw = cluster("hosts_per_leaf = 1\nuplinks = 4\nrouting = ecmp\n", NULL);
    ck_assert(fabs(strata_test_link(hw, "ib.up1")->bandwidth - 100e9) < 1);
    strata_hw_free(hw);
    /* ecmp, 2 QPs: 2 keys on 4 uplinks, 16 placements: apart in 12 (M = 1:
     * 2 / 4), together in 4 (M = 2: 2 / 8): 3/4 x 1/2 + 1/4 x 1/4 = 7/16 of
     * 400 GB/s = 175 GB/s */
    hw = cluster("hosts_per_leaf = 1\nuplinks = 4\nrouting = ecmp\nqps_per_connection = 2\n", NULL);
    ck_assert(fabs(strata_test_link(hw, "ib.up0")->bandwidth - 175e9) < 1);
    strata_hw_free(hw);
    /* destination (InfiniBand's static routes): the 2 QPs go to one port, one
     * key: 100 GB/s */
    hw = cluster("hosts_per_leaf = 1\nuplinks = 4\nrouting = destination\nqps_per_connection = 2\n", NULL);
    ck_assert(fabs(strata_test_link(hw, "ib.up0")->bandwidth - 100e9) < 1);
    strata_hw_free(hw);
    /* one leaf per rail holding every host: no ring crosses a rail's leaves,
     * the uplinks keep their bandwidth (2 hosts x 50 GB/s) */
    hw = cluster("topology = rails\nuplinks = 4\nrouting = ecmp\n", NULL);
    ck_assert(strata_test_link(hw, "ib.up3")->bandwidth == 2 * 50e9);
    strata_hw_free(hw);
}
END_TEST

START_TEST(shared_nics)
{
    /* a NIC for two GPUs (GCP A3 High: 4 NICs for 8 GPUs) */
    strata_hw *hw = cluster("devices_per_nic = 2\n", NULL);
    ck_assert_uint_eq(strata_test_count_links(hw, "ib.nic"), 8);
    ck_assert(strata_test_link(hw, "ib.nic5")->latency == 1e-6);
    ck_assert(strata_test_link(hw, "ib@11")->latency == 0);
    assert_route(hw, "hbm@2", "hbm@11", "ib@2,ib.nic1,ib.nic5,ib@11");
    strata_hw_free(hw);
}
END_TEST

/* Two TPU slices of 4 chips (2x2 ICI each), a host per 4 chips, DCN NICs on hosts. */
#define SLICES "[hardware]\nname = s\ndevices = 8\ndevices_per_host = 4\n" \
               "[memory hbm]\nkind = device\ncapacity = 16GB\nbandwidth = 800GB/s\n" \
               "[memory host]\nkind = host\ncapacity = 512GiB\nbandwidth = 200GB/s\n" \
               "[link pcie]\nbetween = host hbm\nbandwidth = 15GB/s\n" \
               "[interconnect ici]\ntopology = torus2d\ndims = 2x2\nbandwidth = 50GB/s\ndomain = 4\n" \
               "[network dcn]\nmemory = host\nnics = 2\nbandwidth = 12.5GB/s\nlatency = 5us\n"

START_TEST(nics_on_hosts)
{
    strata_hw *hw = load(SLICES, NULL);
    ck_assert_uint_eq(strata_hw_domain(hw), 4);
    ck_assert_uint_eq(strata_test_count_links(hw, "ici:"), 8); /* 2 x (2x2: 4 links) */
    strata_test_link(hw, "ici:5-7");
    ck_assert(strata_test_link(hw, "dcn@1")->bandwidth == 25e9);
    ck_assert_int_eq((int)strata_test_link(hw, "dcn@1")->a, strata_hw_memory_index(hw, "host@1"));
    assert_route(hw, "hbm@0", "hbm@3", "ici:0-1,ici:1-3");
    assert_route(hw, "hbm@1", "hbm@6", "pcie@1,dcn@0,dcn@1,pcie@6");
    strata_hw_free(hw);
    /* a slice of 2 domains' worth: dims stay one domain's; below a domain, one domain */
    const char *const two[] = {"hardware.devices=8", NULL};
    hw = load(SLICES, two);
    ck_assert_uint_eq(strata_hw_domain(hw), 4);
    strata_hw_free(hw);
    const char *const one[] = {"hardware.devices=4", NULL};
    hw = load(SLICES, one);
    ck_assert_uint_eq(strata_hw_domain(hw), 4);
    ck_assert_uint_eq(strata_hw_hosts(hw), 1);
    strata_hw_free(hw);
}
END_TEST

START_TEST(slices_and_overrides)
{
    /* --set hardware.devices=N: 4 GPUs are one node; 32 are four */
    const char *const four[] = {"hardware.devices=4", NULL};
    strata_hw *hw = cluster("", four);
    ck_assert_uint_eq(strata_hw_domain(hw), 4);
    ck_assert_uint_eq(strata_hw_hosts(hw), 1);
    assert_route(hw, "hbm@0", "hbm@3", "nvlink@0,nvlink@3");
    strata_hw_free(hw);
    const char *const many[] = {"hardware.devices=32", "network.ib.bandwidth=25GB/s", NULL};
    hw = cluster("", many);
    ck_assert_uint_eq(strata_hw_hosts(hw), 4);
    ck_assert(strata_test_link(hw, "ib@31")->bandwidth == 25e9);
    assert_route(hw, "hbm@3", "hbm@27", "ib@3,ib@27");
    strata_hw_free(hw);
}
END_TEST

/* The PCIe link a GPU's NICs sit on ([network] pcie_generation,
 * pcie_lanes): its data rate caps the GPU's port. Gen4 x16 at 256 B
 * payloads (hw/pcie.h; test_pcie.c's derivation): 16 GT/s x 16 x 128/130
 * / 8 = 31.508 GB/s, x (1 - 16/168 - 4/1538) for DLLPs and SKPs, x 256/280
 * for a write TLP's framing, header and LCRC = 25.988585 GB/s (writes are
 * the lower direction). A 50 GB/s NIC on it carries 25.988585 GB/s; two of
 * 12.5 GB/s (one dual-port NIC, OCI BM.GPU4.8) carry their 25. A leaf's
 * uplink to the spine keeps its NICs' own bandwidth (the PCIe link is the
 * GPU's, not the fabric's): rails, one host a leaf, 2 x 50 = 100 GB/s. */
START_TEST(nic_pcie_link_caps_the_port)
{
    strata_hw *hw = cluster("pcie_generation = 4\npcie_lanes = 16\n", NULL);
    ck_assert_msg(fabs(strata_test_link(hw, "ib@3")->bandwidth - 25.988585e9) < 1e3, "%.0f",
                  strata_test_link(hw, "ib@3")->bandwidth);
    strata_hw_nics nics;
    ck_assert(strata_hw_network_nics(hw, &nics));
    ck_assert_uint_eq(nics.pcie_generation, 4);
    ck_assert_uint_eq(nics.pcie_lanes, 16);
    ck_assert(nics.bandwidth == 50e9); /* NCCL's view keeps the NIC's own speed */
    assert_route(hw, "hbm@1", "hbm@9", "ib@1,ib@9");
    strata_hw_free(hw);
    const char *const ports[] = {"network.ib.bandwidth=12.5GB/s", NULL};
    hw = cluster("nics = 2\npcie_generation = 4\npcie_lanes = 16\n", ports);
    ck_assert(strata_test_link(hw, "ib@3")->bandwidth == 25e9);
    strata_hw_free(hw);
    hw = cluster("topology = rails\nhosts_per_leaf = 1\npcie_generation = 4\npcie_lanes = 16\n", NULL);
    ck_assert(strata_test_link(hw, "ib.up0")->bandwidth == 50e9);
    ck_assert_msg(fabs(strata_test_link(hw, "ib@12")->bandwidth - 25.988585e9) < 1e3, "%.0f",
                  strata_test_link(hw, "ib@12")->bandwidth);
    strata_hw_free(hw);
}
END_TEST

/* The CPU sockets' link a GPU's NIC traffic crosses where NCCL stages it
 * in host memory on a NIC of the other socket ([network]
 * socket_link_bandwidth): the port carries the lower of the NIC's 50 GB/s
 * and the link's 40 GB/s (NCCL's ERP_QPI_BW); the NICs' record keeps the
 * NIC's speed and the link's. Beside a Gen4 x16 PCIe link (25.988585 GB/s,
 * above) the lower of the three: the PCIe link's. A leaf's uplink keeps
 * the NICs' own 50 GB/s. */
START_TEST(socket_link_caps_the_port)
{
    strata_hw *hw = cluster("socket_link_bandwidth = 40GB/s\n", NULL);
    ck_assert(strata_test_link(hw, "ib@3")->bandwidth == 40e9);
    strata_hw_nics nics;
    ck_assert(strata_hw_network_nics(hw, &nics));
    ck_assert(nics.bandwidth == 50e9 && nics.socket_link == 40e9);
    strata_hw_free(hw);
    hw = cluster("socket_link_bandwidth = 40GB/s\npcie_generation = 4\npcie_lanes = 16\n", NULL);
    ck_assert_msg(fabs(strata_test_link(hw, "ib@3")->bandwidth - 25.988585e9) < 1e3, "%.0f",
                  strata_test_link(hw, "ib@3")->bandwidth);
    strata_hw_free(hw);
    const char *const set[] = {"network.ib.socket_link_bandwidth=40GB/s", NULL};
    hw = cluster("topology = rails\nhosts_per_leaf = 1\n", set);
    ck_assert(strata_test_link(hw, "ib@12")->bandwidth == 40e9);
    ck_assert(strata_test_link(hw, "ib.up0")->bandwidth == 50e9);
    strata_hw_free(hw);
    hw = cluster("", NULL);
    ck_assert(strata_hw_network_nics(hw, &nics));
    ck_assert(nics.socket_link == 0 && strata_test_link(hw, "ib@3")->bandwidth == 50e9);
    strata_hw_free(hw);
}
END_TEST

/* What a NIC delivers of payload below its line rate ([network]
 * payload_bandwidth, wave 47): every link of the network carries it in
 * place of the 50 GB/s: a device's port 48 GB/s; with 2 NICs a device,
 * 2 x 48 = 96 GB/s; a shared NIC's port to its leaf 48 GB/s; a rail's
 * uplink its 2 hosts' NICs, 2 x 48 = 96 GB/s. NCCL's search keeps the
 * NIC's 50 GB/s. Beside a Gen4 x16 PCIe link (25.988585 GB/s) the lower:
 * the PCIe link's. */
START_TEST(payload_bandwidth_caps_the_links)
{
    strata_hw *hw = cluster("payload_bandwidth = 48GB/s\n", NULL);
    ck_assert(strata_test_link(hw, "ib@3")->bandwidth == 48e9);
    strata_hw_nics nics;
    ck_assert(strata_hw_network_nics(hw, &nics));
    ck_assert(nics.bandwidth == 50e9);
    strata_hw_free(hw);
    hw = cluster("payload_bandwidth = 48GB/s\nnics = 2\n", NULL);
    ck_assert(strata_test_link(hw, "ib@3")->bandwidth == 96e9);
    strata_hw_free(hw);
    hw = cluster("payload_bandwidth = 48GB/s\ndevices_per_nic = 2\n", NULL);
    ck_assert(strata_test_link(hw, "ib.nic5")->bandwidth == 48e9);
    ck_assert(strata_test_link(hw, "ib@11")->bandwidth == 48e9);
    strata_hw_free(hw);
    const char *const set[] = {"network.ib.payload_bandwidth=48GB/s", NULL};
    hw = cluster("topology = rails\nhosts_per_leaf = 2\n", set);
    ck_assert(strata_test_link(hw, "ib@12")->bandwidth == 48e9);
    ck_assert(strata_test_link(hw, "ib.up3")->bandwidth == 2 * 48e9);
    strata_hw_free(hw);
    hw = cluster("payload_bandwidth = 48GB/s\npcie_generation = 4\npcie_lanes = 16\n", NULL);
    ck_assert_msg(fabs(strata_test_link(hw, "ib@3")->bandwidth - 25.988585e9) < 1e3, "%.0f",
                  strata_test_link(hw, "ib@3")->bandwidth);
    strata_hw_free(hw);
    /* below the PCIe link's 25.988585 GB/s the payload rate: 20 GB/s */
    hw = cluster("payload_bandwidth = 20GB/s\npcie_generation = 4\npcie_lanes = 16\n", NULL);
    ck_assert(strata_test_link(hw, "ib@3")->bandwidth == 20e9);
    strata_hw_free(hw);
    /* --set restating both: the wire 58 GB/s, NCCL's search 60 GB/s */
    const char *const both[] = {"network.ib.bandwidth=60GB/s", "network.ib.payload_bandwidth=58GB/s", NULL};
    hw = cluster("payload_bandwidth = 48GB/s\n", both);
    ck_assert(strata_test_link(hw, "ib@3")->bandwidth == 58e9);
    ck_assert(strata_hw_network_nics(hw, &nics));
    ck_assert(nics.bandwidth == 60e9);
    strata_hw_free(hw);
}
END_TEST

/* --set bandwidth alone beside the file's payload_bandwidth: raised, the
 * wire would silently stay at 48 GB/s; lowered, below it. Both refused at
 * the override, naming payload_bandwidth's line (t.ini:24). */
static void override_refused(const char *set, const char *want)
{
    GError *err = NULL;
    char *text = g_strdup_printf(CLUSTER, "payload_bandwidth = 48GB/s\n");
    const char *const overrides[] = {set, NULL};
    ck_assert_ptr_null(strata_placement_hw_load_data(text, "t.ini", overrides, &err));
    ck_assert_msg(strstr(err->message, want), "%s", err->message);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    g_clear_error(&err);
    g_free(text);
}

/* A derived file (base =) restating bandwidth alone beside its base's
 * payload_bandwidth: refused at the derived file's line 4. */
START_TEST(derived_bandwidth_needs_payload)
{
    char *dir = g_dir_make_tmp("hwnet-XXXXXX", NULL);
    ck_assert_ptr_nonnull(dir);
    char *base = g_build_filename(dir, "base.ini", NULL), *derived = g_build_filename(dir, "d.ini", NULL);
    char *text = g_strdup_printf(CLUSTER, "payload_bandwidth = 48GB/s\n");
    ck_assert(g_file_set_contents(base, text, -1, NULL));
    const char *derived_text = "[hardware]\nbase = base.ini\n[network ib]\nbandwidth = 60GB/s\n";
    ck_assert(g_file_set_contents(derived, derived_text, -1, NULL));
    GError *err = NULL;
    ck_assert_ptr_null(strata_hw_load(derived, NULL, &err));
    ck_assert_msg(err && strstr(err->message, "d.ini:4): [network ib] bandwidth: set to 60.00 GB/s here while "
                                "payload_bandwidth stays 48.00 GB/s"), "%s", err ? err->message : "(no error)");
    g_clear_error(&err);
    g_remove(base);
    g_remove(derived);
    g_rmdir(dir);
    g_free(text);
    g_free(base);
    g_free(derived);
    g_free(dir);
}
END_TEST

START_TEST(bandwidth_override_needs_payload)
{
    override_refused("network.ib.bandwidth=60GB/s", "t.ini (override network.ib.bandwidth=60GB/s): [network ib] "
                     "bandwidth: set to 60.00 GB/s here while payload_bandwidth stays 48.00 GB/s (t.ini:24)");
    override_refused("network.ib.bandwidth=40GB/s", "t.ini (override network.ib.bandwidth=40GB/s): [network ib] "
                     "bandwidth: set to 40.00 GB/s here while payload_bandwidth stays 48.00 GB/s (t.ini:24)");
}
END_TEST

static void fails(const char *more, const char *want)
{
    char *head = g_strdup_printf(CLUSTER, "");
    strata_test_hw_text_refused(head, more, want);
    g_free(head);
}

START_TEST(bad_input)
{
    /* lines: 21 [network ib], 22 bandwidth, 23 latency, 24 the case's key (t.ini) */
    fails("topology = torus\n", "t.ini:24: [network ib] topology: expected switch or rails, got 'torus'");
    fails("nics = 0\n", "t.ini:24: [network ib] nics: expected a whole number from 1 to 64, got '0'");
    fails("oversubscription = 0.5\n", "t.ini:24: [network ib] oversubscription: expected a ratio from 1 to 64");
    fails("hosts_per_leaf = 3\n", "t.ini:24: [network ib] hosts_per_leaf: expected a divisor of the 2 hosts");
    fails("devices_per_nic = 3\n", "t.ini:24: [network ib] devices_per_nic: expected a divisor of "
          "devices_per_host = 8, got 3");
    fails("routing = static\n", "t.ini:24: [network ib] routing: expected adaptive, ecmp or destination, "
          "got 'static'");
    fails("uplinks = 0\n", "t.ini:24: [network ib] uplinks: expected a whole number from 1 to 512, got '0'");
    fails("qps_per_connection = 17\n",
          "t.ini:24: [network ib] qps_per_connection: expected a whole number from 1 to 16, got '17'");
    fails("switches = 4\n", "t.ini:24: [network ib] unknown key 'switches'");
    fails("[network eth]\nbandwidth = 1GB/s\n", "[network eth] a second network");
    fails("memory = nope\n", "t.ini:24: [network ib] memory: unknown memory 'nope'");
    fails("pcie_generation = 4\n", "t.ini:24: [network ib] pcie_generation: a NIC's PCIe link needs both "
          "pcie_generation and pcie_lanes");
    fails("pcie_generation = 2\npcie_lanes = 16\n",
          "t.ini:24: [network ib] pcie_generation: expected a PCIe generation from 3 to 6, got '2'");
    fails("pcie_generation = 4\npcie_lanes = 12\n",
          "t.ini:25: [network ib] pcie_lanes: expected 1, 2, 4, 8, 16 or 32 lanes, got 12");
    fails("socket_link_bandwidth = 0GB/s\n", "t.ini:24: [network ib] socket_link_bandwidth: expected a positive "
          "bandwidth such as 16GB/s, got '0GB/s'");
    fails("payload_bandwidth = 51GB/s\n", "t.ini:24: [network ib] payload_bandwidth: expected at most bandwidth "
          "(50.00 GB/s, t.ini:22: the payload a NIC delivers cannot exceed its line rate), got 51.00 GB/s");
    GError *err = NULL;
    char *text = g_strdup_printf(CLUSTER, "");
    const char *const domain[] = {"interconnect.nvlink.domain=3", NULL};
    ck_assert_ptr_null(strata_placement_hw_load_data(text, "c.ini", domain, &err));
    ck_assert_msg(strstr(err->message, "(override interconnect.nvlink.domain=3): [interconnect nvlink] domain: "
                                       "expected a divisor of devices = 16, got 3"), "%s", err->message);
    g_clear_error(&err);
    g_free(text);
    /* a network on the hosts besides a host interconnect */
    fails("memory = host\n[interconnect dcn]\nmemory = host\ntopology = switch\nbandwidth = 1GB/s\n",
          "a second network between hosts");
}
END_TEST

START_TEST(old_files_unchanged)
{
    /* no domain, no network: as before (every GPU on one switch) */
    const char *const sixteen[] = {"hardware.devices=16", NULL};
    strata_hw *hw = strata_test_load_hw("dgx-h100", sixteen);
    ck_assert_uint_eq(strata_hw_domain(hw), 16);
    ck_assert_str_eq(strata_hw_site_switch(hw, strata_hw_site_count(hw) - 1), "nvlink");
    strata_hw_free(hw);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("hw_network");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, domains_and_one_switch);
    tcase_add_test(tc, rails_leaves_and_spine);
    tcase_add_test(tc, static_routing_on_uplinks);
    tcase_add_test(tc, shared_nics);
    tcase_add_test(tc, nic_pcie_link_caps_the_port);
    tcase_add_test(tc, socket_link_caps_the_port);
    tcase_add_test(tc, payload_bandwidth_caps_the_links);
    tcase_add_test(tc, bandwidth_override_needs_payload);
    tcase_add_test(tc, derived_bandwidth_needs_payload);
    tcase_add_test(tc, nics_on_hosts);
    tcase_add_test(tc, slices_and_overrides);
    tcase_add_test(tc, bad_input);
    tcase_add_test(tc, old_files_unchanged);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(suite()); }
