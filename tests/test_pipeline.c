/*
 * test_pipeline.c: pipeline parallelism (models/workload/pipeline.c,
 * pipeline_schedule.c; results/stages.c): the schedules' orders as
 * Megatron writes them, and a step run through `strata run` on dgx-h100
 * (a 4-device slice) under GPipe, 1F1B, interleaved 1F1B and ZB-H1.
 *
 * The model for the timed cases: 16 layers of d_model 4096 (4 per stage),
 * seq 1024, batch 8 in 8 microbatches of 1, vocabulary 64 (so the head on
 * the last stage and the embedding on the first are negligible: every
 * stage does the same work), flash attention. Figures derived by hand:
 *   A   = a chunk's saved activations for one microbatch: 4 layers x
 *         s b h x 34 bytes (Korthikanti's count, flash) = 4 x 1024 x 4096 x
 *         34 = 570,425,344 B; the received input x adds the message
 *         msg = s b h x 2 = 8,388,608 B on stages 1..3, and the last stage
 *         keeps the f32 logits, 4 s b V = 262,144 B.
 *   memory  GPipe holds m = 8 microbatches on every stage, 1F1B
 *         min(p - r, m) = 4, 3, 2, 1: the peaks differ by (8 - (4 - r)) x
 *         A_r, up to two messages (the send and receive buffers in flight
 *         at each schedule's peak differ; msg is 1.5% of A).
 *   bubble  with equal stages the idle share of the step is (p-1)/(m+p-1)
 *         = 3/11 for both GPipe and 1F1B, (p-1)/(v m + p - 1) = 3/19 for
 *         interleaved with v = 2 (GPipe paper; Megatron SC21 §2.2). The
 *         simulation adds the stage-to-stage messages on the critical path
 *         (8 MiB at ~370 GB/s: ~23 us each, against ~0.64 ms of compute
 *         per microbatch and stage): up to about 2(p-1) + m of them, 0.6%
 *         of the step; tolerance 0.01 absolute.
 */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "workload/pipeline.h"

#define HW "configs/hw/dgx-h100.ini"

/* ---- the schedules' orders ------------------------------------------------- */

/* The forwards before rank r's first backward. */
static guint warmup(wl_pipe_schedule sched, uint64_t p, uint64_t m, uint64_t v, uint64_t r)
{
    GArray *a = wl_pipe_schedule_actions(sched, p, m, v, r);
    guint w = 0;
    while (w < a->len && g_array_index(a, wl_pipe_action, w).kind == 'F')
        w++;
    g_array_free(a, TRUE);
    return w;
}

START_TEST(schedule_warmups_are_megatrons)
{
    /* p = 4, m = 8, v = 2 (pipeline.md §1.6): 1F1B warms up p - r - 1 and
     * runs one more forward before its first backward (the steady state's
     * first F), so w + 1 = 4, 3, 2, 1; interleaved 2(p-r-1) + (v-1)p + 1 =
     * 11, 9, 7, 5; GPipe all 8. */
    static const guint f1b[] = {4, 3, 2, 1}, inter[] = {11, 9, 7, 5};
    for (uint64_t r = 0; r < 4; r++) {
        ck_assert_uint_eq(warmup(WL_PIPE_1F1B, 4, 8, 1, r), f1b[r]);
        ck_assert_uint_eq(warmup(WL_PIPE_INTERLEAVED, 4, 8, 2, r), inter[r]);
        ck_assert_uint_eq(warmup(WL_PIPE_GPIPE, 4, 8, 1, r), 8);
    }
    /* Every (chunk, microbatch) once forward and once backward (and once W
     * under zb-h1), each backward after its forward. */
    for (int s = 0; s < 4; s++)
        for (uint64_t r = 0; r < 4; r++) {
            uint64_t v = s == WL_PIPE_INTERLEAVED ? 2 : 1;
            GArray *a = wl_pipe_schedule_actions((wl_pipe_schedule)s, 4, 8, v, r);
            int seen[2][8][3] = {{{0}}};
            for (guint i = 0; i < a->len; i++) {
                const wl_pipe_action *x = &g_array_index(a, wl_pipe_action, i);
                int k = x->kind == 'F' ? 0 : x->kind == 'B' ? 1 : 2;
                ck_assert(k == 0 || seen[x->chunk][x->mb][k - 1] == 1);
                seen[x->chunk][x->mb][k]++;
            }
            for (uint64_t c = 0; c < v; c++)
                for (int mb = 0; mb < 8; mb++)
                    ck_assert(seen[c][mb][0] == 1 && seen[c][mb][1] == 1 &&
                              seen[c][mb][2] == (s == WL_PIPE_ZB_H1));
            g_array_free(a, TRUE);
        }
}
END_TEST

