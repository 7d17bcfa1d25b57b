/*
 * test_bind.c: the binder (bind/bind.h) on traces worked out by hand.
 *
 * HW below: memories hbm (0, the default) and host (1), linked by pcie; a
 * unit `core` (0) reading hbm; sram (2) has no link, so a copy to or from it
 * has no route. Every expected index is derived in the comment beside it.
 */
#include <glib/gstdio.h>
#include <string.h>
#include "core/error.h"
#include "testutil.h"
#include "bind/bind.h"
#include "trace/reader.h"

static const char HW[] =
    "[hardware]\nname = bind-test\nsource = round numbers for hand-derived tests\n"
    "[memory hbm]\nkind = device\ncapacity = 1GiB\nbandwidth = 1TB/s\n"
    "[memory host]\nkind = host\ncapacity = 1GiB\nbandwidth = 100GB/s\n"
    "[memory sram]\nkind = onchip\ncapacity = 1MiB\nbandwidth = 1TB/s\n"
    "[link pcie]\nbetween = host hbm\nbandwidth = 16GB/s\n"
    "[compute core]\nflops = 100TFLOP/s\noperands = hbm\n";

static const char HW_NO_UNIT[] =
    "[hardware]\nname = bind-test\nsource = round numbers for hand-derived tests\n"
    "[memory hbm]\nkind = device\ncapacity = 1GiB\nbandwidth = 1TB/s\n";

typedef struct fixture {
    strata_hw *hw;
    char *path;
    strata_source *src;
    strata_binder *binder;
} fixture;

static fixture open_bound(const char *hw_text, const char *trace, const char *default_memory)
{
    fixture f = {0};
    GError *err = NULL;
    if (hw_text) {
        f.hw = strata_hw_load_data(hw_text, "bind.ini", NULL, &err);
        ck_assert_msg(f.hw != NULL, "hw: %s", err ? err->message : "?");
    }
    f.path = strata_test_write_temp("bind-XXXXXX.trace", trace);
    f.src = strata_trace_open(f.path, &err);
    ck_assert_msg(f.src != NULL, "trace: %s", err ? err->message : "?");
    strata_bind_options opt = {.hw = f.hw, .default_memory = default_memory};
    f.binder = strata_binder_new(f.src, &opt);
    return f;
}

static void close_bound(fixture *f)
{
    strata_binder_free(f->binder);
    strata_source_free(f->src);
    strata_hw_free(f->hw);
    g_remove(f->path);
    g_free(f->path);
}

static const strata_bound_op *next_op(fixture *f)
{
    const strata_bound_op *op = NULL;
    GError *err = NULL;
    int got = strata_binder_next(f->binder, &op, &err);
    ck_assert_msg(got == 1, "next: %d %s", got, err ? err->message : "");
    return op;
}

/* The error the binder reports for the trace's last op. */
static char *bind_error(const char *hw_text, const char *trace)
{
    fixture f = open_bound(hw_text, trace, NULL);
    const strata_bound_op *op = NULL;
    GError *err = NULL;
    int got;
    while ((got = strata_binder_next(f.binder, &op, &err)) == 1)
        ;
    ck_assert_int_eq(got, -1);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    char *msg = g_strdup(err->message);
    g_error_free(err);
    close_bound(&f);
    return msg;
}

static const char TRACE[] = "strata-trace 1\n"
                            "option allocator.memory_fraction=0.5\n"
                            "alloc a 1MiB host dtype=bf16\n"
                            "alloc b 2MiB stream=s2 dtype=f32\n"
                            "copy b a bytes=512KiB stream=s2\n"
                            "compute k flops=1e9 in=b out=a\n"
                            "record e stream=s2\n"
                            "wait e\n"
                            "free a\n"
                            "release host\n"
                            "release\n";

#define N STRATA_BIND_NONE
#define MIB (UINT64_C(1) << 20)

/* What every op of TRACE binds to against HW: hbm = 0, host = 1, sram = 2;
 * stream main = 0, s2 = 1; buffers a = 0, b = 1; event e = 0. */
