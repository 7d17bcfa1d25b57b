/*
 * test_serve_coll.c: serving's library collectives as strata's collective
 * model simulates them (sim/serve/serve_coll.h): a serving step's TP
 * all-reduce against a ring all-reduce derived by hand on a teaching model,
 * and against the collective path validate --published runs (`strata gen
 * collective` expanded and run by the engine: bench/coll_sweep.h) on
 * DGX H100, whole node and sliced; between the anchors, the interpolated
 * time against that path's own.
 */
#include <math.h>
#include "coll_sweep.h"
#include "hw/coll_impl.h"
#include "serve/serve_coll.h"
#include "serve/serve_cost.h"
#include "testutil.h"

static strata_hw *load(const char *relative)
{
    char *path = strata_test_source_path(relative);
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    g_free(path);
    return hw;
}

static strata_serve_model preset(const char *name)
{
    strata_serve_model m;
    GError *err = NULL;
    ck_assert_msg(strata_serve_model_preset(&m, name, &err), "%s", err ? err->message : "");
    return m;
}

/* configs/hw/test-ring8.ini (8 devices on a ring of 100 GB/s links of
 * latency a = 1 us, HBM 1 TB/s, no collectives key: the ideal row, whose
 * pick for one axis is algo=ring), Llama-3-8B (hidden 4,096) at TP 8. A
 * step of T tokens all-reduces B = T x 4,096 x 2 bytes of bf16; the ring
 * all-reduce (tests/test_spmd.c's derivation) takes 2(N-1) steps of a
 * chunk B/N, each a + (B/N)/W, and N-1 reductions of a chunk, each
 * reading two and writing one through the HBM port (3 (B/N) / 1 TB/s;
 * its B/N/2 flops at 100 TFLOP/s take far less):
 *   T = 64, B = 524,288 (2^19, a grid anchor, simulated itself):
 *     14 x (1 us + 65,536 / 100e9) + 7 x 3 x 65,536 / 1e12
 *     = 14 x 1.65536 us + 1.376256 us = 24.551296 us;
 *   T = 48, B = 393,216 (between the anchors 370,726 and 524,288, on the
 *     ring's line: the same steps, bytes in proportion):
 *     14 x (1 us + 49,152 / 100e9) + 7 x 3 x 49,152 / 1e12
 *     = 14 x 1.49152 us + 1.032192 us = 21.913472 us
 *     (the anchor 370,726 is no multiple of 8: its chunks differ by a
 *     byte, 1e-11 s a step, so within 1e-5 of it). */
START_TEST(ring_all_reduce_by_hand)
{
    strata_hw *hw = load("configs/hw/test-ring8.ini");
    strata_serve_model m = preset("llama-3-8b");
    GError *err = NULL;
    strata_serve_cost *c = strata_serve_cost_new(hw, &m, 8, false, 64, &err);
    ck_assert_msg(c, "%s", err ? err->message : "");
    double t64 = strata_serve_cost_allreduce(c, 64), t48 = strata_serve_cost_allreduce(c, 48);
    ck_assert_msg(fabs(t64 - 24.551296e-6) < 1e-6 * 24.551296e-6, "%.17g", t64);
    ck_assert_msg(fabs(t48 - 21.913472e-6) < 1e-5 * 21.913472e-6, "%.17g", t48);
    strata_serve_cost_free(c);
    strata_hw_free(hw);
}
END_TEST

/* DGX H100 (collectives = nccl, NVLS), Llama-3-70B (hidden 8,192): a step
 * of 64 tokens all-reduces 1 MiB (a grid anchor): the serving cost charges
 * what `strata gen collective op=all-reduce bytes=1048576 devices=8
 * dtype=bf16` run on the same file gives (NCCL's Ring LL, its steps on
 * the file's links), to the last bit, and not NCCL's own closed form;
 * at TP 2 the file sliced to 2 devices, as `strata run` slices it, and
 * hgx-h200.ini (base = h200.ini, one device: the slice is of the file
 * named, not of its base) at TP 4 likewise. At
 * 623 tokens (10,207,232 B, the wave-26 figure: NCCL's closed form 62.5
 * us, the simulation ~77.7 us) the interpolation between anchors is
 * within 1.5% of that size's own simulation (bench_serve_coll: its
 * largest error over the sizes is 1.35%). */
