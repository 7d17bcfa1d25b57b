/*
 * test_cli_sweep.c: `strata sweep` as a job that can be cut and resumed,
 * split over machines, and handed to a scheduler: --shard, --pending,
 * --list-jobs --format jsonl, kill -9 (or SIGINT, SIGTERM) then a rerun,
 * and point files that do not depend on the --out folder.
 *
 * The experiment: format-tour.trace on test-simple.ini over four HBM
 * capacities (points 0 to 3).
 */
#include <json-glib/json-glib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"

typedef struct sweep_fixture {
    char *dir, *exp;
} sweep_fixture;

static sweep_fixture make_sweep(void)
{
    sweep_fixture f = {strata_test_temp_dir(), NULL};
    char *hw = strata_test_source_path("configs/hw/test-simple.ini");
    char *trace = strata_test_source_path("traces/examples/format-tour.trace");
    char *text = g_strdup_printf("[experiment]\nname = caps\nhardware = %s\ntrace = %s\n[sweep]\n"
                                 "memory.hbm.capacity = 1GiB, 2GiB, 4GiB, 8GiB\n",
                                 hw, trace);
    f.exp = g_build_filename(f.dir, "exp.ini", NULL);
    ck_assert(g_file_set_contents(f.exp, text, -1, NULL));
    g_free(text);
    g_free(hw);
    g_free(trace);
    return f;
}

static char *under(const sweep_fixture *f, const char *rel)
{
    return g_build_filename(f->dir, rel, NULL);
}

static char *read_text(const char *path)
{
    char *text = NULL;
    return g_file_get_contents(path, &text, NULL, NULL) ? text : NULL;
}

START_TEST(shard_and_pending_split_the_points)
{
    sweep_fixture f = make_sweep();
    char *out = under(&f, "out");
    strata_cli_result r = strata_test_cli("sweep", f.exp, "--out", out, "--pending", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "0\n1\n2\n3\n");
    strata_cli_result_clear(&r);
    r = strata_test_cli("sweep", f.exp, "--out", out, "--pending", "--shard", "1/2", NULL);
    ck_assert_str_eq(r.out, "1\n3\n");
    strata_cli_result_clear(&r);
    r = strata_test_cli("sweep", f.exp, "--out", out, "--shard", "1/2", "--no-report", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "shard 1/2: 2 points (2 run now, 0 already done)"), "%s", r.out);
    strata_cli_result_clear(&r);
    char *p0 = under(&f, "out/points/0000.json"), *p1 = under(&f, "out/points/0001.json");
    ck_assert(!g_file_test(p0, G_FILE_TEST_EXISTS) && g_file_test(p1, G_FILE_TEST_EXISTS));
    r = strata_test_cli("sweep", f.exp, "--out", out, "--pending", NULL);
    ck_assert_str_eq(r.out, "0\n2\n");
    strata_cli_result_clear(&r);
    r = strata_test_cli("sweep", f.exp, "--out", out, "--no-report", NULL);
    ck_assert_msg(strstr(r.out, "4 points (2 run now, 2 already done)"), "%s", r.out);
    strata_cli_result_clear(&r);
    r = strata_test_cli("sweep", f.exp, "--out", out, "--pending", NULL);
    ck_assert_str_eq(r.out, "");
    strata_cli_result_clear(&r);
    g_free(p0);
    g_free(p1);
    g_free(out);
    g_free(f.exp), g_free(f.dir);
}
END_TEST

