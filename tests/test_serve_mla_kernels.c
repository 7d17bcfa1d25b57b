/*
 * test_serve_mla_kernels.c: the DeepSeek decoder layer's kernels beyond
 * serve_cost.c's ops as vLLM 0.8 V1 and SGLang 0.4.5 launch them
 * (sim/serve/serve_mla_kernels.h), against values derived by hand: the
 * kernels a layer and a step add, the host chain of V1's eager attention
 * op, and a DeepSeek-V3 decode step of one request at TP8 on an HGX H200
 * with and without vLLM's row, and under each engine's row as
 * serve_engine.c names it.
 */
#include <math.h>
#include <string.h>
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
#include "serve/serve_mla_kernels.h"
#include "serve/serve_model.h"
#include "testutil.h"
#include "serve_fixture.h"

#define HW_FILE(name) STRATA_SOURCE_DIR "/configs/hw/" name
#define ROW_ADDS strata_test_deepseek_row_adds

/* vllm-0.8-mla, by where they run: every layer 1 (the second add +
 * RMSNorm) + 1 (kv_a's GEMM) + 2 (two quantizations) + 1 (the second
 * latent norm) + RoPE 3 (q_pe's .contiguous() copy, forward_cuda's one
 * ops.rotary_embedding, the rotated q copied back; k_pe's copy back is a
 * self-copy, no kernel) + 1 (concat_and_cache_mla) + 1 (cat) +
 * 1 (FlashMLA's combine) + 1 (W_UV's reshape copy) + 1 (the output copy)
 * = 13; an MoE layer 7 (grouped_topk) + 1 + 1 = 9 more; a dense layer 1
 * (gate_up's quantization); a step 1 (get_mla_metadata). One MoE layer:
 * 13 + 9 + 1 = 23; one dense: 13 + 1 + 1 = 15. DeepSeek-V3 (61 layers,
 * 58 MoE): 13 x 61 + 9 x 58 + 1 x 3 + 1 = 793 + 522 + 3 + 1 = 1,319 (wave
 * 34's PyTorch-ops RoPE, 3 + 5 + 5 + 2 = 15 a layer, gave 2,051).
 * sglang-0.4.5-mla: every layer 1 + 1 + 1 (kv_a's quantization only) + 1
 * + 2 (the latent's copies) + 12 + 12 (input_to_float8 twice) + 1
 * (q_input) + 3 + 5 + 5 + 2 (RoPE and its copies) + 1 (set_kv_buffer) + 1
 * (the combine) + 1 (the output copy) = 49, an MoE layer 9 more:
 * 49 x 61 + 9 x 58 = 2,989 + 522 = 3,511. */
START_TEST(kernels_a_layer_and_a_step_by_hand)
{
    GError *err = NULL;
    const strata_serve_mla_kernels *v = strata_serve_mla_kernels_find("vllm-0.8-mla", &err);
    const strata_serve_mla_kernels *s = strata_serve_mla_kernels_find("sglang-0.4.5-mla", &err);
    ck_assert_msg(v && s, "%s", err ? err->message : "");
    ck_assert_uint_eq(strata_serve_mla_kernels_count(v, 1, 1, true), 23);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(v, 1, 0, true), 15);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(v, 61, 58, true), 1319);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(s, 61, 58, true), 3511);
    /* a BF16 model runs no FP8 input quantization: vLLM's two a layer and a dense layer's one, 1,319 - 122 - 3
     * = 1,194; SGLang 0.4.5's kv_a quantization and the two input_to_float8, 3,511 - 25 x 61 = 1,986 */
    ck_assert_uint_eq(strata_serve_mla_kernels_count(v, 61, 58, false), 1194);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(s, 61, 58, false), 1986);
    ck_assert_ptr_null(strata_serve_mla_kernels_find("vllm-0.9-mla", &err));
    ck_assert_msg(err && strstr(err->message, "vllm-0.8-mla"), "the error lists the known rows");
    g_clear_error(&err);
}
END_TEST

/* vLLM V1's eager attention op, a layer: its call and the next piece's
 * graph replay 2 x 10 us, two Triton quantizations 2 x 11 us, and 13
 * PyTorch operators at 4 us (q_b's and o's GEMMs, two bmm and
 * flash_mla_with_kvcache: 5; RoPE 4: .contiguous(), ops.rotary_embedding
 * through the dispatcher, and the two [...] = assignments, the k one
 * dispatched though it launches nothing; the cache write, the cat, the
 * reshape and the output copy: 4): 20 + 22 + 52 = 94 us; 61 layers and
 * get_mla_metadata's 4 us: 5,734 + 4 = 5,738 us. SGLang's
 * decode runs in one CUDA graph: 0. */
