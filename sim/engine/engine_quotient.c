/*
 * engine_quotient.c: senders and representatives of the quotient
 * (contract in engine_quotient.h).
 */
#include "engine/engine_quotient.h"
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "core/idmap.h"
#include "spmd/spmd_names.h"

typedef struct sender {
    uint32_t src, dst;
    uint32_t first, n; /* its hops: hops[first .. first + n) */
} sender;

struct engine_quotient {
    const strata_hw *hw;
    const strata_spmd_classes *c;
    strata_idmap *by_pair; /* (from << 32 | dst) -> sender + 1 */
    GHashTable *by_route; /* the route's words (a GBytes) -> sender + 1 */
    GArray *senders;      /* sender */
    GArray *hops;         /* strata_hop, sender after sender */
    GArray *scratch;      /* strata_hop: the route being mapped */
};

engine_quotient *engine_quotient_new(const strata_hw *hw, const strata_spmd_classes *c)
{
    if (!c)
        return NULL;
    engine_quotient *q = g_new0(engine_quotient, 1);
    q->hw = hw;
    q->c = c;
    q->by_pair = strata_idmap_new();
    q->by_route = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, NULL);
    q->senders = g_array_new(FALSE, FALSE, sizeof(sender));
    q->hops = g_array_new(FALSE, FALSE, sizeof(strata_hop));
    q->scratch = g_array_new(FALSE, FALSE, sizeof(strata_hop));
    return q;
}

void engine_quotient_free(engine_quotient *q)
{
    if (!q)
        return;
    strata_idmap_free(q->by_pair);
    g_hash_table_destroy(q->by_route);
    g_array_free(q->senders, TRUE);
    g_array_free(q->hops, TRUE);
    g_array_free(q->scratch, TRUE);
    g_free(q);
}

const strata_spmd_classes *engine_quotient_classes(const engine_quotient *q) { return q->c; }

bool engine_quotient_has_device(const engine_quotient *q, uint32_t device)
{
    return strata_spmd_class_rep(q->c, device) == device;
}

uint32_t engine_quotient_memory(const engine_quotient *q, uint32_t memory)
{
    const strata_memory_spec *m = strata_hw_memory(q->hw, memory);
    if (m->device == STRATA_HW_NO_DEVICE) { /* a host's: its first device's representative's host's */
        uint32_t first = m->host * strata_hw_devices_per_host(q->hw);
        return strata_spmd_classes_hosts(q->c) && m->kind == STRATA_MEM_HOST
                   ? strata_hw_memory_on(q->hw, m->base, strata_spmd_class_rep(q->c, first))
                   : memory;
    }
    return strata_hw_memory_on(q->hw, m->base, strata_spmd_class_rep(q->c, m->device));
}

bool engine_quotient_has_memory(const engine_quotient *q, uint32_t memory)
{
    const strata_memory_spec *m = strata_hw_memory(q->hw, memory);
    if (m->device != STRATA_HW_NO_DEVICE)
        return engine_quotient_has_device(q, m->device);
    return strata_spmd_classes_hosts(q->c) && m->kind == STRATA_MEM_HOST && engine_quotient_memory(q, memory) == memory;
}

uint32_t engine_quotient_unit(const engine_quotient *q, uint32_t unit)
{
    const strata_compute_spec *u = strata_hw_compute(q->hw, unit);
    return strata_hw_compute_on(q->hw, u->base, strata_spmd_class_rep(q->c, u->device));
}


static uint64_t pair_key(uint32_t from, uint32_t dst) { return (uint64_t)from << 32 | dst; }

uint32_t engine_quotient_sender(const engine_quotient *q, uint32_t from, uint32_t dst)
{
    return GPOINTER_TO_UINT(strata_idmap_get(q->by_pair, pair_key(from, dst))) - 1;
}

