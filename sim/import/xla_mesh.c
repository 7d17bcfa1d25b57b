/*
 * xla_mesh.c: replica groups to mesh axes (contract in xla_mesh.h).
 *
 * Design: each group set becomes its strided runs (stride, size); the mesh
 * is the cut of [1, N) at every run's ends. Device lists are bounded by
 * XLA_MESH_MAX_DEVICES before anything is allocated for them.
 */
#include "import/xla_mesh.h"
#include <stdlib.h>
#include <string.h>
#include "import/xla_text.h"

typedef struct mesh_run {
    uint64_t stride, size;
} mesh_run;

struct xla_mesh {
    uint64_t n;          /* devices; 0 while unknown */
    GPtrArray *sets;     /* GArray of mesh_run per group set */
    GArray *bounds;      /* uint64_t, ascending, after build */
    bool built;
};

static void runs_free(gpointer p)
{
    g_array_free(p, TRUE);
}

xla_mesh *xla_mesh_new(uint64_t n_devices)
{
    xla_mesh *m = g_new0(xla_mesh, 1);
    m->n = n_devices <= XLA_MESH_MAX_DEVICES ? n_devices : 0;
    m->sets = g_ptr_array_new_with_free_func(runs_free);
    m->bounds = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    return m;
}

void xla_mesh_free(xla_mesh *m)
{
    if (m == NULL)
        return;
    g_ptr_array_free(m->sets, TRUE);
    g_array_free(m->bounds, TRUE);
    g_free(m);
}

