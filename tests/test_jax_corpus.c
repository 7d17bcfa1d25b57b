/*
 * test_jax_corpus.c: `strata import xla` on the JAX corpus (tests/data/jax,
 * real dumps of JAX 0.10.2 on the CPU backend, made by scripts/jax-corpus.py):
 * replica groups to mesh axes (sim/import/xla_mesh.c) in each of XLA's three
 * printings, the sharded programs' collectives as strata collectives, and
 * those programs run on a TPU v5e slice and a DGX H100.
 * (The figures against memory_analysis() are checked by tests/jax/
 * check_corpus.py, ctest jax_corpus_import.)
 */
#include <glib/gstdio.h>
#include <string.h>
#include "testutil.h"
#include "import/xla.h"
#include "import/xla_hlo.h"
#include "import/xla_mesh.h"
#include "import/jax_profile.h"

#define TP_DIR "tests/data/jax/tp_step"
#define FSDP_DIR "tests/data/jax/fsdp_step"
#define PROFILE "tests/data/jax/profile/scan_mlp.trace.json.gz"
#define PERFETTO "tests/data/jax/profile/scan_mlp.perfetto_trace.json.gz"

/* The axes of one group set on a mesh cut from `sets` (the set `which`). */
static char *axes_of(uint64_t devices, const char *const *sets, int which, char **option, uint64_t *n)
{
    xla_mesh *m = xla_mesh_new(devices);
    int id = -1;
    for (int i = 0; sets[i]; i++) {
        int s = xla_mesh_add(m, sets[i]);
        ck_assert_msg(s >= 0, "%s", sets[i]);
        if (i == which)
            id = s;
    }
    ck_assert(xla_mesh_build(m));
    *option = xla_mesh_option(m);
    char *axes = xla_mesh_axes(m, id, n);
    xla_mesh_free(m);
    return axes;
}

START_TEST(replica_groups_become_mesh_axes)
{
    char *opt;
    uint64_t n;
    /* tp_step's two all-reduces: {0..3},{4..7} are runs of stride 1 size 4,
     * {0,4},{1,5},.. of stride 4 size 2: cuts at 1, 4, 8 -> x0:2 (stride 4),
     * x1:4 (stride 1). */
    const char *tp[] = {"{{0,1,2,3},{4,5,6,7}}", "{{0,4},{1,5},{2,6},{3,7}}", NULL};
    char *a = axes_of(8, tp, 0, &opt, &n);
    ck_assert_str_eq(opt, "x0:2,x1:4");
    ck_assert_str_eq(a, "x1");
    ck_assert_uint_eq(n, 4);
    g_free(a);
    g_free(opt);
    a = axes_of(8, tp, 1, &opt, &n);
    ck_assert_str_eq(a, "x0");
    ck_assert_uint_eq(n, 2);
    g_free(a);
    g_free(opt);
    /* The iota [4,2]<=[2,4]T(1,0): arange(8) as 2x4, transposed to 4x2:
     * rows {0,4},{1,5},{2,6},{3,7}, the same set as above; [2,4]<=[8] is
     * {0..3},{4..7}. Together: the same mesh. */
    const char *iota[] = {"[2,4]<=[8]", "[4,2]<=[2,4]T(1,0)", NULL};
    a = axes_of(8, iota, 1, &opt, &n);
    ck_assert_str_eq(opt, "x0:2,x1:4");
    ck_assert_str_eq(a, "x0");
    g_free(a);
    g_free(opt);
    /* The named form (fsdp_step): axis_1 of size 1, so axis_0 is stride 1. */
    const char *named[] = {"mesh['axis_0'=8,'axis_1'=1] {'axis_0'}", NULL};
    a = axes_of(0, named, 0, &opt, &n);
    ck_assert_str_eq(opt, "x0:8");
    ck_assert_str_eq(a, "x0");
    ck_assert_uint_eq(n, 8);
    g_free(a);
    g_free(opt);
    /* issue 41, JAX 0.11 on: a sub-axis, 'batch':(2)2 of batch=4 (batch as
     * 2 x 2 x 1, major first: the second factor), over feats=2: stride
     * 2 x 4/(2 x 2) = 2, size 2, as older XLA's {{0,2},{1,3},{4,6},{5,7}};
     * with 'batch':(1)2 (stride 4) the mesh is cut at 1, 2, 4, 8. */
    const char *sub[] = {"mesh['batch'=4,'feats'=2] {'batch':(2)2}", "mesh['batch'=4,'feats'=2] {'batch':(1)2}", NULL};
    a = axes_of(0, sub, 0, &opt, &n);
    ck_assert_str_eq(opt, "x0:2,x1:2,x2:2");
    ck_assert_str_eq(a, "x1");
    ck_assert_uint_eq(n, 2);
    g_free(a);
    g_free(opt);
    a = axes_of(0, sub, 1, &opt, &n);
    ck_assert_str_eq(a, "x0");
    g_free(a);
    g_free(opt);
    /* issue 41: pipeline_ppermute's collective-permutes over 'stage' of a
     * 4x2 (stage, data) mesh: cycles {0,2,4,6}, {1,3,5,7} (stride 2, size
     * 4), rank step +1 forward, -1 back; a chain (no wrap) and a partial
     * permutation are no shift. */
    {
        xla_mesh *m = xla_mesh_new(8);
        int32_t shift = 0;
        int fwd = xla_mesh_add_pairs(m, "{{0,2},{2,4},{4,6},{6,0},{1,3},{3,5},{5,7},{7,1}}", &shift);
        ck_assert_int_ge(fwd, 0);
        ck_assert_int_eq(shift, 1);
        int back = xla_mesh_add_pairs(m, "{{2,0},{4,2},{6,4},{0,6},{3,1},{5,3},{7,5},{1,7}}", &shift);
        ck_assert_int_ge(back, 0);
        ck_assert_int_eq(shift, -1);
        ck_assert_int_lt(xla_mesh_add_pairs(m, "{{0,2},{2,4},{4,6},{1,3},{3,5},{5,7}}", &shift), 0);
        ck_assert_int_lt(xla_mesh_add_pairs(m, "{{0,1},{1,0}}", &shift), 0);
        ck_assert_int_lt(xla_mesh_add_pairs(m, "{{0,1},{1,2},{2,0},{3,4},{4,3},{5,6},{6,7},{7,5}}", &shift), 0);
        ck_assert(xla_mesh_build(m));
        a = xla_mesh_option(m);
        ck_assert_str_eq(a, "x0:4,x1:2");
        g_free(a);
        a = xla_mesh_axes(m, fwd, &n);
        ck_assert_str_eq(a, "x0");
        ck_assert_uint_eq(n, 4);
        g_free(a);
        xla_mesh_free(m);
    }
    /* {} is every device; over a 2x4 mesh it spans both axes. */
    const char *all[] = {"{}", "{{0,1,2,3},{4,5,6,7}}", NULL};
    a = axes_of(8, all, 0, &opt, &n);
    ck_assert_str_eq(a, "x0,x1");
    ck_assert_uint_eq(n, 8);
    g_free(a);
    g_free(opt);
}
END_TEST

