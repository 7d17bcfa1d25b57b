/*
 * hw_network.c: the scale-out tier of a hardware model, [network NAME]:
 * the NICs that join scale-up domains, and the switches between them
 * (contract in hw_internal.h; the format in docs/hardware.md, "Clusters").
 *
 * A network's `memory` says where its NICs are: a per-device memory (the
 * devices' own NICs, reached without the host: GPUDirect RDMA), or a host
 * memory (NICs on each host, as a TPU host's DCN NICs). Each NIC is one
 * link of `nics` x `bandwidth` (several NICs of a device or host on the
 * same switch act as one wider port) to its leaf switch; with
 * devices_per_nic > 1, the devices of one NIC reach it through a vertex of
 * their own (the NIC), each by a link of the NIC's bandwidth.
 *   topology = switch   one leaf holds every NIC (of hosts_per_leaf hosts);
 *   topology = rails    leaf k holds NIC k of every host (rail-optimised:
 *                       the device of local index k's NIC), of
 *                       hosts_per_leaf hosts;
 * more than one leaf: a spine joins them, each leaf by an uplink carrying
 * the leaf's NICs' bandwidth / oversubscription; with routing = ecmp or
 * destination (static placement on the leaf's `uplinks`), times the share
 * of them NCCL's ring can use (uplink_share, hw/ecmp.h).
 * pcie_generation and pcie_lanes (both or neither) give the PCIe link a
 * device's (or host's) NICs sit on, one link for its `nics` (a dual-port
 * NIC is one PCIe device): its port to the leaf then carries the lower of
 * nics x bandwidth and that link's data rate (hw/pcie.h at 256 B payloads
 * and 512 B read requests, ESTIMATE: as configs/hw/a100-8.ini's GPU
 * link), and NCCL's search sees the link at its own figure
 * (hw/nccl_tuning.h, strata_nccl_pci_gbs).
 * socket_link_bandwidth: where NCCL runs a device's NIC traffic without
 * GPUDirect RDMA (its buffers in pinned host memory) and the NIC sits on
 * the other CPU socket, every byte to and from the NIC crosses the
 * inter-socket link once (the buffer on either socket: the GPU's side or
 * the NIC's); the port then carries at most that link's rate a direction,
 * and NCCL's search sees the same figure (NVIDIA/nccl v2.26.6-1
 * src/graph/paths.cc l. 692-697 diverts such a GPU's NIC paths through
 * its local CPU; topo.cc l. 70-86 prices the CPU-to-CPU link, topo.h
 * l. 22-25: ERP_QPI_BW 40 GB/s on Emerald Rapids). Set per run (where a
 * job's GPU and NIC sit), not per machine. Scope: each device's port gets
 * the whole link, right where one device a host crosses it (one GPU a VM);
 * where several do, NCCL's followPath takes their channels from the one
 * link and strata does not share it (review, wave 45: not modelled).
 * Volta/Ampere's nccl_gdr_flush is still charged with the key set
 * (NCCL flushes GDR receives only; Hopper has no flush).
 * payload_bandwidth (wave 47): what one NIC delivers of payload a
 * direction where a public measurement gives it below the line rate (the
 * wire's framing, the NIC's host interface): every link of the network
 * (a device's port, a shared NIC's port, the uplinks) carries it in place
 * of `bandwidth`; NCCL's search still sees `bandwidth`, the port speed
 * the NIC reports (NVIDIA/nccl src/graph/topo.cc counts a NIC at its
 * speed / 8000).
 *
 * Site graph (hw_site.c): NIC vertices, then leaves, then the spine, as
 * switches. An uplink's edge costs one more than its link, so that traffic
 * between rails crosses the source's scale-up interconnect to the rail of
 * the destination (as NCCL's PXN does) rather than the spine, where both
 * paths have as many links.
 *
 * Invariants: at most one [network] per model; its NIC links join the
 * gateway of their sites (the device memory of the scale-up interconnect,
 * or the host memory of the host link); every leaf and NIC vertex has one
 * edge up (to the spine, to the leaf).
 */
#include <string.h>
#include "core/units.h"
#include "hw/hw_internal.h"
#include "hw/coll_impl.h"
#include "hw/ecmp.h"
#include "hw/pcie.h"

#define MAX_NICS 64u
/* ESTIMATE: the payload and read request sizes of a NIC's PCIe link, as
 * configs/hw/a100-8.ini's GPU link (256 B and 512 B, from an A100 server's
 * lspci): the lowest MPS along the switch hierarchy applies to all of it. */
