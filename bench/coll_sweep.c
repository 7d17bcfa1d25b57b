/*
 * coll_sweep.c: a collective's time as its size grows (coll_sweep.h).
 *
 * Each point runs in a forked child, as validate/published.c's cases do:
 * the run spec generates the collective, the engine simulates it with its
 * default options, and the child writes one line back through a pipe,
 *   ok TIME ROW LIBALGO LIBPROTO CHANNELS   ("-" for none)
 *   error MESSAGE
 */
#include "coll_sweep.h"
#include <stdio.h>
#include <string.h>
#include "core/interrupt.h"
#include "engine/engine.h"
#include "runspec/runspec.h"
#include "workload/workload.h"

typedef struct gen_args {
    const char *op, *extra;
    uint32_t devices;
    uint64_t bytes;
} gen_args;

static strata_source *open_gen(void *data, const strata_hw *hw, GError **err)
{
    (void)hw;
    const gen_args *g = data;
    char *op = g_strdup_printf("op=%s", g->op), *bytes = g_strdup_printf("bytes=%" G_GUINT64_FORMAT, g->bytes),
         *devices = g_strdup_printf("devices=%u", g->devices);
    const char *args[] = {op, bytes, devices, g->extra, NULL};
    strata_source *src = strata_workload_generate("collective", args, err);
    g_free(op);
    g_free(bytes);
    g_free(devices);
    return src;
}

static char *child_line(const char *hw_path, const char *const *sets, const gen_args *g)
{
    GError *err = NULL;
    strata_results *r = NULL;
    strata_run_spec_options o = {.hw_path = hw_path, .open = open_gen, .open_data = (void *)g, .expand_spmd = true,
                                 .hw_overrides = sets};
    char *line;
    if (strata_run_spec_run(&o, &r, &err)) {
        const strata_collective_result *c =
            r->collectives && r->collectives->len ? &g_array_index(r->collectives, strata_collective_result, 0) : NULL;
        if (r->oom || !c || !(c->end_s > c->start_s))
            line = g_strdup(r->oom ? "error out of memory" : "error no collective ran");
        else
            line = g_strdup_printf("ok %.17g %s %s %s %u", c->end_s - c->start_s, c->desc.algo,
                                   c->desc.nccl_algorithm ? c->desc.nccl_algorithm : "-",
                                   c->desc.nccl_protocol ? c->desc.nccl_protocol : "-", c->desc.nccl_channels);
    } else {
        line = g_strdup_printf("error %s", err ? err->message : "failed");
    }
    g_clear_error(&err);
    strata_results_free(r);
    return line;
}

static void copy_word(char *dst, size_t size, const char *w)
{
    g_strlcpy(dst, strcmp(w, "-") == 0 ? "" : w, size);
}

/* One point's setting, for strata_child_text. */
typedef struct point_args {
    const char *hw_path;
    const char *const *sets;
    const gen_args *g;
} point_args;

static char *child_line_of(void *data)
{
    const point_args *a = data;
    return child_line(a->hw_path, a->sets, a->g);
}

bool coll_sweep_run(const char *hw_path, const char *const *sets, const char *op, uint32_t devices,
                    const char *extra_gen, uint64_t bytes, coll_sweep_point *p)
{
    memset(p, 0, sizeof *p);
    p->bytes = bytes;
    gen_args g = {.op = op, .extra = extra_gen, .devices = devices, .bytes = bytes};
    point_args a = {.hw_path = hw_path, .sets = sets, .g = &g};
    char *text = strata_child_text(child_line_of, &a, NULL);
    if (!text)
        return false;
    if (g_str_has_prefix(text, "ok ")) {
        char **w = g_strsplit(text + 3, " ", 5);
        if (g_strv_length(w) == 5) {
            p->ok = true;
            p->time_s = g_ascii_strtod(w[0], NULL);
            copy_word(p->algo, sizeof p->algo, w[1]);
            copy_word(p->lib_algo, sizeof p->lib_algo, w[2]);
            copy_word(p->lib_proto, sizeof p->lib_proto, w[3]);
            p->channels = (uint32_t)g_ascii_strtoull(w[4], NULL, 10);
        }
        g_strfreev(w);
    }
    if (!p->ok)
        g_strlcpy(p->message, *text ? (g_str_has_prefix(text, "error ") ? text + 6 : text) : "the child ended abnormally",
                  sizeof p->message);
    g_free(text);
    return true;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

uint64_t *coll_sweep_sizes(uint64_t lo, uint64_t hi, bool between, uint64_t align, size_t *n)
{
    GArray *v = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    align = align ? align : 1;
    for (uint64_t p = 1; p <= hi; p <<= 1) {
        static const uint64_t quarters[] = {4, 5, 6, 7};
        for (size_t q = 0; q < (between ? 4u : 1u); q++) {
            uint64_t b = p * quarters[q] / 4 / align * align;
            if (b >= lo && b <= hi && b > 0)
                g_array_append_val(v, b);
        }
    }
    qsort(v->data, v->len, sizeof(uint64_t), cmp_u64);
    size_t k = 0;
    for (size_t i = 0; i < v->len; i++)
        if (k == 0 || g_array_index(v, uint64_t, i) != g_array_index(v, uint64_t, k - 1))
            g_array_index(v, uint64_t, k++) = g_array_index(v, uint64_t, i);
    *n = k;
    return (uint64_t *)g_array_free(v, FALSE);
}

static bool same_choice(const coll_sweep_point *a, const coll_sweep_point *b)
{
    return strcmp(a->algo, b->algo) == 0 && strcmp(a->lib_algo, b->lib_algo) == 0 &&
           strcmp(a->lib_proto, b->lib_proto) == 0;
}

GArray *coll_sweep_falls(const coll_sweep_point *pts, size_t n, double tol)
{
    GArray *falls = g_array_new(FALSE, FALSE, sizeof(coll_sweep_fall));
    for (size_t b = 0; b < n; b++) {
        if (!pts[b].ok)
            continue;
        coll_sweep_fall worst = {.a = b, .b = b, .drop = 0};
        for (size_t a = 0; a < b; a++) {
            if (!pts[a].ok || !same_choice(&pts[a], &pts[b]) || pts[a].bytes >= pts[b].bytes)
                continue;
            double drop = 1 - pts[b].time_s / pts[a].time_s;
            if (drop > tol && drop > worst.drop)
                worst = (coll_sweep_fall){.a = a, .b = b, .drop = drop};
        }
        if (worst.a != b)
            g_array_append_val(falls, worst);
    }
    return falls;
}

guint coll_sweep_same_channel_falls(const char *label, const coll_sweep_point *pts, size_t n)
{
    GArray *falls = coll_sweep_falls(pts, n, 1e-9);
    guint same = 0;
    for (guint k = 0; k < falls->len; k++) {
        const coll_sweep_fall *f = &g_array_index(falls, coll_sweep_fall, k);
        const coll_sweep_point *a = &pts[f->a], *b = &pts[f->b];
        if (a->channels != b->channels)
            continue;
        fprintf(stderr, "%s: %" G_GUINT64_FORMAT " B %s/%s/%u %.4f us -> %" G_GUINT64_FORMAT " B %.4f us\n", label,
                a->bytes, a->lib_algo, a->lib_proto, a->channels, a->time_s * 1e6, b->bytes, b->time_s * 1e6);
        same++;
    }
    g_array_free(falls, TRUE);
    return same;
}
