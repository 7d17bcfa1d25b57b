/* test_kernel.c: the kernel cost models (models/kernel/kernel.h) on a
 * made-up unit whose figures make the hand arithmetic short:
 *   systolic: one 128 x 128 array at 1 GHz (peak 128 x 128 x 2 x 1e9 =
 *   32.768 TFLOP/s), fill and drain 2 x 128 = 256 cycles, HBM 1 TB/s,
 *   kernel_launch 1 us (one test adds matrix_efficiency = 0.8);
 *   tiles (the dtype tests): 4 SMs, one 128 x 128 CTA tile, f8 at twice
 *   the bf16 peak, `exposed_epilogue = f8` (an FP8 tile's output written
 *   after its mainloop); the grouped GEMM's tests add a grouped tile and
 *   128-byte k-blocks, the pipeline's tests shared memory for its stages;
 * the shipped h100.ini's FP8 gemm at a shape near its ridge;
 * the shipped tpu-v5e.ini's gemm against the matmul timings its
 * matrix_efficiency comes from;
 * and the trace side: a kernel op on a unit without a matrix engine keeps
 * the roofline, and bad kernel ops are refused at their line. */
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "hw/hw.h"
#include "kernel/kernel.h"

static const char *head = "[hardware]\nname = t\n[memory hbm]\nkind = device\ncapacity = 16GiB\nbandwidth = 1TB/s\n"
                          "[compute mxu]\nflops = 32.768TFLOP/s\n";
static const char *systolic = "matrix = systolic\nside = 128\nkernel_launch = 1us\n";

static strata_hw *unit(const char *keys)
{
    GError *err = NULL;
    strata_hw *hw = strata_test_load_hw_text(head, keys, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    return hw;
}

static double term(const strata_kernel_cost *c, const char *name)
{
    for (uint32_t i = 0; i < c->n_terms; i++)
        if (strcmp(c->terms[i].name, name) == 0)
            return c->terms[i].value;
    ck_abort_msg("no term '%s'", name);
    return 0;
}

static bool has_term(const strata_kernel_cost *c, const char *name)
{
    for (uint32_t i = 0; i < c->n_terms; i++)
        if (strcmp(c->terms[i].name, name) == 0)
            return true;
    return false;
}

static void cost(const strata_hw *hw, const char *kernel, const uint64_t *dims, uint32_t n, bool causal,
                 strata_kernel_cost *c)
{
    strata_kernel_problem p = {.n_dims = n, .dims = dims, .causal = causal, .dtype = STRATA_DTYPE_BF16};
    strata_kernel_cost_of(strata_kernel_find(kernel), hw, 0, &p, c);
}

/* 129 x 129 x 129: K and N pad to two 128-tiles each (4 weight tiles, 4
 * passes on the one array), M to 136 rows (8-row groups): 4 x 136 + 256
 * cycles = 800 ns at 1 GHz. */
START_TEST(gemm_129_pads_to_two_tiles_per_dimension)
{
    strata_hw *hw = unit(systolic);
    uint64_t d[] = {129, 129, 129};
    strata_kernel_cost c;
    cost(hw, "gemm", d, 3, false, &c);
    ck_assert_double_eq(term(&c, "K tiles"), 2);
    ck_assert_double_eq(term(&c, "N tiles"), 2);
    ck_assert_double_eq(term(&c, "M padded to 8 rows"), 136);
    ck_assert_double_eq(term(&c, "passes (weight tiles x batch)"), 4);
    ck_assert_double_eq_tol(c.compute_s, 800e-9, 1e-15);
    ck_assert_double_eq_tol(c.fixed_s, 1e-6, 1e-15);
    ck_assert_double_eq(c.flops, 2.0 * 129 * 129 * 129);
    strata_hw_free(hw);
}
END_TEST

/* The same 129^3 on a unit sustaining 0.8 of its peak: the array's 800
 * cycles take 800 ns / 0.8 = 1000 ns; the launch and the bytes do not move. */
START_TEST(gemm_at_matrix_efficiency)
{
    static const char *keys = "matrix = systolic\nside = 128\nkernel_launch = 1us\nmatrix_efficiency = 0.8\n";
    strata_hw *hw = unit(keys);
    uint64_t d[] = {129, 129, 129};
    strata_kernel_cost c;
    cost(hw, "gemm", d, 3, false, &c);
    ck_assert_double_eq(term(&c, "matrix efficiency"), 0.8);
    ck_assert_double_eq_tol(c.compute_s, 1000e-9, 1e-15);
    ck_assert_double_eq_tol(c.fixed_s, 1e-6, 1e-15);
    strata_hw_free(hw);
}
END_TEST

/* A GEMV, 1 x 4096 x 4096 in bf16 on the systolic unit (HBM 1 TB/s): its
 * bytes (1 x 4096 + 4096 x 4096 + 1 x 4096) x 2 = 33,570,816 B. With
 * stream_efficiency = 0.9 alone they stream at 0.9 TB/s (memory bytes
 * 33,570,816 / 0.9 = 37,300,906.67); with gemm_stream_efficiency = 0.8
 * the GEMM's at 0.8 TB/s (41,963,520), while an elementwise op on the same
 * unit keeps 0.9: 1,000,000 elements of 2 B read and written, 4 MB / 0.9. */
START_TEST(gemm_streams_at_its_own_efficiency)
{
    uint64_t d[] = {1, 4096, 4096}, e[] = {1000000};
    strata_kernel_cost c;
    strata_hw *hw = unit("matrix = systolic\nside = 128\nkernel_launch = 1us\nstream_efficiency = 0.9\n");
    cost(hw, "gemm", d, 3, false, &c);
    ck_assert_double_eq(c.bytes_nominal, 33570816);
    ck_assert_double_eq_tol(c.bytes, 33570816 / 0.9, 1e-3);
    ck_assert_double_eq_tol(term(&c, "achievable stream rate"), 0.9e12, 1);
    strata_hw_free(hw);
    hw = unit("matrix = systolic\nside = 128\nkernel_launch = 1us\nstream_efficiency = 0.9\n"
              "gemm_stream_efficiency = 0.8\n");
    cost(hw, "gemm", d, 3, false, &c);
    ck_assert_double_eq_tol(c.bytes, 41963520, 1e-3);
    ck_assert_double_eq_tol(term(&c, "achievable stream rate"), 0.8e12, 1);
    cost(hw, "elementwise", e, 1, false, &c);
    ck_assert_double_eq(c.bytes_nominal, 4e6);
    ck_assert_double_eq_tol(c.bytes, 4e6 / 0.9, 1e-3);
    strata_hw_free(hw);
}
END_TEST

/* gemm_stream_curve (sim/hw/hw_stream_curve.c): the GEMV above, 33,570,816 B,
 * on a curve of two points a factor 4 either side of it, 8,392,704 B at 0.6
 * and 134,283,264 B at 0.8: log(bytes) is halfway, 0.7, so its memory bytes
 * are 33,570,816 / 0.7 = 47,958,308.57 and its stream rate 0.7 TB/s (the
 * curve replaces gemm_stream_efficiency = 0.9). A 1 x 1024 x 1024 GEMV,
 * (1024 + 1,048,576 + 1024) x 2 = 2,101,248 B, below the first point, takes
 * the first point's 0.6; 1 x 16384 x 16384, 536,936,448 B, beyond the last,
 * the last's 0.8. An elementwise op keeps stream_efficiency 0.9. */
START_TEST(gemm_streams_by_its_size_on_the_curve)
{
    uint64_t d[] = {1, 4096, 4096}, small[] = {1, 1024, 1024}, big[] = {1, 16384, 16384}, e[] = {1000000};
    strata_kernel_cost c;
    strata_hw *hw = unit("matrix = systolic\nside = 128\nkernel_launch = 1us\nstream_efficiency = 0.9\n"
                         "gemm_stream_efficiency = 0.9\ngemm_stream_curve = 8392704:0.6, 134283264:0.8\n");
    cost(hw, "gemm", d, 3, false, &c);
    ck_assert_double_eq_tol(c.bytes, 33570816 / 0.7, 1e-3);
    ck_assert_double_eq_tol(term(&c, "achievable stream rate"), 0.7e12, 1);
    cost(hw, "gemm", small, 3, false, &c);
    ck_assert_double_eq(c.bytes_nominal, 2101248);
    ck_assert_double_eq_tol(term(&c, "achievable stream rate"), 0.6e12, 1);
    cost(hw, "gemm", big, 3, false, &c);
    ck_assert_double_eq(c.bytes_nominal, 536936448);
    ck_assert_double_eq_tol(term(&c, "achievable stream rate"), 0.8e12, 1);
    cost(hw, "elementwise", e, 1, false, &c);
    ck_assert_double_eq_tol(c.bytes, 4e6 / 0.9, 1e-3);
    strata_hw_free(hw);
}
END_TEST

/* The shipped A100 against a row of the table its curve comes from
 * (aiconfigurator @095f58a5 a100_sxm/gemm/trtllm/1.0.0: bf16 m=1 n=8192
 * k=2560, 34.1 us): bytes 2 (2560 + 2560 x 8192 + 8192) = 41,964,544 B
 * (40.02 MiB), between the points 22.6 MiB (0.741) and 45.3 MiB (0.751):
 * ln(40.02 / 22.6) / ln(45.3 / 22.6) = 0.822, fraction 0.7492; the stream
 * 41,964,544 / (0.7492 x 2,039 GB/s) = 27.47 us, with kernel_launch 5 us
 * 32.47 us (the single 0.85 gave 24.21 + 5 = 29.21 us). */
START_TEST(a100_decode_gemm_on_its_curve)
{
    strata_hw *hw = strata_test_load_hw("a100", NULL);
    int sm = strata_hw_compute_index(hw, "sm");
    ck_assert_int_ge(sm, 0);
    uint64_t d[] = {1, 2560, 8192};
    strata_kernel_problem p = {.n_dims = 3, .dims = d, .dtype = STRATA_DTYPE_BF16};
    strata_kernel_cost c;
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, (uint32_t)sm, &p, &c);
    ck_assert_double_eq(c.bytes_nominal, 41964544);
    ck_assert_double_eq_tol(term(&c, "achievable stream rate"), 0.7492 * 2039e9, 0.0002 * 2039e9);
    ck_assert_double_eq_tol(fmax(c.compute_s, c.bytes / 2039e9) + c.fixed_s, 32.47e-6, 0.02e-6);
    strata_hw_free(hw);
}
END_TEST

