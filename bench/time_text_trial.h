/*
 * time_text_trial.h: the definition of strata_format_time_exact()'s text,
 * computed the slow way, as strata did until issue 46: in each unit (s, ms,
 * us, ns), every "%.Ng", N = 1..17, appended the unit and parsed back with
 * strata_parse_time(); the shortest text that gives the very double, the
 * first N of a length within a unit (a text without an exponent ends a
 * unit's search: more digits never shorten it), the largest unit of a
 * length across units. Up to 68 printfs and 68 parses a time.
 *
 * The oracle of test_units (the fast formatter must give this text for
 * every double) and the baseline of bench_import_jax.
 */
#ifndef STRATA_BENCH_TIME_TEXT_TRIAL_H
#define STRATA_BENCH_TIME_TEXT_TRIAL_H

/* The text (g_free), NULL when no text round-trips (not a finite positive
 * time). */
char *bench_time_text_by_trial(double seconds);

#endif
