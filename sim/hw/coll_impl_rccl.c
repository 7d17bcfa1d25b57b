/*
 * coll_impl_rccl.c: the rccl row of the collective implementations
 * (coll_impl.h): AMD's RCCL on Instinct GPUs joined by xGMI.
 *
 * Parameters: RCCL's ring graph (the rings of the topology model it
 * matched and the bandwidth of one: totalBw / nChannels, rome_models.cc
 * parseGraph), the model's rings themselves (`rccl_rings`, as its
 * ringBase writes them: "0 1 2 3 4 5 6 7|0 2 4 1 3 6 5 7|..."; across
 * nodes `rccl_net_rings`, the graph there: its count the channels, each
 * totalBw / count; without a treeBase the model's tree graph is the same
 * rings, so they are also the trees' chains), whether
 * the model enables MSCCL, the host CPU (the network's overhead across
 * nodes), the RCCL release (`rccl_version`, rccl_releases below: 2.22
 * takes the protocol across nodes by size, rccl_tuning.h), the GPUs'
 * architecture (`rccl_arch`) and whether the topology model enables LL128
 * (`rccl_ll128`), NCCL_ALGO / NCCL_PROTO as a run may set them, the process
 * layout with the host's time per communicator (coll_host.h), and the
 * time ROCm's runtime adds to every kernel launch where it reclaims
 * scratch memory per dispatch (`rccl_scratch_reclaim`, below), and the
 * receiver's GPUDirect flush of a Simple step across nodes
 * (`rccl_gdr_flush`, below).
 * pick: algo=rccl for all-reduce, all-gather, reduce-scatter and
 * all-to-all (ideal's choice for the others).
 * tune: what RCCL runs (rccl_tuning.h): an MSCCL algorithm, or the
 * algorithm, protocol and channels of its tuning model; its base latency
 * as the fixed cost; across nodes its network step's. An all-to-all:
 * MSCCL's all-to-all where RCCL runs it (rccl_tuning.h), else RCCL's
 * grouped sends and receives (ncclAllToAll_impl, src/collectives.cc
 * l. 77-112 @0cbce2a: its pivot kernel only where the topology model sets
 * pivotA2AEnabled, which no MI300X model does) in their p2p plan
 * (nccl_p2p.h, a plan with `rccl`; a2a_tune below).
 */
#include "hw/coll_impl.h"
#include <string.h>
#include "core/error.h"
#include "core/units.h"
#include "hw/hw_internal.h"
#include "hw/rccl_tuning.h"

/* RCCL's releases, oldest first; the last is the default (as nccl_version's
 * newest). 2.20: ROCm 6.2 (tag rocm-6.2.2, 2.20.5), its own tuning_model_5
 * (rccl_tuning.h), and no MSCCL on a communicator two of whose ranks share
 * a process: msccl_lifecycle.cc mscclSchedulerInit sets
 * comm->mscclCompatible = mscclCommCompatible(comm), false where two ranks
 * have the same host and pid hashes (one process driving several GPUs,
 * rccl-tests -g N), and mscclEnqueueCheck then falls back to RCCL's own
 * kernels; 2.21.5 "Enabled MSCCL for single-process multi-threaded
 * contexts" (CHANGELOG.md; @0cbce2a RCCL_MSCCL_ENABLE_SINGLE_PROCESS,
 * default 1, makes every communicator compatible). 2.21: ROCm/rccl
 * @0cbce2a (2.21.5, ROCm 6.3); 2.22: ROCm 6.4,
 * whose rccl_wrap.cc adds rcclUpdateCollectiveProtocol across nodes, and
 * from 2.22.3 for ROCm 6.4.2 LL128 on gfx942 (CHANGELOG.md); 2.26: ROCm
 * 7.0 (2.26.6), the first with gfx950 and LL128 on it (CHANGELOG.md "RCCL
 * 2.26.6 for ROCm 7.0.0": "Added new GPU target gfx950", "Enabled LL128
 * protocol on gfx950"), whose rccl_wrap.cc stretches LL128's all-reduce
 * range by 3.8 above 2 nodes (ROCm/rccl @00c78b7). ll128: the gfx94x
 * architectures that run LL128 there (bit per rccl_arches index).
 * mscclpp: MSCCL++'s all-reduce (rccl_tuning.h), from 2.21.5 ("MSCCL++
 * integration for specific contexts", CHANGELOG.md @0cbce2a), built by
 * default (CMakeLists.txt l. 29 ENABLE_MSCCLPP ON, install.sh l. 27) where
 * gfx942 is a target (l. 300-305) and on by default where built
 * (RCCL_MSCCLPP_ENABLE, src/init.cc l. 105-111); 2.22 and 2.26 are taken
 * as 2.21 (RCCL 2.27 for ROCm 7.1 turns it off by default: CHANGELOG.md). */
