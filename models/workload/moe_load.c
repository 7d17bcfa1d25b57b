/*
 * moe_load.c: the experts' load and the expert groups' rows (moe_load.h).
 *
 * Invariants: share[] holds E shares, each >= 0, summing to 1.
 */
#include "workload/moe_load.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/readall.h"

struct wl_moe_load {
    uint64_t experts;
    double *share;
};

/* Reads FILE's counts into counts[0..E); false with FILE:LINE on err. */
static bool read_counts(const char *path, uint64_t E, double *counts, GError **err)
{
    gchar *text = NULL;
    size_t len = 0;
    GError *e = NULL;
    /* bounded, NUL refused: g_strsplit stopped at a NUL, dropping the counts after it */
    if (!strata_read_all(path, (size_t)16 << 20, true, "a file of expert counts", &text, &len, &e)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "transformer: imbalance=%s: expected uniform, zipf:S or a file of per-expert token counts: %s",
                    path, e->message);
        g_error_free(e);
        return false;
    }
    gchar **lines = g_strsplit(text, "\n", -1);
    g_free(text);
    uint64_t n = 0;
    bool ok = true;
    for (guint i = 0; ok && lines[i]; i++) {
        char *hash = strchr(lines[i], '#');
        if (hash)
            *hash = '\0';
        g_strstrip(lines[i]);
        if (!*lines[i])
            continue;
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(lines[i], &end, 10);
        if (*end || errno || lines[i][0] == '-') {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s:%u: expected a token count (a non-negative integer), got '%s'", path, i + 1, lines[i]);
            ok = false;
            break;
        }
        if (n >= E) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s:%u: expected %" G_GUINT64_FORMAT " token counts (one per expert), got more", path, i + 1,
                        E);
            ok = false;
            break;
        }
        counts[n++] = (double)v;
    }
    g_strfreev(lines);
    if (ok && n < E) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: expected %" G_GUINT64_FORMAT " token counts (one per expert), got %" G_GUINT64_FORMAT, path,
                    E, n);
        ok = false;
    }
    return ok;
}

wl_moe_load *wl_moe_load_new(const char *imbalance, uint64_t experts, GError **err)
{
    g_assert(experts > 0);
    double *w = g_new0(double, experts);
    bool ok = true;
    if (strcmp(imbalance, "uniform") == 0) {
        for (uint64_t e = 0; e < experts; e++)
            w[e] = 1;
    } else if (g_str_has_prefix(imbalance, "zipf:")) {
        char *end = NULL;
        double s = g_ascii_strtod(imbalance + 5, &end);
        if (!*(imbalance + 5) || *end || !(s > 0) || !isfinite(s)) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "transformer: expected imbalance=zipf:S with S a number > 0, got imbalance=%s", imbalance);
            ok = false;
        }
        for (uint64_t e = 0; ok && e < experts; e++)
            w[e] = pow((double)(e + 1), -s);
    } else
        ok = read_counts(imbalance, experts, w, err);
    double total = 0;
    for (uint64_t e = 0; ok && e < experts; e++)
        total += w[e];
    if (ok && !(total > 0)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected some expert to get tokens, got all 0",
                    imbalance);
        ok = false;
    }
    if (!ok) {
        g_free(w);
        return NULL;
    }
    for (uint64_t e = 0; e < experts; e++)
        w[e] /= total;
    wl_moe_load *l = g_new(wl_moe_load, 1);
    *l = (wl_moe_load){experts, w};
    return l;
}

void wl_moe_load_free(wl_moe_load *l)
{
    if (!l)
        return;
    g_free(l->share);
    g_free(l);
}

void wl_moe_load_split(const wl_moe_load *l, uint64_t n, uint64_t *rows)
{
    const uint64_t E = l->experts;
    double *frac = g_new(double, E);
    uint64_t given = 0;
    for (uint64_t e = 0; e < E; e++) {
        double x = (double)n * l->share[e];
        rows[e] = (uint64_t)floor(x);
        frac[e] = x - (double)rows[e];
        given += rows[e];
    }
    while (given < n) { /* the largest remainder, lowest expert on a tie */
        uint64_t best = 0;
        for (uint64_t e = 1; e < E; e++)
            if (frac[e] > frac[best])
                best = e;
        rows[best]++;
        frac[best] = -1;
        given++;
    }
    g_free(frac);
}

void wl_moe_rows_plan(const wl_moe_load *l, uint64_t n, uint64_t ep, double cf, wl_moe_rows *r)
{
    const uint64_t E = l->experts, local = E / ep;
    g_assert(ep >= 1 && E % ep == 0);
    uint64_t *rows = g_new(uint64_t, E);
    wl_moe_load_split(l, n, rows);
    memset(r, 0, sizeof *r);
    r->group_rows = g_new0(uint64_t, ep);
    if (cf > 0)
        r->capacity = (uint64_t)ceil((double)n / (double)E * cf);
    uint64_t chunk = 0;
    for (uint64_t g = 0; g < ep; g++) {
        uint64_t sum = 0;
        for (uint64_t e = g * local; e < (g + 1) * local; e++) {
            uint64_t kept = r->capacity ? MIN(rows[e], r->capacity) : rows[e];
            r->dropped += rows[e] - kept;
            sum += kept;
        }
        chunk = MAX(chunk, sum);
        r->group_rows[g] = r->capacity ? E * r->capacity : ep * sum;
    }
    r->chunk = r->capacity ? local * r->capacity : chunk;
    r->send_rows = ep * r->chunk;
    for (uint64_t g = 0; g < ep; g++)
        r->max_rows = MAX(r->max_rows, r->group_rows[g]);
    g_free(rows);
}
