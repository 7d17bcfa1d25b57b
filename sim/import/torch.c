/*
 * torch.c: PyTorch memory snapshot -> strata op stream (see torch.h).
 *
 * Two passes over the snapshot's events, in memory that does not grow with
 * the file (a streamed pickle, see pickle.h: segments and events are handed
 * out one at a time and dropped):
 *  1. pass 1 (pass1_item): validate each segment and event (schema errors
 *     name the path, e.g. "device_traces[0][12].addr"), keep the final
 *     segments and live blocks, and per address the first event and
 *     whether an undo would find the block there; keep the segment events
 *     (a few percent of all events, 24 bytes each) for the ground truth and
 *     the release decisions. Then rebuild_initial() gives the state at the
 *     first event (the same result as undoing the events newest first from
 *     the final state, as torch/cuda/_memory_viz.py does), emit_setup()
 *     the ops that make a caching allocator hold it, ground_truth() and
 *     decide_releases() the figures and the `release` ops;
 *  2. pass 2 (emit_event), run by the source as it is read: allocs, frees
 *     (at free_completed) and releases, event by event.
 * Streaming, pass 2 reads the file again (and again after a rewind): the
 * source holds only the setup ops, the live blocks and the string table.
 * When the stream cannot vouch for what it handed out (a hand-made pickle
 * laid out unlike Python's, see strata_pickle_stream_exact) or when the
 * caller gives a parsed pickle (strata_torch_convert), the same passes run
 * over the whole document and every op is kept (48 bytes each).
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
 *  4. Both modes run the same functions on the same items in the same
 *     order, so their traces are byte-identical.
 */
#include "import/torch.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/units.h"
#define MiB (UINT64_C(1) << 20)
#define SMALL_REQUEST (1 * MiB)   /* requests up to this go to the small pool */
#define SMALL_SEGMENT (2 * MiB)   /* small-pool segment size */
#define BLOCK_ROUND UINT64_C(512) /* the caching allocator's rounding */
#define EMPTY_BUFFER G_MAXSIZE     /* `live` value of a dropped 0-byte alloc */

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

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
    EV_OTHER,
} ev_action;

static const struct {
    const char *name;
    ev_action action;
} action_names[] = {
    {"alloc", EV_ALLOC},
    {"free_requested", EV_FREE_REQUESTED},
    {"free_completed", EV_FREE_COMPLETED},
    {"segment_alloc", EV_SEGMENT_ALLOC},
    {"segment_free", EV_SEGMENT_FREE},
    {"segment_map", EV_SEGMENT_MAP},
    {"segment_unmap", EV_SEGMENT_UNMAP},
    {"snapshot", EV_SNAPSHOT},
    {"oom", EV_OOM},
    {"user_defined", EV_OTHER},
    {NULL, EV_OTHER},
};

typedef struct tevent {
    ev_action action;
    uint64_t addr, size;
    int64_t stream;
    bool has_time;
    int64_t time_us;
    uint32_t note; /* pass 2, allocs: frame label string index + 1; 0: none */
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
    uint64_t size;
    ev_action action;
} segev;

/* ---- the converted trace: compact ops --------------------------------------- */

/* Buffer names are PREFIX.N; the prefix by kind. */
typedef enum { NAME_NONE, NAME_B, NAME_SEG, NAME_FILL } name_kind;
static const char *const name_prefixes[] = {"", "b.", "seg.", "fill."};

