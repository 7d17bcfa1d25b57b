/*
 * test_xla_newer.c: forms the newest JAX release writes (jax and jaxlib
 * 0.12.0.1, the newest on PyPI in wave 15), each on the smallest excerpt of
 * a real dump or profile, the figures derived by hand from the excerpt.
 *
 * tests/data/xla/gte-sugar: get-tuple-element left out of the printed HLO,
 *   its users naming the tuple element (`%call#1`); a dot whose operands are
 *   such elements (refused, exit 2, before: no operand shape for its FLOPs).
 * tests/data/xla/int2: XLA's s2 element type (jnp.int2), packed four to a
 *   byte (refused before: no such type).
 * tests/data/jax-fresh/collectives_mix.trace.json: a shard_map profile whose
 *   collectives are named after the JAX primitive (`pmax.7`), counted as ops
 *   before.
 */
#include <glib/gstdio.h>
#include <string.h>
#include "testutil.h"
#include "import/xla.h"

#define GTE_DIR "tests/data/xla/gte-sugar"
#define GTE_HLO "jit_f.cpu_after_optimizations.txt"

/* Runs `strata import xla DIR -o TRACE`; returns the trace's text (the
 * result, standard error included, in *r). */
static char *import_text(const char *dir, strata_cli_result *r)
{
    char *tmp = strata_test_temp_dir();
    char *trace = g_build_filename(tmp, "t.trace", NULL);
    *r = strata_test_cli("import", "xla", dir, "-o", trace, NULL);
    char *text = NULL;
    if (r->status == 0)
        ck_assert(g_file_get_contents(trace, &text, NULL, NULL));
    g_unlink(trace);
    g_rmdir(tmp);
    g_free(trace);
    g_free(tmp);
    return text;
}

/* The loop's body reads `%arg_tuple.1#2` (s32[8,2], the value arg_tuple.1{2},
 * which shares copy.10's slice: offset 192 of allocation 6) and adds 1 to its
 * 16 elements; the dot reads `%call#1` (s32[4,8]) and `%call#2`: 2 x 4x2
 * results x 8 contracted = 128 FLOPs. The call's result is its computation's
 * ROOT's, while.0{1} and while.0{2}, in copy.9's and copy.10's slices
 * (offsets 64 and 192): the dot reads those. The six operands NAME#INDEX are
 * counted; the six scheduled instructions the HLO leaves out
 * (get-tuple-element.6 to .9, while.8, while.9) become nothing, not a
 * compute each: 8 computes, 177 FLOPs (128 + 16 + 32 + 1). */
START_TEST(elided_get_tuple_elements_are_tuple_elements)
{
    char *dir = strata_test_source_path(GTE_DIR);
    strata_cli_result r;
    char *text = import_text(dir, &r);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "26 instructions, 27 values in 7 allocations -> 11 buffers, 8 computes (177 FLOP)"),
                  "%s", r.err);
    ck_assert_msg(strstr(r.err, "get-tuple-element as NAME#INDEX (XLA of jaxlib 0.12): 6 operands read as tuple "
                                "elements, 6 scheduled get-tuple-elements the HLO leaves out emitted as nothing; "
                                "the first: ") &&
                      strstr(r.err, GTE_HLO ":51: operand 'arg_tuple.1#2'"),
                  "%s", r.err);
    ck_assert_msg(strstr(text, "compute broadcast_add_fusion flops=16 in=copy.10 out=copy.10 note=fusion\n"), "%s", text);
    ck_assert_msg(strstr(text, "compute dot_general.1 flops=128 in=copy.9,copy.10 out=dot_general.1 note=dot\n"), "%s",
                  text);
    ck_assert_msg(strstr(text, "get-tuple-element") == NULL && strstr(text, "compute while.") == NULL, "%s", text);
    strata_cli_result_clear(&r);
    g_free(text);
    g_free(dir);
}
END_TEST

/* Copies the excerpt to a temporary directory with `from` replaced by `to`
 * in its HLO; returns the directory. */
static char *excerpt_with(const char *from, const char *to)
{
    char *src = strata_test_source_path(GTE_DIR);
    char *tmp = strata_test_temp_dir();
    const char *suffixes[] = {"", "-buffer-assignment", "-live-range", "-memory-usage-report"};
    for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++) {
        char *name = g_strdup_printf("jit_f.cpu_after_optimizations%s.txt", suffixes[i]);
        char *in = g_build_filename(src, name, NULL), *out = g_build_filename(tmp, name, NULL), *text = NULL;
        ck_assert(g_file_get_contents(in, &text, NULL, NULL));
        if (i == 0) {
            char **parts = g_strsplit(text, from, -1);
            ck_assert_uint_eq(g_strv_length(parts), 2);
            g_free(text);
            text = g_strjoinv(to, parts);
            g_strfreev(parts);
        }
        ck_assert(g_file_set_contents(out, text, -1, NULL));
        g_free(text);
        g_free(in);
        g_free(out);
        g_free(name);
    }
    g_free(src);
    return tmp;
}

