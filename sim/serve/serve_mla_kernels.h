/*
 * serve_mla_kernels.h: the kernels an engine launches in a DeepSeek-style
 * (MLA attention, MoE MLP) decoder layer beyond those serve_cost.c prices,
 * and where it launches them (replayed in a CUDA graph, or eagerly from
 * Python), as a table of rows looked up by name (an engine's row names
 * one, serve_engine.h's mla_kernels). A row applies only to a model with
 * MLA (kv_lora_rank > 0).
 *
 * serve_cost.c prices an MLA layer as a set of fused ops: one GEMM for the
 * two down-projections, one pass for their two norms, one for the layer's
 * two add + RMSNorm, one routing pass, one flash op for the decode
 * attention, and no RoPE or cache write for MLA. An engine runs more
 * kernels than that: each entry below is one such kernel (or a few of one
 * kind), priced as serve_cost.c prices a pass (one elementwise kernel:
 * its launch, `kernel_launch`, and its bytes at the stream rate), so that a
 * step's extra time is its kernel count times the floor plus bytes that
 * are small at decode.
 *
 * An entry runs in every layer (EVERY), in the MoE layers (MOE), in the
 * dense layers (DENSE) or once a step (STEP); per token it reads `width`
 * elements in the activations' dtype and writes as many (in FP8 where
 * to_fp8). An entry launched eagerly (launch other than GRAPH) also costs
 * the host `calls` calls a layer at the launch kind's host time
 * (serve_mla_kernels.c gives each with its source): vLLM V1's piecewise
 * CUDA graphs run the attention op outside the graphs, so its kernels are
 * launched from Python every step. Entries with kernels = 0 carry only
 * host calls (kernels serve_cost.c prices already, or the op's own entry).
 * The step takes the longer of its GPU time and that host chain (the host
 * runs ahead of the GPU through the graphs and the queue: neither waits on
 * the other inside a forward).
 *
 * An entry marked fp8_only runs only for a model with block-scaled FP8
 * weights (weight_block > 0): the engines quantize a linear's or a bmm's
 * input to FP8 only where its weights are FP8; a BF16 MLA model runs the
 * same layer without them (the wave-34 rows charged them to every MLA
 * model). A row names the row it becomes on Blackwell (sm100: the engine
 * picks other kernels there, serve_engine.c), or NULL: the same.
 *
 * Invariants: a row has at least one entry; widths are those of the enum;
 * the table ends with a NULL name.
 */
#ifndef STRATA_SERVE_MLA_KERNELS_H
#define STRATA_SERVE_MLA_KERNELS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "serve/serve_pass.h"

typedef enum { SERVE_MLA_EVERY, SERVE_MLA_MOE, SERVE_MLA_DENSE, SERVE_MLA_STEP } serve_mla_where;

/* Elements a token: none (a launch only), the hidden size, the KV latent
 * (kv_lora_rank), the rank's query heads' RoPE part (heads x rope), the
 * key's RoPE part (rope), one token's cache row (kv_lora + rope), the
 * rank's absorbed queries (heads x (kv_lora + rope)), their latent part
 * (heads x kv_lora), the rank's attention output (heads x v_head_dim),
 * the router's logits (experts), the rank's queries without RoPE
 * (heads x qk_nope_head_dim: the W_UK product's input); and two widths
 * a step, not a token: the rank's W_UK (heads x qk_nope x kv_lora) and
 * W_UV (heads x kv_lora x v_head) weights, which an engine that
 * dequantizes them every call (SGLang 0.5's gfx942 path) reads whole
 * whatever the batch; and the rank's split-KV partials of Triton MLA
 * decode at 4 splits (heads x 4 x (kv_lora + 1), in fp32 whatever the
 * activations' dtype: stage 1 writes them, stage 2 reads them, 8 B an
 * element, priced on the stage-2 kernel's entry); and the RoPE query and
 * key rotated together in place by one kernel ((heads + 1) x rope). */
typedef enum {
    SERVE_MLA_W_NONE,
    SERVE_MLA_W_HIDDEN,
    SERVE_MLA_W_KV_LORA,
    SERVE_MLA_W_ROPE_Q,
    SERVE_MLA_W_ROPE_K,
    SERVE_MLA_W_CACHE_ROW,
    SERVE_MLA_W_LATENT_Q,
    SERVE_MLA_W_NOPE_LATENT_Q,
    SERVE_MLA_W_V_OUT,
    SERVE_MLA_W_EXPERTS,
    SERVE_MLA_W_NOPE_Q,
    SERVE_MLA_W_UK_WEIGHT,
    SERVE_MLA_W_UV_WEIGHT,
    SERVE_MLA_W_KV_SPLITS4_F32,
    SERVE_MLA_W_ROPE_QK
} serve_mla_width;

