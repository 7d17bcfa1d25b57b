/*
 * test_cli_gen.c: `strata gen` and `strata transform` end to end, and the
 * policies' effects through `strata run` (one SimGrid engine per process:
 * each run is its own strata process), on cases worked out by hand:
 *  - stall time falls as the prefetch distance grows, until the link is
 *    saturated;
 *  - double buffering beats single buffering when DMA time ~ compute time;
 *  - offloading the optimizer state lowers the device peak (and the
 *    argument bytes) by its size;
 *  - transform output reads back and replays;
 *  - a rewrite's copies are named NAME:PLACE, and replay on one device and
 *    on eight.
 */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include "testutil.h"

static char *simple_hw(void) { return strata_test_source_path("configs/hw/test-simple.ini"); }

/* Runs `strata run` on trace with policies; returns the parsed results. */
static JsonObject *run_json(JsonParser **parser, const char *hw, const char *trace, const char *const *policies)
{
    char *dir = strata_test_temp_dir();
    char *json = g_build_filename(dir, "r.json", NULL);
    GPtrArray *args = g_ptr_array_new();
    g_ptr_array_add(args, (gpointer) "run");
    g_ptr_array_add(args, (gpointer) "--hw");
    g_ptr_array_add(args, (gpointer)hw);
    g_ptr_array_add(args, (gpointer) "--trace");
    g_ptr_array_add(args, (gpointer)trace);
    for (const char *const *p = policies; p && *p; p++) {
        g_ptr_array_add(args, (gpointer) "--policy");
        g_ptr_array_add(args, (gpointer)*p);
    }
    g_ptr_array_add(args, (gpointer) "--json");
    g_ptr_array_add(args, (gpointer)json);
    g_ptr_array_add(args, (gpointer) "--quiet");
    g_ptr_array_add(args, NULL);
    strata_cli_result r = strata_test_run_cli((const char *const *)args->pdata);
    ck_assert_msg(r.status == 0, "run status %d: %s", r.status, r.err);
    *parser = json_parser_new();
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_file(*parser, json, &err), "%s", err ? err->message : "?");
    strata_cli_result_clear(&r);
    g_ptr_array_free(args, TRUE);
    g_unlink(json);
    g_rmdir(dir);
    g_free(json);
    g_free(dir);
    return json_node_get_object(json_parser_get_root(*parser));
}

static double stream_stall(JsonObject *o, const char *stream)
{
    JsonObject *streams = json_object_get_object_member(o, "streams");
    return json_object_get_double_member(json_object_get_object_member(streams, stream), "stall_s");
}

static JsonObject *memory(JsonObject *o, const char *name)
{
    return json_object_get_object_member(json_object_get_object_member(o, "memories"), name);
}

#define ASSERT_NEAR_REL(got, want, rel) \
    ck_assert_msg(fabs((got) - (want)) <= (rel) * fabs(want) + 1e-12, "got %.9g, want %.9g", (double)(got), (double)(want))
#include <math.h>

