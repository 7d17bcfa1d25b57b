/*
 * test_workload.c: the trace generators (models/workload/): the registry,
 * parameter errors, and figures worked out by hand for small instances
 * (flops, argument and output bytes, op counts of the matmul pipeline), the
 * tagged trace each emits, and what rematerialization does to the peak.
 */
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "core/error.h"
#include "engine/engine.h"
#include "hw/hw.h"
#include "trace/check.h"
#include "workload/workload.h"

typedef struct trace_stats {
    uint64_t ops, allocs, frees, computes, copies, records, waits;
    double flops;
    uint64_t live, peak;           /* default (device) memory, bytes */
    uint64_t live_at_start;        /* before the first compute or copy */
    bool started;
    GHashTable *sizes;             /* live name -> size */
    GHashTable *memories;          /* live name -> memory name or "" */
    GHashTable *tags_live;         /* live name -> tag */
    uint64_t by_memory_peak_vmem;
    uint64_t live_vmem;
    uint64_t donates;
    uint64_t computes_named_prefix;
} trace_stats;

/* Walks a source through the checker and sums what the tests assert. */
static trace_stats walk(strata_source *src)
{
    trace_stats s = {0};
    s.sizes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    s.memories = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    s.tags_live = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    strata_checker *c = strata_checker_new(strata_source_origin(src));
    const strata_op *op;
    GError *err = NULL;
    int r;
    while ((r = strata_source_next(src, &op, &err)) == 1) {
        ck_assert_msg(strata_checker_feed(c, op, NULL, &err), "checker: %s", err ? err->message : "?");
        s.ops++;
        switch (op->kind) {
        case STRATA_OP_ALLOC: {
            s.allocs++;
            g_hash_table_insert(s.sizes, g_strdup(op->name), GSIZE_TO_POINTER(op->size));
            g_hash_table_insert(s.memories, g_strdup(op->name), g_strdup(op->memory ? op->memory : ""));
            g_hash_table_insert(s.tags_live, g_strdup(op->name), GINT_TO_POINTER(op->tag));
            bool device = !op->memory || strcmp(op->memory, "hbm") == 0;
            if (device) {
                s.live += op->size;
                if (s.live > s.peak)
                    s.peak = s.live;
                if (!s.started)
                    s.live_at_start += op->size;
            } else if (strcmp(op->memory, "vmem") == 0) {
                s.live_vmem += op->size;
                if (s.live_vmem > s.by_memory_peak_vmem)
                    s.by_memory_peak_vmem = s.live_vmem;
            }
            break;
        }
        case STRATA_OP_FREE: {
            s.frees++;
            uint64_t size = GPOINTER_TO_SIZE(g_hash_table_lookup(s.sizes, op->name));
            const char *m = g_hash_table_lookup(s.memories, op->name);
            if (m && (!*m || strcmp(m, "hbm") == 0))
                s.live -= size;
            else if (m && strcmp(m, "vmem") == 0)
                s.live_vmem -= size;
            g_hash_table_remove(s.sizes, op->name);
            g_hash_table_remove(s.memories, op->name);
            g_hash_table_remove(s.tags_live, op->name);
            break;
        }
        case STRATA_OP_COMPUTE:
            s.started = true;
            s.computes++;
            s.flops += op->has_flops ? op->flops : 0;
            s.donates += op->n_donates;
            break;
        case STRATA_OP_COPY:
            s.started = true;
            s.copies++;
            break;
        case STRATA_OP_RECORD: s.records++; break;
        case STRATA_OP_WAIT: s.waits++; break;
        default: break;
        }
    }
    ck_assert_msg(r == 0, "source: %s", err ? err->message : "?");
    strata_checker_free(c);
    return s;
}

static void stats_clear(trace_stats *s)
{
    g_hash_table_destroy(s->sizes);
    g_hash_table_destroy(s->memories);
    g_hash_table_destroy(s->tags_live);
}