static const struct {
    const char *name;
    bool net_ranges, ll128_x38;
    uint32_t arches, ll128;
    strata_rccl_tuning5 tuning5; /* the release's tuning_model_5 row (rccl_tuning.h) */
    bool msccl_shared_process;   /* MSCCL where ranks share a process */
    bool gdr_flush; /* flushes every Simple step received by GPUDirect RDMA (rccl_gdr_flush below) */
    bool mscclpp;   /* MSCCL++'s all-reduce in a captured call (rccl_mscclpp below) */
} rccl_releases[] = {{"2.20", false, false, 1u, 0u, STRATA_RCCL_TUNING5_2_20, false, false, false},
                     {"2.21", false, false, 1u, 0u, STRATA_RCCL_TUNING5_2_21, true, true, true},
                     {"2.22", true, false, 1u, 1u, STRATA_RCCL_TUNING5_2_22, true, true, true},
                     {"2.26", true, true, 3u, 3u, STRATA_RCCL_TUNING5_2_26, true, true, true}};
/* rccl_arch: the GPUs' gcnArchName as RCCL's IsArchMatch reads it, and
 * the compute channels RCCL runs per ring of its graph on a whole node
 * (init.cc's allGather3Data nc, which ncclTopoPostset multiplies the graph's
 * channels by, up to 128 on one node and 64 across nodes): 2 by default
 * (ROCm/rccl @0cbce2a src/init.cc, AllGather3; gfx942 is raised only for
 * 2 or 4 ranks, as gfx950 is, which a slice below a node here does not
 * model: its graph is not the file's); gfx950 4 ("Inflate the nChannels a
 * bit to achieve higher b/w": 16 for 2 ranks on one node, 8 for 4, else
 * 4; ROCm/rocm-systems @006a440 projects/rccl/src/init.cc, the branch that
 * follows the gfx942 MI300A/MI300X one). RCCL 2.26.6 on 8 MI355X prints
 * "112 coll channels" for the 28 rings of its graph (Ahalperin/amd-dev
 * @58a032f results/scale_8gpu_all_reduce/nccl_debug.log, rank 0; graph.xml
 * nchannels="28"), where the factor 2 gave 56; over 2 nodes it prints 64
 * (results/scale_2x8gpu_all_reduce/nccl_debug.log), the cap.
 * p2p_xgmi4: the p2p plan's rule for a peer on the node, 4 channels a
 * peer per xGMI link (else 2) and p2pnChannelsPerPeer doubled when the
 * communicator is one node (graph/paths.cc ncclTopoGetNchannels and
 * ncclTopoComputeP2pChannels: IsArchMatch "gfx94" at @0cbce2a; "gfx942" or
 * "gfx950" in the later source, ROCm/rccl @ee2d4e4 and ROCm/rocm-systems
 * @0200157 projects/rccl/src/graph/paths.cc). RCCL 2.26.6 on 4 MI355X
 * prints "32 p2p channels, 8 p2p channels per peer" (Ahalperin/amd-dev
 * @58a032f results/scale_4gpu_alltoall/nccl_debug.log, rank 3's init):
 * 4 x 1 link, doubled, where the rule of 2 gives 2. So gfx950 takes it
 * from 2.26, its first release (the loader refuses it before).
 * tuning_6: RCCL's tuning model is tuning_model_6 (rccl_tuning.h): the
 * topology match sets it on gfx950 (ROCm/rccl @008c53d
 * src/graph/rome_models.cc parseA2a8P, parseRome4P2H: `if (IsArchMatch(
 * gcn, "gfx950")) system->tuning = 6` after the model's options), where
 * gfx942's models say tuning=5. RCCL 2.26.6's choices over 2 x 8 MI355X
 * (Ahalperin/amd-dev @58a032f results/scale_2x8gpu_all_reduce/
 * nccl_debug.log, "Found matching Rome model index 40": Tree Simple at 64
 * and 128 MiB, Ring Simple from 256 MiB to 8 GiB, 64 channels) agree with
 * tuning_model_6 as stored at 9e22c79 (9e22c79's own tuning_model_5,
 * 2.26's row, takes the ring from 128 MiB, where the log has the tree;
 * 2.21's and 2.22's rows keep the tree to 256 MiB). Like gfx942's tuning
 * 5, taken on every gfx950 run, where RCCL sets it only after a topology
 * match. */
