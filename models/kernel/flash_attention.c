/*
 * flash_attention.c: kernel=flash-attention and flash-attention-bwd,
 * dims=BxHxSqxSkvxD[xHkv] [mask=causal]: blocked ("flash") attention in
 * one kernel, forward or backward (Dao et al., FlashAttention-2, arXiv
 * 2307.08691, Algorithms 1 and 2).
 *
 * Blocks: the queries in blocks of Br rows, keys and values in blocks of
 * Bc. On tensor cores, FlashAttention-2's own choice
 * (csrc/flash_attn/src/flash_fwd_launch_template.h and
 * flash_bwd_launch_template.h @0251105 on sm80/sm90): forward Br = 128,
 * Bc = 128 up to head dim 64, 64 above (head dim 256: 64 x 64 where an SM
 * holds 4 x 256 x (64 + 2 x 64) bytes of shared memory, run_mha_fwd_hdim256,
 * the H100; 128 x 64 on the A100); backward 128 x 128 up to 64, and
 * 64 x 128 above (run_mha_bwd_hdim128 where a block may take 144 KB, on
 * both). Its products are the SM80 warp-level mma.sync instructions, on
 * Hopper too, where they reach `mma_sync_fraction` of the tensor cores'
 * peak (the FlashAttention-3 authors: about 2/3 without wgmma); cuBLAS's
 * GEMMs are not slowed.
 *
 * FlashAttention-2 on tensor cores (the same sources and flash_api.cpp
 * mha_fwd, PyTorch's bundled copy the same):
 *   L2 reuse: the forward's grid is (query blocks, B, H), the backward's
 *   (key blocks, B, H), x running fastest, so the CTAs resident at once
 *   (SMs x the CTAs one SM's `smem_per_sm` holds: a forward CTA's Q, K and
 *   V blocks, 2 D (Br + 2 Bc) bytes in bf16, Kernel_traits::kSmemSize; a
 *   backward CTA one an SM, ESTIMATE from the 144 KB its traits are picked
 *   for) work on ceil(resident / blocks a head) + 1 (batch, head)s and
 *   share their K and V (forward) or Q, dO, LSE and D (backward) through
 *   the L2; the backward's dQ is an f32 accumulator every pair atomicAdds
 *   its partial into (flash_bwd_kernel.h, Seq_parallel), a read and a
 *   write at the L2 per pair that no cache merges (ESTIMATE: counted at
 *   the operand memory's stream rate; no public figure gives the L2's
 *   rate of f32 reductions). The resident CTAs of one head start at its
 *   first shared block and sweep the blocks at one pace, so each block
 *   comes from HBM once and is hit in the L2 by the rest while it is fresh
 *   (K and V once per key/value head). A head whose blocks of x take W > 1
 *   turns of the resident CTAs is swept W times, unless the heads of a
 *   turn fit the onchip memory named l2 and keep their bytes until the
 *   next: then once. Without an l2 memory or smem_per_sm, once per block
 *   pair as below. The CTAs counted are an upper bound (the registers may
 *   hold fewer), so fewer turns are claimed, never more.
 *   Decode: at Sq = 1 with fewer key/value heads than query heads
 *   (seqlenq_ngroups_swapped) a group's query heads become its rows: H =
 *   Hkv, Sq = H / Hkv, no mask. Split-KV: num_splits_heuristic (below)
 *   over B H ceil(Sq / 64) CTAs and 2 x SMs slots; with more than one
 *   split the kernel is run_mha_fwd_splitkv_dispatch's, 64 x (256, 128,
 *   64 by head dim up to 64, 128, above) blocks, each split's f32 output
 *   and LSE written and read back by a second, combine kernel (one more
 *   kernel_launch). The blocks are computed whole, the rows past Sq too.
 *   vLLM 0.6's FLASH_ATTN backend (vllm-flash-attn 2.6.1, FA2's kernels)
 *   calls mha_varlen_fwd for a prefill and mha_fwd_kvcache for a decode
 *   (fa2_varlen): mha_varlen_fwd sets split-KV only for a swapped group
 *   ("Only apply split-k for decoding"), so a prompt's small grid is not
 *   split as mha_fwd would split it; with a block table (fa2_paged: every
 *   decode, a prefill over cached keys) run_mha_fwd takes the split-KV
 *   kernel (force_split_kernel = paged_KV) and its 64 x block_n blocks even
 *   at one split (vllm-project/flash-attention @04325b67, csrc/flash_attn/
 *   flash_api.cpp). On a
 * systolic array, the blocks MaxText passes to JAX's Pallas TPU kernel
 * (jax/experimental/pallas/ops/tpu/flash_attention.py; MaxText's
 * layers/attentions.py tpu_flash_attention: BlockSizes(block_q =
 * block_k_major = block_k = min(512, S), the backward's dK/dV blocks the
 * same, its dQ blocks block_q_dq = min(1024, S) by block_k_major_dq =
 * min(512, S)); the kernel's own default, 128, is what a caller gets that
 * passes none. A block pair is computed when any of its keys may be seen:
 * every pair without a mask; with mask=causal (bottom-right aligned, as
 * FlashAttention-2 does for Sq != Skv) the pairs at or below the diagonal,
 * the diagonal ones whole (tile efficiency: half of their work is masked);
 * with mask=window-W (a causal sliding window: query i sees keys i - W + 1
 * to i, Mistral's and Gemma's local layers) the pairs that meet the band,
 * from the block holding the block's first row's earliest key to the
 * diagonal's.
 *
 * Work per block pair: forward, two products (S = Q K^T, Br x D x Bc; then
 * P V, Br x Bc x D) and Br x Bc exponentials; backward, five products (S
 * again, dP = dO V^T, dV += P^T dO, dQ += dS K, dK += dS^T Q) and the
 * exponentials again. The Pallas TPU backward is two kernels instead
 * (_flash_attention_bwd_dkv and _bwd_dq), each recomputing S, P and dP
 * for its own blocks: dK/dV's four products (S, dP, dV += P^T dO, dK +=
 * dS^T Q) over its pairs, dQ's three (S, dP, dQ += dS K) over its pairs,
 * the exponentials in both. The products run on the matrix engine (matrix.c);
 * the exponentials on the transcendental unit, after the products on
 * tensor cores (FlashAttention-2 issues both from the same warps, in turn).
 *
 * On a systolic unit each Pallas kernel is a grid of steps run one after
 * another, B x H x (Sq / Br) x (Skv / Bc) of them (the skipped pairs above
 * the diagonal too: `pl.when` skips their body, not the step), split over
 * a megacore's cores (the grid's leading dimensions are "parallel"). A
 * step costs the Pallas pipeline's per-step overhead, read from the
 * hardware's `[compute scalar] overhead` (the scalar core runs the grid
 * loop and issues the step's DMAs; every TPU file sets it from JAX's Pallas
 * TPU pipelining guide, docs.jax.dev/en/latest/pallas/tpu/pipelining.html:
 * about 0.35 us a grid step), or that guide's figure, PALLAS_STEP_S, on a
 * model without a unit named scalar; and
 * its body, in which the data order the work: S = Q K^T on the MXU, then
 * the softmax on the vector unit (VPU) and the transcendental unit (EUP),
 * whose row max reads every column of S and whose P feeds the next
 * product, then the products that read P. So a visited pair costs its
 * products plus its softmax, the larger of its VPU and EUP work (the two
 * units issue in the same bundles); ESTIMATE: none of the softmax hides
 * under the products (the kernels' straight-line bodies give the compiler
 * only the columns of one block to overlap; no public profile says how
 * much it does). The vector work is counted op by op from the kernels
 * (VPU_* below) with MaxText's call: segment ids passed (layers/
 * attentions.py wraps decoder_segment_ids), sm_scale 1, no bias, no soft
 * cap.
 *
 * HBM traffic per (batch, head), in elements of the dtype (LSE and the
 * backward's D and dQ accumulator in f32):
 *   forward:  Q read and O written once (2 Sq D), LSE written (Sq), and K
 *             and V read once per visited pair (2 Bc D x pairs);
 *   backward: K, V read and dK, dV written once (4 Skv D); per visited
 *             pair Q and dO read (2 Br D), LSE and D read (2 Br), dQ read
 *             and written in f32 (2 Br D); the preprocessing reads dO and O
 *             (2 Sq D) and writes D (Sq). On a systolic unit (the two
 *             Pallas kernels, their accumulators in VMEM scratch): dK/dV's
 *             K, V read and dK, dV written once (4 Skv D) and per pair Q
 *             and dO read (2 Br D) with the row statistics l, m and D, each
 *             an f32 row of 128 lanes (3 x 512 bytes a row: the kernel
 *             broadcasts them to MIN_BLOCK_SIZE lanes); dQ's Q, dO read and
 *             dQ written once (3 Sq D), the statistics once per query row,
 *             and per pair K and V read (2 Bc D); the preprocessing as
 *             above.
 * Nominal flops, as the benchmarks count them (flash-attention's
 * benchmarks/benchmark_flash_attention.py): forward 4 B H Sq Skv D, halved
 * with a causal mask; backward 2.5 times that. With a window W < Skv the
 * band in the same continuous count, 4 B H D (Sq W - (W - (Skv - Sq))^2 / 2)
 * (Sq = Skv = S: S W - W^2 / 2, S^2 / 2 at W = S); W >= Skv is causal.
 */
