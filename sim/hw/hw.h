/*
 * hw.h: the hardware model, read from a GLib key file (the files in configs/hw).
 *
 *   [hardware]      name, source (text), default_memory (optional; else the
 *                   first memory of kind device), sched = xla|cuda (the
 *                   execution model the copy policies default to; cuda),
 *                   devices (default 1), devices_per_host (default devices),
 *                   vendor = amd|nvidia|google (hw_vendor.c),
 *                   base (a file this one changes: its keys over that file's)
 *   [memory NAME]   kind = device|host|onchip, capacity, bandwidth, latency,
 *                   allocator (NAME, default best-fit), alignment (default 256),
 *                   pageable (bool, host only), allocator.KEY = VALUE...
 *   [link NAME]     between = MEM MEM, bandwidth (each direction), latency,
 *                   duplex = full|half; a PCIe link: generation, lanes,
 *                   max_payload, max_read_request, read_completion (the
 *                   bandwidth derived, hw/pcie.h, unless given); a driver's
 *                   CPU copy to pageable memory: staging_buffer (hw/staging.h);
 *                   a GPU's DMA engines per direction: copy_engines
 *   [compute NAME]  flops (peak; flops.bf16 = ... per dtype), operands = MEM,
 *                   overhead (fixed cost per op, default 0), launch (fixed
 *                   cost once, on the unit's first op, default 0), tile (the
 *                   side of a systolic array, default 0: see the engine),
 *                   matrix = systolic|tiles and the kernel models' keys
 *                   (hw_compute.c; kernel ops, models/kernel/kernel.h)
 *   [interconnect NAME] memory (the per-device memory it joins, or a host
 *                   memory for a network between hosts), topology = ring|
 *                   torus2d|torus3d|switch|full, dims (torus: 4x4, 4x4x4),
 *                   bandwidth (per link and direction), latency,
 *                   links_per_chip (parallel links: multiply the bandwidth),
 *                   wraparound (torus: per dimension, default true), duplex,
 *                   domain (devices per scale-up domain: it joins each
 *                   domain's devices, not across them; default all)
 *   [network NAME]  the scale-out tier that joins domains (hw_network.c):
 *                   memory (the devices' NICs, or a host memory: the
 *                   hosts'), topology = switch|rails, bandwidth (per NIC
 *                   and direction), latency (per link), nics,
 *                   devices_per_nic, hosts_per_leaf, oversubscription,
 *                   uplinks, routing = adaptive|ecmp|destination,
 *                   nccl_ib_qps_per_connection (hw/ecmp.h; its old name
 *                   qps_per_connection read as it, with a note)
 *
 * Unknown groups or keys, missing required keys, values outside the sane
 * ranges (docs/hardware.md) and, where the caller passes the allocators'
 * check (placement/placement_hw.h does), an allocator that does not exist or
 * does not take the allocator.KEY given are STRATA_ERROR_INPUT errors naming
 * the file, the line, the group and the key. Numbers take units
 * (core/units.h). The model knows no allocator, policy or workload: it
 * keeps each memory's allocator spec as text for the layer that places.
 *
 * Devices: with devices = N > 1 the file describes one device and its host
 * (the "template"); the model holds N instances of every memory of kind
 * device or onchip, of every compute unit and of every link between two such
 * memories, named NAME@D (D = 0..N-1), and one instance per host of every
 * host memory and of every link between host memories, named NAME@H
 * (H = 0..N/devices_per_host-1). A link between a per-device memory and a
 * host memory (PCIe) exists per device and joins NAME@D to host@(D/M). An
 * [interconnect] adds links NAME:I-J (I < J) between the instances of its
 * memory, or for a switch one link NAME@D per device from the memory to the
 * switch (a route vertex that is no memory: its b is STRATA_HW_NO_MEMORY).
 * Instances are numbered template by template (declaration order), devices
 * (or hosts) consecutive: memory (template t, device D) has index
 * offset(t) + D (host memories: offset(t) + D/M), so with devices = 1 every
 * index and name is the declared one.
 *
 * Routes: the links form a graph over memories. With one device the route
 * from A to B is the path with the fewest hops, ties broken by declaration
 * order (deterministic); host to VMEM therefore goes host->HBM->VMEM when
 * that is the only path. With several devices, every device and every host
 * is a site with one gateway memory (the memory of the device's link to its
 * host and of its interconnect); a route inside a site (two memories of one
 * device, or of one host) is the template route instantiated there (a
 * host's as seen from its first device); a route between sites is the template route from A to
 * its site's gateway, the shortest path between the sites over the links
 * between sites (hw_site.c: fewest links, a host-to-device link costs as
 * much as crossing the device interconnect so device traffic never passes
 * through a host; ties broken towards the lower-numbered site), then the
 * template route from the far gateway to B. Hops between sites reach no
 * memory port but the far gateway's: a route through intermediate chips
 * uses only interconnect links, not their memories.
 *
 * Invariants: names are unique per kind; every link joins two declared,
 * distinct memories (or a memory and a switch); indices are stable; the
 * model is immutable after load except for the route memo (strata_hw_route
 * fills it: not for concurrent use from several threads).
 */
