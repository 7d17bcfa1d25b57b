/*
 * test_cli_run.c: `strata run` end to end: the summary, --json keys and
 * values, --set overrides, out of memory (exit 1, results written), every
 * class of malformed input (exit 2 naming the file and line), unwritable
 * outputs (exit 2 before any work), --help, determinism; the timeline written
 * while running, plain and gzip-compressed; --policy pad on an fsdp trace
 * with collectives.
 */
#include <glib/gstdio.h>
#include <string.h>
#include <zlib.h>
#include <json-glib/json-glib.h>
#include "testutil.h"

static char *hw_path(void)
{
    return strata_test_source_path("configs/hw/test-simple.ini");
}

static char *example(const char *name)
{
    char *rel = g_strdup_printf("traces/examples/%s", name);
    char *p = strata_test_source_path(rel);
    g_free(rel);
    return p;
}

static JsonObject *load_json(const char *path, JsonParser **parser)
{
    *parser = json_parser_new();
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_file(*parser, path, &err), "%s", err ? err->message : "?");
    return json_node_get_object(json_parser_get_root(*parser));
}

START_TEST(pcie_copy_summary_and_json)
{
    char *hw = hw_path(), *trace = example("pcie-copy.trace");
    char *dir = strata_test_temp_dir();
    char *json = g_build_filename(dir, "r.json", NULL);
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--json", json, NULL);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    /* 2^30 / 16e9 + 1e-6 s */
    ck_assert_msg(strstr(r.out, "67.110 ms (0.067109864 s)") != NULL, "%s", r.out);
    ck_assert_msg(strstr(r.out, "pcie") != NULL && strstr(r.out, "100.0%") != NULL, "%s", r.out);
    ck_assert_msg(strstr(r.out, "1.00 GiB (6.2%)") != NULL, "%s", r.out);
    JsonParser *p = NULL;
    JsonObject *o = load_json(json, &p);
    ck_assert_str_eq(json_object_get_string_member(o, "status"), "ok");
    double makespan = json_object_get_double_member(o, "makespan_s");
    ck_assert_msg(makespan > 0.067109863 && makespan < 0.067109865, "%.12g", makespan);
    ck_assert_int_eq(json_object_get_int_member(o, "ops"), 3);
    ck_assert(json_node_is_null(json_object_get_member(o, "oom")));
    JsonObject *hbm = json_object_get_object_member(json_object_get_object_member(o, "memories"), "hbm");
    const char *mem_keys[] = {"kind", "capacity_bytes", "peak_allocated_bytes", "peak_reserved_bytes",
                              "fragmentation_peak", "allocator", NULL};
    for (int i = 0; mem_keys[i]; i++)
        ck_assert_msg(json_object_has_member(hbm, mem_keys[i]), "memories.hbm.%s", mem_keys[i]);
    ck_assert_int_eq(json_object_get_int_member(hbm, "capacity_bytes"), 17179869184);
    ck_assert_int_eq(json_object_get_int_member(hbm, "peak_allocated_bytes"), 1073741824);
    JsonObject *pcie = json_object_get_object_member(json_object_get_object_member(o, "links"), "pcie");
    ck_assert_int_eq(json_object_get_int_member(pcie, "bytes"), 1073741824);
    ck_assert(json_object_has_member(pcie, "busy_s"));
    JsonObject *main_s = json_object_get_object_member(json_object_get_object_member(o, "streams"), "main");
    ck_assert(json_object_has_member(main_s, "busy_s") && json_object_has_member(main_s, "stall_s"));
    JsonObject *core = json_object_get_object_member(json_object_get_object_member(o, "compute"), "core");
    ck_assert(json_object_has_member(core, "busy_s") && json_object_has_member(core, "flops"));
    g_object_unref(p);
    strata_cli_result_clear(&r);
    g_remove(json);
    g_rmdir(dir);
    g_free(json);
    g_free(dir);
    g_free(hw);
    g_free(trace);
}
END_TEST

