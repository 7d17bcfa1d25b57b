/*
 * graph.h: a program as tensors and a schedule of computes, turned into an
 * op stream with allocations placed the way XLA's buffer assignment places
 * them: each tensor is allocated just before the step that first writes it
 * and freed just after the step that last reads or writes it.
 *
 * Arguments (WL_ARGUMENT) are allocated before the first step, in
 * declaration order, followed by `compute program_start time=0` (so that
 * what is live before the first compute is exactly the arguments), and never freed (the caller owns them); outputs
 * (WL_OUTPUT) are never freed (they are handed back). A tensor that no step
 * uses is never allocated. The generators in models/workload/ build a graph
 * (through autodiff.h for the training steps) and hand its source to `gen`.
 *
 * A step runs on the graph's current stream (wl_graph_stream(); default
 * main): its allocs are emitted on that stream right before it and its frees
 * right after it, so a buffer last used by a step on a side stream is freed
 * when that stream gets there. Record and wait steps order the streams.
 * Collective steps (wl_graph_collective) are SPMD collectives over a mesh
 * axis that `option mesh=` (wl_graph_option) names.
 *
 * Invariants: tensor ids are dense (0, 1, ...) in declaration order; bytes =
 * ceil(product of dims x bits of dtype / 8); the emitted stream passes
 * trace/check.h (every name live where it is used, unique while live).
 */
#ifndef STRATA_WL_GRAPH_H
#define STRATA_WL_GRAPH_H

#include "trace/source.h"

typedef uint32_t wl_tensor;
#define WL_NONE ((wl_tensor)UINT32_MAX)

/* The first compute of every generated program: zero time, no operands. What
 * is allocated before it are the program's arguments (JAX: argument_size). */
#define WL_PROGRAM_START "program_start"

/* WL_VARY: a tensor whose first extent differs per device (wl_graph_vary). */
enum { WL_TEMP = 0, WL_ARGUMENT = 1u << 0, WL_OUTPUT = 1u << 1, WL_VARY = 1u << 2 };

typedef struct wl_graph wl_graph;

wl_graph *wl_graph_new(void);
void wl_graph_free(wl_graph *g);

/* dims: n_dims extents (n_dims 0: a scalar). memory NULL: the device memory. */
wl_tensor wl_graph_tensor(wl_graph *g, const char *name, strata_tag tag, strata_dtype dtype,
                          uint32_t n_dims, const uint64_t *dims, unsigned flags);
const char *wl_graph_name(const wl_graph *g, wl_tensor t);
strata_dtype wl_graph_dtype(const wl_graph *g, wl_tensor t);
/* *dims points into the graph: valid until the next wl_graph_tensor(). */
uint32_t wl_graph_dims(const wl_graph *g, wl_tensor t, const uint64_t **dims);
strata_tag wl_graph_tag(const wl_graph *g, wl_tensor t);
uint64_t wl_graph_elements(const wl_graph *g, wl_tensor t);

/* One compute step. donates: inputs whose storage the outputs may reuse. */
void wl_graph_compute(wl_graph *g, const char *label, double flops, const wl_tensor *ins, uint32_t n_ins,
                      const wl_tensor *outs, uint32_t n_outs, const wl_tensor *donates, uint32_t n_donates);

/* Places t in memory `memory` (copied; default: the device memory). */
void wl_graph_memory(wl_graph *g, wl_tensor t, const char *memory);
const char *wl_graph_memory_of(const wl_graph *g, wl_tensor t); /* NULL: the device memory */
/* A copy step dst = src (`copy DST SRC`, e.g. to or from host memory). */
void wl_graph_copy(wl_graph *g, wl_tensor dst, wl_tensor src);

/* The kernel that runs the last compute step added (kernel=NAME dims=...
 * [mask=MASK] on its op, models/kernel/kernel.h): name and mask are copied
 * (mask NULL: none); n_dims extents (at most STRATA_MAX_DIMS). */