START_TEST(groups_that_are_not_mesh_axes)
{
    xla_mesh *m = xla_mesh_new(6);
    /* offsets {0,2,3}: no product of strided runs */
    ck_assert_int_lt(xla_mesh_add(m, "{{0,2,3},{1,4,5}}"), 0);
    /* groups of different shapes, a device twice, one out of range */
    ck_assert_int_lt(xla_mesh_add(m, "{{0,1},{2,4}}"), 0);
    ck_assert_int_lt(xla_mesh_add(m, "{{0,1,2},{2,3,4}}"), 0);
    ck_assert_int_lt(xla_mesh_add(m, "{{0,1,2},{3,4,9}}"), 0);
    ck_assert_int_lt(xla_mesh_add(m, "{{0,1,2},{3,4}}"), 0);
    /* iotas that do not cover the devices or overflow */
    ck_assert_int_lt(xla_mesh_add(m, "[2,4]<=[8]"), 0);
    ck_assert_int_lt(xla_mesh_add(m, "[2,3]<=[18446744073709551615,2]"), 0);
    ck_assert_int_lt(xla_mesh_add(m, "[3,2]<=[3,2]T(0,0)"), 0);
    ck_assert_int_lt(xla_mesh_add(m, "mesh['a'=4] {'a'}"), 0);
    /* sub-axes that do not divide their axis, or of size 0 */
    ck_assert_int_lt(xla_mesh_add(m, "mesh['a'=6] {'a':(4)2}"), 0);
    ck_assert_int_lt(xla_mesh_add(m, "mesh['a'=6] {'a':(2)2}"), 0);
    ck_assert_int_lt(xla_mesh_add(m, "mesh['a'=6] {'a':(0)2}"), 0);
    ck_assert_int_lt(xla_mesh_add(m, "mesh['a'=6] {'a':(2)}"), 0);
    /* runs of 2 and 3 (stride 1 size 2, stride 1 size 3): cuts 1, 2, 3, 6
     * do not divide (2 into 3) */
    ck_assert_int_ge(xla_mesh_add(m, "{{0,1},{2,3},{4,5}}"), 0);
    ck_assert_int_ge(xla_mesh_add(m, "{{0,1,2},{3,4,5}}"), 0);
    ck_assert(!xla_mesh_build(m));
    xla_mesh_free(m);
}
END_TEST

/* issue 41: XLA's group modes (collective_ops_utils.cc,
 * GetParticipatingFlattenedIdGroups), derived by hand over R replicas and P
 * partitions, device = replica x P + partition. */