/* One op in 48 bytes: strings are indices into the trace's string table. */
typedef struct cop {
    uint8_t kind;      /* strata_op_kind: ALLOC, FREE or RELEASE */
    uint8_t name_kind; /* name_kind */
    bool has_addr, has_at;
    uint32_t stream;   /* string index */
    uint32_t note;     /* string index + 1; 0: none */
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

static ctrace *ctrace_new(void)
{
    ctrace *t = g_new0(ctrace, 1);
    t->ops = g_array_new(FALSE, FALSE, sizeof(cop));
    t->window = g_array_new(FALSE, FALSE, sizeof(cop));
    t->strings = g_ptr_array_new_with_free_func(g_free);
    t->string_index = g_hash_table_new(g_str_hash, g_str_equal);
    t->option_keys = g_ptr_array_new_with_free_func(g_free);
    t->option_values = g_ptr_array_new_with_free_func(g_free);
    return t;
}

static void conv_free(struct conv *c);

static void ctrace_free(void *self)
{
    ctrace *t = self;
    if (t == NULL)
        return;
    conv_free(t->events);
    g_array_unref(t->ops);
    g_array_unref(t->window);
    g_hash_table_unref(t->string_index);
    g_ptr_array_unref(t->strings);
    g_ptr_array_unref(t->option_keys);
    g_ptr_array_unref(t->option_values);
    g_free(t);
}

static uint32_t intern(ctrace *t, const char *text)
{
    gpointer v = g_hash_table_lookup(t->string_index, text);
    if (v)
        return (uint32_t)(GPOINTER_TO_SIZE(v) - 1);
    char *copy = g_strdup(text);
    g_ptr_array_add(t->strings, copy);
    g_hash_table_insert(t->string_index, copy, GSIZE_TO_POINTER((gsize)t->strings->len));
    return t->strings->len - 1;
}

static int fill_window(struct conv *c, GError **err);
static bool restart_events(struct conv *c, GError **err);

static int ctrace_next(void *self, const strata_op **out, GError **err)
{
    ctrace *t = self;
    strata_op *op = &t->op;
    memset(op, 0, sizeof *op);
    size_t n_options = t->option_keys->len;
    if (t->next < n_options) {
        op->kind = STRATA_OP_OPTION;
        op->stream = STRATA_DEFAULT_STREAM;
        op->name = t->option_keys->pdata[t->next];
        op->src = t->option_values->pdata[t->next];
        t->next++;
        *out = op;
        return 1;
    }
    const cop *c;
    if (t->next - n_options < t->ops->len) {
        c = &g_array_index(t->ops, cop, t->next - n_options);
        t->next++;
    } else if (t->events) {
        if (t->window_next == t->window->len) {
            g_array_set_size(t->window, 0);
            t->window_next = 0;
            int rc = fill_window(t->events, err);
            if (rc <= 0)
                return rc;
        }
        c = &g_array_index(t->window, cop, t->window_next++);
    } else {
        return 0;
    }
    op->kind = (strata_op_kind)c->kind;
    op->stream = t->strings->pdata[c->stream];
    if (c->name_kind != NAME_NONE) {
        g_snprintf(t->name, sizeof t->name, "%s%" G_GUINT64_FORMAT, name_prefixes[c->name_kind],
                   c->number);
        op->name = t->name;
    }
    op->size = c->size;
    op->has_addr = c->has_addr;
    op->addr = c->addr;
    op->has_at = c->has_at;
    op->at_s = c->has_at ? (double)c->at_us / 1e6 : 0;
    op->note = c->note ? t->strings->pdata[c->note - 1] : NULL;
    *out = op;
    return 1;
}

static bool ctrace_rewind(void *self, GError **err)
{
    ctrace *t = self;
    t->next = 0;
    g_array_set_size(t->window, 0);
    t->window_next = 0;
    return t->events == NULL || restart_events(t->events, err);
}

static const strata_source_vtable ctrace_vtable = {ctrace_next, ctrace_rewind, ctrace_free};

/* ---- the converter ----------------------------------------------------------- */

/* The lists handed out item by item: the segments, every device's events
 * (other devices' are dropped unread), and the external annotations a
 * snapshot may carry (unused here; streamed only so they are not kept). */
enum { SEL_SEGMENTS, SEL_EVENTS, SEL_ANNOTATIONS };
static const char *const selectors[] = {"segments/*", "device_traces/*/*",
                                        "external_annotations/*", NULL};

typedef struct conv {
    const strata_pickle *p;    /* the document the items are read from */
    strata_pickle_stream *stream; /* streaming: owns p; NULL when the items are in p */
    char *origin;
    strata_torch_options opt;
    strata_torch_summary *sum; /* the caller's, or own_sum */
    strata_torch_summary own_sum;
    GError **err;              /* where schema() reports */
    /* pass 1 */
    GError *seg_err, *ev_err;  /* the first bad segment, the first bad event */
    uint64_t n_events;
    bool have_t0;
    int64_t t0;
    GHashTable *seg_by_addr;   /* addr -> tseg* (g_free): final, then initial segments */
    GHashTable *block_by_addr; /* addr -> tblock* (g_free): final, then initial live blocks */
    GHashTable *seg_first;     /* addr -> addr_first* (g_free) */
    GHashTable *block_first;   /* addr -> addr_first* (g_free) */
    GArray *segevs;            /* segev */
    GArray *releases;          /* uint64_t: indices of the events that become a `release` */
    uint64_t setup_inconsistent;
    /* the output */
    ctrace *out;
    GArray *streams;           /* int64_t stream, string index: pairs */
    uint32_t note_setup;       /* string index of "setup" */
    uint32_t note_empty_cache; /* string index + 1 of "empty_cache" */
    GHashTable *setup_live;    /* addr -> b.N + 1 after the setup */
    uint64_t setup_next_buffer;
    /* pass 2 */
    GArray *sink;              /* where emit() appends: out->ops or out->window */
    GHashTable *live;          /* addr -> buffer number + 1 (b.N) while emitting */
    uint64_t next_buffer;
    uint64_t event_index;      /* events of the device seen so far */
    size_t next_release;       /* index into releases */
    uint64_t n_allocs, n_frees, emit_inconsistent;
    bool events_done;
} conv;

void strata_torch_options_init(strata_torch_options *opt)
{
    opt->device = 0;
    opt->frames = true;
}

void strata_torch_summary_clear(strata_torch_summary *s)
{
    if (s->segment_alloc_sizes)
        g_array_unref(s->segment_alloc_sizes);
    g_free(s->settings_text);
    memset(s, 0, sizeof *s);
}

static bool schema(conv *c, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static bool schema(conv *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_set_error(c->err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "%s: not a PyTorch memory snapshot: %s", c->origin, msg);
    g_free(msg);
    return false;
}

static conv *conv_new(const char *origin, const strata_torch_options *opt,
                      strata_torch_summary *sum)
{
    conv *c = g_new0(conv, 1);
    c->origin = g_strdup(origin ? origin : "<snapshot>");
    if (opt)
        c->opt = *opt;
    else
        strata_torch_options_init(&c->opt);
    c->sum = sum ? sum : &c->own_sum;
    memset(c->sum, 0, sizeof *c->sum);
    c->sum->segment_alloc_sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    c->seg_by_addr = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    c->block_by_addr = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    c->seg_first = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    c->block_first = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    c->segevs = g_array_new(FALSE, FALSE, sizeof(segev));
    c->releases = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    c->streams = g_array_new(FALSE, FALSE, sizeof(int64_t));
    c->live = g_hash_table_new(g_direct_hash, g_direct_equal);
    c->out = ctrace_new();
    c->sink = c->out->ops;
    c->note_setup = intern(c->out, "setup");
    return c;
}

/* Frees what only pass 1 needs (the converter may live on in the source). */
static void drop_pass1(conv *c)
{
    g_clear_pointer(&c->seg_by_addr, g_hash_table_unref);
    g_clear_pointer(&c->block_by_addr, g_hash_table_unref);
    g_clear_pointer(&c->seg_first, g_hash_table_unref);
    g_clear_pointer(&c->block_first, g_hash_table_unref);
    g_clear_pointer(&c->segevs, g_array_unref);
}

static void conv_free(conv *c)
{
    if (c == NULL)
        return;
    drop_pass1(c);
    g_clear_error(&c->seg_err);
    g_clear_error(&c->ev_err);
    g_array_unref(c->releases);
    g_array_unref(c->streams);
    g_hash_table_unref(c->live);
    if (c->setup_live)
        g_hash_table_unref(c->setup_live);
    strata_pickle_stream_free(c->stream);
    strata_torch_summary_clear(&c->own_sum);
    g_free(c->origin);
    g_free(c);
}

/* ---- reading the snapshot ---------------------------------------------------- */

static bool get_u64(conv *c, strata_pv dict, const char *key, const char *where, uint64_t *out)
{
    int64_t v;
    strata_pv x = strata_pickle_dict_get(c->p, dict, key);
    if (!strata_pickle_get_int(c->p, x, &v) || v < 0)
        return schema(c, "%s.%s: expected a non-negative int, found %s", where, key,
                      x ? strata_pickle_type_name(strata_pickle_type_of(c->p, x)) : "nothing");
    *out = (uint64_t)v;
    return true;
}

static int64_t get_stream(conv *c, strata_pv dict)
{
    int64_t v = 0;
    strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, dict, "stream"), &v);
    return v;
}

