/*
 * test_hardening_surfaces.c: the classes of issue 46, hardening what came
 * after issue 30's (docs/reliability.md lists each class, its rule and its
 * test), a row per case:
 *
 *  - valid JSON always: every double class written as a JSON number that
 *    reads back exactly (subnormals, +-0, huge, a shortest form without a
 *    point), NaN and infinities as null, strings never rewritten;
 *  - one output guard for every writer (export and import chakra, a
 *    sweep's results and points): never an input nor a link to one, one
 *    writer per path, nothing left behind on a signal or a full disk,
 *    temporaries that fit the file-name limit;
 *  - work derived from the input bounded before it starts, the figure in
 *    the message;
 *  - imported collectives, groups and dependencies checked as `check` does;
 *  - inputs read once (pipes, FIFOs);
 *  - manifests that cannot become code.
 *
 * Every command runs in a fresh directory; strata_test_only checks that
 * the directory holds exactly the files named (no temporary).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include "testutil.h"
#include "reach.h"
#include <json-glib/json-glib.h>
#include "core/jsonout.h"
#include "hw/staging.h"
#include "import/xla_hlo.h"
#include "import/xla_mesh.h"

/* ---- valid JSON always --------------------------------------------------- */

/* {"v": v} as strata writes it. */
static char *double_text(double v)
{
    JsonBuilder *b = strata_json_object_begin();
    strata_json_add_double(b, "v", v);
    JsonNode *root = strata_json_object_end(b);
    char *text = strata_json_text(root);
    json_node_unref(root);
    return text;
}

/* A row: the double and its text ("null": not finite). json-glib alone
 * writes 6e-09 as "6e-09.0" and infinity as "inf.0". */
static const struct {
    double v;
    const char *text;
} double_rows[] = {
    {6e-09, "6.0e-09"},                 /* the case: shortest form without a point */
    {3e-10, "3.0e-10"},
    {1e22, "1.0e+22"},                  /* huge, exact */
    {1e300, "1.0000000000000001e+300"}, /* %.17g: reads back exactly */
    {-1e300, "-1.0000000000000001e+300"},
    {1e-7, "9.9999999999999995e-08"},
    {2e-7, "1.9999999999999999e-07"},
    {5e-7, "4.9999999999999998e-07"},
    {1e21, "1.0e+21"},
    {DBL_MAX, "1.7976931348623157e+308"},
    {DBL_MIN, "2.2250738585072014e-308"}, /* smallest normal */
    {4.9406564584124654e-324, "4.9406564584124654e-324"}, /* smallest subnormal */
    {2.2250738585072009e-308, "2.2250738585072009e-308"}, /* largest subnormal */
    {1e-310, "9.9999999999999694e-311"}, /* a subnormal's %.17g */
    {0.0, "0.0"},
    {-0.0, "-0.0"},
    {1.0, "1.0"},
    {-7.0, "-7.0"},
    {1e16, "10000000000000000.0"},
    {1e17, "1.0e+17"},
    {0.5, "0.5"},
    {0.1, "0.10000000000000001"},
    {123456.789, "123456.789"},
    {NAN, "null"},
    {INFINITY, "null"},
    {-INFINITY, "null"},
};

START_TEST(every_double_class_is_a_json_number)
{
    for (size_t i = 0; i < G_N_ELEMENTS(double_rows); i++) {
        char *text = double_text(double_rows[i].v);
        char *want = g_strdup_printf("{\n  \"v\" : %s\n}\n", double_rows[i].text);
        ck_assert_msg(strcmp(text, want) == 0, "row %zu: %s, expected %s", i, text, want);
        char *why = strata_test_json_strict_error(text, strlen(text));
        ck_assert_msg(why == NULL, "row %zu: %s", i, why);
        if (isfinite(double_rows[i].v)) { /* reads back to the same bits */
            JsonParser *p = json_parser_new();
            ck_assert(json_parser_load_from_data(p, text, -1, NULL));
            JsonObject *o = json_node_get_object(json_parser_get_root(p));
            double back = json_object_get_double_member(o, "v");
            ck_assert_msg(memcmp(&back, &double_rows[i].v, sizeof back) == 0, "row %zu: read back %.17g", i, back);
            g_object_unref(p);
        }
        g_free(want);
        g_free(text);
    }
}
END_TEST

/* Strings keep their bytes, whatever number-like runs they hold; doubles
 * inside arrays and nested objects are written the same way. */
START_TEST(json_strings_and_nesting_untouched)
{
    JsonBuilder *b = strata_json_object_begin();
    strata_json_add_string(b, "name", "run 1e5.0 and 3e-10.0 \"\\u0001u64:7\"");
    strata_json_open_array(b, "xs");
    json_builder_add_double_value(b, 6e-09);
    json_builder_add_double_value(b, NAN);
    json_builder_begin_object(b);
    strata_json_add_double(b, "y", 1e100);
    json_builder_end_object(b);
    json_builder_end_array(b);
    strata_json_add_uint(b, "big", UINT64_MAX);
    JsonNode *root = strata_json_object_end(b);
    char *text = strata_json_text(root);
    ck_assert_msg(strstr(text, "\"run 1e5.0 and 3e-10.0 \\\"\\\\u0001u64:7\\\"\""), "%s", text);
    ck_assert_msg(strstr(text, "6.0e-09,\n    null,\n"), "%s", text);
    ck_assert_msg(strstr(text, "\"y\" : 1.0e+100"), "%s", text);
    ck_assert_msg(strstr(text, "\"big\" : 18446744073709551615"), "%s", text);
    char *why = strata_test_json_strict_error(text, strlen(text));
    ck_assert_msg(why == NULL, "%s: %s", why, text);
    g_free(text);
    json_node_unref(root);
}
END_TEST

/* The strict checker every test's --json goes through refuses what
 * json-glib's reader lets pass. */
START_TEST(strict_json_checker_refuses_near_json)
{
    static const char *bad[] = {"[6e-09.0]", "[inf.0]", "[NaN]", "[01]", "[.5]", "[1.]", "[+1]", "[1,]",
                                "{\"a\":1,}", "[\"a\tb\"]", "[\"\xff\"]", "[\"\\x\"]", "[1] [2]", "", "[1e]"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *why = strata_test_json_strict_error(bad[i], strlen(bad[i]));
        ck_assert_msg(why != NULL, "row %zu accepted: %s", i, bad[i]);
        g_free(why);
    }
    static const char *good[] = {"[6.0e-09]", "{\"a\" : [true, false, null, -0.0, 1E+2, \"\\u00e9\"]}", " 1 "};
    for (size_t i = 0; i < G_N_ELEMENTS(good); i++) {
        char *why = strata_test_json_strict_error(good[i], strlen(good[i]));
        ck_assert_msg(why == NULL, "row %zu refused: %s", i, why);
    }
}
END_TEST

/* ---- one output guard for every writer ------------------------------------- */

static char *hw_path(const char *name)
{
    char *rel = g_strdup_printf("configs/hw/%s.ini", name);
    char *p = strata_test_source_path(rel);
    g_free(rel);
    return p;
}

static void in_dir(const char *dir, const char *const *argv, int status, const char *message)
{
    strata_cli_result r = strata_test_run_in(dir, NULL, argv);
    strata_test_expect(&r, status, message);
    strata_cli_result_clear(&r);
}

static char *read_text(const char *dir, const char *name)
{
    char *path = g_build_filename(dir, name, NULL), *text = NULL;
    ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "%s", path);
    g_free(path);
    return text;
}

