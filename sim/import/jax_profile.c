/*
 * jax_profile.c: jax.profiler traces into computes (contract in
 * jax_profile.h).
 *
 * Design: one streamed pass (kineto_scan) keeps each candidate X event as
 * a small record (times, process, thread, interned name, device); process
 * and thread names are kept as they come (TSL writes them first, but the
 * classification waits for the end of the file so their order does not
 * matter). Then one device's XLA ops are sorted by start and written.
 */
#include "import/jax_profile.h"
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "import/json_member.h"
#include "import/kineto_scan.h"

#define JAX_SNIFF_EVENTS 10000
#define JAX_MAX_NAME 1024

typedef struct jax_rec {
    double ts, dur;      /* microseconds */
    int64_t pid, tid;
    int64_t device;      /* args.device_ordinal, -1 when absent */
    uint32_t name;       /* index into names */
    bool hlo_op;         /* args.hlo_op present */
} jax_rec;

typedef struct jax_reader {
    GArray *recs;            /* jax_rec */
    GPtrArray *names;        /* interned names (owned) */
    GHashTable *name_ids;    /* name (borrowed from names) -> id + 1 */
    GHashTable *proc_device; /* pid (int64 key) -> device + 1 */
    GHashTable *ops_threads; /* "pid:tid" (owned) of `XLA Ops` threads */
    GHashTable *named;       /* "pid:tid" (owned) of every named thread */
} jax_reader;

/* A number member truncated to an integer into *out, 0 when missing (or not
 * a number); false when it is a number no 64-bit integer holds (an id of
 * 7e21 was cast to int64_t: undefined behaviour, found by fuzz_jax_profile). */
static bool member_int(JsonObject *o, const char *key, int64_t *out)
{
    double d;
    *out = 0;
    if (!json_member_number(o, key, &d))
        return true;
    if (!(d > -9.2e18 && d < 9.2e18))
        return false;
    *out = (int64_t)d;
    return true;
}

