/*
 * kineto_event.c: decoding of one profiler event (kineto_event.h).
 */
#include "import/kineto_event.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "import/json_member.h"

static const char *const dir_names[STRATA_KINETO_DIR__COUNT] = {"HtoD", "DtoH", "DtoD", "HtoH"};

const char *strata_kineto_dir_name(strata_kineto_dir d)
{
    return d < STRATA_KINETO_DIR__COUNT ? dir_names[d] : "?";
}

bool strata_kineto_event_gpu(const strata_kineto_event *ev)
{
    return ev->device_type == 1 || ev->device_type == 6;
}

/* A number member as a double; false when absent, not a number or not
 * finite. */
static bool get_f64(JsonObject *o, const char *key, double *out)
{
    return json_member_number(o, key, out) && isfinite(*out);
}

static bool missing(const char *path, uint64_t line, const char *what, const char *field,
                    GError **err)
{
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "%s:%" G_GUINT64_FORMAT ": %s event: expected %s", path, line, what, field);
    return false;
}

static strata_kineto_ev_kind kind_of(JsonObject *o)
{
    const char *name = json_member_string(o, "name");
    if (name && strcmp(name, "[memory]") == 0)
        return STRATA_KINETO_EV_MEMORY;
    const char *cat = json_member_string(o, "cat");
    if (cat == NULL)
        return STRATA_KINETO_EV_OTHER;
    if (g_ascii_strcasecmp(cat, "kernel") == 0)
        return STRATA_KINETO_EV_KERNEL;
    if (strcmp(cat, "gpu_memset") == 0 || strcmp(cat, "Memset") == 0)
        return STRATA_KINETO_EV_MEMSET;
    if (strcmp(cat, "gpu_memcpy") == 0 || strcmp(cat, "Memcpy") == 0)
        return STRATA_KINETO_EV_MEMCPY;
    if (strcmp(cat, "cuda_runtime") == 0 && name && g_str_has_prefix(name, "hipMemcpy"))
        return STRATA_KINETO_EV_RUNTIME_COPY;
    return STRATA_KINETO_EV_OTHER;
}

static strata_kineto_mem mem_word(const char *w, size_t n, strata_kineto_mem dflt)
{
    if (n == 6 && memcmp(w, "Device", 6) == 0)
        return STRATA_KINETO_MEM_DEVICE;
    if (n == 6 && memcmp(w, "Pinned", 6) == 0)
        return STRATA_KINETO_MEM_PINNED;
    if (n == 8 && memcmp(w, "Pageable", 8) == 0)
        return STRATA_KINETO_MEM_PAGEABLE;
    return dflt;
}

/* Direction and ends from "Memcpy HtoD (Pageable -> Device)"; without the
 * parenthesis a host end is taken as pinned. */
static bool memcpy_ends(const char *name, strata_kineto_event *ev)
{
    static const struct {
        const char *word;
        strata_kineto_dir dir;
    } dirs[] = {{"HtoD", STRATA_KINETO_HTOD}, {"DtoH", STRATA_KINETO_DTOH},
                {"DtoD", STRATA_KINETO_DTOD}, {"PtoP", STRATA_KINETO_DTOD},
                {"HtoH", STRATA_KINETO_HTOH}};
    const char *p = name ? strstr(name, "to") : NULL;
    if (p == NULL || p == name)
        return false;
    size_t i = 0;
    while (i < G_N_ELEMENTS(dirs) && strncmp(p - 1, dirs[i].word, 4) != 0)
        i++;
    if (i == G_N_ELEMENTS(dirs))
        return false;
    ev->dir = dirs[i].dir;
    bool src_dev = dirs[i].word[0] != 'H', dst_dev = dirs[i].word[3] != 'H';
    ev->src = src_dev ? STRATA_KINETO_MEM_DEVICE : STRATA_KINETO_MEM_PINNED;
    ev->dst = dst_dev ? STRATA_KINETO_MEM_DEVICE : STRATA_KINETO_MEM_PINNED;
    const char *open = strchr(p, '('), *arrow = open ? strstr(open, " -> ") : NULL;
    const char *close = arrow ? strchr(arrow, ')') : NULL;
    if (close) {
        ev->src = mem_word(open + 1, (size_t)(arrow - open - 1), ev->src);
        ev->dst = mem_word(arrow + 4, (size_t)(close - arrow - 4), ev->dst);
    }
    return true;
}

