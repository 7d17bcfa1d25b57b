/*
 * alloc.c: the table of allocators by name, allocator instances
 * ("NAME[:k=v,...]" specs with validated parameters) and the invariant
 * checker strata_allocator_check().
 *
 * Design: curl's vtls.c and Lua's luaL_Reg: one NULL-terminated static array
 * of `const strata_alloc_type *`, looked up by name; a wrapper struct holds
 * the chosen type, its validated parameters and the model's own state.
 *
 * Invariants: an instance always has a type, parameters validated against
 * the type's table, and a spec string that names every parameter value, so
 * a results file says exactly what ran. Debug builds also run the checker
 * once as an instance is freed (alloc.h's invariants 1-4).
 */
#include <assert.h>
#include <string.h>
#include "alloc/alloc.h"
#include "core/error.h"

extern const strata_alloc_type strata_alloc_bump;
extern const strata_alloc_type strata_alloc_first_fit;
extern const strata_alloc_type strata_alloc_next_fit;
extern const strata_alloc_type strata_alloc_best_fit;
extern const strata_alloc_type strata_alloc_buddy;
extern const strata_alloc_type strata_alloc_bfc;
extern const strata_alloc_type strata_alloc_caching;
extern const strata_alloc_type strata_alloc_caching_host;
extern const strata_alloc_type strata_alloc_cuda_async;
extern const strata_alloc_type strata_alloc_offline;
extern const strata_alloc_type strata_alloc_xla;

static const strata_alloc_type *const alloc_types[] = {
    &strata_alloc_bump,
    &strata_alloc_first_fit,
    &strata_alloc_next_fit,
    &strata_alloc_best_fit,
    &strata_alloc_buddy,
    &strata_alloc_bfc,
    &strata_alloc_caching,
    &strata_alloc_caching_host,
    &strata_alloc_cuda_async,
    &strata_alloc_offline,
    &strata_alloc_xla,
    NULL,
};

struct strata_allocator {
    const strata_alloc_type *type;
    strata_params *params;
    char *spec;
    uint64_t capacity;
    void *self;
    strata_progress *progress; /* borrowed; NULL: none */
};

const strata_alloc_type *const *strata_alloc_types(void)
{
    return alloc_types;
}

const strata_alloc_type *strata_alloc_type_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; alloc_types[i]; i++)
        if (strcmp(alloc_types[i]->name, name) == 0)
            return alloc_types[i];
    return NULL;
}

char *strata_alloc_type_names(void)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; alloc_types[i]; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", alloc_types[i]->name);
    return g_string_free(s, FALSE);
}

strata_allocator *strata_allocator_new_with_base(const char *spec, const char *base_kv,
                                                 uint64_t capacity, uint64_t alignment,
                                                 GError **err)
{
    char *name = NULL, *kv = NULL;
    strata_split_spec(spec, &name, &kv);
    const strata_alloc_type *type = strata_alloc_type_find(name);
    if (type && !strata_split_spec_check(spec, "allocator", err)) {
        g_free(name);
        return NULL;
    }
    if (type == NULL) {
        char *known = strata_alloc_type_names();
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "unknown allocator '%s' (known: %s)",
                    name ? name : "", known);
        g_free(known);
        g_free(name);
        g_free(kv);
        return NULL;
    }
    if (alignment != 0 && (alignment & (alignment - 1)) != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "allocator %s: alignment must be a power of two, got %" G_GUINT64_FORMAT,
                    type->name, alignment);
        g_free(name);
        g_free(kv);
        return NULL;
    }
    /* The spec's values win over the base's (trace options); each may name a
     * parameter once. */
    char *owner = g_strdup_printf("allocator %s", type->name);
    strata_params *params = strata_params_new(owner, type->params, base_kv, err);
    g_free(owner);
    if (params && !strata_params_set_kv(params, kv, err))
        g_clear_pointer(&params, strata_params_free);
    g_free(name);
    g_free(kv);
    if (params == NULL)
        return NULL;

    strata_alloc_config cfg = {.capacity = capacity, .alignment = alignment, .params = params};
    void *self = type->create(&cfg, err);
    if (self == NULL) {
        g_prefix_error(err, "allocator %s: ", type->name);
        strata_params_free(params);
        return NULL;
    }
    strata_allocator *a = g_new0(strata_allocator, 1);
    a->type = type;
    a->params = params;
    a->capacity = capacity;
    a->self = self;
    char *values = strata_params_to_string(params);
    a->spec = *values ? g_strdup_printf("%s:%s", type->name, values) : g_strdup(type->name);
    g_free(values);
    return a;
}

