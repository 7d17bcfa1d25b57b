/*
 * serve_model.c: a served model's shape (serve_model.h): its keys, looked
 * up by name in one table, and its presets, each a line of keys.
 *
 * Presets carry the shapes of the models' Hugging Face config.json files
 * (num_hidden_layers, hidden_size, num_attention_heads,
 * num_key_value_heads, head_dim or hidden_size / heads, intermediate_size,
 * vocab_size; MoE num_local_experts / num_experts_per_tok; MLA
 * kv_lora_rank, qk_rope_head_dim), as the notes' table lists them
 * (notes/44-45/serving.md section 3.4).
 */
#include "serve/serve_model.h"
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/lines.h"
#include "core/units.h"
#include "serve/serve_fields.h"
#include "serve/serve_names.h"
#include "serve/serve_qk_norm.h"
#include "workload/model_config.h"

#define MK(name, type, field) {name, type, offsetof(strata_serve_model, field), 0}
static const serve_field keys[] = {
    MK("name", SERVE_FIELD_NAME, name),
    MK("layers", SERVE_FIELD_U32, layers),
    MK("hidden", SERVE_FIELD_U32, hidden),
    MK("heads", SERVE_FIELD_U32, heads),
    MK("kv_heads", SERVE_FIELD_U32, kv_heads),
    MK("head_dim", SERVE_FIELD_U32, head_dim),
    MK("intermediate", SERVE_FIELD_U32, intermediate),
    MK("vocab", SERVE_FIELD_U32, vocab),
    MK("experts", SERVE_FIELD_U32, experts),
    MK("top_k", SERVE_FIELD_U32, top_k),
    MK("moe_intermediate", SERVE_FIELD_U32, moe_intermediate),
    MK("dense_layers", SERVE_FIELD_U32, dense_layers),
    MK("moe_every", SERVE_FIELD_U32, moe_every),
    MK("kv_lora_rank", SERVE_FIELD_U32, kv_lora_rank),
    MK("qk_rope_head_dim", SERVE_FIELD_U32, qk_rope_head_dim),
    MK("q_lora_rank", SERVE_FIELD_U32, q_lora_rank),
    MK("qk_nope_head_dim", SERVE_FIELD_U32, qk_nope_head_dim),
    MK("v_head_dim", SERVE_FIELD_U32, v_head_dim),
    MK("shared_experts", SERVE_FIELD_U32, shared_experts),
    MK("router_groups", SERVE_FIELD_U32, router_groups),
    MK("gated", SERVE_FIELD_BOOL, gated),
    MK("qkv_bias", SERVE_FIELD_BOOL, qkv_bias),
    MK("qk_norm", SERVE_FIELD_BOOL, qk_norm),
    MK("qk_norm_tp", SERVE_FIELD_BOOL, qk_norm_tp),
    MK("post_norms", SERVE_FIELD_BOOL, post_norms),
    MK("tied_embeddings", SERVE_FIELD_BOOL, tied_embeddings),
    MK("dtype", SERVE_FIELD_DTYPE, dtype),
    MK("kv_dtype", SERVE_FIELD_DTYPE, kv_dtype),
    MK("weight_block", SERVE_FIELD_U32, weight_block),
    MK("max_model_len", SERVE_FIELD_U32, max_model_len),
    MK("sliding_window", SERVE_FIELD_U32, sliding_window),
    MK("global_every", SERVE_FIELD_U32, global_every),
    {NULL, SERVE_FIELD_U32, 0, 0},
};
#undef MK

typedef struct model_preset {
    const char *name;
    const char *keys; /* "k=v k=v ..." */
} model_preset;

