/*
 * placement.c: one memory's allocator, its ledger, the trace's allocator
 * options, the planners' lifetimes and the invariant check (placement.h).
 *
 * Design: the allocator is made late (strata_placement_open), once the
 * trace's `option` lines, which precede every op, are known; the lifetimes
 * are a growing array with an id map (core/idmap.h) from a live buffer to
 * its entry (index + 1, so that no value is NULL), kept only when the
 * configured type plans ahead. Every allocator call goes through one
 * helper, after_call(), that feeds the ledger and runs the check.
 *
 * Invariants: those of placement.h; `lifetimes` is NULL unless the type
 * plans, and `open_at` maps exactly the noted buffers not yet freed.
 */
#include "placement/placement.h"

#include <assert.h>
#include <string.h>
#include "core/error.h"
#include "core/idmap.h"

struct strata_placement {
    char *memory;
    char *spec;               /* as configured (never NULL) */
    uint64_t capacity, alignment;
    bool check, ignore_device_limit;
    strata_allocator *alloc;  /* NULL until open */
    strata_ledger *ledger;
    GArray *lifetimes;        /* strata_lifetime; NULL unless the type plans */
    strata_idmap *open_at;    /* id -> index + 1 into lifetimes, while live */
    /* The allocator's stats as after_call() took them, while no call since
     * (an event, an open, a plan) can have changed them: the engine asks
     * for them right after each alloc and free with a timeline, and some
     * allocators' stats walk their free blocks. */
    strata_alloc_stats last;
    bool last_fresh;
};

/* The allocator type the spec names, or NULL. */
static const strata_alloc_type *spec_type(const char *spec)
{
    char *name = NULL, *kv = NULL;
    strata_split_spec(spec, &name, &kv);
    const strata_alloc_type *type = strata_alloc_type_find(name);
    g_free(name);
    g_free(kv);
    return type;
}

strata_placement *strata_placement_new(const strata_placement_config *cfg)
{
    strata_placement *p = g_new0(strata_placement, 1);
    p->memory = g_strdup(cfg->memory ? cfg->memory : "");
    p->spec = g_strdup(cfg->spec ? cfg->spec : STRATA_ALLOC_DEFAULT);
    p->capacity = cfg->capacity;
    p->alignment = cfg->alignment;
    p->check = cfg->check;
    p->ignore_device_limit = cfg->ignore_device_limit;
    p->ledger = strata_ledger_new();
    const strata_alloc_type *type = spec_type(p->spec);
    if (type && type->plan) {
        p->lifetimes = g_array_new(FALSE, FALSE, sizeof(strata_lifetime));
        p->open_at = strata_idmap_new();
    }
    return p;
}

void strata_placement_free(strata_placement *p)
{
    if (!p)
        return;
    assert((p->lifetimes == NULL) == (p->open_at == NULL)); /* invariant 4 */
    strata_allocator_free(p->alloc);
    strata_ledger_free(p->ledger);
    if (p->lifetimes)
        g_array_unref(p->lifetimes);
    if (p->open_at)
        strata_idmap_free(p->open_at);
    g_free(p->memory);
    g_free(p->spec);
    g_free(p);
}

/* True when type declares parameter key. */
static bool declares(const strata_alloc_type *type, const char *key)
{
    for (const strata_param_def *d = type->params; d && d->name; d++)
        if (strcmp(d->name, key) == 0)
            return true;
    return false;
}

char *strata_placement_option_kv(const strata_checker *c, const char *spec, bool ignore_device_limit)
{
    const GPtrArray *keys = c ? strata_checker_option_keys(c) : NULL;
    const strata_alloc_type *type = keys ? spec_type(spec) : NULL;
    if (!type)
        return NULL;
    static const char prefix[] = STRATA_PLACEMENT_OPTION_PREFIX;
    GString *out = g_string_new(NULL);
    for (guint k = 0; k < keys->len; k++) {
        const char *key = g_ptr_array_index(keys, k);
        if (!g_str_has_prefix(key, prefix))
            continue;
        const char *param = key + strlen(prefix);
        if ((ignore_device_limit && strcmp(param, "device_limit") == 0) || !declares(type, param))
            continue;
        g_string_append_printf(out, "%s%s=%s", out->len ? "," : "", param, strata_checker_option(c, key));
    }
    if (out->len == 0) {
        g_string_free(out, TRUE);
        return NULL;
    }
    return g_string_free(out, FALSE);
}

bool strata_placement_open(strata_placement *p, const strata_checker *c, GError **err)
{
    char *base = strata_placement_option_kv(c, p->spec, p->ignore_device_limit);
    if (p->alloc && !base)
        return true; /* open, and no option changes it */
    GError *local = NULL;
    strata_allocator *a = strata_allocator_new_with_base(p->spec, base, p->capacity, p->alignment, &local);
    if (!a) {
        if (base)
            g_propagate_prefixed_error(err, local, "memory %s (trace options %s): ", p->memory, base);
        else
            g_propagate_prefixed_error(err, local, "memory %s: ", p->memory);
        g_free(base);
        return false;
    }
    g_free(base);
    /* Invariant 4: lifetimes were kept from the start iff this allocator plans. */
    g_assert(strata_allocator_needs_plan(a) == (p->lifetimes != NULL));
    strata_allocator_free(p->alloc);
    p->alloc = a;
    p->last_fresh = false;
    return true;
}