/* segments[i]: the segment and its live blocks, if it is the device's. */
static bool read_segment(conv *c, uint64_t i, strata_pv seg)
{
    char where[64];
    g_snprintf(where, sizeof where, "segments[%" G_GUINT64_FORMAT "]", i);
    if (strata_pickle_type_of(c->p, seg) != STRATA_PICKLE_DICT)
        return schema(c, "%s is not a dict", where);
    int64_t device = 0;
    strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, seg, "device"), &device);
    if (device != c->opt.device)
        return true;
    tseg s = {0};
    if (!get_u64(c, seg, "address", where, &s.addr) ||
        !get_u64(c, seg, "total_size", where, &s.size))
        return false;
    s.stream = get_stream(c, seg);
    strata_pv type = strata_pickle_dict_get(c->p, seg, "segment_type");
    s.small = type ? strata_pickle_str_equal(c->p, type, "small") : s.size <= SMALL_SEGMENT;
    if (s.size == 0)
        return true; /* holds nothing, and a trace cannot reserve 0 bytes */
    if (s.size > SMALL_SEGMENT)
        s.small = false; /* small-pool segments are 2 MiB; be safe on odd input */
    g_hash_table_insert(c->seg_by_addr, GSIZE_TO_POINTER(s.addr), g_memdup2(&s, sizeof s));
    strata_pv blocks = strata_pickle_dict_get(c->p, seg, "blocks");
    if (strata_pickle_type_of(c->p, blocks) != STRATA_PICKLE_LIST)
        return schema(c, "%s.blocks is not a list", where);
    strata_pickle_iter bit;
    strata_pv blk;
    size_t j = 0;
    strata_pickle_iter_init(c->p, blocks, &bit);
    for (; strata_pickle_iter_next(c->p, &bit, NULL, &blk); j++) {
        char bwhere[96];
        g_snprintf(bwhere, sizeof bwhere, "%s.blocks[%zu]", where, j);
        if (strata_pickle_type_of(c->p, blk) != STRATA_PICKLE_DICT)
            return schema(c, "%s is not a dict", bwhere);
        strata_pv state = strata_pickle_dict_get(c->p, blk, "state");
        if (strata_pickle_type_of(c->p, state) != STRATA_PICKLE_STR)
            return schema(c, "%s.state: expected a str", bwhere);
        if (!strata_pickle_str_equal(c->p, state, "active_allocated") &&
            !strata_pickle_str_equal(c->p, state, "active_pending_free"))
            continue;
        tblock b = {.stream = s.stream};
        uint64_t size = 0;
        if (!get_u64(c, blk, "address", bwhere, &b.addr) ||
            !get_u64(c, blk, "size", bwhere, &size))
            return false;
        int64_t requested = 0;
        strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, blk, "requested_size"),
                              &requested);
        b.requested = requested > 0 ? (uint64_t)requested : size;
        if (b.requested == 0)
            continue; /* an empty block holds nothing */
        g_hash_table_insert(c->block_by_addr, GSIZE_TO_POINTER(b.addr), g_memdup2(&b, sizeof b));
    }
    return true;
}

static uint32_t frame_label(conv *c, strata_pv frames);

/* device_traces[device][i] as a compact event (the label only in pass 2). */
static bool read_event(conv *c, uint64_t i, strata_pv ev, bool label, tevent *e)
{
    char where[64];
    g_snprintf(where, sizeof where, "device_traces[%d][%" G_GUINT64_FORMAT "]", c->opt.device, i);
    if (strata_pickle_type_of(c->p, ev) != STRATA_PICKLE_DICT)
        return schema(c, "%s is not a dict", where);
    memset(e, 0, sizeof *e);
    strata_pv action = strata_pickle_dict_get(c->p, ev, "action");
    if (strata_pickle_type_of(c->p, action) != STRATA_PICKLE_STR)
        return schema(c, "%s.action: expected a str", where);
    e->action = EV_OTHER;
    for (size_t k = 0; action_names[k].name; k++)
        if (strata_pickle_str_equal(c->p, action, action_names[k].name)) {
            e->action = action_names[k].action;
            break;
        }
    if (e->action == EV_OTHER || e->action == EV_SNAPSHOT || e->action == EV_OOM) {
        /* No address needed; keep for release detection. */
        int64_t v = 0;
        strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, ev, "size"), &v);
        e->size = v > 0 ? (uint64_t)v : 0;
    } else if (!get_u64(c, ev, "addr", where, &e->addr) ||
               !get_u64(c, ev, "size", where, &e->size)) {
        return false;
    }
    e->stream = get_stream(c, ev);
    e->has_time =
        strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, ev, "time_us"), &e->time_us);
    if (label && e->action == EV_ALLOC && e->size != 0 && c->opt.frames)
        e->note = frame_label(c, strata_pickle_dict_get(c->p, ev, "frames"));
    return true;
}

/* ---- pass 1 ------------------------------------------------------------------- */

static addr_first *first_at(GHashTable *t, uint64_t addr, bool *fresh)
{
    addr_first *f = g_hash_table_lookup(t, GSIZE_TO_POINTER(addr));
    *fresh = f == NULL;
    if (f == NULL) {
        f = g_new0(addr_first, 1);
        g_hash_table_insert(t, GSIZE_TO_POINTER(addr), f);
    }
    return f;
}

