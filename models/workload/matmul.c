/*
 * matmul.c: `strata gen matmul`, a Pallas-style blocked matmul C = A @ B on
 * a TPU core's memories: A[m,k], B[k,n], C[m,n] in HBM, blocks in VMEM, the
 * f32 accumulator in VMEM (or `acc=acc` for accumulator memory).
 *
 * Schedule: the grid is (m/bm, n/bn, k/bk) with k innermost; step s works on
 * blocks A[i,kk] (bm x bk) and B[kk,j] (bk x bn).
 *  - `buffers` = N slots for each of the A and B blocks in VMEM (N=1: no
 *    overlap; N=2: double buffering; N=3: triple). Step s uses slot s mod N.
 *  - A fetch of step s: main records `go_SLOT`; stream dma_aSLOT copies the
 *    A block HBM -> VMEM and records `a_ready_SLOT`, stream dma_bSLOT the B
 *    block and `b_ready_SLOT` (one DMA and semaphore per input, as a Pallas
 *    pipeline has). The two are in flight together, and with the fetch of
 *    the next step, so a DMA's issue latency overlaps earlier transfers.
 *  - Step s on main, the Pallas pipeline's order: `compute step_I_J_K` on
 *    `step_unit` (default scalar: the grid-step overhead, its `overhead`),
 *    the DMA wait at the top of the step (`wait a_ready_SLOT`, `wait
 *    b_ready_SLOT`), the fetch of step s+N-1 into the slot step s-1 read
 *    (main is past it, in program order), then the MXU op (2*bm*bn*bk flops,
 *    in= the two blocks and, after the first k step, the accumulator; out=
 *    the accumulator). N-1 fetches are issued before the first step; with
 *    N=1 each step issues its own fetch right before its wait.
 *  - When k completes for tile (i,j), main casts the accumulator into an
 *    output slot (bm*bn flops; N output slots), and stream dma_out writes it
 *    back VMEM -> HBM into C, then `record out_done_SLOT`; main waits for it
 *    before reusing that output slot.
 * Costs come from the hardware model, not from here: the step unit's
 * `overhead` (per grid step) and `launch` (once), the HBM <-> VMEM link's
 * latency and bandwidth, the MXU's flops for the dtype and its `tile` (a
 * block's K and N padded to the systolic array), see configs/hw/tpu-v5e.ini
 * and docs/workloads-policies.md.
 * The ops are generated one grid tile at a time (a streaming source), so a
 * grid of millions of steps needs memory for one tile's k steps only.
 * Tags: A input, B param, C output, blocks and accumulator temp. A and B are
 * allocated first, then `compute program_start time=0` marks the start (they
 * are the arguments); C is allocated at its first write-back (the output).
 * The kernel's computes run on unit= `unit` (default mxu, whose operands are
 * in VMEM in configs/hw/tpu-*.ini).
 */
#include "workload/workload.h"
#include <string.h>
#include "core/error.h"

static const char *const acc_choices[] = {"vmem", "acc", NULL};

static const strata_param_def matmul_params[] = {
    {"m", STRATA_PARAM_INT, "4096", "rows of A and C", NULL},
    {"n", STRATA_PARAM_INT, "4096", "columns of B and C", NULL},
    {"k", STRATA_PARAM_INT, "4096", "columns of A, rows of B (the reduction)", NULL},
    {"bm", STRATA_PARAM_INT, "512", "block rows (must divide m)", NULL},
    {"bn", STRATA_PARAM_INT, "512", "block columns (must divide n)", NULL},
    {"bk", STRATA_PARAM_INT, "512", "block depth (must divide k)", NULL},
    STRATA_WORKLOAD_DTYPE_PARAM("dtype", "bf16", "element type of A, B and C (the accumulator is f32)"),
    {"buffers", STRATA_PARAM_INT, "2", "VMEM slots per input block: 1 none, 2 double, 3 triple buffering", NULL},
    {"acc", STRATA_PARAM_STRING, "vmem", "memory holding the f32 accumulator: vmem or acc", acc_choices},
    {"unit", STRATA_PARAM_STRING, "mxu", "compute unit of the kernel steps (one whose operands are in VMEM)", NULL},
    {"step_unit", STRATA_PARAM_STRING, "scalar",
     "unit that runs each grid step's bookkeeping (its overhead is the per-step cost); none: no step ops", NULL},
    {NULL, 0, NULL, NULL, NULL},
};

