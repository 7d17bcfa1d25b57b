/*
 * torch_host.c: the pinned host allocator's part of a PyTorch memory
 * snapshot (see torch_conv.h): `host_segments` and `host_traces`, written
 * since PyTorch 2.14 when _record_memory_history(...,
 * record_pinned_host_memory=True) recorded CachingHostAllocatorImpl
 * (aten/src/ATen/core/CachingHostAllocator.h) beside the device.
 *
 * What PyTorch writes (torch/csrc/cuda/Module.cpp, THCPModule_memorySnapshot,
 * as the 2.15.0 wheel's libtorch_python.so builds it from getSegments() and
 * getTraces()): every pinned block is its own segment (one cudaHostAlloc of
 * the request rounded up to a power of two), so a host segment is
 *   {device: -1, address, total_size, allocated_size (total_size if
 *    allocated, else 0), active_size (total_size if allocated or waiting
 *    for its streams' events, else 0), requested_size (= total_size),
 *    stream: 0, segment_type: 'small', segment_pool_id: (int, int),
 *    is_expandable: False, frames, blocks: [one block {address, size,
 *    requested_size, state: active_allocated | active_pending_free |
 *    inactive, frames}]}
 * and `host_traces` is ONE flat list of trace entries with the device
 * traces' keys (action, addr, size, stream, time_us, frames, ...): alloc
 * and segment_alloc at allocate(), free_requested at free(),
 * free_completed once the block's events completed, segment_free in
 * empty_cache() or for a block above pinned_max_cached_size.
 *
 * The conversion, made whole between the passes (host histories are
 * small: the lists stay in the document, not streamed):
 *  - the state at the first host event: the final segments with the host
 *    events undone newest first (segment_alloc: absent before;
 *    segment_free: present and cached; alloc: not live; free_completed:
 *    live);
 *  - setup: every initial segment allocated in address order (`alloc pin.N
 *    SIZE host addr= note=setup`), then the cached ones freed, so
 *    strata's caching-host model (models/alloc/caching_host.c) holds the
 *    same blocks;
 *  - events: alloc -> `alloc pin.N SIZE host`, free_completed -> `free
 *    pin.N`, the first segment_free of a run -> `release host` noted
 *    empty_cache, except a segment_free right after its own block's free
 *    (a block above pinned_max_cached_size, not cached: no op, counted);
 *  - pass 2 merges these ops into the device's by time_us (one clock:
 *    both allocators stamp c10::getApproximateTime() converted to us).
 *
 * Strict on what it knows (a bad type is an error naming the key path);
 * keys it does not know are read past and counted (host_unknown_text).
 *
 * Invariants: every pin.N is allocated once and freed at most once; the
 * ground truth (initial, peak, final pinned bytes) comes from the host
 * events alone.
 */
#include <string.h>

#include "import/torch_conv.h"

typedef struct hseg {
    uint64_t addr, size;
    bool live;
} hseg;

typedef struct host_part {
    GArray *ops;  /* cop: the host events' ops, in order */
    GArray *when; /* int64_t: the time_us of each op's event */
    size_t next;  /* pass 2: ops appended so far */
} host_part;

/* What reading the two lists keeps. */
typedef struct host_read {
    GHashTable *segs;    /* addr -> hseg* (g_free): final, then initial */
    GArray *events;      /* tevent */
    GHashTable *unknown; /* "PATH.KEY" or "action NAME" -> count (g_free keys) */
    uint32_t memory;     /* string index + 1 of "host" */
} host_read;

static const char *const segment_keys[] = {
    "device", "address", "total_size", "allocated_size", "active_size", "requested_size",
    "stream", "segment_type", "segment_pool_id", "is_expandable", "frames", "blocks", NULL};
static const char *const block_keys[] = {"address", "size", "requested_size", "state", "frames",
                                         NULL};
