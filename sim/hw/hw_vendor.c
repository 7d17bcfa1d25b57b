/*
 * hw_vendor.c: whose device a hardware file describes ([hardware] vendor =
 * amd|nvidia|google), which decides the software platform that runs on it:
 * ROCm on AMD's, CUDA on NVIDIA's (serve's engine rows take their ROCm
 * kernels, or are refused, by it: serve_engine_apply.c).
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
 * [hardware] device_name, the part as its driver names it (torch.cuda.get_device_name), is read here too: the
 * name a serving engine's tuned kernel configs are chosen by (serve_triton_moe.c). The name belongs to the part
 * whose device memory it was written beside: where a derived file (`base =`) or a --set restates a device memory's
 * capacity at another size after device_name was stated, the file describes another part and the inherited name is
 * dropped (as hw_values.c drops reported_capacity); restated at the same size, or with the name restated too, it
 * is kept.
 *
 * Invariant: a loaded file whose vendor and collectives' library are both
 * given agrees: RCCL with amd, NCCL with nvidia (NCCL builds only for
 * CUDA, NVIDIA/nccl's README: "NCCL ... for NVIDIA GPUs"), xla with google;
 * one whose compute_capability and NCCL row (nccl_arch) are both given
 * names one part (NCCL's tuning row of that capability).
 */
#include "hw/hw_internal.h"
#include "hw/coll_impl.h"
#include "core/keyfile.h"
#include "core/units.h"

#include <stdlib.h>
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

/* Whether every device memory's capacity in force is the one in force where key (device_name, compute_capability)
 * was last stated (core/keyfile.h's layers: the file, a derived file, an override), compared as bytes: a part's
 * keys are read as another part's when its memory changes size (an H100 NVL written as h100.ini with 94 GiB loses
 * 9.0 and falls back to its NCCL row; test_hw_base pins it). */
static bool part_key_belongs(const hw_load_ctx *ctx, const strata_hw *hw, const char *key)
{
    strata_keyfile_layer at = strata_keyfile_layer_of(ctx->k, "hardware", key);
    bool same = true;
    for (guint i = 0; same && i < hw->tmems->len; i++) {
        const strata_memory_spec *m = &g_array_index(hw->tmems, strata_memory_spec, i); /* the groups */
        if (m->kind != STRATA_MEM_DEVICE)
            continue;
        char *group = g_strdup_printf("memory %s", m->name);
        if (strata_keyfile_layer_of(ctx->k, group, "capacity") > at) {
            char *then = strata_keyfile_value_at(ctx->k, group, "capacity", at);
            uint64_t was = 0;
            same = then && strata_parse_size(then, &was, NULL) && was == m->capacity;
            g_free(then);
        }
        g_free(group);
    }
    return same;
}

/* [hardware] device_name: text of 1 to 95 printable ASCII characters without blanks at its ends (NVML's
 * NVML_DEVICE_NAME_V2_BUFFER_SIZE, 96 bytes with its NUL, bounds nvmlDeviceGetName's name; cudaDeviceProp's name
 * is char[256]); a control character or a name past the bound is no driver's. */
static bool device_name_load(const hw_load_ctx *ctx, strata_hw *hw, GError **err)
{
    char *v = hw_get_text(ctx, "hardware", "device_name");
    if (!v)
        return true;
    g_strstrip(v);
    size_t n = strlen(v);
    bool ok = n >= 1 && n <= 95;
    for (size_t i = 0; ok && i < n; i++)
        ok = v[i] >= 0x20 && v[i] < 0x7f;
    if (ok && part_key_belongs(ctx, hw, "device_name"))
        hw->device_name = g_string_chunk_insert_const(hw->strings, v);
    else if (!ok)
        hw_fail_value(ctx, err, "hardware", "device_name", "the part's name as its driver gives it, 1 to 95 "
                      "printable ASCII characters (torch.cuda.get_device_name: NVIDIA H200)", v);
    g_free(v);
    return ok;
}

