/*
 * test_serve_fused_moe_bf16.c: vLLM 0.4.2's and SGLang 0.5.6's Triton fused_moe
 * on unquantized experts at their default config (sim/serve/serve_fused_moe_bf16.h) and
 * vLLM 0.7.3's block-FP8 config files (sim/serve/serve_triton_moe.h)
 * against values derived by hand.
 */
#include <math.h>
#include "serve/serve_cost.h"
#include "serve/serve_fused_moe_bf16.h"
#include "serve/serve_mfma_layout.h"
#include "serve/serve_model.h"
#include "serve/serve_triton_moe.h"
#include "testutil.h"

/* fused_moe.py l. 410-423: M <= E takes 16 x 32 x 64, so 1 and 64 tokens over
 * 64 experts; 65 tokens the 64 x 64 x 32 tile. */
START_TEST(default_tile_by_m)
{
    strata_serve_triton_moe_tile t;
    strata_serve_fused_moe_bf16_tile(1, 64, &t);
    ck_assert_uint_eq(t.block_m, 16);
    ck_assert_uint_eq(t.block_n, 32);
    ck_assert_uint_eq(t.block_k, 64);
    strata_serve_fused_moe_bf16_tile(64, 64, &t);
    ck_assert_uint_eq(t.block_m, 16);
    strata_serve_fused_moe_bf16_tile(65, 64, &t);
    ck_assert_uint_eq(t.block_m, 64);
    ck_assert_uint_eq(t.block_n, 64);
    ck_assert_uint_eq(t.block_k, 32);
}
END_TEST

/* The 0.4.2 wheel's files: Mixtral at TP2 (E=8, N=7168) and DBRX at TP8
 * (E=16, N=1344) are shipped; Qwen2-57B at TP2 (E=64, N=1280) and Mixtral's
 * whole width at TP1 (N=14336) are not. */
