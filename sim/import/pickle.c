/*
 * pickle.c: the safe pickle reader (see pickle.h for the contract).
 *
 * Design notes:
 *  - One pass over the input with a position `pos` and an end `len`; every
 *    read goes through need(), which fails unless `n` bytes remain (so no
 *    length field, however large, can make us read past the end or
 *    allocate for bytes that are not there).
 *  - Python's unpickler keeps a stack of values and a "metastack" of marks.
 *    We keep one flat stack and the stack heights at each MARK; a pop below
 *    the innermost mark is a stack underflow, exactly where Python fails.
 *  - Values live in `nodes` (16 bytes each); items of lists, tuples, sets
 *    and dicts are `cells` chained from the container (head, tail, count),
 *    so appending is O(1) and no container owns a separate allocation.
 *  - str/bytes nodes reference the input by offset; the few values that need
 *    decoding (protocol 0 text strings, raw-unicode-escape) are copied into
 *    `strbuf` and flagged with STR_IN_BUF.
 *
 *  - Streaming (strata_pickle_stream): the same run() loop, which pauses
 *    when an APPEND(S) targets a selected list and hands its items out
 *    instead of storing them. Each new list or dict gets a path state in its
 *    node's tag bits (infer_state: where Python's pickler would attach it),
 *    checked against the finished document at STOP (verify). A plan pass
 *    (plan_memo) finds each memo key's last GET first, so the memo holds a
 *    value only while it will be read, and a copying collector (collect)
 *    compacts the arena to what the stack and the memo still reach.
 *
 * Invariants (beyond pickle.h's):
 *  1. nodes[0] and cells[0] are sentinels; handle 0 means "none"; a handle
 *     with bit 31 set is an immediate int (no node), so there are fewer
 *     than 2^31 nodes.
 *  2. Every stack slot holds a valid node handle.
 *  3. marks[] is non-decreasing and each mark <= stack length.
 *  4. Streaming: a collection happens only between items (never inside
 *     run()), so every handle run() holds is on the stack or in the memo;
 *     a handed-out list never gets cells (its `u` is its index in its
 *     parent list, its `a` the number of items handed out).
 */
#include "import/pickle.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

#define STR_IN_BUF (UINT64_C(1) << 63)
/* Handles with this bit set are non-negative ints below 2^31 held in the
 * handle itself (no node): most values of a snapshot are such ints. */
#define PV_INT_TAG UINT32_C(0x80000000)
#define PV_IS_INT(v) (((v) & PV_INT_TAG) != 0)

typedef struct pnode {
    uint32_t type; /* strata_pickle_type in the low 8 bits; a path tag above (streaming) */
    uint32_t a;    /* STR/BYTES: length; containers: item count */
    uint64_t u;    /* INT: value; FLOAT/BIGINT: bits; STR: offset; containers: head<<32|tail;
                      a selected (streamed) list: its index in its parent list */
} pnode;

#define NODE_TYPE(n) ((strata_pickle_type)((n)->type & 0xffu))
#define NODE_TAG(n) ((n)->type >> 8)
#define NODE_FORWARDED 0xffu /* during a collection: moved, `a` is the new handle */

static bool is_container_type(strata_pickle_type t)
{
    return t == STRATA_PICKLE_LIST || t == STRATA_PICKLE_TUPLE || t == STRATA_PICKLE_DICT ||
           t == STRATA_PICKLE_SET;
}

typedef struct pcell {
    strata_pv key, value;
    uint32_t next;
} pcell;

struct strata_pickle {
    char *origin;
    const uint8_t *data;
    size_t len;
    void *map; /* mmap'd region or NULL */
    size_t map_len;
    int protocol;
    strata_pv root;

    pnode *nodes;
    size_t n_nodes, cap_nodes;
    pcell *cells;
    size_t n_cells, cap_cells;
    GByteArray *strbuf;
};

/* The memo plan of a streamed read: for each memo key that some GET reads,
 * the offset of the last such GET, and the value stored under the key while
 * it may still be read. A small open-addressing table keyed by memo key: a
 * snapshot has millions of GETs over a few thousand distinct keys, and each
 * GET is one probe here (GHashTable costs several times more per lookup). */
typedef struct memo_slot {
    uint64_t key1;     /* memo key + 1; 0: empty slot */
    uint64_t last_get; /* offset of the last GET of the key in the file */
    strata_pv value;   /* the value while it will still be read, else 0 */
} memo_slot;

typedef struct memo_plan {
    memo_slot *slots;
    size_t mask; /* capacity - 1 (a power of two) */
    size_t n;
} memo_plan;

/* Parser state: alive during one load, or for the life of a stream. */
typedef struct parser {
    strata_pickle *p;
    size_t pos;   /* offset of the next byte */
    size_t op_at; /* offset of the current opcode, for messages */
    strata_pv *stack;
    size_t n_stack, cap_stack;
    size_t *marks;
    size_t n_marks, cap_marks;
    strata_pv *memo; /* whole-document reads (and streams without a plan): by key */
    size_t cap_memo;
    size_t n_memo; /* distinct keys set (MEMOIZE's next key) */
    /* Streaming only (stream == NULL otherwise). */
    strata_pickle_stream *stream;
    memo_plan *plan;      /* non-NULL: values are kept only until their last GET */
    bool keys_dense;      /* the keys set so far are exactly 0 .. n_memo-1 */
    uint64_t *key_bits;   /* otherwise: a bit per key set */
    size_t n_key_words;
    bool paused;          /* run() stopped with items of a selected list to hand out */
    strata_pv pend_list;  /* that list */
    size_t pend_first, pend_next; /* its items: stack[pend_first ..], next to hand out */
    GError **err;
} parser;

/* A state of the selector paths: what a container is, for the lists that a
 * stream hands out. State 0 is "on no selected path", state 1 the top-level
 * value; a container's state is kept in its node's tag bits. */
typedef struct path_state {
    uint32_t parent; /* state of the enclosing container */
    int64_t index;   /* step: a list index, STEP_KEY (dict key) or STEP_ANY ('*') */
    char *key;       /* STEP_KEY: the key */
    int selector;    /* >= 0: lists in this state are handed out item by item */
} path_state;

#define STEP_KEY (-1)
#define STEP_ANY (-2)
#define STATE_NONE 0u
#define STATE_ROOT 1u
#define MAX_STATES 64u

/* Arrays of values: the to-space of a collection (live values are copied
 * there in the order Cheney's algorithm finds them), or the spare arrays a
 * stream keeps for the next one, so that their pages stay mapped. */
typedef struct space {
    pnode *nodes;
    size_t n_nodes, cap_nodes;
    pcell *cells;
    size_t n_cells, cap_cells;
    GByteArray *strbuf;
} space;

struct strata_pickle_stream {
    strata_pickle *doc;
    parser ps;
    GError *error;        /* the error that ended the stream, for later calls */
    bool done, exact;
    path_state states[MAX_STATES];
    uint32_t n_states;
    int n_selectors;
    uint64_t made[MAX_STATES]; /* lists created in each handed-out state */
    memo_plan plan;
    bool have_plan;       /* the plan pass read the whole file */
    size_t gc_limit;      /* collect when the arena exceeds this many bytes */
    space spare;          /* the arrays of the collection before last (nodes, cells) */
    size_t peak_arena;
    size_t released;      /* file pages before this offset were given back */
};

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

static bool need(parser *ps, size_t n, const char *what)
{
    if (n > ps->p->len - ps->pos)
        return fail(ps, "truncated pickle: %s needs %zu bytes, only %zu remain", what, n,
                    ps->p->len - ps->pos);
    return true;
}

/* ---- arena ----------------------------------------------------------------- */

/* The node and cell arrays live in anonymous mappings grown with mremap (the
 * kernel moves page tables, nothing is copied) and advised for transparent
 * huge pages, so filling them costs few page faults. */
