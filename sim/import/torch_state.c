/*
 * torch_state.c: pass 1 of the conversion and the state at the first event
 * (see torch_conv.h).
 *
 * Pass 1 keeps the final segments and live blocks and, per address, the
 * first event there; undoing the events newest first from the final state,
 * as torch/cuda/_memory_viz.py does, leaves at each address what its oldest
 * event says of the state before it:
 *   segment_alloc -> the segment did not exist before; segment_free -> it did;
 *   alloc -> the block was not live before; free_completed -> it was.
 * The setup then makes a caching allocator hold that state: each large
 * segment reserved whole (`alloc seg.N` + `free seg.N`), then, segment by
 * segment in address order, the live blocks at their offsets with `fill.N`
 * buffers over the free gaps, then the fills freed.
 *
 * Invariant: an event the snapshot contradicts itself on (an undone alloc
 * whose block is not there, a block outside every segment, overlapping
 * blocks) is counted in setup_inconsistent and skipped, never trusted.
 */
#include "import/torch_conv.h"
/* ---- pass 1 ------------------------------------------------------------------- */

static addr_first *first_at(GHashTable *t, uint64_t addr, bool *fresh)
{
    addr_first *f = g_hash_table_lookup(t, GSIZE_TO_POINTER(addr));
    *fresh = f == NULL;
    if (f == NULL) {
        f = g_new0(addr_first, 1);
        g_hash_table_insert(t, GSIZE_TO_POINTER(addr), f);
    }
    return f;
}

/* An event that sets the state at its address: present (with size and
 * stream) or absent before it, looking back from the state after it. The
 * undo of an alloc (segment_alloc) finds its block (segment) missing when
 * the next event at that address says absent; `pending` remembers that
 * the latest one needs that check. */
static void note_state(conv *c, GHashTable *t, uint64_t addr, bool present_before,
                       const tevent *e, bool check)
{
    bool fresh;
    addr_first *f = first_at(t, addr, &fresh);
    if (fresh) {
        f->first = present_before ? FIRST_PRESENT : FIRST_ABSENT;
        f->size = e->size;
        f->stream = e->stream;
    } else if (f->pending && !present_before) {
        c->setup_inconsistent++;
    }
    f->pending = check;
}

static void note_event(conv *c, const tevent *e)
{
    if (!c->have_t0 && e->has_time) {
        c->have_t0 = true;
        c->t0 = e->time_us;
    }
    switch (e->action) {
    case EV_ALLOC:
        note_state(c, c->block_first, e->addr, false, e, e->size != 0);
        break;
    case EV_FREE_COMPLETED:
        note_state(c, c->block_first, e->addr, e->size != 0, e, false);
        break;
    case EV_SEGMENT_ALLOC:
        note_state(c, c->seg_first, e->addr, false, e, true);
        break;
    case EV_SEGMENT_FREE:
        if (e->size != 0) /* an empty segment_free says nothing of the state */
            note_state(c, c->seg_first, e->addr, true, e, false);
        break;
    default:
        break;
    }
    if (e->action == EV_SEGMENT_ALLOC || e->action == EV_SEGMENT_MAP ||
        e->action == EV_SEGMENT_FREE || e->action == EV_SEGMENT_UNMAP ||
        e->action == EV_SNAPSHOT || e->action == EV_OOM) {
        segev s = {c->n_events, e->addr, e->size, e->action, e->has_time, e->time_us,
                   e->stream, e->empty_cache, false, 0, 0};
        g_array_append_val(c->segevs, s);
    } else if (e->action == EV_ALLOC && c->segevs->len > 0) {
        /* CUDACachingAllocator.cpp's malloc() records SEGMENT_ALLOC, then
         * the ALLOC of the block it made the segment for */
        segev *last = &g_array_index(c->segevs, segev, c->segevs->len - 1);
        if (last->action == EV_SEGMENT_ALLOC && last->index + 1 == c->n_events) {
            last->has_request = true;
            last->request = e->size;
            last->request_stream = e->stream;
        }
    }
}