static const model_preset presets[] = {
    /* meta-llama/Meta-Llama-3-8B (and 3.1-8B) config.json */
    {"llama-3-8b", "layers=32 hidden=4096 heads=32 kv_heads=8 head_dim=128 intermediate=14336 vocab=128256"},
    /* meta-llama/Meta-Llama-3-70B (and 3.1/3.3-70B) */
    {"llama-3-70b", "layers=80 hidden=8192 heads=64 kv_heads=8 head_dim=128 intermediate=28672 vocab=128256"},
    /* meta-llama/Llama-3.1-405B */
    {"llama-3-405b", "layers=126 hidden=16384 heads=128 kv_heads=8 head_dim=128 intermediate=53248 vocab=128256"},
    /* meta-llama/Llama-2-7b-hf (MHA) */
    {"llama-2-7b", "layers=32 hidden=4096 heads=32 kv_heads=32 head_dim=128 intermediate=11008 vocab=32000 "
                   "max_model_len=4096"},
    /* meta-llama/Llama-2-70b-hf */
    {"llama-2-70b", "layers=80 hidden=8192 heads=64 kv_heads=8 head_dim=128 intermediate=28672 vocab=32000 "
                    "max_model_len=4096"},
    /* mistralai/Mixtral-8x7B-v0.1 */
    {"mixtral-8x7b", "layers=32 hidden=4096 heads=32 kv_heads=8 head_dim=128 intermediate=14336 vocab=32000 "
                     "experts=8 top_k=2"},
    /* deepseek-ai/DeepSeek-V3 (MLA; 256 routed experts, 8 active, one
     * shared expert, the first three layers dense) */
    {"deepseek-v3", "layers=61 hidden=7168 heads=128 kv_heads=128 head_dim=128 intermediate=18432 vocab=129280 "
                    "experts=256 top_k=8 shared_experts=1 moe_intermediate=2048 dense_layers=3 q_lora_rank=1536 "
                    "kv_lora_rank=512 qk_nope_head_dim=128 qk_rope_head_dim=64 v_head_dim=128"},
    {NULL, NULL},
};

void strata_serve_model_init(strata_serve_model *m)
{
    memset(m, 0, sizeof *m);
    m->gated = true;
    m->dtype = STRATA_DTYPE_BF16;
    m->max_model_len = 8192;
}

char *strata_serve_model_keys(void)
{
    return serve_field_names(keys);
}

char *strata_serve_model_presets(void)
{
    return serve_names_list(SERVE_NAMES(presets, model_preset));
}

bool strata_serve_model_set(strata_serve_model *m, const char *key, const char *value, GError **err)
{
    bool ok = serve_field_set(keys, m, "model key", key, value, err);
    m->max_model_len_given |= ok && strcmp(key, "max_model_len") == 0;
    return ok;
}

/* "k=v k=v" into m (presets: a bad one is a bug). */
static bool set_all(strata_serve_model *m, const char *line, GError **err)
{
    char **words = g_strsplit(line, " ", -1);
    bool ok = true;
    for (char **w = words; ok && *w; w++) {
        char *eq = strchr(*w, '=');
        if (!eq) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "expected KEY=VALUE, got '%s'", *w);
            ok = false;
            break;
        }
        *eq = '\0';
        ok = strata_serve_model_set(m, *w, eq + 1, err);
    }
    g_strfreev(words);
    return ok;
}

bool strata_serve_model_preset(strata_serve_model *m, const char *name, GError **err)
{
    const model_preset *p = serve_names_lookup(SERVE_NAMES(presets, model_preset), name, STRATA_ERROR_INPUT, err,
                                               "unknown model '%s' (presets: %s; or --model-file FILE)");
    if (!p)
        return false;
    strata_serve_model_init(m);
    g_strlcpy(m->name, p->name, sizeof m->name);
    return set_all(m, p->keys, err);
}

/* top_k beside experts, at top_k's line (else experts'): the model check named the file alone. A model file's
 * keys whose placement leaves their parent read nowhere: experts where dense_layers (with moe_every) leaves no
 * MoE layer (model_shape.c strata_model_moe_layers), sliding_window where global_every = 1 makes every layer
 * global (strata_serve_window_layers). Each model's JSON was the dense or unwindowed one's, exit 0 (the
 * seventeenth hardening pass): refused at the placing key's line. */
