/*
 * torch.c: PyTorch memory snapshot -> strata op stream (see torch.h).
 *
 * Steps:
 *  1. read_segments()/read_events(): pull the device's final segments and
 *     its events out of the pickle into compact arrays (schema errors name
 *     the path in the snapshot, e.g. "device_traces[0][12].addr");
 *  2. rebuild_initial(): undo the events newest first from the final state;
 *  3. emit_setup(): ops that make a caching allocator hold the initial
 *     segments and live blocks where the real one held them;
 *  4. emit_events(): allocs, frees (at free_completed) and releases.
 *
 * Invariants:
 *  1. Buffer names are b.N (live blocks and allocs, N in order of creation),
 *     seg.N and fill.N (setup only); `live` maps an address to the name of
 *     the buffer that holds it and every name in it was allocated and not
 *     yet freed in the emitted trace.
 *  2. The ground truth (initial/peak/final reserved, segment_alloc sizes)
 *     comes from the snapshot's own events, independent of any model.
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
    strata_pv frames;
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

typedef struct conv {
    const strata_pickle *p;
    const char *origin;
    const strata_torch_options *opt;
    strata_torch_summary *sum;
    GError **err;
    GArray *segs;   /* tseg: final, then initial segments */
    GArray *events; /* tevent */
    GHashTable *seg_by_addr;   /* addr -> tseg* (g_free) during rebuild */
    GHashTable *block_by_addr; /* addr -> tblock* (g_free) during rebuild */
    strata_op_list *ops;
    GHashTable *live;          /* addr -> name (g_free) while emitting */
    uint64_t next_buffer;
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

static bool read_segments(conv *c, strata_pv root)
{
    strata_pv segs = strata_pickle_dict_get(c->p, root, "segments");
    if (strata_pickle_type_of(c->p, segs) != STRATA_PICKLE_LIST)
        return schema(c, "'segments' is not a list");
    strata_pickle_iter it, bit;
    strata_pv seg, blk;
    size_t i = 0;
    strata_pickle_iter_init(c->p, segs, &it);
    for (; strata_pickle_iter_next(c->p, &it, NULL, &seg); i++) {
        char where[64];
        g_snprintf(where, sizeof where, "segments[%zu]", i);
        if (strata_pickle_type_of(c->p, seg) != STRATA_PICKLE_DICT)
            return schema(c, "%s is not a dict", where);
        int64_t device = 0;
        strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, seg, "device"), &device);
        if (device != c->opt->device)
            continue;
        tseg s = {0};
        if (!get_u64(c, seg, "address", where, &s.addr) ||
            !get_u64(c, seg, "total_size", where, &s.size))
            return false;
        s.stream = get_stream(c, seg);
        strata_pv type = strata_pickle_dict_get(c->p, seg, "segment_type");
        s.small = type ? strata_pickle_str_equal(c->p, type, "small") : s.size <= SMALL_SEGMENT;
        tseg *copy = g_memdup2(&s, sizeof s);
        g_hash_table_insert(c->seg_by_addr, GSIZE_TO_POINTER(s.addr), copy);
        strata_pv blocks = strata_pickle_dict_get(c->p, seg, "blocks");
        if (strata_pickle_type_of(c->p, blocks) != STRATA_PICKLE_LIST)
            return schema(c, "%s.blocks is not a list", where);
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
            uint64_t size;
            if (!get_u64(c, blk, "address", bwhere, &b.addr) ||
                !get_u64(c, blk, "size", bwhere, &size))
                return false;
            if (!get_u64(c, blk, "requested_size", bwhere, &b.requested))
                b.requested = size, g_clear_error(c->err);
            g_hash_table_insert(c->block_by_addr, GSIZE_TO_POINTER(b.addr),
                                g_memdup2(&b, sizeof b));
        }
    }
    return true;
}

