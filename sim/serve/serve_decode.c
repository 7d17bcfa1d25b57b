/*
 * serve_decode.c: the decode attention kernels (serve_decode.h).
 *
 * TensorRT-LLM's XQA on Hopper with an FP8 cache, from its sources
 * (NVIDIA/TensorRT-LLM, main as read for this model):
 *
 * - The op. decoderXQAImplJIT.cpp runImpl: invokeBuildDecoderInfo (the
 *   sequence offsets; "currently, this kernel is always needed"), then the
 *   XQA kernel, RoPE and the new token's K/V append fused into it for the
 *   GMMA kernel (applyRoPEInXqaKernel) - two kernels, each one hardware
 *   kernel_launch (the graph-launched gap plus a kernel's first and last
 *   HBM round trips, configs/hw/h100.ini).
 * - The grid. mha_sm90.cu launchHopperF8MHA: gridDim {1, nbSubSeqPerSeq,
 *   nbKHeads x batchSize}: a CTA per (sequence, KV head, sub-sequence),
 *   the KV head's whole query group in the CTA (ctaNbQHeads rows, swapAB),
 *   three warp groups (two GMMA, one I/O). It streams its part of the
 *   context in tiles of gemm0CtaTileNbTokens = 64 tokens (K and V, two
 *   buffers each), so a CTA reads ceil(tokens / 64) x 64 tokens' K and V
 *   and its query heads once, and writes their outputs once.
 * - Multi-block mode. decoderXQAImplCommon.h computeMultiBlockCount: from
 *   max_past_kv_length / kMinHistoryTokensPerBlock (128,
 *   xqaConstants.h), at most round(sqrt(8 x that)), at least 1; scaled
 *   down when batch x kv heads x blocks / SMs exceeds kTargetWaveFactor
 *   (8) waves; at most getXqaMaxNumSubSeq (6000) / batch. The sub-blocks'
 *   partial results are merged by the last CTA of each sequence (inside
 *   the kernel: no kernel more). max_past_kv_length is the batch's
 *   longest; each sequence's CTAs split its own context. strata takes a
 *   CTA's tiles at the batch's mean context (the waves of a mixed batch
 *   as those of equal sequences: an ESTIMATE of the tail).
 * - Occupancy. ESTIMATE: one CTA per SM (a CTA is 384 threads with K, V,
 *   X and Q buffers in shared memory; the register file and shared memory
 *   per CTA are not public figures). With CTAs on every SM, each CTA
 *   streams at its SM's share of the stream rate; with fewer, the others
 *   idle (the kernel cannot use more than its CTAs' share: the occupancy
 *   loss at small batch and short context).
 * - A CTA's fixed time. ESTIMATE: 0.5 us, the dependent steps before a
 *   CTA's stream (the page list, then the first K tile behind it: two HBM
 *   round trips of ~0.25 us) and the merge of its result; read from
 *   aiconfigurator's measured XQA rows at context 2 (the training batch
 *   sizes 1, 4, 16, 64, 256, 1024), where nothing else is left.
 *
 * Checked against aiconfigurator's 1.3.0rc20 generation-attention table
 * (validation/data/aiconfigurator-xqa.csv, docs/serving.md).
 */
#include "serve/serve_decode.h"
#include <math.h>
#include <stdbool.h>
#include "core/error.h"
#include "serve/serve_names.h"

typedef double (*decode_time_fn)(const strata_hw *hw, uint32_t unit, const strata_serve_decode_in *in,
                                 strata_serve_decode_plan *plan);

struct strata_serve_decode_kernel {
    const char *name;
    decode_time_fn time; /* NULL: the flash-attention op of the cost model */
    const char *what;
};

enum {
    XQA_TILE_TOKENS = 64,         /* mha_sm90.cu gemm0CtaTileNbTokens */
    XQA_MIN_HISTORY_PER_BLOCK = 128, /* xqaConstants.h kMinHistoryTokensPerBlock */
    XQA_TARGET_WAVES = 8,         /* kTargetWaveFactor */
    XQA_MAX_SUB_SEQ = 6000,       /* getXqaMaxNumSubSeq, not MLA */
    XQA_KERNELS = 2,              /* invokeBuildDecoderInfo, the XQA kernel */
};
static const double XQA_CTA_FIXED_S = 0.5e-6; /* ESTIMATE, see above */

/* computeMultiBlockCount (decoderXQAImplCommon.h), line by line. */
static uint32_t xqa_blocks(uint64_t decodes, uint64_t kv_heads, uint64_t past, uint32_t sms)
{
    double b = (double)(past / XQA_MIN_HISTORY_PER_BLOCK);
    b = fmin(b, round(sqrt(b * 8.0)));
    b = fmax(b, 1.0);
    double waves = (double)decodes * (double)kv_heads * b / (double)sms, adj = waves / XQA_TARGET_WAVES;
    if (adj > 1.0)
        b = floor(b / adj);
    b = fmax(b, 1.0);
    double cap = decodes ? (double)(XQA_MAX_SUB_SEQ / decodes) : 1.0;
    return (uint32_t)fmax(fmin(b, cap), 1.0);
}

/* The unit's streaming rate from its operands' memory (bandwidth x
 * stream_efficiency, 0 without a memory) and its SM count (at least 1). */
static double unit_stream_rate(const strata_hw *hw, uint32_t unit, uint32_t *sms)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    const strata_memory_spec *m = strata_hw_memory(hw, u->operands);
    double eff = u->kernel.stream_efficiency > 0 ? u->kernel.stream_efficiency : 1.0;
    *sms = u->kernel.sms ? u->kernel.sms : 1;
    return m ? m->bandwidth * eff : 0;
}

/* What the decode rows read first: the unit's kernel_launch, stream rate
 * and SM count (unit_stream_rate), its operand memory's latency, and the
 * batch's mean and longest context, each at least 1 token (the longest at
 * least the mean). */
typedef struct decode_shape {
    double launch, rate, lat; /* lat: the operand memory's latency */
    uint32_t sms;
    uint64_t ctx, longest;
} decode_shape;

static decode_shape decode_shape_of(const strata_hw *hw, uint32_t unit, const strata_serve_decode_in *in)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    const strata_memory_spec *m = strata_hw_memory(hw, u->operands);
    decode_shape s = {.launch = u->kernel.kernel_launch, .lat = m ? m->latency : 0};
    s.rate = unit_stream_rate(hw, unit, &s.sms);
    s.ctx = in->context ? in->context : 1;
    s.longest = in->longest > s.ctx ? in->longest : s.ctx;
    return s;
}

