/*
 * params.c: declared, typed parameters of models chosen by name (contract in
 * params.h).
 *
 * A strata_params holds one slot per entry of the model's (static) table of
 * strata_param_def, in declaration order. Each slot keeps the value's text as
 * the user wrote it (for strata_params_to_string) and the typed value parsed
 * from it.
 *
 * Invariants:
 *  1. defs outlives the params (it is a static table of the model).
 *  2. slot i describes defs[i]; a slot is set iff it has text.
 *  3. every set slot's typed value was parsed from its text by the parser of
 *     defs[i].type; a text that does not parse never reaches a slot.
 *  4. asking a getter for an undeclared name or for the wrong type is a bug
 *     in the model (not bad input) and aborts with g_error().
 */
#include "core/params.h"
#include "core/error.h"
#include "core/units.h"

#include <assert.h>
#include <math.h>
#include <string.h>

typedef struct param_slot {
    char *text; /* NULL = unset */
    union {
        uint64_t size;
        int64_t integer;
        double real; /* DOUBLE and TIME */
        bool boolean;
    } v;
} param_slot;

struct strata_params {
    char *owner;
    const strata_param_def *defs;
    guint n;
    param_slot *slots;
};

static const char *const type_names[] = {
    [STRATA_PARAM_SIZE] = "size",     [STRATA_PARAM_INT] = "integer",
    [STRATA_PARAM_DOUBLE] = "number", [STRATA_PARAM_BOOL] = "boolean",
    [STRATA_PARAM_STRING] = "text",   [STRATA_PARAM_TIME] = "time",
};

static guint count_defs(const strata_param_def *defs)
{
    guint n = 0;
    while (defs && defs[n].name)
        n++;
    return n;
}

static int find_def(const strata_params *p, const char *key)
{
    for (guint i = 0; i < p->n; i++)
        if (strcmp(p->defs[i].name, key) == 0)
            return (int)i;
    return -1;
}

static char *known_keys(const strata_params *p)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < p->n; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", p->defs[i].name);
    if (p->n == 0)
        g_string_append(s, "(none: this model takes no parameters)");
    return g_string_free(s, FALSE);
}

static char *choices_text(const char *const *choices)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; choices[i]; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "", choices[i]);
    return g_string_free(s, FALSE);
}

/* Parses text per def into slot (untouched on failure). The error message
 * has no prefix; the caller adds "OWNER: KEY: ". */
static bool parse_value(const strata_param_def *def, const char *text, param_slot *slot,
                        GError **err)
{
    param_slot tmp = {0};
    switch (def->type) {
    case STRATA_PARAM_SIZE:
        if (!strata_parse_size(text, &tmp.v.size, err))
            return false;
        break;
    case STRATA_PARAM_TIME:
        if (!strata_parse_time(text, &tmp.v.real, err))
            return false;
        break;
    case STRATA_PARAM_INT: {
        gint64 v = 0;
        if (!g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, &v, NULL)) {
            char *q = strata_quote(text);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "expected an integer, got '%s'", q);
            g_free(q);
            return false;
        }
        tmp.v.integer = v;
        break;
    }
    case STRATA_PARAM_DOUBLE: {
        char *end = NULL;
        double v = *text ? g_ascii_strtod(text, &end) : NAN;
        if (end == NULL || *end != '\0' || !isfinite(v) || g_ascii_isspace(*text)) {
            char *q = strata_quote(text);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "expected a number such as 0.5 or 1e-3, got '%s'", q);
            g_free(q);
            return false;
        }
        tmp.v.real = v;
        break;
    }
    case STRATA_PARAM_BOOL:
        if (!strata_parse_bool(text, &tmp.v.boolean)) {
            char *q = strata_quote(text);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "expected true, false, yes, no, 1 or 0, got '%s'", q);
            g_free(q);
            return false;
        }
        break;
    case STRATA_PARAM_STRING:
        if (def->choices) {
            bool found = false;
            for (guint i = 0; def->choices[i]; i++)
                found = found || strcmp(def->choices[i], text) == 0;
            if (!found) {
                char *list = choices_text(def->choices);
                char *q = strata_quote(text);
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "expected one of %s, got '%s'", list, q);
                g_free(q);
                g_free(list);
                return false;
            }
        }
        break;
    }
    g_free(slot->text);
    *slot = tmp;
    slot->text = g_strdup(text);
    return true;
}

