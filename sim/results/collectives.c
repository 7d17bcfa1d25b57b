/*
 * collectives.c: the multi-device part of the results (contract in
 * collectives.h).
 *
 * The device a summary shows is found from the memory rows: a memory of
 * kind device on device D (its place) with the highest peak allocated (the
 * lowest D on a tie). Rows are matched to it by their places (the hardware
 * model's devices and hosts, the stream's device), never by name.
 */
#include "results/collectives.h"
#include <stdlib.h>
#include <string.h>
#include "core/jsonout.h"
#include "core/units.h"

#define SUMMARY_COLLECTIVES 20

static void collective_clear(void *p)
{
    strata_collective_result *c = p;
    g_free(c->desc.axis);
}

strata_collective_result *strata_results_collective(strata_results *r, uint32_t index)
{
    if (!r->collectives) {
        r->collectives = g_array_new(FALSE, TRUE, sizeof(strata_collective_result));
        g_array_set_clear_func(r->collectives, collective_clear);
    }
    while (r->collectives->len <= index) {
        strata_collective_result c = {.desc.index = r->collectives->len, .start_s = -1};
        g_array_append_val(r->collectives, c);
    }
    return &g_array_index(r->collectives, strata_collective_result, index);
}

void strata_results_clear_devices(strata_results *r)
{
    g_free(r->mesh);
    r->mesh = NULL;
    g_free(r->symmetry);
    r->symmetry = NULL;
    g_free(r->fallback);
    r->fallback = NULL;
    if (r->collectives)
        g_array_unref(r->collectives);
    r->collectives = NULL;
}

void strata_collective_note(strata_collective_result *c, double t0, double t1)
{
    if (c->start_s < 0 || t0 < c->start_s)
        c->start_s = t0;
    if (t1 > c->end_s)
        c->end_s = t1;
}

double strata_collective_busbw_factor(strata_op_kind kind, uint32_t n)
{
    if (n == 0)
        return 0;
    switch (kind) {
    case STRATA_OP_ALL_REDUCE: return 2.0 * (n - 1) / n;
    case STRATA_OP_COLLECTIVE_PERMUTE: return 1.0;
    default: return (double)(n - 1) / n;
    }
}

static double time_of(const strata_collective_result *c) { return c->start_s >= 0 ? c->end_s - c->start_s : 0.0; }

static double algbw_of(const strata_collective_result *c)
{
    double t = time_of(c);
    return t > 0 ? (double)c->desc.bytes / t : 0.0;
}

