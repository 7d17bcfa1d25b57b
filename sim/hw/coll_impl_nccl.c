/*
 * coll_impl_nccl.c: the nccl row of the collective implementations
 * (coll_impl.h): NVIDIA's NCCL, on one node or across nodes.
 *
 * Parameters: the GPUs' architecture (the column of NCCL's tuning tables),
 * NCCL's ring graph inside a node as its topology search builds it
 * (channels x the bandwidth of one; on a `topology = full` NVLink mesh
 * also its rings, computed at load by that search: nccl_mesh.h), whether the switch reduces and
 * multicasts (NVLink SHARP, NCCL's NVLS algorithm), the host CPU (LL's
 * cap and the network's overhead across nodes), NCCL_ALGO / NCCL_PROTO
 * as a run may set them, and the NCCL release whose tuning tables choose
 * (nccl_version, nccl_versions.h; default the newest), NCCL_MIN_CTAS,
 * NCCL_MAX_NCHANNELS and NCCL_MAX_CTAS as a run may set them
 * (nccl_min_ctas, nccl_max_nchannels, nccl_max_ctas), the tuner plugin
 * whose choice NCCL takes (nccl_tuner_plugin, nccl_plugin.h), the latency the network
 * plugin reports (nccl_net_latency: NCCL's graph latencyInter, in its
 * choice only), the network plugin whose latency, NIC groups and NCCL
 * environment stand where the run sets none (nccl_net_plugin,
 * nccl_net_plugin.h), NCCL_P2P_NET_CHUNKSIZE (nccl_p2p_net_chunksize),
 * Simple's wait per step inside a node beyond the links'
 * flight (nccl_simple_sync), the receiver's GPUDirect flush of a Simple
 * step across nodes on GPUs below compute capability 9.0 (nccl_gdr_flush,
 * below), and the process layout with the host's time per communicator
 * (coll_host.h). Across nodes NCCL's view of the NICs
 * comes from the model's [network] (hw.h strata_hw_network_nics), as the
 * net plugin shows them (nccl_nic_group: comm_of below).
 * pick: algo=nccl for all-reduce, all-gather, reduce-scatter and
 * all-to-all (ideal's choice for the others).
 * tune: the algorithm, protocol and channels NCCL's tuning model picks
 * (nccl_tuning.h), NCCL's fixed cost per collective, Simple's wait per
 * step inside a node and, across nodes, its cost of a step over the
 * network; an all-to-all, NCCL's grouped sends and receives, its
 * point-to-point plan instead (nccl_p2p.h, p2p_tune below).
 */
#include "hw/coll_impl.h"
#include <string.h>
#include "core/error.h"
#include "core/units.h"
#include "hw/hw_internal.h"
#include "hw/nccl_net_plugin.h"
#include "hw/net_protocol.h"
#include "hw/nccl_proxy_floor.h"
#include "hw/nccl_proxy_pass.h"
#include "hw/nccl_plugin.h"
#include "hw/nccl_mesh.h"

/* The block load() reads. */
typedef struct nccl_params {
    strata_nccl_arch arch;
    uint32_t channels;         /* the ring graph's channels */
    double channel_bandwidth;  /* B/s per channel */
    bool nvls;
    strata_nccl_cpu cpu;
    strata_nccl_net_path net_path; /* nccl_net_path: the GPUs' path to their NICs */
    uint32_t algos, protos;    /* NCCL_ALGO, NCCL_PROTO (0: all) */
    const strata_nccl_version *version;
    uint32_t min_ctas;         /* NCCL_MIN_CTAS (0: unset) */
    uint32_t max_nchannels;    /* NCCL_MAX_NCHANNELS (0: unset) */
    uint32_t max_ctas;         /* NCCL_MAX_CTAS (0: unset) */
    double simple_sync;        /* s: Simple's wait per step inside a node beyond the flight (0: none) */
    const strata_nccl_plugin *plugin; /* NCCL_TUNER_PLUGIN (NULL: none) */
    uint32_t nic_group;        /* NICs the net plugin shows NCCL as one (1: each its own) */
    double net_latency;        /* nccl_net_latency: the net plugin's latency property (s) */
    uint64_t buffsize;         /* NCCL_BUFFSIZE: Simple's buffer per connection (0: NCCL's 4 MiB) */
    uint64_t nvls_chunk;       /* NCCL_NVLS_CHUNKSIZE (0: unset, NCCL's 128 KiB) */
    uint64_t nvlstree_max;     /* NCCL_NVLSTREE_MAX_CHUNKSIZE (0: unset) */
    uint64_t p2p_net_chunk;    /* NCCL_P2P_NET_CHUNKSIZE (0: unset, NCCL's 128 KiB) */
    double gdr_flush_s;        /* nccl_gdr_flush where NCCL flushes (volta, ampere), else 0 */
    strata_coll_host host;     /* nccl_ranks_per_process, _host_launch, _host_plan */
    const strata_net_protocol *net_proto; /* nccl_net_protocol or the net plugin's (NULL: none) */
    bool ring_own_channel;     /* nccl_ring_wait = channel */
    const strata_ib_frame *frame; /* nccl_ib_link_layer (NULL: unset, no framing) */
    uint32_t mtu;              /* nccl_ib_mtu: the QPs' path MTU, bytes */
    strata_nccl_mesh_graph mesh; /* NCCL's rings on a full NVLink mesh (nccl_mesh.h); channels 0: none */
} nccl_params;

