/*
 * test_serve.c: the serving simulation (sim/serve) against values derived
 * by hand: KV bytes per token (MHA, GQA, MLA, TP), parameters, the block
 * pool's counts, prefix hits and LRU eviction, page growth, a swap's time
 * over the link, a tiny stream's schedule step by step with a preemption
 * and a prefix hit that saves its prefill, attention data parallelism's
 * weights, step time and batches, an MoE's experts as one grouped kernel
 * per weight, the fused MoE op's bytes, flops and kernels, XQA's decode
 * attention (its blocks, CTAs, waves and time), Qwen 3's q/k norm pass,
 * and bad input at
 * FILE:LINE.
 */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "serve/serve.h"
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
#include "serve/serve_kv.h"
#include "serve/serve_model.h"
#include "serve/serve_names.h"
#include "serve/serve_scheduler.h"
#include "serve/serve_stream.h"
#include "coll_sweep.h"
#include "serve_fixture.h"
#include "testutil.h"
#include "workload/model_config.h"
#include "workload/workload.h"

static strata_serve_model preset(const char *name)
{
    strata_serve_model m;
    GError *err = NULL;
    ck_assert_msg(strata_serve_model_preset(&m, name, &err), "%s", err ? err->message : "");
    return m;
}

/* hw_path loaded with overrides (NULL: none); the test fails with the loader's message where it does not load. */
static strata_hw *hw_load(const char *hw_path, const char *const *overrides)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(hw_path, overrides, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    return hw;
}

/* m's cost model on hw (strata_serve_cost_new's arguments); the test fails with its message where it has none. */
static strata_serve_cost *cost_new(const strata_hw *hw, const strata_serve_model *m, uint32_t tp, bool attention_dp,
                                   uint32_t max_tokens)
{
    GError *err = NULL;
    strata_serve_cost *c = strata_serve_cost_new(hw, m, tp, attention_dp, max_tokens, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    return c;
}

START_TEST(kv_bytes_per_token_by_hand)
{
    /* GQA: 2 x 32 layers x 8 heads x 128 x 2 B = 131,072 (128 KiB) */
    strata_serve_model m = preset("llama-3-8b");
    ck_assert_uint_eq(strata_serve_kv_bytes_per_token(&m, 1), 131072);
    /* TP8: one KV head per rank: 2 x 32 x 1 x 128 x 2 = 16,384; TP16 keeps one head (replicated) */
    ck_assert_uint_eq(strata_serve_kv_bytes_per_token(&m, 8), 16384);
    ck_assert_uint_eq(strata_serve_kv_bytes_per_token(&m, 16), 16384);
    /* 70B: 2 x 80 x 8 x 128 x 2 = 327,680; TP4: 81,920 per GPU */
    m = preset("llama-3-70b");
    ck_assert_uint_eq(strata_serve_kv_bytes_per_token(&m, 1), 327680);
    ck_assert_uint_eq(strata_serve_kv_bytes_per_token(&m, 4), 81920);
    /* MHA: 2 x 32 x 32 x 128 x 2 = 524,288 */
    m = preset("llama-2-7b");
    ck_assert_uint_eq(strata_serve_kv_bytes_per_token(&m, 1), 524288);
    /* MLA: (512 + 64) x 61 x 2 = 70,272, the same on every rank */
    m = preset("deepseek-v3");
    ck_assert_uint_eq(strata_serve_kv_bytes_per_token(&m, 1), 70272);
    ck_assert_uint_eq(strata_serve_kv_bytes_per_token(&m, 8), 70272);
    /* fp8 KV halves the GQA figure */
    m = preset("llama-3-8b");
    GError *err = NULL;
    ck_assert(strata_serve_model_set(&m, "kv_dtype", "f8", &err));
    ck_assert_uint_eq(strata_serve_kv_bytes_per_token(&m, 1), 65536);
}
END_TEST

static uint32_t moe_layers_of(const strata_serve_model *m)
{
    strata_model_shape s;
    uint32_t n = 0;
    strata_serve_model_shape(m, &s);
    for (int64_t l = 0; l < s.layers; l++)
        n += strata_model_layer_is_moe(&s, l);
    return n;
}

/* The MoE layers in closed form (strata_model_moe_layers). */
static uint64_t moe_layers_of_closed(const strata_serve_model *m)
{
    strata_model_shape s;
    strata_serve_model_shape(m, &s);
    return (uint64_t)strata_model_moe_layers(&s);
}

START_TEST(params_and_weights_by_hand)
{
    strata_serve_model m = preset("llama-3-8b");
    /* per layer: attention 4096 x 48 x 128 + 4096 x 4096 = 41,943,040; MLP 3 x 4096 x 14336 = 176,160,768;
     * norms 8,192: 218,112,000; x 32 = 6,979,584,000; embedding and head 2 x 128256 x 4096 = 1,050,673,152;
     * final norm 4,096: 8,030,261,248 */
    ck_assert_double_eq(strata_serve_model_params(&m), 8030261248.0);
    ck_assert_uint_eq(strata_serve_weight_bytes(&m, 1), 16060522496ull);
    /* TP2: the 65 norms of 4,096 (266,240) on both ranks, the rest halved: (8,030,261,248 - 266,240) / 2 +
     * 266,240 = 4,015,263,744 parameters, 8,030,527,488 bytes */
    ck_assert_uint_eq(strata_serve_weight_bytes(&m, 2), 8030527488ull);
    /* Mixtral-8x7B: attention 41,943,040, experts 8 x 3 x 4096 x 14336 + router 4096 x 8 = 1,409,318,912, norms
     * 8,192: 1,451,270,144 a layer, x 32; embedding and head 2 x 32000 x 4096 = 262,144,000; + 4,096:
     * 46,702,792,704 */
    m = preset("mixtral-8x7b");
    ck_assert_uint_eq(moe_layers_of(&m), 32);
    ck_assert_double_eq(strata_serve_model_params(&m), 46702792704.0);
    /* MoE every other layer: 16 such layers and 16 dense ones of 218,112,000 (as Llama-3-8B's):
     * 23,220,322,304 + 3,489,792,000 + 262,148,096 = 26,972,262,400 */
    m.moe_every = 2;
    ck_assert_uint_eq(moe_layers_of(&m), 16);
    ck_assert_double_eq(strata_serve_model_params(&m), 26972262400.0);
    /* Counted in closed form (issue 46's fuzzing: a config.json's 2^31 - 1 layers were counted one by one):
     * with 3 dense layers first and every 4th MoE, the multiples of 4 in [3, 2^31 - 1) are 536,870,911
     * (4 to 2,147,483,644), the other 1,610,612,736 layers dense: 262,148,096 + 1,610,612,736 x 218,112,000
     * + 536,870,911 x 1,451,270,144 = 1,130,438,689,652,961,280 */
    m.layers = 2147483647;
    m.dense_layers = 3;
    m.moe_every = 4;
    ck_assert_uint_eq(moe_layers_of_closed(&m), 536870911);
    ck_assert(fabs(strata_serve_model_params(&m) / 1130438689652961280.0 - 1) < 1e-12);
    /* Weight bytes, their replicated part in closed form too (fuzz_model_config: it counted the routers layer
     * by layer): whole on each rank the norms 2^31 - 1 x 2 x 4096, the routers 536,870,911 x 4096 x 8 and the
     * final norm 4096, 35,184,372,051,968; in bf16, TP1 less TP2 is half the rest twice over, that rest:
     * 1,130,438,689,652,961,280 - 35,184,372,051,968 = 1,130,403,505,280,909,312 */
    double split = (double)strata_serve_weight_bytes(&m, 1) - (double)strata_serve_weight_bytes(&m, 2);
    ck_assert_msg(fabs(split / 1130403505280909312.0 - 1) < 1e-9, "%.17g", split);
    m.dense_layers = 2147483647; /* no layer past the dense ones */
    ck_assert_uint_eq(moe_layers_of_closed(&m), 0);
    /* DeepSeek-V3 (MLA, a shared expert): attention q_a 7168 x 1536 + its norm 1536 + q_b 1536 x 128 x 192
     * = 48,760,320; kv_a 7168 x 576 + its norm 512 + kv_b 512 x 128 x 256 = 20,906,496; o 128 x 128 x 7168
     * = 117,440,512: 187,107,328, + norms 14,336, x 61 = 11,414,421,504; three dense MLPs 3 x 7168 x 18432
     * = 396,361,728 each; 58 MoE layers of router 7168 x 256 + 257 experts of 3 x 7168 x 2048 (44,040,192)
     * = 11,320,164,352; embedding and head 2 x 129280 x 7168 + final norm 7168 = 1,853,348,864:
     * 671,026,404,352 (the published 671B) */
    m = preset("deepseek-v3");
    ck_assert_uint_eq(moe_layers_of(&m), 58);
    ck_assert_double_eq(strata_serve_model_params(&m), 671026404352.0);
    /* TP8 in fp8: replicated on each rank the norms 61 x 14,336 + 7,168, MLA's down-projections and their
     * norms 61 x (7168 x 2112 + 2048) and the routers 58 x 7168 x 256: 1,030,904,832; the rest / 8:
     * 84,780,342,272 bytes at one byte each; the embedding and LM head stay bf16 (ModelOpt's FP8 export
     * excludes lm_head; nn.Embedding is not quantized), one more byte each of their 2 x 129280 x 7168 =
     * 1,853,358,080 parameters, / 8 = 231,669,760: 85,012,012,032 */
    ck_assert(strata_serve_model_set(&m, "dtype", "f8", NULL));
    ck_assert_uint_eq(strata_serve_weight_bytes(&m, 8), 85012012032ull);
    /* Llama-3-8B in fp8 at TP2: 4,015,263,744 parameters a rank (above) at one byte, + the bf16 embedding and
     * head's second byte, 2 x 128256 x 4096 / 2 = 525,336,576: 4,540,600,320 */
    m = preset("llama-3-8b");
    ck_assert(strata_serve_model_set(&m, "dtype", "f8", NULL));
    ck_assert_uint_eq(strata_serve_weight_bytes(&m, 2), 4540600320ull);
}
END_TEST

/* Parameters of a config.json in `gen transformer config=FILE` (issue 42's
 * shape from the workload's keys) and in serve's model from the same file. */
static void same_count_in_gen_and_serve(const char *file)
{
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "models", file, NULL);
    char *config = g_strdup_printf("config=%s", path);
    const char *args[] = {config, "seq=16", "batch=1", NULL};
    GError *err = NULL;
    strata_params *p = strata_workload_params_args(strata_workload_type_find("transformer"), 3, args, &err);
    strata_model_shape gen;
    ck_assert_msg(p && strata_model_shape_of(p, "transformer", &gen, &err), "%s", err ? err->message : "");
    double gen_total = 0, gen_active = 0;
    strata_model_shape_count(&gen, 16, &gen_total, &gen_active);
    strata_serve_model m;
    ck_assert_msg(strata_serve_model_from_config(&m, path, &err), "%s", err ? err->message : "");
    ck_assert_msg(strata_serve_model_params(&m) == gen_total, "%s: serve %.0f, gen %.0f", file, strata_serve_model_params(&m), gen_total);
    strata_params_free(p);
    g_free(config);
    g_free(path);
}

START_TEST(config_json_gives_the_preset_shape)
{
    /* configs/models/meta-llama-3.1-8b.json through issue 42's reader: the llama-3-8b preset's shape */
    strata_serve_model m, p = preset("llama-3-8b");
    GError *err = NULL;
    ck_assert_msg(strata_serve_model_from_config(&m, STRATA_SOURCE_DIR "/configs/models/meta-llama-3.1-8b.json", &err),
                  "%s", err ? err->message : "");
    ck_assert_uint_eq(m.layers, p.layers);
    ck_assert_uint_eq(m.hidden, p.hidden);
    ck_assert_uint_eq(m.kv_heads, 8);
    ck_assert_uint_eq(m.head_dim, 128);
    ck_assert_uint_eq(m.intermediate, 14336);
    ck_assert(!m.tied_embeddings && m.gated);
    ck_assert_uint_eq(m.weight_block, 0); /* no quantization_config */
    ck_assert_uint_eq(strata_serve_kv_bytes_per_token(&m, 1), 131072);
    ck_assert_double_eq(strata_serve_model_params(&m), 8030261248.0);
    /* DeepSeek-V3's config.json: the preset's 671,026,404,352 (MLA, the shared expert) */
    ck_assert(strata_serve_model_from_config(&m, STRATA_SOURCE_DIR "/configs/models/deepseek-v3.json", &err));
    ck_assert_double_eq(strata_serve_model_params(&m), 671026404352.0);
    /* its block-scaled FP8 (weight_block_size [128, 128]); a block the kernels do not take is refused */
    ck_assert_uint_eq(m.weight_block, 128);
    ck_assert(strata_serve_model_set(&m, "weight_block", "64", &err));
    ck_assert(!strata_serve_model_check(&m, "m", &err) && strstr(err->message, "expected weight_block 0 or 128"));
    g_clear_error(&err);
    /* every shipped config: the same count as gen transformer's (qkv biases, q/k norms, four norms a layer,
     * GeGLU, shared experts, MLA) */
    static const char *const files[] = {"meta-llama-3.1-8b.json", "deepseek-v3.json", "qwen2.5-7b.json",
                                        "qwen3-30b-a3b.json", "gemma-2-9b-it.json", "gemma-3-27b-it.json",
                                        "mixtral-8x7b-v0.1.json", "qwen3-32b.json", "gpt-oss-20b.json",
                                        "llama-4-scout-17b-16e-instruct.json",
                                        "llama-4-maverick-17b-128e-instruct.json", "kimi-k2-instruct.json"};
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++)
        same_count_in_gen_and_serve(files[i]);
    /* Newer configs' KV bytes per token, by hand: gpt-oss-20b 2 x 24 layers x 8 KV heads x 64 x 2 B =
     * 49,152 (its 12 sliding layers' window of 128 is not modelled: every layer keeps every token);
     * gpt-oss-120b at TP 8, one KV head a rank: 2 x 36 x 1 x 64 x 2 = 9,216; Llama-4-Scout (nested
     * text_config) 2 x 48 x 8 x 128 x 2 = 196,608 (its chunked attention not modelled either); Kimi-K2 (MLA)
     * (512 + 64) x 61 x 2 = 70,272 on any TP. */
    static const struct {
        const char *file;
        uint32_t tp;
        uint64_t bytes;
    } kv[] = {{"gpt-oss-20b.json", 1, 49152}, {"gpt-oss-120b.json", 8, 9216},
              {"llama-4-scout-17b-16e-instruct.json", 1, 196608}, {"kimi-k2-instruct.json", 8, 70272}};
    for (size_t i = 0; i < G_N_ELEMENTS(kv); i++) {
        char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "models", kv[i].file, NULL);
        ck_assert_msg(strata_serve_model_from_config(&m, path, &err), "%s", err ? err->message : "");
        ck_assert_uint_eq(strata_serve_kv_bytes_per_token(&m, kv[i].tp), kv[i].bytes);
        g_free(path);
    }
}
END_TEST

/* One Llama-3-8B prefill chunk of 8192 tokens at context 16384 on one
 * H100, its attention's nominal bytes with FlashAttention-3's L2 sections
 * (strata_serve_cost_set_fa3_prefill, vLLM v1's FLASH_ATTN), by hand.
 * The flash op: Q read in the attention's dtype and O written in bf16,
 * 8192 x 32 x 128 elements each, and each of the 8 KV heads' K and V once,
 * 16384 x 2 x 128 elements: bf16 8192 x 4096 x (2 + 2) + 8 x 16384 x 256
 * x 2 = 134,217,728 + 67,108,864; FP8 cache 8192 x 4096 x (1 + 2) + 8 x
 * 16384 x 256 x 1 = 100,663,296 + 33,554,432. The QKV preprocessing: 8192
 * x (32 + 16) x 128 = 50,331,648 elements read in bf16, written in the
 * cache's dtype: x 4 = 201,326,592, x 3 = 150,994,944. Totals 402,653,184
 * and 285,212,672. One KV head's K and V past the scheduler's 32 MiB
 * (bf16 at context 70000: 35,840,000 bytes) keep the kernel row's count,
 * so the time is the row's. */
