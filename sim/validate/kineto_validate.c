/*
 * kineto_validate.c: a profiler trace against one engine run
 * (kineto_validate.h).
 */
#include "validate/kineto_validate.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/units.h"
#include "engine/engine.h"
#include "import/kineto_event.h"
#include "import/kineto_order.h"
#include "results/results.h"
#include "spmd/spmd.h"

#define N_HOSTS 3 /* no host end, pinned, pageable */
#define N_SIZES 4

static const char *const host_names[N_HOSTS] = {"-", "pinned", "pageable"};
static const char *const size_names[N_SIZES] = {"<64KiB", "64KiB-1MiB", "1MiB-16MiB", ">=16MiB"};

static int size_class(uint64_t bytes)
{
    return bytes < (UINT64_C(64) << 10) ? 0 : bytes < (UINT64_C(1) << 20) ? 1 : bytes < (UINT64_C(16) << 20) ? 2 : 3;
}

typedef struct measured_copy {
    strata_kineto_dir dir;
    int host;
    uint64_t bytes;
    double dur_s;
} measured_copy;

/* What the file measured on the device. */
typedef struct measured {
    int device, activity_device; /* kineto.h: the [memory] events' and the copies' device ids */
    GArray *copies;   /* measured_copy, in file order */
    GArray *reserved; /* reserved_point: Total Reserved after each alloc or free, in file order */
} measured;

/* One point of the file's reserved curve. */
typedef struct reserved_point {
    double ts;
    guint index; /* in file order */
    uint64_t bytes;
} reserved_point;

/* The import's order of the [memory] events (kineto_order.h). */
static gint cmp_reserved_point(gconstpointer a, gconstpointer b)
{
    const reserved_point *x = a, *y = b;
    return strata_kineto_ts_order(x->ts, x->index, y->ts, y->index);
}

static void measure_visit(const strata_kineto_event *ev, void *user)
{
    measured *m = user;
    if (ev->bytes == 0)
        return;
    if (ev->kind == STRATA_KINETO_EV_MEMCPY && ev->device == m->activity_device) {
        strata_kineto_mem host = ev->src != STRATA_KINETO_MEM_DEVICE ? ev->src : ev->dst;
        measured_copy c = {ev->dir, host == STRATA_KINETO_MEM_PINNED     ? 1
                                    : host == STRATA_KINETO_MEM_PAGEABLE ? 2
                                                                         : 0,
                           (uint64_t)ev->bytes, ev->dur * 1e-6};
        g_array_append_val(m->copies, c);
    } else if (ev->kind == STRATA_KINETO_EV_MEMORY && ev->device == m->device && strata_kineto_event_gpu(ev) &&
               ev->has_totals) {
        reserved_point p = {ev->ts, m->reserved->len, ev->total_reserved};
        g_array_append_val(m->reserved, p);
    }
}

static gint cmp_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(GArray *a)
{
    if (a->len == 0)
        return 0.0;
    g_array_sort(a, cmp_double);
    return a->len % 2 ? g_array_index(a, double, a->len / 2)
                      : 0.5 * (g_array_index(a, double, a->len / 2 - 1) + g_array_index(a, double, a->len / 2));
}

static gint cmp_span_index(gconstpointer a, gconstpointer b)
{
    uint64_t x = (*(const strata_op_span *const *)a)->op_index, y = (*(const strata_op_span *const *)b)->op_index;
    return (x > y) - (x < y);
}

/* One group of copies: sums and per-copy errors. */
typedef struct cell {
    uint64_t n;
    double real, sim;
    GArray *errors;
} cell;

static void cell_add(cell *c, double real, double sim)
{
    if (c->errors == NULL)
        c->errors = g_array_new(FALSE, FALSE, sizeof(double));
    c->n++;
    c->real += real;
    c->sim += sim;
    if (real > 0) {
        double e = (sim - real) / real;
        g_array_append_val(c->errors, e);
    }
}

static void table_row(GString *t, const char *dir, const char *host, const char *size, cell *c)
{
    g_string_append_printf(t, "| %s | %s | %s | %" G_GUINT64_FORMAT " | %.1f us | %.1f us | %+.1f%% | %+.1f%% |\n",
                           dir, host, size, c->n, c->real * 1e6, c->sim * 1e6,
                           c->real > 0 ? 100.0 * (c->sim - c->real) / c->real : 0.0,
                           c->errors ? 100.0 * median(c->errors) : 0.0);
}

