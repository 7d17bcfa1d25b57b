/*
 * model_config.c: the reader of Hugging Face config.json files and the
 * decoder shape they set (model_config.h).
 *
 * Two tables. `families`: one row per model_type, with the defaults of
 * transformers' configuration class for the keys a file may omit
 * (src/transformers/models/NAME/configuration_NAME.py: LlamaConfig,
 * MistralConfig, MixtralConfig, Qwen2Config, Qwen2MoeConfig, Qwen3Config,
 * Qwen3MoeConfig, Gemma2Config, Gemma3TextConfig, GptOssConfig,
 * Llama4TextConfig; DeepseekV2Config and DeepseekV3Config from the model
 * repositories' configuration_deepseek.py, Kimi K2's too; MiniMax-M2's
 * config.json values) and what the family's modeling
 * file fixes whatever the keys say (RMSNorm and rotary positions for all;
 * Qwen 2's q/k/v biases, hard-coded in Qwen2Attention; Qwen 3's and
 * Gemma 3's q_norm/k_norm; Gemma's four norms a layer; Gemma 2's local
 * layer every other one, Gemma 3's five of six) and whether its attention
 * applies config.sliding_window (MistralAttention, MixtralAttention,
 * Gemma2Attention, Gemma3Attention; Llama, Qwen and DeepSeek do not, or
 * only with use_sliding_window). `keys`: one row
 * per config.json key, what it sets and how its value is read; keys that
 * change nothing a training step's memory or time depends on (token ids,
 * rope_theta, epsilons, dropout, ...) are rows of kind IGNORE, and keys
 * for what strata does not model (multi-token prediction, fp8 weights, a
 * vision tower, a sliding window in a family whose attention has none)
 * are rows of kind NOTE: read, reported, left out.
 *
 * Adding an architecture is one row of `families` (docs/extending.md), and
 * a key it brings one row of `keys` (or of `renamed`, where one family
 * reads a key as another strata key). A model_type with no row is refused:
 * read with another family's defaults it would be a guess (`refused` names
 * what the architectures strata knows it cannot model lack).
 */
#include "workload/model_config.h"
#include <json-glib/json-glib.h>
#include <string.h>
#include "core/error.h"
#include "core/readall.h"
#include "workload/json_dup_key.h"
#include "workload/json_python_words.h"
#include "workload/json_wide_int.h"
#include "workload/model_config_refused.h"
#include "workload/model_max_len.h"

/* The largest config.json read (Hugging Face's are a few kilobytes). */
#define MODEL_CONFIG_MAX_FILE ((size_t)16 << 20)

const char *const strata_model_mlp_choices[] = {"gelu", "relu", "swiglu", "geglu", NULL};
const char *const strata_model_norm_choices[] = {"layernorm", "rmsnorm", NULL};
const char *const strata_model_pos_choices[] = {"learned", "rope", NULL};

typedef struct family {
    const char *model_type;
    const char *defaults; /* strata keys the class defaults to, before the file's */
    const char *fixed;    /* what the architecture fixes, after the file's */
    const char *nested;   /* a key holding the language model's own config (NULL: none) */
    bool sliding;         /* its attention applies sliding_window */
    const char *inner;    /* the class the nested config is built as, whatever model_type it gives (NULL: none) */
} family;

