/*
 * pipeline_schedule.c: the order of one pipeline rank's forward and
 * backward passes under each schedule (contract in pipeline.h), one
 * builder per schedule in a table looked up by the plan's schedule.
 *
 *   gpipe        F(0..m-1) then B(m-1..0) (GPipe, Huang et al. 2018 §2.2;
 *                MaxText's scan pipeline is this order).
 *   1f1b         Megatron forward_backward_pipelining_without_interleaving
 *                (schedules.py:2277-2450): w = min(p-r-1, m) warmup
 *                forwards, m-w steady (F(w+j), B(j)), w cooldown backwards.
 *   interleaved  Megatron forward_backward_pipelining_with_interleaving
 *                (classic g = p rule, schedules.py of 2024-11): m v virtual
 *                microbatches, warmup min(2(p-r-1) + (v-1)p, m v); virtual
 *                id k runs chunk (k mod p v) / p on microbatch
 *                (k / p v) p + k mod p, backward the chunk v-1-that.
 *   zb-h1        Qi et al. 2024 (arXiv 2401.10241) ZB-H1: 1F1B's order with
 *                each backward split into B (input gradient, sent at once)
 *                and W (weight gradient); rank r defers its W's by r slots
 *                (so at most p microbatches are in flight on any rank, as
 *                on 1F1B's rank 0) and runs the deferred ones in the
 *                cooldown after each B, then the rest.
 *
 * Invariants: every builder gives each (chunk, microbatch) exactly one F
 * and one B (and one W under zb-h1), each B after its F and each W after
 * its B.
 */
#include "workload/pipeline.h"

typedef void (*schedule_fn)(GArray *out, uint64_t p, uint64_t m, uint64_t v, uint64_t r);

static void add(GArray *out, char kind, uint64_t chunk, uint64_t mb)
{
    wl_pipe_action a = {kind, (uint32_t)chunk, (uint32_t)mb};
    g_array_append_val(out, a);
}

static void gpipe(GArray *out, uint64_t p, uint64_t m, uint64_t v, uint64_t r)
{
    (void)p, (void)v, (void)r;
    for (uint64_t i = 0; i < m; i++)
        add(out, 'F', 0, i);
    for (uint64_t i = m; i-- > 0;)
        add(out, 'B', 0, i);
}

static void one_f_one_b(GArray *out, uint64_t p, uint64_t m, uint64_t v, uint64_t r)
{
    (void)v;
    uint64_t w = MIN(p - r - 1, m);
    for (uint64_t i = 0; i < w; i++)
        add(out, 'F', 0, i);
    for (uint64_t j = 0; j < m - w; j++) {
        add(out, 'F', 0, w + j);
        add(out, 'B', 0, j);
    }
    for (uint64_t j = m - w; j < m; j++)
        add(out, 'B', 0, j);
}

/* Virtual microbatch k's chunk (forward) and microbatch. */
static uint64_t vchunk(uint64_t k, uint64_t p, uint64_t v) { return (k % (p * v)) / p; }
static uint64_t vmb(uint64_t k, uint64_t p, uint64_t v) { return (k / (p * v)) * p + k % p; }

static void interleaved(GArray *out, uint64_t p, uint64_t m, uint64_t v, uint64_t r)
{
    uint64_t total = m * v, w = MIN(2 * (p - r - 1) + (v - 1) * p, total);
    for (uint64_t k = 0; k < w; k++)
        add(out, 'F', vchunk(k, p, v), vmb(k, p, v));
    for (uint64_t j = 0; j < total - w; j++) {
        add(out, 'F', vchunk(w + j, p, v), vmb(w + j, p, v));
        add(out, 'B', v - 1 - vchunk(j, p, v), vmb(j, p, v));
    }
    for (uint64_t j = total - w; j < total; j++)
        add(out, 'B', v - 1 - vchunk(j, p, v), vmb(j, p, v));
}

static void zb_h1(GArray *out, uint64_t p, uint64_t m, uint64_t v, uint64_t r)
{
    (void)v;
    uint64_t w = MIN(p - r - 1, m), next_w = 0;
    for (uint64_t i = 0; i < w; i++)
        add(out, 'F', 0, i);
    for (uint64_t j = 0; j < m - w; j++) {
        add(out, 'F', 0, w + j);
        add(out, 'B', 0, j);
        if (j >= r)
            add(out, 'W', 0, next_w++);
    }
    for (uint64_t j = m - w; j < m; j++) {
        add(out, 'B', 0, j);
        if (next_w < j)
            add(out, 'W', 0, next_w++);
    }
    while (next_w < m)
        add(out, 'W', 0, next_w++);
}

/* By wl_pipe_schedule. */
static const schedule_fn schedules[] = {gpipe, one_f_one_b, interleaved, zb_h1};

GArray *wl_pipe_schedule_actions(wl_pipe_schedule sched, uint64_t p, uint64_t m, uint64_t v, uint64_t r)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(wl_pipe_action));
    g_assert((size_t)sched < G_N_ELEMENTS(schedules));
    schedules[sched](out, p, m, v, r);
    return out;
}
