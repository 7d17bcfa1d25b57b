/*
 * model_shape.c: a decoder's shape from its keys, with the defaults
 * resolved, and what follows from it alone: its parameter count and the
 * step flops the large trainers print (model_config.h).
 *
 * Counting (parameters as the checkpoints store them): the embedding V d,
 * the output projection V d more unless tied; per layer the attention
 * (grouped-query: q d H hd, k and v d K hd each, o H hd d; q/k/v biases
 * H hd + 2 K hd; q and k norms hd each; MLA: see mla_params), the MLP
 * (dense: 2 or, gated, 3 matrices of d F; MoE: a router d E, E experts
 * of d F_moe each, shared experts likewise) and its norms (d each, two
 * a layer or four with post_norms), and the final norm d. The learned
 * positions add seq d. Layernorm's bias is not counted (none of the
 * published models has one).
 */
#include "workload/model_config.h"
#include <string.h>
#include "core/error.h"

static bool bool_or(const strata_params *p, const char *name, bool fallback)
{
    return strata_params_is_set(p, name) ? strata_params_bool(p, name) : fallback;
}

static const char *string_or(const strata_params *p, const char *name, const char *fallback)
{
    return strata_params_is_set(p, name) ? strata_params_string(p, name) : fallback;
}

static bool refuse(GError **err, const char *owner, const char *what, int64_t a, int64_t b)
{
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: %s, got %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT,
                owner, what, a, b);
    return false;
}

/* The checks that need two keys (each count alone is checked >= 1 by the generator). */
static bool shape_check(const strata_model_shape *s, const char *owner, GError **err)
{
    if (s->kv_heads < 1 || s->heads % s->kv_heads != 0)
        return refuse(err, owner, "expected kv_heads (>= 1) to divide heads (kv_heads, heads)", s->kv_heads,
                      s->heads);
    if (s->head_dim < 1 || s->ffn < 1)
        return refuse(err, owner, "expected head_dim and ffn >= 1", s->head_dim, s->ffn);
    if (s->experts < 0 || s->shared_experts < 0 || s->dense_layers < 0 || s->moe_every < 1)
        return refuse(err, owner, "expected experts, shared_experts, dense_layers >= 0 and moe_every >= 1",
                      s->experts, s->moe_every);
    if (s->sliding_window < 0 || s->global_every < 0)
        return refuse(err, owner, "expected sliding_window and global_every >= 0", s->sliding_window,
                      s->global_every);
    if (s->experts == 0 && s->top_k != 0) /* a dense model: top_k was dropped (serve refuses it too) */
        return refuse(err, owner, "expected top_k only with experts > 0 (top_k, experts)", s->top_k, s->experts);
    if (s->experts > 0 && (s->top_k < 1 || s->top_k > s->experts))
        return refuse(err, owner, "expected top_k between 1 and experts with experts > 0 (top_k, experts)", s->top_k,
                      s->experts);
    /* moe_ffn, qk_nope_head_dim and v_head_dim are widths wherever given: moe_ffn=-1 on a dense model and
     * v_head_dim=-1 without MLA were taken at exit 0 (read by nothing) */
    if (s->moe_ffn < 1)
        return refuse(err, owner, "expected moe_ffn >= 1 (moe_ffn, experts)", s->moe_ffn, s->experts);
    if (s->qk_nope_head_dim < 1 || s->v_head_dim < 1)
        return refuse(err, owner, "expected qk_nope_head_dim and v_head_dim >= 1", s->qk_nope_head_dim,
                      s->v_head_dim);
    if (s->q_lora_rank < 0 || s->kv_lora_rank < 0 || s->qk_rope_head_dim < 0)
        return refuse(err, owner, "expected q_lora_rank, kv_lora_rank, qk_rope_head_dim >= 0 (q_lora_rank, "
                                  "kv_lora_rank)", s->q_lora_rank, s->kv_lora_rank);
    return true;
}

