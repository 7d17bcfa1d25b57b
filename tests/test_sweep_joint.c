/*
 * test_sweep_joint.c: joint sweep axes ("A + B = \"a1 b1\", \"a2 b2\""),
 * whose members vary together as one axis: the device count with the
 * workload's mesh and sharding.
 *
 * The end-to-end sweep runs `gen collective op=all-reduce bytes=1MiB
 * algo=ring` on configs/hw/test-ring8.ini (ring links 100 GB/s, 1 us) with
 * hardware.devices and the collective's devices set together to 8 and 4.
 * A ring all-reduce of B bytes over N devices takes 2(N-1)(a + B/(N W)) plus
 * N-1 reductions of a B/N chunk, each reading two chunks and writing one at
 * the HBM's 1 TB/s (docs/multi-device.md):
 *   N = 8: 14 x (1 us + 1048576 B / 800 GB/s) = 14 x 2.31072 us = 32.35008 us
 *          + 7 x 3 x 131072 B / 1 TB/s = 2.752512 us: 35.102592 us
 *   N = 4:  6 x (1 us + 1048576 B / 400 GB/s) =  6 x 3.62144 us = 21.72864 us
 *          + 3 x 3 x 262144 B / 1 TB/s = 2.359296 us: 24.087936 us
 */
#include <json-glib/json-glib.h>
#include <string.h>
#include "core/error.h"
#include "sweep/experiment.h"
#include "testutil.h"

/* Writes exp.ini in a new directory with hardware = test-ring8.ini. */
static char *write_exp(char **dir, const char *body)
{
    *dir = strata_test_temp_dir();
    char *hw = strata_test_source_path("configs/hw/test-ring8.ini");
    char *text = g_strdup_printf("[experiment]\nname = j\nhardware = %s\n%s", hw, body);
    char *path = g_build_filename(*dir, "exp.ini", NULL);
    ck_assert(g_file_set_contents(path, text, -1, NULL));
    g_free(text);
    g_free(hw);
    return path;
}

static const char SHARDED[] =
    "workload = transformer\n"                                                   /* 4 */
    "[sweep]\n"                                                                  /* 5 */
    "workload.layers = 1, 2\n"                                                   /* 6 */
    "hardware.devices + workload.mesh + workload.sharding = "                    /* 7 */
    "\"8 data:8 fsdp\", \"4 data:4 dp\", \"8 data:4,model:2 fsdp+tp\"\n";

START_TEST(joint_axis_points_and_argv)
{
    char *dir = NULL, *path = write_exp(&dir, SHARDED);
    GError *err = NULL;
    strata_experiment *e = strata_experiment_load(path, &err);
    ck_assert_msg(e != NULL, "%s", err ? err->message : "");
    ck_assert_uint_eq(strata_experiment_point_count(e), 6);
    ck_assert_uint_eq(strata_experiment_axis_count(e), 2);
    ck_assert_str_eq(strata_experiment_axis_name(e, 1), "hardware.devices + workload.mesh + workload.sharding");
    ck_assert_uint_eq(strata_experiment_axis_size(e, 1), 3);
    ck_assert_str_eq(strata_experiment_axis_value(e, 1, 2), "8 data:4,model:2 fsdp+tp");
    ck_assert_int_eq(strata_experiment_axis_unit(e, 1), STRATA_AXIS_TEXT);
    /* Point 4: layers = 2 (index 1), the joint axis at its second tuple. */
    ck_assert_uint_eq(strata_experiment_point_value(e, 4, 0), 1);
    ck_assert_uint_eq(strata_experiment_point_value(e, 4, 1), 1);
    strata_point_plan *plan = strata_experiment_plan(e, 4, "/o", "/o/p.json", NULL);
    char *in = g_strjoinv(" ", plan->input_argv), *run = g_strjoinv(" ", plan->run_argv);
    ck_assert_msg(g_str_has_prefix(in, "gen transformer layers=2 mesh=data:4 sharding=dp -o /o/inputs/"), "%s", in);
    ck_assert_msg(strstr(run, " --set hardware.devices=4 "), "%s", run);
    g_free(in);
    g_free(run);
    strata_point_plan_free(plan);
    /* Point 5: the third tuple, its comma kept inside the quotes. */
    plan = strata_experiment_plan(e, 5, "/o", "/o/p.json", NULL);
    in = g_strjoinv(" ", plan->input_argv);
    run = g_strjoinv(" ", plan->run_argv);
    ck_assert_msg(strstr(in, " mesh=data:4,model:2 sharding=fsdp+tp "), "%s", in);
    ck_assert_msg(strstr(run, " --set hardware.devices=8 "), "%s", run);
    g_free(in);
    g_free(run);
    strata_point_plan_free(plan);
    strata_experiment_free(e);
    g_free(path);
    g_free(dir);
}
END_TEST