/* An event that sets the state at its address: present (with size and
 * stream) or absent before it, looking back from the state after it. The
 * undo of an alloc (segment_alloc) finds its block (segment) missing when
 * the next event at that address says absent; `pending` remembers that
 * the latest one needs that check. */
static void note_state(conv *c, GHashTable *t, uint64_t addr, bool present_before,
                       const tevent *e, bool check)
{
    bool fresh;
    addr_first *f = first_at(t, addr, &fresh);
    if (fresh) {
        f->first = present_before ? FIRST_PRESENT : FIRST_ABSENT;
        f->size = e->size;
        f->stream = e->stream;
    } else if (f->pending && !present_before) {
        c->setup_inconsistent++;
    }
    f->pending = check;
}

static void note_event(conv *c, const tevent *e)
{
    if (!c->have_t0 && e->has_time) {
        c->have_t0 = true;
        c->t0 = e->time_us;
    }
    switch (e->action) {
    case EV_ALLOC:
        note_state(c, c->block_first, e->addr, false, e, e->size != 0);
        break;
    case EV_FREE_COMPLETED:
        note_state(c, c->block_first, e->addr, e->size != 0, e, false);
        break;
    case EV_SEGMENT_ALLOC:
    case EV_SEGMENT_MAP:
        note_state(c, c->seg_first, e->addr, false, e, e->action == EV_SEGMENT_ALLOC);
        break;
    case EV_SEGMENT_FREE:
    case EV_SEGMENT_UNMAP:
        if (e->size != 0) /* an empty segment_free says nothing of the state */
            note_state(c, c->seg_first, e->addr, true, e, false);
        break;
    default:
        break;
    }
    if (e->action == EV_SEGMENT_ALLOC || e->action == EV_SEGMENT_MAP ||
        e->action == EV_SEGMENT_FREE || e->action == EV_SEGMENT_UNMAP ||
        e->action == EV_SNAPSHOT || e->action == EV_OOM) {
        segev s = {c->n_events, e->size, e->action};
        g_array_append_val(c->segevs, s);
    }
}

static bool pass1_item(conv *c, int selector, uint64_t outer, uint64_t index, strata_pv v)
{
    if (selector == SEL_SEGMENTS) {
        c->err = &c->seg_err;
        if (c->seg_err == NULL)
            read_segment(c, index, v);
    } else if (selector == SEL_EVENTS && outer == (uint64_t)c->opt.device) {
        c->err = &c->ev_err;
        tevent e;
        if (c->ev_err == NULL && read_event(c, c->n_events, v, false, &e))
            note_event(c, &e);
        c->n_events++;
    }
    return true; /* errors wait in seg_err and ev_err for check_document() */
}

/* The device's event list in the finished document, or an error. */
static bool check_document(conv *c, GError **err)
{
    c->err = err;
    strata_pv root = strata_pickle_root(c->p);
    if (strata_pickle_type_of(c->p, root) != STRATA_PICKLE_DICT)
        return schema(c, "the top level is a %s, expected a dict",
                      strata_pickle_type_name(strata_pickle_type_of(c->p, root)));
    strata_pv segs = strata_pickle_dict_get(c->p, root, "segments");
    if (strata_pickle_type_of(c->p, segs) != STRATA_PICKLE_LIST)
        return schema(c, "'segments' is not a list");
    if (c->seg_err) {
        g_propagate_error(err, g_steal_pointer(&c->seg_err));
        return false;
    }
    strata_pv traces = strata_pickle_dict_get(c->p, root, "device_traces");
    if (strata_pickle_type_of(c->p, traces) != STRATA_PICKLE_LIST)
        return schema(c, "'device_traces' is not a list (was the snapshot taken with "
                         "_record_memory_history() enabled?)");
    size_t n_devices = strata_pickle_len(c->p, traces);
    if (n_devices == 0)
        return schema(c, "'device_traces' is empty: record the history with "
                         "torch.cuda.memory._record_memory_history() before the snapshot");
    if (c->opt.device < 0 || (size_t)c->opt.device >= n_devices)
        return schema(c, "--device %d: the snapshot has traces for %zu device(s) (0 to %zu)",
                      c->opt.device, n_devices, n_devices - 1);
    strata_pickle_iter it;
    strata_pv dev = STRATA_PV_NULL;
    strata_pickle_iter_init(c->p, traces, &it);
    for (int i = 0; i <= c->opt.device; i++)
        strata_pickle_iter_next(c->p, &it, NULL, &dev);
    if (strata_pickle_type_of(c->p, dev) != STRATA_PICKLE_LIST)
        return schema(c, "device_traces[%d] is not a list", c->opt.device);
    if (c->ev_err) {
        g_propagate_error(err, g_steal_pointer(&c->ev_err));
        return false;
    }
    return true;
}

/* Calls fn on the segments and the device's events of a whole document. */
typedef bool (*item_fn)(conv *c, int selector, uint64_t outer, uint64_t index, strata_pv v);

static void document_items(conv *c, item_fn fn)
{
    strata_pv root = strata_pickle_root(c->p);
    strata_pickle_iter it;
    strata_pv v;
    uint64_t i = 0;
    strata_pickle_iter_init(c->p, strata_pickle_dict_get(c->p, root, "segments"), &it);
    for (; strata_pickle_iter_next(c->p, &it, NULL, &v); i++)
        fn(c, SEL_SEGMENTS, 0, i, v);
    strata_pv traces = strata_pickle_dict_get(c->p, root, "device_traces");
    if (strata_pickle_type_of(c->p, traces) != STRATA_PICKLE_LIST || c->opt.device < 0)
        return;
    strata_pv dev = STRATA_PV_NULL;
    strata_pickle_iter_init(c->p, traces, &it);
    for (int k = 0; k <= c->opt.device; k++)
        if (!strata_pickle_iter_next(c->p, &it, NULL, &dev))
            return;
    i = 0;
    strata_pickle_iter_init(c->p, dev, &it);
    for (; strata_pickle_iter_next(c->p, &it, NULL, &v); i++)
        fn(c, SEL_EVENTS, (uint64_t)c->opt.device, i, v);
}

