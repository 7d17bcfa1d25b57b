/*
 * serve_fixture.h: the tiny serving run the serve suites share
 * (tests/test_serve.c, tests/test_serve_input_copies.c), and the
 * DeepSeek-V3 model the MLA/MoE cost suites share (test_serve_mla_kernels,
 * test_serve_mla_rocm, test_serve_triton_moe, test_serve_triton_gemm, test_serve_moe_route).
 *
 * A model small enough that a run of a few requests on test-simple.ini
 * (configs/hw) can be derived by hand: its weights, KV bytes and steps are
 * in the comments of the tests that run it.
 *
 * Built into the suites that include it (CMakeLists.txt, beside
 * testutil.c).
 */
#ifndef STRATA_SERVE_FIXTURE_H
#define STRATA_SERVE_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "serve/serve.h"
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"

/* A model of 600 parameters: one layer, hidden 8, one head of 8 (one KV
 * head), intermediate 8, vocabulary 8; weights 1,200 B, KV 2 x 1 x 1 x 8 x
 * 2 = 32 B per token, max_model_len 8,192. */
strata_serve_model strata_test_serve_tiny(void);

/* The tiny model served on test-simple.ini with `capacity` bytes of hbm
 * (memory.hbm.capacity): budget 8 tokens, 2 sequences, blocks of 4 tokens,
 * the whole memory usable, the paged KV; e the --engine row (NULL: none
 * given, vLLM V1's default), preemption by swap when asked. The test fails
 * with the run's message where it does not run. */
strata_serve_result *strata_test_serve_tiny_run(const char *capacity, strata_serve_request *req, uint32_t n,
                                                const strata_serve_engine *e, bool swap);

/* DeepSeek-V3 (the preset) with FP8 weights (dtype f8), its KV cache in
 * bf16 when kv_bf16 (vLLM 0.8.4's kv_cache_dtype auto), 128 x 128 weight
 * blocks when `block` (the checkpoint's quantization_config). The test
 * fails where a key does not take. */
strata_serve_model strata_test_deepseek_v3(bool kv_bf16, bool block);

/* m's step cost at TP8 (tensor parallel over 8 ranks, no attention data
 * parallelism, a budget of 8,192 tokens: vLLM's on a node of 8) on hw;
 * the test fails where it does not build. m must outlive it. */
strata_serve_cost *strata_test_tp8_cost(const strata_hw *hw, const strata_serve_model *m);
/* One request's decode at context 2,000 (one new token, sampled): the
 * DeepSeek-V3 suites' step. */
strata_serve_chunk strata_test_decode_2000(void);

/* A decode of one request (context 2,000) of strata_test_deepseek_v3(true,
 * true) at TP8 under an engine's row (NULL: vLLM V1's) on hw_file, less the
 * same step with its MLA kernels taken off again (test_serve_mla_kernels,
 * test_serve_mla_rocm). */
double strata_test_deepseek_row_adds(const char *hw_file, const char *engine);

/* Pass pricers for the MLA prefill suites (test_serve_mla_prefill_v07, _v1): a pass's bytes as its time, or one a
 * pass, so a sum of passes reads as bytes or as a kernel count. */
double strata_test_bytes_pass(const void *ctx, uint64_t elements, double bytes);
double strata_test_one_pass(const void *ctx, uint64_t elements, double bytes);

#endif
