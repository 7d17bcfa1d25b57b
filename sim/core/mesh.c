/*
 * mesh.c: parsing a device mesh and the coordinate arithmetic of groups
 * (contract in mesh.h).
 *
 * Invariants: stride[a] is the product of the sizes of the axes after a, so
 * device = sum of coord[a] * stride[a]; text is the canonical form.
 */
#include "core/mesh.h"
#include <assert.h>
#include <string.h>
#include "core/error.h"

struct strata_mesh {
    uint32_t n_axes;
    char *names[STRATA_MESH_MAX_AXES];
    uint32_t sizes[STRATA_MESH_MAX_AXES];
    uint32_t stride[STRATA_MESH_MAX_AXES];
    uint32_t devices;
    char *text;
};

static bool axis_name_ok(const char *s, size_t len)
{
    if (len == 0 || s[0] < 'a' || s[0] > 'z')
        return false;
    for (size_t i = 1; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return false;
    return true;
}

static bool mesh_fail(strata_mesh *m, const char *text, GError **err, const char *what)
{
    g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                "expected a mesh such as data:4,model:2 (axis names [a-z][a-z0-9_]*, sizes >= 1, at most %d "
                "axes, distinct names, at most %u devices), got '%s': %s",
                STRATA_MESH_MAX_AXES, STRATA_MESH_MAX_DEVICES, text, what);
    strata_mesh_free(m);
    return false;
}

static bool parse_axis(strata_mesh *m, const char *text, const char *item, GError **err)
{
    const char *colon = strchr(item, ':');
    if (!colon || !axis_name_ok(item, (size_t)(colon - item)))
        return mesh_fail(NULL, text, err, "an axis is not NAME:SIZE");
    uint64_t size = 0;
    const char *p = colon + 1;
    if (*p == '\0')
        return mesh_fail(NULL, text, err, "an axis has no size");
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return mesh_fail(NULL, text, err, "a size is not a number");
        if (size <= UINT32_MAX) /* past it: "too large" below (99999999999 said "not a number") */
            size = size * 10 + (uint64_t)(*p - '0');
    }
    if (size == 0 || size > UINT32_MAX)
        return mesh_fail(NULL, text, err, "a size is 0 or too large");
    if (m->n_axes == STRATA_MESH_MAX_AXES)
        return mesh_fail(NULL, text, err, "too many axes");
    char *name = g_strndup(item, (gsize)(colon - item));
    for (uint32_t a = 0; a < m->n_axes; a++) {
        if (strcmp(m->names[a], name) == 0) {
            g_free(name);
            return mesh_fail(NULL, text, err, "an axis is named twice");
        }
    }
    if ((uint64_t)m->devices * size > STRATA_MESH_MAX_DEVICES) {
        g_free(name);
        char *what = g_strdup_printf("too many devices: %" G_GUINT64_FORMAT " or more, past the %u a hardware model "
                                     "holds", (guint64)m->devices * size, STRATA_MESH_MAX_DEVICES);
        bool r = mesh_fail(NULL, text, err, what);
        g_free(what);
        return r;
    }
    m->names[m->n_axes] = name;
    m->sizes[m->n_axes++] = (uint32_t)size;
    m->devices *= (uint32_t)size;
    return true;
}

#ifndef NDEBUG
/* mesh.h's invariants and the strides (O(axes^2), at most 8 axes): once a
 * mesh is parsed. */
static bool mesh_ok(const strata_mesh *m)
{
    if (m->n_axes < 1 || m->n_axes > STRATA_MESH_MAX_AXES)
        return false;
    uint64_t devices = 1, stride = 1;
    for (uint32_t a = m->n_axes; a-- > 0;) {
        if (m->sizes[a] < 1 || !axis_name_ok(m->names[a], strlen(m->names[a])) || m->stride[a] != stride)
            return false;
        for (uint32_t b = a + 1; b < m->n_axes; b++)
            if (strcmp(m->names[a], m->names[b]) == 0)
                return false;
        stride *= m->sizes[a];
        devices *= m->sizes[a];
    }
    return devices <= UINT32_MAX && devices == m->devices;
}
#endif

