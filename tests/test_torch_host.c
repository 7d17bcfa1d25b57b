/*
 * test_torch_host.c: the pinned host allocator's part of a PyTorch memory
 * snapshot (`host_segments`, `host_traces`; sim/import/torch_host.c).
 *
 * The fixtures in tests/data/torch-host/ are written by
 * tests/helpers/make_host_snapshot.py in the layout PyTorch 2.15.0's
 * Module.cpp writes (see the helper). pinned.pickle is make_snapshot.py's
 * `basic` device run (its trace derived in test_torch_import.c) plus this
 * host run, derived by hand (HB = 0x7e0000000000):
 *
 *   final host segments: P1 (HB + 0x200000, 4096 B, live). Undoing the 14
 *   host events newest first: segment_free P3 (8 MiB) adds P3 cached, its
 *   free_completed makes it live, its alloc cached, its segment_alloc
 *   removes it; the two segment_free of the empty_cache add P2 (2 MiB) and
 *   P0 (1 MiB) cached; P2's free_completed / alloc / segment_alloc undo to
 *   absent; P0's free_completed / alloc to cached. Initial: P0 (HB, 1 MiB,
 *   cached), P1 (live): reserved 1048576 + 4096 = 1052672 B.
 *   Ground truth: +2 MiB at 1150 us (3149824), -1 MiB -2 MiB at 1700
 *   (4096), +8 MiB at 1800 (8392704: the peak), -8 MiB at 1900 (final 4096);
 *   segment_alloc sizes 2 MiB, 8 MiB.
 *   Setup: pin.0 (P0) and pin.1 (P1) allocated in address order, pin.0
 *   freed (cached). Events: alloc pin.2 1 MiB at P0 (900 us), alloc pin.3
 *   2 MiB (1150), free pin.2 (1350), free pin.3 (1450), the empty_cache's
 *   two segment_free -> one `release host` (1700), alloc pin.4 8 MiB (1800),
 *   free pin.4 (1900); P3's segment_free right after its free (a block
 *   above pinned_max_cached_size) makes no op. The first event of either
 *   allocator is the host's (900 us): every at= is after it, so the
 *   device's ops come 100 us later than in `basic`, and the two lists merge
 *   by time; the device's release names memory hbm.
 *   caching-host replays the host part to the same peak (8392704) and both
 *   segment allocations; it keeps P3 cached at the end (8392704 where the
 *   file holds 4096): pinned_max_cached_size is not modelled.
 */
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>

#include "testutil.h"
#include "torch_basic_trace.h"
#include "import/pickle.h"
#include "import/torch.h"
#include "validate/fidelity.h"

#define MiB (UINT64_C(1) << 20)

static const char host_setup[] =
    "alloc pin.0 1MiB host addr=0x7e0000000000 stream=s0 note=setup\n"
    "alloc pin.1 4KiB host addr=0x7e0000200000 stream=s0 note=setup\n"
    "free pin.0 stream=s0 note=setup\n";

static const char merged_events[] =
    "alloc pin.2 1MiB host addr=0x7e0000000000 stream=s0 at=0 note=model.py:21\n"
    "alloc b.6 3MiB addr=0x7f00003d0a00 stream=s0 at=100us note=model.py:11\n"
    "free b.1 stream=s0 at=200us\n"
    "alloc pin.3 2MiB host addr=0x7e0000400000 stream=s0 at=250us note=model.py:22\n"
    "alloc b.7 40MiB addr=0x7f0010000000 stream=s0 at=300us note=model.py:42\n"
    "free pin.2 stream=s0 at=450us\n"
    "free b.7 stream=s0 at=500us\n"
    "free pin.3 stream=s0 at=550us\n"
    "release hbm stream=s0 at=0.6ms note=empty_cache\n"
    "alloc b.8 5MiB addr=0x7f00006d0a00 stream=s0 at=700us note=model.py:77\n"
    "release host stream=s0 at=0.8ms note=empty_cache\n"
    "alloc pin.4 8MiB host addr=0x7e0000800000 stream=s0 at=0.9ms note=model.py:23\n"
    "free pin.4 stream=s0 at=1000us\n";

static char *fixture(const char *name)
{
    char *rel = g_strdup_printf("tests/data/torch-host/%s.pickle", name);
    char *path = strata_test_source_path(rel);
    g_free(rel);
    return path;
}

