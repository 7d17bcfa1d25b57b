/*
 * calibrate_host.c: `strata calibrate --backend host`, measuring this machine
 * as the host backend uses it, and writing a hardware .ini (hw.h's format).
 *
 * The host backend replays a GPU trace on the CPU, so the model has the
 * shared memory names (traces/FORMAT.md) as DRAM regions: `hbm` (kind device), `host` and
 * `pageable` (kind host), joined to hbm by memcpy "links". Measured:
 *  - memcpy bandwidth for copy sizes 4 KiB .. max_size (powers of 4) in each
 *    direction host->hbm (H2D), hbm->host (D2H), hbm->hbm (D2D), plus copies
 *    into fresh, never-touched pages (what a pageable first touch costs);
 *  - two copies at once, in the same and in opposite directions;
 *  - latency: the span the backend records for a 64-byte copy;
 *  - compute rate of host_kernel.h's multiply-add kernel, and the read rate
 *    of its operand pass.
 * Model: a link's bandwidth is one large copy's (the DRAM regime, the
 * largest size measured); a memory's port bandwidth is the aggregate of two
 * concurrent copies, so concurrent copies share it as they share DRAM;
 * links are full duplex and the ports do the sharing. Each figure is in a
 * comment next to the key it sets.
 *
 * Invariant: every sample is a median of several timed batches; nothing is
 * a constant except the sizes measured.
 */
#include "backend/backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "backend/host_kernel.h"
#include "core/error.h"
#include "core/units.h"

enum { CAL_SAMPLES = 7 };
/* Page faults are slow on virtual machines: first touch is measured up to this size. */
#define CAL_FIRST_TOUCH_MAX ((size_t)64 << 20)

typedef struct cal_buffers {
    unsigned char *h0, *h1, *d0, *d1;
    size_t size;
} cal_buffers;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return v[n / 2];
}

/* Seconds per copy of `size` bytes, median over CAL_SAMPLES batches. */
static double time_copy(unsigned char *dst, const unsigned char *src, size_t size)
{
    double t0 = strata_host_now();
    memcpy(dst, src, size);
    double one = strata_host_now() - t0;
    int batch = one > 0 ? (int)CLAMP(2e-4 / one, 1, 10000) : 10000;
    double samples[CAL_SAMPLES];
    for (int s = 0; s < CAL_SAMPLES; s++) {
        double a = strata_host_now();
        for (int i = 0; i < batch; i++)
            memcpy(dst, src, size);
        samples[s] = (strata_host_now() - a) / batch;
    }
    return median(samples, CAL_SAMPLES);
}

/* Seconds to copy into fresh pages (page faults included), median. */
static double time_first_touch(const unsigned char *src, size_t size)
{
    double samples[3];
    int n = 0;
    for (int s = 0; s < 3; s++) {
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            continue;
        double a = strata_host_now();
        memcpy(p, src, size);
        samples[n++] = strata_host_now() - a;
        munmap(p, size);
    }
    return n ? median(samples, n) : 0;
}

typedef struct cal_worker {
    unsigned char *dst;
    const unsigned char *src;
    size_t size;
    int reps;
    GMutex *lock;
    GCond *cond;
    int *ready;
    gboolean *go;
    double start, end;
} cal_worker;

static gpointer cal_worker_main(gpointer data)
{
    cal_worker *w = data;
    g_mutex_lock(w->lock);
    (*w->ready)++;
    g_cond_broadcast(w->cond);
    while (!*w->go)
        g_cond_wait(w->cond, w->lock);
    g_mutex_unlock(w->lock);
    w->start = strata_host_now();
    for (int i = 0; i < w->reps; i++)
        memcpy(w->dst, w->src, w->size);
    w->end = strata_host_now();
    return NULL;
}

/* Aggregate bytes/s of two copies running at once (median of samples). */
static double concurrent_bandwidth(unsigned char *dst0, const unsigned char *src0, unsigned char *dst1,
                                   const unsigned char *src1, size_t size, int reps)
{
    double samples[5];
    for (int s = 0; s < 5; s++) {
        GMutex lock;
        GCond cond;
        g_mutex_init(&lock);
        g_cond_init(&cond);
        int ready = 0;
        gboolean go = FALSE;
        cal_worker w[2] = {{dst0, src0, size, reps, &lock, &cond, &ready, &go, 0, 0},
                           {dst1, src1, size, reps, &lock, &cond, &ready, &go, 0, 0}};
        GThread *t0 = g_thread_new("cal0", cal_worker_main, &w[0]);
        GThread *t1 = g_thread_new("cal1", cal_worker_main, &w[1]);
        g_mutex_lock(&lock);
        while (ready < 2)
            g_cond_wait(&cond, &lock);
        go = TRUE;
        g_cond_broadcast(&cond);
        g_mutex_unlock(&lock);
        g_thread_join(t0);
        g_thread_join(t1);
        double start = MIN(w[0].start, w[1].start), end = MAX(w[0].end, w[1].end);
        samples[s] = end > start ? 2.0 * (double)size * reps / (end - start) : 0;
        g_mutex_clear(&lock);
        g_cond_clear(&cond);
    }
    return median(samples, 5);
}

