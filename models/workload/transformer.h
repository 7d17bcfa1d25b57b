/*
 * transformer.h: what transformer.c (the generator: parameters, checks,
 * embedding, head, optimizer) shares with transformer_layer.c (one decoder
 * layer: attention in its full-score, flash or MLA form, the dense, gated
 * or mixture-of-experts MLP). Private to the two files.
 *
 * Invariants: with every model key unset (model_config.h) a layer is the
 * 2023 decoder this generator always wrote, op for op.
 */
#ifndef STRATA_WL_TRANSFORMER_H
#define STRATA_WL_TRANSFORMER_H

#include "workload/autodiff_nodes.h"
#include "workload/model_config.h"
#include "workload/moe_load.h"

#define TF_MODEL_AXIS "model"
#define TF_EXPERT_AXIS "expert"
#define TF_CONTEXT_AXIS "context"

typedef struct tf_ctx {
    wl_graph *g;
    wl_model *m;
    strata_dtype dt;  /* activations and compute */
    strata_dtype master; /* of the master weights in the optimizer state (NONE: none) */
    GArray *params;   /* wl_tensor */
    bool sgd;         /* optimizer=sgd: no optimizer state */
} tf_ctx;

/* The step's sizes on one device: B=batch (per device), S=seq,
 * d=d_model, H=heads, V=vocab, T=the model axis (tp: heads, MLP widths
 * and V are split T ways); sp: sequence parallelism (S split T ways
 * outside the parallel blocks); the model's shape; attention as one flash
 * kernel (else the score matrix), causal or not. */
typedef struct tf_dims {
    uint64_t B, S, d, H, V, T;
    bool sp;
    const strata_model_shape *s;
    bool flash, causal;
    /* EP: the expert axis (1: none); moe: the rows of every MoE layer
     * (moe_load.h; NULL: the balanced single-device form, C = ceil(B S k /
     * E)); vary: the expert groups' rows differ (wl_graph_vary is set). CP:
     * the context axis (1: none): S is then the device's S/CP positions. */
    uint64_t EP, CP;
    const struct wl_moe_rows *moe;
    bool vary;
} tf_dims;

/* A parameter (its gradient wanted). */
wl_tensor tf_param(tf_ctx *c, const char *name, uint32_t nd, const uint64_t *dims);
wl_tensor tf_act(tf_ctx *c, const char *name, uint32_t nd, const uint64_t *dims);
/* Under tp, a node whose output (k < 0) or input k's gradient is a partial
 * sum over the model axis. */
void tf_partial(tf_ctx *c, const tf_dims *z, uint32_t node, int k);
/* y = norm(x) * scale (layernorm or RMSNorm). */
void tf_norm(tf_ctx *c, const tf_dims *z, const char *label, wl_tensor y, wl_tensor x, wl_tensor scale);
/* The column-parallel block input (all-gathered under sp), a column-parallel
 * matmul, and the row-parallel block output (all-reduced or
 * reduce-scattered); see transformer.c. */
wl_tensor tf_block_in(tf_ctx *c, const tf_dims *z, wl_tensor x);
uint32_t tf_column(tf_ctx *c, const tf_dims *z, const char *label, wl_tensor out, wl_tensor x, wl_tensor w,
                   double flops);
wl_tensor tf_block_out(tf_ctx *c, const tf_dims *z, uint32_t node, wl_tensor x);

/* Ring attention over the context axis (transformer_ring.c): ctx [B,S,H/T
 * x dv] from qkv (q, k, v heads of width hd; Kh key/value heads here). */
wl_tensor tf_ring_attend(tf_ctx *c, const tf_dims *z, uint64_t l, wl_tensor qkv, uint64_t hd, uint64_t Kh);

/* The expert and context axes (transformer_axes.c): their checks; z's
 * EP, CP, B, S, moe and vary from the plan (rows: the MoE layers' rows,
 * g_free its group_rows); the expert parameters marked for sh. */
struct wl_shard_plan;
struct wl_shard;
bool tf_axes_check(const strata_params *p, const strata_model_shape *s, const struct wl_shard_plan *plan,
                   GError **err);
bool tf_axes_setup(const strata_params *p, const struct wl_shard_plan *plan, tf_dims *z, wl_graph *g,
                   struct wl_moe_rows *rows, GError **err);
void tf_axes_experts(wl_graph *g, struct wl_shard *sh, const GArray *params);

/* Decoder layer l on input h; returns h_{l+1}. */
wl_tensor tf_layer(tf_ctx *c, const tf_dims *z, uint64_t l, wl_tensor h);

#endif
