/*
 * spmd_device.c: one device's program of an SPMD trace (contract in
 * spmd_device.h).
 *
 * Design: a first pass reads the whole trace, sizing the mesh and keeping,
 * per buffer, its bytes and the device it was allocated on (ALL for an
 * alloc without device=); the live bytes are one counter shared by every
 * device plus one per device, so a trace without device= costs one counter
 * per op. The pass then rewinds the inner source; next() filters and
 * rewrites one op at a time into `cur`.
 */
#include "spmd/spmd_device.h"
#include <string.h>
#include "core/error.h"
#include "core/mesh.h"

#define ALL_DEVICES UINT32_MAX

typedef struct spmd_device {
    strata_source *src;
    strata_mesh *mesh; /* the trace's, once its option mesh= is read (for collectives with device=) */
    uint32_t devices, device;
    uint64_t *peaks;
    strata_op cur;
    const char *ins[1], *outs[1];
} spmd_device;

typedef struct live_buffer {
    uint64_t bytes;
    uint32_t device;
} live_buffer;

/* The first pass's state. */
typedef struct scan {
    GHashTable *buffers;      /* name (owned) -> live_buffer (owned) */
    uint32_t devices;         /* the mesh's, 0 until an option mesh= */
    uint32_t max_device;      /* one past the highest device=, 0 when none */
    uint64_t common, common_peak;
    GArray *own;              /* uint64_t per device: its device= bytes live */
    GArray *peaks;            /* uint64_t per device, from its first device= on (common_peak covers before) */
} scan;

static void grow(GArray *a, uint32_t n)
{
    if (a->len < n)
        g_array_set_size(a, n);
}

/* Live bytes changed on `device` (ALL_DEVICES: every one): the peaks follow. */
static void account(scan *s, uint32_t device)
{
    if (s->common > s->common_peak)
        s->common_peak = s->common;
    for (guint d = 0; d < s->own->len; d++) {
        if (device != ALL_DEVICES && device != d)
            continue;
        uint64_t live = s->common + g_array_index(s->own, uint64_t, d);
        if (live > g_array_index(s->peaks, uint64_t, d))
            g_array_index(s->peaks, uint64_t, d) = live;
    }
}

static bool scan_op(scan *s, const strata_op *op, const char *origin, GError **err)
{
    if (op->kind == STRATA_OP_OPTION && strcmp(op->name, "mesh") == 0) {
        strata_mesh *m = strata_mesh_parse(op->value, err);
        if (m == NULL) {
            g_prefix_error(err, "%s:%" G_GUINT64_FORMAT ": ", origin, op->line);
            return false;
        }
        s->devices = strata_mesh_devices(m);
        strata_mesh_free(m);
        return true;
    }
    uint32_t device = op->kind != STRATA_OP_OPTION && op->has_device ? op->device : ALL_DEVICES;
    if (device != ALL_DEVICES && device >= s->max_device) {
        s->max_device = device + 1;
        grow(s->own, s->max_device);
        grow(s->peaks, s->max_device);
    }
    if (op->kind == STRATA_OP_ALLOC) {
        live_buffer *b = g_new(live_buffer, 1);
        *b = (live_buffer){op->size, device};
        /* an alloc with device=D is D's own buffer (traces/FORMAT.md): keyed NAME@D */
        g_hash_table_replace(s->buffers,
                             device == ALL_DEVICES ? g_strdup(op->name) : g_strdup_printf("%s@%u", op->name, device),
                             b);
        if (device == ALL_DEVICES)
            s->common += op->size;
        else
            g_array_index(s->own, uint64_t, device) += op->size;
        account(s, device);
    } else if (op->kind == STRATA_OP_FREE) {
        char *own = device == ALL_DEVICES ? NULL : g_strdup_printf("%s@%u", op->name, device);
        const char *key = own && g_hash_table_contains(s->buffers, own) ? own : op->name;
        live_buffer *b = g_hash_table_lookup(s->buffers, key);
        if (b == NULL) {
            g_free(own);
            return true; /* the checker downstream names it */
        }
        if (b->device == ALL_DEVICES)
            s->common -= b->bytes;
        else
            g_array_index(s->own, uint64_t, b->device) -= b->bytes;
        g_hash_table_remove(s->buffers, key);
        g_free(own);
    }
    return true;
}

/* Reads src to its end: the devices and each one's peak; rewinds it. A
 * trace that fails to read (or names a bad mesh) is taken as no SPMD
 * trace: the pipeline downstream reads it again and reports its first
 * error in its own order. */
