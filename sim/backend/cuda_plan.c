/*
 * cuda_plan.c: from a backend plan to the list of CUDA calls that replays it
 * (see cuda_plan.h). Plain C, no CUDA: tested without a GPU.
 *
 * Invariant: the order of calls is a pure function of the plan and the mode
 * (setup: streams, events, pool, memory regions, per-buffer regions; then
 * one or more calls per op in file order).
 */
#include "backend/cuda_plan.h"

#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/plan.h"

static const char *const mode_names[] = {"malloc", "arena", "async", NULL};

bool strata_cuda_device_mode_from_name(const char *name, strata_cuda_device_mode *mode)
{
    for (int i = 0; name && mode_names[i]; i++)
        if (strcmp(name, mode_names[i]) == 0) {
            *mode = (strata_cuda_device_mode)i;
            return true;
        }
    return false;
}

const char *strata_cuda_device_mode_name(strata_cuda_device_mode mode)
{
    return (unsigned)mode < 3 ? mode_names[mode] : "?";
}

/* What the build accumulates: the regions, calls and compute operands, and
 * where each memory and buffer lives (memory -> its memory-wide region or -1;
 * buffer -> its region and offset in it). */
typedef struct cuda_builder {
    GArray *regions, *calls, *operands;
    int64_t *mem_region;
    uint32_t *buf_region;
    uint64_t *buf_offset;
    uint32_t gemm_region[3]; /* the GEMMs' scratch regions by element family (gemm_family) */
} cuda_builder;

static uint32_t add_region(cuda_builder *b, strata_cuda_region_kind kind, uint64_t bytes, uint32_t memory,
                           int64_t buffer)
{
    strata_cuda_region r = {kind, bytes ? bytes : 1, memory, buffer};
    g_array_append_val(b->regions, r);
    return b->regions->len - 1;
}

static strata_cuda_call *add_call(cuda_builder *b, strata_cuda_call_kind kind, int64_t op, uint32_t stream)
{
    strata_cuda_call c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.op = op;
    c.stream = stream;
    g_array_append_val(b->calls, c);
    return &g_array_index(b->calls, strata_cuda_call, b->calls->len - 1);
}

/* A setup call that allocates the whole of `region`. */
static void add_region_alloc(cuda_builder *b, strata_cuda_call_kind kind, uint32_t region)
{
    strata_cuda_call *c = add_call(b, kind, -1, 0);
    c->region = region;
    c->bytes = g_array_index(b->regions, strata_cuda_region, region).bytes;
}

static bool region_is_host(const cuda_builder *b, uint32_t region)
{
    strata_cuda_region_kind k = g_array_index(b->regions, strata_cuda_region, region).kind;
    return k == STRATA_CUDA_REGION_PINNED || k == STRATA_CUDA_REGION_PAGEABLE;
}

/* Setup: one stream per plan stream, one event per record, the pool in async mode. */
static void add_handle_setup(cuda_builder *b, const strata_plan *plan, strata_cuda_device_mode mode)
{
    for (uint32_t s = 0; s < plan->streams->len; s++)
        add_call(b, STRATA_CUDA_CALL_STREAM_CREATE, -1, s);
    for (uint64_t e = 0; e < plan->n_records; e++)
        add_call(b, STRATA_CUDA_CALL_EVENT_CREATE, -1, 0)->event = (uint32_t)e;
    if (mode == STRATA_CUDA_DEVICE_ASYNC)
        add_call(b, STRATA_CUDA_CALL_MEMPOOL_RETAIN, -1, 0);
}

