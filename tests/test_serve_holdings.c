/*
 * test_serve_holdings.c: what a serving rank holds outside weights, activations and the KV pool
 * (serve_holdings.h), by engine rule, and the pool each engine's rule leaves with it (serve_run.c).
 */
#include <math.h>
#include <string.h>
#include "serve/serve.h"
#include "serve/serve_holdings.h"
#include "testutil.h"

static strata_hw *load_hw(const char *name)
{
    GError *err = NULL;
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", name, NULL);
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    g_free(path);
    return hw;
}

static void holdings(const char *engine, const strata_hw *hw, uint32_t tp, strata_serve_holdings *out)
{
    GError *err = NULL;
    const strata_serve_engine *e = strata_serve_engine_find(engine, &err);
    ck_assert_msg(e, "%s", err ? err->message : "");
    ck_assert_msg(strata_serve_holdings_of(e, hw, tp, out, &err), "%s", err ? err->message : "");
}

/* dgx-h100 (132 SMs, NCCL's Hopper tables, 12 graph channels, NVLS), TP8:
 * context 132 x 2,048 x 1,024 + 8 MiB + 1 MiB = 276,824,064 + 9,437,184 = 286,261,248 B;
 * NCCL: comm->nChannels 2 x 12 = 24 (above NVLS's 16), 24 x (4,194,304 + 524,288 + 4,915,200) =
 * 24 x 9,633,792 = 231,211,008 B; vLLM's custom all-reduce 4,096 + 3 x 8,388,608 = 25,169,920 B;
 * TensorRT-LLM's workspace 2 x 8 x 8,000,000 = 128,000,000 B; cuBLAS on Hopper 4,096 x 8 x 1,024 = 33,554,432 B.
 * Charged: vllm-v0 231,211,008 + 25,169,920 + 33,554,432 = 289,935,360; vLLM V1 (none) 33,554,432; sglang-v0.4
 * 286,261,248 + 231,211,008 + 25,169,920 = 542,642,176; trtllm 286,261,248 + 231,211,008 + 128,000,000 +
 * 33,554,432 = 679,026,688; trtllm-cpp (no PyTorch) 645,472,256; turbomind 0. */
START_TEST(holdings_at_tp8_by_hand)
{
    strata_hw *hw = load_hw("dgx-h100.ini");
    const char *engines[] = {"vllm-v0", "none", "sglang-v0.4", "trtllm", "trtllm-cpp", "turbomind"};
    const uint64_t counted[] = {289935360ull, 33554432ull, 542642176ull, 679026688ull, 645472256ull, 0};
    const uint64_t ar[] = {25169920ull, 0, 25169920ull, 128000000ull, 128000000ull, 0};
    for (size_t i = 0; i < G_N_ELEMENTS(engines); i++) {
        strata_serve_holdings h;
        holdings(engines[i], hw, 8, &h);
        ck_assert_uint_eq(h.context_bytes, 286261248ull);
        ck_assert_uint_eq(h.nccl_bytes, 231211008ull);
        ck_assert_msg(h.allreduce_bytes == ar[i], "%s: %" G_GUINT64_FORMAT, engines[i], h.allreduce_bytes);
        ck_assert_msg(h.counted_bytes == counted[i], "%s: %" G_GUINT64_FORMAT, engines[i], h.counted_bytes);
    }
    strata_serve_holdings h;
    holdings("trtllm", hw, 2, &h); /* max_workspace_size_auto 16,000,000 at tp <= 2: 2 x 2 x 16e6 */
    ck_assert_uint_eq(h.allreduce_bytes, 64000000ull);
    holdings("vllm-v0", hw, 1, &h); /* one rank: no NCCL, no all-reduce; cuBLAS alone */
    ck_assert_uint_eq(h.nccl_bytes, 0);
    ck_assert_uint_eq(h.allreduce_bytes, 0);
    ck_assert_uint_eq(h.counted_bytes, 33554432ull);
    ck_assert_str_eq(strata_serve_hold_rule_name(h.rule), "vllm-v0");
    strata_hw_free(hw);
}
END_TEST