/* multi_block false: one CTA per (sequence, KV head), as a launch with
 * multi-block mode off (v0.9.0, xqa_v09_time below). token_s: a floor on a
 * CTA's time a cached token it streams, whatever the memory (0: none;
 * v0.9.0's FP8 cubins on sm_90, xqa_v09_token_s). */
static double xqa_launch_time(const strata_hw *hw, uint32_t unit, const strata_serve_decode_in *in,
                              strata_serve_decode_plan *plan, bool multi_block, double token_s)
{
    decode_shape s = decode_shape_of(hw, unit, in);
    strata_serve_decode_plan p = {0};
    if (in->decodes && in->kv_heads) {
        p.blocks = multi_block ? xqa_blocks(in->decodes, in->kv_heads, s.longest - 1, s.sms) : 1;
        p.ctas = in->decodes * in->kv_heads * p.blocks;
        p.waves = (p.ctas + s.sms - 1) / s.sms;
        uint64_t per = (s.ctx + p.blocks - 1) / p.blocks;
        double tokens = (double)((per + XQA_TILE_TOKENS - 1) / XQA_TILE_TOKENS * XQA_TILE_TOKENS);
        double d = (double)in->head_dim;
        double bytes = tokens * 2.0 * d * in->kv_bytes + (double)in->group * d * in->q_bytes * 2.0;
        p.cta_s = XQA_CTA_FIXED_S + fmax(s.rate > 0 ? bytes / (s.rate / s.sms) : 0, tokens * token_s);
        p.time_s = XQA_KERNELS * s.launch + (double)p.waves * p.cta_s;
    }
    if (plan)
        *plan = p;
    return p.time_s;
}

/* TensorRT-LLM's masked multi-head attention (gptAttentionCommon.cpp
 * enqueueGeneration: fusedQKV_masked_attention_dispatch; RoPE and the new
 * token's K/V append fused into it: one kernel): the xqa-v0.9 row's
 * fallback where XQA is not dispatched, and the mmha row's kernel for every
 * decode. Its grid is a CTA per (query head, sequence), each reading its KV
 * head's whole context: the cache read once per query head (read at release
 * 0.5.0, octoml/TensorRT-LLM-release@98e78cc, kernels/
 * decoderMaskedMultiheadAttention/decoderMaskedMultiheadAttentionTemplate.h
 * :1124-1133: bi = blockIdx.y, hi = blockIdx.x, hi_kv = hi / qhead_per_kv;
 * decoderMaskedMultiheadAttentionLaunch.h:187: grid {num_heads,
 * batch_size}). The mmha row is TensorRT-LLM v0.6.1 with an FP8 cache:
 * v0.6.1's tree has no XQA at all (tag v0.6.1, 9b3e12db: no
 * decoderXQARunner; it first appears at v0.7.0), so v0.6.1 decodes with
 * this grid whatever the GQA group. Multi-block mode off (plugin_config
 * multi_block_mode = False). This function is the kernel's bytes alone:
 * xqa-v0.9's fallback and an FP16 cache's; with an FP8 cache on Hopper the
 * mmha row and v0.7's fallback take mmha_v06_time (the issue floor and the
 * group's L2 reuse, below). ESTIMATE: the CTAs stream at the rate, a lone
 * CTA at its SM's share (several CTAs share an SM; no wave quantisation),
 * and the group's CTAs, adjacent in blockIdx.x, are charged their reads
 * each (no L2 reuse counted). */
static double mmha_time(const strata_hw *hw, uint32_t unit, const strata_serve_decode_in *in,
                        strata_serve_decode_plan *plan)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    uint32_t sms;
    double rate = unit_stream_rate(hw, unit, &sms);
    strata_serve_decode_plan p = {.blocks = 1};
    if (in->decodes && in->kv_heads && rate > 0) {
        double d = (double)in->head_dim, ctx = (double)(in->context ? in->context : 1);
        double cta = ctx * 2.0 * d * in->kv_bytes + d * in->q_bytes * 2.0;
        p.ctas = in->decodes * in->kv_heads * (in->group ? in->group : 1);
        p.waves = 1;
        p.cta_s = cta / (rate / sms);
        p.time_s = u->kernel.kernel_launch + fmax((double)p.ctas * cta / rate, p.cta_s);
    }
    if (plan)
        *plan = p;
    return p.time_s;
}

/* vLLM's ROCm paged attention (paged-attention-rocm), read at ROCm/vllm
 * @040de12d (vLLM 0.10.0) csrc/rocm/attention.cu, the same launcher at
 * @b309ea79 (0.7.3): paged_attention_custom_launcher (:3076-3231) fixes
 * PARTITION_SIZE = 256 and NTHR = 256 and launches
 * - paged_attention_ll4mi_QKV_mfma16_kernel (GQA ratio 5-16; the mfma4
 *   kernel at 1-4: the same grid) over dim3 grid(num_seqs,
 *   max_num_partitions, num_kv_heads), max_num_partitions =
 *   ceil(max_context_len / 256): a workgroup per (sequence, KV head, 256
 *   tokens of its context). A workgroup past its sequence's context
 *   returns at once (:307-314); one inside it loads the context length, then
 *   its tokens' block numbers from the block table (:371-382, clamped by the
 *   length), then every K and V element of its partition in one go
 *   (Klocal[TLOOP][QKHELOOP] and Vlocal[VTLOOP][VHELOOP][VTLANELOOP], 16-byte
 *   loads issued before the first MFMA, :428-511): three dependent loads, so
 *   a workgroup's time is its bytes plus three memory latencies; it writes
 *   its GQA group's partial outputs in the query's dtype (tmp_out, :731-764,
 *   whatever the partition count) and two floats a head (max_logits,
 *   exp_sums, :647-660);
 * - then paged_attention_ll4mi_reduce_kernel over dim3 reduce_grid(num_heads,
 *   num_seqs), always (:3193-3230): each block loads the context length,
 *   then its head's max_logits and exp_sums and partial outputs of every
 *   partition (:1296-1400), and writes the head's output: two dependent
 *   loads.
 * vLLM runs it for every decode of a layer: 0.7.3's ROCmFlashAttentionBackend
 * and 0.10.0's chunked_prefill_paged_decode (VLLM_V1_USE_PREFILL_DECODE_
 * ATTENTION=1) while use_rocm_custom_paged_attention holds (platforms/
 * rocm.py:122-147 @040de12d: gfx9, fp16/bf16 query, head 64/128, block
 * 16/32, GQA ratio 1-16, max_seq_len <= 128 Ki, no sliding window on V1).
 * The workgroups of a sequence split its context, so the K and V of every
 * context token are read once per KV head; strata takes the partitions at
 * the mean context (a workgroup past a shorter context costs nothing: the
 * grid's extent at the longest, or at max_seq_len_to_capture inside V0's
 * graphs, adds only workgroups that return). Time: two kernel_launch, the
 * latencies (3 + 2) of the operand memory, and the bytes (K and V, the
 * queries, the partials written and read back, the output) at the stream
 * rate; the workgroups of both kernels run concurrently on the CUs (ESTIMATE:
 * no per-CU bandwidth limit; a partition's 128 KB of fp16 K and V are in
 * flight at once). */
