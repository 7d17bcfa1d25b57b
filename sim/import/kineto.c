/*
 * kineto.c: the kineto importer (kineto.h): a first streaming pass that
 * validates the file, picks the device and gathers the summary and the
 * blocks live before the window; a source that streams the file again and
 * turns each event of the device into at most one op.
 *
 * Matching frees to allocs: the ledger (kineto_ledger.h). The first pass
 * records the sizes of the frees of blocks from before the window, in
 * order, and the source's setup allocates each as pre.N, the N-th such
 * free.
 *
 * The [memory] events are taken in ts order: the file's, unless a device's
 * are out of it (the profiler writes them thread by thread,
 * kineto_order.h), when they are read once more and sorted (memory_by_ts).
 *
 * ROCm's memcpys may lack args.bytes (kineto_event.c, decode_gpu): the first
 * pass gathers the HIP runtime copies' sizes by correlation and takes their
 * memcpys into account once the file has been read (a runtime call may come
 * after its copy). A memcpy whose correlation no runtime copy sizes (the
 * call is not in the trace) becomes a timed op, `compute memcpy.DIR
 * time=dur`, counted in the summary. The source looks the bytes up in the
 * same table.
 *
 * ROCm's roctracer Kineto (before rocprofiler-sdk) numbers kernels and
 * copies by HSA agent, CPU agents first, while the allocator's [memory]
 * events carry the HIP device: see rocm_agents.
 */
#include "import/kineto.h"

#include <math.h>
#include <string.h>

#include "alloc/alloc.h"
#include "alloc/caching.h"
#include "core/error.h"
#include "import/kineto_event.h"
#include "import/kineto_ledger.h"
#include "import/kineto_order.h"
#include "import/kineto_scan.h"
#include "trace/check.h"

static const char *const mem_names[STRATA_KINETO_MEM__COUNT] = {"hbm", "host", "pageable"};
enum { ROLE_SRC, ROLE_DST, ROLE__COUNT };
static const char *const role_names[ROLE__COUNT] = {"src", "dst"};

void strata_kineto_options_init(strata_kineto_options *opt)
{
    opt->device = STRATA_KINETO_DEVICE_AUTO;
    opt->memory_only = false;
    opt->progress = NULL;
}

/* The scanner of path, showing its bytes read as pass `pass` on progress. */
static strata_kineto_scan *scan_open(const char *path, strata_progress *progress, const char *note, GError **err)
{
    strata_kineto_scan *scan = strata_kineto_scan_open(path, err);
    if (scan && progress)
        strata_kineto_scan_set_progress(scan, progress, "import kineto", note);
    return scan;
}

/* ---- HIP runtime copy sizes, by correlation ------------------------------ */

typedef struct copy_size {
    int64_t correlation; /* the key */
    uint64_t bytes;
} copy_size;

static GHashTable *copy_sizes_new(void)
{
    return g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
}

/* The first runtime copy of a correlation wins. */
static void copy_sizes_note(GHashTable *t, const strata_kineto_event *ev)
{
    if (g_hash_table_contains(t, &ev->correlation))
        return;
    copy_size *c = g_new(copy_size, 1);
    c->correlation = ev->correlation;
    c->bytes = (uint64_t)ev->bytes;
    g_hash_table_insert(t, &c->correlation, c);
}

/* Sets ev->bytes from the table; false when the correlation is absent. */
static bool copy_sizes_apply(GHashTable *t, strata_kineto_event *ev)
{
    const copy_size *c = t ? g_hash_table_lookup(t, &ev->correlation) : NULL;
    if (c == NULL)
        return false;
    ev->bytes = (int64_t)c->bytes;
    return true;
}

/* ---- the first pass ------------------------------------------------------- */

/* What the first pass learns of one device. */
typedef struct device_state {
    strata_kineto_summary sum;
    strata_kineto_ledger led;
    GArray *pre_sizes;                                  /* uint64_t */
    uint64_t xfer[STRATA_KINETO_MEM__COUNT][ROLE__COUNT]; /* largest copy per end */
    bool seen_memory;
    /* The cache inference (see infer_alloc): the window's allocs and frees
     * replayed from empty through the caching model, and the segments it
     * made for allocs that did not raise the file's Total Reserved. */
    strata_allocator *sim;
    bool sim_off;               /* no totals, or the model refused an alloc */
    uint64_t sim_reserved, last_total_reserved;
    GArray *inferred;           /* uint64_t: segment sizes, in the order made */
    /* the ts order of the [memory] events (memory_by_ts) */
    bool mem_has_ts, mem_no_ts;
    double mem_last_ts;
    GArray *mem_sorted;         /* strata_kineto_event, in ts order; NULL: the file's order is */
} device_state;

static void device_free(gpointer p)
{
    device_state *d = p;
    strata_kineto_ledger_clear(&d->led);
    g_array_free(d->pre_sizes, TRUE);
    g_array_free(d->inferred, TRUE);
    if (d->mem_sorted)
        g_array_free(d->mem_sorted, TRUE);
    strata_allocator_free(d->sim);
    g_free(d);
}

