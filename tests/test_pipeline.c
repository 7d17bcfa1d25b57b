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
 *         (8 MiB at ~370 GB/s: ~23 us each, against ~7.7 ms of compute
 *         per microbatch and stage, forward and backward, now that each
 *         layer runs its kernels: layer_ops.h): up to about 2(p-1) + m of
 *         them, under 0.1% of the step; tolerance 0.01 absolute.
 *   zb-h1   its B (input gradients, the flash backward, the elementwise
 *         backward) now takes longer than its W (the weight gradients'
 *         gemms alone), so its bubble, (p-1)(tF + tB - tW) in the paper's
 *         terms, is above the 0.111 of tB = tW (0.170 here), still below
 *         1F1B's by more than 0.05.
 */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "kernel/kernel.h"
#include "workload/layer_ops.h"
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

/* `strata gen transformer ARGS` (asserting exit 0) written to a temporary
 * trace file (g_free; unlink when done). */
static char *gen_trace(const char *const *args)
{
    const char *argv[24] = {"gen", "transformer"};
    size_t n = 2;
    for (; args[n - 2] && n < G_N_ELEMENTS(argv) - 1; n++)
        argv[n] = args[n - 2];
    argv[n] = NULL;
    strata_cli_result g = strata_test_run_cli(argv);
    ck_assert_msg(g.status == 0, "%s", g.err);
    char *trace = strata_test_write_temp("pipe-XXXXXX.trace", g.out);
    strata_cli_result_clear(&g);
    return trace;
}

typedef struct step_result {
    double makespan, flops, bubble[4];
    uint64_t peak[4];
    uint64_t permute_bytes;
} step_result;

