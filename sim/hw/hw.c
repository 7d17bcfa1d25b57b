/*
 * hw.c: the hardware model, loaded from a GLib key file (contract in hw.h,
 * format documented in docs/hardware.md).
 *
 * Loading runs in four steps:
 *   1. read the text with the key-file reader (core/keyfile.h): it knows the
 *      line of every group and key and rejects malformed lines, duplicate
 *      groups and keys, NUL bytes and overlong lines with FILE:LINE;
 *   2. apply the overrides ("memory.hbm.capacity=16GiB"), each at most once;
 *   3. validate every group and key against the tables below and build the
 *      specs (memories first, since links and compute units name them);
 *      numbers must lie in the sane ranges of the tables (docs/hardware.md);
 *   4. precompute the route between every pair of memories (hw_route.c).
 *
 * Invariants (beyond those of hw.h):
 *  1. every string a spec points at lives in hw->strings until strata_hw_free;
 *  2. a failed load frees everything and returns NULL with err set; nothing
 *     is printed.
 */
#include "hw/hw.h"
#include "hw/hw_internal.h"
#include "hw/dram.h"
#include "hw/pcie.h"
#include "hw/staging.h"
#include "core/error.h"
#include "core/keyfile.h"
#include "core/units.h"

#include <assert.h>
#include <inttypes.h>
#include <string.h>

/* ---- the keys each kind of group accepts ---- */

/* Declared keys (core/keyfile.h); a description NULL is built (below). */
static const strata_key_def hardware_keys[] = {
    {"name", true, "name of the machine (text)"},
    {"source", false, "where the figures come from (text)"},
    {"base", false, "another hardware file (relative to this one) that this file changes: its groups and keys, "
                    "with this file's keys replacing theirs"},
    {"default_memory", false, "memory of allocs that name none (default: the first of kind device)"},
    {"sched", false, "xla or cuda: the copy policies' execution model when theirs is auto (default cuda)"},
    {"flow_sharing", false, "equal (default: transfers crossing a link share it equally, as NVLink, InfiniBand and "
                            "TPU ICI arbitrate) or latency (SimGrid CM02's TCP model: each transfer's share in "
                            "inverse proportion to its route's latency)"},
    {"devices", false, "number of devices, 1 to 65536 (default 1): the file describes one, instantiated as NAME@D"},
    {"vendor", false, "amd, nvidia or google: whose device it is (default: the collectives' library's, rccl amd, "
               "nccl nvidia, xla google)"},
    {"devices_per_host", false, "devices sharing one host's memories, a divisor of devices (default: devices)"},
    {"device_name", false, "the part as its driver names it (torch.cuda.get_device_name: NVIDIA H200), which engines "
                           "match their tuned kernel configs against (default: not said)"},
    {"compute_capability", false, "CUDA's MAJOR.MINOR of the part (9.0 for an H100), which sizes PyTorch's cuBLAS "
                                  "workspace and the CUDA context's stacks (default: not said)"},
    {NULL, false, NULL}};
static const strata_key_def memory_keys[] = {
    {"kind", true, NULL}, /* the names of memory_kind_names (below) */
    {"capacity", true, "size, 1 B to 1 EiB"},
    {"reported_capacity", false, "size, at most capacity, or none (kind device): the driver's total (cudaMemGetInfo)"},
    {"bandwidth", true, "the memory's own port, 1 kB/s to 10 PB/s, shared by all traffic"},
    {"latency", false, "access latency seen by compute operands, 0 to 1 s (default 0)"},
    {"allocator", false, "allocator NAME (default best-fit); its parameters as allocator.KEY = VALUE"},
    {"alignment", false, "power of two, 1 B to 1 GiB (default 256)"},
    {"pageable", false, "true or false (host only): pageable host memory"},
    {"dram", false, NULL},
    {"bus_width", false, "data pins of the DRAM interface, all stacks together, 64 to 65536 (with dram)"},
    {"source", false, "where the figures come from (text)"},
    {NULL, false, NULL}};
static const strata_key_def link_keys[] = {
    {"between", true, "the two memories it joins: MEM MEM"},
    {"bandwidth", false, "each direction, 1 kB/s to 10 PB/s (required unless generation is set; overrides it)"},
    {"latency", false, "per transfer, 0 to 1 s (default 0): the setup a copy pays (copy-engine launch, DMA descriptor)"},
    {"generation", false, "a PCIe link: 3, 4, 5 or 6; its bandwidth follows from the protocol (hw/pcie.h)"},
    {"lanes", false, "PCIe lanes: 1, 2, 4, 8, 16 or 32 (with generation)"},
    {"max_payload", false, "PCIe Max Payload Size: 128B to 4096B, a power of two (with generation)"},
    {"max_read_request", false, "PCIe Max Read Request Size: 128B to 4096B, a power of two (with generation)"},
    {"staging_buffer", false, "a CPU copy between pageable and pinned host memory through the driver's pinned "
                              "buffer of this size, pipelined with the DMA of the next link (hw/staging.h)"},
    {"staging_overlap", false, "true (default: the CPU fills one half of the staging buffer while the DMA drains "
                               "the other) or false (the whole buffer, the DMA and the CPU copy in turn)"},
    {"cpu_copy_in", false, "with staging_buffer: the CPU copy's rate from pageable memory into the staging buffer "
                           "(a copy toward the device), 1 kB/s to the link's bandwidth (default: bandwidth)"},
    {"cpu_copy_out", false, "with staging_buffer: the CPU copy's rate out of the staging buffer into pageable "
                            "memory (a copy from the device), 1 kB/s to the link's bandwidth (default: bandwidth)"},
    {"read_completion", false, "PCIe completion size of a device read: 64B to max_payload (default max_payload)"},
    {"duplex", false, "full (each direction its own bandwidth, default) or half"},
    {"copy_engines", false, "DMA engines per direction, 1 to 64: copies crossing the link one way run first come, "
                            "first served, that many at a time (default: none, every copy shares the bandwidth)"},
    {"source", false, "where the figures come from (text)"},
    {NULL, false, NULL}};
