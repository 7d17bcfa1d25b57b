/*
 * engine_bare.c: a bare SimGrid program issuing the engine's activities
 * (engine_bare.h), the baseline that bench/bench_engine measures the engine
 * against.
 *
 * Invariants: the activities and their order per stream are exactly those
 * engine.c issues for the same op stream (same platform, same hosts, same
 * amounts), so the makespans agree; everything that is not SimGrid (reading,
 * resolving) happens before the timed simgrid_run().
 */
#include "engine/engine_bare.h"
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <time.h>
#include "core/error.h"
#include "engine/engine_internal.h"
#include "trace/check.h"

typedef enum { BARE_COPY, BARE_COMPUTE, BARE_SLEEP, BARE_RECORD, BARE_WAIT } bare_kind;

typedef struct bare_act {
    bare_kind kind;
    sg_host_t from, to;     /* COPY; COMPUTE: operand memory -> unit */
    double bytes;           /* COPY, COMPUTE operand bytes */
    double amount;          /* COMPUTE: flops at the unit's host speed */
    double seconds;         /* SLEEP: time=; COMPUTE: overhead */
    uint32_t event;
    uint64_t seq;
} bare_act;

typedef struct bare_ctx bare_ctx;

typedef struct bare_stream {
    bare_ctx *ctx;
    GArray *acts;            /* bare_act */
    sg_actor_t actor;
    uint64_t awaited;
} bare_stream;

typedef struct bare_event {
    uint64_t done_upto;
    GHashTable *above;
    GPtrArray *waiters;
} bare_event;

struct bare_ctx {
    bare_stream *streams;
    uint32_t n_streams;
    bare_event *events;
    uint32_t n_events;
    uint64_t activities;
};

static bool event_done(const bare_event *ev, uint64_t seq)
{
    return seq <= ev->done_upto || (ev->above && g_hash_table_contains(ev->above, GSIZE_TO_POINTER(seq)));
}

static void record(bare_ctx *ctx, const bare_act *a)
{
    bare_event *ev = &ctx->events[a->event];
    if (a->seq == ev->done_upto + 1) {
        ev->done_upto++;
        while (ev->above && g_hash_table_remove(ev->above, GSIZE_TO_POINTER(ev->done_upto + 1)))
            ev->done_upto++;
    } else if (a->seq > ev->done_upto) {
        if (!ev->above)
            ev->above = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_hash_table_add(ev->above, GSIZE_TO_POINTER(a->seq));
    }
    for (guint i = 0; ev->waiters && i < ev->waiters->len;) {
        bare_stream *w = g_ptr_array_index(ev->waiters, i);
        if (event_done(ev, w->awaited)) {
            g_ptr_array_remove_index(ev->waiters, i);
            sg_actor_resume(w->actor);
        } else {
            i++;
        }
    }
}

static void stream_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    bare_stream *s = sg_actor_self_get_data();
    for (guint i = 0; i < s->acts->len; i++) {
        const bare_act *a = &g_array_index(s->acts, bare_act, i);
        switch (a->kind) {
        case BARE_COPY:
            sg_host_sendto(a->from, a->to, a->bytes);
            break;
        case BARE_COMPUTE: {
            sg_exec_t e = NULL;
            if (a->amount > 0) {
                e = sg_actor_exec_init(a->amount);
                sg_exec_set_host(e, a->to);
                sg_exec_start(e);
            }
            if (a->bytes > 0)
                sg_host_sendto(a->from, a->to, a->bytes);
            if (e)
                sg_exec_wait(e);
            if (a->seconds > 0)
                sg_actor_sleep_for(a->seconds);
            break;
        }
        case BARE_SLEEP:
            sg_actor_sleep_for(a->seconds);
            break;
        case BARE_RECORD:
            record(s->ctx, a);
            break;
        case BARE_WAIT: {
            bare_event *ev = &s->ctx->events[a->event];
            if (!event_done(ev, a->seq)) {
                if (!ev->waiters)
                    ev->waiters = g_ptr_array_new();
                s->awaited = a->seq;
                g_ptr_array_add(ev->waiters, s);
                sg_actor_suspend(s->actor);
            }
            break;
        }
        }
    }
}

static sg_host_t host_named(char *name)
{
    sg_host_t h = sg_host_by_name(name);
    g_free(name);
    return h;
}

static int memory_of(const strata_hw *hw, const strata_checker *c, uint64_t id)
{
    const char *memory = NULL;
    if (!strata_checker_buffer(c, id, NULL, &memory))
        return -1;
    return memory ? strata_hw_memory_index(hw, memory) : (int)strata_hw_default_memory(hw);
}

