/*
 * matrix.c: how long a unit's matrix engine takes for a matrix product,
 * shared by the kernels that multiply matrices (gemm.c, flash_attention.c).
 *
 * Systolic (TPU MXU; docs/hardware.md, "Kernels"):
 *   - the array holds a side x side tile of the right operand (the
 *     weights); K and N are padded up to multiples of the side, and the
 *     rows of the left operand stream through it in groups of 8 (a vector
 *     register's sublanes), so M is padded to a multiple of 8;
 *   - a pass streams the M rows through one weight tile; there are
 *     ceil(K/side) x ceil(N/side) passes per product, spread over the
 *     unit's arrays (mxus per core x cores of a megacore), whole passes to
 *     each, so the busiest array does ceil(passes / arrays) of them;
 *   - a pass takes M_pad cycles (one row a cycle), and no less than the
 *     side: loading the next weight tile (side rows) hides under a pass
 *     only if the pass is at least that long;
 *   - the pipeline's fill and drain (`fill` cycles, default 2 x side) are
 *     paid once per kernel;
 *   - the clock follows from the peak: peak / (arrays x side^2 x 2).
 * Tiles (GPU tensor cores; NVIDIA's Matrix Multiplication Background
 * guide, sections 2.3, 3.1 and 3.2):
 *   - the output is computed in CTA tiles Mt x Nt (tile quantization: the
 *     edge tiles cost a whole tile); tiles run in waves of one per SM (wave
 *     quantization): waves = ceil(tiles x split / SMs);
 *   - a tile's time is 2 Mt Nt K / (the SM's share of the peak times the
 *     matrix efficiency), slowed when its operands (Mt + Nt elements per
 *     k step for Mt Nt MACs) arrive slower than `operand_feed`;
 *   - split-K: s CTAs share a tile's K, K / s each, then a reduction of
 *     their s partial f32 outputs through the operand memory (written and
 *     read back once). As cublasLt.h documents it (CUBLASLT_ALGO_CONFIG_
 *     SPLITK_NUM: "SPLITK_NUM parts of matrix multiplication will be
 *     computed in parallel, and then results accumulated according to
 *     REDUCTION_SCHEME", a count, not a power of two) and CUTLASS runs it
 *     (GemmSplitKParallel: grid.z = the slices, then ReduceSplitK), the
 *     tiles x s CTAs are one grid that runs in as many waves as it needs:
 *     on 108 SMs a split of 5 turns one wave of 64 tiles, which leaves 44
 *     SMs idle, into 3 waves of a fifth of K; the reduction is a kernel of
 *     its own (ReduceSplitK; cuBLAS's cublasLt::splitKreduce_kernel after
 *     its GEMM), so a library GEMM's split (gemm.c) also pays the unit's
 *     `split_k_reduction`, that kernel's fixed time (launch gap and its
 *     dependent memory round trips), beside the partials' bytes;
 *   - the epilogue: with a cooperative schedule (CUTLASS's
 *     KernelTmaWarpSpecializedCooperative; media/docs/cpp/efficient_gemm.md:
 *     both consumer warp groups on one tile) a tile's output is written
 *     after its mainloop, and the SMs run no tensor-core work meanwhile;
 *     the ping-pong schedule hides it under the other warp group's
 *     mainloop. For the dtypes the unit's `exposed_epilogue` lists, the
 *     output's bytes (8-bit products are written in bf16) are added at the
 *     achievable stream rate: the tiles of a wave write together, so the
 *     waves' epilogues add up to the whole output. Split-K slices already
 *     write their f32 partials serially (above), so it applies to s = 1;
 *   - the library's choice is modelled as the fastest of the unit's
 *     `cta_tiles` and splits 1 to 16 with at least 64 of K per slice (an
 *     ESTIMATE of cuBLAS's heuristic, which is not public; CUTLASS's
 *     profiler picks the same way, by search);
 *   - a grouped GEMM (strata_kernel_grouped_matmul_time: `batch`
 *     products in one launch, TensorRT-LLM's CUTLASS MoE GEMM) picks among
 *     the unit's `grouped_cta_tiles` (default: cta_tiles) without split-K
 *     (TensorRT-LLM's SM90 MoE dispatch, moe_gemm_template_dispatch_tma_ws.h,
 *     selects a tile and a cluster shape and nothing else), and a tile's
 *     mainloop runs whole k-blocks of `grouped_k_tile` bytes (its CTA shape's
 *     third extent, 128 bytes: CtaShape128x128x128B is K = 128 / sizeof(T)):
 *     K = 192 in FP8 runs two 128-element blocks, 256 of K's MACs; the
 *     kernel runs each product transposed (moe_kernels.cu,
 *     computeStridesTmaWarpSpecializedKernel: problem shape (gemm_n, gemm_m,
 *     gemm_k), "#tokens as the N dimension"), so a tile's first extent runs
 *     along the weights' n and its second along the m rows (128 x 16: 128
 *     of n by 16 rows); and each group (expert) a CTA starts costs it
 *     `grouped_group_switch` on its consumer's path (CUTLASS's
 *     kernel/sm90_gemm_array_tma_warpspecialized_cooperative.hpp: the
 *     group's TMA descriptors rewritten and fenced, serial with the MMAs),
 *     as many as the busiest CTA of the persistent grid starts
 *     (groups_started);
 *   - a library GEMM's K loop and its operand stream (gemm.c passes the
 *     kernel's HBM time): CUTLASS's SM90 warp-specialized kernels
 *     (collective/sm90_mma_tma_gmma_ss_warpspecialized.hpp: a producer warp
 *     fills `stages` shared-memory buffers of one k-block each through TMA,
 *     the consumer warp groups' MMAs release a buffer when done with it)
 *     overlap the two only as far as the buffers reach: with S stages
 *     between a producer and a consumer whose k-block times vary, the
 *     kernel runs at a finite buffer's throughput, the longer of the two
 *     times x (1 - q^(S+1)) / (1 - q^S), q = the shorter / the longer
 *     ((S+1)/S at q = 1: 25% over the max at 4 stages; S = 1: the sum;
 *     q -> 0: the max). The stages are CUTLASS's own count
 *     (builders/sm90_gmma_builder.inl, compute_stage_count_or_override):
 *     the unit's gemm_pipeline_smem / (the stage's (Mt + Nt) x
 *     gemm_k_tile_bytes rounded up to 128 B, plus its 16-byte pair of
 *     barriers; a cta_tile that fits no stage is refused at load). ESTIMATE: both
 *     times vary as exponentials (the closed form of that buffer; the
 *     times' real spread is not published), docs/hardware.md;
 *   - block-scaled FP8 (DeepSeek-style: activations scaled per 1 x 128,
 *     weights per 128 x 128; strata_kernel_block_scaled_matmul_time and
 *     block_scaled grouped GEMMs), as TensorRT-LLM runs it on SM90
 *     (cpp/tensorrt_llm/kernels/cutlass_kernels/fp8_blockscale_gemm/
 *     fp8_blockscale_gemm_kernel.cuh: gemm_dispatch and grouped_gemm_dispatch
 *     call DeepGEMM's kernels, gemm_dispatch_old runs
 *     cooperative_1x128_by_128x128_fp8_gemm_kernel; DeepGEMM's fp8_gemm.cuh
 *     has the same mainloop): TILE_K = 128 (static_assert), so K runs in
 *     whole 128-element blocks; the grid is tiles only (no split-K); per
 *     k-block the producer's TMA brings the tile's activation scales
 *     (TILE_M floats, ScaleGranMA = 1, on the stage's full barrier with A
 *     and B: 4 B a row per 128 of K in the operand feed), the weight
 *     scales are read once a CTA (__ldg into shared memory before the
 *     mainloop: ceil(K/128) floats, not in the feed); each consumer warp
 *     group issues the k-block's WGMMAs into a scratch accumulator, waits
 *     for them (warpgroup_wait<0>), then promotes: one FFMA a tile element
 *     (final_accum += scale_a x scale_b x accum; WGMMA_OP::NUM_ACCUM a
 *     thread) on the CUDA cores, before the next k-block's WGMMAs may
 *     overwrite the scratch. Within a warp group the promotion is serial
 *     with its MMAs (the source's order); ESTIMATE: the two warp groups of
 *     a cooperative tile stay in step (they split one tile, wait on one
 *     full barrier a stage and start each tile together), so neither's
 *     promotion hides under the other's MMAs: each k-block adds
 *     2 Mt Nt / (the SM's share of the unit's vector_flops), about a
 *     quarter of an H100 SXM's FP8 MMA time for the block (1979 / (128 x
 *     67) = 0.23 at any tile; DeepSeek-V3's report, section 3.3.2, claims
 *     its kernel overlaps the two warp groups, which this does not credit).
 *     The block-scaled grouped kernel keeps one TMA descriptor per operand
 *     for all groups (Fp8Gemm::run: make_2d_tma_a_desc over max_shape_m,
 *     make_2d_tma_b_desc over num_problems x shape_n), so it pays no
 *     grouped_group_switch. The scales' HBM bytes are gemm.c's;
 *   - not modelled: stream-K (CUTLASS's ThreadblockSwizzleStreamK, an even
 *     share of the MAC iterations per SM with partial tiles fixed up through
 *     a workspace). As one more choice for the fastest pick it lowers every
 *     shape with a partial last wave, while the model has no per-tile
 *     prologue and epilogue for its fixup to compete with
 *     (docs/validation.md, "Kernels").
 */
