/*
 * capture_trace.c: CUDA runtime calls -> `strata-trace 1` lines (see
 * capture_trace.h for the mapping and the invariants).
 *
 * Plain C and GLib only: it is linked both into the LD_PRELOAD library and
 * (through strata_core) into the tests, which call the hooks without a GPU.
 * Live allocations sit in a GTree ordered by start address; a copy finds
 * the one containing a pointer with g_tree_search (allocations never
 * overlap, so containment is a total order against them).
 */
#include "capture/capture_trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct capture_alloc {
    uintptr_t start;
    uint64_t size;
    char *name;
} capture_alloc;

struct strata_capture {
    GMutex lock;
    FILE *out;
    char *path, *tmp;
    bool timestamps;
    gint64 t0_us;
    GTree *live;              /* capture_alloc* -> itself, by start */
    GHashTable *by_start;     /* start address -> capture_alloc* */
    GHashTable *streams;      /* stream handle -> name */
    GPtrArray *stream_order;  /* names of non-main streams, in order of first use */
    GHashTable *events;       /* event handle -> name, once recorded */
    GHashTable *kernels;      /* cudaKernel_t handle -> host stub (__cudaGetKernel) */
    uint64_t n_device, n_pinned, n_pageable_tmp, n_device_tmp, n_streams, n_events, n_sync, ops;
};

static gint alloc_cmp(gconstpointer a, gconstpointer b, gpointer unused)
{
    (void)unused;
    const capture_alloc *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

/* g_tree_search: 0 when *data lies inside key's range. */
static gint alloc_contains(gconstpointer key, gconstpointer data)
{
    const capture_alloc *a = key;
    uintptr_t p = *(const uintptr_t *)data;
    uint64_t size = a->size ? a->size : 1;
    if (p < a->start)
        return -1; /* look among smaller keys */
    if (p - a->start >= size)
        return 1; /* among larger keys */
    return 0;
}

static void alloc_free(gpointer p)
{
    capture_alloc *a = p;
    g_free(a->name);
    g_free(a);
}

strata_capture *strata_capture_open(const char *path, const char *comment, bool timestamps, GError **err)
{
    char *tmp = g_strdup_printf("%s.tmp-%d", path, (int)getpid());
    FILE *out = fopen(tmp, "w");
    if (!out) {
        int e = errno;
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "cannot write the captured trace %s: %s", tmp,
                    g_strerror(e));
        g_free(tmp);
        return NULL;
    }
    strata_capture *c = g_new0(strata_capture, 1);
    g_mutex_init(&c->lock);
    c->out = out;
    c->path = g_strdup(path);
    c->tmp = tmp;
    c->timestamps = timestamps;
    c->t0_us = g_get_monotonic_time();
    c->live = g_tree_new_full(alloc_cmp, NULL, NULL, NULL);
    c->by_start = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, alloc_free);
    c->streams = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    c->stream_order = g_ptr_array_new();
    c->events = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    c->kernels = g_hash_table_new(g_direct_hash, g_direct_equal);
    fprintf(out, "strata-trace 1\n# captured by strata capture (sim/capture)%s%s\n", comment ? ": " : "",
            comment ? comment : "");
    return c;
}

uint64_t strata_capture_op_count(const strata_capture *c)
{
    return c->ops;
}

bool strata_capture_close(strata_capture *c, GError **err)
{
    if (!c)
        return true;
    bool ok = true;
    fprintf(c->out, "# %" G_GUINT64_FORMAT " ops captured\n", c->ops);
    if (fflush(c->out) != 0 || fsync(fileno(c->out)) != 0)
        ok = false;
    int e = errno;
    if (fclose(c->out) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (ok && rename(c->tmp, c->path) != 0) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e), "cannot write the captured trace %s: %s",
                    c->path, g_strerror(e));
        unlink(c->tmp);
    }
    g_tree_destroy(c->live);
    g_hash_table_destroy(c->by_start);
    g_hash_table_destroy(c->streams);
    g_ptr_array_free(c->stream_order, TRUE);
    g_hash_table_destroy(c->events);
    g_hash_table_destroy(c->kernels);
    g_mutex_clear(&c->lock);
    g_free(c->path);
    g_free(c->tmp);
    g_free(c);
    return ok;
}