START_TEST(gen_help_lists_workloads_and_parameters)
{
    strata_cli_result r = strata_test_cli("gen", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    const char *must[] = {"scan-mlp", "adam-mlp", "matmul", "transformer", "batch", "hidden", "remat", "buffers",
                          "bk", "d_model", "heads", "--output", "--list"};
    for (size_t i = 0; i < G_N_ELEMENTS(must); i++)
        ck_assert_msg(strstr(r.out, must[i]), "missing %s in:\n%s", must[i], r.out);
    strata_cli_result_clear(&r);
    r = strata_test_cli("transform", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    const char *pol[] = {"prefetch=N", "nbuffer=N", "pad", "offload=", "donate", "batch-copies=SIZE",
                         "transfer-guard=", "--trace", "--policy", "--hw", "--output"};
    for (size_t i = 0; i < G_N_ELEMENTS(pol); i++)
        ck_assert_msg(strstr(r.out, pol[i]), "missing %s in:\n%s", pol[i], r.out);
    strata_cli_result_clear(&r);
}
END_TEST

START_TEST(gen_errors_exit_2)
{
    strata_cli_result r = strata_test_cli("gen", "resnet", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "unknown workload 'resnet'") && strstr(r.err, "scan-mlp, adam-mlp, matmul, transformer"),
                  "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("gen", "scan-mlp", "layerz=2", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "layerz"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("gen", "matmul", "m=100", "bm=64", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "bm to divide m"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("gen", "scan-mlp", "-o", "/nonexistent-dir/x.trace", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.out, "");
    strata_cli_result_clear(&r);
    r = strata_test_cli("gen", NULL);
    ck_assert_int_eq(r.status, 2);
    strata_cli_result_clear(&r);
}
END_TEST

/* gen writes a trace that reads back (strata check), byte-identical each time. */
START_TEST(gen_writes_deterministic_traces)
{
    char *dir = strata_test_temp_dir();
    char *a = g_build_filename(dir, "a.trace", NULL), *b = g_build_filename(dir, "b.trace", NULL);
    strata_cli_result r = strata_test_cli("gen", "transformer", "layers=2", "d_model=32", "heads=4", "seq=16",
                                          "batch=2", "vocab=64", "remat=dots", "-o", a, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("gen", "transformer", "layers=2", "d_model=32", "heads=4", "seq=16", "batch=2", "vocab=64",
                        "remat=dots", "-o", b, NULL);
    ck_assert_int_eq(r.status, 0);
    strata_cli_result_clear(&r);
    char *ta, *tb;
    ck_assert(g_file_get_contents(a, &ta, NULL, NULL) && g_file_get_contents(b, &tb, NULL, NULL));
    ck_assert_str_eq(ta, tb);
    ck_assert_msg(g_str_has_prefix(ta, "strata-trace 1\n# strata gen transformer layers=2 d_model=32"), "%.200s", ta);
    ck_assert(strstr(ta, "tag=activation") && strstr(ta, "tag=optstate") && strstr(ta, "donate="));
    r = strata_test_cli("check", "--trace", a, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("gen", "scan-mlp", "batch=2", "dim=4", "hidden=8", "layers=1", NULL); /* stdout */
    ck_assert_int_eq(r.status, 0);
    ck_assert(g_str_has_prefix(r.out, "strata-trace 1\n"));
    strata_cli_result_clear(&r);
    g_free(ta);
    g_free(tb);
    g_unlink(a);
    g_unlink(b);
    g_rmdir(dir);
    g_free(a);
    g_free(b);
    g_free(dir);
}
END_TEST

/* Five 1 ms computes, then a 56 MB copy over test-simple's 16 GB/s link
 * (3.5 ms + 1 us latency) used by the sixth compute, then a seventh.
 *   prefetch=0: 5 + 3.501 + 2 = 10.501 ms, the copy on the main stream;
 *   prefetch=N: the copy starts with compute 5-N, at (5-N) ms, ends at
 *   8.501-N ms; compute 5 starts at max(5, 8.501-N): main stalls
 *   3.501-N ms (N <= 3) and the makespan is 12.501-N ms, down to 7 ms once
 *   the copy is hidden (N >= 4). */
START_TEST(prefetch_stall_falls_with_distance)
{
    char *trace = strata_test_write_temp("pf-XXXXXX.trace",
                                         "strata-trace 1\nalloc w 56000000 host\nalloc x 1000\n"
                                         "compute c0 time=1ms in=x out=x\ncompute c1 time=1ms in=x out=x\n"
                                         "compute c2 time=1ms in=x out=x\ncompute c3 time=1ms in=x out=x\n"
                                         "compute c4 time=1ms in=x out=x\nalloc wd 56000000\ncopy wd w\n"
                                         "compute c5 time=1ms in=wd,x out=x\ncompute c6 time=1ms in=x out=x\n");
    char *hw = simple_hw();
    const double makespan[] = {10.501e-3, 9.501e-3, 8.501e-3, 7.501e-3, 7.0e-3, 7.0e-3};
    const double stall[] = {0, 2.501e-3, 1.501e-3, 0.501e-3, 0, 0};
    double last_stall = 1;
    for (int n = 0; n <= 5; n++) {
        char spec[32];
        g_snprintf(spec, sizeof spec, "prefetch=%d", n);
        const char *pol[] = {spec, NULL};
        JsonParser *p;
        JsonObject *o = run_json(&p, hw, trace, pol);
        ASSERT_NEAR_REL(json_object_get_double_member(o, "makespan_s"), makespan[n], 1e-3);
        double s = stream_stall(o, "main");
        ASSERT_NEAR_REL(s, stall[n], 1e-3);
        if (n >= 2) /* with n = 0 the copy runs on main itself: busy, not stalled */
            ck_assert(s <= last_stall);
        last_stall = s;
        g_object_unref(p);
    }
    g_free(trace);
    g_free(hw);
}
END_TEST

/* A copy issued early in the trace, on main, three computes before its
 * first use: as written main runs the 16 MB copy itself (1.001 ms) and then
 * three 1 ms computes, 4.001 ms; prefetch=1 moves it to the prefetch stream
 * and the wait to its first use (c2), so it overlaps c0 and c1: 3 ms. */
START_TEST(prefetch_waits_at_first_use)
{
    char *trace = strata_test_write_temp("early-XXXXXX.trace",
                                         "strata-trace 1\nalloc w 16000000 host\nalloc x 1000\nalloc wd 16000000\n"
                                         "copy wd w\ncompute c0 time=1ms in=x out=x\ncompute c1 time=1ms in=x out=x\n"
                                         "compute c2 time=1ms in=wd,x out=x\n");
    char *hw = simple_hw();
    const char *specs[] = {"prefetch=0", "prefetch=1"};
    const double want[] = {4.001e-3, 3.0e-3};
    for (int i = 0; i < 2; i++) {
        const char *pol[] = {specs[i], NULL};
        JsonParser *p;
        JsonObject *o = run_json(&p, hw, trace, pol);
        ASSERT_NEAR_REL(json_object_get_double_member(o, "makespan_s"), want[i], 1e-3);
        g_object_unref(p);
    }
    strata_cli_result r = strata_test_cli("transform", "--trace", trace, "--policy", "prefetch=1", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "compute c1 in=x out=x time=1ms\nwait pf0.done\ncompute c2"), "%s", r.out);
    strata_cli_result_clear(&r);
    g_free(trace);
    g_free(hw);
}
END_TEST

/* Six layers, each a 32 MB copy (2 ms + 1 us at 16 GB/s) feeding a 1 ms
 * compute: the link needs 2.001 ms per layer, more than the compute, so once
 * copies overlap computes the link is saturated: prefetch=1 and prefetch=4
 * give the same 6 x 2.001 + 1 = 13.006 ms, against 6 x 3.001 = 18.006 ms
 * without prefetching. */
START_TEST(prefetch_saturates_the_link)
{
    GString *t = g_string_new("strata-trace 1\n");
    for (int i = 0; i < 6; i++)
        g_string_append_printf(t, "alloc w%d 32000000 host\n", i);
    for (int i = 0; i < 6; i++)
        g_string_append_printf(t, "alloc d%d 32000000\ncopy d%d w%d\ncompute c%d time=1ms in=d%d\nfree d%d\n", i, i, i,
                               i, i, i);
    char *trace = strata_test_write_temp("sat-XXXXXX.trace", t->str);
    char *hw = simple_hw();
    const char *specs[] = {"prefetch=0", "prefetch=1", "prefetch=4"};
    const double want[] = {18.006e-3, 13.006e-3, 13.006e-3};
    for (int i = 0; i < 3; i++) {
        const char *pol[] = {specs[i], NULL};
        JsonParser *p;
        JsonObject *o = run_json(&p, hw, trace, pol);
        ASSERT_NEAR_REL(json_object_get_double_member(o, "makespan_s"), want[i], 1e-3);
        g_object_unref(p);
    }
    g_string_free(t, TRUE);
    g_free(trace);
    g_free(hw);
}
END_TEST

/* A toy TPU core with round numbers: HBM -> VMEM DMA at 65.536 GB/s, so a
 * 128x128 bf16 block (32 KiB) takes 0.5 us and a step's two blocks 1 us; the
 * MXU at 4.194304 TFLOP/s does a step's 2*128^3 flops in 1 us. For the
 * 2x2x2 grid of matmul m=n=k=256 with 128 blocks, single buffering
 * serialises 8 x (1 + 1) us = at least 16 us; double buffering overlaps the
 * fetches with the MXU: the link's 8 x 1 us of fetches plus 4 x 0.5 us of
 * write-backs bound it, about 10-11 us. Triple buffering cannot beat the link. */
START_TEST(double_buffering_beats_single)
{
    char *hw = strata_test_write_temp("toy-XXXXXX.ini",
                                      "[hardware]\nname = toy-tpu\nsource = test: round numbers\ndefault_memory = hbm\n"
                                      "[memory hbm]\nkind = device\ncapacity = 1GiB\nbandwidth = 1000TB/s\n"
                                      "[memory vmem]\nkind = onchip\ncapacity = 16MiB\nbandwidth = 1000TB/s\n"
                                      "[link dma]\nbetween = hbm vmem\nbandwidth = 65.536GB/s\nduplex = half\n"
                                      "[compute mxu]\nflops = 4.194304TFLOP/s\noperands = vmem\n"
                                      "[compute scalar]\nflops = 1GFLOP/s\noperands = vmem\n");
    char *dir = strata_test_temp_dir();
    double makespan[4] = {0};
    for (int b = 1; b <= 3; b++) {
        char *trace = g_strdup_printf("%s/mm%d.trace", dir, b);
        char buffers[16];
        g_snprintf(buffers, sizeof buffers, "buffers=%d", b);
        strata_cli_result r = strata_test_cli("gen", "matmul", "m=256", "n=256", "k=256", "bm=128", "bn=128", "bk=128",
                                              buffers, "-o", trace, NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        strata_cli_result_clear(&r);
        JsonParser *p;
        JsonObject *o = run_json(&p, hw, trace, NULL);
        makespan[b] = json_object_get_double_member(o, "makespan_s");
        g_object_unref(p);
        g_unlink(trace);
        g_free(trace);
    }
    ck_assert_msg(makespan[1] >= 16e-6, "single %.9g", makespan[1]);
    ck_assert_msg(makespan[2] <= 11.5e-6 && makespan[2] >= 10e-6, "double %.9g", makespan[2]);
    ck_assert_msg(makespan[2] < 0.75 * makespan[1], "double %.9g vs single %.9g", makespan[2], makespan[1]);
    ck_assert_msg(makespan[3] >= 10e-6 && makespan[3] <= makespan[2] * 1.001, "triple %.9g", makespan[3]);
    g_rmdir(dir);
    g_free(dir);
    g_free(hw);
}
END_TEST

/* The same on a generic trace with nbuffer: four 16 MB tiles (1 ms + 1 us at
 * 16 GB/s), each read by a 1 ms compute. As written (one tile at a time):
 * 4 x 2.001 = 8.004 ms; nbuffer=2: the fill of tile i+1 overlaps compute i:
 * 1.001 + 1 + 3 x 1.001 ... = 5.004 ms; nbuffer=1 changes nothing. */
START_TEST(nbuffer_double_buffering)
{
    GString *t = g_string_new("strata-trace 1\nalloc src 16000000 host\ncompute program_start time=0\n");
    for (int i = 0; i < 4; i++)
        g_string_append_printf(t, "alloc t 16000000\ncopy t src\ncompute k%d time=1ms in=t\nfree t\n", i);
    char *trace = strata_test_write_temp("nb-XXXXXX.trace", t->str);
    char *hw = simple_hw();
    const char *specs[] = {"nbuffer=1", "nbuffer=2"};
    const double want[] = {8.004e-3, 5.004e-3};
    const double peak[] = {16e6, 32e6};
    for (int i = 0; i < 2; i++) {
        const char *pol[] = {specs[i], NULL};
        JsonParser *p;
        JsonObject *o = run_json(&p, hw, trace, pol);
        ASSERT_NEAR_REL(json_object_get_double_member(o, "makespan_s"), want[i], 1e-3);
        ASSERT_NEAR_REL((double)json_object_get_int_member(memory(o, "hbm"), "peak_allocated_bytes"), peak[i], 1e-9);
        g_object_unref(p);
    }
    g_string_free(t, TRUE);
    g_free(trace);
    g_free(hw);
}
END_TEST

/* adam-mlp dim=256 batch=256 layers=4 f32 (the tutorial's step, smaller):
 * optimizer state = 4 layers x (mu, nu) x 256x256x4 = 2 MiB and Adam's 4-byte
 * step count. With donation, offloading it moves it out of the arguments
 * (argument_bytes falls by exactly 2 MiB + 4 B) and lowers the device peak, reached in the backward pass,
 * by its size; the step gets longer (host link traffic). */
START_TEST(offload_optstate_lowers_device_peak)
{
    char *dir = strata_test_temp_dir();
    char *trace = g_build_filename(dir, "adam.trace", NULL);
    strata_cli_result r = strata_test_cli("gen", "adam-mlp", "dim=256", "batch=256", "layers=4", "-o", trace, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    char *hw = simple_hw();
    const char *base[] = {"donate", NULL};
    const char *off[] = {"donate", "offload=optstate", NULL};
    JsonParser *pa, *pb;
    JsonObject *a = run_json(&pa, hw, trace, base), *b = run_json(&pb, hw, trace, off);
    const double optstate = 8.0 * 256 * 256 * 4 + 4;
    JsonObject *ma = memory(a, "hbm"), *mb = memory(b, "hbm");
    double peak_drop = (double)(json_object_get_int_member(ma, "peak_allocated_bytes") -
                                json_object_get_int_member(mb, "peak_allocated_bytes"));
    ASSERT_NEAR_REL(peak_drop, optstate, 0.05);
    double arg_drop = (double)(json_object_get_int_member(ma, "argument_bytes") -
                               json_object_get_int_member(mb, "argument_bytes"));
    ASSERT_NEAR_REL(arg_drop, optstate, 1e-9);
    ck_assert(json_object_get_double_member(b, "makespan_s") > json_object_get_double_member(a, "makespan_s"));
    ck_assert(json_object_has_member(json_object_get_object_member(b, "streams"), "offload"));
    g_object_unref(pa);
    g_object_unref(pb);
    g_unlink(trace);
    g_rmdir(dir);
    g_free(trace);
    g_free(dir);
    g_free(hw);
}
END_TEST

/* transform writes a trace that reads back and replays: offloaded
 * activations and parameters with prefetching on the scan-mlp; the same
 * command twice gives the same bytes; running the written trace gives the
 * same results as running the policies in `strata run`. */
START_TEST(transform_reads_back_and_replays)
{
    char *dir = strata_test_temp_dir();
    char *gen = g_build_filename(dir, "mlp.trace", NULL), *out1 = g_build_filename(dir, "t1.trace", NULL),
         *out2 = g_build_filename(dir, "t2.trace", NULL);
    strata_cli_result r = strata_test_cli("gen", "scan-mlp", "batch=30", "dim=200", "hidden=1000", "layers=4", "-o",
                                          gen, NULL);
    ck_assert_int_eq(r.status, 0);
    strata_cli_result_clear(&r);
    char *hw = simple_hw();
    const char *outs[] = {out1, out2};
    for (int i = 0; i < 2; i++) {
        r = strata_test_cli("transform", "--trace", gen, "--hw", hw, "--policy", "offload=activation", "--policy",
                            "offload=param", "--policy", "prefetch=1", "--policy", "pad", "-o", outs[i], NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        strata_cli_result_clear(&r);
    }
    char *t1, *t2;
    ck_assert(g_file_get_contents(out1, &t1, NULL, NULL) && g_file_get_contents(out2, &t2, NULL, NULL));
    ck_assert_str_eq(t1, t2);
    ck_assert(strstr(t1, "stream=offload") && strstr(t1, "option padding_bytes=") && strstr(t1, "shape=32x256"));
    r = strata_test_cli("check", "--trace", out1, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    JsonParser *pa, *pb;
    JsonObject *a = run_json(&pa, hw, out1, NULL);
    const char *pol[] = {"offload=activation", "offload=param", "prefetch=1", "pad", NULL};
    JsonObject *b = run_json(&pb, hw, gen, pol);
    ck_assert_double_eq(json_object_get_double_member(a, "makespan_s"), json_object_get_double_member(b, "makespan_s"));
    ck_assert_int_eq(json_object_get_int_member(memory(a, "hbm"), "peak_allocated_bytes"),
                     json_object_get_int_member(memory(b, "hbm"), "peak_allocated_bytes"));
    ck_assert(json_object_get_int_member(memory(a, "host"), "peak_allocated_bytes") > 0);
    g_object_unref(pa);
    g_object_unref(pb);
    g_free(t1);
    g_free(t2);
    g_unlink(gen);
    g_unlink(out1);
    g_unlink(out2);
    g_rmdir(dir);
    g_free(gen);
    g_free(out1);
    g_free(out2);
    g_free(dir);
    g_free(hw);
}
END_TEST

START_TEST(transform_errors_exit_2)
{
    char *trace = strata_test_write_temp("tg-XXXXXX.trace", "strata-trace 1\nalloc a 1KiB host\nalloc b 1KiB\n"
                                                            "alloc c 1KiB\ncompute k flops=100 in=a,b out=c\n");
    char *hw = simple_hw();
    strata_cli_result r = strata_test_cli("transform", "--trace", trace, "--hw", hw, "--policy",
                                          "transfer-guard=disallow", "-o", "-", NULL);
    ck_assert_int_eq(r.status, 2);
    char *where = g_strdup_printf("%s:5:", trace);
    ck_assert_msg(strstr(r.err, where) && strstr(r.err, "compute 'k' reads 'a'"), "%s", r.err);
    g_free(where);
    strata_cli_result_clear(&r);
    r = strata_test_cli("transform", "--trace", trace, "--policy", "warp=9", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "unknown policy 'warp'") && strstr(r.err, "prefetch"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("transform", "--trace", trace, NULL);
    ck_assert_int_eq(r.status, 2);
    strata_cli_result_clear(&r);
    r = strata_test_cli("transform", "--trace", trace, "--policy", "pad", "-o", "/nonexistent-dir/t.trace", NULL);
    ck_assert_int_eq(r.status, 2);
    strata_cli_result_clear(&r);
    /* allow: the copy is inserted and the rewritten trace runs */
    r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--policy", "transfer-guard=allow", "--quiet", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    g_free(trace);
    g_free(hw);
}
END_TEST

/* Writes `text` to dir/name; returns the path (g_free). */
static char *write_in(const char *dir, const char *name, const char *text)
{
    char *path = g_build_filename(dir, name, NULL);
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    return path;
}

/* transform, then check and run the result, on hw: the rewritten trace's text (g_free). */
static char *transform_check_run(const char *hw, const char *in, const char *out, const char *policy)
{
    strata_cli_result r = strata_test_cli("transform", "--trace", in, "--hw", hw, "--policy", policy, "-o", out, NULL);
    ck_assert_msg(r.status == 0, "transform %s: %s", policy, r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("check", "--trace", out, "--hw", hw, NULL);
    ck_assert_msg(r.status == 0, "check after %s: %s", policy, r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("run", "--trace", out, "--hw", hw, "--quiet", NULL);
    ck_assert_msg(r.status == 0, "run after %s: %s", policy, r.err);
    strata_cli_result_clear(&r);
    char *text = NULL;
    ck_assert(g_file_get_contents(out, &text, NULL, NULL));
    ck_assert_msg(!strstr(text, "@host") && !strstr(text, "@hbm"), "%s", text);
    return text;
}

/* A rewrite's copies are NAME:PLACE (traces/FORMAT.md), never NAME@..., which
 * is a device's: offload's host copy and transfer-guard's staging copy
 * round-trip through transform, check and run, on one device and, for
 * offload, in a program for 8 devices (the expansion labels 'p:host' on
 * device D like any name). A trace's own live buffer of that name makes the
 * rewrite's output invalid (exit 2, naming the rewrite's op and the line of
 * the trace's alloc). */
START_TEST(rewrite_copies_take_their_own_separator)
{
    char *dir = strata_test_temp_dir();
    char *ring8 = strata_test_source_path("configs/hw/test-ring8.ini"), *simple = simple_hw();
    char *out = g_build_filename(dir, "out.trace", NULL);
    char *mesh = write_in(dir, "mesh.trace",
                          "strata-trace 1\noption mesh=data:8\nalloc p 64 tag=param\ncompute program_start time=0\n"
                          "alloc g 512 tag=param\nall-gather g p axis=data\ncompute f flops=1 in=g\nfree g\n"
                          "compute x1 flops=1\ncompute x2 flops=1\ncompute x3 flops=1\nalloc g 512 tag=param\n"
                          "all-gather g p axis=data\ncompute b flops=1 in=g\nfree g\n");
    char *text = transform_check_run(ring8, mesh, out, "offload=param");
    ck_assert_msg(strstr(text, "\nalloc p:host 64 host@0 tag=param\n") && strstr(text, "\ncopy p p:host stream=offload\n"),
                  "%s", text);
    g_free(text);
    const char *guarded = "strata-trace 1\nalloc a 1KiB host\nalloc b 1KiB\nalloc c 1KiB host\n"
                          "compute k flops=100 in=a,b out=c\n";
    char *one = write_in(dir, "one.trace", guarded);
    text = transform_check_run(simple, one, out, "transfer-guard=allow");
    ck_assert_msg(strstr(text, "\nalloc a:hbm 1KiB hbm tag=temp\ncopy a:hbm a\n") &&
                      strstr(text, "\ncompute k flops=100 in=a:hbm,b out=c:hbm\ncopy c c:hbm\n"), "%s", text);
    g_free(text);
    char *taken = write_in(dir, "taken.trace", "strata-trace 1\nalloc a 1KiB host\nalloc a:hbm 64\nalloc b 1KiB\n"
                                               "compute k flops=100 in=a,b\n");
    strata_cli_result r = strata_test_cli("transform", "--trace", taken, "--hw", simple, "--policy",
                                          "transfer-guard=allow", "-o", out, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "policy output is not a valid trace: ") && strstr(r.err, "taken.trace|transfer-guard: op 4: "
                  "expected a name that is not live, got 'a:hbm' (allocated at line 3"), "%s", r.err);
    strata_cli_result_clear(&r);
    const char *paths[] = {mesh, one, taken, out};
    for (size_t i = 0; i < G_N_ELEMENTS(paths); i++)
        g_unlink(paths[i]);
    g_rmdir(dir);
    g_free(mesh);
    g_free(one);
    g_free(taken);
    g_free(out);
    g_free(ring8);
    g_free(simple);
    g_free(dir);
}
END_TEST

static Suite *cli_gen_suite(void)
{
    Suite *s = suite_create("cli_gen");
    TCase *tc = tcase_create("gen_transform");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, gen_help_lists_workloads_and_parameters);
    tcase_add_test(tc, gen_errors_exit_2);
    tcase_add_test(tc, gen_writes_deterministic_traces);
    tcase_add_test(tc, prefetch_stall_falls_with_distance);
    tcase_add_test(tc, prefetch_saturates_the_link);
    tcase_add_test(tc, prefetch_waits_at_first_use);
    tcase_add_test(tc, double_buffering_beats_single);
    tcase_add_test(tc, nbuffer_double_buffering);
    tcase_add_test(tc, offload_optstate_lowers_device_peak);
    tcase_add_test(tc, transform_reads_back_and_replays);
    tcase_add_test(tc, transform_errors_exit_2);
    tcase_add_test(tc, rewrite_copies_take_their_own_separator);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(cli_gen_suite()); }