typedef struct mm_ctx {
    strata_op_list *list;
    uint64_t m, n, k, bm, bn, bk, e;
    strata_dtype dt;
    uint32_t slots;
    uint64_t gi, gj, gk; /* grid extents */
    const char *unit, *acc_mem, *step_unit; /* step_unit NULL: no per-step op */
    strata_params *params; /* owns unit and acc_mem */
    uint64_t phase;        /* 0 prologue, 1..gi*gj tiles, then the epilogue, then the end */
    size_t cursor;         /* next op of `list`, the current phase's ops */
} mm_ctx;

/* The ops, built by trace/op.h's builders into c->list. */
static void emit(mm_ctx *c, strata_op op) { strata_op_list_append(c->list, &op); }

static void emit_alloc(mm_ctx *c, const char *name, uint64_t rows, uint64_t cols, strata_dtype dt,
                       const char *memory, strata_tag tag)
{
    strata_op op = strata_op_make_alloc(NULL, name, rows * cols * (strata_dtype_bits(dt) / 8), memory, tag);
    strata_op_set_shape(&op, dt, 2, (const uint64_t[]){rows, cols});
    emit(c, op);
}

static void emit_event(mm_ctx *c, strata_op_kind kind, const char *stream, const char *fmt, uint32_t slot)
{
    char name[32];
    g_snprintf(name, sizeof name, fmt, slot);
    emit(c, strata_op_make(kind, stream, name));
}

static void emit_compute(mm_ctx *c, const char *label, double flops, const char **ins, uint32_t n_ins,
                         const char *out, const char *unit)
{
    emit(c, strata_op_make_compute(NULL, label, flops, ins, n_ins, out ? &out : NULL, out ? 1 : 0, unit));
}

/* The fetch of step s into slot s mod N, issued by main (`record go_SLOT`):
 * the A block on stream dma_aSLOT, the B block on dma_bSLOT, each with its
 * own ready event (a Pallas input's DMA and its semaphore). All of them can
 * be in flight together, so each DMA's issue latency overlaps the transfers
 * before it. */
static void emit_fetch(mm_ctx *c, uint64_t s)
{
    uint32_t slot = (uint32_t)(s % c->slots);
    emit_event(c, STRATA_OP_RECORD, STRATA_DEFAULT_STREAM, "go_%u", slot);
    const struct { const char *stream, *block, *src, *ready; uint64_t bytes; } in[] = {
        {"dma_a%u", "a_blk%u", "A", "a_ready_%u", c->bm * c->bk * c->e},
        {"dma_b%u", "b_blk%u", "B", "b_ready_%u", c->bk * c->bn * c->e},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(in); i++) {
        char stream[32], dst[32];
        g_snprintf(stream, sizeof stream, in[i].stream, slot);
        g_snprintf(dst, sizeof dst, in[i].block, slot);
        emit_event(c, STRATA_OP_WAIT, stream, "go_%u", slot);
        emit(c, strata_op_make_copy(stream, dst, in[i].src, in[i].bytes));
        emit_event(c, STRATA_OP_RECORD, stream, in[i].ready, slot);
    }
}

