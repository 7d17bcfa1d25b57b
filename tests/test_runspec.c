/*
 * test_runspec.c: the run-spec builder (sim/runspec): the policies applied
 * in the order given, as strata_policies_apply() applies them by hand; an
 * SPMD program expanded over the model's devices only when asked (and only
 * with a model of several devices); the checked mode catching a bad op at
 * its line; errors that name the file and the line, from the first step
 * that failed, with the stream never opened when the model does not load
 * and a stream handed in freed on failure; a model alone, from text.
 */
#include <string.h>
#include "testutil.h"
#include "core/error.h"
#include "hw/hw.h"
#include "policy/policy.h"
#include "runspec/runspec.h"
#include "trace/reader.h"
#include "trace/writer.h"

/* All ops of src as text, one a line; asserts the stream ends cleanly. */
static char *drain(strata_source *src)
{
    GString *s = g_string_new(NULL);
    const strata_op *op;
    GError *err = NULL;
    int r;
    while ((r = strata_source_next(src, &op, &err)) == 1) {
        char *line = strata_op_to_text(op);
        g_string_append_printf(s, "%s\n", line);
        g_free(line);
    }
    ck_assert_msg(r == 0, "%s", err ? err->message : "?");
    return g_string_free(s, FALSE);
}

static uint64_t count_lines(const char *text)
{
    uint64_t n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    return n;
}

static strata_run_spec *spec_ok(const strata_run_spec_options *o)
{
    GError *err = NULL;
    strata_run_spec *spec = strata_run_spec_new(o, &err);
    ck_assert_msg(spec != NULL, "%s", err ? err->message : "?");
    return spec;
}

/* The error of a spec that must not build (g_free). */
static char *spec_error(const strata_run_spec_options *o)
{
    GError *err = NULL;
    strata_run_spec *spec = strata_run_spec_new(o, &err);
    ck_assert_ptr_null(spec);
    ck_assert_ptr_nonnull(err);
    ck_assert_int_eq(err->domain, STRATA_ERROR);
    char *msg = g_strdup(err->message);
    g_error_free(err);
    return msg;
}

/* The trace rewritten by the policies by hand, in the order given. */
static char *by_hand(const char *trace, const char *const *policies, const strata_hw *hw)
{
    GError *err = NULL;
    strata_source *src = strata_policies_apply(strata_trace_open(trace, &err), policies, hw, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "?");
    char *text = drain(src);
    strata_source_free(src);
    return text;
}

START_TEST(policies_in_order)
{
    char *trace = strata_test_source_path("traces/examples/train-step-offload.trace");
    char *hw = strata_test_source_path("configs/hw/tpu-v5e.ini");
    const char *const forward[] = {"offload=param", "prefetch=2", NULL};
    const char *const backward[] = {"prefetch=2", "offload=param", NULL};
    const char *const *orders[] = {forward, backward};
    char *texts[2];
    for (int i = 0; i < 2; i++) {
        strata_run_spec_options o = {.hw_path = hw, .trace_path = trace, .policies = orders[i], .expand_spmd = true};
        strata_run_spec *spec = spec_ok(&o);
        texts[i] = drain(strata_run_spec_source(spec));
        char *expected = by_hand(trace, orders[i], strata_run_spec_hw(spec));
        ck_assert_str_eq(texts[i], expected);
        g_free(expected);
        strata_run_spec_free(spec);
    }
    ck_assert_str_ne(texts[0], texts[1]); /* the order matters, so the test sees it */
    /* No policies: the trace as read. */
    strata_run_spec_options plain = {.hw_path = hw, .trace_path = trace};
    strata_run_spec *spec = spec_ok(&plain);
    char *read = drain(strata_run_spec_source(spec));
    char *expected = by_hand(trace, NULL, NULL);
    ck_assert_str_eq(read, expected);
    ck_assert_str_ne(read, texts[0]);
    g_free(expected);
    g_free(read);
    strata_run_spec_free(spec);
    g_free(texts[0]);
    g_free(texts[1]);
    g_free(trace);
    g_free(hw);
}
END_TEST

