/*
 * test_xla_import.c: `strata import xla` on hand-made dumps in XLA's format
 * (tests/data/xla/): every section, every allocation kind, the figures
 * derived by hand (docs/xla-import.md walks through `step`), bad lines
 * named by FILE:LINE, and the imported trace through the pipeline.
 *
 * tests/data/xla/step: the split layout of recent XLA (buffer assignment,
 * -live-range.txt with cumulative peak entries, memory-usage report,
 * ShortParsable HLO): parameters, a donated parameter, constants, a
 * maybe-live-out value, a tuple output, a thread-local value, a host value
 * (color 5) with copy-start/copy-done, an in-place all-reduce, dot, fusion
 * and convolution.
 * tests/data/xla/mlp: the older layout (live ranges appended to the buffer
 * assignment, peak entries without cumulative sums, HLO with '%' and
 * operand shapes), whose temp allocation leaves a slot unused.
 */
#include <glib/gstdio.h>
#include <string.h>
#include "testutil.h"
#include "core/error.h"
#include "import/xla.h"
#include "import/xla_report.h"
#include "trace/check.h"

#define STEP_DIR "tests/data/xla/step"
#define MLP_BA "tests/data/xla/mlp/module_0003.jit_mlp.sm_8.0_gpu_after_optimizations-buffer-assignment.txt"

/* Imports path, checks every op with the trace checker, and returns the
 * source with its figures. */
static strata_source *import_checked(const char *path, const char *module, strata_xla_figures *fig)
{
    GError *err = NULL;
    strata_source *src = strata_xla_import(path, module, fig, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "");
    strata_checker *c = strata_checker_new(path);
    const strata_op *op;
    int r;
    while ((r = strata_source_next(src, &op, &err)) == 1)
        ck_assert_msg(strata_checker_feed(c, op, NULL, &err), "%s", err ? err->message : "");
    ck_assert_int_eq(r, 0);
    strata_checker_free(c);
    return src;
}

/* The first op of the stream with this kind and name (a copy, or kind -1 when none). */
static strata_op find_op(strata_source *src, strata_op_kind kind, const char *name, int nth)
{
    strata_op found = {.kind = STRATA_OP__COUNT};
    const strata_op *op;
    ck_assert(strata_source_rewind(src, NULL));
    while (strata_source_next(src, &op, NULL) == 1)
        if (op->kind == kind && strcmp(op->name, name) == 0 && nth-- == 0) {
            strata_op_copy(&found, op);
            break;
        }
    return found;
}

START_TEST(step_figures_match_xla)
{
    char *dir = strata_test_source_path(STEP_DIR);
    strata_xla_figures f;
    strata_source *src = import_checked(dir, NULL, &f);
    /* XLA's own figures: allocations 0-2 are parameters (512 + 2048 + 128),
     * 2, 5 and 6 maybe-live-out (128 + 1024 + 16), 2 both (the donated
     * accumulator), 9 the preallocated temp, 3 and 4 constants (4 + 72),
     * 7 thread-local. */
    ck_assert_uint_eq(f.n_allocations, 10);
    ck_assert_uint_eq(f.n_values, 16);
    ck_assert_uint_eq(f.n_instructions, 16);
    ck_assert_uint_eq(f.xla_parameter_bytes, 2688);
    ck_assert_uint_eq(f.xla_output_bytes, 1168);
    ck_assert_uint_eq(f.xla_alias_bytes, 128);
    ck_assert_uint_eq(f.xla_temp_bytes, 2304);
    ck_assert_uint_eq(f.xla_constant_bytes, 76);
    ck_assert_uint_eq(f.xla_thread_local_bytes, 4);
    ck_assert_uint_eq(f.xla_total_bytes, 7136);
    /* XLA's allocation sizes, largest first (the memory-usage report's order). */
    const uint64_t top_index[] = {9, 1, 5, 8, 0}, top_size[] = {2304, 2048, 1024, 1024, 512};
    ck_assert_uint_eq(f.n_top, 5);
    for (int i = 0; i < 5; i++) {
        ck_assert_uint_eq(f.top[i].index, top_index[i]);
        ck_assert_uint_eq(f.top[i].size, top_size[i]);
    }
    ck_assert_str_eq(f.top[0].kind, "preallocated-temp");
    ck_assert_str_eq(f.top[3].kind, "color 5");
    /* The peak XLA states (t=9, 5988 bytes) is the trace's peak in program order. */
    ck_assert(f.has_xla_peak);
    ck_assert_uint_eq(f.xla_peak_time, 9);
    ck_assert_uint_eq(f.xla_peak_bytes, 5988);
    ck_assert_uint_eq(f.peak_bytes, f.xla_peak_bytes);
    ck_assert_uint_eq(f.peak_time, f.xla_peak_time);
    /* 16 values - 1 thread-local - 2 merged (add.6 into the donated
     * Arg_2.3, all-reduce.5 into reduce.4) = 13 buffers. */
    ck_assert_uint_eq(f.n_buffers, 13);
    ck_assert_uint_eq(f.n_thread_local_values, 1);
    ck_assert_uint_eq(f.n_unranged_values, 0);
    ck_assert_uint_eq(f.n_computes, 6);
    ck_assert_uint_eq(f.n_copies, 1);
    ck_assert_uint_eq(f.n_collective_notes, 1); /* no replica groups, one device: a note */
    ck_assert_uint_eq(f.n_collectives, 0);
    /* fusion 2*8*32*16 + 8*32 (dot, tanh), reduce 256, convolution
     * 2*256*18/2, add 32, multiply 256. */
    ck_assert_double_eq(f.flops, 8448 + 256 + 4608 + 32 + 256);
    ck_assert_uint_eq(f.temps->len, 1);
    const strata_xla_temp *t = &g_array_index(f.temps, strata_xla_temp, 0);
    ck_assert_uint_eq(t->index, 9);
    ck_assert_uint_eq(t->xla_bytes, 2304);
    ck_assert_uint_eq(t->alignment, 64);
    ck_assert_uint_eq(t->n_buffers, 5);
    /* The five temps live at t=9 hold 1024+1024+128+24+4 = 2204 bytes (the
     * lower bound, at real sizes). On the 64-byte grid the planner stacks
     * 1024+1024+128+64 = 2240 and the 4-byte value on top: 2244, its end at
     * its real size (XLA's size ends at its last value's end the same way). */
    ck_assert_uint_eq(t->lower_bound, 2204);
    ck_assert_uint_le(t->planned_bytes, t->xla_bytes);
    ck_assert_uint_eq(t->planned_bytes, 2244);
    /* strata's JAX-style accounting of the trace (device memory only: the
     * host copy is not a temp there): arguments and outputs equal XLA's;
     * temps peak at t=9 with fusion, convolution.9, reduce.4, constant.3
     * and the copy's tuple table and context (1024+1024+128+72+24+4). */
    strata_replay_summary s;
    GError *err = NULL;
    ck_assert_msg(strata_xla_measure(src, &s, &err), "%s", err ? err->message : "");
    ck_assert_uint_eq(s.argument_bytes, f.xla_parameter_bytes);
    ck_assert_uint_eq(s.output_bytes, f.xla_output_bytes);
    ck_assert_uint_eq(s.temp_peak_bytes, 2276);
    ck_assert_uint_eq(s.alias_bytes, f.xla_alias_bytes);
    ck_assert_uint_eq(s.jax_total_bytes, 2276 + 2688 + 1168 - 128);
    char *report = strata_xla_report(&f, &s);
    ck_assert_ptr_nonnull(strstr(report, "planner/XLA 0.9740, 60 B less (2.6%)"));
    g_free(report);
    strata_source_free(src);
    strata_xla_figures_clear(&f);
    g_free(dir);
}
END_TEST

