/*
 * replay.c: the untimed replay of an op stream through one allocator (see
 * replay.h for the contract).
 *
 * Design: one pass over the source through the binder (trace/bind.h: the
 * checker, memories by name as dense indices), dispatching the
 * memory's allocs, frees and releases to the allocator; a first pass collects lifetimes
 * when the allocator plans ahead. The allocator is created at the first op,
 * once the trace's `option` lines (which precede every op) are known.
 *
 * The memory's ledger (ledger/ledger.h) is told of every op of the program
 * and of every allocator call.
 *
 * Invariants: buffer ids are the checker's (0, 1, 2... in alloc order); the
 * ledger holds exactly the ids placed by this allocator, so a free reaches
 * the allocator iff its alloc did.
 */
#include "replay/replay.h"
#include <string.h>
#include "alloc/alloc.h"
#include "core/error.h"
#include "ledger/ledger.h"
#include "bind/bind.h"

typedef struct replay_state {
    const strata_replay_options *opt;
    const char *memory;       /* the memory replayed */
    uint32_t memory_index;    /* its index in the binder */
    strata_allocator *alloc;
    strata_ledger *ledger;
    strata_replay_summary sum;
    bool alloc_seen;          /* an alloc in the replayed memory was seen */
} replay_state;

/* "k=v,..." of the trace's allocator.K options that the allocator declares. */
static char *replay_option_kv(const strata_checker *c, const char *spec, bool ignore_device_limit)
{
    char *name = NULL, *kv = NULL;
    strata_split_spec(spec, &name, &kv);
    const strata_alloc_type *type = strata_alloc_type_find(name);
    g_free(name);
    g_free(kv);
    const GPtrArray *keys = strata_checker_option_keys(c);
    if (!type || !keys)
        return NULL;
    static const char prefix[] = "allocator.";
    GString *out = g_string_new(NULL);
    for (guint k = 0; k < keys->len; k++) {
        const char *key = g_ptr_array_index(keys, k);
        if (!g_str_has_prefix(key, prefix) ||
            (ignore_device_limit && strcmp(key, "allocator.device_limit") == 0))
            continue;
        for (const strata_param_def *d = type->params; d && d->name; d++) {
            if (strcmp(d->name, key + strlen(prefix)) == 0) {
                g_string_append_printf(out, "%s%s=%s", out->len ? "," : "", d->name,
                                       strata_checker_option(c, key));
                break;
            }
        }
    }
    if (out->len == 0) {
        g_string_free(out, TRUE);
        return NULL;
    }
    return g_string_free(out, FALSE);
}

static bool replay_needs_plan(const char *spec)
{
    char *name = NULL, *kv = NULL;
    strata_split_spec(spec, &name, &kv);
    const strata_alloc_type *type = strata_alloc_type_find(name);
    g_free(name);
    g_free(kv);
    return type && type->plan;
}

/* First pass for planners: check the trace and collect lifetimes. */
static bool replay_lifetimes(strata_binder *binder, replay_state *st, GArray *lifetimes, GError **err)
{
    GArray *index_of = g_array_new(FALSE, FALSE, sizeof(gint64)); /* by id: lifetime index or -1 */
    const strata_bound_op *op = NULL;
    int got;
    while ((got = strata_binder_next(binder, &op, err)) == 1) {
        if (op->kind == STRATA_OP_ALLOC) {
            gint64 at = -1;
            if (op->memory == st->memory_index) {
                strata_lifetime l =
                    strata_lifetime_open(op->buf, op->bytes, op->index, op->op->has_at, op->op->at_s);
                at = lifetimes->len;
                g_array_append_val(lifetimes, l);
            }
            if (op->buf >= index_of->len)
                g_array_set_size(index_of, (guint)op->buf + 1);
            g_array_index(index_of, gint64, op->buf) = at;
        } else if (op->kind == STRATA_OP_FREE) {
            gint64 at = op->buf < index_of->len ? g_array_index(index_of, gint64, op->buf) : -1;
            if (at >= 0)
                strata_lifetime_close(&g_array_index(lifetimes, strata_lifetime, at), op->index,
                                      op->op->has_at, op->op->at_s);
        }
    }
    g_array_free(index_of, TRUE);
    return got == 0 && strata_binder_rewind(binder, err);
}

