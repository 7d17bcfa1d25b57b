/*
 * test_serve_sched.c: the serving scheduling policies (sim/serve/
 * serve_scheduler.h) against schedules derived by hand: vLLM v0's
 * prefill-only and decode-only steps, its multi-step decode runs, v0's
 * chunked prefill cut to whole blocks, the policies' defaults, the
 * setups vLLM 0.6 refuses (exit 2), TensorRT-LLM's no-evict admission and
 * its CUDA graph padding of decode batches, SGLang 0.3's prefill batches
 * and admission; the KV pool each engine sizes (vLLM of the device,
 * TensorRT-LLM of the memory left free); TensorRT-LLM's overlap scheduler's
 * one decode more per request; inter-token latencies against TPOT; each
 * engine's rule for requests longer than max_model_len; SGLang 0.4's
 * batch_is_full, its overlap lag and its pool; vLLM V1's async scheduling.
 */
#include <string.h>
#include "serve/serve.h"
#include "serve/serve_clock.h"
#include "serve/serve_cost.h"
#include "serve/serve_frontend.h"
#include "testutil.h"

/* serve_fixture.h's tiny model, by its keys: KV 2 x 1 x 1 x 8 x 2 = 32 B per token. */
static strata_serve_model tiny(void)
{
    strata_serve_model m;
    strata_serve_model_init(&m);
    const char *keys[][2] = {{"name", "tiny"}, {"layers", "1"}, {"hidden", "8"}, {"heads", "1"}, {"kv_heads", "1"},
                             {"head_dim", "8"}, {"intermediate", "8"}, {"vocab", "8"}};
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        GError *err = NULL;
        ck_assert_msg(strata_serve_model_set(&m, keys[i][0], keys[i][1], &err), "%s", err ? err->message : "");
    }
    return m;
}

/* The tiny model on test-simple with 1 MiB of memory (a pool of 8,173 blocks of 4 tokens, its watermark 81
 * blocks) under the configuration c (its policy, block size 4, utilisation 1, every step recorded). */
