/*
 * test_moe_cp.c: expert parallelism (mesh axis `expert`) and context
 * parallelism (mesh axis `context`) of `gen transformer`
 * (transformer_axes.c, transformer_layer.c's experts, transformer_ring.c,
 * moe_load.c), run through the binary on shipped hardware files. Every
 * figure is worked out by hand in the comments from the shapes:
 *   - top-2 routing over 8 experts on a DGX H100 (mesh expert:8) and a TPU
 *     v5e slice (data:2,expert:8): each all-to-all moves the tokens routed
 *     on a device times their bytes;
 *   - capacity_factor pads every expert to C rows;
 *   - zipf and file imbalances: each expert group's rows, the flops that
 *     move to the busiest device, its buffers, its busy time and peak;
 *   - ring attention: cp-1 KV blocks passed per layer forward, of the
 *     block's bytes, and 1/cp of the unsplit causal attention's flops;
 *   - the errors for meshes and inputs that do not fit.
 */
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>
#include "testutil.h"
#include "workload/moe_load.h"

/* A small MoE: d_model 256, 8 heads, seq 128, batch 8, 2 layers, 8 experts,
 * top 2, SwiGLU experts of width 1024 (moe_ffn defaults to ffn = 4 d). */
#define MOE_ARGS "layers=2", "d_model=256", "heads=8", "seq=128", "vocab=1024", "experts=8", "top_k=2", "mlp=swiglu"

/* `strata gen transformer ARGS -o FILE` in a temporary directory: the
 * trace's path (g_free; the caller removes it). */
static char *gen(const char *const *args)
{
    char *dir = strata_test_temp_dir();
    char *t = g_build_filename(dir, "t.trace", NULL);
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, "gen");
    g_ptr_array_add(argv, "transformer");
    for (const char *const *a = args; *a; a++)
        g_ptr_array_add(argv, (gpointer)*a);
    g_ptr_array_add(argv, "-o");
    g_ptr_array_add(argv, t);
    g_ptr_array_add(argv, NULL);
    strata_cli_result r = strata_test_run_in(dir, NULL, (const char *const *)argv->pdata);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    g_ptr_array_free(argv, TRUE);
    g_free(dir);
    return t;
}

static void drop(char *trace)
{
    char *dir = g_path_get_dirname(trace);
    g_unlink(trace);
    g_rmdir(dir);
    g_free(dir);
    g_free(trace);
}

static JsonObject *root(JsonParser *p) { return json_node_get_object(json_parser_get_root(p)); }

/* The collectives of kind op: how many, and every one's bytes equal to
 * `bytes` (0: any). */
static guint collectives(JsonParser *p, const char *op, uint64_t bytes)
{
    JsonArray *a = json_object_get_array_member(root(p), "collectives");
    guint n = 0;
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonObject *c = json_array_get_object_element(a, i);
        if (strcmp(json_object_get_string_member(c, "op"), op) != 0)
            continue;
        n++;
        if (bytes)
            ck_assert_uint_eq((uint64_t)json_object_get_int_member(c, "bytes"), bytes);
    }
    return n;
}

/* The first line of the trace that starts with `prefix` (g_free; NULL: none). */
static char *trace_line(const char *trace, const char *prefix)
{
    gchar *text = NULL;
    ck_assert(g_file_get_contents(trace, &text, NULL, NULL));
    gchar **lines = g_strsplit(text, "\n", -1);
    char *found = NULL;
    for (guint i = 0; lines[i] && !found; i++)
        if (g_str_has_prefix(lines[i], prefix))
            found = g_strdup(lines[i]);
    g_strfreev(lines);
    g_free(text);
    return found;
}