static const strata_key_def compute_keys[] = {
    {"flops", true, "peak rate, 1 kFLOP/s to 10 EFLOP/s; flops.DTYPE = per element type"},
    {"operands", false, "memory the unit reads operands from (default: the default memory)"},
    {"overhead", false, "fixed time added to every compute op, 0 to 1 s (default 0)"},
    {"launch", false, "fixed time paid once, by the first op on the unit (starting a kernel), 0 to 1 s (default 0)"},
    {"tile", false, "side of the unit's systolic array: a matmul's K and N are padded to it (default 0: none)"},
    /* the kernel models' opt-in; after it, in help and among the known, their keys (hw_compute.c) */
    {"matrix", false, NULL},
    {"source", false, "where the figures come from (text)"},
    {NULL, false, NULL}};

static const strata_key_def interconnect_keys[] = {
    {"memory", false, "the per-device memory it joins (default: the default memory), or a host memory for a network between hosts"},
    {"topology", true, "ring, torus2d, torus3d, switch or full"},
    {"dims", false, "torus sizes such as 4x4 or 4x4x4, multiplying to the devices (or hosts)"},
    {"bandwidth", true, "per link and direction, 1 kB/s to 10 PB/s"},
    {"latency", false, "per link crossed, 0 to 1 s (default 0)"},
    {"links_per_chip", false, "parallel links between neighbours, 1 to 64, multiplying the bandwidth (default 1)"},
    {"wraparound", false, "torus2d/torus3d: true (default), false, or one per dimension (false,true): the links joining each dimension's ends"},
    {"duplex", false, "full (default) or half"},
    {"domain", false, "devices per scale-up domain, dividing devices (default: all): it joins each domain's"},
    /* the implementations' names (hw/coll_impl.h's table); after it, in help and
     * among the known keys, every implementation's own keys (its parameter block) */
    {"collectives", false, NULL},
    {"source", false, "where the figures come from (text)"},
    {NULL, false, NULL}};

typedef enum { GROUP_HARDWARE, GROUP_MEMORY, GROUP_LINK, GROUP_COMPUTE, GROUP_INTERCONNECT, GROUP_NETWORK } group_kind;

typedef struct group_def {
    const char *word;      /* "memory" in "[memory NAME]" */
    group_kind kind;
    bool named;            /* takes a NAME */
    const strata_key_def *keys;
    const char *prefixed;  /* "allocator." / "flops.": keys with this prefix are accepted */
} group_def;

static const group_def group_defs[] = {
    {"hardware", GROUP_HARDWARE, false, hardware_keys, NULL},
    {"memory", GROUP_MEMORY, true, memory_keys, "allocator."},
    {"link", GROUP_LINK, true, link_keys, NULL},
    {"compute", GROUP_COMPUTE, true, compute_keys, "flops."},
    {"interconnect", GROUP_INTERCONNECT, true, interconnect_keys, NULL},
    {"network", GROUP_NETWORK, true, hw_network_keys, NULL},
    {NULL, 0, false, NULL, NULL},
};

/* The memory kinds by name (hw.h's strata_mem_kind; docs/extending.md, "A
 * memory kind"). */
static const char *const memory_kind_names[] = {
    [STRATA_MEM_DEVICE] = "device", [STRATA_MEM_HOST] = "host", [STRATA_MEM_ONCHIP] = "onchip"};

