/*
 * replay.c: the untimed replay of an op stream through one allocator (see
 * replay.h for the contract).
 *
 * Design: one pass over the source through the binder (bind/bind.h: the
 * checker, memories by name as dense indices), dispatching the memory's
 * allocs, frees and releases to its placement (placement/placement.h: the
 * allocator, its ledger, the trace's allocator options, the invariant
 * check); a first pass notes the lifetimes when the allocator plans ahead.
 * The placement is opened at the first op, once the trace's `option` lines
 * (which precede every op) are known.
 *
 * The memory's ledger (ledger/ledger.h) is told of every op of the program
 * and of every allocator call.
 *
 * Invariants: buffer ids are the checker's (0, 1, 2... in alloc order); the
 * ledger holds exactly the ids placed by this allocator, so a free reaches
 * the allocator iff its alloc did.
 */
#include "replay/replay.h"
#include <assert.h>
#include <string.h>
#include "core/error.h"
#include "ledger/ledger.h"
#include "bind/bind.h"
#include "placement/placement.h"

typedef struct replay_state {
    const strata_replay_options *opt;
    const char *memory;       /* the memory replayed */
    uint32_t memory_index;    /* its index in the binder */
    strata_placement *place;  /* its allocator, ledger, options, lifetimes */
    strata_replay_summary sum;
    bool alloc_seen;          /* an alloc in the replayed memory was seen */
} replay_state;

/* First pass for planners: check the trace and note the lifetimes. */
static bool replay_lifetimes(strata_binder *binder, replay_state *st, GError **err)
{
    const strata_bound_op *op = NULL;
    int got;
    while ((got = strata_binder_next(binder, &op, err)) == 1) {
        if (op->kind == STRATA_OP_ALLOC && op->memory == st->memory_index)
            strata_placement_note_alloc(st->place, op->buf, op->bytes, op->index, op->op->has_at, op->op->at_s);
        else if (op->kind == STRATA_OP_FREE && op->memory == st->memory_index)
            strata_placement_note_free(st->place, op->buf, op->index, op->op->has_at, op->op->at_s);
    }
    return got == 0 && strata_binder_rewind(binder, err);
}

/* Opens the placement with the trace's options and plans it, showing
 * progress where asked. */
static bool replay_open(replay_state *st, const strata_checker *c, GError **err)
{
    if (!strata_placement_open(st->place, c, err))
        return false;
    strata_progress *progress = strata_progress_new(st->opt->progress);
    bool ok = strata_placement_plan(st->place, progress, err);
    strata_progress_free(progress);
    if (ok && st->opt->opened)
        st->opt->opened(st->opt->user, strata_placement_allocator(st->place));
    return ok;
}

/* A placement call's invariant check failed (err): located at op. */
static bool replay_broken(const strata_bound_op *op, const char *origin, GError **err)
{
    g_prefix_error(err, "%s:%" G_GUINT64_FORMAT ": ", origin, op->line);
    return false;
}

/* Dispatches one op of the replayed memory to the placement and the ledger. */
static bool replay_op(replay_state *st, const strata_bound_op *op, strata_results *r, const char *origin,
                      GError **err)
{
    uint64_t offset, capacity = st->opt->capacity;
    strata_alloc_stats s;
    strata_ledger *ledger = strata_placement_ledger(st->place);
    strata_place_result placed;
    bool ok = true;
    switch (op->kind) {
    case STRATA_OP_ALLOC:
        if (op->memory != st->memory_index)
            return true;
        assert(!strata_ledger_holds(ledger, op->buf)); /* invariant: ids are placed once */
        placed = strata_placement_alloc(st->place, op->buf, op->bytes, op->stream, &offset, err);
        if (placed == STRATA_PLACE_OOM) {
            strata_placement_stats(st->place, &s);
            uint64_t unreserved = capacity > s.reserved ? capacity - s.reserved : 0;
            strata_results_set_oom(r, op->index, op->line, st->memory, op->op->name, op->op->stream, op->bytes,
                                   capacity - s.allocated, s.largest_free > unreserved ? s.largest_free : unreserved);
            st->sum.oom = true;
            st->sum.ops = op->index;
            return true;
        }
        strata_ledger_bound_op(ledger, st->memory_index, op); /* only a placed buffer */
        assert(strata_ledger_holds(ledger, op->buf)); /* invariant: the ledger holds what was placed */
        ok = placed == STRATA_PLACED;
        break;
    case STRATA_OP_FREE:
        /* The ledger holds exactly the ids placed here: its free tells. */
        if (!strata_ledger_free_buffer(ledger, op->buf))
            return true;
        ok = strata_placement_free_block(st->place, op->buf, err);
        break;
    case STRATA_OP_COPY:
    case STRATA_OP_COMPUTE:
        strata_ledger_bound_op(ledger, st->memory_index, op);
        return true;
    case STRATA_OP_RELEASE:
        if (op->memory != STRATA_BIND_NONE && op->memory != st->memory_index)
            return true;
        ok = strata_placement_release(st->place, err);
        break;
    case STRATA_OP_RECORD:
    case STRATA_OP_WAIT:
        strata_placement_event(st->place, op->kind == STRATA_OP_RECORD, op->stream, op->event, op->event_seq);
        return true;
    default:
        return true;
    }
    if (!ok)
        return replay_broken(op, origin, err);
    if (st->opt->after_op)
        st->opt->after_op(st->opt->user, op->index, strata_placement_allocator(st->place));
    return true;
}