typedef struct expected { /* all 64-bit: no padding, so memcmp compares the values */
    uint64_t line, stream, buf, src, bytes, memory, src_memory, dst_memory, route, unit, dtype, event, event_seq;
} expected;

static const expected TRACE_BOUND[] = {
    /* alloc a: line 3 (the option is passed over), host */
    {3, 0, 0, 0, MIB, 1, N, N, N, N, STRATA_DTYPE_BF16, 0, 0},
    /* alloc b: unnamed memory = the model's default (hbm) */
    {4, 1, 1, 0, 2 * MIB, 0, N, N, N, N, STRATA_DTYPE_F32, 0, 0},
    /* copy b <- a: host to hbm, route 0 (the first pair a copy uses), 512 KiB */
    {5, 1, 1, 0, MIB / 2, N, 1, 0, 0, N, STRATA_DTYPE_NONE, 0, 0},
    /* compute: unit core reading hbm; dtype of in=b; 2 + 1 MiB of operands */
    {6, 0, 0, 0, 3 * MIB, 0, N, N, N, 0, STRATA_DTYPE_F32, 0, 0},
    /* record e on s2: its first record; wait e on main awaits it */
    {7, 1, 0, 0, 0, N, N, N, N, N, STRATA_DTYPE_NONE, 0, 1},
    {8, 0, 0, 0, 0, N, N, N, N, N, STRATA_DTYPE_NONE, 0, 1},
    /* free a: its memory, size and dtype */
    {9, 0, 0, 0, MIB, 1, N, N, N, N, STRATA_DTYPE_BF16, 0, 0},
    /* release host; release: every memory */
    {10, 0, 0, 0, 0, 1, N, N, N, N, STRATA_DTYPE_NONE, 0, 0},
    {11, 0, 0, 0, 0, N, N, N, N, N, STRATA_DTYPE_NONE, 0, 0},
};

static void assert_trace_bound(fixture *f)
{
    for (guint i = 0; i < G_N_ELEMENTS(TRACE_BOUND); i++) {
        const strata_bound_op *op = next_op(f);
        const expected *e = &TRACE_BOUND[i];
        expected got = {op->line, op->stream, op->buf, op->src, op->bytes, op->memory, op->src_memory,
                        op->dst_memory, op->route, op->unit, op->dtype, op->event, op->event_seq};
        ck_assert_uint_eq(op->index, i);
        ck_assert_msg(memcmp(&got, e, sizeof got) == 0,
                      "op %u: line %" G_GUINT64_FORMAT " stream %" G_GUINT64_FORMAT " buf %" G_GUINT64_FORMAT
                      " src %" G_GUINT64_FORMAT " bytes %" G_GUINT64_FORMAT " memory %" G_GUINT64_FORMAT
                      " %" G_GUINT64_FORMAT "->%" G_GUINT64_FORMAT " route %" G_GUINT64_FORMAT " unit %"
                      G_GUINT64_FORMAT " dtype %" G_GUINT64_FORMAT " event %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
                      i, got.line, got.stream, got.buf, got.src, got.bytes, got.memory,
                      got.src_memory, got.dst_memory, got.route, got.unit, got.dtype, got.event, got.event_seq);
        if (op->kind == STRATA_OP_COMPUTE) {
            ck_assert(op->n_ins == 1 && op->ins[0] == 1 && op->n_outs == 1 && op->outs[0] == 0);
            ck_assert(op->flops == 1e9);
        }
        if (op->kind == STRATA_OP_COPY) {
            const strata_hop *hops = NULL;
            uint32_t n_hops = 0;
            strata_binder_route_hops(f->binder, op->route, &hops, &n_hops);
            ck_assert_uint_eq(n_hops, 1); /* pcie */
        }
    }
    const strata_bound_op *end = NULL;
    ck_assert_int_eq(strata_binder_next(f->binder, &end, NULL), 0);
    ck_assert_uint_eq(strata_binder_op_count(f->binder), 9);
    ck_assert_str_eq(strata_checker_option(strata_binder_checker(f->binder), "allocator.memory_fraction"), "0.5");
}