/* The ops of a source as trace text (no header). */
static char *ops_text(strata_source *src)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    GError *err = NULL;
    ck_assert(strata_source_rewind(src, &err));
    ck_assert_int_ge(strata_torch_write(src, f, NULL, &err), 0);
    fclose(f);
    char *body = g_strdup(strchr(buf, '\n') + 1); /* past "strata-trace 1" */
    free(buf);
    return body;
}

static strata_source *import(const char *name, strata_torch_summary *sum)
{
    char *path = fixture(name);
    strata_torch_options opt;
    strata_torch_options_init(&opt);
    GError *err = NULL;
    strata_source *src = strata_torch_import(path, &opt, sum, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    g_free(path);
    return src;
}

START_TEST(pinned_trace_by_hand)
{
    char *path = fixture("pinned");
    char *dir = strata_test_temp_dir();
    char *out = g_build_filename(dir, "pinned.trace", NULL);
    strata_cli_result r = strata_test_cli("import", "torch", path, "-o", out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "pinned.pickle: 10 events -> 3 allocs, 2 frees, 1 releases"));
    ck_assert_ptr_nonnull(strstr(r.err, "pinned host memory (host_segments, host_traces): 14 events "
                                        "-> 3 allocs, 3 frees, 1 releases on memory host; start: 2 "
                                        "blocks (1.00 MiB), 1 live; real peak reserved 8.00 MiB (2 "
                                        "segment_alloc)"));
    ck_assert_ptr_nonnull(strstr(r.err, "1 blocks freed at once"));
    char *text = NULL;
    ck_assert(g_file_get_contents(out, &text, NULL, NULL));
    char *want = g_strdup_printf(
        "strata-trace 1\n# imported by strata import torch from pinned.pickle (device 0): 10 events, "
        "13 setup ops rebuild the state at the first event\n# pinned host memory (host_segments, "
        "host_traces): 14 events, 3 setup ops, ops on memory host (buffers pin.N); device releases "
        "name memory hbm\n%s%s%s",
        TORCH_BASIC_SETUP_OPS, host_setup, merged_events);
    ck_assert_str_eq(text, want);
    g_free(want);
    g_free(text);
    strata_cli_result_clear(&r);
    g_unlink(out);
    g_rmdir(dir);
    g_free(out);
    g_free(dir);
    g_free(path);
}
END_TEST

START_TEST(host_summary_and_fidelity)
{
    strata_torch_summary sum = {0};
    strata_source *src = import("pinned", &sum);
    ck_assert(sum.has_host);
    ck_assert_uint_eq(sum.host_events, 14);
    ck_assert_uint_eq(sum.host_allocs, 3);
    ck_assert_uint_eq(sum.host_frees, 3);
    ck_assert_uint_eq(sum.host_releases, 1);
    ck_assert_uint_eq(sum.host_uncached_frees, 1);
    ck_assert_uint_eq(sum.host_inconsistent, 0);
    ck_assert_uint_eq(sum.host_initial_segments, 2);
    ck_assert_uint_eq(sum.host_initial_live, 1);
    ck_assert_uint_eq(sum.host_setup_ops, 3);
    ck_assert_uint_eq(sum.host_initial_reserved, 1052672);
    ck_assert_uint_eq(sum.host_peak_reserved, 8 * MiB + 4096);
    ck_assert_uint_eq(sum.host_final_reserved, 4096);
    ck_assert_uint_eq(sum.host_segment_alloc_sizes->len, 2);
    ck_assert_uint_eq(g_array_index(sum.host_segment_alloc_sizes, uint64_t, 0), 2 * MiB);
    ck_assert_uint_eq(g_array_index(sum.host_segment_alloc_sizes, uint64_t, 1), 8 * MiB);
    ck_assert_uint_eq(sum.n_setup_ops, 13);
    ck_assert_uint_eq(sum.host_unknown, 0);

    GError *err = NULL;
    strata_torch_fidelity f;
    ck_assert(strata_torch_measure(src, &sum, "caching", 0, &f, &err));
    ck_assert_uint_eq(f.model_peak_reserved, 65011712); /* the device's, as in `basic` */
    ck_assert_uint_eq(f.real_peak_reserved, 65011712);
    ck_assert(strata_torch_measure_host(src, &sum, 0, &f, &err));
    ck_assert_uint_eq(f.real_peak_reserved, 8 * MiB + 4096);
    ck_assert_uint_eq(f.model_peak_reserved, 8 * MiB + 4096);
    ck_assert_uint_eq(f.matched_segment_allocs, 2);
    ck_assert_uint_eq(f.model_segment_allocs, 2);
    ck_assert_uint_eq(f.real_final_reserved, 4096);
    ck_assert_uint_eq(f.model_final_reserved, 8 * MiB + 4096); /* P3 kept cached: see above */
    strata_source_free(src);
    strata_torch_summary_clear(&sum);
}
END_TEST