static step_result run_step(const char *schedule, const char *extra)
{
    const char *args[] = {"layers=16", "d_model=4096", "heads=32", "seq=1024", "batch=8", "vocab=64", "mesh=pipe:4",
                          "microbatches=8", "attention=flash", "mask=causal", schedule, extra, NULL};
    char *trace = gen_trace(args);
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

/* The optimizer step at the end of the last stage (which ends the step):
 * AdamW over its 4 layers of 12 d^2 + 2 d parameters and the head's V d +
 * d (d = 4096, V = 64): 805,605,376 elements, each reading its bf16
 * gradient (2 bytes), reading and writing m and v (16) and the bf16
 * parameter in place (4): 22 bytes, at dgx-h100's 3.35 TB/s x its
 * stream_efficiency 0.9, plus its 3 us kernel_launch. */
#define OPT_S (22.0 * 805605376.0 / (3.35e12 * 0.9) + 3e-6)

/* A schedule's bubble fraction base (idle slots over slots) once the
 * optimizer, which no stage waits on, ends the step: the slots fill the
 * makespan less OPT_S. */
static double bubble_want(double base, const step_result *s)
{
    return base * (1.0 - OPT_S / s->makespan);
}

START_TEST(gpipe_and_1f1b_same_work_memory_by_in_flight)
{
    step_result g = run_step("schedule=gpipe", NULL), f = run_step("schedule=1f1b", NULL);
    /* the same work (summed op by op in another order: to rounding) */
    ck_assert_double_eq_tol(g.flops, f.flops, 1e-12 * f.flops);
    ck_assert_uint_eq(g.permute_bytes, MSG);
    for (int r = 0; r < 4; r++) {
        uint64_t a = A_CHUNK + (r > 0 ? MSG : 0) + (r == 3 ? 4ull * 1024 * 64 : 0);
        int64_t want = (int64_t)((8 - (4 - r)) * a), got = (int64_t)g.peak[r] - (int64_t)f.peak[r];
        ck_assert_msg(llabs(got - want) <= (int64_t)(2 * MSG), "stage %d: peaks differ by %" G_GINT64_FORMAT
                      ", in flight (8 - %d) x %" G_GUINT64_FORMAT " = %" G_GINT64_FORMAT, r, got, 4 - r, a, want);
        ck_assert_msg(fabs(g.bubble[r] - bubble_want(3.0 / 11, &g)) <= 0.01, "gpipe stage %d bubble %g", r,
                      g.bubble[r]);
        ck_assert_msg(fabs(f.bubble[r] - bubble_want(3.0 / 11, &f)) <= 0.01, "1f1b stage %d bubble %g", r,
                      f.bubble[r]);
    }
}
END_TEST

START_TEST(interleaved_and_zero_bubble)
{
    step_result f = run_step("schedule=1f1b", NULL), i = run_step("schedule=interleaved", "virtual=2"),
                z = run_step("schedule=zb-h1", NULL);
    ck_assert_double_eq_tol(i.flops, f.flops, 1e-12 * f.flops);
    ck_assert_double_eq_tol(z.flops, f.flops, 1e-12 * f.flops);
    for (int r = 0; r < 4; r++) {
        ck_assert_msg(fabs(i.bubble[r] - bubble_want(3.0 / 19, &i)) <= 0.01, "interleaved stage %d bubble %g", r,
                      i.bubble[r]);
        /* interleaving holds more on every stage than 1F1B (pipeline.md §1.3:
         * rank 0 (p + (p-1)/v) A against p A) */
        ck_assert_uint_gt(i.peak[r], f.peak[r]);
        /* ZB-H1: less bubble than 1F1B, no stage above 1F1B's stage 0 but
         * for one message: at the peak of stage 0 (p microbatches' A in
         * both) the last forward's output may still be in flight or sent,
         * as the ops' durations place it (1F1B's peak now comes after its
         * send completes, ZB-H1's before) */
        ck_assert_msg(z.bubble[r] < f.bubble[r] - 0.05, "zb-h1 stage %d bubble %g", r, z.bubble[r]);
        ck_assert_uint_le(z.peak[r], f.peak[0] + MSG);
    }
    ck_assert_uint_le(llabs((int64_t)z.peak[0] - (int64_t)f.peak[0]), MSG);
}
END_TEST

/* With tensor and data axes: the message is / t under sequence parallelism
 * (Megatron's tensor_shape), and each stage's data group reduces its
 * gradients. */
START_TEST(pipe_with_tensor_and_data)
{
    const char *args[] = {"layers=4", "d_model=256", "heads=4", "seq=128", "batch=8", "vocab=256",
                          "mesh=pipe:2,data:2,tensor:2", "sharding=tp+sp", "microbatches=2", NULL};
    char *trace = gen_trace(args), *text = NULL;
    ck_assert(g_file_get_contents(trace, &text, NULL, NULL));
    ck_assert_msg(strstr(text, "option mesh=pipe:2,data:2,model:2\n"), "%s", trace);
    g_free(text);
    JsonParser *p = strata_test_run_results(HW, trace);
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    JsonArray *cs = json_object_get_array_member(root, "collectives");
    guint permutes = 0, data = 0;
    for (guint i = 0; i < json_array_get_length(cs); i++) {
        JsonObject *c = json_array_get_object_element(cs, i);
        const char *op = json_object_get_string_member(c, "op"), *axis = json_object_get_string_member(c, "axis");
        if (strcmp(op, "collective-permute") == 0) {
            /* s b h x 2 bytes / t: 128 x 2 x 256 x 2 / 2 (b = 8 / (2 x 2));
             * the tied embedding's exchange (tie defaults to true) V d / t x
             * 2 bytes = 256 x 256 / 2 x 2: the same 65,536 */
            ck_assert_uint_eq(json_object_get_int_member(c, "bytes"), 128 * 2 * 256 * 2 / 2);
            permutes++;
        }
        data += strcmp(axis, "data") == 0;
    }
    /* 2 microbatches x 1 boundary x 2 ways x 4 sending devices, and the
     * tied exchange's one a device of the two end stages: 16 + 8 */
    ck_assert_uint_eq(permutes, 24);
    ck_assert_uint_eq(data, 4); /* one all-reduce per stage and tensor rank */
    g_object_unref(p);
    g_unlink(trace);
    g_free(trace);
}
END_TEST

/* One stage's program alone (`strata alloc --device`): a send is a read of
 * its input on the sender and a write of its output on the receiver, and
 * each stage's buffers are its own though the names repeat. */
START_TEST(one_stage_program_replays)
{
    const char *args[] = {"layers=4", "d_model=256", "heads=4", "seq=128", "batch=8", "vocab=256", "mesh=pipe:4",
                          "microbatches=4", NULL};
    char *trace = gen_trace(args);
    for (int d = 0; d < 4; d++) {
        char dev[8];
        g_snprintf(dev, sizeof dev, "%d", d);
        strata_cli_result r = strata_test_cli("alloc", "--allocator", "best-fit", "--capacity", "1GiB", "--device",
                                              dev, "--trace", trace, NULL);
        ck_assert_msg(r.status == 0, "device %d: %s", d, r.err);
        strata_cli_result_clear(&r);
    }
    g_unlink(trace);
    g_free(trace);
}
END_TEST

/* ---- a layer's kernels (layer_ops.h) ---------------------------------------- */

/* A small GQA layer on one device of tensor:2 with sequence parallelism:
 * d 512, 8 heads (4 a device) of 64, 2 kv heads (1), SwiGLU ffn 768 (384),
 * RMSNorm, rope; 2 sequences of 128, so T = 256 tokens and Tn = 128 at a
 * norm. */
static const strata_model_shape small = {.layers = 2, .d_model = 512, .heads = 8, .kv_heads = 2, .head_dim = 64,
                                         .ffn = 768, .vocab = 1024, .mlp = STRATA_MLP_SWIGLU, .gated = true,
                                         .rmsnorm = true, .rope = true, .tie = true, .moe_ffn = 768,
                                         .moe_every = 1};

START_TEST(layer_ops_of_a_small_layer)
{
    wl_layer_geom g = {.b = 2, .s = 128, .t = 2, .ep = 1, .sp = true, .flash = true, .causal = true,
                       .dt = STRATA_DTYPE_BF16};
    wl_layer_ops *o = wl_layer_ops_new(&small, &g, 0);
    /* The forward in Megatron's order, then each op's backward in reverse:
     * a gemm MxKxN's input gradient MxNxK (B) and weight gradient KxMxN (W). */
    static const struct {
        const char *name, *kernel;
        char pass;
        uint64_t dims[6];
        bool tp;
    } want[] = {
        {"norm1", "elementwise", 'F', {65536}, false},            /* Tn d = 128 x 512 */
        {"qkv", "gemm", 'F', {256, 512, 384}, false},             /* (4 + 2 x 1) x 64 columns */
        {"rope", "elementwise", 'F', {81920}, false},             /* T (H + K) hd = 256 x 5 x 64 */
        {"attn", "flash-attention", 'F', {2, 4, 128, 128, 64, 1}, false},
        {"o", "gemm", 'F', {256, 256, 512}, true},                /* row-parallel: the collective follows */
        {"res1", "elementwise", 'F', {65536}, false},
        {"norm2", "elementwise", 'F', {65536}, false},
        {"up", "gemm", 'F', {256, 512, 768}, false},              /* gate and up, 2 x 384 */
        {"act", "elementwise", 'F', {98304}, false},              /* T F = 256 x 384 */
        {"down", "gemm", 'F', {256, 384, 512}, true},
        {"res2", "elementwise", 'F', {65536}, false},
        {"res2.bwd", "elementwise", 'B', {65536}, false},
        {"down.dx", "gemm", 'B', {256, 512, 384}, false},
        {"down.dw", "gemm", 'W', {384, 256, 512}, false},
        {"act.bwd", "elementwise", 'B', {98304}, false},
        {"up.dx", "gemm", 'B', {256, 768, 512}, true},            /* column-parallel: after the input gradient */
        {"up.dw", "gemm", 'W', {512, 256, 768}, false},
        {"norm2.bwd", "elementwise", 'B', {65536}, false},
        {"res1.bwd", "elementwise", 'B', {65536}, false},
        {"o.dx", "gemm", 'B', {256, 512, 256}, false},
        {"o.dw", "gemm", 'W', {256, 256, 512}, false},
        {"attn.bwd", "flash-attention-bwd", 'B', {2, 4, 128, 128, 64, 1}, false},
        {"rope.bwd", "elementwise", 'B', {81920}, false},
        {"qkv.dx", "gemm", 'B', {256, 384, 512}, true},
        {"qkv.dw", "gemm", 'W', {512, 256, 384}, false},
        {"norm1.bwd", "elementwise", 'B', {65536}, false},
    };
    ck_assert_uint_eq(wl_layer_ops_len(o), G_N_ELEMENTS(want));
    for (uint32_t i = 0; i < G_N_ELEMENTS(want); i++) {
        const wl_layer_op *x = wl_layer_ops_at(o, i);
        ck_assert_str_eq(x->name, want[i].name);
        ck_assert_str_eq(x->kernel, want[i].kernel);
        ck_assert_int_eq(x->pass, want[i].pass);
        ck_assert_int_eq(x->tp_after, want[i].tp);
        for (uint32_t j = 0; j < x->n_dims; j++)
            ck_assert_uint_eq(x->dims[j], want[i].dims[j]);
        ck_assert_uint_eq(x->n_dims, strcmp(x->kernel, "gemm") == 0 ? 3 : *x->kernel == 'f' ? 6 : 1);
        if (*x->kernel == 'f')
            ck_assert_str_eq(x->mask, "causal");
    }
    /* norm1: 4 vector ops and 2 elements of 2 bytes an element; act: 6 and 3 */
    ck_assert_double_eq(wl_layer_ops_at(o, 0)->flops, 4.0 * 65536);
    ck_assert_uint_eq(wl_layer_ops_at(o, 0)->bytes, 2 * 65536 * 2);
    ck_assert_double_eq(wl_layer_ops_at(o, 8)->flops, 6.0 * 98304);
    ck_assert_uint_eq(wl_layer_ops_at(o, 8)->bytes, 3 * 98304 * 2);
    /* Flops by hand. gemms 2MKN: qkv 100,663,296, o 67,108,864, up
     * 201,326,592, down 100,663,296: 469,762,048 each of F, B (dx) and W
     * (dw); attention 4 b H S^2 hd / 2 = 16,777,216 forward, the model's
     * backward twice that. Model: F 486,539,264, B 503,316,480, W
     * 469,762,048, 1,459,617,792 in all = 3 x (2 x 256 tokens x (655,360 +
     * 1,179,648 weights) + 2 x 2 x 8 x 128 x 128^2 / 2) / 2 devices: the
     * layer's share of strata_model_step_flops. */
    double k = 0, m = 0;
    wl_layer_ops_flops(o, 'F', &k, &m);
    ck_assert_double_eq(m, 486539264.0);
    ck_assert_double_eq(k, 486539264.0 + 1490944.0); /* elementwise: norms 2 x 262,144, rope 245,760, adds
                                                      * 2 x 65,536, act 589,824 */
    wl_layer_ops_flops(o, 'B', &k, &m);
    ck_assert_double_eq(m, 503316480.0);
    /* the flash backward's own count is 2.5 x the forward's (41,943,040);
     * elementwise back: adds 2 x 65,536, act 1,572,864, norms 2 x
     * 524,288, rope 245,760 */
    ck_assert_double_eq(k, 469762048.0 + 41943040.0 + 2998272.0);
    wl_layer_ops_flops(o, 'W', &k, &m);
    ck_assert_double_eq(m, 469762048.0);
    ck_assert_double_eq(k, 469762048.0);
    wl_layer_ops_flops(o, 0, &k, &m);
    ck_assert_double_eq(m, 1459617792.0);
    strata_model_shape none = small;
    none.layers = 0;
    double layer = (strata_model_step_flops(&small, 2, 128, true) - strata_model_step_flops(&none, 2, 128, true)) / 2;
    ck_assert_double_eq(m, layer / 2);
    wl_layer_ops_free(o);
}
END_TEST

/* The op of o named name, and where (its index); aborts if none. */
static const wl_layer_op *op_named(const wl_layer_ops *o, const char *name, uint32_t *at)
{
    for (uint32_t i = 0; i < wl_layer_ops_len(o); i++)
        if (strcmp(wl_layer_ops_at(o, i)->name, name) == 0) {
            if (at)
                *at = i;
            return wl_layer_ops_at(o, i);
        }
    ck_abort_msg("no op %s", name);
    return NULL;
}

/* The small layer under FP8 (Transformer Engine's casts, layer_ops.c
 * te_casts), tensor:2 with sequence parallelism: T = 256, Tn = 128, bf16
 * 2 bytes. Weights (pass S, cast with their transpose: 2 + 1 + 1 = 4
 * bytes an element): qkv 512 x 384 = 196,608; o 256 x 512 = 131,072; up
 * 512 x 768 = 393,216; down 384 x 512 = 196,608. Inputs (F): qkv and up
 * take their norms' FP8 output (no cast); o's 256 x 256 = 65,536 and
 * down's 256 x 384 = 98,304, cast only under sp (2 + 1 = 3 bytes), and
 * transposed in W (fp8 in, fp8 out: 2 bytes) as are qkv's and up's 256 x
 * 512 = 131,072. Output gradients (B, 4 bytes): column-parallel qkv 256
 * x 384 = 98,304 and up 256 x 768 = 196,608; row-parallel o and down cast
 * on their Tn rows before the gather, 128 x 512 = 65,536. Current scaling
 * reads each cast's input once more: 2 bytes more an element (TE v2.7's
 * Float8CurrentScalingQuantizer: an amax kernel, then the cast). */
START_TEST(layer_ops_fp8_casts)
{
    static const struct {
        const char *name;
        char pass;
        uint64_t n;
        double bytes, current;
    } want[] = {
        {"qkv.w_cast", 'S', 196608, 4, 6},   {"o.w_cast", 'S', 131072, 4, 6},     {"up.w_cast", 'S', 393216, 4, 6},
        {"down.w_cast", 'S', 196608, 4, 6},  {"o.x_cast", 'F', 65536, 3, 5},      {"down.x_cast", 'F', 98304, 3, 5},
        {"qkv.x_t", 'W', 131072, 2, 2},      {"o.x_t", 'W', 65536, 2, 2},         {"up.x_t", 'W', 131072, 2, 2},
        {"down.x_t", 'W', 98304, 2, 2},      {"qkv.dy_cast", 'B', 98304, 4, 6},   {"up.dy_cast", 'B', 196608, 4, 6},
        {"o.dy_cast", 'B', 65536, 4, 6},     {"down.dy_cast", 'B', 65536, 4, 6},
    };
    for (int cur = 0; cur < 2; cur++) {
        wl_layer_geom g = {.b = 2, .s = 128, .t = 2, .ep = 1, .sp = true, .flash = true, .causal = true,
                           .dt = STRATA_DTYPE_F8, .fp8 = cur ? WL_FP8_CURRENT : WL_FP8_DELAYED};
        wl_layer_ops *o = wl_layer_ops_new(&small, &g, 0);
        /* the bf16 layer's 26 ops and the casts; under current scaling
         * the norms write bf16 (and their amax) and qkv's and up's inputs
         * are cast too, on their Tn = 128 rows: 65,536 elements, 2 + 1 bytes */
        ck_assert_uint_eq(wl_layer_ops_len(o), 26 + G_N_ELEMENTS(want) + (cur ? 2 : 0));
        if (cur) {
            ck_assert_uint_eq(op_named(o, "qkv.x_cast", NULL)->bytes, 3 * 65536);
            ck_assert_uint_eq(op_named(o, "up.x_cast", NULL)->bytes, 3 * 65536);
        }
        for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
            const wl_layer_op *x = op_named(o, want[i].name, NULL);
            ck_assert_int_eq(x->pass, want[i].pass);
            ck_assert_str_eq(x->kernel, "elementwise");
            ck_assert_uint_eq(x->dims[0], want[i].n);
            ck_assert_uint_eq(x->bytes, (uint64_t)((cur ? want[i].current : want[i].bytes) * (double)want[i].n));
            ck_assert_double_eq(x->model_flops, 0);
        }
        /* each cast runs just before its gemm: o.x_cast, o; dy_cast before dx; x_t before dw */
        uint32_t a = 0, b = 0;
        op_named(o, "o.x_cast", &a), op_named(o, "o", &b);
        ck_assert_uint_eq(a + 1, b);
        op_named(o, "down.dy_cast", &a), op_named(o, "down.dx", &b);
        ck_assert_uint_eq(a + 1, b);
        op_named(o, "qkv.x_t", &a), op_named(o, "qkv.dw", &b);
        ck_assert_uint_eq(a + 1, b);
        wl_layer_ops_free(o);
    }
    /* without sequence parallelism o's input is cast with its transpose in
     * the forward (2 + 1 + 1 bytes) and has no x_t; fp8=none adds nothing */
    wl_layer_geom g = {.b = 2, .s = 128, .t = 2, .ep = 1, .flash = true, .causal = true, .dt = STRATA_DTYPE_F8,
                       .fp8 = WL_FP8_DELAYED};
    wl_layer_ops *o = wl_layer_ops_new(&small, &g, 0);
    ck_assert_uint_eq(op_named(o, "o.x_cast", NULL)->bytes, 4 * 65536);
    ck_assert_uint_eq(op_named(o, "o.dy_cast", NULL)->bytes, 4 * 256 * 512); /* all T rows */
    ck_assert_uint_eq(wl_layer_ops_len(o), 26 + 12);
    wl_layer_ops_free(o);
    g.fp8 = WL_FP8_NONE;
    o = wl_layer_ops_new(&small, &g, 0);
    ck_assert_uint_eq(wl_layer_ops_len(o), 26);
    wl_layer_ops_free(o);
}
END_TEST