static void *region_resize(void *old, size_t old_bytes, size_t new_bytes)
{
    void *m = old == NULL ? mmap(NULL, new_bytes, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                          : mremap(old, old_bytes, new_bytes, MREMAP_MAYMOVE);
    if (m == MAP_FAILED)
        g_error("strata: out of memory mapping %zu bytes for a pickle", new_bytes);
#ifdef MADV_HUGEPAGE
    madvise(m, new_bytes, MADV_HUGEPAGE);
#endif
    return m;
}

/* type: a strata_pickle_type, with a path tag above its low 8 bits. */
static strata_pv new_node(strata_pickle *p, uint32_t type, uint32_t a, uint64_t u)
{
    if (p->n_nodes == p->cap_nodes) {
        p->nodes = region_resize(p->nodes, p->cap_nodes * sizeof(pnode),
                                 p->cap_nodes * 2 * sizeof(pnode));
        p->cap_nodes *= 2;
    }
    pnode *n = &p->nodes[p->n_nodes];
    n->type = type;
    n->a = a;
    n->u = u;
    return (strata_pv)p->n_nodes++;
}

static void container_add(strata_pickle *p, strata_pv c, strata_pv key, strata_pv value)
{
    if (p->n_cells == p->cap_cells) {
        p->cells = region_resize(p->cells, p->cap_cells * sizeof(pcell),
                                 p->cap_cells * 2 * sizeof(pcell));
        p->cap_cells *= 2;
    }
    uint32_t cell = (uint32_t)p->n_cells++;
    p->cells[cell] = (pcell){key, value, 0};
    pnode *n = &p->nodes[c];
    uint32_t head = (uint32_t)(n->u >> 32), tail = (uint32_t)n->u;
    if (head == 0)
        head = cell;
    else
        p->cells[tail].next = cell;
    n->u = ((uint64_t)head << 32) | cell;
    n->a++;
}

/* ---- stack ---------------------------------------------------------------- */

static bool push(parser *ps, strata_pv v)
{
    if (v == STRATA_PV_NULL)
        return false; /* arena full: new_value reported it */
    if (ps->n_stack == ps->cap_stack) {
        ps->cap_stack = ps->cap_stack ? ps->cap_stack * 2 : 256;
        ps->stack = g_renew(strata_pv, ps->stack, ps->cap_stack);
    }
    ps->stack[ps->n_stack++] = v;
    return true;
}

static size_t stack_base(const parser *ps) { return ps->n_marks ? ps->marks[ps->n_marks - 1] : 0; }

static bool pop(parser *ps, const char *opname, strata_pv *v)
{
    if (ps->n_stack <= stack_base(ps))
        return fail(ps, "%s on an empty stack", opname);
    *v = ps->stack[--ps->n_stack];
    return true;
}

static bool top(parser *ps, const char *opname, strata_pv *v)
{
    if (ps->n_stack <= stack_base(ps))
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
    if (ps->p->n_nodes >= PV_INT_TAG - 1 || ps->p->n_cells >= UINT32_MAX - 1)
        return fail(ps, "pickle holds more than 2^31 values; not supported");
    return true;
}

static bool push_new(parser *ps, strata_pickle_type type, uint32_t a, uint64_t u)
{
    if (type == STRATA_PICKLE_INT && u < PV_INT_TAG)
        return push(ps, (strata_pv)u | PV_INT_TAG);
    if (!room(ps))
        return false;
    return push(ps, new_node(ps->p, type, a, u));
}

/* ---- where a new container belongs (streaming) ------------------------------ */

static strata_pickle_type node_type(const strata_pickle *p, strata_pv v)
{
    return strata_pickle_type_of(p, v);
}

/* The state of a container that will be item `index` of list `list`. */
static uint32_t list_child(const strata_pickle_stream *s, const strata_pickle *p, strata_pv list,
                           uint64_t index)
{
    uint32_t parent = NODE_TAG(&p->nodes[list]);
    if (parent == STATE_NONE)
        return STATE_NONE;
    for (uint32_t i = STATE_ROOT + 1; i < s->n_states; i++)
        if (s->states[i].parent == parent &&
            (s->states[i].index == STEP_ANY || s->states[i].index == (int64_t)index))
            return i;
    return STATE_NONE;
}

/* The state of a container that will be dict[key]. */
static uint32_t dict_child(const strata_pickle_stream *s, const strata_pickle *p, strata_pv dict,
                           strata_pv key)
{
    uint32_t parent = NODE_TAG(&p->nodes[dict]);
    if (parent == STATE_NONE || node_type(p, key) != STRATA_PICKLE_STR)
        return STATE_NONE;
    for (uint32_t i = STATE_ROOT + 1; i < s->n_states; i++)
        if (s->states[i].parent == parent && s->states[i].index == STEP_KEY &&
            strata_pickle_str_equal(p, key, s->states[i].key))
            return i;
    return STATE_NONE;
}

/* Infers the state of a list or dict about to be pushed at stack index i
 * from what lies below it, as Python's pickler lays a document out. Several
 * readings can fit the stack; the first that lands on a selected path wins:
 *  - nothing below and no MARK: the top-level value;
 *  - a list right below (above the innermost MARK): an APPEND to it may
 *    follow (a list or dict cannot be the key a dict's SETITEM(S) needs);
 *  - the container below the innermost MARK owns the batch: a list's item,
 *    index its length plus the position in the batch (so [[], [...]] reads
 *    right: the empty list below is a finished sibling), or a dict's value
 *    at an odd position, under the key just below;
 *  - a dict and a key below: a SETITEM follows.
 * *outer is the index in a parent list. A wrong guess is caught at STOP
 * (strata_pickle_stream_exact). */
static uint32_t infer_state(parser *ps, size_t i, uint64_t *outer)
{
    const strata_pickle_stream *s = ps->stream;
    const strata_pickle *p = ps->p;
    size_t base = stack_base(ps);
    uint32_t state = STATE_NONE;
    *outer = 0;
    if (i == 0)
        return ps->n_marks == 0 ? STATE_ROOT : STATE_NONE;
    strata_pv below = ps->stack[i - 1];
    if (i > base && node_type(p, below) == STRATA_PICKLE_LIST) {
        *outer = p->nodes[below].a;
        state = list_child(s, p, below, *outer);
        if (state != STATE_NONE)
            return state;
    }
    if (ps->n_marks > 0 && base >= 1) {
        strata_pv owner = ps->stack[base - 1];
        size_t off = i - base;
        strata_pickle_type t = node_type(p, owner);
        if (t == STRATA_PICKLE_LIST) {
            *outer = p->nodes[owner].a + off;
            state = list_child(s, p, owner, *outer);
        } else if (t == STRATA_PICKLE_DICT && off % 2 == 1) {
            state = dict_child(s, p, owner, below);
        }
        if (state != STATE_NONE)
            return state;
    }
    if (i >= 2 && node_type(p, ps->stack[i - 2]) == STRATA_PICKLE_DICT)
        return dict_child(s, p, ps->stack[i - 2], below);
    return STATE_NONE;
}

/* A new list or dict to be pushed at stack index i (has_items: built from
 * items already on the stack, so it cannot be handed out item by item). */
static strata_pv new_container(parser *ps, strata_pickle_type type, size_t i, bool has_items)
{
    uint32_t state = STATE_NONE;
    uint64_t outer = 0;
    if (ps->stream && (type == STRATA_PICKLE_LIST || type == STRATA_PICKLE_DICT)) {
        state = infer_state(ps, i, &outer);
        if (state != STATE_NONE && ps->stream->states[state].selector >= 0) {
            if (type != STRATA_PICKLE_LIST || has_items)
                state = STATE_NONE;
            else
                ps->stream->made[state]++;
        }
    }
    bool streamed = state != STATE_NONE && ps->stream->states[state].selector >= 0;
    return new_node(ps->p, (uint32_t)type | (state << 8), 0, streamed ? outer : 0);
}

/* Is v a list whose items are handed out rather than kept? */
static bool handed_out(const parser *ps, strata_pv v)
{
    if (ps->stream == NULL || PV_IS_INT(v))
        return false;
    uint32_t tag = NODE_TAG(&ps->p->nodes[v]);
    return tag != STATE_NONE && ps->stream->states[tag].selector >= 0;
}

/* Stops run() to hand out the items stack[first ..] of list `list`. */
static bool pause_for_items(parser *ps, strata_pv list, size_t first)
{
    ps->paused = true;
    ps->pend_list = list;
    ps->pend_first = ps->pend_next = first;
    return true;
}

/* ---- memo ----------------------------------------------------------------- */

static size_t plan_hash(uint64_t key, size_t mask)
{
    return (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 17) & mask;
}

static memo_slot *plan_find(const memo_plan *m, uint64_t key)
{
    for (size_t i = plan_hash(key, m->mask);; i = (i + 1) & m->mask) {
        memo_slot *s = &m->slots[i];
        if (s->key1 == key + 1)
            return s;
        if (s->key1 == 0)
            return NULL;
    }
}

/* Records a GET of key at offset `at` (later GETs come later in the file). */
static void plan_note_get(memo_plan *m, uint64_t key, size_t at)
{
    if (2 * (m->n + 1) > m->mask + 1) {
        memo_plan bigger = {g_new0(memo_slot, 2 * (m->mask + 1)), 2 * m->mask + 1, m->n};
        for (size_t i = 0; i <= m->mask; i++)
            if (m->slots[i].key1) {
                size_t j = plan_hash(m->slots[i].key1 - 1, bigger.mask);
                while (bigger.slots[j].key1)
                    j = (j + 1) & bigger.mask;
                bigger.slots[j] = m->slots[i];
            }
        g_free(m->slots);
        *m = bigger;
    }
    size_t i = plan_hash(key, m->mask);
    while (m->slots[i].key1 != 0 && m->slots[i].key1 != key + 1)
        i = (i + 1) & m->mask;
    if (m->slots[i].key1 == 0) {
        m->slots[i].key1 = key + 1;
        m->n++;
    }
    m->slots[i].last_get = at;
}

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
        memo_slot *s = plan_find(ps->plan, key);
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
        memo_slot *s = plan_find(ps->plan, key);
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

/* ---- little-endian and text fields ---------------------------------------- */

static uint64_t read_le(const uint8_t *b, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)b[i] << (8 * i);
    return v;
}

