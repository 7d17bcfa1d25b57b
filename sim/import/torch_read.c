/*
 * torch_read.c: reading a snapshot's values for the converter (see
 * torch_conv.h): segments with their live blocks, events as compact tevents
 * with a FILE:LINE label of their frames, the document's shape, and the
 * allocator settings as `option` lines.
 *
 * Invariant: a value of the wrong type is an error naming its path (e.g.
 * "device_traces[0][12].addr") and what was expected, never a crash; fields
 * a snapshot may lack (stream, time_us, requested_size, segment_type) have
 * defaults. An event's time more than the trace's sane range (10^9 s)
 * after the first event's is an error naming the event.
 */
#include <string.h>

#include "core/error.h"
#include "core/units.h"
#include "import/torch_conv.h"
#include "trace/check.h"

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
    {"user_defined", EV_USER},
    {NULL, EV_OTHER},
};

bool torch_schema(conv *c, const char *fmt, ...)
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
    if (!strata_pickle_get_int(c->p, x, &v) || v < 0) {
        strata_pickle_type xt = x ? strata_pickle_type_of(c->p, x) : STRATA_PICKLE_NONE;
        if (xt == STRATA_PICKLE_INT || xt == STRATA_PICKLE_BIGINT) {
            /* every size and address is below 2^63 (an int64 in PyTorch) */
            char *text = strata_pickle_to_text(c->p, x, 1);
            bool ok = torch_schema(c, "%s.%s: expected a non-negative int below 2^63, found %.64s", where,
                                   key, text);
            g_free(text);
            return ok;
        }
        return torch_schema(c, "%s.%s: expected a non-negative int, found %s", where, key,
                      x ? strata_pickle_type_name(strata_pickle_type_of(c->p, x)) : "nothing");
    }
    *out = (uint64_t)v;
    return true;
}

bool torch_get_u64(conv *c, strata_pv dict, const char *key, const char *where, uint64_t *out)
{
    return get_u64(c, dict, key, where, out);
}

static int64_t get_stream(conv *c, strata_pv dict)
{
    int64_t v = 0;
    strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, dict, "stream"), &v);
    return v;
}

/* A live block's requested bytes: `requested_size` (PyTorch 2.1 on); in
 * older snapshots the first entry of its `history` gives `real_size`, else
 * the block's size, as torch/cuda/_memory_viz.py's _block_extra_legacy()
 * reads them. */
static uint64_t block_requested(conv *c, strata_pv blk, uint64_t size)
{
    int64_t requested = 0;
    strata_pv rv = strata_pickle_dict_get(c->p, blk, "requested_size");
    if (rv != STRATA_PV_NULL) {
        strata_pickle_get_int(c->p, rv, &requested);
        return requested > 0 ? (uint64_t)requested : size;
    }
    strata_pv hist = strata_pickle_dict_get(c->p, blk, "history");
    if (strata_pickle_type_of(c->p, hist) == STRATA_PICKLE_LIST && strata_pickle_len(c->p, hist) > 0) {
        strata_pickle_iter it;
        strata_pv first = STRATA_PV_NULL;
        strata_pickle_iter_init(c->p, hist, &it);
        strata_pickle_iter_next(c->p, &it, NULL, &first);
        if (strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, first, "real_size"),
                                  &requested) &&
            requested > 0 && (uint64_t)requested <= size) {
            c->derived_requested_history++;
            return (uint64_t)requested;
        }
    }
    c->derived_requested_size++;
    return size;
}