START_TEST(step_ops_carry_kinds_tags_and_copies)
{
    char *dir = strata_test_source_path(STEP_DIR);
    strata_xla_figures f;
    strata_source *src = import_checked(dir, NULL, &f);
    strata_op a = find_op(src, STRATA_OP_ALLOC, "Arg_1.2", 0);
    ck_assert_int_eq(a.tag, STRATA_TAG_PARAM);
    ck_assert_int_eq(a.dtype, STRATA_DTYPE_F32);
    ck_assert_uint_eq(a.n_dims, 2);
    ck_assert_uint_eq(a.shape[0], 16);
    ck_assert_uint_eq(a.shape[1], 32);
    ck_assert_uint_eq(a.size, 2048);
    strata_op_clear(&a);
    /* The donated accumulator: one buffer, never freed (an alias). */
    strata_op d = find_op(src, STRATA_OP_FREE, "Arg_2.3", 0);
    ck_assert_int_eq(d.kind, STRATA_OP__COUNT);
    strata_op out = find_op(src, STRATA_OP_ALLOC, "multiply.11", 0);
    ck_assert_int_eq(out.tag, STRATA_TAG_OUTPUT);
    strata_op_clear(&out);
    strata_op c = find_op(src, STRATA_OP_ALLOC, "constant.3", 0);
    ck_assert_int_eq(c.tag, STRATA_TAG_PARAM);
    ck_assert_uint_eq(c.n_dims, 4);
    strata_op_clear(&c);
    strata_op act = find_op(src, STRATA_OP_ALLOC, "fusion", 0);
    ck_assert_int_eq(act.tag, STRATA_TAG_ACTIVATION);
    strata_op_clear(&act);
    strata_op host = find_op(src, STRATA_OP_ALLOC, "copy-start{0}", 0);
    ck_assert_str_eq(host.memory, "host");
    strata_op_clear(&host);
    strata_op table = find_op(src, STRATA_OP_ALLOC, "copy-start", 0);
    ck_assert_ptr_null(table.memory);
    ck_assert_uint_eq(table.size, 24);
    strata_op_clear(&table);
    strata_op cp = find_op(src, STRATA_OP_COPY, "copy-start{0}", 0);
    ck_assert_str_eq(cp.src, "fusion");
    ck_assert_str_eq(cp.stream, "xla-d2h");
    strata_op_clear(&cp);
    strata_op ar = find_op(src, STRATA_OP_COMPUTE, "all-reduce.5", 0);
    ck_assert_str_eq(ar.note, "all-reduce");
    ck_assert_uint_eq(ar.n_ins, 1);
    ck_assert_str_eq(ar.ins[0], "reduce.4");
    strata_op_clear(&ar);
    strata_op conv = find_op(src, STRATA_OP_COMPUTE, "convolution.9", 0);
    ck_assert_double_eq(conv.flops, 4608);
    ck_assert_uint_eq(conv.n_ins, 2);
    ck_assert_str_eq(conv.ins[0], "Arg_0.1"); /* through bitcast.8 */
    strata_op_clear(&conv);
    strata_source_free(src);
    strata_xla_figures_clear(&f);
    g_free(dir);
}
END_TEST