/* Llama-3-8B BF16 at TP1 on h100.ini (79.11 GiB reported = 84,943,715,697 B; 132 SMs; compute_capability 9.0,
 * so cuBLAS's Hopper workspace 4096 x 8 x 1024 = 33,554,432 B though the file has no NCCL row), weights W
 * and activations A as strata_serve_memory gives them, H the context 286,261,248 B. vLLM V1 (none, 0.9):
 * 0.9 T - W - A - 33,554,432. SGLang 0.4 (0.88 at TP1, no profile):
 * 0.88 (T - H) - W. TensorRT-LLM (0.9 of the free memory): 0.9 (T - W - A - H - 33,554,432). TurboMind (vLLM's
 * rule, nothing charged): 0.9 T - W - A. */
START_TEST(pools_lose_what_each_rule_charges)
{
    strata_hw *hw = load_hw("h100.ini");
    GError *err = NULL;
    strata_serve_model m;
    strata_serve_model_init(&m);
    ck_assert_msg(strata_serve_model_preset(&m, "llama-3-8b", &err), "%s", err ? err->message : "");
    const double t = 84943715697.0, ctx = 286261248.0, cublas = 33554432.0;
    const char *engines[] = {"none", "sglang-v0.4", "trtllm", "turbomind"};
    for (size_t i = 0; i < G_N_ELEMENTS(engines); i++) {
        strata_serve_config c;
        strata_serve_config_default(&c);
        c.engine = strata_serve_engine_find(engines[i], &err);
        ck_assert_msg(c.engine, "%s", err ? err->message : "");
        if (c.engine->default_utilization)
            c.gpu_memory_utilization = c.engine->default_utilization(1);
        uint64_t w = 0, a = 0, pool = 0;
        strata_serve_holdings h;
        ck_assert_msg(strata_serve_memory_held(hw, &m, &c, &w, &a, &pool, &h, &err), "%s", err ? err->message : "");
        double wa = (double)w + (double)a, want[] = {0.9 * t - wa - cublas, 0.88 * (t - ctx) - (double)w,
                                                     0.9 * (t - wa - ctx - cublas), 0.9 * t - wa};
        ck_assert_msg(fabs((double)pool - want[i]) <= 1.0, "%s: %" G_GUINT64_FORMAT " vs %.1f", engines[i], pool,
                      want[i]);
    }
    strata_hw_free(hw);
}
END_TEST

/* The part's compute capability sizes the context and cuBLAS (wave 42; wave 41 keyed cuBLAS on the NCCL row and
 * took 2,048 threads an SM everywhere): h100.ini's 132 SMs read as 8.9 (1,536 resident threads an SM, the CUDA
 * C++ Programming Guide's table) hold 132 x 1,536 x 1,024 + 8 MiB + 1 MiB = 207,618,048 + 9,437,184 =
 * 217,055,232 B of context and cuBLAS's non-Hopper 4096 x 1024 x 2 + 16 x 1024 x 8 = 8,519,680 B; as 7.5 (1,024
 * threads) 138,412,032 + 9,437,184 = 147,849,216 B; as 9.0, 286,261,248 and 33,554,432 B. */
START_TEST(holdings_by_compute_capability)
{
    static const struct {
        const char *cc;
        uint64_t context, cublas;
    } rows[] = {{"8.9", 217055232ull, 8519680ull}, {"7.5", 147849216ull, 8519680ull},
                {"9.0", 286261248ull, 33554432ull}, {"8.6", 217055232ull, 8519680ull}};
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        GError *err = NULL;
        char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", "h100.ini", NULL);
        char *set = g_strdup_printf("hardware.compute_capability=%s", rows[i].cc);
        const char *sets[] = {set, NULL};
        strata_hw *hw = strata_hw_load(path, sets, &err);
        ck_assert_msg(hw, "%s", err ? err->message : "");
        uint32_t want_cc = (uint32_t)(rows[i].cc[0] - '0') * 10 + (uint32_t)(rows[i].cc[2] - '0');
        ck_assert_uint_eq(strata_hw_compute_capability(hw), want_cc);
        strata_serve_holdings h;
        holdings("none", hw, 1, &h);
        ck_assert_msg(h.context_bytes == rows[i].context, "%s: %" G_GUINT64_FORMAT, rows[i].cc, h.context_bytes);
        ck_assert_msg(h.cublas_bytes == rows[i].cublas, "%s: %" G_GUINT64_FORMAT, rows[i].cc, h.cublas_bytes);
        strata_hw_free(hw);
        g_free(set);
        g_free(path);
    }
}
END_TEST