/* segments[i]: the segment and its live blocks, if it is the device's. */
bool torch_read_segment(conv *c, uint64_t i, strata_pv seg)
{
    char where[64];
    g_snprintf(where, sizeof where, "segments[%" G_GUINT64_FORMAT "]", i);
    if (strata_pickle_type_of(c->p, seg) != STRATA_PICKLE_DICT)
        return torch_schema(c, "%s is not a dict", where);
    int64_t device = 0;
    strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, seg, "device"), &device);
    if (device < 0 || device > G_MAXINT)
        return torch_schema(c, "%s.device: expected a device index from 0 to %d, got %" G_GINT64_FORMAT,
                            where, G_MAXINT, device);
    torch_device_count(c, device)->segments++;
    if (device != c->opt.device)
        return true;
    tseg s = {0};
    if (!get_u64(c, seg, "address", where, &s.addr) ||
        !get_u64(c, seg, "total_size", where, &s.size))
        return false;
    if (s.size >= (UINT64_C(1) << 63) - c->final_reserved)
        return torch_schema(c, "%s.total_size: the device's segments would hold %" G_GUINT64_FORMAT
                            " + %" G_GUINT64_FORMAT " bytes, expected less than 2^63 in all",
                            where, c->final_reserved, s.size);
    c->final_reserved += s.size;
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
        return torch_schema(c, "%s.blocks is not a list", where);
    strata_pickle_iter bit;
    strata_pv blk;
    size_t j = 0;
    /* Older snapshots (PyTorch 1.13 and 2.0) give a block its size and
     * state but no address: the blocks of a segment tile it in order, so
     * a block's address is the segment's plus the sizes of the blocks
     * before it, as torch/utils/viz/MemoryViz.js (`addr += b.size`) and
     * torch/cuda/_memory_viz.py (segsum's `boffset += b['size']`) read
     * them. */
    uint64_t offset = 0;
    strata_pickle_iter_init(c->p, blocks, &bit);
    for (; strata_pickle_iter_next(c->p, &bit, NULL, &blk); j++) {
        char bwhere[96];
        g_snprintf(bwhere, sizeof bwhere, "%s.blocks[%zu]", where, j);
        if (strata_pickle_type_of(c->p, blk) != STRATA_PICKLE_DICT)
            return torch_schema(c, "%s is not a dict", bwhere);
        strata_pv state = strata_pickle_dict_get(c->p, blk, "state");
        if (strata_pickle_type_of(c->p, state) != STRATA_PICKLE_STR)
            return torch_schema(c, "%s.state: expected a str", bwhere);
        uint64_t size = 0;
        if (!get_u64(c, blk, "size", bwhere, &size))
            return false;
        uint64_t at = sat_add(s.addr, offset);
        offset = sat_add(offset, size); /* a block past the segment: the setup counts it */
        if (!strata_pickle_str_equal(c->p, state, "active_allocated") &&
            !strata_pickle_str_equal(c->p, state, "active_pending_free"))
            continue;
        tblock b = {.stream = s.stream};
        strata_pv addr = strata_pickle_dict_get(c->p, blk, "address");
        if (addr == STRATA_PV_NULL) {
            b.addr = at;
            c->derived_addresses++;
        } else if (!get_u64(c, blk, "address", bwhere, &b.addr)) {
            return false;
        }
        b.requested = block_requested(c, blk, size);
        if (b.requested == 0)
            continue; /* an empty block holds nothing */
        g_hash_table_insert(c->block_by_addr, GSIZE_TO_POINTER(b.addr), g_memdup2(&b, sizeof b));
    }
    return true;
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
    /* at most the first 200 bytes of the name (by bytes, not characters):
     * a trace line has at most 1 MiB (the reader refuses longer ones) */
    char *label = g_strdup_printf("%.200s:%" G_GINT64_FORMAT, base ? base + 1 : file, line);
    g_free(file);
    for (char *s = label; *s; s++)
        if ((unsigned char)*s < 0x21 || *s == 0x7f || *s == '#' || *s == '=' || *s == ',')
            *s = '_';
    uint32_t note = torch_intern(c->out, label) + 1;
    g_free(label);
    return note;
}

/* Does a frame name empty_cache? torch.cuda.empty_cache() (torch/cuda/
 * memory.py) calls the allocator's emptyCache(), which frees the cached
 * segments with the caller's stack as their context; a retry's frees
 * carry the stack of the malloc that failed. */
static bool frames_name_empty_cache(conv *c, strata_pv frames)
{
    if (strata_pickle_type_of(c->p, frames) != STRATA_PICKLE_LIST)
        return false;
    strata_pickle_iter it;
    strata_pv f;
    strata_pickle_iter_init(c->p, frames, &it);
    while (strata_pickle_iter_next(c->p, &it, NULL, &f)) {
        size_t len;
        const char *name = strata_pickle_get_bytes(c->p, strata_pickle_dict_get(c->p, f, "name"), &len);
        if (name && (g_strstr_len(name, (gssize)len, "empty_cache") ||
                     g_strstr_len(name, (gssize)len, "emptyCache")))
            return true;
    }
    return false;
}

/* An event's at= is its time_us less the first event's: one past the
 * trace's sane range (trace/check.h) is bad input at the event, not an op
 * that every consumer would refuse. Events before the first timed one, or
 * earlier than it, get no at= and pass. */
static bool event_time_ok(conv *c, const char *where, const tevent *e)
{
    if (!c->have_t0 || !e->has_time || e->time_us < c->t0)
        return true;
    uint64_t us = (uint64_t)e->time_us - (uint64_t)c->t0; /* exact: no signed overflow */
    if (strata_trace_at_ok((double)us / 1e6))
        return true;
    g_set_error(c->err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "%s: %s.time_us: expected at most %.0f us after the first event's, got %" G_GUINT64_FORMAT
                " us after it",
                c->origin, where, STRATA_TRACE_MAX_AT_S * 1e6, us);
    return false;
}