/* Pairs the simulated copies with the measured ones and fills the table. */
static bool compare_copies(const strata_results *r, const measured *m, strata_kineto_validation *v, GString *t,
                           GError **err)
{
    GPtrArray *spans = g_ptr_array_new();
    for (guint i = 0; r->spans && i < r->spans->len; i++) {
        strata_op_span *s = &g_array_index(r->spans, strata_op_span, i);
        if (s->kind == STRATA_OP_COPY)
            g_ptr_array_add(spans, s);
    }
    g_ptr_array_sort(spans, cmp_span_index);
    if (spans->len != m->copies->len) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "the simulation ran %u copies, the file has %u memcpys",
                    spans->len, m->copies->len);
        g_ptr_array_free(spans, TRUE);
        return false;
    }
    cell cells[STRATA_KINETO_DIR__COUNT][N_HOSTS][N_SIZES] = {0}, dirs[STRATA_KINETO_DIR__COUNT] = {0};
    for (guint k = 0; k < spans->len; k++) {
        const strata_op_span *s = g_ptr_array_index(spans, k);
        const measured_copy *c = &g_array_index(m->copies, measured_copy, k);
        double sim = s->end_s - s->start_s;
        cell_add(&cells[c->dir][c->host][size_class(c->bytes)], c->dur_s, sim);
        cell_add(&dirs[c->dir], c->dur_s, sim);
    }
    v->n_copies = spans->len;
    g_string_append(t, "| direction | host | size | copies | measured (sum) | simulated (sum) | error of sums | "
                       "median error |\n| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (int d = 0; d < STRATA_KINETO_DIR__COUNT; d++) {
        for (int h = 0; h < N_HOSTS; h++)
            for (int z = 0; z < N_SIZES; z++)
                if (cells[d][h][z].n) {
                    table_row(t, strata_kineto_dir_name(d), host_names[h], size_names[z], &cells[d][h][z]);
                    g_array_free(cells[d][h][z].errors, TRUE);
                }
        if (dirs[d].n == 0)
            continue;
        table_row(t, strata_kineto_dir_name(d), "all", "all", &dirs[d]);
        v->dir[d] = (strata_kineto_dir_error){dirs[d].n, dirs[d].real, dirs[d].sim, median(dirs[d].errors)};
        g_array_free(dirs[d].errors, TRUE);
    }
    g_ptr_array_free(spans, TRUE);
    return true;
}

/* The simulated hbm reserved bytes after the last len(reserved) allocs and
 * frees (the setup's come first) against Total Reserved, less the segments
 * of the copies' device-end staging buffers: the setup's first
 * n_staging_device allocs (kineto.c, staging_device_size), each the whole
 * of a segment of its own that no other block shares, held to the end.
 * The real copies moved tensors the file's Total Reserved already counts,
 * so these bytes are the import's, not the run's. */