static bool read_events(conv *c, strata_pv root)
{
    strata_pv traces = strata_pickle_dict_get(c->p, root, "device_traces");
    if (strata_pickle_type_of(c->p, traces) != STRATA_PICKLE_LIST)
        return schema(c, "'device_traces' is not a list (was the snapshot taken with "
                         "_record_memory_history() enabled?)");
    size_t n_devices = strata_pickle_len(c->p, traces);
    if (c->opt->device < 0 || (size_t)c->opt->device >= n_devices)
        return schema(c, "--device %d: the snapshot has traces for %zu device(s) (0 to %zu)",
                      c->opt->device, n_devices, n_devices ? n_devices - 1 : 0);
    strata_pickle_iter it;
    strata_pv dev = STRATA_PV_NULL, ev;
    strata_pickle_iter_init(c->p, traces, &it);
    for (int i = 0; i <= c->opt->device; i++)
        strata_pickle_iter_next(c->p, &it, NULL, &dev);
    if (strata_pickle_type_of(c->p, dev) != STRATA_PICKLE_LIST)
        return schema(c, "device_traces[%d] is not a list", c->opt->device);
    g_array_set_size(c->events, 0);
    size_t i = 0;
    strata_pickle_iter_init(c->p, dev, &it);
    for (; strata_pickle_iter_next(c->p, &it, NULL, &ev); i++) {
        char where[64];
        g_snprintf(where, sizeof where, "device_traces[%d][%zu]", c->opt->device, i);
        if (strata_pickle_type_of(c->p, ev) != STRATA_PICKLE_DICT)
            return schema(c, "%s is not a dict", where);
        tevent e = {0};
        strata_pv action = strata_pickle_dict_get(c->p, ev, "action");
        if (strata_pickle_type_of(c->p, action) != STRATA_PICKLE_STR)
            return schema(c, "%s.action: expected a str", where);
        e.action = EV_OTHER;
        for (size_t k = 0; action_names[k].name; k++)
            if (strata_pickle_str_equal(c->p, action, action_names[k].name)) {
                e.action = action_names[k].action;
                break;
            }
        if (e.action == EV_OTHER || e.action == EV_SNAPSHOT || e.action == EV_OOM) {
            /* No address needed; keep for release detection. */
            int64_t v = 0;
            strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, ev, "size"), &v);
            e.size = v > 0 ? (uint64_t)v : 0;
        } else if (!get_u64(c, ev, "addr", where, &e.addr) ||
                   !get_u64(c, ev, "size", where, &e.size)) {
            return false;
        }
        e.stream = get_stream(c, ev);
        e.has_time = strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, ev, "time_us"),
                                           &e.time_us);
        e.frames = strata_pickle_dict_get(c->p, ev, "frames");
        g_array_append_val(c->events, e);
    }
    return true;
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
    if (c->sum)
        c->sum->settings_text = g_string_free(text, FALSE);
    else
        g_string_free(text, TRUE);

    strata_op op = {.kind = STRATA_OP_OPTION, .stream = STRATA_DEFAULT_STREAM};
    int64_t iv;
    bool bv;
    char buf[64];
    if (strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, st, "max_split_size"), &iv) &&
        iv > 0 && iv < INT64_MAX) {
        char *size = strata_format_size_exact((uint64_t)iv);
        op.name = "allocator.max_split_size";
        op.src = size;
        strata_op_list_append(c->ops, &op);
        g_free(size);
    }
    if (strata_pickle_get_bool(c->p, strata_pickle_dict_get(c->p, st, "expandable_segments"),
                               &bv) &&
        bv) {
        op.name = "allocator.expandable_segments";
        op.src = "true";
        strata_op_list_append(c->ops, &op);
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
        g_snprintf(buf, sizeof buf, "%" G_GINT64_FORMAT, divisions);
        op.name = "allocator.roundup_power2_divisions";
        op.src = buf;
        strata_op_list_append(c->ops, &op);
    }
    /* garbage_collection_threshold and the pinned-memory settings have no
     * counterpart in the model: they stay in the header comment only. */
}

/* ---- rebuilding the initial state ---------------------------------------------- */

static void rebuild_initial(conv *c)
{
    for (size_t i = c->events->len; i-- > 0;) {
        const tevent *e = &g_array_index(c->events, tevent, i);
        gpointer key = GSIZE_TO_POINTER(e->addr);
        switch (e->action) {
        case EV_SEGMENT_ALLOC:
        case EV_SEGMENT_MAP:
            if (!g_hash_table_remove(c->seg_by_addr, key) && e->action == EV_SEGMENT_ALLOC)
                c->sum->n_inconsistent++;
            break;
        case EV_SEGMENT_FREE:
        case EV_SEGMENT_UNMAP: {
            tseg s = {e->addr, e->size, e->stream, e->size <= SMALL_SEGMENT};
            g_hash_table_insert(c->seg_by_addr, key, g_memdup2(&s, sizeof s));
            break;
        }
        case EV_ALLOC:
            if (!g_hash_table_remove(c->block_by_addr, key))
                c->sum->n_inconsistent++;
            break;
        case EV_FREE_COMPLETED: {
            tblock b = {e->addr, e->size, e->stream};
            g_hash_table_insert(c->block_by_addr, key, g_memdup2(&b, sizeof b));
            break;
        }
        default:
            break;
        }
    }
}