/* One op line: the text, then stream= unless main, then at=. */
static void emit(strata_capture *c, const char *stream, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void emit(strata_capture *c, const char *stream, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(c->out, fmt, ap);
    va_end(ap);
    if (stream && strcmp(stream, "main") != 0)
        fprintf(c->out, " stream=%s", stream);
    if (c->timestamps)
        fprintf(c->out, " at=%" G_GINT64_FORMAT "us", g_get_monotonic_time() - c->t0_us);
    fputc('\n', c->out);
    c->ops++;
}

static const char *stream_name(strata_capture *c, uintptr_t stream)
{
    if (stream == 0)
        return "main";
    char *name = g_hash_table_lookup(c->streams, (gpointer)stream);
    if (!name) {
        name = g_strdup_printf("s%" G_GUINT64_FORMAT, c->n_streams++);
        g_hash_table_insert(c->streams, (gpointer)stream, name);
        g_ptr_array_add(c->stream_order, name);
    }
    return name;
}

static capture_alloc *find_alloc(strata_capture *c, uintptr_t ptr)
{
    return g_tree_search(c->live, alloc_contains, &ptr);
}

static void forget(strata_capture *c, capture_alloc *a)
{
    g_tree_remove(c->live, a);
    g_hash_table_remove(c->by_start, (gpointer)a->start); /* frees a */
}

static void free_locked(strata_capture *c, uintptr_t ptr, const char *stream)
{
    capture_alloc *a = g_hash_table_lookup(c->by_start, (gpointer)ptr);
    if (!a) {
        fprintf(c->out, "# free of a pointer not allocated during the capture (0x%" G_GINT64_MODIFIER "x)\n",
                (guint64)ptr);
        return;
    }
    emit(c, stream, "free %s", a->name);
    forget(c, a);
}

void strata_capture_alloc(strata_capture *c, uintptr_t ptr, uint64_t size, strata_capture_memory mem,
                          uintptr_t stream)
{
    g_mutex_lock(&c->lock);
    const char *s = stream_name(c, stream);
    capture_alloc *old = find_alloc(c, ptr);
    if (old) /* a free the capture missed: the range is reused */
        free_locked(c, old->start, s);
    capture_alloc *a = g_new0(capture_alloc, 1);
    a->start = ptr;
    a->size = size;
    a->name = mem == STRATA_CAPTURE_PINNED ? g_strdup_printf("p%" G_GUINT64_FORMAT, c->n_pinned++)
                                           : g_strdup_printf("d%" G_GUINT64_FORMAT, c->n_device++);
    /* a zero-size allocation still gets a name, but occupies one address */
    if (!find_alloc(c, ptr)) {
        g_tree_insert(c->live, a, a);
        g_hash_table_insert(c->by_start, (gpointer)ptr, a);
        emit(c, s, "alloc %s %" G_GUINT64_FORMAT " %s", a->name, size, mem == STRATA_CAPTURE_PINNED ? "host" : "hbm");
    } else {
        alloc_free(a);
    }
    g_mutex_unlock(&c->lock);
}

void strata_capture_free(strata_capture *c, uintptr_t ptr, uintptr_t stream)
{
    if (ptr == 0)
        return;
    g_mutex_lock(&c->lock);
    free_locked(c, ptr, stream_name(c, stream));
    g_mutex_unlock(&c->lock);
}

/* The buffer for one end of a copy: the live allocation holding [ptr, ptr+bytes),
 * or a temporary made now (*temp set). */
static const char *copy_end(strata_capture *c, uintptr_t ptr, uint64_t bytes, bool device, const char *stream,
                            char **temp)
{
    capture_alloc *a = find_alloc(c, ptr);
    if (a && ptr - a->start + bytes <= MAX(a->size, 1))
        return a->name;
    *temp = device ? g_strdup_printf("t%" G_GUINT64_FORMAT, c->n_device_tmp++)
                   : g_strdup_printf("h%" G_GUINT64_FORMAT, c->n_pageable_tmp++);
    emit(c, stream, "alloc %s %" G_GUINT64_FORMAT " %s", *temp, bytes, device ? "hbm" : "pageable");
    return *temp;
}

void strata_capture_memcpy(strata_capture *c, uintptr_t dst, uintptr_t src, uint64_t bytes,
                           strata_capture_copy_kind kind, uintptr_t stream)
{
    g_mutex_lock(&c->lock);
    const char *s = stream_name(c, stream);
    if (bytes == 0) {
        fprintf(c->out, "# copy of 0 bytes\n");
        g_mutex_unlock(&c->lock);
        return;
    }
    bool src_device = kind == STRATA_CAPTURE_D2H || kind == STRATA_CAPTURE_D2D;
    bool dst_device = kind == STRATA_CAPTURE_H2D || kind == STRATA_CAPTURE_D2D;
    char *tmp_src = NULL, *tmp_dst = NULL;
    const char *sn = copy_end(c, src, bytes, src_device, s, &tmp_src);
    const char *dn = copy_end(c, dst, bytes, dst_device, s, &tmp_dst);
    emit(c, s, "copy %s %s bytes=%" G_GUINT64_FORMAT, dn, sn, bytes);
    if (tmp_dst)
        emit(c, s, "free %s", tmp_dst);
    if (tmp_src)
        emit(c, s, "free %s", tmp_src);
    g_free(tmp_src);
    g_free(tmp_dst);
    g_mutex_unlock(&c->lock);
}

void strata_capture_event_record(strata_capture *c, uintptr_t event, uintptr_t stream)
{
    g_mutex_lock(&c->lock);
    const char *s = stream_name(c, stream);
    char *name = g_hash_table_lookup(c->events, (gpointer)event);
    if (!name) {
        name = g_strdup_printf("e%" G_GUINT64_FORMAT, c->n_events++);
        g_hash_table_insert(c->events, (gpointer)event, name);
    }
    emit(c, s, "record %s", name);
    g_mutex_unlock(&c->lock);
}

void strata_capture_stream_wait(strata_capture *c, uintptr_t stream, uintptr_t event)
{
    g_mutex_lock(&c->lock);
    const char *s = stream_name(c, stream);
    const char *name = g_hash_table_lookup(c->events, (gpointer)event);
    if (name)
        emit(c, s, "wait %s", name);
    else
        fprintf(c->out, "# wait on an event never recorded (skipped)\n");
    g_mutex_unlock(&c->lock);
}

static void sync_locked(strata_capture *c, const char *stream)
{
    char *ev = g_strdup_printf("sync%" G_GUINT64_FORMAT, c->n_sync++);
    emit(c, stream, "record %s", ev);
    emit(c, "main", "wait %s", ev);
    g_free(ev);
}

void strata_capture_stream_sync(strata_capture *c, uintptr_t stream)
{
    g_mutex_lock(&c->lock);
    const char *s = stream_name(c, stream);
    if (strcmp(s, "main") == 0)
        fprintf(c->out, "# cudaStreamSynchronize(main)\n");
    else
        sync_locked(c, s);
    g_mutex_unlock(&c->lock);
}

void strata_capture_device_sync(strata_capture *c)
{
    g_mutex_lock(&c->lock);
    fprintf(c->out, "# cudaDeviceSynchronize\n");
    for (guint i = 0; i < c->stream_order->len; i++)
        sync_locked(c, c->stream_order->pdata[i]);
    g_mutex_unlock(&c->lock);
}

void strata_capture_launch(strata_capture *c, const char *name, uintptr_t func, uintptr_t stream)
{
    g_mutex_lock(&c->lock);
    const char *s = stream_name(c, stream);
    char *label = name && *name ? g_strdup(name) : g_strdup_printf("kernel_%" G_GINT64_MODIFIER "x", (guint64)func);
    for (char *p = label; *p; p++) /* a trace name is one printable word without = , # */
        if (!g_ascii_isalnum(*p) && *p != '_' && *p != '.' && *p != '-' && *p != ':')
            *p = '_';
    emit(c, s, "compute %s", label);
    g_free(label);
    g_mutex_unlock(&c->lock);
}

void strata_capture_kernel_handle(strata_capture *c, uintptr_t handle, uintptr_t func)
{
    g_mutex_lock(&c->lock);
    g_hash_table_insert(c->kernels, (gpointer)handle, (gpointer)func);
    g_mutex_unlock(&c->lock);
}

uintptr_t strata_capture_kernel_func(strata_capture *c, uintptr_t handle)
{
    g_mutex_lock(&c->lock);
    uintptr_t func = (uintptr_t)g_hash_table_lookup(c->kernels, (gpointer)handle);
    g_mutex_unlock(&c->lock);
    return func;
}
