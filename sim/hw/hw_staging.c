/*
 * hw_staging.c: the loader's part of a staging link (hw/staging.h): the keys
 * of a [link] that is the driver's CPU copy between pageable and pinned host
 * memory. hw.c's load_link calls it once the link's ends, bandwidth and
 * latency are read.
 *
 * Invariants: staging_buffer, when given, is at least a page and the link
 * joins a pageable and a pinned host memory; staging_overlap, cpu_copy_in
 * and cpu_copy_out need staging_buffer in the same group; a copy rate,
 * when given, is a positive bandwidth at most the link's (absent: 0, the
 * link's bandwidth).
 */
#include "hw/hw.h"
#include "hw/hw_internal.h"
#include "hw/staging.h"
#include "core/keyfile.h"
#include "core/units.h"

#include <inttypes.h>

/* A key that only a staging link takes: false with err when it is given
 * without staging_buffer. */
static bool needs_buffer(const hw_load_ctx *ctx, const strata_link_spec *l, const char *group, const char *key,
                         GError **err)
{
    if (!strata_keyfile_has_key(ctx->k, group, key) || l->staging_buffer)
        return true;
    hw_fail(ctx, err, group, key, "%s needs staging_buffer = in the same link", key);
    return false;
}

/* cpu_copy_in and cpu_copy_out: the CPU copy's rate per direction. */
static bool load_rates(const hw_load_ctx *ctx, strata_link_spec *l, const char *group, GError **err)
{
    static const char *const keys[] = {"cpu_copy_in", "cpu_copy_out"};
    double *rates[] = {&l->cpu_copy_in, &l->cpu_copy_out};
    for (int i = 0; i < 2; i++) {
        *rates[i] = 0;
        if (!needs_buffer(ctx, l, group, keys[i], err))
            return false;
        if (strata_keyfile_has_key(ctx->k, group, keys[i]) && !hw_get_bandwidth(ctx, group, keys[i], rates[i], err))
            return false;
        /* one copy runs within what all of them share: a faster one was taken and ran at `bandwidth` */
        if (*rates[i] > l->bandwidth) {
            char *rate, *shared;
            strata_format_bandwidth_pair(*rates[i], l->bandwidth, &rate, &shared);
            hw_fail(ctx, err, group, keys[i], "expected at most the link's bandwidth %s (what the host's CPU "
                    "copies share; %s is one copy's rate), got %s", shared, keys[i], rate);
            g_free(rate);
            g_free(shared);
            return false;
        }
    }
    return true;
}

bool hw_staging_load(const hw_load_ctx *ctx, const strata_hw *hw, const char *group, strata_link_spec *l,
                     GError **err)
{
    if (strata_keyfile_has_key(ctx->k, group, "staging_buffer") &&
        !hw_get_size(ctx, group, "staging_buffer", &l->staging_buffer, err))
        return false;
    const strata_memory_spec *ma = &g_array_index(hw->memories, strata_memory_spec, l->a),
                             *mb = &g_array_index(hw->memories, strata_memory_spec, l->b);
    if (strata_keyfile_has_key(ctx->k, group, "staging_buffer") && l->staging_buffer < STRATA_STAGING_MIN_BUFFER) {
        char *why = g_strdup_printf("at least %u bytes (a page: the driver's pinned staging buffer), got %" PRIu64
                                    " (a copy would make one chunk per %" PRIu64 " bytes)",
                                    STRATA_STAGING_MIN_BUFFER, l->staging_buffer,
                                    l->staging_buffer / 2 ? l->staging_buffer / 2 : 1);
        hw_fail(ctx, err, group, "staging_buffer", "expected %s", why);
        g_free(why);
        return false;
    }
    if (l->staging_buffer && !(ma->kind == STRATA_MEM_HOST && mb->kind == STRATA_MEM_HOST && ma->pageable != mb->pageable)) {
        hw_fail(ctx, err, group, "staging_buffer", "a staging link joins a pageable and a pinned host memory");
        return false;
    }
    if (strata_keyfile_has_key(ctx->k, group, "staging_overlap")) {
        char *v = hw_get_raw(ctx, group, "staging_overlap");
        bool overlap = true;
        bool good = strata_parse_bool(v, &overlap);
        if (!good)
            hw_fail_value(ctx, err, group, "staging_overlap", "true or false", v);
        else
            good = needs_buffer(ctx, l, group, "staging_overlap", err);
        l->staging_serial = good && !overlap;
        g_free(v);
        if (!good)
            return false;
    }
    return load_rates(ctx, l, group, err);
}
