/*
 * pad.c: `pad` or `pad=RxC`, pads the last two dimensions of every buffer
 * that has a shape to the TPU's memory tile for its dtype, as XLA's TPU
 * layouts do: (8,128) for 32-bit elements, (16,128) for 16-bit, (32,128) for
 * 8-bit (sublanes hold packed narrower values), (64,128) for 4-bit. `pad=RxC`
 * gives the 32-bit tile; narrower dtypes scale its rows by 32/bits, 64-bit
 * dtypes keep them. A rank-1 buffer pads its one dimension to C lanes.
 *
 *   3x100 f32  -> 8x128 x 4 B = 4096 bytes (1200 asked, 2896 added)
 *   3x100 bf16 -> 16x128 x 2 B = 4096 bytes (600 asked, 3496 added)
 *
 * The alloc's size grows by exactly the bytes padding adds (padded shape
 * bytes - shape bytes) and its shape becomes the padded shape, so padding
 * twice adds nothing. The added bytes are reported through the trace: a
 * first pass sums them per memory and the rewritten trace starts with
 * `option padding_bytes=N` (the default memory) and `option
 * padding_bytes.MEM=N` (a named memory), which every consumer's ledger
 * (ledger/ledger.h, in the bind layer) reads into results' padding_bytes. Padding options
 * already in the trace are summed into these, not repeated.
 * Buffers without shape or dtype are left alone.
 *
 * Collectives keep the size relation the trace format requires: the
 * per-device side (all-gather's IN, reduce-scatter's OUT, all-to-all's and
 * collective-permute's IN) is padded by its own shape, and the other side is
 * sized from it, as XLA pads each device's shard: n x the padded shard for
 * all-gather's OUT and reduce-scatter's IN (n the group size over the op's
 * axes), the padded IN for all-to-all's and permute's OUT. That side keeps
 * its shape (its size is no longer the shape's), and its bytes added are
 * counted as padding. Over data:4, all-gather of a 3x100 f32 shard: the shard
 * 1200 -> 4096 B, the gathered 12x100 buffer 4800 -> 4 x 4096 = 16384 B.
 * all-reduce's one buffer pads by its shape.
 *
 * On hardware of several devices (the run expands the trace over them) the
 * options are per memory instance instead: `option padding_bytes.hbm@3=N`
 * for each device's memory that holds a padded buffer (every device of the
 * mesh, or the alloc's device=; host memories per host, summing their
 * devices), so every device's results report their own padding_bytes.
 */
#include <string.h>
#include "core/error.h"
#include "core/units.h"
#include "policy/policy.h"
#include "policy/rewrite.h"
#include "core/mesh.h"

#define PAD_OPTION STRATA_OPTION_PADDING_BYTES

typedef struct pad_policy {
    uint64_t rows, lanes;     /* tile for 32-bit elements */
    const strata_hw *hw;      /* set when the run expands over several devices: padding per memory instance */
    bool mesh;                /* the trace has a mesh (its ops run on every device) */
    GHashTable *placed;       /* alloc op index -> device + 1, for allocs with device= */
    GString *instance;        /* scratch for a memory instance's name */
    GHashTable *added;        /* option key -> uint64 * (bytes added per memory) */
    GPtrArray *keys;          /* option keys in first-seen order */
    GHashTable *sized;        /* alloc op index -> uint64 * (size set by a collective) */
    bool options_emitted;
} pad_policy;

static uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

/* Padded shape and the bytes it adds (0: nothing to pad). False when the
 * padded size does not fit in 64 bits. */