static bool placed_keys(const strata_serve_model *m, GHashTable *seen, const char *path, GError **err)
{
    const char *k = g_hash_table_contains(seen, "top_k") ? "top_k" : "experts";
    uint64_t ln = GPOINTER_TO_SIZE(g_hash_table_lookup(seen, k)); /* strata_serve_model_check's rule, at a line */
    if (ln && (m->top_k > m->experts || (m->experts && !m->top_k)))
        return strata_fail_at(err, path, ln, "%s: expected 1 <= top_k <= experts with experts (got experts %u, "
                              "top_k %u)", k, m->experts, m->top_k);
    ln = GPOINTER_TO_SIZE(g_hash_table_lookup(seen, "router_groups")); /* strata_serve_model_check's, at its line */
    if (ln && m->experts && m->router_groups && m->experts % m->router_groups != 0)
        return strata_fail_at(err, path, ln, "router_groups: expected a divisor of experts (%u): the router's "
                              "scores are grouped as experts / n_group a group, got %u", m->experts, m->router_groups);
    strata_model_shape s;
    strata_serve_model_shape(m, &s);
    ln = GPOINTER_TO_SIZE(g_hash_table_lookup(seen, "dense_layers")); /* else layer 0 is MoE */
    if (m->experts && m->layers && ln && strata_model_moe_layers(&s) == 0)
        return strata_fail_at(err, path, ln, "dense_layers: expected an MoE layer among the %u (those from "
                              "dense_layers %u that moe_every %u divides), got none: the %u experts would be read "
                              "nowhere", m->layers, m->dense_layers, m->moe_every ? m->moe_every : 1, m->experts);
    ln = GPOINTER_TO_SIZE(g_hash_table_lookup(seen, "global_every"));
    if (m->sliding_window && ln && m->global_every == 1)
        return strata_fail_at(err, path, ln, "global_every: expected 0 (every layer windowed) or 2 or more (every "
                              "Nth layer global, the rest windowed), got 1: every layer global, sliding_window %u "
                              "read nowhere", m->sliding_window);
    return true;
}

/* The keys read only beside another (strata_serve_model_shape, serve_cost.c): MLA's beside kv_lora_rank, an MoE's
 * beside experts, global_every beside sliding_window, qk_norm_tp beside qk_norm. */
static const struct {
    const char *name, *what;
} orphan_parents[] = {{"kv_lora_rank", "an MLA model"}, {"experts", "an MoE model"},
                      {"sliding_window", "windowed attention"}, {"qk_norm", "q and k norms"}};
static const struct {
    const char *key;
    size_t parent; /* into orphan_parents */
} orphan_needs[] = {
    {"qk_rope_head_dim", 0}, {"q_lora_rank", 0},  {"qk_nope_head_dim", 0}, {"v_head_dim", 0},
    {"moe_intermediate", 1}, {"shared_experts", 1}, {"dense_layers", 1},   {"moe_every", 1},
    {"global_every", 2},     {"router_groups", 1}, {"qk_norm_tp", 3},
};

static uint32_t orphan_parent_value(const strata_serve_model *m, size_t parent)
{
    const uint32_t values[] = {m->kv_lora_rank, m->experts, m->sliding_window, m->qk_norm};
    return values[parent];
}

/* A model file's keys read only beside another: alone they changed nothing at exit 0 (the sixteenth hardening
 * pass): refused at the key's line. */
