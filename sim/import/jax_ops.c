/*
 * jax_ops.c: XLA op events into one device's computes (contract in
 * jax_ops.h).
 *
 * Design: each candidate event is kept as a small record (times, process,
 * thread, interned name, device); process and thread names are kept as they
 * come and the classification waits for the end (finish), so their order
 * does not matter. Then one device's XLA ops are sorted by start and
 * written.
 */
#include "import/jax_ops.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"

#define JAX_MAX_NAME 1024

typedef struct jax_rec {
    double ts, dur;      /* microseconds */
    int64_t pid, tid;
    int64_t device;      /* args.device_ordinal, -1 when absent */
    uint32_t name;       /* index into names */
    bool hlo_op;         /* args.hlo_op present */
} jax_rec;

struct strata_jax_ops {
    GArray *recs;            /* jax_rec */
    GPtrArray *names;        /* interned names (owned) */
    GHashTable *name_ids;    /* name (borrowed from names) -> id + 1 */
    GHashTable *proc_device; /* pid (int64 key) -> device + 1 */
    GHashTable *ops_threads; /* "pid:tid" (owned) of `XLA Ops` threads */
    GHashTable *named;       /* "pid:tid" (owned) of every named thread */
};

static char *thread_key(int64_t pid, int64_t tid)
{
    return g_strdup_printf("%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT, pid, tid);
}

int64_t strata_jax_device_of_process(const char *name)
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
static uint32_t intern(strata_jax_ops *r, const char *name)
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

static bool starts_with_any(const char *name, const char *const *prefixes)
{
    for (; *prefixes; prefixes++)
        if (g_str_has_prefix(name, *prefixes))
            return true;
    return false;
}

/* True when the name's stem (up to its first '.') is one of names. */
static bool stem_is_any(const char *name, const char *const *names)
{
    size_t n = strcspn(name, ".");
    for (; *names; names++)
        if (strlen(*names) == n && strncmp(name, *names, n) == 0)
            return true;
    return false;
}

static const char *op_kind(const char *name)
{
    static const char *const collectives[] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                                              "collective-permute", "collective-broadcast", "send", "recv",
                                              "ragged-all-to-all", NULL};
    /* From JAX 0.8 a collective of shard_map is named after the JAX
     * primitive it lowers from (`pmax.7`, `all_gather.7`, `ppermute.3`,
     * `psum_invariant.1` in the dumps and profiles of jaxlib 0.8.3 to
     * 0.12.0.1): the communicating primitives of jax/_src/lax/parallel.py
     * (core.Primitive names, JAX 0.12.0.1), their -start and -done halves
     * included; axis_index (a partition id) is not one. */
    static const char *const primitives[] = {
        "psum", "pmax", "pmin", "ppermute", "psend", "precv", "pbroadcast", "pbroadcast_dynamic", "all_to_all",
        "ragged_all_to_all", "all_gather", "all_gather_invariant", "reduce_scatter", "psum_invariant",
        "all_gather_reduced", "unreduced_reduce_scatter", "unreduced_psum", "unreduced_pmax", "unreduced_pmin",
        "all_gather_start", "all_gather_reduced_start", "psum_invariant_start", "reduce_scatter_start",
        "all_to_all_start", "ppermute_start", "all_gather_done", "psum_done", "reduce_scatter_done",
        "all_to_all_done", "ppermute_done", NULL};
    static const char *const copies[] = {"copy", NULL};
    if (starts_with_any(name, collectives) || stem_is_any(name, primitives))
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
static GArray *xla_ops(strata_jax_ops *r, strata_jax_profile_summary *s)
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
    return (double)(int64_t)(us * 1e3 + 0.5) / 1e9; /* a division: 2000 ns is 2e-6 s, not 2.0000000000000004e-6 */
}

/* The device imported (s->device, s->n_devices); false with err when it ran no op. */
static bool pick_device(GArray *ops, const char *path, int device, strata_jax_profile_summary *s, GError **err)
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
    if (!found)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    device == STRATA_JAX_DEVICE_AUTO
                        ? "%s: expected XLA op events (args.hlo_op, or an 'XLA Ops' thread of a /device: process), found none"
                        : "%s: expected XLA op events of device %d, found none (--device)",
                    path, device);
    return found;
}

/* The device's ops that enclose none of their thread's (time order), each
 * with its thread's index (first seen first) in ->tid. */