static bool decode_memory(JsonObject *args, const char *path, uint64_t line,
                          strata_kineto_event *ev, GError **err)
{
    int64_t v;
    if (!json_member_integer(args, "Device Type", &v))
        return missing(path, line, "[memory]", "args.\"Device Type\" (a number)", err);
    ev->device_type = (int)v;
    if (!strata_kineto_event_gpu(ev))
        return true;
    if (!json_member_integer(args, "Device Id", &v) || v < 0 || v > G_MAXINT)
        return missing(path, line, "[memory]", "args.\"Device Id\" (a device number)", err);
    ev->device = (int)v;
    /* Every size is a whole number of bytes below 2^63 (a literal of 2^63
     * or more reaches here as a float, see kineto_scan.c, and is refused):
     * a Bytes of -2^63 would be a free of 2^63 bytes. */
    if (!json_member_integer(args, "Bytes", &ev->bytes) || ev->bytes == INT64_MIN)
        return missing(path, line, "[memory]",
                       "args.Bytes (a whole number of bytes, of magnitude below 2^63)", err);
    ev->has_addr = json_object_has_member(args, "Addr");
    if (ev->has_addr && (!json_member_integer(args, "Addr", &v) || v < 0))
        return missing(path, line, "[memory]", "args.Addr (an address from 0 to 2^63 - 1)", err);
    ev->addr = ev->has_addr ? (uint64_t)v : 0;
    int64_t tr = 0, ta = 0;
    bool has_tr = json_object_has_member(args, "Total Reserved"),
         has_ta = json_object_has_member(args, "Total Allocated");
    if ((has_tr && !json_member_integer(args, "Total Reserved", &tr)) || (has_ta && !json_member_integer(args, "Total Allocated", &ta)))
        return missing(path, line, "[memory]",
                       "args.\"Total Reserved\" and \"Total Allocated\" (whole numbers of bytes below 2^63)",
                       err);
    ev->has_totals = has_tr && has_ta;
    if (ev->has_totals && (tr < 0 || ta < 0))
        return missing(path, line, "[memory]", "totals of 0 or more bytes", err);
    ev->total_reserved = ev->has_totals ? (uint64_t)tr : 0;
    ev->total_allocated = ev->has_totals ? (uint64_t)ta : 0;
    return true;
}

/* Kernels, memsets and memcpys: device, stream, dur, correlation. */
static bool decode_gpu(JsonObject *o, JsonObject *args, const char *path, uint64_t line,
                       strata_kineto_event *ev, GError **err)
{
    const char *what = ev->kind == STRATA_KINETO_EV_KERNEL   ? "kernel"
                       : ev->kind == STRATA_KINETO_EV_MEMSET ? "memset"
                                                             : "memcpy";
    int64_t v;
    if (!ev->has_ts)
        return missing(path, line, what, "ts (a number)", err);
    if (!get_f64(o, "dur", &ev->dur) || ev->dur < 0)
        return missing(path, line, what, "dur (microseconds, 0 or more)", err);
    /* The importer keeps whole ns (kineto.c, gpu_op), as Kineto writes a dur: "{}.{:03}" of ns / 1000 and
     * ns % 1000 (pytorch/kineto libkineto/src/output_json.cpp @002d9919, handleActivity). A dur of
     * 0.0001 us, which no Kineto writes, became time=0 silently. */
    if (ev->dur > 0 && round(ev->dur * 1000.0) == 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%" G_GUINT64_FORMAT ": %s event: expected a dur of 0, or at least 0.0005 us (the import "
                    "keeps whole nanoseconds, as Kineto writes them; this one would become time=0), got %g us",
                    path, line, what, ev->dur);
        return false;
    }
    if (!json_member_integer(args, "device", &v) || v < 0 || v > G_MAXINT)
        return missing(path, line, what, "args.device (a device number)", err);
    ev->device = (int)v;
    if (!json_member_integer(args, "stream", &ev->stream))
        return missing(path, line, what, "args.stream (a number)", err);
    if (!json_member_integer(args, "correlation", &ev->correlation))
        ev->correlation = -1;
    ev->name = json_member_string(o, "name");
    if (ev->kind != STRATA_KINETO_EV_MEMCPY)
        return true;
    if (!json_object_has_member(args, "bytes")) {
        /* ROCm: Kineto's HIP path writes a GPU copy's bytes only from a
         * table the runtime call's row fills as it is written
         * (libkineto/src/RocprofActivity_inl.h, GpuActivity::
         * visitTypedMetadata and RuntimeActivity<rocprofCopyRow>:
         * correlationToSize; RoctracerActivity_inl.h before it), so a GPU
         * copy can lack them; the runtime call of the same correlation has
         * them (args.size, later args.bytes). The importer finds them there. */
        if (ev->correlation < 0)
            return missing(path, line, what,
                           "args.bytes (0 or more, below 2^63), or args.correlation to take them from "
                           "the HIP runtime copy (ROCm)",
                           err);
        ev->bytes_on_runtime = true;
    } else if (!json_member_integer(args, "bytes", &ev->bytes) || ev->bytes < 0) {
        return missing(path, line, what, "args.bytes (0 or more, below 2^63)", err);
    }
    if (!memcpy_ends(ev->name, ev))
        return missing(path, line, what, "a name like \"Memcpy HtoD (Pageable -> Device)\"", err);
    return true;
}

