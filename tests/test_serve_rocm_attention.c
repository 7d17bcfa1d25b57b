/*
 * test_serve_rocm_attention.c: vLLM's ROCm decode attention kernels
 * (sim/serve/serve_decode.h: paged-attention-rocm, from csrc/rocm/
 * attention.cu's launcher; triton-unified-attention, from V1's
 * triton_unified_attention.py) against values derived by hand with
 * MI300X's figures, and the vLLM rows taking them where the hardware's
 * collectives are RCCL's (and only there): vllm-v0 and vllm-v1 under
 * --prefill-decode-attention the paged kernel, vllm-v1 the Triton one.
 */
#include <math.h>
#include <string.h>
#include "hw/hw.h"
#include "serve/serve_cost.h"
#include "serve/serve_decode.h"
#include "serve/serve_engine.h"
#include "testutil.h"

static strata_hw *hw_load(const char *name)
{
    char *path = g_build_filename(STRATA_SOURCE_DIR, "configs", "hw", name, NULL);
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    g_free(path);
    return hw;
}

/* MI300X (configs/hw/mi300x.ini): kernel_launch 1.9 us, HBM latency 0.5 us,
 * 5.3 TB/s at stream efficiency 0.6 (3.18 TB/s). Llama 3 70B at TP8: one KV
 * head on the rank, its 8 query heads, head 128, bf16 cache and queries.
 *
 * 128 decodes of 1,024 keys: 1,024 / 256 = 4 partitions a sequence, 512
 * workgroups (2 waves over 304 CUs).
 *   K and V:  128 x 1,024 x 2 x 128 x 2 B  = 67,108,864
 *   queries:  128 x 8 heads x 128 x 2 B     =    262,144 (read), as much written
 *   partials: 1,024 heads x 4 x (256 + 8) B =  1,081,344 written, read back
 *   bytes = 67,108,864 + 2 x 262,144 + 2 x 1,081,344 = 69,795,840
 *   time  = 2 x 1.9 us + (3 + 2) x 0.5 us + 69,795,840 / 3.18e12
 *         = 6.3 us + 21.9484 us = 28.2484 us.
 * One decode of one key: 1 partition; 512 + 2 x 2,048 + 2 x 2,112 = 8,832
 * bytes: 6.3 us + 2.7774 ns. */
START_TEST(rocm_paged_attention_by_hand)
{
    strata_hw *hw = hw_load("mi300x.ini");
    GError *err = NULL;
    const strata_serve_decode_kernel *k = strata_serve_decode_find("paged-attention-rocm", &err);
    ck_assert_msg(k, "%s", err ? err->message : "");
    ck_assert(!strata_serve_decode_is_flash(k));
    strata_serve_decode_in in = {128, 1024, 1024, 1, 8, 128, 2.0, 2.0};
    strata_serve_decode_plan p;
    double t = strata_serve_decode_time(k, hw, 0, &in, &p);
    ck_assert_msg(fabs(t - (6.3e-6 + 69795840.0 / 3.18e12)) < 1e-12, "%.17g", t);
    ck_assert_msg(fabs(t - 28.2484e-6) < 1e-9, "%.17g", t);
    ck_assert_uint_eq(p.blocks, 4);
    ck_assert_uint_eq(p.ctas, 512);
    ck_assert_uint_eq(p.waves, 2);
    /* one key more opens a fifth partition: 640 workgroups */
    in.context = in.longest = 1025;
    strata_serve_decode_time(k, hw, 0, &in, &p);
    ck_assert_uint_eq(p.blocks, 5);
    ck_assert_uint_eq(p.ctas, 640);
    strata_serve_decode_in one = {1, 1, 1, 1, 8, 128, 2.0, 2.0};
    t = strata_serve_decode_time(k, hw, 0, &one, NULL);
    ck_assert_msg(fabs(t - (6.3e-6 + 8832.0 / 3.18e12)) < 1e-15, "%.17g", t);
    /* an FP8 cache halves the K and V bytes only */
    in = (strata_serve_decode_in){128, 1024, 1024, 1, 8, 128, 1.0, 2.0};
    t = strata_serve_decode_time(k, hw, 0, &in, NULL);
    ck_assert_msg(fabs(t - (6.3e-6 + (69795840.0 - 33554432.0) / 3.18e12)) < 1e-12, "%.17g", t);
    strata_hw_free(hw);
}
END_TEST

