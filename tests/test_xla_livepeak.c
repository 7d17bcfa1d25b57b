/*
 * test_xla_livepeak.c: XLA's live-range peak as XLA accounts it
 * (sim/import/xla_livepeak.h), on a hand-made dump with a donated
 * parameter, a multi-output fusion and a peak moment that XLA's sweep
 * picks one step late; and on the hand-made fixtures of test_xla_import.c.
 *
 * The module (schedule 0..6, max 6):
 *   0 p    f32[256] 1024 B  parameter 0, donated: shares allocation 0 with
 *                           the output; XLA's range 0-2 (last read at 2)
 *   1 q    f32[64]   256 B  parameter 1, read only: 0-6
 *   2 f    (f32[256], f32[64]) multi-output fusion: f{} 16 B (two
 *                           pointers), f{0} 1024 B 2-3, f{1} 256 B 2-5
 *   3 b    f32[256] 1024 B  3-4
 *   4 c    f32[64]   256 B  4-5
 *   5 out  f32[256] 1024 B  5-6, the output, in the donated allocation
 *
 * XLA's sweep (every value at its defining instruction's shape: f{0} and
 * f{1} weigh 16 like f{}; ends at END+1, after the starts of that time):
 *   t=0 +p +q 1280 | t=2 +48 1328 | t=3 +b 2352, -p 1328
 *   t=4 +c 1584, -f{} -f{0} 1552 | t=5 +out 2576 (the maximum), -b 1552
 * so the moment is 5, where b (ended at 4) is no longer live. Live at 5:
 * q, f{1}, c, out. Newer XLA (entries NAME{INDEX}) sizes each by its own
 * shape: 256 + 256 + 256 + 1024 = 1792; older XLA (NAME) by its instruction's:
 * 256 + 16 + 256 + 1024 = 1552.
 * strata's physical peak holds the donated allocation whole: at t=3,
 * 1024 (allocation 0) + 256 (q) + 1024 + 256 + 16 (f) + 1024 (b) = 3600.
 */
#include <string.h>
#include "testutil.h"
#include "import/xla.h"
#include "import/xla_report.h"

static const char *donated_ba =
    "BufferAssignment:\n"
    "allocation 0: size 1024, parameter 0, shape |f32[256]| at ShapeIndex {}, maybe-live-out:\n"
    " value: <0 p @0> (size=1024,offset=0): f32[256]{0}\n"
    " value: <7 out @0> (size=1024,offset=0): f32[256]{0}\n"
    "allocation 1: size 256, parameter 1, shape |f32[64]| at ShapeIndex {}:\n"
    " value: <1 q @0> (size=256,offset=0): f32[64]{0}\n"
    "allocation 2: size 2320, preallocated-temp:\n"
    " value: <2 f{} @0> (size=16,offset=1280): (f32[256]{0}, f32[64]{0})\n"
    " value: <3 f{0} @0> (size=1024,offset=0): f32[256]{0}\n"
    " value: <4 f{1} @0> (size=256,offset=1024): f32[64]{0}\n"
    " value: <5 b @0> (size=1024,offset=1296): f32[256]{0}\n"
    " value: <6 c @0> (size=256,offset=0): f32[64]{0}\n"
    "\n"
    "Total bytes used: 3600 (3.5KiB)\n";

static const char *donated_lr_head =
    "HloLiveRange (max 6):\n"
    "  InstructionSequence:\n"
    "    0:p\n"
    "    1:q\n"
    "    2:f\n"
    "    3:b\n"
    "    4:c\n"
    "    5:out\n"
    "  BufferLiveRange:\n"
    "    p{}:0-2\n"
    "    q{}:0-6\n"
    "    f{}:2-3\n"
    "    f{0}:2-3\n"
    "    f{1}:2-5\n"
    "    b{}:3-4\n"
    "    c{}:4-5\n"
    "    out{}:5-6\n"
    "  Live ranges at 5 (peak):\n";