START_TEST(fa3_prefill_bytes_by_hand)
{
    GError *err = NULL;
    strata_hw *hw = hw_load(STRATA_SOURCE_DIR "/configs/hw/h100.ini", NULL);
    const char *kv[2] = {"bf16", "f8"};
    const double bytes[2] = {402653184.0, 285212672.0};
    strata_serve_chunk chunk = {.id = 0, .tokens = 8192, .context = 16384, .samples = false};
    strata_serve_chunk longer = {.id = 0, .tokens = 2048, .context = 70000, .samples = false};
    for (int i = 0; i < 2; i++) {
        strata_serve_model m = preset("llama-3-8b");
        ck_assert(strata_serve_model_set(&m, "kv_dtype", kv[i], &err));
        strata_serve_cost *c = cost_new(hw, &m, 1, false, 8192);
        strata_serve_work w;
        double row = strata_serve_cost_attention(c, &chunk, 1, 0, &w);
        double row_long = strata_serve_cost_attention(c, &longer, 1, 0, &w);
        strata_serve_cost_set_fa3_prefill(c, true);
        double fa3 = strata_serve_cost_attention(c, &chunk, 1, 0, &w);
        ck_assert_double_eq(w.bytes, bytes[i]);
        ck_assert(fa3 < row);
        double fa3_long = strata_serve_cost_attention(c, &longer, 1, 0, &w);
        if (i == 0)
            ck_assert_double_eq(fa3_long, row_long);
        else
            ck_assert(fa3_long < row_long);
        strata_serve_cost_free(c);
    }
    strata_hw_free(hw);
}
END_TEST

/* The engine row's fa3_prefill, through strata_serve_engine_set_kernels:
 * the chunk above (8192 tokens at context 16384, Llama-3-8B, one H100) with
 * an FP8 cache. On: 285,212,672 bytes as above. Off, the flash row's HBM
 * count (models/kernel/flash_attention.c, forward, Hopper's Br 128 and Bc
 * 64 at D 128), per query head: Q read and O written once, 2 x 8192 x 128
 * = 2,097,152 bytes, the LSE 4 x 8192 = 32,768, and K and V once per
 * visited block pair, causal aligned bottom-right (8192 keys before the
 * first query): row block i (of 64) visits (i + 1) x 2 + 128 column
 * blocks, 12,352 pairs in all, 2 x 64 x 128 x 12,352 = 202,375,168; a head
 * 204,505,088, 32 heads 6,544,162,816, with the same preprocessing pass's
 * 150,994,944: 6,695,157,760. No engine
 * (vLLM v1's default row) is on, `none` off; on, K and V come from HBM once
 * a KV head, not once per block pair and query head, so the time is less. */
START_TEST(engine_fa3_prefill_bytes_by_hand)
{
    GError *err = NULL;
    strata_hw *hw = hw_load(STRATA_SOURCE_DIR "/configs/hw/h100.ini", NULL);
    strata_serve_model m = preset("llama-3-8b");
    ck_assert(strata_serve_model_set(&m, "kv_dtype", "f8", &err));
    const strata_serve_engine on = {.name = "fa3", .what = "FlashAttention-3 prefill", .fa3_prefill = true};
    const strata_serve_engine off = {.name = "fa2", .what = "the flash row's prefill", .fa3_prefill = false};
    const strata_serve_engine *rows[4] = {&on, &off, NULL, strata_serve_engine_find("none", &err)};
    const double bytes[4] = {285212672.0, 6695157760.0, 285212672.0, 6695157760.0};
    strata_serve_chunk chunk = {.id = 0, .tokens = 8192, .context = 16384, .samples = false};
    double t[4];
    for (int i = 0; i < 4; i++) {
        strata_serve_cost *c = cost_new(hw, &m, 1, false, 8192);
        ck_assert_msg(strata_serve_engine_set_kernels(rows[i], hw, c, &err), "%s", err ? err->message : "");
        strata_serve_work w;
        t[i] = strata_serve_cost_attention(c, &chunk, 1, 0, &w);
        ck_assert_double_eq(w.bytes, bytes[i]);
        strata_serve_cost_free(c);
    }
    ck_assert(t[0] < t[1]);
    ck_assert_double_eq(t[0], t[2]);
    ck_assert_double_eq(t[1], t[3]);
    strata_hw_free(hw);
}
END_TEST

/* vLLM 0.6's FLASH_ATTN backend (strata_serve_cost_set_fa2_attention, the
 * vllm-v0 row): FlashAttention-2's own kernels, Llama-3-8B bf16 on one H100
 * (132 SMs, 233,472 B of shared memory an SM, 50 MB of L2), one layer.
 * A decode batch of 64 at context 1000: swapped into 8 heads of 4 rows,
 * 512 CTAs, no split, the paged split kernel's 64 x 128 blocks; a CTA's
 * shared memory 2 x 128 x (64 + 256) = 81,920 B, 2 an SM, 264 resident,
 * 265 heads at once of 2 x 1000 x 128 x 2 = 512,000 B each, past the L2
 * but in one turn: K and V once, 512 x 512,000 = 262,144,000 B, Q and O
 * 512 x (2 x 4 x 128 x 2 + 4 x 4) = 1,056,768: 263,200,768. The engine's
 * own kernel (the flash row without FA2's launch: 128 x 64 blocks, K and V
 * per pair) reads ceil(1000 / 64) = 16 blocks of 64 keys a head, 2 x 64 x
 * 128 x 16 x 2 = 524,288 B, 512 x (524,288 + 2,064) = 269,492,224: 6,291,456
 * more; the decode is memory-bound, so FA2's is faster. A 462-token prompt
 * (32 heads, causal): the row reads K and V per pair, 20 pairs of 128 x 64
 * (row block i of 4 sees 2, 4, 6, 8 blocks of 64), 2 x 64 x 128 x 20 x 2 =
 * 655,360 B a head, with Q, O (2 x 462 x 128 x 2) and the LSE (4 x 462):
 * 32 x 893,752 = 28,600,064; FA2: 65,536 B a CTA, 3 an SM, the 32 heads'
 * K and V (7.6 MB) fit the L2: 32 x 238,392 + 8 x 236,544 = 9,520,896, so
 * 19,079,168 fewer. The row's prompt is bound by those bytes (28.6 MB,
 * 8.5 us at 3.35 TB/s); FA2's products at mma.sync's 0.667 of the peak
 * (1.75 GFLOP) take less than that, so FA2's prompt is faster too: at 462
 * tokens its slower products do not show. An FP8 cache is XFormers' in
 * vLLM 0.6 (not modelled): the engine's kernel either way. */
START_TEST(fa2_attention_as_vllm_0_6_by_hand)
{
    GError *err = NULL;
    strata_hw *hw = hw_load(STRATA_SOURCE_DIR "/configs/hw/h100.ini", NULL);
    strata_serve_chunk decodes[64], prompt = {.id = 0, .tokens = 462, .context = 462, .samples = true};
    for (uint32_t i = 0; i < 64; i++)
        decodes[i] = (strata_serve_chunk){.id = i, .tokens = 1, .context = 1000, .samples = true};
    const char *kv[2] = {"bf16", "f8"};
    for (int i = 0; i < 2; i++) {
        strata_serve_model m = preset("llama-3-8b");
        ck_assert(strata_serve_model_set(&m, "kv_dtype", kv[i], &err));
        strata_serve_cost *c = cost_new(hw, &m, 1, false, 8192);
        strata_serve_work w_row, w_fa2, p_row, p_fa2;
        double row = strata_serve_cost_attention(c, decodes, 64, 0, &w_row);
        double row_p = strata_serve_cost_attention(c, &prompt, 1, 0, &p_row);
        strata_serve_cost_set_fa2_attention(c, true);
        double fa2 = strata_serve_cost_attention(c, decodes, 64, 0, &w_fa2);
        double fa2_p = strata_serve_cost_attention(c, &prompt, 1, 0, &p_fa2);
        if (i == 0) {
            ck_assert_double_eq(w_row.bytes - w_fa2.bytes, 6291456.0);
            ck_assert_double_eq(p_row.bytes - p_fa2.bytes, 19079168.0);
            ck_assert(fa2 < row);
            ck_assert(fa2_p < row_p);
        } else {
            ck_assert_double_eq(fa2, row);
            ck_assert_double_eq(fa2_p, row_p);
        }
        strata_serve_cost_free(c);
    }
    const strata_serve_engine *v0 = strata_serve_engine_find("vllm-v0", &err);
    ck_assert(v0 && v0->fa2_attention);
    ck_assert(!strata_serve_engine_find("sglang-v0.3", &err)->fa2_attention);
    strata_hw_free(hw);
}
END_TEST

/* DeepSeek-V3's attention in one layer on one H100 (TP1, 128 heads, bf16)
 * as vLLM's MLA backend runs it (vllm/v1/attention/backends/mla/common.py).
 * A decode at context 4096, absorbed: W_UK, a bmm of 128 products 1 x 128
 * x 512: 16,777,216 flops, 128 x (128 + 65,536 + 512) x 2 = 16,941,056
 * bytes; the MQA over the latent, 128 query rows, q/k width 576 and v width
 * 512: 2 x 128 x 4096 x (576 + 512) = 1,140,850,688 flops, the latent read
 * once 4096 x 576 x 2 = 4,718,592 bytes and q and o 128 x 1088 x 2 =
 * 278,528; W_UV as W_UK. Total 1,174,405,120 flops, 38,879,232 bytes (MHA
 * with its 128 heads of 128 would read 2 x 4096 x 128 x 128 x 2 = 268 MB).
 * A 512-token prefill chunk with no context, expanded: kv_b 512 x 512 x
 * 32,768: 17,179,869,184 flops, (262,144 + 2 x 16,777,216) x 2 = 67,633,152
 * bytes; the MHA of q/k width 192, v 128, causal: 2 x 128 x 512 x 512 x
 * 320 / 2 = 10,737,418,240 flops; its bytes as the flash row counts them
 * (H100 tiles: Br 128, Bc 64 at head width 160, 20 visited block pairs of
 * 32 possible): per head (2 x 512 x 160 + 2 x 64 x 160 x 20) x 2 + 4 x 512 =
 * 1,148,928, x 128 = 147,062,784. Total 27,917,287,424 flops, 214,695,936
 * bytes. */
