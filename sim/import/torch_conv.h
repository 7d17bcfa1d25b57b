/*
 * torch_conv.h: the converter shared by the torch_*.c files that turn a
 * PyTorch memory snapshot into ops (internal to sim/import; the public API
 * is torch.h).
 *
 * One conv runs two passes over the snapshot's items (segments and the
 * device's events): pass 1 (torch_state.c) validates them and rebuilds the
 * state at the first event; between the passes the setup ops, the ground
 * truth and the `release` decisions are made (torch_history.c); pass 2
 * (torch_events.c) turns the events into ops. The ops are compact (cop, 48
 * bytes) and read out through a strata_source (torch_ops.c); the snapshot's
 * values are read by torch_read.c.
 *
 * Invariants:
 *  1. Buffer names are b.N (live blocks and allocs), seg.N and fill.N
 *     (setup only), N one counter in order of creation, so names never
 *     repeat; `live` maps an address to the N of the buffer that holds it,
 *     and every such buffer was allocated and not yet freed in the trace.
 *  2. Every op is one the trace checker accepts: sizes above 0, names and
 *     notes a trace can hold (tests/fuzz/fuzz_pickle.c checks it).
 *  3. The ground truth (initial/peak/final reserved, segment_alloc sizes)
 *     comes from the snapshot's own events, independent of any model.
 *  4. Both modes (streamed, whole document) run the same functions on the
 *     same items in the same order, so their traces are byte-identical.
 */
#ifndef STRATA_TORCH_CONV_H
#define STRATA_TORCH_CONV_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "alloc/caching.h"
#include "import/pickle.h"
#include "import/torch.h"
#include "trace/op.h"
#include "trace/source.h"

#define SMALL_REQUEST CACHING_SMALL_SIZE /* requests up to this go to the small pool */
#define SMALL_SEGMENT CACHING_SMALL_BUFFER /* small-pool segment size */
#define BLOCK_ROUND ((uint64_t)CACHING_MIN_BLOCK) /* the caching allocator's rounding */
#define EMPTY_BUFFER G_MAXSIZE     /* `live` value of a dropped 0-byte alloc */

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

typedef enum {
    EV_ALLOC,
    EV_FREE_REQUESTED,
    EV_FREE_COMPLETED,
    EV_SEGMENT_ALLOC,
    EV_SEGMENT_FREE,
    EV_SEGMENT_MAP,
    EV_SEGMENT_UNMAP,
    EV_SNAPSHOT,
    EV_OOM,
    EV_USER,  /* user_defined: an annotation, no memory */
    EV_OTHER, /* an action this importer does not know */
} ev_action;

typedef struct tevent {
    ev_action action;
    uint64_t addr, size;
    int64_t stream;
    bool has_time;
    int64_t time_us;
    uint32_t note; /* pass 2, allocs: frame label string index + 1; 0: none */
    bool empty_cache; /* segment_free/unmap: a frame names empty_cache */
} tevent;

typedef struct tseg {
    uint64_t addr, size;
    int64_t stream;
    bool small;
} tseg;

typedef struct tblock {
    uint64_t addr, requested;
    int64_t stream;
} tblock;

/* Pass 1, per address: what the oldest event there says of the state
 * before it, and whether the latest event needs the state after it. */
typedef enum { FIRST_ABSENT, FIRST_PRESENT } first_state;
typedef struct addr_first {
    first_state first;
    bool pending;     /* latest event: an alloc (segment_alloc) to check on undo */
    uint64_t size;    /* FIRST_PRESENT: the size and stream the event gives */
    int64_t stream;
} addr_first;

/* Pass 1: an event that changes reserved bytes or may be part of a run of
 * segment frees (segment_*, snapshot, oom). */
typedef struct segev {
    uint64_t index; /* event index */
    uint64_t addr;  /* oom: the device's free bytes */
    uint64_t size;
    ev_action action;
    bool has_time;
    int64_t time_us;
    int64_t stream;
    bool empty_cache;   /* segment_free/unmap: a frame names empty_cache */
    bool has_request;   /* segment_alloc: the alloc right after it (what it was made for) */
    uint64_t request;
    int64_t request_stream;
} segev;

/* Pass 1, per device of the file: its events other than `snapshot`
 * markers and its segments. */
typedef struct device_count {
    uint64_t events, segments;
} device_count;

/* ---- the converted trace: compact ops --------------------------------------- */

/* Buffer names are PREFIX.N; the prefix by kind. */
typedef enum { NAME_NONE, NAME_B, NAME_SEG, NAME_FILL, NAME_PIN } name_kind;

