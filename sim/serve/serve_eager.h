/*
 * serve_eager.h: the host's chain of an eager forward pass, a step that
 * an engine runs outside any CUDA graph (one with prefill tokens, or a
 * decode batch above its largest captured one: serve_graph_limit.h), its
 * PyTorch ops issued one at a time from Python. A row (named by the engine row's
 * eager field, serve_eager.c) counts the host calls of a GQA decoder layer's halves by
 * how each is launched (serve_mla_kernels.h's kinds: an ATen operator, a
 * Triton kernel from Python, a registered custom op's entry), each kind at
 * its host time (strata_serve_mla_host_call_s); the step's chain is the
 * layers' calls plus the step's own (embedding, final norm, LM head,
 * sampling).
 *
 * To the counted calls a row adds the Python a layer runs that launches
 * nothing (module calls, the attention backend's dispatch, the batch's
 * fields), from a measured eager step less its counted calls; an MLA
 * model's layer is taken whole from a measured eager forward where a row has one
 * (mla_layer_s), else counted call by call where the row counts it (mla,
 * mla_moe, mla_dense: vLLM 0.7.3 V0's DeepSeek layer, "vllm-0.7").
 *
 * The GPU runs behind the host: such a step takes the longer of its GPU
 * time and its host chain (the launches outrun the kernels only when the
 * kernels are longer).
 *
 * Invariants: the chain is >= 0; an engine without a row gives 0; an MLA
 * model's chain is its row's mla_layer_s a layer where that is > 0, else its
 * counted MLA calls (0 where the row counts none).
 */
#ifndef STRATA_SERVE_EAGER_H
#define STRATA_SERVE_EAGER_H

#include <stdint.h>
#include "serve/serve_model.h"

/* Host calls by kind. */
typedef struct strata_serve_eager_calls {
    uint32_t aten, triton, entry;
} strata_serve_eager_calls;

typedef struct strata_serve_eager {
    const char *name;                 /* what engine rows name it by (serve_engine.h's eager) */
    strata_serve_eager_calls attn;    /* a layer's norms, projections, RoPE and attention */
    strata_serve_eager_calls qk_norm; /* added where the model norms q and k */
    strata_serve_eager_calls dense;   /* a dense layer's MLP */
    strata_serve_eager_calls moe;     /* an MoE layer's router, top-k and fused experts */
    strata_serve_eager_calls tp;      /* a layer's TP all-reduces (tp > 1) */
    strata_serve_eager_calls step;    /* once a step: embedding, final norm, LM head, sampling */
    double python_layer_s;            /* a GQA layer's Python that the counts above leave out, s */
    double mla_layer_s;               /* an MLA model's eager layer, measured whole (its calls not counted), s */
    strata_serve_eager_calls mla;       /* else an MLA layer's norms, projections, RoPE and attention, counted */
    strata_serve_eager_calls mla_moe;   /* an MLA model's MoE layer (router, top-k, experts, shared expert) */
    strata_serve_eager_calls mla_dense; /* an MLA model's dense layer's MLP */
} strata_serve_eager;

/* The row called name, or NULL (name NULL or unknown). An engine row names
 * its own (serve_engine.h's eager; strata_serve_engine_eager). */
const strata_serve_eager *strata_serve_eager_find(const char *name);
/* The seconds of a calls' launches. */
double strata_serve_eager_calls_s(strata_serve_eager_calls c);
/* The host chain of one eager forward of model m at tp ranks, moe_layers of
 * its layers MoE (r NULL: 0; an MLA model: r's mla_layer_s a layer, else its
 * mla counts with the step's and the TP all-reduces'). */
double strata_serve_eager_host(const strata_serve_eager *r, const strata_serve_model *m, uint32_t moe_layers,
                               uint32_t tp);

#endif