/* nccl_gdr_flush: NCCL's receive proxy flushes every Simple step it
 * receives across nodes by GPUDirect RDMA before it tells the GPU the step
 * is there, on GPUs below compute capability 9.0. NVIDIA/nccl v2.25.1-1
 * src/graph/paths.cc ncclTopoNeedFlush l. 461-473 ("Flush is required on
 * Ampere and earlier": *flush = 1, 0 from cudaCompCap 90, unless the net
 * plugin's forceFlush or NCCL_NET_FORCE_FLUSH, l. 458, 465; v2.19.3-1
 * l. 408-415 and v2.18.3-1 l. 406-413 the same rule; v2.26.2-1 l. 476-496
 * to v2.30.7-1 l. 575-597 also flush from 9.0 where the CPU is attached by
 * C2C and the NIC sits at most a PCIe switch from the GPU, not modelled);
 * the receive side keeps it where it uses GDR (src/transport/net.cc
 * l. 237-240). recvProxyProgress (net.cc l. 1230), once a received
 * request completes (one per slice: sliceSteps steps of its sub-steps),
 * calls the network's iflush on it where the protocol is Simple (l.
 * 1363-1418; GDRCopy's CPU read of the GPU's memory instead only with
 * NCCL_GDRCOPY_ENABLE=1 and NCCL_GDRCOPY_FLUSH_ENABLE=1, both default 0:
 * src/init.cc l. 66, net.cc l. 221, 953), and writes the step's tail for
 * the GPU only when that request completes (l. 1427-1447), steps in order.
 * LL and LL128 steps are not flushed (their flags travel with the data).
 * The IB transport's iflush (src/transport/net_ib.cc ncclIbIflush l.
 * 2159-2194) posts a 1-byte IBV_WR_RDMA_READ of the received buffer into a
 * host word on a QP connected to itself (gpuFlush.qp, l. 1618-1634; off
 * under NCCL_GDR_FLUSH_DISABLE=1, l. 1454, 1605-1606); aws-ofi-nccl's
 * (v1.16.3 src/nccl_ofi_sendrecv.cpp sendrecv_recv_comm_flush l.
 * 1127-1270, p4d's SENDRECV protocol; nccl_ofi_rdma.cpp the same on RDMA)
 * an fi_read of NCCL_OFI_FLUSH_SIZE (4) bytes of it to its own endpoint,
 * none under OFI_NCCL_GDR_FLUSH_DISABLE=1, and CUDA's
 * cudaDeviceFlushGPUDirectRDMAWrites instead only under
 * OFI_NCCL_CUDA_FLUSH_ENABLE=1 (default 0); NCCL's own proxy never calls
 * it (v2.19.3-1 to v2.30.7-1). Every tabled release (nccl_versions.h) flushes
 * alike on Volta and Ampere. Its time: ESTIMATE 2 us, as RCCL's
 * (coll_impl_rccl.c rccl_gdr_flush): one RDMA read's round trip through
 * the local NIC without the wire (the proxy's post and doorbell, the NIC's
 * fetch of the work request, its PCIe read of the GPU's memory and write
 * of the byte and the completion to host memory, the proxy's poll), about
 * a small RDMA read's latency as perftest's ib_read_lat reports it for a
 * NIC of this class; no public figure of the flush on ConnectX-6 or EFA was
 * found. A file sets 0 where NCCL runs without GPUDirect RDMA or with the
 * flush disabled. */
#define NCCL_GDR_FLUSH_S 2e-6

static const strata_coll_impl_key nccl_keys[] = {
    {"nccl_arch", true,
     "collectives = nccl: the GPU architecture in NCCL's tuning tables, volta, ampere, hopper or blackwell"},
    {"nccl_channels", true, "collectives = nccl: the channels of NCCL's ring graph, 1 to 32"},
    {"nccl_channel_bandwidth", true, "collectives = nccl: the bandwidth of one channel of that graph"},
    {"nvls", false, "true or false: the switch reduces and multicasts (NVLink SHARP; default false)"},
    {"nccl_cpu", false, "collectives = nccl: the hosts' CPU, intel (default), amd or arm (NCCL's LL cap and "
                        "network overhead across nodes)"},
    {"nccl_net_path", false, "collectives = nccl: the path by which NCCL's graphs reach the NICs from the GPUs, as "
                             "its topology prints it: pix, pxb (default), pxn, phb, sys, or c2c (NVLink-C2C to the "
                             "CPU, the NIC on its PCIe: P2C from NCCL 2.27, PHB before); LL128 across nodes runs "
                             "by default only up to PXB, or PXN from Hopper (tuning.cc)"},
    {"nccl_algo", false, "collectives = nccl: the algorithms NCCL may run, as NCCL_ALGO lists them (Ring,Tree; "
                         "default: all it enables)"},
    {"nccl_proto", false, "collectives = nccl: the protocols NCCL may run, as NCCL_PROTO lists them (LL,LL128,"
                          "Simple; default: all)"},
    {"nccl_version", false, "collectives = nccl: the NCCL release whose tuning tables choose, 2.8 or 2.9 (one node "
                            "of Volta or Ampere GPUs), 2.19 (one node of Volta, Ampere or Hopper GPUs, or "
                            "Volta or Ampere nodes) or 2.25 to 2.30 (2.MINOR or 2.MINOR.PATCH; default: the "
                            "newest, 2.30)"},
    {"nccl_min_ctas", false, "collectives = nccl: NCCL_MIN_CTAS as a run sets it, the least channels NCCL runs, 1 to "
                             "32 (default: unset)"},
    {"nccl_max_nchannels", false, "collectives = nccl: NCCL_MAX_NCHANNELS as a run sets it, the most channels of "
                                  "NCCL's rings and trees before NVLS's raise them (to 2.27), 1 to 32 (default: unset)"},
    {"nccl_max_ctas", false, "collectives = nccl: NCCL_MAX_CTAS as a run sets it, the most channels of NCCL's "
                             "rings, trees and NVLS, 1 to 32 (default: unset)"},
    {"nccl_tuner_plugin", false, "collectives = nccl: the tuner plugin whose choice NCCL takes where it makes one "
                                 "(NCCL_TUNER_PLUGIN), aws-ofi-p5 (aws-ofi-nccl's region tuner on p5 and p5e), "
                                 "aws-ofi-p6-b200-v1.15, -v1.16, -v1.17, -v1.19, aws-ofi-p6-b300-v1.18, -v1.19 "
                                 "(its p6 tables by release), "
                                 "gcp-gib-a3u, gcp-gib-a4 or gcp-tcpxo-a3m (Google's tuner tables on A3 "
                                 "Ultra, A4 and A3 Mega; nccl_plugin.h); default: none"},
    {"nccl_nic_group", false, "collectives = nccl: the NICs NCCL's net plugin shows as one network device of "
                              "their summed speed, 1 to 64 (aws-ofi-nccl's RDMA protocol: a GPU's NICs; default "
                              "1: each NIC its own, NCCL's IB transport)"},
    {"nccl_net_latency", false, "collectives = nccl: the latency the network plugin reports to NCCL "
                                "(ncclNetProperties.latency, NCCL's graph latencyInter), which NCCL's model adds to "
                                "each step between nodes when it chooses (twice on Simple); default 0 (InfiniBand's "
                                "plugin sets none)"},
    {"nccl_buffsize", false, "collectives = nccl: NCCL_BUFFSIZE as a run sets it, the Simple protocol's buffer per "
                             "connection, NCCL_STEPS (8) steps of it (a ring's chunk 4 steps), 64KiB to 256MiB "
                             "(default 4MiB, init.cc DEFAULT_BUFFSIZE)"},
    {"nccl_nvls_chunksize", false, "collectives = nccl: NCCL_NVLS_CHUNKSIZE as a run sets it, NVLS's and "
                                   "NVLS_TREE's chunk per channel and head before calcCollChunking halves it, "
                                   "4KiB to 16MiB (default 128KiB, transport/nvls.cc)"},
    {"nccl_nvlstree_max_chunksize", false, "collectives = nccl: NCCL_NVLSTREE_MAX_CHUNKSIZE as a run sets it, the "
                                           "largest NVLS_TREE chunk, 4KiB to 16MiB (default: 64KiB from 4 "
                                           "nodes, else the NVLS chunk)"},
    {"nccl_p2p_net_chunksize", false, "collectives = nccl: NCCL_P2P_NET_CHUNKSIZE as a run sets it, a point-to-point "
                                      "step across nodes (at most a step of NCCL_BUFFSIZE), 4KiB to 16MiB (default "
                                      "128KiB, init.cc)"},
    {"nccl_net_plugin", false, "collectives = nccl: the network plugin the run's NCCL loads (NCCL_NET_PLUGIN), "
                               "aws-ofi-p4d, aws-ofi-p5 or aws-ofi-p4de-v1.8 (aws-ofi-nccl's platform blocks, "
                               "nccl_net_plugin.h): "
                               "its latency, NIC groups and NCCL environment, where the run sets none of "
                               "nccl_net_latency, nccl_nic_group, nccl_buffsize, nccl_p2p_net_chunksize, "
                               "nccl_nvls_chunksize, nccl_nvlstree_max_chunksize, nccl_proto (aws-ofi-p4d: "
                               "Simple, its EFA lacking 128-byte in-order delivery) itself; default: none"},
    {"nccl_ring_wait", false, "collectives = nccl: what a ring all-reduce's LL or LL128 step across nodes waits "
                              "for at its source, round (default: its receipts of the round before on every "
                              "channel, which stands in for pacing across nodes the model lacks) or channel (its "
                              "own channel's only, as NCCL's kernel: docs/clusters.md, wave 33)"},
    {"nccl_net_protocol", false, "collectives = nccl: the protocol a network message runs by its size, "
                                 "efa-rdm-cuda or aws-ofi-rdma (net_protocol.h): the flights beyond the first, "
                                 "the eager copy into the GPU and NCCL's own ends of the step over EFA; "
                                 "default: the nccl_net_plugin row's, else none"},
    {"nccl_simple_sync", false, "collectives = nccl: inside a node, the time a step of the Simple protocol waits "
                                "beyond its data's and flag's flight over the links (the sender's fence before it "
                                "posts the flag, the receiver's poll), 0 to 1 s (default 0)"},
    {"nccl_gdr_flush", false, "collectives = nccl: the receiver's GPUDirect flush of every Simple step it receives "
                              "across nodes (a 1-byte RDMA read of it through its NIC), 0 to 1 s (default 2us, "
                              "ESTIMATE, on volta and ampere; 0: no GPUDirect RDMA, or the flush disabled); NCCL "
                              "flushes below compute capability 9.0 only (nccl_arch volta or ampere)"},
    {"nccl_ib_link_layer", false, "collectives = nccl: the link layer NCCL's IB transport runs on across nodes, "
                                  "infiniband or roce-v2 (ib_frame.h): each packet of a network step's message "
                                  "carries its headers on the wire (26 or 82 bytes a packet, 20 a message); "
                                  "default: unset, the data alone; refused beside a network protocol over EFA "
                                  "(nccl_net_protocol or the nccl_net_plugin row's), which is neither"},
    {"nccl_ib_mtu", false, "collectives = nccl: the QPs' path MTU across nodes, 256, 512, 1024, 2048 or 4096 bytes "
                           "(the ports' active MTU; default 4096); only with nccl_ib_link_layer"},
    STRATA_COLL_HOST_KEYS("nccl"),
    {NULL, false, NULL},
};

