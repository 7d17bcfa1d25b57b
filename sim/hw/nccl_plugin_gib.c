/*
 * nccl_plugin_gib.c: Google's gIB tuner tables (contract in
 * nccl_plugin_gib.h).
 *
 * Sources:
 *   [env]   GoogleCloudPlatform/cluster-toolkit @1047080
 *           examples/machine-learning/a3-ultragpu-8g/nemo-framework/
 *           Dockerfile l. 29-40, "Set the following to match what is in
 *           /usr/local/gib/scripts/set_nccl_env.sh": NCCL_NET=gIB, ...,
 *           NCCL_IB_QPS_PER_CONNECTION=4, NCCL_TUNER_CONFIG_PATH=
 *           /usr/local/gib/configs/tuner_config_a3u.txtpb; A4's recipes
 *           set tuner_config_a4.txtpb (AI-Hypercomputer/gpu-recipes
 *           @2e1fd5e src/helm-charts/a4/jobset/templates/
 *           workload-jobset.yaml l. 273).
 *   [a3u], [a4]  the tables themselves, as apple/axlearn @34aed43 ships
 *           Google's files beside the same environment
 *           (axlearn/cloud/gcp/jobset_utils.py l. 1736-1751, 1841-1855):
 *           axlearn/cloud/gcp/nccl/a3_ultra/tuner_config.txtpb (1035
 *           lines) and a4_high/tuner_config.txtpb (779 lines), both
 *           committed 2025-04-29 (49aea2a4). ESTIMATE: the gIB images of
 *           the public runs (May to July 2025) carry these rules for the
 *           communicators they run; a later image "includes updated tuner
 *           configs for larger clusters" (apple/axlearn#1265, June 2025,
 *           not merged).
 *   [a3m]   A3 Mega's (GPUDirect-TCPXO) table, "Default A3+ tuning
 *           configuration": apple/axlearn @34aed43
 *           axlearn/cloud/gcp/nccl/a3_mega/tuner_config.txtpb (109 lines,
 *           committed 2025-04-28, 49aea2a4), which jobset_utils.py
 *           l. 1616-1617 loads beside NCCL_ALGO=Ring,Tree,
 *           NCCL_PROTO=Simple, NCCL_MIN_NCHANNELS=4 (l. 1615-1625): the
 *           settings of TCPXO's nccl-env-profile.sh, whose table is
 *           a3plus_tuner_config.textproto (GoogleCloudPlatform/
 *           container-engine-accelerators gpudirect-tcpxo/README.md).
 *           ESTIMATE: the same rules as that file. Its 8-rank rules give
 *           no num_channel (0 below: NCCL's own, nccl_plugin_gib.h).
 *           Not the LL128 profile's a3plus_tuner_config_ll128.textproto,
 *           which no public copy was found of.
 * The rows below are the files' rules in their order, one line a rule:
 * nodes [min, max), ranks per node [min, max), type, per-rank bytes [min,
 * max), algorithm, protocol, num_channel; a max of 0 is the file's
 * missing max (unbounded).
 */
#include "hw/nccl_plugin_gib.h"
#include <glib.h>

typedef enum { AR = 0, AG, RS, DEF } coll;

typedef struct rule {
    uint32_t nmin, nmax, rmin, rmax;
    coll type;
    uint64_t bmin, bmax;
    strata_nccl_algo algo;
    strata_nccl_proto proto;
    uint32_t channels;
} rule;

#define T STRATA_NCCL_TREE
#define R STRATA_NCCL_RING
#define NT STRATA_NCCL_NVLS_TREE
#define P STRATA_NCCL_PAT
#define LL STRATA_NCCL_LL
#define LL128 STRATA_NCCL_LL128
#define SI STRATA_NCCL_SIMPLE