/* Reads a '\n'-terminated line; *line points at it (without the newline). */
static bool read_line(parser *ps, const char *opname, const char **line, size_t *n)
{
    const uint8_t *start = ps->p->data + ps->pos;
    const uint8_t *nl = memchr(start, '\n', ps->p->len - ps->pos);
    if (nl == NULL)
        return fail(ps, "truncated pickle: %s argument has no end of line", opname);
    *line = (const char *)start;
    *n = (size_t)(nl - start);
    ps->pos += *n + 1;
    return true;
}

/* Decimal (optionally signed) integer text; overflow becomes a BIGINT. */
static bool push_decimal(parser *ps, const char *opname, const char *s, size_t n)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf) {
        if (n >= sizeof buf) {
            /* Long decimal: keep an approximate value. */
            char *t = g_strndup(s, n);
            char *end = NULL;
            double d = g_ascii_strtod(t, &end);
            bool ok = end && *end == '\0' && isfinite(d);
            g_free(t);
            if (!ok)
                return fail(ps, "%s expects a decimal integer", opname);
            uint64_t bits;
            memcpy(&bits, &d, sizeof bits);
            return push_new(ps, STRATA_PICKLE_BIGINT, 0, bits);
        }
        return fail(ps, "%s expects a decimal integer, got an empty line", opname);
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    const char *digits = buf + ((buf[0] == '-' || buf[0] == '+') ? 1 : 0);
    if (*digits == '\0')
        return fail(ps, "%s expects a decimal integer, got '%s'", opname, buf);
    for (const char *c = digits; *c; c++)
        if (*c < '0' || *c > '9')
            return fail(ps, "%s expects a decimal integer, got '%s'", opname, buf);
    errno = 0;
    char *end = NULL;
    long long v = strtoll(buf, &end, 10);
    if (errno == ERANGE) {
        double d = g_ascii_strtod(buf, NULL);
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        return push_new(ps, STRATA_PICKLE_BIGINT, 0, bits);
    }
    return push_new(ps, STRATA_PICKLE_INT, 0, (uint64_t)(int64_t)v);
}

/* LONG1/LONG4 payload: little-endian two's complement of n bytes. */
static bool push_long_bytes(parser *ps, const uint8_t *b, size_t n)
{
    if (n == 0)
        return push_new(ps, STRATA_PICKLE_INT, 0, 0);
    bool negative = (b[n - 1] & 0x80) != 0;
    bool fits = true;
    if (n > 8) {
        uint8_t fill = negative ? 0xff : 0x00;
        for (size_t i = 8; i < n; i++)
            if (b[i] != fill)
                fits = false;
        if (fits && (((b[7] & 0x80) != 0) != negative))
            fits = false;
    }
    if (fits) {
        size_t k = n < 8 ? n : 8;
        uint64_t v = read_le(b, k);
        if (k < 8 && negative)
            v |= ~UINT64_C(0) << (8 * k);
        return push_new(ps, STRATA_PICKLE_INT, 0, v);
    }
    /* Beyond int64: an approximate double (magnitude of two's complement). */
    double d = 0;
    for (size_t i = n; i-- > 0;)
        d = d * 256.0 + (double)(negative ? (uint8_t)~b[i] : b[i]);
    if (negative)
        d = -(d + 1);
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return push_new(ps, STRATA_PICKLE_BIGINT, 0, bits);
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

/* A counted string: length field of `lenbytes` bytes, then the bytes. */
static bool counted(parser *ps, const char *opname, size_t lenbytes, bool signed_len,
                    strata_pickle_type type)
{
    if (!need(ps, lenbytes, opname))
        return false;
    uint64_t n = read_le(ps->p->data + ps->pos, lenbytes);
    ps->pos += lenbytes;
    if (signed_len && (n & 0x80000000u))
        return fail(ps, "%s has a negative length", opname); /* BINSTRING is signed */
    if (n > ps->p->len - ps->pos)
        return fail(ps, "truncated pickle: %s of %" G_GUINT64_FORMAT " bytes, only %zu remain",
                    opname, n, ps->p->len - ps->pos);
    size_t off = ps->pos;
    ps->pos += (size_t)n;
    return push_str_ref(ps, type, off, n);
}

static bool push_buf_str(parser *ps, GString *s)
{
    strata_pickle *p = ps->p;
    if (s->len > UINT32_MAX) {
        g_string_free(s, TRUE);
        return fail(ps, "string too long");
    }
    uint64_t off = p->strbuf->len;
    g_byte_array_append(p->strbuf, (const guint8 *)s->str, (guint)s->len);
    uint32_t n = (uint32_t)s->len;
    g_string_free(s, TRUE);
    if (!room(ps))
        return false;
    return push(ps, new_node(p, STRATA_PICKLE_STR, n, off | STR_IN_BUF));
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Protocol 0 UNICODE: raw-unicode-escape (\uXXXX, \UXXXXXXXX, else Latin-1). */
static bool push_raw_unicode(parser *ps, const char *s, size_t n)
{
    GString *out = g_string_sized_new(n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' && i + 1 < n && (s[i + 1] == 'u' || s[i + 1] == 'U')) {
            size_t digits = s[i + 1] == 'u' ? 4 : 8;
            if (i + 2 + digits > n) {
                g_string_free(out, TRUE);
                return fail(ps, "UNICODE has a truncated \\u escape");
            }
            gunichar cp = 0;
            for (size_t k = 0; k < digits; k++) {
                int h = hexval(s[i + 2 + k]);
                if (h < 0) {
                    g_string_free(out, TRUE);
                    return fail(ps, "UNICODE has a bad \\u escape");
                }
                cp = cp * 16 + (gunichar)h;
            }
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                g_string_free(out, TRUE);
                return fail(ps, "UNICODE escape U+%X is not a character", cp);
            }
            g_string_append_unichar(out, cp);
            i += 1 + digits;
        } else {
            g_string_append_unichar(out, c);
        }
    }
    return push_buf_str(ps, out);
}

/* Protocol 0 STRING: a Python repr, 'text' or "text", with backslash escapes. */
static bool push_quoted(parser *ps, const char *s, size_t n)
{
    if (n < 2 || (s[0] != '\'' && s[0] != '"') || s[n - 1] != s[0])
        return fail(ps, "STRING expects a quoted string");
    GString *out = g_string_sized_new(n);
    for (size_t i = 1; i + 1 < n; i++) {
        char c = s[i];
        if (c != '\\') {
            g_string_append_c(out, c);
            continue;
        }
        if (i + 2 >= n) {
            g_string_free(out, TRUE);
            return fail(ps, "STRING ends inside an escape");
        }
        char e = s[++i];
        switch (e) {
        case 'n': g_string_append_c(out, '\n'); break;
        case 't': g_string_append_c(out, '\t'); break;
        case 'r': g_string_append_c(out, '\r'); break;
        case '\\': case '\'': case '"': g_string_append_c(out, e); break;
        case 'x': {
            int h1 = i + 2 < n ? hexval(s[i + 1]) : -1, h2 = i + 2 < n ? hexval(s[i + 2]) : -1;
            if (h1 < 0 || h2 < 0) {
                g_string_free(out, TRUE);
                return fail(ps, "STRING has a bad \\x escape");
            }
            g_string_append_c(out, (char)(h1 * 16 + h2));
            i += 2;
            break;
        }
        default:
            g_string_free(out, TRUE);
            return fail(ps, "STRING has an unknown escape '\\%c'", e);
        }
    }
    /* Python 3 decodes protocol 0-2 str as ASCII by default. */
    for (size_t i = 0; i < out->len; i++)
        if ((unsigned char)out->str[i] >= 0x80) {
            g_string_free(out, TRUE);
            return fail(ps, "STRING holds non-ASCII bytes");
        }
    return push_buf_str(ps, out);
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
            container_add(ps->p, c, ps->stack[i], ps->stack[i + 1]);
        else
            container_add(ps->p, c, STRATA_PV_NULL, ps->stack[i]);
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
    if (first <= stack_base(ps) || first == 0)
        return fail(ps, "%s has no %s below its MARK", opname, strata_pickle_type_name(type));
    strata_pv c = ps->stack[first - 1];
    if (!container_of(ps, opname, c, type))
        return false;
    if (handed_out(ps, c))
        return ps->n_stack == first || pause_for_items(ps, c, first);
    return fill_from(ps, opname, c, first, type == STRATA_PICKLE_DICT);
}

static bool tuple_n(parser *ps, const char *opname, size_t n)
{
    if (ps->n_stack - stack_base(ps) < n)
        return fail(ps, "%s needs %zu items on the stack", opname, n);
    if (!room(ps))
        return false;
    strata_pv c = new_node(ps->p, STRATA_PICKLE_TUPLE, 0, 0);
    if (!fill_from(ps, opname, c, ps->n_stack - n, false))
        return false;
    return push(ps, c);
}