/* An environment size a run may set (NCCL_BUFFSIZE and the like): 0 when
 * absent, else a size from lo to hi and a multiple of 512 bytes (NCCL's
 * buffers hold whole steps of 16-byte lines and 128-byte LL128 lines). */
static bool optional_size(const hw_load_ctx *ctx, const char *group, const char *key, uint64_t lo, uint64_t hi,
                          uint64_t *out, GError **err)
{
    char *raw = hw_get_raw(ctx, group, key);
    *out = 0;
    if (!raw)
        return true;
    bool ok = hw_get_size(ctx, group, key, out, err);
    if (ok && (*out < lo || *out > hi || *out % 512)) {
        char *want = g_strdup_printf("a size from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT
                                     " bytes, a multiple of 512", lo, hi);
        ok = hw_fail_value(ctx, err, group, key, want, raw);
        g_free(want);
    }
    g_free(raw);
    return ok;
}

/* A key naming a row strata has no row of: exit 2 with what is expected
 * ("WHAT: the rows"), as hw_fail_value words it; false. */
static bool refuse_unknown_row(const hw_load_ctx *ctx, GError **err, const char *group, const char *key,
                               const char *what, char *rows, const char *value)
{
    char *want = g_strdup_printf("%s: %s", what, rows);
    bool ok = hw_fail_value(ctx, err, group, key, want, value);
    g_free(want);
    g_free(rows); /* the table's list, taken */
    return ok;
}

/* nccl_net_protocol, and nccl_net_plugin: the plugin's latency, NIC groups,
 * protocol and environment where the run sets none of its own
 * (nccl_net_plugin.h: the plugin inserts its environment without
 * overwriting) */
/* nccl_ring_wait: round (default) or channel (p->ring_own_channel). */
static bool ring_wait(const hw_load_ctx *ctx, const char *group, nccl_params *p, GError **err)
{
    char *v = hw_get_text(ctx, group, "nccl_ring_wait");
    bool ok = !v || strcmp(g_strstrip(v), "round") == 0 || strcmp(v, "channel") == 0;
    p->ring_own_channel = ok && v && strcmp(v, "channel") == 0;
    if (!ok)
        hw_fail_value(ctx, err, group, "nccl_ring_wait", "round or channel", v);
    g_free(v);
    return ok;
}

/* nccl_net_path: the GPUs' path to their NICs as NCCL's topology dump
 * prints it (GPU/... NET/... (hops/bw/TYPE)); pxb where unset, the NICs on
 * the GPUs' PCIe switches as every file was read before the key. */
static bool net_path(const hw_load_ctx *ctx, const char *group, strata_nccl_cpu cpu, strata_nccl_net_path *out,
                     GError **err)
{
    static const char *const names[] = {"pix", "pxb", "c2c", "pxn", "phb", "sys"};
    unsigned i;
    bool ok = hw_coll_impl_word(ctx, group, "nccl_net_path", names, G_N_ELEMENTS(names), STRATA_NCCL_PATH_PXB,
                                "pix, pxb, pxn, phb, sys or c2c", &i, err);
    *out = (strata_nccl_net_path)i;
    /* NVLink-C2C joins a GPU to a Grace CPU (nccl_tuning.h), whose NCCL reads cpuArch ARM: c2c beside an intel
     * or amd host (nccl_cpu's default intel) ran with the other host's LL cap and post overhead */
    if (ok && *out == STRATA_NCCL_PATH_C2C && cpu != STRATA_NCCL_ARM) {
        hw_fail(ctx, err, group, "nccl_net_path", "expected nccl_cpu = arm beside c2c (NVLink-C2C joins the GPUs to "
                "Grace CPUs), got nccl_cpu = %s", cpu == STRATA_NCCL_AMD ? "amd" : "intel");
        ok = false;
    }
    return ok;
}

