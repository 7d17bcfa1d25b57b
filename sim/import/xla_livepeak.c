/*
 * xla_livepeak.c: XLA's printed live-range peak, recomputed (contract in
 * xla_livepeak.h).
 *
 * Design: the sweep of HloLiveRange::ComputePeakMemoryMoment as a sorted
 * array of (time, is_end, bytes) events; events of one time and kind are
 * all adds or all removals, so their order among themselves (XLA's: the
 * HloValue pointers) cannot change the maximum or its time.
 */
#include "import/xla_livepeak.h"
#include <stdlib.h>
#include <string.h>
#include <glib.h>

typedef struct lp_event {
    uint64_t time;
    unsigned is_end;
    uint64_t bytes;
} lp_event;

typedef struct lp_state {
    GHashTable *size_of;       /* key -> value size + 1 (borrowed keys) */
    bool by_value;             /* the statement sizes a value by its own shape */
    GArray *events;            /* lp_event */
    xla_livepeak *out;
} lp_state;

/* A value's own size; false when the dump lists none. */
static bool own_size(const lp_state *st, const char *key, uint64_t *bytes)
{
    gpointer v = g_hash_table_lookup(st->size_of, key);
    if (v == NULL)
        return false;
    *bytes = (uint64_t)GPOINTER_TO_SIZE(v) - 1;
    return true;
}

/* ByteSizeOf(value->instruction()->shape()): the size of the value NAME{}
 * of the same instruction (a tuple's index table), else the value's own. */
static bool instruction_size(const lp_state *st, const char *key, uint64_t *bytes)
{
    const char *brace = strchr(key, '{');
    if (brace == NULL || strcmp(brace, "{}") == 0)
        return own_size(st, key, bytes);
    char *top = g_strdup_printf("%.*s{}", (int)(brace - key), key);
    bool found = own_size(st, top, bytes);
    g_free(top);
    return found;
}

/* The instruction's size, else (not carried) the value's own, else 0. */
static uint64_t sweep_size(const lp_state *st, const char *key)
{
    uint64_t bytes = 0;
    if (!instruction_size(st, key, &bytes) && !own_size(st, key, &bytes))
        bytes = 0;
    return bytes;
}

static void add_event(void *user, const char *key, uint64_t start, uint64_t end)
{
    lp_state *st = user;
    uint64_t unused;
    if (!instruction_size(st, key, &unused) || !own_size(st, key, &unused))
        st->out->n_unsized++;
    uint64_t bytes = sweep_size(st, key);
    lp_event a = {start, 0, bytes}, b = {end + 1, 1, bytes};
    g_array_append_val(st->events, a);
    g_array_append_val(st->events, b);
}

static int cmp_event(const void *pa, const void *pb)
{
    const lp_event *a = pa, *b = pb;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return (int)a->is_end - (int)b->is_end;
}

/* The figure at the moment: the values live at it, sized as the statement
 * sizes them (as sweep_size, or 0, when the dump lacks it: counted in
 * add_event). */
static void sum_at(void *user, const char *key, uint64_t start, uint64_t end)
{
    lp_state *st = user;
    uint64_t t = st->out->time, bytes = 0;
    if (start > t || t > end)
        return;
    if (!st->by_value)
        bytes = sweep_size(st, key);
    else if (!own_size(st, key, &bytes))
        bytes = 0;
    st->out->n_values++;
    st->out->bytes = bytes > UINT64_MAX - st->out->bytes ? UINT64_MAX : st->out->bytes + bytes;
}

void xla_livepeak_compute(const xla_buffers *b, const xla_liverange *lr, xla_livepeak *out)
{
    memset(out, 0, sizeof *out);
    lp_state st = {.size_of = g_hash_table_new(g_str_hash, g_str_equal),
                   .by_value = xla_liverange_peak_by_value(lr),
                   .events = g_array_new(FALSE, FALSE, sizeof(lp_event)),
                   .out = out};
    /* A key listed twice keeps its first size (the reader refuses neither). */
    for (uint32_t i = 0; i < xla_buffers_n_values(b); i++) {
        const xla_value *v = xla_buffers_value(b, i);
        if (!g_hash_table_contains(st.size_of, v->key))
            g_hash_table_insert(st.size_of, v->key, GSIZE_TO_POINTER((gsize)v->size + 1));
    }
    xla_liverange_foreach(lr, add_event, &st);
    if (st.events->len)
        qsort(st.events->data, st.events->len, sizeof(lp_event), cmp_event);
    /* Sizes are at most 2^63 each (xla_buffers.h), so the running sum is
     * kept in two words: high counts the wraps of the low one. */
    uint64_t lo = 0, hi = 0, peak_lo = 0, peak_hi = 0;
    for (guint i = 0; i < st.events->len; i++) {
        const lp_event *e = &g_array_index(st.events, lp_event, i);
        if (e->is_end) {
            hi -= lo < e->bytes;
            lo -= e->bytes;
        } else {
            lo += e->bytes;
            hi += lo < e->bytes;
        }
        if (hi > peak_hi || (hi == peak_hi && lo > peak_lo)) {
            peak_lo = lo;
            peak_hi = hi;
            out->time = e->time;
        }
    }
    xla_liverange_foreach(lr, sum_at, &st);
    g_array_free(st.events, TRUE);
    g_hash_table_destroy(st.size_of);
}