bool strata_params_set(strata_params *p, const char *key, const char *value, GError **err)
{
    int i = find_def(p, key);
    if (i < 0) {
        char *known = known_keys(p);
        char *q = strata_quote(key);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: unknown parameter '%s' (known: %s)",
                    p->owner, q, known);
        g_free(q);
        g_free(known);
        return false;
    }
    if (!parse_value(&p->defs[i], value, &p->slots[i], err)) {
        g_prefix_error(err, "%s: %s: ", p->owner, key);
        return false;
    }
    return true;
}

void strata_params_free(strata_params *p)
{
    if (p == NULL)
        return;
    for (guint i = 0; i < p->n; i++)
        g_free(p->slots[i].text);
    g_free(p->slots);
    g_free(p->owner);
    g_free(p);
}

#ifndef NDEBUG
/* params.h's first invariant, by invariant 2 (O(parameters)): every
 * parameter with a default is set. */
static bool params_ok(const strata_params *p)
{
    for (guint i = 0; i < p->n; i++)
        if (p->defs[i].default_value != NULL && p->slots[i].text == NULL)
            return false;
    return p->defs == NULL || p->defs[p->n].name == NULL; /* invariant 2: one slot per entry */
}
#endif

strata_params *strata_params_new(const char *owner, const strata_param_def *defs, const char *kv,
                                 GError **err)
{
    strata_params *p = g_new0(strata_params, 1);
    p->owner = g_strdup(owner ? owner : "model");
    p->defs = defs;
    p->n = count_defs(defs);
    p->slots = g_new0(param_slot, p->n ? p->n : 1);

    for (guint i = 0; i < p->n; i++) {
        if (defs[i].default_value == NULL)
            continue;
        GError *local = NULL;
        if (!parse_value(&defs[i], defs[i].default_value, &p->slots[i], &local)) {
            /* A bad default is a bug in the model's table. */
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "%s: default of %s: %s",
                        p->owner, defs[i].name, local->message);
            g_error_free(local);
            strata_params_free(p);
            return NULL;
        }
    }
    if (!strata_params_set_kv(p, kv, err)) {
        strata_params_free(p);
        return NULL;
    }
    assert(params_ok(p)); /* params.h: every parameter with a default has a value */
    return p;
}

strata_params *strata_params_new_unspaced(const char *owner, const strata_param_def *defs, const char *kv,
                                          GError **err)
{
    if (kv && kv[strcspn(kv, " \t\r\n\v\f")]) { /* strata_params_set_kv strips around keys and values */
        char *q = strata_quote(kv);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected KEY=VALUE,... with no spaces, got '%s'",
                    owner, q);
        g_free(q);
        return NULL;
    }
    return strata_params_new(owner, defs, kv, err);
}

bool strata_params_set_kv(strata_params *p, const char *kv, GError **err)
{
    if (kv == NULL || *kv == '\0')
        return true;
    char **items = g_strsplit(kv, ",", -1);
    bool *given = g_new0(bool, p->n ? p->n : 1);
    bool ok = true;
    for (guint i = 0; ok && items[i]; i++) {
        char *item = g_strstrip(items[i]);
        char *eq = strchr(item, '=');
        if (eq == NULL || eq == item) {
            char *known = known_keys(p);
            char *q = strata_quote(item);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s: expected KEY=VALUE, got '%s' (known keys: %s)", p->owner, q, known);
            g_free(q);
            g_free(known);
            ok = false;
            break;
        }
        *eq = '\0';
        const char *key = g_strstrip(item);
        int d = find_def(p, key);
        if (d >= 0 && given[d]) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: parameter '%s' given twice", p->owner, key);
            ok = false;
            break;
        }
        ok = strata_params_set(p, key, g_strstrip(eq + 1), err);
        if (d >= 0)
            given[d] = true;
    }
    g_free(given);
    g_strfreev(items);
    return ok;
}

strata_params *strata_params_copy(const strata_params *p)
{
    strata_params *c = g_new0(strata_params, 1);
    c->owner = g_strdup(p->owner);
    c->defs = p->defs;
    c->n = p->n;
    c->slots = g_new0(param_slot, p->n ? p->n : 1);
    for (guint i = 0; i < p->n; i++) {
        c->slots[i] = p->slots[i];
        c->slots[i].text = g_strdup(p->slots[i].text);
    }
    return c;
}

