/*
 * source.c: the pull-based op stream (a vtable wrapper), and the in-memory
 * sources built from an array or an strata_op_list.
 *
 * Invariants:
 *  1. A strata_source owns `self` and destroys it through vt->destroy once.
 *  2. An op list owns deep copies (strata_op_copy) of every op appended; the
 *     op handed out by its source points into the list and stays valid until
 *     the source is freed (longer than source.h promises).
 *  3. After next() returned 0 (end) it keeps returning 0 until rewind().
 */
#include "trace/source.h"
#include "core/error.h"

struct strata_source {
    const strata_source_vtable *vt;
    void *self;
    char *origin;
};

strata_source *strata_source_new(const strata_source_vtable *vt, void *self, const char *origin)
{
    strata_source *src = g_new0(strata_source, 1);
    src->vt = vt;
    src->self = self;
    src->origin = g_strdup(origin ? origin : "<ops>");
    return src;
}

int strata_source_next(strata_source *src, const strata_op **op, GError **err)
{
    return src->vt->next(src->self, op, err);
}

bool strata_source_rewind(strata_source *src, GError **err)
{
    return src->vt->rewind(src->self, err);
}

const char *strata_source_origin(const strata_source *src) { return src->origin; }

void *strata_source_self(const strata_source *src, const strata_source_vtable *vt)
{
    return src && src->vt == vt ? src->self : NULL;
}

void strata_source_free(strata_source *src)
{
    if (src == NULL)
        return;
    if (src->vt->destroy)
        src->vt->destroy(src->self);
    g_free(src->origin);
    g_free(src);
}

/* ---- op list: a growable array of owned ops --------------------------- */

struct strata_op_list {
    GArray *ops;  /* strata_op, each an owned copy */
    uint64_t next;  /* cursor when used as a source: an index in the stream */
    size_t body;    /* ops[body] is handed out `times` times (1: a plain list) */
    uint64_t times;
};

static void op_list_clear_element(gpointer data) { strata_op_clear((strata_op *)data); }

strata_op_list *strata_op_list_new(void)
{
    strata_op_list *list = g_new0(strata_op_list, 1);
    list->ops = g_array_new(FALSE, TRUE, sizeof(strata_op));
    list->times = 1;
    g_array_set_clear_func(list->ops, op_list_clear_element);
    return list;
}

void strata_op_list_append(strata_op_list *list, const strata_op *op)
{
    strata_op copy;
    strata_op_copy(&copy, op);
    g_array_append_val(list->ops, copy);
}

size_t strata_op_list_len(const strata_op_list *list) { return list->ops->len; }

const strata_op *strata_op_list_get(const strata_op_list *list, size_t i)
{
    g_return_val_if_fail(i < list->ops->len, NULL);
    return &g_array_index(list->ops, strata_op, i);
}

void strata_op_list_free(strata_op_list *list)
{
    if (list == NULL)
        return;
    g_array_free(list->ops, TRUE);
    g_free(list);
}

/* The stream is ops[0..body), ops[body] `times` times, ops(body..len). */
static int op_list_next(void *self, const strata_op **op, GError **err)
{
    (void)err;
    strata_op_list *list = self;
    uint64_t len = list->ops->len ? list->ops->len - 1 + list->times : 0;
    if (list->next >= len)
        return 0;
    uint64_t at = list->next;
    size_t i = at <= list->body ? (size_t)at : at < list->body + list->times ? list->body : (size_t)(at - list->times + 1);
    *op = &g_array_index(list->ops, strata_op, i);
    list->next++;
    return 1;
}

static bool op_list_rewind(void *self, GError **err)
{
    (void)err;
    ((strata_op_list *)self)->next = 0;
    return true;
}

static void op_list_destroy(void *self) { strata_op_list_free(self); }

static const strata_source_vtable op_list_vtable = {
    .next = op_list_next,
    .rewind = op_list_rewind,
    .destroy = op_list_destroy,
};

strata_source *strata_op_list_to_source(strata_op_list *list, const char *origin)
{
    list->next = 0;
    return strata_source_new(&op_list_vtable, list, origin);
}

strata_source *strata_op_list_to_source_repeating(strata_op_list *list, size_t body, uint64_t times,
                                                  const char *origin)
{
    g_return_val_if_fail(body < list->ops->len, NULL);
    if (times == 0) {
        g_array_remove_index(list->ops, body);
        list->body = 0;
        list->times = 1;
    } else {
        list->body = body;
        list->times = times;
    }
    return strata_op_list_to_source(list, origin);
}

strata_source *strata_source_from_array(const strata_op *ops, size_t n, const char *origin)
{
    strata_op_list *list = strata_op_list_new();
    for (size_t i = 0; i < n; i++)
        strata_op_list_append(list, &ops[i]);
    return strata_op_list_to_source(list, origin);
}
