/* test_model_config.c: `gen transformer config=FILE` on the shipped Hugging
 * Face configs (configs/models/, sources in its README.md): parameter
 * counts against the published ones, step flops against the trainers'
 * 6N-plus-attention count, the reader's notes and refusals, and attention
 * as a flash kernel (its flops and HBM bytes by hand). */
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "hw/hw.h"
#include "kernel/kernel.h"
#include "trace/check.h"
#include "validate/published.h"
#include "workload/model_config.h"
#include "workload/workload.h"

typedef struct gen_sums {
    double params; /* elements of the arguments tagged param */
    double flops;  /* every compute but the optimizer's */
    double attn_flops; /* computes l0_attn and l0_attn_vjp0 */
    double flash_fwd;  /* computes kernel=flash-attention */
    double peak;       /* most bytes live at once, on the device */
    int host_allocs, copies;
} gen_sums;

static uint64_t elements(const strata_op *op)
{
    uint64_t n = 1;
    for (uint32_t i = 0; i < op->n_dims; i++)
        n *= op->shape[i];
    return n;
}

/* Generates transformer with args (NULL-terminated) and sums the trace. */
static gen_sums generate(const char *const *args)
{
    GError *err = NULL;
    strata_source *src = strata_workload_generate("transformer", args, &err);
    ck_assert_msg(src, "%s", err ? err->message : "");
    gen_sums s = {0};
    bool started = false;
    const strata_op *op;
    GHashTable *sizes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    double live = 0;
    while (strata_source_next(src, &op, &err) == 1) {
        if (op->kind == STRATA_OP_ALLOC && op->memory) {
            s.host_allocs += strcmp(op->memory, "host") == 0;
        } else if (op->kind == STRATA_OP_ALLOC) {
            g_hash_table_insert(sizes, g_strdup(op->name), GSIZE_TO_POINTER(op->size));
            live += (double)op->size;
            s.peak = live > s.peak ? live : s.peak;
        } else if (op->kind == STRATA_OP_COPY)
            s.copies++;
        else if (op->kind == STRATA_OP_FREE)
            live -= (double)GPOINTER_TO_SIZE(g_hash_table_lookup(sizes, op->name));
        if (op->kind == STRATA_OP_ALLOC && !started && op->tag == STRATA_TAG_PARAM)
            s.params += (double)elements(op);
        if (op->kind != STRATA_OP_COMPUTE)
            continue;
        started = true;
        if (op->has_flops && !g_str_has_prefix(op->name, "adamw_"))
            s.flops += op->flops;
        if (g_str_has_prefix(op->name, "l0_attn"))
            s.attn_flops += op->flops;
        if (op->kernel && strcmp(op->kernel, "flash-attention") == 0)
            s.flash_fwd += op->flops;
    }
    ck_assert_msg(!err, "%s", err ? err->message : "");
    g_hash_table_destroy(sizes);
    strata_source_free(src);
    return s;
}

/* The published parameter counts (configs/models/README.md cites each). */
static const struct {
    const char *file;
    double published;
} models[] = {
    {"meta-llama-3-8b.json", 8.03e9},          {"meta-llama-3-70b.json", 70.6e9},
    {"meta-llama-3.1-8b.json", 8.03e9},        {"meta-llama-3.1-70b.json", 70.6e9},
    {"meta-llama-3.1-405b.json", 405e9},       {"gemma-2-9b-it.json", 917504000.0 + 8324201984.0},
    {"gemma-2-27b-it.json", 1179648000.0 + 26047480320.0}, {"gemma-3-27b-it.json", 1416e6 + 25600e6},
    {"qwen2.5-7b.json", 7.61e9},               {"qwen2.5-72b.json", 72.7e9},
    {"qwen3-8b.json", 8.2e9},                  {"qwen3-32b.json", 32.8e9},
    {"qwen3-30b-a3b.json", 30.5e9},            {"mistral-7b-v0.1.json", 7.24e9},
    {"mistral-7b-v0.3.json", 7.25e9},          {"mixtral-8x7b-v0.1.json", 46.7e9},
    {"deepseek-v3.json", 671e9},
    /* wave 15: models released after the first set (configs/models/README.md) */
    {"gpt-oss-20b.json", 20.91e9},             {"gpt-oss-120b.json", 116.83e9},
    {"llama-4-maverick-17b-128e-instruct.json", 400e9}, {"mixtral-8x22b-v0.1.json", 141e9},
    {"qwen3-235b-a22b.json", 235e9},           {"qwen3-coder-480b-a35b-instruct.json", 480e9},
    {"qwen2-57b-a14b.json", 57.4e9},           {"deepseek-v2.json", 236e9},
};

static char *config_arg(const char *file)
{
    char *rel = g_strconcat("configs/models/", file, NULL), *path = strata_test_source_path(rel);
    char *arg = g_strconcat("config=", path, NULL);
    g_free(rel);
    g_free(path);
    return arg;
}

/* Each shipped config's parameters, as the generated step declares them,
 * within 0.5% of the published count (Gemma 2's to the unit: the report
 * gives exact integers). */
START_TEST(shipped_configs_have_published_parameter_counts)
{
    for (size_t i = 0; i < G_N_ELEMENTS(models); i++) {
        char *config = config_arg(models[i].file);
        const char *args[] = {config, "seq=16", "batch=1", NULL};
        gen_sums s = generate(args);
        double err = fabs(s.params - models[i].published) / models[i].published;
        ck_assert_msg(err < 0.005, "%s: %.0f parameters, published %.0f (%.2f%%)", models[i].file, s.params,
                      models[i].published, 100 * err);
        g_free(config);
    }
    char *config = config_arg("gemma-2-9b-it.json");
    const char *args[] = {config, "seq=16", "batch=1", NULL};
    ck_assert_double_eq(generate(args).params, 9241705984.0);
    g_free(config);
    /* Qwen3-0.6B (tied): its card gives the non-embedding 0.44B; the total "0.6B" is rounded past 0.5%.
     * 28 layers x (2 x 1024 x 2048 + 2 x 1024 x 1024 + 2 x 128 + 3 x 1024 x 3072 + 2 x 1024) + 1024 =
     * 440,467,456 (0.1% from 0.44B), the embedding 151,936 x 1024 = 155,582,464 more. */
    config = config_arg("qwen3-0.6b.json");
    const char *small[] = {config, "seq=16", "batch=1", NULL};
    ck_assert_double_eq(generate(small).params, 440467456.0 + 155582464.0);
    g_free(config);
}
END_TEST