/* ---- emitting ----------------------------------------------------------------------- */

static char *new_name(conv *c, const char *prefix)
{
    return g_strdup_printf("%s%" G_GUINT64_FORMAT, prefix, c->next_buffer++);
}

static void stream_name(char *buf, size_t n, int64_t stream)
{
    g_snprintf(buf, n, "s%" G_GINT64_FORMAT, stream);
}

static void emit_alloc(conv *c, const char *name, uint64_t size, const char *stream,
                       const char *note, bool has_addr, uint64_t addr, bool has_at, double at)
{
    strata_op op = {.kind = STRATA_OP_ALLOC, .stream = stream, .name = name, .size = size,
                    .has_addr = has_addr, .addr = addr, .has_at = has_at, .at_s = at,
                    .note = note};
    strata_op_list_append(c->ops, &op);
}

static void emit_free(conv *c, const char *name, const char *stream, const char *note,
                      bool has_at, double at)
{
    strata_op op = {.kind = STRATA_OP_FREE, .stream = stream, .name = name, .has_at = has_at,
                    .at_s = at, .note = note};
    strata_op_list_append(c->ops, &op);
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

/* Fill buffers covering [from, to) of a segment, in pieces its pool serves. */
static void emit_fill(conv *c, GPtrArray *fills, GPtrArray *fill_streams, const tseg *s,
                      const char *stream, uint64_t from, uint64_t to)
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
        char *name = new_name(c, "fill.");
        emit_alloc(c, name, n, stream, "setup", false, 0, false, 0);
        g_ptr_array_add(fills, name);
        g_ptr_array_add(fill_streams, g_strdup(stream));
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

    GPtrArray *fills = g_ptr_array_new_with_free_func(g_free);
    GPtrArray *fill_streams = g_ptr_array_new_with_free_func(g_free);
    size_t bi = 0;
    for (size_t i = 0; i < segs->len; i++) {
        const tseg *s = &g_array_index(segs, tseg, i);
        char stream[32];
        stream_name(stream, sizeof stream, s->stream);
        c->sum->n_initial_segments++;
        c->sum->initial_reserved += s->size;
        if (!s->small) {
            /* The whole segment as one request: the allocator reserves exactly
             * this size (no cached block is free to serve it), and keeps it
             * cached when freed. */
            char *name = new_name(c, "seg.");
            emit_alloc(c, name, s->size, stream, "setup", true, s->addr, false, 0);
            emit_free(c, name, stream, "setup", false, 0);
            g_free(name);
        }
        uint64_t cursor = s->addr, end = s->addr + s->size;
        /* Blocks before this segment belong to no initial segment. */
        while (bi < blocks->len && g_array_index(blocks, tblock, bi).addr < s->addr) {
            c->sum->n_inconsistent++;
            bi++;
        }
        for (; bi < blocks->len && g_array_index(blocks, tblock, bi).addr < end; bi++) {
            const tblock *b = &g_array_index(blocks, tblock, bi);
            if (b->addr < cursor) {
                c->sum->n_inconsistent++; /* overlaps the previous block */
                continue;
            }
            emit_fill(c, fills, fill_streams, s, stream, cursor, b->addr);
            char *name = new_name(c, "b.");
            char bstream[32];
            stream_name(bstream, sizeof bstream, b->stream);
            emit_alloc(c, name, b->requested, bstream, "setup", true, b->addr, false, 0);
            g_hash_table_insert(c->live, GSIZE_TO_POINTER(b->addr), name);
            c->sum->n_initial_blocks++;
            cursor = b->addr + round_block(b->requested);
        }
        if (cursor < end)
            emit_fill(c, fills, fill_streams, s, stream, cursor, end);
    }
    c->sum->n_inconsistent += blocks->len - bi;
    for (guint i = 0; i < fills->len; i++)
        emit_free(c, fills->pdata[i], fill_streams->pdata[i], "setup", false, 0);
    g_ptr_array_unref(fill_streams);
    g_ptr_array_unref(fills);
    g_array_unref(segs);
    g_array_unref(blocks);
}