START_TEST(indices_against_the_model_and_again_after_rewind)
{
    fixture f = open_bound(HW, TRACE, NULL);
    assert_trace_bound(&f);
    ck_assert(strata_binder_rewind(f.binder, NULL));
    assert_trace_bound(&f);
    ck_assert_uint_eq(strata_binder_memory_count(f.binder), 3);
    ck_assert_str_eq(strata_binder_memory_name(f.binder, 2), "sram");
    ck_assert_str_eq(strata_binder_unit_name(f.binder, 0), "core");
    close_bound(&f);
}
END_TEST

START_TEST(without_a_model_names_in_order_of_first_use)
{
    fixture f = open_bound(NULL,
                           "strata-trace 1\nalloc x 4096\nalloc y 4096 host\nalloc z 4096 dram\n"
                           "compute k in=x\ncompute j unit=tc\ncompute l\ncopy y x\n",
                           "dram");
    /* x: the default name, dram = 0; y: host = 1; z: dram again */
    ck_assert_uint_eq(next_op(&f)->memory, 0);
    ck_assert_uint_eq(next_op(&f)->memory, 1);
    ck_assert_uint_eq(next_op(&f)->memory, 0);
    /* k: no unit= and none yet: "compute" = 0; j: tc = 1; l: the first unit, 0 */
    const strata_bound_op *op = next_op(&f);
    ck_assert_uint_eq(op->unit, 0);
    ck_assert_uint_eq(op->memory, STRATA_BIND_NONE); /* no model: no operand memory */
    ck_assert_uint_eq(next_op(&f)->unit, 1);
    ck_assert_uint_eq(next_op(&f)->unit, 0);
    /* copy y <- x: dram (0) to host (1); no model, no route */
    op = next_op(&f);
    ck_assert_uint_eq(op->src_memory, 0);
    ck_assert_uint_eq(op->dst_memory, 1);
    ck_assert_uint_eq(op->route, STRATA_BIND_NONE);
    ck_assert_uint_eq(strata_binder_memory_count(f.binder), 2);
    ck_assert_str_eq(strata_binder_memory_name(f.binder, 0), "dram");
    ck_assert_str_eq(strata_binder_unit_name(f.binder, 0), "compute");
    ck_assert_str_eq(strata_binder_unit_name(f.binder, 1), "tc");
    /* asking for a memory by name makes it: host exists, hbm is new */
    ck_assert_int_eq(strata_binder_memory(f.binder, "host"), 1);
    ck_assert_int_eq(strata_binder_memory(f.binder, "hbm"), 2);
    close_bound(&f);
}
END_TEST

START_TEST(time_without_a_unit_binds_to_none)
{
    fixture f = open_bound(HW_NO_UNIT, "strata-trace 1\ncompute k time=1ms\n", NULL);
    const strata_bound_op *op = next_op(&f);
    ck_assert_uint_eq(op->unit, STRATA_BIND_NONE);
    ck_assert(op->has_time && op->time_s == 1e-3);
    close_bound(&f);
}
END_TEST

START_TEST(errors_name_the_line_and_what_was_expected)
{
    char *m = bind_error(HW, "strata-trace 1\nalloc a 4096\nalloc b 4096 vram\n");
    ck_assert_msg(g_str_has_suffix(m, ":3: expected a memory of bind.ini (one of hbm, host, sram), got 'vram'"),
                  "%s", m);
    g_free(m);
    m = bind_error(HW, "strata-trace 1\ncompute k unit=tpu\n");
    ck_assert_msg(g_str_has_suffix(m, ":2: expected a compute unit of bind.ini (one of core), got 'tpu'"), "%s", m);
    g_free(m);
    m = bind_error(HW, "strata-trace 1\nalloc a 4096 sram\nalloc b 4096\ncopy b a\n");
    ck_assert_msg(strstr(m, ":4: copy b <- a: ") && strstr(m, "no route from memory 'sram' to memory 'hbm'"), "%s",
                  m);
    g_free(m);
    m = bind_error(HW_NO_UNIT, "strata-trace 1\ncompute k flops=1\n");
    ck_assert_msg(strstr(m, ":2: expected bind.ini to declare a [compute NAME] unit for compute 'k'"), "%s", m);
    g_free(m);
    /* the checker's own errors come through unchanged */
    m = bind_error(NULL, "strata-trace 1\nfree a\n");
    ck_assert_msg(strstr(m, ":2: expected a live buffer"), "%s", m);
    g_free(m);
}
END_TEST