static strata_serve_result *run_config(strata_serve_config *c, const char *policy, strata_serve_request *req,
                                       uint32_t n)
{
    strata_serve_stream s = {req, n, 0, 0, NULL, 0, (char *)"tiny", NULL, NULL};
    c->block_size = 4, c->gpu_memory_utilization = 1, c->record_steps = true;
    GError *err = NULL;
    c->scheduler = strata_serve_scheduler_find(policy, &err);
    ck_assert_msg(c->scheduler, "%s", err ? err->message : "");
    const char *overrides[] = {"memory.hbm.capacity=1MiB", NULL};
    strata_hw *hw = strata_test_load_hw("test-simple", overrides);
    strata_serve_model m = tiny();
    strata_serve_result *r = strata_serve_run(hw, &m, c, &s, &strata_serve_kv_paged, NULL, &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    strata_hw_free(hw);
    return r;
}

/* run_config with budget 8 tokens and 2 sequences. */
static strata_serve_result *run_with(const char *policy, uint32_t steps, bool prefix, strata_serve_request *req,
                                     uint32_t n, double step_overhead)
{
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 2;
    c.num_scheduler_steps = steps, c.prefix_caching = prefix, c.step_overhead = step_overhead;
    return run_config(&c, policy, req, n);
}

static strata_serve_result *run(const char *policy, uint32_t steps, bool prefix, strata_serve_request *req,
                                uint32_t n)
{
    return run_with(policy, steps, prefix, req, n, 0);
}

static const strata_serve_step *step(const strata_serve_result *r, guint i)
{
    ck_assert_uint_lt(i, r->steps_log->len);
    return &g_array_index(r->steps_log, strata_serve_step, i);
}

/* No --engine is vLLM V1's row, whose server hops (serve_frontend.c's "vllm-v1": 10.2 ms of PR #54628 less 512 x
 * 0.08 us, halved) delay each request's receipt by recv (5.07952 ms + 0.08 us a prompt token) and the client's
 * reading of each token by emit (5.07952 ms). */
static double v1_recv(uint32_t prompt)
{
    return strata_serve_frontend_recv(strata_serve_engine_frontend(NULL), prompt);
}

static double v1_emit(void)
{
    return strata_serve_frontend_emit(strata_serve_engine_frontend(NULL));
}

/* Asserts each step's tokens, prefill chunks and decodes: n triples. */
static void check_steps(const strata_serve_result *r, const uint32_t (*want)[3], guint n)
{
    ck_assert_uint_eq(r->steps, n);
    ck_assert_uint_eq(r->steps_log->len, n);
    for (guint i = 0; i < n; i++) {
        const strata_serve_step *s = step(r, i);
        ck_assert_msg(s->tokens == want[i][0] && s->prefills == want[i][1] && s->decodes == want[i][2],
                      "step %u: %u tokens, %u prefills, %u decodes; expected %u, %u, %u", i + 1, s->tokens,
                      s->prefills, s->decodes, want[i][0], want[i][1], want[i][2]);
    }
}

START_TEST(v0_prefill_steps_apart_from_decode_steps)
{
    /* A(4 prompt, 3 out), B(4, 2), C(4, 1) at 0; budget 8, 2 sequences.
     * vllm-v0: step 1 prefills A and B (4 + 4 = 8, the budget; both sample their first token); step 2: C
     * waits (2 running), so the decodes of A and B (2 tokens; B done); step 3: C's prefill alone, A's decode
     * waits (C done); step 4: A's decode (done). 4 steps: 8, 2, 4, 1 tokens; prefill 12, decode 3. */
    strata_serve_request req[3] = {{0, 4, 3}, {0, 4, 2}, {0, 4, 1}};
    strata_serve_result *r = run("vllm-v0", 1, true, req, 3);
    const uint32_t v0[][3] = {{8, 2, 0}, {2, 0, 2}, {4, 1, 0}, {1, 0, 1}};
    check_steps(r, v0, G_N_ELEMENTS(v0));
    ck_assert_uint_eq(r->completed, 3);
    ck_assert_uint_eq(r->prefill_tokens, 12);
    ck_assert_uint_eq(r->decode_tokens, 3);
    strata_serve_result_free(r);
    /* vllm-v1 mixes them: step 3 is A's decode with C's prefill (1 + 4). 3 steps: 8, 2, 5 tokens. */
    r = run("vllm-v1", 1, true, req, 3);
    const uint32_t v1[][3] = {{8, 2, 0}, {2, 0, 2}, {5, 1, 1}};
    check_steps(r, v1, G_N_ELEMENTS(v1));
    strata_serve_result_free(r);
}
END_TEST

START_TEST(itl_pools_every_gap_tpot_averages_each_request)
{
    /* v0_prefill_steps_apart_from_decode_steps's stream under vllm-v1: step 1 prefills A(4, 3 out) and B(4, 2)
     * (both sample their first token at t1), step 2 decodes both (A's 2nd, B's 2nd and last, at t2), step 3 is
     * A's decode with C's prefill (A's 3rd at t3; C(4, 1) its only token). With dk step k's time:
     *   ITLs (vLLM's benchmarks/serve.py pools every gap): A dt2, dt3; B dt2; C none -> {dt2, dt2, dt3}:
     *   p50 = dt2, mean = (2 dt2 + dt3) / 3, p90 = dt2 + 0.8 (dt3 - dt2) (position 0.9 x 2 = 1.8).
     *   TPOTs (per request, (E2E - TTFT) / (output - 1)): A (dt2 + dt3) / 2, B dt2 -> p50 their midpoint.
     * dt3 carries C's 4-token prefill, so dt3 > dt2 and the two medians differ: a prefill step in another
     * request's life moves its TPOT, not the median ITL. */
    strata_serve_request req[3] = {{0, 4, 3}, {0, 4, 2}, {0, 4, 1}};
    strata_serve_result *r = run("vllm-v1", 1, true, req, 3);
    const uint32_t v1[][3] = {{8, 2, 0}, {2, 0, 2}, {5, 1, 1}};
    check_steps(r, v1, G_N_ELEMENTS(v1));
    double dt2 = step(r, 1)->dt, dt3 = step(r, 2)->dt;
    ck_assert_double_gt(dt3, dt2);
    ck_assert_double_eq_tol(r->itl.p50, dt2, 1e-15);
    ck_assert_double_eq_tol(r->itl.mean, (2 * dt2 + dt3) / 3, 1e-15);
    ck_assert_double_eq_tol(r->itl.p90, dt2 + 0.8 * (dt3 - dt2), 1e-15);
    ck_assert_double_eq_tol(r->tpot.p50, (dt2 + (dt2 + dt3) / 2) / 2, 1e-15);
    ck_assert_double_gt(r->tpot.p50, r->itl.p50);
    strata_serve_result_free(r);
}
END_TEST

START_TEST(step_time_split_by_kind)
{
    /* The stream of v0_prefill_steps_apart_from_decode_steps with 1 ms of --step-overhead: steps 1 and 3 carry
     * prefill tokens, 2 and 4 are decode-only; the time beyond the forward passes is 4 x 1 ms plus the
     * default row's (vllm-v1) input copies over test-simple's 16 GB/s, 1 us link (serve_engine.h
     * input_copies; block table rows of 8,192 / 4 = 2,048 entries, 8,192 B a request): steps of 2, 2, 1, 1
     * requests and 8, 2, 4, 1 tokens copy 16,384 + 160 + 20, 16,384 + 40 + 20, 8,192 + 80 + 12 and
     * 8,192 + 20 + 12 B, 49,516 B / 16 GB/s = 3.09475 us, + 4 x 6 copies x 1 us = 27.09475 us; and the
     * default row's piecewise host chain (serve_piecewise.h: the tiny model's one layer, 2 x 4 + 2 x 10 us,
     * and the first replay's 10 us: 38 us a step), which outlasts each forward (the four under 38 us
     * together); step 1's 8 tokens pass the largest captured size (max_num_seqs 2: [1, 2, 4], so 4), so it
     * runs Inductor's pieces without graphs: the one layer's 6 ATen, 6 Triton, 2 entries (24 + 66 + 20 =
     * 110 us) and the step's first call and embedding + norm (10 + 11 us): 131 us; so 131 + 3 x 38 us less
     * the GPU time; all three parts sum to the makespan less the default row's server hops (every request
     * sent at 0 and received recv(4) later, the GPU never idle after; the last read emit after the last
     * step). */
    strata_serve_request req[3] = {{0, 4, 3}, {0, 4, 2}, {0, 4, 1}};
    strata_serve_result *r = run_with("vllm-v0", 1, true, req, 3, 1e-3);
    ck_assert_uint_eq(r->steps, 4);
    ck_assert(r->prefill_gpu_s > 0 && r->decode_gpu_s > 0);
    double gpu = r->prefill_gpu_s + r->decode_gpu_s;
    ck_assert(gpu < 38e-6);
    ck_assert_double_eq_tol(r->host_s, 4e-3 + 27.09475e-6 + 131e-6 + 3 * 38e-6 - gpu, 1e-12);
    ck_assert_double_eq_tol(r->prefill_gpu_s + r->decode_gpu_s + r->host_s + v1_recv(4) + v1_emit(), r->makespan,
                            1e-12);
    strata_serve_result_free(r);
}
END_TEST

START_TEST(v0_multi_step_runs_the_decode_batch_n_steps)
{
    /* The same requests, --num-scheduler-steps 3. Step 1 prefills A and B (one step: a prefill has no
     * lookahead). Step 2 starts a run of 3 decode steps of A and B, their KV grown by 2 lookahead tokens
     * (A to 4 + 1 + 2 = 7 = its prompt + output; B capped at 6): B's last token comes at step 2 and A's at
     * step 3, but both keep computing to step 4, when the run ends and both complete. Step 5: C's prefill.
     * 5 steps: 8, 2, 2, 2, 4 tokens; decode tokens 6 (2 of them dropped), prefill 12. */
    strata_serve_request req[3] = {{0, 4, 3}, {0, 4, 2}, {0, 4, 1}};
    strata_serve_result *r = run("vllm-v0", 3, true, req, 3);
    const uint32_t want[][3] = {{8, 2, 0}, {2, 0, 2}, {2, 0, 2}, {2, 0, 2}, {4, 1, 0}};
    check_steps(r, want, G_N_ELEMENTS(want));
    ck_assert_uint_eq(r->completed, 3);
    ck_assert_uint_eq(r->decode_tokens, 6);
    ck_assert_uint_eq(r->prefill_tokens, 12);
    /* A and B end with the run (end of step 4), C with step 5: the E2E median is step 4's end, the
     * maximum step 5's, each read emit later (the default row's hops; every request sent at 0) */
    double end4 = step(r, 3)->t + step(r, 3)->dt, end5 = step(r, 4)->t + step(r, 4)->dt;
    ck_assert_double_eq_tol(r->e2e.p50, end4 + v1_emit(), 1e-15);
    ck_assert_double_eq_tol(r->makespan, end5 + v1_emit(), 1e-15);
    strata_serve_result_free(r);
}
END_TEST

START_TEST(v0_multi_step_streams_a_run_as_one_chunk)
{
    /* v0_multi_step_runs_the_decode_batch_n_steps's schedule: A and B sample their first tokens at step 1's
     * end (e1), A its 2nd and 3rd at steps 2 and 3, B its 2nd at step 2; vLLM 0.6.0 returns the run's outputs
     * when it ends (e4), so each client gets one chunk then: ITLs {e4 - e1, e4 - e1} (one per request), p50 =
     * mean = dt2 + dt3 + dt4. Sampled token by token the ITLs would have been {dt2, dt2, dt3}. TPOTs stand:
     * A (e4 - e1) / 2, B (e4 - e1) / 1. With --num-scheduler-steps 1 each token is its own chunk (the v0 test
     * above: ITLs dt2 and dt2 of steps 2 and 4 for A, dt2 for B). */
    strata_serve_request req[3] = {{0, 4, 3}, {0, 4, 2}, {0, 4, 1}};
    strata_serve_result *r = run("vllm-v0", 3, true, req, 3);
    double e1 = step(r, 0)->t + step(r, 0)->dt, e4 = step(r, 3)->t + step(r, 3)->dt;
    double run3 = step(r, 1)->dt + step(r, 2)->dt + step(r, 3)->dt;
    ck_assert_double_eq_tol(e4 - e1, run3, 1e-15);
    ck_assert_double_eq_tol(r->itl.p50, run3, 1e-15);
    ck_assert_double_eq_tol(r->itl.mean, run3, 1e-15);
    ck_assert_double_eq_tol(r->itl.p99, run3, 1e-15);
    ck_assert_double_eq_tol(r->tpot.p50, ((e4 - e1) / 2 + (e4 - e1)) / 2, 1e-15);
    strata_serve_result_free(r);
    r = run("vllm-v0", 1, true, req, 3);
    double dt2 = step(r, 1)->dt, dt4 = step(r, 3)->dt;
    ck_assert_double_eq_tol(r->itl.p50, dt2, 1e-15);
    ck_assert_double_eq_tol(r->itl.mean, (2 * dt2 + (step(r, 2)->dt + dt4)) / 3, 1e-15);
    strata_serve_result_free(r);
}
END_TEST

START_TEST(v0_chunks_cut_to_whole_blocks_with_prefix_caching)
{
    /* A(6, 1), B(6, 1); budget 8, blocks of 4. vllm-v0-chunked with prefix caching: A's 6 tokens leave 2 of the
     * budget, B's chunk rounds 2 down to whole blocks, 0: step 1 is A alone, step 2 B (6). Without prefix
     * caching B gets a 2-token chunk then its last 4: 8, 4, as vllm-v1. */
    strata_serve_request req[2] = {{0, 6, 1}, {0, 6, 1}};
    strata_serve_result *r = run("vllm-v0-chunked", 1, true, req, 2);
    const uint32_t blocks[][3] = {{6, 1, 0}, {6, 1, 0}};
    check_steps(r, blocks, G_N_ELEMENTS(blocks));
    strata_serve_result_free(r);
    r = run("vllm-v0-chunked", 1, false, req, 2);
    const uint32_t tokens[][3] = {{8, 2, 0}, {4, 1, 0}};
    check_steps(r, tokens, G_N_ELEMENTS(tokens));
    ck_assert_uint_eq(r->completed, 2);
    strata_serve_result_free(r);
}
END_TEST

START_TEST(policies_defaults_and_choices)
{
    GError *err = NULL;
    const strata_serve_scheduler *v0 = strata_serve_scheduler_find("vllm-v0", &err);
    const strata_serve_scheduler *ch = strata_serve_scheduler_find("vllm-v0-chunked", &err);
    ck_assert(v0 && ch);
    /* vLLM 0.6's budgets: max(max_model_len, 2048); 512 chunked; 256 sequences */
    ck_assert_uint_eq(v0->default_budget(8192), 8192);
    ck_assert_uint_eq(v0->default_budget(1024), 2048);
    ck_assert_uint_eq(ch->default_budget(131072), 512);
    ck_assert_uint_eq(v0->default_max_seqs, 256);
    /* vLLM V0 0.6.5-0.9.2 (serve_sched_v0.c): chunked prefill on by itself when max_model_len > 32768
     * ("use_long_context"), off ROCm, no sliding window, not MLA; its budget then 2048, SchedulerConfig's when
     * chunked. 32769 is the first length over; 32768 is not. */
    uint32_t budget = 0;
    strata_serve_pick_setup cuda = {.max_model_len = 32769};
    ck_assert_str_eq(v0->pick(&cuda, &budget), "vllm-v0-chunked");
    ck_assert_uint_eq(budget, 2048);
    budget = 7;
    cuda.max_model_len = 32768;
    ck_assert_ptr_null(v0->pick(&cuda, &budget));
    ck_assert_uint_eq(budget, 7); /* untouched when nothing is picked */
    const strata_serve_pick_setup rocm = {.max_model_len = 131072, .rocm = true},
                                  window = {.max_model_len = 131072, .sliding_window = true},
                                  mla = {.max_model_len = 131072, .mla = true};
    ck_assert_ptr_null(v0->pick(&rocm, &budget)); /* "and not current_platform.is_rocm()"; is_cuda() from 0.8 */
    ck_assert_ptr_null(v0->pick(&window, &budget));
    ck_assert_ptr_null(v0->pick(&mla, &budget));
    ck_assert_ptr_null(ch->pick); /* the chunked row picks nothing further */
    ck_assert_ptr_null(strata_serve_scheduler_find("fifo", &err));
    ck_assert_msg(strstr(err->message, "unknown scheduler 'fifo'") && strstr(err->message, "vllm-v0-chunked"), "%s",
                  err->message);
    g_clear_error(&err);
}
END_TEST

START_TEST(trtllm_no_evict_reserves_each_request_to_completion)
{
    /* 10 requests of 4 prompt + 4,084 output tokens at 0; budget 64 tokens, 64 sequences; the pool a little
     * under 8,173 blocks of 4 tokens (64 tokens' activations, not 8). Each needs ceil(4,088 / 4) = 1,022 blocks
     * to its last token. trtllm-no-evict admits while the free blocks less the running requests' remaining ones
     * hold the next request's 1,022: 7 for any pool from 7 x 1,022 = 7,154 up to 8 x 1,022 - 1 = 8,175; step 1
     * their 7 prompts (28 tokens); they finish together after 4,084 steps (1 prefill + 4,083 decodes), then the
     * other 3 (3,066 blocks) run 4,084 more: 8,168 steps, no preemption. */
    strata_serve_request req[10];
    for (int i = 0; i < 10; i++)
        req[i] = (strata_serve_request){0, 4, 4084};
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 64, c.max_num_seqs = 64;
    strata_serve_result *r = run_config(&c, "trtllm-no-evict", req, 10);
    ck_assert_uint_ge(r->pool_blocks, 7154);
    ck_assert_uint_lt(r->pool_blocks, 8176);
    ck_assert_msg(r->completed == 10 && r->preemptions == 0 && r->steps == 8168 && r->batch_max == 7,
                  "%u completed, %" G_GUINT64_FORMAT " preempted, %" G_GUINT64_FORMAT " steps, peak %g running",
                  r->completed, (guint64)r->preemptions, (guint64)r->steps, r->batch_max);
    ck_assert_uint_eq(step(r, 0)->tokens, 28);
    ck_assert_uint_eq(step(r, 0)->prefills, 7);
    ck_assert_uint_eq(step(r, 4084)->prefills, 3);
    strata_serve_result_free(r);
    /* vllm-v1 takes blocks as tokens come: all 10 start (1 block each), and their 10,220 blocks to completion
     * exceed the pool, so it preempts */
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 64, c.max_num_seqs = 64;
    r = run_config(&c, "vllm-v1", req, 10);
    ck_assert_double_eq(r->batch_max, 10);
    ck_assert_uint_gt(r->preemptions, 0);
    ck_assert_uint_eq(r->completed, 10);
    strata_serve_result_free(r);
    /* the trtllm engine runs this policy */
    GError *err = NULL;
    const strata_serve_engine *e = strata_serve_engine_find("trtllm", &err);
    ck_assert_msg(e, "%s", err ? err->message : "");
    ck_assert_str_eq(e->scheduler, "trtllm-no-evict");
}
END_TEST

START_TEST(trtllm_unchunked_places_whole_prompts)
{
    /* A(6 prompt, 2 out), B(6, 1), C(4, 1) at 0; budget 8 tokens, 3 sequences; the pool far larger.
     * trtllm-no-evict-unchunked (MicroBatchScheduler without context chunking): step 1 places A whole (6 <= 8);
     * B's 6 > the 2 left ends the step: 6 tokens, A samples its first. Step 2: A's decode (1), then B whole (1 +
     * 6 <= 8); C's 4 > the 1 left: 7 tokens, A done, B's only token. Step 3: C's 4. Each first token comes at
     * the end of its own prompt's step, read emit later (the default row's hops; all sent at 0), so TTFT mean
     * = (t1 + t2 + t3) / 3 + emit with t_k step k's end. The chunked
     * form (trtllm-no-evict) cuts B: 8 (A 6, B 2), 8 (A's decode, B 4, C 3), 1 (C's last), B's and C's first
     * tokens at steps 2 and 3. */
    strata_serve_request req[3] = {{0, 6, 2}, {0, 6, 1}, {0, 4, 1}};
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 3;
    strata_serve_result *r = run_config(&c, "trtllm-no-evict-unchunked", req, 3);
    const uint32_t whole[][3] = {{6, 1, 0}, {7, 1, 1}, {4, 1, 0}};
    check_steps(r, whole, G_N_ELEMENTS(whole));
    ck_assert_uint_eq(r->completed, 3);
    double t1 = step(r, 0)->t + step(r, 0)->dt, t2 = step(r, 1)->t + step(r, 1)->dt, t3 = step(r, 2)->t + step(r, 2)->dt;
    ck_assert_double_eq_tol(r->ttft.mean, (t1 + t2 + t3) / 3 + v1_emit(), 1e-12);
    strata_serve_result_free(r);
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 3;
    r = run_config(&c, "trtllm-no-evict", req, 3);
    const uint32_t chunked[][3] = {{8, 2, 0}, {8, 2, 1}, {1, 0, 1}};
    check_steps(r, chunked, G_N_ELEMENTS(chunked));
    strata_serve_result_free(r);
    /* a prompt longer than the whole budget can never be placed: rejected; the next runs alone */
    strata_serve_request big[2] = {{0, 10, 1}, {0, 4, 1}};
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 3;
    r = run_config(&c, "trtllm-no-evict-unchunked", big, 2);
    const uint32_t alone[][3] = {{4, 1, 0}};
    check_steps(r, alone, G_N_ELEMENTS(alone));
    ck_assert(r->rejected == 1 && r->completed == 1);
    strata_serve_result_free(r);
}
END_TEST

/* An overlap scheduler's lag (overlap_lag), one loop over the two rows that have it: trtllm (TensorRT-LLM's
 * overlap scheduler) under trtllm-no-evict, sglang-v0.4 (SGLang 0.4's event_loop_overlap) under its own policy.
 * A request done in step n is in step n+1's batch too, one decode whose token is dropped, and its slot is free
 * only after it. A(4 prompt, 3 out) and B(4, 3) at 0, one sequence at a time, budget 8: step 1 A's prompt (4
 * tokens, its first token; sglang-v0.4's batch_is_full set: the batch holds max_running_requests), steps 2 and 3
 * A's decodes (its second and third: A done at step 3's end), step 4 A's dropped decode, step 5 B's prompt
 * (sglang-v0.4: the batch empty, batch_is_full cleared), 6 and 7 its decodes (B done at step 7's end; the run
 * ends with the last request, so B's dropped decode is not run): 7 steps, where without the lag (the policy
 * alone, no engine) B's prompt is step 4 and the run 6 steps. Finish times are the ends of the steps that
 * produced the last tokens (3 and 7); the dropped decode is no decode token (4 either way). */
static const char *const lag_rows[][2] = {{"trtllm", "trtllm-no-evict"}, {"sglang-v0.4", "sglang-v0.4"}};

START_TEST(overlap_lag_runs_one_decode_more)
{
    const char *engine = lag_rows[_i][0], *policy = lag_rows[_i][1];
    strata_serve_request req[2] = {{0, 4, 3}, {0, 4, 3}};
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 1;
    c.engine = strata_serve_engine_find(engine, NULL);
    ck_assert(c.engine && c.engine->overlap_lag);
    strata_serve_result *r = run_config(&c, policy, req, 2);
    const uint32_t lag[][3] = {{4, 1, 0}, {1, 0, 1}, {1, 0, 1}, {1, 0, 1}, {4, 1, 0}, {1, 0, 1}, {1, 0, 1}};
    check_steps(r, lag, G_N_ELEMENTS(lag));
    ck_assert_uint_eq(r->completed, 2);
    ck_assert_uint_eq(r->decode_tokens, 4);
    /* the client reads each token the row's emit hops after its step (serve_frontend.h: sglang-v0.4 3.954 ms,
     * trtllm none), and A's first step starts when A is received (sglang-v0.4: its recv hops, 2.63632 ms) */
    const strata_serve_frontend *front = strata_serve_engine_frontend(strata_serve_engine_find(engine, NULL));
    double emit = strata_serve_frontend_emit(front);
    double a_end = step(r, 2)->t + step(r, 2)->dt, b_end = step(r, 6)->t + step(r, 6)->dt;
    ck_assert_double_eq_tol(step(r, 0)->t, strata_serve_frontend_recv(front, 4), 1e-15);
    ck_assert_double_eq_tol(r->makespan, b_end + emit, 1e-12);
    ck_assert_double_eq_tol(r->e2e.mean, (a_end + b_end) / 2 + emit, 1e-12);
    ck_assert_double_eq_tol(r->ttft.mean,
                            (step(r, 0)->t + step(r, 0)->dt + step(r, 4)->t + step(r, 4)->dt) / 2 + emit, 1e-12);
    strata_serve_result_free(r);
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 1;
    r = run_config(&c, policy, req, 2);
    const uint32_t none[][3] = {{4, 1, 0}, {1, 0, 1}, {1, 0, 1}, {4, 1, 0}, {1, 0, 1}, {1, 0, 1}};
    check_steps(r, none, G_N_ELEMENTS(none));
    ck_assert_uint_eq(r->decode_tokens, 4);
    strata_serve_result_free(r);
    /* NIM's C++ executor (trtllm-cpp) and SGLang before 0.4 have no such lag */
    ck_assert(!strata_serve_engine_find(_i ? "sglang-v0.3" : "trtllm-cpp", NULL)->overlap_lag);
}
END_TEST

/* decode_gpu_s of k requests (4 prompt + 3 output tokens) on the tiny model, decode batches padded to the
 * sizes given (n of them) or by the engine named (NULL: none). */
static double padded_decode_k(uint32_t k, const uint32_t *sizes, uint32_t n, const char *engine)
{
    strata_serve_request req[8];
    for (uint32_t i = 0; i < k; i++)
        req[i] = (strata_serve_request){0, 4, 3};
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 64, c.max_num_seqs = 64, c.n_graph_sizes = n;
    for (uint32_t i = 0; i < n; i++)
        c.graph_sizes[i] = sizes[i];
    c.engine = engine ? strata_serve_engine_find(engine, NULL) : NULL;
    strata_serve_result *r = run_config(&c, "vllm-v1", req, k);
    /* the k prefills, then two decode-only steps of k (and under vllm-v0 a third, its async output processor's
     * decode more of the k done: serve_sched.c async_output) */
    ck_assert_uint_eq(r->steps, c.engine && c.engine->async_output ? 4 : 3);
    double t = r->decode_gpu_s;
    strata_serve_result_free(r);
    return t;
}

static double padded_decode_s(const uint32_t *sizes, uint32_t n)
{
    return padded_decode_k(3, sizes, n, NULL);
}

START_TEST(sglang_prefills_alone_cut_at_the_chunk)
{
    /* A(6 prompt, 2 out), B(6, 1), C(4, 1) at 0; chunk (budget) 8 tokens, 3 sequences; the pool far larger.
     * sglang-v0.3 (PrefillAdder): step 1 takes A whole (6 <= 8, rem_chunk 2) and cuts B to the 2 left (B
     * inflight, samples nothing; rem_chunk 0 stops). Step 2: a prefill batch, so A's decode waits: B's last 4
     * (inflight first) and C's 4 (rem_chunk 4 - 4 = 0); B and C sample their one token, done. Step 3: A's
     * decode, done. 3 steps: 8, 8, 1 tokens; prefill 16, decode 1. vllm-v1 mixes them: step 2 is A's decode (A
     * done), B's last 4 and C's first 3 (8); step 3 C's last token (1, logged as a one-token step). */
    strata_serve_request req[3] = {{0, 6, 2}, {0, 6, 1}, {0, 4, 1}};
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 3;
    strata_serve_result *r = run_config(&c, "sglang-v0.3", req, 3);
    const uint32_t sgl[][3] = {{8, 2, 0}, {8, 2, 0}, {1, 0, 1}};
    check_steps(r, sgl, G_N_ELEMENTS(sgl));
    ck_assert_uint_eq(r->completed, 3);
    ck_assert_uint_eq(r->prefill_tokens, 16);
    ck_assert_uint_eq(r->decode_tokens, 1);
    strata_serve_result_free(r);
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 3;
    r = run_config(&c, "vllm-v1", req, 3);
    const uint32_t v1[][3] = {{8, 2, 0}, {8, 2, 1}, {1, 0, 1}};
    check_steps(r, v1, G_N_ELEMENTS(v1));
    strata_serve_result_free(r);
    /* the sglang-v0.3 engine runs this policy, its budget SGLang's chunked_prefill_size */
    GError *err = NULL;
    const strata_serve_engine *e = strata_serve_engine_find("sglang-v0.3", &err);
    ck_assert_msg(e, "%s", err ? err->message : "");
    ck_assert_str_eq(e->scheduler, "sglang-v0.3");
    const strata_serve_scheduler *p = strata_serve_scheduler_find("sglang-v0.3", &err);
    ck_assert_msg(p, "%s", err ? err->message : "");
    ck_assert_uint_eq(p->default_budget(131072), 8192);
}
END_TEST

START_TEST(sglang_admits_against_expected_outputs)
{
    /* trtllm_no_evict_reserves_each_request_to_completion's stream: 10 requests of 4 prompt + 4,084 output
     * tokens at 0, budget 64, 64 sequences, the pool P = 8,086 blocks of 4 tokens (asserted), 32,344 tokens.
     * sglang-v0.3, new_token_ratio 0.7 (idle server). Step 1: each request needs 4 + 4,084 = 4,088 < the
     * tokens left: 7 (32,344 - 7 x 4,088 = 3,728). Step 2: free (8,086 - 7) x 4 = 32,316 less the 7 running
     * requests' 4,083 x 0.7 = 20,006.7 leaves 12,309.3: the other 3 fit (4,133.3 > 4,088 before the third),
     * a prefill step alone (12 tokens; trtllm-no-evict admits none of them). From step 3 all 10 decode in
     * step, holding 4 + d - 1 tokens before decode d (step d + 2). Decode d = 3,229 (step index 3,230) needs a
     * 809th block for each (3,232 = 808 x 4 held): 10 > the 6 free, so the one with fewest outputs, longest
     * prompt, latest (all tie: request 10) is retracted, freeing 808: 814 free >= 9 x 20 tokens. The 9 take 9
     * blocks every 4 steps: 805 - 9 (j - 1) < 9 first at j = 90, decode 3,589 (index 3,590): request 9 retracted
     * (898 blocks); then 894 - 8 (j - 1) < 8 at j = 112, decode 4,037 (index 4,038): request 8. The 7 left end
     * at decode 4,083 (index 4,084). Index 4,085: request 10 prefills its 4 + 3,229 = 3,233 tokens again, cut
     * at 64 (50 chunks of 64, then 33 with request 9's first 31 at index 4,135, 2 prefills). Prefill tokens: 40
     * + 3,233 + 3,593 + 4,041 = 10,907 (each retracted request's prompt and outputs again). */
    strata_serve_request req[10];
    for (int i = 0; i < 10; i++)
        req[i] = (strata_serve_request){0, 4, 4084};
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 64, c.max_num_seqs = 64;
    strata_serve_result *r = run_config(&c, "sglang-v0.3", req, 10);
    ck_assert_uint_eq(r->pool_blocks, 8086);
    const uint32_t first[][3] = {{28, 7, 0}, {12, 3, 0}, {10, 0, 10}};
    for (guint i = 0; i < G_N_ELEMENTS(first); i++)
        ck_assert_msg(step(r, i)->tokens == first[i][0] && step(r, i)->prefills == first[i][1] &&
                          step(r, i)->decodes == first[i][2],
                      "step %u: %u tokens, %u prefills", i + 1, step(r, i)->tokens, step(r, i)->prefills);
    const guint at[] = {3229, 3230, 3589, 3590, 4037, 4038, 4084};
    const uint32_t decodes[] = {10, 9, 9, 8, 8, 7, 7};
    for (guint i = 0; i < G_N_ELEMENTS(at); i++)
        ck_assert_msg(step(r, at[i])->decodes == decodes[i] && step(r, at[i])->prefills == 0,
                      "step index %u: %u decodes, %u prefills; expected %u decodes", at[i], step(r, at[i])->decodes,
                      step(r, at[i])->prefills, decodes[i]);
    ck_assert(step(r, 4085)->tokens == 64 && step(r, 4085)->prefills == 1 && step(r, 4085)->decodes == 0);
    ck_assert(step(r, 4135)->tokens == 64 && step(r, 4135)->prefills == 2);
    ck_assert_uint_eq(r->preemptions, 3);
    ck_assert_uint_eq(r->completed, 10);
    ck_assert_uint_eq(r->prefill_tokens, 10907);
    strata_serve_result_free(r);
}
END_TEST

START_TEST(cuda_graph_padding_pads_decode_batches)
{
    /* A padded dummy is a decode of context 1 that samples (TensorRT-LLM's dummy requests). */
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(STRATA_SOURCE_DIR "/configs/hw/h100.ini", NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    strata_serve_model m = tiny();
    strata_serve_cost *cost = strata_serve_cost_new(hw, &m, 1, false, 64, &err);
    ck_assert_msg(cost, "%s", err ? err->message : "");
    strata_serve_chunk four[4] = {{0, 1, 10, true}, {1, 1, 10, true}, {2, 1, 10, true}, {3, 1, 1, true}};
    ck_assert_double_eq(strata_serve_cost_step_padded(cost, four, 3, 1), strata_serve_cost_step(cost, four, 4));
    strata_serve_cost_free(cost);
    strata_hw_free(hw);
    /* the batch of 3 padded to 4 costs more; to 3 (exact) or with 3 above the last size (2) nothing */
    double plain = padded_decode_s(NULL, 0);
    const uint32_t to4[] = {1, 2, 4}, exact[] = {3, 8}, below[] = {1, 2};
    ck_assert_double_gt(padded_decode_s(to4, 3), plain);
    ck_assert_double_eq(padded_decode_s(exact, 2), plain);
    ck_assert_double_eq(padded_decode_s(below, 2), plain);
    /* vLLM 0.6 and SGLang 0.3 pad to their captured sizes 1, 2, 4, 8, 16, ... (_get_graph_batch_size): 3 to 4
     * and 5 to 8, as those lists given by hand; 2 stays 2 (each engine against itself: its own kernels around
     * the attention, serve_attn_aux.h, run in every decode step) */
    const uint32_t to8[] = {8}, five[] = {5}, two[] = {2}, three[] = {3};
    ck_assert_double_eq(padded_decode_k(3, NULL, 0, "vllm-v0"), padded_decode_k(3, to4, 3, "vllm-v0"));
    ck_assert_double_eq(padded_decode_k(3, NULL, 0, "sglang-v0.3"), padded_decode_k(3, to4, 3, "sglang-v0.3"));
    ck_assert_double_eq(padded_decode_k(5, NULL, 0, "vllm-v0"), padded_decode_k(5, to8, 1, "vllm-v0"));
    ck_assert_double_gt(padded_decode_k(5, NULL, 0, "vllm-v0"), padded_decode_k(5, five, 1, "vllm-v0"));
    ck_assert_double_eq(padded_decode_k(2, NULL, 0, "vllm-v0"), padded_decode_k(2, two, 1, "vllm-v0"));
    /* sizes given on the command line replace the engine's: 3 stays 3 */
    ck_assert_double_eq(padded_decode_k(3, exact, 2, "vllm-v0"), padded_decode_k(3, three, 1, "vllm-v0"));
    ck_assert_double_lt(padded_decode_k(3, exact, 2, "vllm-v0"), padded_decode_k(3, NULL, 0, "vllm-v0"));
}
END_TEST

static strata_cli_result serve(const char *extra1, const char *extra2, const char *extra3)
{
    return strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model", "llama-3-8b",
                           "--poisson", "n=4,rate=0,prompt=100,output=4", "-q", "--engine", "vllm-v0", extra1, extra2,
                           extra3, NULL);
}

START_TEST(cli_picks_and_refuses_as_vllm_does)
{
    /* the engine's policy, its budget max(8192, 2048) and 256 sequences, in the report */
    strata_cli_result r = serve(NULL, NULL, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "vllm-v0"), "%s", r.out);
    strata_cli_result_clear(&r);
    /* a budget below max_model_len without chunked prefill */
    r = serve("--max-num-batched-tokens", "4096", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "expected --max-num-batched-tokens (4096) >= max_model_len (8192)"), "%s", r.err);
    strata_cli_result_clear(&r);
    /* long context on CUDA turns chunked prefill on, which strata does not run with multi-step */
    r = serve("--set=max_model_len=40000", "--num-scheduler-steps=10", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--engine vllm-v0: max_model_len 40000 over 32768 off ROCm turns vLLM V0's chunked "
                                "prefill on (vllm-v0-chunked)"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = serve("--scheduler", "vllm-v0-chunked", "--num-scheduler-steps=10");
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--scheduler vllm-v0-chunked: vLLM 0.6 refuses chunked prefill"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = serve("--scheduler", "vllm-v0-chunked", "--max-num-batched-tokens=510");
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "whole blocks"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = serve("--cuda-graph-batch-sizes", "4,2", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--cuda-graph-batch-sizes: expected up to 32 increasing sizes"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = serve("--scheduler", "lifo", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "unknown scheduler 'lifo'"), "%s", r.err);
    strata_cli_result_clear(&r);
}
END_TEST

/* The report's scheduler line for --engine vllm-v0 at max_model_len L on a hardware file: llama-3-8b, four
 * requests of 100 + 4 tokens, extra options after. */
static strata_cli_result serve_on(const char *hw, const char *len, const char *extra1, const char *extra2)
{
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", hw, NULL);
    strata_cli_result r = strata_test_cli("serve", "--hw", path, "--model", "llama-3-8b", "--set", len, "--poisson",
                                          "n=4,rate=0,prompt=100,output=4", "-q", "--engine", "vllm-v0", extra1,
                                          extra2, NULL);
    g_free(path);
    return r;
}

START_TEST(v0_engine_chunks_long_context_off_rocm)
{
    /* h100.ini names no collectives (CUDA here); mi300x-8.ini's are RCCL's (vLLM's ROCm build). vLLM V0 from
     * 0.6.5: L = 131072 > 32768 on CUDA runs chunked prefill with max_num_batched_tokens 2048, prefix caching
     * on or off (strata's default on; the condition left vLLM in 0.6.1); on ROCm it stays off, the budget
     * max(131072, 2048) = 131072. 256 sequences either way. */
    strata_cli_result r = serve_on("h100.ini", "max_model_len=131072", NULL, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "vllm-v0-chunked: 2048 tokens, 256 sequences a step"), "%s", r.out);
    strata_cli_result_clear(&r);
    r = serve_on("h100.ini", "max_model_len=131072", "--no-prefix-caching", NULL);
    ck_assert_msg(strstr(r.out, "vllm-v0-chunked: 2048 tokens, 256 sequences a step"), "%s", r.out);
    strata_cli_result_clear(&r);
    r = serve_on("mi300x-8.ini", "max_model_len=131072", NULL, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "vllm-v0: 131072 tokens, 256 sequences a step"), "%s", r.out);
    strata_cli_result_clear(&r);
    /* ROCm, so no chunked prefill for multi-step to refuse: max(40000, 2048) */
    r = serve_on("mi300x-8.ini", "max_model_len=40000", "--num-scheduler-steps=10", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "vllm-v0: 40000 tokens, 256 sequences a step"), "%s", r.out);
    strata_cli_result_clear(&r);
    /* at 32768 (not over) CUDA stays unchunked: max(32768, 2048) */
    r = serve_on("h100.ini", "max_model_len=32768", NULL, NULL);
    ck_assert_msg(strstr(r.out, "vllm-v0: 32768 tokens, 256 sequences a step"), "%s", r.out);
    strata_cli_result_clear(&r);
    /* a budget given is kept (vLLM's max_num_batched_tokens given); --scheduler overrides the pick */
    r = serve_on("h100.ini", "max_model_len=131072", "--max-num-batched-tokens=8192", NULL);
    ck_assert_msg(strstr(r.out, "vllm-v0-chunked: 8192 tokens, 256 sequences a step"), "%s", r.out);
    strata_cli_result_clear(&r);
    r = serve_on("h100.ini", "max_model_len=131072", "--scheduler=vllm-v0", NULL);
    ck_assert_msg(strstr(r.out, "vllm-v0: 131072 tokens, 256 sequences a step"), "%s", r.out);
    strata_cli_result_clear(&r);
}
END_TEST