strata_allocator *strata_allocator_new(const char *spec, uint64_t capacity, uint64_t alignment,
                                       GError **err)
{
    return strata_allocator_new_with_base(spec, NULL, capacity, alignment, err);
}

#ifndef NDEBUG
/* Debug builds: invariants 1-4 of alloc.h over every block, once, as the
 * allocator goes (O(n log n) at destroy, never per op). An offline plan
 * served with lifetimes it was not made for may overlap by design
 * (offline.c), so planning allocators are left to --check. */
static bool allocator_ok(const strata_allocator *a)
{
    if (a->type->plan != NULL)
        return true;
    GError *err = NULL;
    bool ok = strata_allocator_check(a, &err);
    if (!ok)
        g_printerr("strata: %s\n", err->message);
    g_clear_error(&err);
    return ok;
}
#endif

void strata_allocator_free(strata_allocator *a)
{
    if (a == NULL)
        return;
    assert(allocator_ok(a)); /* alloc.h invariants 1-4 */
    a->type->destroy(a->self);
    strata_params_free(a->params);
    g_free(a->spec);
    g_free(a);
}

const char *strata_allocator_name(const strata_allocator *a)
{
    return a->type->name;
}

const char *strata_allocator_spec(const strata_allocator *a)
{
    return a->spec;
}

bool strata_allocator_needs_plan(const strata_allocator *a)
{
    return a->type->plan != NULL;
}

bool strata_allocator_one_program(const strata_allocator *a)
{
    return a->type->one_program;
}

strata_lifetime strata_lifetime_open(uint64_t id, uint64_t size, uint64_t start, bool has_at,
                                     double at_s)
{
    return (strata_lifetime){.id = id, .size = size, .start = start, .end = UINT64_MAX,
                             .has_times = has_at, .t_start = at_s};
}

void strata_lifetime_close(strata_lifetime *l, uint64_t end, bool has_at, double at_s)
{
    l->end = end;
    l->has_times = l->has_times && has_at;
    l->t_end = at_s;
}

gint strata_alloc_cmp_offset(gconstpointer a, gconstpointer b, gpointer user)
{
    (void)user;
    gsize x = GPOINTER_TO_SIZE(a), y = GPOINTER_TO_SIZE(b);
    return x < y ? -1 : x > y ? 1 : 0;
}

bool strata_allocator_plan(strata_allocator *a, const strata_lifetime *l, size_t n, GError **err)
{
    if (a->type->plan == NULL)
        return true;
    return a->type->plan(a->self, l, n, a->progress, err);
}

void strata_allocator_set_progress(strata_allocator *a, strata_progress *progress)
{
    a->progress = progress;
}

bool strata_allocator_alloc(strata_allocator *a, uint64_t id, uint64_t size, uint32_t stream,
                            uint64_t *offset)
{
    return a->type->alloc(a->self, id, size, stream, offset);
}

void strata_allocator_free_block(strata_allocator *a, uint64_t id)
{
    a->type->free(a->self, id);
}

void strata_allocator_release(strata_allocator *a)
{
    if (a->type->release)
        a->type->release(a->self);
}

void strata_allocator_event(strata_allocator *a, bool is_record, uint32_t stream, uint32_t event,
                            uint64_t seq)
{
    if (a->type->event)
        a->type->event(a->self, is_record, stream, event, seq);
}

bool strata_allocator_takes_events(const strata_allocator *a)
{
    return a->type->event != NULL;
}

void strata_allocator_stats(const strata_allocator *a, strata_alloc_stats *out)
{
    a->type->stats(a->self, out);
}

void strata_allocator_walk(const strata_allocator *a, strata_block_visit visit, void *user)
{
    a->type->walk(a->self, visit, user);
}

