/*
 * test_engine_compiled.c: compiled traces (engine_compiled.h, `strata run
 * --compile-to`): a compiled trace's run gives the text run's output byte
 * for byte (summary, JSON, timeline) on every example trace and two
 * models, with --set and a trace's options; a file that is truncated,
 * damaged, of another strata version, or compiled for another model (or
 * another --set) is refused with exit 2 and a message naming it; what
 * cannot be compiled (a program on several devices, a planning allocator)
 * is refused the same way.
 */
#include <glib/gstdio.h>
#include <string.h>
#include "engine/engine_compiled.h"
#include "hw/hw.h"
#include "testutil.h"

/* Each example on each model: text and compiled runs with --json and
 * --timeline, every output compared with cmp; sh stops at the first
 * difference (exit 1). */
START_TEST(compiled_run_equals_text_run)
{
    char *dir = strata_test_temp_dir();
    char *examples = strata_test_source_path("traces/examples");
    char *script = g_strdup_printf(
        "set -e\n"
        "for t in %s/*.trace; do\n"
        "  for hw in test-simple h100; do\n"
        "    $S run --hw $H/$hw.ini --trace $t --json t.json --timeline t.tl.json > t.out\n"
        "    $S run -q --hw $H/$hw.ini --trace $t --compile-to c.stc\n"
        "    $S run --hw $H/$hw.ini --trace c.stc --json c.json --timeline c.tl.json > c.out\n"
        "    cmp t.json c.json; cmp t.tl.json c.tl.json; cmp t.out c.out\n"
        "  done\n"
        "done\n"
        /* a --set, repeated when run: the same as the text run with it */
        "t=%s/pcie-copy.trace; s=link.pcie.bandwidth=8GB/s\n"
        "$S run --hw $H/test-simple.ini --set $s --trace $t --json t.json > t.out\n"
        "$S run -q --hw $H/test-simple.ini --set $s --trace $t --compile-to c.stc\n"
        "$S run --hw $H/test-simple.ini --set $s --trace c.stc --json c.json > c.out\n"
        "cmp t.json c.json; cmp t.out c.out\n"
        /* a trace's options reach the allocators and ledgers from the file:
         * padding 1 MiB on the default memory (hbm), 2 MiB more on host */
        "printf 'strata-trace 1\\noption padding_bytes=1MiB\\noption padding_bytes.host=2MiB\\n"
        "alloc a 1MiB\\nalloc s 1MiB host\\ncopy a s\\nfree a\\n' > o.trace\n"
        "$S run --hw $H/test-simple.ini --trace o.trace --json t.json > t.out\n"
        "$S run -q --hw $H/test-simple.ini --trace o.trace --compile-to c.stc\n"
        "$S run --hw $H/test-simple.ini --trace c.stc --json c.json > c.out\n"
        "cmp t.json c.json; cmp t.out c.out\n"
        "grep -q '\"padding_bytes\" : 1048576' c.json; grep -q '\"padding_bytes\" : 2097152' c.json\n"
        "rm -f t.json c.json t.tl.json c.tl.json t.out c.out c.stc o.trace\n",
        examples, examples);
    strata_cli_result r = strata_test_sh_in(dir, script);
    ck_assert_msg(r.status == 0, "status %d: %s%s", r.status, r.out, r.err);
    strata_cli_result_clear(&r);
    g_free(script);
    g_free(examples);
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

/* pcie-copy.trace compiled: 1 GiB over test-simple's PCIe link at 16 GB/s
 * with 1 us of latency, 2^30 / 16e9 + 1e-6 = 0.067109864 s, as its text
 * run (test_cli_run's pcie_copy_summary_and_json); 3 ops. */
START_TEST(compiled_pcie_copy_makespan)
{
    char *dir = strata_test_temp_dir();
    char *t = strata_test_source_path("traces/examples/pcie-copy.trace");
    char *script = g_strdup_printf("$S run -q --hw $H/test-simple.ini --trace %s --compile-to c.stc && "
                                   "$S run --hw $H/test-simple.ini --trace c.stc && rm c.stc",
                                   t);
    strata_cli_result r = strata_test_sh_in(dir, script);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "67.110 ms (0.067109864 s)") != NULL, "%s", r.out);
    strata_cli_result_clear(&r);
    g_free(script);
    g_free(t);
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

