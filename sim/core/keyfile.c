/*
 * keyfile.c: the key-file reader (contract in keyfile.h).
 *
 * Loading is one pass over the lines (check_line) that also copies them,
 * BOM and CR removed, into the text handed to GKeyFile, which then holds the
 * values. GLib does not report lines; `lines` maps "GROUP" and
 * "GROUP\x1fKEY" to the line they were read on.
 *
 * Invariants:
 *  1. a loaded GKeyFile holds exactly the groups and keys in `lines`, plus
 *     keys added by overrides (listed in `overrides`);
 *  2. nothing is printed; a failed load frees everything.
 */
#include "core/keyfile.h"
#include "core/error.h"
#include "core/lines.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>

struct strata_keyfile {
    char *origin;
    GKeyFile *kf;
    GHashTable *lines;     /* "group" or "group\x1fkey" -> line */
    GHashTable *overrides; /* "group\x1fkey" -> note */
    GHashTable *derived;   /* "group\x1fkey" -> note: the line of a derived file that set it */
    char *derived_origin;  /* the file derived from this one (hw's base =), or NULL */
    /* "group\x1fkey" -> the value a key had before the derived file (before_derived) or an override
     * (before_override) set it; absent where it had none */
    GHashTable *before_derived, *before_override;
    unsigned flags;
};

typedef struct scan_state {
    strata_keyfile *k;
    const char *example_group;
    strata_lines *lines;
    char *group; /* current group, NULL before the first header */
    GString *text;
} scan_state;

static char *line_key(const char *group, const char *key)
{
    return key ? g_strconcat(group, "\x1f", key, NULL) : g_strdup(group);
}

G_GNUC_PRINTF(4, 5)
static bool fail_line(const strata_keyfile *k, guint64 line, GError **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strata_vfail_at(err, k->origin, line, fmt, ap);
    va_end(ap);
    return false;
}

static bool check_header(scan_state *s, const char *line, guint64 lineno, GError **err)
{
    size_t len = strlen(line);
    if (len < 3 || line[len - 1] != ']') {
        char *q = strata_quote(line);
        fail_line(s->k, lineno, err, "expected a group header such as [%s], got '%s'", s->example_group, q);
        g_free(q);
        return false;
    }
    g_free(s->group);
    s->group = g_strndup(line + 1, len - 2);
    guint first = GPOINTER_TO_UINT(g_hash_table_lookup(s->k->lines, s->group));
    if (first) {
        char *q = strata_quote(s->group);
        fail_line(s->k, lineno, err, "group [%s] is declared twice (first on line %u)", q, first);
        g_free(q);
        return false;
    }
    g_hash_table_insert(s->k->lines, g_strdup(s->group), GUINT_TO_POINTER((guint)lineno));
    return true;
}

static bool check_key_line(scan_state *s, const char *line, guint64 lineno, GError **err)
{
    const char *eq = strchr(line, '=');
    if (eq == NULL || s->group == NULL) {
        char *q = strata_quote(line);
        if (s->group)
            fail_line(s->k, lineno, err, "expected KEY = VALUE, a [group] or a # comment, got '%s'", q);
        else
            fail_line(s->k, lineno, err, "expected a group header such as [%s] before '%s'", s->example_group, q);
        g_free(q);
        return false;
    }
    char *key = g_strstrip(g_strndup(line, (gsize)(eq - line)));
    bool ok = *key != '\0';
    if (!ok) {
        char *q = strata_quote(line);
        fail_line(s->k, lineno, err, "expected a key before '=', got '%s'", q);
        g_free(q);
    } else {
        char *k = line_key(s->group, key);
        guint first = GPOINTER_TO_UINT(g_hash_table_lookup(s->k->lines, k));
        if (first) {
            char *qg = strata_quote(s->group), *qk = strata_quote(key);
            ok = fail_line(s->k, lineno, err, "[%s] %s is set twice (first on line %u)", qg, qk, first);
            g_free(qg);
            g_free(qk);
            g_free(k);
        } else {
            g_hash_table_insert(s->k->lines, k, GUINT_TO_POINTER((guint)lineno));
        }
    }
    g_free(key);
    return ok;
}

