/*
 * pickle_stream.c: streamed reading of a pickle (see pickle.h): the
 * selector paths, the memo plan, and the stream API.
 *
 *  - The same opcode machine (strata_pickle_run), which pauses when an
 *    APPEND(S) targets a selected list and hands its items out instead of
 *    storing them. Each new list or dict gets a path state in its node's tag
 *    bits (infer_state: where Python's pickler would attach it), checked
 *    against the finished document at STOP (verify).
 *  - A plan pass (plan_memo) reads the opcodes through the machine's table
 *    first and finds each memo key's last GET, so the memo holds a value only
 *    while it will be read; between items the collector (pickle_collect.c)
 *    compacts the arena to what the stack and the memo still reach.
 *
 * Invariant: a handed-out list never gets cells (its `u` is its index in
 * its parent list, its `a` the number of items handed out).
 */
#include "import/pickle_stream.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "import/pickle_collect.h"

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
    pickle_space spare;   /* the arrays of the collection before last (nodes, cells) */
    size_t released;      /* file pages before this offset were given back */
    strata_progress *progress; /* borrowed; NULL: none */
    char *progress_what;
    unsigned pass;        /* 1 + rewinds since the stream was opened */
};

#define COLLECT_MIN_BYTES ((size_t)2 << 20)  /* arena size below which nothing is collected */
#define RELEASE_STEP ((size_t)2 << 20)       /* file bytes between page releases */

/* ---- where a new container belongs ----------------------------------------- */

/* The state of a container that will be item `index` of list `list`. */
static uint32_t list_child(const strata_pickle_stream *s, const strata_pickle *p, strata_pv list,
                           uint64_t index)
{
    uint32_t parent = NODE_TAG(&p->space.nodes[list]);
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
    uint32_t parent = NODE_TAG(&p->space.nodes[dict]);
    if (parent == STATE_NONE || strata_pickle_type_of(p, key) != STRATA_PICKLE_STR)
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
static uint32_t infer_state(const parser *ps, size_t i, uint64_t *outer)
{
    const strata_pickle_stream *s = ps->stream;
    const strata_pickle *p = ps->p;
    size_t base = strata_pickle_stack_base(ps);
    uint32_t state = STATE_NONE;
    *outer = 0;
    if (i == 0)
        return ps->n_marks == 0 ? STATE_ROOT : STATE_NONE;
    strata_pv below = ps->stack[i - 1];
    if (i > base && strata_pickle_type_of(p, below) == STRATA_PICKLE_LIST) {
        *outer = p->space.nodes[below].a;
        state = list_child(s, p, below, *outer);
        if (state != STATE_NONE)
            return state;
    }
    if (ps->n_marks > 0 && base >= 1) {
        strata_pv owner = ps->stack[base - 1];
        size_t off = i - base;
        strata_pickle_type t = strata_pickle_type_of(p, owner);
        if (t == STRATA_PICKLE_LIST) {
            *outer = p->space.nodes[owner].a + off;
            state = list_child(s, p, owner, *outer);
        } else if (t == STRATA_PICKLE_DICT && off % 2 == 1) {
            state = dict_child(s, p, owner, below);
        }
        if (state != STATE_NONE)
            return state;
    }
    if (i >= 2 && strata_pickle_type_of(p, ps->stack[i - 2]) == STRATA_PICKLE_DICT)
        return dict_child(s, p, ps->stack[i - 2], below);
    return STATE_NONE;
}

uint32_t strata_pickle_stream_tag(strata_pickle_stream *s, const parser *ps,
                                  strata_pickle_type type, size_t i, bool has_items,
                                  uint64_t *outer)
{
    *outer = 0;
    if (type != STRATA_PICKLE_LIST && type != STRATA_PICKLE_DICT)
        return STATE_NONE;
    uint64_t index = 0;
    uint32_t state = infer_state(ps, i, &index);
    if (state == STATE_NONE || s->states[state].selector < 0)
        return state;
    if (type != STRATA_PICKLE_LIST || has_items)
        return STATE_NONE;
    s->made[state]++;
    *outer = index;
    return state;
}

bool strata_pickle_stream_hands_out(const strata_pickle_stream *s, uint32_t tag)
{
    return tag != STATE_NONE && s->states[tag].selector >= 0;
}

/* ---- the memo plan ------------------------------------------------------------ */


/* Records a GET of key at offset `at` (later GETs come later in the file). */
static void plan_note_get(memo_plan *m, uint64_t key, size_t at)
{
    if (2 * (m->n + 1) > m->mask + 1) {
        memo_plan bigger = {g_new0(memo_slot, 2 * (m->mask + 1)), 2 * m->mask + 1, m->n};
        for (size_t i = 0; i <= m->mask; i++)
            if (m->slots[i].key1) {
                size_t j = strata_pickle_plan_hash(m->slots[i].key1 - 1, bigger.mask);
                while (bigger.slots[j].key1)
                    j = (j + 1) & bigger.mask;
                bigger.slots[j] = m->slots[i];
            }
        g_free(m->slots);
        *m = bigger;
    }
    size_t i = strata_pickle_plan_hash(key, m->mask);
    while (m->slots[i].key1 != 0 && m->slots[i].key1 != key + 1)
        i = (i + 1) & m->mask;
    if (m->slots[i].key1 == 0) {
        m->slots[i].key1 = key + 1;
        m->n++;
    }
    m->slots[i].last_get = at;
}

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

/* The plan pass: reads the opcodes through the machine's table without
 * building values and records the offset of the last GET of each memo
 * key. Returns false where the opcodes stop making sense; the parse then
 * keeps every memo value (it reports the error itself, at that offset or
 * before). */
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
        const pickle_op *op = strata_pickle_op(d[pos++]);
        const uint8_t *arg = NULL;
        size_t n = 0;
        uint64_t key = 0;
        if (op->run == NULL || strata_pickle_operand(op, d, len, &pos, &arg, &n) != OPERAND_OK)
            return false; /* unknown, refused or truncated: the parse says which */
        switch (op->memo) {
        case MEMO_STOP:
            release_pages(s, len);
            return true;
        case MEMO_PUT_NEXT:
            key_bound = MAX(key_bound, ++stores);
            break;
        case MEMO_PUT:
            if (!strata_pickle_memo_key(op, arg, n, &key))
                return false;
            key_bound = MAX(key_bound, MAX(key + 1, ++stores));
            break;
        case MEMO_GET:
            if (!strata_pickle_memo_key(op, arg, n, &key) || key >= key_bound)
                return false;
            plan_note_get(&s->plan, key, at);
            break;
        case MEMO_NONE: break;
        }
        if (pos - s->released > RELEASE_STEP)
            release_pages(s, pos);
    }
    return false;
}

