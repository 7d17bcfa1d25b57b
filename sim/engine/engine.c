/*
 * engine.c: the timed simulation (engine.h) on SimGrid.
 *
 * Design:
 *  - engine_memory.c sets up one placement (allocator, ledger) per memory;
 *    engine_feed.c makes the first pass (validation, streams, lifetimes, a compact record of the ops)
 *    and feeds the second lazily, replaying that record;
 *    engine_platform.c turns the hardware model into a SimGrid platform.
 *  - One actor per stream runs its ops in program order:
 *      alloc/free/release  the memory's allocator, at the current date, no time;
 *      copy                its turn for its links' copy engines unless a collective's step
 *                          (engine_copy_queue.h), its route's latency (engine_flow_wait),
 *                          then sg_host_sendto() from the source memory's host to the
 *                          destination's (its twin inside a memory; a paced phase's,
 *                          rate-bounded: engine_sg_flow.h): sum(latency) + bytes /
 *                          bottleneck alone, max-min sharing on its links and ports;
 *      compute             time= : a sleep of that long; else an execution of its
 *                          flops on the unit's host (scaled to the peak for the
 *                          first operand's dtype) started together with a transfer
 *                          of its operand bytes from the operand memory through that
 *                          memory's port, waiting for both, then the unit's overhead
 *                          (the first op on a unit pays its launch cost first; a unit
 *                          with a tile pads a matmul's flops, engine_feed.c; an op
 *                          naming a kernel= runs its kernel's work and bytes, then
 *                          its fixed time, engine_kernel.c);
 *      record              marks (event, sequence) done and resumes its waiters;
 *      wait                suspends the actor until the awaited record is done.
 *  - Out of memory: the failing actor records the report and kills every other
 *    actor; the run ends at that date with status "oom".
 *
 * Accounting: a link, memory port (or unit) is busy while at least one transfer
 * (or compute) is on it: a counter each, and busy time accumulates while it is
 * above 0. A copy counts its bytes on every link and port of its route (a copy
 * inside a memory twice on its port); a compute its operand bytes on its
 * operand memory's port.
 * Streams are busy while executing copies and computes, stalled while waiting.
 *
 * Invariants:
 *  1. no global mutable state: every actor reaches the run's context through
 *     its stream (actor data);
 *  2. SimGrid is deterministic and every output is produced in declaration or
 *     first-appearance order (no hash table iteration), so the same inputs give
 *     the same results;
 *  3. strata_engine_run() runs at most once per process (SimGrid's rule).
 */
#include "engine/engine_internal.h"
#include <assert.h>
#include "engine/engine_event.h"
#include "engine/engine_phase.h"
#include "engine/engine_power.h"
#include "engine/engine_sg_flow.h"
#include "engine/engine_spans.h"
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <string.h>
#include <xbt/config.h>
#include "core/error.h"
#include "core/units.h"
#include "hw/dram.h"
#include "hw/staging.h"
#include "results/collectives.h"
#include "results/timeline.h"
#include "spmd/spmd.h"

typedef struct engine_ctx engine_ctx;

typedef struct activity_clock {
    uint32_t active;
    double since;
    double busy_s;
} activity_clock;

typedef struct engine_stream {
    engine_ctx *ctx;
    uint32_t index;
    uint64_t ops;
    double busy_s, stall_s;
    double busy_since;   /* < 0 when idle */
    double stall_since;  /* < 0 when not waiting */
    engine_op *held;     /* the op being run, until released: an actor killed
                          * while blocked in it (a run stopped by another
                          * stream's out of memory) leaves it for the teardown */
    sg_actor_t actor;
    /* FAST's ring drift (class_start): how long before this stream's clock
     * the first device of its class got here, since a fence of a paced
     * phase of collective lead_coll */
    double lead_s;
    uint32_t lead_coll;
} engine_stream;

/* An event's latest record (FAST's ring drift, class_start): when it ran,
 * the recording stream's lead then and the collective of that lead. */
typedef struct event_record {
    double at_s, lead_s;
    uint32_t coll;
} event_record;

struct engine_ctx {
    const strata_hw *hw;
    const strata_source *src; /* the ops' source: the collectives of their steps (spmd.h) */
    const strata_engine_options *opt;
    /* src is an SPMD expansion (strata_spmd_is_expansion): only then can an
     * op be a step of a collective or a fence with a lead, and only then is
     * the ring drift of class_start kept (without one it stays 0) */
    bool spmd;
    engine_memories mems;
    engine_quotient *quotient; /* with classes (engine_quotient.h), else NULL */
    engine_feed *feed;
    strata_results *results;
    engine_spans spans;  /* where spans and samples go (spans_wanted) */
    engine_hosts hosts;
    activity_clock *links, *units, *ports;
    uint64_t *link_bytes, *port_bytes;
    double *unit_flops;
    bool *unit_launched;       /* the unit's launch cost has been paid */
    engine_power *power;       /* the power limit's clocks (engine_power.h), or NULL */
    engine_copy_queues *copy_engines; /* the links' copy engines (engine_copy_queue.h), or NULL */
    engine_stream *streams;
    uint32_t n_streams;
    engine_events *events;
    event_record *recorded; /* per event: its latest record (class_start) */
    GArray *paced_ratio; /* double per collective: its paced copies' most time over alone (note_paced) */
    strata_timeline *timeline; /* opt->timeline's writer, or NULL */
    strata_progress *progress; /* on opt->progress (silent when NULL) */
    uint64_t ops_done;
    bool stopped;
    GError *error;
};