#define DECODER "norm=rmsnorm,pos=rope"
static const family families[] = {
    {"llama", "layers=32,d_model=4096,heads=32,ffn=11008,vocab=32000,mlp=swiglu,tie=false", DECODER, NULL, false,
     NULL},
    {"mistral", "layers=32,d_model=4096,heads=32,kv_heads=8,ffn=14336,vocab=32000,mlp=swiglu,tie=false", DECODER,
     NULL, true, NULL},
    {"mixtral",
     "layers=32,d_model=4096,heads=32,kv_heads=8,ffn=14336,vocab=32000,mlp=swiglu,tie=false,experts=8,top_k=2",
     DECODER, NULL, true, NULL},
    {"qwen2", "layers=32,d_model=4096,heads=32,ffn=22016,vocab=151936,mlp=swiglu,tie=false",
     DECODER ",qkv_bias=true", NULL, false, NULL},
    {"qwen3", "layers=32,d_model=4096,heads=32,head_dim=128,ffn=22016,vocab=151936,mlp=swiglu,tie=false",
     DECODER ",qk_norm=true", NULL, false, NULL},
    {"qwen3_moe",
     "layers=24,d_model=2048,heads=32,kv_heads=4,head_dim=128,ffn=6144,vocab=151936,mlp=swiglu,tie=false,"
     "experts=128,top_k=8,moe_ffn=768",
     DECODER ",qk_norm=true", NULL, false, NULL},
    {"gemma2",
     "layers=26,d_model=2304,heads=8,kv_heads=4,head_dim=256,ffn=9216,vocab=256000,mlp=geglu,tie=true,"
     "sliding_window=4096",
     DECODER ",post_norms=true,global_every=2", NULL, true, NULL},
    {"gemma3_text",
     "layers=26,d_model=2304,heads=8,kv_heads=4,head_dim=256,ffn=9216,vocab=262208,mlp=geglu,tie=true,"
     "sliding_window=4096,global_every=6",
     DECODER ",post_norms=true,qk_norm=true", NULL, true, NULL},
    {"gemma3", "", "", "text_config", false, "gemma3_text"},
    {"deepseek_v3",
     "layers=61,d_model=7168,heads=128,kv_heads=128,ffn=18432,vocab=129280,mlp=swiglu,tie=false,experts=256,"
     "top_k=8,shared_experts=1,moe_ffn=2048,dense_layers=3,moe_every=1,q_lora_rank=1536,kv_lora_rank=512,"
     "qk_nope_head_dim=128,qk_rope_head_dim=64,v_head_dim=128",
     DECODER, NULL, false, NULL},
    /* Kimi K2: DeepSeek-V3's architecture (its repository's configuration_deepseek.py is DeepseekV3Config;
     * architectures DeepseekV3ForCausalLM), its own model_type. */
    {.model_type = "kimi_k2",
     .defaults = "layers=61,d_model=7168,heads=128,kv_heads=128,ffn=18432,vocab=129280,mlp=swiglu,tie=false,"
                 "experts=256,top_k=8,shared_experts=1,moe_ffn=2048,dense_layers=3,moe_every=1,q_lora_rank=1536,"
                 "kv_lora_rank=512,qk_nope_head_dim=128,qk_rope_head_dim=64,v_head_dim=128",
     .fixed = DECODER},
    /* gpt-oss (GptOssConfig, modeling_gpt_oss.py): every layer MoE with experts of intermediate_size,
     * layer_types alternating sliding (window 128) and full from layer 0. Its attention sinks (one scalar
     * a head), o_proj's, the router's and the experts' biases are not counted (gpt-oss-20b: 6.7M of
     * 20.9B; configs/models/README.md). */
    {.model_type = "gpt_oss",
     .defaults = "layers=36,d_model=2880,heads=64,kv_heads=8,head_dim=64,ffn=2880,vocab=201088,mlp=swiglu,"
                 "tie=false,qkv_bias=true,experts=128,top_k=4,sliding_window=128,global_every=2",
     .fixed = DECODER, .sliding = true},
    /* Llama 4 (Llama4Config, its language model Llama4TextConfig in text_config): intermediate_size is
     * an expert's width and intermediate_size_mlp the dense layers'; each MoE layer has one shared
     * expert (Llama4TextMoe.shared_expert); interleave_moe_layer_step k makes every k-th layer MoE
     * (moe_layers = range(k - 1, layers, k): the odd layers for k = 2, where strata's moe_every puts the
     * even ones; the counts are the same). use_qk_norm is an L2 norm without weights. */
    /* Qwen 2 MoE (Qwen2MoeConfig, modeling_qwen2_moe.py): Qwen 2's attention (q/k/v biases) and, in each
     * MoE layer, num_experts experts of moe_intermediate_size plus one shared expert of
     * shared_expert_intermediate_size, read as shared_experts of the experts' width (5632 = 4 x 1408 in
     * Qwen1.5-MoE-A2.7B, 20480 = 8 x 2560 in Qwen2-57B-A14B; a width no multiple of it is refused). Its
     * shared_expert_gate (d a layer) is not counted. A layer is MoE when it is not in mlp_only_layers and
     * decoder_sparse_step divides l + 1 (Qwen2MoeDecoderLayer); mlp_only_layers must be the first layers. */
    {.model_type = "qwen2_moe",
     .defaults = "layers=24,d_model=2048,heads=16,kv_heads=16,ffn=5632,vocab=151936,mlp=swiglu,tie=false,"
                 "experts=60,top_k=4,moe_ffn=1408,shared_ffn=5632",
     .fixed = DECODER ",qkv_bias=true"},
    /* DeepSeek-V2 (DeepseekV2Config of the model repository's configuration_deepseek.py; transformers'
     * configuration_deepseek_v2.py): DeepSeek-V3's MLA and MoE layout with softmax routing; q_lora_rank
     * null (V2-Lite) is a full d x H (nope + rope) q_proj; n_routed_experts null is a dense model. */
    {.model_type = "deepseek_v2",
     .defaults = "layers=30,d_model=4096,heads=32,kv_heads=32,ffn=11008,vocab=102400,mlp=swiglu,tie=false,"
                 "moe_ffn=1407,dense_layers=0,moe_every=1,q_lora_rank=1536,kv_lora_rank=512,qk_nope_head_dim=128,"
                 "qk_rope_head_dim=64,v_head_dim=128",
     .fixed = DECODER},
    /* MiniMax-M2 (MiniMaxM2ForCausalLM; vLLM's model_executor/models/minimax_m2.py, the model repository's
     * modeling_minimax_m2.py): GQA attention with a q and k RMSNorm over the whole projection
     * (qk_norm_type per_layer: H hd + K hd weights a layer, where strata's qk_norm counts 2 hd), partial
     * rotary (rotary_dim), and every layer MoE: num_local_experts experts of intermediate_size, a router
     * and its e_score_correction_bias (not counted, as DeepSeek-V3's). shared_intermediate_size is a
     * shared expert's width (0 in M2 and M2.5). The defaults are MiniMax-M2's own config.json values (its
     * configuration class is remote code). Its multi-token-prediction modules (use_mtp) are a note. */
    {.model_type = "minimax_m2",
     .defaults = "layers=62,d_model=3072,heads=48,kv_heads=8,head_dim=128,ffn=1536,vocab=200064,mlp=swiglu,"
                 "tie=false,experts=256,top_k=8",
     .fixed = DECODER ",qk_norm=true"},
    {.model_type = "llama4", .defaults = "", .fixed = "", .nested = "text_config", .inner = "llama4_text"},
    {.model_type = "llama4_text",
     .defaults = "layers=48,d_model=5120,heads=40,kv_heads=8,head_dim=128,ffn=16384,moe_ffn=8192,vocab=202048,"
                 "mlp=swiglu,tie=false,experts=16,top_k=1,moe_every=1",
     .fixed = DECODER ",shared_experts=1"},
};
#undef DECODER

typedef enum {
    K_COUNT,     /* an integer >= 1 */
    K_COUNT0,    /* an integer >= 0 */
    K_BOOL,      /* true or false */
    K_ACT,       /* hidden_act: the MLP (every family here gates it) */
    K_IGNORE,    /* known; changes nothing strata models */
    K_NOTE,      /* known; what it sets is not modelled (a note unless null, false, 0 or empty) */
    K_WINDOW,    /* sliding_window: a COUNT0 in a family whose attention applies it, else a NOTE */
    K_STRUCTURE, /* model_type, the nested config: read by the loader itself */
    K_LAYERS,    /* layer_types: each layer's attention, a periodic pattern read as global_every */
    K_RANK,      /* a COUNT0 whose null is None: 0 (q_lora_rank: no low-rank query) */
    K_DENSE,     /* mlp_only_layers: the dense layers of a MoE model, which must be the first ones */
    K_MOE_EVERY, /* moe_layer_freq: a COUNT, or a list of 0/1 a layer (MiMo-V2-Flash) strata must place */
    K_QUANT,     /* quantization_config: block-scaled FP8 read (weight_block), any other a NOTE */
    K_DTYPE,     /* torch_dtype, dtype: a torch dtype's name, checked, not used (serve's dtype is --set's) */
} key_kind;