/* One line of the file (UTF-8, NUL-free, no newline: core/lines.h; modified in place). */
static bool check_line(scan_state *s, char *line, size_t len, guint64 lineno, GError **err)
{
    if (s->text->len + len + 1 > STRATA_KEYFILE_MAX)
        return fail_line(s->k, lineno, err, "expected a key file of at most %d bytes, got a larger one",
                         STRATA_KEYFILE_MAX);
    g_string_append_len(s->text, line, (gssize)len);
    g_string_append_c(s->text, '\n');
    char *l = g_strstrip(line); /* GLib also ignores surrounding blanks */
    if (*l == '\0' || *l == '#')
        return true;
    if (*l == '[')
        return check_header(s, l, lineno, err);
    /* a file cut inside its last key line reads as another value ("capacity = 80GiB" cut to "= 8" is 8
     * bytes); GLib writes every line with its newline (g_key_file_to_data), as every file here has one, and
     * so does every text handed to load_data (calibrate's output, a derived file's). A header cut short has
     * no ']' and is refused above; a last comment or blank line loses nothing. */
    if (!strata_lines_terminated(s->lines, "a key file", "every KEY = VALUE line ends with one", err))
        return false;
    return check_key_line(s, l, lineno, err);
}

/* Drops trailing blanks (GLib keeps them) and, with inline comments on,
 * "16GiB   # per core" -> "16GiB": a '#' after a blank starts a comment. */
static void normalise_values(GKeyFile *kf, unsigned flags)
{
    gsize n_groups = 0;
    char **groups = g_key_file_get_groups(kf, &n_groups);
    for (gsize g = 0; g < n_groups; g++) {
        char **keys = g_key_file_get_keys(kf, groups[g], NULL, NULL);
        for (guint k = 0; keys && keys[k]; k++) {
            char *value = g_key_file_get_value(kf, groups[g], keys[k], NULL);
            size_t len = strlen(value);
            for (char *p = value; (flags & STRATA_KEYFILE_INLINE_COMMENTS) && *p; p++) {
                if (*p == '#' && (p == value || p[-1] == ' ' || p[-1] == '\t')) {
                    *p = '\0';
                    break;
                }
            }
            g_strchomp(value);
            if (strlen(value) != len)
                g_key_file_set_value(kf, groups[g], keys[k], value);
            g_free(value);
        }
        g_strfreev(keys);
    }
    g_strfreev(groups);
}

static strata_keyfile *keyfile_new(const char *origin, unsigned flags)
{
    strata_keyfile *k = g_new0(strata_keyfile, 1);
    k->origin = g_strdup(origin);
    k->kf = g_key_file_new();
    k->lines = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    k->overrides = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    k->derived = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    k->before_derived = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    k->before_override = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    k->flags = flags;
    return k;
}

/* Reads every line of fp (taken) into k; false with err. */
static bool read_all(strata_keyfile *k, FILE *fp, const char *example_group, GError **err)
{
    strata_lines *lines = strata_lines_new(fp, k->origin);
    scan_state s = {.k = k, .example_group = example_group, .lines = lines,
                    .text = g_string_new(NULL)};
    char *line = NULL;
    size_t len = 0;
    int got;
    bool ok = true;
    while (ok && (got = strata_lines_next(lines, &line, &len, err)) == 1)
        ok = check_line(&s, line, len, strata_lines_number(lines), err);
    ok = ok && got == 0;
    GError *inner = NULL;
    if (ok && !g_key_file_load_from_data(k->kf, s.text->str, s.text->len, G_KEY_FILE_NONE, &inner)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: %s", k->origin, inner->message);
        g_clear_error(&inner);
        ok = false;
    }
    if (ok)
        normalise_values(k->kf, k->flags);
    g_free(s.group);
    g_string_free(s.text, TRUE);
    strata_lines_free(lines);
    return ok;
}

#ifndef NDEBUG
/* Invariant 1 for a file just loaded (O(keys)): every group and key GKeyFile
 * holds was read on a line (keyfile.h: its line is >= 1). */
static bool keyfile_ok(const strata_keyfile *k)
{
    gsize n_groups = 0;
    char **groups = g_key_file_get_groups(k->kf, &n_groups);
    bool ok = g_hash_table_size(k->overrides) == 0;
    for (gsize g = 0; ok && g < n_groups; g++) {
        char *lk = line_key(groups[g], NULL);
        ok = GPOINTER_TO_UINT(g_hash_table_lookup(k->lines, lk)) >= 1;
        g_free(lk);
        char **keys = ok ? g_key_file_get_keys(k->kf, groups[g], NULL, NULL) : NULL;
        for (char **key = keys; ok && key && *key; key++) {
            lk = line_key(groups[g], *key);
            ok = GPOINTER_TO_UINT(g_hash_table_lookup(k->lines, lk)) >= 1;
            g_free(lk);
        }
        g_strfreev(keys);
    }
    g_strfreev(groups);
    return ok;
}
#endif

static strata_keyfile *finish(strata_keyfile *k, FILE *fp, const char *example_group, GError **err)
{
    if (!read_all(k, fp, example_group, err)) {
        strata_keyfile_free(k);
        return NULL;
    }
    assert(keyfile_ok(k)); /* invariant 1; keyfile.h: every group and key has a line */
    return k;
}