/* The [network NAME] group that gives payload_bandwidth, NULL when none
 * (g_free). */
static char *payload_network(const hw_load_ctx *ctx)
{
    gsize n = 0;
    char **groups = strata_keyfile_groups(ctx->k, &n);
    char *found = NULL;
    for (gsize g = 0; g < n && !found; g++)
        if (g_str_has_prefix(groups[g], "network ") &&
            strata_keyfile_has_key(ctx->k, groups[g], "payload_bandwidth"))
            found = g_strdup(groups[g]);
    g_strfreev(groups);
    return found;
}

/* nccl_ib_link_layer and nccl_ib_mtu (p->frame, p->mtu). The path MTU:
 * NCCL's QPs take the lower of both ports' active_mtu (NVIDIA/nccl
 * v2.19.3-1 src/transport/net_ib.cc l. 565, 668, 807); ESTIMATE 4096 where
 * the file says none: InfiniBand's switches run 4096, and NVIDIA's RoCE
 * guidance sets the port's MTU to 4200 for an active MTU of 4096 (NVIDIA
 * Enterprise Support, "MTU Considerations for RoCE based Applications") */
static bool ib_frame_keys(const hw_load_ctx *ctx, const char *group, nccl_params *p, GError **err)
{
    char *name = hw_get_text(ctx, group, "nccl_ib_link_layer");
    bool has_mtu = strata_keyfile_has_key(ctx->k, group, "nccl_ib_mtu");
    if ((name || has_mtu) && p->net_proto && p->net_proto->fabric) { /* after net_plugin_defaults: p->net_proto */
        bool own = strata_keyfile_has_key(ctx->k, group, "nccl_net_protocol");
        hw_fail(ctx, err, group, name ? "nccl_ib_link_layer" : "nccl_ib_mtu", "expected no InfiniBand or RoCE "
                "framing where the network protocol is %s (%s): its messages run over %s, which is neither "
                "(net_protocol.h); remove the key", p->net_proto->name,
                own ? "nccl_net_protocol" : "the nccl_net_plugin row's", p->net_proto->fabric);
        g_free(name);
        return false;
    }
    char *net = name || has_mtu ? payload_network(ctx) : NULL;
    if (net) { /* payload_bandwidth is what is left after the framing: hw_network.c wire_rate */
        char *at = strata_keyfile_where(ctx->k, net, "payload_bandwidth");
        hw_fail(ctx, err, group, name ? "nccl_ib_link_layer" : "nccl_ib_mtu", "expected no InfiniBand or RoCE "
                "framing beside [%s] payload_bandwidth (%s): that measured payload rate already leaves out the "
                "packets' headers, which would be counted twice; remove one of them", net, at);
        g_free(at);
        g_free(net);
        g_free(name);
        return false;
    }
    if (!name) {
        if (has_mtu)
            hw_fail(ctx, err, group, "nccl_ib_mtu", "expected nccl_ib_link_layer beside it (the link "
                    "layer whose packets the MTU cuts), got none");
        return !has_mtu;
    }
    p->frame = strata_ib_frame_find(g_strstrip(name));
    if (!p->frame) {
        refuse_unknown_row(ctx, err, group, "nccl_ib_link_layer", "a link layer strata has the frames of",
                           strata_ib_frame_list(), name);
        g_free(name);
        return false;
    }
    g_free(name);
    if (!hw_get_count(ctx, group, "nccl_ib_mtu", 256, 4096, 4096, "256, 512, 1024, 2048 or 4096 bytes", &p->mtu,
                      err))
        return false;
    if (!strata_ib_frame_mtu_ok(p->mtu)) {
        char *got = g_strdup_printf("%u", p->mtu);
        hw_fail_value(ctx, err, group, "nccl_ib_mtu", "256, 512, 1024, 2048 or 4096 bytes", got);
        g_free(got);
        return false;
    }
    return true;
}

static bool net_plugin_defaults(const hw_load_ctx *ctx, const char *group, nccl_params *p, GError **err)
{
    char *proto = hw_get_text(ctx, group, "nccl_net_protocol");
    if (proto && !(p->net_proto = strata_net_protocol_find(g_strstrip(proto)))) {
        bool ok = refuse_unknown_row(ctx, err, group, "nccl_net_protocol",
                                     "a network protocol strata has the row of", strata_net_protocol_list(), proto);
        g_free(proto);
        return ok;
    }
    g_free(proto);
    char *name = hw_get_text(ctx, group, "nccl_net_plugin");
    if (!name)
        return true;
    const strata_nccl_net_plugin *pl = strata_nccl_net_plugin_find(g_strstrip(name));
    if (!pl) {
        bool ok = refuse_unknown_row(ctx, err, group, "nccl_net_plugin", "a network plugin strata has the rows of",
                                     strata_nccl_net_plugin_list(), name);
        g_free(name);
        return ok;
    }
    g_free(name);
    if (!p->net_proto && pl->net_protocol)
        p->net_proto = strata_net_protocol_find(pl->net_protocol);
    if (!strata_keyfile_has_key(ctx->k, group, "nccl_net_latency"))
        p->net_latency = pl->latency_s;
    if (!strata_keyfile_has_key(ctx->k, group, "nccl_nic_group"))
        p->nic_group = pl->nic_group;
    if (!strata_keyfile_has_key(ctx->k, group, "nccl_proto"))
        p->protos = pl->protos;
    uint64_t *sizes[] = {&p->buffsize, &p->p2p_net_chunk, &p->nvls_chunk, &p->nvlstree_max};
    const uint64_t row[] = {pl->buffsize, pl->p2p_net_chunk, pl->nvls_chunk, pl->nvlstree_max};
    const char *keys[] = {"nccl_buffsize", "nccl_p2p_net_chunksize", "nccl_nvls_chunksize",
                          "nccl_nvlstree_max_chunksize"};
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        if (!strata_keyfile_has_key(ctx->k, group, keys[i]))
            *sizes[i] = row[i];
    return true;
}

/* A row per strata_nccl_arch (volta .. blackwell): NCCL's per-link NVLink
 * bandwidth in its topology (graph/topo.h SM70_NVLINK_BW 20.0, SM80 20.0,
 * SM90 20.6, SM100 40.1 GB/s) and the compute capability it is keyed by. */
static const struct {
    double nvlink_link_gbs;
    uint32_t cc;
} arch_rows[] = {{20.0, 70}, {20.0, 80}, {20.6, 90}, {40.1, 100}};

