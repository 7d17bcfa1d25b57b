/*
 * hw_slice.c: slicing a shipped node or pod by its device count alone
 * (contract in hw_slice.h).
 *
 * The shapes are Cloud TPU's:
 *  - 2D tori (v5e, v6e): cloud.google.com/tpu/docs/v5e, "Configurations":
 *    "The following 2D slice shapes are supported for v5e": 1x1 (1 chip),
 *    2x2 (4), 2x4 (8), 4x4 (16), 4x8 (32), 8x8 (64), 8x16 (128), 16x16 (256).
 *    v6e's page (cloud.google.com/tpu/docs/v6e) lists the same shapes.
 *  - 3D tori (v4, v5p): cloud.google.com/tpu/docs/v5p, "Configurations"
 *    (the most common single-slice shapes): 2x2x1 (4), 2x2x2 (8), 2x4x4 (32),
 *    4x4x4 (64), 4x4x8 (128), 4x8x8 (256), 8x8x8 (512), 8x8x16 (1024),
 *    8x16x16 (2048), 16x16x16 (4096), 16x16x24 (6144); and 2x2x4 (16), the
 *    example of cloud.google.com/tpu/docs/types-topologies ("--topology=2x2x4",
 *    16 chips). Where several shapes have one chip count the docs' default is
 *    the most cube-like ("the default topology ... is the one most similar to
 *    a cube", types-topologies), which is the one listed.
 *
 * Invariants: each table lists one shape per chip count, in increasing
 * count; a shape's sizes multiply to its count.
 */
#include <string.h>
#include "core/error.h"
#include "core/units.h"
#include "hw/hw_slice.h"

typedef struct slice_shape {
    uint64_t chips;
    const char *dims;
} slice_shape;

static const slice_shape shapes_2d[] = {
    {1, "1x1"}, {4, "2x2"}, {8, "2x4"}, {16, "4x4"}, {32, "4x8"}, {64, "8x8"}, {128, "8x16"}, {256, "16x16"},
    {0, NULL},
};

static const slice_shape shapes_3d[] = {
    {4, "2x2x1"},     {8, "2x2x2"},     {16, "2x2x4"},      {32, "2x4x4"},       {64, "4x4x4"},
    {128, "4x4x8"},   {256, "4x8x8"},   {512, "8x8x8"},     {1024, "8x8x16"},    {2048, "8x16x16"},
    {4096, "16x16x16"}, {6144, "16x16x24"}, {0, NULL},
};

static const slice_shape *shapes_for(uint32_t n_dims) { return n_dims == 2 ? shapes_2d : shapes_3d; }

const char *hw_slice_shape(uint32_t n_dims, uint64_t chips)
{
    for (const slice_shape *s = shapes_for(n_dims); s->dims; s++)
        if (s->chips == chips)
            return s->dims;
    return NULL;
}

char *hw_slice_shapes(uint32_t n_dims)
{
    GString *out = g_string_new(NULL);
    for (const slice_shape *s = shapes_for(n_dims); s->dims; s++)
        g_string_append_printf(out, "%s%s (%" G_GUINT64_FORMAT ")", out->len ? ", " : "", s->dims, s->chips);
    return g_string_free(out, FALSE);
}

/* The key's value as a whole number; false when absent or not one (the
 * loader reports a malformed value itself, later). */
static bool read_count(const hw_load_ctx *ctx, const char *group, const char *key, uint64_t *out)
{
    char *v = strata_keyfile_value(ctx->k, group, key);
    bool ok = v && strata_parse_u64(v, out, NULL);
    g_free(v);
    return ok;
}

/* Rule 1: below a node's devices_per_host, one host of N devices. */
static bool slice_host(const hw_load_ctx *ctx, uint64_t devices, const char *note, GError **err)
{
    uint64_t per_host = 0;
    if (strata_keyfile_overridden(ctx->k, "hardware", "devices_per_host") ||
        !read_count(ctx, "hardware", "devices_per_host", &per_host) || devices >= per_host)
        return true;
    char *value = g_strdup_printf("%" G_GUINT64_FORMAT, devices);
    bool ok = strata_keyfile_override(ctx->k, "hardware", "devices_per_host", value, note, err);
    g_free(value);
    return ok;
}

