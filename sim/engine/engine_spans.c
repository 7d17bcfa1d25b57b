/*
 * engine_spans.c: the spans and memory samples the engine gives the
 * results (engine_spans.h), and the results' routes those spans name.
 */
#include "engine/engine_spans.h"
#include "engine/engine_phase.h"

/* The binder's routes not yet in the results, each as the links its hops
 * cross (the results' route ids are the binder's). */
static void list_routes(engine_spans *sp)
{
    const strata_binder *b = engine_feed_binder(sp->feed);
    GArray *links = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint32_t r = strata_results_route_count(sp->results); r < strata_binder_route_count(b); r++) {
        const strata_hop *hops = NULL;
        uint32_t n = 0;
        strata_binder_route_hops(b, r, &hops, &n);
        g_array_set_size(links, n);
        for (uint32_t i = 0; i < n; i++)
            g_array_index(links, uint32_t, i) = hops[i].link;
        strata_results_add_route(sp->results, (const uint32_t *)(void *)links->data, n);
    }
    g_array_free(links, TRUE);
}

/* The results' route of a copy: the binder's route id, or with classes,
 * for a sender's copy, the id after the binder's (every route is bound in
 * the first pass) that its sender takes, listed in sender order. */
static uint32_t span_route(engine_spans *sp, const strata_bound_op *op, uint32_t sender)
{
    if (op->route != STRATA_BIND_NONE && op->route >= strata_results_route_count(sp->results))
        list_routes(sp);
    if (sender == STRATA_NO_ROUTE)
        return op->route;
    list_routes(sp);
    uint32_t first = strata_binder_route_count(engine_feed_binder(sp->feed));
    GArray *links = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint32_t s = strata_results_route_count(sp->results) - first; s <= sender; s++) {
        const strata_hop *hops = NULL;
        uint32_t n = 0;
        engine_quotient_sender_hops(sp->quotient, s, &hops, &n);
        g_array_set_size(links, n);
        for (uint32_t i = 0; i < n; i++)
            g_array_index(links, uint32_t, i) = hops[i].link;
        strata_results_add_route(sp->results, (const uint32_t *)(void *)links->data, n);
    }
    g_array_free(links, TRUE);
    return first + sender;
}

void engine_spans_op(engine_spans *sp, const engine_op *e, uint32_t sender, double start, double end)
{
    const strata_bound_op *op = &e->bound;
    strata_op_span s = {
        .op_index = op->index,
        .line = op->line,
        .kind = op->kind,
        .stream = op->stream,
        .start_s = start,
        .end_s = end,
        .bytes = engine_phase_bytes(&e->phase, op->bytes), /* a phase's: its rounds' */
        .memory = -1,
        .src_memory = -1,
        .dst_memory = -1,
        .label = e->label,
        .device = op->device,
        .route = STRATA_NO_ROUTE,
    };
    if (op->kind == STRATA_OP_ALLOC || op->kind == STRATA_OP_FREE)
        s.memory = (int32_t)op->memory;
    if (op->kind == STRATA_OP_COPY) {
        s.src_memory = (int32_t)op->src_memory;
        s.dst_memory = (int32_t)op->dst_memory;
        s.route = span_route(sp, op, sender);
    }
    strata_results_put_span(sp->results, &s);
}

void engine_spans_sample(const engine_spans *sp, const engine_buffer *b, int64_t delta, double t)
{
    strata_alloc_stats st;
    strata_placement_stats(sp->mems->mem[b->memory].place, &st);
    strata_mem_sample s = {
        .t_s = t,
        .memory = b->memory,
        .allocated = st.allocated,
        .reserved = st.reserved,
        .tag = b->tag,
        .delta = delta,
        .offset = b->offset,
        .buffer_id = b->id,
    };
    strata_results_add_sample(sp->results, &s);
}