strata_keyfile *strata_keyfile_load_data(const char *data, const char *origin, const char *example_group,
                                         unsigned flags, GError **err)
{
    /* fmemopen() may refuse an empty buffer: empty text reads as one empty line. */
    size_t len = strlen(data);
    FILE *fp = fmemopen(len ? (void *)data : (void *)"\n", len ? len : 1, "r");
    if (!fp) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot read: %s", origin, g_strerror(errno));
        return NULL;
    }
    return finish(keyfile_new(origin, flags), fp, example_group, err);
}

strata_keyfile *strata_keyfile_load(const char *path, const char *what, const char *example_group,
                                    unsigned flags, GError **err)
{
    FILE *fp = g_file_test(path, G_FILE_TEST_IS_DIR) ? NULL : fopen(path, "r");
    if (!fp) {
        int e = g_file_test(path, G_FILE_TEST_IS_DIR) ? EISDIR : errno;
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "cannot read %s: Failed to open file \u201c%s\u201d: %s",
                    what, path, g_strerror(e));
        return NULL;
    }
    return finish(keyfile_new(path, flags), fp, example_group, err);
}

void strata_keyfile_free(strata_keyfile *k)
{
    if (!k)
        return;
    g_key_file_free(k->kf);
    g_hash_table_destroy(k->lines);
    g_hash_table_destroy(k->overrides);
    g_hash_table_destroy(k->derived);
    g_hash_table_destroy(k->before_derived);
    g_hash_table_destroy(k->before_override);
    g_free(k->derived_origin);
    g_free(k->origin);
    g_free(k);
}

const char *strata_keyfile_origin(const strata_keyfile *k) { return k->origin; }

char **strata_keyfile_groups(const strata_keyfile *k, gsize *n) { return g_key_file_get_groups(k->kf, n); }

char **strata_keyfile_keys(const strata_keyfile *k, const char *group, gsize *n)
{
    return g_key_file_get_keys(k->kf, group, n, NULL);
}

bool strata_keyfile_has_group(const strata_keyfile *k, const char *group)
{
    return g_key_file_has_group(k->kf, group);
}

bool strata_keyfile_has_key(const strata_keyfile *k, const char *group, const char *key)
{
    return g_key_file_has_key(k->kf, group, key, NULL);
}

char *strata_keyfile_value(const strata_keyfile *k, const char *group, const char *key)
{
    char *v = g_key_file_get_value(k->kf, group, key, NULL);
    return v ? g_strstrip(v) : NULL;
}

char *strata_keyfile_string(const strata_keyfile *k, const char *group, const char *key)
{
    /* g_key_file_get_string() returns NULL for a value that is not UTF-8 or
     * has a bad escape; take it raw then, so a present key never reads as NULL. */
    char *s = g_key_file_get_string(k->kf, group, key, NULL);
    return s ? s : strata_keyfile_value(k, group, key);
}

guint strata_keyfile_line(const strata_keyfile *k, const char *group, const char *key)
{
    char *lk = line_key(group, key);
    guint line = GPOINTER_TO_UINT(g_hash_table_lookup(k->lines, lk));
    g_free(lk);
    return line;
}

bool strata_keyfile_overridden(const strata_keyfile *k, const char *group, const char *key)
{
    char *lk = line_key(group, key);
    bool set = g_hash_table_contains(k->overrides, lk);
    g_free(lk);
    return set;
}

bool strata_keyfile_derived(const strata_keyfile *k, const char *group, const char *key)
{
    char *lk = line_key(group, key);
    bool set = g_hash_table_contains(k->derived, lk);
    g_free(lk);
    return set;
}

char *strata_keyfile_where(const strata_keyfile *k, const char *group, const char *key)
{
    char *lk = line_key(group, key);
    const char *note = key ? g_hash_table_lookup(k->overrides, lk) : NULL;
    /* an override is of the file the command was given: the derived one, if any */
    const char *origin = note ? strata_keyfile_given_origin(k) : k->origin;
    if (!note)
        note = g_hash_table_lookup(k->derived, lk);
    g_free(lk);
    if (!note && key && !strata_keyfile_line(k, group, key) && !strata_keyfile_line(k, group, NULL))
        note = g_hash_table_lookup(k->derived, group); /* a key missing from a group the derived file added */
    if (note) {
        char *q = strata_quote(note);
        char *w = g_strdup_printf("%s (override %s)", origin, q);
        g_free(q);
        return w;
    }
    guint line = strata_keyfile_line(k, group, key);
    if (line == 0 && key) /* a key added by an override: the group's line */
        line = strata_keyfile_line(k, group, NULL);
    return line ? g_strdup_printf("%s:%u", k->origin, line) : g_strdup(k->origin);
}