/* The KV pool of each engine on Llama-4-Maverick (validation/serving/models/llama-4-maverick.model) in FP8 at
 * TP8 with attention dp on dgx-h100 (the driver's total, reported_capacity 79.11 GiB = 84,943,715,697 B), 8,192
 * batched tokens, 512 sequences, fraction 0.9.
 * Weights a rank holds, by hand: the attention 48 x 62,914,560 = 3,019,898,880, the dense MLPs 24 x 3 x 5120 x
 * 16384 = 6,039,797,760, the shared experts 24 x 3 x 5120 x 8192 = 3,019,898,880 and the embedding and LM head
 * 2 x 202048 x 5120 = 2,068,971,520 whole (TensorRT-LLM's Llama4Model and DecoderModelForCausalLM under
 * enable_attention_dp); the norms 48 x 2 x 5120 + 5120 = 496,640 and routers 24 x 5120 x 128 = 15,728,640
 * whole; the routed experts 24 x 128 x 3 x 5120 x 8192 / 8 = 48,318,382,080: 62,483,174,400 parameters at one
 * byte, + the embedding and head's second byte (bf16: an Embedding and an LMHead take no quantization)
 * 2,068,971,520 = 64,552,145,920 B. Activations (serve_run.c's estimate): 8192 x (2 x 5120 + (40 + 16) x 128
 * + 3 x 16384) x 1 B + 512 x 202048 x 8 B = 545,259,520 + 827,588,608 = 1,372,848,128.
 * vLLM: 0.9 x 84,943,715,697 - 64,552,145,920 - 1,372,848,128 = 10,524,350,079.3 -> 10,524,350,079 B.
 * TensorRT-LLM's profile run peaks instead in the fused MoE's call on the 8 x 8,192 = 65,536 gathered tokens
 * (strata_serve_moe_call_bytes, top 1: 65,536 routed rows, slice 8192 / 8 = 1,024): maps 3 x 4 x 65,536 =
 * 786,432, blocked counts 2 x 4 x 128 x 64 = 65,536 (1,024-token blocks), blocked rows 4 x 128 x 65,536 =
 * 33,554,432, offsets 8 x 129 = 1,032, GEMM inputs and outputs 2 x 65,536 x 5120 x 2 = 1,342,177,280 (bf16 fc2
 * results), src_to_dest 262,144, output 65,536 x 5120 x 2 = 671,088,640: 2,047,935,496; with the gathered
 * input 65,536 x (5120 + 8) = 336,068,608: 2,384,004,104, above the dense MLP's 402,653,184. Activations
 * 8192 x (10,240 + 7,168) + 2,384,004,104 + 827,588,608 = 3,354,199,048.
 * TensorRT-LLM (KvCacheCreator._cal_max_memory): 0.9 x (84,943,715,697 - 64,552,145,920 - 3,354,199,048) =
 * 15,333,633,656 B (a double's product, 15,333,633,656.1 truncated) before what the rank holds (wave 41,
 * serve_holdings.h; test_serve_holdings's holdings_at_tp8_by_hand): less 679,026,688 B inside the fraction,
 * 0.9 x 16,358,344,041 = 14,722,509,636 B; vLLM V1 (none) less cuBLAS's 33,554,432 B: 10,490,795,647 B. */