static int add_runs(xla_mesh *m, GArray *runs)
{
    g_ptr_array_add(m->sets, runs);
    return (int)m->sets->len - 1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* A list `{a,b,...}` of at most `max` unsigned integers at *p. */
static bool parse_list(const char **p, char open, char close, GArray *out, uint64_t max)
{
    const char *s = *p;
    if (*s != open)
        return false;
    s++;
    while (*s != close) {
        uint64_t v;
        if (!xla_parse_u64(&s, &v) || out->len >= max)
            return false;
        g_array_append_val(out, v);
        if (*s == ',')
            s++;
        else if (*s != close)
            return false;
    }
    *p = s + 1;
    return true;
}

/* Groups (flat ids, `size` per group) to runs; NULL when not mesh-like. */
static GArray *decompose(xla_mesh *m, GArray *ids, uint64_t size)
{
    uint64_t n = ids->len;
    if (size == 0 || n == 0 || n % size != 0 || (m->n && n != m->n))
        return NULL;
    uint64_t *v = (uint64_t *)(void *)ids->data;
    guint8 *seen = g_new0(guint8, n);
    bool ok = true;
    for (uint64_t i = 0; ok && i < n; i++) {
        ok = v[i] < n && !seen[v[i]];
        if (ok)
            seen[v[i]] = 1;
    }
    GArray *runs = g_array_new(FALSE, FALSE, sizeof(mesh_run));
    if (ok) {
        for (uint64_t g = 0; g < n; g += size)
            qsort(v + g, size, sizeof *v, cmp_u64);
        /* offsets of group 0 as a membership map over [0, n) */
        memset(seen, 0, n);
        for (uint64_t k = 0; k < size; k++)
            seen[v[k] - v[0]] = 1;
        GArray *cur = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        uint64_t zero = 0, top = 0;
        g_array_append_val(cur, zero);
        for (uint64_t k = 0; ok && k < size && cur->len < size; k++) {
            uint64_t s = v[k] - v[0];
            if (s <= top)
                continue; /* generated already */
            uint64_t mult = 1;
            for (bool all = true; all; mult += all) {
                for (guint i = 0; all && i < cur->len; i++) {
                    uint64_t x = g_array_index(cur, uint64_t, i) + mult * s;
                    all = x < n && seen[x];
                }
            }
            guint len = cur->len;
            for (uint64_t c = 1; c < mult; c++)
                for (guint i = 0; i < len; i++) {
                    uint64_t x = g_array_index(cur, uint64_t, i) + c * s;
                    g_array_append_val(cur, x);
                }
            top = (mult - 1) * s + top;
            mesh_run r = {s, mult};
            ok = mult > 1;
            g_array_append_val(runs, r);
        }
        ok = ok && cur->len == size;
        g_array_free(cur, TRUE);
        for (uint64_t g = size; ok && g < n; g += size)
            for (uint64_t k = 0; ok && k < size; k++)
                ok = v[g + k] - v[g] == v[k] - v[0];
    }
    g_free(seen);
    if (!ok) {
        g_array_free(runs, TRUE);
        return NULL;
    }
    if (m->n == 0)
        m->n = n;
    return runs;
}

/* {{0,1},{2,3}} or {} */
static int add_explicit(xla_mesh *m, const char *s)
{
    GArray *runs = NULL;
    if (s[1] == '}') {
        if (m->n == 0)
            return -1;
        runs = g_array_new(FALSE, FALSE, sizeof(mesh_run));
        if (m->n > 1) {
            mesh_run r = {1, m->n};
            g_array_append_val(runs, r);
        }
        return add_runs(m, runs);
    }
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    uint64_t size = 0, groups = 0;
    const char *p = s + 1;
    bool ok = true;
    while (ok && *p == '{') {
        guint before = ids->len;
        ok = parse_list(&p, '{', '}', ids, XLA_MESH_MAX_DEVICES);
        uint64_t k = ids->len - before;
        ok = ok && k > 0 && (size == 0 || k == size);
        size = k;
        groups++;
        if (ok && *p == ',')
            p++;
    }
    ok = ok && *p == '}' && groups > 0;
    if (ok)
        runs = decompose(m, ids, size);
    g_array_free(ids, TRUE);
    return runs ? add_runs(m, runs) : -1;
}

/* perm (at most 8) is a permutation of 0 .. dims - 1. */
static bool perm_ok(const GArray *perm, guint dims)
{
    guint8 used[8] = {0};
    for (guint i = 0; i < perm->len; i++) {
        uint64_t q = g_array_index(perm, uint64_t, i);
        if (q >= dims || q >= 8 || used[q])
            return false;
        used[q] = 1;
    }
    return true;
}

/* The cycles of a permutation of [0, n) (target[d]), each sorted, in
 * order of their least device, as flat ids; its shift, the same rank
 * step (target's rank - source's, mod the cycle's size, as a signed
 * step of least magnitude) in every cycle; NULL when cycles differ in
 * size, are single devices, or the step differs. */
static GArray *cycles(const uint64_t *target, uint64_t n, uint64_t *size, int32_t *shift)
{
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    guint8 *seen = g_new0(guint8, n);
    bool ok = true;
    *size = 0;
    for (uint64_t d = 0; ok && d < n; d++) {
        if (seen[d])
            continue;
        guint first = ids->len;
        for (uint64_t x = d; !seen[x]; x = target[x]) {
            seen[x] = 1;
            g_array_append_val(ids, x);
        }
        uint64_t k = ids->len - first;
        ok = k > 1 && (*size == 0 || k == *size);
        *size = k;
        if (ok)
            qsort(&g_array_index(ids, uint64_t, first), k, sizeof(uint64_t), cmp_u64);
    }
    int64_t step = -1;
    for (uint64_t g = 0; ok && g < ids->len; g += *size) {
        const uint64_t *v = &g_array_index(ids, uint64_t, g);
        for (uint64_t r = 0; ok && r < *size; r++) {
            uint64_t t = 0;
            while (t < *size && v[t] != target[v[r]])
                t++;
            int64_t st = (int64_t)((t + *size - r) % *size);
            ok = step < 0 || st == step;
            step = st;
        }
    }
    g_free(seen);
    if (!ok || step <= 0) {
        g_array_free(ids, TRUE);
        return NULL;
    }
    *shift = (int32_t)(step > (int64_t)*size / 2 ? step - (int64_t)*size : step);
    return ids;
}

int xla_mesh_add_pairs(xla_mesh *m, const char *pairs, int32_t *shift)
{
    m->built = false;
    uint64_t n = m->n;
    if (n < 2 || pairs[0] != '{')
        return -1;
    uint64_t *target = g_new(uint64_t, n);
    guint8 *hit = g_new0(guint8, n);
    for (uint64_t d = 0; d < n; d++)
        target[d] = n;
    GArray *pair = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    const char *p = pairs + 1;
    bool ok = true;
    uint64_t count = 0;
    while (ok && *p == '{') {
        g_array_set_size(pair, 0);
        ok = parse_list(&p, '{', '}', pair, 2) && pair->len == 2;
        uint64_t a = ok ? g_array_index(pair, uint64_t, 0) : 0, b = ok ? g_array_index(pair, uint64_t, 1) : 0;
        ok = ok && a < n && b < n && target[a] == n && !hit[b];
        if (ok) {
            target[a] = b;
            hit[b] = 1;
            count++;
        }
        if (ok && *p == ',')
            p++;
    }
    ok = ok && *p == '}' && count == n; /* a permutation of every device */
    uint64_t size = 0;
    GArray *ids = ok ? cycles(target, n, &size, shift) : NULL;
    GArray *runs = ids ? decompose(m, ids, size) : NULL;
    if (ids)
        g_array_free(ids, TRUE);
    g_array_free(pair, TRUE);
    g_free(target);
    g_free(hit);
    return runs ? add_runs(m, runs) : -1;
}

/* XLA's iota list at *p, `[d0,d1,...]` optionally `T(p0,p1,...)`: 0..n-1
 * laid out as d0 x d1 x ..., transposed by the permutation, read
 * row-major (IotaTileAssignment; TileAssignment::MaybeMaterializeFullArray).
 * NULL when malformed or over XLA_MESH_MAX_DEVICES; *p moves past it. */
static GArray *iota_ids(const char **p)
{
    GArray *dims = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    GArray *perm = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    GArray *ids = NULL;
    bool ok = parse_list(p, '[', ']', dims, 8) && dims->len > 0;
    if (ok && xla_skip(*p, "T", p))
        ok = parse_list(p, '(', ')', perm, 8) && perm->len == dims->len;
    uint64_t n = 1;
    for (guint i = 0; ok && i < dims->len; i++) {
        uint64_t d = g_array_index(dims, uint64_t, i);
        ok = d > 0 && d <= XLA_MESH_MAX_DEVICES / n;
        if (ok)
            n *= d;
    }
    if (ok && perm->len == 0)
        for (uint64_t i = 0; i < dims->len; i++)
            g_array_append_val(perm, i);
    ok = ok && perm_ok(perm, dims->len);
    if (ok) {
        /* element i of the transposed array, row-major, is the original's
         * element at coordinates c[perm[k]] = t[k] */
        ids = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), (guint)n);
        guint r = dims->len;
        uint64_t stride[8];
        stride[r - 1] = 1;
        for (guint k = r - 1; k > 0; k--)
            stride[k - 1] = stride[k] * g_array_index(dims, uint64_t, k);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t rest = i, id = 0;
            for (guint k = r; k-- > 0;) {
                uint64_t q = g_array_index(perm, uint64_t, k);
                uint64_t d = g_array_index(dims, uint64_t, q);
                id += (rest % d) * stride[q];
                rest /= d;
            }
            g_array_append_val(ids, id);
        }
    }
    g_array_free(dims, TRUE);
    g_array_free(perm, TRUE);
    return ids;
}

