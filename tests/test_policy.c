/*
 * test_policy.c: the policies (models/policy/) as rewrites of the op
 * stream, without the engine: the registry and argument errors; padding
 * worked out by hand (3x100 f32 and bf16 -> 4096 bytes), collectives
 * keeping their size relations when padded; donation, batching,
 * transfer guards, prefetch, circular buffering and offloading on small
 * traces, each checked by the trace checker; offloading the optimizer state
 * lowering the device peak by about its size; composition and rewind.
 */
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "core/error.h"
#include "engine/engine.h"
#include "ledger/ledger.h"
#include "policy/policy.h"
#include "spmd/spmd.h"
#include "trace/check.h"
#include "trace/reader.h"
#include "trace/writer.h"
#include "workload/workload.h"

static strata_source *trace_text(const char *text)
{
    char *path = strata_test_write_temp("policy-XXXXXX.trace", text);
    GError *err = NULL;
    strata_source *src = strata_trace_open(path, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "?");
    g_free(path);
    return src;
}

static strata_source *apply(strata_source *src, const char *const *specs)
{
    GError *err = NULL;
    strata_source *out = strata_policies_apply(src, specs, NULL, &err);
    ck_assert_msg(out != NULL, "%s", err ? err->message : "?");
    return out;
}

/* All ops as text, one per line, after checking the stream. */
static char *drain(strata_source *src)
{
    GString *s = g_string_new(NULL);
    strata_checker *c = strata_checker_new("test");
    const strata_op *op;
    GError *err = NULL;
    int r;
    while ((r = strata_source_next(src, &op, &err)) == 1) {
        ck_assert_msg(strata_checker_feed(c, op, NULL, &err), "%s\nso far:\n%s", err->message, s->str);
        char *line = strata_op_to_text(op);
        g_string_append_printf(s, "%s\n", line);
        g_free(line);
    }
    ck_assert_msg(r == 0, "%s", err ? err->message : "?");
    strata_checker_free(c);
    return g_string_free(s, FALSE);
}

/* Peak of live bytes in the default memory (memory unset or hbm). */
static uint64_t device_peak(strata_source *src)
{
    GHashTable *sizes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    uint64_t live = 0, peak = 0;
    const strata_op *op;
    GError *err = NULL;
    while (strata_source_next(src, &op, &err) == 1) {
        bool device = op->kind == STRATA_OP_ALLOC && (!op->memory || strcmp(op->memory, "hbm") == 0);
        if (device) {
            g_hash_table_insert(sizes, g_strdup(op->name), GSIZE_TO_POINTER(op->size));
            live += op->size;
            peak = live > peak ? live : peak;
        } else if (op->kind == STRATA_OP_FREE && g_hash_table_contains(sizes, op->name)) {
            live -= GPOINTER_TO_SIZE(g_hash_table_lookup(sizes, op->name));
            g_hash_table_remove(sizes, op->name);
        }
    }
    ck_assert_ptr_null(err);
    g_hash_table_destroy(sizes);
    return peak;
}

static bool has_line(const char *text, const char *line)
{
    char *needle = g_strdup_printf("\n%s\n", line);
    char *hay = g_strdup_printf("\n%s", text);
    bool found = strstr(hay, needle) != NULL;
    g_free(needle);
    g_free(hay);
    return found;
}