START_TEST(trtllm_pool_is_its_fraction_of_the_free_memory)
{
    GError *err = NULL;
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "dgx-h100.ini", NULL);
    char *model = g_build_filename(STRATA_SOURCE_DIR, "validation", "serving", "models", "llama-4-maverick.model", NULL);
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    strata_serve_model m;
    strata_serve_model_init(&m);
    ck_assert_msg(strata_serve_model_load(&m, model, &err), "%s", err ? err->message : "");
    ck_assert(strata_serve_model_set(&m, "dtype", "f8", NULL));
    const char *engines[2] = {"none", "trtllm"};
    const uint64_t want[2] = {10490795647ull, 14722509636ull}, acts[2] = {1372848128ull, 3354199048ull};
    for (int i = 0; i < 2; i++) {
        strata_serve_config c;
        strata_serve_config_default(&c);
        c.tp = 8, c.attention_dp = true, c.max_num_batched_tokens = 8192, c.max_num_seqs = 512;
        c.engine = strata_serve_engine_find(engines[i], &err);
        ck_assert_msg(c.engine, "%s", err ? err->message : "");
        uint64_t w = 0, a = 0, pool = 0;
        ck_assert_msg(strata_serve_memory(hw, &m, &c, &w, &a, &pool, &err), "%s", err ? err->message : "");
        ck_assert_uint_eq(w, 64552145920ull);
        ck_assert_uint_eq(a, acts[i]);
        ck_assert_uint_eq(pool, want[i]);
    }
    strata_hw_free(hw);
    g_free(model);
    g_free(path);
}
END_TEST

/* Qwen3-235B-A22B (every layer MoE) in FP8 at TP8 with attention dp, 2,048 batched tokens a rank (trtllm-bench's
 * max_num_tokens for most of the perf page's Qwen3 rows), 1,024 sequences. vLLM's estimate keeps the dense MLP's
 * term: 2048 x (2 x 4096 + (64 + 8) x 128 + 3 x 12288) x 1 B + 1024 x 151936 x 8 B = 111,149,056 +
 * 1,244,659,712 = 1,355,808,768. TensorRT-LLM's has no dense MLP; its fused MoE's call on 8 x 2,048 = 16,384
 * gathered tokens takes 2,292,204,552 B (test_serve's moe_call_bytes_by_hand) and the gathered input 16,384 x
 * (4096 + 8 x 8) = 68,157,440: 2048 x 17,408 + 2,360,361,992 + 1,244,659,712 = 3,640,673,288. */
