/*
 * hw_internal.h: the hardware model's struct and the helpers shared by
 * hw.c (loading), hw_access.c (the accessors), hw_values.c (typed key values),
 * coll_impl.c and coll_impl_*.c (the collective implementations' keys),
 * hw_base.c (derived files, `base =`),
 * hw_devices.c (devices and interconnects),
 * hw_site.c (the graph between sites) and hw_route.c (routes). Not for use
 * outside sim/hw/.
 *
 * Invariants: with one device the template arrays are the instance arrays
 * (tmems == memories, ...); with several, instance i of template t lies at
 * offset[t] + (device, or host for host memories and links between them).
 */
#ifndef STRATA_HW_INTERNAL_H
#define STRATA_HW_INTERNAL_H

#include "hw/hw.h"
#include "core/keyfile.h"
#include "hw/nccl_tuning.h"

typedef struct route {
    strata_hop *hops; /* NULL when n == 0 */
    uint32_t n;
    bool reachable;
} route;

/* Where a template's instances lie: offset of the first; per_host: one
 * instance per host (else one per device). */
typedef struct hw_instances {
    uint32_t offset;
    bool per_host;
} hw_instances;

typedef struct hw_sites hw_sites;

struct strata_hw {
    char *name;
    char *source;
    char *origin;
    char *fingerprint; /* strata_hw_fingerprint: SHA-256 of the keys after base and overrides */
    char *data;        /* the text it was loaded from (strata_hw_load_data), NULL from a file */
    char *path;        /* the file it was loaded from (origin may be its base file's), NULL from text */
    char **overrides;  /* the overrides it was loaded with (NULL-terminated), NULL: none */
    bool sched_xla; /* [hardware] sched = xla */
    bool flow_sharing_latency; /* [hardware] flow_sharing = latency */
    const char *vendor;        /* [hardware] vendor (in strings), NULL: not given (hw_vendor.c) */
    const char *device_name;   /* [hardware] device_name (in strings), NULL: not given (hw_vendor.c) */
    uint32_t compute_capability; /* [hardware] compute_capability as MAJOR x 10 + MINOR, 0: not given (hw_vendor.c) */
    const strata_coll_impl *coll_impl; /* [interconnect] collectives= (coll_impl.c); NULL: ideal */
    void *coll_params;                 /* its parameter block (g_free), or NULL */
    GStringChunk *strings;
    GArray *memories; /* strata_memory_spec (instances) */
    GArray *links;    /* strata_link_spec (instances, then interconnect links) */
    GArray *computes; /* strata_compute_spec (instances) */
    GArray *tmems, *tlinks, *tunits; /* templates: == the above with one device */
    hw_instances *mem_at, *link_at, *unit_at; /* by template index (several devices), else NULL */
    uint32_t default_memory;
    uint32_t devices, devices_per_host, hosts;
    uint32_t domain;           /* devices per scale-up domain (the device interconnect's `domain`) */
    bool has_nics;             /* a [network]: nics below */
    strata_hw_nics nics;
    route *routes;             /* template routes: tmems->len^2 */
    GHashTable *memory_by_name; /* name -> index + 1 */
    GHashTable *unit_by_name;   /* name -> index + 1 (units: a hash, as a pod has thousands) */
    struct strata_idmap *route_memo; /* several devices: from * n + to -> route * (core/idmap.h) */
    hw_sites *sites;           /* several devices, else NULL */
};

/* The loader's context: the key file, for FILE:LINE in messages. */
typedef struct hw_load_ctx {
    strata_keyfile *k;
    strata_hw_allocator_check check_allocator; /* NULL: allocator names unchecked */
} hw_load_ctx;

/* Sets err to "WHERE: [GROUP] KEY: MESSAGE" (KEY omitted when NULL). */
void hw_fail(const hw_load_ctx *ctx, GError **err, const char *group, const char *key, const char *fmt, ...)
    G_GNUC_PRINTF(5, 6);
/* "WHERE: [GROUP] KEY: expected EXPECTED, got 'VALUE'"; returns false. */
bool hw_fail_value(const hw_load_ctx *ctx, GError **err, const char *group, const char *key,
                   const char *expected, const char *value);