/* [G,S]<=[d0,d1,...] optionally T(p0,p1,...) */
static int add_iota(xla_mesh *m, const char *s)
{
    GArray *shape = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    GArray *ids = NULL, *runs = NULL;
    const char *p = s;
    bool ok = parse_list(&p, '[', ']', shape, 8) && shape->len == 2 && xla_skip(p, "<=", &p);
    ids = ok ? iota_ids(&p) : NULL;
    ok = ids && g_array_index(shape, uint64_t, 0) <= XLA_MESH_MAX_DEVICES &&
         g_array_index(shape, uint64_t, 1) <= XLA_MESH_MAX_DEVICES &&
         g_array_index(shape, uint64_t, 0) * g_array_index(shape, uint64_t, 1) == ids->len;
    if (ok)
        runs = decompose(m, ids, g_array_index(shape, uint64_t, 1));
    if (ids)
        g_array_free(ids, TRUE);
    g_array_free(shape, TRUE);
    return runs ? add_runs(m, runs) : -1;
}

/* The groups of `runs` (strides and sizes over a mesh's row-major
 * positions 0..n-1) as device ids, position L being device order[L]: each
 * group's members in rank order, groups by their first position. */
static GArray *groups_through(const GArray *runs, const GArray *order)
{
    uint64_t n = order->len, size = 1;
    for (guint r = 0; r < runs->len; r++)
        size *= g_array_index(runs, mesh_run, r).size;
    GArray *ids = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), (guint)n);
    for (uint64_t base = 0; base < n; base++) {
        bool first = true; /* base is a group's first position: 0 along every run */
        for (guint r = 0; first && r < runs->len; r++) {
            const mesh_run *x = &g_array_index(runs, mesh_run, r);
            first = (base / x->stride) % x->size == 0;
        }
        for (uint64_t k = 0; first && k < size; k++) {
            uint64_t rest = k, pos = base;
            for (guint r = runs->len; r-- > 0;) {
                const mesh_run *x = &g_array_index(runs, mesh_run, r);
                pos += (rest % x->size) * x->stride;
                rest /= x->size;
            }
            g_array_append_val(ids, g_array_index(order, uint64_t, pos));
        }
    }
    return ids;
}

