/*
 * engine_copy_queue.c: a GPU's copy engines (contract in engine_copy_queue.h).
 */
#include "engine/engine_copy_queue.h"
#include <glib.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>

/* One direction of one link: its engines and the copies waiting for one. */
typedef struct copy_queue {
    uint32_t engines; /* 0: the link gives no copy_engines */
    uint32_t in_use;
    GQueue *waiting;  /* sg_actor_t, the longest waiter first; lazily */
} copy_queue;

struct engine_copy_queues {
    copy_queue *q; /* 2 per link: [2 * link + forward] */
    uint32_t n_links;
};

engine_copy_queues *engine_copy_queues_new(const strata_hw *hw)
{
    uint32_t n = strata_hw_link_count(hw);
    engine_copy_queues *qs = NULL;
    for (uint32_t l = 0; l < n; l++) {
        uint32_t engines = strata_hw_link(hw, l)->copy_engines;
        if (!engines)
            continue;
        if (!qs) {
            qs = g_new0(engine_copy_queues, 1);
            qs->q = g_new0(copy_queue, 2 * (size_t)n);
            qs->n_links = n;
        }
        qs->q[2 * l].engines = qs->q[2 * l + 1].engines = engines;
    }
    return qs;
}

void engine_copy_queues_free(engine_copy_queues *qs)
{
    if (!qs)
        return;
    for (uint32_t i = 0; i < 2 * qs->n_links; i++)
        if (qs->q[i].waiting) /* actors killed while waiting (a run stopped early) */
            g_queue_free(qs->q[i].waiting);
    g_free(qs->q);
    g_free(qs);
}

/* The queue a hop takes, or NULL where its link has no copy engines. */
static copy_queue *hop_queue(engine_copy_queues *qs, const strata_hop *h)
{
    if (h->link >= qs->n_links)
        return NULL;
    copy_queue *q = &qs->q[2 * (size_t)h->link + (h->forward ? 1 : 0)];
    return q->engines ? q : NULL;
}

/* One engine of q, waiting first come, first served when all are in use
 * or others wait already (invariant 2: no overtaking); true when it waited. */
static bool take_one(copy_queue *q)
{
    if (q->in_use < q->engines && (!q->waiting || g_queue_is_empty(q->waiting))) {
        q->in_use++;
        return false;
    }
    if (!q->waiting)
        q->waiting = g_queue_new();
    sg_actor_t self = sg_actor_self();
    g_queue_push_tail(q->waiting, self);
    sg_actor_suspend(self); /* resumed by give_one, holding the engine it passed */
    return true;
}

double engine_copy_queues_take(engine_copy_queues *qs, const strata_hop *hops, uint32_t n, double t0)
{
    if (!qs)
        return t0;
    /* invariant 3: the queues in ascending (link, direction) order (a
     * route crosses each link once; its copy-engine hops are few) */
    size_t last = 0;
    bool any = false, waited = false;
    for (;;) {
        copy_queue *next = NULL;
        size_t at = 0;
        for (uint32_t i = 0; i < n; i++) {
            copy_queue *q = hop_queue(qs, &hops[i]);
            size_t k = q ? (size_t)(q - qs->q) : 0;
            if (q && (!any || k > last) && (!next || k < at)) {
                next = q;
                at = k;
            }
        }
        if (!next)
            break;
        waited = take_one(next) || waited;
        last = at;
        any = true;
    }
    return waited ? simgrid_get_clock() : t0;
}

/* Passes q's engine to its longest waiter, or frees it. */
static void give_one(copy_queue *q)
{
    if (q->waiting && !g_queue_is_empty(q->waiting))
        sg_actor_resume(g_queue_pop_head(q->waiting));
    else
        q->in_use--;
}

void engine_copy_queues_give(engine_copy_queues *qs, const strata_hop *hops, uint32_t n)
{
    if (!qs)
        return;
    for (uint32_t i = 0; i < n; i++) {
        copy_queue *q = hop_queue(qs, &hops[i]);
        if (q)
            give_one(q);
    }
}
