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
 * Invariants (beyond pickle.h's):
 *  1. nodes[0] and cells[0] are sentinels; handle 0 means "none"; a handle
 *     with bit 31 set is an immediate int (no node), so there are fewer
 *     than 2^31 nodes.
 *  2. Every stack slot holds a valid node handle.
 *  3. marks[] is non-decreasing and each mark <= stack length.
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
    uint32_t type; /* strata_pickle_type */
    uint32_t a;    /* STR/BYTES: length; containers: item count */
    uint64_t u;    /* INT: value; FLOAT/BIGINT: bits; STR: offset; containers: head<<32|tail */
} pnode;

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

/* Parser state, alive during one load. */
typedef struct parser {
    strata_pickle *p;
    size_t pos;   /* offset of the next byte */
    size_t op_at; /* offset of the current opcode, for messages */
    strata_pv *stack;
    size_t n_stack, cap_stack;
    size_t *marks;
    size_t n_marks, cap_marks;
    strata_pv *memo;
    size_t cap_memo;
    size_t n_memo; /* distinct keys set (MEMOIZE's next key) */
    GError **err;
} parser;

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

static strata_pv new_node(strata_pickle *p, strata_pickle_type type, uint32_t a, uint64_t u)
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

/* ---- memo ----------------------------------------------------------------- */

static bool memo_put(parser *ps, uint64_t key, strata_pv v)
{
    /* A real pickler numbers memo entries 0, 1, 2... so a key can never
     * exceed the number of bytes read so far: this bounds the memo by the
     * input size whatever the key says. */
    if (key > ps->pos)
        return fail(ps, "memo key %" G_GUINT64_FORMAT " is out of range", key);
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
    strata_pv c = new_node(ps->p, type, 0, 0);
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
            if (!push_new(ps, STRATA_PICKLE_DICT, 0, 0))
                return false;
            break;
        case ']': /* EMPTY_LIST */
            if (!push_new(ps, STRATA_PICKLE_LIST, 0, 0))
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
            container_add(p, c, STRATA_PV_NULL, v);
            break;
        case 'e': /* APPENDS */
            if (!extend_from_mark(ps, "APPENDS", STRATA_PICKLE_LIST))
                return false;
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

static strata_pickle *parse(strata_pickle *p, GError **err)
{
    p->n_nodes = 1; /* node 0: the null handle (mappings start zeroed) */
    p->cap_nodes = 4096;
    p->nodes = region_resize(NULL, 0, p->cap_nodes * sizeof(pnode));
    p->n_cells = 1;
    p->cap_cells = 4096;
    p->cells = region_resize(NULL, 0, p->cap_cells * sizeof(pcell));
    p->strbuf = g_byte_array_new();
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

strata_pickle *strata_pickle_load_buffer(const void *data, size_t len, const char *origin,
                                         GError **err)
{
    strata_pickle *p = g_new0(strata_pickle, 1);
    p->origin = g_strdup(origin ? origin : "<pickle>");
    p->data = data;
    p->len = len;
    return parse(p, err);
}

strata_pickle *strata_pickle_load_file(const char *path, GError **err)
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
    strata_pickle *p = g_new0(strata_pickle, 1);
    p->origin = g_strdup(path);
    p->len = (size_t)st.st_size;
    static const uint8_t empty[1] = {0};
    p->data = empty;
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
    return parse(p, err);
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
    return (strata_pickle_type)p->nodes[v].type;
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

static bool is_container(strata_pickle_type t)
{
    return t == STRATA_PICKLE_LIST || t == STRATA_PICKLE_TUPLE || t == STRATA_PICKLE_DICT ||
           t == STRATA_PICKLE_SET;
}

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
        if (PV_IS_INT(k) || p->nodes[k].type != STRATA_PICKLE_STR || p->nodes[k].a != klen)
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