#include "kernel/kernel_rows.h"
#include <math.h>

/* The K extent of one scale of block-scaled FP8 (the kernels' TILE_K and
 * ScaleGranKA/KB: 128). */
#define BLOCK_SCALE_K 128u

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return b ? (a + b - 1) / b : 0;
}

double strata_kernel_stream_rate(const strata_hw *hw, uint32_t unit)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    const strata_memory_spec *m = strata_hw_memory(hw, u->operands);
    double eff = u->kernel.stream_efficiency > 0 ? u->kernel.stream_efficiency : 1.0;
    return m ? m->bandwidth * eff : 0;
}

static double systolic_time(const strata_compute_spec *u, double peak, uint64_t batch, uint64_t m, uint64_t k,
                            uint64_t n, strata_kernel_cost *c)
{
    const strata_kernel_spec *ks = &u->kernel;
    uint64_t side = ks->side;
    uint64_t arrays = (uint64_t)ks->mxus * ks->cores;
    double clock = peak / ((double)arrays * (double)side * (double)side * 2.0);
    uint64_t m_pad = ceil_div(m, 8) * 8;
    uint64_t passes = batch * ceil_div(k, side) * ceil_div(n, side);
    uint64_t per_array = ceil_div(passes, arrays);
    uint64_t per_pass = m_pad > side ? m_pad : side;
    uint64_t fill = ks->fill ? ks->fill : 2 * side;
    double cycles = (double)per_array * (double)per_pass + (double)fill;
    double eff = ks->matrix_efficiency > 0 ? ks->matrix_efficiency : 1.0;
    strata_kernel_term_add(c, "systolic side", (double)side, "");
    strata_kernel_term_add(c, "M padded to 8 rows", (double)m_pad, "");
    strata_kernel_term_add(c, "K tiles", (double)ceil_div(k, side), "");
    strata_kernel_term_add(c, "N tiles", (double)ceil_div(n, side), "");
    strata_kernel_term_add(c, "passes (weight tiles x batch)", (double)passes, "");
    strata_kernel_term_add(c, "arrays (mxus x cores)", (double)arrays, "");
    strata_kernel_term_add(c, "passes on the busiest array", (double)per_array, "");
    strata_kernel_term_add(c, "cycles a pass", (double)per_pass, "");
    strata_kernel_term_add(c, "fill and drain cycles", (double)fill, "");
    strata_kernel_term_add(c, "clock (peak / arrays / side^2 / 2)", clock, "Hz");
    strata_kernel_term_add(c, "matrix efficiency", eff, "");
    return cycles / clock / eff;
}

