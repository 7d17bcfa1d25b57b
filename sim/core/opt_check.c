/* opt_check.c: options checked before GOption reads them (contract in opt_check.h). */
#include "core/opt_check.h"

#include <string.h>

/* A value each entry was given first, by index in entries (NULL: none yet). */
typedef struct seen {
    const GOptionEntry *entries;
    const char **first;
    char *message;
} seen;

static bool takes_value(const GOptionEntry *e) { return e->arg != G_OPTION_ARG_NONE; }

static bool repeatable(const GOptionEntry *e)
{
    return e->arg == G_OPTION_ARG_NONE || e->arg == G_OPTION_ARG_STRING_ARRAY ||
           e->arg == G_OPTION_ARG_FILENAME_ARRAY;
}

/* "0", "12", "-3": what strtol(.., 10) and strtol(.., 0) read alike. */
static bool plain_decimal(const char *v)
{
    const char *d = v + (*v == '-');
    return (d[0] == '0' && d[1] == '\0') || (d[0] >= '1' && d[0] <= '9' && strspn(d, "0123456789") == strlen(d));
}

/* The entry given, with its value (NULL when it is missing: GOption says so). */
static bool note(seen *s, const GOptionEntry *e, const char *value)
{
    size_t i = (size_t)(e - s->entries);
    if (value && (e->arg == G_OPTION_ARG_INT || e->arg == G_OPTION_ARG_INT64) && !plain_decimal(value)) {
        s->message = g_strdup_printf("--%s: expected a decimal whole number (digits, no leading zero), got '%s'",
                                     e->long_name, value);
        return false;
    }
    /* G_MININT is how serve and sweep mark an integer option not given (serve_args.h STRATA_SERVE_UNSET,
     * cmd_sweep.c JOBS_UNSET): --max-seq-len-to-capture -2147483648 ran at its default, exit 0 */
    if (value && e->arg == G_OPTION_ARG_INT && strcmp(value, "-2147483648") == 0) {
        s->message = g_strdup_printf("--%s: expected a whole number above -2147483648 (the least int stands for the "
                                     "option not given), got '%s'", e->long_name, value);
        return false;
    }
    if (repeatable(e))
        return true;
    if (s->first[i]) {
        s->message = g_strdup_printf("--%s given twice ('%s', then '%s'): expected it once (the first would be "
                                     "ignored)", e->long_name, s->first[i], value ? value : "");
        return false;
    }
    s->first[i] = value ? value : "";
    return true;
}

static const GOptionEntry *find_long(const GOptionEntry *entries, const char *name, size_t len)
{
    for (const GOptionEntry *e = entries; e->long_name; e++)
        if (strlen(e->long_name) == len && strncmp(e->long_name, name, len) == 0)
            return e;
    return NULL;
}

static const GOptionEntry *find_short(const GOptionEntry *entries, char c)
{
    for (const GOptionEntry *e = entries; e->long_name; e++)
        if (e->short_name == c)
            return e;
    return NULL;
}

/* The argument at *i (an option); *i moves past the values it takes. */
static bool one_arg(seen *s, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (a[1] == '-') {
        const char *eq = strchr(a + 2, '=');
        const GOptionEntry *e = find_long(s->entries, a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
        if (!e)
            return true;
        const char *value = eq ? eq + 1 : NULL;
        if (!eq && takes_value(e) && *i + 1 < argc)
            value = argv[++*i];
        return note(s, e, value);
    }
    bool took = false; /* a letter of the group took the next argument */
    for (const char *c = a + 1; *c; c++) {
        const GOptionEntry *e = find_short(s->entries, *c);
        if (!e || (took && takes_value(e)))
            return true; /* GOption refuses it: "Unknown option -u", "Error parsing option -o" (-oFILE) */
        const char *value = takes_value(e) && *i + 1 < argc ? argv[++*i] : NULL;
        took |= value != NULL;
        if (!note(s, e, value))
            return false;
    }
    return true;
}

bool strata_opt_check(const GOptionEntry *entries, int argc, char **argv, bool strict_posix, char **message)
{
    size_t n = 0;
    while (entries[n].long_name)
        n++;
    seen s = {.entries = entries, .first = g_new0(const char *, n + 1)};
    bool ok = true;
    for (int i = 1; ok && i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0)
            break;
        if (a[0] != '-' || a[1] == '\0') {
            if (strict_posix)
                break;
            continue;
        }
        ok = one_arg(&s, argc, argv, &i);
    }
    g_free(s.first);
    *message = s.message;
    return ok;
}