START_TEST(mlp_older_layout_and_planner_gain)
{
    char *ba = strata_test_source_path(MLP_BA);
    strata_xla_figures f;
    strata_source *src = import_checked(ba, NULL, &f);
    ck_assert_ptr_null(f.live_range_file);
    ck_assert_ptr_null(f.report_file);
    ck_assert_ptr_nonnull(f.hlo_file);
    ck_assert_uint_eq(f.xla_parameter_bytes, 24576);
    ck_assert_uint_eq(f.xla_output_bytes, 8192);
    ck_assert_uint_eq(f.xla_temp_bytes, 32768);
    ck_assert_uint_eq(f.xla_total_bytes, 65536);
    ck_assert_uint_eq(f.xla_peak_time, 4);
    ck_assert_uint_eq(f.xla_peak_bytes, 49152);
    ck_assert_uint_eq(f.peak_bytes, 49152);
    ck_assert_uint_eq(f.peak_time, 4);
    /* two dots 2*32*64*64 and four elementwise ops of 2048 elements */
    ck_assert_double_eq(f.flops, 2 * 262144.0 + 4 * 2048.0);
    /* Three 8 KiB temps are live at once at most, XLA used four slots. */
    const strata_xla_temp *t = &g_array_index(f.temps, strata_xla_temp, 0);
    ck_assert_uint_eq(t->xla_bytes, 32768);
    ck_assert_uint_eq(t->lower_bound, 24576);
    ck_assert_uint_eq(t->planned_bytes, 24576);
    strata_replay_summary s;
    ck_assert(strata_xla_measure(src, &s, NULL));
    ck_assert_uint_eq(s.argument_bytes, 24576);
    ck_assert_uint_eq(s.output_bytes, 8192);
    ck_assert_uint_eq(s.temp_peak_bytes, 24576);
    ck_assert_uint_eq(s.alias_bytes, 0);
    ck_assert_uint_eq(s.jax_total_bytes, 24576 + 8192 + 24576);
    char *report = strata_xla_report(&f, &s);
    ck_assert_ptr_nonnull(strstr(report, "planner/XLA 0.7500, 8192 B less (25.0%)"));
    g_free(report);
    strata_source_free(src);
    strata_xla_figures_clear(&f);
    g_free(ba);
}
END_TEST

static const char *ba_ok =
    "BufferAssignment:\n"
    "allocation 0: size 16, parameter 0, shape |f32[4]| at ShapeIndex {}:\n"
    " value: <0 p @0> (size=16,offset=0): f32[4]{0}\n"
    "allocation 1: size 16, output shape is |f32[4]|, maybe-live-out:\n"
    " value: <1 r @0> (size=16,offset=0): f32[4]{0}\n"
    "\n"
    "Total bytes used: 32 (32B)\n";

static const char *lr_ok =
    "HloLiveRange (max 2):\n"
    "  InstructionSequence:\n"
    "    0:p\n"
    "    1:r\n"
    "  BufferLiveRange:\n"
    "    p{}:0-2\n"
    "    r{}:1-2\n"
    "  Live ranges at 1 (peak):\n"
    "    p{}: 16 bytes (cumulative: 16 bytes)\n"
    "    r{}: 16 bytes (cumulative: 32 bytes)\n";

static const char *hlo_ok =
    "HloModule m, is_scheduled=true\n"
    "\n"
    "ENTRY main (p: f32[4]) -> f32[4] {\n"
    "  p = f32[4]{0} parameter(0)\n"
    "  ROOT r = f32[4]{0} negate(p)\n"
    "}\n";

/* Writes DIR/m-buffer-assignment.txt, m-live-range.txt and m.txt (NULL: absent). */
static char *write_module(const char *ba, const char *lr, const char *hlo)
{
    char *dir = strata_test_temp_dir();
    const char *texts[] = {ba, lr, hlo};
    const char *names[] = {"m-buffer-assignment.txt", "m-live-range.txt", "m.txt"};
    for (int i = 0; i < 3; i++)
        if (texts[i]) {
            char *p = g_build_filename(dir, names[i], NULL);
            ck_assert(g_file_set_contents(p, texts[i], -1, NULL));
            g_free(p);
        }
    return dir;
}

static void remove_module(char *dir)
{
    const char *names[] = {"m-buffer-assignment.txt", "m-live-range.txt", "m.txt"};
    for (int i = 0; i < 3; i++) {
        char *p = g_build_filename(dir, names[i], NULL);
        g_unlink(p);
        g_free(p);
    }
    g_rmdir(dir);
    g_free(dir);
}

/* Replaces the first occurrence of from in text by to (g_free). */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    ck_assert_ptr_nonnull(at);
    return g_strdup_printf("%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
}

typedef struct bad_case {
    int file;          /* 0 buffer assignment, 1 live range, 2 HLO */
    const char *from, *to;
    const char *where; /* expected in the message: FILE:LINE */
} bad_case;

