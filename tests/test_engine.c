/*
 * test_engine.c: the SimGrid engine on cases worked out by hand.
 *
 * Hardware (HW below): host (100 GB/s port) -- pcie (16 GB/s each way, 1 us,
 * full duplex) -- hbm (1 TB/s port, 2 GiB); a unit `core` of 100 TFLOP/s
 * (200 TFLOP/s for bf16) reading hbm. Every expected figure is derived in the
 * comment above its assertion; tolerance 0.1% (most hold to 1e-9).
 *
 * Each test runs in its own process (Check fork mode): SimGrid allows one
 * engine per process.
 */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "engine/engine.h"
#include "hw/hw.h"
#include "testutil.h"
#include "trace/reader.h"

#define GIB 1073741824.0
#define PCIE_BW 16e9
#define PCIE_LAT 1e-6

static const char HW_FMT[] =
    "[hardware]\nname = engine-test\nsource = round numbers for hand-derived tests\n"
    "[memory hbm]\nkind = device\ncapacity = %s\nbandwidth = %s\nlatency = 0\n"
    "[memory host]\nkind = host\ncapacity = 64GiB\nbandwidth = 100GB/s\n"
    "[link pcie]\nbetween = host hbm\nbandwidth = 16GB/s\nlatency = 1us\nduplex = %s\n"
    "[compute core]\nflops = 100TFLOP/s\nflops.bf16 = 200TFLOP/s\noperands = hbm\n";

static strata_hw *make_hw(const char *capacity, const char *hbm_bw, const char *duplex)
{
    char *text = g_strdup_printf(HW_FMT, capacity, hbm_bw, duplex);
    GError *err = NULL;
    strata_hw *hw = strata_hw_load_data(text, "engine-test.ini", NULL, &err);
    ck_assert_msg(hw != NULL, "hw: %s", err ? err->message : "?");
    g_free(text);
    return hw;
}

/* A trace written to a temporary file and opened, on make_hw(capacity, "1TB/s", "full"). */
typedef struct trace_case {
    strata_hw *hw;
    char *path;
    strata_source *src;
} trace_case;

static trace_case trace_case_open(const char *capacity, const char *trace)
{
    trace_case tc = {make_hw(capacity, "1TB/s", "full"), strata_test_write_temp("engine-XXXXXX.trace", trace), NULL};
    GError *err = NULL;
    tc.src = strata_trace_open(tc.path, &err);
    ck_assert_msg(tc.src, "%s", err ? err->message : "?");
    return tc;
}

/* Frees r (the run's results) and the case, and removes its file. */
static void trace_case_close(trace_case *tc, strata_results *r)
{
    strata_results_free(r);
    strata_source_free(tc->src);
    strata_hw_free(tc->hw);
    g_remove(tc->path);
    g_free(tc->path);
}

/* Runs trace text on hw; returns results (status ok or oom) or NULL with *err. */
static strata_results *run_text(strata_hw *hw, const char *trace, GError **err)
{
    return strata_test_run_trace_text(hw, trace, NULL, err);
}

static strata_results *run_ok(const char *trace, const char *duplex, const char *hbm_bw)
{
    strata_hw *hw = make_hw("2GiB", hbm_bw, duplex);
    GError *err = NULL;
    strata_results *r = run_text(hw, trace, &err);
    ck_assert_msg(r != NULL, "run: %s", err ? err->message : "?");
    strata_hw_free(hw);
    return r;
}

static void assert_close(double got, double want, const char *what)
{
    double tol = fabs(want) * 1e-3 + 1e-12;
    ck_assert_msg(fabs(got - want) <= tol, "%s: got %.12g, want %.12g", what, got, want);
}

static const strata_stream_result *stream(const strata_results *r, const char *name)
{
    for (guint i = 0; i < r->streams->len; i++) {
        const strata_stream_result *s = &g_array_index(r->streams, strata_stream_result, i);
        if (strcmp(s->name, name) == 0)
            return s;
    }
    ck_abort_msg("no stream %s", name);
    return NULL;
}

static const strata_memory_result *memory(const strata_results *r, const char *name)
{
    for (guint i = 0; i < r->memories->len; i++) {
        const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        if (strcmp(m->name, name) == 0)
            return m;
    }
    ck_abort_msg("no memory %s", name);
    return NULL;
}

