/*
 * engine_tape.c: the compact record of the first pass's bound ops (engine_tape.h).
 *
 * Layout of one op: kind (1 byte), mask (varint: one bit per field below
 * that is not what was expected), then the fields of the mask in bit
 * order. Unsigned integers are LEB128 varints; buffer ids are
 * zigzag(next_id - id), with next_id the id the next alloc is expected to
 * get; flops, time and the collective pointer are raw bytes; a name is its
 * length, its bytes and a NUL (so the replay hands out a pointer into the
 * tape). Both sides keep the same expectations (tape_expect), updated
 * after each op.
 *
 * The fast form: an alloc, free, copy, compute, record or wait whose other
 * fields hold their defaults (fast_form: no collective, no shape, the
 * expected index, a later line; each kind's fields below) is written
 * without a mask: one byte of FAST, three flags (a name, flops, time: has_flops
 * is then flops != 0, has_time time_s != 0) and the kind, then the
 * line's distance from the previous op's less one, the stream, the
 * device (index + 1), then its
 * kind's fields in a fixed order, memories, units and routes as index + 1
 * (STRATA_BIND_NONE as 0). Building the mask and walking its fields costs
 * more than the few fields such an op has; any other op takes the general
 * form above, whose kind byte is below FAST.
 */
#include "engine/engine_tape.h"
#include <string.h>

enum {
    FAST = 0x80, /* a kind byte with this bit opens the fast form: */
    FAST_NAME = 0x40, FAST_FLOPS = 0x20, FAST_TIME = 0x10, /* its flags */
    FAST_KIND = 0x0f, /* and its kind */
    TAPE_CHUNK = 256 * 1024,
    /* the most bytes a varint of 64 bits takes */
    VARINT_MAX = 10,
};
_Static_assert(STRATA_OP__COUNT <= FAST_KIND + 1, "an op kind fits in the fast form's low four bits");

/* The fields, in the order they are written; the most common first so
 * that the mask of a typical op fits in one or two bytes. */
enum {
    F_STREAM, F_BYTES, F_BUF, F_MEMORY, F_EVENT, F_SEQ, F_NAME,
    F_DTYPE, F_TAG, F_UNIT, F_HAS_FLOPS, F_FLOPS, F_INS, F_SRC,
    F_SRC_MEMORY, F_DST_MEMORY, F_ROUTE, F_HAS_TIME, F_TIME, F_OUTS, F_LINE,
    F_INDEX, F_GROUP, F_COLL, F_SHAPE, F_DONATED, F_DEVICE,
};

#define BIT(f) ((uint64_t)1 << (f))

typedef struct tape_chunk {
    struct tape_chunk *next;
    size_t used, cap;
    uint8_t data[];
} tape_chunk;

/* What the next op is expected to have. */
typedef struct tape_expect {
    uint64_t line;    /* the previous op's line */
    uint64_t index;   /* the next op's index */
    uint64_t next_id; /* the id the next alloc gets */
} tape_expect;

struct engine_tape {
    size_t budget, bytes;
    tape_chunk *head, *tail;
    tape_expect put;
    /* replay */
    tape_expect got;
    tape_chunk *at;   /* the chunk being replayed (head) */
    size_t pos;
    uint64_t *ids;    /* ins, outs and donated of the op replayed last */
    size_t ids_cap;
};

engine_tape *engine_tape_new(size_t budget)
{
    engine_tape *t = g_new0(engine_tape, 1);
    t->budget = budget;
    return t;
}

void engine_tape_free(engine_tape *t)
{
    if (!t)
        return;
    while (t->head) {
        tape_chunk *next = t->head->next;
        g_free(t->head);
        t->head = next;
    }
    g_free(t->ids);
    g_free(t);
}

