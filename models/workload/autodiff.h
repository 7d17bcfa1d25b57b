/*
 * autodiff.h: reverse-mode differentiation of a small forward program, with
 * rematerialization, emitting the training step's computes into a wl_graph.
 *
 * A model is a list of nodes `out = f(ins)` in forward order, each in a
 * group (a layer; groups that may be rematerialized are marked). For each
 * input a node declares its vector-Jacobian product: the flops of the
 * gradient with respect to that input and the tensors it needs (besides the
 * output's gradient). wl_model_emit() then writes, like jax.grad under jit:
 *  1. the forward pass, node by node;
 *  2. the backward pass in reverse: for each node, the gradient of each input
 *     that needs one (params and what depends on them), accumulated when a
 *     tensor feeds several nodes;
 *  3. with remat, before a group's backward, the recomputation of the
 *     outputs of that group that were not saved and that a gradient (or
 *     another recomputation) reads (dead-code elimination, as
 *     jax.checkpoint's partial evaluation and XLA's DCE drop the rest):
 *     `full` saves only what
 *     crosses group boundaries (jax.checkpoint of each layer), `dots` also
 *     saves matmul outputs (checkpoint_policies.dots_saveable), the other
 *     policies of wl_remat_policy_find() what they name, some in host
 *     memory (wl_model_remat_names); with or
 *     without remat, the group's all-gathers again (their outputs are never
 *     saved).
 * What is saved stays live from forward to backward; the rest is freed after
 * its last forward use (graph.h's liveness) and recomputed.
 *
 * For sharded programs: hooks run around each group's forward and backward
 * pass (to gather a layer's parameters ahead of use and reduce its
 * gradients after), a hook may substitute tensors for the pass (the steps
 * then read the gathered copy where the model reads the parameter), and a
 * node may all-reduce its output (forward and recomputation) or the
 * gradient of an input (backward) over a mesh axis, and a node may be an
 * all-gather or a reduce-scatter (sequence parallelism), whose gradient is
 * the converse collective.
 *
 * Invariants: the last node is the loss (its gradient is the seed, 1); a
 * tensor's gradient is named "d_NAME", a recomputed tensor "NAME_remat";
 * gradients have the dtype and shape of their tensor.
 */
#ifndef STRATA_WL_AUTODIFF_H
#define STRATA_WL_AUTODIFF_H

#include "workload/graph.h"
#include "workload/remat_policy.h"

typedef struct wl_model wl_model;

wl_model *wl_model_new(wl_graph *g);
void wl_model_free(wl_model *m);

/* Tensors that need a gradient (parameters). Node outputs inherit it. */
void wl_model_requires_grad(wl_model *m, wl_tensor t);
/* Subsequent nodes go in `group`; remat applies to it when rematerializable. */
void wl_model_group(wl_model *m, int group, bool rematerializable);

/* out = f(ins). Returns the node index. */
uint32_t wl_model_node(wl_model *m, const char *label, wl_tensor out, const wl_tensor *ins, uint32_t n_ins,
                       double flops, bool is_dot);
/* The most tensors one gradient may read. */
#define WL_VJP_MAX_NEEDS 255u

/* Gradient with respect to input k: flops, and the n tensors it reads
 * (n <= WL_VJP_MAX_NEEDS). */
void wl_model_vjp(wl_model *m, uint32_t node, uint32_t k, double flops, const wl_tensor *needs, uint32_t n);

/* The kernels that run node's forward (and recomputation) and its
 * gradient: kernel=fwd / kernel=bwd dims=DIMS [mask=MASK] on their steps
 * (wl_graph_kernel; names are static text, mask is copied; bwd NULL: the
 * gradients name none). bwd is one kernel for all of the node's gradients:
 * it goes on the first input's gradient that has flops (flash attention's
 * backward computes dq, dk and dv at once; the others' steps carry no
 * flops and name no kernel). A node whose work varies per device
 * (wl_model_vary) names no kernel on any step: the extents would be the
 * largest device's. */
void wl_model_kernel(wl_model *m, uint32_t node, const char *fwd, const char *bwd, uint32_t n_dims,
                     const uint64_t *dims, const char *mask);
/* The kernel of node's gradient with respect to input k alone (a matmul's
 * two gradients are two GEMMs of their own extents; autodiff_nodes.h). */
void wl_model_vjp_kernel(wl_model *m, uint32_t node, uint32_t k, const char *kernel, uint32_t n_dims,
                         const uint64_t *dims);
/* The flops of node's forward (k < 0) or of its gradient for input k (0
 * when it has no input k). */
double wl_model_flops(const wl_model *m, uint32_t node, int k);
/* The graph the model emits into. */
wl_graph *wl_model_graph(const wl_model *m);

/* Sequence parallelism's collectives over mesh axis `axis` (a string that
 * outlives m), each a node of its own with one input x, which must feed no
 * other node (its gradient is the collective's alone).
 * out = all-gather(x) (out holds the group's x in turn); its gradient is the
 * reduce-scatter of out's gradient. Its output is never saved for the
 * backward pass (whatever remat says): before the group's gradients the
 * backward pass gathers x again, so only the shard x stays live between the
 * passes. */
