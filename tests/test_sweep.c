/*
 * test_sweep.c: experiments and sweeps (sim/sweep, `strata sweep`).
 *
 * The experiment used throughout: a 256 MiB host->HBM copy over a PCIe link
 * then a 1 ms compute, swept over link.pcie.bandwidth (16, 32 GB/s) x
 * memory.hbm.capacity (128 MiB, 1 GiB). Derived by hand:
 *   16 GB/s: 268435456 B / 16e9 B/s = 16.777216 ms + 1 us latency + 1 ms
 *            = 17.778216 ms
 *   32 GB/s: 8.388608 ms + 1 us + 1 ms = 9.389608 ms
 *   128 MiB: the 256 MiB device buffer does not fit: status oom.
 * Points (last axis fastest): 0 = 16GB/s,128MiB  1 = 16GB/s,1GiB
 *                             2 = 32GB/s,128MiB  3 = 32GB/s,1GiB
 */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include "core/error.h"
#include "sweep/experiment.h"
#include "testutil.h"

static const char HW[] =
    "[hardware]\nname = sweep-test\nsource = round numbers for hand-derived tests\n"
    "[memory hbm]\nkind = device\ncapacity = 1GiB\nbandwidth = 1TB/s\nlatency = 0\n"
    "[memory host]\nkind = host\ncapacity = 64GiB\nbandwidth = 100GB/s\n"
    "[link pcie]\nbetween = host hbm\nbandwidth = 16GB/s\nlatency = 1us\nduplex = full\n"
    "[compute core]\nflops = 100TFLOP/s\noperands = hbm\n";

static const char TRACE[] =
    "strata-trace 1\n"
    "alloc w 256MiB host tag=param\n"
    "alloc d 256MiB tag=param\n"
    "copy d w\n"
    "compute k time=1ms in=d\n"
    "free d\n"
    "free w\n";

static const char EXP_HEAD[] =
    "[experiment]\n"                 /* 1 */
    "name = t\n"                     /* 2 */
    "hardware = hw.ini\n"            /* 3 */
    "trace = t.trace\n";             /* 4 */
static const char EXP_SWEEP[] =
    "[sweep]\n"                                   /* 5 */
    "link.pcie.bandwidth = 16GB/s, 32GB/s\n"      /* 6 */
    "memory.hbm.capacity = 128MiB, 1GiB\n"        /* 7 */
    "[output]\n"                                  /* 8 */
    "figures = status, makespan_s, memories.hbm.peak_allocated_bytes\n"
    "plots = axes\n";

typedef struct fixture {
    char *dir, *exp;
} fixture;

static void put(const char *dir, const char *name, const char *text)
{
    char *path = g_build_filename(dir, name, NULL);
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    g_free(path);
}

static fixture make_fixture(const char *exp_text)
{
    fixture f = {strata_test_temp_dir(), NULL};
    put(f.dir, "hw.ini", HW);
    put(f.dir, "t.trace", TRACE);
    put(f.dir, "bad.trace", "strata-trace 1\nwait never-recorded\n");
    put(f.dir, "exp.ini", exp_text);
    f.exp = g_build_filename(f.dir, "exp.ini", NULL);
    return f;
}

static fixture standard_fixture(void)
{
    char *text = g_strconcat(EXP_HEAD, EXP_SWEEP, NULL);
    fixture f = make_fixture(text);
    g_free(text);
    return f;
}

static void fixture_clear(fixture *f)
{
    g_free(f->dir);
    g_free(f->exp);
}

static char *out_path(const fixture *f, const char *rel)
{
    return g_build_filename(f->dir, "out", rel, NULL);
}

