/*
 * spmd_fill.c: a round's copies by progressive filling, and rounds of
 * them as a pipeline (contract in spmd_fill.h).
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
    double weight; /* 1 / its penalty: 1, or under latency_penalty CM02's (its route latency, 1 when 0) */
    double left;   /* bytes not yet moved */
    double rate;   /* B/s in the current solve */
    double end;
    double lag, bytes;  /* its delay and route latency; its bytes (a round's, spmd_fill_rounds) */
    double after;       /* its reduction's time alone on its receiver, after it (spmd_fill_after) */
    uint32_t first, n;  /* its links: f->copy_links[first, first + n) */
    uint32_t src, dst;  /* its devices (spmd_fill_devices; UINT32_MAX: none) */
    uint32_t round;     /* spmd_fill_rounds: the round of its current instance */
    uint8_t ready;      /* spmd_fill_rounds: its devices' ends of the round before, seen */
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
    bool latency_penalty; /* spmd_fill_new's */
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

spmd_fill *spmd_fill_new(uint32_t keys, bool latency_penalty)
{
    spmd_fill *f = g_new0(spmd_fill, 1);
    f->keys = keys;
    f->latency_penalty = latency_penalty;
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
    double penalty = f->latency_penalty && latency_s > 0 ? latency_s : 1.0;
    fill_copy c = {.start = delay_s + latency_s, .weight = 1.0 / penalty,
                   .left = bytes, .lag = delay_s + latency_s, .bytes = bytes, .first = f->copy_links->len, .n = 0,
                   .src = UINT32_MAX, .dst = UINT32_MAX, .state = PENDING};
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

void spmd_fill_after(spmd_fill *f, double after_s)
{
    g_assert(f->copies->len > 0 && after_s >= 0);
    g_array_index(f->copies, fill_copy, f->copies->len - 1).after = after_s;
}

void spmd_fill_devices(spmd_fill *f, uint32_t src, uint32_t dst)
{
    g_assert(f->copies->len > 0 && src != dst);
    fill_copy *c = &g_array_index(f->copies, fill_copy, f->copies->len - 1);
    c->src = src;
    c->dst = dst;
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

static inline bool start_before(const start_entry *a, const start_entry *b)
{
    return a->start < b->start || (a->start == b->start && a->copy < b->copy);
}

STRATA_HEAP_DEFINE(starts, start_entry, start_before)

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

/* One step of progressive filling from t: the rates solved, time moved to
 * the first active copy's end or to next_start, whichever comes first;
 * every active copy that ends then is DONE with its end, taken off
 * *active and handed to ended(ctx, i, t1) when given. Returns t1. */
typedef void (*fill_ended_fn)(void *ctx, uint32_t i, double t);

static double fill_step(spmd_fill *f, double t, double next_start, fill_ended_fn ended, void *ctx, guint *active)
{
    guint n = f->copies->len;
    solve(f);
    double dt = next_start - t;
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
            (*active)--;
            if (ended)
                ended(ctx, i, t1);
        } else {
            c->left -= c->rate * dt;
        }
    }
    return t1;
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
        t = fill_step(f, t, next < n ? g_array_index(f->order, start_entry, next).start : INFINITY, NULL, NULL,
                      &active);
    }
    for (guint i = 0; i < n; i++) {
        const fill_copy *c = &g_array_index(f->copies, fill_copy, i);
        last = MAX(last, c->end + c->after);
        if (ends)
            ends[i] = c->end;
    }
    return last;
}

/* ---- rounds as a pipeline ------------------------------------------------ */

/* A device of spmd_fill_rounds: its receipts (copies into it) of its
 * current round, and its round's end, which waits for its own receipts and
 * its receivers'. */
typedef struct pipe_dev {
    uint32_t rin, got;   /* copies into it a round; those of its current round ended */
    uint32_t need, have; /* 1 + its receivers; their receipts of its current round seen */
    uint32_t receipts;   /* its rounds of receipts done */
    double rmax, emax;   /* the latest of those ends; of those receipts */
    uint32_t watch_first, watch_n; /* who waits for its receipts: itself and its senders (fill_pipe.watch) */
    uint32_t touch_first, touch_n; /* its copies, from or to it (fill_pipe.touch) */
    double end;          /* its latest round's end */
} pipe_dev;