#define NIC_PCIE_MPS 256u
#define NIC_PCIE_MRRS 512u

const strata_key_def hw_network_keys[] = {
    {"memory", false, "where the NICs are: a per-device memory (the devices' own NICs, GPUDirect) or a host "
                      "memory (each host's NICs); default: the default memory"},
    {"topology", false, "switch (default: one leaf holds every NIC) or rails (leaf k holds NIC k of every host)"},
    {"bandwidth", true, "per NIC and direction, 1 kB/s to 10 PB/s"},
    {"latency", false, "per link crossed (a NIC to its leaf, a leaf to the spine), 0 to 1 s (default 0)"},
    {"nics", false, "NICs per device (or per host), 1 to 64, multiplying the bandwidth (default 1)"},
    {"devices_per_nic", false, "devices sharing one NIC (per-device memory only), dividing devices_per_host "
                               "(default 1)"},
    {"hosts_per_leaf", false, "hosts under one leaf switch (per rail), dividing the hosts (default: all)"},
    {"oversubscription", false, "a leaf's NICs' bandwidth over its uplink to the spine, 1 to 64 (default 1)"},
    {"uplinks", false, "a leaf's uplinks to the spine, equal parts of its uplink bandwidth, 1 to 512 (default 1)"},
    {"routing", false, "adaptive (default: packets spread over every uplink), ecmp (each flow hashed onto one "
                       "uplink) or destination (one route per destination port: InfiniBand's static routing)"},
    {"nccl_ib_qps_per_connection", false, "queue pairs of each NCCL connection over this network "
                                          "(NCCL_IB_QPS_PER_CONNECTION), 1 to 16 (default 1): each a flow to ecmp"},
    {"qps_per_connection", false, "the old name of nccl_ib_qps_per_connection (read as it, with a note)"},
    {"payload_bandwidth", false, "per NIC and direction, the payload one NIC delivers at most, a measured figure "
                                 "below its line rate (framing, host interface), at most bandwidth; the network's "
                                 "links carry it, NCCL's search still sees bandwidth (default: bandwidth)"},
    {"pcie_generation", false, "the PCIe generation of the link a device's (or host's) NICs sit on, 3 to 6 "
                               "(with pcie_lanes; default: none, the NICs' own bandwidth)"},
    {"pcie_lanes", false, "the width of that PCIe link: 1, 2, 4, 8, 16 or 32 lanes (with pcie_generation)"},
    {"socket_link_bandwidth", false, "per direction, the CPU sockets' link a device's NIC traffic crosses where NCCL "
                                     "stages it in host memory (no GPUDirect RDMA) on a NIC of the other socket "
                                     "(default: none)"},
    {"source", false, "where the figures come from (text)"},
    {NULL, false, NULL}};

typedef enum { ROUTING_ADAPTIVE, ROUTING_ECMP, ROUTING_DESTINATION } hw_routing;

struct hw_network {
    const char *group, *name;
    uint32_t memory;          /* template memory its NICs join */
    bool hosts;               /* NICs on hosts */
    bool rails;
    uint32_t nics, devices_per_nic, hosts_per_leaf;
    uint32_t uplinks, qps;    /* a leaf's uplinks; queue pairs a connection */
    hw_routing routing;
    uint32_t pcie_generation, pcie_lanes; /* 0, 0: no PCIe link given */
    double socket_link;                   /* socket_link_bandwidth; 0: none */
    double bandwidth, latency, oversubscription;
    double payload;                       /* payload_bandwidth; 0: bandwidth */
};

/* NCCL_IB_QPS_PER_CONNECTION of the runs: nccl_ib_qps_per_connection, named as the nccl_* keys that give
 * NCCL's own settings are, or qps_per_connection, its name before the twenty-fifth hardening pass, read as it
 * with a note on stderr; not both. */
