/*
 * hw.h: the hardware model, read from a GLib key file (the files in configs/hw).
 *
 *   [hardware]      name, source (text), default_memory (optional; else the
 *                   first memory of kind device), sched = xla|cuda (the
 *                   execution model the copy policies default to; cuda)
 *   [memory NAME]   kind = device|host|onchip, capacity, bandwidth, latency,
 *                   allocator (NAME, default best-fit), alignment (default 256),
 *                   pageable (bool, host only), allocator.KEY = VALUE...
 *   [link NAME]     between = MEM MEM, bandwidth (each direction), latency,
 *                   duplex = full|half
 *   [compute NAME]  flops (peak; flops.bf16 = ... per dtype), operands = MEM,
 *                   overhead (fixed cost per op, default 0), launch (fixed
 *                   cost once, on the unit's first op, default 0), tile (the
 *                   side of a systolic array, default 0: see the engine)
 *   [params NAME]   parameters of the workload or policy NAME, checked against
 *                   its declared table (strata_hw_params)
 *
 * Unknown groups or keys, missing required keys, values outside the sane
 * ranges (docs/hardware.md) and an allocator that does not exist or does not
 * take the allocator.KEY given are STRATA_ERROR_INPUT errors naming the
 * file, the line, the group and the key. Numbers take units (core/units.h).
 *
 * Routes: the links form an undirected graph over memories; the route from A
 * to B is the path with the fewest hops, ties broken by declaration order
 * (deterministic). Host to VMEM therefore goes host->HBM->VMEM when that is
 * the only path.
 *
 * Invariants: names are unique per kind; every link joins two declared,
 * distinct memories; indices are stable (declaration order); the model is
 * immutable after load.
 */
#ifndef STRATA_HW_H
#define STRATA_HW_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "trace/op.h"

typedef enum { STRATA_MEM_DEVICE, STRATA_MEM_HOST, STRATA_MEM_ONCHIP } strata_mem_kind;

typedef struct strata_memory_spec {
    const char *name;
    strata_mem_kind kind;
    uint64_t capacity;     /* bytes */
    double bandwidth;      /* bytes/s: the memory's own port, shared by all traffic */
    double latency;        /* seconds: access latency seen by compute operands */
    const char *allocator; /* allocator spec "NAME[:k=v,...]" built from allocator and allocator.* keys */
    uint64_t alignment;    /* bytes, power of two */
    bool pageable;         /* host memory that is not pinned */
} strata_memory_spec;

typedef struct strata_link_spec {
    const char *name;
    uint32_t a, b;         /* memory indices */
    double bandwidth;      /* bytes/s in each direction */
    double latency;        /* seconds */
    bool full_duplex;      /* each direction has its own bandwidth */
} strata_link_spec;

typedef struct strata_compute_spec {
    const char *name;
    double flops;                          /* peak FLOP/s, any dtype */
    double flops_by_dtype[STRATA_DTYPE__COUNT]; /* 0 = use flops */
    uint32_t operands;                     /* memory index the unit reads operands from */
    double overhead;                       /* seconds added to every compute op */
    double launch;                         /* seconds added once, to the first op on the unit */
    uint64_t tile;                         /* systolic array side (0: none): a matmul's K and N
                                              are padded up to multiples of it */
} strata_compute_spec;

/* One hop of a route: link index and direction (true = from a to b). */
typedef struct strata_hop {
    uint32_t link;
    bool forward;
} strata_hop;

typedef struct strata_hw strata_hw;

/* overrides: NULL or NULL-terminated "memory.hbm.capacity=16GiB" strings
 * (group kind, group name, key), applied before validation (for sweeps). */
strata_hw *strata_hw_load(const char *path, const char *const *overrides, GError **err);
strata_hw *strata_hw_load_data(const char *data, const char *origin, const char *const *overrides,
                               GError **err);
void strata_hw_free(strata_hw *hw);

const char *strata_hw_name(const strata_hw *hw);
/* True when [hardware] sched = xla: async copies are copy-start/copy-done in
 * one program order (XLA), not CUDA streams. */
bool strata_hw_sched_xla(const strata_hw *hw);
const char *strata_hw_origin(const strata_hw *hw); /* file path */

uint32_t strata_hw_memory_count(const strata_hw *hw);
const strata_memory_spec *strata_hw_memory(const strata_hw *hw, uint32_t index);
/* -1 when absent; NULL name = the default device memory. */
int strata_hw_memory_index(const strata_hw *hw, const char *name);
uint32_t strata_hw_default_memory(const strata_hw *hw);

uint32_t strata_hw_link_count(const strata_hw *hw);
const strata_link_spec *strata_hw_link(const strata_hw *hw, uint32_t index);

uint32_t strata_hw_compute_count(const strata_hw *hw);
const strata_compute_spec *strata_hw_compute(const strata_hw *hw, uint32_t index);
int strata_hw_compute_index(const strata_hw *hw, const char *name); /* NULL = first */
double strata_hw_compute_flops(const strata_hw *hw, uint32_t unit, strata_dtype dtype);

/* Route between two memories. Returns false when no path exists (err set).
 * *hops is owned by hw; a route from a memory to itself has no hops. */
bool strata_hw_route(const strata_hw *hw, uint32_t from, uint32_t to, const strata_hop **hops,
                     uint32_t *n_hops, GError **err);

const char *strata_mem_kind_name(strata_mem_kind kind);

/* Help text: every group and key a hardware file takes, from the tables
 * the loader checks against, one line each (g_free). */
char *strata_hw_describe(const char *indent);

/* [hardware] source (NULL when absent). */
const char *strata_hw_source(const strata_hw *hw);
/* A [params NAME] group holds parameters of the workload or policy NAME,
 * already checked against its table: returns them as "k=v,k=v" in file
 * order (for strata_params_new()), or NULL when there is no such group. */
const char *strata_hw_params(const strata_hw *hw, const char *name);

#endif