/* Every engine row's accounting rule (hold_rule) is the one serve_holdings.c gave it by name before wave 43,
 * read off that code (rule_of, commit 263605dc): a row with pool_of_free (trtllm and the trtllm-cpp rows) was
 * trtllm; else a name starting "sglang" sglang; else one starting "vllm-v0" (vllm-v0, vllm-v0.5) vllm-v0; else
 * "lmdeploy-turbomind" or "turbomind" none; else (none, overlap) vllm-v1, as a NULL row (no --engine) was. The
 * names are the table's own, as strata_serve_engine_find lists them in its error; a row not listed here fails
 * (a new row: add the rule its engine's accounting has, serve_holdings.h). */
START_TEST(every_row_keeps_its_hold_rule)
{
    static const struct {
        const char *engine, *rule;
    } want[] = {{"none", "vllm-v1"},
                {"vllm-v0", "vllm-v0"},
                {"vllm-v0.5", "vllm-v0"},
                {"sglang-v0.3", "sglang"},
                {"sglang-v0.4", "sglang"},
                {"sglang-v0.5", "sglang"},
                {"overlap", "vllm-v1"},
                {"trtllm", "trtllm"},
                {"trtllm-cpp", "trtllm"},
                {"trtllm-cpp-0.11", "trtllm"},
                {"trtllm-cpp-0.9", "trtllm"},
                {"trtllm-cpp-0.7", "trtllm"},
                {"trtllm-cpp-0.6", "trtllm"},
                {"lmdeploy-turbomind", "none"},
                {"turbomind", "none"}};
    GError *err = NULL;
    ck_assert_ptr_null(strata_serve_engine_find(NULL, &err));
    const char *known = strstr(err->message, "(known: ");
    ck_assert_msg(known, "%s", err->message);
    char *list = g_strdup(known + strlen("(known: "));
    char *close = strrchr(list, ')');
    ck_assert_ptr_nonnull(close);
    *close = '\0';
    char **names = g_strsplit(list, ", ", -1);
    strata_hw *hw = load_hw("dgx-h100.ini");
    guint rows = g_strv_length(names);
    ck_assert_uint_eq(rows, G_N_ELEMENTS(want));
    for (guint i = 0; i < rows; i++) {
        const char *rule = NULL;
        for (size_t j = 0; j < G_N_ELEMENTS(want); j++)
            if (strcmp(want[j].engine, names[i]) == 0)
                rule = want[j].rule;
        ck_assert_msg(rule, "row %s: no rule expected here", names[i]);
        strata_serve_holdings h;
        holdings(names[i], hw, 8, &h);
        ck_assert_msg(strcmp(strata_serve_hold_rule_name(h.rule), rule) == 0, "%s: %s, expected %s", names[i],
                      strata_serve_hold_rule_name(h.rule), rule);
    }
    strata_serve_holdings h;
    ck_assert(strata_serve_holdings_of(NULL, hw, 8, &h, NULL)); /* no --engine: vLLM V1 */
    ck_assert_str_eq(strata_serve_hold_rule_name(h.rule), "vllm-v1");
    ck_assert_str_eq(strata_serve_hold_rule_name(strata_serve_engine_row(NULL)->hold_rule), "vllm-v1");
    strata_hw_free(hw);
    g_strfreev(names);
    g_free(list);
    g_error_free(err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_holdings");
    TCase *tc = tcase_create("serve_holdings");
    tcase_add_test(tc, holdings_at_tp8_by_hand);
    tcase_add_test(tc, pools_lose_what_each_rule_charges);
    tcase_add_test(tc, holdings_by_compute_capability);
    tcase_add_test(tc, every_row_keeps_its_hold_rule);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