/* "device, host or onchip": the kinds, for help and errors (g_free). */
static char *memory_kind_choices(void)
{
    GString *s = g_string_new(NULL);
    size_t n = G_N_ELEMENTS(memory_kind_names);
    for (size_t i = 0; i < n; i++)
        g_string_append_printf(s, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ", memory_kind_names[i]);
    return g_string_free(s, FALSE);
}

/* [memory] kind and dram, [interconnect] collectives and [compute] matrix
 * (description NULL): help built from the table each names, so that it
 * cannot drift from it (g_free); after collectives come the collective
 * implementations' keys (their parameter blocks, hw/coll_impl.h), after
 * matrix the kernel models' (hw_compute.c), in help and among the known. */
static char *built_description(const strata_key_def *k)
{
    if (k->description)
        return NULL;
    if (strcmp(k->name, "kind") == 0)
        return memory_kind_choices();
    if (strcmp(k->name, "matrix") == 0)
        return hw_kernel_describe();
    return strcmp(k->name, "dram") == 0 ? strata_dram_describe() : hw_coll_impl_describe();
}
static void keys_after(const strata_key_def *k, GPtrArray *known, GString *help, const char *indent)
{
    if (!k->description && strcmp(k->name, "collectives") == 0)
        hw_coll_impl_keys(known, help, indent);
    else if (!k->description && strcmp(k->name, "matrix") == 0)
        hw_kernel_keys(known, help, indent);
}

char *strata_hw_describe(const char *indent)
{
    GString *s = g_string_new(NULL);
    for (const group_def *d = group_defs; d->word; d++) {
        g_string_append_printf(s, "%s[%s%s]\n", indent, d->word, d->named ? " NAME" : "");
        for (const strata_key_def *k = d->keys; k && k->name; k++) {
            char *built = built_description(k);
            g_string_append_printf(s, "%s  %s%s: %s\n", indent, k->name, k->required ? " (required)" : "",
                                   built ? built : k->description);
            g_free(built);
            keys_after(k, NULL, s, indent);
        }
        if (d->prefixed)
            g_string_append_printf(s, "%s  %sKEY: %s\n", indent, d->prefixed,
                                   d->kind == GROUP_MEMORY ? "a parameter of the allocator"
                                                           : "peak rate for one dtype (bf16, f32, int8, ...)");
        if (!d->keys)
            g_string_append_printf(s, "%s  KEY: a parameter of the workload or policy NAME\n", indent);
    }
    return g_string_free(s, FALSE);
}

const char *strata_mem_kind_name(strata_mem_kind kind)
{
    return (unsigned)kind < G_N_ELEMENTS(memory_kind_names) ? memory_kind_names[kind] : "?";
}

/* ---- overrides ---- */

static bool apply_override(hw_load_ctx *ctx, const char *text, GError **err)
{
    const char *eq = strchr(text, '=');
    char *lhs = eq ? g_strstrip(g_strndup(text, (gsize)(eq - text))) : NULL;
    char **parts = lhs ? g_strsplit(lhs, ".", 3) : NULL;
    char *group = NULL;
    const char *key = NULL;
    bool ok = false;

    if (parts && parts[0] && parts[1]) {
        if (strcmp(parts[0], "hardware") == 0) {
            group = g_strdup("hardware");
            key = lhs + strlen("hardware.");
        } else if (parts[2] && *parts[1] && *parts[2]) {
            group = g_strdup_printf("%s %s", parts[0], parts[1]);
            key = parts[2];
        }
    }
    char *q = strata_quote(text);
    if (group == NULL || key == NULL || *key == '\0') {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "override '%s': expected KIND.NAME.KEY=VALUE such as memory.hbm.capacity=16GiB "
                    "or link.pcie.bandwidth=8GB/s",
                    q);
    } else if (!strata_keyfile_has_group(ctx->k, group)) {
        gsize n = 0;
        char **groups = strata_keyfile_groups(ctx->k, &n);
        GString *known = g_string_new(NULL);
        for (gsize i = 0; i < n; i++)
            g_string_append_printf(known, "%s[%s]", i ? ", " : "", groups[i]);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "override '%s': %s has no group [%s] (groups: %s)", q,
                    strata_keyfile_given_origin(ctx->k), group, known->str);
        g_string_free(known, TRUE);
        g_strfreev(groups);
    } else {
        char *value = g_strstrip(g_strdup(eq + 1));
        ok = strata_keyfile_override(ctx->k, group, key, value, text, err);
        g_free(value);
    }
    g_free(q);
    g_free(group);
    g_strfreev(parts);
    g_free(lhs);
    return ok;
}

/* Every key of the group is declared (or has the accepted prefix) and the
 * required ones are there: the group's own keys and, after collectives,
 * the collective implementations' (each required only by its own load,
 * when the row is chosen). */
static bool check_keys(const hw_load_ctx *ctx, const group_def *def, const char *group, GError **err)
{
    GArray *declared = g_array_new(TRUE, TRUE, sizeof(strata_key_def));
    for (const strata_key_def *kd = def->keys; kd->name; kd++) {
        g_array_append_val(declared, *kd);
        GPtrArray *more = g_ptr_array_new();
        keys_after(kd, more, NULL, NULL);
        for (guint i = 0; i < more->len; i++) {
            strata_key_def key = {g_ptr_array_index(more, i), false, NULL};
            g_array_append_val(declared, key);
        }
        g_ptr_array_free(more, TRUE);
    }
    bool ok = strata_keyfile_check_declared(ctx->k, group, (const strata_key_def *)(void *)declared->data,
                                            def->prefixed, err);
    g_array_free(declared, TRUE);
    return ok;
}

/* The allocator spec "NAME:k=v,..." from allocator and allocator.* (file
 * order), interned in hw->strings, after the load's allocator check (the
 * allocator exists and takes these parameters; an error names the key's
 * line) when the caller gave one; NULL with err. */