uint32_t wl_model_all_gather(wl_model *m, wl_tensor out, wl_tensor x, const char *axis);
/* out = reduce-scatter(x) (out is the device's part of the sum of the
 * group's x); its gradient is the all-gather of out's gradient. When a dot
 * writes x (a row-parallel matmul's partial sums), out is that dot's output
 * as JAX's jaxpr holds it, sharded: the remat policies judge out by the
 * dot's kind and checkpoint name (saved or offloaded where the dot's
 * output would be), and never save x for it. */
uint32_t wl_model_reduce_scatter(wl_model *m, wl_tensor out, wl_tensor x, const char *axis);

/* out = all-to-all(x) over axis (expert parallelism's dispatch and
 * combine); its gradient is the all-to-all of out's gradient. */
uint32_t wl_model_all_to_all(wl_model *m, wl_tensor out, wl_tensor x, const char *axis);
/* out = x of the previous rank of axis (a collective-permute, shift +1:
 * ring attention's KV block passed on), issued on stream `ring` from where
 * main is so that it overlaps main's next steps; main waits for it before
 * the first step that reads out. Never saved: before the group's gradients
 * it is passed again on stream `regather`; its gradient is the permute of
 * out's gradient back (shift -1: dKV) on stream `ring`, added to x's own
 * there, main waiting for it before the first step that reads it. */
uint32_t wl_model_ring_pass(wl_model *m, wl_tensor out, wl_tensor x, const char *axis);
/* The node's steps (forward, recomputation, gradients) run on each device
 * with the work of its rows (wl_graph_vary): an expert group's load. */
void wl_model_vary(wl_model *m, uint32_t node);

/* Emit forward and backward into the graph. Parameter gradients get `grad_flags`
 * (WL_OUTPUT when the step returns them). */
void wl_model_emit(wl_model *m, wl_remat remat, unsigned grad_flags);
/* The gradient tensor of t after emit (WL_NONE if none flowed). */
wl_tensor wl_model_grad(const wl_model *m, wl_tensor t);

/* Around each group's pass: begin before its first step (backward: before
 * its recomputation), end after its last step. */
typedef struct wl_model_hooks {
    void (*begin)(void *ud, int group, bool backward);
    void (*end)(void *ud, int group, bool backward);
} wl_model_hooks;
void wl_model_set_hooks(wl_model *m, const wl_model_hooks *hooks, void *ud);
/* During the current group's pass (call from begin), steps read `to` where
 * the model reads `from`; with an event (recorded on another stream), main
 * waits for it right before its first step that reads `to` (as it does for
 * a regathered tensor). */
void wl_model_substitute(wl_model *m, wl_tensor from, wl_tensor to, const char *event);
/* The groups in forward order, each once (int). */
void wl_model_groups(const wl_model *m, GArray *out);
/* Calls add(ud, group, p) for each read of a parameter p (a tensor needing
 * a gradient that no node writes) by the nodes of the forward pass, or of
 * the backward pass including the recomputation under remat, in the pass'
 * order (a parameter read twice is visited twice): node by node backward,
 * a recomputed node's reads beside its gradients'; with as_emitted, in the
 * order the steps read them: each group's recomputation (forward order)
 * before its gradients. */
typedef void (*wl_model_param_fn)(void *ud, int group, wl_tensor param);
void wl_model_pass_params(const wl_model *m, bool backward, wl_remat remat, bool as_emitted, wl_model_param_fn add,
                          void *ud);
/* All-reduce the node's output over `axis` (a string that outlives m) after
 * it is computed, in the forward pass and in a recomputation. */
void wl_model_reduce_out(wl_model *m, uint32_t node, const char *axis);
/* All-reduce the gradient with respect to input k over `axis` right after
 * the node's backward computes it. */
void wl_model_reduce_grad(wl_model *m, uint32_t node, uint32_t k, const char *axis);


/* Node's checkpoint name (jax.ad_checkpoint.checkpoint_name; static
 * text), which a policy's names select. */
void wl_model_checkpoint_name(wl_model *m, uint32_t node, const char *name);
/* Marks a dot node as one with batch dimensions (attention's products,
 * per-expert matmuls): dots_with_no_batch_dims_saveable recomputes it. */
void wl_model_batch_dot(wl_model *m, uint32_t node);
/* The checkpoint names saved besides what the remat kind saves, on the
 * device (save) and in host memory (offload; comma-separated, copied;
 * NULL: none). An offloaded output is copied to a host buffer NAME_host on
 * stream `offload` after main records offK.go behind its step; before its
 * group's backward pass main records rlK.go (a group ahead: the next
 * group's reloads are issued when a group's pass starts) and the offload
 * stream copies it back into NAME_reload, which main waits for (rlK.done)
 * and the gradients read (jax's save_and_offload_only_these_names with
 * offload_src device, offload_dst pinned_host). */
void wl_model_remat_names(wl_model *m, const char *save, const char *offload);

#endif
