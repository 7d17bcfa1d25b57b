/*
 * test_fuzz_regressions.c: replays every input in tests/fuzz/regressions/.
 *
 * Each file is an input that once crashed (or could crash) a parser; its
 * name says which: trace-*, hw-*, pickle-*, experiment-*, minimalloc-*,
 * kineto-*, xla-*, validate-*, spmd-*, model_config-*, jax_profile-*, chakra-*.
 * xla-* and validate-* hold several files joined by lines `====`, as
 * their fuzz targets read them (tests/fuzz/fuzz_xla.c, fuzz_validate.c);
 * they are split into a temporary folder first.
 * Each is fed in process to the same code the fuzz target drives, and to the
 * strata binary, which must exit 0, 1 or 2 (never a signal, never 3). Under
 * the sanitizer build (.ci/run) this also proves the fix stays free of
 * memory errors and undefined behaviour.
 */
#include <string.h>
#include "testutil.h"
#include "fuzz/fuzz_input.h"
#include "core/error.h"
#include "hw/hw.h"
#include "import/chakra.h"
#include "import/jax_profile.h"
#include "import/minimalloc.h"
#include "import/xla.h"
#include "import/pickle.h"
#include "import/torch.h"
#include "sweep/experiment.h"
#include "bind/bind.h"
#include "placement/placement_hw.h"
#include "spmd/spmd.h"
#include "trace/check.h"
#include "trace/checked.h"
#include "trace/reader.h"
#include "trace/writer.h"
#include "validate/published.h"
#include "validate/series.h"
#include "serve/serve_model.h"
#include "workload/model_config.h"

static void replay_trace(const char *path)
{
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    if (src) {
        strata_checker *c = strata_checker_new(path);
        const strata_op *op;
        while (strata_source_next(src, &op, &err) == 1) {
            char *text = strata_op_to_text(op);
            strata_op back;
            strata_line_scratch *s = strata_parse_op_line(text, "rt", 1, &back, NULL);
            ck_assert_msg(s && strata_op_equal(op, &back), "%s: '%s' does not round-trip", path, text);
            strata_line_scratch_free(s);
            g_free(text);
            strata_checker_feed(c, op, NULL, NULL);
        }
        strata_checker_free(c);
        strata_source_free(src);
    }
    g_clear_error(&err);
    strata_cli_result r = strata_test_cli("check", "--trace", path, NULL);
    ck_assert_msg(r.status == 0 || r.status == 2, "%s: strata check exit %d: %s", path, r.status, r.err);
    strata_cli_result_clear(&r);
}

static void replay_hw(const char *path)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load(path, NULL, &err);
    if (hw) {
        for (uint32_t a = 0; a < strata_hw_memory_count(hw); a++)
            for (uint32_t b = 0; b < strata_hw_memory_count(hw); b++) {
                const strata_hop *hops;
                uint32_t n;
                strata_hw_route(hw, a, b, &hops, &n, NULL);
            }
        strata_hw_free(hw);
    } else {
        ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
        ck_assert_ptr_nonnull(strstr(err->message, path));
    }
    g_clear_error(&err);
    char *trace = strata_test_source_path("traces/examples/format-tour.trace");
    strata_cli_result r = strata_test_cli("check", "--trace", trace, "--hw", path, NULL);
    ck_assert_msg(r.status == 0 || r.status == 2, "%s: strata check exit %d: %s", path, r.status, r.err);
    strata_cli_result_clear(&r);
    g_free(trace);
}

/* Every op of an importer's source (taken; NULL: refused), fed to the
 * checker, must pass it, as every consumer runs it. */
static void check_every_op(strata_source *ops, const char *path)
{
    if (ops == NULL)
        return;
    strata_checker *c = strata_checker_new(path);
    const strata_op *op;
    while (strata_source_next(ops, &op, NULL) == 1) {
        GError *check_err = NULL;
        ck_assert_msg(strata_checker_feed(c, op, NULL, &check_err),
                      "%s: the import emitted an op the checker refuses: %s", path, check_err->message);
    }
    strata_checker_free(c);
    strata_source_free(ops);
}

/* A snapshot whose every converted op the checker accepts; one that the
 * importer refuses must say where. */
