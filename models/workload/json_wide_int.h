/*
 * json_wide_int.h: the integer literals of a JSON text that a 64-bit
 * integer cannot hold.
 *
 * json-glib reads an integer literal through g_ascii_strtoull and a cast to
 * gint64, so 9223372036854775808 reads as -9223372036854775808, anything
 * past 2^64 - 1 as -1, and -18446744073709551615 as 1: a figure that may even
 * pass a range check. A reader that takes integers from a JSON file finds
 * those literals here first and refuses them by key and line.
 *
 * Invariants: every literal listed is an integer (no fraction, no
 * exponent) outside [-2^63, 2^63 - 1]; its key is the member name whose
 * value holds it (an array's elements: the array's key; "" at the top);
 * lines count from 1; literals inside strings are never listed.
 */
#ifndef STRATA_JSON_WIDE_INT_H
#define STRATA_JSON_WIDE_INT_H

#include <glib.h>

typedef struct strata_json_wide_int {
    char *key;  /* the member name, as written between its quotes */
    char *text; /* the literal, as written */
    guint line;
} strata_json_wide_int;

/* The wide literals of text, in order (elements freed with the array). */
GPtrArray *strata_json_wide_ints(const char *text);

#endif