enum { ROCM_PA_PARTITION = 256, ROCM_PA_MAIN_LOADS = 3, ROCM_PA_REDUCE_LOADS = 2, ROCM_PA_KERNELS = 2 };

static double paged_rocm_time(const strata_hw *hw, uint32_t unit, const strata_serve_decode_in *in,
                              strata_serve_decode_plan *plan)
{
    decode_shape s = decode_shape_of(hw, unit, in);
    strata_serve_decode_plan p = {0};
    if (in->decodes && in->kv_heads && s.rate > 0) {
        uint64_t ctx = s.ctx, group = in->group ? in->group : 1;
        p.blocks = (uint32_t)((ctx + ROCM_PA_PARTITION - 1) / ROCM_PA_PARTITION);
        p.ctas = in->decodes * in->kv_heads * p.blocks;
        p.waves = (p.ctas + s.sms - 1) / s.sms;
        double d = (double)in->head_dim, heads = (double)(in->decodes * in->kv_heads * group);
        double kv = (double)(in->decodes * in->kv_heads * ctx) * 2.0 * d * in->kv_bytes;
        double q = heads * d * in->q_bytes, partials = heads * (double)p.blocks * (d * in->q_bytes + 8.0);
        p.cta_s = ROCM_PA_MAIN_LOADS * s.lat;
        p.time_s = ROCM_PA_KERNELS * s.launch + (ROCM_PA_MAIN_LOADS + ROCM_PA_REDUCE_LOADS) * s.lat +
                   (kv + q + 2.0 * partials + q) / s.rate;
    }
    if (plan)
        *plan = p;
    return p.time_s;
}

/* vLLM V1's Triton attention on ROCm (triton-unified-attention), read at
 * ROCm/vllm@71faa188073d427c57862c45bf17745f3b54b1b1 (the vLLM 0.9.0.1 image
 * of AMD's MI300X page @68af0558), vllm/attention/ops/
 * triton_unified_attention.py, the same at @040de12d (0.10.0). V1 on ROCm
 * takes TritonAttentionBackend unless VLLM_ROCM_USE_AITER (default False)
 * (platforms/rocm.py get_attn_backend_cls), whose forward calls
 * unified_attention unless VLLM_V1_USE_PREFILL_DECODE_ATTENTION (default
 * False; then chunked_prefill_paged_decode: paged-attention-rocm).
 * unified_attention fixes BLOCK_M = 16 rows of (query, head), BLOCK_Q =
 * BLOCK_M / the GQA group query tokens a program (70B TP8: 2), and
 * total_num_q_blocks = num_tokens / BLOCK_Q + num_seqs, and launches
 * - kernel_unified_attention_2d over (total_num_q_blocks, num_kv_heads)
 *   when the batch has a prefill or total_num_q_blocks x num_kv_heads >
 *   128: a program per (query block, KV head), one per decoding sequence
 *   (the rest return at once), that walks its sequence's whole context
 *   alone, one cache block (BLOCK_SIZE: the cache's 16 tokens, vLLM's
 *   ROCm default) an iteration;
 * - else kernel_unified_attention_3d over (total_num_q_blocks,
 *   num_kv_heads, NUM_SEGMENTS = 16): each program walks blocks_per_segment
 *   = ceil(seq_len / (16 x 16)) blocks, writes its float32 partial output
 *   (head size padded to a power of 2) and two floats a head; then
 *   reduce_segments over (num_tokens, num_query_heads) reads them back.
 * A program first finds its sequence by a binary search over
 * query_start_loc (a dependent load a step: the bit length of num_seqs
 * steps), loads its start, then its queries; each iteration loads the
 * block's number from the block table, then the block's K and V by it
 * (kernel :146-168), so an iteration is two dependent memory latencies:
 * the loop has no memory dependence between iterations, but as compiled
 * nothing is prefetched across them (wave 32, below). The reduce kernel:
 * its search, then seq_len, then the partials. Time: each kernel's launch, and the longer of its program's
 * chain (at the operand memory's latency) and its bytes (K and V of every
 * block walked, whole blocks; the queries, the partials written and read,
 * the output) at the stream rate: at 128 decodes of 70B TP8 one program
 * a sequence on 304 CUs, each moving 4 KB an iteration of FP8 K and V,
 * far under the stream rate: the walk is latency-bound. The programs all
 * resident at once (ESTIMATE: no occupancy limit; wave 32 replaced it,
 * below).
 * Not modelled: a step with a prefill (the 2D kernel then runs the decodes
 * too; strata takes the decodes alone), a --block-size other than 16 (the
 * tile is the cache's block).
 *
 * Wave 32, the loop as compiled. The kernels' text at 71faa188, compiled
 * for gfx942 by Triton 3.3.1 (PyPI; the image's own Triton, e5be006, was
 * not to be had: ESTIMATE that it emits the same loop) as the launcher
 * launches them (num_warps 4 and num_stages 2, Triton's AMD defaults: the
 * launch names neither), 70B TP8's shapes (8 query heads on one KV head,
 * head 128, block 16, fp16 queries): the loop is not software-pipelined
 * (num_stages 1 and 2 give the same body): each iteration loads the
 * block's number, waits for it (s_waitcnt), computes the 16 K and V
 * addresses, issues the K and V loads (global_load_ubyte x 16 a lane with
 * an FP8 cache, global_load_ushort x 16 with fp16), waits for all of them
 * (vmcnt(0)), and only then converts, moves K and V through LDS, runs the
 * 10 MFMAs (v_mfma_f32_16x16x16_f16: 8 for Q K^T, 2 for P V) and the
 * softmax; the next iteration's loads issue after that. So an iteration
 * is the two latencies plus its issue time on its SIMD (each of the
 * program's 4 waves on one of the CU's 4 SIMDs), not the longer of them.
 * The issue time counted from that assembly: the VALU instructions after
 * the block number arrives (address arithmetic) and after the K and V
 * arrive, each at a wave64's full-rate issue time, and the MFMAs at their
 * throughput (UA_VALU_*, UA_MFMA; transcendental and 64-bit integer ops
 * are slower than full rate, LDS round trips and barriers are not charged:
 * a floor). Rates from the unit's own figures: a wave64 VALU op is 64
 * lanes over a SIMD's FP32 lanes, flops.f32 / (sms x 4 SIMDs x 2 FLOP an
 * FMA x 2 for packed FP32) (MI300X: 163.4 TFLOPS over 304 CUs: 16 lanes a
 * SIMD a clock, 4 clocks a wave64 op, 1.905 ns); an MFMA 16x16x16 is
 * 8,192 FLOP at flops.f16 / (sms x 4) a SIMD (1307.4 TFLOPS: 512 FLOP a
 * clock at 2.1 GHz, 16 clocks, 7.62 ns). FP8 cache, 2D: 179 VALU + 10
 * MFMA = 417.2 ns an iteration (3D: 178, 415.3 ns); fp16 cache: 119 +
 * 10 = 302.9 ns (3D the same). Occupancy: the compiled kernels take 144
 * VGPRs (133 + 8 AGPRs, rounded), 3 waves a SIMD (the compiler's
 * "Occupancy: 3"): 3 programs a CU at once, so the programs that walk
 * keys run in ceil(active / (3 x CUs)) rounds of their chain, and a CU's
 * SIMDs issue every iteration of the programs it holds (ceil(active /
 * CUs) of them), whichever is longer. */