static bool orphan_keys(const strata_serve_model *m, GHashTable *seen, const char *path, GError **err)
{
    for (size_t i = 0; i < G_N_ELEMENTS(orphan_needs); i++) {
        uint64_t ln = GPOINTER_TO_SIZE(g_hash_table_lookup(seen, orphan_needs[i].key));
        size_t p = orphan_needs[i].parent;
        const char *parent = orphan_parents[p].name;
        if (ln && !orphan_parent_value(m, p))
            return strata_fail_at(err, path, ln, "%s: expected %s > 0 beside it (it is read only with %s: %s), got "
                                  "%s", orphan_needs[i].key, parent, parent, orphan_parents[p].what,
                                  g_hash_table_contains(seen, parent) ? "0" : "none");
    }
    return placed_keys(m, seen, path, err);
}

bool strata_serve_model_check_sets(const strata_serve_model *m, char *const *sets, GError **err)
{
    for (char *const *s = sets; s && *s; s++)
        for (size_t i = 0; i < G_N_ELEMENTS(orphan_needs); i++) {
            size_t n = strlen(orphan_needs[i].key), p = orphan_needs[i].parent;
            if (strncmp(*s, orphan_needs[i].key, n) != 0 || (*s)[n] != '=' || orphan_parent_value(m, p))
                continue;
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--set %s: expected %s > 0 in the model beside it (it "
                        "is read only with %s: %s), got %s with %s 0: it changes nothing", *s, orphan_parents[p].name,
                        orphan_parents[p].name, orphan_parents[p].what, m->name, orphan_parents[p].name);
            return false;
        }
    return true;
}

/* Read through core/lines.h, as every other text input: a NUL byte ended
 * the text read whole (the keys after it dropped, exit 0) and a UTF-8 BOM
 * became part of the first key; a key given twice, the second value
 * silently kept, is refused as the hardware files refuse it. */
bool strata_serve_model_load(strata_serve_model *m, const char *path, GError **err)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: %s", path, g_strerror(errno));
        return false;
    }
    strata_lines *l = strata_lines_new(fp, path);
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    char *text = NULL;
    size_t len = 0;
    int rc = 0;
    bool ok = true;
    while (ok && (rc = strata_lines_next(l, &text, &len, err)) > 0) {
        uint64_t ln = strata_lines_number(l);
        char *line = g_strstrip(text);
        if (!*line || *line == '#')
            continue;
        if (!strata_lines_terminated(l, "a model file", "every key = value line ends with one", err)) {
            ok = false; /* "hidden = 4096" cut to "hidden = 40" reads as another model */
            break;
        }
        char *eq = strchr(line, '=');
        if (!eq) {
            ok = strata_fail_at(err, path, ln, "expected 'key = value' (keys: layers, hidden, ...)");
            break;
        }
        *eq = '\0';
        const char *key = g_strstrip(line);
        uint64_t first = GPOINTER_TO_SIZE(g_hash_table_lookup(seen, key));
        if (first) {
            ok = strata_fail_at(err, path, ln, "%s is set twice (first on line %" G_GUINT64_FORMAT ")", key, first);
            break;
        }
        g_hash_table_insert(seen, g_strdup(key), GSIZE_TO_POINTER((gsize)ln));
        GError *e = NULL;
        if (!strata_serve_model_set(m, key, g_strstrip(eq + 1), &e)) {
            ok = strata_fail_at(err, path, ln, "%s", e->message);
            g_error_free(e);
        }
    }
    ok = ok && rc >= 0 && orphan_keys(m, seen, path, err);
    g_hash_table_destroy(seen);
    strata_lines_free(l);
    if (ok && !m->name[0])
        g_strlcpy(m->name, path, sizeof m->name);
    return ok;
}

/* model_config.h's keys and serving's: the same quantity under another name
 * (the reader's norm and pos are serving's fixed RMSNorm and rope; mlp is
 * `gated`, below). */