/* Fills the results and the summary of a replay that ran to its end or to
 * an out-of-memory (n_ops ops). */
static void replay_finish(replay_state *st, strata_results *r, uint64_t n_ops)
{
    if (!st->sum.oom)
        st->sum.ops = n_ops;
    strata_alloc_stats s;
    strata_placement_stats(st->place, &s);
    st->sum.planned_height = s.planned_height;
    st->sum.plan_lower_bound = s.plan_lower_bound;
    r->ops = st->sum.ops;
    strata_memory_result *m = strata_results_add_memory(r, st->memory);
    m->kind = g_strdup("device");
    strata_placement_fill(st->place, m);
    st->sum.peak_allocated = m->peak_allocated_bytes;
    st->sum.peak_reserved = m->peak_reserved_bytes;
    st->sum.fragmentation_peak = m->fragmentation_peak;
    st->sum.internal_waste_at_peak = m->internal_waste_bytes;
    st->sum.argument_bytes = m->argument_bytes;
    st->sum.output_bytes = m->output_bytes;
    st->sum.alias_bytes = m->alias_bytes;
    st->sum.temp_peak_bytes = m->temp_peak_bytes;
    st->sum.jax_total_bytes = m->jax_total_bytes;
    st->sum.padding_bytes = m->padding_bytes;
    strata_replay_add_top_level(r, &st->sum, strata_placement_spec(st->place), st->opt->capacity);
}

/* The second pass: every op through the checker, the replayed memory's to
 * the placement (opened at the first op, once the options are known). */
static bool replay_pass(strata_binder *binder, replay_state *st, strata_results *r, GError **err)
{
    const char *origin = strata_binder_origin(binder);
    const strata_checker *c = strata_binder_checker(binder);
    const strata_bound_op *op = NULL;
    int got;
    while ((got = strata_binder_next(binder, &op, err)) == 1) {
        if (op->kind == STRATA_OP_ALLOC && op->memory == st->memory_index)
            st->alloc_seen = true;
        if (!strata_placement_is_open(st->place) && !replay_open(st, c, err))
            return false;
        if (st->sum.oom)
            continue; /* only checking the rest */
        if (!replay_op(st, op, r, origin, err))
            return false;
    }
    if (got != 0)
        return false;
    if (st->opt->memory && !st->alloc_seen) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "--memory %s: %s allocates nothing in memory '%s' (expected a memory its allocs name)",
                    st->opt->memory, origin, st->opt->memory);
        return false;
    }
    /* An empty trace still names its allocator. */
    if (!strata_placement_is_open(st->place) && !strata_placement_open(st->place, c, err))
        return false;
    strata_ledger_read_options(strata_placement_ledger(st->place), c, st->memory,
                               strcmp(st->memory, STRATA_REPLAY_DEFAULT_MEMORY) == 0);
    return true;
}

