/*
 * nccl_plugin_gib.h: Google's gIB tuner tables, the choice of algorithm,
 * protocol and channels that the tuner in Google's gIB NCCL plugin makes
 * on A3 Ultra and A4 VMs (contract below; the sources in
 * nccl_plugin_gib.c).
 *
 * gIB's set_nccl_env.sh points NCCL_TUNER_CONFIG_PATH at a table per
 * platform, tuner_config_a3u.txtpb (A3 Ultra) or tuner_config_a4.txtpb
 * (A4). GPUDirect-TCPXO's nccl-env-profile.sh points the same tuner
 * (libnccl-tuner.so, the same TunerConfigs format) at
 * a3plus_tuner_config.textproto on A3 Mega (STRATA_GIB_TCPXO_A3M). A table is a list of communicator configs (a range of nodes and of
 * ranks per node), each with rules per collective type (COLL_ALL_REDUCE,
 * COLL_ALL_GATHER, COLL_REDUCE_SCATTER, and COLL_DEFAULT for "the rest of
 * collective types") over a range of per_rank_message_size, each rule an
 * algorithm, a protocol and num_channel. Every range is [min, max): "all
 * max values are exclusive" (the tables' own note); a range without max
 * is unbounded.
 *
 * The rule taken: the first, in the table's order, whose node and ranks
 * per node ranges hold the communicator's, whose type is the collective's
 * (COLL_DEFAULT where that communicator config has no rule of the
 * collective's type) and whose size range holds the per-rank size. None:
 * NCCL's own choice. A rule without num_channel (A3 Mega's 8-rank
 * communicators) gives 0: NCCL's own channels (ESTIMATE: the tuner leaves
 * nMaxChannels at the 0 NCCL passes it, which getAlgoInfo keeps as "no
 * choice", NVIDIA/nccl v2.25.1-1 src/enqueue.cc l. 1746).
 *
 * ESTIMATE (the tuner is closed source): per_rank_message_size is the
 * bytes of the count the collective's API takes per rank: an
 * all-reduce's buffer (NCCL's nBytes), an all-gather's send part and a
 * reduce-scatter's receive part (NCCL's nBytes / nRanks).
 *
 * Invariant: the tables are constant; the function reads only its
 * arguments.
 */
#ifndef STRATA_HW_NCCL_PLUGIN_GIB_H
#define STRATA_HW_NCCL_PLUGIN_GIB_H

#include <stdbool.h>
#include <stdint.h>
#include "hw/nccl_tuning.h"
#include "trace/op.h"

/* STRATA_GIB_NONE: no table (a plugin row that is not gIB's names none;
 * strata_gib_rule finds no rule in it) */
typedef enum { STRATA_GIB_NONE = 0, STRATA_GIB_A3U, STRATA_GIB_A4, STRATA_GIB_TCPXO_A3M } strata_gib_table;

/* The rule of table t for a collective of `kind` on `nodes` nodes of
 * `ranks_per_node` ranks each, `per_rank` bytes a rank (above): true with
 * its algorithm, protocol and num_channel (0: unset); false where no rule
 * holds (and for STRATA_GIB_NONE). */
bool strata_gib_rule(strata_gib_table t, uint32_t nodes, uint32_t ranks_per_node, strata_op_kind kind,
                     uint64_t per_rank, strata_nccl_algo *algo, strata_nccl_proto *proto, uint32_t *channels);
/* The ranks per node the tuner compares with a config's
 * rank_per_node_range, from what NCCL gives it: the tuner's init takes
 * nRanks and nNodes alone (NVIDIA/nccl v2.27.7-1
 * src/include/plugin/tuner/tuner_v4.h l. 23, "init(size_t nRanks, size_t
 * nNodes, ...)"; v3 the same; v5's nvlDomainInfo with the least and most
 * ranks of a node comes with v2.28.3-1, after the tables' images). Where
 * nRanks is no multiple of nNodes (nodes of unequal ranks) their quotient
 * is not whole; the ranges are [min, max) with whole bounds, so the real
 * quotient q and its floor hold in the same ranges (q >= min iff floor(q)
 * >= min, q < max iff floor(q) < max): the floor, nRanks / nNodes in C,
 * is the tuner's choice whether it divides whole or real numbers
 * (ESTIMATE: it takes that quotient, not a rounding up). 0 nodes count as
 * one; fewer ranks than nodes give 0, which no range holds. */
uint32_t strata_gib_ranks_per_node(uint32_t ranks, uint32_t nodes);

#endif
