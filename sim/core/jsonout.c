/*
 * jsonout.c: JsonBuilder member setters and pretty JSON text and files
 * (see jsonout.h).
 */
#include "core/jsonout.h"
#include "core/outfile.h"
#include <math.h>
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

void strata_json_add_fields(JsonBuilder *b, const strata_json_field *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (f[i].kind) {
        case STRATA_JSON_KIND_REAL:
            strata_json_add_double(b, f[i].key, f[i].real);
            break;
        case STRATA_JSON_KIND_COUNT:
            strata_json_add_uint(b, f[i].key, f[i].count);
            break;
        case STRATA_JSON_KIND_INT:
            strata_json_add_int(b, f[i].key, f[i].integer);
            break;
        case STRATA_JSON_KIND_STRING:
            strata_json_add_string(b, f[i].key, f[i].string);
            break;
        }
    }
}

void strata_json_add_object(JsonBuilder *b, const char *key, const strata_json_field *f, size_t n)
{
    if (key)
        json_builder_set_member_name(b, key);
    json_builder_begin_object(b);
    strata_json_add_fields(b, f, n);
    json_builder_end_object(b);
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

/* A character of a number's text as number_text writes it. */
static bool number_char(char c) { return g_ascii_isdigit(c) || c == '-' || c == '+' || c == '.' || c == 'e'; }

/* text with every written big count or double ("\u0001u64:TEXT", in
 * quotes) as its bare number text. A quote that opens a string is never preceded by a backslash
 * (one inside a string always is), and the names results carry are printable
 * (the trace and hardware readers refuse control characters), so no other
 * string is written as a whole "\u0001u64:TEXT". */
static char *unquote_big(const char *text)
{
    GString *out = g_string_new(NULL);
    const char *p = text, *hit;
    while ((hit = strstr(p, BIG_WRITTEN))) {
        const char *digits = hit + strlen(BIG_WRITTEN), *end = digits;
        while (number_char(*end))
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

/* The JSON text of a finite double: the shortest form that reads back
 * exactly (%.17g, as json-glib writes it), with a point before any exponent
 * so that it stays a double to json-glib's readers ("3.0e-10", "1.0",
 * "-0.0", "4.9406564584124654e-324"). */
static void number_text(double v, char *buf, size_t len)
{
    char digits[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_dtostr(digits, sizeof digits, v);
    if (strchr(digits, '.')) {
        g_strlcpy(buf, digits, len);
        return;
    }
    char *e = strchr(digits, 'e');
    if (e == NULL) {
        g_snprintf(buf, len, "%s.0", digits);
        return;
    }
    g_snprintf(buf, len, "%.*s.0%s", (int)(e - digits), digits, e);
}

/* A copy of node in which every double is a string of BIG_PREFIX and its
 * JSON text (unquote_big writes it bare), or null when it is not finite
 * (JSON has no NaN nor infinity): json-glib writes a double as
 * g_ascii_dtostr plus ".0" when that has no point, "3e-10.0", "inf.0",
 * which no JSON reader accepts. */
static JsonNode *numbers_as_text(JsonNode *node)
{
    switch (JSON_NODE_TYPE(node)) {
    case JSON_NODE_OBJECT: {
        JsonObject *in = json_node_get_object(node), *out = json_object_new();
        JsonObjectIter it;
        const char *name;
        JsonNode *member;
        json_object_iter_init_ordered(&it, in);
        while (json_object_iter_next_ordered(&it, &name, &member))
            json_object_set_member(out, name, numbers_as_text(member));
        JsonNode *copy = json_node_new(JSON_NODE_OBJECT);
        json_node_take_object(copy, out);
        return copy;
    }
    case JSON_NODE_ARRAY: {
        JsonArray *in = json_node_get_array(node), *out = json_array_sized_new(json_array_get_length(in));
        for (guint i = 0; i < json_array_get_length(in); i++)
            json_array_add_element(out, numbers_as_text(json_array_get_element(in, i)));
        JsonNode *copy = json_node_new(JSON_NODE_ARRAY);
        json_node_take_array(copy, out);
        return copy;
    }
    case JSON_NODE_VALUE:
        if (json_node_get_value_type(node) == G_TYPE_DOUBLE) {
            double v = json_node_get_double(node);
            if (!isfinite(v))
                return json_node_init_null(json_node_alloc());
            char text[G_ASCII_DTOSTR_BUF_SIZE + 16];
            memcpy(text, BIG_PREFIX, strlen(BIG_PREFIX));
            number_text(v, text + strlen(BIG_PREFIX), sizeof text - strlen(BIG_PREFIX));
            return json_node_init_string(json_node_alloc(), text);
        }
        return json_node_copy(node);
    default:
        return json_node_copy(node);
    }
}

char *strata_json_text(JsonNode *root)
{
    JsonNode *written = numbers_as_text(root);
    JsonGenerator *gen = json_generator_new();
    json_generator_set_pretty(gen, TRUE);
    json_generator_set_indent(gen, 2);
    json_generator_set_root(gen, written);
    char *body = json_generator_to_data(gen, NULL);
    g_object_unref(gen);
    json_node_unref(written);
    char *exact = unquote_big(body);
    char *text = g_strconcat(exact, "\n", NULL);
    g_free(body);
    g_free(exact);
    return text;
}

char *strata_json_quote_bytes(const char *s)
{
    GString *out = g_string_new("\"");
    const char *p = s, *end = s + strlen(s);
    while (p < end) {
        gunichar c = g_utf8_get_char_validated(p, end - p);
        if (c == (gunichar)-1 || c == (gunichar)-2) { /* not UTF-8: this byte escaped */
            g_string_append_printf(out, "\\udc%02x", (unsigned char)*p);
            p++;
            continue;
        }
        const char *next = g_utf8_next_char(p);
        switch (c) {
        case '"': g_string_append(out, "\\\""); break;
        case '\\': g_string_append(out, "\\\\"); break;
        case '\b': g_string_append(out, "\\b"); break;
        case '\f': g_string_append(out, "\\f"); break;
        case '\n': g_string_append(out, "\\n"); break;
        case '\r': g_string_append(out, "\\r"); break;
        case '\t': g_string_append(out, "\\t"); break;
        default:
            if (c < 0x20)
                g_string_append_printf(out, "\\u%04x", (unsigned)c);
            else
                g_string_append_len(out, p, next - p);
        }
        p = next;
    }
    g_string_append_c(out, '"');
    return g_string_free(out, FALSE);
}

bool strata_json_write_file(strata_outfile_set *set, const char *path, JsonNode *root, GError **err)
{
    char *text = strata_json_text(root);
    bool ok = strata_write_file_atomic_in(set, path, text, strlen(text), err);
    g_free(text);
    return ok;
}