#ifndef STRATA_HW_H
#define STRATA_HW_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "trace/op.h"

typedef enum { STRATA_MEM_DEVICE, STRATA_MEM_HOST, STRATA_MEM_ONCHIP } strata_mem_kind;

#define STRATA_HW_NO_MEMORY UINT32_MAX
#define STRATA_HW_NO_DEVICE UINT32_MAX
/* The range a bandwidth of a hardware file lies in, bytes per second
 * (hw_values.c, docs/hardware.md): 1 kB/s to 10 PB/s; outside it a typo
 * or a unit slip. */
#define STRATA_HW_BANDWIDTH_MIN 1e3
#define STRATA_HW_BANDWIDTH_MAX 1e16
/* The fastest clock a hardware file takes (Hz, hw_values.c), and so the
 * shortest time other than 0 it takes (seconds): one cycle of that clock,
 * 10 ps. A latency of 1e-300 s is a unit slip, and acts as 0. */
#define STRATA_HW_CLOCK_MAX 1e11
#define STRATA_HW_TIME_MIN (1.0 / STRATA_HW_CLOCK_MAX)

typedef struct strata_memory_spec {
    const char *name;
    strata_mem_kind kind;
    uint64_t capacity;     /* bytes */
    uint64_t reported_capacity; /* bytes the CUDA driver reports as the total (cudaMemGetInfo), which vLLM's
                                 * KV pool is a share of; 0 where the file gives none (capacity is taken) */
    double bandwidth;      /* bytes/s: the memory's own port, shared by all traffic (with a
                            * DRAM timing set: the pin rate less refresh, hw/dram.h) */
    double pin_bandwidth;  /* bytes/s: the `bandwidth =` key, the datasheet's pin rate */
    const char *dram;      /* the DRAM timing set (hw/dram.h), NULL where none is given */
    uint32_t bus_width;    /* data pins of the DRAM interface, 0 without a timing set */
    double copy_share;     /* share of a copy inside it that carries data (bus turnarounds,
                            * hw/dram.h); 0 without a timing set: no turnaround */
    double latency;        /* seconds: access latency seen by compute operands */
    const char *allocator; /* allocator spec "NAME[:k=v,...]" built from allocator and allocator.* keys */
    uint64_t alignment;    /* bytes, power of two */
    bool pageable;         /* host memory that is not pinned */
    uint32_t base;         /* index of the template memory it instantiates (= index with one device) */
    uint32_t site;         /* device (kind device or onchip) or host (kind host) it belongs to */
    uint32_t device;       /* the device it belongs to; STRATA_HW_NO_DEVICE for a host memory */
    uint32_t host;         /* the host it lies on (a per-device memory: its device's host) */
} strata_memory_spec;

