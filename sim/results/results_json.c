/*
 * results_json.c: the results value as JSON (json-glib), the "Results
 * JSON" contract of the README, extended:
 *
 *   producer, hardware, trace, status ("ok"|"oom"), makespan_s, ops,
 *   oom: null | {op_index, line, memory, buffer, stream, requested_bytes,
 *                free_bytes, largest_free_bytes[, planned_bytes: a planning
 *                allocator's plan taller than the memory]},
 *   memories.NAME.{kind, capacity_bytes, allocator, peak_allocated_bytes,
 *                  peak_reserved_bytes, peak_allocated_fraction,
 *                  fragmentation_peak, internal_waste_bytes, argument_bytes,
 *                  output_bytes, alias_bytes, temp_peak_bytes, jax_total_bytes,
 *                  padding_bytes, port_bytes,
 *                  port_busy_s},
 *   links.NAME.{bytes, busy_s, utilization},
 *   streams.NAME.{ops, busy_s, stall_s},
 *   compute.NAME.{busy_s, flops, utilization, and clock_mean, clock_min where a
 *   power-limit rule ran its clock},
 *   with several devices: devices, mesh, collectives (results/collectives.h),
 *   expert_groups (results/mesh_groups.h: with an expert axis),
 *   and with a pipe axis in the mesh: pipeline (results/stages.h),
 *   then every key of `extra`, in the order it was set.
 *
 * Invariants: keys come in the fixed order above (json-glib keeps insertion
 * order) and numbers are printed by json-glib's round-tripping formatter, so
 * equal results give byte-identical text. Nothing here reads a clock.
 */
#include "results/results.h"
#include "results/collectives.h"
#include "results/mesh_groups.h"
#include "results/stages.h"
#include "core/error.h"
#include "core/jsonout.h"
#include "core/outfile.h"
#include <string.h>

/* busy / makespan, 0 when nothing ran. */
static double utilization(double busy_s, double makespan_s)
{
    return makespan_s > 0 ? busy_s / makespan_s : 0.0;
}

static void add_oom(JsonBuilder *b, const strata_results *r)
{
    json_builder_set_member_name(b, "oom");
    if (!r->oom) {
        json_builder_add_null_value(b);
        return;
    }
    const strata_oom_info *o = &r->oom_info;
    json_builder_begin_object(b);
    strata_json_add_uint(b, "op_index", o->op_index);
    strata_json_add_uint(b, "line", o->line);
    strata_json_add_string(b, "memory", o->memory);
    strata_json_add_string(b, "buffer", o->buffer);
    strata_json_add_string(b, "stream", o->stream);
    strata_json_add_uint(b, "requested_bytes", o->requested_bytes);
    strata_json_add_uint(b, "free_bytes", o->free_bytes);
    strata_json_add_uint(b, "largest_free_bytes", o->largest_free_bytes);
    if (o->planned_bytes)
        strata_json_add_uint(b, "planned_bytes", o->planned_bytes);
    json_builder_end_object(b);
}

static void add_memories(JsonBuilder *b, const strata_results *r)
{
    strata_json_open_object(b, "memories");
    for (guint i = 0; i < r->memories->len; i++) {
        const strata_memory_result *m = &g_array_index(r->memories, strata_memory_result, i);
        strata_json_open_object(b, m->name);
        strata_json_add_string(b, "kind", m->kind);
        strata_json_add_uint(b, "capacity_bytes", m->capacity_bytes);
        strata_json_add_string(b, "allocator", m->allocator);
        strata_json_add_uint(b, "peak_allocated_bytes", m->peak_allocated_bytes);
        strata_json_add_uint(b, "peak_reserved_bytes", m->peak_reserved_bytes);
        strata_json_add_double(b, "peak_allocated_fraction",
                               m->capacity_bytes ? (double)m->peak_allocated_bytes / (double)m->capacity_bytes
                                                 : 0.0);
        strata_json_add_double(b, "fragmentation_peak", m->fragmentation_peak);
        strata_json_add_uint(b, "internal_waste_bytes", m->internal_waste_bytes);
        strata_json_add_uint(b, "argument_bytes", m->argument_bytes);
        strata_json_add_uint(b, "output_bytes", m->output_bytes);
        strata_json_add_uint(b, "alias_bytes", m->alias_bytes);
        strata_json_add_uint(b, "temp_peak_bytes", m->temp_peak_bytes);
        strata_json_add_uint(b, "jax_total_bytes", m->jax_total_bytes);
        strata_json_add_uint(b, "padding_bytes", m->padding_bytes);
        strata_json_add_uint(b, "port_bytes", m->port_bytes);
        strata_json_add_double(b, "port_busy_s", m->port_busy_s);
        json_builder_end_object(b);
    }
    json_builder_end_object(b);
}

