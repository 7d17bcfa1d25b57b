/*
 * engine_tape.c: the compact record of the first pass's bound ops (engine_tape.h).
 *
 * The fields: TAPE_FIELDS below declares, once, every field of the bound
 * op (and of its extra) that the tape keeps: how it is coded, what it is
 * expected to hold, and which kinds' fast form carries it. The general
 * form's mask, encode and decode, the defaults the replay starts from
 * (expect()) and the test of whether an op may take the fast form are
 * generated from it: a new field of strata_bound_op reaches the tape by one
 * line there (an op whose new field is not at its EXPECT then takes the
 * general form; carrying it in a kind's fast form as well is that kind's
 * case in put_fast() and get_fast(), and its FAST bit).
 *
 * The general form of one op: kind (1 byte), mask (varint: one bit per
 * field that is not what was expected), then the fields of the mask in
 * bit order. VARINT fields are LEB128 varints; buffer ids (ID, IDS) are
 * zigzag(next_id - id), with next_id the id the next alloc is expected to
 * get; F64 fields are raw bytes; a FLAG is its mask bit; a NAME is its
 * length, its bytes and a NUL (so the replay hands out a pointer into the
 * tape). Both sides keep the same expectations (tape_expect), updated
 * after each op.
 *
 * The fast form: an alloc, free, copy, compute, record or wait whose fields
 * that its kind's fast form does not carry hold their EXPECT (fast_form:
 * uncarried_differ(), from the FAST column), with a later line and an index
 * not below the one expected, is written without a mask: one byte of FAST,
 * four flags (a name, flops, time: has_flops is then flops != 0, has_time
 * time_s != 0; skip: the index is not the one expected) and the kind (three
 * bits), then the line's distance from the previous op's less one, with
 * skip the index's distance from the one expected (a queue's ops, whose
 * indices jump over the ops of other streams), the stream, the device
 * (index + 1), then its
 * kind's fields in a fixed order, memories, units and routes as index + 1
 * (STRATA_BIND_NONE as 0); an alloc's tag shifted left by one, its low bit
 * saying that its 2-D shape (rows, cols) follows, and a compute's dtype
 * shifted left by two, its low bits the kernel flag and whether the
 * kernel's cost (flops and fixed time raw, bytes a varint) follows
 * (`gen`'s shaped allocs and kernel ops took the general form before). Building the mask and walking its fields costs
 * more than the few fields such an op has; any other op takes the general
 * form above, whose kind byte is below FAST.
 */
#include "engine/engine_tape.h"
#include <assert.h>
#include <string.h>
#include "engine/engine_spill.h"

#include "engine/engine_tape_internal.h"

engine_tape *engine_tape_new(size_t budget) { return engine_tape_new_sized(budget, ENGINE_TAPE_CHUNK, NULL); }

engine_tape *engine_tape_new_sized(size_t budget, size_t chunk, engine_tape_pool *pool)
{
    engine_tape *t = g_new0(engine_tape, 1);
    t->budget = budget;
    t->chunk = chunk;
    t->pool = pool;
    return t;
}

engine_tape_pool *engine_tape_pool_new(size_t chunk, unsigned keep, size_t resident_max, const char *what)
{
    engine_tape_pool *pool = g_new0(engine_tape_pool, 1);
    pool->chunk = chunk;
    pool->keep = keep;
    pool->resident_max = resident_max;
    pool->spill = engine_spill_new(what);
    return pool;
}

uint64_t engine_tape_pool_spilled(const engine_tape_pool *pool)
{
    return engine_spill_bytes(pool->spill);
}

uint64_t engine_tape_pool_file_allocated(const engine_tape_pool *pool)
{
    return engine_spill_allocated(pool->spill);
}

const char *engine_tape_pool_failure(const engine_tape_pool *pool)
{
    return pool ? engine_spill_failure(pool->spill) : NULL;
}

void engine_tape_pool_free(engine_tape_pool *pool)
{
    if (!pool)
        return;
    while (pool->spare) {
        tape_chunk *next = pool->spare->next;
        g_free(pool->spare);
        pool->spare = next;
    }
    engine_spill_free(pool->spill);
    g_free(pool);
}

/* A chunk of cap bytes, empty: a spare from the tape's pool when it has one. */
static tape_chunk *chunk_new(engine_tape *t, size_t cap)
{
    engine_tape_pool *pool = t->pool;
    tape_chunk *c;
    if (pool && cap == pool->chunk && pool->spare) {
        c = pool->spare;
        pool->spare = c->next;
        pool->n--;
    } else {
        c = g_malloc(sizeof(tape_chunk) + cap);
        c->cap = cap;
    }
    if (pool)
        pool->resident += c->cap;
    c->next = NULL;
    c->used = 0;
    return c;
}