static void replay_pickle(const char *path)
{
    GError *err = NULL;
    strata_pickle *p = strata_pickle_load_file(path, &err);
    if (p) {
        strata_torch_options opt;
        strata_torch_options_init(&opt);
        check_every_op(strata_torch_convert(p, path, &opt, NULL, &err), path);
        strata_pickle_free(p);
    }
    g_clear_error(&err);
    strata_cli_result r = strata_test_cli("import", "torch", path, "-o", "/dev/null", NULL);
    ck_assert_msg(r.status == 0 || r.status == 2, "%s: strata import torch exit %d: %s", path, r.status, r.err);
    ck_assert_msg(r.status == 0 || strstr(r.err, path), "%s: the error does not name the file: %s", path, r.err);
    strata_cli_result_clear(&r);
}

static void replay_experiment(const char *path)
{
    GError *err = NULL;
    char *text = NULL;
    gsize len = 0;
    ck_assert(g_file_get_contents(path, &text, &len, NULL));
    char *origin = strata_test_source_path("configs/experiments/regression.ini");
    strata_experiment *e = strata_experiment_load_data(text, origin, &err);
    strata_experiment_free(e);
    g_clear_error(&err);
    g_free(origin);
    g_free(text);
}

/* Likewise for a MiniMalloc CSV. */
static void replay_minimalloc(const char *path)
{
    GError *err = NULL;
    check_every_op(strata_minimalloc_source(path, &err), path);
    g_clear_error(&err);
    strata_cli_result r = strata_test_cli("import", "minimalloc", path, "-o", "/dev/null", NULL);
    ck_assert_msg(r.status == 0 || r.status == 2, "%s: strata import minimalloc exit %d: %s", path, r.status, r.err);
    ck_assert_msg(r.status == 0 || strstr(r.err, path), "%s: the error does not name the file: %s", path, r.err);
    strata_cli_result_clear(&r);
}

/* A profile whose every op, once imported, the checker accepts; one that
 * the importer refuses must say where (exit 2 naming the file). */
static void replay_kineto(const char *path)
{
    strata_cli_result r = strata_test_cli("import", "kineto", path, "-o", "/dev/null", "--quiet", NULL);
    ck_assert_msg(r.status == 0 || r.status == 2, "%s: strata import kineto exit %d: %s", path, r.status, r.err);
    ck_assert_msg(r.status == 0 || strstr(r.err, path), "%s: the error does not name the file: %s", path, r.err);
    strata_cli_result_clear(&r);
}

/* A jax.profiler trace: imported in process (the stream to its end) and
 * through the CLI, which exits 0 or 2 naming the file (fuzz_jax_profile.c). */
static void replay_jax_profile(const char *path)
{
    GError *err = NULL;
    strata_jax_profile_summary sum;
    strata_source *src = strata_jax_profile_import(path, STRATA_JAX_DEVICE_AUTO, &sum, &err);
    const strata_op *op;
    while (src && strata_source_next(src, &op, &err) == 1)
        g_free(strata_op_to_text(op));
    strata_source_free(src);
    g_clear_error(&err);
    strata_cli_result r = strata_test_cli("import", "jax-profile", path, "-o", "/dev/null", NULL);
    ck_assert_msg(r.status == 0 || r.status == 2, "%s: strata import jax-profile exit %d: %s", path, r.status, r.err);
    ck_assert_msg(r.status == 0 || strstr(r.err, path), "%s: the error does not name the file: %s", path, r.err);
    strata_cli_result_clear(&r);
}

/* A Chakra .et file as one rank: every op it imports passes the checker
 * (fuzz_chakra.c's oracle); the CLI exits 0 or 2 naming the file. */
static void replay_chakra(const char *path)
{
    GError *err = NULL;
    char *files[] = {(char *)path, NULL};
    strata_chakra_summary sum;
    size_t n = 0;
    strata_source **traces = strata_chakra_import(files, -1, 0, &n, &sum, &err);
    for (size_t t = 0; traces && t < n; t++) {
        strata_checker *c = strata_checker_new(path);
        const strata_op *op;
        GError *check_err = NULL;
        while (strata_source_next(traces[t], &op, &err) == 1)
            ck_assert_msg(sum.from_strata || strata_checker_feed(c, op, NULL, &check_err), "%s: %s", path,
                          check_err ? check_err->message : "");
        strata_checker_free(c);
        strata_source_free(traces[t]);
    }
    g_free(traces);
    g_clear_error(&err);
    char *dir = strata_test_temp_dir(), *out = g_build_filename(dir, "o.trace", NULL);
    strata_cli_result r = strata_test_cli("import", "chakra", path, "-o", out, NULL);
    ck_assert_msg(r.status == 0 || (r.status == 2 && strstr(r.err, path)), "%s: strata import chakra exit %d: %s",
                  path, r.status, r.err);
    strata_cli_result_clear(&r);
    g_unlink(out);
    g_free(out);
    strata_test_remove_dir(dir);
    g_free(dir);
}