static bool scan_trace(spmd_device *d, GError **err)
{
    scan s = {.buffers = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
              .own = g_array_new(FALSE, TRUE, sizeof(uint64_t)), .peaks = g_array_new(FALSE, TRUE, sizeof(uint64_t))};
    const strata_op *op;
    int r;
    GError *local = NULL;
    while ((r = strata_source_next(d->src, &op, &local)) == 1)
        if (!scan_op(&s, op, strata_source_origin(d->src), &local)) {
            r = -1;
            break;
        }
    g_clear_error(&local);
    d->devices = r == 0 ? MAX(s.devices, s.max_device) : 0;
    if (d->devices > 0) {
        d->peaks = g_new0(uint64_t, d->devices);
        for (uint32_t i = 0; i < d->devices; i++)
            d->peaks[i] = MAX(i < s.peaks->len ? g_array_index(s.peaks, uint64_t, i) : 0, s.common_peak);
    }
    g_hash_table_destroy(s.buffers);
    g_array_free(s.own, TRUE);
    g_array_free(s.peaks, TRUE);
    return strata_source_rewind(d->src, err);
}

/* A collective as a compute of the same name: in=IN out=OUT; a
 * collective-permute with device= (a send) reads IN on the sender and
 * writes OUT on the receiver. */
static void as_compute(spmd_device *d, const strata_op *in, bool reads, bool writes)
{
    d->ins[0] = in->kind == STRATA_OP_ALL_REDUCE ? in->name : in->src;
    d->outs[0] = in->name;
    d->cur.kind = STRATA_OP_COMPUTE;
    d->cur.src = NULL;
    d->cur.axis = NULL;
    d->cur.algo = NULL;
    d->cur.shift = 0;
    d->cur.ins = d->ins;
    d->cur.n_ins = reads;
    d->cur.outs = d->outs;
    d->cur.n_outs = writes;
}

/* Whether device d takes part in collective op with device= (its group
 * along the axes; a permute: its sender or receiver), and in *reads,
 * *writes whether d reads IN and writes OUT. */
static bool in_collective(const spmd_device *d, const strata_op *op, bool *reads, bool *writes)
{
    uint32_t mask = 0;
    *reads = *writes = true;
    if (!op->has_device)
        return true;
    if (!d->mesh || !strata_mesh_axes(d->mesh, op->axis ? op->axis : "", &mask, NULL))
        return op->device == d->device; /* the checker downstream names what is wrong */
    if (op->kind == STRATA_OP_COLLECTIVE_PERMUTE) {
        *reads = op->device == d->device;
        *writes = strata_mesh_shifted(d->mesh, mask, op->device, op->shift) == d->device;
        return *reads || *writes;
    }
    return strata_mesh_member(d->mesh, mask, op->device, 0) == strata_mesh_member(d->mesh, mask, d->device, 0);
}

static int device_next(void *self, const strata_op **op, GError **err)
{
    spmd_device *d = self;
    for (;;) {
        const strata_op *in;
        int r = strata_source_next(d->src, &in, err);
        if (r <= 0)
            return r;
        if (d->devices == 0) {
            *op = in;
            return 1;
        }
        bool reads = true, writes = true;
        if (in->kind == STRATA_OP_OPTION && strcmp(in->name, "mesh") == 0 && !d->mesh)
            d->mesh = strata_mesh_parse(in->value, NULL);
        if (strata_op_kind_is_collective(in->kind) ? !in_collective(d, in, &reads, &writes)
                                                   : in->kind != STRATA_OP_OPTION && in->has_device &&
                                                         in->device != d->device)
            continue;
        d->cur = *in;
        if (in->kind != STRATA_OP_OPTION) {
            d->cur.has_device = false;
            d->cur.device = 0;
        }
        if (strata_op_kind_is_collective(in->kind))
            as_compute(d, in, reads, writes);
        *op = &d->cur;
        return 1;
    }
}

static bool device_rewind(void *self, GError **err)
{
    spmd_device *d = self;
    strata_mesh_free(d->mesh);
    d->mesh = NULL;
    return strata_source_rewind(d->src, err);
}

static void device_destroy(void *self)
{
    spmd_device *d = self;
    strata_mesh_free(d->mesh);
    g_free(d->peaks);
    g_free(d);
}

static const strata_source_vtable device_vt = {device_next, device_rewind, device_destroy};

strata_source *strata_spmd_device(strata_source *src, uint32_t device, strata_spmd_device_info *info,
                                  GError **err)
{
    spmd_device *d = g_new0(spmd_device, 1);
    d->src = src;
    if (!scan_trace(d, err)) {
        device_destroy(d);
        return NULL;
    }
    if (device == STRATA_SPMD_BUSIEST) {
        device = 0;
        for (uint32_t i = 1; i < d->devices; i++)
            if (d->peaks[i] > d->peaks[device])
                device = i;
    } else if (device >= MAX(d->devices, 1)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: expected --device below the trace's %u device%s, got %u",
                    strata_source_origin(src), MAX(d->devices, 1), d->devices > 1 ? "s" : "", device);
        device_destroy(d);
        return NULL;
    }
    d->device = device;
    *info = (strata_spmd_device_info){d->devices, device, d->peaks};
    return strata_source_new(&device_vt, d, strata_source_origin(src));
}