/* Step flops of Llama 3.1 8B, batch 1 x 2048, causal flash attention,
 * against the count MaxText's calculate_tflops_training_per_device prints
 * (src/MaxText/maxtext_utils.py; Megatron's num_floating_point_operations
 * is the same sum): 6 x tokens x the matmul weights + 3 x the causal
 * attention's two products. By hand: matmul weights = 8,030,261,248 less
 * the input embedding 128256 x 4096 and the 65 norms of 4096 =
 * 7,504,658,432; 6 x 7,504,658,432 x 2048 = 92,217,242,812,416; attention
 * 3 x 2 x 2048^2 x 32 heads x (128 + 128) x 32 layers / 2 =
 * 3,298,534,883,328; total 95,515,777,695,744. The trace's flops, less
 * the flash backward's recomputation of Q K^T and P (its 2.5 x the
 * forward against the trainers' 2 x: model flops count no recomputation),
 * are within 1% (the norms, activations, router and loss are the rest). */
START_TEST(step_flops_match_the_trainers_count)
{
    const double by_hand = 95515777695744.0;
    char *config = config_arg("meta-llama-3.1-8b.json");
    GError *err = NULL;
    const strata_workload_type *t = strata_workload_type_find("transformer");
    const char *args[] = {config, "seq=2048", "batch=1", "attention=flash", "mask=causal", NULL};
    strata_params *p = strata_workload_params_args(t, 5, args, &err);
    ck_assert_msg(p, "%s", err ? err->message : "");
    strata_model_shape shape;
    ck_assert(strata_model_shape_of(p, "transformer", &shape, &err));
    ck_assert_double_eq(strata_model_step_flops(&shape, 1, 2048, true), by_hand);
    strata_params_free(p);
    gen_sums s = generate(args);
    ck_assert_msg(fabs((s.flops - 0.5 * s.flash_fwd) / by_hand - 1) < 0.01, "trace %.6e, by hand %.6e", s.flops,
                  by_hand);
    g_free(config);
    /* and the MoE, MLA and GeGLU models against the same formula */
    static const char *const others[] = {"gemma-2-9b-it.json", "qwen3-30b-a3b.json", "mixtral-8x7b-v0.1.json",
                                         "deepseek-v3.json",   "qwen2.5-7b.json",    "gemma-3-27b-it.json"};
    for (size_t i = 0; i < G_N_ELEMENTS(others); i++) {
        config = config_arg(others[i]);
        args[0] = config;
        p = strata_workload_params_args(t, 5, args, &err);
        ck_assert_msg(p && strata_model_shape_of(p, "transformer", &shape, &err), "%s", err ? err->message : "");
        double want = strata_model_step_flops(&shape, 1, 2048, true);
        strata_params_free(p);
        s = generate(args);
        double model_flops = s.flops - 0.5 * s.flash_fwd;
        ck_assert_msg(fabs(model_flops / want - 1) < 0.01, "%s: trace %.6e, formula %.6e", others[i], model_flops,
                      want);
        g_free(config);
    }
}
END_TEST

/* A flash step: the causal kernel's flops are half the unmasked one's
 * (4 B H S^2 hd = 4 x 2 x 4 x 256^2 x 64 = 134,217,728 forward, times 3.5
 * with the backward's 2.5), and its HBM bytes follow the block size: on a
 * systolic unit MaxText's blocks are min(512, S) = 256, one block pair
 * per (batch, head), masked or not (the causal mask computes the diagonal
 * pair whole): (2 S D + 2 Bc D pairs) x 2 + 4 S = (32768 + 32768) x 2 +
 * 1024 = 132,096 bytes; x B H = 8. */
