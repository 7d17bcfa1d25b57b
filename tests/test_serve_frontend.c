/*
 * test_serve_frontend.c: the path from a request's send to its first
 * streamed token outside the forward, against values derived by hand: the
 * engines' server hops (serve_frontend.h), the host chain of an eager
 * forward with prefill tokens (serve_eager.h), and the TTFT of one request
 * at concurrency 1 under the sglang-v0.4 row term by term.
 */
#include <math.h>
#include <string.h>
#include "serve/serve.h"
#include "serve/serve_chat.h"
#include "serve/serve_eager.h"
#include "serve/serve_engine.h"
#include "serve/serve_frontend.h"
#include "serve/serve_frontend_queue.h"
#include "serve/serve_release.h"
#include "serve/serve_scheduler.h"
#include "testutil.h"
#include "serve_fixture.h"

/* SGLang's rows: tt-inference-server #3560's 9.54 ms TTFT less its 2.632 ms mock forward and 0.308 ms of a step's
 * host work is 6.600 ms of hops at 128 prompt tokens; tokenization 0.08 us a token (20 s a GB at 4 B a token), so
 * the fixed part is 6.600 - 0.01024 = 6.58976 ms, taken as 6.590 ms: recv 2/5 = 2.636 ms + 0.08 us a token, emit
 * 3/5 = 3.954 ms. recv(0) + emit = 6.590 ms; at 128 tokens 6.60024 ms; at 1,000, recv 2.716 ms. The default row
 * (no --engine, vLLM V1) names "vllm-v1" (below); the other rows nothing. */
START_TEST(sglang_hops_by_hand)
{
    const char *sgl[] = {"sglang-v0.3", "sglang-v0.4", "sglang-v0.5"};
    for (size_t i = 0; i < G_N_ELEMENTS(sgl); i++) {
        const strata_serve_frontend *f = strata_serve_engine_frontend(strata_serve_engine_find(sgl[i], NULL));
        ck_assert_msg(f, "%s", sgl[i]);
        ck_assert_double_eq_tol(strata_serve_frontend_recv(f, 0), 2.636e-3, 1e-15);
        ck_assert_double_eq_tol(strata_serve_frontend_recv(f, 1000), 2.716e-3, 1e-15);
        ck_assert_double_eq_tol(strata_serve_frontend_emit(f), 3.954e-3, 1e-15);
        ck_assert_double_eq_tol(strata_serve_frontend_recv(f, 128) + strata_serve_frontend_emit(f), 6.60024e-3,
                                1e-15);
    }
    const char *none[] = {"none", "vllm-v0", "vllm-v0.5", "trtllm", "trtllm-cpp", "lmdeploy-turbomind"};
    for (size_t i = 0; i < G_N_ELEMENTS(none); i++)
        ck_assert_msg(strata_serve_engine_find(none[i], NULL) &&
                          !strata_serve_engine_frontend(strata_serve_engine_find(none[i], NULL)),
                      "%s", none[i]);
    ck_assert(strata_serve_engine_frontend(NULL) == strata_serve_frontend_find("vllm-v1"));
    ck_assert(!strata_serve_frontend_find(NULL) && !strata_serve_frontend_find("none"));
    ck_assert(strata_serve_frontend_recv(NULL, 1000) == 0 && strata_serve_frontend_emit(NULL) == 0);
}
END_TEST

/* vLLM V1's row: vllm-project/vllm PR #54628's `openai` backend, the client's TTFT over the server's own metric,
 * +8.4 and +12.0 ms: mean 10.2 ms at 512-token prompts; less 512 x 0.08 us = 40.96 us of tokenization: 10.15904 ms,
 * recv and emit half each, 5.07952 ms. recv(0) = 5.07952 ms, recv(512) = 5.07952 + 0.04096 = 5.12048 ms, so
 * recv(512) + emit = 10.2 ms, the measured gap; recv(4) = 5.07984 ms. */
START_TEST(vllm_v1_hops_by_hand)
{
    const strata_serve_frontend *f = strata_serve_engine_frontend(NULL);
    ck_assert(f && f == strata_serve_engine_frontend(strata_serve_engine_row(NULL)));
    ck_assert_str_eq(f->name, "vllm-v1");
    ck_assert_double_eq_tol(strata_serve_frontend_recv(f, 0), 5.07952e-3, 1e-15);
    ck_assert_double_eq_tol(strata_serve_frontend_recv(f, 4), 5.07984e-3, 1e-15);
    ck_assert_double_eq_tol(strata_serve_frontend_recv(f, 512), 5.12048e-3, 1e-15);
    ck_assert_double_eq_tol(strata_serve_frontend_emit(f), 5.07952e-3, 1e-15);
    ck_assert_double_eq_tol(strata_serve_frontend_recv(f, 512) + strata_serve_frontend_emit(f), 10.2e-3, 1e-15);
}
END_TEST

