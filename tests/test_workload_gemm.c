/* test_workload_gemm.c: `gen transformer`'s matmuls as kernel=gemm steps
 * (models/workload/autodiff_nodes.h): each forward product and each of its
 * two gradients with the extents the device computes, derived by hand
 * under fsdp and under tensor parallelism; every gemm's 2 B M K N equal to
 * the step's flops (the trace's flops unchanged); MLA's one flash backward
 * kernel per layer; and hardware without a matrix model timing the trace
 * as it did without kernel= (the roofline). */
#include <glib/gstdio.h>
#include <string.h>
#include "testutil.h"
#include "kernel/kernel.h"
#include "workload/workload.h"

/* label -> "kernel dims" of every compute of a generated trace, the gemm
 * steps' count and flops, the flash backward kernels' count. */
typedef struct gemm_walk {
    GHashTable *kernels; /* label -> "gemm AxBxC" (g_free) */
    int gemms, flash_bwd;
    double gemm_flops;
} gemm_walk;

static char *dims_text(const strata_op *op)
{
    GString *s = g_string_new(op->kernel);
    for (uint32_t i = 0; i < op->n_kdims; i++)
        g_string_append_printf(s, "%c%" G_GUINT64_FORMAT, i ? 'x' : ' ', op->dims[i]);
    return g_string_free(s, FALSE);
}

static gemm_walk walk(const char *const *args)
{
    GError *err = NULL;
    strata_source *src = strata_workload_generate("transformer", args, &err);
    ck_assert_msg(src, "%s", err ? err->message : "");
    gemm_walk w = {g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free), 0, 0, 0};
    const strata_op *op;
    while (strata_source_next(src, &op, &err) == 1) {
        if (op->kind != STRATA_OP_COMPUTE || !op->kernel)
            continue;
        g_hash_table_replace(w.kernels, g_strdup(op->name), dims_text(op));
        w.flash_bwd += strcmp(op->kernel, "flash-attention-bwd") == 0;
        if (strcmp(op->kernel, "gemm") != 0)
            continue;
        /* the kernel's nominal count is the step's flops, exactly */
        strata_kernel_problem p = {.n_dims = op->n_kdims, .dims = op->dims};
        double nominal = 0, bytes = 0;
        strata_kernel_find("gemm")->nominal(&p, &nominal, &bytes);
        ck_assert_msg(op->has_flops && nominal == op->flops, "%s: flops=%.17g, 2BMKN %.17g", op->name, op->flops,
                      nominal);
        w.gemms++;
        w.gemm_flops += op->flops;
    }
    ck_assert_msg(!err, "%s", err ? err->message : "");
    strata_source_free(src);
    return w;
}

typedef struct expected {
    const char *label, *kernel;
} expected;

static void expect_all(const gemm_walk *w, const expected *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *got = g_hash_table_lookup(w->kernels, e[i].label);
        ck_assert_msg(got && strcmp(got, e[i].kernel) == 0, "%s: got '%s', expected '%s'", e[i].label,
                      got ? got : "(no kernel)", e[i].kernel);
    }
}

/* d 48, 4 heads of 12, MLP 192 (gelu), vocab 128 tied, batch 8 x 8 over
 * data:2: each device multiplies M = 4 x 8 = 32 rows. */
#define SMALL "layers=1", "d_model=48", "heads=4", "batch=8", "seq=8", "vocab=128"

/* fsdp: the gathered weights are whole, so every product is the model's
 * with M = 32: C = A B is MxKxN, dA = dC B^T MxNxK, dB = A^T dC KxMxN. */
static const expected fsdp_dims[] = {
    {"l0_mlp_in", "gemm 32x48x192"},      /* [32,48] @ w1 [48,192] */
    {"l0_mlp_in_vjp0", "gemm 32x192x48"}, /* d_ln2_out = d_up @ w1^T */
    {"l0_mlp_in_vjp1", "gemm 48x32x192"}, /* d_w1 = ln2_out^T @ d_up */
    {"l0_mlp_down", "gemm 32x192x48"},
    {"l0_mlp_down_vjp0", "gemm 32x48x192"},
    {"l0_mlp_down_vjp1", "gemm 192x32x48"},
    {"l0_qkv_proj", "gemm 32x48x144"},
    {"l0_qkv_proj_vjp0", "gemm 32x144x48"},
    {"l0_qkv_proj_vjp1", "gemm 48x32x144"},
    {"l0_out_proj_vjp1", "gemm 48x32x48"},
    /* the attention products batched over 4 sequences x 4 heads */
    {"l0_qk", "gemm 16x8x12x8"},      /* q [8,12] @ k^T [12,8] */
    {"l0_pv", "gemm 16x8x8x12"},      /* probs [8,8] @ v [8,12] */
    {"l0_pv_vjp0", "gemm 16x8x12x8"}, /* d_probs = d_ctx @ v^T */
    {"l0_pv_vjp1", "gemm 16x8x8x12"}, /* d_v = probs^T @ d_ctx */
    /* the tied embedding [128,48]: logits = h @ embed^T; its gradient as it is held */
    {"logits_proj", "gemm 32x48x128"},
    {"logits_proj_vjp0", "gemm 32x128x48"},
    {"logits_proj_vjp1", "gemm 128x32x48"}, /* d_embed = d_logits^T @ h */
};