/* The line of text starting with prefix and ending with suffix (a device). */
static const char *line_of(char **lines, const char *prefix, const char *suffix)
{
    for (char **l = lines; *l; l++)
        if (g_str_has_prefix(*l, prefix) && g_str_has_suffix(*l, suffix))
            return *l;
    return NULL;
}

/* The optimizer, the distributed optimizer and the tied embedding's
 * exchange, on a model of 4 layers, d 256, 4 heads, ffn 1024 (gelu),
 * vocabulary 64, learned positions, seq 128, over pipe:2,data:2, f32
 * master weights. A layer's parameters: 12 d^2 + 2 d = 786,944; rank 1
 * holds 2 layers, the output projection V d = 16,384 and the final norm
 * 256: 1,590,528; with dist_opt each data replica updates half, 795,264,
 * each element reading its f32 main gradient (4), reading and writing m,
 * v (16) and the master (8), then the master read (4) and the bf16
 * parameter written (2): 34 bytes, 27,038,976. Without: 1,590,528 x 34 =
 * 54,077,952 and an all-reduce for the reduce-scatter and all-gather.
 * Tied: the embedding's gradient, V d = 16,384 f32 elements (65,536
 * bytes), sent each way over pipe and added (3 x 65,536 bytes). The
 * embedding lookup of rank 0: batch 8 / (data 2 x 2 microbatches) = 2
 * sequences, 256 tokens x 256 = 65,536 elements read and written in bf16:
 * 262,144 bytes. */