static const char *const config_keys[][2] = {
    {"layers", "layers"},
    {"d_model", "hidden"},
    {"heads", "heads"},
    {"kv_heads", "kv_heads"},
    {"head_dim", "head_dim"},
    {"ffn", "intermediate"},
    {"vocab", "vocab"},
    {"experts", "experts"},
    {"top_k", "top_k"},
    {"moe_ffn", "moe_intermediate"},
    {"kv_lora_rank", "kv_lora_rank"},
    {"qk_rope_head_dim", "qk_rope_head_dim"},
    {"tie", "tied_embeddings"},
    {"dense_layers", "dense_layers"},
    {"moe_every", "moe_every"},
    {"q_lora_rank", "q_lora_rank"},
    {"qk_nope_head_dim", "qk_nope_head_dim"},
    {"v_head_dim", "v_head_dim"},
    {"shared_experts", "shared_experts"},
    {"qkv_bias", "qkv_bias"},
    {"qk_norm", "qk_norm"},
    {"post_norms", "post_norms"},
    {"sliding_window", "sliding_window"},
    {"global_every", "global_every"},
};

/* One "key=value" of the reader into m (keys serving has no use for: true). */
static bool set_config_value(strata_serve_model *m, const char *kv, GError **err)
{
    const char *eq = strchr(kv, '=');
    size_t n = eq ? (size_t)(eq - kv) : 0;
    if (n == 3 && strncmp(kv, "mlp", 3) == 0)
        return strata_serve_model_set(m, "gated", strcmp(eq + 1, "swiglu") == 0 || strcmp(eq + 1, "geglu") == 0
                                                      ? "true" : "false", err);
    for (size_t i = 0; eq && i < G_N_ELEMENTS(config_keys); i++)
        if (strlen(config_keys[i][0]) == n && strncmp(kv, config_keys[i][0], n) == 0)
            return strata_serve_model_set(m, config_keys[i][1], eq + 1, err);
    return true;
}

bool strata_serve_model_from_config(strata_serve_model *m, const char *path, GError **err)
{
    strata_model_config *cfg = strata_model_config_load(path, err);
    if (!cfg)
        return false;
    strata_serve_model_init(m);
    m->gated = false; /* the reader's mlp key says (gelu when a file and its family leave it out) */
    char *base = g_path_get_basename(path);
    g_strlcpy(m->name, base, sizeof m->name);
    g_free(base);
    bool ok = true;
    for (const char *const *v = strata_model_config_values(cfg); ok && *v; v++)
        ok = set_config_value(m, *v, err);
    m->weight_block = strata_model_config_weight_block(cfg);
    m->qk_norm_tp = strata_serve_qk_norm_whole_family(strata_model_config_family(cfg));
    /* vLLM serves at most the length it derives from the file (it refuses a longer --max-model-len; a prompt
     * past it is refused): strata's default 8192 where shorter, else the file's */
    m->max_positions = strata_model_config_max_positions(cfg);
    const char *problem = strata_model_config_max_len_problem(cfg);
    if (ok && problem) { /* its served length is vLLM's derivation, which refuses it */
        g_set_error_literal(err, STRATA_ERROR, STRATA_ERROR_INPUT, problem);
        ok = false;
    }
    if (m->max_positions && m->max_positions < m->max_model_len)
        m->max_model_len = m->max_positions;
    strata_model_config_free(cfg);
    if (ok && !m->kv_heads)
        m->kv_heads = m->heads;
    if (ok && !m->head_dim && m->heads)
        m->head_dim = m->hidden / m->heads;
    if (ok && !m->intermediate)
        m->intermediate = 4 * m->hidden;
    if (!ok)
        g_prefix_error(err, "%s: ", path);
    return ok;
}