static double now(void)
{
    return simgrid_get_clock();
}

static void clock_begin(activity_clock *c, double t)
{
    if (c->active++ == 0)
        c->since = t;
}

static void clock_end(activity_clock *c, double t)
{
    if (--c->active == 0)
        c->busy_s += t - c->since;
}

/* Ends the run early: the caller keeps running until it returns. */
static void stop_all(engine_ctx *ctx)
{
    ctx->stopped = true;
    sg_actor_kill_all();
}

/* Stops the run with an error (bad input met in the second pass, or a broken
 * allocator invariant): strata_engine_run() then returns false with it. */
static void fail_run(engine_ctx *ctx, GError *err)
{
    if (!ctx->error)
        ctx->error = err;
    else
        g_error_free(err);
    stop_all(ctx);
}

static bool spans_wanted(const engine_ctx *ctx)
{
    return ctx->opt->record_spans || ctx->opt->timeline;
}

/* With classes, the sender of a copy from another device (else STRATA_NO_ROUTE). */
static uint32_t copy_sender(const engine_ctx *ctx, const engine_op *e)
{
    if (!ctx->quotient || e->from == 0 || e->from - 1 == e->bound.device)
        return STRATA_NO_ROUTE;
    return engine_quotient_sender(ctx->quotient, e->from - 1, e->bound.dst_memory);
}

static void add_span(engine_ctx *ctx, const engine_op *e, double start, double end)
{
    if (spans_wanted(ctx))
        engine_spans_op(&ctx->spans, e, e->bound.kind == STRATA_OP_COPY ? copy_sender(ctx, e) : STRATA_NO_ROUTE,
                        start, end);
}

static void add_sample(engine_ctx *ctx, const engine_buffer *b, int64_t delta)
{
    if (spans_wanted(ctx))
        engine_spans_sample(&ctx->spans, b, delta, now());
}

static void run_alloc(engine_ctx *ctx, engine_stream *s, const strata_bound_op *op)
{
    engine_buffer *b = engine_feed_buffer(ctx->feed, op->buf);
    assert(b && b->memory < ctx->mems.n); /* engine_feed.c's invariant 2: registered when read */
    engine_memory *m = &ctx->mems.mem[b->memory];
    GError *err = NULL;
    strata_place_result placed = engine_memory_alloc(m, b, s->index, &err);
    if (placed == STRATA_PLACE_OOM) {
        strata_alloc_stats st;
        strata_placement_stats(m->place, &st);
        uint64_t cap = m->spec->capacity;
        strata_results_set_oom(ctx->results, op->index, op->line, m->spec->name, b->name,
                               engine_feed_stream_name(ctx->feed, s->index), b->size,
                               cap > st.allocated ? cap - st.allocated : 0, engine_memory_largest_gap(m));
        if (st.planned_height > cap)
            strata_results_set_oom_plan(ctx->results, st.planned_height);
        stop_all(ctx);
        return;
    }
    add_sample(ctx, b, (int64_t)b->size);
    if (placed == STRATA_PLACE_BROKEN)
        fail_run(ctx, err); /* an allocator invariant broke (--check-allocators) */
}

static void run_free(engine_ctx *ctx, const strata_bound_op *op)
{
    engine_buffer *b = engine_feed_buffer(ctx->feed, op->buf);
    if (!b)
        return;
    GError *err = NULL;
    bool ok = engine_memory_free(&ctx->mems.mem[b->memory], b, &err);
    add_sample(ctx, b, -(int64_t)b->size);
    engine_feed_forget(ctx->feed, op->buf);
    if (!ok)
        fail_run(ctx, err);
}

static void run_release(engine_ctx *ctx, const strata_bound_op *op)
{
    for (uint32_t m = 0; m < ctx->mems.n; m++) {
        GError *err = NULL;
        if ((op->memory == STRATA_BIND_NONE || op->memory == m) && !engine_memory_release(&ctx->mems.mem[m], &err)) {
            fail_run(ctx, err);
            return;
        }
    }
}

static void port_begin(engine_ctx *ctx, uint32_t memory, uint64_t bytes, double t)
{
    if (memory == STRATA_HW_NO_MEMORY) /* a hop through a switch or an intermediate chip */
        return;
    clock_begin(&ctx->ports[memory], t);
    ctx->port_bytes[memory] += bytes;
}