static const struct {
    const char *name;
    uint32_t ring_copies;
    bool p2p_xgmi4, tuning_6;
} rccl_arches[] = {{"gfx942", 2, true, false}, {"gfx950", 4, true, true}};

#define MAX_RINGS 64u
#define MAX_RING_LEN 16u

/* The block load() reads (one allocation: the rings inline). */
typedef struct rccl_params {
    uint32_t channels;
    double channel_bandwidth; /* B/s */
    bool msccl, net_ranges; /* net_ranges: the release's (rccl_releases) */
    bool ll128, ll128_x38;  /* rccl_ll128 (checked against the release and arch), the release's stretch */
    strata_rccl_tuning5 tuning5;           /* the release's (rccl_releases) */
    bool msccl_shared_process;             /* the release's (rccl_releases) */
    bool gfx94;             /* rccl_arch is gfx942 (RCCL's IsArchMatch "gfx94") */
    bool p2p_xgmi4;         /* rccl_arch's p2p rule on the node (rccl_arches) */
    uint32_t ring_copies;   /* rccl_arch's compute channels per graph ring (rccl_arches) */
    bool tuning_6;          /* rccl_arch's tuning model is tuning_model_6 (rccl_arches) */
    strata_nccl_cpu cpu;
    uint32_t algos, protos;
    uint32_t n_rings, ring_len;
    uint8_t rings[MAX_RINGS * MAX_RING_LEN];
    uint32_t n_net_rings, net_ring_len; /* rccl_net_rings: the rings through the NICs */
    uint8_t net_rings[MAX_RINGS * MAX_RING_LEN];
    strata_coll_host host; /* rccl_ranks_per_process, _host_launch, _host_plan */
    double scratch_reclaim_s; /* rccl_scratch_reclaim: the runtime's time per launch (0: none) */
    double gdr_flush_s; /* rccl_gdr_flush where the release flushes, else 0 */
    bool mscclpp;       /* rccl_mscclpp and the release and arch run it (rccl_mscclpp below) */
} rccl_params;

/* rccl_mscclpp: RCCL was built with MSCCL++ and RCCL_MSCCLPP_ENABLE is not
 * 0 (default true; install.sh --disable-mscclpp: false). MSCCL++ runs
 * only where the release has it, the GPUs are gfx942 (src/init.cc l.
 * 2039: IsArchMatch "gfx94"; CMakeLists.txt builds it for gfx942 only),
 * the topology enables MSCCL (l. 2036: comm->topo->mscclEnabled, the
 * `msccl` key), no two ranks share a process (mscclppCommCompatible,
 * msccl_lifecycle.cc l. 91-93: allProcessHostsUnique, whatever
 * RCCL_MSCCL_ENABLE_SINGLE_PROCESS) and the call is captured into a graph
 * (`rccl_launch = graph`; l. 524); then MSCCL++'s kernel replaces RCCL's
 * (rccl_tuning.h), and its fixed cost is not RCCL's base latency but the
 * GPU's own for a kernel in a graph: the device's kernel_launch
 * ([compute] of the hardware file; mi300x.ini's 1.9 us, ESTIMATE there
 * from a HIP-graph kernel's time on MI300X). */

/* rccl_gdr_flush: RCCL's receive proxy flushes every Simple step it
 * receives across nodes by GPUDirect RDMA before it tells the GPU the step
 * is there. ROCm/rccl @0cbce2a (2.21.5): ncclTopoNeedFlush sets *flush = 1
 * on every HIP build (src/graph/paths.cc l. 456-467; added by c8d3543d,
 * "Add back missing net flush", #1376, 2024-10-15: the rocm-6.2.2 tag,
 * 2.20.5, has the HIP branch empty and flushes nothing), the receive side
 * keeps it where it uses GDR (src/transport/net.cc l. 250, 654); the
 * proxy's recvProxyProgress, once a received step's request completes,
 * calls the network's iflush on it where the protocol is Simple (net.cc
 * l. 1534-1566; GDRCopy's CPU read instead only under
 * NCCL_GDRCOPY_FLUSH_ENABLE=1, default 0), and writes the step's tail for
 * the GPU only when that request completes (l. 1577-1597). The IB
 * transport's iflush (src/transport/net_ib.cc ncclIbIflush l. 1904-1939)
 * posts an RDMA read of 1 byte of the received buffer into a host word on
 * a QP connected to itself (gpuFlush.qp, l. 1376-1391, one outstanding
 * read: max_rd_atomic 1, l. 1025): the NIC reads the GPU's memory across
 * PCIe, the proxy polls its completion. LL and LL128 steps are not
 * flushed (their flags travel with the data). 2.22 and 2.26 are taken as
 * 2.21 (their tags were not reachable here). Its time: ESTIMATE 2 us, one
 * RDMA read's round trip through the local NIC without the wire (the
 * proxy's post and doorbell, the NIC's fetch of the work request, its
 * PCIe read of the GPU's memory and write of the byte and the completion
 * to host memory, the proxy's poll), about a small RDMA read's latency as
 * perftest's ib_read_lat reports it for a NIC of this class; no public
 * figure of it on Pollara or MI300X was found. A file sets 0 where RCCL
 * runs without GPUDirect RDMA or with NCCL_GDR_FLUSH_DISABLE=1. */