/* How an entry is launched: replayed in a CUDA graph (no host time), or
 * eagerly as a PyTorch operator (ATen or a C++ custom op through the
 * dispatcher), a Triton kernel from Python, or a custom op's own entry
 * (the call into the registered op and the replay of the next graph). */
typedef enum { SERVE_MLA_GRAPH, SERVE_MLA_ATEN, SERVE_MLA_TRITON, SERVE_MLA_ENTRY } serve_mla_launch;

typedef struct strata_serve_mla_kernel {
    const char *kernel;      /* what runs and where (its source) */
    serve_mla_where where;   /* the layers it runs in, or once a step */
    uint32_t kernels;        /* GPU kernels it adds to serve_cost.c's */
    serve_mla_width width;   /* elements a token each reads and writes */
    bool to_fp8;             /* writes FP8 (a quantization), else the activations' dtype */
    serve_mla_launch launch; /* GRAPH, or how it is launched eagerly */
    uint32_t calls;          /* host calls a layer (eager only) */
    bool fp8_only;           /* runs only under block-scaled FP8 weights (above) */
} strata_serve_mla_kernel;

typedef struct strata_serve_mla_kernels {
    const char *name;
    const strata_serve_mla_kernel *entries;
    uint32_t n_entries;
    const char *blackwell;   /* the row the engine runs instead on Blackwell (NULL: this one) */
} strata_serve_mla_kernels;

/* What an entry's kernels weigh in a step of `tokens` tokens on one rank:
 * `times` kernels (over the step's layers) each moving `bytes` over
 * `elements` elements (elements >= 1). */
typedef struct strata_serve_mla_pass {
    uint64_t times;
    uint64_t elements;
    double bytes;
} strata_serve_mla_pass;

/* The shapes an entry's width reads (per rank). */
typedef struct strata_serve_mla_shape {
    uint32_t layers, moe_layers;
    uint64_t hidden, kv_lora, rope, heads, v_head, experts;
    double act_bytes; /* the activations' bytes an element */
    uint64_t nope;    /* qk_nope_head_dim */
    bool block_fp8;   /* block-scaled FP8 weights: the fp8_only entries run */
} strata_serve_mla_shape;

/* The row called name, or NULL with an error listing the known ones. */
const strata_serve_mla_kernels *strata_serve_mla_kernels_find(const char *name, GError **err);
/* Entry i of row r in a step of `tokens` tokens (0 tokens: nothing). */
strata_serve_mla_pass strata_serve_mla_kernels_pass(const strata_serve_mla_kernels *r, uint32_t i,
                                                    const strata_serve_mla_shape *s, uint64_t tokens);
/* The GPU seconds row r adds to a step of `tokens` tokens: each entry's
 * kernels priced by pass_fn (serve_pass.h; 0 tokens: 0). */
double strata_serve_mla_kernels_time(const strata_serve_mla_kernels *r, const strata_serve_mla_shape *s,
                                     uint64_t tokens, strata_serve_pass_fn pass_fn, const void *ctx);
/* The kernels row r adds to a step (all layers and the step's own) of a
 * model with block-scaled FP8 weights or not (block_fp8). */
uint64_t strata_serve_mla_kernels_count(const strata_serve_mla_kernels *r, uint32_t layers, uint32_t moe_layers,
                                        bool block_fp8);
/* The host seconds of a step's eager launches under row r (0 for a row
 * launched wholly in graphs). */
double strata_serve_mla_kernels_host(const strata_serve_mla_kernels *r, uint32_t layers, uint32_t moe_layers,
                                     bool block_fp8);
/* The row r becomes on Blackwell (r->blackwell's row; r where it names none). */
const strata_serve_mla_kernels *strata_serve_mla_kernels_on_blackwell(const strata_serve_mla_kernels *r);
/* The host seconds of one eager launch of kind l (GRAPH: 0; serve_mla_kernels.c cites each). */
double strata_serve_mla_host_call_s(serve_mla_launch l);

#endif
