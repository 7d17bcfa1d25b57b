/*
 * hw_vendor.c: whose device a hardware file describes ([hardware] vendor =
 * amd|nvidia|google), which decides the software platform that runs on it:
 * ROCm on AMD's, CUDA on NVIDIA's (serve's engine rows take their ROCm
 * kernels, or are refused, by it: serve_engine.c).
 *
 * A file without the key is read from its collectives' library: RCCL is
 * ROCm's (ROCm/rccl builds only with HIP for AMD Instinct GPUs), so
 * `collectives = rccl` says AMD; a file of one device has no collectives,
 * and such a file of an AMD device says `vendor = amd` (configs/hw/
 * mi300x.ini, which mi300x-8.ini and mi325x-8.ini take as their base).
 *
 * Invariant: a loaded file whose vendor and collectives' library are both
 * given agrees: RCCL with amd, NCCL with nvidia (NCCL builds only for
 * CUDA, NVIDIA/nccl's README: "NCCL ... for NVIDIA GPUs").
 */
#include "hw/hw_internal.h"
#include "hw/coll_impl.h"

#include <string.h>

static const char *const vendors[] = {"amd", "nvidia", "google", NULL};

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
    const char *needs = lib && strcmp(lib, "rccl") == 0 ? "amd" : lib && strcmp(lib, "nccl") == 0 ? "nvidia" : NULL;
    if (needs && strcmp(needs, hw->vendor) != 0) {
        bool amd = strcmp(needs, "amd") == 0;
        hw_fail(ctx, err, "hardware", "vendor", "expected %s, as the collectives are %s's (%s builds for %s GPUs "
                "only), got '%s'", needs, lib, amd ? "RCCL" : "NCCL", amd ? "AMD" : "NVIDIA", hw->vendor);
        return false;
    }
    return true;
}

const char *strata_hw_vendor(const strata_hw *hw)
{
    if (hw->vendor)
        return hw->vendor;
    return hw->coll_impl && strcmp(hw->coll_impl->name, "rccl") == 0 ? "amd" : NULL;
}

bool strata_hw_rocm(const strata_hw *hw)
{
    const char *v = strata_hw_vendor(hw);
    return v && strcmp(v, "amd") == 0;
}