/* 2^30 B / 16e9 B/s = 67.108864 ms, plus 1 us of latency. */
START_TEST(single_copy)
{
    strata_results *r = run_ok("strata-trace 1\n"
                               "alloc a 1GiB host\n"
                               "alloc b 1GiB hbm\n"
                               "copy b a\n",
                               "full", "1TB/s");
    double want = GIB / PCIE_BW + PCIE_LAT;
    ck_assert_msg(fabs(r->makespan_s - 0.067109864) < 1e-9, "makespan %.12g", r->makespan_s);
    assert_close(r->makespan_s, want, "makespan");
    ck_assert(!r->oom);
    ck_assert_uint_eq(r->ops, 3);
    const strata_link_result *l = &g_array_index(r->links, strata_link_result, 0);
    ck_assert_str_eq(l->name, "pcie");
    ck_assert_uint_eq(l->bytes, 1073741824u);
    assert_close(l->busy_s, want, "pcie busy");
    assert_close(stream(r, "main")->busy_s, want, "main busy");
    ck_assert(stream(r, "main")->stall_s == 0.0);
    ck_assert_uint_eq(memory(r, "hbm")->peak_allocated_bytes, 1073741824u);
    ck_assert_uint_eq(memory(r, "host")->peak_allocated_bytes, 1073741824u);
    /* the copy reads host's port and writes hbm's, each busy for the whole copy */
    ck_assert_uint_eq(memory(r, "host")->port_bytes, 1073741824u);
    ck_assert_uint_eq(memory(r, "hbm")->port_bytes, 1073741824u);
    assert_close(memory(r, "hbm")->port_busy_s, want, "hbm port busy");
    strata_results_free(r);
}
END_TEST

/* Two H2D copies on two streams share the 16 GB/s: each gets 8 GB/s, so both
 * end at 2 * 67.108864 ms + 1 us. */
START_TEST(two_copies_share_a_link)
{
    strata_results *r = run_ok("strata-trace 1\n"
                               "alloc a 1GiB host\nalloc b 1GiB hbm\n"
                               "alloc c 1GiB host\nalloc d 1GiB hbm\n"
                               "copy b a stream=s1\n"
                               "copy d c stream=s2\n",
                               "full", "1TB/s");
    assert_close(r->makespan_s, 2 * GIB / PCIE_BW + PCIE_LAT, "makespan");
    assert_close(stream(r, "s1")->busy_s, 2 * GIB / PCIE_BW + PCIE_LAT, "s1 busy");
    ck_assert_uint_eq(g_array_index(r->links, strata_link_result, 0).bytes, 2 * 1073741824ull);
    strata_results_free(r);
}
END_TEST

static const char H2D_D2H[] = "strata-trace 1\n"
                              "alloc a 1GiB host\nalloc b 1GiB hbm\n"
                              "alloc c 1GiB hbm\nalloc d 1GiB host\n"
                              "copy b a stream=h2d\n"
                              "copy d c stream=d2h\n";

/* Full duplex: each direction has its own 16 GB/s, so both end at 67.109864 ms. */
START_TEST(full_duplex_directions_are_independent)
{
    strata_results *r = run_ok(H2D_D2H, "full", "1TB/s");
    assert_close(r->makespan_s, GIB / PCIE_BW + PCIE_LAT, "makespan");
    assert_close(g_array_index(r->links, strata_link_result, 0).busy_s, GIB / PCIE_BW + PCIE_LAT, "busy");
    strata_results_free(r);
}
END_TEST

/* A copy inside hbm reads and writes hbm's port: 2 * 2^30 B / 1e12 B/s. */
START_TEST(copy_inside_a_memory)
{
    strata_results *r = run_ok("strata-trace 1\nalloc a 512MiB\nalloc b 512MiB\ncopy b a\n", "full", "1TB/s");
    assert_close(r->makespan_s, 2 * (GIB / 2) / 1e12, "makespan");
    ck_assert_uint_eq(g_array_index(r->links, strata_link_result, 0).bytes, 0);
    ck_assert_uint_eq(memory(r, "hbm")->port_bytes, 2 * (512ull << 20));
    strata_results_free(r);
}
END_TEST

/* Flops bound: 1e12 flops at 100 TFLOP/s = 10 ms (operands 1 MiB / 1 TB/s = 1 us). */
START_TEST(compute_bound_by_flops)
{
    strata_results *r = run_ok("strata-trace 1\nalloc x 1MiB\ncompute mm flops=1e12 in=x\n", "full", "1TB/s");
    assert_close(r->makespan_s, 0.010, "makespan");
    const strata_compute_result *c = &g_array_index(r->compute, strata_compute_result, 0);
    assert_close(c->busy_s, 0.010, "core busy");
    assert_close(c->flops, 1e12, "flops");
    strata_results_free(r);
}
END_TEST