typedef struct key_row {
    const char *hf;
    const char *key; /* the strata key it sets (NULL for IGNORE, NOTE, STRUCTURE, DTYPE and a key checked, not used) */
    key_kind kind;
} key_row;

/* Keys one family reads as other strata keys than `keys` says (Llama 4's expert and dense widths). */
static const struct {
    const char *model_type;
    key_row row;
} renamed[] = {
    {"llama4_text", {"intermediate_size", "moe_ffn", K_COUNT}},
    {"llama4_text", {"intermediate_size_mlp", "ffn", K_COUNT}},
    {"llama4_text", {"interleave_moe_layer_step", "moe_every", K_COUNT}},
    {"qwen2_moe", {"shared_expert_intermediate_size", "shared_ffn", K_COUNT0}},
    {"minimax_m2", {"shared_intermediate_size", "shared_ffn", K_COUNT0}},
};

static const key_row keys[] = {
    {"num_hidden_layers", "layers", K_COUNT},
    {"hidden_size", "d_model", K_COUNT},
    {"num_attention_heads", "heads", K_COUNT},
    {"num_key_value_heads", "kv_heads", K_COUNT},
    {"head_dim", "head_dim", K_COUNT},
    {"intermediate_size", "ffn", K_COUNT},
    {"vocab_size", "vocab", K_COUNT},
    {"tie_word_embeddings", "tie", K_BOOL},
    {"attention_bias", "qkv_bias", K_BOOL},
    {"hidden_act", "mlp", K_ACT},
    {"hidden_activation", "mlp", K_ACT},
    {"num_local_experts", "experts", K_COUNT0},
    {"num_experts", "experts", K_COUNT0},
    {"n_routed_experts", "experts", K_COUNT0},
    {"num_experts_per_tok", "top_k", K_COUNT},
    {"n_shared_experts", "shared_experts", K_COUNT0},
    {"moe_intermediate_size", "moe_ffn", K_COUNT},
    {"first_k_dense_replace", "dense_layers", K_COUNT0},
    {"moe_layer_freq", "moe_every", K_MOE_EVERY},
    {"decoder_sparse_step", "moe_every", K_COUNT},
    {"mlp_only_layers", "dense_layers", K_DENSE},
    {"q_lora_rank", "q_lora_rank", K_RANK},
    {"kv_lora_rank", "kv_lora_rank", K_COUNT0},
    {"qk_nope_head_dim", "qk_nope_head_dim", K_COUNT},
    {"qk_rope_head_dim", "qk_rope_head_dim", K_COUNT0},
    {"v_head_dim", "v_head_dim", K_COUNT},
    {"sliding_window", "sliding_window", K_WINDOW},
    {"sliding_window_pattern", "global_every", K_COUNT},
    {"layer_types", "global_every", K_LAYERS},
    {"experts_per_token", "top_k", K_COUNT},
    {"model_type", NULL, K_STRUCTURE},
    {"text_config", NULL, K_STRUCTURE},
    /* Not modelled: reported when set. */
    {"use_sliding_window", NULL, K_NOTE},
    {"mlp_bias", NULL, K_NOTE},
    {"num_nextn_predict_layers", NULL, K_NOTE},
    {"quantization_config", NULL, K_QUANT},
    {"vision_config", NULL, K_NOTE},
    {"attention_chunk_size", NULL, K_NOTE},
    {"moe_layers", NULL, K_NOTE},
    {"use_mtp", NULL, K_NOTE},
    {"num_mtp_modules", NULL, K_NOTE},
    {"mtp_transformer_layers", NULL, K_NOTE},
    /* Nothing a step's memory or time depends on. */
    {"architectures", NULL, K_IGNORE},
    {"auto_map", NULL, K_IGNORE},
    {"_name_or_path", NULL, K_IGNORE},
    {"_attn_implementation_autoset", NULL, K_IGNORE},
    {"transformers_version", NULL, K_IGNORE},
    {"torch_dtype", NULL, K_DTYPE},
    {"dtype", NULL, K_DTYPE}, /* transformers >= 4.56 writes torch_dtype as dtype */
    {"use_cache", NULL, K_IGNORE},
    {"bos_token_id", NULL, K_IGNORE},
    {"eos_token_id", NULL, K_IGNORE},
    {"pad_token_id", NULL, K_IGNORE},
    {"boi_token_index", NULL, K_IGNORE},
    {"eoi_token_index", NULL, K_IGNORE},
    {"image_token_index", NULL, K_IGNORE},
    {"mm_tokens_per_image", NULL, K_IGNORE},
    {"initializer_range", NULL, K_IGNORE},
    {"max_position_embeddings", NULL, K_COUNT}, /* checked; read by strata_model_max_len */
    {"rms_norm_eps", NULL, K_IGNORE},
    {"rope_theta", NULL, K_IGNORE},
    {"rope_scaling", NULL, K_IGNORE},
    {"rope_local_base_freq", NULL, K_IGNORE},
    {"attention_dropout", NULL, K_IGNORE},
    {"pretraining_tp", NULL, K_IGNORE},
    {"use_mrope", NULL, K_IGNORE},
    {"max_window_layers", NULL, K_IGNORE},
    {"sliding_window_size", NULL, K_IGNORE},
    {"cache_implementation", NULL, K_IGNORE},
    {"query_pre_attn_scalar", NULL, K_IGNORE},
    {"attn_logit_softcapping", NULL, K_IGNORE},
    {"final_logit_softcapping", NULL, K_IGNORE},
    {"router_aux_loss_coef", NULL, K_IGNORE},
    {"output_router_logits", NULL, K_IGNORE},
    {"router_jitter_noise", NULL, K_IGNORE},
    {"norm_topk_prob", NULL, K_IGNORE},
    {"scoring_func", NULL, K_IGNORE},
    {"topk_method", NULL, K_IGNORE},
    {"n_group", NULL, K_IGNORE},
    {"topk_group", NULL, K_IGNORE},
    {"routed_scaling_factor", NULL, K_IGNORE},
    {"aux_loss_alpha", NULL, K_IGNORE},
    {"seq_aux", NULL, K_IGNORE},
    {"ep_size", NULL, K_IGNORE},
    {"use_qk_norm", NULL, K_IGNORE},
    {"no_rope_layers", NULL, K_IGNORE},
    {"attn_temperature_tuning", NULL, K_IGNORE},
    {"floor_scale", NULL, K_IGNORE},
    {"attn_scale", NULL, K_IGNORE},
    {"swiglu_limit", NULL, K_IGNORE},
    {"initial_context_length", NULL, K_IGNORE},
    {"rotary_dim", NULL, K_IGNORE},       /* partial rotary: no parameter, rope's flops are a few a q/k element */
    {"qk_norm_type", NULL, K_IGNORE},     /* MiniMax-M2's norm over the whole projection or each head */
    {"use_routing_bias", NULL, K_IGNORE}, /* e_score_correction_bias, E a MoE layer, not counted */
};

