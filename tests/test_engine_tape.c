/*
 * test_engine_tape.c: the engine's record of its first pass (engine_tape.h)
 * and the second pass that replays it.
 *
 *  - every bound op of a trace that uses each field (shapes, donations,
 *    time=, comment lines, streams, events, releases, copies from buffer 0)
 *    comes back from the tape field for field;
 *  - the first pass's entry for an op whose extra is its name at most
 *    (engine_tape_put_named) writes what the general entry writes, and a
 *    run with a kernel op, a donation and 2-D shapes is the same from the
 *    tape as from the source read again;
 *  - a tape refuses an op past its budget and never holds more than it;
 *  - a run that replays the tape and one that reads the source again
 *    (budget 1 byte) write the same results JSON and the same timeline
 *    (labels, spans, memory samples), for runs that end normally, out of
 *    memory, with a systolic tile's padding and with a planning allocator,
 *    and for one whose tape outgrows its budget part way through;
 *  - the spill file's records read back as written, and a file that cannot
 *    be made says why (engine_spill.h);
 *  - a run whose first-pass tape waits in the temporary file (1 byte of it
 *    in memory) writes the same results and timeline as one that keeps it
 *    in memory; with no folder for the file, or a file size limit, the run
 *    fails with the cause (exit 2).
 */
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "engine/engine.h"
#include "engine/engine_spill.h"
#include "engine/engine_tape.h"
#include "core/error.h"
#include "ledger/ledger.h"
#include "testutil.h"
#include "bind/bind.h"
#include "spmd/spmd.h"
#include "trace/reader.h"

/* Every field the tape keeps, on tpu-v5e (tensorcore reads hbm; mxu reads
 * vmem with a 128-wide tile). */
static const char MIXED[] =
    "strata-trace 1\n"
    "# comment lines shift the line numbers\n"
    "option allocator.max_split_size=200MiB\n"
    "alloc s 1MiB host stream=h2d\n"
    "alloc a 4MiB dtype=bf16 shape=1000x300 tag=param\n"
    "alloc b 4MiB dtype=f32 shape=300x500 tag=activation\n"
    "\n"
    "copy a s stream=h2d bytes=4KiB\n"
    "record e1 stream=h2d\n"
    "wait e1\n"
    "compute mm flops=3e8 in=a,b out=b donate=a\n"
    "compute t time=12us in=a\n"
    "alloc v 1MiB vmem shape=128x256\n"
    "alloc w 1MiB vmem shape=256x100\n"
    "compute tile unit=mxu flops=1e6 in=v,w out=v\n"
    "free w\n"
    "release hbm\n"
    "free s\n"
    "release\n";

static strata_source *open_text(const char *text, char **path)
{
    *path = strata_test_write_temp("tape-XXXXXX.trace", text);
    GError *err = NULL;
    strata_source *src = strata_trace_open(*path, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "?");
    return src;
}

static void assert_same_ids(const uint64_t *a, const uint64_t *b, uint32_t n, const char *what, uint64_t line)
{
    for (uint32_t i = 0; i < n; i++)
        ck_assert_msg(a[i] == b[i], "line %" G_GUINT64_FORMAT " %s[%u]", line, what, i);
}

/* Every field of the bound op but `op` (bind.h's STRATA_BOUND_OP_FIELDS):
 * numbers equal, id lists equal in count and content. */
#define SAME_SELF(f)
#define SAME_KIND(f) ck_assert_int_eq(a->f, b->f);
#define SAME_NUM(f) ck_assert_msg(a->f == b->f, "line %" G_GUINT64_FORMAT ": %s differs", a->line, #f);
#define SAME_IDS(f) assert_same_ids(a->f, b->f, a->n_##f, #f, a->line);
#define SAME_COUNT(f) ck_assert_uint_eq(a->f, b->f);
#define SAME(category, type, f) SAME_##category(f)
static void assert_same_op(const strata_bound_op *a, const strata_bound_op *b)
{
    STRATA_BOUND_OP_FIELDS(SAME)
}
#undef SAME

/* Each number of the bound op set apart from a plain compute comes back
 * from the tape: a field added to the bound op with no TAPE_FIELDS line
 * fails here. */
#define SET_SELF(type, f)
#define SET_KIND(type, f)
#define SET_IDS(type, f)
#define SET_COUNT(type, f)
#define SET_NUM(type, f)                                                                                          \
    ops[n] = base;                                                                                                \
    ops[n].f = (type)7;                                                                                           \
    names[n++] = #f;
#define SET(category, type, f) SET_##category(type, f)
START_TEST(tape_carries_every_bound_field)
{
    strata_bound_op base = {.kind = STRATA_OP_COMPUTE,
                            .line = 1,
                            .device = STRATA_BIND_NONE,
                            .memory = STRATA_BIND_NONE,
                            .src_memory = STRATA_BIND_NONE,
                            .dst_memory = STRATA_BIND_NONE,
                            .route = STRATA_BIND_NONE,
                            .unit = STRATA_BIND_NONE};
    strata_bound_op ops[64];
    const char *names[64];
    size_t n = 0;
    STRATA_BOUND_OP_FIELDS(SET)
    ck_assert_uint_ge(n, 20);
    engine_tape *t = engine_tape_new(1 << 20);
    engine_op_extra x = {0};
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(engine_tape_put(t, &ops[i], &x), "put with %s set", names[i]);
    strata_bound_op back;
    engine_op_extra bx;
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(engine_tape_next(t, &back, &bx), 1);
        assert_same_op(&ops[i], &back);
    }
    engine_tape_free(t);
}
END_TEST
#undef SET