/* ---- a step through strata run ---------------------------------------------- */

typedef struct step_result {
    double makespan, flops, bubble[4];
    uint64_t peak[4];
    uint64_t permute_bytes;
} step_result;

static step_result run_step(const char *schedule, const char *extra)
{
    strata_cli_result g = strata_test_cli("gen", "transformer", "layers=16", "d_model=4096", "heads=32", "seq=1024",
                                          "batch=8", "vocab=64", "mesh=pipe:4", "microbatches=8", "attention=flash",
                                          "mask=causal", schedule, extra, NULL);
    ck_assert_msg(g.status == 0, "%s", g.err);
    char *trace = strata_test_write_temp("pipe-XXXXXX.trace", g.out);
    strata_cli_result_clear(&g);
    JsonParser *p = strata_test_run_results(HW, trace);
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    step_result s = {json_object_get_double_member(root, "makespan_s"), 0, {0}, {0}, 0};
    JsonObject *compute = json_object_get_object_member(root, "compute");
    GList *names = json_object_get_members(compute);
    for (GList *l = names; l; l = l->next)
        s.flops += json_object_get_double_member(json_object_get_object_member(compute, l->data), "flops");
    g_list_free(names);
    JsonArray *stages = json_object_get_array_member(json_object_get_object_member(root, "pipeline"), "stages");
    ck_assert_uint_eq(json_array_get_length(stages), 4);
    for (guint i = 0; i < 4; i++) {
        JsonObject *st = json_array_get_object_element(stages, i);
        s.bubble[i] = json_object_get_double_member(st, "bubble_fraction");
        s.peak[i] = (uint64_t)json_object_get_int_member(st, "peak_allocated_bytes");
    }
    JsonObject *c0 = json_array_get_object_element(json_object_get_array_member(root, "collectives"), 0);
    ck_assert_str_eq(json_object_get_string_member(c0, "op"), "collective-permute");
    s.permute_bytes = (uint64_t)json_object_get_int_member(c0, "bytes");
    g_object_unref(p);
    g_unlink(trace);
    g_free(trace);
    return s;
}

#define A_CHUNK 570425344ull
#define MSG 8388608ull

START_TEST(gpipe_and_1f1b_same_work_memory_by_in_flight)
{
    step_result g = run_step("schedule=gpipe", NULL), f = run_step("schedule=1f1b", NULL);
    ck_assert_double_eq(g.flops, f.flops); /* the same work */
    ck_assert_uint_eq(g.permute_bytes, MSG);
    for (int r = 0; r < 4; r++) {
        uint64_t a = A_CHUNK + (r > 0 ? MSG : 0) + (r == 3 ? 4ull * 1024 * 64 : 0);
        int64_t want = (int64_t)((8 - (4 - r)) * a), got = (int64_t)g.peak[r] - (int64_t)f.peak[r];
        ck_assert_msg(llabs(got - want) <= (int64_t)(2 * MSG), "stage %d: peaks differ by %" G_GINT64_FORMAT
                      ", in flight (8 - %d) x %" G_GUINT64_FORMAT " = %" G_GINT64_FORMAT, r, got, 4 - r, a, want);
        ck_assert_msg(fabs(g.bubble[r] - 3.0 / 11) <= 0.01, "gpipe stage %d bubble %g", r, g.bubble[r]);
        ck_assert_msg(fabs(f.bubble[r] - 3.0 / 11) <= 0.01, "1f1b stage %d bubble %g", r, f.bubble[r]);
    }
}
END_TEST