#define RCCL_GDR_FLUSH_S 2e-6

/* rccl_scratch_reclaim: ROCm's runtime (ROCr) takes a dispatch's scratch
 * memory back after it when it needs more than its threshold, unless
 * HSA_NO_SCRATCH_RECLAIM=1 ("a scratch-use-once mechanism": ROCR-Runtime's
 * environment variables), so each RCCL launch pays for setting it up again. RCCL's own check of when
 * that happens (src/rccl_wrap.cc validHsaScratchEnvSetting, ROCm/rccl PR
 * #1867, 2025-08: it errors out where it does) is: HSA_NO_SCRATCH_RECLAIM
 * unset and, on gfx942, a HIP runtime before 6.4.43484 or CP MEC firmware
 * below 177 (gfx950: 24); before ROCm 6.4 it warns whenever the variable
 * is unset (PR #1683, rccl-tests PR #114). RCCL's tuning model has no such cost, and no public figure of it
 * on MI300X was found: a file sets it where its platform reclaims (a
 * measured fixed cost), 0 (the default) where it does not. */

static const strata_coll_impl_key rccl_keys[] = {
    {"rccl_channels", true, "collectives = rccl: the rings of RCCL's graph (its topology model's), 1 to 64"},
    {"rccl_channel_bandwidth", true, "collectives = rccl: the bandwidth of one ring of that graph"},
    {"rccl_rings", false, "collectives = rccl: the model's rings, each the ranks of a node in ring order, "
                          "separated by | (\"0 1 2 3|0 2 1 3\")"},
    {"rccl_net_rings", false, "collectives = rccl: the model's rings across nodes, each a node's ranks from its "
                              "first rank's NIC to its last's, separated by |, all of them (its channels across "
                              "nodes, sharing rccl_channels x rccl_channel_bandwidth; and its trees' chains)"},
    {"msccl", false, "collectives = rccl: true or false: RCCL's topology model enables MSCCL (default false)"},
    {"rccl_version", false, "collectives = rccl: the RCCL release whose choices apply, 2.20, 2.21, 2.22 or 2.26 (default 2.26)"},
    {"rccl_arch", false, "collectives = rccl: the GPUs' architecture, gfx942 (MI300X, MI325X; default) or gfx950 (MI355X; "
                         "RCCL 2.26 on)"},
    {"rccl_ll128", false, "collectives = rccl: true or false: RCCL's topology model enables LL128 (its ll128Enabled=1, or "
                          "RCCL_LL128_FORCE_ENABLE=1): LL128's protocol ranges across nodes (RCCL 2.22 on gfx942, 2.26 "
                          "on gfx950; default false)"},
    {"rccl_cpu", false, "collectives = rccl: the hosts' CPU, amd (default), intel or arm"},
    {"rccl_algo", false, "collectives = rccl: the algorithms RCCL may run (Ring,Tree; default: both)"},
    {"rccl_proto", false, "collectives = rccl: the protocols RCCL may run (LL,Simple; default: all)"},
    {"rccl_gdr_flush", false, "collectives = rccl: the receiver's GPUDirect flush of every Simple step it receives "
                              "across nodes (a 1-byte RDMA read of it through its NIC), 0 to 1 s (default 2us, "
                              "ESTIMATE; 0: no GPUDirect RDMA, or the flush disabled); RCCL 2.21 on"},
    {"rccl_mscclpp", false, "collectives = rccl: true or false: RCCL built with MSCCL++ and RCCL_MSCCLPP_ENABLE not 0 "
                            "(default true; false as install.sh --disable-mscclpp): its all-reduce of 32 B to 1 MiB "
                            "in a graph-captured call, one process a GPU, gfx942 with msccl (RCCL 2.21 on)"},
    {"rccl_scratch_reclaim", false, "collectives = rccl: the time ROCm's runtime adds to every RCCL kernel launch "
                                    "where it reclaims scratch per dispatch (HSA_NO_SCRATCH_RECLAIM unset with an "
                                    "older runtime or firmware), 0 to 1 s (default 0: none)"},
    STRATA_COLL_HOST_KEYS("rccl"),
    {NULL, false, NULL},
};