typedef struct strata_link_spec {
    const char *name;
    uint32_t a, b;         /* memory indices (b = STRATA_HW_NO_MEMORY: a switch; both: a [network]'s
                            * link between two switches, a shared NIC to its leaf or a leaf to the spine) */
    double bandwidth;      /* bytes/s in each direction */
    double latency;        /* seconds */
    bool full_duplex;      /* each direction has its own bandwidth */
    uint64_t staging_buffer; /* > 0: a CPU copy through a pinned buffer of this many bytes (hw/staging.h) */
    bool staging_serial;     /* the DMA and the CPU copy take the whole buffer in turn (staging_overlap = false) */
    double cpu_copy_in;      /* bytes/s of the driver's CPU copy from pageable memory into the staging buffer
                              * (a copy toward a device), 0: `bandwidth` (hw/staging.h) */
    double cpu_copy_out;     /* bytes/s of its copy out of the staging buffer into pageable memory, 0: `bandwidth` */
    uint32_t copy_engines;   /* > 0: copies crossing it in one direction queue first come, first served for
                              * this many DMA engines per direction (sim/engine/engine_copy_queue.h);
                              * 0 (copy_engines absent): every copy shares the link's bandwidth */
    /* The devices it belongs to: one for a link inside a device, from a
     * device to its host or to a switch ({D, NO_DEVICE}); both ends for a
     * link between two chips. `host` likewise for a link between host
     * memories (inside a host, or between two hosts); NO_DEVICE where none. */
    uint32_t device[2];
    uint32_t host[2];
} strata_link_spec;

/* A unit's kernel models (models/kernel/kernel.h), [compute NAME] keys
 * after `matrix` (docs/hardware.md, "Kernels"). matrix NONE: every op
 * keeps the roofline. */
typedef enum { STRATA_MATRIX_NONE = 0, STRATA_MATRIX_SYSTOLIC, STRATA_MATRIX_TILES } strata_matrix_kind;
#define STRATA_MAX_CTA_TILES 16
#define STRATA_MAX_STREAM_CURVE 16 /* points of gemm_stream_curve (hw_stream_curve.c) */
typedef struct strata_kernel_spec {
    strata_matrix_kind matrix;
    uint32_t side;               /* systolic: the array's side (side =, else tile =) */
    uint32_t mxus;               /* systolic: arrays per core (default 1) */
    uint32_t cores;              /* systolic: cores one kernel splits over, a megacore's 2 (default 1) */
    uint32_t fill;               /* systolic: cycles to fill and drain the array once (0: 2 x tile) */
    uint32_t sms;                /* tiles: streaming multiprocessors */
    uint32_t n_cta_tiles;        /* tiles: the CTA tiles (M x N) the library picks among */
    uint32_t cta_tiles[STRATA_MAX_CTA_TILES][2];
    uint32_t n_grouped_tiles;    /* tiles: the CTA tiles a grouped (MoE) GEMM picks among (0: cta_tiles) */
    uint32_t grouped_tiles[STRATA_MAX_CTA_TILES][2];
    uint32_t grouped_k_tile;     /* tiles: bytes of K a grouped GEMM's k-block holds (0: K run exactly) */
    double grouped_group_switch; /* tiles: seconds a grouped GEMM's CTA spends on each new group's TMA
                                    descriptors before that group's first tile (0: none) */
    double split_k_reduction;    /* tiles: seconds a library GEMM's split-K reduction kernel adds besides
                                    its bytes (0: none) */
    uint32_t gemm_pipeline_smem; /* tiles: shared-memory bytes a library GEMM's k-block stages share (0: none) */
    uint32_t gemm_k_tile;        /* tiles: bytes of K one such stage holds (set with gemm_pipeline_smem) */
    double operand_feed;         /* tiles: bytes/s of operands one SM receives (0: unbounded) */
    uint32_t exposed_epilogue;   /* tiles: bit d set: dtype d's GEMMs write each tile's output after
                                    its mainloop, not under the next tile's (0: none) */
    double matrix_efficiency;    /* sustained fraction of the matrix peak (default 1) */
    double mma_sync_fraction;    /* tiles: fraction of the matrix peak the warp-level mma.sync
                                    instructions reach, FlashAttention-2's products (0: 1, native) */
    uint32_t smem_per_sm;        /* tiles: shared-memory bytes an SM holds for its resident CTAs (0: not given) */
    double stream_efficiency;    /* fraction of the operand memory's bandwidth a kernel streams at (default 1) */
    double gemm_stream_efficiency; /* the same for a library GEMM's operands (0: stream_efficiency) */
    uint32_t n_stream_curve;       /* points of gemm_stream_curve (0: none, gemm_stream_efficiency at every size) */
    double stream_curve[STRATA_MAX_STREAM_CURVE][2]; /* (operand bytes, fraction), bytes rising */
    double kernel_launch;        /* seconds each kernel op adds (launch, first tile's prologue) */
    double vector_flops;         /* elementwise rate, FLOP/s (0: flops) */
    double transcendental_flops; /* exp/log/tanh per second (0: vector rate) */
    double peak_clock;           /* Hz: the clock the unit's peak rates are quoted at (0: not given) */
    double sustained_clock;      /* Hz: the clock its power limit holds under continuous matrix work
                                    (0: not given; at most peak_clock) */
    double clock_response;       /* s: the time constant over which the power limit sees the unit's
                                    matrix activity (0: not given, no duty rule; sim/engine/engine_power.h) */
    double clock_free_duty;      /* the filtered activity up to which the peak clock holds, 0 to below 1
                                    (given with clock_response) */
} strata_kernel_spec;