/* Cached segments the window shows (issue: a trace whose Total Reserved
 * never moves). c10/cuda/CUDACachingAllocator.cpp's malloc() asks the
 * device for a segment only when no cached block serves a request
 * (get_free_block, then alloc_block), and every segment it gets raises
 * reserved bytes. So an alloc whose event leaves Total Reserved where it
 * was was served from segments cached before it, the ones the process
 * made earlier (a warm-up run of the same model makes the ones its next
 * run needs). Replaying the window's allocs and frees from empty through
 * the caching model gives the segments a run of them makes; each one made
 * for an alloc that did not raise the file's Total Reserved is inferred to
 * have been cached at the start. Frees of blocks from before the window
 * are left out of the replay (their allocs were not seen). */
static void infer_alloc(device_state *d, const strata_kineto_event *ev, uint64_t id)
{
    if (d->sim_off)
        return;
    if (!ev->has_totals) {
        d->sim_off = true;
        return;
    }
    if (d->sim == NULL) {
        /* the model's address space only: 2^50 bytes are never the limit */
        d->sim = strata_allocator_new("caching", UINT64_C(1) << 50, 0, NULL);
        d->last_total_reserved = ev->total_reserved;
        if (d->sim == NULL) {
            d->sim_off = true;
            return;
        }
    }
    uint64_t offset;
    if (!strata_allocator_alloc(d->sim, id, (uint64_t)ev->bytes, 0, &offset)) {
        d->sim_off = true;
        return;
    }
    strata_alloc_stats st;
    strata_allocator_stats(d->sim, &st);
    if (st.reserved > d->sim_reserved && ev->total_reserved <= d->last_total_reserved) {
        uint64_t made = st.reserved - d->sim_reserved;
        g_array_append_val(d->inferred, made);
    }
    d->sim_reserved = st.reserved;
}

static device_state *device_get(GHashTable *devices, int id)
{
    device_state *d = g_hash_table_lookup(devices, GINT_TO_POINTER(id));
    if (d == NULL) {
        d = g_new0(device_state, 1);
        d->sum.device = id;
        d->sum.activity_device = id;
        strata_kineto_ledger_init(&d->led);
        d->pre_sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        d->inferred = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        g_hash_table_insert(devices, GINT_TO_POINTER(id), d);
    }
    return d;
}

static void note_memory(device_state *d, const strata_kineto_event *ev)
{
    strata_kineto_summary *s = &d->sum;
    s->n_memory++;
    s->device_type = ev->device_type;
    if (ev->has_addr)
        s->has_addr = true;
    if (ev->has_totals) {
        if (!d->seen_memory) {
            s->has_totals = true;
            s->initial_reserved = ev->total_reserved;
            /* Total Allocated less this event's Bytes, in unsigned
             * arithmetic: both are below 2^63, their difference need not be */
            uint64_t size = strata_kineto_magnitude(ev->bytes);
            s->initial_allocated = ev->bytes >= 0
                                       ? (ev->total_allocated > size ? ev->total_allocated - size : 0)
                                       : ev->total_allocated + size;
        }
        s->peak_reserved = MAX(s->peak_reserved, ev->total_reserved);
        s->peak_allocated = MAX(s->peak_allocated, ev->total_allocated);
        s->final_reserved = ev->total_reserved;
    }
    d->seen_memory = true;
    uint64_t id;
    if (ev->bytes > 0) {
        id = strata_kineto_ledger_alloc(&d->led, strata_kineto_ledger_key(ev));
        s->n_allocs++;
        infer_alloc(d, ev, id);
    } else if (ev->bytes < 0) {
        s->n_frees++;
        if (!strata_kineto_ledger_free(&d->led, strata_kineto_ledger_key(ev), &id)) {
            uint64_t size = strata_kineto_magnitude(ev->bytes);
            g_array_append_val(d->pre_sizes, size);
            s->pre_bytes = s->pre_bytes > UINT64_MAX - size ? UINT64_MAX : s->pre_bytes + size;
        } else if (d->sim && !d->sim_off) {
            strata_allocator_free_block(d->sim, id);
        }
    }
    if (ev->has_totals)
        d->last_total_reserved = ev->total_reserved;
}

static void note_gpu(device_state *d, const strata_kineto_event *ev)
{
    if (ev->kind == STRATA_KINETO_EV_KERNEL) {
        d->sum.n_kernels++;
    } else if (ev->kind == STRATA_KINETO_EV_MEMSET) {
        d->sum.n_memsets++;
    } else if (ev->bytes == 0) {
        d->sum.n_memcpy_empty++;
    } else {
        d->sum.n_memcpys++;
        uint64_t b = (uint64_t)ev->bytes;
        d->xfer[ev->src][ROLE_SRC] = MAX(d->xfer[ev->src][ROLE_SRC], b);
        d->xfer[ev->dst][ROLE_DST] = MAX(d->xfer[ev->dst][ROLE_DST], b);
    }
}