/* "0 1 2 3|0 2 1 3": rings of one length, each a permutation of 0..len-1,
 * into out (packed: ring r at r * len); false when malformed. */
static bool parse_rings(const char *v, uint8_t *out, uint32_t *n_out, uint32_t *len_out)
{
    char **rings = g_strsplit(v, "|", -1);
    uint32_t n = 0, ring_len = 0;
    bool ok = rings[0] != NULL;
    for (; ok && rings[n]; n++) {
        char **ranks = g_strsplit_set(g_strstrip(rings[n]), " \t", -1);
        uint32_t len = 0, seen = 0;
        for (char **r = ranks; ok && *r; r++) {
            uint64_t x = 0;
            if (!**r)
                continue;
            ok = n < MAX_RINGS && len < MAX_RING_LEN && strata_parse_u64(*r, &x, NULL) && x < MAX_RING_LEN &&
                 !(seen >> x & 1u);
            seen |= ok ? 1u << x : 0;
            if (ok) /* a 65th ring, or a 17th rank, would write past out */
                out[n * MAX_RING_LEN + len++] = (uint8_t)x;
        }
        g_strfreev(ranks);
        ok = ok && n < MAX_RINGS && len >= 2 && seen == (1u << len) - 1 && (n == 0 || len == ring_len);
        ring_len = len;
    }
    g_strfreev(rings);
    for (uint32_t r = 0; ok && r < n; r++)
        memmove(out + r * ring_len, out + r * MAX_RING_LEN, ring_len);
    *n_out = ok ? n : 0;
    *len_out = ok ? ring_len : 0;
    return ok;
}

/* A rings key, if there (false with err at its line when malformed). */
static bool get_rings(const hw_load_ctx *ctx, const char *group, const char *key, uint8_t *rings, uint32_t *n,
                      uint32_t *len, GError **err)
{
    char *v = hw_get_text(ctx, group, key);
    bool ok = !v || parse_rings(v, rings, n, len) ||
              hw_fail_value(ctx, err, group, key, "rings of ranks 0 .. N-1 (N from 2 to 16, the same in each "
                            "ring, at most 64 rings) separated by |, such as \"0 1 2 3|0 2 1 3\"", v);
    g_free(v);
    return ok;
}

/* rccl_version (default the newest), rccl_arch (default gfx942),
 * rccl_ll128 and rccl_gdr_flush into p: refused where the release has no
 * such architecture, or runs no LL128 on it; the flush only where the
 * release flushes. */
static bool get_release(const hw_load_ctx *ctx, const char *group, rccl_params *p, GError **err)
{
    char *v = hw_get_text(ctx, group, "rccl_version"), *arch = hw_get_text(ctx, group, "rccl_arch");
    size_t i = G_N_ELEMENTS(rccl_releases) - 1, a = 0;
    if (v)
        for (i = 0; i < G_N_ELEMENTS(rccl_releases) && strcmp(g_strstrip(v), rccl_releases[i].name) != 0; i++)
            ;
    if (arch)
        for (a = 0; a < G_N_ELEMENTS(rccl_arches) && strcmp(g_strstrip(arch), rccl_arches[a].name) != 0; a++)
            ;
    bool ok = i < G_N_ELEMENTS(rccl_releases) ||
              hw_fail_value(ctx, err, group, "rccl_version", "2.20, 2.21, 2.22 or 2.26", v);
    ok = ok && (a < G_N_ELEMENTS(rccl_arches) || hw_fail_value(ctx, err, group, "rccl_arch", "gfx942 or gfx950", arch));
    ok = ok && ((rccl_releases[i].arches >> a & 1u) ||
                hw_fail_value(ctx, err, group, "rccl_arch", "an architecture RCCL's release supports (gfx950: "
                              "rccl_version 2.26)", arch));
    ok = ok && hw_get_flag(ctx, group, "rccl_ll128", &p->ll128, err);
    ok = ok && (!p->ll128 || (rccl_releases[i].ll128 >> a & 1u) ||
                hw_fail_value(ctx, err, group, "rccl_ll128", "false: RCCL runs LL128 on gfx942 from rccl_version "
                              "2.22, on gfx950 from 2.26", "true"));
    p->net_ranges = ok && rccl_releases[i].net_ranges;
    p->ll128_x38 = ok && rccl_releases[i].ll128_x38;
    p->tuning5 = ok ? rccl_releases[i].tuning5 : STRATA_RCCL_TUNING5_2_22;
    p->msccl_shared_process = ok && rccl_releases[i].msccl_shared_process;
    if (ok) {
        char *refusal = g_strdup_printf("RCCL %s does not flush (from rccl_version 2.21): remove the key or name a "
                                        "later release", rccl_releases[i].name);
        ok = hw_get_gated_time(ctx, group, "rccl_gdr_flush", rccl_releases[i].gdr_flush, RCCL_GDR_FLUSH_S, refusal,
                               &p->gdr_flush_s, err);
        g_free(refusal);
    }
    p->gfx94 = ok && a == 0;
    bool mscclpp = true;
    ok = ok && hw_get_flag(ctx, group, "rccl_mscclpp", &mscclpp, err); /* absent: true */
    p->mscclpp = ok && mscclpp && rccl_releases[i].mscclpp && p->gfx94;
    p->ring_copies = ok ? rccl_arches[a].ring_copies : 2;
    p->p2p_xgmi4 = ok && rccl_arches[a].p2p_xgmi4;
    p->tuning_6 = ok && rccl_arches[a].tuning_6;
    g_free(v);
    g_free(arch);
    return ok;
}