static GArray *kept_ops(GArray *mine, strata_jax_profile_summary *s, guint *n_threads, double *end)
{
    GHashTable *next_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL); /* tid -> last index */
    guint *next_same = g_new0(guint, mine->len + 1);
    for (guint i = mine->len; i-- > 0;) { /* the next op of the same thread, or len */
        const jax_rec *rec = &g_array_index(mine, jax_rec, i);
        gpointer at = g_hash_table_lookup(next_of, &rec->tid);
        next_same[i] = at ? GPOINTER_TO_UINT(at) - 1 : mine->len;
        g_hash_table_replace(next_of, g_memdup2(&rec->tid, sizeof rec->tid), GUINT_TO_POINTER(i + 1));
    }
    g_hash_table_remove_all(next_of);
    GArray *kept = g_array_new(FALSE, FALSE, sizeof(jax_rec));
    *n_threads = 0;
    for (guint i = 0; i < mine->len; i++) {
        jax_rec rec = g_array_index(mine, jax_rec, i);
        *end = MAX(*end, rec.ts + rec.dur); /* the span holds enclosing ops too */
        if (next_same[i] < mine->len && g_array_index(mine, jax_rec, next_same[i]).ts < rec.ts + rec.dur) {
            s->n_enclosing++;
            continue;
        }
        gpointer t = g_hash_table_lookup(next_of, &rec.tid);
        if (t == NULL)
            g_hash_table_insert(next_of, g_memdup2(&rec.tid, sizeof rec.tid), t = GUINT_TO_POINTER(++*n_threads));
        rec.tid = GPOINTER_TO_UINT(t) - 1;
        g_array_append_val(kept, rec);
    }
    g_free(next_same);
    g_hash_table_destroy(next_of);
    return kept;
}

/* For op i of kept (on thread T), the latest op of each other thread that
 * ended by i's start, when T has not waited for it or a later one:
 * waits[i] lists them (kept indices); recorded[] marks them. */
static GPtrArray **happens_before(GArray *kept, guint n_threads, bool *recorded)
{
    GPtrArray **waits = g_new0(GPtrArray *, kept->len);
    GPtrArray **of_thread = g_new0(GPtrArray *, n_threads); /* each thread's kept indices */
    for (guint t = 0; t < n_threads; t++)
        of_thread[t] = g_ptr_array_new();
    for (guint i = 0; i < kept->len; i++)
        g_ptr_array_add(of_thread[g_array_index(kept, jax_rec, i).tid], GUINT_TO_POINTER(i));
    guint *pos = g_new0(guint, (gsize)n_threads * n_threads);    /* [T][U]: ops of U passed by T */
    guint *waited = g_new0(guint, (gsize)n_threads * n_threads); /* [T][U]: ops of U T waited for */
    for (guint i = 0; i < kept->len; i++) {
        const jax_rec *rec = &g_array_index(kept, jax_rec, i);
        guint t = (guint)rec->tid;
        waits[i] = g_ptr_array_new();
        for (guint u = 0; u < n_threads; u++) {
            guint *p = &pos[t * n_threads + u];
            while (u != t && *p < of_thread[u]->len) { /* a thread's ops end in start order: they do not overlap */
                guint k = GPOINTER_TO_UINT(g_ptr_array_index(of_thread[u], *p));
                const jax_rec *o = &g_array_index(kept, jax_rec, k);
                if (k > i || o->ts + o->dur > rec->ts)
                    break;
                (*p)++;
            }
            if (u != t && *p > waited[t * n_threads + u]) {
                guint k = GPOINTER_TO_UINT(g_ptr_array_index(of_thread[u], *p - 1));
                g_ptr_array_add(waits[i], GUINT_TO_POINTER(k));
                recorded[k] = true;
                waited[t * n_threads + u] = *p;
            }
        }
    }
    for (guint t = 0; t < n_threads; t++)
        g_ptr_array_free(of_thread[t], TRUE);
    g_free(of_thread);
    g_free(pos);
    g_free(waited);
    return waits;
}

/* The ops written, at= from t0: one stream per thread when there are
 * several (t0, t1, ...; an op waits for what ended on another thread
 * before it started), else the default stream. */
static void write_ops(strata_jax_ops *r, GArray *kept, guint n_threads, double t0, strata_op_list *list,
                      strata_jax_profile_summary *s)
{
    bool *recorded = g_new0(bool, kept->len + 1);
    GPtrArray **waits = n_threads > 1 ? happens_before(kept, n_threads, recorded) : NULL;
    for (guint i = 0; i < kept->len; i++) {
        const jax_rec *rec = &g_array_index(kept, jax_rec, i);
        char *stream = waits ? g_strdup_printf("t%" PRId64, rec->tid) : NULL;
        for (guint w = 0; waits && w < waits[i]->len; w++) {
            char *ev = g_strdup_printf("e%u", GPOINTER_TO_UINT(g_ptr_array_index(waits[i], w)));
            strata_op op = strata_op_make(STRATA_OP_WAIT, stream, ev);
            strata_op_list_append(list, &op);
            g_free(ev);
        }
        const char *name = g_ptr_array_index(r->names, rec->name);
        const char *kind = op_kind(name);
        strata_op op = strata_op_make_timed(stream, name, round_ns(rec->dur));
        op.has_at = true;
        op.at_s = round_ns(rec->ts - t0);
        op.note = kind;
        strata_op_list_append(list, &op);
        if (recorded[i]) {
            char *ev = g_strdup_printf("e%u", i);
            strata_op rec_op = strata_op_make(STRATA_OP_RECORD, stream, ev);
            strata_op_list_append(list, &rec_op);
            g_free(ev);
        }
        g_free(stream);
        s->n_ops++;
        s->n_copies += strcmp(kind, "copy") == 0;
        s->n_collectives += strcmp(kind, "collective") == 0;
        s->busy_s += rec->dur * 1e-6;
        if (waits)
            g_ptr_array_free(waits[i], TRUE);
    }
    s->n_threads = n_threads;
    g_free(waits);
    g_free(recorded);
}