START_TEST(pipe_optimizer_and_tied_embedding)
{
    for (int dist = 0; dist < 2; dist++) {
        const char *args[] = {"layers=4", "d_model=256", "heads=4", "seq=128", "batch=8", "vocab=64",
                              "mesh=pipe:2,data:2", "microbatches=2", "param_dtype=f32", "tie=true",
                              dist ? "dist_opt=on" : "dist_opt=off", NULL};
        char *trace = gen_trace(args), *text = NULL;
        ck_assert(g_file_get_contents(trace, &text, NULL, NULL));
        char **lines = g_strsplit(text, "\n", -1);
        const char *adam = line_of(lines, "compute adamw ", " device=2");
        ck_assert_ptr_nonnull(adam);
        ck_assert_ptr_nonnull(strstr(adam, dist ? " bytes=27038976 " : " bytes=54077952 "));
        ck_assert_ptr_nonnull(strstr(adam, dist ? " dims=795264" : " dims=1590528"));
        ck_assert_int_eq(line_of(lines, "reduce-scatter grads_shard grads axis=data", " device=2") != NULL, dist);
        ck_assert_int_eq(line_of(lines, "all-gather params params_shard axis=data", " device=2") != NULL, dist);
        ck_assert_int_eq(line_of(lines, "all-reduce grads ", " device=2") != NULL, !dist);
        const char *permute = "collective-permute emb_peer emb_grads shift=";
        ck_assert_ptr_nonnull(line_of(lines, permute, "-1 axis=pipe device=0 stream=tie"));
        ck_assert_ptr_nonnull(line_of(lines, permute, "+1 axis=pipe device=2 stream=tie"));
        ck_assert_ptr_nonnull(line_of(lines, "alloc emb_peer 64KiB tag=grad dtype=f32", " device=2 stream=tie"));
        const char *add = line_of(lines, "compute tied_embedding_allreduce ", " device=2");
        ck_assert_ptr_nonnull(add);
        ck_assert_ptr_nonnull(strstr(add, " bytes=192KiB "));
        const char *embed = line_of(lines, "compute F.embed.mb0.embed ", " device=0");
        ck_assert_ptr_nonnull(embed);
        ck_assert_ptr_nonnull(strstr(embed, " bytes=256KiB "));
        g_strfreev(lines);
        g_free(text);
        g_unlink(trace);
        g_free(trace);
    }
}
END_TEST