void strata_results_json_devices(JsonBuilder *b, const strata_results *r)
{
    if (r->devices <= 1)
        return;
    strata_json_add_uint(b, "devices", r->devices);
    strata_json_add_string(b, "mesh", r->mesh);
    if (r->classes) { /* one device simulated per class of alike devices */
        strata_json_open_object(b, "classes");
        strata_json_add_uint(b, "simulated_devices", r->classes);
        strata_json_add_string(b, "symmetry", r->symmetry);
        json_builder_end_object(b);
    }
    if (r->fallback) { /* the default ran fast: the mode that ran, and why */
        strata_json_add_string(b, "collectives_mode", "fast");
        strata_json_add_string(b, "collectives_fallback", r->fallback);
    }
    strata_json_open_array(b, "collectives");
    for (guint i = 0; r->collectives && i < r->collectives->len; i++) {
        const strata_collective_result *c = &g_array_index(r->collectives, strata_collective_result, i);
        double algbw = algbw_of(c);
        json_builder_begin_object(b);
        strata_json_add_uint(b, "index", c->desc.index);
        strata_json_add_uint(b, "line", c->desc.line);
        strata_json_add_string(b, "op", strata_op_kind_name(c->desc.kind));
        strata_json_add_string(b, "axis", c->desc.axis);
        strata_json_add_string(b, "algo", c->desc.algo);
        strata_json_add_uint(b, "group_size", c->desc.group_size);
        strata_json_add_uint(b, "bytes", c->desc.bytes);
        strata_json_add_double(b, "time_s", time_of(c));
        strata_json_add_double(b, "algbw_Bps", algbw);
        strata_json_add_double(b, "busbw_Bps", algbw * strata_collective_busbw_factor(c->desc.kind, c->desc.group_size));
        if (c->desc.nccl_algorithm) { /* what NCCL's tuning model chose */
            strata_json_open_object(b, "nccl");
            strata_json_add_string(b, "algorithm", c->desc.nccl_algorithm);
            strata_json_add_string(b, "protocol", c->desc.nccl_protocol);
            strata_json_add_uint(b, "channels", c->desc.nccl_channels);
            json_builder_end_object(b);
        }
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

uint32_t strata_results_shown_device(const strata_results *r)
{
    uint32_t worst = STRATA_NO_DEVICE;
    uint64_t peak = 0;
    for (guint i = 0; i < r->memories->len; i++) {
        const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        uint32_t d = m->place.device[0];
        if (d != STRATA_NO_DEVICE && m->kind && strcmp(m->kind, "device") == 0 &&
            (worst == STRATA_NO_DEVICE || m->peak_allocated_bytes > peak ||
             (m->peak_allocated_bytes == peak && d < worst))) {
            worst = d;
            peak = m->peak_allocated_bytes;
        }
    }
    return worst;
}

bool strata_results_row_shown(const strata_results *r, uint32_t shown, const strata_place *place,
                              const char *mem_kind)
{
    if (r->devices <= 1 || (mem_kind && strcmp(mem_kind, "host") == 0) || shown == STRATA_NO_DEVICE)
        return true;
    return place->device[0] == shown || place->device[1] == shown || place->host[0] == shown ||
           place->host[1] == shown;
}

/* The shown device as the line prints it (-1: none). */
static int64_t shown_number(const strata_results *r)
{
    uint32_t d = strata_results_shown_device(r);
    return d == STRATA_NO_DEVICE ? -1 : (int64_t)d;
}

void strata_results_print_devices(const strata_results *r, FILE *out)
{
    if (r->devices <= 1)
        return;
    fprintf(out, "\ndevices   %u%s%s; below: device %" G_GINT64_FORMAT " (the highest device-memory peak), its "
            "links and the hosts (the JSON has every device)\n", r->devices, r->mesh ? ", mesh " : "",
            r->mesh ? r->mesh : "", shown_number(r));
    if (r->classes)
        fprintf(out, "simulated %u device(s), one per class of devices the symmetry %s makes alike\n", r->classes,
                r->symmetry);
    if (r->fallback)
        fprintf(out, "collectives fast, approximate: the default found no exact symmetry of a run too large for "
                "every device (standard error says why)\n");
    if (!r->collectives || r->collectives->len == 0)
        return;
    fprintf(out, "\n%-10s %-6s %-18s %-12s %-10s %-4s %-12s %-12s %-12s %s\n", "collective", "line", "op", "axis",
            "algo", "n", "bytes", "time", "algbw", "busbw");
    for (guint i = 0; i < r->collectives->len && i < SUMMARY_COLLECTIVES; i++) {
        const strata_collective_result *c = &g_array_index(r->collectives, strata_collective_result, i);
        double algbw = algbw_of(c);
        char *bytes = strata_format_size(c->desc.bytes);
        char *t = strata_format_time(time_of(c));
        char *a = strata_format_bandwidth(algbw);
        char *bb = strata_format_bandwidth(algbw * strata_collective_busbw_factor(c->desc.kind, c->desc.group_size));
        fprintf(out, "%-10u %-6" G_GUINT64_FORMAT " %-18s %-12s %-10s %-4u %-12s %-12s %-12s %s\n", c->desc.index, c->desc.line,
                strata_op_kind_name(c->desc.kind), c->desc.axis ? c->desc.axis : "", c->desc.algo ? c->desc.algo : "", c->desc.group_size, bytes,
                t, a, bb);
        g_free(bytes);
        g_free(t);
        g_free(a);
        g_free(bb);
    }
    if (r->collectives->len > SUMMARY_COLLECTIVES)
        fprintf(out, "... %u more collectives (the JSON has them all)\n", r->collectives->len - SUMMARY_COLLECTIVES);
}
