/*
 * xla_hlo.h: reader of XLA's optimized HLO text (`*after_optimizations.txt`,
 * HloModule::ToString), for what the buffer assignment does not say: each
 * instruction's opcode, operands, shape and floating-point work.
 *
 *   HloModule jit_f, is_scheduled=true, entry_computation_layout={...}
 *
 *   %fused_computation (param_0: f32[4,8], param_1: f32[8,16]) -> f32[4,16] {
 *     %param_0 = f32[4,8]{1,0} parameter(0)
 *     ROOT %dot.1 = f32[4,16]{1,0} dot(f32[4,8]{1,0} %param_0, ...), lhs_contracting_dims={1}, ...
 *   }
 *
 *   ENTRY %main (Arg_0.1: f32[4,8], ...) -> f32[4,16] {
 *     ROOT %fusion = f32[4,16]{1,0} fusion(%Arg_0.1, %Arg_1.2), kind=kOutput, calls=%fused_computation
 *   }
 *
 * Both printings are read: with '%' and operand shapes (before 2024) and
 * without (ShortParsable). An operand's shape, when not written inline, is
 * its defining instruction's.
 *
 * FLOPs per instruction (documented in docs/xla-import.md):
 *   dot            2 x elements(result) x product of lhs contracting dims
 *   convolution    2 x elements(result) x elements(kernel) / kernel's output features
 *   custom-call    a cuBLAS gemm ($gemm, $lt$matmul): as dot, from backend_config's
 *                  "lhs_contracting_dimensions"
 *   elementwise    elements(result) for arithmetic (add, multiply, exp, ...)
 *   reduce         elements(operand 0)
 *   fusion         the sum over its fused computation (printed before its users)
 *   anything else  0
 *
 * XLA of jaxlib 0.12 leaves get-tuple-element out of the printed HLO (it
 * stays in the schedule, the live ranges' InstructionSequence): its users
 * name the tuple's element, `fusion(%cholesky.0#0, %cholesky.0#1)`. Such
 * an operand's shape is element INDEX of NAME's tuple shape; an operand
 * NAME#INDEX that is not an element of a tuple-shaped instruction defined
 * before it is an error at its line. They are counted, the first kept
 * (xla_hlo_element_operands), for the import's summary.
 *
 * The stack-frame index recent XLA appends (`FileNames`, `FunctionNames`,
 * `FileLocations`, `StackFrames` and their numbered lines) is skipped.
 *
 * Invariants: instruction names are unique in a module (XLA guarantees it;
 * a repeated name is an error); lines that are not an HloModule header, a
 * computation header `... {`, an instruction, `}` or `} // NAME` (XLA of
 * jaxlib 0.4.x: NAME must be the open computation's) are errors naming
 * FILE:LINE.
 */
#ifndef STRATA_IMPORT_XLA_HLO_H
#define STRATA_IMPORT_XLA_HLO_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "import/xla_text.h"

typedef struct xla_instr {
    char *name;
    char *opcode;
    xla_shape shape;
    char **operands;       /* NULL-terminated names (none for constant, parameter) */
    int64_t tuple_index;   /* get-tuple-element's index=, else -1 */
    GArray *elements;      /* a tuple-shaped instruction's top-level element shapes
                              (xla_shape), else NULL */
    char *call_root;       /* a call's: the ROOT of its to_apply= computation (printed
                              before it), whose values the call's result is; else NULL */
    char *replica_groups;  /* a collective's replica_groups= value, else NULL */
    char *pairs;           /* a collective-permute's source_target_pairs= value, else NULL */
    bool channel;          /* a channel_id= attribute (the collective spans partitions) */
    bool global_ids;       /* use_global_device_ids=true */
    double flops;
} xla_instr;

typedef struct xla_hlo xla_hlo;

xla_hlo *xla_hlo_new(void);
void xla_hlo_free(xla_hlo *h);
bool xla_hlo_feed(xla_hlo *h, const char *file, const char *line, uint64_t lineno, GError **err);
const xla_instr *xla_hlo_find(const xla_hlo *h, const char *name);
/* NAME of an operand written NAME#INDEX (newly allocated), *element set to
 * INDEX; NULL for any other operand. */
char *xla_hlo_element_operand(const char *operand, uint64_t *element);
/* The operands written NAME#INDEX: how many, the first as FILE:LINE. */
const xla_unknown *xla_hlo_element_operands(const xla_hlo *h);
/* The module's devices: replicas x partitions (xla_hlo_counts; an unknown
 * count as 1; UINT64_MAX past XLA_MESH_MAX_DEVICES either). */
uint64_t xla_hlo_devices(const xla_hlo *h);
/* The module's replicas and partitions (HloModuleConfig), 0 where unknown:
 * replica_count= and num_partitions= of the HloModule line (XLA prints each
 * when it is not 1; jaxlib 0.4.20's dumps state neither, 0.4.23's do). When
 * the line states neither, the partitions are the devices of a tiled
 * sharding= (an SPMD module keeps its entry parameters' shardings; a tiled
 * sharding names each of the module's partitions once: HloSharding::
 * ValidateNonTuple, "tile_assignment should have N devices"), and
 * *from_sharding is set. */
void xla_hlo_counts(const xla_hlo *h, uint64_t *replicas, uint64_t *partitions, bool *from_sharding);
/* The memory space (S(n)) of entry parameter `number` in the HloModule
 * line's entry_computation_layout, 0 when none or unknown. */
int xla_hlo_parameter_space(const xla_hlo *h, uint64_t number);
/* At the end of the file: false (err naming it) when it held no HloModule
 * line, no ENTRY computation, or stops inside a computation (truncated). */
bool xla_hlo_finish(const xla_hlo *h, const char *file, GError **err);

#endif