/* The parts of a saved input joined by lines "====", written as names[i]
 * in a new temporary folder (g_free; strata_test_remove_dir) as the fuzz
 * target wrote them (fuzz_put_parts). */
static char *split_parts(const char *path, const char *const *names, int n)
{
    char *text = NULL;
    gsize len = 0;
    ck_assert(g_file_get_contents(path, &text, &len, NULL));
    char *dir = strata_test_temp_dir();
    ck_assert_int_ge(fuzz_put_parts(dir, (const uint8_t *)text, len, names, n), 1);
    g_free(text);
    return dir;
}

/* An XLA module (buffer assignment, live ranges, HLO): its ops, once
 * imported, pass the checker; a refused module exits 2. */
static void replay_xla(const char *path)
{
    static const char *const names[] = {"m-buffer-assignment.txt", "m-live-range.txt", "m.txt"};
    char *dir = split_parts(path, names, 3);
    GError *err = NULL;
    strata_xla_figures fig;
    check_every_op(strata_xla_import(dir, NULL, &fig, &err), path);
    strata_xla_figures_clear(&fig);
    g_clear_error(&err);
    strata_cli_result r = strata_test_cli("import", "xla", dir, "-o", "/dev/null", "--quiet", NULL);
    ck_assert_msg(r.status == 0 || r.status == 2, "%s: strata import xla exit %d: %s", path, r.status, r.err);
    strata_cli_result_clear(&r);
    strata_test_remove_dir(dir);
    g_free(dir);
}

/* A case file and the series CSV it may name (data = s.csv), beside a
 * valid model and trace (hw = hw.ini, trace = t.trace): a refused file
 * names case.ini or s.csv; the CLI exits 0, 1 or 2. */
static void replay_validate(const char *path)
{
    static const char *const names[] = {"case.ini", "s.csv"};
    char *dir = split_parts(path, names, 2);
    const char *from[] = {"configs/hw/test-simple.ini", "traces/examples/pcie-copy.trace"};
    const char *to[] = {"hw.ini", "t.trace"};
    for (int i = 0; i < 2; i++) {
        char *src = strata_test_source_path(from[i]), *dst = g_build_filename(dir, to[i], NULL), *text = NULL;
        gsize len = 0;
        ck_assert(g_file_get_contents(src, &text, &len, NULL) && g_file_set_contents(dst, text, len, NULL));
        g_free(text);
        g_free(src);
        g_free(dst);
    }
    char *case_path = g_build_filename(dir, "case.ini", NULL), *csv = g_build_filename(dir, "s.csv", NULL);
    GError *err = NULL;
    strata_published *set = strata_published_new();
    if (!strata_published_load(set, case_path, &err))
        ck_assert_msg(strstr(err->message, case_path) || strstr(err->message, csv), "%s: %s", path, err->message);
    g_clear_error(&err);
    strata_published_free(set);
    GArray *rows = g_file_test(csv, G_FILE_TEST_EXISTS) ? strata_series_read(csv, "busbw", &err) : NULL;
    if (rows)
        g_array_unref(rows);
    else if (err)
        ck_assert_msg(strstr(err->message, csv), "%s: %s", path, err->message);
    g_clear_error(&err);
    strata_cli_result r = strata_test_cli("validate", "--published", case_path, NULL);
    ck_assert_msg(r.status <= 2, "%s: strata validate exit %d: %s", path, r.status, r.err);
    strata_cli_result_clear(&r);
    g_free(case_path);
    g_free(csv);
    strata_test_remove_dir(dir);
    g_free(dir);
}

/* spmd-*: a trace with a mesh, as fuzz_spmd drives it (the program bound
 * unexpanded, then expanded over test-ring8's 8 devices and bound to that
 * model, every op written back), without its bound on the expansion; a pass
 * ends cleanly or with an input error naming the file. Then `strata run`
 * on test-ring8. */