/* [a3u] */
static const rule a3u[] = {
    {2, 3, 8, 0, AR, 0, 8192, T, LL, 8},
    {2, 3, 8, 0, AR, 8192, 32768, T, LL, 16},
    {2, 3, 8, 0, AR, 32768, 131072, T, LL128, 16},
    {2, 3, 8, 0, AR, 131072, 0, NT, SI, 16},
    {2, 3, 8, 0, DEF, 0, 8192, R, LL, 2},
    {2, 3, 8, 0, DEF, 8192, 65536, R, LL, 8},
    {2, 3, 8, 0, DEF, 65536, 16777216, R, LL128, 16},
    {2, 3, 8, 0, DEF, 16777216, 0, R, SI, 16},
    {2, 3, 1, 2, AR, 0, 16384, T, LL, 2},
    {2, 3, 1, 2, AR, 16384, 65536, T, LL, 4},
    {2, 3, 1, 2, AR, 65536, 524288, R, LL128, 4},
    {2, 3, 1, 2, AR, 524288, 4194304, R, LL128, 8},
    {2, 3, 1, 2, AR, 4194304, 67108864, R, SI, 8},
    {2, 3, 1, 2, AR, 67108864, 0, T, SI, 4},
    {2, 3, 1, 2, DEF, 0, 65536, R, LL, 2},
    {2, 3, 1, 2, DEF, 65536, 524288, R, LL128, 4},
    {2, 3, 1, 2, DEF, 524288, 4194304, R, LL128, 8},
    {2, 3, 1, 2, DEF, 4194304, 0, R, SI, 8},
    {3, 5, 8, 0, AR, 0, 512, T, LL, 8},
    {3, 5, 8, 0, AR, 512, 8192, T, LL, 16},
    {3, 5, 8, 0, AR, 8192, 131072, T, LL128, 16},
    {3, 5, 8, 0, AR, 131072, 4194304, NT, SI, 16},
    {3, 5, 8, 0, AR, 4194304, 8388608, R, LL128, 16},
    {3, 5, 8, 0, AR, 8388608, 0, R, SI, 16},
    {3, 5, 8, 0, DEF, 0, 8192, R, LL, 2},
    {3, 5, 8, 0, DEF, 8192, 65536, R, LL, 8},
    {3, 5, 8, 0, DEF, 65536, 16777216, R, LL128, 16},
    {3, 5, 8, 0, DEF, 16777216, 0, R, SI, 16},
    {3, 5, 1, 2, AG, 0, 16384, R, LL, 2},
    {3, 5, 1, 2, AG, 16384, 262144, P, SI, 2},
    {3, 5, 1, 2, AG, 262144, 524288, P, SI, 4},
    {3, 5, 1, 2, AG, 524288, 1048576, P, SI, 8},
    {3, 5, 1, 2, AG, 1048576, 67108864, R, SI, 4},
    {3, 5, 1, 2, AG, 67108864, 268435456, R, LL128, 8},
    {3, 5, 1, 2, AG, 268435456, 0, R, SI, 8},
    {3, 5, 1, 2, AR, 0, 8192, T, LL, 1},
    {3, 5, 1, 2, AR, 8192, 131072, T, LL128, 4},
    {3, 5, 1, 2, AR, 131072, 1048576, R, LL128, 4},
    {3, 5, 1, 2, AR, 1048576, 8388608, R, SI, 4},
    {3, 5, 1, 2, AR, 8388608, 1073741824, R, SI, 8},
    {3, 5, 1, 2, AR, 1073741824, 0, R, SI, 4},
    {3, 5, 1, 2, RS, 0, 65536, R, LL, 2},
    {3, 5, 1, 2, RS, 65536, 262144, P, SI, 2},
    {3, 5, 1, 2, RS, 262144, 1048576, R, LL128, 4},
    {3, 5, 1, 2, RS, 1048576, 2097152, R, LL128, 8},
    {3, 5, 1, 2, RS, 2097152, 4194304, R, SI, 4},
    {3, 5, 1, 2, RS, 4194304, 0, R, SI, 8},
    {5, 9, 8, 0, AR, 0, 512, T, LL, 8},
    {5, 9, 8, 0, AR, 512, 4096, T, LL, 16},
    {5, 9, 8, 0, AR, 4096, 524288, T, LL128, 16},
    {5, 9, 8, 0, AR, 524288, 16777216, NT, SI, 16},
    {5, 9, 8, 0, AR, 16777216, 0, R, SI, 16},
    {5, 9, 8, 0, DEF, 0, 8192, R, LL, 2},
    {5, 9, 8, 0, DEF, 8192, 65536, R, LL, 8},
    {5, 9, 8, 0, DEF, 65536, 16777216, R, LL128, 16},
    {5, 9, 8, 0, DEF, 16777216, 0, R, SI, 16},
    {5, 9, 1, 2, AG, 0, 2048, R, LL, 2},
    {5, 9, 1, 2, AG, 2048, 131072, P, SI, 1},
    {5, 9, 1, 2, AG, 131072, 262144, P, SI, 2},
    {5, 9, 1, 2, AG, 262144, 524288, P, SI, 4},
    {5, 9, 1, 2, AG, 524288, 1048576, R, LL128, 4},
    {5, 9, 1, 2, AG, 1048576, 4194304, R, SI, 4},
    {5, 9, 1, 2, AG, 4194304, 0, R, SI, 8},
    {5, 9, 1, 2, AR, 0, 4096, T, LL, 2},
    {5, 9, 1, 2, AR, 4096, 131072, T, LL128, 4},
    {5, 9, 1, 2, AR, 131072, 262144, T, LL128, 8},
    {5, 9, 1, 2, AR, 262144, 1048576, R, LL128, 4},
    {5, 9, 1, 2, AR, 1048576, 0, R, SI, 4},
    {5, 9, 1, 2, RS, 0, 16384, R, LL, 2},
    {5, 9, 1, 2, RS, 16384, 262144, P, SI, 2},
    {5, 9, 1, 2, RS, 262144, 524288, P, SI, 4},
    {5, 9, 1, 2, RS, 524288, 2097152, R, LL128, 4},
    {5, 9, 1, 2, RS, 2097152, 0, R, SI, 8},
    {9, 17, 8, 0, AR, 0, 512, T, LL, 8},
    {9, 17, 8, 0, AR, 512, 4096, T, LL, 16},
    {9, 17, 8, 0, AR, 4096, 262144, T, LL128, 16},
    {9, 17, 8, 0, AR, 262144, 4194304, NT, SI, 8},
    {9, 17, 8, 0, AR, 4194304, 16777216, NT, SI, 16},
    {9, 17, 8, 0, AR, 16777216, 0, R, SI, 16},
    {9, 17, 8, 0, DEF, 0, 8192, R, LL, 2},
    {9, 17, 8, 0, DEF, 8192, 65536, R, LL, 8},
    {9, 17, 8, 0, DEF, 65536, 16777216, R, LL128, 16},
    {9, 17, 8, 0, DEF, 16777216, 0, R, SI, 16},
    {9, 17, 1, 2, AG, 0, 131072, P, SI, 1},
    {9, 17, 1, 2, AG, 131072, 262144, P, SI, 2},
    {9, 17, 1, 2, AG, 262144, 524288, P, SI, 4},
    {9, 17, 1, 2, AG, 524288, 1048576, P, SI, 8},
    {9, 17, 1, 2, AG, 1048576, 0, R, SI, 4},
    {9, 17, 1, 2, AR, 0, 512, T, LL, 2},
    {9, 17, 1, 2, AR, 512, 4096, T, LL, 4},
    {9, 17, 1, 2, AR, 4096, 65536, T, LL128, 4},
    {9, 17, 1, 2, AR, 65536, 262144, T, LL128, 8},
    {9, 17, 1, 2, AR, 262144, 1048576, R, LL128, 4},
    {9, 17, 1, 2, AR, 1048576, 0, R, SI, 4},
    {9, 17, 1, 2, RS, 0, 65536, P, SI, 1},
    {9, 17, 1, 2, RS, 65536, 131072, P, SI, 2},
    {9, 17, 1, 2, RS, 131072, 1048576, P, SI, 4},
    {9, 17, 1, 2, RS, 1048576, 0, R, SI, 4},
    {17, 0, 8, 0, AR, 0, 128, T, LL, 8},
    {17, 0, 8, 0, AR, 128, 1024, T, LL, 16},
    {17, 0, 8, 0, AR, 1024, 131072, T, LL128, 16},
    {17, 0, 8, 0, AR, 131072, 524288, NT, SI, 8},
    {17, 0, 8, 0, AR, 524288, 2097152, NT, SI, 16},
    {17, 0, 8, 0, AR, 2097152, 4194304, NT, SI, 8},
    {17, 0, 8, 0, AR, 4194304, 8388608, R, LL128, 16},
    {17, 0, 8, 0, AR, 8388608, 0, R, SI, 16},
    {17, 0, 8, 0, DEF, 0, 8192, R, LL, 2},
    {17, 0, 8, 0, DEF, 8192, 65536, R, LL, 8},
    {17, 0, 8, 0, DEF, 65536, 16777216, R, LL128, 16},
    {17, 0, 8, 0, DEF, 16777216, 0, R, SI, 16},
    {17, 0, 1, 2, AG, 0, 32768, P, SI, 1},
    {17, 0, 1, 2, AG, 32768, 65536, P, SI, 2},
    {17, 0, 1, 2, AG, 65536, 1048576, P, SI, 4},
    {17, 0, 1, 2, AG, 1048576, 2097152, R, LL128, 4},
    {17, 0, 1, 2, AG, 2097152, 0, R, SI, 4},
    {17, 0, 1, 2, AR, 0, 256, T, LL, 2},
    {17, 0, 1, 2, AR, 256, 2048, T, LL, 4},
    {17, 0, 1, 2, AR, 2048, 32768, T, LL128, 4},
    {17, 0, 1, 2, AR, 32768, 262144, T, LL128, 8},
    {17, 0, 1, 2, AR, 262144, 2097152, R, LL128, 4},
    {17, 0, 1, 2, AR, 2097152, 0, R, SI, 4},
    {17, 0, 1, 2, RS, 0, 32768, P, SI, 1},
    {17, 0, 1, 2, RS, 32768, 65536, P, SI, 2},
    {17, 0, 1, 2, RS, 65536, 524288, P, SI, 4},
    {17, 0, 1, 2, RS, 524288, 2097152, R, LL128, 4},
    {17, 0, 1, 2, RS, 2097152, 0, R, SI, 4},
};