/* Runs whose makespan alone is derived by hand, at hbm 1 TB/s. */
static const struct makespan_case {
    const char *what, *trace, *duplex;
    double makespan_s;
} makespan_cases[] = {
    /* Half duplex: the two directions share 16 GB/s: 2 * 67.108864 ms + 1 us. */
    {"half duplex directions share", H2D_D2H, "half", 2 * GIB / PCIE_BW + PCIE_LAT},
    /* Bytes bound: 1e6 flops take 10 ns, but in=x (512 MiB) and out=y (512 MiB)
     * move 2^30 B at 1 TB/s = 1.073741824 ms. */
    {"compute bound by bytes", "strata-trace 1\nalloc x 512MiB\nalloc y 512MiB\ncompute mm flops=1e6 in=x out=y\n",
     "full", GIB / 1e12},
    /* The first operand is bf16: 1e12 flops at 200 TFLOP/s = 5 ms. time= wins over both. */
    {"compute dtype peak and time",
     "strata-trace 1\nalloc x 1MiB dtype=bf16\ncompute mm flops=1e12 in=x\ncompute fixed flops=1e15 in=x time=2ms\n",
     "full", 0.005 + 0.002},
};

START_TEST(makespan_by_hand)
{
    const struct makespan_case *k = &makespan_cases[_i];
    strata_results *r = run_ok(k->trace, k->duplex, "1TB/s");
    assert_close(r->makespan_s, k->makespan_s, k->what);
    strata_results_free(r);
}
END_TEST

/* Beside a copy. hbm's port is 32 GB/s. Alone, a compute reading 1 GiB takes
 * 2^30 / 32e9 = 33.554432 ms. Beside a 1 GiB H2D copy (16 GB/s by pcie, also
 * through hbm's port) the port is shared max-min: 16 GB/s each, so the compute
 * takes ~67.108864 ms (it has the port alone for the copy's first 1 us) and the
 * copy is unchanged at 67.109864 ms. */
START_TEST(compute_beside_a_copy)
{
    strata_results *alone = run_ok("strata-trace 1\nalloc x 1GiB\ncompute k in=x\n", "full", "32GB/s");
    assert_close(alone->makespan_s, GIB / 32e9, "alone");
    strata_results_free(alone);
}
END_TEST

START_TEST(compute_shares_the_port_with_a_copy)
{
    strata_results *r = run_ok("strata-trace 1\nalloc x 1GiB\nalloc a 1GiB host\nalloc b 1GiB\n"
                               "copy b a stream=dma\n"
                               "compute k in=x stream=main\n",
                               "full", "32GB/s");
    assert_close(r->makespan_s, GIB / PCIE_BW + PCIE_LAT, "makespan");
    assert_close(stream(r, "main")->busy_s, GIB / 16e9, "compute");
    /* hbm's port carried the copy's 1 GiB and the compute's 1 GiB */
    ck_assert_uint_eq(memory(r, "hbm")->port_bytes, 2 * 1073741824ull);
    assert_close(stream(r, "dma")->busy_s, GIB / PCIE_BW + PCIE_LAT, "copy");
    strata_results_free(r);
}
END_TEST

/* After a copy through record/wait: main waits 67.109864 ms, then computes
 * 1e12 flops for 10 ms. */
START_TEST(compute_after_copy_record_wait)
{
    strata_results *r = run_ok("strata-trace 1\n"
                               "alloc a 1GiB host\nalloc b 1GiB\n"
                               "copy b a stream=dma\n"
                               "record loaded stream=dma\n"
                               "wait loaded stream=main\n"
                               "compute k flops=1e12 stream=main\n",
                               "full", "1TB/s");
    double copy = GIB / PCIE_BW + PCIE_LAT;
    assert_close(r->makespan_s, copy + 0.010, "makespan");
    assert_close(stream(r, "main")->stall_s, copy, "main stall");
    assert_close(stream(r, "main")->busy_s, 0.010, "main busy");
    assert_close(stream(r, "dma")->busy_s, copy, "dma busy");
    strata_results_free(r);
}
END_TEST

/* A wait refers to the latest record before it in file order: the second
 * record (after the second copy) is not awaited by the first wait. */
