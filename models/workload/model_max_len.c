/*
 * model_max_len.c: vLLM's derived max_model_len of a config.json
 * (model_max_len.h).
 *
 * vllm/config.py _get_and_verify_max_len (vllm-project/vllm@32e7db25, v0.6.0,
 * and ROCm/vllm@37126497, 0.9.0.1): the length is max_position_embeddings
 * (the smallest of it and a few other families' keys, none of which a family
 * strata reads sets); then, where rope_scaling is not null, its type
 * ("type", else "rope_type"; 0.9.0.1's patch_rope_scaling_dict refuses the two
 * disagreeing, and both refuse neither: ValueError "rope_scaling should have a
 * 'rope_type' key") decides: su, longrope and llama3 leave the length as it
 * is; any other multiplies it by rope_scaling's factor, yarn's replacing it
 * first by rope_scaling's original_max_position_embeddings (a KeyError
 * without one); int() takes the product's floor. Where the releases differ
 * strata follows 0.9.0.1 and says so: a Gemma 3 model_type leaves the length
 * unscaled ("Gemma3's max_model_len (128K) is already scaled by RoPE
 * scaling"; v0.6.0 predates Gemma 3), and a factor left out reads as 1.0 for
 * the types that define none (default, and mrope, which it patches to
 * default) where v0.6.0 asserts one; for every other type a missing factor is
 * refused (v0.6.0's `assert "factor" in rope_scaling`). A factor that is not a
 * positive finite number (null, a string, 0, -2) is refused: vLLM's
 * multiplication raises or gives no length a request fits.
 */
#include "workload/model_max_len.h"
#include <math.h>
#include <stdbool.h>
#include <string.h>

static const char *string_of(JsonObject *o, const char *name)
{
    JsonNode *v = o ? json_object_get_member(o, name) : NULL;
    return v && JSON_NODE_HOLDS_VALUE(v) && json_node_get_value_type(v) == G_TYPE_STRING ? json_node_get_string(v)
                                                                                         : NULL;
}

/* A member that is an integer from 1 to 2^31 - 1: its value; else 0. */
static int64_t count_of(JsonObject *o, const char *name)
{
    JsonNode *v = json_object_get_member(o, name);
    int64_t n = v && JSON_NODE_HOLDS_VALUE(v) && json_node_get_value_type(v) == G_TYPE_INT64 ? json_node_get_int(v)
                                                                                            : 0;
    return n >= 1 && n <= G_MAXINT32 ? n : 0;
}

/* The rope type of rope_scaling r (NULL with *problem set where vLLM refuses it). */
static const char *rope_type_of(JsonObject *r, char **problem)
{
    const char *legacy = string_of(r, "type"), *modern = string_of(r, "rope_type");
    bool given = json_object_has_member(r, "type") || json_object_has_member(r, "rope_type");
    if ((legacy && modern && strcmp(legacy, modern) != 0) || !(legacy || modern))
        *problem = g_strdup_printf(
            "key 'rope_scaling': expected one rope type, as a string in 'type' or 'rope_type' (or both the same), "
            "got %s; vLLM refuses the file (ValueError, vllm/transformers_utils/config.py patch_rope_scaling_dict)",
            legacy && modern ? "two that differ" : given ? "one that is not a string" : "neither key");
    return *problem ? NULL : legacy ? legacy : modern;
}

uint32_t strata_model_max_len(JsonObject *o, const char *type, char **problem)
{
    *problem = NULL;
    int64_t positions = count_of(o, "max_position_embeddings");
    JsonNode *rs = json_object_get_member(o, "rope_scaling");
    if (!rs || JSON_NODE_HOLDS_NULL(rs) || strstr(type, "gemma3"))
        return (uint32_t)positions;
    if (!JSON_NODE_HOLDS_OBJECT(rs)) {
        *problem = g_strdup("key 'rope_scaling': expected an object or null (vLLM reads its rope type and factor)");
        return 0;
    }
    JsonObject *r = json_node_get_object(rs);
    const char *rope = rope_type_of(r, problem);
    if (!rope || !strcmp(rope, "su") || !strcmp(rope, "longrope") || !strcmp(rope, "llama3"))
        return rope ? (uint32_t)positions : 0;
    JsonNode *f = json_object_get_member(r, "factor");
    GType t = f && JSON_NODE_HOLDS_VALUE(f) ? json_node_get_value_type(f) : G_TYPE_INVALID;
    double factor = t == G_TYPE_INT64 ? (double)json_node_get_int(f) : t == G_TYPE_DOUBLE ? json_node_get_double(f)
                                                                                          : NAN;
    if (!f && (!strcmp(rope, "default") || !strcmp(rope, "mrope")))
        factor = 1.0;
    if (!(factor > 0 && isfinite(factor))) {
        *problem = g_strdup_printf("key 'rope_scaling': rope type '%s' scales the length by its factor: expected "
                                   "'factor' a positive finite number, got %s", rope, f ? "another value" : "none");
        return 0;
    }
    if (!strcmp(rope, "yarn")) {
        positions = count_of(r, "original_max_position_embeddings");
        if (!positions) {
            *problem = g_strdup("key 'rope_scaling': rope type 'yarn': expected 'original_max_position_embeddings' "
                                "an integer from 1 to 2^31 - 1 (vLLM derives the length as it times the factor)");
            return 0;
        }
    }
    double scaled = floor((double)positions * factor);
    if (positions && scaled < 1) {
        *problem = g_strdup_printf("key 'rope_scaling': factor %g makes the derived length %" G_GINT64_FORMAT
                                   " x %g below 1 token: expected a factor of at least %g", factor, positions,
                                   factor, 1.0 / (double)positions);
        return 0;
    }
    return scaled > G_MAXINT32 ? G_MAXINT32 : (uint32_t)scaled;
}