/* The lines of the trace that start with prefix and hold `has`. */
static guint count_lines(const char *trace, const char *prefix, const char *has)
{
    gchar *text = NULL;
    ck_assert(g_file_get_contents(trace, &text, NULL, NULL));
    gchar **lines = g_strsplit(text, "\n", -1);
    guint n = 0;
    for (guint i = 0; lines[i]; i++)
        n += g_str_has_prefix(lines[i], prefix) && (!has || strstr(lines[i], has));
    g_strfreev(lines);
    g_free(text);
    return n;
}

/* Top-2 over 8 experts on hw with mesh: one sequence of 128 tokens per
 * device, each routed to 2 experts: 256 rows of d_model 256 in bf16 = 256 x
 * 256 x 2 = 131072 bytes per all-to-all (uniform routing: 32 rows to each
 * of the 8 devices of the expert group, itself included). Per layer:
 * dispatch and combine forward, their transposes backward: 4; 2 layers: 8.
 * Each device holds 8/8 = 1 expert (we1 [1, 256, 1024]); the results list 8
 * expert groups of `group_devices` devices. */
static void top2(const char *hw, const char *batch, const char *mesh, int64_t group_devices)
{
    const char *args[] = {MOE_ARGS, batch, mesh, NULL};
    char *t = gen(args);
    JsonParser *p = strata_test_run_results(hw, t);
    ck_assert_str_eq(json_object_get_string_member(root(p), "status"), "ok");
    ck_assert_uint_eq(collectives(p, "all-to-all", 131072), 8);
    char *we1 = trace_line(t, "alloc l0_we1 ");
    ck_assert_msg(we1 && strstr(we1, "shape=1x256x1024"), "%s", we1 ? we1 : "(none)");
    JsonArray *groups = json_object_get_array_member(root(p), "expert_groups");
    ck_assert_uint_eq(json_array_get_length(groups), 8);
    ck_assert_int_eq(json_object_get_int_member(json_array_get_object_element(groups, 0), "devices"), group_devices);
    g_free(we1);
    g_object_unref(p);
    drop(t);
}

/* mesh expert:8 on a DGX H100: batch 8 / 8 = 1 sequence per GPU. */
START_TEST(top2_alltoall_gpu) { top2("configs/hw/dgx-h100.ini", "batch=8", "mesh=expert:8", 1); }
END_TEST

/* a TPU v5e slice of 16 chips, mesh data:2,expert:8: batch 16 / (2 x 8) = 1
 * sequence per chip; expert groups of 2 chips (one per data replica). */
START_TEST(top2_alltoall_tpu) { top2("configs/hw/tpu-v5e-16.ini", "batch=16", "mesh=data:2,expert:8", 2); }
END_TEST

START_TEST(capacity_pads)
{
    /* capacity_factor 1.25: C = ceil(256 rows / 8 experts x 1.25) = 40 rows
     * per expert; the dispatch buffer is E x C = 320 rows x 256 x 2 =
     * 163840 bytes whatever the routing (GShard's [E, C, d]). */
    const char *args[] = {MOE_ARGS, "batch=8", "mesh=expert:8", "capacity_factor=1.25", "imbalance=zipf:1", NULL};
    char *t = gen(args);
    char *line = trace_line(t, "alloc l0_dispatch ");
    ck_assert_msg(line && strstr(line, "shape=320x256"), "%s", line ? line : "(none)");
    /* padded to capacity: no expert group computes more than another, so
     * nothing varies per device */
    ck_assert_uint_eq(count_lines(t, "alloc l0_experts_up@", NULL), 0);
    g_free(line);
    drop(t);
}
END_TEST