/* One bound op and its extra, copied out of the binder. */
typedef struct kept_op {
    strata_bound_op op;
    uint64_t ids[8];
    char *name;
    uint64_t rows, cols;
    uint64_t donated[4];
    uint32_t n_donated;
    uint32_t coll, phase;
} kept_op;

static void keep(kept_op *k, const strata_bound_op *op, const engine_op_extra *x)
{
    ck_assert_uint_le(op->n_ins + op->n_outs, G_N_ELEMENTS(k->ids));
    k->op = *op;
    if (op->n_ins)
        memcpy(k->ids, op->ins, op->n_ins * sizeof(uint64_t));
    if (op->n_outs)
        memcpy(k->ids + op->n_ins, op->outs, op->n_outs * sizeof(uint64_t));
    k->op.ins = k->ids;
    k->op.outs = k->ids + op->n_ins;
    k->name = g_strdup(x->name);
    k->rows = x->rows;
    k->cols = x->cols;
    k->n_donated = x->n_donated;
    k->coll = x->coll;
    k->phase = x->phase;
    if (x->n_donated)
        memcpy(k->donated, x->donated, x->n_donated * sizeof(uint64_t));
}

START_TEST(tape_gives_back_every_field)
{
    strata_hw *hw = strata_test_load_hw("tpu-v5e", NULL);
    char *path = NULL;
    strata_source *src = open_text(MIXED, &path);
    strata_bind_options bopt = {.hw = hw};
    strata_binder *b = strata_binder_new(src, &bopt);
    GError *err = NULL;
    ck_assert(strata_binder_rewind(b, &err));
    engine_tape *t = engine_tape_new(1 << 20);
    kept_op kept[32];
    size_t n = 0;
    const strata_bound_op *op = NULL;
    int got = 0;
    while ((got = strata_binder_next(b, &op, &err)) == 1) {
        ck_assert_uint_lt(n, G_N_ELEMENTS(kept));
        uint64_t donated[4];
        /* a side-table entry of the SPMD expansion's (spmd.h), made up:
         * the tape keeps it beside the op */
        engine_op_extra x = {.name = op->op->name, .coll = (uint32_t)(n % 3), .phase = n % 4 == 1 ? 2u : 0u};
        if (op->op->n_dims == 2) {
            x.rows = op->op->shape[0];
            x.cols = op->op->shape[1];
        }
        if (op->kind == STRATA_OP_COMPUTE) {
            x.n_donated = strata_ledger_donated(op->op, op->ins, donated);
            x.donated = donated;
        }
        keep(&kept[n++], op, &x);
        ck_assert(engine_tape_put(t, op, &x));
    }
    ck_assert_msg(got == 0, "%s", err ? err->message : "?");
    ck_assert_uint_eq(n, 15);
    /* the donation of line 11: a is buffer 1 */
    ck_assert_uint_eq(kept[6].n_donated, 1);
    ck_assert_uint_eq(kept[6].donated[0], 1);
    strata_bound_op back;
    engine_op_extra x;
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(engine_tape_next(t, &back, &x), 1);
        ck_assert(back.op == NULL);
        assert_same_op(&kept[i].op, &back);
        ck_assert(g_strcmp0(kept[i].name, x.name) == 0);
        ck_assert_uint_eq(kept[i].rows, x.rows);
        ck_assert_uint_eq(kept[i].cols, x.cols);
        ck_assert_uint_eq(kept[i].n_donated, x.n_donated);
        ck_assert_uint_eq(kept[i].coll, x.coll);
        ck_assert_uint_eq(kept[i].phase, x.phase);
        assert_same_ids(kept[i].donated, x.donated, x.n_donated, "donated", back.line);
        g_free(kept[i].name);
    }
    ck_assert_int_eq(engine_tape_next(t, &back, &x), 0);
    ck_assert_int_eq(engine_tape_next(t, &back, &x), 0);
    engine_tape_free(t);
    strata_binder_free(b);
    strata_source_free(src);
    strata_hw_free(hw);
    g_remove(path);
    g_free(path);
}
END_TEST

/* engine_tape_put_named (the first pass's entry for an op whose extra is
 * its name at most) against engine_tape_put with that extra spelt out: every
 * bound op of two traces (each kind, shapes, donations, kernels, time=,
 * jumping lines), put through each entry into its own tape, comes back the
 * same from both, field for field with its name and extra, and both tapes
 * take the same bytes. A fast entry that wrote anything else (a field
 * dropped, a flag mis-set, the general form where the fast one was due)
 * fails here. */
static void assert_named_put_is_general_put(const char *hw_name, const char *trace_path)
{
    strata_hw *hw = strata_test_load_hw(hw_name, NULL);
    GError *err = NULL;
    strata_source *src = strata_trace_open(trace_path, &err);
    ck_assert_msg(src != NULL, "%s", err ? err->message : "?");
    strata_bind_options bopt = {.hw = hw};
    strata_binder *b = strata_binder_new(src, &bopt);
    ck_assert(strata_binder_rewind(b, &err));
    engine_tape *general = engine_tape_new(1 << 24), *named = engine_tape_new(1 << 24);
    const strata_bound_op *op = NULL;
    int got = 0;
    uint64_t n = 0;
    while ((got = strata_binder_next(b, &op, &err)) == 1) {
        /* every other op with its name, as a run that keeps labels puts them */
        const char *name = op->kind == STRATA_OP_ALLOC || n % 2 ? op->op->name : NULL;
        engine_op_extra x = {.name = name};
        ck_assert(engine_tape_put(general, op, &x));
        ck_assert(engine_tape_put_named(named, op, name));
        n++;
    }
    ck_assert_msg(got == 0, "%s", err ? err->message : "?");
    ck_assert_uint_gt(n, 10);
    ck_assert_uint_eq(engine_tape_bytes(general), engine_tape_bytes(named));
    strata_bound_op a, c;
    engine_op_extra ax, cx;
    for (uint64_t i = 0; i < n; i++) {
        ck_assert_int_eq(engine_tape_next(general, &a, &ax), 1);
        ck_assert_int_eq(engine_tape_next(named, &c, &cx), 1);
        assert_same_op(&a, &c);
        ck_assert_msg(g_strcmp0(ax.name, cx.name) == 0, "line %" G_GUINT64_FORMAT ": names differ", a.line);
        ck_assert(cx.rows == 0 && cx.cols == 0 && cx.n_donated == 0 && cx.coll == 0 && cx.phase == 0 &&
                  cx.from == 0 && cx.lead_ps == 0 && !cx.kernel);
    }
    ck_assert_int_eq(engine_tape_next(general, &a, &ax), 0);
    ck_assert_int_eq(engine_tape_next(named, &c, &cx), 0);
    engine_tape_free(general);
    engine_tape_free(named);
    strata_binder_free(b);
    strata_source_free(src);
    strata_hw_free(hw);
}