START_TEST(host_chain_by_hand)
{
    const strata_serve_mla_kernels *v = strata_serve_mla_kernels_find("vllm-0.8-mla", NULL);
    const strata_serve_mla_kernels *s = strata_serve_mla_kernels_find("sglang-0.4.5-mla", NULL);
    ck_assert_double_eq_tol(strata_serve_mla_kernels_host(v, 61, 58, true), 5.738e-3, 1e-12);
    ck_assert_double_eq_tol(strata_serve_mla_kernels_host(s, 61, 58, true), 0.0, 1e-15);
    /* BF16 weights: no Triton quantization before q_b and o, 5.738 - 61 x 22 us = 4.396 ms */
    ck_assert_double_eq_tol(strata_serve_mla_kernels_host(v, 61, 58, false), 4.396e-3, 1e-12);
}
END_TEST

/* One decode (context 2,000) of DeepSeek-V3 FP8 at TP8 on hgx-h200
 * (kernel_launch 3 us, HBM 4.8 TB/s at stream_efficiency 0.9, bf16
 * activations): vLLM's row adds its 1,319 kernels at 3 us, 3.957 ms, plus
 * their bytes at one token (16 heads a rank; each entry's kernels x its
 * width x (2 + 2 B, or 2 + 1 into FP8)): the norms 61 x 7,168 x 4 =
 * 1,748,992; the quantizations 122 x 7,168 x 3 = 2,623,488; the latent
 * norms 61 x 512 x 4 = 124,928; grouped_topk 406 x 256 x 4 = 415,744;
 * scaling and sum 116 x 28,672 = 3,325,952; the dense quantizations 3 x
 * 21,504 = 64,512; RoPE: q_pe's copy 61 x 1,024 x 4 = 249,856, the fused
 * kernel on q and k 61 x (16 + 1) x 64 x 4 = 265,472, the copy back
 * 249,856: 765,184; the cache write 61
 * x 576 x 4 = 140,544; the cat 61 x 9,216 x 4 = 2,248,704; the combine 61 x
 * 8,192 x 4 = 1,998,848; the reshape 61 x 2,048 x 4 = 499,712; the output
 * copy 1,748,992: 15,705,600 B / (0.9 x 4.8e12 B/s) = 3.635 us; 3.960635
 * ms in all (the two launch-only entries' one vector op each, 15 fs, below
 * the tolerance). The host's 5.738 ms is shorter than the GPU's step, so
 * the step is the GPU's: with the row less without it is that sum. */
START_TEST(deepseek_step_at_batch_one_by_hand)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw("hgx-h200", NULL);
    strata_serve_model m = strata_test_deepseek_v3(true, true);
    strata_serve_chunk d = strata_test_decode_2000();
    strata_serve_cost *c = strata_test_tp8_cost(hw, &m);
    double without = strata_serve_cost_step(c, &d, 1);
    const strata_serve_mla_kernels *v = strata_serve_mla_kernels_find("vllm-0.8-mla", &err);
    strata_serve_cost_set_mla_kernels(c, v);
    double with = strata_serve_cost_step(c, &d, 1);
    ck_assert_double_eq_tol(with - without, 1319 * 3e-6 + 15705600.0 / (0.9 * 4.8e12), 1e-10);
    ck_assert(with > strata_serve_mla_kernels_host(v, 61, 58, true));
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* The host's eager chain where it is the longer (mla_step's fmax, the
 * branch the step above does not reach): the same decode on hgx-h200 with
 * no launch cost (kernel_launch = 0) and HBM at 1 PB/s, so the GPU's step
 * (its weights' bytes at 0.9 PB/s, the all-reduces' latencies; asserted
 * below the chain) is under the host's 5,738 us (host_chain_by_hand): the
 * step with vLLM's row is that chain, 5.738 ms, whatever the GPU's time;
 * without the row (no eager chain) it is the GPU's, below it. A step that
 * added the chain to the GPU's, or took the GPU's alone, fails. */
