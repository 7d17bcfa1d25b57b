/*
 * chakra_export.h: a trace as Chakra execution traces, the input of
 * ASTRA-sim's workload layer (chakra.h describes the format and the import).
 *
 * strata_chakra_export(): one file per device of the trace's mesh
 * (one for a trace without one), each that device's ops in trace order as
 * nodes that ASTRA-sim's workload layer runs: compute -> COMP_NODE
 * (duration_micros, num_ops, tensor_size), copy -> MEM_LOAD_NODE
 * (tensor_size), collectives -> COMM_COLL_NODE (comm_type, comm_size),
 * alloc, free, record, wait, release -> METADATA_NODE (which ASTRA-sim
 * skips); a node depends on the previous op of its stream, and a wait on
 * the record of its event. Every node carries strata's own view in
 * attributes: `strata.op` (the op's canonical trace text), `strata.index`
 * (its position in the trace), and for allocs `strata.buffer`,
 * `strata.memory`, `strata.bytes`; GlobalMetadata carries the options
 * (`strata.options`).
 */
#ifndef STRATA_IMPORT_CHAKRA_EXPORT_H
#define STRATA_IMPORT_CHAKRA_EXPORT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/outfile.h"
#include "trace/source.h"

/* The most files an export writes: a mesh of more devices is refused
 * before any is written (a device each; ASTRA-sim's largest examples have
 * a few thousand ranks). */
#define STRATA_CHAKRA_EXPORT_MAX_FILES 16384u

/* Writes src as PREFIX.D.et, one per device of its mesh, all or none
 * (core/outfile.h: the set's lock on PREFIX, its inputs never written,
 * every file renamed in one step); *n_files set. */
bool strata_chakra_export(strata_source *src, const char *prefix, strata_outfile_set *set, uint32_t *n_files,
                          GError **err);

#endif