static void replay_spmd(const char *path)
{
    char *ring = strata_test_source_path("configs/hw/test-ring8.ini");
    GError *err = NULL;
    strata_hw *hw = strata_placement_hw_load(ring, NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "");
    for (int pass = 0; pass < 2; pass++) {
        strata_source *src = strata_trace_open(path, &err);
        if (!src) {
            ck_assert_msg(err->code == STRATA_ERROR_INPUT || err->code == STRATA_ERROR_IO, "%s: %s", path,
                          err->message);
            g_clear_error(&err);
            continue;
        }
        strata_bind_options opt = {.allow_spmd = pass == 0, .hw = pass == 1 ? hw : NULL};
        strata_source *in = pass == 1 ? strata_spmd_expand(strata_checked_source_new(src, NULL), hw) : src;
        strata_binder *b = strata_binder_new(in, &opt);
        const strata_bound_op *op;
        int got;
        while ((got = strata_binder_next(b, &op, &err)) == 1)
            g_free(strata_op_to_text(op->op));
        if (got < 0)
            ck_assert_msg(err->code == STRATA_ERROR_INPUT && strstr(err->message, path), "%s: %s", path,
                          err->message);
        g_clear_error(&err);
        strata_binder_free(b);
        strata_source_free(in);
    }
    strata_hw_free(hw);
    strata_cli_result r = strata_test_cli("run", "--hw", ring, "--trace", path, NULL);
    ck_assert_msg(r.status <= 2, "%s: strata run exit %d: %s", path, r.status, r.err);
    strata_cli_result_clear(&r);
    g_free(ring);
}

/* A Hugging Face config.json: loaded, resolved and counted as the
 * generators and `strata serve --model` do (fuzz_model_config.c). */
static void replay_model_config(const char *path)
{
    GError *err = NULL;
    strata_model_config *c = strata_model_config_load(path, &err);
    if (c) {
        strata_model_config_free(c);
        strata_serve_model m;
        if (strata_serve_model_from_config(&m, path, &err) && strata_serve_model_check(&m, path, &err)) {
            (void)strata_serve_model_params(&m);
        }
    }
    g_clear_error(&err);
    char *spec = g_strdup_printf("config=%s", path);
    strata_cli_result r = strata_test_cli("gen", "transformer", spec, "-o", "/dev/null", NULL);
    ck_assert_msg(r.status == 0 || r.status == 2, "%s: strata gen exit %d: %s", path, r.status, r.err);
    strata_cli_result_clear(&r);
    g_free(spec);
}

static const struct {
    const char *prefix;
    void (*replay)(const char *path);
} replayers[] = {
    {"trace-", replay_trace},           {"hw-", replay_hw},
    {"pickle-", replay_pickle},         {"experiment-", replay_experiment},
    {"minimalloc-", replay_minimalloc}, {"kineto-", replay_kineto},
    {"xla-", replay_xla},               {"validate-", replay_validate},
    {"spmd-", replay_spmd},             {"model_config-", replay_model_config},
    {"jax_profile-", replay_jax_profile}, {"chakra-", replay_chakra},
    {NULL, NULL},
};

START_TEST(every_regression_input)
{
    char *dir_path = strata_test_source_path("tests/fuzz/regressions");
    GDir *dir = g_dir_open(dir_path, 0, NULL);
    ck_assert_ptr_nonnull(dir);
    const char *name;
    int replayed = 0;
    while ((name = g_dir_read_name(dir))) {
        if (name[0] == '.' || strcmp(name, "README.md") == 0)
            continue;
        char *path = g_build_filename(dir_path, name, NULL);
        int i = 0;
        while (replayers[i].prefix && !g_str_has_prefix(name, replayers[i].prefix))
            i++;
        ck_assert_msg(replayers[i].prefix != NULL, "%s: name must start with trace-, hw-, pickle-, experiment-, "
                      "minimalloc-, kineto-, xla-, validate-, spmd-, model_config-, jax_profile- or chakra-", name);
        replayers[i].replay(path);
        replayed++;
        g_free(path);
    }
    g_dir_close(dir);
    g_free(dir_path);
    ck_assert_int_ge(replayed, 1);
}
END_TEST

static Suite *fuzz_regressions_suite(void)
{
    Suite *s = suite_create("fuzz_regressions");
    TCase *tc = tcase_create("replay");
    tcase_add_test(tc, every_regression_input);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(fuzz_regressions_suite()); }