static void remove_all(const char *dir)
{
    char *cmd = g_strdup_printf("rm -rf '%s'", dir);
    ck_assert(system(cmd) == 0);
    g_free(cmd);
}

/* export chakra: onto a link to its input, into a prefix that is no file
 * name, past a member that cannot be written (before: the members before
 * it stayed, "part of its file set"). Each row: nothing new in the folder,
 * the input unchanged. */
START_TEST(export_guarded_as_a_set)
{
    char *dir = strata_test_temp_dir();
    const char *gen[] = {"gen", "collective", "devices=4", "-o", "c.trace", NULL};
    in_dir(dir, gen, 0, NULL);
    char *before = read_text(dir, "c.trace");
    static const struct {
        const char *setup; /* sh in dir, or NULL */
        const char *prefix;
        const char *message;
        const char *left; /* what the folder holds besides c.trace, or NULL */
    } rows[] = {
        {"ln -s c.trace p.1.et", "p", "cannot write 'p.1.et': it is the input 'c.trace'", "p.1.et"},
        {"ln -s ../c.trace sub/p.2.et", "sub/p", "it is the input", NULL},
        {NULL, "", "expected a prefix of file names", NULL},
        {NULL, "sub/", "expected a prefix of file names", NULL},
        {"mkdir p.2.et", "p", "cannot write 'p.2.et': it is a directory", "p.2.et"},
    };
    char *sub = g_build_filename(dir, "sub", NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        g_mkdir(sub, 0755);
        if (rows[i].setup) {
            strata_cli_result r = strata_test_sh_in(dir, rows[i].setup);
            strata_test_expect(&r, 0, NULL);
            strata_cli_result_clear(&r);
        }
        const char *argv[] = {"export", "chakra", "--trace", "c.trace", "-o", rows[i].prefix, NULL};
        strata_cli_result r = strata_test_run_in(dir, NULL, argv);
        ck_assert_msg(r.status == 2 && strstr(r.err, rows[i].message), "row %zu: exit %d: %s", i, r.status, r.err);
        strata_cli_result_clear(&r);
        char *now = read_text(dir, "c.trace");
        ck_assert_msg(strcmp(now, before) == 0, "row %zu: the input was written", i);
        g_free(now);
        GDir *d = g_dir_open(dir, 0, NULL);
        for (const char *n; (n = g_dir_read_name(d)) != NULL;)
            ck_assert_msg(strcmp(n, "c.trace") == 0 || strcmp(n, "sub") == 0 ||
                              (rows[i].left && strcmp(n, rows[i].left) == 0),
                          "row %zu: '%s' left in the folder", i, n);
        g_dir_close(d);
        remove_all(sub);
        if (rows[i].left) {
            char *cmd = g_strdup_printf("cd '%s' && rm -rf '%s'", dir, rows[i].left);
            ck_assert(system(cmd) == 0);
            g_free(cmd);
        }
    }
    /* and a good one writes the whole set */
    const char *good[] = {"export", "chakra", "--trace", "c.trace", "-o", "p", NULL};
    in_dir(dir, good, 0, "(4 files)");
    strata_test_only(dir, "c.trace", "p.0.et", "p.1.et", "p.2.et", "p.3.et", NULL);
    g_free(before);
    g_free(sub);
    remove_all(dir);
    g_free(dir);
}
END_TEST

/* import chakra: a rank file is an input however the output names it (a
 * link, the prefix's own file); before, only the prefix given was. (Ranks
 * written one trace each, all or none: test_chakra.c's
 * differing_ranks_one_trace_each.) */
START_TEST(import_chakra_guarded)
{
    char *dir = strata_test_temp_dir();
    strata_cli_result r = strata_test_sh_in(
        dir, "\"$S\" gen collective devices=2 -o c.trace && \"$S\" export chakra --trace c.trace -o w && rm c.trace");
    strata_test_expect(&r, 0, NULL);
    strata_cli_result_clear(&r);
    char *w0 = read_text(dir, "w.0.et");
    static const struct {
        const char *setup, *out, *message;
    } rows[] = {
        {NULL, "w.0.et", "it is the input"},
        {"ln -s w.1.et l.trace", "l.trace", "it is the input"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        if (rows[i].setup) {
            r = strata_test_sh_in(dir, rows[i].setup);
            strata_test_expect(&r, 0, NULL);
            strata_cli_result_clear(&r);
        }
        const char *argv[] = {"import", "chakra", "w", "-o", rows[i].out, NULL};
        r = strata_test_run_in(dir, NULL, argv);
        ck_assert_msg(r.status == 2 && strstr(r.err, rows[i].message), "row %zu: exit %d: %s", i, r.status, r.err);
        strata_cli_result_clear(&r);
        char *now = read_text(dir, "w.0.et");
        ck_assert_msg(memcmp(now, w0, 16) == 0, "row %zu: a rank file was written", i);
        g_free(now);
        char *x0 = g_build_filename(dir, "x.0.trace", NULL);
        ck_assert_msg(!g_file_test(x0, G_FILE_TEST_EXISTS), "row %zu: x.0.trace left", i);
        g_free(x0);
    }
    g_free(w0);
    remove_all(dir);
    g_free(dir);
}
END_TEST

/* A sweep's results and points are never written through a link onto
 * the experiment or its hardware file. */
START_TEST(sweep_outputs_never_inputs)
{
    char *dir = strata_test_temp_dir();
    char *h100 = hw_path("h100");
    char *cmd = g_strdup_printf("cp '%s' hw.ini && printf '[experiment]\\nname = s\\nhardware = hw.ini\\n"
                                "workload = transformer layers=2 d_model=64 heads=1 seq=8 batch=1 vocab=64\\n"
                                "[sweep]\\nworkload.dtype = bf16\\n' > s.ini && mkdir -p out/points && "
                                "ln -s ../s.ini out/results.csv && ln -s ../../hw.ini out/points/0000.json && "
                                "cp s.ini s.before && cp hw.ini hw.before",
                                h100);
    strata_cli_result r = strata_test_sh_in(dir, cmd);
    strata_test_expect(&r, 0, NULL);
    strata_cli_result_clear(&r);
    const char *point[] = {"sweep", "s.ini", "--out", "out", "--point", "0", NULL};
    in_dir(dir, point, 2, "it is the input");
    r = strata_test_sh_in(dir, "rm out/points/0000.json && \"$S\" sweep s.ini --out out");
    ck_assert_msg(r.status == 2 && strstr(r.err, "results.csv") && strstr(r.err, "it is the input"), "exit %d: %s",
                  r.status, r.err);
    strata_cli_result_clear(&r);
    r = strata_test_sh_in(dir, "cmp s.ini s.before && cmp hw.ini hw.before");
    strata_test_expect(&r, 0, NULL);
    strata_cli_result_clear(&r);
    g_free(cmd);
    g_free(h100);
    remove_all(dir);
    g_free(dir);
}
END_TEST

/* One writer per path: while another process holds an output's lock (as a
 * second strata writing it would; here flock(1)), the writer waits its
 * turn and then writes the whole file (before: two exports to one prefix
 * interleaved into a mixed set); a set's prefix likewise. Names of 248 to
 * 255 bytes are written (the temporary's name was 8 bytes longer: "File
 * name too long"). */
START_TEST(one_writer_and_long_names)
{
    char *dir = strata_test_temp_dir();
    /* the holder writes `held` once it holds the lock, and strata starts
     * only then (before: after a fixed 0.3 s, which a loaded machine could
     * pass before flock(1) held anything: strata wrote first) */
    static const char *const rows[] = {
        STRATA_TEST_REACH_FN "flock .o.trace.lock sh -c 'touch held; sleep 1; echo released > order' & "
        "reach '[ -e held ]' && \"$S\" gen collective -o o.trace && echo written >> order; s=$?; wait; exit $s",
        STRATA_TEST_REACH_FN "flock .p.lock sh -c 'touch held; sleep 1; echo released > order' & "
        "reach '[ -e held ]' && \"$S\" export chakra --trace c.trace -o p && echo written >> order; "
        "s=$?; wait; exit $s",
    };
    const char *gen[] = {"gen", "collective", "devices=2", "-o", "c.trace", NULL};
    in_dir(dir, gen, 0, NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        strata_cli_result r = strata_test_sh_in(dir, rows[i]);
        strata_test_expect(&r, 0, NULL);
        strata_cli_result_clear(&r);
        char *order = read_text(dir, "order");
        ck_assert_msg(strcmp(order, "released\nwritten\n") == 0, "row %zu: %s", i, order);
        g_free(order);
        r = strata_test_sh_in(dir, "rm -f held order o.trace p.*.et");
        strata_cli_result_clear(&r);
        strata_test_only(dir, "c.trace", NULL);
    }
    for (int len = 248; len <= 255; len++) {
        char *name = g_strnfill(len, 'n');
        const char *argv[] = {"gen", "collective", "devices=2", "-o", name, NULL};
        in_dir(dir, argv, 0, NULL);
        strata_test_only(dir, "c.trace", name, NULL);
        char *path = g_build_filename(dir, name, NULL);
        g_unlink(path);
        g_free(path);
        g_free(name);
    }
    remove_all(dir);
    g_free(dir);
}
END_TEST

/* SIGHUP (a closed terminal) ends a run as SIGINT does: its temporary and
 * lock removed, 128 + the signal (before: the temporary stayed). The run
 * blocks reading its trace from a FIFO, and the signal comes once its
 * output's temporary exists (waited for, not slept on: a loaded machine
 * could take past a fixed wait to start it, and the signal then came before
 * strata watched it). The test's end of the FIFO is opened read-write,
 * which never blocks, so a strata that never starts fails the row instead
 * of hanging it. (SIGQUIT is handled too, but a shell's background job
 * starts with it ignored, and ignored stays ignored.) */
START_TEST(hangup_leaves_nothing)
{
    static const struct {
        const char *sig;
        int status;
    } rows[] = {{"HUP", 129}, {"TERM", 143}};
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        char *dir = strata_test_temp_dir();
        char *script = g_strdup_printf(
            STRATA_TEST_REACH_FN "mkfifo f.trace; \"$S\" run --hw \"$H/h100.ini\" --trace f.trace --json out.json 2>err & "
            "p=$!; exec 3<>f.trace; printf 'strata-trace 1\\n' >&3; "
            "if reach \"ls -a | grep -v '\\.lock\\$' | grep -q '^\\.out\\.json\\.'\"; then kill -%s $p; "
            "else kill -KILL $p; fi; wait $p; s=$?; exec 3>&-; rm f.trace; echo $s; cat err",
            rows[i].sig);
        strata_cli_result r = strata_test_sh_in(dir, script);
        int got = atoi(r.out);
        ck_assert_msg(got == rows[i].status, "row %zu: exit %d: %s", i, got, r.out);
        ck_assert_msg(strstr(r.out, "interrupted by SIG"), "row %zu: %s", i, r.out);
        strata_cli_result_clear(&r);
        strata_test_only(dir, "err", NULL);
        remove_all(dir);
        g_free(script);
        g_free(dir);
    }
}
END_TEST