typedef struct pass1 {
    GHashTable *devices; /* device id -> device_state */
    GHashTable *copy_sizes; /* HIP runtime copies: correlation -> copy_size */
    GArray *pending;        /* strata_kineto_event: memcpys without args.bytes */
    uint64_t n_events, n_memory_all;
    bool has_ts;
    double first_ts;
} pass1;

/* strata_kineto_each_event, showing the bytes read on progress (NULL: none) with note. */
static bool each_event(const char *path, strata_progress *progress, const char *note, GHashTable *sizes,
                       strata_kineto_visit visit, void *user, GError **err)
{
    strata_kineto_scan *scan = scan_open(path, progress, note, err);
    if (scan == NULL)
        return false;
    JsonObject *o;
    uint64_t line;
    int rc;
    strata_kineto_event ev;
    while ((rc = strata_kineto_scan_next(scan, &o, &line, err)) == 1) {
        if (!strata_kineto_event_decode(o, path, line, &ev, err)) {
            rc = -1;
            break;
        }
        if (sizes && ev.kind == STRATA_KINETO_EV_MEMCPY && ev.bytes_on_runtime)
            copy_sizes_apply(sizes, &ev);
        visit(&ev, user);
    }
    strata_kineto_scan_free(scan);
    return rc == 0;
}

bool strata_kineto_each_event(const char *path, strata_kineto_visit visit, void *user, GError **err)
{
    return each_event(path, NULL, NULL, NULL, visit, user, err);
}

bool strata_kineto_each_event_shown(const char *path, strata_progress *progress, const char *note,
                                    strata_kineto_visit visit, void *user, GError **err)
{
    return each_event(path, progress, note, NULL, visit, user, err);
}

static void sizes_visit(const strata_kineto_event *ev, void *user)
{
    if (ev->kind == STRATA_KINETO_EV_RUNTIME_COPY)
        copy_sizes_note(user, ev);
}

bool strata_kineto_each_event_sized(const char *path, bool runtime_sizes, strata_kineto_visit visit, void *user,
                                    GError **err)
{
    GHashTable *sizes = runtime_sizes ? copy_sizes_new() : NULL;
    bool ok = (sizes == NULL || each_event(path, NULL, NULL, NULL, sizes_visit, sizes, err)) &&
              each_event(path, NULL, NULL, sizes, visit, user, err);
    if (sizes)
        g_hash_table_unref(sizes);
    return ok;
}

static void first_pass_visit(const strata_kineto_event *ev, void *user)
{
    pass1 *p = user;
    p->n_events++;
    if (ev->has_ts && (!p->has_ts || ev->ts < p->first_ts)) {
        p->first_ts = ev->ts;
        p->has_ts = true;
    }
    if (ev->kind == STRATA_KINETO_EV_MEMORY) {
        p->n_memory_all++;
        if (strata_kineto_event_gpu(ev)) {
            device_state *d = device_get(p->devices, ev->device);
            if (!ev->has_ts)
                d->mem_no_ts = true;
            else if (d->mem_has_ts && ev->ts < d->mem_last_ts)
                d->sum.n_memory_out_of_order++;
            if (ev->has_ts) {
                d->mem_last_ts = d->mem_has_ts ? MAX(d->mem_last_ts, ev->ts) : ev->ts;
                d->mem_has_ts = true;
            }
            note_memory(d, ev);
        }
    } else if (ev->kind == STRATA_KINETO_EV_RUNTIME_COPY) {
        copy_sizes_note(p->copy_sizes, ev);
    } else if (ev->kind == STRATA_KINETO_EV_MEMCPY && ev->bytes_on_runtime) {
        strata_kineto_event c = *ev;
        c.name = NULL; /* borrowed from an object the scanner frees */
        g_array_append_val(p->pending, c);
    } else if (ev->kind != STRATA_KINETO_EV_OTHER) {
        note_gpu(device_get(p->devices, ev->device), ev);
    }
}

/* The memcpys without args.bytes, once every runtime copy has been seen. */
static void resolve_pending(pass1 *p)
{
    for (guint i = 0; i < p->pending->len; i++) {
        strata_kineto_event *c = &g_array_index(p->pending, strata_kineto_event, i);
        device_state *d = device_get(p->devices, c->device);
        if (!copy_sizes_apply(p->copy_sizes, c)) {
            /* ROCm writes no size at all for some copies (the runtime call
             * is not in the trace): the copy is kept as its measured time */
            d->sum.n_memcpy_unsized++;
            continue;
        }
        note_gpu(d, c);
        d->sum.n_memcpy_bytes_on_runtime++;
        if (d->sum.device_type == 0) /* no [memory] events to say; a HIP runtime's copy does */
            d->sum.device_type = 6;
    }
}