/* A short label for an event: FILE:LINE of its first Python frame outside
 * torch itself (else the first Python frame), spaces made underscores. */
static char *frame_label(conv *c, strata_pv frames)
{
    if (strata_pickle_type_of(c->p, frames) != STRATA_PICKLE_LIST)
        return NULL;
    strata_pickle_iter it;
    strata_pv f, chosen = STRATA_PV_NULL;
    strata_pickle_iter_init(c->p, frames, &it);
    while (strata_pickle_iter_next(c->p, &it, NULL, &f)) {
        size_t len;
        const char *file =
            strata_pickle_get_bytes(c->p, strata_pickle_dict_get(c->p, f, "filename"), &len);
        if (file == NULL || len < 3 || memcmp(file + len - 3, ".py", 3) != 0)
            continue;
        bool internal = g_strstr_len(file, (gssize)len, "/torch/") != NULL;
        if (chosen == STRATA_PV_NULL)
            chosen = f;
        if (!internal) {
            chosen = f;
            break;
        }
    }
    if (chosen == STRATA_PV_NULL)
        return NULL;
    char *file = strata_pickle_dup_str(c->p, strata_pickle_dict_get(c->p, chosen, "filename"));
    int64_t line = 0;
    strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, chosen, "line"), &line);
    const char *base = strrchr(file, '/');
    char *label = g_strdup_printf("%s:%" G_GINT64_FORMAT, base ? base + 1 : file, line);
    g_free(file);
    for (char *s = label; *s; s++)
        if (*s == ' ' || *s == '\t' || *s == '#' || *s == '=' || (unsigned char)*s < 0x20)
            *s = '_';
    return label;
}

/* Ground truth: reserved bytes over the events, from the initial segments
 * and the segment events alone. */