/* Memory-wide regions: host memories always, device memories in arena mode. */
static void add_memory_regions(cuda_builder *b, const strata_plan *plan, strata_cuda_device_mode mode)
{
    for (guint m = 0; m < plan->memories->len; m++) {
        const strata_plan_memory *pm = strata_plan_memory_at(plan, m);
        b->mem_region[m] = -1;
        if (pm->n_buffers == 0)
            continue;
        if (pm->kind == STRATA_MEM_HOST) {
            strata_cuda_region_kind k = pm->pageable ? STRATA_CUDA_REGION_PAGEABLE : STRATA_CUDA_REGION_PINNED;
            b->mem_region[m] = add_region(b, k, pm->extent, m, -1);
            add_region_alloc(b, pm->pageable ? STRATA_CUDA_CALL_PAGEABLE_ALLOC : STRATA_CUDA_CALL_HOST_ALLOC,
                             (uint32_t)b->mem_region[m]);
        } else if (mode == STRATA_CUDA_DEVICE_ARENA) {
            b->mem_region[m] = add_region(b, STRATA_CUDA_REGION_DEVICE, pm->extent, m, -1);
            add_region_alloc(b, STRATA_CUDA_CALL_MALLOC, (uint32_t)b->mem_region[m]);
        }
    }
}

/* Each buffer's place: in its memory's region, or a region of its own
 * (device memories in malloc and async modes). */
static void add_buffer_regions(cuda_builder *b, const strata_plan *plan, strata_cuda_device_mode mode)
{
    for (guint i = 0; i < plan->buffers->len; i++) {
        const strata_plan_buffer *pb = strata_plan_buffer_at(plan, i);
        if (pb->alloc_op >= plan->ops->len) /* after an out-of-memory: never allocated */
            continue;
        if (b->mem_region[pb->memory] >= 0) {
            b->buf_region[i] = (uint32_t)b->mem_region[pb->memory];
            b->buf_offset[i] = pb->offset;
        } else if (mode == STRATA_CUDA_DEVICE_ASYNC) {
            b->buf_region[i] = add_region(b, STRATA_CUDA_REGION_ASYNC, pb->size, pb->memory, i);
        } else {
            b->buf_region[i] = add_region(b, STRATA_CUDA_REGION_DEVICE, pb->size, pb->memory, i);
            add_region_alloc(b, STRATA_CUDA_CALL_MALLOC, b->buf_region[i]);
        }
    }
}

/* An alloc or free: stream-ordered in a buffer's own async region, else nothing to do. */
static void add_alloc_free_call(cuda_builder *b, const strata_plan_op *op, int64_t idx)
{
    bool async_buf = g_array_index(b->regions, strata_cuda_region, b->buf_region[op->buf]).kind ==
                     STRATA_CUDA_REGION_ASYNC;
    if (async_buf) {
        strata_cuda_call *c = add_call(b,
                                       op->kind == STRATA_OP_ALLOC ? STRATA_CUDA_CALL_MALLOC_ASYNC
                                                                   : STRATA_CUDA_CALL_FREE_ASYNC,
                                       idx, op->stream);
        c->region = b->buf_region[op->buf];
        c->bytes = op->bytes;
    } else {
        add_call(b, STRATA_CUDA_CALL_NOP, idx, op->stream);
    }
}

/* A copy between two buffers' places, its direction from the regions' kinds. */
static void add_copy_call(cuda_builder *b, const strata_plan_op *op, int64_t idx)
{
    strata_cuda_call *c = add_call(b, STRATA_CUDA_CALL_MEMCPY_ASYNC, idx, op->stream);
    c->region = b->buf_region[op->buf];
    c->offset = b->buf_offset[op->buf];
    c->src_region = b->buf_region[op->src];
    c->src_offset = b->buf_offset[op->src];
    c->bytes = op->bytes;
    bool dh = region_is_host(b, c->region), sh = region_is_host(b, c->src_region);
    c->dir = sh ? (dh ? STRATA_CUDA_H2H : STRATA_CUDA_H2D) : (dh ? STRATA_CUDA_D2H : STRATA_CUDA_D2D);
}

/* Whether a compute op runs as a cuBLAS GEMM (kernel=gemm in a dtype cuBLAS
 * takes, no time=), and its problem. */