static const char *allocator_spec(const hw_load_ctx *ctx, strata_hw *hw, const char *group,
                                  const strata_memory_spec *m, GError **err)
{
    char *alloc_name = hw_get_text(ctx, group, "allocator");
    if (alloc_name && (*alloc_name == '\0' || strpbrk(alloc_name, ":, \t"))) {
        hw_fail_value(ctx, err, group, "allocator",
                   "an allocator name such as best-fit (its parameters go in allocator.KEY = VALUE lines)",
                   alloc_name);
        g_free(alloc_name);
        return NULL;
    }
    GString *spec = g_string_new(alloc_name ? alloc_name : STRATA_HW_DEFAULT_ALLOCATOR);
    g_free(alloc_name);
    char **keys = strata_keyfile_keys(ctx->k, group, NULL);
    guint n_params = 0;
    bool ok = true;
    for (guint k = 0; ok && keys && keys[k]; k++) {
        if (!g_str_has_prefix(keys[k], "allocator."))
            continue;
        char *v = hw_get_raw(ctx, group, keys[k]);
        if (strpbrk(v, ",") || *v == '\0')
            ok = hw_fail_value(ctx, err, group, keys[k], "a single value without commas", v);
        g_string_append_printf(spec, "%s%s=%s", n_params++ ? "," : ":", keys[k] + strlen("allocator."), v);
        g_free(v);
    }
    GError *inner = NULL;
    if (ok && ctx->check_allocator && !ctx->check_allocator(spec->str, m->capacity, m->alignment, &inner)) {
        /* name the allocator.KEY line the message is about, else the allocator line */
        const char *key = "allocator";
        for (guint k = 0; keys && keys[k]; k++) {
            char *quoted = g_strdup_printf("'%s'", keys[k] + strlen("allocator."));
            if (g_str_has_prefix(keys[k], "allocator.") && strstr(inner->message, quoted))
                key = keys[k];
            g_free(quoted);
        }
        char *where = strata_keyfile_where(ctx->k, group, key);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: [%s] %s: %s", where, group, key, inner->message);
        g_free(where);
        g_clear_error(&inner);
        ok = false;
    }
    g_strfreev(keys);
    const char *out = ok ? g_string_chunk_insert_const(hw->strings, spec->str) : NULL;
    g_string_free(spec, TRUE);
    return out;
}

/* The DRAM timing set (dram, bus_width; hw/dram.h): the port keeps the pin
 * rate less refresh, and a copy inside the memory carries data for
 * copy_share of its time. Both keys or neither; dram = none undoes a base
 * file's set (and its bus_width). */
static bool memory_dram(const hw_load_ctx *ctx, strata_hw *hw, const char *group, strata_memory_spec *m,
                        GError **err)
{
    bool has_dram = strata_keyfile_has_key(ctx->k, group, "dram"),
         has_width = strata_keyfile_has_key(ctx->k, group, "bus_width");
    if (!has_dram && !has_width)
        return true;
    if (!has_dram) {
        char *names = strata_dram_names();
        hw_fail(ctx, err, group, "bus_width", "bus_width needs dram = %s in the same memory", names);
        g_free(names);
        return false;
    }
    char *name = hw_get_text(ctx, group, "dram");
    if (strcmp(name, "none") == 0) {
        g_free(name);
        return true;
    }
    const strata_dram_timing *t = strata_dram_find(name);
    if (!t) {
        char *names = strata_dram_names(), *expected = g_strdup_printf("%s, or none", names);
        hw_fail_value(ctx, err, group, "dram", expected, name);
        g_free(expected);
        g_free(names);
        g_free(name);
        return false;
    }
    g_free(name);
    if (!has_width) {
        hw_fail(ctx, err, group, "dram", "a DRAM timing set also needs bus_width = (data pins, such as 4096)");
        return false;
    }
    char *v = hw_get_raw(ctx, group, "bus_width");
    uint64_t w = 0;
    bool ok = strata_parse_u64(v, &w, NULL) && w >= 64 && w <= 65536 && w % 64 == 0 && w % t->channel_bits == 0;
    if (!ok)
        hw_fail_value(ctx, err, group, "bus_width", "a number of data pins from 64 to 65536, a multiple of 64", v);
    g_free(v);
    if (!ok)
        return false;
    m->dram = g_string_chunk_insert_const(hw->strings, t->name);
    m->bus_width = (uint32_t)w;
    m->bandwidth = m->pin_bandwidth * strata_dram_refresh_share(t);
    m->copy_share = strata_dram_copy_share(t, m->pin_bandwidth, m->bus_width);
    return true;
}

static bool load_memory(const hw_load_ctx *ctx, strata_hw *hw, const char *group, const char *name,
                        GError **err)
{
    strata_memory_spec m = {0};
    m.name = g_string_chunk_insert_const(hw->strings, name);
    m.alignment = 256;
    m.base = hw->memories->len;

    char *kind = hw_get_text(ctx, group, "kind");
    bool ok = false;
    for (guint i = 0; i < G_N_ELEMENTS(memory_kind_names); i++) {
        if (strcmp(kind, memory_kind_names[i]) == 0) {
            m.kind = (strata_mem_kind)i;
            ok = true;
        }
    }
    if (!ok) {
        char *choices = memory_kind_choices();
        hw_fail_value(ctx, err, group, "kind", choices, kind);
        g_free(choices);
    }
    g_free(kind);
    if (!ok)
        return false;

    if (!hw_get_size(ctx, group, "capacity", &m.capacity, err) ||
        !hw_get_bandwidth(ctx, group, "bandwidth", &m.bandwidth, err) ||
        !hw_get_time(ctx, group, "latency", &m.latency, err))
        return false;
    if (!hw_get_reported_capacity(ctx, group, m.kind == STRATA_MEM_DEVICE, m.capacity, &m.reported_capacity, err))
        return false;
    if (strata_keyfile_has_key(ctx->k, group, "alignment")) {
        if (!hw_get_size(ctx, group, "alignment", &m.alignment, err))
            return false;
        if ((m.alignment & (m.alignment - 1)) != 0 || m.alignment > (1u << 30)) {
            char *v = hw_get_raw(ctx, group, "alignment");
            hw_fail_value(ctx, err, group, "alignment",
                       m.alignment > (1u << 30) ? "a power of two from 1 B to 1 GiB" : "a power of two such as 256",
                       v);
            g_free(v);
            return false;
        }
    }
    if (strata_keyfile_has_key(ctx->k, group, "pageable")) {
        char *v = hw_get_raw(ctx, group, "pageable");
        ok = strata_parse_bool(v, &m.pageable) || hw_fail_value(ctx, err, group, "pageable", "true or false", v);
        if (ok && m.pageable && m.kind != STRATA_MEM_HOST) {
            hw_fail(ctx, err, group, "pageable", "only memories of kind host can be pageable (this one is %s)",
                 strata_mem_kind_name(m.kind));
            ok = false;
        }
        g_free(v);
        if (!ok)
            return false;
    }

    m.pin_bandwidth = m.bandwidth;
    if (!memory_dram(ctx, hw, group, &m, err))
        return false;
    m.allocator = allocator_spec(ctx, hw, group, &m, err);
    if (!m.allocator)
        return false;
    g_array_append_val(hw->memories, m);
    return true;
}

