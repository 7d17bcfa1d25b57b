/*
 * test_determinism.c: the same inputs give byte-identical outputs.
 *
 * Runs each example trace on several hardware models twice through
 * `strata run --json --timeline` and compares the files byte for byte; also
 * `strata transform`, `strata gen` and `strata import torch` (seed pickle),
 * each twice. Two runs of the same process can only agree byte for byte if
 * the results carry no wall-clock time and time ties are broken the same way.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"

static char *slurp(const char *path, gsize *len)
{
    char *data = NULL;
    if (!g_file_get_contents(path, &data, len, NULL))
        return NULL;
    return data;
}

/* Runs argv twice, with OUT1/OUT2 substituted for the placeholders "@1" "@2"
 * (one or two outputs); asserts both runs agree on status and on every output. */
static int run_twice(const char *label, const char *const *argv, int n_outputs)
{
    char *dir = strata_test_temp_dir();
    char *outs[2][2];
    int status[2];
    char *stdout_text[2];
    for (int run = 0; run < 2; run++) {
        GPtrArray *args = g_ptr_array_new();
        for (const char *const *a = argv; *a; a++) {
            if (strcmp(*a, "@1") == 0 || strcmp(*a, "@2") == 0) {
                int k = (*a)[1] - '1';
                outs[run][k] = g_strdup_printf("%s/run%d-out%d.json", dir, run, k); /* --timeline: a format's name */
                g_ptr_array_add(args, outs[run][k]);
            } else {
                g_ptr_array_add(args, (gpointer)*a);
            }
        }
        g_ptr_array_add(args, NULL);
        strata_cli_result r = strata_test_run_cli((const char *const *)args->pdata);
        status[run] = r.status;
        stdout_text[run] = g_strdup(r.out);
        if (r.status != 0 && r.status != 1)
            printf("%s: exit %d: %s", label, r.status, r.err);
        strata_cli_result_clear(&r);
        g_ptr_array_free(args, TRUE);
    }
    ck_assert_int_eq(status[0], status[1]);
    if (status[0] == 0 || status[0] == 1) {
        for (int k = 0; k < n_outputs; k++) {
            gsize len0 = 0, len1 = 0;
            char *a = slurp(outs[0][k], &len0), *b = slurp(outs[1][k], &len1);
            ck_assert_msg(a && b, "%s: output %d missing", label, k + 1);
            ck_assert_msg(len0 > 0, "%s: output %d empty", label, k + 1);
            ck_assert_msg(len0 == len1 && memcmp(a, b, len0) == 0, "%s: output %d differs between two runs", label,
                          k + 1);
            g_free(a);
            g_free(b);
        }
        ck_assert_msg(strcmp(stdout_text[0], stdout_text[1]) == 0, "%s: stdout differs between two runs", label);
    }
    for (int run = 0; run < 2; run++) {
        for (int k = 0; k < n_outputs; k++) {
            unlink(outs[run][k]);
            g_free(outs[run][k]);
        }
        g_free(stdout_text[run]);
    }
    rmdir(dir);
    g_free(dir);
    return status[0];
}

START_TEST(run_is_byte_identical)
{
    static const char *const configs[] = {"test-simple.ini", "h100.ini", "tpu-v5e.ini"};
    char *dir_path = strata_test_source_path("traces/examples");
    GDir *dir = g_dir_open(dir_path, 0, NULL);
    ck_assert_ptr_nonnull(dir);
    const char *name;
    int compared = 0;
    while ((name = g_dir_read_name(dir))) {
        if (!g_str_has_suffix(name, ".trace"))
            continue;
        char *trace = g_build_filename(dir_path, name, NULL);
        for (size_t c = 0; c < G_N_ELEMENTS(configs); c++) {
            char *rel = g_build_filename("configs/hw", configs[c], NULL);
            char *hw = strata_test_source_path(rel);
            char *label = g_strdup_printf("run %s on %s", name, configs[c]);
            const char *argv[] = {"run", "--hw", hw, "--trace", trace, "--json", "@1", "--timeline", "@2", NULL};
            int status = run_twice(label, argv, 2);
            if (status == 0 || status == 1)
                compared++;
            g_free(label);
            g_free(hw);
            g_free(rel);
        }
        g_free(trace);
    }
    g_dir_close(dir);
    g_free(dir_path);
    ck_assert_int_ge(compared, 3);
}
END_TEST

START_TEST(transform_is_byte_identical)
{
    char *trace = strata_test_source_path("traces/examples/format-tour.trace");
    const char *argv[] = {"transform", "--trace", trace, "--policy", "donate", "--policy", "prefetch=1", "-o", "@1", NULL};
    ck_assert_int_eq(run_twice("transform", argv, 1), 0);
    g_free(trace);
}
END_TEST

START_TEST(gen_is_byte_identical)
{
    strata_cli_result list = strata_test_cli("gen", "--list", NULL);
    ck_assert_int_eq(list.status, 0);
    /* The first word of each line that starts a workload entry (no indent). */
    char **lines = g_strsplit(list.out, "\n", -1);
    int generated = 0;
    for (char **l = lines; *l; l++) {
        if (!**l || g_ascii_isspace(**l))
            continue;
        char *name = g_strndup(*l, strcspn(*l, " :\t"));
        const char *argv[] = {"gen", name, "-o", "@1", NULL};
        char *label = g_strdup_printf("gen %s", name);
        if (run_twice(label, argv, 1) == 0)
            generated++;
        g_free(label);
        g_free(name);
    }
    g_strfreev(lines);
    strata_cli_result_clear(&list);
    ck_assert_int_ge(generated, 1);
}
END_TEST

START_TEST(import_is_byte_identical)
{
    char *pickle = strata_test_source_path("tests/fuzz/corpus/pickle/snapshot-p4.pickle");
    const char *argv[] = {"import", "torch", pickle, "-o", "@1", NULL};
    ck_assert_int_eq(run_twice("import torch", argv, 1), 0);
    g_free(pickle);
}
END_TEST

static Suite *determinism_suite(void)
{
    Suite *s = suite_create("determinism");
    TCase *tc = tcase_create("determinism");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, run_is_byte_identical);
    tcase_add_test(tc, transform_is_byte_identical);
    tcase_add_test(tc, gen_is_byte_identical);
    tcase_add_test(tc, import_is_byte_identical);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(determinism_suite()); }