START_TEST(expands_cross_product)
{
    fixture f = standard_fixture();
    GError *err = NULL;
    strata_experiment *e = strata_experiment_load(f.exp, &err);
    ck_assert_msg(e != NULL, "%s", err ? err->message : "");
    ck_assert_uint_eq(strata_experiment_point_count(e), 4);
    ck_assert_uint_eq(strata_experiment_axis_count(e), 2);
    ck_assert_str_eq(strata_experiment_axis_name(e, 0), "link.pcie.bandwidth");
    ck_assert_int_eq(strata_experiment_axis_unit(e, 0), STRATA_AXIS_BANDWIDTH);
    ck_assert_int_eq(strata_experiment_axis_unit(e, 1), STRATA_AXIS_SIZE);
    double v = 0;
    ck_assert(strata_experiment_axis_number(e, 0, 1, &v));
    ck_assert_double_eq(v, 32e9);
    ck_assert(strata_experiment_axis_number(e, 1, 0, &v));
    ck_assert_double_eq(v, 134217728.0);
    /* Last axis fastest. */
    const guint want[4][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}};
    for (uint64_t p = 0; p < 4; p++)
        for (guint a = 0; a < 2; a++)
            ck_assert_uint_eq(strata_experiment_point_value(e, p, a), want[p][a]);
    const char *const *figs = strata_experiment_figures(e);
    ck_assert_str_eq(figs[0], "status");
    ck_assert_str_eq(figs[2], "memories.hbm.peak_allocated_bytes");
    ck_assert_ptr_null(figs[3]);

    strata_point_plan *plan = strata_experiment_plan(e, 2, "/o", "/o/p.json", NULL);
    ck_assert_ptr_null(plan->input_argv);
    char *cmd = g_strjoinv(" ", plan->run_argv);
    ck_assert_msg(strstr(cmd, "run --hw ") == cmd, "%s", cmd);
    ck_assert_msg(strstr(cmd, "--set link.pcie.bandwidth=32GB/s --set memory.hbm.capacity=128MiB"), "%s", cmd);
    ck_assert_msg(strstr(cmd, "--json /o/p.json"), "%s", cmd);
    ck_assert_msg(!strstr(cmd, "--timeline"), "%s", cmd);
    g_free(cmd);
    strata_point_plan_free(plan);
    strata_experiment_free(e);
    fixture_clear(&f);
}
END_TEST

START_TEST(policy_axes_compose_in_order)
{
    /* (not pad, then pad=8x128: a policy twice is refused when the point runs, the eighth pass) */
    char *text = g_strconcat(EXP_HEAD, "policies = donate\n[sweep]\npolicy = none, prefetch=1+pad=8x128\n", NULL);
    fixture f = make_fixture(text);
    g_free(text);
    GError *err = NULL;
    strata_experiment *e = strata_experiment_load(f.exp, &err);
    ck_assert_msg(e != NULL, "%s", err ? err->message : "");
    ck_assert_uint_eq(strata_experiment_point_count(e), 2);
    strata_point_plan *plan = strata_experiment_plan(e, 0, "/o", "/o/p.json", NULL);
    char *cmd = g_strjoinv(" ", plan->run_argv);
    ck_assert_msg(strstr(cmd, "--policy donate --json"), "%s", cmd);
    g_free(cmd);
    strata_point_plan_free(plan);
    plan = strata_experiment_plan(e, 1, "/o", "/o/p.json", NULL);
    cmd = g_strjoinv(" ", plan->run_argv);
    ck_assert_msg(strstr(cmd, "--policy donate --policy prefetch=1 --policy pad=8x128 --json"), "%s", cmd);
    g_free(cmd);
    strata_point_plan_free(plan);
    strata_experiment_free(e);
    fixture_clear(&f);
}
END_TEST

