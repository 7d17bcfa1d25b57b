/*
 * engine_event.c: record/wait between stream actors (contract in engine_event.h).
 */
#include "engine/engine_event.h"
#include <simgrid/actor.h>

typedef struct waiter {
    uint64_t awaited;
    sg_actor_t actor;
} waiter;

typedef struct event_state {
    uint64_t done_upto;  /* every record 1..done_upto has executed */
    GHashTable *above;   /* records > done_upto that have executed (set), lazily */
    GArray *waiters;     /* waiter, in the order they began waiting, lazily */
} event_state;

struct engine_events {
    event_state *events;
    uint32_t n;
};

engine_events *engine_events_new(uint32_t n_events)
{
    engine_events *ev = g_new0(engine_events, 1);
    ev->n = n_events;
    ev->events = g_new0(event_state, n_events ? n_events : 1);
    return ev;
}

void engine_events_free(engine_events *ev)
{
    if (!ev)
        return;
    for (uint32_t i = 0; i < ev->n; i++) {
        if (ev->events[i].above)
            g_hash_table_destroy(ev->events[i].above);
        if (ev->events[i].waiters)
            g_array_free(ev->events[i].waiters, TRUE);
    }
    g_free(ev->events);
    g_free(ev);
}

static bool event_done(const event_state *e, uint64_t seq)
{
    return seq <= e->done_upto || (e->above && g_hash_table_contains(e->above, GSIZE_TO_POINTER(seq)));
}

void engine_events_record(engine_events *ev, uint32_t event, uint64_t seq)
{
    event_state *e = &ev->events[event];
    if (seq == e->done_upto + 1) {
        e->done_upto++;
        while (e->above && g_hash_table_remove(e->above, GSIZE_TO_POINTER(e->done_upto + 1)))
            e->done_upto++;
    } else if (seq > e->done_upto) {
        if (!e->above)
            e->above = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_hash_table_add(e->above, GSIZE_TO_POINTER(seq));
    }
    for (guint i = 0; e->waiters && i < e->waiters->len;) {
        waiter w = g_array_index(e->waiters, waiter, i);
        if (event_done(e, w.awaited)) {
            g_array_remove_index(e->waiters, i);
            sg_actor_resume(w.actor);
        } else {
            i++;
        }
    }
}

void engine_events_wait(engine_events *ev, uint32_t event, uint64_t seq)
{
    event_state *e = &ev->events[event];
    if (event_done(e, seq))
        return;
    if (!e->waiters)
        e->waiters = g_array_new(FALSE, FALSE, sizeof(waiter));
    waiter w = {seq, sg_actor_self()};
    g_array_append_val(e->waiters, w);
    sg_actor_suspend(w.actor);
}
