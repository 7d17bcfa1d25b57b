/*
 * jsonout.c: JsonBuilder member setters and pretty JSON text and files
 * (see jsonout.h).
 */
#include "core/jsonout.h"
#include "core/outfile.h"
#include <string.h>

/* The prefix of a byte count above INT64_MAX in the node, and as json-glib
 * writes it (a control character is always escaped as \u0001). */
#define BIG_PREFIX "\001u64:"
#define BIG_WRITTEN "\"\\u0001u64:"

void strata_json_add_int(JsonBuilder *b, const char *key, gint64 v)
{
    json_builder_set_member_name(b, key);
    json_builder_add_int_value(b, v);
}

void strata_json_add_uint(JsonBuilder *b, const char *key, uint64_t v)
{
    json_builder_set_member_name(b, key);
    if (v <= (uint64_t)G_MAXINT64) {
        json_builder_add_int_value(b, (gint64)v);
        return;
    }
    char text[48];
    g_snprintf(text, sizeof text, BIG_PREFIX "%" G_GUINT64_FORMAT, v);
    json_builder_add_string_value(b, text);
}

void strata_json_add_double(JsonBuilder *b, const char *key, double v)
{
    json_builder_set_member_name(b, key);
    json_builder_add_double_value(b, v);
}

void strata_json_add_string(JsonBuilder *b, const char *key, const char *v)
{
    json_builder_set_member_name(b, key);
    if (v)
        json_builder_add_string_value(b, v);
    else
        json_builder_add_null_value(b);
}

JsonBuilder *strata_json_object_begin(void)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    return b;
}

JsonNode *strata_json_object_end(JsonBuilder *b)
{
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    g_object_unref(b);
    return root;
}

void strata_json_open_object(JsonBuilder *b, const char *key)
{
    json_builder_set_member_name(b, key);
    json_builder_begin_object(b);
}

void strata_json_open_array(JsonBuilder *b, const char *key)
{
    json_builder_set_member_name(b, key);
    json_builder_begin_array(b);
}

/* text with every written big count ("\u0001u64:DIGITS", in quotes) as its
 * bare digits. A quote that opens a string is never preceded by a backslash
 * (one inside a string always is), and the names results carry are printable
 * (the trace and hardware readers refuse control characters), so no other
 * string is written as a whole "\u0001u64:DIGITS". */
static char *unquote_big(const char *text)
{
    GString *out = g_string_new(NULL);
    const char *p = text, *hit;
    while ((hit = strstr(p, BIG_WRITTEN))) {
        const char *digits = hit + strlen(BIG_WRITTEN), *end = digits;
        while (g_ascii_isdigit(*end))
            end++;
        bool real = (hit == text || hit[-1] != '\\') && end > digits && *end == '"';
        g_string_append_len(out, p, real ? hit - p : digits - p);
        if (real)
            g_string_append_len(out, digits, end - digits);
        p = real ? end + 1 : digits;
    }
    g_string_append(out, p);
    return g_string_free(out, FALSE);
}

char *strata_json_text(JsonNode *root)
{
    JsonGenerator *gen = json_generator_new();
    json_generator_set_pretty(gen, TRUE);
    json_generator_set_indent(gen, 2);
    json_generator_set_root(gen, root);
    char *body = json_generator_to_data(gen, NULL);
    g_object_unref(gen);
    char *exact = unquote_big(body);
    /* json-glib writes a double with an exponent and no point as "3e-10.0"
     * (it appends ".0" to what has no point), which is no JSON number:
     * "3.0e-10" (a number's digits never stand inside a string here: the
     * names results carry have no such run) */
    GRegex *bad = g_regex_new("([0-9])e([-+]?[0-9]+)\\.0(?![0-9])", 0, 0, NULL);
    char *fixed = g_regex_replace(bad, exact, -1, 0, "\\1.0e\\2", 0, NULL);
    g_regex_unref(bad);
    char *text = g_strconcat(fixed, "\n", NULL);
    g_free(body);
    g_free(exact);
    g_free(fixed);
    return text;
}

bool strata_json_write_file(const char *path, JsonNode *root, GError **err)
{
    char *text = strata_json_text(root);
    bool ok = strata_write_file_atomic(path, text, strlen(text), err);
    g_free(text);
    return ok;
}
