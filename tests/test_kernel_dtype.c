/* test_kernel_dtype.c: the GEMM kernel model per dtype (models/kernel/
 * matrix.c, gemm.c) on a made-up tiled unit whose figures make the hand
 * arithmetic short: 4 SMs, one 128 x 128 CTA tile, bf16 peak 32.768
 * TFLOP/s and f8 peak twice that, HBM 1 TB/s streamed whole, no launch
 * cost; `exposed_epilogue = f8` (an FP8 tile's output written after its
 * mainloop, hw key of docs/hardware.md "Kernels"). */
#include <string.h>
#include "testutil.h"
#include "hw/hw.h"
#include "kernel/kernel.h"

static const char *head = "[hardware]\nname = t\n[memory hbm]\nkind = device\ncapacity = 16GiB\nbandwidth = 1TB/s\n"
                          "[compute sm]\nflops = 32.768TFLOP/s\nflops.bf16 = 32.768TFLOP/s\n"
                          "flops.f8 = 65.536TFLOP/s\nmatrix = tiles\nsms = 4\ncta_tiles = 128x128\n";

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
    strata_hw *hw = unit("exposed_epilogue = f8\n");
    strata_kernel_cost c;
    gemm(hw, STRATA_DTYPE_BF16, &c);
    ck_assert_double_eq(term(&c, "split-K"), 1);
    ck_assert_double_eq(term(&c, "waves over the SMs"), 1);
    ck_assert_double_eq_tol(c.compute_s, 4.096e-6, 1e-15);
    ck_assert_msg(!has_term(&c, "exposed epilogue (output at the stream rate)"), "bf16 has no exposed epilogue");
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
    strata_hw *hw = unit("exposed_epilogue = f8\n");
    strata_kernel_cost c;
    gemm(hw, STRATA_DTYPE_F8, &c);
    ck_assert_double_eq(term(&c, "split-K"), 1);
    ck_assert_double_eq_tol(term(&c, "exposed epilogue (output at the stream rate)"), 0.131072e-6, 1e-15);
    ck_assert_double_eq_tol(c.compute_s, 2.179072e-6, 1e-15);
    ck_assert_double_eq(c.bytes_nominal, 655360);
    strata_hw_free(hw);
    hw = unit("exposed_epilogue = none\n");
    gemm(hw, STRATA_DTYPE_F8, &c);
    ck_assert_double_eq_tol(c.compute_s, 2.048e-6, 1e-15);
    strata_hw_free(hw);
}
END_TEST

START_TEST(bad_exposed_epilogue_refused)
{
    strata_test_hw_text_refused(head, "exposed_epilogue = f9\n", "a list of dtypes");
    strata_test_hw_text_refused(head, "exposed_epilogue =\n", "a list of dtypes");
    strata_test_hw_text_refused("[hardware]\nname = t\n[memory hbm]\nkind = device\ncapacity = 1GiB\n"
                                "bandwidth = 1TB/s\n[compute mxu]\nflops = 1TFLOP/s\n",
                                "matrix = systolic\nside = 128\nexposed_epilogue = f8\n", "only with matrix = tiles");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kernel_dtype");
    TCase *tc = tcase_create("kernel_dtype");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bf16_gemm_mainloop_alone);
    tcase_add_test(tc, f8_gemm_adds_its_output_write);
    tcase_add_test(tc, bad_exposed_epilogue_refused);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