enum {
    UA_BLOCK_M = 16,         /* unified_attention: BLOCK_M */
    UA_SEGMENTS = 16,        /* NUM_SEGMENTS */
    UA_3D_MAX_PROGRAMS = 128, /* total_num_q_blocks x num_kv_heads above this: the 2D kernel */
    UA_TILE = 16,            /* BLOCK_SIZE: the cache block, 16 (RocmPlatform.check_and_update_config) */
    UA_ITER_LOADS = 2,       /* the block's number, then its K and V */
    UA_SETUP_LOADS = 2,      /* after the search: the sequence's start, then its queries */
    UA_REDUCE_LOADS = 2,     /* after the search: seq_len, then the segments' partials */
    UA_SIMDS = 4,            /* SIMDs a CU (CDNA3): a program's 4 waves, one a SIMD */
    UA_RESIDENT = 3,         /* programs a CU at once: the compiled kernels' occupancy, 3 waves a SIMD */
    UA_VALU_F8_2D = 179,     /* VALU instructions an iteration, FP8 cache, 2D (27 address + 152 after K/V) */
    UA_VALU_F8_3D = 178,     /* the same, 3D (27 + 151) */
    UA_VALU_F16 = 119,       /* fp16 cache, 2D and 3D (20 + 99, 21 + 98: no conversion, a scalar block load) */
    UA_MFMA = 10,            /* v_mfma_f32_16x16x16_f16 an iteration: 8 for Q K^T, 2 for P V */
};

/* One iteration's issue time on its SIMD (see above): 0 where the unit
 * gives no FP32 vector or FP16 matrix rate. */
static double ua_issue_s(const strata_hw *hw, uint32_t unit, const strata_serve_decode_in *in, bool split)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    double f32 = u->flops_by_dtype[STRATA_DTYPE_F32], f16 = u->flops_by_dtype[STRATA_DTYPE_F16];
    double cus = (double)u->kernel.sms;
    if (f32 <= 0 || f16 <= 0 || cus <= 0)
        return 0;
    double valu_s = 64.0 / (f32 / (cus * UA_SIMDS * 2.0 * 2.0));
    double mfma_s = 2.0 * 16 * 16 * 16 / (f16 / (cus * UA_SIMDS));
    double valu = in->kv_bytes < 2.0 ? (split ? UA_VALU_F8_3D : UA_VALU_F8_2D) : UA_VALU_F16;
    return valu * valu_s + UA_MFMA * mfma_s;
}

/* The binary search's dependent loads over num_seqs sequences (its bit length). */
static uint32_t ua_search_loads(uint64_t seqs)
{
    uint32_t n = 0;
    for (; seqs; seqs >>= 1)
        n++;
    return n;
}