/* Runs a copy that starts at t0; returns when it ended. One flow of its
 * bytes (a phase's: of its rounds', then the wait of its other rounds,
 * engine_phase.h); with classes, a copy from another device flows from its
 * sender over its route on the quotient (engine_quotient.h). */
static double run_copy(engine_ctx *ctx, const engine_op *e, double t0)
{
    const strata_bound_op *op = &e->bound;
    const strata_coll_phase *phase = &e->phase;
    const strata_hop *hops = NULL;
    uint32_t n = 0, sender = copy_sender(ctx, e); /* none inside one memory */
    if (sender != STRATA_NO_ROUTE)
        engine_quotient_sender_hops(ctx->quotient, sender, &hops, &n);
    else
        strata_binder_route_hops(engine_feed_binder(ctx->feed), op->route, &hops, &n);
    uint64_t bytes = engine_phase_bytes(phase, op->bytes);
    t0 = engine_copy_queues_take(e->coll == STRATA_COLL_NONE ? ctx->copy_engines : NULL, hops, n, t0);
    port_begin(ctx, op->src_memory, bytes, t0);
    double latency = 0;
    for (uint32_t i = 0; i < n; i++) {
        clock_begin(&ctx->links[hops[i].link], t0);
        ctx->link_bytes[hops[i].link] += bytes;
        port_begin(ctx, hops[i].port, bytes, t0);
        latency += strata_hw_link(ctx->hw, hops[i].link)->latency;
    }
    if (n == 0) /* a copy inside one memory reads and writes its port */
        ctx->port_bytes[op->src_memory] += bytes;
    double wait = engine_flow_wait(ctx->hw, latency); /* its route's latency, before the flow */
    if (wait > 0)
        sg_actor_sleep_for(wait);
    double rate = engine_phase_flow_rate(phase, op->bytes, latency); /* 0: unbounded */
    if (sender != STRATA_NO_ROUTE)
        engine_sg_sendto_bounded(ctx->hosts.sender[sender], ctx->hosts.mem[op->dst_memory], (double)bytes, rate);
    else
        engine_sg_sendto_bounded(ctx->hosts.mem[op->src_memory],
                                 engine_copy_target(&ctx->hosts, op->src_memory, op->dst_memory), (double)bytes,
                                 rate);
    /* what the flow does not carry: a pageable copy's staging (hw/staging.h),
     * a copy inside one DRAM's bus turnarounds (hw/dram.h) */
    double extra = strata_staging_route_extra(ctx->hw, hops, n, bytes);
    if (n == 0)
        extra += strata_dram_copy_extra(strata_hw_memory(ctx->hw, op->src_memory), bytes);
    if (extra > 0)
        sg_actor_sleep_for(extra);
    double until = engine_phase_copy_until(phase, t0, now(), latency, !strata_hw_flow_sharing_latency(ctx->hw));
    if (until > now())
        sg_actor_sleep_for(until - now());
    double t1 = now();
    engine_copy_queues_give(e->coll == STRATA_COLL_NONE ? ctx->copy_engines : NULL, hops, n);
    clock_end(&ctx->ports[op->src_memory], t1);
    for (uint32_t i = 0; i < n; i++) {
        clock_end(&ctx->links[hops[i].link], t1);
        if (hops[i].port != STRATA_HW_NO_MEMORY)
            clock_end(&ctx->ports[hops[i].port], t1);
    }
    return t1;
}

/* Runs a compute that starts at t0; returns when it ended. Starting an
 * execution takes no simulated time. One execution of its work (a phase's
 * reduction: of its rounds', and what they would have paid beyond it,
 * engine_phase.h). */
