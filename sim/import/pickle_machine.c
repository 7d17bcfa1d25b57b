/*
 * pickle_machine.c: the opcode machine of the pickle reader (see
 * pickle_machine.h).
 *
 * Python's unpickler keeps a stack of values and a "metastack" of marks.
 * We keep one flat stack and the stack heights at each MARK; a pop below
 * the innermost mark is a stack underflow, exactly where Python fails.
 * Each opcode is an entry of one table (name, operand, memo role,
 * handler); run() reads the operand the entry describes and calls its
 * handler. Opcodes that would import or call have an entry with no handler
 * and are refused by name. The literals inside operands (decimal text,
 * quoted strings) are decoded by pickle_literal.c.
 */
#include "import/pickle_machine.h"

#include <string.h>

#include "core/error.h"
#include "import/pickle_literal.h"
#include "import/pickle_stream.h"

/* ---- errors -------------------------------------------------------------- */

static bool fail(parser *ps, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool fail(parser *ps, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(ps->err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: offset %zu: %s", ps->p->origin,
                ps->op_at, msg);
    g_free(msg);
    return false;
}

/* Fails with a message the literal decoders made (and frees it). */
static bool fail_with(parser *ps, char *why)
{
    fail(ps, "%s", why);
    g_free(why);
    return false;
}

/* ---- stack ---------------------------------------------------------------- */

static bool push(parser *ps, strata_pv v)
{
    if (ps->n_stack == ps->cap_stack) {
        ps->cap_stack = ps->cap_stack ? ps->cap_stack * 2 : 256;
        ps->stack = g_renew(strata_pv, ps->stack, ps->cap_stack);
    }
    ps->stack[ps->n_stack++] = v;
    return true;
}

size_t strata_pickle_stack_base(const parser *ps)
{
    return ps->n_marks ? ps->marks[ps->n_marks - 1] : 0;
}

static bool pop(parser *ps, const char *opname, strata_pv *v)
{
    if (ps->n_stack <= strata_pickle_stack_base(ps))
        return fail(ps, "%s on an empty stack", opname);
    *v = ps->stack[--ps->n_stack];
    return true;
}

static bool top(parser *ps, const char *opname, strata_pv *v)
{
    if (ps->n_stack <= strata_pickle_stack_base(ps))
        return fail(ps, "%s on an empty stack", opname);
    *v = ps->stack[ps->n_stack - 1];
    return true;
}

/* Pops the innermost mark; *first is the stack index of the first item above it. */
static bool pop_mark(parser *ps, const char *opname, size_t *first)
{
    if (ps->n_marks == 0)
        return fail(ps, "%s without a MARK", opname);
    *first = ps->marks[--ps->n_marks];
    return true;
}

/* Node limit: handles and cell links are 32-bit. */
static bool room(parser *ps)
{
    if (ps->p->space.n_nodes >= PV_INT_TAG - 1 || ps->p->space.n_cells >= UINT32_MAX - 1)
        return fail(ps, "pickle holds more than 2^31 values; not supported");
    return true;
}

static bool push_new(parser *ps, strata_pickle_type type, uint32_t a, uint64_t u)
{
    if (type == STRATA_PICKLE_INT && u < PV_INT_TAG)
        return push(ps, (strata_pv)u | PV_INT_TAG);
    if (!room(ps))
        return false;
    return push(ps, strata_pickle_new_node(ps->p, type, a, u));
}

static bool push_scalar(parser *ps, pickle_scalar v) { return push_new(ps, v.type, 0, v.u); }

/* A new list or dict to be pushed at stack index i (has_items: built from
 * items already on the stack, so it cannot be handed out item by item). */
static strata_pv new_container(parser *ps, strata_pickle_type type, size_t i, bool has_items)
{
    uint64_t outer = 0;
    uint32_t tag = ps->stream ? strata_pickle_stream_tag(ps->stream, ps, type, i, has_items, &outer)
                              : 0;
    return strata_pickle_new_node(ps->p, (uint32_t)type | (tag << 8), 0, outer);
}

/* Is v a list whose items are handed out rather than kept? */
static bool handed_out(const parser *ps, strata_pv v)
{
    if (ps->stream == NULL || PV_IS_INT(v))
        return false;
    return strata_pickle_stream_hands_out(ps->stream, NODE_TAG(&ps->p->space.nodes[v]));
}

/* Stops run() to hand out the items stack[first ..] of list `list`. */
static void pause_for_items(parser *ps, strata_pv list, size_t first)
{
    ps->paused = true;
    ps->pend_list = list;
    ps->pend_first = ps->pend_next = first;
}

/* ---- memo ----------------------------------------------------------------- */

/* n_memo counts the distinct keys set, as len(memo) does in Python. Without
 * the dense memo array, keys 0, 1, 2... (what every pickler writes) need no
 * storage; any other key order switches to a bit per key (keys are bounded
 * by the input offset, see memo_put). */
static void note_key(parser *ps, uint64_t key)
{
    if (ps->keys_dense) {
        if (key < ps->n_memo)
            return;
        if (key == ps->n_memo) {
            ps->n_memo++;
            return;
        }
        ps->keys_dense = false;
        ps->n_key_words = (size_t)(ps->n_memo / 64 + 1);
        ps->key_bits = g_new0(uint64_t, ps->n_key_words);
        for (uint64_t k = 0; k < ps->n_memo; k++)
            ps->key_bits[k / 64] |= UINT64_C(1) << (k % 64);
    }
    if (key / 64 >= ps->n_key_words) {
        size_t words = ps->n_key_words;
        while (words <= key / 64)
            words *= 2;
        ps->key_bits = g_renew(uint64_t, ps->key_bits, words);
        memset(ps->key_bits + ps->n_key_words, 0, (words - ps->n_key_words) * sizeof(uint64_t));
        ps->n_key_words = words;
    }
    uint64_t bit = UINT64_C(1) << (key % 64);
    if (!(ps->key_bits[key / 64] & bit)) {
        ps->key_bits[key / 64] |= bit;
        ps->n_memo++;
    }
}

static bool memo_put(parser *ps, uint64_t key, strata_pv v)
{
    /* A real pickler numbers memo entries 0, 1, 2... so a key can never
     * exceed the number of bytes read so far: this bounds the memo by the
     * input size whatever the key says. */
    if (key > ps->pos)
        return fail(ps, "memo key %" G_GUINT64_FORMAT " is out of range", key);
    if (ps->plan) {
        /* Streaming: keep the value only if a GET reads it later. */
        note_key(ps, key);
        memo_slot *s = strata_pickle_plan_find(ps->plan, key);
        if (s)
            s->value = s->last_get > ps->op_at ? v : STRATA_PV_NULL;
        return true;
    }
    if (key >= ps->cap_memo) {
        size_t cap = ps->cap_memo ? ps->cap_memo : 256;
        while (cap <= key)
            cap *= 2;
        ps->memo = g_renew(strata_pv, ps->memo, cap);
        memset(ps->memo + ps->cap_memo, 0, (cap - ps->cap_memo) * sizeof(strata_pv));
        ps->cap_memo = cap;
    }
    if (ps->memo[key] == STRATA_PV_NULL)
        ps->n_memo++;
    ps->memo[key] = v;
    return true;
}

static bool memo_get(parser *ps, uint64_t key)
{
    if (ps->plan) {
        memo_slot *s = strata_pickle_plan_find(ps->plan, key);
        if (s == NULL || s->value == STRATA_PV_NULL)
            return fail(ps, "memo key %" G_GUINT64_FORMAT " was never stored", key);
        strata_pv v = s->value;
        if (s->last_get == ps->op_at)
            s->value = STRATA_PV_NULL; /* its last reader: the memo lets go of it */
        return push(ps, v);
    }
    if (key >= ps->cap_memo || ps->memo[key] == STRATA_PV_NULL)
        return fail(ps, "memo key %" G_GUINT64_FORMAT " was never stored", key);
    return push(ps, ps->memo[key]);
}

/* ---- strings --------------------------------------------------------------- */

static bool push_str_ref(parser *ps, strata_pickle_type type, size_t off, uint64_t n)
{
    if (n > UINT32_MAX)
        return fail(ps, "a string of %" G_GUINT64_FORMAT " bytes is longer than supported", n);
    if (type == STRATA_PICKLE_STR &&
        !g_utf8_validate((const char *)ps->p->data + off, (gssize)n, NULL))
        return fail(ps, "string is not valid UTF-8");
    return push_new(ps, type, (uint32_t)n, (uint64_t)off);
}


/* A decoded str (NULL: the error in why), copied into the arena. */
static bool push_buf_str(parser *ps, GString *s, char *why)
{
    strata_pickle *p = ps->p;
    if (s == NULL)
        return fail_with(ps, why);
    if (s->len > UINT32_MAX) {
        g_string_free(s, TRUE);
        return fail(ps, "string too long");
    }
    uint64_t off = p->space.strbuf->len;
    g_byte_array_append(p->space.strbuf, (const guint8 *)s->str, (guint)s->len);
    uint32_t n = (uint32_t)s->len;
    g_string_free(s, TRUE);
    if (!room(ps))
        return false;
    return push(ps, strata_pickle_new_node(p, STRATA_PICKLE_STR, n, off | STR_IN_BUF));
}

/* ---- containers -------------------------------------------------------------- */

static bool container_of(parser *ps, const char *opname, strata_pv v, strata_pickle_type want)
{
    strata_pickle_type t = strata_pickle_type_of(ps->p, v);
    if (t != want)
        return fail(ps, "%s expects a %s below its items, found a %s", opname,
                    strata_pickle_type_name(want), strata_pickle_type_name(t));
    return true;
}

/* Moves stack[first..] into container c (pairs for dicts), then drops them. */
static bool fill_from(parser *ps, const char *opname, strata_pv c, size_t first, bool pairs)
{
    size_t n = ps->n_stack - first;
    if (pairs && (n % 2) != 0)
        return fail(ps, "%s has an odd number of items (a key without a value)", opname);
    for (size_t i = first; i < ps->n_stack; i += pairs ? 2 : 1) {
        if (!room(ps))
            return false;
        if (pairs)
            strata_pickle_container_add(ps->p, c, ps->stack[i], ps->stack[i + 1]);
        else
            strata_pickle_container_add(ps->p, c, STRATA_PV_NULL, ps->stack[i]);
    }
    ps->n_stack = first;
    return true;
}

/* Builds a new container from the items above the innermost mark. */
static bool build_from_mark(parser *ps, const char *opname, strata_pickle_type type)
{
    size_t first = 0;
    if (!pop_mark(ps, opname, &first) || !room(ps))
        return false;
    strata_pv c = new_container(ps, type, first, ps->n_stack > first);
    if (!fill_from(ps, opname, c, first, type == STRATA_PICKLE_DICT))
        return false;
    return push(ps, c);
}

/* Adds the items above the innermost mark to the container just below it. */
static bool extend_from_mark(parser *ps, const char *opname, strata_pickle_type type)
{
    size_t first = 0;
    if (!pop_mark(ps, opname, &first))
        return false;
    if (first <= strata_pickle_stack_base(ps) || first == 0)
        return fail(ps, "%s has no %s below its MARK", opname, strata_pickle_type_name(type));
    strata_pv c = ps->stack[first - 1];
    if (!container_of(ps, opname, c, type))
        return false;
    if (handed_out(ps, c)) {
        if (ps->n_stack > first)
            pause_for_items(ps, c, first);
        return true;
    }
    return fill_from(ps, opname, c, first, type == STRATA_PICKLE_DICT);
}

static bool tuple_n(parser *ps, const char *opname, size_t n)
{
    if (ps->n_stack - strata_pickle_stack_base(ps) < n)
        return fail(ps, "%s needs %zu items on the stack", opname, n);
    if (!room(ps))
        return false;
    strata_pv c = strata_pickle_new_node(ps->p, STRATA_PICKLE_TUPLE, 0, 0);
    if (!fill_from(ps, opname, c, ps->n_stack - n, false))
        return false;
    return push(ps, c);
}

/* ---- opcodes ----------------------------------------------------------------- */

/* Opcodes that import or call: rejected by name. */

/* ---- opcode handlers ------------------------------------------------------- */

static run_step go(bool ok) { return ok ? RUN_GO : RUN_FAIL; }

/* A handler: not every one reads its entry or its operand. */
#define HANDLER(fn)                                                                             \
    static run_step fn(parser *ps, G_GNUC_UNUSED const pickle_op *op,                          \
                       G_GNUC_UNUSED const uint8_t *arg, G_GNUC_UNUSED size_t n)

HANDLER(op_proto)
{
    ps->p->protocol = arg[0];
    if (ps->p->protocol > 5)
        return fail(ps, "unsupported pickle protocol %d (0 to 5 are known)", ps->p->protocol);
    return RUN_GO;
}

/* FRAME: a hint only; its length must fit in what remains. */
HANDLER(op_frame)
{
    uint64_t frame = strata_pickle_read_le(arg, 8);
    if (frame > ps->p->len - ps->pos)
        return fail(ps, "truncated pickle: FRAME of %" G_GUINT64_FORMAT
                        " bytes runs past the end of the file", frame);
    return RUN_GO;
}

HANDLER(op_stop)
{
    if (ps->n_marks != 0)
        return fail(ps, "STOP with an unclosed MARK");
    if (ps->n_stack != 1)
        return fail(ps, "STOP with %zu values on the stack (expected 1)", ps->n_stack);
    if (ps->pos != ps->p->len)
        return fail(ps, "%zu bytes of trailing data after STOP", ps->p->len - ps->pos);
    ps->p->root = ps->stack[0];
    return RUN_RETURN;
}

HANDLER(op_mark)
{
    if (ps->n_marks >= STRATA_PICKLE_MAX_MARKS)
        return fail(ps, "MARKs nested deeper than %d", STRATA_PICKLE_MAX_MARKS);
    if (ps->n_marks == ps->cap_marks) {
        ps->cap_marks = ps->cap_marks ? ps->cap_marks * 2 : 64;
        ps->marks = g_renew(size_t, ps->marks, ps->cap_marks);
    }
    ps->marks[ps->n_marks++] = ps->n_stack;
    return RUN_GO;
}

HANDLER(op_pop)
{
    if (ps->n_stack > strata_pickle_stack_base(ps))
        ps->n_stack--;
    else if (ps->n_marks > 0)
        ps->n_marks--; /* Python pops the mark when the frame is empty */
    else
        return fail(ps, "POP on an empty stack");
    return RUN_GO;
}

HANDLER(op_pop_mark)
{
    size_t first = 0;
    if (!pop_mark(ps, op->name, &first))
        return RUN_FAIL;
    ps->n_stack = first;
    return RUN_GO;
}

HANDLER(op_dup)
{
    strata_pv v = 0;
    return go(top(ps, op->name, &v) && push(ps, v));
}

/* None, (), an empty set (param: the type). */
HANDLER(op_const)
{
    return go(push_new(ps, (strata_pickle_type)op->param, 0, 0));
}

/* NEWTRUE, NEWFALSE (param: the value). */
HANDLER(op_bool)
{
    return go(push_new(ps, STRATA_PICKLE_BOOL, 0, (uint64_t)op->param));
}

/* BININT1, BININT2 (unsigned), BININT (param 1: signed 32-bit). */
HANDLER(op_binint)
{
    uint64_t v = strata_pickle_read_le(arg, n);
    if (op->param)
        v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
    return go(push_new(ps, STRATA_PICKLE_INT, 0, v));
}

HANDLER(op_long_bytes)
{
    return go(push_scalar(ps, strata_pickle_twos_complement(arg, n)));
}

static bool push_decimal(parser *ps, const char *opname, const char *s, size_t n)
{
    pickle_scalar v;
    char *why = NULL;
    if (!strata_pickle_decimal(opname, s, n, &v, &why))
        return fail_with(ps, why);
    return push_scalar(ps, v);
}

/* INT: decimal text; 01 and 00 are True and False. */
HANDLER(op_int_text)
{
    const char *line = (const char *)arg;
    if (n == 2 && line[0] == '0' && (line[1] == '0' || line[1] == '1'))
        return go(push_new(ps, STRATA_PICKLE_BOOL, 0, line[1] == '1'));
    return go(push_decimal(ps, op->name, line, n));
}

/* LONG: decimal text with an optional trailing L. */
HANDLER(op_long_text)
{
    if (n > 0 && arg[n - 1] == 'L')
        n--;
    return go(push_decimal(ps, op->name, (const char *)arg, n));
}

HANDLER(op_float_text)
{
    char *t = g_strndup((const char *)arg, n);
    char *end = NULL;
    double x = g_ascii_strtod(t, &end);
    bool ok = n > 0 && end && *end == '\0';
    g_free(t);
    if (!ok)
        return fail(ps, "FLOAT expects a number");
    return go(push_scalar(ps, strata_pickle_scalar_double(STRATA_PICKLE_FLOAT, x)));
}

/* BINFLOAT: big-endian IEEE 754 double. */
HANDLER(op_binfloat)
{
    uint64_t bits = 0;
    for (int i = 0; i < 8; i++)
        bits = (bits << 8) | arg[i];
    return go(push_new(ps, STRATA_PICKLE_FLOAT, 0, bits));
}

HANDLER(op_quoted)
{
    char *why = NULL;
    GString *text = strata_pickle_quoted((const char *)arg, n, &why);
    return go(push_buf_str(ps, text, why));
}

HANDLER(op_raw_unicode)
{
    char *why = NULL;
    GString *text = strata_pickle_raw_unicode((const char *)arg, n, &why);
    return go(push_buf_str(ps, text, why));
}

/* A counted str or bytes (param: which), referenced in the input. */
HANDLER(op_counted)
{
    return go(push_str_ref(ps, (strata_pickle_type)op->param, (size_t)(arg - ps->p->data), n));
}

/* BINSTRING, SHORT_BINSTRING: Python 2 str, decoded as ASCII by Python 3. */
HANDLER(op_binstring)
{
    if (!push_str_ref(ps, STRATA_PICKLE_BYTES, (size_t)(arg - ps->p->data), n))
        return RUN_FAIL;
    for (size_t i = 0; i < n; i++)
        if (arg[i] >= 0x80)
            return fail(ps, "%s holds non-ASCII bytes", op->name);
    ps->p->space.nodes[ps->stack[ps->n_stack - 1]].type = STRATA_PICKLE_STR;
    return RUN_GO;
}

/* EMPTY_DICT, EMPTY_LIST: containers a stream may place on a path. */
HANDLER(op_empty)
{
    return go(room(ps) &&
              push(ps, new_container(ps, (strata_pickle_type)op->param, ps->n_stack, false)));
}

HANDLER(op_build)
{
    return go(build_from_mark(ps, op->name, (strata_pickle_type)op->param));
}

/* TUPLE1..3 (param: the count); messages name them TUPLEn. */
HANDLER(op_tuple_n)
{
    return go(tuple_n(ps, "TUPLEn", (size_t)op->param));
}

HANDLER(op_append)
{
    strata_pv v = 0, c = 0;
    if (!pop(ps, op->name, &v) || !top(ps, op->name, &c) ||
        !container_of(ps, op->name, c, STRATA_PICKLE_LIST) || !room(ps))
        return RUN_FAIL;
    if (handed_out(ps, c)) {
        ps->n_stack++; /* the item, back on top, is handed out */
        pause_for_items(ps, c, ps->n_stack - 1);
        return RUN_RETURN;
    }
    strata_pickle_container_add(ps->p, c, STRATA_PV_NULL, v);
    return RUN_GO;
}

/* APPENDS, ADDITEMS, SETITEMS (param: the container's type). */
HANDLER(op_extend)
{
    if (!extend_from_mark(ps, op->name, (strata_pickle_type)op->param))
        return RUN_FAIL;
    return ps->paused ? RUN_RETURN : RUN_GO;
}

HANDLER(op_setitem)
{
    strata_pv v = 0, k = 0, c = 0;
    if (!pop(ps, op->name, &v) || !pop(ps, op->name, &k) || !top(ps, op->name, &c) ||
        !container_of(ps, op->name, c, STRATA_PICKLE_DICT) || !room(ps))
        return RUN_FAIL;
    strata_pickle_container_add(ps->p, c, k, v);
    return RUN_GO;
}

/* PUT, BINPUT, LONG_BINPUT, MEMOIZE (the next key). */
HANDLER(op_put)
{
    uint64_t key = ps->n_memo;
    strata_pv v = 0;
    if (op->memo == MEMO_PUT && !strata_pickle_memo_key(op, arg, n, &key))
        return fail(ps, "%s expects a memo key", op->name);
    return go(top(ps, op->name, &v) && memo_put(ps, key, v));
}

/* GET, BINGET, LONG_BINGET. */
HANDLER(op_get)
{
    uint64_t key = 0;
    if (!strata_pickle_memo_key(op, arg, n, &key))
        return fail(ps, "%s expects a memo key", op->name);
    return go(memo_get(ps, key));
}

/* ---- the opcode table -------------------------------------------------------- */

#define OP(nm, kind, w, fn, prm) {nm, kind, w, false, MEMO_NONE, prm, fn}
#define OP_SIGNED(nm, kind, w, fn) {nm, kind, w, true, MEMO_NONE, 0, fn}
#define OP_MEMO(nm, kind, w, role, fn) {nm, kind, w, false, role, 0, fn}
#define REFUSED(nm) {nm, ARG_NONE, 0, false, MEMO_NONE, 0, NULL}

const pickle_op strata_pickle_ops[256] = {
    [0x80] = OP("PROTO", ARG_FIXED, 1, op_proto, 0),
    [0x95] = OP("FRAME", ARG_FIXED, 8, op_frame, 0),
    ['.'] = OP_MEMO("STOP", ARG_NONE, 0, MEMO_STOP, op_stop),
    ['('] = OP("MARK", ARG_NONE, 0, op_mark, 0),
    ['0'] = OP("POP", ARG_NONE, 0, op_pop, 0),
    ['1'] = OP("POP_MARK", ARG_NONE, 0, op_pop_mark, 0),
    ['2'] = OP("DUP", ARG_NONE, 0, op_dup, 0),
    ['N'] = OP("NONE", ARG_NONE, 0, op_const, STRATA_PICKLE_NONE),
    [0x88] = OP("NEWTRUE", ARG_NONE, 0, op_bool, 1),
    [0x89] = OP("NEWFALSE", ARG_NONE, 0, op_bool, 0),
    [')'] = OP("EMPTY_TUPLE", ARG_NONE, 0, op_const, STRATA_PICKLE_TUPLE),
    [0x8f] = OP("EMPTY_SET", ARG_NONE, 0, op_const, STRATA_PICKLE_SET),
    ['K'] = OP("BININT1", ARG_FIXED, 1, op_binint, 0),
    ['M'] = OP("BININT2", ARG_FIXED, 2, op_binint, 0),
    ['J'] = OP("BININT", ARG_FIXED, 4, op_binint, 1),
    [0x8a] = OP("LONG1", ARG_LONG, 1, op_long_bytes, 0),
    [0x8b] = OP_SIGNED("LONG4", ARG_LONG, 4, op_long_bytes),
    ['I'] = OP("INT", ARG_LINE, 0, op_int_text, 0),
    ['L'] = OP("LONG", ARG_LINE, 0, op_long_text, 0),
    ['F'] = OP("FLOAT", ARG_LINE, 0, op_float_text, 0),
    ['G'] = OP("BINFLOAT", ARG_FIXED, 8, op_binfloat, 0),
    ['S'] = OP("STRING", ARG_LINE, 0, op_quoted, 0),
    ['V'] = OP("UNICODE", ARG_LINE, 0, op_raw_unicode, 0),
    ['T'] = OP_SIGNED("BINSTRING", ARG_TEXT, 4, op_binstring),
    ['U'] = OP("SHORT_BINSTRING", ARG_TEXT, 1, op_binstring, 0),
    ['X'] = OP("BINUNICODE", ARG_TEXT, 4, op_counted, STRATA_PICKLE_STR),
    [0x8c] = OP("SHORT_BINUNICODE", ARG_TEXT, 1, op_counted, STRATA_PICKLE_STR),
    [0x8d] = OP("BINUNICODE8", ARG_TEXT, 8, op_counted, STRATA_PICKLE_STR),
    ['B'] = OP("BINBYTES", ARG_TEXT, 4, op_counted, STRATA_PICKLE_BYTES),
    ['C'] = OP("SHORT_BINBYTES", ARG_TEXT, 1, op_counted, STRATA_PICKLE_BYTES),
    [0x8e] = OP("BINBYTES8", ARG_TEXT, 8, op_counted, STRATA_PICKLE_BYTES),
    [0x96] = OP("BYTEARRAY8", ARG_TEXT, 8, op_counted, STRATA_PICKLE_BYTES),
    ['}'] = OP("EMPTY_DICT", ARG_NONE, 0, op_empty, STRATA_PICKLE_DICT),
    [']'] = OP("EMPTY_LIST", ARG_NONE, 0, op_empty, STRATA_PICKLE_LIST),
    ['d'] = OP("DICT", ARG_NONE, 0, op_build, STRATA_PICKLE_DICT),
    ['l'] = OP("LIST", ARG_NONE, 0, op_build, STRATA_PICKLE_LIST),
    ['t'] = OP("TUPLE", ARG_NONE, 0, op_build, STRATA_PICKLE_TUPLE),
    [0x91] = OP("FROZENSET", ARG_NONE, 0, op_build, STRATA_PICKLE_SET),
    [0x85] = OP("TUPLE1", ARG_NONE, 0, op_tuple_n, 1),
    [0x86] = OP("TUPLE2", ARG_NONE, 0, op_tuple_n, 2),
    [0x87] = OP("TUPLE3", ARG_NONE, 0, op_tuple_n, 3),
    ['a'] = OP("APPEND", ARG_NONE, 0, op_append, 0),
    ['e'] = OP("APPENDS", ARG_NONE, 0, op_extend, STRATA_PICKLE_LIST),
    [0x90] = OP("ADDITEMS", ARG_NONE, 0, op_extend, STRATA_PICKLE_SET),
    ['s'] = OP("SETITEM", ARG_NONE, 0, op_setitem, 0),
    ['u'] = OP("SETITEMS", ARG_NONE, 0, op_extend, STRATA_PICKLE_DICT),
    ['p'] = OP_MEMO("PUT", ARG_LINE, 0, MEMO_PUT, op_put),
    ['q'] = OP_MEMO("BINPUT", ARG_FIXED, 1, MEMO_PUT, op_put),
    ['r'] = OP_MEMO("LONG_BINPUT", ARG_FIXED, 4, MEMO_PUT, op_put),
    [0x94] = OP_MEMO("MEMOIZE", ARG_NONE, 0, MEMO_PUT_NEXT, op_put),
    ['g'] = OP_MEMO("GET", ARG_LINE, 0, MEMO_GET, op_get),
    ['h'] = OP_MEMO("BINGET", ARG_FIXED, 1, MEMO_GET, op_get),
    ['j'] = OP_MEMO("LONG_BINGET", ARG_FIXED, 4, MEMO_GET, op_get),
    /* They import or call: refused by name. */
    ['c'] = REFUSED("GLOBAL"),
    [0x93] = REFUSED("STACK_GLOBAL"),
    ['R'] = REFUSED("REDUCE"),
    ['b'] = REFUSED("BUILD"),
    ['i'] = REFUSED("INST"),
    ['o'] = REFUSED("OBJ"),
    [0x81] = REFUSED("NEWOBJ"),
    [0x92] = REFUSED("NEWOBJ_EX"),
    [0x82] = REFUSED("EXT1"),
    [0x83] = REFUSED("EXT2"),
    [0x84] = REFUSED("EXT4"),
    ['P'] = REFUSED("PERSID"),
    ['Q'] = REFUSED("BINPERSID"),
    [0x97] = REFUSED("NEXT_BUFFER"),
    [0x98] = REFUSED("READONLY_BUFFER"),
};

/* ---- run ------------------------------------------------------------------- */

static bool operand_error(parser *ps, const pickle_op *op, pickle_operand_status st, size_t n)
{
    size_t left = ps->p->len - ps->pos;
    switch (st) {
    case OPERAND_NEGATIVE: return fail(ps, "%s has a negative length", op->name);
    case OPERAND_NO_EOL:
        return fail(ps, "truncated pickle: %s argument has no end of line", op->name);
    case OPERAND_SHORT_PAYLOAD:
        if (op->arg == ARG_TEXT)
            return fail(ps, "truncated pickle: %s of %zu bytes, only %zu remain", op->name, n,
                        left);
        break;
    default: break;
    }
    return fail(ps, "truncated pickle: %s needs %zu bytes, only %zu remain", op->name, n, left);
}

bool strata_pickle_run(parser *ps)
{
    const strata_pickle *p = ps->p;
    for (;;) {
        ps->op_at = ps->pos;
        if (ps->pos >= p->len)
            return fail(ps, "truncated pickle: no STOP opcode before the end of the file");
        uint8_t code = p->data[ps->pos++];
        const pickle_op *op = &strata_pickle_ops[code];
        if (op->run == NULL) {
            if (op->name)
                return fail(ps,
                            "refusing opcode %s (0x%02x): it would import or call Python "
                            "code; a memory snapshot holds only plain data",
                            op->name, code);
            return fail(ps, "unknown or corrupt opcode 0x%02x", code);
        }
        const uint8_t *arg = NULL;
        size_t n = 0;
        pickle_operand_status st = strata_pickle_operand(op, p->data, p->len, &ps->pos, &arg, &n);
        if (st != OPERAND_OK)
            return operand_error(ps, op, st, n);
        run_step step = op->run(ps, op, arg, n);
        if (step != RUN_GO)
            return step == RUN_RETURN;
    }
}