START_TEST(jsonl_manifest_lists_point_argv_output)
{
    sweep_fixture f = make_sweep();
    char *out = under(&f, "out");
    strata_cli_result r = strata_test_cli("sweep", f.exp, "--out", out, "--list-jobs", "--format", "jsonl",
                                          "--shard", "0/2", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    char **lines = g_strsplit(g_strstrip(r.out), "\n", -1);
    ck_assert_uint_eq(g_strv_length(lines), 2);
    for (guint i = 0; lines[i]; i++) {
        JsonParser *p = json_parser_new();
        ck_assert_msg(json_parser_load_from_data(p, lines[i], -1, NULL), "%s", lines[i]);
        JsonObject *o = json_node_get_object(json_parser_get_root(p));
        gint64 point = json_object_get_int_member(o, "point");
        ck_assert_int_eq(point, 2 * (gint64)i);
        JsonArray *argv = json_object_get_array_member(o, "argv");
        ck_assert_str_eq(json_array_get_string_element(argv, 1), "sweep");
        char *n = g_strdup_printf("%" G_GINT64_FORMAT, point);
        ck_assert_str_eq(json_array_get_string_element(argv, json_array_get_length(argv) - 1), n);
        char *want = g_strdup_printf("%s/points/000%" G_GINT64_FORMAT ".json", out, point);
        ck_assert_str_eq(json_object_get_string_member(o, "output"), want);
        g_free(want);
        g_free(n);
        g_object_unref(p);
    }
    g_strfreev(lines);
    strata_cli_result_clear(&r);
    ck_assert(!g_file_test(out, G_FILE_TEST_EXISTS)); /* listing writes nothing */
    g_free(out);
    g_free(f.exp), g_free(f.dir);
}
END_TEST

/* The results files under OUT/points (N.json, N.timeline.json), by name -> content. */
static GHashTable *point_files(const char *out)
{
    GHashTable *t = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    char *points = g_build_filename(out, "points", NULL);
    GDir *d = g_dir_open(points, 0, NULL);
    ck_assert_ptr_nonnull(d);
    const char *name;
    while ((name = g_dir_read_name(d))) {
        if (name[0] == '.' || !g_str_has_suffix(name, ".json") || g_str_has_suffix(name, ".run.json"))
            continue; /* a temporary, the log or the raw results of a point killed with its sweep */
        char *path = g_build_filename(points, name, NULL);
        g_hash_table_insert(t, g_strdup(name), read_text(path));
        g_free(path);
    }
    g_dir_close(d);
    g_free(points);
    return t;
}

/* Runs the sweep, sends `sig` once point 0 is done, reruns; checks that no
 * finished point was redone and that every point matches `ref`, a sweep
 * never interrupted. */
static void interrupt_then_rerun(const sweep_fixture *f, int sig, const char *name, const char *ref)
{
    char *out = under(f, name);
    char *first = g_build_filename(out, "points", "0000.json", NULL);
    const char *argv[] = {STRATA_BIN, "sweep", f->exp, "--out", out, "--jobs", "1", "--no-report", NULL};
    GPid pid = 0;
    ck_assert(g_spawn_async(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL |
                                                       G_SPAWN_STDERR_TO_DEV_NULL,
                            NULL, NULL, &pid, NULL));
    while (!g_file_test(first, G_FILE_TEST_EXISTS))
        g_usleep(1000);
    ck_assert(kill(pid, sig) == 0);
    int ws = 0;
    ck_assert(waitpid(pid, &ws, 0) == pid);
    g_spawn_close_pid(pid);
    if (sig != SIGKILL) /* an orderly exit, unless the sweep had ended before the signal */
        ck_assert_msg(WIFEXITED(ws) && (WEXITSTATUS(ws) == 128 + sig || WEXITSTATUS(ws) == 0), "status %d", ws);
    /* The points finished before the kill, with their inodes and times. */
    GHashTable *before = point_files(out);
    GHashTable *stamps = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, before);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
        /* Only finished points (N.json written last): a point killed midway
         * may have left its timeline, which the rerun rightly redoes. */
        char *id = g_strndup(key, strcspn(key, ".")), *done = g_strdup_printf("%s.json", id);
        gboolean finished = g_hash_table_contains(before, done);
        g_free(id), g_free(done);
        if (!finished)
            continue;
        char *path = g_build_filename(out, "points", key, NULL);
        struct stat st;
        ck_assert(stat(path, &st) == 0);
        g_hash_table_insert(stamps, g_strdup(key),
                            g_strdup_printf("%lu %ld.%09ld", (unsigned long)st.st_ino, (long)st.st_mtim.tv_sec,
                                            st.st_mtim.tv_nsec));
        g_free(path);
    }
    ck_assert_uint_ge(g_hash_table_size(before), 1);
    strata_cli_result r = strata_test_cli("sweep", f->exp, "--out", out, "--no-report", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "4 points"), "%s", r.out);
    strata_cli_result_clear(&r);
    /* None of the finished points was redone. */
    g_hash_table_iter_init(&it, stamps);
    gpointer value;
    while (g_hash_table_iter_next(&it, &key, &value)) {
        char *path = g_build_filename(out, "points", key, NULL);
        struct stat st;
        ck_assert(stat(path, &st) == 0);
        char *now = g_strdup_printf("%lu %ld.%09ld", (unsigned long)st.st_ino, (long)st.st_mtim.tv_sec,
                                    st.st_mtim.tv_nsec);
        ck_assert_msg(strcmp(now, value) == 0, "%s was redone", (char *)key);
        g_free(now);
        g_free(path);
    }
    /* Every point is correct: the same as a sweep never interrupted, into
     * another folder (point files hold paths relative to --out). */
    GHashTable *got = point_files(out), *want = point_files(ref);
    ck_assert_uint_eq(g_hash_table_size(want), 8); /* N.json and N.timeline.json */
    g_hash_table_iter_init(&it, want);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        const char *have = g_hash_table_lookup(got, key);
        ck_assert_msg(have != NULL, "%s missing", (char *)key);
        ck_assert_str_eq(have, value);
    }
    char *csv_a = g_build_filename(out, "results.csv", NULL), *csv_b = g_build_filename(ref, "results.csv", NULL);
    char *a = read_text(csv_a), *b = read_text(csv_b);
    ck_assert_str_eq(a, b);
    g_free(a);
    g_free(b);
    g_free(csv_a);
    g_free(csv_b);
    g_hash_table_unref(got);
    g_hash_table_unref(want);
    g_hash_table_unref(before);
    g_hash_table_unref(stamps);
    g_free(first);
    g_free(out);
}

