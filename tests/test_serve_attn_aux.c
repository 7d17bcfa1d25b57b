/*
 * test_serve_attn_aux.c: the kernels vLLM 0.6.0 and SGLang 0.3.0 run
 * around a layer's attention (serve_attn_aux.h), their elements and bytes
 * by hand, and a decode step's time through the serving cost.
 *
 * Llama-3-8B on one rank: 32 query heads, 8 KV heads of 128, bf16
 * activations (2 bytes), the cache bf16 (2) or FP8 (1).
 */
#include <math.h>
#include <string.h>
#include "serve/serve_attn_aux.h"
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
#include "testutil.h"

static const strata_serve_attn_aux *row(const char *name)
{
    GError *err = NULL;
    const strata_serve_attn_aux *a = strata_serve_attn_aux_find(name, &err);
    ck_assert_msg(a, "%s", err ? err->message : "");
    return a;
}

static strata_serve_aux_cost pass(const strata_serve_attn_aux *a, uint32_t i, uint64_t p, uint64_t d, uint64_t ctx,
                                  double cache)
{
    return strata_serve_attn_aux_pass(a, i, p, d, ctx, 32, 8, 128, 2.0, cache);
}

/* vLLM 0.6.0: a prefill of 462 tokens, no decodes. rotary_embedding reads
 * and writes q and k: 462 x (32 + 8) x 128 = 2,365,440 elements, 4 bytes
 * each (bf16 in, bf16 out): 9,461,760; reshape_and_cache_flash k and v:
 * 462 x 16 x 128 = 946,176, 3,784,704 bytes (FP8 cache: 2 + 1 a element,
 * 2,838,528); the prefill output copy 462 x 32 x 128 = 1,892,352,
 * 7,569,408 bytes; the decode copy nothing. 256 decodes, no prefill:
 * rotary 256 x 40 x 128 = 1,310,720, the cache write 256 x 16 x 128 =
 * 524,288, the prefill copy nothing, the decode copy 256 x 32 x 128 =
 * 1,048,576. */
START_TEST(vllm_passes_by_hand)
{
    const strata_serve_attn_aux *v = row("vllm-0.6-flash-attn");
    ck_assert_uint_eq(v->n_passes, 4);
    const uint64_t prefill[] = {2365440, 946176, 1892352, 0};
    const double prefill_bytes[] = {9461760, 3784704, 7569408, 0};
    const uint64_t decode[] = {1310720, 524288, 0, 1048576};
    for (uint32_t i = 0; i < 4; i++) {
        strata_serve_aux_cost a = pass(v, i, 462, 0, 462, 2.0), b = pass(v, i, 0, 256, 0, 2.0);
        ck_assert_uint_eq(a.elements, prefill[i]);
        ck_assert_double_eq(a.bytes, prefill_bytes[i]);
        ck_assert_uint_eq(b.elements, decode[i]);
        ck_assert_double_eq(b.bytes, 4.0 * (double)decode[i]);
    }
    ck_assert_double_eq(pass(v, 1, 462, 0, 462, 1.0).bytes, 2838528.0);
    ck_assert_uint_eq(pass(v, 4, 462, 0, 462, 2.0).elements, 0); /* no fifth pass */
}
END_TEST

/* SGLang 0.3.0: a prefill batch whose sequence lengths sum to 4,096 takes
 * FlashInfer's paged path (q.contiguous() alone: 462 x 32 x 128 =
 * 1,892,352); at 4,097 the ragged path also copies k and v (462 x 8 x 128
 * = 473,088 each). The two index_put kernels write k and v (473,088
 * each); decodes copy q (256 x 32 x 128 = 1,048,576). */
START_TEST(sglang_ragged_above_4096)
{
    const strata_serve_attn_aux *g = row("sglang-0.3-flashinfer");
    ck_assert_uint_eq(g->n_passes, 7);
    const uint64_t paged[] = {2365440, 473088, 473088, 0, 1892352, 0, 0};
    const uint64_t ragged[] = {2365440, 473088, 473088, 0, 1892352, 473088, 473088};
    const uint64_t decode[] = {1310720, 262144, 262144, 1048576, 0, 0, 0};
    for (uint32_t i = 0; i < 7; i++) {
        ck_assert_uint_eq(pass(g, i, 462, 0, 4096, 2.0).elements, paged[i]);
        ck_assert_uint_eq(pass(g, i, 462, 0, 4097, 2.0).elements, ragged[i]);
        ck_assert_uint_eq(pass(g, i, 0, 256, 0, 2.0).elements, decode[i]);
    }
}
END_TEST