/* Resolves the whole source into per-stream activities (untimed). */
static bool resolve(const strata_hw *hw, strata_source *src, bare_ctx *ctx, GPtrArray *acts, GError **err)
{
    strata_checker *c = strata_checker_new(strata_source_origin(src));
    GHashTable *dtypes = g_hash_table_new(g_direct_hash, g_direct_equal); /* id -> dtype + 1 */
    bool ok = strata_source_rewind(src, err);
    while (ok) {
        const strata_op *op = NULL;
        int got = strata_source_next(src, &op, err);
        if (got <= 0) {
            ok = got == 0;
            break;
        }
        strata_op_refs refs;
        if (!(ok = strata_checker_feed(c, op, &refs, err)))
            break;
        if (op->kind == STRATA_OP_OPTION)
            continue;
        while (acts->len <= refs.stream)
            g_ptr_array_add(acts, g_array_new(FALSE, TRUE, sizeof(bare_act)));
        GArray *mine = g_ptr_array_index(acts, refs.stream);
        bare_act a = {0};
        switch (op->kind) {
        case STRATA_OP_ALLOC:
            g_hash_table_insert(dtypes, GSIZE_TO_POINTER(refs.buf), GSIZE_TO_POINTER((gsize)op->dtype + 1));
            continue;
        case STRATA_OP_FREE:
            g_hash_table_remove(dtypes, GSIZE_TO_POINTER(refs.buf));
            continue;
        case STRATA_OP_COPY: {
            int from = memory_of(hw, c, refs.src), to = memory_of(hw, c, refs.buf);
            if (from < 0 || to < 0) {
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s:%" G_GUINT64_FORMAT ": unknown memory",
                            strata_source_origin(src), op->line);
                ok = false;
                break;
            }
            a.kind = BARE_COPY;
            a.from = host_named(engine_memory_host_name(strata_hw_memory(hw, (uint32_t)from)));
            a.to = host_named(from == to ? engine_memory_twin_name(strata_hw_memory(hw, (uint32_t)to))
                                         : engine_memory_host_name(strata_hw_memory(hw, (uint32_t)to)));
            a.bytes = (double)refs.bytes;
            break;
        }
        case STRATA_OP_COMPUTE: {
            int unit = strata_hw_compute_count(hw) ? strata_hw_compute_index(hw, op->memory) : -1;
            if (op->has_time || unit < 0) {
                a.kind = BARE_SLEEP;
                a.seconds = op->time_s;
                break;
            }
            const strata_compute_spec *u = strata_hw_compute(hw, (uint32_t)unit);
            uint64_t first = op->n_ins ? refs.ins[0] : op->n_outs ? refs.outs[0] : UINT64_MAX;
            gsize dt = first != UINT64_MAX ? GPOINTER_TO_SIZE(g_hash_table_lookup(dtypes, GSIZE_TO_POINTER(first))) : 0;
            strata_dtype dtype = dt ? (strata_dtype)(dt - 1) : STRATA_DTYPE_NONE;
            double speed = u->flops > 0 ? u->flops : 1.0;
            double peak = strata_hw_compute_flops(hw, (uint32_t)unit, dtype);
            a.kind = BARE_COMPUTE;
            a.amount = op->has_flops && op->flops > 0 && peak > 0 ? op->flops * (speed / peak) : 0.0;
            a.from = host_named(engine_memory_host_name(strata_hw_memory(hw, u->operands)));
            a.to = host_named(engine_unit_host_name(u));
            a.bytes = (double)refs.bytes;
            a.seconds = u->overhead;
            break;
        }
        case STRATA_OP_RECORD:
        case STRATA_OP_WAIT:
            a.kind = op->kind == STRATA_OP_RECORD ? BARE_RECORD : BARE_WAIT;
            a.event = refs.event;
            a.seq = refs.event_seq;
            break;
        default:
            continue;
        }
        if (!ok)
            break;
        g_array_append_val(mine, a);
        ctx->activities++;
    }
    ctx->n_events = strata_checker_event_count(c);
    g_hash_table_destroy(dtypes);
    strata_checker_free(c);
    return ok;
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool strata_engine_run_bare(const strata_hw *hw, strata_source *src, strata_bare_timing *out, GError **err)
{
    if (!engine_platform_load(hw, err))
        return false;
    bare_ctx ctx = {0};
    GPtrArray *acts = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    bool ok = resolve(hw, src, &ctx, acts, err);
    if (ok) {
        ctx.n_streams = acts->len;
        ctx.streams = g_new0(bare_stream, ctx.n_streams ? ctx.n_streams : 1);
        ctx.events = g_new0(bare_event, ctx.n_events ? ctx.n_events : 1);
        sg_host_t home = host_named(engine_memory_host_name(strata_hw_memory(hw, strata_hw_default_memory(hw))));
        for (uint32_t i = 0; i < ctx.n_streams; i++) {
            bare_stream *s = &ctx.streams[i];
            s->ctx = &ctx;
            s->acts = g_ptr_array_index(acts, i);
            s->actor = sg_actor_init("bare", home);
            sg_actor_set_data(s->actor, s);
        }
        for (uint32_t i = 0; i < ctx.n_streams; i++)
            sg_actor_start_(ctx.streams[i].actor, stream_main, 0, NULL);
        double c0 = cpu_seconds(), w0 = wall_seconds();
        simgrid_run();
        out->run_cpu_s = cpu_seconds() - c0;
        out->run_wall_s = wall_seconds() - w0;
        out->makespan_s = simgrid_get_clock();
        out->activities = ctx.activities;
    }
    for (uint32_t i = 0; i < ctx.n_events; i++) {
        if (ctx.events && ctx.events[i].above)
            g_hash_table_destroy(ctx.events[i].above);
        if (ctx.events && ctx.events[i].waiters)
            g_ptr_array_free(ctx.events[i].waiters, TRUE);
    }
    g_free(ctx.events);
    g_free(ctx.streams);
    g_ptr_array_free(acts, TRUE);
    return ok;
}
