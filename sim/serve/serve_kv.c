/*
 * serve_kv.c: the table of KV allocation schemes (serve_kv.h) and the
 * rows other than paged: contiguous reservations through an allocator of
 * models/alloc, and virtual-memory growth by pages.
 *
 * Contiguous: a request's whole reservation is taken at its first grow
 * (admission) and held until release; its size in tokens is the row's
 * rule; the allocator places it in the pool, so its external fragmentation
 * is the allocator's (largest free block < free bytes).
 * Virtual-memory growth: the pool is a count of physical pages; a request
 * holds, for each of its growing tensors, ceil(tokens / tokens_per_page)
 * pages, where tokens_per_page = page / (bytes per token of one tensor);
 * no external fragmentation (any free page maps anywhere).
 */
#include "alloc/alloc.h"
#include "core/error.h"
#include "serve/serve_kv.h"
#include "serve/serve_names.h"

typedef enum { RESERVE_MAX, RESERVE_POW2, RESERVE_ORACLE } reserve_rule;

typedef struct contig {
    strata_serve_kv_config c;
    reserve_rule rule;
    strata_allocator *a;
    uint64_t *held;
    uint64_t reserved;
} contig;

static void *contig_create(const strata_serve_kv_config *c, reserve_rule rule, GError **err)
{
    strata_allocator *a = strata_allocator_new(c->allocator ? c->allocator : "best-fit", c->pool_bytes, 256, err);
    if (!a)
        return NULL;
    contig *s = g_new0(contig, 1);
    s->c = *c;
    s->rule = rule;
    s->a = a;
    s->held = g_new0(uint64_t, c->n_requests ? c->n_requests : 1);
    return s;
}

static void *contig_max_create(const strata_serve_kv_config *c, GError **err)
{
    return contig_create(c, RESERVE_MAX, err);
}

static void *contig_pow2_create(const strata_serve_kv_config *c, GError **err)
{
    return contig_create(c, RESERVE_POW2, err);
}

static void *contig_oracle_create(const strata_serve_kv_config *c, GError **err)
{
    return contig_create(c, RESERVE_ORACLE, err);
}

static void contig_destroy(void *p)
{
    contig *s = p;
    if (!s)
        return;
    strata_allocator_free(s->a);
    g_free(s->held);
    g_free(s);
}

static uint64_t reserve_tokens(const contig *s, const strata_serve_kv_req *r)
{
    uint64_t len = (uint64_t)r->prompt + r->output, max = s->c.max_model_len;
    if (s->rule == RESERVE_MAX)
        return max;
    if (s->rule == RESERVE_POW2) {
        uint64_t p = 1;
        while (p < len)
            p <<= 1;
        len = p;
    }
    return len < max ? len : max;
}

static bool contig_grow(void *p, const strata_serve_kv_req *r, uint32_t tokens)
{
    contig *s = p;
    if (s->held[r->id])
        return (uint64_t)tokens * s->c.bytes_per_token <= s->held[r->id];
    uint64_t t = reserve_tokens(s, r);
    if (t < tokens)
        t = tokens;
    uint64_t bytes = t * s->c.bytes_per_token, off = 0;
    if (!strata_allocator_alloc(s->a, r->id, bytes, 0, &off))
        return false;
    s->held[r->id] = bytes;
    s->reserved += bytes;
    return true;
}

static void contig_release(void *p, uint32_t id)
{
    contig *s = p;
    if (!s->held[id])
        return;
    strata_allocator_free_block(s->a, id);
    s->reserved -= s->held[id];
    s->held[id] = 0;
}

static uint64_t contig_held(const void *p, uint32_t id)
{
    return ((const contig *)p)->held[id];
}

static void contig_stats(const void *p, strata_serve_kv_stats *out)
{
    const contig *s = p;
    strata_alloc_stats a;
    strata_allocator_stats(s->a, &a);
    out->capacity = s->c.pool_bytes;
    out->reserved = s->reserved;
    /* free space never reserved is free too (a heap reserves as it goes) */
    uint64_t untouched = s->c.pool_bytes > a.reserved ? s->c.pool_bytes - a.reserved : 0;
    out->largest_free = a.largest_free > untouched ? a.largest_free : untouched;
    out->cached = 0;
}

typedef struct vm {
    strata_serve_kv_config c;
    uint64_t page, pages, used;
    uint64_t tokens_per_page; /* of one growing tensor */
    uint32_t tensors;
    uint64_t *held_pages;
} vm;

