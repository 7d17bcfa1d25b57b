/* json_member.c: typed members of a JSON object (json_member.h). */
#include "import/json_member.h"

#include <math.h>

static JsonNode *value_of(JsonObject *o, const char *key)
{
    JsonNode *n = o ? json_object_get_member(o, key) : NULL;
    return n && JSON_NODE_HOLDS_VALUE(n) ? n : NULL;
}

bool json_member_number(JsonObject *o, const char *key, double *out)
{
    JsonNode *n = value_of(o, key);
    GType t = n ? json_node_get_value_type(n) : G_TYPE_INVALID;
    if (t == G_TYPE_INT64)
        *out = (double)json_node_get_int(n);
    else if (t == G_TYPE_DOUBLE)
        *out = json_node_get_double(n);
    else
        return false;
    return true;
}

bool json_member_integer(JsonObject *o, const char *key, int64_t *out)
{
    JsonNode *n = value_of(o, key);
    GType t = n ? json_node_get_value_type(n) : G_TYPE_INVALID;
    if (t == G_TYPE_INT64) {
        *out = json_node_get_int(n);
        return true;
    }
    if (t != G_TYPE_DOUBLE)
        return false;
    double d = json_node_get_double(n);
    if (!isfinite(d) || d != floor(d) || fabs(d) > 9.0e18)
        return false;
    *out = (int64_t)d;
    return true;
}

const char *json_member_string(JsonObject *o, const char *key)
{
    JsonNode *n = value_of(o, key);
    return n && json_node_get_value_type(n) == G_TYPE_STRING ? json_node_get_string(n) : NULL;
}

JsonObject *json_member_object(JsonObject *o, const char *key)
{
    JsonNode *n = o ? json_object_get_member(o, key) : NULL;
    return n && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}