static char *thread_key(int64_t pid, int64_t tid)
{
    return g_strdup_printf("%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT, pid, tid);
}

/* `/device:TPU:3` -> 3; -1 when not a device process. */
static int64_t device_of_process(const char *name)
{
    const char *s = name ? strstr(name, "/device:") : NULL;
    const char *colon = s ? strchr(s + strlen("/device:"), ':') : NULL;
    if (colon == NULL || !g_ascii_isdigit(colon[1]))
        return -1;
    guint64 n = g_ascii_strtoull(colon + 1, NULL, 10);
    return n < 1u << 20 ? (int64_t)n : -1;
}

/* A name a trace token can hold: bytes that are not graphic, '=', ',' and
 * '#' become '_'; cut at JAX_MAX_NAME bytes. */
static uint32_t intern(jax_reader *r, const char *name)
{
    char *s = g_strndup(name, JAX_MAX_NAME);
    for (char *p = s; *p; p++)
        if (!g_ascii_isgraph(*p) || *p == '=' || *p == ',' || *p == '#')
            *p = '_';
    if (*s == '\0') {
        g_free(s);
        s = g_strdup("_");
    }
    gpointer id = g_hash_table_lookup(r->name_ids, s);
    if (id) {
        g_free(s);
        return GPOINTER_TO_UINT(id) - 1;
    }
    g_ptr_array_add(r->names, s);
    g_hash_table_insert(r->name_ids, s, GUINT_TO_POINTER(r->names->len));
    return r->names->len - 1;
}

/* What a JSON value is, for a message ("none": absent). */
static const char *json_kind(JsonNode *v)
{
    if (v == NULL)
        return "none";
    switch (JSON_NODE_TYPE(v)) {
    case JSON_NODE_OBJECT: return "an object";
    case JSON_NODE_ARRAY: return "an array";
    case JSON_NODE_NULL: return "null";
    default: break;
    }
    GType t = json_node_get_value_type(v);
    return t == G_TYPE_STRING ? "a string" : t == G_TYPE_BOOLEAN ? "a boolean" : "a number";
}

static bool feed(jax_reader *r, const char *path, JsonObject *ev, uint64_t line, GError **err)
{
    const char *ph = json_member_string(ev, "ph");
    if (ph == NULL)
        return true;
    int64_t pid = 0, tid = 0;
    if (!member_int(ev, "pid", &pid) || !member_int(ev, "tid", &tid)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%" G_GUINT64_FORMAT ": expected pid and tid whole numbers within 64 bits", path, line);
        return false;
    }
    JsonObject *args = json_member_object(ev, "args");
    if (strcmp(ph, "M") == 0) {
        const char *what = json_member_string(ev, "name"), *name = json_member_string(args, "name");
        if (what && name && strcmp(what, "process_name") == 0 && device_of_process(name) >= 0)
            g_hash_table_insert(r->proc_device, g_memdup2(&pid, sizeof pid),
                                GSIZE_TO_POINTER((gsize)device_of_process(name) + 1));
        else if (what && name && strcmp(what, "thread_name") == 0) {
            g_hash_table_add(r->named, thread_key(pid, tid));
            if (strcmp(name, "XLA Ops") == 0)
                g_hash_table_add(r->ops_threads, thread_key(pid, tid));
        }
        return true;
    }
    if (strcmp(ph, "X") != 0)
        return true;
    jax_rec rec = {.pid = pid, .tid = tid, .device = -1};
    const char *name = json_member_string(ev, "name");
    const char *hlo_op = json_member_string(args, "hlo_op");
    if (name == NULL)
        return true; /* not an op TSL writes: nothing to time */
    /* a complete event ("X") always has its numbers: one without them is
     * refused, never dropped (a string, a boolean, nothing) */
    static const char *const times[] = {"ts", "dur"};
    double *slots[] = {&rec.ts, &rec.dur};
    for (size_t k = 0; k < G_N_ELEMENTS(times); k++)
        if (!json_member_number(ev, times[k], slots[k])) {
            JsonNode *v = json_object_has_member(ev, times[k]) ? json_object_get_member(ev, times[k]) : NULL;
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s:%" G_GUINT64_FORMAT ": event '%s' (ph X): expected a number of microseconds for %s, got %s",
                        path, line, name, times[k], json_kind(v));
            return false;
        }
    if (!(rec.ts >= 0 && rec.ts < 1e15 && rec.dur >= 0 && rec.dur < 1e12)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%" G_GUINT64_FORMAT ": expected ts in [0, 1e15) us and dur in [0, 1e12) us, got %g and %g",
                    path, line, rec.ts, rec.dur);
        return false;
    }
    const char *ordinal = json_member_string(args, "device_ordinal");
    double d;
    if (ordinal && g_ascii_isdigit(ordinal[0]))
        rec.device = (int64_t)MIN(g_ascii_strtoull(ordinal, NULL, 10), (guint64)1 << 20);
    else if (json_member_number(args, "device_ordinal", &d) && d >= 0 && d < (1 << 20))
        rec.device = (int64_t)d;
    rec.hlo_op = hlo_op != NULL;
    if (!rec.hlo_op) {
        /* Kept only while it may be an XLA Ops thread's: its thread is that,
         * or not named yet (TSL names threads first, so host threads' events
         * are dropped here and memory follows the XLA ops). */
        char *key = thread_key(pid, tid);
        bool maybe = g_hash_table_contains(r->ops_threads, key) || !g_hash_table_contains(r->named, key);
        g_free(key);
        if (!maybe)
            return true;
    }
    rec.name = intern(r, hlo_op ? hlo_op : name);
    g_array_append_val(r->recs, rec);
    return true;
}

static bool starts_with_any(const char *name, const char *const *prefixes)
{
    for (; *prefixes; prefixes++)
        if (g_str_has_prefix(name, *prefixes))
            return true;
    return false;
}