/* ---- opcodes ----------------------------------------------------------------- */

/* Opcodes that import or call: rejected by name. */
static const struct {
    uint8_t code;
    const char *name;
} forbidden_ops[] = {
    {'c', "GLOBAL"},        {0x93, "STACK_GLOBAL"},  {'R', "REDUCE"},
    {'b', "BUILD"},         {'i', "INST"},           {'o', "OBJ"},
    {0x81, "NEWOBJ"},       {0x92, "NEWOBJ_EX"},     {0x82, "EXT1"},
    {0x83, "EXT2"},         {0x84, "EXT4"},          {'P', "PERSID"},
    {'Q', "BINPERSID"},     {0x97, "NEXT_BUFFER"},   {0x98, "READONLY_BUFFER"},
};

static const char *forbidden_name(uint8_t code)
{
    for (size_t i = 0; i < G_N_ELEMENTS(forbidden_ops); i++)
        if (forbidden_ops[i].code == code)
            return forbidden_ops[i].name;
    return NULL;
}

static bool push_double(parser *ps, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return push_new(ps, STRATA_PICKLE_FLOAT, 0, bits);
}

static bool run(parser *ps)
{
    strata_pickle *p = ps->p;
    const uint8_t *d = p->data;
    for (;;) {
        ps->op_at = ps->pos;
        if (ps->pos >= p->len)
            return fail(ps, "truncated pickle: no STOP opcode before the end of the file");
        uint8_t op = d[ps->pos++];
        const char *line = NULL;
        size_t n = 0;
        strata_pv v = 0, k = 0, c = 0;
        size_t first = 0;
        switch (op) {
        case 0x80: /* PROTO */
            if (!need(ps, 1, "PROTO"))
                return false;
            p->protocol = d[ps->pos++];
            if (p->protocol > 5)
                return fail(ps, "unsupported pickle protocol %d (0 to 5 are known)", p->protocol);
            break;
        case 0x95: /* FRAME: a hint only; its length must fit in what remains */
            if (!need(ps, 8, "FRAME"))
                return false;
            if (read_le(d + ps->pos, 8) > p->len - ps->pos - 8)
                return fail(ps, "truncated pickle: FRAME of %" G_GUINT64_FORMAT
                                " bytes runs past the end of the file",
                            read_le(d + ps->pos, 8));
            ps->pos += 8;
            break;
        case '.': /* STOP */
            if (ps->n_marks != 0)
                return fail(ps, "STOP with an unclosed MARK");
            if (ps->n_stack != 1)
                return fail(ps, "STOP with %zu values on the stack (expected 1)", ps->n_stack);
            if (ps->pos != p->len)
                return fail(ps, "%zu bytes of trailing data after STOP", p->len - ps->pos);
            p->root = ps->stack[0];
            return true;
        case '(': /* MARK */
            if (ps->n_marks >= STRATA_PICKLE_MAX_MARKS)
                return fail(ps, "MARKs nested deeper than %d", STRATA_PICKLE_MAX_MARKS);
            if (ps->n_marks == ps->cap_marks) {
                ps->cap_marks = ps->cap_marks ? ps->cap_marks * 2 : 64;
                ps->marks = g_renew(size_t, ps->marks, ps->cap_marks);
            }
            ps->marks[ps->n_marks++] = ps->n_stack;
            break;
        case '0': /* POP */
            if (ps->n_stack > stack_base(ps))
                ps->n_stack--;
            else if (ps->n_marks > 0)
                ps->n_marks--; /* Python pops the mark when the frame is empty */
            else
                return fail(ps, "POP on an empty stack");
            break;
        case '1': /* POP_MARK */
            if (!pop_mark(ps, "POP_MARK", &first))
                return false;
            ps->n_stack = first;
            break;
        case '2': /* DUP */
            if (!top(ps, "DUP", &v) || !push(ps, v))
                return false;
            break;
        case 'N':
            if (!push_new(ps, STRATA_PICKLE_NONE, 0, 0))
                return false;
            break;
        case 0x88: /* NEWTRUE */
        case 0x89: /* NEWFALSE */
            if (!push_new(ps, STRATA_PICKLE_BOOL, 0, op == 0x88))
                return false;
            break;
        case 'K': /* BININT1 */
            if (!need(ps, 1, "BININT1") || !push_new(ps, STRATA_PICKLE_INT, 0, d[ps->pos]))
                return false;
            ps->pos += 1;
            break;
        case 'M': /* BININT2 */
            if (!need(ps, 2, "BININT2") ||
                !push_new(ps, STRATA_PICKLE_INT, 0, read_le(d + ps->pos, 2)))
                return false;
            ps->pos += 2;
            break;
        case 'J': /* BININT: signed 32-bit */
            if (!need(ps, 4, "BININT"))
                return false;
            if (!push_new(ps, STRATA_PICKLE_INT, 0,
                          (uint64_t)(int64_t)(int32_t)(uint32_t)read_le(d + ps->pos, 4)))
                return false;
            ps->pos += 4;
            break;
        case 0x8a: /* LONG1 */
        case 0x8b: /* LONG4 */ {
            size_t lb = op == 0x8a ? 1 : 4;
            const char *name = op == 0x8a ? "LONG1" : "LONG4";
            if (!need(ps, lb, name))
                return false;
            uint64_t len = read_le(d + ps->pos, lb);
            ps->pos += lb;
            if (op == 0x8b && (len & 0x80000000u))
                return fail(ps, "LONG4 has a negative length");
            if (!need(ps, (size_t)len, name))
                return false;
            if (!push_long_bytes(ps, d + ps->pos, (size_t)len))
                return false;
            ps->pos += (size_t)len;
            break;
        }
        case 'I': /* INT: decimal text; 01 and 00 are True and False */
            if (!read_line(ps, "INT", &line, &n))
                return false;
            if (n == 2 && line[0] == '0' && (line[1] == '0' || line[1] == '1')) {
                if (!push_new(ps, STRATA_PICKLE_BOOL, 0, line[1] == '1'))
                    return false;
            } else if (!push_decimal(ps, "INT", line, n)) {
                return false;
            }
            break;
        case 'L': /* LONG: decimal text with an optional trailing L */
            if (!read_line(ps, "LONG", &line, &n))
                return false;
            if (n > 0 && line[n - 1] == 'L')
                n--;
            if (!push_decimal(ps, "LONG", line, n))
                return false;
            break;
        case 'F': { /* FLOAT: text */
            if (!read_line(ps, "FLOAT", &line, &n))
                return false;
            char *t = g_strndup(line, n);
            char *end = NULL;
            double x = g_ascii_strtod(t, &end);
            bool ok = n > 0 && end && *end == '\0';
            g_free(t);
            if (!ok)
                return fail(ps, "FLOAT expects a number");
            if (!push_double(ps, x))
                return false;
            break;
        }
        case 'G': { /* BINFLOAT: big-endian IEEE 754 double */
            if (!need(ps, 8, "BINFLOAT"))
                return false;
            uint64_t bits = 0;
            for (int i = 0; i < 8; i++)
                bits = (bits << 8) | d[ps->pos + i];
            ps->pos += 8;
            if (!push_new(ps, STRATA_PICKLE_FLOAT, 0, bits))
                return false;
            break;
        }
        case 'S': /* STRING: quoted text */
            if (!read_line(ps, "STRING", &line, &n) || !push_quoted(ps, line, n))
                return false;
            break;
        case 'V': /* UNICODE: raw-unicode-escape text */
            if (!read_line(ps, "UNICODE", &line, &n) || !push_raw_unicode(ps, line, n))
                return false;
            break;
        case 'T': /* BINSTRING: Python 2 str, decoded as ASCII by Python 3 */
        case 'U': { /* SHORT_BINSTRING */
            const char *name = op == 'T' ? "BINSTRING" : "SHORT_BINSTRING";
            if (!counted(ps, name, op == 'T' ? 4 : 1, op == 'T', STRATA_PICKLE_BYTES))
                return false;
            pnode *s = &p->nodes[ps->stack[ps->n_stack - 1]];
            for (uint32_t i = 0; i < s->a; i++)
                if (d[s->u + i] >= 0x80)
                    return fail(ps, "%s holds non-ASCII bytes", name);
            s->type = STRATA_PICKLE_STR;
            break;
        }
        case 'X': /* BINUNICODE */
            if (!counted(ps, "BINUNICODE", 4, false, STRATA_PICKLE_STR))
                return false;
            break;
        case 0x8c: /* SHORT_BINUNICODE */
            if (!counted(ps, "SHORT_BINUNICODE", 1, false, STRATA_PICKLE_STR))
                return false;
            break;
        case 0x8d: /* BINUNICODE8 */
            if (!counted(ps, "BINUNICODE8", 8, false, STRATA_PICKLE_STR))
                return false;
            break;
        case 'B': /* BINBYTES */
            if (!counted(ps, "BINBYTES", 4, false, STRATA_PICKLE_BYTES))
                return false;
            break;
        case 'C': /* SHORT_BINBYTES */
            if (!counted(ps, "SHORT_BINBYTES", 1, false, STRATA_PICKLE_BYTES))
                return false;
            break;
        case 0x8e: /* BINBYTES8 */
        case 0x96: /* BYTEARRAY8 */
            if (!counted(ps, op == 0x8e ? "BINBYTES8" : "BYTEARRAY8", 8, false, STRATA_PICKLE_BYTES))
                return false;
            break;
        case '}': /* EMPTY_DICT */
            if (!room(ps) || !push(ps, new_container(ps, STRATA_PICKLE_DICT, ps->n_stack, false)))
                return false;
            break;
        case ']': /* EMPTY_LIST */
            if (!room(ps) || !push(ps, new_container(ps, STRATA_PICKLE_LIST, ps->n_stack, false)))
                return false;
            break;
        case ')': /* EMPTY_TUPLE */
            if (!push_new(ps, STRATA_PICKLE_TUPLE, 0, 0))
                return false;
            break;
        case 0x8f: /* EMPTY_SET */
            if (!push_new(ps, STRATA_PICKLE_SET, 0, 0))
                return false;
            break;
        case 'd': /* DICT */
            if (!build_from_mark(ps, "DICT", STRATA_PICKLE_DICT))
                return false;
            break;
        case 'l': /* LIST */
            if (!build_from_mark(ps, "LIST", STRATA_PICKLE_LIST))
                return false;
            break;
        case 't': /* TUPLE */
            if (!build_from_mark(ps, "TUPLE", STRATA_PICKLE_TUPLE))
                return false;
            break;
        case 0x91: /* FROZENSET */
            if (!build_from_mark(ps, "FROZENSET", STRATA_PICKLE_SET))
                return false;
            break;
        case 0x85: /* TUPLE1 */
        case 0x86: /* TUPLE2 */
        case 0x87: /* TUPLE3 */
            if (!tuple_n(ps, "TUPLEn", (size_t)(op - 0x84)))
                return false;
            break;
        case 'a': /* APPEND */
            if (!pop(ps, "APPEND", &v) || !top(ps, "APPEND", &c) ||
                !container_of(ps, "APPEND", c, STRATA_PICKLE_LIST) || !room(ps))
                return false;
            if (handed_out(ps, c)) {
                ps->n_stack++; /* the item, back on top, is handed out */
                return pause_for_items(ps, c, ps->n_stack - 1);
            }
            container_add(p, c, STRATA_PV_NULL, v);
            break;
        case 'e': /* APPENDS */
            if (!extend_from_mark(ps, "APPENDS", STRATA_PICKLE_LIST))
                return false;
            if (ps->paused)
                return true;
            break;
        case 0x90: /* ADDITEMS */
            if (!extend_from_mark(ps, "ADDITEMS", STRATA_PICKLE_SET))
                return false;
            break;
        case 's': /* SETITEM */
            if (!pop(ps, "SETITEM", &v) || !pop(ps, "SETITEM", &k) || !top(ps, "SETITEM", &c) ||
                !container_of(ps, "SETITEM", c, STRATA_PICKLE_DICT) || !room(ps))
                return false;
            container_add(p, c, k, v);
            break;
        case 'u': /* SETITEMS */
            if (!extend_from_mark(ps, "SETITEMS", STRATA_PICKLE_DICT))
                return false;
            break;
        case 'p': { /* PUT: decimal text */
            if (!read_line(ps, "PUT", &line, &n))
                return false;
            uint64_t key = 0;
            if (n == 0 || n > 19)
                return fail(ps, "PUT expects a memo key");
            for (size_t i = 0; i < n; i++) {
                if (line[i] < '0' || line[i] > '9')
                    return fail(ps, "PUT expects a memo key");
                key = key * 10 + (uint64_t)(line[i] - '0');
            }
            if (!top(ps, "PUT", &v) || !memo_put(ps, key, v))
                return false;
            break;
        }
        case 'q': /* BINPUT */
        case 'r': /* LONG_BINPUT */ {
            size_t lb = op == 'q' ? 1 : 4;
            const char *name = op == 'q' ? "BINPUT" : "LONG_BINPUT";
            if (!need(ps, lb, name))
                return false;
            uint64_t key = read_le(d + ps->pos, lb);
            ps->pos += lb;
            if (!top(ps, name, &v) || !memo_put(ps, key, v))
                return false;
            break;
        }
        case 0x94: /* MEMOIZE */
            if (!top(ps, "MEMOIZE", &v) || !memo_put(ps, ps->n_memo, v))
                return false;
            break;
        case 'g': { /* GET: decimal text */
            if (!read_line(ps, "GET", &line, &n))
                return false;
            uint64_t key = 0;
            if (n == 0 || n > 19)
                return fail(ps, "GET expects a memo key");
            for (size_t i = 0; i < n; i++) {
                if (line[i] < '0' || line[i] > '9')
                    return fail(ps, "GET expects a memo key");
                key = key * 10 + (uint64_t)(line[i] - '0');
            }
            if (!memo_get(ps, key))
                return false;
            break;
        }
        case 'h': /* BINGET */
            if (!need(ps, 1, "BINGET") || !memo_get(ps, d[ps->pos]))
                return false;
            ps->pos += 1;
            break;
        case 'j': /* LONG_BINGET */
            if (!need(ps, 4, "LONG_BINGET") || !memo_get(ps, read_le(d + ps->pos, 4)))
                return false;
            ps->pos += 4;
            break;
        default: {
            const char *bad = forbidden_name(op);
            if (bad)
                return fail(ps,
                            "refusing opcode %s (0x%02x): it would import or call Python "
                            "code; a memory snapshot holds only plain data",
                            bad, op);
            return fail(ps, "unknown or corrupt opcode 0x%02x", op);
        }
        }
    }
}