static uint64_t pow2_at_least(uint64_t x)
{
    uint64_t p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

static double unified_time(const strata_hw *hw, uint32_t unit, const strata_serve_decode_in *in,
                           strata_serve_decode_plan *plan)
{
    decode_shape s = decode_shape_of(hw, unit, in);
    strata_serve_decode_plan p = {0};
    if (in->decodes && in->kv_heads && s.rate > 0) {
        uint64_t ctx = s.ctx, group = in->group ? in->group : 1;
        uint64_t block_q = UA_BLOCK_M / group ? UA_BLOCK_M / group : 1;
        uint64_t q_blocks = in->decodes / block_q + in->decodes, tiles = (ctx + UA_TILE - 1) / UA_TILE;
        double d = (double)in->head_dim, heads = (double)(in->decodes * in->kv_heads * group);
        double search = ua_search_loads(in->decodes), q = heads * d * in->q_bytes;
        bool split = q_blocks * in->kv_heads <= UA_3D_MAX_PROGRAMS;
        uint64_t per = split ? (ctx + UA_SEGMENTS * UA_TILE - 1) / (UA_SEGMENTS * UA_TILE) : tiles;
        p.blocks = split ? (uint32_t)((ctx + per * UA_TILE - 1) / (per * UA_TILE)) : 1;
        p.ctas = q_blocks * in->kv_heads * (split ? UA_SEGMENTS : 1);
        p.waves = (p.ctas + s.sms - 1) / s.sms;
        double issue = ua_issue_s(hw, unit, in, split);
        p.cta_s = (search + UA_SETUP_LOADS + UA_ITER_LOADS * (double)per) * s.lat + (double)per * issue;
        uint64_t active = in->decodes * in->kv_heads * p.blocks; /* the programs that walk keys */
        double rounds = (double)((active + UA_RESIDENT * s.sms - 1) / (UA_RESIDENT * s.sms));
        double cu_issue = (double)((active + s.sms - 1) / s.sms) * (double)per * issue;
        double kv = (double)(in->decodes * in->kv_heads * tiles * UA_TILE) * 2.0 * d * in->kv_bytes;
        double partials = split ? heads * (double)p.blocks * ((double)pow2_at_least(in->head_dim) * 4.0 + 8.0) : 0;
        p.time_s = s.launch + fmax(fmax(rounds * p.cta_s, cu_issue), (kv + q + (split ? partials : q)) / s.rate);
        if (split) /* reduce_segments */
            p.time_s += s.launch + fmax((search + UA_REDUCE_LOADS) * s.lat, (partials + q) / s.rate);
    }
    if (plan)
        *plan = p;
    return p.time_s;
}

/* v0.9.0's XQA with an FP8 (e4m3) cache on sm_90: bound by the SMs, not
 * by HBM. MEASURED (docs/validation.md, "TensorRT-LLM v0.9's XQA kernel on
 * an H100 and H200 (wave 31)"): the tag's precompiled cubin
 * xqa_kernel_dt_fp16_d_128_beam_1_kvt_e4m3_nqpkv_8_m_8_sm_90, launched as
 * decoderXQAImplPrecompiled.cpp:361-368 does (grid (1, kv heads, batch),
 * 128 x 1 x 2 threads, 2 CTAs an SM by the driver's occupancy query), took
 * nearly the same time on an H200 and an H100 (995 x 1 KV head x 1,152:
 * 125.69 / 133.97 us; 512 x 4 x 1,152: 239.84 / 252.11 us) where its bytes
 * would take 0.70 as long on the H200: the FP8-to-FP16 conversion and the
 * MMAs a cached token, not the stream. With its cache in FP16 the same
 * kernel follows the memory, at the rate xqa_launch_time already charges
 * (629 x 1 x 1,152: -2.8% H200, -1.1% H100; 256 x 1 x 2,048: -0.5%, -2.1%).
 * The floor: XQA_V09_FP8_CYCLES SM cycles a cached token and KV head (its
 * 8 query heads), the SM's throughput with its 2 resident CTAs; in strata's
 * waves of one CTA an SM a CTA holds the SM for tokens x that (the same
 * waves as the measured 2 an SM at 256, 512, 995 and 2,048 CTAs: ceil(n /
 * 132) = 2 ceil(n / 264)). Computed from those two rows on both GPUs alone:
 * each measured time less strata's own fixed terms for the one kernel
 * (kernel_launch 3 us and 0.5 us a wave; 8 and 16 waves), summed, over the
 * summed waves x 1,152 tokens: (118.69 + 228.84 + 126.97 + 241.11) us /
 * 55,296 = 12.941 ns a token = 25.6 cycles at 1980 MHz (the probe GPUs'
 * SM clock, nvidia-smi's maximum; decode held 1905-1980 MHz, wave 20).
 * Residuals, strata's kernel (3 us + waves x (0.5 us + the floor)) against
 * the measured one, H200 / H100: 995 x 1 x 1,152 +0.4 / -5.8%; 512 x 4 x
 * 1,152 +3.9 / -1.1%; 64 x 8 x 3,072 -1.9 / -9.1%; 256 x 1 x 2,048 -11.7 /
 * -15.8%; 128 x 1 x 2,048 (a lone CTA an SM) -17.9 / -18.4%; 64 x 1 x
 * 2,048 -12.6 / -12.6%. Left out: the two-row intercept (a further 8.5 us
 * a kernel on the H200, 12.8 on the H100, beyond strata's fixed terms,
 * origin unknown) and a lone CTA's lower rate; the H100's 5-8% over the
 * H200 (its stream and the MMAs overlapping imperfectly). Scaled: by the
 * SMs (a CTA an SM), by the clock as peak_clock / 1830 MHz (h100.ini's and
 * h200.ini's; ESTIMATE: other parts' decode clock in the same ratio to it;
 * none given: 1980 MHz), by head_dim / 128 (ESTIMATE: only head 128 was
 * measured). Only where the unit has an FP8 matrix rate (flops.f8): v0.9.0
 * ships E4M3 cubins for sm_80 too, whose conversion (no FP8 hardware) was
 * not measured. The later launch (xqa: other, JIT or GMMA, kernels) is not
 * given it. */
static const double XQA_V09_FP8_CYCLES = 25.6, XQA_V09_PROBE_HZ = 1980e6, XQA_V09_PEAK_HZ = 1830e6;

/* The SM clock a decode kernel runs at: 1980 MHz scaled by the unit's
 * peak_clock / 1830 MHz (see above). */
static double decode_sm_hz(const strata_compute_spec *u)
{
    return u->kernel.peak_clock > 0 ? XQA_V09_PROBE_HZ * u->kernel.peak_clock / XQA_V09_PEAK_HZ : XQA_V09_PROBE_HZ;
}

static double xqa_v09_token_s(const strata_hw *hw, uint32_t unit, const strata_serve_decode_in *in)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    if (in->kv_bytes != 1.0 || u->flops_by_dtype[STRATA_DTYPE_F8] <= 0)
        return 0;
    return XQA_V09_FP8_CYCLES * ((double)in->head_dim / 128.0) / decode_sm_hz(u);
}

/* TensorRT-LLM v0.6.1's masked MHA with an FP8 cache on Hopper (the mmha
 * row; v0.7's fallback, whose template is v0.6.1's but for renames), as
 * compiled: decoderMaskedMultiheadAttention128_half.cu at tag v0.6.1
 * (9b3e12db), built with nvcc 13.0 -arch=sm_90 -O3 -DENABLE_FP8 (cub::Max
 * spelled cuda::maximum for CCCL 3; ESTIMATE: the release's CUDA 12.2 build
 * issues about the same loops), the instantiation masked_multihead_
 * attention_kernel<uint16_t, __nv_fp8_e4m3, KVLinearBuffer, 128, 256, no
 * cross attention, no beams, no multi-block>, read with nvdisasm:
 * - the Q.K loop issues 608 instructions a warp an iteration for 8 keys
 *   (4 LDG.E.64 of 8 e4m3 bytes a lane: 1,024 elements, 16
 *   F2FP.F16.E4M3.UNPACK_B, 160 FFMA, a division a key), 76 a key;
 * - the P.V loop 259 for 16 tokens (8 LDG.E.64: 2,048 elements, 32
 *   unpacks, 64 FFMA, 72 HADD2.F32), 16.19 a token;
 * so 92.19 warp instructions a cached token and query head, all on the
 *   CUDA cores (no MMA). An SM issues at most 4 warp instructions a clock
 *   (one a sub-partition): the kernel takes no less than CTAs x tokens x
 *   92.19 / (SMs x 4 x clock), the clock as decode_sm_hz.
 * The L2. The grid is {query heads, batch} (v0.6.1 Launch.h:190, v0.7.1
 * :212; blockIdx.x the head, Template.h:1383, hi_kv = hi / qhead_per_kv
 * :1386, at both tags): a KV group's query
 * heads are adjacent CTAs, dispatched together and each streaming the same
 * K then V in the same order at the same pace, so the seven later reads of
 * a line follow the first by about a CTA's start skew. The CTAs resident
 * at once (132 SMs x a few CTAs) hold at most a few hundred groups; even
 * holding each group's whole 1,152-token context (295 KB of e4m3 K and V)
 * 132 groups are 39 MB, inside the 50 MB L2 of an H100 or H200 (h100.ini,
 * h200.ini [memory l2]), and in step they hold far less: ESTIMATE, HBM
 * reads each KV head's context once a group. The L2 then serves the other
 * reads: 8 x 256 B a token and group at its 7 TB/s (an ESTIMATE of those
 * files) is 0.29 ns, under the issue floor's 8 x 92.19 / (132 x 4 x 1.98e9)
 * = 0.71 ns at any shape (both scale with the tokens), so no L2 term.
 * Only with a 1-byte cache on a unit with FP8 tensor cores (flops.f8): the
 * FP16 instantiation was not compiled, so an FP16 cache keeps mmha_time
 * (every read from HBM, no floor), as xqa-v0.9's fallback does (v0.9's
 * template, 348 lines changed, not compiled). */
