/*
 * engine_bare.c: a bare SimGrid program issuing the engine's activities, and
 * the runner that times it against the engine (engine_bare.h).
 *
 * Invariants: the activities and their order per stream are exactly those
 * engine.c issues for the same op stream: the same binder resolves the ops,
 * the same platform, hosts and compute amounts (engine_platform.h) and the
 * same record/wait code (engine_event.h) are used, so the makespans agree;
 * both sides are timed as whole programs (the "wall time of the
 * whole process"): loading the hardware model and building SimGrid's
 * platform count on both sides, since a bare SimGrid program loads its
 * platform too; reading and binding the trace count only on the engine's
 * side (the bare program's activity lists are built untimed, as if
 * compiled in).
 */
#include "engine_bare.h"
#include "bench_clock.h"
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "engine/engine.h"
#include "engine/engine_event.h"
#include "engine/engine_platform.h"
#include "bind/bind.h"
#include "trace/reader.h"

typedef enum { BARE_COPY, BARE_COMPUTE, BARE_SLEEP, BARE_RECORD, BARE_WAIT } bare_kind;

typedef struct bare_act {
    bare_kind kind;
    sg_host_t from, to;     /* COPY; COMPUTE: operand memory -> unit */
    double bytes;           /* COPY, COMPUTE operand bytes */
    double amount;          /* COMPUTE: engine_compute_amount() */
    double seconds;         /* SLEEP: time=; COMPUTE: overhead */
    double wait;            /* COPY, COMPUTE operand bytes: engine_flow_wait() before the flow */
    uint32_t event;
    uint64_t seq;
} bare_act;

typedef struct bare_stream {
    engine_events *events;
    GArray *acts;            /* bare_act */
} bare_stream;

static void stream_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    bare_stream *s = sg_actor_self_get_data();
    for (guint i = 0; i < s->acts->len; i++) {
        const bare_act *a = &g_array_index(s->acts, bare_act, i);
        switch (a->kind) {
        case BARE_COPY:
            if (a->wait > 0)
                sg_actor_sleep_for(a->wait);
            sg_host_sendto(a->from, a->to, a->bytes);
            break;
        case BARE_COMPUTE: {
            sg_exec_t e = NULL;
            if (a->amount > 0) {
                e = sg_actor_exec_init(a->amount);
                sg_exec_set_host(e, a->to);
                sg_exec_start(e);
            }
            if (a->bytes > 0) {
                if (a->wait > 0)
                    sg_actor_sleep_for(a->wait);
                sg_host_sendto(a->from, a->to, a->bytes);
            }
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
            engine_events_record(s->events, a->event, a->seq);
            break;
        case BARE_WAIT:
            engine_events_wait(s->events, a->event, a->seq);
            break;
        }
    }
}

/* The activity of a bound op; false for ops that take no simulated time. */
static bool activity_of(const strata_hw *hw, const strata_binder *b, const engine_hosts *h, const strata_bound_op *op,
                        bare_act *a)
{
    *a = (bare_act){.event = op->event, .seq = op->event_seq};
    switch (op->kind) {
    case STRATA_OP_COPY: {
        const strata_hop *hops = NULL;
        uint32_t n = 0;
        double latency = 0;
        strata_binder_route_hops(b, op->route, &hops, &n);
        for (uint32_t i = 0; i < n; i++)
            latency += strata_hw_link(hw, hops[i].link)->latency;
        a->wait = engine_flow_wait(hw, latency);
        a->kind = BARE_COPY;
        a->from = h->mem[op->src_memory];
        a->to = engine_copy_target(h, op->src_memory, op->dst_memory);
        a->bytes = (double)op->bytes;
        return true;
    }
    case STRATA_OP_COMPUTE:
        if (op->has_time || op->unit == STRATA_BIND_NONE) {
            a->kind = BARE_SLEEP;
            a->seconds = op->time_s;
            return true;
        }
        a->kind = BARE_COMPUTE;
        a->amount = engine_compute_amount(hw, op->unit, op->dtype, op->flops);
        a->from = h->mem[op->memory];
        a->to = h->unit[op->unit];
        a->bytes = (double)op->bytes;
        a->seconds = strata_hw_compute(hw, op->unit)->overhead;
        a->wait = engine_flow_wait(hw, strata_hw_memory(hw, op->memory)->latency);
        return true;
    case STRATA_OP_RECORD:
        a->kind = BARE_RECORD;
        return true;
    case STRATA_OP_WAIT:
        a->kind = BARE_WAIT;
        return true;
    default:
        return false;
    }
}

/* Binds the whole source into per-stream activities (untimed). */
static bool bind_all(const strata_hw *hw, const engine_hosts *h, strata_source *src, GPtrArray *acts,
                     uint32_t *n_events, uint64_t *activities, GError **err)
{
    strata_bind_options opt = {.hw = hw};
    strata_binder *b = strata_binder_new(src, &opt);
    bool ok = strata_binder_rewind(b, err);
    const strata_bound_op *op = NULL;
    int got = 0;
    while (ok && (got = strata_binder_next(b, &op, err)) == 1) {
        while (acts->len <= op->stream)
            g_ptr_array_add(acts, g_array_new(FALSE, TRUE, sizeof(bare_act)));
        bare_act a;
        if (activity_of(hw, b, h, op, &a)) {
            g_array_append_val(g_ptr_array_index(acts, op->stream), a);
            (*activities)++;
        }
    }
    *n_events = strata_checker_event_count(strata_binder_checker(b));
    strata_binder_free(b);
    return ok && got == 0;
}