static bool pad_shape(const pad_policy *p, const strata_op *op, uint64_t *shape, uint64_t *added)
{
    unsigned bits = strata_dtype_bits(op->dtype);
    *added = 0;
    if (op->n_dims == 0 || bits == 0)
        return true;
    uint64_t rows = bits >= 32 ? p->rows : p->rows * (32 / bits);
    uint64_t before = 1, after = 1, bytes_after = 0;
    for (uint32_t i = 0; i < op->n_dims; i++) {
        shape[i] = op->shape[i];
        if (!g_uint64_checked_mul(&before, before, op->shape[i]))
            return false;
    }
    if (shape[op->n_dims - 1] > UINT64_MAX - p->lanes ||
        (op->n_dims >= 2 && shape[op->n_dims - 2] > UINT64_MAX - rows))
        return false;
    shape[op->n_dims - 1] = round_up(shape[op->n_dims - 1], p->lanes);
    if (op->n_dims >= 2)
        shape[op->n_dims - 2] = round_up(shape[op->n_dims - 2], rows);
    for (uint32_t i = 0; i < op->n_dims; i++)
        if (!g_uint64_checked_mul(&after, after, shape[i]))
            return false;
    if (!g_uint64_checked_mul(&bytes_after, after - before, bits))
        return false;
    *added = bytes_after / 8;
    return op->size <= UINT64_MAX - *added;
}

static bool pad_overflow(const char *origin, const strata_op *op, GError **err)
{
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "%s:%" G_GUINT64_FORMAT ": policy pad: the padded size of '%s' does not fit in 64 bits", origin,
                op->line, op->name);
    return false;
}

static char *option_key(const char *memory)
{
    return memory ? g_strconcat(PAD_OPTION ".", memory, NULL) : g_strdup(PAD_OPTION);
}

/* Adds bytes to the sum under key, or takes them back. */
static void add_bytes(pad_policy *p, const char *key, uint64_t bytes, bool add)
{
    uint64_t *v = g_hash_table_lookup(p->added, key);
    if (!v) {
        v = g_new0(uint64_t, 1);
        char *k = g_strdup(key);
        g_hash_table_insert(p->added, k, v);
        g_ptr_array_add(p->keys, k);
    }
    *v = add ? *v + bytes : *v - bytes;
}

/* The instance of `memory` (NULL: the default) on device d, as the SPMD
 * expansion places it (strata_hw_instance_name). */
static const char *memory_instance(pad_policy *p, const char *memory, uint32_t d)
{
    return strata_hw_instance_name(p->hw, memory, d, false, p->instance);
}

/* Padding of `bytes` added (or taken back) to a buffer in `memory` that
 * the alloc at op index `at` makes: counted once for the program, or, when
 * the run expands over several devices, on every memory instance holding a
 * copy (every device of the mesh, or the alloc's device=; device 0 without
 * a mesh), so each device's figure is its own. */
static void count_padding(pad_policy *p, const char *memory, uint64_t at, uint64_t bytes, bool add)
{
    if (!p->hw) {
        char *key = option_key(memory);
        add_bytes(p, key, bytes, add);
        g_free(key);
        return;
    }
    guint placed = GPOINTER_TO_UINT(g_hash_table_lookup(p->placed, &at));
    uint32_t n = strata_hw_devices(p->hw), first = placed ? placed - 1 : 0, end = placed ? placed : p->mesh ? n : 1;
    for (uint32_t d = first; d < end && d < n; d++) {
        char *key = option_key(memory_instance(p, memory, d));
        add_bytes(p, key, bytes, add);
        g_free(key);
    }
}

static bool is_pad_option(const strata_op *op)
{
    return op->kind == STRATA_OP_OPTION &&
           (strcmp(op->name, PAD_OPTION) == 0 || g_str_has_prefix(op->name, PAD_OPTION "."));
}

/* The size a buffer instance has after padding: set by a collective, else
 * its shape padded. False on overflow. */
static bool padded_size(const pad_policy *p, const strata_buffer_info *b, uint64_t *size)
{
    const uint64_t *set = g_hash_table_lookup(p->sized, &b->alloc_index);
    if (set) {
        *size = *set;
        return true;
    }
    strata_op op = strata_op_make(STRATA_OP_ALLOC, NULL, b->name);
    op.size = b->size;
    op.dtype = b->dtype;
    op.n_dims = b->n_dims;
    memcpy(op.shape, b->shape, sizeof op.shape);
    uint64_t shape[STRATA_MAX_DIMS], added;
    if (!pad_shape(p, &op, shape, &added))
        return false;
    *size = b->size + added;
    return true;
}

/* A collective's size relation kept after padding: the per-device side
 * (all-gather's IN, reduce-scatter's OUT, all-to-all's and permute's IN)
 * keeps its own padding and the other side is sized from it, n times it for
 * all-gather's OUT and reduce-scatter's IN. Ops the checker will reject
 * (no mesh, unknown buffers or axes) are left to it. */