static const char *const event_keys[] = {
    "action", "addr", "size", "stream", "time_us", "frames", "device_free", "user_metadata",
    "compile_context", "pool_id", "internal_metadata", "forward_frames", "device", NULL};
static const char *const block_states[] = {"active_allocated", "active_pending_free", "inactive",
                                           NULL};

static bool listed(const char *const *names, const char *s, size_t len)
{
    for (size_t k = 0; names[k]; k++)
        if (strlen(names[k]) == len && memcmp(names[k], s, len) == 0)
            return true;
    return false;
}

/* Counts the keys of dict `d` that `known` does not list, as "PATH.KEY". */
static void note_keys(conv *c, host_read *r, strata_pv d, const char *path,
                      const char *const *known)
{
    strata_pickle_iter it;
    strata_pv k, v;
    strata_pickle_iter_init(c->p, d, &it);
    while (strata_pickle_iter_next(c->p, &it, &k, &v)) {
        size_t len;
        const char *s = strata_pickle_get_bytes(c->p, k, &len);
        if (s == NULL || !listed(known, s, len))
            torch_count_unknown(r->unknown, g_strdup_printf("%s.%.*s", path, s ? (int)MIN(len, 64) : 1,
                                                      s ? s : "?"));
    }
}

static bool read_block(conv *c, host_read *r, const char *where, strata_pv blk)
{
    if (strata_pickle_type_of(c->p, blk) != STRATA_PICKLE_DICT)
        return torch_schema(c, "%s is not a dict", where);
    note_keys(c, r, blk, "host_segments[].blocks[]", block_keys);
    strata_pv st = strata_pickle_dict_get(c->p, blk, "state");
    if (st == STRATA_PV_NULL)
        return true;
    size_t len;
    const char *s = strata_pickle_get_bytes(c->p, st, &len);
    if (strata_pickle_type_of(c->p, st) != STRATA_PICKLE_STR || !listed(block_states, s, len))
        return torch_schema(c, "%s.state: expected 'active_allocated', 'active_pending_free' or "
                               "'inactive'", where);
    return true;
}

/* host_segments[i]: one pinned block, live when allocated or waiting for
 * its streams' events (active). */
static bool read_segment(conv *c, host_read *r, uint64_t i, strata_pv seg)
{
    char where[64];
    g_snprintf(where, sizeof where, "host_segments[%" G_GUINT64_FORMAT "]", i);
    if (strata_pickle_type_of(c->p, seg) != STRATA_PICKLE_DICT)
        return torch_schema(c, "%s is not a dict", where);
    note_keys(c, r, seg, "host_segments[]", segment_keys);
    hseg s = {0, 0, false};
    uint64_t allocated = 0, active = 0;
    if (!torch_get_u64(c, seg, "address", where, &s.addr) ||
        !torch_get_u64(c, seg, "total_size", where, &s.size) ||
        !torch_get_u64(c, seg, "allocated_size", where, &allocated) ||
        !torch_get_u64(c, seg, "active_size", where, &active))
        return false;
    if (s.size == 0)
        return torch_schema(c, "%s.total_size: expected a positive int, found 0", where);
    s.live = allocated > 0 || active > 0;
    strata_pv blocks = strata_pickle_dict_get(c->p, seg, "blocks");
    if (blocks != STRATA_PV_NULL) {
        if (strata_pickle_type_of(c->p, blocks) != STRATA_PICKLE_LIST)
            return torch_schema(c, "%s.blocks: expected a list", where);
        strata_pickle_iter it;
        strata_pv b;
        strata_pickle_iter_init(c->p, blocks, &it);
        for (uint64_t j = 0; strata_pickle_iter_next(c->p, &it, NULL, &b); j++) {
            char bwhere[96];
            g_snprintf(bwhere, sizeof bwhere, "%s.blocks[%" G_GUINT64_FORMAT "]", where, j);
            if (!read_block(c, r, bwhere, b))
                return false;
        }
    }
    if (g_hash_table_contains(r->segs, GSIZE_TO_POINTER(s.addr)))
        return torch_schema(c, "%s.address: expected an address no other host segment has, found "
                               "0x%" G_GINT64_MODIFIER "x again", where, s.addr);
    g_hash_table_insert(r->segs, GSIZE_TO_POINTER(s.addr), g_memdup2(&s, sizeof s));
    return true;
}