/* The kernel's nominal flops of one compute line of a trace (0: none). */
static double line_flops(const char *line, bool *attention)
{
    const char *k = strstr(line, " kernel="), *d = strstr(line, " dims="), *mk = strstr(line, " mask=");
    *attention = false;
    if (!k || !d)
        return 0;
    char name[32] = "", mask[32] = "";
    sscanf(k + 8, "%31[a-z-]", name);
    if (mk)
        sscanf(mk + 6, "%31[a-z0-9-]", mask);
    uint64_t dims[6] = {0};
    uint32_t n = 0;
    for (const char *p = d + 6; n < 6; p++) {
        dims[n++] = g_ascii_strtoull(p, (char **)&p, 10);
        if (*p != 'x')
            break;
    }
    strata_kernel_problem pr = {.n_dims = n, .dims = dims};
    if (*mask)
        ck_assert(strata_kernel_mask_parse(mask, &pr.causal, &pr.window));
    double f = 0, bytes = 0;
    const strata_kernel_model *km = strata_kernel_find(name);
    ck_assert_ptr_nonnull(km);
    if (strcmp(name, "gemm") != 0 && strcmp(name, "flash-attention") != 0)
        return 0; /* elementwise, and the flash backward (counted as twice the forward below) */
    km->nominal(&pr, &f, &bytes);
    *attention = name[0] == 'f';
    return f;
}