/* V1's Triton unified_attention (ROCm/vllm@71faa188 triton_unified_attention.py)
 * on MI300X (kernel_launch 1.9 us, HBM latency 0.5 us, 3.18 TB/s streamed),
 * Llama 3 70B at TP8: one KV head, 8 query heads (BLOCK_Q = 16 / 8 = 2),
 * head 128, FP8 cache, fp16 queries; 16-token blocks.
 *
 * 128 decodes of 1,024 keys: 128 / 2 + 128 = 192 query blocks x 1 KV head
 * > 128: the 2D kernel, 192 programs (one wave on 304 CUs), one per
 * sequence walking 1,024 / 16 = 64 blocks. Chain: a binary search of 8
 * loads (bit length of 128) + 2 (start, then Q) + 2 x 64 = 138 latencies
 * = 69 us. Bytes: K and V 128 x 64 x 16 x 2 x 128 x 1 B = 33,554,432, Q in
 * and out 2 x 128 x 8 x 128 x 2 B = 524,288: 34,078,720 / 3.18e12 =
 * 10.72 us, under the chain. Time 1.9 + 69 = 70.9 us.
 * One decode of 1,024 keys: 0 + 1 = 1 query block: the 3D kernel, 16
 * segments of ceil(1,024 / 256) = 4 blocks, all 16 holding keys. Chain 1
 * (search) + 2 + 2 x 4 = 11 latencies = 5.5 us (bytes: 262,144 of K and V
 * + 2,048 of Q + partials 8 heads x 16 x (128 x 4 + 8) = 66,560: 0.10 us).
 * Reduce: 1 + 2 latencies = 1.5 us (68,608 B: 0.02 us). Time 2 x 1.9 +
 * 5.5 + 1.5 = 10.8 us.
 * 1,025 keys: 5 blocks a segment, ceil(1,025 / 80) = 13 segments hold
 * keys; chain 1 + 2 + 10 = 13 latencies = 6.5 us: 11.8 us.
 * The switch: 85 decodes give 42 + 85 = 127 query blocks (3D), 86 give
 * 43 + 86 = 129 (2D).
 *
 * Wave 32, the compiled loop: each iteration also issues its instructions
 * after each load returns. A wave64 VALU op: 64 / (163.4e12 / (304 x 4 x
 * 2 x 2)) = 1.9051163 ns; an MFMA 16x16x16: 8,192 / (1307.4e12 / (304 x
 * 4)) = 7.6192994 ns. FP8 cache, 2D: 179 x 1.9051163 + 10 x 7.6192994 =
 * 417.20881 ns an iteration; 3D: 178 x ... = 415.30369 ns. So 128 x
 * 1,024: chain 69 us + 64 x 417.20881 ns = 95.701364 us (1 active program
 * a CU: one round), time 97.601364 us. One decode of 1,024 keys: chain
 * 5.5 + 4 x 0.41530369 = 7.1612148 us, time 12.461215 us; 1,025 keys:
 * 6.5 + 5 x 0.41530369 = 8.5765185, time 13.876518 us.
 * Occupancy: 85 decodes of 1,024 keys (3D): 85 x 16 = 1,360 programs walk
 * keys, over 3 x 304 = 912 slots: 2 rounds of the chain (bit length of 85
 * = 7 searches + 2 + 2 x 4 = 17 latencies = 8.5 us, + 4 x 0.41530369 =
 * 10.161215 us): 20.32243 us, over a CU's issue (ceil(1,360 / 304) = 5
 * programs x 4 iterations x 0.41530369 = 8.3060738 us) and the bytes
 * (K and V 85 x 64 x 16 x 2 x 128 = 22,282,240, Q 85 x 8 x 128 x 2 =
 * 174,080, partials 680 x 16 x 520 = 5,657,600: 28,113,920 / 3.18e12 =
 * 8.84 us). Reduce: 1.9 + max(9 x 0.5, (5,657,600 + 174,080) / 3.18e12) =
 * 6.4 us. Time 1.9 + 20.32243 + 6.4 = 28.62243 us. */
START_TEST(triton_unified_attention_by_hand)
{
    strata_hw *hw = hw_load("mi300x.ini");
    GError *err = NULL;
    const strata_serve_decode_kernel *k = strata_serve_decode_find("triton-unified-attention", &err);
    ck_assert_msg(k, "%s", err ? err->message : "");
    ck_assert(!strata_serve_decode_is_flash(k));
    strata_serve_decode_in in = {128, 1024, 1024, 1, 8, 128, 1.0, 2.0};
    strata_serve_decode_plan p;
    double t = strata_serve_decode_time(k, hw, 0, &in, &p);
    ck_assert_msg(fabs(t - 97.601364e-6) < 1e-12, "%.17g", t);
    ck_assert_uint_eq(p.blocks, 1);
    ck_assert_uint_eq(p.ctas, 192);
    ck_assert_uint_eq(p.waves, 1);
    ck_assert_msg(fabs(p.cta_s - 95.701364e-6) < 1e-12, "%.17g", p.cta_s);
    strata_serve_decode_in one = {1, 1024, 1024, 1, 8, 128, 1.0, 2.0};
    t = strata_serve_decode_time(k, hw, 0, &one, &p);
    ck_assert_msg(fabs(t - 12.461215e-6) < 1e-12, "%.17g", t);
    ck_assert_uint_eq(p.blocks, 16);
    ck_assert_uint_eq(p.ctas, 16);
    one.context = one.longest = 1025;
    t = strata_serve_decode_time(k, hw, 0, &one, &p);
    ck_assert_msg(fabs(t - 13.876518e-6) < 1e-12, "%.17g", t);
    ck_assert_uint_eq(p.blocks, 13);
    in.decodes = 85;
    t = strata_serve_decode_time(k, hw, 0, &in, &p);
    ck_assert_msg(fabs(t - 28.62243e-6) < 1e-11, "%.17g", t);
    ck_assert_uint_eq(p.blocks, 16);
    ck_assert_uint_eq(p.ctas, 127 * 16);
    in.decodes = 86;
    strata_serve_decode_time(k, hw, 0, &in, &p);
    ck_assert_uint_eq(p.blocks, 1);
    ck_assert_uint_eq(p.ctas, 129);
    strata_hw_free(hw);
}
END_TEST