/* Ids far from the next one and lines far apart take more bytes but come
 * back; a budget of one chunk refuses the op that would need a second. */
START_TEST(tape_budget_and_far_values)
{
    engine_tape *t = engine_tape_new(300 * 1024);
    uint64_t ins[2] = {0, UINT64_MAX};
    strata_bound_op op = {.kind = STRATA_OP_COMPUTE, .line = 1u << 30, .index = 0, .stream = 7,
                          .buf = 0, .memory = 2, .src_memory = STRATA_BIND_NONE, .dst_memory = STRATA_BIND_NONE,
                          .route = STRATA_BIND_NONE, .unit = 0, .has_time = true, .time_s = 1.5, .ins = ins,
                          .n_ins = 2};
    engine_op_extra x = {0};
    size_t puts = 0;
    while (engine_tape_put(t, &op, &x)) {
        puts++;
        op.index++;
        op.line += 1000;
    }
    ck_assert_uint_gt(puts, 1000);
    ck_assert_uint_le(engine_tape_bytes(t), 300 * 1024);
    strata_bound_op back;
    for (size_t i = 0; i < puts; i++) {
        ck_assert_int_eq(engine_tape_next(t, &back, &x), 1);
        ck_assert_uint_eq(back.index, i);
        ck_assert_uint_eq(back.line, (1u << 30) + 1000 * i);
        ck_assert_uint_eq(back.ins[0], 0);
        ck_assert_uint_eq(back.ins[1], UINT64_MAX);
        ck_assert(back.time_s == 1.5);
    }
    ck_assert_int_eq(engine_tape_next(t, &back, &x), 0);
    engine_tape_free(t);
}
END_TEST

/* A wait on event `event` bound to nothing else: the op the queue tests put. */
static strata_bound_op queued_wait(uint32_t event)
{
    return (strata_bound_op){.kind = STRATA_OP_WAIT, .device = STRATA_BIND_NONE, .memory = STRATA_BIND_NONE,
                             .src_memory = STRATA_BIND_NONE, .dst_memory = STRATA_BIND_NONE,
                             .route = STRATA_BIND_NONE, .unit = STRATA_BIND_NONE, .event = event};
}

/* Varints of every length come back (engine_tape.c's get_varint reads a
 * varint's first three bytes unrolled, the rest in a loop): at each 7-bit
 * boundary, 2^(7k) - 1 takes k bytes and 2^(7k) takes k + 1 (k = 1..9), 0
 * one and UINT64_MAX ten; as an alloc's bytes (fast form) and as a
 * wait's group size (a field no fast form carries: the general form). The alloc's name must come back after its bytes: a
 * varint read one byte short or long would move it. */
START_TEST(tape_varints_of_every_length_come_back)
{
    uint64_t values[20] = {0, UINT64_MAX};
    for (unsigned k = 1; k <= 9; k++) {
        values[2 * k] = (UINT64_C(1) << (7 * k)) - 1;
        values[2 * k + 1] = UINT64_C(1) << (7 * k);
    }
    engine_tape *t = engine_tape_new(1 << 20);
    for (uint64_t i = 0; i < 20; i++) {
        strata_bound_op alloc = {.kind = STRATA_OP_ALLOC, .index = 2 * i, .line = 2 * i + 1, .buf = i,
                                 .bytes = values[i], .memory = 0, .device = 0, .src_memory = STRATA_BIND_NONE,
                                 .dst_memory = STRATA_BIND_NONE, .route = STRATA_BIND_NONE,
                                 .unit = STRATA_BIND_NONE};
        strata_bound_op wait = queued_wait(1);
        wait.index = 2 * i + 1;
        wait.line = 2 * i + 2;
        wait.group_size = (uint32_t)values[i];
        ck_assert(engine_tape_put_named(t, &alloc, "b"));
        ck_assert(engine_tape_put_named(t, &wait, NULL));
    }
    strata_bound_op back;
    engine_op_extra x;
    for (uint64_t i = 0; i < 20; i++) {
        ck_assert_int_eq(engine_tape_next(t, &back, &x), 1);
        ck_assert_int_eq(back.kind, STRATA_OP_ALLOC);
        ck_assert_uint_eq(back.bytes, values[i]);
        ck_assert_uint_eq(back.buf, i);
        ck_assert_uint_eq(back.line, 2 * i + 1);
        ck_assert_str_eq(x.name, "b");
        ck_assert_int_eq(engine_tape_next(t, &back, &x), 1);
        ck_assert_int_eq(back.kind, STRATA_OP_WAIT);
        ck_assert_uint_eq(back.group_size, (uint32_t)values[i]);
        ck_assert_uint_eq(back.index, 2 * i + 1);
        ck_assert(x.name == NULL);
    }
    ck_assert_int_eq(engine_tape_next(t, &back, &x), 0);
    engine_tape_free(t);
}
END_TEST