static const bad_case bad_cases[] = {
    {0, "size 16, parameter", "size sixteen, parameter", "m-buffer-assignment.txt:2:"},
    {0, "(size=16,offset=0): f32[4]{0}\nallocation 1", "(size=16): f32[4]{0}\nallocation 1",
     "m-buffer-assignment.txt:3:"},
    {0, " value: <1 r @0> (size=16,offset=0)", " value: <1 r @0> (size=16,offset=8)",
     "m-buffer-assignment.txt:5:"},
    {0, "\nTotal bytes used", "%garbage\nTotal bytes used", "m-buffer-assignment.txt:6:"},
    /* issue 41: a field this reader knows, with a bad value, beside one it
     * does not know, stays an error; so does an unknown field that is no
     * `word[ text]`, and a `} // NAME` closer naming another computation */
    {0, "size 16, parameter", "size 16, page 0, parameter x, shape", "m-buffer-assignment.txt:2:"},
    {0, "size 16, parameter", "size 16, Page 0, parameter", "m-buffer-assignment.txt:2:"},
    {2, "negate(p)\n}\n", "negate(p)\n} // other\n", "m.txt:6: expected '}' or '} // main'"},
    {0, "allocation 1:", "allocation 2:", "m-buffer-assignment.txt:4:"},
    {0, "Total bytes used: 32", "Total bytes used: 33", "Total bytes used"},
    {1, "    1:r", "    2:r", "m-live-range.txt:4:"},
    {1, "    r{}:1-2", "    r:1-2", "m-live-range.txt:7:"},
    {1, "    p{}:0-2", "    p{}:0-9", "m-live-range.txt:6:"},
    {1, "    p{}: 16 bytes", "    p{}: sixteen bytes", "m-live-range.txt:9:"},
    {1, "HloLiveRange (max 2):", "HloLiveRange (max two):", "m-live-range.txt:1:"},
    {2, "negate(p)", "negate(p", "m.txt:5:"},
    {2, "  p = f32[4]{0}", "  p = g32[4]{0}", "m.txt:4:"},
    {2, "}\n", "}\nstray\n", "m.txt:7:"},
    /* 2 x 10^6 x 10^15 FLOPs: past a trace's flops= range (10^21); the
     * operand, 4 x 10^15 f32, is within the 2^63-byte shape limit */
    {2, "ROOT r = f32[4]{0} negate(p)",
     "ROOT r = f32[1000,1000]{1,0} dot(f32[4,1000000000000000]{1,0} p, f32[4]{0} p), lhs_contracting_dims={1}",
     "m.txt:5: expected at most 1e+21 FLOPs for 'r' (a trace's flops= range), its shapes give 2e+21"},
    /* issue #30: sizes crossing the parser checked against 2^63 and the
     * product they feed. 2^32 x 2^32 elements wrap 64 bits; 2^61 + 1 f32
     * take 2^63 + 4 bytes; 3037000500^2 elements pass 2^63. */
    {0, "(size=16,offset=0): f32[4]{0}\nallocation 1", "(size=16,offset=0): f32[4294967296,4294967296]{1,0}\nallocation 1",
     "m-buffer-assignment.txt:3:"},
    {0, "(size=16,offset=0): f32[4]{0}\nallocation 1", "(size=16,offset=0): f32[2305843009213693953]{0}\nallocation 1",
     "m-buffer-assignment.txt:3:"},
    {2, "  p = f32[4]{0}", "  p = f32[3037000500,3037000500]{1,0}", "m.txt:4:"},
    {0, "size 16, parameter", "size 9223372036854775809, parameter",
     "m-buffer-assignment.txt:2: expected an allocation size of at most 2^63 bytes"},
    {0, "allocation 1: size 16,", "allocation 1: size 9223372036854775800,",
     "m-buffer-assignment.txt:4: expected the allocations to total at most 2^63 bytes"},
    {1, "HloLiveRange (max 2):", "HloLiveRange (max 9223372036854775809):",
     "m-live-range.txt:1: expected a schedule end T of at most 2^63"},
    {1, "    p{}: 16 bytes (cumulative", "    p{}: 9223372036854775800 bytes (cumulative",
     "m-live-range.txt:10: expected the values live at the peak to total at most 2^63 bytes"},
    /* truncated or empty files */
    {1, "  BufferLiveRange:\n    p{}:0-2\n    r{}:1-2\n  Live ranges at 1 (peak):\n"
        "    p{}: 16 bytes (cumulative: 16 bytes)\n    r{}: 16 bytes (cumulative: 32 bytes)\n",
     "", "m-live-range.txt: expected '  BufferLiveRange:' after the instruction sequence, found the end"},
    {2, "  ROOT r = f32[4]{0} negate(p)\n}\n", "  ROOT r = f32[4]{0} negate(p)\n",
     "m.txt: expected '}' closing the last computation, found the end of the file"},
    {2, "HloModule m, is_scheduled=true\n\nENTRY main (p: f32[4]) -> f32[4] {\n  p = f32[4]{0} parameter(0)\n"
        "  ROOT r = f32[4]{0} negate(p)\n}\n", "", "m.txt: expected an 'HloModule NAME, ...' line, found none"},
    {2, "ENTRY main (p: f32[4]) -> f32[4] {\n  p = f32[4]{0} parameter(0)\n  ROOT r = f32[4]{0} negate(p)\n}\n",
     "", "m.txt: expected an 'ENTRY' computation, found none"},
    /* FLOPs from what is not there: a contracting dimension past the rank,
     * a fusion calling an undefined computation, an undefined operand */
    {2, "ROOT r = f32[4]{0} negate(p)", "ROOT r = f32[4]{0} dot(p, p), lhs_contracting_dims={1}",
     "m.txt:5: expected the contracting dimensions of 'r' below its lhs's rank 1"},
    {2, "ROOT r = f32[4]{0} negate(p)", "ROOT r = f32[4]{0} fusion(p), kind=kLoop, calls=%nowhere",
     "m.txt:5: expected calls=nowhere of fusion 'r' to name a computation defined before it"},
    {2, "ROOT r = f32[4]{0} negate(p)", "ROOT r = f32[4]{0} dot(q, p), lhs_contracting_dims={0}",
     "m.txt:5: expected operand 0 of dot 'r' to be defined before it"},
};

START_TEST(bad_lines_name_file_and_line)
{
    const bad_case *c = &bad_cases[_i];
    const char *texts[3] = {ba_ok, lr_ok, hlo_ok};
    char *changed = replace(texts[c->file], c->from, c->to);
    texts[c->file] = changed;
    char *dir = write_module(texts[0], texts[1], texts[2]);
    strata_xla_figures f;
    GError *err = NULL;
    strata_source *src = strata_xla_import(dir, NULL, &f, &err);
    ck_assert_ptr_null(src);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_msg(strstr(err->message, c->where), "case %d: '%s' lacks '%s'", _i, err->message, c->where);
    g_clear_error(&err);
    strata_xla_figures_clear(&f);
    /* The command line exits 2 with the same message. */
    strata_cli_result r = strata_test_cli("import", "xla", dir, "-o", "-", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, c->where), "case %d: %s", _i, r.err);
    strata_cli_result_clear(&r);
    remove_module(dir);
    g_free(changed);
}
END_TEST

