/*
 * test_engine_bare.c: the bare SimGrid baseline of bench/bench_engine
 * (bench/engine_bare.h) issues exactly the engine's activities.
 *
 * For every shipped example trace on every shipped hardware model, the
 * engine (strata_engine_run) and the bare program each run in a child
 * process on the same trace and must report the same makespan, to the last
 * bit: both bind the ops with the same binder and issue the same transfers,
 * executions and sleeps in the same order on the same platform, so any
 * difference is an activity one of them issues and the other does not.
 * Also: the bare program counts one activity per copy, compute, record and
 * wait (counted by hand on a small trace).
 */
#include <glib/gstdio.h>
#include "engine_bare.h"
#include "hw/hw.h"
#include "testutil.h"

/* Sorted paths of the files in `dir` (a repository folder) ending in `suffix`. */
static GPtrArray *files_in(const char *dir, const char *suffix)
{
    char *path = strata_test_source_path(dir);
    GDir *d = g_dir_open(path, 0, NULL);
    ck_assert_msg(d != NULL, "cannot list %s", path);
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while ((name = g_dir_read_name(d)))
        if (g_str_has_suffix(name, suffix))
            g_ptr_array_add(out, g_build_filename(path, name, NULL));
    g_dir_close(d);
    g_free(path);
    g_ptr_array_sort(out, (GCompareFunc)(void *)g_strcmp0);
    return out;
}

START_TEST(same_makespan_on_every_example)
{
    GPtrArray *hws = files_in("configs/hw", ".ini");
    GPtrArray *traces = files_in("traces/examples", ".trace");
    ck_assert_uint_ge(hws->len, 2);
    ck_assert_uint_ge(traces->len, 2);
    for (guint h = 0; h < hws->len; h++) {
        /* the examples are single-device traces: pods are tested in test_engine_devices */
        strata_hw *model = strata_hw_load(g_ptr_array_index(hws, h), NULL, NULL);
        bool pod = model && strata_hw_devices(model) > 1;
        strata_hw_free(model);
        for (guint t = 0; !pod && t < traces->len; t++) {
            const char *hw = g_ptr_array_index(hws, h), *trace = g_ptr_array_index(traces, t);
            strata_bare_report engine, bare;
            ck_assert_msg(strata_bare_compare(hw, trace, &engine, &bare), "%s on %s: a run failed", trace, hw);
            ck_assert_msg(engine.makespan_s > 0, "%s on %s: makespan 0", trace, hw);
            ck_assert_msg(engine.makespan_s == bare.makespan_s, "%s on %s: engine %.17g s, bare %.17g s", trace,
                          hw, engine.makespan_s, bare.makespan_s);
        }
    }
    g_ptr_array_free(hws, TRUE);
    g_ptr_array_free(traces, TRUE);
}
END_TEST

START_TEST(one_activity_per_timed_or_synchronising_op)
{
    char *hw = strata_test_source_path("configs/hw/test-simple.ini");
    char *trace = strata_test_write_temp("bare-XXXXXX.trace",
                                         "strata-trace 1\nalloc h 1MiB host\nalloc d 1MiB\n"
                                         "copy d h stream=dma\nrecord r stream=dma\nwait r\n"
                                         "compute k flops=1e9 in=d\ncompute s time=1ms\nfree d\nfree h\n");
    strata_bare_report engine, bare;
    ck_assert(strata_bare_compare(hw, trace, &engine, &bare));
    /* copy, record, wait, two computes; the allocs and frees take no time */
    ck_assert_uint_eq(bare.ops, 5);
    ck_assert_uint_eq(engine.ops, 9);
    ck_assert_msg(engine.makespan_s == bare.makespan_s, "engine %.17g s, bare %.17g s", engine.makespan_s,
                  bare.makespan_s);
    g_remove(trace);
    g_free(trace);
    g_free(hw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("engine_bare");
    TCase *tc = tcase_create("makespan");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, same_makespan_on_every_example);
    tcase_add_test(tc, one_activity_per_timed_or_synchronising_op);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
