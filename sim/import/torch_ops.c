/*
 * torch_ops.c: the converted trace of a snapshot (see torch_conv.h): compact
 * ops (48 bytes, strings as indices into one interned table) and the
 * strata_source that reads them out as strata_ops: first the `option` lines,
 * then the kept ops (the setup; in the whole-document mode every op), then,
 * streaming, the ops of the events as pass 2 makes them.
 *
 * Invariant: an op read out stays valid until the next read (names are
 * formatted into the source's own buffer).
 */
#include <string.h>

#include "import/torch_conv.h"

static const char *const name_prefixes[] = {"", "b.", "seg.", "fill.", "pin."};

ctrace *torch_ctrace_new(void)
{
    ctrace *t = g_new0(ctrace, 1);
    t->ops = g_array_new(FALSE, FALSE, sizeof(cop));
    t->window = g_array_new(FALSE, FALSE, sizeof(cop));
    t->strings = g_ptr_array_new_with_free_func(g_free);
    t->string_index = g_hash_table_new(g_str_hash, g_str_equal);
    t->option_keys = g_ptr_array_new_with_free_func(g_free);
    t->option_values = g_ptr_array_new_with_free_func(g_free);
    return t;
}

void torch_ctrace_free(void *self)
{
    ctrace *t = self;
    if (t == NULL)
        return;
    torch_conv_free(t->events);
    g_array_unref(t->ops);
    g_array_unref(t->window);
    g_hash_table_unref(t->string_index);
    g_ptr_array_unref(t->strings);
    g_ptr_array_unref(t->option_keys);
    g_ptr_array_unref(t->option_values);
    g_free(t);
}

uint32_t torch_intern(ctrace *t, const char *text)
{
    gpointer v = g_hash_table_lookup(t->string_index, text);
    if (v)
        return (uint32_t)(GPOINTER_TO_SIZE(v) - 1);
    char *copy = g_strdup(text);
    g_ptr_array_add(t->strings, copy);
    g_hash_table_insert(t->string_index, copy, GSIZE_TO_POINTER((gsize)t->strings->len));
    return t->strings->len - 1;
}

static int ctrace_next(void *self, const strata_op **out, GError **err)
{
    ctrace *t = self;
    strata_op *op = &t->op;
    memset(op, 0, sizeof *op);
    size_t n_options = t->option_keys->len;
    if (t->next < n_options) {
        op->kind = STRATA_OP_OPTION;
        op->stream = STRATA_DEFAULT_STREAM;
        op->name = t->option_keys->pdata[t->next];
        op->value = t->option_values->pdata[t->next];
        t->next++;
        *out = op;
        return 1;
    }
    const cop *c;
    if (t->next - n_options < t->ops->len) {
        c = &g_array_index(t->ops, cop, t->next - n_options);
        t->next++;
    } else if (t->events) {
        if (t->window_next == t->window->len) {
            g_array_set_size(t->window, 0);
            t->window_next = 0;
            int rc = torch_fill_window(t->events, err);
            if (rc <= 0)
                return rc;
        }
        c = &g_array_index(t->window, cop, t->window_next++);
    } else {
        return 0;
    }
    op->kind = (strata_op_kind)c->kind;
    op->stream = t->strings->pdata[c->stream];
    if (c->name_kind != NAME_NONE) {
        g_snprintf(t->name, sizeof t->name, "%s%" G_GUINT64_FORMAT, name_prefixes[c->name_kind],
                   c->number);
        op->name = t->name;
    }
    op->size = c->size;
    op->has_addr = c->has_addr;
    op->addr = c->addr;
    op->has_at = c->has_at;
    op->at_s = c->has_at ? (double)c->at_us / 1e6 : 0;
    op->note = c->note ? t->strings->pdata[c->note - 1] : NULL;
    op->memory = c->memory ? t->strings->pdata[c->memory - 1] : NULL;
    *out = op;
    return 1;
}

static bool ctrace_rewind(void *self, GError **err)
{
    ctrace *t = self;
    t->next = 0;
    g_array_set_size(t->window, 0);
    t->window_next = 0;
    return t->events == NULL || torch_restart_events(t->events, err);
}

const strata_source_vtable torch_ctrace_vtable = {ctrace_next, ctrace_rewind, torch_ctrace_free};

/* ---- emitting ----------------------------------------------------------------------- */

/* The string index of stream "sN" (streams are few: a linear search over
 * the ones seen, in c->streams, parallel to their string indices). */
uint32_t torch_stream_of(conv *c, int64_t stream)
{
    for (guint i = 0; i < c->streams->len; i += 2)
        if (g_array_index(c->streams, int64_t, i) == stream)
            return (uint32_t)g_array_index(c->streams, int64_t, i + 1);
    char name[32];
    g_snprintf(name, sizeof name, "s%" G_GINT64_FORMAT, stream);
    int64_t pair[2] = {stream, torch_intern(c->out, name)};
    g_array_append_vals(c->streams, pair, 2);
    return (uint32_t)pair[1];
}

void torch_emit(conv *c, strata_op_kind kind, name_kind nk, uint64_t number, uint64_t size,
                 uint32_t stream, uint32_t note, bool has_addr, uint64_t addr, emit_at at)
{
    cop op = {.kind = (uint8_t)kind, .name_kind = (uint8_t)nk, .has_addr = has_addr,
              .has_at = at.has_at, .stream = stream, .note = note, .number = number,
              .size = size, .addr = addr, .at_us = at.at_us};
    g_array_append_val(c->sink, op);
}