bool strata_serve_model_check(const strata_serve_model *m, const char *origin, GError **err)
{
    const char *missing = !m->layers ? "layers" : !m->hidden ? "hidden" : !m->heads ? "heads"
                          : !m->kv_heads ? "kv_heads" : !m->head_dim ? "head_dim"
                          : !m->intermediate ? "intermediate" : !m->vocab ? "vocab"
                          : !m->max_model_len ? "max_model_len" : NULL;
    if (missing) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected %s > 0 in the model", origin, missing);
        return false;
    }
    if (m->heads % m->kv_heads != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected kv_heads (%u) to divide heads (%u)", origin,
                    m->kv_heads, m->heads);
        return false;
    }
    if (m->weight_block != 0 && m->weight_block != 128) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected weight_block 0 or 128 (the 128 x 128 "
                    "blocks TensorRT-LLM's and DeepGEMM's block-scaled FP8 GEMMs take), got %u", origin,
                    m->weight_block);
        return false;
    }
    if (m->top_k > m->experts || (m->experts && !m->top_k)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected 1 <= top_k <= experts with experts "
                    "(got experts %u, top_k %u)", origin, m->experts, m->top_k);
        return false;
    }
    /* router_groups is a grouped router's n_group: its scores are viewed as [tokens, n_group, experts / n_group]
     * (sgl-project/sglang@000328a8 python/sglang/srt/layers/moe/topk.py grouped_topk_gpu, scores.view(num_token,
     * num_expert_group, -1); biased_grouped_topk_impl alike, serve_moe_gate.h), which needs n_group to divide the
     * experts. 3 or 9 groups of mixtral-8x7b's 8 were taken at exit 0 (the twenty-eighth pass). */
    if (m->router_groups && m->experts % m->router_groups != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected router_groups (the router's n_group) to "
                    "divide experts (%u): the scores are grouped as experts / n_group a group, got %u", origin,
                    m->experts, m->router_groups);
        return false;
    }
    /* the weight and KV sizes are computed in double and cast to uint64_t, which is undefined past 2^64: a model of
     * absurd sizes (layers, hidden, vocab near 2^32) is refused here rather than read as 0 bytes of weights */
    double weights = strata_serve_model_params(m) * strata_serve_dtype_bytes(m->dtype);
    double kv_b = strata_serve_dtype_bytes(m->kv_dtype ? m->kv_dtype : m->dtype);
    double kv_token = m->kv_lora_rank ? ((double)m->kv_lora_rank + m->qk_rope_head_dim) * m->layers * kv_b
                                      : 2.0 * m->layers * m->kv_heads * (double)m->head_dim * kv_b;
    if (!(weights < 0x1p62) || !(kv_token * m->max_model_len < 0x1p62)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected a model whose weights (%.3g B) and KV cache "
                    "of one max_model_len sequence (%.3g B) are below 2^62 bytes", origin, weights,
                    kv_token * m->max_model_len);
        return false;
    }
    return true;
}

double strata_serve_dtype_bytes(strata_dtype d)
{
    return d == STRATA_DTYPE_NONE ? 2.0 : strata_dtype_bits(d) / 8.0;
}

uint32_t strata_serve_kv_heads_per_rank(const strata_serve_model *m, uint32_t tp)
{
    uint32_t h = m->kv_heads / (tp ? tp : 1);
    return h ? h : 1;
}

uint64_t strata_serve_kv_bytes_per_token(const strata_serve_model *m, uint32_t tp)
{
    double b = strata_serve_dtype_bytes(m->kv_dtype ? m->kv_dtype : m->dtype);
    if (m->kv_lora_rank)
        return (uint64_t)((double)(m->kv_lora_rank + m->qk_rope_head_dim) * m->layers * b);
    return (uint64_t)(2.0 * m->layers * strata_serve_kv_heads_per_rank(m, tp) * m->head_dim * b);
}

