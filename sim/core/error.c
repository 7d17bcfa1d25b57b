/* error.c: the STRATA_ERROR domain and its mapping to exit statuses. */
#include "core/error.h"

#include <string.h>

GQuark strata_error_quark(void) { return g_quark_from_static_string("strata-error-quark"); }

int strata_exit_for_error(const GError *err)
{
    if (err == NULL)
        return STRATA_EXIT_OK;
    if (err->domain != STRATA_ERROR)
        return STRATA_EXIT_USAGE; /* GLib errors: option parsing, key files, files */
    switch ((StrataErrorCode)err->code) {
    case STRATA_ERROR_OOM: return STRATA_EXIT_OOM;
    case STRATA_ERROR_INTERNAL: return STRATA_EXIT_INTERNAL;
    default: return STRATA_EXIT_USAGE;
    }
}

char *strata_quote(const char *text)
{
    if (text == NULL)
        return g_strdup("");
    size_t len = strlen(text);
    char *cut = g_strndup(text, MIN(len, STRATA_QUOTE_MAX));
    char *esc = g_strescape(cut, NULL);
    char *out = len > STRATA_QUOTE_MAX ? g_strconcat(esc, "...", NULL) : g_strdup(esc);
    g_free(cut);
    g_free(esc);
    return out;
}
