/*
 * kernel.h: the table of kernel cost models, looked up by the name a trace
 * writes on a compute op (kernel=NAME dims=AxBx... [mask=causal],
 * traces/FORMAT.md, "Kernels").
 *
 * A row (kernel.c's table, one line each) says
 *   name     the name traces write (kernel=gemm);
 *   dims     how many extents it takes (min..max) and what they are;
 *   masks    whether it takes mask=causal;
 *   cost     its file's hook (gemm.c, flash_attention.c, elementwise.c):
 *            the cost of one op of that kernel on one unit.
 * A kernel is one file and one row (docs/extending.md).
 *
 * The cost of an op on a unit (strata_kernel_cost): the work the unit's
 * engines do, as the time of its compute at the unit's peak for the op's
 * dtype (what the engine executes on the unit, so that concurrent ops
 * share it), the bytes its operand memory moves (divided by the unit's
 * stream efficiency, so that at the memory's bandwidth they take the
 * achievable time), and a fixed time that overlaps nothing (the kernel
 * launch; the systolic array's fill and drain). The engine runs the first
 * two together and waits for both, then the fixed time (sim/engine).
 * `terms` explain the figure (strata check --explain): each a name, a value and
 * its unit, in the order they were derived.
 *
 * On a unit without a matrix engine (hw.h: matrix NONE) the cost is the
 * roofline's: the op's flops= and bytes= where given, else the kernel's
 * nominal counts (strata_kernel_nominal), no fixed time.
 *
 * The table sits in the models layer, above trace/ (which only reads the
 * names) and hw/ (the units' figures); the binder checks names and extents
 * against it, the engine asks it for costs, `strata check --explain` for terms.
 *
 * Invariants: names are unique NAME-like words ([a-z][a-z0-9-]*); costs
 * are pure functions of the unit and the problem; every time and byte
 * count is finite and at least 0.
 */
#ifndef STRATA_KERNEL_H
#define STRATA_KERNEL_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "hw/hw.h"
#include "trace/op.h"

enum { STRATA_KERNEL_MAX_TERMS = 32 };

/* One op's problem: what the trace says of it. */
typedef struct strata_kernel_problem {
    uint32_t n_dims;
    const uint64_t *dims;
    bool causal;
    uint64_t window;      /* mask=window-W: each query sees its W latest keys, itself included (causal; 0: none) */
    strata_dtype dtype;   /* NONE: bf16 */
    bool block_scaled;    /* gemm, grouped-gemm of 8-bit operands: DeepSeek-style block-scaled FP8 (activations
                           * scaled per 1 x 128, weights per 128 x 128; matrix.c); false: one scale a tensor */
    bool engine_attention; /* flash-attention on tiles: a serving engine's own attention kernel (sim/serve), not
                            * FlashAttention-2's launch: none of FA2's mma.sync share, L2 reuse, GQA swap,
                            * split-KV or head-dim-256 blocks (flash_attention.c) */
    bool fa2_varlen;      /* FA2 entered as vLLM 0.6's FLASH_ATTN backend enters it (flash_api.cpp mha_varlen_fwd,
                           * mha_fwd_kvcache), not mha_fwd: split-KV only for a GQA group swapped into rows */
    bool fa2_paged;       /* FA2 with K and V through a block table: the split-KV kernel's blocks at any split */
    bool has_flops;       /* flops= given (elementwise: its vector ops) */
    double flops;
    bool has_bytes;       /* operand bytes given (bytes=, or in=/out= sizes) */
    uint64_t bytes;
} strata_kernel_problem;

typedef struct strata_kernel_term {
    const char *name; /* static text */
    double value;
    const char *unit; /* "s", "B", "FLOP", "", ... */
} strata_kernel_term;

typedef struct strata_kernel_cost {
    double flops;        /* nominal flops (what a benchmark counts) */
    double compute_s;    /* the unit's busy time at its peak for the dtype */
    double bytes;        /* operand-memory bytes, already divided by the stream efficiency */
    double fixed_s;      /* after both: launch, fill and drain */
    double bytes_nominal; /* bytes the kernel moves */
    uint32_t n_terms;
    strata_kernel_term terms[STRATA_KERNEL_MAX_TERMS];
} strata_kernel_cost;

/* A row's hooks: the cost of problem p on unit u of hw
 * (u->kernel.matrix != NONE), and its nominal flops and operand bytes (for
 * the roofline). */
typedef void strata_kernel_cost_fn(const strata_hw *hw, uint32_t unit, const strata_kernel_problem *p,
                                   strata_kernel_cost *c);
typedef void strata_kernel_nominal_fn(const strata_kernel_problem *p, double *flops, double *bytes);

typedef struct strata_kernel_model {
    const char *name;
    uint32_t min_dims, max_dims;
    const char *dims_help; /* "MxKxN or BxMxKxN" */
    bool masks;            /* takes mask=causal or mask=window-W */
    const char *summary;
    strata_kernel_cost_fn *cost;
    strata_kernel_nominal_fn *nominal;
} strata_kernel_model;

/* The row of `name`, or NULL. */
const strata_kernel_model *strata_kernel_find(const char *name);
/* Rows in table order: i from 0 until NULL. */
const strata_kernel_model *strata_kernel_at(uint32_t i);
/* "gemm, flash-attention, ..." (g_free). */
char *strata_kernel_names(void);
/* Whether a kernel op's extents and mask fit its row; else false with a
 * message of what was expected (g_free) in *why. */
/* A mask= value: "causal", or "window-W" (a causal sliding window of W >= 1
 * keys: *causal and *window = W); false for anything else. */
bool strata_kernel_mask_parse(const char *mask, bool *causal, uint64_t *window);
bool strata_kernel_check(const strata_kernel_model *k, uint32_t n_dims, const char *mask, char **why);

/* The cost of one op of kernel k on unit `unit` of hw: the kernel's model
 * on a unit with a matrix engine, else the roofline (see above). */
void strata_kernel_cost_of(const strata_kernel_model *k, const strata_hw *hw, uint32_t unit,
                           const strata_kernel_problem *p, strata_kernel_cost *c);

/* The problem of a compute op that names a kernel= (NULL when it names
 * none, or an unknown one), given its dtype and operand bytes as bound. */
const strata_kernel_model *strata_kernel_problem_of(const strata_op *op, strata_dtype dtype, uint64_t bytes,
                                                    strata_kernel_problem *p);
/* Prints c's terms and its totals, one a line, each after `indent`. */
void strata_kernel_cost_print(FILE *out, const strata_kernel_cost *c, const char *indent);

/* For the models' files: bytes per element of p's dtype (bf16 when none);
 * appends a term. */
double strata_kernel_elem_bytes(const strata_kernel_problem *p);
/* Bytes of one output element of a matrix product of elem-byte operands:
 * 8-bit products are written in bf16 (TensorRT-LLM's cublas_scaled_mm and
 * Transformer Engine's FP8 GEMMs output the module's bf16), others in their
 * own dtype. */
double strata_kernel_out_bytes(double elem);
void strata_kernel_term_add(strata_kernel_cost *c, const char *name, double value, const char *unit);

#endif
