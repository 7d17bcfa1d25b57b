/*
 * serve_prior.c: an earlier run on the same server and the identity of its
 * prompts' blocks (serve_prior.h).
 */
#include "serve/serve_prior.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"

static bool read_count(const char *key, const char *text, uint32_t *out, GError **err)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = text[0] >= '0' && text[0] <= '9' ? strtoull(text, &end, 10) : 0;
    if (!end || *end || errno || v < 1 || v > UINT32_MAX) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--prior-run %s=%s: expected a whole number from 1 to "
                    "%u", key, text, UINT32_MAX);
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

bool strata_serve_prior_parse(const char *spec, strata_serve_prior_run *r, GError **err)
{
    *r = (strata_serve_prior_run){0, 0, 0};
    gchar **kv = g_strsplit(spec, ",", -1);
    bool ok = true;
    for (gchar **p = kv; ok && *p; p++) {
        const char *eq = strchr(*p, '=');
        char *key = eq ? g_strndup(*p, (gsize)(eq - *p)) : g_strdup(*p);
        uint32_t *dst = !strcmp(key, "n") ? &r->n : !strcmp(key, "prompt") ? &r->prompt
                      : !strcmp(key, "output") ? &r->output : NULL;
        if (!eq || !dst) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--prior-run '%s': expected n=N, prompt=P or "
                        "output=O (comma-separated), got '%s'", spec, *p);
            ok = false;
        } else if (*dst) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--prior-run '%s': expected each of n=, prompt= "
                        "and output= once, got %s twice", spec, key);
            ok = false;
        } else {
            ok = read_count(key, eq + 1, dst, err);
        }
        g_free(key);
    }
    g_strfreev(kv);
    if (ok && (!r->n || !r->prompt || !r->output)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--prior-run '%s': expected all of n=, prompt= and "
                    "output=", spec);
        ok = false;
    }
    return ok;
}

strata_serve_block_kind strata_serve_prior_block(uint32_t i, uint32_t block_size, uint32_t prompt)
{
    uint64_t start = (uint64_t)i * block_size, end = start + block_size;
    if (end <= (uint64_t)prompt - 1)
        return STRATA_SERVE_BLOCK_OWN;
    return start < prompt ? STRATA_SERVE_BLOCK_CUT : STRATA_SERVE_BLOCK_OUTPUT;
}
