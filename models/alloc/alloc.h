/*
 * alloc.h: the allocator interface, and the table of allocators by name.
 *
 * An allocator manages one memory of `capacity` bytes as an address space
 * [0, capacity). The engine (sim/engine) and the untimed replay (sim/replay)
 * drive every memory through this interface; models/alloc/ holds one file per
 * allocator, each exporting one `const strata_alloc_type`.
 *
 * Terms: *allocated* bytes are the sizes the program asked for, live now;
 * *reserved* bytes are what the allocator holds from the memory (segments,
 * regions, or for simple allocators the span of used blocks, rounding
 * included); *largest free* is the biggest request that could be served
 * without reserving more. Fragmentation at an instant is
 * 1 - largest_free / free_in_reserved (0 when nothing is free).
 *
 * Invariants every allocator keeps, checked by strata_allocator_check()
 * (walks the blocks): after every op by `strata alloc` in debug builds and
 * by every consumer given --check / --check-allocators; in debug builds also
 * once as each allocator is freed (strata_allocator_free; planning
 * allocators excepted, see offline.c):
 *  1. blocks lie inside [0, address space) (capacity, or stats'
 *     address_space when larger) and never overlap;
 *  2. allocated <= reserved <= capacity;
 *  3. the sum of live block sizes equals the allocated bytes plus rounding
 *     (internal_waste), and the sum of their requested sizes the allocated
 *     bytes;
 *  4. largest_free <= free_in_reserved <= reserved.
 * Each model states and asserts its own structural invariants besides.
 */
#ifndef STRATA_ALLOC_H
#define STRATA_ALLOC_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include "core/params.h"
#include "core/progress.h"

typedef struct strata_alloc_stats {
    uint64_t allocated;        /* requested bytes of live buffers */
    uint64_t reserved;         /* bytes held from the memory */
    uint64_t largest_free;     /* largest free block inside reserved space */
    uint64_t free_in_reserved; /* reserved - bytes of live blocks */
    uint64_t internal_waste;   /* bytes of live blocks beyond what was asked (rounding) */
    uint64_t n_segments;       /* segments/regions (1 for a flat heap) */
    /* Size of the address range blocks lie in; 0 = capacity. Larger only for
     * models of virtual memory (the caching allocator's segments, which the
     * driver maps anywhere: only reserved bytes are bounded by capacity). */
    uint64_t address_space;
    /* Offline planners: the planned arena height and its lower bound (the
     * peak of live bytes); 0 for online allocators. */
    uint64_t planned_height;
    uint64_t plan_lower_bound;
} strata_alloc_stats;

typedef enum { STRATA_BLOCK_FREE, STRATA_BLOCK_USED } strata_block_state;

typedef struct strata_block {
    uint64_t offset, size;   /* address range [offset, offset+size) */
    strata_block_state state;
    uint64_t id;             /* buffer id when USED */
    uint64_t requested;      /* bytes asked for when USED */
    uint32_t segment;        /* segment number, 0 for flat heaps */
} strata_block;

typedef void (*strata_block_visit)(const strata_block *block, void *user);

/* A visit and its user data, passed through g_tree_foreach by the walks. */
typedef struct strata_block_walk {
    strata_block_visit visit;
    void *user;
} strata_block_walk;

/* Calls visit with the block of these fields (used: USED, else FREE). */
void strata_block_visit_fields(strata_block_visit visit, void *user, uint64_t offset, uint64_t size, bool used,
                               uint64_t id, uint64_t requested, uint32_t segment);
/* Orders blocks by size, then offset: -1, 0 or 1 (the free-list order). */
int strata_block_order(uint64_t size_a, uint64_t offset_a, uint64_t size_b, uint64_t offset_b);

/* A buffer's lifetime, for allocators that plan ahead (offline). start and
 * end are op indices in the order the consumer will issue them; they alone
 * decide which buffers overlap. When the trace stamps both the alloc and the
 * free with at=, has_times is set and t_start/t_end (seconds) give the
 * lifetime's real length, which a planner may use to rank buffers. */
typedef struct strata_lifetime {
    uint64_t id, size;
    uint64_t start, end; /* live over [start, end); end = UINT64_MAX if never freed */
    bool has_times;
    double t_start, t_end;
} strata_lifetime;

/* A lifetime opened by the alloc at op index `start` (has_at/at_s: the
 * op's at= stamp), and closed by the free at op index `end`: it keeps real
 * times only when both ops have them. */
strata_lifetime strata_lifetime_open(uint64_t id, uint64_t size, uint64_t start, bool has_at,
                                     double at_s);
void strata_lifetime_close(strata_lifetime *l, uint64_t end, bool has_at, double at_s);

/* A GCompareDataFunc for trees keyed by offsets held as pointers
 * (GSIZE_TO_POINTER), as allocators index blocks by address. */