/* A sweep started with SIGINT ignored (`trap '' INT`, a background job of
 * a script): Ctrl-C reaches every process of the group, and the sweep kept
 * ignoring it, but its points did not (g_spawn resets SIGINT in a child),
 * so they died and the sweep exited 2. Now the points ignore it as their
 * parent does, and the sweep ends well (row 0: SIGINT sent to the sweep
 * and its running point; delivered, so the point existed). SIGTERM still
 * stops the sweep and its points with nothing left but the points' logs
 * (row 1: exit 143, the point gone, no results, no temporary). The signals
 * go once the point exists (waited for with a generous bound; before, a
 * bounded poll that ran out sent them to the sweep alone, and maybe before
 * it watched them). The sweep is signalled first, then its point, whose
 * kill may find it gone: on SIGTERM the sweep can end and reap its point
 * between the two (CI once failed this row on `kill $p $c`'s status). */
START_TEST(sweep_points_keep_an_ignored_sigint)
{
    static const struct {
        const char *sig;
        int status;
        const char *left; /* what out/ holds at the end */
    } rows[] = {{"INT", 0, "results.csv"}, {"TERM", 143, "no-results"}};
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        char *dir = strata_test_temp_dir();
        char *script = g_strdup_printf(
            "cp \"$H/h100.ini\" hw.ini && printf '[experiment]\\nname = s\\nhardware = hw.ini\\nworkload = "
            "transformer layers=200 d_model=256 heads=4 seq=256 batch=2 vocab=512\\n[sweep]\\n"
            "memory.hbm.allocator = best-fit\\n' > s.ini && trap '' INT && "
            "{ \"$S\" sweep s.ini --out out --no-report >/dev/null 2>err & p=$!; }; c=''; " STRATA_TEST_REACH_FN
            "reach 'c=$(pgrep -P $p); [ -n \"$c\" ]' && kill -%s $p && { kill -%s $c 2>/dev/null; echo delivered; }; "
            "[ -n \"$c\" ] || kill -KILL $p; wait $p; echo \"exit $?\"; kill -0 $c 2>/dev/null && echo alive; "
            "if [ -f out/results.csv ]; then echo results.csv; else echo no-results; fi; "
            "ls -a out out/points | grep '^\\.[^.]' | grep -v '\\.lock$'; cat err",
            rows[i].sig, rows[i].sig);
        strata_cli_result r = strata_test_sh_in(dir, script);
        char *want = g_strdup_printf("delivered\nexit %d\n%s\n", rows[i].status, rows[i].left);
        ck_assert_msg(g_str_has_prefix(r.out, want), "row %zu: %s", i, r.out);
        /* both got SIGTERM: when the point's end reaches the sweep first,
         * the sweep reports the point's failure, then its own pending
         * SIGTERM ends it (143 all the same, nothing left) */
        if (rows[i].status)
            ck_assert_msg(strstr(r.out, "interrupted by SIGTERM") || strstr(r.out, "killed by signal 15"),
                          "row %zu: %s", i, r.out);
        strata_cli_result_clear(&r);
        remove_all(dir);
        g_free(want);
        g_free(script);
        g_free(dir);
    }
}
END_TEST

/* ---- work derived from the input bounded before it starts ------------------ */

