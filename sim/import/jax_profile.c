/*
 * jax_profile.c: jax.profiler traces into computes (contract in
 * jax_profile.h).
 *
 * Design: one streamed pass (kineto_scan) hands process and thread names
 * and X events to import/jax_ops.h, which keeps the candidate XLA ops and
 * writes one device's. An XSpace (XProf's protobuf) is read by
 * import/jax_xplane.h instead.
 */
#include "import/jax_profile.h"
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "import/jax_xplane.h"
#include "import/json_member.h"
#include "import/kineto_scan.h"

#define JAX_SNIFF_EVENTS 10000

/* An id member (pid, tid) as a whole number into *out, 0 when missing; false
 * when present but not a whole number that a 64-bit integer holds. The
 * Trace Event Format's ids are integers, and TSL's trace_events_to_json
 * writes them so: a fraction, a string or a boolean is a bad value, refused
 * at its line, not truncated or read as 0 (an id of 7e21 was cast to
 * int64_t: undefined behaviour, found by fuzz_jax_profile). */
static bool member_id(JsonObject *o, const char *key, int64_t *out)
{
    *out = 0;
    return !json_object_has_member(o, key) || json_member_integer(o, key, out);
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

/* The devices an ordinal names: 0 to 2^20 - 1, as the XPlane reader takes
 * them (jax_xplane.c, stat_device). */
#define JAX_MAX_DEVICE (1 << 20)

/* The event's args' device_ordinal into *device (-1 when it has none):
 * false when it has one that is not a whole number below 2^20, as a
 * number or as decimal digits (TSL writes args as strings). "3abc" was 3,
 * "99999999999999999999" device 2^20, -1, 1.5 and 2^64 the process's. */
static bool event_device(JsonObject *args, int64_t *device)
{
    *device = -1;
    if (!args || !json_object_has_member(args, "device_ordinal"))
        return true;
    const char *text = json_member_string(args, "device_ordinal");
    guint64 n = 0;
    int64_t i = 0;
    if (text && g_ascii_string_to_unsigned(text, 10, 0, JAX_MAX_DEVICE - 1, &n, NULL) && g_ascii_isdigit(text[0]))
        *device = (int64_t)n;
    else if (!text && json_member_integer(args, "device_ordinal", &i) && i >= 0 && i < JAX_MAX_DEVICE)
        *device = i;
    return *device >= 0;
}

static bool feed(strata_jax_ops *r, const char *path, JsonObject *ev, uint64_t line, GError **err)
{
    const char *ph = json_member_string(ev, "ph");
    if (ph == NULL)
        return true;
    int64_t pid = 0, tid = 0;
    const char *bad_id = !member_id(ev, "pid", &pid) ? "pid" : !member_id(ev, "tid", &tid) ? "tid" : NULL;
    if (bad_id) {
        JsonNode *v = json_object_get_member(ev, bad_id);
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%" G_GUINT64_FORMAT ": expected %s a whole number within 64 bits, got %s%s", path, line,
                    bad_id, json_kind(v), v && json_node_get_value_type(v) == G_TYPE_DOUBLE ? " with a fraction or out of range" : "");
        return false;
    }
    JsonObject *args = json_member_object(ev, "args");
    if (strcmp(ph, "M") == 0) {
        const char *what = json_member_string(ev, "name"), *name = json_member_string(args, "name");
        if (what && name && strcmp(what, "process_name") == 0)
            strata_jax_ops_process(r, pid, name);
        else if (what && name && strcmp(what, "thread_name") == 0)
            strata_jax_ops_thread(r, pid, tid, name);
        return true;
    }
    if (strcmp(ph, "X") != 0)
        return true;
    strata_jax_event e = {.pid = pid, .tid = tid, .device = -1, .name = json_member_string(ev, "name"),
                          .hlo_op = json_member_string(args, "hlo_op")};
    if (e.name == NULL)
        return true; /* not an op TSL writes: nothing to time */
    /* a complete event ("X") always has its numbers: one without them is
     * refused, never dropped (a string, a boolean, nothing) */
    static const char *const times[] = {"ts", "dur"};
    double *slots[] = {&e.ts_us, &e.dur_us};
    for (size_t k = 0; k < G_N_ELEMENTS(times); k++)
        if (!json_member_number(ev, times[k], slots[k])) {
            JsonNode *v = json_object_has_member(ev, times[k]) ? json_object_get_member(ev, times[k]) : NULL;
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "%s:%" G_GUINT64_FORMAT ": event '%s' (ph X): expected a number of microseconds for %s, got %s",
                        path, line, e.name, times[k], json_kind(v));
            return false;
        }
    if (!(e.ts_us >= 0 && e.ts_us < 1e15 && e.dur_us >= 0 && e.dur_us < 1e12)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%" G_GUINT64_FORMAT ": expected ts in [0, 1e15) us and dur in [0, 1e12) us, got %g and %g",
                    path, line, e.ts_us, e.dur_us);
        return false;
    }
    if (!event_device(args, &e.device)) {
        JsonNode *v = json_object_get_member(args, "device_ordinal");
        GType t = JSON_NODE_HOLDS_VALUE(v) ? json_node_get_value_type(v) : G_TYPE_INVALID;
        char *got = t == G_TYPE_STRING ? g_strdup_printf("'%.64s'", json_node_get_string(v))
                    : t == G_TYPE_INT64 ? g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(v))
                    : t == G_TYPE_DOUBLE ? g_strdup_printf("%g", json_node_get_double(v))
                                         : g_strdup(json_kind(v));
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s:%" G_GUINT64_FORMAT ": event '%s': device_ordinal: "
                    "expected a whole number from 0 to %d, got %s", path, line, e.name, JAX_MAX_DEVICE - 1, got);
        g_free(got);
        return false;
    }
    strata_jax_ops_event(r, &e);
    return true;
}

strata_source *strata_jax_profile_import(const char *path, int device, strata_jax_profile_summary *s, GError **err)
{
    if (strata_jax_xplane_is(path))
        return strata_jax_xplane_import(path, device, s, err);
    memset(s, 0, sizeof *s);
    s->device = -1;
    strata_kineto_scan *scan = strata_kineto_scan_open(path, err);
    if (scan == NULL)
        return NULL;
    strata_jax_ops *r = strata_jax_ops_new();
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
    strata_source *src = got == 0 ? strata_jax_ops_finish(r, path, device, s, err) : NULL;
    strata_jax_ops_free(r);
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
    if (strata_jax_xplane_is(path))
        return true;
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
               (ph && strcmp(ph, "M") == 0 && name && (strcmp(name, "XLA Ops") == 0 || strata_jax_device_of_process(name) >= 0));
    }
    strata_kineto_scan_free(scan);
    return jax && !kineto;
}