START_TEST(host_chain_binds_on_a_fast_gpu)
{
    const char *const fast[] = {"compute.sm.kernel_launch=0", "memory.hbm.bandwidth=1PB/s", NULL};
    strata_hw *hw = strata_test_load_hw("hgx-h200", fast);
    strata_serve_model m = strata_test_deepseek_v3(true, true);
    strata_serve_chunk d = strata_test_decode_2000();
    strata_serve_cost *c = strata_test_tp8_cost(hw, &m);
    double without = strata_serve_cost_step(c, &d, 1);
    strata_serve_cost_set_mla_kernels(c, strata_serve_mla_kernels_find("vllm-0.8-mla", NULL));
    double with = strata_serve_cost_step(c, &d, 1);
    ck_assert_double_lt(without, 5.738e-3);
    ck_assert_double_eq_tol(with, 5.738e-3, 1e-12);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* A GQA model (no kv_lora_rank) takes no MLA row: Llama-3-8B's step is
 * the same with the row set. */
START_TEST(gqa_model_takes_no_mla_row)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw("hgx-h200", NULL);
    strata_serve_model m;
    ck_assert(strata_serve_model_preset(&m, "llama-3-8b", &err));
    strata_serve_chunk d = {.id = 0, .tokens = 1, .context = 2000, .samples = true};
    strata_serve_cost *c = strata_serve_cost_new(hw, &m, 1, false, 8192, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    double without = strata_serve_cost_step(c, &d, 1);
    strata_serve_cost_set_mla_kernels(c, strata_serve_mla_kernels_find("vllm-0.8-mla", NULL));
    ck_assert_double_eq(strata_serve_cost_step(c, &d, 1), without);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* A DeepSeek-V3 decode of one request (context 2,000, TP8) under an
 * engine's row, less the same with its MLA kernels taken off again. vLLM
 * V1 (no --engine) on hgx-h200: 3.960635 ms, as above. sglang-v0.4: 3,511
 * kernels at 3 us and, at one token, every layer's 654,592 B (the norm
 * 28,672, kv_a's quantization 21,504, the latent norms 2,048 and copies
 * 4,096, input_to_float8 before W_UK on q_nope 12 x 16 x 128 x 4 = 98,304
 * and before W_UV on the latent 12 x 16 x 512 x 4 = 393,216, q_input
 * 32,768, RoPE 768 + 20,480 + 1,280 + 8,192 = 30,720, the cache row 2,304,
 * the combine 32,768, the output copy 8,192: 654,592) x 61 = 39,930,112
 * and an MoE layer's 7 x 1,024 + 2 x 28,672 = 64,512 x 58 = 3,741,696:
 * 43,671,808 B / (0.9 x 4.8e12 B/s) = 10.109 us; 10.543109 ms in all (its
 * decode runs in one
 * CUDA graph: no host chain). On mi300x-8 (RCCL: vLLM's ROCm build, which
 * runs no FlashMLA) vLLM V1's row is not set: 0. */

START_TEST(engine_rows_name_their_kernels)
{
    ck_assert_double_eq_tol(ROW_ADDS(HW_FILE("hgx-h200.ini"), NULL),
                            1319 * 3e-6 + 15705600.0 / (0.9 * 4.8e12), 1e-10);
    ck_assert_double_eq_tol(ROW_ADDS(HW_FILE("hgx-h200.ini"), "sglang-v0.4"),
                            3511 * 3e-6 + 43671808.0 / (0.9 * 4.8e12), 1e-10);
    ck_assert_double_eq_tol(ROW_ADDS(HW_FILE("mi300x-8.ini"), NULL), 0.0, 1e-15);
}
END_TEST

/* SGLang 0.5.6's rows (serve_mla_kernels_sgl05.c), a layer by hand. sglang-0.5-mla (Hopper, fa3): every layer
 * 3 + 3 (per_tensor_quant_mla_fp8 before W_UK and W_UV: zeros, stage1, stage2) + 1 (RoPE) + 1 (set_mla_kv_buffer)
 * + 1 (FA3's combine) + 1 (the output copy) = 10, none in an MoE layer alone: DeepSeek-V3 61 x 10 = 610; BF16
 * weights run only RoPE, the cache write and the combine: 61 x 3 = 183. sglang-0.5-mla-sm100 (trtllm_mla): 3 + 3 +
 * 1 + 1 + 1 (the query's concat) + 1 (seq_lens to int32) + 1 (the output copy) = 11, an MoE layer 1 more (the
 * shared expert's add): one MoE layer 12, 61 x 11 + 58 = 729; BF16: 1 + 1 + 1 + 1 a layer + 58 = 302. The Hopper
 * row names the Blackwell one. */
START_TEST(sglang05_rows_by_hand)
{
    GError *err = NULL;
    const strata_serve_mla_kernels *h = strata_serve_mla_kernels_find("sglang-0.5-mla", &err);
    ck_assert_msg(h, "%s", err ? err->message : "");
    const strata_serve_mla_kernels *b = strata_serve_mla_kernels_on_blackwell(h);
    ck_assert_str_eq(b->name, "sglang-0.5-mla-sm100");
    ck_assert_ptr_eq(strata_serve_mla_kernels_on_blackwell(b), b);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(h, 1, 1, true), 10);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(h, 61, 58, true), 610);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(h, 61, 58, false), 183);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(b, 1, 1, true), 12);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(b, 1, 0, true), 11);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(b, 61, 58, true), 729);
    ck_assert_uint_eq(strata_serve_mla_kernels_count(b, 61, 58, false), 302);
    ck_assert_double_eq(strata_serve_mla_kernels_host(b, 61, 58, true), 0.0);
}
END_TEST