START_TEST(wait_refers_to_latest_record_in_file_order)
{
    strata_results *r = run_ok("strata-trace 1\n"
                               "alloc a 1GiB host\nalloc b 1GiB\n"
                               "copy b a stream=dma\n"
                               "record e stream=dma\n"
                               "wait e stream=main\n"
                               "compute k1 flops=1e12 stream=main\n"
                               "copy b a stream=dma\n"
                               "record e stream=dma\n"
                               "wait e stream=main\n"
                               "compute k2 flops=1e12 stream=main\n",
                               "full", "1TB/s");
    /* k1 runs during the second copy; k2 after it. */
    double copy = GIB / PCIE_BW + PCIE_LAT;
    assert_close(r->makespan_s, 2 * copy + 0.010, "makespan");
    assert_close(stream(r, "main")->stall_s, copy + (copy - 0.010), "stall");
    strata_results_free(r);
}
END_TEST

/* Two streams computing on one unit share its 100 TFLOP/s: 2e12 flops in all
 * take 20 ms, each stream busy the whole time. */
START_TEST(computes_share_a_unit)
{
    strata_results *r = run_ok("strata-trace 1\ncompute a flops=1e12 stream=s1\ncompute b flops=1e12 stream=s2\n",
                               "full", "1TB/s");
    assert_close(r->makespan_s, 0.020, "makespan");
    assert_close(stream(r, "s1")->busy_s, 0.020, "s1");
    assert_close(g_array_index(r->compute, strata_compute_result, 0).busy_s, 0.020, "core busy");
    strata_results_free(r);
}
END_TEST

/* The unit's overhead is added to every compute that has no time=:
 * 1e12 / 100e12 + 5 us; 1 ms for time=1ms. */
START_TEST(compute_overhead)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load_data("[hardware]\nname = ov\nsource = test\n"
                                        "[memory hbm]\nkind = device\ncapacity = 1GiB\nbandwidth = 1TB/s\n"
                                        "[compute core]\nflops = 100TFLOP/s\noperands = hbm\noverhead = 5us\n",
                                        "ov.ini", NULL, &err);
    ck_assert_msg(hw != NULL, "%s", err ? err->message : "?");
    strata_results *r = run_text(hw, "strata-trace 1\ncompute a flops=1e12\ncompute b time=1ms\n", &err);
    ck_assert_msg(r != NULL, "%s", err ? err->message : "?");
    assert_close(r->makespan_s, 0.010 + 5e-6 + 0.001, "makespan");
    strata_results_free(r);
    strata_hw_free(hw);
}
END_TEST

/* hbm 1 GiB: 768 MiB fits, 512 MiB more does not: 256 MiB free, one block. */
START_TEST(out_of_memory)
{
    strata_hw *hw = make_hw("1GiB", "1TB/s", "full");
    GError *err = NULL;
    strata_results *r = run_text(hw,
                                 "strata-trace 1\n"
                                 "# a comment line\n"
                                 "alloc a 768MiB stream=s\n"
                                 "alloc a2 1MiB host stream=s\n"
                                 "alloc b 512MiB stream=s\n"
                                 "compute never flops=1e12 stream=s\n",
                                 &err);
    ck_assert_msg(r != NULL, "%s", err ? err->message : "?");
    ck_assert(r->oom);
    ck_assert_uint_eq(r->oom_info.op_index, 2);
    ck_assert_uint_eq(r->oom_info.line, 5);
    ck_assert_str_eq(r->oom_info.memory, "hbm");
    ck_assert_str_eq(r->oom_info.buffer, "b");
    ck_assert_str_eq(r->oom_info.stream, "s");
    ck_assert_uint_eq(r->oom_info.requested_bytes, 512ull << 20);
    ck_assert_uint_eq(r->oom_info.free_bytes, 256ull << 20);
    ck_assert_uint_eq(r->oom_info.largest_free_bytes, 256ull << 20);
    ck_assert_uint_eq(r->ops, 2);
    ck_assert(r->makespan_s == 0.0);
    strata_results_free(r);
    strata_hw_free(hw);
}
END_TEST

/* As memory_analysis() counts: w (an argument) is live at the first compute
 * and, never written, stays the caller's (no output); t is a temporary
 * (freed), o an output (allocated by the program, never freed). */