static bool gemm_of(const strata_plan_op *op, strata_cuda_gemm *g)
{
    if (op->kind != STRATA_OP_COMPUTE || op->has_time || !op->kernel || strcmp(op->kernel, "gemm") != 0 ||
        (op->n_kdims != 3 && op->n_kdims != 4))
        return false;
    switch (op->dtype) {
    case STRATA_DTYPE_NONE: /* the kernel model's default */
    case STRATA_DTYPE_BF16: g->type = STRATA_CUDA_GEMM_BF16; break;
    case STRATA_DTYPE_F16: g->type = STRATA_CUDA_GEMM_F16; break;
    case STRATA_DTYPE_F32: g->type = STRATA_CUDA_GEMM_F32; break;
    case STRATA_DTYPE_TF32: g->type = STRATA_CUDA_GEMM_TF32; break;
    default: return false; /* FP8 and integers need cuBLASLt: the FMA kernel runs them */
    }
    const uint64_t *d = op->kdims + (op->n_kdims == 4 ? 1 : 0);
    g->batch = op->n_kdims == 4 ? op->kdims[0] : 1;
    g->m = d[0];
    g->k = d[1];
    g->n = d[2];
    return true;
}

/* A compute's flops as tensor-core work: the largest square side a
 * stand-in GEMM takes, and the multiple of it the side is rounded to. */
#define FLOPS_GEMM_MAX_SIDE 8192
#define FLOPS_GEMM_SIDE_STEP 8

/* Whether a compute op's flops= (no kernel=, no time=) run as square
 * cuBLAS GEMMs: its dtype is one the simulator times at a tensor-core rate
 * that cuBLAS reaches without cuBLASLt (bf16, f16, tf32; none: bf16, the
 * unit's `flops`), so the replay does the work the simulator times, where
 * FP32 multiply-adds on the CUDA cores would take some 15 times longer on
 * an H100 (67 against 989.5 TFLOP/s). Side s = cbrt(flops / (2 reps))
 * rounded to FLOPS_GEMM_SIDE_STEP, at most FLOPS_GEMM_MAX_SIDE, run *reps
 * times: 2 reps s^3 is the op's flops to the rounding. */
static bool flops_gemm_of(const strata_plan_op *op, strata_cuda_gemm *g, uint32_t *reps)
{
    if (op->kind != STRATA_OP_COMPUTE || op->has_time || op->kernel || !op->has_flops || !(op->flops > 0))
        return false;
    switch (op->dtype) {
    case STRATA_DTYPE_NONE:
    case STRATA_DTYPE_BF16: g->type = STRATA_CUDA_GEMM_BF16; break;
    case STRATA_DTYPE_F16: g->type = STRATA_CUDA_GEMM_F16; break;
    case STRATA_DTYPE_TF32: g->type = STRATA_CUDA_GEMM_TF32; break;
    default: return false; /* f32 is the CUDA cores' rate; FP8 and integers need cuBLASLt */
    }
    double most = 2.0 * pow(FLOPS_GEMM_MAX_SIDE, 3);
    double n = ceil(op->flops / most);
    *reps = n > 1e6 ? 1000000u : (uint32_t)n;
    double side = round(cbrt(op->flops / (2.0 * *reps)) / FLOPS_GEMM_SIDE_STEP) * FLOPS_GEMM_SIDE_STEP;
    uint64_t s = (uint64_t)CLAMP(side, FLOPS_GEMM_SIDE_STEP, FLOPS_GEMM_MAX_SIDE);
    g->batch = 1;
    g->m = g->k = g->n = s;
    return true;
}

/* The scratch a GEMM type reads: bf16, f16, or f32 (f32 and tf32 alike). */
static unsigned gemm_family(strata_cuda_gemm_type t)
{
    return t == STRATA_CUDA_GEMM_BF16 ? 0 : t == STRATA_CUDA_GEMM_F16 ? 1 : 2;
}