static double run_compute(engine_ctx *ctx, const strata_bound_op *op, const strata_coll_phase *phase, double kernel_s,
                          double t0)
{
    if (op->unit == STRATA_BIND_NONE) {
        sg_actor_sleep_for(op->time_s);
        return now();
    }
    clock_begin(&ctx->units[op->unit], t0);
    double flops = engine_phase_flops(phase, op->flops);
    uint64_t bytes = engine_phase_bytes(phase, op->bytes);
    double share = 0, clock = 1; /* its matrix share and clock / peak (engine_power.h) */
    ctx->unit_flops[op->unit] += flops;
    const strata_compute_spec *u = strata_hw_compute(ctx->hw, op->unit);
    double t = t0;
    if (!ctx->unit_launched[op->unit]) {
        ctx->unit_launched[op->unit] = true;
        if (u->launch > 0) {
            sg_actor_sleep_for(u->launch);
            t = now();
        }
    }
    if (op->has_time) {
        sg_actor_sleep_for(op->time_s);
    } else {
        double amount = engine_compute_amount(ctx->hw, op->unit, op->dtype, flops);
        if (ctx->power) {
            double memory_s = bytes ? (double)bytes / strata_hw_memory(ctx->hw, op->memory)->bandwidth : 0.0;
            share = engine_power_share(amount / (u->flops > 0 ? u->flops : 1.0), memory_s);
            clock = engine_power_start(ctx->power, op->unit, share, t0);
            amount /= clock;
        }
        sg_exec_t exec = NULL;
        if (amount > 0) {
            exec = sg_actor_exec_init(amount);
            sg_exec_set_host(exec, ctx->hosts.unit[op->unit]);
            sg_exec_start(exec);
        }
        if (op->bytes > 0) {
            port_begin(ctx, op->memory, bytes, t);
            double wait = engine_flow_wait(ctx->hw, strata_hw_memory(ctx->hw, op->memory)->latency);
            if (wait > 0) /* the operand memory's latency, before the flow */
                sg_actor_sleep_for(wait);
            sg_host_sendto(ctx->hosts.mem[op->memory], ctx->hosts.unit[op->unit], (double)bytes);
            clock_end(&ctx->ports[op->memory], now());
        }
        if (exec)
            sg_exec_wait(exec);
        double alone = engine_phase_compute_alone(phase, amount, u, ctx->hw, op->memory, op->bytes);
        if (alone > 0)
            sg_actor_sleep_for(alone);
        if (u->overhead > 0)
            sg_actor_sleep_for(engine_phase_overhead(phase, u->overhead));
        if (kernel_s > 0) /* a kernel's launch, fill and drain (engine_kernel.c) */
            sg_actor_sleep_for(kernel_s);
    }
    double end = now();
    clock_end(&ctx->units[op->unit], end);
    if (ctx->power && !op->has_time)
        engine_power_end(ctx->power, op->unit, share, clock, t0, end);
    return end;
}

/* A fence's lead (strata_spmd_step.lead_ps: its collective alone) as its
 * phase ran: times the most its collective's paced copies took over their
 * time alone (each round's drift is the hot link's round less the others',
 * and what shares the ring's links lengthens both alike). */
static double phase_lead(const engine_ctx *ctx, const engine_op *e)
{
    GArray *r = ctx->paced_ratio;
    double ratio = e->coll - 1 < r->len ? g_array_index(r, double, e->coll - 1) : 1.0;
    return e->lead_s * MAX(ratio, 1.0);
}

/* A paced copy (engine_phase.h) of collective e->coll ran from t0 to t1:
 * how much longer than alone (its phase's rounds at its round time). */
static void note_paced(engine_ctx *ctx, const engine_op *e, double t0, double t1)
{
    double alone = (double)e->phase.rounds * (double)e->phase.round_time_ps * 1e-12;
    GArray *r = ctx->paced_ratio;
    if (alone <= 0)
        return;
    while (r->len < e->coll) {
        double one = 1.0;
        g_array_append_val(r, one);
    }
    double *at = &g_array_index(r, double, e->coll - 1);
    *at = MAX(*at, (t1 - t0) / alone);
}

static void run_record(engine_ctx *ctx, engine_stream *s, const engine_op *e)
{
    const strata_bound_op *op = &e->bound;
    if (e->lead_s > 0) { /* a record that ends a paced phase together (class_start) */
        s->lead_s = phase_lead(ctx, e);
        s->lead_coll = e->coll;
    }
    /* before a waiter can resume (class_start) */
    if (ctx->spmd)
        ctx->recorded[op->event] = (event_record){.at_s = now(), .lead_s = s->lead_s, .coll = s->lead_coll};
    engine_memories_event(&ctx->mems, op);
    engine_events_record(ctx->events, op->event, op->event_seq);
}

/* Waits from t0 until the awaited record has run; returns when. */
static double run_wait(engine_ctx *ctx, engine_stream *s, const strata_bound_op *op, double t0)
{
    s->stall_since = t0;
    engine_events_wait(ctx->events, op->event, op->event_seq);
    engine_memories_event(&ctx->mems, op);
    double end = now();
    s->stall_s += end - s->stall_since;
    s->stall_since = -1;
    return end;
}

/* Where the first device of s's class is, op having run from t0 to t1 on
 * s (FAST's ring drift; 0 elsewhere): how long before s's clock it got
 * here (s->lead_s), and the date op's collective starts there. The fences
 * that end a paced phase together (records and waits with a lead: spmd.c's
 * end_round, sync_groups) set it, scaled by phase_lead: the steps' devices
 * far on the ring from its hot link end the phase first. Records
 * pass it on and waits take it, max-plus: a wait ends there at the later
 * of its arrival and the record's date there (the record's lead: that of
 * its event's latest record); the phase's collective's later rounds run
 * that early there. The first step of another collective starts that much
 * early, and leaves it at 0 (its own rounds then hold the class back to
 * the representative's pace). */