/* SGLang 0.4.0: the ragged path when the step's prefill tokens
 * (extend_num_tokens) reach 4,096, whatever their contexts: 4,096 prefill
 * tokens copy k and v (4,096 x 8 x 128 = 4,194,304 each) at a context sum
 * of 4,096; 4,095 do not, even at contexts of 10,000 (where the 0.3 row,
 * which counts contexts, would: 4,095 x 8 x 128 = 4,193,280). The other
 * passes as the 0.3 row's. */
START_TEST(sglang_v04_ragged_at_4096_prefill_tokens)
{
    const strata_serve_attn_aux *g = row("sglang-0.4-flashinfer"), *g3 = row("sglang-0.3-flashinfer");
    ck_assert_uint_eq(g->n_passes, 7);
    for (uint32_t i = 5; i < 7; i++) {
        ck_assert_uint_eq(pass(g, i, 4096, 0, 4096, 2.0).elements, 4194304);
        ck_assert_uint_eq(pass(g, i, 4095, 0, 10000, 2.0).elements, 0);
        ck_assert_uint_eq(pass(g3, i, 4095, 0, 10000, 2.0).elements, 4193280);
        ck_assert_uint_eq(pass(g3, i, 4096, 0, 4096, 2.0).elements, 0);
    }
    for (uint32_t i = 0; i < 5; i++) {
        ck_assert_uint_eq(pass(g, i, 462, 0, 4096, 2.0).elements, pass(g3, i, 462, 0, 4096, 2.0).elements);
        ck_assert_uint_eq(pass(g, i, 0, 256, 0, 2.0).elements, pass(g3, i, 0, 256, 0, 2.0).elements);
    }
}
END_TEST

/* The engines name their rows; an unknown name is refused. */
START_TEST(engines_name_their_rows)
{
    ck_assert_str_eq(strata_serve_engine_find("vllm-v0", NULL)->attn_aux, "vllm-0.6-flash-attn");
    ck_assert_str_eq(strata_serve_engine_find("sglang-v0.3", NULL)->attn_aux, "sglang-0.3-flashinfer");
    ck_assert_str_eq(strata_serve_engine_find("sglang-v0.4", NULL)->attn_aux, "sglang-0.4-flashinfer");
    ck_assert_ptr_null(strata_serve_engine_find("trtllm", NULL)->attn_aux);
    ck_assert_ptr_null(strata_serve_engine_find("none", NULL)->attn_aux);
    GError *err = NULL;
    ck_assert_ptr_null(strata_serve_attn_aux_find("tgi", &err));
    ck_assert_msg(err && strstr(err->message, "vllm-0.6-flash-attn"), "%s", err ? err->message : "");
    g_error_free(err);
}
END_TEST

/* A decode step of 256 requests (context 500) of Llama-3-8B on one H100:
 * without a row no kernel runs around the decode attention; with vLLM
 * 0.6.0's, three a layer, each its bytes at 0.9 x 3.35 TB/s plus the 3 us
 * kernel launch (h100.ini): rotary 5,242,880 bytes, the cache write
 * 2,097,152, the output copy 4,194,304: 11,534,336 / 3.015e12 =
 * 3.825650 us + 9 us = 12.825650 us a layer, 410.420813 us for 32. */
START_TEST(decode_step_adds_them)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(STRATA_SOURCE_DIR "/configs/hw/h100.ini", NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    strata_serve_model m;
    ck_assert(strata_serve_model_preset(&m, "llama-3-8b", NULL));
    strata_serve_cost *c = strata_serve_cost_new(hw, &m, 1, false, 512, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    strata_serve_chunk *d = g_new(strata_serve_chunk, 256);
    for (uint32_t i = 0; i < 256; i++)
        d[i] = (strata_serve_chunk){i, 1, 500, true};
    double plain = strata_serve_cost_step(c, d, 256);
    strata_serve_cost_set_attn_aux(c, row("vllm-0.6-flash-attn"));
    double with = strata_serve_cost_step(c, d, 256);
    double expect = 32.0 * (11534336.0 / (0.9 * 3.35e12) + 3 * 3e-6);
    ck_assert_msg(fabs(with - plain - expect) < 1e-12, "%.17g vs %.17g", with - plain, expect);
    ck_assert_msg(fabs(expect - 410.420813e-6) < 1e-12, "%.17g", expect);
    g_free(d);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_attn_aux");
    TCase *tc = tcase_create("serve_attn_aux");
    tcase_add_test(tc, vllm_passes_by_hand);
    tcase_add_test(tc, sglang_ragged_above_4096);
    tcase_add_test(tc, sglang_v04_ragged_at_4096_prefill_tokens);
    tcase_add_test(tc, engines_name_their_rows);
    tcase_add_test(tc, decode_step_adds_them);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