/* Two queues (tapes whose puts and nexts interleave) sharing a pool of one
 * spare chunk: ops whose indices jump (a queue holds one stream's ops, the
 * others' fall between) come back with their index and line, in the fast
 * form, whichever queue empties and fills again. */
START_TEST(tape_queues_share_a_pool_and_keep_jumping_indices)
{
    engine_tape_pool *pool = engine_tape_pool_new(1024, 1, 0, "test queues");
    engine_tape *q[2] = {engine_tape_new_sized(SIZE_MAX, 1024, pool), engine_tape_new_sized(SIZE_MAX, 1024, pool)};
    strata_bound_op op = queued_wait(3);
    engine_op_extra x = {0};
    strata_bound_op back;
    /* op i goes to queue i % 3 == 0 ? 0 : 1, index 5 i, line 7 i + 2:
     * queue 0 is emptied after every put, queue 1 every fourth */
    uint64_t pending[2][8], n_pending[2] = {0, 0};
    for (uint64_t i = 0; i < 40; i++) {
        int k = i % 3 == 0 ? 0 : 1;
        op.index = 5 * i;
        op.line = 7 * i + 2;
        op.event_seq = i;
        op.stream = (uint32_t)k;
        ck_assert(engine_tape_put(q[k], &op, &x));
        pending[k][n_pending[k]++] = i;
        for (int j = 0; j < 2; j++) {
            if (j == 1 && i % 4 != 3)
                continue;
            for (uint64_t m = 0; m < n_pending[j]; m++) {
                uint64_t want = pending[j][m];
                ck_assert_int_eq(engine_tape_next(q[j], &back, &x), 1);
                ck_assert_uint_eq(back.index, 5 * want);
                ck_assert_uint_eq(back.line, 7 * want + 2);
                ck_assert_uint_eq(back.event_seq, want);
                ck_assert_uint_eq(back.stream, (uint32_t)j);
                ck_assert_uint_eq(back.event, 3);
            }
            n_pending[j] = 0;
            ck_assert_int_eq(engine_tape_next(q[j], &back, &x), 0);
        }
    }
    /* a put left unread when its tape is freed: its chunk goes too */
    ck_assert(engine_tape_put(q[1], &op, &x));
    engine_tape_free(q[0]);
    engine_tape_free(q[1]);
    engine_tape_pool_free(pool);
}
END_TEST

/* A queue far behind its writer, in a pool that may hold 2 KiB in memory
 * (two chunks of 1 KiB): its full chunks past the first go to the pool's
 * file and come back in order, fields intact, while another queue of the
 * pool keeps step (it holds its one chunk, never spilled); a second round
 * reuses the file from its start (all of it was read back), and a tape
 * freed with chunks on file leaves nothing behind (ASan). */
START_TEST(tape_queue_spills_past_its_pool_bound_and_reads_back_in_order)
{
    engine_tape_pool *pool = engine_tape_pool_new(1024, 4, 2048, "test queues");
    engine_tape *q[2] = {engine_tape_new_sized(SIZE_MAX, 1024, pool), engine_tape_new_sized(SIZE_MAX, 1024, pool)};
    strata_bound_op op = queued_wait(3);
    engine_op_extra x = {0};
    strata_bound_op back;
    uint64_t spilled_before = 0;
    for (int round = 0; round < 2; round++) {
        /* 3,000 ops to queue 1 (index 5 i, line 7 i + 2, seq i: a few bytes
         * each, some 20 chunks), every third op also to queue 0, read at once */
        for (uint64_t i = 0; i < 3000; i++) {
            op.index = 5 * i;
            op.line = 7 * i + 2;
            op.event_seq = i;
            op.stream = 1;
            ck_assert(engine_tape_put(q[1], &op, &x));
            if (i % 3 == 0) {
                op.stream = 0;
                ck_assert(engine_tape_put(q[0], &op, &x));
                ck_assert_int_eq(engine_tape_next(q[0], &back, &x), 1);
                ck_assert_uint_eq(back.event_seq, i);
                ck_assert_int_eq(engine_tape_next(q[0], &back, &x), 0);
            }
        }
        /* more than the pool's 2 KiB went to the file: the chunks of queue 1 but its first and its last */
        ck_assert_uint_gt(engine_tape_pool_spilled(pool), spilled_before + 10 * 1024);
        spilled_before = engine_tape_pool_spilled(pool);
        for (uint64_t i = 0; i < 3000; i++) {
            ck_assert_int_eq(engine_tape_next(q[1], &back, &x), 1);
            ck_assert_uint_eq(back.index, 5 * i);
            ck_assert_uint_eq(back.line, 7 * i + 2);
            ck_assert_uint_eq(back.event_seq, i);
            ck_assert_uint_eq(back.stream, 1);
            ck_assert_uint_eq(back.event, 3);
        }
        ck_assert_int_eq(engine_tape_next(q[1], &back, &x), 0);
    }
    /* a tape freed while some of its chunks are on file */
    for (uint64_t i = 0; i < 3000; i++)
        ck_assert(engine_tape_put(q[1], &op, &x));
    ck_assert_uint_gt(engine_tape_pool_spilled(pool), spilled_before);
    engine_tape_free(q[0]);
    engine_tape_free(q[1]);
    engine_tape_pool_free(pool);
}
END_TEST

/* How a child runs the engine: its options (0: the defaults), and where
 * its temporary files go (NULL: TMPDIR as it is) and the most bytes a file
 * of its may hold (0: no limit; a larger write fails with EFBIG). */
typedef struct child_case {
    size_t tape_budget, tape_memory, queue_memory;
    const char *tmpdir;
    rlim_t file_size_max;
} child_case;