static strata_source *gen(const char *name, const char *const *args)
{
    GError *err = NULL;
    strata_source *src = strata_workload_generate(name, args, &err);
    ck_assert_msg(src != NULL, "%s: %s", name, err ? err->message : "?");
    return src;
}

static uint64_t live_bytes_with_tag(const trace_stats *s, strata_tag tag)
{
    uint64_t total = 0;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, s->tags_live);
    while (g_hash_table_iter_next(&it, &k, &v))
        if (GPOINTER_TO_INT(v) == (int)tag)
            total += GPOINTER_TO_SIZE(g_hash_table_lookup(s->sizes, k));
    return total;
}

/* strata_workload_check() accepts exactly what generate accepts, with
 * the same message, without building the workload: a sweep validates its
 * axis values with it. */
START_TEST(check_agrees_with_generate)
{
    static const char *const cases[][7] = {
        {"scan-mlp", "layers=3", NULL},
        {"scan-mlp", "layers=0", NULL},
        {"scan-mlp", "layers=1000001", NULL},
        {"scan-mlp", "dim=4294967296", "batch=4294967296", NULL},
        {"adam-mlp", "layers=2", "dim=64", "batch=8", NULL},
        {"adam-mlp", "dim=-1", NULL},
        {"transformer", "layers=2", "d_model=64", "heads=4", NULL},
        {"transformer", "d_model=65", "heads=4", NULL},
        {"transformer", "mesh=data:8", "sharding=fsdp", "batch=4", NULL},
        {"transformer", "mesh=data:8", "sharding=dp", "batch=8", "layers=1", NULL},
        {"transformer", "layers=2000000", NULL},
        {"matmul", "bm=3", NULL},
        {"collective", "op=all-gather", "bytes=1000", "devices=8", NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        GError *gen_err = NULL, *check_err = NULL;
        strata_source *src = strata_workload_generate(cases[i][0], &cases[i][1], &gen_err);
        bool ok = strata_workload_check(cases[i][0], &cases[i][1], &check_err);
        ck_assert_msg(ok == (src != NULL), "case %zu (%s %s): check %d, generate %d", i, cases[i][0], cases[i][1],
                      ok, src != NULL);
        if (!ok)
            ck_assert_str_eq(check_err->message, gen_err->message);
        if (src)
            strata_source_free(src);
        g_clear_error(&gen_err);
        g_clear_error(&check_err);
    }
    /* the cases hold both verdicts, so the test can fail either way */
    GError *err = NULL;
    const char *const good[] = {"layers=3", NULL}, *const bad[] = {"layers=0", NULL};
    ck_assert(strata_workload_check("scan-mlp", good, NULL));
    ck_assert(!strata_workload_check("scan-mlp", bad, &err));
    ck_assert(strstr(err->message, "layers"));
    g_error_free(err);
}
END_TEST

START_TEST(registry_lists_and_rejects)
{
    char *names = strata_workload_type_names();
    ck_assert_str_eq(names, "scan-mlp, adam-mlp, matmul, transformer, collective");
    g_free(names);
    GError *err = NULL;
    ck_assert_ptr_null(strata_workload_generate("resnet", NULL, &err));
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_msg(strstr(err->message, "scan-mlp, adam-mlp, matmul, transformer"), "%s", err->message);
    g_clear_error(&err);
    const char *bad_key[] = {"layerz=3", NULL};
    ck_assert_ptr_null(strata_workload_generate("scan-mlp", bad_key, &err));
    ck_assert_msg(strstr(err->message, "layerz") && strstr(err->message, "hidden"), "%s", err->message);
    g_clear_error(&err);
    const char *zero[] = {"layers=0", NULL};
    ck_assert_ptr_null(strata_workload_generate("scan-mlp", zero, &err));
    ck_assert_msg(strstr(err->message, "layers >= 1"), "%s", err->message);
    g_clear_error(&err);
    const char *dtype[] = {"dtype=f13", NULL};
    ck_assert_ptr_null(strata_workload_generate("matmul", dtype, &err));
    g_clear_error(&err);
    const char *noeq[] = {"layers", NULL};
    ck_assert_ptr_null(strata_workload_generate("scan-mlp", noeq, &err));
    ck_assert_msg(strstr(err->message, "key=value"), "%s", err->message);
    g_clear_error(&err);
}
END_TEST

/* scan-mlp batch=8 dim=16 hidden=32 layers=2 bf16: every matmul is
 * 2*8*16*32 = 8192 flops; forward 4 of them, backward 4 for layer 1 and 3 for
 * layer 0 (no gradient for x), plus sum and its gradient (8*16 each):
 * 11 * 8192 + 256 = 90368 flops; x is first copied into the loop carry
 * h_0 (no flops). Arguments: x 8*16*2 = 256 B and four
 * 16x32 bf16 weights of 1 KiB: 4352 B. Outputs: four weight gradients, 4 KiB. */
START_TEST(scan_mlp_by_hand)
{
    const char *args[] = {"batch=8", "dim=16", "hidden=32", "layers=2", NULL};
    strata_source *src = gen("scan-mlp", args);
    trace_stats s = walk(src);
    ck_assert_double_eq(s.flops, 90368.0);
    ck_assert_uint_eq(s.live_at_start, 4352);
    ck_assert_uint_eq(s.computes, 1 + 1 + 11 + 2); /* program_start, carry_init, 11 matmuls, sum and its vjp */
    ck_assert_uint_eq(live_bytes_with_tag(&s, STRATA_TAG_GRAD), 4096);
    ck_assert_uint_eq(live_bytes_with_tag(&s, STRATA_TAG_ACTIVATION), 0); /* all consumed by backward */
    ck_assert_uint_eq(live_bytes_with_tag(&s, STRATA_TAG_PARAM), 4096);
    ck_assert_uint_eq(s.live, 4352 + 4096);
    stats_clear(&s);
    /* rewinding gives the same stream */
    GError *err = NULL;
    ck_assert(strata_source_rewind(src, &err));
    trace_stats again = walk(src);
    ck_assert_uint_eq(again.ops, s.ops);
    ck_assert_uint_eq(again.peak, s.peak);
    stats_clear(&again);
    strata_source_free(src);
}
END_TEST

/* batch 4096, dim 256, hidden 1024, 8 layers, bf16: the forward pass saves
 * y_i (4096x1024x2 = 8 MiB) and h_{i+1} (2 MiB) per layer, far more than the
 * weights (512 KiB each); full remat keeps only h_i and recomputes y_i. So
 * remat=full has the lower peak and more flops (one extra x@w1 per layer:
 * 2*4096*256*1024). */
START_TEST(scan_mlp_remat_trades_flops_for_memory)
{
    const char *none[] = {"batch=4096", "dim=256", "hidden=1024", NULL};
    const char *full[] = {"batch=4096", "dim=256", "hidden=1024", "remat=full", NULL};
    strata_source *a = gen("scan-mlp", none), *b = gen("scan-mlp", full);
    trace_stats sa = walk(a), sb = walk(b);
    ck_assert_uint_lt(sb.peak, sa.peak);
    ck_assert_double_eq_tol(sb.flops - sa.flops, 8 * 2.0 * 4096 * 256 * 1024, 1.0);
    /* saved per layer without remat: y_i, and h_{i+1} for i < 7 -- at least 7 x 8 MiB more */
    ck_assert_uint_ge(sa.peak - sb.peak, 7 * 8 * 1048576u);
    /* arguments: x (4096x256) and 8 layers of two 256x1024 bf16 weights */
    ck_assert_uint_eq(sa.live_at_start, 4096 * 256 * 2 + 8 * 2 * 256 * 1024 * 2);
    stats_clear(&sa);
    stats_clear(&sb);
    strata_source_free(a);
    strata_source_free(b);
}
END_TEST

/* adam-mlp dim=32 batch=16 layers=3 f32: arguments x 16*32*4 = 2 KiB,
 * 3 weights and 6 optimizer-state buffers of 32*32*4 = 4 KiB and the 4-byte
 * step count: 38 KiB + 4; each update donates w, m, v and the count's
 * increment donates it (10 donations); outputs new_w, new_m, new_v,
 * new_count. */
START_TEST(adam_mlp_by_hand)
{
    const char *args[] = {"dim=32", "batch=16", "layers=3", NULL};
    strata_source *src = gen("adam-mlp", args);
    trace_stats s = walk(src);
    ck_assert_uint_eq(s.live_at_start, 2048 + 9 * 4096 + 4);
    ck_assert_uint_eq(s.donates, 10);
    ck_assert_uint_eq(live_bytes_with_tag(&s, STRATA_TAG_OPTSTATE), 12 * 4096 + 8); /* old (arguments) and new */
    ck_assert_uint_eq(live_bytes_with_tag(&s, STRATA_TAG_GRAD), 0);          /* consumed by the update */
    /* flops: forward 3 x (2*16*32*32 + 12*16*32), loss 3*512 + 2*3*1024,
     * backward: gelu' 20*512 x3, dW 3 x 32768, dh 2 x 32768, L2 grad 3 x 2048,
     * norm 2*3*1024, count 1, updates 16*1024 x3 */
    double fwd = 3 * (32768.0 + 12 * 512), loss = 3 * 512 + 2 * 3 * 1024.0;
    double bwd = 3 * 20 * 512.0 + 3 * 32768.0 + 2 * 32768.0 + 3 * 2048.0 + 3 * 512.0 /* d_h_L */;
    double opt = 2 * 3 * 1024.0 + 1 + 3 * 16 * 1024.0;
    ck_assert_double_eq_tol(s.flops, fwd + loss + bwd + opt, 0.5);
    stats_clear(&s);
    strata_source_free(src);
}
END_TEST

/* matmul m=n=k=256, bm=bn=bk=128: a 2x2x2 grid. 8 grid-step ops (no
 * flops), 8 MXU steps of 2*128^3 flops, 4 stores of 128*128; 16 block
 * copies in and 4 write-backs;
 * double buffering holds 2 A and 2 B blocks of 32 KiB, the f32 accumulator
 * (64 KiB) and 2 output blocks (32 KiB each) in VMEM: 256 KiB. */
START_TEST(matmul_pipeline_by_hand)
{
    const char *args[] = {"m=256", "n=256", "k=256", "bm=128", "bn=128", "bk=128", "buffers=2", NULL};
    strata_source *src = gen("matmul", args);
    trace_stats s = walk(src);
    ck_assert_uint_eq(s.computes, 1 + 8 + 8 + 4); /* program_start, 8 grid-step ops, 8 MXU steps, 4 stores */
    ck_assert_double_eq(s.flops, 8 * 2.0 * 128 * 128 * 128 + 4 * 128.0 * 128);
    ck_assert_uint_eq(s.copies, 16 + 4);
    ck_assert_uint_eq(s.by_memory_peak_vmem, 4 * 32768 + 65536 + 2 * 32768);
    ck_assert_uint_eq(s.live_at_start, 2 * 256 * 256 * 2); /* A and B */
    stats_clear(&s);
    strata_source_free(src);

    const char *single[] = {"m=256", "n=256", "k=256", "bm=128", "bn=128", "bk=128", "buffers=1", NULL};
    src = gen("matmul", single);
    s = walk(src);
    ck_assert_uint_eq(s.by_memory_peak_vmem, 2 * 32768 + 65536 + 32768);
    stats_clear(&s);
    strata_source_free(src);

    GError *err = NULL;
    const char *bad[] = {"m=100", "bm=64", NULL};
    ck_assert_ptr_null(strata_workload_generate("matmul", bad, &err));
    ck_assert_msg(strstr(err->message, "bm to divide m"), "%s", err->message);
    g_clear_error(&err);
}
END_TEST

/* The transformer: heads must divide d_model; remat=full lowers the
 * activation peak below remat=dots, which is below none, when activations
 * dominate (long sequences, small model); flops go the other way. */
START_TEST(transformer_remat_order)
{
    GError *err = NULL;
    const char *bad[] = {"d_model=100", "heads=3", NULL};
    ck_assert_ptr_null(strata_workload_generate("transformer", bad, &err));
    ck_assert_msg(strstr(err->message, "heads to divide d_model"), "%s", err->message);
    g_clear_error(&err);
    const char *none[] = {"layers=4", "d_model=64", "heads=4", "seq=256", "batch=4", "vocab=256", NULL};
    const char *dots[] = {"layers=4", "d_model=64", "heads=4", "seq=256", "batch=4", "vocab=256", "remat=dots", NULL};
    const char *full[] = {"layers=4", "d_model=64", "heads=4", "seq=256", "batch=4", "vocab=256", "remat=full", NULL};
    strata_source *a = gen("transformer", none), *b = gen("transformer", dots), *c = gen("transformer", full);
    trace_stats sa = walk(a), sb = walk(b), sc = walk(c);
    ck_assert_uint_lt(sc.peak, sb.peak);
    ck_assert_uint_lt(sb.peak, sa.peak);
    ck_assert(sa.flops < sb.flops && sb.flops < sc.flops);
    /* every parameter is donated with its two optimizer-state buffers */
    ck_assert_uint_eq(sa.donates, 3 * (2 + 4 * 6 + 1));
    stats_clear(&sa);
    stats_clear(&sb);
    stats_clear(&sc);
    strata_source_free(a);
    strata_source_free(b);
    strata_source_free(c);
}
END_TEST


/* ---- the kernel timing model on configs/hw (engine) --------------------- */

/* Runs `gen matmul ARGS` on configs/hw/HW.ini with spans. */
static strata_results *run_matmul(const char *hw_name, const char *const *args)
{
    char *rel = g_strdup_printf("configs/hw/%s.ini", hw_name);
    char *path = strata_test_source_path(rel);
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    ck_assert_msg(hw != NULL, "%s: %s", path, err ? err->message : "?");
    strata_engine_options opt;
    strata_engine_options_init(&opt);
    opt.record_spans = true;
    strata_results *r = NULL;
    strata_source *src = gen("matmul", args);
    ck_assert_msg(strata_engine_run(hw, src, &opt, &r, &err), "%s", err ? err->message : "?");
    strata_source_free(src);
    strata_hw_free(hw);
    g_free(rel);
    g_free(path);
    return r;
}

/* The first span of an op of that kind and label. */
static const strata_op_span *span(const strata_results *r, const char *label, strata_op_kind kind)
{
    for (guint i = 0; i < r->spans->len; i++) {
        const strata_op_span *sp = &g_array_index(r->spans, strata_op_span, i);
        if (sp->label && sp->kind == kind && strcmp(sp->label, label) == 0)
            return sp;
    }
    ck_abort_msg("no span %s", label);
    return NULL;
}

static void assert_us(double got_s, double want_us, const char *what)
{
    ck_assert_msg(fabs(got_s * 1e6 - want_us) < 1e-3, "%s: got %.6f us, want %.6f us", what, got_s * 1e6, want_us);
}

/* tpu-v5e, 512x1024x1024 blocks (A block 1 MiB, B block 2 MiB, bf16), grid
 * 2x1x2. Step 0_0_0 pays the kernel launch (2 us) and its grid-step
 * overhead (0.35 us); every later step 0.35 us. Both first fetches start at
 * 0 on dma-vmem (819 GB/s, shared, 0.35 us latency): they share the link
 * until A lands at 0.35 + 1 MiB / 409.5 GB/s = 2.91062 us, then B's last
 * MiB runs alone: 4.19093 us. So main, at 2.35 us after the step op, waits
 * 0.56062 us for A and 1.28031 us for B: the DMA wait. An MXU step is
 * 2 x 512 x 1024 x 1024 / 197 TFLOP/s = 5.45030 us (no MXU padding: 512 and
 * 1024 are multiples of 128). Step 0_0_1's blocks were fetched during the
 * first MXU step (4.19 us of DMA under 5.45 us): it does not wait. */
START_TEST(matmul_timeline_v5e)
{
    const char *args[] = {"m=1024", "n=1024", "k=2048", "bm=512", "bn=1024", "bk=1024", NULL};
    strata_results *r = run_matmul("tpu-v5e", args);
    const strata_op_span *st = span(r, "step_0_0_0", STRATA_OP_COMPUTE);
    assert_us(st->end_s - st->start_s, 2.35, "first step: launch + overhead");
    st = span(r, "step_0_0_1", STRATA_OP_COMPUTE);
    assert_us(st->end_s - st->start_s, 0.35, "grid-step overhead");
    const strata_op_span *wa = span(r, "a_ready_0", STRATA_OP_WAIT);
    const strata_op_span *wb = span(r, "b_ready_0", STRATA_OP_WAIT);
    assert_us(wa->start_s, 2.35, "wait for A from");
    assert_us(wa->end_s, 0.35 + 1048576 / 409.5e3, "A lands");
    assert_us(wb->end_s, 0.35 + 1048576 / 409.5e3 + 1048576 / 819e3, "B lands");
    const strata_op_span *mx = span(r, "mxu_0_0_0", STRATA_OP_COMPUTE);
    assert_us(mx->end_s - mx->start_s, 2.0 * 512 * 1024 * 1024 / 197e6, "MXU step");
    const strata_op_span *w1 = span(r, "a_ready_1", STRATA_OP_WAIT);
    assert_us(w1->end_s - w1->start_s, 0, "second step's DMA wait");
    strata_results_free(r);
}
END_TEST

/* tpu-v6e's MXU is 256x256: a 128x128x128 block fills a quarter of it, so an
 * MXU step costs 4 x 2 x 128^3 / 920 TFLOP/s = 18.2361 ns; on tpu-v5e
 * (128x128) the same step is 2 x 128^3 / 197 TFLOP/s = 21.2906 ns. */
static const struct { const char *hw; double step_us; } mxu_cases[] = {
    {"tpu-v6e", 4 * 2.0 * 128 * 128 * 128 / 920e6},
    {"tpu-v5e", 2.0 * 128 * 128 * 128 / 197e6},
};

START_TEST(matmul_mxu_padding)
{
    const char *args[] = {"m=128", "n=128", "k=128", "bm=128", "bn=128", "bk=128", NULL};
    strata_results *r = run_matmul(mxu_cases[_i].hw, args);
    const strata_op_span *mx = span(r, "mxu_0_0_0", STRATA_OP_COMPUTE);
    assert_us(mx->end_s - mx->start_s, mxu_cases[_i].step_us, mxu_cases[_i].hw);
    strata_results_free(r);
}
END_TEST

static Suite *workload_suite(void)
{
    Suite *s = suite_create("workload");
    TCase *tc = tcase_create("generators");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, registry_lists_and_rejects);
    tcase_add_test(tc, check_agrees_with_generate);
    tcase_add_test(tc, scan_mlp_by_hand);
    tcase_add_test(tc, scan_mlp_remat_trades_flops_for_memory);
    tcase_add_test(tc, adam_mlp_by_hand);
    tcase_add_test(tc, matmul_pipeline_by_hand);
    tcase_add_test(tc, matmul_timeline_v5e);
    tcase_add_loop_test(tc, matmul_mxu_padding, 0, G_N_ELEMENTS(mxu_cases));
    tcase_add_test(tc, transformer_remat_order);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(workload_suite()); }