typedef struct strata_compute_spec {
    const char *name;
    double flops;                          /* peak FLOP/s, any dtype */
    double flops_by_dtype[STRATA_DTYPE__COUNT]; /* 0 = use flops */
    uint32_t operands;                     /* memory index the unit reads operands from */
    double overhead;                       /* seconds added to every compute op */
    double launch;                         /* seconds added once, to the first op on the unit */
    uint64_t tile;                         /* systolic array side (0: none): a matmul's K and N
                                              are padded up to multiples of it */
    strata_kernel_spec kernel;             /* the kernel models' figures (matrix NONE: none) */
    uint32_t base;                         /* index of the template unit (= index with one device) */
    uint32_t device;                       /* device it belongs to */
} strata_compute_spec;

/* One hop of a route: link index and direction (true = from a to b), and
 * the memory whose port the transfer passes after the link (the memory it
 * reaches), or STRATA_HW_NO_MEMORY when it reaches a switch or passes
 * through an intermediate chip. */
typedef struct strata_hop {
    uint32_t link;
    bool forward;
    uint32_t port;
} strata_hop;

typedef struct strata_hw strata_hw;

/* The allocator of a memory without `allocator =`. */
#define STRATA_HW_DEFAULT_ALLOCATOR "best-fit"

/* Checks a memory's allocator spec "NAME[:k=v,...]" for its capacity and
 * alignment (the allocators' layer supplies it); false with err, whose
 * message the loader prefixes with "FILE:LINE: [GROUP] KEY: ", KEY being
 * the allocator.KEY line the message quotes, else the allocator line. */
typedef bool (*strata_hw_allocator_check)(const char *spec, uint64_t capacity, uint64_t alignment,
                                          GError **err);

/* overrides: NULL or NULL-terminated "memory.hbm.capacity=16GiB" strings
 * (group kind, group name, key), applied before validation (for sweeps).
 * The plain loads check no allocator spec but its form; the _checked ones
 * run check_allocator (NULL: none) on each memory's. */
strata_hw *strata_hw_load(const char *path, const char *const *overrides, GError **err);
/* The same model loaded again, from its file or the text it was loaded
 * from, with the overrides it was loaded with and `more` after them (an
 * override of the same key in `more` replaces the first's): e.g. a slice,
 * more = {"hardware.devices=2", NULL}. NULL with err as a load's. */
strata_hw *strata_hw_reload(const strata_hw *hw, const char *const *more, GError **err);
/* The file the hardware file at path names as its base = (g_free), or NULL
 * (none, or not a regular file: a FIFO is left for the load to read once;
 * an unreadable file is the load's error): an input an output must not be. */