/* ---- loading -------------------------------------------------------------------- */

static void arena_init(strata_pickle *p)
{
    p->n_nodes = 1; /* node 0: the null handle (mappings start zeroed) */
    p->cap_nodes = 4096;
    p->nodes = region_resize(NULL, 0, p->cap_nodes * sizeof(pnode));
    p->n_cells = 1;
    p->cap_cells = 4096;
    p->cells = region_resize(NULL, 0, p->cap_cells * sizeof(pcell));
    p->strbuf = g_byte_array_new();
}

static strata_pickle *parse(strata_pickle *p, GError **err)
{
    arena_init(p);
    parser ps = {.p = p, .err = err};
    bool ok = run(&ps);
    g_free(ps.stack);
    g_free(ps.marks);
    g_free(ps.memo);
    if (!ok) {
        strata_pickle_free(p);
        return NULL;
    }
    return p;
}

static strata_pickle *doc_for_buffer(const void *data, size_t len, const char *origin)
{
    strata_pickle *p = g_new0(strata_pickle, 1);
    p->origin = g_strdup(origin ? origin : "<pickle>");
    p->data = data;
    p->len = len;
    return p;
}

/* A document over the read-only mapping of a file, without values yet. */
static strata_pickle *doc_for_file(const char *path, GError **err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot open: %s", path,
                    g_strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    static const uint8_t empty[1] = {0};
    strata_pickle *p = doc_for_buffer(empty, 0, path);
    p->len = (size_t)st.st_size;
    if (p->len > 0) {
        void *m = mmap(NULL, p->len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot map: %s", path,
                        g_strerror(errno));
            close(fd);
            g_free(p->origin);
            g_free(p);
            return NULL;
        }
        madvise(m, p->len, MADV_SEQUENTIAL);
        p->map = m;
        p->map_len = p->len;
        p->data = m;
    }
    close(fd);
    return p;
}

strata_pickle *strata_pickle_load_buffer(const void *data, size_t len, const char *origin,
                                         GError **err)
{
    return parse(doc_for_buffer(data, len, origin), err);
}

strata_pickle *strata_pickle_load_file(const char *path, GError **err)
{
    strata_pickle *p = doc_for_file(path, err);
    return p ? parse(p, err) : NULL;
}

/* ---- streaming ---------------------------------------------------------------------- */

#define COLLECT_MIN_BYTES ((size_t)2 << 20)  /* arena size below which nothing is collected */
#define RELEASE_STEP ((size_t)2 << 20)       /* file bytes between page releases */

/* Gives the file's pages in [s->released, upto) back to the kernel: they are
 * clean and read-only, so a later access (a memo string from early in the
 * file) simply reads them again. */
static void release_pages(strata_pickle_stream *s, size_t upto)
{
    strata_pickle *p = s->doc;
    if (p->map == NULL)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    upto = upto / page * page;
    if (upto > s->released + RELEASE_STEP || (upto > s->released && upto == p->len / page * page)) {
        madvise((uint8_t *)p->map + s->released, upto - s->released, MADV_DONTNEED);
        s->released = upto;
    }
}