START_TEST(shipped_files)
{
    const strata_serve_fused_moe_bf16 *r = strata_serve_fused_moe_bf16_find("vllm-0.4.2", NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert(strata_serve_fused_moe_bf16_shipped(r, 8, 7168, NULL));
    ck_assert(strata_serve_fused_moe_bf16_shipped(r, 16, 1344, "NVIDIA H100 80GB HBM3"));
    ck_assert(!strata_serve_fused_moe_bf16_shipped(r, 64, 1280, NULL));
    ck_assert(!strata_serve_fused_moe_bf16_shipped(r, 8, 14336, NULL));
}
END_TEST

/* The step: PR #40542's 183.5 us over 32 + 22 = 54 K steps, 3.398148 us.
 * Qwen2-57B-A14B at TP2, one token: gate_up's K is the hidden 3584, 56
 * steps of 64 = 190.2963 us; down's K is 2560 / 2 = 1280, 20 steps =
 * 67.9630 us. 65 tokens (> E), a shipped file, no row: 0. */
START_TEST(chain_by_hand)
{
    const strata_serve_fused_moe_bf16 *r = strata_serve_fused_moe_bf16_find("vllm-0.4.2", NULL);
    ck_assert_double_eq_tol(strata_serve_fused_moe_bf16_chain_s(r, 1, 64, 1280, 3584) * 1e6, 190.2963, 1e-3);
    ck_assert_double_eq_tol(strata_serve_fused_moe_bf16_chain_s(r, 1, 64, 1280, 1280) * 1e6, 67.9630, 1e-3);
    ck_assert_double_eq(strata_serve_fused_moe_bf16_chain_s(r, 65, 64, 1280, 3584), 0.0);
    ck_assert_double_eq(strata_serve_fused_moe_bf16_chain_s(r, 1, 8, 7168, 4096), 0.0);
    ck_assert_double_eq(strata_serve_fused_moe_bf16_chain_s(NULL, 1, 64, 1280, 3584), 0.0);
    /* the slower of a grouped time and the chain */
    strata_serve_fused_moe_gemm g = {.tokens = 1, .experts = 64, .width = 1280, .routed = 8, .active = 8};
    ck_assert_double_eq_tol(strata_serve_fused_moe_bf16_s(r, 100e-6, &g, 3584, 2560) * 1e6, 190.2963, 1e-3);
    ck_assert_double_eq(strata_serve_fused_moe_bf16_s(r, 300e-6, &g, 3584, 2560), 300e-6);
}
END_TEST

/* The row applies on Ampere only (a100-8.ini: nccl_arch = ampere), not on
 * Hopper (hgx-h200), nor without a name. */
START_TEST(row_by_part)
{
    strata_hw *a100 = strata_test_load_hw("a100-8", NULL), *h200 = strata_test_load_hw("hgx-h200", NULL);
    ck_assert_ptr_nonnull(strata_serve_fused_moe_bf16_for("vllm-0.4.2", a100));
    ck_assert_ptr_null(strata_serve_fused_moe_bf16_for("vllm-0.4.2", h200));
    ck_assert_ptr_null(strata_serve_fused_moe_bf16_for(NULL, a100));
    strata_hw_free(a100);
    strata_hw_free(h200);
}
END_TEST

/* A decode step of one token of Qwen2-57B-A14B at TP2 on A100 (28 MoE
 * layers): the row adds, per layer, the chains (190.30 + 67.96 = 258.26 us)
 * less the grouped row's two GEMMs. Those stream 8 experts' gate_up (8 x
 * 2560 x 3584 x 2 B = 146.8 MB) and down (73.4 MB) at no more than 2,039
 * GB/s, at least 108.0 us, and (the grouped row's stream efficiency and
 * launch) well under twice that: the step grows by between 28 x (258.26 -
 * 216.0) = 1.18 ms and 28 x (258.26 - 108.0) = 4.21 ms. */
START_TEST(served_decode_takes_the_chain)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw("a100-8", NULL);
    strata_serve_model m;
    ck_assert_msg(strata_serve_model_from_config(&m, STRATA_SOURCE_DIR "/configs/models/qwen2-57b-a14b.json", &err),
                  "%s", err ? err->message : "");
    strata_serve_chunk d = {.id = 0, .tokens = 1, .context = 100, .samples = true};
    strata_serve_cost *c = strata_serve_cost_new(hw, &m, 2, false, 8192, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    double plain = strata_serve_cost_step(c, &d, 1);
    strata_serve_cost_set_fused_moe_bf16(c, strata_serve_fused_moe_bf16_for("vllm-0.4.2", hw));
    double chained = strata_serve_cost_step(c, &d, 1);
    strata_serve_cost_free(c);
    ck_assert_double_ge(chained - plain, 1.18e-3);
    ck_assert_double_le(chained - plain, 4.21e-3);
    strata_hw_free(hw);
}
END_TEST

/* vLLM 0.7.3's H200 E=256,N=256 block-FP8 file: 1 token -> 16 x 64 x 128;
 * 4 -> 64 x 64 x 128; 16 -> 16 x 256 x 64; 30 -> 32 (64 x 128 x 128); 2500
 * -> 2048 (|452| against 3072's |572|: 64 x 128). Its default (no file):
 * 64 x 128 x 128 at every M. An unknown name: NULL. */
START_TEST(release_073_tiles)
{
    const strata_serve_triton_moe_configs *f = strata_serve_triton_moe_configs_find("vllm-0.7.3");
    const strata_serve_triton_moe_configs *d = strata_serve_triton_moe_configs_find("vllm-0.7.3-default");
    strata_serve_triton_moe_tile t;
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(d);
    ck_assert_ptr_null(strata_serve_triton_moe_configs_find("vllm-0.1"));
    strata_serve_triton_moe_config_of(f, 1, &t);
    ck_assert(t.block_m == 16 && t.block_n == 64 && t.block_k == 128);
    strata_serve_triton_moe_config_of(f, 4, &t);
    ck_assert(t.block_m == 64 && t.block_n == 64 && t.block_k == 128);
    strata_serve_triton_moe_config_of(f, 16, &t);
    ck_assert(t.block_m == 16 && t.block_n == 256 && t.block_k == 64);
    strata_serve_triton_moe_config_of(f, 30, &t);
    ck_assert(t.block_m == 64 && t.block_n == 128 && t.block_k == 128);
    strata_serve_triton_moe_config_of(f, 2500, &t);
    ck_assert(t.block_m == 64 && t.block_n == 128);
    strata_serve_triton_moe_config_of(d, 1, &t);
    ck_assert(t.block_m == 64 && t.block_n == 128 && t.block_k == 128);
}
END_TEST

/* DeepSeek-V3 TP8 gate_up (K 7168, N 512) at 4 tokens, 32 routed rows over
 * 31 experts on 132 SMs; a wave of one tile a SM costs (its MMA in the
 * measured 64 x 128 x 128 tile's k-blocks + 1.454847 fixed) x 0.7530976 us
 * (serve_triton_moe.h, test_serve_triton_moe.c). 0.7.3: 64 x 64 tiles, 31
 * x 8 = 248 tiles, 2 waves of 64 x 64 x 7168 = 28 k-blocks: 2 x 29.454847
 * x 0.7530976 = 44.36 us. vllm@645d18fa: 16 x 128, 31 x 2 blocks
 * (ceil(32/31) = 2 rows, one 16-row block each: 31) x 4 = 124 tiles, one
 * wave of 16 x 128 x 7168 = 14 k-blocks: 15.454847 x 0.7530976 = 11.64 us. */
START_TEST(release_073_mma_at_c4)
{
    const strata_serve_triton_moe_configs *f = strata_serve_triton_moe_configs_find("vllm-0.7.3");
    double peak = 1979e12;
    ck_assert_double_eq_tol(strata_serve_triton_moe_compute_of(f, 4, 32, 31, 7168, 512, 132, peak) * 1e6, 44.36,
                            0.01);
    ck_assert_double_eq_tol(strata_serve_triton_moe_compute_of(NULL, 4, 32, 31, 7168, 512, 132, peak) * 1e6, 11.64,
                            0.01);
}
END_TEST

/* SGLang 0.5.6's row: Blackwell only (hgx-b200.ini: nccl_arch = blackwell; not hgx-h200, not a100-8); its B200
 * files (E=256,N=256 among them) found only where the part is named NVIDIA B200; Qwen3-235B-A22B at TP8 (E=128,
 * N=192) has none. hgx-b200.ini names its device NVIDIA B200 (wave 45: the files for it are found). */
START_TEST(sglang_row_by_part)
{
    strata_hw *b200 = strata_test_load_hw("hgx-b200", NULL), *h200 = strata_test_load_hw("hgx-h200", NULL);
    strata_hw *a100 = strata_test_load_hw("a100-8", NULL);
    const strata_serve_fused_moe_bf16 *r = strata_serve_fused_moe_bf16_for("sglang-0.5", b200);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_null(strata_serve_fused_moe_bf16_for("sglang-0.5", h200));
    ck_assert_ptr_null(strata_serve_fused_moe_bf16_for("sglang-0.5", a100));
    ck_assert(strata_serve_fused_moe_bf16_shipped(r, 256, 256, "NVIDIA B200"));
    ck_assert(!strata_serve_fused_moe_bf16_shipped(r, 256, 256, NULL));
    ck_assert(!strata_serve_fused_moe_bf16_shipped(r, 256, 256, "NVIDIA H200"));
    ck_assert(!strata_serve_fused_moe_bf16_shipped(r, 128, 192, "NVIDIA B200"));
    ck_assert_double_eq(strata_serve_fused_moe_bf16_chain_s(r, 1, 128, 192, 4096), 0.0); /* no step: no chain */
    strata_serve_fused_moe_gemm g = strata_serve_fused_moe_bf16_gemm(b200, 0, 1, 128, 192, 8, 8);
    ck_assert_uint_eq(g.sms, 148);
    ck_assert_double_eq_tol(g.bf16_peak, 2250e12, 1e9);
    ck_assert_str_eq(g.device, "NVIDIA B200");
    strata_hw_free(b200);
    strata_hw_free(h200);
    strata_hw_free(a100);
}
END_TEST

/* Qwen3-235B-A22B at TP8 on a B200, one decode token (M = 1 <= E = 128: the 16 x 32 x 64 tile), 8 rows over 8
 * experts, one 16-row M-block each. A wave (serve_triton_moe.h) costs (tile MMA in the measured 64 x 128 x 128
 * tile's k-blocks + 1.454847 fixed) x 0.7530976 us x (1979 / 132) / (2250 / 148) = x 0.742682 us (the H200's FP8
 * rate a SM against the B200's BF16 one).
 *   gate_up: N_out 2 x 192 = 384, 8 x 12 = 96 tiles, one wave on 148 SMs; K 4096: 2 x 16 x 32 x 4096 = 2.0 k-blocks:
 *            (2.0 + 1.454847) x 0.742682 = 2.5658 us.
 *   down:    N_out 4096, 8 x 128 = 1024 tiles, 7 waves; K 192 (3 x 64): 2 x 16 x 32 x 192 = 0.09375 k-blocks:
 *            7 x (0.09375 + 1.454847) x 0.742682 = 8.0509 us.
 * The slower of that and a grouped time; a shipped file (E=256,N=256 on a named B200) leaves the grouped time. */
START_TEST(sglang_default_tile_waves)
{
    const strata_serve_fused_moe_bf16 *r = strata_serve_fused_moe_bf16_find("sglang-0.5", NULL);
    strata_serve_fused_moe_gemm g = {.tokens = 1, .experts = 128, .width = 192, .routed = 8, .active = 8,
                                     .sms = 148, .bf16_peak = 2250e12};
    ck_assert_double_eq_tol(strata_serve_fused_moe_bf16_s(r, 0, &g, 4096, 384) * 1e6, 2.5658, 2e-3);
    ck_assert_double_eq_tol(strata_serve_fused_moe_bf16_s(r, 0, &g, 192, 4096) * 1e6, 8.0509, 2e-3);
    ck_assert_double_eq(strata_serve_fused_moe_bf16_s(r, 9e-6, &g, 192, 4096), 9e-6);
    strata_serve_fused_moe_gemm shipped = {.tokens = 1, .experts = 256, .width = 256, .routed = 8, .active = 8,
                                           .sms = 148, .bf16_peak = 2250e12, .device = "NVIDIA B200"};
    ck_assert_double_eq(strata_serve_fused_moe_bf16_s(r, 1e-6, &shipped, 4096, 512), 1e-6);
    ck_assert_double_eq(strata_serve_fused_moe_bf16_s(NULL, 1e-6, &g, 4096, 384), 1e-6);
}
END_TEST

/* GLM-4.6 under SGLang 0.5.6 (glm4_moe.py l. 1031-1059): its one shared expert fused, so a decode token reaches 9
 * experts of E = 161, each 2 x 192 x 5120 (gate_up) and 192 x 5120 (down) at TP8: 5,898,240 more bf16 bytes of
 * weights (3,932,160 + 1,966,080) and 2 x (384 + 192) x 5120 = 5,898,240 more flops a token. Its down GEMM (K 192,
 * N_out 5120, 160 N-blocks): 9 x 160 = 1440 tiles, 10 waves on 148 SMs, against 8 x 160 = 1280 tiles, 9 waves,
 * without: 10 x 1.548597 x 0.742682 = 11.5012 us against 10.3511 us. Not for Qwen3 (no shared expert), not for Llama
 * 4 (its shared expert its own MLP: no biased router), not for an MLA model, not under vLLM 0.4.2's row. */
START_TEST(sglang_fused_shared_expert)
{
    const strata_serve_fused_moe_bf16 *r = strata_serve_fused_moe_bf16_find("sglang-0.5", NULL);
    const strata_serve_fused_moe_bf16 *v = strata_serve_fused_moe_bf16_find("vllm-0.4.2", NULL);
    strata_serve_model glm = {.experts = 160, .top_k = 8, .shared_experts = 1, .router_groups = 1,
                              .dtype = STRATA_DTYPE_BF16};
    /* Llama 4 Scout's shape: one shared expert, a plain softmax router: llama4.py runs it as its own MLP */
    strata_serve_model scout = {.experts = 16, .top_k = 1, .shared_experts = 1, .dtype = STRATA_DTYPE_BF16};
    strata_serve_model qwen = {.experts = 128, .top_k = 8, .dtype = STRATA_DTYPE_BF16};
    strata_serve_model mla = {.experts = 256, .top_k = 8, .shared_experts = 1, .router_groups = 8, .kv_lora_rank = 512};
    ck_assert_uint_eq(strata_serve_fused_moe_bf16_shared(r, &glm), 1);
    ck_assert_uint_eq(strata_serve_fused_moe_bf16_shared(r, &qwen), 0);
    ck_assert_uint_eq(strata_serve_fused_moe_bf16_shared(r, &scout), 0);
    ck_assert_uint_eq(strata_serve_fused_moe_bf16_shared(r, &mla), 0);
    ck_assert_uint_eq(strata_serve_fused_moe_bf16_shared(v, &glm), 0);
    ck_assert_uint_eq(strata_serve_fused_moe_bf16_shared(NULL, &glm), 0);
    strata_serve_fused_moe_gemm fused = {.tokens = 1, .experts = 161, .width = 192, .routed = 9, .active = 9,
                                         .sms = 148, .bf16_peak = 2250e12};
    strata_serve_fused_moe_gemm apart = {.tokens = 1, .experts = 160, .width = 192, .routed = 8, .active = 8,
                                         .sms = 148, .bf16_peak = 2250e12};
    ck_assert_double_eq_tol(strata_serve_fused_moe_bf16_s(r, 0, &fused, 192, 5120) * 1e6, 11.5012, 2e-3);
    ck_assert_double_eq_tol(strata_serve_fused_moe_bf16_s(r, 0, &apart, 192, 5120) * 1e6, 10.3511, 2e-3);
}
END_TEST

/* Triton's AMD MFMA layout (serve_mfma_layout.h) at num_warps 4:
 *   16 x 32: 16 x 16 MFMA; {1,1}: 16/32/1 = 0 >= 32/16/1 = 2? no -> {1,2}; 0 >= 1? no -> {1,4}; 4 x 16 = 64 > 32:
 *            warps {4, 1}; distinct min(4, 1) x min(1, 2) = 1: 4 replicas;
 *   32 x 32: 32 x 32 MFMA; {1,1} -> {1,2} (0 >= 1? no); 0 >= 0: ret[0] < 1? no -> {1,4}; 128 > 32: {4, 1}; 1 x 1: 4;
 *   64 x 64: 32 x 32; {1,1} -> {1,2}; 1 >= 1 and ret[0] < 2 -> {2,2}; distinct 2 x 2: 1;
 *   64 x 128 and 16 x 128 ({1,4}, distinct 1 x 4): 1; 8 x 32 (no MFMA: the FMA dot): 1. */
START_TEST(mfma_replicas_by_hand)
{
    ck_assert_uint_eq(strata_serve_mfma_replicas(16, 32, 4), 4);
    ck_assert_uint_eq(strata_serve_mfma_replicas(32, 32, 4), 4);
    ck_assert_uint_eq(strata_serve_mfma_replicas(64, 64, 4), 1);
    ck_assert_uint_eq(strata_serve_mfma_replicas(64, 128, 4), 1);
    ck_assert_uint_eq(strata_serve_mfma_replicas(16, 128, 4), 1);
    ck_assert_uint_eq(strata_serve_mfma_replicas(8, 32, 4), 1);
    ck_assert_uint_eq(strata_serve_mfma_replicas(16, 32, 0), 1);
}
END_TEST

/* vLLM 0.11.0's ROCm row: ROCm hardware only (mi300x-8, mi300x; not hgx-h200, a100-8); mi300x-8 inherits
 * mi300x.ini's AMD_Instinct_MI300X, mi325x-8 names AMD_Instinct_MI325X. The wheel's unquantized files:
 * E=128,N=1024 for MI300X only; E=8,N=14336 for both; GLM-4.6 at TP8 (E=160, N=1536 / 8 = 192): none. */
START_TEST(rocm_row_by_part)
{
    strata_hw *mi8 = strata_test_load_hw("mi300x-8", NULL), *mi1 = strata_test_load_hw("mi300x", NULL);
    strata_hw *mi325 = strata_test_load_hw("mi325x-8", NULL), *h200 = strata_test_load_hw("hgx-h200", NULL);
    strata_hw *a100 = strata_test_load_hw("a100-8", NULL);
    const strata_serve_fused_moe_bf16 *r = strata_serve_fused_moe_bf16_for("vllm-0.11-rocm", mi8);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_nonnull(strata_serve_fused_moe_bf16_for("vllm-0.11-rocm", mi1));
    ck_assert_ptr_null(strata_serve_fused_moe_bf16_for("vllm-0.11-rocm", h200));
    ck_assert_ptr_null(strata_serve_fused_moe_bf16_for("vllm-0.11-rocm", a100));
    ck_assert_str_eq(strata_hw_device_name(mi8), "AMD_Instinct_MI300X");
    ck_assert_str_eq(strata_hw_device_name(mi325), "AMD_Instinct_MI325X");
    ck_assert(strata_serve_fused_moe_bf16_shipped(r, 128, 1024, "AMD_Instinct_MI300X"));
    ck_assert(!strata_serve_fused_moe_bf16_shipped(r, 128, 1024, "AMD_Instinct_MI325X"));
    ck_assert(strata_serve_fused_moe_bf16_shipped(r, 8, 14336, "AMD_Instinct_MI325X"));
    ck_assert(!strata_serve_fused_moe_bf16_shipped(r, 160, 192, "AMD_Instinct_MI300X"));
    ck_assert(!strata_serve_fused_moe_bf16_shipped(r, 128, 1024, NULL));
    strata_serve_fused_moe_gemm g = strata_serve_fused_moe_bf16_gemm(mi8, 0, 1, 160, 192, 8, 8);
    ck_assert_uint_eq(g.sms, 304);
    ck_assert_double_eq_tol(g.bf16_peak, 1307.4e12, 1e9);
    ck_assert_str_eq(g.device, "AMD_Instinct_MI300X");
    strata_hw_free(mi8);
    strata_hw_free(mi1);
    strata_hw_free(mi325);
    strata_hw_free(h200);
    strata_hw_free(a100);
}
END_TEST

/* GLM-4.6 at TP8 on an MI300X (E=160, N=192, hidden K 5120; no file: the default config). The measured 64 x 128 x
 * 128 k-block a SM (0.7530976 us on the H200's FP8 rate a SM, 1979 / 132 TFLOP/s) at the MI300X's BF16 rate a CU
 * (1307.4 / 304): 0.7530976 x (1979 / 132) / (1307.4 / 304) = 2.625356 us; the fixed part 1.454847 k-blocks.
 *   M = 1 (<= E): 16 x 32 x 64, 4 MFMA replicas; 8 rows over 8 experts, one 16-row block each.
 *     gate_up: N_out 384, 8 x 12 = 96 tiles, 1 wave; K 5120: 2 x 16 x 32 x 5120 = 2.5 k-blocks, x 4 with the
 *              replicas: (10 + 1.454847) x 2.625356 = 30.0731 us;
 *     down:    N_out 5120, 8 x 160 = 1280 tiles, ceil(1280 / 304) = 5 waves; K 192 (3 x 64): 0.09375 k-blocks,
 *              x 4: 5 x (0.375 + 1.454847) x 2.625356 = 24.0200 us.
 *   M = 200 (> E): 64 x 64 x 32, no replicas; 1600 rows over 160 experts, 10 each, one 64-row block each.
 *     gate_up: 160 x 6 = 960 tiles, 4 waves; 2 x 64 x 64 x 5120 = 20 k-blocks: 4 x 21.454847 x 2.625356 = 225.306 us.
 * With a file (E=128,N=1024 on an AMD_Instinct_MI300X): the grouped time. */
START_TEST(rocm_default_tile_by_hand)
{
    const strata_serve_fused_moe_bf16 *r = strata_serve_fused_moe_bf16_find("vllm-0.11-rocm", NULL);
    strata_serve_fused_moe_gemm g = {.tokens = 1, .experts = 160, .width = 192, .routed = 8, .active = 8,
                                     .sms = 304, .bf16_peak = 1307.4e12, .device = "AMD_Instinct_MI300X"};
    ck_assert_double_eq_tol(strata_serve_fused_moe_bf16_s(r, 0, &g, 5120, 384) * 1e6, 30.0731, 2e-3);
    ck_assert_double_eq_tol(strata_serve_fused_moe_bf16_s(r, 0, &g, 192, 5120) * 1e6, 24.0200, 2e-3);
    strata_serve_fused_moe_gemm big = g;
    big.tokens = 200;
    big.routed = 1600;
    big.active = 160;
    ck_assert_double_eq_tol(strata_serve_fused_moe_bf16_s(r, 0, &big, 5120, 384) * 1e6, 225.306, 2e-3);
    strata_serve_fused_moe_gemm tuned = g;
    tuned.experts = 128;
    tuned.width = 1024;
    ck_assert_double_eq(strata_serve_fused_moe_bf16_s(r, 7e-6, &tuned, 5120, 2048), 7e-6);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_fused_moe_bf16");
    TCase *tc = tcase_create("serve_fused_moe_bf16");
    tcase_add_test(tc, default_tile_by_m);
    tcase_add_test(tc, shipped_files);
    tcase_add_test(tc, chain_by_hand);
    tcase_add_test(tc, row_by_part);
    tcase_add_test(tc, served_decode_takes_the_chain);
    tcase_add_test(tc, release_073_tiles);
    tcase_add_test(tc, release_073_mma_at_c4);
    tcase_add_test(tc, sglang_row_by_part);
    tcase_add_test(tc, sglang_default_tile_waves);
    tcase_add_test(tc, sglang_fused_shared_expert);
    tcase_add_test(tc, mfma_replicas_by_hand);
    tcase_add_test(tc, rocm_row_by_part);
    tcase_add_test(tc, rocm_default_tile_by_hand);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
