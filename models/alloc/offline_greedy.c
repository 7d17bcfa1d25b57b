/*
 * offline_greedy.c: the heuristic half of the offline planner (see
 * offline.h): the greedy-by-size planner of TFLite (ArenaPlanner /
 * GreedyMemoryPlanner) and XLA's heap simulator (GlobalDecreasingSizeBestFit
 * tried with several orderings, the best kept), then a local search.
 *
 *  - a placement pass takes buffers in a given order and puts each one in
 *    the best-fitting gap (smallest gap that holds it; lowest offset among
 *    equals) left between the already placed buffers whose lifetimes
 *    overlap it, or on top of them when no gap holds it; a first-fit
 *    variant takes the lowest gap;
 *  - orderings tried: size, then lifetime (TFLite); lifetime, then size;
 *    area (size x lifetime, XLA's spatial-temporal order); start time;
 *  - then a deterministic local search (fixed seed, `iterations` steps,
 *    fewer above about 1400 buffers: see OFFLINE_LOCAL_WORK): move a buffer
 *    that reaches the current height, or a random one, to an earlier
 *    position in the order, and keep the new order when the height does not
 *    grow.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc/offline.h"

/* The local search's work cap: steps x n^2 stays under this (a 7000-buffer
 * trace gets 40 steps, about 2 s, instead of 1000 in 45 s). */
#define OFFLINE_LOCAL_WORK 2e9

/* The general placement pass visits up to n^2/2 pairs of buffers; the
 * passes and local search steps together get at most this many visits
 * (about 10 s on one core), which every problem up to about 22k buffers
 * affords in full. Larger problems get the passes that fit, in the order
 * tried, and the sweep (offline_sweep.c), which is O(n log n). */
#define OFFLINE_GREEDY_WORK 4e9

static double offline_pass_work(size_t n)
{
    return (double)n * (double)(n > 0 ? n - 1 : 0) / 2;
}

/* The placed buffers, sorted by offset, as parallel arrays (a scan over
 * them is the placement's inner loop). */
typedef struct offline_placer {
    const offline_buf *bufs;
    size_t n;
    uint64_t *p_start, *p_end, *p_off, *p_top; /* placed, by offset */
    size_t n_placed;
    uint64_t *offsets;   /* per buffer */
} offline_placer;

bool offline_overlap(const offline_buf *a, const offline_buf *b)
{
    return a->start < b->end && b->start < a->end;
}

/* The offset for b among the placed buffers whose lifetimes overlap it:
 * the best-fitting gap (smallest that holds it, lowest among equals) or the
 * lowest (first fit), else the top of them. */
static uint64_t offline_fit(const offline_placer *pl, const offline_buf *b, bool best_fit)
{
    uint64_t cursor = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
    for (size_t i = 0; i < pl->n_placed; i++) {
        if (!(pl->p_start[i] < b->end && b->start < pl->p_end[i]))
            continue;
        uint64_t off = pl->p_off[i];
        if (off > cursor) {
            uint64_t gap = off - cursor;
            if (gap >= b->size && gap < best_gap) {
                best = cursor;
                best_gap = gap;
                if (!best_fit || gap == b->size)
                    return best; /* nothing lower, or nothing tighter */
            }
        }
        if (pl->p_top[i] > cursor)
            cursor = pl->p_top[i];
    }
    return best == UINT64_MAX ? cursor : best;
}

/* Place bufs in `order`; returns the height. best_fit: smallest gap, else lowest. */
static uint64_t offline_place(offline_placer *pl, const size_t *order, bool best_fit)
{
    uint64_t height = 0;
    pl->n_placed = 0;
    for (size_t k = 0; k < pl->n; k++) {
        const offline_buf *b = &pl->bufs[order[k]];
        uint64_t best = offline_fit(pl, b, best_fit);
        pl->offsets[order[k]] = best;
        if (best + b->size > height)
            height = best + b->size;
        /* insert into placed, by offset, after those at the same offset */
        size_t lo = 0, hi = pl->n_placed;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (pl->p_off[mid] > best)
                hi = mid;
            else
                lo = mid + 1;
        }
        size_t tail = (pl->n_placed - lo) * sizeof(uint64_t);
        memmove(pl->p_start + lo + 1, pl->p_start + lo, tail);
        memmove(pl->p_end + lo + 1, pl->p_end + lo, tail);
        memmove(pl->p_off + lo + 1, pl->p_off + lo, tail);
        memmove(pl->p_top + lo + 1, pl->p_top + lo, tail);
        pl->p_start[lo] = b->start;
        pl->p_end[lo] = b->end;
        pl->p_off[lo] = best;
        pl->p_top[lo] = best + b->size;
        pl->n_placed++;
    }
    return height;
}