START_TEST(trtllm_profile_holds_the_fused_moe_call)
{
    GError *err = NULL;
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "dgx-h100.ini", NULL);
    char *model = g_build_filename(STRATA_SOURCE_DIR, "validation", "serving", "models", "qwen3-235b-a22b.model", NULL);
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    strata_serve_model m;
    strata_serve_model_init(&m);
    ck_assert_msg(strata_serve_model_load(&m, model, &err), "%s", err ? err->message : "");
    ck_assert(strata_serve_model_set(&m, "dtype", "f8", NULL));
    const char *engines[2] = {"none", "trtllm"};
    const uint64_t acts[2] = {1355808768ull, 3640673288ull};
    for (int i = 0; i < 2; i++) {
        strata_serve_config c;
        strata_serve_config_default(&c);
        c.tp = 8, c.attention_dp = true, c.max_num_batched_tokens = 2048, c.max_num_seqs = 1024;
        c.engine = strata_serve_engine_find(engines[i], &err);
        ck_assert_msg(c.engine, "%s", err ? err->message : "");
        uint64_t w = 0, a = 0, pool = 0;
        ck_assert_msg(strata_serve_memory(hw, &m, &c, &w, &a, &pool, &err), "%s", err ? err->message : "");
        ck_assert_uint_eq(a, acts[i]);
    }
    strata_hw_free(hw);
    g_free(model);
    g_free(path);
}
END_TEST

/* trtllm-cpp, NIM's TensorRT-LLM C++ executor (serve_engine.c): its scheduler, decode kernel and pool, and no
 * CPU time. The NIM rows' shape, Llama-3-70B FP8 at TP2 on dgx-h100 (8,192 tokens, 1,024 sequences a step):
 * weights 36,328,185,856 B and activations 1,053,818,880 B a rank, 37,382,004,736 B together.
 * vLLM's rule (none): 0.9 x 84,943,715,697 (the driver's 79.11 GiB, dgx-h100.ini) - 37,382,004,736 =
 * 39,067,339,391 B (391.3 truncated). The executor's (KVCacheManager::calculateMaxNumBlocks: 0.9 of the free
 * memory): 0.9 x (84,943,715,697 - 37,382,004,736) = 42,805,539,864 B (864.9 truncated). At 81,920 B a token (80
 * layers x 4 KV heads x 128 x 2, FP8) a block of 16 tokens is 1,310,720 B: 29,806 and 32,658 blocks. A 5,000 +
 * 500-token request reserves ceil(5,500 / 16) = 344 blocks to completion (GUARANTEED_NO_EVICT), so 86 and 94 such
 * requests fit. The NIM page's own figures put 85 in decode at concurrency 100-250 (Little's law: 920 tok/s / 500
 * tokens x 499 x 92.9 ms = 85.5). With what each rank holds (wave 41, serve_holdings.h): vLLM V1 less cuBLAS's
 * 33,554,432 B, 39,033,784,959 B (29,780 blocks, 86 requests); the executor less the CUDA context 286,261,248 B,
 * NCCL's 24 channels 231,211,008 B and its all-reduce workspace 2 x 2 x 16,000,000 B = 581,472,256 B inside its
 * fraction: 0.9 x 46,980,238,705 = 42,282,214,834 B (834.5 truncated), 32,258 blocks, 93 requests. */
START_TEST(trtllm_cpp_runs_nims_executor)
{
    GError *err = NULL;
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "dgx-h100.ini", NULL);
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    strata_serve_model m;
    strata_serve_model_init(&m);
    ck_assert_msg(strata_serve_model_preset(&m, "llama-3-70b", &err), "%s", err ? err->message : "");
    ck_assert(strata_serve_model_set(&m, "dtype", "f8", NULL));
    const strata_serve_engine *e = strata_serve_engine_find("trtllm-cpp", &err);
    ck_assert_msg(e, "%s", err ? err->message : "");
    ck_assert_str_eq(e->scheduler, "trtllm-no-evict-unchunked");
    ck_assert_str_eq(e->decode, "xqa");
    ck_assert_ptr_null(e->allreduce);
    ck_assert(e->pool_of_free && !e->fa3_prefill && !e->graph_max);
    ck_assert_double_eq(strata_serve_engine_step(e, 10e-3, (strata_serve_engine_batch){.requests = 85}, true, 1), 10e-3);
    const char *engines[2] = {"none", "trtllm-cpp"};
    const uint64_t want[2] = {39033784959ull, 42282214834ull}, fits[2] = {86, 93};
    for (int i = 0; i < 2; i++) {
        strata_serve_config c;
        strata_serve_config_default(&c);
        c.tp = 2, c.max_num_batched_tokens = 8192, c.max_num_seqs = 1024;
        c.engine = strata_serve_engine_find(engines[i], NULL);
        uint64_t w = 0, a = 0, pool = 0;
        ck_assert_msg(strata_serve_memory(hw, &m, &c, &w, &a, &pool, &err), "%s", err ? err->message : "");
        ck_assert_uint_eq(w, 36328185856ull);
        ck_assert_uint_eq(a, 1053818880ull);
        ck_assert_uint_eq(pool, want[i]);
        uint64_t block = 16ull * 81920ull;
        ck_assert_uint_eq(pool / block / 344, fits[i]);
    }
    strata_hw_free(hw);
    g_free(path);
}
END_TEST

/* vLLM's KV pool is gpu_memory_utilization of the total the driver reports (vllm-project/vllm v0.11.0,
 * vllm/v1/worker/gpu_worker.py:183-184 and :279-280), the hardware file's reported_capacity, less the weights and
 * the profile's peak; other engines' rows keep capacity.
 * Qwen2.5-7B on a100.ini (reported 79.28 GiB = 85,126,251,807 B, 79.28 x 2^30 rounded), 2,048 tokens and 256
 * sequences (vLLM 0.10.1.1's A100 defaults): weights 7,615,616,512 x 2 = 15,231,233,024 B (28 layers of q/o
 * 3584 x 3584, k/v 3584 x 512 with the three biases, MLP 3 x 3584 x 18944, two norms: 233,057,792 each;
 * untied embeddings 2 x 152,064 x 3,584; the final norm), activations 2,048 x (2 x 3,584 + 36 x 128 + 3 x
 * 18,944) x 2 + 256 x 152,064 x 8 = 592,445,440 B. At 0.25: 21,281,562,951.75 - 15,823,678,464 =
 * 5,457,884,487 B, / (16 x 57,344) = 5,948 blocks; at 0.5: 26,739,447,439 B, 29,143 blocks. The two vLLM
 * 0.10.1.1 start-up logs of that shape (dennislee22/vLLM-benchmarking@b474d1e0, log/vllm-7B-1gpuA10080GB-*.log
 * line 43) print 93,872 and 464,848 tokens: 5,867 and 29,053 blocks, 81 and 90 fewer (the non-torch increase,
 * about 0.07 GiB, not modelled); the datasheet's 80e9 B gave 3.89 and 22.52 GiB (4,551 and 26,350 blocks).
 * Qwen3-32B on h100.ini (reported 79.11 GiB = 84,943,715,697 B), 8,192 tokens and 1,024 sequences: weights
 * 65,524,246,528 B, activations 8,192 x (2 x 5,120 + 80 x 128 + 3 x 25,600) x 2 + 1,024 x 151,936 x 8 =
 * 2,838,495,232 B; 0.9 x 84,943,715,697 = 76,449,344,127.3, less both: 8,086,602,367 B, / (16 x 262,144) =
 * 1,927 blocks, where 80e9 B gave 3,637,258,240 B and 867. A 1,996 + 100-token request holds ceil(2,096 / 16)
 * = 131 blocks at its end: 14 fit at full length (1,834 blocks), against 6 (786) before. TensorRT-LLM's row
 * reads the same reported total, its fraction of what the rest leaves: 0.9 x (84,943,715,697 - 65,524,246,528 -
 * 2,838,495,232) = 0.9 x 16,580,973,937 = 14,922,876,543 B, / 4,194,304 = 3,557 blocks (80e9 gave 2,497).
 * Wave 41 (serve_holdings.h): these files name no NCCL generation, so cuBLAS's workspace is PyTorch's non-sm90
 * default, 8,519,680 B, which vLLM's profile charges: 5,449,364,807 B (5,939 blocks), 26,730,927,759 B (29,134),
 * 8,078,082,687 B (1,925); TensorRT-LLM charges it and the CUDA context (132 x 2,048 x 1 KiB + 9 MiB =
 * 286,261,248 B) inside its fraction: 0.9 x 16,286,193,009 = 14,657,573,708 B (3,494 blocks). Wave 42: h100.ini
 * says compute_capability 9.0, so its cuBLAS workspace is the Hopper 4096 x 8 x 1024 = 33,554,432 B, 25,034,752 B
 * more: vLLM 8,053,047,935 B (/ 4,194,304 = 1,919 blocks), TensorRT-LLM 0.9 x 16,261,158,257 = 14,635,042,431 B
 * (3,489); the A100 rows (8.0) keep the non-Hopper default. */
START_TEST(vllm_pool_is_its_share_of_the_reported_total)
{
    const struct {
        const char *hw, *config, *engine;
        double util;
        uint32_t tokens, seqs;
        uint64_t weights, acts, pool, blocks, per_token;
    } rows[] = {
        {"a100.ini", "qwen2.5-7b.json", "none", 0.25, 2048, 256, 15231233024ull, 592445440ull, 5449364807ull, 5939,
         57344},
        {"a100.ini", "qwen2.5-7b.json", "none", 0.5, 2048, 256, 15231233024ull, 592445440ull, 26730927759ull, 29134,
         57344},
        {"h100.ini", "qwen3-32b.json", "none", 0.9, 8192, 1024, 65524246528ull, 2838495232ull, 8053047935ull, 1919,
         262144},
        {"h100.ini", "qwen3-32b.json", "trtllm", 0.9, 8192, 1024, 65524246528ull, 2838495232ull, 14635042431ull, 3489,
         262144},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        GError *err = NULL;
        char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", rows[i].hw, NULL);
        char *cfg = g_build_filename(STRATA_SOURCE_DIR, "configs", "models", rows[i].config, NULL);
        strata_hw *hw = strata_hw_load(path, NULL, &err);
        ck_assert_msg(hw, "%s", err ? err->message : "");
        strata_serve_model m;
        strata_serve_model_init(&m);
        ck_assert_msg(strata_serve_model_from_config(&m, cfg, &err), "%s", err ? err->message : "");
        strata_serve_config c;
        strata_serve_config_default(&c);
        c.gpu_memory_utilization = rows[i].util, c.max_num_batched_tokens = rows[i].tokens;
        c.max_num_seqs = rows[i].seqs;
        c.engine = strata_serve_engine_find(rows[i].engine, &err);
        ck_assert_msg(c.engine, "%s", err ? err->message : "");
        uint64_t w = 0, a = 0, pool = 0;
        ck_assert_msg(strata_serve_memory(hw, &m, &c, &w, &a, &pool, &err), "%s", err ? err->message : "");
        ck_assert_uint_eq(w, rows[i].weights);
        ck_assert_uint_eq(a, rows[i].acts);
        ck_assert_uint_eq(pool, rows[i].pool);
        ck_assert_uint_eq(strata_serve_kv_bytes_per_token(&m, 1), rows[i].per_token);
        ck_assert_uint_eq(pool / (16 * rows[i].per_token), rows[i].blocks);
        strata_hw_free(hw);
        g_free(cfg);
        g_free(path);
    }
}
END_TEST

