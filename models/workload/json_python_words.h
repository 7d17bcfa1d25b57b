/*
 * json_python_words.h: the bare words Python's json module writes for
 * float infinities and NaN (Infinity, -Infinity, NaN), which JSON has no
 * place for and json-glib refuses (Nemotron-H's config.json:
 * time_step_limit [0.0, Infinity]).
 *
 * Invariants: only a whole word outside a string is replaced, by null; the
 * rest of the text is copied unchanged; lines count from 1.
 */
#ifndef STRATA_JSON_PYTHON_WORDS_H
#define STRATA_JSON_PYTHON_WORDS_H

#include <glib.h>

/* A copy of text (g_free) with each such word outside a string made null
 * (a key's class default; every such key strata has met is one it
 * ignores); `lines` (an array of guint) gets the line of each. */
char *strata_json_python_words_to_null(const char *text, GArray *lines);

#endif