/* ---- invariant checker ---- */

static void check_collect(const strata_block *block, void *user)
{
    g_array_append_val((GArray *)user, *block);
}

static gint check_cmp_offset(gconstpointer a, gconstpointer b)
{
    const strata_block *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    return 0;
}

void strata_block_visit_fields(strata_block_visit visit, void *user, uint64_t offset, uint64_t size, bool used,
                               uint64_t id, uint64_t requested, uint32_t segment)
{
    strata_block blk = {
        .offset = offset,
        .size = size,
        .state = used ? STRATA_BLOCK_USED : STRATA_BLOCK_FREE,
        .id = id,
        .requested = requested,
        .segment = segment,
    };
    visit(&blk, user);
}

int strata_block_order(uint64_t size_a, uint64_t offset_a, uint64_t size_b, uint64_t offset_b)
{
    if (size_a != size_b)
        return size_a < size_b ? -1 : 1;
    if (offset_a != offset_b)
        return offset_a < offset_b ? -1 : 1;
    return 0;
}

bool strata_allocator_check(const strata_allocator *a, GError **err)
{
    strata_alloc_stats st;
    strata_allocator_stats(a, &st);
    uint64_t space = st.address_space > a->capacity ? st.address_space : a->capacity;
    GArray *blocks = g_array_new(FALSE, FALSE, sizeof(strata_block));
    strata_allocator_walk(a, check_collect, blocks);
    g_array_sort(blocks, check_cmp_offset);

    const char *who = a->type->name;
    bool ok = true;
    uint64_t used = 0, requested = 0, prev_end = 0;
    for (guint i = 0; ok && i < blocks->len; i++) {
        const strata_block *b = &g_array_index(blocks, strata_block, i);
        if (b->size == 0 || b->offset > space || b->size > space - b->offset) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL,
                        "%s: block [%" G_GUINT64_FORMAT ", +%" G_GUINT64_FORMAT
                        ") lies outside the address space of %" G_GUINT64_FORMAT " bytes",
                        who, b->offset, b->size, space);
            ok = false;
        } else if (i > 0 && b->offset < prev_end) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL,
                        "%s: block at %" G_GUINT64_FORMAT " overlaps the block ending at %"
                        G_GUINT64_FORMAT, who, b->offset, prev_end);
            ok = false;
        } else if (b->state == STRATA_BLOCK_USED && b->requested > b->size) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL,
                        "%s: buffer %" G_GUINT64_FORMAT " asked %" G_GUINT64_FORMAT
                        " bytes but holds a block of %" G_GUINT64_FORMAT, who, b->id, b->requested,
                        b->size);
            ok = false;
        }
        if (b->state == STRATA_BLOCK_USED) {
            used += b->size;
            requested += b->requested;
        }
        prev_end = b->offset + b->size;
    }
    g_array_free(blocks, TRUE);
    if (!ok)
        return false;
    if (requested != st.allocated || used != st.allocated + st.internal_waste) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL,
                    "%s: accounting does not add up: live blocks hold %" G_GUINT64_FORMAT
                    " bytes for %" G_GUINT64_FORMAT " requested, stats say allocated %"
                    G_GUINT64_FORMAT " + waste %" G_GUINT64_FORMAT, who, used, requested,
                    st.allocated, st.internal_waste);
        return false;
    }
    if (st.allocated > st.reserved || st.reserved > a->capacity) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL,
                    "%s: expected allocated <= reserved <= capacity, got %" G_GUINT64_FORMAT
                    " <= %" G_GUINT64_FORMAT " <= %" G_GUINT64_FORMAT, who, st.allocated,
                    st.reserved, a->capacity);
        return false;
    }
    if (st.largest_free > st.free_in_reserved || st.free_in_reserved > st.reserved) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL,
                    "%s: expected largest_free <= free_in_reserved <= reserved, got %"
                    G_GUINT64_FORMAT " <= %" G_GUINT64_FORMAT " <= %" G_GUINT64_FORMAT, who,
                    st.largest_free, st.free_in_reserved, st.reserved);
        return false;
    }
    return true;
}