START_TEST(workload_inputs_are_cached_by_command)
{
    char *tpu = strata_test_source_path("configs/hw/tpu-v5e.ini");
    char *text = g_strdup_printf("[experiment]\nname = w\nhardware = %s\n"
                                 "workload = matmul m=256 n=256 k=256 bm=128 bn=128 bk=128\n"
                                 "[sweep]\nworkload.buffers = 1, 2\nlink.pcie.bandwidth = 16GB/s, 32GB/s\n",
                                 tpu);
    fixture f = make_fixture(text);
    g_free(text);
    g_free(tpu);
    GError *err = NULL;
    strata_experiment *e = strata_experiment_load(f.exp, &err);
    ck_assert_msg(e != NULL, "%s", err ? err->message : "");
    strata_point_plan *p0 = strata_experiment_plan(e, 0, "/o", "/o/p0.json", NULL);
    strata_point_plan *p1 = strata_experiment_plan(e, 1, "/o", "/o/p1.json", NULL);
    strata_point_plan *p2 = strata_experiment_plan(e, 2, "/o", "/o/p2.json", NULL);
    char *gen = g_strjoinv(" ", p2->input_argv);
    ck_assert_msg(g_str_has_prefix(gen, "gen matmul m=256 n=256 k=256 bm=128 bn=128 bk=128 buffers=2 -o /o/inputs/"),
                  "%s", gen);
    g_free(gen);
    /* Points 0 and 1 differ only in the link: same input; point 2 has buffers=2. */
    ck_assert_str_eq(p0->input_path, p1->input_path);
    ck_assert_str_ne(p0->input_path, p2->input_path);
    ck_assert_str_eq(p0->run_argv[4], p0->input_path);
    strata_point_plan_free(p0);
    strata_point_plan_free(p1);
    strata_point_plan_free(p2);
    strata_experiment_free(e);

    char *out = out_path(&f, "");
    strata_cli_result r = strata_test_cli("sweep", f.exp, "--out", out, "--no-report", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    char *inputs = out_path(&f, "inputs");
    GDir *dir = g_dir_open(inputs, 0, NULL);
    ck_assert(dir != NULL);
    guint n = 0;
    for (const char *name; (name = g_dir_read_name(dir));)
        n += g_str_has_suffix(name, ".trace");
    g_dir_close(dir);
    ck_assert_uint_eq(n, 2);
    g_free(inputs);
    g_free(out);
    fixture_clear(&f);
}
END_TEST

START_TEST(alloc_runner_commands)
{
    fixture f = make_fixture("[experiment]\nname = a\nrunner = alloc\ntrace = t.trace\n"
                             "[sweep]\nmemory.hbm.allocator = best-fit, \"caching:max_split_size=200MiB\"\n"
                             "memory.hbm.capacity = 512MiB, 1GiB\n");
    GError *err = NULL;
    strata_experiment *e = strata_experiment_load(f.exp, &err);
    ck_assert_msg(e != NULL, "%s", err ? err->message : "");
    ck_assert_uint_eq(strata_experiment_point_count(e), 4);
    ck_assert_str_eq(strata_experiment_axis_value(e, 0, 1), "caching:max_split_size=200MiB");
    strata_point_plan *plan = strata_experiment_plan(e, 2, "/o", "/o/p.json", "/o/t.json");
    char *cmd = g_strjoinv(" ", plan->run_argv);
    ck_assert_msg(g_str_has_prefix(cmd, "alloc --trace "), "%s", cmd);
    ck_assert_msg(g_str_has_suffix(cmd, " --allocator caching:max_split_size=200MiB --capacity 512MiB --memory hbm"
                                        " --json /o/p.json"),
                  "%s", cmd);
    g_free(cmd);
    strata_point_plan_free(plan);
    strata_experiment_free(e);
    fixture_clear(&f);
}
END_TEST

/* Bad experiment files: each must fail naming FILE:LINE and what was expected. */
typedef struct bad_case {
    const char *text;
    int line;
    const char *expect;
} bad_case;

static const bad_case bad_cases[] = {
    {"[experiment]\nname = t\nhardware = hw.ini\ntrace = t.trace\n[sweeep]\n", 5, "unknown group [sweeep]"},
    {"[experiment]\nname = t\ncolour = red\nhardware = hw.ini\ntrace = t.trace\n", 3, "unknown key 'colour'"},
    {"[experiment]\nname = t\nhardware = hw.ini\ntrace = t.trace\n[sweep]\nfoo = 1, 2\n", 6, "unknown axis 'foo'"},
    {"[experiment]\nname = t\nhardware = hw.ini\ntrace = t.trace\n[sweep]\nmemory.hbm.capacity = 1GiB, 12XB\n", 6,
     "12XB"},
    {"[experiment]\nname = t\nhardware = hw.ini\ntrace = t.trace\n[sweep]\nmemory.hmb.capacity = 1GiB\n", 6,
     "hmb"},
    {"[experiment]\nname = t\nhardware = hw.ini\ntrace = t.trace\n[sweep]\npolicy = none, prefetch=2+fly\n", 6,
     "unknown policy 'fly'"},
    {"[experiment]\nname = t\nhardware = hw.ini\ntrace = t.trace\n[sweep]\nlink.pcie.bandwidth = 16GB/s,,32GB/s\n", 6,
     "empty item"},
    {"[experiment]\nname = t\nhardware = hw.ini\ntrace = t.trace\n[sweep]\nlink.pcie.bandwidth = 16GB/s, 16GB/s\n", 6,
     "appears twice"},
    {"[experiment]\nname = t\nhardware = hw.ini\nname = u\n", 4, "set twice"},
    {"[experiment]\nhardware = hw.ini\ntrace = t.trace\n", 1, "needs a name"},
    {"[experiment]\nname = t\njust some words\n", 3, "expected KEY = VALUE"},
    {"[experiment]\nname = t\nhardware = hw.ini\ntrace = t.trace\n[output]\nplots = pie\n", 6, "unknown plot 'pie'"},
    {"[experiment]\nname = t\nhardware = hw.ini\ntrace = missing.trace\n", 4, "does not exist"},
    {"[experiment]\nname = t\nhardware = hw.ini\ntrace = t.trace\nworkload = matmul\n", 1, "exactly one of"},
    {"[experiment]\nname = t\nrunner = simgrid\n", 3, "unknown runner 'simgrid'"},
    {"[experiment]\nname = t\nrunner = alloc\ntrace = t.trace\n", 1, "needs allocator"},
    {"[experiment]\nname = t\nrunner = alloc\ntrace = t.trace\nallocator = worst-fit\n", 5, "worst-fit"},
    {"[experiment]\nname = t\nhardware = hw.ini\ntrace = t.trace\n[sweep]\ncapacity = 1GiB\n", 6, "runner = alloc"},
    {"[experiment]\nname = t\nhardware = hw.ini\ntrace = t.trace\n[output]\ntimeline = maybe\n", 6,
     "expected true or false"},
    {"name = t\n", 1, "expected a group header such as [experiment]"},
};

START_TEST(bad_experiment)
{
    const bad_case *c = &bad_cases[_i];
    fixture f = make_fixture(c->text);
    GError *err = NULL;
    strata_experiment *e = strata_experiment_load(f.exp, &err);
    ck_assert_msg(e == NULL, "case %d loaded", _i);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    char *where = g_strdup_printf("exp.ini:%d: ", c->line);
    ck_assert_msg(strstr(err->message, where), "case %d: no '%s' in: %s", _i, where, err->message);
    ck_assert_msg(strstr(err->message, c->expect), "case %d: no '%s' in: %s", _i, c->expect, err->message);
    g_free(where);
    g_clear_error(&err);
    /* Through the CLI: exit 2, and nothing written. */
    char *out = out_path(&f, "");
    strata_cli_result r = strata_test_cli("sweep", f.exp, "--out", out, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "exp.ini:"), "%s", r.err);
    ck_assert(!g_file_test(out, G_FILE_TEST_EXISTS));
    strata_cli_result_clear(&r);
    g_free(out);
    fixture_clear(&f);
}
END_TEST

