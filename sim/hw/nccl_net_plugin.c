/*
 * nccl_net_plugin.c: NCCL network plugins' rows (contract in
 * nccl_net_plugin.h).
 *
 * aws/aws-ofi-nccl, src/platform-aws.cpp, platform_data_map:
 *   - "p4d.24xlarge" (master @2daf7d30 l. 82-95; v1.16.3 @b9e4cc42 l.
 *     75-88, the same figures): latency 75.0, default_protocol SENDRECV,
 *     env NCCL_BUFFSIZE=8388608 and NCCL_P2P_NET_CHUNKSIZE=524288. SENDRECV
 *     shows NCCL each NIC as it is (src/nccl_ofi_sendrecv.cpp
 *     get_properties: the NIC's own port speed; no NIC groups, which are
 *     the RDMA protocol's): nic_group 1.
 *   - "p5/p5e" (v1.16.3 l. 147-162, regex "^p5(e?\\..*)"): latency 75.0,
 *     default_protocol RDMA, env NCCL_BUFFSIZE=8388608,
 *     NCCL_P2P_NET_CHUNKSIZE, NCCL_NVLSTREE_MAX_CHUNKSIZE and
 *     NCCL_NVLS_CHUNKSIZE 524288 (and NCCL_NET_FORCE_FLUSH=0: Hopper needs
 *     no flush in strata's model). RDMA groups the NICs that share a GPU's
 *     PCIe switch into one device and reports the first rail's speed x
 *     max_group_size (src/nccl_ofi_rdma.cpp get_properties): a p5 GPU's 4
 *     EFA NICs of 100 Gb/s (docs/clusters.md, "NICs as NCCL sees them").
 *   - "p4de.24xlarge" at tag v1.8.1-aws (src/platform-aws.c l. 40-47):
 *     latency 75.0; of the NCCL environment strata reads, that release
 *     sets only NCCL_NVLSTREE_MAX_CHUNKSIZE=524288, on every NVIDIA
 *     platform (platform_init, l. 428-445: "Setting this unconditionally";
 *     no NVLS on A100), not NCCL_BUFFSIZE nor NCCL_P2P_NET_CHUNKSIZE; it
 *     runs SENDRECV there (src/nccl_ofi_net.c l. 956-987: RDMA only where
 *     NICs outnumber GPUs; p4de has 4 for 8): nic_group 1.
 * Each row's net_protocol is its messages' protocol over EFA (net_protocol.c):
 * SENDRECV's one fi_tsend a message (src/nccl_ofi_sendrecv.cpp) runs
 * libfabric's EFA provider's eager and read-based protocols on CUDA memory
 * (efa-rdm-cuda); RDMA's eager copy and rendezvous write are its own
 * (aws-ofi-rdma).
 * NCCL_PROTO=simple on p4d (protos): at tag v1.13.2-aws src/platform-aws.c
 * configure_nccl_proto (l. 233-250) sets NCCL_PROTO=simple, without
 * overwrite, when the endpoint refuses FI_OPT_EFA_SENDRECV_IN_ORDER_ALIGNED_
 * 128_BYTES (SENDRECV, l. 621-625; the check l. 672-701): LL and LL128 poll
 * GPU memory for flags that only 128-byte in-order delivery makes safe.
 * rdma-core's EFA provider grants it only where the device reports
 * DATA_POLLING_128 (providers/efa/verbs.c efa_query_qp_data_in_order). p4d's
 * EFA does not: public p4d logs print "Setting FI_OPT_EFA_SENDRECV_IN_ORDER_
 * ALIGNED_128_BYTES not supported." then "Setting NCCL_PROTO to \"simple\""
 * (aws/aws-ofi-nccl issue #715, 1.11.0-aws, 2024-12-04; issue #889,
 * "SENDRECV (platform set)", 2025-05-22); AWS in issue #76 (2021-12-17):
 * "EFA doesn't support LL and LL128 variants". Not set on p5 (RDMA; PR
 * #280, 2023-09-29, stopped forcing it there). On p4de too: at tag
 * v1.8.1-aws platform-aws.c's configure_nccl_proto (l. 228-246) is called
 * (l. 628) wherever the endpoint refuses the option, p5 on RDMA the only
 * platform exempt (l. 593-602); p4de is p4d with 80 GB A100s on the same
 * 4 x 100 Gb/s EFA (AWS's P4 instance page), so its device refuses it as
 * p4d's does (wave 42's review; no p4de log read).
 * The environment is inserted without overwrite (platform-aws.cpp l. 585
 * insert_envvars; include/nccl_ofi_environ.h l. 40-50, 97-103): a run's
 * own setting wins.
 *
 * Every row's latency is a figure chosen to steer NCCL's choice, not a
 * measured delay: 150 us (40000971, 2022-01-24, "chosen by measuring all
 * reduce latency ... A few different values around this value were tried
 * to see which chose the correct algorithm"), 75 us from d87d61e0
 * (2023-05-31: "a value below 75us ... makes NCCL choose the wrong
 * algorithm for the 2 nodes case"). strata gives it to NCCL's choice only
 * (docs/clusters.md, "What one message costs over EFA").
 */
#include "hw/nccl_net_plugin.h"
#include <string.h>
#include <glib.h>
#include "core/named_rows.h"
#include "hw/nccl_tuning.h"

static const strata_nccl_net_plugin plugins[] = {
    {.name = "aws-ofi-p4d", .latency_s = 75e-6, .nic_group = 1, .buffsize = 8388608, .p2p_net_chunk = 524288,
     .net_protocol = "efa-rdm-cuda", .protos = 1u << STRATA_NCCL_SIMPLE},
    {.name = "aws-ofi-p5", .latency_s = 75e-6, .nic_group = 4, .buffsize = 8388608, .p2p_net_chunk = 524288,
     .nvls_chunk = 524288, .nvlstree_max = 524288, .net_protocol = "aws-ofi-rdma"},
    {.name = "aws-ofi-p4de-v1.8", .latency_s = 75e-6, .nic_group = 1, .nvlstree_max = 524288,
     .net_protocol = "efa-rdm-cuda", .protos = 1u << STRATA_NCCL_SIMPLE},
};

const strata_nccl_net_plugin *strata_nccl_net_plugin_find(const char *name)
{
    return strata_rows_find(plugins, G_N_ELEMENTS(plugins), sizeof plugins[0], name);
}

char *strata_nccl_net_plugin_list(void)
{
    return strata_rows_names(plugins, G_N_ELEMENTS(plugins), sizeof plugins[0]);
}