/* A rings key's length against the node's ranks, domain: rings of another
 * length were taken and never used (rccl_tune takes a node's rings where
 * they have its ranks). A slice below one node (--set hardware.devices=N)
 * keeps the file's whole-node rings, unused as RCCL matches no model of
 * the whole node there: its collectives go in rank order. */
static bool check_ring_len(const hw_load_ctx *ctx, const char *group, const char *key, uint32_t len, uint32_t domain,
                           GError **err)
{
    if (!len || len == domain || (len > domain && strata_keyfile_overridden(ctx->k, "hardware", "devices")))
        return true;
    hw_fail(ctx, err, group, key, "expected rings of %u ranks, a node's (the devices [%s] joins: its domain, "
            "default all), got rings of %u, which no collective would use", domain, group, len);
    return false;
}

/* rccl_algo: NCCL's list (hw_coll_impl_list), of the algorithms this row runs, Ring and Tree (RCCL enables no
 * NVLS, NVLS_TREE or PAT here: named, each collective was refused at run time, and a file whose trace had none
 * was taken); a ^ list keeps of those the ones it does not name, and one that leaves neither is refused. */
static bool rccl_algos(const hw_load_ctx *ctx, const char *group, uint32_t *mask, GError **err)
{
    const uint32_t runs = 1u << STRATA_NCCL_RING | 1u << STRATA_NCCL_TREE;
    if (!hw_coll_impl_list(ctx, group, "rccl_algo", true, mask, err))
        return false;
    char *v = hw_get_text(ctx, group, "rccl_algo");
    if (v && g_strstrip(v)[0] == '^')
        *mask &= runs;
    bool ok = !v || (*mask && !(*mask & ~runs));
    if (!ok)
        hw_fail(ctx, err, group, "rccl_algo", "expected a list of Ring, Tree (the algorithms RCCL runs here), or ^ "
                "then those it leaves out, leaving one, got '%s'", v);
    g_free(v);
    return ok;
}

static void *rccl_load(const hw_load_ctx *ctx, const char *group, uint32_t domain, GError **err)
{
    rccl_params *p = g_new0(rccl_params, 1);
    bool ok = hw_get_count(ctx, group, "rccl_channels", 1, MAX_RINGS, 1, NULL, &p->channels, err) &&
              hw_get_bandwidth(ctx, group, "rccl_channel_bandwidth", &p->channel_bandwidth, err) &&
              hw_coll_impl_cpu(ctx, group, "rccl_cpu", STRATA_NCCL_AMD, &p->cpu, err) &&
              rccl_algos(ctx, group, &p->algos, err) &&
              hw_coll_impl_list(ctx, group, "rccl_proto", false, &p->protos, err) &&
              get_release(ctx, group, p, err) &&
              hw_get_time(ctx, group, "rccl_scratch_reclaim", &p->scratch_reclaim_s, err);
    ok = ok && hw_get_flag(ctx, group, "msccl", &p->msccl, err);
    ok = ok && get_rings(ctx, group, "rccl_rings", p->rings, &p->n_rings, &p->ring_len, err) &&
         check_ring_len(ctx, group, "rccl_rings", p->ring_len, domain, err) &&
         get_rings(ctx, group, "rccl_net_rings", p->net_rings, &p->n_net_rings, &p->net_ring_len, err) &&
         check_ring_len(ctx, group, "rccl_net_rings", p->net_ring_len, domain, err) &&
         hw_network_keys_unset(ctx, group, (const char *const[]){"rccl_net_rings", "rccl_cpu", NULL}, err) &&
         /* no stream op: with one user stream, uncaptured, RCCL skips both waits (tasks->numStreams == 1), and
          * hipExtLaunchKernel records doneEvent in the dispatch (rocm-5.7.0 to develop 2.21.5 src/enqueue.cc) */
         hw_coll_host_load(ctx, group, "rccl", 0, &p->host, err);
    if (!ok)
        g_clear_pointer(&p, g_free);
    return p;
}