/* The root's list `key`, absent (true, *list NULL) or a list. */
static bool root_list(conv *c, const char *key, strata_pv *list)
{
    strata_pv root = strata_pickle_root(c->p);
    *list = STRATA_PV_NULL;
    if (strata_pickle_type_of(c->p, root) != STRATA_PICKLE_DICT)
        return true;
    strata_pv v = strata_pickle_dict_get(c->p, root, key);
    if (v == STRATA_PV_NULL)
        return true;
    if (strata_pickle_type_of(c->p, v) != STRATA_PICKLE_LIST)
        return torch_schema(c, "'%s' is not a list", key);
    *list = v;
    return true;
}

static bool read_lists(conv *c, host_read *r)
{
    strata_pv segs, traces, v;
    if (!root_list(c, "host_segments", &segs) || !root_list(c, "host_traces", &traces))
        return false;
    strata_pickle_iter it;
    if (segs != STRATA_PV_NULL) {
        strata_pickle_iter_init(c->p, segs, &it);
        for (uint64_t i = 0; strata_pickle_iter_next(c->p, &it, NULL, &v); i++)
            if (!read_segment(c, r, i, v))
                return false;
    }
    if (traces == STRATA_PV_NULL)
        return true;
    GHashTable *actions = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    strata_pickle_iter_init(c->p, traces, &it);
    bool ok = true;
    for (uint64_t i = 0; ok && strata_pickle_iter_next(c->p, &it, NULL, &v); i++) {
        tevent e;
        ok = torch_read_host_event(c, i, v, actions, &e);
        if (ok && !e.has_time)
            ok = torch_schema(c, "host_traces[%" G_GUINT64_FORMAT "].time_us: expected an int "
                                 "(every PyTorch that writes host_traces stamps its events)", i);
        if (ok) {
            note_keys(c, r, v, "host_traces[]", event_keys);
            g_array_append_val(r->events, e);
        }
    }
    GHashTableIter hi;
    gpointer k, n;
    g_hash_table_iter_init(&hi, actions);
    while (g_hash_table_iter_next(&hi, &k, &n))
        for (gsize j = 0; j < GPOINTER_TO_SIZE(n); j++)
            torch_count_unknown(r->unknown, g_strdup_printf("action %s", (char *)k));
    g_hash_table_unref(actions);
    return ok;
}

/* Undoes the host events newest first from the final segments. */
static void undo_events(conv *c, host_read *r)
{
    for (guint i = r->events->len; i-- > 0;) {
        const tevent *e = &g_array_index(r->events, tevent, i);
        gpointer key = GSIZE_TO_POINTER(e->addr);
        hseg *s = g_hash_table_lookup(r->segs, key);
        switch (e->action) {
        case EV_SEGMENT_ALLOC:
            if (s)
                g_hash_table_remove(r->segs, key);
            else
                c->sum->host_inconsistent++;
            break;
        case EV_SEGMENT_FREE:
            if (s) {
                c->sum->host_inconsistent++;
            } else {
                hseg n = {e->addr, e->size, false};
                g_hash_table_insert(r->segs, key, g_memdup2(&n, sizeof n));
            }
            break;
        case EV_ALLOC:
        case EV_FREE_COMPLETED:
            if (s && s->live == (e->action == EV_ALLOC))
                s->live = e->action != EV_ALLOC;
            else
                c->sum->host_inconsistent++;
            break;
        default:
            break;
        }
    }
}