/* record_cuda=False: the host's history alone; its first event is the
 * trace's time 0, as in pinned.pickle. */
START_TEST(host_only_snapshot)
{
    strata_torch_summary sum = {0};
    strata_source *src = import("pinned-only", &sum);
    ck_assert_uint_eq(sum.n_events, 0);
    ck_assert(sum.has_host);
    ck_assert_uint_eq(sum.n_setup_ops, 3);
    char *text = ops_text(src);
    char *want = g_strconcat(host_setup,
                             "alloc pin.2 1MiB host addr=0x7e0000000000 stream=s0 at=0 note=model.py:21\n"
                             "alloc pin.3 2MiB host addr=0x7e0000400000 stream=s0 at=250us note=model.py:22\n"
                             "free pin.2 stream=s0 at=450us\n"
                             "free pin.3 stream=s0 at=550us\n"
                             "release host stream=s0 at=0.8ms note=empty_cache\n"
                             "alloc pin.4 8MiB host addr=0x7e0000800000 stream=s0 at=0.9ms note=model.py:23\n"
                             "free pin.4 stream=s0 at=1000us\n",
                             NULL);
    ck_assert_str_eq(text, want);
    g_free(want);
    g_free(text);
    strata_source_free(src);
    strata_torch_summary_clear(&sum);
}
END_TEST

/* Keys and actions a newer PyTorch may add are read past and counted; the
 * ops are pinned.pickle's. */
START_TEST(unknown_host_keys_counted)
{
    strata_torch_summary a = {0}, b = {0};
    strata_source *newer = import("pinned-newer", &a);
    strata_source *plain = import("pinned", &b);
    ck_assert_uint_eq(a.host_unknown, 4);
    ck_assert_str_eq(a.host_unknown_text,
                     "action future_action x1, host_segments[].blocks[].future_block_key x1, "
                     "host_segments[].future_key x1, host_traces[].future_key x1");
    ck_assert_uint_eq(a.host_events, 15);
    char *ta = ops_text(newer), *tb = ops_text(plain);
    ck_assert_str_eq(ta, tb);
    g_free(ta);
    g_free(tb);
    strata_source_free(newer);
    strata_source_free(plain);
    strata_torch_summary_clear(&a);
    strata_torch_summary_clear(&b);
}
END_TEST

START_TEST(bad_host_value_exit_2)
{
    char *path = fixture("pinned-bad");
    strata_cli_result r = strata_test_cli("import", "torch", path, "-o", "-", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "pinned-bad.pickle: not a PyTorch memory snapshot: "
                                        "host_segments[0].total_size: expected a non-negative int, "
                                        "found str"));
    strata_cli_result_clear(&r);
    g_free(path);
}
END_TEST

/* The streamed import and the whole-document conversion give the same ops,
 * also after a rewind (the host ops are merged again on every pass). */
START_TEST(streamed_equals_whole)
{
    const char *names[] = {"pinned", "pinned-only"};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
        strata_torch_summary s1 = {0}, s2 = {0};
        strata_source *a = import(names[i], &s1);
        char *path = fixture(names[i]);
        GError *err = NULL;
        strata_pickle *p = strata_pickle_load_file(path, &err);
        ck_assert_ptr_nonnull(p);
        strata_source *b = strata_torch_convert(p, path, NULL, &s2, &err);
        ck_assert_ptr_nonnull(b);
        strata_pickle_free(p);
        char *ta = ops_text(a), *tb = ops_text(b), *again = ops_text(a);
        ck_assert_str_eq(ta, tb);
        ck_assert_str_eq(again, tb);
        ck_assert_uint_eq(s1.host_peak_reserved, s2.host_peak_reserved);
        g_free(ta);
        g_free(tb);
        g_free(again);
        g_free(path);
        strata_source_free(a);
        strata_source_free(b);
        strata_torch_summary_clear(&s1);
        strata_torch_summary_clear(&s2);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("torch_host");
    TCase *tc = tcase_create("torch_host");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, pinned_trace_by_hand);
    tcase_add_test(tc, host_summary_and_fidelity);
    tcase_add_test(tc, host_only_snapshot);
    tcase_add_test(tc, unknown_host_keys_counted);
    tcase_add_test(tc, bad_host_value_exit_2);
    tcase_add_test(tc, streamed_equals_whole);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
