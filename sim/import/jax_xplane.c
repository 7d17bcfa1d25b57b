/*
 * jax_xplane.c: XProf's XSpace protobuf into XLA ops (contract in
 * jax_xplane.h).
 *
 * Design: the file is decoded at once by the protoc-c code of
 * third_party/xprof/xplane.proto; the planes TSL's converter turns into
 * trace-event JSON are walked in its order (the host plane, then the
 * device planes; lines, then events), each line and event handed to
 * import/jax_ops.h as the JSON's thread and `X` event would be. Times are
 * kept in picoseconds (int64) until the difference from the earliest line
 * is taken, so epoch timestamps lose no precision in a double.
 */
#include "import/jax_xplane.h"
#include <glib/gstdio.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <xplane.pb-c.h>
#include "core/error.h"

/* TSL's names and trace-viewer process ids (xla/tsl/profiler/utils/xplane_schema.h,
 * trace_utils.h): the JSON's pid of the host plane and of the first device. */
#define HOST_PLANE "/host:CPU"
#define HOST_PID 701
#define FIRST_DEVICE_PID 1
#define ASYNC_OPS_LINE "Async XLA Ops"
#define MAX_DEVICE (1 << 20)

typedef Tensorflow__Profiler__XSpace xspace;
typedef Tensorflow__Profiler__XPlane xplane;
typedef Tensorflow__Profiler__XLine xline;
typedef Tensorflow__Profiler__XEvent xevent;
typedef Tensorflow__Profiler__XStat xstat;
typedef Tensorflow__Profiler__XEventMetadata xevent_md;
typedef Tensorflow__Profiler__XStatMetadata xstat_md;

/* One plane being read. */
typedef struct plane_ctx {
    const char *path;
    const xplane *plane;
    GHashTable *events;      /* XEventMetadata id (int64 key, borrowed) -> metadata */
    GHashTable *stats;       /* XStatMetadata id -> metadata */
    int64_t base_ps;         /* the earliest line's start: times are taken from it */
    strata_jax_ops *ops;
    strata_jax_profile_summary *s;
} plane_ctx;

/* What an event's stats say, as the JSON's args would. */
typedef struct event_stats {
    const char *hlo_op, *step_name;
    int64_t device;
} event_stats;

bool strata_jax_xplane_is(const char *path)
{
    if (path == NULL)
        return false;
    if (g_str_has_suffix(path, ".pb"))
        return true;
    FILE *f = fopen(path, "rb");
    unsigned char b[2] = {0, 0};
    size_t n = f ? fread(b, 1, 2, f) : 0;
    if (f)
        fclose(f);
    /* XSpace.planes (field 1, length-delimited), then a length that is no JSON after a newline */
    return n == 2 && b[0] == 0x0a && strchr("{[ \t\r\n", b[1]) == NULL;
}

/* ---- fields of a newer schema ---------------------------------------------- */

/* Counts m's unknown fields; the first one's place is kept for the note. */
static void read_past(strata_jax_profile_summary *s, const ProtobufCMessage *m, const char *what, const char *plane,
                      const char *line, int64_t index)
{
    if (m->n_unknown_fields == 0)
        return;
    if (s->n_unknown == 0) {
        GString *w = g_string_new(NULL);
        if (plane)
            g_string_append_printf(w, "plane '%s' ", plane);
        if (line)
            g_string_append_printf(w, "line '%s' ", line);
        if (index >= 0)
            g_string_append_printf(w, "%s %" PRId64 ": ", what, index);
        g_string_append_printf(w, "%s field %" PRIu32 " (wire type %d)", m->descriptor->short_name,
                               m->unknown_fields[0].tag, (int)m->unknown_fields[0].wire_type);
        g_strlcpy(s->unknown_first, w->str, sizeof s->unknown_first);
        g_string_free(w, TRUE);
    }
    s->n_unknown += m->n_unknown_fields;
}

static void read_past_stats(strata_jax_profile_summary *s, xstat *const *stats, size_t n, const char *plane,
                            const char *line, int64_t index)
{
    for (size_t k = 0; k < n; k++)
        read_past(s, &stats[k]->base, "event", plane, line, index);
}

