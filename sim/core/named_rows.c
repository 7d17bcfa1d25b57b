/*
 * named_rows.c: lookup and listing of a table of named rows
 * (named_rows.h). A row's name is read through a pointer to the row, which
 * C lets stand for a pointer to its first member (C17 6.7.2.1p15).
 */
#include "core/named_rows.h"
#include <glib.h>
#include <string.h>

static const char *name_of(const void *rows, size_t i, size_t size)
{
    return *(const char *const *)(const void *)((const char *)rows + i * size);
}

const void *strata_rows_find(const void *rows, size_t n, size_t size, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name_of(rows, i, size), name) == 0)
            return (const char *)rows + i * size;
    return NULL;
}

char *strata_rows_names(const void *rows, size_t n, size_t size)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < n; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", name_of(rows, i, size));
    return g_string_free(s, FALSE);
}