/* The plan pass: decodes the opcodes without building values and records the
 * offset of the last GET of each memo key. Returns false where the opcodes
 * stop making sense; the parse then keeps every memo value (it reports the
 * error itself, at that offset or before). */
static bool plan_memo(strata_pickle_stream *s)
{
    const uint8_t *d = s->doc->data;
    size_t len = s->doc->len, pos = 0;
    /* Keys a GET may read: below the largest PUT key + 1 or the number of
     * PUT/MEMOIZE so far (MEMOIZE's key counts the keys set). A GET beyond
     * fails in the parse: the plan stops there, so hostile input cannot
     * grow it by more than one entry per PUT/MEMOIZE. */
    uint64_t stores = 0, key_bound = 0;
    while (pos < len) {
        size_t at = pos;
        uint8_t op = d[pos++];
        size_t fixed = 0, counted = 0;
        bool line = false;
        switch (op) {
        case '.': /* STOP */
            release_pages(s, len);
            return true;
        case '(': case '0': case '1': case '2': case 'N': case 0x88: case 0x89: case '}':
        case ']': case ')': case 0x8f: case 'd': case 'l': case 't': case 0x91: case 0x85:
        case 0x86: case 0x87: case 'a': case 'e': case 0x90: case 's': case 'u':
            break;
        case 0x94: /* MEMOIZE */
            key_bound = MAX(key_bound, ++stores);
            break;
        case 'q': /* BINPUT */
        case 'r': { /* LONG_BINPUT */
            size_t n = op == 'q' ? 1 : 4;
            if (n > len - pos)
                return false;
            key_bound = MAX(key_bound, MAX(read_le(d + pos, n) + 1, ++stores));
            pos += n;
            break;
        }
        case 0x80: case 'K': fixed = 1; break;
        case 'M': fixed = 2; break;
        case 'J': fixed = 4; break;
        case 'G': case 0x95: fixed = 8; break;
        case 0x8a: case 'U': case 0x8c: case 'C': counted = 1; break;
        case 0x8b: case 'T': case 'X': case 'B': counted = 4; break;
        case 0x8d: case 0x8e: case 0x96: counted = 8; break;
        case 'I': case 'L': case 'F': case 'S': case 'V': line = true; break;
        case 'p': { /* PUT: decimal text */
            const uint8_t *nl = memchr(d + pos, '\n', len - pos);
            if (nl == NULL)
                return false;
            size_t n = (size_t)(nl - (d + pos));
            uint64_t key = 0;
            for (size_t i = 0; i < n && i < 19; i++)
                key = key * 10 + (uint64_t)(d[pos + i] >= '0' && d[pos + i] <= '9' ? d[pos + i] - '0' : 0);
            key_bound = MAX(key_bound, MAX(key + 1, ++stores));
            pos += n + 1;
            break;
        }
        case 'h': /* BINGET */
        case 'j': { /* LONG_BINGET */
            size_t n = op == 'h' ? 1 : 4;
            if (n > len - pos || read_le(d + pos, n) >= key_bound)
                return false;
            plan_note_get(&s->plan, read_le(d + pos, n), at);
            pos += n;
            break;
        }
        case 'g': { /* GET: decimal text */
            const uint8_t *nl = memchr(d + pos, '\n', len - pos);
            if (nl == NULL)
                return false;
            size_t n = (size_t)(nl - (d + pos));
            uint64_t key = 0;
            if (n == 0 || n > 19)
                return false;
            for (size_t i = 0; i < n; i++) {
                if (d[pos + i] < '0' || d[pos + i] > '9')
                    return false;
                key = key * 10 + (uint64_t)(d[pos + i] - '0');
            }
            if (key >= key_bound)
                return false;
            plan_note_get(&s->plan, key, at);
            pos += n + 1;
            break;
        }
        default:
            return false; /* unknown or refused: the parse says which */
        }
        if (fixed) {
            if (fixed > len - pos)
                return false;
            pos += fixed;
        } else if (counted) {
            if (counted > len - pos)
                return false;
            uint64_t n = read_le(d + pos, counted);
            pos += counted;
            if (n > len - pos)
                return false;
            pos += (size_t)n;
        } else if (line) {
            const uint8_t *nl = memchr(d + pos, '\n', len - pos);
            if (nl == NULL)
                return false;
            pos = (size_t)(nl - d) + 1;
        }
        if (pos - s->released > RELEASE_STEP)
            release_pages(s, pos);
    }
    return false;
}

/* ---- collecting unreachable values (streaming) --------------------------------------- */

static strata_pv evacuate(strata_pickle *p, space *to, strata_pv h)
{
    if (h == STRATA_PV_NULL || PV_IS_INT(h))
        return h;
    pnode *old = &p->nodes[h];
    if ((old->type & 0xffu) == NODE_FORWARDED)
        return old->a;
    pnode copy = *old;
    strata_pickle_type t = NODE_TYPE(old);
    if (is_container_type(t)) {
        uint32_t cell = (uint32_t)(old->u >> 32), prev = 0, head = 0;
        for (; cell; cell = p->cells[cell].next) {
            if (to->n_cells == to->cap_cells) {
                to->cells = region_resize(to->cells, to->cap_cells * sizeof(pcell),
                                          to->cap_cells * 2 * sizeof(pcell));
                to->cap_cells *= 2;
            }
            uint32_t k = (uint32_t)to->n_cells++;
            to->cells[k] = (pcell){p->cells[cell].key, p->cells[cell].value, 0};
            if (prev)
                to->cells[prev].next = k;
            else
                head = k;
            prev = k;
        }
        if (head)
            copy.u = ((uint64_t)head << 32) | prev;
    } else if ((t == STRATA_PICKLE_STR || t == STRATA_PICKLE_BYTES) && (old->u & STR_IN_BUF)) {
        uint64_t off = to->strbuf->len;
        if (old->a > 0) /* an empty buffer may have no storage at all */
            g_byte_array_append(to->strbuf, p->strbuf->data + (old->u & ~STR_IN_BUF), old->a);
        copy.u = off | STR_IN_BUF;
    }
    if (to->n_nodes == to->cap_nodes) {
        to->nodes = region_resize(to->nodes, to->cap_nodes * sizeof(pnode),
                                  to->cap_nodes * 2 * sizeof(pnode));
        to->cap_nodes *= 2;
    }
    strata_pv moved = (strata_pv)to->n_nodes++;
    to->nodes[moved] = copy;
    old->type = NODE_FORWARDED;
    old->a = moved;
    return moved;
}

/* Copies what the parse can still reach (the stack, the memo values still
 * to be read) into fresh arrays: a stream's memory is its live values. */
static void collect(parser *ps, space *spare)
{
    strata_pickle *p = ps->p;
    space to = {.n_nodes = 1, .cap_nodes = 4096, .n_cells = 1, .cap_cells = 4096};
    if (spare->nodes) {
        to.nodes = spare->nodes;
        to.cap_nodes = spare->cap_nodes;
        to.cells = spare->cells;
        to.cap_cells = spare->cap_cells;
    } else {
        to.nodes = region_resize(NULL, 0, to.cap_nodes * sizeof(pnode));
        to.cells = region_resize(NULL, 0, to.cap_cells * sizeof(pcell));
    }
    to.strbuf = g_byte_array_new();
    for (size_t i = 0; i < ps->n_stack; i++)
        ps->stack[i] = evacuate(p, &to, ps->stack[i]);
    if (ps->plan) {
        for (size_t i = 0; i <= ps->plan->mask; i++)
            ps->plan->slots[i].value = evacuate(p, &to, ps->plan->slots[i].value);
    } else {
        for (size_t i = 0; i < ps->cap_memo; i++)
            ps->memo[i] = evacuate(p, &to, ps->memo[i]);
    }
    p->root = evacuate(p, &to, p->root);
    for (size_t scan = 1; scan < to.n_nodes; scan++) {
        if (!is_container_type(NODE_TYPE(&to.nodes[scan])))
            continue;
        for (uint32_t cell = (uint32_t)(to.nodes[scan].u >> 32); cell; cell = to.cells[cell].next) {
            strata_pv k = evacuate(p, &to, to.cells[cell].key);
            strata_pv v = evacuate(p, &to, to.cells[cell].value);
            to.cells[cell].key = k;
            to.cells[cell].value = v;
        }
    }
    /* The old arrays become the next collection's to-space. */
    spare->nodes = p->nodes;
    spare->cap_nodes = p->cap_nodes;
    spare->cells = p->cells;
    spare->cap_cells = p->cap_cells;
    g_byte_array_unref(p->strbuf);
    p->nodes = to.nodes;
    p->n_nodes = to.n_nodes;
    p->cap_nodes = to.cap_nodes;
    p->cells = to.cells;
    p->n_cells = to.n_cells;
    p->cap_cells = to.cap_cells;
    p->strbuf = to.strbuf;
}