START_TEST(zipf_moves_time_and_memory)
{
    /* d_model 64, seq 512, batch 8 over expert:8: 512 x 2 = 1024 rows per
     * device; zipf:1 over 8 experts gives expert e 1024 / (e+1) / H8 rows,
     * H8 = 2.717857: 376.77 188.39 125.59 94.19 75.35 62.80 53.82 47.10,
     * floors 376 188 125 94 75 62 53 47 (1020), the 4 left to the largest
     * remainders (experts 6, 5, 0, 2): 377 188 126 94 75 63 54 47. One
     * expert per group, each group gets its expert's rows from all 8
     * devices: 3016 1504 1008 752 600 504 432 376 rows. */
    const char *args[] = {"layers=2", "d_model=64", "heads=4", "seq=512", "batch=8", "vocab=256", "experts=8",
                          "top_k=2", "mlp=swiglu", "moe_ffn=512", "mesh=expert:8", "imbalance=zipf:1", NULL};
    char *t = gen(args);
    /* the expert MLP's up projection [rows, 512] bf16 on devices 0 and 7 */
    char *up0 = trace_line(t, "alloc l0_experts_up@0 "), *up7 = trace_line(t, "alloc l0_experts_up@7 ");
    ck_assert_msg(up0 && strstr(up0, "shape=3016x512 ") && strstr(up0, "device=0"), "%s", up0 ? up0 : "-");
    ck_assert_msg(up7 && strstr(up7, "shape=376x512 ") && strstr(up7, "device=7"), "%s", up7 ? up7 : "-");
    JsonParser *p = strata_test_run_results("configs/hw/dgx-h100.ini", t);
    JsonObject *compute = json_object_get_object_member(root(p), "compute");
    double f0 = json_object_get_double_member(json_object_get_object_member(compute, "sm@0"), "flops"),
           f7 = json_object_get_double_member(json_object_get_object_member(compute, "sm@7"), "flops");
    /* Per expert row (d = 64, F = 512): forward up and gate 2 x 2dF, SwiGLU
     * 6F, down 2dF; backward twice each matmul (4 x 3 dF... = 12 dF) and
     * the GLU's 10F + 6F: 18 dF + 22 F = 589824 + 11264 = 601088 flops,
     * times (3016 - 376) rows, times 2 layers = 3173744640 (to a
     * millionth of a flop: each unit's flops are summed in double op by op,
     * engine.c run_compute, in an order that follows the ops' times). */
    ck_assert_double_eq_tol(f0 - f7, 3173744640.0, 1e-3);
    /* the busiest group is the slowest and holds the most */
    JsonArray *groups = json_object_get_array_member(root(p), "expert_groups");
    JsonObject *g0 = json_array_get_object_element(groups, 0), *g7 = json_array_get_object_element(groups, 7);
    ck_assert(json_object_get_double_member(g0, "busy_s") > json_object_get_double_member(g7, "busy_s"));
    /* at least the saved up, gate-up and GLU outputs of both layers:
     * 3 x 512 x 2 bytes x (3016 - 376) rows x 2 layers = 16220160 */
    ck_assert_int_ge(json_object_get_int_member(g0, "peak_allocated_bytes") -
                         json_object_get_int_member(g7, "peak_allocated_bytes"),
                     16220160);
    g_free(up0);
    g_free(up7);
    g_object_unref(p);
    drop(t);
}
END_TEST