/* A sub-axis `:(K)M` of the run r of an axis of size N (Shardy's
 * 'a':(K)M: the axis as factors K x M x N/(K M), major first; this is the
 * middle one): the run of stride r.stride * N/(K M) and size M. */
static bool sub_axis(const char **p, mesh_run *r)
{
    const char *s = *p;
    uint64_t pre, size;
    if (!xla_skip(s, ":(", &s) || !xla_parse_u64(&s, &pre) || !xla_skip(s, ")", &s) || !xla_parse_u64(&s, &size) ||
        pre == 0 || size == 0 || r->size % pre != 0 || (r->size / pre) % size != 0)
        return false;
    r->stride *= r->size / pre / size;
    r->size = size;
    *p = s;
    return true;
}

/* mesh['a'=2,'b'=4] {'b'}; an axis may be a sub-axis, {'b':(2)2} */
static int add_named(xla_mesh *m, const char *s)
{
    const char *p = s + strlen("mesh[");
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    GArray *sizes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    GArray *runs = NULL;
    bool ok = true;
    uint64_t n = 1;
    while (ok && *p == '\'') {
        const char *end = strchr(p + 1, '\'');
        uint64_t size = 0;
        ok = end && end[1] == '=' && names->len < 8;
        if (ok) {
            g_ptr_array_add(names, g_strndup(p + 1, (gsize)(end - p - 1)));
            p = end + 2;
            ok = xla_parse_u64(&p, &size) && size > 0 && size <= XLA_MESH_MAX_DEVICES / n;
        }
        if (ok) {
            n *= size;
            g_array_append_val(sizes, size);
            if (*p == ',')
                p++;
        }
    }
    GArray *order = NULL;
    ok = ok && names->len > 0 && xla_skip(p, "]", &p) && (m->n == 0 || m->n == n);
    if (ok && xla_skip(p, ", device_ids=(", &p)) {
        /* the mesh's devices when not in order (Mesh::ToString, jaxlib
         * 0.10): an iota list, [R..]T(P..), read row-major over the axes */
        order = iota_ids(&p);
        ok = order && order->len == n && xla_skip(p, ")", &p);
    }
    ok = ok && xla_skip(p, " {", &p);
    if (ok) {
        runs = g_array_new(FALSE, FALSE, sizeof(mesh_run));
        while (ok && *p == '\'') {
            const char *end = strchr(p + 1, '\'');
            ok = end != NULL;
            guint k = 0;
            while (ok && k < names->len &&
                   !(strlen(g_ptr_array_index(names, k)) == (size_t)(end - p - 1) &&
                     strncmp(g_ptr_array_index(names, k), p + 1, (size_t)(end - p - 1)) == 0))
                k++;
            ok = ok && k < names->len;
            if (ok) {
                uint64_t stride = 1;
                for (guint j = k + 1; j < sizes->len; j++)
                    stride *= g_array_index(sizes, uint64_t, j);
                mesh_run r = {stride, g_array_index(sizes, uint64_t, k)};
                p = end + 1;
                if (*p == ':')
                    ok = sub_axis(&p, &r);
                if (ok && r.size > 1)
                    g_array_append_val(runs, r);
                if (*p == ',')
                    p++;
            }
        }
        ok = ok && *p == '}';
    }
    g_ptr_array_free(names, TRUE);
    g_array_free(sizes, TRUE);
    if (ok && order) { /* the groups as devices, cut as explicit groups are */
        uint64_t size = 1;
        for (guint r = 0; r < runs->len; r++)
            size *= g_array_index(runs, mesh_run, r).size;
        GArray *ids = groups_through(runs, order);
        g_array_free(runs, TRUE);
        runs = decompose(m, ids, size);
        g_array_free(ids, TRUE);
        ok = runs != NULL;
    }
    if (order)
        g_array_free(order, TRUE);
    if (!ok) {
        if (runs)
            g_array_free(runs, TRUE);
        return -1;
    }
    if (m->n == 0)
        m->n = n;
    return add_runs(m, runs);
}

