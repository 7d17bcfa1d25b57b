/*
 * host.c: the `host` backend, a real replay on this machine's CPU and DRAM.
 *
 * Design:
 *  - Each memory of the plan (backend/plan.h) becomes one host allocation of
 *    its extent, every page touched before any timing; a buffer lives at
 *    base + its planned offset. Allocs and frees are therefore instants
 *    (zero-length spans): what is timed is the program's data movement.
 *  - Each stream is a GThread running its ops in order. Threads start
 *    together from a barrier; t0 is taken when the barrier opens.
 *  - copy is memcpy; compute with time= is a busy wait on CLOCK_MONOTONIC
 *    (ended early by half a clock read, its measured cost); compute with
 *    flops (or operands only) reads its inputs, writes its outputs and runs
 *    the multiply-add kernel of host_kernel.h for the flops.
 *  - record/wait: each record has a number (plan.h); a record sets done[n]
 *    under one mutex and broadcasts; a wait sleeps on the condition until
 *    done[n] of the record the checker resolved.
 *  - warmup untimed runs, then `repeats` timed runs; the run whose makespan
 *    is the median is reported whole (backend.h invariant 3).
 *
 * Invariants: one thread per stream writes only its own ops' start/end;
 * done[] is read and written only under `lock`; no global state.
 */
#include "backend/backend.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/host_kernel.h"
#include "backend/plan.h"
#include "core/error.h"
#include "core/units.h"

typedef struct host_run host_run;

typedef struct host_stream {
    host_run *run;
    GArray *ops;        /* guint plan op indices, in order */
    uint64_t sink;      /* keeps kernels' results alive */
    GThread *thread;
} host_stream;

struct host_run {
    const strata_plan *plan;
    unsigned char **base; /* per memory */
    host_stream *streams;
    guint n_streams;
    double clock_half;    /* half a clock read: early stop of busy waits */

    GMutex lock;
    GCond cond;
    gboolean *done;       /* by record number */
    guint ready;
    gboolean go;
    double t0;

    double *start_s, *end_s; /* this run's, per op */
    volatile uint64_t sink;  /* the kernels' results end here */
};

static unsigned char *buffer_ptr(const host_run *run, uint64_t id)
{
    const strata_plan_buffer *b = strata_plan_buffer_at(run->plan, id);
    return run->base[b->memory] + b->offset;
}

static void host_compute(host_stream *s, const strata_plan_op *op, double start)
{
    host_run *run = s->run;
    if (op->has_time) {
        strata_host_spin_until(start + op->time_s - run->clock_half);
        return;
    }
    const strata_plan *plan = run->plan;
    for (uint32_t i = 0; i < op->n_ins; i++)
        s->sink += strata_host_read(buffer_ptr(run, op->ins[i]), strata_plan_buffer_at(plan, op->ins[i])->size);
    if (op->has_flops)
        s->sink += (uint64_t)strata_host_flops(op->flops);
    for (uint32_t i = 0; i < op->n_outs; i++)
        strata_host_write(buffer_ptr(run, op->outs[i]), strata_plan_buffer_at(plan, op->outs[i])->size, s->sink);
}

static void host_exec(host_stream *s, const strata_plan_op *op)
{
    host_run *run = s->run;
    double start = strata_host_now();
    switch (op->kind) {
    case STRATA_OP_COPY: {
        unsigned char *dst = buffer_ptr(run, op->buf), *src = buffer_ptr(run, op->src);
        if (op->buf == op->src)
            memmove(dst, src, op->bytes);
        else
            memcpy(dst, src, op->bytes);
        break;
    }
    case STRATA_OP_COMPUTE:
        host_compute(s, op, start);
        break;
    case STRATA_OP_RECORD:
        g_mutex_lock(&run->lock);
        run->done[op->record] = TRUE;
        g_cond_broadcast(&run->cond);
        g_mutex_unlock(&run->lock);
        break;
    case STRATA_OP_WAIT:
        g_mutex_lock(&run->lock);
        while (!run->done[op->record])
            g_cond_wait(&run->cond, &run->lock);
        g_mutex_unlock(&run->lock);
        break;
    default: /* alloc, free, release: placed before timing */
        break;
    }
    double end = op->kind == STRATA_OP_ALLOC || op->kind == STRATA_OP_FREE || op->kind == STRATA_OP_RELEASE
                     ? start
                     : strata_host_now();
    run->start_s[op->index] = start - run->t0;
    run->end_s[op->index] = end - run->t0;
}

static gpointer host_stream_main(gpointer data)
{
    host_stream *s = data;
    host_run *run = s->run;
    g_mutex_lock(&run->lock);
    run->ready++;
    g_cond_broadcast(&run->cond);
    while (!run->go)
        g_cond_wait(&run->cond, &run->lock);
    g_mutex_unlock(&run->lock);
    for (guint i = 0; i < s->ops->len; i++)
        host_exec(s, strata_plan_op_at(run->plan, g_array_index(s->ops, guint, i)));
    return NULL;
}

/* One run of the whole plan; fills run->start_s/end_s and returns the makespan. */
static double host_run_once(host_run *run)
{
    memset(run->done, 0, sizeof(gboolean) * (run->plan->n_records ? run->plan->n_records : 1));
    run->ready = 0;
    run->go = FALSE;
    for (guint i = 0; i < run->n_streams; i++) {
        char *name = g_strdup_printf("strata-%u", i);
        run->streams[i].thread = g_thread_new(name, host_stream_main, &run->streams[i]);
        g_free(name);
    }
    g_mutex_lock(&run->lock);
    while (run->ready < run->n_streams)
        g_cond_wait(&run->cond, &run->lock);
    run->t0 = strata_host_now();
    run->go = TRUE;
    g_cond_broadcast(&run->cond);
    g_mutex_unlock(&run->lock);
    for (guint i = 0; i < run->n_streams; i++)
        g_thread_join(run->streams[i].thread);
    double makespan = 0;
    for (guint i = 0; i < run->plan->ops->len; i++)
        makespan = MAX(makespan, run->end_s[i]);
    return makespan;
}