/* Setup: a scratch region per element family the plan's GEMMs use, as
 * large as that family's largest GEMM's operands, filled with values of
 * that type. */
static void add_gemm_setup(cuda_builder *b, const strata_plan *plan)
{
    static const strata_cuda_gemm_type fill[3] = {STRATA_CUDA_GEMM_BF16, STRATA_CUDA_GEMM_F16,
                                                  STRATA_CUDA_GEMM_F32};
    uint64_t need[3] = {0, 0, 0};
    strata_cuda_gemm g;
    uint32_t reps;
    for (guint i = 0; i < plan->ops->len; i++) {
        const strata_plan_op *op = strata_plan_op_at(plan, i);
        if (gemm_of(op, &g) || flops_gemm_of(op, &g, &reps))
            need[gemm_family(g.type)] = MAX(need[gemm_family(g.type)], strata_cuda_gemm_layout(&g, NULL, NULL));
    }
    for (unsigned f = 0; f < 3; f++) {
        if (need[f] == 0)
            continue;
        b->gemm_region[f] = add_region(b, STRATA_CUDA_REGION_DEVICE, need[f], 0, -1);
        add_region_alloc(b, STRATA_CUDA_CALL_GEMM_SETUP, b->gemm_region[f]);
        g_array_index(b->calls, strata_cuda_call, b->calls->len - 1).gemm.type = fill[f];
    }
}

/* A cuBLAS GEMM call for op idx. */
static void add_gemm_call(cuda_builder *b, const strata_cuda_gemm *g, int64_t idx, uint32_t stream)
{
    strata_cuda_call *c = add_call(b, STRATA_CUDA_CALL_LAUNCH_GEMM, idx, stream);
    c->region = b->gemm_region[gemm_family(g->type)];
    c->gemm = *g;
    c->flops = 2.0 * (double)g->batch * (double)g->m * (double)g->k * (double)g->n;
    c->bytes = strata_cuda_gemm_layout(g, NULL, NULL);
}

/* A compute op: a timed spin, a cuBLAS GEMM, or a kernel over its inputs
 * then outputs as operands, doing the op's flops as FP32 multiply-adds, or
 * touching them only and then doing the flops as square GEMMs
 * (flops_gemm_of). */
static void add_compute_call(cuda_builder *b, const strata_plan *plan, const strata_plan_op *op, int64_t idx)
{
    if (op->has_time) {
        add_call(b, STRATA_CUDA_CALL_LAUNCH_SPIN, idx, op->stream)->time_s = op->time_s;
        return;
    }
    strata_cuda_gemm g;
    if (gemm_of(op, &g)) {
        add_gemm_call(b, &g, idx, op->stream);
        return;
    }
    uint32_t reps = 0;
    bool as_gemms = flops_gemm_of(op, &g, &reps);
    uint32_t first = b->operands->len;
    for (uint32_t k = 0; k < op->n_ins + op->n_outs; k++) {
        bool out = k >= op->n_ins;
        uint64_t id = out ? op->outs[k - op->n_ins] : op->ins[k];
        strata_cuda_operand o = {b->buf_region[id], b->buf_offset[id], strata_plan_buffer_at(plan, id)->size, out};
        g_array_append_val(b->operands, o);
    }
    strata_cuda_call *c = add_call(b, STRATA_CUDA_CALL_LAUNCH_COMPUTE, idx, op->stream);
    c->flops = op->has_flops && !as_gemms ? op->flops : 0;
    c->bytes = op->bytes;
    c->first_operand = first;
    c->n_operands = op->n_ins + op->n_outs;
    for (uint32_t r = 0; r < reps; r++)
        add_gemm_call(b, &g, idx, op->stream);
}

