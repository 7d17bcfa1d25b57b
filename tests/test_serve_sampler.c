/*
 * test_serve_sampler.c: the decoders' sampling kernels of serving
 * (sim/serve/serve_sampler.h) against values derived by hand: the
 * trtllm-decoder row's passes (TensorRT-LLM's C++ runtime decoder, greedy,
 * float32 logits), its time through the serving cost on a decode step,
 * nothing for a step whose chunks do not sample, a rank's own rows under
 * attention DP, which engine rows name it, the trtllm-decoder-0.11 row's
 * buffers (TensorRT-LLM v0.11's decoder, a slot of the engine's max batch)
 * and the KV pool they take from, and an unknown name refused.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
#include "serve/serve_run.h"
#include "serve/serve_sampler.h"
#include "testutil.h"

/* The row's passes, from serve_sampler.c's reading of the kernels:
 * batchApplyPenalty reads each float32 logit and writes it (8 B),
 * addBiasSoftMax's three loops each read and write the row (24 B),
 * topKStage1 copies the row and scans the copy once for k = 1 (12 B),
 * topKStage2Sampling reads the 8 blocks' candidates only (0 B):
 * four kernels, 44 B a logit. */
START_TEST(trtllm_decoder_passes)
{
    GError *err = NULL;
    const strata_serve_sampler *s = strata_serve_sampler_find("trtllm-decoder", &err);
    ck_assert_msg(s, "%s", err ? err->message : "");
    ck_assert_uint_eq(s->n_passes, 4);
    const double bytes[4] = {8, 24, 12, 0};
    for (uint32_t i = 0; i < 4; i++)
        ck_assert_msg(s->passes[i].bytes_per_logit == bytes[i], "pass %u: %g", i, s->passes[i].bytes_per_logit);
}
END_TEST

/* A decode step of 256 Llama-3-70B requests (vocab 128,256) at TP1 on an
 * H100 (configs/hw/h100.ini: kernel_launch 3 us, HBM 3.35 TB/s at stream
 * efficiency 0.9, 3.015e12 B/s) under trtllm-cpp: the decoder adds
 *   256 x 128,256 = 32,833,536 logits x 44 B = 1,444,675,584 B
 *   / 3.015e12 = 479.162714 us, + 4 launches x 3 us, + the last kernel's
 *   one element a row as the elementwise model moves it (a bf16 read and
 *   write, 4 B: 1,024 B / 3.015e12 = 0.000340 us) = 491.163054 us;
 * a step of one 512-token prefill chunk that samples nothing (a context
 * chunk before the last) adds nothing; one that samples its last token
 * adds one row's: (128,256 x 44 + 4) / 3.015e12 + 12 us = 13.871731 us. */
