/*
 * serve_names.c: the serving tables' lookup by name (serve_names.h).
 */
#include "serve/serve_names.h"
#include <string.h>
#include "core/error.h"

/* Row i: the i-th entry, or the row it points to in a table of pointers (NULL: the end of that table). */
static const char *row_at(serve_names t, size_t i)
{
    const char *entry = (const char *)t.rows + i * t.stride;
    if (!t.pointers)
        return entry;
    const char *row;
    memcpy(&row, entry, sizeof row);
    return row;
}

/* Row i's name (NULL: the end of the table). */
static const char *name_at(serve_names t, size_t i)
{
    const char *row = row_at(t, i);
    if (!row)
        return NULL;
    const char *name;
    memcpy(&name, row + t.name_offset, sizeof name);
    return name;
}

const void *serve_names_find(serve_names t, const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; name_at(t, i); i++)
        if (strcmp(name_at(t, i), name) == 0)
            return row_at(t, i);
    return NULL;
}

char *serve_names_list(serve_names t)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; name_at(t, i); i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", name_at(t, i));
    return g_string_free(s, FALSE);
}

const void *serve_names_lookup(serve_names t, const char *name, int code, GError **err, const char *format)
{
    const void *row = serve_names_find(t, name);
    if (row)
        return row;
    char *known = serve_names_list(t);
    g_set_error(err, STRATA_ERROR, code, format, name ? name : "(none)", known);
    g_free(known);
    return NULL;
}