START_TEST(interrupted_sweep_resumes_without_redoing)
{
    sweep_fixture f = make_sweep();
    char *ref = under(&f, "ref");
    strata_cli_result r = strata_test_cli("sweep", f.exp, "--out", ref, "--no-report", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    interrupt_then_rerun(&f, SIGKILL, "killed", ref);
    interrupt_then_rerun(&f, SIGINT, "interrupted", ref);
    interrupt_then_rerun(&f, SIGTERM, "terminated", ref);
    g_free(ref);
    g_free(f.exp), g_free(f.dir);
}
END_TEST

/* Points done and left show on a terminal; not with --quiet, not on a pipe. */
START_TEST(progress_only_on_a_terminal)
{
    sweep_fixture f = make_sweep();
    char *out = under(&f, "out"), *out2 = under(&f, "out2"), *out3 = under(&f, "out3");
    const char *tty[] = {"sweep", f.exp, "--out", out, "--no-report", "-j", "1", NULL};
    strata_cli_result r = strata_test_run_cli_tty(tty);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "sweep: [") && strstr(r.err, "/4 points"), "%s", r.err);
    strata_cli_result_clear(&r);
    const char *quiet[] = {"sweep", f.exp, "--out", out2, "--no-report", "-j", "1", "--quiet", NULL};
    r = strata_test_run_cli_tty(quiet);
    ck_assert_msg(r.status == 0 && !strstr(r.err, "points") && !strchr(r.err, '\r'), "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("sweep", f.exp, "--out", out3, "--no-report", "-j", "1", NULL);
    ck_assert_msg(r.status == 0 && !strchr(r.err, '\r'), "%s", r.err);
    strata_cli_result_clear(&r);
    g_free(out), g_free(out2), g_free(out3);
    g_free(f.exp), g_free(f.dir);
}
END_TEST

static Suite *cli_sweep_suite(void)
{
    Suite *s = suite_create("cli_sweep");
    TCase *tc = tcase_create("sweep");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, shard_and_pending_split_the_points);
    tcase_add_test(tc, jsonl_manifest_lists_point_argv_output);
    tcase_add_test(tc, interrupted_sweep_resumes_without_redoing);
    tcase_add_test(tc, progress_only_on_a_terminal);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(cli_sweep_suite()); }