START_TEST(flash_attention_flops_and_bytes)
{
    const char *full[] = {"layers=1", "d_model=256", "heads=4", "seq=256", "batch=2", "vocab=512",
                          "attention=flash", "mask=none", NULL};
    const char *causal[] = {"layers=1", "d_model=256", "heads=4", "seq=256", "batch=2", "vocab=512",
                            "attention=flash", "mask=causal", NULL};
    ck_assert_double_eq(generate(full).attn_flops, 3.5 * 134217728.0);
    ck_assert_double_eq(generate(causal).attn_flops, 3.5 * 134217728.0 / 2);
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw_text(
        "[hardware]\nname = t\n[memory hbm]\nkind = device\ncapacity = 16GiB\nbandwidth = 1TB/s\n"
        "[compute mxu]\nflops = 32.768TFLOP/s\n",
        "matrix = systolic\nside = 128\nkernel_launch = 1us\n", &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    for (int masked = 0; masked < 2; masked++) {
        strata_source *src = strata_workload_generate("transformer", masked ? causal : full, &err);
        const strata_op *op;
        bool seen = false;
        while (strata_source_next(src, &op, &err) == 1) {
            if (op->kind != STRATA_OP_COMPUTE || strcmp(op->name, "l0_attn") != 0)
                continue;
            strata_kernel_problem kp;
            const strata_kernel_model *k = strata_kernel_problem_of(op, STRATA_DTYPE_BF16, 0, &kp);
            ck_assert_ptr_nonnull(k);
            ck_assert_str_eq(k->name, "flash-attention");
            strata_kernel_cost c;
            strata_kernel_cost_of(k, hw, 0, &kp, &c);
            ck_assert_double_eq(c.bytes_nominal, 8 * 132096.0);
            seen = true;
        }
        ck_assert(seen);
        strata_source_free(src);
    }
    strata_hw_free(hw);
}
END_TEST

/* Sliding windows: 4 layers, sliding_window 64 of seq 256, global_every 2
 * (Gemma 2's alternation: layers 0 and 2 local, 1 and 3 global). A local
 * layer's forward is 4 B H hd (S W - W^2 / 2) = 4 x 2 x 4 x 64 x (16384 -
 * 2048) = 29,360,128 flops, a global one's the causal 4 x 2 x 4 x 256^2 x
 * 64 / 2 = 67,108,864: layer 0's forward and backward 3.5 x 29360128 =
 * 102,760,448; the four forward kernels 2 x (29360128 + 67108864) =
 * 192,937,984. The local layers name mask=window-64. A window without the
 * causal mask is refused. */
START_TEST(sliding_window_layers)
{
    const char *args[] = {"layers=4", "d_model=256", "heads=4", "seq=256", "batch=2", "vocab=512",
                          "attention=flash", "mask=causal", "sliding_window=64", "global_every=2", NULL};
    gen_sums st = generate(args);
    ck_assert_double_eq(st.attn_flops, 102760448.0);
    ck_assert_double_eq(st.flash_fwd, 192937984.0);
    GError *err = NULL;
    strata_source *src = strata_workload_generate("transformer", args, &err);
    ck_assert_msg(src, "%s", err ? err->message : "");
    const strata_op *op;
    int windows = 0, causal = 0;
    while (strata_source_next(src, &op, &err) == 1)
        if (op->kind == STRATA_OP_COMPUTE && op->kernel && strcmp(op->kernel, "flash-attention") == 0) {
            windows += op->mask && strcmp(op->mask, "window-64") == 0 && (op->name[1] == '0' || op->name[1] == '2');
            causal += op->mask && strcmp(op->mask, "causal") == 0 && (op->name[1] == '1' || op->name[1] == '3');
        }
    strata_source_free(src);
    ck_assert_int_eq(windows, 2);
    ck_assert_int_eq(causal, 2);
    const char *open_mask[] = {"layers=1", "d_model=256", "heads=4", "seq=256", "batch=2", "vocab=512",
                               "attention=flash", "sliding_window=64", NULL};
    ck_assert_ptr_null(strata_workload_generate("transformer", open_mask, &err));
    ck_assert_msg(strstr(err->message, "expected mask=causal"), "%s", err->message);
    g_clear_error(&err);
    /* The reader: the families whose attention applies sliding_window set it
     * (Gemma 3 with its class's pattern of 6, Gemma 2 every other layer);
     * Mistral v0.3's null and Qwen's (no window in its attention) set none. */
    static const struct {
        const char *file, *want;
    } files[] = {{"gemma-3-27b-it.json", "sliding_window=1024 global_every=6"},
                 {"gemma-2-9b-it.json", "sliding_window=4096 global_every=2"},
                 {"mistral-7b-v0.1.json", "sliding_window=4096"},
                 {"mistral-7b-v0.3.json", ""},
                 {"qwen2.5-7b.json", ""}};
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        char *rel = g_strconcat("configs/models/", files[i].file, NULL), *path = strata_test_source_path(rel);
        strata_model_config *c = strata_model_config_load(path, &err);
        ck_assert_msg(c, "%s", err ? err->message : "");
        GString *got = g_string_new(NULL);
        for (const char *const *v = strata_model_config_values(c); *v; v++)
            if (g_str_has_prefix(*v, "sliding_window=") || g_str_has_prefix(*v, "global_every="))
                g_string_append_printf(got, "%s%s", got->len ? " " : "", *v);
        ck_assert_str_eq(got->str, files[i].want);
        g_string_free(got, TRUE);
        strata_model_config_free(c);
        g_free(rel);
        g_free(path);
    }
}
END_TEST

/* The windowed layers' attention in closed form (fuzz_model_config: a
 * config.json declaring 35,128,256 layers took seconds, one by one). One
 * head of 64, S 4096, batch 1: 2 x (64 + 64) = 256 flops per key pair; a
 * local layer (W 1024) 256 x (4096 x 1024 - 1024^2 / 2) = 939,524,096, a
 * causal one 256 x 4096^2 / 2 = 2,147,483,648; of 2^31 - 1 layers,
 * global_every 6 makes 357,913,941 global and 1,789,569,706 local: the
 * step (x 3) is 3 x 1,789,569,706 x 1,207,959,552 below the one without
 * a window. */
START_TEST(window_flops_in_closed_form)
{
    strata_model_shape s = {.layers = 2147483647, .d_model = 64, .heads = 1, .kv_heads = 1, .head_dim = 64,
                            .ffn = 256, .vocab = 512, .mlp = STRATA_MLP_GELU, .moe_every = 1,
                            .qk_nope_head_dim = 64, .v_head_dim = 64, .global_every = 6};
    double full = strata_model_step_flops(&s, 1, 4096, true);
    s.sliding_window = 1024;
    double windowed = strata_model_step_flops(&s, 1, 4096, true);
    double want = 3.0 * 1789569706.0 * 1207959552.0;
    ck_assert_msg(fabs((full - windowed) / want - 1) < 1e-12, "%.17g vs %.17g", full - windowed, want);
}
END_TEST

/* Three newer architectures, counted by hand from their modeling files
 * (transformers' modeling_gpt_oss.py, modeling_llama4.py; DeepseekV3 for
 * Kimi K2) and the configs' keys; d model width, V vocabulary.
 * gpt-oss-20b (MoE, sliding window with sinks): d 2880, V 201,088, 24
 * layers, 64 heads and 8 KV heads of 64, q/k/v biases: attention 2 x 2880
 * x 4096 + 2 x 2880 x 512 + 4096 + 2 x 512 = 26,547,200; 32 experts of 3
 * x 2880 x 2880 = 24,883,200, router 2880 x 32 = 92,160, norms 5,760: a
 * layer 822,907,520, x 24 = 19,749,780,480; + 2 V d + d = 1,158,269,760:
 * 20,908,050,240 (the card's 20.91B with the biases and sinks strata
 * leaves out, 6,706,944). Active: 4 experts, 126,177,920 a layer:
 * 4,186,539,840, of which the input embedding V d = 579,133,440 (the
 * card's 3.61B counts the rest). Layer types alternate from a sliding one:
 * window 128 on even layers. Llama-4-Scout (MoE with a shared expert,
 * nested text_config): d 5120, V 202,048, 48 layers, 40 heads, 8 KV heads
 * of 128: attention 62,914,560; 16 experts and 1 shared of 3 x 5120 x 8192
 * = 125,829,120, router 81,920, norms 10,240: a layer 2,202,101,760, x 48
 * + 2 V d + d = 107,769,861,120; active (1 routed + the shared)
 * 17,172,894,720 (the card's 17B). Kimi-K2 (MLA, 384 experts + 1 shared,
 * 1 dense layer first): d 7168, V 163,840, 64 heads; MLA q_a 7168 x 1536 +
 * 1536 + q_b 1536 x 64 x 192 + kv_a 7168 x 576 + 512 + kv_b 512 x 64 x 256
 * + o 64 x 128 x 7168 = 101,124,096; norms 14,336; the dense MLP 3 x 7168
 * x 18432 = 396,361,728; a MoE MLP 7168 x 384 + 385 x 44,040,192 =
 * 16,958,226,432; 61 x 101,138,432 + 396,361,728 + 60 x 16,958,226,432 +
 * 2 V d + d = 1,026,408,209,408 (the card's "1T"); active (8 routed + the
 * shared) 32,861,477,888 (the card's 32B). */