/* A chunk the tape is done with: back to its pool while it keeps fewer than
 * it may, else freed. */
static void chunk_done(engine_tape *t, tape_chunk *c)
{
    engine_tape_pool *pool = t->pool;
    if (pool)
        pool->resident -= c->cap;
    if (pool && c->cap == pool->chunk && pool->n < pool->keep) {
        c->next = pool->spare;
        pool->spare = c;
        pool->n++;
        return;
    }
    g_free(c);
}

enum { SPILL_NONE = 0 }; /* no next chunk on file (offset 0 is never a next: a next follows its chunk) */

/* Before a new chunk is put after t's full tail: the tail goes to the
 * pool's file when the pool holds more than it may in memory (or a run of
 * t's is already there, which the tail must follow), unless the tail is
 * the head (the chunk being replayed, or the only one). False on a failed
 * write (the tape is then unusable). */
static bool spill_tail(engine_tape *t)
{
    engine_tape_pool *pool = t->pool;
    tape_chunk *c = t->tail;
    if (!pool || pool->resident_max == 0 || !c || c == t->head ||
        (t->n_spilled == 0 && pool->resident <= pool->resident_max))
        return true;
    uint64_t off = 0;
    if (!engine_spill_append(pool->spill, SPILL_NONE, c->data, c->used, &off))
        return false;
    if (t->n_spilled > 0 && !engine_spill_set_link(pool->spill, t->spill_last, off))
        return false; /* the previous chunk on file names this one as its next */
    if (t->n_spilled == 0) {
        t->spill_first = off;
        t->before_tail->next = NULL; /* the listed chunks end before the run */
    }
    t->spill_last = off;
    t->n_spilled++;
    chunk_done(t, c);
    t->tail = t->before_tail = NULL; /* reserve() puts the new tail on its own */
    return true;
}

/* The first chunk of t's run on file, read back into memory (NULL on a
 * failed read); the last one is linked to the tail again. */
static tape_chunk *unspill(engine_tape *t)
{
    engine_tape_pool *pool = t->pool;
    uint64_t next = 0, used = 0, off = t->spill_first;
    if (!engine_spill_read_header(pool->spill, off, &next, &used))
        return NULL;
    tape_chunk *c = chunk_new(t, MAX(t->chunk, used));
    if (!engine_spill_read_data(pool->spill, off, c->data, used)) {
        chunk_done(t, c);
        return NULL;
    }
    c->used = used;
    t->spill_first = next;
    if (--t->n_spilled == 0) {
        c->next = t->tail;
        t->before_tail = t->tail ? c : NULL;
    }
    engine_spill_release(pool->spill, off, used); /* never read again: its disk goes back */
    return c;
}

#ifndef NDEBUG
/* Invariant 2 over the chunks still held (replay frees them as it goes). */
static bool tape_ok(const engine_tape *t)
{
    size_t held = 0;
    for (const tape_chunk *c = t->head; c; c = c->next) {
        if (c->used > c->cap)
            return false;
        held += sizeof(tape_chunk) + c->cap;
    }
    return held <= t->bytes && t->bytes <= t->budget;
}
#endif

