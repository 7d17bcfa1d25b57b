/*
 * nbuffer.c: `nbuffer=N`, circular buffering of streamed tiles: N slots
 * allocated once and reused in turn, each filled on a DMA stream as soon as
 * its previous tile is done with, so that up to N-1 fills run ahead of the
 * compute (N=1: none, N=2: double buffering, N=3: triple).
 *
 * A tile is a buffer whose first use after its alloc is a copy into it (the
 * fill), that nothing else writes, that the trace frees, and whose fill
 * reads a source not written since the tile was allocated. Tiles with the
 * same name stem (the name without trailing digits), memory and size form a
 * stream of tiles; a stream of at least two tiles is rewritten when, for
 * every tile i >= N, its fill comes after the free of tile i-N in the trace:
 *   at the first tile's alloc   alloc nbG.0 ... alloc nbG.N-1 (the slots)
 *   tile i -> slot s = i mod N: every use names nbG.s; its alloc is dropped;
 *   its fill (stream S)         [wait nbG.s.free stream=nbuffer]  (i >= N)
 *                               copy nbG.s SRC stream=nbuffer
 *                               record nbG.s.full stream=nbuffer
 *                               wait nbG.s.full stream=S
 *   its free (stream R)         record nbG.s.free stream=R
 *   after the last free         free nbG.0 ... free nbG.N-1
 * The nbuffer stream runs ahead of S by up to N tiles: it blocks only on a
 * slot still in use. Memory cost: N slots live for the whole stream.
 */
#include <string.h>
#include "core/error.h"
#include "core/units.h"
#include "policy/policy.h"
#include "policy/rewrite.h"

#define NBUFFER_STREAM "nbuffer"

typedef struct tile {
    uint64_t id;
    uint64_t fill;        /* index of the fill copy (UINT64_MAX: none yet) */
    char *fill_stream;
    bool ok;              /* still a candidate */
    uint64_t src_written; /* the fill source's last write index + 1 at the fill */
} tile;

typedef struct tile_group {
    GArray *tiles;        /* tile */
    bool ok;
} tile_group;

typedef struct nbuffer_policy {
    uint32_t slots;
    strata_rewrite_plan *plan;
    GHashTable *slot_of;  /* instance id + 1 -> slot name (owned) */
    strata_buffer_table *buffers;
} nbuffer_policy;

static void tile_clear(gpointer p) { g_free(((tile *)p)->fill_stream); }

static void group_free(gpointer p)
{
    tile_group *g = p;
    g_array_free(g->tiles, TRUE);
    g_free(g);
}

static char *group_key(const strata_buffer_info *b)
{
    size_t n = strlen(b->name);
    while (n > 0 && g_ascii_isdigit(b->name[n - 1]))
        n--;
    return g_strdup_printf("%.*s|%s|%" G_GUINT64_FORMAT, (int)n, b->name, b->memory ? b->memory : "",
                           b->size);
}

#define KEY(id) GSIZE_TO_POINTER((gsize)(id) + 1)

static void plan_group(nbuffer_policy *nb, const tile_group *g, uint32_t gi, const strata_buffer_table *t,
                       GHashTable *fills)
{
    uint32_t n = nb->slots;
    const tile *first = &g_array_index(g->tiles, tile, 0);
    const strata_buffer_info *b0 = strata_buffer_table_get(t, first->id);
    char name[64], ev[80];
    for (uint32_t s = 0; s < n; s++) {
        g_snprintf(name, sizeof name, "nb%u.%u", gi, s);
        strata_op a = strata_op_alloc_of(b0, b0->stream, name, b0->memory);
        strata_rewrite_plan_before(nb->plan, b0->alloc_index, &a);
    }
    uint64_t last_free = 0;
    const char *last_stream = NULL;
    for (guint i = 0; i < g->tiles->len; i++) {
        const tile *tl = &g_array_index(g->tiles, tile, i);
        const strata_buffer_info *b = strata_buffer_table_get(t, tl->id);
        uint32_t s = i % n;
        g_snprintf(name, sizeof name, "nb%u.%u", gi, s);
        g_hash_table_insert(nb->slot_of, KEY(tl->id), g_strdup(name));
        strata_rewrite_plan_drop(nb->plan, b->alloc_index);
        const strata_op *fill = g_hash_table_lookup(fills, KEY(tl->id));
        if (i >= n) {
            g_snprintf(ev, sizeof ev, "nb%u.%u.free", gi, s);
            strata_op w = strata_op_make(STRATA_OP_WAIT, NBUFFER_STREAM, ev);
            strata_rewrite_plan_before(nb->plan, tl->fill, &w);
        }
        strata_op c = *fill;
        c.stream = NBUFFER_STREAM;
        c.name = name;
        c.line = 0;
        strata_rewrite_plan_before(nb->plan, tl->fill, &c);
        g_snprintf(ev, sizeof ev, "nb%u.%u.full", gi, s);
        strata_op r = strata_op_make(STRATA_OP_RECORD, NBUFFER_STREAM, ev);
        strata_rewrite_plan_before(nb->plan, tl->fill, &r);
        strata_op w = strata_op_make(STRATA_OP_WAIT, tl->fill_stream, ev);
        strata_rewrite_plan_before(nb->plan, tl->fill, &w);
        strata_rewrite_plan_drop(nb->plan, tl->fill);
        g_snprintf(ev, sizeof ev, "nb%u.%u.free", gi, s);
        strata_op rf = strata_op_make(STRATA_OP_RECORD, NULL, ev);
        rf.stream = b->stream; /* the tile's own stream (where it was allocated) */
        strata_rewrite_plan_drop(nb->plan, b->free_index);
        strata_rewrite_plan_before(nb->plan, b->free_index, &rf);
        if (b->free_index >= last_free) {
            last_free = b->free_index;
            last_stream = b->stream;
        }
    }
    for (uint32_t s = 0; s < n; s++) {
        g_snprintf(name, sizeof name, "nb%u.%u", gi, s);
        strata_op f = strata_op_make(STRATA_OP_FREE, last_stream, name);
        strata_rewrite_plan_after(nb->plan, last_free, &f);
    }
}

