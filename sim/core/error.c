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

bool strata_vfail_at(GError **err, const char *origin, uint64_t line, const char *fmt, va_list ap)
{
    char *msg = g_strdup_vprintf(fmt, ap);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s:%" G_GUINT64_FORMAT ": %s", origin, (guint64)line, msg);
    g_free(msg);
    return false;
}

bool strata_fail_at(GError **err, const char *origin, uint64_t line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strata_vfail_at(err, origin, line, fmt, ap);
    va_end(ap);
    return false;
}

bool strata_vfail_at_op(GError **err, const char *origin, uint64_t line, uint64_t op_number, const char *fmt,
                        va_list ap)
{
    if (line > 0)
        return strata_vfail_at(err, origin, line, fmt, ap);
    char *msg = g_strdup_vprintf(fmt, ap);
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: op %" G_GUINT64_FORMAT ": %s", origin,
                (guint64)op_number, msg);
    g_free(msg);
    return false;
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