static gint cmp_int(gconstpointer a, gconstpointer b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void merge_activity(device_state *into, device_state *from)
{
    strata_kineto_summary *a = &into->sum;
    const strata_kineto_summary *b = &from->sum;
    a->n_kernels += b->n_kernels;
    a->n_memsets += b->n_memsets;
    a->n_memcpys += b->n_memcpys;
    a->n_memcpy_empty += b->n_memcpy_empty;
    a->n_memcpy_bytes_on_runtime += b->n_memcpy_bytes_on_runtime;
    a->n_memcpy_unsized += b->n_memcpy_unsized;
    a->activity_device = b->device;
    for (int m = 0; m < STRATA_KINETO_MEM__COUNT; m++)
        for (int r = 0; r < ROLE__COUNT; r++)
            into->xfer[m][r] = MAX(into->xfer[m][r], from->xfer[m][r]);
}

/* ROCm's roctracer Kineto (ROCm 6.x, until pytorch/kineto #1419 removed it)
 * writes a kernel's or copy's args.device from roctracer's
 * record->device_id, the HSA agent's node id, where CPU agents come first
 * (RoctracerLogger.cpp, activity_callback); the caching allocator's
 * [memory] events carry the HIP device ordinal. rocprofiler-sdk Kineto
 * writes the agent's logical_node_type_id, its index among the GPU agents
 * (RocprofLogger.cpp): the HIP ordinal. So in an old HIP trace one GPU
 * shows as two devices: one with the [memory] events and no activity, the
 * other with the activity and no [memory] events (TraceLens mi300 traces:
 * [memory] on 0, kernels on 2: two CPU agents). When every HIP device with
 * memory events has no activity and every device with activity has no
 * memory events, and there are as many of each, the agents map to the
 * ordinals in order (GPU agents are numbered in the ordinals' order) and
 * each device's activity is merged into its ordinal. Otherwise nothing is
 * changed. Returns the number of devices merged. */
static int rocm_agents(GHashTable *devices)
{
    GArray *mem = g_array_new(FALSE, FALSE, sizeof(int)), *act = g_array_new(FALSE, FALSE, sizeof(int));
    bool ok = true;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, devices);
    while (ok && g_hash_table_iter_next(&it, &k, &v)) {
        const strata_kineto_summary *s = &((device_state *)v)->sum;
        bool activity = s->n_kernels || s->n_memsets || s->n_memcpys || s->n_memcpy_empty || s->n_memcpy_unsized;
        if (s->n_memory && activity)
            ok = false;
        else if (s->n_memory) {
            ok = s->device_type == 6;
            g_array_append_val(mem, s->device);
        } else if (activity)
            g_array_append_val(act, s->device);
    }
    int merged = 0;
    if (ok && mem->len > 0 && mem->len == act->len) {
        g_array_sort(mem, cmp_int);
        g_array_sort(act, cmp_int);
        for (guint i = 0; i < mem->len; i++) {
            int a = g_array_index(act, int, i), m = g_array_index(mem, int, i);
            device_state *from = g_hash_table_lookup(devices, GINT_TO_POINTER(a));
            merge_activity(g_hash_table_lookup(devices, GINT_TO_POINTER(m)), from);
            g_hash_table_remove(devices, GINT_TO_POINTER(a));
            merged++;
        }
    }
    g_array_free(mem, TRUE);
    g_array_free(act, TRUE);
    return merged;
}

/* The device with the most memory events, then the most kernels, then the
 * lowest id. */
static device_state *pick_device(GHashTable *devices)
{
    device_state *best = NULL;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, devices);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        device_state *d = v;
        if (best == NULL || d->sum.n_memory > best->sum.n_memory ||
            (d->sum.n_memory == best->sum.n_memory &&
             (d->sum.n_kernels > best->sum.n_kernels ||
              (d->sum.n_kernels == best->sum.n_kernels && d->sum.device < best->sum.device))))
            best = d;
    }
    return best;
}

/* ---- the [memory] events in ts order (kineto_order.h) --------------------- */

/* Rebuilds d's memory state (note_memory) from its events in ts order and
 * keeps them for the source, which hands out the k-th in ts order where the
 * file has its k-th [memory] event of the device (kernels and copies keep
 * their places). In file order, the backward's frees of the forward's
 * blocks were taken for blocks from before the window (the H200 training
 * step: 206 of them, 4.42 GB live at the start against 0.92 GB). */
static bool memory_by_ts(const char *path, strata_progress *progress, device_state *d, GError **err)
{
    d->mem_sorted = strata_kineto_memory_by_ts(path, d->sum.device, progress, err);
    if (d->mem_sorted == NULL)
        return false;
    strata_kineto_summary *s = &d->sum;
    s->n_memory = s->n_allocs = s->n_frees = 0;
    s->has_addr = s->has_totals = false;
    s->initial_reserved = s->initial_allocated = s->peak_reserved = s->peak_allocated = s->final_reserved = 0;
    s->pre_bytes = 0;
    s->memory_by_ts = true;
    d->seen_memory = false;
    strata_kineto_ledger_clear(&d->led);
    strata_kineto_ledger_init(&d->led);
    g_array_set_size(d->pre_sizes, 0);
    g_array_set_size(d->inferred, 0);
    strata_allocator_free(d->sim);
    d->sim = NULL;
    d->sim_off = false;
    d->sim_reserved = d->last_total_reserved = 0;
    for (guint i = 0; i < d->mem_sorted->len; i++)
        note_memory(d, &g_array_index(d->mem_sorted, strata_kineto_event, i));
    return true;
}