/* The slot of a declared parameter of the given type (invariant 4). */
static const param_slot *slot_of(const strata_params *p, const char *name, strata_param_type type)
{
    int i = find_def(p, name);
    if (i < 0)
        g_error("%s: parameter '%s' is not declared", p->owner, name);
    if (p->defs[i].type != type)
        g_error("%s: parameter '%s' is declared as %s, read as %s", p->owner, name,
                type_names[p->defs[i].type], type_names[type]);
    return &p->slots[i];
}

uint64_t strata_params_size(const strata_params *p, const char *name)
{
    return slot_of(p, name, STRATA_PARAM_SIZE)->v.size;
}

int64_t strata_params_int(const strata_params *p, const char *name)
{
    return slot_of(p, name, STRATA_PARAM_INT)->v.integer;
}

int64_t strata_params_int_or(const strata_params *p, const char *name, int64_t fallback)
{
    return strata_params_is_set(p, name) ? strata_params_int(p, name) : fallback;
}

double strata_params_double(const strata_params *p, const char *name)
{
    return slot_of(p, name, STRATA_PARAM_DOUBLE)->v.real;
}

bool strata_params_bool(const strata_params *p, const char *name)
{
    return slot_of(p, name, STRATA_PARAM_BOOL)->v.boolean;
}

const char *strata_params_string(const strata_params *p, const char *name)
{
    return slot_of(p, name, STRATA_PARAM_STRING)->text;
}

double strata_params_time(const strata_params *p, const char *name)
{
    return slot_of(p, name, STRATA_PARAM_TIME)->v.real;
}

bool strata_params_is_set(const strata_params *p, const char *name)
{
    int i = find_def(p, name);
    if (i < 0)
        g_error("%s: parameter '%s' is not declared", p->owner, name);
    return p->slots[i].text != NULL;
}

char *strata_params_to_string(const strata_params *p)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < p->n; i++) {
        if (p->slots[i].text == NULL)
            continue;
        g_string_append_printf(s, "%s%s=%s", s->len ? "," : "", p->defs[i].name, p->slots[i].text);
    }
    return g_string_free(s, FALSE);
}

char *strata_params_describe(const strata_param_def *defs, const char *indent)
{
    GString *s = g_string_new(NULL);
    guint n = count_defs(defs);
    if (n == 0) {
        g_string_append_printf(s, "%s(no parameters)\n", indent ? indent : "");
        return g_string_free(s, FALSE);
    }
    for (guint i = 0; i < n; i++) {
        const strata_param_def *d = &defs[i];
        g_string_append_printf(s, "%s%s (%s", indent ? indent : "", d->name, type_names[d->type]);
        if (d->default_value)
            g_string_append_printf(s, ", default %s", d->default_value);
        else
            g_string_append(s, ", unset by default");
        g_string_append_printf(s, "): %s", d->description ? d->description : "");
        if (d->type == STRATA_PARAM_STRING && d->choices) {
            char *list = choices_text(d->choices);
            g_string_append_printf(s, " (one of %s)", list);
            g_free(list);
        }
        g_string_append_c(s, '\n');
    }
    return g_string_free(s, FALSE);
}

void strata_split_spec(const char *spec, char **name, char **kv)
{
    const char *colon = spec ? strchr(spec, ':') : NULL;
    if (spec == NULL) {
        *name = NULL;
        *kv = NULL;
    } else if (colon == NULL) {
        *name = g_strstrip(g_strdup(spec));
        *kv = NULL;
    } else {
        *name = g_strstrip(g_strndup(spec, (gsize)(colon - spec)));
        *kv = g_strstrip(g_strdup(colon + 1));
        if (**kv == '\0') {
            g_free(*kv);
            *kv = NULL;
        }
    }
}

bool strata_split_spec_check(const char *spec, const char *owner, GError **err)
{
    const char *colon = spec ? strchr(spec, ':') : NULL;
    const char *rest = colon ? colon + 1 : NULL;
    while (rest && g_ascii_isspace(*rest))
        rest++;
    if (!rest || *rest)
        return true;
    char *name = g_strstrip(g_strndup(spec, (gsize)(colon - spec)));
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected key=value,... after ':', got nothing; write "
                "'%s' alone for its defaults", owner, name);
    g_free(name);
    return false;
}