static const double MMHA_V06_FP8_WARP_INSTR = 608.0 / 8.0 + 259.0 / 16.0; /* a cached token and query head */
enum { SM_ISSUE_PER_CLOCK = 4 };

static double mmha_v06_time(const strata_hw *hw, uint32_t unit, const strata_serve_decode_in *in,
                            strata_serve_decode_plan *plan)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    if (in->kv_bytes != 1.0 || u->flops_by_dtype[STRATA_DTYPE_F8] <= 0)
        return mmha_time(hw, unit, in, plan);
    decode_shape s = decode_shape_of(hw, unit, in);
    strata_serve_decode_plan p = {.blocks = 1};
    if (in->decodes && in->kv_heads && s.rate > 0) {
        double d = (double)in->head_dim, ctx = (double)s.ctx, group = (double)(in->group ? in->group : 1);
        double kv = ctx * 2.0 * d * in->kv_bytes, q = d * in->q_bytes * 2.0;
        double groups = (double)(in->decodes * in->kv_heads);
        p.ctas = in->decodes * in->kv_heads * (in->group ? in->group : 1);
        p.waves = 1;
        double instr = MMHA_V06_FP8_WARP_INSTR * (d / 128.0) * ctx;
        p.cta_s = fmax((kv + q) / (s.rate / s.sms), instr / (SM_ISSUE_PER_CLOCK * decode_sm_hz(u)));
        double issue = (double)p.ctas * instr / ((double)s.sms * SM_ISSUE_PER_CLOCK * decode_sm_hz(u));
        double hbm = groups * (kv + group * q) / s.rate;
        p.time_s = s.launch + fmax(fmax(hbm, issue), p.cta_s);
    }
    if (plan)
        *plan = p;
    return p.time_s;
}

/* The xqa row's dispatch (TensorRT-LLM v0.11 on: trtllm-cpp-0.11, trtllm-cpp,
 * trtllm). DecoderXQARunner::getImplFromXQAParams takes the JIT
 * implementation unless TRTLLM_ENABLE_XQA_JIT says otherwise (NVIDIA/
 * TensorRT-LLM @02947a22, decoderXQARunner.cpp; v0.11's own tree was not
 * read), and either implementation refuses a vanilla MHA (query heads = KV
 * heads) at beam 1. The JIT's shouldUse: jit::supportConfigCommon, "Do not
 * use XQA kernel for vanilla MHA case for performance reasons"
 * (decoderXQAImplJIT/kernelUtils.cpp @029e0a7c; the same test in the oldest
 * stored version of the file, before kROPE_M). The precompiled one:
 * XQAKernelList::supportConfig looks the shape up among its cubins
 * (decoderXQAImplPrecompiled.cpp @000a01de), and the stored list declares
 * beam-1 single-token kernels for 8 query heads a KV head only, one query
 * head a KV head only at beam 4 ("MHA with beamWidth=4", head 256;
 * cubin/xqa_kernel_cubin.h @03cff08f; nqpkv_0 names the multi-token ones).
 * Refused, the GPT attention op runs its masked MHA: the mmha row's kernel
 * (mmha_v06_time: a CTA per query head and sequence; with an FP8 cache on a
 * unit with FP8 tensor cores no less than its instruction issue). ESTIMATE:
 * the masked MHA template of these releases issues v0.6.1's loops a cached
 * token (the later template was not compiled), and no multi-block split is
 * charged (ESTIMATE: the grid, a CTA per query head and sequence, already
 * fills the SMs at these rows' batches; the later launch's split was not
 * read). Every other GQA shape runs XQA as xqa_launch_time gives it, with
 * multi-block mode. */
static double xqa_time(const strata_hw *hw, uint32_t unit, const strata_serve_decode_in *in,
                       strata_serve_decode_plan *plan)
{
    if (in->group <= 1)
        return mmha_v06_time(hw, unit, in, plan);
    return xqa_launch_time(hw, unit, in, plan, true, 0);
}

/* TensorRT-LLM v0.9.0's dispatch (tag v0.9.0, 250d9c29, read in the
 * WhiteD2125/TensorRT-LLM mirror), XQA where all of these hold, else
 * masked MHA:
 * - DecoderXQARunner::shouldUse (decoderXQARunner.h:88-158): fp16/bf16
 *   activations, head size 128 or 256 (:96), beam width 1 (:125), no
 *   cyclic window narrower than the cache (:129), nbQHeadsPerKV 8 or 1 for
 *   one query token (:145);
 * - DecoderXQAImplPrecompiled::shouldUse (decoderXQAImplPrecompiled.cpp:
 *   488-492): supportConfig, a precompiled kernel for the cache's type,
 *   head size, beam width and nbQHeadsPerKV, of which the tree has
 *   nqpkv_8 alone for one query token (cubin/xqa_kernel_dt_*_nqpkv_8_m_8_*;
 *   nqpkv_0 are Medusa's): 8 query heads a KV head;
 *   mayHavePerfGain (:244-261): kv heads x batch x multi-block count x
 *   kEnableMinBlockFactor (4.0, decoderXQAConstants.h:32) >= SMs, the
 *   multi-block count 1 with multi_block_mode off (plugin.py:91).
 * Its launch (DecoderXQAImplPrecompiled::run, :264-373): RoPE and the new
 * token's K/V append first, a kernel of their own
 * (invokeApplyBiasRopeUpdateKVCache, :281-290), then kernel_mha over grid
 * (multi_block, kv heads, batch) with 256 threads (128 x 1 x 2), where
 * multi_block = computeMultiBlockCount (:376-398) only with
 * multi_block_mode (then kMinHistoryTokensPerBlock 512, at most
 * kMaxNbCtaPerKVHeadFactor 8, decoderXQAConstants.h:29-30) and 1 with
 * it off, the default: one CTA per
 * (sequence, KV head) over its whole context, whatever the batch. Two
 * kernels, as xqa_time counts; the CTA's cost is xqa_time's (the cubin's
 * own tiles are not in the tree's sources: an ESTIMATE), with an FP8 cache
 * on an FP8-capable unit no less than its measured floor a cached token
 * (xqa_v09_token_s). */
