/*
 * serve_fixture.c: the serve suites' tiny run and DeepSeek-V3 model (serve_fixture.h).
 */
#include "serve_fixture.h"

#include "testutil.h"
#include "hw/hw.h"
#include "serve/serve_cost.h"

strata_serve_model strata_test_serve_tiny(void)
{
    strata_serve_model m;
    strata_serve_model_init(&m);
    g_strlcpy(m.name, "tiny", sizeof m.name);
    m.layers = 1, m.hidden = 8, m.heads = 1, m.kv_heads = 1, m.head_dim = 8, m.intermediate = 8, m.vocab = 8;
    return m;
}

strata_serve_result *strata_test_serve_tiny_run(const char *capacity, strata_serve_request *req, uint32_t n,
                                                const strata_serve_engine *e, bool swap)
{
    strata_serve_stream s = {req, n, 0, 0, NULL, 0, (char *)"tiny", NULL, NULL};
    strata_serve_config c;
    strata_serve_config_default(&c);
    c.max_num_batched_tokens = 8, c.max_num_seqs = 2, c.block_size = 4, c.gpu_memory_utilization = 1;
    c.engine = e;
    c.swap = swap;
    char *set = g_strdup_printf("memory.hbm.capacity=%s", capacity);
    strata_hw *hw = strata_test_load_hw("test-simple", (const char *const[]){set, NULL});
    g_free(set);
    strata_serve_model m = strata_test_serve_tiny();
    GError *err = NULL;
    strata_serve_result *r = strata_serve_run(hw, &m, &c, &s, &strata_serve_kv_paged, NULL, &err);
    ck_assert_msg(r, "%s", err ? err->message : "");
    strata_hw_free(hw);
    return r;
}

strata_serve_model strata_test_deepseek_v3(bool kv_bf16, bool block)
{
    strata_serve_model m;
    GError *err = NULL;
    ck_assert_msg(strata_serve_model_preset(&m, "deepseek-v3", &err), "%s", err ? err->message : "");
    ck_assert_msg(strata_serve_model_set(&m, "dtype", "f8", &err), "%s", err ? err->message : "");
    if (kv_bf16)
        ck_assert_msg(strata_serve_model_set(&m, "kv_dtype", "bf16", &err), "%s", err ? err->message : "");
    if (block)
        ck_assert_msg(strata_serve_model_set(&m, "weight_block", "128", &err), "%s", err ? err->message : "");
    return m;
}

strata_serve_cost *strata_test_tp8_cost(const strata_hw *hw, const strata_serve_model *m)
{
    GError *err = NULL;
    strata_serve_cost *c = strata_serve_cost_new(hw, m, 8, false, 8192, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    return c;
}

strata_serve_chunk strata_test_decode_2000(void)
{
    return (strata_serve_chunk){.id = 0, .tokens = 1, .context = 2000, .samples = true};
}

double strata_test_deepseek_row_adds(const char *hw_file, const char *engine)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(hw_file, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    strata_serve_model m = strata_test_deepseek_v3(true, true);
    const strata_serve_engine *e = engine ? strata_serve_engine_find(engine, &err) : NULL;
    strata_serve_chunk d = strata_test_decode_2000();
    strata_serve_cost *c = strata_test_tp8_cost(hw, &m);
    ck_assert_msg(strata_serve_engine_set_kernels(e, hw, c, &err), "%s", err ? err->message : "");
    double with = strata_serve_cost_step(c, &d, 1);
    strata_serve_cost_set_mla_kernels(c, NULL);
    double without = strata_serve_cost_step(c, &d, 1);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
    return with - without;
}

double strata_test_bytes_pass(const void *ctx, uint64_t elements, double bytes)
{
    (void)ctx;
    (void)elements;
    return bytes;
}

double strata_test_one_pass(const void *ctx, uint64_t elements, double bytes)
{
    (void)ctx;
    (void)elements;
    (void)bytes;
    return 1.0;
}