static void add_option(conv *c, const char *key, char *value)
{
    g_ptr_array_add(c->out->option_keys, g_strdup(key));
    g_ptr_array_add(c->out->option_values, value);
}

/* allocator_settings -> options for the settings that differ from PyTorch's
 * defaults, and a k=v text of all of them for the header. */
static void read_settings(conv *c, strata_pv root)
{
    strata_pv st = strata_pickle_dict_get(c->p, root, "allocator_settings");
    if (strata_pickle_type_of(c->p, st) != STRATA_PICKLE_DICT)
        return;
    GString *text = g_string_new(NULL);
    strata_pickle_iter it;
    strata_pv k, v;
    strata_pickle_iter_init(c->p, st, &it);
    while (strata_pickle_iter_next(c->p, &it, &k, &v)) {
        char *key = strata_pickle_dup_str(c->p, k);
        char *val = strata_pickle_to_text(c->p, v, 2);
        if (key) {
            g_strdelimit(val, " \t\n", '_');
            g_string_append_printf(text, "%s%s=%s", text->len ? " " : "", key, val);
        }
        g_free(key);
        g_free(val);
    }
    c->sum->settings_text = g_string_free(text, FALSE);

    int64_t iv;
    bool bv;
    if (strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, st, "max_split_size"), &iv) &&
        iv > 0 && iv < INT64_MAX) {
        add_option(c, "allocator.max_split_size", strata_format_size_exact((uint64_t)iv));
    }
    if (strata_pickle_get_bool(c->p, strata_pickle_dict_get(c->p, st, "expandable_segments"),
                               &bv) &&
        bv) {
        add_option(c, "allocator.expandable_segments", g_strdup("true"));
    }
    /* roundup_power2_divisions: {"1": d, "2": d, ...}, one division per
     * power-of-two interval in PyTorch; the model takes one N for all, so it
     * gets the largest (the header comment keeps them all). */
    strata_pv rp = strata_pickle_dict_get(c->p, st, "roundup_power2_divisions");
    int64_t divisions = 0;
    if (strata_pickle_get_int(c->p, rp, &divisions) == false &&
        strata_pickle_type_of(c->p, rp) == STRATA_PICKLE_DICT) {
        strata_pickle_iter_init(c->p, rp, &it);
        while (strata_pickle_iter_next(c->p, &it, &k, &v)) {
            int64_t d = 0;
            if (strata_pickle_get_int(c->p, v, &d) && d > divisions)
                divisions = d;
        }
    }
    if (divisions > 1) {
        add_option(c, "allocator.roundup_power2_divisions",
                   g_strdup_printf("%" G_GINT64_FORMAT, divisions));
    }
    /* garbage_collection_threshold and the pinned-memory settings have no
     * counterpart in the model: they stay in the header comment only. */
}

/* ---- the state at the first event ---------------------------------------------- */

/* Undoing the events newest first leaves, at each address, what its oldest
 * event says of the state before it; addresses no event touches keep their
 * final state. An undone alloc (segment_alloc) whose block (segment) is not
 * there is an inconsistency: note_state() counted those followed by another
 * event at their address, here are those that are the latest there. */
static void rebuild_initial(conv *c)
{
    GHashTableIter hi;
    gpointer k, v;
    g_hash_table_iter_init(&hi, c->block_first);
    while (g_hash_table_iter_next(&hi, &k, &v)) {
        const addr_first *f = v;
        if (f->pending && !g_hash_table_contains(c->block_by_addr, k))
            c->setup_inconsistent++;
        if (f->first == FIRST_PRESENT) {
            tblock b = {GPOINTER_TO_SIZE(k), f->size, f->stream};
            g_hash_table_insert(c->block_by_addr, k, g_memdup2(&b, sizeof b));
        } else {
            g_hash_table_remove(c->block_by_addr, k);
        }
    }
    g_hash_table_iter_init(&hi, c->seg_first);
    while (g_hash_table_iter_next(&hi, &k, &v)) {
        const addr_first *f = v;
        if (f->pending && !g_hash_table_contains(c->seg_by_addr, k))
            c->setup_inconsistent++;
        if (f->first == FIRST_PRESENT) {
            tseg s = {GPOINTER_TO_SIZE(k), f->size, f->stream, f->size <= SMALL_SEGMENT};
            g_hash_table_insert(c->seg_by_addr, k, g_memdup2(&s, sizeof s));
        } else {
            g_hash_table_remove(c->seg_by_addr, k);
        }
    }
}

/* ---- emitting ----------------------------------------------------------------------- */

/* The string index of stream "sN" (streams are few: a linear search over
 * the ones seen, in c->streams, parallel to their string indices). */
static uint32_t stream_of(conv *c, int64_t stream)
{
    for (guint i = 0; i < c->streams->len; i += 2)
        if (g_array_index(c->streams, int64_t, i) == stream)
            return (uint32_t)g_array_index(c->streams, int64_t, i + 1);
    char name[32];
    g_snprintf(name, sizeof name, "s%" G_GINT64_FORMAT, stream);
    int64_t pair[2] = {stream, intern(c->out, name)};
    g_array_append_vals(c->streams, pair, 2);
    return (uint32_t)pair[1];
}

typedef struct emit_at {
    bool has_at;
    int64_t at_us;
} emit_at;

static const emit_at no_at = {false, 0};

static void emit(conv *c, strata_op_kind kind, name_kind nk, uint64_t number, uint64_t size,
                 uint32_t stream, uint32_t note, bool has_addr, uint64_t addr, emit_at at)
{
    cop op = {.kind = (uint8_t)kind, .name_kind = (uint8_t)nk, .has_addr = has_addr,
              .has_at = at.has_at, .stream = stream, .note = note, .number = number,
              .size = size, .addr = addr, .at_us = at.at_us};
    g_array_append_val(c->sink, op);
}