/* The metadata's and the plane's own unknown fields. */
static void read_past_plane(strata_jax_profile_summary *s, const xplane *p)
{
    read_past(s, &p->base, NULL, NULL, NULL, -1);
    for (size_t k = 0; k < p->n_event_metadata; k++) {
        const xevent_md *md = p->event_metadata[k]->value;
        read_past(s, &p->event_metadata[k]->base, NULL, p->name, NULL, -1);
        if (md) {
            read_past(s, &md->base, NULL, p->name, NULL, -1);
            read_past_stats(s, md->stats, md->n_stats, p->name, NULL, -1);
        }
    }
    for (size_t k = 0; k < p->n_stat_metadata; k++) {
        read_past(s, &p->stat_metadata[k]->base, NULL, p->name, NULL, -1);
        if (p->stat_metadata[k]->value)
            read_past(s, &p->stat_metadata[k]->value->base, NULL, p->name, NULL, -1);
    }
    read_past_stats(s, p->stats, p->n_stats, p->name, NULL, -1);
}

/* ---- one plane -------------------------------------------------------------- */

static const char *line_name(const xline *l) { return l->display_name && *l->display_name ? l->display_name : l->name; }

static char *where(const plane_ctx *c, const xline *l, size_t k, const char *name)
{
    return g_strdup_printf("%s: plane '%s' line '%s' event %zu ('%s')", c->path, c->plane->name, line_name(l), k,
                           name ? name : "");
}

/* A string stat's value (str_value, or ref_value: a stat metadata's name). */
static const char *stat_string(const plane_ctx *c, const xstat *st)
{
    if (st->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE)
        return st->str_value;
    if (st->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE) {
        int64_t id = (int64_t)st->ref_value;
        const xstat_md *md = g_hash_table_lookup(c->stats, &id);
        return md ? md->name : NULL;
    }
    return NULL;
}

/* A device_ordinal's value, -1 when it is not a whole number below 2^20. */
static int64_t stat_device(const xstat *st)
{
    switch (st->value_case) {
    case TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE:
        return st->int64_value >= 0 && st->int64_value < MAX_DEVICE ? st->int64_value : -1;
    case TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE:
        return st->uint64_value < MAX_DEVICE ? (int64_t)st->uint64_value : -1;
    case TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE: {
        char *end = NULL;
        guint64 n = g_ascii_strtoull(st->str_value, &end, 10);
        return g_ascii_isdigit(st->str_value[0]) && *end == '\0' && n < MAX_DEVICE ? (int64_t)n : -1;
    }
    default: return -1;
    }
}

/* Reads stats into out (later ones win, as the JSON's args do); false with
 * err (at w) for a stat naming no metadata or a known one of a bad value. */
static bool read_stats(const plane_ctx *c, xstat *const *stats, size_t n, event_stats *out, const char *w,
                       GError **err)
{
    for (size_t k = 0; k < n; k++) {
        const xstat *st = stats[k];
        if (st->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE__NOT_SET)
            continue; /* TSL's converter skips it too */
        const xstat_md *md = g_hash_table_lookup(c->stats, &st->metadata_id);
        if (md == NULL) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s: stat metadata_id %" PRId64 ": expected an id of the plane's stat_metadata", w,
                        st->metadata_id);
            return false;
        }
        const char *name = md->name ? md->name : "";
        if (strcmp(name, "hlo_op") == 0 || strcmp(name, "step_name") == 0) {
            const char *v = stat_string(c, st);
            if (v == NULL) {
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "%s: stat '%s': expected a string (str_value, or a ref_value naming stat metadata)", w,
                            name);
                return false;
            }
            *(name[0] == 'h' ? &out->hlo_op : &out->step_name) = v;
        } else if (strcmp(name, "device_ordinal") == 0) {
            out->device = stat_device(st);
            if (out->device < 0) {
                g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                            "%s: stat 'device_ordinal': expected a whole number from 0 to %d", w, MAX_DEVICE - 1);
                return false;
            }
        }
    }
    return true;
}

/* An event's start (ps from the epoch) and duration; false for a negative
 * or overflowing one. */
