/* test_pallas_step.c: a Pallas grid step whose DMA is hidden costs its
 * overhead and its MXU work, no more, on every shipped TPU core
 * (configs/hw/tpu-*.ini: [compute scalar] overhead = 0.35 us, the Pallas
 * TPU pipelining guide's per-step cost; [link dma-vmem] latency, bounded by
 * it).
 *
 * `strata gen matmul` (double buffering) issues step s+1's block DMAs during
 * step s, after its overhead op: the DMAs have step s's MXU time plus step
 * s+1's overhead to land. When latency + block bytes / DMA rate is below
 * that, step s+1 starts exactly overhead + MXU after step s. The blocks
 * below make the transfer fit under the MXU (hand figures per case); were
 * the DMA latency above the overhead (0.5 us, the old ESTIMATE), tpu-v5e's
 * step would cost latency + 1 MiB / 819 GB/s = 1.780 us instead of 1.713. */
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "engine/engine.h"
#include "hw/hw.h"
#include "results/results.h"
#include "workload/workload.h"

static const struct {
    const char *hw;
    const char *bm, *bn, *bk, *k;
    double period_us; /* overhead + 2 bm bn bk / peak */
} cases[] = {
    /* 1 MiB of blocks: 0.35 + 1048576 / 615e3 = 2.055 us of DMA under 2.302 */
    {"tpu-v4", "bm=512", "bn=512", "bk=512", "k=2048", 0.35 + 2.0 * 512 * 512 * 512 / 137.5e6},
    /* 0.35 + 1048576 / 819e3 = 1.630 us under 1.713 */
    {"tpu-v5e", "bm=512", "bn=512", "bk=512", "k=2048", 0.35 + 2.0 * 512 * 512 * 512 / 197e6},
    /* 0.35 + 1048576 / 1230e3 = 1.203 us under 1.520 */
    {"tpu-v5p", "bm=512", "bn=512", "bk=512", "k=2048", 0.35 + 2.0 * 512 * 512 * 512 / 229.5e6},
    /* 4 MiB of blocks: 0.35 + 4194304 / 1640e3 = 2.908 us under 5.018 */
    {"tpu-v6e", "bm=2048", "bn=2048", "bk=512", "k=2048", 0.35 + 2.0 * 2048 * 2048 * 512 / 920e6},
};

static double span_start(const strata_results *r, const char *label)
{
    for (guint i = 0; i < r->spans->len; i++) {
        const strata_op_span *sp = &g_array_index(r->spans, strata_op_span, i);
        if (sp->label && sp->kind == STRATA_OP_COMPUTE && strcmp(sp->label, label) == 0)
            return sp->start_s;
    }
    ck_abort_msg("no span %s", label);
    return 0;
}

START_TEST(hidden_dma_step_costs_its_overhead)
{
    char *rel = g_strdup_printf("configs/hw/%s.ini", cases[_i].hw);
    char *path = strata_test_source_path(rel);
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw, "%s: %s", path, err ? err->message : "");
    /* one output tile: m = bm, n = bn */
    char *m = g_strdup_printf("m=%s", cases[_i].bm + 3), *n = g_strdup_printf("n=%s", cases[_i].bn + 3);
    const char *full[] = {cases[_i].bm, cases[_i].bn, cases[_i].bk, cases[_i].k, m, n, NULL};
    strata_source *src = strata_workload_generate("matmul", full, &err);
    ck_assert_msg(src, "%s", err ? err->message : "");
    strata_engine_options opt;
    strata_engine_options_init(&opt);
    opt.record_spans = true;
    strata_results *r = NULL;
    ck_assert_msg(strata_engine_run(hw, src, &opt, &r, &err), "%s", err ? err->message : "");
    /* steps 1 -> 2 -> 3 of the one output tile (k = 4 bk): all in steady state */
    double p12 = span_start(r, "step_0_0_2") - span_start(r, "step_0_0_1");
    double p23 = span_start(r, "step_0_0_3") - span_start(r, "step_0_0_2");
    ck_assert_msg(fabs(p12 * 1e6 - cases[_i].period_us) < 1e-6, "%s: step 1->2 %.6f us, want %.6f", cases[_i].hw,
                  p12 * 1e6, cases[_i].period_us);
    ck_assert_msg(fabs(p23 * 1e6 - cases[_i].period_us) < 1e-6, "%s: step 2->3 %.6f us, want %.6f", cases[_i].hw,
                  p23 * 1e6, cases[_i].period_us);
    strata_results_free(r);
    strata_source_free(src);
    strata_hw_free(hw);
    g_free(m);
    g_free(n);
    g_free(path);
    g_free(rel);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pallas_step");
    TCase *tc = tcase_create("pallas_step");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, hidden_dma_step_costs_its_overhead, 0, G_N_ELEMENTS(cases));
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