START_TEST(argument_output_temp_accounting)
{
    strata_results *r = run_ok("strata-trace 1\n"
                               "alloc w 100MiB tag=param\n"
                               "alloc x 10MiB tag=input\n"
                               "free x\n"
                               "compute c1 flops=1e9 in=w\n"
                               "alloc t 300MiB tag=temp\n"
                               "alloc o 50MiB tag=output\n"
                               "compute c2 flops=1e9 in=t out=o\n"
                               "free t\n",
                               "full", "1TB/s");
    const strata_memory_result *m = memory(r, "hbm");
    ck_assert_uint_eq(m->argument_bytes, 100ull << 20);
    ck_assert_uint_eq(m->output_bytes, 50ull << 20);
    ck_assert_uint_eq(m->alias_bytes, 0);
    ck_assert_uint_eq(m->temp_peak_bytes, 300ull << 20);
    ck_assert_uint_eq(m->jax_total_bytes, 450ull << 20);
    ck_assert_uint_eq(m->peak_allocated_bytes, 450ull << 20);
    strata_results_free(r);
}
END_TEST

/* A route through an intermediate memory uses its port, and each link once:
 * host -> hbm -> vmem, bottleneck 16 GB/s, latencies 1 us + 0.5 us. */
START_TEST(route_through_hbm)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load_data(
        "[hardware]\nname = three\nsource = test\n"
        "[memory hbm]\nkind = device\ncapacity = 1GiB\nbandwidth = 1TB/s\n"
        "[memory host]\nkind = host\ncapacity = 4GiB\nbandwidth = 100GB/s\n"
        "[memory vmem]\nkind = onchip\ncapacity = 256MiB\nbandwidth = 4TB/s\n"
        "[link pcie]\nbetween = host hbm\nbandwidth = 16GB/s\nlatency = 1us\nduplex = full\n"
        "[link dma]\nbetween = hbm vmem\nbandwidth = 100GB/s\nlatency = 500ns\nduplex = full\n"
        "[compute core]\nflops = 1TFLOP/s\noperands = vmem\n",
        "three.ini", NULL, &err);
    ck_assert_msg(hw != NULL, "%s", err ? err->message : "?");
    strata_results *r = run_text(hw, "strata-trace 1\nalloc a 128MiB host\nalloc v 128MiB vmem\ncopy v a\n", &err);
    ck_assert_msg(r != NULL, "%s", err ? err->message : "?");
    assert_close(r->makespan_s, 134217728.0 / 16e9 + 1.5e-6, "makespan");
    ck_assert_uint_eq(g_array_index(r->links, strata_link_result, 0).bytes, 134217728u);
    ck_assert_uint_eq(g_array_index(r->links, strata_link_result, 1).bytes, 134217728u);
    strata_results_free(r);
    strata_hw_free(hw);
}
END_TEST

static void expect_input_error(const char *trace, const char *needle)
{
    strata_hw *hw = make_hw("2GiB", "1TB/s", "full");
    GError *err = NULL;
    strata_results *r = run_text(hw, trace, &err);
    ck_assert_msg(r == NULL, "expected an error");
    ck_assert(err != NULL);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_msg(strstr(err->message, needle) != NULL, "message '%s' lacks '%s'", err->message, needle);
    g_error_free(err);
    strata_hw_free(hw);
}

START_TEST(unknown_memory_is_an_error_with_line)
{
    expect_input_error("strata-trace 1\nalloc a 1MiB\nalloc b 1MiB sram\n", ".trace:3: expected a memory of engine-test.ini (one of hbm, host), got 'sram'");
}
END_TEST

START_TEST(unknown_unit_is_an_error_with_line)
{
    expect_input_error("strata-trace 1\ncompute k flops=1 unit=tpu\n", ".trace:2: expected a compute unit of engine-test.ini (one of core), got 'tpu'");
}
END_TEST