static bool event_times(const xline *l, const xevent *e, int64_t *ts_ps, int64_t *dur_ps)
{
    int64_t offset = e->data_case == TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS ? e->offset_ps : 0;
    int64_t start;
    if (l->timestamp_ns < 0 || offset < 0 || e->duration_ps < 0 ||
        __builtin_mul_overflow(l->timestamp_ns, (int64_t)1000, &start) ||
        __builtin_add_overflow(start, offset, ts_ps) || *ts_ps > INT64_MAX - e->duration_ps)
        return false;
    *dur_ps = MAX(e->duration_ps, 1); /* as trace_events_to_json.cc writes it */
    return true;
}

static bool read_event(plane_ctx *c, int64_t pid, int64_t tid, const xline *l, size_t k, GError **err)
{
    const xevent *e = l->events[k];
    read_past(c->s, &e->base, "event", c->plane->name, line_name(l), (int64_t)k);
    read_past_stats(c->s, e->stats, e->n_stats, c->plane->name, line_name(l), (int64_t)k);
    const xevent_md *md = g_hash_table_lookup(c->events, &e->metadata_id);
    if (md == NULL) {
        char *w = where(c, l, k, NULL);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: metadata_id %" PRId64 ": expected an id of the plane's event_metadata", w, e->metadata_id);
        g_free(w);
        return false;
    }
    const char *name = md->display_name && *md->display_name ? md->display_name : md->name;
    char *w = where(c, l, k, name);
    event_stats st = {.device = -1};
    int64_t ts_ps = 0, dur_ps = 0;
    bool ok = read_stats(c, md->stats, md->n_stats, &st, w, err) && read_stats(c, e->stats, e->n_stats, &st, w, err);
    if (ok && !event_times(l, e, &ts_ps, &dur_ps)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: timestamp_ns %" PRId64 ", offset_ps %" PRId64 ", duration_ps %" PRId64
                    ": expected times of at least 0 whose end is below 2^63 ps",
                    w, l->timestamp_ns, e->data_case == TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS ? e->offset_ps : 0,
                    e->duration_ps);
        ok = false;
    }
    g_free(w);
    if (!ok)
        return false;
    c->s->n_events++;
    strata_jax_event ev = {.ts_us = (double)(ts_ps - c->base_ps) / 1e6, .dur_us = (double)dur_ps / 1e6,
                           .pid = pid, .tid = tid, .device = st.device,
                           .name = st.step_name ? st.step_name : name ? name : "", .hlo_op = st.hlo_op};
    strata_jax_ops_event(c->ops, &ev);
    return true;
}

static bool read_plane(plane_ctx *c, int64_t pid, GError **err)
{
    const xplane *p = c->plane;
    read_past_plane(c->s, p);
    for (size_t k = 0; k < p->n_event_metadata; k++)
        if (p->event_metadata[k]->value)
            g_hash_table_insert(c->events, &p->event_metadata[k]->key, p->event_metadata[k]->value);
    for (size_t k = 0; k < p->n_stat_metadata; k++)
        if (p->stat_metadata[k]->value)
            g_hash_table_insert(c->stats, &p->stat_metadata[k]->key, p->stat_metadata[k]->value);
    strata_jax_ops_process(c->ops, pid, p->name ? p->name : "");
    for (size_t i = 0; i < p->n_lines; i++) { /* every thread named before any event, as the JSON has them */
        const xline *l = p->lines[i];
        read_past(c->s, &l->base, NULL, p->name, line_name(l), -1);
        if (line_name(l) && *line_name(l))
            strata_jax_ops_thread(c->ops, pid, l->display_id ? l->display_id : l->id, line_name(l));
    }
    for (size_t i = 0; i < p->n_lines; i++) {
        const xline *l = p->lines[i];
        if (line_name(l) && strcmp(line_name(l), ASYNC_OPS_LINE) == 0)
            continue; /* xplane_to_trace_events.cc leaves it out */
        for (size_t k = 0; k < l->n_events; k++)
            if (!read_event(c, pid, l->display_id ? l->display_id : l->id, l, k, err))
                return false;
    }
    return true;
}

/* ---- the file ---------------------------------------------------------------- */

