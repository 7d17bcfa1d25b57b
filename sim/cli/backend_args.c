/* backend_args.c: options shared by replay and validate (see backend_args.h). */
#include "cli/backend_args.h"

#include <string.h>
#include "core/error.h"

void strata_backend_args_init(strata_backend_args *a)
{
    *a = (strata_backend_args){.repeats = 5, .warmup = 1};
}

char *strata_backend_args_help(const char *prefix)
{
    char *names = strata_backend_names();
    char *help = g_strdup_printf("%s: %s", prefix, names);
    g_free(names);
    return help;
}

void strata_backend_args_clear(strata_backend_args *a)
{
    g_free(a->backend);
    g_free(a->trace);
    g_free(a->hw);
    g_free(a->json);
    g_free(a->device_memory);
}

const strata_backend *strata_backend_args_check(const strata_backend_args *a, bool need_hw, GError **err)
{
    if (!a->trace || !a->backend || (need_hw && !a->hw)) {
        char *names = strata_backend_names();
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s--trace and --backend (one of: %s) are required",
                    need_hw ? "--hw, " : "", names);
        g_free(names);
        return NULL;
    }
    const strata_backend *backend = strata_backend_find(a->backend, err);
    if (backend && (a->repeats < 1 || a->warmup < 0)) { /* the message named both and neither value */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected at least %d, got %d",
                    a->repeats < 1 ? "--repeats" : "--warmup", a->repeats < 1 ? 1 : 0,
                    a->repeats < 1 ? a->repeats : a->warmup);
        return NULL;
    }
    if (backend && (a->repeats > STRATA_BACKEND_MAX_RUNS || a->warmup > STRATA_BACKEND_MAX_RUNS)) {
        /* each timed run keeps a span per op: 2^31 - 1 repeats aborted on a 16 GiB allocation */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s %d: expected at most %d runs (each timed run keeps "
                    "its spans for the median; the warm-up runs the whole trace each time)",
                    a->repeats > STRATA_BACKEND_MAX_RUNS ? "--repeats" : "--warmup",
                    a->repeats > STRATA_BACKEND_MAX_RUNS ? a->repeats : a->warmup, STRATA_BACKEND_MAX_RUNS);
        return NULL;
    }
    if (backend && a->device_memory && strcmp(backend->name, "cuda") != 0) { /* no other backend reads it */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "--device-memory %s: expected --backend cuda, which reads it, got --backend %s", a->device_memory,
                    backend->name);
        return NULL;
    }
    return backend;
}

void strata_backend_args_options(const strata_backend_args *a, strata_backend_options *opt)
{
    strata_backend_options_init(opt);
    opt->repeats = a->repeats;
    opt->warmup = a->warmup;
    opt->device_memory = a->device_memory;
    opt->check_allocators = a->check_allocators;
}