struct strata_model_config {
    const char *path;     /* borrowed while loading */
    const family *row;    /* the family being read */
    char *family;
    GPtrArray *order;     /* strata keys in the order first set (owned) */
    GHashTable *value_of; /* key -> value (values owned) */
    GPtrArray *values;    /* "key=value", NULL-terminated, built at the end */
    GPtrArray *notes;     /* NULL-terminated */
    guint listed_layers;  /* the length of a per-layer moe_layer_freq list (0: none) */
    uint32_t weight_block; /* block-scaled FP8 weights' scale block side (0: none) */
    uint32_t max_positions; /* vLLM's derived max_model_len (model_max_len.h; 0: not given) */
    char *max_len_problem;  /* why vLLM refuses the file's rope_scaling (NULL: it does not) */
    GPtrArray *wide;      /* strata_json_wide_int: integers json-glib wraps (json_wide_int.h) */
};

static void set_value(strata_model_config *c, const char *key, const char *value)
{
    gpointer stored = NULL;
    if (!g_hash_table_lookup_extended(c->value_of, key, &stored, NULL)) {
        stored = g_strdup(key);
        g_ptr_array_add(c->order, stored);
    }
    g_hash_table_replace(c->value_of, stored, g_strdup(value));
}

/* set_value of an integer, as its decimal text. */
static void set_integer(strata_model_config *c, const char *key, int64_t value)
{
    char text[24];
    g_snprintf(text, sizeof text, "%" G_GINT64_FORMAT, value);
    set_value(c, key, text);
}

/* Sets each "k=v" of kv (a family's defaults or fixed keys). */
static void set_kv(strata_model_config *c, const char *kv)
{
    char **pairs = g_strsplit(kv, ",", -1);
    for (char **p = pairs; *p; p++) {
        if (!**p)
            continue;
        char *eq = strchr(*p, '=');
        g_assert(eq);
        *eq = '\0';
        set_value(c, *p, eq + 1);
    }
    g_strfreev(pairs);
}

static void note(strata_model_config *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void note(strata_model_config *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_ptr_array_add(c->notes, g_strdup_printf("%s: %s", c->path, what));
    g_free(what);
}

static bool bad(const strata_model_config *c, const char *hf, const char *expected, JsonNode *v, GError **err)
{
    char *text = json_to_string(v, FALSE);
    if (strlen(text) > 40)
        strcpy(text + 37, "...");
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: key '%s': expected %s, got %s", c->path, hf, expected,
                text);
    g_free(text);
    return false;
}

static const key_row *key_row_of(const char *model_type, const char *hf)
{
    for (size_t i = 0; i < G_N_ELEMENTS(renamed); i++)
        if (strcmp(renamed[i].model_type, model_type) == 0 && strcmp(renamed[i].row.hf, hf) == 0)
            return &renamed[i].row;
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        if (strcmp(keys[i].hf, hf) == 0)
            return &keys[i];
    return NULL;
}

/* Whether v says "not set": null, false, 0, "" or an empty array or object. */
static bool unset_value(JsonNode *v)
{
    if (JSON_NODE_HOLDS_NULL(v))
        return true;
    if (JSON_NODE_HOLDS_ARRAY(v))
        return json_array_get_length(json_node_get_array(v)) == 0;
    if (JSON_NODE_HOLDS_OBJECT(v))
        return json_object_get_size(json_node_get_object(v)) == 0;
    GType t = json_node_get_value_type(v);
    return (t == G_TYPE_BOOLEAN && !json_node_get_boolean(v)) || (t == G_TYPE_INT64 && json_node_get_int(v) == 0) ||
           (t == G_TYPE_STRING && !*json_node_get_string(v));
}

/* The MLP hidden_act names: silu gates SwiGLU, the GELUs GeGLU. */
static const char *mlp_of_act(const char *act)
{
    static const char *const gelus[] = {"gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu_python", NULL};
    if (strcmp(act, "silu") == 0 || strcmp(act, "swish") == 0)
        return "swiglu";
    for (const char *const *g = gelus; *g; g++)
        if (strcmp(act, *g) == 0)
            return "geglu";
    return NULL;
}

/* layer_types (transformers 4.53 and later write it for every family; gpt-oss's own): each layer's
 * attention, "full_attention" or "sliding_attention". A pattern whose global layers are those where P
 * divides l + 1 is global_every = P (0: every layer local; 1: every layer global); any other attention
 * ("linear_attention", ...) or pattern is refused, naming the layer. In a family whose attention applies
 * no window, sliding layers are a note, as sliding_window is. */