/* Ops of the collectives program with/without expansion, on a model. */
static uint64_t program_ops(const char *hw, bool expand)
{
    char *trace = strata_test_source_path("traces/spmd/collectives.trace");
    strata_run_spec_options o = {.hw_path = hw, .trace_path = trace, .expand_spmd = expand};
    strata_run_spec *spec = spec_ok(&o);
    char *text = drain(strata_run_spec_source(spec));
    uint64_t n = count_lines(text);
    g_free(text);
    strata_run_spec_free(spec);
    g_free(trace);
    return n;
}

START_TEST(spmd_expanded_only_when_asked)
{
    char *ring8 = strata_test_source_path("configs/hw/test-ring8.ini");
    char *one = strata_test_source_path("configs/hw/h100.ini");
    uint64_t as_written = program_ops(ring8, false);
    uint64_t expanded = program_ops(ring8, true);
    ck_assert_uint_gt(as_written, 0);
    ck_assert_uint_gt(expanded, 8 * as_written / 2); /* every line on every one of 8 devices, and more */
    ck_assert_uint_eq(program_ops(NULL, true), as_written); /* no model: nothing to expand over */
    ck_assert_uint_eq(program_ops(one, true), as_written);  /* one device: nothing to expand */
    g_free(ring8);
    g_free(one);
}
END_TEST

/* The first error of a spec: from its build, else from reading it through (g_free). */
static char *first_error(const strata_run_spec_options *o)
{
    GError *err = NULL;
    strata_run_spec *spec = strata_run_spec_new(o, &err);
    const strata_op *op;
    while (spec && strata_source_next(strata_run_spec_source(spec), &op, &err) == 1)
        ;
    ck_assert_ptr_nonnull(err);
    char *msg = g_strdup(err->message);
    g_error_free(err);
    strata_run_spec_free(spec);
    return msg;
}

START_TEST(checked_catches_a_bad_op_at_its_line)
{
    char *trace = strata_test_write_temp("runspec-XXXXXX.trace", "strata-trace 1\nalloc a 4096\nfree b\n");
    char *where = g_strdup_printf("%s:3: ", trace);
    const char *const pad[] = {"pad", NULL};
    const char *const *policies[] = {NULL, pad}; /* read through as is; rewritten (pad reads ahead) */
    for (int i = 0; i < 2; i++) {
        strata_run_spec_options o = {.trace_path = trace, .policies = policies[i], .checked = true};
        char *msg = first_error(&o);
        ck_assert_msg(g_str_has_prefix(msg, where), "%s", msg);
        ck_assert_ptr_null(strstr(msg, "policy output")); /* the input is at fault, not the policy */
        g_free(msg);
    }
    /* Unchecked and unrewritten, the reader hands the op out. */
    strata_run_spec_options raw = {.trace_path = trace};
    strata_run_spec *spec = spec_ok(&raw);
    char *text = drain(strata_run_spec_source(spec));
    ck_assert_uint_eq(count_lines(text), 2);
    g_free(text);
    strata_run_spec_free(spec);
    g_free(where);
    g_free(trace);
}
END_TEST

typedef struct opener {
    int calls;
    const strata_hw *hw_seen;
    const char *trace;
} opener;

static strata_source *open_counted(void *data, const strata_hw *hw, GError **err)
{
    opener *o = data;
    o->calls++;
    o->hw_seen = hw;
    return strata_trace_open(o->trace, err);
}

