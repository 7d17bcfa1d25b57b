/*
 * test_serve_turbomind.c: the lmdeploy-turbomind engine (LMDeploy
 * TurboMind v0.1.0a1, sim/serve/serve_sched_turbomind.c and its rows in
 * serve_engine.c, serve_decode.c, serve_scheduler.c) against values derived
 * by hand: the context passes LlamaBatch.cc's ContextDecode forms, a run's
 * steps (whole prompts, no token cap, a decoder pass of every request) and
 * their times as the sum of the passes, the pool of --kv-blocks and the
 * step_length token each admission reserves, the decoder attention
 * kernel's grid, split-K and bytes, and the engine row itself.
 */
#include <math.h>
#include <string.h>
#include "serve/serve.h"
#include "serve/serve_cost.h"
#include "serve/serve_run.h"
#include "testutil.h"

/* ContextDecode's sub-batches, max_context_token_num 12. Chunks A (10 tokens, context 10, a new prompt), B (a
 * decode, context 5), C (4, 4), D (7, 7). Context passes take each prompt less its last token: A 9, C 3, D 6,
 * shortest first: C, D, A. C opens pass 0 (input 3, longest 3); D joins (input 3 + 6 = 9 <= 12, longest 6 x 2
 * sequences = 12 <= 12); A would make input 18 > 12: pass 1. The decoder pass: every chunk one token at its whole
 * context (A 10, B 5, C 4, D 7). Second case, inputs that fit but contexts that do not: E (2, 2) and F (8, 8) ->
 * E 1 (context 1), F 7 (7): input 8 <= 12 but 7 x 2 = 14 > 12: two passes. */
START_TEST(context_passes_by_hand)
{
    const strata_serve_chunk in[4] = {{0, 10, 10, true}, {1, 1, 5, true}, {2, 4, 4, true}, {3, 7, 7, true}};
    strata_serve_chunk ctx[5], dec[5];
    uint32_t first[5];
    ck_assert_uint_eq(serve_turbomind_passes(in, 4, 12, ctx, first, dec), 2);
    ck_assert(first[0] == 0 && first[1] == 2 && first[2] == 3);
    const uint32_t ids[3] = {2, 3, 0}, tokens[3] = {3, 6, 9};
    for (int i = 0; i < 3; i++)
        ck_assert_msg(ctx[i].id == ids[i] && ctx[i].tokens == tokens[i] && ctx[i].context == tokens[i] &&
                          !ctx[i].samples,
                      "context chunk %d", i);
    const uint32_t contexts[4] = {10, 5, 4, 7};
    for (int i = 0; i < 4; i++)
        ck_assert(dec[i].id == (uint32_t)i && dec[i].tokens == 1 && dec[i].context == contexts[i] && dec[i].samples);
    const strata_serve_chunk ef[2] = {{0, 2, 2, true}, {1, 8, 8, true}};
    ck_assert_uint_eq(serve_turbomind_passes(ef, 2, 12, ctx, first, dec), 2);
    ck_assert(first[0] == 0 && first[1] == 1 && first[2] == 2 && ctx[0].tokens == 1 && ctx[1].tokens == 7);
    /* a one-token prompt has no context pass (LlamaBatch.cc: "missing > 1"); a prompt over the budget runs alone */
    const strata_serve_chunk one[2] = {{0, 1, 1, true}, {1, 20, 20, true}};
    ck_assert_uint_eq(serve_turbomind_passes(one, 2, 12, ctx, first, dec), 1);
    ck_assert(first[0] == 0 && first[1] == 1 && ctx[0].id == 1 && ctx[0].tokens == 19);
}
END_TEST