/* Every gemm and attention of a pipelined step (two stages, two
 * microbatches, one device a stage) together are the model's count: a
 * model of 4 layers whose layers 0 and 2 attend over a window of 64 (1
 * and 3 globally), d 256, 4 heads of 64, 2 kv heads, SwiGLU 512,
 * vocabulary 256, batch 4 x 128. By hand: weights V d 65,536 + 4 x
 * (196,608 attention + 393,216 MLP) = 2,424,832, x 2 x 512 tokens =
 * 2,483,027,968; attention, per key 2 x 4 x 4 x 128 = 4,096: the local
 * layers (128 x 64 - 64^2 / 2) = 6,144 keys each, the global 128^2 / 2 =
 * 8,192: 4,096 x 28,672 = 117,440,512; x 3 = 7,801,405,440. The flash
 * backward is counted as the model counts it, twice its forward; zb-h1
 * defers only weight gradients (.dw) to W. */
START_TEST(pipeline_kernels_are_the_model_count)
{
    const char *schedules[] = {"schedule=1f1b", "schedule=zb-h1"};
    for (int sc = 0; sc < 2; sc++) {
        const char *args[] = {"layers=4", "d_model=256", "heads=4", "kv_heads=2", "ffn=512", "mlp=swiglu",
                              "norm=rmsnorm", "pos=rope", "sliding_window=64", "global_every=2", "seq=128",
                              "batch=4", "vocab=256", "mesh=pipe:2", "microbatches=2", "attention=flash",
                              "mask=causal", schedules[sc], NULL};
        char *trace = gen_trace(args), *text = NULL;
        ck_assert(g_file_get_contents(trace, &text, NULL, NULL));
        char **lines = g_strsplit(text, "\n", -1);
        double total = 0;
        guint windows = 0;
        for (char **l = lines; *l; l++) {
            if (!g_str_has_prefix(*l, "compute "))
                continue;
            bool attention = false;
            double f = line_flops(*l, &attention);
            total += attention ? 3 * f : f;
            windows += strstr(*l, " mask=window-64") != NULL;
            if (sc == 1 && g_str_has_prefix(*l, "compute W."))
                ck_assert_msg(strstr(*l, ".dw ") != NULL, "%s", *l);
            if (sc == 1 && g_str_has_prefix(*l, "compute B."))
                ck_assert_msg(strstr(*l, ".dw ") == NULL, "%s", *l);
        }
        ck_assert_double_eq(total, 7801405440.0);
        ck_assert_uint_eq(windows, 2 * 2 * 2); /* two local layers, two microbatches, forward and back */
        g_strfreev(lines);
        g_free(text);
        g_unlink(trace);
        g_free(trace);
    }
}
END_TEST