START_TEST(newer_architectures_by_hand)
{
    static const struct {
        const char *file;
        double total, active;
        int64_t experts, shared, moe_ffn, ffn, global_every, window;
    } want[] = {
        {"gpt-oss-20b.json", 20908050240.0, 4186539840.0, 32, 0, 2880, 2880, 2, 128},
        {"llama-4-scout-17b-16e-instruct.json", 107769861120.0, 17172894720.0, 16, 1, 8192, 16384, 0, 0},
        {"kimi-k2-instruct.json", 1026408209408.0, 32861477888.0, 384, 1, 2048, 18432, 0, 0},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        char *config = config_arg(want[i].file);
        const char *args[] = {config, "seq=16", "batch=1", NULL};
        ck_assert_msg(generate(args).params == want[i].total, "%s", want[i].file);
        GError *err = NULL;
        strata_params *p = strata_workload_params_args(strata_workload_type_find("transformer"), 3, args, &err);
        strata_model_shape sh;
        ck_assert_msg(p && strata_model_shape_of(p, "transformer", &sh, &err), "%s", err ? err->message : "");
        double total = 0, active = 0;
        strata_model_shape_count(&sh, 16, &total, &active);
        ck_assert_msg(total == want[i].total && active == want[i].active, "%s: %.0f %.0f", want[i].file, total,
                      active);
        ck_assert_int_eq(sh.experts, want[i].experts);
        ck_assert_int_eq(sh.shared_experts, want[i].shared);
        ck_assert_int_eq(sh.moe_ffn, want[i].moe_ffn);
        ck_assert_int_eq(sh.ffn, want[i].ffn);
        ck_assert_int_eq(sh.global_every, want[i].global_every);
        ck_assert_int_eq(strata_model_layer_window(&sh, 0), want[i].window);
        ck_assert_int_eq(strata_model_layer_window(&sh, 1), 0);
        strata_params_free(p);
        g_free(config);
    }
}
END_TEST

/* The shape of a config file, as gen reads it. */
static strata_model_shape shape_of(const char *config)
{
    const char *args[] = {config, "seq=16", "batch=1", NULL};
    GError *err = NULL;
    strata_params *p = strata_workload_params_args(strata_workload_type_find("transformer"), 3, args, &err);
    strata_model_shape sh;
    ck_assert_msg(p && strata_model_shape_of(p, "transformer", &sh, &err), "%s", err ? err->message : "");
    strata_params_free(p);
    return sh;
}

/* Qwen 2 MoE's shared expert width and DeepSeek-V2's MLA without a query
 * LoRA, counted by hand (modeling_qwen2_moe.py; DeepSeek-V2's
 * modeling_deepseek.py). Qwen2-57B-A14B: d 3584, V 151,936, 28 layers, 28
 * heads and 4 KV heads of 128 with q/k/v biases: attention 2 x 3584^2 + 2
 * x 3584 x 512 + 3584 + 2 x 512 = 29,364,736; an expert 3 x 3584 x 2560 =
 * 27,525,120, 64 of them and the shared expert of 20480 = 8 experts' width,
 * router 3584 x 64 = 229,376, norms 7,168: a layer 2,011,409,920, x 28 + 2
 * V d + d = 57,408,558,592 (the card's 57.4B; the shared expert's gate, d a
 * layer, is not counted); active (8 routed + the shared) 470,003,200 a
 * layer: 14,249,170,432. DeepSeek-V2-Lite (its HF config's keys: d 2048, V
 * 102,400, 27 layers, 16 heads, q_lora_rank null, kv_lora_rank 512, nope
 * 128, rope 64, v 128, the first layer dense of 10944, 64 experts of 1408
 * top-6 and 2 shared): MLA q 2048 x 16 x 192 + kv_a 2048 x 576 + 512 + kv_b
 * 512 x 16 x 256 + o 16 x 128 x 2048 = 13,763,072; norms 4,096; the dense
 * layer's MLP 3 x 2048 x 10944 = 67,239,936; an expert 8,650,752, a MoE MLP
 * 2048 x 64 + 66 experts = 571,080,704: 27 x 13,767,168 + 67,239,936 + 26
 * x 571,080,704 + 2 V d + d = 15,706,484,224 (the card's 15.7B); active (6
 * routed + 2 shared) 2,661,150,208 (the card's 2.4B leaves out the
 * embeddings, 419,430,400 here). MiniMax-M2.5 (every layer MoE, q/k
 * norms): d 3072, V 200,064, 62 layers, 48 heads and 8 KV heads of 128:
 * attention 2 x 3072 x 6144 + 2 x 3072 x 1024 + 2 x 128 (strata's per-head
 * q/k norm) = 44,040,448; 256 experts of 3 x 3072 x 1536 = 14,155,776,
 * router 786,432, norms 6,144: 62 x 3,668,711,680 + 2 V d + d =
 * 228,689,320,448 (the card's "230B" is 0.57% above: rounded; its MTP
 * modules are not counted); active (8 experts) 11,030,108,672, 10.42B
 * without the input embedding (the card's 10B). */