START_TEST(allreduce_is_the_simulated_collective)
{
    const char *files[3] = {"configs/hw/dgx-h100.ini", "configs/hw/dgx-h100.ini", "configs/hw/hgx-h200.ini"};
    const char *sets[3] = {NULL, "hardware.devices=2", "hardware.devices=4"};
    const uint32_t ranks[3] = {8, 2, 4};
    strata_serve_model m = preset("llama-3-70b");
    for (int i = 0; i < 3; i++) {
        GError *err = NULL;
        strata_hw *hw = load(files[i]);
        char *path = strata_test_source_path(files[i]);
        const char *const slice[] = {sets[i], NULL};
        strata_serve_cost *c = strata_serve_cost_new(hw, &m, ranks[i], false, 1024, &err);
        ck_assert_msg(c, "%s", err ? err->message : "");
        coll_sweep_point p;
        ck_assert(coll_sweep_run(path, sets[i] ? slice : NULL, "all-reduce", ranks[i], "dtype=bf16", 1048576, &p));
        ck_assert_msg(p.ok, "%s", p.message);
        double t = strata_serve_cost_allreduce(c, 64);
        ck_assert_msg(t == p.time_s, "%s TP %u: %.17g vs %.17g", files[i], ranks[i], t, p.time_s);
        strata_coll_tuning tu = {0};
        ck_assert(strata_hw_coll_impl(hw)->tune(hw, STRATA_OP_ALL_REDUCE, ranks[i], ranks[i], 1048576, 0, &tu, NULL));
        ck_assert_msg(tu.estimate_s > 0 && fabs(t - tu.estimate_s) > 1e-4 * t, "%.17g", tu.estimate_s);
        ck_assert(coll_sweep_run(path, sets[i] ? slice : NULL, "all-reduce", ranks[i], "dtype=bf16", 10207232, &p));
        ck_assert_msg(p.ok, "%s", p.message);
        t = strata_serve_cost_allreduce(c, 623);
        ck_assert_msg(fabs(t / p.time_s - 1) < 0.015, "%s TP %u: %.17g vs %.17g", files[i], ranks[i], t, p.time_s);
        strata_serve_cost_free(c);
        g_free(path);
        strata_hw_free(hw);
    }
}
END_TEST

/* The MoE layer's reduce-scatter and all-gather under attention DP take
 * the same path: at a grid anchor (reduce-scatter of 2^21 B, all-gather
 * of a 2^18-B share, 2 MiB gathered) the object's time is that size's
 * simulation, and the simulation is the gen path's. */
START_TEST(moe_collectives_alike)
{
    strata_hw *hw = load("configs/hw/dgx-h100.ini");
    char *path = strata_test_source_path("configs/hw/dgx-h100.ini");
    strata_serve_coll *c = strata_serve_coll_new(hw, 8);
    GError *err = NULL;
    double rs = 0, ag = 0;
    ck_assert_msg(strata_serve_coll_time(c, STRATA_OP_REDUCE_SCATTER, 1u << 21, &rs, &err), "%s",
                  err ? err->message : "");
    ck_assert_msg(strata_serve_coll_time(c, STRATA_OP_ALL_GATHER, 1u << 18, &ag, &err), "%s", err ? err->message : "");
    coll_sweep_point p;
    ck_assert(coll_sweep_run(path, NULL, "reduce-scatter", 8, "dtype=bf16", 1u << 21, &p) && p.ok);
    ck_assert_msg(rs == p.time_s, "%.17g vs %.17g", rs, p.time_s);
    ck_assert(coll_sweep_run(path, NULL, "all-gather", 8, "dtype=bf16", 1u << 21, &p) && p.ok);
    ck_assert_msg(ag == p.time_s, "%.17g vs %.17g", ag, p.time_s);
    ck_assert_uint_eq(strata_serve_coll_simulations(c), 2);
    strata_serve_coll_free(c);
    g_free(path);
    strata_hw_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_coll");
    TCase *tc = tcase_create("serve_coll");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, ring_all_reduce_by_hand);
    tcase_add_test(tc, allreduce_is_the_simulated_collective);
    tcase_add_test(tc, moe_collectives_alike);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