/* pipe x expert: a MoE model (4 layers, all MoE: 4 experts of SwiGLU 128,
 * top 2; d 256, 4 heads of 64, vocabulary 256; batch 8 x 128) on
 * pipe:2,data:2,expert:2, 2 microbatches: a device's microbatch is 8 / (2
 * x 2 x 2) = 1 sequence, T = 128 tokens. By hand:
 *   all-to-alls  per MoE layer and microbatch two forward (dispatch, back)
 *                and two backward, each of T k d = 128 x 2 x 256 bf16 =
 *                131,072 B; a stage's 2 layers x 2 microbatches x 4, once
 *                per expert group (2 a stage): 32 a stage, 64 in all;
 *   parameters   stage 0: 2 layers of attention 262,144 + norms 512 +
 *                router 1,024 + experts 4 x 98,304, and the embedding
 *                65,536: 1,379,328, less half its experts' 786,432 (each
 *                device of an expert group holds 2 of the 4): 986,112 x 2
 *                B = 1,972,224 B = 1926 KiB; the experts' gradients
 *                393,216 x 2 B = 768 KiB, reduced over data alone, the
 *                rest's 592,896 x 2 B = 1158 KiB over data x expert;
 *   flops        the gemms and attention of all 8 devices: the model's
 *                count for the whole batch, 3 x (2 x 1,024 tokens x
 *                (65,536 + 4 x (262,144 + 1,024 + 2 x 98,304)) + 4 x 2 x 8
 *                x 4 x 128 x 128^2 / 2) = 12,507,414,528. */