#include "kernel/kernel_rows.h"
#include <math.h>

typedef struct attn {
    uint64_t b, h, sq, skv, d;
    uint64_t hkv; /* key/value heads (GQA: fewer than h) */
    uint64_t br, bc;
    double pairs; /* visited block pairs per (batch, head) */
    bool pallas;  /* systolic backward: the dK/dV kernel on br x bc, then the dQ kernel on its own blocks */
    uint64_t dq_br, dq_bc;
    double dq_pairs;
    bool swapped;        /* FA2's seqlenq_ngroups_swapped: one query of a GQA group per row, h = hkv */
    uint32_t splits;     /* FA2's split-KV forward: key splits (1: the regular kernel) */
    double l2_heads;     /* tiles: (batch, head)s the resident CTAs work on (0: not known) */
    double l2_head_bytes; /* the bytes of each that its CTAs share (K, V; bwd: Q, dO, statistics, dQ) */
    double l2_reads;     /* times each head's shared bytes come from HBM (0: not known: once per block pair) */
    bool fa2;            /* FlashAttention-2's own launch on a tiles unit (not a serving engine's kernel) */
} attn;

/* MaxText's blocks for the Pallas TPU kernel (see above). */
enum { PALLAS_BLOCK = 512, PALLAS_DQ_BLOCK_Q = 1024 };

