/*
 * time_text_trial.c: strata_format_time_exact()'s text by its definition,
 * the slow way (contract in time_text_trial.h).
 */
#include "time_text_trial.h"
#include <string.h>
#include "core/units.h"

char *bench_time_text_by_trial(double seconds)
{
    static const char *const units[] = {"s", "ms", "us", "ns"};
    static const double scales[] = {1, 1e3, 1e6, 1e9};
    char *best = NULL;
    for (int u = 0; u < 4; u++) {
        char *unit_best = NULL;
        for (int n = 1; n <= 17; n++) {
            char number[G_ASCII_DTOSTR_BUF_SIZE], fmt[8];
            g_snprintf(fmt, sizeof fmt, "%%.%dg", n);
            g_ascii_formatd(number, sizeof number, fmt, seconds * scales[u]);
            char *text = g_strconcat(number, units[u], NULL);
            double back = -1;
            if (strata_parse_time(text, &back, NULL) && back == seconds &&
                (!unit_best || strlen(text) < strlen(unit_best))) {
                g_free(unit_best);
                unit_best = g_strdup(text);
                n = strchr(number, 'e') ? n : 18;
            }
            g_free(text);
        }
        if (unit_best && (!best || strlen(unit_best) < strlen(best))) {
            g_free(best);
            best = unit_best;
        } else {
            g_free(unit_best);
        }
    }
    return best;
}