static double class_start(engine_ctx *ctx, engine_stream *s, const engine_op *e, double t0, double t1)
{
    const strata_bound_op *op = &e->bound;
    double start = t0;
    if (e->lead_s > 0) { /* a fence: a wait sets it here, a record in run_record */
        if (op->kind == STRATA_OP_WAIT) {
            s->lead_s = phase_lead(ctx, e);
            s->lead_coll = e->coll;
        }
    } else if (e->coll != STRATA_COLL_NONE) {
        if (op->kind == STRATA_OP_COPY && e->phase.paced)
            note_paced(ctx, e, t0, t1);
        if (e->coll != s->lead_coll) { /* the next collective's: its rounds hold the class back */
            start -= s->lead_s;
            s->lead_s = 0;
        }
    } else if (op->kind == STRATA_OP_WAIT) {
        double at = ctx->recorded[op->event].at_s, lead = ctx->recorded[op->event].lead_s;
        double there = MAX(t0 - s->lead_s, at - lead); /* its end there */
        if (there < t1 && lead > 0 && at - lead >= t0 - s->lead_s)
            s->lead_coll = ctx->recorded[op->event].coll;
        s->lead_s = MAX(0, t1 - there);
    }
    return start;
}

/* A step of a collective ran from t0 to t1. */
static void note_collective(strata_results *r, const strata_coll_info *info, double t0, double t1)
{
    if (!info) /* a coll from a source that is no expansion: nothing to note */
        return;
    strata_collective_result *c = strata_results_collective(r, info->desc.index);
    if (c->start_s < 0) {
        c->desc = info->desc;
        c->desc.axis = g_strdup(info->desc.axis);
    }
    strata_collective_note(c, t0, t1);
}

/* The ops run of all and the simulated time, on the progress line. At the
 * first op the line starts afresh (drawn at once, its time left measured
 * from then, not from the reading), showing 0 done. */
static void show_progress(engine_ctx *ctx)
{
    uint64_t done = ctx->ops_done;
    if (done == 1) {
        strata_progress_free(ctx->progress);
        ctx->progress = strata_progress_new(ctx->opt->progress);
        done = 0;
    }
    char *t = strata_format_time(now());
    char *note = g_strconcat("simulated ", t, NULL);
    strata_progress_count(ctx->progress, "run", done, engine_feed_op_count(ctx->feed), "ops", note);
    g_free(note);
    g_free(t);
}

static void stream_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    engine_stream *s = sg_actor_self_get_data();
    engine_ctx *ctx = s->ctx;
    /* When the previous op ended: the next one starts then, as only the
     * ops that run_*() time block this actor (allocs, frees, records and
     * releases take no simulated time), and each of those returns the
     * clock after its last block. */
    double t_end = now();
    while (!ctx->stopped) {
        engine_op *e = NULL;
        GError *err = NULL;
        int got = engine_feed_next(ctx->feed, s->index, &e, &err);
        if (got < 0) {
            fail_run(ctx, err);
            break;
        }
        if (got == 0)
            break;
        s->held = e;
        const strata_bound_op *op = &e->bound;
        double t0 = t_end, t1 = t0;
        bool timed = op->kind == STRATA_OP_COPY || op->kind == STRATA_OP_COMPUTE;
        if (timed)
            s->busy_since = t0;
        switch (op->kind) {
        case STRATA_OP_ALLOC: run_alloc(ctx, s, op); break;
        case STRATA_OP_FREE: run_free(ctx, op); break;
        case STRATA_OP_COPY: t1 = run_copy(ctx, e, t0); break;
        case STRATA_OP_COMPUTE: t1 = run_compute(ctx, op, &e->phase, e->kernel_s, t0); break;
        case STRATA_OP_RECORD: run_record(ctx, s, e); break;
        case STRATA_OP_WAIT: t1 = run_wait(ctx, s, op, t0); break;
        case STRATA_OP_RELEASE: run_release(ctx, op); break;
        default: break;
        }
        t_end = t1;
        if (!ctx->stopped) {
            if (timed) {
                s->busy_s += t1 - t0;
                s->busy_since = -1;
            }
            s->ops++;
            ctx->ops_done++;
            if (ctx->opt->progress && (ctx->ops_done == 1 || ctx->ops_done % ENGINE_PROGRESS_EVERY == 0))
                show_progress(ctx);
            add_span(ctx, e, t0, t1);
            if (ctx->spmd) { /* else no op has a collective or a lead, and the drift stays 0 */
                double start = class_start(ctx, s, e, t0, t1);
                if (e->coll != STRATA_COLL_NONE && e->lead_s == 0) /* a fence (lead_s > 0) is no step */
                    note_collective(ctx->results, strata_spmd_coll(ctx->src, e->coll), start, t1);
            }
        }
        engine_feed_release(ctx->feed, e);
        s->held = NULL;
    }
}

