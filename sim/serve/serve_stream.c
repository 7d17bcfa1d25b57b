/*
 * serve_stream.c: request streams (serve_stream.h): the CSV reader, the
 * Azure timestamp parser and the seeded Poisson generator.
 */
#include "serve/serve_stream.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/lines.h"
#include "core/units.h"
#include "trace/check.h"

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* Days in month mo (1..12) of year y (proleptic Gregorian). */
static int days_in_month(int y, int mo)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return days[mo - 1] + (mo == 2 && leap);
}

/* Whether s begins with the pattern, each 'd' a digit and every other
 * character itself (sscanf's %2d alone also takes " 1", "+1" and "-1":
 * 2023-11-16 -1:00:00 was read as an hour before midnight). */
static bool digits_as(const char *s, const char *pattern)
{
    for (; *pattern; s++, pattern++)
        if (*pattern == 'd' ? !g_ascii_isdigit(*s) : *s != *pattern)
            return false;
    return true;
}

/* "2023-11-16 18:17:03.9799600" or "2024-05-10 00:00:00.009930+00:00",
 * fraction and zone optional: whole seconds since 1970 (UTC) in *sec and
 * the fraction in *frac (apart, so that differences keep their digits). */
static bool parse_timestamp(const char *s, int64_t *sec_out, double *frac_out)
{
    int y, mo, d, h, mi, sec, n = 0;
    if (!digits_as(s, "dddd-dd-dd dd:dd:dd") ||
        sscanf(s, "%4d-%2d-%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19)
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 60)
        return false; /* 2023-02-31 is no date (days_from_civil read it as March 3rd) */
    const char *p = s + n;
    double frac = 0, scale = 0.1;
    if (*p == '.') {
        p++;
        if (!g_ascii_isdigit(*p))
            return false;
        for (; g_ascii_isdigit(*p); p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    double zone = 0;
    if (*p == '+' || *p == '-') {
        int zh, zm, k = 0;
        if (!digits_as(p + 1, "dd:dd") || sscanf(p + 1, "%2d:%2d%n", &zh, &zm, &k) != 2 || k != 5 || zh > 23 ||
            zm > 59)
            return false;
        zone = (*p == '-' ? -1 : 1) * (zh * 3600.0 + zm * 60.0);
        p += 6;
    } else if (*p == 'Z') {
        p++;
    }
    if (*p)
        return false;
    *sec_out = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec - (int64_t)zone;
    *frac_out = frac;
    return true;
}

/* A line's fields as RFC 4180 writes them (Python's csv module and pandas'
 * to_csv with QUOTE_ALL or QUOTE_NONNUMERIC): a field in double quotes may
 * hold commas, and "" stands for a quote in it; blanks around a field are
 * dropped, as before, inside its quotes too. NULL with err at a quote left
 * open (a field holding a line break is no count or time) or text after a
 * closing quote. A quote inside an unquoted field stays (its value is then
 * refused as the number it is not). */
static char **csv_fields(const char *line, const char *path, uint64_t ln, GError **err)
{
    GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
    const char *p = line;
    bool ok = true;
    for (int col = 1; ok; col++) {
        GString *f = g_string_new(NULL);
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '"') {
            for (p++; *p && (*p != '"' || p[1] == '"'); p++)
                g_string_append_c(f, *p == '"' ? *p++ : *p);
            if (!*p)
                ok = strata_fail_at(err, path, ln, "field %d: expected a closing quote, the line ended inside a "
                                    "quoted field", col);
            for (p += ok; ok && g_ascii_isspace(*p); p++)
                ;
            if (ok && *p && *p != ',')
                ok = strata_fail_at(err, path, ln, "field %d: expected a comma or the line's end after the closing "
                                    "quote, got '%c'", col, *p);
        } else {
            size_t n = strcspn(p, ",");
            g_string_append_len(f, p, (gssize)n);
            p += n;
        }
        g_ptr_array_add(out, g_strstrip(g_string_free(f, FALSE)));
        if (*p != ',')
            break;
        p++;
    }
    if (!ok) {
        g_ptr_array_free(out, TRUE);
        return NULL;
    }
    g_ptr_array_set_free_func(out, NULL);
    g_ptr_array_add(out, NULL);
    return (char **)g_ptr_array_free(out, FALSE);
}

typedef struct csv_columns {
    int time, prompt, output;
    bool azure; /* TIMESTAMP: a date; else arrival_s in seconds */
    int n;
    GString *others; /* the names of the columns not read, quoted, comma-separated */
} csv_columns;

/* The header's columns: one for each quantity (a second column for the
 * same one, TIMESTAMP and arrival_s, ContextTokens and prompt_tokens, or one
 * name twice, silently took the later one, or read arrival_s as a date). */
static bool header_columns(char *line, const char *path, csv_columns *c, GError **err)
{
    *c = (csv_columns){-1, -1, -1, false, 0, c->others};
    char **f = csv_fields(line, path, 1, err);
    if (!f)
        return false;
    bool once = true;
    const char *twice = NULL;
    for (int i = 0; once && f[i]; i++, c->n++) {
        const char *name = g_strstrip(f[i]);
        int *field = strcmp(name, "TIMESTAMP") == 0 || strcmp(name, "arrival_s") == 0 ? &c->time
                     : strcmp(name, "ContextTokens") == 0 || strcmp(name, "prompt_tokens") == 0 ? &c->prompt
                     : strcmp(name, "GeneratedTokens") == 0 || strcmp(name, "output_tokens") == 0 ? &c->output
                                                                                                    : NULL;
        if (field && *field >= 0)
            once = false, twice = field == &c->time ? "arrival time" : field == &c->prompt ? "prompt tokens"
                                                                                           : "output tokens";
        else if (field)
            *field = i, c->azure = c->azure || strcmp(name, "TIMESTAMP") == 0;
        else
            g_string_append_printf(c->others, "%s'%s'", c->others->len ? ", " : "", name);
    }
    g_strfreev(f);
    if (!once)
        return strata_fail_at(err, path, 1, "expected one column for the %s, got two (TIMESTAMP or arrival_s, "
                              "ContextTokens or prompt_tokens, GeneratedTokens or output_tokens: one of each)", twice);
    if (c->time < 0 || c->prompt < 0 || c->output < 0)
        return strata_fail_at(err, path, 1, "expected a header naming TIMESTAMP,ContextTokens,GeneratedTokens "
                              "(the Azure traces) or arrival_s,prompt_tokens,output_tokens");
    return true;
}

static bool parse_count(const char *text, const char *what, const char *path, uint64_t line, uint32_t *out,
                        GError **err)
{
    uint64_t v = 0; /* decimal digits only, as the arrival (pandas reads these columns as decimal): 0x10 was 16 */
    if (!*text || text[strspn(text, "0123456789")] != '\0' || !strata_parse_u64(text, &v, NULL) || v < 1 ||
        v > 100000000)
        return strata_fail_at(err, path, line, "%s: expected a token count from 1 to 10^8, got '%s'", what, text);
    *out = (uint32_t)v;
    return true;
}

bool strata_serve_decimal(const char *text, double *x)
{
    char *end = NULL;
    if (!*text || text[strspn(text, "0123456789.eE+-")] != '\0')
        return false;
    *x = g_ascii_strtod(text, &end);
    /* a figure strtod reads as 0 though a digit of its mantissa is not (1e-400, below the least double):
     * --poisson rate=1e-400 ran as rate 0, every request at once, and --time-scale 1e-400 as 0 */
    bool lost = *x == 0 && strata_decimal_mantissa_nonzero(text, strlen(text));
    return end && end != text && !*end && isfinite(*x) && *x >= 0 && !lost;
}

/* A row: its time as whole seconds *sec and a fraction *t, and its lengths. */
static bool parse_row(char *line, const char *path, uint64_t ln, const csv_columns *c, int64_t *sec, double *t,
                      strata_serve_request *r, GError **err)
{
    char **f = csv_fields(line, path, ln, err);
    if (!f)
        return false;
    bool ok = g_strv_length(f) == (guint)c->n;
    if (!ok)
        strata_fail_at(err, path, ln, "expected %d comma-separated fields as the header names, got %u", c->n,
                       g_strv_length(f));
    if (ok) {
        const char *ts = g_strstrip(f[c->time]);
        if (c->azure)
            ok = parse_timestamp(ts, sec, t);
        else
            ok = strata_serve_decimal(ts, t);
        if (!ok)
            strata_fail_at(err, path, ln, "%s: expected %s, got '%s'", c->azure ? "TIMESTAMP" : "arrival_s",
                           c->azure ? "YYYY-MM-DD HH:MM:SS[.fraction][+HH:MM]" : "seconds >= 0", ts);
        /* a time (or a date's fraction of a second) of 1e-320, a subnormal, was taken as an arrival after 0:
         * a trace's floor holds (trace/check.h), the finest time strata keeps */
        else if (*t != 0 && *t < STRATA_TRACE_MIN_TIME_S)
            ok = strata_fail_at(err, path, ln, "%s: expected %s of 0, or at least 1e-12 s (a picosecond, the finest "
                                "time strata keeps), got '%s'", c->azure ? "TIMESTAMP" : "arrival_s",
                                c->azure ? "a fraction of a second" : "seconds", ts);
    }
    ok = ok && parse_count(g_strstrip(f[c->prompt]), "prompt tokens", path, ln, &r->prompt, err) &&
         parse_count(g_strstrip(f[c->output]), "output tokens", path, ln, &r->output, err);
    g_strfreev(f);
    return ok;
}

/* A newer trace's added columns are read past, and said so once; a limit
 * past the file's rows serves them all, and says so. NULL: nothing to say. */
static char *stream_note(const char *path, const csv_columns *c, uint32_t limit, uint32_t rows)
{
    GString *n = g_string_new(NULL);
    if (c->others->len)
        g_string_append_printf(n, "%s: note: column%s %s not read (strata reads the arrival, prompt and output "
                               "columns)", path, strchr(c->others->str, ',') ? "s" : "", c->others->str);
    if (limit > rows)
        g_string_append_printf(n, "%s%s: note: --limit %u is past the file's %u request%s: all of them are served",
                               n->len ? "\n" : "", path, limit, rows, rows == 1 ? "" : "s");
    return g_string_free(n, n->len == 0);
}

strata_serve_stream *strata_serve_stream_load(const char *path, uint32_t limit, GError **err)
{
    csv_columns cols = {-1, -1, -1, false, 0, g_string_new(NULL)};
    char *line = NULL;
    size_t len = 0;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: %s", path, g_strerror(errno)), NULL;
    strata_lines *l = strata_lines_new(fp, path);
    int rc = strata_lines_next(l, &line, &len, err);
    GArray *reqs = g_array_new(FALSE, FALSE, sizeof(strata_serve_request));
    GArray *lines = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    bool ok = rc > 0 && header_columns(line, path, &cols, err);
    if (rc == 0)
        ok = strata_fail_at(err, path, 1, "expected a header line, the file is empty");
    double t0 = 0, prev = -INFINITY;
    int64_t s0 = 0;
    while (ok && (!limit || reqs->len < limit) && (rc = strata_lines_next(l, &line, &len, err)) > 0) {
        uint64_t ln = strata_lines_number(l);
        if (!*g_strstrip(line))
            continue;
        /* RFC 4180 lets the last record go without a line break, but one cut inside reads as another
         * ("0,2000,2000" cut to "0,2000,2"); Python's csv and pandas, as the Azure traces, end every record with
         * one */
        if (!strata_lines_terminated(l, "a request CSV", "every row of a request CSV ends with one", err)) {
            ok = false;
            break;
        }
        strata_serve_request r = {0};
        double t = 0;
        int64_t sec = 0;
        ok = parse_row(line, path, ln, &cols, &sec, &t, &r, err);
        if (ok && !reqs->len)
            s0 = sec, t0 = t;
        t = (double)(sec - s0) + (t - t0);
        if (ok && t < prev)
            ok = strata_fail_at(err, path, ln, "expected rows sorted by arrival time (this one is earlier than the "
                                "row before)");
        if (!ok)
            break;
        prev = t;
        r.arrival = t;
        g_array_append_val(reqs, r);
        g_array_append_val(lines, ln);
    }
    ok = ok && rc >= 0;
    strata_lines_free(l);
    if (ok && !reqs->len)
        ok = strata_fail_at(err, path, 2, "expected at least one request row");
    if (!ok) {
        g_array_free(reqs, TRUE);
        g_array_free(lines, TRUE);
        g_string_free(cols.others, TRUE);
        return NULL;
    }
    strata_serve_stream *s = g_new0(strata_serve_stream, 1);
    s->note = stream_note(path, &cols, limit, reqs->len);
    g_string_free(cols.others, TRUE);
    s->n = reqs->len;
    s->req = (strata_serve_request *)(void *)g_array_free(reqs, FALSE);
    s->line = (uint64_t *)(void *)g_array_free(lines, FALSE);
    s->origin = g_strdup(path);
    return s;
}

static uint32_t draw_len(GRand *g, double mean, strata_serve_len_dist dist, double spread)
{
    double v = mean;
    if (dist == STRATA_SERVE_LEN_UNIFORM)
        v = mean * (1 + spread * (2 * g_rand_double(g) - 1));
    else if (dist == STRATA_SERVE_LEN_EXP)
        v = -mean * log(1 - g_rand_double(g));
    v = round(v);
    return v < 1 ? 1 : v > 1e8 ? 100000000u : (uint32_t)v;
}

strata_serve_stream *strata_serve_stream_poisson(const strata_serve_poisson *p)
{
    strata_serve_stream *s = g_new0(strata_serve_stream, 1);
    s->n = p->n;
    s->req = g_new0(strata_serve_request, p->n ? p->n : 1);
    GRand *g = g_rand_new_with_seed((guint32)p->seed);
    double t = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        if (p->rate > 0 && i > 0)
            t += -log(1 - g_rand_double(g)) / p->rate;
        s->req[i].arrival = t;
        s->req[i].prompt = draw_len(g, p->prompt_mean, p->dist, p->spread);
        s->req[i].output = draw_len(g, p->output_mean, p->dist, p->spread);
    }
    g_rand_free(g);
    s->origin = g_strdup_printf("poisson(n=%u,rate=%g,prompt=%g,output=%g,seed=%" G_GUINT64_FORMAT ")", p->n,
                                p->rate, p->prompt_mean, p->output_mean, p->seed);
    return s;
}

/* --poisson's keys: read as text and checked by poisson_value (strata_serve_decimal's rule, each key's range);
 * unset keys keep strata_serve_poisson_parse's defaults. */
static const char *const poisson_dists[] = {"fixed", "uniform", "exp", NULL};
static const strata_param_def poisson_params[] = {
    {"n", STRATA_PARAM_STRING, NULL, "requests (1..1e8, whole; default 1000)", NULL},
    {"rate", STRATA_PARAM_STRING, NULL, "requests a second, >= 0 (default 0: all at time 0)", NULL},
    {"prompt", STRATA_PARAM_STRING, NULL, "mean prompt tokens (1..1e8; default 512)", NULL},
    {"output", STRATA_PARAM_STRING, NULL, "mean output tokens (1..1e8; default 128)", NULL},
    {"dist", STRATA_PARAM_STRING, NULL, "lengths: fixed (default), uniform or exp", poisson_dists},
    {"spread", STRATA_PARAM_STRING, NULL, "dist=uniform's +- fraction of the mean (0..1; default 0.15)", NULL},
    {"seed", STRATA_PARAM_STRING, NULL, "the generator's seed (whole, < 2^32; default 1)", NULL},
    {NULL, STRATA_PARAM_STRING, NULL, NULL, NULL},
};

static bool poisson_value(strata_serve_poisson *p, const char *k, const char *v, GError **err)
{
    double x = 0;
    if (strcmp(k, "dist") == 0) { /* one of poisson_dists (strata_params checked it) */
        p->dist = strcmp(v, "uniform") == 0 ? STRATA_SERVE_LEN_UNIFORM
                : strcmp(v, "exp") == 0     ? STRATA_SERVE_LEN_EXP
                                            : STRATA_SERVE_LEN_FIXED;
        return true;
    }
    if (!strata_serve_decimal(v, &x)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--poisson %s: expected a number >= 0, got '%s'", k, v);
        return false;
    }
    if (strcmp(k, "n") == 0 && x >= 1 && x <= 1e8 && x == floor(x))
        p->n = (uint32_t)x;
    else if (strcmp(k, "rate") == 0)
        p->rate = x;
    else if (strcmp(k, "prompt") == 0 && x >= 1 && x <= 1e8) /* a request file's token counts' range */
        p->prompt_mean = x;
    else if (strcmp(k, "output") == 0 && x >= 1 && x <= 1e8) /* 1e300 was clamped to 1e8, exit 0 */
        p->output_mean = x;
    else if (strcmp(k, "spread") == 0 && x <= 1)
        p->spread = x;
    else if (strcmp(k, "seed") == 0 && x == floor(x) && x < 4294967296.0)
        p->seed = (uint64_t)x;
    else {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--poisson %s=%s: expected n (1..1e8), rate, prompt "
                    "(1..1e8 tokens), output (1..1e8 tokens), dist, spread (0..1) or seed (< 2^32)", k, v);
        return false;
    }
    return true;
}