/* On a `topology = full` domain of 3 GPUs or more (each pair joined by
 * links_per_chip direct links, no switch), the rings of NCCL's ring graph
 * as its search lays them over the mesh (nccl_mesh.h), for the ring
 * algorithm's channels on one node (models/collective/algo_nccl.c): NCCL
 * counts each pair's NVLinks from NVML (topo.cc ncclTopoAddNvLinks), the
 * model's links_per_chip. Elsewhere (a switch, rails, a torus, a pair) no
 * rings: NCCL's channels on one ring in rank order, as before. */
static bool mesh_graph(const hw_load_ctx *ctx, const char *group, uint32_t domain, nccl_params *p, GError **err)
{
    char *topo = hw_get_text(ctx, group, "topology");
    bool full = topo && strcmp(g_strstrip(topo), "full") == 0;
    g_free(topo);
    uint32_t links = 1;
    if (!full || domain < 3 || domain > STRATA_NCCL_MESH_MAX_GPUS)
        return true;
    if (!hw_get_count(ctx, group, "links_per_chip", 1, 64, 1, NULL, &links, err))
        return false;
    strata_nccl_mesh_rings(domain, links, (float)arch_rows[p->arch].nvlink_link_gbs, arch_rows[p->arch].cc,
                           &p->mesh);
    return true;
}

static void *nccl_load(const hw_load_ctx *ctx, const char *group, uint32_t domain, GError **err)
{
    nccl_params *p = g_new0(nccl_params, 1);
    char *arch = hw_get_text(ctx, group, "nccl_arch");
    bool ok = strata_nccl_arch_from_name(g_strstrip(arch), &p->arch) ||
              hw_fail_value(ctx, err, group, "nccl_arch", "volta, ampere, hopper or blackwell", arch);
    g_free(arch);
    ok = ok && hw_get_count(ctx, group, "nccl_channels", 1, 32, 1, NULL, &p->channels, err) &&
         hw_get_bandwidth(ctx, group, "nccl_channel_bandwidth", &p->channel_bandwidth, err);
    char *nvls = ok ? hw_get_text(ctx, group, "nvls") : NULL;
    if (nvls && !strata_parse_bool(g_strstrip(nvls), &p->nvls))
        ok = hw_fail_value(ctx, err, group, "nvls", "true or false", nvls);
    g_free(nvls);
    char *topo = ok && p->nvls ? hw_get_text(ctx, group, "topology") : NULL;
    if (topo && strcmp(g_strstrip(topo), "switch") != 0) { /* NVLink SHARP reduces in the NVSwitch */
        hw_fail(ctx, err, group, "nvls", "nvls = true: expected topology = switch (NVLink SHARP reduces and "
                "multicasts in the switch), got topology = %s", topo);
        ok = false;
    }
    g_free(topo);
    char *version = ok ? hw_get_text(ctx, group, "nccl_version") : NULL;
    p->version = strata_nccl_version_default();
    if (version && !(p->version = strata_nccl_version_find(g_strstrip(version)))) {
        char *list = strata_nccl_version_list();
        char *want = g_strdup_printf("an NCCL release with tuning tables: %s (2.MINOR or 2.MINOR.PATCH)", list);
        ok = hw_fail_value(ctx, err, group, "nccl_version", want, version);
        g_free(want);
        g_free(list);
    } else if (version && p->version->one_node && p->arch >= (p->version->pre_hopper ? STRATA_NCCL_HOPPER
                                                                                     : STRATA_NCCL_BLACKWELL)) {
        bool pre = p->version->pre_hopper;
        hw_fail(ctx, err, group, "nccl_version", "expected %s GPUs for NCCL %s (it predates %s), got nccl_arch = %s",
                pre ? "Volta or Ampere" : "Volta, Ampere or Hopper", p->version->name, pre ? "Hopper" : "Blackwell",
                strata_nccl_arch_name(p->arch));
        ok = false;
    }
    g_free(version);
    char *plugin = ok ? hw_get_text(ctx, group, "nccl_tuner_plugin") : NULL;
    if (plugin && !(p->plugin = strata_nccl_plugin_find(g_strstrip(plugin)))) {
        /* the p6 rows are named by the release whose table they hold first: a release between two rows takes
         * the earlier one's (nccl_plugin.h) */
        ok = refuse_unknown_row(ctx, err, group, "nccl_tuner_plugin",
                                "a tuner plugin strata has the choices of (an aws-ofi-p6 row holds its release to "
                                "the next row's: b200 -v1.16 for v1.16.0-v1.16.3, -v1.17 for v1.17.0-v1.18.0, "
                                "-v1.19 for v1.19.0-v1.21.1; b300 -v1.18 for v1.18.0, -v1.19 from v1.19.0)",
                                strata_nccl_plugin_list(), plugin);
    }
    g_free(plugin);
    ok = ok && hw_coll_impl_cpu(ctx, group, "nccl_cpu", STRATA_NCCL_INTEL, &p->cpu, err) &&
         net_path(ctx, group, p->cpu, &p->net_path, err) &&
         hw_coll_impl_list(ctx, group, "nccl_algo", true, &p->algos, err) &&
         hw_coll_impl_list(ctx, group, "nccl_proto", false, &p->protos, err) &&
         hw_get_count(ctx, group, "nccl_min_ctas", 1, 32, 0, NULL, &p->min_ctas, err) &&
         hw_get_count(ctx, group, "nccl_max_nchannels", 1, 32, 0, NULL, &p->max_nchannels, err) &&
         hw_get_count(ctx, group, "nccl_max_ctas", 1, 32, 0, NULL, &p->max_ctas, err) &&
         hw_get_count(ctx, group, "nccl_nic_group", 1, 64, 1, NULL, &p->nic_group, err) &&
         hw_get_time(ctx, group, "nccl_net_latency", &p->net_latency, err) &&
         hw_get_time(ctx, group, "nccl_simple_sync", &p->simple_sync, err) &&
         /* after nccl_arch: refused on Hopper and Blackwell, which do not flush (ncclTopoNeedFlush) */
         hw_get_gated_time(ctx, group, "nccl_gdr_flush", p->arch < STRATA_NCCL_HOPPER, NCCL_GDR_FLUSH_S,
                           "expected no flush time for nccl_arch hopper or blackwell: NCCL flushes a received step "
                           "only below compute capability 9.0 (volta, ampere); remove the key", &p->gdr_flush_s,
                           err) &&
         optional_size(ctx, group, "nccl_buffsize", 64u << 10, 256u << 20, &p->buffsize, err) &&
         optional_size(ctx, group, "nccl_nvls_chunksize", 4u << 10, 16u << 20, &p->nvls_chunk, err) &&
         optional_size(ctx, group, "nccl_nvlstree_max_chunksize", 4u << 10, 16u << 20, &p->nvlstree_max, err) &&
         optional_size(ctx, group, "nccl_p2p_net_chunksize", 4u << 10, 16u << 20, &p->p2p_net_chunk, err) &&
         net_plugin_defaults(ctx, group, p, err) && ring_wait(ctx, group, p, err) &&
         ib_frame_keys(ctx, group, p, err) &&
         hw_network_keys_unset(ctx, group, (const char *const[]){"nccl_net_latency", "nccl_nic_group",
                               "nccl_net_plugin", "nccl_p2p_net_chunksize", "nccl_ib_link_layer",
                               "nccl_ib_mtu", "nccl_net_protocol", "nccl_ring_wait", "nccl_cpu",
                               "nccl_net_path", "nccl_nvlstree_max_chunksize", NULL}, err) &&
         /* ncclLaunchPrepare's ncclStrongStreamWaitStream(launchStream, deviceStream) and ncclLaunchFinish's
          * (deviceStream, launchStream): a cudaEventRecord and a cudaStreamWaitEvent each (v2.18.3-1 to
          * v2.27.3-1 src/enqueue.cc, src/misc/strongstream.cc; v2.26 ncclStreamWaitStream, the same pair) */
         hw_coll_host_load(ctx, group, "nccl", 2, &p->host, err) && mesh_graph(ctx, group, domain, p, err);
    if (!ok)
        g_clear_pointer(&p, g_free);
    return p;
}