bool strata_model_shape_of(const strata_params *p, const char *owner, strata_model_shape *s, GError **err)
{
    *s = (strata_model_shape){0};
    s->layers = strata_params_int(p, "layers");
    s->d_model = strata_params_int(p, "d_model");
    s->heads = strata_params_int(p, "heads");
    s->vocab = strata_params_int(p, "vocab");
    s->kv_heads = strata_params_int_or(p, "kv_heads", s->heads);
    s->head_dim = strata_params_int_or(p, "head_dim", s->heads > 0 ? s->d_model / s->heads : 0);
    s->ffn = strata_params_int_or(p, "ffn", 4 * s->d_model);
    const char *mlp = string_or(p, "mlp", "gelu");
    s->mlp = g_str_equal(mlp, "relu") ? STRATA_MLP_RELU : g_str_equal(mlp, "swiglu") ? STRATA_MLP_SWIGLU
             : g_str_equal(mlp, "geglu")                 ? STRATA_MLP_GEGLU
                                                          : STRATA_MLP_GELU;
    s->gated = s->mlp == STRATA_MLP_SWIGLU || s->mlp == STRATA_MLP_GEGLU;
    s->rmsnorm = g_str_equal(string_or(p, "norm", "layernorm"), "rmsnorm");
    s->rope = g_str_equal(string_or(p, "pos", "learned"), "rope");
    s->tie = bool_or(p, "tie", true);
    s->qkv_bias = bool_or(p, "qkv_bias", false);
    s->qk_norm = bool_or(p, "qk_norm", false);
    s->post_norms = bool_or(p, "post_norms", false);
    s->experts = strata_params_int_or(p, "experts", 0);
    s->top_k = strata_params_int_or(p, "top_k", 0);
    s->shared_experts = strata_params_int_or(p, "shared_experts", 0);
    s->moe_ffn = strata_params_int_or(p, "moe_ffn", s->ffn);
    s->dense_layers = strata_params_int_or(p, "dense_layers", 0);
    s->moe_every = strata_params_int_or(p, "moe_every", 1);
    s->q_lora_rank = strata_params_int_or(p, "q_lora_rank", 0);
    s->kv_lora_rank = strata_params_int_or(p, "kv_lora_rank", 0);
    s->qk_nope_head_dim = strata_params_int_or(p, "qk_nope_head_dim", s->head_dim);
    s->qk_rope_head_dim = strata_params_int_or(p, "qk_rope_head_dim", 0);
    s->v_head_dim = strata_params_int_or(p, "v_head_dim", s->head_dim);
    s->sliding_window = strata_params_int_or(p, "sliding_window", 0);
    s->global_every = strata_params_int_or(p, "global_every", 0);
    return shape_check(s, owner, err);
}

/* The keys strata_model_shape_of resolves but reads only beside another (as serve_model.c's orphan table for a
 * served model): qk_nope_head_dim and v_head_dim, defaulting to head_dim, are read by mla_params only. */
static const struct {
    const char *key, *parent, *what;
} key_parents[] = {
    {"q_lora_rank", "kv_lora_rank", "an MLA model"},     {"qk_nope_head_dim", "kv_lora_rank", "an MLA model"},
    {"qk_rope_head_dim", "kv_lora_rank", "an MLA model"}, {"v_head_dim", "kv_lora_rank", "an MLA model"},
    {"shared_experts", "experts", "an MoE model"},        {"moe_ffn", "experts", "an MoE model"},
    {"dense_layers", "experts", "an MoE model"},          {"moe_every", "experts", "an MoE model"},
    {"global_every", "sliding_window", "windowed attention"},
};

const char *strata_model_key_parent(const char *key, const char **what)
{
    for (size_t i = 0; i < G_N_ELEMENTS(key_parents); i++)
        if (strcmp(key, key_parents[i].key) == 0) {
            *what = key_parents[i].what;
            return key_parents[i].parent;
        }
    return NULL;
}

int64_t strata_model_layer_window(const strata_model_shape *s, int64_t l)
{
    return s->global_every > 0 && (l + 1) % s->global_every == 0 ? 0 : s->sliding_window;
}

bool strata_model_layer_is_moe(const strata_model_shape *s, int64_t l)
{
    return s->experts > 0 && l >= s->dense_layers && l % s->moe_every == 0;
}

/* MLA's matrices and norms in one layer (DeepSeek-V3's DeepseekV3Attention):
 * q_a d x q_lora, its norm, q_b q_lora x H (nope + rope) (or one d x H
 * (nope + rope) without q_lora), kv_a d x (kv_lora + rope), its norm,
 * kv_b kv_lora x H (nope + v), o H v x d. */
static double mla_params(const strata_model_shape *s)
{
    double d = (double)s->d_model, H = (double)s->heads, qk = (double)(s->qk_nope_head_dim + s->qk_rope_head_dim);
    double ql = (double)s->q_lora_rank, kvl = (double)s->kv_lora_rank;
    double q = s->q_lora_rank > 0 ? d * ql + ql + ql * H * qk : d * H * qk;
    double kv = d * (kvl + (double)s->qk_rope_head_dim) + kvl + kvl * H * (double)(s->qk_nope_head_dim + s->v_head_dim);
    return q + kv + H * (double)s->v_head_dim * d;
}