static uint64_t round_block(uint64_t size)
{
    return size < BLOCK_ROUND ? BLOCK_ROUND : (size + BLOCK_ROUND - 1) / BLOCK_ROUND * BLOCK_ROUND;
}

static gint cmp_seg(gconstpointer a, gconstpointer b)
{
    const tseg *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static gint cmp_block(gconstpointer a, gconstpointer b)
{
    const tblock *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

typedef struct fill {
    uint64_t number;
    uint32_t stream;
} fill;

/* Fill buffers covering [from, to) of a segment, in pieces its pool serves. */
static void emit_fill(conv *c, GArray *fills, const tseg *s, uint32_t stream, uint64_t from,
                      uint64_t to)
{
    while (from < to) {
        uint64_t n = to - from;
        if (s->small) {
            if (n > SMALL_REQUEST)
                n = SMALL_REQUEST;
        } else if (n <= SMALL_REQUEST) {
            /* A large-pool request must exceed 1 MiB: a smaller gap stays free
             * (no request of the large pool can land in it anyway). */
            return;
        }
        fill f = {c->next_buffer++, stream};
        emit(c, STRATA_OP_ALLOC, NAME_FILL, f.number, n, stream, c->note_setup + 1, false, 0,
             no_at);
        g_array_append_val(fills, f);
        from += n;
    }
}

static void emit_setup(conv *c)
{
    GArray *segs = g_array_new(FALSE, FALSE, sizeof(tseg));
    GArray *blocks = g_array_new(FALSE, FALSE, sizeof(tblock));
    GHashTableIter hi;
    gpointer k, v;
    g_hash_table_iter_init(&hi, c->seg_by_addr);
    while (g_hash_table_iter_next(&hi, &k, &v))
        g_array_append_val(segs, *(tseg *)v);
    g_hash_table_iter_init(&hi, c->block_by_addr);
    while (g_hash_table_iter_next(&hi, &k, &v))
        g_array_append_val(blocks, *(tblock *)v);
    g_array_sort(segs, cmp_seg);
    g_array_sort(blocks, cmp_block);

    GArray *fills = g_array_new(FALSE, FALSE, sizeof(fill));
    uint32_t setup = c->note_setup + 1;
    size_t bi = 0;
    for (size_t i = 0; i < segs->len; i++) {
        const tseg *s = &g_array_index(segs, tseg, i);
        uint32_t stream = stream_of(c, s->stream);
        c->sum->n_initial_segments++;
        c->sum->initial_reserved = sat_add(c->sum->initial_reserved, s->size);
        if (!s->small) {
            /* The whole segment as one request: the allocator reserves exactly
             * this size (no cached block is free to serve it), and keeps it
             * cached when freed. */
            uint64_t n = c->next_buffer++;
            emit(c, STRATA_OP_ALLOC, NAME_SEG, n, s->size, stream, setup, true, s->addr, no_at);
            emit(c, STRATA_OP_FREE, NAME_SEG, n, 0, stream, setup, false, 0, no_at);
        }
        uint64_t cursor = s->addr, end = s->addr + s->size;
        /* Blocks before this segment belong to no initial segment. */
        while (bi < blocks->len && g_array_index(blocks, tblock, bi).addr < s->addr) {
            c->setup_inconsistent++;
            bi++;
        }
        for (; bi < blocks->len && g_array_index(blocks, tblock, bi).addr < end; bi++) {
            const tblock *b = &g_array_index(blocks, tblock, bi);
            if (b->addr < cursor) {
                c->setup_inconsistent++; /* overlaps the previous block */
                continue;
            }
            emit_fill(c, fills, s, stream, cursor, b->addr);
            uint64_t n = c->next_buffer++;
            emit(c, STRATA_OP_ALLOC, NAME_B, n, b->requested, stream_of(c, b->stream), setup,
                 true, b->addr, no_at);
            g_hash_table_insert(c->live, GSIZE_TO_POINTER(b->addr), GSIZE_TO_POINTER(n + 1));
            c->sum->n_initial_blocks++;
            cursor = b->addr + round_block(b->requested);
        }
        if (cursor < end)
            emit_fill(c, fills, s, stream, cursor, end);
    }
    c->setup_inconsistent += blocks->len - bi;
    for (guint i = 0; i < fills->len; i++) {
        const fill *f = &g_array_index(fills, fill, i);
        emit(c, STRATA_OP_FREE, NAME_FILL, f->number, 0, f->stream, setup, false, 0, no_at);
    }
    g_array_unref(fills);
    g_array_unref(segs);
    g_array_unref(blocks);
}

/* A short label for an event: FILE:LINE of its first Python frame outside
 * torch itself (else the first Python frame), with every byte a trace name
 * cannot hold (blanks, controls, '#', '=', ',') made an underscore.
 * Returns the note's string index + 1, 0 for none (the string table
 * dedupes the labels). */
static uint32_t frame_label(conv *c, strata_pv frames)
{
    if (strata_pickle_type_of(c->p, frames) != STRATA_PICKLE_LIST)
        return 0;
    strata_pickle_iter it;
    strata_pv f, chosen = STRATA_PV_NULL, chosen_file = STRATA_PV_NULL;
    strata_pickle_iter_init(c->p, frames, &it);
    while (strata_pickle_iter_next(c->p, &it, NULL, &f)) {
        size_t len;
        strata_pv fv = strata_pickle_dict_get(c->p, f, "filename");
        const char *file = strata_pickle_get_bytes(c->p, fv, &len);
        if (file == NULL || len < 3 || memcmp(file + len - 3, ".py", 3) != 0)
            continue;
        bool internal = g_strstr_len(file, (gssize)len, "/torch/") != NULL;
        if (chosen == STRATA_PV_NULL || !internal) {
            chosen = f;
            chosen_file = fv;
        }
        if (!internal)
            break;
    }
    if (chosen == STRATA_PV_NULL)
        return 0;
    int64_t line = 0;
    strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, chosen, "line"), &line);
    char *file = strata_pickle_dup_str(c->p, chosen_file);
    const char *base = strrchr(file, '/');
    char *label = g_strdup_printf("%s:%" G_GINT64_FORMAT, base ? base + 1 : file, line);
    g_free(file);
    for (char *s = label; *s; s++)
        if ((unsigned char)*s < 0x21 || *s == 0x7f || *s == '#' || *s == '=' || *s == ',')
            *s = '_';
    uint32_t note = intern(c->out, label) + 1;
    g_free(label);
    return note;
}