/* The call that replays op `idx` of the plan. */
static void add_op_call(cuda_builder *b, const strata_plan *plan, const strata_plan_op *op, int64_t idx)
{
    switch (op->kind) {
    case STRATA_OP_ALLOC:
    case STRATA_OP_FREE:
        add_alloc_free_call(b, op, idx);
        break;
    case STRATA_OP_COPY:
        add_copy_call(b, op, idx);
        break;
    case STRATA_OP_COMPUTE:
        add_compute_call(b, plan, op, idx);
        break;
    case STRATA_OP_RECORD:
        add_call(b, STRATA_CUDA_CALL_EVENT_RECORD, idx, op->stream)->event = (uint32_t)op->record;
        break;
    case STRATA_OP_WAIT:
        add_call(b, STRATA_CUDA_CALL_STREAM_WAIT_EVENT, idx, op->stream)->event = (uint32_t)op->record;
        break;
    default:
        add_call(b, STRATA_CUDA_CALL_NOP, idx, op->stream);
        break;
    }
}

strata_cuda_plan *strata_cuda_plan_build(const strata_plan *plan, strata_cuda_device_mode mode)
{
    guint n_mem = plan->memories->len, n_buf = plan->buffers->len, n_ops = plan->ops->len;
    cuda_builder b = {g_array_new(FALSE, TRUE, sizeof(strata_cuda_region)),
                      g_array_new(FALSE, TRUE, sizeof(strata_cuda_call)),
                      g_array_new(FALSE, TRUE, sizeof(strata_cuda_operand)),
                      g_new(int64_t, n_mem ? n_mem : 1),
                      g_new0(uint32_t, n_buf ? n_buf : 1),
                      g_new0(uint64_t, n_buf ? n_buf : 1),
                      {0, 0, 0}};

    add_handle_setup(&b, plan, mode);
    add_memory_regions(&b, plan, mode);
    add_buffer_regions(&b, plan, mode);
    add_gemm_setup(&b, plan);
    size_t n_setup = b.calls->len;

    uint32_t *op_stream = g_new0(uint32_t, n_ops ? n_ops : 1);
    for (guint i = 0; i < n_ops; i++) {
        const strata_plan_op *op = strata_plan_op_at(plan, i);
        op_stream[i] = op->stream;
        add_op_call(&b, plan, op, (int64_t)i);
    }

    strata_cuda_plan *cp = calloc(1, sizeof *cp);
    cp->mode = mode;
    cp->n_regions = b.regions->len;
    cp->regions = (strata_cuda_region *)(void *)g_array_free(b.regions, FALSE);
    cp->n_calls = b.calls->len;
    cp->calls = (strata_cuda_call *)(void *)g_array_free(b.calls, FALSE);
    cp->n_setup = n_setup;
    cp->n_operands = b.operands->len;
    cp->operands = (strata_cuda_operand *)(void *)g_array_free(b.operands, FALSE);
    cp->n_streams = plan->streams->len;
    cp->n_events = (uint32_t)plan->n_records;
    cp->n_ops = n_ops;
    cp->op_stream = op_stream;
    g_free(b.mem_region);
    g_free(b.buf_region);
    g_free(b.buf_offset);
    return cp;
}

void strata_cuda_plan_free(strata_cuda_plan *plan)
{
    if (!plan)
        return;
    g_free(plan->regions);
    g_free(plan->calls);
    g_free(plan->operands);
    g_free(plan->op_stream);
    free(plan);
}

static const char *const dir_names[] = {"H2H", "H2D", "D2H", "D2D"};
static const char *const gemm_type_names[] = {"bf16", "f16", "f32", "tf32"};