static bool read_layer_types(strata_model_config *c, const char *hf, JsonNode *v, GError **err)
{
    if (!JSON_NODE_HOLDS_ARRAY(v))
        return bad(c, hf, "an array of \"full_attention\" and \"sliding_attention\"", v, err);
    JsonArray *a = json_node_get_array(v);
    guint n = json_array_get_length(a), period = 0, sliding = 0;
    for (guint i = 0; i < n; i++) {
        JsonNode *e = json_array_get_element(a, i);
        const char *t = JSON_NODE_HOLDS_VALUE(e) && json_node_get_value_type(e) == G_TYPE_STRING
                            ? json_node_get_string(e) : NULL;
        bool full = t && strcmp(t, "full_attention") == 0;
        if (!full && !(t && strcmp(t, "sliding_attention") == 0)) {
            char *text = json_to_string(e, FALSE);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: key '%s': layer %u is %s, an attention strata "
                        "does not model (it models \"full_attention\" and \"sliding_attention\")", c->path, hf, i,
                        text);
            g_free(text);
            return false;
        }
        sliding += !full;
        if (full && !period)
            period = i + 1;
    }
    for (guint i = 0; i < n && period; i++) {
        JsonNode *e = json_array_get_element(a, i);
        if ((strcmp(json_node_get_string(e), "full_attention") == 0) != ((i + 1) % period == 0)) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: key '%s': layer %u breaks the pattern of a "
                        "global layer every %u (strata's global_every), which strata cannot place", c->path, hf, i,
                        period);
            return false;
        }
    }
    if (!c->row->sliding) {
        if (sliding)
            note(c, "key '%s' has sliding_attention layers, which %s's attention does not apply: ignored", hf,
                 c->row->model_type);
        return true;
    }
    set_integer(c, "global_every", period);
    return true;
}

/* Element i of the array a as a layer flag or index: an integer >= 0 (a JSON true or false reads as 1 or
 * 0), or -1 for anything else. */
static int64_t layer_entry(JsonArray *a, guint i)
{
    JsonNode *e = json_array_get_element(a, i);
    GType t = JSON_NODE_HOLDS_VALUE(e) ? json_node_get_value_type(e) : G_TYPE_INVALID;
    if (t == G_TYPE_BOOLEAN)
        return json_node_get_boolean(e);
    return t == G_TYPE_INT64 && json_node_get_int(e) >= 0 && json_node_get_int(e) <= G_MAXINT32 ? json_node_get_int(e)
                                                                                                : -1;
}

/* mlp_only_layers (Qwen2MoeConfig, Qwen3MoeConfig): the layers that keep a dense MLP in a MoE model.
 * strata places them first (dense_layers), so the list must be 0, 1, ..., k - 1 in any order; any
 * other set is refused, naming the first layer strata cannot place. */
static bool read_dense_layers(strata_model_config *c, const char *hf, JsonNode *v, GError **err)
{
    if (!JSON_NODE_HOLDS_ARRAY(v))
        return bad(c, hf, "an array of layer indices", v, err);
    JsonArray *a = json_node_get_array(v);
    guint n = json_array_get_length(a);
    GArray *seen = g_array_sized_new(FALSE, TRUE, sizeof(gboolean), n);
    g_array_set_size(seen, n);
    int64_t misplaced = -1;
    for (guint i = 0; i < n; i++) {
        JsonNode *e = json_array_get_element(a, i);
        int64_t l = JSON_NODE_HOLDS_VALUE(e) && json_node_get_value_type(e) == G_TYPE_BOOLEAN ? -1 : layer_entry(a, i);
        if (l < 0) {
            g_array_free(seen, TRUE);
            return bad(c, hf, "an array of layer indices", v, err);
        }
        if (l < (int64_t)n && !g_array_index(seen, gboolean, l))
            g_array_index(seen, gboolean, l) = TRUE;
        else if (misplaced < 0 || l < misplaced)
            misplaced = l; /* past the first n layers, or named twice */
    }
    g_array_free(seen, TRUE);
    if (misplaced >= 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: key '%s': layer %" G_GINT64_FORMAT " is dense "
                    "but not among the first %u layers; strata places a MoE model's dense layers first "
                    "(dense_layers) and cannot place this set", c->path, hf, misplaced, n);
        return false;
    }
    if (n)
        set_integer(c, "dense_layers", n);
    return true;
}

/* moe_layer_freq as a list (MiMo-V2-Flash: one 0 or 1 a layer, 1 for MoE). strata's MoE layers are
 * those l >= dense_layers that moe_every divides, so the list becomes dense_layers = its first MoE
 * layer and moe_every = the gap to the next; a list that rule does not reproduce is refused naming the
 * first layer it breaks. Its length is checked against num_hidden_layers once the file is read. */
static bool read_moe_layer_list(strata_model_config *c, const char *hf, JsonNode *v, GError **err)
{
    JsonArray *a = json_node_get_array(v);
    guint n = json_array_get_length(a);
    int64_t first = -1, second = -1;
    for (guint i = 0; i < n; i++) {
        int64_t f = layer_entry(a, i);
        if (f != 0 && f != 1)
            return bad(c, hf, "a positive integer or an array of 0 (dense) and 1 (MoE), one a layer", v, err);
        if (f && first >= 0 && second < 0)
            second = i;
        if (f && first < 0)
            first = i;
    }
    int64_t every = second >= 0 ? second - first : 1;
    if (first < 0)
        first = n; /* no MoE layer */
    for (guint i = 0; i < n; i++)
        if ((layer_entry(a, i) == 1) != (i >= first && i % every == 0)) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: key '%s': layer %u is %s; strata's MoE layers "
                        "are those from dense_layers (here %" G_GINT64_FORMAT ") that moe_every (here %"
                        G_GINT64_FORMAT ") divides, which cannot place this list", c->path, hf, i,
                        layer_entry(a, i) ? "MoE" : "dense", first, every);
            return false;
        }
    set_integer(c, "dense_layers", first);
    set_integer(c, "moe_every", every);
    c->listed_layers = n;
    return true;
}

/* The string member `name` of object o, or NULL. */
static const char *string_member(JsonObject *o, const char *name)
{
    JsonNode *v = json_object_get_member(o, name);
    return v && JSON_NODE_HOLDS_VALUE(v) && json_node_get_value_type(v) == G_TYPE_STRING ? json_node_get_string(v)
                                                                                         : NULL;
}

/* No integer literal of member `member` is past 64 bits (json_wide_int.h:
 * json-glib holds it wrapped, 2^63 as -2^63, -(2^64 - 1) as 1), else err
 * names `shown` and the literal's line. */
static bool within_64_bits(const strata_model_config *c, const char *member, const char *shown, GError **err)
{
    for (guint i = 0; c->wide && i < c->wide->len; i++) {
        const strata_json_wide_int *w = g_ptr_array_index(c->wide, i);
        if (strcmp(w->key, member) == 0) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s:%u: key '%s': expected an integer within 64 "
                        "bits (-2^63 to 2^63 - 1), got %s", c->path, w->line, shown, w->text);
            return false;
        }
    }
    return true;
}

