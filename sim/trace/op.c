/*
 * op.c: names of op kinds, tags and dtypes, and deep copy / equality of ops.
 *
 * Each enum has one static table indexed by its value, so a name and its
 * value cannot drift apart; lookups by name walk the table (they are short).
 *
 * Invariants:
 *  1. kind_names[k], tag_names[t] and dtype_table[d] exist for every value
 *     below the enum's __COUNT (checked by the static asserts below).
 *  2. strata_op_copy() leaves dst owning every string and array it points at;
 *     strata_op_clear() releases exactly those and zeroes the op.
 *  3. strata_op_equal() compares every field except `line` (the position in
 *     a file is not part of what the op means), strings by content.
 */
#include "trace/op.h"
#include <string.h>

static const char *const kind_names[] = {
    [STRATA_OP_ALLOC] = "alloc",     [STRATA_OP_FREE] = "free",    [STRATA_OP_COPY] = "copy",
    [STRATA_OP_COMPUTE] = "compute", [STRATA_OP_RECORD] = "record", [STRATA_OP_WAIT] = "wait",
    [STRATA_OP_RELEASE] = "release", [STRATA_OP_OPTION] = "option",
    [STRATA_OP_ALL_REDUCE] = "all-reduce", [STRATA_OP_ALL_GATHER] = "all-gather",
    [STRATA_OP_REDUCE_SCATTER] = "reduce-scatter", [STRATA_OP_ALL_TO_ALL] = "all-to-all",
    [STRATA_OP_COLLECTIVE_PERMUTE] = "collective-permute",
};
_Static_assert(G_N_ELEMENTS(kind_names) == STRATA_OP__COUNT, "one name per op kind");

static const char *const algo_names[] = {
    [STRATA_ALGO_DEFAULT] = "", [STRATA_ALGO_RING] = "ring", [STRATA_ALGO_BIDIR_RING] = "bidir-ring",
    [STRATA_ALGO_TREE] = "tree", [STRATA_ALGO_DIRECT] = "direct", [STRATA_ALGO_TORUS] = "torus",
    [STRATA_ALGO_NCCL_RING] = "nccl-ring",
};
_Static_assert(G_N_ELEMENTS(algo_names) == STRATA_ALGO__COUNT, "one name per algorithm");

static const char *const tag_names[] = {
    [STRATA_TAG_NONE] = "",
    [STRATA_TAG_PARAM] = "param",
    [STRATA_TAG_INPUT] = "input",
    [STRATA_TAG_OUTPUT] = "output",
    [STRATA_TAG_ACTIVATION] = "activation",
    [STRATA_TAG_OPTSTATE] = "optstate",
    [STRATA_TAG_GRAD] = "grad",
    [STRATA_TAG_TEMP] = "temp",
};
_Static_assert(G_N_ELEMENTS(tag_names) == STRATA_TAG__COUNT, "one name per tag");

typedef struct dtype_info {
    const char *name;
    unsigned bits;
} dtype_info;

static const dtype_info dtype_table[] = {
    [STRATA_DTYPE_NONE] = {"", 0},       [STRATA_DTYPE_F64] = {"f64", 64},
    [STRATA_DTYPE_F32] = {"f32", 32},    [STRATA_DTYPE_TF32] = {"tf32", 32},
    [STRATA_DTYPE_BF16] = {"bf16", 16},  [STRATA_DTYPE_F16] = {"f16", 16},
    [STRATA_DTYPE_F8] = {"f8", 8},       [STRATA_DTYPE_INT64] = {"int64", 64},
    [STRATA_DTYPE_INT32] = {"int32", 32}, [STRATA_DTYPE_INT16] = {"int16", 16},
    [STRATA_DTYPE_INT8] = {"int8", 8},   [STRATA_DTYPE_UINT8] = {"uint8", 8},
    [STRATA_DTYPE_INT4] = {"int4", 4},   [STRATA_DTYPE_BOOL] = {"bool", 8},
};
_Static_assert(G_N_ELEMENTS(dtype_table) == STRATA_DTYPE__COUNT, "one entry per dtype");

const char *strata_op_kind_name(strata_op_kind kind)
{
    return (unsigned)kind < STRATA_OP__COUNT ? kind_names[kind] : "?";
}

const char *strata_algo_name(strata_algo algo)
{
    return (unsigned)algo < STRATA_ALGO__COUNT ? algo_names[algo] : "";
}

/* Index of `name` in names[from..count), or -1. The reader looks up a
 * kind (and often a tag and a dtype) on every line. */
static int name_index(const char *const *names, unsigned from, unsigned count, const char *name)
{
    for (unsigned i = from; i < count; i++)
        if (strata_same_name(names[i], name))
            return (int)i;
    return -1;
}

bool strata_algo_from_name(const char *name, strata_algo *algo)
{
    int i = name_index(algo_names, 1, STRATA_ALGO__COUNT, name);
    if (i >= 0)
        *algo = (strata_algo)i;
    return i >= 0;
}

const char *strata_tag_name(strata_tag tag)
{
    return (unsigned)tag < STRATA_TAG__COUNT ? tag_names[tag] : "";
}

/* Runs on every line: the kinds are told apart by their length, then by at
 * most three compares of that constant length (inlined, not calls). */
