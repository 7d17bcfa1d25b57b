/*
 * results.c: the results value (results.h): constructors, appenders, free.
 *
 * Invariants:
 *  1. every GArray whose elements hold strings is created with a clear
 *     function, so strata_results_free() releases every string the
 *     appenders copied;
 *  2. appenders keep insertion order, which is the order writers emit (the
 *     producer appends in a deterministic order: hardware declaration order
 *     for memories, links and units; first appearance for streams);
 *  3. spans and mem_samples are NULL until strata_results_enable_spans();
 *     while a timeline is set, spans and samples go to it and are not kept;
 *  4. route_start has one entry more than there are routes (when any), and
 *     each route's links are sorted and unique.
 */
#include "results/results.h"
#include <assert.h>
#include "results/collectives.h"
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "results/timeline.h"

static void memory_clear(gpointer p)
{
    strata_memory_result *m = p;
    g_free(m->name);
    g_free(m->kind);
    g_free(m->allocator);
}

static void link_clear(gpointer p)
{
    g_free(((strata_link_result *)p)->name);
}

static void stream_clear(gpointer p)
{
    g_free(((strata_stream_result *)p)->name);
}

static void compute_clear(gpointer p)
{
    g_free(((strata_compute_result *)p)->name);
}

static void span_clear(gpointer p)
{
    g_free(((strata_op_span *)p)->label);
}

static GArray *array_new(size_t elem, GDestroyNotify clear)
{
    GArray *a = g_array_new(FALSE, TRUE, (guint)elem);
    if (clear)
        g_array_set_clear_func(a, clear);
    return a;
}

strata_results *strata_results_new(const char *producer)
{
    strata_results *r = g_new0(strata_results, 1);
    r->producer = g_strdup(producer);
    r->memories = array_new(sizeof(strata_memory_result), memory_clear);
    r->links = array_new(sizeof(strata_link_result), link_clear);
    r->streams = array_new(sizeof(strata_stream_result), stream_clear);
    r->compute = array_new(sizeof(strata_compute_result), compute_clear);
    return r;
}

static void oom_clear(strata_oom_info *o)
{
    g_free(o->memory);
    g_free(o->buffer);
    g_free(o->stream);
    memset(o, 0, sizeof(*o));
}

void strata_results_free(strata_results *r)
{
    if (!r)
        return;
    strata_results_clear_devices(r); /* first: it reads nothing freed below */
    g_free(r->producer);
    g_free(r->hardware);
    g_free(r->trace);
    oom_clear(&r->oom_info);
    g_array_unref(r->memories);
    g_array_unref(r->links);
    g_array_unref(r->streams);
    g_array_unref(r->compute);
    if (r->spans)
        g_array_unref(r->spans);
    if (r->mem_samples)
        g_array_unref(r->mem_samples);
    if (r->extra)
        json_object_unref(r->extra);
    if (r->route_links)
        g_array_unref(r->route_links);
    if (r->route_start)
        g_array_unref(r->route_start);
    g_free(r);
}

/* The head every named result (memory, link, stream, unit) starts with. */
typedef struct named_head {
    char *name;
    strata_place place;
} named_head;

/* Appends a zeroed element named `name`, placed nowhere, and returns it
 * (valid until the next append). */
static void *append_named(GArray *a, const char *name)
{
    static const strata_place nowhere = {{STRATA_NO_DEVICE, STRATA_NO_DEVICE},
                                         {STRATA_NO_DEVICE, STRATA_NO_DEVICE}};
    g_array_set_size(a, a->len + 1);
    named_head *h = (named_head *)(a->data + (size_t)(a->len - 1) * g_array_get_element_size(a));
    h->name = g_strdup(name);
    h->place = nowhere;
    return h;
}
_Static_assert(offsetof(strata_memory_result, place) == offsetof(named_head, place) &&
                   offsetof(strata_link_result, place) == offsetof(named_head, place) &&
                   offsetof(strata_stream_result, place) == offsetof(named_head, place) &&
                   offsetof(strata_compute_result, place) == offsetof(named_head, place),
               "every named result starts with its name and place");

strata_memory_result *strata_results_add_memory(strata_results *r, const char *name)
{
    return append_named(r->memories, name);
}

const strata_memory_result *strata_results_memory(const strata_results *r, const char *name)
{
    for (guint i = 0; i < r->memories->len; i++) {
        const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        if (strcmp(m->name, name) == 0)
            return m;
    }
    return NULL;
}

strata_link_result *strata_results_add_link(strata_results *r, const char *name)
{
    return append_named(r->links, name);
}

strata_stream_result *strata_results_add_stream(strata_results *r, const char *name)
{
    return append_named(r->streams, name);
}

