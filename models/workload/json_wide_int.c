/*
 * json_wide_int.c: the integer literals of a JSON text past 64 bits
 * (json_wide_int.h). One pass over the text, outside strings: a stack of
 * the member names whose values enclose the position, and each number
 * token read as text (sign, digits; a fraction or an exponent makes it a
 * double, which json-glib holds as one).
 */
#include "workload/json_wide_int.h"
#include <string.h>

static void wide_free(gpointer data)
{
    strata_json_wide_int *w = data;
    g_free(w->key);
    g_free(w->text);
    g_free(w);
}

/* Whether the digits (no sign, no leading zeros beyond one "0") exceed the
 * magnitude of INT64_MAX (negative: of INT64_MIN). */
static gboolean digits_past_int64(const char *digits, size_t n, gboolean negative)
{
    static const char max[] = "9223372036854775807", min[] = "9223372036854775808";
    while (n > 1 && *digits == '0')
        digits++, n--;
    if (n != sizeof max - 1)
        return n > sizeof max - 1;
    return strncmp(digits, negative ? min : max, n) > 0;
}

/* Skips the string starting at its opening quote *p; returns what follows
 * it (the end of text when unterminated), counting lines. */
static const char *skip_string(const char *p, guint *line)
{
    for (p++; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1])
            p++;
        if (*p == '\n')
            (*line)++;
    }
    return *p ? p + 1 : p;
}

GPtrArray *strata_json_wide_ints(const char *text)
{
    GPtrArray *out = g_ptr_array_new_with_free_func(wide_free);
    GPtrArray *keys = g_ptr_array_new_with_free_func(g_free); /* the enclosing values' keys */
    char *key = g_strdup(""), *last_string = NULL;
    guint line = 1;
    for (const char *p = text; *p;) {
        if (*p == '"') {
            const char *end = skip_string(p, &line);
            size_t len = (size_t)(end - p) - 1; /* after the opening quote */
            if (len > 0 && end[-1] == '"')
                len--; /* the closing quote */
            g_free(last_string);
            last_string = g_strndup(p + 1, len);
            p = end;
            continue;
        }
        if (*p == ':' && last_string) {
            g_free(key);
            key = g_strdup(last_string);
        } else if (*p == '{' || *p == '[') {
            g_ptr_array_add(keys, g_strdup(key));
        } else if ((*p == '}' || *p == ']') && keys->len) {
            g_free(key);
            key = g_ptr_array_steal_index(keys, keys->len - 1);
        } else if (*p == '-' || g_ascii_isdigit(*p)) {
            const char *start = p, *digits = p + (*p == '-');
            const char *q = digits;
            while (g_ascii_isdigit(*q))
                q++;
            gboolean integral = *q != '.' && *q != 'e' && *q != 'E';
            if (integral && q > digits && digits_past_int64(digits, (size_t)(q - digits), *p == '-')) {
                strata_json_wide_int *w = g_new0(strata_json_wide_int, 1);
                w->key = g_strdup(key);
                w->text = g_strndup(start, (size_t)(q - start));
                w->line = line;
                g_ptr_array_add(out, w);
            }
            while (g_ascii_isalnum(*q) || *q == '.' || *q == '+' || *q == '-')
                q++; /* the rest of the token: fraction, exponent */
            p = q;
            continue;
        } else if (*p == '\n') {
            line++;
        }
        p++;
    }
    g_free(key);
    g_free(last_string);
    g_ptr_array_unref(keys);
    return out;
}
