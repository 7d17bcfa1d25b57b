/*
 * json_member.h: the members of a JSON object the profile importers read
 * (kineto_event.c, jax_profile.c), typed: each returns the member when it
 * is there and of that type, else false or NULL, and leaves what a missing
 * member means to its reader.
 *
 * Invariants: a number is a JSON integer or real (json-glib's int64 or
 * double value), never a string or a boolean; an object argument may be
 * NULL (then every member is missing).
 */
#ifndef STRATA_JSON_MEMBER_H
#define STRATA_JSON_MEMBER_H

#include <json-glib/json-glib.h>
#include <stdbool.h>
#include <stdint.h>

/* A number member as a double (an integer converted). */
bool json_member_number(JsonObject *o, const char *key, double *out);
/* An integral number member: an integer, or a real that is whole and
 * within +-9e18. */
bool json_member_integer(JsonObject *o, const char *key, int64_t *out);
/* A string member (borrowed from o), or NULL. */
const char *json_member_string(JsonObject *o, const char *key);
/* An object member (borrowed from o), or NULL. */
JsonObject *json_member_object(JsonObject *o, const char *key);

#endif
