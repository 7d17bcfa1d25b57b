/*
 * results.h: what a run produced, whoever ran it (engine, untimed replay,
 * real backend), and the writers that turn it into JSON and a summary.
 *
 * A plain value: producers fill it, writers read it. Its JSON form (README,
 * "Results JSON") is a contract, extended, never changed:
 *   status, makespan_s, ops, oom, memories.NAME.{...}, links.NAME.{...},
 *   streams.NAME.{...}, compute.NAME.{...}
 * Writers emit keys in a fixed order and numbers with fixed precision, so
 * the same results give byte-identical files (no wall-clock time unless the
 * producer put one in `extra`).
 */
#ifndef STRATA_RESULTS_H
#define STRATA_RESULTS_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "core/jsonout.h"
#include "trace/op.h"

#define STRATA_NO_DEVICE UINT32_MAX
#define STRATA_NO_ROUTE UINT32_MAX

/* Where a row lives on a machine of several devices, as the hardware model
 * says (never read back out of its name): the devices it belongs to and,
 * for a host-side row (a host memory, a link between host memories), the
 * hosts; a link between two chips or two hosts has both ends. Unused
 * entries are STRATA_NO_DEVICE (the appenders set them so). */
typedef struct strata_place {
    uint32_t device[2];
    uint32_t host[2];
} strata_place;

typedef struct strata_memory_result {
    char *name;
    strata_place place;         /* device[0]: its device (NO_DEVICE for a host memory); host[0]: its host */
    char *kind;                 /* "device", "host", "onchip" */
    char *allocator;            /* full spec, with parameters */
    uint64_t capacity_bytes;
    uint64_t peak_allocated_bytes;
    uint64_t peak_reserved_bytes;
    double fragmentation_peak;  /* max over time of 1 - largest_free/free_in_reserved */
    uint64_t internal_waste_bytes; /* rounding, at the allocated peak */
    /* As jax.stages.Compiled.memory_analysis() reports them (ledger/ledger.h):
     * total = temp_peak + argument + output - alias. */
    uint64_t argument_bytes;
    uint64_t output_bytes;
    uint64_t alias_bytes;
    uint64_t temp_peak_bytes;
    uint64_t jax_total_bytes;
    uint64_t padding_bytes;     /* bytes added by a pad policy (0 if none) */
    /* Traffic through the memory's own port (engine): copies that read,
     * write or pass through it, and compute operand bytes. */
    uint64_t port_bytes;
    double port_busy_s;         /* time with at least one transfer on the port */
} strata_memory_result;

typedef struct strata_link_result {
    char *name;
    strata_place place;         /* hw.h's link device[] and host[] */
    uint64_t bytes;             /* bytes carried, both directions */
    double busy_s;              /* time with at least one transfer on it */
} strata_link_result;

typedef struct strata_stream_result {
    char *name;
    strata_place place;         /* device[0]: the device that runs it */
    uint64_t ops;
    double busy_s;              /* time executing copies and computes */
    double stall_s;             /* time blocked in wait (and behind a busy resource) */
} strata_stream_result;

typedef struct strata_compute_result {
    char *name;
    strata_place place;         /* device[0]: its device */
    double busy_s;
    double flops;
    /* under a power-limit rule (sim/engine/engine_power.h), else 0: the clock / peak its
     * computes ran at, averaged over their time, and the least */
    double clock_mean, clock_min;
} strata_compute_result;

typedef struct strata_oom_info {
    uint64_t op_index;          /* 0-based index of the failing op */
    uint64_t line;              /* trace line */
    char *memory;
    char *buffer;
    char *stream;
    uint64_t requested_bytes;
    uint64_t free_bytes;        /* capacity - allocated */
    uint64_t largest_free_bytes;
    uint64_t planned_bytes;     /* a planning allocator's height for the whole
                                 * program (xla, offline), else 0 */
} strata_oom_info;