START_TEST(file_imbalance)
{
    /* counts 9 1 1 1 1 1 1 1 (16): expert 0 takes 9/16 of 1024 rows = 576,
     * the others 64; group 0 computes 8 x 576 = 4608 rows, the others 512;
     * dropless, each device sends every group the largest chunk: 576 rows,
     * 8 x 576 = 4608 rows of 64 x 2 bytes in the dispatch buffer. */
    char *counts = strata_test_write_temp("counts-XXXXXX.txt", "# tokens per expert\n9\n1\n1\n1\n\n1\n1\n1\n1\n");
    char *imb = g_strconcat("imbalance=", counts, NULL);
    const char *args[] = {"layers=1", "d_model=64", "heads=4", "seq=512", "batch=8", "vocab=256", "experts=8",
                          "top_k=2", "mlp=swiglu", "moe_ffn=512", "mesh=expert:8", imb, NULL};
    char *t = gen(args);
    char *up0 = trace_line(t, "alloc l0_experts_up@0 "), *up1 = trace_line(t, "alloc l0_experts_up@1 "),
         *disp = trace_line(t, "alloc l0_dispatch ");
    ck_assert_msg(up0 && strstr(up0, "shape=4608x512 "), "%s", up0 ? up0 : "-");
    ck_assert_msg(up1 && strstr(up1, "shape=512x512 "), "%s", up1 ? up1 : "-");
    ck_assert_msg(disp && g_str_has_suffix(disp, "shape=4608x64"), "%s", disp ? disp : "-");
    g_free(up0);
    g_free(up1);
    g_free(disp);
    drop(t);
    /* a bad line: FILE:LINE, exit 2 */
    g_file_set_contents(counts, "9\n1\nmany\n", -1, NULL);
    strata_cli_result r = strata_test_cli("gen", "transformer", "layers=1", "d_model=64", "heads=4", "seq=512",
                                          "batch=8", "vocab=256", "experts=8", "top_k=2", "mesh=expert:8", imb, NULL);
    char *where = g_strdup_printf("%s:3: expected a token count", counts);
    strata_test_expect(&r, 2, where);
    strata_cli_result_clear(&r);
    g_free(where);
    /* too few counts */
    g_file_set_contents(counts, "9\n1\n", -1, NULL);
    r = strata_test_cli("gen", "transformer", "layers=1", "d_model=64", "heads=4", "seq=512", "batch=8", "vocab=256",
                        "experts=8", "top_k=2", "mesh=expert:8", imb, NULL);
    strata_test_expect(&r, 2, "expected 8 token counts (one per expert), got 2");
    strata_cli_result_clear(&r);
    g_unlink(counts);
    g_free(counts);
    g_free(imb);
}
END_TEST

START_TEST(imbalance_offload)
{
    /* host offload of an expert activation under an imbalance: each device
     * copies its own rows (its own buffer, NAME@D) */
    const char *args[] = {"layers=1", "d_model=64", "heads=4", "seq=512", "batch=8", "vocab=256", "experts=8",
                          "top_k=2", "mlp=swiglu", "moe_ffn=512", "mesh=expert:8", "imbalance=zipf:1",
                          "remat=save_and_offload_only_these_names", "remat_offload=mlpwi_0", NULL};
    char *t = gen(args);
    ck_assert_uint_eq(count_lines(t, "copy l0_experts_up_host@7 l0_experts_up@7 ", "device=7"), 1);
    char *host = trace_line(t, "alloc l0_experts_up_host@0 ");
    ck_assert_msg(host && strstr(host, "shape=3016x512 "), "%s", host ? host : "-");
    g_free(host);
    JsonParser *p = strata_test_run_results("configs/hw/dgx-h100.ini", t);
    ck_assert_str_eq(json_object_get_string_member(root(p), "status"), "ok");
    g_object_unref(p);
    drop(t);
}
END_TEST

START_TEST(load_split)
{
    /* the largest remainder: 10 rows over shares 1/3 each: 3.33 x 3, the
     * one left to the lowest expert on a tie */
    GError *err = NULL;
    wl_moe_load *l = wl_moe_load_new("uniform", 3, &err);
    uint64_t rows[3];
    wl_moe_load_split(l, 10, rows);
    ck_assert_uint_eq(rows[0], 4);
    ck_assert_uint_eq(rows[1], 3);
    ck_assert_uint_eq(rows[2], 3);
    wl_moe_load_free(l);
    ck_assert_ptr_null(wl_moe_load_new("zipf:0", 3, &err));
    ck_assert(strstr(err->message, "zipf:S with S a number > 0"));
    g_clear_error(&err);
}
END_TEST

