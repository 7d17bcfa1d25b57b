/*
 * model_config.h: a decoder model's shape as people write it: the keys a
 * generator takes by name (`kv_heads=8 ffn=14336 mlp=swiglu ...`), and the
 * reader of a Hugging Face config.json (`config=FILE`) that turns one into
 * those keys.
 *
 * The keys. A generator that models a decoder (gen transformer; the
 * pipeline and serving generators may too) declares `layers`, `d_model`,
 * `heads` and `vocab` itself (its own defaults) and adds the rows of
 * STRATA_MODEL_KEYS (below) to its parameter table with
 * STRATA_MODEL_PARAM_DEF: each such key is unset by default, so a trace's
 * header records only what was given, and strata_model_shape_of() resolves
 * what is unset to the 2023 GPT-style decoder (a 4d GELU MLP, layernorm,
 * learned positions, tied embeddings, multi-head attention). A config file
 * sets keys as a preset does: keys given on the command line win.
 *
 * The reader. strata_model_config_load() parses config.json with
 * json-glib and maps each key through a table (model_config.c: one row per
 * Hugging Face key, saying which strata key it sets and how) after the
 * family's row (one per `model_type`: the defaults of transformers'
 * configuration_*.py for keys a file may omit, and what the architecture
 * fixes whatever the keys say, e.g. Qwen 2's q/k/v biases). A nested
 * `text_config` (Gemma 3, Llama 4) is read as the model. Keys no row knows
 * are notes (the model is read without them); a known key with a bad value
 * (a negative width, a string where a count belongs, an activation the
 * generator has no model of) is an error naming the file and the key, and
 * so is a model_type no row reads (an architecture strata cannot model,
 * such as a linear-attention or Mamba hybrid, names what it lacks) and a
 * layer_types entry other than full or sliding attention. Python's bare
 * Infinity and NaN (not JSON) are read as null, with a note.
 *
 * Invariants: a loaded config's values are "key=value" texts whose keys
 * are parameter names of this file or layers/d_model/heads/vocab, each
 * once; a resolved shape has every count >= 1 where the model uses it
 * (kv_heads divides heads; head_dim, ffn >= 1; experts 0 or >= top_k >= 1).
 */
#ifndef STRATA_MODEL_CONFIG_H
#define STRATA_MODEL_CONFIG_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/params.h"

extern const char *const strata_model_mlp_choices[];  /* gelu relu swiglu geglu */
extern const char *const strata_model_norm_choices[]; /* layernorm rmsnorm */
extern const char *const strata_model_pos_choices[];  /* learned rope */

/* X(name, TYPE, choices, description): the shape keys beyond layers,
 * d_model, heads and vocab; each unset by default (the default it resolves
 * to is in the description). */
#define STRATA_MODEL_KEYS(X)                                                                                       \
    X(kv_heads, INT, NULL, "key/value heads, grouped-query attention (HF num_key_value_heads; default heads)")   \
    X(head_dim, INT, NULL, "width of one attention head (HF head_dim; default d_model/heads)")                   \
    X(ffn, INT, NULL, "MLP width (HF intermediate_size; default 4*d_model)")                                    \
    X(mlp, STRING, strata_model_mlp_choices,                                                                     \
      "MLP: gelu or relu (two matrices), swiglu or geglu (gated: three; HF hidden_act silu / gelu*); default gelu") \
    X(norm, STRING, strata_model_norm_choices, "layernorm or rmsnorm (default layernorm)")                       \
    X(pos, STRING, strata_model_pos_choices, "learned positions (a [seq,d] parameter) or rope (default learned)") \
    X(tie, BOOL, NULL, "output projection tied to the embedding (HF tie_word_embeddings; default true)")        \
    X(qkv_bias, BOOL, NULL, "biases on the q, k and v projections (Qwen 2; default false)")                     \
    X(qk_norm, BOOL, NULL, "RMSNorm of each head's q and k (Qwen 3, Gemma 3; default false)")                   \
    X(post_norms, BOOL, NULL, "norms after attention and MLP too, four a layer (Gemma 2 and 3; default false)")  \
    X(experts, INT, NULL, "routed experts of each MoE layer (HF num_local_experts, num_experts, n_routed_experts; " \
                          "default 0: dense)")                                                                   \
    X(top_k, INT, NULL, "experts each token is routed to (HF num_experts_per_tok); needed with experts")        \
    X(shared_experts, INT, NULL, "experts every token goes through (HF n_shared_experts; default 0)")           \
    X(moe_ffn, INT, NULL, "width of one expert's MLP (HF moe_intermediate_size; default ffn)")                  \
    X(dense_layers, INT, NULL, "the first layers keep a dense MLP (HF first_k_dense_replace; default 0)")        \
    X(moe_every, INT, NULL, "layer l >= dense_layers is MoE when moe_every divides l (HF moe_layer_freq, "       \
                            "decoder_sparse_step; default 1)")                                                   \
    X(q_lora_rank, INT, NULL, "MLA: rank of the query's low-rank projection (0: a full projection; default 0)")  \
    X(kv_lora_rank, INT, NULL, "MLA: rank of the compressed key/value (default 0: no MLA)")                     \
    X(qk_nope_head_dim, INT, NULL, "MLA: per-head query/key width without rotary (default head_dim)")           \
    X(qk_rope_head_dim, INT, NULL, "MLA: per-head query/key width with rotary (default 0)")                     \
    X(v_head_dim, INT, NULL, "MLA: per-head value width (default head_dim)")                                    \
    X(sliding_window, INT, NULL, "keys a local layer's query sees, itself included: a causal sliding window "     \
                                 "(HF sliding_window; default 0: every layer global)")                          \
    X(global_every, INT, NULL, "with sliding_window: layer l is global when global_every divides l+1 (Gemma 2: " \
                               "2, Gemma 3: 6; default 0: every layer local)")                                  \
    X(config, STRING, NULL, "a Hugging Face config.json whose keys set the ones above (given keys win)")

