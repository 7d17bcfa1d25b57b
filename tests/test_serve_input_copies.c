/*
 * test_serve_input_copies.c: vLLM V1's input copies before each forward
 * (serve_engine.h input_copies, strata_serve_engine_input_copies) against
 * values derived by hand: the block table's whole rows and the five small
 * arrays over test-simple's pinned host link, a width rounded up to whole
 * blocks, nothing for the other rows or an empty step, and a whole run's
 * host time under the default row (vllm-v1) against `none`.
 */
#include <math.h>
#include "serve/serve.h"
#include "serve/serve_cost.h"
#include "serve/serve_engine.h"
#include "serve_fixture.h"
#include "testutil.h"

/* test-simple.ini's pcie link: 16 GB/s, 1 us (test_serve.c swap_time_over_the_link). */
static strata_serve_cost *simple_cost(strata_hw **hw)
{
    *hw = strata_test_load_hw("test-simple", NULL);
    strata_serve_model m;
    GError *err = NULL;
    ck_assert_msg(strata_serve_model_preset(&m, "llama-3-8b", &err), "%s", err ? err->message : "");
    strata_serve_cost *c = strata_serve_cost_new(*hw, &m, 1, false, 16, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    return c;
}

/* The default row (e NULL) on test-simple:
 * - 128 decodes at max_model_len 131,072, block 16: rows of 8,192 entries,
 *   128 x 8,192 x 4 = 4,194,304 B of table, 128 x 20 = 2,560 B of tokens,
 *   128 x 8 + 4 = 1,028 B of requests: 4,197,892 B / 16 GB/s = 262.36825
 *   us, + 6 x 1 us = 268.36825 us;
 * - one request of 4 prompt tokens at 8,192 and block 16: 512 entries,
 *   2,048 + 80 + 12 = 2,140 B, 0.13375 us + 6 us = 6.13375 us;
 * - 2 decodes at max_model_len 100, block 16: ceil(100 / 16) = 7 entries,
 *   56 + 40 + 20 = 116 B, 7.25 ns + 6 us = 6.00725 us. */
START_TEST(default_row_by_hand)
{
    strata_hw *hw = NULL;
    strata_serve_cost *c = simple_cost(&hw);
    strata_serve_engine_inputs big = {128, 128, 131072, 16}, one = {1, 4, 8192, 16}, odd = {2, 2, 100, 16};
    double t = strata_serve_engine_input_copies(NULL, c, big);
    ck_assert_msg(fabs(t - 268.36825e-6) < 1e-12, "%.12g s", t);
    t = strata_serve_engine_input_copies(NULL, c, one);
    ck_assert_msg(fabs(t - 6.13375e-6) < 1e-12, "%.12g s", t);
    t = strata_serve_engine_input_copies(NULL, c, odd);
    ck_assert_msg(fabs(t - 6.00725e-6) < 1e-12, "%.12g s", t);
    /* an empty step copies nothing */
    ck_assert(strata_serve_engine_input_copies(NULL, c, (strata_serve_engine_inputs){0, 0, 8192, 16}) == 0);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* Every --engine row has no such copies (their input work is in their CPU
 * figures or not modelled): 0 for the same 128 decodes. */
START_TEST(other_rows_copy_nothing)
{
    strata_hw *hw = NULL;
    strata_serve_cost *c = simple_cost(&hw);
    const char *rows[] = {"none", "vllm-v0", "vllm-v0.5", "sglang-v0.3", "sglang-v0.4", "sglang-v0.5", "overlap", "trtllm",
                          "trtllm-cpp", "lmdeploy-turbomind"};
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        const strata_serve_engine *e = strata_serve_engine_find(rows[i], NULL);
        ck_assert_msg(e && !e->input_copies, "%s", rows[i]);
        ck_assert(strata_serve_engine_input_copies(e, c, (strata_serve_engine_inputs){128, 128, 131072, 16}) == 0);
    }
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* One request of 4 prompt tokens and 3 outputs on the serve suites' tiny run (serve_fixture.h: 1 MiB of
 * memory, blocks of 4 tokens, max_model_len 8,192) under the engine row e. */
static strata_serve_result *run_tiny(const strata_serve_engine *e)
{
    strata_serve_request req[1] = {{0, 4, 3}};
    return strata_test_serve_tiny_run("1MiB", req, 1, e, false);
}

/* One request of 4 prompt tokens and 3 outputs, blocks of 4 tokens at
 * max_model_len 8,192: rows of 2,048 entries (8,192 B). Step 1 prefills the
 * 4 tokens (samples the first): 8,192 + 4 x 20 + 12 = 8,284 B; steps 2
 * and 3 decode one token each: 8,192 + 20 + 12 = 8,224 B. Host time
 * 3 x 6 us + (8,284 + 2 x 8,224) B / 16 GB/s = 18 us + 1.54575 us =
 * 19.54575 us under the default row; none under `none`. The default row's
 * piecewise host chain (serve_piecewise.h: one layer, 2 x 4 + 2 x 10 us,
 * and the first replay's 10 us, 38 us a step) outlasts each of the tiny
 * model's forwards (under 38 us together), so each step also takes 38 us
 * less its GPU time beyond the GPU: host 3 x 38 us + 19.54575 us less the
 * run's GPU time. */
START_TEST(run_pays_the_copies_each_step)
{
    strata_serve_result *r = run_tiny(NULL);
    ck_assert_uint_eq(r->steps, 3);
    double gpu = r->prefill_gpu_s + r->decode_gpu_s;
    ck_assert(gpu < 38e-6);
    ck_assert_msg(fabs(r->host_s - (3 * 38e-6 + 19.54575e-6 - gpu)) < 1e-12, "host %.12g s", r->host_s);
    strata_serve_result_free(r);
    r = run_tiny(strata_serve_engine_find("none", NULL));
    ck_assert_uint_eq(r->steps, 3);
    ck_assert(r->host_s == 0);
    strata_serve_result_free(r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_input_copies");
    TCase *tc = tcase_create("serve_input_copies");
    tcase_add_test(tc, default_row_by_hand);
    tcase_add_test(tc, other_rows_copy_nothing);
    tcase_add_test(tc, run_pays_the_copies_each_step);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
