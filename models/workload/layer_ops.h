/*
 * layer_ops.h: the kernels one decoder layer (and the output head) runs on
 * one device for one microbatch, as Megatron-LM's TransformerLayer runs
 * them under Transformer Engine: each a compute op that names its kernel
 * (models/kernel: gemm, flash-attention, flash-attention-bwd, elementwise),
 * so the hardware's kernel models time it. The pipeline generator
 * (pipeline.c) emits them; the list is self-contained so that another
 * generator may use it.
 *
 * A layer's list is its forward ops in order, then its backward in reverse
 * order of the forward: per GEMM Y[M,N] = X[M,K] W[K,N] the input gradient
 * dX = dY W^T (gemm MxNxK, pass 'B') and the weight gradient dW = X^T dY
 * (gemm KxMxN, pass 'W'); the attention's backward and the elementwise
 * backward are 'B'. Zero-bubble's B pass is the 'B' ops, its W pass the
 * 'W' ops (Qi et al., arXiv 2401.10241, §2).
 *
 * Under an expert axis a MoE layer's tokens go to their experts' devices
 * and back by all-to-alls (Megatron's MoEAlltoAllTokenDispatcher): two
 * forward, around the experts, and their two backward.
 *
 * Under dtype=f8 (Transformer Engine's FP8, geom fp8 delayed or current
 * scaling) each TE Linear's gemm comes with TE's casts, as elementwise
 * ops of their real bytes (layer_ops.c): its input cast to FP8 with its
 * transpose (forward), the output gradient's cast and transpose (B), the
 * input's transpose where the forward kept only the cast (W), and the
 * weight's cast and transpose once per step (pass 'S': run before the
 * chunk's first microbatch, as TE caches it while Megatron passes
 * is_first_microbatch=False).
 *
 * Invariants: for a layer, the sum of model_flops over its ops is the
 * layer's share of strata_model_step_flops (3 x (2 x tokens x its weight
 * matrices + its attention products), / t per device), and likewise the
 * head's; every op's dims are positive and fit its kernel row.
 */
#ifndef STRATA_WL_LAYER_OPS_H
#define STRATA_WL_LAYER_OPS_H

#include "workload/model_config.h"
#include "trace/op.h"

/* Transformer Engine's FP8 scaling recipe: delayed (amax history; the
 * casts find the amax as they go) or current (each cast preceded by an
 * amax pass over its input); none: the gemms' dtype without TE's casts. */
typedef enum { WL_FP8_NONE, WL_FP8_DELAYED, WL_FP8_CURRENT } wl_fp8_recipe;

/* What one device runs a layer on. */
typedef struct wl_layer_geom {
    uint64_t b, s;          /* the microbatch's sequences and their length */
    uint64_t t;             /* the tensor axis (heads, ffn, vocab / t) */
    uint64_t ep;            /* the expert axis (1: none): MoE layers' all-to-alls */
    bool sp, flash, causal; /* sequence parallelism; flash attention; a causal mask */
    strata_dtype dt;        /* the GEMMs' dtype (the step's) */
    wl_fp8_recipe fp8;      /* under dt f8: TE's casts (WL_FP8_NONE: none) */
} wl_layer_geom;

typedef struct wl_layer_op {
    char pass;           /* 'F' forward, 'B' input gradient, 'W' weight gradient, 'S' once a step */
    const char *name;    /* static: qkv, qkv.dx, qkv.dw, attn, norm1, ... */
    const char *kernel;  /* a row of models/kernel/kernel.c; NULL for an all-to-all */
    bool all_to_all;     /* not a compute: an all-to-all over `expert` of `bytes` a device */
    uint32_t n_dims;
    uint64_t dims[6];
    char mask[32];       /* "" none, causal, window-W */
    double flops;        /* elementwise: its vector ops (flops=); else 0: the kernel's own count */
    uint64_t bytes;      /* elementwise: its operand bytes (bytes=); all-to-all: its buffer; else 0 */
    strata_dtype dtype;
    double model_flops;  /* its share of strata_model_step_flops on this device */
    bool tp_after;       /* tensor parallelism's collective over model follows it */
} wl_layer_op;

typedef struct wl_layer_ops wl_layer_ops;

/* Layer l's ops (l: its index in the model, for its window and MoE). */
wl_layer_ops *wl_layer_ops_new(const strata_model_shape *s, const wl_layer_geom *g, int64_t l);
/* The head's: the final norm, the output projection (vocabulary-parallel),
 * the cross entropy on the f32 logits. */
wl_layer_ops *wl_layer_ops_new_head(const strata_model_shape *s, const wl_layer_geom *g);
/* The embedding on the first stage: the lookup (a gather of T rows of d,
 * vocabulary-parallel: tensor parallelism's all-reduce follows it) and,
 * in W, its gradient's scatter-add into the table's rows. */
wl_layer_ops *wl_layer_ops_new_embed(const strata_model_shape *s, const wl_layer_geom *g);
void wl_layer_ops_free(wl_layer_ops *o);
uint32_t wl_layer_ops_len(const wl_layer_ops *o);
const wl_layer_op *wl_layer_ops_at(const wl_layer_ops *o, uint32_t i);
/* The sum of the ops' kernel flops (the kernels' own counts; elementwise
 * flops=) and of their model_flops over the ops of pass (0: every pass). */
void wl_layer_ops_flops(const wl_layer_ops *o, char pass, double *kernel, double *model);

#endif