#define STRATA_MODEL_PARAM_DEF(name, type, choices, description) \
    {#name, STRATA_PARAM_##type, NULL, description, choices},

typedef enum { STRATA_MLP_GELU, STRATA_MLP_RELU, STRATA_MLP_SWIGLU, STRATA_MLP_GEGLU } strata_model_mlp;

/* A decoder's shape with every default resolved. */
typedef struct strata_model_shape {
    int64_t layers, d_model, heads, kv_heads, head_dim, ffn, vocab;
    strata_model_mlp mlp;
    bool gated; /* swiglu, geglu: three matrices */
    bool rmsnorm, rope, tie, qkv_bias, qk_norm, post_norms;
    int64_t experts, top_k, shared_experts, moe_ffn, dense_layers, moe_every;
    /* MLA when kv_lora_rank > 0: q and k heads are qk_nope + qk_rope wide, v heads v_head_dim. */
    int64_t q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
    int64_t sliding_window, global_every; /* 0, 0: every layer global */
} strata_model_shape;

/* The shape of p (a table with layers, d_model, heads, vocab and the
 * STRATA_MODEL_KEYS rows); false with an error naming `owner` and the key
 * when the keys do not make a model (kv_heads not dividing heads, experts
 * without top_k, top_k above experts, ...). */
bool strata_model_shape_of(const strata_params *p, const char *owner, strata_model_shape *s, GError **err);
/* The key a model key is read only beside, for keys read only where
 * another is above 0 (MLA's beside kv_lora_rank, an MoE's beside experts,
 * global_every beside sliding_window), with what that parent makes (*what);
 * NULL for the others. A generator refuses such a key given without its
 * parent (workload.c): alone it changed nothing at exit 0. */
const char *strata_model_key_parent(const char *key, const char **what);
/* The sliding window of layer l's attention (0: global). */
int64_t strata_model_layer_window(const strata_model_shape *s, int64_t l);
/* Whether layer l's MLP is a mixture of experts. */
bool strata_model_layer_is_moe(const strata_model_shape *s, int64_t l);
/* How many layers are MoE, in closed form (a config.json may declare
 * 2^31 - 1 layers). */
int64_t strata_model_moe_layers(const strata_model_shape *s);
/* Parameters: all of them, and those a token uses (top_k routed experts);
 * `seq` counts the learned positions' table. */
void strata_model_shape_count(const strata_model_shape *s, int64_t seq, double *total, double *active);
/* One training step's flops as MaxText's calculate_tflops_training_per_device
 * (src/MaxText/maxtext_utils.py) and Megatron's num_floating_point_operations
 * count them: 3 x (2 x tokens x the active matmul parameters, the output
 * projection included, the input embedding not) + 3 x the attention's two
 * products (2 B S^2 H (dqk + dv) forward, half with a causal mask; a local
 * layer's causal window W < S, 2 B (S W - W^2 / 2) H (dqk + dv), as
 * MaxText's calculate_mixed_attention_model_tflops_training_per_device). */
double strata_model_step_flops(const strata_model_shape *s, int64_t batch, int64_t seq, bool causal);

/* A config.json read. */
typedef struct strata_model_config strata_model_config;
strata_model_config *strata_model_config_load(const char *path, GError **err);
void strata_model_config_free(strata_model_config *c);
/* Its model_type (the family row it was read with). */
const char *strata_model_config_family(const strata_model_config *c);
/* "key=value" of each key it sets, NULL-terminated. */
const char *const *strata_model_config_values(const strata_model_config *c);
/* The side of its block-scaled FP8 weights' scale blocks (quantization_config
 * with quant_method fp8 and weight_block_size [128, 128]: 128); 0 otherwise. */
uint32_t strata_model_config_weight_block(const strata_model_config *c);
/* The max_model_len vLLM derives from it (model_max_len.h: its
 * max_position_embeddings, scaled by rope_scaling's factor unless su,
 * longrope or llama3; yarn's from original_max_position_embeddings); 0 where
 * it gives no length or vLLM refuses its rope_scaling. */
uint32_t strata_model_config_max_positions(const strata_model_config *c);
/* Why vLLM refuses its rope_scaling ("key 'rope_scaling': ..."), or NULL. */
const char *strata_model_config_max_len_problem(const strata_model_config *c);
/* One line per key it ignored ("FILE: key 'K' ...: ignored"), NULL-terminated. */
const char *const *strata_model_config_notes(const strata_model_config *c);
/* The model_type values it reads ("llama, mistral, ...", g_free). */
char *strata_model_config_families(void);

#endif