bool strata_placement_is_open(const strata_placement *p)
{
    return p->alloc != NULL;
}

strata_allocator *strata_placement_allocator(const strata_placement *p)
{
    return p->alloc;
}

const char *strata_placement_spec(const strata_placement *p)
{
    return strata_allocator_spec(p->alloc);
}

strata_ledger *strata_placement_ledger(const strata_placement *p)
{
    return p->ledger;
}

bool strata_placement_needs_plan(const strata_placement *p)
{
    return p->lifetimes != NULL;
}

/* ---- lifetimes ---- */

void strata_placement_note_alloc(strata_placement *p, uint64_t id, uint64_t size, uint64_t index, bool has_at,
                                 double at_s)
{
    if (!p->lifetimes)
        return;
    strata_lifetime l = strata_lifetime_open(id, size, index, has_at, at_s);
    g_array_append_val(p->lifetimes, l);
    assert(p->open_at); /* invariant 4: kept only for a planning allocator */
    strata_idmap_put(p->open_at, id, GSIZE_TO_POINTER((gsize)p->lifetimes->len));
}

void strata_placement_note_free(strata_placement *p, uint64_t id, uint64_t index, bool has_at, double at_s)
{
    if (!p->lifetimes)
        return;
    gsize at = GPOINTER_TO_SIZE(strata_idmap_take(p->open_at, id));
    assert(at <= p->lifetimes->len); /* invariant 4: open_at points into lifetimes */
    if (at > 0) {
        strata_lifetime *l = &g_array_index(p->lifetimes, strata_lifetime, at - 1);
        assert(l->id == id && l->end == UINT64_MAX); /* invariant 4: closed at most once, by its id */
        strata_lifetime_close(l, index, has_at, at_s);
    }
}

bool strata_placement_plan(strata_placement *p, strata_progress *progress, GError **err)
{
    if (!p->lifetimes || !p->alloc)
        return true;
    p->last_fresh = false;
    strata_allocator_set_progress(p->alloc, progress);
    GError *local = NULL;
    bool ok = strata_allocator_plan(p->alloc, (const strata_lifetime *)(void *)p->lifetimes->data,
                                    p->lifetimes->len, &local);
    strata_allocator_set_progress(p->alloc, NULL);
    g_array_set_size(p->lifetimes, 0);
    strata_idmap_free(p->open_at);
    p->open_at = strata_idmap_new();
    if (!ok)
        g_propagate_prefixed_error(err, local, "memory %s: ", p->memory);
    return ok;
}

/* ---- the allocator's calls ---- */

/* Feeds the ledger the allocator's stats and, when checking, checks its
 * invariants: false with err when one broke. */
static bool after_call(strata_placement *p, GError **err)
{
    strata_alloc_stats s;
    strata_allocator_stats(p->alloc, &s);
    p->last = s;
    p->last_fresh = true;
    /* alloc.h's invariant 2, which engine_memory.c states for the engine */
    assert(s.allocated <= s.reserved && s.reserved <= p->capacity);
    strata_ledger_observe(p->ledger, &s); /* invariant 2 */
    if (!p->check)
        return true;
    GError *local = NULL;
    if (strata_allocator_check(p->alloc, &local))
        return true;
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "allocator of memory %s broke an invariant: %s",
                p->memory, local->message);
    g_error_free(local);
    return false;
}

strata_place_result strata_placement_alloc(strata_placement *p, uint64_t id, uint64_t size, uint32_t stream,
                                           uint64_t *offset, GError **err)
{
    assert(strata_placement_is_open(p)); /* invariant 1: a placement that places is open */
    if (!strata_allocator_alloc(p->alloc, id, size, stream, offset))
        return STRATA_PLACE_OOM;
    return after_call(p, err) ? STRATA_PLACED : STRATA_PLACE_BROKEN;
}

bool strata_placement_free_block(strata_placement *p, uint64_t id, GError **err)
{
    strata_allocator_free_block(p->alloc, id);
    return after_call(p, err);
}

bool strata_placement_release(strata_placement *p, GError **err)
{
    strata_allocator_release(p->alloc);
    return after_call(p, err);
}

void strata_placement_event(strata_placement *p, bool is_record, uint32_t stream, uint32_t event, uint64_t seq)
{
    p->last_fresh = false;
    strata_allocator_event(p->alloc, is_record, stream, event, seq);
}

bool strata_placement_takes_events(const strata_placement *p)
{
    return strata_allocator_takes_events(p->alloc);
}

void strata_placement_stats(const strata_placement *p, strata_alloc_stats *out)
{
    if (p->last_fresh) {
        *out = p->last;
        return;
    }
    strata_allocator_stats(p->alloc, out);
}

void strata_placement_fill(const strata_placement *p, strata_memory_result *out)
{
    out->allocator = g_strdup(strata_allocator_spec(p->alloc));
    out->capacity_bytes = p->capacity;
    strata_ledger_fill(p->ledger, out);
}