char *strata_hw_base_path(const char *path);
strata_hw *strata_hw_load_data(const char *data, const char *origin, const char *const *overrides,
                               GError **err);
strata_hw *strata_hw_load_checked(const char *path, const char *const *overrides,
                                  strata_hw_allocator_check check_allocator, GError **err);
strata_hw *strata_hw_load_data_checked(const char *data, const char *origin, const char *const *overrides,
                                       strata_hw_allocator_check check_allocator, GError **err);
void strata_hw_free(strata_hw *hw);

const char *strata_hw_name(const strata_hw *hw);
/* True when [hardware] sched = xla: async copies are copy-start/copy-done in
 * one program order (XLA), not CUDA streams. */
bool strata_hw_sched_xla(const strata_hw *hw);
/* True when [hardware] flow_sharing = latency: transfers that share a link
 * get shares in inverse proportion to their routes' latencies (SimGrid
 * CM02's TCP model: a flow's sharing penalty is its route latency,
 * src/surf/network_cm02.cpp:431 in 3.32), as TCP's RTT unfairness makes
 * them; false (the default, equal): every transfer on a link gets an equal
 * share, as link-level arbitration gives (NVLink, InfiniBand, TPU ICI;
 * docs/engine.md, "How transfers share a link"). The latency delays each
 * transfer's start the same either way. */
bool strata_hw_flow_sharing_latency(const strata_hw *hw);
/* Whose device the file describes: [hardware] vendor (amd, nvidia or
 * google), else "amd" where the collectives are RCCL's, else NULL (not
 * said). strata_hw_rocm: the vendor is amd (ROCm's software runs there;
 * hw_vendor.c). */
const char *strata_hw_vendor(const strata_hw *hw);
bool strata_hw_rocm(const strata_hw *hw);
/* [hardware] device_name: the part as its driver names it (torch.cuda.get_device_name, what vLLM's fused_moe
 * get_config_file_name puts in a tuned config's file name: "NVIDIA H200"), NULL when the file does not say. */
const char *strata_hw_device_name(const strata_hw *hw);
/* [hardware] compute_capability as MAJOR x 10 + MINOR (90 for an H100), 0 when the file does not say or a derived
 * file restated the device memory at another size (hw_vendor.c). */
uint32_t strata_hw_compute_capability(const strata_hw *hw);
const char *strata_hw_origin(const strata_hw *hw); /* file path */

/* The collective implementation the device interconnect declares
 * ([interconnect] collectives = NAME, default ideal): its row of the table
 * of implementations (hw/coll_impl.h: the library whose pick is the
 * default algorithm of a collective whose trace names none, and its cost
 * hooks), and the parameter block the row read from that group (NULL when
 * the row takes none; only the row reads it). */
typedef struct strata_coll_impl strata_coll_impl;
const strata_coll_impl *strata_hw_coll_impl(const strata_hw *hw);
const void *strata_hw_coll_params(const strata_hw *hw);

uint32_t strata_hw_memory_count(const strata_hw *hw);
const strata_memory_spec *strata_hw_memory(const strata_hw *hw, uint32_t index);
/* -1 when absent (a hash lookup); NULL name = the default device memory
 * (device 0's with several devices). */
int strata_hw_memory_index(const strata_hw *hw, const char *name);
uint32_t strata_hw_default_memory(const strata_hw *hw);

/* Devices: count (>= 1), devices per host (divides it) and hosts. */
uint32_t strata_hw_devices(const strata_hw *hw);
uint32_t strata_hw_devices_per_host(const strata_hw *hw);
uint32_t strata_hw_hosts(const strata_hw *hw);
/* Devices per scale-up domain (the device interconnect's `domain`; all of
 * them without one): devices D and E share a domain when D / it = E / it. */
uint32_t strata_hw_domain(const strata_hw *hw);
/* The scale-out network's NICs ([network]), for the collective libraries'
 * models: NICs per host, one NIC's bandwidth (bytes/s per direction), the
 * devices of a host that have one of their own, whether they are the
 * host's; false (out untouched) when the model has no network. */
