/*
 * test_phases.c: collectives in phases (spmd.h, STRATA_SPMD_PHASES) against
 * the step-level schedule (--collectives steps) on the analytical cases:
 * every collective's time, the makespan and the bytes each link carried
 * agree to rounding, while the phases hand the engine fewer ops.
 *
 * Why exact: in each case every round of a phase is the same moves, each
 * copy alone on its link direction with the same latency (a ring on a
 * ring, each direction of a bidirectional ring, each dimension's rings of
 * a 2D torus), so k rounds of (latency + c / bandwidth + reduction of c)
 * equal one flow of k c bytes, k - 1 more latencies and a reduction of k c
 * (time linear in its bytes, k overheads). The tree's rounds all differ:
 * it stays step by step, the same ops.
 *
 * Ops: ring all-reduce over 8 devices has 14 rounds (7 reduce-scatter,
 * 7 all-gather), which phases fold into 2, so the phases hand out fewer
 * ops; the tree's rounds all differ and give the same ops.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <json-glib/json-glib.h>
#include "spmd/collective.h"
#include "testutil.h"

typedef struct run_figures {
    double makespan;
    uint64_t ops;
    GArray *coll_times; /* double */
    GArray *link_bytes; /* double, in the JSON's order */
} run_figures;

static run_figures run_json(const char *trace, const char *hw, const char *mode)
{
    char *dir = strata_test_temp_dir();
    char *json = g_build_filename(dir, "r.json", NULL);
    char *hw_path = strata_test_source_path(hw);
    strata_cli_result r =
        strata_test_cli("run", "-q", "--trace", trace, "--hw", hw_path, "--collectives", mode, "--json", json, NULL);
    ck_assert_msg(r.status == 0, "%s %s: %s", hw, mode, r.err);
    strata_cli_result_clear(&r);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_file(p, json, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    run_figures f = {.makespan = json_object_get_double_member(root, "makespan_s"),
                     .ops = (uint64_t)json_object_get_int_member(root, "ops"),
                     .coll_times = g_array_new(FALSE, FALSE, sizeof(double)),
                     .link_bytes = g_array_new(FALSE, FALSE, sizeof(double))};
    JsonArray *colls = json_object_get_array_member(root, "collectives");
    for (guint i = 0; i < json_array_get_length(colls); i++) {
        double t = json_object_get_double_member(json_array_get_object_element(colls, i), "time_s");
        g_array_append_val(f.coll_times, t);
    }
    JsonObject *links = json_object_get_object_member(root, "links");
    GList *names = json_object_get_members(links); /* in the JSON's order */
    for (GList *n = names; n; n = n->next) {
        double b = json_node_get_double(json_object_get_member(json_object_get_object_member(links, n->data),
                                                                "bytes"));
        g_array_append_val(f.link_bytes, b);
    }
    g_list_free(names);
    g_object_unref(p);
    strata_test_remove_dir(dir);
    g_free(hw_path);
    g_free(json);
    g_free(dir);
    return f;
}

static void figures_clear(run_figures *f)
{
    g_array_free(f->coll_times, TRUE);
    g_array_free(f->link_bytes, TRUE);
}

static void close_to(double a, double b, const char *what)
{
    ck_assert_msg(fabs(a - b) <= 1e-9 * fabs(b), "%s: phases %.17g, steps %.17g", what, a, b);
}

/* Runs the trace both ways; the phases must match the steps and hand out
 * fewer ops (or the same, when `folds` is false). */
static void compare(const char *trace, const char *hw, bool folds)
{
    run_figures steps = run_json(trace, hw, "steps"), phases = run_json(trace, hw, "phases");
    close_to(phases.makespan, steps.makespan, "makespan");
    ck_assert_uint_eq(phases.coll_times->len, steps.coll_times->len);
    for (guint i = 0; i < steps.coll_times->len; i++)
        close_to(g_array_index(phases.coll_times, double, i), g_array_index(steps.coll_times, double, i),
                 "collective time");
    ck_assert_uint_eq(phases.link_bytes->len, steps.link_bytes->len);
    for (guint i = 0; i < steps.link_bytes->len; i++)
        close_to(g_array_index(phases.link_bytes, double, i), g_array_index(steps.link_bytes, double, i),
                 "link bytes");
    if (folds)
        ck_assert_msg(phases.ops < steps.ops, "ops: phases %" G_GUINT64_FORMAT ", steps %" G_GUINT64_FORMAT,
                      phases.ops, steps.ops);
    else
        ck_assert_uint_eq(phases.ops, steps.ops);
    figures_clear(&steps);
    figures_clear(&phases);
}

static char *gen_collective(const char *dir, const char *op, const char *algo, const char *devices)
{
    char *trace = g_strdup_printf("%s/%s-%s.trace", dir, op, algo);
    char *a = g_strdup_printf("op=%s", op), *b = g_strdup_printf("algo=%s", algo);
    strata_cli_result r = strata_test_cli("gen", "collective", a, b, devices, "bytes=64MiB", "-o", trace, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    g_free(a);
    g_free(b);
    return trace;
}

START_TEST(test_rings_and_tree)
{
    char *dir = strata_test_temp_dir();
    static const struct {
        const char *op, *algo;
        bool folds;
    } cases[] = {
        {"all-reduce", "ring", true},       {"all-gather", "ring", true},
        {"reduce-scatter", "ring", true},   {"all-reduce", "bidir-ring", true},
        {"all-gather", "bidir-ring", true}, {"all-reduce", "tree", false},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *trace = gen_collective(dir, cases[i].op, cases[i].algo, "devices=8");
        compare(trace, "configs/hw/test-ring8.ini", cases[i].folds);
        g_free(trace);
    }
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

/* A 4x4 torus (test-torus16): the torus all-reduce over both axes, rings
 * along one axis, an all-gather and a reduce-scatter. */
START_TEST(test_torus_2d)
{
    char *trace = strata_test_write_temp("torus-XXXXXX.trace", "strata-trace 1\n"
                                                               "option mesh=data:4,model:4\n"
                                                               "alloc g 64MiB dtype=f32\n"
                                                               "alloc h 16MiB dtype=f32\n"
                                                               "all-reduce g axis=data,model algo=torus\n"
                                                               "all-reduce g axis=model algo=ring\n"
                                                               "all-gather g h axis=data\n"
                                                               "reduce-scatter h g axis=data\n"
                                                               "free g\nfree h\n");
    compare(trace, "configs/hw/test-torus16.ini", true);
    unlink(trace);
    g_free(trace);
}
END_TEST

/* A 4x4 mesh without wrap-around (tpu-v5e-16): a ring over a line of 4
 * closes with a copy across the whole line (3 links, 3 latencies). In a
 * bidirectional ring that copy shares each link direction with one
 * one-link copy of the other direction: equal counts per link, but
 * SimGrid's CM02 shares a link in inverse proportion to each flow's route
 * latency (weight-S = 0), so the one-link copy gets 3/4 of the link and
 * ends first. Those rounds must stay step by step (the equal-share test
 * compares the route latencies of the copies meeting on a link); before
 * that check the phases ran 4.3% slow here (1.381 against 1.324 ms). The
 * single ring over `model` is uncontended and still folds. */
START_TEST(test_mesh_without_wraparound)
{
    char *trace = strata_test_write_temp("mesh-XXXXXX.trace", "strata-trace 1\n"
                                                              "option mesh=data:4,model:4\n"
                                                              "alloc g 12MiB dtype=f32\n"
                                                              "all-reduce g axis=data algo=bidir-ring\n"
                                                              "all-reduce g axis=data,model algo=bidir-torus\n"
                                                              "all-reduce g axis=model algo=ring\n"
                                                              "free g\n");
    compare(trace, "configs/hw/tpu-v5e-16.ini", true);
    unlink(trace);
    g_free(trace);
}
END_TEST

/* --collectives takes phases or steps only. */
/* The fold while the schedule is built (strata_coll_shape.fold): a ring
 * all-reduce over n = 1,000 ranks of L = 1,000,003 bytes. Unfolded, each
 * of its 2(n-1) = 1,998 rounds has n steps: 1,998,000. Every round of the
 * reduce-scatter is the same moves (rank q receives from q-1 on lane 0,
 * IN to IN, reducing), and so is every round of the all-gather (no
 * reduction): each folds into n steps of n-1 = 999 rounds, 2,000 steps in
 * all. Chunk i is [L i / n, L (i+1) / n): 1,000 or 1,001 bytes (L / n =
 * 1,000.003), so a folded step's largest round moves 1,001 and the n
 * steps of the reduce-scatter together carry every chunk n-1 times:
 * 999 x 1,000,003 bytes. */
START_TEST(test_fold_unequal_chunks)
{
    strata_coll_shape sh = {.kind = STRATA_OP_ALL_REDUCE, .algo = STRATA_ALGO_RING, .n_dims = 1, .dims = {1000},
                            .in_bytes = 1000003, .fold = true};
    GArray *steps = g_array_new(FALSE, FALSE, sizeof(strata_coll_step));
    ck_assert_uint_eq(strata_coll_schedule(&sh, steps), 1998);
    ck_assert_uint_eq(steps->len, 2000);
    uint64_t rs_bytes = 0;
    for (guint i = 0; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        ck_assert_uint_eq(st->rounds, 999);
        ck_assert_uint_eq(st->max_bytes, 1001);
        ck_assert_uint_eq(st->round, i < 1000 ? 0 : 999);
        if (st->reduce)
            rs_bytes += st->bytes;
    }
    ck_assert_uint_eq(rs_bytes, 999ull * 1000003ull);
    g_array_set_size(steps, 0);
    sh.fold = false;
    ck_assert_uint_eq(strata_coll_schedule(&sh, steps), 1998);
    ck_assert_uint_eq(steps->len, 1998000);
    g_array_free(steps, TRUE);
}
END_TEST

START_TEST(test_bad_mode)
{
    char *hw = strata_test_source_path("configs/hw/test-ring8.ini");
    char *trace = strata_test_source_path("traces/spmd/collectives.trace");
    strata_cli_result r = strata_test_cli("run", "--trace", trace, "--hw", hw, "--collectives", "rounds", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "expected phases or steps, got 'rounds'"), "%s", r.err);
    strata_cli_result_clear(&r);
    g_free(trace);
    g_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("phases");
    TCase *tc = tcase_create("phases");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_rings_and_tree);
    tcase_add_test(tc, test_torus_2d);
    tcase_add_test(tc, test_mesh_without_wraparound);
    tcase_add_test(tc, test_bad_mode);
    tcase_add_test(tc, test_fold_unequal_chunks);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