static bool size_collective(pad_policy *p, const strata_op *op, const strata_mesh *mesh,
                            const strata_buffer_table *buffers)
{
    uint32_t mask = 0;
    if (op->kind == STRATA_OP_ALL_REDUCE || !mesh || !strata_mesh_axes(mesh, op->axis ? op->axis : "", &mask, NULL))
        return true;
    const strata_buffer_info *out = strata_buffer_table_lookup(buffers, op->name);
    const strata_buffer_info *in = strata_buffer_table_lookup(buffers, op->src ? op->src : "");
    if (!out || !in || out == in)
        return true;
    const strata_buffer_info *shard = op->kind == STRATA_OP_REDUCE_SCATTER ? out : in;
    const strata_buffer_info *whole = shard == out ? in : out;
    uint64_t n = op->kind == STRATA_OP_ALL_GATHER || op->kind == STRATA_OP_REDUCE_SCATTER
                     ? strata_mesh_group_size(mesh, mask)
                     : 1;
    uint64_t target, before;
    if (!padded_size(p, shard, &target) || !g_uint64_checked_mul(&target, target, n) ||
        !padded_size(p, whole, &before))
        return false;
    if (target < whole->size)
        return true; /* the sizes disagree already: the checker reports it */
    count_padding(p, whole->memory, whole->alloc_index, before - whole->size, false);
    count_padding(p, whole->memory, whole->alloc_index, target - whole->size, true);
    uint64_t *k = g_new(uint64_t, 1), *v = g_new(uint64_t, 1);
    *k = whole->alloc_index;
    *v = target;
    g_hash_table_replace(p->sized, k, v);
    return true;
}
/* One planning step: padding options summed, allocs' padding counted, the
 * mesh read, collectives' sizes set. */
static bool plan_op(pad_policy *p, uint64_t index, const strata_op *op, strata_mesh **mesh,
                    const strata_buffer_table *buffers, const char *origin, GError **err)
{
    uint64_t shape[STRATA_MAX_DIMS], added;
    if (is_pad_option(op)) {
        uint64_t v;
        if (!strata_parse_size(op->value, &v, err)) {
            g_prefix_error(err, "%s:%" G_GUINT64_FORMAT ": option %s: ", origin, op->line, op->name);
            return false;
        }
        add_bytes(p, op->name, v, true);
    } else if (op->kind == STRATA_OP_OPTION && strcmp(op->name, "mesh") == 0) {
        strata_mesh_free(*mesh);
        *mesh = strata_mesh_parse(op->value ? op->value : "", NULL);
        p->mesh = *mesh != NULL;
    } else if (op->kind == STRATA_OP_ALLOC) {
        if (!pad_shape(p, op, shape, &added))
            return pad_overflow(origin, op, err);
        if (op->has_device) {
            uint64_t *k = g_new(uint64_t, 1);
            *k = index;
            g_hash_table_replace(p->placed, k, GUINT_TO_POINTER(op->device + 1));
        }
        if (added)
            count_padding(p, op->memory, index, added, true);
    } else if (strata_op_kind_is_collective(op->kind) && !size_collective(p, op, *mesh, buffers)) {
        return pad_overflow(origin, op, err);
    }
    return true;
}

static bool pad_plan(void *self, strata_source *in, GError **err)
{
    pad_policy *p = self;
    const strata_op *op;
    int r;
    strata_mesh *mesh = NULL;
    strata_buffer_table *buffers = strata_buffer_table_new();
    bool ok = true;
    for (uint64_t index = 0; ok && (r = strata_source_next(in, &op, err)) == 1; index++) {
        ok = plan_op(p, index, op, &mesh, buffers, strata_source_origin(in), err);
        strata_buffer_table_feed(buffers, index, op);
    }
    strata_mesh_free(mesh);
    strata_buffer_table_free(buffers);
    return ok && r == 0;
}