/* Ground truth: reserved bytes over the events, from the initial segments
 * and the segment events alone. */
static void ground_truth(conv *c)
{
    uint64_t reserved = c->sum->initial_reserved;
    c->sum->peak_reserved = reserved;
    for (size_t i = 0; i < c->segevs->len; i++) {
        const segev *e = &g_array_index(c->segevs, segev, i);
        if (e->action == EV_SEGMENT_ALLOC || e->action == EV_SEGMENT_MAP) {
            reserved = sat_add(reserved, e->size);
            if (reserved > c->sum->peak_reserved)
                c->sum->peak_reserved = reserved;
            if (e->action == EV_SEGMENT_ALLOC) {
                c->sum->n_segment_allocs++;
                g_array_append_val(c->sum->segment_alloc_sizes, e->size);
            }
        } else if (e->action == EV_SEGMENT_FREE || e->action == EV_SEGMENT_UNMAP) {
            reserved = reserved >= e->size ? reserved - e->size : 0;
            if (e->action == EV_SEGMENT_FREE)
                c->sum->n_segment_frees++;
        }
    }
    c->sum->final_reserved = reserved;
}

/* Is the run of segment_free events starting at segevs[k] the program's
 * (empty_cache) rather than the allocator's own? The allocator frees cached
 * segments only when the device cannot give it a new one: then the run is
 * followed by an oom event, or by the segment_alloc it retries, and that
 * segment_alloc could have failed, i.e. reserved before the run plus its
 * size exceeds the peak the device is seen to hold. Otherwise the program
 * asked for it. `reserved` is the reserved bytes before the run; *run_end
 * the index of the first event after it. */
static bool program_release(conv *c, size_t k, uint64_t reserved, uint64_t *run_end)
{
    const segev *ev = (const segev *)(void *)c->segevs->data;
    size_t j = k;
    while (j < c->segevs->len && ev[j].index == ev[k].index + (j - k) &&
           (ev[j].action == EV_SEGMENT_FREE || ev[j].action == EV_SEGMENT_UNMAP ||
            ev[j].action == EV_SNAPSHOT))
        j++;
    *run_end = ev[k].index + (j - k);
    if (*run_end == c->n_events)
        return true;
    if (j == c->segevs->len || ev[j].index != *run_end)
        return true; /* an event of another kind follows */
    if (ev[j].action == EV_OOM)
        return false;
    if (ev[j].action == EV_SEGMENT_ALLOC || ev[j].action == EV_SEGMENT_MAP)
        return sat_add(reserved, ev[j].size) <= c->sum->peak_reserved;
    return true;
}

/* The events that become a `release`: the first of each program's run. */
static void decide_releases(conv *c)
{
    uint64_t reserved = c->sum->initial_reserved;
    uint64_t release_until = 0; /* events before this index are in a handled run */
    for (size_t k = 0; k < c->segevs->len; k++) {
        const segev *e = &g_array_index(c->segevs, segev, k);
        if (e->action == EV_SEGMENT_ALLOC || e->action == EV_SEGMENT_MAP) {
            reserved = sat_add(reserved, e->size);
        } else if (e->action == EV_SEGMENT_FREE || e->action == EV_SEGMENT_UNMAP) {
            uint64_t run_end = 0;
            bool first_of_run = e->index >= release_until;
            bool program = first_of_run && program_release(c, k, reserved, &run_end);
            reserved = reserved >= e->size ? reserved - e->size : 0;
            if (program) {
                g_array_append_val(c->releases, e->index);
                c->sum->n_releases++;
            }
            if (first_of_run)
                release_until = run_end;
        }
    }
}

/* Everything between the passes: options, the initial state and its setup
 * ops, the ground truth, the releases. */
static void between_passes(conv *c)
{
    strata_torch_summary *sum = c->sum;
    sum->n_events = c->n_events;
    read_settings(c, strata_pickle_root(c->p));
    rebuild_initial(c);
    emit_setup(c);
    sum->n_setup_ops = c->out->ops->len;
    ground_truth(c);
    decide_releases(c);
    drop_pass1(c);
    c->note_empty_cache = intern(c->out, "empty_cache") + 1;
    c->setup_live = g_hash_table_new(g_direct_hash, g_direct_equal);
    GHashTableIter hi;
    gpointer k, v;
    g_hash_table_iter_init(&hi, c->live);
    while (g_hash_table_iter_next(&hi, &k, &v))
        g_hash_table_insert(c->setup_live, k, v);
    c->setup_next_buffer = c->next_buffer;
    sum->n_inconsistent = c->setup_inconsistent;
}

/* ---- pass 2 ------------------------------------------------------------------- */

/* Back to the state right after the setup. */
static void reset_events(conv *c)
{
    g_hash_table_remove_all(c->live);
    GHashTableIter hi;
    gpointer k, v;
    g_hash_table_iter_init(&hi, c->setup_live);
    while (g_hash_table_iter_next(&hi, &k, &v))
        g_hash_table_insert(c->live, k, v);
    c->next_buffer = c->setup_next_buffer;
    c->event_index = 0;
    c->next_release = 0;
    c->n_allocs = c->n_frees = c->emit_inconsistent = 0;
    c->events_done = false;
}

/* The counts of a complete pass (the same on every pass). */
static void events_done(conv *c)
{
    c->events_done = true;
    c->sum->n_allocs = c->n_allocs;
    c->sum->n_frees = c->n_frees;
    c->sum->n_inconsistent = c->setup_inconsistent + c->emit_inconsistent;
}