/* Runs the engine in a child process (one SimGrid engine per process) as
 * c says and returns its results JSON and timeline, concatenated (or
 * "error N: " and the error message, N its exit status). A model of
 * several devices runs the SPMD expansion of the trace. */
static char *run_in_child_as(const char *hw_name, const char *const *overrides, const char *allocator,
                             const char *trace_path, const child_case *c)
{
    char *dir = strata_test_temp_dir();
    char *out = g_build_filename(dir, "out.txt", NULL);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        strata_hw *hw = strata_test_load_hw(hw_name, overrides);
        GError *err = NULL;
        strata_source *src = strata_trace_open(trace_path, &err);
        if (src && strata_hw_devices(hw) > 1) /* as run does: the program over the devices */
            src = strata_spmd_expand(src, hw);
        FILE *f = fopen(out, "w");
        FILE *timeline = tmpfile();
        if (c->tmpdir)
            g_setenv("TMPDIR", c->tmpdir, TRUE);
        if (c->file_size_max) { /* a write past it fails (EFBIG) instead of raising SIGXFSZ */
            signal(SIGXFSZ, SIG_IGN);
            struct rlimit lim = {c->file_size_max, c->file_size_max};
            setrlimit(RLIMIT_FSIZE, &lim);
        }
        strata_engine_options opt;
        strata_engine_options_init(&opt);
        opt.tape_budget = c->tape_budget;
        opt.tape_memory = c->tape_memory;
        opt.queue_memory = c->queue_memory;
        opt.timeline = timeline;
        opt.allocator = allocator;
        strata_results *r = NULL;
        if (src && strata_engine_run(hw, src, &opt, &r, &err)) {
            char *json = strata_results_to_json_text(r);
            fputs(json, f);
            g_free(json);
            rewind(timeline);
            int c;
            while ((c = fgetc(timeline)) != EOF)
                fputc(c, f);
            strata_results_free(r);
        } else {
            fprintf(f, "error %d: %s\n", strata_exit_for_error(err), err ? err->message : "?");
        }
        fclose(f);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *text = NULL;
    ck_assert(g_file_get_contents(out, &text, NULL, NULL));
    g_remove(out);
    g_rmdir(dir);
    g_free(out);
    g_free(dir);
    return text;
}

static char *run_in_child_queued(const char *hw_name, const char *const *overrides, const char *allocator,
                                 const char *trace_path, size_t budget, size_t queue_memory)
{
    child_case c = {.tape_budget = budget, .queue_memory = queue_memory};
    return run_in_child_as(hw_name, overrides, allocator, trace_path, &c);
}

static char *run_in_child(const char *hw_name, const char *const *overrides, const char *allocator,
                          const char *trace_path, size_t budget)
{
    return run_in_child_queued(hw_name, overrides, allocator, trace_path, budget, 0);
}

static void assert_replay_equals_reread(const char *hw_name, const char *const *overrides, const char *allocator,
                                        const char *trace_path, const char *expect)
{
    char *replayed = run_in_child(hw_name, overrides, allocator, trace_path, 0);
    char *reread = run_in_child(hw_name, overrides, allocator, trace_path, 1);
    ck_assert_msg(strstr(replayed, expect), "%s: expected '%s' in\n%.2000s", trace_path, expect, replayed);
    ck_assert_msg(strcmp(replayed, reread) == 0, "%s: replay and re-read differ", trace_path);
    g_free(replayed);
    g_free(reread);
}

START_TEST(tape_named_put_is_the_general_put)
{
    char *path = strata_test_write_temp("tape-XXXXXX.trace", MIXED);
    char *tour = strata_test_source_path("traces/examples/format-tour.trace");
    char *offload = strata_test_source_path("traces/examples/train-step-offload.trace");
    assert_named_put_is_general_put("tpu-v5e", path);
    assert_named_put_is_general_put("tpu-v5e", tour);
    assert_named_put_is_general_put("h100", offload);
    /* and the first pass's choice of entry (engine_feed.c's tape_op: the
     * named one only where extra_of() would give a name at most): a kernel
     * op's cost, a donation and 2-D shapes (MIXED's, above) reach the tape
     * as when the second pass reads the source again */
    char *kernels = strata_test_write_temp("tape-XXXXXX.trace",
                                           "strata-trace 1\n"
                                           "alloc a 64KiB dtype=bf16 shape=128x256\n"
                                           "alloc w 128KiB dtype=bf16 shape=256x256\n"
                                           "alloc c 64KiB dtype=bf16\n"
                                           "compute g flops=1e7 in=a,w out=c kernel=gemm dims=128x256x256\n"
                                           "compute d flops=1e6 in=a,c out=c donate=a\n"
                                           "free w\n");
    assert_replay_equals_reread("h100", NULL, NULL, kernels, "\"status\" : \"ok\"");
    g_remove(kernels);
    g_free(kernels);
    g_free(tour);
    g_free(offload);
    g_remove(path);
    g_free(path);
}
END_TEST

START_TEST(replay_and_reread_agree_on_examples)
{
    char *tour = strata_test_source_path("traces/examples/format-tour.trace");
    char *offload = strata_test_source_path("traces/examples/train-step-offload.trace");
    assert_replay_equals_reread("tpu-v5e", NULL, NULL, tour, "\"status\" : \"ok\"");
    assert_replay_equals_reread("h100", NULL, NULL, offload, "\"status\" : \"ok\"");
    g_free(tour);
    g_free(offload);
}
END_TEST

/* Collectives in phases: the expansion's side table (each step's
 * collective and phase, spmd.h) kept on the tape beside the op, or read
 * again with the ops, gives the same run. */