static double xqa_v09_time(const strata_hw *hw, uint32_t unit, const strata_serve_decode_in *in,
                           strata_serve_decode_plan *plan)
{
    uint32_t sms = strata_hw_compute(hw, unit)->kernel.sms;
    bool head = in->head_dim == 128 || in->head_dim == 256, group = in->group == 8;
    bool gain = (double)in->kv_heads * (double)in->decodes * 4.0 >= (double)sms;
    return head && group && gain ? xqa_launch_time(hw, unit, in, plan, false, xqa_v09_token_s(hw, unit, in))
                                 : mmha_time(hw, unit, in, plan);
}

/* TensorRT-LLM v0.7.0 / v0.7.1's dispatch (tags v0.7.0, 59f41c06, and v0.7.1,
 * 80bc0751, in the WhiteD2125/TensorRT-LLM mirror; kernels/
 * decoderMaskedMultiheadAttention/ and cubin/ are byte-identical at the two
 * tags). XQA where all of these hold, else masked MHA (mmha_v06_time):
 * - GPTAttentionPluginCommon::initialize (gptAttentionCommon.cpp:1267-1285
 *   at v0.7.1) builds the XQA runner only for fp16 activations and only
 *   when the environment sets TRTLLM_ENABLE_XQA=1 (plugin.py has no
 *   enable_xqa before v0.8.0): this row is v0.7 with it set, as the v0.7a
 *   H200 blog's Llama-70B runs were (the XQA blog of v0.8.0, docs/source/
 *   blogs/XQA-kernel.md, gives 2,941 tok/s/GPU "w/ XQA" and 1,227 "w/o XQA"
 *   for 1 x H200 128/2048, the v0.7a blog's own cell 2,941). Without it
 *   v0.7 decodes as the mmha row.
 * - enqueueGeneration (:1091-1102) tries XQA first only for
 *   XQADispatchHelper<__half, KVLinearBuffer>: a non-paged cache (the
 *   session runtime's static batches; a paged cache runs masked MHA).
 * - DecoderXQARunner::shouldUse (decoderXQARunner.h:111-148): fp16; 8 query
 *   heads a KV head and 1, 2, 4 or 8 KV heads (:118); head size 128 (:120);
 *   rotary dim = head size, base 10000 and no scaling (:126-131; strata's
 *   models carry no rope base: Llama 2's is 10000); no QKV bias, paged
 *   cache or cross attention; beam 1 (:143); no cyclic window narrower
 *   than the cache (:145).
 * - xqaImpl::shouldUse (decoderXQARunner.cpp:457-460): supportConfig, a
 *   cubin for the cache type (xqa_kernel_cubin.h: FP16 and INT8 on sm_80,
 *   86, 89, 90; E4M3 on sm_89 and sm_90 only: a 1-byte cache needs a unit
 *   with FP8 tensor cores, flops.f8, as xqa_v09_token_s reads it), head
 *   128, 8 query heads a KV head, beam 1; mayHavePerfGain (:270-287): KV
 *   heads x batch x 4 >= SMs (multi-block count 1: multi_block_mode off,
 *   plugin.py:62).
 * Its launch (XQAKernelList::run, :289-343): invokeApplyBiasRopeUpdateKVCache
 * (RoPE and the new token's K/V, one kernel), then the batch in micro-batches
 * of min(kMaxBatchSizePerWave = 144, SMs) sequences (XQALaunchParam,
 * :100-106; buildXQALaunchParams, :135-136), each its own cuLaunchKernel of
 * kernel_mha over grid (1, KV heads, micro-batch) with 128 x 1 x 2 threads:
 * on a 132-SM part ceil(batch / 132) kernels, one after another on the
 * stream. A CTA's time is xqa_launch_time's with multi-block off. The E4M3
 * cubin (xqa_kernel_dt_fp16_d_128_beam_1_kvt_2_nqpkv_8_sm_90, 55,376 B) is
 * not v0.8/v0.9's (73,464 B, whose floor xqa_v09_token_s measured); read
 * with nvdisasm (CUDA 13.0), its main loop issues 32 HMMA.16816.F32 and 64
 * F2FP.F16.E4M3.UNPACK_B in 675 instructions, v0.9's 64 and 256 in 2,195:
 * per cached token (the unpacks fix the tokens, 4 a token for K and V of
 * head 128) 2 MMAs against v0.9's 1 (the 8 query heads padded to 16 MMA
 * rows, no swap) and 42 instructions against 34. ESTIMATE: v0.9's
 * measured floor as this cubin's floor too, a lower bound (it issues at
 * least as much work a token); its own rate was not measured. */
enum { XQA_V07_MAX_BATCH_PER_WAVE = 144 }; /* XQALaunchParam::kMaxBatchSizePerWave */

static double xqa_v07_time(const strata_hw *hw, uint32_t unit, const strata_serve_decode_in *in,
                           strata_serve_decode_plan *plan)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    uint32_t sms = u->kernel.sms ? u->kernel.sms : 1;
    uint64_t kvh = in->kv_heads;
    bool shape = in->head_dim == 128 && in->group == 8 && (kvh == 1 || kvh == 2 || kvh == 4 || kvh == 8);
    bool cubin = in->kv_bytes == 2.0 || (in->kv_bytes == 1.0 && u->flops_by_dtype[STRATA_DTYPE_F8] > 0);
    bool gain = (double)kvh * (double)in->decodes * 4.0 >= (double)sms;
    if (!(shape && cubin && gain && in->decodes))
        return mmha_v06_time(hw, unit, in, plan);
    uint64_t micro = sms < XQA_V07_MAX_BATCH_PER_WAVE ? sms : XQA_V07_MAX_BATCH_PER_WAVE;
    uint64_t full = in->decodes / micro, rest = in->decodes % micro;
    double token_s = xqa_v09_token_s(hw, unit, in), launch = u->kernel.kernel_launch;
    strata_serve_decode_in part = *in;
    strata_serve_decode_plan pf = {0}, pr = {0};
    double t = launch; /* the RoPE / KV append kernel; each XQA kernel below is one more launch */
    if (full) {
        part.decodes = micro;
        t += (double)full * (xqa_launch_time(hw, unit, &part, &pf, false, token_s) - launch);
    }
    if (rest) {
        part.decodes = rest;
        t += xqa_launch_time(hw, unit, &part, &pr, false, token_s) - launch;
    }
    if (plan)
        *plan = (strata_serve_decode_plan){.blocks = 1,
                                           .ctas = in->decodes * kvh,
                                           .waves = full * pf.waves + pr.waves,
                                           .cta_s = full ? pf.cta_s : pr.cta_s,
                                           .time_s = t};
    return t;
}