static void emit_event(conv *c, const tevent *e)
{
    uint64_t i = c->event_index++;
    uint32_t stream = stream_of(c, e->stream);
    emit_at at = {c->have_t0 && e->has_time && e->time_us >= c->t0, e->time_us - c->t0};
    if (!at.has_at)
        at.at_us = 0;
    gpointer key = GSIZE_TO_POINTER(e->addr);
    switch (e->action) {
    case EV_ALLOC: {
        gpointer old = g_hash_table_lookup(c->live, key);
        if (old && GPOINTER_TO_SIZE(old) != EMPTY_BUFFER) {
            /* allocated twice without a free: keep the snapshot's word */
            c->emit_inconsistent++;
            emit(c, STRATA_OP_FREE, NAME_B, GPOINTER_TO_SIZE(old) - 1, 0, stream, 0, false, 0,
                 no_at);
        }
        if (e->size == 0) {
            /* PyTorch hands out no memory for 0 bytes; a trace cannot
             * hold an empty buffer: the alloc and its free are dropped. */
            g_hash_table_insert(c->live, key, GSIZE_TO_POINTER(EMPTY_BUFFER));
            break;
        }
        uint64_t n = c->next_buffer++;
        emit(c, STRATA_OP_ALLOC, NAME_B, n, e->size, stream, e->note, true, e->addr, at);
        g_hash_table_insert(c->live, key, GSIZE_TO_POINTER(n + 1));
        c->n_allocs++;
        break;
    }
    case EV_FREE_COMPLETED: {
        gpointer n = g_hash_table_lookup(c->live, key);
        if (n == NULL) {
            c->emit_inconsistent++;
            break;
        }
        if (GPOINTER_TO_SIZE(n) != EMPTY_BUFFER) {
            emit(c, STRATA_OP_FREE, NAME_B, GPOINTER_TO_SIZE(n) - 1, 0, stream, 0, false, 0, at);
            c->n_frees++;
        }
        g_hash_table_remove(c->live, key);
        break;
    }
    case EV_SEGMENT_FREE:
    case EV_SEGMENT_UNMAP:
        if (c->next_release < c->releases->len &&
            g_array_index(c->releases, uint64_t, c->next_release) == i) {
            emit(c, STRATA_OP_RELEASE, NAME_NONE, 0, 0, stream, c->note_empty_cache, false, 0,
                 at);
            c->next_release++;
        }
        break;
    default:
        break;
    }
}

static bool pass2_item(conv *c, int selector, uint64_t outer, uint64_t index, strata_pv v)
{
    (void)index;
    tevent e;
    if (selector != SEL_EVENTS || outer != (uint64_t)c->opt.device)
        return true;
    if (!read_event(c, c->event_index, v, true, &e))
        return false;
    emit_event(c, &e);
    return true;
}

/* Streaming pass 2: reads events until some produce ops (1), the end (0)
 * or an error (-1: the file changed since pass 1). */
static int fill_window(conv *c, GError **err)
{
    if (c->events_done)
        return 0;
    c->sink = c->out->window;
    c->err = err;
    strata_pickle_item item;
    int rc = 1;
    while (c->out->window->len == 0 &&
           (rc = strata_pickle_stream_next(c->stream, &item, err)) == 1)
        if (!pass2_item(c, item.selector, item.outer, item.index, item.value))
            return -1; /* the file changed since pass 1 */
    if (c->out->window->len > 0)
        return 1;
    if (rc < 0)
        return -1;
    events_done(c);
    return 0;
}

static bool restart_events(conv *c, GError **err)
{
    (void)err;
    strata_pickle_stream_rewind(c->stream);
    reset_events(c);
    return true;
}

/* ---- the two modes ------------------------------------------------------------ */

/* Kept mode: both passes over a whole document, every op in out->ops. */
static strata_source *convert_whole(conv *c, const strata_pickle *p, GError **err)
{
    c->p = p;
    document_items(c, pass1_item);
    if (!check_document(c, err)) {
        if (c->sum != &c->own_sum)
            strata_torch_summary_clear(c->sum);
        ctrace_free(c->out);
        conv_free(c);
        return NULL;
    }
    between_passes(c);
    c->err = err;
    document_items(c, pass2_item);
    events_done(c);
    ctrace *out = c->out;
    strata_source *src = strata_source_new(&ctrace_vtable, out, c->origin);
    conv_free(c);
    return src;
}

strata_source *strata_torch_convert(const strata_pickle *p, const char *origin,
                                    const strata_torch_options *opt, strata_torch_summary *sum,
                                    GError **err)
{
    return convert_whole(conv_new(origin, opt, sum), p, err);
}

/* Streaming mode: pass 1 now, pass 2 as the source is read. */
strata_source *strata_torch_import(const char *path, const strata_torch_options *opt,
                                   strata_torch_summary *sum, GError **err)
{
    strata_pickle_stream *s = strata_pickle_stream_open_file(path, selectors, err);
    if (s == NULL)
        return NULL;
    conv *c = conv_new(path, opt, sum);
    c->stream = s;
    c->p = strata_pickle_stream_doc(s);
    strata_pickle_item item;
    int rc;
    while ((rc = strata_pickle_stream_next(s, &item, err)) == 1)
        pass1_item(c, item.selector, item.outer, item.index, item.value);
    bool exact = rc == 0 && strata_pickle_stream_exact(s);
    if (rc < 0 || (exact && !check_document(c, err))) {
        if (c->sum != &c->own_sum)
            strata_torch_summary_clear(c->sum);
        ctrace_free(c->out);
        conv_free(c);
        return NULL;
    }
    if (!exact) {
        /* A layout the stream cannot vouch for: read the whole document. */
        ctrace_free(c->out);
        conv_free(c);
        if (sum)
            strata_torch_summary_clear(sum);
        strata_pickle *p = strata_pickle_load_file(path, err);
        if (p == NULL)
            return NULL;
        strata_source *src = strata_torch_convert(p, path, opt, sum, err);
        strata_pickle_free(p);
        return src;
    }
    between_passes(c);
    strata_pickle_stream_rewind(s);
    reset_events(c);
    c->out->events = c;
    return strata_source_new(&ctrace_vtable, c->out, c->origin);
}