/* Below the shipped A100 curve's first point (11.3 MiB, 0.709, wave 49) a
 * GEMM streams at that point's fraction: the 4-8 MiB point (0.749) went with
 * the rows the collector's 5 copies of the weight kept in the 40 MiB L2
 * (aiconfigurator e46d9089f collector/trtllm/collect_gemm.py l. 61-63; a
 * 4 MiB weight: 20 MiB of copies). m=1 n=4096 k=1024: bytes 2 (1024 + 1024 x
 * 4096 + 4096) = 8,398,848 B (8.01 MiB), fraction 0.709, the stream
 * 8,398,848 / (0.709 x 2,039 GB/s) = 5.810 us (bytes at the full rate
 * 11,846,048), with kernel_launch 5 us at least 10.810 us (the SM80
 * pipeline's work, gemm_pipeline_smem, comes to 5.817 us here, just above:
 * not what this checks). The old point gave 0.749 - 0.040 ln(8.01 / 5.66) /
 * ln(11.3 / 5.66) = 0.7289, a stream of 5.651 us; the table's row, 9.899
 * us, is one of the rows dropped. */
START_TEST(a100_gemm_under_its_first_point)
{
    strata_hw *hw = strata_test_load_hw("a100", NULL);
    int sm = strata_hw_compute_index(hw, "sm");
    ck_assert_int_ge(sm, 0);
    uint64_t d[] = {1, 1024, 4096};
    strata_kernel_problem p = {.n_dims = 3, .dims = d, .dtype = STRATA_DTYPE_BF16};
    strata_kernel_cost c;
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, (uint32_t)sm, &p, &c);
    ck_assert_double_eq(c.bytes_nominal, 8398848);
    ck_assert_double_eq_tol(term(&c, "achievable stream rate"), 0.709 * 2039e9, 0.0002 * 2039e9);
    ck_assert_double_eq_tol(c.bytes, 8398848 / 0.709, 1);
    ck_assert_double_eq_tol(c.bytes / 2039e9, 5.810e-6, 0.001e-6);
    ck_assert(fmax(c.compute_s, c.bytes / 2039e9) + c.fixed_s >= 10.809e-6);
    strata_hw_free(hw);
}
END_TEST

/* The shipped v5e against the measurement its matrix_efficiency comes from
 * (JAX's Pallas TPU matmul guide, XLA's bf16 jnp.matmul): 8192^3 is 64 x 64
 * weight tiles, 1024 passes of 8192 rows on each of the 4 MXUs, 8388608 +
 * 256 cycles; 4096^3 is 256 passes of 4096 rows, 1048576 + 256. Their
 * difference, 7340032 cycles of 4 x 128 x 128 x 2 flops = 962072674304
 * flops (2 x 8192^3 - 2 x 4096^3), runs at 197 TFLOP/s x 0.936: 5217.54 us,
 * within 0.1% of the guide's 6047.15 - 827.29 = 5219.86 us. */
START_TEST(v5e_gemm_slope_matches_the_guide)
{
    strata_hw *hw = strata_test_load_hw("tpu-v5e", NULL);
    int tc = strata_hw_compute_index(hw, "tensorcore");
    ck_assert_int_ge(tc, 0);
    uint64_t big[] = {8192, 8192, 8192}, mid[] = {4096, 4096, 4096};
    strata_kernel_problem pb = {.n_dims = 3, .dims = big, .dtype = STRATA_DTYPE_BF16};
    strata_kernel_problem pm = {.n_dims = 3, .dims = mid, .dtype = STRATA_DTYPE_BF16};
    strata_kernel_cost b, m;
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, (uint32_t)tc, &pb, &b);
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, (uint32_t)tc, &pm, &m);
    ck_assert_double_eq(term(&b, "matrix efficiency"), 0.936);
    ck_assert_double_eq(term(&b, "passes on the busiest array"), 1024);
    double slope = b.compute_s - m.compute_s;
    ck_assert_double_eq_tol(slope, 962072674304.0 / (197e12 * 0.936), 1e-12);
    ck_assert_double_eq_tol(slope, 5219.86e-6, 5219.86e-6 * 1e-3);
    strata_hw_free(hw);
}
END_TEST

/* Padding on the shipped v5e (issue 42's MaxText rows): a vocabulary slice
 * of 8000 columns (32000 / 4, the v5p rows' head) is not a multiple of the
 * 128-wide MXU tile. 12288 x 5120 x 8000: K is 40 tiles, N pads to 63 tiles
 * (8064 columns), 2520 passes, 630 on each of the 4 MXUs, 12288 cycles each:
 * 630 x 12288 + 256 = 7741696 cycles at 197e12 / (4 x 128 x 128 x 2) =
 * 1502990722.65625 Hz, over 0.936: 5.50306 ms. It costs exactly what the
 * padded 8064-wide product costs, 8064 / 8000 = 1.008 times the time its
 * own flops would take at the same rate; 8192 columns (64 tiles) take
 * 640 passes per MXU. */
START_TEST(v5e_gemm_pads_a_vocabulary_slice)
{
    strata_hw *hw = strata_test_load_hw("tpu-v5e", NULL);
    int tc = strata_hw_compute_index(hw, "tensorcore");
    ck_assert_int_ge(tc, 0);
    uint64_t slice[] = {12288, 5120, 8000}, padded[] = {12288, 5120, 8064}, wide[] = {12288, 5120, 8192};
    strata_kernel_problem p = {.n_dims = 3, .dims = slice, .dtype = STRATA_DTYPE_BF16};
    strata_kernel_cost c, cp, cw;
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, (uint32_t)tc, &p, &c);
    p.dims = padded;
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, (uint32_t)tc, &p, &cp);
    p.dims = wide;
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, (uint32_t)tc, &p, &cw);
    ck_assert_double_eq(term(&c, "N tiles"), 63);
    ck_assert_double_eq(term(&c, "passes on the busiest array"), 630);
    ck_assert_double_eq(term(&cw, "passes on the busiest array"), 640);
    ck_assert_double_eq_tol(c.compute_s, 7741696.0 / 1502990722.65625 / 0.936, 1e-12);
    ck_assert_double_eq_tol(c.compute_s, 5.50306e-3, 1e-8);
    ck_assert_double_eq(c.compute_s, cp.compute_s);
    ck_assert_double_eq_tol(c.compute_s / (2.0 * 12288 * 5120 * 8000 / (197e12 * 0.936)), 1.008, 1e-4);
    ck_assert_double_eq(c.flops, 2.0 * 12288 * 5120 * 8000);
    strata_hw_free(hw);
}
END_TEST

/* Smaller than one tile: one pass, no shorter than the 128 cycles of the
 * weight tile's load, plus the fill: 128 + 256 = 384 ns, the same for 8^3
 * and 100^3 (the floor); 128^3 is the same pass, 129^3 more. */
START_TEST(gemm_below_one_tile_pays_the_floor)
{
    strata_hw *hw = unit(systolic);
    uint64_t small[] = {8, 8, 8}, mid[] = {100, 100, 100}, full[] = {128, 128, 128};
    strata_kernel_cost a, b, f;
    cost(hw, "gemm", small, 3, false, &a);
    cost(hw, "gemm", mid, 3, false, &b);
    cost(hw, "gemm", full, 3, false, &f);
    ck_assert_double_eq_tol(a.compute_s, 384e-9, 1e-15);
    ck_assert_double_eq_tol(b.compute_s, 384e-9, 1e-15);
    ck_assert_double_eq_tol(f.compute_s, 384e-9, 1e-15);
    /* the op's whole time: max(384 ns, bytes / 1 TB/s) + 1 us */
    ck_assert_double_eq(a.bytes, 3 * 8 * 8 * 2);
    strata_hw_free(hw);
}
END_TEST

/* Flash forward, B = H = 1, Sq = Skv = 1024, D = 64, on a systolic unit
 * MaxText's 512 x 512 blocks: 2 x 2 = 4 block pairs. HBM bytes = (2 Sq D
 * + 2 Bc D pairs) x 2 + 4 Sq = (131072 + 262144) x 2 + 4096 = 790528;
 * causal: 1 + 2 = 3 pairs, (131072 + 196608) x 2 + 4096 = 659456. Under
 * 512 rows the block is the sequence: Sq = Skv = 256 is one pair. */
START_TEST(flash_hbm_bytes_by_block_size)
{
    strata_hw *hw = unit(systolic);
    uint64_t d[] = {1, 1, 1024, 1024, 64}, short_seq[] = {1, 1, 256, 256, 64};
    strata_kernel_cost c;
    cost(hw, "flash-attention", d, 5, false, &c);
    ck_assert_double_eq(term(&c, "block rows Br"), 512);
    ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 4);
    ck_assert_double_eq(c.bytes_nominal, 790528);
    cost(hw, "flash-attention", d, 5, true, &c);
    ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 3);
    ck_assert_double_eq(c.bytes_nominal, 659456);
    ck_assert_double_eq(c.flops, 4.0 * 1024 * 1024 * 64 / 2);
    cost(hw, "flash-attention", short_seq, 5, true, &c);
    ck_assert_double_eq(term(&c, "block rows Br"), 256);
    ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 1);
    strata_hw_free(hw);
    /* on tensor cores FlashAttention-2 takes 128 x 64 blocks at head dim 128: 2 x 4 pairs (8 heads: 32
     * CTAs of 64 rows, at least 0.8 x 2 x 4 SMs, so no split-KV) */
    hw = unit("matrix = tiles\nsms = 4\ncta_tiles = 128x128\n");
    uint64_t d128[] = {1, 8, 256, 256, 128};
    cost(hw, "flash-attention", d128, 5, false, &c);
    ck_assert_double_eq(term(&c, "block columns Bc"), 64);
    ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 8);
    strata_hw_free(hw);
}
END_TEST