/* A PCIe size key (max_payload and the like) in bytes, 0 when absent. */
static bool pcie_size(const hw_load_ctx *ctx, const char *group, const char *key, uint32_t *out, GError **err)
{
    *out = 0;
    if (!strata_keyfile_has_key(ctx->k, group, key))
        return true;
    char *v = hw_get_raw(ctx, group, key);
    uint64_t x = 0;
    bool ok = strata_parse_size(v, &x, NULL) && x > 0 && x <= 4096;
    if (ok)
        *out = (uint32_t)x;
    else
        hw_fail_value(ctx, err, group, key, "a size in bytes such as 256B (at most 4096B)", v);
    g_free(v);
    return ok;
}

/* A link's bandwidth per direction: `bandwidth =` when given, else derived
 * from the PCIe keys (generation, lanes, max_payload, max_read_request,
 * read_completion) by hw/pcie.h. PCIe keys are checked even when bandwidth
 * overrides them. */
static bool link_bandwidth(const hw_load_ctx *ctx, const char *group, double *out, GError **err)
{
    static const char *const pcie_keys[] = {"lanes", "max_payload", "max_read_request", "read_completion"};
    bool has_bandwidth = strata_keyfile_has_key(ctx->k, group, "bandwidth");
    bool has_generation = strata_keyfile_has_key(ctx->k, group, "generation");
    if (!has_generation) {
        for (size_t i = 0; i < G_N_ELEMENTS(pcie_keys); i++)
            if (strata_keyfile_has_key(ctx->k, group, pcie_keys[i])) {
                hw_fail(ctx, err, group, pcie_keys[i], "a PCIe key needs generation = 3, 4, 5 or 6 in the same link");
                return false;
            }
        if (!has_bandwidth) {
            hw_fail(ctx, err, group, NULL, "expected bandwidth = (such as 16GB/s) or, for a PCIe link, generation = "
                                           "with lanes, max_payload and max_read_request");
            return false;
        }
        return hw_get_bandwidth(ctx, group, "bandwidth", out, err);
    }
    for (size_t i = 0; i < 3; i++)
        if (!strata_keyfile_has_key(ctx->k, group, pcie_keys[i])) {
            hw_fail(ctx, err, group, "generation", "a PCIe link also needs %s =", pcie_keys[i]);
            return false;
        }
    strata_pcie_config cfg = {0};
    if (!hw_get_count(ctx, group, "generation", 3, 6, 0, "3, 4, 5 or 6", &cfg.generation, err) ||
        !hw_get_count(ctx, group, "lanes", 1, 32, 0, "1, 2, 4, 8, 16 or 32", &cfg.lanes, err) ||
        !pcie_size(ctx, group, "max_payload", &cfg.max_payload, err) ||
        !pcie_size(ctx, group, "max_read_request", &cfg.max_read_request, err) ||
        !pcie_size(ctx, group, "read_completion", &cfg.read_completion, err))
        return false;
    const char *bad = strata_pcie_check(&cfg);
    if (bad) {
        const char *colon = strchr(bad, ':');
        char *key = g_strndup(bad, (gsize)(colon - bad));
        hw_fail(ctx, err, group, key, "%s", colon + 2);
        g_free(key);
        return false;
    }
    *out = strata_pcie_data_rate(&cfg);
    return !has_bandwidth || hw_get_bandwidth(ctx, group, "bandwidth", out, err); /* bandwidth = overrides */
}

/* One [link] a pair of memories: a copy takes the first link of its pair
 * (hw_route.c), so a second one loaded and carried nothing (0 B, 0 %), exit
 * 0. Checked on the templates once hw_devices_build has refused its own
 * case (a second link of a device to its host, with several devices). */
static bool links_one_a_pair(const hw_load_ctx *ctx, const strata_hw *hw, GError **err)
{
    for (guint j = 1; j < hw->tlinks->len; j++) {
        const strata_link_spec *l = &g_array_index(hw->tlinks, strata_link_spec, j);
        for (guint i = 0; i < j; i++) {
            const strata_link_spec *o = &g_array_index(hw->tlinks, strata_link_spec, i);
            if (!((o->a == l->a && o->b == l->b) || (o->a == l->b && o->b == l->a)))
                continue;
            char *group = g_strdup_printf("link %s", l->name);
            hw_fail(ctx, err, group, "between", "[link %s] already joins %s and %s, and a copy takes the first "
                    "link of a pair, so this one would carry nothing; expected one link a pair of memories (its "
                    "bandwidth the links' sum)", o->name, g_array_index(hw->tmems, strata_memory_spec, l->a).name,
                    g_array_index(hw->tmems, strata_memory_spec, l->b).name);
            g_free(group);
            return false;
        }
    }
    return true;
}

