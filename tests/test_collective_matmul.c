/* test_collective_matmul.c: `gen transformer collective_matmul=MIB`
 * (models/workload/collective_matmul.h), XLA's windowed einsum on the
 * sequence-parallel collectives over `model`: the steps of a small layer
 * derived by hand, the threshold, and a bad value. */
#include <string.h>
#include "testutil.h"

/* d 48, 4 heads, MLP 192 (gelu), batch 8 x seq 8 over data:2, model:2 with
 * tp+sp: a device holds 4 sequences, 32 rows; the gathered [4,8,48] is
 * split along its rows (4 x 8 = 32), T = 2 halves of 16. */
#define SMALL "gen", "transformer", "layers=1", "d_model=48", "heads=4", "batch=8", "seq=8", "vocab=128", \
              "mesh=data:2,model:2", "sharding=tp+sp"

/* The trace's steps without its allocs and frees, one a line. */
static char *steps_of(const char *trace)
{
    GString *s = g_string_new(NULL);
    char **lines = g_strsplit(trace, "\n", -1);
    for (char **l = lines; *l; l++)
        if (!g_str_has_prefix(*l, "alloc ") && !g_str_has_prefix(*l, "free ") && **l && **l != '#')
            g_string_append_printf(s, "%s\n", *l);
    g_strfreev(lines);
    return g_string_free(s, FALSE);
}

/* The forward MLP: ln2's output gathered on stream `window` while w1's
 * gemm runs on the local 16 rows (half its 2 x 32 x 48 x 96 flops), the
 * last 16 rows after the gather; w2's gemm: its first 16 rows, then the
 * reduce-scatter of the partial sums beside the other 16. */
static const char mlp_forward[] = "record cm2.go\n"
                                  "wait cm2.go stream=window\n"
                                  "all-gather l0_ln2_out_ag l0_ln2_out axis=model stream=window\n"
                                  "record cm2.done stream=window\n"
                                  "compute l0_mlp_in_w flops=147456 in=l0_ln2_out,l0_w1 out=l0_mlp_up kernel=gemm "
                                  "dims=16x48x96\n"
                                  "wait cm2.done\n"
                                  "compute l0_mlp_in_wlast flops=147456 in=l0_ln2_out_ag,l0_w1 out=l0_mlp_up "
                                  "kernel=gemm dims=16x48x96\n"
                                  "compute l0_gelu flops=36864 in=l0_mlp_up out=l0_gelu\n"
                                  "compute l0_mlp_down_wfirst flops=147456 in=l0_gelu,l0_w2 out=l0_mlp_out "
                                  "kernel=gemm dims=16x96x48\n"
                                  "record cm3.go\n"
                                  "wait cm3.go stream=window\n"
                                  "reduce-scatter l0_mlp_out_rs l0_mlp_out axis=model stream=window\n"
                                  "record cm3.done stream=window\n"
                                  "compute l0_mlp_down_w flops=147456 in=l0_gelu,l0_w2 out=l0_mlp_out kernel=gemm "
                                  "dims=16x96x48\n"
                                  "wait cm3.done\n";

/* The backward input gradient of w1: its first half, the reduce-scatter
 * beside the second half and w1's weight gradient (which does not read
 * the partial sums), main waiting only before ln2's gradient. */
static const char mlp_in_backward[] = "compute l0_mlp_in_vjp0_wfirst flops=147456 in=d_l0_mlp_up,l0_w1 "
                                      "out=d_l0_ln2_out_ag kernel=gemm dims=16x96x48\n"
                                      "record cm7.go\n"
                                      "wait cm7.go stream=window\n"
                                      "reduce-scatter d_l0_ln2_out d_l0_ln2_out_ag axis=model stream=window\n"
                                      "record cm7.done stream=window\n"
                                      "compute l0_mlp_in_vjp0_w flops=147456 in=d_l0_mlp_up,l0_w1 "
                                      "out=d_l0_ln2_out_ag kernel=gemm dims=16x96x48\n"
                                      "wait rg2.done\n"
                                      "compute l0_mlp_in_vjp1 flops=294912 in=d_l0_mlp_up,l0_ln2_out_ag_remat "
                                      "out=d_l0_w1 kernel=gemm dims=48x32x96\n"
                                      "wait cm7.done\n"
                                      "compute l0_ln2_vjp0 ";

START_TEST(windowed_pairs_by_hand)
{
    const char *argv[] = {SMALL, "collective_matmul=0", "-o", "-", NULL};
    strata_cli_result r = strata_test_run_cli(argv);
    ck_assert_msg(r.status == 0, "%s", r.err);
    char *steps = steps_of(r.out);
    ck_assert_msg(strstr(steps, mlp_forward), "%s", steps);
    ck_assert_msg(strstr(steps, mlp_in_backward), "%s", steps);
    /* 10 pairs: per layer 2 gathers and 2 scatters each way, the head's
     * gather of lnf's output and its gradient's scatter */
    ck_assert_ptr_nonnull(strstr(steps, "record cm9.done"));
    ck_assert_ptr_null(strstr(steps, "cm10."));
    g_free(steps);
    strata_cli_result_clear(&r);
}
END_TEST

/* Gathered [4,8,48] bf16 tensors are 3 KiB: a 1 MiB threshold leaves the
 * program as it was without the key. */
START_TEST(below_threshold_unchanged)
{
    const char *plain[] = {SMALL, "-o", "-", NULL}, *above[] = {SMALL, "collective_matmul=1", "-o", "-", NULL};
    strata_cli_result a = strata_test_run_cli(plain), b = strata_test_run_cli(above);
    ck_assert_msg(a.status == 0 && b.status == 0, "%s%s", a.err, b.err);
    char *sa = steps_of(a.out), *sb = steps_of(b.out);
    ck_assert_str_eq(sa, sb);
    ck_assert_ptr_null(strstr(sb, "stream=window"));
    g_free(sa);
    g_free(sb);
    strata_cli_result_clear(&a);
    strata_cli_result_clear(&b);
}
END_TEST

START_TEST(negative_threshold_refused)
{
    const char *argv[] = {SMALL, "collective_matmul=-1", "-o", "-", NULL};
    strata_cli_result r = strata_test_run_cli(argv);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "collective_matmul"), "%s", r.err);
    strata_cli_result_clear(&r);
}
END_TEST

static Suite *cm_suite(void)
{
    Suite *s = suite_create("collective_matmul");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, windowed_pairs_by_hand);
    tcase_add_test(tc, below_threshold_unchanged);
    tcase_add_test(tc, negative_threshold_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return strata_test_main(cm_suite());
}
