/*
 * hw_values.c: the typed values of a hardware key file, for the loaders
 * (hw.c, hw_devices.c, hw_base.c): sizes, bandwidths, times and flop rates
 * parsed by core/units.h and held to the sane range of their kind
 * (docs/hardware.md), text values, references to memories, and the
 * messages that name where a bad value stands.
 *
 * Invariants: every message starts "FILE:LINE: [GROUP] KEY: " (the key
 * file's own location of that group and key, an override's text when the
 * value came from --set); a reader that fails sets err and returns false
 * (or -1), and *out then holds nothing to use.
 */
#include "hw/hw_internal.h"
#include "core/error.h"
#include "core/keyfile.h"
#include "core/units.h"

#include <stdarg.h>
#include <string.h>

/* ---- load context: where each group and key came from ---- */

/* Sets err to "WHERE: [GROUP] KEY: MESSAGE" (KEY omitted when NULL). */
void hw_fail(const hw_load_ctx *ctx, GError **err, const char *group, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    char *loc = strata_keyfile_where(ctx->k, group, key);
    if (key)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: [%s] %s: %s", loc, group, key, msg);
    else
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: [%s] %s", loc, group, msg);
    g_free(loc);
    g_free(msg);
}

/* Prefixes an error from a units parser with the key's location. */
static void prefix(const hw_load_ctx *ctx, GError **err, const char *group, const char *key)
{
    char *loc = strata_keyfile_where(ctx->k, group, key);
    g_prefix_error(err, "%s: [%s] %s: ", loc, group, key);
    g_free(loc);
}

char *hw_get_raw(const hw_load_ctx *ctx, const char *group, const char *key)
{
    return strata_keyfile_value(ctx->k, group, key);
}

/* Sets err to "WHERE: [GROUP] KEY: expected EXPECTED, got 'VALUE'" (VALUE
 * quoted as a short excerpt). Returns false. */
bool hw_fail_value(const hw_load_ctx *ctx, GError **err, const char *group, const char *key,
                       const char *expected, const char *value)
{
    char *q = strata_quote(value);
    hw_fail(ctx, err, group, key, "expected %s, got '%s'", expected, q);
    g_free(q);
    return false;
}

/* The sane range of a kind of figure (docs/hardware.md): values outside it
 * are typos or unit slips (1e-30 B/s, a latency of 1e30 s). */
typedef struct sane_range {
    double min, max;
    const char *expected;
} sane_range;

static const sane_range capacity_range = {1, 1152921504606846976.0, "a size from 1 B to 1 EiB"};
static const sane_range bandwidth_range = {STRATA_HW_BANDWIDTH_MIN, STRATA_HW_BANDWIDTH_MAX,
                                           "a bandwidth from 1 kB/s to 10 PB/s"};
static const sane_range time_range = {0, 1, "a time from 0 to 1 s"};
static const sane_range flops_range = {1e3, 1e19, "a flop rate from 1 kFLOP/s to 10 EFLOP/s"};
static const sane_range clock_range = {1e6, STRATA_HW_CLOCK_MAX, "a clock from 1MHz to 100GHz"};

static bool in_range(const hw_load_ctx *ctx, GError **err, const char *group, const char *key, const char *v,
                     double value, const sane_range *r)
{
    return (value >= r->min && value <= r->max) || hw_fail_value(ctx, err, group, key, r->expected, v);
}

bool hw_get_size(const hw_load_ctx *ctx, const char *group, const char *key, uint64_t *out,
                     GError **err)
{
    char *v = hw_get_raw(ctx, group, key);
    bool ok = strata_parse_size(v, out, err);
    if (!ok)
        prefix(ctx, err, group, key);
    else if (*out == 0)
        ok = hw_fail_value(ctx, err, group, key, "a positive size such as 16GiB", v);
    else
        ok = in_range(ctx, err, group, key, v, (double)*out, &capacity_range);
    g_free(v);
    return ok;
}

/* Whether the driver's total belongs to the capacity in force: capacity's value where reported_capacity was last
 * stated (the base file, the derived file or a --set: core/keyfile.h's layers), compared as bytes with the capacity
 * in force (a later layer that restates capacity at the same size keeps the total). */
static bool total_belongs(const hw_load_ctx *ctx, const char *group, uint64_t capacity)
{
    strata_keyfile_layer at = strata_keyfile_layer_of(ctx->k, group, "reported_capacity");
    if (strata_keyfile_layer_of(ctx->k, group, "capacity") <= at)
        return true;
    char *then = strata_keyfile_value_at(ctx->k, group, "capacity", at);
    uint64_t was = 0;
    bool same = then && strata_parse_size(then, &was, NULL) && was == capacity;
    g_free(then);
    return same;
}