START_TEST(replay_and_reread_agree_on_collective_phases)
{
    char *collectives = strata_test_source_path("traces/spmd/collectives.trace");
    assert_replay_equals_reread("test-ring8", NULL, NULL, collectives, "\"algo\" : \"torus\"");
    assert_replay_equals_reread("dgx-h100", NULL, NULL, collectives, "\"protocol\" : ");
    g_free(collectives);
}
END_TEST

START_TEST(replay_and_reread_agree_on_oom_tile_and_plan)
{
    char *path = strata_test_write_temp("tape-XXXXXX.trace", MIXED);
    static const char *const small[] = {"memory.hbm.capacity=6MiB", NULL};
    assert_replay_equals_reread("tpu-v5e", small, NULL, path, "\"status\" : \"oom\"");
    assert_replay_equals_reread("tpu-v5e", NULL, NULL, path, "\"status\" : \"ok\"");
    char *tour = strata_test_source_path("traces/examples/format-tour.trace");
    assert_replay_equals_reread("tpu-v5e", NULL, "offline", tour, "\"status\" : \"ok\"");
    g_free(tour);
    g_remove(path);
    g_free(path);
}
END_TEST

/* A trace of 6 n + 1 ops on two streams (the tape keeps their labels, for
 * the timeline: about 20 bytes an op). */
static char *write_long_trace(int n)
{
    GString *text = g_string_new("strata-trace 1\nalloc staging 64KiB host stream=dma\n");
    for (int i = 0; i < n; i++)
        g_string_append_printf(text, "alloc b%d %dKiB stream=dma\ncopy b%d staging stream=dma\nrecord e stream=dma\n"
                                     "wait e\ncompute k%d flops=1e9 in=b%d\nfree b%d\n",
                               i % 3, 64 + i % 5, i % 3, i % 7, i % 3, i % 3);
    char *path = strata_test_write_temp("tape-XXXXXX.trace", text->str);
    g_string_free(text, TRUE);
    return path;
}

/* A trace whose tape outgrows a budget of one chunk: the tape is dropped
 * part way through the first pass and the second reads the source again. */
START_TEST(replay_and_reread_agree_when_the_tape_is_dropped_part_way)
{
    char *path = write_long_trace(8000);
    char *replayed = run_in_child("test-simple", NULL, NULL, path, 0);
    char *dropped = run_in_child("test-simple", NULL, NULL, path, 300 * 1024);
    char *reread = run_in_child("test-simple", NULL, NULL, path, 1);
    ck_assert_msg(strstr(replayed, "\"ops\" : 48001"), "%.2000s", replayed);
    ck_assert(strcmp(replayed, dropped) == 0);
    ck_assert(strcmp(replayed, reread) == 0);
    g_free(replayed);
    g_free(dropped);
    g_free(reread);
    g_remove(path);
    g_free(path);
}
END_TEST

/* The first pass's tape with 1 byte of it in memory: its chunks after its
 * first (but its last) wait in the temporary file (ENGINE_TAPE_CHUNK, 256 KiB each;
 * the tape of 72,001 ops takes some 1.4 MB) and the second pass reads them
 * back. The run is the same as the one that keeps the tape in memory, and
 * with the queued ops on file as well. That the tape went to the file
 * shows when the file cannot be: with TMPDIR a folder that does not exist,
 * or a file size limit of 300 KiB (its second chunk on file passes it),
 * the run fails with the cause (exit 2), where the one that keeps its tape
 * in memory runs. */
START_TEST(tape_on_file_gives_the_same_run_or_says_why_not)
{
    char *path = write_long_trace(12000);
    const char *nowhere = "/nonexistent-strata-test-folder";
    child_case in_memory = {0}, on_file = {.tape_memory = 1}, both = {.tape_memory = 1, .queue_memory = 1};
    child_case no_folder = {.tape_memory = 1, .tmpdir = nowhere}, kept_no_folder = {.tmpdir = nowhere};
    child_case too_large = {.tape_memory = 1, .file_size_max = 300 * 1024};
    char *kept = run_in_child_as("test-simple", NULL, NULL, path, &in_memory);
    char *spilled = run_in_child_as("test-simple", NULL, NULL, path, &on_file);
    char *spilled_both = run_in_child_as("test-simple", NULL, NULL, path, &both);
    char *kept_anyway = run_in_child_as("test-simple", NULL, NULL, path, &kept_no_folder);
    char *failed_create = run_in_child_as("test-simple", NULL, NULL, path, &no_folder);
    char *failed_write = run_in_child_as("test-simple", NULL, NULL, path, &too_large);
    ck_assert_msg(strstr(kept, "\"ops\" : 72001"), "%.2000s", kept);
    ck_assert(strcmp(kept, spilled) == 0);
    ck_assert(strcmp(kept, spilled_both) == 0);
    ck_assert(strcmp(kept, kept_anyway) == 0);
    char *want = g_strdup_printf("error 2: %s:", path);
    ck_assert_msg(g_str_has_prefix(failed_create, want), "%.2000s", failed_create);
    ck_assert_msg(g_str_has_suffix(failed_create, ": cannot create the temporary file of the first pass's tape in "
                                                  "'/nonexistent-strata-test-folder' (No such file or directory); "
                                                  "set TMPDIR to a writable folder with room\n"),
                  "%.2000s", failed_create);
    ck_assert_msg(g_str_has_prefix(failed_write, want), "%.2000s", failed_write);
    ck_assert_msg(strstr(failed_write, ": cannot write the temporary file of the first pass's tape in '") &&
                      g_str_has_suffix(failed_write, "' (File too large); set TMPDIR to a writable folder with room\n"),
                  "%.2000s", failed_write);
    g_free(want);
    g_free(kept);
    g_free(spilled);
    g_free(spilled_both);
    g_free(kept_anyway);
    g_free(failed_create);
    g_free(failed_write);
    g_remove(path);
    g_free(path);
}
END_TEST