size_t engine_tape_bytes(const engine_tape *t)
{
    return t->bytes;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline const uint8_t *get_varint(const uint8_t *p, uint64_t *v)
{
    if (*p < 0x80) { /* most fields fit in one byte */
        *v = *p;
        return p + 1;
    }
    uint64_t r = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t b = *p++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    *v = r;
    return p;
}

static uint8_t *put_raw(uint8_t *p, const void *v, size_t n)
{
    memcpy(p, v, n);
    return p + n;
}

static const uint8_t *get_raw(const uint8_t *p, void *v, size_t n)
{
    memcpy(v, p, n);
    return p + n;
}

/* A buffer id as a distance from the next id (zigzag: small either way). */
static uint64_t id_code(const tape_expect *e, uint64_t id)
{
    uint64_t d = e->next_id - id;
    return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

static uint64_t id_decode(const tape_expect *e, uint64_t code)
{
    uint64_t d = (code >> 1) ^ (uint64_t)-(int64_t)(code & 1);
    return e->next_id - d;
}

static uint8_t *put_ids(uint8_t *p, const tape_expect *e, const uint64_t *ids, uint32_t n)
{
    p = put_varint(p, n);
    for (uint32_t i = 0; i < n; i++)
        p = put_varint(p, id_code(e, ids[i]));
    return p;
}

static const uint8_t *get_ids(const uint8_t *p, const tape_expect *e, uint64_t *ids, uint32_t *n)
{
    uint64_t count = 0;
    p = get_varint(p, &count);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t code = 0;
        p = get_varint(p, &code);
        ids[i] = id_decode(e, code);
    }
    *n = (uint32_t)count;
    return p;
}

static void expect_after(tape_expect *e, const strata_bound_op *op)
{
    e->line = op->line;
    e->index = op->index + 1;
    if (op->kind == STRATA_OP_ALLOC)
        e->next_id = op->buf + 1;
}

/* The fields of op that are not what e expects. */
static uint64_t mask_of(const tape_expect *e, const strata_bound_op *op, const engine_op_extra *x)
{
#define SET(f, cond) ((uint64_t)(cond) << (f))
    uint64_t expected_buf = op->kind == STRATA_OP_ALLOC ? e->next_id : 0;
    return SET(F_STREAM, op->stream != 0) | SET(F_BYTES, op->bytes != 0) | SET(F_BUF, op->buf != expected_buf) |
           SET(F_MEMORY, op->memory != STRATA_BIND_NONE) | SET(F_EVENT, op->event != 0) |
           SET(F_SEQ, op->event_seq != 0) | SET(F_NAME, x->name != NULL) | SET(F_DTYPE, op->dtype != 0) |
           SET(F_TAG, op->tag != 0) | SET(F_UNIT, op->unit != STRATA_BIND_NONE) | SET(F_HAS_FLOPS, op->has_flops) |
           SET(F_FLOPS, op->flops != 0) | SET(F_INS, op->n_ins != 0) | SET(F_SRC, op->src != 0) |
           SET(F_SRC_MEMORY, op->src_memory != STRATA_BIND_NONE) |
           SET(F_DST_MEMORY, op->dst_memory != STRATA_BIND_NONE) | SET(F_ROUTE, op->route != STRATA_BIND_NONE) |
           SET(F_HAS_TIME, op->has_time) | SET(F_TIME, op->time_s != 0) | SET(F_OUTS, op->n_outs != 0) |
           SET(F_LINE, op->line != e->line + 1) | SET(F_INDEX, op->index != e->index) |
           SET(F_GROUP, op->group_size != 0) | SET(F_COLL, op->coll != NULL) |
           SET(F_SHAPE, x->rows != 0 || x->cols != 0) | SET(F_DONATED, x->n_donated != 0) |
           SET(F_DEVICE, op->device != STRATA_BIND_NONE);
#undef SET
}

/* Room for one op of this size at the tail: false past the budget. */
static bool reserve(engine_tape *t, size_t need)
{
    if (t->tail && t->tail->cap - t->tail->used >= need)
        return true;
    size_t cap = MAX((size_t)TAPE_CHUNK, need);
    if (t->bytes + sizeof(tape_chunk) + cap > t->budget)
        return false;
    tape_chunk *c = g_malloc(sizeof(tape_chunk) + cap);
    c->next = NULL;
    c->used = 0;
    c->cap = cap;
    if (t->tail)
        t->tail->next = c;
    else
        t->head = c;
    t->tail = c;
    t->bytes += sizeof(tape_chunk) + cap;
    return true;
}

/* Writes field f of op (one set in its mask) at p; name_len: strlen(x->name). */
static uint8_t *put_field(uint8_t *p, int f, const tape_expect *e, const strata_bound_op *op,
                          const engine_op_extra *x, size_t name_len)
{
    switch (f) {
    case F_STREAM: return put_varint(p, op->stream);
    case F_BYTES: return put_varint(p, op->bytes);
    case F_BUF: return put_varint(p, id_code(e, op->buf));
    case F_MEMORY: return put_varint(p, op->memory);
    case F_EVENT: return put_varint(p, op->event);
    case F_SEQ: return put_varint(p, op->event_seq);
    case F_NAME: return put_raw(put_varint(p, name_len), x->name, name_len + 1);
    case F_DTYPE: return put_varint(p, (uint64_t)op->dtype);
    case F_TAG: return put_varint(p, (uint64_t)op->tag);
    case F_UNIT: return put_varint(p, op->unit);
    case F_FLOPS: return put_raw(p, &op->flops, sizeof op->flops);
    case F_INS: return put_ids(p, e, op->ins, op->n_ins);
    case F_SRC: return put_varint(p, id_code(e, op->src));
    case F_SRC_MEMORY: return put_varint(p, op->src_memory);
    case F_DST_MEMORY: return put_varint(p, op->dst_memory);
    case F_ROUTE: return put_varint(p, op->route);
    case F_TIME: return put_raw(p, &op->time_s, sizeof op->time_s);
    case F_OUTS: return put_ids(p, e, op->outs, op->n_outs);
    case F_LINE: return put_varint(p, op->line);
    case F_INDEX: return put_varint(p, op->index);
    case F_GROUP: return put_varint(p, op->group_size);
    case F_COLL: return put_raw(p, &op->coll, sizeof op->coll);
    case F_SHAPE: return put_varint(put_varint(p, x->rows), x->cols);
    case F_DONATED: return put_ids(p, e, x->donated, x->n_donated);
    case F_DEVICE: return put_varint(p, op->device);
    default: return p; /* F_HAS_FLOPS, F_HAS_TIME: the bit is the value */
    }
}

/* An index that may be STRATA_BIND_NONE, plus one (NONE is 0: one byte). */
static uint64_t plus_one(uint32_t v)
{
    return (uint32_t)(v + 1);
}

static uint32_t minus_one(uint64_t v)
{
    return (uint32_t)(v - 1);
}

/* Whether op takes the fast form: every field its kind does not write
 * holds what expect() sets on the replay. */
static bool fast_form(const tape_expect *e, const strata_bound_op *op, const engine_op_extra *x)
{
    if (op->index != e->index || op->line <= e->line || op->group_size || op->coll || x->rows || x->cols ||
        op->has_flops != (op->flops != 0) || op->has_time != (op->time_s != 0))
        return false;
    bool no_work = !op->has_flops && !op->has_time && op->flops == 0 && op->time_s == 0 && op->n_ins == 0 &&
                   op->n_outs == 0 && x->n_donated == 0 && op->unit == STRATA_BIND_NONE;
    bool no_event = op->event == 0 && op->event_seq == 0;
    bool no_copy = op->src == 0 && op->src_memory == STRATA_BIND_NONE && op->dst_memory == STRATA_BIND_NONE &&
                   op->route == STRATA_BIND_NONE;
    bool untyped = op->dtype == 0 && op->tag == 0;
    switch (op->kind) {
    case STRATA_OP_ALLOC: return no_work && no_event && no_copy && op->buf == e->next_id && x->name;
    case STRATA_OP_FREE: return no_work && no_event && no_copy && untyped;
    case STRATA_OP_COPY: return no_work && no_event && untyped && op->memory == STRATA_BIND_NONE;
    case STRATA_OP_COMPUTE: return no_event && no_copy && op->tag == 0 && op->buf == 0;
    case STRATA_OP_RECORD:
    case STRATA_OP_WAIT:
        return no_work && no_copy && untyped && op->buf == 0 && op->bytes == 0 && op->memory == STRATA_BIND_NONE;
    default: return false;
    }
}

/* Writes op in the fast form at p. */
static uint8_t *put_fast(uint8_t *p, const tape_expect *e, const strata_bound_op *op, const engine_op_extra *x,
                         size_t name_len)
{
    uint8_t flags = (uint8_t)((x->name ? FAST_NAME : 0) | (op->has_flops ? FAST_FLOPS : 0) |
                              (op->has_time ? FAST_TIME : 0));
    *p++ = (uint8_t)(FAST | flags | op->kind);
    p = put_varint(p, op->line - e->line - 1);
    p = put_varint(p, op->stream);
    p = put_varint(p, plus_one(op->device));
    switch (op->kind) {
    case STRATA_OP_ALLOC:
        p = put_varint(put_varint(p, op->bytes), plus_one(op->memory));
        p = put_varint(put_varint(p, (uint64_t)op->dtype), (uint64_t)op->tag);
        break;
    case STRATA_OP_FREE:
        p = put_varint(put_varint(p, id_code(e, op->buf)), op->bytes);
        p = put_varint(p, plus_one(op->memory));
        break;
    case STRATA_OP_COPY:
        p = put_varint(put_varint(p, id_code(e, op->buf)), id_code(e, op->src));
        p = put_varint(put_varint(p, op->bytes), plus_one(op->src_memory));
        p = put_varint(put_varint(p, plus_one(op->dst_memory)), plus_one(op->route));
        break;
    case STRATA_OP_COMPUTE:
        p = put_varint(put_varint(p, op->bytes), plus_one(op->memory));
        p = put_varint(put_varint(p, plus_one(op->unit)), (uint64_t)op->dtype);
        if (flags & FAST_FLOPS)
            p = put_raw(p, &op->flops, sizeof op->flops);
        if (flags & FAST_TIME)
            p = put_raw(p, &op->time_s, sizeof op->time_s);
        p = put_ids(p, e, op->ins, op->n_ins); /* each a count, then the codes */
        p = put_ids(p, e, op->outs, op->n_outs);
        p = put_ids(p, e, x->donated, x->n_donated);
        break;
    default: /* RECORD, WAIT */
        p = put_varint(put_varint(p, op->event), op->event_seq);
        break;
    }
    if (flags & FAST_NAME)
        p = put_raw(put_varint(p, name_len), x->name, name_len + 1);
    return p;
}

bool engine_tape_put(engine_tape *t, const strata_bound_op *op, const engine_op_extra *x)
{
    if ((unsigned)op->kind > FAST_KIND || (op->n_ins && !op->ins) || (op->n_outs && !op->outs) ||
        (x->n_donated && !x->donated))
        return false;
    size_t name_len = x->name ? strlen(x->name) : 0;
    size_t need = 1 + VARINT_MAX * (27 + 3 + (size_t)op->n_ins + op->n_outs + x->n_donated) + name_len + 1;
    if (!reserve(t, need))
        return false;
    const tape_expect *e = &t->put;
    uint8_t *start = t->tail->data + t->tail->used, *p = start;
    if (fast_form(e, op, x)) {
        p = put_fast(p, e, op, x, name_len);
    } else {
        uint64_t mask = mask_of(e, op, x);
        *p++ = (uint8_t)op->kind;
        p = put_varint(p, mask);
        for (uint64_t m = mask; m; m &= m - 1) /* in bit order */
            p = put_field(p, __builtin_ctzll(m), e, op, x, name_len);
    }
    t->tail->used += (size_t)(p - start);
    expect_after(&t->put, op);
    return true;
}

/* The list of ids at p (count, then codes) into the replay's scratch after
 * its first *used ids (the scratch may move: pointers into it are taken
 * once the op is read). */
static const uint8_t *get_id_list(engine_tape *t, const uint8_t *p, size_t *used, uint32_t *n)
{
    uint64_t count = 0;
    get_varint(p, &count);
    if (*used + count > t->ids_cap) {
        t->ids_cap = MAX(*used + count, 2 * t->ids_cap);
        t->ids = g_renew(uint64_t, t->ids, t->ids_cap);
    }
    p = get_ids(p, &t->got, t->ids + *used, n);
    *used += *n;
    return p;
}

/* Reads field f (one set in the op's mask) at p into op or x. */
static const uint8_t *get_field(engine_tape *t, const uint8_t *p, int f, strata_bound_op *op, engine_op_extra *x,
                                size_t *used)
{
    const tape_expect *e = &t->got;
    uint64_t v = 0;
    switch (f) {
    case F_NAME:
        p = get_varint(p, &v);
        x->name = (const char *)p;
        return p + v + 1;
    case F_HAS_FLOPS: op->has_flops = true; return p;
    case F_FLOPS: return get_raw(p, &op->flops, sizeof op->flops);
    case F_INS: return get_id_list(t, p, used, &op->n_ins);
    case F_HAS_TIME: op->has_time = true; return p;
    case F_TIME: return get_raw(p, &op->time_s, sizeof op->time_s);
    case F_OUTS: return get_id_list(t, p, used, &op->n_outs);
    case F_COLL: return get_raw(p, &op->coll, sizeof op->coll);
    case F_SHAPE: return get_varint(get_varint(p, &x->rows), &x->cols);
    case F_DONATED: return get_id_list(t, p, used, &x->n_donated);
    default: break;
    }
    p = get_varint(p, &v);
    switch (f) {
    case F_STREAM: op->stream = (uint32_t)v; break;
    case F_BYTES: op->bytes = v; break;
    case F_BUF: op->buf = id_decode(e, v); break;
    case F_MEMORY: op->memory = (uint32_t)v; break;
    case F_EVENT: op->event = (uint32_t)v; break;
    case F_SEQ: op->event_seq = v; break;
    case F_DTYPE: op->dtype = (strata_dtype)v; break;
    case F_TAG: op->tag = (strata_tag)v; break;
    case F_UNIT: op->unit = (uint32_t)v; break;
    case F_SRC: op->src = id_decode(e, v); break;
    case F_SRC_MEMORY: op->src_memory = (uint32_t)v; break;
    case F_DST_MEMORY: op->dst_memory = (uint32_t)v; break;
    case F_ROUTE: op->route = (uint32_t)v; break;
    case F_LINE: op->line = v; break;
    case F_INDEX: op->index = v; break;
    case F_GROUP: op->group_size = (uint32_t)v; break;
    case F_DEVICE: op->device = (uint32_t)v; break;
    default: break;
    }
    return p;
}

/* Sets every field of op to what e expects of an op of this kind. Field by
 * field: a struct assignment compiles to a string store, several times
 * slower here. */
static void expect(const tape_expect *e, strata_op_kind kind, strata_bound_op *op)
{
    _Static_assert(sizeof(strata_bound_op) == 168, "expect() sets every field of strata_bound_op: add the new one");
    op->op = NULL;
    op->kind = kind;
    op->index = e->index;
    op->line = e->line + 1;
    op->stream = 0;
    op->device = STRATA_BIND_NONE;
    op->buf = kind == STRATA_OP_ALLOC ? e->next_id : 0;
    op->src = 0;
    op->bytes = 0;
    op->memory = op->src_memory = op->dst_memory = op->route = op->unit = STRATA_BIND_NONE;
    op->dtype = 0;
    op->tag = 0;
    op->has_flops = op->has_time = false;
    op->flops = op->time_s = 0;
    op->event = 0;
    op->event_seq = 0;
    op->ins = op->outs = NULL;
    op->n_ins = op->n_outs = 0;
    op->group_size = 0;
    op->coll = NULL;
}

/* Reads the rest of an op in the fast form (after its first byte, `flags`
 * with its kind) into op, set to the defaults by expect(), and x. */
static const uint8_t *get_fast(engine_tape *t, const uint8_t *p, uint8_t flags, strata_bound_op *op,
                               engine_op_extra *x)
{
    const tape_expect *e = &t->got;
    strata_op_kind kind = (strata_op_kind)(flags & FAST_KIND);
    uint64_t v = 0, w = 0;
    p = get_varint(p, &v);
    op->line = e->line + 1 + v;
    p = get_varint(p, &v);
    op->stream = (uint32_t)v;
    p = get_varint(p, &v);
    op->device = minus_one(v);
    op->has_flops = (flags & FAST_FLOPS) != 0;
    op->has_time = (flags & FAST_TIME) != 0;
    switch (kind) {
    case STRATA_OP_ALLOC:
        p = get_varint(get_varint(p, &op->bytes), &v);
        op->memory = minus_one(v);
        p = get_varint(get_varint(p, &v), &w);
        op->dtype = (strata_dtype)v;
        op->tag = (strata_tag)w;
        break;
    case STRATA_OP_FREE:
        p = get_varint(p, &v);
        op->buf = id_decode(e, v);
        p = get_varint(get_varint(p, &op->bytes), &v);
        op->memory = minus_one(v);
        break;
    case STRATA_OP_COPY:
        p = get_varint(get_varint(p, &v), &w);
        op->buf = id_decode(e, v);
        op->src = id_decode(e, w);
        p = get_varint(get_varint(p, &op->bytes), &v);
        op->src_memory = minus_one(v);
        p = get_varint(get_varint(p, &v), &w);
        op->dst_memory = minus_one(v);
        op->route = minus_one(w);
        break;
    case STRATA_OP_COMPUTE: {
        p = get_varint(get_varint(p, &op->bytes), &v);
        op->memory = minus_one(v);
        p = get_varint(get_varint(p, &v), &w);
        op->unit = minus_one(v);
        op->dtype = (strata_dtype)w;
        if (flags & FAST_FLOPS)
            p = get_raw(p, &op->flops, sizeof op->flops);
        if (flags & FAST_TIME)
            p = get_raw(p, &op->time_s, sizeof op->time_s);
        size_t used = 0;
        p = get_id_list(t, p, &used, &op->n_ins);
        p = get_id_list(t, p, &used, &op->n_outs);
        p = get_id_list(t, p, &used, &x->n_donated);
        break;
    }
    default: /* RECORD, WAIT */
        p = get_varint(p, &v);
        op->event = (uint32_t)v;
        p = get_varint(p, &op->event_seq);
        break;
    }
    if (flags & FAST_NAME) {
        p = get_varint(p, &v);
        x->name = (const char *)p;
        p += v + 1;
    }
    return p;
}

int engine_tape_next(engine_tape *t, strata_bound_op *op, engine_op_extra *x)
{
    if (!t->at)
        t->at = t->head;
    while (t->at && t->pos == t->at->used) {
        tape_chunk *done = t->at;
        t->at = done->next;
        t->head = t->at;
        if (!t->head)
            t->tail = NULL;
        t->pos = 0;
        g_free(done);
    }
    if (!t->at)
        return 0;
    const uint8_t *p = t->at->data + t->pos;
    uint8_t kind = *p++;
    expect(&t->got, (strata_op_kind)(kind & FAST ? kind & FAST_KIND : kind), op);
    *x = (engine_op_extra){0};
    if (kind & FAST) {
        p = get_fast(t, p, kind, op, x);
    } else {
        uint64_t mask = 0;
        p = get_varint(p, &mask);
        size_t used = 0;
        for (uint64_t m = mask; m; m &= m - 1) /* in bit order */
            p = get_field(t, p, __builtin_ctzll(m), op, x, &used);
    }
    if (op->n_ins)
        op->ins = t->ids;
    if (op->n_outs)
        op->outs = t->ids + op->n_ins;
    if (x->n_donated)
        x->donated = t->ids + op->n_ins + op->n_outs;
    t->pos = (size_t)(p - t->at->data);
    expect_after(&t->got, op);
    return 1;
}