int xla_mesh_add(xla_mesh *m, const char *groups)
{
    m->built = false;
    if (groups[0] == '{')
        return add_explicit(m, groups);
    if (groups[0] == '[')
        return add_iota(m, groups);
    if (xla_skip(groups, "mesh[", NULL))
        return add_named(m, groups);
    return -1;
}

static void add_bound(GArray *b, uint64_t v)
{
    for (guint i = 0; i < b->len; i++)
        if (g_array_index(b, uint64_t, i) == v)
            return;
    g_array_append_val(b, v);
}

bool xla_mesh_build(xla_mesh *m)
{
    g_array_set_size(m->bounds, 0);
    if (m->n < 2)
        return false;
    add_bound(m->bounds, 1);
    add_bound(m->bounds, m->n);
    for (guint i = 0; i < m->sets->len; i++) {
        GArray *runs = g_ptr_array_index(m->sets, i);
        for (guint k = 0; k < runs->len; k++) {
            const mesh_run *r = &g_array_index(runs, mesh_run, k);
            if (r->stride > m->n || r->size > m->n / r->stride)
                return false;
            add_bound(m->bounds, r->stride);
            add_bound(m->bounds, r->stride * r->size);
        }
    }
    g_array_sort(m->bounds, cmp_u64);
    for (guint i = 0; i + 1 < m->bounds->len; i++)
        if (g_array_index(m->bounds, uint64_t, i + 1) % g_array_index(m->bounds, uint64_t, i) != 0)
            return false;
    m->built = true;
    return true;
}

/* Axes are numbered from the outermost: bound interval i (from stride 1
 * up) is axis n_axes - 1 - i. */
static guint n_axes(const xla_mesh *m)
{
    return m->bounds->len - 1;
}

char *xla_mesh_option(const xla_mesh *m)
{
    if (!m->built)
        return NULL;
    GString *s = g_string_new(NULL);
    for (guint a = 0; a < n_axes(m); a++) {
        guint i = n_axes(m) - 1 - a;
        g_string_append_printf(s, "%sx%u:%" G_GUINT64_FORMAT, a ? "," : "", a,
                               g_array_index(m->bounds, uint64_t, i + 1) / g_array_index(m->bounds, uint64_t, i));
    }
    return g_string_free(s, FALSE);
}

