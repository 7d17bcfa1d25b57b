/*
 * chakra.h: Chakra execution traces (ASTRA-sim's workload format) into ops;
 * chakra_export.h writes them.
 *
 * The file format (mlcommons/chakra, src/third_party/utils/protolib.py and
 * src/feeder/et_feeder.cpp; schema third_party/chakra/et_def.proto): a
 * sequence of messages, each a varint length then that many bytes of
 * protobuf; the first a GlobalMetadata, every other one a Node. A workload
 * of N ranks is N files PREFIX.0.et .. PREFIX.{N-1}.et (ASTRA-sim's
 * Workload.cc opens `PREFIX + "." + rank + ".et"`).
 *
 * Import (strata_chakra_import): every rank's graph becomes ops, in a
 * topological order of its data dependencies (data_deps, the ones Chakra's
 * ETFeeder schedules by, src/feeder/et_feeder.cpp; ctrl_deps name the op
 * that launched a node and may even form cycles in real traces), file
 * order breaking ties, one stream per kind of work ("comp", "comm", "mem",
 * and "cpu" for is_cpu_op nodes). A dependency between streams becomes
 * `record e<K>` after the parent and `wait e<K>` before the child. Names
 * (e<K>, c<K>, m<K>) use the node's position K in its file, not its id, so
 * that ranks whose graphs differ only in ids compare equal.
 *  - COMP_NODE: `compute NAME time=DURATION` (duration_micros); without one,
 *    flops=num_ops (and bytes=tensor_size); with neither, time=0.
 *  - MEM_LOAD_NODE (tensor_size S): a device buffer m<K> of S bytes filled
 *    from a host staging buffer: alloc m<K>; alloc m<K>.staging S host;
 *    copy; free the staging buffer. MEM_STORE_NODE: the reverse (a host
 *    buffer m<K> filled from a device staging buffer). m<K> lives to the end.
 *  - COMM_COLL_NODE: comm_type ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER and
 *    ALL_TO_ALL become the collective over the mesh axis `rank` on buffers
 *    c<K> allocated before it and freed after, sized as ASTRA-sim reads
 *    comm_size (Workload.cc passes it to Sys::generate_*, whose Ring.cc
 *    takes it as each rank's data_size): the all-reduce's buffer, the
 *    all-gather's input (its output N times it), the reduce-scatter's
 *    input (its output a 1/N of it), the all-to-all's input and output; BROADCAST is its duration, as
 *    ASTRA-sim replays it (Workload.cc, issue_coll_comm); is_cpu_op nodes
 *    (the host side of a PyTorch collective) are their duration on "cpu".
 *  - METADATA_NODE and INVALID_NODE carry no work (ASTRA-sim skips them):
 *    their dependents inherit their dependencies.
 *  - Any other node type or collective, a dependency cycle, a truncated
 *    varint or message, a message protobuf cannot decode (a wrong wire type)
 *    or an attribute of the wrong type is an error (STRATA_ERROR_INPUT)
 *    naming the file and the node.
 * When every rank's ops are the same the result is one SPMD program with
 * `option mesh=rank:N`, else one trace per rank (each rank's graph as the
 * program every rank runs: what the SPMD expansion can run); a file that
 * strata exported (its nodes carry `strata.op`) gives back the exported
 * trace exactly.
 */
#ifndef STRATA_IMPORT_CHAKRA_H
#define STRATA_IMPORT_CHAKRA_H

/* The most dependencies one rank's graph may resolve to once the nodes
 * without work are replaced by their own (a graph is refused beyond, the
 * figure in the message): 16 Mi, some 128 MiB of lists. */
#define STRATA_CHAKRA_MAX_RESOLVED_DEPS (16u * 1024u * 1024u)

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "trace/source.h"

/* The largest ET file read (bytes). */
#define STRATA_CHAKRA_MAX_FILE (1ull << 31)

typedef struct strata_chakra_summary {
    uint32_t ranks;       /* files read */
    uint32_t mesh;        /* devices of the mesh written (option mesh=rank:N) */
    bool spmd;            /* the ranks' programs were the same */
    bool from_strata;     /* the nodes carried strata.op (a strata export) */
    uint64_t nodes;       /* nodes read, all ranks */
    uint64_t comp, mem, coll, cpu, skipped; /* of rank 0 (or the rank imported) */
    uint64_t missing_deps; /* dependencies on nodes absent from their file (ignored) */
    uint64_t events;       /* record/wait pairs made from dependencies */
    int64_t first_difference; /* when !spmd: the first op where rank differing_rank's differ from rank 0's */
    uint32_t differing_rank;
} strata_chakra_summary;

/* The files of `input`: itself when it is a file; for a folder, the files
 * NAME.0.et, NAME.1.et, ... in it (one NAME, every rank from 0 to the
 * highest, as ASTRA-sim's examples ship a workload); else INPUT.0.et,
 * INPUT.1.et, ... while they exist (at least INPUT.0.et, and no gap before
 * the highest). NULL with err naming the input and what was expected;
 * g_strfreev. */
char **strata_chakra_rank_files(const char *input, GError **err);

/* Imports files (NULL-terminated, rank order). rank >= 0: only that
 * file's graph, as the program of every rank. mesh: the mesh size written
 * (0: the number of files). Returns the traces (NULL-terminated, each freed
 * with strata_source_free, the array with g_free), *n_traces of them: one
 * when the ranks agree (or for a strata export), else one per rank, rank
 * r's graph as the program of every rank; NULL with err on bad input. */
strata_source **strata_chakra_import(char *const *files, int rank, uint32_t mesh, size_t *n_traces,
                                     strata_chakra_summary *sum, GError **err);

#endif