START_TEST(spans_are_recorded)
{
    trace_case tc = trace_case_open("2GiB",
                                    "strata-trace 1\nalloc a 1GiB host\nalloc b 1GiB\ncopy b a\nfree a\n");
    GError *err = NULL;
    strata_engine_options opt;
    strata_engine_options_init(&opt);
    opt.record_spans = true;
    opt.check_allocators = true;
    strata_results *r = NULL;
    ck_assert(strata_engine_run(tc.hw, tc.src, &opt, &r, &err));
    ck_assert_uint_eq(r->spans->len, 4);
    const strata_op_span *copy = &g_array_index(r->spans, strata_op_span, 2);
    ck_assert_int_eq(copy->kind, STRATA_OP_COPY);
    ck_assert_uint_eq(copy->line, 4);
    assert_close(copy->end_s - copy->start_s, GIB / PCIE_BW + PCIE_LAT, "copy span");
    ck_assert_int_eq(copy->src_memory, 1);
    ck_assert_int_eq(copy->dst_memory, 0);
    ck_assert_uint_eq(copy->route, 0); /* the first route used: host -> hbm, over pcie (link 0) */
    uint32_t n_links = 0;
    const uint32_t *links = strata_results_route_links(r, copy->route, &n_links);
    ck_assert_uint_eq(n_links, 1);
    ck_assert_uint_eq(links[0], 0);
    ck_assert_uint_eq(copy->device, 0);
    ck_assert_uint_eq(r->mem_samples->len, 3);
    const strata_mem_sample *last = &g_array_index(r->mem_samples, strata_mem_sample, 2);
    ck_assert_int_eq(last->delta, -(int64_t)1073741824);
    assert_close(last->t_s, GIB / PCIE_BW + PCIE_LAT, "free time");
    trace_case_close(&tc, r);
}
END_TEST

/* A stream whose ops come late makes the feed read the other stream's ops
 * ahead into its queue (engine_feed.c): the first 1,024 held whole, the
 * rest on the queue's tape (invariant 4). The late stream asks again at 1
 * and 2 us, when the default stream has taken some of its whole ops: what
 * it reads then must go behind those on the tape. The default stream runs
 * its 3,000 ops in program order, one after the other: its k-th over
 * [k, k + 1) us; the late stream's three over [0, 1), [1, 2), [2, 3) us. */
START_TEST(queued_ops_spill_in_order)
{
    enum { N = 3000 };
    GString *t = g_string_new("strata-trace 1\n");
    for (int k = 0; k < N; k++) {
        if (k == 1500 || k == 2000)
            g_string_append_printf(t, "compute late%d time=1us stream=late\n", k);
        g_string_append_printf(t, "compute c%d time=1us\n", k);
    }
    g_string_append(t, "compute last time=1us stream=late\n");
    trace_case tc = trace_case_open("2GiB", t->str);
    GError *err = NULL;
    strata_engine_options opt;
    strata_engine_options_init(&opt);
    opt.record_spans = true;
    strata_results *r = NULL;
    ck_assert_msg(strata_engine_run(tc.hw, tc.src, &opt, &r, &err), "%s", err ? err->message : "?");
    ck_assert_uint_eq(r->spans->len, N + 3);
    assert_close(r->makespan_s, N * 1e-6, "makespan");
    uint32_t main_stream = UINT32_MAX, seen = 0, late = 0;
    for (guint i = 0; i < r->streams->len; i++)
        if (strcmp(g_array_index(r->streams, strata_stream_result, i).name, "late") != 0)
            main_stream = i;
    uint64_t last_line = 0;
    for (guint i = 0; i < r->spans->len; i++) {
        const strata_op_span *sp = &g_array_index(r->spans, strata_op_span, i);
        if (sp->stream != main_stream) {
            assert_close(sp->start_s, late * 1e-6, "late start");
            late++;
            continue;
        }
        ck_assert_uint_gt(sp->line, last_line); /* program order */
        last_line = sp->line;
        assert_close(sp->start_s, seen * 1e-6, "start");
        assert_close(sp->end_s, (seen + 1) * 1e-6, "end");
        seen++;
    }
    ck_assert_uint_eq(seen, N);
    ck_assert_uint_eq(late, 3);
    trace_case_close(&tc, r);
    g_string_free(t, TRUE);
}
END_TEST

/* `option allocator.max_split_size` reaches the caching allocator and is
 * ignored by memories whose allocator lacks the key; `allocator.min_block`
 * (the buddy allocator's) is passed over by the caching one. */
START_TEST(trace_options_configure_allocators)
{
    trace_case tc = trace_case_open("2GiB",
                                    "strata-trace 1\noption allocator.max_split_size=200MiB\n"
                                    "option allocator.min_block=4096\nalloc a 1MiB\n");
    GError *err = NULL;
    strata_engine_options opt;
    strata_engine_options_init(&opt);
    opt.allocator = "caching";
    strata_results *r = NULL;
    ck_assert_msg(strata_engine_run(tc.hw, tc.src, &opt, &r, &err), "%s", err ? err->message : "?");
    const char *spec = memory(r, "hbm")->allocator;
    ck_assert_msg(strstr(spec, "caching") && strstr(spec, "max_split_size=200MiB"), "%s", spec);
    trace_case_close(&tc, r);
}
END_TEST