/* Compiles pcie-copy.trace on test-simple into dir/c.stc; its bytes (g_free). */
static char *compile_pcie(const char *dir, gsize *len)
{
    char *t = strata_test_source_path("traces/examples/pcie-copy.trace");
    char *script = g_strdup_printf("$S run -q --hw $H/test-simple.ini --trace %s --compile-to c.stc", t);
    strata_cli_result r = strata_test_sh_in(dir, script);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    strata_cli_result_clear(&r);
    g_free(script);
    g_free(t);
    char *path = g_build_filename(dir, "c.stc", NULL), *data = NULL;
    ck_assert(g_file_get_contents(path, &data, len, NULL));
    ck_assert_mem_eq(data, ENGINE_COMPILED_MAGIC, 8);
    g_free(path);
    return data;
}

/* strata run on dir/name (its bytes data): exit 2, naming the file and saying `why`. */
static void expect_refused(const char *dir, const char *name, const char *data, gsize len, const char *why,
                           const char *extra)
{
    char *path = g_build_filename(dir, name, NULL);
    ck_assert(g_file_set_contents(path, data, (gssize)len, NULL));
    char *script = g_strdup_printf("$S run --hw $H/test-simple.ini %s --trace %s", extra ? extra : "", name);
    strata_cli_result r = strata_test_sh_in(dir, script);
    strata_test_expect(&r, 2, why);
    ck_assert_msg(strstr(r.err, name) != NULL, "the message names %s: %s", name, r.err);
    strata_cli_result_clear(&r);
    g_remove(path);
    g_free(script);
    g_free(path);
}