/* One op in 48 bytes: strings are indices into the trace's string table. */
typedef struct cop {
    uint8_t kind;      /* strata_op_kind: ALLOC, FREE or RELEASE */
    uint8_t name_kind; /* name_kind */
    bool has_addr, has_at;
    uint32_t stream;   /* string index */
    uint32_t note;     /* string index + 1; 0: none */
    uint32_t memory;   /* string index + 1 of the op's memory; 0: the default (the device's) */
    uint64_t number;   /* N of the buffer's name */
    uint64_t size, addr;
    int64_t at_us;     /* microseconds since the first event */
} cop;

struct conv;

typedef struct ctrace {
    GArray *ops;               /* cop: the setup, then (kept mode) every event's ops */
    GArray *window;            /* cop (streaming): the ops of the events read last */
    size_t window_next;
    struct conv *events;       /* streaming: reads the events on demand; NULL: all in ops */
    GPtrArray *strings;        /* interned strings (g_free) */
    GHashTable *string_index;  /* string -> index + 1 */
    GPtrArray *option_keys;    /* `option` lines, before every op (g_free) */
    GPtrArray *option_values;
    /* source cursor */
    size_t next;
    strata_op op;
    char name[48];
} ctrace;

/* ---- the converter ----------------------------------------------------------- */

/* The lists handed out item by item: the segments, every device's events
 * (other devices' are dropped unread), and the external annotations a
 * snapshot may carry (unused here; streamed only so they are not kept). */
enum { SEL_SEGMENTS, SEL_EVENTS, SEL_ANNOTATIONS };

typedef struct conv {
    const strata_pickle *p;    /* the document the items are read from */
    strata_pickle_stream *stream; /* streaming: owns p; NULL when the items are in p */
    char *origin;
    strata_torch_options opt; /* opt.device: the device read (0 while AUTO or ALL is settled) */
    int want;                  /* the device asked for: N, AUTO or ALL */
    strata_torch_summary *sum; /* the caller's, or own_sum */
    strata_torch_summary own_sum;
    GError **err;              /* where torch_schema() reports */
    /* pass 1 */
    GError *seg_err, *ev_err;  /* the first bad segment, the first bad event */
    uint64_t n_events;
    uint64_t n_history;        /* events other than snapshot markers */
    ev_action last_history;    /* the action of the last of those */
    GHashTable *devices;       /* device index -> device_count* (g_free) */
    uint64_t derived_addresses;         /* live blocks without `address` (older snapshots) */
    uint64_t derived_requested_history; /* ... without requested_size: history[0].real_size */
    uint64_t derived_requested_size;    /* ... without either: the block's size */
    GHashTable *unknown;       /* unknown action -> count (g_free keys) */
    uint64_t final_reserved;   /* bytes of the device's final segments */
    bool have_t0;
    int64_t t0;
    GHashTable *seg_by_addr;   /* addr -> tseg* (g_free): final, then initial segments */
    GHashTable *block_by_addr; /* addr -> tblock* (g_free): final, then initial live blocks */
    GHashTable *seg_first;     /* addr -> addr_first* (g_free) */
    GHashTable *block_first;   /* addr -> addr_first* (g_free) */
    GArray *segevs;            /* segev */
    GArray *releases;          /* uint64_t: index << 1 (| 1: an oom's retry) of the events that become a `release` */
    uint64_t setup_inconsistent;
    /* the output */
    ctrace *out;
    GArray *streams;           /* int64_t stream, string index: pairs */
    uint32_t note_setup;       /* string index of "setup" */
    uint32_t note_empty_cache; /* string index + 1 of "empty_cache" */
    uint32_t note_oom_retry;   /* string index + 1 of "oom_retry" */
    GHashTable *setup_live;    /* addr -> b.N + 1 after the setup */
    uint64_t setup_next_buffer;
    /* pass 2 */
    GArray *sink;              /* where torch_emit() appends: out->ops or out->window */
    GHashTable *live;          /* addr -> buffer number + 1 (b.N) while emitting */
    uint64_t next_buffer;
    uint64_t event_index;      /* events of the device seen so far */
    size_t next_release;       /* index into releases */
    uint64_t n_allocs, n_frees, emit_inconsistent;
    bool events_done;
    /* the pinned host allocator's part (torch_host.c): its event ops, made
     * between the passes, merged into pass 2 by time */
    struct host_part *host;
    uint32_t device_memory;    /* with host ops: string index + 1 of "hbm", the memory device
                                * releases name (torch.cuda.empty_cache() leaves pinned memory) */
} conv;
typedef struct emit_at {
    bool has_at;
    int64_t at_us;
} emit_at;