START_TEST(mla_costed_as_vllm_runs_it)
{
    strata_hw *hw = hw_load(STRATA_SOURCE_DIR "/configs/hw/h100.ini", NULL);
    strata_serve_model m = preset("deepseek-v3");
    strata_serve_cost *c = cost_new(hw, &m, 1, false, 8192);
    strata_serve_chunk decode = {.id = 0, .tokens = 1, .context = 4096, .samples = true};
    strata_serve_work w;
    ck_assert(strata_serve_cost_attention(c, &decode, 1, 0, &w) > 0);
    ck_assert_double_eq(w.flops, 1174405120.0);
    ck_assert_double_eq(w.bytes, 38879232.0);
    strata_serve_chunk prefill = {.id = 1, .tokens = 512, .context = 512, .samples = true};
    ck_assert(strata_serve_cost_attention(c, &prefill, 1, 0, &w) > 0);
    ck_assert_double_eq(w.flops, 27917287424.0);
    ck_assert_double_eq(w.bytes, 214695936.0);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* A vLLM 0.6 prefill step of two packed 462-token prompts of Llama-3-8B on
 * one H100 (bf16), its distinct ops' nominal flops, hand-derived. vLLM runs
 * the prompts packed, no padding (model_runner.py's input_tokens; the
 * FlashAttention backend's flash_attn_varlen_func over cu_seqlens): every
 * GEMM has M = 924 rows. QKV 924 x 4096 x 6144 (32 + 2 x 8 heads of 128),
 * O 924 x 4096 x 4096, gate_up 924 x 4096 x 28672, down 924 x 14336 x
 * 4096: 2 x 924 x 218,103,808 = 403,055,837,184. Norms and residuals
 * 4 x 924 x 4096 and SiLU-and-mul 924 x 14336 elements: 28,385,280.
 * Attention per prompt, causal, 32 heads over 8 KV heads: 4 x 32 x 462 x
 * 462 x 128 / 2 = 1,748,533,248, two: 3,497,066,496 (not 4 x 32 x 924^2 x
 * 128 / 2: no attention across prompts). The LM head on the 2 sampled rows
 * only (logits_processor.py's _prune_hidden_states): 2 x 2 x 4096 x
 * 128,256 = 2,101,346,304. The QKV preprocessing (RoPE, the cache write)
 * over the 924 prefill tokens, one element per q, k, v value: 924 x (32 +
 * 2 x 8) x 128 = 5,677,056. Total 408,688,312,320. A chunk that does not
 * sample (a prompt cut by the budget) drops one row of the LM head:
 * 1,050,673,152 fewer. */
START_TEST(prefill_step_packed_as_vllm_runs_it)
{
    strata_hw *hw = hw_load(STRATA_SOURCE_DIR "/configs/hw/h100.ini", NULL);
    strata_serve_model m = preset("llama-3-8b");
    strata_serve_cost *c = cost_new(hw, &m, 1, false, 8192);
    strata_serve_chunk two[2] = {{.id = 0, .tokens = 462, .context = 462, .samples = true},
                                 {.id = 1, .tokens = 462, .context = 462, .samples = true}};
    strata_serve_work w;
    double t = strata_serve_cost_step_work(c, two, 2, &w);
    ck_assert_double_eq(w.flops, 408688312320.0);
    ck_assert_double_eq_tol(strata_serve_cost_step(c, two, 2), t, 1e-15); /* cached: the same time */
    two[1].samples = false;
    strata_serve_cost_step_work(c, two, 2, &w);
    ck_assert_double_eq(w.flops, 408688312320.0 - 1050673152.0);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* One layer of an FP8 Llama on one prefill chunk of 16 tokens that
 * samples, its ops' bytes by hand (strata_serve_cost_step_work; GEMMs
 * (M K + K N) x 1 + M N x 2, the FP8 GEMM writing bf16).
 * Llama-3-8B, TP1 (hidden 4096: TensorRT-LLM fuses no quantization into
 * the norm, modeling_llama.py's enable_fusion needs hidden > 4096 and TP):
 *   GEMMs: QKV 16 x 4096 x 6144: 25,427,968; O 16 x 4096 x 4096:
 *     16,973,824; gate_up 16 x 4096 x 28672: 118,423,552; down 16 x 14336
 *     x 4096: 59,080,704; sum 219,906,048;
 *   norms and residuals, 4 x 16 x 4096 elements read and written in bf16
 *     (not in FP8): 1,048,576;
 *   the static FP8 quantization of the QKV and gate_up inputs, 16 x 4096
 *     read in bf16 and written in FP8, twice: 393,216;
 *   SwiGLU reading gate and up in bf16 and writing FP8: 16 x (2 x 14336 x
 *     2 + 14336 x 1) = 1,146,880;
 *   the flash op as its row counts HBM bytes (H100 forward blocks Br 128,
 *     Bc 64 at head dim 128: one block pair, Q read and O written, K and V
 *     read as one 64-row block, 4 bytes of LSE a row): per head (2 x 16 x
 *     128 + 2 x 64 x 128) x 1 + 4 x 16 = 20,544, x 32 heads = 657,408; the
 *     QKV preprocessing, 16 x 48 x 128 values read in bf16 and written in
 *     FP8: 294,912;
 *   the LM head, 1 x 4096 x 128256: 525,597,184.
 *   Total 749,044,224.
 * Llama-3-70B, TP2 (hidden 8192: both quantizations in the all-reduce's
 * epilogue, none of their own): per rank QKV 16 x 8192 x 5120, O 16 x
 * 4096 x 8192, gate_up 16 x 8192 x 28672, down 16 x 14336 x 8192:
 * 429,981,696; norms 4 x 16 x 8192 x 4: 2,097,152; SwiGLU 16 x (28672 x 2
 * + 14336) = 1,146,880; flash 32 heads x 20,544 = 657,408; preprocessing
 * 16 x 40 x 128 x 3 = 245,760; LM head 1 x 8192 x 64128 in bf16 (ModelOpt
 * exports FP8 checkpoints with lm_head excluded): 2 x (8192 + 8192 x 64128
 * + 64128) = 1,050,817,792. Total 1,484,946,688 (786,432 more if it
 * quantized). Llama-3-8B at TP1: the same layer's ops at hidden 4096 and
 * its LM head 2 x (4096 + 4096 x 128256 + 128256) = 1,050,937,856 (in FP8
 * it was 4096 + 4096 x 128256 + 2 x 128256 = 525,597,184, the total
 * 749,044,224): 1,274,384,896. */
START_TEST(fp8_prefill_passes_by_hand)
{
    GError *err = NULL;
    strata_hw *hw = hw_load(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", NULL);
    const char *models[2] = {"llama-3-8b", "llama-3-70b"};
    const uint32_t tps[2] = {1, 2};
    const double want[2] = {1274384896.0, 1484946688.0};
    for (int i = 0; i < 2; i++) {
        strata_serve_model m = preset(models[i]);
        ck_assert(strata_serve_model_set(&m, "dtype", "f8", &err));
        ck_assert(strata_serve_model_set(&m, "layers", "1", &err));
        strata_serve_cost *c = cost_new(hw, &m, tps[i], false, 64);
        strata_serve_chunk one = {.id = 0, .tokens = 16, .context = 16, .samples = true};
        strata_serve_work w;
        ck_assert(strata_serve_cost_step_work(c, &one, 1, &w) > 0);
        ck_assert_msg(w.bytes == want[i], "%.0f vs %.0f", w.bytes, want[i]);
        strata_serve_cost_free(c);
    }
    strata_hw_free(hw);
}
END_TEST

/* Qwen 3's q and k norms (qk_norm), one kernel over a step's q and k heads
 * (TensorRT-LLM's fused_qk_norm_rope), prefill and decodes alike, on one
 * layer of Llama-3-8B (32 heads, 8 KV heads of 128, bf16) on DGX H100,
 * TP1: 16 prefill tokens x 40 heads x 128 x 2 B read and written =
 * 327,680 B; 4 decodes 81,920 B; both in one step 409,600 B, one kernel:
 * 3 us + 409,600 / 3.015e12 = 3.135854 us more than the same step
 * without the norms. */
START_TEST(qk_norm_pass_by_hand)
{
    strata_hw *hw = hw_load(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", NULL);
    strata_serve_model m = preset("llama-3-8b");
    m.layers = 1;
    strata_serve_model n = m;
    n.qk_norm = true;
    strata_serve_cost *c = cost_new(hw, &m, 1, false, 64);
    strata_serve_cost *cn = cost_new(hw, &n, 1, false, 64);
    strata_serve_chunk step[5] = {{0, 16, 16, true}, {1, 1, 100, true}, {2, 1, 100, true}, {3, 1, 100, true},
                                  {4, 1, 100, true}};
    const uint32_t first[3] = {0, 1, 0}, count[3] = {1, 4, 5};
    const double more[3] = {327680.0, 81920.0, 409600.0};
    for (int i = 0; i < 3; i++) {
        strata_serve_work w, wn;
        double t = strata_serve_cost_step_work(c, step + first[i], count[i], &w);
        double tn = strata_serve_cost_step_work(cn, step + first[i], count[i], &wn);
        ck_assert_msg(wn.bytes - w.bytes == more[i], "%d: %.0f", i, wn.bytes - w.bytes);
        if (i == 2)
            ck_assert_msg(fabs(tn - t - 3.1358540630182423e-06) < 1e-15, "%.17g", tn - t);
    }
    strata_serve_cost_free(cn);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* Two cost models of one served model on one hardware file: as it is, and
 * with every kernel's launch 1 ms longer (kernel_launch 3 us -> 1003 us),
 * so that their difference counts the kernels of what is costed, in ms. */
typedef struct launch_pair {
    strata_hw *hw, *hw_slow;
    strata_serve_cost *c, *cs;
} launch_pair;

static launch_pair launch_pair_new(const char *hw_path, const strata_serve_model *m, uint32_t tp)
{
    const char *slow[] = {"compute.sm.kernel_launch=1003us", NULL};
    launch_pair p = {hw_load(hw_path, NULL), NULL, NULL, NULL};
    p.hw_slow = hw_load(hw_path, slow);
    p.c = cost_new(p.hw, m, tp, false, 64);
    p.cs = cost_new(p.hw_slow, m, tp, false, 64);
    return p;
}

static void launch_pair_free(launch_pair *p)
{
    strata_serve_cost_free(p->cs);
    strata_serve_cost_free(p->c);
    strata_hw_free(p->hw_slow);
    strata_hw_free(p->hw);
}

/* Qwen3-235B's MoE layer shape on Llama-3-8B's preset (hidden 4096, 128 experts, top 8, expert width 1536), FP8. */
static strata_serve_model qwen3_235b_moe_fp8(void)
{
    GError *err = NULL;
    strata_serve_model m = preset("llama-3-8b");
    const char *keys[][2] = {{"hidden", "4096"}, {"experts", "128"}, {"top_k", "8"},
                             {"moe_intermediate", "1536"}, {"dtype", "f8"}};
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        ck_assert_msg(strata_serve_model_set(&m, keys[i][0], keys[i][1], &err), "%s", err ? err->message : "");
    return m;
}

/* The routed experts run as one grouped kernel per weight, as vLLM's
 * fused_experts (invoke_fused_moe_kernel once for w1, once for w2) and
 * TensorRT-LLM's grouped GEMMs do, not one GEMM per expert. Counted by the
 * kernels' fixed time: every kernel op pays kernel_launch once, so raising
 * it by 1 ms raises a step by 1 ms per op. A decode step of 16 Mixtral-8x7B
 * requests on one H100 (top_k 2: 32 routed tokens over all 8 experts, 4
 * each): per layer QKV and O (2), the decodes' attention (1), the norms and
 * residual adds (1; every layer is MoE, so no dense activation over
 * `intermediate`), the router (1), then TensorRT-LLM's fused MoE: routing
 * (1), no input quantization (bf16), the expert maps (1: 16 tokens, top 2),
 * the row expansion (1), the strides (1), the two grouped GEMMs (2) with
 * the activation between them (1) and the finalize (1): 13 ops x 32
 * layers, and the LM head: 417 ms more (one GEMM pair per expert instead
 * of the two grouped GEMMs: 14 more a layer, 865). */
START_TEST(moe_experts_one_grouped_kernel_per_weight)
{
    strata_serve_model m = preset("mixtral-8x7b");
    launch_pair p = launch_pair_new(STRATA_SOURCE_DIR "/configs/hw/h100.ini", &m, 1);
    strata_serve_chunk d[16];
    for (uint32_t i = 0; i < 16; i++)
        d[i] = (strata_serve_chunk){.id = i, .tokens = 1, .context = 1000, .samples = true};
    double extra = strata_serve_cost_step(p.cs, d, 16) - strata_serve_cost_step(p.c, d, 16);
    ck_assert_double_eq_tol(extra, 0.417, 1e-9);
    launch_pair_free(&p);
}
END_TEST

/* One MoE layer's routed experts (strata_serve_cost_moe_experts) as
 * TensorRT-LLM's CUTLASS fused MoE runs them, by hand: Qwen3-235B's shape
 * (hidden 4096, 128 experts, top 8, expert width 1536 / TP 8 = 192, gated:
 * gate/up 384), FP8, 16 tokens: 128 routed rows, one on each expert.
 * Bytes: routing 16 x 128 x 2 + 16 x 8 x 8 = 5,120; FP8 quantization
 * 16 x 4096 x (2 + 1) = 196,608; expert maps (the fused kernel) 128 x 12 +
 * 129 x 8 = 2,568; row expansion 2 x 128 x 4096 + 128 x 12 = 1,050,112;
 * strides 128 x 64 = 8,192; gemm1 128 x ((4096 + 4096 x 384) x 1 + 384 x
 * 2) = 201,949,184; activation 128 x (384 x 2 + 192) = 122,880; gemm2 128 x
 * ((192 + 192 x 4096) + 4096 x 2) = 101,736,448; finalize (128 + 16) x 4096
 * x 2 + 128 x 12 = 1,181,184: in all 306,252,296. At 512 tokens (4,096
 * routed rows, 32 an expert) the maps take three kernels over blocks of
 * 256 tokens (computeNumTokensPerBlock: 32, 64 and 128 give 16, 8 and 4
 * blocks, x 128 experts over the block size; 256 gives 2 x 128 = 256):
 * e x b = 256, so 4,096 x 8 + 256 x 4, 256 x 8 + 129 x 8, 4,096 x 16 +
 * 256 x 8: 104,456. With routing 163,840, quantization 6,291,456,
 * expansion 2 x 4,096 x 4,096 + 4,096 x 12 = 33,603,584, strides 8,192,
 * gemm1 128 x (32 x 4096 + 4096 x 384 + 32 x 384 x 2) = 221,249,536,
 * activation 4,096 x 960 = 3,932,160, gemm2 128 x (32 x 192 + 192 x 4096 +
 * 32 x 4096 x 2) = 135,004,160 and finalize (4,096 + 512) x 4096 x 2 +
 * 4,096 x 12 = 37,797,888: 438,155,272. Flops: the GEMMs' 2 x 128 x 4096 x 384 + 2 x 128 x 192 x
 * 4096 = 603,979,776 and one per element of the seven passes (2,048 +
 * 65,536 + 128 + 524,288 + 128 + 24,576 + 65,536): 604,662,016. Kernels,
 * counted by a 1 ms larger launch: 9 at 16 tokens; at 257 tokens the
 * expert maps take three kernels (the fused one takes at most 256): 11. */
START_TEST(moe_fused_op_bytes_and_kernels_by_hand)
{
    strata_serve_model m = qwen3_235b_moe_fp8();
    launch_pair p = launch_pair_new(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", &m, 8);
    strata_serve_work w;
    ck_assert_double_gt(strata_serve_cost_moe_experts(p.c, 16, &w), 0);
    ck_assert_double_eq(w.bytes, 306252296.0);
    ck_assert_double_eq(w.flops, 604662016.0);
    ck_assert_double_gt(strata_serve_cost_moe_experts(p.c, 512, &w), 0);
    ck_assert_double_eq(w.bytes, 438155272.0);
    double extra16 = strata_serve_cost_moe_experts(p.cs, 16, NULL) - strata_serve_cost_moe_experts(p.c, 16, NULL);
    double extra257 = strata_serve_cost_moe_experts(p.cs, 257, NULL) - strata_serve_cost_moe_experts(p.c, 257, NULL);
    ck_assert_double_eq_tol(extra16, 0.009, 1e-9);
    ck_assert_double_eq_tol(extra257, 0.011, 1e-9);
    launch_pair_free(&p);
}
END_TEST

/* The bytes TensorRT-LLM's fused MoE takes for one call (strata_serve_moe_call_bytes,
 * moe_kernels.cu getWorkspaceDeviceBufferSizes and moeOp.cpp runMoe), Qwen3's
 * shape in FP8 at MoE TP 8 (slice 192), 128 experts, top 8, by hand.
 * 16 tokens, 128 routed rows: maps 3 x 4 x 128 = 1,536; blocks of 128 tokens
 * (ceil(16 / 128) x 128 <= 128), counts and cumsum 2 x 4 x 128 = 1,024;
 * blocked rows 4 x 128 x 16 = 8,192; offsets 8 x 129 = 1,032; the GEMMs'
 * inputs max(128 x 4096 FP8, fc2's 128 x 4096 bf16, 128 x 192) = 1,048,576
 * and outputs max(2 x 128 x 192 bf16 = 98,304, 1,048,576) = 1,048,576;
 * src_to_dest 512; output 16 x 4096 x 2 = 131,072: 2,240,520.
 * 16,384 tokens, 131,072 routed rows: 1,572,864 + 2 x 4 x 128 x 16 (1,024-token
 * blocks) = 16,384 + 4 x 128 x 16,384 = 8,388,608 + 1,032 + 2 x 1,073,741,824
 * + 524,288 + 134,217,728 = 2,292,204,552. A dense model takes none. */
START_TEST(moe_call_bytes_by_hand)
{
    strata_serve_model m = qwen3_235b_moe_fp8();
    ck_assert_uint_eq(strata_serve_moe_call_bytes(&m, 8, 16), 2240520ull);
    ck_assert_uint_eq(strata_serve_moe_call_bytes(&m, 8, 16384), 2292204552ull);
    strata_serve_model dense = preset("llama-3-8b");
    ck_assert_uint_eq(strata_serve_moe_call_bytes(&dense, 8, 16384), 0);
}
END_TEST

/* The experts' grouped GEMMs run whole k-blocks (dgx-h100.ini:
 * TensorRT-LLM's SM90 MoE tiles, 128-byte blocks, no split-K). Qwen3's
 * shape at TP 8 (width 192), FP8, 16,384 tokens: 131,072 routed rows, 1,024
 * on each of 128 experts. GEMM2 (K = 192) runs two 128-element blocks, 256
 * of K. Its tile, on either side: 128 x 256, 128 of the weights' 4,096 by
 * 256 of an expert's rows (the kernel runs transposed, tokens on its N;
 * the narrower grouped tiles need more operands an SM than operand_feed's
 * 117 GB/s: 128 x 64 needs 141, so they run slower; 128 x 128 runs 32,768
 * tiles in 249 waves of half the work, 124.5 of these, but its busiest CTA
 * starts 128 groups against 125 at 0.6 us each), 32 x 4 x 128 = 16,384
 * tiles in ceil(16,384 / 132) = 125 waves. Against 1-byte blocks (K run
 * exactly), the padding adds 125 x 2 x 128 x 256 x 64 FLOP at one SM's
 * 1979 TFLOP/s x 0.803 / 132 = 12.0389 TFLOP/s: 43.549 us. GEMM1 (K =
 * 4,096, 32 whole blocks) and every pass are the same on both sides. */
START_TEST(moe_fp8_width_192_runs_whole_k_blocks)
{
    strata_serve_model m = qwen3_235b_moe_fp8();
    const char *exact[] = {"compute.sm.grouped_k_tile_bytes=1", NULL};
    strata_hw *hw = hw_load(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", NULL);
    strata_hw *hw_exact = hw_load(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", exact);
    strata_serve_cost *c = cost_new(hw, &m, 8, false, 64);
    strata_serve_cost *ce = cost_new(hw_exact, &m, 8, false, 64);
    double pad = strata_serve_cost_moe_experts(c, 16384, NULL) - strata_serve_cost_moe_experts(ce, 16384, NULL);
    ck_assert_double_eq_tol(pad, 125.0 * 2 * 128 * 256 * 64 / (1979e12 * 0.803 / 132), 1e-12);
    strata_serve_cost_free(ce);
    strata_serve_cost_free(c);
    strata_hw_free(hw_exact);
    strata_hw_free(hw);
}
END_TEST

/* The engines' CPU time per step (serve_engine.c's rows): a decode step of
 * 10 ms on the GPU with 100 requests. vllm-v0: 4 ms + 100 x 35 us = 7.5 ms
 * of CPU, once per 10 decode steps: 10.75 ms; a step with prefill pays it
 * all: 17.5 ms. sglang-v0.3, the same 100 requests of 462-token prompts
 * with 128 tokens generated each: 1 ms + 100 x 1.6 us + 46,200 x 5.4 ns +
 * 12,800 x 25 ns = 1 + 0.16 + 0.24948 + 0.32 = 1.72948 ms, 11.72948 ms,
 * prefill or not (its loop runs every step); with no tokens counted, 11.16
 * ms. overlap: max(10, 7.5) = 10 ms,
 * and a 5 ms step waits for the CPU: 7.5 ms. none: 10 ms. sglang-v0.4:
 * sglang-v0.3's 1.72948 ms run beside the GPU: max(10, 1.72948) = 10 ms;
 * a 1 ms step waits for the CPU, 1.72948 ms. */
START_TEST(engine_cpu_time_by_hand)
{
    GError *err = NULL;
    const strata_serve_engine *v0 = strata_serve_engine_find("vllm-v0", &err);
    const strata_serve_engine_batch b100 = {.requests = 100};
    ck_assert_ptr_nonnull(v0);
    ck_assert_double_eq_tol(strata_serve_engine_step(v0, 10e-3, b100, false, 10), 10.75e-3, 1e-12);
    ck_assert_double_eq_tol(strata_serve_engine_step(v0, 10e-3, b100, true, 10), 17.5e-3, 1e-12);
    const strata_serve_engine *sg = strata_serve_engine_find("sglang-v0.3", NULL);
    const strata_serve_engine_batch held = {100, 100 * 462, 100 * 128, 0};
    ck_assert_double_eq_tol(strata_serve_engine_step(sg, 10e-3, held, false, 1), 11.72948e-3, 1e-12);
    ck_assert_double_eq_tol(strata_serve_engine_step(sg, 10e-3, held, true, 1), 11.72948e-3, 1e-12);
    ck_assert_double_eq_tol(strata_serve_engine_step(sg, 10e-3, b100, false, 1), 11.16e-3, 1e-12);
    const strata_serve_engine *sg4 = strata_serve_engine_find("sglang-v0.4", NULL);
    ck_assert_ptr_nonnull(sg4);
    ck_assert_double_eq_tol(strata_serve_engine_step(sg4, 10e-3, held, false, 1), 10e-3, 1e-12);
    ck_assert_double_eq_tol(strata_serve_engine_step(sg4, 10e-3, held, true, 1), 10e-3, 1e-12);
    ck_assert_double_eq_tol(strata_serve_engine_step(sg4, 1e-3, held, false, 1), 1.72948e-3, 1e-12);
    /* vllm-v0 counts no prompt or generated tokens: the same 10.75 ms with them; a prefill step of 17 prompts
     * of 462 tokens pays 0.3 us for each of its 7,854: 4 + 17 x 0.035 + 7,854 x 0.0003 = 6.9512 ms of CPU */
    ck_assert_double_eq_tol(strata_serve_engine_step(v0, 10e-3, held, false, 10), 10.75e-3, 1e-12);
    const strata_serve_engine_batch pre = {.requests = 17, .prompt_tokens = 7854, .prefill_tokens = 7854};
    ck_assert_double_eq_tol(strata_serve_engine_step(v0, 10e-3, pre, true, 10), 16.9512e-3, 1e-12);
    const strata_serve_engine *ov = strata_serve_engine_find("overlap", NULL);
    ck_assert_double_eq_tol(strata_serve_engine_step(ov, 10e-3, b100, false, 1), 10e-3, 1e-12);
    ck_assert_double_eq_tol(strata_serve_engine_step(ov, 5e-3, b100, false, 1), 7.5e-3, 1e-12);
    ck_assert_double_eq(strata_serve_engine_step(strata_serve_engine_find("none", NULL), 10e-3, b100, true, 1), 10e-3);
    ck_assert_ptr_null(strata_serve_engine_find("tgi", &err));
    ck_assert_msg(strstr(err->message, "unknown engine 'tgi'") && strstr(err->message, "vllm-v0"), "%s", err->message);
    g_error_free(err);
}
END_TEST

/* vllm-v0.5's host time (serve_engine.c's vllm-v0.5 paragraph), by hand
 * from the cited figures: 4 ms a step (#6854) and a request's share of
 * #6913's output processing, (3.4 - 0.2) ms / 31 = 103.2258 us. A decode
 * step of 1 request on a 10 ms GPU step: 10 + 4 + 0.1032258 =
 * 14.1032258 ms; of 32: 4 + 32 x 0.1032258 = 7.3032258 ms of CPU, 17.3032258
 * ms; the CPU at 32 less the CPU at 1 is #6913's 3.4 - 0.2 = 3.2 ms; at 200,
 * 4 + 20.6451613 = 24.6451613 ms of CPU (#6801's "20ms" at BS 200 is the
 * same order). --num-scheduler-steps 10 (0.5.5's multi-step): a decode step
 * of 32 pays a tenth, 10.7303226 ms. A prefill step of 17 prompts of 462
 * tokens: 4 + 17 x 0.1032258 + 7,854 x 0.0003 = 8.1110387 ms of CPU. */
START_TEST(vllm_v05_host_time_by_hand)
{
    GError *err = NULL;
    const strata_serve_engine *e = strata_serve_engine_find("vllm-v0.5", &err);
    ck_assert_msg(e != NULL, "%s", err ? err->message : "");
    const strata_serve_engine_batch b1 = {.requests = 1}, b32 = {.requests = 32}, b200 = {.requests = 200};
    ck_assert_double_eq_tol(strata_serve_engine_step(e, 10e-3, b1, false, 1), 14.1032258e-3, 1e-10);
    ck_assert_double_eq_tol(strata_serve_engine_step(e, 10e-3, b32, false, 1), 17.3032258e-3, 1e-10);
    ck_assert_double_eq_tol(strata_serve_engine_cpu(e, b32) - strata_serve_engine_cpu(e, b1), 3.2e-3, 1e-12);
    ck_assert_double_eq_tol(strata_serve_engine_cpu(e, b200), 24.6451613e-3, 1e-10);
    ck_assert_double_eq_tol(strata_serve_engine_step(e, 10e-3, b32, false, 10), 10.7303226e-3, 1e-10);
    const strata_serve_engine_batch pre = {.requests = 17, .prompt_tokens = 7854, .prefill_tokens = 7854};
    ck_assert_double_eq_tol(strata_serve_engine_cpu(e, pre), 8.1110387e-3, 1e-10);
    /* the rest of the row is vllm-v0's: its scheduler, all-reduce and kernels */
    const strata_serve_engine *v0 = strata_serve_engine_find("vllm-v0", NULL);
    ck_assert_str_eq(e->scheduler, v0->scheduler);
    ck_assert_str_eq(e->allreduce, v0->allreduce);
    ck_assert_str_eq(e->attn_aux, v0->attn_aux);
    ck_assert_int_eq(e->mode, SERVE_ENGINE_MULTI_STEP);
    ck_assert_double_eq(v0->per_seq_s, 35e-6);
}
END_TEST

/* serve_names: one finder over any table of rows ended by a NULL name, the
 * name anywhere in the row (here second); the message on an unknown name
 * is the caller's format with the name (or "(none)") and the list. Then
 * each serving table's own message, byte for byte as before the finder. */
typedef struct named_row {
    int value;
    const char *name;
} named_row;

static void assert_message(const GError *err, int code, const char *want)
{
    ck_assert_ptr_nonnull(err);
    ck_assert_int_eq(err->code, code);
    ck_assert_str_eq(err->message, want);
}

START_TEST(names_lookup_messages)
{
    static const named_row rows[] = {{1, "alpha"}, {2, "beta"}, {3, "gamma"}, {0, NULL}};
    serve_names t = SERVE_NAMES(rows, named_row);
    ck_assert_ptr_eq(serve_names_find(t, "beta"), &rows[1]);
    ck_assert_ptr_eq(serve_names_find(t, "gamma"), &rows[2]);
    ck_assert_ptr_null(serve_names_find(t, "delta"));
    ck_assert_ptr_null(serve_names_find(t, NULL));
    char *list = serve_names_list(t);
    ck_assert_str_eq(list, "alpha, beta, gamma");
    g_free(list);
    GError *err = NULL;
    ck_assert_ptr_eq(serve_names_lookup(t, "alpha", STRATA_ERROR_INPUT, &err, "thing '%s': one of %s"), &rows[0]);
    ck_assert_ptr_null(err);
    ck_assert_ptr_null(serve_names_lookup(t, "delta", STRATA_ERROR_INPUT, &err, "thing '%s': one of %s"));
    assert_message(err, STRATA_ERROR_INPUT, "thing 'delta': one of alpha, beta, gamma");
    g_clear_error(&err);
    ck_assert_ptr_null(serve_names_lookup(t, NULL, STRATA_ERROR_INTERNAL, &err, "[%s] not in [%s]"));
    assert_message(err, STRATA_ERROR_INTERNAL, "[(none)] not in [alpha, beta, gamma]");
    g_clear_error(&err);
    static const named_row empty[] = {{0, NULL}};
    list = serve_names_list(SERVE_NAMES(empty, named_row));
    ck_assert_str_eq(list, "");
    g_free(list);
    /* A table of pointers (as the KV schemes): the row found is the one pointed to, not the entry. */
    static const named_row *const pointers[] = {&rows[2], &rows[0], NULL};
    serve_names p = SERVE_NAMES_OF_POINTERS(pointers, named_row);
    ck_assert_ptr_eq(serve_names_find(p, "alpha"), &rows[0]);
    ck_assert_ptr_eq(serve_names_find(p, "gamma"), &rows[2]);
    ck_assert_ptr_null(serve_names_find(p, "beta"));
    list = serve_names_list(p);
    ck_assert_str_eq(list, "gamma, alpha");
    g_free(list);
    ck_assert_ptr_eq(strata_serve_kv_find("vattention"), strata_serve_kv_at(4));
    ck_assert_ptr_null(strata_serve_kv_find("paged-v2"));
    list = strata_serve_kv_names();
    ck_assert_str_eq(list, "paged, contiguous-max, contiguous-pow2, contiguous-oracle, vattention, expandable");
    g_free(list);

    ck_assert_ptr_null(strata_serve_engine_find("tgi", &err));
    assert_message(err, STRATA_ERROR_INPUT,
                   "--engine: unknown engine 'tgi' (known: none, vllm-v0, vllm-v0.5, sglang-v0.3, sglang-v0.4, sglang-v0.5, "
                   "overlap, "
                   "trtllm, trtllm-cpp, trtllm-cpp-0.11, trtllm-cpp-0.9, trtllm-cpp-0.7, trtllm-cpp-0.6, "
                   "lmdeploy-turbomind, turbomind)");
    g_clear_error(&err);
    ck_assert_ptr_null(strata_serve_scheduler_find("fifo", &err));
    assert_message(err, STRATA_ERROR_INPUT,
                   "--scheduler: unknown scheduler 'fifo' (known: vllm-v1, vllm-v0, vllm-v0-chunked, trtllm-no-evict, "
                   "trtllm-no-evict-unchunked, sglang-v0.3, sglang-v0.4, lmdeploy-turbomind)");
    g_clear_error(&err);
    ck_assert_ptr_null(strata_serve_decode_find(NULL, &err));
    assert_message(err, STRATA_ERROR_INPUT, "decode attention kernel '(none)': expected one of flash-attention, xqa, xqa-v0.9, "
                   "xqa-v0.7, mmha, paged-attention-rocm, triton-unified-attention, turbomind-v0.1");
    g_clear_error(&err);
    ck_assert_ptr_null(strata_serve_allreduce_find("ring", &err));
    assert_message(err, STRATA_ERROR_INPUT, "TP all-reduce 'ring': expected one of nccl, trtllm-auto, vllm-custom, vllm-custom-rocm");
    g_clear_error(&err);
    ck_assert_ptr_null(strata_serve_attn_aux_find("fa4", &err));
    assert_message(err, STRATA_ERROR_INTERNAL,
                   "unknown attention kernels 'fa4' (known: vllm-0.6-flash-attn, sglang-0.3-flashinfer, "
                   "sglang-0.4-flashinfer)");
    g_clear_error(&err);
    strata_serve_model m;
    ck_assert(!strata_serve_model_preset(&m, "gpt-5", &err));
    assert_message(err, STRATA_ERROR_INPUT,
                   "unknown model 'gpt-5' (presets: llama-3-8b, llama-3-70b, llama-3-405b, llama-2-7b, llama-2-70b, "
                   "mixtral-8x7b, deepseek-v3; or --model-file FILE)");
    g_clear_error(&err);
    m = preset("llama-3-8b");
    ck_assert(!strata_serve_model_set(&m, "layer", "3", &err));
    ck_assert_msg(g_str_has_prefix(err->message, "unknown model key 'layer' (known: name, layers, hidden, heads, "),
                  "%s", err->message);
    g_clear_error(&err);
    ck_assert(strata_serve_model_set(&m, "layers", "3", &err));
    ck_assert_int_eq(m.layers, 3);
}
END_TEST

static strata_serve_kv_config small_pool(uint32_t blocks, uint32_t block_size, uint32_t shared_prefix)
{
    return (strata_serve_kv_config){.pool_bytes = (uint64_t)blocks * block_size, .bytes_per_token = 1,
                                    .block_size = block_size, .max_model_len = 1024, .n_requests = 8,
                                    .prefix_caching = true, .shared_prefix = shared_prefix, .kv_tensors = 2};
}

START_TEST(pool_blocks_by_hand)
{
    /* 1 GiB of 2 MiB blocks (16 tokens x 128 KiB) = 512 */
    strata_serve_kv_config c = {.pool_bytes = 1ull << 30, .bytes_per_token = 131072, .block_size = 16};
    ck_assert_uint_eq(strata_serve_pool_blocks(&c), 512);
    /* a request holds ceil(tokens / block_size) blocks: 33 tokens of 16 = 3 blocks */
    c = small_pool(8, 16, 0);
    c.n_requests = 1;
    GError *err = NULL;
    const strata_serve_kv_scheme *k = strata_serve_kv_find("paged");
    void *s = k->create(&c, &err);
    strata_serve_kv_req r = {0, 33, 1, 0};
    ck_assert(k->grow(s, &r, 33));
    ck_assert_uint_eq(k->held(s, 0), 3 * 16);
    ck_assert(!k->grow(s, &r, 8 * 16 + 1)); /* 9 blocks of 8: refused, nothing changed */
    ck_assert_uint_eq(k->held(s, 0), 3 * 16);
    k->release(s, 0);
    strata_serve_kv_stats st;
    k->stats(s, &st);
    ck_assert_uint_eq(st.reserved, 0);
    k->destroy(s);
}
END_TEST

/* Issue 45: vLLM v1's hybrid allocator on gpt-oss-20b (configs/models/gpt-oss-20b.json: 24 layers, every other
 * one a 128-token sliding window; 2 x 8 KV heads x 64 x 2 B = 2,048 B a token a layer). Two groups of 12 layers
 * (12 full, 12 sliding: group_size 12), so a block is 16 tokens x 2,048 x 12 = 393,216 B, half the 786,432 of a
 * block of every layer. A request of 4,095 prompt tokens prefilled in one step holds 256 blocks in each group
 * (nothing computed, nothing skipped): 512 x 393,216 = 201,326,592 B, as without a window. Its first decode
 * (computed 4,095, 4,096 tokens): remove_skipped_blocks frees (4,095 - 128 + 1) / 16 = 248 window blocks, so it
 * holds 256 + 8 = 264 blocks = 103,809,024 B; at 4,097 tokens (computed 4,096: 3,969 / 16 = 248 skipped)
 * 257 + 9 = 266 = 104,595,456 B (min(len, 128 + 16 - 1) = 143 tokens = 9 blocks at most in the window). */
/* A sliding layer's attention reads only its window (issue 45), as
 * FlashAttention runs it with window_size = (W - 1, 0) (vLLM v1
 * flash_attn.py). gpt-oss-20b (24 layers, global_every 2: 12 sliding of
 * window 128, 12 global; 64 query heads, 8 KV heads of 64, bf16 cache) on
 * one H100. One decode at context 4096: a sliding layer's attention is the
 * same op as a decode at context 128, and reads 4096 - 128 = 3,968 tokens'
 * K and V fewer: 3,968 x 8 heads x 2 x 64 x 2 B = 8,126,464 bytes; the step
 * costs 12 layers at 128 and 12 at 4096 (the model with its window set to 0
 * costs 24 at 4096). A 512-token prefill chunk at context 4096 (queries at
 * 3,584..4,095): each query sees 128 keys, the band's products 4 x 64 heads
 * x 512 x 128 x 64 = 1,073,741,824 flops, where the causal chunk counts
 * 4 x 64 x 512 x 4096 x 64 / 2 = 17,179,869,184. */
START_TEST(sliding_window_attention_reads_its_window)
{
    strata_serve_model m;
    GError *err = NULL;
    ck_assert(strata_serve_model_from_config(&m, STRATA_SOURCE_DIR "/configs/models/gpt-oss-20b.json", &err));
    strata_serve_model global = m;
    global.sliding_window = 0;
    strata_hw *hw = hw_load(STRATA_SOURCE_DIR "/configs/hw/h100.ini", NULL);
    strata_serve_cost *c = cost_new(hw, &m, 1, false, 8192), *g = cost_new(hw, &global, 1, false, 8192);
    strata_serve_chunk decode = {.id = 0, .tokens = 1, .context = 4096, .samples = true};
    strata_serve_chunk short_decode = {.id = 0, .tokens = 1, .context = 128, .samples = true};
    strata_serve_work full, win, at128;
    double t_full = strata_serve_cost_attention(c, &decode, 1, 0, &full);
    double t_win = strata_serve_cost_attention(c, &decode, 1, 128, &win);
    ck_assert_double_eq(t_win, strata_serve_cost_attention(c, &short_decode, 1, 0, &at128));
    ck_assert_double_eq(win.bytes, at128.bytes);
    ck_assert_double_eq(full.bytes - win.bytes, 8126464.0);
    double step = strata_serve_cost_step(c, &decode, 1), step_global = strata_serve_cost_step(g, &decode, 1);
    ck_assert_double_eq_tol(step, step_global - 12 * t_full + 12 * t_win, 1e-12 * step_global);
    strata_serve_chunk prefill = {.id = 1, .tokens = 512, .context = 4096, .samples = true};
    strata_serve_cost_attention(c, &prefill, 1, 0, &full);
    strata_serve_cost_attention(c, &prefill, 1, 128, &win);
    ck_assert_double_eq(full.flops - win.flops, 17179869184.0 - 1073741824.0);
    strata_serve_cost_free(c);
    strata_serve_cost_free(g);
    strata_hw_free(hw);
}
END_TEST

START_TEST(sliding_window_blocks_freed_as_vllm_v1)
{
    strata_serve_model m;
    GError *err = NULL;
    ck_assert(strata_serve_model_from_config(&m, STRATA_SOURCE_DIR "/configs/models/gpt-oss-20b.json", &err));
    ck_assert_uint_eq(m.sliding_window, 128);
    ck_assert_uint_eq(m.global_every, 2);
    ck_assert_uint_eq(strata_serve_window_layers(&m), 12);
    ck_assert_uint_eq(strata_serve_kv_bytes_per_token(&m, 1), 49152);
    strata_serve_kv_config c = {.pool_bytes = 1ull << 30, .bytes_per_token = 49152, .block_size = 16,
                                .max_model_len = 8192, .n_requests = 2, .prefix_caching = true, .layers = 24,
                                .window_layers = 12, .window = 128};
    /* 2^30 / 393,216 = 2,730 blocks; every layer full: 2^30 / 786,432 = 1,365 */
    ck_assert_uint_eq(strata_serve_pool_blocks(&c), 2730);
    const strata_serve_kv_scheme *k = strata_serve_kv_find("paged");
    void *s = k->create(&c, &err);
    ck_assert_ptr_nonnull(s);
    strata_serve_kv_req r = {0, 4095, 2, 0};
    ck_assert_uint_eq(k->lookup(s, &r, 4095), 0); /* no prefix hit with a window (left) */
    ck_assert(k->grow(s, &r, 4095));
    ck_assert_uint_eq(k->held(s, 0), 201326592);
    r.computed = 4095;
    ck_assert(k->grow(s, &r, 4096));
    ck_assert_uint_eq(k->held(s, 0), 103809024);
    r.computed = 4096;
    ck_assert(k->grow(s, &r, 4097));
    ck_assert_uint_eq(k->held(s, 0), 104595456);
    strata_serve_kv_stats st;
    k->stats(s, &st);
    ck_assert_uint_eq(st.reserved, 104595456);
    k->release(s, 0);
    k->stats(s, &st);
    ck_assert_uint_eq(st.reserved, 0);
    k->destroy(s);
    /* without the window (another engine): blocks of every layer, 257 x 786,432 at 4,097 tokens */
    c.window = 0;
    ck_assert_uint_eq(strata_serve_pool_blocks(&c), 1365);
    s = k->create(&c, &err);
    r.computed = 0;
    ck_assert(k->grow(s, &r, 4097));
    ck_assert_uint_eq(k->held(s, 0), 257ull * 786432);
    k->destroy(s);
}
END_TEST

START_TEST(prefix_hits_and_lru_eviction)
{
    /* 8 blocks of 4 tokens, 8 shared tokens (two full blocks) */
    strata_serve_kv_config c = small_pool(8, 4, 8);
    GError *err = NULL;
    const strata_serve_kv_scheme *k = strata_serve_kv_find("paged");
    void *s = k->create(&c, &err);
    strata_serve_kv_req a = {0, 10, 1, 0}, b = {1, 10, 1, 0}, big = {2, 24, 1, 0}, d = {3, 10, 1, 0};
    ck_assert_uint_eq(k->lookup(s, &a, 10), 0);
    ck_assert(k->grow(s, &a, 10)); /* blocks 0, 1, 2; 0 and 1 full and hashed */
    k->release(s, 0);              /* free queue: 3 4 5 6 7 2 1 0 */
    /* the same 8 shared tokens: (10 - 1) / 4 = 2 blocks hit, 8 tokens */
    ck_assert_uint_eq(k->lookup(s, &b, 10), 8);
    ck_assert(k->grow(s, &b, 10)); /* hits 0, 1 and one fresh block (3) */
    ck_assert_uint_eq(k->held(s, 1), 12);
    k->release(s, 1);              /* free queue: 4 5 6 7 2 3 1 0 */
    /* 24 tokens take 6 fresh blocks from the head: 4 5 6 7 2 3; 1 and 0 still cached */
    ck_assert(k->grow(s, &big, 24));
    ck_assert_uint_eq(k->lookup(s, &d, 10), 8);
    k->release(s, 2);              /* free queue: 1 0 3 2 7 6 5 4 (big's in reverse) */
    /* a request of 4 tokens pops block 1: the shared chain's second block is evicted */
    strata_serve_kv_req e = {4, 4, 1, 0};
    ck_assert(k->grow(s, &e, 4));
    ck_assert_uint_eq(k->lookup(s, &d, 10), 4);
    k->destroy(s);
}
END_TEST

START_TEST(page_growth_by_hand)
{
    /* Llama-3-8B on vattention: 2 MiB / (8 x 128 x 2 B) = 1024 tokens per page; 64 tensors (2 x 32 layers):
     * 1025 tokens hold 2 pages each, 128 pages = 256 MiB; expandable: 1025 x 128 KiB = 128.1 MiB in 20 MiB
     * pages = 7 pages = 140 MiB */
    strata_serve_kv_config c = {.pool_bytes = 64ull << 30, .bytes_per_token = 131072, .block_size = 16,
                                .max_model_len = 8192, .n_requests = 1, .kv_tensors = 64};
    strata_serve_kv_req r = {0, 1000, 25, 0};
    GError *err = NULL;
    const strata_serve_kv_scheme *k = strata_serve_kv_find("vattention");
    void *s = k->create(&c, &err);
    ck_assert(k->grow(s, &r, 1025));
    ck_assert_uint_eq(k->held(s, 0), 256ull << 20);
    k->destroy(s);
    k = strata_serve_kv_find("expandable");
    s = k->create(&c, &err);
    ck_assert(k->grow(s, &r, 1025));
    ck_assert_uint_eq(k->held(s, 0), 140ull << 20);
    k->destroy(s);
    /* contiguous-max reserves max_model_len: 8192 x 128 KiB = 1 GiB; pow2 of 1025 is 2048: 256 MiB */
    k = strata_serve_kv_find("contiguous-max");
    s = k->create(&c, &err);
    ck_assert(k->grow(s, &r, 1));
    ck_assert_uint_eq(k->held(s, 0), 1ull << 30);
    k->destroy(s);
    k = strata_serve_kv_find("contiguous-pow2");
    s = k->create(&c, &err);
    ck_assert(k->grow(s, &r, 1));
    ck_assert_uint_eq(k->held(s, 0), 256ull << 20);
    k->destroy(s);
}
END_TEST

START_TEST(swap_time_over_the_link)
{
    /* test-simple: pcie 16 GB/s, 1 us. 10 blocks of 2 MiB of a model with 64 tensors: 640 copies x 1 us +
     * 20 MiB / 16 GB/s = 640 us + 1310.72 us = 1950.72 us */
    strata_hw *hw = strata_test_load_hw("test-simple", (const char *const[]){"memory.hbm.capacity=16GiB", NULL});
    strata_serve_model m = preset("llama-3-8b");
    strata_serve_cost *c = cost_new(hw, &m, 1, false, 16);
    double bw = 0, lat = 0;
    strata_serve_cost_host_link(c, &bw, &lat);
    ck_assert(fabs(bw - 16e9) < 1);
    ck_assert(fabs(lat - 1e-6) < 1e-12);
    double t = strata_serve_cost_swap(c, 10, 2u << 20, 64);
    ck_assert_msg(fabs(t - 1950.72e-6) < 1e-9, "swap %.9g s", t);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* Attention data parallelism (--attention-dp). */
START_TEST(attention_dp_by_hand)
{
    /* A dense model keeps every weight whole: Llama-3-8B at TP2 holds all 8,030,261,248 parameters per rank. */
    strata_serve_model m = preset("llama-3-8b");
    ck_assert_uint_eq(strata_serve_weight_bytes_dp(&m, 2, true), 16060522496ull);
    /* Mixtral-8x7B at TP2: whole the norms and routers 266,240 + 1,048,576 = 1,314,816, the attention
     * 32 x 41,943,040 = 1,342,177,280 and the embeddings 262,144,000 (1,605,636,096 in all); the experts
     * (46,702,792,704 - 1,605,636,096) / 2 = 22,548,578,304: 24,154,214,400 parameters, 48,308,428,800 B */
    m = preset("mixtral-8x7b");
    ck_assert_uint_eq(strata_serve_weight_bytes_dp(&m, 2, true), 48308428800ull);
    /* A rank of a dense model under attention dp does a TP1 rank's work on its share: two decodes at context
     * 100 over two ranks take one decode's TP1 time (every weight whole, no collective for dense layers, the
     * LM head on its one request) */
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "dgx-h100.ini", NULL);
    GError *err = NULL;
    strata_hw *hw = hw_load(path, NULL);
    m = preset("llama-3-8b");
    strata_serve_cost *dp = strata_serve_cost_new(hw, &m, 2, true, 16, &err);
    strata_serve_cost *one = strata_serve_cost_new(hw, &m, 1, false, 16, &err);
    ck_assert(dp && one);
    strata_serve_chunk two[2] = {{0, 1, 100, true}, {1, 1, 100, true}};
    double a = strata_serve_cost_step(dp, two, 2), b = strata_serve_cost_step(one, two, 1);
    ck_assert_msg(a > 0 && fabs(a - b) <= 1e-15 * b, "%.17g vs %.17g", a, b);
    strata_serve_cost_free(dp);
    strata_serve_cost_free(one);
    strata_hw_free(hw);
    g_free(path);
}
END_TEST

/* TensorRT-LLM's XQA decode attention (serve_decode.h) on dgx-h100 (132
 * SMs, 3.35 TB/s x stream_efficiency 0.9 = 3.015 TB/s, 22.841 GB/s an SM;
 * kernel_launch 3 us), by hand:
 * - Llama-3.1-405B at TP8 (16 query heads over 1 KV head of 128 a rank),
 *   FP8 cache, 512 decodes at context 1,024 (1,023 past tokens). Blocks:
 *   floor(1,023 / 128) = 7, min(7, round(sqrt(56)) = 7); 512 x 1 x 7 / 132
 *   = 27.15 waves, / 8 = 3.394 > 1: floor(7 / 3.394) = 2 (6000 / 512 = 11
 *   does not cap). 1,024 CTAs, ceil(1,024 / 132) = 8 waves. A CTA: 512
 *   tokens, 8 tiles of 64 x (K + V) 2 x 128 B = 131,072 B, its 16 query
 *   heads in and out 16 x 128 x 2 B x 2 = 8,192 B: 139,264 B / 22.841 GB/s
 *   = 6.0971 us, + 0.5 us = 6.5971 us. The op: 2 x 3 us + 8 x 6.5971 =
 *   58.777 us (aiconfigurator measured 66.0 us for the same batch x KV
 *   heads, 128 x 4 at Qwen3's 64/4 heads).
 * - One decode at context 131,072: 131,071 / 128 = 1,023, min(1,023,
 *   round(sqrt(8,184)) = 90) = 90 blocks, 90 CTAs (one wave, 42 SMs idle).
 *   A CTA: ceil(131,072 / 90) = 1,457 tokens, 23 tiles = 1,472 tokens:
 *   376,832 + 8,192 = 385,024 B / 22.841 GB/s = 16.857 us + 0.5: the op
 *   6 + 17.357 = 23.357 us.
 * - One decode at context 2: one block, one CTA of one 64-token tile:
 *   16,384 + 8,192 B = 1.0759 us + 0.5; the op 7.5759 us.
 * - Two decodes of mean context 2, the longest 131,072: the longest sets
 *   the blocks (90, as above; 2 x 90 / 132 = 1.4 waves, not over 8), 180
 *   CTAs in 2 waves, each CTA one tile at the mean context: 6 + 2 x 1.5759
 *   us. */
START_TEST(xqa_decode_by_hand)
{
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "dgx-h100.ini", NULL);
    GError *err = NULL;
    strata_hw *hw = hw_load(path, NULL);
    const strata_serve_decode_kernel *xqa = strata_serve_decode_find("xqa", &err);
    ck_assert_msg(xqa && !strata_serve_decode_is_flash(xqa), "%s", err ? err->message : "");
    double slot = 3.35e12 * 0.9 / 132;
    struct {
        uint64_t decodes, context, longest;
        uint32_t blocks;
        uint64_t ctas, waves;
        double cta_bytes;
    } rows[] = {{512, 1024, 0, 2, 1024, 8, 139264},
                {1, 131072, 0, 90, 90, 1, 385024},
                {1, 2, 0, 1, 1, 1, 24576},
                {2, 2, 131072, 90, 180, 2, 24576}};
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        strata_serve_decode_in in = {rows[i].decodes, rows[i].context, rows[i].longest, 1, 16, 128, 1.0, 2.0};
        strata_serve_decode_plan p;
        double t = strata_serve_decode_time(xqa, hw, 0, &in, &p);
        ck_assert_uint_eq(p.blocks, rows[i].blocks);
        ck_assert_uint_eq(p.ctas, rows[i].ctas);
        ck_assert_uint_eq(p.waves, rows[i].waves);
        double cta = 0.5e-6 + rows[i].cta_bytes / slot, want = 6e-6 + (double)rows[i].waves * cta;
        ck_assert_msg(fabs(p.cta_s - cta) <= 1e-12 * cta && fabs(t - want) <= 1e-12 * want, "%zu: %.17g vs %.17g", i,
                      t, want);
    }
    ck_assert_msg(fabs(6e-6 + 8 * (0.5e-6 + 139264 / slot) - 58.777e-6) < 1e-9, "the comment's 58.777 us");
    /* TensorRT-LLM v0.9's dispatch (xqa-v0.9): 8 query heads a KV head run XQA (64 x 8 x 4 >= 132 SMs); 1 (MHA)
     * or 4 (Mistral 7B, 32 / 8) run masked MHA, as 8 with too few CTAs (4 decodes x 1 KV head x 4 < 132): a
     * CTA per query head and sequence. For 4: 64 x 8 x 4 = 2048 CTAs, each
     * reading its KV head's 2048 tokens (2 x 128 B of FP8) and its query and output (2 x 128 x 2 B): 524,800 B;
     * one launch (3 us) + 2048 x 524,800 / (3.35e12 x 0.9) = 3 + 356.4811 us. */
    const strata_serve_decode_kernel *v09 = strata_serve_decode_find("xqa-v0.9", &err);
    ck_assert_msg(v09 && !strata_serve_decode_is_flash(v09), "%s", err ? err->message : "");
    strata_serve_decode_in g8 = {64, 2048, 0, 8, 8, 128, 1.0, 2.0}, g4 = {64, 2048, 0, 8, 4, 128, 1.0, 2.0};
    /* v0.9.0 launches XQA with multi-block mode off (plugin.py:91, decoderXQAImplPrecompiled.cpp:361-368): one
     * CTA per (sequence, KV head), 64 x 8 = 512 CTAs, ceil(512 / 132) = 4 waves, each CTA reading 2,048 tokens
     * (2 x 128 B of FP8) and its 8 query heads in and out (8 x 128 x 2 x 2 B): 528,384 B, 23.13 us at slot, under
     * the measured FP8 floor on sm_90 (25.6 cycles a token at 1980 MHz: 2,048 x 25.6 / 1.98e9 = 26.479 us); 2 x
     * 3 us + 4 x (0.5 + 26.479) us = 113.917 us. The later launch (xqa) splits each sequence in 2
     * (computeMultiBlockCount: 15
     * blocks of 128, at most round(sqrt(120)) = 11, over 8 waves by 42.7 / 8: floor(11 / 5.33) = 2): 1,024 CTAs in
     * 8 waves of 266,240 B, 103.25 us. */
    strata_serve_decode_plan p8;
    double v09_g8 = strata_serve_decode_time(v09, hw, 0, &g8, &p8), want8 = 6e-6 + 4 * (0.5e-6 + 2048 * 25.6 / 1.98e9);
    ck_assert_uint_eq(p8.blocks, 1);
    ck_assert_uint_eq(p8.ctas, 512);
    ck_assert_uint_eq(p8.waves, 4);
    ck_assert_msg(fabs(v09_g8 - want8) <= 1e-12 * want8 && fabs(want8 - 113.917e-6) < 1e-9, "%.17g vs %.17g", v09_g8,
                  want8);
    double later = strata_serve_decode_time(xqa, hw, 0, &g8, &p8), want_later = 6e-6 + 8 * (0.5e-6 + 266240 / slot);
    ck_assert_uint_eq(p8.blocks, 2);
    ck_assert_msg(fabs(later - want_later) <= 1e-12 * want_later && fabs(want_later - 103.25e-6) < 1e-8, "%.17g",
                  later);
    strata_serve_decode_plan p4;
    double mmha = strata_serve_decode_time(v09, hw, 0, &g4, &p4), want4 = 3e-6 + 2048.0 * 524800 / (3.35e12 * 0.9);
    ck_assert_uint_eq(p4.ctas, 2048);
    strata_serve_decode_in mha = {64, 2048, 0, 32, 1, 128, 1.0, 2.0}, few = {4, 2048, 0, 1, 8, 128, 1.0, 2.0};
    ck_assert_double_eq_tol(strata_serve_decode_time(v09, hw, 0, &mha, NULL), want4, 1e-12 * want4);
    strata_serve_decode_time(v09, hw, 0, &few, &p4);
    ck_assert_uint_eq(p4.ctas, 32);
    ck_assert_uint_eq(p4.blocks, 1);
    ck_assert_msg(fabs(mmha - want4) <= 1e-12 * want4 && fabs(want4 - 359.4811e-6) < 1e-9, "%.17g vs %.17g", mmha,
                  want4);
    /* Through the cost model: the engine's kernel replaces the flash op for the decodes of a layer. */
    strata_serve_model m = preset("llama-3-405b");
    m.dtype = STRATA_DTYPE_F8;
    strata_serve_cost *c = cost_new(hw, &m, 8, false, 16);
    strata_serve_chunk *d = g_new(strata_serve_chunk, 512);
    for (uint32_t i = 0; i < 512; i++)
        d[i] = (strata_serve_chunk){i, 1, 1024, true};
    strata_serve_work w;
    double flash = strata_serve_cost_attention(c, d, 512, 0, &w);
    strata_serve_cost_set_decode(c, xqa);
    double x = strata_serve_cost_attention(c, d, 512, 0, &w);
    ck_assert_msg(fabs(x - (6e-6 + 8 * (0.5e-6 + 139264 / slot))) < 1e-15 && flash != x, "%.17g (flash %.17g)", x,
                  flash);
    ck_assert(!strata_serve_decode_find("nope", &err) &&
              strstr(err->message, "flash-attention, xqa, xqa-v0.9, xqa-v0.7, mmha, paged-attention-rocm, "
                                   "triton-unified-attention, turbomind-v0.1"));
    g_clear_error(&err);
    ck_assert(!strcmp(strata_serve_engine_find("trtllm", NULL)->decode, "xqa"));
    g_free(d);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
    g_free(path);
}
END_TEST

/* TensorRT-LLM v0.6.1's FP8-cache decode (decode kernel mmha, engine row trtllm-cpp-0.6): masked MHA for every
 * GQA group (v0.6.1 has no XQA). Llama 2 70B at TP4 on dgx-h100.ini (set 11's bs480 row): 480 decodes x 2 KV heads
 * a rank x 8 query heads = 7,680 CTAs over 1,152 tokens. Issue: 92.1875 warp instructions a token and query head
 * (608 / 8 + 259 / 16, serve_decode.c mmha_v06_time) at 4 a clock on 132 SMs at 1.98 GHz (peak_clock 1830 MHz):
 * 7,680 x 1,152 x 92.1875 / (132 x 4 x 1.98e9) = 780.1653 us. HBM, the cache read once a KV group (L2 serves the
 * group's other 7 reads): 960 x (294,912 + 8 x 512) B / (0.9 x 3.35e12) = 95.21 us. A lone CTA: 13.4 us. So one
 * launch + the issue: 783.1653 us (charging every CTA its own read from HBM instead gave 3 + 7,680 x 295,424 /
 * (0.9 x 3.35e12) = 755.5236 us, which mmha_time still gives an FP16 cache). The same shape under xqa-v0.9 reads
 * the cache once per KV head: 960 CTAs of 1,152 x 256 + 8 x 128 x 2 x 2 B = 299,008 B, 8 waves, each CTA at the
 * FP8 floor 1,152 x 25.6 / 1.98e9 = 14.894 us: 2 x 3 + 8 x (0.5 + 14.894) = 129.156 us, so the masked MHA step is
 * 6.06 times as long. With the cache in FP16 (mmha_time): 3 + 7,680 x (589,824 + 512) / (0.9 x 3.35e12) =
 * 1,506.7415 us. */
START_TEST(mmha_v06_by_hand)
{
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "dgx-h100.ini", NULL);
    strata_hw *hw = hw_load(path, NULL);
    GError *err = NULL;
    const strata_serve_decode_kernel *mmha = strata_serve_decode_find("mmha", &err);
    ck_assert_msg(mmha && !strata_serve_decode_is_flash(mmha), "%s", err ? err->message : "");
    strata_serve_decode_in in = {480, 1152, 0, 2, 8, 128, 1.0, 2.0};
    strata_serve_decode_plan p;
    double t = strata_serve_decode_time(mmha, hw, 0, &in, &p);
    double want = 3e-6 + 7680.0 * 1152 * 92.1875 / (132 * 4 * 1.98e9);
    ck_assert_uint_eq(p.ctas, 7680);
    ck_assert_msg(fabs(t - want) <= 1e-12 * want && fabs(want - 783.1653e-6) < 1e-9, "%.17g vs %.17g", t, want);
    strata_serve_decode_in f16 = in;
    f16.kv_bytes = 2.0;
    double want16 = 3e-6 + 7680.0 * (589824 + 512) / (3.35e12 * 0.9);
    t = strata_serve_decode_time(mmha, hw, 0, &f16, NULL);
    ck_assert_msg(fabs(t - want16) <= 1e-12 * want16 && fabs(want16 - 1506.7415e-6) < 1e-9, "%.17g", t);
    double xqa = strata_serve_decode_time(strata_serve_decode_find("xqa-v0.9", NULL), hw, 0, &in, &p);
    double want_xqa = 6e-6 + 8 * (0.5e-6 + 1152 * 25.6 / 1.98e9);
    ck_assert_uint_eq(p.ctas, 960);
    ck_assert_msg(fabs(xqa - want_xqa) <= 1e-12 * want_xqa && fabs(want_xqa - 129.156e-6) < 1e-9, "%.17g", xqa);
    const strata_serve_engine *e = strata_serve_engine_find("trtllm-cpp-0.6", &err);
    ck_assert_msg(e && !strcmp(e->decode, "mmha") && !strcmp(e->scheduler, "trtllm-no-evict-unchunked"), "%s",
                  err ? err->message : "");
    strata_hw_free(hw);
    g_free(path);
}
END_TEST

/* The xqa row refuses a vanilla MHA (TensorRT-LLM's JIT XQA, jit::supportConfigCommon: query heads = KV heads at
 * beam 1 is not XQA's) and runs the masked MHA, as the mmha row does; derived by hand. Llama 2 7B at TP1 on
 * h200.ini (132 SMs, 3 us launches, 0.9 x 4.8 TB/s = 4.32 TB/s, the decode clock 1.98 GHz): 128 decodes x 32 KV
 * heads, one query head each, 1,024 tokens of e4m3 K and V at head 128. Masked MHA: a CTA per query head and
 * sequence, 4,096 CTAs; each issues 92.1875 warp instructions a cached token (mmha_v06_time), 94,400 a CTA, and
 * the SMs issue 132 x 4 x 1.98e9 a second: 4,096 x 94,400 / 1.04544e12 = 369.8561 us, over the HBM's 4,096 x
 * (262,144 + 512) B / 4.32e12 = 249.0368 us: 3 + 369.8561 = 372.8561 us. As XQA it was 1 block a sequence
 * (1,023 / 128 = 7 blocks, over 8 waves by 27: 1), 4,096 CTAs in 32 waves of 0.5 us + 262,656 B at 4.32e12 / 132
 * B/s = 8.5256 us: 6 + 32 x 8.5256 = 278.8192 us. An FP16 cache keeps the masked MHA's bytes (mmha_time): 3 +
 * 4,096 x (524,288 + 512) / 4.32e12 = 500.5881 us. A group of 8 still runs XQA (xqa_decode_by_hand). */
START_TEST(xqa_refuses_vanilla_mha_by_hand)
{
    strata_hw *h200 = hw_load(STRATA_SOURCE_DIR "/configs/hw/h200.ini", NULL);
    const strata_serve_decode_kernel *xqa = strata_serve_decode_find("xqa", NULL);
    const strata_serve_decode_kernel *mmha = strata_serve_decode_find("mmha", NULL);
    strata_serve_decode_in mha = {128, 1024, 0, 32, 1, 128, 1.0, 2.0};
    strata_serve_decode_plan p;
    double t = strata_serve_decode_time(xqa, h200, 0, &mha, &p), want = 3e-6 + 4096.0 * 94400 / (132 * 4 * 1.98e9);
    ck_assert_uint_eq(p.ctas, 4096);
    ck_assert_msg(fabs(t - want) <= 1e-12 * want && fabs(want - 372.8561e-6) < 1e-10, "%.17g vs %.17g", t, want);
    ck_assert_double_eq_tol(strata_serve_decode_time(mmha, h200, 0, &mha, NULL), t, 1e-18);
    double was = 6e-6 + 32 * (0.5e-6 + 262656 / (4.32e12 / 132));
    ck_assert_msg(fabs(was - 278.8192e-6) < 1e-10 && t > 1.3 * was, "%.17g", was);
    strata_serve_decode_in f16 = mha;
    f16.kv_bytes = 2.0;
    double want16 = 3e-6 + 4096.0 * 524800 / 4.32e12;
    t = strata_serve_decode_time(xqa, h200, 0, &f16, NULL);
    ck_assert_msg(fabs(t - want16) <= 1e-12 * want16 && fabs(want16 - 500.5881e-6) < 1e-10, "%.17g", t);
    strata_hw_free(h200);
}
END_TEST

/* TensorRT-LLM v0.7's dispatch with TRTLLM_ENABLE_XQA=1 (decode kernel xqa-v0.7, engine row trtllm-cpp-0.7),
 * derived by hand. Llama 2 70B at TP1 on h200.ini (132 SMs, 3 us launches, 0.9 x 4.8 TB/s): 192 decodes x 8 KV
 * heads x 1,152 tokens of e4m3 K and V. XQA takes it (8 query heads a KV head, head 128, 8 x 192 x 4 >= 132, an
 * FP8 unit) in micro-batches of min(144, 132) = 132 sequences: one kernel of 132 x 8 = 1,056 CTAs (8 waves) and
 * one of 60 x 8 = 480 CTAs (ceil(480 / 132) = 4 waves). A CTA reads 1,152 x 2 x 128 B of K and V and its 8 query
 * heads in and out (8 x 128 x 2 x 2 B): 299,008 B, 9.136 us at its SM's share of the stream, under the floor
 * 1,152 x 25.6 / 1.98e9 = 14.894545 us: 0.5 + 14.894545 = 15.394545 us a CTA. The RoPE kernel and the two XQA
 * kernels are 3 launches: 9 + 12 x 15.394545 = 193.734545 us, where xqa-v0.9's one launch of 1,536 CTAs
 * (12 waves) is 6 + 12 x 15.394545 = 190.734545 us. On a100.ini (108 SMs, 5 us launches, 0.9 x 2,039 GB/s) an
 * FP16 cache runs XQA without the floor: 593,920 B a CTA, 593,920 x 108 / 1.8351e12 = 34.953605 us + 0.5; micro-
 * batches of 108: 864 CTAs (8 waves) and 84 x 8 = 672 (7 waves): 15 + 15 x 35.453605 = 546.804071 us. Refused,
 * so masked MHA (the mmha row's time): an FP8 cache on the A100 (no E4M3 cubin for sm_80), a group of 4 (Mistral),
 * 16 KV heads (shouldUse takes 1, 2, 4 or 8), and 4 sequences x 8 KV heads (32 x 4 < 132). */
START_TEST(xqa_v07_by_hand)
{
    strata_hw *h200 = hw_load(STRATA_SOURCE_DIR "/configs/hw/h200.ini", NULL);
    strata_hw *a100 = hw_load(STRATA_SOURCE_DIR "/configs/hw/a100.ini", NULL);
    GError *err = NULL;
    const strata_serve_decode_kernel *v07 = strata_serve_decode_find("xqa-v0.7", &err);
    const strata_serve_decode_kernel *v09 = strata_serve_decode_find("xqa-v0.9", NULL);
    const strata_serve_decode_kernel *mmha = strata_serve_decode_find("mmha", NULL);
    ck_assert_msg(v07 && !strata_serve_decode_is_flash(v07), "%s", err ? err->message : "");
    strata_serve_decode_in in = {192, 1152, 0, 8, 8, 128, 1.0, 2.0};
    strata_serve_decode_plan p;
    double cta = 0.5e-6 + 1152 * 25.6 / 1.98e9, t = strata_serve_decode_time(v07, h200, 0, &in, &p);
    double want = 9e-6 + 12 * cta;
    ck_assert_uint_eq(p.ctas, 1536);
    ck_assert_uint_eq(p.waves, 12);
    ck_assert_msg(fabs(t - want) <= 1e-12 * want && fabs(want - 193.734545e-6) < 1e-12, "%.17g vs %.17g", t, want);
    double t09 = strata_serve_decode_time(v09, h200, 0, &in, NULL);
    ck_assert_msg(fabs(t09 - (6e-6 + 12 * cta)) <= 1e-12 * t09, "%.17g", t09);
    strata_serve_decode_in f16 = in;
    f16.kv_bytes = 2.0;
    double c16 = 0.5e-6 + 593920.0 * 108 / (0.9 * 2039e9), want16 = 15e-6 + 15 * c16;
    t = strata_serve_decode_time(v07, a100, 0, &f16, &p);
    ck_assert_uint_eq(p.waves, 15);
    ck_assert_msg(fabs(t - want16) <= 1e-12 * want16 && fabs(want16 - 546.804071e-6) < 1e-12, "%.17g", t);
    strata_serve_decode_in group4 = {192, 1152, 0, 8, 4, 128, 1.0, 2.0}, kv16 = {192, 1152, 0, 16, 8, 128, 1.0, 2.0};
    strata_serve_decode_in few = {4, 1152, 0, 8, 8, 128, 1.0, 2.0};
    ck_assert_double_eq(strata_serve_decode_time(v07, a100, 0, &in, NULL),
                        strata_serve_decode_time(mmha, a100, 0, &in, NULL));
    ck_assert_double_eq(strata_serve_decode_time(v07, h200, 0, &group4, NULL),
                        strata_serve_decode_time(mmha, h200, 0, &group4, NULL));
    ck_assert_double_eq(strata_serve_decode_time(v07, h200, 0, &kv16, NULL),
                        strata_serve_decode_time(mmha, h200, 0, &kv16, NULL));
    ck_assert_double_eq(strata_serve_decode_time(v07, h200, 0, &few, NULL),
                        strata_serve_decode_time(mmha, h200, 0, &few, NULL));
    const strata_serve_engine *e = strata_serve_engine_find("trtllm-cpp-0.7", &err);
    ck_assert_msg(e && !strcmp(e->decode, "xqa-v0.7") && !strcmp(e->scheduler, "trtllm-no-evict-unchunked"), "%s",
                  err ? err->message : "");
    strata_hw_free(h200);
    strata_hw_free(a100);
}
END_TEST

/* TensorRT-LLM v0.9.0's XQA with an FP8 cache on sm_90, against the kernel measured on an H100 and an H200
 * (docs/validation.md, "TensorRT-LLM v0.9's XQA kernel on an H100 and H200 (wave 31)"; serve_decode.c
 * xqa_v09_token_s): 995 sequences x 1 KV head (8 query heads) x 1,152 tokens, 995 CTAs, ceil(995 / 132) = 8
 * waves. A CTA streams 1,152 x 2 x 128 B of e4m3 K and V and its 8 query heads in and out (8 x 128 x 2 x 2 B):
 * 299,008 B, at its SM's share of 0.9 x 4.8 TB/s (h200.ini) 9.136 us, of 0.9 x 3.35 TB/s (h100.ini) 13.091 us;
 * the floor, 1,152 x 25.6 cycles at 1980 MHz, 14.894 us, binds on both: 2 x 3 us + 8 x (0.5 + 14.894) us =
 * 129.156 us on either file, the XQA kernel's share (less the RoPE kernel's 3 us) 126.156 us against the
 * measured 125.69 (H200) and 133.97 (H100). With an FP16 cache (629 x 1 x 1,152 on h200.ini) the bytes bind:
 * 593,920 B a CTA, 18.148 us, 5 waves, 6 + 5 x 18.648 = 99.238 us (the kernel's 96.24 against the measured
 * 98.97). The floor scales with the clock (peak_clock 2196 MHz, x 1.2: 2376 MHz, 12.412 us a CTA, still over
 * the bytes: 6 + 8 x 12.912 = 109.297 us) and is not given to a unit without FP8 tensor cores (a100.ini: 108
 * SMs, 0.9 x 2,039 GB/s, 5 us launches: 10 waves of 0.5 + 299,008 / 16.992e9 = 18.097 us, 2 x 5 + 10 x
 * 18.097 = 190.973 us). */
START_TEST(xqa_v09_fp8_floor_by_hand)
{
    const strata_serve_decode_kernel *v09 = strata_serve_decode_find("xqa-v0.9", NULL);
    strata_serve_decode_in fp8 = {995, 1152, 0, 1, 8, 128, 1.0, 2.0}, fp16 = {629, 1152, 0, 1, 8, 128, 2.0, 2.0};
    const char *files[] = {"h100.ini", "h200.ini"};
    double floor_s = 1152 * 25.6 / 1.98e9, want = 6e-6 + 8 * (0.5e-6 + floor_s);
    ck_assert_msg(fabs(floor_s - 14.894e-6) < 1e-9 && fabs(want - 129.156e-6) < 1e-9, "%.17g", want);
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", files[i], NULL);
        strata_hw *hw = hw_load(path, NULL);
        strata_serve_decode_plan p;
        double t = strata_serve_decode_time(v09, hw, 0, &fp8, &p);
        ck_assert_uint_eq(p.ctas, 995);
        ck_assert_uint_eq(p.waves, 8);
        ck_assert_msg(fabs(t - want) <= 1e-12 * want, "%s: %.17g vs %.17g", files[i], t, want);
        strata_hw_free(hw);
        g_free(path);
    }
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "h200.ini", NULL);
    strata_hw *hw = hw_load(path, NULL);
    double t16 = strata_serve_decode_time(v09, hw, 0, &fp16, NULL);
    double want16 = 6e-6 + 5 * (0.5e-6 + 593920 / (4.8e12 * 0.9 / 132));
    ck_assert_msg(fabs(t16 - want16) <= 1e-12 * want16 && fabs(want16 - 99.238e-6) < 1e-9, "%.17g vs %.17g", t16,
                  want16);
    strata_hw_free(hw);
    const char *fast[] = {"compute.sm.peak_clock=2196MHz", NULL};
    hw = hw_load(path, fast);
    double tf = strata_serve_decode_time(v09, hw, 0, &fp8, NULL), wantf = 6e-6 + 8 * (0.5e-6 + 1152 * 25.6 / 2.376e9);
    ck_assert_msg(fabs(tf - wantf) <= 1e-12 * wantf && fabs(wantf - 109.297e-6) < 1e-9, "%.17g vs %.17g", tf, wantf);
    strata_hw_free(hw);
    g_free(path);
    path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "a100.ini", NULL);
    hw = hw_load(path, NULL);
    double ta = strata_serve_decode_time(v09, hw, 0, &fp8, NULL);
    double wanta = 10e-6 + 10 * (0.5e-6 + 299008 / (2039e9 * 0.9 / 108));
    ck_assert_msg(fabs(ta - wanta) <= 1e-12 * wanta && fabs(wanta - 190.973e-6) < 1e-9, "%.17g vs %.17g", ta, wanta);
    strata_hw_free(hw);
    g_free(path);
}
END_TEST

/* A TP all-reduce costs what strata's collective model simulates for its
 * size under the hardware's NCCL settings (serve_coll.h): dgx-h100 at TP2,
 * forced to Ring by NCCL_ALGO and to one protocol by NCCL_PROTO. A decode
 * of Llama-3-8B reduces 1 x 4096 bf16 = 8192 B (2^13, a grid anchor:
 * simulated itself), twice per layer, 32 layers; nothing else in the step
 * depends on the protocol, so the steps differ by 64 x the difference of
 * the two collectives as `strata gen collective op=all-reduce bytes=8192
 * devices=2 dtype=bf16` gives them on the file with the same overrides
 * and hardware.devices=2 (validate's path, bench/coll_sweep.h). NCCL's
 * closed forms (15.2 + 8192 / 360,000 us Simple, 7.8 + 8192 / 141,000 us
 * LL; nccl_tuning.h) only choose, so the step no longer differs by
 * theirs. */
START_TEST(tp_allreduce_is_nccl_models)
{
    const char *simple[] = {"interconnect.nvlink.nccl_algo=Ring", "interconnect.nvlink.nccl_proto=Simple", NULL};
    const char *ll[] = {"interconnect.nvlink.nccl_algo=Ring", "interconnect.nvlink.nccl_proto=LL", NULL};
    const char *simple2[] = {simple[0], simple[1], "hardware.devices=2", NULL};
    const char *ll2[] = {ll[0], ll[1], "hardware.devices=2", NULL};
    strata_hw *hs = hw_load(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", simple);
    strata_hw *hl = hw_load(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", ll);
    strata_serve_model m = preset("llama-3-8b");
    strata_serve_cost *cs = cost_new(hs, &m, 2, false, 16);
    strata_serve_cost *cl = cost_new(hl, &m, 2, false, 16);
    strata_serve_chunk one[1] = {{0, 1, 100, true}};
    coll_sweep_point ps, pl;
    ck_assert(coll_sweep_run(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", simple2, "all-reduce", 2, "dtype=bf16",
                             8192, &ps) && ps.ok && !strcmp(ps.lib_proto, "Simple"));
    ck_assert(coll_sweep_run(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", ll2, "all-reduce", 2, "dtype=bf16", 8192,
                             &pl) && pl.ok && !strcmp(pl.lib_proto, "LL"));
    double d = strata_serve_cost_step(cs, one, 1) - strata_serve_cost_step(cl, one, 1);
    double want = 64 * (ps.time_s - pl.time_s), closed = 64 * ((15.2 + 8192.0 / 360000.0) - (7.8 + 8192.0 / 141000.0));
    ck_assert_msg(fabs(d - want) <= 1e-9 * want, "%.17g vs %.17g", d, want);
    ck_assert_msg(fabs(d - closed * 1e-6) > 1e-3 * d, "%.17g", d);
    strata_serve_cost_free(cs);
    strata_serve_cost_free(cl);
    strata_hw_free(hs);
    strata_hw_free(hl);
}
END_TEST

/* A row whose NCCL_ALGO leaves the step's collective nothing to run is an
 * error at create time, naming --tp and the model. */
START_TEST(tp_collective_refused_when_nccl_runs_none)
{
    const char *nvls[] = {"interconnect.nvlink.nccl_algo=NVLS", "interconnect.nvlink.nccl_proto=LL", NULL};
    GError *err = NULL;
    strata_hw *hw = hw_load(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", nvls);
    strata_serve_model m = preset("llama-3-8b");
    ck_assert_ptr_null(strata_serve_cost_new(hw, &m, 2, false, 16, &err));
    ck_assert_msg(err && strstr(err->message, "--tp 2") && strstr(err->message, "all-reduce"), "%s",
                  err ? err->message : "");
    g_clear_error(&err);
    strata_hw_free(hw);
}
END_TEST

START_TEST(attention_dp_schedules_every_rank)
{
    /* the tiny model on dgx-h100 at TP2, 2 sequences and 8 tokens per rank; four requests (4 prompt, 1 out):
     * TP2 runs A and B (8 tokens), then C and D; attention dp runs both ranks' 4 sequences and 16 tokens
     * at once: one step. The KV per token is every head's (1 KV head: 32 B either way) */
    strata_serve_request req[4] = {{0, 4, 1}, {0, 4, 1}, {0, 4, 1}, {0, 4, 1}};
    strata_serve_stream s = {req, 4, 0, 0, NULL, 0, (char *)"four", NULL, NULL};
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "dgx-h100.ini", NULL);
    GError *err = NULL;
    strata_hw *hw = hw_load(path, NULL);
    strata_serve_model m = strata_test_serve_tiny();
    m.heads = 2; /* one a rank: TP2 splits the heads (serve_run.c tp_divides_heads); the KV head is replicated */
    for (int dp = 0; dp < 2; dp++) {
        strata_serve_config c;
        strata_serve_config_default(&c);
        c.tp = 2, c.attention_dp = dp, c.max_num_batched_tokens = 8, c.max_num_seqs = 2, c.block_size = 4;
        /* about 80 kB of pool a rank: hundreds of blocks, not 600 million; vLLM V1's rule charges cuBLAS's Hopper
         * workspace, 33,554,432 B, first (serve_holdings.h), of the driver's 84,943,715,697 B */
        c.gpu_memory_utilization = (80e3 + 33554432.0) / 84943715697.0;
        strata_serve_result *r = strata_serve_run(hw, &m, &c, &s, &strata_serve_kv_paged, NULL, &err);
        ck_assert_msg(r, "%s", err ? err->message : "");
        ck_assert_uint_eq(r->steps, dp ? 1 : 2);
        ck_assert_uint_eq(r->completed, 4);
        ck_assert_double_eq(r->batch_max, dp ? 4 : 2);
        ck_assert_uint_eq(r->kv_bytes_per_token, 32);
        strata_serve_result_free(r);
    }
    strata_hw_free(hw);
    g_free(path);
}
END_TEST

START_TEST(tiny_stream_step_by_step)
{
    /* budget 8 tokens, 2 sequences. A(10 prompt, 2 out), B(4, 1), C(4, 1), all at 0.
     * step 1: A's chunk of 8 (budget spent);
     * step 2: A's last 2 prompt tokens (samples), B's 4 (samples, done);
     * step 3: A's decode (done), C's 4 (done). Prefill 8 + 2 + 4 + 4 = 18, decode 1. */
    strata_serve_request req[3] = {{0, 10, 2}, {0, 4, 1}, {0, 4, 1}};
    strata_serve_result *r = strata_test_serve_tiny_run("1MiB", req, 3, NULL, false);
    ck_assert_uint_eq(r->steps, 3);
    ck_assert_uint_eq(r->completed, 3);
    ck_assert_uint_eq(r->prefill_tokens, 18);
    ck_assert_uint_eq(r->decode_tokens, 1);
    ck_assert_uint_eq(r->preemptions, 0);
    /* activations: 8 x (2 x 8 + 3 x 8 + 3 x 8) x 2 B + 2 x 8 x 8 B = 1,152 */
    ck_assert_uint_eq(r->weight_bytes, 1200);
    ck_assert_uint_eq(r->activation_bytes, 1152);
    ck_assert_uint_eq(r->pool_bytes, (1u << 20) - 1200 - 1152);
    strata_serve_result_free(r);
}
END_TEST

START_TEST(preemption_then_prefix_hit)
{
    /* capacity 2,800 B: pool 2800 - 1200 - 1152 = 448 B = 3 blocks of 4 tokens x 32 B.
     * A(4, 5) and B(4, 5). step 1: both prefill (one block each), both sample. step 2: A grows to 5 tokens
     * (its second block, the last free one); B cannot: B, the last admitted, is preempted (recompute) and its
     * full block stays cached. steps 3-5: A decodes (8 tokens, 2 blocks) while B's 4 cached tokens plus one
     * fresh block do not fit. step 6: A is done; B hits its block (4 tokens saved) and computes 1 token;
     * steps 7-9: B decodes. 9 steps, 1 preemption, 4 prefix-hit tokens. */
    strata_serve_request req[2] = {{0, 4, 5}, {0, 4, 5}};
    strata_serve_result *r = strata_test_serve_tiny_run("2800", req, 2, NULL, false);
    ck_assert_uint_eq(r->pool_bytes, 448);
    ck_assert_uint_eq(r->steps, 9);
    ck_assert_uint_eq(r->preemptions, 1);
    ck_assert_uint_eq(r->prefix_hit_tokens, 4);
    ck_assert_uint_eq(r->completed, 2);
    strata_serve_result_free(r);
    /* swap instead: B's one block goes to the host and back (one copy each way per tensor: 2 x 128 B) */
    r = strata_test_serve_tiny_run("2800", req, 2, NULL, true);
    ck_assert_uint_eq(r->swaps_out, 1);
    ck_assert_uint_eq(r->swaps_in, 1);
    ck_assert_uint_eq(r->swapped_bytes, 2 * 128);
    /* 2 x (2 copies x 1 us + 128 B / 16 GB/s) */
    ck_assert(fabs(r->host_link_busy_s - 2 * (2e-6 + 128 / 16e9)) < 1e-12);
    ck_assert_uint_eq(r->completed, 2);
    strata_serve_result_free(r);
}
END_TEST

START_TEST(azure_csv_and_poisson_streams)
{
    char *path = strata_test_write_temp("serve-XXXXXX.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                        "2023-11-16 18:17:03.9799600,4808,10\n"
                                        "2023-11-16 18:17:04.0319600,3180,8\n"
                                        "2024-05-10 00:00:00+00:00,5,1\n");
    GError *err = NULL;
    strata_serve_stream *s = strata_serve_stream_load(path, 2, &err);
    ck_assert_msg(s, "%s", err ? err->message : "");
    ck_assert_uint_eq(s->n, 2);
    ck_assert(fabs(s->req[1].arrival - 0.052) < 1e-9);
    ck_assert_uint_eq(s->req[0].prompt, 4808);
    ck_assert_uint_eq(s->req[1].output, 8);
    ck_assert(s->note == NULL); /* every column read, the limit within the rows */
    strata_serve_stream_free(s);
    g_unlink(path);
    g_free(path);
    /* A newer trace's added columns are read past with a note naming them;
     * a --limit past the rows serves them all and says so. */
    path = strata_test_write_temp("serve-XXXXXX.csv", "arrival_s,user,prompt_tokens,output_tokens,region\n"
                                  "0,u1,10,5,eu\n0.5,u2,12,3,us\n");
    s = strata_serve_stream_load(path, 5, &err);
    ck_assert_msg(s, "%s", err ? err->message : "");
    ck_assert_uint_eq(s->n, 2);
    ck_assert_uint_eq(s->req[1].prompt, 12);
    ck_assert_msg(s->note && strstr(s->note, "columns 'user', 'region' not read") &&
                  strstr(s->note, "--limit 5 is past the file's 2 requests"), "%s", s->note ? s->note : "(none)");
    strata_serve_stream_free(s);
    g_unlink(path);
    g_free(path);
    strata_serve_poisson p;
    ck_assert(strata_serve_poisson_parse("n=50,rate=2,prompt=100,output=20,dist=exp,seed=7", &p, &err));
    strata_serve_stream *a = strata_serve_stream_poisson(&p), *b = strata_serve_stream_poisson(&p);
    ck_assert_int_eq(memcmp(a->req, b->req, 50 * sizeof *a->req), 0);
    ck_assert(a->req[49].arrival > 0);
    strata_serve_stream_free(a);
    strata_serve_stream_free(b);
}
END_TEST

START_TEST(bad_input_names_file_and_line)
{
    char *path = strata_test_write_temp("serve-XXXXXX.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                        "2023-11-16 18:17:03.9799600,4808,10\n"
                                        "2023-11-16 18:17:04,x,8\n");
    strata_cli_result r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model",
                                          "llama-3-8b", "--requests", path, NULL);
    ck_assert_int_eq(r.status, 2);
    char *where = g_strdup_printf("%s:3: prompt tokens: expected a token count", path);
    ck_assert_msg(strstr(r.err, where), "%s", r.err);
    g_free(where);
    strata_cli_result_clear(&r);
    char *model = strata_test_write_temp("model-XXXXXX.ini", "layers = 2\nheads = four\n");
    r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model-file", model,
                        "--requests", path, NULL);
    ck_assert_int_eq(r.status, 2);
    where = g_strdup_printf("%s:2: heads: expected a whole number", model);
    ck_assert_msg(strstr(r.err, where), "%s", r.err);
    g_free(where);
    strata_cli_result_clear(&r);
    r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model", "llama-3-8b",
                        "--poisson", "n=4", "--kv", "nope", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "unknown scheme 'nope'"), "%s", r.err);
    strata_cli_result_clear(&r);
    g_unlink(path);
    g_unlink(model);
    g_free(path);
    g_free(model);
}
END_TEST

/* An option given 0 (or less) is refused by name, never read as "the
 * default" (before: --tp 0 ran on one rank, --limit 0 served every
 * request, --gpu-memory-utilization 0 took 0.9, exit 0); an Azure date that
 * is no date is refused at its line (before: 2023-02-31 ran as March 3rd),
 * and a leap day is still read. */
START_TEST(zero_options_and_impossible_dates_refused)
{
    static const struct {
        const char *option, *value, *message;
    } rows[] = {
        {"--tp", "0", "--tp: expected a whole number >= 1, got 0"},
        {"--tp", "-2", "--tp: expected a whole number >= 1, got -2"},
        {"--limit", "0", "--limit: expected a whole number >= 1, got 0"},
        {"--block-size", "0", "--block-size: expected a whole number >= 1, got 0"},
        {"--max-num-seqs", "0", "--max-num-seqs: expected a whole number >= 1, got 0"},
        {"--max-num-batched-tokens", "0", "--max-num-batched-tokens: expected a whole number >= 1, got 0"},
        {"--num-scheduler-steps", "0", "--num-scheduler-steps: expected a whole number >= 1, got 0"},
        {"--concurrency", "-1", "--concurrency: expected a whole number >= 0, got -1"},
        {"--shared-prefix", "-1", "--shared-prefix: expected a whole number >= 0, got -1"},
        {"--gpu-memory-utilization", "0", "--gpu-memory-utilization: expected a fraction in (0, 1]"},
        {"--gpu-memory-utilization", "nan", "--gpu-memory-utilization: expected a fraction in (0, 1]"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        strata_cli_result r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model",
                                              "llama-3-8b", "--poisson", "n=4", "-q", rows[i].option, rows[i].value,
                                              NULL);
        ck_assert_msg(r.status == 2 && strstr(r.err, rows[i].message), "row %zu: exit %d: %s", i, r.status, r.err);
        strata_cli_result_clear(&r);
    }
    static const char *const dates[] = {"2023-02-29", "2023-02-31", "2023-04-31", "1900-02-29"};
    for (size_t i = 0; i < G_N_ELEMENTS(dates); i++) {
        char *text = g_strdup_printf("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-01-01 00:00:00,5,5\n"
                                     "%s 00:00:00,5,5\n", dates[i]);
        char *path = strata_test_write_temp("serve-XXXXXX.csv", text);
        strata_cli_result r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model",
                                              "llama-3-8b", "--requests", path, "-q", NULL);
        char *where = g_strdup_printf("%s:3: TIMESTAMP: expected YYYY-MM-DD", path);
        ck_assert_msg(r.status == 2 && strstr(r.err, where), "%s: exit %d: %s", dates[i], r.status, r.err);
        strata_cli_result_clear(&r);
        g_unlink(path);
        g_free(where);
        g_free(path);
        g_free(text);
    }
    /* leap days are dates: 2024 (divisible by 4), 2000 (by 400) */
    static const char *const leap[] = {"2024-02-29", "2000-02-29"};
    for (size_t i = 0; i < G_N_ELEMENTS(leap); i++) {
        char *text = g_strdup_printf("TIMESTAMP,ContextTokens,GeneratedTokens\n%s 00:00:00,5,5\n"
                                     "%s 00:00:01,5,5\n", leap[i], leap[i]);
        char *path = strata_test_write_temp("serve-XXXXXX.csv", text);
        strata_cli_result r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model",
                                              "llama-3-8b", "--requests", path, "-q", NULL);
        ck_assert_msg(r.status == 0, "%s: exit %d: %s", leap[i], r.status, r.err);
        strata_cli_result_clear(&r);
        g_unlink(path);
        g_free(path);
        g_free(text);
    }
}
END_TEST