/* FlashAttention-2's backward CTA's shared memory, for the CTAs an SM
 * holds (see above). */
#define BWD_CTA_SMEM (144.0 * 1024)

/* The Pallas pipeline's cost a grid step on a model without a scalar unit (see above). */
#define PALLAS_STEP_S 0.35e-6

/* A grid step's cost: the scalar unit's overhead, or PALLAS_STEP_S (see above). */
static double pallas_step_s(const strata_hw *hw)
{
    int base = strata_hw_compute_base_index(hw, "scalar");
    if (base < 0)
        return PALLAS_STEP_S;
    return strata_hw_compute(hw, strata_hw_compute_on(hw, (uint32_t)base, 0))->overhead;
}

/* The vector work of one visited block pair of each Pallas TPU kernel
 * (jax/experimental/pallas/ops/tpu/flash_attention.py @078fd68), in
 * operations on f32 elements, one element per VPU lane and sublane:
 *   per score (Br x Bc): forward, the row max, s - m, the row sum and P's
 *   cast to bf16 (4); dK/dV, s - m, p * 1/l, P's cast, dp - di, * p and
 *   dS's cast (6); dQ, the same but P's cast (5); in each, the segment
 *   mask's compare and the mask's select and add (3); with mask=causal the
 *   two iotas, their offsets, the compare and the `and` with the segment
 *   mask (6); and one exponential (EUP);
 *   per row statistic (Br x 128 lanes: m, l are kept 128 lanes wide):
 *   forward, m_next, m_prev - m_next, alpha l_prev, the sum plus l_corr,
 *   l_next == 0, its select and l_corr / l_next (7 VPU) with alpha's
 *   exponential and 1 / l_next (2 EUP); dK/dV and dQ, 1 / l (1 EUP);
 *   per accumulator element: forward acc *= and acc += o * 1/l (3 a
 *   Br x D element); dK/dV, dV += and dK += (2 a Bc x D element); dQ,
 *   dQ += (1 a Br x D element).
 * The matrix unit's pushes and pops and the transposes (P^T, dS^T, on the
 * transpose unit) are not VPU work. */