strata_mesh *strata_mesh_parse(const char *text, GError **err)
{
    strata_mesh *m = g_new0(strata_mesh, 1);
    m->devices = 1;
    char **items = g_strsplit(text, ",", -1);
    bool ok = items[0] != NULL;
    if (!ok)
        mesh_fail(NULL, text, err, "it is empty");
    for (char **it = items; ok && *it; it++)
        ok = parse_axis(m, text, *it, err);
    g_strfreev(items);
    if (!ok) {
        strata_mesh_free(m);
        return NULL;
    }
    GString *canon = g_string_new(NULL);
    uint32_t stride = 1;
    for (uint32_t a = m->n_axes; a-- > 0;) {
        m->stride[a] = stride;
        stride *= m->sizes[a];
    }
    for (uint32_t a = 0; a < m->n_axes; a++)
        g_string_append_printf(canon, "%s%s:%u", a ? "," : "", m->names[a], m->sizes[a]);
    m->text = g_string_free(canon, FALSE);
    assert(mesh_ok(m)); /* mesh.h: axes, names, sizes, devices; mesh.c: strides */
    return m;
}

void strata_mesh_free(strata_mesh *m)
{
    if (m == NULL)
        return;
    for (uint32_t a = 0; a < m->n_axes; a++)
        g_free(m->names[a]);
    g_free(m->text);
    g_free(m);
}

const char *strata_mesh_text(const strata_mesh *m) { return m->text; }
uint32_t strata_mesh_devices(const strata_mesh *m) { return m->devices; }
uint32_t strata_mesh_axis_count(const strata_mesh *m) { return m->n_axes; }

const char *strata_mesh_axis_name(const strata_mesh *m, uint32_t axis)
{
    assert(axis < m->n_axes);
    return m->names[axis];
}

bool strata_mesh_axes(const strata_mesh *m, const char *axes, uint32_t *mask, GError **err)
{
    *mask = 0;
    const char *p = axes;
    for (;;) {
        size_t len = strcspn(p, ",");
        uint32_t a = 0;
        while (a < m->n_axes && !(strlen(m->names[a]) == len && memcmp(m->names[a], p, len) == 0))
            a++;
        if (a == m->n_axes || (*mask & (1u << a))) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT,
                        "expected axis= to name distinct axes of the mesh %s, got '%s'", m->text, axes);
            return false;
        }
        *mask |= 1u << a;
        if (p[len] == '\0')
            return true;
        p += len + 1;
    }
}

uint32_t strata_mesh_group_size(const strata_mesh *m, uint32_t mask)
{
    uint32_t n = 1;
    for (uint32_t a = 0; a < m->n_axes; a++)
        if (mask & (1u << a))
            n *= m->sizes[a];
    return n;
}

uint32_t strata_mesh_coord(const strata_mesh *m, uint32_t device, uint32_t axis)
{
    assert(axis < m->n_axes && device < m->devices); /* a device and an axis of this mesh */
    return device / m->stride[axis] % m->sizes[axis];
}

uint32_t strata_mesh_rank(const strata_mesh *m, uint32_t mask, uint32_t device)
{
    uint32_t rank = 0;
    for (uint32_t a = 0; a < m->n_axes; a++)
        if (mask & (1u << a))
            rank = rank * m->sizes[a] + strata_mesh_coord(m, device, a);
    return rank;
}

uint32_t strata_mesh_member(const strata_mesh *m, uint32_t mask, uint32_t device, uint32_t rank)
{
    uint32_t out = device;
    for (uint32_t a = m->n_axes; a-- > 0;) {
        if (!(mask & (1u << a)))
            continue;
        uint32_t c = rank % m->sizes[a];
        rank /= m->sizes[a];
        out = out - strata_mesh_coord(m, device, a) * m->stride[a] + c * m->stride[a];
    }
    return out;
}

uint32_t strata_mesh_shifted(const strata_mesh *m, uint32_t mask, uint32_t device, int32_t shift)
{
    int64_t n = strata_mesh_group_size(m, mask);
    int64_t r = ((int64_t)strata_mesh_rank(m, mask, device) + shift) % n;
    return strata_mesh_member(m, mask, device, (uint32_t)(r < 0 ? r + n : r));
}