/* The driver's total (cudaMemGetInfo) of a device memory: at most the memory itself, so a capacity written in
 * decimal GB where the part's is binary (80GB for an H100's 80 GiB under its 79.11 GiB total) is refused with both
 * values. A total belongs to the capacity it was written beside: where a derived file or a --set restates capacity
 * at another size after reported_capacity was stated (a derived file for another part, a slice's smaller memory),
 * the earlier total is dropped and the pool takes the capacity; restated at the same size (--set
 * memory.hbm.capacity=80GiB on h100.ini) it is kept; `none` drops it explicitly. The value is parsed either way. */
bool hw_get_reported_capacity(const hw_load_ctx *ctx, const char *group, bool device, uint64_t capacity,
                              uint64_t *out, GError **err)
{
    *out = 0;
    if (!strata_keyfile_has_key(ctx->k, group, "reported_capacity"))
        return true;
    if (!device) {
        hw_fail(ctx, err, group, "reported_capacity", "only a memory of kind device has one");
        return false;
    }
    char *rv = hw_get_raw(ctx, group, "reported_capacity");
    bool none = strcmp(rv, "none") == 0;
    bool ok = none || hw_get_size(ctx, group, "reported_capacity", out, err);
    if (ok && (none || !total_belongs(ctx, group, capacity)))
        *out = 0;
    if (ok && *out > capacity) {
        char *cv = hw_get_raw(ctx, group, "capacity"), *cw = strata_keyfile_where(ctx->k, group, "capacity");
        hw_fail(ctx, err, group, "reported_capacity",
                "%s (%" G_GUINT64_FORMAT " B) exceeds capacity = %s (%" G_GUINT64_FORMAT " B, %s): the driver's "
                "total is at most the memory; write capacity in the part's units (80GiB, not 80GB), or "
                "reported_capacity = none", rv, *out, cv, capacity, cw);
        g_free(cv);
        g_free(cw);
        ok = false;
    }
    if (!ok)
        *out = 0;
    g_free(rv);
    return ok;
}

/* A rate key (bandwidth, flop rate): parsed by `parse`, then refused when
 * not positive (`positive` names an example) or outside its sane range. */
static bool get_rate(const hw_load_ctx *ctx, const char *group, const char *key,
                     bool (*parse)(const char *text, double *out, GError **err), const char *positive,
                     const sane_range *range, double *out, GError **err)
{
    char *v = hw_get_raw(ctx, group, key);
    bool ok = parse(v, out, err);
    if (!ok)
        prefix(ctx, err, group, key);
    else if (*out <= 0)
        ok = hw_fail_value(ctx, err, group, key, positive, v);
    else
        ok = in_range(ctx, err, group, key, v, *out, range);
    g_free(v);
    return ok;
}

bool hw_get_clock(const hw_load_ctx *ctx, const char *group, const char *key, double *out, GError **err)
{
    return get_rate(ctx, group, key, strata_parse_frequency, "a positive clock such as 1830MHz", &clock_range, out,
                    err);
}

bool hw_get_bandwidth(const hw_load_ctx *ctx, const char *group, const char *key, double *out,
                          GError **err)
{
    return get_rate(ctx, group, key, strata_parse_bandwidth, "a positive bandwidth such as 16GB/s", &bandwidth_range,
                    out, err);
}

bool hw_get_time(const hw_load_ctx *ctx, const char *group, const char *key, double *out,
                     GError **err)
{
    *out = 0;
    if (!strata_keyfile_has_key(ctx->k, group, key))
        return true;
    char *v = hw_get_raw(ctx, group, key);
    bool ok = strata_parse_time(v, out, err);
    if (!ok)
        prefix(ctx, err, group, key);
    else if (*out > 0 && *out < STRATA_HW_TIME_MIN) /* 0 is none; 1e-300s a slip that acts as none */
        ok = hw_fail_value(ctx, err, group, key, "a time from 0 to 1 s, and if above 0 at least 0.01ns (a cycle "
                           "of a 100GHz clock, the fastest a hardware file takes)", v);
    else
        ok = in_range(ctx, err, group, key, v, *out, &time_range);
    g_free(v);
    return ok;
}

/* Whether the file has a [network NAME] (hw_network.c: the only tier whose
 * receives cross between nodes). */