int offline_cmp_key(const void *a, const void *b)
{
    const offline_key *x = a, *y = b;
    if (x->k1 != y->k1)
        return x->k1 > y->k1 ? -1 : 1; /* descending */
    if (x->k2 != y->k2)
        return x->k2 > y->k2 ? -1 : 1;
    if (x->k3 != y->k3)
        return x->k3 > y->k3 ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index ? 1 : 0;
}

enum { ORDER_SIZE, ORDER_LIFETIME, ORDER_AREA, ORDER_START, ORDER__COUNT };

static void offline_order(const offline_buf *bufs, size_t n, int how, size_t *order)
{
    offline_key *keys = g_new0(offline_key, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        uint64_t life = bufs[i].end - bufs[i].start;
        keys[i].index = i;
        switch (how) {
        case ORDER_SIZE: keys[i].k1 = bufs[i].size; keys[i].k2 = life; break;
        case ORDER_LIFETIME: keys[i].k1 = life; keys[i].k2 = bufs[i].size; break;
        case ORDER_AREA:
            keys[i].k1 = (uint64_t)((double)bufs[i].size * (double)life);
            keys[i].k2 = bufs[i].size;
            break;
        default: keys[i].k1 = UINT64_MAX - bufs[i].start; keys[i].k2 = bufs[i].size; break;
        }
    }
    qsort(keys, n, sizeof *keys, offline_cmp_key);
    for (size_t i = 0; i < n; i++)
        order[i] = keys[i].index;
    g_free(keys);
}

uint64_t offline_lower_bound(const offline_buf *bufs, size_t n)
{
    /* Sweep: +size at start, -size at end; ends before starts at equal times. */
    typedef struct { uint64_t t; int64_t delta; } ev;
    ev *evs = g_new(ev, 2 * n + 1);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        evs[m++] = (ev){bufs[i].start, (int64_t)bufs[i].size};
        if (bufs[i].end != UINT64_MAX)
            evs[m++] = (ev){bufs[i].end, -(int64_t)bufs[i].size};
    }
    offline_key *keys = g_new0(offline_key, m ? m : 1);
    for (size_t i = 0; i < m; i++) {
        /* descending sort: invert t; at equal t, frees (negative) first */
        keys[i].k1 = UINT64_MAX - evs[i].t;
        keys[i].k2 = evs[i].delta < 0 ? 1 : 0;
        keys[i].index = i;
    }
    qsort(keys, m, sizeof *keys, offline_cmp_key);
    uint64_t live = 0, peak = 0;
    for (size_t i = 0; i < m; i++) {
        int64_t d = evs[keys[i].index].delta;
        live = d < 0 ? live - (uint64_t)(-d) : live + (uint64_t)d;
        if (live > peak)
            peak = live;
    }
    g_free(keys);
    g_free(evs);
    return peak;
}


/* The best plan so far: its order, its offsets, its height and whether
 * it was placed best-fit. */
typedef struct offline_best {
    size_t *order;
    uint64_t *offsets;
    uint64_t height;
    bool best_fit;
} offline_best;

static void offline_keep(offline_best *best, const offline_placer *pl, const size_t *order,
                         uint64_t height)
{
    best->height = height;
    memcpy(best->order, order, pl->n * sizeof *order);
    memcpy(best->offsets, pl->offsets, pl->n * sizeof *pl->offsets);
}

/* Every ordering, placed best-fit and first-fit, while the work budget
 * lasts (*work: pairs of buffers a pass may visit, spent so far); when some
 * did not fit, the sweep's plan (the start order, best fit) as well. */