/* The offline planner gets every lifetime before the run: a and b never
 * overlap, so they share an address and the peak reserved is 256 MiB. */
START_TEST(offline_planner_gets_lifetimes)
{
    trace_case tc = trace_case_open("2GiB",
                                    "strata-trace 1\nalloc a 256MiB\ncompute k1 in=a\nfree a\n"
                                    "alloc b 256MiB\ncompute k2 in=b\nfree b\n");
    GError *err = NULL;
    strata_engine_options opt;
    strata_engine_options_init(&opt);
    opt.allocator = "offline";
    opt.check_allocators = true;
    strata_results *r = NULL;
    ck_assert_msg(strata_engine_run(tc.hw, tc.src, &opt, &r, &err), "%s", err ? err->message : "?");
    ck_assert(!r->oom);
    ck_assert_uint_eq(memory(r, "hbm")->peak_allocated_bytes, 256ull << 20);
    ck_assert_uint_eq(memory(r, "hbm")->peak_reserved_bytes, 256ull << 20);
    assert_close(r->makespan_s, 2 * (256.0 * 1048576) / 1e12, "makespan");
    trace_case_close(&tc, r);
}
END_TEST

/* XLA's buffer assignment plans one program across its streams: a, c (main)
 * and b, d (stream s1; events order each alloc after the one before) fill
 * the 1 GiB memory in four 256 MiB blocks at offsets 0, 256, 512, 768 MiB
 * when placed online; freeing a and c leaves two
 * 256 MiB holes, so best-fit finds no room for e (512 MiB) although only
 * 512 MiB are live. The plan keeps b and d together and gives e the space of
 * a and c: its height is the live peak, b + d + e = 1 GiB, the capacity. The
 * offline planner, which trusts program order on one stream only, refuses. */
START_TEST(xla_plans_one_program_across_streams)
{
    /* one SimGrid run per process: the loop's _i runs each in a fork of its own */
    /* the last: xla in 768 MiB, below its plan's 1 GiB: out of memory, the
     * plan's height said */
    static const char *const allocators[] = {"xla", "best-fit", "offline", "xla"};
    trace_case tc = trace_case_open(_i == 3 ? "768MiB" : "1GiB",
                                    "strata-trace 1\nalloc a 256MiB\nrecord ea\nwait ea stream=s1\n"
                                    "alloc b 256MiB stream=s1\nrecord eb stream=s1\nwait eb\n"
                                    "alloc c 256MiB\nrecord ec\nwait ec stream=s1\n"
                                    "alloc d 256MiB stream=s1\nrecord ed stream=s1\nwait ed\n"
                                    "compute k1 in=a,b,c,d\nfree a\nfree c\nalloc e 512MiB\n"
                                    "compute k2 in=b,d,e\nfree b\nfree d\nfree e\n");
    GError *err = NULL;
    strata_engine_options opt;
    strata_engine_options_init(&opt);
    opt.allocator = allocators[_i];
    opt.check_allocators = true;
    strata_results *r = NULL;
    bool ok = strata_engine_run(tc.hw, tc.src, &opt, &r, &err);
    if (_i == 2) {
        ck_assert(!ok);
        ck_assert_msg(strstr(err->message, "one stream allocates"), "%s", err->message);
        g_error_free(err);
    } else {
        ck_assert_msg(ok, "%s", err ? err->message : "?");
        ck_assert_int_eq(r->oom, _i == 1 || _i == 3);
        ck_assert_uint_eq(r->oom_info.planned_bytes, _i == 3 ? 1ull << 30 : 0);
    }
    if (_i == 0) {
        ck_assert_uint_eq(memory(r, "hbm")->peak_allocated_bytes, 1ull << 30);
        ck_assert_uint_eq(memory(r, "hbm")->peak_reserved_bytes, 1ull << 30);
    }
    trace_case_close(&tc, r);
}
END_TEST

