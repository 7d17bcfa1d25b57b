/*
 * checked.c: a source checking the ops it passes on (contract in checked.h).
 */
#include "trace/checked.h"
#include "trace/check.h"

typedef struct checked_source {
    strata_source *in;
    strata_checker *checker;
    char *origin;
    const char *prefix; /* prepended to errors; NULL: none */
    const strata_namer *namer; /* the checker's; NULL: none */
} checked_source;

static strata_checker *new_checker(const checked_source *cs)
{
    strata_checker *c = strata_checker_new(cs->origin);
    strata_checker_set_namer(c, cs->namer);
    return c;
}

static int checked_next(void *self, const strata_op **op, GError **err)
{
    checked_source *cs = self;
    int r = strata_source_next(cs->in, op, err);
    if (r == 1 && !strata_checker_feed(cs->checker, *op, NULL, err)) {
        if (cs->prefix)
            g_prefix_error(err, "%s", cs->prefix);
        return -1;
    }
    return r;
}

static bool checked_rewind(void *self, GError **err)
{
    checked_source *cs = self;
    strata_checker_free(cs->checker);
    cs->checker = new_checker(cs);
    return strata_source_rewind(cs->in, err);
}

static void checked_destroy(void *self)
{
    checked_source *cs = self;
    strata_source_free(cs->in);
    strata_checker_free(cs->checker);
    g_free(cs->origin);
    g_free(cs);
}

static const strata_source_vtable checked_vtable = {checked_next, checked_rewind, checked_destroy};

strata_source *strata_checked_source_named(strata_source *in, const char *prefix, const strata_namer *namer)
{
    checked_source *cs = g_new0(checked_source, 1);
    cs->in = in;
    cs->prefix = prefix;
    cs->namer = namer;
    cs->origin = g_strdup(strata_source_origin(in));
    cs->checker = new_checker(cs);
    return strata_source_new(&checked_vtable, cs, cs->origin);
}

strata_source *strata_checked_source_new(strata_source *in, const char *prefix)
{
    return strata_checked_source_named(in, prefix, NULL);
}