static size_t arena_bytes(const strata_pickle_stream *s)
{
    const strata_pickle *p = s->doc;
    return p->cap_nodes * sizeof(pnode) + p->cap_cells * sizeof(pcell) + p->strbuf->len +
           s->spare.cap_nodes * sizeof(pnode) + s->spare.cap_cells * sizeof(pcell);
}

/* Between two items: collect when the arena has doubled since the last
 * collection, give back the file's pages behind the parse position. */
static void maintain(strata_pickle_stream *s)
{
    strata_pickle *p = s->doc;
    size_t used = p->n_nodes * sizeof(pnode) + p->n_cells * sizeof(pcell) + p->strbuf->len;
    s->peak_arena = MAX(s->peak_arena, arena_bytes(s));
    if (used > s->gc_limit) {
        collect(&s->ps, &s->spare);
        size_t live = p->n_nodes * sizeof(pnode) + p->n_cells * sizeof(pcell) + p->strbuf->len;
        s->gc_limit = MAX(s->gc_limit, 2 * live);
    }
    release_pages(s, s->ps.pos);
}

/* ---- the selected paths ------------------------------------------------------------- */

static bool add_selector(strata_pickle_stream *s, const char *text, int selector)
{
    char **steps = g_strsplit(text, "/", -1);
    guint n = g_strv_length(steps);
    bool ok = n >= 1 && strcmp(steps[n - 1], "*") == 0;
    uint32_t state = STATE_ROOT;
    for (guint i = 0; ok && i + 1 < n; i++) {
        int64_t index = STEP_KEY;
        if (strcmp(steps[i], "*") == 0)
            index = STEP_ANY;
        else if (steps[i][0] && strspn(steps[i], "0123456789") == strlen(steps[i]))
            index = (int64_t)g_ascii_strtoull(steps[i], NULL, 10);
        uint32_t next = STATE_NONE;
        for (uint32_t k = STATE_ROOT + 1; k < s->n_states; k++)
            if (s->states[k].parent == state && s->states[k].index == index &&
                (index != STEP_KEY || strcmp(s->states[k].key, steps[i]) == 0))
                next = k;
        if (next == STATE_NONE) {
            if (s->n_states == MAX_STATES || s->states[state].selector >= 0) {
                ok = false;
                break;
            }
            next = s->n_states++;
            s->states[next] = (path_state){state, index,
                                           index == STEP_KEY ? g_strdup(steps[i]) : NULL, -1};
        }
        state = next;
    }
    /* A handed-out list is a leaf: no selector may go through it. */
    if (ok && state != STATE_ROOT && s->states[state].selector < 0) {
        for (uint32_t k = STATE_ROOT + 1; k < s->n_states; k++)
            if (s->states[k].parent == state)
                ok = false;
        if (ok)
            s->states[state].selector = selector;
    } else {
        ok = false;
    }
    g_strfreev(steps);
    return ok;
}

/* At STOP: walks the finished document along the selected paths. Every list
 * at a handed-out position must be one that was handed out (with the index
 * in its parent it was given), and nothing else may have been handed out. */
static bool verify_at(const strata_pickle_stream *s, uint32_t state, strata_pv v, bool in_list,
                      uint64_t index, uint64_t *found)
{
    const strata_pickle *p = s->doc;
    if (s->states[state].selector >= 0) {
        if (node_type(p, v) != STRATA_PICKLE_LIST)
            return true; /* not a list: nothing handed out, the reader sees what it is */
        if (NODE_TAG(&p->nodes[v]) != state)
            return strata_pickle_len(p, v) == 0;
        if (in_list && p->nodes[v].u != index)
            return false;
        found[state]++;
        return true;
    }
    for (uint32_t k = STATE_ROOT + 1; k < s->n_states; k++) {
        const path_state *c = &s->states[k];
        if (c->parent != state)
            continue;
        if (c->index == STEP_KEY) {
            strata_pv child = strata_pickle_dict_get(p, v, c->key);
            if (child && !verify_at(s, k, child, false, 0, found))
                return false;
        } else if (node_type(p, v) == STRATA_PICKLE_LIST) {
            strata_pickle_iter it;
            strata_pv item;
            uint64_t i = 0;
            strata_pickle_iter_init(p, v, &it);
            for (; strata_pickle_iter_next(p, &it, NULL, &item); i++)
                if ((c->index == STEP_ANY || c->index == (int64_t)i) &&
                    !verify_at(s, k, item, true, i, found))
                    return false;
        }
    }
    return true;
}

static bool verify(const strata_pickle_stream *s)
{
    uint64_t found[MAX_STATES] = {0};
    if (!verify_at(s, STATE_ROOT, s->doc->root, false, 0, found))
        return false;
    for (uint32_t k = 0; k < s->n_states; k++)
        if (found[k] != s->made[k])
            return false;
    return true;
}

/* ---- the stream API ----------------------------------------------------------------- */

static strata_pickle_stream *stream_new(strata_pickle *doc, const char *const *selectors)
{
    strata_pickle_stream *s = g_new0(strata_pickle_stream, 1);
    s->doc = doc;
    arena_init(doc);
    s->n_states = STATE_ROOT + 1;
    s->states[STATE_NONE].selector = -1;
    s->states[STATE_ROOT].selector = -1;
    for (int i = 0; selectors && selectors[i]; i++) {
        if (!add_selector(s, selectors[i], i))
            g_error("strata: bad pickle stream selector '%s'", selectors[i]);
        s->n_selectors++;
    }
    s->plan = (memo_plan){g_new0(memo_slot, 64), 63, 0};
    s->have_plan = plan_memo(s);
    s->gc_limit = COLLECT_MIN_BYTES;
    strata_pickle_stream_rewind(s);
    return s;
}

strata_pickle_stream *strata_pickle_stream_open_file(const char *path,
                                                     const char *const *selectors, GError **err)
{
    strata_pickle *doc = doc_for_file(path, err);
    return doc ? stream_new(doc, selectors) : NULL;
}

strata_pickle_stream *strata_pickle_stream_open_buffer(const void *data, size_t len,
                                                       const char *origin,
                                                       const char *const *selectors,
                                                       GError **err)
{
    (void)err;
    return stream_new(doc_for_buffer(data, len, origin), selectors);
}

void strata_pickle_stream_rewind(strata_pickle_stream *s)
{
    parser *ps = &s->ps;
    ps->p = s->doc;
    ps->stream = s;
    ps->plan = s->have_plan ? &s->plan : NULL;
    ps->pos = ps->op_at = 0;
    ps->n_stack = ps->n_marks = 0;
    ps->n_memo = 0;
    ps->keys_dense = true;
    g_free(ps->key_bits);
    ps->key_bits = NULL;
    ps->n_key_words = 0;
    ps->paused = false;
    if (ps->memo)
        memset(ps->memo, 0, ps->cap_memo * sizeof(strata_pv));
    for (size_t i = 0; i <= s->plan.mask; i++)
        s->plan.slots[i].value = STRATA_PV_NULL;
    s->doc->n_nodes = 1;
    s->doc->n_cells = 1;
    g_byte_array_set_size(s->doc->strbuf, 0);
    s->doc->root = STRATA_PV_NULL;
    s->doc->protocol = 0;
    memset(s->made, 0, sizeof s->made);
    s->done = s->exact = false;
    g_clear_error(&s->error);
    s->released = 0;
}

int strata_pickle_stream_next(strata_pickle_stream *s, strata_pickle_item *item, GError **err)
{
    if (s->error) {
        if (err)
            *err = g_error_copy(s->error);
        return -1;
    }
    if (s->done)
        return 0;
    parser *ps = &s->ps;
    for (;;) {
        if (ps->paused) {
            if (ps->pend_next < ps->n_stack) {
                pnode *list = &s->doc->nodes[ps->pend_list];
                item->selector = s->states[NODE_TAG(list)].selector;
                item->outer = list->u;
                item->index = list->a++;
                item->value = ps->stack[ps->pend_next++];
                return 1;
            }
            ps->n_stack = ps->pend_first;
            ps->paused = false;
            maintain(s);
        }
        ps->err = &s->error;
        bool ok = run(ps);
        ps->err = NULL;
        if (!ok) {
            if (err)
                *err = g_error_copy(s->error);
            return -1;
        }
        if (!ps->paused) {
            s->peak_arena = MAX(s->peak_arena, arena_bytes(s));
            s->done = true;
            s->exact = verify(s);
            return 0;
        }
    }
}

const strata_pickle *strata_pickle_stream_doc(const strata_pickle_stream *s) { return s->doc; }
bool strata_pickle_stream_exact(const strata_pickle_stream *s) { return s->done && s->exact; }
size_t strata_pickle_stream_peak_arena(const strata_pickle_stream *s) { return s->peak_arena; }
bool strata_pickle_stream_planned(const strata_pickle_stream *s) { return s->have_plan; }

void strata_pickle_stream_set_collect_bytes(strata_pickle_stream *s, size_t bytes)
{
    s->gc_limit = bytes;
}

