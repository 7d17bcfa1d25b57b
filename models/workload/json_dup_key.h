/*
 * json_dup_key.h: the first member name a JSON text gives twice in one
 * object.
 *
 * json-glib, as Python's json.load, keeps the later of two members of one
 * name and says nothing, so a config.json edited by hand (a key added at the
 * end where the file already had it) silently takes whichever came last. A
 * reader that means each key once finds the repeat here first and refuses it
 * by key and line.
 *
 * Invariants: names are compared as json-glib reads them (escapes decoded,
 * so "a" and "\u0061" are one name); each object is its own scope (a nested
 * object, or an array's objects, may reuse an outer name); lines count from
 * 1; text that is not JSON gives whatever the scan met first, so call it on
 * text json-glib parsed.
 */
#ifndef STRATA_JSON_DUP_KEY_H
#define STRATA_JSON_DUP_KEY_H

#include <glib.h>
#include <stdbool.h>

/* Whether no object of text gives a name twice; else false with err
 * (STRATA_ERROR_INPUT) ":LINE: key 'NAME': ...", naming the repeat, the
 * line of its first use and what was expected (the caller puts the file's
 * name before it). */
bool strata_json_unique_keys(const char *text, GError **err);

#endif