/* test_serve_sched.c's tiny model (KV 32 B a token) on test-simple, block 4, under lmdeploy-turbomind. */
static strata_serve_result *run_tm(strata_serve_config *c, strata_serve_request *req, uint32_t n, strata_hw **hw_out,
                                   strata_serve_model *m)
{
    strata_serve_stream s = {req, n, 0, 0, NULL, 0, (char *)"tiny", NULL, NULL};
    strata_serve_model_init(m);
    const char *keys[][2] = {{"name", "tiny"}, {"layers", "1"}, {"hidden", "8"}, {"heads", "1"}, {"kv_heads", "1"},
                             {"head_dim", "8"}, {"intermediate", "8"}, {"vocab", "8"}};
    GError *err = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        ck_assert_msg(strata_serve_model_set(m, keys[i][0], keys[i][1], &err), "%s", err ? err->message : "");
    c->block_size = 4, c->gpu_memory_utilization = 1, c->record_steps = true, c->prefix_caching = false;
    c->engine = strata_serve_engine_find("lmdeploy-turbomind", &err);
    ck_assert_msg(c->engine, "%s", err ? err->message : "");
    c->scheduler = strata_serve_scheduler_find(c->engine->scheduler, &err);
    ck_assert_msg(c->scheduler, "%s", err ? err->message : "");
    const char *overrides[] = {"memory.hbm.capacity=1MiB", NULL};
    strata_hw *hw = strata_test_load_hw("test-simple", overrides);
    strata_serve_result *r = strata_serve_run(hw, m, c, &s, &strata_serve_kv_paged, NULL, &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    *hw_out = hw;
    return r;
}

static const strata_serve_step *step(const strata_serve_result *r, guint i)
{
    ck_assert_uint_lt(i, r->steps_log->len);
    return &g_array_index(r->steps_log, strata_serve_step, i);
}

/* A (6 prompt, 2 out), B (6, 1), C (4, 1) at 0; budget 8, 3 sequences. Step 1 admits all three whole, 16 tokens
 * over the budget of 8 (TurboMind's iteration has no token cap; max_context_token_num only cuts its passes): B's
 * and C's single tokens, A's first. Step 2: A's decode. Step 1's time is its passes': context chunks A 5, B 5, C 3
 * tokens (contexts 5, 5, 3), shortest first C, A, B: C (input 3, longest 3); A: input 8 <= 8 but 5 x 2 = 10 > 8,
 * a pass; B: input 10 > 8, a pass: three context passes {C}, {A}, {B}; then the decoder pass, one token each at
 * contexts 6, 6, 4; and the host: 50 us + 3 requests x 1 us. Step 2: A's decode at context 7 + 51 us. */
START_TEST(whole_prompts_no_token_cap_passes_summed)
{
    strata_serve_request req[3] = {{0, 6, 2}, {0, 6, 1}, {0, 4, 1}};
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 3;
    strata_hw *hw;
    strata_serve_model m;
    strata_serve_result *r = run_tm(&c, req, 3, &hw, &m);
    ck_assert_uint_eq(r->steps, 2);
    ck_assert(step(r, 0)->tokens == 16 && step(r, 0)->prefills == 3 && step(r, 0)->decodes == 0);
    ck_assert(step(r, 1)->tokens == 1 && step(r, 1)->decodes == 1 && r->completed == 3);
    GError *err = NULL;
    strata_serve_cost *cost = strata_serve_cost_new(hw, &m, 1, false, 8, &err);
    ck_assert_msg(cost && strata_serve_engine_set_kernels(c.engine, hw, cost, &err), "%s", err ? err->message : "");
    const strata_serve_chunk pc[1] = {{2, 3, 3, false}}, pa[1] = {{0, 5, 5, false}}, pb[1] = {{1, 5, 5, false}};
    const strata_serve_chunk dec[3] = {{0, 1, 6, true}, {1, 1, 6, true}, {2, 1, 4, true}}, d2[1] = {{0, 1, 7, true}};
    double want1 = strata_serve_cost_step(cost, pc, 1) + strata_serve_cost_step(cost, pa, 1) +
                   strata_serve_cost_step(cost, pb, 1) + strata_serve_cost_step(cost, dec, 3) + 50e-6 + 3e-6;
    double want2 = strata_serve_cost_step(cost, d2, 1) + 51e-6;
    ck_assert_msg(fabs(step(r, 0)->dt - want1) <= 1e-12 * want1, "%.17g vs %.17g", step(r, 0)->dt, want1);
    ck_assert_msg(fabs(step(r, 1)->dt - want2) <= 1e-12 * want2, "%.17g vs %.17g", step(r, 1)->dt, want2);
    /* one mixed pass of all 16 tokens (the default row's composition) is another time */
    const strata_serve_chunk mixed[3] = {{0, 6, 6, true}, {1, 6, 6, true}, {2, 4, 4, true}};
    ck_assert(fabs(strata_serve_cost_step(cost, mixed, 3) + 53e-6 - want1) > 1e-12);
    strata_serve_cost_free(cost);
    strata_serve_result_free(r);
    strata_hw_free(hw);
}
END_TEST

/* --kv-blocks 3 (TurboMind's cache_max_entry_count > 1: a count of blocks): 3 blocks of 4 tokens, whatever the
 * 1 MiB of memory would hold (8,173 blocks). A (8 prompt, 2 out) needs ceil((8 + step_length 1) / 4) = 3 blocks
 * (SequenceManager.cc CountRequiredBlocks): all of them, so B (3, 1), needing 1, waits although A's prompt alone
 * fills only 2. Step 1: A's 8; step 2: A's last decode (A done, its blocks freed); step 3: B's 3. */
START_TEST(kv_blocks_pool_and_step_length_reserve)
{
    strata_serve_request req[2] = {{0, 8, 2}, {0, 3, 1}};
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 16, c.max_num_seqs = 4, c.kv_blocks = 3;
    strata_hw *hw;
    strata_serve_model m;
    strata_serve_result *r = run_tm(&c, req, 2, &hw, &m);
    ck_assert_uint_eq(r->pool_blocks, 3);
    ck_assert_uint_eq(r->pool_bytes, 3 * 4 * 32);
    ck_assert_uint_eq(r->steps, 3);
    const uint32_t want[3][3] = {{8, 1, 0}, {1, 0, 1}, {3, 1, 0}};
    for (guint i = 0; i < 3; i++)
        ck_assert_msg(step(r, i)->tokens == want[i][0] && step(r, i)->prefills == want[i][1] &&
                          step(r, i)->decodes == want[i][2],
                      "step %u", i + 1);
    strata_serve_result_free(r);
    strata_hw_free(hw);
    /* the CLI's --kv-blocks: a count >= 1 */
    strata_cli_result cr = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model",
                                           "llama-3-8b", "--poisson", "n=2,rate=0,prompt=100,output=4", "-q",
                                           "--kv-blocks", "0", NULL);
    strata_test_expect(&cr, 2, "--kv-blocks: expected a whole number >= 1, got 0");
    strata_cli_result_clear(&cr);
}
END_TEST