static void add_links(JsonBuilder *b, const strata_results *r)
{
    strata_json_open_object(b, "links");
    for (guint i = 0; i < r->links->len; i++) {
        const strata_link_result *l = &g_array_index(r->links, strata_link_result, i);
        strata_json_open_object(b, l->name);
        strata_json_add_uint(b, "bytes", l->bytes);
        strata_json_add_double(b, "busy_s", l->busy_s);
        strata_json_add_double(b, "utilization", utilization(l->busy_s, r->makespan_s));
        json_builder_end_object(b);
    }
    json_builder_end_object(b);
}

static void add_streams(JsonBuilder *b, const strata_results *r)
{
    strata_json_open_object(b, "streams");
    for (guint i = 0; i < r->streams->len; i++) {
        const strata_stream_result *s = &g_array_index(r->streams, strata_stream_result, i);
        strata_json_open_object(b, s->name);
        strata_json_add_uint(b, "ops", s->ops);
        strata_json_add_double(b, "busy_s", s->busy_s);
        strata_json_add_double(b, "stall_s", s->stall_s);
        json_builder_end_object(b);
    }
    json_builder_end_object(b);
}

static void add_compute(JsonBuilder *b, const strata_results *r)
{
    strata_json_open_object(b, "compute");
    for (guint i = 0; i < r->compute->len; i++) {
        const strata_compute_result *c = &g_array_index(r->compute, strata_compute_result, i);
        strata_json_open_object(b, c->name);
        strata_json_add_double(b, "busy_s", c->busy_s);
        strata_json_add_double(b, "flops", c->flops);
        strata_json_add_double(b, "utilization", utilization(c->busy_s, r->makespan_s));
        if (c->clock_mean > 0) { /* a power-limit rule ran the unit's clock */
            strata_json_add_double(b, "clock_mean", c->clock_mean);
            strata_json_add_double(b, "clock_min", c->clock_min);
        }
        json_builder_end_object(b);
    }
    json_builder_end_object(b);
}

void strata_results_json_op(JsonBuilder *b, uint64_t index, uint64_t line, strata_op_kind kind, const char *stream,
                            const char *label, const strata_json_field *more, size_t n)
{
    const strata_json_field op[] = {
        STRATA_JSON_INT("index", index),
        STRATA_JSON_INT("line", line),
        STRATA_JSON_STR("kind", strata_op_kind_name(kind)),
        STRATA_JSON_STR("stream", stream ? stream : ""),
        STRATA_JSON_STR("label", label ? label : ""),
    };
    json_builder_begin_object(b);
    strata_json_add_fields(b, op, G_N_ELEMENTS(op));
    strata_json_add_fields(b, more, n);
    json_builder_end_object(b);
}

JsonNode *strata_results_to_json(const strata_results *r)
{
    JsonBuilder *b = strata_json_object_begin();
    strata_json_add_string(b, "producer", r->producer);
    strata_json_add_string(b, "hardware", r->hardware);
    strata_json_add_string(b, "trace", r->trace);
    strata_json_add_string(b, "status", r->oom ? "oom" : "ok");
    strata_json_add_double(b, "makespan_s", r->makespan_s);
    strata_json_add_uint(b, "ops", r->ops);
    add_oom(b, r);
    add_memories(b, r);
    add_links(b, r);
    add_streams(b, r);
    add_compute(b, r);
    strata_results_json_devices(b, r);
    strata_results_json_groups(b, r);
    strata_results_json_stages(b, r);
    if (r->extra) {
        GList *members = json_object_get_members(r->extra);
        for (GList *m = members; m; m = m->next) {
            const char *key = m->data;
            json_builder_set_member_name(b, key);
            json_builder_add_value(b, json_node_copy(json_object_get_member(r->extra, key)));
        }
        g_list_free(members);
    }
    return strata_json_object_end(b);
}

char *strata_results_to_json_text(const strata_results *r)
{
    JsonNode *root = strata_results_to_json(r);
    char *text = strata_json_text(root);
    json_node_unref(root);
    return text;
}

bool strata_results_write_json(const strata_results *r, const char *path, GError **err)
{
    char *text = strata_results_to_json_text(r);
    bool ok = strata_write_file_atomic(path, text, strlen(text), err);
    g_free(text);
    return ok;
}