/* Lists the results' memories, links, streams and units by name, in
 * declaration / first-appearance order, before the run (a timeline names
 * its tracks after them); fill_results() fills them in at the end. */
static void list_results(engine_ctx *ctx)
{
    strata_results *r = ctx->results;
    for (uint32_t i = 0; i < ctx->mems.n; i++) {
        const strata_memory_spec *m = ctx->mems.mem[i].spec;
        strata_memory_result *mr = strata_results_add_memory(r, m->name);
        mr->place.device[0] = m->device;
        mr->place.host[0] = m->kind == STRATA_MEM_HOST ? m->host : STRATA_NO_DEVICE;
    }
    for (uint32_t i = 0; i < strata_hw_link_count(ctx->hw); i++) {
        const strata_link_spec *l = strata_hw_link(ctx->hw, i);
        strata_link_result *lr = strata_results_add_link(r, l->name);
        memcpy(lr->place.device, l->device, sizeof lr->place.device);
        memcpy(lr->place.host, l->host, sizeof lr->place.host);
    }
    const strata_binder *b = engine_feed_binder(ctx->feed);
    for (uint32_t i = 0; i < ctx->n_streams; i++)
        strata_results_add_stream(r, engine_feed_stream_name(ctx->feed, i))->place.device[0] =
            strata_binder_stream_device(b, i);
    for (uint32_t i = 0; i < strata_hw_compute_count(ctx->hw); i++) {
        const strata_compute_spec *u = strata_hw_compute(ctx->hw, i);
        strata_results_add_compute(r, u->name)->place.device[0] = u->device;
    }
}

static void fill_results(engine_ctx *ctx, const strata_source *src, const char *origin)
{
    strata_results *r = ctx->results;
    double end = now();
    r->hardware = g_strdup(strata_hw_name(ctx->hw));
    r->trace = g_strdup(origin);
    r->makespan_s = end;
    r->ops = ctx->ops_done;
    const char *mesh = engine_feed_mesh(ctx->feed);
    r->mesh = r->devices > 1 && mesh ? g_strdup(mesh) : NULL;
    for (uint32_t i = 0; i < ctx->mems.n; i++) {
        strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        engine_memory_fill_result(&ctx->mems.mem[i], m);
        m->port_bytes = ctx->port_bytes[i];
        m->port_busy_s = ctx->ports[i].busy_s + (ctx->ports[i].active ? end - ctx->ports[i].since : 0.0);
    }
    for (uint32_t i = 0; i < strata_hw_link_count(ctx->hw); i++) {
        activity_clock *c = &ctx->links[i];
        strata_link_result *l = &g_array_index(r->links, strata_link_result, i);
        l->bytes = ctx->link_bytes[i];
        l->busy_s = c->busy_s + (c->active ? end - c->since : 0.0);
    }
    for (uint32_t i = 0; i < ctx->n_streams; i++) {
        engine_stream *s = &ctx->streams[i];
        strata_stream_result *sr = &g_array_index(r->streams, strata_stream_result, i);
        sr->ops = s->ops;
        sr->busy_s = s->busy_s + (s->busy_since >= 0 ? end - s->busy_since : 0.0);
        sr->stall_s = s->stall_s + (s->stall_since >= 0 ? end - s->stall_since : 0.0);
    }
    for (uint32_t i = 0; i < strata_hw_compute_count(ctx->hw); i++) {
        activity_clock *c = &ctx->units[i];
        strata_compute_result *cr = &g_array_index(r->compute, strata_compute_result, i);
        cr->busy_s = c->busy_s + (c->active ? end - c->since : 0.0);
        cr->flops = ctx->unit_flops[i];
    }
    engine_power_fill(ctx->power, r);
    if (ctx->quotient) { /* every device as its class's representative */
        engine_quotient_fill(ctx->quotient, r);
        const strata_spmd_classes *c = strata_spmd_classes_of(src);
        r->classes = strata_spmd_classes_count(c);
        r->symmetry = g_strdup(strata_spmd_classes_describe(c));
        r->fallback = strata_spmd_fell_back(src) ? g_strdup(strata_spmd_note(src)) : NULL;
    }
}

static void ctx_clear(engine_ctx *ctx)
{
    engine_events_free(ctx->events);
    g_free(ctx->recorded);
    if (ctx->paced_ratio)
        g_array_free(ctx->paced_ratio, TRUE);
    for (uint32_t i = 0; ctx->streams && i < ctx->n_streams; i++)
        if (ctx->streams[i].held)
            engine_feed_release(ctx->feed, ctx->streams[i].held);
    g_free(ctx->streams);
    engine_hosts_clear(&ctx->hosts);
    g_free(ctx->links);
    g_free(ctx->units);
    g_free(ctx->link_bytes);
    g_free(ctx->ports);
    g_free(ctx->port_bytes);
    g_free(ctx->unit_flops);
    g_free(ctx->unit_launched);
    engine_power_free(ctx->power);
    engine_copy_queues_free(ctx->copy_engines);
    engine_feed_free(ctx->feed);
    engine_quotient_free(ctx->quotient);
    strata_progress_free(ctx->progress); /* erases its line */
    engine_memories_clear(&ctx->mems);
    strata_results_free(ctx->results);
    strata_timeline_free(ctx->timeline);
    if (ctx->error)
        g_error_free(ctx->error);
}