START_TEST(qwen2_moe_and_deepseek_v2_by_hand)
{
    char *lite = strata_test_write_temp(
        "cfg-XXXXXX.json", "{\"model_type\": \"deepseek_v2\", \"hidden_size\": 2048, \"intermediate_size\": 10944, "
        "\"num_hidden_layers\": 27, \"num_attention_heads\": 16, \"num_key_value_heads\": 16, \"vocab_size\": "
        "102400, \"tie_word_embeddings\": false, \"q_lora_rank\": null, \"kv_lora_rank\": 512, \"qk_nope_head_dim\": "
        "128, \"qk_rope_head_dim\": 64, \"v_head_dim\": 128, \"n_routed_experts\": 64, \"num_experts_per_tok\": 6, "
        "\"n_shared_experts\": 2, \"moe_intermediate_size\": 1408, \"first_k_dense_replace\": 1, \"moe_layer_freq\": "
        "[0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]}");
    char *configs[] = {config_arg("qwen2-57b-a14b.json"), g_strconcat("config=", lite, NULL),
                       config_arg("minimax-m2.5.json")};
    static const struct {
        double total, active;
        int64_t experts, shared, moe_ffn, dense_layers, q_lora_rank;
    } want[] = {{57408558592.0, 14249170432.0, 64, 8, 2560, 0, 0},
                {15706484224.0, 2661150208.0, 64, 2, 1408, 1, 0},
                {228689320448.0, 11030108672.0, 256, 0, 1536, 0, 0}};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        strata_model_shape sh = shape_of(configs[i]);
        double total = 0, active = 0;
        strata_model_shape_count(&sh, 16, &total, &active);
        ck_assert_msg(total == want[i].total && active == want[i].active, "%s: %.0f %.0f", configs[i], total, active);
        ck_assert_int_eq(sh.experts, want[i].experts);
        ck_assert_int_eq(sh.shared_experts, want[i].shared);
        ck_assert_int_eq(sh.moe_ffn, want[i].moe_ffn);
        ck_assert_int_eq(sh.dense_layers, want[i].dense_layers);
        ck_assert_int_eq(sh.moe_every, 1);
        ck_assert_int_eq(sh.q_lora_rank, want[i].q_lora_rank);
        const char *args[] = {configs[i], "seq=16", "batch=1", NULL};
        ck_assert_msg(generate(args).params == want[i].total, "%s", configs[i]);
        g_free(configs[i]);
    }
    g_free(lite);
    /* What strata cannot place is refused, naming the layer. */
    static const char *const bad[][2] = {
        {"{\"model_type\": \"qwen2_moe\", \"mlp_only_layers\": [0, 2]}", "layer 2 is dense but not among the first 2"},
        {"{\"model_type\": \"qwen2_moe\", \"shared_expert_intermediate_size\": 5000}", "5000 is not a multiple of "
         "moe_intermediate_size 1408"},
        {"{\"model_type\": \"deepseek_v2\", \"num_hidden_layers\": 4, \"moe_layer_freq\": [0, 1, 0, 1]}",
         "key 'moe_layer_freq': layer 1 is MoE"},
        {"{\"model_type\": \"deepseek_v2\", \"num_hidden_layers\": 4, \"moe_layer_freq\": [1, 1, 0, 1]}",
         "key 'moe_layer_freq': layer 2 is dense"},
        {"{\"model_type\": \"deepseek_v2\", \"num_hidden_layers\": 4, \"moe_layer_freq\": [0, 1, 1]}",
         "key 'moe_layer_freq': 3 entries for 4 layers"},
        {"{\"model_type\": \"deepseek_v2\", \"moe_layer_freq\": [0, 2]}", "key 'moe_layer_freq': expected"},
        {"{\"model_type\": \"mimo_v2_flash\", \"moe_layer_freq\": [0, 1]}", "'mimo_v2_flash' is a hybrid of "
         "sliding-window and full-attention layers"},
    };
    GError *err = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *path = strata_test_write_temp("cfg-XXXXXX.json", bad[i][0]);
        ck_assert_ptr_null(strata_model_config_load(path, &err));
        ck_assert_msg(err && strstr(err->message, path) && strstr(err->message, bad[i][1]), "%s: %s", bad[i][0],
                      err ? err->message : "no error");
        g_clear_error(&err);
        g_free(path);
    }
    /* A periodic list and Qwen's leading dense layers are placed: MoE from layer 2, every other layer. */
    char *path = strata_test_write_temp("cfg-XXXXXX.json", "{\"model_type\": \"deepseek_v2\", \"num_hidden_layers\": "
                                                           "6, \"moe_layer_freq\": [0, 0, 1, 0, 1, 0]}");
    strata_model_config *c = strata_model_config_load(path, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    GString *got = g_string_new(NULL);
    for (const char *const *v = strata_model_config_values(c); *v; v++)
        if (g_str_has_prefix(*v, "dense_layers=") || g_str_has_prefix(*v, "moe_every="))
            g_string_append_printf(got, "%s ", *v);
    ck_assert_str_eq(got->str, "dense_layers=2 moe_every=2 ");
    strata_model_config_free(c);
    g_free(path);
    path = strata_test_write_temp("cfg-XXXXXX.json", "{\"model_type\": \"qwen2_moe\", \"mlp_only_layers\": [1, 0]}");
    c = strata_model_config_load(path, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    g_string_truncate(got, 0);
    for (const char *const *v = strata_model_config_values(c); *v; v++)
        if (g_str_has_prefix(*v, "dense_layers=") || g_str_has_prefix(*v, "shared"))
            g_string_append_printf(got, "%s ", *v);
    ck_assert_str_eq(got->str, "dense_layers=2 shared_experts=4 ");
    g_string_free(got, TRUE);
    strata_model_config_free(c);
    g_free(path);
}
END_TEST

/* Architectures strata cannot model are refused by name, exit status 2,
 * never read with another family's defaults (Llama 4 once read as a
 * 6.7B Llama 2); Python's Infinity and NaN are read as null, with a note. */
START_TEST(unmodelled_architectures_are_refused)
{
    static const char *const bad[][2] = {
        {"{\"model_type\": \"qwen3_next\", \"hidden_size\": 2048}", "key 'model_type': 'qwen3_next' is a linear-attention"},
        {"{\"model_type\": \"nemotron_h\"}", "Mamba-2"},
        {"{\"model_type\": \"brand_new\", \"hidden_size\": 64}", "key 'model_type': 'brand_new' is not an architecture"},
        /* a whole decoder's shape, but an expert count llama's row would drop */
        {"{\"model_type\": \"brand_new_moe\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
         "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100, \"num_experts\": 8}",
         "key 'model_type': 'brand_new_moe' is not an architecture"},
        {"{\"model_type\": \"gpt_oss\", \"layer_types\": [\"sliding_attention\", \"linear_attention\"]}",
         "key 'layer_types': layer 1 is \"linear_attention\""},
        {"{\"model_type\": \"gpt_oss\", \"layer_types\": [\"full_attention\", \"sliding_attention\", "
         "\"sliding_attention\"]}", "key 'layer_types': layer 1 breaks the pattern of a global layer every 1"},
        {"{\"model_type\": \"gpt_oss\", \"layer_types\": 3}", "key 'layer_types': expected an array"},
    };
    GError *err = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *path = strata_test_write_temp("cfg-XXXXXX.json", bad[i][0]);
        ck_assert_ptr_null(strata_model_config_load(path, &err));
        ck_assert_msg(err && strstr(err->message, path) && strstr(err->message, bad[i][1]), "%s: %s", bad[i][0],
                      err ? err->message : "no error");
        g_clear_error(&err);
        g_free(path);
    }
    char *path = strata_test_write_temp("cfg-XXXXXX.json", "{\"model_type\": \"mistral\",\n\"time_step_limit\": "
                                                           "[0.0, Infinity], \"x\": \"NaN\",\n\"rope_theta\": NaN, "
                                                           "\"layer_types\": [\"sliding_attention\", "
                                                           "\"sliding_attention\", \"full_attention\"]}");
    strata_model_config *c = strata_model_config_load(path, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    const char *const *notes = strata_model_config_notes(c);
    ck_assert_ptr_nonnull(strstr(notes[0], "line 2: Infinity or NaN"));
    ck_assert_ptr_nonnull(strstr(notes[1], "line 3: Infinity or NaN"));
    bool saw = false;
    for (const char *const *v = strata_model_config_values(c); *v; v++)
        saw |= strcmp(*v, "global_every=3") == 0;
    ck_assert(saw);
    strata_model_config_free(c);
    g_free(path);
    path = strata_test_write_temp("cfg-XXXXXX.json", "{\"model_type\": \"qwen3_5\"}");
    char *refused = g_strconcat("config=", path, NULL);
    strata_cli_result r = strata_test_cli("gen", "transformer", refused, "-o", "-", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "model_type"));
    strata_cli_result_clear(&r);
    g_free(refused);
    g_free(path);
}
END_TEST