strata_compute_result *strata_results_add_compute(strata_results *r, const char *name)
{
    return append_named(r->compute, name);
}

void strata_results_set_oom(strata_results *r, uint64_t op_index, uint64_t line, const char *memory,
                            const char *buffer, const char *stream, uint64_t requested,
                            uint64_t free_bytes, uint64_t largest_free)
{
    oom_clear(&r->oom_info);
    r->oom = true;
    r->oom_info.op_index = op_index;
    r->oom_info.line = line;
    r->oom_info.memory = g_strdup(memory);
    r->oom_info.buffer = g_strdup(buffer);
    r->oom_info.stream = g_strdup(stream);
    r->oom_info.requested_bytes = requested;
    r->oom_info.free_bytes = free_bytes;
    r->oom_info.largest_free_bytes = largest_free;
}

void strata_results_set_oom_plan(strata_results *r, uint64_t bytes)
{
    r->oom_info.planned_bytes = bytes;
}

void strata_results_enable_spans(strata_results *r)
{
    if (!r->spans)
        r->spans = array_new(sizeof(strata_op_span), span_clear);
    if (!r->mem_samples)
        r->mem_samples = array_new(sizeof(strata_mem_sample), NULL);
}

strata_op_span *strata_results_add_span(strata_results *r, const char *label)
{
    strata_results_enable_spans(r);
    assert(r->spans && r->mem_samples); /* invariant 3 */
    g_array_set_size(r->spans, r->spans->len + 1);
    strata_op_span *s = &g_array_index(r->spans, strata_op_span, r->spans->len - 1);
    s->label = g_strdup(label);
    s->memory = s->src_memory = s->dst_memory = -1;
    s->device = STRATA_NO_DEVICE;
    s->route = STRATA_NO_ROUTE;
    return s;
}

static int compare_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

#ifndef NDEBUG
/* Invariant 4 for one route: its links lie in route_links, sorted, unique. */
static bool route_ok(const strata_results *r, uint32_t route)
{
    uint32_t start = g_array_index(r->route_start, uint32_t, route);
    uint32_t end = g_array_index(r->route_start, uint32_t, route + 1);
    if (start > end || end > r->route_links->len)
        return false;
    for (uint32_t i = start + 1; i < end; i++)
        if (g_array_index(r->route_links, uint32_t, i - 1) >= g_array_index(r->route_links, uint32_t, i))
            return false;
    return true;
}
#endif

uint32_t strata_results_add_route(strata_results *r, const uint32_t *links, uint32_t n)
{
    if (!r->route_start) {
        r->route_links = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        r->route_start = g_array_new(FALSE, FALSE, sizeof(uint32_t));
        uint32_t zero = 0;
        g_array_append_val(r->route_start, zero);
    }
    if (n > 0) {
        guint first = r->route_links->len;
        g_array_append_vals(r->route_links, links, n);
        uint32_t *added = &g_array_index(r->route_links, uint32_t, first);
        qsort(added, n, sizeof(uint32_t), compare_u32);
        uint32_t kept = 0;
        for (uint32_t i = 0; i < n; i++)
            if (kept == 0 || added[kept - 1] != added[i])
                added[kept++] = added[i];
        g_array_set_size(r->route_links, first + kept);
    }
    uint32_t end = r->route_links->len;
    g_array_append_val(r->route_start, end);
    assert(route_ok(r, r->route_start->len - 2)); /* invariant 4 */
    return r->route_start->len - 2;
}

uint32_t strata_results_route_count(const strata_results *r)
{
    return r->route_start ? r->route_start->len - 1 : 0;
}

const uint32_t *strata_results_route_links(const strata_results *r, uint32_t route, uint32_t *n)
{
    if (route >= strata_results_route_count(r)) {
        *n = 0;
        return NULL;
    }
    uint32_t start = g_array_index(r->route_start, uint32_t, route);
    *n = g_array_index(r->route_start, uint32_t, route + 1) - start;
    return *n ? &g_array_index(r->route_links, uint32_t, start) : NULL;
}

void strata_results_put_span(strata_results *r, const strata_op_span *s)
{
    if (r->timeline) {
        strata_timeline_span(r->timeline, s);
        return;
    }
    strata_op_span *kept = strata_results_add_span(r, NULL);
    *kept = *s;
    kept->label = g_strdup(s->label);
}

void strata_results_add_sample(strata_results *r, const strata_mem_sample *s)
{
    if (r->timeline) {
        strata_timeline_sample(r->timeline, s);
        return;
    }
    strata_results_enable_spans(r);
    g_array_append_val(r->mem_samples, *s);
}

void strata_results_set_extra(strata_results *r, const char *key, JsonNode *node)
{
    if (!r->extra)
        r->extra = json_object_new();
    json_object_set_member(r->extra, key, node);
}
