/*
 * op.c: names of op kinds, tags and dtypes, and deep copy / equality of ops.
 * (Collective algorithms are names: models/collective/coll_algo.h's table.)
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
 *     a file is not part of what the op means), strings by content, a value
 *     with a has_ flag only when the flag is set.
 * Copy, clear and equality are generated from the fields of
 * trace/op_schema.h: a new field needs nothing here. The builders
 * (strata_op_make*) set each kind's fields, and only those.
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

#define BUFFER_OPERAND {"a buffer name", NULL}
#define DST_SRC_OPERANDS {"a destination buffer", "a source buffer"}
static const strata_op_positionals kind_operands[STRATA_OP__COUNT + 1] = {
    [STRATA_OP_ALLOC] = BUFFER_OPERAND,      [STRATA_OP_FREE] = BUFFER_OPERAND,
    [STRATA_OP_COPY] = DST_SRC_OPERANDS,     [STRATA_OP_COMPUTE] = {"a label", NULL},
    [STRATA_OP_RECORD] = {"an event name", NULL}, [STRATA_OP_WAIT] = {"an event name", NULL},
    [STRATA_OP_ALL_REDUCE] = BUFFER_OPERAND, [STRATA_OP_ALL_GATHER] = DST_SRC_OPERANDS,
    [STRATA_OP_REDUCE_SCATTER] = DST_SRC_OPERANDS, [STRATA_OP_ALL_TO_ALL] = DST_SRC_OPERANDS,
    [STRATA_OP_COLLECTIVE_PERMUTE] = DST_SRC_OPERANDS,
    /* RELEASE and OPTION: none; beyond the kinds: none */
};

const strata_op_positionals *strata_op_positionals_of(strata_op_kind kind)
{
    return &kind_operands[(unsigned)kind < STRATA_OP__COUNT ? kind : STRATA_OP__COUNT];
}

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

/* Index of `name` in names[from..count), or -1. The reader looks up a
 * kind (and often a tag and a dtype) on every line. */
static int name_index(const char *const *names, unsigned from, unsigned count, const char *name)
{
    for (unsigned i = from; i < count; i++)
        if (strata_same_name(names[i], name))
            return (int)i;
    return -1;
}

const char *strata_tag_name(strata_tag tag)
{
    return (unsigned)tag < STRATA_TAG__COUNT ? tag_names[tag] : "";
}

/* Runs on every line: the kinds are told apart by their length, then by at
 * most three compares of that constant length (inlined, not calls). The
 * line reader knows the token's length from its scan (strata_op_kind_of_span). */