/* A model_type of no row whose file states a plain decoder's whole shape
 * (phi3, olmo2, granite ...) is read through llama's row, with a note:
 * d_model 64, 2 layers, 4 heads (kv 4), ffn 128, vocab 100, untied:
 * per layer 4 x 64^2 (q,k,v,o) + 3 x 64 x 128 (SwiGLU) + 2 x 64 (norms)
 * = 16384 + 24576 + 128 = 41088; 2 layers 82176; embeddings 2 x 6400;
 * final norm 64: 95040 parameters. */
/* quantization_config: DeepSeek-style block-scaled FP8 (quant_method fp8,
 * weight_block_size [128, 128], as DeepSeek-V3 and Kimi-K2 ship it) sets
 * the weight block 128; per-tensor fp8 (no weight_block_size) stays a note
 * with 0; other blocks are refused naming the file. */
START_TEST(block_scaled_fp8_read_from_quantization_config)
{
    static const char *const shipped[] = {"deepseek-v3.json", "kimi-k2-instruct.json"};
    GError *err = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(shipped); i++) {
        char *path = g_strconcat(STRATA_SOURCE_DIR "/configs/models/", shipped[i], NULL);
        strata_model_config *c = strata_model_config_load(path, &err);
        ck_assert_msg(c, "%s", err ? err->message : "");
        ck_assert_uint_eq(strata_model_config_weight_block(c), 128);
        strata_model_config_free(c);
        g_free(path);
    }
    char *path = strata_test_write_temp("cfg-XXXXXX.json", "{\"model_type\": \"llama\", \"quantization_config\": "
                                                           "{\"quant_method\": \"fp8\", \"activation_scheme\": "
                                                           "\"static\"}}");
    strata_model_config *c = strata_model_config_load(path, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    ck_assert_uint_eq(strata_model_config_weight_block(c), 0);
    ck_assert_ptr_nonnull(strstr(strata_model_config_notes(c)[0], "'quantization_config' is set but not modelled"));
    strata_model_config_free(c);
    g_free(path);
    static const char *const bad[] = {"[64, 64]", "[128]", "[128, \"128\"]", "128"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *text = g_strdup_printf("{\"model_type\": \"llama\", \"quantization_config\": {\"quant_method\": "
                                     "\"fp8\", \"weight_block_size\": %s}}", bad[i]);
        path = strata_test_write_temp("cfg-XXXXXX.json", text);
        ck_assert_ptr_null(strata_model_config_load(path, &err));
        ck_assert_msg(err && strstr(err->message, path) &&
                          strstr(err->message, "key 'quantization_config.weight_block_size': expected [128, 128]"),
                      "%s: %s", bad[i], err ? err->message : "no error");
        g_clear_error(&err);
        g_free(path);
        g_free(text);
    }
}
END_TEST