/* quantization_config (hf: v): DeepSeek-style block-scaled FP8 (quant_method
 * fp8 with weight_block_size, as DeepSeek-V3, Kimi-K2 and Qwen's -FP8
 * checkpoints ship it) sets weight_block; its blocks must be 128 x 128, the
 * only blocks TensorRT-LLM's and DeepGEMM's SM90 kernels take (TILE_K = 128,
 * ScaleGranKB = ScaleGranNB = 128: fp8_blockscale_gemm_kernel.cuh); anything
 * else (per-tensor fp8, mxfp4, ...) stays a note. */
static bool read_quantization(strata_model_config *c, const char *hf, JsonNode *v, GError **err)
{
    JsonObject *o = JSON_NODE_HOLDS_OBJECT(v) ? json_node_get_object(v) : NULL;
    JsonNode *blocks = o ? json_object_get_member(o, "weight_block_size") : NULL;
    const char *method = o ? string_member(o, "quant_method") : NULL;
    /* vLLM reads the method in any case (vllm-project/vllm@00044383, vllm/config.py,
     * ModelConfig._verify_quantization: quant_cfg.get("quant_method", "").lower()): "FP8" was a note here, its
     * blocks unread */
    if (!method || g_ascii_strcasecmp(method, "fp8") != 0 || !blocks || JSON_NODE_HOLDS_NULL(blocks)) {
        if (!unset_value(v))
            note(c, "key '%s' is set but not modelled: ignored", hf);
        return true;
    }
    /* its elements are read here, not by read_key: -(2^64 - 128) read as 128 */
    if (!within_64_bits(c, "weight_block_size", "quantization_config.weight_block_size", err))
        return false;
    JsonArray *a = JSON_NODE_HOLDS_ARRAY(blocks) ? json_node_get_array(blocks) : NULL;
    bool ok = a && json_array_get_length(a) == 2;
    for (guint i = 0; ok && i < 2; i++) {
        JsonNode *e = json_array_get_element(a, i);
        ok = JSON_NODE_HOLDS_VALUE(e) && json_node_get_value_type(e) == G_TYPE_INT64 && json_node_get_int(e) == 128;
    }
    if (!ok)
        return bad(c, "quantization_config.weight_block_size",
                   "[128, 128] (the blocks of TensorRT-LLM's and DeepGEMM's block-scaled FP8 GEMMs)", blocks, err);
    c->weight_block = 128;
    note(c, "key '%s': block-scaled FP8 (128 x 128 weight blocks): `serve --set dtype=f8` models its GEMMs' scale "
         "promotion; its scales' bytes in the weights are not counted", hf);
    return true;
}

/* One key of the file (hf: v) through its row. */
/* torch_dtype (dtype): transformers turns a string into getattr(torch, NAME) (huggingface/transformers
 * @008e574391258935f3ecc3035c882e73bbcac419, src/transformers/configuration_utils.py,
 * PreTrainedConfig.__post_init__: torch_dtype is read as dtype, then `self.dtype = getattr(torch,
 * self.dtype)`), so "auto" and "torch.bfloat16" raise AttributeError; to_dict writes a dtype back as its
 * name (str(dtype).split(".")[1]). Taken: the names of torch's floating dtypes and 8-bit integers. */
static bool read_dtype(const strata_model_config *c, const char *hf, JsonNode *v, GError **err)
{
    static const char *const names[] = {"float32", "float", "float64", "double", "float16", "half", "bfloat16",
                                        "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
                                        "float8_e8m0fnu", "float4_e2m1fn_x2", "int8", "uint8", NULL};
    const char *name = JSON_NODE_HOLDS_VALUE(v) && json_node_get_value_type(v) == G_TYPE_STRING
                           ? json_node_get_string(v) : NULL;
    if (name && g_strv_contains(names, name))
        return true;
    return bad(c, hf, "a torch dtype's name, as transformers writes it (float32, float16, bfloat16, float8_e4m3fn, "
               "...: it reads the value as getattr(torch, NAME), so not \"auto\" or \"torch.bfloat16\")", v, err);
}

static bool read_key(strata_model_config *c, const char *hf, JsonNode *v, GError **err)
{
    const key_row *row = key_row_of(c->row->model_type, hf);
    if (!row) {
        note(c, "key '%s' is not one strata reads: ignored", hf);
        return true;
    }
    if (row->kind == K_IGNORE || row->kind == K_STRUCTURE)
        return true;
    if (!within_64_bits(c, hf, hf, err))
        return false;
    if (row->kind == K_LAYERS)
        return JSON_NODE_HOLDS_NULL(v) || read_layer_types(c, hf, v, err);
    if (row->kind == K_QUANT)
        return read_quantization(c, hf, v, err);
    if (row->kind == K_DTYPE)
        return JSON_NODE_HOLDS_NULL(v) || read_dtype(c, hf, v, err);
    if (row->kind == K_NOTE || (row->kind == K_WINDOW && !c->row->sliding)) {
        if (!unset_value(v))
            note(c, "key '%s' is set but not modelled: ignored", hf);
        return true;
    }
    if (row->kind == K_DENSE)
        return JSON_NODE_HOLDS_NULL(v) || read_dense_layers(c, hf, v, err);
    if (row->kind == K_MOE_EVERY && JSON_NODE_HOLDS_ARRAY(v))
        return read_moe_layer_list(c, hf, v, err);
    if (row->kind == K_RANK && JSON_NODE_HOLDS_NULL(v)) {
        set_value(c, row->key, "0");
        return true;
    }
    if (JSON_NODE_HOLDS_NULL(v) && strata_model_config_null_refused(hf))
        return bad(c, hf, "a positive integer (at most 2^31 - 1; transformers' configuration class keeps a null, "
                   "its default being for a key the file leaves out, and the model cannot be built)", v, err);
    if (JSON_NODE_HOLDS_NULL(v))
        return true; /* the class default */
    GType t = JSON_NODE_HOLDS_VALUE(v) ? json_node_get_value_type(v) : G_TYPE_INVALID;
    if (row->kind == K_BOOL) {
        if (t != G_TYPE_BOOLEAN)
            return bad(c, hf, "true or false", v, err);
        set_value(c, row->key, json_node_get_boolean(v) ? "true" : "false");
    } else if (row->kind == K_ACT) {
        const char *mlp = t == G_TYPE_STRING ? mlp_of_act(json_node_get_string(v)) : NULL;
        if (!mlp)
            return bad(c, hf, "an activation strata models (silu, gelu, gelu_new, gelu_pytorch_tanh)", v, err);
        set_value(c, row->key, mlp);
    } else {
        int64_t min = row->kind == K_COUNT || row->kind == K_MOE_EVERY ? 1 : 0;
        if (t != G_TYPE_INT64 || json_node_get_int(v) < min || json_node_get_int(v) > G_MAXINT32)
            return bad(c, hf, min ? "a positive integer (at most 2^31 - 1)" : "an integer >= 0 (at most 2^31 - 1)", v,
                       err);
        if (row->key)
            set_integer(c, row->key, json_node_get_int(v));
    }
    return true;
}