static void owned_op_free(gpointer p)
{
    strata_op_clear(p);
    g_free(p);
}

/* Where the planning pass is, for note_operand(). */
typedef struct operand_at {
    strata_buffer_table *t;
    GHashTable *tiles, *index_in_group, *last_write, *fills;
    const strata_op *op;
    uint64_t index;
} operand_at;

/* The tile of buffer b, or NULL. */
static tile *tile_of(const operand_at *at, const strata_buffer_info *b)
{
    tile_group *g = g_hash_table_lookup(at->tiles, KEY(b->id));
    if (!g)
        return NULL;
    return &g_array_index(g->tiles, tile, GPOINTER_TO_SIZE(g_hash_table_lookup(at->index_in_group, KEY(b->id))) - 1);
}

/* One operand of the op at `ud`: a tile's first use must be a copy filling
 * it from a source written before the tile was allocated, and nothing may
 * write the tile after; every write is remembered. */
static void note_operand(void *ud, const char *name, bool w)
{
    const operand_at *at = ud;
    const strata_op *op = at->op;
    const strata_buffer_info *b = strata_buffer_table_lookup(at->t, name);
    if (!b)
        return;
    tile *tl = tile_of(at, b);
    if (tl && tl->ok) {
        if (tl->fill == UINT64_MAX) {
            if (op->kind == STRATA_OP_COPY && w) {
                const strata_buffer_info *s = strata_buffer_table_lookup(at->t, op->src);
                uint64_t sw = s ? GPOINTER_TO_SIZE(g_hash_table_lookup(at->last_write, KEY(s->id))) : 0;
                tl->fill = at->index;
                tl->fill_stream = g_strdup(op->stream);
                tl->ok = s && sw <= b->alloc_index;
                strata_op *copy = g_new(strata_op, 1);
                strata_op_copy(copy, op);
                g_hash_table_insert(at->fills, KEY(b->id), copy);
            } else {
                tl->ok = false;
            }
        } else if (w) {
            tl->ok = false;
        }
    }
    if (w)
        g_hash_table_insert(at->last_write, KEY(b->id), GSIZE_TO_POINTER((gsize)at->index + 1));
}