START_TEST(registry_and_errors)
{
    char *names = strata_policy_type_names();
    ck_assert_str_eq(names, "prefetch, nbuffer, pad, offload, donate, batch-copies, transfer-guard");
    g_free(names);
    const char *cases[][2] = {
        {"frobnicate", "known policies: prefetch"},
        {"prefetch", "needs an argument"},
        {"prefetch=x", "distance: expected an integer"},
        {"prefetch=2:distance=3", "given twice"},
        {"prefetch:distance=-1", "0 to 1000000"},
        {"nbuffer=0", "from 1 to 64"},
        {"pad=8by128", "ROWSxLANES"},
        {"offload=grad", "one of activation, param, optstate"},
        {"offload=param:ahaed=2", "ahaed"},
        {"donate=yes", "takes no argument"},
        {"batch-copies=lots", "expected a size"},
        {"transfer-guard=maybe", "one of allow, log, disallow"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *specs[] = {cases[i][0], NULL};
        GError *err = NULL;
        strata_source *src = trace_text("strata-trace 1\nalloc a 4\n");
        ck_assert_ptr_null(strata_policies_apply(src, specs, NULL, &err));
        ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
        ck_assert_msg(strstr(err->message, cases[i][1]), "%s: %s", cases[i][0], err->message);
        g_clear_error(&err);
    }
}
END_TEST

/* The padding a ledger reads from the checker's options for one memory. */
static uint64_t ledger_padding(const strata_checker *c, const char *memory, bool is_default)
{
    strata_ledger *l = strata_ledger_new();
    strata_ledger_read_options(l, c, memory, is_default);
    strata_memory_result r = {0};
    strata_ledger_fill(l, &r);
    strata_ledger_free(l);
    return r.padding_bytes;
}

/* (8,128) tiles for 32-bit: 3x100 f32 -> 8x128x4 = 4096 B (2896 added);
 * (16,128) for 16-bit: 3x100 bf16 -> 16x128x2 = 4096 B (3496 added);
 * (32,128) for 8-bit: 3x100 int8 -> 32x128 = 4096 B. A 2x3x100 f32 pads its
 * last two dims: 2x8x128x4 = 8192. Rank 1: 100 f32 -> 128x4 = 512. */
START_TEST(pad_by_hand)
{
    strata_source *src = trace_text("strata-trace 1\n"
                                    "alloc a 1200 dtype=f32 shape=3x100\n"
                                    "alloc b 600 vmem dtype=bf16 shape=3x100\n"
                                    "alloc c 300 dtype=int8 shape=3x100\n"
                                    "alloc d 2400 dtype=f32 shape=2x3x100\n"
                                    "alloc e 400 dtype=f32 shape=100\n"
                                    "alloc f 7\n");
    const char *specs[] = {"pad", NULL};
    src = apply(src, specs);
    char *out = drain(src);
    ck_assert_msg(has_line(out, "alloc a 4KiB dtype=f32 shape=8x128"), "%s", out);
    ck_assert_msg(has_line(out, "alloc b 4KiB vmem dtype=bf16 shape=16x128"), "%s", out);
    ck_assert_msg(has_line(out, "alloc c 4KiB dtype=int8 shape=32x128"), "%s", out);
    ck_assert_msg(has_line(out, "alloc d 8KiB dtype=f32 shape=2x8x128"), "%s", out);
    ck_assert_msg(has_line(out, "alloc e 512 dtype=f32 shape=128"), "%s", out);
    ck_assert_msg(has_line(out, "alloc f 7"), "%s", out);
    /* default memory: 2896 + 3796 + 5792 + 112 added; vmem: 3496 */
    uint64_t dflt = 2896 + (4096 - 300) + (8192 - 2400) + 112;
    char *opt = g_strdup_printf("option padding_bytes=%" G_GUINT64_FORMAT, dflt);
    ck_assert_msg(has_line(out, opt), "%s", out);
    ck_assert_msg(has_line(out, "option padding_bytes.vmem=3496"), "%s", out);
    g_free(opt);

    /* consumers' ledgers read the options back through the checker */
    strata_checker *c = strata_checker_new("t");
    GError *err = NULL;
    ck_assert(strata_source_rewind(src, &err));
    const strata_op *op;
    while (strata_source_next(src, &op, &err) == 1)
        ck_assert(strata_checker_feed(c, op, NULL, &err));
    ck_assert_uint_eq(ledger_padding(c, "hbm", true), dflt);
    ck_assert_uint_eq(ledger_padding(c, "vmem", false), 3496);
    ck_assert_uint_eq(ledger_padding(c, "host", false), 0);
    strata_checker_free(c);
    strata_source_free(src);
    g_free(out);

    /* padding twice adds nothing more; an explicit tile 8x128 is the default */
    src = trace_text("strata-trace 1\nalloc a 1200 dtype=f32 shape=3x100\n");
    const char *twice[] = {"pad", "pad=8x128", NULL};
    src = apply(src, twice);
    out = drain(src);
    ck_assert_msg(has_line(out, "option padding_bytes=2896"), "%s", out);
    ck_assert_msg(has_line(out, "alloc a 4KiB dtype=f32 shape=8x128"), "%s", out);
    g_free(out);
    strata_source_free(src);

    /* a padded size beyond 64 bits is an error naming the line, not a wrap */
    src = trace_text("strata-trace 1\nalloc a 4 dtype=f32 shape=4294967297x4294967297\n");
    const char *pad[] = {"pad", NULL};
    GError *err2 = NULL;
    ck_assert_ptr_null(strata_policies_apply(src, pad, NULL, &err2));
    ck_assert_msg(strstr(err2->message, ":2:") && strstr(err2->message, "does not fit"), "%s", err2->message);
    g_clear_error(&err2);
}
END_TEST

/* Collectives keep their size relation: the per-device side is padded by its
 * shape and the other side sized from it. Over data:4, all-gather w ws: ws
 * 3x100 f32 (1200 B) pads to 8x128x4 = 4096, so w (12x100, 4800 B) becomes
 * 4 x 4096 = 16384 (not its own tile's 16x128x4 = 8192) and keeps its shape.
 * reduce-scatter gs g: gs 100 bf16 (200 B) pads to 128x2 = 256, so g (4x100,
 * 800 B) becomes 4 x 256 = 1024 (not 16x128x2 = 4096). all-to-all o i: i
 * 4x32 f32 (512 B) pads to 8x128x4 = 4096 and o (512 B, no shape) matches it.
 * Added: 2896 + 11584 + 56 + 224 + 3584 + 3584 = 21928. */
START_TEST(pad_collectives_keep_sizes)
{
    static const char text[] = "strata-trace 1\n"
                               "option mesh=data:4\n"
                               "alloc ws 1200 dtype=f32 shape=3x100\n"
                               "alloc w 4800 dtype=f32 shape=12x100\n"
                               "all-gather w ws axis=data\n"
                               "alloc g 800 dtype=bf16 shape=4x100\n"
                               "alloc gs 200 dtype=bf16 shape=100\n"
                               "reduce-scatter gs g axis=data\n"
                               "alloc i 512 dtype=f32 shape=4x32\n"
                               "alloc o 512\n"
                               "all-to-all o i axis=data\n"
                               "all-reduce ws axis=data\n";
    static const char *const want[] = {
        "alloc ws 4KiB dtype=f32 shape=8x128", "alloc w 16KiB dtype=f32 shape=12x100",
        "alloc gs 256 dtype=bf16 shape=128",   "alloc g 1KiB dtype=bf16 shape=4x100",
        "alloc i 4KiB dtype=f32 shape=8x128",  "alloc o 4KiB",
        "option padding_bytes=21928",
    };
    const char *specs[] = {"pad", NULL};
    const char *twice[] = {"pad", "pad", NULL};
    const char *const *runs[] = {specs, twice};
    for (size_t k = 0; k < G_N_ELEMENTS(runs); k++) {
        strata_source *src = apply(trace_text(text), runs[k]);
        char *out = drain(src); /* the checker accepts every collective's sizes */
        for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
            ck_assert_msg(has_line(out, want[i]), "%s not in\n%s", want[i], out);
        g_free(out);
        strata_source_free(src);
    }
}
END_TEST

/* On a machine of several devices (test-ring8) every device's memory
 * reports its own padding. Over data:8: a and s (3x100 f32) pad to 8x128,
 * 1200 -> 4096 B, +2896 each on every device; g, all-gathered from s, is
 * sized 8 x 4096 = 32768 B from 9600: +23168; b (100 f32, device=3 only)
 * pads to 128 lanes, +112 on hbm@3; h (3x100 f32 in host memory, one per
 * device) +2896 x 8 on host@0, the one host. */
START_TEST(pad_per_device)
{
    static const char text[] = "strata-trace 1\n"
                               "option mesh=data:8\n"
                               "alloc a 1200 dtype=f32 shape=3x100\n"
                               "alloc s 1200 dtype=f32 shape=3x100\n"
                               "alloc g 9600 dtype=f32 shape=24x100\n"
                               "alloc b 400 dtype=f32 shape=100 device=3\n"
                               "alloc h 1200 host dtype=f32 shape=3x100\n"
                               "compute program_start time=0\n"
                               "all-gather g s axis=data\n";
    strata_hw *hw = strata_test_load_hw("test-ring8", NULL);
    GError *err = NULL;
    const char *specs[] = {"pad", NULL};
    strata_source *src = strata_policies_apply(trace_text(text), specs, hw, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "?");
    src = strata_spmd_expand(src, hw);
    strata_results *r = NULL;
    ck_assert_msg(strata_engine_run(hw, src, NULL, &r, &err), "%s", err ? err->message : "?");
    guint seen = 0;
    for (guint i = 0; i < r->memories->len; i++) {
        const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        uint64_t want = strcmp(m->name, "host@0") == 0   ? 8 * 2896
                        : strcmp(m->name, "hbm@3") == 0 ? 2 * 2896 + 23168 + 112
                        : g_str_has_prefix(m->name, "hbm@") ? 2 * 2896 + 23168
                                                            : 0;
        ck_assert_msg(m->padding_bytes == want, "%s: padding %" G_GUINT64_FORMAT ", want %" G_GUINT64_FORMAT,
                      m->name, m->padding_bytes, want);
        seen += want != 0;
    }
    ck_assert_uint_eq(seen, 9);
    strata_results_free(r);
    strata_source_free(src);
    strata_hw_free(hw);
}
END_TEST

START_TEST(donate_reuses_storage)
{
    strata_source *src = trace_text("strata-trace 1\n"
                                    "alloc w 4096 tag=param\n"
                                    "alloc g 4096 tag=grad\n"
                                    "compute program_start time=0\n"
                                    "alloc w2 4096 tag=param\n"
                                    "compute update flops=1000 in=w,g out=w2 donate=w\n"
                                    "free g\n"
                                    "compute use flops=10 in=w2\n");
    const char *specs[] = {"donate", NULL};
    strata_source *out_src = apply(src, specs);
    char *out = drain(out_src);
    ck_assert_msg(!strstr(out, "alloc w2"), "%s", out);
    ck_assert_msg(has_line(out, "compute update flops=1000 in=w,g out=w"), "%s", out);
    ck_assert_msg(has_line(out, "compute use flops=10 in=w"), "%s", out);
    g_free(out);
    GError *err = NULL;
    ck_assert(strata_source_rewind(out_src, &err));
    ck_assert_uint_eq(device_peak(out_src), 8192); /* w and g; without donation 12288 */
    strata_source_free(out_src);

    /* using a donated buffer again is an error naming the line */
    src = trace_text("strata-trace 1\nalloc w 64\nalloc w2 64\n"
                     "compute u flops=1 in=w out=w2 donate=w\ncompute bad flops=1 in=w\n");
    ck_assert_ptr_null(strata_policies_apply(src, specs, NULL, &err));
    ck_assert_msg(strstr(err->message, ":5:") && strstr(err->message, "donated at line 4"), "%s", err->message);
    g_clear_error(&err);
}
END_TEST

START_TEST(batch_copies_merge_small_runs)
{
    strata_source *src = trace_text("strata-trace 1\n"
                                    "alloc h0 1000 host\nalloc h1 1000 host\nalloc h2 1000 host\nalloc big 1MiB host\n"
                                    "alloc d0 1000\nalloc d1 1000\nalloc d2 1000\nalloc dbig 1MiB\n"
                                    "copy d0 h0\ncopy d1 h1\ncopy d2 h2\ncopy dbig big\n"
                                    "compute k time=1us in=d0,d1,d2\n"
                                    "copy d0 h0\n");
    const char *specs[] = {"batch-copies=64KiB", NULL};
    src = apply(src, specs);
    char *out = drain(src);
    ck_assert_msg(has_line(out, "alloc batch0.src 3000 host tag=temp"), "%s", out);
    ck_assert_msg(has_line(out, "copy batch0.dst batch0.src note=batch-of-3"), "%s", out);
    ck_assert_msg(has_line(out, "copy dbig big"), "%s", out);      /* large: untouched */
    ck_assert_msg(has_line(out, "copy d0 h0"), "%s", out);         /* a run of one */
    ck_assert_msg(!has_line(out, "copy d1 h1"), "%s", out);
    g_free(out);
    strata_source_free(src);
}
END_TEST

START_TEST(transfer_guard_modes)
{
    const char *text = "strata-trace 1\nalloc a 1KiB host\nalloc b 1KiB\nalloc c 1KiB host\n"
                       "compute k flops=100 in=a,b out=c\n";
    const char *allow[] = {"transfer-guard=allow", NULL};
    strata_source *src = apply(trace_text(text), allow);
    char *out = drain(src);
    ck_assert_msg(has_line(out, "alloc a:hbm 1KiB hbm tag=temp"), "%s", out);
    ck_assert_msg(has_line(out, "copy a:hbm a"), "%s", out);
    ck_assert_msg(has_line(out, "compute k flops=100 in=a:hbm,b out=c:hbm"), "%s", out);
    ck_assert_msg(has_line(out, "copy c c:hbm"), "%s", out);
    g_free(out);
    strata_source_free(src);

    const char *log[] = {"transfer-guard=log", NULL};
    src = apply(trace_text(text), log);
    out = drain(src);
    ck_assert_msg(has_line(out, "copy a:hbm a note=implicit-transfer"), "%s", out);
    g_free(out);
    strata_source_free(src);

    const char *disallow[] = {"transfer-guard=disallow", NULL};
    src = apply(trace_text(text), disallow);
    const strata_op *op;
    GError *err = NULL;
    int r;
    while ((r = strata_source_next(src, &op, &err)) == 1)
        ;
    ck_assert_int_eq(r, -1);
    ck_assert_int_eq(err->code, STRATA_ERROR_INPUT);
    ck_assert_msg(strstr(err->message, ":5:") && strstr(err->message, "compute 'k' reads 'a'") &&
                      strstr(err->message, "host"), "%s", err->message);
    g_clear_error(&err);
    strata_source_free(src);
}
END_TEST

/* A 56 MB copy used by the 6th of 7 computes: prefetch=2 issues it at the
 * 4th compute (index of c3), moves its destination's alloc up with it. */
START_TEST(prefetch_structure)
{
    const char *text = "strata-trace 1\nalloc w 56000000 host\nalloc x 1000\n"
                       "compute c0 time=1ms in=x out=x\ncompute c1 time=1ms in=x out=x\n"
                       "compute c2 time=1ms in=x out=x\ncompute c3 time=1ms in=x out=x\n"
                       "compute c4 time=1ms in=x out=x\nalloc wd 56000000\ncopy wd w\n"
                       "compute c5 time=1ms in=wd,x out=x\ncompute c6 time=1ms in=x out=x\n";
    const char *specs[] = {"prefetch=2", NULL};
    strata_source *src = apply(trace_text(text), specs);
    char *out = drain(src);
    const char *expect = "alloc wd 56000000\nrecord pf0.go\nwait pf0.go stream=prefetch\n"
                         "copy wd w stream=prefetch\nrecord pf0.done stream=prefetch\n"
                         "compute c3 in=x out=x time=1ms\ncompute c4 in=x out=x time=1ms\nwait pf0.done\n"
                         "compute c5 in=wd,x out=x time=1ms\n";
    ck_assert_msg(strstr(out, expect), "%s", out);
    g_free(out);
    strata_source_free(src);

    /* prefetch=0 is the identity; a copy whose source was just written stays */
    const char *zero[] = {"prefetch=0", NULL};
    src = apply(trace_text(text), zero);
    out = drain(src);
    ck_assert_msg(has_line(out, "copy wd w"), "%s", out);
    g_free(out);
    strata_source_free(src);
    const char *dep = "strata-trace 1\nalloc a 64\nalloc b 64\ncompute c0 time=1ms out=a\n"
                      "compute c1 time=1ms out=a\ncopy b a\ncompute c2 time=1ms in=b\n";
    src = apply(trace_text(dep), specs);
    out = drain(src);
    ck_assert_msg(has_line(out, "copy b a"), "%s", out); /* a written by c1: cannot move */
    g_free(out);
    strata_source_free(src);
}
END_TEST

START_TEST(nbuffer_structure)
{
    GString *t = g_string_new("strata-trace 1\nalloc src 4096 host\ncompute program_start time=0\n");
    for (int i = 0; i < 4; i++)
        g_string_append_printf(t, "alloc t 4096\ncopy t src\ncompute k%d time=1ms in=t\nfree t\n", i);
    const char *specs[] = {"nbuffer=2", NULL};
    strata_source *src = apply(trace_text(t->str), specs);
    char *out = drain(src);
    ck_assert_msg(has_line(out, "alloc nb0.0 4KiB") && has_line(out, "alloc nb0.1 4KiB"), "%s", out);
    ck_assert_msg(!has_line(out, "alloc t 4KiB"), "%s", out);
    ck_assert_msg(strstr(out, "wait nb0.0.free stream=nbuffer\ncopy nb0.0 src stream=nbuffer\n"
                              "record nb0.0.full stream=nbuffer\nwait nb0.0.full\ncompute k2 in=nb0.0 time=1ms\n"),
                  "%s", out);
    ck_assert_msg(has_line(out, "free nb0.1"), "%s", out);
    g_free(out);
    GError *err = NULL;
    ck_assert(strata_source_rewind(src, &err));
    ck_assert_uint_eq(device_peak(src), 8192); /* two slots */
    strata_source_free(src);
    g_string_free(t, TRUE);
}
END_TEST

/* adam-mlp dim=64 batch=64 layers=4 f32, with donation: optimizer state is
 * 4 layers x (m, v) x 64x64x4 = 128 KiB, and Adam's 4-byte count. Offloading it keeps it on the host
 * except for the layer being updated, so the device peak (reached in the
 * backward pass, where the state sits idle) falls by exactly its size. */
START_TEST(offload_optstate_lowers_peak)
{
    const char *args[] = {"dim=64", "batch=64", "layers=4", NULL};
    GError *err = NULL;
    const char *donate[] = {"donate", NULL};
    const char *both[] = {"donate", "offload=optstate", NULL};
    strata_source *a = apply(strata_workload_generate("adam-mlp", args, &err), donate);
    strata_source *b = apply(strata_workload_generate("adam-mlp", args, &err), both);
    uint64_t pa = device_peak(a), pb = device_peak(b);
    ck_assert_uint_eq(pa - pb, 8 * 64 * 64 * 4 + 4);
    ck_assert(strata_source_rewind(b, &err));
    char *out = drain(b);
    ck_assert_msg(has_line(out, "alloc m_0:host 16KiB host tag=optstate dtype=f32 shape=64x64"), "%s", out);
    ck_assert_msg(has_line(out, "copy m_0 m_0:host stream=offload"), "%s", out);
    ck_assert_msg(has_line(out, "copy m_0:host m_0 stream=offload"), "%s", out);
    g_free(out);
    strata_source_free(a);
    strata_source_free(b);
}
END_TEST

/* Parameter offloading streams each layer's weights in at each use: with
 * scan-mlp (2 layers), every weight starts on the host and is copied in for
 * the forward pass and again for the backward pass (except w1_0: the
 * gradient is not taken with respect to x, so the backward pass never reads
 * w1_0), and never copied out (it is only read). */
START_TEST(offload_param_streams_weights)
{
    const char *args[] = {"batch=8", "dim=16", "hidden=32", "layers=2", NULL};
    GError *err = NULL;
    const char *specs[] = {"offload=param", NULL};
    strata_source *src = apply(strata_workload_generate("scan-mlp", args, &err), specs);
    char *out = drain(src);
    const char *w[] = {"w1_0", "w2_0", "w1_1", "w2_1"};
    for (int i = 0; i < 4; i++) {
        char *in = g_strdup_printf("\ncopy %s %s:host stream=offload\n", w[i], w[i]);
        char *back = g_strdup_printf("\ncopy %s:host %s", w[i], w[i]);
        const char *first = strstr(out, in);
        ck_assert_msg(first, "%s in %s", in, out);
        ck_assert_msg((strstr(first + 1, in) != NULL) == (i != 0), "%s: once for w1_0, twice for the others\n%s",
                      in, out);
        ck_assert_msg(!strstr(out, back), "%s", out);
        g_free(in);
        g_free(back);
    }
    g_free(out);
    strata_source_free(src);

    /* activations go out after the forward pass and come back for backward */
    const char *act[] = {"offload=activation", NULL};
    src = apply(strata_workload_generate("scan-mlp", args, &err), act);
    out = drain(src);
    ck_assert_msg(strstr(out, "copy h_1:host h_1 stream=offload") && strstr(out, "copy h_1 h_1:host stream=offload"),
                  "%s", out);
    g_free(out);
    strata_source_free(src);
}
END_TEST

/* A collective's operands are uses like a compute's (rewrite.h's
 * operands): prefetch waits for its copy before the all-reduce that reads
 * the destination; donate refuses an all-reduce of a donated buffer;
 * offload fetches a parameter before each all-gather that reads it and
 * leaves the gathered copies on the device. */
START_TEST(policies_count_collective_operands)
{
    strata_source *src = trace_text("strata-trace 1\noption mesh=data:2\nalloc h 64 host\nalloc d 64\n"
                                    "compute program_start time=0\ncompute c1 flops=1\ncompute c2 flops=1\n"
                                    "compute c3 flops=1\ncopy d h\nall-reduce d axis=data\n");
    const char *prefetch[] = {"prefetch=2", NULL};
    strata_source *rewritten = apply(src, prefetch);
    char *out = drain(rewritten);
    strata_source_free(rewritten);
    ck_assert_msg(strstr(out, "copy d h stream=prefetch\n") && strstr(out, "wait pf0.done\nall-reduce d axis=data\n"),
                  "%s", out);
    g_free(out);

    const char *donate[] = {"donate", NULL};
    src = trace_text("strata-trace 1\noption mesh=data:2\nalloc w 64\nalloc w2 64\n"
                     "compute u flops=1 in=w out=w2 donate=w\nall-reduce w axis=data\n");
    GError *err = NULL;
    ck_assert_ptr_null(strata_policies_apply(src, donate, NULL, &err));
    ck_assert_msg(strstr(err->message, ":6:") && strstr(err->message, "donated at line 5"), "%s", err->message);
    g_clear_error(&err);

    src = trace_text("strata-trace 1\noption mesh=data:2\nalloc p 64 tag=param\ncompute program_start time=0\n"
                     "alloc g 128 tag=param\nall-gather g p axis=data\ncompute f flops=1 in=g\nfree g\n"
                     "compute x1 flops=1\ncompute x2 flops=1\ncompute x3 flops=1\n"
                     "alloc g 128 tag=param\nall-gather g p axis=data\ncompute b flops=1 in=g\nfree g\n");
    const char *offload[] = {"offload=param", NULL};
    rewritten = apply(src, offload);
    out = drain(rewritten);
    strata_source_free(rewritten);
    const char *fetch = "copy p p:host stream=offload\n", *first = strstr(out, fetch);
    ck_assert_msg(has_line(out, "alloc p:host 64 host tag=param") && first && strstr(first + 1, fetch), "%s", out);
    ck_assert_msg(!strstr(out, "g:host"), "%s", out);
    ck_assert_msg(strstr(out, "all-gather g p axis=data\nfree p\n"), "%s", out);
    g_free(out);
}
END_TEST

/* Every policy, alone and composed, on every generator, gives a stream the
 * checker accepts, twice (rewind) with the same text. */
START_TEST(compositions_are_valid_traces)
{
    const char *gens[][8] = {
        {"scan-mlp", "batch=4", "dim=8", "hidden=16", "layers=3", NULL},
        {"adam-mlp", "dim=16", "batch=8", "layers=2", NULL},
        {"matmul", "m=64", "n=64", "k=64", "bm=32", "bn=32", "bk=32", NULL},
        {"transformer", "layers=2", "d_model=16", "heads=2", "seq=8", "batch=2", "vocab=32", NULL},
    };
    const char *stacks[][4] = {
        {"prefetch=2", NULL},
        {"nbuffer=3", NULL},
        {"pad", NULL},
        {"donate", "offload=optstate", NULL},
        {"offload=activation", "prefetch=1", NULL},
        {"offload=param", "batch-copies=1MiB", NULL},
        {"transfer-guard=allow", "pad=8x128", NULL},
    };
    for (size_t g = 0; g < G_N_ELEMENTS(gens); g++)
        for (size_t s = 0; s < G_N_ELEMENTS(stacks); s++) {
            GError *err = NULL;
            strata_source *src = strata_workload_generate(gens[g][0], &gens[g][1], &err);
            ck_assert_ptr_nonnull(src);
            src = strata_policies_apply(src, stacks[s], NULL, &err);
            ck_assert_msg(src != NULL, "%s + %s: %s", gens[g][0], stacks[s][0], err ? err->message : "?");
            char *first = drain(src);
            ck_assert(strata_source_rewind(src, &err));
            char *second = drain(src);
            ck_assert_str_eq(first, second);
            g_free(first);
            g_free(second);
            strata_source_free(src);
        }
}
END_TEST


/* ---- sched=xla against sched=cuda, on the engine ------------------------ */

/* A fast chip on a slow host link: a 4 MiB copy takes 1us + 4MiB / 16GB/s =
 * 263.144 us, a compute 1e9 / 100 TFLOP/s = 10 us. */
static const char SCHED_HW[] =
    "[hardware]\nname = sched-test\nsource = round numbers for hand-derived tests\n"
    "[memory hbm]\nkind = device\ncapacity = 1GiB\nbandwidth = 1TB/s\n"
    "[memory host]\nkind = host\ncapacity = 16GiB\nbandwidth = 100GB/s\n"
    "[link pcie]\nbetween = host hbm\nbandwidth = 16GB/s\nlatency = 1us\n"
    "[compute core]\nflops = 100TFLOP/s\noperands = hbm\n";

/* Four 4 MiB activations, written forward and read backward. With ahead=0,
 * a0 and a1 leave the device (their uses are more than two computes apart);
 * a2 (f2, f3, b2) and a3 (f3, b3) stay. Without offloading the device temp
 * peaks at a0..a3 = 16 MiB; x (argument) and g (output, never freed) are not
 * temp. */
static const char ACT_TRACE[] = "strata-trace 1\n"
                                "alloc x 1MiB tag=input\n"
                                "compute program_start time=0\n"
                                "alloc a0 4MiB tag=activation\n"
                                "compute f0 flops=1e9 in=x out=a0\n"
                                "alloc a1 4MiB tag=activation\n"
                                "compute f1 flops=1e9 in=a0 out=a1\n"
                                "alloc a2 4MiB tag=activation\n"
                                "compute f2 flops=1e9 in=a1 out=a2\n"
                                "alloc a3 4MiB tag=activation\n"
                                "compute f3 flops=1e9 in=a2 out=a3\n"
                                "alloc g 1MiB tag=grad\n"
                                "compute b3 flops=1e9 in=a3 out=g\n"
                                "free a3\n"
                                "compute b2 flops=1e9 in=a2,g out=g\n"
                                "free a2\n"
                                "compute b1 flops=1e9 in=a1,g out=g\n"
                                "free a1\n"
                                "compute b0 flops=1e9 in=a0,g out=g\n"
                                "free a0\n";

/* Three 2 MiB weights read once each in a forward pass. */
static const char PARAM_TRACE[] = "strata-trace 1\n"
                                  "alloc x 1MiB tag=input\n"
                                  "alloc w0 2MiB tag=param\n"
                                  "alloc w1 2MiB tag=param\n"
                                  "alloc w2 2MiB tag=param\n"
                                  "compute program_start time=0\n"
                                  "alloc h0 1MiB tag=activation\n"
                                  "compute l0 flops=1e9 in=x,w0 out=h0\n"
                                  "alloc h1 1MiB tag=activation\n"
                                  "compute l1 flops=1e9 in=h0,w1 out=h1\n"
                                  "free h0\n"
                                  "alloc h2 1MiB tag=output\n"
                                  "compute l2 flops=1e9 in=h1,w2 out=h2\n"
                                  "free h1\n";

#define MIB ((uint64_t)1048576)

/* Runs `trace` rewritten by `spec` on SCHED_HW; also returns the untimed
 * program-order device peak of the rewritten stream. */
/* Runs `trace` (NULL: `gen adam-mlp dim=64 batch=64 layers=2`) rewritten by
 * `specs` on SCHED_HW; also returns the untimed program-order device peak of
 * the rewritten stream. */
static strata_results *run_sched(const char *trace, const char *const *specs, uint64_t *untimed_peak)
{
    GError *err = NULL;
    strata_hw *hw = strata_hw_load_data(SCHED_HW, "sched-test.ini", NULL, &err);
    ck_assert_msg(hw != NULL, "%s", err ? err->message : "?");
    const char *adam[] = {"dim=64", "batch=64", "layers=2", NULL};
    strata_source *in = trace ? trace_text(trace) : strata_workload_generate("adam-mlp", adam, &err);
    strata_source *src = strata_policies_apply(in, specs, hw, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "?");
    *untimed_peak = device_peak(src);
    ck_assert(strata_source_rewind(src, &err));
    strata_results *r = NULL;
    ck_assert_msg(strata_engine_run(hw, src, NULL, &r, &err), "%s", err ? err->message : "?");
    strata_source_free(src);
    strata_hw_free(hw);
    return r;
}

static const strata_memory_result *hbm(const strata_results *r)
{
    for (guint i = 0; i < r->memories->len; i++) {
        const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        if (strcmp(m->name, "hbm") == 0)
            return m;
    }
    ck_abort_msg("no hbm");
    return NULL;
}

static double main_stall(const strata_results *r)
{
    for (guint i = 0; i < r->streams->len; i++) {
        const strata_stream_result *s = &g_array_index(r->streams, strata_stream_result, i);
        if (strcmp(s->name, "main") == 0)
            return s->stall_s;
    }
    ck_abort_msg("no main stream");
    return 0;
}

/* The cases, one engine run each (SimGrid allows one engine per process:
 * a loop test forks per case). argument, output, alias and temp are the
 * program-order figures of memory_analysis() (sim/ledger); peak is timed;
 * untimed is the program-order peak of the rewritten stream.
 *  0. ACT, xla, ahead=0: a0 is freed right after its copy out (after f1), a1
 *     after f2, and each comes back right before its backward use. Live
 *     activations in program order: f1 a0+a1, then a1; f2 a1+a2, then a2; f3
 *     and b3 a2+a3: 8 MiB at most, so the temp falls from 16 to 8 MiB, by
 *     a0 + a1, the activations moved to the host. Argument x, output g (1 MiB
 *     each), no alias: total 10 MiB = the timed peak = the untimed peak.
 *     Main waits for each of the 4 copies whole: 4 x 263.144 us.
 *  1. ACT, cuda, the same rewrite: the same program-order figures, but the
 *     copy of a0 starts after f1 (20 us) and ends at 283.144 us, and only
 *     then does the offload stream free a0, long after main allocated a3
 *     (30 us): the timed peak is x + g + a0..a3 = 18 MiB, past the total.
 *  2. PARAM, xla, ahead=2: w0..w2 start on the host; w0 and w1 come back
 *     right after program_start (two computes before l0 and l1 reach back
 *     past it), w2 before l0. At l0: x, w0, w1, w2, h0 = 8 MiB, temp 7 MiB;
 *     the arguments fall from 7 MiB to x = 1 MiB, by the 6 MiB of parameters
 *     moved. Output h2 (1 MiB) is allocated after the peak.
 *  3. PARAM as written (donate changes nothing here): arguments x + 3 x
 *     2 MiB = 7 MiB; at l1 x, w0..w2, h0, h1 = 9 MiB, temp h0 + h1 = 2.
 *  4. adam-mlp dim=64 batch=64 layers=2 (every matrix 64x64 f32 = 16 KiB,
 *     the step count 4 B), donate + offload=optstate under xla: m_0, v_0,
 *     m_1, v_1 and the count start on the host, so the device arguments are
 *     x, w_0, w_1 = 48 KiB; the outputs are w_0, w_1, updated in place
 *     (donated): 32 KiB, all aliasing arguments. The temp peaks in the
 *     backward pass after d_z_1's alloc: z_0, h_1, z_1, d_h_2, d_w_0, d_w_1,
 *     d_z_1 = 112 KiB (the optimizer state visits later: at most d_w_0,
 *     d_w_1, m_0, v_0, m_1, v_1 = 96 KiB). total = temp + argument + output
 *     - alias = 112 + 48 + 32 - 32 = 160 KiB = the peak.
 *  5. The same with donate only: m, v and the count are arguments and
 *     outputs too: argument 112 KiB + 4, output = alias = 96 KiB + 4, temp
 *     112 KiB, total = peak = 224 KiB + 4. Offloading lowers the arguments
 *     by the 64 KiB + 4 B of optimizer state and keeps the identity. */
#define KIB ((uint64_t)1024)

static const struct sched_case {
    const char *trace, *specs[3];
    uint64_t temp, peak, untimed, argument, output, alias; /* bytes */
    bool total_is_peak; /* the peak holds every argument and output */
    double stall;       /* < 0: not checked */
} sched_cases[] = {
    {ACT_TRACE, {"offload=activation:ahead=0,sched=xla"}, 8 * MIB, 10 * MIB, 10 * MIB, MIB, MIB, 0, true,
     4 * (1e-6 + 4.0 * MIB / 16e9)},
    {ACT_TRACE, {"offload=activation:ahead=0,sched=cuda"}, 8 * MIB, 18 * MIB, 10 * MIB, MIB, MIB, 0, false, -1},
    {PARAM_TRACE, {"offload=param:sched=xla"}, 7 * MIB, 8 * MIB, 8 * MIB, MIB, MIB, 0, false, -1},
    {PARAM_TRACE, {"donate"}, 2 * MIB, 9 * MIB, 9 * MIB, 7 * MIB, MIB, 0, false, -1},
    {NULL, {"donate", "offload=optstate:sched=xla"}, 112 * KIB, 160 * KIB, 160 * KIB, 48 * KIB, 32 * KIB, 32 * KIB,
     true, -1},
    {NULL, {"donate"}, 112 * KIB, 224 * KIB + 4, 224 * KIB + 4, 112 * KIB + 4, 96 * KIB + 4, 96 * KIB + 4, true, -1},
};

START_TEST(sched_on_the_engine)
{
    const struct sched_case *c = &sched_cases[_i];
    uint64_t untimed = 0;
    strata_results *r = run_sched(c->trace, c->specs, &untimed);
    const strata_memory_result *m = hbm(r);
    ck_assert_msg(m->temp_peak_bytes == c->temp && m->peak_allocated_bytes == c->peak && untimed == c->untimed &&
                      m->argument_bytes == c->argument && m->output_bytes == c->output &&
                      m->alias_bytes == c->alias,
                  "%s: temp %" G_GUINT64_FORMAT " peak %" G_GUINT64_FORMAT " untimed %" G_GUINT64_FORMAT
                  " argument %" G_GUINT64_FORMAT " output %" G_GUINT64_FORMAT " alias %" G_GUINT64_FORMAT,
                  c->specs[0], m->temp_peak_bytes, m->peak_allocated_bytes, untimed, m->argument_bytes,
                  m->output_bytes, m->alias_bytes);
    ck_assert_uint_eq(m->jax_total_bytes, c->temp + c->argument + c->output - c->alias);
    if (c->total_is_peak)
        ck_assert_uint_eq(m->peak_allocated_bytes, m->jax_total_bytes);
    if (c->stall >= 0)
        ck_assert_msg(fabs(main_stall(r) - c->stall) < 1e-9, "stall %.9g, want %.9g", main_stall(r), c->stall);
    strata_results_free(r);
}
END_TEST

/* sched=auto: the trace's option sched, else [hardware] sched, else cuda;
 * bad values are errors naming what was expected. */
START_TEST(sched_resolution)
{
    const char *spec[] = {"offload=activation:ahead=0", NULL};
    char *with_option = g_strconcat("strata-trace 1\noption sched=xla\n", ACT_TRACE + strlen("strata-trace 1\n"), NULL);
    strata_source *xla = apply(trace_text(with_option), spec);
    char *out = drain(xla);
    ck_assert_msg(has_line(out, "wait of0.done"), "%s", out);
    g_free(out);
    strata_source_free(xla);
    strata_source *cuda = apply(trace_text(ACT_TRACE), spec);
    out = drain(cuda);
    ck_assert_msg(!strstr(out, ".done") && has_line(out, "free a0 stream=offload"), "%s", out);
    g_free(out);
    strata_source_free(cuda);
    GError *err = NULL;
    char *bad = g_strconcat("strata-trace 1\noption sched=tpu\n", ACT_TRACE + strlen("strata-trace 1\n"), NULL);
    strata_source *src = strata_policies_apply(trace_text(bad), spec, NULL, &err);
    const strata_op *op;
    if (src) {
        while (strata_source_next(src, &op, &err) == 1)
            ;
        strata_source_free(src);
    }
    ck_assert_msg(err && strstr(err->message, "trace option sched: expected xla or cuda, got 'tpu'"), "%s",
                  err ? err->message : "no error");
    g_clear_error(&err);
    char *hw_text = g_strdup_printf("%s", SCHED_HW);
    char *at = strstr(hw_text, "source = ");
    char *bad_hw = g_strdup_printf("%.*ssched = tpu\n%s", (int)(at - hw_text), hw_text, at);
    ck_assert_ptr_null(strata_hw_load_data(bad_hw, "bad.ini", NULL, &err));
    ck_assert_msg(strstr(err->message, "bad.ini:3: [hardware] sched: expected xla or cuda, got 'tpu'"), "%s",
                  err->message);
    g_clear_error(&err);
    g_free(hw_text);
    g_free(bad_hw);
    g_free(bad);
    g_free(with_option);
}
END_TEST

static Suite *policy_suite(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = tcase_create("rewrites");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, registry_and_errors);
    tcase_add_test(tc, pad_by_hand);
    tcase_add_test(tc, pad_collectives_keep_sizes);
    tcase_add_test(tc, pad_per_device);
    tcase_add_test(tc, donate_reuses_storage);
    tcase_add_test(tc, batch_copies_merge_small_runs);
    tcase_add_test(tc, transfer_guard_modes);
    tcase_add_test(tc, prefetch_structure);
    tcase_add_test(tc, nbuffer_structure);
    tcase_add_test(tc, offload_optstate_lowers_peak);
    tcase_add_test(tc, offload_param_streams_weights);
    tcase_add_test(tc, policies_count_collective_operands);
    tcase_add_test(tc, compositions_are_valid_traces);
    suite_add_tcase(s, tc);
    TCase *sched = tcase_create("sched");
    tcase_set_timeout(sched, 120);
    tcase_add_loop_test(sched, sched_on_the_engine, 0, G_N_ELEMENTS(sched_cases));
    tcase_add_test(sched, sched_resolution);
    suite_add_tcase(s, sched);
    return s;
}

int main(void) { return strata_test_main(policy_suite()); }