/* FlashAttention-2's products at mma.sync's share of the peak (tiles
 * unit: 4 SMs of 8.192 TFLOP/s, 128 x 128 tiles). B = 1, H = 8, Sq = Skv =
 * 256, D = 128: 128 x 64 blocks, 2 x 4 = 8 pairs a head, 64 in all (32
 * CTAs of 64 rows >= 0.8 x 2 x 4: no split-KV). S = Q K^T, 128 x 128 x 64
 * each: 64 tiles of 128 x 128 (N = 64 padded to the tile), 16 waves of
 * 2 x 128^3 / 8.192e12 = 0.512 us: 8.192 us (split-K 2 adds 8.4 us of f32
 * partials). P V, 128 x 64 x 128: 16 waves of 2 x 128 x 128 x 64: 4.096
 * us. 12.288 us at mma_sync_fraction 1, 24.576 us at 0.5; a GEMM is not
 * slowed (cuBLAS issues wgmma). */
START_TEST(flash_products_at_the_mma_sync_fraction)
{
    static const char *tiles = "matrix = tiles\nsms = 4\ncta_tiles = 128x128\n";
    strata_hw *native = unit(tiles);
    char *keys = g_strconcat(tiles, "mma_sync_fraction = 0.5\n", NULL);
    strata_hw *hopper = unit(keys);
    uint64_t d[] = {1, 8, 256, 256, 128}, g[] = {256, 1024, 256};
    strata_kernel_cost c, h;
    cost(native, "flash-attention", d, 5, false, &c);
    cost(hopper, "flash-attention", d, 5, false, &h);
    ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 8);
    ck_assert_double_eq_tol(term(&c, "products on the matrix engine"), 12.288e-6, 1e-15);
    ck_assert_double_eq_tol(term(&h, "products on the matrix engine"), 24.576e-6, 1e-15);
    ck_assert_double_eq(term(&h, "mma.sync fraction of the peak"), 0.5);
    cost(native, "gemm", g, 3, false, &c);
    cost(hopper, "gemm", g, 3, false, &h);
    ck_assert_double_eq(c.compute_s, h.compute_s);
    g_free(keys);
    strata_hw_free(native);
    strata_hw_free(hopper);
}
END_TEST

static const char *head_l2 = "[hardware]\nname = t\n[memory hbm]\nkind = device\ncapacity = 16GiB\n"
                             "bandwidth = 1TB/s\n[memory l2]\nkind = onchip\ncapacity = %s\nbandwidth = 2TB/s\n"
                             "[compute mxu]\nflops = 32.768TFLOP/s\n";

static strata_hw *unit_l2(const char *l2, const char *keys)
{
    GError *err = NULL;
    char *h = g_strdup_printf(head_l2, l2);
    strata_hw *hw = strata_test_load_hw_text(h, keys, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    g_free(h);
    return hw;
}

/* FlashAttention-2's shared bytes from HBM once per turn of the resident
 * CTAs, once in all when a turn's heads fit the L2. 4 SMs of 128 KiB;
 * B = 1, H = 8, D = 128, bf16. Forward, Sq = Skv = 1024: 128 x 64 blocks,
 * a CTA's Q, K, V blocks 2 x 128 x (128 + 2 x 64) = 65536 B, 2 a SM, 8
 * resident; 8 query blocks a head, one turn: K and V once whatever the L2
 * (ceil(8 / 8) + 1 = 2 heads): 8 x (2 x 1024 x 128 x 2 + 4 x 1024) + 8 x 2
 * x 1024 x 128 x 2 = 8421376 (per pair, as without an l2: 8 x ((2 x 1024 x
 * 128 + 2 x 64 x 128 x 128) x 2 + 4096) = 37781504). Sq = Skv = 4096: 32
 * query blocks a head, 4 turns of 8; 2 heads of K and V, 2 x 2 x 4096 x
 * 128 x 2 = 4 MiB, miss a 1 MiB L2: 8 x (2 x 4096 x 128 x 2 + 4 x 4096) +
 * 4 x 8 x 2097152 = 84017152; fit a 4 MiB one: 16908288 + 16777216 =
 * 33685504. Backward, 1024: 64 x 128 blocks, one 144 KiB CTA a SM, 4
 * resident over 8 key blocks a head, 2 turns; 2 heads of Q, dO (2 x 1024
 * x 128 x 2), LSE, D (8 x 1024) and dQ's f32 accumulator (4 x 1024 x 128):
 * 2 x 1056768 B, over 1 MiB: each of the 16 query blocks' Q, dO, LSE and
 * D read twice, dQ's accumulator read and written by each of the 16 x 8
 * pairs' atomicAdds: 8 x (4 x 1024 x 128 x 2 + 32 x (2 x 64 x 128 x 2 + 8
 * x 64) + 128 x 8 x 64 x 128 + 2 x 1024 x 128 x 2 + 4 x 1024) = 88244224;
 * within 4 MiB, the query blocks once: 83984384. Head dim 256 (run_mha_fwd_hdim256): 64 x 64 blocks where an
 * SM holds 4 x 256 x (64 + 2 x 64) = 196608 B (H100, 233472), 128 x 64
 * where not (A100, 167936). */
START_TEST(flash_kv_once_when_the_heads_fit_l2)
{
    static const char *tiles = "matrix = tiles\nsms = 4\ncta_tiles = 128x128\nsmem_per_sm = 131072\n";
    uint64_t d[] = {1, 8, 1024, 1024, 128}, d4k[] = {1, 8, 4096, 4096, 128}, d256[] = {1, 8, 1024, 1024, 256};
    strata_kernel_cost c;
    strata_hw *hw = unit_l2("512KiB", tiles);
    cost(hw, "flash-attention", d, 5, false, &c);
    ck_assert_double_eq(term(&c, "(batch, head)s of the resident CTAs"), 2);
    ck_assert_double_eq(term(&c, "HBM reads of a head's shared bytes"), 1);
    ck_assert_double_eq(c.bytes_nominal, 8421376);
    strata_hw_free(hw);
    hw = unit_l2("1MiB", tiles);
    cost(hw, "flash-attention", d4k, 5, false, &c);
    ck_assert_double_eq(term(&c, "HBM reads of a head's shared bytes"), 4);
    ck_assert_double_eq(c.bytes_nominal, 84017152);
    cost(hw, "flash-attention-bwd", d, 5, false, &c);
    ck_assert_double_eq(term(&c, "their shared bytes"), 2 * 1056768);
    ck_assert_double_eq(term(&c, "HBM reads of a head's shared bytes"), 2);
    ck_assert_double_eq(c.bytes_nominal, 88244224);
    strata_hw_free(hw);
    hw = unit_l2("4MiB", tiles);
    cost(hw, "flash-attention", d4k, 5, false, &c);
    ck_assert_double_eq(term(&c, "HBM reads of a head's shared bytes"), 1);
    ck_assert_double_eq(c.bytes_nominal, 33685504);
    cost(hw, "flash-attention-bwd", d, 5, false, &c);
    ck_assert_double_eq(term(&c, "HBM reads of a head's shared bytes"), 1);
    ck_assert_double_eq(c.bytes_nominal, 83984384);
    strata_hw_free(hw);
    hw = unit("matrix = tiles\nsms = 4\ncta_tiles = 128x128\nsmem_per_sm = 131072\n");
    cost(hw, "flash-attention", d, 5, false, &c);
    ck_assert_double_eq(c.bytes_nominal, 37781504); /* no l2 memory: per block pair */
    strata_hw_free(hw);
    hw = unit("matrix = tiles\nsms = 4\ncta_tiles = 128x128\nsmem_per_sm = 233472\n");
    cost(hw, "flash-attention", d256, 5, false, &c);
    ck_assert_double_eq(term(&c, "block rows Br"), 64);
    ck_assert_double_eq(term(&c, "block columns Bc"), 64);
    ck_assert(!has_term(&c, "(batch, head)s of the resident CTAs")); /* no l2 memory */
    strata_hw_free(hw);
    hw = unit("matrix = tiles\nsms = 4\ncta_tiles = 128x128\nsmem_per_sm = 167936\n");
    cost(hw, "flash-attention", d256, 5, false, &c);
    ck_assert_double_eq(term(&c, "block rows Br"), 128);
    strata_hw_free(hw);
}
END_TEST

/* A GQA decode step (flash_api.cpp mha_fwd): B = 1, 32 query heads on 8
 * key/value heads, Sq = 1, Skv = 4096, D = 128. seqlenq_ngroups_swapped:
 * 8 heads of 4 query rows. 8 CTAs of 64 rows < 0.8 x 2 x 132 SMs, so
 * num_splits_heuristic over 32 key blocks of 128: efficiency 8 s / 264 for
 * s splits, best 256 / 264 at s = 32; 0.85 of it needs s >= 28, and 28 to
 * 31 are not eligible (2 blocks a split, as s - 1 gives): 32 splits, 64 x
 * 128 blocks, 32 pairs a head. HBM bytes 8 x ((2 x 4 x 128 + 2 x 128 x 128
 * x 32) x 2 + 4 x 4) = 16793728, and the splits' f32 outputs and LSEs
 * written and read: 8 x 32 x 4 x 129 x 4 x 2 = 1056768; the combine kernel
 * adds a launch. Causal is the same at Sq = 1. */
START_TEST(flash_gqa_decode_swapped_and_split)
{
    strata_hw *hw = unit("matrix = tiles\nsms = 132\ncta_tiles = 128x128\nkernel_launch = 1us\n");
    uint64_t d[] = {1, 32, 1, 4096, 128, 8};
    strata_kernel_cost c;
    for (int causal = 0; causal < 2; causal++) {
        cost(hw, "flash-attention", d, 6, causal, &c);
        ck_assert_double_eq(term(&c, "GQA group as query rows (seqlenq_ngroups_swapped)"), 4);
        ck_assert_double_eq(term(&c, "split-KV key splits"), 32);
        ck_assert_double_eq(term(&c, "block rows Br"), 64);
        ck_assert_double_eq(term(&c, "block columns Bc"), 128);
        ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 32);
        ck_assert_double_eq(c.bytes_nominal, 16793728 + 1056768);
        ck_assert_double_eq_tol(c.fixed_s, 2e-6, 1e-18);
    }
    strata_hw_free(hw);
}
END_TEST