static const char *rccl_pick(const strata_hw *hw, strata_op_kind kind, const strata_mesh *mesh, uint32_t mask)
{
    (void)hw;
    (void)mesh;
    (void)mask;
    return strata_coll_reducing(kind) || kind == STRATA_OP_ALL_TO_ALL ? "rccl" : NULL;
}

/* The GPU's own fixed cost of a kernel, where no RCCL latency prices it:
 * the device's kernel_launch (its first compute unit's; 0 where none),
 * the launch-to-start gap and first wave of a kernel (mi300x.ini: 1.9 us,
 * ESTIMATE from a HIP-graph kernel on MI300X). */
static double kernel_start_s(const strata_hw *hw)
{
    return strata_hw_compute_count(hw) ? strata_hw_compute(hw, 0)->kernel.kernel_launch : 0;
}

/* An all-to-all that MSCCL does not run: RCCL's p2p plan (nccl_p2p.h
 * strata_rccl_p2p_init) over the communicator's graph (c->graph_channels:
 * the node's rings, or across nodes those through the NICs). Its protocol
 * is the plan's for a peer on the node (LL for parts up to 16 KiB, else
 * Simple); a peer across the network is always sent Simple:
 * addP2pToPlan takes LL only where the connection has an LL buffer
 * (src/enqueue.cc l. 590 @0cbce2a: conn->buffs[NCCL_PROTO_LL] != nullptr),
 * and the network transport gives its shared p2p connections one only
 * under NCCL_ALLOC_P2P_NET_LL_BUFFERS=1 (src/transport/net.cc l. 764 and
 * 944; src/init.cc l. 880, default 0, and l. 1452), where the xGMI
 * transport's have all three. So a part across nodes moves Simple's bytes
 * (algo_rccl.c) and pays, besides the route, RCCL's Simple step across
 * the network (strata_rccl_p2p_net_step_us: the proxy posting the send,
 * the NIC's RDMA write, the receiver's proxy completing and flushing it,
 * net.cc l. 1534-1566), less the route's two NIC latencies, as the
 * collectives' network step (rccl_tune). RCCL's model has no p2p entry,
 * so no base latency prices the kernel (its collectives' baseLat holds
 * their kernel's launch and setup); the p2p kernel (the same
 * ncclDevKernel_Generic, one launch a group: ncclGroupEnd's doLaunches)
 * still starts on the GPU: its fixed cost is the device's kernel start
 * (kernel_start_s) and the runtime's scratch reclaim. The host uploads a
 * work to each channel the plan uses. */
static void a2a_tune(const strata_hw *hw, const rccl_params *p, const strata_rccl_comm *c, uint32_t domain_ranks,
                     double route_s, uint64_t in_bytes, strata_coll_tuning *out)
{
    strata_nccl_p2p plan; /* whole nodes, else one (nccl_p2p.h) */
    bool whole = domain_ranks && c->ranks % domain_ranks == 0;
    strata_rccl_p2p_init(c->ranks, whole ? c->nodes : 1, c->graph_channels, p->ring_copies, p->p2p_xgmi4, &plan);
    uint64_t per_peer = in_bytes / c->ranks;
    strata_nccl_proto proto = strata_nccl_p2p_ll(&plan, per_peer) ? STRATA_NCCL_LL : STRATA_NCCL_SIMPLE;
    double net_s = c->nodes > 1 ? MAX(0.0, strata_rccl_p2p_net_step_us(c) * 1e-6 - route_s) : 0;
    *out = (strata_coll_tuning){.algo = STRATA_NCCL_RING, .proto = proto, .channels = plan.per_peer,
                                .chunk_bytes = plan.step_bytes, .launch_s = kernel_start_s(hw) + p->scratch_reclaim_s,
                                .net_step_s = net_s,
                                .net_flush_s = c->nodes > 1 ? p->gdr_flush_s : 0, .p2p = plan, .host = p->host};
    out->host.channels = MAX(1u, strata_nccl_p2p_used_channels(&plan, per_peer));
}