typedef struct tile_choice {
    double t;
    uint32_t mt, nt, split, stages;
    uint64_t tiles, waves;
    double feed_eff;
    uint64_t groups_started; /* by the busiest CTA (a grouped kernel with a switch cost; else 0) */
    double promote_s;        /* block-scaled FP8: the promotions the tile's waves add (0: none) */
} tile_choice;

/* The shape and its element: what every tile and split of one product shares. */
typedef struct tile_problem {
    double per_sm, elem, epilogue_s; /* epilogue_s: the exposed output write (0: hidden) */
    uint64_t batch, m, k, n;
    uint64_t k_main;                 /* K as the mainloop runs it: k, or padded to whole k-blocks */
    double stream_s;                 /* the kernel's operand stream overlapped by stages (0: none) */
    double group_switch_s;           /* a grouped kernel's cost per group a CTA starts (0: not grouped) */
    double split_reduce_s;           /* split-K's reduction kernel's fixed time (0: none) */
    double promote_rate;             /* block-scaled FP8: the SM's CUDA-core FLOP/s for the promotion (0: none) */
    bool rows_along_n;               /* the activations' rows run along the tile's N (a grouped, transposed product) */
} tile_problem;

/* The tiles a kernel picks among: its CTA shapes, the most slices split-K
 * may cut K into, and the k-block its mainloop steps by (0: K exact). */
