/*
 * hw_vendor.c: whose device a hardware file describes ([hardware] vendor =
 * amd|nvidia|google), which decides the software platform that runs on it:
 * ROCm on AMD's, CUDA on NVIDIA's (serve's engine rows take their ROCm
 * kernels, or are refused, by it: serve_engine.c).
 *
 * A file without the key is read from its collectives' library: RCCL is
 * ROCm's (ROCm/rccl builds only with HIP for AMD Instinct GPUs), so
 * `collectives = rccl` says AMD, `collectives = nccl` NVIDIA, and xla's
 * row is XLA's collectives on a TPU slice (coll_impl_xla.c), so
 * `collectives = xla` says Google (the sixteenth hardening pass); a file of one device has no collectives, and
 * such a file says its vendor (configs/hw/mi300x.ini amd, which
 * mi300x-8.ini and mi325x-8.ini take as their base; the tpu-*.ini of one
 * chip google).
 *
 * Invariant: a loaded file whose vendor and collectives' library are both
 * given agrees: RCCL with amd, NCCL with nvidia (NCCL builds only for
 * CUDA, NVIDIA/nccl's README: "NCCL ... for NVIDIA GPUs"), xla with google.
 */
#include "hw/hw_internal.h"
#include "hw/coll_impl.h"

#include <string.h>

static const char *const vendors[] = {"amd", "nvidia", "google", NULL};

/* The vendor a collectives' library builds for: a file without the key is
 * read as that vendor's */
typedef struct library_vendor {
    const char *library, *vendor, *why;
} library_vendor;

static const library_vendor libraries[] = {
    {"rccl", "amd", "RCCL builds for AMD GPUs only"},
    {"nccl", "nvidia", "NCCL builds for NVIDIA GPUs only"},
    {"xla", "google", "XLA's collectives on a TPU slice, coll_impl_xla.c"},
};

static const library_vendor *library_row(const char *lib)
{
    for (size_t i = 0; lib && i < G_N_ELEMENTS(libraries); i++)
        if (strcmp(libraries[i].library, lib) == 0)
            return &libraries[i];
    return NULL;
}

bool hw_vendor_load(const hw_load_ctx *ctx, strata_hw *hw, GError **err)
{
    char *v = hw_get_text(ctx, "hardware", "vendor");
    if (!v)
        return true;
    g_strstrip(v);
    bool ok = false;
    for (const char *const *n = vendors; *n && !ok; n++)
        ok = strcmp(v, *n) == 0;
    if (!ok) {
        hw_fail_value(ctx, err, "hardware", "vendor", "amd, nvidia or google (whose device the file describes)", v);
        g_free(v);
        return false;
    }
    hw->vendor = g_string_chunk_insert_const(hw->strings, v);
    g_free(v);
    const char *lib = hw->coll_impl ? hw->coll_impl->name : NULL;
    const library_vendor *row = library_row(lib);
    if (row && strcmp(row->vendor, hw->vendor) != 0) {
        hw_fail(ctx, err, "hardware", "vendor", "expected %s, as the collectives are %s's (%s), got '%s'",
                row->vendor, lib, row->why, hw->vendor);
        return false;
    }
    return true;
}

const char *strata_hw_vendor(const strata_hw *hw)
{
    if (hw->vendor)
        return hw->vendor;
    const library_vendor *row = library_row(hw->coll_impl ? hw->coll_impl->name : NULL);
    return row ? row->vendor : NULL;
}

bool strata_hw_rocm(const strata_hw *hw)
{
    const char *v = strata_hw_vendor(hw);
    return v && strcmp(v, "amd") == 0;
}