char *xla_mesh_axes(const xla_mesh *m, int set, uint64_t *group_size)
{
    *group_size = 1;
    if (!m->built || set < 0 || (guint)set >= m->sets->len)
        return NULL;
    GArray *runs = g_ptr_array_index(m->sets, set);
    guint na = n_axes(m);
    gboolean *in = g_new0(gboolean, na);
    for (guint k = 0; k < runs->len; k++) {
        const mesh_run *r = &g_array_index(runs, mesh_run, k);
        for (guint i = 0; i < na; i++)
            if (g_array_index(m->bounds, uint64_t, i) >= r->stride &&
                g_array_index(m->bounds, uint64_t, i + 1) <= r->stride * r->size)
                in[na - 1 - i] = TRUE;
    }
    GString *s = g_string_new(NULL);
    for (guint a = 0; a < na; a++)
        if (in[a]) {
            guint i = na - 1 - a;
            *group_size *= g_array_index(m->bounds, uint64_t, i + 1) / g_array_index(m->bounds, uint64_t, i);
            g_string_append_printf(s, "%sx%u", s->len ? "," : "", a);
        }
    g_free(in);
    if (s->len == 0) {
        g_string_free(s, TRUE);
        return NULL;
    }
    return g_string_free(s, FALSE);
}

GArray *xla_mesh_pairs(const xla_mesh *m, const char *pairs)
{
    if (!m->built || pairs[0] != '{')
        return NULL;
    GArray *out = g_array_new(FALSE, FALSE, sizeof(uint64_t)), *pair = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    guint8 *seen = g_new0(guint8, m->n); /* bit 1: a source, bit 2: a target */
    const char *p = pairs + 1;
    bool ok = true;
    while (ok && *p == '{') {
        g_array_set_size(pair, 0);
        ok = parse_list(&p, '{', '}', pair, 2) && pair->len == 2;
        uint64_t a = ok ? g_array_index(pair, uint64_t, 0) : 0, b = ok ? g_array_index(pair, uint64_t, 1) : 0;
        ok = ok && a < m->n && b < m->n && !(seen[a] & 1) && !(seen[b] & 2);
        if (ok) {
            seen[a] |= 1;
            seen[b] |= 2;
            g_array_append_val(out, a);
            g_array_append_val(out, b);
        }
        if (ok && *p == ',')
            p++;
    }
    ok = ok && *p == '}' && out->len > 0;
    g_free(seen);
    g_array_free(pair, TRUE);
    if (!ok) {
        g_array_free(out, TRUE);
        return NULL;
    }
    return out;
}

char *xla_mesh_pair_axes(const xla_mesh *m, uint64_t source, uint64_t target, int32_t *shift)
{
    *shift = 0;
    if (!m->built || source >= m->n || target >= m->n || source == target)
        return NULL;
    guint na = n_axes(m);
    GString *s = g_string_new(NULL);
    int64_t rs = 0, rt = 0, size = 1;
    for (guint a = 0; a < na; a++) { /* outermost first: row-major ranks */
        guint i = na - 1 - a;
        uint64_t lo = g_array_index(m->bounds, uint64_t, i), n = g_array_index(m->bounds, uint64_t, i + 1) / lo;
        uint64_t cs = source / lo % n, ct = target / lo % n;
        if (cs == ct)
            continue;
        rs = rs * (int64_t)n + (int64_t)cs;
        rt = rt * (int64_t)n + (int64_t)ct;
        size *= (int64_t)n;
        g_string_append_printf(s, "%sx%u", s->len ? "," : "", a);
    }
    int64_t step = ((rt - rs) % size + size) % size;
    *shift = (int32_t)(step > size / 2 ? step - size : step);
    return g_string_free(s, FALSE);
}

/* ---- validation: what XLA itself accepts as replica groups ---------------- */

/* ids: every one below n, none twice; false with *why (g_free). */
static bool ids_ok(const GArray *ids, uint64_t n, char **why)
{
    guint8 *seen = g_new0(guint8, n);
    bool ok = true;
    for (guint i = 0; ok && i < ids->len; i++) {
        uint64_t v = g_array_index(ids, uint64_t, i);
        if (v >= n)
            *why = g_strdup_printf("device %" G_GUINT64_FORMAT " past the module's %" G_GUINT64_FORMAT
                                   " (replica_count x num_partitions)", v, n);
        else if (seen[v])
            *why = g_strdup_printf("device %" G_GUINT64_FORMAT " in two groups", v);
        else
            seen[v] = 1;
        ok = *why == NULL;
    }
    g_free(seen);
    return ok;
}