/* ---- the source ----------------------------------------------------------- */

typedef struct ksrc {
    char *path;
    strata_kineto_options opt;
    int device, activity_device;
    double first_ts;
    strata_op_list *setup;
    size_t setup_pos;
    GHashTable *copy_sizes; /* owned: HIP runtime copy sizes (pass1) */
    GArray *mem_sorted;     /* owned: the device's [memory] events in ts order, or NULL */
    guint mem_pos;
    strata_kineto_scan *scan;
    strata_kineto_ledger led;
    strata_op op;
    GString *name, *src, *stream, *note;
} ksrc;

static void setup_alloc(strata_op_list *l, const char *name, uint64_t size, const char *memory)
{
    strata_op op = strata_op_make_alloc(NULL, name, size, memory, STRATA_TAG_NONE);
    op.note = "setup";
    strata_op_list_append(l, &op);
}

static void setup_free(strata_op_list *l, const char *name)
{
    strata_op op = strata_op_make(STRATA_OP_FREE, NULL, name);
    op.note = "setup";
    strata_op_list_append(l, &op);
}

/* Frees the first n inferred segments, the small (2 MiB) or the large. */
static void free_cached(strata_op_list *l, const GArray *inferred, guint n, bool small)
{
    for (guint i = 0; i < n; i++) {
        uint64_t size = g_array_index(inferred, uint64_t, i);
        if ((size == CACHING_SMALL_BUFFER) != small)
            continue;
        char name[40];
        for (int half = 0; half < (small ? 2 : 1); half++) {
            g_snprintf(name, sizeof name, "pre.cache.%u%s", i, half ? "b" : "");
            setup_free(l, name);
        }
    }
}

/* The size of the device end of the copies' staging buffer for copies of
 * up to `bytes`. In the real run a copy between host and device (or within
 * the device) moves a tensor the [memory] events already count: at::native
 * _to_copy allocates its result with empty_strided (an alloc event) and
 * copy_kernel_cuda (aten/src/ATen/native/cuda/Copy.cu) calls
 * cudaMemcpyAsync on the two tensors' data pointers, with no device
 * temporary for a contiguous copy of one dtype (copy_requires_temporaries).
 * The simulated copy still needs a device buffer to name, so that buffer
 * must neither share a segment with the window's blocks nor be counted
 * with them: it is allocated first, on an empty allocator, and asks for the
 * whole of the segment the caching allocator gives it. A request of at
 * least kMinLargeAlloc (10 MiB) gets a segment of its size rounded up to
 * kRoundLarge (2 MiB) (get_allocation_size), so a multiple of 2 MiB of at
 * least 10 MiB fills its segment exactly and leaves nothing for
 * malloc's split (the remainder is 0). */
static uint64_t staging_device_size(uint64_t bytes)
{
    uint64_t size = (bytes + CACHING_ROUND_LARGE - 1) / CACHING_ROUND_LARGE * CACHING_ROUND_LARGE;
    return MAX(size, CACHING_MIN_LARGE_ALLOC);
}