static bool load_link(const hw_load_ctx *ctx, strata_hw *hw, const char *group, const char *name,
                      GError **err)
{
    strata_link_spec l = {0};
    l.name = g_string_chunk_insert_const(hw->strings, name);
    l.full_duplex = true;

    char *between = hw_get_text(ctx, group, "between");
    char **ends = g_strsplit_set(g_strstrip(between), " \t", -1);
    GPtrArray *names = g_ptr_array_new();
    for (guint i = 0; ends[i]; i++)
        if (*ends[i])
            g_ptr_array_add(names, ends[i]);
    bool ok = true;
    if (names->len != 2) {
        hw_fail_value(ctx, err, group, "between", "two memory names such as 'host hbm'", between);
        ok = false;
    }
    int a = -1, b = -1;
    if (ok && ((a = hw_get_memory_ref(ctx, hw, group, "between", names->pdata[0], err)) < 0 ||
               (b = hw_get_memory_ref(ctx, hw, group, "between", names->pdata[1], err)) < 0))
        ok = false;
    if (ok && a == b) {
        char *q = strata_quote(between);
        hw_fail(ctx, err, group, "between", "a link joins two different memories, got '%s'", q);
        g_free(q);
        ok = false;
    }
    g_ptr_array_free(names, TRUE);
    g_strfreev(ends);
    g_free(between);
    if (!ok)
        return false;
    l.a = (uint32_t)a;
    l.b = (uint32_t)b;

    if (!link_bandwidth(ctx, group, &l.bandwidth, err) || !hw_get_time(ctx, group, "latency", &l.latency, err) ||
        !hw_staging_load(ctx, hw, group, &l, err))
        return false;
    if (!hw_get_count(ctx, group, "copy_engines", 1, 64, 0, NULL, &l.copy_engines, err))
        return false;
    if (l.copy_engines && l.staging_buffer) {
        hw_fail(ctx, err, group, "copy_engines", "a staging link is the CPU's copy, not a DMA: give copy_engines "
                                                 "on the link the DMA crosses");
        return false;
    }
    char *duplex = hw_get_text(ctx, group, "duplex");
    if (duplex) {
        if (strcmp(duplex, "full") == 0)
            l.full_duplex = true;
        else if (strcmp(duplex, "half") == 0)
            l.full_duplex = false;
        else {
            hw_fail_value(ctx, err, group, "duplex", "full or half", duplex);
            ok = false;
        }
        g_free(duplex);
    }
    if (ok)
        g_array_append_val(hw->links, l);
    return ok;
}

/* Splits "memory hbm" into its definition and name; NULL with err if unknown. */
static const group_def *classify_group(const hw_load_ctx *ctx, const char *group, const char **name,
                                       GError **err)
{
    const char *space = strchr(group, ' ');
    size_t word_len = space ? (size_t)(space - group) : strlen(group);
    for (const group_def *d = group_defs; d->word; d++) {
        if (strlen(d->word) != word_len || strncmp(d->word, group, word_len) != 0)
            continue;
        if (!d->named) {
            if (space == NULL) {
                *name = NULL;
                return d;
            }
            break;
        }
        if (space == NULL)
            break;
        const char *n = space + 1;
        bool valid = *n != '\0';
        for (const char *p = n; *p; p++)
            valid = valid && (g_ascii_isalnum(*p) || *p == '_' || *p == '-');
        if (!valid) {
            hw_fail(ctx, err, group, NULL,
                 "expected a name of letters, digits, '_' or '-' after '%s', got '%s'", d->word, n);
            return NULL;
        }
        *name = n;
        return d;
    }
    hw_fail(ctx, err, group, NULL,
         "unknown group; expected [hardware], [memory NAME], [link NAME], [compute NAME], "
         "[interconnect NAME] or [network NAME]");
    return NULL;
}

/* ---- load ---- */