START_TEST(work_bounded_with_its_figure)
{
    char *dir = strata_test_temp_dir();
    char *h100 = hw_path("h100");
    strata_cli_result r = strata_test_sh_in(
        dir, "printf 'strata-trace 1\\noption mesh=d:16385\\n' > e.trace && "
             "printf 'strata-trace 1\\noption mesh=d:65537\\n' > m.trace && "
             "printf 'strata-trace 1\\noption mesh=d:2147483648\\n' > n.trace && "
             "printf 'strata-trace 1\\nalloc a 1KiB\\nfree a\\n' > s.trace && "
             "printf 'strata-trace 1\\nfree a\\n' > b.trace");
    strata_test_expect(&r, 0, NULL);
    strata_cli_result_clear(&r);
    static const struct {
        const char *argv[12];
        const char *message;
    } rows[] = {
        {{"export", "chakra", "--trace", "e.trace", "-o", "p", NULL}, "16385 files, more than the 16384"},
        /* meshes no machine holds: refused by check (and so by every reader) */
        {{"export", "chakra", "--trace", "m.trace", "-o", "p", NULL}, "too many devices: 65537 or more, past the 65536"},
        {{"check", "--trace", "m.trace", NULL}, "too many devices: 65537 or more, past the 65536"},
        {{"check", "--trace", "n.trace", NULL}, "too many devices: 2147483648 or more"},
        /* a trace check refuses is not exported (it was, as files ASTRA-sim then read) */
        {{"export", "chakra", "--trace", "b.trace", "-o", "p", NULL}, "b.trace:2:"},
        {{"run", "--hw", "H100", "--set", "link.staging.staging_buffer=1B", "--trace", "s.trace", NULL},
         "staging_buffer: expected at least 4096 bytes"},
        {{"run", "--hw", "H100", "--set", "link.staging.staging_buffer=2B", "--trace", "s.trace", NULL},
         "one chunk per 1 bytes"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        const char *argv[12];
        for (size_t k = 0; k < 12; k++)
            argv[k] = rows[i].argv[k] && strcmp(rows[i].argv[k], "H100") == 0 ? h100 : rows[i].argv[k];
        r = strata_test_run_in(dir, NULL, argv);
        ck_assert_msg(r.status == 2 && strstr(r.err, rows[i].message), "row %zu: exit %d: %s", i, r.status, r.err);
        strata_cli_result_clear(&r);
        strata_test_only(dir, "b.trace", "e.trace", "m.trace", "n.trace", "s.trace", NULL);
    }
    g_free(h100);
    remove_all(dir);
    g_free(dir);
}
END_TEST

/* A pageable copy's pipeline follows its chunks one by one up to
 * STRATA_STAGING_EXACT_CHUNKS, then its steady state: 16 GiB through a
 * 4 KiB buffer (8 Mi chunks of 2 KiB) is the first chunk's CPU copy plus a
 * period of the slower stage per chunk, as the loop gives it. */
START_TEST(staging_chunks_bounded)
{
    strata_staging_path p = {.buffer = 4096, .cpu_rate = 10e9, .dma_rate = 20e9, .dma_latency = 1e-6};
    uint64_t bytes = (uint64_t)16 << 30, chunk = 2048;
    double a = (double)chunk / p.cpu_rate, b = p.dma_latency + (double)chunk / p.dma_rate;
    double want = a + (double)(bytes / chunk) * (a > b ? a : b);
    double got = strata_staging_pipeline_time(&p, bytes);
    ck_assert_msg(fabs(got - want) <= 1e-9 * want, "%.17g vs %.17g", got, want);
    /* below the bound the loop is exact: unchanged */
    uint64_t small = (uint64_t)STRATA_STAGING_EXACT_CHUNKS * chunk;
    want = a + (double)(small / chunk) * (a > b ? a : b);
    got = strata_staging_pipeline_time(&p, small);
    ck_assert_msg(fabs(got - want) <= 1e-9 * want, "%.17g vs %.17g", got, want);
}
END_TEST

/* ---- imported groups and events checked as check does --------------------- */

/* Replica groups XLA itself refuses were notes of zero cost, exit 0; now
 * the line is refused (xla_hlo_feed), whatever the form. Rows: the groups,
 * the module's devices (0: not given), accepted, what the message says. */
START_TEST(xla_groups_validated)
{
    static const struct {
        const char *groups;
        uint64_t devices;
        bool ok;
        const char *why;
    } rows[] = {
        {"{{0,1},{2,3}}", 4, true, NULL},
        {"{{0,1},{2,3}}", 0, true, NULL},
        {"{{0,4}}", 4, false, "device 4 past the module's 4"},
        {"{{0,1},{1,2}}", 4, false, "device 1 in two groups"},
        {"{{0,0}}", 4, false, "device 0 in two groups"},
        {"{{0,1},{2}}", 4, false, "groups of 2 and 1 devices"},
        {"{{}}", 4, false, "an empty group"},
        {"{{0,1},{2,3}}", 2, false, "past the module's 2"}, /* num_partitions disagreeing */
        {"[2,2]<=[4]", 4, true, NULL},
        {"[2,4]<=[2,4]T(1,0)", 8, true, NULL},
        {"[2,4]<=[8]", 4, false, "an iota of at most the module's 4 devices"},
        {"[3,2]<=[4]", 4, false, "3 groups of 2 devices from an iota of 4"},
        {"[2,4]<=[2,4]T(1,1)", 8, false, "a permutation"},
        {"[2,4]<=[2,4]T(2,0)", 8, false, "a permutation"},
        {"[2]<=[2]", 2, false, "an iota form"},
        {"{}", 4, true, NULL},
        {"garbage", 4, false, "replica groups"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        char *why = NULL;
        bool ok = xla_groups_check(rows[i].groups, rows[i].devices, &why);
        ck_assert_msg(ok == rows[i].ok, "row %zu (%s): %s", i, rows[i].groups, why ? why : "accepted");
        if (rows[i].why)
            ck_assert_msg(why && strstr(why, rows[i].why), "row %zu: expected '%s', got %s", i, rows[i].why, why);
        g_free(why);
    }
    /* at the line that holds them */
    xla_hlo *h = xla_hlo_new();
    GError *err = NULL;
    ck_assert(xla_hlo_feed(h, "m.txt", "HloModule m, num_partitions=2", 1, &err));
    ck_assert(xla_hlo_feed(h, "m.txt", "ENTRY main {", 2, &err));
    ck_assert(!xla_hlo_feed(h, "m.txt",
                            "  ar = f32[4]{0} all-reduce(p), channel_id=1, replica_groups={{0,1,2,3}}, to_apply=add", 3,
                            &err));
    ck_assert_msg(strstr(err->message, "m.txt:3") && strstr(err->message, "device 2 past the module's 2"), "%s",
                  err->message);
    g_error_free(err);
    xla_hlo_free(h);
}
END_TEST

/* Writes DIR/p.json, a jax profile of one GPU whose third line is the op
 * event {"ph":"X","name":"fusion.1",FIELDS,"args":{"hlo_op":"fusion.1"}},
 * imports it to p.trace and checks the exit status and, if given, that the
 * message names p.json:3 and says MESSAGE. Leaves p.json and p.trace. */
static void import_op_event(const char *dir, size_t row, const char *fields, int status, const char *message)
{
    char *json = g_strdup_printf(
        "{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"/device:GPU:0\"}},\n"
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"XLA Ops\"}},\n"
        "{\"ph\":\"X\",\"name\":\"fusion.1\",%s,\"args\":{\"hlo_op\":\"fusion.1\"}}]}\n",
        fields);
    char *path = g_build_filename(dir, "p.json", NULL);
    ck_assert(g_file_set_contents(path, json, -1, NULL));
    const char *argv[] = {"import", "jax-profile", "p.json", "-o", "p.trace", NULL};
    strata_cli_result r = strata_test_run_in(dir, NULL, argv);
    ck_assert_msg(r.status == status, "row %zu: exit %d: %s", row, r.status, r.err);
    if (message)
        ck_assert_msg(strstr(r.err, message) && strstr(r.err, "p.json:3"), "row %zu: %s", row, r.err);
    strata_cli_result_clear(&r);
    g_free(path);
    g_free(json);
}

static void remove_profile_files(const char *dir)
{
    static const char *const names[] = {"p.json", "p.trace"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        char *path = g_build_filename(dir, names[i], NULL);
        g_unlink(path);
        g_free(path);
    }
}

/* An op event of a jax profile whose ts or dur is not a number was
 * dropped, exit 0; now refused at its line, saying what it got. */
START_TEST(jax_profile_times_are_numbers)
{
    char *dir = strata_test_temp_dir();
    static const struct {
        const char *fields;
        int status;
        const char *message;
    } rows[] = {
        {"\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":5", 0, NULL},
        {"\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":\"5\"", 2, "expected a number of microseconds for dur, got a string"},
        {"\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":true", 2, "got a boolean"},
        {"\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":null", 2, "got null"},
        {"\"pid\":1,\"tid\":2,\"ts\":1,\"dur\":[5]", 2, "got an array"},
        {"\"pid\":1,\"tid\":2,\"ts\":1,\"x\":0", 2, "for dur, got none"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        import_op_event(dir, i, rows[i].fields, rows[i].status, rows[i].message);
        if (rows[i].status == 0) { /* and the same through a FIFO and standard input, read once */
            strata_cli_result r = strata_test_sh_in(
                dir, "mkfifo f && (cat p.json > f &) && \"$S\" import jax-profile f -o f.trace && "
                     "\"$S\" import jax-profile - -o s.trace < p.json && cmp -s f.trace s.trace; "
                     "s=$?; rm -f f f.trace s.trace; exit $s");
            strata_test_expect(&r, 0, NULL);
            strata_cli_result_clear(&r);
        }
        remove_profile_files(dir);
    }
    remove_all(dir);
    g_free(dir);
}
END_TEST

/* A pid or tid is an integer in the Trace Event Format (TSL's
 * trace_events_to_json writes them so). A fraction was truncated and a
 * string read as 0 before; now refused at the event's line, naming the key.
 * A whole number written as a double (2.0) stays accepted. */
START_TEST(jax_profile_ids_are_whole_numbers)
{
    char *dir = strata_test_temp_dir();
    static const struct {
        const char *ids;
        int status;
        const char *message;
    } rows[] = {
        {"\"pid\":1,\"tid\":2", 0, NULL},
        {"\"pid\":1.0,\"tid\":2.0", 0, NULL},
        {"\"pid\":1.5,\"tid\":2", 2, "expected pid a whole number within 64 bits, got a number with a fraction"},
        {"\"pid\":1,\"tid\":\"2\"", 2, "expected tid a whole number within 64 bits, got a string"},
        {"\"pid\":true,\"tid\":2", 2, "expected pid a whole number within 64 bits, got a boolean"},
        {"\"pid\":7e21,\"tid\":2", 2, "got a number with a fraction or out of range"},
        {"\"pid\":1,\"tid\":null", 2, "expected tid a whole number within 64 bits, got null"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        char *fields = g_strdup_printf("%s,\"ts\":1,\"dur\":5", rows[i].ids);
        import_op_event(dir, i, fields, rows[i].status, rows[i].message);
        if (rows[i].status == 0) { /* the op is on the device of pid 1 */
            char *trace = g_build_filename(dir, "p.trace", NULL), *text = NULL;
            ck_assert(g_file_get_contents(trace, &text, NULL, NULL));
            ck_assert_msg(strstr(text, "fusion.1"), "row %zu: %s", i, text);
            g_free(text);
            g_free(trace);
        }
        remove_profile_files(dir);
        g_free(fields);
    }
    remove_all(dir);
    g_free(dir);
}
END_TEST

/* ---- manifests that cannot become code ----------------------------------- */

/* A newline in the experiment's path made a --list-jobs line two, the
 * second run as shell code by a line-per-command runner; now refused, and
 * jsonl holds it. A path that is not UTF-8 made jsonl invalid; now its
 * bytes are \udcXX (Python's surrogateescape: os.fsencode gives them back). */
START_TEST(manifests_cannot_become_code)
{
    char *dir = strata_test_temp_dir();
    char *hw = hw_path("test-simple");
    char *ini = g_strdup_printf("[experiment]\nname = s\nhardware = %s\nworkload = collective devices=2\n"
                                "[sweep]\nworkload.dtype = bf16, f32\n", hw);
    static const char *const names[] = {"a\nb.ini", "c\xff.ini", "d\r.ini"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        char *path = g_build_filename(dir, names[i], NULL);
        ck_assert(g_file_set_contents(path, ini, -1, NULL));
        const char *text[] = {"sweep", names[i], "--list-jobs", NULL};
        strata_cli_result r = strata_test_run_in(dir, NULL, text);
        if (strpbrk(names[i], "\n\r")) {
            ck_assert_msg(r.status == 2 && strstr(r.err, "holds a line break") && *r.out == '\0', "row %zu: %d %s",
                          i, r.status, r.err);
        } else
            ck_assert_msg(r.status == 0, "row %zu: %s", i, r.err);
        strata_cli_result_clear(&r);
        const char *jsonl[] = {"sweep", names[i], "--list-jobs", "--format", "jsonl", NULL};
        r = strata_test_run_in(dir, NULL, jsonl);
        ck_assert_msg(r.status == 0, "row %zu: %s", i, r.err);
        char *why = strata_test_jsonl_strict_error(r.out, strlen(r.out));
        ck_assert_msg(why == NULL, "row %zu: %s: %s", i, why, r.out);
        ck_assert_msg(strstr(r.out, i == 1 ? "c\\udcff.ini" : i == 0 ? "a\\nb.ini" : "d\\r.ini"), "row %zu: %s", i,
                      r.out);
        strata_cli_result_clear(&r);
        g_unlink(path);
        g_free(path);
    }
    g_free(ini);
    g_free(hw);
    remove_all(dir);
    g_free(dir);
}
END_TEST

/* ---- wave 24: serve's inputs and options, derived hardware files -------- */

/* Each table below is rows of strata_test_sh_rows (testutil.h): SCRIPT run
 * in a fresh directory ($S strata, $H configs/hw), whose last command is
 * strata's or a check after it, its exit status, and a message (NULL:
 * anything) in its standard error; after a refusal no output is left. */
#define SERVE_ON(hw) "\"$S\" serve -q --hw " hw " --model llama-3-8b "
#define SERVE SERVE_ON("\"$H/h100.ini\"")
#define CSV(rows) "printf '" rows "' > r.csv; "

/* strata serve's request files and options: each row was a crash, a
 * silent default or a wrong figure at exit 0 (its comment says which), now
 * exit 2 saying what was expected; the rows at 0 are what stays taken. */
START_TEST(serve_inputs_refused)
{
    static const strata_test_sh_case rows[] = {
        /* --kv '': no scheme; the report read a first run that was not there (UBSan: load of a null pointer) */
        {SERVE "--poisson n=2 --kv ''", 2, "--kv: expected a scheme, a comma list of them or all, got ''"},
        /* arrivals past the largest double: "completed in inf s", TTFT -nan ms, exit 0 */
        {CSV("arrival_s,prompt_tokens,output_tokens\n0,8,8\n1e308,8,8\n") SERVE "--requests r.csv --time-scale 10", 2,
         "r.csv:3: arrival 1e+308 s x --time-scale 10: expected a finite time"},
        {SERVE "--poisson n=2,rate=1e-320", 2, "request 2 arrives at inf s x --time-scale 1: expected a finite time"},
        /* an hour of -1 (sscanf's %2d) was an hour before midnight; " 1" and "+1" were hours too */
        {CSV("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 00:00:00,8,8\n2023-11-16 -1:00:00,8,8\n")
         SERVE "--requests r.csv", 2,
         "r.csv:3: TIMESTAMP: expected YYYY-MM-DD HH:MM:SS[.fraction][+HH:MM], got '2023-11-16 -1:00:00'"},
        {CSV("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16  1:00:00,8,8\n") SERVE "--requests r.csv", 2,
         "r.csv:2: TIMESTAMP: expected"},
        {CSV("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 +1:00:00,8,8\n") SERVE "--requests r.csv", 2,
         "r.csv:2: TIMESTAMP: expected"},
        {CSV("TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-10 00:00:00+24:00,8,8\n") SERVE "--requests r.csv", 2,
         "r.csv:2: TIMESTAMP: expected"},
        {CSV("TIMESTAMP,ContextTokens,GeneratedTokens\n2024-05-10 00:00:00.009930+00:00,8,8\n"
             "2024-05-10 00:00:01Z,8,8\n") SERVE "--requests r.csv", 0, NULL},
        /* --step-overhead nan and inf were taken (nan < 0 is false) */
        {SERVE "--poisson n=2 --step-overhead nan", 2,
         "--step-overhead: expected a finite number of seconds >= 0 or a time such as 2ms, got nan"},
        {SERVE "--poisson n=2 --step-overhead inf", 2,
         "--step-overhead: expected a finite number of seconds >= 0 or a time such as 2ms, got inf"},
        /* --cuda-graph-batch-sizes '': no size, padding silently off */
        {SERVE "--poisson n=2 --cuda-graph-batch-sizes ''", 2, "--cuda-graph-batch-sizes: expected up to 32 increasing"},
        /* a --sweep point past the scheduler's rules: vllm-v0 at a budget below max_model_len ran and
         * stalled ("swapped requests cannot return to a full pool"); the others ran at exit 0 */
        {SERVE "--poisson n=2 --engine vllm-v0 --sweep max_num_batched_tokens=8192,100", 2,
         "--sweep: --scheduler vllm-v0: expected --max-num-batched-tokens (100) >= max_model_len (8192)"},
        {SERVE "--poisson n=2 --scheduler vllm-v0-chunked --sweep num_scheduler_steps=2", 2,
         "--sweep: --scheduler vllm-v0-chunked: vLLM 0.6 refuses chunked prefill with --num-scheduler-steps > 1"},
        {SERVE "--poisson n=2 --sweep num_scheduler_steps=1025", 2,
         "--sweep: num_scheduler_steps: expected at most 2^20 (block_size, tp: 4096; num_scheduler_steps: 1024)"},
        /* --num-scheduler-steps where nothing reads it (no engine, the vllm-v1 scheduler): ignored */
        {SERVE "--poisson n=2 --num-scheduler-steps 8", 2,
         "--num-scheduler-steps 8: expected --engine vllm-v0 or vllm-v0.5 (vLLM V0's multi-step scheduling) or a "
         "vllm-v0 scheduler, which read it; --engine vllm-v1 with --scheduler vllm-v1 reads neither"},
        {SERVE "--poisson n=2 --sweep num_scheduler_steps=1,4", 2,
         "--sweep: --num-scheduler-steps 4: expected --engine vllm-v0"},
        {SERVE "--poisson n=2 --engine vllm-v0 --num-scheduler-steps 8", 0, NULL},
        /* a --poisson key twice: the last one kept */
        {SERVE "--poisson n=2,n=3", 2, "--poisson: parameter 'n' given twice"},
        /* options no scheme of --kv reads: ignored at exit 0 */
        {SERVE "--poisson n=2 --kv-allocator bogus", 2,
         "--kv-allocator: expected --kv to run a scheme that reads it (contiguous-max, -pow2 or -oracle), got --kv paged"},
        {SERVE "--poisson n=2 --kv paged,contiguous-max --kv-page 4MiB", 2,
         "--kv-page: expected --kv to run a scheme that reads it (vattention or expandable), got --kv paged,contiguous-max"},
        {SERVE "--poisson n=2 --kv contiguous-oracle,vattention --kv-allocator bfc --kv-page 4MiB", 0, NULL},
        /* two columns for one quantity: the later one taken, or arrival_s read as a TIMESTAMP */
        {CSV("arrival_s,prompt_tokens,output_tokens,prompt_tokens\n0,8,8,9000\n") SERVE "--requests r.csv", 2,
         "r.csv:1: expected one column for the prompt tokens, got two"},
        {CSV("TIMESTAMP,arrival_s,ContextTokens,GeneratedTokens\n2024-01-01 00:00:00,0.5,8,8\n") SERVE
         "--requests r.csv", 2, "r.csv:1: expected one column for the arrival time, got two"},
        /* a timeline that cannot be written: exit 2 and nothing said */
        {SERVE "--poisson n=2 --timeline /dev/full", 2, "cannot write '/dev/full': a write failed"},
        /* a model file: a NUL ended it (the keys after it dropped, exit 0), a key twice kept the last,
         * a BOM was part of the first key */
        {"printf 'name = x\nlayers = 2\nhidden = 256\nheads = 4\nkv_heads = 4\nhead_dim = 64\nintermediate = 512\n"
         "vocab = 1000\n\\000layers = 40\n' > m.txt; \"$S\" serve -q --hw \"$H/h100.ini\" --model-file m.txt "
         "--poisson n=2", 2, "m.txt:9:1: expected text, got a NUL byte"},
        {"printf 'name = x\nlayers = 2\nhidden = 256\nheads = 4\nkv_heads = 4\nhead_dim = 64\nintermediate = 512\n"
         "vocab = 1000\nlayers = 40\n' > m.txt; \"$S\" serve -q --hw \"$H/h100.ini\" --model-file m.txt "
         "--poisson n=2", 2, "m.txt:9: layers is set twice (first on line 2)"},
        {"printf '\\357\\273\\277name = x\r\nlayers = 2\r\nhidden = 256\r\nheads = 4\r\nkv_heads = 4\r\nhead_dim = 64\r\n"
         "intermediate = 512\r\nvocab = 1000\r\n' > m.txt; \"$S\" serve -q --hw \"$H/h100.ini\" --model-file m.txt "
         "--poisson n=2", 0, NULL},
    };
    strata_test_sh_rows(rows, G_N_ELEMENTS(rows));
}
END_TEST

/* A hardware file whose base = names another: that file is an input too,
 * and a tier the derived file adds is named there, FILE:LINE. */
START_TEST(derived_hardware_files)
{
    static const strata_test_sh_case rows[] = {
        /* an output onto the file the --hw file's base = names: it was overwritten, exit 0 (serve) */
        {"cp \"$H/dgx-h100.ini\" b.ini; printf '[hardware]\nbase = b.ini\nname = c\n' > c.ini; "
         SERVE_ON("c.ini") "--poisson n=2 --json b.ini; s=$?; cmp -s b.ini \"$H/dgx-h100.ini\" && exit $s", 2,
         "--json: 'b.ini' is also the input of --hw (its base =); refusing to overwrite an input"},
        /* (the base named as a timeline may be: b.ini is refused for its name) */
        {"cp \"$H/dgx-h100.ini\" b.json; printf '[hardware]\nbase = b.json\nname = c\n' > c.ini; "
         "\"$S\" run -q --hw c.ini --trace none.trace --timeline b.json; s=$?; cmp -s b.json \"$H/dgx-h100.ini\" && "
         "exit $s", 2, "--timeline: 'b.json' is also the input of --hw (its base =)"},
        /* a tier the derived file adds: its errors named the base file, no line */
        {"printf '[hardware]\nbase = %s/dgx-h100.ini\nname = c\ndevices = 16\ndevices_per_host = 8\n"
         "[network ib]\nbandwidth = 50GB/s\n[network ib2]\nbandwidth = 1GB/s\n' \"$H\" > c.ini; "
         SERVE_ON("c.ini") "--poisson n=2", 2, "(override c.ini:8): [network ib2] a second network"},
        {"printf '[hardware]\nbase = %s/dgx-h100.ini\nname = c\ndevices = 16\ndevices_per_host = 8\n"
         "[network ib]\nlatency = 1us\n' \"$H\" > c.ini; " SERVE_ON("c.ini") "--poisson n=2", 2,
         "(override c.ini:6): [network ib] missing required key 'bandwidth'"},
    };
    strata_test_sh_rows(rows, G_N_ELEMENTS(rows));
}
END_TEST

/* ---- the fifth pass (wave 24): silent defaults the audit left --------- */

/* The run's first object in serve's --json at path (g_object_unref *p). */
static JsonObject *serve_run_json(const char *path, JsonParser **p)
{
    gchar *text = NULL;
    gsize len = 0;
    ck_assert(g_file_get_contents(path, &text, &len, NULL));
    char *why = strata_test_json_strict_error(text, len);
    ck_assert_msg(why == NULL, "%s", why);
    *p = json_parser_new();
    ck_assert(json_parser_load_from_data(*p, text, (gssize)len, NULL));
    g_free(text);
    JsonObject *root = json_node_get_object(json_parser_get_root(*p));
    return json_array_get_object_element(json_object_get_array_member(root, "runs"), 0);
}

/* serve with every request rejected (two prompts of 200,000 tokens, over
 * llama-3-8b's 8,192): its latencies were printed and written as 0.0 ms,
 * as if measured; now "-" and null, the warning kept. With outputs of one
 * token, TPOT and ITL have no gap to measure: null, TTFT an object. */
START_TEST(serve_latencies_absent_without_requests)
{
    char *dir = strata_test_temp_dir(), *hw = strata_test_source_path("configs/hw/h100.ini");
    char *json = g_build_filename(dir, "s.json", NULL);
    strata_cli_result r = strata_test_cli("serve", "--hw", hw, "--model", "llama-3-8b", "--poisson",
                                          "n=2,prompt=200000", "--json", json, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "  completed      0 of 2 (2 rejected, 2 of them too long for the engine) in 0.000 s, "
                                "0 steps\n  throughput     0.0 output tok/s, 0.0 total tok/s, 0.000 req/s\n"
                                "  TTFT           -\n  TPOT           -\n  ITL            -\n  E2E            -\n"),
                  "%s", r.out);
    ck_assert_msg(strstr(r.err, "strata serve: warning: 2 of 2 requests rejected as too long"), "%s", r.err);
    JsonParser *p = NULL;
    JsonObject *run = serve_run_json(json, &p);
    ck_assert_int_eq(json_object_get_int_member(run, "completed"), 0);
    ck_assert_int_eq(json_object_get_int_member(run, "rejected"), 2);
    static const char *const keys[] = {"ttft_s", "tpot_s", "itl_s", "e2e_s"};
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++)
        ck_assert_msg(JSON_NODE_HOLDS_NULL(json_object_get_member(run, keys[i])), "%s", keys[i]);
    g_object_unref(p);
    strata_cli_result_clear(&r);

    r = strata_test_cli("serve", "--hw", hw, "--model", "llama-3-8b", "--poisson", "n=3,output=1", "--json", json,
                        NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "\n  TPOT           -\n  ITL            -\n  E2E            p50 "), "%s", r.out);
    run = serve_run_json(json, &p);
    ck_assert_int_eq(json_object_get_int_member(run, "completed"), 3);
    ck_assert(JSON_NODE_HOLDS_OBJECT(json_object_get_member(run, "ttft_s")));
    ck_assert(JSON_NODE_HOLDS_NULL(json_object_get_member(run, "tpot_s")));
    ck_assert(JSON_NODE_HOLDS_NULL(json_object_get_member(run, "itl_s")));
    ck_assert(JSON_NODE_HOLDS_OBJECT(json_object_get_member(run, "e2e_s")));
    g_object_unref(p);
    strata_cli_result_clear(&r);
    strata_test_remove_dir(dir);
    g_free(json), g_free(hw), g_free(dir);
}
END_TEST

/* rccl_rings (and rccl_net_rings) of another length than a node's ranks:
 * taken, then never used (rccl_tune takes rings of the node's ranks), exit
 * 0 with the collectives in rank order; now refused at the key's line. A
 * node of 4 (domain = 4) takes rings of 4, and a slice of the shipped node
 * keeps its rings of 8. */
START_TEST(rccl_rings_of_a_node)
{
#define MI300X_8(sed) "cp \"$H/mi300x.ini\" .; sed " sed " \"$H/mi300x-8.ini\" > m.ini; "
#define RUN_ON_M "\"$S\" run -q --hw m.ini --trace "
#define EXAMPLE "\"$H/../../traces/examples/double-buffer.trace\""
    static const strata_test_sh_case rows[] = {
        {MI300X_8("'s/^rccl_rings = .*/rccl_rings = 0 1 2 3|0 2 1 3/'") RUN_ON_M EXAMPLE, 2,
         "(override m.ini:69): [interconnect xgmi] rccl_rings: expected rings of 8 ranks, a node's (the devices "
         "[interconnect xgmi] joins: its domain, default all), got rings of 4, which no collective would use"},
        {MI300X_8("'s/^rccl_rings = .*/rccl_rings = 0 1 2 3 4 5 6 7 8 9/'") RUN_ON_M EXAMPLE, 2,
         "(override m.ini:69): [interconnect xgmi] rccl_rings: expected rings of 8 ranks, a node's (the devices "
         "[interconnect xgmi] joins: its domain, default all), got rings of 10"},
        {MI300X_8("'s/^rccl_rings = .*/rccl_net_rings = 1 0 2 3|0 1 2 3/'") RUN_ON_M EXAMPLE, 2,
         "(override m.ini:69): [interconnect xgmi] rccl_net_rings: expected rings of 8 ranks, a node's (the devices "
         "[interconnect xgmi] joins: its domain, default all), got rings of 4"},
        /* taken: a node of 4 (domain = 4) with rings of 4; the shipped node sliced to 4 devices */
        {MI300X_8("'s/^rccl_rings = .*/rccl_rings = 0 1 2 3|0 2 1 3\\ndomain = 4/'") RUN_ON_M EXAMPLE, 0, NULL},
        {MI300X_8("''") RUN_ON_M EXAMPLE " --set hardware.devices=4", 0, NULL},
    };
#undef EXAMPLE
#undef RUN_ON_M
#undef MI300X_8
    strata_test_sh_rows(rows, G_N_ELEMENTS(rows));
}
END_TEST

/* --timeline x.txt (an extension no format has) wrote Chrome JSON at exit
 * 0 in run and replay, and in serve, whose message named .json; now every
 * command refuses it with one message, nothing written. A stream (-, a
 * device) stays JSON: /dev/full fails as a write. */
START_TEST(timeline_names_a_format)
{
#define EXAMPLE "\"$H/../../traces/examples/double-buffer.trace\""
#define RUN "\"$S\" run -q --hw \"$H/h100.ini\" --trace " EXAMPLE " "
#define RUN_EXPECTED ": expected a name ending in .json, .pftrace or .perfetto-trace, optionally followed by .gz"
#define SERVE_EXPECTED ": expected a name ending in .json, optionally followed by .gz (this command writes JSON " \
                       "timelines only)"
    static const strata_test_sh_case rows[] = {
        {RUN "--timeline x.txt; s=$?; test ! -e x.txt && exit $s", 2, "strata run: --timeline x.txt" RUN_EXPECTED},
        {RUN "--timeline x.gz; s=$?; test ! -e x.gz && exit $s", 2, "strata run: --timeline x.gz" RUN_EXPECTED},
        {RUN "--timeline x.JSON", 2, "strata run: --timeline x.JSON" RUN_EXPECTED},
        {"\"$S\" replay --backend host --trace " EXAMPLE " --timeline x.txt; s=$?; test ! -e x.txt && exit $s", 2,
         "strata replay: --timeline x.txt" RUN_EXPECTED},
        {SERVE "--poisson n=2 --timeline x.txt; s=$?; test ! -e x.txt && exit $s", 2,
         "strata serve: --timeline x.txt" SERVE_EXPECTED},
        {SERVE "--poisson n=2 --timeline x.pftrace", 2, "strata serve: --timeline x.pftrace" SERVE_EXPECTED},
        /* taken: each format's extension, with .gz, and a stream */
        {RUN "--timeline a.json && " RUN "--timeline b.pftrace.gz && " RUN "--timeline c.perfetto-trace && "
         RUN "--timeline - > d.out && test -s a.json -a -s b.pftrace.gz -a -s c.perfetto-trace -a -s d.out", 0, NULL},
        {SERVE "--poisson n=2 --timeline s.json.gz && test -s s.json.gz", 0, NULL},
        {RUN "--timeline /dev/full", 2, "strata run: cannot write '/dev/full'"},
    };
#undef SERVE_EXPECTED
#undef RUN_EXPECTED
#undef RUN
#undef EXAMPLE
    strata_test_sh_rows(rows, G_N_ELEMENTS(rows));
}
END_TEST

/* serve --swap-space 1EiB was taken at exit 0. vLLM refuses swap_space x
 * tp above 70% of the host's memory: h100.ini's pinned host memory is
 * 250 GB for its one GPU, 0.7 x 250e9 = 175e9 B a rank; dgx-h100.ini's
 * 2 TB host at tp 8, 0.7 x 2e12 / 8 = 175e9 B. Without a pinned host
 * memory, 2^47 B = 140737488355328. */
START_TEST(swap_space_within_the_host)
{
/* --swap-space is read under swap preemption alone, vLLM v0's (the seventeenth pass) */
#define SWAPS "--scheduler vllm-v0 --preemption swap "
#define DGX_70B "\"$S\" serve -q --hw \"$H/dgx-h100.ini\" --model llama-3-70b --tp 8 --poisson n=2 " SWAPS
#define NO_HOST "printf '[hardware]\nname = nohost\n[memory hbm]\nkind = device\ncapacity = 80GiB\n" \
                "bandwidth = 1TB/s\n[compute core]\nflops = 100TFLOP/s\noperands = hbm\n' > nh.ini; " \
                "\"$S\" serve -q --hw nh.ini --model llama-2-7b --poisson n=2 " SWAPS
    static const strata_test_sh_case rows[] = {
        {SERVE SWAPS "--poisson n=2 --swap-space 1EiB", 2,
         "strata serve: --swap-space: expected at most 175000000000 B (162.98 GiB) per rank, 70% of the pinned host "
         "memory 'host' of "},
        {SERVE SWAPS "--poisson n=2 --swap-space 1EiB", 2,
         "h100.ini (250000000000 B, 232.83 GiB) over the 1 rank of --tp 1 on its host, as vLLM refuses more (Too large "
         "swap space); got 1152921504606846976 B (1.00 EiB)"},
        {SERVE SWAPS "--poisson n=2 --swap-space 175000000001", 2, "got 175000000001 B (162.98 GiB)"},
        {SERVE SWAPS "--poisson n=2 --swap-space 175GB > /dev/null", 0, NULL},
        {DGX_70B "--swap-space 175000000001", 2,
         "dgx-h100.ini (2000000000000 B, 1.82 TiB) over the 8 ranks of --tp 8 on its host, as vLLM refuses more (Too "
         "large swap space); got 175000000001 B (162.98 GiB)"},
        {DGX_70B "--sweep swap_space=1GiB,1TiB", 2,
         "--swap-space: expected at most 175000000000 B (162.98 GiB) per rank"},
        {NO_HOST "--swap-space 200TiB", 2,
         "strata serve: --swap-space: expected at most 140737488355328 B (128.00 TiB) per rank, the user address "
         "space of an x86-64 process, as nh.ini has no pinned host memory reached from its device memory; got "
         "219902325555200 B (200.00 TiB)"},
        /* within the limit, swap itself has no host memory to reach there */
        {NO_HOST "--swap-space 128TiB > /dev/null", 2,
         "--preemption swap: nh.ini has no pinned host memory linked to the device memory"},
    };
#undef NO_HOST
#undef DGX_70B
#undef SWAPS
    strata_test_sh_rows(rows, G_N_ELEMENTS(rows));
}
END_TEST

static Suite *surfaces_suite(void)
{
    Suite *s = suite_create("hardening_surfaces");
    TCase *tc = tcase_create("surfaces");
    tcase_add_test(tc, every_double_class_is_a_json_number);
    tcase_add_test(tc, json_strings_and_nesting_untouched);
    tcase_add_test(tc, strict_json_checker_refuses_near_json);
    tcase_add_test(tc, export_guarded_as_a_set);
    tcase_add_test(tc, import_chakra_guarded);
    tcase_add_test(tc, sweep_outputs_never_inputs);
    tcase_add_test(tc, one_writer_and_long_names);
    tcase_add_test(tc, hangup_leaves_nothing);
    tcase_add_test(tc, sweep_points_keep_an_ignored_sigint);
    tcase_add_test(tc, work_bounded_with_its_figure);
    tcase_add_test(tc, staging_chunks_bounded);
    tcase_add_test(tc, xla_groups_validated);
    tcase_add_test(tc, jax_profile_times_are_numbers);
    tcase_add_test(tc, jax_profile_ids_are_whole_numbers);
    tcase_add_test(tc, manifests_cannot_become_code);
    tcase_add_test(tc, serve_inputs_refused);
    tcase_add_test(tc, derived_hardware_files);
    tcase_add_test(tc, serve_latencies_absent_without_requests);
    tcase_add_test(tc, rccl_rings_of_a_node);
    tcase_add_test(tc, timeline_names_a_format);
    tcase_add_test(tc, swap_space_within_the_host);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(surfaces_suite()); }