/* h100.ini quotes its rates at 1830 MHz and holds 1455 MHz under its power
 * limit: serve --clock sustained runs them at 1455 / 1830 = 0.795082
 * (clock_ratio), --clock peak at 1. A 4,096-token prefill of Llama-3-8B is mostly GEMMs at the
 * tensor cores' rate: it takes longer at the sustained clock, at most
 * 1830 / 1455 times as long (its memory-bound kernels keep their time);
 * the decode step of the same four requests is memory-bound throughout. */
static double serve_json_with(const char *clock, const char *key, const char *dir, const char *poisson,
                              const char *opt)
{
    char *json = g_build_filename(dir, "clock.json", NULL);
    strata_cli_result r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model",
                                          "llama-3-8b", "--poisson", poisson, "--clock", clock, "--json", json, "-q",
                                          opt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_file(p, json, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    double v = strcmp(key, "clock_ratio") == 0
                   ? json_object_get_double_member(o, key)
                   : json_object_get_double_member(
                         json_array_get_object_element(json_object_get_array_member(o, "runs"), 0), key);
    g_object_unref(p);
    strata_cli_result_clear(&r);
    g_free(json);
    return v;
}

static double serve_json_of(const char *clock, const char *key, const char *dir, const char *poisson)
{
    return serve_json_with(clock, key, dir, poisson, NULL);
}

static double serve_json(const char *clock, const char *key, const char *dir)
{
    return serve_json_of(clock, key, dir, "n=4,rate=0,prompt=1024,output=2,dist=fixed");
}

/* --clock duty, the default on h100.ini (clock_response 0.05 s, d0 0.7):
 * one 1,024-token prefill after idle time, about 22 ms of tensor-core work,
 * leaves the filter at 1 - e^-(0.022 / 0.05) = 0.36 or less, under 0.7:
 * it runs at the peak clock, its TTFT that of --clock peak; at --clock
 * sustained its compute-bound part takes 1830 / 1455 times as long. */
START_TEST(duty_clock_runs_a_lone_prefill_at_the_peak)
{
    char *dir = strata_test_temp_dir();
    const char *lone = "n=1,rate=0,prompt=1024,output=2,dist=fixed";
    double duty = serve_json_of("duty", "prefill_gpu_s", dir, lone);
    double peak = serve_json_of("peak", "prefill_gpu_s", dir, lone);
    double sus = serve_json_of("sustained", "prefill_gpu_s", dir, lone);
    ck_assert_double_eq_tol(duty, peak, 1e-12 * peak);
    ck_assert_msg(sus > peak * 1.15 && sus <= peak * 1830.0 / 1455.0 + 1e-12, "%g against %g", sus, peak);
    ck_assert_double_eq_tol(serve_json_of("duty", "clock_mean", dir, lone), 1.0, 1e-12);
    strata_cli_result r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model",
                                          "llama-3-8b", "--poisson", lone, NULL);
    ck_assert_msg(r.status == 0 && strstr(r.out, "clock            duty: compute-bound ops at x 1.000"), "%s", r.out);
    strata_cli_result_clear(&r);
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

START_TEST(sustained_and_peak_clocks)
{
    char *dir = strata_test_temp_dir();
    ck_assert_double_eq_tol(serve_json("sustained", "clock_ratio", dir), 1455.0 / 1830.0, 1e-12);
    ck_assert_double_eq(serve_json("peak", "clock_ratio", dir), 1.0);
    double slow = serve_json("sustained", "prefill_gpu_s", dir), fast = serve_json("peak", "prefill_gpu_s", dir);
    ck_assert_msg(slow > fast * 1.15 && slow <= fast * 1830.0 / 1455.0 + 1e-12, "%g against %g", slow, fast);
    /* the decode step of 4 requests streams weights: every op memory-bound, at the peak's clock either way */
    ck_assert_double_eq(serve_json("sustained", "decode_gpu_s", dir), serve_json("peak", "decode_gpu_s", dir));
    /* --serial-api-server (serve_frontend_queue.h, intake 7.014 ms > recv(2048) = 5.07952 + 2048 x 0.08 us =
     * 5.24336 ms: a request is handed on when its intake ends): the four are taken in at 0, 7.014, 14.028 and
     * 21.042 ms and reach the scheduler at 7.014, 14.028, 21.042 and 28.056 ms. Step 0 is A's 2,048-token prefill
     * alone, from 7.014 ms; D arrives 21.042 ms later. Step 0 lasts longer at either clock: its linear layers alone
     * are 2 x 6.979e9 (32 layers x (4096 x 10240 + 3 x 4096 x 14336), the parameters outside the embedding and the
     * LM head, which a prefill runs for its last token only) x 2048 = 2.859e13 FLOP, at least 28.9 ms at the
     * H100's 989.5 TFLOP/s (configs/hw/h100.ini, the peak's rate: no op runs faster), 7.9 ms past 21.042 ms. Step 1
     * B, C and D's 6,144 prompt tokens beside A's decode (6,145 <= max_num_batched_tokens 8,192; A done); step 2 the
     * decode-only step of B, C and D. Three steps at either clock, the decode-only step the same three sequences,
     * memory-bound: the same time. */
    const char *burst = "n=4,rate=0,prompt=2048,output=2,dist=fixed";
    for (int k = 0; k < 2; k++)
        ck_assert(serve_json_with(k ? "peak" : "sustained", "steps", dir, burst, "--serial-api-server") == 3);
    ck_assert_double_eq(serve_json_with("sustained", "decode_gpu_s", dir, burst, "--serial-api-server"),
                        serve_json_with("peak", "decode_gpu_s", dir, burst, "--serial-api-server"));
    strata_cli_result r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model",
                                          "llama-3-8b", "--poisson", "n=2", "--clock", "boost", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--clock: expected duty, sustained or peak, not 'boost'"), "%s", r.err);
    strata_cli_result_clear(&r);
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

START_TEST(cli_writes_valid_json_for_every_scheme)
{
    char *dir = strata_test_temp_dir(); /* private: test runs side by side share /tmp */
    char *json = g_build_filename(dir, "serve.json", NULL);
    strata_cli_result r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model",
                                          "llama-3-8b", "--poisson", "n=40,rate=4,prompt=300,output=50,dist=exp",
                                          "--kv", "all", "--json", json, "-q", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_file(p, json, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    ck_assert_uint_eq(json_array_get_length(json_object_get_array_member(o, "runs")), 6);
    ck_assert(strstr(r.out, "contiguous-max"));
    strata_cli_result_clear(&r);
    /* a sweep of two points, one scheme: two runs, labelled; the timeline is one JSON document */
    char *tl = g_build_filename(dir, "timeline.json", NULL);
    r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model", "llama-3-8b",
                        "--poisson", "n=20,rate=0,prompt=100,output=10", "--sweep", "max_num_seqs=4,8", "--json",
                        json, "--timeline", tl, "-q", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert(json_parser_load_from_file(p, json, NULL));
    JsonArray *runs = json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "runs");
    ck_assert_uint_eq(json_array_get_length(runs), 2);
    ck_assert_str_eq(json_object_get_string_member(json_array_get_object_element(runs, 1), "sweep"),
                     "max_num_seqs=8");
    ck_assert(json_object_get_double_member(json_array_get_object_element(runs, 0), "batch_max") == 4);
    ck_assert(json_parser_load_from_file(p, tl, NULL));
    strata_cli_result_clear(&r);
    r = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model", "llama-3-8b",
                        "--poisson", "n=2", "--sweep", "max_num_seqs=4,x", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--sweep: max_num_seqs: expected a whole number from 1"), "%s", r.err);
    g_object_unref(p);
    strata_cli_result_clear(&r);
    strata_test_remove_dir(dir);
    g_free(json);
    g_free(tl);
    g_free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve");
    TCase *tc = tcase_create("serve");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, kv_bytes_per_token_by_hand);
    tcase_add_test(tc, params_and_weights_by_hand);
    tcase_add_test(tc, config_json_gives_the_preset_shape);
    tcase_add_test(tc, sliding_window_blocks_freed_as_vllm_v1);
    tcase_add_test(tc, sliding_window_attention_reads_its_window);
    tcase_add_test(tc, mla_costed_as_vllm_runs_it);
    tcase_add_test(tc, engine_cpu_time_by_hand);
    tcase_add_test(tc, vllm_v05_host_time_by_hand);
    tcase_add_test(tc, names_lookup_messages);
    tcase_add_test(tc, pool_blocks_by_hand);
    tcase_add_test(tc, prefix_hits_and_lru_eviction);
    tcase_add_test(tc, page_growth_by_hand);
    tcase_add_test(tc, swap_time_over_the_link);
    tcase_add_test(tc, tiny_stream_step_by_step);
    tcase_add_test(tc, attention_dp_by_hand);
    tcase_add_test(tc, xqa_decode_by_hand);
    tcase_add_test(tc, xqa_v09_fp8_floor_by_hand);
    tcase_add_test(tc, mmha_v06_by_hand);
    tcase_add_test(tc, xqa_refuses_vanilla_mha_by_hand);
    tcase_add_test(tc, xqa_v07_by_hand);
    tcase_add_test(tc, tp_allreduce_is_nccl_models);
    tcase_add_test(tc, tp_collective_refused_when_nccl_runs_none);
    tcase_add_test(tc, attention_dp_schedules_every_rank);
    tcase_add_test(tc, prefill_step_packed_as_vllm_runs_it);
    tcase_add_test(tc, fp8_prefill_passes_by_hand);
    tcase_add_test(tc, qk_norm_pass_by_hand);
    tcase_add_test(tc, fa3_prefill_bytes_by_hand);
    tcase_add_test(tc, engine_fa3_prefill_bytes_by_hand);
    tcase_add_test(tc, fa2_attention_as_vllm_0_6_by_hand);
    tcase_add_test(tc, moe_experts_one_grouped_kernel_per_weight);
    tcase_add_test(tc, moe_fused_op_bytes_and_kernels_by_hand);
    tcase_add_test(tc, moe_call_bytes_by_hand);
    tcase_add_test(tc, moe_fp8_width_192_runs_whole_k_blocks);
    tcase_add_test(tc, preemption_then_prefix_hit);
    tcase_add_test(tc, azure_csv_and_poisson_streams);
    tcase_add_test(tc, bad_input_names_file_and_line);
    tcase_add_test(tc, zero_options_and_impossible_dates_refused);
    tcase_add_test(tc, cli_writes_valid_json_for_every_scheme);
    tcase_add_test(tc, sustained_and_peak_clocks);
    tcase_add_test(tc, duty_clock_runs_a_lone_prefill_at_the_peak);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
