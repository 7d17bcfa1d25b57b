/*
 * kineto_order.c: the [memory] events of one GPU in ts order
 * (kineto_order.h).
 */
#include "import/kineto_order.h"

#include "import/kineto_event.h"

/* An event and its place among the device's in the file (the tie-break). */
typedef struct kept {
    strata_kineto_event ev;
    guint index;
} kept;

typedef struct keep {
    int device;
    GArray *events; /* kept */
} keep;

static void keep_visit(const strata_kineto_event *ev, void *user)
{
    keep *k = user;
    if (ev->kind != STRATA_KINETO_EV_MEMORY || !strata_kineto_event_gpu(ev) || ev->device != k->device)
        return;
    kept m = {*ev, k->events->len};
    m.ev.name = NULL; /* borrowed from an object the scanner frees */
    g_array_append_val(k->events, m);
}

static gint cmp_kept(gconstpointer a, gconstpointer b)
{
    const kept *x = a, *y = b;
    return strata_kineto_ts_order(x->ev.ts, x->index, y->ev.ts, y->index);
}

GArray *strata_kineto_memory_by_ts(const char *path, int device, strata_progress *progress, GError **err)
{
    keep k = {device, g_array_new(FALSE, FALSE, sizeof(kept))};
    if (!strata_kineto_each_event_shown(path, progress, "ts order", keep_visit, &k, err)) {
        g_array_free(k.events, TRUE);
        return NULL;
    }
    g_array_sort(k.events, cmp_kept);
    GArray *out = g_array_sized_new(FALSE, FALSE, sizeof(strata_kineto_event), k.events->len);
    for (guint i = 0; i < k.events->len; i++)
        g_array_append_val(out, g_array_index(k.events, kept, i).ev);
    g_array_free(k.events, TRUE);
    return out;
}