void strata_engine_options_init(strata_engine_options *opt)
{
    opt->record_spans = false;
    opt->timeline = NULL;
    opt->timeline_format = NULL;
    opt->check_allocators = false;
    opt->allocator = NULL;
    opt->tape_budget = 0;
    opt->tape_memory = 0;
    opt->queue_memory = 0;
    opt->clock = STRATA_ENGINE_CLOCK_DUTY;
    opt->progress = NULL;
}

/* SimGrid reserves contexts/stack-size (8 MiB by default) of address space
 * for every actor, used or not, so thousands of streams (the lanes of an
 * all-to-all over 256 devices are 65,280) would reserve hundreds of GB.
 * A stream's actor runs the engine's op loop, never deep (the models run
 * on SimGrid's maestro stack): its stack is ENGINE_STACK_BUDGET shared
 * among the streams, at most SimGrid's default and at least
 * ENGINE_STACK_MIN; more streams than that allows are refused. */
#ifdef STRATA_SANITIZE
#define ENGINE_STACK_MIN_KIB 512u /* AddressSanitizer's redzones: one thread per actor */
#else
#define ENGINE_STACK_MIN_KIB 16u
#endif
#define ENGINE_STACK_MAX_KIB 8192u
#define ENGINE_STACK_BUDGET_KIB (1024u * 1024u) /* 1 GiB */
#define ENGINE_GUARDED_STREAMS 16384u

static bool size_stacks(uint32_t n_streams, GError **err)
{
    uint64_t kib = n_streams ? ENGINE_STACK_BUDGET_KIB / n_streams : ENGINE_STACK_MAX_KIB;
    if (kib < ENGINE_STACK_MIN_KIB) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "the program runs on %u streams (every stream, and every lane of a collective, is one "
                    "SimGrid actor with its own stack), at most %u: use fewer devices or another collective "
                    "algorithm than direct",
                    n_streams, ENGINE_STACK_BUDGET_KIB / ENGINE_STACK_MIN_KIB);
        return false;
    }
    sg_cfg_set_int("contexts/stack-size", (int)MIN(kib, ENGINE_STACK_MAX_KIB));
    /* A guard page is a mapping of its own, and Linux allows 65,530 per
     * process (vm.max_map_count): past ENGINE_GUARDED_STREAMS the stacks
     * come without one. */
    if (n_streams > ENGINE_GUARDED_STREAMS)
        sg_cfg_set_int("contexts/guard-size", 0);
    return true;
}

/* strata_engine_run() on src, or strata_engine_run_compiled() on c (taken)
 * with src NULL. */