/* As XLA's ToString prints them: newer (size descending, cumulative) and older. */
static const char *donated_peak_newer =
    "    out{}: 1024 bytes (cumulative: 1024 bytes)\n"
    "    c{}: 256 bytes (cumulative: 1280 bytes)\n"
    "    f{1}: 256 bytes (cumulative: 1536 bytes)\n"
    "    q{}: 256 bytes (cumulative: 1792 bytes)\n";
/* jaxlib 0.6.0: values by name and index, in no size order, no cumulative sums. */
static const char *donated_peak_middle =
    "    q{}: 256 bytes\n"
    "    f{1}: 256 bytes\n"
    "    c{}: 256 bytes\n"
    "    out{}: 1024 bytes\n";
static const char *donated_peak_older =
    "    q: 256 bytes\n"
    "    f: 16 bytes\n"
    "    c: 256 bytes\n"
    "    out: 1024 bytes\n";

/* Writes DIR/m-buffer-assignment.txt and DIR/m-live-range.txt. */
static char *write_dump(const char *ba, const char *lr)
{
    char *dir = strata_test_temp_dir();
    char *pb = g_build_filename(dir, "m-buffer-assignment.txt", NULL);
    char *pl = g_build_filename(dir, "m-live-range.txt", NULL);
    ck_assert(g_file_set_contents(pb, ba, -1, NULL));
    ck_assert(g_file_set_contents(pl, lr, -1, NULL));
    g_free(pb);
    g_free(pl);
    return dir;
}