/* [a4]: its comments name the communicators "2 nodes 1 rank", "2 nodes
 * 4-8 ranks", ... "32 nodes 4-8 ranks" */
static const rule a4[] = {
    {2, 3, 1, 2, AR, 0, 65536, T, LL, 8},
    {2, 3, 1, 2, AR, 65536, 1048576, R, LL128, 4},
    {2, 3, 1, 2, AR, 1048576, 0, R, SI, 8},
    {2, 3, 1, 2, DEF, 0, 65536, R, LL, 8},
    {2, 3, 1, 2, DEF, 65536, 4194304, R, LL128, 8},
    {2, 3, 1, 2, DEF, 4194304, 0, R, SI, 8},
    {2, 3, 4, 9, AR, 0, 16384, T, LL, 8},
    {2, 3, 4, 9, AR, 16384, 4194304, T, LL128, 32},
    {2, 3, 4, 9, AR, 4194304, 0, NT, SI, 32},
    {2, 3, 4, 9, DEF, 0, 262144, R, LL, 8},
    {2, 3, 4, 9, DEF, 262144, 1048576, R, LL128, 16},
    {2, 3, 4, 9, DEF, 1048576, 16777216, R, LL128, 32},
    {2, 3, 4, 9, DEF, 16777216, 0, R, SI, 32},
    {3, 5, 1, 2, AR, 0, 16384, T, LL, 8},
    {3, 5, 1, 2, AR, 16384, 1048576, R, LL128, 4},
    {3, 5, 1, 2, AR, 1048576, 0, R, SI, 4},
    {3, 5, 1, 2, DEF, 0, 65536, R, LL, 8},
    {3, 5, 1, 2, DEF, 65536, 131072, P, SI, 1},
    {3, 5, 1, 2, DEF, 131072, 262144, P, SI, 2},
    {3, 5, 1, 2, DEF, 262144, 524288, P, SI, 4},
    {3, 5, 1, 2, DEF, 524288, 1048576, P, SI, 8},
    {3, 5, 1, 2, DEF, 1048576, 4194304, R, SI, 4},
    {3, 5, 1, 2, DEF, 4194304, 0, R, SI, 8},
    {3, 5, 4, 9, AR, 0, 8192, T, LL, 8},
    {3, 5, 4, 9, AR, 8192, 16777216, T, LL128, 32},
    {3, 5, 4, 9, AR, 16777216, 0, R, SI, 16},
    {3, 5, 4, 9, DEF, 0, 131072, R, LL, 8},
    {3, 5, 4, 9, DEF, 131072, 1048576, R, LL128, 16},
    {3, 5, 4, 9, DEF, 1048576, 16777216, R, LL128, 32},
    {3, 5, 4, 9, DEF, 16777216, 0, R, SI, 16},
    {5, 9, 1, 2, AR, 0, 1024, T, LL, 2},
    {5, 9, 1, 2, AR, 1024, 8192, T, LL, 4},
    {5, 9, 1, 2, AR, 8192, 65536, T, LL128, 4},
    {5, 9, 1, 2, AR, 65536, 262144, T, LL128, 8},
    {5, 9, 1, 2, AR, 262144, 1048576, R, LL128, 4},
    {5, 9, 1, 2, AR, 1048576, 0, R, SI, 4},
    {5, 9, 1, 2, DEF, 0, 8192, P, SI, 1},
    {5, 9, 1, 2, DEF, 8192, 262144, P, SI, 2},
    {5, 9, 1, 2, DEF, 262144, 524288, P, SI, 4},
    {5, 9, 1, 2, DEF, 524288, 1048576, P, SI, 8},
    {5, 9, 1, 2, DEF, 1048576, 4194304, R, SI, 4},
    {5, 9, 1, 2, DEF, 4194304, 0, R, SI, 8},
    {5, 9, 4, 9, AR, 0, 2048, T, LL, 8},
    {5, 9, 4, 9, AR, 2048, 16777216, T, LL128, 32},
    {5, 9, 4, 9, AR, 16777216, 0, R, SI, 16},
    {5, 9, 4, 9, DEF, 0, 131072, R, LL, 8},
    {5, 9, 4, 9, DEF, 131072, 2097152, R, LL128, 16},
    {5, 9, 4, 9, DEF, 2097152, 16777216, R, LL128, 32},
    {5, 9, 4, 9, DEF, 33554432, 0, R, SI, 16},
    {9, 17, 1, 2, AR, 0, 128, T, LL, 1},
    {9, 17, 1, 2, AR, 128, 1024, T, LL, 2},
    {9, 17, 1, 2, AR, 1024, 4096, T, LL, 8},
    {9, 17, 1, 2, AR, 4096, 32768, T, LL128, 4},
    {9, 17, 1, 2, AR, 32768, 262144, T, LL128, 8},
    {9, 17, 1, 2, AR, 262144, 2097152, R, LL128, 8},
    {9, 17, 1, 2, AR, 2097152, 0, R, SI, 4},
    {9, 17, 1, 2, DEF, 0, 512, P, SI, 1},
    {9, 17, 1, 2, DEF, 512, 262144, P, SI, 2},
    {9, 17, 1, 2, DEF, 262144, 1048576, P, SI, 4},
    {9, 17, 1, 2, DEF, 1048576, 0, R, SI, 4},
    {9, 17, 4, 9, AR, 0, 1024, T, LL, 8},
    {9, 17, 4, 9, AR, 1024, 8192, T, LL128, 16},
    {9, 17, 4, 9, AR, 8192, 4194304, T, LL128, 32},
    {9, 17, 4, 9, AR, 4194304, 16777216, R, LL128, 32},
    {9, 17, 4, 9, AR, 16777216, 0, R, SI, 16},
    {9, 17, 4, 9, DEF, 0, 131072, R, LL, 8},
    {9, 17, 4, 9, DEF, 131072, 2097152, R, LL128, 16},
    {9, 17, 4, 9, DEF, 2097152, 16777216, R, LL128, 32},
    {9, 17, 4, 9, DEF, 16777216, 0, R, SI, 16},
    {17, 33, 1, 2, AR, 0, 2048, T, LL, 1},
    {17, 33, 1, 2, AR, 2048, 32768, T, LL128, 4},
    {17, 33, 1, 2, AR, 32768, 524288, T, LL128, 8},
    {17, 33, 1, 2, AR, 524288, 2097152, R, LL128, 8},
    {17, 33, 1, 2, AR, 2097152, 0, R, SI, 4},
    {17, 33, 1, 2, DEF, 0, 32768, P, SI, 1},
    {17, 33, 1, 2, DEF, 32768, 65536, P, SI, 2},
    {17, 33, 1, 2, DEF, 65536, 1048576, P, SI, 4},
    {17, 33, 1, 2, DEF, 1048576, 0, R, SI, 4},
    {17, 33, 4, 9, AR, 0, 512, T, LL, 8},
    {17, 33, 4, 9, AR, 512, 65536, T, LL128, 16},
    {17, 33, 4, 9, AR, 65536, 524288, T, LL128, 32},
    {17, 33, 4, 9, AR, 524288, 4194304, NT, SI, 16},
    {17, 33, 4, 9, AR, 4194304, 16777216, R, LL128, 32},
    {17, 33, 4, 9, AR, 16777216, 0, R, SI, 16},
    {17, 33, 4, 9, DEF, 0, 65536, R, LL, 8},
    {17, 33, 4, 9, DEF, 65536, 2097152, R, LL128, 16},
    {17, 33, 4, 9, DEF, 2097152, 16777216, R, LL128, 32},
    {17, 33, 4, 9, DEF, 16777216, 0, R, SI, 16},
};