/* --cuda-graph-batch-sizes pads the decoder pass of a decode-only step (review of wave 29): serve_sched.c computed
 * the padding and the context_passes path dropped it, so the option changed nothing under --engine turbomind.
 * A (8 prompt, 3 out) alone: step 1 its prefill (no padding: a prefill step), steps 2 and 3 one decode each,
 * padded to 1,024 with sizes {1024}: 1,023 dummy decodes at A's context make the decoder pass longer; step 1
 * is the same in both runs. */
START_TEST(graph_sizes_pad_the_decoder_pass)
{
    strata_serve_request req[1] = {{0, 8, 3}};
    double dt[2][3];
    for (int padded = 0; padded < 2; padded++) {
        strata_serve_config c;
        strata_serve_config_default(&c);
        c.max_num_batched_tokens = 16, c.max_num_seqs = 4, c.kv_blocks = 8;
        c.graph_sizes[0] = 1024, c.n_graph_sizes = (uint32_t)padded;
        strata_hw *hw;
        strata_serve_model m;
        strata_serve_result *r = run_tm(&c, req, 1, &hw, &m);
        ck_assert_uint_eq(r->steps, 3);
        for (guint i = 0; i < 3; i++)
            dt[padded][i] = step(r, i)->dt;
        strata_serve_result_free(r);
        strata_hw_free(hw);
    }
    ck_assert_double_eq(dt[1][0], dt[0][0]);
    ck_assert_msg(dt[1][1] > dt[0][1] && dt[1][2] > dt[0][2], "%g %g, %g %g", dt[1][1], dt[0][1], dt[1][2],
                  dt[0][2]);
}
END_TEST