bool engine_quotient_note(engine_quotient *q, uint32_t from, uint32_t src, uint32_t dst, GError **err)
{
    uint64_t k = pair_key(from, dst);
    if (strata_idmap_get(q->by_pair, k))
        return true;
    uint32_t true_src = strata_hw_memory_on(q->hw, strata_hw_memory(q->hw, src)->base, from);
    const strata_hop *hops = NULL;
    uint32_t n = 0;
    if (!strata_hw_route(q->hw, true_src, dst, &hops, &n, err))
        return false;
    /* the route on the quotient: each link's orbit's, each port's class's;
     * its key: the ends, then each hop's three words (no padding hashed) */
    g_array_set_size(q->scratch, n);
    strata_hop *mapped = (strata_hop *)(void *)q->scratch->data;
    uint32_t *words = g_new(uint32_t, 2 + 3 * (size_t)n);
    words[0] = src;
    words[1] = dst;
    for (uint32_t i = 0; i < n; i++) {
        bool forward;
        uint32_t link = strata_spmd_link_rep(q->c, hops[i].link, hops[i].forward, &forward);
        uint32_t port = hops[i].port == STRATA_HW_NO_MEMORY ? hops[i].port : engine_quotient_memory(q, hops[i].port);
        mapped[i] = (strata_hop){.link = link, .forward = forward, .port = port};
        words[2 + 3 * i] = link;
        words[3 + 3 * i] = forward;
        words[4 + 3 * i] = port;
    }
    GBytes *route = g_bytes_new_take(words, (2 + 3 * (size_t)n) * sizeof(uint32_t));
    uint32_t index = GPOINTER_TO_UINT(g_hash_table_lookup(q->by_route, route));
    if (index == 0) {
        sender s = {.src = src, .dst = dst, .first = q->hops->len, .n = n};
        g_array_append_vals(q->hops, mapped, n);
        g_array_append_val(q->senders, s);
        index = q->senders->len;
        g_hash_table_insert(q->by_route, route, GUINT_TO_POINTER(index));
    } else {
        g_bytes_unref(route);
    }
    strata_idmap_put(q->by_pair, k, GUINT_TO_POINTER(index));
    return true;
}

uint32_t engine_quotient_sender_count(const engine_quotient *q) { return q->senders->len; }

uint32_t engine_quotient_sender_src(const engine_quotient *q, uint32_t s)
{
    return g_array_index(q->senders, sender, s).src;
}

uint32_t engine_quotient_sender_dst(const engine_quotient *q, uint32_t s)
{
    return g_array_index(q->senders, sender, s).dst;
}

void engine_quotient_sender_hops(const engine_quotient *q, uint32_t s, const strata_hop **hops, uint32_t *n)
{
    const sender *x = &g_array_index(q->senders, sender, s);
    *hops = &g_array_index(q->hops, strata_hop, x->first);
    *n = x->n;
}

/* ---- results: every device, memory, link and unit as its representative */