START_TEST(list_jobs_and_count)
{
    fixture f = standard_fixture();
    char *out = out_path(&f, "");
    strata_cli_result r = strata_test_cli("sweep", f.exp, "--out", out, "--list-jobs", NULL);
    ck_assert_int_eq(r.status, 0);
    char **lines = g_strsplit(g_strstrip(r.out), "\n", -1);
    ck_assert_uint_eq(g_strv_length(lines), 4);
    for (int i = 0; i < 4; i++) {
        char *tail = g_strdup_printf(" sweep %s --out %s --point %d", f.exp, out, i);
        ck_assert_msg(g_str_has_suffix(lines[i], tail), "line %d: %s", i, lines[i]);
        g_free(tail);
    }
    g_strfreev(lines);
    ck_assert(!g_file_test(out, G_FILE_TEST_EXISTS)); /* listing does no work */
    strata_cli_result_clear(&r);
    r = strata_test_cli("sweep", f.exp, "--count", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "4\n");
    strata_cli_result_clear(&r);
    g_free(out);
    fixture_clear(&f);
}
END_TEST

static JsonArray *load_rows(const char *path, JsonParser **parser)
{
    *parser = json_parser_new();
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_file(*parser, path, &err), "%s", err ? err->message : "");
    return json_object_get_array_member(json_node_get_object(json_parser_get_root(*parser)), "rows");
}