START_TEST(good_module_files_and_choices)
{
    /* The smallest module: no HLO (computes without FLOPs), live ranges in
     * their own file; a NUL byte and a missing live range are errors. */
    char *dir = write_module(ba_ok, lr_ok, NULL);
    strata_xla_figures f;
    strata_source *src = import_checked(dir, NULL, &f);
    ck_assert_uint_eq(f.n_buffers, 2);
    ck_assert_uint_eq(f.n_computes, 1);
    ck_assert_uint_eq(f.peak_bytes, 32);
    ck_assert_uint_eq(f.xla_peak_bytes, 32);
    strata_source_free(src);
    strata_xla_figures_clear(&f);
    GError *err = NULL;
    ck_assert_ptr_null(strata_xla_import(dir, "other", &f, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "matching 'other'"));
    g_clear_error(&err);
    strata_xla_figures_clear(&f);
    remove_module(dir);

    dir = write_module(ba_ok, NULL, NULL);
    ck_assert_ptr_null(strata_xla_import(dir, NULL, &f, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "live ranges"));
    g_clear_error(&err);
    strata_xla_figures_clear(&f);
    remove_module(dir);

    char *nul = g_strdup(ba_ok);
    nul[strlen("BufferAssignment:\nalloc")] = '\0';
    dir = write_module(ba_ok, lr_ok, NULL);
    char *p = g_build_filename(dir, "m-buffer-assignment.txt", NULL);
    ck_assert(g_file_set_contents(p, nul, (gssize)strlen(ba_ok), NULL));
    ck_assert_ptr_null(strata_xla_import(p, NULL, &f, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "m-buffer-assignment.txt:2: expected text, got a NUL byte"));
    g_clear_error(&err);
    strata_xla_figures_clear(&f);
    g_free(p);
    g_free(nul);
    remove_module(dir);

    /* Two modules: --module picks one, none is an error listing both. */
    dir = strata_test_temp_dir();
    const char *names[] = {"module_0001.a-buffer-assignment.txt", "module_0002.b-buffer-assignment.txt"};
    char *text = g_strconcat(ba_ok, "\n\n", lr_ok, NULL);
    for (int i = 0; i < 2; i++) {
        char *q = g_build_filename(dir, names[i], NULL);
        ck_assert(g_file_set_contents(q, text, -1, NULL));
        g_free(q);
    }
    ck_assert_ptr_null(strata_xla_import(dir, NULL, &f, &err));
    ck_assert_ptr_nonnull(strstr(err->message, "expected one module, found 2"));
    ck_assert_ptr_nonnull(strstr(err->message, "module_0002.b"));
    g_clear_error(&err);
    strata_xla_figures_clear(&f);
    src = strata_xla_import(dir, "module_0002", &f, &err);
    ck_assert_ptr_nonnull(src);
    ck_assert_str_eq(f.module, "module_0002.b");
    strata_source_free(src);
    strata_xla_figures_clear(&f);
    for (int i = 0; i < 2; i++) {
        char *q = g_build_filename(dir, names[i], NULL);
        g_unlink(q);
        g_free(q);
    }
    g_free(text);
    g_rmdir(dir);
    g_free(dir);
}
END_TEST

START_TEST(operand_comments_and_frame_index)
{
    /* XLA marks every fifth operand with an index comment; recent XLA ends
     * the HLO with a stack-frame index; some versions print a stats block
     * in the buffer assignment. */
    const char *ba =
        "BufferAssignment:\n"
        "allocation 0: size 16, parameter 0, shape |f32[4]| at ShapeIndex {}:\n"
        " value: <0 p @0> (size=16,offset=0): f32[4]{0}\n"
        "allocation 1: size 16, parameter 1, shape |f32[4]| at ShapeIndex {}:\n"
        " value: <1 q @0> (size=16,offset=0): f32[4]{0}\n"
        "allocation 2: size 16, output shape is |f32[4]|, maybe-live-out:\n"
        " value: <2 r @0> (size=16,offset=0): f32[4]{0}\n"
        "\nBufferAssignment stats:\n"
        "             parameter allocation:        32B\n"
        "     preallocated temp allocation:         0B\n"
        "Total bytes used: 48 (48B)\n";
    const char *lr =
        "HloLiveRange (max 3):\n  InstructionSequence:\n    0:p\n    1:q\n    2:r\n"
        "  BufferLiveRange:\n    p{}:0-3\n    q{}:0-3\n    r{}:2-3\n";
    const char *hlo =
        "HloModule m\n\nENTRY main {\n  p = f32[4]{0} parameter(0)\n  q = f32[4]{0} parameter(1)\n"
        "  ROOT r = f32[4]{0} add(p, p, p, p, p, /*index=5*/q)\n}\n\nFileNames\n1 \"m.py\"\n"
        "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n";
    char *dir = write_module(ba, lr, hlo);
    strata_xla_figures f;
    strata_source *src = import_checked(dir, NULL, &f);
    strata_op r = find_op(src, STRATA_OP_COMPUTE, "r", 0);
    ck_assert_uint_eq(r.n_ins, 2);
    ck_assert_str_eq(r.ins[1], "q");
    ck_assert_double_eq(r.flops, 4);
    ck_assert(!f.has_xla_peak);
    ck_assert_uint_eq(f.xla_total_bytes, 48);
    strata_op_clear(&r);
    strata_source_free(src);
    strata_xla_figures_clear(&f);
    remove_module(dir);
}
END_TEST

START_TEST(newer_fields_are_read_past_with_a_note)
{
    /* issue 41: XLA of jaxlib 0.11 on writes `page N` in every allocation
     * header; a newer line kind may follow the allocations; jaxlib 0.4.x
     * closes computations with `} // NAME`. The import is the same, with
     * the unknown ones counted and the first named in the summary. */
    char *ba1 = replace(ba_ok, "size 16, parameter", "size 16, page 0, parameter");
    char *ba2 = replace(ba1, "size 16, output", "size 16, page 0, output");
    char *ba = replace(ba2, "\nTotal bytes used", "Allocation pages: 1\nTotal bytes used");
    char *hlo = replace(hlo_ok, "negate(p)\n}\n", "negate(p)\n} // main\n");
    char *plain_dir = write_module(ba_ok, lr_ok, hlo_ok), *dir = write_module(ba, lr_ok, hlo);
    strata_xla_figures plain, f;
    strata_source *plain_src = import_checked(plain_dir, NULL, &plain), *src = import_checked(dir, NULL, &f);
    uint64_t want[] = {plain.n_buffers, plain.n_computes, plain.peak_bytes, plain.xla_parameter_bytes,
                       plain.xla_output_bytes, 0};
    uint64_t got[] = {f.n_buffers, f.n_computes, f.peak_bytes, f.xla_parameter_bytes, f.xla_output_bytes,
                      plain.n_unknown};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
        ck_assert_uint_eq(got[i], want[i]);
    ck_assert_uint_eq(f.n_unknown, 3);
    ck_assert_ptr_nonnull(strstr(f.unknown_first, "m-buffer-assignment.txt:2: allocation field 'page 0'"));
    strata_source_free(src);
    strata_source_free(plain_src);
    strata_xla_figures_clear(&f);
    strata_xla_figures_clear(&plain);
    remove_module(plain_dir);
    strata_cli_result r = strata_test_cli("import", "xla", dir, "-o", "-", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.err, "read past: 3 fields or lines") && strstr(r.err, "allocation field 'page 0'"), "%s",
                  r.err);
    strata_cli_result_clear(&r);
    remove_module(dir);
    g_free(ba1);
    g_free(ba2);
    g_free(ba);
    g_free(hlo);
}
END_TEST