static bool rccl_tune(const strata_hw *hw, strata_op_kind kind, uint32_t ranks, uint32_t domain_ranks,
                      uint64_t in_bytes, uint32_t algos, strata_coll_tuning *out, GError **err)
{
    const rccl_params *p = strata_hw_coll_params(hw);
    /* MSCCL runs on a communicator whose ranks share a process only from
     * RCCL 2.21 (rccl_releases) */
    bool msccl = p->msccl && (p->msccl_shared_process || p->host.ranks_per_process <= 1);
    strata_rccl_comm c = {.ranks = ranks, .graph_channels = p->channels, .channel_gbs = p->channel_bandwidth / 1e9,
                          .msccl = msccl, .cpu = p->cpu, .algos = algos ? algos : p->algos, .protos = p->protos,
                          .net_ranges = p->net_ranges, .ll128 = p->ll128, .ll128_x38 = p->ll128_x38,
                          .tuning5 = p->tuning5, .model_6 = p->tuning_6, .ring_copies = p->ring_copies,
                          .mscclpp = p->mscclpp && p->msccl && p->host.ranks_per_process <= 1 && p->host.graph};
    strata_hw_nics nics = {0};
    bool net = domain_ranks && domain_ranks < ranks && strata_hw_network_nics(hw, &nics);
    c.nodes = net ? (ranks + domain_ranks - 1) / domain_ranks : 1; /* the nodes the ranks span (comm_of's rule) */
    if (net && p->n_net_rings) { /* the graph across nodes: the model's rings through the NICs, each
                                  * totalBw / nChannels (parseGraph) */
        c.graph_channels = p->n_net_rings;
        c.channel_gbs = p->channels * c.channel_gbs / p->n_net_rings;
    }
    uint64_t bytes = kind == STRATA_OP_ALL_GATHER ? in_bytes * ranks : in_bytes;
    strata_rccl_choice ch;
    bool chosen = strata_rccl_choose(&c, kind, bytes, &ch);
    if (!chosen && kind == STRATA_OP_ALL_TO_ALL) { /* not MSCCL's: the grouped p2p */
        a2a_tune(hw, p, &c, domain_ranks, 2 * nics.latency, in_bytes, out);
        return true;
    }
    if (!chosen) {
        strata_nccl_unrun_error(err, "rccl", algos, kind, ranks);
        return false;
    }
    /* the model's rings: a node's, or across nodes those through the NICs */
    const uint8_t *model = net ? p->net_rings : p->rings;
    uint32_t n_rings = net ? p->n_net_rings : p->n_rings, len = net ? p->net_ring_len : p->ring_len;
    bool rings = n_rings && len == (net ? domain_ranks : ranks);
    /* The fixed cost: RCCL's base latency of the protocol (the kernel's
     * launch and setup; MSCCL's kernels ESTIMATE the same), MSCCL++'s
     * kernel the GPU's own start in a graph (rccl_mscclpp above), and the
     * runtime's scratch reclaim, if any; a network step pays RCCL's
     * latency for it less the route's (two links) */
    double start_s = ch.mscclpp ? kernel_start_s(hw) : ch.base_us * 1e-6;
    *out = (strata_coll_tuning){.algo = ch.algo, .proto = ch.proto, .channels = ch.channels, .msccl = ch.msccl,
                                .launch_s = start_s + p->scratch_reclaim_s, .estimate_s = ch.time_us * 1e-6,
                                .net_step_s = MAX(0.0, ch.net_step_us * 1e-6 - 2 * nics.latency),
                                .net_flush_s = net && ch.proto == STRATA_NCCL_SIMPLE ? p->gdr_flush_s : 0,
                                .rings = rings ? model : NULL, .n_rings = rings ? n_rings : 0,
                                .ring_len = rings ? len : 0, .host = p->host};
    out->host.channels = ch.channels; /* the kernel's grid: one work struct each (coll_host.h) */
    return true;
}

const strata_coll_impl strata_coll_impl_rccl = {
    .name = "rccl",
    .keys = rccl_keys,
    .load = rccl_load,
    .pick = rccl_pick,
    .tune = rccl_tune,
};