/* {{..},{..}}: lists of the same size, not empty. */
static bool explicit_ok(const char *s, uint64_t n, char **why)
{
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    const char *p = s + 1;
    uint64_t size = 0;
    bool ok = true;
    while (ok && *p == '{') {
        guint before = ids->len;
        ok = parse_list(&p, '{', '}', ids, XLA_MESH_MAX_DEVICES);
        uint64_t k = ok ? ids->len - before : 0;
        if (ok && k == 0)
            *why = g_strdup("an empty group");
        else if (ok && size && k != size)
            *why = g_strdup_printf("groups of %" G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT " devices", size, k);
        ok = ok && *why == NULL;
        size = k;
        if (ok && *p == ',')
            p++;
    }
    if (ok && *p != '}')
        ok = false;
    if (!ok && *why == NULL)
        *why = g_strdup("groups {{a,b,...},...} of device numbers");
    ok = ok && ids_ok(ids, n, why);
    g_array_free(ids, TRUE);
    return ok;
}

/* [G,S]<=[d0,...]T(p0,...): G x S = the dims' product, within n; perm a
 * permutation of the dims. */
static bool iota_ok(const char *s, uint64_t n, char **why)
{
    GArray *shape = g_array_new(FALSE, FALSE, sizeof(uint64_t)), *dims = g_array_new(FALSE, FALSE, sizeof(uint64_t)),
           *perm = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    const char *p = s;
    bool ok = parse_list(&p, '[', ']', shape, 8) && shape->len == 2 && xla_skip(p, "<=", &p) &&
              parse_list(&p, '[', ']', dims, 8) && dims->len > 0;
    if (ok && xla_skip(p, "T", &p))
        ok = parse_list(&p, '(', ')', perm, 8) && perm->len == dims->len;
    if (!ok)
        *why = g_strdup("an iota form [G,S]<=[D0,...] or [G,S]<=[D0,...]T(P0,...) with a permutation of each dim");
    uint64_t prod = 1;
    for (guint i = 0; ok && i < dims->len; i++) {
        uint64_t d = g_array_index(dims, uint64_t, i);
        ok = d > 0 && d <= n && prod <= n / d;
        prod *= ok ? d : 1;
    }
    if (ok) {
        uint64_t g = g_array_index(shape, uint64_t, 0), sz = g_array_index(shape, uint64_t, 1);
        ok = g > 0 && sz > 0 && g <= prod && sz == prod / g && prod % g == 0;
        if (!ok)
            *why = g_strdup_printf("%" G_GUINT64_FORMAT " groups of %" G_GUINT64_FORMAT " devices from an iota of %"
                                   G_GUINT64_FORMAT, g, sz, prod);
    } else if (*why == NULL)
        *why = g_strdup_printf("an iota of at most the module's %" G_GUINT64_FORMAT " devices", n);
    if (ok && !perm_ok(perm, dims->len)) {
        ok = false;
        *why = g_strdup_printf("a transpose T(...) that is a permutation of 0..%u", dims->len - 1);
    }
    g_array_free(shape, TRUE);
    g_array_free(dims, TRUE);
    g_array_free(perm, TRUE);
    return ok;
}

bool xla_groups_check(const char *groups, uint64_t n_devices, char **why)
{
    *why = NULL;
    uint64_t n = n_devices ? n_devices : XLA_MESH_MAX_DEVICES; /* unknown: within the bound */
    if (n > XLA_MESH_MAX_DEVICES)
        return true; /* refused where the module's devices are */
    if (strcmp(groups, "{}") == 0 || xla_skip(groups, "mesh[", NULL))
        return true; /* every device; a named mesh is checked against the count when cut */
    if (groups[0] == '{')
        return explicit_ok(groups, n, why);
    if (groups[0] == '[')
        return iota_ok(groups, n, why);
    *why = g_strdup("replica groups {{...}}, [G,S]<=[...] or mesh[...]");
    return false;
}