START_TEST(same_inputs_give_identical_json)
{
    char *hw = strata_test_source_path("configs/hw/tpu-v5e.ini"), *trace = example("train-step-offload.trace");
    char *dir = strata_test_temp_dir();
    char *a = g_build_filename(dir, "a.json", NULL), *b = g_build_filename(dir, "b.json", NULL);
    strata_cli_result ra = strata_test_cli("run", "--hw", hw, "--trace", trace, "--json", a, "--quiet", NULL);
    strata_cli_result rb = strata_test_cli("run", "--hw", hw, "--trace", trace, "--json", b, "--quiet", NULL);
    ck_assert_msg(ra.status == 0 && rb.status == 0, "%s %s", ra.err, rb.err);
    ck_assert_str_eq(ra.out, "");
    char *ta = NULL, *tb = NULL;
    ck_assert(g_file_get_contents(a, &ta, NULL, NULL) && g_file_get_contents(b, &tb, NULL, NULL));
    ck_assert_str_eq(ta, tb);
    g_free(ta);
    g_free(tb);
    strata_cli_result_clear(&ra);
    strata_cli_result_clear(&rb);
    g_remove(a);
    g_remove(b);
    g_rmdir(dir);
    g_free(a);
    g_free(b);
    g_free(dir);
    g_free(hw);
    g_free(trace);
}
END_TEST

/* --set shrinks hbm to 512 MiB: the 1 GiB alloc (op 1, line 10) cannot fit:
 * exit 1, JSON written with the oom report. */
START_TEST(out_of_memory_exits_1_with_results)
{
    char *hw = hw_path(), *trace = example("pcie-copy.trace");
    char *dir = strata_test_temp_dir();
    char *json = g_build_filename(dir, "r.json", NULL), *timeline = g_build_filename(dir, "t.json", NULL);
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--set",
                                          "memory.hbm.capacity=512MiB", "--json", json, "--timeline", timeline, NULL);
    ck_assert_msg(r.status == 1, "status %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "OUT OF MEMORY at op 1") != NULL, "%s", r.out);
    JsonParser *p = NULL;
    JsonObject *o = load_json(json, &p);
    ck_assert_str_eq(json_object_get_string_member(o, "status"), "oom");
    JsonObject *oom = json_object_get_object_member(o, "oom");
    ck_assert_int_eq(json_object_get_int_member(oom, "op_index"), 1);
    ck_assert_int_eq(json_object_get_int_member(oom, "line"), 10);
    ck_assert_str_eq(json_object_get_string_member(oom, "memory"), "hbm");
    ck_assert_int_eq(json_object_get_int_member(oom, "requested_bytes"), 1073741824);
    ck_assert_int_eq(json_object_get_int_member(oom, "free_bytes"), 536870912);
    ck_assert_int_eq(json_object_get_int_member(oom, "largest_free_bytes"), 536870912);
    g_object_unref(p);
    o = load_json(timeline, &p); /* the timeline written while running ends with the oom status */
    ck_assert_str_eq(json_object_get_string_member(json_object_get_object_member(o, "otherData"), "status"), "oom");
    g_object_unref(p);
    g_remove(timeline);
    g_free(timeline);
    strata_cli_result_clear(&r);
    g_remove(json);
    g_rmdir(dir);
    g_free(json);
    g_free(dir);
    g_free(hw);
    g_free(trace);
}
END_TEST

/* The whole decompressed content of a gzip file. */
static GString *gunzip_file(const char *path)
{
    gzFile gz = gzopen(path, "rb");
    ck_assert_msg(gz != NULL, "cannot open %s", path);
    GString *text = g_string_new(NULL);
    char chunk[4096];
    int n;
    while ((n = gzread(gz, chunk, sizeof chunk)) > 0)
        g_string_append_len(text, chunk, n);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(gzclose(gz), Z_OK);
    return text;
}

