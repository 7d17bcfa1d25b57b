/*
 * backend.c: the table of real replay backends, looked up by name.
 *
 * One NULL-terminated static array (curl's vtls style); each backend file
 * exports one const strata_backend.
 */
#include "backend/backend.h"

#include <string.h>
#include "core/error.h"

extern const strata_backend strata_backend_host;
extern const strata_backend strata_backend_cuda;

static const strata_backend *const backends[] = {
    &strata_backend_host,
    &strata_backend_cuda,
    NULL,
};

void strata_backend_options_init(strata_backend_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->repeats = 5;
    opt->warmup = 1;
    opt->device_memory = "arena";
}

void strata_calibrate_options_init(strata_calibrate_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->max_size = UINT64_C(256) << 20;
    opt->budget_s = 0.2;
    opt->name = NULL;
}

char *strata_backend_names(void)
{
    GString *s = g_string_new(NULL);
    for (const strata_backend *const *b = backends; *b; b++)
        g_string_append_printf(s, "%s%s", s->len ? ", " : "", (*b)->name);
    return g_string_free(s, FALSE);
}

const strata_backend *strata_backend_find(const char *name, GError **err)
{
    for (const strata_backend *const *b = backends; *b; b++)
        if (name && strcmp((*b)->name, name) == 0)
            return *b;
    char *names = strata_backend_names();
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "unknown backend '%s'; known backends: %s",
                name ? name : "(none)", names);
    g_free(names);
    return NULL;
}