void strata_pickle_stream_free(strata_pickle_stream *s)
{
    if (s == NULL)
        return;
    g_free(s->ps.stack);
    g_free(s->ps.marks);
    g_free(s->ps.memo);
    g_free(s->ps.key_bits);
    g_free(s->plan.slots);
    if (s->spare.nodes) {
        munmap(s->spare.nodes, s->spare.cap_nodes * sizeof(pnode));
        munmap(s->spare.cells, s->spare.cap_cells * sizeof(pcell));
    }
    for (uint32_t k = 0; k < s->n_states; k++)
        g_free(s->states[k].key);
    g_clear_error(&s->error);
    strata_pickle_free(s->doc);
    g_free(s);
}

void strata_pickle_free(strata_pickle *p)
{
    if (p == NULL)
        return;
    if (p->map)
        munmap(p->map, p->map_len);
    if (p->nodes)
        munmap(p->nodes, p->cap_nodes * sizeof(pnode));
    if (p->cells)
        munmap(p->cells, p->cap_cells * sizeof(pcell));
    if (p->strbuf)
        g_byte_array_unref(p->strbuf);
    g_free(p->origin);
    g_free(p);
}

/* ---- access ------------------------------------------------------------------------ */

strata_pv strata_pickle_root(const strata_pickle *p) { return p->root; }
int strata_pickle_protocol(const strata_pickle *p) { return p->protocol; }
size_t strata_pickle_n_nodes(const strata_pickle *p) { return p->n_nodes - 1; }

strata_pickle_type strata_pickle_type_of(const strata_pickle *p, strata_pv v)
{
    if (PV_IS_INT(v))
        return STRATA_PICKLE_INT;
    if (v == STRATA_PV_NULL || v >= p->n_nodes)
        return STRATA_PICKLE_NOTHING;
    return NODE_TYPE(&p->nodes[v]);
}

const char *strata_pickle_type_name(strata_pickle_type t)
{
    static const char *const names[] = {"nothing", "None", "bool",  "int",   "int",  "float",
                                        "str",     "bytes", "list", "tuple", "dict", "set"};
    return (unsigned)t < G_N_ELEMENTS(names) ? names[t] : "?";
}

bool strata_pickle_get_bool(const strata_pickle *p, strata_pv v, bool *out)
{
    if (strata_pickle_type_of(p, v) != STRATA_PICKLE_BOOL)
        return false;
    *out = p->nodes[v].u != 0;
    return true;
}

bool strata_pickle_get_int(const strata_pickle *p, strata_pv v, int64_t *out)
{
    strata_pickle_type t = strata_pickle_type_of(p, v);
    if (t != STRATA_PICKLE_INT && t != STRATA_PICKLE_BOOL)
        return false;
    *out = PV_IS_INT(v) ? (int64_t)(v & ~PV_INT_TAG) : (int64_t)p->nodes[v].u;
    return true;
}

bool strata_pickle_get_double(const strata_pickle *p, strata_pv v, double *out)
{
    strata_pickle_type t = strata_pickle_type_of(p, v);
    if (t == STRATA_PICKLE_INT || t == STRATA_PICKLE_BOOL) {
        int64_t i = 0;
        strata_pickle_get_int(p, v, &i);
        *out = (double)i;
        return true;
    }
    if (t == STRATA_PICKLE_FLOAT || t == STRATA_PICKLE_BIGINT) {
        memcpy(out, &p->nodes[v].u, sizeof *out);
        return true;
    }
    return false;
}

const char *strata_pickle_get_bytes(const strata_pickle *p, strata_pv v, size_t *len)
{
    strata_pickle_type t = strata_pickle_type_of(p, v);
    if (t != STRATA_PICKLE_STR && t != STRATA_PICKLE_BYTES)
        return NULL;
    const pnode *n = &p->nodes[v];
    *len = n->a;
    if (n->a == 0)
        return ""; /* strbuf may have no storage at all */
    if (n->u & STR_IN_BUF)
        return (const char *)p->strbuf->data + (n->u & ~STR_IN_BUF);
    return (const char *)p->data + n->u;
}

bool strata_pickle_str_equal(const strata_pickle *p, strata_pv v, const char *text)
{
    if (strata_pickle_type_of(p, v) != STRATA_PICKLE_STR)
        return false;
    size_t len;
    const char *s = strata_pickle_get_bytes(p, v, &len);
    return len == strlen(text) && memcmp(s, text, len) == 0;
}

char *strata_pickle_dup_str(const strata_pickle *p, strata_pv v)
{
    size_t len;
    const char *s = strata_pickle_get_bytes(p, v, &len);
    return s ? g_strndup(s, len) : NULL;
}

static bool is_container(strata_pickle_type t) { return is_container_type(t); }

size_t strata_pickle_len(const strata_pickle *p, strata_pv v)
{
    return is_container(strata_pickle_type_of(p, v)) ? p->nodes[v].a : 0;
}

void strata_pickle_iter_init(const strata_pickle *p, strata_pv container, strata_pickle_iter *it)
{
    it->cell = is_container(strata_pickle_type_of(p, container))
                   ? (uint32_t)(p->nodes[container].u >> 32)
                   : 0;
}

bool strata_pickle_iter_next(const strata_pickle *p, strata_pickle_iter *it, strata_pv *key,
                             strata_pv *value)
{
    if (it->cell == 0)
        return false;
    const pcell *c = &p->cells[it->cell];
    if (key)
        *key = c->key;
    if (value)
        *value = c->value;
    it->cell = c->next;
    return true;
}

strata_pv strata_pickle_dict_get(const strata_pickle *p, strata_pv dict, const char *key)
{
    if (strata_pickle_type_of(p, dict) != STRATA_PICKLE_DICT)
        return STRATA_PV_NULL;
    size_t klen = strlen(key);
    strata_pv found = STRATA_PV_NULL;
    strata_pickle_iter it;
    strata_pv k, v;
    strata_pickle_iter_init(p, dict, &it);
    while (strata_pickle_iter_next(p, &it, &k, &v)) {
        if (PV_IS_INT(k) || NODE_TYPE(&p->nodes[k]) != STRATA_PICKLE_STR || p->nodes[k].a != klen)
            continue;
        size_t len;
        const char *s = strata_pickle_get_bytes(p, k, &len);
        if (memcmp(s, key, klen) == 0)
            found = v;
    }
    return found;
}

/* ---- text rendering ---------------------------------------------------------------- */

static void append_json_string(GString *out, const char *s, size_t len)
{
    g_string_append_c(out, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            g_string_append_printf(out, "\\%c", c);
        else if (c < 0x20)
            g_string_append_printf(out, "\\u%04x", c);
        else
            g_string_append_c(out, (char)c);
    }
    g_string_append_c(out, '"');
}

static void render(const strata_pickle *p, strata_pv v, int depth, GString *out)
{
    strata_pickle_type t = strata_pickle_type_of(p, v);
    if (depth < 0 && is_container(t)) {
        g_string_append(out, "...");
        return;
    }
    switch (t) {
    case STRATA_PICKLE_NOTHING:
    case STRATA_PICKLE_NONE: g_string_append(out, "null"); break;
    case STRATA_PICKLE_BOOL: g_string_append(out, p->nodes[v].u ? "true" : "false"); break;
    case STRATA_PICKLE_INT: {
        int64_t i = 0;
        strata_pickle_get_int(p, v, &i);
        g_string_append_printf(out, "%" G_GINT64_FORMAT, i);
        break;
    }
    case STRATA_PICKLE_BIGINT:
    case STRATA_PICKLE_FLOAT: {
        double x;
        strata_pickle_get_double(p, v, &x);
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        g_string_append(out, g_ascii_dtostr(buf, sizeof buf, x));
        break;
    }
    case STRATA_PICKLE_STR:
    case STRATA_PICKLE_BYTES: {
        size_t len;
        const char *s = strata_pickle_get_bytes(p, v, &len);
        append_json_string(out, s, len);
        break;
    }
    case STRATA_PICKLE_LIST:
    case STRATA_PICKLE_TUPLE:
    case STRATA_PICKLE_SET:
    case STRATA_PICKLE_DICT: {
        bool dict = t == STRATA_PICKLE_DICT;
        g_string_append_c(out, dict ? '{' : '[');
        strata_pickle_iter it;
        strata_pv k, val;
        bool firstitem = true;
        strata_pickle_iter_init(p, v, &it);
        while (strata_pickle_iter_next(p, &it, &k, &val)) {
            if (!firstitem)
                g_string_append_c(out, ',');
            firstitem = false;
            if (dict) {
                render(p, k, depth - 1, out);
                g_string_append_c(out, ':');
            }
            render(p, val, depth - 1, out);
        }
        g_string_append_c(out, dict ? '}' : ']');
        break;
    }
    }
}

char *strata_pickle_to_text(const strata_pickle *p, strata_pv v, int max_depth)
{
    GString *out = g_string_new(NULL);
    render(p, v, max_depth, out);
    return g_string_free(out, FALSE);
}