bool strata_engine_run_bare(const strata_hw *hw, strata_source *src, strata_bare_timing *out, GError **err)
{
    engine_hosts hosts = {0};
    double c0 = bench_cpu_seconds(), w0 = bench_wall_seconds();
    if (!engine_platform_load(hw, err) || !engine_hosts_lookup(hw, &hosts, err)) {
        engine_hosts_clear(&hosts);
        return false;
    }
    out->setup_cpu_s = bench_cpu_seconds() - c0;
    out->setup_wall_s = bench_wall_seconds() - w0;
    GPtrArray *acts = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    uint32_t n_events = 0;
    uint64_t activities = 0;
    bool ok = bind_all(hw, &hosts, src, acts, &n_events, &activities, err);
    if (ok) {
        c0 = bench_cpu_seconds();
        w0 = bench_wall_seconds();
        engine_events *events = engine_events_new(n_events);
        bare_stream *streams = g_new0(bare_stream, acts->len ? acts->len : 1);
        sg_host_t home = hosts.mem[strata_hw_default_memory(hw)];
        sg_actor_t *actors = g_new0(sg_actor_t, acts->len ? acts->len : 1);
        for (guint i = 0; i < acts->len; i++) {
            streams[i] = (bare_stream){events, g_ptr_array_index(acts, i)};
            actors[i] = sg_actor_init("bare", home);
            sg_actor_set_data(actors[i], &streams[i]);
        }
        for (guint i = 0; i < acts->len; i++)
            sg_actor_start_(actors[i], stream_main, 0, NULL);
        simgrid_run();
        out->run_cpu_s = bench_cpu_seconds() - c0;
        out->run_wall_s = bench_wall_seconds() - w0;
        out->makespan_s = simgrid_get_clock();
        out->activities = activities;
        g_free(actors);
        g_free(streams);
        engine_events_free(events);
    }
    g_ptr_array_free(acts, TRUE);
    engine_hosts_clear(&hosts);
    return ok;
}

typedef void (*bare_side)(const strata_hw *hw, const char *trace_path, strata_bare_report *rep, GError **err);

/* Timed: opening the trace and the whole strata_engine_run(). */
static void engine_side(const strata_hw *hw, const char *trace_path, strata_bare_report *rep, GError **err)
{
    double c0 = bench_cpu_seconds(), w0 = bench_wall_seconds();
    strata_source *src = strata_trace_open(trace_path, err);
    strata_results *r = NULL;
    if (src && strata_engine_run(hw, src, NULL, &r, err)) {
        *rep = (strata_bare_report){true, bench_cpu_seconds() - c0, bench_wall_seconds() - w0, r->makespan_s, r->ops};
        strata_results_free(r);
    }
    strata_source_free(src);
}

/* Timed: the whole strata_engine_run_compiled() (the file's reading too). */
static void engine_compiled_side(const strata_hw *hw, const char *compiled_path, strata_bare_report *rep,
                                 GError **err)
{
    double c0 = bench_cpu_seconds(), w0 = bench_wall_seconds();
    strata_results *r = NULL;
    if (strata_engine_run_compiled(hw, compiled_path, NULL, &r, err)) {
        *rep = (strata_bare_report){true, bench_cpu_seconds() - c0, bench_wall_seconds() - w0, r->makespan_s, r->ops};
        strata_results_free(r);
    }
}

/* Timed: the platform, the actors and simgrid_run(); not the binding. */
static void bare_side_run(const strata_hw *hw, const char *trace_path, strata_bare_report *rep, GError **err)
{
    strata_bare_timing t = {0};
    strata_source *src = strata_trace_open(trace_path, err);
    if (src && strata_engine_run_bare(hw, src, &t, err))
        *rep = (strata_bare_report){true, t.setup_cpu_s + t.run_cpu_s, t.setup_wall_s + t.run_wall_s,
                                    t.makespan_s, t.activities};
    strata_source_free(src);
}

/* In a child process: loads the model (timed, on both sides: each program
 * reads its platform), runs one side and returns its report through a
 * pipe. */
static strata_bare_report in_child(bare_side side, const char *what, const char *hw_path, const char *trace_path)
{
    strata_bare_report rep = {0};
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        return rep;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        GError *err = NULL;
        double c0 = bench_cpu_seconds(), w0 = bench_wall_seconds();
        strata_hw *hw = strata_hw_load(hw_path, NULL, &err);
        double load_cpu_s = bench_cpu_seconds() - c0, load_wall_s = bench_wall_seconds() - w0;
        if (hw)
            side(hw, trace_path, &rep, &err);
        rep.cpu_s += load_cpu_s;
        rep.wall_s += load_wall_s;
        if (!rep.ok)
            fprintf(stderr, "%s: %s\n", what, err ? err->message : "failed");
        ssize_t w = write(fds[1], &rep, sizeof rep);
        _exit(w == (ssize_t)sizeof rep ? 0 : 1);
    }
    close(fds[1]);
    if (pid < 0 || read(fds[0], &rep, sizeof rep) != (ssize_t)sizeof rep)
        rep.ok = false;
    close(fds[0]);
    int status = 0;
    if (pid > 0)
        waitpid(pid, &status, 0);
    return rep;
}

strata_bare_report strata_bare_engine_compiled(const char *hw_path, const char *compiled_path)
{
    return in_child(engine_compiled_side, "engine (compiled)", hw_path, compiled_path);
}

bool strata_bare_compare(const char *hw_path, const char *trace_path, strata_bare_report *engine,
                         strata_bare_report *bare)
{
    *engine = in_child(engine_side, "engine", hw_path, trace_path);
    *bare = in_child(bare_side_run, "bare", hw_path, trace_path);
    return engine->ok && bare->ok;
}