/* The decoder attention kernel on dgx-h100.ini's H100 (132 SMs, 3.35 TB/s x 0.9 = 3.015e12 B/s, 3 us a launch).
 * - Llama 2 70B at TP4: 64 decodes at context 2,048, 2 KV heads of group 8 a rank, fp16. HeadPerCta 4 (8 % 4), so
 *   the cache is read 8 / 4 = 2 times; avg_batch_size = 64 x 2048 / 2048 = 64, split-K max(1, ceil(16 / 64)) = 1:
 *   one launch. CTAs 64 x 2 x 2 = 256. Bytes: K and V 64 x 2 x 2048 x 2 x 128 x 2 B x 2 = 268,435,456; the
 *   queries in and the output out 1,024 heads x 128 x 2 B x 2 = 524,288: 268,959,744 B / 3.015e12 = 89.2072 us
 *   (above one CTA's 2048 x 512 B / (3.015e12 / 132) = 45.91 us): 92.2072 us.
 * - One MHA decode (Llama 2 7B: 32 KV heads, group 1) at context 4,096: HeadPerCta 1, read once; split-K
 *   ceil(16 / 1) = 16, cut to the 4 slices of 1,024 tokens: 4, two launches. Bytes: 32 x 4096 x 512 = 67,108,864;
 *   queries and output 32 x 256 x 2 = 16,384; partials 2 x 32 heads x 4 splits x (128 + 2) x 4 B = 133,120:
 *   67,258,368 B / 3.015e12 = 22.3079 us, below one CTA's 1024 x 512 B / (3.015e12 / 132) = 22.9539 us: that
 *   one's time, + 6 us. */
START_TEST(decoder_attention_by_hand)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    const strata_serve_decode_kernel *k = strata_serve_decode_find("turbomind-v0.1", &err);
    ck_assert_msg(k && !strata_serve_decode_is_flash(k), "%s", err ? err->message : "");
    double rate = 3.35e12 * 0.9, slot = rate / 132;
    strata_serve_decode_in gqa = {64, 2048, 2048, 2, 8, 128, 2.0, 2.0}, mha = {1, 4096, 4096, 32, 1, 128, 2.0, 2.0};
    strata_serve_decode_plan p;
    double t = strata_serve_decode_time(k, hw, 0, &gqa, &p), want = 3e-6 + 268959744.0 / rate;
    ck_assert(p.blocks == 1 && p.ctas == 256);
    ck_assert_msg(fabs(t - want) <= 1e-12 * want && fabs(want - 92.2072e-6) < 1e-10, "%.17g vs %.17g", t, want);
    t = strata_serve_decode_time(k, hw, 0, &mha, &p);
    want = 6e-6 + 1024.0 * 512 / slot;
    ck_assert(p.blocks == 4 && p.ctas == 128 && 67258368.0 / rate < 1024.0 * 512 / slot);
    ck_assert_msg(fabs(t - want) <= 1e-12 * want && fabs(want - 28.9539e-6) < 1e-10, "%.17g vs %.17g", t, want);
    strata_hw_free(hw);
}
END_TEST

/* The row and its alias: the policy, the kernels (its decoder attention, FA2 context attention, NCCL's all-reduce:
 * no allreduce row), its passes, no CUDA graphs, the vocabulary's all-gather without an embedding all-reduce. */
START_TEST(engine_row_and_alias)
{
    GError *err = NULL;
    const char *names[2] = {"lmdeploy-turbomind", "turbomind"};
    for (int i = 0; i < 2; i++) {
        const strata_serve_engine *e = strata_serve_engine_find(names[i], &err);
        ck_assert_msg(e, "%s", err ? err->message : "");
        ck_assert_str_eq(e->scheduler, "lmdeploy-turbomind");
        ck_assert_str_eq(e->decode, "turbomind-v0.1");
        ck_assert(e->mode == SERVE_ENGINE_SYNC && e->context_passes && e->fa2_attention && !e->fa3_prefill);
        ck_assert(!e->allreduce && !e->graph_align && !e->graph_max && !e->pool_of_free && !e->sampler);
        ck_assert(e->logits_gather && !e->embed_allreduce && !e->logits_to_root && !e->overlap_lag);
        /* SYNC: step = gpu + 50 us + 1 us a request */
        strata_serve_engine_batch b = {.requests = 10};
        ck_assert_double_eq_tol(strata_serve_engine_step(e, 1e-3, b, false, 1), 1e-3 + 60e-6, 1e-15);
    }
    ck_assert_ptr_nonnull(strata_serve_scheduler_find("lmdeploy-turbomind", &err));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_turbomind");
    TCase *tc = tcase_create("serve_turbomind");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, context_passes_by_hand);
    tcase_add_test(tc, whole_prompts_no_token_cap_passes_summed);
    tcase_add_test(tc, kv_blocks_pool_and_step_length_reserve);
    tcase_add_test(tc, graph_sizes_pad_the_decoder_pass);
    tcase_add_test(tc, decoder_attention_by_hand);
    tcase_add_test(tc, engine_row_and_alias);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