static double copy_latency(unsigned char *dst, const unsigned char *src)
{
    enum { N = 2001 };
    double *v = g_new(double, N);
    for (int i = 0; i < N; i++) {
        double a = strata_host_now();
        memcpy(dst, src, 64);
        v[i] = strata_host_now() - a;
    }
    double m = median(v, N);
    g_free(v);
    return m;
}

/* Short samples (about 0.5 ms, well under a scheduler time slice) so that a
 * busy machine's preemptions show as outliers that the median drops: the
 * kernel's own rate, not this machine's current load. */
static double flop_rate(uint64_t *sink)
{
    double flops = 1e5, t = 0;
    for (int round = 0; round < 20 && t < 5e-4; round++) {
        double a = strata_host_now();
        *sink += (uint64_t)strata_host_flops(flops);
        t = strata_host_now() - a;
        if (t < 5e-4)
            flops *= 2;
    }
    enum { N = 31 };
    double samples[N];
    for (int s = 0; s < N; s++) {
        double a = strata_host_now();
        *sink += (uint64_t)strata_host_flops(flops);
        samples[s] = flops / (strata_host_now() - a);
    }
    return median(samples, N);
}

static double read_rate(const unsigned char *p, size_t size, uint64_t *sink)
{
    double samples[5];
    for (int s = 0; s < 5; s++) {
        double a = strata_host_now();
        *sink += strata_host_read(p, size);
        samples[s] = (double)size / (strata_host_now() - a);
    }
    return median(samples, 5);
}

static void put_bw(GString *ini, const char *key, double bw, const char *comment)
{
    char *b = strata_format_bandwidth(bw);
    if (comment)
        g_string_append_printf(ini, "# %s\n", comment);
    g_string_append_printf(ini, "%s = %s\n", key, b);
    g_free(b);
}

static char *bw_text(double bw)
{
    return strata_format_bandwidth(bw);
}

/* What was measured: the last (largest) single copies, two at once, latency,
 * compute and operand read rates, and the whole measurement's duration. */
typedef struct cal_figures {
    double h2d, d2h, same, opposite, latency, flops, read, elapsed;
    size_t largest;
} cal_figures;

/* The figures as the .ini and the log write them (each string owned). */
typedef struct cal_text {
    char *cap, *lat, *largest, *same, *opp, *read, *flops;
} cal_text;

/* The largest copy to measure (at least 4 KiB) and this machine's memory; an
 * error when the 4 buffers of that size would take over half of it. */
static bool cal_check_size(const strata_calibrate_options *opt, size_t *max, uint64_t *ram, GError **err)
{
    *max = (size_t)MAX(opt->max_size, (uint64_t)4096);
    long page = sysconf(_SC_PAGESIZE), pages = sysconf(_SC_PHYS_PAGES);
    *ram = page > 0 && pages > 0 ? (uint64_t)page * (uint64_t)pages : UINT64_C(8) << 30;
    if ((uint64_t)*max > *ram / 8) { /* max x 4 wrapped past 2^64 at 4EiB: "cannot allocate the copy buffers" */
        char *m = strata_format_size(*max), *r = strata_format_size(*ram);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "calibrate: a largest copy of %s needs 4 buffers of that size, more than half of "
                    "this machine's %s; choose a smaller --max-size", m, r);
        g_free(m);
        g_free(r);
        return false;
    }
    return true;
}

/* Four page-aligned buffers of `size` bytes, every page touched; on failure none is left allocated. */
static bool cal_buffers_alloc(cal_buffers *b, size_t size, GError **err)
{
    b->size = size;
    unsigned char **bufs[4] = {&b->h0, &b->h1, &b->d0, &b->d1};
    for (int i = 0; i < 4; i++) {
        void *p = NULL;
        if (posix_memalign(&p, 4096, size) != 0) {
            for (int j = 0; j < i; j++)
                free(*bufs[j]);
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "calibrate: cannot allocate the copy buffers");
            return false;
        }
        memset(p, i + 1, size); /* touch every page */
        *bufs[i] = p;
    }
    return true;
}