/* FlashAttention-2 entered as vLLM 0.6's FLASH_ATTN backend enters it
 * (kernel.h fa2_varlen, fa2_paged; flash_api.cpp mha_varlen_fwd,
 * mha_fwd_kvcache), 132 SMs, D = 128. A prompt, B = 1, 8 heads, Sq = Skv
 * = 1024, causal: 8 x 16 = 128 CTAs of 64 rows < 0.8 x 264, so mha_fwd
 * splits it: over 8 key blocks of 128, efficiency 128 s / 264 per wave,
 * 0.97 at s = 2 (the best, 0.85 of it needs 0.82): 2 splits, 64 x 128
 * blocks and the combine kernel's launch (2 us of fixed time).
 * mha_varlen_fwd splits only a swapped group: 1 split, the regular
 * kernel's 128 x 64 blocks, one launch (1 us). Both visit 72 block pairs a
 * head (row block i of 8 sees 2 (i + 1) column blocks of 64). A paged
 * decode, B = 64, 32 query heads on 8: swapped into 8 heads of 4 rows, 512
 * CTAs >= 0.8 x 264, 1 split; with the block table the split-KV kernel
 * runs anyway (force_split_kernel): 64 x 128 blocks, 1024 / 128 = 8 pairs
 * a head (without it 128 x 64, 16 pairs), one launch. At B = 1 the
 * swapped group splits as mha_fwd's does (32, the test above). */
static void cost_vllm(const strata_hw *hw, const uint64_t *dims, bool causal, bool paged, strata_kernel_cost *c)
{
    strata_kernel_problem p = {.n_dims = 6, .dims = dims, .causal = causal, .dtype = STRATA_DTYPE_BF16,
                               .fa2_varlen = true, .fa2_paged = paged};
    strata_kernel_cost_of(strata_kernel_find("flash-attention"), hw, 0, &p, c);
}

START_TEST(flash_vllm_varlen_and_paged_entries)
{
    strata_hw *hw = unit("matrix = tiles\nsms = 132\ncta_tiles = 128x128\nkernel_launch = 1us\n");
    uint64_t prompt[] = {1, 8, 1024, 1024, 128, 8}, decode[] = {64, 32, 1, 1024, 128, 8};
    uint64_t one[] = {1, 32, 1, 4096, 128, 8};
    strata_kernel_cost c;
    cost(hw, "flash-attention", prompt, 6, true, &c);
    ck_assert_double_eq(term(&c, "split-KV key splits"), 2);
    ck_assert_double_eq(term(&c, "block rows Br"), 64);
    ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 72);
    ck_assert_double_eq_tol(c.fixed_s, 2e-6, 1e-18);
    cost_vllm(hw, prompt, true, false, &c);
    ck_assert_double_eq(term(&c, "split-KV key splits"), 1);
    ck_assert_double_eq(term(&c, "block rows Br"), 128);
    ck_assert_double_eq(term(&c, "block columns Bc"), 64);
    ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 72);
    ck_assert_double_eq_tol(c.fixed_s, 1e-6, 1e-18);
    cost_vllm(hw, decode, false, true, &c);
    ck_assert_double_eq(term(&c, "GQA group as query rows (seqlenq_ngroups_swapped)"), 4);
    ck_assert_double_eq(term(&c, "split-KV key splits"), 1);
    ck_assert_double_eq(term(&c, "block rows Br"), 64);
    ck_assert_double_eq(term(&c, "block columns Bc"), 128);
    ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 8);
    ck_assert_double_eq_tol(c.fixed_s, 1e-6, 1e-18);
    cost_vllm(hw, decode, false, false, &c);
    ck_assert_double_eq(term(&c, "block columns Bc"), 64);
    ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 16);
    cost_vllm(hw, one, false, true, &c);
    ck_assert_double_eq(term(&c, "split-KV key splits"), 32);
    strata_hw_free(hw);
}
END_TEST

/* The Pallas TPU backward, B = H = 1, Sq = Skv = 1024, D = 128, causal, on
 * the one 128 x 128 array at 1 GHz (fill 256 cycles a product call). The
 * dK/dV kernel's 512 x 512 blocks: 1 + 2 = 3 pairs; S and dP are 3 x 1 x 4
 * = 12 passes of 512 rows each (6144 + 256 cycles), dV and dK 3 x 4 x 1 =
 * 12 passes of 512 rows (6400 each): 4 x 6400. The dQ kernel's 1024 x 512
 * blocks: one query block seeing 2 key blocks, 2 pairs; S and dP 2 x 1 x 4
 * = 8 passes of 1024 rows (8192 + 256), dQ 2 x 4 x 1 = 8 passes (8448):
 * 3 x 8448. In all 25600 + 25344 = 50944 cycles: 50.944 us of products
 * (the 1835008 exponentials: 3 x 512^2 + 2 x 1024 x 512). HBM bytes: dK/dV 4 Skv D x 2 = 1048576 and per
 * pair 2 Br D x 2 + 3 x 512 Br = 1048576, 3 pairs 3145728; dQ 3 Sq D x 2 =
 * 786432, the row statistics 3 x 512 Sq = 1572864, per pair 2 Bc D x 2 =
 * 262144, 2 pairs 524288; the preprocessing 2 Sq D x 2 + 4 Sq = 528384:
 * 7606272 bytes, 7.6 us at 1 TB/s, under the compute.
 * Besides the products, the softmax (flash_attention.c's VPU_* counts; the
 * unit gives no vector rate, so VPU and EUP run at its 32.768e12): dK/dV,
 * per pair 512^2 scores x (9 + 6 causal) + 2 x 512 x 128 accumulator
 * elements = 4063232, 3 pairs 12189696; dQ, per pair 1024 x 512 x (8 + 6)
 * + 1024 x 128 = 7471104, 2 pairs 14942208; 27131904 VPU operations, over
 * the EUP's 3 x (512^2 + 512 x 128) + 2 x (1024 x 512 + 1024 x 128) =
 * 2293760: 27131904 / 32.768e12 = 828 ns. Grid steps: dK/dV 2 x 2, dQ
 * 1 x 2, 6 x 0.35 us = 2100 ns. Compute 50944 + 828 + 2100 = 53872 ns. */
START_TEST(flash_bwd_as_the_pallas_tpu_kernels)
{
    strata_hw *hw = unit(systolic);
    uint64_t d[] = {1, 1, 1024, 1024, 128};
    strata_kernel_cost c;
    cost(hw, "flash-attention-bwd", d, 5, true, &c);
    ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 3);
    ck_assert_double_eq(term(&c, "dQ kernel block rows"), 1024);
    ck_assert_double_eq(term(&c, "dQ kernel block pairs per (batch, head)"), 2);
    ck_assert_double_eq(term(&c, "exponentials"), 1835008);
    ck_assert_double_eq_tol(term(&c, "products on the matrix engine"), 50944e-9, 1e-15);
    ck_assert_double_eq(term(&c, "vector (VPU) operations"), 27131904);
    ck_assert_double_eq(term(&c, "transcendental (EUP) operations"), 2293760);
    ck_assert_double_eq_tol(term(&c, "softmax time"), 828e-9, 1e-15);
    ck_assert_double_eq(term(&c, "grid steps"), 6);
    ck_assert_double_eq_tol(c.compute_s, 53872e-9, 1e-15);
    ck_assert_double_eq(c.bytes_nominal, 7606272);
    ck_assert_double_eq(c.flops, 2.5 * 4.0 * 1024 * 1024 * 128 / 2);
    strata_hw_free(hw);
}
END_TEST

/* The Pallas TPU forward, B = H = 1, Sq = Skv = 1024, D = 128, causal,
 * on the 1 GHz array with a VPU of 4.096e12 operations a second and an
 * EUP of 1.024e12: 3 visited pairs of 512 x 512 (of 2 x 2 grid steps).
 * Products: S = Q K^T 3 x 1 x 4 = 12 passes of 512 rows (6144 + 256
 * cycles), P V 3 x 4 x 1 = 12 (6400): 12800 ns. Softmax per pair:
 * 512^2 scores x (7 + 6 causal) = 3407872, 512 rows x 128 lanes x 7 =
 * 458752 and 512 x 128 accumulator elements x 3 = 196608, 4063232 VPU
 * operations, 3 pairs 12189696 = 2976 ns; the EUP's 512^2 + 2 x 512 x
 * 128 = 393216 a pair, 1179648 = 1152 ns, under the VPU's. 4 grid steps x
 * 0.35 us = 1400 ns. Compute 12800 + 2976 + 1400 = 17176 ns. An EUP 4
 * times slower (0.256e12) takes 4608 ns, over the VPU's: 18808 ns. A step
 * costs 0.35 us (PALLAS_STEP_S) without a unit named scalar, else that
 * unit's overhead. */
START_TEST(flash_fwd_softmax_after_the_products)
{
    strata_hw *hw = unit("matrix = systolic\nside = 128\nkernel_launch = 1us\nvector_flops = 4.096TFLOP/s\n"
                         "transcendental_flops = 1.024TFLOP/s\n");
    uint64_t d[] = {1, 1, 1024, 1024, 128};
    strata_kernel_cost c;
    cost(hw, "flash-attention", d, 5, true, &c);
    ck_assert_double_eq_tol(term(&c, "products on the matrix engine"), 12800e-9, 1e-15);
    ck_assert_double_eq(term(&c, "vector (VPU) operations"), 12189696);
    ck_assert_double_eq(term(&c, "transcendental (EUP) operations"), 1179648);
    ck_assert_double_eq_tol(term(&c, "softmax time"), 2976e-9, 1e-15);
    ck_assert_double_eq(term(&c, "grid steps"), 4);
    ck_assert_double_eq_tol(c.compute_s, 17176e-9, 1e-15);
    strata_hw_free(hw);
    hw = unit("matrix = systolic\nside = 128\nkernel_launch = 1us\nvector_flops = 4.096TFLOP/s\n"
              "transcendental_flops = 0.256TFLOP/s\n");
    cost(hw, "flash-attention", d, 5, true, &c);
    ck_assert_double_eq_tol(term(&c, "softmax time"), 4608e-9, 1e-15);
    ck_assert_double_eq_tol(c.compute_s, 18808e-9, 1e-15);
    strata_hw_free(hw);
    /* A model with a scalar unit: a grid step costs its overhead, 0.7 us
     * here, so the 4 steps take 2800 ns: 12800 + 2976 + 2800 = 18576 ns. */
    hw = unit("matrix = systolic\nside = 128\nkernel_launch = 1us\nvector_flops = 4.096TFLOP/s\n"
              "transcendental_flops = 1.024TFLOP/s\n[compute scalar]\nflops = 1.5GFLOP/s\noverhead = 0.7us\n");
    cost(hw, "flash-attention", d, 5, true, &c);
    ck_assert_double_eq_tol(c.compute_s, 18576e-9, 1e-15);
    strata_hw_free(hw);
}
END_TEST