START_TEST(fsdp_gemm_dims_by_hand)
{
    const char *args[] = {SMALL, "mesh=data:2", "sharding=fsdp", NULL};
    gemm_walk w = walk(args);
    expect_all(&w, fsdp_dims, G_N_ELEMENTS(fsdp_dims));
    ck_assert_ptr_null(g_hash_table_lookup(w.kernels, "l0_qk_vjp0")); /* dq and dk in one step */
    /* forward: qkv 442368 + qk 24576 + pv 24576 + out 147456 + mlp 2 x
     * 589824 + logits 393216 = 2211840 in 7 steps; every gradient the same
     * again but q k^T's: 2 x (2211840 - 24576) in 12 steps */
    ck_assert_int_eq(w.gemms, 19);
    ck_assert_double_eq(w.gemm_flops, 2211840.0 + 2.0 * (2211840.0 - 24576.0));
    g_hash_table_destroy(w.kernels);
}
END_TEST

/* tensor parallelism over model:2: each device's slice, 2 heads (q, k, v:
 * 72 columns), 96 of the MLP's 192, 64 of the 128 logits; the row-parallel
 * products contract over the device's part. */
static const expected tp_dims[] = {
    {"l0_qkv_proj", "gemm 32x48x72"},
    {"l0_qkv_proj_vjp0", "gemm 32x72x48"},
    {"l0_qkv_proj_vjp1", "gemm 48x32x72"},
    {"l0_qk", "gemm 8x8x12x8"},
    {"l0_out_proj", "gemm 32x24x48"}, /* ctx [32,24] @ wo [24,48], a partial sum */
    {"l0_out_proj_vjp0", "gemm 32x48x24"},
    {"l0_out_proj_vjp1", "gemm 24x32x48"},
    {"l0_mlp_in", "gemm 32x48x96"},
    {"l0_mlp_in_vjp0", "gemm 32x96x48"},
    {"l0_mlp_in_vjp1", "gemm 48x32x96"},
    {"l0_mlp_down", "gemm 32x96x48"},
    {"l0_mlp_down_vjp1", "gemm 96x32x48"},
    {"logits_proj", "gemm 32x48x64"},
    {"logits_proj_vjp1", "gemm 64x32x48"},
};

START_TEST(tp_gemm_dims_by_hand)
{
    const char *args[] = {SMALL, "mesh=data:2,model:2", "sharding=tp", NULL};
    gemm_walk w = walk(args);
    expect_all(&w, tp_dims, G_N_ELEMENTS(tp_dims));
    g_hash_table_destroy(w.kernels);
}
END_TEST

/* MLA: q and kv both feed the flash kernel; its backward (dq, dk, dv at
 * once) is one kernel per layer, on q's gradient, which has the flops. */
static const expected mla_dims[] = {
    {"l0_kv_a", "gemm 32x64x24"}, /* a [32,64] @ wkv_a [64, 16 + 8] */
    {"l0_kv_a_vjp1", "gemm 64x32x24"},
    {"l0_attn_vjp0", "flash-attention-bwd 2x4x16x16x20"}, /* head width (24 + 16) / 2 */
};

START_TEST(mla_flash_backward_once)
{
    const char *args[] = {"layers=2",           "d_model=64",          "heads=4",          "batch=2",
                          "seq=16",             "vocab=128",           "kv_lora_rank=16",  "qk_nope_head_dim=16",
                          "qk_rope_head_dim=8", "v_head_dim=16",       "attention=flash",  "mask=causal",
                          NULL};
    gemm_walk w = walk(args);
    ck_assert_int_eq(w.flash_bwd, 2);
    ck_assert_ptr_null(g_hash_table_lookup(w.kernels, "l0_attn_vjp1"));
    expect_all(&w, mla_dims, G_N_ELEMENTS(mla_dims));
    g_hash_table_destroy(w.kernels);
}
END_TEST

/* The makespan of `strata run` on hw for the trace text. */
static double makespan(const char *hw, const char *trace_text)
{
    char *trace = strata_test_write_temp("gemm-XXXXXX.trace", trace_text), *json = g_strconcat(trace, ".json", NULL);
    char *hw_path = strata_test_source_path(hw);
    const char *argv[] = {"run", "--hw", hw_path, "--json", json, "--trace", trace, NULL};
    strata_cli_result r = strata_test_run_cli(argv);
    ck_assert_msg(r.status == 0, "%s", r.err);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_file(p, json, NULL));
    double t = json_object_get_double_member(json_node_get_object(json_parser_get_root(p)), "makespan_s");
    g_object_unref(p);
    strata_cli_result_clear(&r);
    g_unlink(trace);
    g_unlink(json);
    g_free(trace);
    g_free(json);
    g_free(hw_path);
    return t;
}