/* The planes TSL converts, in its order: the host's, then the GPUs' (else the TPUs', else the custom devices'). */
static GPtrArray *converted_planes(const xspace *x)
{
    GPtrArray *planes = g_ptr_array_new();
    for (size_t i = 0; i < x->n_planes; i++)
        if (x->planes[i]->name && strcmp(x->planes[i]->name, HOST_PLANE) == 0) {
            g_ptr_array_add(planes, x->planes[i]);
            break;
        }
    static const char *const prefixes[] = {"/device:GPU:", "/device:TPU:", "/device:CUSTOM:"};
    guint host = planes->len;
    for (size_t k = 0; k < G_N_ELEMENTS(prefixes) && planes->len == host; k++)
        for (size_t i = 0; i < x->n_planes; i++)
            if (x->planes[i]->name && g_str_has_prefix(x->planes[i]->name, prefixes[k]))
                g_ptr_array_add(planes, x->planes[i]);
    return planes;
}

/* The earliest start of a line of the planes (ps), 0 when none. */
static int64_t earliest_line(GPtrArray *planes)
{
    int64_t low = INT64_MAX;
    for (guint i = 0; i < planes->len; i++) {
        const xplane *p = g_ptr_array_index(planes, i);
        for (size_t k = 0; k < p->n_lines; k++)
            if (p->lines[k]->timestamp_ns >= 0 && p->lines[k]->timestamp_ns <= INT64_MAX / 1000)
                low = MIN(low, p->lines[k]->timestamp_ns * 1000);
    }
    return low == INT64_MAX ? 0 : low;
}

static xspace *read_xspace(const char *path, GError **err)
{
    GStatBuf st;
    if (g_stat(path, &st) == 0 && (guint64)st.st_size > STRATA_XPLANE_MAX_FILE) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: %" G_GUINT64_FORMAT " bytes: expected an XSpace of "
                    "at most %llu bytes", path, (guint64)st.st_size, STRATA_XPLANE_MAX_FILE);
        return NULL;
    }
    gchar *data = NULL;
    gsize len = 0;
    GError *io = NULL;
    if (!g_file_get_contents(path, &data, &len, &io)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: cannot read the profile: %s", path, io->message);
        g_error_free(io);
        return NULL;
    }
    xspace *x = tensorflow__profiler__xspace__unpack(NULL, len, (const uint8_t *)data);
    g_free(data);
    if (x == NULL)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: expected an XSpace (XProf's xplane.proto, the PROFILE.xplane.pb jax.profiler writes): "
                    "protobuf cannot decode it (a truncated message, or a field of the wrong wire type)", path);
    return x;
}

strata_source *strata_jax_xplane_import(const char *path, int device, strata_jax_profile_summary *s, GError **err)
{
    memset(s, 0, sizeof *s);
    s->device = -1;
    xspace *x = read_xspace(path, err);
    if (x == NULL)
        return NULL;
    read_past(s, &x->base, NULL, NULL, NULL, -1);
    GPtrArray *planes = converted_planes(x);
    strata_jax_ops *ops = strata_jax_ops_new();
    plane_ctx c = {.path = path, .base_ps = earliest_line(planes), .ops = ops, .s = s};
    bool ok = true;
    for (guint i = 0; ok && i < planes->len; i++) {
        c.plane = g_ptr_array_index(planes, i);
        c.events = g_hash_table_new(g_int64_hash, g_int64_equal);
        c.stats = g_hash_table_new(g_int64_hash, g_int64_equal);
        int64_t pid = c.plane->name && strcmp(c.plane->name, HOST_PLANE) == 0 ? HOST_PID
                                                                               : FIRST_DEVICE_PID + c.plane->id;
        ok = read_plane(&c, pid, err);
        g_hash_table_destroy(c.events);
        g_hash_table_destroy(c.stats);
    }
    for (size_t i = 0; i < x->n_planes; i++) /* the planes not converted: their fields too */
        if (!g_ptr_array_find(planes, x->planes[i], NULL))
            read_past_plane(s, x->planes[i]);
    strata_source *src = ok ? strata_jax_ops_finish(ops, path, device, s, err) : NULL;
    strata_jax_ops_free(ops);
    g_ptr_array_free(planes, TRUE);
    tensorflow__profiler__xspace__free_unpacked(x, NULL);
    return src;
}
