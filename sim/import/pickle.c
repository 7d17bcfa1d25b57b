/*
 * pickle.c: a whole pickle document (see pickle.h): loading it with the
 * opcode machine (pickle_machine.c) into the value arena (pickle_arena.c),
 * and reading its values: scalars, containers by iteration or dict key,
 * and a JSON-like text rendering. Streams are in pickle_stream.c.
 */
#include "import/pickle.h"

#include <string.h>

#include "import/pickle_machine.h"

/* ---- loading ---------------------------------------------------------- */

static strata_pickle *parse(strata_pickle *p, GError **err)
{
    strata_pickle_arena_init(p);
    parser ps = {.p = p, .err = err};
    bool ok = strata_pickle_run(&ps);
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
    return parse(strata_pickle_doc_for_buffer(data, len, origin), err);
}

strata_pickle *strata_pickle_load_file(const char *path, GError **err)
{
    strata_pickle *p = strata_pickle_doc_for_file(path, err);
    return p ? parse(p, err) : NULL;
}


/* ---- access ------------------------------------------------------------------------ */

strata_pv strata_pickle_root(const strata_pickle *p) { return p->root; }
int strata_pickle_protocol(const strata_pickle *p) { return p->protocol; }

strata_pickle_type strata_pickle_type_of(const strata_pickle *p, strata_pv v)
{
    if (PV_IS_INT(v))
        return STRATA_PICKLE_INT;
    if (v == STRATA_PV_NULL || v >= p->space.n_nodes)
        return STRATA_PICKLE_NOTHING;
    return NODE_TYPE(&p->space.nodes[v]);
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
    *out = p->space.nodes[v].u != 0;
    return true;
}

bool strata_pickle_get_int(const strata_pickle *p, strata_pv v, int64_t *out)
{
    strata_pickle_type t = strata_pickle_type_of(p, v);
    if (t != STRATA_PICKLE_INT && t != STRATA_PICKLE_BOOL)
        return false;
    *out = PV_IS_INT(v) ? (int64_t)(v & ~PV_INT_TAG) : (int64_t)p->space.nodes[v].u;
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
        memcpy(out, &p->space.nodes[v].u, sizeof *out);
        return true;
    }
    return false;
}

const char *strata_pickle_get_bytes(const strata_pickle *p, strata_pv v, size_t *len)
{
    strata_pickle_type t = strata_pickle_type_of(p, v);
    if (t != STRATA_PICKLE_STR && t != STRATA_PICKLE_BYTES)
        return NULL;
    const pnode *n = &p->space.nodes[v];
    *len = n->a;
    if (n->a == 0)
        return ""; /* strbuf may have no storage at all */
    if (n->u & STR_IN_BUF)
        return (const char *)p->space.strbuf->data + (n->u & ~STR_IN_BUF);
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


size_t strata_pickle_len(const strata_pickle *p, strata_pv v)
{
    return strata_pickle_is_container(strata_pickle_type_of(p, v)) ? p->space.nodes[v].a : 0;
}

void strata_pickle_iter_init(const strata_pickle *p, strata_pv container, strata_pickle_iter *it)
{
    it->cell = strata_pickle_is_container(strata_pickle_type_of(p, container))
                   ? (uint32_t)(p->space.nodes[container].u >> 32)
                   : 0;
}

bool strata_pickle_iter_next(const strata_pickle *p, strata_pickle_iter *it, strata_pv *key,
                             strata_pv *value)
{
    if (it->cell == 0)
        return false;
    const pcell *c = &p->space.cells[it->cell];
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
        if (PV_IS_INT(k) || NODE_TYPE(&p->space.nodes[k]) != STRATA_PICKLE_STR || p->space.nodes[k].a != klen)
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
    if (depth < 0 && strata_pickle_is_container(t)) {
        g_string_append(out, "...");
        return;
    }
    switch (t) {
    case STRATA_PICKLE_NOTHING:
    case STRATA_PICKLE_NONE: g_string_append(out, "null"); break;
    case STRATA_PICKLE_BOOL: g_string_append(out, p->space.nodes[v].u ? "true" : "false"); break;
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
        size_t len = 0;
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