/* Phase 0: arguments, program start, VMEM scratch, the first N-1 fetches. */
static void build_prologue(mm_ctx *c)
{
    char name[32];
    emit_alloc(c, "A", c->m, c->k, c->dt, "hbm", STRATA_TAG_INPUT);
    emit_alloc(c, "B", c->k, c->n, c->dt, "hbm", STRATA_TAG_PARAM);
    emit(c, strata_op_make_timed(NULL, "program_start", 0)); /* A and B are the arguments */
    for (uint32_t s = 0; s < c->slots; s++) {
        g_snprintf(name, sizeof name, "a_blk%u", s);
        emit_alloc(c, name, c->bm, c->bk, c->dt, "vmem", STRATA_TAG_TEMP);
        g_snprintf(name, sizeof name, "b_blk%u", s);
        emit_alloc(c, name, c->bk, c->bn, c->dt, "vmem", STRATA_TAG_TEMP);
    }
    emit_alloc(c, "acc", c->bm, c->bn, STRATA_DTYPE_F32, c->acc_mem, STRATA_TAG_TEMP);
    for (uint32_t s = 0; s < c->slots; s++) {
        g_snprintf(name, sizeof name, "o_blk%u", s);
        emit_alloc(c, name, c->bm, c->bn, c->dt, "vmem", STRATA_TAG_TEMP);
    }
    uint64_t steps = c->gi * c->gj * c->gk;
    for (uint64_t s = 0; s + 1 < c->slots && s < steps; s++)
        emit_fetch(c, s);
}

/* Tile t = i*gj + j: its k steps, then the cast and the write-back. Step s:
 * the grid step's overhead on the scalar unit, the DMA wait for step s's
 * blocks, the fetch of step s+N-1 into the slot step s-1 has released (so it
 * runs during this step's MXU work), the MXU. */
static void build_tile(mm_ctx *c, uint64_t tile)
{
    char name[32], name2[32], label[64];
    uint64_t i = tile / c->gj, j = tile % c->gj, steps = c->gi * c->gj * c->gk;
    double mxu_flops = 2.0 * (double)c->bm * (double)c->bn * (double)c->bk;
    for (uint64_t kk = 0; kk < c->gk; kk++) {
        uint64_t s = tile * c->gk + kk;
        uint32_t slot = (uint32_t)(s % c->slots);
        if (c->step_unit) {
            g_snprintf(label, sizeof label, "step_%" G_GUINT64_FORMAT "_%" G_GUINT64_FORMAT "_%" G_GUINT64_FORMAT, i,
                       j, kk);
            emit_compute(c, label, 0, NULL, 0, NULL, c->step_unit);
        }
        uint64_t next = s + c->slots - 1; /* into the slot step s-1 read (main is past it) */
        if (c->slots == 1)
            emit_fetch(c, s); /* single buffering: fetch, then wait for it */
        emit_event(c, STRATA_OP_WAIT, STRATA_DEFAULT_STREAM, "a_ready_%u", slot);
        emit_event(c, STRATA_OP_WAIT, STRATA_DEFAULT_STREAM, "b_ready_%u", slot);
        if (c->slots > 1 && next < steps)
            emit_fetch(c, next);
        g_snprintf(name, sizeof name, "a_blk%u", slot);
        g_snprintf(name2, sizeof name2, "b_blk%u", slot);
        const char *ins[3] = {name, name2, "acc"};
        g_snprintf(label, sizeof label, "mxu_%" G_GUINT64_FORMAT "_%" G_GUINT64_FORMAT "_%" G_GUINT64_FORMAT, i, j,
                   kk);
        emit_compute(c, label, mxu_flops, ins, kk == 0 ? 2 : 3, "acc", c->unit);
    }
    uint32_t oslot = (uint32_t)(tile % c->slots);
    if (tile == 0)
        emit_alloc(c, "C", c->m, c->n, c->dt, "hbm", STRATA_TAG_OUTPUT);
    if (tile >= c->slots)
        emit_event(c, STRATA_OP_WAIT, STRATA_DEFAULT_STREAM, "out_done_%u", oslot);
    g_snprintf(name, sizeof name, "o_blk%u", oslot);
    const char *acc_in[1] = {"acc"};
    g_snprintf(label, sizeof label, "store_%" G_GUINT64_FORMAT "_%" G_GUINT64_FORMAT, i, j);
    emit_compute(c, label, (double)(c->bm * c->bn), acc_in, 1, name, c->unit);
    emit_event(c, STRATA_OP_RECORD, STRATA_DEFAULT_STREAM, "out_full_%u", oslot);
    emit_event(c, STRATA_OP_WAIT, "dma_out", "out_full_%u", oslot);
    emit(c, strata_op_make_copy("dma_out", "C", name, c->bm * c->bn * c->e));
    emit_event(c, STRATA_OP_RECORD, "dma_out", "out_done_%u", oslot);
}

