/*
 * torch_events.c: pass 2 of the conversion (see torch_conv.h): each event of
 * the device becomes its ops: an alloc `alloc b.N SIZE addr= stream= at=
 * note=`, a free_completed `free b.N` (free_requested only marks the block
 * pending), the first segment_free of a program's run a `release`. Streamed,
 * the events are read on demand as the source is read (torch_fill_window),
 * and again after a rewind.
 *
 * Invariant: a pass starts from the state right after the setup
 * (torch_reset_events), so every pass emits the same ops.
 */
#include "import/torch_conv.h"

static void copy_table(GHashTable *to, GHashTable *from)
{
    g_hash_table_remove_all(to);
    GHashTableIter hi;
    gpointer k, v;
    g_hash_table_iter_init(&hi, from);
    while (g_hash_table_iter_next(&hi, &k, &v))
        g_hash_table_insert(to, k, v);
}

/* Keeps the state right after the setup, for torch_reset_events. */
void torch_save_setup(conv *c)
{
    c->setup_live = g_hash_table_new(g_direct_hash, g_direct_equal);
    copy_table(c->setup_live, c->live);
    c->setup_next_buffer = c->next_buffer;
}

/* Back to the state right after the setup. */
void torch_reset_events(conv *c)
{
    copy_table(c->live, c->setup_live);
    c->next_buffer = c->setup_next_buffer;
    c->event_index = 0;
    c->next_release = 0;
    c->n_allocs = c->n_frees = c->emit_inconsistent = 0;
    c->events_done = false;
    torch_host_reset(c);
}

/* The counts of a complete pass (the same on every pass). */
void torch_events_done(conv *c)
{
    c->events_done = true;
    c->sum->n_allocs = c->n_allocs;
    c->sum->n_frees = c->n_frees;
    c->sum->n_inconsistent = c->setup_inconsistent + c->emit_inconsistent;
}

static void emit_event(conv *c, const tevent *e)
{
    uint64_t i = c->event_index++;
    uint32_t stream = torch_stream_of(c, e->stream);
    emit_at at = no_at;
    if (c->have_t0 && e->has_time && e->time_us >= c->t0)
        at = (emit_at){true, e->time_us - c->t0}; /* at most 1e15: torch_read_event checked */
    gpointer key = GSIZE_TO_POINTER(e->addr);
    switch (e->action) {
    case EV_ALLOC: {
        gpointer old = g_hash_table_lookup(c->live, key);
        if (old && GPOINTER_TO_SIZE(old) != EMPTY_BUFFER) {
            /* allocated twice without a free: keep the snapshot's word */
            c->emit_inconsistent++;
            torch_emit(c, STRATA_OP_FREE, NAME_B, GPOINTER_TO_SIZE(old) - 1, 0, stream, 0, false, 0,
                 no_at);
        }
        if (e->size == 0) {
            /* PyTorch hands out no memory for 0 bytes; a trace cannot
             * hold an empty buffer: the alloc and its free are dropped. */
            g_hash_table_insert(c->live, key, GSIZE_TO_POINTER(EMPTY_BUFFER));
            break;
        }
        uint64_t n = c->next_buffer++;
        torch_emit(c, STRATA_OP_ALLOC, NAME_B, n, e->size, stream, e->note, true, e->addr, at);
        g_hash_table_insert(c->live, key, GSIZE_TO_POINTER(n + 1));
        c->n_allocs++;
        break;
    }
    case EV_FREE_COMPLETED: {
        gpointer n = g_hash_table_lookup(c->live, key);
        if (n == NULL) {
            c->emit_inconsistent++;
            break;
        }
        if (GPOINTER_TO_SIZE(n) != EMPTY_BUFFER) {
            torch_emit(c, STRATA_OP_FREE, NAME_B, GPOINTER_TO_SIZE(n) - 1, 0, stream, 0, false, 0, at);
            c->n_frees++;
        }
        g_hash_table_remove(c->live, key);
        break;
    }
    case EV_SEGMENT_FREE:
    case EV_SEGMENT_UNMAP:
        if (c->next_release < c->releases->len &&
            g_array_index(c->releases, uint64_t, c->next_release) >> 1 == i) {
            bool oom = g_array_index(c->releases, uint64_t, c->next_release) & 1;
            torch_emit(c, STRATA_OP_RELEASE, NAME_NONE, 0, 0, stream,
                       oom ? c->note_oom_retry : c->note_empty_cache, false, 0, at);
            g_array_index(c->sink, cop, c->sink->len - 1).memory = c->device_memory;
            c->next_release++;
        }
        break;
    default:
        break;
    }
}

bool torch_pass2_item(conv *c, int selector, uint64_t outer, uint64_t index, strata_pv v)
{
    (void)index;
    tevent e;
    if (selector != SEL_EVENTS || outer != (uint64_t)c->opt.device)
        return true;
    if (!torch_read_event(c, c->event_index, v, true, &e))
        return false;
    if (e.has_time)
        torch_host_emit_until(c, e.time_us); /* the host's ops before this event */
    emit_event(c, &e);
    return true;
}

/* Streaming pass 2: reads events until some produce ops (1), the end (0)
 * or an error (-1: the file changed since pass 1). */
int torch_fill_window(conv *c, GError **err)
{
    if (c->events_done)
        return 0;
    c->sink = c->out->window;
    c->err = err;
    strata_pickle_item item;
    int rc = 1;
    while (c->out->window->len == 0 &&
           (rc = strata_pickle_stream_next(c->stream, &item, err)) == 1)
        if (!torch_pass2_item(c, item.selector, item.outer, item.index, item.value))
            return -1; /* the file changed since pass 1 */
    if (c->out->window->len > 0)
        return 1;
    if (rc < 0)
        return -1;
    torch_host_emit_until(c, INT64_MAX); /* the host's ops after the last event */
    torch_events_done(c);
    return c->out->window->len > 0;
}

bool torch_restart_events(conv *c, GError **err)
{
    (void)err;
    strata_pickle_stream_rewind(c->stream);
    torch_reset_events(c);
    return true;
}