static bool host_allocate(host_run *run, GError **err)
{
    const strata_plan *plan = run->plan;
    long page = sysconf(_SC_PAGESIZE);
    long pages = sysconf(_SC_PHYS_PAGES);
    if (page <= 0)
        page = 4096;
    uint64_t total = 0;
    for (guint m = 0; m < plan->memories->len; m++)
        total += strata_plan_memory_at(plan, m)->extent;
    uint64_t limit = pages > 0 ? (uint64_t)pages * (uint64_t)page / 2 : UINT64_MAX;
    if (total > limit) {
        char *need = strata_format_size(total), *have = strata_format_size(limit);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: the host backend needs %s of host memory for this trace's buffers, "
                    "more than half of this machine's memory (%s)", plan->origin, need, have);
        g_free(need);
        g_free(have);
        return false;
    }
    for (guint m = 0; m < plan->memories->len; m++) {
        uint64_t extent = strata_plan_memory_at(plan, m)->extent;
        size_t size = (size_t)(extent ? extent : 1);
        size = (size + (size_t)page - 1) / (size_t)page * (size_t)page;
        void *p = NULL;
        if (posix_memalign(&p, (size_t)page, size) != 0) {
            char *need = strata_format_size(size);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot allocate %s of host memory for memory '%s'",
                        need, strata_plan_memory_at(plan, m)->name);
            g_free(need);
            return false;
        }
        run->base[m] = p;
        memset(p, 0, size); /* every page touched (and defined) before timing */
    }
    return true;
}

static void host_run_free(host_run *run)
{
    for (guint m = 0; m < run->plan->memories->len; m++)
        free(run->base[m]);
    g_free(run->base);
    for (guint i = 0; i < run->n_streams; i++)
        g_array_free(run->streams[i].ops, TRUE);
    g_free(run->streams);
    g_free(run->done);
    g_free(run->start_s);
    g_free(run->end_s);
    g_mutex_clear(&run->lock);
    g_cond_clear(&run->cond);
}

static bool host_backend_run(const strata_hw *hw, strata_source *src, const strata_backend_options *opt,
                             strata_results **out, GError **err)
{
    strata_plan_options popt = {.check_allocators = opt && opt->check_allocators};
    strata_plan *plan = strata_plan_build(hw, src, &popt, err);
    if (!plan)
        return false;
    host_run run;
    memset(&run, 0, sizeof run);
    run.plan = plan;
    g_mutex_init(&run.lock);
    g_cond_init(&run.cond);
    run.base = g_new0(unsigned char *, plan->memories->len ? plan->memories->len : 1);
    run.n_streams = plan->streams->len;
    run.streams = g_new0(host_stream, run.n_streams ? run.n_streams : 1);
    for (guint i = 0; i < run.n_streams; i++) {
        run.streams[i].run = &run;
        run.streams[i].ops = g_array_new(FALSE, FALSE, sizeof(guint));
    }
    for (guint i = 0; i < plan->ops->len; i++)
        g_array_append_val(run.streams[strata_plan_op_at(plan, i)->stream].ops, i);
    run.done = g_new0(gboolean, plan->n_records ? plan->n_records : 1);
    guint n_ops = plan->ops->len ? plan->ops->len : 1;
    run.start_s = g_new0(double, n_ops);
    run.end_s = g_new0(double, n_ops);
    run.clock_half = strata_host_clock_cost() / 2;

    if (!host_allocate(&run, err)) {
        host_run_free(&run);
        strata_plan_free(plan);
        return false;
    }
    int repeats = opt && opt->repeats > 0 ? opt->repeats : 1;
    int warmup = opt && opt->warmup > 0 ? opt->warmup : 0;
    for (int i = 0; i < warmup; i++)
        (void)host_run_once(&run);
    double *makespans = g_new0(double, repeats);
    double **starts = g_new0(double *, repeats), **ends = g_new0(double *, repeats);
    for (int i = 0; i < repeats; i++) {
        makespans[i] = host_run_once(&run);
        starts[i] = g_memdup2(run.start_s, sizeof(double) * n_ops);
        ends[i] = g_memdup2(run.end_s, sizeof(double) * n_ops);
    }
    int med = strata_plan_median_run(makespans, repeats);
    strata_plan_timing timing = {starts[med], ends[med], makespans[med]};
    strata_results *r = strata_plan_results(plan, hw, &timing, "host");

    for (guint i = 0; i < run.n_streams; i++) /* the kernels' results are used */
        run.sink += run.streams[i].sink;
    strata_plan_set_replay_extra(r, "host", NULL, warmup, repeats, makespans);

    for (int i = 0; i < repeats; i++) {
        g_free(starts[i]);
        g_free(ends[i]);
    }
    g_free(starts);
    g_free(ends);
    g_free(makespans);
    host_run_free(&run);
    strata_plan_free(plan);
    *out = r;
    return true;
}

bool strata_host_calibrate(const strata_calibrate_options *opt, GString *ini, FILE *log, GError **err);

const strata_backend strata_backend_host = {
    "host",
    "this machine's CPU and DRAM: streams are threads, copies memcpy, compute a CPU kernel",
    host_backend_run,
    strata_host_calibrate,
};