START_TEST(interleaved_and_zero_bubble)
{
    step_result f = run_step("schedule=1f1b", NULL), i = run_step("schedule=interleaved", "virtual=2"),
                z = run_step("schedule=zb-h1", NULL);
    ck_assert_double_eq(i.flops, f.flops);
    ck_assert_double_eq(z.flops, f.flops);
    for (int r = 0; r < 4; r++) {
        ck_assert_msg(fabs(i.bubble[r] - 3.0 / 19) <= 0.01, "interleaved stage %d bubble %g", r, i.bubble[r]);
        /* interleaving holds more on every stage than 1F1B (pipeline.md §1.3:
         * rank 0 (p + (p-1)/v) A against p A) */
        ck_assert_uint_gt(i.peak[r], f.peak[r]);
        /* ZB-H1: less bubble than 1F1B, no stage above 1F1B's stage 0 */
        ck_assert_msg(z.bubble[r] < f.bubble[r] - 0.05, "zb-h1 stage %d bubble %g", r, z.bubble[r]);
        ck_assert_uint_le(z.peak[r], f.peak[0]);
    }
    ck_assert_uint_eq(z.peak[0], f.peak[0]);
}
END_TEST

/* With tensor and data axes: the message is / t under sequence parallelism
 * (Megatron's tensor_shape), and each stage's data group reduces its
 * gradients. */
START_TEST(pipe_with_tensor_and_data)
{
    strata_cli_result g = strata_test_cli("gen", "transformer", "layers=4", "d_model=256", "heads=4", "seq=128",
                                          "batch=8", "vocab=256", "mesh=pipe:2,data:2,tensor:2",
                                          "sharding=tp+sp", "microbatches=2", NULL);
    ck_assert_msg(g.status == 0, "%s", g.err);
    ck_assert_msg(strstr(g.out, "option mesh=pipe:2,data:2,model:2\n"), "%s", g.out);
    char *trace = strata_test_write_temp("pipe-XXXXXX.trace", g.out);
    strata_cli_result_clear(&g);
    JsonParser *p = strata_test_run_results(HW, trace);
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    JsonArray *cs = json_object_get_array_member(root, "collectives");
    guint permutes = 0, data = 0;
    for (guint i = 0; i < json_array_get_length(cs); i++) {
        JsonObject *c = json_array_get_object_element(cs, i);
        const char *op = json_object_get_string_member(c, "op"), *axis = json_object_get_string_member(c, "axis");
        if (strcmp(op, "collective-permute") == 0) {
            /* s b h x 2 bytes / t: 128 x 2 x 256 x 2 / 2 (b = 8 / (2 x 2)) */
            ck_assert_uint_eq(json_object_get_int_member(c, "bytes"), 128 * 2 * 256 * 2 / 2);
            permutes++;
        }
        data += strcmp(axis, "data") == 0;
    }
    /* 2 microbatches x 1 boundary x 2 ways x 4 sending devices */
    ck_assert_uint_eq(permutes, 16);
    ck_assert_uint_eq(data, 4); /* one all-reduce per stage and tensor rank */
    g_object_unref(p);
    g_unlink(trace);
    g_free(trace);
}
END_TEST

static Suite *pipeline_suite(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("schedules");
    tcase_add_test(tc, schedule_warmups_are_megatrons);
    tcase_add_test(tc, gpipe_and_1f1b_same_work_memory_by_in_flight);
    tcase_add_test(tc, interleaved_and_zero_bubble);
    tcase_add_test(tc, pipe_with_tensor_and_data);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(pipeline_suite()); }