void wl_graph_kernel(wl_graph *g, const char *kernel, uint32_t n_dims, const uint64_t *dims, const char *mask);
/* The extents of kernel=gemm for batch products M x K x N (gemm.c):
 * dims = MxKxN when batch is 1, else BxMxKxN; returns their count. A
 * generator that writes a step per matmul names its kernel with
 * wl_graph_kernel(g, "gemm", wl_gemm_dims(d, B, M, K, N), d, NULL), its
 * flops= their 2 B M K N (the kernel's cost follows the extents). */
uint32_t wl_gemm_dims(uint64_t dims[4], uint64_t batch, uint64_t m, uint64_t k, uint64_t n);

/* A trace-wide `option KEY=VALUE`, written after `option sched=xla`. */
void wl_graph_option(wl_graph *g, const char *key, const char *value);
/* The stream of the steps added from now on (NULL: main). */
void wl_graph_stream(wl_graph *g, const char *stream);
/* A `record EVENT` or `wait EVENT` step on the current stream. */
void wl_graph_event(wl_graph *g, bool record, const char *event);
/* A collective step (kind: STRATA_OP_ALL_REDUCE .. COLLECTIVE_PERMUTE) over
 * mesh axis `axis` (its size rules: traces/FORMAT.md): out = op(in); for
 * all-reduce out == in (in place). */
void wl_graph_collective(wl_graph *g, strata_op_kind kind, wl_tensor out, wl_tensor in, const char *axis);
/* A collective-permute over `axis`: rank r sends in to rank r + shift
 * (shift -127..127, not 0). */
void wl_graph_permute(wl_graph *g, wl_tensor out, wl_tensor in, const char *axis, int shift);

/* Per-device programs in one SPMD graph (an expert group's load): rows[D]
 * for each of the n devices of the mesh (copied; the largest is the
 * graph's extent). A tensor flagged WL_VARY has that largest as its first
 * extent and is allocated on each device D (`device=D`) with rows[D]
 * (at least 1); a step marked by wl_graph_vary_step() is emitted once per
 * device, `device=D`, with flops x rows[D] / the largest. */
void wl_graph_vary(wl_graph *g, uint32_t n, const uint64_t *rows);
/* Marks the last compute step added as one whose work follows rows[D]. */
void wl_graph_vary_step(wl_graph *g);
/* The per-device rows (NULL: none) and their count and largest. */
const uint64_t *wl_graph_vary_rows(const wl_graph *g, uint32_t *n, uint64_t *max);

/* For the stream (graph_source.c): the tensors' sizes and flags, the
 * options, and the steps in program order. */
typedef struct wl_step_view {
    strata_op_kind kind; /* COMPUTE, COPY (outs[0] = ins[0]), RECORD, WAIT (label: the event) or a collective */
    const char *label;
    const char *stream;  /* never NULL */
    double flops;
    const wl_tensor *ins, *outs, *donates; /* valid until the next wl_graph_compute() */
    uint32_t n_ins, n_outs, n_donates;
    const char *axis;    /* collectives: run with no algo= (the hardware's pick) */
    const char *kernel;  /* computes: wl_graph_kernel()'s name, or NULL */
    const uint64_t *kdims; /* its extents (valid until the next wl_graph_tensor or kernel) */
    uint32_t n_kdims;
    const char *mask;    /* NULL: none */
    int shift;           /* collective-permute: its shift */
    bool vary;           /* computes: emitted per device (wl_graph_vary_step) */
} wl_step_view;
uint32_t wl_graph_n_options(const wl_graph *g);
void wl_graph_option_at(const wl_graph *g, uint32_t i, const char **key, const char **value);
uint32_t wl_graph_n_tensors(const wl_graph *g);
uint64_t wl_graph_bytes(const wl_graph *g, wl_tensor t);
unsigned wl_graph_flags(const wl_graph *g, wl_tensor t);
uint32_t wl_graph_n_steps(const wl_graph *g);
void wl_graph_step(const wl_graph *g, uint32_t step, wl_step_view *v);
/* NULL, or the first tensor whose size, or the running total of all sizes
 * up to it, overflows 64 bits. */
const char *wl_graph_overflow(const wl_graph *g);

/* The op stream, produced lazily (takes g); NULL and err when a tensor's size, or the sum of
 * all tensors' sizes, overflows 64 bits. */
strata_source *wl_graph_to_source(wl_graph *g, const char *origin, GError **err);

#endif