typedef struct fill_pipe {
    spmd_fill *f;
    pipe_dev *dev;
    uint32_t *watch, *touch;
    GArray *starts;    /* start_entry, earliest first */
    double *round_end; /* per round simulated: its last copy's end */
    uint32_t m;        /* rounds simulated */
    uint64_t ended;    /* instances ended: every copy's m at the end */
} fill_pipe;

static fill_copy *pipe_copy(const fill_pipe *p, uint32_t i) { return &g_array_index(p->f->copies, fill_copy, i); }

/* Copy i's next instance starts `lag` after t, unless its rounds are done. */
static void pipe_arm(fill_pipe *p, uint32_t i, double t)
{
    fill_copy *c = pipe_copy(p, i);
    if (c->round >= p->m)
        return;
    c->left = c->bytes;
    c->state = PENDING;
    c->start = t + c->lag;
    starts_push(p->starts, (start_entry){c->start, i});
}

static void pipe_receipts(fill_pipe *p, uint32_t x, double t);

/* Device y's round ends at t (its receipts and its receivers' are in): each
 * of its copies whose other device's round has ended too starts its next. */
static void pipe_round_end(fill_pipe *p, uint32_t y, double t)
{
    pipe_dev *d = &p->dev[y];
    d->end = t;
    for (uint32_t j = 0; j < d->touch_n; j++) {
        uint32_t i = p->touch[d->touch_first + j];
        fill_copy *c = pipe_copy(p, i);
        if (++c->ready == 2) {
            c->ready = 0;
            c->round++;
            pipe_arm(p, i, t);
        }
    }
    if (d->rin == 0) /* receives nothing: its next round's receipts are in at once */
        pipe_receipts(p, y, t);
}

/* Device x's receipts of a round are in, the last at t. */
static void pipe_receipts(fill_pipe *p, uint32_t x, double t)
{
    pipe_dev *dx = &p->dev[x];
    if (++dx->receipts > p->m)
        return;
    for (uint32_t j = 0; j < dx->watch_n; j++) {
        uint32_t y = p->watch[dx->watch_first + j];
        pipe_dev *d = &p->dev[y];
        d->emax = MAX(d->emax, t);
        if (++d->have == d->need) {
            double e = d->emax;
            d->have = 0;
            d->emax = 0;
            pipe_round_end(p, y, e);
        }
    }
}

/* Copy i's instance ended at t. */
static void pipe_ended(fill_pipe *p, uint32_t i, double t)
{
    fill_copy *c = pipe_copy(p, i);
    pipe_dev *d = &p->dev[c->dst];
    c->state = DONE;
    p->ended++;
    t += c->after; /* its receiver's round waits for its reduction too (its links are free) */
    p->round_end[c->round] = MAX(p->round_end[c->round], t);
    d->rmax = MAX(d->rmax, t);
    if (++d->got == d->rin) {
        double r = d->rmax;
        d->got = 0;
        d->rmax = 0;
        pipe_receipts(p, c->dst, r);
    }
}

static void pipe_copy_ended(void *p, uint32_t i, double t) { pipe_ended(p, i, t); }

static int by_pair(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return (*x > *y) - (*x < *y);
}

/* The devices' counts and lists (pipe_dev); n_dev: 1 + the largest device. */
static void pipe_index(fill_pipe *p, uint32_t n_dev)
{
    GArray *copies = p->f->copies;
    guint n = copies->len, pairs = 0;
    uint64_t *pair = g_new(uint64_t, n);
    for (guint i = 0; i < n; i++) {
        const fill_copy *c = &g_array_index(copies, fill_copy, i);
        pair[i] = (uint64_t)c->src << 32 | c->dst;
        p->dev[c->dst].rin++;
        p->dev[c->src].touch_n++;
        p->dev[c->dst].touch_n++;
    }
    qsort(pair, n, sizeof *pair, by_pair);
    for (guint i = 0; i < n; i++) /* distinct (sender, receiver) */
        if (i == 0 || pair[i] != pair[i - 1])
            pair[pairs++] = pair[i];
    for (uint32_t d = 0; d < n_dev; d++)
        p->dev[d].need = p->dev[d].watch_n = 1;
    for (guint i = 0; i < pairs; i++) {
        p->dev[pair[i] >> 32].need++;
        p->dev[(uint32_t)pair[i]].watch_n++;
    }
    uint32_t w = 0, t = 0;
    for (uint32_t d = 0; d < n_dev; d++) {
        pipe_dev *x = &p->dev[d];
        x->watch_first = w;
        w += x->watch_n;
        p->watch[x->watch_first] = d;
        x->watch_n = 1;
        x->touch_first = t;
        t += x->touch_n;
        x->touch_n = 0;
    }
    for (guint i = 0; i < pairs; i++) {
        pipe_dev *x = &p->dev[(uint32_t)pair[i]];
        p->watch[x->watch_first + x->watch_n++] = (uint32_t)(pair[i] >> 32);
    }
    for (guint i = 0; i < n; i++) {
        const fill_copy *c = &g_array_index(copies, fill_copy, i);
        p->touch[p->dev[c->src].touch_first + p->dev[c->src].touch_n++] = i;
        p->touch[p->dev[c->dst].touch_first + p->dev[c->dst].touch_n++] = i;
    }
    g_free(pair);
}