/* The spill file's records (engine_spill.h): each reads back as appended,
 * with its link as last set; once all are let go the file starts over at
 * offset 0; a file that cannot be made fails every call after, and says
 * why. */
START_TEST(spill_records_read_back_and_failures_say_why)
{
    char *dir = strata_test_temp_dir();
    g_setenv("TMPDIR", dir, TRUE);
    engine_spill *s = engine_spill_new("test records");
    uint64_t off[3], link = 0, n = 0;
    char got[8];
    ck_assert(engine_spill_append(s, 7, "abc", 3, &off[0]));
    ck_assert(engine_spill_append(s, 0, "defgh", 5, &off[1]));
    ck_assert_uint_eq(off[0], 0);
    ck_assert_uint_eq(off[1], 16 + 3); /* after the first record's header and bytes */
    ck_assert(engine_spill_set_link(s, off[0], off[1]));
    ck_assert(engine_spill_read_header(s, off[0], &link, &n));
    ck_assert_uint_eq(link, off[1]);
    ck_assert_uint_eq(n, 3);
    ck_assert(engine_spill_read_header(s, off[1], &link, &n));
    ck_assert_uint_eq(link, 0);
    ck_assert(engine_spill_read_data(s, off[1], got, (size_t)n));
    ck_assert(memcmp(got, "defgh", 5) == 0);
    engine_spill_let_go(s, 2);
    ck_assert(engine_spill_append(s, 1, "i", 1, &off[2]));
    ck_assert_uint_eq(off[2], 0); /* all let go: from the start */
    ck_assert_uint_eq(engine_spill_bytes(s), 3 * 16 + 9);
    ck_assert_ptr_null(engine_spill_failure(s));
    engine_spill_free(s);

    g_setenv("TMPDIR", "/nonexistent-strata-test-folder", TRUE);
    s = engine_spill_new("test records");
    ck_assert(!engine_spill_append(s, 0, "abc", 3, &off[0]));
    ck_assert_str_eq(engine_spill_failure(s), "cannot create the temporary file of the test records in "
                                              "'/nonexistent-strata-test-folder' (No such file or directory)");
    ck_assert(!engine_spill_read_header(s, 0, &link, &n));
    engine_spill_free(s);
    g_unsetenv("TMPDIR");
    g_rmdir(dir);
    g_free(dir);
}
END_TEST

/* Issue 40's punch (engine_spill.h, invariant 4): four records of 64 KiB
 * (offsets 0, 65,552, 131,104, 196,656: a 16-byte header each); the
 * first two released give back every block wholly inside them, which is
 * all of their 131,104 bytes but less than a block at each of their ends
 * (B, the file's st_blksize); the third, which shares a block with the
 * second, still reads back whole; once all four are let go the file is
 * truncated to nothing. Needs a TMPDIR that can punch (ext4, xfs, tmpfs). */
START_TEST(spill_gives_back_the_blocks_of_what_is_read)
{
    enum { N = 65536, REC = N + 16 };
    char *dir = strata_test_temp_dir();
    g_setenv("TMPDIR", dir, TRUE);
    GStatBuf st;
    ck_assert_int_eq(g_stat(dir, &st), 0);
    uint64_t block = (uint64_t)st.st_blksize;
    engine_spill *s = engine_spill_new("test records");
    uint8_t *data = g_malloc(N), *got = g_malloc(N);
    uint64_t off[4], link = 0, n = 0;
    for (int r = 0; r < 4; r++) {
        memset(data, 'a' + r, N);
        ck_assert(engine_spill_append(s, 0, data, N, &off[r]));
        ck_assert_uint_eq(off[r], (uint64_t)r * REC);
    }
    uint64_t written = engine_spill_bytes(s), before = engine_spill_allocated(s);
    ck_assert_uint_eq(written, 4 * REC);
    ck_assert_uint_ge(before, written / block * block); /* every byte written takes its block */
    for (int r = 0; r < 2; r++) {
        ck_assert(engine_spill_read_data(s, off[r], got, N));
        engine_spill_release(s, off[r], N);
    }
    uint64_t after_two = engine_spill_allocated(s);
    ck_assert_uint_le(after_two, before);
    ck_assert_uint_gt(before - after_two, 2 * REC - 4 * block); /* less than a block lost at each end */
    ck_assert_uint_lt(after_two, written);
    ck_assert(engine_spill_read_header(s, off[2], &link, &n));
    ck_assert_uint_eq(n, N);
    ck_assert(engine_spill_read_data(s, off[2], got, N));
    memset(data, 'c', N);
    ck_assert(memcmp(got, data, N) == 0); /* its first block, shared with record 1, kept */
    engine_spill_release(s, off[2], N);
    engine_spill_release(s, off[3], N); /* the last: the file is truncated */
    ck_assert_uint_eq(engine_spill_allocated(s), 0);
    ck_assert(engine_spill_append(s, 0, "z", 1, &off[0]));
    ck_assert_uint_eq(off[0], 0);
    ck_assert(engine_spill_read_data(s, off[0], got, 1));
    ck_assert_int_eq(got[0], 'z');
    ck_assert_ptr_null(engine_spill_failure(s));
    engine_spill_free(s);
    g_free(data);
    g_free(got);
    g_unsetenv("TMPDIR");
    g_rmdir(dir);
    g_free(dir);
}
END_TEST

/* A first-pass tape of 64 KiB chunks with 1 byte of them in memory (its
 * chunks but the head and the tail go to the file): its 400,000 ops come
 * back as put, and the file gives back its disk as they are read. Halfway
 * through, what is left on file is at most the second half of what was
 * written plus the chunk being read and, for each record released, less
 * than a block at each end; after the last chunk on file is read, none. */