/* Route ids are dense, handed out on a pair's first use, the same after a
 * rewind; each resolves to the model's hops; every op carries its device
 * (device=, set by the SPMD expansion; 0 on one device), and each stream
 * the device of its first op. On test-ring8: hbm@D is memory D. */
START_TEST(routes_dense_on_first_use_and_devices)
{
    static const char trace[] = "strata-trace 1\n"
                                "alloc a 1MiB hbm@0 device=0\n"
                                "alloc b 1MiB hbm@1 stream=s1 device=1\n"
                                "alloc c 1MiB hbm@5 stream=s5 device=5\n"
                                "alloc d 1MiB hbm@0 device=0\n"
                                "copy b a stream=s1 device=1\n"      /* route 0: hbm@0 -> hbm@1 */
                                "copy c b stream=s5 device=5\n"      /* route 1: hbm@1 -> hbm@5 */
                                "copy b a stream=s1 device=1\n"      /* route 0 again */
                                "copy d a device=0\n"                /* route 2: inside hbm@0, no hops */
                                "copy a c device=0\n";               /* route 3: hbm@5 -> hbm@0 */
    fixture f = {0};
    GError *err = NULL;
    f.hw = strata_test_load_hw("test-ring8", NULL);
    f.path = strata_test_write_temp("bind-XXXXXX.trace", trace);
    f.src = strata_trace_open(f.path, &err);
    ck_assert_msg(f.src != NULL, "trace: %s", err ? err->message : "?");
    strata_bind_options opt = {.hw = f.hw};
    f.binder = strata_binder_new(f.src, &opt);
    static const uint32_t routes[] = {N, N, N, N, 0, 1, 0, 2, 3};
    static const uint32_t devices[] = {0, 1, 5, 0, 1, 5, 1, 0, 0};
    for (int pass = 0; pass < 2; pass++) {
        ck_assert(strata_binder_rewind(f.binder, &err));
        for (guint i = 0; i < G_N_ELEMENTS(routes); i++) {
            const strata_bound_op *op = next_op(&f);
            ck_assert_uint_eq(op->route, routes[i]);
            ck_assert_uint_eq(op->device, devices[i]);
        }
        ck_assert_uint_eq(strata_binder_route_count(f.binder), 4);
    }
    ck_assert_uint_eq(strata_binder_stream_device(f.binder, 0), 0); /* main */
    ck_assert_uint_eq(strata_binder_stream_device(f.binder, 1), 1); /* s1 */
    ck_assert_uint_eq(strata_binder_stream_device(f.binder, 2), 5); /* s5 */
    const uint32_t ends[4][2] = {{0, 1}, {1, 5}, {0, 0}, {5, 0}};
    for (uint32_t r = 0; r < 4; r++) {
        const strata_hop *hops = NULL, *want = NULL;
        uint32_t n = 0, n_want = 0;
        strata_binder_route_hops(f.binder, r, &hops, &n);
        ck_assert(strata_hw_route(f.hw, ends[r][0], ends[r][1], &want, &n_want, NULL));
        ck_assert_uint_eq(n, n_want);
        ck_assert(n == 0 || memcmp(hops, want, n * sizeof *hops) == 0);
    }
    ck_assert_uint_eq(strata_hw_memory(f.hw, 5)->device, 5);
    const strata_hop *none = NULL;
    uint32_t n_none = 1;
    strata_binder_route_hops(f.binder, N, &none, &n_none);
    ck_assert_uint_eq(n_none, 0);
    close_bound(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bind");
    TCase *tc = tcase_create("bind");
    tcase_add_test(tc, indices_against_the_model_and_again_after_rewind);
    tcase_add_test(tc, without_a_model_names_in_order_of_first_use);
    tcase_add_test(tc, time_without_a_unit_binds_to_none);
    tcase_add_test(tc, errors_name_the_line_and_what_was_expected);
    tcase_add_test(tc, routes_dense_on_first_use_and_devices);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