typedef struct bad_case {
    int line;
    const char *sweep;
    const char *expect;
} bad_case;

/* The axes start on line 6 of exp.ini (after [sweep] on line 5). */
static const bad_case bad_cases[] = {
    {6, "hardware.devices + workload.mesh + workload.sharding = \"8 data:8 fsdp\", \"4 data:4\"\n",
     "expected 3 whitespace-separated values (hardware.devices, workload.mesh, workload.sharding) in tuple "
     "'4 data:4', got 2"},
    {6, "hardware.devices + workload.mesh + workload.sharding = \"8 data:8 fsdp\", \"8 data:8 tp\"\n",
     "in tuple '8 data:8 tp' of joint axis"},
    {6, "hardware.devices + workload.mesh + workload.sharding = \"0 data:8 fsdp\"\n",
     "in tuple '0 data:8 fsdp' of joint axis 'hardware.devices + workload.mesh + workload.sharding': "
     "bad hardware override"},
    {6, "hardware.devices + hardware.devices = \"8 8\"\n", "appears twice in joint axis"},
    {6, "hardware.devices + = \"8\"\n", "expected axis names joined by ' + '"},
    {7, "workload.layers = 1\nworkload.mesh + workload.layers = \"data:8 2\"\n",
     "axis 'workload.layers' is already swept by 'workload.layers' at line 6"},
    {6, "hardware.devices + workload.nope = \"8 1\"\n", "in tuple '8 1' of joint axis"},
};

START_TEST(bad_joint_axis)
{
    const bad_case *c = &bad_cases[_i];
    char *body = g_strdup_printf("workload = transformer\n[sweep]\n%s", c->sweep);
    char *dir = NULL, *path = write_exp(&dir, body);
    GError *err = NULL;
    strata_experiment *e = strata_experiment_load(path, &err);
    ck_assert_msg(e == NULL, "case %d loaded", _i);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    char *where = g_strdup_printf("exp.ini:%d: ", c->line);
    ck_assert_msg(strstr(err->message, where), "case %d: no '%s' in: %s", _i, where, err->message);
    ck_assert_msg(strstr(err->message, c->expect), "case %d: no '%s' in: %s", _i, c->expect, err->message);
    g_clear_error(&err);
    strata_cli_result r = strata_test_cli("sweep", path, "--list-jobs", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, where), "%s", r.err);
    strata_cli_result_clear(&r);
    g_free(where);
    g_free(body);
    g_free(path);
    g_free(dir);
}
END_TEST

START_TEST(joint_axis_runs_device_counts)
{
    char *dir = NULL, *path = write_exp(&dir, "workload = collective bytes=1MiB algo=ring\n"
                                              "[sweep]\n"
                                              "workload.op = all-reduce\n"
                                              "hardware.devices + workload.devices = \"8 8\", \"4 4\"\n"
                                              "[output]\nfigures = status, makespan_s, devices\n"
                                              "report = false\n");
    char *out = g_build_filename(dir, "out", NULL);
    strata_cli_result r = strata_test_cli("sweep", path, "--out", out, NULL);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    strata_cli_result_clear(&r);
    char *csv_path = g_build_filename(out, "results.csv", NULL), *csv = NULL;
    ck_assert(g_file_get_contents(csv_path, &csv, NULL, NULL));
    ck_assert_msg(g_str_has_prefix(csv, "workload.op,hardware.devices + workload.devices,status,makespan_s,devices\n"
                                        "all-reduce,8 8,ok,"),
                  "%s", csv);
    ck_assert_msg(strstr(csv, "\nall-reduce,4 4,ok,"), "%s", csv);

    JsonParser *parser = json_parser_new();
    char *json_path = g_build_filename(out, "results.json", NULL);
    ck_assert(json_parser_load_from_file(parser, json_path, NULL));
    JsonArray *rows =
        json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "rows");
    ck_assert_uint_eq(json_array_get_length(rows), 2);
    const double want[2] = {35.102592e-6, 24.087936e-6};
    const gint64 devices[2] = {8, 4};
    for (guint i = 0; i < 2; i++) {
        JsonObject *row = json_array_get_object_element(rows, i);
        ck_assert_str_eq(json_object_get_string_member(row, "status"), "ok");
        ck_assert_int_eq(json_object_get_int_member(row, "devices"), devices[i]);
        ck_assert_double_eq_tol(json_object_get_double_member(row, "makespan_s"), want[i], want[i] * 1e-6);
    }
    g_object_unref(parser);
    g_free(json_path);
    g_free(csv);
    g_free(csv_path);
    g_free(out);
    g_free(path);
    g_free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sweep_joint");
    TCase *tc = tcase_create("joint");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, joint_axis_points_and_argv);
    tcase_add_loop_test(tc, bad_joint_axis, 0, (int)G_N_ELEMENTS(bad_cases));
    tcase_add_test(tc, joint_axis_runs_device_counts);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