static bool get_qps(const hw_load_ctx *ctx, hw_network *n, GError **err)
{
    bool old = strata_keyfile_has_key(ctx->k, n->group, "qps_per_connection");
    if (old && strata_keyfile_has_key(ctx->k, n->group, "nccl_ib_qps_per_connection")) {
        hw_fail(ctx, err, n->group, "qps_per_connection", "expected nccl_ib_qps_per_connection or its old name "
                "qps_per_connection, not both");
        return false;
    }
    if (old) {
        char *where = strata_keyfile_where(ctx->k, n->group, "qps_per_connection");
        g_printerr("strata: note: %s: [%s] qps_per_connection is deprecated: write nccl_ib_qps_per_connection "
                   "(NCCL_IB_QPS_PER_CONNECTION, as the nccl_* keys name NCCL's settings); read as it\n", where,
                   n->group);
        g_free(where);
    }
    return hw_get_count(ctx, n->group, old ? "qps_per_connection" : "nccl_ib_qps_per_connection", 1, 16, 1, NULL,
                        &n->qps, err);
}

/* The NIC's PCIe link: both keys or neither; a width PCIe has. */
static bool get_pcie(const hw_load_ctx *ctx, hw_network *n, GError **err)
{
    bool gen = strata_keyfile_has_key(ctx->k, n->group, "pcie_generation");
    bool lanes = strata_keyfile_has_key(ctx->k, n->group, "pcie_lanes");
    if (gen != lanes) {
        hw_fail(ctx, err, n->group, gen ? "pcie_generation" : "pcie_lanes",
                "a NIC's PCIe link needs both pcie_generation and pcie_lanes");
        return false;
    }
    if (!gen)
        return true;
    if (!hw_get_count(ctx, n->group, "pcie_generation", 3, 6, 0, "a PCIe generation from 3 to 6",
                      &n->pcie_generation, err) ||
        !hw_get_count(ctx, n->group, "pcie_lanes", 1, 32, 0, "1, 2, 4, 8, 16 or 32 lanes", &n->pcie_lanes, err))
        return false;
    if (n->pcie_lanes & (n->pcie_lanes - 1)) {
        hw_fail(ctx, err, n->group, "pcie_lanes", "expected 1, 2, 4, 8, 16 or 32 lanes, got %u", n->pcie_lanes);
        return false;
    }
    return true;
}

/* What a device's (or host's) NICs put on the wire a direction: their
 * payload_bandwidth where given, else their bandwidth. */
static double wire_rate(const hw_network *n)
{
    return (n->payload > 0 ? n->payload : n->bandwidth) * n->nics;
}

/* What a device's (or host's) NICs carry a direction: their wire rate, or
 * their PCIe link's data rate or the sockets' link where lower. */
static double port_rate(const hw_network *n)
{
    double port = wire_rate(n);
    if (n->socket_link > 0)
        port = MIN(port, n->socket_link);
    if (!n->pcie_generation)
        return port;
    strata_pcie_config cfg = {.generation = n->pcie_generation, .lanes = n->pcie_lanes,
                              .max_payload = NIC_PCIE_MPS, .max_read_request = NIC_PCIE_MRRS};
    return MIN(port, strata_pcie_data_rate(&cfg));
}

/* payload_bandwidth: a bandwidth no higher than the NIC's line rate, stated
 * by the same layer as bandwidth or a later one: a --set or derived file
 * that restates bandwidth alone would leave the wire at the old payload
 * figure (only NCCL's search would see the new speed), so it is refused. */
static bool get_payload(const hw_load_ctx *ctx, hw_network *n, GError **err)
{
    if (!strata_keyfile_has_key(ctx->k, n->group, "payload_bandwidth"))
        return true;
    if (!hw_get_bandwidth(ctx, n->group, "payload_bandwidth", &n->payload, err))
        return false;
    bool restated = strata_keyfile_layer_of(ctx->k, n->group, "bandwidth") >
                    strata_keyfile_layer_of(ctx->k, n->group, "payload_bandwidth");
    if (!restated && n->payload <= n->bandwidth)
        return true;
    char *bw_at = strata_keyfile_where(ctx->k, n->group, "bandwidth");
    char *pl_at = strata_keyfile_where(ctx->k, n->group, "payload_bandwidth");
    char *bw, *pl; /* a payload a hair above bandwidth read "at most 25.00 GB/s ... got 25.00 GB/s" */
    strata_format_bandwidth_pair(n->bandwidth, n->payload, &bw, &pl);
    if (restated)
        hw_fail(ctx, err, n->group, "bandwidth", "set to %s here while payload_bandwidth stays %s (%s): the wire "
                "carries payload_bandwidth, so restate payload_bandwidth beside bandwidth (at most it)", bw, pl,
                pl_at);
    else
        hw_fail(ctx, err, n->group, "payload_bandwidth", "expected at most bandwidth (%s, %s: the payload a NIC "
                "delivers cannot exceed its line rate), got %s", bw, bw_at, pl);
    g_free(bw_at);
    g_free(pl_at);
    g_free(bw);
    g_free(pl);
    return false;
}