static void ground_truth(conv *c)
{
    uint64_t reserved = c->sum->initial_reserved;
    c->sum->peak_reserved = reserved;
    for (size_t i = 0; i < c->events->len; i++) {
        const tevent *e = &g_array_index(c->events, tevent, i);
        if (e->action == EV_SEGMENT_ALLOC || e->action == EV_SEGMENT_MAP) {
            reserved += e->size;
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

/* Is the run of segment_free events starting at i the program's
 * (empty_cache) rather than the allocator's own? The allocator frees cached
 * segments only when the device cannot give it a new one: then the run is
 * followed by an oom event, or by the segment_alloc it retries, and that
 * segment_alloc could have failed, i.e. reserved before the run plus its
 * size exceeds the peak the device is seen to hold. Otherwise the program
 * asked for it. `reserved` is the reserved bytes before the run. */
static bool program_release(conv *c, size_t i, uint64_t reserved, size_t *run_end)
{
    size_t j = i;
    while (j < c->events->len) {
        ev_action a = g_array_index(c->events, tevent, j).action;
        if (a != EV_SEGMENT_FREE && a != EV_SEGMENT_UNMAP && a != EV_SNAPSHOT)
            break;
        j++;
    }
    *run_end = j;
    if (j == c->events->len)
        return true;
    const tevent *next = &g_array_index(c->events, tevent, j);
    if (next->action == EV_OOM)
        return false;
    if (next->action == EV_SEGMENT_ALLOC || next->action == EV_SEGMENT_MAP)
        return reserved + next->size <= c->sum->peak_reserved;
    return true;
}

static void emit_events(conv *c)
{
    bool have_t0 = false;
    int64_t t0 = 0;
    for (size_t i = 0; i < c->events->len; i++) {
        const tevent *e = &g_array_index(c->events, tevent, i);
        if (e->has_time) {
            t0 = e->time_us;
            have_t0 = true;
            break;
        }
    }
    uint64_t reserved = c->sum->initial_reserved;
    size_t release_until = 0; /* events before this index are in a handled run */
    for (size_t i = 0; i < c->events->len; i++) {
        const tevent *e = &g_array_index(c->events, tevent, i);
        char stream[32];
        stream_name(stream, sizeof stream, e->stream);
        bool has_at = have_t0 && e->has_time;
        double at = has_at ? (double)(e->time_us - t0) / 1e6 : 0;
        if (has_at && at < 0)
            has_at = false;
        gpointer key = GSIZE_TO_POINTER(e->addr);
        switch (e->action) {
        case EV_ALLOC: {
            char *old = g_hash_table_lookup(c->live, key);
            if (old) { /* allocated twice without a free: keep the snapshot's word */
                c->sum->n_inconsistent++;
                emit_free(c, old, stream, NULL, false, 0);
                g_hash_table_remove(c->live, key);
            }
            char *name = new_name(c, "b.");
            char *note = c->opt->frames ? frame_label(c, e->frames) : NULL;
            emit_alloc(c, name, e->size, stream, note, true, e->addr, has_at, at);
            g_free(note);
            g_hash_table_insert(c->live, key, name);
            c->sum->n_allocs++;
            break;
        }
        case EV_FREE_COMPLETED: {
            char *name = g_hash_table_lookup(c->live, key);
            if (name == NULL) {
                c->sum->n_inconsistent++;
                break;
            }
            emit_free(c, name, stream, NULL, has_at, at);
            g_hash_table_remove(c->live, key);
            c->sum->n_frees++;
            break;
        }
        case EV_SEGMENT_ALLOC:
        case EV_SEGMENT_MAP:
            reserved += e->size;
            break;
        case EV_SEGMENT_FREE:
        case EV_SEGMENT_UNMAP: {
            size_t run_end;
            bool first_of_run = i >= release_until;
            bool program = first_of_run && program_release(c, i, reserved, &run_end);
            reserved = reserved >= e->size ? reserved - e->size : 0;
            if (program) {
                strata_op op = {.kind = STRATA_OP_RELEASE, .stream = stream, .has_at = has_at,
                                .at_s = at, .note = "empty_cache"};
                strata_op_list_append(c->ops, &op);
                c->sum->n_releases++;
                release_until = run_end;
            } else if (first_of_run) {
                release_until = run_end;
            }
            break;
        }
        default:
            break;
        }
    }
}

strata_op_list *strata_torch_convert(const strata_pickle *p, const char *origin,
                                     const strata_torch_options *opt, strata_torch_summary *sum,
                                     GError **err)
{
    strata_torch_options defaults;
    if (opt == NULL) {
        strata_torch_options_init(&defaults);
        opt = &defaults;
    }
    strata_torch_summary local = {0};
    if (sum == NULL)
        sum = &local;
    memset(sum, 0, sizeof *sum);
    sum->segment_alloc_sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    conv c = {
        .p = p,
        .origin = origin ? origin : "<snapshot>",
        .opt = opt,
        .sum = sum,
        .err = err,
        .events = g_array_new(FALSE, FALSE, sizeof(tevent)),
        .seg_by_addr = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free),
        .block_by_addr = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free),
        .live = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free),
        .ops = strata_op_list_new(),
    };
    strata_pv root = strata_pickle_root(p);
    bool ok = true;
    if (strata_pickle_type_of(p, root) != STRATA_PICKLE_DICT)
        ok = schema(&c, "the top level is a %s, expected a dict",
                    strata_pickle_type_name(strata_pickle_type_of(p, root)));
    ok = ok && read_segments(&c, root) && read_events(&c, root);
    if (ok) {
        sum->n_events = c.events->len;
        read_settings(&c, root);
        rebuild_initial(&c);
        uint64_t before = strata_op_list_len(c.ops);
        emit_setup(&c);
        sum->n_setup_ops = strata_op_list_len(c.ops) - before;
        ground_truth(&c);
        emit_events(&c);
    }
    g_array_unref(c.events);
    g_hash_table_unref(c.seg_by_addr);
    g_hash_table_unref(c.block_by_addr);
    g_hash_table_unref(c.live);
    if (sum == &local)
        strata_torch_summary_clear(&local);
    if (!ok) {
        strata_op_list_free(c.ops);
        if (sum != &local)
            strata_torch_summary_clear(sum);
        return NULL;
    }
    return c.ops;
}

strata_source *strata_torch_import(const char *path, const strata_torch_options *opt,
                                   strata_torch_summary *sum, GError **err)
{
    strata_pickle *p = strata_pickle_load_file(path, err);
    if (p == NULL)
        return NULL;
    strata_op_list *ops = strata_torch_convert(p, path, opt, sum, err);
    strata_pickle_free(p);
    if (ops == NULL)
        return NULL;
    return strata_op_list_to_source(ops, path);
}