/* The setup ops (kineto.h); fills the summary's pre_* and n_setup_ops. */
static strata_op_list *build_setup(const device_state *d, bool memory_only,
                                   strata_kineto_summary *s)
{
    strata_op_list *l = strata_op_list_new();
    /* the device ends of the copies first, each a segment of its own
     * (staging_device_size) */
    s->n_staging_device = 0;
    s->staging_device_bytes = 0;
    for (int r = 0; r < ROLE__COUNT && !memory_only; r++)
        if (d->xfer[STRATA_KINETO_MEM_DEVICE][r] > 0) {
            uint64_t size = staging_device_size(d->xfer[STRATA_KINETO_MEM_DEVICE][r]);
            char *name = g_strdup_printf("xfer.%s.%s", mem_names[STRATA_KINETO_MEM_DEVICE], role_names[r]);
            setup_alloc(l, name, size, mem_names[STRATA_KINETO_MEM_DEVICE]);
            g_free(name);
            s->n_staging_device++;
            s->staging_device_bytes += size;
        }
    /* The inferred cached segments (infer_alloc), as many as the reserved
     * bytes at the start hold beside the blocks live then: each made whole
     * and kept live while the others are made (so each is a new segment of
     * exactly its size: a large request of a segment's size gets a segment
     * of that size, a small one two 1 MiB halves), freed after the rest of
     * the start is placed in pre.seg. */
    uint64_t live_before = s->initial_allocated > s->pre_bytes ? s->initial_allocated : s->pre_bytes;
    uint64_t room = s->initial_reserved > live_before ? s->initial_reserved - live_before : 0;
    uint64_t cached = 0;
    guint n_cached = 0;
    for (; d->inferred && n_cached < d->inferred->len; n_cached++) {
        uint64_t size = g_array_index(d->inferred, uint64_t, n_cached);
        if (size > room - cached)
            break;
        cached += size;
    }
    s->n_inferred_segments = n_cached;
    s->inferred_bytes = cached;
    s->n_inferred_left = d->inferred ? d->inferred->len - n_cached : 0;
    for (guint i = 0; i < n_cached; i++) {
        uint64_t size = g_array_index(d->inferred, uint64_t, i);
        char name[40];
        for (int half = 0; half < (size == CACHING_SMALL_BUFFER ? 2 : 1); half++) {
            g_snprintf(name, sizeof name, "pre.cache.%u%s", i, half ? "b" : "");
            setup_alloc(l, name, size == CACHING_SMALL_BUFFER ? CACHING_SMALL_SIZE : size, NULL);
        }
    }
    uint64_t rest = s->initial_reserved - cached;
    if (rest >= CACHING_MIN_LARGE_ALLOC || (rest > 0 && cached == 0)) {
        setup_alloc(l, "pre.seg", rest, NULL);
        setup_free(l, "pre.seg");
    } else {
        /* under 10 MiB: no large segment is that small (get_allocation_size
         * gives 20 MiB for such requests): 2 MiB small-pool segments */
        for (uint64_t i = 0; i < rest / CACHING_SMALL_BUFFER; i++) {
            char name[40];
            g_snprintf(name, sizeof name, "pre.small.%" G_GUINT64_FORMAT, i);
            setup_alloc(l, name, CACHING_SMALL_SIZE, NULL);
            g_snprintf(name, sizeof name, "pre.small.%" G_GUINT64_FORMAT "b", i);
            setup_alloc(l, name, CACHING_SMALL_SIZE, NULL);
        }
        for (uint64_t i = 0; i < rest / CACHING_SMALL_BUFFER; i++) {
            char name[40];
            g_snprintf(name, sizeof name, "pre.small.%" G_GUINT64_FORMAT, i);
            setup_free(l, name);
            g_snprintf(name, sizeof name, "pre.small.%" G_GUINT64_FORMAT "b", i);
            setup_free(l, name);
        }
    }
    /* the small ones are freed before the blocks live at the start are
     * placed, so that those under 1 MiB go into them, as in a run where
     * the small pool held both; the large ones after, so that the others
     * go into pre.seg */
    free_cached(l, d->inferred, n_cached, true);
    for (guint i = 0; i < d->pre_sizes->len; i++) {
        char name[32];
        g_snprintf(name, sizeof name, "pre.%u", i);
        setup_alloc(l, name, g_array_index(d->pre_sizes, uint64_t, i), NULL);
    }
    s->n_pre_blocks = d->pre_sizes->len;
    s->pre_rest = s->initial_allocated > s->pre_bytes ? s->initial_allocated - s->pre_bytes : 0;
    if (s->pre_rest > 0)
        setup_alloc(l, "pre.rest", s->pre_rest, NULL);
    /* the host ends of the staging buffers (not in the real run: the file
     * does not say which tensors a copy moved); the device ends came first */
    for (int m = 0; m < STRATA_KINETO_MEM__COUNT && !memory_only; m++)
        for (int r = 0; r < ROLE__COUNT; r++)
            if (m != STRATA_KINETO_MEM_DEVICE && d->xfer[m][r] > 0) {
                char *name = g_strdup_printf("xfer.%s.%s", mem_names[m], role_names[r]);
                setup_alloc(l, name, d->xfer[m][r], mem_names[m]);
                g_free(name);
            }
    free_cached(l, d->inferred, n_cached, false);
    s->n_setup_ops = strata_op_list_len(l);
    return l;
}

/* A kernel's label: its name without "void ", template arguments and
 * parameters, "(anonymous namespace)" as "anon", in the characters a
 * trace name allows. */
static void kernel_label(GString *out, const char *name)
{
    g_string_truncate(out, 0);
    if (name && g_str_has_prefix(name, "void "))
        name += 5;
    static const char anon[] = "(anonymous namespace)";
    for (const char *p = name; p && *p && *p != '<' && out->len < 96; p++) {
        if (g_str_has_prefix(p, anon)) {
            g_string_append(out, "anon");
            p += strlen(anon) - 1;
            continue;
        }
        if (*p == '(')
            break;
        unsigned char c = (unsigned char)*p;
        bool ok = c > ' ' && c < 0x7f && c != '=' && c != ',' && c != '#';
        g_string_append_c(out, ok ? (char)c : '_');
    }
    if (out->len == 0)
        g_string_assign(out, "kernel");
}

