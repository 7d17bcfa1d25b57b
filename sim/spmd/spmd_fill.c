/*
 * spmd_fill.c: a round's copies by progressive filling (contract in
 * spmd_fill.h).
 */
#include "spmd/spmd_fill.h"
#include "core/minheap.h"
#include <glib.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { PENDING, ACTIVE, DONE };

typedef struct fill_copy {
    double start;  /* its delay and its route's latency */
    double weight; /* 1 / its penalty (CM02: the route latency, 1 when 0) */
    double left;   /* bytes not yet moved */
    double rate;   /* B/s in the current solve */
    double end;
    uint32_t first, n; /* its links: f->copy_links[first, first + n) */
    uint8_t state;
    bool fixed; /* its rate is fixed in the current solve */
} fill_copy;

typedef struct fill_link {
    double bandwidth;
    double left;       /* capacity not yet given to fixed copies */
    double weights;    /* of its active copies not yet fixed */
    uint32_t unfixed;  /* their count */
    uint32_t version;  /* a heap entry of another version is stale */
    uint32_t first, n; /* its copies: f->link_copies[first, first + n) */
} fill_link;

typedef struct level_entry {
    double level; /* left / weights when pushed */
    uint32_t link, version;
} level_entry;

typedef struct start_entry {
    double start;
    uint32_t copy;
} start_entry;

struct spmd_fill {
    uint32_t keys;
    uint32_t stamp;
    uint32_t *key_stamp; /* per key: the stamp its key_link was set in */
    uint32_t *key_link;  /* per key: its index in links */
    GArray *copies;      /* fill_copy */
    GArray *copy_links;  /* uint32_t: indices in links */
    GArray *links;       /* fill_link */
    GArray *link_copies; /* uint32_t: indices in copies (CSR by link) */
    GArray *heap;        /* level_entry, least level first */
    GArray *order;       /* start_entry */
};

spmd_fill *spmd_fill_new(uint32_t keys)
{
    spmd_fill *f = g_new0(spmd_fill, 1);
    f->keys = keys;
    f->key_stamp = g_new0(uint32_t, keys ? keys : 1);
    f->key_link = g_new0(uint32_t, keys ? keys : 1);
    f->copies = g_array_new(FALSE, FALSE, sizeof(fill_copy));
    f->copy_links = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    f->links = g_array_new(FALSE, FALSE, sizeof(fill_link));
    f->link_copies = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    f->heap = g_array_new(FALSE, FALSE, sizeof(level_entry));
    f->order = g_array_new(FALSE, FALSE, sizeof(start_entry));
    f->stamp = 1;
    return f;
}

void spmd_fill_free(spmd_fill *f)
{
    if (!f)
        return;
    g_free(f->key_stamp);
    g_free(f->key_link);
    g_array_free(f->copies, TRUE);
    g_array_free(f->copy_links, TRUE);
    g_array_free(f->links, TRUE);
    g_array_free(f->link_copies, TRUE);
    g_array_free(f->heap, TRUE);
    g_array_free(f->order, TRUE);
    g_free(f);
}

void spmd_fill_clear(spmd_fill *f)
{
    g_array_set_size(f->copies, 0);
    g_array_set_size(f->copy_links, 0);
    g_array_set_size(f->links, 0);
    if (++f->stamp == 0) { /* wrapped: every key stale again */
        memset(f->key_stamp, 0, sizeof(uint32_t) * (f->keys ? f->keys : 1));
        f->stamp = 1;
    }
}

void spmd_fill_copy(spmd_fill *f, double delay_s, double latency_s, double bytes)
{
    fill_copy c = {.start = delay_s + latency_s, .weight = 1.0 / (latency_s > 0 ? latency_s : 1.0),
                   .left = bytes, .first = f->copy_links->len, .n = 0, .state = PENDING};
    g_array_append_val(f->copies, c);
}

void spmd_fill_link(spmd_fill *f, uint32_t key, double bandwidth)
{
    g_assert(key < f->keys && f->copies->len > 0);
    if (f->key_stamp[key] != f->stamp) {
        fill_link l = {.bandwidth = bandwidth};
        f->key_stamp[key] = f->stamp;
        f->key_link[key] = f->links->len;
        g_array_append_val(f->links, l);
    }
    g_array_append_val(f->copy_links, f->key_link[key]);
    g_array_index(f->copies, fill_copy, f->copies->len - 1).n++;
}

/* ---- the heap of link levels --------------------------------------------- */

static inline bool level_before(const level_entry *a, const level_entry *b)
{
    return a->level < b->level;
}

STRATA_HEAP_DEFINE(heap, level_entry, level_before)

/* ---- progressive filling ------------------------------------------------- */

static void push_level(spmd_fill *f, uint32_t link)
{
    const fill_link *l = &g_array_index(f->links, fill_link, link);
    if (l->unfixed > 0)
        heap_push(f->heap, (level_entry){MAX(l->left, 0.0) / l->weights, link, l->version});
}

/* Fixes the rate of every active copy not yet fixed on `link`, at `level`
 * (each copy: level x its weight), and takes it from its other links. */