static bool has_network(const hw_load_ctx *ctx)
{
    gsize n = 0;
    char **groups = strata_keyfile_groups(ctx->k, &n);
    bool found = false;
    for (gsize g = 0; g < n && !found; g++)
        found = g_str_has_prefix(groups[g], "network ");
    g_strfreev(groups);
    return found;
}

bool hw_network_keys_unset(const hw_load_ctx *ctx, const char *group, const char *const *keys, GError **err)
{
    for (const char *const *k = keys; *k; k++)
        if (strata_keyfile_has_key(ctx->k, group, *k) && !has_network(ctx)) {
            hw_fail(ctx, err, group, *k, "expected no such key in a file with no [network NAME]: it is of "
                    "transfers across nodes, and with no network none crosses nodes; remove the key or add the "
                    "[network]");
            return false;
        }
    return true;
}

bool hw_get_gated_time(const hw_load_ctx *ctx, const char *group, const char *key, bool applies, double fallback,
                       const char *refusal, double *out, GError **err)
{
    bool set = strata_keyfile_has_key(ctx->k, group, key);
    double v;
    if (!hw_get_time(ctx, group, key, &v, err))
        return false;
    if (set && !applies) {
        hw_fail(ctx, err, group, key, "%s", refusal);
        return false;
    }
    if (set && !has_network(ctx)) { /* a flush time that nothing would charge was taken and did nothing */
        hw_fail(ctx, err, group, key, "expected no flush time in a file with no [network NAME]: the flush is of a "
                "step received across nodes, and with no network no receive crosses nodes; remove the key or add "
                "the [network]");
        return false;
    }
    *out = !applies ? 0 : set ? v : fallback;
    return true;
}

bool hw_get_flop_rate(const hw_load_ctx *ctx, const char *group, const char *key, double *out,
                          GError **err)
{
    return get_rate(ctx, group, key, strata_parse_flop_rate, "a positive flop rate such as 197TFLOP/s", &flops_range,
                    out, err);
}

/* A whole-number key from lo to hi, def when absent; `expected` names the
 * accepted values in the message (NULL: "a whole number from LO to HI"). */
bool hw_get_count(const hw_load_ctx *ctx, const char *group, const char *key, uint32_t lo, uint32_t hi,
                  uint32_t def, const char *expected, uint32_t *out, GError **err)
{
    *out = def;
    if (!strata_keyfile_has_key(ctx->k, group, key))
        return true;
    char *v = hw_get_raw(ctx, group, key);
    uint64_t x = 0;
    bool ok = strata_parse_u64(v, &x, NULL) && x >= lo && x <= hi;
    if (ok)
        *out = (uint32_t)x;
    else {
        char *range = expected ? NULL : g_strdup_printf("a whole number from %u to %u", lo, hi);
        hw_fail_value(ctx, err, group, key, expected ? expected : range, v);
        g_free(range);
    }
    g_free(v);
    return ok;
}

/* A true/false key (exactly those words): *out set when present, left
 * as the caller's default when absent. */
bool hw_get_flag(const hw_load_ctx *ctx, const char *group, const char *key, bool *out, GError **err)
{
    char *v = hw_get_text(ctx, group, key);
    bool ok = true;
    if (v && strcmp(g_strstrip(v), "true") == 0)
        *out = true;
    else if (v && strcmp(v, "false") == 0)
        *out = false;
    else if (v)
        ok = hw_fail_value(ctx, err, group, key, "true or false", v);
    g_free(v);
    return ok;
}

/* Text value (unescaped), or NULL when absent. */
char *hw_get_text(const hw_load_ctx *ctx, const char *group, const char *key)
{
    return strata_keyfile_string(ctx->k, group, key);
}

static char *memory_names(const strata_hw *hw)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < hw->memories->len; i++)
        g_string_append_printf(s, "%s%s", i ? ", " : "",
                               g_array_index(hw->memories, strata_memory_spec, i).name);
    return g_string_free(s, FALSE);
}

/* Index of the memory named by the value of group/key, or -1 with err set. */
int hw_get_memory_ref(const hw_load_ctx *ctx, const strata_hw *hw, const char *group,
                          const char *key, const char *name, GError **err)
{
    int index = strata_hw_memory_index(hw, name);
    if (index < 0) {
        char *known = memory_names(hw);
        hw_fail(ctx, err, group, key, "unknown memory '%s' (memories: %s)", name, known);
        g_free(known);
    }
    return index;
}