static const char *nccl_pick(const strata_hw *hw, strata_op_kind kind, const strata_mesh *mesh, uint32_t mask)
{
    (void)hw;
    (void)mesh;
    (void)mask;
    return strata_coll_reducing(kind) || kind == STRATA_OP_ALL_TO_ALL ? "nccl" : NULL;
}

bool strata_hw_nccl_arch(const strata_hw *hw, strata_nccl_arch *out)
{
    if (!hw || strata_hw_coll_impl(hw) != strata_coll_impl_find("nccl") || !strata_hw_coll_params(hw))
        return false;
    *out = ((const nccl_params *)strata_hw_coll_params(hw))->arch;
    return true;
}

/* NCCL's communicator for `ranks` ranks, `domain_ranks` per node. */
static strata_nccl_comm comm_of(const strata_hw *hw, uint32_t ranks, uint32_t domain_ranks)
{
    const nccl_params *p = strata_hw_coll_params(hw);
    strata_nccl_comm c = {.arch = p->arch, .ranks = ranks, .graph_channels = p->channels,
                          .channel_gbs = p->channel_bandwidth / 1e9, .nvls = p->nvls, .cpu = p->cpu,
                          .net_path = p->net_path,
                          .algos = p->algos, .protos = p->protos, .version = p->version,
                          .min_ctas = p->min_ctas, .max_nchannels = p->max_nchannels,
                          .max_ctas = p->max_ctas, .plugin = p->plugin,
                          .net_latency_us = p->net_latency * 1e6, .nvls_chunk_bytes = p->nvls_chunk,
                          .nvlstree_max_bytes = p->nvlstree_max, .simple_buff_bytes = p->buffsize,
                          .p2p_net_chunk_bytes = p->p2p_net_chunk};
    strata_hw_nics nics;
    if (domain_ranks && domain_ranks < ranks && strata_hw_network_nics(hw, &nics)) {
        /* a node of NCCL's is a scale-up domain: its NICs are its hosts',
         * as the net plugin shows them: a group of nic_group NICs is one
         * device whose speed is theirs summed. aws-ofi-nccl's RDMA protocol
         * (p5's default, src/platform-aws.cpp) groups the NICs that share
         * a GPU's PCIe switch (src/nccl_ofi_topo.cpp, "NIC group k device
         * #i" in its log, NVIDIA/nccl#1597) into one device of several rails
         * and reports the first rail's speed x max_group_size
         * (src/nccl_ofi_rdma.cpp get_properties) */
        uint32_t per_host = strata_hw_devices_per_host(hw);
        uint32_t node_nics = MAX(1u, nics.per_host * domain_ranks / per_host);
        uint32_t group = MIN(MAX(1u, p->nic_group), node_nics);
        /* the nodes the ranks span (NCCL's nNodes counts a node with any
         * of them: 12 ranks over 8-GPU nodes are 2 nodes, not 12 / 8) */
        c.nodes = (ranks + domain_ranks - 1) / domain_ranks;
        c.nics = node_nics / group;
        c.nic_gbs = nics.bandwidth * group / 1e9;
        /* the GPU's path to the NIC as NCCL's search sees it (v2.25.1-1):
         * its narrowest link (paths.cc ncclTopoSetPaths l. 67), the NIC's
         * PCIe link among them (topo.cc ncclTopoAddPci l. 471-472); the
         * search starts below it (search.cc getMaxBw l. 19-28) and takes
         * it off every link a channel crosses (followPath l. 79-117) */
        if (nics.pcie_generation)
            c.nic_gbs = MIN(c.nic_gbs, strata_nccl_pci_gbs(nics.pcie_generation, nics.pcie_lanes));
        c.nic_gbs = nics.socket_link > 0 ? MIN(c.nic_gbs, nics.socket_link / 1e9) : c.nic_gbs; /* topo.cc l. 80-86 */
        c.nic_gpus = MIN(domain_ranks, MAX(1u, nics.devices * domain_ranks / per_host));
    }
    return c;
}

uint32_t strata_hw_nccl_channels(const strata_hw *hw, uint32_t ranks)
{
    strata_nccl_arch arch;
    if (ranks < 2 || !strata_hw_nccl_arch(hw, &arch))
        return 0;
    strata_nccl_comm c = comm_of(hw, ranks, 0);
    return strata_nccl_comm_channels(&c);
}

/* NVLS's copy warps' loads (algo_nccl.c, the copy warps' pace): from the
 * rank's input, the default device memory's latency; from the NVLS
 * buffer, which the switch's multicast stores reach through the GPU's
 * on-chip cache a step or a few before the gather reads them (the
 * pipeline holds 8), that cache's (its first on-chip memory; the device
 * memory's without one). */
static void nvls_load_latencies(const strata_hw *hw, double *scatter_s, double *gather_s)
{
    const strata_memory_spec *dev = strata_hw_memory(hw, strata_hw_default_memory(hw));
    *scatter_s = *gather_s = dev->latency;
    for (uint32_t i = 0; i < strata_hw_memory_count(hw); i++) {
        const strata_memory_spec *m = strata_hw_memory(hw, i);
        if (m->kind == STRATA_MEM_ONCHIP && m->device == dev->device) {
            *gather_s = m->latency;
            return;
        }
    }
}