void strata_serve_model_shape(const strata_serve_model *m, strata_model_shape *s)
{
    *s = (strata_model_shape){
        .layers = m->layers, .d_model = m->hidden, .heads = m->heads, .kv_heads = m->kv_heads,
        .head_dim = m->head_dim, .ffn = m->intermediate, .vocab = m->vocab,
        .mlp = m->gated ? STRATA_MLP_SWIGLU : STRATA_MLP_GELU, .gated = m->gated, .rmsnorm = true, .rope = true,
        .tie = m->tied_embeddings, .qkv_bias = m->qkv_bias, .qk_norm = m->qk_norm, .post_norms = m->post_norms,
        .experts = m->experts, .top_k = m->top_k, .shared_experts = m->shared_experts,
        .moe_ffn = m->moe_intermediate ? m->moe_intermediate : m->intermediate, .dense_layers = m->dense_layers,
        .moe_every = m->moe_every ? m->moe_every : 1, .q_lora_rank = m->q_lora_rank,
        .kv_lora_rank = m->kv_lora_rank, .qk_nope_head_dim = m->qk_nope_head_dim ? m->qk_nope_head_dim : m->head_dim,
        .qk_rope_head_dim = m->qk_rope_head_dim, .v_head_dim = m->v_head_dim ? m->v_head_dim : m->head_dim,
        .sliding_window = m->sliding_window, .global_every = m->global_every,
    };
}

uint32_t strata_serve_window_layers(const strata_serve_model *m)
{
    if (!m->sliding_window)
        return 0;
    return m->global_every ? m->layers - m->layers / m->global_every : m->layers;
}

double strata_serve_model_params(const strata_serve_model *m)
{
    strata_model_shape s;
    double total = 0, active = 0;
    strata_serve_model_shape(m, &s);
    strata_model_shape_count(&s, 0, &total, &active);
    return total;
}

/* Parameters every rank holds whole (vLLM's ReplicatedLinear and norms):
 * per layer its norms (and q and k norms), an MoE layer's router, MLA's
 * down-projections q_a d x q_lora and kv_a d x (kv_lora + rope) with their
 * norms; the final norm. */
static double replicated_params(const strata_model_shape *s)
{
    double d = (double)s->d_model, per_layer = d * (s->post_norms ? 4 : 2) + (s->qk_norm ? 2.0 * s->head_dim : 0);
    if (s->kv_lora_rank > 0)
        per_layer += d * (double)(s->q_lora_rank + s->kv_lora_rank + s->qk_rope_head_dim) +
                     (double)(s->q_lora_rank + s->kv_lora_rank);
    /* the routers in closed form: a config.json may declare 2^31 - 1 layers */
    return d + (double)s->layers * per_layer + (double)strata_model_moe_layers(s) * d * (double)s->experts;
}

/* What attention data parallelism keeps whole on each rank besides
 * replicated_params (TensorRT-LLM's enable_attention_dp: "All GEMM weights
 * are replicated" in the attention module; dense MLPs and shared experts
 * with overridden_tp_size=1; the embedding and LM head, the LM head's TP
 * being enable_lm_head_tp_in_adp, off): GQA's q, k, v (and biases) and o,
 * the dense layers' MLPs, the shared experts, the embedding tables. */
static double dp_whole_params(const strata_model_shape *s)
{
    double d = (double)s->d_model, hd = (double)s->head_dim, qkv = (double)(s->heads + 2 * s->kv_heads) * hd;
    double attn = d * qkv + (double)s->heads * hd * d + (s->qkv_bias ? qkv : 0), mats = s->gated ? 3 : 2;
    double moe = (double)strata_model_moe_layers(s), dense = (double)s->layers - moe;
    return (double)s->layers * attn + dense * mats * d * (double)s->ffn +
           moe * (double)s->shared_experts * mats * d * (double)s->moe_ffn + (s->tie ? 1 : 2) * (double)s->vocab * d;
}

/* Weight bytes a rank holds. Under weights narrower than 16 bits the
 * embedding table and the LM head stay in bf16 (ModelOpt quantizes Linear
 * layers only and exports the head excluded: unified_export_hf.py, as
 * serve_cost.c's lm_head cites): their extra bytes are added at the
 * embeddings' sharding (split over tp, whole on each rank under attention
 * dp). */