static char *slurp(const char *path)
{
    char *text = NULL;
    ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "cannot read %s", path);
    return text;
}

START_TEST(runs_points_and_resumes)
{
    fixture f = standard_fixture();
    char *out = out_path(&f, "");
    strata_cli_result r = strata_test_cli("sweep", f.exp, "--out", out, "--jobs", "2", "--no-report", NULL);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "4 points (4 run now, 0 already done), 2 out of memory"), "%s", r.out);
    strata_cli_result_clear(&r);

    char *csv_path = out_path(&f, "results.csv");
    char *csv = slurp(csv_path);
    ck_assert_msg(g_str_has_prefix(csv, "link.pcie.bandwidth,memory.hbm.capacity,status,makespan_s,"
                                        "memories.hbm.peak_allocated_bytes\n16GB/s,128MiB,oom,"),
                  "%s", csv);
    ck_assert_msg(strstr(csv, "\n16GB/s,1GiB,ok,"), "%s", csv);
    ck_assert_msg(strstr(csv, "\n32GB/s,1GiB,ok,"), "%s", csv);

    JsonParser *parser = NULL;
    char *json_path = out_path(&f, "results.json");
    JsonArray *rows = load_rows(json_path, &parser);
    ck_assert_uint_eq(json_array_get_length(rows), 4);
    const char *status[4] = {"oom", "ok", "oom", "ok"};
    for (guint i = 0; i < 4; i++) {
        JsonObject *row = json_array_get_object_element(rows, i);
        ck_assert_str_eq(json_object_get_string_member(row, "status"), status[i]);
    }
    JsonObject *p1 = json_array_get_object_element(rows, 1), *p3 = json_array_get_object_element(rows, 3);
    ck_assert_double_eq_tol(json_object_get_double_member(p1, "makespan_s"), 17.778216e-3, 17.778216e-6);
    ck_assert_double_eq_tol(json_object_get_double_member(p3, "makespan_s"), 9.389608e-3, 9.389608e-6);
    ck_assert_int_eq(json_object_get_int_member(p3, "memories.hbm.peak_allocated_bytes"), 268435456);
    g_object_unref(parser);

    /* Every point's own json is there, with its axes and the full results. */
    char *p0 = out_path(&f, "points/0000.json");
    rows = NULL;
    parser = json_parser_new();
    ck_assert(json_parser_load_from_file(parser, p0, NULL));
    JsonObject *pt = json_node_get_object(json_parser_get_root(parser));
    ck_assert_str_eq(json_object_get_string_member(json_object_get_object_member(pt, "axes"), "memory.hbm.capacity"),
                     "128MiB");
    ck_assert_str_eq(json_object_get_string_member(pt, "status"), "oom");
    ck_assert(json_object_has_member(json_object_get_object_member(pt, "results"), "oom"));
    g_object_unref(parser);

    /* Again: nothing to redo, and byte-identical tables. */
    r = strata_test_cli("sweep", f.exp, "--out", out, "--no-report", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "(0 run now, 4 already done)"), "%s", r.out);
    strata_cli_result_clear(&r);
    char *csv2 = slurp(csv_path);
    ck_assert_str_eq(csv, csv2);
    g_free(csv2);

    /* An interrupted sweep: one point lost, one truncated. Only those rerun. */
    char *p1path = out_path(&f, "points/0001.json"), *p2path = out_path(&f, "points/0002.json");
    g_unlink(p1path);
    ck_assert(g_file_set_contents(p2path, "{\"point\": 2, \"sta", -1, NULL));
    r = strata_test_cli("sweep", f.exp, "--out", out, "--no-report", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "(2 run now, 2 already done)"), "%s", r.out);
    strata_cli_result_clear(&r);
    csv2 = slurp(csv_path);
    ck_assert_str_eq(csv, csv2);
    g_free(csv2);

    g_free(p1path);
    g_free(p2path);
    g_free(p0);
    g_free(json_path);
    g_free(csv);
    g_free(csv_path);
    g_free(out);
    fixture_clear(&f);
}
END_TEST