/* vLLM's OpenAI server (no --engine): prompt + output > max_model_len (the tiny model's 8,192) is refused on
 * arrival. Three requests, the second of 9,000 prompt tokens (it would fit the pool of 32,692 tokens): 2 served,
 * 1 rejected as too long, the first refused being request 1. Then 8,000 + 192 = 8,192 served and 8,000 + 193
 * refused (strata's old cut served it with 192 outputs). The same three under a closed loop of one client:
 * the refusal frees the client at once. Every request refused: nothing completed, the run ends. */
START_TEST(lengths_vllm_server_refuses_over_max_model_len)
{
    strata_serve_request req[] = {{0, 100, 10}, {0, 9000, 10}, {0, 100, 10}};
    strata_serve_result *r = run("vllm-v1", 1, false, req, 3);
    ck_assert_uint_eq(r->completed, 2);
    ck_assert_uint_eq(r->rejected, 1);
    ck_assert_uint_eq(r->rejected_too_long, 1);
    ck_assert_uint_eq(r->too_long_first, 1);
    strata_serve_result_free(r);
    strata_serve_request sum[] = {{0, 8000, 192}, {0, 8000, 193}};
    r = run("vllm-v1", 1, false, sum, 2);
    ck_assert_uint_eq(r->completed, 1);
    ck_assert_uint_eq(r->rejected_too_long, 1);
    ck_assert_uint_eq(r->too_long_first, 1);
    strata_serve_result_free(r);
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 2, c.concurrency = 1;
    r = run_config(&c, "vllm-v1", req, 3);
    ck_assert_uint_eq(r->completed, 2);
    ck_assert_uint_eq(r->rejected, 1);
    ck_assert_uint_eq(r->rejected_too_long, 1);
    strata_serve_result_free(r);
    strata_serve_request all[] = {{0, 9000, 1}, {1, 9000, 1}};
    r = run("vllm-v1", 1, false, all, 2);
    ck_assert_uint_eq(r->completed, 0);
    ck_assert_uint_eq(r->rejected, 2);
    ck_assert_uint_eq(r->rejected_too_long, 2);
    strata_serve_result_free(r);
}
END_TEST

/* SGLang 0.4's batch_is_full (the sglang-v0.4 policy, no engine: no lag): sglang_admits_against_expected_outputs'
 * stream, 10 requests of 4 + 4,084 tokens at 0, budget 64, 64 sequences, the pool 8,086 blocks of 4 tokens, 32,344
 * tokens. Step 1 (index 0) takes 7 as sglang-v0.3 does (32,344 - 7 x 4,088 = 3,728 left) and the 8th is refused for
 * tokens (4,088 >= 3,728): NO_TOKEN sets batch_is_full. sglang-v0.3 admits the other 3 at step 2; sglang-v0.4 tries
 * no prefill until a running request leaves: the 7 decode together (7 x 1,022 = 7,154 blocks at most: no retract)
 * from index 1 to index 4,083, their 4,084th tokens, and leave; index 4,084 finds the batch empty, clears
 * batch_is_full and prefills the 3 (12 tokens; new_token_ratio at its floor 0.098 after 4,083 decode steps of
 * 0.0010033, nothing running: 3 x 4,088 fit), which decode at indexes 4,085 to 8,167: 8,168 steps, no
 * preemption. */
START_TEST(sglang_v04_waits_for_a_finish_after_a_refusal)
{
    strata_serve_request req[10];
    for (int i = 0; i < 10; i++)
        req[i] = (strata_serve_request){0, 4, 4084};
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 64, c.max_num_seqs = 64;
    strata_serve_result *r = run_config(&c, "sglang-v0.4", req, 10);
    ck_assert_uint_eq(r->pool_blocks, 8086);
    const guint at[] = {0, 1, 2, 4083, 4084, 4085, 8167};
    const uint32_t want[][3] = {{28, 7, 0}, {7, 0, 7}, {7, 0, 7}, {7, 0, 7}, {12, 3, 0}, {3, 0, 3}, {3, 0, 3}};
    for (guint i = 0; i < G_N_ELEMENTS(at); i++)
        ck_assert_msg(step(r, at[i])->tokens == want[i][0] && step(r, at[i])->prefills == want[i][1] &&
                          step(r, at[i])->decodes == want[i][2],
                      "step index %u: %u tokens, %u prefills, %u decodes", at[i], step(r, at[i])->tokens,
                      step(r, at[i])->prefills, step(r, at[i])->decodes);
    ck_assert_uint_eq(r->steps_log->len, 8168);
    ck_assert_uint_eq(r->preemptions, 0);
    ck_assert_uint_eq(r->completed, 10);
    strata_serve_result_free(r);
    /* the engine row runs this policy, with sglang-v0.3's budget (chunked_prefill_size 8192) */
    const strata_serve_engine *e = strata_serve_engine_find("sglang-v0.4", NULL);
    ck_assert(e && e->mode == SERVE_ENGINE_OVERLAP && e->overlap_lag);
    ck_assert_str_eq(e->scheduler, "sglang-v0.4");
    ck_assert_uint_eq(strata_serve_scheduler_find("sglang-v0.4", NULL)->default_budget(131072), 8192);
}
END_TEST

/* SGLang 0.4's add_one_req_ignore_eos (sglang-v0.4 without prefix caching, SGLang's --disable-radix-cache): 6
 * requests A of 4 + 4,084 tokens, then 5 B of 4 + 2,000, at 0; budget 64, 64 sequences, the pool 32,344 tokens.
 * The estimate (prefix caching on, add_one_req): the A take 6 x 4,088 = 24,528, leaving 7,816; each B 2,004: 3
 * fit (1,804 left), the 4th is refused (2,004 >= 1,804): 9 prefills, 36 tokens. The look ahead: the j-th A
 * passes while 32,344 - 4j - 4,084 j > 0 (j <= 7). The B go first in req_states (2,000 left < 4,084, inserted
 * at the front); with k of them the entry before the first A checks 32,344 - 4 (6 + k) + 4 (k - 1) - 4,084 x 7
 * = 3,728 > 0 (its decode steps the next entry's tokens left, the source's reading), the earlier B's less, the
 * A's 32,344 - 24 - 4,084 x 6 = 7,816 > 0: every B passes; rem_total after the 4th B is 1,804 - 2,004 < 0, so
 * budget_state answers NO_TOKEN after taking it: 10 prefills, 40 tokens. */
START_TEST(sglang_v04_ignore_eos_looks_ahead)
{
    strata_serve_request req[11];
    for (int i = 0; i < 11; i++)
        req[i] = (strata_serve_request){0, 4, i < 6 ? 4084 : 2000};
    const bool prefix[2] = {true, false};
    const uint32_t tokens[2] = {36, 40}, prefills[2] = {9, 10};
    for (int k = 0; k < 2; k++) {
        strata_serve_config c;
        strata_serve_config_default(&c);
        c.max_num_batched_tokens = 64, c.max_num_seqs = 64, c.prefix_caching = prefix[k];
        strata_serve_result *r = run_config(&c, "sglang-v0.4", req, 11);
        ck_assert_uint_eq(r->pool_blocks, 8086);
        ck_assert_msg(step(r, 0)->tokens == tokens[k] && step(r, 0)->prefills == prefills[k],
                      "prefix caching %d: %u tokens, %u prefills", prefix[k], step(r, 0)->tokens,
                      step(r, 0)->prefills);
        ck_assert_uint_eq(r->completed, 11);
        strata_serve_result_free(r);
    }
}
END_TEST

/* The sglang-v0.4 engine's lag where the step after the finish is a prefill: the finished request leaves without
 * its lagged decode (SGLang's filter_batch before the next decode). A(4, 1) and B(6, 2) at 0, budget 8, two
 * sequences: index 0 A whole (4) and B's first 4 (cut: rem_chunk 0), A done (its one token); index 1 B's last 2, a
 * prefill alone (A not in it); index 2 B's decode alone (A gone: it finished before index 1 ran), B done: 8, 2, 1
 * tokens with 0, 0, 1 decodes (the lag of a decode step: overlap_lag_runs_one_decode_more). */
START_TEST(sglang_v04_finished_request_skips_a_prefill)
{
    strata_serve_request pre[2] = {{0, 4, 1}, {0, 6, 2}};
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 2;
    /* the row's scheduling alone: a copy that names no server hops nor eager chain (with the hops A, the shorter
     * prompt, is received 0.16 us of tokenization before B) */
    strata_serve_engine row = *strata_serve_engine_find("sglang-v0.4", NULL);
    row.name = "sglang-v0.4-no-hops";
    row.frontend = NULL, row.eager = NULL;
    c.engine = &row;
    strata_serve_result *r = run_config(&c, "sglang-v0.4", pre, 2);
    const uint32_t skip[][3] = {{8, 2, 0}, {2, 1, 0}, {1, 0, 1}};
    check_steps(r, skip, G_N_ELEMENTS(skip));
    ck_assert_uint_eq(r->completed, 2);
    strata_serve_result_free(r);
}
END_TEST

/* The sglang-v0.4 engine receives requests when its loop forms a step (recv_lag): event_loop_overlap forms step n+1
 * while the GPU runs step n, right after step n-1's results are processed (scheduler.py:399-434), so a request
 * that arrives during step n after that joins step n+2. --step-overhead 10 ms stands for a GPU-bound step: a step
 * takes max(gpu, cpu) + 10 ms, its loop's CPU work cpu = 1 ms + 1.6 us a request + 5.4 ns a prompt token + 25 ns a
 * generated token. A(4, 3) at 0, B(4, 2) at 5 ms, C(4, 1) at 1 s; budget 8, two sequences. Index 0 (at 0) A's
 * prompt; the next batch formed at 0 + cpu = 1 ms + 1.6 us + 21.6 ns = 1.0016216 ms, before B came: index 1 (at
 * about 11 ms, B arrived) A's decode alone; index 2 B's prompt (formed at index 1's start + its cpu, after 5 ms);
 * index 3 A's and B's decodes (A's third token, B's second: both done); index 4 their dropped decodes
 * (overlap_lag); then idle until C: an idle loop receives a request as it comes, so index 5 starts at 1 s with C's
 * prompt. TTFT: A index 0's end, B index 2's end less 5 ms, C index 5's length. Without recv_lag (the row copied,
 * the flag off) B's prompt is index 1 and its TTFT index 1's end less 5 ms; index 2 both decode (B done), 3 A's
 * decode and B's dropped one (A done), 4 A's dropped one, 5 C's prompt. */
START_TEST(sglang_v04_receives_a_step_late)
{
    strata_serve_request req[3] = {{0, 4, 3}, {5e-3, 4, 2}, {1.0, 4, 1}};
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 2, c.step_overhead = 10e-3;
    c.engine = strata_serve_engine_find("sglang-v0.4", NULL);
    ck_assert(c.engine->recv_lag);
    strata_serve_result *r = run_config(&c, "sglang-v0.4", req, 3);
    const uint32_t lag[][3] = {{4, 1, 0}, {1, 0, 1}, {4, 1, 0}, {2, 0, 2}, {2, 0, 2}, {4, 1, 0}};
    check_steps(r, lag, G_N_ELEMENTS(lag));
    ck_assert(step(r, 0)->dt > 10e-3 + 1.0016216e-3 - 1e-12 && step(r, 1)->t > 5e-3);
    /* with the row's server hops (serve_frontend.h): each request received 2.63632 ms after its send (2.636 ms +
     * 4 tokens x 0.08 us), each token read 3.954 ms after its step; B, received at 7.63632 ms, still after the
     * batch formed at 2.63632 + 1.0016216 ms */
    const double recv = 2.63632e-3, emit = 3.954e-3;
    ck_assert_double_eq_tol(step(r, 0)->t, recv, 1e-15);
    ck_assert_double_eq_tol(step(r, 5)->t, 1.0 + recv, 1e-12);
    double ttft[3] = {step(r, 0)->t + step(r, 0)->dt, step(r, 2)->t + step(r, 2)->dt - 5e-3,
                      step(r, 5)->t + step(r, 5)->dt - 1.0};
    ck_assert_double_eq_tol(r->ttft.mean, (ttft[0] + ttft[1] + ttft[2]) / 3 + emit, 1e-12);
    ck_assert_uint_eq(r->completed, 3);
    strata_serve_result_free(r);
    strata_serve_engine e = *c.engine;
    e.recv_lag = false;
    c.engine = &e;
    r = run_config(&c, "sglang-v0.4", req, 3);
    const uint32_t none[][3] = {{4, 1, 0}, {4, 1, 0}, {2, 0, 2}, {2, 0, 2}, {1, 0, 1}, {4, 1, 0}};
    check_steps(r, none, G_N_ELEMENTS(none));
    ttft[0] = step(r, 0)->t + step(r, 0)->dt, ttft[1] = step(r, 1)->t + step(r, 1)->dt - 5e-3;
    ttft[2] = step(r, 5)->t + step(r, 5)->dt - 1.0;
    ck_assert_double_eq_tol(r->ttft.mean, (ttft[0] + ttft[1] + ttft[2]) / 3 + emit, 1e-12);
    strata_serve_result_free(r);
}
END_TEST