/* The event at `where` as a compact event (the label only if asked);
 * unknown actions are counted into `unknown` when it is not NULL. */
static bool read_event(conv *c, const char *where, strata_pv ev, bool label, GHashTable *unknown,
                       tevent *e)
{
    if (strata_pickle_type_of(c->p, ev) != STRATA_PICKLE_DICT)
        return torch_schema(c, "%s is not a dict", where);
    memset(e, 0, sizeof *e);
    strata_pv action = strata_pickle_dict_get(c->p, ev, "action");
    if (strata_pickle_type_of(c->p, action) != STRATA_PICKLE_STR)
        return torch_schema(c, "%s.action: expected a str", where);
    e->action = EV_OTHER;
    for (size_t k = 0; action_names[k].name; k++)
        if (strata_pickle_str_equal(c->p, action, action_names[k].name)) {
            e->action = action_names[k].action;
            break;
        }
    if (e->action == EV_OTHER && unknown)
        torch_count_unknown(unknown, strata_pickle_dup_str(c->p, action));
    if (e->action == EV_OTHER || e->action == EV_USER || e->action == EV_SNAPSHOT ||
        e->action == EV_OOM) {
        /* No address needed (an oom's is the device's free bytes). */
        int64_t v = 0;
        strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, ev, "size"), &v);
        e->size = v > 0 ? (uint64_t)v : 0;
        strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, ev, "addr"), &v);
        e->addr = v > 0 ? (uint64_t)v : 0;
    } else if (!get_u64(c, ev, "addr", where, &e->addr) ||
               !get_u64(c, ev, "size", where, &e->size)) {
        return false;
    }
    e->stream = get_stream(c, ev);
    e->has_time =
        strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, ev, "time_us"), &e->time_us);
    if (!event_time_ok(c, where, e))
        return false;
    if (!label && (e->action == EV_SEGMENT_FREE || e->action == EV_SEGMENT_UNMAP))
        e->empty_cache = frames_name_empty_cache(c, strata_pickle_dict_get(c->p, ev, "frames"));
    if (label && e->action == EV_ALLOC && e->size != 0 && c->opt.frames)
        e->note = frame_label(c, strata_pickle_dict_get(c->p, ev, "frames"));
    return true;
}

/* device_traces[device][i] as a compact event (the label only in pass 2). */
bool torch_read_event(conv *c, uint64_t i, strata_pv ev, bool label, tevent *e)
{
    char where[64];
    g_snprintf(where, sizeof where, "device_traces[%d][%" G_GUINT64_FORMAT "]", c->opt.device, i);
    return read_event(c, where, ev, label, label ? NULL : c->unknown, e);
}

/* host_traces[i] (the pinned host allocator's events) with its label. */
bool torch_read_host_event(conv *c, uint64_t i, strata_pv ev, GHashTable *unknown, tevent *e)
{
    char where[64];
    g_snprintf(where, sizeof where, "host_traces[%" G_GUINT64_FORMAT "]", i);
    return read_event(c, where, ev, true, unknown, e);
}

bool torch_is_marker(conv *c, strata_pv ev)
{
    return strata_pickle_str_equal(c->p, strata_pickle_dict_get(c->p, ev, "action"), "snapshot");
}