static bool build(hw_load_ctx *ctx, strata_hw *hw, GError **err)
{
    gsize n_groups = 0;
    char **groups = strata_keyfile_groups(ctx->k, &n_groups);
    const group_def **defs = g_new0(const group_def *, n_groups ? n_groups : 1);
    const char **names = g_new0(const char *, n_groups ? n_groups : 1);
    bool ok = true;
    bool have_hardware = false;

    for (gsize g = 0; ok && g < n_groups; g++) {
        defs[g] = classify_group(ctx, groups[g], &names[g], err);
        ok = defs[g] != NULL && (defs[g]->keys == NULL || check_keys(ctx, defs[g], groups[g], err));
        if (ok && defs[g]->kind == GROUP_HARDWARE)
            have_hardware = true;
    }
    if (ok && !have_hardware) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: missing group [hardware] (with at least: name = ...)",
                    strata_keyfile_origin(ctx->k));
        ok = false;
    }
    /* memories first: links and compute units refer to them */
    for (gsize g = 0; ok && g < n_groups; g++)
        if (defs[g]->kind == GROUP_MEMORY)
            ok = load_memory(ctx, hw, groups[g], names[g], err);
    if (ok && hw->memories->len == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: no [memory NAME] group; a machine needs at least one memory",
                    strata_keyfile_origin(ctx->k));
        ok = false;
    }
    if (ok) {
        hw->name = hw_get_text(ctx, "hardware", "name");
        hw->source = hw_get_text(ctx, "hardware", "source");
        char *dm = hw_get_text(ctx, "hardware", "default_memory");
        if (dm) {
            int index = hw_get_memory_ref(ctx, hw, "hardware", "default_memory", g_strstrip(dm), err);
            ok = index >= 0;
            hw->default_memory = ok ? (uint32_t)index : 0;
        } else {
            ok = false;
            for (uint32_t i = 0; !ok && i < hw->memories->len; i++) {
                if (g_array_index(hw->memories, strata_memory_spec, i).kind == STRATA_MEM_DEVICE) {
                    hw->default_memory = i;
                    ok = true;
                }
            }
            if (!ok)
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "%s: no memory of kind device; set [hardware] default_memory",
                            strata_keyfile_origin(ctx->k));
        }
        g_free(dm);
    }
    if (ok && hw->name && !*g_strstrip(hw->name)) /* "name = " ran as a model without a name ("T on ") */
        ok = hw_fail_value(ctx, err, "hardware", "name", "the machine's name (text)", "");
    char *sched = ok ? hw_get_text(ctx, "hardware", "sched") : NULL;
    if (sched && strcmp(g_strstrip(sched), "xla") != 0 && strcmp(sched, "cuda") != 0) {
        hw_fail(ctx, err, "hardware", "sched", "expected xla or cuda, got '%s'", sched);
        ok = false;
    }
    hw->sched_xla = sched && strcmp(sched, "xla") == 0;
    g_free(sched);
    char *sharing = ok ? hw_get_text(ctx, "hardware", "flow_sharing") : NULL;
    if (sharing && strcmp(g_strstrip(sharing), "equal") != 0 && strcmp(sharing, "latency") != 0) {
        hw_fail(ctx, err, "hardware", "flow_sharing", "expected equal or latency, got '%s'", sharing);
        ok = false;
    }
    hw->flow_sharing_latency = sharing && strcmp(sharing, "latency") == 0;
    g_free(sharing);
    for (gsize g = 0; ok && g < n_groups; g++) {
        if (defs[g]->kind == GROUP_LINK)
            ok = load_link(ctx, hw, groups[g], names[g], err);
        else if (defs[g]->kind == GROUP_COMPUTE)
            ok = hw_load_compute(ctx, hw, groups[g], names[g], err);
    }
    ok = ok && hw_devices_build(ctx, hw, groups, n_groups, err) && links_one_a_pair(ctx, hw, err) &&
         hw_vendor_load(ctx, hw, err);
    g_free(defs);
    g_free(names);
    g_strfreev(groups);
    if (ok) {
        hw_compute_routes(hw);
        hw->memory_by_name = g_hash_table_new(g_str_hash, g_str_equal);
        for (guint i = 0; i < hw->memories->len; i++)
            g_hash_table_insert(hw->memory_by_name, (gpointer)g_array_index(hw->memories, strata_memory_spec, i).name,
                                GUINT_TO_POINTER(i + 1));
        hw->unit_by_name = g_hash_table_new(g_str_hash, g_str_equal);
        for (guint i = hw->computes->len; i-- > 0;) /* the first of a name wins */
            g_hash_table_insert(hw->unit_by_name, (gpointer)g_array_index(hw->computes, strata_compute_spec, i).name,
                                GUINT_TO_POINTER(i + 1));
    }
    return ok;
}

static strata_hw *hw_new(const char *origin)
{
    strata_hw *hw = g_new0(strata_hw, 1);
    hw->origin = g_strdup(origin);
    hw->strings = g_string_chunk_new(256);
    hw->memories = g_array_new(FALSE, TRUE, sizeof(strata_memory_spec));
    hw->links = g_array_new(FALSE, TRUE, sizeof(strata_link_spec));
    hw->computes = g_array_new(FALSE, TRUE, sizeof(strata_compute_spec));
    hw->tmems = hw->memories;
    hw->tlinks = hw->links;
    hw->tunits = hw->computes;
    hw->devices = hw->devices_per_host = hw->hosts = 1;
    return hw;
}

#ifndef NDEBUG
/* hw.h's invariants that the arrays show, and hw_internal.h's (O(memories
 * + links)): once per load. */
static bool hw_ok(const strata_hw *hw)
{
    guint n = hw->memories->len;
    if (g_hash_table_size(hw->memory_by_name) != n) /* memory names unique */
        return false;
    if (n > 0 && hw->default_memory >= n)
        return false;
    for (guint i = 0; i < hw->links->len; i++) {
        const strata_link_spec *l = &g_array_index(hw->links, strata_link_spec, i);
        if (l->a == STRATA_HW_NO_MEMORY ? l->b != STRATA_HW_NO_MEMORY
                                        : l->a >= n || (l->b != STRATA_HW_NO_MEMORY && (l->b >= n || l->b == l->a)))
            return false; /* two declared, distinct memories, a memory and a switch, or two switches */
    }
    if (hw->devices == 1) /* hw_internal.h: templates are the instances */
        return hw->tmems == hw->memories && hw->tlinks == hw->links && hw->tunits == hw->computes;
    return true;
}
#endif

/* strata_hw_fingerprint: every group, key and value of k in file order,
 * each NUL-terminated (so that no two lists hash the same text), hashed. */