typedef struct vector_counts {
    double score, causal, row_vpu, row_eup, acc;
    bool acc_on_keys; /* accumulator rows are the key block's (Bc), else the query block's (Br) */
} vector_counts;
static const vector_counts VPU_FWD = {7, 6, 7, 2, 3, false};
static const vector_counts VPU_DKV = {9, 6, 0, 1, 2, true};
static const vector_counts VPU_DQ = {8, 6, 0, 1, 1, false};
enum { STAT_LANES = 128 };

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* Block pairs of one (batch, head) that the kernel computes (window: 0,
 * or the causal window's keys). */
static double visited_pairs(uint64_t sq, uint64_t skv, uint64_t br, uint64_t bc, bool causal, uint64_t window)
{
    uint64_t tr = ceil_div(sq, br), tc = ceil_div(skv, bc);
    if (!causal)
        return (double)tr * (double)tc;
    double pairs = 0;
    int64_t offset = (int64_t)skv - (int64_t)sq; /* bottom-right aligned */
    for (uint64_t i = 0; i < tr; i++) {
        int64_t last_key = (int64_t)((i + 1) * br) + offset; /* keys [first_key, last_key) may be seen */
        if (last_key <= 0)
            continue;
        int64_t first_key = window ? (int64_t)(i * br) + offset - (int64_t)window + 1 : 0;
        uint64_t first = first_key > 0 ? (uint64_t)first_key / bc : 0, blocks = ceil_div((uint64_t)last_key, bc);
        pairs += (double)((blocks < tc ? blocks : tc) - first);
    }
    return pairs;
}

/* The nominal flops' share of the whole Sq x Skv score matrix (above). */
static double mask_share(const strata_kernel_problem *p)
{
    const uint64_t *x = p->dims;
    if (!p->causal)
        return 1.0;
    if (p->window == 0 || p->window >= x[3])
        return 0.5;
    double sq = (double)x[2], w = (double)p->window, over = w - ((double)x[3] - sq);
    return (sq * w - (over > 0 ? over * over / 2 : 0)) / (sq * (double)x[3]);
}

/* flash_api.cpp num_splits_heuristic: the fewest key splits whose wave
 * efficiency (CTAs over 2 x SMs, the last wave's share) comes within 85%
 * of the best, 1 when the CTAs already nearly fill the SMs. */
static uint32_t num_splits_heuristic(uint64_t bh_mblocks, uint64_t slots, uint64_t n_blocks, uint64_t max_splits)
{
    if ((double)bh_mblocks >= 0.8 * (double)slots)
        return 1;
    max_splits = min_u64(min_u64(max_splits, slots), n_blocks);
    double eff[129] = {0}, best = 0;
    for (uint64_t s = 1; s <= max_splits; s++) {
        if (s > 1 && ceil_div(n_blocks, s) == ceil_div(n_blocks, s - 1))
            continue; /* not eligible: as many blocks a split as s - 1 splits */
        double waves = (double)(bh_mblocks * s) / (double)slots;
        eff[s] = waves / ceil(waves);
        best = fmax(best, eff[s]);
    }
    for (uint64_t s = 1; s <= max_splits; s++)
        if (eff[s] > 0 && eff[s] >= 0.85 * best)
            return (uint32_t)s;
    return 1;
}

/* The L2's capacity: the onchip memory named l2 (0: none). */
static double l2_capacity(const strata_hw *hw)
{
    int l2 = strata_hw_memory_base_index(hw, "l2");
    const strata_memory_spec *m = l2 >= 0 ? strata_hw_memory(hw, (uint32_t)l2) : NULL;
    return m && m->kind == STRATA_MEM_ONCHIP ? (double)m->capacity : 0;
}

/* FlashAttention-2's L2 reuse on a tiles unit (see above): the CTAs
 * resident at once, sms x the CTAs one SM's shared memory holds, take
 * consecutive blocks of the grid's x (forward: query blocks; backward: key
 * blocks) of a few (batch, head)s, which share that head's K and V
 * (forward) or Q, dO, the statistics and dQ's f32 accumulator (backward). */
static void l2_reuse(const strata_hw *hw, const strata_kernel_spec *ks, attn *a, double e, bool backward)
{
    double cap = l2_capacity(hw);
    if (ks->smem_per_sm == 0 || cap <= 0 || a->pallas)
        return;
    double sq = (double)a->sq, skv = (double)a->skv, d = (double)a->d, x_blocks, cta_smem;
    if (!backward) {
        x_blocks = (double)ceil_div(a->sq, a->br);
        cta_smem = e * d * (double)(a->br + 2 * a->bc); /* Q, K, V blocks: Kernel_traits::kSmemSize */
        a->l2_head_bytes = 2 * skv * d * e;
    } else {
        x_blocks = (double)ceil_div(a->skv, a->bc);
        cta_smem = BWD_CTA_SMEM;
        a->l2_head_bytes = 2 * sq * d * e + 8 * sq + 4 * sq * d;
    }
    double per_sm = floor((double)ks->smem_per_sm / cta_smem);
    double resident = (double)ks->sms * (per_sm > 1 ? per_sm : 1);
    a->l2_heads = fmin((double)(a->b * a->h), ceil(resident / x_blocks) + 1);
    /* the CTAs of one head resident together start at its first shared
     * block and sweep them at one pace: each block is read from HBM once
     * and hit in the L2 by the others while it is fresh. A head whose
     * blocks of x take W > 1 turns of the resident CTAs is swept W times,
     * once a turn, unless the heads of a turn keep their shared bytes in
     * the L2 until the next. */
    double turns = x_blocks > resident ? ceil(x_blocks / resident) : 1;
    a->l2_reads = a->l2_heads * a->l2_head_bytes <= cap ? 1 : turns;
}

static attn attn_of(const strata_hw *hw, uint32_t unit, const strata_kernel_problem *p, bool backward)
{
    const uint64_t *x = p->dims;
    attn a = {x[0], x[1], x[2], x[3], x[4], p->n_dims == 6 ? x[5] : x[1], 128, 128, 0, false, 0, 0, 0,
              false, 1, 0, 0, 0, false};
    bool causal = p->causal;
    const strata_compute_spec *u = hw ? strata_hw_compute(hw, unit) : NULL;
    bool fa2 = u && u->kernel.matrix == STRATA_MATRIX_TILES && !p->engine_attention;
    a.fa2 = fa2;
    if (u && u->kernel.matrix == STRATA_MATRIX_TILES) {
        if (fa2 && !backward && a.sq == 1 && a.h > a.hkv && a.hkv > 0 && a.h % a.hkv == 0 && p->window == 0 &&
            a.d % 8 == 0) { /* flash_api.cpp mha_fwd: seqlenq_ngroups_swapped (causal is off at Sq = 1) */
            a.sq = a.h / a.hkv;
            a.h = a.hkv;
            a.swapped = true;
            causal = false;
        }
        if (!backward) {
            a.bc = a.d <= 64 ? 128 : 64;
            if (fa2 && a.d > 192 && u->kernel.smem_per_sm >= 4 * 256 * (64 + 2 * 64)) /* run_mha_fwd_hdim256 */
                a.br = 64;
            uint64_t block_n = a.d <= 64 ? 256 : a.d <= 128 ? 128 : 64; /* set_params_splitkv */
            if (fa2 && (!p->fa2_varlen || a.swapped))
                a.splits = num_splits_heuristic(a.b * a.h * ceil_div(a.sq, 64), 2 * u->kernel.sms,
                                                ceil_div(a.skv, block_n), 128);
            if (a.splits > 1 || (fa2 && p->fa2_paged)) { /* run_mha_fwd_splitkv_dispatch: 64 x block_n */
                a.br = 64;
                a.bc = block_n;
            }
        } else if (a.d > 64)
            a.br = 64;
    } else if (u && u->kernel.matrix == STRATA_MATRIX_SYSTOLIC) {
        a.br = min_u64(PALLAS_BLOCK, a.sq);
        a.bc = min_u64(PALLAS_BLOCK, a.skv);
        a.pallas = backward;
        a.dq_br = min_u64(PALLAS_DQ_BLOCK_Q, a.sq);
        a.dq_bc = a.bc;
        if (backward)
            a.dq_pairs = visited_pairs(a.sq, a.skv, a.dq_br, a.dq_bc, p->causal, p->window);
    }
    a.pairs = visited_pairs(a.sq, a.skv, a.br, a.bc, causal, p->window);
    if (fa2)
        l2_reuse(hw, &u->kernel, &a, strata_kernel_elem_bytes(p), backward);
    return a;
}

static void nominal(const strata_kernel_problem *p, double factor, double *flops, double *bytes, bool backward)
{
    const uint64_t *x = p->dims;
    double f = 4.0 * (double)x[0] * (double)x[1] * (double)x[2] * (double)x[3] * (double)x[4];
    *flops = f * factor * mask_share(p);
    /* what the op reads and writes once: Q, K, V, O (and dO, dQ, dK, dV) */
    double e = strata_kernel_elem_bytes(p);
    uint64_t hkv = p->n_dims == 6 ? x[5] : x[1];
    double q = (double)(x[0] * x[1] * x[2] * x[4]), kv = (double)(x[0] * hkv * x[3] * x[4]);
    *bytes = (2 * q + 2 * kv) * e * (backward ? 2.0 : 1.0);
}

void strata_kernel_flash_fwd_nominal(const strata_kernel_problem *p, double *flops, double *bytes)
{
    nominal(p, 1.0, flops, bytes, false);
}

void strata_kernel_flash_bwd_nominal(const strata_kernel_problem *p, double *flops, double *bytes)
{
    nominal(p, 2.5, flops, bytes, true);
}

/* HBM bytes of the whole op (see above). */
static double hbm_bytes(const attn *a, double e, bool backward)
{
    double sq = (double)a->sq, skv = (double)a->skv, d = (double)a->d, br = (double)a->br, bc = (double)a->bc;
    double bh = (double)(a->b * a->h), per_head;
    if (!backward) {
        /* split-KV: each split's f32 output and LSE written, then read by the combine kernel */
        double accum = a->splits > 1 ? bh * (double)a->splits * sq * (d + 1) * 4 * 2 : 0;
        if (a->l2_reads > 0) /* K and V l2_reads times per (batch, key/value head) */
            return bh * ((2 * sq * d) * e + 4 * sq) + (double)(a->b * a->hkv) * 2 * skv * d * e * a->l2_reads + accum;
        per_head = (2 * sq * d + 2 * bc * d * a->pairs) * e + 4 * sq;
        return bh * per_head + accum;
    } else if (a->pallas) /* dK/dV kernel, dQ kernel, preprocessing; row statistics 3 x 128 lanes x 4 bytes */
        per_head = 4 * skv * d * e + a->pairs * (2 * br * d * e + 1536 * br) +
                   3 * sq * d * e + 1536 * sq + a->dq_pairs * 2 * (double)a->dq_bc * d * e + 2 * sq * d * e + 4 * sq;
    else {
        /* Q, dO, LSE and D of each query block: through the L2 (l2_reads a head), else per pair; dQ's f32
         * accumulator per pair always: every (key block, query block) pair atomicAdds its Br x D partial
         * (flash_bwd_kernel.h, Seq_parallel), a read and a write of 4 bytes at the L2 that no cache merges */
        double q_pairs = a->l2_reads > 0 ? a->l2_reads * (double)ceil_div(a->sq, a->br) : a->pairs;
        per_head = 4 * skv * d * e + q_pairs * (2 * br * d * e + 8 * br) + a->pairs * 8 * br * d + 2 * sq * d * e +
                   4 * sq;
    }
    return bh * per_head;
}

/* One kernel's softmax (see above): VPU and EUP work of its visited
 * pairs (B H pairs of br x bc), adding to vpu and eup. */
static void softmax_work(const vector_counts *k, double bh_pairs, uint64_t br, uint64_t bc, uint64_t d, bool causal,
                         double *vpu, double *eup)
{
    double scores = (double)br * (double)bc, rows = (double)br * STAT_LANES;
    double acc = (double)(k->acc_on_keys ? bc : br) * (double)d;
    *vpu += bh_pairs * (scores * (k->score + (causal ? k->causal : 0)) + rows * k->row_vpu + acc * k->acc);
    *eup += bh_pairs * (scores + rows * k->row_eup);
}

/* Grid steps of one Pallas kernel: every (batch, head, row block, column block). */
static double grid_steps(const attn *a, uint64_t br, uint64_t bc)
{
    return (double)(a->b * a->h) * (double)ceil_div(a->sq, br) * (double)ceil_div(a->skv, bc);
}

/* The products' time on the matrix engine: fwd Br x D x Bc and Br x Bc x D
 * per pair; bwd two of the first, one of the second and two Bc x Br x D;
 * the Pallas TPU bwd, its dK/dV kernel two Br x D x Bc (S, dP) and two
 * Bc x Br x D (dV, dK) per pair, its dQ kernel two Br' x D x Bc' (S, dP)
 * and one Br' x Bc' x D (dQ) per pair of its own. */
static double products_time(const strata_hw *hw, uint32_t unit, const strata_kernel_problem *p, const attn *a,
                            bool backward, strata_kernel_cost *c)
{
    double e = strata_kernel_elem_bytes(p);
    uint64_t pairs = (uint64_t)a->pairs * a->b * a->h;
    strata_kernel_cost scratch = {0};
    double t = strata_kernel_matmul_time(hw, unit, p->dtype, e, false, 0, pairs, a->br, a->d, a->bc, c);
    if (a->pallas) {
        uint64_t dq = (uint64_t)a->dq_pairs * a->b * a->h;
        t *= 2;
        t += 2 * strata_kernel_matmul_time(hw, unit, p->dtype, e, false, 0, pairs, a->bc, a->br, a->d, &scratch);
        t += 2 * strata_kernel_matmul_time(hw, unit, p->dtype, e, false, 0, dq, a->dq_br, a->d, a->dq_bc, &scratch);
        return t + strata_kernel_matmul_time(hw, unit, p->dtype, e, false, 0, dq, a->dq_br, a->dq_bc, a->d, &scratch);
    }
    t += strata_kernel_matmul_time(hw, unit, p->dtype, e, false, 0, pairs, a->br, a->bc, a->d, &scratch);
    if (backward) {
        t += strata_kernel_matmul_time(hw, unit, p->dtype, e, false, 0, pairs, a->br, a->d, a->bc, &scratch);
        t += 2 * strata_kernel_matmul_time(hw, unit, p->dtype, e, false, 0, pairs, a->bc, a->br, a->d, &scratch);
    }
    return t;
}

/* The Pallas TPU kernels' time besides their products (see above): each
 * visited pair's softmax after its products, and the grid steps, over
 * the megacore's cores. */
static double pallas_softmax_and_steps(const strata_hw *hw, const strata_compute_spec *u,
                                       const strata_kernel_problem *p, const attn *a, bool backward, double vrate,
                                       double trate, strata_kernel_cost *c)
{
    double vpu = 0, eup = 0, bh = (double)(a->b * a->h), steps;
    if (!backward) {
        softmax_work(&VPU_FWD, bh * a->pairs, a->br, a->bc, a->d, p->causal, &vpu, &eup);
        steps = grid_steps(a, a->br, a->bc);
    } else {
        softmax_work(&VPU_DKV, bh * a->pairs, a->br, a->bc, a->d, p->causal, &vpu, &eup);
        softmax_work(&VPU_DQ, bh * a->dq_pairs, a->dq_br, a->dq_bc, a->d, p->causal, &vpu, &eup);
        steps = grid_steps(a, a->br, a->bc) + grid_steps(a, a->dq_br, a->dq_bc);
    }
    double cores = u->kernel.cores > 0 ? (double)u->kernel.cores : 1.0;
    double softmax = fmax(vpu / vrate, eup / trate), step_s = pallas_step_s(hw);
    double t_steps = steps / cores * step_s;
    strata_kernel_term_add(c, "vector (VPU) operations", vpu, "");
    strata_kernel_term_add(c, "transcendental (EUP) operations", eup, "");
    strata_kernel_term_add(c, "softmax time", softmax, "s");
    strata_kernel_term_add(c, "grid steps", steps, "");
    strata_kernel_term_add(c, "grid step time", t_steps, "s");
    return softmax + t_steps;
}

static void flash_cost(const strata_hw *hw, uint32_t unit, const strata_kernel_problem *p, strata_kernel_cost *c,
                       bool backward)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    attn a = attn_of(hw, unit, p, backward);
    double flops = 0, unused = 0;
    nominal(p, backward ? 2.5 : 1.0, &flops, &unused, backward);
    strata_kernel_term_add(c, "block rows Br", (double)a.br, "");
    strata_kernel_term_add(c, "block columns Bc", (double)a.bc, "");
    strata_kernel_term_add(c, "block pairs per (batch, head)", a.pairs, "");
    strata_kernel_term_add(c, "nominal flops", flops, "FLOP");
    double mm = products_time(hw, unit, p, &a, backward, c);
    if (a.fa2) {
        double frac = u->kernel.mma_sync_fraction > 0 ? u->kernel.mma_sync_fraction : 1.0;
        strata_kernel_term_add(c, "mma.sync fraction of the peak", frac, "");
        mm /= frac;
        if (a.swapped)
            strata_kernel_term_add(c, "GQA group as query rows (seqlenq_ngroups_swapped)", (double)a.sq, "");
        if (!backward)
            strata_kernel_term_add(c, "split-KV key splits", (double)a.splits, "");
        if (a.l2_heads > 0) {
            strata_kernel_term_add(c, "(batch, head)s of the resident CTAs", a.l2_heads, "");
            strata_kernel_term_add(c, "their shared bytes", a.l2_heads * a.l2_head_bytes, "B");
            strata_kernel_term_add(c, "HBM reads of a head's shared bytes", a.l2_reads, "");
        }
    }
    double exps = (double)(a.b * a.h) * (a.pairs * (double)(a.br * a.bc) + a.dq_pairs * (double)(a.dq_br * a.dq_bc));
    if (a.pallas) {
        strata_kernel_term_add(c, "dQ kernel block rows", (double)a.dq_br, "");
        strata_kernel_term_add(c, "dQ kernel block columns", (double)a.dq_bc, "");
        strata_kernel_term_add(c, "dQ kernel block pairs per (batch, head)", a.dq_pairs, "");
    }
    double vrate = u->kernel.vector_flops > 0 ? u->kernel.vector_flops : u->flops;
    double trate = u->kernel.transcendental_flops > 0 ? u->kernel.transcendental_flops : vrate;
    double t_exp = exps / trate;
    strata_kernel_term_add(c, "products on the matrix engine", mm, "s");
    strata_kernel_term_add(c, "exponentials", exps, "");
    strata_kernel_term_add(c, "exponential time", t_exp, "s");
    double busy = mm + t_exp;
    if (u->kernel.matrix == STRATA_MATRIX_SYSTOLIC)
        busy = mm + pallas_softmax_and_steps(hw, u, p, &a, backward, vrate, trate, c);
    strata_kernel_term_add(c, "compute time", busy, "s");
    strata_kernel_finish(hw, unit, c, flops, busy, hbm_bytes(&a, strata_kernel_elem_bytes(p), backward),
                         "HBM bytes by block size");
    if (a.splits > 1) { /* the split-KV combine kernel (flash_fwd_splitkv_combine_kernel) launched after it */
        c->fixed_s += u->kernel.kernel_launch;
        strata_kernel_term_add(c, "combine kernel launch", u->kernel.kernel_launch, "s");
    }
}

void strata_kernel_flash_fwd_cost(const strata_hw *hw, uint32_t unit, const strata_kernel_problem *p,
                                  strata_kernel_cost *c)
{
    flash_cost(hw, unit, p, c, false);
}

void strata_kernel_flash_bwd_cost(const strata_hw *hw, uint32_t unit, const strata_kernel_problem *p,
                                  strata_kernel_cost *c)
{
    flash_cost(hw, unit, p, c, true);
}