START_TEST(point_mode_writes_one_point)
{
    fixture f = standard_fixture();
    char *out = out_path(&f, "");
    strata_cli_result r = strata_test_cli("sweep", f.exp, "--out", out, "--point", "3", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    char *p3 = out_path(&f, "points/0003.json"), *p0 = out_path(&f, "points/0000.json");
    ck_assert(g_file_test(p3, G_FILE_TEST_EXISTS));
    ck_assert(!g_file_test(p0, G_FILE_TEST_EXISTS));
    /* A resubmitted array task does not redo its point. */
    r = strata_test_cli("sweep", f.exp, "--out", out, "--point", "3", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "point 3: already done\n");
    strata_cli_result_clear(&r);
    r = strata_test_cli("sweep", f.exp, "--out", out, "--point", "4", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "out of range"), "%s", r.err);
    strata_cli_result_clear(&r);
    g_free(p3);
    g_free(p0);
    g_free(out);
    fixture_clear(&f);
}
END_TEST

START_TEST(failed_point_fails_the_sweep)
{
    fixture f = make_fixture("[experiment]\nname = t\nhardware = hw.ini\ntrace = bad.trace\n"
                             "[sweep]\nlink.pcie.bandwidth = 16GB/s, 32GB/s\n");
    char *out = out_path(&f, "");
    strata_cli_result r = strata_test_cli("sweep", f.exp, "--out", out, "--jobs", "1", "--no-report", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "point 0 failed"), "%s", r.err);
    ck_assert_msg(strstr(r.err, "bad.trace:2"), "the run's own error should be shown: %s", r.err);
    strata_cli_result_clear(&r);
    char *csv = out_path(&f, "results.csv"), *p1 = out_path(&f, "points/0001.json");
    ck_assert(!g_file_test(csv, G_FILE_TEST_EXISTS));
    ck_assert(!g_file_test(p1, G_FILE_TEST_EXISTS)); /* stopped after the first failure */
    g_free(csv);
    g_free(p1);
    g_free(out);
    fixture_clear(&f);
}
END_TEST

START_TEST(unwritable_out_is_an_error_before_work)
{
    fixture f = standard_fixture();
    char *file = g_build_filename(f.dir, "t.trace", NULL);
    strata_cli_result r = strata_test_cli("sweep", f.exp, "--out", file, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "not a folder"), "%s", r.err);
    strata_cli_result_clear(&r);
    /* a missing parent folder is refused as -o and --json refuse one (the eighth pass) */
    r = strata_test_cli("sweep", f.exp, "--out", "/proc/strata-no/out", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "'/proc/strata-no' does not exist: expected an existing folder"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("sweep", f.exp, "--out", "/proc/strata-no", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "cannot write"), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("sweep", f.exp, "--jobs", "-1", NULL);
    ck_assert_int_eq(r.status, 2);
    strata_cli_result_clear(&r);
    g_free(file);
    fixture_clear(&f);
}
END_TEST

static bool have_matplotlib(void)
{
    int status = -1;
    const char *argv[] = {"/usr/bin/python3", "-c", "import matplotlib", NULL};
    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                      NULL, NULL, NULL, &status, NULL))
        return false;
    return g_spawn_check_wait_status(status, NULL);
}