static bool nbuffer_plan(void *self, strata_source *in, GError **err)
{
    nbuffer_policy *nb = self;
    strata_buffer_table *t = strata_buffer_table_new();
    GHashTable *tiles = g_hash_table_new(g_direct_hash, g_direct_equal);        /* id -> tile_group */
    GHashTable *index_in_group = g_hash_table_new(g_direct_hash, g_direct_equal); /* id -> position + 1 */
    GHashTable *groups = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, group_free);
    GPtrArray *group_order = g_ptr_array_new();
    GHashTable *last_write = g_hash_table_new(g_direct_hash, g_direct_equal);   /* id -> index + 1 */
    GHashTable *fills = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, owned_op_free);
    uint64_t index = 0;
    const strata_op *op;
    int r;
    while ((r = strata_source_next(in, &op, err)) == 1) {
        operand_at at = {t, tiles, index_in_group, last_write, fills, op, index};
        strata_op_operands(op, note_operand, &at);
        const strata_buffer_info *b = strata_buffer_table_feed(t, index, op);
        if (op->kind == STRATA_OP_ALLOC && b) {
            char *key = group_key(b);
            tile_group *g = g_hash_table_lookup(groups, key);
            if (!g) {
                g = g_new0(tile_group, 1);
                g->tiles = g_array_new(FALSE, TRUE, sizeof(tile));
                g_array_set_clear_func(g->tiles, tile_clear);
                g->ok = true;
                g_hash_table_insert(groups, key, g);
                g_ptr_array_add(group_order, g);
            } else {
                g_free(key);
            }
            tile tl = {b->id, UINT64_MAX, NULL, true, 0};
            g_array_append_val(g->tiles, tl);
            g_hash_table_insert(tiles, KEY(b->id), g);
            g_hash_table_insert(index_in_group, KEY(b->id), GSIZE_TO_POINTER((gsize)g->tiles->len));
        }
        index++;
    }
    if (r == 0) {
        uint32_t gi = 0;
        for (guint k = 0; k < group_order->len; k++) {
            tile_group *g = g_ptr_array_index(group_order, k);
            bool ok = g->tiles->len >= 2;
            for (guint i = 0; ok && i < g->tiles->len; i++) {
                const tile *tl = &g_array_index(g->tiles, tile, i);
                const strata_buffer_info *b = strata_buffer_table_get(t, tl->id);
                ok = tl->ok && tl->fill != UINT64_MAX && b->free_index != UINT64_MAX;
                if (ok && i >= nb->slots) {
                    const tile *prev = &g_array_index(g->tiles, tile, i - nb->slots);
                    ok = tl->fill > strata_buffer_table_get(t, prev->id)->free_index;
                }
            }
            if (ok)
                plan_group(nb, g, gi++, t, fills);
        }
    }
    g_ptr_array_free(group_order, TRUE);
    g_hash_table_destroy(groups);
    g_hash_table_destroy(tiles);
    g_hash_table_destroy(index_in_group);
    g_hash_table_destroy(last_write);
    g_hash_table_destroy(fills);
    strata_buffer_table_free(t);
    return r == 0;
}

/* For rename_to_slot(): the policy and the owned op being rewritten. */
typedef struct slot_at {
    const nbuffer_policy *nb;
    strata_op *out;
} slot_at;

/* A tile's name becomes its slot's. */
static void rename_to_slot(void *ud, const char *name, bool writes)
{
    (void)writes;
    const slot_at *at = ud;
    const strata_buffer_info *b = strata_buffer_table_lookup(at->nb->buffers, name);
    const char *slot = b ? g_hash_table_lookup(at->nb->slot_of, KEY(b->id)) : NULL;
    if (slot)
        strata_op_rename_buffer(at->out, name, slot);
}

static bool nbuffer_map(void *self, uint64_t index, const strata_op *op, strata_rewrite_queue *q, GError **err)
{
    (void)err;
    nbuffer_policy *nb = self;
    strata_op out;
    strata_op_copy(&out, op);
    slot_at at = {nb, &out};
    if (op->kind == STRATA_OP_FREE)
        rename_to_slot(&at, op->name, false);
    else
        strata_op_operands(op, rename_to_slot, &at);
    /* A free replaced by `record ...free`: that record goes on the free's stream. */
    strata_rewrite_plan_emit(nb->plan, index, &out, q);
    strata_op_clear(&out);
    strata_buffer_table_feed(nb->buffers, index, op);
    return true;
}

static void nbuffer_reset(void *self) { strata_buffer_table_reset(((nbuffer_policy *)self)->buffers); }

static void nbuffer_destroy(void *self)
{
    nbuffer_policy *nb = self;
    strata_rewrite_plan_free(nb->plan);
    g_hash_table_destroy(nb->slot_of);
    strata_buffer_table_free(nb->buffers);
    g_free(nb);
}

static const strata_rewrite_ops nbuffer_ops = {nbuffer_plan, nbuffer_map, NULL, nbuffer_reset, nbuffer_destroy};

static const strata_param_def nbuffer_params[] = {
    {"slots", STRATA_PARAM_INT, NULL, "buffers reused in turn, 1 to 64 (2 = double buffering)", NULL},
    {NULL, 0, NULL, NULL, NULL},
};

static strata_source *nbuffer_apply(strata_source *in, const strata_params *params, const strata_hw *hw,
                                    GError **err)
{
    (void)hw;
    int64_t n = strata_params_int(params, "slots");
    if (n < 1 || n > 64) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "policy nbuffer: expected a number of slots N from 1 to 64, got %" G_GINT64_FORMAT, n);
        strata_source_free(in);
        return NULL;
    }
    nbuffer_policy *nb = g_new0(nbuffer_policy, 1);
    nb->slots = (uint32_t)n;
    nb->plan = strata_rewrite_plan_new();
    nb->slot_of = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    nb->buffers = strata_buffer_table_new();
    return strata_rewrite_source_new(in, &nbuffer_ops, nb, "nbuffer", err);
}

const strata_policy_type strata_policy_nbuffer = {
    .name = "nbuffer",
    .summary = "nbuffer=N: circular buffering of streamed tiles: N slots reused in turn, filled ahead on stream "
    "'nbuffer' (2 = double buffering)",
    .arg_required = true,
    .params = nbuffer_params,
    .arg = "slots",
    .apply = nbuffer_apply,
};