/* p2p_cts_s: what a network receive of a back-to-back p2p call waits for
 * its clear-to-send, on NCCL's own IB transport (docs/clusters.md, "The
 * receive's clear-to-send between p2p calls (wave 48)"). NVIDIA/nccl
 * v2.30.4-1 (1933fdd6): a GPU's p2p receives on one channel share one
 * proxy append point (src/transport/net.cc l. 1010, proxyAppend +
 * channelId), and ProxyAppend queues an op of another opCount (the next
 * call's) behind the running one as its nextPeer (src/proxy.cc l.
 * 440-449), which starts only when removeOp takes the running op off
 * (l. 737-746; progressOps l. 774-778), once every sub's steps are
 * consumed by the GPU (net.cc l. 1637-1663). Only then does the next
 * call's op post its irecv (net.cc l. 1512), whose ncclIbIrecv writes
 * the buffer's address into the sender's FIFO by an inline RDMA write
 * (src/transport/net_ib/p2p.cc l. 409-493,
 * ncclIbPostFifo l. 349-407); the sender's ncclIbIsend returns no request
 * until that entry is there (p2p.cc l. 275). So between two calls each
 * network part's data waits, beyond its step, one post of the receive
 * (NCCL's network overhead, src/graph/tuning.cc getNetOverhead l.
 * 222-227: 1 us on Intel x86, 2 on AMD; once, for one post, not l. 383's
 * x 3 for a Simple ring step) and the
 * FIFO entry's flight NIC to NIC (the route). A ring's receives post
 * their clear-to-send NCCL_STEPS ahead within one op, so NCCL's step
 * figure holds none. Over a network library the same order holds (it is
 * NCCL's proxy's), and the library's own clear-to-send decides
 * (strata_net_protocol_waits_ctrl): aws-ofi-nccl's RDMA write above its
 * eager size waits for the receive's control message as ncclIbIsend waits
 * for its FIFO entry (net_protocol.c; the post is NCCL's irecv into the
 * plugin, the flight the control message's); an eager message does not
 * wait, and rows whose larger messages are reads price their handshake
 * in their own flights (p2p_tune passes ctrl_ahead false). */
static double p2p_cts_s(const strata_nccl_comm *comm, double route_s)
{
    return strata_nccl_net_overhead_us(comm, STRATA_NCCL_LL) * 1e-6 + route_s;
}

/* An all-to-all: NCCL's p2p plan (nccl_p2p.h). A peer on the node gets
 * 2 x max(1, path bw / NVLink bw) channels (paths.cc ncclTopoGetNchannels),
 * the path's bandwidth read as the ring graph's (channels x per channel);
 * to a peer on the node the protocol is LL up to NCCL_P2P_LL_THRESHOLD a
 * channel, else Simple; to a peer on another node Simple at any size
 * (addP2pToPlan's LL needs the connection's LL buffer, which the network
 * transport's p2p connections have only with NCCL_ALLOC_P2P_NET_LL_BUFFERS
 * =1, default 0: nccl_p2p.h strata_nccl_p2p_ll_to, v2.25.1-1 to
 * v2.30.7-1). A step over the network costs NCCL's hwLatencies[NET][Ring]
 * [Simple] (tuning.cc: NCCL's figure for one step of a Simple transfer
 * through the proxy and the NIC, 14 us to 2.27; its model has no p2p
 * entry, and a p2p send crosses the same net transport's proxy progress
 * as a ring's Simple step: v2.27.7-1 src/transport/net.cc
 * sendProxyProgress l. 1108 and recvProxyProgress l. 1260, the p2p
 * connection (connIndex 1) only drawing its slots from the shared buffers,
 * l. 199, 241, 1146; the ring's row is the one per step, not per tree
 * level), less the route's share, as the collectives' (nccl_tune). The
 * result's protocol is the plan's on the node (Simple with one GPU a
 * node: every peer across). NCCL's model has no launch or base cost for
 * p2p work: none is charged. */
static void p2p_tune(const strata_hw *hw, const strata_nccl_comm *comm, uint32_t domain_ranks, uint64_t in_bytes,
                     strata_coll_tuning *out)
{
    const nccl_params *p = strata_hw_coll_params(hw);
    uint32_t links = (uint32_t)(comm->graph_channels * comm->channel_gbs / arch_rows[comm->arch].nvlink_link_gbs);
    strata_nccl_p2p plan;
    strata_nccl_comm even = *comm; /* the plan's nodes: whole ones, else one (nccl_p2p.h) */
    if (domain_ranks == 0 || comm->ranks % domain_ranks != 0)
        even.nodes = 1;
    strata_nccl_p2p_init(&even, 2 * MAX(1u, links), &plan);
    uint64_t per_peer = in_bytes / comm->ranks;
    bool ll = plan.local_ranks > 1 && strata_nccl_p2p_ll_to(&plan, per_peer, false);
    strata_nccl_proto proto = ll ? STRATA_NCCL_LL : STRATA_NCCL_SIMPLE;
    strata_hw_nics nics = {0};
    double route = strata_hw_network_nics(hw, &nics) ? 2 * nics.latency : 0;
    double net_us = comm->nodes > 1 ? comm->version->net_lat[STRATA_NCCL_RING][STRATA_NCCL_SIMPLE] : 0;
    /* a network step (net_protocol.h), its message a peer's part on one of its channels, at most a step */
    uint64_t msg = MIN(per_peer / MAX(1u, plan.per_peer), plan.step_bytes);
    double net_step_s = strata_net_protocol_step_s(comm->nodes > 1 ? p->net_proto : NULL, STRATA_NCCL_SIMPLE,
                                                   net_us * 1e-6, route, &nics, msg, false, 0);
    /* and the receive's clear-to-send after the call before, where the message waits for it (p2p_cts_s) */
    if (comm->nodes > 1 && strata_net_protocol_waits_ctrl(p->net_proto, msg))
        net_step_s += p2p_cts_s(comm, route);
    *out = (strata_coll_tuning){.algo = STRATA_NCCL_RING, .proto = proto, .channels = plan.per_peer,
                                .chunk_bytes = plan.step_bytes,
                                .net_step_s = net_step_s,
                                .net_flush_s = comm->nodes > 1 ? p->gdr_flush_s : 0,
                                .net_frame = p->frame, .net_mtu = p->mtu,
                                .simple_sync_s = proto == STRATA_NCCL_SIMPLE ? p->simple_sync : 0,
                                .p2p = plan, .host = p->host,
                                .simple_step_bytes = p->buffsize / STRATA_NCCL_STEPS};
    /* the kernel's grid: the channels the plan puts work on (v2.27.7-1
     * enqueue.cc l. 961, addP2pToPlan's channelMask |= 1 << channelId,
     * the kernel's mask in finishPlan l. 178), one work struct each */
    out->host.channels = MAX(1u, strata_nccl_p2p_used_channels(&plan, per_peer));
    /* nccl-tests' all-to-all: one ncclSend and one ncclRecv a rank, each enqueued by the host (coll_host.h) */
    out->host.calls = 2 * comm->ranks;
}