bool torch_pass1_item(conv *c, int selector, uint64_t outer, uint64_t index, strata_pv v)
{
    if (selector == SEL_SEGMENTS) {
        c->err = &c->seg_err;
        if (c->seg_err == NULL)
            torch_read_segment(c, index, v);
    } else if (selector == SEL_EVENTS && outer != (uint64_t)c->opt.device) {
        if (outer <= G_MAXINT && !torch_is_marker(c, v))
            torch_device_count(c, (int64_t)outer)->events++;
    } else if (selector == SEL_EVENTS) {
        c->err = &c->ev_err;
        tevent e;
        if (c->ev_err == NULL && torch_read_event(c, c->n_events, v, false, &e)) {
            note_event(c, &e);
            if (e.action != EV_SNAPSHOT) {
                c->n_history++;
                c->last_history = e.action;
                torch_device_count(c, (int64_t)outer)->events++;
            }
        }
        c->n_events++;
    }
    return true; /* errors wait in seg_err and ev_err for torch_check_document() */
}

/* ---- the state at the first event ---------------------------------------------- */

/* Undoing the events newest first leaves, at each address, what its oldest
 * event says of the state before it; addresses no event touches keep their
 * final state. An undone alloc (segment_alloc) whose block (segment) is not
 * there is an inconsistency: note_state() counted those followed by another
 * event at their address, here are those that are the latest there. */
static gpointer make_block(uint64_t addr, const addr_first *f)
{
    tblock b = {addr, f->size, f->stream};
    return g_memdup2(&b, sizeof b);
}

static gpointer make_segment(uint64_t addr, const addr_first *f)
{
    tseg s = {addr, f->size, f->stream, f->size <= SMALL_SEGMENT};
    return g_memdup2(&s, sizeof s);
}

/* state (addr -> value): from the final state to the one at the first event. */
static void undo_to_first(conv *c, GHashTable *first, GHashTable *state,
                          gpointer (*make)(uint64_t addr, const addr_first *f))
{
    GHashTableIter hi;
    gpointer k, v;
    g_hash_table_iter_init(&hi, first);
    while (g_hash_table_iter_next(&hi, &k, &v)) {
        const addr_first *f = v;
        if (f->pending && !g_hash_table_contains(state, k))
            c->setup_inconsistent++;
        if (f->first == FIRST_PRESENT)
            g_hash_table_insert(state, k, make(GPOINTER_TO_SIZE(k), f));
        else
            g_hash_table_remove(state, k);
    }
}

/* The segment holding addr: the one with the greatest base at or below it. */
static tseg *containing(conv *c, uint64_t addr)
{
    tseg *best = NULL;
    GHashTableIter hi;
    gpointer k, v;
    g_hash_table_iter_init(&hi, c->seg_by_addr);
    while (g_hash_table_iter_next(&hi, &k, &v)) {
        tseg *s = v;
        if (s->addr <= addr && (best == NULL || s->addr > best->addr))
            best = s;
    }
    return best;
}

/* Expandable segments grow and shrink by segment_map and segment_unmap of
 * pages inside them: undone newest first, a map takes its bytes off the
 * segment that holds it, an unmap gives them back (to a segment at its
 * address when none holds it). A segment left with nothing mapped did not
 * exist. */
static void undo_mappings(conv *c)
{
    for (guint k = c->segevs->len; k-- > 0;) {
        const segev *e = &g_array_index(c->segevs, segev, k);
        if (e->action != EV_SEGMENT_MAP && e->action != EV_SEGMENT_UNMAP)
            continue;
        tseg *s = containing(c, e->addr);
        if (e->action == EV_SEGMENT_MAP) {
            if (s == NULL || s->size < e->size)
                c->setup_inconsistent++;
            if (s)
                s->size -= s->size < e->size ? s->size : e->size;
        } else if (s) {
            s->size = sat_add(s->size, e->size);
        } else {
            tseg n = {e->addr, e->size, e->stream, e->size <= SMALL_SEGMENT}; /* on its event's stream */
            g_hash_table_insert(c->seg_by_addr, GSIZE_TO_POINTER(n.addr), g_memdup2(&n, sizeof n));
        }
    }
    GHashTableIter hi;
    gpointer key, v;
    g_hash_table_iter_init(&hi, c->seg_by_addr);
    while (g_hash_table_iter_next(&hi, &key, &v))
        if (((tseg *)v)->size == 0)
            g_hash_table_iter_remove(&hi);
}

void torch_rebuild_initial(conv *c)
{
    undo_to_first(c, c->block_first, c->block_by_addr, make_block);
    undo_to_first(c, c->seg_first, c->seg_by_addr, make_segment);
    undo_mappings(c);
}

static uint64_t round_block(uint64_t size)
{
    return size < BLOCK_ROUND ? BLOCK_ROUND : (size + BLOCK_ROUND - 1) / BLOCK_ROUND * BLOCK_ROUND;
}