/* pcie-copy: a 1 GiB copy host->hbm over pcie takes 2^30 / 16e9 + 1 us =
 * 67109.864 us, on stream main and on link pcie; `--timeline t.json.gz` is
 * the same timeline, gzip-compressed, and both are Chrome trace JSON. */
START_TEST(timeline_plain_and_gzip)
{
    char *hw = hw_path(), *trace = example("pcie-copy.trace");
    char *dir = strata_test_temp_dir();
    char *plain = g_build_filename(dir, "t.json", NULL), *gz = g_build_filename(dir, "t.json.gz", NULL);
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--timeline", plain, NULL);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--timeline", gz, NULL);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    strata_cli_result_clear(&r);
    char *want = NULL;
    ck_assert(g_file_get_contents(plain, &want, NULL, NULL));
    GString *got = gunzip_file(gz);
    ck_assert_str_eq(got->str, want);
    JsonParser *p = json_parser_new();
    GError *err = NULL;
    ck_assert_msg(json_parser_load_from_data(p, got->str, (gssize)got->len, &err), "%s", err ? err->message : "");
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    JsonObject *other = json_object_get_object_member(root, "otherData");
    ck_assert_str_eq(json_object_get_string_member(other, "status"), "ok");
    JsonArray *events = json_object_get_array_member(root, "traceEvents");
    guint copies = 0;
    for (guint i = 0; i < json_array_get_length(events); i++) {
        JsonObject *e = json_array_get_object_element(events, i);
        if (strcmp(json_object_get_string_member(e, "ph"), "X") != 0 ||
            strcmp(json_object_get_string_member(e, "name"), "copy dst") != 0)
            continue;
        copies++;
        ck_assert_double_eq_tol(json_object_get_double_member(e, "dur"), 67109.864, 1e-6);
    }
    ck_assert_uint_eq(copies, 2); /* stream main and link pcie */
    g_object_unref(p);
    g_string_free(got, TRUE);
    g_free(want);
    g_remove(plain);
    g_remove(gz);
    g_rmdir(dir);
    g_free(plain);
    g_free(gz);
    g_free(dir);
    g_free(hw);
    g_free(trace);
}
END_TEST

/* Runs a malformed trace; expects exit 2 and "FILE:LINE" in the message. */
static void expect_bad_trace(const char *text, int line, const char *needle)
{
    char *hw = hw_path();
    char *trace = strata_test_write_temp("bad-XXXXXX.trace", text);
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, NULL);
    ck_assert_msg(r.status == 2, "status %d for %s: %s", r.status, needle, r.err);
    char *where = g_strdup_printf("%s:%d", trace, line);
    ck_assert_msg(strstr(r.err, where) != NULL, "'%s' lacks '%s'", r.err, where);
    ck_assert_msg(strstr(r.err, needle) != NULL, "'%s' lacks '%s'", r.err, needle);
    ck_assert_str_eq(r.out, "");
    g_free(where);
    strata_cli_result_clear(&r);
    g_remove(trace);
    g_free(trace);
    g_free(hw);
}

START_TEST(bad_size)
{
    expect_bad_trace("strata-trace 1\nalloc a 12XB\n", 2, "12XB");
}
END_TEST

START_TEST(unknown_op)
{
    expect_bad_trace("strata-trace 1\nalloc a 1MiB\nmalloc b 1MiB\n", 3, "malloc");
}
END_TEST

START_TEST(unknown_memory)
{
    expect_bad_trace("strata-trace 1\nalloc a 1MiB sram\n", 2, "sram");
}
END_TEST

START_TEST(duplicate_live_name)
{
    expect_bad_trace("strata-trace 1\nalloc a 1MiB\nalloc a 1MiB\n", 3, "'a'");
}
END_TEST

START_TEST(free_of_unknown_buffer)
{
    expect_bad_trace("strata-trace 1\nalloc a 1MiB\nfree b\n", 3, "'b'");
}
END_TEST