/* LMDeploy TurboMind v0.1.0a1's decoder attention (InternLM/lmdeploy
 * @9c46b27ce0358b8bc645633442b7810f715997d7, src/turbomind/kernels/
 * decoder_multihead_attention/): one kernel that applies RoPE to the new
 * token's q and k, appends its k and v to the paged cache and attends over
 * the sequence's blocks (decoder_multihead_attention_template.h:240-312),
 * for an fp16 cache:
 * - heads a CTA: DispatchDecoderMultiheadAttention (decoder_multihead_
 *   attention.cu:82-110) takes HeadPerCta = 4 where the GQA group is a
 *   multiple of 4, 2 where of 2, else 1; the grid is (num_heads /
 *   HeadPerCta, batch, split_k) (:49), each CTA streaming its KV head's
 *   blocks, so the cache is read group / HeadPerCta times a KV head
 *   (Llama 2 70B, group 8: twice; an MHA model: once);
 * - split-K: LlamaDecoderSelfAttentionLayer.cc:177-185 sets max_split_k =
 *   max(1, ceil(kMaxSplitK / avg_batch_size)), kMaxSplitK = 16
 *   (LlamaDecoderSelfAttentionLayer.h:98), avg_batch_size = the batch's
 *   summed lengths / the longest; the launcher cuts it to the longest's
 *   slices of kSliceLen = 1024 tokens (decoder_multihead_attention.cu:
 *   45-46, SliceLen 1024 at :69 and :76); with more than one split a
 *   reduce kernel over the partials follows (:60-63): each split writes a
 *   float32 O of head_dim and its M and L per query head, read back once.
 * Time: its launches, and its bytes (K and V as read, the queries in, the
 * partials, the output) at the stream rate, no shorter than one CTA's
 * share of the longest context at its SM's share of the rate (as mmha_time:
 * ESTIMATE, no wave quantisation). */
enum { TM_MAX_SPLIT_K = 16, TM_SLICE_LEN = 1024 };

static double turbomind_time(const strata_hw *hw, uint32_t unit, const strata_serve_decode_in *in,
                             strata_serve_decode_plan *plan)
{
    decode_shape s = decode_shape_of(hw, unit, in);
    strata_serve_decode_plan p = {0};
    if (in->decodes && in->kv_heads && s.rate > 0) {
        uint64_t group = in->group ? in->group : 1, per_cta = group % 4 == 0 ? 4 : group % 2 == 0 ? 2 : 1;
        uint64_t ctx = s.ctx, longest = s.longest;
        double avg_batch = (double)in->decodes * (double)ctx / (double)longest;
        uint64_t split = (uint64_t)fmax(1.0, ceil(TM_MAX_SPLIT_K / avg_batch));
        uint64_t slices = (longest + TM_SLICE_LEN - 1) / TM_SLICE_LEN;
        split = split < slices ? split : (slices ? slices : 1);
        double d = (double)in->head_dim, heads = (double)(in->decodes * in->kv_heads * group);
        double reads = (double)(group / per_cta);
        double kv = (double)(in->decodes * in->kv_heads * ctx) * 2.0 * d * in->kv_bytes * reads;
        double q = heads * d * in->q_bytes;
        double partials = split > 1 ? 2.0 * heads * (double)split * (d + 2.0) * 4.0 : 0;
        p.blocks = (uint32_t)split;
        p.ctas = in->decodes * in->kv_heads * (group / per_cta) * split;
        p.waves = 1;
        p.cta_s = (double)((longest + split - 1) / split) * 2.0 * d * in->kv_bytes / (s.rate / s.sms);
        double launches = split > 1 ? 2.0 : 1.0;
        p.time_s = launches * s.launch + fmax((kv + q + partials + q) / s.rate, p.cta_s);
    }
    if (plan)
        *plan = p;
    return p.time_s;
}

static const strata_serve_decode_kernel kernels[] = {
    {"flash-attention", NULL, "the FlashAttention op, a KV group's query heads as rows (models/kernel)"},
    {"xqa", xqa_time, "TensorRT-LLM's XQA on Hopper (FP8 cache): CTAs per sequence and KV head, multi-block mode; "
                      "a vanilla MHA (a query head a KV head) runs masked MHA, as mmha"},
    {"xqa-v0.9", xqa_v09_time, "TensorRT-LLM v0.9's dispatch: XQA for 8 query heads a KV head (head 128/256, "
                               "enough CTAs), else masked MHA (a CTA per query head and sequence)"},
    {"xqa-v0.7", xqa_v07_time, "TensorRT-LLM v0.7's dispatch with TRTLLM_ENABLE_XQA=1: XQA for fp16, 8 query heads a "
                               "KV head, head 128, a non-paged cache, in micro-batches of min(144, SMs) sequences "
                               "a kernel, else masked MHA"},
    {"mmha", mmha_v06_time, "TensorRT-LLM's masked MHA for every decode (v0.6.1, which has no XQA): a CTA per query "
                            "head and sequence; an FP8 cache on Hopper bound by its instruction issue, read once a "
                            "KV group through L2"},
    {"paged-attention-rocm", paged_rocm_time,
     "vLLM's ROCm paged attention (0.7.3, 0.10.0): a workgroup per (sequence, KV head, 256 tokens), then a "
     "reduce kernel over the partitions"},
    {"triton-unified-attention", unified_time,
     "vLLM V1's Triton attention on ROCm (0.9.0.1's default): a program per sequence walking its context a "
     "block an iteration, or 16 segments a sequence and a reduce kernel for small batches"},
    {"turbomind-v0.1", turbomind_time,
     "LMDeploy TurboMind v0.1's decoder attention: 1, 2 or 4 query heads a CTA (the cache read group / that "
     "times), split-K to 16 over 1024-token slices, a reduce kernel when split"},
    {NULL, NULL, NULL},
};

const strata_serve_decode_kernel *strata_serve_decode_find(const char *name, GError **err)
{
    return serve_names_lookup(SERVE_NAMES(kernels, strata_serve_decode_kernel), name, STRATA_ERROR_INPUT, err,
                              "decode attention kernel '%s': expected one of %s");
}

bool strata_serve_decode_is_flash(const strata_serve_decode_kernel *k)
{
    return !k || !k->time;
}

double strata_serve_decode_time(const strata_serve_decode_kernel *k, const strata_hw *hw, uint32_t unit,
                                const strata_serve_decode_in *in, strata_serve_decode_plan *plan)
{
    if (plan)
        *plan = (strata_serve_decode_plan){0};
    return k && k->time ? k->time(hw, unit, in, plan) : 0;
}