/* A sliding window (mask=window-W), B = H = 1, Sq = Skv = 2048, D = 64,
 * 512 x 512 blocks: with W = 512 query block i (rows 512i .. 512i + 511)
 * sees keys 512i - 511 .. 512i + 511, key blocks i - 1 and i: 1 + 2 + 2 + 2
 * = 7 pairs (causal 1 + 2 + 3 + 4 = 10, none 16); W = 513 the same 7;
 * W = 514 reaches key 512i - 513, block i - 2 from i = 2: 1 + 2 + 3 + 3 = 9.
 * HBM bytes (W = 512) = (2 x 2048 x 64 + 2 x 512 x 64 x 7) x 2 + 4 x 2048 =
 * 1449984. Nominal flops 4 D (S W - W^2 / 2) = 256 x (1048576 - 131072) =
 * 234881024; W >= S is the causal mask's (4 x 2048^2 x 64 / 2). */
START_TEST(flash_sliding_window_pairs_and_flops)
{
    strata_hw *hw = unit(systolic);
    uint64_t d[] = {1, 1, 2048, 2048, 64};
    strata_kernel_problem p = {.n_dims = 5, .dims = d, .causal = true, .window = 512, .dtype = STRATA_DTYPE_BF16};
    strata_kernel_cost c;
    strata_kernel_cost_of(strata_kernel_find("flash-attention"), hw, 0, &p, &c);
    ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 7);
    ck_assert_double_eq(c.bytes_nominal, 1449984);
    ck_assert_double_eq(c.flops, 234881024);
    p.window = 513;
    strata_kernel_cost_of(strata_kernel_find("flash-attention"), hw, 0, &p, &c);
    ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 7);
    p.window = 514;
    strata_kernel_cost_of(strata_kernel_find("flash-attention"), hw, 0, &p, &c);
    ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 9);
    p.window = 2048;
    strata_kernel_cost_of(strata_kernel_find("flash-attention"), hw, 0, &p, &c);
    ck_assert_double_eq(term(&c, "block pairs per (batch, head)"), 10);
    ck_assert_double_eq(c.flops, 4.0 * 2048 * 2048 * 64 / 2);
    p.window = 512;
    strata_kernel_cost_of(strata_kernel_find("flash-attention-bwd"), hw, 0, &p, &c);
    ck_assert_double_eq(c.flops, 2.5 * 234881024);
    strata_hw_free(hw);
    bool causal = false;
    uint64_t w = 0;
    ck_assert(strata_kernel_mask_parse("window-4096", &causal, &w) && causal && w == 4096);
    ck_assert(!strata_kernel_mask_parse("window-0", &causal, &w));
    ck_assert(!strata_kernel_mask_parse("window-", &causal, &w));
    ck_assert(!strata_kernel_mask_parse("window-12x", &causal, &w));
}
END_TEST

/* Tiles: 256 x 256 x 1024 on 4 SMs with 128 x 128 tiles is 4 tiles, one
 * wave; each 2 x 128 x 128 x 1024 flops at 32.768e12 / 4 per SM = 4 us
 * (a split of 2 would take 2 waves of 2 us and a reduction: slower).
 * One more row, 257 x 256 x 1024: 6 tiles, 2 waves of 4 us = 8 us without
 * a split; split-K 2 makes 12 CTAs, 3 waves of half of K (2 us each), then
 * 2 partial f32 outputs written and read back, 257 x 256 x 4 x 2 x 2 bytes
 * at 1 TB/s = 1.052672 us: 7.052672 us. Split 3 (5 waves of 342 of K,
 * 6.68 us, and 1.58 us), 4 (6 x 1 us and 2.1 us) and more are slower. */
START_TEST(gemm_tiles_and_waves)
{
    strata_hw *hw = unit("matrix = tiles\nsms = 4\ncta_tiles = 128x128\n");
    uint64_t d[] = {256, 1024, 256}, d2[] = {257, 1024, 256};
    strata_kernel_cost c;
    cost(hw, "gemm", d, 3, false, &c);
    ck_assert_double_eq(term(&c, "tiles"), 4);
    ck_assert_double_eq(term(&c, "waves over the SMs"), 1);
    ck_assert_double_eq_tol(c.compute_s, 2.0 * 128 * 128 * 1024 / (32.768e12 / 4), 1e-15);
    ck_assert_double_eq(term(&c, "split-K"), 1);
    cost(hw, "gemm", d2, 3, false, &c); /* tile quantization, then split-K across waves */
    ck_assert_double_eq(term(&c, "tiles"), 6);
    ck_assert_double_eq(term(&c, "split-K"), 2);
    ck_assert_double_eq(term(&c, "CTAs (tiles x split-K)"), 12);
    ck_assert_double_eq(term(&c, "waves over the SMs"), 3);
    ck_assert_double_eq_tol(c.compute_s, 3 * 2.0 * 128 * 128 * 512 / (32.768e12 / 4) + 257.0 * 256 * 16 / 1e12, 1e-15);
    strata_hw_free(hw);
}
END_TEST

/* split_k_reduction: the split's own reduction kernel adds its fixed time to
 * every split. The 257 x 1024 x 256 case above: split-K 2 took 7.052672 us
 * against 8 us unsplit. With 0.5 us it takes 7.552672 us, still the
 * fastest (split 3: 6.68 + 1.58 + 0.5, split 4: 6 + 2.1 + 0.5, slower);
 * with 1 us it takes 8.052672 us and the unsplit 8 us wins, no term. A
 * fused kernel's blocks (flash attention, to_memory false) pay none. */
START_TEST(gemm_split_k_pays_its_reduction_kernel)
{
    strata_hw *hw = unit("matrix = tiles\nsms = 4\ncta_tiles = 128x128\nsplit_k_reduction = 0.5us\n");
    uint64_t d2[] = {257, 1024, 256};
    strata_kernel_cost c;
    cost(hw, "gemm", d2, 3, false, &c);
    ck_assert_double_eq(term(&c, "split-K"), 2);
    ck_assert_double_eq_tol(term(&c, "split-K reduction kernel (fixed)"), 0.5e-6, 1e-18);
    ck_assert_double_eq_tol(c.compute_s, 3 * 2.0 * 128 * 128 * 512 / (32.768e12 / 4) + 257.0 * 256 * 16 / 1e12 + 0.5e-6,
                            1e-15);
    strata_hw_free(hw);
    hw = unit("matrix = tiles\nsms = 4\ncta_tiles = 128x128\nsplit_k_reduction = 1us\n");
    cost(hw, "gemm", d2, 3, false, &c);
    ck_assert_double_eq(term(&c, "split-K"), 1);
    ck_assert(!has_term(&c, "split-K reduction kernel (fixed)"));
    ck_assert_double_eq_tol(c.compute_s, 2 * 2.0 * 128 * 128 * 1024 / (32.768e12 / 4), 1e-15);
    strata_hw_free(hw);
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\nsplit_k_reduction = 1us\n",
                                "only with matrix = tiles");
}
END_TEST

/* A unit without matrix = keeps the roofline: the op's own flops and bytes. */
START_TEST(no_matrix_engine_keeps_the_roofline)
{
    strata_hw *hw = unit("");
    uint64_t d[] = {129, 129, 129};
    strata_kernel_problem p = {.n_dims = 3, .dims = d, .has_flops = true, .flops = 1e9, .has_bytes = true,
                               .bytes = 4096};
    strata_kernel_cost c;
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, 0, &p, &c);
    ck_assert_double_eq_tol(c.compute_s, 1e9 / 32.768e12, 1e-18);
    ck_assert_double_eq(c.bytes, 4096);
    ck_assert_double_eq(c.fixed_s, 0);
    strata_hw_free(hw);
}
END_TEST

/* The kernel table, row by row, in its order: each row found by its name,
 * with its hooks, and the list the binder's error message quotes. A new
 * kernel adds its row here (docs/extending.md, "A kernel cost model"). */
START_TEST(kernel_table_lists_every_row)
{
    static const char *const rows[] = {"gemm", "grouped-gemm", "flash-attention", "flash-attention-bwd",
                                       "elementwise", "transcendental"};
    uint32_t n = 0;
    for (const strata_kernel_model *k; (k = strata_kernel_at(n)) != NULL; n++) {
        ck_assert_uint_lt(n, G_N_ELEMENTS(rows));
        ck_assert_str_eq(k->name, rows[n]);
        ck_assert_ptr_eq(strata_kernel_find(rows[n]), k);
        ck_assert_msg(k->cost && k->nominal && k->summary && k->dims_help, "row %s lacks a hook or text", k->name);
        ck_assert_uint_ge(k->min_dims, 1);
        ck_assert_uint_le(k->min_dims, k->max_dims);
    }
    ck_assert_uint_eq(n, G_N_ELEMENTS(rows));
    char *names = strata_kernel_names();
    ck_assert_str_eq(names, "gemm, grouped-gemm, flash-attention, flash-attention-bwd, elementwise, transcendental");
    g_free(names);
    ck_assert_ptr_null(strata_kernel_find("conv"));
    ck_assert_ptr_null(strata_kernel_find(NULL));
}
END_TEST