typedef struct tile_set {
    const uint32_t (*tiles)[2];
    uint32_t n_tiles, max_split;
    uint64_t k_block;
    double group_switch_s; /* a grouped kernel's cost per group a CTA starts (0: none) */
    double split_reduce_s; /* split-K's reduction kernel's fixed time (0: none) */
    bool block_scaled;     /* block-scaled FP8: promotions and activation scales (k_block is then 128) */
    bool transposed;       /* a grouped product: the tile's M along n, its N along the m rows */
} tile_set;

/* The k-block buffers a CTA tile's mainloop holds (CUTLASS's
 * compute_stage_count_or_override: capacity / (stage bytes rounded up to
 * 128, plus the stage's 16-byte full and empty barriers)); 0: no stage
 * model on the unit. */
static uint32_t pipeline_stages(const strata_kernel_spec *ks, uint32_t mt, uint32_t nt)
{
    if (!ks->gemm_pipeline_smem || !ks->gemm_k_tile)
        return 0;
    uint64_t stage = ceil_div((uint64_t)(mt + nt) * ks->gemm_k_tile, 128) * 128 + 16;
    return (uint32_t)(ks->gemm_pipeline_smem / stage);
}

/* Two stages of a pipeline, busy a and b in all, with s buffers between
 * them: the finite buffer's time (matrix.c's header). */
static double buffered_time(double a, double b, uint32_t s)
{
    double hi = fmax(a, b), lo = fmin(a, b);
    if (hi <= 0 || lo <= 0)
        return hi;
    double q = lo / hi;
    if (q == 1.0)
        return hi * (s + 1.0) / s;
    return hi * (1.0 - pow(q, s + 1.0)) / (1.0 - pow(q, s));
}

/* The groups the busiest CTA of a grouped kernel starts: CUTLASS's
 * PersistentTileSchedulerSm90Group (kernel/sm90_tile_scheduler_group.hpp)
 * numbers the tiles group after group, `per_group` each, and CTA c of a
 * persistent grid of `grid` CTAs (the SM count: TensorRT-LLM passes no host
 * problem shapes, so get_tiled_cta_shape_mnl takes hw_info.sm_count) runs
 * tiles c, c + grid, c + 2 grid, ...; CTA 0 runs the most tiles, and each
 * tile whose group differs from its previous one's (the first included)
 * makes it rewrite that group's TMA descriptors. */
static uint64_t groups_started(uint64_t groups, uint64_t per_group, uint64_t grid)
{
    uint64_t total = groups * per_group, started = 0, last = UINT64_MAX;
    for (uint64_t i = 0; i < total && grid; i += grid) {
        uint64_t g = i / per_group;
        started += g != last;
        last = g;
    }
    return started;
}

/* One tile and split: its time, or INFINITY when the split does not fit. */
static double tile_time(const strata_hw *hw, uint32_t unit, const tile_problem *p, uint32_t mt, uint32_t nt,
                        uint32_t split, tile_choice *out)
{
    double per_sm = p->per_sm, elem = p->elem;
    uint64_t batch = p->batch, m = p->m, k = p->k, n = p->n;
    const strata_kernel_spec *ks = &strata_hw_compute(hw, unit)->kernel;
    uint64_t tiles = batch * ceil_div(m, mt) * ceil_div(n, nt);
    if (split > 1 && ceil_div(k, split) < 64)
        return INFINITY;
    uint32_t stages = p->stream_s > 0 ? pipeline_stages(ks, mt, nt) : 0; /* >= 1 with the key (hw_compute.c) */
    /* operands per second a tile needs: (Mt + Nt) elements each k step of Mt Nt MACs (block-scaled: and a
     * float per activation row every BLOCK_SCALE_K steps) */
    double scale_bytes = p->promote_rate > 0 ? 4.0 / BLOCK_SCALE_K * (double)(p->rows_along_n ? nt : mt) : 0;
    double need = per_sm / 2.0 * ((double)(mt + nt) * elem + scale_bytes) / ((double)mt * (double)nt);
    double feed_eff = ks->operand_feed > 0 && need > ks->operand_feed ? ks->operand_feed / need : 1.0;
    uint64_t waves = ceil_div(tiles * split, ks->sms); /* the grid: every tile's s slices */
    double kk = split > 1 ? (double)ceil_div(k, split) : (double)p->k_main;
    double t = (double)waves * 2.0 * mt * nt * kk / (per_sm * feed_eff);
    if (split > 1) /* s partial f32 outputs written and read back, by a reduction kernel of its own */
        t += (double)(batch * m * n) * 4.0 * split * 2.0 / strata_kernel_stream_rate(hw, unit) + p->split_reduce_s;
    else
        t += p->epilogue_s;
    double promote = 0; /* each k-block's FFMA a tile element on the CUDA cores, after its MMAs */
    if (p->promote_rate > 0)
        promote = (double)waves * (double)ceil_div((uint64_t)kk, BLOCK_SCALE_K) * 2.0 * mt * nt / p->promote_rate;
    t += promote;
    uint64_t started = 0;
    if (p->group_switch_s > 0) {
        started = groups_started(batch, ceil_div(m, mt) * ceil_div(n, nt), ks->sms);
        t += (double)started * p->group_switch_s;
    }
    if (stages)
        t = buffered_time(t, p->stream_s, stages);
    *out = (tile_choice){t, mt, nt, split, stages, tiles, waves, feed_eff, started, promote};
    return t;
}