static void set_common(ksrc *k, const strata_kineto_event *ev)
{
    k->op.stream = STRATA_DEFAULT_STREAM;
    if (ev->kind != STRATA_KINETO_EV_MEMORY) {
        g_string_printf(k->stream, "s%" G_GINT64_FORMAT, ev->stream);
        k->op.stream = k->stream->str;
        if (ev->correlation >= 0) {
            g_string_printf(k->note, "corr.%" G_GINT64_FORMAT, ev->correlation);
            k->op.note = k->note->str;
        }
    }
    if (ev->has_ts) {
        k->op.has_at = true;
        k->op.at_s = round(MAX(0.0, ev->ts - k->first_ts) * 1000.0) / 1e9;
    }
}

/* The op of a memory event of the device; false: none. */
static bool memory_op(ksrc *k, const strata_kineto_event *ev)
{
    uint64_t id;
    if (ev->bytes > 0) {
        id = strata_kineto_ledger_alloc(&k->led, strata_kineto_ledger_key(ev));
        g_string_printf(k->name, "b%" G_GUINT64_FORMAT, id);
        k->op = strata_op_make_alloc(NULL, k->name->str, (uint64_t)ev->bytes, NULL, STRATA_TAG_NONE);
        k->op.has_addr = ev->has_addr;
        k->op.addr = ev->addr;
    } else if (ev->bytes < 0) {
        if (strata_kineto_ledger_free(&k->led, strata_kineto_ledger_key(ev), &id))
            g_string_printf(k->name, "b%" G_GUINT64_FORMAT, id);
        else
            g_string_printf(k->name, "pre.%" G_GUINT64_FORMAT, k->led.n_pre++);
        k->op = strata_op_make(STRATA_OP_FREE, NULL, k->name->str);
    } else {
        return false;
    }
    return true;
}

/* The op of a kernel, memset or memcpy of the device; false: none. A memcpy
 * is unsized when neither it nor a runtime call of its correlation gives
 * its bytes (ROCm: see ksrc_next): it is kept as its measured time. */
static bool gpu_op(ksrc *k, const strata_kineto_event *ev, bool unsized)
{
    if (ev->kind == STRATA_KINETO_EV_MEMCPY && !unsized) {
        if (ev->bytes == 0)
            return false;
        g_string_printf(k->name, "xfer.%s.dst", mem_names[ev->dst]);
        g_string_printf(k->src, "xfer.%s.src", mem_names[ev->src]);
        k->op = strata_op_make_copy(NULL, k->name->str, k->src->str, (uint64_t)ev->bytes);
        return true;
    }
    if (ev->kind == STRATA_KINETO_EV_KERNEL)
        kernel_label(k->name, ev->name);
    else if (unsized)
        g_string_printf(k->name, "memcpy.%s", strata_kineto_dir_name(ev->dir));
    else
        g_string_assign(k->name, "memset");
    k->op = strata_op_make_timed(NULL, k->name->str, round(ev->dur * 1000.0) / 1e9);
    return true;
}

/* A trace's sane ranges (trace/check.h) hold for what a profile gives: a
 * timestamp or a duration past them is bad input at its line, not an op
 * that every consumer would refuse. */
static bool check_ranges(const ksrc *k, GError **err)
{
    if (k->op.has_at && !strata_trace_at_ok(k->op.at_s))
        return strata_fail_at(err, k->path, k->op.line, "expected a ts at most %g s after the first event's, got %g s",
                              STRATA_TRACE_MAX_AT_S, k->op.at_s);
    if (k->op.has_time && !strata_trace_time_ok(k->op.time_s))
        return strata_fail_at(err, k->path, k->op.line, "expected a dur between 0 and %g s, got %g s",
                              STRATA_TRACE_MAX_TIME_S, k->op.time_s);
    return true;
}

static int ksrc_next(void *self, const strata_op **op, GError **err)
{
    ksrc *k = self;
    if (k->setup_pos < strata_op_list_len(k->setup)) {
        *op = strata_op_list_get(k->setup, k->setup_pos++);
        return 1;
    }
    JsonObject *o;
    uint64_t line;
    int rc;
    strata_kineto_event ev;
    while ((rc = strata_kineto_scan_next(k->scan, &o, &line, err)) == 1) {
        if (!strata_kineto_event_decode(o, k->path, line, &ev, err))
            return -1;
        bool unsized = ev.kind == STRATA_KINETO_EV_MEMCPY && ev.bytes_on_runtime &&
                       !copy_sizes_apply(k->copy_sizes, &ev); /* no size anywhere: a timed op (gpu_op) */
        bool mine = ev.kind == STRATA_KINETO_EV_MEMORY
                        ? strata_kineto_event_gpu(&ev) && ev.device == k->device
                        : ev.kind != STRATA_KINETO_EV_OTHER && ev.kind != STRATA_KINETO_EV_RUNTIME_COPY &&
                              ev.device == k->activity_device &&
                              !k->opt.memory_only;
        if (mine && ev.kind == STRATA_KINETO_EV_MEMORY && k->mem_sorted && k->mem_pos < k->mem_sorted->len)
            ev = g_array_index(k->mem_sorted, strata_kineto_event, k->mem_pos++); /* memory_by_ts */
        if (!mine || !(ev.kind == STRATA_KINETO_EV_MEMORY ? memory_op(k, &ev) : gpu_op(k, &ev, unsized)))
            continue;
        k->op.line = line;
        set_common(k, &ev);
        if (!check_ranges(k, err))
            return -1;
        *op = &k->op;
        return 1;
    }
    return rc;
}