static bool replay_create_allocator(replay_state *st, const strata_checker *c, GError **err)
{
    char *base = replay_option_kv(c, st->opt->allocator, st->opt->ignore_device_limit);
    st->alloc = strata_allocator_new_with_base(st->opt->allocator, base, st->opt->capacity,
                                               st->opt->alignment, err);
    if (!st->alloc && base)
        g_prefix_error(err, "(with trace options %s) ", base);
    g_free(base);
    return st->alloc != NULL;
}

/* Plans the allocator with every lifetime, showing progress where asked. */
static bool replay_plan(replay_state *st, GArray *lifetimes, GError **err)
{
    strata_progress *progress = strata_progress_new(st->opt->progress);
    strata_allocator_set_progress(st->alloc, progress);
    bool ok = strata_allocator_plan(st->alloc, (const strata_lifetime *)(void *)lifetimes->data,
                                    lifetimes->len, err);
    strata_allocator_set_progress(st->alloc, NULL);
    strata_progress_free(progress);
    return ok;
}

/* Tells the ledger of op (unless already told: NULL) and of the allocator
 * call just made for it. */
static void replay_account(replay_state *st, const strata_bound_op *op)
{
    if (op)
        strata_ledger_bound_op(st->ledger, st->memory_index, op);
    strata_alloc_stats s;
    strata_allocator_stats(st->alloc, &s);
    strata_ledger_observe(st->ledger, &s);
}

static bool replay_check(replay_state *st, const strata_bound_op *op, const char *origin, GError **err)
{
    if (!st->opt->check_each_op)
        return true;
    GError *local = NULL;
    if (strata_allocator_check(st->alloc, &local))
        return true;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "%s:%" G_GUINT64_FORMAT
                ": allocator invariant broken after this op: %s", origin, op->line, local->message);
    g_error_free(local);
    return false;
}

/* Dispatches one op of the replayed memory to the allocator and the ledger. */
static bool replay_op(replay_state *st, const strata_bound_op *op, strata_results *r, const char *origin,
                      GError **err)
{
    uint64_t offset, capacity = st->opt->capacity;
    strata_alloc_stats s;
    switch (op->kind) {
    case STRATA_OP_ALLOC:
        if (op->memory != st->memory_index)
            return true;
        if (!strata_allocator_alloc(st->alloc, op->buf, op->bytes, op->stream, &offset)) {
            strata_allocator_stats(st->alloc, &s);
            uint64_t unreserved = capacity > s.reserved ? capacity - s.reserved : 0;
            strata_results_set_oom(r, op->index, op->line, st->memory, op->op->name, op->op->stream, op->bytes,
                                   capacity - s.allocated, s.largest_free > unreserved ? s.largest_free : unreserved);
            st->sum.oom = true;
            st->sum.ops = op->index;
            return true;
        }
        break;
    case STRATA_OP_FREE:
        /* The ledger holds exactly the ids placed here: its free tells. */
        if (!strata_ledger_free_buffer(st->ledger, op->buf))
            return true;
        strata_allocator_free_block(st->alloc, op->buf);
        replay_account(st, NULL);
        return replay_check(st, op, origin, err);
    case STRATA_OP_COPY:
    case STRATA_OP_COMPUTE:
        strata_ledger_bound_op(st->ledger, st->memory_index, op);
        return true;
    case STRATA_OP_RELEASE:
        if (op->memory != STRATA_BIND_NONE && op->memory != st->memory_index)
            return true;
        strata_allocator_release(st->alloc);
        break;
    case STRATA_OP_RECORD:
    case STRATA_OP_WAIT:
        strata_allocator_event(st->alloc, op->kind == STRATA_OP_RECORD, op->stream, op->event, op->event_seq);
        return true;
    default:
        return true;
    }
    replay_account(st, op);
    return replay_check(st, op, origin, err);
}