bool strata_keyfile_override(strata_keyfile *k, const char *group, const char *key, const char *value,
                             const char *note, GError **err)
{
    char *lk = line_key(group, key);
    const char *first = g_hash_table_lookup(k->overrides, lk);
    if (first) {
        char *q1 = strata_quote(first), *q2 = strata_quote(note);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "override '%s': [%s] %s is already set by override '%s'", q2, group, key, q1);
        g_free(q1);
        g_free(q2);
        g_free(lk);
        return false;
    }
    char *before = strata_keyfile_value(k, group, key);
    if (before)
        g_hash_table_replace(k->before_override, g_strdup(lk), before);
    g_key_file_set_value(k->kf, group, key, value);
    g_hash_table_insert(k->overrides, lk, g_strdup(note));
    return true;
}

void strata_keyfile_note_derived_file(strata_keyfile *k, const char *origin)
{
    g_free(k->derived_origin);
    k->derived_origin = g_strdup(origin);
}

const char *strata_keyfile_given_origin(const strata_keyfile *k)
{
    return k->derived_origin ? k->derived_origin : k->origin;
}

void strata_keyfile_set_derived(strata_keyfile *k, const char *group, const char *key, const char *value,
                                const char *note)
{
    char *before = strata_keyfile_value(k, group, key);
    if (before)
        g_hash_table_replace(k->before_derived, line_key(group, key), before);
    g_key_file_set_value(k->kf, group, key, value);
    g_hash_table_replace(k->derived, line_key(group, key), g_strdup(note));
}

strata_keyfile_layer strata_keyfile_layer_of(const strata_keyfile *k, const char *group, const char *key)
{
    return strata_keyfile_overridden(k, group, key) ? STRATA_KEYFILE_LAYER_OVERRIDE
           : strata_keyfile_derived(k, group, key)  ? STRATA_KEYFILE_LAYER_DERIVED
                                                     : STRATA_KEYFILE_LAYER_FILE;
}

char *strata_keyfile_value_at(const strata_keyfile *k, const char *group, const char *key, strata_keyfile_layer layer)
{
    char *lk = line_key(group, key);
    GHashTable *later = NULL; /* the table of the first layer after `layer` that set the key */
    if (layer < STRATA_KEYFILE_LAYER_DERIVED && g_hash_table_contains(k->derived, lk))
        later = k->before_derived;
    else if (layer < STRATA_KEYFILE_LAYER_OVERRIDE && g_hash_table_contains(k->overrides, lk))
        later = k->before_override;
    char *v = later ? g_strdup(g_hash_table_lookup(later, lk)) : strata_keyfile_value(k, group, key);
    g_free(lk);
    return v;
}

void strata_keyfile_note_derived_group(strata_keyfile *k, const char *group, const char *note)
{
    g_hash_table_replace(k->derived, line_key(group, NULL), g_strdup(note));
}

bool strata_keyfile_check_declared(const strata_keyfile *k, const char *group, const strata_key_def *defs,
                                   const char *prefix, GError **err)
{
    GPtrArray *known = g_ptr_array_new();
    for (const strata_key_def *d = defs; d->name; d++)
        g_ptr_array_add(known, (gpointer)d->name);
    g_ptr_array_add(known, NULL);
    bool ok = strata_keyfile_check_keys(k, group, (const char *const *)known->pdata, prefix, err);
    g_ptr_array_free(known, TRUE);
    for (const strata_key_def *d = defs; ok && d->name; d++) {
        if (d->required && !strata_keyfile_has_key(k, group, d->name)) {
            char *where = strata_keyfile_where(k, group, NULL);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: [%s] missing required key '%s'", where, group,
                        d->name);
            g_free(where);
            ok = false;
        }
    }
    return ok;
}

bool strata_keyfile_check_keys(const strata_keyfile *k, const char *group, const char *const *known,
                               const char *prefix, GError **err)
{
    char **keys = strata_keyfile_keys(k, group, NULL);
    bool ok = true;
    for (guint i = 0; ok && keys && keys[i]; i++) {
        const char *key = keys[i];
        if (g_strv_contains(known, key) ||
            (prefix && g_str_has_prefix(key, prefix) && key[strlen(prefix)] != '\0'))
            continue;
        char *list = g_strjoinv(", ", (char **)known);
        char *where = strata_keyfile_where(k, group, key);
        char *q = strata_quote(key);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: [%s] unknown key '%s' (known: %s%s%s%s)", where,
                    group, q, list, prefix ? ", " : "", prefix ? prefix : "", prefix ? "KEY" : "");
        g_free(q);
        g_free(where);
        g_free(list);
        ok = false;
    }
    g_strfreev(keys);
    return ok;
}