START_TEST(plain_decoder_of_a_new_type_reads_as_llama)
{
    char *path = strata_test_write_temp("cfg-XXXXXX.json",
                                        "{\"model_type\": \"phi_like\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
                                        "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100, "
                                        "\"tie_word_embeddings\": false, \"sliding_window\": null, "
                                        "\"use_sliding_window\": false}");
    GError *err = NULL;
    strata_model_config *c = strata_model_config_load(path, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    bool noted = false;
    for (const char *const *n = strata_model_config_notes(c); *n; n++)
        noted |= strstr(*n, "'phi_like'") && strstr(*n, "llama-style decoder");
    ck_assert(noted);
    strata_model_config_free(c);
    char *arg = g_strconcat("config=", path, NULL);
    const char *args[] = {arg, NULL};
    gen_sums s = generate(args);
    ck_assert_double_eq(s.params, 95040);
    g_free(arg);
    g_free(path);
    /* Qwen 2's convention (MiMo-7B): a window with use_sliding_window false is not applied, so the file
     * still reads as llama-style (the same 95,040); with it true the window is a structure: refused. */
    static const char *const window[] = {"false", "true"};
    for (size_t i = 0; i < G_N_ELEMENTS(window); i++) {
        char *text = g_strdup_printf("{\"model_type\": \"qwen2_like\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
                                     "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100, "
                                     "\"tie_word_embeddings\": false, \"sliding_window\": 32768, "
                                     "\"use_sliding_window\": %s}", window[i]);
        path = strata_test_write_temp("cfg-XXXXXX.json", text);
        c = strata_model_config_load(path, &err);
        ck_assert_msg(i == 0 ? c != NULL : c == NULL, "%s: %s", window[i], err ? err->message : "read");
        g_clear_error(&err);
        strata_model_config_free(c);
        if (i == 0) {
            arg = g_strconcat("config=", path, NULL);
            const char *again[] = {arg, NULL};
            ck_assert_double_eq(generate(again).params, 95040);
            g_free(arg);
        }
        g_free(text);
        g_free(path);
    }
}
END_TEST

/* Unknown keys are notes; bad values name the file and the key. */
START_TEST(reader_notes_and_refusals)
{
    char *ok = strata_test_write_temp("cfg-XXXXXX.json", "{\"model_type\": \"llama\", \"hidden_size\": 512, "
                                                         "\"num_attention_heads\": 8, \"brand_new_key\": 3, "
                                                         "\"sliding_window\": 4096}"); /* Llama has none */
    GError *err = NULL;
    strata_model_config *c = strata_model_config_load(ok, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    const char *const *notes = strata_model_config_notes(c);
    ck_assert_ptr_nonnull(notes[0]);
    ck_assert_ptr_nonnull(strstr(notes[0], "brand_new_key"));
    ck_assert_ptr_nonnull(notes[1]);
    ck_assert_ptr_nonnull(strstr(notes[1], "sliding_window"));
    ck_assert_ptr_null(notes[2]);
    bool saw = false;
    for (const char *const *v = strata_model_config_values(c); *v; v++)
        saw |= strcmp(*v, "d_model=512") == 0;
    ck_assert(saw);
    ck_assert_str_eq(strata_model_config_family(c), "llama");
    strata_model_config_free(c);
    static const char *const bad[][2] = {
        {"{\"model_type\": \"llama\", \"hidden_size\": -5}", "key 'hidden_size': expected a positive integer"},
        {"{\"model_type\": \"llama\", \"hidden_size\": \"big\"}", "key 'hidden_size'"},
        {"{\"model_type\": \"llama\", \"hidden_act\": \"tanh\"}", "key 'hidden_act': expected an activation"},
        {"{\"model_type\": \"llama\", \"tie_word_embeddings\": 1}", "key 'tie_word_embeddings': expected true"},
        {"{\"hidden_size\": 5}", "key 'model_type'"},
        {"{\"model_type\": \"gemma3\"}", "key 'text_config'"},
        {"[1, 2]", "expected a JSON object"},
        {"{\"model_type\": ", "cfg-"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *path = strata_test_write_temp("cfg-XXXXXX.json", bad[i][0]);
        g_clear_error(&err);
        ck_assert_ptr_null(strata_model_config_load(path, &err));
        ck_assert_msg(err && strstr(err->message, path) && strstr(err->message, bad[i][1]), "%s: %s", bad[i][0],
                      err ? err->message : "no error");
        g_free(path);
    }
    g_clear_error(&err);
    /* on the command line: exit status 2, the file and the key on standard error; notes do not fail */
    char *bad_file = strata_test_write_temp("cfg-XXXXXX.json", "{\"model_type\": \"llama\", \"hidden_size\": -5}");
    char *arg = g_strconcat("config=", bad_file, NULL);
    strata_cli_result r = strata_test_cli("gen", "transformer", arg, "-o", "-", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, bad_file));
    ck_assert_ptr_nonnull(strstr(r.err, "hidden_size"));
    strata_cli_result_clear(&r);
    g_free(arg);
    arg = g_strconcat("config=", ok, NULL);
    r = strata_test_cli("gen", "transformer", arg, "layers=1", "seq=16", "batch=1", "vocab=64", "-o", "-", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.err, "note:"));
    ck_assert_ptr_nonnull(strstr(r.out, "d_model=512"));
    strata_cli_result_clear(&r);
    g_free(arg);
    g_free(bad_file);
    g_free(ok);
}
END_TEST

/* JAX's remat policies by name: each saves less than the one before and
 * recomputes more (a Llama-shaped layer: the projections are saved by
 * dots_with_no_batch_dims_saveable but not attention's S x S products;
 * save_qkv_proj keeps the q/k/v projection alone). */
START_TEST(remat_policies_trade_memory_for_work)
{
    static const char *const order[] = {"none", "dots_saveable", "dots_with_no_batch_dims_saveable",
                                        "save_qkv_proj", "nothing_saveable"};
    gen_sums last = {0};
    for (size_t i = 0; i < G_N_ELEMENTS(order); i++) {
        char *remat = g_strconcat("remat=", order[i], NULL);
        const char *args[] = {"layers=4", "seq=512", "batch=4", "vocab=1024", "d_model=512", "heads=8",
                              "kv_heads=2", "ffn=2048", "mlp=swiglu", "norm=rmsnorm", "pos=rope", remat, NULL};
        gen_sums s = generate(args);
        if (i > 0) {
            /* strictly less up to dots_with_no_batch_dims_saveable; then the peak may sit outside the layers */
            ck_assert_msg(i <= 2 ? s.peak < last.peak : s.peak <= last.peak, "%s: peak %.0f, before %.0f", order[i],
                          s.peak, last.peak);
            ck_assert_msg(i >= 2 ? s.flops > last.flops : s.flops >= last.flops, "%s: flops %.0f, before %.0f",
                          order[i], s.flops, last.flops);
        }
        last = s;
        g_free(remat);
    }
    /* minimal_offloaded: the five projections of each of the 4 layers (qkv, out, gate, up, down) go to host
     * memory and come back (two copies each); the device holds what nothing_saveable holds */
    const char *off[] = {"layers=4", "seq=512", "batch=4", "vocab=1024", "d_model=512", "heads=8", "kv_heads=2",
                         "ffn=2048", "mlp=swiglu", "norm=rmsnorm", "pos=rope", "remat=minimal_offloaded", NULL};
    gen_sums o = generate(off);
    ck_assert_int_eq(o.host_allocs, 20);
    ck_assert_int_eq(o.copies, 40);
    ck_assert_double_eq(o.peak, last.peak);
    GError *err = NULL;
    const char *bad[] = {"remat=sometimes", NULL};
    ck_assert_ptr_null(strata_workload_generate("transformer", bad, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "dots_with_no_batch_dims_saveable"));
    g_clear_error(&err);
}
END_TEST

/* MoE, GQA, biases, q/k and post norms, f32 master weights and flash
 * attention under today's meshes: every generated step passes the checker
 * (names live where used, waits on recorded events). */
START_TEST(models_run_under_meshes)
{
    static const char *const files[] = {"qwen3-30b-a3b.json", "mixtral-8x7b-v0.1.json", "gemma-3-27b-it.json",
                                        "qwen2.5-7b.json", "deepseek-v3.json"};
    static const char *const meshes[][3] = {{"mesh=data:2,model:2", "sharding=fsdp+tp+sp", "remat=minimal_offloaded"},
                                            {"mesh=data:2", "sharding=fsdp", "remat=dots"},
                                            {"mesh=model:2", "sharding=tp", "remat=full"},
                                            {"mesh=data:2", "sharding=dp", "remat=none"}};
    for (size_t f = 0; f < G_N_ELEMENTS(files); f++)
        for (size_t k = 0; k < G_N_ELEMENTS(meshes); k++) {
            bool mla = strcmp(files[f], "deepseek-v3.json") == 0;
            if (mla && strstr(meshes[k][0], "model"))
                continue; /* MLA: data axes only (refused, below) */
            char *config = config_arg(files[f]);
            /* dense_layers beside the MoE models' experts only (a dense model refuses it: it reads none) */
            bool dense = strcmp(files[f], "gemma-3-27b-it.json") == 0 || strcmp(files[f], "qwen2.5-7b.json") == 0;
            const char *args[] = {config, "layers=4", "seq=64", "batch=4", "attention=flash", "mask=causal",
                                  "param_dtype=f32", meshes[k][0], meshes[k][1], meshes[k][2],
                                  dense ? NULL : "dense_layers=1", NULL};
            GError *err = NULL;
            strata_source *src = strata_workload_generate("transformer", args, &err);
            ck_assert_msg(src, "%s %s: %s", files[f], meshes[k][1], err ? err->message : "");
            strata_checker *c = strata_checker_new(strata_source_origin(src));
            const strata_op *op;
            while (strata_source_next(src, &op, &err) == 1)
                ck_assert_msg(strata_checker_feed(c, op, NULL, &err), "%s %s: %s", files[f], meshes[k][1],
                              err ? err->message : "?");
            strata_checker_free(c);
            strata_source_free(src);
            g_free(config);
        }
    char *config = config_arg("deepseek-v3.json");
    const char *tp[] = {config, "layers=2", "mesh=model:2", "sharding=tp", NULL};
    GError *err = NULL;
    ck_assert_ptr_null(strata_workload_generate("transformer", tp, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "MLA"));
    g_clear_error(&err);
    g_free(config);
}
END_TEST

/* The step-time cases load, and each generator's arguments pass its checks
 * (simulating them takes minutes a case: validation/steps/ is not in the
 * default set). */
START_TEST(step_time_cases_load)
{
    static const char *const files[] = {"validation/steps/maxtext.ini", "validation/steps/maxtext-heldout.ini",
                                        "validation/steps/pipeline.ini", "validation/steps/pipeline-heldout.ini",
                                        "validation/steps/steps-heldout-2.ini"};
    static const size_t counts[] = {5, 1, 4, 1, 4};
    for (size_t f = 0; f < G_N_ELEMENTS(files); f++) {
        char *path = strata_test_source_path(files[f]);
        strata_published *set = strata_published_new();
        GError *err = NULL;
        ck_assert_msg(strata_published_load(set, path, &err), "%s", err ? err->message : "");
        ck_assert_uint_eq(strata_published_count(set), counts[f]);
        for (size_t i = 0; i < strata_published_count(set); i++) {
            const strata_published_case *c = strata_published_case_at(set, i);
            char **words = g_strsplit(c->gen, " ", -1);
            ck_assert_msg(strata_workload_check(words[0], (const char *const *)words + 1, &err), "%s: %s", c->name,
                          err ? err->message : "");
            g_strfreev(words);
        }
        strata_published_free(set);
        g_free(path);
    }
}
END_TEST

/* A key given by name wins over the file's; the header records both. */
START_TEST(given_keys_win_over_the_file)
{
    char *config = config_arg("meta-llama-3.1-8b.json");
    const char *args[] = {config, "layers=2", "kv_heads=32", NULL};
    GError *err = NULL;
    strata_params *p = strata_workload_params_args(strata_workload_type_find("transformer"), 3, args, &err);
    ck_assert_msg(p, "%s", err ? err->message : "");
    ck_assert_int_eq(strata_params_int(p, "layers"), 2);
    ck_assert_int_eq(strata_params_int(p, "kv_heads"), 32);
    ck_assert_int_eq(strata_params_int(p, "ffn"), 14336);
    strata_params_free(p);
    g_free(config);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model_config");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, shipped_configs_have_published_parameter_counts);
    tcase_add_test(tc, step_flops_match_the_trainers_count);
    tcase_add_test(tc, flash_attention_flops_and_bytes);
    tcase_add_test(tc, sliding_window_layers);
    tcase_add_test(tc, window_flops_in_closed_form);
    tcase_add_test(tc, reader_notes_and_refusals);
    tcase_add_test(tc, newer_architectures_by_hand);
    tcase_add_test(tc, qwen2_moe_and_deepseek_v2_by_hand);
    tcase_add_test(tc, unmodelled_architectures_are_refused);
    tcase_add_test(tc, plain_decoder_of_a_new_type_reads_as_llama);
    tcase_add_test(tc, block_scaled_fp8_read_from_quantization_config);
    tcase_add_test(tc, given_keys_win_over_the_file);
    tcase_add_test(tc, remat_policies_trade_memory_for_work);
    tcase_add_test(tc, models_run_under_meshes);
    tcase_add_test(tc, step_time_cases_load);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