static const family *family_of(const char *model_type)
{
    for (size_t i = 0; i < G_N_ELEMENTS(families); i++)
        if (strcmp(families[i].model_type, model_type) == 0)
            return &families[i];
    return NULL;
}

/* Whether o, of a model_type no row names, states a plain decoder's whole shape at its top level and no
 * key that names a structure llama's row would drop (experts, MoE layers, a latent KV, windows or layer
 * kinds, state-space or linear layers, a nested language model's config), unless it is null, false or 0. */
static bool plain_decoder(JsonObject *o)
{
    static const char *const shape[] = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                        "intermediate_size", "vocab_size"};
    static const char *const structure[] = {"expert", "moe", "lora_rank", "sliding", "layer_types", "linear",
                                            "mamba", "ssm", "conv", "text_config", "block_configs"};
    for (size_t i = 0; i < G_N_ELEMENTS(shape); i++)
        if (!json_object_has_member(o, shape[i]))
            return false;
    /* Qwen 2's convention (MiMo-7B and other Qwen 2 derivatives): sliding_window applies only with
     * use_sliding_window, so with it false the window keys name nothing llama's row drops. */
    JsonNode *use = json_object_get_member(o, "use_sliding_window");
    bool window_off = use && JSON_NODE_HOLDS_VALUE(use) && json_node_get_value_type(use) == G_TYPE_BOOLEAN &&
                      !json_node_get_boolean(use);
    GList *members = json_object_get_members(o);
    bool plain = true;
    for (GList *l = members; l && plain; l = l->next) {
        if (window_off && strstr(l->data, "sliding"))
            continue;
        JsonNode *v = json_object_get_member(o, l->data);
        bool unset = JSON_NODE_HOLDS_NULL(v) ||
                     (JSON_NODE_HOLDS_VALUE(v) && json_node_get_value_type(v) == G_TYPE_BOOLEAN &&
                      !json_node_get_boolean(v)) ||
                     (JSON_NODE_HOLDS_VALUE(v) && json_node_get_value_type(v) == G_TYPE_INT64 &&
                      json_node_get_int(v) == 0);
        for (size_t i = 0; i < G_N_ELEMENTS(structure) && plain && !unset; i++)
            plain = strstr(l->data, structure[i]) == NULL;
    }
    g_list_free(members);
    return plain;
}

/* The object o (the whole file, or its nested config) read as a model of its model_type, or of `as` (a nested
 * config: the outer class builds it as its inner one, Gemma3Config's `Gemma3TextConfig(**text_config)`,
 * huggingface/transformers@d98ac17c configuration_gemma3.py, Llama4Config's alike, whatever model_type it gives:
 * none reads as `as`, another is refused); depth bounds the nesting. */
static bool read_object(strata_model_config *c, JsonObject *o, const char *as, int depth, GError **err)
{
    JsonNode *mt = json_object_get_member(o, "model_type");
    const char *type = mt && JSON_NODE_HOLDS_VALUE(mt) && json_node_get_value_type(mt) == G_TYPE_STRING
                           ? json_node_get_string(mt) : NULL;
    if ((!type && !as) || (type && as && strcmp(type, as) != 0)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: key '%smodel_type': expected %s%s", c->path,
                    as ? "text_config." : "", as ? as : "a string such as llama",
                    as ? " or none (the outer class builds its text_config as that class)" : "");
        return false;
    }
    type = type ? type : as;
    const family *f = family_of(type);
    const char *why = f ? NULL : strata_model_config_refused_why(type);
    if (why) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: key 'model_type': '%s' is %s, which strata does not "
                    "model", c->path, type, why);
        return false;
    }
    if (!f && plain_decoder(o)) {
        /* A model_type of no row whose file gives a plain decoder's whole shape itself (phi3, olmo2,
         * granite, ...): read through llama's row, which reads each of those keys, with a note. */
        char *known = strata_model_config_families();
        note(c, "model_type '%s' is not one of %s: its file gives a plain decoder's shape (hidden_size, "
             "num_hidden_layers, num_attention_heads, intermediate_size, vocab_size) and no expert, latent, "
             "window or nested key, so it is read as a llama-style decoder", type, known);
        g_free(known);
        f = family_of("llama");
    }
    if (!f) {
        /* Read with another family's defaults, an architecture's missing keys and what its modeling file
         * fixes would be guesses (Llama 4's whole text_config was once skipped so): refused. */
        char *known = strata_model_config_families();
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: key 'model_type': '%s' is not an architecture "
                    "strata reads (%s); give the shape as keys instead (layers= d_model= heads= ...)", c->path, type,
                    known);
        g_free(known);
        return false;
    }
    if (f->nested) {
        JsonNode *inner = json_object_get_member(o, f->nested);
        if (!inner || !JSON_NODE_HOLDS_OBJECT(inner) || depth > 0) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: key '%s': expected the language model's config "
                        "(an object) for model_type %s", c->path, f->nested, type);
            return false;
        }
    }
    g_free(c->family);
    c->family = g_strdup(type);
    c->row = f;
    set_kv(c, f->defaults);
    GList *members = json_object_get_members(o);
    bool ok = true;
    for (GList *l = members; l && ok; l = l->next)
        ok = read_key(c, l->data, json_object_get_member(o, l->data), err);
    g_list_free(members);
    if (ok && (json_object_has_member(o, "max_position_embeddings") || json_object_has_member(o, "rope_scaling"))) {
        g_free(c->max_len_problem); /* a nested config's own wins */
        ok = within_64_bits(c, "factor", "rope_scaling.factor", err) &&
             within_64_bits(c, "original_max_position_embeddings", "rope_scaling.original_max_position_embeddings",
                            err);
        c->max_positions = strata_model_max_len(o, type, &c->max_len_problem);
    }
    if (ok && f->nested)
        return read_object(c, json_node_get_object(json_object_get_member(o, f->nested)), f->inner, depth + 1, err);
    set_kv(c, f->fixed);
    return ok;
}