static gint cmp_seg_addr(gconstpointer a, gconstpointer b)
{
    const hseg *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The initial segments' setup ops (to c->sink) and the ground truth. */
static void emit_host_setup(conv *c, host_read *r, GHashTable *live, uint64_t *next)
{
    strata_torch_summary *sum = c->sum;
    GArray *segs = g_array_new(FALSE, FALSE, sizeof(hseg));
    GHashTableIter hi;
    gpointer k, v;
    g_hash_table_iter_init(&hi, r->segs);
    while (g_hash_table_iter_next(&hi, &k, &v))
        g_array_append_val(segs, *(hseg *)v);
    g_array_sort(segs, cmp_seg_addr);
    uint32_t stream = torch_stream_of(c, 0), setup = c->note_setup + 1;
    guint before = c->sink->len;
    for (guint i = 0; i < segs->len; i++) {
        const hseg *s = &g_array_index(segs, hseg, i);
        torch_emit(c, STRATA_OP_ALLOC, NAME_PIN, (*next)++, s->size, stream, setup, true, s->addr,
                   no_at);
        sum->host_initial_reserved = sat_add(sum->host_initial_reserved, s->size);
        if (s->live) {
            g_hash_table_insert(live, GSIZE_TO_POINTER(s->addr), GSIZE_TO_POINTER(*next));
            sum->host_initial_live++;
        }
    }
    for (guint i = 0; i < segs->len; i++)
        if (!g_array_index(segs, hseg, i).live)
            torch_emit(c, STRATA_OP_FREE, NAME_PIN, *next - segs->len + i, 0, stream, setup, false,
                       0, no_at);
    for (guint i = before; i < c->sink->len; i++)
        g_array_index(c->sink, cop, i).memory = r->memory;
    sum->host_initial_segments = segs->len;
    sum->host_setup_ops = c->sink->len - before;
    g_array_unref(segs);
    uint64_t reserved = sum->host_initial_reserved, peak = reserved;
    for (guint i = 0; i < r->events->len; i++) {
        const tevent *e = &g_array_index(r->events, tevent, i);
        if (e->action == EV_SEGMENT_ALLOC) {
            reserved = sat_add(reserved, e->size);
            g_array_append_val(sum->host_segment_alloc_sizes, e->size);
        } else if (e->action == EV_SEGMENT_FREE) {
            reserved = reserved > e->size ? reserved - e->size : 0;
        }
        peak = MAX(peak, reserved);
    }
    sum->host_peak_reserved = peak;
    sum->host_final_reserved = reserved;
}

static void host_op(conv *c, host_part *h, const tevent *e, strata_op_kind kind, uint64_t number,
                    uint64_t size, uint32_t note, uint32_t memory)
{
    cop op = {.kind = (uint8_t)kind,
              .name_kind = (uint8_t)(kind == STRATA_OP_RELEASE ? NAME_NONE : NAME_PIN),
              .has_addr = kind == STRATA_OP_ALLOC,
              .has_at = e->time_us >= c->t0,
              .stream = torch_stream_of(c, e->stream),
              .note = note,
              .memory = memory,
              .number = number,
              .size = size,
              .addr = kind == STRATA_OP_ALLOC ? e->addr : 0,
              .at_us = e->time_us >= c->t0 ? e->time_us - c->t0 : 0};
    g_array_append_val(h->ops, op);
    g_array_append_val(h->when, e->time_us);
}

/* The host events' ops, in order, into h. */
static void make_event_ops(conv *c, host_read *r, host_part *h, GHashTable *live, uint64_t next)
{
    strata_torch_summary *sum = c->sum;
    bool in_run = false; /* the last event was a segment_free of a release */
    for (guint i = 0; i < r->events->len; i++) {
        const tevent *e = &g_array_index(r->events, tevent, i);
        const tevent *prev = i ? &g_array_index(r->events, tevent, i - 1) : NULL;
        gpointer key = GSIZE_TO_POINTER(e->addr);
        gpointer n = g_hash_table_lookup(live, key);
        bool run = false;
        switch (e->action) {
        case EV_ALLOC:
            if (n) { /* allocated twice without a free: keep the snapshot's word */
                sum->host_inconsistent++;
                host_op(c, h, e, STRATA_OP_FREE, GPOINTER_TO_SIZE(n) - 1, 0, 0, r->memory);
            }
            if (e->size == 0) {
                g_hash_table_remove(live, key);
                break;
            }
            host_op(c, h, e, STRATA_OP_ALLOC, next, e->size, e->note, r->memory);
            g_hash_table_insert(live, key, GSIZE_TO_POINTER(++next));
            sum->host_allocs++;
            break;
        case EV_FREE_COMPLETED:
            if (n == NULL) {
                sum->host_inconsistent++;
                break;
            }
            host_op(c, h, e, STRATA_OP_FREE, GPOINTER_TO_SIZE(n) - 1, 0, 0, r->memory);
            g_hash_table_remove(live, key);
            sum->host_frees++;
            break;
        case EV_SEGMENT_FREE:
            if (prev && prev->action == EV_FREE_COMPLETED && prev->addr == e->addr) {
                sum->host_uncached_frees++; /* above pinned_max_cached_size: never cached */
                break;
            }
            run = true;
            if (!in_run) {
                host_op(c, h, e, STRATA_OP_RELEASE, 0, 0, c->note_empty_cache, r->memory);
                sum->host_releases++;
            }
            break;
        default:
            break;
        }
        in_run = run;
    }
}

bool torch_host_between(conv *c)
{
    strata_torch_summary *sum = c->sum;
    sum->host_segment_alloc_sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    host_read r = {g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free),
                   g_array_new(FALSE, FALSE, sizeof(tevent)),
                   g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL), 0};
    bool ok = read_lists(c, &r);
    if (ok && (g_hash_table_size(r.segs) > 0 || r.events->len > 0)) {
        sum->has_host = true;
        sum->host_events = r.events->len;
        r.memory = torch_intern(c->out, "host") + 1;
        c->device_memory = torch_intern(c->out, "hbm") + 1;
        if (c->note_empty_cache == 0)
            c->note_empty_cache = torch_intern(c->out, "empty_cache") + 1;
        if (r.events->len > 0) { /* one time base: the earlier first event */
            int64_t first = g_array_index(r.events, tevent, 0).time_us;
            if (!c->have_t0 || first < c->t0) {
                c->have_t0 = true;
                c->t0 = first;
            }
        }
        undo_events(c, &r);
        GHashTable *live = g_hash_table_new(g_direct_hash, g_direct_equal);
        uint64_t next = 0;
        emit_host_setup(c, &r, live, &next);
        c->host = g_new0(host_part, 1);
        c->host->ops = g_array_new(FALSE, FALSE, sizeof(cop));
        c->host->when = g_array_new(FALSE, FALSE, sizeof(int64_t));
        make_event_ops(c, &r, c->host, live, next);
        g_hash_table_unref(live);
    }
    if (ok)
        sum->host_unknown_text = torch_unknown_text(r.unknown, &sum->host_unknown);
    g_hash_table_unref(r.segs);
    g_array_unref(r.events);
    g_hash_table_unref(r.unknown);
    return ok;
}

void torch_host_emit_until(conv *c, int64_t time_us)
{
    host_part *h = c->host;
    if (h == NULL)
        return;
    while (h->next < h->ops->len && g_array_index(h->when, int64_t, h->next) <= time_us) {
        g_array_append_val(c->sink, g_array_index(h->ops, cop, h->next));
        h->next++;
    }
}

void torch_host_reset(conv *c)
{
    if (c->host)
        c->host->next = 0;
}

void torch_host_free(host_part *h)
{
    if (h == NULL)
        return;
    g_array_unref(h->ops);
    g_array_unref(h->when);
    g_free(h);
}