static void remove_excerpt(char *dir)
{
    const char *suffixes[] = {"", "-buffer-assignment", "-live-range", "-memory-usage-report"};
    for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++) {
        char *name = g_strdup_printf("%s/jit_f.cpu_after_optimizations%s.txt", dir, suffixes[i]);
        g_unlink(name);
        g_free(name);
    }
    g_rmdir(dir);
    g_free(dir);
}

/* Strict on what it knows: an element past the tuple's three, or NAME#INDEX
 * of an instruction that is no tuple, is exit 2 at the operand's line. */
START_TEST(element_operand_past_the_tuple_is_an_error)
{
    const char *cases[][2] = {{"dot(%call#1, %call#2)", "dot(%call#1, %call#3)"},
                              {"dot(%call#1, %call#2)", "dot(%call#1, %copy.10#0)"}};
    const char *bad[] = {"call#3", "copy.10#0"};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *dir = excerpt_with(cases[i][0], cases[i][1]);
        strata_cli_result r;
        char *text = import_text(dir, &r);
        ck_assert_ptr_null(text);
        ck_assert_int_eq(r.status, 2);
        char *want = g_strdup_printf(GTE_HLO ":83: expected operand '%s' of 'dot_general.1' to be NAME#INDEX, element "
                                     "INDEX of a tuple-shaped instruction defined before it", bad[i]);
        ck_assert_msg(strstr(r.err, want), "%s", r.err);
        g_free(want);
        strata_cli_result_clear(&r);
        remove_excerpt(dir);
    }
}
END_TEST

/* s2[8,16]{1,0:E(2)}: 128 two-bit elements, 32 bytes, as XLA's size=
 * states; strata has no 2-bit dtype, so no dtype=. The fusion converts,
 * multiplies by 2 and converts back: one multiply per element, 128 FLOPs. */
START_TEST(two_bit_integers_are_sized_without_a_dtype)
{
    char *dir = strata_test_source_path("tests/data/xla/int2");
    strata_cli_result r;
    char *text = import_text(dir, &r);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(text, "alloc x.1 32 tag=param shape=8x16 note=allocation.1\n"), "%s", text);
    ck_assert_msg(strstr(text, "alloc multiply_convert_fusion 32 tag=output shape=8x16 note=allocation.0\n"), "%s",
                  text);
    ck_assert_msg(strstr(text, "compute multiply_convert_fusion flops=128 in=x.1 "), "%s", text);
    ck_assert_msg(strstr(r.err, "argument                32 32 B ") && strstr(r.err, "output                  32 32 B "),
                  "%s", r.err);
    strata_cli_result_clear(&r);
    g_free(text);
    g_free(dir);
}
END_TEST

/* Device 0's first step of a shard_map body (all_gather over 'm', pmax over
 * 'd', psum_scatter over 'm') as jaxlib 0.12.0.1's profiler wrote it: 6 ops
 * on one thread, the three collectives named after their JAX primitives.
 * Busy 3.155 + 534.892 + 0.972 + 28.012 + 0.601 + 143.986 = 711.618 us;
 * span 778.356 + 143.986 - 207.751 = 714.591 us. */
START_TEST(primitive_named_collectives_are_collectives)
{
    char *path = strata_test_source_path("tests/data/jax-fresh/collectives_mix.trace.json");
    strata_cli_result r = strata_test_cli("import", "jax-profile", path, "-o", "-", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "device 0: 6 ops (0 copies, 3 collectives; 0 enclosing ops left out), busy 711.618 us "
                                "of a 714.591 us span"),
                  "%s", r.err);
    const char *want[] = {"compute axis_index.12 time=3155ns at=0 note=op\n",
                          "compute all_gather.7 time=534892ns at=3455ns note=collective\n",
                          "compute pmax.7 time=28012ns at=539979ns note=collective\n",
                          "compute reduce_scatter.7 time=143986ns at=570605ns note=collective\n"};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
        ck_assert_msg(strstr(r.out, want[i]), "%s not in\n%s", want[i], r.out);
    strata_cli_result_clear(&r);
    g_free(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("xla_newer");
    TCase *tc = tcase_create("xla_newer");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, elided_get_tuple_elements_are_tuple_elements);
    tcase_add_test(tc, element_operand_past_the_tuple_is_an_error);
    tcase_add_test(tc, two_bit_integers_are_sized_without_a_dtype);
    tcase_add_test(tc, primitive_named_collectives_are_collectives);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