static void compare_reserved(const strata_results *r, const measured *m, strata_kineto_validation *v, GString *t)
{
    int hbm = -1;
    for (guint i = 0; i < r->memories->len; i++)
        if (strcmp(g_array_index(r->memories, strata_memory_result, i).name, "hbm") == 0 ||
            strcmp(g_array_index(r->memories, strata_memory_result, i).name, "hbm@0") == 0)
            hbm = (int)i;
    GArray *sim = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    for (guint i = 0; hbm >= 0 && r->mem_samples && i < r->mem_samples->len; i++) {
        const strata_mem_sample *s = &g_array_index(r->mem_samples, strata_mem_sample, i);
        if (s->memory == (uint32_t)hbm)
            g_array_append_val(sim, s->reserved);
    }
    guint n = m->reserved->len;
    guint n_staging = (guint)v->sum.n_staging_device;
    if (n == 0 || sim->len < n + n_staging) {
        g_string_append_printf(t, "reserved: %s\n", n ? "the simulation has no hbm samples to compare"
                                                       : "the file has no Total Reserved to compare with");
        g_array_free(sim, TRUE);
        return;
    }
    v->has_reserved = true;
    v->n_reserved_points = n;
    v->staging_reserved = n_staging ? g_array_index(sim, uint64_t, n_staging - 1) : 0;
    double sum = 0.0;
    for (guint k = 0; k < n; k++) {
        uint64_t real = g_array_index(m->reserved, reserved_point, k).bytes;
        uint64_t model = g_array_index(sim, uint64_t, sim->len - n + k);
        model = model > v->staging_reserved ? model - v->staging_reserved : 0;
        v->real_peak_reserved = MAX(v->real_peak_reserved, real);
        v->sim_peak_reserved = MAX(v->sim_peak_reserved, model);
        double e = real ? fabs((double)model - (double)real) / (double)real : 0.0;
        sum += e;
        v->reserved_max_error = MAX(v->reserved_max_error, e);
    }
    v->reserved_mean_error = sum / n;
    char *rp = strata_format_size(v->real_peak_reserved), *sp = strata_format_size(v->sim_peak_reserved);
    g_string_append_printf(t,
                           "reserved (hbm, caching allocator): %u points; peak measured %s, simulated %s (%+.2f%%); "
                           "|error| mean %.2f%%, max %.2f%%\n",
                           n, rp, sp,
                           100.0 * ((double)v->sim_peak_reserved - (double)v->real_peak_reserved) /
                               (double)MAX(v->real_peak_reserved, 1),
                           100.0 * v->reserved_mean_error, 100.0 * v->reserved_max_error);
    if (v->staging_reserved) {
        char *b = strata_format_size(v->staging_reserved);
        g_string_append_printf(t, "(simulated less %s: the segments of the copies' device ends, %u staging "
                                  "buffer%s the import adds; the real copies moved tensors Total Reserved counts)\n",
                               b, n_staging, n_staging == 1 ? "" : "s");
        g_free(b);
    }
    g_free(rp);
    g_free(sp);
    g_array_free(sim, TRUE);
}

bool strata_kineto_validate(const char *path, int device, const strata_hw *hw, strata_kineto_validation *v,
                            GError **err)
{
    memset(v, 0, sizeof *v);
    strata_kineto_options opt;
    strata_kineto_options_init(&opt);
    opt.device = device;
    strata_source *src = strata_kineto_import(path, &opt, &v->sum, err);
    if (src == NULL)
        return false;
    if (strata_spmd_devices(hw) > 1) /* as run does: a trace without a mesh runs on device 0 (hbm is hbm@0) */
        src = strata_spmd_expand(src, hw);
    measured m = {v->sum.device, v->sum.activity_device, g_array_new(FALSE, FALSE, sizeof(measured_copy)),
                  g_array_new(FALSE, FALSE, sizeof(reserved_point))};
    strata_results *r = NULL;
    strata_engine_options eopt;
    strata_engine_options_init(&eopt);
    eopt.record_spans = true;
    eopt.allocator = "caching";
    bool ok = strata_kineto_each_event_sized(path, v->sum.n_memcpy_bytes_on_runtime > 0, measure_visit, &m, err) && strata_engine_run(hw, src, &eopt, &r, err);
    if (ok && v->sum.memory_by_ts)
        g_array_sort(m.reserved, cmp_reserved_point); /* the order the import replays them in */
    GString *t = g_string_new(NULL);
    if (ok) {
        g_string_printf(t, "%s on %s: %" G_GUINT64_FORMAT " kernels at their measured times, %u memcpys; makespan "
                           "%.3f ms\n",
                        path, strata_hw_name(hw), v->sum.n_kernels, m.copies->len, r->makespan_s * 1e3);
        v->oom = r->oom;
        if (r->oom)
            g_string_append(t, "the simulation ran out of memory: no comparison\n");
        else
            ok = compare_copies(r, &m, v, t, err);
    }
    if (ok && !v->oom)
        compare_reserved(r, &m, v, t);
    v->table = g_string_free(t, FALSE);
    strata_results_free(r);
    g_array_free(m.copies, TRUE);
    g_array_free(m.reserved, TRUE);
    strata_source_free(src);
    return ok;
}

void strata_kineto_validation_clear(strata_kineto_validation *v)
{
    g_free(v->table);
    v->table = NULL;
}