typedef struct strata_hw_nics {
    uint32_t per_host;
    double bandwidth;
    double latency; /* per link of the network (a NIC to its leaf) */
    uint32_t devices;
    bool on_hosts;
    /* the PCIe link each NIC sits on ([network] pcie_generation,
     * pcie_lanes); 0, 0 where the file gives none */
    uint32_t pcie_generation, pcie_lanes;
    /* socket_link_bandwidth (bytes/s a direction); 0 where none */
    double socket_link;
} strata_hw_nics;
bool strata_hw_network_nics(const strata_hw *hw, strata_hw_nics *out);
/* The template (the memory or unit as declared, before instantiation):
 * index of the template named NAME ("hbm", never "hbm@3"), -1 when none;
 * NULL = the default memory's template / the first unit's. */
int strata_hw_memory_base_index(const strata_hw *hw, const char *name);
int strata_hw_compute_base_index(const strata_hw *hw, const char *name);
/* The instance of template memory `base` on `device` (a host memory: the
 * one on the device's host): O(1), no string built. device < devices. */
uint32_t strata_hw_memory_on(const strata_hw *hw, uint32_t base, uint32_t device);
uint32_t strata_hw_compute_on(const strata_hw *hw, uint32_t base, uint32_t device);
/* The name of the instance on `device` of memory `name` (NULL: the default
 * memory) or, with unit, of unit `name` (NULL: the first), as the model
 * names it, a string the model owns (no name is built): with several
 * devices the name of an instance (a trace's explicit "hbm@3") is itself,
 * found by a hash lookup, never parsed; a template's is its instance's on
 * `device`; a name the model lacks (the binder then says so) is returned
 * as written, and a unit of a model without units (name NULL) is
 * "compute". scratch is neither read nor written: its callers (sim/spmd's
 * naming, models/policy/pad.c) still pass one. */
const char *strata_hw_instance_name(const strata_hw *hw, const char *name, uint32_t device, bool unit,
                                    GString *scratch);
/* The site (device, or host) that a name of an instance says, as the
 * instances are named above (NAME@D, NAME@H): the number after the last '@'
 * (saturated at UINT64_MAX). False for a name that says none. Needs no model:
 * for a program naming "hbm@9" to be refused before it meets one. */
bool strata_hw_instance_site(const char *name, uint64_t *site);

uint32_t strata_hw_link_count(const strata_hw *hw);
const strata_link_spec *strata_hw_link(const strata_hw *hw, uint32_t index);

uint32_t strata_hw_compute_count(const strata_hw *hw);
const strata_compute_spec *strata_hw_compute(const strata_hw *hw, uint32_t index);

/* Runs every unit that gives both peak_clock and sustained_clock at the
 * sustained one: its flops, flops.DTYPE, vector_flops and
 * transcendental_flops times sustained / peak (what scales with the SM
 * clock; memory, links, launch times and operand_feed do not): what a
 * device busy for longer than its power controller's window runs at
 * (docs/hardware.md, the `sustained_clock` key; docs/serving.md, "The
 * clock under the power limit"). `strata serve` times its compute-bound
 * ops on such a copy (serve_cost.h). Returns the smallest ratio applied, 1
 * where no unit gives both. Call it once, right after loading. */
double strata_hw_run_at_sustained_clock(strata_hw *hw);
/* One unit's sustained / peak clock, without applying it: 1 where it does
 * not give both. (A run reads it on the unit it times its computes on: serve's
 * check and its duty filter alike, STRATA_SERVE_UNIT.) */
double strata_hw_compute_clock_ratio(const strata_hw *hw, uint32_t unit);
/* The units strata_hw_check_clock_rule reads: every unit that gives peak_clock (at least one). */
#define STRATA_HW_CLOCKED_UNITS (-1)
/* --clock RULE given on a command line (duty or sustained; peak or NULL: true) reads, on each unit the run
 * times its computes on, sustained_clock below peak_clock, and for duty clock_response too: one without them
 * ran the peak (or the sustained rule) under the rule's name at exit 0. unit: the one unit the run uses
 * (serve's, 0), or STRATA_HW_CLOCKED_UNITS (run's: its computes may run on any). False with err naming
 * path (the file as given), the unit and the key otherwise. */