/* ---- between items ------------------------------------------------------------ */

/* Between two items: collect when the arena has doubled since the last
 * collection, give back the file's pages behind the parse position. */
static void maintain(strata_pickle_stream *s)
{
    strata_pickle *p = s->doc;
    size_t used = p->space.n_nodes * sizeof(pnode) + p->space.n_cells * sizeof(pcell) + p->space.strbuf->len;
    if (used > s->gc_limit) {
        strata_pickle_collect(&s->ps, &s->spare);
        size_t live = p->space.n_nodes * sizeof(pnode) + p->space.n_cells * sizeof(pcell) + p->space.strbuf->len;
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
        if (strata_pickle_type_of(p, v) != STRATA_PICKLE_LIST)
            return true; /* not a list: nothing handed out, the reader sees what it is */
        if (NODE_TAG(&p->space.nodes[v]) != state)
            return strata_pickle_len(p, v) == 0;
        if (in_list && p->space.nodes[v].u != index)
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
        } else if (strata_pickle_type_of(p, v) == STRATA_PICKLE_LIST) {
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
    strata_pickle_arena_init(doc);
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
    strata_pickle *doc = strata_pickle_doc_for_file(path, err);
    return doc ? stream_new(doc, selectors) : NULL;
}

strata_pickle_stream *strata_pickle_stream_open_buffer(const void *data, size_t len,
                                                       const char *origin,
                                                       const char *const *selectors,
                                                       GError **err)
{
    (void)err;
    return stream_new(strata_pickle_doc_for_buffer(data, len, origin), selectors);
}

void strata_pickle_stream_rewind(strata_pickle_stream *s)
{
    s->pass++;
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
    s->doc->space.n_nodes = 1;
    s->doc->space.n_cells = 1;
    g_byte_array_set_size(s->doc->space.strbuf, 0);
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
    if (s->progress) {
        char note[24];
        g_snprintf(note, sizeof note, "pass %u", s->pass);
        strata_progress_count(s->progress, s->progress_what, ps->pos, s->doc->len, NULL, note);
    }
    for (;;) {
        if (ps->paused) {
            if (ps->pend_next < ps->n_stack) {
                pnode *list = &s->doc->space.nodes[ps->pend_list];
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
        bool ok = strata_pickle_run(ps);
        ps->err = NULL;
        if (!ok) {
            if (err)
                *err = g_error_copy(s->error);
            return -1;
        }
        if (!ps->paused) {
            s->done = true;
            s->exact = verify(s);
            return 0;
        }
    }
}

const strata_pickle *strata_pickle_stream_doc(const strata_pickle_stream *s) { return s->doc; }
bool strata_pickle_stream_exact(const strata_pickle_stream *s) { return s->done && s->exact; }
bool strata_pickle_stream_planned(const strata_pickle_stream *s) { return s->have_plan; }

void strata_pickle_stream_set_collect_bytes(strata_pickle_stream *s, size_t bytes)
{
    s->gc_limit = bytes;
}

void strata_pickle_stream_set_progress(strata_pickle_stream *s, strata_progress *progress, const char *what)
{
    s->progress = progress;
    g_free(s->progress_what);
    s->progress_what = g_strdup(what);
}

void strata_pickle_stream_free(strata_pickle_stream *s)
{
    if (s == NULL)
        return;
    g_free(s->progress_what);
    g_free(s->ps.stack);
    g_free(s->ps.marks);
    g_free(s->ps.memo);
    g_free(s->ps.key_bits);
    g_free(s->plan.slots);
    strata_pickle_space_clear(&s->spare);
    for (uint32_t k = 0; k < s->n_states; k++)
        g_free(s->states[k].key);
    g_clear_error(&s->error);
    strata_pickle_free(s->doc);
    g_free(s);
}