START_TEST(bad_kernel_keys_refused)
{
    strata_test_hw_text_refused(head, "sms = 4\n", "expected it only with matrix");
    strata_test_hw_text_refused(head, "matrix = systolic\n", "side");
    strata_test_hw_text_refused(head, "matrix = tiles\nsms = 4\n", "cta_tiles");
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\nstream_efficiency = 1.5\n", "fraction");
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\ngemm_stream_efficiency = 0\n", "fraction");
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\ngemm_stream_curve = 64MiB:0.8,16MiB:0.6\n",
                                "sizes rising");
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\ngemm_stream_curve = 16MiB:1.5\n",
                                "gemm_stream_curve");
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\ngemm_stream_curve = 16MiB\n",
                                "SIZE:FRACTION");
    strata_test_hw_text_refused(head, "matrix = magic\n", "systolic or tiles");
    strata_test_hw_text_refused(head, "matrix = tiles\nsms = 4\ncta_tiles = 128x128\nmma_sync_fraction = 0\n",
                                "fraction");
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\nmma_sync_fraction = 0.5\n",
                                "expected it only with matrix = tiles");
    strata_test_hw_text_refused(head, "matrix = tiles\nsms = 4\ncta_tiles = 128x128\nsmem_per_sm = 16777217\n",
                                "smem_per_sm");
}
END_TEST

/* The sustained clock (hw.h strata_hw_run_at_sustained_clock): the 129^3
 * GEMM of gemm_129_pads_to_two_tiles_per_dimension quoted at 1 GHz and held
 * at 800 MHz runs its 800 cycles at 800 MHz: 1000 ns; the peak and the
 * vector rate fall by 0.8, HBM and the launch do not; a second call
 * changes nothing. */
START_TEST(sustained_clock_scales_the_compute_rates)
{
    strata_hw *hw = unit("matrix = systolic\nside = 128\nkernel_launch = 1us\nvector_flops = 10TFLOP/s\n"
                         "peak_clock = 1GHz\nsustained_clock = 800MHz\n");
    const strata_compute_spec *u = strata_hw_compute(hw, 0);
    ck_assert_double_eq(u->kernel.peak_clock, 1e9);
    ck_assert_double_eq(u->kernel.sustained_clock, 800e6);
    uint64_t d[] = {129, 129, 129};
    strata_kernel_cost c;
    cost(hw, "gemm", d, 3, false, &c);
    ck_assert_double_eq_tol(c.compute_s, 800e-9, 1e-15); /* loaded at the peak's clock */
    ck_assert_double_eq_tol(strata_hw_compute_clock_ratio(hw, 0), 0.8, 1e-15); /* said, not applied */
    ck_assert_double_eq(u->flops, 32.768e12);
    ck_assert_double_eq_tol(strata_hw_run_at_sustained_clock(hw), 0.8, 1e-15);
    ck_assert_double_eq(strata_hw_compute_clock_ratio(hw, 0), 1.0); /* applied: the unit now runs at it */
    ck_assert_double_eq_tol(u->flops, 32.768e12 * 0.8, 1);
    ck_assert_double_eq_tol(u->kernel.vector_flops, 8e12, 1);
    cost(hw, "gemm", d, 3, false, &c);
    ck_assert_double_eq_tol(c.compute_s, 1000e-9, 1e-15);
    ck_assert_double_eq_tol(c.fixed_s, 1e-6, 1e-15);
    ck_assert_double_eq(strata_hw_run_at_sustained_clock(hw), 1.0);
    ck_assert_double_eq_tol(u->flops, 32.768e12 * 0.8, 1);
    strata_hw_free(hw);
    /* none undoes a base file's (a B200 file over the H100 one) */
    hw = unit("matrix = systolic\nside = 128\npeak_clock = none\nsustained_clock = none\n");
    ck_assert_double_eq(strata_hw_compute(hw, 0)->kernel.peak_clock, 0);
    ck_assert_double_eq(strata_hw_run_at_sustained_clock(hw), 1.0);
    strata_hw_free(hw);
    /* no sustained_clock: nothing changes */
    hw = unit("matrix = systolic\nside = 128\npeak_clock = 1830MHz\n");
    ck_assert_double_eq(strata_hw_run_at_sustained_clock(hw), 1.0);
    ck_assert_double_eq(strata_hw_compute(hw, 0)->flops, 32.768e12);
    strata_hw_free(hw);
}
END_TEST

START_TEST(bad_clocks_refused)
{
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\nsustained_clock = 1GHz\n", "peak_clock");
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\npeak_clock = 1GHz\nsustained_clock = 2GHz\n",
                                "at most peak_clock");
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\npeak_clock = 1830\n", "1830MHz");
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\npeak_clock = 5kHz\n", "1MHz to 100GHz");
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\npeak_clock = -1GHz\n", "peak_clock");
}
END_TEST

static void refused(const char *line, const char *wanted)
{
    char *text = g_strconcat("strata-trace 1\n", line, "\n", NULL);
    char *trace = strata_test_write_temp("kernel-XXXXXX.trace", text);
    char *hw = strata_test_source_path("configs/hw/h100.ini");
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, wanted) && strstr(r.err, ":2:"), "%s lacks '%s'", r.err, wanted);
    strata_cli_result_clear(&r);
    g_free(hw);
    g_free(trace);
    g_free(text);
}

START_TEST(bad_kernel_ops_refused_at_their_line)
{
    refused("compute x kernel=conv dims=1x2x3", "unknown kernel 'conv' (kernels: gemm, grouped-gemm, flash-attention");
    refused("compute x kernel=gemm dims=4x4", "expected dims=MxKxN or BxMxKxN for kernel=gemm, got 2 extents");
    refused("compute x kernel=gemm dims=4x4x4 mask=causal", "expected no mask=");
    refused("compute x kernel=flash-attention dims=1x1x8x8x8 mask=sliding", "expected mask=causal");
    refused("compute x kernel=flash-attention dims=1x1x8x8x8 mask=window-0", "mask=window-W");
    refused("compute x dims=4x4x4", "expected kernel=NAME with dims=");
}
END_TEST

/* The tiled unit of the dtype tests: 4 SMs, one 128 x 128 CTA tile, bf16 at
 * the head's 32.768 TFLOP/s and f8 at twice it, plus keys. */
static strata_hw *tiled(const char *keys)
{
    char *all = g_strconcat("matrix = tiles\nsms = 4\ncta_tiles = 128x128\nflops.f8 = 65.536TFLOP/s\n", keys, NULL);
    strata_hw *hw = unit(all);
    g_free(all);
    return hw;
}

static void gemm(const strata_hw *hw, strata_dtype dtype, strata_kernel_cost *c)
{
    static const uint64_t d[] = {256, 1024, 256};
    strata_kernel_problem p = {.n_dims = 3, .dims = d, .dtype = dtype};
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, 0, &p, c);
}

/* bf16 256 x 1024 x 256: 4 tiles in one wave, each 2 x 128 x 128 x 1024 =
 * 33,554,432 flops at a quarter of 32.768 TFLOP/s: 4.096 us (split 2: two
 * waves of 2.048 us plus 256 x 256 x 4 x 2 x 2 B = 1.048576 us, slower).
 * Not listed in exposed_epilogue: no output term. HBM bytes: (256 x 1024 +
 * 1024 x 256 + 256 x 256) x 2 = 1,179,648. */
START_TEST(bf16_gemm_mainloop_alone)
{
    strata_hw *hw = tiled("exposed_epilogue = f8\n");
    strata_kernel_cost c;
    gemm(hw, STRATA_DTYPE_BF16, &c);
    ck_assert_double_eq(term(&c, "split-K"), 1);
    ck_assert_double_eq(term(&c, "waves over the SMs"), 1);
    ck_assert_double_eq_tol(c.compute_s, 4.096e-6, 1e-15);
    ck_assert_msg(!has_term(&c, "exposed epilogue (output write)"), "bf16 has no exposed epilogue");
    ck_assert_double_eq(c.bytes_nominal, 1179648);
    strata_hw_free(hw);
}
END_TEST

/* f8, the same shape: the mainloop at twice the rate, 2.048 us, then the
 * output, 256 x 256 in bf16 = 131,072 B at 1 TB/s = 0.131072 us: 2.179072
 * us (split 2: 2 x 1.024 + 1.048576 = 3.096576 us, slower). HBM bytes: A
 * and B in one byte, C in two: 524,288 + 131,072 = 655,360. Without the
 * dtype listed (none), the mainloop alone: 2.048 us. */
START_TEST(f8_gemm_adds_its_output_write)
{
    strata_hw *hw = tiled("exposed_epilogue = f8\n");
    strata_kernel_cost c;
    gemm(hw, STRATA_DTYPE_F8, &c);
    ck_assert_double_eq(term(&c, "split-K"), 1);
    ck_assert_double_eq_tol(term(&c, "exposed epilogue (output write)"), 0.131072e-6, 1e-15);
    ck_assert_double_eq_tol(c.compute_s, 2.179072e-6, 1e-15);
    ck_assert_double_eq(c.bytes_nominal, 655360);
    strata_hw_free(hw);
    hw = tiled("exposed_epilogue = none\n");
    gemm(hw, STRATA_DTYPE_F8, &c);
    ck_assert_double_eq_tol(c.compute_s, 2.048e-6, 1e-15);
    strata_hw_free(hw);
}
END_TEST

/* The K loop overlaps the operand stream only through its pipeline stages
 * (matrix.c): the bf16 256 x 1024 x 256 above, its mainloop 4.096 us, its
 * 1,179,648 HBM bytes at 1 TB/s 1.179648 us: q = 1.179648 / 4.096 = 0.288.
 * A 128 x 128 stage of 128-byte k-blocks is 256 x 128 = 32,768 B plus 16 B
 * of barriers, 32,784: 65,568 B hold 2 stages, and the pair takes 4.096 x
 * (1 - 0.288^3) / (1 - 0.288^2) = 4.096 x 0.976112128 / 0.917056 =
 * 4.3597722 us; 65,567 B hold 1, no overlap: 4.096 + 1.179648 = 5.275648
 * us (split 2, 5.144576 us alone, is slower either way). */
