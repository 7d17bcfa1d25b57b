/*
 * serve_model.h: the shape of a served decoder-only transformer, as much
 * of it as serving needs: its layers, widths, heads, KV heads (GQA) or
 * latent (MLA), experts, vocabulary and dtypes.
 *
 * The boundary to a model-config reader is this struct and its keys: a
 * model is a preset (strata_serve_model_preset), a file of `key = value`
 * lines (strata_serve_model_load), or keys set one by one by name
 * (strata_serve_model_set); a Hugging Face config.json reader fills the
 * same keys (num_hidden_layers -> layers, ...; docs/serving.md).
 *
 * Derived figures (serving.md of the notes, vLLM's kv_cache_interface.py):
 *   KV bytes per token on one rank of TP t:
 *     MHA/GQA  2 x layers x max(1, kv_heads / t) x head_dim x kv_bytes
 *     MLA      (kv_lora_rank + qk_rope_head_dim) x layers x kv_bytes
 *              (one latent per token, replicated on every rank)
 *   parameters: issue 42's count (model_config.h's strata_model_shape_count
 *   on strata_serve_model_shape), so a config.json gives the same count in
 *   `gen transformer` and `serve`; weight bytes on one rank: the whole
 *   count divided by t, less what every rank holds whole (the norms and,
 *   with MLA, its replicated down-projections q_a and kv_a).
 *
 * Invariants after strata_serve_model_check: layers, hidden, heads,
 * kv_heads, head_dim, intermediate, vocab > 0; kv_heads divides heads;
 * top_k <= experts; dtypes have a byte width; weight_block is 0 or 128.
 */
#ifndef STRATA_SERVE_MODEL_H
#define STRATA_SERVE_MODEL_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "trace/op.h"
#include "workload/model_config.h"

typedef struct strata_serve_model {
    char name[64];
    uint32_t layers, hidden, heads, kv_heads, head_dim, intermediate, vocab;
    uint32_t experts, top_k;        /* 0: dense */
    uint32_t moe_intermediate;      /* an expert's width (0: intermediate) */
    uint32_t dense_layers;          /* the first layers keep a dense MLP */
    uint32_t moe_every;             /* layer l >= dense_layers is MoE when moe_every divides l (0, 1: all) */
    uint32_t kv_lora_rank;          /* > 0: MLA */
    uint32_t qk_rope_head_dim;      /* MLA's rope part of the latent */
    uint32_t q_lora_rank;           /* MLA: the query's low rank (0: a full projection) */
    uint32_t qk_nope_head_dim;      /* MLA: q/k width without rope (0: head_dim) */
    uint32_t v_head_dim;            /* MLA: a value head's width (0: head_dim) */
    uint32_t shared_experts;        /* experts every token of an MoE layer goes through */
    uint32_t router_groups;         /* a router with a score-correction bias (noaux_tc): its n_group; 0: none */
    bool gated;                     /* three MLP matrices (swiglu, geglu); false: two (gelu, relu) */
    bool qkv_bias, qk_norm, post_norms; /* q/k/v biases; q and k norms; four norms a layer */
    bool qk_norm_tp;                /* qk_norm over the whole projection, its mean squares all-reduced over the TP
                                     * ranks (MiniMax-M2; serve_qk_norm.h) */
    bool tied_embeddings;
    strata_dtype dtype;             /* weights and activations */
    strata_dtype kv_dtype;          /* the KV cache (NONE: dtype) */
    uint32_t weight_block;          /* under an 8-bit dtype, block-scaled FP8 weights: the scale block's side (128:
                                     * 128 x 128 weight and 1 x 128 activation scales); 0: one scale a tensor */
    uint32_t max_model_len;         /* longest sequence served */
    bool max_model_len_given;       /* a preset, model file or --set gave max_model_len (false: the default 8192) */
    uint32_t max_positions;         /* a config.json's max_position_embeddings where vLLM derives max_model_len
                                     * from it (model_config.h strata_model_config_max_positions): max_model_len
                                     * at most this (0: no bound) */
    uint32_t sliding_window;        /* keys a local layer's query sees, itself included (0: every layer global) */
    uint32_t global_every;          /* with sliding_window: layer l is global when it divides l + 1 (0: none is) */
} strata_serve_model;