/* What the file set that strata's keys hold another way, once every key is read: Qwen 2 MoE's shared
 * expert width (shared_ffn) as shared_experts of moe_ffn each, and a per-layer moe_layer_freq list's
 * length against the layers. */
static bool resolve_read_keys(strata_model_config *c, GError **err)
{
    const char *shared = g_hash_table_lookup(c->value_of, "shared_ffn");
    if (shared) {
        const char *expert = g_hash_table_lookup(c->value_of, "moe_ffn");
        int64_t width = g_ascii_strtoll(shared, NULL, 10), each = expert ? g_ascii_strtoll(expert, NULL, 10) : 0;
        if (width > 0 && (each < 1 || width % each)) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: key 'shared_expert_intermediate_size': %"
                        G_GINT64_FORMAT " is not a multiple of moe_intermediate_size %" G_GINT64_FORMAT " (strata's "
                        "shared expert is shared_experts experts of that width)", c->path, width, each);
            return false;
        }
        set_integer(c, "shared_experts", width ? width / each : 0);
        gpointer stored = NULL;
        g_hash_table_lookup_extended(c->value_of, "shared_ffn", &stored, NULL);
        g_hash_table_remove(c->value_of, stored); /* not a key of gen's: the order owns the name */
        g_ptr_array_remove(c->order, stored);
    }
    if (c->listed_layers) {
        const char *layers = g_hash_table_lookup(c->value_of, "layers");
        if (!layers || g_ascii_strtoll(layers, NULL, 10) != c->listed_layers) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: key 'moe_layer_freq': %u entries for %s layers",
                        c->path, c->listed_layers, layers ? layers : "an unstated number of");
            return false;
        }
    }
    return true;
}

strata_model_config *strata_model_config_load(const char *path, GError **err)
{
    char *text = NULL;
    size_t len = 0;
    GError *local = NULL;
    /* bounded, NUL refused: /dev/zero was read until memory ran out */
    if (!strata_read_all(path, MODEL_CONFIG_MAX_FILE, true, "a config.json", &text, &len, err))
        return NULL;
    GArray *python_lines = g_array_new(FALSE, FALSE, sizeof(guint));
    char *json = strata_json_python_words_to_null(text, python_lines);
    g_free(text);
    JsonParser *parser = json_parser_new();
    bool parsed = json_parser_load_from_data(parser, json, -1, &local);
    parsed = parsed && strata_json_unique_keys(json, &local); /* json-glib keeps a repeat's later value silently */
    GPtrArray *wide = parsed ? strata_json_wide_ints(json) : NULL;
    g_free(json);
    if (!parsed) {
        const char *where = g_str_has_prefix(local->message, "<data>:") ? local->message + 6 : local->message;
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s%s%s", path, *where == ':' ? "" : ": ", where);
        g_error_free(local);
        g_object_unref(parser);
        g_array_free(python_lines, TRUE);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(parser);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected a JSON object (a config.json)", path);
        g_ptr_array_unref(wide);
        g_object_unref(parser);
        g_array_free(python_lines, TRUE);
        return NULL;
    }
    strata_model_config *c = g_new0(strata_model_config, 1);
    c->path = path;
    c->order = g_ptr_array_new_with_free_func(g_free);
    c->value_of = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    c->notes = g_ptr_array_new_with_free_func(g_free);
    c->values = g_ptr_array_new_with_free_func(g_free);
    c->wide = wide;
    for (guint i = 0; i < python_lines->len; i++)
        note(c, "line %u: Infinity or NaN (Python's extension of JSON): read as null",
             g_array_index(python_lines, guint, i));
    g_array_free(python_lines, TRUE);
    bool ok = read_object(c, json_node_get_object(root), NULL, 0, err) && resolve_read_keys(c, err);
    g_object_unref(parser);
    if (!ok) {
        strata_model_config_free(c);
        return NULL;
    }
    for (guint i = 0; i < c->order->len; i++) {
        const char *k = g_ptr_array_index(c->order, i);
        g_ptr_array_add(c->values, g_strdup_printf("%s=%s", k, (const char *)g_hash_table_lookup(c->value_of, k)));
    }
    g_ptr_array_add(c->values, NULL);
    g_ptr_array_add(c->notes, NULL);
    c->path = NULL;
    return c;
}

void strata_model_config_free(strata_model_config *c)
{
    if (!c)
        return;
    g_free(c->family);
    g_free(c->max_len_problem);
    g_hash_table_destroy(c->value_of);
    g_ptr_array_free(c->order, TRUE);
    g_ptr_array_free(c->values, TRUE);
    g_ptr_array_free(c->notes, TRUE);
    if (c->wide)
        g_ptr_array_unref(c->wide);
    g_free(c);
}

const char *strata_model_config_family(const strata_model_config *c) { return c->family; }
const char *const *strata_model_config_values(const strata_model_config *c)
{
    return (const char *const *)c->values->pdata;
}
uint32_t strata_model_config_weight_block(const strata_model_config *c) { return c->weight_block; }
uint32_t strata_model_config_max_positions(const strata_model_config *c) { return c->max_positions; }
const char *strata_model_config_max_len_problem(const strata_model_config *c) { return c->max_len_problem; }
const char *const *strata_model_config_notes(const strata_model_config *c)
{
    return (const char *const *)c->notes->pdata;
}

char *strata_model_config_families(void)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(families); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", families[i].model_type);
    return g_string_free(s, FALSE);
}
