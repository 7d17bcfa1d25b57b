/*
 * test_serve_mla_kernels_v07.c: vLLM 0.7.3 V0's DeepSeek decoder layer kernels beyond serve_cost.c's ops
 * (sim/serve/serve_mla_kernels_v07.h), against values derived by hand: the kernels a layer and a step add, no host
 * chain (V0 replays the whole decode in one CUDA graph), and a DeepSeek-V3 decode step of one request at TP8 on an
 * HGX H200 under the vllm-v0 engine row with and without the row.
 */
#include <math.h>
#include <string.h>
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
#include "serve/serve_mla_kernels.h"
#include "testutil.h"
#include "serve_fixture.h"

#define HW_FILE(name) STRATA_SOURCE_DIR "/configs/hw/" name

/* vllm-0.7-v0-mla, by where they run: every layer 1 (the second add + RMSNorm) + 1 (kv_a's GEMM) + 1 (kv_a's
 * quantization) + 1 (the second latent norm) + 1 (kv_c.contiguous()) + RoPE 3 + 5 + 5 + 1 (concat_and_cache_mla)
 * + 1 (torch.cat) + 1 (torch.zeros) + 1 (the split-KV reduction) = 22; an MoE layer 7 (grouped_topk) + 1 (the
 * alignment's fourth kernel) + 1 (the scaling) + 1 (the shared add) = 10 more; nothing in a dense layer or once a
 * step. One MoE layer 32, one dense 22; DeepSeek-V3 (61 layers, 58 MoE): 22 x 61 + 10 x 58 = 1,342 + 580 = 1,922;
 * a BF16 model runs no kv_a quantization: 1,922 - 61 = 1,861. */
START_TEST(kernels_a_layer_and_a_step_by_hand)
{
    GError *err = NULL;
    const strata_serve_mla_kernels *v = strata_serve_mla_kernels_find("vllm-0.7-v0-mla", &err);
    ck_assert_msg(v, "%s", err ? err->message : "");
    ck_assert_uint_eq(strata_serve_mla_kernels_count(v, 1, 1, true), 32);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(v, 1, 0, true), 22);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(v, 61, 58, true), 1922);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(v, 61, 58, false), 1861);
    ck_assert_double_eq(strata_serve_mla_kernels_host(v, 61, 58, true), 0.0);
    ck_assert_ptr_eq(strata_serve_mla_kernels_on_blackwell(v), v);
}
END_TEST

/* A DeepSeek-V3 block-FP8 decode of one request (context 2,000, TP8: 16 heads a rank, hidden 7,168, kv_lora 512,
 * rope 64, 256 experts) under vllm-v0 on hgx-h200, less the same without the row: 1,922 kernels at 3 us
 * (kernel_launch) and each entry's elements x (2 B read + 2 B written, or 1 into FP8) at 0.9 x 4.8 TB/s. A layer:
 * the add + RMSNorm 7,168 x 4 = 28,672; kv_a's GEMM a launch only; its quantization 7,168 x 3 = 21,504; the latent
 * norm and copy 2 x 512 x 4 = 4,096; RoPE 3 x 64 x 4 = 768, 5 x 1,024 x 4 = 20,480, 5 x 64 x 4 = 1,280; the cache
 * row 576 x 4 = 2,304; the cat 9,216 x 4 = 36,864; the zeros 8,192 x 4 = 32,768; the reduction reads the split-KV
 * partials stage 1 wrote, 16 heads x 4 splits x (512 + 1) = 32,832 fp32 x (4 + 4) = 262,656: 411,392 x 61 =
 * 25,094,912. An MoE layer: grouped_topk 7 x 256 x 4 = 7,168, the alignment a launch only, the scaling and the
 * add 2 x 28,672: 64,512 x 58 = 3,741,696. In all 28,836,608 B. */
START_TEST(deepseek_step_at_batch_one_by_hand)
{
    ck_assert_double_eq_tol(strata_test_deepseek_row_adds(HW_FILE("hgx-h200.ini"), "vllm-v0"),
                            1922 * 3e-6 + 28836608.0 / (0.9 * 4.8e12), 1e-10);
}
END_TEST

/* The split-KV partials scale with the batch (triton_mla.py:720-732: attn_logits is [B, heads, 4, kv_lora + 1]):
 * the reduction's entry at 128 decodes, TP8 (16 heads a rank), kv_lora 512: 128 x 16 x 4 x 513 = 4,202,496
 * elements, x 8 B = 33,619,968 B, one kernel a layer over 61 layers; at TP1 (128 heads) 8 x that. */
START_TEST(split_kv_partials_by_hand)
{
    const strata_serve_mla_kernels *v = strata_serve_mla_kernels_find("vllm-0.7-v0-mla", NULL);
    strata_serve_mla_shape sh = {.layers = 61, .moe_layers = 58, .hidden = 7168, .kv_lora = 512, .rope = 64,
                                 .heads = 16, .v_head = 128, .experts = 256, .act_bytes = 2, .nope = 128,
                                 .block_fp8 = true};
    uint32_t i = 0;
    while (i < v->n_entries && v->entries[i].width != SERVE_MLA_W_KV_SPLITS4_F32)
        i++;
    ck_assert_uint_lt(i, v->n_entries);
    strata_serve_mla_pass p = strata_serve_mla_kernels_pass(v, i, &sh, 128);
    ck_assert_uint_eq(p.times, 61);
    ck_assert_uint_eq(p.elements, 4202496);
    ck_assert_double_eq_tol(p.bytes, 33619968.0, 1e-6);
    sh.heads = 128;
    ck_assert_double_eq_tol(strata_serve_mla_kernels_pass(v, i, &sh, 128).bytes, 8 * 33619968.0, 1e-6);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_mla_kernels_v07");
    TCase *tc = tcase_create("serve_mla_kernels_v07");
    tcase_add_test(tc, kernels_a_layer_and_a_step_by_hand);
    tcase_add_test(tc, deepseek_step_at_batch_one_by_hand);
    tcase_add_test(tc, split_kv_partials_by_hand);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