static bool run_engine(const strata_hw *hw, strata_source *src, engine_compiled *c, const strata_engine_options *opt,
                       strata_results **out, GError **err)
{
    strata_engine_options defaults;
    if (!opt) {
        strata_engine_options_init(&defaults);
        opt = &defaults;
    }
    engine_ctx ctx = {.hw = hw, .src = src, .opt = opt, .spmd = src && strata_spmd_is_expansion(src)};
    if (!engine_platform_check(hw, err) ||
        !engine_memories_init(&ctx.mems, hw, opt->allocator, opt->check_allocators, err)) {
        engine_compiled_free(c);
        return false;
    }
    char *origin = g_strdup(src ? strata_source_origin(src) : c->origin);
    ctx.progress = strata_progress_new(opt->progress);
    ctx.quotient = src ? engine_quotient_new(hw, strata_spmd_classes_of(src)) : NULL;
    size_t queue_memory = opt->queue_memory ? opt->queue_memory : STRATA_ENGINE_QUEUE_MEMORY;
    if (src)
        ctx.feed = engine_feed_new(hw, src, &ctx.mems, ctx.quotient, spans_wanted(&ctx),
                                   opt->tape_budget ? opt->tape_budget : STRATA_ENGINE_TAPE_BUDGET,
                                   opt->tape_memory ? opt->tape_memory : STRATA_ENGINE_TAPE_MEMORY, queue_memory,
                                   ctx.progress, err);
    else
        ctx.feed = engine_feed_from_compiled(hw, c, &ctx.mems, spans_wanted(&ctx), queue_memory, err);
    engine_compiled_free(c);
    if (ctx.feed && strata_hw_devices(hw) > 1) {
        strata_progress_clear(ctx.progress); /* drawn now, however recent the last line */
        strata_progress_update(ctx.progress, "run: building the platform (%u devices)", strata_hw_devices(hw));
    }
    if (!ctx.feed || !engine_platform_load_for(hw, ctx.quotient, err) ||
        !engine_hosts_lookup_for(hw, ctx.quotient, &ctx.hosts, err)) {
        ctx_clear(&ctx);
        g_free(origin);
        return false;
    }
    ctx.results = strata_results_new("engine");
    ctx.results->devices = strata_hw_devices(hw);
    if (opt->record_spans)
        strata_results_enable_spans(ctx.results);
    uint32_t n_links = strata_hw_link_count(hw), n_units = strata_hw_compute_count(hw);
    ctx.links = g_new0(activity_clock, n_links ? n_links : 1);
    ctx.link_bytes = g_new0(uint64_t, n_links ? n_links : 1);
    ctx.units = g_new0(activity_clock, n_units ? n_units : 1);
    ctx.unit_flops = g_new0(double, n_units ? n_units : 1);
    ctx.unit_launched = g_new0(bool, n_units ? n_units : 1);
    ctx.power = opt->clock == STRATA_ENGINE_CLOCK_PEAK ? NULL
                                                      : engine_power_create(hw, opt->clock == STRATA_ENGINE_CLOCK_SUSTAINED);
    ctx.copy_engines = engine_copy_queues_new(hw);
    ctx.ports = g_new0(activity_clock, ctx.mems.n ? ctx.mems.n : 1);
    ctx.port_bytes = g_new0(uint64_t, ctx.mems.n ? ctx.mems.n : 1);
    ctx.events = engine_events_new(engine_feed_event_count(ctx.feed));
    ctx.recorded = g_new0(event_record, engine_feed_event_count(ctx.feed) + 1);
    ctx.paced_ratio = g_array_new(FALSE, FALSE, sizeof(double));
    ctx.n_streams = engine_feed_stream_count(ctx.feed);
    if (!size_stacks(ctx.n_streams, err)) {
        ctx_clear(&ctx);
        g_free(origin);
        return false;
    }
    ctx.streams = g_new0(engine_stream, ctx.n_streams ? ctx.n_streams : 1);
    list_results(&ctx);
    ctx.spans = (engine_spans){.results = ctx.results, .feed = ctx.feed, .quotient = ctx.quotient, .mems = &ctx.mems};
    if (opt->timeline) {
        ctx.timeline = strata_timeline_new_as(opt->timeline_format, opt->timeline, ctx.results, true, true);
        ctx.results->timeline = ctx.timeline;
    }
    sg_host_t home = ctx.hosts.mem[strata_hw_default_memory(hw)];
    for (uint32_t i = 0; i < ctx.n_streams; i++) {
        engine_stream *s = &ctx.streams[i];
        s->ctx = &ctx;
        s->index = i;
        s->busy_since = s->stall_since = -1;
        s->actor = sg_actor_init(engine_feed_stream_name(ctx.feed, i), home);
        sg_actor_set_data(s->actor, s);
    }
    for (uint32_t i = 0; i < ctx.n_streams; i++)
        sg_actor_start_(ctx.streams[i].actor, stream_main, 0, NULL);
    simgrid_run();
    if (ctx.error) {
        g_propagate_error(err, ctx.error);
        ctx.error = NULL;
        ctx_clear(&ctx);
        g_free(origin);
        return false;
    }
    fill_results(&ctx, src, origin);
    g_free(origin);
    if (ctx.timeline) {
        strata_timeline_finish(ctx.timeline); /* a failed write shows on the stream (ferror) */
        ctx.results->timeline = NULL;
    }
    if (ctx.quotient) /* a row per device's stream, once the timeline has the simulated ones */
        engine_quotient_streams(ctx.quotient, ctx.results);
    *out = ctx.results;
    ctx.results = NULL;
    ctx_clear(&ctx);
    return true;
}

/* Not inlined (LTO would put it in its callers): callgrind's
 * --toggle-collect=strata_engine_run measures the engine's whole run, as
 * docs/engine.md's "Speed" does; one call a run. */
__attribute__((noinline)) bool strata_engine_run(const strata_hw *hw, strata_source *src,
                                                 const strata_engine_options *opt, strata_results **out,
                                                 GError **err)
{
    return run_engine(hw, src, NULL, opt, out, err);
}

/* Not inlined, as strata_engine_run: --toggle-collect=strata_engine_run_compiled. */
__attribute__((noinline)) bool strata_engine_run_compiled(const strata_hw *hw, const char *path,
                                                          const strata_engine_options *opt, strata_results **out,
                                                          GError **err)
{
    engine_compiled *c = engine_compiled_read(path, strata_hw_fingerprint(hw), strata_hw_name(hw), err);
    return c && run_engine(hw, NULL, c, opt, out, err);
}