START_TEST(damaged_files_are_refused)
{
    char *dir = strata_test_temp_dir();
    gsize len = 0;
    char *data = compile_pcie(dir, &len);
    /* cut in half: its last 8 bytes are no longer its check */
    expect_refused(dir, "half.stc", data, len / 2, "damaged compiled trace", NULL);
    /* the magic alone, or with a few bytes more: truncated (before: "not a
     * compiled trace (expected it to begin with strata's magic bytes", which
     * it does) */
    expect_refused(dir, "magic.stc", data, 8, "damaged compiled trace (truncated", NULL);
    expect_refused(dir, "magic.stc", data, 15, "damaged compiled trace (truncated", NULL);
    /* one byte of the tape changed (the tape ends 8 bytes before the end) */
    data[len - 10] ^= 0x01;
    expect_refused(dir, "flipped.stc", data, len, "damaged compiled trace", NULL);
    data[len - 10] ^= 0x01;
    /* as another strata version wrote it: its version text changed, its check made again */
    char *v = memmem(data, len, STRATA_VERSION, strlen(STRATA_VERSION));
    ck_assert(v != NULL);
    v[0] = v[0] == '9' ? '8' : '9';
    uint64_t check = engine_compiled_check((const uint8_t *)data, len - 8);
    for (int i = 0; i < 8; i++)
        data[len - 8 + i] = (char)(check >> (8 * i));
    expect_refused(dir, "version.stc", data, len, "compiled by another strata", NULL);
    g_free(data);
    /* unchanged, it runs */
    data = compile_pcie(dir, &len);
    char *path = g_build_filename(dir, "ok.stc", NULL);
    ck_assert(g_file_set_contents(path, data, (gssize)len, NULL));
    strata_cli_result r = strata_test_sh_in(dir, "$S run -q --hw $H/test-simple.ini --trace ok.stc");
    strata_test_expect(&r, 0, NULL);
    strata_cli_result_clear(&r);
    /* but not on another model, another --set, with a policy or a planning allocator */
    r = strata_test_sh_in(dir, "$S run --hw $H/h100.ini --trace ok.stc");
    strata_test_expect(&r, 2, "compiled for another hardware model");
    ck_assert_msg(strstr(r.err, "ok.stc") != NULL, "%s", r.err);
    strata_cli_result_clear(&r);
    expect_refused(dir, "ok.stc", data, len, "compiled for another hardware model", "--set link.pcie.bandwidth=8GB/s");
    expect_refused(dir, "ok.stc", data, len, "takes no --policy", "--policy pad");
    expect_refused(dir, "ok.stc", data, len, "plans from the trace's lifetimes", "--allocator offline");
    g_free(data);
    g_free(path);
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

/* A text file is no compiled trace (read as one, refused, naming it); a
 * program on several devices and a planning allocator are not compiled. */
START_TEST(what_cannot_be_compiled)
{
    char *dir = strata_test_temp_dir();
    char *text = strata_test_source_path("traces/examples/pcie-copy.trace");
    GError *err = NULL;
    ck_assert(!engine_compiled_is(text));
    ck_assert(engine_compiled_read(text, "x", "x", &err) == NULL);
    ck_assert_msg(strstr(err->message, "not a compiled trace") && strstr(err->message, text), "%s", err->message);
    g_clear_error(&err);
    char *script = g_strdup_printf("$S run --hw $H/test-ring8.ini --trace %s --compile-to c.stc", text);
    strata_cli_result r = strata_test_sh_in(dir, script);
    strata_test_expect(&r, 2, "several devices");
    strata_cli_result_clear(&r);
    g_free(script);
    script = g_strdup_printf("$S run --hw $H/test-simple.ini --allocator offline --trace %s --compile-to c.stc", text);
    r = strata_test_sh_in(dir, script);
    strata_test_expect(&r, 2, "plans from the trace's lifetimes");
    strata_cli_result_clear(&r);
    g_free(script);
    script = g_strdup_printf("$S run --hw $H/test-simple.ini --trace %s --compile-to c.stc --json r.json", text);
    r = strata_test_sh_in(dir, script);
    strata_test_expect(&r, 2, "--compile-to");
    strata_cli_result_clear(&r);
    g_free(script);
    strata_test_only(dir, NULL);
    g_free(text);
    strata_test_remove_dir(dir);
    g_free(dir);
}
END_TEST

/* The model's fingerprint (strata_hw_fingerprint): SHA-256 of each group,
 * key and value, NUL-terminated, each group closed by an empty string. For
 * "[hardware]\nname = fp\n[memory m]\nkind = device\ncapacity = 1GiB\n"
 * "bandwidth = 1TB/s\n" that is the digest of "hardware\0name\0fp\0\0"
 * "memory m\0kind\0device\0capacity\0" "1GiB\0bandwidth\0" "1TB/s\0\0";
 * a --set that changes a value changes it, and a derived file that only
 * names its base (base = ...) has its base's. */
START_TEST(model_fingerprint)
{
    static const char text[] = "[hardware]\nname = fp\n[memory m]\nkind = device\ncapacity = 1GiB\n"
                               "bandwidth = 1TB/s\n";
    /* sizeof: the string's own NUL is the last group's end */
    static const char keys[] = "hardware\0name\0fp\0\0memory m\0kind\0device\0capacity\0" "1GiB\0bandwidth\0"
                               "1TB/s\0";
    char *want = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)keys, sizeof keys);
    GError *err = NULL;
    strata_hw *hw = strata_hw_load_data(text, "fp.ini", NULL, &err);
    ck_assert_msg(hw, "%s", err ? err->message : "?");
    ck_assert_str_eq(strata_hw_fingerprint(hw), want);
    const char *set[] = {"memory.m.capacity=2GiB", NULL};
    strata_hw *other = strata_hw_load_data(text, "fp.ini", set, &err);
    ck_assert_msg(other, "%s", err ? err->message : "?");
    ck_assert_str_ne(strata_hw_fingerprint(other), want);
    strata_hw_free(other);
    char *base = strata_test_source_path("configs/hw/test-simple.ini");
    char *derived_text = g_strdup_printf("[hardware]\nbase = %s\n", base);
    char *derived = strata_test_write_temp("fp-XXXXXX.ini", derived_text);
    strata_hw *a = strata_hw_load(base, NULL, &err), *b = strata_hw_load(derived, NULL, &err);
    ck_assert_msg(a && b, "%s", err ? err->message : "?");
    ck_assert_str_eq(strata_hw_fingerprint(a), strata_hw_fingerprint(b));
    strata_hw_free(a);
    strata_hw_free(b);
    g_remove(derived);
    g_free(derived);
    g_free(derived_text);
    g_free(base);
    strata_hw_free(hw);
    g_free(want);
}
END_TEST

static Suite *engine_compiled_suite(void)
{
    Suite *s = suite_create("engine_compiled");
    TCase *t = tcase_create("compiled");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, compiled_run_equals_text_run);
    tcase_add_test(t, compiled_pcie_copy_makespan);
    tcase_add_test(t, damaged_files_are_refused);
    tcase_add_test(t, what_cannot_be_compiled);
    tcase_add_test(t, model_fingerprint);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return strata_test_main(engine_compiled_suite());
}
