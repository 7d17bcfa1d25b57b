/*
 * test_serve_sampler.c: the decoders' sampling kernels of serving
 * (sim/serve/serve_sampler.h) against values derived by hand: the
 * trtllm-decoder row's passes (TensorRT-LLM's C++ runtime decoder, greedy,
 * float32 logits), its time through the serving cost on a decode step,
 * nothing for a step whose chunks do not sample, a rank's own rows under
 * attention DP, which engine rows name it,
 * and an unknown name refused.
 */
#include <math.h>
#include <string.h>
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
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
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    strata_serve_model m;
    ck_assert(strata_serve_model_preset(&m, "llama-3-70b", NULL));
    m.layers = 1;
    strata_serve_cost *c = strata_serve_cost_new(hw, &m, 2, true, 1024, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    ck_assert(strata_serve_engine_set_kernels(strata_serve_engine_find("trtllm-cpp", NULL), hw, c, &err));
    strata_serve_chunk *d = g_new(strata_serve_chunk, 256);
    for (uint32_t i = 0; i < 256; i++)
        d[i] = (strata_serve_chunk){i, 1, 1000, true};
    double with = strata_serve_cost_step(c, d, 256);
    strata_serve_cost_set_sampler(c, NULL);
    double without = strata_serve_cost_step(c, d, 256);
    const double expect = (16416768.0 * 44 + 128 * 4) / (0.9 * 3.35e12) + 4 * 3e-6;
    ck_assert_msg(fabs(expect - 251.581527e-6) < 1e-12, "%.17g", expect);
    ck_assert_msg(fabs(with - without - expect) < 1e-12, "%.17g vs %.17g", with - without, expect);
    g_free(d);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* trtllm-cpp names the row; trtllm-cpp-0.9 (v0.9.0's layers not read), the
 * PyTorch backend's trtllm (its own sampler, not read) and the others none. */
START_TEST(engines_name_the_decoder)
{
    ck_assert_str_eq(strata_serve_engine_find("trtllm-cpp", NULL)->sampler, "trtllm-decoder");
    const char *none[] = {"trtllm-cpp-0.9", "trtllm", "vllm-v0", "sglang-v0.3", "sglang-v0.4", "overlap", "none"};
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
    tcase_add_test(tc, engines_name_the_decoder);
    tcase_add_test(tc, unknown_sampler_refused);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