static void *vm_create(const strata_serve_kv_config *c, uint64_t page, uint32_t tensors, GError **err)
{
    if (c->page_bytes)
        page = c->page_bytes;
    uint64_t per_tensor = tensors ? c->bytes_per_token / tensors : 0;
    if (!per_tensor || page < per_tensor || c->pool_bytes < page) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "a page of %" G_GUINT64_FORMAT " B: expected at least "
                    "one token of a tensor (%" G_GUINT64_FORMAT " B) and at most the pool (%" G_GUINT64_FORMAT " B)",
                    page, per_tensor, c->pool_bytes);
        return NULL;
    }
    vm *s = g_new0(vm, 1);
    s->c = *c;
    s->page = page;
    s->pages = c->pool_bytes / page;
    s->tensors = tensors;
    s->tokens_per_page = page / per_tensor;
    s->held_pages = g_new0(uint64_t, c->n_requests ? c->n_requests : 1);
    return s;
}

static void *vattention_create(const strata_serve_kv_config *c, GError **err)
{
    return vm_create(c, 2u << 20, c->kv_tensors ? c->kv_tensors : 2, err);
}

static void *expandable_create(const strata_serve_kv_config *c, GError **err)
{
    return vm_create(c, 20u << 20, 1, err);
}

static void vm_destroy(void *p)
{
    vm *s = p;
    if (s)
        g_free(s->held_pages);
    g_free(s);
}

static bool vm_grow(void *p, const strata_serve_kv_req *r, uint32_t tokens)
{
    vm *s = p;
    uint64_t want = (tokens + s->tokens_per_page - 1) / s->tokens_per_page * s->tensors;
    uint64_t have = s->held_pages[r->id];
    if (want <= have)
        return true;
    if (s->used + (want - have) > s->pages)
        return false;
    s->used += want - have;
    s->held_pages[r->id] = want;
    return true;
}

static void vm_release(void *p, uint32_t id)
{
    vm *s = p;
    s->used -= s->held_pages[id];
    s->held_pages[id] = 0;
}

static uint64_t vm_held(const void *p, uint32_t id)
{
    const vm *s = p;
    return s->held_pages[id] * s->page;
}

static void vm_stats(const void *p, strata_serve_kv_stats *out)
{
    const vm *s = p;
    out->capacity = s->pages * s->page;
    out->reserved = s->used * s->page;
    out->largest_free = (s->pages - s->used) * s->page;
    out->cached = 0;
}

/* A row whose hooks are PREFIX_destroy, _grow, _release, _held and _stats (no prefix lookup). */
#define KV_ROW(var, name, summary, create, prefix)                                                            \
    static const strata_serve_kv_scheme var = {name,           summary,          create,          prefix##_destroy, \
                                               NULL,           prefix##_grow,    prefix##_release, prefix##_held,  \
                                               prefix##_stats}
KV_ROW(contiguous_max, "contiguous-max", "Orca (Max): one contiguous reservation of max_model_len tokens per request",
       contig_max_create, contig);
KV_ROW(contiguous_pow2, "contiguous-pow2", "Orca (Pow2): prompt + output rounded up to a power of two, contiguous",
       contig_pow2_create, contig);
KV_ROW(contiguous_oracle, "contiguous-oracle", "Orca (Oracle): exactly prompt + output tokens, contiguous",
       contig_oracle_create, contig);
KV_ROW(vattention, "vattention", "vAttention: each layer's K and V grow by 2 MiB physical pages (--kv-page)",
       vattention_create, vm);
KV_ROW(expandable, "expandable", "PyTorch expandable segments: a request's cache grows by 20 MiB pages",
       expandable_create, vm);
#undef KV_ROW

static const strata_serve_kv_scheme *const schemes[] = {
    &strata_serve_kv_paged, &contiguous_max, &contiguous_pow2, &contiguous_oracle, &vattention, &expandable, NULL,
};

const strata_serve_kv_scheme *strata_serve_kv_at(uint32_t i)
{
    return i < G_N_ELEMENTS(schemes) ? schemes[i] : NULL;
}

const strata_serve_kv_scheme *strata_serve_kv_find(const char *name)
{
    return serve_names_find(SERVE_NAMES_OF_POINTERS(schemes, strata_serve_kv_scheme), name);
}

char *strata_serve_kv_names(void) { return serve_names_list(SERVE_NAMES_OF_POINTERS(schemes, strata_serve_kv_scheme)); }