static bool nccl_tune(const strata_hw *hw, strata_op_kind kind, uint32_t ranks, uint32_t domain_ranks,
                      uint64_t in_bytes, uint32_t algos, strata_coll_tuning *out, GError **err)
{
    const nccl_params *p = strata_hw_coll_params(hw);
    strata_nccl_comm comm = comm_of(hw, ranks, domain_ranks);
    if (algos)
        comm.algos = algos;
    uint64_t n = comm.ranks;
    /* NCCL's size: an all-gather's OUT (n x IN), else IN */
    uint64_t bytes = kind == STRATA_OP_ALL_GATHER ? in_bytes * n : in_bytes;
    /* v2.19's table holds its rules across nodes for Volta and Ampere, not its all-to-all's (nccl_versions.h) */
    bool across = comm.version && comm.version->nodes_pre_hopper && p->arch < STRATA_NCCL_HOPPER &&
                  kind != STRATA_OP_ALL_TO_ALL;
    if (comm.version && comm.version->one_node && comm.nodes > 1 && !across) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "algo=nccl: nccl_version = %s models one node%s; expected the %u ranks in one scale-up domain, "
                    "got %u domains (its rules across nodes are not in strata's model)",
                    comm.version->name,
                    comm.version->nodes_pre_hopper ? " (across nodes: all-reduce, all-gather and reduce-scatter "
                                                     "of Volta or Ampere GPUs)" : "",
                    comm.ranks, comm.nodes);
        return false;
    }
    if (kind == STRATA_OP_ALL_TO_ALL) {
        p2p_tune(hw, &comm, domain_ranks, in_bytes, out);
        return true;
    }
    strata_nccl_choice ch;
    if (!strata_nccl_choose(&comm, kind, bytes, &ch)) {
        strata_nccl_unrun_error(err, "nccl", algos, kind, n);
        return false;
    }
    /* Across nodes, NCCL's hardware latency of a step over the network
     * (hwLatencies[NET]) is the whole step's: the route between two NICs
     * (two links of the network) carries part of it, the proxy's posting
     * and completing the transfer the rest, a fixed cost per step. The
     * network plugin's latency (nccl_net_latency, NCCL's latencyInter) is
     * not in it: aws-ofi-nccl's 75 us on p5 is a figure to steer NCCL's
     * choice (platform-aws.cpp), which the measured LL128 steps do not pay
     * (docs/clusters.md, "The network plugin's latency") */
    strata_hw_nics nics = {0};
    double route = strata_hw_network_nics(hw, &nics) ? 2 * nics.latency : 0;
    /* and, where the file's route stands for the network library's message
     * (EFA), NCCL's own ends of the step in its place; then the network
     * protocol's flights and copy beyond the route's one, by the size of a
     * step's message (net_protocol.h) */
    double net_step_s = strata_net_protocol_step_s(
        comm.nodes > 1 ? p->net_proto : NULL, ch.proto, ch.net_step_us * 1e-6, route, &nics,
        strata_net_protocol_nccl_message(ch.proto, ch.algo, bytes, comm.ranks, ch.run_channels,
                                         p->buffsize / STRATA_NCCL_STEPS),
        strata_net_protocol_ctrl_ahead(ch.algo),
        strata_net_protocol_nccl_runt_msgs(ch.algo, comm.ranks, comm.nodes, ch.run_channels));
    /* and the step's wait on the two ends' proxy passes, where the library
     * progresses only from NCCL's tests (nccl_proxy_pass.h; a test reads
     * each NIC of the plugin's group on aws-ofi-nccl's RDMA protocol) */
    net_step_s += strata_nccl_proxy_pass_step_s(p->net_proto, ch.proto, ch.algo, comm.ranks, comm.nodes,
                                                ch.run_channels, p->nic_group, p->gdr_flush_s > 0);
    /* and, on NCCL's own transport (no library row), the pace of a
     * connection's steps: on an all-reduce its proxy's work for every
     * connection it serves, on an all-gather or reduce-scatter ring one
     * post overhead a connection (nccl_proxy_floor.h) */
    double proxy_s = 0;
    if (comm.nodes > 1 && !p->net_proto)
        proxy_s = kind == STRATA_OP_ALL_REDUCE ? strata_nccl_proxy_floor_s(&comm, ch.proto, ch.algo, ch.run_channels)
                                               : strata_nccl_post_pace_s(&comm, ch.proto);
    /* The fixed cost: NCCL's base latency of the pair (tuning.cc
     * baseLatencies: the kernel launch and setup), and for NVLS and
     * NVLS_TREE, whose base is 0, their NVLink latency (hwLatencies[NVLINK],
     * 25 us), the whole of NVLS's fixed cost in NCCL's model. */
    *out = (strata_coll_tuning){.algo = ch.algo, .proto = ch.proto, .channels = ch.run_channels,
                                .chunk_bytes = ch.chunk_bytes, .ring_grain = ch.ring_grain_bytes,
                                .chan_lo = ch.chan_lo_bytes, .chan_mid = ch.chan_mid_bytes,
                                .nvls_efficiency = ch.nvls_efficiency,
                                .launch_s = (ch.base_us + ch.nvls_us) * 1e-6,
                                .net_step_s = net_step_s,
                                .simple_sync_s = ch.proto == STRATA_NCCL_SIMPLE ? p->simple_sync : 0,
                                .net_flush_s = comm.nodes > 1 && ch.proto == STRATA_NCCL_SIMPLE ? p->gdr_flush_s : 0,
                                .net_proxy_s = proxy_s,
                                .net_frame = p->frame, .net_mtu = p->mtu,
                                .heads = ch.heads, .stage_bw = ch.stage_gbs * 1e9,
                                .estimate_s = ch.time_us * 1e-6, .host = p->host,
                                .ring_own_channel = p->ring_own_channel,
                                .simple_step_bytes = p->buffsize / STRATA_NCCL_STEPS};
    /* the kernel's grid: the channels with work (plan->channelMask), one
     * work struct each (coll_host.h) */
    out->host.channels = ch.run_channels;
    if (p->mesh.channels && comm.nodes <= 1) { /* the mesh's rings, NCCL's graph channels in order */
        out->rings = p->mesh.rings;
        out->n_rings = p->mesh.channels;
        out->ring_len = p->mesh.gpus;
    }
    if (ch.algo == STRATA_NCCL_NVLS)
        nvls_load_latencies(hw, &out->nvls_scatter_lat_s, &out->nvls_gather_lat_s);
    return true;
}

const strata_coll_impl strata_coll_impl_nccl = {
    .name = "nccl",
    .keys = nccl_keys,
    .load = nccl_load,
    .pick = nccl_pick,
    .tune = nccl_tune,
};
