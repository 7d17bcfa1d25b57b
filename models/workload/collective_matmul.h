/*
 * collective_matmul.h: XLA's windowed einsum ("collective matmul") on a
 * generated program: an all-gather over a mesh axis whose first reader is a
 * gemm, and a gemm whose output a reduce-scatter over that axis reduces,
 * overlapped with the gemm as XLA's SPMD partitioner loops them
 * (xla/service/spmd/dot_handler.cc: windowed_dot_general_body_ag / _rs,
 * used when the windowed operand's size reaches
 * threshold_for_windowed_einsum_mib).
 *
 * The loop over the T devices of the axis computes one shard's part of the
 * gemm per step while the next shard moves over the links. With equal
 * steps its time is exactly that of two parts:
 *   all-gather: the gemm on the local shard's rows ((T-1)/T of its work)
 *     while the all-gather runs on stream `window`, then the last 1/T once
 *     the all-gather is done: max(gemm, all-gather + gemm/T);
 *   reduce-scatter: the first 1/T of the gemm, then the rest while the
 *     reduce-scatter runs on `window`: gemm/T + max((T-1)/T gemm, RS).
 * The gemm's split extent is the one equal to the collective's split rows
 * (the full tensor's extents multiplied up to the one it splits: B*S for
 * a [B,S,d] split along S), else its largest one that T divides; the
 * kernel times each part by its own extents. Only gemms on main are
 * split; an all-gather on a side stream (a regather) stays there, main's
 * wait for it moving between the two parts.
 *
 * Invariants: the result has the same tensors (ids, names, sizes, flags,
 * memories) and options as the input; every step is copied in order but
 * the pairs rewritten; a rewritten pair's collective keeps its tensors, so
 * buffers live as before; events are cmK.go / cmK.done, K counting pairs.
 */
#ifndef STRATA_WL_COLLECTIVE_MATMUL_H
#define STRATA_WL_COLLECTIVE_MATMUL_H

#include "workload/graph.h"

/* A copy of g with the pairs over `axis` (of `size` devices) whose
 * collective's full tensor holds at least min_bytes rewritten; *pairs
 * (may be NULL) gets their count. g is left as it was. */
wl_graph *wl_collective_matmul(const wl_graph *g, const char *axis, uint32_t size, uint64_t min_bytes,
                               uint32_t *pairs);

#endif