/* Last phase: drain the write-backs, then release the VMEM scratch. */
static void build_epilogue(mm_ctx *c)
{
    char name[32];
    uint64_t tiles = c->gi * c->gj;
    for (uint32_t o = 0; o < c->slots && o < tiles; o++)
        emit_event(c, STRATA_OP_WAIT, STRATA_DEFAULT_STREAM, "out_done_%u", o);
    const char *const scratch[] = {"a_blk%u", "b_blk%u", "o_blk%u", NULL};
    for (size_t t = 0; scratch[t]; t++)
        for (uint32_t sl = 0; sl < c->slots; sl++) {
            g_snprintf(name, sizeof name, scratch[t], sl);
            emit(c, strata_op_make(STRATA_OP_FREE, NULL, name));
        }
    emit(c, strata_op_make(STRATA_OP_FREE, NULL, "acc"));
}

/* The source: one phase's ops at a time, so memory stays O(k/bk) however
 * large the grid. */
static int mm_next(void *self, const strata_op **op, GError **err)
{
    (void)err;
    mm_ctx *c = self;
    uint64_t tiles = c->gi * c->gj;
    while (!c->list || c->cursor >= strata_op_list_len(c->list)) {
        if (c->list && c->phase > tiles + 1)
            return 0;
        if (c->list) {
            strata_op_list_free(c->list);
            c->phase++;
            if (c->phase > tiles + 1) {
                c->list = strata_op_list_new(); /* empty: the end */
                c->cursor = 0;
                return 0;
            }
        }
        c->list = strata_op_list_new();
        c->cursor = 0;
        if (c->phase == 0)
            build_prologue(c);
        else if (c->phase <= tiles)
            build_tile(c, c->phase - 1);
        else
            build_epilogue(c);
    }
    *op = strata_op_list_get(c->list, c->cursor++);
    return 1;
}

static bool mm_rewind(void *self, GError **err)
{
    (void)err;
    mm_ctx *c = self;
    strata_op_list_free(c->list);
    c->list = NULL;
    c->phase = 0;
    c->cursor = 0;
    return true;
}

static void mm_destroy(void *self)
{
    mm_ctx *c = self;
    strata_op_list_free(c->list);
    strata_params_free(c->params);
    g_free(c);
}

static const strata_source_vtable mm_vtable = {mm_next, mm_rewind, mm_destroy};

/* unit= and step_unit= are names a trace's unit= holds (the writer's
 * rule: printable, no space, '=', ',' or '#'), refused here by name
 * rather than by the writer at the first op. */
static bool units_ok(const strata_params *p, GError **err)
{
    static const char *const keys[] = {"unit", "step_unit"};
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        const unsigned char *v = (const unsigned char *)strata_params_string(p, keys[i]);
        bool ok = *v != '\0';
        for (const unsigned char *c = v; ok && *c; c++)
            ok = *c > 0x20 && *c != 0x7f && !strchr("#=,", *c);
        if (!ok) {
            char *q = g_strescape((const char *)v, NULL);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "matmul: %s: expected a compute unit's name (printable, without spaces, '=', ',' or '#'), "
                        "got '%s'", keys[i], q);
            g_free(q);
            return false;
        }
    }
    return true;
}