/* Two copies of unequal route latency on one link (issue 39): a (host)
 * -- ab (1 TB/s, 9 us) -- b -- bd (10 GB/s, 1 us) -- d, every port 1 TB/s.
 * Copy a -> d (route a, b, d: 10 us) and copy b -> d (1 us) of 1 MB each
 * start together and share bd's direction b -> d (10,000 B/us).
 * Equal sharing (default): b -> d alone from 1 to 10 us moves 90,000 B;
 * then 5,000 B/us each: its other 910,000 B take 182 us, so it ends at
 * 192 us, a -> d having moved 910,000 B; a -> d's last 90,000 B alone take
 * 9 us: 201 us (bd busy without a gap from 1 us: 2 MB / 10 GB/s + 1 us).
 * flow_sharing = latency (CM02: shares in inverse proportion to the route
 * latency, 1 us : 10 us gives 10/11 : 1/11): b -> d's 910,000 B at
 * 10/11 x 10,000 B/us take 100.1 us (ends at 110.1 us) while a -> d moves
 * 91,000 B; its other 909,000 B alone take 90.9 us: 201 us. */
static const char UNEQUAL_HW[] =
    "[hardware]\nname = unequal\nsource = round numbers\n%s"
    "[memory a]\nkind = host\ncapacity = 1GiB\nbandwidth = 1TB/s\n"
    "[memory b]\nkind = device\ncapacity = 1GiB\nbandwidth = 1TB/s\n"
    "[memory d]\nkind = device\ncapacity = 1GiB\nbandwidth = 1TB/s\n"
    "[link ab]\nbetween = a b\nbandwidth = 1TB/s\nlatency = 9us\n"
    "[link bd]\nbetween = b d\nbandwidth = 10GB/s\nlatency = 1us\n";

START_TEST(unequal_latencies_share_a_link)
{
    char *text = g_strdup_printf(UNEQUAL_HW, _i == 1 ? "flow_sharing = latency\n" : "");
    GError *err = NULL;
    strata_hw *hw = strata_hw_load_data(text, "unequal.ini", NULL, &err);
    ck_assert_msg(hw != NULL, "hw: %s", err ? err->message : "?");
    g_free(text);
    strata_results *r = run_text(hw,
                                 "strata-trace 1\n"
                                 "alloc x 1MB a\nalloc y 1MB b\nalloc z 1MB d\nalloc w 1MB d\n"
                                 "copy z x stream=far\n"
                                 "copy w y stream=near\n",
                                 &err);
    ck_assert_msg(r != NULL, "run: %s", err ? err->message : "?");
    ck_assert_uint_eq(memory(r, "d")->port_bytes, 2000000u);
    assert_close(stream(r, "far")->busy_s, 201e-6, "a -> d");
    assert_close(stream(r, "near")->busy_s, _i == 0 ? 192e-6 : 110.1e-6, "b -> d");
    strata_results_free(r);
    strata_hw_free(hw);
}
END_TEST

static Suite *engine_suite(void)
{
    Suite *s = suite_create("engine");
    TCase *t = tcase_create("analytical");
    tcase_add_test(t, single_copy);
    tcase_add_test(t, two_copies_share_a_link);
    tcase_add_test(t, full_duplex_directions_are_independent);
    tcase_add_test(t, copy_inside_a_memory);
    tcase_add_test(t, compute_bound_by_flops);
    tcase_add_loop_test(t, makespan_by_hand, 0, G_N_ELEMENTS(makespan_cases));
    tcase_add_test(t, compute_beside_a_copy);
    tcase_add_test(t, compute_shares_the_port_with_a_copy);
    tcase_add_test(t, compute_after_copy_record_wait);
    tcase_add_test(t, wait_refers_to_latest_record_in_file_order);
    tcase_add_test(t, route_through_hbm);
    tcase_add_test(t, computes_share_a_unit);
    tcase_add_loop_test(t, unequal_latencies_share_a_link, 0, 2);
    tcase_add_test(t, compute_overhead);
    suite_add_tcase(s, t);
    TCase *m = tcase_create("memory");
    tcase_add_test(m, out_of_memory);
    tcase_add_test(m, argument_output_temp_accounting);
    tcase_add_test(m, spans_are_recorded);
    tcase_add_test(m, queued_ops_spill_in_order);
    tcase_add_test(m, trace_options_configure_allocators);
    tcase_add_test(m, offline_planner_gets_lifetimes);
    tcase_add_loop_test(m, xla_plans_one_program_across_streams, 0, 4);
    suite_add_tcase(s, m);
    TCase *e = tcase_create("errors");
    tcase_add_test(e, unknown_memory_is_an_error_with_line);
    tcase_add_test(e, unknown_unit_is_an_error_with_line);
    suite_add_tcase(s, e);
    return s;
}

int main(void)
{
    return strata_test_main(engine_suite());
}
