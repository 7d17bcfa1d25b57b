/*
 * json_python_words.c: Python's words for float infinities and NaN in a
 * JSON text, read as null (json_python_words.h). One pass over the text,
 * outside strings, a word only where no name character touches it.
 */
#include "workload/json_python_words.h"
#include <stdbool.h>
#include <string.h>

char *strata_json_python_words_to_null(const char *text, GArray *lines)
{
    static const char *const words[] = {"-Infinity", "Infinity", "NaN"};
    GString *out = g_string_sized_new(strlen(text));
    bool in_string = false;
    guint line = 1;
    for (const char *p = text; *p;) {
        if (*p == '\n')
            line++;
        if (in_string) {
            if (*p == '\\' && p[1]) {
                g_string_append_len(out, p, 2);
                p += 2;
                continue;
            }
            in_string = *p != '"';
        } else if (*p == '"') {
            in_string = true;
        } else {
            bool replaced = false;
            for (size_t w = 0; w < G_N_ELEMENTS(words) && !replaced; w++) {
                size_t n = strlen(words[w]);
                bool starts = p == text || !(g_ascii_isalnum(p[-1]) || p[-1] == '_');
                if (starts && strncmp(p, words[w], n) == 0 && !(g_ascii_isalnum(p[n]) || p[n] == '_')) {
                    g_string_append(out, "null");
                    g_array_append_val(lines, line);
                    p += n;
                    replaced = true;
                }
            }
            if (replaced)
                continue;
        }
        g_string_append_c(out, *p++);
    }
    return g_string_free(out, FALSE);
}
