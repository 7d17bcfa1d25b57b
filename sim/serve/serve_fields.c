/*
 * serve_fields.c: fields set by name from text (serve_fields.h).
 */
#include "serve/serve_fields.h"
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "core/units.h"
#include "serve/serve_names.h"
#include "serve/serve_stream.h"
#include "trace/check.h"
#include "trace/op.h"

enum { NAME_MAX_BYTES = 64 };

char *serve_field_names(const serve_field *table)
{
    return serve_names_list(SERVE_NAMES(table, serve_field));
}

/* Parses value by f's type into *out (a scratch as wide as any field);
 * the expectation on failure. */
static const char *parse(const serve_field *f, const char *value, void *out)
{
    uint64_t v = 0;
    double d = 0;
    switch (f->type) {
    case SERVE_FIELD_U32:
        if (!strata_parse_u64(value, &v, NULL) || v < f->min || v > UINT32_MAX)
            return f->min ? "a whole number from 1 to 2^32 - 1" : "a whole number below 2^32";
        *(uint32_t *)out = (uint32_t)v;
        return NULL;
    case SERVE_FIELD_OPTION_INT: /* a sweep's concurrency=4294967295 was taken, --concurrency stops at 2^31 - 1 */
        if (!strata_parse_u64(value, &v, NULL) || v < f->min || v > G_MAXINT)
            return f->min ? "a whole number from 1 to 2^31 - 1 (the option's range)"
                          : "a whole number below 2^31 (the option's range)";
        *(uint32_t *)out = (uint32_t)v;
        return NULL;
    case SERVE_FIELD_BOOL:
        return strata_parse_bool(value, (bool *)out) ? NULL : "true or false";
    case SERVE_FIELD_DTYPE: {
        strata_dtype t;
        if (!strata_dtype_from_name(value, &t) || strata_dtype_bits(t) < 8)
            return "a dtype of 8 bits or more (bf16, f16, f8, f32)";
        *(strata_dtype *)out = t;
        return NULL;
    }
    case SERVE_FIELD_NAME: /* empty: a typo, not a name (a model file without the key takes its file's) */
        if (!*value)
            return "a name (text)";
        if (strlen(value) >= NAME_MAX_BYTES)
            return "at most 63 characters";
        g_strlcpy(out, value, NAME_MAX_BYTES);
        return NULL;
    case SERVE_FIELD_FRACTION:
        if (!strata_serve_decimal(value, &d) || !(d > 0 && d <= 1))
            return "a fraction in (0, 1]";
        *(double *)out = d;
        return NULL;
    case SERVE_FIELD_TIME:
        /* a trace op's range (trace/check.h): 1e300s ran 10^300 s a step, 1e-320s a subnormal, at exit 0 */
        /* seconds as a number too, as --step-overhead takes them (serve_args.c) */
        return (strata_serve_decimal(value, (double *)out) || strata_parse_time(value, (double *)out, NULL)) &&
                       strata_trace_time_ok(*(double *)out)
                   ? NULL
                   : "seconds (0.002) or a time such as 2ms: 0, or from 0.001ns (a picosecond) to 1e6 s";
    case SERVE_FIELD_SIZE:
        return strata_parse_size(value, (uint64_t *)out, NULL) ? NULL : "a size such as 4GiB";
    }
    return "a value";
}

static size_t width(serve_field_type t)
{
    switch (t) {
    case SERVE_FIELD_U32:
    case SERVE_FIELD_OPTION_INT:
        return sizeof(uint32_t);
    case SERVE_FIELD_BOOL:
        return sizeof(bool);
    case SERVE_FIELD_DTYPE:
        return sizeof(strata_dtype);
    case SERVE_FIELD_NAME:
        return NAME_MAX_BYTES;
    case SERVE_FIELD_SIZE:
        return sizeof(uint64_t);
    default:
        return sizeof(double);
    }
}

bool serve_field_set(const serve_field *table, void *obj, const char *what, const char *key, const char *value,
                     GError **err)
{
    const serve_field *f = serve_names_find(SERVE_NAMES(table, serve_field), key);
    if (!f) {
        char *known = serve_field_names(table);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "unknown %s '%s' (known: %s)", what, key, known);
        g_free(known);
        return false;
    }
    union {
        char name[NAME_MAX_BYTES];
        uint64_t u64;
        double d;
    } scratch = {{0}};
    const char *expected = parse(f, value, &scratch);
    if (expected) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected %s, got '%s'", key, expected, value);
        return false;
    }
    memcpy((char *)obj + f->offset, &scratch, width(f->type));
    return true;
}

bool serve_field_same(const serve_field *table, const void *a, const void *b, const char *key)
{
    const serve_field *f = serve_names_find(SERVE_NAMES(table, serve_field), key);
    if (!f)
        return false;
    const char *x = (const char *)a + f->offset, *y = (const char *)b + f->offset;
    if (f->type == SERVE_FIELD_FRACTION || f->type == SERVE_FIELD_TIME) {
        double dx, dy;
        memcpy(&dx, x, sizeof dx);
        memcpy(&dy, y, sizeof dy);
        return dx == dy;
    }
    if (f->type == SERVE_FIELD_NAME)
        return strncmp(x, y, NAME_MAX_BYTES) == 0;
    return memcmp(x, y, width(f->type)) == 0;
}