START_TEST(errors_name_the_file_and_line)
{
    char *trace = strata_test_source_path("traces/examples/pcie-copy.trace");
    char *bad_hw = strata_test_write_temp("runspec-XXXXXX.ini", "[hardware]\nname = x\nbogus = 1\n");
    /* The model fails at its line; the stream is never opened, and a stream
     * handed in is freed (the sanitizer build sees a leak otherwise). */
    opener op = {.trace = trace};
    strata_run_spec_options o = {.hw_path = bad_hw, .open = open_counted, .open_data = &op};
    char *msg = spec_error(&o);
    char *where = g_strdup_printf("%s:3: ", bad_hw);
    ck_assert_msg(g_str_has_prefix(msg, where), "%s", msg);
    ck_assert_int_eq(op.calls, 0);
    g_free(msg);
    GError *err = NULL;
    strata_run_spec_options given = {.hw_path = bad_hw, .source = strata_trace_open(trace, &err)};
    msg = spec_error(&given);
    ck_assert_msg(g_str_has_prefix(msg, where), "%s", msg);
    g_free(msg);
    g_free(where);
    /* A bad trace header names the trace's first line. */
    char *bad_trace = strata_test_write_temp("runspec-XXXXXX.trace", "strata-trace 9\n");
    char *hw = strata_test_source_path("configs/hw/h100.ini");
    strata_run_spec_options t = {.hw_path = hw, .trace_path = bad_trace};
    msg = spec_error(&t);
    where = g_strdup_printf("%s:1", bad_trace);
    ck_assert_msg(g_str_has_prefix(msg, where), "%s", msg);
    g_free(msg);
    g_free(where);
    /* An unknown policy, as strata_policies_apply() says it. */
    const char *const unknown[] = {"pad", "no-such-policy", NULL};
    strata_run_spec_options p = {.hw_path = hw, .trace_path = trace, .policies = unknown};
    msg = spec_error(&p);
    ck_assert_msg(strstr(msg, "no-such-policy") != NULL, "%s", msg);
    g_free(msg);
    /* A bad override names the key. */
    const char *const sets[] = {"memory.hbm.capacity=lots", NULL};
    strata_run_spec_options s = {.hw_path = hw, .hw_overrides = sets, .trace_path = trace};
    msg = spec_error(&s);
    ck_assert_msg(strstr(msg, "memory.hbm.capacity") || strstr(msg, "capacity"), "%s", msg);
    g_free(msg);
    /* The opener runs once, after the model, and sees it. */
    op.calls = 0;
    strata_run_spec_options good = {.hw_path = hw, .open = open_counted, .open_data = &op};
    strata_run_spec *spec = spec_ok(&good);
    ck_assert_int_eq(op.calls, 1);
    ck_assert_ptr_eq(op.hw_seen, strata_run_spec_hw(spec));
    strata_run_spec_free(spec);
    g_free(hw);
    g_free(bad_trace);
    g_free(bad_hw);
    g_free(trace);
}
END_TEST

START_TEST(model_alone_from_text)
{
    char *path = strata_test_source_path("configs/hw/h100.ini");
    char *text = NULL;
    ck_assert(g_file_get_contents(path, &text, NULL, NULL));
    strata_run_spec_options o = {.hw_text = text, .hw_origin = "measured model"};
    strata_run_spec *spec = spec_ok(&o);
    ck_assert_ptr_nonnull(strata_run_spec_hw(spec));
    ck_assert_ptr_null(strata_run_spec_source(spec));
    strata_run_spec_free(spec);
    /* An allocator the model names that does not exist: at the origin's line. */
    strata_run_spec_options bad = {.hw_text = "[hardware]\nname = x\n[memory hbm]\nkind = device\ncapacity = 1GiB\n"
                                              "bandwidth = 1TB/s\nallocator = no-such\n",
                                   .hw_origin = "measured model"};
    char *msg = spec_error(&bad);
    ck_assert_msg(g_str_has_prefix(msg, "measured model:7"), "%s", msg);
    g_free(msg);
    /* Nothing asked: an empty spec. */
    strata_run_spec_options none = {0};
    spec = spec_ok(&none);
    ck_assert_ptr_null(strata_run_spec_hw(spec));
    ck_assert_ptr_null(strata_run_spec_source(spec));
    strata_run_spec_free(spec);
    strata_run_spec_free(NULL);
    g_free(text);
    g_free(path);
}
END_TEST

static Suite *runspec_suite(void)
{
    Suite *s = suite_create("runspec");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, policies_in_order);
    tcase_add_test(tc, spmd_expanded_only_when_asked);
    tcase_add_test(tc, checked_catches_a_bad_op_at_its_line);
    tcase_add_test(tc, errors_name_the_file_and_line);
    tcase_add_test(tc, model_alone_from_text);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return strata_test_main(runspec_suite()); }