/* On hardware without a matrix model (matrix =) a kernel=gemm step runs at
 * the roofline of its flops= and bytes, as it did before it named one:
 * the same makespan with and without the kernels. */
START_TEST(roofline_hardware_unchanged)
{
    const char *argv[] = {"gen", "transformer", SMALL, "-o", "-", NULL};
    strata_cli_result r = strata_test_run_cli(argv);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, " kernel=gemm dims="));
    GRegex *re = g_regex_new(" kernel=gemm dims=[0-9x]+", 0, 0, NULL);
    char *bare = g_regex_replace_literal(re, r.out, -1, 0, "", 0, NULL);
    ck_assert_ptr_null(strstr(bare, "kernel=gemm"));
    double with = makespan("configs/hw/h100-pcie.ini", r.out), without = makespan("configs/hw/h100-pcie.ini", bare);
    ck_assert_double_eq(with, without);
    g_regex_unref(re);
    g_free(bare);
    strata_cli_result_clear(&r);
}
END_TEST

/* The engine costs each distinct (kernel, unit, problem) once per run
 * (engine_kernel.c's table) and reuses it: ops of one stream run one after
 * the other, so a run of A, B, C, A (the same dims in bf16 and f8, other
 * dims in bf16) takes what A, B and C take alone, A twice; a table that
 * missed the dtype or the dims would give B or C the cost of A. */
START_TEST(kernel_costs_kept_per_problem)
{
    const char *hw = "configs/hw/h100.ini";
    const char *a = "compute a kernel=gemm dims=2048x4096x2048 dtype=bf16\n";
    const char *b = "compute b kernel=gemm dims=2048x4096x2048 dtype=f8\n";
    const char *c = "compute c kernel=gemm dims=4096x4096x2048 dtype=bf16\n";
    char *ta = g_strconcat("strata-trace 1\n", a, NULL), *tb = g_strconcat("strata-trace 1\n", b, NULL);
    char *tc = g_strconcat("strata-trace 1\n", c, NULL), *all = g_strconcat("strata-trace 1\n", a, b, c, a, NULL);
    double ma = makespan(hw, ta), mb = makespan(hw, tb), mc = makespan(hw, tc), m = makespan(hw, all);
    ck_assert_msg(mb < 0.9 * ma && mc > 1.5 * ma, "f8 faster, twice the rows slower: %g %g %g", ma, mb, mc);
    ck_assert_double_eq_tol(m, 2 * ma + mb + mc, 1e-12 * m);
    g_free(ta);
    g_free(tb);
    g_free(tc);
    g_free(all);
}
END_TEST

/* MoE, 4 experts of width 16, top 2, over data:2 x expert:2: a device
 * routes 8 / 4 sequences x 8 = 16 tokens (the router's M), 32 rows, 8 to
 * each expert; the group of 2 experts receives them from the axis' 2
 * devices: 16 rows an expert, one gemm batched over the 2 experts. */
static const expected moe_dims[] = {
    {"l0_router", "gemm 16x32x4"},           /* [16,32] @ wr [32,4] */
    {"l0_experts_in", "gemm 2x16x32x16"},    /* 2 experts x [16,32] @ [32,16] */
    {"l0_experts_in_vjp1", "gemm 2x32x16x16"},
    {"l0_experts_down", "gemm 2x16x16x32"},
    {"l0_experts_down_vjp0", "gemm 2x16x32x16"},
};

START_TEST(moe_experts_batched)
{
    const char *args[] = {"layers=1", "d_model=32", "heads=4",    "batch=8",         "seq=8",          "vocab=64",
                          "experts=4", "top_k=2",   "moe_ffn=16", "mesh=data:2,expert:2", "sharding=fsdp", NULL};
    gemm_walk w = walk(args);
    expect_all(&w, moe_dims, G_N_ELEMENTS(moe_dims));
    g_hash_table_destroy(w.kernels);
    /* zipf: the groups' rows differ, the experts' steps per device keep the roofline */
    const char *zipf[] = {"layers=1", "d_model=32", "heads=4",    "batch=8",         "seq=8",          "vocab=64",
                          "experts=4", "top_k=2",   "moe_ffn=16", "mesh=data:2,expert:2", "sharding=fsdp",
                          "imbalance=zipf:1", NULL};
    w = walk(zipf);
    ck_assert_ptr_null(g_hash_table_lookup(w.kernels, "l0_experts_in"));
    ck_assert_ptr_null(g_hash_table_lookup(w.kernels, "l0_experts_down_vjp1"));
    expect_all(&w, moe_dims, 1); /* the router's rows do not vary */
    g_hash_table_destroy(w.kernels);
}
END_TEST

static Suite *gemm_suite(void)
{
    Suite *s = suite_create("workload_gemm");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, fsdp_gemm_dims_by_hand);
    tcase_add_test(tc, tp_gemm_dims_by_hand);
    tcase_add_test(tc, mla_flash_backward_once);
    tcase_add_test(tc, moe_experts_batched);
    tcase_add_test(tc, roofline_hardware_unchanged);
    tcase_add_test(tc, kernel_costs_kept_per_problem);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return strata_test_main(gemm_suite());
}