static strata_source *matmul_generate(const strata_params *p, GError **err)
{
    static const char *const positive[] = {"m", "n", "k", "bm", "bn", "bk", "buffers", NULL};
    static const char *const sizes[] = {"m*k", "k*n", "m*n", "buffers*bm*bk", "buffers*bk*bn", "buffers*bm*bn",
                                        NULL};
    static const char *const acc_sizes[] = {"bm*bn", NULL};
    if (!strata_workload_check_positive(p, "matmul", positive, err) ||
        !strata_workload_check_sizes(p, "matmul", sizes, strata_workload_dtype(p, "dtype"), err) ||
        !strata_workload_check_sizes(p, "matmul", acc_sizes, STRATA_DTYPE_F32, err) || !units_ok(p, err))
        return NULL;
    mm_ctx c = {0};
    c.m = (uint64_t)strata_params_int(p, "m");
    c.n = (uint64_t)strata_params_int(p, "n");
    c.k = (uint64_t)strata_params_int(p, "k");
    c.bm = (uint64_t)strata_params_int(p, "bm");
    c.bn = (uint64_t)strata_params_int(p, "bn");
    c.bk = (uint64_t)strata_params_int(p, "bk");
    c.dt = strata_workload_dtype(p, "dtype");
    c.e = strata_dtype_bits(c.dt) / 8;
    int64_t buffers = strata_params_int(p, "buffers");
    if (buffers > 8) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "matmul: expected buffers between 1 and 8, got %" G_GINT64_FORMAT,
                    buffers);
        return NULL;
    }
    c.slots = (uint32_t)buffers;
    const struct { const char *dim, *block; uint64_t d, b; } div[] = {
        {"m", "bm", c.m, c.bm}, {"n", "bn", c.n, c.bn}, {"k", "bk", c.k, c.bk}};
    for (size_t i = 0; i < G_N_ELEMENTS(div); i++)
        if (div[i].d % div[i].b != 0) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "matmul: expected %s to divide %s, got %s=%" G_GUINT64_FORMAT " %s=%" G_GUINT64_FORMAT,
                        div[i].block, div[i].dim, div[i].dim, div[i].d, div[i].block, div[i].b);
            return NULL;
        }
    if (c.e == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "matmul: expected a dtype of whole bytes");
        return NULL;
    }
    c.unit = strata_params_string(p, "unit");
    c.acc_mem = strata_params_string(p, "acc");
    c.gi = c.m / c.bm;
    c.gj = c.n / c.bn;
    c.gk = c.k / c.bk;
    uint64_t steps;
    /* The grid is streamed, but every step writes a few ops: bound the trace
     * like a generator's repeat counts (STRATA_WORKLOAD_MAX_COUNT layers). */
    const uint64_t max_steps = (uint64_t)STRATA_WORKLOAD_MAX_COUNT * 100;
    if (__builtin_mul_overflow(c.gi, c.gj, &steps) || __builtin_mul_overflow(steps, c.gk, &steps) ||
        steps > max_steps) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "matmul: expected at most %" G_GUINT64_FORMAT " grid steps m/bm x n/bn x k/bk, got more (m=%"
                    G_GUINT64_FORMAT " bm=%" G_GUINT64_FORMAT ", n=%" G_GUINT64_FORMAT " bn=%" G_GUINT64_FORMAT
                    ", k=%" G_GUINT64_FORMAT " bk=%" G_GUINT64_FORMAT ")",
                    max_steps, c.m, c.bm, c.n, c.bn, c.k, c.bk);
        return NULL;
    }
    mm_ctx *heap = g_new(mm_ctx, 1);
    *heap = c;
    heap->params = strata_params_copy(p);
    heap->unit = strata_params_string(heap->params, "unit");
    heap->acc_mem = strata_params_string(heap->params, "acc");
    heap->step_unit = strata_params_string(heap->params, "step_unit");
    if (strcmp(heap->step_unit, "none") == 0)
        heap->step_unit = NULL;
    heap->list = NULL;
    heap->phase = 0;
    heap->cursor = 0;
    return strata_source_new(&mm_vtable, heap, "matmul");
}

const strata_workload_type strata_workload_matmul = {
    "matmul",
    "a Pallas-style blocked matmul on a TPU core: HBM -> VMEM block DMAs, MXU steps, 1/2/3 buffers",
    matmul_params,
    matmul_generate,
    NULL,
    NULL, /* the grid is streamed: generating costs no more than checking */
};