static char *fingerprint_of(const strata_keyfile *k)
{
    GChecksum *sum = g_checksum_new(G_CHECKSUM_SHA256);
    gsize n = 0;
    char **groups = strata_keyfile_groups(k, &n);
    for (gsize g = 0; g < n; g++) {
        g_checksum_update(sum, (const guchar *)groups[g], (gssize)strlen(groups[g]) + 1);
        char **keys = strata_keyfile_keys(k, groups[g], NULL);
        for (guint i = 0; keys && keys[i]; i++) {
            char *v = strata_keyfile_value(k, groups[g], keys[i]);
            g_checksum_update(sum, (const guchar *)keys[i], (gssize)strlen(keys[i]) + 1);
            g_checksum_update(sum, (const guchar *)(v ? v : ""), (gssize)strlen(v ? v : "") + 1);
            g_free(v);
        }
        g_strfreev(keys);
        g_checksum_update(sum, (const guchar *)"", 1); /* the group's end */
    }
    g_strfreev(groups);
    char *hex = g_strdup(g_checksum_get_string(sum));
    g_checksum_free(sum);
    return hex;
}

/* Applies the overrides to k and builds the model (k is freed). */
static strata_hw *hw_from_keyfile(strata_keyfile *k, const char *const *overrides,
                                  strata_hw_allocator_check check_allocator, GError **err)
{
    char *origin = k ? g_strdup(strata_keyfile_origin(k)) : NULL; /* the file given: k becomes its base's */
    k = hw_resolve_base(k, err);
    strata_hw *hw = k ? hw_new(origin) : NULL;
    g_free(origin);
    if (!k)
        return NULL;
    hw_load_ctx ctx = {.k = k, .check_allocator = check_allocator};
    bool ok = true;
    for (const char *const *o = overrides; ok && o && *o; o++)
        ok = apply_override(&ctx, *o, err);
    ok = ok && build(&ctx, hw, err);
    if (ok)
        hw->fingerprint = fingerprint_of(k);
    hw->overrides = overrides ? g_strdupv((char **)overrides) : NULL;
    strata_keyfile_free(k);
    if (!ok) {
        strata_hw_free(hw);
        return NULL;
    }
    assert(hw_ok(hw)); /* hw.h: unique names, links join declared memories; hw_internal.h */
    return hw;
}

strata_hw *strata_hw_load_data_checked(const char *data, const char *origin, const char *const *overrides,
                                       strata_hw_allocator_check check_allocator, GError **err)
{
    strata_hw *hw = hw_from_keyfile(strata_keyfile_load_data(data, origin ? origin : "<hardware>", "hardware",
                                                             STRATA_KEYFILE_INLINE_COMMENTS, err),
                                    overrides, check_allocator, err);
    if (hw)
        hw->data = g_strdup(data);
    return hw;
}

strata_hw *strata_hw_load_checked(const char *path, const char *const *overrides,
                                  strata_hw_allocator_check check_allocator, GError **err)
{
    strata_hw *hw = hw_from_keyfile(
        strata_keyfile_load(path, "hardware file", "hardware", STRATA_KEYFILE_INLINE_COMMENTS, err), overrides,
        check_allocator, err);
    if (hw)
        hw->path = g_strdup(path);
    return hw;
}

strata_hw *strata_hw_load_data(const char *data, const char *origin, const char *const *overrides,
                               GError **err)
{
    return strata_hw_load_data_checked(data, origin, overrides, NULL, err);
}

strata_hw *strata_hw_load(const char *path, const char *const *overrides, GError **err)
{
    return strata_hw_load_checked(path, overrides, NULL, err);
}

strata_hw *strata_hw_reload(const strata_hw *hw, const char *const *more, GError **err)
{
    GPtrArray *over = g_ptr_array_new();
    for (char **o = hw->overrides; o && *o; o++) {
        bool replaced = false;
        for (const char *const *m = more; m && *m && !replaced; m++) {
            const char *eq = strchr(*m, '=');
            replaced = eq && strncmp(*o, *m, (size_t)(eq - *m + 1)) == 0;
        }
        if (!replaced)
            g_ptr_array_add(over, *o);
    }
    for (const char *const *m = more; m && *m; m++)
        g_ptr_array_add(over, (gpointer)*m);
    g_ptr_array_add(over, NULL);
    const char *const *all = (const char *const *)over->pdata;
    strata_hw *copy = hw->data ? strata_hw_load_data(hw->data, hw->origin, all, err)
                               : strata_hw_load(hw->path ? hw->path : hw->origin, all, err);
    g_ptr_array_free(over, TRUE);
    return copy;
}

void strata_hw_free(strata_hw *hw)
{
    if (hw == NULL)
        return;
    hw_routes_free(hw);
    hw_sites_free(hw->sites);
    if (hw->memory_by_name)
        g_hash_table_destroy(hw->memory_by_name);
    if (hw->unit_by_name)
        g_hash_table_destroy(hw->unit_by_name);
    if (hw->tmems != hw->memories)
        g_array_free(hw->tmems, TRUE);
    if (hw->tlinks != hw->links)
        g_array_free(hw->tlinks, TRUE);
    if (hw->tunits != hw->computes)
        g_array_free(hw->tunits, TRUE);
    g_array_free(hw->memories, TRUE);
    g_array_free(hw->links, TRUE);
    g_array_free(hw->computes, TRUE);
    g_free(hw->mem_at);
    g_free(hw->link_at);
    g_free(hw->unit_at);
    g_string_chunk_free(hw->strings);
    g_free(hw->coll_params);
    g_free(hw->name);
    g_free(hw->source);
    g_free(hw->origin);
    g_free(hw->fingerprint);
    g_free(hw->data);
    g_free(hw->path);
    g_strfreev(hw->overrides);
    g_free(hw);
}
