/*
 * kineto_order.c: the [memory] events of one GPU in ts order
 * (kineto_order.h).
 */
#include "import/kineto_order.h"

#include "import/kineto_event.h"
#include "import/kineto_scan.h"

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
    if (x->ev.ts != y->ev.ts)
        return x->ev.ts < y->ev.ts ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

GArray *strata_kineto_memory_by_ts(const char *path, int device, strata_progress *progress, GError **err)
{
    keep k = {device, g_array_new(FALSE, FALSE, sizeof(kept))};
    strata_kineto_scan *scan = strata_kineto_scan_open(path, err);
    if (scan == NULL) {
        g_array_free(k.events, TRUE);
        return NULL;
    }
    if (progress)
        strata_kineto_scan_set_progress(scan, progress, "import kineto", "ts order");
    JsonObject *o;
    uint64_t line;
    int rc;
    strata_kineto_event ev;
    while ((rc = strata_kineto_scan_next(scan, &o, &line, err)) == 1) {
        if (!strata_kineto_event_decode(o, path, line, &ev, err)) {
            rc = -1;
            break;
        }
        keep_visit(&ev, &k);
    }
    strata_kineto_scan_free(scan);
    if (rc != 0) {
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
