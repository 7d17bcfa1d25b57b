/*
 * serve_moe_route.c: routed-expert counts, TensorRT-LLM's expert-map
 * passes and the block-scaled FP8 input quantization's bytes
 * (serve_moe_route.h).
 */
#include "serve/serve_moe_route.h"
#include <math.h>

/* A router picks each token's k experts (DeepSeek-V3's grouped top-k:
 * the 4 best of 8 groups, then the 8 best of their 128 experts; vLLM
 * v0.8.4 vllm/model_executor/layers/fused_moe/fused_moe.py grouped_topk;
 * Qwen3's and Mixtral's plain softmax top-k), so a step's tokens do not
 * spread their t k rows over min(e, t k) experts as aiconfigurator's
 * balanced assignment does (its moe_perf tables, distribution balanced,
 * which strata_serve_cost_moe_experts keeps). With the load balanced on
 * average (DeepSeek-V3's bias-adjusted routing, the auxiliary losses of
 * the others) each expert is picked by a token with probability k / e;
 * taking tokens as independent, an expert is left unpicked by all t with
 * probability (1 - k / e)^t. vLLM's own kernel benchmark routes this way
 * (benchmarks/kernels/benchmark_moe.py: gating_output = torch.randn). */
uint64_t strata_serve_routed_experts(uint64_t e, uint64_t k, uint64_t t)
{
    if (!e || !k || !t)
        return 0;
    uint64_t lo = k < e ? k : e;
    uint64_t hi = t * k < e ? t * k : e; /* t k <= e: at most t k rows */
    double p = k >= e ? 1.0 : (double)k / (double)e;
    double expected = (double)e * (1.0 - pow(1.0 - p, (double)t));
    uint64_t n = (uint64_t)llround(expected);
    return n < lo ? lo : n > hi ? hi : n;
}

/* The expert maps of t tokens' routed rows (moe_kernels.cu, runMoe's
 * prologue), 4-byte ids and indices, e = the experts on the rank (EP 1):
 * fusedBuildExpertMapsSortFirstToken (one block: t <= 256, top_k in
 * {1, 2, 4, 6, 8}, log2(e + 1) < 9) reads each routed row's expert id and
 * writes both permutation maps, 12 bytes a routed row, and the e + 1
 * 8-byte expert offsets. Else threeStepBuildExpertMapsSortFirstToken, over
 * e x b blocks of computeNumTokensPerBlock's size (the smallest of 32, 64,
 * ... 1024 with ceil(t / size) x e <= size, else 1024):
 * blockExpertPrefixSum reads the ids and writes each routed row's index
 * (8 a routed row) and e x b counts; globalExpertPrefixSum reads the
 * counts and writes their prefix sums and the offsets;
 * mergeExpertPrefixSum reads counts, sums and indices and writes the two
 * maps and the permuted expert ids (16 a routed row). */
uint32_t strata_serve_expert_map_passes(uint64_t t, uint64_t k, uint64_t e, strata_serve_route_pass out[3])
{
    uint64_t routed = t * k;
    double r = (double)routed, offsets = 8.0 * (double)(e + 1);
    if (t <= 256 && e <= 510 && (k == 1 || k == 2 || k == 4 || k == 6 || k == 8)) {
        out[0] = (strata_serve_route_pass){routed, 12.0 * r + offsets};
        return 1;
    }
    uint64_t per_block = 1024;
    for (uint64_t b = 32; b <= 1024; b *= 2)
        if ((t + b - 1) / b * e <= b) {
            per_block = b;
            break;
        }
    double eb = (double)(e * ((t + per_block - 1) / per_block));
    out[0] = (strata_serve_route_pass){routed, 8.0 * r + 4.0 * eb};
    out[1] = (strata_serve_route_pass){routed, 8.0 * eb + offsets};
    out[2] = (strata_serve_route_pass){routed, 16.0 * r + 8.0 * eb};
    return 3;
}

/* per_token_group_quant_fp8 (vLLM v0.8.4 vllm/model_executor/layers/
 * quantization/utils/fp8_utils.py, called by apply_w8a8_block_fp8_linear
 * before cutlass_scaled_mm or w8a8_block_fp8_matmul, and by
 * invoke_fused_moe_kernel for each grouped GEMM's input; SGLang 0.4.5
 * python/sglang/srt/layers/quantization/fp8_utils.py the same;
 * TensorRT-LLM's FP8BlockScalesLinearMethod, fp8_quantize_1x128): one
 * kernel reading the bf16 input and writing it in FP8 with a float scale
 * per 1 x block group. */
double strata_serve_block_quant_bytes(uint64_t rows, uint64_t k, uint32_t block, double act, double in)
{
    if (!block || !rows || !k)
        return 0;
    double groups = (double)((k + block - 1) / block);
    return (double)rows * ((double)k * (act + in) + 4.0 * groups);
}
