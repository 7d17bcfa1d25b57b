/* error.c: the STRATA_ERROR domain and its mapping to exit statuses. */
#include "core/error.h"

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