/* A DeepSeek-V3 block-FP8 decode of one request (context 2,000, TP8: 16 heads a rank, nope 128, rope 64, kv_lora
 * 512, v 128) under sglang-v0.5, less the same without its MLA rows. On hgx-h200 (sglang-0.5-mla): 610 kernels at
 * 3 us and a layer's bytes at one token, each kernel's elements x (2 B read + 2 B written, or 1 into FP8): the W_UK
 * quantization 3 x 2,048 x 3 = 18,432, W_UV's 3 x 8,192 x 3 = 73,728, RoPE 1,024 x 4 = 4,096, the cache row 576 x
 * 4 = 2,304, the combine 8,192 x 4 = 32,768, the output copy 2,048 x 4 = 8,192: 139,520 x 61 = 8,510,720 B at 0.9
 * x 4.8 TB/s. On hgx-b200 (its NCCL row names Blackwell: sglang-0.5-mla-sm100): 729 kernels at 3 us (kernel_launch
 * from its H100 base) and 18,432 + 73,728 + 4,096 + 2,304 + the query's concat 9,216 x 4 = 36,864 + seq_lens's
 * cast 0 + 8,192 = 143,616 x 61 = 8,760,576, the MoE add 7,168 x 4 = 28,672 x 58 = 1,662,976: 10,423,552 B at 0.9
 * x 7.67 TB/s. sglang-v0.4 on hgx-b200 keeps 0.4.5's row (3,511 kernels, as on the H200 above). */
START_TEST(sglang05_step_at_batch_one_by_hand)
{
    ck_assert_double_eq_tol(ROW_ADDS(HW_FILE("hgx-h200.ini"), "sglang-v0.5"),
                            610 * 3e-6 + 8510720.0 / (0.9 * 4.8e12), 1e-10);
    ck_assert_double_eq_tol(ROW_ADDS(HW_FILE("hgx-b200.ini"), "sglang-v0.5"),
                            729 * 3e-6 + 10423552.0 / (0.9 * 7.67e12), 1e-10);
    ck_assert_double_eq_tol(ROW_ADDS(HW_FILE("hgx-b200.ini"), "sglang-v0.4"),
                            3511 * 3e-6 + 43671808.0 / (0.9 * 7.67e12), 1e-10);
}
END_TEST

/* A BF16 DeepSeek-V3 (no FP8 weights) under sglang-v0.4 on hgx-h200 runs none of 0.4.5's FP8 quantizations:
 * 1,986 kernels at 3 us and a layer's 654,592 B less kv_a's quantization 21,504 and input_to_float8's 98,304 +
 * 393,216: 141,568 x 61 = 8,635,648, plus the MoE layers' 3,741,696: 12,377,344 B at 0.9 x 4.8 TB/s. */
START_TEST(bf16_mla_model_runs_no_fp8_quantization)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw("hgx-h200", NULL);
    strata_serve_model m;
    ck_assert_msg(strata_serve_model_preset(&m, "deepseek-v3", &err), "%s", err ? err->message : "");
    ck_assert_msg(strata_serve_model_set(&m, "kv_dtype", "bf16", &err), "%s", err ? err->message : "");
    strata_serve_chunk d = strata_test_decode_2000();
    strata_serve_cost *c = strata_test_tp8_cost(hw, &m);
    double without = strata_serve_cost_step(c, &d, 1);
    strata_serve_cost_set_mla_kernels(c, strata_serve_mla_kernels_find("sglang-0.4.5-mla", NULL));
    ck_assert_double_eq_tol(strata_serve_cost_step(c, &d, 1) - without, 1986 * 3e-6 + 12377344.0 / (0.9 * 4.8e12),
                            1e-10);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_mla_kernels");
    TCase *tc = tcase_create("serve_mla_kernels");
    tcase_add_test(tc, kernels_a_layer_and_a_step_by_hand);
    tcase_add_test(tc, host_chain_by_hand);
    tcase_add_test(tc, deepseek_step_at_batch_one_by_hand);
    tcase_add_test(tc, host_chain_binds_on_a_fast_gpu);
    tcase_add_test(tc, gqa_model_takes_no_mla_row);
    tcase_add_test(tc, engine_rows_name_their_kernels);
    tcase_add_test(tc, sglang05_rows_by_hand);
    tcase_add_test(tc, sglang05_step_at_batch_one_by_hand);
    tcase_add_test(tc, bf16_mla_model_runs_no_fp8_quantization);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