static void cal_buffers_free(cal_buffers *b)
{
    unsigned char *bufs[4] = {b->h0, b->h1, b->d0, b->d1};
    for (int i = 0; i < 4; i++)
        free(bufs[i]);
}

/* One copy at a time in each direction for sizes 4 KiB .. b->size (powers of
 * 4): a row of `table` and of the log per size; the largest size's H2D and
 * D2H bandwidth and that size into `f`. */
static void measure_single_copies(const cal_buffers *b, GString *table, FILE *log, cal_figures *f)
{
    size_t max = b->size;
    g_string_append(table, "# one copy at a time (memcpy, median of 7 batches):\n"
                           "#   size        H2D host->hbm   D2H hbm->host   D2D hbm->hbm   pageable first touch (median of 3,\n"
                           "#                                                              up to 64MiB)\n");
    f->largest = 4096;
    for (size_t size = 4096; size <= max; size *= 4) {
        f->largest = size;
        double th = time_copy(b->d0, b->h0, size), tdh = time_copy(b->h1, b->d1, size),
               tdd = time_copy(b->d1, b->d0, size),
               tf = size <= CAL_FIRST_TOUCH_MAX ? time_first_touch(b->h0, size) : 0;
        f->h2d = (double)size / th;
        f->d2h = (double)size / tdh;
        double d2d = (double)size / tdd;
        double first = tf > 0 ? (double)size / tf : 0;
        char *s = strata_format_size_exact(size), *x = bw_text(f->h2d), *y = bw_text(f->d2h), *z = bw_text(d2d),
             *ft = first > 0 ? bw_text(first) : g_strdup("-");
        g_string_append_printf(table, "#   %-10s  %-14s  %-14s  %-13s  %s\n", s, x, y, z, ft);
        if (log)
            fprintf(log, "calibrate: %-10s H2D %s, D2H %s, D2D %s, first touch %s\n", s, x, y, z, ft);
        g_free(s);
        g_free(x);
        g_free(y);
        g_free(z);
        g_free(ft);
        if (size > max / 4)
            break;
    }
}

/* Two copies of the largest size at once (same and opposite directions),
 * a 64-byte copy's latency, the compute rate and the operand read rate. */
static void measure_concurrent_and_compute(const cal_buffers *b, cal_figures *f, uint64_t *sink)
{
    int reps = (int)CLAMP(0.05 * f->h2d / (double)f->largest, 1, 1000);
    f->same = concurrent_bandwidth(b->d0, b->h0, b->d1, b->h1, f->largest, reps);
    f->opposite = concurrent_bandwidth(b->d0, b->h0, b->h1, b->d1, f->largest, reps);
    f->latency = copy_latency(b->d0, b->h0);
    f->flops = flop_rate(sink);
    f->read = read_rate(b->d0, f->largest, sink);
}

static void cal_text_init(cal_text *t, const cal_figures *f, uint64_t capacity)
{
    t->cap = strata_format_size_exact(capacity);
    t->lat = g_strdup_printf("%.0fns", f->latency * 1e9);
    t->largest = strata_format_size_exact(f->largest);
    t->same = bw_text(f->same);
    t->opp = bw_text(f->opposite);
    t->read = bw_text(f->read);
    t->flops = strata_format_flop_rate(f->flops);
}

static void cal_text_clear(cal_text *t)
{
    char *all[] = {t->cap, t->lat, t->largest, t->same, t->opp, t->read, t->flops};
    for (size_t i = 0; i < G_N_ELEMENTS(all); i++)
        g_free(all[i]);
}

/* The comment block (how it was measured, the single-copy table, the
 * concurrent copies) and the [hardware] section. */
static void write_ini_preamble(GString *ini, const strata_calibrate_options *opt, const cal_figures *f,
                               const cal_text *t, const GString *table)
{
    g_string_append_printf(ini,
                           "# Hardware model of this machine for strata's host backend, written by\n"
                           "# `strata calibrate --backend host` (measured in %.1f s, largest copy %s).\n"
                           "# GPU memory names replay on the CPU: hbm (device) and host/pageable (host)\n"
                           "# are DRAM regions joined by memcpy links, so GPU traces replay here.\n",
                           f->elapsed, t->largest);
    g_string_append(ini, table->str);
    g_string_append_printf(ini,
                           "# two copies of %s at once (aggregate): same direction %s, opposite "
                           "directions %s\n#\n",
                           t->largest, t->same, t->opp);

    g_string_append_printf(ini, "[hardware]\nname = %s\n", opt->name ? opt->name : "host-calibrated");
    g_string_append_printf(ini, "source = measured on %s by strata calibrate --backend host\n",
                           g_get_host_name());
    g_string_append(ini, "default_memory = hbm\n\n");
}