/* [a3m]: "2-node rail-aligned config" (1 rank a node), "2-node 8 ranks per
 * node case", "small scale(3-6 node) 8 ranks per node case" */
static const rule a3m[] = {
    {2, 3, 1, 2, AR, 0, 0, T, SI, 2},
    {2, 3, 1, 2, DEF, 0, 65536, R, SI, 2},
    {2, 3, 1, 2, DEF, 65536, 0, R, SI, 4},
    {2, 3, 8, 0, AR, 0, 0, T, SI, 0},
    {2, 3, 8, 0, DEF, 0, 0, R, SI, 0},
    {3, 7, 8, 0, AR, 0, 2097152, T, SI, 0},
    {3, 7, 8, 0, DEF, 0, 0, R, SI, 0},
};

static bool in(uint64_t x, uint64_t min, uint64_t max) { return x >= min && (max == 0 || x < max); }

static coll type_of(strata_op_kind kind)
{
    switch (kind) {
    case STRATA_OP_ALL_REDUCE:
        return AR;
    case STRATA_OP_ALL_GATHER:
        return AG;
    case STRATA_OP_REDUCE_SCATTER:
        return RS;
    default:
        return DEF;
    }
}

uint32_t strata_gib_ranks_per_node(uint32_t ranks, uint32_t nodes) { return ranks / (nodes ? nodes : 1); }