/* vLLM V1's async scheduling (--async-scheduling): EngineCore's step_with_batch_queue forms and launches step n+1
 * before it blocks on step n's output, so the loop receives new requests, and forms step n+2, only once step n is
 * done, while step n+1 runs: a request that arrives after a step's start joins the step after the next (the loop's
 * CPU time is 0 with no --engine). --step-overhead 10 ms makes every step longer than 10 ms. A(4, 3) at 0, B(4, 2) at
 * 5 ms, C(4, 1) at 1 s; budget 8, two sequences. Async: index 0 (at 0) A's prompt, the next step formed at 0, before
 * B came: index 1 A's decode alone; index 2 (formed at index 1's start, after 5 ms) A's decode and B's prompt, A
 * done (its third token); index 3 B's decode, B done (no decode more: schedule() skips a request whose previous
 * step reaches max_tokens); idle until C, received as it comes: index 4 C's prompt. Sync (the flag off): index 1 A's
 * decode and B's prompt, index 2 both decodes (both done), index 3 C's prompt. B's TTFT is the end of its prompt's
 * step less 5 ms: index 2's async, index 1's sync. The default row's server hops: each request received recv(4) =
 * 5.07984 ms after its send (A at 5.07984 ms, B at 10.07984 ms: still after step 0's start, before index 2 is
 * formed), each token read emit = 5.07952 ms after its step; C's TTFT is recv + its step + emit. */
START_TEST(vllm_v1_async_scheduling_receives_a_step_late)
{
    strata_serve_request req[3] = {{0, 4, 3}, {5e-3, 4, 2}, {1.0, 4, 1}};
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 2, c.step_overhead = 10e-3, c.async_scheduling = true;
    strata_serve_result *r = run_config(&c, "vllm-v1", req, 3);
    const uint32_t lag[][3] = {{4, 1, 0}, {1, 0, 1}, {5, 1, 1}, {1, 0, 1}, {4, 1, 0}};
    check_steps(r, lag, G_N_ELEMENTS(lag));
    const double recv = v1_recv(4), emit = v1_emit();
    ck_assert_double_eq_tol(recv, 5.07984e-3, 1e-15);
    ck_assert_double_eq_tol(emit, 5.07952e-3, 1e-15);
    ck_assert(step(r, 0)->dt > 10e-3 && step(r, 0)->t == recv && step(r, 4)->t == 1.0 + recv);
    double ttft[3] = {step(r, 0)->t + step(r, 0)->dt, step(r, 2)->t + step(r, 2)->dt - 5e-3,
                      recv + step(r, 4)->dt};
    ck_assert_double_eq_tol(r->ttft.mean, (ttft[0] + ttft[1] + ttft[2]) / 3 + emit, 1e-12);
    ck_assert_uint_eq(r->completed, 3);
    strata_serve_result_free(r);
    c.async_scheduling = false;
    r = run_config(&c, "vllm-v1", req, 3);
    const uint32_t sync[][3] = {{4, 1, 0}, {5, 1, 1}, {2, 0, 2}, {4, 1, 0}};
    check_steps(r, sync, G_N_ELEMENTS(sync));
    ttft[1] = step(r, 1)->t + step(r, 1)->dt - 5e-3, ttft[2] = recv + step(r, 3)->dt;
    ttft[0] = step(r, 0)->t + step(r, 0)->dt;
    ck_assert_double_eq_tol(r->ttft.mean, (ttft[0] + ttft[1] + ttft[2]) / 3 + emit, 1e-12);
    strata_serve_result_free(r);
}
END_TEST

/* --async-scheduling is vLLM V1's loop: refused (exit 2) with another engine's row or another engine's policy;
 * taken with neither. */
START_TEST(vllm_v1_async_scheduling_only_without_an_engine)
{
    const char *hw = STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini";
    strata_cli_result o = strata_test_cli("serve", "--hw", hw, "--model", "llama-3-8b", "--poisson",
                                          "n=4,rate=0,prompt=100,output=4", "-q", "--async-scheduling", "--engine",
                                          "sglang-v0.4", NULL);
    ck_assert_int_eq(o.status, 2);
    ck_assert_msg(strstr(o.err, "--async-scheduling: expected no --engine and the vllm-v1 scheduler"), "%s", o.err);
    strata_cli_result_clear(&o);
    o = strata_test_cli("serve", "--hw", hw, "--model", "llama-3-8b", "--poisson", "n=4,rate=0,prompt=100,output=4",
                        "-q", "--async-scheduling", "--scheduler", "vllm-v0", NULL);
    ck_assert_int_eq(o.status, 2);
    ck_assert_msg(strstr(o.err, "got --engine none, --scheduler vllm-v0"), "%s", o.err);
    strata_cli_result_clear(&o);
    o = strata_test_cli("serve", "--hw", hw, "--model", "llama-3-8b", "--poisson", "n=4,rate=0,prompt=100,output=4",
                        "-q", "--async-scheduling", NULL);
    ck_assert_msg(o.status == 0, "%s", o.err);
    strata_cli_result_clear(&o);
}
END_TEST

/* The sglang-v0.4 row's pool (pool_of_static): mem_fraction_static of the device less the weights, no profile
 * run first. The tiny model at budget 64 and 64 sequences: the vLLM rule takes activations of 64 tokens x (2 x 8
 * hidden + 24 QKV + 24 MLP) = 4,096 bf16 elements, 8,192 B, and 64 x 8 fp32 logits and probabilities x 8 B =
 * 4,096 B: 12,288 B, 96 blocks of 128 B (4 tokens x 32 B) more than the 8,086 blocks
 * sglang_admits_against_expected_outputs asserts: 8,182. mem_fraction_static by TP (server_args.py:157-168). */
START_TEST(sglang_v04_pool_of_static)
{
    strata_serve_request req[1] = {{0, 4, 1}};
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 64, c.max_num_seqs = 64;
    c.engine = strata_serve_engine_find("sglang-v0.4", NULL);
    strata_serve_result *r = run_config(&c, "sglang-v0.4", req, 1);
    ck_assert_uint_eq(r->pool_blocks, 8182);
    strata_serve_result_free(r);
    const strata_serve_engine *e = strata_serve_engine_find("sglang-v0.4", NULL);
    const uint32_t tp[] = {1, 2, 3, 4, 7, 8, 15, 16};
    const double frac[] = {0.88, 0.87, 0.87, 0.85, 0.85, 0.81, 0.81, 0.79};
    for (guint i = 0; i < G_N_ELEMENTS(tp); i++)
        ck_assert_double_eq(e->default_utilization(tp[i]), frac[i]);
    ck_assert(!strata_serve_engine_find("sglang-v0.3", NULL)->default_utilization);
    /* the CLI takes it where --gpu-memory-utilization is not given: 0.81 at tp 8, the option's value else */
    strata_cli_result o = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", "--model",
                                          "llama-3-8b", "--poisson", "n=4,rate=0,prompt=100,output=4", "-q",
                                          "--engine", "sglang-v0.4", "--tp", "8", "--json", "-", NULL);
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_msg(strstr(o.out, "\"gpu_memory_utilization\" : 0.81"), "%s", o.out);
    strata_cli_result_clear(&o);
    o = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", "--model", "llama-3-8b",
                        "--poisson", "n=4,rate=0,prompt=100,output=4", "-q", "--engine", "sglang-v0.4", "--tp", "8",
                        "--gpu-memory-utilization", "0.5", "--json", "-", NULL);
    ck_assert_msg(o.status == 0, "%s", o.err);
    ck_assert_msg(strstr(o.out, "\"gpu_memory_utilization\" : 0.5"), "%s", o.out);
    strata_cli_result_clear(&o);
}
END_TEST

/* SGLang 0.4.0's max_running_requests where --max-num-seqs is not given: min(pool // 2, min(max(int(pool /
 * context_len x 512), 2048), 4096) + 1). Pool 414,577 tokens (Llama-3-8B on an 80 GB H100: 0.88 x 80 GB - 16.06 GB
 * of weights = 54,339,477,504 B at 131,072 B a token), context 8,192: 25,911 -> 4,096, 4,097 (half the pool
 * 207,288); context 131,072: 1,619 -> 2,048, 2,049. Pool 3,000 at 8,192: 2,049 against half the pool, 1,500.
 * --max-num-seqs wins. h100.ini gives the total the driver reports (79.11 GiB = 84,943,715,697 B, which SGLang's
 * mem_get_info reads): 0.88 x 84,943,715,697 - 16,060,522,496 = 58,689,947,317 B, 447,768 tokens: 27,985 at
 * 8,192 and 1,749 at 131,072, the same 4,097 and 2,049. Wave 41: SGLang's total_gpu_memory is what the CUDA
 * context left (serve_holdings.h), 0.88 x 286,261,248 B less: 58,438,037,419 B, 445,846 tokens, the same. */
START_TEST(sglang_v04_max_running_from_the_pool)
{
    const strata_serve_engine *e = strata_serve_engine_find("sglang-v0.4", NULL);
    ck_assert_uint_eq(e->default_max_running(414577, 8192), 4097);
    ck_assert_uint_eq(e->default_max_running(414577, 131072), 2049);
    ck_assert_uint_eq(e->default_max_running(3000, 8192), 1500);
    ck_assert(!strata_serve_engine_find("sglang-v0.3", NULL)->default_max_running);
    const char *len[3] = {NULL, "--set=max_model_len=131072", "--max-num-seqs=300"};
    const char *want[3] = {"\"max_num_seqs\" : 4097", "\"max_num_seqs\" : 2049", "\"max_num_seqs\" : 300"};
    for (int i = 0; i < 3; i++) {
        strata_cli_result o = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model",
                                              "llama-3-8b", "--poisson", "n=4,rate=0,prompt=100,output=4", "-q",
                                              "--engine", "sglang-v0.4", "--json", "-", len[i], NULL);
        ck_assert_msg(o.status == 0, "%s", o.err);
        ck_assert_msg(strstr(o.out, "\"kv_pool_bytes\" : 58438037419"), "%s", o.out);
        ck_assert_msg(strstr(o.out, want[i]), "%s", o.out);
        strata_cli_result_clear(&o);
    }
}
END_TEST

/* SGLang 0.4's max_running_requests follows --kv-blocks (review of wave 29): 20 blocks of 16 tokens is SGLang's
 * --max-total-tokens 320, max_running_requests min(320 // 2, min(max(int(320 / 8,192 x 512), 2,048), 4,096) + 1)
 * = min(160, 2,049) = 160 (it was 4,097, from the memory's pool of 414,577 tokens that --kv-blocks replaces). */
START_TEST(sglang_v04_max_running_follows_kv_blocks)
{
    strata_cli_result o = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/h100.ini", "--model",
                                          "llama-3-8b", "--poisson", "n=4,rate=0,prompt=100,output=4", "-q",
                                          "--engine", "sglang-v0.4", "--kv-blocks", "20", "--json", "-", NULL);
    ck_assert_msg(o.status == 0, "%s", o.err);
    const char *pool = strstr(o.out, "\"kv_pool_bytes\""), *seqs = strstr(o.out, "\"max_num_seqs\"");
    ck_assert_msg(pool && g_str_has_prefix(pool, "\"kv_pool_bytes\" : 41943040"), "%.40s", pool); /* 320 x 131,072 */
    ck_assert_msg(seqs && g_str_has_prefix(seqs, "\"max_num_seqs\" : 160,"), "%.40s", seqs);
    strata_cli_result_clear(&o);
}
END_TEST