static bool ksrc_rewind(void *self, GError **err)
{
    ksrc *k = self;
    strata_kineto_scan_free(k->scan);
    k->scan = scan_open(k->path, k->opt.progress, "pass 2", err);
    strata_kineto_ledger_clear(&k->led);
    strata_kineto_ledger_init(&k->led);
    k->setup_pos = 0;
    k->mem_pos = 0;
    return k->scan != NULL;
}

static void ksrc_destroy(void *self)
{
    ksrc *k = self;
    strata_kineto_scan_free(k->scan);
    strata_kineto_ledger_clear(&k->led);
    strata_op_list_free(k->setup);
    if (k->mem_sorted)
        g_array_free(k->mem_sorted, TRUE);
    if (k->copy_sizes)
        g_hash_table_unref(k->copy_sizes);
    g_string_free(k->name, TRUE);
    g_string_free(k->src, TRUE);
    g_string_free(k->stream, TRUE);
    g_string_free(k->note, TRUE);
    g_free(k->path);
    g_free(k);
}

static const strata_source_vtable ksrc_vtable = {ksrc_next, ksrc_rewind, ksrc_destroy};

strata_source *strata_kineto_import(const char *path, const strata_kineto_options *opt,
                                    strata_kineto_summary *sum, GError **err)
{
    pass1 p = {.devices = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, device_free),
               .copy_sizes = copy_sizes_new(),
               .pending = g_array_new(FALSE, FALSE, sizeof(strata_kineto_event))};
    strata_source *src = NULL;
    if (!each_event(path, opt->progress, "pass 1", NULL, first_pass_visit, &p, err))
        goto end;
    resolve_pending(&p);
    rocm_agents(p.devices);
    device_state *d = opt->device == STRATA_KINETO_DEVICE_AUTO
                          ? pick_device(p.devices)
                          : g_hash_table_lookup(p.devices, GINT_TO_POINTER(opt->device));
    if (d == NULL) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: no GPU events%s (%" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT
                    " of them [memory] events)",
                    path, opt->device == STRATA_KINETO_DEVICE_AUTO ? "" : " of that device",
                    p.n_events, p.n_memory_all);
        goto end;
    }
    if (d->sum.n_memory_out_of_order > 0 && !d->mem_no_ts && !memory_by_ts(path, opt->progress, d, err))
        goto end;
    /* The start's live bytes feed the setup's allocs: what the file says
     * was allocated before the window (Total Allocated at the first event
     * less its Bytes, and the blocks the window frees but never allocates)
     * must be a size a trace holds, below 2^63. */
    if (d->sum.initial_allocated >= UINT64_C(1) << 63 || d->sum.pre_bytes >= UINT64_C(1) << 63) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s: device %d: the blocks live before the first event would hold %" G_GUINT64_FORMAT
                    " bytes (Total Allocated at the first event less its Bytes) and the window frees %"
                    G_GUINT64_FORMAT " bytes it never allocated: expected less than 2^63 bytes",
                    path, d->sum.device, d->sum.initial_allocated, d->sum.pre_bytes);
        goto end;
    }
    strata_kineto_summary s = d->sum;
    s.n_events = p.n_events;
    s.n_memory_other = p.n_memory_all - s.n_memory;
    s.first_ts_us = p.first_ts;
    ksrc *k = g_new0(ksrc, 1);
    k->path = g_strdup(path);
    k->opt = *opt;
    k->device = d->sum.device;
    k->activity_device = d->sum.activity_device;
    k->first_ts = p.first_ts;
    k->copy_sizes = p.copy_sizes;
    p.copy_sizes = NULL;
    k->mem_sorted = d->mem_sorted;
    d->mem_sorted = NULL;
    k->setup = build_setup(d, opt->memory_only, &s);
    k->name = g_string_new(NULL);
    k->src = g_string_new(NULL);
    k->stream = g_string_new(NULL);
    k->note = g_string_new(NULL);
    strata_kineto_ledger_init(&k->led);
    k->scan = scan_open(path, opt->progress, "pass 2", err);
    if (k->scan == NULL) {
        ksrc_destroy(k);
        goto end;
    }
    if (sum)
        *sum = s;
    src = strata_source_new(&ksrc_vtable, k, path);
end:
    g_hash_table_unref(p.devices);
    if (p.copy_sizes)
        g_hash_table_unref(p.copy_sizes);
    g_array_free(p.pending, TRUE);
    return src;
}
