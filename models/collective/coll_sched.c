/*
 * coll_sched.c: a collective's step schedule (contract in coll_sched.h):
 * the group laid out as its algorithm's row says (coll_algo.h), the row's
 * schedule, then the steps sorted by round.
 *
 * Invariants: strata_coll_schedule() leaves a collective's steps in round
 * order (each algorithm appends them in its own order; a stable sort by
 * round follows), every round below the count it returns; no step has 0
 * bytes; with fold, the folded runs line up (runs_aligned), else the
 * schedule is built again without folding.
 */
#include "collective/coll_kit.h"
#include <assert.h>
#include <string.h>

uint32_t strata_coll_ranks(const strata_coll_shape *shape)
{
    uint32_t n = 1;
    for (uint32_t k = 0; k < shape->n_dims; k++)
        n *= shape->dims[k];
    return n;
}

/* Stable sort of steps[from..] by round (a counting sort: rounds < n_rounds). */
static void sort_rounds(GArray *steps, guint from, uint32_t n_rounds)
{
    guint n = steps->len - from;
    if (n == 0)
        return;
    strata_coll_step *v = &g_array_index(steps, strata_coll_step, from);
    guint *start = g_new0(guint, n_rounds + 1);
    for (guint i = 0; i < n; i++)
        start[v[i].round + 1]++;
    for (uint32_t r = 0; r < n_rounds; r++)
        start[r + 1] += start[r];
    strata_coll_step *sorted = g_new(strata_coll_step, n);
    for (guint i = 0; i < n; i++)
        sorted[start[v[i].round]++] = v[i];
    memcpy(v, sorted, n * sizeof *v);
    g_free(sorted);
    g_free(start);
}

/* The schedule of shape's algorithm over its layout of the group. */
static uint32_t schedule(const strata_coll_shape *shape, GArray *steps)
{
    const strata_coll_algo *algo = shape->algo;
    strata_coll_sched s = {.steps = steps, .n = strata_coll_ranks(shape), .kind = shape->kind, .parts = 1,
                           .fold = shape->fold && algo->folds};
    s.domain = shape->domain_ranks && s.n % shape->domain_ranks == 0 ? shape->domain_ranks : s.n;
    bool flat = algo->layout == STRATA_COLL_FLAT;
    for (uint32_t k = 0; k < shape->n_dims; k++)
        if (!flat && shape->dims[k] > 1)
            s.dims[s.m++] = shape->dims[k];
    if (flat && s.n > 1)
        s.dims[s.m++] = s.n;
    for (uint32_t k = s.m, stride = 1; k-- > 0;) {
        s.stride[k] = stride;
        stride *= s.dims[k];
    }
    if (s.n == 1) { /* a group of one: OUT = IN */
        strata_coll_step st = {.src_buf = STRATA_COLL_IN, .dst_buf = STRATA_COLL_OUT, .bytes = shape->in_bytes};
        if (shape->kind != STRATA_OP_ALL_REDUCE)
            coll_add(&s, &st);
        return shape->kind != STRATA_OP_ALL_REDUCE;
    }
    return algo->ops->schedule(&s, shape);
}

#ifndef NDEBUG
/* The invariants over one collective's steps (steps[from..]). */
static bool steps_ok(const GArray *steps, guint from, uint32_t rounds)
{
    for (guint i = from; i < steps->len; i++) {
        const strata_coll_step *st = &g_array_index(steps, strata_coll_step, i);
        if (st->bytes == 0 || st->round >= rounds ||
            (i > from && st->round < g_array_index(steps, strata_coll_step, i - 1).round))
            return false;
    }
    return true;
}
#endif

/* True when the folded runs of steps[from..] line up: the steps that start
 * at a round all stand for the same rounds k, and the next ones start k
 * rounds later (the rings of a collective fold alike). */
static bool runs_aligned(const GArray *steps, guint from, uint32_t n_rounds)
{
    const strata_coll_step *v = (const strata_coll_step *)(void *)steps->data;
    uint32_t next = 0;
    for (guint i = from; i < steps->len; i++) {
        uint32_t k = v[i].rounds ? v[i].rounds : 1;
        if (i > from && v[i].round == v[i - 1].round) {
            if (k != (v[i - 1].rounds ? v[i - 1].rounds : 1))
                return false;
            continue;
        }
        if (v[i].round != next)
            return false;
        next = v[i].round + k;
    }
    return next <= n_rounds;
}

uint32_t strata_coll_schedule(const strata_coll_shape *shape, GArray *steps)
{
    guint from = steps->len;
    uint32_t rounds = schedule(shape, steps);
    sort_rounds(steps, from, rounds);
    if (shape->fold && !runs_aligned(steps, from, rounds)) { /* fold nothing rather than misalign */
        strata_coll_shape plain = *shape;
        plain.fold = false;
        g_array_set_size(steps, from);
        rounds = schedule(&plain, steps);
        sort_rounds(steps, from, rounds);
    }
    assert(steps_ok(steps, from, rounds)); /* invariants: round order, no empty step */
    return rounds;
}