START_TEST(report_with_plots)
{
    if (!have_matplotlib()) {
        printf("SKIP report_with_plots: /usr/bin/python3 has no matplotlib (apt-get install python3-matplotlib)\n");
        return;
    }
    char *text = g_strconcat(EXP_HEAD, "[sweep]\nlink.pcie.bandwidth = 16GB/s, 32GB/s\n[output]\n"
                                       "figures = status, makespan_s, streams.main.busy_s\nplots = all\n", NULL);
    fixture f = make_fixture(text);
    g_free(text);
    char *out = out_path(&f, "");
    strata_cli_result r = strata_test_cli("sweep", f.exp, "--out", out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    char *report = out_path(&f, "report.html");
    char *line = g_strdup_printf("report: %s\n", report);
    ck_assert_msg(strstr(r.out, line), "%s", r.out);
    strata_cli_result_clear(&r);
    char *html = slurp(report);
    /* One chart per axis, and per detailed point memory, address map and links. */
    guint imgs = 0;
    for (const char *p = html; (p = strstr(p, "<img class=\"plot\"")); p++)
        imgs++;
    ck_assert_uint_eq(imgs, 1 + 2 * 3);
    ck_assert(strstr(html, "src=\"data:image/png;base64,"));
    ck_assert(!strstr(html, "src=\"http"));
    g_free(html);
    char *tl = out_path(&f, "points/0000.timeline.json");
    ck_assert(g_file_test(tl, G_FILE_TEST_EXISTS));
    g_free(tl);
    g_free(line);
    g_free(report);
    g_free(out);
    fixture_clear(&f);
}
END_TEST

/* Every shipped experiment loads and lists its points (the snapshot one
 * needs ../shared/data and is skipped without it). */
START_TEST(shipped_experiments_load)
{
    char *dir_path = strata_test_source_path("configs/experiments");
    GDir *dir = g_dir_open(dir_path, 0, NULL);
    ck_assert_msg(dir != NULL, "no %s", dir_path);
    guint n = 0;
    for (const char *name; (name = g_dir_read_name(dir));) {
        if (!g_str_has_suffix(name, ".ini"))
            continue;
        char *path = g_build_filename(dir_path, name, NULL);
        char *text = slurp(path);
        if (strstr(text, "shared/data/") && !g_file_test(STRATA_SHARED_DIR "/data", G_FILE_TEST_IS_DIR)) {
            printf("SKIP %s: ../shared/data is absent\n", name);
        } else {
            GError *err = NULL;
            strata_experiment *e = strata_experiment_load(path, &err);
            ck_assert_msg(e != NULL, "%s: %s", name, err ? err->message : "");
            ck_assert_uint_gt(strata_experiment_point_count(e), 1);
            strata_experiment_free(e);
            n++;
        }
        g_free(text);
        g_free(path);
    }
    g_dir_close(dir);
    ck_assert_uint_ge(n, 5);
    g_free(dir_path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("experiment");
    tcase_add_test(tc, expands_cross_product);
    tcase_add_test(tc, policy_axes_compose_in_order);
    tcase_add_test(tc, alloc_runner_commands);
    tcase_add_loop_test(tc, bad_experiment, 0, (int)G_N_ELEMENTS(bad_cases));
    tcase_add_test(tc, shipped_experiments_load);
    suite_add_tcase(s, tc);
    TCase *cli = tcase_create("cli");
    tcase_set_timeout(cli, 300);
    tcase_add_test(cli, list_jobs_and_count);
    tcase_add_test(cli, runs_points_and_resumes);
    tcase_add_test(cli, point_mode_writes_one_point);
    tcase_add_test(cli, workload_inputs_are_cached_by_command);
    tcase_add_test(cli, failed_point_fails_the_sweep);
    tcase_add_test(cli, unwritable_out_is_an_error_before_work);
    tcase_add_test(cli, report_with_plots);
    suite_add_tcase(s, cli);
    return strata_test_main(s);
}