/* One layer's decode attention through the serving cost (70B, FP8 weights,
 * bf16 cache, TP8; 128 decodes of 1,024 keys): vllm-v1 (no --engine) on
 * mi300x-8 with --prefill-decode-attention charges the ROCm kernel,
 * 28.2484 us (no prefill, so no preprocessing pass); without it the Triton
 * kernel, 1.9 + 69 us (its bf16 bytes, 67,633,152 / 3.18e12 = 21.27 us,
 * under the chain) + 64 iterations' issue with an fp16-width cache (119 x
 * 1.9051163 + 10 x 7.6192994 = 302.90183 ns: 19.385717 us) = 90.285717
 * us; vllm-v0 charges the ROCm kernel plus its kernels
 * around the attention (RoPE and the cache write of the 128 new tokens),
 * so more; on dgx-h100 (NCCL) vllm-v1 keeps the flash op, another figure. */
START_TEST(vllm_rows_take_rocm_attention_on_rccl)
{
    strata_serve_model m = {0};
    ck_assert(strata_serve_model_preset(&m, "llama-3-70b", NULL));
    m.dtype = STRATA_DTYPE_F8;
    m.kv_dtype = STRATA_DTYPE_BF16;
    strata_serve_chunk ch[128];
    for (uint32_t i = 0; i < 128; i++)
        ch[i] = (strata_serve_chunk){i, 1, 1024, true};
    const char *files[4] = {"mi300x-8.ini", "mi300x-8.ini", "dgx-h100.ini", "mi300x-8.ini"};
    const char *engines[4] = {NULL, "vllm-v0", NULL, NULL};
    bool pd[4] = {true, false, false, false};
    double t[4];
    for (int i = 0; i < 4; i++) {
        strata_hw *hw = hw_load(files[i]);
        GError *err = NULL;
        strata_serve_cost *c = strata_serve_cost_new(hw, &m, 8, false, 256, &err);
        ck_assert_msg(c, "%s", err ? err->message : "");
        ck_assert(strata_serve_engine_set_kernels_env(engines[i] ? strata_serve_engine_find(engines[i], NULL) : NULL,
                                                      hw, c, pd[i], &err));
        strata_serve_work w;
        t[i] = strata_serve_cost_attention(c, ch, 128, 0, &w);
        strata_serve_cost_free(c);
        strata_hw_free(hw);
    }
    ck_assert_msg(fabs(t[0] - 28.2484e-6) < 1e-9, "%.17g", t[0]);
    ck_assert_msg(t[1] > t[0] + 1e-7, "%.17g %.17g", t[1], t[0]);
    ck_assert_msg(fabs(t[2] - 28.2484e-6) > 1e-7, "%.17g", t[2]);
    ck_assert_msg(fabs(t[3] - 90.285717e-6) < 1e-11, "%.17g", t[3]);
}
END_TEST

/* --prefill-decode-attention is vLLM V1's setting on ROCm: refused with an
 * --engine row (vllm-v0 reads no such variable) and on NCCL hardware (V1
 * on CUDA runs FLASH_ATTN). */
START_TEST(prefill_decode_only_for_v1_on_rccl)
{
    strata_serve_model m = {0};
    ck_assert(strata_serve_model_preset(&m, "llama-3-70b", NULL));
    const char *files[2] = {"mi300x-8.ini", "dgx-h100.ini"};
    const char *engines[2] = {"vllm-v0", NULL};
    const char *want[2] = {"got vllm-v0 on AMD hardware", "got vllm-v1 on non-AMD hardware"};
    for (int i = 0; i < 2; i++) {
        strata_hw *hw = hw_load(files[i]);
        GError *err = NULL;
        strata_serve_cost *c = strata_serve_cost_new(hw, &m, 8, false, 256, &err);
        ck_assert_msg(c, "%s", err ? err->message : "");
        ck_assert(!strata_serve_engine_set_kernels_env(engines[i] ? strata_serve_engine_find(engines[i], NULL) : NULL,
                                                       hw, c, true, &err));
        ck_assert_msg(err && strstr(err->message, "--prefill-decode-attention: expected no --engine") &&
                          strstr(err->message, want[i]),
                      "%s", err ? err->message : "");
        g_clear_error(&err);
        strata_serve_cost_free(c);
        strata_hw_free(hw);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_rocm_attention");
    TCase *tc = tcase_create("serve_rocm_attention");
    tcase_add_test(tc, rocm_paged_attention_by_hand);
    tcase_add_test(tc, triton_unified_attention_by_hand);
    tcase_add_test(tc, vllm_rows_take_rocm_attention_on_rccl);
    tcase_add_test(tc, prefill_decode_only_for_v1_on_rccl);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