bool strata_serve_poisson_parse(const char *spec, strata_serve_poisson *p, GError **err)
{
    *p = (strata_serve_poisson){.n = 1000, .rate = 0, .prompt_mean = 512, .output_mean = 128,
                                .dist = STRATA_SERVE_LEN_FIXED, .spread = 0.15, .seed = 1};
    if (!*spec) { /* '' served the defaults' 1,000 requests */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--poisson: expected KEY=VALUE,... such as n=100,rate=4, "
                    "got ''");
        return false;
    }
    strata_params *kv = strata_params_new_unspaced("--poisson", poisson_params, spec, err);
    bool ok = kv != NULL;
    for (const strata_param_def *d = poisson_params; ok && d->name; d++)
        if (strata_params_is_set(kv, d->name))
            ok = poisson_value(p, d->name, strata_params_string(kv, d->name), err);
    if (ok && strata_params_is_set(kv, "spread") && p->dist != STRATA_SERVE_LEN_UNIFORM) {
        /* only dist=uniform draws within +- spread */
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "--poisson spread=%s: expected dist=uniform, which reads "
                    "it, got dist=%s", strata_params_string(kv, "spread"),
                    p->dist == STRATA_SERVE_LEN_EXP ? "exp" : "fixed");
        ok = false;
    }
    strata_params_free(kv);
    return ok;
}

void strata_serve_stream_free(strata_serve_stream *s)
{
    if (!s)
        return;
    g_free(s->req);
    g_free(s->prior);
    g_free(s->line);
    g_free(s->origin);
    g_free(s->note);
    g_free(s);
}