bool strata_gib_rule(strata_gib_table t, uint32_t nodes, uint32_t ranks_per_node, strata_op_kind kind,
                     uint64_t per_rank, strata_nccl_algo *algo, strata_nccl_proto *proto, uint32_t *channels)
{
    if (t == STRATA_GIB_NONE)
        return false;
    const rule *rules = t == STRATA_GIB_A3U ? a3u : t == STRATA_GIB_A4 ? a4 : a3m;
    size_t n = t == STRATA_GIB_A3U ? G_N_ELEMENTS(a3u) : t == STRATA_GIB_A4 ? G_N_ELEMENTS(a4) : G_N_ELEMENTS(a3m);
    coll want = type_of(kind);
    /* the communicator config's rules of the collective's type, or its
     * COLL_DEFAULT ones where it has none of that type */
    bool typed = false;
    for (size_t i = 0; i < n && !typed; i++)
        typed = in(nodes, rules[i].nmin, rules[i].nmax) && in(ranks_per_node, rules[i].rmin, rules[i].rmax) &&
                rules[i].type == want;
    if (!typed)
        want = DEF;
    for (size_t i = 0; i < n; i++) {
        const rule *r = &rules[i];
        if (in(nodes, r->nmin, r->nmax) && in(ranks_per_node, r->rmin, r->rmax) && r->type == want &&
            in(per_rank, r->bmin, r->bmax)) {
            *algo = r->algo;
            *proto = r->proto;
            *channels = r->channels;
            return true;
        }
    }
    return false;
}