void engine_tape_free(engine_tape *t)
{
    if (!t)
        return;
    assert(tape_ok(t)); /* invariant 2 */
    while (t->head) {
        tape_chunk *next = t->head->next;
        chunk_done(t, t->head);
        t->head = next;
    }
    if (t->n_spilled > 0) { /* its run on file is left there; the tail is on its own */
        if (t->tail)
            chunk_done(t, t->tail);
        engine_spill_let_go(t->pool->spill, t->n_spilled);
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

/* Most fields take one byte, a size of 1 MiB (2^20) three: those read without a loop. */
static inline __attribute__((always_inline)) const uint8_t *get_varint(const uint8_t *p, uint64_t *v)
{
    uint64_t b = *p++;
    if (b < 0x80) {
        *v = b;
        return p;
    }
    uint64_t r = b & 0x7f;
    b = *p++;
    r |= (b & 0x7f) << 7;
    if (b >= 0x80) {
        b = *p++;
        r |= (b & 0x7f) << 14;
        for (unsigned shift = 21; b >= 0x80; shift += 7) {
            b = *p++;
            r |= (b & 0x7f) << shift;
        }
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
    strata_op_kind kind = op->kind;
    uint64_t mask = 0;
#define FIELD(id, codec, f, aux, expect, fast) mask |= (uint64_t)DIFF_##codec(f, aux, expect) << F_##id;
    TAPE_FIELDS(FIELD)
#undef FIELD
    return mask;
}

/* A new tail chunk with room for need bytes: false past the budget. Out
 * of line: once a chunk, where reserve() asks on every op. */
static __attribute__((noinline)) bool reserve_chunk(engine_tape *t, size_t need)
{
    size_t cap = MAX(t->chunk, need);
    if (t->bytes + sizeof(tape_chunk) + cap > t->budget || !spill_tail(t))
        return false;
    tape_chunk *c = chunk_new(t, cap);
    if (t->n_spilled > 0) /* after the run on file: on its own */
        t->before_tail = NULL;
    else if (t->tail) {
        t->tail->next = c;
        t->before_tail = t->tail;
    } else
        t->head = c;
    t->tail = c;
    t->bytes += sizeof(tape_chunk) + cap;
    assert(t->bytes <= t->budget); /* invariant 2 */
    return true;
}

/* Room for one op of this size at the tail: false past the budget. */
static inline bool reserve(engine_tape *t, size_t need)
{
    if (t->tail && t->tail->cap - t->tail->used >= need)
        return true;
    return reserve_chunk(t, need);
}

/* Per codec: a field written at p (an expression: where it ends). */
#define PUT_VARINT(f, aux) put_varint(p, (uint64_t)(f))
#define PUT_ID(f, aux) put_varint(p, id_code(e, f))
#define PUT_F64(f, aux) put_raw(p, &(f), sizeof(f))
#define PUT_FLAG(f, aux) p /* the bit is the value */
#define PUT_NAME(f, aux) put_raw(put_varint(p, name_len), f, name_len + 1)
#define PUT_IDS(f, aux) put_ids(p, e, f, aux)

/* Writes field f of op (one set in its mask) at p; name_len: strlen(x->name). */
static uint8_t *put_field(uint8_t *p, int f, const tape_expect *e, const strata_bound_op *op,
                          const engine_op_extra *x, size_t name_len)
{
    switch (f) {
#define FIELD(id, codec, f, aux, expect, fast)                                                                     \
    case F_##id: return PUT_##codec(f, aux);
        TAPE_FIELDS(FIELD)
#undef FIELD
    default: return p;
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

/* Whether a field that kind's fast form does not carry differs
 * from its EXPECT: the carried fields drop out at compile time, the others
 * are compared without a branch each. */
#define UNCARRIED(id, codec, f, aux, expect, fast) | ((((fast) >> kind) & 1u) ? 0 : DIFF_##codec(f, aux, expect))
static inline __attribute__((always_inline)) bool uncarried_differ_as(const tape_expect *e,
                                                                      const strata_bound_op *op,
                                                                      const engine_op_extra *x, strata_op_kind kind)
{
    return 0 TAPE_FIELDS(UNCARRIED);
}
#undef UNCARRIED

/* uncarried_differ_as with op's kind as a constant, one case a kind, so
 * that each case is compiled for its kind alone. */
static inline __attribute__((always_inline)) bool uncarried_differ(const tape_expect *e, const strata_bound_op *op,
                                                                   const engine_op_extra *x)
{
    switch (op->kind) {
    case STRATA_OP_ALLOC: return uncarried_differ_as(e, op, x, STRATA_OP_ALLOC);
    case STRATA_OP_FREE: return uncarried_differ_as(e, op, x, STRATA_OP_FREE);
    case STRATA_OP_COPY: return uncarried_differ_as(e, op, x, STRATA_OP_COPY);
    case STRATA_OP_COMPUTE: return uncarried_differ_as(e, op, x, STRATA_OP_COMPUTE);
    case STRATA_OP_RECORD: return uncarried_differ_as(e, op, x, STRATA_OP_RECORD);
    case STRATA_OP_WAIT: return uncarried_differ_as(e, op, x, STRATA_OP_WAIT);
    default: return true; /* no fast form */
    }
}

/* Whether op takes the fast form: every field its kind's fast form does not
 * carry holds its EXPECT, which expect() sets on the replay (from the FAST
 * column, through uncarried_differ()). */
static inline __attribute__((always_inline)) bool fast_form(const tape_expect *e, const strata_bound_op *op,
                                                            const engine_op_extra *x)
{
    return op->line > e->line && op->index >= e->index && op->has_flops == (op->flops != 0) && op->has_time == (op->time_s != 0) &&
           (op->kind != STRATA_OP_ALLOC || x->name) && !uncarried_differ(e, op, x);
}

/* Writes op in the fast form at p. */
static inline __attribute__((always_inline)) uint8_t *put_fast(uint8_t *p, const tape_expect *e,
                                                               const strata_bound_op *op, const engine_op_extra *x,
                                                               size_t name_len)
{
    uint8_t flags = (uint8_t)((x->name ? FAST_NAME : 0) | (op->has_flops ? FAST_FLOPS : 0) |
                              (op->has_time ? FAST_TIME : 0) | (op->index != e->index ? FAST_SKIP : 0));
    *p++ = (uint8_t)(FAST | flags | op->kind);
    p = put_varint(p, op->line - e->line - 1);
    if (flags & FAST_SKIP) /* an op of a queue: those between went to other streams */
        p = put_varint(p, op->index - e->index);
    p = put_varint(put_varint(p, op->stream), plus_one(op->device));
    switch (op->kind) {
    case STRATA_OP_ALLOC: {
        bool shaped = x->rows != 0 || x->cols != 0; /* then its 2-D shape follows the tag */
        p = put_varint(put_varint(p, op->bytes), plus_one(op->memory));
        p = put_varint(put_varint(p, (uint64_t)op->dtype), (uint64_t)op->tag << 1 | shaped);
        if (shaped)
            p = put_varint(put_varint(p, x->rows), x->cols);
        break;
    }
    case STRATA_OP_FREE:
        p = put_varint(put_varint(p, id_code(e, op->buf)), op->bytes);
        p = put_varint(p, plus_one(op->memory));
        break;
    case STRATA_OP_COPY:
        p = put_varint(put_varint(p, id_code(e, op->buf)), id_code(e, op->src));
        p = put_varint(put_varint(p, op->bytes), plus_one(op->src_memory));
        p = put_varint(put_varint(p, plus_one(op->dst_memory)), plus_one(op->route));
        break;
    case STRATA_OP_COMPUTE: {
        /* the dtype's two low bits: the kernel flag, and whether its cost's
         * three figures follow (any not 0) */
        bool costed = x->kernel_flops != 0 || x->kernel_bytes != 0 || x->kernel_s != 0;
        p = put_varint(put_varint(p, op->bytes), plus_one(op->memory));
        p = put_varint(put_varint(p, plus_one(op->unit)), (uint64_t)op->dtype << 2 | (uint64_t)costed << 1 | x->kernel);
        if (costed) {
            p = put_raw(p, &x->kernel_flops, sizeof x->kernel_flops);
            p = put_varint(p, x->kernel_bytes);
            p = put_raw(p, &x->kernel_s, sizeof x->kernel_s);
        }
        if (flags & FAST_FLOPS)
            p = put_raw(p, &op->flops, sizeof op->flops);
        if (flags & FAST_TIME)
            p = put_raw(p, &op->time_s, sizeof op->time_s);
        p = put_ids(p, e, op->ins, op->n_ins); /* each a count, then the codes */
        p = put_ids(p, e, op->outs, op->n_outs);
        p = put_ids(p, e, x->donated, x->n_donated);
        break;
    }
    default: /* RECORD, WAIT */
        p = put_varint(put_varint(p, op->event), op->event_seq);
        break;
    }
    if (flags & FAST_NAME)
        p = put_raw(put_varint(p, name_len), x->name, name_len + 1);
    return p;
}

/* Writes op in the general form at p: its kind, its mask, the fields of
 * the mask. Out of line: taken by few ops. */
static __attribute__((noinline)) uint8_t *put_general(uint8_t *p, const tape_expect *e, const strata_bound_op *op,
                                                      const engine_op_extra *x, size_t name_len)
{
    uint64_t mask = mask_of(e, op, x);
    *p++ = (uint8_t)op->kind;
    p = put_varint(p, mask);
    for (uint64_t m = mask; m; m &= m - 1) /* in bit order */
        p = put_field(p, __builtin_ctzll(m), e, op, x, name_len);
    return p;
}

/* engine_tape_put's body, inlined into its two entries: the general one,
 * and engine_tape_put_named's (named), where x is a local whose fields
 * other than the name are constants, so that its tests of them fold away;
 * its general form is given an extra of its own, so that x stays out of
 * memory on the fast form's path. */
static inline __attribute__((always_inline)) bool put_as(engine_tape *t, const strata_bound_op *op,
                                                        const engine_op_extra *x, bool named)
{
    if ((unsigned)op->kind > GENERAL_KIND_MAX || (op->n_ins && !op->ins) || (op->n_outs && !op->outs) ||
        (x->n_donated && !x->donated))
        return false;
    size_t name_len = x->name ? strlen(x->name) : 0;
    size_t need = 1 + VARINT_MAX * (F__COUNT + 3 + (size_t)op->n_ins + op->n_outs + x->n_donated) + name_len + 1;
    if (!reserve(t, need))
        return false;
    const tape_expect *e = &t->put;
    uint8_t *start = t->tail->data + t->tail->used, *p = start;
    if (fast_form(e, op, x)) {
        p = put_fast(p, e, op, x, name_len);
    } else if (named) {
        const engine_op_extra general = {.name = x->name};
        p = put_general(p, e, op, &general, name_len);
    } else {
        p = put_general(p, e, op, x, name_len);
    }
    assert((size_t)(p - start) <= need); /* invariant 2: the op fits the room reserved */
    t->tail->used += (size_t)(p - start);
    assert(t->tail->used <= t->tail->cap && t->bytes <= t->budget); /* invariant 2 */
    expect_after(&t->put, op);
    return true;
}

bool engine_tape_put(engine_tape *t, const strata_bound_op *op, const engine_op_extra *x)
{
    return put_as(t, op, x, false);
}

bool engine_tape_put_named(engine_tape *t, const strata_bound_op *op, const char *name)
{
    const engine_op_extra x = {.name = name};
    return put_as(t, op, &x, true);
}

/* The list of ids at p (count, then codes) into the replay's scratch after
 * its first *used ids (the scratch may move: pointers into it are taken
 * once the op is read). */
static __attribute__((noinline)) const uint8_t *get_id_list_some(engine_tape *t, const uint8_t *p, size_t *used,
                                                                 uint32_t *n)
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

/* The same, an empty list (a compute's outs and donated, most often) read
 * inline: its count, 0, is one byte. */
static inline __attribute__((always_inline)) const uint8_t *get_id_list(engine_tape *t, const uint8_t *p,
                                                                        size_t *used, uint32_t *n)
{
    if (*p == 0) {
        *n = 0;
        return p + 1;
    }
    return get_id_list_some(t, p, used, n);
}

/* Per codec: a field read at p (statements: p moves past it). */
#define GET_VARINT(f, aux)                                                                                         \
    p = get_varint(p, &v);                                                                                         \
    f = v;
#define GET_ID(f, aux)                                                                                             \
    p = get_varint(p, &v);                                                                                         \
    f = id_decode(e, v);
#define GET_F64(f, aux) p = get_raw(p, &(f), sizeof(f));
#define GET_FLAG(f, aux) f = true;
#define GET_NAME(f, aux)                                                                                           \
    p = get_varint(p, &v);                                                                                         \
    f = (const char *)p;                                                                                           \
    p += v + 1;
#define GET_IDS(f, aux) p = get_id_list(t, p, used, &(aux));

/* Reads field f (one set in the op's mask) at p into op or x. */
static const uint8_t *get_field(engine_tape *t, const uint8_t *p, int f, strata_bound_op *op, engine_op_extra *x,
                                size_t *used)
{
    const tape_expect *e = &t->got;
    uint64_t v = 0;
    switch (f) {
#define FIELD(id, codec, f, aux, expect, fast)                                                                     \
    case F_##id: {                                                                                                 \
        GET_##codec(f, aux) break;                                                                                 \
    }
        TAPE_FIELDS(FIELD)
#undef FIELD
    default: break;
    }
    return p;
}

/* Per codec: a field set to what is expected (a list: empty). */
#define EXPECT_VARINT(f, aux, expect) f = (expect);
#define EXPECT_ID(f, aux, expect) f = (expect);
#define EXPECT_F64(f, aux, expect) f = (expect);
#define EXPECT_FLAG(f, aux, expect) f = (expect);
#define EXPECT_NAME(f, aux, expect) f = (expect);
#define EXPECT_IDS(f, aux, expect)                                                                                 \
    f = (expect);                                                                                                  \
    aux = 0;

/* Sets every field of op and x that the tape keeps to what e expects of
 * an op of this kind. Field by field: a struct assignment compiles to a
 * string store, several times slower here. */
static inline __attribute__((always_inline)) void expect(const tape_expect *e, strata_op_kind kind,
                                                         strata_bound_op *op, engine_op_extra *x)
{
    op->op = NULL;
    op->kind = kind;
#define FIELD(id, codec, f, aux, expect, fast) EXPECT_##codec(f, aux, expect)
    TAPE_FIELDS(FIELD)
#undef FIELD
}

/* Reads the rest of an op in the fast form (after its first byte, `flags`
 * with its kind) into op, set to the defaults by expect(), and x. */
static inline __attribute__((always_inline)) const uint8_t *get_fast_as(engine_tape *t, const uint8_t *p,
                                                                        uint8_t flags, strata_bound_op *op,
                                                                        engine_op_extra *x, strata_op_kind kind)
{
    const tape_expect *e = &t->got;
    uint64_t v = 0, w = 0;
    p = get_varint(p, &v);
    op->line = e->line + 1 + v;
    if (flags & FAST_SKIP) {
        p = get_varint(p, &v);
        op->index = e->index + v;
    }
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
        op->tag = (strata_tag)(w >> 1);
        if (w & 1)
            p = get_varint(get_varint(p, &x->rows), &x->cols);
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
        op->dtype = (strata_dtype)(w >> 2);
        x->kernel = (w & 1) != 0;
        if (w & 2) {
            p = get_raw(p, &x->kernel_flops, sizeof x->kernel_flops);
            p = get_varint(p, &x->kernel_bytes);
            p = get_raw(p, &x->kernel_s, sizeof x->kernel_s);
        }
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

/* The fast form of each kind, its defaults and its fields in one case with
 * the kind a constant, so that the defaults its fields then overwrite are
 * not stored (the defaults of every field, expect(), then the op's). */
static const uint8_t *get_fast(engine_tape *t, const uint8_t *p, uint8_t flags, strata_bound_op *op,
                               engine_op_extra *x)
{
#define FAST_CASE(k)                                                                                               \
    case STRATA_OP_##k:                                                                                            \
        expect(&t->got, STRATA_OP_##k, op, x);                                                                     \
        return get_fast_as(t, p, flags, op, x, STRATA_OP_##k);
    switch ((strata_op_kind)(flags & FAST_KIND)) {
        FAST_CASE(ALLOC)
        FAST_CASE(FREE)
        FAST_CASE(COPY)
        FAST_CASE(COMPUTE)
        FAST_CASE(RECORD)
        default:
        FAST_CASE(WAIT)
    }
#undef FAST_CASE
}

int engine_tape_next(engine_tape *t, strata_bound_op *op, engine_op_extra *x)
{
    if (!t->at)
        t->at = t->head;
    while (t->at && t->pos == t->at->used) {
        tape_chunk *done = t->at;
        t->at = done->next;
        if (!t->at && t->n_spilled > 0 && !(t->at = unspill(t)))
            return -1; /* done stays: the tape is freed whole */
        t->head = t->at;
        if (!t->head)
            t->tail = NULL;
        t->pos = 0;
        chunk_done(t, done);
    }
    if (!t->at)
        return 0;
    const uint8_t *p = t->at->data + t->pos;
    uint8_t kind = *p++;
    if (kind & FAST) {
        p = get_fast(t, p, kind, op, x);
    } else {
        expect(&t->got, (strata_op_kind)kind, op, x);
        uint64_t mask = 0;
        p = get_varint(p, &mask);
        size_t used = 0;
        for (uint64_t m = mask; m; m &= m - 1) /* in bit order */
            p = get_field(t, p, __builtin_ctzll(m), op, x, &used);
    }
    /* The lists, read in the table's order into the scratch (which may
     * have moved while they were read). */
    size_t at = 0;
#define FIX_VARINT(f, aux)
#define FIX_ID(f, aux)
#define FIX_F64(f, aux)
#define FIX_FLAG(f, aux)
#define FIX_NAME(f, aux)
#define FIX_IDS(f, aux)                                                                                            \
    if (aux) {                                                                                                     \
        f = t->ids + at;                                                                                           \
        at += aux;                                                                                                 \
    }
#define FIELD(id, codec, f, aux, expect, fast) FIX_##codec(f, aux)
    TAPE_FIELDS(FIELD)
#undef FIELD
    t->pos = (size_t)(p - t->at->data);
    assert(t->pos <= t->at->used); /* invariant 1: an op is read back from where it was put */
    assert(op->n_ins == 0 || op->ins); /* invariant 1 */
    assert(op->n_outs == 0 || op->outs); /* invariant 1 */
    expect_after(&t->got, op);
    return 1;
}