static void emit_options(pad_policy *p, strata_rewrite_queue *q)
{
    p->options_emitted = true;
    for (guint i = 0; i < p->keys->len; i++) {
        const char *key = g_ptr_array_index(p->keys, i);
        const uint64_t *v = g_hash_table_lookup(p->added, key);
        if (*v == 0)
            continue;
        char value[32];
        g_snprintf(value, sizeof value, "%" G_GUINT64_FORMAT, *v);
        strata_op op = strata_op_make(STRATA_OP_OPTION, NULL, key);
        op.value = value;
        strata_rewrite_emit(q, &op);
    }
}

static bool pad_map(void *self, uint64_t index, const strata_op *op, strata_rewrite_queue *q, GError **err)
{
    pad_policy *p = self;
    if (is_pad_option(op))
        return true; /* summed into ours */
    if (op->kind != STRATA_OP_OPTION && !p->options_emitted)
        emit_options(p, q);
    uint64_t shape[STRATA_MAX_DIMS];
    uint64_t added = 0;
    if (op->kind == STRATA_OP_ALLOC && !pad_shape(p, op, shape, &added))
        return pad_overflow("pad", op, err);
    const uint64_t *set = op->kind == STRATA_OP_ALLOC ? g_hash_table_lookup(p->sized, &index) : NULL;
    if (!added && (!set || *set == op->size)) {
        strata_rewrite_emit(q, op);
        return true;
    }
    strata_op padded = *op;
    padded.size = set ? *set : op->size + added;
    if (!set)
        memcpy(padded.shape, shape, sizeof shape);
    strata_rewrite_emit(q, &padded);
    return true;
}

static bool pad_finish(void *self, strata_rewrite_queue *q, GError **err)
{
    (void)err;
    pad_policy *p = self;
    if (!p->options_emitted)
        emit_options(p, q);
    return true;
}

static void pad_reset(void *self) { ((pad_policy *)self)->options_emitted = false; }

static void pad_destroy(void *self)
{
    pad_policy *p = self;
    g_hash_table_destroy(p->added);
    g_ptr_array_free(p->keys, TRUE);
    g_hash_table_destroy(p->sized);
    g_hash_table_destroy(p->placed);
    g_string_free(p->instance, TRUE);
    g_free(p);
}

static const strata_rewrite_ops pad_ops = {pad_plan, pad_map, pad_finish, pad_reset, pad_destroy};

bool strata_pad_parse_tile(const char *arg, uint64_t *rows, uint64_t *lanes, GError **err)
{
    *rows = 8;
    *lanes = 128;
    if (!arg)
        return true;
    char **parts = g_strsplit(arg, "x", 3);
    bool ok = g_strv_length(parts) == 2 && strata_parse_u64(parts[0], rows, NULL) &&
              strata_parse_u64(parts[1], lanes, NULL) && *rows > 0 && *lanes > 0 && *rows <= (1u << 20) &&
              *lanes <= (1u << 20);
    g_strfreev(parts);
    if (!ok)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "policy pad: expected a tile ROWSxLANES such as 8x128, got '%s'", arg);
    return ok;
}

static const strata_param_def pad_params[] = {
    {"tile", STRATA_PARAM_STRING, NULL, "ROWSxLANES of the tile for 32-bit types; unset: 8x128", NULL},
    {NULL, 0, NULL, NULL, NULL},
};

static strata_source *pad_apply(strata_source *in, const strata_params *params, const strata_hw *hw,
                                GError **err)
{
    pad_policy *p = g_new0(pad_policy, 1);
    p->hw = hw && strata_hw_devices(hw) > 1 ? hw : NULL;
    if (!strata_pad_parse_tile(strata_params_string(params, "tile"), &p->rows, &p->lanes, err)) {
        g_free(p);
        strata_source_free(in);
        return NULL;
    }
    p->added = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    p->keys = g_ptr_array_new_with_free_func(g_free);
    p->sized = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    p->placed = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    p->instance = g_string_new(NULL);
    return strata_rewrite_source_new(in, &pad_ops, p, "pad", err);
}

const strata_policy_type strata_policy_pad = {
    .name = "pad",
    .summary = "pad, pad=RxC: pad the last two dims of every shaped buffer to the TPU tile ((8,128) for 32-bit, "
    "(16,128) 16-bit, (32,128) 8-bit); added bytes reported",
    .arg_required = false,
    .params = pad_params,
    .arg = "tile",
    .apply = pad_apply,
};