static const emit_at no_at = {false, 0};

/* ---- torch_ops.c: the compact ops and the source over them ---------------- */

ctrace *torch_ctrace_new(void);
void torch_ctrace_free(void *self);
uint32_t torch_intern(ctrace *t, const char *text);
extern const strata_source_vtable torch_ctrace_vtable;
/* The string index of stream "sN". */
uint32_t torch_stream_of(conv *c, int64_t stream);
/* Appends one op to c->sink. */
void torch_emit(conv *c, strata_op_kind kind, name_kind nk, uint64_t number, uint64_t size,
                uint32_t stream, uint32_t note, bool has_addr, uint64_t addr, emit_at at);

/* ---- torch_read.c: the snapshot's values ------------------------------------ */

/* Sets *c->err to "ORIGIN: not a PyTorch memory snapshot: MSG"; false. */
bool torch_schema(conv *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
/* dict[key] as a non-negative int below 2^63, or an error naming
 * WHERE.KEY and what was expected. */
bool torch_get_u64(conv *c, strata_pv dict, const char *key, const char *where, uint64_t *out);
/* segments[i]: keeps the segment and its live blocks if it is the device's. */
bool torch_read_segment(conv *c, uint64_t i, strata_pv seg);
/* device_traces[device][i] as a compact event (with the frame label: pass 2). */
bool torch_read_event(conv *c, uint64_t i, strata_pv ev, bool label, tevent *e);
/* host_traces[i] as a compact event with its label; unknown actions are
 * counted into `unknown` (action -> count). */
bool torch_read_host_event(conv *c, uint64_t i, strata_pv ev, GHashTable *unknown, tevent *e);
/* Is this event a `snapshot` marker? (Events of the other devices.) */
bool torch_is_marker(conv *c, strata_pv ev);
/* The device's event list in the finished document, or an error. */
bool torch_check_document(conv *c, GError **err);
/* Calls fn on the segments and the device's events of a whole document. */
typedef bool (*item_fn)(conv *c, int selector, uint64_t outer, uint64_t index, strata_pv v);
void torch_document_items(conv *c, item_fn fn);
/* The counts of device d (grown as needed). */
device_count *torch_device_count(conv *c, int64_t d);
/* Adds `option KEY=VALUE` (value: g_malloc'd, owned by the trace). */
void torch_add_option(conv *c, const char *key, char *value);
/* allocator_settings -> `option` lines and sum->settings_text. */
void torch_read_settings(conv *c, strata_pv root);
/* Counts one more of `name` (g_malloc'd, taken) in a name -> count table
 * whose keys it frees. */
void torch_count_unknown(GHashTable *unknown, char *name);
/* "NAME xN, ..." of such a table by name (NULL when empty); adds the
 * counts to *total. */
char *torch_unknown_text(GHashTable *unknown, uint64_t *total);

/* ---- torch_state.c: pass 1 and the state at the first event ----------------- */

bool torch_pass1_item(conv *c, int selector, uint64_t outer, uint64_t index, strata_pv v);
void torch_rebuild_initial(conv *c);
void torch_emit_setup(conv *c);

/* ---- torch_history.c: ground truth and releases from the segment events ---- */

void torch_ground_truth(conv *c);
void torch_decide_releases(conv *c);

/* ---- torch_events.c: pass 2 ------------------------------------------------- */

void torch_save_setup(conv *c);
void torch_reset_events(conv *c);
void torch_events_done(conv *c);
bool torch_pass2_item(conv *c, int selector, uint64_t outer, uint64_t index, strata_pv v);
/* Streaming: reads events until some produce ops (1), the end (0), an error (-1). */
int torch_fill_window(conv *c, GError **err);
bool torch_restart_events(conv *c, GError **err);

/* ---- torch_host.c: host_segments and host_traces (pinned memory) ----------- */

/* Between the passes: reads the root's host_segments and host_traces (if
 * any), rebuilds the host allocator's state at its first event, appends its
 * setup ops to c->sink and makes its event ops. False with *c->err. */
bool torch_host_between(conv *c);
/* Pass 2: appends the host ops up to time `time_us` (all: INT64_MAX). */
void torch_host_emit_until(conv *c, int64_t time_us);
/* Back to the first host event op (a new pass). */
void torch_host_reset(conv *c);
void torch_host_free(struct host_part *h);

/* ---- torch.c ---------------------------------------------------------------- */

void torch_conv_free(conv *c);

#endif