static bool get_oversubscription(const hw_load_ctx *ctx, hw_network *n, GError **err)
{
    n->oversubscription = 1;
    char *v = hw_get_text(ctx, n->group, "oversubscription");
    if (!v)
        return true;
    char *end = NULL;
    double x = g_ascii_strtod(g_strstrip(v), &end);
    bool ok = end != v && *end == '\0' && x >= 1 && x <= 64;
    if (ok)
        n->oversubscription = x;
    else
        hw_fail_value(ctx, err, n->group, "oversubscription", "a ratio from 1 to 64 such as 1, 2 or 1.5", v);
    g_free(v);
    return ok;
}

static bool get_routing(const hw_load_ctx *ctx, hw_network *n, GError **err)
{
    static const char *const names[] = {"adaptive", "ecmp", "destination"};
    n->routing = ROUTING_ADAPTIVE;
    char *v = hw_get_text(ctx, n->group, "routing");
    if (!v)
        return true;
    g_strstrip(v);
    for (uint32_t i = 0; i < G_N_ELEMENTS(names); i++)
        if (strcmp(v, names[i]) == 0) {
            n->routing = (hw_routing)i;
            g_free(v);
            return true;
        }
    hw_fail_value(ctx, err, n->group, "routing", "adaptive, ecmp or destination", v);
    g_free(v);
    return false;
}

/* The counts that must divide the machine's. */
static bool check_counts(const hw_load_ctx *ctx, const strata_hw *hw, hw_network *n, GError **err)
{
    if (n->devices_per_nic > 1 && (n->hosts || hw->devices_per_host % n->devices_per_nic != 0)) {
        hw_fail(ctx, err, n->group, "devices_per_nic",
                n->hosts ? "devices_per_nic applies to NICs on the devices (a per-device memory), not on hosts"
                         : "expected a divisor of devices_per_host = %u, got %u",
                hw->devices_per_host, n->devices_per_nic);
        return false;
    }
    if (hw->hosts % n->hosts_per_leaf != 0) {
        hw_fail(ctx, err, n->group, "hosts_per_leaf", "expected a divisor of the %u hosts, got %u", hw->hosts,
                n->hosts_per_leaf);
        return false;
    }
    return true;
}

static bool parse_network(const hw_load_ctx *ctx, const strata_hw *hw, hw_network *n, GError **err)
{
    char *mem = hw_get_text(ctx, n->group, "memory");
    int m = mem ? hw_get_memory_ref(ctx, hw, n->group, "memory", g_strstrip(mem), err) : (int)hw->default_memory;
    g_free(mem);
    if (m < 0)
        return false;
    n->memory = (uint32_t)m;
    n->hosts = !hw_per_device(g_array_index(hw->tmems, strata_memory_spec, m).kind);
    char *topo = hw_get_text(ctx, n->group, "topology");
    if (topo && strcmp(g_strstrip(topo), "rails") != 0 && strcmp(topo, "switch") != 0) {
        hw_fail_value(ctx, err, n->group, "topology", "switch or rails", topo);
        g_free(topo);
        return false;
    }
    n->rails = topo && strcmp(topo, "rails") == 0;
    g_free(topo);
    uint32_t hosts = hw->hosts ? hw->hosts : 1;
    if (!hw_get_bandwidth(ctx, n->group, "bandwidth", &n->bandwidth, err) ||
        !hw_get_time(ctx, n->group, "latency", &n->latency, err) ||
        !hw_get_count(ctx, n->group, "nics", 1, MAX_NICS, 1, NULL, &n->nics, err) ||
        !hw_get_count(ctx, n->group, "devices_per_nic", 1, 65536, 1, NULL, &n->devices_per_nic, err) ||
        !hw_get_count(ctx, n->group, "hosts_per_leaf", 1, 65536, hosts, NULL, &n->hosts_per_leaf, err) ||
        !hw_get_count(ctx, n->group, "uplinks", 1, STRATA_ECMP_MAX, 1, NULL, &n->uplinks, err) ||
        !get_qps(ctx, n, err) ||
        !get_oversubscription(ctx, n, err) || !get_routing(ctx, n, err) || !get_pcie(ctx, n, err) ||
        (strata_keyfile_has_key(ctx->k, n->group, "socket_link_bandwidth") &&
         !hw_get_bandwidth(ctx, n->group, "socket_link_bandwidth", &n->socket_link, err)) ||
        !get_payload(ctx, n, err))
        return false;
    return check_counts(ctx, hw, n, err);
}

