/*
 * workload.c: the table of trace generators by name (`strata gen NAME`),
 * and the helpers they share for their declared parameters.
 *
 * Each generator lives in its own file (scan_mlp.c, adam_mlp.c, matmul.c,
 * transformer.c) and exports one const strata_workload_type listed below.
 * Invariant: the table is NULL-terminated and names are unique.
 */
#include "workload/workload.h"
#include <assert.h>
#include <string.h>
#include "core/error.h"
#include "workload/model_config.h"

/* The generators (one file each in models/workload/). */
extern const strata_workload_type strata_workload_scan_mlp;
extern const strata_workload_type strata_workload_adam_mlp;
extern const strata_workload_type strata_workload_matmul;
extern const strata_workload_type strata_workload_transformer;
extern const strata_workload_type strata_workload_collective;

static const strata_workload_type *const workload_types[] = {
    &strata_workload_scan_mlp,
    &strata_workload_adam_mlp,
    &strata_workload_matmul,
    &strata_workload_transformer,
    &strata_workload_collective,
    NULL,
};

const char *const strata_workload_dtype_choices[] = {"f32", "bf16", "f16", "f8", "int8", "f64", NULL};

const strata_workload_type *const *strata_workload_types(void) { return workload_types; }

#ifndef NDEBUG
/* The invariant: NULL-terminated (within its size), names unique (a fixed
 * table of a few entries: O(1)). */
static bool types_ok(void)
{
    size_t n = G_N_ELEMENTS(workload_types) - 1;
    if (workload_types[n])
        return false;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (!workload_types[i] || strcmp(workload_types[i]->name, workload_types[j]->name) == 0)
                return false;
    return true;
}
#endif

const strata_workload_type *strata_workload_type_find(const char *name)
{
    assert(types_ok()); /* invariant */
    for (const strata_workload_type *const *t = workload_types; *t; t++)
        if (strcmp((*t)->name, name) == 0)
            return *t;
    return NULL;
}

char *strata_workload_type_names(void)
{
    GString *s = g_string_new(NULL);
    for (const strata_workload_type *const *t = workload_types; *t; t++)
        g_string_append_printf(s, "%s%s", s->len ? ", " : "", (*t)->name);
    return g_string_free(s, FALSE);
}

strata_dtype strata_workload_dtype(const strata_params *p, const char *name)
{
    strata_dtype d = STRATA_DTYPE_NONE;
    if (!strata_dtype_from_name(strata_params_string(p, name), &d))
        g_error("workload parameter %s: dtype not validated", name); /* choices guarantee it */
    return d;
}

bool strata_workload_check_positive(const strata_params *p, const char *workload, const char *const *names,
                                    GError **err)
{
    for (const char *const *n = names; *n; n++)
        if (strata_params_int(p, *n) < 1) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected %s >= 1, got %" G_GINT64_FORMAT,
                        workload, *n, strata_params_int(p, *n));
            return false;
        }
    return true;
}

bool strata_workload_check_counts(const strata_params *p, const char *workload, const char *const *names,
                                  int64_t max, const char *why, GError **err)
{
    for (const char *const *n = names; *n; n++) {
        int64_t v = strata_params_int(p, *n);
        if (v < 1 || v > max) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s: expected %s between 1 and %" G_GINT64_FORMAT "%s%s%s, got %" G_GINT64_FORMAT, workload,
                        *n, max, why ? " (" : "", why ? why : "", why ? ")" : "", v);
            return false;
        }
    }
    return true;
}

bool strata_workload_bytes(uint64_t elements, unsigned bits, uint64_t *bytes)
{
    uint64_t whole = elements / 8, rest = elements % 8, b;
    if (bits == 0)
        bits = 8;
    if (__builtin_mul_overflow(whole, (uint64_t)bits, &b) || __builtin_add_overflow(b, (rest * bits + 7) / 8, &b))
        return false;
    *bytes = b;
    return true;
}

/* The size of one product (see strata_workload_check_sizes); the error
 * spells the product out when it overflows. */
static bool check_product(const strata_params *p, const char *workload, const char *product, unsigned bits,
                          GError **err)
{
    char **factors = g_strsplit(product, "*", -1);
    GString *what = g_string_new(NULL), *values = g_string_new(NULL);
    uint64_t elements = 1, bytes = 0;
    bool overflow = false;
    for (char **f = factors; *f; f++) {
        uint64_t v = 0;
        if (g_ascii_isdigit(**f))
            v = g_ascii_strtoull(*f, NULL, 10);
        else {
            v = (uint64_t)strata_params_int(p, *f);
            if (!g_strv_contains((const char *const *)(f + 1), *f)) /* each name once, at its last use */
                g_string_append_printf(values, "%s%s=%" G_GUINT64_FORMAT, values->len ? ", " : "", *f, v);
        }
        g_string_append_printf(what, "%s x ", *f);
        overflow |= __builtin_mul_overflow(elements, v, &elements);
    }
    overflow |= !strata_workload_bytes(elements, bits, &bytes);
    if (overflow) {
        if (bits % 8 == 0)
            g_string_append_printf(what, "%u bytes", bits / 8);
        else
            g_string_append_printf(what, "%u bits", bits);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: %s overflows 64 bits (%s)", workload, what->str,
                    values->str);
    }
    g_strfreev(factors);
    g_string_free(what, TRUE);
    g_string_free(values, TRUE);
    return !overflow;
}