/* One executed op, when spans are recorded (timelines, validate). */
typedef struct strata_op_span {
    uint64_t op_index;
    uint64_t line;
    strata_op_kind kind;
    uint32_t stream;            /* index into streams */
    double start_s, end_s;
    uint64_t bytes;             /* copy bytes, alloc size, compute operand bytes */
    int32_t memory;             /* ALLOC/FREE: memory index into memories; else -1 */
    int32_t src_memory, dst_memory; /* COPY: memory indices; else -1 */
    char *label;                /* buffer, event or compute label */
    uint32_t device;            /* the device that ran it (STRATA_NO_DEVICE: not recorded) */
    uint32_t route;             /* COPY: the route it took, an index into the results'
                                 * routes (strata_results_route_links); STRATA_NO_ROUTE =
                                 * not recorded (timeline.c then names the track after
                                 * the two memories) */
} strata_op_span;

/* Memory in use after an alloc/free, when spans are recorded. */
typedef struct strata_mem_sample {
    double t_s;
    uint32_t memory;
    uint64_t allocated, reserved;
    strata_tag tag;             /* tag of the buffer that changed */
    int64_t delta;              /* +size on alloc, -size on free */
    uint64_t offset;            /* address of the block that changed */
    uint64_t buffer_id;
} strata_mem_sample;

/* What one collective of a multi-device run is, as the SPMD expansion
 * describes it (spmd.h strata_coll_info) and the results report it. */
typedef struct strata_collective_desc {
    uint32_t index;             /* 0-based, in trace order */
    uint64_t line;              /* of the collective in the program */
    strata_op_kind kind;
    char *axis;                 /* owned by whoever holds the desc */
    const char *algo;           /* its name (static: models/collective's table) */
    uint32_t group_size;
    uint64_t bytes;             /* per device, as nccl-tests counts: all-reduce BUF, all-gather OUT, others IN */
    /* an algorithm tuned by the hardware's implementation (algo=nccl):
     * NCCL's algorithm, protocol and channels, in NCCL's names (static
     * strings; NULL and 0 otherwise) */
    const char *nccl_algorithm, *nccl_protocol;
    uint32_t nccl_channels;
} strata_collective_desc;

/* One collective of a multi-device run (results/collectives.h). */
typedef struct strata_collective_result {
    strata_collective_desc desc; /* index set when the row is made, the rest when its first step ran */
    double start_s, end_s;      /* first step's start, last step's end; start_s < 0: none ran */
} strata_collective_result;

typedef struct strata_results {
    char *producer;             /* "engine", "replay", "host", "cuda" */
    char *hardware;             /* hardware model name, or NULL */
    char *trace;                /* trace origin */
    bool oom;                   /* status "oom" when true, "ok" otherwise */
    strata_oom_info oom_info;   /* valid when oom */
    double makespan_s;
    uint64_t ops;
    GArray *memories;           /* strata_memory_result */
    GArray *links;              /* strata_link_result */
    GArray *streams;            /* strata_stream_result */
    GArray *compute;            /* strata_compute_result */
    GArray *spans;              /* strata_op_span, or NULL when not recorded */
    GArray *mem_samples;        /* strata_mem_sample, or NULL when not recorded */
    /* While set (borrowed, timeline.h), spans and samples are written there
     * as they come instead of being kept in spans and mem_samples. */
    struct strata_timeline *timeline;
    JsonObject *extra;          /* more top-level keys (owned; may be NULL) */
    uint32_t devices;           /* the model's devices; 0 or 1: one device, no device keys */
    char *mesh;                 /* the trace's option mesh=, or NULL */
    /* With classes of devices (spmd/spmd_classes.h): the devices simulated,
     * one per class, and the symmetries that make the classes ("data+1");
     * 0 and NULL when every device was simulated. */
    uint32_t classes;
    char *symmetry;
    /* Where `strata run`'s default found no exact classes and ran `fast`
     * instead (spmd.h, AUTO): why; NULL otherwise (the mode asked ran). */
    char *fallback;
    GArray *collectives;        /* strata_collective_result, by index; NULL until the first */
    /* The routes copies took, by id (a span's `route`): route i crosses the
     * links route_links[route_start[i] .. route_start[i + 1]), sorted and
     * unique. Both NULL until the first route. */
    GArray *route_links;        /* uint32_t: link indices, route after route */
    GArray *route_start;        /* uint32_t: routes + 1 entries */
} strata_results;

