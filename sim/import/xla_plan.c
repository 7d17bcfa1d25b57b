/*
 * xla_plan.c: XLA's heap simulator against strata's offline planner. Each
 * preallocated-temp allocation is XLA's packing of its values; the planner
 * (models/alloc/offline.c) packs the same buffers, with the same lifetimes,
 * and its height is set beside XLA's size (contract in xla_emit.h).
 *
 * Lifetimes: a group live over schedule times start..end (inclusive) is the
 * half-open [start, end + 1), so two buffers that XLA sees live at one
 * instant never share bytes. Alignment: the largest power of two (at most
 * 4096) dividing every offset XLA gave in the allocation, so the planner
 * works on XLA's own grid (1 when every offset is 0).
 */
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "alloc/alloc.h"
#include "import/xla_emit.h"

#define XLA_PLAN_MAX_ALIGNMENT 4096

/* The alignment of the values [first, last) of one allocation (values
 * are listed allocation by allocation, so each is one run). */
static uint64_t offsets_alignment(const xla_buffers *b, uint32_t first, uint32_t last)
{
    uint64_t align = XLA_PLAN_MAX_ALIGNMENT;
    bool any = false;
    for (uint32_t i = first; i < last; i++) {
        const xla_value *v = xla_buffers_value(b, i);
        if (v->offset == 0)
            continue;
        any = true;
        while (align > 1 && v->offset % align != 0)
            align >>= 1;
    }
    return any ? align : 1;
}

static int cmp_edge(const void *pa, const void *pb)
{
    const uint64_t *a = pa, *b = pb; /* {time, is_start, size}: ends first at a tie */
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]);
}

/* The peak of live bytes at their real sizes (no alignment): no packing of
 * these lifetimes can be lower. */
static uint64_t live_peak(const strata_lifetime *l, size_t n)
{
    uint64_t *edges = g_new(uint64_t, 6 * n);
    for (size_t i = 0; i < n; i++) {
        uint64_t *s = &edges[6 * i];
        s[0] = l[i].start, s[1] = 1, s[2] = l[i].size;
        s[3] = l[i].end, s[4] = 0, s[5] = l[i].size;
    }
    qsort(edges, 2 * n, 3 * sizeof(uint64_t), cmp_edge);
    uint64_t live = 0, peak = 0;
    for (size_t i = 0; i < 2 * n; i++) {
        const uint64_t *e = &edges[3 * i];
        live = e[1] ? live + e[2] : live - e[2];
        peak = MAX(peak, live);
    }
    g_free(edges);
    return peak;
}

/* The planner's height is where its highest block ends at its real size:
 * the alignment pads a block's start, not the arena's top (XLA's own size
 * ends at its last value's end, 16448 + 24 = 16472 in tp_step). */
static bool plan_one(const xla_allocation *a, uint64_t alignment, const xla_group *groups, size_t first,
                     size_t last, strata_xla_figures *fig, GError **err)
{
    strata_xla_temp t = {.index = a->index, .xla_bytes = a->size, .alignment = alignment};
    GArray *lts = g_array_new(FALSE, TRUE, sizeof(strata_lifetime));
    for (size_t i = first; i < last; i++) {
        strata_lifetime l = {.id = i, .size = groups[i].size, .start = groups[i].start,
                             .end = groups[i].end + 1};
        g_array_append_val(lts, l);
    }
    t.n_buffers = lts->len;
    bool ok = true;
    if (lts->len > 0) {
        /* The capacity only bounds allocs, which this comparison never makes. */
        strata_allocator *al = strata_allocator_new("offline", UINT64_C(1) << 60, t.alignment, err);
        ok = al && strata_allocator_plan(al, (const strata_lifetime *)(void *)lts->data, lts->len, err);
        if (ok) {
            const strata_lifetime *l = (const strata_lifetime *)(void *)lts->data;
            for (guint i = 0; ok && i < lts->len; i++) {
                uint64_t at = 0;
                ok = strata_allocator_alloc(al, l[i].id, l[i].size, 0, &at);
                if (ok && at + l[i].size > t.planned_bytes)
                    t.planned_bytes = at + l[i].size;
            }
            if (!ok)
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "temp allocation %" G_GUINT64_FORMAT ": the offline planner placed no block for a buffer it planned",
                            a->index);
            t.lower_bound = live_peak(l, lts->len);
        }
        strata_allocator_free(al);
    }
    g_array_free(lts, TRUE);
    if (ok)
        g_array_append_val(fig->temps, t);
    return ok;
}

bool xla_plan_temps(const xla_buffers *b, const xla_group *groups, size_t n, strata_xla_figures *fig,
                    GError **err)
{
    /* Groups are in allocation order (xla_emit.c sorts values by
     * allocation first) and values in file order, allocation by
     * allocation: one pass over each, not one per allocation. */
    size_t g = 0;
    uint32_t v = 0, nv = xla_buffers_n_values(b);
    for (uint32_t i = 0; i < xla_buffers_n_allocations(b); i++) {
        const xla_allocation *a = xla_buffers_allocation(b, i);
        size_t g0 = g;
        while (g < n && groups[g].alloc == i)
            g++;
        uint32_t v0 = v;
        while (v < nv && xla_buffers_value(b, v)->alloc == i)
            v++;
        if ((a->flags & XLA_ALLOC_TEMP) && !plan_one(a, offsets_alignment(b, v0, v), groups, g0, g, fig, err))
            return false;
    }
    return true;
}