/* hw_values.c: typed values, each within the sane range of its kind. */
char *hw_get_raw(const hw_load_ctx *ctx, const char *group, const char *key); /* raw text, NULL when absent */
/* hw_stream_curve.c: gemm_stream_curve into k (absent or `none`: no points). */
bool hw_get_stream_curve(const hw_load_ctx *ctx, const char *group, strata_kernel_spec *k, GError **err);
bool hw_get_size(const hw_load_ctx *ctx, const char *group, const char *key, uint64_t *out, GError **err);
/* A memory's reported_capacity (0 when absent or `none`): kind device only, at most capacity (docs/hardware.md);
 * a derived file or --set restating capacity at another size drops the earlier total (it was another part's). */
bool hw_get_reported_capacity(const hw_load_ctx *ctx, const char *group, bool device, uint64_t capacity,
                              uint64_t *out, GError **err);
bool hw_get_flop_rate(const hw_load_ctx *ctx, const char *group, const char *key, double *out, GError **err);
/* A whole number from lo to hi, def when absent; expected: the message's
 * "expected ..." (NULL: "a whole number from LO to HI"). */
bool hw_get_count(const hw_load_ctx *ctx, const char *group, const char *key, uint32_t lo, uint32_t hi,
                  uint32_t def, const char *expected, uint32_t *out, GError **err);
bool hw_get_bandwidth(const hw_load_ctx *ctx, const char *group, const char *key, double *out, GError **err);
bool hw_get_clock(const hw_load_ctx *ctx, const char *group, const char *key, double *out, GError **err);
bool hw_get_time(const hw_load_ctx *ctx, const char *group, const char *key, double *out, GError **err);
/* A time the model charges only where `applies` (a mechanism of some
 * hardware or releases): the file's value where set, else `fallback`, and 0
 * where it does not apply; set where it does not apply it is refused with
 * `refusal` (nccl_gdr_flush, rccl_gdr_flush); set in a file with no
 * [network NAME] it is refused too (the times gated are of steps received
 * across nodes). */
bool hw_get_gated_time(const hw_load_ctx *ctx, const char *group, const char *key, bool applies, double fallback,
                       const char *refusal, double *out, GError **err);
/* false with err naming the first of keys (NULL-terminated) that group sets
 * where the file has no [network NAME]: keys of transfers across nodes,
 * which were taken there and read by nothing (nccl_net_latency, ...). */
bool hw_network_keys_unset(const hw_load_ctx *ctx, const char *group, const char *const *keys, GError **err);
char *hw_get_text(const hw_load_ctx *ctx, const char *group, const char *key); /* NULL when absent */
/* true or false exactly; *out left as it is when absent. */
bool hw_get_flag(const hw_load_ctx *ctx, const char *group, const char *key, bool *out, GError **err);
/* Index of the template memory `name` (group/key for the message), -1 with err. */
int hw_get_memory_ref(const hw_load_ctx *ctx, const strata_hw *hw, const char *group, const char *key,
                      const char *name, GError **err);

/* hw_staging.c: a [link]'s staging keys (staging_buffer, staging_overlap,
 * cpu_copy_in, cpu_copy_out) into *l, whose ends are set; false with err. */
bool hw_staging_load(const hw_load_ctx *ctx, const strata_hw *hw, const char *group, strata_link_spec *l,
                     GError **err);

/* hw_vendor.c: [hardware] vendor, checked against the collectives' library, and device_name
 * (after hw_devices_build, which loads it). */
bool hw_vendor_load(const hw_load_ctx *ctx, strata_hw *hw, GError **err);
/* hw_devices.c: [hardware] devices and devices_per_host, and the
 * [interconnect] groups (`groups`: their names as "interconnect NAME"),
 * checked; with several devices, instantiates the templates and adds the
 * interconnect links and the site graph. */
bool hw_devices_build(const hw_load_ctx *ctx, strata_hw *hw, char **groups, gsize n_groups, GError **err);
/* Whether a template memory is per device (kind device or onchip). */
bool hw_per_device(strata_mem_kind kind);

/* hw_network.c: the [network NAME] group (the scale-out tier), its keys
 * (hw.c checks them) and, with several devices, its links and switches in
 * the site graph (before it is sealed). */
typedef struct hw_network hw_network;
extern const strata_key_def hw_network_keys[];
/* At most one [network] group, checked (*out NULL when none). */
bool hw_network_parse(const hw_load_ctx *ctx, const strata_hw *hw, char **groups, gsize n_groups,
                      hw_network **out, GError **err);
void hw_network_free(hw_network *n);
/* Its group ("network NAME"), its template memory (the sites' gateway it
 * joins) and whether that is a host's. */