bool strata_op_kind_from_name(const char *name, strata_op_kind *kind)
{
#define IS(k, text) (memcmp(name, text, sizeof text - 1) == 0 ? (*kind = (k), true) : false)
    size_t len = 0;
    while (len < 19 && name[len])
        len++;
    switch (len) {
    case 4: return IS(STRATA_OP_FREE, "free") || IS(STRATA_OP_COPY, "copy") || IS(STRATA_OP_WAIT, "wait");
    case 5: return IS(STRATA_OP_ALLOC, "alloc");
    case 6: return IS(STRATA_OP_RECORD, "record") || IS(STRATA_OP_OPTION, "option");
    case 7: return IS(STRATA_OP_COMPUTE, "compute") || IS(STRATA_OP_RELEASE, "release");
    case 10:
        return IS(STRATA_OP_ALL_REDUCE, "all-reduce") || IS(STRATA_OP_ALL_GATHER, "all-gather") ||
               IS(STRATA_OP_ALL_TO_ALL, "all-to-all");
    case 14: return IS(STRATA_OP_REDUCE_SCATTER, "reduce-scatter");
    case 18: return IS(STRATA_OP_COLLECTIVE_PERMUTE, "collective-permute");
    default: return false;
    }
#undef IS
}

bool strata_tag_from_name(const char *name, strata_tag *tag)
{
    int i = name_index(tag_names, 1, STRATA_TAG__COUNT, name);
    if (i >= 0)
        *tag = (strata_tag)i;
    return i >= 0;
}

const char *strata_dtype_name(strata_dtype dtype)
{
    return (unsigned)dtype < STRATA_DTYPE__COUNT ? dtype_table[dtype].name : "";
}

bool strata_dtype_from_name(const char *name, strata_dtype *dtype)
{
    for (unsigned d = 1; d < STRATA_DTYPE__COUNT; d++) {
        if (strcmp(dtype_table[d].name, name) == 0) {
            *dtype = (strata_dtype)d;
            return true;
        }
    }
    return false;
}

unsigned strata_dtype_bits(strata_dtype dtype)
{
    return (unsigned)dtype < STRATA_DTYPE__COUNT ? dtype_table[dtype].bits : 0;
}

static const char *const *copy_names(const char *const *names, uint32_t n)
{
    if (n == 0 || names == NULL)
        return NULL;
    char **out = g_new0(char *, n + 1);
    for (uint32_t i = 0; i < n; i++)
        out[i] = g_strdup(names[i]);
    return (const char *const *)out;
}

void strata_op_copy(strata_op *dst, const strata_op *src)
{
    *dst = *src;
    dst->stream = g_strdup(src->stream ? src->stream : STRATA_DEFAULT_STREAM);
    dst->name = g_strdup(src->name);
    dst->src = g_strdup(src->src);
    dst->value = g_strdup(src->value);
    dst->memory = g_strdup(src->memory);
    dst->unit = g_strdup(src->unit);
    dst->note = g_strdup(src->note);
    dst->axis = g_strdup(src->axis);
    dst->ins = copy_names(src->ins, src->n_ins);
    dst->outs = copy_names(src->outs, src->n_outs);
    dst->donates = copy_names(src->donates, src->n_donates);
    if (!dst->ins)
        dst->n_ins = 0;
    if (!dst->outs)
        dst->n_outs = 0;
    if (!dst->donates)
        dst->n_donates = 0;
}

void strata_op_clear(strata_op *op)
{
    if (op == NULL)
        return;
    g_free((char *)op->stream);
    g_free((char *)op->name);
    g_free((char *)op->src);
    g_free((char *)op->value);
    g_free((char *)op->memory);
    g_free((char *)op->unit);
    g_free((char *)op->note);
    g_free((char *)op->axis);
    g_strfreev((char **)op->ins);
    g_strfreev((char **)op->outs);
    g_strfreev((char **)op->donates);
    memset(op, 0, sizeof *op);
}

static bool names_equal(const char *const *a, uint32_t na, const char *const *b, uint32_t nb)
{
    if (na != nb)
        return false;
    for (uint32_t i = 0; i < na; i++)
        if (g_strcmp0(a[i], b[i]) != 0)
            return false;
    return true;
}

bool strata_op_equal(const strata_op *a, const strata_op *b)
{
    const char *sa = a->stream ? a->stream : STRATA_DEFAULT_STREAM;
    const char *sb = b->stream ? b->stream : STRATA_DEFAULT_STREAM;
    if (a->kind != b->kind || strcmp(sa, sb) != 0 || g_strcmp0(a->name, b->name) != 0 ||
        g_strcmp0(a->src, b->src) != 0 || g_strcmp0(a->value, b->value) != 0 ||
        g_strcmp0(a->memory, b->memory) != 0 || g_strcmp0(a->unit, b->unit) != 0 ||
        g_strcmp0(a->note, b->note) != 0 || g_strcmp0(a->axis, b->axis) != 0)
        return false;
    if (a->algo != b->algo || a->shift != b->shift || a->has_device != b->has_device ||
        (a->has_device && a->device != b->device))
        return false;
    if (a->size != b->size || a->has_bytes != b->has_bytes || a->bytes != b->bytes || a->tag != b->tag ||
        a->dtype != b->dtype || a->n_dims != b->n_dims || a->has_addr != b->has_addr ||
        (a->has_addr && a->addr != b->addr))
        return false;
    for (uint32_t i = 0; i < a->n_dims && i < STRATA_MAX_DIMS; i++)
        if (a->shape[i] != b->shape[i])
            return false;
    if (a->has_flops != b->has_flops || (a->has_flops && a->flops != b->flops))
        return false;
    if (a->has_time != b->has_time || (a->has_time && a->time_s != b->time_s))
        return false;
    if (a->has_at != b->has_at || (a->has_at && a->at_s != b->at_s))
        return false;
    return names_equal(a->ins, a->n_ins, b->ins, b->n_ins) &&
           names_equal(a->outs, a->n_outs, b->outs, b->n_outs) &&
           names_equal(a->donates, a->n_donates, b->donates, b->n_donates);
}