static strata_source *emit(strata_jax_ops *r, GArray *ops, const char *path, int device,
                           strata_jax_profile_summary *s, GError **err)
{
    if (!pick_device(ops, path, device, s, err))
        return NULL;
    GArray *mine = g_array_new(FALSE, FALSE, sizeof(jax_rec));
    for (guint i = 0; i < ops->len; i++)
        if (g_array_index(ops, jax_rec, i).device == s->device)
            g_array_append_val(mine, g_array_index(ops, jax_rec, i));
    qsort(mine->data, mine->len, sizeof(jax_rec), cmp_rec);
    double t0 = mine->len ? g_array_index(mine, jax_rec, 0).ts : 0, end = t0;
    guint n_threads = 0;
    GArray *kept = kept_ops(mine, s, &n_threads, &end);
    strata_op_list *list = strata_op_list_new();
    write_ops(r, kept, n_threads, t0, list, s); /* at= from the device's first op, enclosing or not */
    s->span_s = (end - t0) * 1e-6;
    g_array_free(kept, TRUE);
    g_array_free(mine, TRUE);
    return strata_op_list_to_source(list, path);
}

strata_jax_ops *strata_jax_ops_new(void)
{
    strata_jax_ops *r = g_new0(strata_jax_ops, 1);
    r->recs = g_array_new(FALSE, FALSE, sizeof(jax_rec));
    r->names = g_ptr_array_new_with_free_func(g_free);
    r->name_ids = g_hash_table_new(g_str_hash, g_str_equal);
    r->proc_device = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    r->ops_threads = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    r->named = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return r;
}

void strata_jax_ops_free(strata_jax_ops *r)
{
    g_array_free(r->recs, TRUE);
    g_hash_table_destroy(r->name_ids);
    g_ptr_array_free(r->names, TRUE);
    g_hash_table_destroy(r->proc_device);
    g_hash_table_destroy(r->ops_threads);
    g_hash_table_destroy(r->named);
    g_free(r);
}


void strata_jax_ops_process(strata_jax_ops *r, int64_t pid, const char *name)
{
    int64_t device = strata_jax_device_of_process(name);
    if (device >= 0)
        g_hash_table_insert(r->proc_device, g_memdup2(&pid, sizeof pid), GSIZE_TO_POINTER((gsize)device + 1));
}

void strata_jax_ops_thread(strata_jax_ops *r, int64_t pid, int64_t tid, const char *name)
{
    g_hash_table_add(r->named, thread_key(pid, tid));
    if (strcmp(name, "XLA Ops") == 0)
        g_hash_table_add(r->ops_threads, thread_key(pid, tid));
}

void strata_jax_ops_event(strata_jax_ops *r, const strata_jax_event *ev)
{
    jax_rec rec = {.ts = ev->ts_us, .dur = ev->dur_us, .pid = ev->pid, .tid = ev->tid, .device = ev->device,
                   .hlo_op = ev->hlo_op != NULL};
    if (!rec.hlo_op) {
        /* Kept only while it may be an XLA Ops thread's: its thread is that,
         * or not named yet (TSL names threads first, so host threads' events
         * are dropped here and memory follows the XLA ops). */
        char *key = thread_key(ev->pid, ev->tid);
        bool maybe = g_hash_table_contains(r->ops_threads, key) || !g_hash_table_contains(r->named, key);
        g_free(key);
        if (!maybe)
            return;
    }
    rec.name = intern(r, ev->hlo_op ? ev->hlo_op : ev->name);
    g_array_append_val(r->recs, rec);
}

strata_source *strata_jax_ops_finish(strata_jax_ops *r, const char *path, int device,
                                     strata_jax_profile_summary *s, GError **err)
{
    GArray *ops = xla_ops(r, s);
    strata_source *src = emit(r, ops, path, device, s, err);
    g_array_free(ops, TRUE);
    return src;
}
