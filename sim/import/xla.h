/*
 * xla.h: `strata import xla`, a JAX or TensorFlow program compiled by XLA,
 * from the files of XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_as_text",
 * into a strata op stream, with XLA's own memory figures beside it.
 *
 * Per module the dump holds (docs/xla-import.md walks through each):
 *   *after_optimizations-buffer-assignment.txt  allocations and their values
 *       (xla_buffers.h), then the HloLiveRange (xla_liverange.h); newer XLA
 *       writes the live ranges to *after_optimizations-live-range.txt;
 *   *after_optimizations-memory-usage-report.txt  `Total bytes used` first
 *       (cross-checked, the rest skipped);
 *   *after_optimizations.txt  the optimized HLO (xla_hlo.h), optional.
 *
 * The trace (xla_emit.c) has one buffer per group of values that XLA keeps
 * in the same storage (same allocation and offset, live ranges touching or
 * overlapping, or adjacent at the same size: in-place updates, loop-carried
 * values), a donated argument's whole allocation as one buffer for the
 * program, allocated and freed at its live range in schedule order, and
 * one op per scheduled instruction that does work; an SPMD module's
 * collectives become strata collectives over the mesh its replica groups
 * give (xla_mesh.h).
 *
 * Invariants: the import is a pure function of the files (same dump,
 * byte-identical trace); every file is read line by line, so memory grows
 * with the number of instructions and values, not with the file sizes.
 */
#ifndef STRATA_IMPORT_XLA_H
#define STRATA_IMPORT_XLA_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/progress.h"
#include "trace/source.h"

/* One preallocated-temp allocation against the offline planner. */
typedef struct strata_xla_temp {
    uint64_t index;           /* XLA's allocation number */
    uint64_t xla_bytes;       /* its size */
    uint64_t n_buffers;       /* strata buffers planned */
    uint64_t planned_bytes;   /* the offline planner's height */
    uint64_t lower_bound;     /* peak of its live bytes */
    uint64_t alignment;       /* the planner's alignment (the offsets' largest power of two) */
} strata_xla_temp;

/* One of XLA's allocations, as its header states it. */
typedef struct strata_xla_allocation {
    uint64_t index, size;
    char kind[48];            /* "parameter 0", "maybe-live-out", "preallocated-temp", ... */
} strata_xla_allocation;

#define STRATA_XLA_TOP_ALLOCATIONS 5

typedef struct strata_xla_figures {
    char *module;             /* the module's file stem, e.g. module_0012.jit_step */
    char *buffer_file, *live_range_file, *hlo_file, *report_file; /* NULL when absent */
    /* XLA's own figures, from the buffer assignment. */
    uint64_t n_allocations, n_values, n_instructions;
    uint64_t xla_parameter_bytes, xla_output_bytes, xla_alias_bytes;
    uint64_t xla_temp_bytes, xla_constant_bytes, xla_thread_local_bytes, xla_total_bytes;
    /* The largest allocations, largest first (ties: lower index first). */
    strata_xla_allocation top[STRATA_XLA_TOP_ALLOCATIONS];
    uint32_t n_top;
    bool has_xla_peak;
    uint64_t xla_peak_time, xla_peak_bytes; /* `Live ranges at T (peak)` and its sum */
    /* XLA's live-range peak recomputed from the dump as XLA computes the
     * statement (xla_livepeak.h): what users compare with, where peak_bytes
     * is the storage assigned; values the dump gives no size for. */
    uint64_t xla_accounted_peak_time, xla_accounted_peak_bytes, xla_accounted_unsized;
    /* What the trace holds. */
    uint64_t n_buffers, n_computes, n_copies;
    uint64_t n_collectives;           /* HLO collectives written as strata collectives */
    uint64_t n_collective_ops;        /* the strata collective ops they became */
    uint64_t n_async_collectives;     /* of them, -start/-done pairs (stream xla-collective) */
    uint64_t n_collective_notes;      /* HLO collectives kept as computes with a note */
    char *mesh;                       /* the option mesh= written, NULL when none */
    bool devices_from_sharding;       /* the module line states no device count: n_devices
                                         are the partitions its tiled sharding= names */
    uint64_t n_devices;               /* then, those partitions */
    uint64_t n_thread_local_values;   /* not emitted: per-thread stack memory */
    uint64_t n_unranged_values;       /* no live range: live for the whole program */
    uint64_t n_empty_values;          /* zero bytes: not emitted */
    double flops;
    uint64_t peak_time, peak_bytes;   /* peak of live bytes in program order */
    GArray *temps;                    /* strata_xla_temp, one per preallocated-temp allocation */
    /* What the readers read past without knowing it (a newer XLA's fields
     * and line kinds): how many, and the first as "FILE:LINE: WHAT 'TEXT'". */
    uint64_t n_unknown;
    char *unknown_first;              /* NULL when n_unknown is 0 */
    /* get-tuple-element as XLA of jaxlib 0.12 prints it: operands written
     * NAME#INDEX (the first as "FILE:LINE: operand 'NAME#INDEX'"), and the
     * scheduled get-tuple-elements the HLO leaves out (nothing emitted). */
    uint64_t n_element_operands, n_elided_gtes;
    char *element_operand_first;      /* NULL when n_element_operands is 0 */
} strata_xla_figures;

void strata_xla_figures_clear(strata_xla_figures *f);

/* path: a dump directory or one of a module's files; module: a substring of
 * the module's file names (required when the directory holds several).
 * Returns the op stream, fills *fig. Errors: STRATA_ERROR_INPUT naming
 * FILE:LINE, or the choice of module; STRATA_ERROR_IO. */
strata_source *strata_xla_import(const char *path, const char *module, strata_xla_figures *fig,
                                 GError **err);
/* Same, showing the bytes of each file read on progress (NULL: none). */
strata_source *strata_xla_import_with(const char *path, const char *module, strata_progress *progress,
                                      strata_xla_figures *fig, GError **err);

#endif