/* [hardware] compute_capability: CUDA's MAJOR.MINOR (1-99 . 0-9, NVIDIA's "CUDA GPUs - Compute Capability" list:
 * 7.0 V100, 8.0 A100, 9.0 H100 and H200, 10.0 B200), kept as MAJOR x 10 + MINOR; like device_name it belongs to
 * the part whose device memory it was written beside. */
static bool compute_capability_load(const hw_load_ctx *ctx, strata_hw *hw, GError **err)
{
    char *v = hw_get_text(ctx, "hardware", "compute_capability");
    if (!v)
        return true;
    g_strstrip(v);
    size_t n = strlen(v), dot = n >= 3 ? n - 2 : 0; /* D.D or DD.D, the first digit not 0 */
    bool ok = (n == 3 || n == 4) && v[0] >= '1' && v[0] <= '9' && strspn(v, "0123456789") == dot && v[dot] == '.' &&
              v[n - 1] >= '0' && v[n - 1] <= '9';
    unsigned major = ok ? (unsigned)strtoul(v, NULL, 10) : 0, minor = ok ? (unsigned)(v[n - 1] - '0') : 0;
    if (ok && part_key_belongs(ctx, hw, "compute_capability"))
        hw->compute_capability = major * 10 + minor;
    else if (!ok)
        hw_fail_value(ctx, err, "hardware", "compute_capability", "CUDA's MAJOR.MINOR, 1.0 to 99.9 (9.0 for an H100)",
                      v);
    g_free(v);
    return ok;
}

/* NCCL's tuning row of a compute capability (MAJOR x 10 + MINOR): NCCL picks it by its communicator's lowest one,
 * `compCapIndex = minCompCap >= 100 ? BLACKWELL : (minCompCap >= 90 ? HOPPER : minCompCap >= 80 ? AMPERE :
 * VOLTA)` (NVIDIA/nccl v2.27.3-1 src/graph/tuning.cc, ncclTopoTuneModel; the Blackwell row from v2.25.1-1, l. 215:
 * v2.23.4-1 l. 146 and v2.24.3-1 l. 210 put every capability from 9.0 on the Hopper row, which strata's one older
 * table with Hopper rows, 2.19, never meets: it refuses Blackwell). */
static strata_nccl_arch nccl_arch_of(uint32_t cc)
{
    return cc >= 100 ? STRATA_NCCL_BLACKWELL : cc >= 90 ? STRATA_NCCL_HOPPER : cc >= 80 ? STRATA_NCCL_AMPERE
                                                                                       : STRATA_NCCL_VOLTA;
}

/* A file whose compute_capability and nccl_arch (the NCCL row's) name two parts describes neither: the row
 * NCCL would tune by is the capability's (the twenty-third hardening pass). */
static bool nccl_arch_matches(const hw_load_ctx *ctx, const strata_hw *hw, GError **err)
{
    static const char *const ranges[] = {"below 8.0", "8.0 to 8.9", "9.0 to 9.9", "10.0 or above"};
    strata_nccl_arch arch;
    uint32_t cc = hw->compute_capability;
    if (!cc || !strata_hw_nccl_arch(hw, &arch) || nccl_arch_of(cc) == arch)
        return true;
    hw_fail(ctx, err, "hardware", "compute_capability", "expected %s, the compute capability of the NCCL row's "
            "nccl_arch = %s (NCCL's tuning.cc picks the row by it), got %u.%u (nccl_arch %s)", ranges[arch],
            strata_nccl_arch_name(arch), cc / 10, cc % 10, strata_nccl_arch_name(nccl_arch_of(cc)));
    return false;
}

bool hw_vendor_load(const hw_load_ctx *ctx, strata_hw *hw, GError **err)
{
    if (!device_name_load(ctx, hw, err) || !compute_capability_load(ctx, hw, err) ||
        !nccl_arch_matches(ctx, hw, err))
        return false;
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

const char *strata_hw_device_name(const strata_hw *hw) { return hw->device_name; }
uint32_t strata_hw_compute_capability(const strata_hw *hw) { return hw->compute_capability; }

bool strata_hw_rocm(const strata_hw *hw)
{
    const char *v = strata_hw_vendor(hw);
    return v && strcmp(v, "amd") == 0;
}
