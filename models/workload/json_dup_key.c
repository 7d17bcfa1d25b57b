/*
 * json_dup_key.c: a repeated member name in one JSON object
 * (json_dup_key.h). One pass over the text: a stack of scopes, one per
 * open object or array (an array's scope holds no names); a string followed
 * by ':' is a member name of the innermost object, looked up in its
 * scope's table of names and their lines.
 */
#include "workload/json_dup_key.h"
#include <json-glib/json-glib.h>
#include <string.h>
#include "core/error.h"

/* The name between text's quotes [start, end) as json-glib decodes it (a
 * name with no escape as written). */
static char *name_of(const char *start, const char *end)
{
    char *raw = g_strndup(start, (size_t)(end - start));
    if (!strchr(raw, '\\'))
        return raw;
    char *quoted = g_strdup_printf("\"%s\"", raw);
    JsonNode *n = json_from_string(quoted, NULL);
    char *name = n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING
                     ? g_strdup(json_node_get_string(n)) : g_strdup(raw);
    if (n)
        json_node_unref(n);
    g_free(quoted);
    g_free(raw);
    return name;
}

static void scope_free(gpointer scope)
{
    if (scope)
        g_hash_table_destroy(scope);
}

bool strata_json_unique_keys(const char *text, GError **err)
{
    GPtrArray *scopes = g_ptr_array_new_with_free_func(scope_free); /* NULL: an array */
    const char *name = NULL, *name_end = NULL;                       /* the last string */
    guint line = 1, name_line = 0;
    bool found = false;
    for (const char *p = text; *p && !found; p++) {
        if (*p == '"') {
            name = p + 1;
            name_line = line;
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1])
                    p++;
                if (*p == '\n')
                    line++;
            }
            name_end = p;
            if (!*p)
                break;
        } else if (*p == '{') {
            g_ptr_array_add(scopes, g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL));
        } else if (*p == '[') {
            g_ptr_array_add(scopes, NULL);
        } else if ((*p == '}' || *p == ']') && scopes->len) {
            g_ptr_array_remove_index(scopes, scopes->len - 1);
        } else if (*p == ':' && name && scopes->len && g_ptr_array_index(scopes, scopes->len - 1)) {
            GHashTable *seen = g_ptr_array_index(scopes, scopes->len - 1);
            char *key = name_of(name, name_end);
            gpointer first = g_hash_table_lookup(seen, key);
            if ((found = first != NULL))
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, ":%u: key '%s': given twice in one object (first "
                            "at line %u): expected each key once (json.load, and so transformers, would take the "
                            "later value and say nothing); remove one", name_line, key, GPOINTER_TO_UINT(first));
            g_hash_table_insert(seen, key, GUINT_TO_POINTER(name_line));
            name = NULL;
        } else if (*p == '\n') {
            line++;
        }
    }
    g_ptr_array_unref(scopes);
    return !found;
}