/* A HIP runtime copy call (hipMemcpy, hipMemcpyAsync, hipMemcpyWithStream
 * ...): its correlation and the bytes it copies, args.size (ROCm 6.2's
 * roctracer Kineto: "size": "2560", a decimal string) or args.bytes (later:
 * a string, then a number). A call without either, or without a
 * correlation, is read past (OTHER); one of them malformed is an error. */
static bool decode_runtime_copy(JsonObject *args, const char *path, uint64_t line,
                                strata_kineto_event *ev, GError **err)
{
    const char *key = json_object_has_member(args, "bytes")  ? "bytes"
                      : json_object_has_member(args, "size") ? "size"
                                                             : NULL;
    if (key == NULL || !json_member_integer(args, "correlation", &ev->correlation) || ev->correlation < 0) {
        ev->kind = STRATA_KINETO_EV_OTHER;
        return true;
    }
    ev->device = -1;
    const char *text = json_member_string(args, key);
    guint64 v = 0;
    bool ok = text ? g_ascii_string_to_unsigned(text, 10, 0, (guint64)INT64_MAX, &v, NULL)
                   : json_member_integer(args, key, &ev->bytes) && ev->bytes >= 0;
    if (!ok) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                    "%s:%" G_GUINT64_FORMAT ": HIP runtime copy event: expected args.%s (0 or more bytes "
                    "below 2^63, a number or a decimal string)",
                    path, line, key);
        return false;
    }
    if (text)
        ev->bytes = (int64_t)v;
    return true;
}

bool strata_kineto_event_decode(JsonObject *o, const char *path, uint64_t line,
                                strata_kineto_event *ev, GError **err)
{
    memset(ev, 0, sizeof *ev);
    ev->kind = kind_of(o);
    ev->has_ts = get_f64(o, "ts", &ev->ts);
    if (ev->kind == STRATA_KINETO_EV_OTHER)
        return true;
    JsonNode *an = json_object_get_member(o, "args");
    JsonObject *args = an && JSON_NODE_HOLDS_OBJECT(an) ? json_node_get_object(an) : NULL;
    if (ev->kind == STRATA_KINETO_EV_RUNTIME_COPY) {
        if (args == NULL) {
            ev->kind = STRATA_KINETO_EV_OTHER;
            return true;
        }
        return decode_runtime_copy(args, path, line, ev, err);
    }
    if (args == NULL)
        return missing(path, line, ev->kind == STRATA_KINETO_EV_MEMORY ? "[memory]" : "GPU",
                       "an args object", err);
    if (ev->kind == STRATA_KINETO_EV_MEMORY)
        return decode_memory(args, path, line, ev, err);
    return decode_gpu(o, args, path, line, ev, err);
}