bool strata_workload_check_sizes(const strata_params *p, const char *workload, const char *const *products,
                                 strata_dtype dtype, GError **err)
{
    unsigned bits = strata_dtype_bits(dtype);
    for (const char *const *prod = products; *prod; prod++)
        if (!check_product(p, workload, *prod, bits ? bits : 8, err))
            return false;
    return true;
}

/* The type called name and its parameters from args; NULL (err set) when
 * either is bad. */
static strata_params *type_and_params(const char *name, const char *const *args,
                                      const strata_workload_type **type, GError **err)
{
    *type = strata_workload_type_find(name);
    if (!*type) {
        char *known = strata_workload_type_names();
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "unknown workload '%s'; known workloads: %s", name,
                    known);
        g_free(known);
        return NULL;
    }
    return strata_workload_params_args(*type, args ? (int)g_strv_length((char **)args) : 0, args, err);
}

strata_source *strata_workload_generate(const char *name, const char *const *args, GError **err)
{
    const strata_workload_type *type;
    strata_params *p = type_and_params(name, args, &type, err);
    if (!p)
        return NULL;
    strata_source *src = type->generate(p, err);
    strata_params_free(p);
    return src;
}

bool strata_workload_check(const char *name, const char *const *args, GError **err)
{
    const strata_workload_type *type;
    strata_params *p = type_and_params(name, args, &type, err);
    if (!p)
        return false;
    bool ok;
    if (type->check) {
        ok = type->check(p, err);
    } else {
        strata_source *src = type->generate(p, err);
        ok = src != NULL;
        if (src)
            strata_source_free(src);
    }
    strata_params_free(p);
    return ok;
}

/* The key of "key=value" arg (g_free). */
static char *arg_key(const char *arg) { return g_strndup(arg, strcspn(arg, "=")); }

/* Sets each arg holding a comma (a list value such as mesh=data:4,model:2)
 * over p; false when its key is given by another arg too. */
static bool set_list_args(strata_params *p, const strata_workload_type *type, int n, const char *const *args,
                          GError **err)
{
    for (int i = 0; i < n; i++) {
        if (!strchr(args[i], ','))
            continue;
        char *key = arg_key(args[i]);
        bool twice = false;
        for (int j = 0; j < n && !twice; j++) {
            char *other = j == i ? NULL : arg_key(args[j]);
            twice = other && strcmp(other, key) == 0;
            g_free(other);
        }
        bool ok = !twice && strata_params_set(p, key, args[i] + strlen(key) + 1, err);
        if (twice)
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: parameter %s given twice", type->name, key);
        g_free(key);
        if (!ok)
            return false;
    }
    return true;
}

strata_params *strata_workload_params_args(const strata_workload_type *type, int n, const char *const *args,
                                           GError **err)
{
    GString *kv = g_string_new(NULL);
    for (int i = 0; i < n; i++) {
        if (!strchr(args[i], '=') || args[i][0] == '=') {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected a parameter as key=value, got '%s'",
                        type->name, args[i]);
            g_string_free(kv, TRUE);
            return NULL;
        }
        if (!strchr(args[i], ','))
            g_string_append_printf(kv, "%s%s", kv->len ? "," : "", args[i]);
    }
    strata_params *p = strata_workload_params(type, kv->str, err);
    g_string_free(kv, TRUE);
    if (p && !set_list_args(p, type, n, args, err)) {
        strata_params_free(p);
        p = NULL;
    }
    return p;
}

/* True when "k=v,..." list kv gives key. */
static bool kv_has_key(const char *kv, const char *key)
{
    size_t n = strlen(key);
    for (const char *item = kv; item && *item; item = strchr(item, ',') ? strchr(item, ',') + 1 : NULL)
        if (strncmp(item, key, n) == 0 && item[n] == '=')
            return true;
    return false;
}

/* Whether the type declares a parameter called name. */
static bool declares(const strata_workload_type *type, const char *name)
{
    for (const strata_param_def *d = type->params; d->name; d++)
        if (strcmp(d->name, name) == 0)
            return true;
    return false;
}

/* kv with the values of p's config= file (model_config.h) for the keys kv
 * does not give (g_free), its notes printed; NULL and err when the file
 * is refused. */