xla_groups_mode xla_groups_mode_of(const char *opcode, bool channel, bool global_ids)
{
    /* all-gather, all-reduce and reduce-scatter (HloAllGatherInstruction,
     * HloAllReduceInstructionBase) have use_global_device_ids; all-to-all,
     * collective-permute and collective-broadcast do not. */
    bool has_attr = g_str_has_prefix(opcode, "all-gather") || g_str_has_prefix(opcode, "all-reduce") ||
                    g_str_has_prefix(opcode, "reduce-scatter");
    if (global_ids)
        return XLA_GROUPS_FLATTENED_ID;
    if (!channel)
        return XLA_GROUPS_CROSS_REPLICA;
    return has_attr ? XLA_GROUPS_CROSS_REPLICA_AND_PARTITION : XLA_GROUPS_CROSS_PARTITION;
}

/* One group of flattened ids, "{a,b,...}", from ids[0..n) as `id * scale + add`
 * (each of `inner` consecutive ids when inner > 1: id * inner + 0 .. inner - 1). */
static void append_group(GString *out, const uint64_t *ids, guint n, uint64_t scale, uint64_t add, uint64_t inner)
{
    if (out->len > 1)
        g_string_append_c(out, ',');
    g_string_append_c(out, '{');
    for (guint i = 0; i < n; i++)
        for (uint64_t q = 0; q < inner; q++)
            g_string_append_printf(out, "%s%" G_GUINT64_FORMAT, i + q ? "," : "", ids[i] * scale + add + q);
    g_string_append_c(out, '}');
}

bool xla_groups_flatten(const char *groups, xla_groups_mode mode, uint64_t replicas, uint64_t partitions, char **out)
{
    *out = NULL;
    uint64_t r = replicas ? replicas : 1, p = partitions ? partitions : 1;
    if (mode == XLA_GROUPS_FLATTENED_ID || (mode == XLA_GROUPS_CROSS_PARTITION && r == 1) ||
        (mode != XLA_GROUPS_CROSS_PARTITION && p == 1))
        return true; /* the ids are the devices already */
    if (groups[0] != '{' || r > XLA_MESH_MAX_DEVICES / p)
        return false;
    uint64_t ids_max = mode == XLA_GROUPS_CROSS_PARTITION ? p : r; /* the ids' range */
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    GArray *ends = g_array_new(FALSE, FALSE, sizeof(guint));
    const char *s = groups + 1;
    bool ok = true;
    if (*s == '}') { /* every replica (partition) in one group */
        for (uint64_t i = 0; i < ids_max; i++)
            g_array_append_val(ids, i);
        g_array_append_val(ends, ids->len);
    }
    while (ok && *s == '{') {
        ok = parse_list(&s, '{', '}', ids, ids_max);
        g_array_append_val(ends, ids->len);
        if (ok && *s == ',')
            s++;
    }
    ok = ok && *s == '}' && ends->len > 0;
    for (guint i = 0; ok && i < ids->len; i++)
        ok = g_array_index(ids, uint64_t, i) < ids_max;
    GString *text = g_string_new("{");
    for (guint g = 0, start = 0; ok && g < ends->len; start = g_array_index(ends, guint, g), g++) {
        const uint64_t *v = &g_array_index(ids, uint64_t, start);
        guint n = g_array_index(ends, guint, g) - start;
        if (mode == XLA_GROUPS_CROSS_REPLICA_AND_PARTITION) /* the group's replicas, each with all partitions */
            append_group(text, v, n, p, 0, p);
        else if (mode == XLA_GROUPS_CROSS_REPLICA) /* the group's replicas, per partition */
            for (uint64_t q = 0; q < p; q++)
                append_group(text, v, n, p, q, 1);
        else /* the group's partitions, per replica */
            for (uint64_t k = 0; k < r; k++)
                append_group(text, v, n, 1, k * p, 1);
    }
    g_string_append_c(text, '}');
    g_array_free(ids, TRUE);
    g_array_free(ends, TRUE);
    *out = ok ? g_string_free(text, FALSE) : NULL;
    if (!ok)
        g_string_free(text, TRUE);
    return ok;
}
