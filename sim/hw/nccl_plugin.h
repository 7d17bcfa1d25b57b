/*
 * nccl_plugin.h: NCCL tuner plugins whose choice a run's NCCL takes in
 * place of its own model's (NCCL_TUNER_PLUGIN), one row per plugin and
 * platform, looked up by name (the nccl row's nccl_tuner_plugin key,
 * coll_impl_nccl.c).
 *
 * Rows:
 *   aws-ofi-p5  aws/aws-ofi-nccl v1.16.3's region tuner on p5.48xlarge and
 *               p5e.48xlarge (NCCL_OFI_TUNER_P5_P5E): src/tuner/
 *               nccl_ofi_regions.cpp region_init_internal_p5_p5e, its
 *               polygons in the (bytes, ranks) plane, picked by
 *               region_get_coll_info_internal_v3 (the v3 API NCCL 2.28
 *               loads, src/plugin/tuner/tuner_v3.cc).
 *   aws-ofi-p6-b200-v1.15, -v1.16, -v1.17, -v1.19  the same tuner's
 *               p6-b200.48xlarge table (region_init_internal_p6) as it
 *               stood in v1.15.0, v1.16.0-v1.16.3, v1.17.0-v1.18.0 and
 *               v1.19.0-v1.21.1 (the last two the same vertices, v1.19's
 *               in the log-log plane);
 *   aws-ofi-p6-b300-v1.18, -v1.19  its p6-b300.48xlarge table
 *               (region_init_internal_p6_b300): v1.18.0, and v1.19.0-v1.21.1
 *               in the log-log plane. The p6 rows hold the all-reduce with
 *               8 ranks a node only (the tables' other collectives and
 *               shapes, and the p6-b200's nChannels for Tree/LL128 from 4 to
 *               32 MiB, are not here: NCCL's own choice there).
 *   gcp-gib-a3u, gcp-gib-a4  the tuner in Google's gIB net plugin with
 *               its A3 Ultra and A4 tables (nccl_plugin_gib.h), which
 *               set a channel count besides the pair.
 *   gcp-tcpxo-a3m  the same tuner on A3 Mega (GPUDirect-TCPXO) with its
 *               "Default A3+" table (nccl_plugin_gib.h).
 *
 * A plugin's choice: the first of its regions (in its order) that holds
 * the point (bytes, ranks), on its edge included, whose pair NCCL runs
 * (its cost table's entry is not NCCL_ALGO_PROTO_IGNORE: strata_nccl_model
 * prices it); the tuner writes cost 0 there, so NCCL takes it. No region
 * (or no plugin): NCCL's own choice. gIB's: its table's rule, where NCCL
 * runs the rule's pair (else NCCL's own).
 *
 * Channels: a plugin's count (nMaxChannels; 0: NCCL's own) replaces the
 * count NCCL's own tuning gives (enqueue.cc getAlgoInfo: "nChannels will
 * be overriden by the plugin setting"); the caller caps it at the
 * communicator's channels, as scheduleCollTasksToPlan does.
 *
 * Invariant: the tables are constant; the functions read only their
 * arguments.
 */
#ifndef STRATA_HW_NCCL_PLUGIN_H
#define STRATA_HW_NCCL_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/nccl_tuning.h"

/* The row of a plugin by name; NULL for an unknown name. */
const strata_nccl_plugin *strata_nccl_plugin_find(const char *name);
/* The rows' names, comma-separated (for error messages; g_free). */
char *strata_nccl_plugin_list(void);
const char *strata_nccl_plugin_name(const strata_nccl_plugin *pl);
/* The pair the plugin makes NCCL run for `bytes` (NCCL's nBytes: an
 * all-gather's OUT, else IN) of `kind` on the communicator c, and its
 * channel count (0: NCCL's own); false when it leaves the choice to NCCL
 * (channels then 0). */
bool strata_nccl_plugin_choose(const strata_nccl_plugin *pl, const strata_nccl_comm *c, strata_op_kind kind,
                               uint64_t bytes, strata_nccl_algo *algo, strata_nccl_proto *proto,
                               uint32_t *channels);

#endif