const char *hw_network_group(const hw_network *n);
uint32_t hw_network_memory(const hw_network *n);
bool hw_network_on_hosts(const hw_network *n);
/* The most links a route between two of its sites crosses. */
uint32_t hw_network_diameter(const strata_hw *hw, const hw_network *n);
void hw_network_build(strata_hw *hw, const hw_network *n);
/* Its NICs as the collective libraries see them (hw.h). */
strata_hw_nics hw_network_nics(const strata_hw *hw, const hw_network *n);

/* coll_impl.c: the [interconnect] group's `collectives =` and the chosen
 * row's parameter block into hw->coll_impl and hw->coll_params (hosts: a
 * network between hosts, where all of them are errors; domain: the
 * devices it joins per scale-up domain, strata_coll_impl's load). */
bool hw_coll_impl_load(const hw_load_ctx *ctx, strata_hw *hw, const char *group, bool hosts, uint32_t domain,
                       GError **err);
/* Shared readers of the implementations' keys: a comma-separated list of
 * NCCL's algorithm (algos) or protocol names into a mask of their bits (as
 * NCCL_ALGO and NCCL_PROTO list them, a leading ^ for all but those; absent:
 * 0; one that leaves none is refused), and the host CPU
 * (intel, amd or arm; absent: def). */
bool hw_coll_impl_list(const hw_load_ctx *ctx, const char *group, const char *key, bool algos, uint32_t *mask,
                       GError **err);
bool hw_coll_impl_cpu(const hw_load_ctx *ctx, const char *group, const char *key, strata_nccl_cpu def,
                      strata_nccl_cpu *out, GError **err);
/* One of a key's words, as its index in names (absent: def); anything else refused naming the expected words. */
bool hw_coll_impl_word(const hw_load_ctx *ctx, const char *group, const char *key, const char *const *names,
                       unsigned n_names, unsigned def, const char *expected, unsigned *out, GError **err);
/* The help line of `collectives` (g_free). */
char *hw_coll_impl_describe(void);
/* Every implementation's keys, in the table's order: their names appended
 * to known, and/or their help lines to help (NULL: not wanted). */
void hw_coll_impl_keys(GPtrArray *known, GString *help, const char *indent);

/* hw_compute.c: one [compute NAME] group into hw->computes; the help line
 * of `matrix` (g_free) and the kernel models' keys (as hw_coll_impl_keys). */
bool hw_load_compute(const hw_load_ctx *ctx, strata_hw *hw, const char *group, const char *name, GError **err);
char *hw_kernel_describe(void);
void hw_kernel_keys(GPtrArray *known, GString *help, const char *indent);

/* hw_route.c: fills hw->routes from the templates (at least one memory). */
void hw_compute_routes(strata_hw *hw);
void hw_routes_free(strata_hw *hw);
/* Several devices: an empty route memo (routes are composed on use). */
void hw_route_memo_init(strata_hw *hw);

/* hw_site.c: the graph between sites: devices 0..N-1, hosts N..N+H-1,
 * then switches. */
hw_sites *hw_sites_new(uint32_t devices, uint32_t hosts);
void hw_sites_free(hw_sites *s);
/* Adds a switch vertex named after its interconnect; returns its vertex. */
uint32_t hw_sites_add_switch(hw_sites *s, const char *name);
/* Adds the connection u-v over `link` (forward = from u to v), with
 * `pad_uv` / `pad_vu` extra cost one way / the other. */
void hw_sites_connect(hw_sites *s, uint32_t u, uint32_t v, uint32_t link, uint32_t pad_uv, uint32_t pad_vu);
/* Orders the edges for the platform (by larger end, then smaller) and
 * numbers the vertices by first appearance; after it, nothing is added. */
void hw_sites_seal(hw_sites *s);
void hw_sites_set_gateway(hw_sites *s, uint32_t vertex, uint32_t memory);
/* The edges of the shortest path from site u to site v (fewest links, ties
 * broken as SimGrid's Dijkstra routing does), in order; false when v is
 * unreachable. *edges is owned by s until the next call. */
bool hw_sites_path(hw_sites *s, uint32_t u, uint32_t v, const uint32_t **edges, uint32_t *n);

/* When k's [hardware] names a base file: that file (which names no base
 * itself: one level, so a key is replaced at most once), with every key
 * of k but base set over it as an override noted "K'S FILE:LINE", so
 * errors name both files. k is freed; NULL with err
 * set on failure. A group of k must exist in the base: a derived file
 * changes values, it adds no memories, links or units. */
strata_keyfile *hw_resolve_base(strata_keyfile *k, GError **err);

#endif