bool strata_hw_check_clock_rule(const strata_hw *hw, const char *path, const char *rule, int unit, GError **err);
/* The duty rule's clock / peak for a filtered activity `duty` (the
 * clock_response / clock_free_duty keys above; sim/engine/engine_power.h):
 * 1 while duty <= free_duty, `floor` (sustained / peak) at duty = 1, linear
 * in between. free_duty below 1. */
double strata_hw_clock_at_duty(double duty, double free_duty, double floor);
/* The duty rule's filter (clock_response, a first-order lag of time
 * constant tau): its output `duty` after dt of activity x (0 idle, 1 the
 * whole unit busy), x + (duty - x) e^(-dt / tau). */
double strata_hw_duty_after(double duty, double x, double dt, double tau);
int strata_hw_compute_index(const strata_hw *hw, const char *name); /* NULL = first */
double strata_hw_compute_flops(const strata_hw *hw, uint32_t unit, strata_dtype dtype);
/* The fraction of its operand memory's bandwidth a library GEMM of `bytes` operand bytes streams at: the unit's
 * gemm_stream_curve read at bytes (hw_stream_curve.c), else gemm_stream_efficiency, else stream_efficiency, else 1. */
double strata_hw_gemm_stream_efficiency(const strata_kernel_spec *ks, double bytes);

/* Route between two memories. Returns false when no path exists (err set).
 * *hops is owned by hw (valid until strata_hw_free); a route from a memory
 * to itself has no hops. With several devices the route is computed on
 * first use and memoised. */
bool strata_hw_route(const strata_hw *hw, uint32_t from, uint32_t to, const strata_hop **hops,
                     uint32_t *n_hops, GError **err);

const char *strata_mem_kind_name(strata_mem_kind kind);

/* The graph between sites, for the platform (several devices; empty with
 * one): vertices 0..N-1 are the devices, N..N+H-1 the hosts, then one per
 * switch. An edge is one link between two sites, one way, costing
 * 1 + padding (padding: links of no capacity limit the platform adds so
 * that SimGrid's shortest path is this one). Edges are in the order the
 * platform must declare them (SimGrid numbers vertices by first
 * appearance and breaks ties by that number). */
typedef struct strata_site_edge {
    uint32_t from, to; /* vertices */
    uint32_t link;     /* hw link index */
    bool forward;      /* from the link's a to its b */
    uint32_t padding;
} strata_site_edge;

uint32_t strata_hw_site_count(const strata_hw *hw);
/* The vertex of a memory's site: its device, or N + its host. */
uint32_t strata_hw_memory_site(const strata_hw *hw, uint32_t memory);
/* The interconnect name of a switch vertex; NULL for devices and hosts. */
const char *strata_hw_site_switch(const strata_hw *hw, uint32_t vertex);
/* The memory links between sites join (STRATA_HW_NO_MEMORY for a switch
 * or a site no such link reaches). */
uint32_t strata_hw_site_gateway(const strata_hw *hw, uint32_t vertex);
uint32_t strata_hw_site_edge_count(const strata_hw *hw);
const strata_site_edge *strata_hw_site_edge(const strata_hw *hw, uint32_t index);

/* Help text: every group and key a hardware file takes, from the tables
 * the loader checks against, one line each (g_free). */
char *strata_hw_describe(const char *indent);

/* [hardware] source (NULL when absent). */
const char *strata_hw_source(const strata_hw *hw);

/* The model's fingerprint: SHA-256 (hex) of every group, key and value of
 * the hardware file as built, after its base file and the overrides
 * (`--set`, a slice's hardware.devices), in file order. Two models with the
 * same fingerprint were built from the same keys and values, so bind a
 * trace to the same indices and figures (engine.h's compiled traces). */
const char *strata_hw_fingerprint(const strata_hw *hw);

#endif