START_TEST(gemm_k_loop_overlaps_through_its_stages)
{
    strata_hw *hw = tiled("gemm_pipeline_smem = 65568\ngemm_k_tile_bytes = 128\n");
    strata_kernel_cost c;
    gemm(hw, STRATA_DTYPE_BF16, &c);
    ck_assert_double_eq(term(&c, "split-K"), 1);
    ck_assert_double_eq(term(&c, "pipeline stages (k-blocks in shared memory)"), 2);
    ck_assert_double_eq_tol(term(&c, "operand stream the stages overlap"), 1.179648e-6, 1e-15);
    ck_assert_double_eq_tol(c.compute_s, 4.3597722e-6, 1e-13);
    strata_hw_free(hw);
    hw = tiled("gemm_pipeline_smem = 65567\ngemm_k_tile_bytes = 128\n");
    gemm(hw, STRATA_DTYPE_BF16, &c);
    ck_assert_double_eq(term(&c, "pipeline stages (k-blocks in shared memory)"), 1);
    ck_assert_double_eq_tol(c.compute_s, 5.275648e-6, 1e-15);
    strata_hw_free(hw);
}
END_TEST

/* The shipped H100 on Llama 3.3 70B's TP2 gate/up shape in FP8 at a
 * 256-request decode, 256 x 8192 x 16384 (validation/kernels.ini's table,
 * TensorRT-LLM's Linear): 128 x 128 tiles, 2 x 128 = 256 in 2 waves of
 * 2 x 128 x 128 x 8192 / (1979 TFLOP/s x 0.803 / 132 = 12.0389 TFLOP/s) =
 * 22.2973 us, plus the bf16 output, 8,388,608 B at 3.35 TB/s x 0.9:
 * 2.7823 us; 47.3769 us in all. HBM: 2,097,152 + 134,217,728 + 8,388,608
 * = 144,703,488 B at 3.35 TB/s x h100.ini's gemm_stream_curve there (wave
 * 49): between 90.5 MiB (94,896,128 B) at 0.804 and 181 MiB at 0.828,
 * log(144,703,488 / 94,896,128) / log 2 = 0.60868 of the way, 0.81861:
 * 52.7665 us; q = 47.3769 / 52.7665 = 0.89786. 216,064 B hold 6 stages of
 * 32,784 B: 52.7665 x (1 - q^7) / (1 - q^6) = 58.697 us (the max alone:
 * 52.767). */
START_TEST(h100_f8_gemm_near_the_ridge)
{
    strata_hw *hw = strata_test_load_hw("h100", NULL);
    int sm = strata_hw_compute_index(hw, "sm");
    ck_assert_int_ge(sm, 0);
    static const uint64_t d[] = {256, 8192, 16384};
    strata_kernel_problem p = {.n_dims = 3, .dims = d, .dtype = STRATA_DTYPE_F8};
    strata_kernel_cost c;
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, (uint32_t)sm, &p, &c);
    ck_assert_double_eq(term(&c, "CTA tile M"), 128);
    ck_assert_double_eq(term(&c, "CTA tile N"), 128);
    ck_assert_double_eq(term(&c, "split-K"), 1);
    ck_assert_double_eq(term(&c, "tiles"), 256);
    ck_assert_double_eq(term(&c, "waves over the SMs"), 2);
    ck_assert_double_eq(term(&c, "pipeline stages (k-blocks in shared memory)"), 6);
    ck_assert_double_eq_tol(term(&c, "operand stream the stages overlap"), 52.7665e-6, 1e-10);
    ck_assert_double_eq_tol(c.compute_s, 58.697e-6, 1e-9);
    strata_hw_free(hw);
}
END_TEST

START_TEST(mi300x_f8_decode_gemm_at_the_library_rate)
{
    /* mi300x.ini (issue 45, wave 25): Llama-3-70B TP8's gate/up at one
     * row, 1 x 8192 x 7168 FP8: A 8,192 + B 58,720,256 + C (bf16)
     * 14,336 = 58,742,784 bytes at gemm_stream_efficiency 0.55 of 5.3 TB/s
     * (2.915 TB/s): 20.1519 us; kernel_launch 1.9 us after it; the
     * products (2 x 8192 x 7168 flops, one row padded to a 16-row tile) far
     * below that at 0.514 of 2614.9 TFLOP/s. */
    strata_hw *hw = strata_test_load_hw("mi300x", NULL);
    int cu = strata_hw_compute_index(hw, "cu");
    ck_assert_int_ge(cu, 0);
    static const uint64_t d[] = {1, 8192, 7168};
    strata_kernel_problem p = {.n_dims = 3, .dims = d, .dtype = STRATA_DTYPE_F8};
    strata_kernel_cost c;
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, (uint32_t)cu, &p, &c);
    ck_assert_double_eq(c.bytes_nominal, 58742784.0);
    ck_assert_double_eq_tol(term(&c, "achievable stream rate"), 2.915e12, 1e3);
    ck_assert_double_eq_tol(term(&c, "memory time"), 20.1519e-6, 1e-10);
    ck_assert_double_eq_tol(c.fixed_s, 1.9e-6, 1e-12);
    ck_assert(c.compute_s < 20.1519e-6);
    strata_hw_free(hw);
}
END_TEST

START_TEST(bad_pipeline_keys_refused)
{
    static const char *tiles = "matrix = tiles\nsms = 4\ncta_tiles = 128x128\n";
    char *alone = g_strconcat(tiles, "gemm_pipeline_smem = 65568\n", NULL);
    char *small = g_strconcat(tiles, "gemm_pipeline_smem = 32783\ngemm_k_tile_bytes = 128\n", NULL);
    strata_test_hw_text_refused(head, alone, "expected gemm_k_tile_bytes with it");
    strata_test_hw_text_refused(head, small, "expected at least one stage of CTA tile 128x128 (32784 bytes)");
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\ngemm_pipeline_smem = 65568\n",
                                "only with matrix = tiles");
    g_free(alone);
    g_free(small);
}
END_TEST

static void grouped(const strata_hw *hw, const char *kernel, strata_dtype dtype, const uint64_t *d,
                    strata_kernel_cost *c)
{
    strata_kernel_problem p = {.n_dims = 4, .dims = d, .dtype = dtype};
    strata_kernel_cost_of(strata_kernel_find(kernel), hw, 0, &p, c);
}

/* A grouped GEMM (TensorRT-LLM's SM90 MoE kernels: grouped_cta_tiles,
 * 128-byte k-blocks, no split-K) on the tiled unit with the grouped tile
 * 128 x 64 (per SM: f8 65.536 / 4 = 16.384 TFLOP/s, bf16 8.192):
 *   f8 2 x 128 x 192 x 128: 2 x 1 x 2 = 4 tiles, one wave; K = 192 runs
 *   two 128-element k-blocks, 256: 2 x 128 x 64 x 256 / 16.384e12 =
 *   0.256 us (K exact would give 0.192 us);
 *   bf16, the same: 64-element blocks hold 192 exactly:
 *   2 x 128 x 64 x 192 / 8.192e12 = 0.384 us;
 *   f8 1 x 128 x 4096 x 128: 2 tiles, no split: 2 x 128 x 64 x 4096 /
 *   16.384e12 = 4.096 us, where kernel=gemm (128 x 128, split-K 4: four
 *   CTAs of 1,024 of K, 2.048 us, and 4 f32 partials of 128 x 128 written
 *   and read back at 1 TB/s, 0.524288 us) takes 2.572288 us;
 *   without the grouped keys: the unit's 128 x 128 tile, still no split:
 *   2 x 128 x 128 x 4096 / 16.384e12 = 8.192 us. */
START_TEST(grouped_gemm_k_blocks_and_no_split)
{
    strata_hw *hw = tiled("grouped_cta_tiles = 128x64\ngrouped_k_tile_bytes = 128\n");
    static const uint64_t d[] = {2, 128, 192, 128}, deep[] = {1, 128, 4096, 128};
    strata_kernel_cost c;
    grouped(hw, "grouped-gemm", STRATA_DTYPE_F8, d, &c);
    ck_assert_double_eq(term(&c, "tiles"), 4);
    ck_assert_double_eq(term(&c, "CTA tile N"), 64);
    ck_assert_double_eq(term(&c, "K in whole k-blocks (mainloop)"), 256);
    ck_assert_double_eq_tol(c.compute_s, 0.256e-6, 1e-15);
    grouped(hw, "grouped-gemm", STRATA_DTYPE_BF16, d, &c);
    ck_assert_double_eq(term(&c, "K in whole k-blocks (mainloop)"), 192);
    ck_assert_double_eq_tol(c.compute_s, 0.384e-6, 1e-15);
    grouped(hw, "grouped-gemm", STRATA_DTYPE_F8, deep, &c);
    ck_assert_double_eq(term(&c, "split-K"), 1);
    ck_assert_double_eq_tol(c.compute_s, 4.096e-6, 1e-15);
    grouped(hw, "gemm", STRATA_DTYPE_F8, deep, &c);
    ck_assert_double_eq(term(&c, "split-K"), 4);
    ck_assert_double_eq_tol(c.compute_s, 2.572288e-6, 1e-15);
    strata_hw_free(hw);
    hw = tiled("");
    grouped(hw, "grouped-gemm", STRATA_DTYPE_F8, deep, &c);
    ck_assert_double_eq(term(&c, "split-K"), 1);
    ck_assert_msg(!has_term(&c, "K in whole k-blocks (mainloop)"), "no k-block without grouped_k_tile_bytes");
    ck_assert_double_eq_tol(c.compute_s, 8.192e-6, 1e-15);
    strata_hw_free(hw);
}
END_TEST

/* TensorRT-LLM's grouped GEMM runs each expert transposed (moe_kernels.cu:
 * problem shape (gemm_n, gemm_m, gemm_k), "#tokens as the N dimension"), so
 * a grouped tile 128 x 16 is 128 of the weights' n by 16 rows; and each
 * group a CTA starts costs it grouped_group_switch (here 1 us). 4 SMs, f8
 * at 16.384 TFLOP/s an SM; one 128 x 16 tile over K = 128:
 * 2 x 128 x 16 x 128 / 16.384e12 = 0.032 us.
 *   3 x 16 x 128 x 256: 2 tiles an expert (256 / 128, 16 / 16), 6 tiles;
 *   CTA 0 runs tiles 0 and 4 (grid 4), of experts 0 and 2: 2 waves, 2
 *   groups started: 2 x 0.032 + 2 x 1 = 2.064 us. (Untransposed, 128 rows
 *   x 16 of n, it would be 16 tiles an expert, 12 waves.)
 *   2 x 16 x 128 x 1024: 8 tiles an expert, 16 tiles; CTA 0 runs tiles 0,
 *   4 (expert 0), 8, 12 (expert 1): 4 waves, 2 groups started:
 *   4 x 0.032 + 2 x 1 = 2.128 us. */