strata_results *strata_results_new(const char *producer);
void strata_results_free(strata_results *r);
/* Appenders: the strings are copied; return the element for filling in. */
strata_memory_result *strata_results_add_memory(strata_results *r, const char *name);
/* The memory named `name`, or NULL. */
const strata_memory_result *strata_results_memory(const strata_results *r, const char *name);
strata_link_result *strata_results_add_link(strata_results *r, const char *name);
strata_stream_result *strata_results_add_stream(strata_results *r, const char *name);
strata_compute_result *strata_results_add_compute(strata_results *r, const char *name);
void strata_results_set_oom(strata_results *r, uint64_t op_index, uint64_t line, const char *memory,
                            const char *buffer, const char *stream, uint64_t requested,
                            uint64_t free_bytes, uint64_t largest_free);
/* After strata_results_set_oom: the failing memory's allocator placed the
 * whole program before it ran, and its plan is `bytes` high. */
void strata_results_set_oom_plan(strata_results *r, uint64_t bytes);
/* Appends the next route (id = the count before the call): the links it
 * crosses, in any order and with repeats (kept sorted and unique). */
uint32_t strata_results_add_route(strata_results *r, const uint32_t *links, uint32_t n);
uint32_t strata_results_route_count(const strata_results *r);
/* Route `route`'s links (sorted, unique); none for an unknown route. */
const uint32_t *strata_results_route_links(const strata_results *r, uint32_t route, uint32_t *n);
void strata_results_enable_spans(strata_results *r);
strata_op_span *strata_results_add_span(strata_results *r, const char *label);
/* A finished span (its label copied), or written to r->timeline when set.
 * Spans from strata_results_add_span() start with no device and no route. */
void strata_results_put_span(strata_results *r, const strata_op_span *s);
void strata_results_add_sample(strata_results *r, const strata_mem_sample *s);
/* Top-level extension key (takes node). */
void strata_results_set_extra(strata_results *r, const char *key, JsonNode *node);

/* JSON (results_json.c). Byte counts above INT64_MAX, which json-glib's
 * numbers cannot hold, are strings "\001u64:DIGITS" in the node, written as
 * the bare number by strata_json_text() (core/jsonout.h). */
JsonNode *strata_results_to_json(const strata_results *r);
char *strata_results_to_json_text(const strata_results *r); /* pretty, ends in newline */
bool strata_results_write_json(const strata_results *r, const char *path, GError **err);
/* One op of a run as a JSON row, the next element of the array b has
 * open: {index, line, kind, stream, label} (NULL stream or label: ""),
 * then the n members of `more` (replay's spans: its times and bytes;
 * validate's ops: the simulated and measured durations). */
void strata_results_json_op(JsonBuilder *b, uint64_t index, uint64_t line, strata_op_kind kind, const char *stream,
                            const char *label, const strata_json_field *more, size_t n);

/* Chrome trace-event / Perfetto JSON timeline from spans and mem_samples
 * (timeline.c): a track per stream, link and memory, counters for memory in
 * use; in the format path's extension names (timeline.h: ".pftrace",
 * Perfetto's protobuf trace). */
bool strata_results_write_timeline(const strata_results *r, const char *path, GError **err);
/* (onto an open stream: strata_results_write_timeline_as, timeline.h) */

/* The human summary of `strata run` (summary.c). */
void strata_results_print_summary(const strata_results *r, FILE *out);
/* Its table of what memory_analysis() reports per memory (argument, output,
 * alias, temp and total bytes), for memories with a non-zero total. */
void strata_results_print_jax(const strata_results *r, FILE *out);

#endif