/* issue 41: XLA of jaxlib 0.4.20 writes no num_partitions= and an
 * all-reduce over all partitions as channel_id=N, replica_groups={{0}}
 * (cross-replica-and-partition: replica 0 with all its partitions). The
 * entry parameter's tiled sharding gives 2 partitions: one collective over
 * devices {0,1}, on mesh x0:2. Without the sharding the count is unknown
 * and the collective stays a note. */
START_TEST(partitions_from_sharding_when_the_module_states_none)
{
    char *texts[3];
    const char *names[] = {"m-buffer-assignment.txt", "m-live-range.txt", "m.txt"};
    for (int i = 0; i < 3; i++) {
        char *path = g_build_filename("tests/data/xla/async", names[i], NULL), *full = strata_test_source_path(path);
        ck_assert(g_file_get_contents(full, &texts[i], NULL, NULL));
        g_free(path);
        g_free(full);
    }
    char *no_count = replace(texts[2], ", num_partitions=2", "");
    char *bare = replace(no_count, "replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true",
                         "replica_groups={{0}}, dimensions={0}");
    char *sharded = replace(bare, "parameter(0)", "parameter(0), sharding={devices=[2]<=[2]}");
    const char *hlo[] = {sharded, bare};
    const char *want[] = {"1 collectives (1 ops, 1 async; 0 as notes)", "0 collectives (0 ops, 0 async; 1 as notes)"};
    for (int i = 0; i < 2; i++) {
        char *dir = write_module(texts[0], texts[1], hlo[i]);
        strata_cli_result r = strata_test_cli("import", "xla", dir, "-o", "-", NULL);
        ck_assert_msg(r.status == 0 && strstr(r.err, want[i]), "%s", r.err);
        bool told = strstr(r.err, "devices 2: the partitions its tiled sharding= names") != NULL;
        ck_assert_int_eq(told, i == 0);
        ck_assert_int_eq(strstr(r.out, "option mesh=x0:2\n") != NULL, i == 0);
        strata_cli_result_clear(&r);
        remove_module(dir);
    }
    for (int i = 0; i < 3; i++)
        g_free(texts[i]);
    g_free(no_count);
    g_free(bare);
    g_free(sharded);
}
END_TEST

START_TEST(cli_trace_runs_through_the_pipeline)
{
    char *dir = strata_test_source_path(STEP_DIR);
    char *tmp = strata_test_temp_dir();
    char *trace = g_build_filename(tmp, "step.trace", NULL);
    strata_cli_result r = strata_test_cli("import", "xla", dir, "-o", trace, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "live at peak"));
    ck_assert_ptr_nonnull(strstr(r.err, "temp allocation 9: XLA 2304 B, offline planner 2244 B"));
    strata_cli_result_clear(&r);
    char *hw = strata_test_source_path("configs/hw/tpu-v5e.ini");
    const char *policies[] = {"offload=activation", "pad", "donate", NULL};
    for (const char **p = policies; *p; p++) {
        r = strata_test_cli("run", "--hw", hw, "--trace", trace, "--policy", *p, NULL);
        ck_assert_msg(r.status == 0, "%s: %s", *p, r.err);
        strata_cli_result_clear(&r);
    }
    r = strata_test_cli("alloc", "--trace", trace, "--allocator", "offline", "--capacity", "1MiB", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    /* arguments, outputs and the peak's temps on the device: 5760 bytes */
    ck_assert_ptr_nonnull(strstr(r.out, "planned height   5760 B"));
    strata_cli_result_clear(&r);
    g_unlink(trace);
    g_rmdir(tmp);
    g_free(trace);
    g_free(tmp);
    g_free(hw);
    g_free(dir);
}
END_TEST

/* The bytes read show on a terminal only (core/progress.h). */
START_TEST(progress_only_on_a_terminal)
{
    char *dir = strata_test_source_path(STEP_DIR);
    const char *argv[] = {"import", "xla", dir, "-o", "/dev/null", NULL};
    strata_test_progress_only_on_tty(argv, "import xla: [");
    g_free(dir);
}
END_TEST

/* issue #30: a tuple nested 50,000 deep in a value's shape (and in the
 * HLO) is read without recursion: the import succeeds, the value measured
 * by its first array. */
START_TEST(deep_tuple_is_read_without_recursion)
{
    enum { DEPTH = 50000 };
    GString *shape = g_string_new(NULL);
    for (int i = 0; i < DEPTH; i++)
        g_string_append_c(shape, '(');
    g_string_append(shape, "f32[4]{0}");
    for (int i = 0; i < DEPTH; i++)
        g_string_append_c(shape, ')');
    const char *from = "(size=16,offset=0): f32[4]{0}\nallocation 1";
    char *to = g_strdup_printf("(size=16,offset=0): %s\nallocation 1", shape->str);
    char *ba = replace(ba_ok, from, to);
    char *hlo_to = g_strdup_printf("  p = %s parameter(0)", shape->str);
    char *hlo = replace(hlo_ok, "  p = f32[4]{0} parameter(0)", hlo_to);
    char *dir = write_module(ba, lr_ok, hlo);
    strata_cli_result r = strata_test_cli("import", "xla", dir, "-o", "-", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "alloc p 16 tag=param"));
    strata_cli_result_clear(&r);
    remove_module(dir);
    g_free(hlo);
    g_free(hlo_to);
    g_free(ba);
    g_free(to);
    g_string_free(shape, TRUE);
}
END_TEST