START_TEST(wait_without_record)
{
    expect_bad_trace("strata-trace 1\nalloc a 1MiB\nwait e stream=s\n", 3, "'e'");
}
END_TEST

START_TEST(bad_version_line)
{
    expect_bad_trace("strata-trace 7\nalloc a 1MiB\n", 1, "version");
}
END_TEST

START_TEST(unwritable_json_fails_before_work)
{
    char *hw = hw_path(), *trace = example("pcie-copy.trace");
    /* --set would make the run end in out of memory (exit 1): exit 2 shows no run happened. */
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--set",
                                          "memory.hbm.capacity=512MiB", "--json",
                                          "/nonexistent-dir/r.json", NULL);
    ck_assert_msg(r.status == 2, "status %d", r.status);
    ck_assert_msg(strstr(r.err, "/nonexistent-dir/r.json") != NULL, "%s", r.err);
    ck_assert_str_eq(r.out, "");
    strata_cli_result_clear(&r);
    g_free(hw);
    g_free(trace);
}
END_TEST

START_TEST(usage_errors)
{
    char *hw = hw_path(), *trace = example("pcie-copy.trace");
    strata_cli_result r = strata_test_cli("run", "--trace", trace, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--hw") != NULL, "%s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--allocator", "no-such-allocator", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "best-fit") != NULL, "known allocators listed: %s", r.err);
    strata_cli_result_clear(&r);
    r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--set", "memory.hbm.colour=red", NULL);
    ck_assert_int_eq(r.status, 2);
    strata_cli_result_clear(&r);
    r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--no-such-option", NULL);
    ck_assert_int_eq(r.status, 2);
    strata_cli_result_clear(&r);
    g_free(hw);
    g_free(trace);
}
END_TEST

START_TEST(help_documents_every_option)
{
    strata_cli_result r = strata_test_cli("run", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    const char *options[] = {"--hw", "--trace", "--policy", "--allocator", "--set", "--json", "--timeline",
                             "--quiet", "--check-allocators", "--compile-to", "Exit status", NULL};
    for (int i = 0; options[i]; i++)
        ck_assert_msg(strstr(r.out, options[i]) != NULL, "--help lacks %s", options[i]);
    strata_cli_result_clear(&r);
}
END_TEST

START_TEST(json_to_stdout_moves_summary_to_stderr)
{
    char *hw = hw_path(), *trace = example("double-buffer.trace");
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--json", "-", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_data(p, r.out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    /* 8 copies of 2^28 B at 16 GB/s + 1 us each, then the last 16 ms compute. */
    double want = 8 * (268435456.0 / 16e9 + 1e-6) + 0.016;
    double got = json_object_get_double_member(o, "makespan_s");
    ck_assert_msg(got > want * 0.999 && got < want * 1.001, "%.9g vs %.9g", got, want);
    ck_assert_msg(strstr(r.err, "makespan") != NULL, "%s", r.err);
    g_object_unref(p);
    strata_cli_result_clear(&r);
    g_free(hw);
    g_free(trace);
}
END_TEST

/* A run shows its progress on a terminal only (core/progress.h): the ops
 * read, building a multi-device platform, then the ops simulated of all
 * with the simulated time; nothing with --quiet or off a terminal. */
START_TEST(progress_only_on_a_terminal)
{
    char *hw = strata_test_source_path("configs/hw/test-ring8.ini");
    char *trace = strata_test_source_path("traces/spmd/collectives.trace");
    const char *argv[] = {"run", "--hw", hw, "--trace", trace, NULL};
    strata_test_progress_only_on_tty(argv, "run: [");
    strata_test_progress_only_on_tty(argv, "run: building the platform (8 devices)");
    strata_test_progress_only_on_tty(argv, "run: reading: 1 ops");
    g_free(hw);
    g_free(trace);
}
END_TEST

/* --policy pad: a 3x100 f32 buffer (1200 B) pads to (8,128) x 4 B = 4096 B:
 * 2896 bytes of padding, reported in memories.hbm.padding_bytes. */
START_TEST(policy_pad_reports_padding)
{
    char *hw = hw_path();
    char *trace = strata_test_write_temp("pad-XXXXXX.trace", "strata-trace 1\nalloc a 1200B dtype=f32 shape=3x100\n");
    strata_cli_result r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--policy", "pad", "--json", "-",
                                          "--quiet", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    JsonParser *p = json_parser_new();
    ck_assert(json_parser_load_from_data(p, r.out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    JsonObject *hbm = json_object_get_object_member(json_object_get_object_member(o, "memories"), "hbm");
    ck_assert_int_eq(json_object_get_int_member(hbm, "peak_allocated_bytes"), 4096);
    ck_assert_int_eq(json_object_get_int_member(hbm, "padding_bytes"), 2896);
    g_object_unref(p);
    strata_cli_result_clear(&r);
    g_remove(trace);
    g_free(trace);
    g_free(hw);
}
END_TEST

/* --policy pad on an fsdp transformer over data:8 (flat 1-D parameter shards
 * all-gathered into shaped buffers, gradients reduce-scattered back): the
 * gathered buffers are sized as 8 x the padded shard, so the checker accepts
 * every collective and the run completes; each 32-element bf16 layer-norm
 * shard (64 B) pads to 128 elements (256 B), its gathered buffer to 2 KiB. */
START_TEST(policy_pad_keeps_collective_sizes)
{
    strata_cli_result g = strata_test_cli("gen", "transformer", "layers=2", "d_model=256", "heads=4", "seq=128",
                                          "batch=8", "vocab=1024", "mesh=data:8", "sharding=fsdp", NULL);
    ck_assert_msg(g.status == 0, "%s", g.err);
    char *trace = strata_test_write_temp("fsdp-XXXXXX.trace", g.out);
    char *hw = strata_test_source_path("configs/hw/dgx-h100.ini");
    strata_cli_result r = strata_test_cli("transform", "--trace", trace, "--policy", "pad", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "\nalloc l0_ln1_shard 256 tag=param dtype=bf16 shape=128\n"), "%s", r.out);
    ck_assert_msg(strstr(r.out, "\nalloc l0_ln1_ag 2KiB tag=param dtype=bf16 shape=256 "), "%s", r.out);
    strata_cli_result_clear(&r);
    r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--policy", "pad", "--quiet", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    strata_cli_result_clear(&r);
    strata_cli_result_clear(&g);
    g_remove(trace);
    g_free(trace);
    g_free(hw);
}
END_TEST

static Suite *cli_run_suite(void)
{
    Suite *s = suite_create("cli_run");
    TCase *t = tcase_create("run");
    tcase_add_test(t, pcie_copy_summary_and_json);
    tcase_add_test(t, same_inputs_give_identical_json);
    tcase_add_test(t, out_of_memory_exits_1_with_results);
    tcase_add_test(t, timeline_plain_and_gzip);
    tcase_add_test(t, json_to_stdout_moves_summary_to_stderr);
    tcase_add_test(t, progress_only_on_a_terminal);
    tcase_add_test(t, help_documents_every_option);
    tcase_add_test(t, policy_pad_reports_padding);
    tcase_add_test(t, policy_pad_keeps_collective_sizes);
    suite_add_tcase(s, t);
    TCase *b = tcase_create("bad input");
    tcase_add_test(b, bad_size);
    tcase_add_test(b, unknown_op);
    tcase_add_test(b, unknown_memory);
    tcase_add_test(b, duplicate_live_name);
    tcase_add_test(b, free_of_unknown_buffer);
    tcase_add_test(b, wait_without_record);
    tcase_add_test(b, bad_version_line);
    tcase_add_test(b, unwritable_json_fails_before_work);
    tcase_add_test(b, usage_errors);
    suite_add_tcase(s, b);
    return s;
}

int main(void)
{
    return strata_test_main(cli_run_suite());
}