START_TEST(grouped_gemm_transposed_and_groups_started)
{
    strata_hw *hw = tiled("grouped_cta_tiles = 128x16\ngrouped_k_tile_bytes = 128\ngrouped_group_switch = 1us\n");
    static const uint64_t three[] = {3, 16, 128, 256}, two[] = {2, 16, 128, 1024};
    strata_kernel_cost c;
    grouped(hw, "grouped-gemm", STRATA_DTYPE_F8, three, &c);
    ck_assert_double_eq(term(&c, "tiles"), 6);
    ck_assert_double_eq(term(&c, "waves over the SMs"), 2);
    ck_assert_double_eq(term(&c, "groups the busiest CTA starts"), 2);
    ck_assert_double_eq_tol(c.compute_s, 2.064e-6, 1e-15);
    grouped(hw, "grouped-gemm", STRATA_DTYPE_F8, two, &c);
    ck_assert_double_eq(term(&c, "tiles"), 16);
    ck_assert_double_eq(term(&c, "waves over the SMs"), 4);
    ck_assert_double_eq(term(&c, "groups the busiest CTA starts"), 2);
    ck_assert_double_eq_tol(c.compute_s, 2.128e-6, 1e-15);
    strata_hw_free(hw);
    hw = tiled("grouped_cta_tiles = 128x16\n");
    grouped(hw, "grouped-gemm", STRATA_DTYPE_F8, three, &c);
    ck_assert_msg(!has_term(&c, "groups the busiest CTA starts"), "no switch cost without grouped_group_switch");
    ck_assert_double_eq_tol(c.compute_s, 0.064e-6, 1e-15);
    strata_hw_free(hw);
}
END_TEST

/* Block-scaled FP8 (4 SMs, 65.536 TFLOP/s f8: 16.384 TFLOP/s an SM; CUDA
 * cores 2.048 TFLOP/s: 0.512 an SM). gemm f8 256 x 1024 x 256: 4 tiles of
 * 128 x 128, one wave, MMAs 2 x 128 x 128 x 1024 / 16.384T = 2.048 us (the
 * per-tensor kernel's best too: split 2 adds 1.048576 us of partials);
 * block-scaled adds 8 k-blocks x 2 x 128 x 128 FFMA flops / 0.512T = 0.512
 * us: 2.56 us. Bytes: (256 x 1024 + 1024 x 256) x 1 + 256 x 256 x 2 =
 * 655,360, plus 4 x (256 x 8 + 2 x 8) = 8,256 of scales. K = 200 runs two
 * 128-blocks: 0.512 + 2 x 0.064 = 0.640 us, scales 4 x (256 x 2 + 2 x 2).
 * Grouped 3 x 16 x 128 x 256 (the test above, 2.064 us with its 1 us
 * switch): one descriptor for all groups, no switch; 2 waves x (0.032 us
 * MMAs + 1 k-block x 2 x 128 x 16 / 0.512T = 0.008 us) = 0.080 us. */
START_TEST(block_scaled_gemm_promotes_each_k_block)
{
    strata_hw *hw = tiled("vector_flops = 2.048TFLOP/s\ngrouped_cta_tiles = 128x16\ngrouped_k_tile_bytes = 128\n"
                          "grouped_group_switch = 1us\n");
    static const uint64_t d[] = {256, 1024, 256}, short_k[] = {256, 200, 256}, three[] = {3, 16, 128, 256};
    strata_kernel_cost c;
    strata_kernel_problem p = {.n_dims = 3, .dims = d, .dtype = STRATA_DTYPE_F8};
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, 0, &p, &c);
    ck_assert_double_eq_tol(c.compute_s, 2.048e-6, 1e-15);
    ck_assert_double_eq(c.bytes_nominal, 655360);
    p.block_scaled = true;
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, 0, &p, &c);
    ck_assert_double_eq(term(&c, "block-scaled k-blocks a tile promotes"), 8);
    ck_assert_double_eq_tol(term(&c, "block-scale promotion (serial with the MMAs)"), 0.512e-6, 1e-15);
    ck_assert_double_eq_tol(c.compute_s, 2.56e-6, 1e-15);
    ck_assert_double_eq(c.bytes_nominal, 655360 + 8256);
    p.dims = short_k;
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, 0, &p, &c);
    ck_assert_double_eq(term(&c, "K in whole k-blocks (mainloop)"), 256);
    ck_assert_double_eq_tol(c.compute_s, 0.640e-6, 1e-15);
    ck_assert_double_eq(c.bytes_nominal, (256 * 200 + 200 * 256) + 256 * 256 * 2 + 4 * (256 * 2 + 2 * 2));
    p.dtype = STRATA_DTYPE_BF16; /* 16-bit operands are never block-scaled */
    strata_kernel_cost_of(strata_kernel_find("gemm"), hw, 0, &p, &c);
    ck_assert_msg(!has_term(&c, "block-scale promotion (serial with the MMAs)"), "bf16 has no promotion");
    strata_kernel_problem g = {.n_dims = 4, .dims = three, .dtype = STRATA_DTYPE_F8, .block_scaled = true};
    strata_kernel_cost_of(strata_kernel_find("grouped-gemm"), hw, 0, &g, &c);
    ck_assert_msg(!has_term(&c, "groups the busiest CTA starts"), "no descriptor switch when block-scaled");
    ck_assert_double_eq_tol(c.compute_s, 0.080e-6, 1e-15);
    strata_hw_free(hw);
}
END_TEST

START_TEST(bad_grouped_keys_refused)
{
    static const char *tiles = "matrix = tiles\nsms = 4\ncta_tiles = 128x128\n";
    char *bad_tile = g_strconcat(tiles, "grouped_cta_tiles = 128\n", NULL);
    char *bad_k = g_strconcat(tiles, "grouped_k_tile_bytes = 0\n", NULL);
    strata_test_hw_text_refused(head, bad_tile, "up to 16 tiles MxN");
    strata_test_hw_text_refused(head, bad_k, "grouped_k_tile_bytes");
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\ngrouped_k_tile_bytes = 128\n",
                                "only with matrix = tiles");
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\ngrouped_group_switch = 1us\n",
                                "only with matrix = tiles");
    g_free(bad_tile);
    g_free(bad_k);
}
END_TEST

START_TEST(bad_exposed_epilogue_refused)
{
    static const char *tiles = "matrix = tiles\nsms = 4\ncta_tiles = 128x128\n";
    char *bad = g_strconcat(tiles, "exposed_epilogue = f9\n", NULL);
    char *empty = g_strconcat(tiles, "exposed_epilogue =\n", NULL);
    strata_test_hw_text_refused(head, bad, "a list of dtypes");
    strata_test_hw_text_refused(head, empty, "a list of dtypes");
    strata_test_hw_text_refused(head, "matrix = systolic\nside = 128\nexposed_epilogue = f8\n",
                                "only with matrix = tiles");
    g_free(bad);
    g_free(empty);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kernel");
    TCase *tc = tcase_create("kernel");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, gemm_129_pads_to_two_tiles_per_dimension);
    tcase_add_test(tc, gemm_below_one_tile_pays_the_floor);
    tcase_add_test(tc, gemm_at_matrix_efficiency);
    tcase_add_test(tc, sustained_clock_scales_the_compute_rates);
    tcase_add_test(tc, bad_clocks_refused);
    tcase_add_test(tc, gemm_streams_at_its_own_efficiency);
    tcase_add_test(tc, gemm_streams_by_its_size_on_the_curve);
    tcase_add_test(tc, a100_decode_gemm_on_its_curve);
    tcase_add_test(tc, a100_gemm_under_its_first_point);
    tcase_add_test(tc, v5e_gemm_slope_matches_the_guide);
    tcase_add_test(tc, v5e_gemm_pads_a_vocabulary_slice);
    tcase_add_test(tc, flash_hbm_bytes_by_block_size);
    tcase_add_test(tc, flash_products_at_the_mma_sync_fraction);
    tcase_add_test(tc, flash_kv_once_when_the_heads_fit_l2);
    tcase_add_test(tc, flash_gqa_decode_swapped_and_split);
    tcase_add_test(tc, flash_vllm_varlen_and_paged_entries);
    tcase_add_test(tc, flash_bwd_as_the_pallas_tpu_kernels);
    tcase_add_test(tc, flash_fwd_softmax_after_the_products);
    tcase_add_test(tc, flash_sliding_window_pairs_and_flops);
    tcase_add_test(tc, gemm_tiles_and_waves);
    tcase_add_test(tc, mi300x_f8_decode_gemm_at_the_library_rate);
    tcase_add_test(tc, gemm_split_k_pays_its_reduction_kernel);
    tcase_add_test(tc, no_matrix_engine_keeps_the_roofline);
    tcase_add_test(tc, kernel_table_lists_every_row);
    tcase_add_test(tc, bad_kernel_keys_refused);
    tcase_add_test(tc, bad_kernel_ops_refused_at_their_line);
    tcase_add_test(tc, bf16_gemm_mainloop_alone);
    tcase_add_test(tc, f8_gemm_adds_its_output_write);
    tcase_add_test(tc, gemm_k_loop_overlaps_through_its_stages);
    tcase_add_test(tc, h100_f8_gemm_near_the_ridge);
    tcase_add_test(tc, bad_pipeline_keys_refused);
    tcase_add_test(tc, bad_exposed_epilogue_refused);
    tcase_add_test(tc, grouped_gemm_k_blocks_and_no_split);
    tcase_add_test(tc, grouped_gemm_transposed_and_groups_started);
    tcase_add_test(tc, bad_grouped_keys_refused);
    tcase_add_test(tc, block_scaled_gemm_promotes_each_k_block);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