/* The kv_pool_bytes figure of o's first run ("\"kv_pool_bytes\" : N"), a new string. */
static char *pool_figure(const char *out)
{
    const char *at = strstr(out, "\"kv_pool_bytes\" : ");
    ck_assert(at);
    return g_strndup(at, strcspn(at, ",\n"));
}

/* SGLang 0.4's mem_fraction_static follows each --sweep point's tp (review of wave 29): --sweep tp=1,8 without
 * --gpu-memory-utilization, the tp 8 point's pool is --tp 8's, at 0.81 (it kept the options' tp 1 and 0.88,
 * 5.6 GB more pool a rank). */
START_TEST(sglang_v04_sweep_points_take_their_tp_s_fraction)
{
    strata_cli_result o = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", "--model",
                                          "llama-3-8b", "--poisson", "n=4,rate=0,prompt=100,output=4", "-q",
                                          "--engine", "sglang-v0.4", "--tp", "8", "--json", "-", NULL);
    ck_assert_msg(o.status == 0, "%s", o.err);
    char *tp8 = pool_figure(o.out);
    strata_cli_result_clear(&o);
    o = strata_test_cli("serve", "--hw", STRATA_SOURCE_DIR "/configs/hw/dgx-h100.ini", "--model", "llama-3-8b",
                        "--poisson", "n=4,rate=0,prompt=100,output=4", "-q", "--engine", "sglang-v0.4", "--sweep",
                        "tp=1,8", "--json", "-", NULL);
    ck_assert_msg(o.status == 0, "%s", o.err);
    char *tp1 = pool_figure(o.out);
    ck_assert_str_ne(tp1, tp8);
    ck_assert_msg(strstr(strstr(o.out, tp1) + strlen(tp1), tp8), "%s not in the sweep's tp 8 run", tp8);
    strata_cli_result_clear(&o);
    g_free(tp1);
    g_free(tp8);
}
END_TEST

static void check_lengths(const char *engine, uint64_t pool, uint32_t prompt, uint32_t output, bool served,
                          uint32_t want_prompt, uint32_t want_output)
{
    GError *err = NULL;
    const strata_serve_engine *e = engine ? strata_serve_engine_find(engine, &err) : NULL;
    ck_assert_msg(!engine || e, "%s", err ? err->message : "");
    uint32_t p = prompt, o = output;
    ck_assert_msg(strata_serve_engine_lengths(e, 1024, pool, &p, &o) == served, "%s %u + %u",
                  engine ? engine : "vllm-v1", prompt, output);
    if (served) {
        ck_assert_uint_eq(p, want_prompt);
        ck_assert_uint_eq(o, want_output);
    }
}

/* Each engine's rule at max_model_len 1,024. vLLM's server (no --engine, vllm-v0): prompt + output <= 1,024
 * served as is, 1,000 + 25 refused. SGLang 0.3, pool 100,000 tokens: max_req_input_len = min(1,023, 99,999) =
 * 1,023; a prompt of 1,024 refused, one of 1,023 kept at 1,023 with one output (1,023 - 1 - 1,023 < 1),
 * 1,000 + 100 gets min(100, 1,023 - 1 - 1,000) = 22 outputs; pool 500 tokens: max_req_input_len 499, a prompt
 * of 600 cut to 499 (one output), 400 + 200 gets 499 - 1 - 400 = 98. TensorRT-LLM: a prompt of 1,025 refused,
 * 1,000 + 100 cut to 1,000 + 24, 1,024 + 10 to one output. */
START_TEST(lengths_follow_each_engine)
{
    check_lengths(NULL, 100000, 1000, 24, true, 1000, 24);
    check_lengths(NULL, 100000, 1000, 25, false, 0, 0);
    check_lengths("vllm-v0", 100000, 1025, 1, false, 0, 0);
    check_lengths("sglang-v0.3", 100000, 1024, 10, false, 0, 0);
    check_lengths("sglang-v0.3", 100000, 1023, 10, true, 1023, 1);
    check_lengths("sglang-v0.3", 100000, 1000, 100, true, 1000, 22);
    check_lengths("sglang-v0.3", 100000, 1000, 10, true, 1000, 10);
    check_lengths("sglang-v0.3", 500, 600, 50, true, 499, 1);
    check_lengths("sglang-v0.3", 500, 400, 200, true, 400, 98);
    check_lengths("trtllm", 100000, 1025, 1, false, 0, 0);
    check_lengths("trtllm-cpp", 100000, 1000, 100, true, 1000, 24);
    check_lengths("trtllm-cpp", 100000, 1024, 10, true, 1024, 1);
    check_lengths("trtllm", 100000, 1000, 24, true, 1000, 24);
    /* SGLang 0.4 refuses no text prompt. Pool 100,000: max_req_len = min(1,023, 99,999) = 1,023, max_req_input_len
     * 1,018: 1,024 (and 5,000) cut to 1,018 with min(10, 1,023 - 1,018 - 1) = 4 outputs; 1,000 + 100 gets
     * min(100, 1,023 - 1,000 - 1) = 22. Pool 500: max_req_len 499, input 494: 600 cut to 494 with 4 outputs,
     * 400 + 200 gets 499 - 400 - 1 = 98. */
    check_lengths("sglang-v0.4", 100000, 1024, 10, true, 1018, 4);
    check_lengths("sglang-v0.4", 100000, 5000, 10, true, 1018, 4);
    check_lengths("sglang-v0.4", 100000, 1000, 100, true, 1000, 22);
    check_lengths("sglang-v0.4", 100000, 1000, 10, true, 1000, 10);
    check_lengths("sglang-v0.4", 500, 600, 50, true, 494, 4);
    check_lengths("sglang-v0.4", 500, 400, 200, true, 400, 98);
}
END_TEST

/* serve --clock duty's filter (serve_clock.h) by hand: tau 0.1 s, d0 0.5,
 * floor 0.8, pieces of tau / 16 = 6.25 ms, x = 1 while a step runs.
 * Compute-bound steps (sustained = peak / 0.8) from idle: 62.5 ms in 10
 * pieces, all at the peak (d reaches 1 - e^-0.625 = 0.464739 < 0.5); two
 * of 6.25 ms at the peak (d = 1 - e^-0.6875 = 0.497168, then 1 - e^-0.75
 * = 0.527633); the next at 1 - (0.527633 - 0.5) / 0.5 x 0.2 = 0.988947 of
 * it, 6.25 / 0.988947 = 6.319856 ms. The mean clock over the
 * compute-bound time of the four: 81.25 / (75 + 6.319856) = 0.999141.
 * After 1 s idle (d x e^-10) a lone step runs at the peak again; a step
 * of 2 s (20 tau) ends saturated, and the next runs at the floor, 6.25 /
 * 0.8 = 7.8125 ms. A memory-bound step (its time the same at both clocks)
 * keeps its time whatever d. */
START_TEST(duty_clock_by_hand)
{
    strata_serve_clock *k = strata_serve_clock_new(0.1, 0.5, 0.8);
    ck_assert_double_eq_tol(strata_serve_clock_step(k, 0, 0.0625, 0.0625 / 0.8), 0.0625, 1e-15);
    ck_assert_double_eq_tol(strata_serve_clock_duty(k), 0.4647385714810097, 1e-12);
    ck_assert_double_eq_tol(strata_serve_clock_step(k, 0.0625, 0.00625, 0.0078125), 0.00625, 1e-15);
    ck_assert_double_eq_tol(strata_serve_clock_duty(k), 0.4971684220290591, 1e-12);
    ck_assert_double_eq_tol(strata_serve_clock_step(k, 0.06875, 0.00625, 0.0078125), 0.00625, 1e-15);
    ck_assert_double_eq_tol(strata_serve_clock_duty(k), 0.5276334472589853, 1e-12);
    ck_assert_double_eq_tol(strata_serve_clock_step(k, 0.075, 0.00625, 0.0078125), 0.006319855760335046, 1e-12);
    double mean, least;
    strata_serve_clock_stats(k, &mean, &least);
    ck_assert_double_eq_tol(mean, 0.08125 / (0.075 + 0.006319855760335046), 1e-12);
    ck_assert_double_eq_tol(least, 0.9889466210964059, 1e-12);
    double t = 0.075 + 0.006319855760335046 + 1.0;
    ck_assert_double_eq_tol(strata_serve_clock_step(k, t, 0.00625, 0.0078125), 0.00625, 1e-15);
    t += 0.00625;
    double sat = strata_serve_clock_step(k, t, 2.0, 2.5); /* between the peak's time and the floor's */
    ck_assert_msg(sat > 2.0 && sat < 2.5, "%g", sat);
    ck_assert(strata_serve_clock_duty(k) > 1 - 1e-6);
    ck_assert_double_eq_tol(strata_serve_clock_step(k, t + sat, 0.00625, 0.0078125), 0.0078125, 1e-9);
    ck_assert_double_eq_tol(strata_serve_clock_step(k, t + sat + 0.0078125, 0.00625, 0.00625), 0.00625, 1e-15);
    strata_serve_clock_free(k);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_sched");
    TCase *tc = tcase_create("serve_sched");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, v0_prefill_steps_apart_from_decode_steps);
    tcase_add_test(tc, step_time_split_by_kind);
    tcase_add_test(tc, v0_multi_step_runs_the_decode_batch_n_steps);
    tcase_add_test(tc, v0_chunks_cut_to_whole_blocks_with_prefix_caching);
    tcase_add_test(tc, policies_defaults_and_choices);
    tcase_add_test(tc, cli_picks_and_refuses_as_vllm_does);
    tcase_add_test(tc, v0_engine_chunks_long_context_off_rocm);
    tcase_add_test(tc, trtllm_no_evict_reserves_each_request_to_completion);
    tcase_add_test(tc, trtllm_unchunked_places_whole_prompts);
    tcase_add_test(tc, cuda_graph_padding_pads_decode_batches);
    tcase_add_test(tc, sglang_prefills_alone_cut_at_the_chunk);
    tcase_add_test(tc, sglang_admits_against_expected_outputs);
    tcase_add_test(tc, sglang_v04_waits_for_a_finish_after_a_refusal);
    tcase_add_test(tc, sglang_v04_finished_request_skips_a_prefill);
    tcase_add_test(tc, sglang_v04_receives_a_step_late);
    tcase_add_test(tc, vllm_v1_async_scheduling_receives_a_step_late);
    tcase_add_test(tc, vllm_v1_async_scheduling_only_without_an_engine);
    tcase_add_test(tc, sglang_v04_ignore_eos_looks_ahead);
    tcase_add_test(tc, sglang_v04_pool_of_static);
    tcase_add_test(tc, sglang_v04_max_running_from_the_pool);
    tcase_add_test(tc, sglang_v04_max_running_follows_kv_blocks);
    tcase_add_test(tc, sglang_v04_sweep_points_take_their_tp_s_fraction);
    tcase_add_test(tc, trtllm_pool_is_its_fraction_of_the_free_memory);
    tcase_add_test(tc, trtllm_profile_holds_the_fused_moe_call);
    tcase_add_test(tc, trtllm_cpp_runs_nims_executor);
    tcase_add_test(tc, vllm_pool_is_its_share_of_the_reported_total);
    tcase_add_loop_test(tc, overlap_lag_runs_one_decode_more, 0, G_N_ELEMENTS(lag_rows));
    tcase_add_test(tc, itl_pools_every_gap_tpot_averages_each_request);
    tcase_add_test(tc, v0_multi_step_streams_a_run_as_one_chunk);
    tcase_add_test(tc, lengths_vllm_server_refuses_over_max_model_len);
    tcase_add_test(tc, lengths_follow_each_engine);
    tcase_add_test(tc, duty_clock_by_hand);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