bool hw_network_parse(const hw_load_ctx *ctx, const strata_hw *hw, char **groups, gsize n_groups,
                      hw_network **out, GError **err)
{
    *out = NULL;
    for (gsize g = 0; g < n_groups; g++) {
        if (!g_str_has_prefix(groups[g], "network "))
            continue;
        if (*out) {
            hw_fail(ctx, err, groups[g], NULL, "a second network ([%s] already joins the domains; a model takes "
                    "one scale-out network)", (*out)->group);
            hw_network_free(*out);
            *out = NULL;
            return false;
        }
        hw_network *n = g_new0(hw_network, 1);
        n->group = groups[g];
        n->name = groups[g] + strlen("network ");
        *out = n;
        if (!parse_network(ctx, hw, n, err)) {
            hw_network_free(n);
            *out = NULL;
            return false;
        }
    }
    return true;
}

void hw_network_free(hw_network *n) { g_free(n); }

const char *hw_network_group(const hw_network *n) { return n->group; }
uint32_t hw_network_memory(const hw_network *n) { return n->memory; }
bool hw_network_on_hosts(const hw_network *n) { return n->hosts; }

strata_hw_nics hw_network_nics(const strata_hw *hw, const hw_network *n)
{
    uint32_t per_host = n->hosts ? 1 : hw->devices_per_host / n->devices_per_nic;
    return (strata_hw_nics){.per_host = per_host * n->nics, .bandwidth = n->bandwidth, .latency = n->latency,
                            .devices = n->hosts ? 0 : per_host, .on_hosts = n->hosts,
                            .pcie_generation = n->pcie_generation, .pcie_lanes = n->pcie_lanes,
                            .socket_link = n->socket_link};
}

bool strata_hw_network_nics(const strata_hw *hw, strata_hw_nics *out)
{
    if (hw->has_nics)
        *out = hw->nics;
    return hw->has_nics;
}

/* The NICs of one host (per rail), the leaves and whether a spine joins them. */
static uint32_t nics_per_host(const strata_hw *hw, const hw_network *n)
{
    return n->hosts ? 1 : hw->devices_per_host / n->devices_per_nic;
}

static uint32_t leaf_count(const strata_hw *hw, const hw_network *n)
{
    return (n->rails ? nics_per_host(hw, n) : 1) * (hw->hosts / n->hosts_per_leaf);
}

uint32_t hw_network_diameter(const strata_hw *hw, const hw_network *n)
{
    uint32_t d = leaf_count(hw, n) > 1 ? 4 : 2;
    return d + (n->devices_per_nic > 1 ? 2 : 0);
}

static void add_net_link(strata_hw *hw, const char *name, uint32_t a, double bandwidth, double latency, bool hosts,
                         uint32_t site)
{
    strata_link_spec l = {.name = g_string_chunk_insert_const(hw->strings, name), .a = a,
                          .b = STRATA_HW_NO_MEMORY, .bandwidth = bandwidth, .latency = latency,
                          .full_duplex = true,
                          .device = {hosts ? STRATA_HW_NO_DEVICE : site, STRATA_HW_NO_DEVICE},
                          .host = {hosts ? site : STRATA_HW_NO_DEVICE, STRATA_HW_NO_DEVICE}};
    g_array_append_val(hw->links, l);
}

/* A link from vertex u (memory `a` on it, or none) to vertex v, joined in
 * the site graph with `pad` more on each way. */
static void join(strata_hw *hw, uint32_t u, uint32_t v, uint32_t a, const char *name, double bandwidth,
                 double latency, bool hosts, uint32_t site, uint32_t pad)
{
    hw_sites_connect(hw->sites, u, v, hw->links->len, pad, pad);
    add_net_link(hw, name, a, bandwidth, latency, hosts, site);
}