START_TEST(ring_attention)
{
    /* seq 1024 over context:4 (and data:2, batch 2: one sequence per
     * device): 256 positions per device. K and V of 8 heads of 32: one block
     * = 2 x 256 x 1 x 8 x 32 x 2 bytes = 262144 bytes. Forward: cp-1 = 3
     * blocks passed per layer (collective-permute shift +1 on stream ring);
     * backward: passed again (3) and dKV back (3, shift -1): 9 per layer,
     * 18 in all, all of one block's bytes. */
    const char *args[] = {"layers=2", "d_model=256", "heads=8", "seq=1024", "batch=2", "vocab=1024",
                          "attention=flash", "mask=causal", "mesh=data:2,context:4", NULL};
    char *t = gen(args);
    JsonParser *p = strata_test_run_results("configs/hw/dgx-h100.ini", t);
    ck_assert_str_eq(json_object_get_string_member(root(p), "status"), "ok");
    ck_assert_uint_eq(collectives(p, "collective-permute", 262144), 18);
    ck_assert_uint_eq(count_lines(t, "collective-permute l0_kv", "shift=+1 axis=context stream=ring"), 3);
    ck_assert_uint_eq(count_lines(t, "collective-permute ", "shift=-1"), 6);
    /* Attention flops per device: unsplit causal 4 x B x H x S^2 x hd / 2
     * = 4 x 1 x 8 x 1024^2 x 32 / 2 = 536870912; each of the 4 steps does
     * 1/16 of it (the diagonal block causal, the others half blocks):
     * 33554432, plus the merge of the running output (256 x 256 = 65536 per
     * step after the first). 4 x 33554432 = 536870912 / 4. */
    char *a0 = trace_line(t, "compute l0_attn0 "), *a3 = trace_line(t, "compute l0_attn3 ");
    ck_assert_msg(a0 && strstr(a0, "flops=33554432 ") && strstr(a0, "mask=causal"), "%s", a0 ? a0 : "-");
    ck_assert_msg(a3 && strstr(a3, "flops=33619968 ") && strstr(a3, "dims=1x8x256x128x32"), "%s", a3 ? a3 : "-");
    g_free(a0);
    g_free(a3);
    g_object_unref(p);
    drop(t);
}
END_TEST

START_TEST(refused)
{
    strata_cli_result r = strata_test_cli("gen", "transformer", "layers=1", "d_model=64", "heads=4", "seq=512",
                                          "batch=8", "vocab=256", "mesh=context:4", NULL);
    strata_test_expect(&r, 2, "needs attention=flash");
    strata_cli_result_clear(&r);
    r = strata_test_cli("gen", "transformer", "layers=1", "d_model=64", "heads=4", "seq=512", "batch=8", "vocab=256",
                        "experts=6", "top_k=2", "mesh=expert:4", NULL);
    strata_test_expect(&r, 2, "rule experts-divide: the expert axis must divide the number of experts (Megatron "
                              "arguments.py: num_experts % expert_model_parallel_size)");
    strata_cli_result_clear(&r);
    /* top_k of a dense model was dropped at exit 0 (serve refuses it) */
    r = strata_test_cli("gen", "transformer", "layers=1", "d_model=64", "heads=4", "seq=512", "batch=8", "vocab=256",
                        "top_k=2", NULL);
    strata_test_expect(&r, 2, "transformer: expected top_k only with experts > 0 (top_k, experts), got 2 and 0");
    strata_cli_result_clear(&r);
    r = strata_test_cli("gen", "transformer", "layers=1", "d_model=64", "heads=4", "seq=512", "batch=8", "vocab=256",
                        "capacity_factor=1", NULL);
    strata_test_expect(&r, 2, "need MoE layers");
    strata_cli_result_clear(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("moe_cp");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, top2_alltoall_gpu);
    tcase_add_test(tc, top2_alltoall_tpu);
    tcase_add_test(tc, capacity_pads);
    tcase_add_test(tc, zipf_moves_time_and_memory);
    tcase_add_test(tc, file_imbalance);
    tcase_add_test(tc, imbalance_offload);
    tcase_add_test(tc, load_split);
    tcase_add_test(tc, ring_attention);
    tcase_add_test(tc, refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(suite()); }
