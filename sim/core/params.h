/*
 * params.h: declared, typed parameters of models chosen by name.
 *
 * Each model (allocator, policy, workload, backend) declares a NULL-name
 * terminated table of strata_param_def: name, type, default (as text) and a
 * description. Users set values as text, from a hardware .ini
 * (`allocator.max_split_size = 200MiB`), from the command line
 * (`--allocator caching:max_split_size=200MiB`) or from a trace `option`
 * line. strata_params validates every value against the table and fills in
 * the defaults, so a model reads typed values and never sees an unknown key.
 *
 * Invariants: after strata_params_new() succeeds every declared parameter
 * with a default, and every one given a value, has a value of its declared
 * type (one declared with a NULL default stays unset until given one, see
 * strata_params_is_set()); an unknown key, a bad value or a key given
 * twice in one "k=v,..." text is an error that names the model and the key
 * (and lists the known keys); quoted values are cut to a short excerpt.
 */
#ifndef STRATA_PARAMS_H
#define STRATA_PARAMS_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum {
    STRATA_PARAM_SIZE,   /* bytes, "200MiB"; "0" allowed */
    STRATA_PARAM_INT,    /* signed 64-bit integer */
    STRATA_PARAM_DOUBLE, /* real number */
    STRATA_PARAM_BOOL,   /* true/false/yes/no/1/0, any case (strata_parse_bool, core/units.h) */
    STRATA_PARAM_STRING, /* free text, or one of `choices` when set */
    STRATA_PARAM_TIME,   /* seconds, "3us" */
} strata_param_type;

typedef struct strata_param_def {
    const char *name;
    strata_param_type type;
    const char *default_value; /* text, parsed like a user's value; NULL = unset */
    const char *description;
    const char *const *choices; /* STRING only: NULL-terminated, or NULL for free text */
} strata_param_def;

typedef struct strata_params strata_params;

/* kv: "k=v,k=v" text (may be NULL or empty). `owner` names the model in errors. */
strata_params *strata_params_new(const char *owner, const strata_param_def *defs,
                                 const char *kv, GError **err);
/* strata_params_new over kv taken as written: whitespace anywhere in kv
 * (NULL: none) is refused ("OWNER: expected KEY=VALUE,... with no spaces,
 * got 'KV'"), where strata_params_new strips it around keys and values.
 * The reader of an option whose value is used as written (serve's
 * --poisson and --prior-run). */
strata_params *strata_params_new_unspaced(const char *owner, const strata_param_def *defs, const char *kv,
                                          GError **err);
/* Sets each KEY=VALUE of kv ("k=v,k=v"; NULL or empty: nothing), over any
 * earlier value; a key given twice within kv is an error. */
bool strata_params_set_kv(strata_params *p, const char *kv, GError **err);
/* Set or override one value (validated). */
bool strata_params_set(strata_params *p, const char *key, const char *value, GError **err);
void strata_params_free(strata_params *p);
strata_params *strata_params_copy(const strata_params *p);

uint64_t strata_params_size(const strata_params *p, const char *name);
int64_t strata_params_int(const strata_params *p, const char *name);
double strata_params_double(const strata_params *p, const char *name);
bool strata_params_bool(const strata_params *p, const char *name);
const char *strata_params_string(const strata_params *p, const char *name);
double strata_params_time(const strata_params *p, const char *name);
bool strata_params_is_set(const strata_params *p, const char *name);
/* An integer parameter's value where set, else fallback (a parameter whose absence means something other than
 * its declared default). */
int64_t strata_params_int_or(const strata_params *p, const char *name, int64_t fallback);
/* "k=v,k=v" of every value in declaration order (g_free). */
char *strata_params_to_string(const strata_params *p);

/* Help text for a table: one line per parameter (g_free). */
char *strata_params_describe(const strata_param_def *defs, const char *indent);

/* Split "NAME:k=v,k=v" into name and kv (both g_free; kv may be NULL). */
void strata_split_spec(const char *spec, char **name, char **kv);
/* false with err where spec has a ':' and nothing after it ("caching:" was
 * taken as "caching", a parameter list meant and left out): "OWNER: expected
 * key=value,... after ':', got nothing; write NAME alone for its defaults". */
bool strata_split_spec_check(const char *spec, const char *owner, GError **err);

#endif
