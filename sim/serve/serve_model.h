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
 *   weights: embedding (and an untied head) V x hidden; per layer the
 *   attention projections hidden x (heads + 2 kv_heads) x head_dim and
 *   heads x head_dim x hidden, the MLP 3 x hidden x intermediate (an MoE
 *   layer: experts x 3 x hidden x moe_intermediate plus a router hidden x
 *   experts), two norms; divided by t on each rank.
 *
 * Invariants after strata_serve_model_check: layers, hidden, heads,
 * kv_heads, head_dim, intermediate, vocab > 0; kv_heads divides heads;
 * top_k <= experts; dtypes have a byte width.
 */
#ifndef STRATA_SERVE_MODEL_H
#define STRATA_SERVE_MODEL_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "trace/op.h"

typedef struct strata_serve_model {
    char name[64];
    uint32_t layers, hidden, heads, kv_heads, head_dim, intermediate, vocab;
    uint32_t experts, top_k;        /* 0: dense */
    uint32_t moe_intermediate;      /* an expert's width (0: intermediate) */
    uint32_t dense_layers;          /* the first layers keep a dense MLP */
    uint32_t moe_every;             /* layer l >= dense_layers is MoE when moe_every divides l (0, 1: all) */
    uint32_t kv_lora_rank;          /* > 0: MLA */
    uint32_t qk_rope_head_dim;      /* MLA's rope part of the latent */
    bool tied_embeddings;
    strata_dtype dtype;             /* weights and activations */
    strata_dtype kv_dtype;          /* the KV cache (NONE: dtype) */
    uint32_t max_model_len;         /* longest sequence served */
} strata_serve_model;

/* A model with no keys set (every count 0, bf16, max_model_len 8192). */
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
 * names; unset ones as the reader resolves them (kv_heads = heads, head_dim
 * = hidden / heads, intermediate = 4 hidden); dtype bf16, max_model_len
 * 8192 (--set changes them). */
bool strata_serve_model_from_config(strata_serve_model *m, const char *path, GError **err);
/* The invariants above; origin names the model in the message. */
bool strata_serve_model_check(const strata_serve_model *m, const char *origin, GError **err);
/* "layers, hidden, ..." and "llama-3-8b, ..." (g_free). */
char *strata_serve_model_keys(void);
char *strata_serve_model_presets(void);

double strata_serve_dtype_bytes(strata_dtype d);
/* KV heads one rank of TP tp holds (vLLM: max(1, kv_heads / tp)). */
uint32_t strata_serve_kv_heads_per_rank(const strata_serve_model *m, uint32_t tp);
uint64_t strata_serve_kv_bytes_per_token(const strata_serve_model *m, uint32_t tp);
/* Layers whose MLP is a mixture of experts (model_config.h's rule). */
uint32_t strata_serve_moe_layers(const strata_serve_model *m);
/* Parameters of the whole model, and weight bytes on one rank of TP tp. */
double strata_serve_model_params(const strata_serve_model *m);
uint64_t strata_serve_weight_bytes(const strata_serve_model *m, uint32_t tp);

#endif