START_TEST(decode_step_adds_the_decoder)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(STRATA_SOURCE_DIR "/configs/hw/h100.ini", NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    strata_serve_model m;
    ck_assert(strata_serve_model_preset(&m, "llama-3-70b", NULL));
    m.layers = 1;
    ck_assert_uint_eq(m.vocab, 128256);
    strata_serve_cost *c = strata_serve_cost_new(hw, &m, 1, false, 1024, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    ck_assert(strata_serve_engine_set_kernels(strata_serve_engine_find("trtllm-cpp", NULL), hw, c, &err));
    strata_serve_chunk *d = g_new(strata_serve_chunk, 256);
    for (uint32_t i = 0; i < 256; i++)
        d[i] = (strata_serve_chunk){i, 1, 1000, true};
    strata_serve_chunk pre[2] = {{0, 512, 512, false}, {0, 512, 512, true}};
    double with = strata_serve_cost_step(c, d, 256), pre_with = strata_serve_cost_step(c, pre, 1),
           last_with = strata_serve_cost_step(c, pre + 1, 1);
    strata_serve_cost_set_sampler(c, NULL);
    double without = strata_serve_cost_step(c, d, 256), pre_without = strata_serve_cost_step(c, pre, 1),
           last_without = strata_serve_cost_step(c, pre + 1, 1);
    const double expect = (32833536.0 * 44 + 256 * 4) / (0.9 * 3.35e12) + 4 * 3e-6,
                 one = (128256.0 * 44 + 4) / 3.015e12 + 12e-6;
    ck_assert_msg(fabs(expect - 491.163054e-6) < 1e-12, "%.17g", expect);
    ck_assert_msg(fabs(one - 13.871731e-6) < 1e-12, "%.17g", one);
    ck_assert_msg(fabs(with - without - expect) < 1e-12, "%.17g vs %.17g", with - without, expect);
    ck_assert_msg(pre_with == pre_without, "%.17g vs %.17g", pre_with, pre_without);
    ck_assert_msg(fabs(last_with - last_without - one) < 1e-12, "%.17g", last_with - last_without);
    g_free(d);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* What the sampler adds to a step of 256 one-layer Llama-3-70B decodes
 * (each 1,000 tokens in) on hw_file at tp (attention DP on or off) under
 * engine's kernels (NULL: the default row): the step with the engine's
 * sampler less the same step without one. */
static double sampler_adds(const char *hw_file, uint32_t tp, bool dp, const strata_serve_engine *engine)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(hw_file, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    strata_serve_model m;
    ck_assert(strata_serve_model_preset(&m, "llama-3-70b", NULL));
    m.layers = 1;
    strata_serve_cost *c = strata_serve_cost_new(hw, &m, tp, dp, 1024, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    ck_assert(strata_serve_engine_set_kernels(engine, hw, c, &err));
    strata_serve_chunk *d = g_new(strata_serve_chunk, 256);
    for (uint32_t i = 0; i < 256; i++)
        d[i] = (strata_serve_chunk){i, 1, 1000, true};
    double with = strata_serve_cost_step(c, d, 256);
    strata_serve_cost_set_sampler(c, NULL);
    double without = strata_serve_cost_step(c, d, 256);
    g_free(d);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
    return with - without;
}

/* Under attention DP each rank runs its decoder over its own requests' rows
 * (the LM head whole on its share, serve_cost.c), so the decoder was not
 * charged at all (the DP path returned before it). 256 Llama-3-70B decodes
 * (vocab 128,256) at TP2 with --attention-dp on a DGX H100
 * (configs/hw/dgx-h100.ini: HBM 3.35 TB/s at stream efficiency 0.9,
 * 3.015e12 B/s; kernel_launch 3 us): a rank's 128 rows,
 *   128 x 128,256 = 16,416,768 logits x 44 B = 722,337,792 B / 3.015e12
 *   = 239.581358 us, + 4 launches x 3 us, + the last kernel's one element
 *   a row (4 B x 128 = 512 B: 0.000170 us) = 251.581527 us. */
START_TEST(attention_dp_rank_runs_its_rows)
{
    double adds = sampler_adds(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", 2, true,
                               strata_serve_engine_find("trtllm-cpp", NULL));
    const double expect = (16416768.0 * 44 + 128 * 4) / (0.9 * 3.35e12) + 4 * 3e-6;
    ck_assert_msg(fabs(expect - 251.581527e-6) < 1e-12, "%.17g", expect);
    ck_assert_msg(fabs(adds - expect) < 1e-12, "%.17g vs %.17g", adds, expect);
}
END_TEST

/* trtllm-decoder-0.11: trtllm-decoder's four passes, and the buffers of
 * serve_sampler.c's reading of v0.11's decoder, float32 (4 B) each:
 * embeddingBias + mDraftLogits + the penalty layer's runtime logits + the
 * sampling workspace, top-k's (its temp log probs; AIR top-p's is smaller)
 * = 16 B a slot and padded logit; the penalty workspace, 4 B a slot and
 * logit of the vocabulary; top-k's candidates, 8 blocks x TOP_K_MAX 1,024
 * x (int32 id + float value) = 65,536 B a slot.
 * Llama 3 70B at TP8 (vocab 128,256 = 8 x 16,032, no padding) and the v0.11
 * page's max_batch_size 8,192: 8,192 x (128,256 x 20 + 65,536) = 8,192 x
 * 2,630,656 = 21,550,333,952 B a rank; Llama 2 70B (32,000) with 1,024
 * slots: 1,024 x (640,000 + 65,536) = 722,468,864 B; a vocabulary of 32,001
 * at TP8 pads to 32,008: one slot 32,008 x 16 + 32,001 x 4 + 65,536 =
 * 512,128 + 128,004 + 65,536 = 705,668 B. */
START_TEST(trtllm_decoder_011_buffers)
{
    GError *err = NULL;
    const strata_serve_sampler *s = strata_serve_sampler_find("trtllm-decoder-0.11", &err),
                               *base = strata_serve_sampler_find("trtllm-decoder", NULL);
    ck_assert_msg(s && base, "%s", err ? err->message : "");
    ck_assert_uint_eq(s->n_passes, base->n_passes);
    for (uint32_t i = 0; i < s->n_passes; i++)
        ck_assert(s->passes[i].bytes_per_logit == base->passes[i].bytes_per_logit);
    ck_assert(s->slot_bytes_padded == 16.0 && s->slot_bytes_vocab == 4.0 && s->slot_bytes == 65536.0);
    ck_assert(base->slot_bytes_padded == 0.0 && base->slot_bytes_vocab == 0.0 && base->slot_bytes == 0.0);
    ck_assert(strata_serve_sampler_buffer_bytes(s, 8192, 128256, 8) == 21550333952.0);
    ck_assert(strata_serve_sampler_buffer_bytes(s, 1024, 32000, 8) == 722468864.0);
    ck_assert(strata_serve_sampler_buffer_bytes(s, 1, 32001, 8) == 705668.0);
    ck_assert(strata_serve_sampler_buffer_bytes(base, 8192, 128256, 8) == 0.0);
}
END_TEST

/* The pool those buffers take from: Llama 3 70B FP8 at TP8 on a DGX H100
 * (80 GiB a GPU; the driver's total 79.11 GiB = 84,943,715,697 B, dgx-h100.ini's reported_capacity) with 8,192
 * slots and 16,384 tokens a step, at the page's --kv_cache_free_gpu_mem_fraction 0.99.
 * Both rows hold 9,083,035,648 B of
 * weights a rank and trtllm-cpp's profile run 1,516,240,896 B (their own
 * tests' figures); trtllm-cpp-0.11 holds 21,550,333,952 B more:
 * and each rank holds 645,472,256 B outside them that the executor's free memory loses (wave 41,
 * serve_holdings.h: CUDA context 286,261,248, NCCL 231,211,008, all-reduce workspace 128,000,000):
 *   trtllm-cpp: (84,943,715,697 - 9,083,035,648 - 1,516,240,896 - 645,472,256) x 0.99
 *     = 72,961,977,228.03 -> 72,961,977,228 B, 3,562,596 tokens of
 *     20,480 B (one FP8 KV head a rank: 80 layers x 2 x 128 B), 1,637
 *     requests of 128 + 2,048 tokens;
 *   trtllm-cpp-0.11: (84,943,715,697 - 9,083,035,648 - 23,066,574,848 - 645,472,256) x 0.99
 *     = 51,627,146,615.55 -> 51,627,146,615 B, 2,520,856 tokens, 1,158
 *     requests.
 * Llama 2 70B (1,024 slots) keeps 722,468,864 B more: its pool
 * 0.99 x 722,468,864 = 715,244,175.36 B smaller (each pool truncated to
 * a byte: within 1 B). */
START_TEST(trtllm_cpp_011_pool)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    const char *models[2] = {"llama-3-70b", "llama-2-70b"};
    const uint32_t slots[2] = {8192, 1024};
    const double kept[2] = {21550333952.0, 722468864.0};
    for (int i = 0; i < 2; i++) {
        strata_serve_model m;
        ck_assert(strata_serve_model_preset(&m, models[i], NULL));
        ck_assert(strata_serve_model_set(&m, "dtype", "f8", NULL));
        uint64_t w[2], a[2], pool[2];
        for (int e = 0; e < 2; e++) {
            strata_serve_config c;
            strata_serve_config_default(&c);
            c.tp = 8, c.max_num_seqs = slots[i], c.max_num_batched_tokens = 16384, c.gpu_memory_utilization = 0.99;
            c.engine = strata_serve_engine_find(e ? "trtllm-cpp-0.11" : "trtllm-cpp", NULL);
            ck_assert_msg(strata_serve_memory(hw, &m, &c, &w[e], &a[e], &pool[e], &err), "%s",
                          err ? err->message : "");
        }
        ck_assert_uint_eq(w[0], w[1]);
        ck_assert_msg((double)(a[1] - a[0]) == kept[i], "%s: %" PRIu64, models[i], a[1] - a[0]);
        double less = (double)pool[0] - (double)pool[1];
        ck_assert_msg(fabs(less - 0.99 * kept[i]) <= 1.0, "%s: %.17g", models[i], less);
        if (i == 0) {
            ck_assert_uint_eq(w[0], 9083035648ull);
            ck_assert_uint_eq(a[0], 1516240896ull);
            ck_assert_uint_eq(pool[0], 72961977228ull);
            ck_assert_uint_eq(pool[1], 51627146615ull);
            ck_assert_uint_eq(pool[1] / 20480, 2520856);
            ck_assert_uint_eq(pool[1] / 20480 / 2176, 1158);
            ck_assert_uint_eq(pool[0] / 20480 / 2176, 1637);
        }
    }
    strata_hw_free(hw);
}
END_TEST

/* The default row (vllm-v1, e NULL) names vllm-v1-greedy: V1's Sampler at
 * temperature 0, the 16-bit logits cast to float32 (2 B read, 4 written:
 * 6 B), argmax over them (4 B) and the sampled ids' cast to int32 (0 B a
 * logit: one element a row; sampled.long() is a no-op on argmax's int64 and
 * no pass). The same 256 Llama-3-70B decodes on h100.ini (3.015e12 B/s, 3 us
 * a launch): 256 x 128,256 = 32,833,536 logits x 10 B = 328,335,360 B, +
 * 256 x 4 B = 328,336,384 B / 3.015e12 = 108.900956 us, + 3 x 3 us =
 * 117.900956 us. */
START_TEST(vllm_v1_greedy_step)
{
    GError *err = NULL;
    const strata_serve_sampler *s = strata_serve_sampler_find("vllm-v1-greedy", &err);
    ck_assert_msg(s, "%s", err ? err->message : "");
    const double bytes[3] = {6, 4, 0};
    ck_assert_uint_eq(s->n_passes, 3);
    for (uint32_t i = 0; i < 3; i++)
        ck_assert(s->passes[i].bytes_per_logit == bytes[i]);
    ck_assert_str_eq(strata_serve_engine_row(NULL)->sampler, "vllm-v1-greedy");
    double adds = sampler_adds(STRATA_SOURCE_DIR "/configs/hw/h100.ini", 1, false, NULL);
    const double expect = (32833536.0 * 10 + 256 * 4) / (0.9 * 3.35e12) + 3 * 3e-6;
    ck_assert_msg(fabs(expect - 117.900956e-6) < 1e-12, "%.17g", expect);
    ck_assert_msg(fabs(adds - expect) < 1e-12, "%.17g vs %.17g", adds, expect);
}
END_TEST

/* vllm-v0 names vllm-v0-greedy: V0's Sampler at temperature 0 (serve_sampler.c, vllm-0.6.2's sampler.py), six
 * kernels over the float32 rows: the cast (2 B read, 4 written: 6 B), the temperature's in-place division (8 B),
 * softmax (8 B), log_softmax (8 B), the sampled rows' gather (8 B), argmax (4 B): 42 B a logit. The same 256
 * Llama-3-70B decodes on h100.ini (3.015e12 B/s, 3 us a launch), TP1: 256 x 128,256 = 32,833,536 logits x 42 B =
 * 1,379,008,512 B / 3.015e12 = 457.382591 us, + 6 x 3 us = 475.382591 us. */
START_TEST(vllm_v0_greedy_step)
{
    GError *err = NULL;
    const strata_serve_sampler *s = strata_serve_sampler_find("vllm-v0-greedy", &err);
    ck_assert_msg(s, "%s", err ? err->message : "");
    const double bytes[6] = {6, 8, 8, 8, 8, 4};
    ck_assert_uint_eq(s->n_passes, 6);
    for (uint32_t i = 0; i < 6; i++)
        ck_assert(s->passes[i].bytes_per_logit == bytes[i]);
    ck_assert(strata_serve_sampler_buffer_bytes(s, 256, 128256, 8) == 0.0);
    double adds = sampler_adds(STRATA_SOURCE_DIR "/configs/hw/h100.ini", 1, false,
                               strata_serve_engine_find("vllm-v0", NULL));
    const double expect = 32833536.0 * 42 / (0.9 * 3.35e12) + 6 * 3e-6;
    ck_assert_msg(fabs(expect - 475.382591e-6) < 1e-12, "%.17g", expect);
    ck_assert_msg(fabs(adds - expect) < 1e-12, "%.17g vs %.17g", adds, expect);
}
END_TEST

/* trtllm-cpp names the row, trtllm-cpp-0.11 its v0.11 row, vllm-v0 vllm-v0-greedy; trtllm-cpp-0.9 (v0.9.0's layers
 * not read), the PyTorch backend's trtllm (its own sampler, not read), vllm-v0.5 (0.5.x's sampler not read) and the
 * others none. */
START_TEST(engines_name_the_decoder)
{
    ck_assert_str_eq(strata_serve_engine_find("trtllm-cpp", NULL)->sampler, "trtllm-decoder");
    ck_assert_str_eq(strata_serve_engine_find("trtllm-cpp-0.11", NULL)->sampler, "trtllm-decoder-0.11");
    ck_assert_str_eq(strata_serve_engine_find("vllm-v0", NULL)->sampler, "vllm-v0-greedy");
    const char *none[] = {"trtllm-cpp-0.9", "trtllm", "vllm-v0.5", "sglang-v0.3",
                          "sglang-v0.4", "sglang-v0.5", "overlap", "none"};
    for (size_t i = 0; i < G_N_ELEMENTS(none); i++)
        ck_assert_msg(!strata_serve_engine_find(none[i], NULL)->sampler, "%s", none[i]);
}
END_TEST

START_TEST(unknown_sampler_refused)
{
    GError *err = NULL;
    ck_assert(!strata_serve_sampler_find("torch-sampler", &err));
    ck_assert(err && strstr(err->message, "sampler 'torch-sampler'") && strstr(err->message, "trtllm-decoder"));
    g_error_free(err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_sampler");
    TCase *tc = tcase_create("serve_sampler");
    tcase_add_test(tc, trtllm_decoder_passes);
    tcase_add_test(tc, decode_step_adds_the_decoder);
    tcase_add_test(tc, attention_dp_rank_runs_its_rows);
    tcase_add_test(tc, trtllm_decoder_011_buffers);
    tcase_add_test(tc, trtllm_cpp_011_pool);
    tcase_add_test(tc, vllm_v1_greedy_step);
    tcase_add_test(tc, vllm_v0_greedy_step);
    tcase_add_test(tc, engines_name_the_decoder);
    tcase_add_test(tc, unknown_sampler_refused);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
