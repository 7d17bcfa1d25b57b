/*
 * autodiff_nodes.h: the common nodes of a model (autodiff.h) built on its
 * primitives: a matmul, an elementwise function, a sum; and the kernel
 * every matrix product runs through.
 *
 * A product C[M,N] = A[M,K] B[K,N] (B independent ones: batched) runs
 * through kernel=gemm (models/kernel/gemm.c) with the extents each device
 * computes, and each of its gradients is a GEMM of its own:
 *   forward  C  = A B        B x M x K x N
 *   input 0  dA = dC B^T     B x M x N x K
 *   input 1  dB = A^T dC     B x K x M x N  (B x N x M x K when the
 *                                            weight is held as [N,K], as a
 *                                            tied embedding is: its
 *                                            gradient is dC^T A)
 * (dims=MxKxN when B is 1, else BxMxKxN). A step names the kernel only
 * when its flops are exactly the GEMM's 2 B M K N; a step whose flops are
 * not one GEMM (a biased projection's forward, the bias added; attention's
 * q k^T gradient, dq and dk in one step) keeps its flops= alone and runs
 * at the roofline, as do the steps of a node whose work varies per device
 * (autodiff.h: wl_model_kernel).
 *
 * Invariants: a kernel's 2 B M K N equals its step's flops (within 1e-9
 * relative: the same product in another order of rounding); the extents
 * are positive.
 */
#ifndef STRATA_WL_AUTODIFF_NODES_H
#define STRATA_WL_AUTODIFF_NODES_H

#include "workload/autodiff.h"

/* out[M,N] = a[M,K] @ b[K,N], or batched: b [B,K,N] and a, out B x M rows
 * each (the leading extents of a and out are the rows): `flops` each way
 * (2 B M K N); the extents from the tensors' shapes (b may be held [N,K]). */
uint32_t wl_model_matmul(wl_model *m, const char *label, wl_tensor out, wl_tensor a, wl_tensor b, double flops);
/* out = f(x) elementwise: fwd and bwd flops per element; the vjp reads x. */
uint32_t wl_model_unary(wl_model *m, const char *label, wl_tensor out, wl_tensor x, double fwd_per_elem,
                        double bwd_per_elem);
/* out = a + b (residual): gradients pass through (one flop per element). */
uint32_t wl_model_add(wl_model *m, const char *label, wl_tensor out, wl_tensor a, wl_tensor b);

/* Node (a product of input 0 by input 1, or of input 0 by itself: q k^T)
 * runs through kernel=gemm: batch x M x K x N forward, its gradients as
 * above (b_nk: the weight is held [N,K]), each step only where its flops
 * are the GEMM's. */
void wl_model_gemm(wl_model *m, uint32_t node, uint64_t batch, uint64_t M, uint64_t K, uint64_t N, bool b_nk);
/* wl_model_gemm with the extents of out = a @ b read from the shapes (as
 * wl_model_matmul takes them); nothing when they are not a product's. */
void wl_model_gemm_shapes(wl_model *m, uint32_t node, wl_tensor out, wl_tensor a, wl_tensor b);
/* Whether flops are those of the GEMM batch x M x K x N. */
bool wl_gemm_exact(double flops, uint64_t batch, uint64_t M, uint64_t K, uint64_t N);

#endif