static char *with_config(const char *type, const strata_params *p, const char *kv, GError **err)
{
    const char *path = strata_params_string(p, "config");
    if (!path || !*path) { /* said ": Failed to open file", naming no key */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: config: expected a config.json file name, got ''",
                    type);
        return NULL;
    }
    strata_model_config *c = strata_model_config_load(path, err);
    if (!c)
        return NULL;
    for (const char *const *n = strata_model_config_notes(c); *n; n++)
        g_printerr("strata: note: %s\n", *n);
    GString *all = g_string_new(kv);
    for (const char *const *v = strata_model_config_values(c); *v; v++) {
        char *key = g_strndup(*v, strcspn(*v, "="));
        if (!kv_has_key(kv, key))
            g_string_append_printf(all, "%s%s", all->len ? "," : "", *v);
        g_free(key);
    }
    strata_model_config_free(c);
    return g_string_free(all, FALSE);
}

/* p (from kv) with the values of its preset= for the keys kv does not give. */
static strata_params *apply_preset(const strata_workload_type *type, strata_params *p, const char *kv, GError **err)
{
    const char *name = strata_params_string(p, "preset");
    const strata_workload_preset *preset = type->presets;
    while (preset->name && strcmp(preset->name, name) != 0)
        preset++;
    if (!preset->name)
        return p; /* "none" */
    strata_params_free(p);
    GString *all = g_string_new(kv);
    for (const char *const *v = preset->values; *v; v++) {
        char *key = g_strndup(*v, strcspn(*v, "="));
        if (!kv_has_key(kv, key))
            g_string_append_printf(all, "%s%s", all->len ? "," : "", *v);
        g_free(key);
    }
    p = strata_params_new(type->name, type->params, all->str, err);
    g_string_free(all, TRUE);
    return p;
}

/* A model key kv gives whose parent p leaves 0 (strata_model_key_parent): read by nothing, it was taken at exit
 * 0 with the trace unchanged (the twenty-ninth hardening pass). Only the keys given: a config.json's (with_config)
 * may carry such a key beside a parent it leaves unset (a dense Qwen 3's layer_types). */
static bool given_keys_read(const strata_workload_type *type, const strata_params *p, const char *kv, GError **err)
{
    for (const strata_param_def *d = type->params; d->name; d++) {
        const char *what = NULL, *parent = strata_model_key_parent(d->name, &what);
        if (!parent || !declares(type, parent) || !kv_has_key(kv, d->name))
            continue;
        int64_t v = strata_params_int_or(p, parent, 0);
        if (v > 0)
            continue;
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: %s: expected %s > 0 beside it (it is read only with "
                    "%s: %s), got %s %" G_GINT64_FORMAT ": it changes nothing", type->name, d->name, parent, parent,
                    what, parent, v);
        return false;
    }
    /* dense_layers or moe_every given that place no MoE layer among the layers: the experts read nowhere (serve's
     * model files refuse the same, serve_model.c placed_keys): a layer l >= dense_layers that moe_every divides is
     * an MoE one (strata_model_layer_is_moe), so there is one when the last multiple below layers is >= dense */
    const char *placing = kv_has_key(kv, "dense_layers") ? "dense_layers" : kv_has_key(kv, "moe_every") ? "moe_every"
                                                                                                          : NULL;
    if (!placing || !declares(type, "experts") || !strata_params_is_set(p, "experts") ||
        strata_params_int(p, "experts") < 1)
        return true;
    int64_t layers = strata_params_int(p, "layers"), every = strata_params_int_or(p, "moe_every", 1),
            dense = strata_params_int_or(p, "dense_layers", 0);
    if (every < 1 || dense < 0 || layers < 1 || (layers - 1) / every * every >= dense)
        return true; /* a value below range: strata_model_shape_of refuses it; else the last multiple placed */
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: %s: expected an MoE layer among the %" G_GINT64_FORMAT
                " (those from dense_layers %" G_GINT64_FORMAT " that moe_every %" G_GINT64_FORMAT " divides), "
                "got none: the %" G_GINT64_FORMAT " experts would be read nowhere", type->name, placing, layers, dense,
                every, strata_params_int(p, "experts"));
    return false;
}

strata_params *strata_workload_params(const strata_workload_type *type, const char *kv, GError **err)
{
    strata_params *p = strata_params_new(type->name, type->params, kv, err);
    const char *given = kv;
    char *all = NULL;
    if (p && declares(type, "config") && strata_params_is_set(p, "config")) {
        all = with_config(type->name, p, kv, err);
        strata_params_free(p);
        p = all ? strata_params_new(type->name, type->params, all, err) : NULL;
        kv = all;
    }
    if (p && type->presets)
        p = apply_preset(type, p, kv, err);
    if (p && !given_keys_read(type, p, given, err))
        g_clear_pointer(&p, strata_params_free);
    g_free(all);
    return p;
}
