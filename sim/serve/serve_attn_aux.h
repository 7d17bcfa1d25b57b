/*
 * serve_attn_aux.h: the small kernels an engine runs around a layer's
 * attention kernel for a GQA/MHA model (RoPE on q and k, the new k and v
 * written into the KV cache, layout copies of q, k, v or the output), as
 * a table of rows looked up by name (the engine's row names one,
 * serve_engine.h). Without a row, serve_cost.c runs one fused pass over
 * the prefill tokens' q, k and v (TensorRT-LLM's QKV preprocessing) and
 * nothing for decodes.
 *
 * A row is a list of passes, each one kernel per layer on one rank: over
 * the step's prefill tokens, its decode tokens (padded dummies included)
 * or all of them, reading `q` query heads' and `kv` KV heads' worth of
 * head_dim elements per token in the activations' dtype and writing as
 * many (in the KV cache's dtype when it writes the cache), and run only
 * when the step's prefill contexts (with `above_tokens`, its prefill
 * tokens) sum to more than `above` tokens (0: always). Rows and their
 * sources are in serve_attn_aux.c.
 *
 * Invariants: a row has at least one pass; a pass reads and writes the
 * same element count; the table ends with a NULL name.
 */
#ifndef STRATA_SERVE_ATTN_AUX_H
#define STRATA_SERVE_ATTN_AUX_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum { SERVE_AUX_ALL, SERVE_AUX_PREFILL, SERVE_AUX_DECODE } serve_aux_tokens;

typedef struct strata_serve_aux_pass {
    const char *kernel;      /* what runs it and where (its source) */
    serve_aux_tokens tokens; /* the tokens it runs over */
    uint32_t q, kv;          /* query and KV heads a token, read and written */
    bool to_cache;           /* writes in the KV cache's dtype */
    uint64_t above;          /* runs only when the step's prefill contexts sum above this (0: always) */
    bool above_tokens;       /* `above` counts the step's prefill tokens, not their contexts */
} strata_serve_aux_pass;

typedef struct strata_serve_attn_aux {
    const char *name;
    const strata_serve_aux_pass *passes;
    uint32_t n_passes;
} strata_serve_attn_aux;

/* One layer's auxiliary pass on one rank: its elements (read, and as many
 * written) and its bytes. */
typedef struct strata_serve_aux_cost {
    uint64_t elements;
    double bytes;
} strata_serve_aux_cost;

/* The row called name, or NULL with an error listing the known ones. */
const strata_serve_attn_aux *strata_serve_attn_aux_find(const char *name, GError **err);
/* Pass i of row a for a step with `prefill` prefill and `decode` decode
 * tokens on the rank whose prefill contexts sum to `context`, with
 * q_heads and kv_heads on the rank of head_dim, act and cache bytes an
 * element; elements 0 when the pass does not run. */
strata_serve_aux_cost strata_serve_attn_aux_pass(const strata_serve_attn_aux *a, uint32_t i, uint64_t prefill,
                                                 uint64_t decode, uint64_t context, uint64_t q_heads,
                                                 uint64_t kv_heads, uint64_t head_dim, double act, double cache);

#endif