/* Fills the results and the summary of a replay that ran to its end or to
 * an out-of-memory (n_ops ops), and frees its allocator and ledger. */
static void replay_finish(replay_state *st, strata_results *r, uint64_t n_ops)
{
    if (!st->sum.oom)
        st->sum.ops = n_ops;
    strata_alloc_stats s;
    strata_allocator_stats(st->alloc, &s);
    st->sum.planned_height = s.planned_height;
    st->sum.plan_lower_bound = s.plan_lower_bound;
    r->ops = st->sum.ops;
    strata_memory_result *m = strata_results_add_memory(r, st->memory);
    m->kind = g_strdup("device");
    m->allocator = g_strdup(strata_allocator_spec(st->alloc));
    m->capacity_bytes = st->opt->capacity;
    strata_ledger_fill(st->ledger, m);
    strata_ledger_free(st->ledger);
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
    strata_replay_add_top_level(r, &st->sum, strata_allocator_spec(st->alloc), st->opt->capacity);
    strata_allocator_free(st->alloc);
}

bool strata_replay_run(strata_source *src, const strata_replay_options *opt,
                       strata_results **out, strata_replay_summary *summary, GError **err)
{
    *out = NULL;
    replay_state st = {.opt = opt,
                       .memory = opt->memory ? opt->memory : STRATA_REPLAY_DEFAULT_MEMORY};
    const char *origin = strata_source_origin(src);
    strata_bind_options bopt = {.default_memory = STRATA_REPLAY_DEFAULT_MEMORY};
    strata_binder *binder = strata_binder_new(src, &bopt);
    st.memory_index = (uint32_t)strata_binder_memory(binder, st.memory);
    if (!strata_binder_rewind(binder, err)) {
        strata_binder_free(binder);
        return false;
    }
    GArray *lifetimes = NULL;
    if (replay_needs_plan(opt->allocator)) {
        lifetimes = g_array_new(FALSE, FALSE, sizeof(strata_lifetime));
        if (!replay_lifetimes(binder, &st, lifetimes, err)) {
            g_array_free(lifetimes, TRUE);
            strata_binder_free(binder);
            return false;
        }
    }
    st.ledger = strata_ledger_new();
    strata_results *r = strata_results_new("replay");
    r->trace = g_strdup(origin);
    const strata_checker *c = strata_binder_checker(binder);
    bool ok = true;
    const strata_bound_op *op = NULL;
    int got;
    while ((got = strata_binder_next(binder, &op, err)) == 1) {
        if (op->kind == STRATA_OP_ALLOC && op->memory == st.memory_index)
            st.alloc_seen = true;
        if (!st.alloc) {
            if (!replay_create_allocator(&st, c, err)) {
                ok = false;
                break;
            }
            if (lifetimes && !replay_plan(&st, lifetimes, err)) {
                ok = false;
                break;
            }
        }
        if (st.sum.oom)
            continue; /* only checking the rest */
        ok = replay_op(&st, op, r, origin, err);
        if (!ok)
            break;
    }
    ok = ok && got == 0;
    if (ok && opt->memory && !st.alloc_seen) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "--memory %s: %s allocates nothing in memory '%s' (expected a memory its allocs name)",
                    opt->memory, origin, opt->memory);
        ok = false;
    }
    if (ok && !st.alloc)
        ok = replay_create_allocator(&st, c, err); /* an empty trace still names its allocator */
    if (ok)
        strata_ledger_read_options(st.ledger, c, st.memory, strcmp(st.memory, STRATA_REPLAY_DEFAULT_MEMORY) == 0);
    uint64_t n_ops = strata_binder_op_count(binder);
    strata_binder_free(binder);
    if (lifetimes)
        g_array_free(lifetimes, TRUE);
    if (!ok) {
        strata_ledger_free(st.ledger);
        strata_allocator_free(st.alloc);
        strata_results_free(r);
        return false;
    }
    replay_finish(&st, r, n_ops);
    if (summary)
        *summary = st.sum;
    *out = r;
    return true;
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