void engine_quotient_fill(const engine_quotient *q, strata_results *r)
{
    for (guint i = 0; i < r->memories->len; i++) {
        uint32_t from = engine_quotient_memory(q, i);
        strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        if (from == i)
            continue;
        strata_memory_result keep = *m; /* its own name, place and strings */
        *m = g_array_index(r->memories, strata_memory_result, from);
        m->name = keep.name;
        m->place = keep.place;
        m->kind = keep.kind;
        m->allocator = keep.allocator;
    }
    /* a representative link carries its orbits' crossings: where a symmetry
     * turns a full-duplex link around (a torus axis of 2), both directions
     * are one orbit, whose crossings the quotient puts on one direction:
     * the link moves twice its representative's bytes, at the same dates
     * (the two directions are images of each other), so busy as long */
    strata_link_result *reps = g_memdup2(r->links->data, r->links->len * sizeof(strata_link_result));
    for (guint i = 0; i < r->links->len; i++) {
        bool f, b;
        uint32_t from = strata_spmd_link_rep(q->c, i, true, &f);
        bool turned = strata_hw_link(q->hw, i)->full_duplex && strata_spmd_link_rep(q->c, i, false, &b) == from && f == b;
        strata_link_result *l = &g_array_index(r->links, strata_link_result, i);
        /* and a link that some symmetry keeps carries that many copies per
         * representative copy (strata_spmd_link_weight) */
        uint64_t weight = (uint64_t)llround(strata_spmd_link_weight(q->c, i, true)); /* an integer: |G| / orbit */
        l->bytes = reps[from].bytes * (turned ? 2 : 1) * weight;
        l->busy_s = reps[from].busy_s;
    }
    g_free(reps);
    for (guint i = 0; i < r->compute->len; i++) {
        strata_compute_result *u = &g_array_index(r->compute, strata_compute_result, i);
        const strata_compute_result *rep = &g_array_index(r->compute, strata_compute_result, engine_quotient_unit(q, i));
        u->busy_s = rep->busy_s;
        u->flops = rep->flops;
        u->clock_mean = rep->clock_mean;
        u->clock_min = rep->clock_min;
    }
}

/* A row of the expanded streams: the base name's first appearance, the device, the row. */
typedef struct stream_row {
    uint32_t base, device;
    guint row;
} stream_row;

static gint row_order(gconstpointer pa, gconstpointer pb)
{
    const stream_row *a = pa, *b = pb;
    if (a->base != b->base)
        return a->base < b->base ? -1 : 1;
    return (a->device > b->device) - (a->device < b->device);
}

void engine_quotient_streams(const engine_quotient *q, strata_results *r)
{
    guint n_sim = r->streams->len;
    GHashTable *bases = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL); /* base -> 1 + index */
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(stream_row));
    GString *name = g_string_new(NULL);
    uint32_t devices = strata_spmd_classes_devices(q->c);
    for (guint i = 0; i < n_sim; i++) {
        const strata_stream_result *s = &g_array_index(r->streams, strata_stream_result, i);
        uint32_t rep = s->place.device[0];
        bool named = rep < devices && strata_spmd_rename(name, s->name, 0);
        if (named)
            g_string_truncate(name, name->len - 2); /* the base: N of N@0 */
        else
            g_string_assign(name, s->name);
        uint32_t base = GPOINTER_TO_UINT(g_hash_table_lookup(bases, name->str));
        if (base == 0) {
            base = g_hash_table_size(bases) + 1;
            g_hash_table_insert(bases, g_strdup(name->str), GUINT_TO_POINTER(base));
        }
        stream_row own = {base, named ? rep : 0, i};
        g_array_append_val(rows, own);
        for (uint32_t d = 0; named && d < devices; d++) {
            if (d == rep || strata_spmd_class_rep(q->c, d) != rep)
                continue;
            strata_spmd_rename(name, s->name, d);
            strata_stream_result *copy = strata_results_add_stream(r, name->str);
            s = &g_array_index(r->streams, strata_stream_result, i); /* the array may have moved */
            copy->place.device[0] = d;
            copy->ops = s->ops;
            copy->busy_s = s->busy_s;
            copy->stall_s = s->stall_s;
            stream_row row = {base, d, r->streams->len - 1};
            g_array_append_val(rows, row);
        }
    }
    g_array_sort(rows, row_order); /* stable enough: (base, device) is unique */
    size_t size = sizeof(strata_stream_result);
    strata_stream_result *order = g_new(strata_stream_result, rows->len ? rows->len : 1);
    for (guint i = 0; i < rows->len; i++)
        memcpy(&order[i], &g_array_index(r->streams, strata_stream_result, g_array_index(rows, stream_row, i).row),
               size);
    memcpy(r->streams->data, order, size * rows->len);
    g_free(order);
    g_string_free(name, TRUE);
    g_array_free(rows, TRUE);
    g_hash_table_destroy(bases);
}