/* Starts the instances due at t (ending at once those with nothing to
 * move); the count started. */
static guint pipe_start_due(fill_pipe *p, double t)
{
    guint started = 0;
    while (p->starts->len > 0 && g_array_index(p->starts, start_entry, 0).start <= t) {
        start_entry e = starts_pop(p->starts);
        fill_copy *c = pipe_copy(p, e.copy);
        if (c->left > 0 && c->n > 0) {
            c->state = ACTIVE;
            started++;
        } else {
            pipe_ended(p, e.copy, e.start);
        }
    }
    return started;
}

/* Runs the pipeline until every instance has ended. */
static void pipe_run(fill_pipe *p)
{
    guint active = 0;
    double t = 0;
    for (;;) {
        active += pipe_start_due(p, t);
        if (active == 0) {
            if (p->starts->len == 0)
                break;
            t = g_array_index(p->starts, start_entry, 0).start;
            continue;
        }
        t = fill_step(p->f, t, p->starts->len > 0 ? g_array_index(p->starts, start_entry, 0).start : INFINITY,
                      pipe_copy_ended, p, &active);
    }
}

double spmd_fill_rounds(spmd_fill *f, uint32_t k, uint32_t most, double *dev_end)
{
    guint n = f->copies->len;
    if (n == 0 || k == 0)
        return 0;
    uint32_t n_dev = 0, m = MIN(k, MAX(most, 2u));
    for (guint i = 0; i < n; i++) {
        const fill_copy *c = &g_array_index(f->copies, fill_copy, i);
        g_assert(c->src != UINT32_MAX && c->dst != UINT32_MAX); /* spmd_fill_devices */
        n_dev = MAX(n_dev, MAX(c->src, c->dst) + 1);
    }
    fill_pipe p = {.f = f, .dev = g_new0(pipe_dev, n_dev), .m = m, .round_end = g_new0(double, m),
              .starts = g_array_new(FALSE, FALSE, sizeof(start_entry))};
    index_copies(f);
    p.watch = g_new(uint32_t, n_dev + n);
    p.touch = g_new(uint32_t, 2 * (size_t)n);
    pipe_index(&p, n_dev);
    for (guint i = 0; i < n; i++) {
        fill_copy *c = &g_array_index(f->copies, fill_copy, i);
        c->round = 0;
        c->ready = 0;
        pipe_arm(&p, i, 0);
    }
    for (uint32_t d = 0; d < n_dev; d++)
        if (p.dev[d].rin == 0 && p.dev[d].touch_n > 0)
            pipe_receipts(&p, d, 0);
    pipe_run(&p);
    g_assert(p.ended == (uint64_t)n * m); /* every round of every copy ran: the waits cannot hold one back */
    double last = p.round_end[m - 1];
    if (m < k) { /* the rounds after: at the pace of the second half of those simulated */
        uint32_t h = m / 2;
        last += (double)(k - m) * (p.round_end[m - 1] - p.round_end[h - 1]) / (double)(m - h);
    }
    double latest = 0;
    for (uint32_t d = 0; d < n_dev; d++)
        latest = MAX(latest, p.dev[d].end);
    for (uint32_t d = 0; d < n_dev && dev_end; d++) /* each as far behind the last as in round m */
        dev_end[d] = p.dev[d].touch_n > 0 ? last - (latest - p.dev[d].end) : 0;
    g_free(p.dev);
    g_free(p.watch);
    g_free(p.touch);
    g_free(p.round_end);
    g_array_free(p.starts, TRUE);
    return last;
}