static void offline_try_orders(offline_placer *pl, size_t *order, offline_best *best, double *work,
                               uint64_t lower_bound, strata_progress *progress)
{
    double pass = offline_pass_work(pl->n);
    bool skipped = false;
    for (int how = 0; how < ORDER__COUNT; how++) {
        for (int fit = 0; fit < 2; fit++) {
            if (*work + pass > OFFLINE_GREEDY_WORK) {
                skipped = true;
                continue;
            }
            *work += pass;
            offline_show(progress, pl->n, best->height, lower_bound, "greedy orders");
            offline_order(pl->bufs, pl->n, how, order);
            uint64_t h = offline_place(pl, order, fit == 0);
            if (h < best->height) {
                best->best_fit = fit == 0;
                offline_keep(best, pl, order, h);
            }
        }
    }
    if (skipped) {
        offline_show(progress, pl->n, best->height, lower_bound, "sweep");
        uint64_t h = offline_sweep(pl->bufs, pl->n, order, pl->offsets);
        if (h < best->height) {
            best->best_fit = true;
            offline_keep(best, pl, order, h);
        }
    }
}

/* Local search over the order, deterministic. */
static void offline_local_search(offline_placer *pl, size_t *order, int64_t iterations,
                                 uint64_t lower_bound, offline_best *best, double work,
                                 strata_progress *progress)
{
    size_t n = pl->n;
    GRand *rng = g_rand_new_with_seed(0x5eed);
    memcpy(order, best->order, n * sizeof *order);
    /* A step replaces the whole order, O(n^2) at worst: large problems get
     * fewer steps (at most OFFLINE_LOCAL_WORK / n^2, at least 10). */
    int64_t steps = iterations;
    double step_cap = OFFLINE_LOCAL_WORK / ((double)n * (double)n);
    if (n > 0 && (double)steps > step_cap)
        steps = step_cap < 10 ? (iterations < 10 ? iterations : 10) : (int64_t)step_cap;
    double pass = offline_pass_work(n), affordable = (OFFLINE_GREEDY_WORK - work) / pass;
    if ((double)steps > affordable)
        steps = affordable > 0 ? (int64_t)affordable : 0;
    for (int64_t it = 0; it < steps && n > 1 && best->height > lower_bound; it++) {
        memcpy(order, best->order, n * sizeof *order);
        offline_show(progress, n, best->height, lower_bound, "local search");
        size_t from;
        if (g_rand_boolean(rng)) {
            /* a buffer that reaches the height */
            size_t tops[64], n_tops = 0;
            for (size_t i = 0; i < n && n_tops < 64; i++)
                if (best->offsets[best->order[i]] + pl->bufs[best->order[i]].size == best->height)
                    tops[n_tops++] = i;
            from = n_tops ? tops[g_rand_int_range(rng, 0, (gint32)n_tops)]
                          : (size_t)g_rand_int_range(rng, 0, (gint32)n);
        } else {
            from = (size_t)g_rand_int_range(rng, 0, (gint32)n);
        }
        if (from == 0)
            continue;
        size_t to = (size_t)g_rand_int_range(rng, 0, (gint32)from);
        size_t moved = order[from];
        memmove(order + to + 1, order + to, (from - to) * sizeof *order);
        order[to] = moved;
        uint64_t h = offline_place(pl, order, best->best_fit);
        if (h <= best->height)
            offline_keep(best, pl, order, h);
    }
    g_rand_free(rng);
}

uint64_t offline_greedy(const offline_buf *bufs, size_t n, int64_t iterations,
                        uint64_t lower_bound, uint64_t *offsets, strata_progress *progress)
{
    offline_placer pl = {.bufs = bufs, .n = n};
    pl.p_start = g_new(uint64_t, n ? n : 1);
    pl.p_end = g_new(uint64_t, n ? n : 1);
    pl.p_off = g_new(uint64_t, n ? n : 1);
    pl.p_top = g_new(uint64_t, n ? n : 1);
    pl.offsets = g_new0(uint64_t, n ? n : 1);
    size_t *order = g_new(size_t, n ? n : 1);
    offline_best best = {.order = g_new(size_t, n ? n : 1), .offsets = offsets,
                         .height = UINT64_MAX, .best_fit = true};
    memset(offsets, 0, n * sizeof *offsets);
    double work = 0;
    offline_try_orders(&pl, order, &best, &work, lower_bound, progress);
    offline_local_search(&pl, order, iterations, lower_bound, &best, work, progress);
    g_free(pl.p_start);
    g_free(pl.p_end);
    g_free(pl.p_off);
    g_free(pl.p_top);
    g_free(pl.offsets);
    g_free(order);
    g_free(best.order);
    return best.height;
}