static const strata_serve_step *step(const strata_serve_result *r, guint i);

/* The tiny model on test-simple (run_tiny's settings) under vLLM V1's row (or `row`), concurrency 2, --step-overhead
 * 1 ms (every step longer than 1 ms, far shorter than the hops). */
static strata_serve_result *run_v1_loop(const strata_serve_engine *row, strata_serve_request *req, uint32_t n)
{
    strata_serve_model m = strata_test_serve_tiny();
    GError *err = NULL;
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 2, c.block_size = 4, c.gpu_memory_utilization = 1;
    c.record_steps = true, c.concurrency = 2, c.engine = row, c.step_overhead = 1e-3;
    c.scheduler = strata_serve_scheduler_find("vllm-v1", &err);
    ck_assert_msg(c.scheduler, "%s", err ? err->message : "");
    strata_serve_stream s = {req, n, 0, 0, NULL, 0, (char *)"tiny", NULL, NULL};
    const char *overrides[] = {"memory.hbm.capacity=1MiB", NULL};
    strata_hw *hw = strata_test_load_hw("test-simple", overrides);
    strata_serve_result *r = strata_serve_run(hw, &m, &c, &s, &strata_serve_kv_paged, NULL, &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    strata_hw_free(hw);
    return r;
}

/* The closed loop's round trip. Two clients; A(4 prompt, 2 out), B(4, 4), then C(4, 1) and D(4, 1), sent as A and
 * B are read done; budget 8, two sequences; recv(4) = 5.07984 ms, emit = 5.07952 ms (above), steps of 1 to 2 ms
 * (1 ms of --step-overhead and the tiny forward). Step 0 (at recv, A and B sent at 0): both prompts, 8 tokens, both
 * first tokens. Step 1: both decodes, A done (2 tokens); its client reads that emit after step 1's end and sends C,
 * received recv later: 10.15936 ms after step 1's end, longer than steps 2 and 3, so they are B's decodes alone
 * (B done at 3) and the loop idles until C is received: step 4 (at step 1's end + 10.15936 ms) C's prompt alone,
 * 4 tokens, C done. D, sent when B is read (step 3's end + emit) and received recv later, comes after step 4's
 * end (steps 2 and 3 together outlast step 4): step 5 D's prompt at step 3's end + 10.15936 ms. TTFTs: A and B
 * step 0's end + emit (sent at 0); C recv + step 4 + emit, D recv + step 5 + emit. Without the hops (the same row,
 * frontend NULL: strata's vLLM V1 before wave 45), C is received at step 1's end and joins step 2 beside B's decode
 * (5 tokens): the replacement rides the decodes still running, which the real loop's 10 ms round trip does not
 * let it do. */
START_TEST(closed_loop_round_trip_keeps_the_replacement_out)
{
    strata_serve_request req[4] = {{0, 4, 2}, {0, 4, 4}, {0, 4, 1}, {0, 4, 1}};
    const double recv = 5.07984e-3, emit = 5.07952e-3;
    strata_serve_result *r = run_v1_loop(strata_serve_engine_row(NULL), req, 4);
    const struct { uint32_t tokens, prefills, decodes; } want[] = {{8, 2, 0}, {2, 0, 2}, {1, 0, 1}, {1, 0, 1},
                                                                    {4, 1, 0}, {4, 1, 0}};
    ck_assert_uint_eq(r->steps_log->len, G_N_ELEMENTS(want));
    for (guint i = 0; i < G_N_ELEMENTS(want); i++)
        ck_assert_msg(step(r, i)->tokens == want[i].tokens && step(r, i)->prefills == want[i].prefills &&
                          step(r, i)->decodes == want[i].decodes,
                      "step %u: %u tokens, %u prefills, %u decodes", i, step(r, i)->tokens, step(r, i)->prefills,
                      step(r, i)->decodes);
    double end[6];
    for (guint i = 0; i < 6; i++) {
        end[i] = step(r, i)->t + step(r, i)->dt;
        ck_assert(step(r, i)->dt > 1e-3 && step(r, i)->dt < 2e-3); /* far under the 10.15936 ms round trip */
    }
    ck_assert_double_eq_tol(step(r, 0)->t, recv, 1e-15);
    ck_assert_double_eq_tol(step(r, 4)->t, end[1] + emit + recv, 1e-12);
    ck_assert_double_eq_tol(step(r, 5)->t, end[3] + emit + recv, 1e-12);
    double ttft[4] = {end[0] + emit, end[0] + emit, recv + step(r, 4)->dt + emit, recv + step(r, 5)->dt + emit};
    ck_assert_double_eq_tol(r->ttft.mean, (ttft[0] + ttft[1] + ttft[2] + ttft[3]) / 4, 1e-12);
    ck_assert_uint_eq(r->completed, 4);
    strata_serve_result_free(r);
    strata_serve_engine bare = *strata_serve_engine_row(NULL);
    bare.frontend = NULL;
    r = run_v1_loop(&bare, req, 4);
    ck_assert_uint_eq(step(r, 2)->tokens, 5);
    ck_assert_uint_eq(step(r, 2)->prefills, 1);
    ck_assert_uint_eq(step(r, 2)->decodes, 1);
    strata_serve_result_free(r);
}
END_TEST

/* The serial API server with both halves (serve_frontend_queue.h), vLLM V1's "vllm-v1-serial": intake 7.014 ms, a chunk
 * 0.030 ms (test_serve_frontend_queue.c); recv(4) = 5.07984 ms, emit 5.07952 ms; steps of 1 to 2 ms. A request is
 * handed on when its intake ends (intake 7.014 ms > recv). A(4, 2) and B(4, 2) sent at 0: A taken 0-7.014 ms,
 * received 7.014; B taken 7.014-14.028 ms, received 14.028. Step 0 (at 7.014) A's prompt alone; its chunk, ready at
 * step 0's end, queues behind B's intake (sent at 0, ready first): written from 14.028 ms. Step 1 A's decode (ends
 * before 11.1 ms; A done): its chunk from 14.058 ms. The loop idles to 14.028: step 2 B's prompt, its chunk from
 * max(step 2's end, 14.088 ms); step 3 B's decode, its chunk from step 3's end (later than the first's end). TTFT A =
 * 14.028 + emit = 19.10752 ms, its TPOT and its ITL 0.030 ms: its two chunks leave back to back (the client's gap,
 * not the engine's steps'); B's TTFT = max(end 2, 14.088) + emit, its TPOT and ITL end 3 - max(end 2, 14.088). The
 * GPU's steps are where they would be with recv delayed alone. */
START_TEST(serial_server_queues_chunks_behind_intake)
{
    strata_serve_request req[2] = {{0, 4, 2}, {0, 4, 2}};
    const double emit = 5.07952e-3;
    strata_serve_engine serial = *strata_serve_engine_row(NULL); /* what --serial-api-server runs */
    serial.frontend = "vllm-v1-serial";
    strata_serve_result *r = run_v1_loop(&serial, req, 2);
    ck_assert_uint_eq(r->steps_log->len, 4);
    double end[4];
    for (guint i = 0; i < 4; i++)
        end[i] = step(r, i)->t + step(r, i)->dt;
    ck_assert_double_eq_tol(step(r, 0)->t, 7.014e-3, 1e-15);
    ck_assert(step(r, 0)->tokens == 4 && step(r, 1)->tokens == 1 && end[1] < 14.028e-3);
    ck_assert_double_eq_tol(step(r, 2)->t, 14.028e-3, 1e-15);
    double b_first = fmax(end[2], 14.088e-3);
    ck_assert(end[3] > b_first + 30e-6);
    ck_assert_double_eq_tol(r->ttft.mean, (14.028e-3 + emit + b_first + emit) / 2, 1e-12);
    ck_assert_double_eq_tol(r->tpot.mean, (30e-6 + end[3] - b_first) / 2, 1e-12);
    ck_assert_double_eq_tol(r->itl.mean, (30e-6 + end[3] - b_first) / 2, 1e-12);
    ck_assert_uint_eq(r->completed, 2);
    strata_serve_result_free(r);
}
END_TEST

/* Two requests of 4 prompt and 2 output tokens at 0 on vllm-v1's tiny test server (8 batched tokens, 2 sequences,
 * blocks of 4, 1 ms step overhead), offline or through the chat endpoint of a release that parses its template:
 * the run's mean TTFT and step 0's start and length; step 0 prefills both. */
static void two_requests(bool offline, bool chat, double *ttft, double *t0, double *dt0)
{
    strata_serve_request req[2] = {{0, 4, 2}, {0, 4, 2}};
    strata_serve_model m = strata_test_serve_tiny();
    GError *err = NULL;
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 2, c.block_size = 4, c.gpu_memory_utilization = 1;
    c.record_steps = true, c.step_overhead = 1e-3, c.offline = offline;
    c.chat_endpoint = chat, c.release_chat_parse = chat;
    c.scheduler = strata_serve_scheduler_find("vllm-v1", &err);
    strata_serve_stream s = {req, 2, 0, 0, NULL, 0, (char *)"tiny", NULL, NULL};
    const char *overrides[] = {"memory.hbm.capacity=1MiB", NULL};
    strata_hw *hw = strata_test_load_hw("test-simple", overrides);
    strata_serve_result *r = strata_serve_run(hw, &m, &c, &s, &strata_serve_kv_paged, NULL, &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    *ttft = r->ttft.mean, *t0 = step(r, 0)->t, *dt0 = step(r, 0)->dt;
    ck_assert_uint_eq(step(r, 0)->prefills, 2);
    strata_serve_result_free(r);
    strata_hw_free(hw);
}

/* --offline (wave 46): vLLM V1 has no offline row (its 10.2 ms is all outside its engine), SGLang's Engine keeps
 * the hop to the Scheduler (recv 1/5 of 6.590 ms = 1.318 ms + 0.08 us a token) and the two to and from the
 * DetokenizerManager (emit 2/5 = 2.636 ms). Online (offline false) a row is itself. Run: two requests (4 prompt
 * tokens, 2 out) at t = 0, open loop, under V1's row: online the first step starts at recv(4) = 5.07984 ms and each
 * TTFT is recv(4) + step 0 + emit = step 0 + 10.15936 ms; offline it starts at 0 and the TTFT is step 0 alone; the
 * steps themselves are the same. */
START_TEST(offline_runs_without_the_hops)
{
    const strata_serve_frontend *v1 = strata_serve_engine_frontend(NULL);
    const strata_serve_frontend *sgl = strata_serve_engine_frontend(strata_serve_engine_find("sglang-v0.4", NULL));
    ck_assert(strata_serve_frontend_served(v1, false) == v1 && !strata_serve_frontend_served(v1, true));
    ck_assert(!strata_serve_frontend_served(NULL, true) && !strata_serve_frontend_served(NULL, false));
    const strata_serve_frontend *off = strata_serve_frontend_served(sgl, true);
    ck_assert(off && off != sgl);
    ck_assert_double_eq_tol(strata_serve_frontend_recv(off, 0), 1.318e-3, 1e-15);
    ck_assert_double_eq_tol(strata_serve_frontend_recv(off, 1000), 1.398e-3, 1e-15);
    ck_assert_double_eq_tol(strata_serve_frontend_emit(off), 2.636e-3, 1e-15);
    double ttft[2], t0[2], dt0[2];
    for (int offline = 0; offline < 2; offline++)
        two_requests(offline, false, &ttft[offline], &t0[offline], &dt0[offline]);
    ck_assert_double_eq_tol(t0[0], 5.07984e-3, 1e-15);
    ck_assert_double_eq(t0[1], 0);
    ck_assert_double_eq_tol(dt0[0], dt0[1], 1e-15);
    ck_assert_double_eq_tol(ttft[0], dt0[0] + 5.07984e-3 + 5.07952e-3, 1e-12);
    ck_assert_double_eq_tol(ttft[1], dt0[1], 1e-12);
}
END_TEST

/* The chat endpoint's template parse (serve_chat.h): PR #20065's 6-8 ms a request, 7 ms, paid only where the client
 * posts to /v1/chat/completions, a server stands between and the release parses every request (0.11.0: 0.10.2 and
 * 0.11.1 do not). By hand: vllm-v1's recv(4) = 5.07984 ms becomes 12.07984 ms, emit unchanged (5.07952 ms); its
 * serial row's intake 13.074 - 202 x 0.030 = 7.014 ms becomes 14.014 ms, its chunk 30 us unchanged. A run (the
 * offline test's: two requests of 4 prompt and 2 output tokens at 0): step 0 starts at the new recv(4), 12.07984
 * ms, and its length does not move; TTFT = step 0 + 12.07984 + 5.07952 ms. */
START_TEST(chat_endpoint_parses_the_template_on_0_11_0)
{
    const char *rel[] = {"0.10.2", "0.11.0", "0.11.0.post1", "0.11.1", "0.19.1"};
    const bool parses[] = {false, true, true, false, false};
    for (size_t i = 0; i < G_N_ELEMENTS(rel); i++) {
        strata_serve_release r;
        ck_assert(strata_serve_release_parse(rel[i], &r, NULL, NULL));
        ck_assert_msg((strata_serve_release_row(&r, "chat_template_parse") != NULL) == parses[i], "%s", rel[i]);
    }
    strata_serve_config c;
    strata_serve_config_default(&c);
    ck_assert(strata_serve_release_apply("0.11.0", false, false, &c, NULL) && c.release_chat_parse);
    ck_assert_double_eq(strata_serve_chat_request_s(&c), 0); /* a /v1/completions client */
    c.chat_endpoint = true;
    ck_assert_double_eq_tol(strata_serve_chat_request_s(&c), 7e-3, 1e-18);
    c.offline = true;
    GError *err = NULL;
    ck_assert(strata_serve_chat_request_s(&c) == 0 && !strata_serve_chat_check(&c, &err) && err);
    g_clear_error(&err);
    c.offline = false;
    const strata_serve_frontend *v1 = strata_serve_engine_frontend(NULL), *f;
    strata_serve_frontend out;
    ck_assert((f = strata_serve_chat_front(v1, &c, &out)) == &out && !strata_serve_frontend_serial(f));
    ck_assert_double_eq_tol(strata_serve_frontend_recv(f, 4), 12.07984e-3, 1e-15);
    ck_assert_double_eq_tol(strata_serve_frontend_emit(f), 5.07952e-3, 1e-15);
    f = strata_serve_chat_front(strata_serve_frontend_serial_row(v1), &c, &out);
    ck_assert(strata_serve_frontend_serial(f));
    ck_assert_double_eq_tol(f->intake_s, 14.014e-3, 1e-15);
    ck_assert_double_eq_tol(f->chunk_s, 30e-6, 1e-18);
    ck_assert(strata_serve_chat_front(NULL, &c, &out) == NULL);
    c.release_chat_parse = false; /* 0.10.2, 0.11.1, or no --engine-release */
    ck_assert(strata_serve_chat_front(v1, &c, &out) == v1);
    double ttft[2], t0[2], dt0[2];
    for (int chat = 0; chat < 2; chat++)
        two_requests(false, chat, &ttft[chat], &t0[chat], &dt0[chat]);
    ck_assert_double_eq_tol(t0[0], 5.07984e-3, 1e-15);
    ck_assert_double_eq_tol(t0[1], 12.07984e-3, 1e-15);
    ck_assert_double_eq_tol(dt0[0], dt0[1], 1e-15);
    ck_assert_double_eq_tol(ttft[1], dt0[1] + 12.07984e-3 + 5.07952e-3, 1e-12);
    ck_assert_double_eq_tol(ttft[1] - ttft[0], 7e-3, 1e-12);
}
END_TEST

/* --chat-endpoint on the command line: with --offline (no API server, no endpoint) refused, exit 2, both options
 * named; with --engine vllm-v0 (no front end) at 0.11.0 refused; with --engine-release 0.11.0 (or none) taken. */
START_TEST(chat_endpoint_option)
{
    const char *hw = STRATA_SOURCE_DIR "/configs/hw/h100.ini";
    strata_cli_result r = strata_test_cli("serve", "--hw", hw, "--model", "llama-3-8b", "--poisson", "n=1",
                                          "--chat-endpoint", "--offline", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--chat-endpoint") && strstr(r.err, "--offline"), "%s", r.err);
    strata_cli_result_clear(&r);
    /* vllm-v0 prices no front end: the parse 0.11.0 charges would be dropped at exit 0, so refused; 0.10.2 charges
     * none and is taken */
    r = strata_test_cli("serve", "--hw", hw, "--model", "llama-3-8b", "--poisson", "n=1", "--chat-endpoint",
                        "--engine", "vllm-v0", "--engine-release", "0.11.0", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--chat-endpoint") && strstr(r.err, "vllm-v0"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("serve", "--hw", hw, "--model", "llama-3-8b", "--poisson", "n=1", "-q", "--chat-endpoint",
                        "--engine", "vllm-v0", "--engine-release", "0.10.2", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    const char *release[] = {"0.11.0", "0.10.2"};
    for (size_t i = 0; i < G_N_ELEMENTS(release); i++) {
        strata_cli_result ok = strata_test_cli("serve", "--hw", hw, "--model", "llama-3-8b", "--poisson", "n=1",
                                               "-q", "--chat-endpoint", "--engine-release", release[i], NULL);
        ck_assert_msg(ok.status == 0, "%s", ok.err);
        strata_cli_result_clear(&ok);
    }
}
END_TEST

static strata_serve_model model_of(const char *preset)
{
    strata_serve_model m;
    GError *err = NULL;
    ck_assert_msg(strata_serve_model_preset(&m, preset, &err), "%s", err ? err->message : "");
    return m;
}

/* The host chain at ATen 4 us, Triton 11 us and an entry 10 us a call (serve_mla_kernels.c):
 * - a layer's attention 5 ATen + 4 entries = 60 us; its TP all-reduces 2 entries = 20 us; q/k norms 2 ATen + 2
 *   entries = 28 us; a dense MLP 2 ATen + 1 entry = 18 us; an MoE MLP 12 ATen + 3 Triton + 3 entries = 48 + 33 +
 *   30 = 111 us; the step's own 7 ATen + 2 entries = 48 us;
 * - the Python a layer (DeepSpeed PR #8352, serve_eager.c): (156.0 - 33.2) ms / 31 = 3961.2903 us an eager decode
 *   step of GPT-2; less the step's 48 us + 2 ATen (8 us) = 3905.2903 us; / 12 layers = 325.44086 us; less a GPT-2
 *   layer's 21 ATen + 1 entry = 94 us: 231.44086 us;
 * - Qwen3-235B-A22B's shape (94 layers, every one MoE, q/k norms) at TP 8: (60 + 20 + 28 + 111 + 231.44086) x 94
 *   + 48 = 20,634 + 21,755.441 = 42,389.441 us;
 * - Llama-3-8B (32 dense layers, no q/k norms) at TP 1: (60 + 18 + 231.44086) x 32 + 48 = 2,544 + 7,406.1075 =
 *   9,950.1075 us; at TP 2, + 20 x 32 = 10,590.1075 us;
 * - DeepSeek-V3 (MLA, 61 layers) under sglang-v0.5: the measured layer (PR #12160) 82.64 ms / 61 a layer: 82.64
 *   ms, whatever its MoE layers and TP; under sglang-v0.3 and -v0.4 (row "sglang") 0; an engine without a row: 0.
 *   The two rows count a GQA layer alike. */
START_TEST(eager_chain_by_hand)
{
    const strata_serve_eager *r = strata_serve_engine_eager(strata_serve_engine_find("sglang-v0.4", NULL));
    const strata_serve_eager *r5 = strata_serve_engine_eager(strata_serve_engine_find("sglang-v0.5", NULL));
    ck_assert(r && r == strata_serve_engine_eager(strata_serve_engine_find("sglang-v0.3", NULL)) && r5 && r5 != r);
    strata_serve_model q = model_of("llama-3-8b");
    q.layers = 94, q.qk_norm = true, q.experts = 128, q.top_k = 8;
    double gpt2_layer = strata_serve_eager_calls_s((strata_serve_eager_calls){21, 0, 1});
    double gpt2_step =
        strata_serve_eager_calls_s(r->step) + strata_serve_eager_calls_s((strata_serve_eager_calls){2, 0, 0});
    ck_assert_double_eq_tol(gpt2_layer, 94e-6, 1e-15);
    ck_assert_double_eq_tol(gpt2_step, 56e-6, 1e-15);
    ck_assert_double_eq_tol(r5->python_layer_s, ((156.0e-3 - 33.2e-3) / 31.0 - gpt2_step) / 12.0 - gpt2_layer, 1e-15);
    ck_assert_double_eq_tol(r5->python_layer_s, 231.44086e-6, 1e-11);
    /* 0.3 and 0.4 take neither the Python nor the MLA layer (one release rule): the calls alone, 42,389.441 us less
     * 94 layers x 231.44086 us = 20,634.000 us */
    ck_assert(r->python_layer_s == 0);
    ck_assert_double_eq_tol(strata_serve_eager_host(r, &q, 94, 8), 20634.0e-6, 1e-9);
    ck_assert_double_eq_tol(strata_serve_eager_host(r5, &q, 94, 8), 42389.441e-6, 1e-9);
    strata_serve_model l = model_of("llama-3-8b");
    ck_assert_uint_eq(l.layers, 32);
    ck_assert(!l.qk_norm && !l.kv_lora_rank);
    ck_assert_double_eq_tol(strata_serve_eager_host(r5, &l, 0, 1), 9950.1075e-6, 1e-9);
    ck_assert_double_eq_tol(strata_serve_eager_host(r5, &l, 0, 2), 10590.1075e-6, 1e-9);
    /* less 32 x 231.44086 = 7,406.1075 us */
    ck_assert_double_eq_tol(strata_serve_eager_host(r, &l, 0, 1), 2544.0e-6, 1e-9);
    ck_assert_double_eq_tol(strata_serve_eager_host(r, &l, 0, 2), 3184.0e-6, 1e-9);
    strata_serve_model d = model_of("deepseek-v3");
    ck_assert_uint_eq(d.layers, 61);
    ck_assert(d.kv_lora_rank > 0);
    ck_assert_double_eq_tol(strata_serve_eager_host(r5, &d, 58, 8), 82.64e-3, 1e-12);
    ck_assert_double_eq_tol(strata_serve_eager_host(r5, &d, 0, 1), 82.64e-3, 1e-12);
    ck_assert(strata_serve_eager_host(r, &d, 58, 8) == 0);
    ck_assert(strata_serve_eager_host(NULL, &l, 0, 1) == 0);
    ck_assert(!strata_serve_engine_eager(NULL) && !strata_serve_engine_eager(strata_serve_engine_find("none", NULL)));
    /* vllm-v0 has its own (vllm-0.7, test_serve_graph_limit.c) */
    const strata_serve_engine *v0 = strata_serve_engine_find("vllm-v0", NULL);
    ck_assert(strata_serve_engine_eager(v0) == strata_serve_eager_find("vllm-0.7"));
}
END_TEST

/* The tiny model (one dense layer, hidden 8) on test-simple.ini, blocks of 4, 1 MiB, budget 8, two sequences,
 * steps recorded, under engine row e at concurrency `conc` (0: open loop). */
static strata_serve_result *run_tiny(const strata_serve_engine *e, strata_serve_request *req, uint32_t n,
                                     uint32_t conc)
{
    strata_serve_model m = strata_test_serve_tiny();
    GError *err = NULL;
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 2, c.block_size = 4, c.gpu_memory_utilization = 1;
    c.record_steps = true, c.concurrency = conc, c.engine = e;
    c.scheduler = strata_serve_scheduler_find(e->scheduler, &err);
    ck_assert_msg(c.scheduler, "%s", err ? err->message : "");
    strata_serve_stream s = {req, n, 0, 0, NULL, 0, (char *)"tiny", NULL, NULL};
    const char *overrides[] = {"memory.hbm.capacity=1MiB", NULL};
    strata_hw *hw = strata_test_load_hw("test-simple", overrides);
    strata_serve_result *r = strata_serve_run(hw, &m, &c, &s, &strata_serve_kv_paged, NULL, &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    strata_hw_free(hw);
    return r;
}

static const strata_serve_step *step(const strata_serve_result *r, guint i)
{
    ck_assert_uint_lt(i, r->steps_log->len);
    return &g_array_index(r->steps_log, strata_serve_step, i);
}

/* One request of 4 prompt tokens and 3 outputs sent at 0 under sglang-v0.4, term by term:
 * - received at recv = 2.636 ms + 4 x 0.08 us = 2.63632 ms: the idle loop's first step starts then;
 * - that step's forward: the tiny layer's eager chain, attention 60 + dense MLP 18 + the step's 48 = 126 us (TP 1;
 *   the 0.4 row takes no Python figure), longer than its GPU time (a few us on test-simple); the row's CPU 1 ms +
 *   1.6 us + 4 x 5.4 ns = 1.0016216 ms; the overlap loop issues the chain from the scheduler's thread after that CPU
 *   work, so the step is 126 + 1001.6216 us = 1.1276216 ms, as the same row run serially (mode SYNC);
 * - the client reads the token emit = 3.954 ms after that step: TTFT 2.63632 + 1.1276216 + 3.954 = 7.7179416 ms;
 * - TPOT is the steps' alone: (finish - first token) / 2, the hops not in it; E2E = finish + emit. */
START_TEST(ttft_at_concurrency_1_term_by_term)
{
    strata_serve_request req[1] = {{0, 4, 3}};
    const strata_serve_engine *row = strata_serve_engine_find("sglang-v0.4", NULL);
    strata_serve_result *r = run_tiny(row, req, 1, 0);
    ck_assert_double_eq_tol(step(r, 0)->t, 2.63632e-3, 1e-15);
    ck_assert_double_eq_tol(step(r, 0)->dt, 1.1276216e-3, 1e-12);
    ck_assert_double_eq_tol(r->ttft.p50, 7.7179416e-3, 1e-12);
    double finish = r->e2e.p50 - 3.954e-3, first = r->ttft.p50 - 3.954e-3;
    ck_assert_double_eq_tol(r->tpot.p50, (finish - first) / 2, 1e-15);
    ck_assert_double_eq_tol(first, step(r, 0)->t + step(r, 0)->dt, 1e-15);
    strata_serve_result_free(r);
    strata_serve_engine sync = *row;
    sync.mode = SERVE_ENGINE_SYNC;
    r = run_tiny(&sync, req, 1, 0);
    ck_assert_double_eq_tol(step(r, 0)->dt, 1.1276216e-3, 1e-12);
    ck_assert_double_eq_tol(r->ttft.p50, 7.7179416e-3, 1e-12);
    strata_serve_result_free(r);
}
END_TEST

/* Concurrency 1, two requests of 4 prompt tokens and 1 output: the client reads the first one's last token emit
 * after its prefill (3.954 ms), sends the second then, which is received recv (2.63632 ms) later; the loop ran the
 * first's dropped decode (overlap_lag, 1.0016216 + 0.025 us < 6.59 ms) and idles until then: step 2 starts at
 * step 0's end + 3.954 ms + 2.63632 ms. Both TTFTs are 7.7179416 ms (the eager step above). */
START_TEST(closed_loop_sends_when_it_reads_the_last_token)
{
    strata_serve_request req[2] = {{0, 4, 1}, {0, 4, 1}};
    strata_serve_result *r = run_tiny(strata_serve_engine_find("sglang-v0.4", NULL), req, 2, 1);
    ck_assert_uint_eq(r->completed, 2);
    ck_assert_uint_eq(step(r, 2)->prefills, 1);
    ck_assert_double_eq_tol(step(r, 2)->t, step(r, 0)->t + step(r, 0)->dt + 3.954e-3 + 2.63632e-3, 1e-15);
    ck_assert_double_eq_tol(r->ttft.p50, 7.7179416e-3, 1e-12);
    ck_assert_double_eq_tol(r->ttft.p99, 7.7179416e-3, 1e-12);
    strata_serve_result_free(r);
}
END_TEST

/* vLLM V0's async output processor (vllm-v0 row, async_output; serve_sched.c). One client; A(4 prompt, 2 out) then
 * B(4, 1), sent when A is read done. The row's host work a step: 4 ms + 35 us a request (+ 0.3 us a prefilled
 * token), so a one-request decode step's is 4.035 ms. Steps: 0 A's prompt (its first token sampled); 1 A's decode,
 * A done; 2 A's decode more (scheduled before step 1's outputs are processed), inside which step 1's outputs leave
 * 4.035 ms after its start: A's client reads it done and sends B then, after step 2 was formed; 3 B's prompt (B,
 * one output, done); 4 B's decode more. Tokens 4, 1, 1, 4, 1. TTFT A = end0 + 4.035 ms (its first token leaves
 * inside step 1); B sent at t2 + 4.035 ms, its first token out at t4 + 4.035 ms: TTFT B = t4 - t2 = dt2 + dt3;
 * E2E A = t2 + 4.035 ms, E2E B likewise t4 - t2. The same row without it: tokens 4, 1, 4, TTFT A = end0, B sent at
 * end1 and prefilled in step 2 at once, its TTFT dt2. */
START_TEST(v0_async_output_one_step_late)
{
    strata_serve_request req[2] = {{0, 4, 2}, {0, 4, 1}};
    const strata_serve_engine *v0 = strata_serve_engine_find("vllm-v0", NULL);
    ck_assert(v0->async_output);
    strata_serve_result *r = run_tiny(v0, req, 2, 1);
    const uint32_t want[] = {4, 1, 1, 4, 1};
    ck_assert_uint_eq(r->steps_log->len, G_N_ELEMENTS(want));
    for (guint i = 0; i < G_N_ELEMENTS(want); i++)
        ck_assert_msg(step(r, i)->tokens == want[i], "step %u: %u tokens", i, step(r, i)->tokens);
    const double cpu1 = 4.035e-3, t2 = step(r, 2)->t, t4 = step(r, 4)->t;
    double end0 = step(r, 0)->t + step(r, 0)->dt;
    ck_assert_double_eq_tol(step(r, 3)->t, t2 + step(r, 2)->dt, 1e-15);
    ck_assert(step(r, 2)->dt > cpu1); /* B is received before step 3 */
    double ttft_a = end0 + cpu1, ttft_b = t4 - t2;
    ck_assert_double_eq_tol(ttft_b, step(r, 2)->dt + step(r, 3)->dt, 1e-15);
    ck_assert_double_eq_tol(r->ttft.mean, (ttft_a + ttft_b) / 2, 1e-12);
    ck_assert_double_eq_tol(r->e2e.mean, (t2 + cpu1 + t4 - t2) / 2, 1e-12);
    ck_assert_uint_eq(r->completed, 2);
    strata_serve_result_free(r);
    strata_serve_engine sync = *v0;
    sync.async_output = false;
    r = run_tiny(&sync, req, 2, 1);
    ck_assert_uint_eq(r->steps_log->len, 3);
    ck_assert_uint_eq(step(r, 2)->tokens, 4);
    end0 = step(r, 0)->t + step(r, 0)->dt;
    ck_assert_double_eq_tol(step(r, 2)->t, step(r, 1)->t + step(r, 1)->dt, 1e-15);
    ck_assert_double_eq_tol(r->ttft.mean, (end0 + step(r, 2)->dt) / 2, 1e-12);
    strata_serve_result_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_frontend");
    TCase *tc = tcase_create("serve_frontend");
    tcase_add_test(tc, sglang_hops_by_hand);
    tcase_add_test(tc, vllm_v1_hops_by_hand);
    tcase_add_test(tc, closed_loop_round_trip_keeps_the_replacement_out);
    tcase_add_test(tc, serial_server_queues_chunks_behind_intake);
    tcase_add_test(tc, eager_chain_by_hand);
    tcase_add_test(tc, ttft_at_concurrency_1_term_by_term);
    tcase_add_test(tc, closed_loop_sends_when_it_reads_the_last_token);
    tcase_add_test(tc, v0_async_output_one_step_late);
    tcase_add_test(tc, offline_runs_without_the_hops);
    tcase_add_test(tc, chat_endpoint_parses_the_template_on_0_11_0);
    tcase_add_test(tc, chat_endpoint_option);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