/* The fraction of a leaf's uplinks that NCCL's rings can use under the
 * network's routing (hw/ecmp.h): 1 with adaptive routing, or where no ring
 * crosses leaves of one rail. NCCL's ring visits the nodes in rank order
 * (NVIDIA/nccl v2.28.9-1 src/graph/connect.cc connectRings l. 94-112:
 * node n sends to node n + 1), so with hosts_per_leaf consecutive hosts a
 * leaf, each channel's ring leaves a leaf once (and enters it once): a
 * rail's leaf carries the channels of its NIC, ceil(channels / NICs a
 * host), one leaf of a host's NICs all of them, each from its last host to
 * the next leaf's first. A connection opens NCCL_IB_QPS_PER_CONNECTION
 * queue pairs (src/transport/net_ib.cc l. 1215, the most of both ends', l.
 * 1423) and puts each message on the next in turn
 * (NCCL_IB_SPLIT_DATA_ON_QPS=0, the default, l. 2062-2133, 2184), so each
 * QP is a flow of an equal part (ecmp: a key each). InfiniBand's static
 * routes follow the destination LID alone (l. 1296: ah_attr.dlid), so the
 * QPs and channels to one port share a route (destination: a key per
 * destination port: on a rail, the next leaf's first host's NIC). */
static double uplink_share(const strata_hw *hw, const hw_network *n, uint32_t per_host)
{
    if (n->routing == ROUTING_ADAPTIVE || n->hosts_per_leaf == hw->hosts)
        return 1;
    uint32_t channels = MAX(1u, strata_hw_nccl_channels(hw, hw->devices));
    uint32_t connections = n->rails ? (channels + per_host - 1) / per_host : channels;
    uint32_t keys = n->routing == ROUTING_ECMP ? connections * n->qps : (n->rails ? 1 : MIN(channels, per_host));
    return strata_ecmp_expected_share(keys, n->uplinks);
}

void hw_network_build(strata_hw *hw, const hw_network *n)
{
    uint32_t per_host = nics_per_host(hw, n), leaves = leaf_count(hw, n);
    uint32_t groups = hw->hosts / n->hosts_per_leaf, spine = 0, nic = 0;
    double port = wire_rate(n), pcie_port = port_rate(n); /* a device's own link: its PCIe's cap */
    uint32_t *leaf_at = g_new(uint32_t, leaves);
    for (uint32_t l = 0; l < leaves; l++) {
        char *name = g_strdup_printf("%s.leaf%u", n->name, l);
        leaf_at[l] = hw_sites_add_switch(hw->sites, name);
        g_free(name);
    }
    if (leaves > 1)
        spine = hw_sites_add_switch(hw->sites, n->name);
    /* each site's NIC (a host's, a device's, or a NIC shared by devices_per_nic devices) */
    uint32_t sites = n->hosts ? hw->hosts : hw->devices, first = n->hosts ? hw->devices : 0;
    for (uint32_t i = 0; i < sites; i++) {
        uint32_t host = n->hosts ? i : i / hw->devices_per_host;
        uint32_t local = n->hosts ? 0 : i % hw->devices_per_host / n->devices_per_nic;
        uint32_t leaf = leaf_at[(n->rails ? local * groups : 0) + host / n->hosts_per_leaf];
        char *name = g_strdup_printf("%s@%u", n->name, i);
        if (n->devices_per_nic > 1 && i % n->devices_per_nic == 0) { /* the NIC, and its port to its leaf */
            char *nic_name = g_strdup_printf("%s.nic%u", n->name, i / n->devices_per_nic);
            nic = hw_sites_add_switch(hw->sites, nic_name);
            join(hw, nic, leaf, STRATA_HW_NO_MEMORY, nic_name, port, n->latency, false, STRATA_HW_NO_DEVICE, 0);
            g_free(nic_name);
        }
        join(hw, first + i, n->devices_per_nic > 1 ? nic : leaf, hw->mem_at[n->memory].offset + i, name, pcie_port,
             n->devices_per_nic > 1 ? 0 : n->latency, n->hosts, i, 0);
        g_free(name);
    }
    double share = uplink_share(hw, n, per_host);
    for (uint32_t l = 0; leaves > 1 && l < leaves; l++) {
        char *name = g_strdup_printf("%s.up%u", n->name, l);
        double nics_under = (double)n->hosts_per_leaf * (n->rails ? 1 : per_host);
        double up = port * nics_under / n->oversubscription * share;
        join(hw, leaf_at[l], spine, STRATA_HW_NO_MEMORY, name, up, n->latency, false, STRATA_HW_NO_DEVICE, 1);
        g_free(name);
    }
    g_free(leaf_at);
}