/* The memories hbm, host and pageable: DRAM regions sharing one port bandwidth. */
static void write_ini_memories(GString *ini, double port_bw, const cal_text *t)
{
    const char *mems[3] = {"hbm", "host", "pageable"};
    for (int i = 0; i < 3; i++) {
        g_string_append_printf(ini, "[memory %s]\nkind = %s\n", mems[i], i == 0 ? "device" : "host");
        if (i == 2)
            g_string_append(ini, "# replayed in pre-touched pages, like pinned memory (first-touch\n"
                                 "# bandwidth is in the table above)\npageable = true\n");
        g_string_append_printf(ini, "# a quarter of this machine's memory\ncapacity = %s\n", t->cap);
        char *c = g_strdup_printf("aggregate of two concurrent copies of %s (max of same and opposite "
                                  "directions): the DRAM port they share", t->largest);
        put_bw(ini, "bandwidth", port_bw, c);
        g_free(c);
        g_string_append_printf(ini, "# span of a 64-byte copy (median of 2001)\nlatency = %s\n\n", t->lat);
    }
}

/* The links memcpy (host-hbm) and memcpy_pageable (pageable-hbm): one large copy's bandwidth, full duplex. */
static void write_ini_links(GString *ini, const cal_figures *f, double link_bw, const cal_text *t)
{
    const char *links[2][2] = {{"memcpy", "host"}, {"memcpy_pageable", "pageable"}};
    for (int i = 0; i < 2; i++) {
        g_string_append_printf(ini, "[link %s]\nbetween = %s hbm\n", links[i][0], links[i][1]);
        char *x = bw_text(f->h2d), *y = bw_text(f->d2h);
        char *c = g_strdup_printf("one copy of %s: H2D %s, D2H %s (mean of the two)", t->largest, x, y);
        put_bw(ini, "bandwidth", link_bw, c);
        g_free(c);
        g_free(x);
        g_free(y);
        g_string_append_printf(ini, "# span of a 64-byte copy (median of 2001)\nlatency = %s\n", t->lat);
        g_string_append(ini, "# concurrent copies share the memories' ports (above)\nduplex = full\n\n");
    }
}

bool strata_host_calibrate(const strata_calibrate_options *opt, GString *ini, FILE *log, GError **err)
{
    size_t max;
    uint64_t ram;
    if (!cal_check_size(opt, &max, &ram, err))
        return false;
    double t_start = strata_host_now(); /* the whole measurement, buffers' first touch included */
    cal_buffers b = {0};
    if (!cal_buffers_alloc(&b, max, err))
        return false;

    GString *table = g_string_new(NULL);
    cal_figures f = {0};
    uint64_t sink = 0;
    measure_single_copies(&b, table, log, &f);
    measure_concurrent_and_compute(&b, &f, &sink);
    f.elapsed = strata_host_now() - t_start;
    cal_buffers_free(&b);

    double link_bw = (f.h2d + f.d2h) / 2;
    f.latency = round(f.latency * 1e9) * 1e-9; /* whole nanoseconds: the clock's resolution */
    double port_bw = MAX(MAX(f.same, f.opposite), link_bw);
    uint64_t capacity = ram / 4 / (UINT64_C(1) << 20) * (UINT64_C(1) << 20);
    cal_text t;
    cal_text_init(&t, &f, capacity);
    if (log)
        fprintf(log, "calibrate: two copies at once: same direction %s, opposite %s; latency %s; compute %s; "
                     "operand read %s (%.1f s)\n", t.same, t.opp, t.lat, t.flops, t.read, f.elapsed);

    write_ini_preamble(ini, opt, &f, &t, table);
    g_string_free(table, TRUE);
    write_ini_memories(ini, port_bw, &t);
    write_ini_links(ini, &f, link_bw, &t);
    g_string_append_printf(ini,
                           "[compute cpu]\n# one thread of host_kernel.h's multiply-add kernel (median of 31 samples of ~0.5 ms); "
                           "operand reads measured at %s\nflops = %s\noperands = hbm\n",
                           t.read, t.flops);
    cal_text_clear(&t);
    if (sink == 42)
        g_string_append(ini, "# \n"); /* consumes the kernels' results */
    return true;
}