/* issue #30: 100,000 allocations (each a 64-byte temp live for one
 * instruction) import in one pass: the planner comparison walks each
 * allocation's values and groups once (it walked every group per temp
 * allocation: 10^10 steps, past 30 s). The report lists 8 temp allocations
 * and sums the other 99,992: 99,992 x 64 = 6,399,488 bytes, which the
 * planner matches (one buffer each). */
START_TEST(many_allocations_import_in_one_pass)
{
    enum { N = 100000 };
    GString *ba = g_string_new("BufferAssignment:\n"), *lr = g_string_new(NULL);
    for (int i = 0; i < N; i++)
        g_string_append_printf(ba, "allocation %d: size 64, preallocated-temp:\n value: <%d v%d @0> (size=64,offset=0): f32[16]{0}\n",
                               i, i, i);
    g_string_append_printf(lr, "HloLiveRange (max %d):\n  InstructionSequence:\n", N);
    for (int i = 0; i < N; i++)
        g_string_append_printf(lr, "    %d:v%d\n", i, i);
    g_string_append(lr, "  BufferLiveRange:\n");
    for (int i = 0; i < N; i++)
        g_string_append_printf(lr, "    v%d{}:%d-%d\n", i, i, i + 1);
    char *dir = write_module(ba->str, lr->str, NULL);
    strata_cli_result r = strata_test_cli("import", "xla", dir, "-o", "/dev/null", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "... and 99992 more temp allocations: XLA 6399488 B, offline planner 6399488 B"));
    strata_cli_result_clear(&r);
    remove_module(dir);
    g_string_free(ba, TRUE);
    g_string_free(lr, TRUE);
}
END_TEST

/* issue #30: the importer never writes a line the trace reader refuses
 * (1 MiB, STRATA_LINE_MAX): a value named with 1.1 MiB is refused at
 * import with exit 2; a 1,000-byte name goes through. */
START_TEST(no_trace_line_past_the_reader_limit)
{
    for (int big = 0; big < 2; big++) {
        size_t len = big ? 1100000 : 1000;
        char *name = g_malloc(len + 1);
        memset(name, 'n', len);
        name[len] = '\0';
        char *v_to = g_strdup_printf(" value: <0 %s @0>", name);
        char *ba = replace(ba_ok, " value: <0 p @0>", v_to);
        char *r_to = g_strdup_printf("    %s{}:0-2", name);
        char *lr1 = replace(lr_ok, "    p{}:0-2", r_to);
        char *s_to = g_strdup_printf("    0:%s", name);
        char *lr = replace(lr1, "    0:p", s_to);
        char *dir = write_module(ba, lr, NULL);
        char *out = g_build_filename(dir, "out.trace", NULL);
        strata_cli_result r = strata_test_cli("import", "xla", dir, "-o", out, NULL);
        if (big) {
            ck_assert_int_eq(r.status, 2);
            ck_assert_msg(strstr(r.err, "expected trace lines below 1048576 bytes (the trace reader's limit), the alloc of 'nnn"),
                          "%s", r.err);
            ck_assert(!g_file_test(out, G_FILE_TEST_EXISTS));
        } else {
            ck_assert_msg(r.status == 0, "%s", r.err);
            strata_cli_result_clear(&r);
            r = strata_test_cli("check", "--trace", out, NULL);
            ck_assert_msg(r.status == 0, "%s", r.err);
        }
        strata_cli_result_clear(&r);
        g_unlink(out);
        g_free(out);
        remove_module(dir);
        g_free(lr);
        g_free(s_to);
        g_free(lr1);
        g_free(r_to);
        g_free(ba);
        g_free(v_to);
        g_free(name);
    }
}
END_TEST

/* TPU memory spaces become strata memories: a value laid out in S(1)
 * (VMEM on TPUs) goes to vmem, in S(5) to host, in S(0) to the device's
 * memory (the trace names none). */