START_TEST(pipe_with_expert_axis)
{
    const char *args[] = {"layers=4", "d_model=256", "heads=4", "seq=128", "batch=8", "vocab=256", "experts=4",
                          "top_k=2", "moe_ffn=128", "mlp=swiglu", "norm=rmsnorm", "pos=rope",
                          "mesh=pipe:2,data:2,expert:2", "microbatches=2", "attention=flash", "mask=causal", NULL};
    char *trace = gen_trace(args), *text = NULL;
    ck_assert(g_file_get_contents(trace, &text, NULL, NULL));
    ck_assert_msg(strstr(text, "alloc params 1926KiB tag=param dtype=bf16 device=0\n"), "%s", trace);
    ck_assert(strstr(text, "alloc grads 1158KiB tag=grad dtype=bf16 device=0\n"));
    ck_assert(strstr(text, "alloc grads_experts 768KiB tag=grad dtype=bf16 device=0\n"));
    ck_assert(strstr(text, "all-reduce grads axis=data,expert device=0\n"));
    ck_assert(strstr(text, "all-reduce grads_experts axis=data device=0\n"));
    char **lines = g_strsplit(text, "\n", -1);
    double total = 0;
    for (char **l = lines; *l; l++) {
        bool attention = false;
        double f = g_str_has_prefix(*l, "compute ") ? line_flops(*l, &attention) : 0;
        total += attention ? 3 * f : f;
    }
    ck_assert_double_eq(total, 12507414528.0);
    g_strfreev(lines);
    g_free(text);
    JsonParser *p = strata_test_run_results(HW, trace);
    JsonArray *cs = json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "collectives");
    guint a2a = 0;
    for (guint i = 0; i < json_array_get_length(cs); i++) {
        JsonObject *c = json_array_get_object_element(cs, i);
        if (strcmp(json_object_get_string_member(c, "op"), "all-to-all") != 0)
            continue;
        ck_assert_str_eq(json_object_get_string_member(c, "axis"), "expert");
        ck_assert_uint_eq(json_object_get_int_member(c, "bytes"), 131072);
        a2a++;
    }
    ck_assert_uint_eq(a2a, 64);
    g_object_unref(p);
    g_unlink(trace);
    g_free(trace);
}
END_TEST

/* What a pipe axis still refuses, each with exit status 2 and the reason:
 * context (no ring in the stages), fsdp beside expert, capacity and
 * imbalance (its MoE layers route evenly), a batch that data x expert x
 * microbatches does not divide. */
START_TEST(pipe_refusals)
{
    static const struct {
        const char *mesh, *extra, *said;
    } cases[] = {
        {"mesh=pipe:2,context:2", "microbatches=2", "context axis is not modelled"},
        {"mesh=pipe:2,fsdp:2,expert:2", "microbatches=2", "takes data (dp), not fsdp"},
        {"mesh=pipe:2,expert:2", "capacity_factor=1.5", "capacity_factor and imbalance are not modelled"},
        {"mesh=pipe:2,data:2,expert:2", "microbatches=4", "data x expert x microbatches (16)"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *argv[] = {"gen", "transformer", "layers=4", "d_model=256", "heads=4", "seq=128", "batch=8",
                              "vocab=256", "experts=4", "top_k=2", "attention=flash", cases[i].mesh,
                              cases[i].extra, NULL};
        strata_cli_result r = strata_test_run_cli(argv);
        ck_assert_int_eq(r.status, 2);
        ck_assert_msg(strstr(r.err, cases[i].said), "%s: %s", cases[i].mesh, r.err);
        strata_cli_result_clear(&r);
    }
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
    tcase_add_test(tc, one_stage_program_replays);
    tcase_add_test(tc, layer_ops_of_a_small_layer);
    tcase_add_test(tc, layer_ops_fp8_casts);
    tcase_add_test(tc, pipe_optimizer_and_tied_embedding);
    tcase_add_test(tc, pipeline_kernels_are_the_model_count);
    tcase_add_test(tc, pipe_with_expert_axis);
    tcase_add_test(tc, pipe_refusals);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(pipeline_suite()); }