/* tseg and tblock by their first field, the address. */
static gint cmp_addr(gconstpointer a, gconstpointer b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct fill {
    uint64_t number;
    uint32_t stream;
} fill;

/* Fill buffers covering [from, to) of a segment, in pieces its pool serves. */
static void emit_fill(conv *c, GArray *fills, const tseg *s, uint32_t stream, uint64_t from,
                      uint64_t to)
{
    while (from < to) {
        uint64_t n = to - from;
        if (s->small) {
            if (n > SMALL_REQUEST)
                n = SMALL_REQUEST;
        } else if (n <= SMALL_REQUEST) {
            /* A large-pool request must exceed 1 MiB: a smaller gap stays free
             * (no request of the large pool can land in it anyway). */
            return;
        }
        fill f = {c->next_buffer++, stream};
        torch_emit(c, STRATA_OP_ALLOC, NAME_FILL, f.number, n, stream, c->note_setup + 1, false, 0,
             no_at);
        g_array_append_val(fills, f);
        from += n;
    }
}

void torch_emit_setup(conv *c)
{
    GArray *segs = g_array_new(FALSE, FALSE, sizeof(tseg));
    GArray *blocks = g_array_new(FALSE, FALSE, sizeof(tblock));
    GHashTableIter hi;
    gpointer k, v;
    g_hash_table_iter_init(&hi, c->seg_by_addr);
    while (g_hash_table_iter_next(&hi, &k, &v))
        g_array_append_val(segs, *(tseg *)v);
    g_hash_table_iter_init(&hi, c->block_by_addr);
    while (g_hash_table_iter_next(&hi, &k, &v))
        g_array_append_val(blocks, *(tblock *)v);
    g_array_sort(segs, cmp_addr);
    g_array_sort(blocks, cmp_addr);

    GArray *fills = g_array_new(FALSE, FALSE, sizeof(fill));
    uint32_t setup = c->note_setup + 1;
    size_t bi = 0;
    for (size_t i = 0; i < segs->len; i++) {
        const tseg *s = &g_array_index(segs, tseg, i);
        uint32_t stream = torch_stream_of(c, s->stream);
        c->sum->n_initial_segments++;
        c->sum->initial_reserved = sat_add(c->sum->initial_reserved, s->size);
        if (!s->small) {
            /* The whole segment as one request: the allocator reserves exactly
             * this size (no cached block is free to serve it), and keeps it
             * cached when freed. */
            uint64_t n = c->next_buffer++;
            torch_emit(c, STRATA_OP_ALLOC, NAME_SEG, n, s->size, stream, setup, true, s->addr, no_at);
            torch_emit(c, STRATA_OP_FREE, NAME_SEG, n, 0, stream, setup, false, 0, no_at);
        }
        uint64_t cursor = s->addr, end = s->addr + s->size;
        /* Blocks before this segment belong to no initial segment. */
        while (bi < blocks->len && g_array_index(blocks, tblock, bi).addr < s->addr) {
            c->setup_inconsistent++;
            bi++;
        }
        for (; bi < blocks->len && g_array_index(blocks, tblock, bi).addr < end; bi++) {
            const tblock *b = &g_array_index(blocks, tblock, bi);
            if (b->addr < cursor) {
                c->setup_inconsistent++; /* overlaps the previous block */
                continue;
            }
            emit_fill(c, fills, s, stream, cursor, b->addr);
            uint64_t n = c->next_buffer++;
            torch_emit(c, STRATA_OP_ALLOC, NAME_B, n, b->requested, torch_stream_of(c, b->stream), setup,
                 true, b->addr, no_at);
            g_hash_table_insert(c->live, GSIZE_TO_POINTER(b->addr), GSIZE_TO_POINTER(n + 1));
            c->sum->n_initial_blocks++;
            cursor = b->addr + round_block(b->requested);
        }
        if (cursor < end)
            emit_fill(c, fills, s, stream, cursor, end);
    }
    c->setup_inconsistent += blocks->len - bi;
    for (guint i = 0; i < fills->len; i++) {
        const fill *f = &g_array_index(fills, fill, i);
        torch_emit(c, STRATA_OP_FREE, NAME_FILL, f->number, 0, f->stream, setup, false, 0, no_at);
    }
    g_array_unref(fills);
    g_array_unref(segs);
    g_array_unref(blocks);
}