static const char *op_kind(const char *name)
{
    static const char *const collectives[] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                                              "collective-permute", "collective-broadcast", "send", "recv",
                                              "ragged-all-to-all", NULL};
    static const char *const copies[] = {"copy", NULL};
    if (starts_with_any(name, collectives))
        return "collective";
    if (starts_with_any(name, copies))
        return "copy";
    return "op";
}

static int cmp_rec(const void *pa, const void *pb)
{
    const jax_rec *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->dur != b->dur)
        return a->dur > b->dur ? -1 : 1; /* the enclosing one first */
    return (a->name > b->name) - (a->name < b->name);
}

/* The XLA ops of every record: keeps those with a device, resolved. */
static GArray *xla_ops(jax_reader *r, strata_jax_profile_summary *s)
{
    GArray *ops = g_array_new(FALSE, FALSE, sizeof(jax_rec));
    for (guint i = 0; i < r->recs->len; i++) {
        jax_rec rec = g_array_index(r->recs, jax_rec, i);
        const char *name = g_ptr_array_index(r->names, rec.name);
        char *key = thread_key(rec.pid, rec.tid);
        bool on_ops_thread = g_hash_table_contains(r->ops_threads, key);
        g_free(key);
        if (!(rec.hlo_op || on_ops_thread) || g_str_has_prefix(name, "end:_"))
            continue;
        if (rec.device < 0) {
            gpointer d = g_hash_table_lookup(r->proc_device, &rec.pid);
            rec.device = d ? (int64_t)GPOINTER_TO_SIZE(d) - 1 : -1;
        }
        if (rec.device < 0)
            continue;
        s->n_xla_ops++;
        g_array_append_val(ops, rec);
    }
    return ops;
}

/* Microseconds to seconds at the profile's resolution, 1 ns (TSL writes
 * three decimals), so 6.63 us is written 6630ns, not 6.629999999999995us. */
static double round_ns(double us)
{
    return (double)(int64_t)(us * 1e3 + 0.5) * 1e-9;
}

static strata_source *emit(jax_reader *r, GArray *ops, const char *path, int device,
                           strata_jax_profile_summary *s, GError **err)
{
    GHashTable *devices = g_hash_table_new(g_int64_hash, g_int64_equal);
    int64_t lowest = -1;
    for (guint i = 0; i < ops->len; i++) {
        jax_rec *rec = &g_array_index(ops, jax_rec, i);
        g_hash_table_add(devices, &rec->device);
        if (lowest < 0 || rec->device < lowest)
            lowest = rec->device;
    }
    s->n_devices = g_hash_table_size(devices);
    s->device = device == STRATA_JAX_DEVICE_AUTO ? (int)lowest : device;
    bool found = s->device >= 0 && g_hash_table_contains(devices, &(int64_t){s->device});
    g_hash_table_destroy(devices);
    if (!found) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    device == STRATA_JAX_DEVICE_AUTO
                        ? "%s: expected XLA op events (args.hlo_op, or an 'XLA Ops' thread of a /device: process), found none"
                        : "%s: expected XLA op events of device %d, found none (--device)",
                    path, device);
        return NULL;
    }
    GArray *mine = g_array_new(FALSE, FALSE, sizeof(jax_rec));
    for (guint i = 0; i < ops->len; i++)
        if (g_array_index(ops, jax_rec, i).device == s->device)
            g_array_append_val(mine, g_array_index(ops, jax_rec, i));
    qsort(mine->data, mine->len, sizeof(jax_rec), cmp_rec);
    strata_op_list *list = strata_op_list_new();
    double t0 = mine->len ? g_array_index(mine, jax_rec, 0).ts : 0, end = t0;
    for (guint i = 0; i < mine->len; i++) {
        const jax_rec *rec = &g_array_index(mine, jax_rec, i);
        end = MAX(end, rec->ts + rec->dur); /* the span holds enclosing ops too */
        if (i + 1 < mine->len && g_array_index(mine, jax_rec, i + 1).ts < rec->ts + rec->dur &&
            g_array_index(mine, jax_rec, i + 1).tid == rec->tid) {
            s->n_enclosing++;
            continue;
        }
        const char *name = g_ptr_array_index(r->names, rec->name);
        const char *kind = op_kind(name);
        strata_op op = strata_op_make_timed(NULL, name, round_ns(rec->dur));
        op.has_at = true;
        op.at_s = round_ns(rec->ts - t0);
        op.note = kind;
        strata_op_list_append(list, &op);
        s->n_ops++;
        s->n_copies += strcmp(kind, "copy") == 0;
        s->n_collectives += strcmp(kind, "collective") == 0;
        s->busy_s += rec->dur * 1e-6;
    }
    s->span_s = (end - t0) * 1e-6;
    g_array_free(mine, TRUE);
    return strata_op_list_to_source(list, path);
}