/* A model with no keys set (every count 0, a gated MLP, bf16, max_model_len 8192). */
void strata_serve_model_init(strata_serve_model *m);
/* Sets key to value ("layers", "32"); an unknown key or bad value: false
 * with a message naming what was expected. */
bool strata_serve_model_set(strata_serve_model *m, const char *key, const char *value, GError **err);
/* The preset `name` (llama-3-8b, ...), or false listing the known ones. */
bool strata_serve_model_preset(strata_serve_model *m, const char *name, GError **err);
/* Keys from a file of `key = value` lines (# comments): errors FILE:LINE. */
bool strata_serve_model_load(strata_serve_model *m, const char *path, GError **err);
/* A Hugging Face config.json read by model_config.h (issue 42's reader):
 * its layers, d_model, heads, kv_heads, head_dim, ffn, vocab, experts,
 * top_k, moe_ffn, kv_lora_rank, qk_rope_head_dim and tie, under serving's
 * names, and weight_block from a block-scaled FP8 quantization_config; unset ones as the reader resolves them (kv_heads = heads, head_dim
 * = hidden / heads, intermediate = 4 hidden); dtype bf16, max_model_len
 * 8192, or the file's max_position_embeddings where lower and vLLM derives
 * its length from it (max_positions; --set changes them); qk_norm_tp where
 * its model_type is a row of serve_qk_norm.c's table. */
bool strata_serve_model_from_config(strata_serve_model *m, const char *path, GError **err);
/* --set's KEY=VALUE words (NULL-terminated) against the model they made: a key read only beside another
 * (qk_rope_head_dim beside kv_lora_rank, moe_intermediate beside experts, global_every beside sliding_window, ...)
 * where that one is 0: false with an input error naming the word (it would change nothing). */
bool strata_serve_model_check_sets(const strata_serve_model *m, char *const *sets, GError **err);
/* The invariants above; origin names the model in the message. */
bool strata_serve_model_check(const strata_serve_model *m, const char *origin, GError **err);
/* "layers, hidden, ..." and "llama-3-8b, ..." (g_free). */
char *strata_serve_model_keys(void);
char *strata_serve_model_presets(void);

double strata_serve_dtype_bytes(strata_dtype d);
/* Layers that attend to a sliding window (model_shape.h's
 * strata_model_layer_window nonzero). */
uint32_t strata_serve_window_layers(const strata_serve_model *m);
/* KV heads one rank of TP tp holds (vLLM: max(1, kv_heads / tp)). */
uint32_t strata_serve_kv_heads_per_rank(const strata_serve_model *m, uint32_t tp);
uint64_t strata_serve_kv_bytes_per_token(const strata_serve_model *m, uint32_t tp);
/* The shape issue 42's functions take (model_config.h): RMSNorm and rotary
 * positions (no learned table), the MLP gated or not, unset MLA widths and
 * moe_every resolved as strata_model_shape_of resolves them. Parameters
 * are strata_model_shape_count's, MoE layers strata_model_layer_is_moe's. */
void strata_serve_model_shape(const strata_serve_model *m, strata_model_shape *s);
/* Its parameters: strata_model_shape_count's total of that shape. */
double strata_serve_model_params(const strata_serve_model *m);
/* Weight bytes on one rank of TP tp. */
uint64_t strata_serve_weight_bytes(const strata_serve_model *m, uint32_t tp);
/* The same with attention data parallelism over the tp ranks: the
 * attention's projections, the dense MLPs, the shared experts and the
 * embedding tables whole on every rank, the routed experts split (GQA). */
uint64_t strata_serve_weight_bytes_dp(const strata_serve_model *m, uint32_t tp, bool attention_dp);
/* The bytes TensorRT-LLM's CUTLASS fused MoE allocates for one call on
 * `rows` tokens (every rank's under attention DP), its experts split over
 * tp ranks (MoE TP, EP 1): the runner's workspace and the op's
 * src_to_dest map and bf16 output (serve_model.c names the buffers); 0
 * for a model with no MoE layer. */
uint64_t strata_serve_moe_call_bytes(const strata_serve_model *m, uint32_t tp, uint64_t rows);

#endif