/* The device's event list in the finished document, or an error. */
bool torch_check_document(conv *c, GError **err)
{
    c->err = err;
    strata_pv root = strata_pickle_root(c->p);
    if (strata_pickle_type_of(c->p, root) == STRATA_PICKLE_LIST) {
        /* torch.cuda.memory_snapshot() pickled: the segments alone, a state
         * dump (every PyTorch version; _dump_snapshot writes the dict) */
        if (c->seg_err) {
            const char *inner = strstr(c->seg_err->message, "snapshot: ");
            bool ok = torch_schema(c, "the top level is a list, expected a dict "
                                      "(torch.cuda.memory._snapshot()) or a list of segments "
                                      "(torch.cuda.memory_snapshot()): %s",
                                   inner ? inner + 10 : c->seg_err->message);
            g_clear_error(&c->seg_err);
            return ok;
        }
        return true;
    }
    if (strata_pickle_type_of(c->p, root) != STRATA_PICKLE_DICT)
        return torch_schema(c, "the top level is a %s, expected a dict (torch.cuda.memory._snapshot()) "
                            "or a list of segments (torch.cuda.memory_snapshot())",
                      strata_pickle_type_name(strata_pickle_type_of(c->p, root)));
    strata_pv segs = strata_pickle_dict_get(c->p, root, "segments");
    if (strata_pickle_type_of(c->p, segs) != STRATA_PICKLE_LIST)
        return torch_schema(c, "'segments' is not a list");
    if (c->seg_err) {
        g_propagate_error(err, g_steal_pointer(&c->seg_err));
        return false;
    }
    strata_pv traces = strata_pickle_dict_get(c->p, root, "device_traces");
    if (traces == STRATA_PV_NULL)
        return true; /* a state dump: the history was never recorded */
    if (strata_pickle_type_of(c->p, traces) != STRATA_PICKLE_LIST)
        return torch_schema(c, "'device_traces' is not a list");
    size_t n_devices = strata_pickle_len(c->p, traces);
    if (n_devices == 0 || (size_t)c->opt.device >= n_devices) {
        if (n_devices == 0 ||
            g_hash_table_contains(c->devices, GSIZE_TO_POINTER((gsize)c->opt.device)))
            return true; /* no history on this device; its segments may exist */
        return torch_schema(c, "--device %d: the snapshot has traces for %zu device(s) (0 to %zu)",
                            c->opt.device, n_devices, n_devices - 1);
    }
    strata_pickle_iter it;
    strata_pv dev = STRATA_PV_NULL;
    strata_pickle_iter_init(c->p, traces, &it);
    for (int i = 0; i <= c->opt.device; i++)
        strata_pickle_iter_next(c->p, &it, NULL, &dev);
    if (strata_pickle_type_of(c->p, dev) != STRATA_PICKLE_LIST)
        return torch_schema(c, "device_traces[%d] is not a list", c->opt.device);
    if (c->ev_err) {
        g_propagate_error(err, g_steal_pointer(&c->ev_err));
        return false;
    }
    return true;
}

void torch_document_items(conv *c, item_fn fn)
{
    strata_pv root = strata_pickle_root(c->p);
    strata_pickle_iter it;
    strata_pv v;
    uint64_t i = 0;
    bool bare = strata_pickle_type_of(c->p, root) == STRATA_PICKLE_LIST; /* memory_snapshot() */
    strata_pickle_iter_init(c->p, bare ? root : strata_pickle_dict_get(c->p, root, "segments"), &it);
    for (; strata_pickle_iter_next(c->p, &it, NULL, &v); i++)
        fn(c, SEL_SEGMENTS, 0, i, v);
    strata_pv traces = strata_pickle_dict_get(c->p, root, "device_traces");
    if (strata_pickle_type_of(c->p, traces) != STRATA_PICKLE_LIST)
        return;
    strata_pv dev = STRATA_PV_NULL;
    strata_pickle_iter dit;
    strata_pickle_iter_init(c->p, traces, &dit);
    for (uint64_t d = 0; strata_pickle_iter_next(c->p, &dit, NULL, &dev); d++) {
        if (strata_pickle_type_of(c->p, dev) != STRATA_PICKLE_LIST)
            continue;
        i = 0;
        strata_pickle_iter_init(c->p, dev, &it);
        for (; strata_pickle_iter_next(c->p, &it, NULL, &v); i++)
            fn(c, SEL_EVENTS, d, i, v);
    }
}

/* Devices are counted in a table keyed by index, so a history on device
 * 5000 is counted as device 5000 (an entry per device that has events or
 * segments: bounded by the items read). */
device_count *torch_device_count(conv *c, int64_t d)
{
    g_assert(d >= 0 && d <= G_MAXINT);
    device_count *n = g_hash_table_lookup(c->devices, GSIZE_TO_POINTER((gsize)d));
    if (n == NULL) {
        n = g_new0(device_count, 1);
        g_hash_table_insert(c->devices, GSIZE_TO_POINTER((gsize)d), n);
    }
    return n;
}

void torch_add_option(conv *c, const char *key, char *value)
{
    g_ptr_array_add(c->out->option_keys, g_strdup(key));
    g_ptr_array_add(c->out->option_values, value);
}

/* roundup_power2_divisions: one N, or {"1": d, "2": d, ..., "32768": d},
 * one division per power-of-two interval starting at that many MiB. The
 * same N everywhere is `roundup_power2_divisions=N`, else every interval
 * is written out as `roundup_power2_intervals=1:d/2:d/...`. */