/* dtype: the product's, to look up exposed_epilogue (STRATA_DTYPE__COUNT: none, a fused kernel's blocks). */
static double tiles_time(const strata_hw *hw, uint32_t unit, double peak, strata_dtype dtype, double elem,
                         const tile_set *set, uint64_t batch, uint64_t m, uint64_t k, uint64_t n, double stream_s,
                         strata_kernel_cost *c)
{
    const strata_kernel_spec *ks = &strata_hw_compute(hw, unit)->kernel;
    double eff = ks->matrix_efficiency > 0 ? ks->matrix_efficiency : 1.0;
    uint64_t k_main = set->k_block ? ceil_div(k, set->k_block) * set->k_block : k;
    double vector = ks->vector_flops > 0 ? ks->vector_flops : strata_hw_compute(hw, unit)->flops;
    tile_problem p = {peak * eff / ks->sms, elem, 0, batch, m, k, n, k_main, stream_s, set->group_switch_s,
                      set->split_reduce_s, set->block_scaled ? vector / ks->sms : 0, set->transposed};
    bool exposed = dtype < STRATA_DTYPE__COUNT && (ks->exposed_epilogue >> dtype & 1u);
    if (exposed)
        p.epilogue_s = (double)(batch * m * n) * strata_kernel_out_bytes(elem) / strata_kernel_stream_rate(hw, unit);
    tile_choice best = {INFINITY, 0, 0, 1, 0, 0, 0, 1, 0, 0};
    for (uint32_t i = 0; i < set->n_tiles; i++)
        for (uint32_t split = 1; split <= set->max_split; split++) {
            tile_choice t = best;
            if (tile_time(hw, unit, &p, set->tiles[i][0], set->tiles[i][1], split, &t) < best.t)
                best = t;
        }
    strata_kernel_term_add(c, "CTA tile M", best.mt, "");
    strata_kernel_term_add(c, "CTA tile N", best.nt, "");
    strata_kernel_term_add(c, "split-K", best.split, "");
    if (best.split > 1 && set->split_reduce_s > 0)
        strata_kernel_term_add(c, "split-K reduction kernel (fixed)", set->split_reduce_s, "s");
    if (set->k_block)
        strata_kernel_term_add(c, "K in whole k-blocks (mainloop)", (double)k_main, "");
    strata_kernel_term_add(c, "tiles", (double)best.tiles, "");
    strata_kernel_term_add(c, "CTAs (tiles x split-K)", (double)(best.tiles * best.split), "");
    strata_kernel_term_add(c, "waves over the SMs", (double)best.waves, "");
    strata_kernel_term_add(c, "SMs", ks->sms, "");
    strata_kernel_term_add(c, "matrix efficiency", eff, "");
    strata_kernel_term_add(c, "operand feed efficiency", best.feed_eff, "");
    if (exposed)
        strata_kernel_term_add(c, "exposed epilogue (output write)", best.split > 1 ? 0 : p.epilogue_s, "s");
    if (set->group_switch_s > 0) {
        strata_kernel_term_add(c, "groups the busiest CTA starts", (double)best.groups_started, "");
        strata_kernel_term_add(c, "descriptor switch per group", set->group_switch_s, "s");
    }
    if (set->block_scaled) {
        strata_kernel_term_add(c, "block-scaled k-blocks a tile promotes", (double)ceil_div(k_main, BLOCK_SCALE_K), "");
        strata_kernel_term_add(c, "CUDA-core rate a SM (promotion)", p.promote_rate, "FLOP/s");
        strata_kernel_term_add(c, "block-scale promotion (serial with the MMAs)", best.promote_s, "s");
    }
    if (best.stages) {
        strata_kernel_term_add(c, "pipeline stages (k-blocks in shared memory)", best.stages, "");
        strata_kernel_term_add(c, "operand stream the stages overlap", stream_s, "s");
    }
    return isfinite(best.t) ? best.t : 0;
}