static void fix_link(spmd_fill *f, uint32_t link, double level)
{
    const fill_link *l = &g_array_index(f->links, fill_link, link);
    const uint32_t *on = &g_array_index(f->link_copies, uint32_t, l->first);
    for (uint32_t j = 0; j < l->n; j++) {
        fill_copy *c = &g_array_index(f->copies, fill_copy, on[j]);
        if (c->state != ACTIVE || c->fixed)
            continue;
        c->fixed = true;
        c->rate = level * c->weight;
        for (uint32_t k = 0; k < c->n; k++) {
            uint32_t m = g_array_index(f->copy_links, uint32_t, c->first + k);
            fill_link *ml = &g_array_index(f->links, fill_link, m);
            ml->left -= c->rate;
            ml->weights -= c->weight;
            ml->unfixed--;
            ml->version++;
            if (m != link)
                push_level(f, m);
        }
    }
}

/* The max-min rates of the active copies (weighted by 1 / penalty). */
static void solve(spmd_fill *f)
{
    for (guint i = 0; i < f->links->len; i++) {
        fill_link *l = &g_array_index(f->links, fill_link, i);
        l->left = l->bandwidth;
        l->weights = 0;
        l->unfixed = 0;
        l->version++;
    }
    for (guint i = 0; i < f->copies->len; i++) {
        fill_copy *c = &g_array_index(f->copies, fill_copy, i);
        c->fixed = false;
        c->rate = 0;
        if (c->state != ACTIVE)
            continue;
        for (uint32_t k = 0; k < c->n; k++) {
            fill_link *l = &g_array_index(f->links, fill_link, g_array_index(f->copy_links, uint32_t, c->first + k));
            l->weights += c->weight;
            l->unfixed++;
        }
    }
    g_array_set_size(f->heap, 0);
    for (guint i = 0; i < f->links->len; i++)
        push_level(f, i);
    while (f->heap->len > 0) {
        level_entry e = heap_pop(f->heap);
        const fill_link *l = &g_array_index(f->links, fill_link, e.link);
        if (e.version == l->version && l->unfixed > 0)
            fix_link(f, e.link, e.level);
    }
}

/* Each link's copies (CSR), and the copies in order of their starts. */
static void index_copies(spmd_fill *f)
{
    guint n_links = f->links->len;
    for (guint i = 0; i < n_links; i++)
        g_array_index(f->links, fill_link, i).n = 0;
    for (guint i = 0; i < f->copy_links->len; i++)
        g_array_index(f->links, fill_link, g_array_index(f->copy_links, uint32_t, i)).n++;
    uint32_t at = 0;
    for (guint i = 0; i < n_links; i++) {
        fill_link *l = &g_array_index(f->links, fill_link, i);
        l->first = at;
        at += l->n;
        l->n = 0;
    }
    g_array_set_size(f->link_copies, at);
    g_array_set_size(f->order, f->copies->len);
    for (guint i = 0; i < f->copies->len; i++) {
        const fill_copy *c = &g_array_index(f->copies, fill_copy, i);
        for (uint32_t k = 0; k < c->n; k++) {
            fill_link *l = &g_array_index(f->links, fill_link, g_array_index(f->copy_links, uint32_t, c->first + k));
            g_array_index(f->link_copies, uint32_t, l->first + l->n++) = i;
        }
        g_array_index(f->order, start_entry, i) = (start_entry){c->start, i};
    }
}

static int by_start(const void *a, const void *b)
{
    const start_entry *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : (x->copy > y->copy) - (x->copy < y->copy);
}

/* Starts the copies whose start is `t` or before; the count still to end. */
static guint start_due(spmd_fill *f, guint *next, double t)
{
    guint started = 0;
    while (*next < f->order->len && g_array_index(f->order, start_entry, *next).start <= t) {
        fill_copy *c = &g_array_index(f->copies, fill_copy, g_array_index(f->order, start_entry, *next).copy);
        (*next)++;
        if (c->left > 0 && c->n > 0) {
            c->state = ACTIVE;
            started++;
        } else { /* nothing to move, or no link to move it over */
            c->state = DONE;
            c->end = c->start;
        }
    }
    return started;
}

double spmd_fill_run(spmd_fill *f, double *ends)
{
    guint n = f->copies->len, next = 0, active = 0;
    if (n == 0)
        return 0;
    index_copies(f);
    qsort(f->order->data, n, sizeof(start_entry), by_start);
    double t = g_array_index(f->order, start_entry, 0).start, last = 0;
    for (;;) {
        active += start_due(f, &next, t);
        if (active == 0) {
            if (next == n)
                break;
            t = g_array_index(f->order, start_entry, next).start;
            continue;
        }
        solve(f);
        double dt = next < n ? g_array_index(f->order, start_entry, next).start - t : INFINITY;
        for (guint i = 0; i < n; i++) {
            const fill_copy *c = &g_array_index(f->copies, fill_copy, i);
            if (c->state == ACTIVE && c->rate > 0)
                dt = MIN(dt, c->left / c->rate);
        }
        g_assert(isfinite(dt)); /* every link has a bandwidth (hw.h) */
        double t1 = t + dt;
        for (guint i = 0; i < n; i++) {
            fill_copy *c = &g_array_index(f->copies, fill_copy, i);
            if (c->state != ACTIVE)
                continue;
            if (c->left <= c->rate * dt * (1 + 1e-12)) { /* ends now (rounding aside) */
                c->state = DONE;
                c->end = t1;
                active--;
            } else {
                c->left -= c->rate * dt;
            }
        }
        t = t1;
    }
    for (guint i = 0; i < n; i++) {
        const fill_copy *c = &g_array_index(f->copies, fill_copy, i);
        last = MAX(last, c->end);
        if (ends)
            ends[i] = c->end;
    }
    return last;
}