/* The attention's parameters in one layer, and of them the matrices'. */
static double attention_params(const strata_model_shape *s, double *matrices)
{
    if (s->kv_lora_rank > 0) {
        double all = mla_params(s);
        *matrices = all - (double)s->q_lora_rank - (double)s->kv_lora_rank; /* less its two norms */
        return all;
    }
    double d = (double)s->d_model, hd = (double)s->head_dim, H = (double)s->heads, K = (double)s->kv_heads;
    *matrices = 2 * d * H * hd + 2 * d * K * hd;
    return *matrices + (s->qkv_bias ? H * hd + 2 * K * hd : 0) + (s->qk_norm ? 2 * hd : 0);
}

/* Layer l's MLP parameters: all and those a token uses. */
static void mlp_params(const strata_model_shape *s, int64_t l, double *all, double *used)
{
    double d = (double)s->d_model, mats = s->gated ? 3.0 : 2.0;
    if (!strata_model_layer_is_moe(s, l)) {
        *all = *used = mats * d * (double)s->ffn;
        return;
    }
    double expert = mats * d * (double)s->moe_ffn, router = d * (double)s->experts;
    double shared = (double)s->shared_experts * expert;
    *all = router + (double)s->experts * expert + shared;
    *used = router + (double)s->top_k * expert + shared;
}

/* The MoE layers, l in [dense_layers, layers) that moe_every divides, in
 * closed form: a config.json may declare 2^31 - 1 layers, and counting
 * them one by one took seconds (fuzz_model_config). */
int64_t strata_model_moe_layers(const strata_model_shape *s)
{
    if (s->experts <= 0 || s->dense_layers >= s->layers)
        return 0;
    int64_t every = s->moe_every, from = s->dense_layers > 0 ? s->dense_layers : 0;
    return (s->layers + every - 1) / every - (from + every - 1) / every; /* multiples below layers, less below from */
}

/* The MLPs' parameters over every layer: all and those a token uses (whole
 * numbers below 2^53, so the products are the sums layer by layer). */
static void mlp_totals(const strata_model_shape *s, double *all, double *used)
{
    int64_t n_moe = strata_model_moe_layers(s);
    double dense_all = 0, dense_used = 0, moe_all = 0, moe_used = 0;
    mlp_params(s, -1, &dense_all, &dense_used); /* layer -1: below dense_layers, never MoE */
    if (n_moe > 0) {
        int64_t first = s->dense_layers > 0 ? s->dense_layers : 0;
        first += (s->moe_every - first % s->moe_every) % s->moe_every;
        mlp_params(s, first, &moe_all, &moe_used);
    }
    *all = (double)(s->layers - n_moe) * dense_all + (double)n_moe * moe_all;
    *used = (double)(s->layers - n_moe) * dense_used + (double)n_moe * moe_used;
}

void strata_model_shape_count(const strata_model_shape *s, int64_t seq, double *total, double *active)
{
    double d = (double)s->d_model, V = (double)s->vocab, matrices = 0;
    double fixed = V * d * (s->tie ? 1 : 2) + d + (s->rope ? 0 : (double)seq * d);
    double per_layer = attention_params(s, &matrices) + d * (s->post_norms ? 4 : 2);
    double all = 0, used = 0;
    mlp_totals(s, &all, &used);
    *total = fixed + (double)s->layers * per_layer + all;
    *active = fixed + (double)s->layers * per_layer + used;
}

double strata_model_step_flops(const strata_model_shape *s, int64_t batch, int64_t seq, bool causal)
{
    double tokens = (double)batch * (double)seq, attn_mats = 0;
    attention_params(s, &attn_mats);
    double all = 0, used = 0;
    mlp_totals(s, &all, &used);
    double weights = (double)s->vocab * (double)s->d_model + (double)s->layers * attn_mats + used;
    double dqk = s->kv_lora_rank > 0 ? (double)(s->qk_nope_head_dim + s->qk_rope_head_dim) : (double)s->head_dim;
    double dv = s->kv_lora_rank > 0 ? (double)s->v_head_dim : (double)s->head_dim;
    /* A layer's two products, 2 B S^2 H (dqk + dv), half with a causal mask;
     * a local layer's window W < S, 2 B (S W - W^2 / 2) H (dqk + dv)
     * (calculate_mixed_attention_model_tflops_training_per_device). */
    /* In closed form over the layers (a config.json may declare 2^31 - 1
     * of them; fuzz_model_config): the global ones are l with (l + 1) a
     * multiple of global_every (strata_model_layer_window), the rest
     * local. */
    double per_key = 2.0 * (double)batch * (double)s->heads * (dqk + dv), S = (double)seq;
    double w = (double)s->sliding_window, L = (double)s->layers;
    double globals = s->global_every > 0 ? (double)(s->layers / s->global_every) : 0;
    double local = w > 0 && w < S ? per_key * (S * w - w * w / 2) : per_key * S * S / 2;
    double attention = !causal ? L * per_key * S * S : (L - globals) * local + globals * per_key * S * S / 2;
    return 3.0 * (2.0 * tokens * weights + attention);
}