START_TEST(tape_on_file_gives_back_its_disk_as_it_is_replayed)
{
    enum { CHUNK = 64 * 1024, OPS = 400000 };
    char *dir = strata_test_temp_dir();
    g_setenv("TMPDIR", dir, TRUE);
    GStatBuf st;
    ck_assert_int_eq(g_stat(dir, &st), 0);
    uint64_t block = (uint64_t)st.st_blksize;
    engine_tape_pool *pool = engine_tape_pool_new(CHUNK, 1, 1, "test tape");
    engine_tape *t = engine_tape_new_sized(SIZE_MAX, CHUNK, pool);
    strata_bound_op op = queued_wait(3), back;
    engine_op_extra x = {0};
    for (uint64_t i = 0; i < OPS; i++) {
        op.index = i;
        op.line = 3 * i + 2;
        op.event_seq = i % 100; /* ops of one size: half the ops, half the bytes */
        ck_assert(engine_tape_put(t, &op, &x));
    }
    uint64_t written = engine_tape_pool_spilled(pool), records = written / CHUNK + 1;
    ck_assert_uint_gt(written, 10 * CHUNK);
    ck_assert_uint_ge(engine_tape_pool_file_allocated(pool), written / block * block);
    uint64_t half = 0;
    for (uint64_t i = 0; i < OPS; i++) {
        ck_assert_int_eq(engine_tape_next(t, &back, &x), 1);
        ck_assert_uint_eq(back.index, i);
        ck_assert_uint_eq(back.line, 3 * i + 2);
        ck_assert_uint_eq(back.event_seq, i % 100);
        if (i == OPS / 2)
            half = engine_tape_pool_file_allocated(pool);
    }
    ck_assert_int_eq(engine_tape_next(t, &back, &x), 0);
    ck_assert_uint_le(half, written / 2 + (CHUNK + 16) + 2 * block * records);
    ck_assert_uint_lt(half, written);
    ck_assert_uint_eq(engine_tape_pool_file_allocated(pool), 0);
    ck_assert_ptr_null(engine_tape_pool_failure(pool));
    engine_tape_free(t);
    engine_tape_pool_free(pool);
    g_unsetenv("TMPDIR");
    g_rmdir(dir);
    g_free(dir);
}
END_TEST

/* Two streams drifting far apart in file order (stream a's 20,000 ops,
 * then stream b's, joined by events only at the end: b's first op is read
 * after all of a's, which wait in a's queue): with at most 1 byte of
 * queued ops in memory, a's chunks but its first and last wait in the
 * temporary file, and the run is the same, replayed or read again. */
START_TEST(queued_ops_on_file_give_the_same_run)
{
    GString *text = g_string_new("strata-trace 1\nalloc wa 1MiB stream=a\nalloc wb 1MiB stream=b\n");
    for (int s = 0; s < 2; s++) {
        for (int i = 0; i < 20000; i++)
            g_string_append_printf(text, "compute k%d flops=%de6 in=w%c stream=%c\n", i % 3, 1 + i % 4, "ab"[s],
                                   "ab"[s]);
        g_string_append(text, s == 0 ? "record ea stream=a\n" : "wait ea stream=b\nrecord eb stream=b\n");
    }
    g_string_append(text, "wait eb stream=a\nfree wa stream=a\nfree wb stream=b\n");
    char *path = strata_test_write_temp("tape-XXXXXX.trace", text->str);
    g_string_free(text, TRUE);
    char *kept = run_in_child("test-simple", NULL, NULL, path, 0);
    char *spilled = run_in_child_queued("test-simple", NULL, NULL, path, 0, 1);
    char *reread = run_in_child_queued("test-simple", NULL, NULL, path, 1, 1);
    ck_assert_msg(strstr(kept, "\"ops\" : 40008"), "%.2000s", kept);
    ck_assert(strcmp(kept, spilled) == 0);
    ck_assert(strcmp(kept, reread) == 0);
    g_free(kept);
    g_free(spilled);
    g_free(reread);
    g_remove(path);
    g_free(path);
}
END_TEST

static Suite *tape_suite(void)
{
    Suite *s = suite_create("engine_tape");
    TCase *tc = tcase_create("tape");
    tcase_set_timeout(tc, 300); /* under ASan on 2 loaded cores the spill run takes tens of seconds */
    tcase_add_test(tc, tape_gives_back_every_field);
    tcase_add_test(tc, tape_carries_every_bound_field);
    tcase_add_test(tc, tape_named_put_is_the_general_put);
    tcase_add_test(tc, tape_budget_and_far_values);
    tcase_add_test(tc, tape_varints_of_every_length_come_back);
    tcase_add_test(tc, tape_queues_share_a_pool_and_keep_jumping_indices);
    tcase_add_test(tc, tape_queue_spills_past_its_pool_bound_and_reads_back_in_order);
    tcase_add_test(tc, queued_ops_on_file_give_the_same_run);
    tcase_add_test(tc, replay_and_reread_agree_on_examples);
    tcase_add_test(tc, replay_and_reread_agree_on_collective_phases);
    tcase_add_test(tc, replay_and_reread_agree_on_oom_tile_and_plan);
    tcase_add_test(tc, replay_and_reread_agree_when_the_tape_is_dropped_part_way);
    tcase_add_test(tc, spill_records_read_back_and_failures_say_why);
    tcase_add_test(tc, spill_gives_back_the_blocks_of_what_is_read);
    tcase_add_test(tc, tape_on_file_gives_back_its_disk_as_it_is_replayed);
    tcase_add_test(tc, tape_on_file_gives_the_same_run_or_says_why_not);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return strata_test_main(tape_suite());
}