/* The number of sizes in a dims value ("8x8" -> 2). */
static uint32_t count_dims(const char *dims)
{
    uint32_t n = 1;
    for (const char *c = dims; *c; c++)
        n += *c == 'x';
    return n;
}

/* The product of a dims value, 0 when it is not one. */
static uint64_t dims_product(const char *dims)
{
    char **parts = g_strsplit(dims, "x", -1);
    uint64_t product = 1;
    for (char **p = parts; *p && product; p++) {
        uint64_t d = 0;
        product = strata_parse_u64(*p, &d, NULL) && d > 0 && d <= UINT32_MAX ? product * d : 0;
    }
    g_strfreev(parts);
    return product;
}

/* Rule 2: a device-level torus takes the TPU slice shape of N chips. */
static bool slice_torus(const hw_load_ctx *ctx, const strata_hw *hw, const char *group, uint64_t devices,
                        const char *note, GError **err)
{
    char *topo = hw_get_text(ctx, group, "topology");
    uint32_t n_dims = 0;
    if (topo && strcmp(g_strstrip(topo), "torus2d") == 0)
        n_dims = 2;
    else if (topo && strcmp(topo, "torus3d") == 0)
        n_dims = 3;
    g_free(topo);
    if (n_dims == 0 || strata_keyfile_overridden(ctx->k, group, "dims") || !strata_keyfile_has_key(ctx->k, group, "dims"))
        return true; /* not a torus, or dims chosen by the user (or missing: the loader says so) */
    char *mem = hw_get_text(ctx, group, "memory");
    int m = mem ? hw_get_memory_ref(ctx, hw, group, "memory", g_strstrip(mem), err) : (int)hw->default_memory;
    g_free(mem);
    if (m < 0)
        return false;
    if (!hw_per_device(g_array_index(hw->tmems, strata_memory_spec, m).kind))
        return true; /* joins hosts: its dims count hosts, checked by the loader */
    uint64_t domain = 0; /* a torus of several domains: its dims are one domain's */
    if (read_count(ctx, group, "domain", &domain) && domain > 0 && domain < devices)
        devices = domain;
    char *dims = strata_keyfile_value(ctx->k, group, "dims");
    bool keep = count_dims(dims) == n_dims && dims_product(dims) == devices;
    g_free(dims);
    if (keep)
        return true;
    const char *shape = hw_slice_shape(n_dims, devices);
    if (shape)
        return strata_keyfile_override(ctx->k, group, "dims", shape, note, err);
    char *valid = hw_slice_shapes(n_dims);
    const char *name = group + strlen("interconnect ");
    hw_fail(ctx, err, group, "dims", "no TPU slice of %s has %" G_GUINT64_FORMAT " chips (Cloud TPU %s slice "
            "shapes, chips in brackets: %s); expected one of those device counts, or the shape with "
            "--set interconnect.%s.dims=...", n_dims == 2 ? "a 2D torus" : "a 3D torus", devices,
            n_dims == 2 ? "v5e" : "v5p", valid, name);
    g_free(valid);
    return false;
}

bool hw_slice_apply(const hw_load_ctx *ctx, const strata_hw *hw, char **groups, gsize n_groups, GError **err)
{
    uint64_t devices = 0;
    if (!strata_keyfile_overridden(ctx->k, "hardware", "devices") ||
        !read_count(ctx, "hardware", "devices", &devices) || devices == 0)
        return true;
    char *note = g_strdup_printf("hardware.devices=%" G_GUINT64_FORMAT " (a slice)", devices);
    bool ok = slice_host(ctx, devices, note, err);
    for (gsize g = 0; ok && g < n_groups; g++)
        if (g_str_has_prefix(groups[g], "interconnect "))
            ok = slice_torus(ctx, hw, groups[g], devices, note, err);
    g_free(note);
    return ok;
}