bool strata_replay_run(strata_source *src, const strata_replay_options *opt,
                       strata_results **out, strata_replay_summary *summary, GError **err)
{
    *out = NULL;
    replay_state st = {.opt = opt,
                       .memory = opt->memory ? opt->memory : STRATA_REPLAY_DEFAULT_MEMORY};
    strata_placement_config cfg = {
        .memory = st.memory,
        .spec = opt->allocator,
        .capacity = opt->capacity,
        .alignment = opt->alignment,
        .check = opt->check_each_op,
        .ignore_device_limit = opt->ignore_device_limit,
    };
    st.place = strata_placement_new(&cfg);
    strata_bind_options bopt = {.default_memory = STRATA_REPLAY_DEFAULT_MEMORY};
    strata_binder *binder = strata_binder_new(src, &bopt);
    st.memory_index = (uint32_t)strata_binder_memory(binder, st.memory);
    strata_results *r = NULL;
    bool ok = strata_binder_rewind(binder, err) &&
              (!strata_placement_needs_plan(st.place) || replay_lifetimes(binder, &st, err));
    if (ok) {
        r = strata_results_new("replay");
        r->trace = g_strdup(strata_source_origin(src));
        ok = replay_pass(binder, &st, r, err);
    }
    uint64_t n_ops = strata_binder_op_count(binder);
    strata_binder_free(binder);
    if (ok) {
        replay_finish(&st, r, n_ops);
        if (summary)
            *summary = st.sum;
        *out = r;
    } else {
        strata_results_free(r);
    }
    strata_placement_free(st.place);
    return ok;
}

void strata_replay_add_top_level(strata_results *r, const strata_replay_summary *s,
                                 const char *allocator_spec, uint64_t capacity)
{
    strata_results_set_extra(r, "allocator", json_node_init_string(json_node_alloc(), allocator_spec));
    strata_results_set_extra(r, "capacity_bytes", json_node_init_int(json_node_alloc(), (gint64)capacity));
    strata_results_set_extra(r, "peak_allocated_bytes",
                             json_node_init_int(json_node_alloc(), (gint64)s->peak_allocated));
    strata_results_set_extra(r, "peak_reserved_bytes",
                             json_node_init_int(json_node_alloc(), (gint64)s->peak_reserved));
    strata_results_set_extra(r, "fragmentation_peak",
                             json_node_init_double(json_node_alloc(), s->fragmentation_peak));
    strata_results_set_extra(r, "internal_waste_bytes",
                             json_node_init_int(json_node_alloc(), (gint64)s->internal_waste_at_peak));
    if (s->planned_height > 0 || s->plan_lower_bound > 0) {
        strata_results_set_extra(r, "planned_height_bytes",
                                 json_node_init_int(json_node_alloc(), (gint64)s->planned_height));
        strata_results_set_extra(r, "lower_bound_bytes",
                                 json_node_init_int(json_node_alloc(), (gint64)s->plan_lower_bound));
        double ratio = s->plan_lower_bound ? (double)s->planned_height / (double)s->plan_lower_bound : 1.0;
        strata_results_set_extra(r, "height_over_lower_bound",
                                 json_node_init_double(json_node_alloc(), ratio));
    }
}

static bool replay_fits(strata_source *src, const strata_replay_options *opt, uint64_t capacity,
                        bool *fits, GError **err)
{
    strata_replay_options o = *opt;
    o.capacity = capacity;
    strata_results *r = NULL;
    strata_replay_summary s;
    if (!strata_replay_run(src, &o, &r, &s, err))
        return false;
    *fits = !s.oom;
    strata_results_free(r);
    return true;
}

bool strata_replay_min_capacity(strata_source *src, const strata_replay_options *opt,
                                uint64_t step, uint64_t *capacity, GError **err)
{
    if (step == 0 || (step & (step - 1)) != 0)
        step = 1;
    /* Upper end: double from one step until the replay completes. */
    uint64_t hi = step;
    bool fits = false;
    for (;;) {
        if (!replay_fits(src, opt, hi, &fits, err))
            return false;
        if (fits)
            break;
        if (hi > (UINT64_C(1) << 62)) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s: no capacity up to 2^62 bytes completes the trace",
                        strata_source_origin(src));
            return false;
        }
        hi *= 2;
    }
    /* Bisection over multiples of step in (hi/2, hi]. */
    uint64_t lo = hi / 2 / step; /* in steps; lo does not fit (or is 0) */
    uint64_t hi_steps = hi / step;
    while (hi_steps - lo > 1) {
        uint64_t mid = lo + (hi_steps - lo) / 2;
        if (!replay_fits(src, opt, mid * step, &fits, err))
            return false;
        if (fits)
            hi_steps = mid;
        else
            lo = mid;
    }
    *capacity = hi_steps * step;
    return true;
}
