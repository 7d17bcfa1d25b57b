/*
 * serve_prior.c: an earlier run on the same server and the identity of its
 * prompts' blocks (serve_prior.h).
 */
#include "serve/serve_prior.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/params.h"

static bool read_count(const char *key, const char *text, uint32_t *out, GError **err)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = text[0] >= '0' && text[0] <= '9' ? strtoull(text, &end, 10) : 0;
    /* 10^8: --poisson's n, prompt and output and a request file's counts (serve_stream.c); up to 2^32 - 1 a run of
     * n=4294967295 was taken and replayed block by block for hours before the run began */
    if (!end || *end || errno || v < 1 || v > 100000000) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--prior-run %s=%s: expected a whole number from 1 to "
                    "10^8 (as --poisson's)", key, text);
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

/* --prior-run's keys, each a count read by read_count (digits only, 1 to 10^8). */
static const strata_param_def prior_params[] = {
    {"n", STRATA_PARAM_STRING, NULL, "requests of the earlier run", NULL},
    {"prompt", STRATA_PARAM_STRING, NULL, "tokens of each of its prompts", NULL},
    {"output", STRATA_PARAM_STRING, NULL, "tokens each of its requests generated", NULL},
    {NULL, STRATA_PARAM_STRING, NULL, NULL, NULL},
};

bool strata_serve_prior_parse(const char *spec, strata_serve_prior_run *r, GError **err)
{
    *r = (strata_serve_prior_run){0, 0, 0};
    char *owner = g_strdup_printf("--prior-run '%s'", spec); /* the messages quote the whole run */
    strata_params *kv = strata_params_new_unspaced(owner, prior_params, spec, err);
    bool ok = kv != NULL;
    if (ok && (!strata_params_is_set(kv, "n") || !strata_params_is_set(kv, "prompt") ||
               !strata_params_is_set(kv, "output"))) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected all of n=, prompt= and output=", owner);
        ok = false;
    }
    ok = ok && read_count("n", strata_params_string(kv, "n"), &r->n, err) &&
         read_count("prompt", strata_params_string(kv, "prompt"), &r->prompt, err) &&
         read_count("output", strata_params_string(kv, "output"), &r->output, err);
    strata_params_free(kv);
    g_free(owner);
    return ok;
}

strata_serve_block_kind strata_serve_prior_block(uint32_t i, uint32_t block_size, uint32_t prompt)
{
    uint64_t start = (uint64_t)i * block_size, end = start + block_size;
    if (end <= (uint64_t)prompt - 1)
        return STRATA_SERVE_BLOCK_OWN;
    return start < prompt ? STRATA_SERVE_BLOCK_CUT : STRATA_SERVE_BLOCK_OUTPUT;
}