static void read_divisions(conv *c, strata_pv rp)
{
    int64_t n = 0;
    if (strata_pickle_get_int(c->p, rp, &n)) {
        if (n > 1)
            torch_add_option(c, "allocator.roundup_power2_divisions",
                             g_strdup_printf("%" G_GINT64_FORMAT, n));
        return;
    }
    if (strata_pickle_type_of(c->p, rp) != STRATA_PICKLE_DICT)
        return;
    GString *list = g_string_new(NULL);
    bool uniform = true;
    int64_t first = -1;
    for (int i = 0; i < 16; i++) {
        char key[16];
        g_snprintf(key, sizeof key, "%d", 1 << i);
        int64_t d = 0;
        strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, rp, key), &d);
        d = d < 0 ? 0 : d;
        uniform = uniform && (first < 0 || d == first);
        first = first < 0 ? d : first;
        g_string_append_printf(list, "%s%s:%" G_GINT64_FORMAT, i ? "/" : "", key, d);
    }
    if (!uniform)
        torch_add_option(c, "allocator.roundup_power2_intervals", g_string_free(list, FALSE));
    else
        g_string_free(list, TRUE);
    if (uniform && first > 1)
        torch_add_option(c, "allocator.roundup_power2_divisions",
                         g_strdup_printf("%" G_GINT64_FORMAT, first));
}

/* The settings PYTORCH_CUDA_ALLOC_CONF holds that allocator_settings does
 * not: max_non_split_rounding_mb and large_segment_size_mb. */
static void read_conf(conv *c, const char *conf)
{
    static const struct {
        const char *conf, *option;
    } keys[] = {{"max_non_split_rounding_mb", "allocator.max_non_split_rounding"},
                {"large_segment_size_mb", "allocator.large_segment_size"}};
    char **items = g_strsplit(conf, ",", -1);
    bool seen[G_N_ELEMENTS(keys)] = {false};
    for (size_t i = 0; items[i]; i++) {
        char *colon = strchr(items[i], ':');
        if (colon == NULL)
            continue;
        *colon = '\0';
        char *name = g_strstrip(items[i]), *end = NULL;
        uint64_t mb = g_ascii_strtoull(colon + 1, &end, 10);
        for (size_t k = 0; k < G_N_ELEMENTS(keys); k++)
            if (!seen[k] && strcmp(name, keys[k].conf) == 0 && end != colon + 1 && mb > 0 &&
                mb < (1u << 30)) {
                seen[k] = true;
                torch_add_option(c, keys[k].option, g_strdup_printf("%" G_GUINT64_FORMAT "MiB", mb));
            }
    }
    g_strfreev(items);
}

#define SETTINGS_TEXT_MAX (64u << 10)

/* allocator_settings -> options for the settings that differ from PyTorch's
 * defaults, and a k=v text of all of them for the header. */
void torch_read_settings(conv *c, strata_pv root)
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
        if (key && text->len < SETTINGS_TEXT_MAX) {
            g_strdelimit(val, " \t\n\r", '_');
            g_strdelimit(key, " \t\n\r", '_');
            /* the header comment is one line, at most 1 MiB for the reader:
             * each key and value at most 256 bytes, the whole 64 KiB */
            g_string_append_printf(text, "%s%.256s=%.256s%s", text->len ? " " : "", key, val,
                                   strlen(val) > 256 ? "..." : "");
        }
        g_free(key);
        g_free(val);
    }
    c->sum->settings_text = g_string_free(text, FALSE);

    int64_t iv;
    bool bv;
    if (strata_pickle_get_int(c->p, strata_pickle_dict_get(c->p, st, "max_split_size"), &iv) &&
        iv > 0 && iv < INT64_MAX) {
        torch_add_option(c, "allocator.max_split_size", strata_format_size_exact((uint64_t)iv));
    }
    if (strata_pickle_get_bool(c->p, strata_pickle_dict_get(c->p, st, "expandable_segments"),
                               &bv) &&
        bv) {
        torch_add_option(c, "allocator.expandable_segments", g_strdup("true"));
    }
    read_divisions(c, strata_pickle_dict_get(c->p, st, "roundup_power2_divisions"));
    double gc = 0;
    strata_pv gv = strata_pickle_dict_get(c->p, st, "garbage_collection_threshold");
    if (strata_pickle_get_double(c->p, gv, &gc) && gc > 0 && gc < 1)
        torch_add_option(c, "allocator.garbage_collection_threshold", g_strdup_printf("%.15g", gc));
    size_t len = 0;
    const char *conf = strata_pickle_get_bytes(
        c->p, strata_pickle_dict_get(c->p, st, "PYTORCH_CUDA_ALLOC_CONF"), &len);
    if (conf) {
        char *text_conf = g_strndup(conf, len);
        read_conf(c, text_conf);
        g_free(text_conf);
    }
    /* The pinned-memory settings have no counterpart in the model: they
     * stay in the header comment only. */
}