/* A matmul with no tile search: true and *t its time when unit has no peak for dtype or the shape is empty (0)
 * or the unit is systolic (systolic_time); else false and *peak the unit's peak for dtype, for tiles_time. */
static bool untiled_time(const strata_hw *hw, uint32_t unit, strata_dtype dtype, uint64_t batch, uint64_t m,
                         uint64_t k, uint64_t n, strata_kernel_cost *c, double *peak, double *t)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    *peak = strata_hw_compute_flops(hw, unit, dtype);
    *t = 0;
    if (*peak <= 0 || batch == 0 || m == 0 || k == 0 || n == 0)
        return true;
    if (u->kernel.matrix != STRATA_MATRIX_SYSTOLIC)
        return false;
    *t = systolic_time(u, *peak, batch, m, k, n, c);
    return true;
}

double strata_kernel_matmul_time(const strata_hw *hw, uint32_t unit, strata_dtype dtype, double elem_bytes,
                                 bool to_memory, double stream_s, uint64_t batch, uint64_t m, uint64_t k, uint64_t n,
                                 strata_kernel_cost *c)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    double peak, t;
    if (untiled_time(hw, unit, dtype, batch, m, k, n, c, &peak, &t))
        return t;
    /* a library GEMM's split-K reduces in a kernel of its own; a fused kernel's blocks (to_memory false) do not */
    tile_set set = {(const uint32_t(*)[2])u->kernel.cta_tiles, u->kernel.n_cta_tiles, 16, 0, 0,
                    to_memory ? u->kernel.split_k_reduction : 0, false, false};
    return tiles_time(hw, unit, peak, to_memory ? dtype : STRATA_DTYPE__COUNT, elem_bytes, &set, batch, m, k, n,
                      to_memory ? stream_s : 0, c);
}

double strata_kernel_block_scaled_matmul_time(const strata_hw *hw, uint32_t unit, strata_dtype dtype,
                                              double elem_bytes, double stream_s, uint64_t batch, uint64_t m,
                                              uint64_t k, uint64_t n, strata_kernel_cost *c)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    double peak, t;
    if (untiled_time(hw, unit, dtype, batch, m, k, n, c, &peak, &t))
        return t;
    tile_set set = {(const uint32_t(*)[2])u->kernel.cta_tiles, u->kernel.n_cta_tiles, 1, BLOCK_SCALE_K, 0, 0, true,
                    false};
    return tiles_time(hw, unit, peak, dtype, elem_bytes, &set, batch, m, k, n, stream_s, c);
}

double strata_kernel_grouped_matmul_time(const strata_hw *hw, uint32_t unit, strata_dtype dtype, double elem_bytes,
                                         bool block_scaled, uint64_t batch, uint64_t m, uint64_t k, uint64_t n,
                                         strata_kernel_cost *c)
{
    const strata_compute_spec *u = strata_hw_compute(hw, unit);
    double peak, t;
    if (untiled_time(hw, unit, dtype, batch, m, k, n, c, &peak, &t))
        return t;
    const strata_kernel_spec *ks = &u->kernel;
    bool own = ks->n_grouped_tiles > 0;
    uint64_t k_block = ks->grouped_k_tile ? (uint64_t)fmax(1.0, floor((double)ks->grouped_k_tile / elem_bytes)) : 0;
    if (block_scaled) /* TILE_K = 128 elements; one descriptor for every group: no switch (the header) */
        k_block = BLOCK_SCALE_K;
    tile_set set = {(const uint32_t(*)[2])(own ? ks->grouped_tiles : ks->cta_tiles),
                    own ? ks->n_grouped_tiles : ks->n_cta_tiles, 1, k_block,
                    block_scaled ? 0 : ks->grouped_group_switch, 0, block_scaled, true};
    /* transposed: the kernel's M runs along the weights' n, its N along the m rows */
    return tiles_time(hw, unit, peak, dtype, elem_bytes, &set, batch, n, k, m, 0, c);
}