uint64_t strata_serve_weight_bytes_dp(const strata_serve_model *m, uint32_t tp, bool attention_dp)
{
    strata_model_shape s;
    strata_serve_model_shape(m, &s);
    double total = 0, active = 0, whole = replicated_params(&s), t = tp ? tp : 1, b = strata_serve_dtype_bytes(m->dtype);
    strata_model_shape_count(&s, 0, &total, &active);
    bool dp = attention_dp && t > 1;
    double embed = b < 2 ? (s.tie ? 1 : 2) * (double)s.vocab * (double)s.d_model * (2 - b) / (dp ? 1 : t) : 0;
    if (dp) {
        double dw = dp_whole_params(&s);
        return (uint64_t)(((total - whole - dw) / t + whole + dw) * b + embed);
    }
    return (uint64_t)(((total - whole) / t + whole) * b + embed);
}

/* CutlassMoeFCRunner::getWorkspaceDeviceBufferSizes (NVIDIA/TensorRT-LLM
 * @000dea27, cpp/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/
 * moe_kernels.cu), EP 1 (every expert on the rank, a 1/tp slice of each),
 * not the min-latency mode, no LoRA, AWQ or block scales, for n rows
 * (tokens), r = top_k x n routed rows, hidden h, slice width w, e experts,
 * T the GEMMs' input type (FP8 under 8-bit weights), gemm outputs bf16:
 *   permuted_row_to_unpermuted_row, permuted_token_selected_experts,
 *     permuted_token_final_scales (mayHaveFinalizeFused on SM90): 4 r each;
 *   blocked_expert_counts and its cumsum: 4 e ceil(n / b) each (b of
 *     computeNumTokensPerBlock, as serve_cost.c's expert_maps);
 *     blocked_row_to_unpermuted_row: 4 e n;
 *   expert_first_token_offset: 8 (e + 1);
 *   overlapped_gemm1_gemm2_inputs: max(permuted data r h T, fc2_result
 *     r h x 2, fc1_result r w T);
 *   overlapped_gemm1_gemm2_outputs: max(glu_inter (2 r w gated, else r w)
 *     x 2, fc2_result r h x 2, fc1_result);
 *   the per-expert pointer arrays and TMA workspaces (a few KiB, left out).
 * FusedMoeRunner::runMoe (cpp/tensorrt_llm/thop/moeOp.cpp, read at
 * @01503f55) takes it with torch::empty beside src_to_dest_map (4 r) and
 * the output (n x h in bf16), so the caching allocator counts all three in
 * the profile run's peak (KvCacheCreator.estimate_max_tokens,
 * allocated_bytes.all.peak). */
uint64_t strata_serve_moe_call_bytes(const strata_serve_model *m, uint32_t tp, uint64_t rows)
{
    strata_model_shape s;
    strata_serve_model_shape(m, &s);
    if (!strata_model_moe_layers(&s) || !m->experts || !m->top_k || !rows)
        return 0;
    double n = (double)rows, r = (double)m->top_k * n, h = m->hidden, e = m->experts;
    double w = (double)s.moe_ffn / (tp ? tp : 1), in = strata_serve_dtype_bytes(m->dtype);
    uint64_t b = 1024;
    for (uint64_t size = 32; size <= 1024; size *= 2)
        if ((rows + size - 1) / size * m->experts <= size) {
            b = size;
            break;
        }
    double blocks = (double)((rows + b - 1) / b);
    double fc2 = r * h * 2, fc1 = r * w * in, glu = (s.gated ? 2 : 1) * r * w * 2;
    double inputs = fmax(fmax(r * h * in, fc2), fc1), outputs = fmax(fmax(glu, fc2), fc1);
    double ws = 3 * 4 * r + 2 * 4 * e * blocks + 4 * e * n + 8 * (e + 1) + inputs + outputs;
    return (uint64_t)(ws + 4 * r + n * h * 2);
}

uint64_t strata_serve_weight_bytes(const strata_serve_model *m, uint32_t tp)
{
    return strata_serve_weight_bytes_dp(m, tp, false);
}