static jax_reader *reader_new(void)
{
    jax_reader *r = g_new0(jax_reader, 1);
    r->recs = g_array_new(FALSE, FALSE, sizeof(jax_rec));
    r->names = g_ptr_array_new_with_free_func(g_free);
    r->name_ids = g_hash_table_new(g_str_hash, g_str_equal);
    r->proc_device = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    r->ops_threads = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    r->named = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return r;
}

static void reader_free(jax_reader *r)
{
    g_array_free(r->recs, TRUE);
    g_hash_table_destroy(r->name_ids);
    g_ptr_array_free(r->names, TRUE);
    g_hash_table_destroy(r->proc_device);
    g_hash_table_destroy(r->ops_threads);
    g_hash_table_destroy(r->named);
    g_free(r);
}

strata_source *strata_jax_profile_import(const char *path, int device, strata_jax_profile_summary *s, GError **err)
{
    memset(s, 0, sizeof *s);
    s->device = -1;
    strata_kineto_scan *scan = strata_kineto_scan_open(path, err);
    if (scan == NULL)
        return NULL;
    jax_reader *r = reader_new();
    JsonObject *ev;
    uint64_t line = 0;
    int got;
    while ((got = strata_kineto_scan_next(scan, &ev, &line, err)) == 1) {
        s->n_events++;
        if (!feed(r, path, ev, line, err)) {
            got = -1;
            break;
        }
    }
    strata_kineto_scan_free(scan);
    strata_source *src = NULL;
    if (got == 0) {
        GArray *ops = xla_ops(r, s);
        src = emit(r, ops, path, device, s, err);
        g_array_free(ops, TRUE);
    }
    reader_free(r);
    return src;
}

/* Whether ev is what only a PyTorch profiler (Kineto) writes: an event with
 * a category (Kineto gives every activity one: cpu_op, kernel, gpu_memcpy,
 * ...; its `[memory]` instants are cpu_instant_event) or a `[memory]`
 * event. TSL's trace_events_to_json writes no `cat` at all (the corpus's
 * two jax.profiler files: 786 events, none with one). */
static bool kineto_only(JsonObject *ev)
{
    const char *name = json_member_string(ev, "name");
    return json_object_has_member(ev, "cat") || (name && strcmp(name, "[memory]") == 0);
}

bool strata_jax_profile_sniff(const char *path)
{
    strata_kineto_scan *scan = strata_kineto_scan_open(path, NULL);
    if (scan == NULL)
        return false;
    JsonObject *ev;
    uint64_t line;
    bool jax = false, kineto = false;
    for (int i = 0; !kineto && i < JAX_SNIFF_EVENTS && strata_kineto_scan_next(scan, &ev, &line, NULL) == 1; i++) {
        JsonObject *args = json_member_object(ev, "args");
        const char *ph = json_member_string(ev, "ph"), *name = json_member_string(args, "name");
        kineto = kineto_only(ev);
        jax |= json_member_string(args, "hlo_op") != NULL ||
               (ph && strcmp(ph, "M") == 0 && name && (strcmp(name, "XLA Ops") == 0 || device_of_process(name) >= 0));
    }
    strata_kineto_scan_free(scan);
    return jax && !kineto;
}