static void import_dump_ba(const char *ba, const char *peak_lines, strata_xla_figures *f)
{
    char *lr = g_strconcat(donated_lr_head, peak_lines, NULL);
    char *dir = write_dump(ba, lr);
    GError *err = NULL;
    strata_source *src = strata_xla_import(dir, NULL, f, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    strata_source_free(src);
    strata_test_remove_dir(dir);
    g_free(dir);
    g_free(lr);
}

static void import_dump(const char *peak_lines, strata_xla_figures *f)
{
    import_dump_ba(donated_ba, peak_lines, f);
}

/* The two forms of the statement and the figure each gives (header). */
static const struct {
    const char **peak_lines;
    uint64_t bytes;
} forms[] = {{&donated_peak_newer, 1792}, {&donated_peak_middle, 1792}, {&donated_peak_older, 1552}};

START_TEST(donated_parameter_as_xla_states_it)
{
    strata_xla_figures f;
    import_dump(*forms[_i].peak_lines, &f);
    ck_assert(f.has_xla_peak);
    ck_assert_uint_eq(f.xla_peak_time, 5);
    ck_assert_uint_eq(f.xla_peak_bytes, forms[_i].bytes);
    ck_assert_uint_eq(f.xla_accounted_peak_time, 5);
    ck_assert_uint_eq(f.xla_accounted_peak_bytes, forms[_i].bytes);
    ck_assert_uint_eq(f.xla_accounted_unsized, 0);
    ck_assert_uint_eq(f.peak_time, 3);
    ck_assert_uint_eq(f.peak_bytes, 3600);
    strata_xla_figures_clear(&f);
}
END_TEST

START_TEST(sizes_the_dump_lacks_are_counted)
{
    /* Without f{}'s value line the dump carries neither f{}'s size nor the
     * instruction size of f{0} and f{1}: 3 values, which weigh their own
     * sizes (0, 1024, 256) in the sweep: t=2 1280 + 1280 = 2560 | t=3 +b
     * 3584, the maximum. Live at 3: q 256, f{} 0, f{0} 1024, f{1} 256,
     * b 1024 = 2560. */
    const char *line = " value: <2 f{} @0> (size=16,offset=1280): (f32[256]{0}, f32[64]{0})\n";
    const char *at = strstr(donated_ba, line);
    ck_assert_ptr_nonnull(at);
    char *ba = g_strdup_printf("%.*s%s", (int)(at - donated_ba), donated_ba, at + strlen(line));
    strata_xla_figures f;
    import_dump_ba(ba, donated_peak_newer, &f);
    ck_assert_uint_eq(f.xla_accounted_unsized, 3);
    ck_assert_uint_eq(f.xla_accounted_peak_time, 3);
    ck_assert_uint_eq(f.xla_accounted_peak_bytes, 2560);
    strata_replay_summary s = {0};
    char *text = strata_xla_report(&f, &s);
    ck_assert_ptr_nonnull(strstr(text, "3 values with a live range have no size in the buffer assignment"));
    g_free(text);
    g_free(ba);
    strata_xla_figures_clear(&f);
}
END_TEST

START_TEST(report_states_both_figures)
{
    strata_xla_figures f;
    import_dump(donated_peak_newer, &f);
    strata_replay_summary s = {0};
    char *text = strata_xla_report(&f, &s);
    /* 3600 - 1792 = 1808 B, 100.89% of 1792. */
    ck_assert_ptr_nonnull(strstr(text, "\n  XLA's peak            1792 1.75 KiB    at t=5, recomputed "));
    ck_assert_ptr_nonnull(strstr(text, "physical is 1808 B more (+100.89%)"));
    ck_assert_ptr_null(strstr(text, "not the one XLA states"));
    g_free(text);
    strata_xla_figures_clear(&f);
    /* A statement that is not XLA's sum is said to differ. */
    char *wrong = g_strdup(donated_peak_newer);
    memcpy(strstr(wrong, "1024 bytes (c"), "1000", 4);
    import_dump(wrong, &f);
    text = strata_xla_report(&f, &s);
    ck_assert_ptr_nonnull(strstr(text, "not the one XLA states"));
    g_free(text);
    g_free(wrong);
    strata_xla_figures_clear(&f);
}
END_TEST

START_TEST(shipped_fixtures_as_xla_would_state_them)
{
    /* The hand-made fixtures of test_xla_import.c state the moment with
     * the most bytes live; XLA's sweep picks another, and the report says
     * they differ.
     * step (newer layout; copy-start's three values weigh 24 each in the
     * sweep): ... t=14 +multiply.11 5760 | t=15 +tuple 5776, the maximum,
     * -fusion -convolution.9 (ended at 14) 3728. Live at 15: Arg_0.1 512,
     * Arg_1.2 2048, add.6 128, multiply.11 1024, tuple 16 = 3728 (the
     * fixture states 5988 at 9).
     * mlp (older layout): t=4 +dot.5 49152 | t=5 +multiply.6 57344, the
     * maximum, -tanh.4 49152. Live at 5: Arg_0.1 8192, Arg_1.2 16384,
     * dot.3, dot.5, multiply.6 8192 each = 49152 (the fixture: at 4). */
    const char *paths[] = {"tests/data/xla/step",
                           "tests/data/xla/mlp/module_0003.jit_mlp.sm_8.0_gpu_after_optimizations-buffer-assignment.txt"};
    const uint64_t bytes[] = {3728, 49152}, times[] = {15, 5}, stated_times[] = {9, 4};
    for (int i = 0; i < 2; i++) {
        strata_xla_figures f;
        GError *err = NULL;
        char *path = strata_test_source_path(paths[i]);
        strata_source *src = strata_xla_import(path, NULL, &f, &err);
        ck_assert_msg(src != NULL, "%s", err ? err->message : "");
        ck_assert_uint_eq(f.xla_accounted_peak_bytes, bytes[i]);
        ck_assert_uint_eq(f.xla_accounted_peak_time, times[i]);
        ck_assert_uint_eq(f.xla_peak_time, stated_times[i]);
        strata_replay_summary s = {0};
        char *text = strata_xla_report(&f, &s);
        ck_assert_ptr_nonnull(strstr(text, "not the one XLA states"));
        g_free(text);
        g_free(path);
        strata_source_free(src);
        strata_xla_figures_clear(&f);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("xla_livepeak");
    TCase *tc = tcase_create("xla_livepeak");
    tcase_add_loop_test(tc, donated_parameter_as_xla_states_it, 0, G_N_ELEMENTS(forms));
    tcase_add_test(tc, sizes_the_dump_lacks_are_counted);
    tcase_add_test(tc, report_states_both_figures);
    tcase_add_test(tc, shipped_fixtures_as_xla_would_state_them);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