bool strata_op_kind_of_span(const char *name, size_t len, strata_op_kind *kind)
{
#define IS(k, text) (memcmp(name, text, sizeof text - 1) == 0 ? (*kind = (k), true) : false)
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

bool strata_op_kind_from_name(const char *name, strata_op_kind *kind)
{
    size_t len = 0;
    while (len < 19 && name[len])
        len++;
    return strata_op_kind_of_span(name, len, kind);
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

static bool names_equal(const char *const *a, uint32_t na, const char *const *b, uint32_t nb)
{
    if (na != nb)
        return false;
    for (uint32_t i = 0; i < na; i++)
        if (g_strcmp0(a[i], b[i]) != 0)
            return false;
    return true;
}

/* Per class of store (trace/op_schema.h): what copy, clear and equality do
 * with a field f (and its companion aux) whose absent value is d. */
#define COPY_VAL(f, aux, d)
#define COPY_OPT(f, aux, d)
#define COPY_SHAPE(f, aux, d)
#define COPY_STR(f, aux, d) dst->f = g_strdup(src->f ? src->f : d);
#define COPY_LIST(f, aux, d)                                                                                       \
    dst->f = copy_names(src->f, src->aux);                                                                         \
    if (!dst->f)                                                                                                   \
        dst->aux = 0;
#define FREE_VAL(f, aux)
#define FREE_OPT(f, aux)
#define FREE_SHAPE(f, aux)
#define FREE_STR(f, aux) g_free((char *)op->f);
#define FREE_LIST(f, aux) g_strfreev((char **)op->f);
#define EQ_VAL(f, aux, d) &&a->f == b->f
#define EQ_OPT(f, aux, d) &&a->aux == b->aux && (!a->aux || a->f == b->f)
#define EQ_STR(f, aux, d) &&g_strcmp0(a->f ? a->f : d, b->f ? b->f : d) == 0
#define EQ_LIST(f, aux, d) &&names_equal(a->f, a->aux, b->f, b->aux)
#define EQ_SHAPE(f, aux, d) &&shape_equal(a->f, a->aux, b->f, b->aux)

static bool shape_equal(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
    if (na != nb)
        return false;
    for (uint32_t i = 0; i < na && i < STRATA_MAX_DIMS; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

void strata_op_copy(strata_op *dst, const strata_op *src)
{
    *dst = *src;
#define OPERAND(field, aux, store, kinds, dflt) OP_SCHEMA_BY_CLASS(COPY_, store)(field, aux, dflt)
#define ATTR(key, field, aux, store, syntax, kinds, dflt, what) OP_SCHEMA_BY_CLASS(COPY_, store)(field, aux, dflt)
    STRATA_OP_OPERANDS(OPERAND)
    STRATA_OP_ATTRS(ATTR)
#undef OPERAND
#undef ATTR
}

void strata_op_clear(strata_op *op)
{
    if (op == NULL)
        return;
#define OPERAND(field, aux, store, kinds, dflt) OP_SCHEMA_BY_CLASS(FREE_, store)(field, aux)
#define ATTR(key, field, aux, store, syntax, kinds, dflt, what) OP_SCHEMA_BY_CLASS(FREE_, store)(field, aux)
    STRATA_OP_OPERANDS(OPERAND)
    STRATA_OP_ATTRS(ATTR)
#undef OPERAND
#undef ATTR
    memset(op, 0, sizeof *op);
}

bool strata_op_equal(const strata_op *a, const strata_op *b)
{
#define OPERAND(field, aux, store, kinds, dflt) OP_SCHEMA_BY_CLASS(EQ_, store)(field, aux, dflt)
#define ATTR(key, field, aux, store, syntax, kinds, dflt, what) OP_SCHEMA_BY_CLASS(EQ_, store)(field, aux, dflt)
    return a->kind == b->kind STRATA_OP_OPERANDS(OPERAND) STRATA_OP_ATTRS(ATTR);
#undef OPERAND
#undef ATTR
}

/* ---- building ops ---------------------------------------------------------- */

strata_op strata_op_make(strata_op_kind kind, const char *stream, const char *name)
{
    strata_op op;
    memset(&op, 0, sizeof op);
    op.kind = kind;
    op.stream = stream ? stream : STRATA_DEFAULT_STREAM;
    op.name = name;
    return op;
}

strata_op strata_op_make_alloc(const char *stream, const char *name, uint64_t size, const char *memory,
                               strata_tag tag)
{
    strata_op op = strata_op_make(STRATA_OP_ALLOC, stream, name);
    op.size = size;
    op.memory = memory;
    op.tag = tag;
    return op;
}

strata_op strata_op_make_copy(const char *stream, const char *dst, const char *src, uint64_t bytes)
{
    strata_op op = strata_op_make(STRATA_OP_COPY, stream, dst);
    op.src = src;
    op.has_bytes = bytes > 0;
    op.bytes = bytes;
    return op;
}

strata_op strata_op_make_compute(const char *stream, const char *label, double flops, const char *const *ins,
                                 uint32_t n_ins, const char *const *outs, uint32_t n_outs, const char *unit)
{
    strata_op op = strata_op_make(STRATA_OP_COMPUTE, stream, label);
    op.has_flops = flops > 0;
    op.flops = flops > 0 ? flops : 0;
    op.ins = ins;
    op.n_ins = n_ins;
    op.outs = outs;
    op.n_outs = n_outs;
    op.unit = unit;
    return op;
}

strata_op strata_op_make_timed(const char *stream, const char *label, double seconds)
{
    strata_op op = strata_op_make(STRATA_OP_COMPUTE, stream, label);
    op.has_time = true;
    op.time_s = seconds;
    return op;
}

strata_op strata_op_make_collective(strata_op_kind kind, const char *stream, const char *out, const char *in,
                                    const char *axis, const char *algo, int32_t shift)
{
    strata_op op = strata_op_make(kind, stream, out);
    op.src = kind == STRATA_OP_ALL_REDUCE ? NULL : in;
    op.axis = axis;
    op.algo = algo;
    op.shift = shift;
    return op;
}

strata_op strata_op_make_option(const char *key, const char *value)
{
    strata_op op = strata_op_make(STRATA_OP_OPTION, NULL, key);
    op.stream = NULL;
    op.value = value;
    return op;
}

void strata_op_set_shape(strata_op *op, strata_dtype dtype, uint32_t n_dims, const uint64_t *dims)
{
    op->dtype = dtype;
    op->n_dims = MIN(n_dims, (uint32_t)STRATA_MAX_DIMS);
    for (uint32_t d = 0; d < op->n_dims; d++)
        op->shape[d] = dims[d];
}