gint strata_alloc_cmp_offset(gconstpointer a, gconstpointer b, gpointer user);

/* The allocator a memory gets when neither its hardware model nor the
 * command line names one. */
#define STRATA_ALLOC_DEFAULT "best-fit"

typedef struct strata_alloc_config {
    uint64_t capacity;
    uint64_t alignment;          /* power of two; 0 = the allocator's own */
    const strata_params *params; /* validated against the type's params table */
} strata_alloc_config;

typedef struct strata_alloc_type {
    const char *name;
    const char *summary;                 /* one line for --help and errors */
    const strata_param_def *params;      /* NULL-name terminated; may be empty */
    void *(*create)(const strata_alloc_config *cfg, GError **err);
    void (*destroy)(void *self);
    /* false: out of memory (after any release-and-retry the design does). */
    bool (*alloc)(void *self, uint64_t id, uint64_t size, uint32_t stream, uint64_t *offset);
    void (*free)(void *self, uint64_t id);
    /* Return cached, unused memory to the device (empty_cache). May be NULL. */
    void (*release)(void *self);
    void (*stats)(const void *self, strata_alloc_stats *out);
    void (*walk)(const void *self, strata_block_visit visit, void *user);
    /* Optional: every lifetime before the first alloc (offline planners);
     * progress: where to show how planning goes (silent when made on NULL). */
    bool (*plan)(void *self, const strata_lifetime *lifetimes, size_t n, strata_progress *progress,
                 GError **err);
    /* Optional: the program's event ops, in the order its allocations run.
     * is_record: `stream` recorded record number `seq` of event `event`;
     * else `stream` has waited for that record (called once the wait is
     * over, never before the record's own call). NULL for allocators that
     * ignore ordering between streams. */
    void (*event)(void *self, bool is_record, uint32_t stream, uint32_t event, uint64_t seq);
    /* A planner (plan set) whose lifetimes are one sequential program's, in
     * its op order, whatever stream allocates (XLA's schedule: async starts
     * and dones are ops of that one program); false: program order holds
     * only when one stream allocates. */
    bool one_program;
} strata_alloc_type;

/* The registry: a NULL-terminated static array, in models/alloc/alloc.c. */
const strata_alloc_type *const *strata_alloc_types(void);
const strata_alloc_type *strata_alloc_type_find(const char *name);
/* "bump, first-fit, ..." (g_free) */
char *strata_alloc_type_names(void);

/* An allocator instance. */
typedef struct strata_allocator strata_allocator;

/* spec: "NAME[:k=v,...]"; extra: more "k=v,..." applied after spec's (may be NULL).
 * Unknown names or parameters: STRATA_ERROR_INPUT listing the known ones. */
strata_allocator *strata_allocator_new(const char *spec, uint64_t capacity, uint64_t alignment,
                                       GError **err);
/* Like strata_allocator_new, with base_kv ("k=v,...", may be NULL) applied
 * before spec's own values, so spec's win (trace `option allocator.K=V`). */
strata_allocator *strata_allocator_new_with_base(const char *spec, const char *base_kv,
                                                 uint64_t capacity, uint64_t alignment,
                                                 GError **err);
void strata_allocator_free(strata_allocator *a);
const char *strata_allocator_name(const strata_allocator *a);
const char *strata_allocator_spec(const strata_allocator *a); /* with every parameter */
bool strata_allocator_needs_plan(const strata_allocator *a);
/* True when its plan takes every stream's allocs in one program order
 * (strata_alloc_type.one_program). */
bool strata_allocator_one_program(const strata_allocator *a);
bool strata_allocator_plan(strata_allocator *a, const strata_lifetime *l, size_t n, GError **err);
/* Where plan() shows its progress (borrowed; NULL, the default: nowhere). */
void strata_allocator_set_progress(strata_allocator *a, strata_progress *progress);
bool strata_allocator_alloc(strata_allocator *a, uint64_t id, uint64_t size, uint32_t stream,
                            uint64_t *offset);
void strata_allocator_free_block(strata_allocator *a, uint64_t id);
void strata_allocator_release(strata_allocator *a);
/* A record or wait op (STRATA_OP_RECORD/WAIT fields) for the allocator's
 * `event` hook; nothing when the type has none. */
void strata_allocator_event(strata_allocator *a, bool is_record, uint32_t stream, uint32_t event,
                            uint64_t seq);
/* Whether the type has an `event` hook (else events need not reach it). */
bool strata_allocator_takes_events(const strata_allocator *a);
void strata_allocator_stats(const strata_allocator *a, strata_alloc_stats *out);
void strata_allocator_walk(const strata_allocator *a, strata_block_visit visit, void *user);
/* Walks blocks and checks invariants 1-4. Returns false with err on a violation. */
bool strata_allocator_check(const strata_allocator *a, GError **err);

#endif