START_TEST(memory_spaces_become_memories)
{
    const char *layouts[] = {"f32[4]{0:S(1)}", "f32[4]{0:S(5)}", "f32[4]{0:T(256)}"};
    const char *allocs[] = {"alloc p 16 vmem tag=param", "alloc p 16 host tag=param", "alloc p 16 tag=param"};
    for (int i = 0; i < 3; i++) {
        char *to = g_strdup_printf("(size=16,offset=0): %s\nallocation 1", layouts[i]);
        char *ba = replace(ba_ok, "(size=16,offset=0): f32[4]{0}\nallocation 1", to);
        char *dir = write_module(ba, lr_ok, hlo_ok);
        strata_cli_result r = strata_test_cli("import", "xla", dir, "-o", "-", NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(strstr(r.out, allocs[i]) != NULL, "%s: %s", layouts[i], r.out);
        strata_cli_result_clear(&r);
        remove_module(dir);
        g_free(ba);
        g_free(to);
    }
}
END_TEST

/* tests/data/xla/async: an async all-gather over 2 partitions
 * (all-gather-start/-done, replica_groups={{0,1}}) with a negate scheduled
 * between start and done. The start becomes the all-gather of its result
 * {1} (8 f32, 32 B = 2 x the 16 B operand) from p on stream
 * xla-collective between events; the program waits at the done, after the
 * negate. The trace runs on 2 GPUs of the DGX model: a ring all-gather of
 * the 32 B result over the 2 ranks, on its own stream. */
START_TEST(async_collective_is_collective_plus_wait)
{
    char *dir = strata_test_source_path("tests/data/xla/async");
    char *tmp = strata_test_temp_dir();
    char *trace = g_build_filename(tmp, "a.trace", NULL);
    strata_cli_result r = strata_test_cli("import", "xla", dir, "-o", trace, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "1 collectives (1 ops, 1 async; 0 as notes)"));
    strata_cli_result_clear(&r);
    char *text = NULL;
    ck_assert(g_file_get_contents(trace, &text, NULL, NULL));
    const char *order[] = {"option mesh=x0:2\n", "record xa0.go\n", "wait xa0.go stream=xla-collective\n",
                           "all-gather ags{1} p axis=x0 stream=xla-collective note=all-gather-start\n",
                           "record xa0.done stream=xla-collective\n", "compute n flops=4 in=p out=n note=negate\n",
                           "wait xa0.done\n", NULL};
    const char *at = text;
    for (const char **o = order; *o; o++) {
        const char *found = strstr(at, *o);
        ck_assert_msg(found != NULL, "'%s' not after the previous line in:\n%s", *o, text);
        at = found + strlen(*o);
    }
    g_free(text);
    char *hw = strata_test_source_path("configs/hw/dgx-h100.ini");
    r = strata_test_cli("run", "--hw", hw, "--set", "hardware.devices=2", "--set", "hardware.devices_per_host=2",
                        "--trace", trace, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    /* dgx-h100.ini declares collectives = nccl: the all-gather runs what NCCL would pick */
    ck_assert_ptr_nonnull(strstr(r.out, "all-gather         x0           nccl       2    32 B"));
    ck_assert_ptr_nonnull(strstr(r.out, "xla-collective@0"));
    strata_cli_result_clear(&r);
    g_unlink(trace);
    g_rmdir(tmp);
    g_free(trace);
    g_free(tmp);
    g_free(hw);
    g_free(dir);
}
END_TEST

/* The bytes of a trace size token (4096, 4KiB, 8KiB). */
static uint64_t size_of_token(const char *t)
{
    char *end = NULL;
    uint64_t n = g_ascii_strtoull(t, &end, 10);
    return strcmp(end, "KiB") == 0 ? n << 10 : n;
}

/* tests/data/xla/tpu: TPU layouts. Tiled values keep XLA's padded sizes
 * (f32[3,100] in T(8,128): 8x128x4 = 4096 B; bf16 in T(8,128)(2,1), two
 * rows packed per sublane: 16x128x2 = 4096; s8 in T(8,128)(4,1): 32x128 =
 * 4096; f32[2,3,100]: 2 x 4096), and the S(1) value goes to vmem. Each is
 * checked against strata's pad policy: the same shapes at their unpadded
 * sizes (1200, 600, 300, 2400, 1200 B), through `transform --policy pad`,
 * come out at XLA's sizes. */
START_TEST(tiled_layouts_match_the_pad_policy)
{
    char *dir = strata_test_source_path("tests/data/xla/tpu");
    strata_cli_result r = strata_test_cli("import", "xla", dir, "-o", "-", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "alloc v 4KiB vmem tag=temp dtype=f32 shape=3x100"));
    const char *names[] = {"a", "b", "c", "d", "v"};
    const char *unpadded = "strata-trace 1\nalloc a 1200 dtype=f32 shape=3x100\nalloc b 600 dtype=bf16 shape=3x100\n"
                           "alloc c 300 dtype=int8 shape=3x100\nalloc d 2400 dtype=f32 shape=2x3x100\n"
                           "alloc v 1200 vmem dtype=f32 shape=3x100\ncompute x time=0\n";
    char *u = strata_test_write_temp("u-XXXXXX.trace", unpadded);
    strata_cli_result p = strata_test_cli("transform", "--trace", u, "--policy", "pad", "-o", "-", NULL);
    ck_assert_msg(p.status == 0, "%s", p.err);
    for (int i = 0; i < 5; i++) {
        char *key = g_strdup_printf("\nalloc %s ", names[i]);
        const char *x = strstr(r.out, key), *q = strstr(p.out, key);
        ck_assert_msg(x && q, "%s", names[i]);
        char **xt = g_strsplit(x + 1, " ", 4), **qt = g_strsplit(q + 1, " ", 4);
        ck_assert_uint_eq(size_of_token(xt[2]), size_of_token(qt[2]));
        ck_assert_uint_eq(size_of_token(xt[2]), names[i][0] == 'd' ? 8192 : 4096);
        g_strfreev(xt);
        g_strfreev(qt);
        g_free(key);
    }
    strata_cli_result_clear(&p);
    strata_cli_result_clear(&r);
    g_unlink(u);
    g_free(u);
    g_free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("xla_import");
    TCase *tc = tcase_create("xla_import");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, step_figures_match_xla);
    tcase_add_test(tc, step_ops_carry_kinds_tags_and_copies);
    tcase_add_test(tc, mlp_older_layout_and_planner_gain);
    tcase_add_loop_test(tc, bad_lines_name_file_and_line, 0, G_N_ELEMENTS(bad_cases));
    tcase_add_test(tc, good_module_files_and_choices);
    tcase_add_test(tc, operand_comments_and_frame_index);
    tcase_add_test(tc, newer_fields_are_read_past_with_a_note);
    tcase_add_test(tc, partitions_from_sharding_when_the_module_states_none);
    tcase_add_test(tc, cli_trace_runs_through_the_pipeline);
    tcase_add_test(tc, progress_only_on_a_terminal);
    tcase_add_test(tc, deep_tuple_is_read_without_recursion);
    tcase_add_test(tc, many_allocations_import_in_one_pass);
    tcase_add_test(tc, no_trace_line_past_the_reader_limit);
    tcase_add_test(tc, memory_spaces_become_memories);
    tcase_add_test(tc, async_collective_is_collective_plus_wait);
    tcase_add_test(tc, tiled_layouts_match_the_pad_policy);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