char *strata_cuda_call_to_text(const strata_cuda_plan *plan, const strata_cuda_call *c)
{
    GString *s = g_string_new(NULL);
    switch (c->kind) {
    case STRATA_CUDA_CALL_STREAM_CREATE:
        g_string_printf(s, "cudaStreamCreate stream=%u", c->stream);
        break;
    case STRATA_CUDA_CALL_EVENT_CREATE:
        g_string_printf(s, "cudaEventCreate event=%u", c->event);
        break;
    case STRATA_CUDA_CALL_MALLOC:
        g_string_printf(s, "cudaMalloc r%u bytes=%" G_GUINT64_FORMAT, c->region, c->bytes);
        break;
    case STRATA_CUDA_CALL_HOST_ALLOC:
        g_string_printf(s, "cudaHostAlloc r%u bytes=%" G_GUINT64_FORMAT, c->region, c->bytes);
        break;
    case STRATA_CUDA_CALL_PAGEABLE_ALLOC:
        g_string_printf(s, "malloc r%u bytes=%" G_GUINT64_FORMAT, c->region, c->bytes);
        break;
    case STRATA_CUDA_CALL_MEMPOOL_RETAIN:
        g_string_printf(s, "cudaMemPoolSetAttribute ReleaseThreshold=max");
        break;
    case STRATA_CUDA_CALL_MALLOC_ASYNC:
        g_string_printf(s, "cudaMallocAsync r%u bytes=%" G_GUINT64_FORMAT, c->region, c->bytes);
        break;
    case STRATA_CUDA_CALL_FREE_ASYNC:
        g_string_printf(s, "cudaFreeAsync r%u", c->region);
        break;
    case STRATA_CUDA_CALL_MEMCPY_ASYNC:
        g_string_printf(s, "cudaMemcpyAsync %s dst=r%u+%" G_GUINT64_FORMAT " src=r%u+%" G_GUINT64_FORMAT
                           " bytes=%" G_GUINT64_FORMAT,
                        dir_names[c->dir], c->region, c->offset, c->src_region, c->src_offset, c->bytes);
        break;
    case STRATA_CUDA_CALL_EVENT_RECORD:
        g_string_printf(s, "cudaEventRecord event=%u", c->event);
        break;
    case STRATA_CUDA_CALL_STREAM_WAIT_EVENT:
        g_string_printf(s, "cudaStreamWaitEvent event=%u", c->event);
        break;
    case STRATA_CUDA_CALL_LAUNCH_COMPUTE:
        g_string_printf(s, "launch compute flops=%.17g bytes=%" G_GUINT64_FORMAT " operands=", c->flops, c->bytes);
        for (uint32_t i = 0; i < c->n_operands; i++) {
            const strata_cuda_operand *o = &plan->operands[c->first_operand + i];
            g_string_append_printf(s, "%s%s:r%u+%" G_GUINT64_FORMAT, i ? "," : "", o->output ? "out" : "in",
                                   o->region, o->offset);
        }
        break;
    case STRATA_CUDA_CALL_LAUNCH_SPIN:
        g_string_printf(s, "launch spin time=%.9gs", c->time_s);
        break;
    case STRATA_CUDA_CALL_GEMM_SETUP:
        g_string_printf(s, "cudaMalloc r%u bytes=%" G_GUINT64_FORMAT " (GEMM scratch, %s values)",
                        c->region, c->bytes, gemm_type_names[c->gemm.type]);
        break;
    case STRATA_CUDA_CALL_LAUNCH_GEMM: {
        g_string_printf(s, "cublasGemmStridedBatchedEx %s batch=%" G_GUINT64_FORMAT " m=%" G_GUINT64_FORMAT
                           " k=%" G_GUINT64_FORMAT " n=%" G_GUINT64_FORMAT " scratch=r%u",
                        gemm_type_names[c->gemm.type], c->gemm.batch, c->gemm.m, c->gemm.k, c->gemm.n, c->region);
        break;
    }
    case STRATA_CUDA_CALL_NOP:
        g_string_printf(s, "nop");
        break;
    }
    if (c->op >= 0)
        g_string_append_printf(s, " stream=%u op=%" G_GINT64_FORMAT, c->stream, c->op);
    return g_string_free(s, FALSE);
}