START_TEST(group_modes_give_device_groups)
{
    ck_assert_int_eq(xla_groups_mode_of("all-reduce", true, false), XLA_GROUPS_CROSS_REPLICA_AND_PARTITION);
    ck_assert_int_eq(xla_groups_mode_of("all-gather-start", true, false), XLA_GROUPS_CROSS_REPLICA_AND_PARTITION);
    ck_assert_int_eq(xla_groups_mode_of("reduce-scatter", true, false), XLA_GROUPS_CROSS_REPLICA_AND_PARTITION);
    ck_assert_int_eq(xla_groups_mode_of("all-reduce", true, true), XLA_GROUPS_FLATTENED_ID);
    ck_assert_int_eq(xla_groups_mode_of("all-reduce", false, false), XLA_GROUPS_CROSS_REPLICA);
    ck_assert_int_eq(xla_groups_mode_of("all-to-all", true, false), XLA_GROUPS_CROSS_PARTITION);
    ck_assert_int_eq(xla_groups_mode_of("collective-permute", true, false), XLA_GROUPS_CROSS_PARTITION);
    static const struct {
        const char *groups;
        xla_groups_mode mode;
        uint64_t r, p;
        const char *want; /* NULL: the ids are devices already */
    } cases[] = {
        /* jaxlib 0.4.20's two_devices: replica 0 with both its partitions */
        {"{{0}}", XLA_GROUPS_CROSS_REPLICA_AND_PARTITION, 1, 2, "{{0,1}}"},
        {"{}", XLA_GROUPS_CROSS_REPLICA_AND_PARTITION, 1, 4, "{{0,1,2,3}}"},
        {"{{0},{1}}", XLA_GROUPS_CROSS_REPLICA_AND_PARTITION, 2, 2, "{{0,1},{2,3}}"},
        /* replicas {0,1} per partition q: {0x2+q, 1x2+q} */
        {"{{0,1}}", XLA_GROUPS_CROSS_REPLICA, 2, 2, "{{0,2},{1,3}}"},
        {"{}", XLA_GROUPS_CROSS_REPLICA, 1, 3, "{{0},{1},{2}}"},
        /* partitions {0,1} per replica k: {kx2+0, kx2+1} */
        {"{{0,1}}", XLA_GROUPS_CROSS_PARTITION, 2, 2, "{{0,1},{2,3}}"},
        {"{{0,1},{2,3}}", XLA_GROUPS_FLATTENED_ID, 2, 2, NULL},
        {"{{0,1}}", XLA_GROUPS_CROSS_PARTITION, 1, 2, NULL},
        {"{{0,1}}", XLA_GROUPS_CROSS_REPLICA, 2, 1, NULL},
        {"{{0}}", XLA_GROUPS_CROSS_REPLICA_AND_PARTITION, 0, 0, NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *out = NULL;
        ck_assert_msg(xla_groups_flatten(cases[i].groups, cases[i].mode, cases[i].r, cases[i].p, &out), "case %zu", i);
        if (cases[i].want)
            ck_assert_str_eq(out, cases[i].want);
        else
            ck_assert_ptr_null(out);
        g_free(out);
    }
    /* a replica past the one replica, an iota form to map: not mapped */
    char *out = NULL;
    ck_assert(!xla_groups_flatten("{{0,1}}", XLA_GROUPS_CROSS_REPLICA_AND_PARTITION, 1, 2, &out));
    ck_assert(!xla_groups_flatten("[1,2]<=[2]", XLA_GROUPS_CROSS_REPLICA_AND_PARTITION, 1, 2, &out));
    ck_assert(!xla_groups_flatten("{{0,1},{2", XLA_GROUPS_CROSS_REPLICA, 4, 2, &out));
    ck_assert_ptr_null(out);
}
END_TEST

/* The module's counts: from its line, else from a tiled sharding= (the
 * product of its tile dims, replicated last dim included). */
START_TEST(module_counts_from_line_or_sharding)
{
    static const struct {
        const char *module, *param;
        uint64_t r, p;
        bool from_sharding;
    } cases[] = {
        {"HloModule m", ", sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", 1, 8, true},
        {"HloModule m", ", sharding={{replicated}, {devices=[2,2]0,1,2,3}}", 1, 4, true},
        {"HloModule m", ", sharding={devices=[2,1]<=[2]}", 1, 2, true},
        {"HloModule m, num_partitions=4", ", sharding={devices=[8]<=[8]}", 1, 4, false},
        {"HloModule m, replica_count=2", "", 2, 1, false},
        {"HloModule m", ", sharding={maximal device=3}", 0, 0, false},
        {"HloModule m", ", sharding={replicated}", 0, 0, false},
        {"HloModule m", "", 0, 0, false},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        xla_hlo *h = xla_hlo_new();
        char *param = g_strdup_printf("  p = f32[8]{0} parameter(0)%s", cases[i].param);
        const char *lines[] = {cases[i].module, "", "ENTRY main (p: f32[8]) -> f32[8] {", param,
                               "  ROOT r = f32[8]{0} negate(p)", "}"};
        for (size_t k = 0; k < G_N_ELEMENTS(lines); k++)
            ck_assert(xla_hlo_feed(h, "m.txt", lines[k], k + 1, NULL));
        uint64_t r, p;
        bool from;
        xla_hlo_counts(h, &r, &p, &from);
        ck_assert_msg(r == cases[i].r && p == cases[i].p && from == cases[i].from_sharding,
                      "case %zu: %" G_GUINT64_FORMAT " x %" G_GUINT64_FORMAT, i, r, p);
        xla_hlo_free(h);
        g_free(param);
    }
}
END_TEST

START_TEST(sharded_programs_import_with_collectives)
{
    char *dir = strata_test_source_path(TP_DIR);
    strata_xla_figures f;
    GError *err = NULL;
    strata_source *src = strata_xla_import(dir, NULL, &f, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    /* all-reduce over {0..3},{4..7} (the model axis, 4 devices) and the
     * tuple all-reduce.4 over {0,4},.. (data, 2 devices) of three arrays */
    ck_assert_str_eq(f.mesh, "x0:2,x1:4");
    ck_assert_uint_eq(f.n_collectives, 2);
    ck_assert_uint_eq(f.n_collective_ops, 4);
    ck_assert_uint_eq(f.n_collective_notes, 0);
    const strata_op *op;
    int seen = 0;
    ck_assert_int_eq(strata_source_next(src, &op, &err), 1);
    ck_assert_int_eq(op->kind, STRATA_OP_OPTION);
    ck_assert_str_eq(op->value, "x0:2,x1:4");
    while (strata_source_next(src, &op, &err) == 1)
        if (op->kind == STRATA_OP_ALL_REDUCE) {
            ck_assert_str_eq(op->axis, seen == 0 ? "x1" : "x0");
            seen++;
        }
    ck_assert_int_eq(seen, 4);
    strata_source_free(src);
    strata_xla_figures_clear(&f);
    g_free(dir);

    dir = strata_test_source_path(FSDP_DIR);
    src = strata_xla_import(dir, NULL, &f, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    /* two all-gathers and all-reduce.2 over mesh['axis_0'=8,'axis_1'=1]
     * {'axis_0'}, three all-to-alls of 8 arrays each; all-gather.1 reads a
     * value inside a donated argument's allocation (the whole allocation is
     * one buffer, not 1/8 of the result): kept as a note. */
    ck_assert_str_eq(f.mesh, "x0:8");
    ck_assert_uint_eq(f.n_collectives, 6);
    ck_assert_uint_eq(f.n_collective_ops, 2 + 2 + 3 * 8);
    ck_assert_uint_eq(f.n_collective_notes, 1);
    strata_source_free(src);
    strata_xla_figures_clear(&f);
    g_free(dir);
}
END_TEST

/* issue 41, held-out program mesh3_subgroups (scripts/jax-heldout.py) on a
 * 2x2x2 (a, b, c) mesh. JAX 0.10.2 writes a mesh whose devices are not in
 * order with their iota (Mesh::ToString): mesh['axis_0'=4,'axis_1'=2],
 * device_ids=([2,2,2]T(0,2,1)): position (i, j) = 2i + j holds device
 * 4a + 2c + b where 2i + j = 4a + 2b + c, so positions 0..7 hold 0,2,1,3,
 * 4,6,5,7 and the groups along axis_0 (j fixed) are {0,1,4,5}, {2,3,6,7}:
 * devices 4 apart and 1 apart, axes x0 and x2 of x0:2,x1:2,x2:2 (JAX
 * 0.12.0.1 writes the same all-reduce as {'a','c'}). Its SPMD reshard
 * writes partial collective-permutes ({{0,1},{2,3}}) and one with self
 * pairs; each pair is one send: 0 -> 5 is (0,0,0) -> (1,0,1), ranks 0 and
 * 3 of the 4 over x0,x2: shift -1; 1 -> 4 is ranks 1 -> 2: +1. */
START_TEST(mesh_device_ids_and_partial_permutes)
{
    uint64_t n = 0;
    char *opt = NULL;
    const char *sets[] = {"mesh['axis_0'=4,'axis_1'=2], device_ids=([2,2,2]T(0,2,1)) {'axis_0'}",
                          "[4,2]<=[4,2]T(1,0)", NULL};
    char *a = axes_of(8, sets, 0, &opt, &n);
    ck_assert_str_eq(opt, "x0:2,x1:2,x2:2");
    ck_assert_str_eq(a, "x0,x2");
    ck_assert_uint_eq(n, 4);
    g_free(a);
    g_free(opt);
    xla_mesh *m = xla_mesh_new(8);
    /* not an iota list: not mapped (the collective stays a note) */
    ck_assert_int_lt(xla_mesh_add(m, "mesh['x'=4,'y'=2], device_ids=(0,1,2,3,4,5,7,6) {'x'}"), 0);
    ck_assert_ptr_null(xla_mesh_pairs(m, "{{0,1}}")); /* no mesh built yet */
    ck_assert_int_ge(xla_mesh_add(m, "{{0,1,4,5},{2,3,6,7}}"), 0);
    ck_assert_int_ge(xla_mesh_add(m, "{{0,2},{1,3},{4,6},{5,7}}"), 0);
    ck_assert(xla_mesh_build(m));
    GArray *pairs = xla_mesh_pairs(m, "{{0,0},{2,2},{1,4},{3,6},{4,1},{6,3},{5,5},{7,7}}");
    ck_assert_ptr_nonnull(pairs);
    ck_assert_uint_eq(pairs->len, 16);
    g_array_free(pairs, TRUE);
    ck_assert_ptr_null(xla_mesh_pairs(m, "{{0,1},{0,2}}")); /* a source twice */
    ck_assert_ptr_null(xla_mesh_pairs(m, "{{0,1},{2,1}}")); /* a target twice */
    ck_assert_ptr_null(xla_mesh_pairs(m, "{{0,8}}"));       /* past the devices */
    int32_t shift = 7;
    a = xla_mesh_pair_axes(m, 0, 5, &shift);
    ck_assert_str_eq(a, "x0,x2");
    ck_assert_int_eq(shift, -1);
    g_free(a);
    a = xla_mesh_pair_axes(m, 1, 4, &shift);
    ck_assert_str_eq(a, "x0,x2");
    ck_assert_int_eq(shift, 1);
    g_free(a);
    a = xla_mesh_pair_axes(m, 2, 3, &shift);
    ck_assert_str_eq(a, "x2");
    ck_assert_int_eq(shift, 1);
    g_free(a);
    ck_assert_ptr_null(xla_mesh_pair_axes(m, 5, 5, &shift));
    ck_assert_int_eq(shift, 0);
    xla_mesh_free(m);

    /* the real dump: every collective a strata collective; 4 permutes of
     * 2 + 2 + 2 + 8 pairs (4 of them self pairs: local copies) */
    char *dir = strata_test_source_path("tests/data/xla/mesh3");
    strata_xla_figures f;
    GError *err = NULL;
    strata_source *src = strata_xla_import(dir, NULL, &f, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    ck_assert_str_eq(f.mesh, "x0:2,x1:2,x2:2");
    ck_assert_uint_eq(f.n_collective_notes, 0);
    ck_assert_uint_eq(f.n_collectives, 8);
    const strata_op *op;
    int sends = 0, copies = 0;
    while (strata_source_next(src, &op, &err) == 1) {
        if (op->kind == STRATA_OP_COLLECTIVE_PERMUTE && op->has_device)
            sends++;
        if (op->kind == STRATA_OP_COPY && op->has_device)
            copies++;
    }
    ck_assert_int_eq(sends, 2 + 2 + 2 + 4);
    ck_assert_int_eq(copies, 4);
    strata_source_free(src);
    strata_xla_figures_clear(&f);
    /* and the trace checker takes it */
    char *tmp = strata_test_temp_dir();
    char *trace = g_build_filename(tmp, "mesh3.trace", NULL);
    strata_cli_result r = strata_test_cli("import", "xla", dir, "--quiet", "-o", trace, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("check", "--trace", trace, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    g_unlink(trace);
    g_rmdir(tmp);
    g_free(trace);
    g_free(tmp);
    g_free(dir);
}
END_TEST

/* `strata import xla DIR -o -` succeeds, its trace holding each line of
 * `trace` and its summary each of `summary` (either may be NULL). */
static void import_says(const char *dir_in_source, const char *const *trace, const char *const *summary)
{
    char *dir = strata_test_source_path(dir_in_source);
    strata_cli_result r = strata_test_cli("import", "xla", dir, "-o", "-", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    for (int i = 0; trace && trace[i]; i++)
        ck_assert_msg(strstr(r.out, trace[i]) != NULL, "'%s' not in the trace", trace[i]);
    for (int i = 0; summary && summary[i]; i++)
        ck_assert_msg(strstr(r.err, summary[i]) != NULL, "'%s' not in %s", summary[i], r.err);
    strata_cli_result_clear(&r);
    g_free(dir);
}

/* issue 41, memory kinds as XLA accounts them: a TPU v5e 2x2 program
 * compiled without a TPU (scripts/jax-tpu-aot.py, JAX 0.12.0.1, libtpu
 * 0.0.51). h = tanh(x @ w), x [64,256] f32 over 4 chips, so h is [16,256]
 * f32 = 16 KiB per chip, written to pinned_host: XLA gives it colour 5 and
 * S(5), and memory_analysis() counts it in host_output_size_in_bytes
 * (16384), not in output_size_in_bytes (1024: the two 512 B tiles of
 * sum(h) and the tuple). The trace puts it in memory host; w's 256 KiB
 * prefetch copy is colour 1 (VMEM); the JAX-style argument (256 KiB + 16
 * KiB = 278528) and output (1024) equal memory_analysis()'s. The copy to
 * host reads `copy-start(%fusion#1)` (XLA of jaxlib 0.12 writes the
 * get-tuple-element as NAME#INDEX): element 1 of the fusion, the value
 * fusion{1}, copied on stream xla-d2h (an empty compute until wave 15). */
START_TEST(tpu_host_output_as_xla_counts_it)
{
    const char *trace[] = {"alloc copy-start{0} 16KiB host tag=output",
                           "alloc copy-start.1{0} 256KiB vmem tag=activation",
                           "copy copy-start{0} fusion{1} stream=xla-d2h\n", NULL};
    const char *summary[] = {"argument            278528", "parameter                        278528",
                             "maybe-live-out                     1024", NULL};
    import_says("tests/data/xla/tpu-host", trace, summary);
}
END_TEST

/* issue 41, values written into the output allocation before the output
 * (tests/data/xla/outslice, hand-made): p f32[64] (256 B) is the argument;
 * s = p[0:32] (128 B) is put at offset 0 of the output allocation 1
 * (256 B), live 1-3; e = exp(s) and n = s + e (128 B each) are in the
 * preallocated-temp allocation 2 (256 B), live 2-4 and 3-4; the output
 * r = concat(e, n) (256 B) lives 4-5 in allocation 1. XLA's temp is 256
 * (allocation 2); s is output bytes to XLA. The trace holds allocation 1
 * as one buffer `r` from t=1 (s's write) to the end, so strata's temp is
 * e + n = 256 at t=3-4 (it was 384 with s as a temporary: s + e + n at
 * t=3), and the peak p + r + e + n = 768 is first reached at t=3. The
 * computes touching s inside r state their bytes: s 256 + 128 = 384,
 * e 128 + 128 = 256, n 128 + 128 + 128 = 384; r (all of r) none. */
START_TEST(values_in_the_output_allocation_are_output)
{
    const char *trace[] = {"compute xla.entry time=0 note=entry\nalloc r 256 tag=output dtype=f32 shape=64 "
                           "note=allocation.1\ncompute s in=p out=r bytes=384 note=slice\n",
                           "compute e flops=32 in=r out=e bytes=256 note=exponential\n",
                           "compute n flops=32 in=r,e out=n bytes=384 note=add\n",
                           "compute r in=e,n out=r note=concatenate\n", NULL};
    const char *summary[] = {"  temp                   256 256 B       preallocated-temp                   256 256 B",
                             "  output                 256 256 B       maybe-live-out                      256 256 B",
                             "768 768 B at t=3", NULL};
    import_says("tests/data/xla/outslice", trace, summary);
    /* The same rule on corpus programs (JAX 0.10.2). tp_step: the loss
     * before its scaling, multiply_reduce_fusion (4 B), is in the 4 B
     * output allocation 5 with the loss wrapped_multiply: one buffer, named
     * after the value live at the end, allocated where the fusion writes
     * it. subaxis_reduce: an all-reduce reads reduce_bitcast_fusion (32 B)
     * in the 64 B output allocation 0: the allocation is one buffer too,
     * named after the all-gather live at the end, from the fusion's write
     * (the fusion's compute states bytes=: param 64 + its 32 = 96). */
    const char *tp[] = {"alloc wrapped_multiply 4 tag=output dtype=f32 note=allocation.5\n"
                        "compute multiply_reduce_fusion flops=512 in=all-reduce out=wrapped_multiply note=fusion\n",
                        NULL};
    import_says(TP_DIR, tp, NULL);
    const char *sub[] = {"alloc all-gather 64 tag=output dtype=f32 shape=2x8 note=allocation.0\n"
                         "compute reduce_bitcast_fusion flops=32 in=param out=all-gather bytes=96 note=fusion\n",
                         NULL};
    import_says("tests/data/jax/subaxis_reduce", sub, NULL);
}
END_TEST

/* issue 41, a collective on a part of the output allocation
 * (tests/data/xla/outa2a, hand-made after the held-out scatter_all_to_all):
 * 4 partitions; p f32[32] (128 B) is the argument; a = exp(p) (128 B) is
 * put at offset 0 of the 512 B output allocation 1, live 1-2; the
 * all-to-all t = all-to-all(a) (128 B) is in the preallocated-temp
 * allocation 2, live 2-3; the output r = concat(t, t, t, t) (512 B) lives
 * 3-4 in allocation 1. XLA's temp is 128 (allocation 2). The trace holds
 * allocation 1 as one buffer r from t=1 and the all-to-all reads a part of
 * it: `bytes=128` (a's bytes; 128 is a multiple of the group's 4). So
 * strata's temp is t = 128 = XLA's (it was 256 with a as a buffer of its
 * own: a + t at t=2), and the peak p + r + t = 128 + 512 + 128 = 768 is
 * first reached at t=2 (t=3 before: p + t + r). exp's compute states its
 * bytes, p 128 + a 128 = 256. The all-to-all of 128 B in the 512 B r
 * runs as one of 128 B in a 128 B buffer would: the same line in `run`. */
START_TEST(collective_on_a_part_of_the_output_allocation)
{
    const char *trace[] = {"alloc r 512 tag=output dtype=f32 shape=128 note=allocation.1\n"
                           "compute a flops=32 in=p out=r bytes=256 note=exponential\n"
                           "alloc t 128 tag=temp dtype=f32 shape=32 note=allocation.2\n"
                           "all-to-all t r bytes=128 axis=x0 note=all-to-all\n"
                           "compute r in=t out=r note=concatenate\n", NULL};
    const char *summary[] = {"  temp                   128 128 B       preallocated-temp                   128 128 B",
                             "  total                  768 768 B       Total bytes used                    768 768 B",
                             "768 768 B at t=2", NULL};
    import_says("tests/data/xla/outa2a", trace, summary);
}
END_TEST

/* host_offload keeps w in pinned_host: the CPU's buffer assignment has one
 * colour, but the entry layout says (f32[16,32]{1,0:S(5)}, f32[8,16]{1,0}),
 * so w.1 (16x32 f32, 2 KiB) is allocated in host memory, x.1 on the device. */
START_TEST(pinned_host_argument_in_host_memory)
{
    const char *trace[] = {"alloc w.1 2KiB host tag=param", "alloc x.1 512 tag=param", NULL};
    import_says("tests/data/jax/host_offload", trace, NULL);
}
END_TEST

/* A sharded corpus program runs on a TPU v5e slice (8 chips of the 4x4
 * torus as 2x4) and on a DGX H100 (8 GPUs on NVSwitch). */
START_TEST(sharded_program_runs_on_tpu_and_gpu)
{
    char *tmp = strata_test_temp_dir();
    const char *programs[] = {TP_DIR, FSDP_DIR};
    for (int p = 0; p < 2; p++) {
        char *dir = strata_test_source_path(programs[p]);
        char *trace = g_build_filename(tmp, "sharded.trace", NULL);
        strata_cli_result r = strata_test_cli("import", "xla", dir, "-o", trace, NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        strata_cli_result_clear(&r);
        char *tpu = strata_test_source_path("configs/hw/tpu-v5e-16.ini");
        char *gpu = strata_test_source_path("configs/hw/dgx-h100.ini");
        r = strata_test_cli("run", "--hw", tpu, "--set", "hardware.devices=8", "--set", "interconnect.ici.dims=2x4",
                            "--trace", trace, NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_ptr_nonnull(strstr(r.out, "status    ok"));
        ck_assert_ptr_nonnull(strstr(r.out, "devices   8, mesh"));
        ck_assert_ptr_nonnull(strstr(r.out, p == 0 ? "all-reduce         x1" : "all-gather         x0"));
        strata_cli_result_clear(&r);
        r = strata_test_cli("run", "--hw", gpu, "--trace", trace, NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_ptr_nonnull(strstr(r.out, "status    ok"));
        ck_assert_ptr_nonnull(strstr(r.out, p == 0 ? "all-reduce         x0" : "all-to-all         x0"));
        strata_cli_result_clear(&r);
        g_remove(trace);
        g_free(trace);
        g_free(tpu);
        g_free(gpu);
        g_free(dir);
    }
    g_rmdir(tmp);
    g_free(tmp);
}
END_TEST

/* The corpus's CPU profile of three scan_mlp steps (jax.profiler, JAX
 * 0.10.2). Derived from the file with a separate reader (Python's json):
 * 333 events carry args.hlo_op; two per step's loop, while.3 and while.14,
 * span their bodies' ops and are left out (6); the 327 others sum 461.121
 * us, 60 of them copies; the first is copy.32 (8.953 us); first start to
 * the last end of any of them (the last while's included) is 937.992 us. Both files of the run give the same ops. */
START_TEST(jax_profile_ops_at_measured_durations)
{
    const char *files[] = {PROFILE, PERFETTO};
    for (int i = 0; i < 2; i++) {
        char *path = strata_test_source_path(files[i]);
        strata_jax_profile_summary s;
        GError *err = NULL;
        strata_source *src = strata_jax_profile_import(path, STRATA_JAX_DEVICE_AUTO, &s, &err);
        ck_assert_msg(src != NULL, "%s", err ? err->message : "");
        ck_assert(strata_jax_profile_sniff(path));
        ck_assert_uint_eq(s.n_xla_ops, 333);
        ck_assert_uint_eq(s.n_devices, 1);
        ck_assert_int_eq(s.device, 0);
        ck_assert_uint_eq(s.n_ops, 327);
        ck_assert_uint_eq(s.n_enclosing, 6);
        ck_assert_uint_eq(s.n_copies, 60);
        ck_assert_uint_eq(s.n_collectives, 0);
        ck_assert_double_eq_tol(s.busy_s, 461.121e-6, 1e-12);
        ck_assert_double_eq_tol(s.span_s, 937.992e-6, 1e-12);
        const strata_op *op;
        ck_assert_int_eq(strata_source_next(src, &op, &err), 1);
        ck_assert_int_eq(op->kind, STRATA_OP_COMPUTE);
        ck_assert_str_eq(op->name, "copy.32");
        ck_assert_str_eq(op->note, "copy");
        ck_assert_double_eq_tol(op->time_s, 8.953e-6, 1e-15);
        ck_assert_double_eq_tol(op->at_s, 0, 1e-15);
        uint64_t n = 1, sync = 0;
        bool while_seen = false;
        while (strata_source_next(src, &op, &err) == 1) {
            n += op->kind == STRATA_OP_COMPUTE;
            sync += op->kind == STRATA_OP_RECORD || op->kind == STRATA_OP_WAIT;
            while_seen |= g_str_has_prefix(op->name, "while");
        }
        ck_assert_uint_eq(n, 327);
        /* two executor threads: the one op of the second follows the first's op before it (a record and a wait) */
        ck_assert_uint_eq(s.n_threads, 2);
        ck_assert_uint_eq(sync, 2);
        ck_assert(!while_seen);
        strata_source_free(src);
        /* --device 3: this CPU run has device 0 only */
        ck_assert_ptr_null(strata_jax_profile_import(path, 3, &s, &err));
        ck_assert_ptr_nonnull(strstr(err->message, "expected XLA op events of device 3"));
        g_clear_error(&err);
        g_free(path);
    }
    /* A PyTorch profiler trace is not a JAX profile. */
    char *kineto = strata_test_write_temp("k-XXXXXX.json",
                                          "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                                          "\"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 2, \"args\": {\"device\": 0}}]}");
    ck_assert(!strata_jax_profile_sniff(kineto));
    strata_jax_profile_summary s;
    GError *err = NULL;
    ck_assert_ptr_null(strata_jax_profile_import(kineto, STRATA_JAX_DEVICE_AUTO, &s, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "expected XLA op events"));
    g_clear_error(&err);
    g_unlink(kineto);
    g_free(kineto);
}
END_TEST

/* The GPU/TPU form of the same format (hand-made, as TSL writes it): each
 * device a process /device:GPU:N with an "XLA Ops" thread whose events
 * are the ops (no args.hlo_op), host threads beside them. Device 1 ran
 * fusion.1 (10 us), all-reduce-start (4 us), copy-start (2 us) and a while
 * (30 us) around fusion.2 (5 us): 4 ops written, the while left out, busy
 * 10 + 4 + 2 + 5 = 21 us, span from 100 to 150 us = 50 us. Device 0 ran one
 * op; the Python thread's event is not an op. */
START_TEST(jax_profile_devices_and_xla_ops_threads)
{
    const char *json =
        "{\"displayTimeUnit\": \"ns\", \"traceEvents\": ["
        "{\"ph\": \"M\", \"pid\": 1, \"name\": \"process_name\", \"args\": {\"name\": \"/device:GPU:0\"}},"
        "{\"ph\": \"M\", \"pid\": 1, \"tid\": 5, \"name\": \"thread_name\", \"args\": {\"name\": \"XLA Ops\"}},"
        "{\"ph\": \"M\", \"pid\": 2, \"name\": \"process_name\", \"args\": {\"name\": \"/device:GPU:1\"}},"
        "{\"ph\": \"M\", \"pid\": 2, \"tid\": 5, \"name\": \"thread_name\", \"args\": {\"name\": \"XLA Ops\"}},"
        "{\"ph\": \"M\", \"pid\": 9, \"name\": \"process_name\", \"args\": {\"name\": \"/host:CPU\"}},"
        "{\"ph\": \"M\", \"pid\": 9, \"tid\": 1, \"name\": \"thread_name\", \"args\": {\"name\": \"python\"}},"
        "{\"ph\": \"X\", \"pid\": 9, \"tid\": 1, \"ts\": 90, \"dur\": 80, \"name\": \"PjitFunction(step)\"},"
        "{\"ph\": \"X\", \"pid\": 1, \"tid\": 5, \"ts\": 100, \"dur\": 7, \"name\": \"fusion.1\"},"
        "{\"ph\": \"X\", \"pid\": 2, \"tid\": 5, \"ts\": 100, \"dur\": 10, \"name\": \"fusion.1\"},"
        "{\"ph\": \"X\", \"pid\": 2, \"tid\": 5, \"ts\": 112, \"dur\": 4, \"name\": \"all-reduce-start\"},"
        "{\"ph\": \"X\", \"pid\": 2, \"tid\": 5, \"ts\": 117, \"dur\": 2, \"name\": \"copy-start\"},"
        "{\"ph\": \"X\", \"pid\": 2, \"tid\": 5, \"ts\": 120, \"dur\": 30, \"name\": \"while\"},"
        "{\"ph\": \"X\", \"pid\": 2, \"tid\": 5, \"ts\": 125, \"dur\": 5, \"name\": \"fusion.2\"}"
        "]}";
    char *path = strata_test_write_temp("gpu-XXXXXX.trace.json", json);
    ck_assert(strata_jax_profile_sniff(path));
    strata_jax_profile_summary s;
    GError *err = NULL;
    strata_source *src = strata_jax_profile_import(path, 1, &s, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    ck_assert_uint_eq(s.n_devices, 2);
    ck_assert_uint_eq(s.n_xla_ops, 6);
    ck_assert_int_eq(s.device, 1);
    ck_assert_uint_eq(s.n_ops, 4);
    ck_assert_uint_eq(s.n_enclosing, 1);
    ck_assert_uint_eq(s.n_collectives, 1);
    ck_assert_uint_eq(s.n_copies, 1);
    ck_assert_double_eq_tol(s.busy_s, 21e-6, 1e-15);
    ck_assert_double_eq_tol(s.span_s, 50e-6, 1e-15);
    const char *names[] = {"fusion.1", "all-reduce-start", "copy-start", "fusion.2"};
    const char *notes[] = {"op", "collective", "copy", "op"};
    const double at[] = {0, 12e-6, 17e-6, 25e-6};
    const strata_op *op;
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(strata_source_next(src, &op, &err), 1);
        ck_assert_str_eq(op->name, names[i]);
        ck_assert_str_eq(op->note, notes[i]);
        ck_assert_double_eq_tol(op->at_s, at[i], 1e-15);
    }
    ck_assert_int_eq(strata_source_next(src, &op, &err), 0);
    strata_source_free(src);
    /* the default: the lowest device, 0, with its one op */
    src = strata_jax_profile_import(path, STRATA_JAX_DEVICE_AUTO, &s, &err);
    ck_assert_ptr_nonnull(src);
    ck_assert_int_eq(s.device, 0);
    ck_assert_uint_eq(s.n_ops, 1);
    strata_source_free(src);
    g_unlink(path);
    g_free(path);
}
END_TEST

/* The CLI: import jax-profile writes a trace that runs, and validate
 * --against prints its error table for the profile: the ops at their
 * measured 461.121 us, and the span 937.992 us against the simulated
 * makespan (the ops back to back: 461.121 us, -50.84%). */
START_TEST(jax_profile_cli_and_validate)
{
    char *path = strata_test_source_path(PROFILE);
    char *tmp = strata_test_temp_dir();
    char *trace = g_build_filename(tmp, "p.trace", NULL);
    strata_cli_result r = strata_test_cli("import", "jax-profile", path, "-o", trace, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "device 0: 327 ops (60 copies, 0 collectives; 6 enclosing ops left out), busy 461.121 us"));
    strata_cli_result_clear(&r);
    char *hw = strata_test_source_path("configs/hw/tpu-v5e.ini");
    r = strata_test_cli("run", "--hw", hw, "--trace", trace, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "makespan  461.121 us"));
    strata_cli_result_clear(&r);
    r = strata_test_cli("validate", "--against", path, "--hw", hw, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    const char *text = r.out && strstr(r.out, "span") ? r.out : r.err;
    ck_assert_ptr_nonnull(strstr(text, "all              327       461.121 us       461.121 us"));
    ck_assert_ptr_nonnull(strstr(text, "span                       937.992 us       461.121 us   -50.84%"));
    strata_cli_result_clear(&r);
    g_unlink(trace);
    g_rmdir(tmp);
    g_free(trace);
    g_free(tmp);
    g_free(hw);
    g_free(path);
}
END_TEST

/* Ops that ran on several threads of one device (the CPU executor's) keep
 * overlapping. Device 0, hand-made, as TSL writes a CPU run (args hlo_op,
 * device_ordinal): thread 11 ran A [0, 10] and C [12, 20], thread 12 B
 * [2, 8] (beside A) and D [21, 25], thread 13 E [9, 11] (us). Time order A
 * B E C D; each thread a stream, t0 (11), t1 (12), t2 (13); an op waits for
 * the latest op of each other thread that had ended when it started: E for
 * B (e1); C for B (e1) and E (e2); D for C (e3) and E (e2, not yet waited
 * on t1). Simulated: t0 A 0-10; t1 B 0-6; t2 E 6-8; C waits to 10 (A),
 * 10-18; D 18-22: makespan 22 us against the measured 25 us (-12%), where
 * back to back it was 10 + 6 + 2 + 8 + 4 = 30 us (+20%). */
START_TEST(jax_profile_threads_overlap)
{
    const char *json = "{\"traceEvents\": ["
        "{\"ph\": \"M\", \"pid\": 701, \"name\": \"process_name\", \"args\": {\"name\": \"/host:CPU\"}},"
#define EV(TID, TS, DUR, NAME)                                                                                      \
    "{\"ph\": \"X\", \"pid\": 701, \"tid\": " #TID ", \"ts\": " #TS ", \"dur\": " #DUR ", \"name\": \"" NAME     \
    "\", \"args\": {\"hlo_op\": \"" NAME "\", \"device_ordinal\": \"0\"}}"
        EV(11, 100, 10, "A") "," EV(12, 102, 6, "B") "," EV(11, 112, 8, "C") "," EV(12, 121, 4, "D") ","
        EV(13, 109, 2, "E")
#undef EV
        "]}";
    char *path = strata_test_write_temp("cpu-XXXXXX.trace.json", json);
    char *tmp = strata_test_temp_dir();
    char *trace = g_build_filename(tmp, "t.trace", NULL);
    strata_cli_result r = strata_test_cli("import", "jax-profile", path, "-o", trace, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    char *text = NULL;
    ck_assert(g_file_get_contents(trace, &text, NULL, NULL));
    ck_assert_msg(strstr(text, "compute A time=10us stream=t0 at=0 note=op\n"
                               "compute B time=6us stream=t1 at=2us note=op\n"
                               "record e1 stream=t1\n"
                               "wait e1 stream=t2\n"
                               "compute E time=2us stream=t2 at=9us note=op\n"
                               "record e2 stream=t2\n"
                               "wait e1 stream=t0\n"
                               "wait e2 stream=t0\n"
                               "compute C time=8us stream=t0 at=12us note=op\n"
                               "record e3 stream=t0\n"
                               "wait e3 stream=t1\n"
                               "wait e2 stream=t1\n"
                               "compute D time=4us stream=t1 at=21us note=op\n"),
                  "%s", text);
    g_free(text);
    char *hw = strata_test_source_path("configs/hw/tpu-v5e.ini");
    r = strata_test_cli("validate", "--against", path, "--hw", hw, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    const char *out = r.out && strstr(r.out, "span") ? r.out : r.err;
    ck_assert_msg(strstr(out, "5 XLA ops at their measured times, each thread a stream (overlapping ops overlap)"),
                  "%s", out);
    ck_assert_msg(strstr(out, "all                5        30.000 us        30.000 us    +0.00%"), "%s", out);
    ck_assert_msg(strstr(out, "span                        25.000 us        22.000 us   -12.00%"), "%s", out);
    strata_cli_result_clear(&r);
    g_unlink(trace);
    g_rmdir(tmp);
    g_unlink(path);
    g_free(hw);
    g_free(trace);
    g_free(tmp);
    g_free(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("jax_corpus");
    TCase *tc = tcase_create("jax_corpus");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, replica_groups_become_mesh_axes);
    tcase_add_test(tc, groups_that_are_not_mesh_axes);
    tcase_add_test(tc, group_modes_give_device_groups);
    tcase_add_test(tc, module_counts_from_line_or_sharding);
    tcase_add_test(tc, sharded_programs_import_with_collectives);
    tcase_add_test(tc, mesh_device_ids_and_partial_permutes);
    tcase_add_test(tc, sharded_program_runs_on_tpu_and_gpu);
    tcase_add_test(tc, pinned_host_argument_in_host_memory);
    tcase_add_test(tc, tpu_host_output_as_xla_counts_it);
    tcase_add_test(tc, jax_profile_ops_at_measured_durations);
    tcase_add_test(tc, jax_profile_cli_and_validate);
    tcase_add_test(tc, jax_profile_threads_overlap);
    tcase_add_test(tc, jax_profile_devices_and_xla_ops_threads);
    tcase_add_test(tc, values_in_the_output_allocation_are_output);
    tcase_add_test(tc, collective_on_a_part_of_the_output_allocation);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
